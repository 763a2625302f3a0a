/*
 * fuzz_image.c - libFuzzer entry point for the image decoders: arbitrary
 * bytes as an image file (PNG or JPEG by signature). Decoding must
 * reject bad input with a Diag and never crash; an image it accepts must
 * have sane dimensions and survive a resize both ways.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../src/image/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Image img, small;
	Diag d;
	diag_clear(&d);
	if (image_decode(data, size, "fuzz", &img, &d) != 0) {
		if (img.rgb || !d.msg[0])
			abort(); /* a failure leaves nothing and says why */
		return 0;
	}
	if (!img.width || !img.height ||
	    (uint64_t)img.width * img.height > IMAGE_MAX_PIXELS)
		abort();
	/* only small images: big ones take long on the same code */
	if ((uint64_t)img.width * img.height <= 65536) {
		if (image_resize(&img, 3, 5, RESAMPLE_BICUBIC, &small, &d))
			abort();
		image_free(&small);
		if (image_resize(&img, 67, 1, RESAMPLE_BILINEAR, &small, &d))
			abort();
		image_free(&small);
	}
	image_free(&img);
	return 0;
}

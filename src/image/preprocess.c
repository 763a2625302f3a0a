/*
 * preprocess.c - from decoded images to a model's pixel_values: resize
 * to size x size (no crop, the aspect ratio is not kept), rescale,
 * normalise, channels first (model.md section 6).
 *
 * The arithmetic is the transformers processor's, so the floats agree
 * bit for bit: rescale multiplies in double and rounds to float
 * (image.astype(float64) * scale, then astype(float32)); normalise
 * computes (x - mean) / std in float (numpy with float32 mean and std).
 */
#include "image.h"

#include <math.h>
#include <string.h>

Preprocess
preprocess_siglip(uint32_t size)
{
	return (Preprocess){.size = size,
	                    .resample = RESAMPLE_BICUBIC,
	                    .rescale = 1.0 / 255.0,
	                    .mean = {0.5f, 0.5f, 0.5f},
	                    .std = {0.5f, 0.5f, 0.5f}};
}

/* rgb: size x size pixels; out: 3 planes of size x size floats. */
static void
normalise(const uint8_t *rgb, uint32_t size, const Preprocess *p, float *out)
{
	size_t plane = (size_t)size * size;
	for (int c = 0; c < 3; c++)
		for (size_t i = 0; i < plane; i++) {
			float x = (float)(rgb[3 * i + c] * p->rescale);
			out[c * plane + i] = (x - p->mean[c]) / p->std[c];
		}
}

int
preprocess_images(const Image *imgs, size_t n, const Preprocess *p, float *out,
                  Diag *d)
{
	if (!p->size || (uint64_t)p->size * p->size > IMAGE_MAX_PIXELS)
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "preprocess: size %u is out of range", p->size);
	for (int c = 0; c < 3; c++)
		if (!(p->std[c] != 0.0f) || !isfinite(p->std[c]) ||
		    !isfinite(p->mean[c]))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "preprocess: channel %d needs a finite "
			                "mean and a finite, non-zero std",
			                c);
	size_t per_image = (size_t)3 * p->size * p->size;
	for (size_t i = 0; i < n; i++) {
		Image r;
		int err = image_resize(&imgs[i], p->size, p->size, p->resample,
		                       &r, d);
		if (err)
			return err;
		normalise(r.rgb, p->size, p, out + i * per_image);
		image_free(&r);
	}
	return IPU_OK;
}

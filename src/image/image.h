/*
 * image.h - input images for the vision models: decoding PNG and JPEG
 * files to 8-bit RGB (image.c, png.c, jpeg.c), the resize PIL performs
 * (resize.c) and the SigLIP processor's rescale and normalisation
 * (preprocess.c). docs/image.md describes the contract and its limits.
 *
 * Decoding gives the pixels PIL's Image.open(f).convert("RGB") gives:
 * alpha dropped (not composited), palettes looked up, gray replicated,
 * 16-bit samples reduced as PIL reduces them. Bad files (empty,
 * truncated, corrupt, unknown format, too large) give a Diag naming the
 * file and the problem, never a crash.
 */
#ifndef IPU_IMAGE_H
#define IPU_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/util.h"

/* The largest image decoded, in pixels (8192 x 8192): a cap against
 * decompression bombs and absurd headers. */
#define IMAGE_MAX_PIXELS (UINT64_C(1) << 26)

typedef enum {
	IMAGE_PNG,
	IMAGE_JPEG,
	IMAGE_RAW, /* made in memory (a resize result) */
} ImageFormat;

/* An 8-bit RGB image: a photograph (a tile's executable is asm.h's
 * TileImage). */
typedef struct {
	uint32_t width, height; /* pixels, both > 0 */
	uint8_t *rgb;           /* height rows of width R,G,B bytes; owned */
	ImageFormat format;     /* what it was decoded from */
	char layout[48];        /* the source's pixels, e.g. "palette 4-bit" */
} Image;

/* image.c */
/* Decode a file; the format comes from its first bytes, not its name. */
int image_load(const char *path, Image *out, Diag *d);
/* Decode a file image in memory; `name` goes into diagnostics. */
int image_decode(const uint8_t *buf, size_t len, const char *name, Image *out,
                 Diag *d);
void image_free(Image *img);
const char *image_format_name(ImageFormat f);

/* resize.c */
/* PIL's resampling filters, numbered as PIL numbers them (the
 * `resample` of a preprocessor_config.json). */
typedef enum {
	RESAMPLE_BILINEAR = 2, /* SigLIP 2 */
	RESAMPLE_BICUBIC = 3,  /* SigLIP */
} ResampleFilter;

/* PIL's Image.resize((width, height), filter) of an RGB image, byte for
 * byte: separable convolution, horizontal pass then vertical, the kernel
 * widened by the scale factor when shrinking, 22-bit fixed-point weights,
 * 8-bit rounding and clipping after each pass. */
int image_resize(const Image *in, uint32_t width, uint32_t height,
                 ResampleFilter filter, Image *out, Diag *d);
/* "bicubic" or "bilinear"; NULL for any other value. */
const char *resample_name(ResampleFilter f);

/* preprocess.c */
/* What the processor does after decoding (model.md section 6). */
typedef struct {
	uint32_t size;           /* output height and width */
	ResampleFilter resample; /* the resize filter */
	double rescale;          /* multiplies the 8-bit values: 1/255 */
	float mean[3], std[3];   /* per channel, after rescaling */
} Preprocess;

/* SiglipImageProcessor at a given size: bicubic, 1/255, mean = std = 0.5. */
Preprocess preprocess_siglip(uint32_t size);
/* Resize each image to size x size, rescale and normalise, as the
 * transformers processor computes it (rescale in double, rounded to
 * float; then (x - mean) / std in float). out holds n * 3 * size * size
 * floats: [n][channel][row][column]. */
int preprocess_images(const Image *imgs, size_t n, const Preprocess *p,
                      float *out, Diag *d);

#endif

/*
 * resize.c - the resize of PIL's Image.resize((W, H), filter) for 8-bit
 * RGB images, reproducing PIL's arithmetic (Pillow 9.4, libImaging's
 * Resample.c) so the bytes agree.
 *
 * The algorithm (separable convolution, one axis at a time):
 *   1. For each axis, scale = in / out (the input size rounded to float
 *      first, as PIL passes the box as floats). The filter is stretched
 *      by filterscale = max(scale, 1): shrinking averages over the
 *      stretched kernel (antialiasing); enlarging interpolates.
 *   2. Output pixel i covers input pixels [xmin, xmax) around
 *      center = (i + 0.5) * scale, xmin = (int)(center - support + 0.5)
 *      and xmax = (int)(center + support + 0.5), clipped to the image,
 *      with support = filter support * filterscale. Tap x weighs
 *      kernel((x - center + 0.5) * (1 / filterscale)); the weights are divided
 *      by their sum, then made fixed point: round-half-away(w * 2^22).
 *   3. A pass sums pixel * weight in integers from 2^21 (one half), shifts
 *      right by 22 and clips to 0..255. The horizontal pass runs first
 *      (only if the width changes), then the vertical pass on its 8-bit
 *      result (only if the height changes).
 * Kernels: bicubic with a = -0.5 (support 2), bilinear (triangle,
 * support 1).
 */
#include "image.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PRECISION_BITS = 32 - 8 - 2 }; /* PIL's weight precision */

static double
bilinear_kernel(double x)
{
	x = fabs(x);
	return x < 1.0 ? 1.0 - x : 0.0;
}

/* Keys' cubic convolution kernel with a = -0.5. */
static double
bicubic_kernel(double x)
{
	const double a = -0.5;
	x = fabs(x);
	if (x < 1.0)
		return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
	if (x < 2.0)
		return (((x - 5) * x + 8) * x - 4) * a;
	return 0.0;
}

/* One row per filter, indexed by its PIL number. */
static const struct {
	double (*kernel)(double);
	double support; /* half-width at scale 1, input pixels */
	const char *name;
} filters[] = {
    [RESAMPLE_BILINEAR] = {bilinear_kernel, 1.0, "bilinear"},
    [RESAMPLE_BICUBIC] = {bicubic_kernel, 2.0, "bicubic"},
};

const char *
resample_name(ResampleFilter f)
{
	if ((unsigned)f >= sizeof filters / sizeof filters[0] ||
	    !filters[f].kernel)
		return NULL;
	return filters[f].name;
}

/* The taps of one axis: output i reads count[i] inputs from first[i],
 * weighted by k[i * stride ...]. */
typedef struct {
	uint32_t *first, *count;
	int32_t *k;
	size_t stride;
} Taps;

static void
taps_free(Taps *t)
{
	free(t->first);
	free(t->count);
	free(t->k);
}

static Taps
taps_make(uint32_t in_size, uint32_t out_size, ResampleFilter f)
{
	double scale = (double)(float)in_size / out_size;
	double filterscale = scale < 1.0 ? 1.0 : scale;
	double support = filters[f].support * filterscale;
	/* PIL's row length is ceil(support) * 2 + 1; no row holds more
	 * than the whole input */
	size_t ksize = (size_t)ceil(support) * 2 + 1;
	Taps t = {.stride = ksize < in_size ? ksize : in_size};
	t.first = xmalloc(out_size * sizeof *t.first);
	t.count = xmalloc(out_size * sizeof *t.count);
	t.k = xcalloc((size_t)out_size * t.stride, sizeof *t.k);
	double *w = xmalloc(t.stride * sizeof *w);
	/* PIL multiplies by the reciprocal; dividing would round
	 * differently */
	double inv = 1.0 / filterscale;
	for (uint32_t i = 0; i < out_size; i++) {
		double center = (i + 0.5) * scale;
		double xmin = floor(center - support + 0.5);
		double xmax = floor(center + support + 0.5);
		/* (int) truncation in PIL; it differs from floor only below
		 * zero, where both clip to 0 */
		uint32_t lo = xmin < 0 ? 0 : (uint32_t)xmin;
		uint32_t hi = xmax > in_size ? in_size : (uint32_t)xmax;
		/* empty only if the float-rounded size overshoots (inputs
		 * wider than 2^25); PIL then sums nothing too */
		uint32_t n = hi > lo ? hi - lo : 0;
		double sum = 0.0;
		for (uint32_t x = 0; x < n; x++) {
			w[x] = filters[f].kernel(
			    ((double)(x + lo) - center + 0.5) * inv);
			sum += w[x];
		}
		int32_t *k = t.k + i * t.stride;
		for (uint32_t x = 0; x < n; x++) {
			double v = (sum != 0.0 ? w[x] / sum : w[x]) *
			           (1 << PRECISION_BITS);
			k[x] = (int32_t)(v < 0 ? v - 0.5 : v + 0.5);
		}
		t.first[i] = lo;
		t.count[i] = n;
	}
	free(w);
	return t;
}

/* Sum from one half, shift, clip: PIL's clip8. */
static uint8_t
clip8(int64_t acc)
{
	if (acc < 0)
		return 0;
	acc >>= PRECISION_BITS;
	return acc > 255 ? 255 : (uint8_t)acc;
}

/* in: h rows of in_w pixels; out: h rows of t's outputs. */
static void
pass_horizontal(const uint8_t *in, uint32_t in_w, uint32_t h, const Taps *t,
                uint32_t out_w, uint8_t *out)
{
	for (uint32_t y = 0; y < h; y++) {
		const uint8_t *row = in + (size_t)y * in_w * 3;
		for (uint32_t i = 0; i < out_w; i++) {
			const int32_t *k = t->k + i * t->stride;
			const uint8_t *p = row + (size_t)t->first[i] * 3;
			int64_t acc[3] = {1 << (PRECISION_BITS - 1),
			                  1 << (PRECISION_BITS - 1),
			                  1 << (PRECISION_BITS - 1)};
			for (uint32_t x = 0; x < t->count[i]; x++, p += 3)
				for (int c = 0; c < 3; c++)
					acc[c] += (int64_t)p[c] * k[x];
			uint8_t *o = out + ((size_t)y * out_w + i) * 3;
			for (int c = 0; c < 3; c++)
				o[c] = clip8(acc[c]);
		}
	}
}

/* in: rows of w pixels; out: t's output rows. */
static void
pass_vertical(const uint8_t *in, uint32_t w, const Taps *t, uint32_t out_h,
              uint8_t *out)
{
	size_t row_bytes = (size_t)w * 3;
	for (uint32_t i = 0; i < out_h; i++) {
		const int32_t *k = t->k + i * t->stride;
		const uint8_t *base = in + (size_t)t->first[i] * row_bytes;
		uint8_t *o = out + (size_t)i * row_bytes;
		for (size_t b = 0; b < row_bytes; b++) {
			int64_t acc = 1 << (PRECISION_BITS - 1);
			for (uint32_t y = 0; y < t->count[i]; y++)
				acc += (int64_t)base[y * row_bytes + b] * k[y];
			o[b] = clip8(acc);
		}
	}
}

int
image_resize(const Image *in, uint32_t width, uint32_t height,
             ResampleFilter filter, Image *out, Diag *d)
{
	memset(out, 0, sizeof *out);
	if (!resample_name(filter))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "resize: unknown filter %d (2 = bilinear, 3 = "
		                "bicubic)",
		                (int)filter);
	if (!in->width || !in->height || !in->rgb)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "resize: the input image is empty");
	if (!width || !height || (uint64_t)width * height > IMAGE_MAX_PIXELS ||
	    (uint64_t)width * in->height > IMAGE_MAX_PIXELS)
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "resize: %ux%u from %ux%u is out of range "
		                "(1 .. %llu pixels)",
		                width, height, in->width, in->height,
		                (unsigned long long)IMAGE_MAX_PIXELS);
	const uint8_t *src = in->rgb;
	uint8_t *tmp = NULL;
	if (width != in->width) {
		Taps t = taps_make(in->width, width, filter);
		tmp = xmalloc((size_t)width * in->height * 3);
		pass_horizontal(src, in->width, in->height, &t, width, tmp);
		taps_free(&t);
		src = tmp;
	}
	out->rgb = xmalloc((size_t)width * height * 3);
	if (height != in->height) {
		Taps t = taps_make(in->height, height, filter);
		pass_vertical(src, width, &t, height, out->rgb);
		taps_free(&t);
	} else {
		memcpy(out->rgb, src, (size_t)width * height * 3);
	}
	free(tmp);
	out->width = width;
	out->height = height;
	out->format = IMAGE_RAW;
	snprintf(out->layout, sizeof out->layout, "%s from %ux%u",
	         filters[filter].name, in->width, in->height);
	return IPU_OK;
}

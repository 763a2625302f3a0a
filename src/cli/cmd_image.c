/*
 * cmd_image.c - `ipu image IMG [IMG...] --size N [--out F.npy] [--force]
 * [--resample bicubic|bilinear] [--mean R,G,B] [--std R,G,B]`: decode
 * PNG/JPEG images, preprocess them as the SigLIP processor does (resize
 * to N x N, rescale 1/255, normalise; src/image/image.h) and print what
 * was read and a summary of the tensor; --out writes the [B, 3, N, N]
 * float32 tensor as a .npy file, never over an existing file unless
 * --force, never over an input.
 *
 * Exit status: 0 success, 1 an unreadable image or output, 2 usage.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../image/image.h"
#include "../util/npy.h"
#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: ipu image IMG [IMG...] --size N [--out F.npy] "
	           "[--force]\n"
	           "                 [--resample bicubic|bilinear] [--mean "
	           "R,G,B] [--std R,G,B]\n"
	           "  Decode PNG or JPEG images and preprocess them as "
	           "SigLIP's processor does:\n"
	           "  resize to N x N (PIL's resize, no crop), multiply by "
	           "1/255, subtract mean,\n"
	           "  divide by std (defaults: bicubic, 0.5, 0.5), channels "
	           "first.\n"
	           "  --size N      output height and width (224, 384, ...)\n"
	           "  --out F.npy   write pixel_values [B, 3, N, N] float32\n"
	           "  --force       replace F.npy if it exists\n"
	           "Exit status: 0 on success, 1 for an unreadable image or "
	           "output, 2 on a usage error.\n");
}

/* "a,b,c" into three floats; 0 on success. */
static int
parse_triple(const char *s, float v[3])
{
	for (int i = 0; i < 3; i++) {
		char *end;
		errno = 0;
		double x = strtod(s, &end);
		if (end == s || errno || !isfinite(x))
			return -1;
		v[i] = (float)x;
		if (*end != (i < 2 ? ',' : '\0'))
			return -1;
		s = end + 1;
	}
	return 0;
}

/* An option's R,G,B value; 1 after a message if it is not one. */
static int
triple_arg(const char *opt, const char *v, float out[3])
{
	if (!parse_triple(v, out))
		return 0;
	fprintf(stderr, "ipu image: %s wants three numbers R,G,B, got '%s'\n",
	        opt, v);
	return 1;
}

/* Min, max and mean of each channel over the whole batch. */
static void
print_summary(const float *px, size_t n, const Preprocess *p)
{
	size_t plane = (size_t)p->size * p->size;
	printf("pixel_values [%zu, 3, %u, %u] float32 (%s, x%.9g, mean "
	       "%g,%g,%g, std %g,%g,%g)\n",
	       n, p->size, p->size, resample_name(p->resample), p->rescale,
	       p->mean[0], p->mean[1], p->mean[2], p->std[0], p->std[1],
	       p->std[2]);
	for (int c = 0; c < 3; c++) {
		double lo = INFINITY, hi = -INFINITY, sum = 0;
		for (size_t i = 0; i < n; i++) {
			const float *q = px + (i * 3 + c) * plane;
			for (size_t k = 0; k < plane; k++) {
				lo = q[k] < lo ? q[k] : lo;
				hi = q[k] > hi ? q[k] : hi;
				sum += q[k];
			}
		}
		printf("  channel %c  min %+.6f  max %+.6f  mean %+.6f\n",
		       "RGB"[c], lo, hi, sum / (double)(n * plane));
	}
}

/* Options into p, out, force; inputs collected in ins. 0, or an exit
 * status. */
static int
parse_args(int argc, char **argv, Preprocess *p, const char **out, int *force,
           char **ins, int *nin)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		int missing = 0;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return -1;
		} else if (!strcmp(a, "--force")) {
			*force = 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--size",
		                              &missing))) {
			char *end;
			long n = strtol(v, &end, 10);
			if (end == v || *end || n < 1 || n > 8192) {
				fprintf(stderr,
				        "ipu image: --size wants 1..8192, got "
				        "'%s'\n",
				        v);
				return 2;
			}
			p->size = (uint32_t)n;
		} else if ((v = cli_opt_value(argc, argv, &i, "--out",
		                              &missing))) {
			*out = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--resample",
		                              &missing))) {
			if (!strcmp(v, "bicubic") || !strcmp(v, "bilinear")) {
				p->resample = v[2] == 'c' ? RESAMPLE_BICUBIC
				                          : RESAMPLE_BILINEAR;
			} else {
				fprintf(
				    stderr,
				    "ipu image: --resample wants bicubic or "
				    "bilinear, got '%s'\n",
				    v);
				return 2;
			}
		} else if ((v = cli_opt_value(argc, argv, &i, "--mean",
		                              &missing))) {
			if (triple_arg("--mean", v, p->mean))
				return 2;
		} else if ((v = cli_opt_value(argc, argv, &i, "--std",
		                              &missing))) {
			if (triple_arg("--std", v, p->std))
				return 2;
		} else if (missing) {
			fprintf(stderr, "ipu image: missing value for %s\n", a);
			return 2;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ipu image: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		} else {
			ins[(*nin)++] = argv[i];
		}
	}
	return 0;
}

int
cmd_image(int argc, char **argv)
{
	Preprocess p = preprocess_siglip(0);
	const char *out = NULL;
	int force = 0, nin = 0;
	char **ins = xcalloc((size_t)argc, sizeof *ins);
	int r = parse_args(argc, argv, &p, &out, &force, ins, &nin);
	if (!r && (!nin || !p.size)) {
		fprintf(stderr, "ipu image: %s\n",
		        nin ? "give the model's input size: --size N"
		            : "no image");
		usage(stderr);
		r = 2;
	}
	if (!r && out && cli_refuse_overwrite("image", out, ins, nin))
		r = 2;
	/* fail before the work; npy_write checks again, atomically */
	if (!r && out && !force && access(out, F_OK) == 0) {
		fprintf(
		    stderr,
		    "ipu image: %s exists; refusing to overwrite it (--force "
		    "replaces it)\n",
		    out);
		r = 1;
	}
	if (r) {
		free(ins);
		return r < 0 ? 0 : r;
	}
	Diag d;
	diag_clear(&d);
	Image8 *imgs = xcalloc((size_t)nin, sizeof *imgs);
	int loaded = 0;
	for (; loaded < nin; loaded++) {
		Image8 *im = &imgs[loaded];
		if ((r = image_load(ins[loaded], im, &d)))
			break;
		printf("%s  %s %ux%u  %s\n", ins[loaded],
		       image_format_name(im->format), im->width, im->height,
		       im->layout);
	}
	float *px = NULL;
	if (!r) {
		px = xmalloc((size_t)nin * 3 * p.size * p.size * sizeof *px);
		r = preprocess_images(imgs, (size_t)nin, &p, px, &d);
	}
	if (!r) {
		print_summary(px, (size_t)nin, &p);
		NpyArray a = {.dtype = NPY_F32,
		              .rank = 4,
		              .shape = {(uint64_t)nin, 3, p.size, p.size},
		              .data = px};
		if (out && !(r = npy_write(out, &a, force, &d)))
			printf("wrote %s\n", out);
	}
	if (r) {
		char buf[1400];
		diag_format(&d, buf, sizeof buf);
		fprintf(stderr, "ipu image: %s\n", buf);
	}
	for (int i = 0; i < loaded; i++)
		image_free(&imgs[i]);
	free(imgs);
	free(px);
	free(ins);
	return r ? 1 : 0;
}

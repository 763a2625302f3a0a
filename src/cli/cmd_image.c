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
	           "  --resample F  bicubic (SigLIP, the default) or bilinear "
	           "(SigLIP 2)\n"
	           "  --mean R,G,B  subtracted after rescaling (default "
	           "0.5,0.5,0.5)\n"
	           "  --std R,G,B   divides after that (default 0.5,0.5,0.5)\n"
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

/* --resample's value by name; 1 after a message if it names none. */
static int
resample_arg(const char *v, ResampleFilter *f)
{
	for (int k = RESAMPLE_BILINEAR; k <= RESAMPLE_BICUBIC; k++)
		if (!strcmp(v, resample_name((ResampleFilter)k))) {
			*f = (ResampleFilter)k;
			return 0;
		}
	fprintf(stderr,
	        "ipu image: --resample wants bicubic or bilinear, got '%s'\n",
	        v);
	return 1;
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

/* What the command line asks for. */
typedef struct {
	Preprocess p;
	const char *out; /* --out, or NULL */
	int force;       /* --force: out may be replaced */
	char **ins;      /* the images, nin of them */
	int nin;
} ImageArgs;

/* The command line into o (o->ins has room for argc). 0, -1 after
 * --help, or an exit status. */
static int
parse_args(int argc, char **argv, ImageArgs *o)
{
	Preprocess *p = &o->p;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		int missing = 0;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return -1;
		} else if (!strcmp(a, "--force")) {
			o->force = 1;
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
			o->out = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--resample",
		                              &missing))) {
			if (resample_arg(v, &p->resample))
				return 2;
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
			o->ins[o->nin++] = argv[i];
		}
	}
	return 0;
}

/* Load, preprocess, summarise, write; the exit status. */
static int
run(const ImageArgs *o)
{
	Diag d;
	diag_clear(&d);
	Image *imgs = xcalloc((size_t)o->nin, sizeof *imgs);
	int r = 0, loaded = 0;
	for (; loaded < o->nin; loaded++) {
		Image *im = &imgs[loaded];
		if ((r = image_load(o->ins[loaded], im, &d)))
			break;
		printf("%s  %s %ux%u  %s\n", o->ins[loaded],
		       image_format_name(im->format), im->width, im->height,
		       im->layout);
	}
	size_t n = (size_t)o->nin, size = o->p.size;
	float *px = NULL;
	if (!r) {
		px = xmalloc(n * 3 * size * size * sizeof *px);
		r = preprocess_images(imgs, n, &o->p, px, &d);
	}
	if (!r) {
		print_summary(px, n, &o->p);
		NpyArray a = {.dtype = NPY_F32,
		              .rank = 4,
		              .shape = {n, 3, size, size},
		              .data = px};
		if (o->out && !(r = npy_write(o->out, &a, o->force, &d)))
			printf("wrote %s\n", o->out);
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
	return r ? 1 : 0;
}

int
cmd_image(int argc, char **argv)
{
	ImageArgs o = {.p = preprocess_siglip(0),
	               .ins = xcalloc((size_t)argc, sizeof *o.ins)};
	int r = parse_args(argc, argv, &o);
	if (!r && (!o.nin || !o.p.size)) {
		fprintf(stderr, "ipu image: %s\n",
		        o.nin ? "give the model's input size: --size N"
		              : "no image");
		usage(stderr);
		r = 2;
	}
	/* before the work; npy_write checks again, atomically */
	if (!r)
		r = cli_check_outputs("image", &o.out, 1,
		                      (const char *const *)o.ins, o.nin,
		                      o.force);
	if (!r)
		r = run(&o);
	free(o.ins);
	return r < 0 ? 0 : r;
}

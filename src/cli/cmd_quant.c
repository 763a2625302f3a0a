/*
 * cmd_quant.c - `ipu quant`: quantize a SigLIP checkpoint to FP8 on the
 * host (src/quant/quant.h, docs/quantization.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/safetensors.h"
#include "../models/siglip_config.h"
#include "../models/siglip_weights.h"
#include "../quant/quant.h"
#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(
	    f, "usage: ipu quant --weights W.safetensors --config config.json\n"
	       "                 (--calib IMG [--calib IMG ...] | "
	       "--calib-pixels P.npy)\n"
	       "                 [--eval IMG ... | --eval-pixels P.npy] "
	       "[--method M[,M...]]\n"
	       "                 [--target-cos X] [--alpha A] [--percentile "
	       "P] [--damp X]\n"
	       "                 [--block B]\n"
	       "                 --out Q.safetensors [--force]\n"
	       "  Quantize the checkpoint's dense GEMMs to FP8 on the "
	       "host, calibrating\n"
	       "  on the --calib images, and write a checkpoint that `ipu "
	       "run siglip` runs\n"
	       "  as it is (docs/quantization.md).\n"
	       "  --method M     tensor (default: one power-of-two scale per "
	       "weight, its max),\n"
	       "                 channel (per-output-channel weight scales, "
	       "applied before\n"
	       "                 the bias add), mse (scales of least squared "
	       "error, not the\n"
	       "                 max), smooth (SmoothQuant: activation "
	       "outliers into the\n"
	       "                 weights of qkv and fc1), percentile "
	       "(activation scales\n"
	       "                 from the P-th percentile of |x|, not the "
	       "max), gptq (weight\n"
	       "                 codes by GPTQ on the calibration inputs), "
	       "bias (bias\n"
	       "                 correction of the weights' error), format "
	       "(F143 or F152\n"
	       "                 per tensor, the one of less squared error), "
	       "block (a weight\n"
	       "                 scale per block of B input columns, each "
	       "block's product\n"
	       "                 scaled on the device); e.g.\n"
	       "                 channel,mse,smooth or tensor,gptq,bias\n"
	       "  --target-cos X keep the fewest GEMMs in f16 for the "
	       "calibration images'\n"
	       "                 smallest cosine to reach X\n"
	       "  --alpha A      smooth's migration strength in [0, 1] "
	       "(default 0.5)\n"
	       "  --percentile P percentile's P in (0, 100] (default 99.99)\n"
	       "  --damp X       gptq's dampening in [0, 1], a fraction of "
	       "the Hessian's mean\n"
	       "                 diagonal (default 0.01)\n"
	       "  --block B      block's columns per K block, a multiple of "
	       "32 (default 128)\n"
	       "  --eval IMG     held-out images: print each one's cosine of "
	       "the pooled\n"
	       "                 embedding against the float tower (host "
	       "estimate)\n"
	       "  --out F        the quantized checkpoint; never over an "
	       "existing file\n"
	       "                 unless --force\n"
	       "Exit status: 0 on success, 1 for a bad input, 2 on a usage "
	       "error.\n");
}

typedef struct {
	const char *weights, *config, *out, *calib_px, *eval_px;
	const char **calib, **eval;
	int ncalib, neval, force, pct_given, damp_given, block_given;
	QuantOpts o;
} Args;

static double
parse_num(const char *v, double lo, double hi, const char *what, int *bad)
{
	char *end;
	double x = strtod(v, &end);
	if (*end || end == v || !(x >= lo && x <= hi)) {
		fprintf(stderr,
		        "ipu quant: %s wants a number in [%g, %g], got "
		        "'%s'\n",
		        what, lo, hi, v);
		*bad = 1;
	}
	return x;
}

static int
parse(int argc, char **argv, Args *a)
{
	int bad = 0;
	for (int i = 1; i < argc && !bad; i++) {
		int missing = 0;
		const char *v;
		if (!strcmp(argv[i], "--force"))
			a->force = 1;
		else if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return -1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--weights",
		                              &missing)))
			a->weights = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--config",
		                            &missing)))
			a->config = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--out", &missing)))
			a->out = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--calib",
		                            &missing)))
			a->calib[a->ncalib++] = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--eval",
		                            &missing)))
			a->eval[a->neval++] = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--calib-pixels",
		                            &missing)))
			a->calib_px = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--eval-pixels",
		                            &missing)))
			a->eval_px = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--method",
		                            &missing))) {
			Diag d;
			if (quant_parse_methods(v, &a->o.methods, &d)) {
				fprintf(stderr, "ipu quant: --method: %s\n",
				        d.msg);
				bad = 1;
			}
		} else if ((v = cli_opt_value(argc, argv, &i, "--target-cos",
		                              &missing)))
			a->o.target_cos =
			    parse_num(v, 0, 1, "--target-cos", &bad);
		else if ((v = cli_opt_value(argc, argv, &i, "--alpha",
		                            &missing)))
			a->o.alpha = parse_num(v, 0, 1, "--alpha", &bad);
		else if ((v = cli_opt_value(argc, argv, &i, "--percentile",
		                            &missing))) {
			a->o.percentile =
			    parse_num(v, 1e-9, 100, "--percentile", &bad);
			a->pct_given = 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--damp",
		                              &missing))) {
			a->o.damp = parse_num(v, 0, 1, "--damp", &bad);
			a->damp_given = 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--block",
		                              &missing))) {
			double b = parse_num(v, 32, 65536, "--block", &bad);
			a->o.block = (int)b;
			if (!bad && (b != a->o.block || a->o.block % 32)) {
				fprintf(stderr,
				        "ipu quant: --block wants a multiple "
				        "of 32 (the f8 GEMM's K panel), got "
				        "'%s'\n",
				        v);
				bad = 1;
			}
			a->block_given = 1;
		} else {
			fprintf(stderr, "ipu quant: %s '%s'\n",
			        missing ? "missing value for"
			                : "unknown option",
			        argv[i]);
			bad = 1;
		}
	}
	if (!bad && a->pct_given && !(a->o.methods & QUANT_PERCENTILE)) {
		fprintf(stderr, "ipu quant: --percentile is for --method "
		                "percentile\n");
		bad = 1;
	}
	if (!bad && a->damp_given && !(a->o.methods & QUANT_GPTQ)) {
		fprintf(stderr, "ipu quant: --damp is for --method gptq\n");
		bad = 1;
	}
	if (!bad && a->block_given && !(a->o.methods & QUANT_BLOCK)) {
		fprintf(stderr, "ipu quant: --block is for --method block\n");
		bad = 1;
	}
	if (!bad && (!a->weights || !a->config || !a->out)) {
		fprintf(stderr, "ipu quant: --weights, --config and --out are "
		                "needed\n");
		bad = 1;
	}
	if (!bad && !a->ncalib == !a->calib_px) {
		fprintf(stderr, "ipu quant: calibration images: --calib IMG... "
		                "or --calib-pixels P.npy, one of them\n");
		bad = 1;
	}
	if (!bad && a->neval && a->eval_px) {
		fprintf(stderr, "ipu quant: held-out images: --eval IMG... or "
		                "--eval-pixels P.npy, one of them\n");
		bad = 1;
	}
	return bad;
}

/* "N images: a, b, ..." for the metadata (malloc'd). */
static char *
describe(const Args *a)
{
	if (a->calib_px) {
		size_t n = strlen(a->calib_px) + 16;
		char *s = xmalloc(n);
		snprintf(s, n, "pixels %s", a->calib_px);
		return s;
	}
	size_t n = 32;
	for (int i = 0; i < a->ncalib; i++)
		n += strlen(a->calib[i]) + 2;
	char *s = xmalloc(n);
	size_t at = (size_t)snprintf(s, n, "%d images: ", a->ncalib);
	for (int i = 0; i < a->ncalib; i++)
		at += (size_t)snprintf(s + at, n - at, "%s%s", i ? ", " : "",
		                       a->calib[i]);
	return s;
}

static int
run(const Args *a)
{
	SiglipConfig c;
	StFile f;
	Diag d;
	diag_clear(&d);
	float *calib = NULL, *eval = NULL;
	int ncal = 0, nev = 0;
	Quantized *q = NULL;
	int e = siglip_config_read(a->config, &c, &d);
	if (e) {
		cli_print_diag(&d);
		return 1;
	}
	if ((e = st_open(a->weights, &f, &d))) {
		cli_print_diag(&d);
		return 1;
	}
	e = siglip_check(&c, &f, a->weights, NULL, &d);
	if (!e)
		e = siglip_load_pixels(&c, a->calib, a->ncalib, a->calib_px,
		                       &calib, &ncal, &d);
	if (!e && (a->neval || a->eval_px))
		e = siglip_load_pixels(&c, a->eval, a->neval, a->eval_px, &eval,
		                       &nev, &d);
	if (!e)
		e = quant_siglip(&c, &f, calib, ncal, &a->o, &q, &d);
	if (!e) {
		const SiglipQuant *p = quant_policy(q);
		int f8 = 0, f152 = 0;
		for (int i = 0; i < p->nweight; i++) {
			f8 += dtype_is_f8(p->weight[i].dtype);
			f152 += p->weight[i].dtype == DT_F8_F152;
		}
		printf("methods         %s\n", p->methods);
		printf("f8 weights      %d of %d dense GEMM weights (the patch "
		       "embedding stays f16)\n",
		       f8, p->nweight);
		if (f152)
			printf("F152 weights    %d (the others F143)\n", f152);
		printf("act scales      ");
		for (int i = 0; i < SIGLIP_EMBED; i++)
			printf("%s%s=%d%s", i ? "," : "", siglip_gemm_names[i],
			       p->act_scale[i],
			       p->act[i] == DT_F8_F152  ? "(F152)"
			       : dtype_is_f8(p->act[i]) ? ""
			                                : "(f16)");
		printf("\n");
		double *cos = xmalloc((size_t)(nev ? nev : 1) * sizeof *cos);
		if (nev) {
			quant_eval(q, eval, nev, cos);
			double mn = 1, sum = 0;
			for (int i = 0; i < nev; i++) {
				printf("held-out %d      cosine %.6f\n", i,
				       cos[i]);
				mn = cos[i] < mn ? cos[i] : mn;
				sum += cos[i];
			}
			printf("held-out        min %.6f mean %.6f (host "
			       "estimate against the float tower)\n",
			       mn, sum / nev);
		}
		free(cos);
		char *desc = describe(a);
		e = quant_write(q, &f, desc, a->out, a->force, &d);
		free(desc);
		if (!e)
			printf("wrote %s\n", a->out);
	}
	if (e)
		cli_print_diag(&d);
	quant_free(q);
	free(calib);
	free(eval);
	st_free(&f);
	return e ? 1 : 0;
}

int
cmd_quant(int argc, char **argv)
{
	Args a = {.o = {.alpha = 0.5,
	                .percentile = 99.99,
	                .damp = 0.01,
	                .block = 128,
	                .log = stderr}};
	a.calib = xcalloc((size_t)argc, sizeof *a.calib);
	a.eval = xcalloc((size_t)argc, sizeof *a.eval);
	int bad = parse(argc, argv, &a), rc;
	if (bad < 0)
		rc = 0;
	else if (bad)
		rc = 2;
	else {
		/* every input: the files, then the images */
		const char **in =
		    xcalloc((size_t)(4 + a.ncalib + a.neval), sizeof *in);
		const char *files[] = {a.weights, a.config, a.calib_px,
		                       a.eval_px};
		memcpy(in, files, sizeof files);
		memcpy(in + 4, a.calib, (size_t)a.ncalib * sizeof *in);
		memcpy(in + 4 + a.ncalib, a.eval, (size_t)a.neval * sizeof *in);
		rc = cli_check_outputs("quant", &a.out, 1, in,
		                       4 + a.ncalib + a.neval, a.force);
		free(in);
		if (!rc)
			rc = run(&a);
	}
	free(a.calib);
	free(a.eval);
	return rc;
}

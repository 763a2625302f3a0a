/*
 * cmd_model.c - `ipu model gen` writes a synthetic SigLIP vision checkpoint
 * (safetensors) and its config.json; `ipu model check` validates a
 * checkpoint against a config and prints what it holds (docs/models.md);
 * `ipu model graph` prints the tower's graph (text form) for a config, for
 * `ipu compile` and `ipu bench graph` (docs/siglip.md).
 *
 * Exit status: 0 success, 1 a bad file or one that does not match, 2 a
 * usage error. Existing files are never replaced without --force.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/siglip_gen.h"
#include "../models/siglip_graph.h"
#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: ipu model gen (--preset NAME | --config C) [--layers N]\n"
	    "                     [--dtype f32|f16|bf16] [--seed S] "
	    "[--realistic]\n"
	    "                     --out W.safetensors [--config-out "
	    "config.json] [--force]\n"
	    "       ipu model check --weights W.safetensors "
	    "(--config C | --preset NAME)\n"
	    "       ipu model graph (--preset NAME | --config C) [--layers N] "
	    "[--batch B]\n"
	    "                       [--group G] [--dtype f32|f16|f8] "
	    "[--no-head] [--no-fold-ln]\n"
	    "  gen    write a synthetic SigLIP vision checkpoint: the "
	    "Hugging Face\n"
	    "         names and shapes, seeded values (the Hugging Face "
	    "initialisation)\n"
	    "  check  validate a checkpoint against a config and "
	    "summarise it\n"
	    "  graph  print the vision tower as a graph (docs/graph.md) "
	    "for the batch\n"
	    "  --preset NAME  %s\n"
	    "  --config C     a Hugging Face config.json\n"
	    "  --layers N     keep only the first N encoder layers\n"
	    "  --group G      graph: the layers on G groups of B / G "
	    "images, one loop\n"
	    "                 (`repeat ... groups G`, docs/graph.md)\n"
	    "  --dtype T      f32 (default), f16 or bf16\n"
	    "  --seed S       the generator's seed (default 0)\n"
	    "  --realistic    trained towers' statistics: heavy tails, "
	    "outlier channels,\n"
	    "                 massive activations, attention sinks "
	    "(docs/models.md)\n"
	    "  --force        replace existing output files\n"
	    "Exit status: 0 on success, 1 for a bad or mismatched file, 2 "
	    "on a usage error.\n",
	    siglip_preset_names());
}

typedef struct {
	const char *preset, *config, *out, *config_out, *weights;
	long layers; /* 0: the config's */
	StDtype dtype;
	uint64_t seed;
	int force, realistic;
} Args;

static int
parse_number(const char *opt, const char *v, long min, long max, long *out)
{
	char *end;
	long long n = strtoll(v, &end, 10);
	if (end == v || *end || n < min || n > max) {
		fprintf(stderr,
		        "ipu model: %s wants a number in %ld..%ld, got '%s'\n",
		        opt, min, max, v);
		return 2;
	}
	*out = (long)n;
	return 0;
}

static int
parse_value(Args *a, const char *opt, const char *v)
{
	long n;
	if (!strcmp(opt, "--preset"))
		a->preset = v;
	else if (!strcmp(opt, "--config"))
		a->config = v;
	else if (!strcmp(opt, "--out"))
		a->out = v;
	else if (!strcmp(opt, "--config-out"))
		a->config_out = v;
	else if (!strcmp(opt, "--weights"))
		a->weights = v;
	else if (!strcmp(opt, "--layers")) {
		if (parse_number(opt, v, 1, 1 << 20, &n))
			return 2;
		a->layers = n;
	} else if (!strcmp(opt, "--seed")) {
		if (parse_number(opt, v, 0, 0x7fffffffffffffffL, &n))
			return 2;
		a->seed = (uint64_t)n;
	} else if (!strcmp(opt, "--dtype")) {
		a->dtype = !strcmp(v, "f32")    ? ST_F32
		           : !strcmp(v, "f16")  ? ST_F16
		           : !strcmp(v, "bf16") ? ST_BF16
		                                : ST_DTYPE_COUNT;
		if (a->dtype == ST_DTYPE_COUNT) {
			fprintf(stderr,
			        "ipu model: --dtype is f32, f16 or bf16, not "
			        "'%s'\n",
			        v);
			return 2;
		}
	}
	return 0;
}

static int
parse_args(int argc, char **argv, Args *a)
{
	static const char *const opts[] = {
	    "--preset",  "--config", "--out",  "--config-out",
	    "--weights", "--layers", "--seed", "--dtype",
	};
	for (int i = 2; i < argc; i++) {
		int missing = 0, k = 0;
		const char *v = NULL;
		if (!strcmp(argv[i], "--force")) {
			a->force = 1;
			continue;
		}
		if (!strcmp(argv[i], "--realistic")) {
			a->realistic = 1;
			continue;
		}
		for (;
		     k < (int)(sizeof opts / sizeof opts[0]) && !v && !missing;
		     k++)
			v = cli_opt_value(argc, argv, &i, opts[k], &missing);
		if (missing) {
			fprintf(stderr, "ipu model: missing value for %s\n",
			        argv[i]);
			return 2;
		}
		if (!v) {
			fprintf(stderr, "ipu model: unknown argument '%s'\n",
			        argv[i]);
			usage(stderr);
			return 2;
		}
		if (parse_value(a, opts[k - 1], v))
			return 2;
	}
	return 0;
}

/* The config from --preset or --config (exactly one), or an exit status. */
static int
load_config(const Args *a, SiglipConfig *c)
{
	if (!a->preset == !a->config) {
		fprintf(stderr,
		        "ipu model: give one of --preset and --config\n");
		return 2;
	}
	if (a->preset && siglip_preset(a->preset, c)) {
		fprintf(stderr, "ipu model: unknown preset '%s' (known: %s)\n",
		        a->preset, siglip_preset_names());
		return 2;
	}
	Diag d;
	diag_clear(&d);
	if (a->config && siglip_config_read(a->config, c, &d)) {
		cli_print_diag(&d);
		return 1;
	}
	return 0;
}

static int
model_gen(const Args *a)
{
	SiglipConfig c;
	int rc = load_config(a, &c);
	if (rc)
		return rc;
	if (!a->out) {
		fprintf(stderr, "ipu model gen: no output: give --out W\n");
		return 2;
	}
	const char *outs[2] = {a->out, a->config_out};
	rc = cli_check_outputs("model gen", outs, 2, &a->config, 1, a->force);
	if (rc)
		return rc;
	if (a->layers > c.layers) {
		fprintf(stderr,
		        "ipu model gen: --layers %ld: the config has %d layers "
		        "(--layers keeps the first N)\n",
		        a->layers, c.layers);
		return 2;
	}
	if (a->layers)
		c.layers = (int)a->layers;
	Diag d;
	diag_clear(&d);
	if (siglip_gen(a->out, &c, a->dtype, a->seed,
	               a->realistic ? SIGLIP_GEN_REALISTIC : 0, a->force, &d) ||
	    (a->config_out &&
	     siglip_config_write(a->config_out, &c, a->force, &d))) {
		cli_print_diag(&d);
		return 1;
	}
	printf("wrote %s (%d layers, %s, seed %" PRIu64 "%s)%s%s\n", a->out,
	       c.layers, st_dtype_name(a->dtype), a->seed,
	       a->realistic ? ", realistic" : "", a->config_out ? " and " : "",
	       a->config_out ? a->config_out : "");
	return 0;
}

static int
model_check(const Args *a)
{
	SiglipConfig c;
	int rc = load_config(a, &c);
	if (rc)
		return rc;
	if (!a->weights) {
		fprintf(stderr, "ipu model check: give --weights W\n");
		return 2;
	}
	StFile f;
	SiglipCheck s;
	Diag d;
	diag_clear(&d);
	if (st_open(a->weights, &f, &d)) {
		cli_print_diag(&d);
		return 1;
	}
	rc = siglip_check(&c, &f, a->weights, &s, &d);
	st_free(&f);
	if (rc) {
		cli_print_diag(&d);
		return 1;
	}
	printf("%s: a SigLIP vision tower matching the config\n", a->weights);
	printf("  config      d %d, f %d, layers %d, heads %d, image %d, "
	       "patch %d, tokens %d, head %s\n",
	       c.hidden, c.intermediate, c.layers, c.heads, c.image, c.patch,
	       siglip_tokens(&c), c.use_head ? "yes" : "no");
	printf("  tensors     %zu", s.ntensor);
	if (s.nignored)
		printf(" (+%zu of the text tower, ignored)", s.nignored);
	printf("\n  parameters  %" PRIu64 "\n", s.params);
	printf("  bytes       %" PRIu64 " (%.1f MiB), %s\n", s.bytes,
	       s.bytes / 1048576.0, st_dtype_name(s.dtype));
	return 0;
}

/* `ipu model graph`: the tower's text form on stdout. */
static int
print_graph(int argc, char **argv)
{
	SiglipConfig c;
	int have = 0, batch = 1, layers = -1, fold = 0, groups = 1;
	DType dt = DT_F32;
	Diag d;
	for (int i = 2; i < argc; i++) {
		int missing = 0;
		const char *v;
		if (!strcmp(argv[i], "--no-head")) {
			have |= 2;
		} else if (!strcmp(argv[i], "--no-fold-ln")) {
			fold = -1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--preset",
		                              &missing))) {
			if (siglip_preset(v, &c)) {
				fprintf(stderr,
				        "ipu model graph: no preset "
				        "'%s' (%s)\n",
				        v, siglip_preset_names());
				return 2;
			}
			have |= 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--config",
		                              &missing))) {
			if (siglip_config_read(v, &c, &d)) {
				cli_print_diag(&d);
				return 1;
			}
			have |= 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--layers",
		                              &missing))) {
			long n;
			if (parse_number("--layers", v, 1, 1 << 20, &n))
				return 2;
			layers = (int)n;
		} else if ((v = cli_opt_value(argc, argv, &i, "--batch",
		                              &missing))) {
			long n;
			if (parse_number("--batch", v, 1, 64, &n))
				return 2;
			batch = (int)n;
		} else if ((v = cli_opt_value(argc, argv, &i, "--group",
		                              &missing))) {
			long n;
			if (parse_number("--group", v, 1, 64, &n))
				return 2;
			groups = (int)n;
		} else if ((v = cli_opt_value(argc, argv, &i, "--dtype",
		                              &missing))) {
			if (cli_siglip_dtype("model graph", v, &dt))
				return 2;
		} else {
			fprintf(stderr, "ipu model graph: %s '%s'\n",
			        missing ? "missing value for"
			                : "unknown option",
			        argv[i]);
			return 2;
		}
	}
	if (!(have & 1) || batch < 1 || batch > 64 || layers == 0 ||
	    (layers > 0 && layers > c.layers) || batch % groups) {
		fprintf(stderr, "ipu model graph: --preset or --config, "
		                "--batch 1..64, --layers 1..the config's, "
		                "--group dividing the batch\n");
		return 2;
	}
	if (have & 2)
		c.use_head = 0;
	if (layers > 0)
		c.layers = layers;
	/* f8 without a checkpoint: every scale 2^0 (the graph's sizes and
	 * work are right, its values are not) */
	SiglipPrecision p = {.dtype = dt, .fold_ln = fold, .groups = groups};
	char *text = siglip_graph_text(&c, batch, &p);
	fputs(text, stdout);
	free(text);
	return 0;
}

int
cmd_model(int argc, char **argv)
{
	Args a = {0};
	a.dtype = ST_F32;
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	if (!strcmp(argv[1], "graph"))
		return print_graph(argc, argv);
	int gen = !strcmp(argv[1], "gen");
	if (!gen && strcmp(argv[1], "check")) {
		fprintf(stderr,
		        "ipu model: unknown subcommand '%s' (gen, check or "
		        "graph)\n",
		        argv[1]);
		return 2;
	}
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	if (gen && a.weights) {
		fprintf(stderr, "ipu model gen: --weights is for check; the "
		                "output is --out\n");
		return 2;
	}
	if (!gen &&
	    (a.out || a.config_out || a.layers || a.force || a.realistic)) {
		fprintf(stderr, "ipu model check: --out, --config-out, "
		                "--layers, --realistic and --force are for "
		                "gen\n");
		return 2;
	}
	return gen ? model_gen(&a) : model_check(&a);
}

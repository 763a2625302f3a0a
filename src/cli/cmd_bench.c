/*
 * cmd_bench.c - `ipu bench NAME`: benchmarks on the emulator. Human-readable
 * by default, one JSON object with --json.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/bench.h"
#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu bench tile-amp [options]\n"
	        "  One tile multiplies R rows by a K x 16 weight block on the "
	        "AMP units\n"
	        "  (kernels/amp.S; K = 16 for f16, 32 for f8, 8 for f32).\n"
	        "  --rows R        input rows (default 1024)\n"
	        "  --dtype T       f16, f32 or f8 (default f16)\n"
	        "  --chip NAME     %s (default c600)\n"
	        "  --seed N        input data seed (default 1)\n"
	        "  --fp8-scale S   f8: power-of-two scale of inputs and "
	        "weights (default -3)\n"
	        "  --json          one JSON object on stdout\n",
	        chip_names());
}

static int
parse_num(const char *opt, const char *s, long long lo, long long hi,
          long long *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 0);
	if (errno || end == s || *end || x < lo || x > hi) {
		fprintf(stderr,
		        "ipu bench: %s wants a number in %lld..%lld, got "
		        "'%s'\n",
		        opt, lo, hi, s);
		return -1;
	}
	*v = x;
	return 0;
}

static int
tile_amp(int argc, char **argv)
{
	TileAmpConfig cfg = {.chip = chip_default(),
	                     .dtype = AMP_F16,
	                     .rows = 1024,
	                     .seed = 1,
	                     .fp8_scale = -3};
	int json = 0;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], *val = i + 1 < argc ? argv[i + 1] : 0;
		long long v;
		if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(s, "--json")) {
			json = 1;
		} else if (!strcmp(s, "--rows") && val) {
			if (parse_num(s, val, 1, 1 << 20, &v))
				return 2;
			cfg.rows = (uint32_t)v;
			i++;
		} else if (!strcmp(s, "--seed") && val) {
			if (parse_num(s, val, 0, INT64_MAX, &v))
				return 2;
			cfg.seed = (uint64_t)v;
			i++;
		} else if (!strcmp(s, "--fp8-scale") && val) {
			if (parse_num(s, val, -15, 15, &v))
				return 2;
			cfg.fp8_scale = (int)v;
			i++;
		} else if (!strcmp(s, "--dtype") && val) {
			if (amp_dtype_parse(val, &cfg.dtype)) {
				fprintf(stderr,
				        "ipu bench: --dtype wants f16, f32 or "
				        "f8, got '%s'\n",
				        val);
				return 2;
			}
			i++;
		} else if (!strcmp(s, "--chip") && val) {
			cfg.chip = chip_by_name(val);
			if (!cfg.chip) {
				fprintf(stderr,
				        "ipu bench: unknown chip '%s' (known: "
				        "%s)\n",
				        val, chip_names());
				return 2;
			}
			i++;
		} else {
			fprintf(stderr,
			        "ipu bench tile-amp: unknown option "
			        "'%s'\n",
			        s);
			usage(stderr);
			return 2;
		}
	}
	TileAmpResult r;
	Diag d;
	diag_clear(&d);
	if (bench_tile_amp(&cfg, &r, &d)) {
		char buf[1024];
		diag_format(&d, buf, sizeof buf);
		fprintf(stderr, "ipu bench tile-amp: %s\n", buf);
		return 1;
	}
	double eff = r.macs_per_cycle / r.peak_macs_per_cycle;
	double tflops = 2.0 * r.macs_per_cycle * cfg.chip->tiles *
	                cfg.chip->clock_hz / 1e12;
	if (json) {
		printf("{\"bench\": \"tile-amp\", \"chip\": \"%s\", "
		       "\"dtype\": \"%s\", \"rows\": %u, \"k\": %u, "
		       "\"n\": 16, \"macs\": %" PRIu64 ", \"cycles\": %" PRIu64
		       ", \"macs_per_cycle\": %.4f, "
		       "\"peak_macs_per_cycle\": %u, \"efficiency\": %.4f, "
		       "\"chip_tflops_equiv\": %.2f, \"max_rel_err\": %.3e}\n",
		       cfg.chip->name, amp_dtype_name(cfg.dtype), cfg.rows, r.k,
		       r.macs, r.cycles, r.macs_per_cycle,
		       r.peak_macs_per_cycle, eff, tflops, r.max_rel_err);
	} else {
		printf("tile-amp on one %s tile: %u rows x %u inputs x 16 "
		       "outputs, %s\n",
		       cfg.chip->name, cfg.rows, r.k,
		       amp_dtype_name(cfg.dtype));
		printf("  cycles          %" PRIu64 "\n", r.cycles);
		printf("  MACs per cycle  %.2f of %u peak (%.1f%%)\n",
		       r.macs_per_cycle, r.peak_macs_per_cycle, 100 * eff);
		printf("  as a whole chip %.1f TFLOPS at %.3f GHz x %u tiles\n",
		       tflops, cfg.chip->clock_hz / 1e9, cfg.chip->tiles);
		printf("  max rel. error  %.3e against an f64 reference\n",
		       r.max_rel_err);
	}
	bench_tile_amp_free(&r);
	return 0;
}

int
cmd_bench(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "tile-amp"))
		return tile_amp(argc - 1, argv + 1);
	fprintf(stderr, "ipu bench: unknown benchmark '%s' (known: tile-amp)\n",
	        argv[1]);
	return 2;
}

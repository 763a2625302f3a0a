/*
 * cmd_bench.c - `ipu bench NAME`: benchmarks on the emulator (tile-amp,
 * exchange, sim, gemm, graph, siglip). Human-readable by default, one JSON
 * object with
 * --json. They share one option parser driven by a table per benchmark.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/bench.h"
#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu bench tile-amp|exchange|sim|gemm|graph|siglip "
	        "[options]\n"
	        "\n"
	        "ipu bench tile-amp: one tile multiplies R rows by a K x 16 "
	        "weight block\n"
	        "  on the AMP units (kernels/amp.S; K = 16 for f16, 32 for f8, "
	        "8 for f32).\n"
	        "  --rows R        input rows (default 1024)\n"
	        "  --dtype T       f16, f32 or f8 (default f16)\n"
	        "  --seed N        input data seed (default 1)\n"
	        "  --fp8-scale S   f8: power-of-two scale of inputs and "
	        "weights (default -3)\n"
	        "\n"
	        "ipu bench exchange: one exchange phase on the chip model, "
	        "every word checked\n"
	        "  (docs/bench-exchange.md).\n"
	        "  --pattern P     p2p, multicast or all-to-all (default p2p)\n"
	        "  --from T1       p2p: the sending tile (default 0)\n"
	        "  --to T2         p2p: the receiving tile (default: the one "
	        "with the longest\n"
	        "                  route from T1)\n"
	        "  --bytes N       bytes each receiving tile gets (default "
	        "16384)\n"
	        "  --tiles T       tiles of the chip to use (default all)\n"
	        "  --threads N     host threads (default: the machine's "
	        "cores)\n"
	        "  --seed N        payload seed (default 1)\n"
	        "\n"
	        "ipu bench sim: the emulator's own speed on the tile-amp "
	        "program on\n"
	        "  every tile, and the host's OpenBLAS SGEMM rate measured in "
	        "the same run\n"
	        "  (docs/bench-sim.md).\n"
	        "  --rows R        rows per tile (default 1024)\n"
	        "  --tiles T       tiles (default all)\n"
	        "  --threads N     host threads (default: the machine's "
	        "cores)\n"
	        "  --sgemm-n N     SGEMM size N x N x N (default 1024)\n"
	        "  --dtype T       f16 or f8 (default f16; f8 at tile-amp's "
	        "default scale)\n"
	        "\n"
	        "ipu bench graph: a graph file (docs/graph.md) compiled, run "
	        "once on the\n"
	        "  emulated chip with random inputs, and timed "
	        "(docs/bench-graph.md).\n"
	        "  --graph FILE    the graph (required)\n"
	        "  --tiles T       tiles of the chip to use (default all)\n"
	        "  --threads N     host threads (default: the machine's "
	        "cores)\n"
	        "  --seed N        input data seed (default 1)\n"
	        "\n"
	        "ipu bench gemm: C = A [M, K] x B [K, N] compiled, run on the "
	        "emulated chip and\n"
	        "  checked against an f64 OpenBLAS reference "
	        "(docs/bench-gemm.md).\n"
	        "  --m M, --n N, --k K  the shape (default 256 each)\n"
	        "  --dtype T       f16, f32 or f8 (default f16; f8 needs the "
	        "c600)\n"
	        "  --fp8-format F  f8: f143 or f152 for both, or A's,B's "
	        "(default f143)\n"
	        "  --fp8-scale S   f8: A and B stored as x / 2^S (default 0)\n"
	        "  --tiles T       tiles the compiler may use (default all)\n"
	        "  --overlap 0|1   0: never the overlapped superstep; 1 "
	        "(default): where a\n"
	        "                  plan has it and it is cheaper "
	        "(docs/bench-gemm.md)\n"
	        "  --device D      sim (default), or model:c600 (the card "
	        "model; also model)\n"
	        "                  or hw:N (a card, /dev/ipuN), through the "
	        "device interface\n"
	        "                  and our bootloader, one run at the nominal "
	        "timing; each\n"
	        "                  optionally :config=FILE and :log=FILE "
	        "(docs/hardware.md)\n"
	        "  --config FILE   model: an IPUCFG1 capture to replay after "
	        "the reset\n"
	        "  --log FILE      model: every register access, ioctl and "
	        "mailbox (new file)\n"

	        "  --threads N     host threads (default: the machine's "
	        "cores)\n"
	        "  --seed N        input data seed (default 1)\n"
	        "\n"
	        "ipu bench siglip: the SigLIP vision tower on a seeded "
	        "synthetic checkpoint and\n"
	        "  seeded pixels (in a temporary directory), compiled, run "
	        "once and timed\n"
	        "  (docs/bench-siglip.md).\n"
	        "  --preset NAME   base or so400m (or --config C: a "
	        "config.json)\n"
	        "  --weights W     the config's own checkpoint instead of a "
	        "synthetic one\n"
	        "  --layers N      keep the first N encoder layers (synthetic "
	        "checkpoints)\n"
	        "  --dtype T       f32, f16 or f8 (default f8: f8 dense "
	        "GEMMs)\n"
	        "  --batch N       images (default 1)\n"
	        "  --micro-batch M one program for M images run ceil(N / M) "
	        "times (default N;\n"
	        "                  the last run padded with copies of the "
	        "last image, dropped)\n"
	        "  --group G       the layers on G groups of a run's images, "
	        "one loop\n"
	        "                  (docs/siglip.md)\n"
	        "  --seed S        checkpoint and pixels seed (default 0)\n"
	        "  --check         cosine of the worst image against the f64 "
	        "reference\n"
	        "                  (tools/siglip_ref.py, carried in the "
	        "binary, on /usr/bin/python3;\n"
	        "                  --ref SCRIPT runs another)\n"
	        "  --compile-only  compile, no emulation (does the batch "
	        "fit?)\n"
	        "  --no-fold-ln    f8: the LayerNorms keep gamma and beta "
	        "(default: folded\n"
	        "                  into the next GEMM's weights and bias, "
	        "docs/siglip.md)\n"
	        "  --no-b-wrap     keep the loop's first weight GEMM's B "
	        "transfers in the\n"
	        "                  loop body (default: under the body's last "
	        "multiply, for\n"
	        "                  the next iteration; `ipu compile "
	        "--no-b-wrap`)\n"
	        "  --threads N     host threads (default: the machine's "
	        "cores)\n"
	        "\n"
	        "every benchmark:\n"
	        "  --max-cycles N  stop the run after N cycles (default: graph "
	        "and gemm 10 x\n"
	        "                  the predicted cycles + 10^6, the others "
	        "10^9)\n"
	        "  --chip NAME     %s (default c600)\n"
	        "  --timing P      timing profile: nominal (default), fast, "
	        "slow, or e.g.\n"
	        "                  nominal,sup-dep=slow,f32exp=4 "
	        "(docs/fidelity.md)\n"
	        "  --no-range      tile-amp, gemm, graph, siglip: skip the "
	        "runs with "
	        "every timing rule\n"
	        "                  at its fast and at its slow bound "
	        "(cycles_fast, cycles_slow;\n"
	        "                  siglip: the program's plans kept)\n"
	        "  --json          one JSON object on stdout\n"
	        "  --quiet         no progress line on stderr (shown only "
	        "when it is a terminal)\n",
	        chip_names());
}

/* One option of a benchmark: a number in [lo, hi] stored in the integer
 * field *dst of `size` bytes, or a name that `name` turns into *dst (0 or
 * -1), listed in `want`. */
typedef struct {
	const char *opt;
	long long lo, hi;
	void *dst;
	size_t size;
	int (*name)(const char *s, void *dst);
	const char *want;
} BenchOpt;

#define NUM_OPT(opt, lo, hi, field)                                            \
	{                                                                      \
		opt, lo, hi, &(field), sizeof(field), NULL, NULL               \
	}
#define NAME_OPT(opt, fn, field, want)                                         \
	{                                                                      \
		opt, 0, 0, &(field), 0, fn, want                               \
	}
/* An option without a value that sets the int field to 1. */
#define FLAG_OPT(opt, field)                                                   \
	{                                                                      \
		opt, 0, 0, &(field), 0, NULL, NULL                             \
	}

/* sim, model (model:c600), or the card forms of run graph's --device
 * (model:c600[:config=F][:log=F], hw:N[...]); --config and --log given
 * apart are kept. The names point into a copy kept for the process. */
static int
parse_device(const char *s, void *dst)
{
	static char spec[4096];
	RunnerDevice *on = dst, t;
	Diag d;
	diag_clear(&d);
	if (!strncmp(s, "sim:", 4) || strlen(s) >= sizeof spec)
		return -1;
	strcpy(spec, s);
	if (runner_device_parse(spec, &t, NULL, &d))
		return -1;
	on->model = t.model;
	on->hw = t.hw;
	on->card = t.card;
	on->config = t.config ? t.config : on->config;
	on->log = t.log ? t.log : on->log;
	return 0;
}

static int
parse_path(const char *s, void *dst)
{
	*(const char **)dst = s;
	return 0;
}

/* A file name that goes into a device name (fields split at ':'). */
static int
parse_device_path(const char *s, void *dst)
{
	return !*s || strchr(s, ':') ? -1 : parse_path(s, dst);
}

static int
parse_chip(const char *s, void *dst)
{
	const Chip *c = chip_by_name(s);
	*(const Chip **)dst = c;
	return c ? 0 : -1;
}

static int
parse_dtype(const char *s, void *dst)
{
	return amp_dtype_parse(s, dst);
}

/* "F" for both operands or "FA,FB", each f143 or f152, into two int
 * flags (1: f152). */
static int
parse_fp8_format(const char *s, void *dst)
{
	int *f152 = dst;
	const char *comma = strchr(s, ',');
	const char *second = comma ? comma + 1 : s;
	size_t first_len = comma ? (size_t)(comma - s) : strlen(s);
	for (int i = 0; i < 2; i++) {
		const char *f = i ? second : s;
		size_t len = i ? strlen(second) : first_len;
		if (len != 4 ||
		    (strncmp(f, "f143", 4) && strncmp(f, "f152", 4)))
			return -1;
		f152[i] = strncmp(f, "f152", 4) == 0;
	}
	return 0;
}

static const char *
fp8_names(const int f152[2])
{
	static const char *const names[2][2] = {{"f143", "f143,f152"},
	                                        {"f152,f143", "f152"}};
	return names[f152[0]][f152[1]];
}

static int
parse_cycles(const char *s, void *dst)
{
	return cli_parse_cycles(s, dst);
}

static int
parse_pattern(const char *s, void *dst)

{
	return exch_pattern_parse(s, dst);
}

/* --no-range: no runs at the timing bounds (tile-amp, gemm, graph). */
static int no_range;

/* The JSON fields of the timing profile and the bound runs. */
static void
json_range(const Chip *c, const BenchRange *r, int predicted)
{
	printf(", \"timing\": \"%s\"", c->timing->spec);
	if (!r->done) {
		printf(", \"cycles_fast\": null, \"cycles_slow\": null");
		return;
	}
	printf(", \"cycles_fast\": %" PRIu64 ", \"cycles_slow\": %" PRIu64,
	       r->fast, r->slow);
	if (predicted)
		printf(", \"predicted_fast\": %" PRIu64
		       ", \"predicted_slow\": %" PRIu64,
		       r->predicted_fast, r->predicted_slow);
}

static void
text_range(const Chip *c, const BenchRange *r)
{
	if (r->done)
		printf("  timing range    %" PRIu64 " .. %" PRIu64
		       " cycles with every rule at its fast .. slow bound "
		       "(profile %s here; docs/fidelity.md)\n",
		       r->fast, r->slow, c->timing->spec);
	else
		printf("  timing          profile %s (--no-range: no runs at "
		       "the bounds)\n",
		       c->timing->spec);
}

/* Every benchmark's options: its table, then --chip, --timing,
 * --no-range and --json. Returns -1 to go on, else the exit status (0
 * after --help). */
static int
parse_opts(const char *bench, int argc, char **argv, const BenchOpt *opts,
           int nopts, const Chip **chip, int *json)
{
	*chip = chip_default();
	*json = 0;
	int quiet = 0;
	Timing timing = timing_nominal;
	BenchOpt chip_opt = NAME_OPT("--chip", parse_chip, *chip, chip_names());
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], *val;
		int missing = 0;
		if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(s, "--json")) {
			*json = 1;
			continue;
		}
		if (!strcmp(s, "--quiet")) {
			quiet = 1;
			continue;
		}
		if (!strcmp(s, "--no-range")) {
			no_range = 1;
			continue;
		}
		if ((val =
		         cli_opt_value(argc, argv, &i, "--timing", &missing))) {
			if (!cli_timing_arg("bench", val, &timing))
				return 2;
			continue;
		}
		int flag = 0;
		for (int k = 0; k < nopts && !flag; k++)
			if (!opts[k].size && !opts[k].name &&
			    !strcmp(s, opts[k].opt))
				flag = *(int *)opts[k].dst = 1;
		if (flag)
			continue;
		/* the option's value, the usual way (cli_opt_value) */
		const BenchOpt *o = NULL;
		for (int k = -1; k < nopts && !o && !missing; k++) {
			const BenchOpt *c = k < 0 ? &chip_opt : &opts[k];
			if (!c->size && !c->name)
				continue; /* a flag */
			val = cli_opt_value(argc, argv, &i, c->opt, &missing);
			o = val || missing ? c : NULL;
		}
		if (!o || missing) {
			fprintf(stderr, "ipu bench %s: %s '%s'\n", bench,
			        missing ? "missing value for"
			                : "unknown option",
			        s);
			usage(stderr);
			return 2;
		}
		if (o->name) {
			if (o->name(val, o->dst)) {
				fprintf(stderr,
				        "ipu bench: %s wants %s, got '%s'\n", s,
				        o->want, val);
				return 2;
			}
			continue;
		}
		char *end;
		errno = 0;
		long long x = strtoll(val, &end, 0);
		if (errno || end == val || *end || x < o->lo || x > o->hi) {
			fprintf(stderr,
			        "ipu bench: %s wants a number in %lld..%lld, "
			        "got '%s'\n",
			        s, o->lo, o->hi, val);
			return 2;
		}
		/* signed and unsigned fields of one size share a store */
		if (o->size == 8)
			*(int64_t *)o->dst = x;
		else
			*(int32_t *)o->dst = (int32_t)x;
	}
	/* --tiles against the chip (known only now: --chip may come last) */
	for (int k = 0; k < nopts; k++)
		if (!strcmp(opts[k].opt, "--tiles") &&
		    *(const uint32_t *)opts[k].dst > (*chip)->tiles) {
			fprintf(stderr,
			        "ipu bench %s: --tiles %u: the %s has %u "
			        "tiles\n",
			        bench, *(const uint32_t *)opts[k].dst,
			        (*chip)->name, (*chip)->tiles);
			return 2;
		}
	*chip = chip_timed(*chip, &timing);
	cli_progress(quiet);
	return -1;
}

static int
report_error(const char *bench, const Diag *d)
{
	char buf[1024];
	diag_format(d, buf, sizeof buf);
	fprintf(stderr, "ipu bench %s: %s\n", bench, buf);
	return 1;
}

static int
host_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

static int
tile_amp(int argc, char **argv)
{
	TileAmpConfig cfg = {.dtype = AMP_F16,
	                     .rows = 1024,
	                     .seed = 1,
	                     .fp8_scale = BENCH_FP8_SCALE};
	const BenchOpt opts[] = {
	    NUM_OPT("--rows", 1, 1 << 20, cfg.rows),
	    NUM_OPT("--seed", 0, INT64_MAX, cfg.seed),
	    NUM_OPT("--fp8-scale", -15, 15, cfg.fp8_scale),
	    NAME_OPT("--dtype", parse_dtype, cfg.dtype, "f16, f32 or f8"),
	    NAME_OPT("--max-cycles", parse_cycles, cfg.max_cycles,
	             "a number of cycles, 1 or more"),
	};
	int json,
	    rc = parse_opts("tile-amp", argc, argv, opts,
	                    sizeof opts / sizeof opts[0], &cfg.chip, &json);
	if (rc >= 0)
		return rc;
	TileAmpResult r;
	Diag d;
	diag_clear(&d);
	cfg.range = !no_range;
	if (bench_tile_amp(&cfg, &r, &d))
		return report_error("tile-amp", &d);
	double eff = r.macs_per_cycle / r.peak_macs_per_cycle;
	double tflops = 2.0 * r.macs_per_cycle * cfg.chip->tiles *
	                cfg.chip->clock_hz / 1e12;
	if (json) {
		printf("{\"bench\": \"tile-amp\", \"chip\": \"%s\", "
		       "\"dtype\": \"%s\", \"rows\": %u, \"k\": %u, "
		       "\"n\": 16, \"macs\": %" PRIu64 ", \"cycles\": %" PRIu64
		       ", \"macs_per_cycle\": %.4f, "
		       "\"peak_macs_per_cycle\": %u, \"efficiency\": %.4f, "
		       "\"chip_tflops_equiv\": %.2f, \"max_rel_err\": %.3e",
		       cfg.chip->name, amp_dtype_name(cfg.dtype), cfg.rows, r.k,
		       r.macs, r.cycles, r.macs_per_cycle,
		       r.peak_macs_per_cycle, eff, tflops, r.max_rel_err);
		json_range(cfg.chip, &r.range, 0);
		printf("}\n");
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
		text_range(cfg.chip, &r.range);
	}
	bench_tile_amp_free(&r);
	return 0;
}

static int
exchange(int argc, char **argv)
{
	ExchangeConfig cfg = {.pattern = EXCH_P2P,
	                      .bytes = 16384,
	                      .threads = host_cores(),
	                      .seed = 1,
	                      .from = -1,
	                      .to = -1};
	const BenchOpt opts[] = {
	    NUM_OPT("--from", 0, 65535, cfg.from),
	    NUM_OPT("--to", 0, 65535, cfg.to),
	    NUM_OPT("--bytes", 4, 1 << 20, cfg.bytes),
	    NUM_OPT("--tiles", 2, 1 << 16, cfg.tiles),
	    NUM_OPT("--threads", 1, 64, cfg.threads),
	    NUM_OPT("--seed", 0, INT64_MAX, cfg.seed),
	    NAME_OPT("--pattern", parse_pattern, cfg.pattern,
	             "p2p, multicast or all-to-all"),
	    NAME_OPT("--max-cycles", parse_cycles, cfg.max_cycles,
	             "a number of cycles, 1 or more"),
	};
	int json,
	    rc = parse_opts("exchange", argc, argv, opts,
	                    sizeof opts / sizeof opts[0], &cfg.chip, &json);
	if (rc >= 0)
		return rc;
	ExchangeResult r;
	Diag d;
	diag_clear(&d);
	if (bench_exchange(&cfg, &r, &d))
		return report_error("exchange", &d);
	const char *p = exch_pattern_name(cfg.pattern);
	if (json) {
		printf("{\"bench\": \"exchange\", \"pattern\": \"%s\", ", p);
		if (cfg.pattern == EXCH_P2P)
			printf("\"from\": %u, \"to\": %u, \"latency\": %u, "
			       "\"mux_lead\": %d, ",
			       r.p2p_src, r.p2p_dst, r.latency_max, r.p2p_lead);
		printf("\"chip\": \"%s\", \"tiles\": %u, \"senders\": %u, "
		       "\"receivers\": %u, \"bytes_per_receiver\": %u, "
		       "\"release_cycle\": %" PRIu64
		       ", \"exchange_cycles\": %" PRIu64
		       ", \"program_cycles\": %" PRIu64
		       ", \"latency_min\": %u, \"latency_max\": %u, "
		       "\"bytes_per_cycle_per_tile\": %.4f, "
		       "\"aggregate_bytes_per_cycle\": %.2f, "
		       "\"tb_per_s\": %.4f, \"peak_tb_per_s\": %.4f, "
		       "\"clock_ghz\": %.3f, \"host_seconds\": %.3f}\n",
		       cfg.chip->name, r.tiles, r.senders, r.receivers, r.bytes,
		       r.release, r.exchange_cycles, r.program_cycles,
		       r.latency_min, r.latency_max, r.bytes_per_cycle_per_tile,
		       r.aggregate_bytes_per_cycle, r.tb_per_s, r.peak_tb_per_s,
		       cfg.chip->clock_hz / 1e9, r.host_seconds);
		return 0;
	}
	printf("exchange %s on %u %s tiles: %u senders, %u receivers of %u "
	       "bytes each\n",
	       p, r.tiles, cfg.chip->name, r.senders, r.receivers, r.bytes);
	printf("  exchange phase  %" PRIu64 " cycles (release of the sync "
	       "to the last arrival)\n",
	       r.exchange_cycles);
	printf("  whole program   %" PRIu64 " cycles\n", r.program_cycles);
	if (cfg.pattern == EXCH_P2P)
		printf("  route latency   %u cycles from tile %u to tile %u "
		       "(mux lead %d)\n",
		       r.latency_max, r.p2p_src, r.p2p_dst, r.p2p_lead);
	else
		printf("  route latency   %u..%u cycles\n", r.latency_min,
		       r.latency_max);
	printf("  per tile        %.3f bytes/cycle (system.md: 4)\n",
	       r.bytes_per_cycle_per_tile);
	printf("  aggregate       %.1f bytes/cycle = %.3f TB/s (peak %.3f)\n",
	       r.aggregate_bytes_per_cycle, r.tb_per_s, r.peak_tb_per_s);
	return 0;
}

/* bench sim's --dtype: f16 or f8 (SimSpeedConfig.f8). */
static int
parse_sim_dtype(const char *s, void *dst)
{
	AmpDtype t;
	if (amp_dtype_parse(s, &t) || t == AMP_F32)
		return -1;
	*(int *)dst = t == AMP_F8;
	return 0;
}

static int
sim_speed(int argc, char **argv)
{
	SimSpeedConfig cfg = {
	    .rows = 1024, .threads = host_cores(), .sgemm_n = 1024};
	const BenchOpt opts[] = {
	    NUM_OPT("--rows", 1, 1 << 20, cfg.rows),
	    NUM_OPT("--tiles", 1, 1 << 16, cfg.tiles),
	    NUM_OPT("--threads", 1, 64, cfg.threads),
	    NUM_OPT("--sgemm-n", 16, 8192, cfg.sgemm_n),
	    NAME_OPT("--dtype", parse_sim_dtype, cfg.f8, "f16 or f8"),
	    NAME_OPT("--max-cycles", parse_cycles, cfg.max_cycles,
	             "a number of cycles, 1 or more"),
	};
	int json,
	    rc = parse_opts("sim", argc, argv, opts,
	                    sizeof opts / sizeof opts[0], &cfg.chip, &json);
	if (rc >= 0)
		return rc;
	SimSpeedResult r;
	Diag d;
	diag_clear(&d);
	if (bench_sim_speed(&cfg, &r, &d))
		return report_error("sim", &d);
	if (json) {
		printf(
		    "{\"bench\": \"sim\", \"chip\": \"%s\", \"dtype\": \"%s\", "
		    "\"tiles\": %u, "
		    "\"rows_per_tile\": %u, \"threads\": %d, "
		    "\"cycles\": %" PRIu64 ", \"tile_cycles\": %" PRIu64
		    ", \"bundles\": %" PRIu64 ", \"host_seconds\": %.4f, "
		    "\"cpu_seconds\": %.4f, "
		    "\"tile_cycles_per_s\": %.4g, "
		    "\"bundles_per_s\": %.4g, "
		    "\"thread_ns_per_tile_cycle\": %.4g, "
		    "\"cpu_ns_per_tile_cycle\": %.4g, "
		    "\"emulated_gflops\": %.4g, "
		    "\"emulated_chip_seconds\": %.4g, "
		    "\"slowdown\": %.4g, \"sgemm_n\": %u, "
		    "\"sgemm_threads\": %d, \"sgemm_gflops\": %.4g, "
		    "\"sgemm_over_emulated\": %.4g, "
		    "\"max_rel_err\": %.3e}\n",
		    cfg.chip->name, cfg.f8 ? "f8" : "f16", r.tiles, cfg.rows,
		    r.threads, r.cycles, r.tile_cycles, r.bundles,
		    r.host_seconds, r.cpu_seconds, r.tile_cycles_per_s,
		    r.bundles_per_s, r.thread_ns_per_tile_cycle,
		    r.cpu_ns_per_tile_cycle, r.emulated_gflops, r.chip_seconds,
		    r.slowdown, cfg.sgemm_n, r.sgemm_threads, r.sgemm_gflops,
		    r.sgemm_over_emulated, r.max_rel_err);
		return 0;
	}
	printf("sim speed: kernels/amp.S %s, %u rows on each of %u %s tiles, "
	       "%d host threads\n",
	       cfg.f8 ? "f8" : "f16", cfg.rows, r.tiles, cfg.chip->name,
	       r.threads);
	printf("  simulated       %" PRIu64 " cycles, %" PRIu64
	       " tile-cycles, %" PRIu64 " bundles in %.3f s\n",
	       r.cycles, r.tile_cycles, r.bundles, r.host_seconds);
	printf("  emulator        %.3g tile-cycles/s, %.3g bundles/s, "
	       "%.3g x slower than the chip\n",
	       r.tile_cycles_per_s, r.bundles_per_s, r.slowdown);
	printf("  per tile-cycle  %.1f ns of a host thread (wall x threads), "
	       "%.1f ns of CPU time\n",
	       r.thread_ns_per_tile_cycle, r.cpu_ns_per_tile_cycle);
	printf("  emulated math   %.3g GFLOP/s of %s AMP work\n",
	       r.emulated_gflops, cfg.f8 ? "f8" : "f16");
	printf("  host SGEMM      %.3g GFLOP/s (OpenBLAS, %u^3, %d threads): "
	       "%.3g x the emulated rate\n",
	       r.sgemm_gflops, cfg.sgemm_n, r.sgemm_threads,
	       r.sgemm_over_emulated);
	return 0;
}

static int
gemm(int argc, char **argv)
{
	GemmBenchConfig cfg = {.dtype = AMP_F16,
	                       .m = 256,
	                       .n = 256,
	                       .k = 256,
	                       .threads = host_cores(),
	                       .seed = 1};
	RunnerDevice on = {0};
	int overlap = 1;
	const BenchOpt opts[] = {
	    NAME_OPT("--device", parse_device, on,
	             "sim, model, model:c600 or hw:N, the last two "
	             "optionally with :config=FILE and :log=FILE"),
	    NAME_OPT("--config", parse_device_path, on.config,
	             "a file name without ':'"),
	    NAME_OPT("--log", parse_device_path, on.log,
	             "a file name without ':'"),
	    NUM_OPT("--m", 1, 1 << 20, cfg.m),
	    NUM_OPT("--n", 1, 1 << 20, cfg.n),
	    NUM_OPT("--k", 1, 1 << 20, cfg.k),
	    NUM_OPT("--tiles", 1, 1 << 16, cfg.tiles),
	    NUM_OPT("--threads", 1, 64, cfg.threads),
	    NUM_OPT("--seed", 0, INT64_MAX, cfg.seed),
	    NUM_OPT("--overlap", 0, 1, overlap),
	    NAME_OPT("--dtype", parse_dtype, cfg.dtype, "f16, f32 or f8"),
	    NAME_OPT("--fp8-format", parse_fp8_format, cfg.fp8_f152,
	             "f143, f152, or A's,B's (f143,f152)"),
	    NUM_OPT("--fp8-scale", -15, 15, cfg.fp8_scale),
	    NAME_OPT("--max-cycles", parse_cycles, cfg.max_cycles,
	             "a number of cycles, 1 or more"),
	};
	int json,
	    rc = parse_opts("gemm", argc, argv, opts,
	                    sizeof opts / sizeof opts[0], &cfg.chip, &json);
	if (rc >= 0)
		return rc;
	GemmBenchResult r;
	Diag d;
	diag_clear(&d);
	cfg.range = !no_range;
	cfg.no_overlap = !overlap;
	if (on.model || on.hw) {
		/* a card or its model: one run at the nominal timing */
		cfg.device = &on;
		cfg.range = 0;
	} else if (on.config || on.log) {
		fprintf(stderr, "ipu bench gemm: --config and --log are for "
		                "--device model or hw:N\n");
		return 2;
	}
	if (bench_gemm(&cfg, &r, &d))
		return report_error("gemm", &d);
	const char *dt = amp_dtype_name(cfg.dtype);
	if (json) {
		printf("{\"bench\": \"gemm\", \"chip\": \"%s\", "
		       "\"dtype\": \"%s\", \"m\": %u, \"n\": %u, \"k\": %u, "
		       "\"tiles\": %u, \"chip_tiles\": %u, "
		       "\"macs\": %" PRIu64 ", \"cycles\": %" PRIu64
		       ", \"predicted_cycles\": %" PRIu64
		       ", \"pred_error\": %.4f, \"mfu\": %.4f, "
		       "\"max_rel_err\": %.3e, \"ref_rows\": %u, "
		       "\"compile_ms\": %.3f, \"peak_tile_bytes\": %u, "
		       "\"host_seconds\": %.3f, \"threads\": %d, "
		       "\"fp8_format\": \"%s\", \"fp8_scale\": %d",
		       cfg.chip->name, dt, cfg.m, cfg.n, cfg.k, r.tiles,
		       cfg.chip->tiles, r.macs, r.cycles, r.predicted_cycles,
		       r.pred_error, r.mfu, r.max_rel_err, r.ref_rows,
		       r.compile_ms, r.peak_tile_bytes, r.host_seconds,
		       cfg.threads, fp8_names(cfg.fp8_f152), cfg.fp8_scale);
		json_range(cfg.chip, &r.range, 1);
		printf("}\n");
		return 0;
	}
	printf("gemm %u x %u x %u %s on %u of %u %s tiles\n", cfg.m, cfg.n,
	       cfg.k, dt, r.tiles, cfg.chip->tiles, cfg.chip->name);
	if (cfg.dtype == AMP_F8)
		printf("  f8              %s, A and B scaled by 2^%d\n",
		       fp8_names(cfg.fp8_f152), cfg.fp8_scale);

	printf("  cycles          %" PRIu64 " emulated, %" PRIu64
	       " predicted (%+.1f%%)\n",
	       r.cycles, r.predicted_cycles, 100 * r.pred_error);
	printf("  MFU             %.2f%% of %u tiles x %u MACs/cycle\n",
	       100 * r.mfu, cfg.chip->tiles,
	       chip_peak_macs(cfg.chip, amp_dtype_type(cfg.dtype)));
	printf("  max rel. error  %.3e against f64 (%u of %u rows)\n",
	       r.max_rel_err, r.ref_rows, cfg.m);
	printf("  compile         %.1f ms; fullest tile %u bytes\n",
	       r.compile_ms, r.peak_tile_bytes);
	printf("  emulation       %.3f s on %d host threads\n", r.host_seconds,
	       cfg.threads);
	text_range(cfg.chip, &r.range);
	printf("  plan            %s\n", r.plan);
	return 0;
}

static int
graph_bench(int argc, char **argv)
{
	GraphBenchConfig cfg = {.threads = host_cores(), .seed = 1};
	const BenchOpt opts[] = {
	    NAME_OPT("--graph", parse_path, cfg.path, "a graph file"),
	    NUM_OPT("--tiles", 1, 1 << 16, cfg.tiles),
	    NUM_OPT("--threads", 1, 64, cfg.threads),
	    NUM_OPT("--seed", 0, INT64_MAX, cfg.seed),
	    NAME_OPT("--max-cycles", parse_cycles, cfg.max_cycles,
	             "a number of cycles, 1 or more"),
	};
	int json,
	    rc = parse_opts("graph", argc, argv, opts,
	                    sizeof opts / sizeof opts[0], &cfg.chip, &json);
	if (rc >= 0)
		return rc;
	if (!cfg.path) {
		fprintf(stderr, "ipu bench graph: --graph FILE is needed\n");
		return 2;
	}
	GraphBenchResult r;
	Diag d;
	diag_clear(&d);
	cfg.range = !no_range;
	if (bench_graph(&cfg, &r, &d))
		return report_error("graph", &d);
	if (json) {
		printf("{\"bench\": \"graph\", \"graph\": ");
		cli_json_str(stdout, cfg.path);
		printf(", \"chip\": \"%s\", \"tiles\": %u, "
		       "\"chip_tiles\": %u, \"macs\": %" PRIu64
		       ", \"flops\": %" PRIu64 ", \"cycles\": %" PRIu64
		       ", \"predicted_cycles\": %" PRIu64
		       ", \"pred_error\": %.4f, \"exchange_cycles\": %" PRIu64
		       ", \"compute_cycles\": %" PRIu64
		       ", \"steps\": %u, \"mfu\": %.4f, "
		       "\"compile_ms\": %.3f, \"peak_tile_bytes\": %u, "
		       "\"host_seconds\": %.3f, \"threads\": %d",
		       cfg.chip->name, r.tiles, cfg.chip->tiles, r.macs,
		       r.flops, r.cycles, r.predicted_cycles, r.pred_error,
		       r.exchange_cycles, r.compute_cycles, r.steps, r.mfu,
		       r.compile_ms, r.peak_tile_bytes, r.host_seconds,
		       cfg.threads);
		json_range(cfg.chip, &r.range, 1);
		printf("}\n");
		return 0;
	}
	printf("graph %s on %u of %u %s tiles\n", cfg.path, r.tiles,
	       cfg.chip->tiles, cfg.chip->name);
	printf("  cycles          %" PRIu64 " emulated, %" PRIu64
	       " predicted (%+.1f%%): %" PRIu64 " in exchange steps, %" PRIu64
	       " in compute steps (%u steps)\n",
	       r.cycles, r.predicted_cycles, 100 * r.pred_error,
	       r.exchange_cycles, r.compute_cycles, r.steps);
	printf("  MFU             %.2f%% (matmul MACs, each at its operands' "
	       "peak, over %u tiles)\n",
	       100 * r.mfu, cfg.chip->tiles);
	printf("  compile         %.1f ms; fullest tile %u bytes\n",
	       r.compile_ms, r.peak_tile_bytes);
	printf("  emulation       %.3f s on %d host threads\n", r.host_seconds,
	       cfg.threads);
	text_range(cfg.chip, &r.range);
	printf("  plan            %s\n", r.plan);
	return 0;
}

static int
parse_siglip_dtype(const char *s, void *dst)
{
	return cli_siglip_dtype_parse(s, dst);
}

static void
json_cycles(const char *name, uint64_t v)
{
	if (v)
		printf(", \"%s\": %" PRIu64, name, v);
	else
		printf(", \"%s\": null", name);
}

static int
siglip_bench(int argc, char **argv)
{
	SiglipBenchConfig cfg = {.dtype = DT_F8_F143,
	                         .batch = 1,
	                         .threads = host_cores(),
	                         .place_report = stderr};
	const BenchOpt opts[] = {
	    NAME_OPT("--preset", parse_path, cfg.preset, "a preset"),
	    NAME_OPT("--config", parse_path, cfg.config, "a config.json"),
	    NAME_OPT("--weights", parse_path, cfg.weights, "a checkpoint"),
	    NAME_OPT("--ref", parse_path, cfg.ref, "a script"),
	    NUM_OPT("--layers", 1, 1 << 20, cfg.layers),
	    NUM_OPT("--batch", 1, 64, cfg.batch),
	    NUM_OPT("--micro-batch", 1, 64, cfg.micro_batch),
	    NUM_OPT("--group", 1, 64, cfg.groups),
	    NUM_OPT("--seed", 0, INT64_MAX, cfg.seed),
	    NUM_OPT("--threads", 1, 64, cfg.threads),
	    NAME_OPT("--dtype", parse_siglip_dtype, cfg.dtype,
	             "f32, f16 or f8"),
	    NAME_OPT("--max-cycles", parse_cycles, cfg.max_cycles,
	             "a number of cycles, 1 or more"),
	    FLAG_OPT("--check", cfg.check),
	    FLAG_OPT("--compile-only", cfg.compile_only),
	    FLAG_OPT("--no-fold-ln", cfg.no_fold_ln),
	    FLAG_OPT("--no-b-wrap", cfg.no_b_wrap),
	};
	int json,
	    rc = parse_opts("siglip", argc, argv, opts,
	                    sizeof opts / sizeof opts[0], &cfg.chip, &json);
	if (rc >= 0)
		return rc;
	if (!cfg.preset && !cfg.config) {
		fprintf(stderr, "ipu bench siglip: --preset NAME or --config "
		                "C is needed\n");
		return 2;
	}
	SiglipBenchResult r;
	Diag d;
	diag_clear(&d);
	cfg.range = !no_range;
	if (bench_siglip(&cfg, &r, &d))
		return report_error("siglip", &d);
	const char *dt = dtype_is_f8(r.dtype) ? "f8" : dtype_name(r.dtype);
	if (json) {
		printf("{\"bench\": \"siglip\", \"model\": ");
		cli_json_str(stdout, r.config_name);
		printf(
		    ", \"chip\": \"%s\", \"timing\": \"%s\", "
		    "\"clock_hz\": %.0f, \"dtype\": \"%s\", "
		    "\"layers\": %d, \"tokens\": %d, \"hidden\": %d, "
		    "\"batch\": %d, \"micro_batch\": %d, \"runs\": %d, "
		    "\"groups\": %d, "
		    "\"seed\": %" PRIu64 ", \"tiles\": %u, \"chip_tiles\": %u, "
		    "\"macs\": %" PRIu64,
		    cfg.chip->name, cfg.chip->timing->spec, cfg.chip->clock_hz,
		    dt, r.layers, r.tokens, r.hidden, r.batch, r.micro_batch,
		    r.runs, cfg.groups > 1 ? cfg.groups : 1, cfg.seed, r.tiles,
		    cfg.chip->tiles, r.macs);
		json_cycles("cycles", r.cycles);
		json_cycles("predicted_cycles", r.predicted_cycles);
		json_cycles("cycles_fast", r.cycles_fast);
		json_cycles("cycles_slow", r.cycles_slow);
		printf(", \"range_unfit\": ");
		if (r.range_unfit[0])
			cli_json_str(stdout, r.range_unfit);
		else
			printf("null");
		printf(", \"images_per_s\": %.6g, \"mfu\": %.6g, "
		       "\"fullest_tile_bytes\": %u, \"compile_s\": %.3f, "
		       "\"emulation_s\": %.3f, \"load_s\": %.3f, "
		       "\"threads\": %d",
		       r.images_per_s, r.mfu, r.fullest_tile_bytes, r.compile_s,
		       r.emulation_s, r.load_s, cfg.threads);
		if (cfg.check)
			printf(", \"cosine\": %.9f", r.cosine);
		else
			printf(", \"cosine\": null");
		printf("}\n");
		return 0;
	}
	printf("siglip %s, %d layers, %d tokens, d %d, %s, batch %d, seed "
	       "%" PRIu64 ", on %u of %u %s tiles\n",
	       r.config_name, r.layers, r.tokens, r.hidden, dt, r.batch,
	       cfg.seed, r.tiles, cfg.chip->tiles, cfg.chip->name);
	if (r.runs > 1)
		printf("  runs            %d images as %d runs of %d (one "
		       "program for %d; the cycles are the runs' sum)\n",
		       r.batch, r.runs, r.micro_batch, r.micro_batch);
	if (cfg.groups > 1)
		printf("  groups          the layers' loop on %d groups of %d "
		       "images a run\n",
		       cfg.groups, r.micro_batch / cfg.groups);
	if (cfg.compile_only)
		printf("  cycles          %" PRIu64 " predicted (compiled "
		       "only)\n",
		       r.predicted_cycles);
	else
		printf("  cycles          %" PRIu64 " emulated, %" PRIu64
		       " predicted (timing %s)\n",
		       r.cycles, r.predicted_cycles, cfg.chip->timing->spec);
	if (cfg.range)
		printf("  timing range    %" PRIu64 " .. %" PRIu64
		       " cycles predicted, this program with every rule at its "
		       "fast .. slow bound (docs/fidelity.md)\n",
		       r.cycles_fast, r.cycles_slow);
	if (cfg.range && r.range_unfit[0])
		printf("  range unfit     %s\n", r.range_unfit);
	if (!cfg.compile_only)
		printf("  speed           %.1f images/s at %.0f MHz, MFU "
		       "%.2f%% (matmul MACs at their operands' peak)\n",
		       r.images_per_s, cfg.chip->clock_hz / 1e6, 100 * r.mfu);
	printf("  compile         %.1f s; fullest tile %u bytes\n", r.compile_s,
	       r.fullest_tile_bytes);
	if (!cfg.compile_only)
		printf("  emulation       %.1f s on %d host threads; loads "
		       "%.1f s\n",
		       r.emulation_s, cfg.threads, r.load_s);
	if (cfg.check)
		printf("  cosine          %.9f against the f64 reference (the "
		       "worst image)\n",
		       r.cosine);
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
	if (!strcmp(argv[1], "exchange"))
		return exchange(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sim"))
		return sim_speed(argc - 1, argv + 1);
	if (!strcmp(argv[1], "gemm"))
		return gemm(argc - 1, argv + 1);
	if (!strcmp(argv[1], "graph"))
		return graph_bench(argc - 1, argv + 1);
	if (!strcmp(argv[1], "siglip"))
		return siglip_bench(argc - 1, argv + 1);
	fprintf(stderr,
	        "ipu bench: unknown benchmark '%s' (known: tile-amp, "
	        "exchange, sim, gemm, graph, siglip)\n",
	        argv[1]);
	return 2;
}

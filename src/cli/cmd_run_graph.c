/*
 * cmd_run_graph.c - `ipu run graph --graph G [--in NAME=F.npy ...]
 * [--out NAME=F.npy ...] [--force] [--chip C] [--threads N]`: a graph file
 * (docs/graph.md) compiled and run once on the emulated chip on values
 * from .npy files (src/runner/runner.c); the named outputs written as float32
 * .npy. Every input and weight needs values; nothing runs until every
 * name, shape and file has been checked.
 *
 * Exit status: 0 success, 1 a graph, file, compile or run error, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runner/runner.h"
#include "cli_profile.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu run graph --graph G [--in NAME=F.npy ...] "
	        "[--out NAME=F.npy ...]\n"
	        "                     [--force] [--cache DIR] [--chip C] "
	        "[--timing P]\n"
	        "                     [--threads N] [--max-cycles N] "
	        "[--device D] [--quiet]\n"
	        "  Compile the graph file, run it once on the emulated chip "
	        "and print the\n"
	        "  cycles (emulated and predicted), the time at the chip's "
	        "clock and MFU.\n"
	        "  --in NAME=F    values of input or weight NAME: float32 or "
	        "float16 .npy of\n"
	        "                 its shape (converted to its element type, "
	        "round to nearest)\n"
	        "  --out NAME=F   output NAME as float32 .npy; never over an "
	        "existing file\n"
	        "                 unless --force\n"
	        "%s%s%s%s"
	        "Exit status: 0 success (or a stop at --break or --watch), 1 "
	        "a graph, file,\n"
	        "compile or run error, 2 usage.\n",
	        cli_run_usage, cli_device_usage, cli_profile_usage,
	        cli_profile_show_usage);
}

const char cli_run_usage[] =
    "  --cache DIR    keep the compiled package in DIR and reuse it while "
    "the\n"
    "                 graph, the chip and this ipu are the same\n"
    "  --max-cycles N stop the run after N cycles (default: 10 x the "
    "predicted\n"
    "                 cycles + 10^6)\n"
    "  --quiet        no progress line on stderr (shown only when it is a "
    "terminal)\n";

const char cli_device_usage[] =
    "  --device D     sim (the emulator, default), or model:c600 (the card "
    "model)\n"
    "                 or hw:N (a card, /dev/ipuN) through the card's device "
    "interface,\n"
    "                 each optionally :config=FILE (a configuration "
    "capture to replay)\n"
    "                 and :log=FILE (every register access, a new file); "
    "docs/hardware.md\n";

int
cli_device_arg(const char *cmd, char *v, RunnerDevice *on, const Chip **chip)
{
	Diag d;
	diag_clear(&d);
	if (runner_device_parse(v, on, chip, &d)) {
		fprintf(stderr, "ipu %s: %s\n", cmd, d.msg);
		return 0;
	}
	return 1;
}

/* NAME=PATH (v, modified) into b; 0 after a message if malformed. */
static int
binding(const char *cmd, const char *opt, char *v, RunnerFile *b)
{
	char *eq = strchr(v, '=');
	if (!eq || eq == v || !eq[1]) {
		fprintf(stderr, "ipu %s: %s wants NAME=FILE.npy, got '%s'\n",
		        cmd, opt, v);
		return 0;
	}
	*eq = 0;
	b->tensor = v;
	b->path = eq + 1;
	return 1;
}

int
cli_run_option(const char *cmd, int argc, char **argv, int *i, CliRunOptions *o,
               int *bad, int *missing)
{
	const char *v;
	if (!strcmp(argv[*i], "--quiet"))
		o->quiet = 1;
	else if ((v = cli_opt_value(argc, argv, i, "--in", missing)))
		*bad = !binding(cmd, "--in", (char *)v, &o->in[o->nin++]);
	else if ((v = cli_opt_value(argc, argv, i, "--out", missing)))
		*bad = !binding(cmd, "--out", (char *)v, &o->out[o->nout++]);
	else if ((v = cli_opt_value(argc, argv, i, "--cache", missing)))
		o->cache_dir = v;
	else if ((v = cli_opt_value(argc, argv, i, "--chip", missing)))
		*bad = !(o->chip = cli_chip_arg(cmd, v));
	else if ((v = cli_opt_value(argc, argv, i, "--timing", missing)))
		*bad = !cli_timing_arg(cmd, v, &o->timing);
	else if ((v = cli_opt_value(argc, argv, i, "--threads", missing)))
		*bad = !cli_threads_arg(cmd, v, &o->threads);
	else if ((v = cli_opt_value(argc, argv, i, "--max-cycles", missing)))
		*bad = !cli_max_cycles_arg(cmd, v, &o->max_cycles);
	else
		return 0;
	return 1;
}

void
cli_print_run(const Chip *chip, uint64_t cycles, double mfu,
              const RunnerBuild *b, double host_seconds)
{
	printf("cycles          %llu emulated, %llu predicted\n",
	       (unsigned long long)cycles,
	       (unsigned long long)b->predicted_cycles);
	printf("time            %.3f ms at %.0f MHz\n",
	       (double)cycles / chip->clock_hz * 1e3, chip->clock_hz / 1e6);
	printf("MFU             %.3g%% (matmul MACs over %u tiles)\n",
	       100 * mfu, chip->tiles);
	printf("compile         %.1f ms%s, %u tiles, fullest tile %u bytes\n",
	       b->compile_ms, b->cached ? " (package from the cache)" : "",
	       b->tiles, b->peak_tile_bytes);
	printf("emulation       %.1f s\n", host_seconds);
}

/* The outputs against the inputs (the graph and every --in file) and each
 * other, before anything is read or compiled. */
static int
check_files(const RunnerGraphRun *r, const RunnerFile *in,
            const RunnerFile *out, const ProfileOptions *prof)
{
	const char **ins = xcalloc((size_t)r->nin + 1, sizeof *ins),
	           **outs = xcalloc((size_t)r->nout + 1, sizeof *outs);
	ins[0] = r->graph;
	for (int i = 0; i < r->nin; i++)
		ins[i + 1] = in[i].path;
	for (int i = 0; i < r->nout; i++)
		outs[i] = out[i].path;
	int rc = cli_check_outputs("run graph", outs, r->nout, ins, r->nin + 1,
	                           r->force);
	if (!rc)
		rc = cli_profile_check("run graph", prof, ins, r->nin + 1);
	free(ins);
	free(outs);
	return rc;
}

int
cmd_run_graph(int argc, char **argv)
{
	RunnerGraphRun r = {.place_report = stderr};
	RunnerDevice on = {0};
	ProfileOptions prof;
	cli_profile_defaults(&prof, "run graph");
	CliRunOptions o = {.in = xcalloc((size_t)argc, sizeof *o.in),
	                   .out = xcalloc((size_t)argc, sizeof *o.out),
	                   .timing = timing_nominal,
	                   .threads = 2};
	RunnerFile *in = o.in, *out = o.out;
	int bad = 0, help = 0;
	for (int i = 2; i < argc && !bad && !help; i++) {
		int missing = 0;
		const char *v;
		if (cli_profile_opt("run graph", argc, argv, &i, &prof, 1,
		                    &bad)) {
			continue;
		} else if (!strcmp(argv[i], "--force")) {
			r.force = 1;
		} else if (!strcmp(argv[i], "--help")) {
			help = 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--graph",
		                              &missing))) {
			r.graph = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--device",
		                              &missing))) {
			bad = !cli_device_arg("run graph", (char *)v, &on,
			                      &o.chip);
		} else if (!cli_run_option("run graph", argc, argv, &i, &o,
		                           &bad, &missing)) {
			fprintf(stderr, "ipu run graph: %s '%s'\n",
			        missing ? "missing value for"
			                : "unknown option",
			        argv[i]);
			bad = 1;
		}
	}
	r.chip = chip_timed(o.chip ? o.chip : chip_default(), &o.timing);
	r.nin = o.nin;
	r.nout = o.nout;
	r.cache_dir = o.cache_dir;
	r.threads = o.threads;
	r.max_cycles = o.max_cycles;
	r.device = &on;
	if (!bad && !help && !r.graph) {
		fprintf(stderr, "ipu run graph: --graph is needed\n");
		bad = 1;
	}
	prof.force = r.force;
	prof.source = r.graph;
	int rc = 0;
	if (help || bad) {
		usage(help ? stdout : stderr);
		rc = help ? 0 : 2;
	} else if ((rc = check_files(&r, in, out, &prof))) {
		/* said why */
	} else {
		r.in = in;
		r.out = out;
		cli_progress(o.quiet);
		ProfileSession *ps = profile_new(&prof);
		r.observe = profile_observer(ps);
		RunnerResult res;
		Diag d;
		diag_clear(&d);
		int failed = runner_graph_file(&r, &res, &d);
		if (res.warning[0])
			fprintf(stderr, "ipu run graph: warning: %s%s\n",
			        res.warning,
			        res.nwarned > 1 ? " (and other tensors too)"
			                        : "");
		if (failed && !profile_stopped_as_asked(ps)) {
			cli_print_diag(&d);
			rc = 1;
		} else if (failed) {
			printf("stopped         %s\n", d.msg);
		} else {
			cli_print_run(r.chip, res.cycles, res.mfu, &res.build,
			              res.host_seconds);
			for (int i = 0; i < r.nout; i++)
				printf("wrote           %s (%s)\n", out[i].path,
				       out[i].tensor);
		}
		ProfileFacts facts = {.compile_seconds =
		                          res.build.compile_ms / 1e3,
		                      .host_seconds = res.host_seconds,
		                      .cached = res.build.cached};
		rc = cli_profile_finish("run graph", ps, &facts, failed);
		profile_free(ps);
	}
	free(in);
	free(out);
	return rc;
}

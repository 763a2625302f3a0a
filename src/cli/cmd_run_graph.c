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
	        "[--quiet]\n"
	        "  Compile the graph file, run it once on the emulated chip "
	        "and print the\n"
	        "  cycles (emulated and predicted).\n"
	        "  --in NAME=F    values of input or weight NAME: float32 or "
	        "float16 .npy of\n"
	        "                 its shape (converted to its element type, "
	        "round to nearest)\n"
	        "  --out NAME=F   output NAME as float32 .npy; never over an "
	        "existing file\n"
	        "                 unless --force\n"
	        "  --cache DIR    keep the compiled package in DIR and reuse "
	        "it while the\n"
	        "                 graph, the chip and this ipu are the same\n"
	        "  --max-cycles N stop the run after N cycles (default: 10 x "
	        "the predicted\n"
	        "                 cycles + 10^6)\n"
	        "  --quiet        no progress line on stderr (shown only when "
	        "it is a terminal)\n"
	        "%s%s"
	        "Exit status: 0 success (or a stop at --break or --watch), 1 "
	        "a graph, file,\n"
	        "compile or run error, 2 usage.\n",
	        cli_profile_usage, cli_profile_show_usage);
}

/* NAME=PATH into b; 0 after a message if malformed. */
static int
binding(const char *opt, char *v, RunnerFile *b)
{
	char *eq = strchr(v, '=');
	if (!eq || eq == v || !eq[1]) {
		fprintf(stderr,
		        "ipu run graph: %s wants NAME=FILE.npy, got '%s'\n",
		        opt, v);
		return 0;
	}
	*eq = 0;
	b->tensor = v;
	b->path = eq + 1;
	return 1;
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
	RunnerGraphRun r = {.threads = 2, .place_report = stderr};
	ProfileOptions prof;
	cli_profile_defaults(&prof, "run graph");
	RunnerFile *in = xcalloc((size_t)argc, sizeof *in),
	           *out = xcalloc((size_t)argc, sizeof *out);
	int bad = 0, help = 0, quiet = 0;
	Timing timing = timing_nominal;
	for (int i = 2; i < argc && !bad && !help; i++) {
		int missing = 0;
		const char *v;
		if (cli_profile_opt("run graph", argc, argv, &i, &prof, 1,
		                    &bad)) {
			continue;
		} else if (!strcmp(argv[i], "--force")) {
			r.force = 1;
		} else if (!strcmp(argv[i], "--quiet")) {
			quiet = 1;
		} else if (!strcmp(argv[i], "--help")) {
			help = 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--graph",
		                              &missing))) {
			r.graph = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--in",
		                              &missing))) {
			bad = !binding("--in", (char *)v, &in[r.nin++]);
		} else if ((v = cli_opt_value(argc, argv, &i, "--out",
		                              &missing))) {
			bad = !binding("--out", (char *)v, &out[r.nout++]);
		} else if ((v = cli_opt_value(argc, argv, &i, "--cache",
		                              &missing))) {
			r.cache_dir = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--chip",
		                              &missing))) {
			if (!(r.chip = cli_chip_arg("run graph", v)))
				bad = 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--timing",
		                              &missing))) {
			bad = !cli_timing_arg("run graph", v, &timing);
		} else if ((v = cli_opt_value(argc, argv, &i, "--threads",
		                              &missing))) {
			bad = !cli_threads_arg("run graph", v, &r.threads);
		} else if ((v = cli_opt_value(argc, argv, &i, "--max-cycles",
		                              &missing))) {
			bad =
			    !cli_max_cycles_arg("run graph", v, &r.max_cycles);
		} else {
			fprintf(stderr, "ipu run graph: %s '%s'\n",
			        missing ? "missing value for"
			                : "unknown option",
			        argv[i]);
			bad = 1;
		}
	}
	r.chip = chip_timed(r.chip ? r.chip : chip_default(), &timing);
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
		cli_progress(quiet);
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
			printf(
			    "cycles          %llu emulated, %llu predicted\n",
			    (unsigned long long)res.cycles,
			    (unsigned long long)res.build.predicted_cycles);
			printf("compile         %.1f ms%s, %u tiles, fullest "
			       "tile %u bytes\n",
			       res.build.compile_ms,
			       res.build.cached ? " (package from the cache)"
			                        : "",
			       res.build.tiles, res.build.peak_tile_bytes);
			printf("emulation       %.1f s\n", res.host_seconds);
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

/*
 * cmd_compile.c - `ipu compile GRAPH.txt -o OUT.pkg [--chip NAME]
 * [--tiles N] [--report]`: read a graph in the text form (docs/graph.md),
 * compile it (src/compile/compile.h) and write the package
 * (docs/package.md), which `ipu inspect` summarises and the runtime loads.
 *
 * Prints a summary: the plan, the predicted cycles and what they mean as
 * a fraction of the chip's peak (MFU), the tiles used, the fullest tile's
 * bytes and the compile time. --report adds the placement report (bytes by
 * kind, highest water mark). Parse errors are printed as file:line:col
 * with the line and a caret, all of them (up to GRAPH_MAX_ERRORS); a
 * program that does not fit tile memory prints the placement report,
 * which names every tile that overflows, at which step, with what and by
 * how much. The output is never the input, nor an existing file unless
 * --force (cli_check_outputs).
 *
 * Exit status: 0 success, 1 a bad graph or one the compiler refuses, 2 a
 * usage error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compile/compile.h"
#include "../onnx/onnx.h"
#include "../runner/runner.h"
#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu compile GRAPH.txt|MODEL.onnx -o OUT.pkg [--force] "
	        "[--chip NAME]\n"
	        "                   [--timing P] [--tiles N] [--report] "
	        "[--dtype f32|f16|f8]\n"
	        "                   [--dump PASS,...] [--no-gemm-overlap] "
	        "[--no-b-under]\n"
	        "                   [--no-a-direct] [--range]\n"
	        "                   [--no-b-wrap] [--no-gelu-reduction] "
	        "[--no-cast-reduction]\n"
	        "                   [--no-carry-layout] [--no-red-pipe]\n"
	        "  Compile a graph in the text form (docs/graph.md) or an "
	        "ONNX model\n"
	        "  (docs/onnx.md; its weights go into the package) to a "
	        "package.\n"
	        "  --dtype T    an ONNX model's compute type (default f32)\n"
	        "  -o OUT.pkg   the package to write (not the input)\n"
	        "  --force      replace OUT.pkg if it exists\n"
	        "  --chip NAME  %s (default c600)\n"
	        "  --timing P   timing profile of the cost model (default "
	        "nominal)\n"
	        "  --tiles N    tiles the compiler may use (default all)\n"
	        "  --report     also print the placement report\n"
	        "  --range      also this program's predicted cycles with "
	        "every timing rule\n"
	        "               at its fast and at its slow bound: its plans "
	        "lowered for\n"
	        "               those profiles (docs/fidelity.md)\n"
	        "  --no-gemm-overlap  never the overlapped GEMM superstep "
	        "(by default a\n"
	        "               graph whose GEMM plans have it is also "
	        "compiled without,\n"
	        "               the fewer predicted cycles kept; "
	        "docs/bench-gemm.md)\n"
	        "  --no-b-under keep each weight GEMM's B transfers in its "
	        "own exchange\n"
	        "               (default: under an earlier multiply, "
	        "docs/bench-siglip.md)\n"
	        "  --no-a-direct keep each GEMM's A in two exchanges, into "
	        "its stored\n"
	        "               parts and from there (default: straight "
	        "from its producer\n"
	        "               where that is cheaper, docs/bench-siglip.md)\n"
	        "  --no-b-wrap  keep a loop body's first weight GEMM's B "
	        "transfers in the\n"
	        "               body (default: under the body's last "
	        "multiply, for the next\n"
	        "               iteration, docs/bench-siglip.md)\n"
	        "  --no-red-pipe keep each K-split reduction in one exchange "
	        "and one add\n"
	        "               (default: in two parts of its rows, the "
	        "second's partials\n"
	        "               beside the first's add, where priced "
	        "cheaper; docs/compiler.md)\n"
	        "  --no-gelu-reduction  keep a GELU (and its cast to f8) after "
	        "its\n"
	        "               matmul's reduction or bias add in its own step "
	        "(default:\n"
	        "               in the reduction's last pass where that pays, "
	        "else in one\n"
	        "               pass with the bias add, docs/kernel-gemm.md)\n"
	        "  --no-cast-reduction  keep a cast to f8 after its matmul's "
	        "reduction in\n"
	        "               its own step (default: in the row division's "
	        "last pass\n"
	        "               where that pays, docs/compiler.md)\n"
	        "  --no-carry-layout  keep a loop's carry laid out as the "
	        "tensor it starts\n"
	        "               from (default: as a body matmul's C where "
	        "the planner prices\n"
	        "               that cheaper, docs/compiler.md)\n"
	        "  --dump P,... print what passes make, as text, before the "
	        "summary:\n"
	        "               plan (each op's plan), lower (buffers, steps, "
	        "transfers,\n"
	        "               kernel calls, tensor pieces), sched (every "
	        "exchange's\n"
	        "               send and receive cycles), code (each "
	        "program's bytes by\n"
	        "               step), place (every buffer's address)\n"
	        "Exit status: 0 on success, 1 for a bad or refused graph, 2 on "
	        "a usage error.\n",
	        chip_names());
}

static void
print_summary(const Graph *g, const Chip *c, const CompileReport *rep,
              const char *out)
{
	uint64_t macs;
	double mfu = runner_mfu(g, c, rep->predicted_cycles, &macs);
	printf("plan           %s\n", rep->plan);
	printf("predicted      %" PRIu64 " cycles (%.3f us at %.0f MHz)\n",
	       rep->predicted_cycles,
	       (double)rep->predicted_cycles / c->clock_hz * 1e6,
	       c->clock_hz / 1e6);
	if (macs && rep->predicted_cycles)
		printf("predicted MFU  %.2f%% (%" PRIu64 " matmul MACs, each "
		       "at its operands' peak, over %u tiles)\n",
		       100 * mfu, macs, c->tiles);
	printf("tiles used     %u of %u (%s)\n", rep->tiles_used, c->tiles,
	       c->name);
	printf("fullest tile   %u of %u bytes (code and data)\n",
	       rep->peak_tile_bytes, c->mem_end - c->mem_base);
	if (rep->b_under)
		printf("B under        %u transfers beside %u earlier "
		       "multiplies\n",
		       rep->b_under, rep->b_hosts);
	printf("plans          %d", rep->plans);
	if (rep->plans > 1)
		printf(" (placement's packing found tiles over in the first "
		       "%d, the memory model's bounds kept%s)",
		       rep->plans - 1,
		       rep->packed_beside
		           ? "; planned again beside the buffers "
		             "there"
		           : "");
	if (rep->code_rounds > 1)
		printf(" (drafted %d times: its GEMM plans chosen beside the "
		       "code and data its lowering sized)",
		       rep->code_rounds);
	if (rep->refits)
		printf(" (%d of them after the memory model found the last "
		       "draft's tiles over",
		       rep->refits);
	if (rep->own_refits)
		printf("; %d matmul%s over at %s own step%s planned again "
		       "within it",
		       rep->own_refits, rep->own_refits == 1 ? "" : "s",
		       rep->own_refits == 1 ? "its" : "their",
		       rep->own_refits == 1 ? "" : "s");
	if (rep->refits)
		printf(")");
	printf("\n");
	if (rep->overlap != COMPILE_OVERLAP_NONE) {
		printf("gemm overlap   ");
		if (rep->overlap == COMPILE_OVERLAP_FAILED)
			printf("not kept: the compile with it failed (%s)",
			       rep->overlap_why);
		else
			printf("%s (%" PRIu64 " cycles predicted %s)",
			       rep->overlap == COMPILE_OVERLAP_KEPT
			           ? "kept"
			           : "not kept, no cheaper",
			       rep->overlap_other_cycles,
			       rep->overlap == COMPILE_OVERLAP_KEPT
			           ? "without it"
			           : "with it");
		printf("; %s%u superstep%s beside the multiply, %u after it "
		       "(no room beside), %u after it (cheaper)\n",
		       rep->overlap == COMPILE_OVERLAP_KEPT ? "" : "with it ",
		       rep->ovl_beside, rep->ovl_beside == 1 ? "" : "s",
		       rep->ovl_no_room, rep->ovl_dearer);
	}
	if (rep->red_beside || rep->red_no_room)
		printf("reductions     %u in two parts, the second's partials "
		       "beside the first's add; %u after it (no room "
		       "beside)\n",
		       rep->red_beside, rep->red_no_room);
	printf("compile time   %.1f ms\n", rep->compile_ms);
	printf("wrote          %s\n", out);
}

/* --range: the program's plans lowered, scheduled and priced with every
 * rule at its fast and at its slow bound (CompileOptions.plan); a bound at
 * which they do not fit says so. */
static void
print_range(const Graph *g, const CompileOptions *o, const Plan *plan)
{
	uint64_t cycles[2] = {0, 0};
	for (int b = TIMING_FAST; b <= TIMING_SLOW; b++) {
		Timing t;
		timing_profile(&t, (TimingBound)b);
		CompileOptions at = *o;
		at.chip = chip_timed(o->chip, &t);
		at.dump = 0;
		at.keep_plan = 0;
		at.plan = plan;
		Package *pk;
		CompileReport rep;
		Diag d;
		diag_clear(&d);
		if (compile_graph(g, &at, &pk, &rep, &d))
			printf("range %-8s does not fit: %s\n",
			       timing_bound_name((TimingBound)b), d.msg);
		else
			cycles[b - TIMING_FAST] = rep.predicted_cycles;
		pkg_free(pk);
		compile_report_free(&rep);
	}
	printf("timing range   %" PRIu64 " .. %" PRIu64
	       " cycles predicted, this program with every rule at its "
	       "fast .. slow bound (0: does not fit)\n",
	       cycles[0], cycles[1]);
}

/* --report's account of plans placement found over by the packing alone:
 * the one case the planner cannot see before placement (it packs a GEMM's
 * fullest tile, not every op's buffers with their lifetimes). */
static void
print_packing(const CompileReport *rep, FILE *f)
{
	fprintf(f,
	        "packing: the placement of %d plan%s found tiles over by "
	        "the packing alone (alignment, the element rule), the "
	        "memory model's bounds kept; the last, %d of %u tiles "
	        "(the first, %s); ",
	        rep->packings, rep->packings == 1 ? "" : "s", rep->packing_over,
	        rep->packing_tiles, rep->packing_first);
	if (rep->packed_beside)
		fprintf(f,
		        "the first: %d matmul%s planned again with each "
		        "candidate packed beside the buffers those tiles "
		        "held at %s steps",
		        rep->packed_beside, rep->packed_beside == 1 ? "" : "s",
		        rep->packed_beside == 1 ? "its" : "their");
	if (rep->packings > (rep->packed_beside > 0))
		fprintf(f,
		        "%sthe planner gave up weight copies or GEMM plans "
		        "over half a tile",
		        rep->packed_beside ? "; then " : "");
	fprintf(f, "\n");
}

/* A graph's text file parsed; 1 after printing every error. */
static int
parse_graph(const char *in, Graph **g)
{
	Diag d;
	uint8_t *text;
	size_t len;
	if (read_file(in, &text, &len, &d)) {
		cli_print_diag(&d);
		return 1;
	}
	Diag errs[GRAPH_MAX_ERRORS];
	int nerrs = 0;
	int r = graph_parse((const char *)text, len, in, g, errs, &nerrs);
	free(text);
	if (r) {
		for (int i = 0; i < nerrs; i++)
			cli_print_diag(&errs[i]);
		fprintf(stderr, "ipu compile: %s: %d error%s\n", in, nerrs,
		        nerrs == 1 ? "" : "s");
		return 1;
	}
	return 0;
}

/* `--dump plan,lower,...` into COMPILE_DUMP_* bits; 0 after a message. */
static int
dump_arg(const char *v, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned bit;
	} pass[] = {{"plan", COMPILE_DUMP_PLAN},
	            {"lower", COMPILE_DUMP_LOWER},
	            {"sched", COMPILE_DUMP_SCHED},
	            {"code", COMPILE_DUMP_CODE},
	            {"place", COMPILE_DUMP_PLACE}};
	*out = 0;
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, ",");
		unsigned bit = 0;
		for (size_t i = 0; i < sizeof pass / sizeof *pass && !bit; i++)
			if (strlen(pass[i].name) == n &&
			    !strncmp(pass[i].name, p, n))
				bit = pass[i].bit;
		if (!bit) {
			fprintf(stderr,
			        "ipu compile: --dump: no pass '%.*s' (plan, "
			        "lower, sched, code, place)\n",
			        (int)n, p);
			return 0;
		}
		*out |= bit;
		p += n + (p[n] == ',');
	}
	return 1;
}

int
cmd_compile(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	const Chip *chip = chip_default();
	Timing timing = timing_nominal;
	uint32_t tiles = 0;
	int report = 0, force = 0, overlap = 1, no_b_under = 0, no_a_direct = 0;
	int range = 0;
	int no_b_wrap = 0, no_gelu = 0, no_cast = 0, no_carry = 0;
	int no_red_pipe = 0;
	OnnxDType dt = ONNX_F32;
	unsigned dump = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		int missing = 0;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--report")) {
			report = 1;
		} else if (!strcmp(a, "--range")) {
			range = 1;
		} else if (!strcmp(a, "--gemm-overlap")) {
			overlap = 1;
		} else if (!strcmp(a, "--no-gemm-overlap")) {
			overlap = 0;
		} else if (!strcmp(a, "--no-b-under")) {
			no_b_under = 1;
		} else if (!strcmp(a, "--no-a-direct")) {
			no_a_direct = 1;
		} else if (!strcmp(a, "--b-wrap")) {
			no_b_wrap = 0;
		} else if (!strcmp(a, "--no-b-wrap")) {
			no_b_wrap = 1;
		} else if (!strcmp(a, "--no-gelu-reduction")) {
			no_gelu = 1;
		} else if (!strcmp(a, "--no-red-pipe")) {
			no_red_pipe = 1;
		} else if (!strcmp(a, "--no-cast-reduction")) {
			no_cast = 1;
		} else if (!strcmp(a, "--no-carry-layout")) {
			no_carry = 1;
		} else if (!strcmp(a, "--force")) {
			force = 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "-o",
		                              &missing))) {
			out = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--dtype",
		                              &missing))) {
			if (!onnx_dtype_from_name(v, &dt)) {
				fprintf(
				    stderr,
				    "ipu compile: --dtype wants f32, f16 or "
				    "f8, got '%s'\n",
				    v);
				return 2;
			}
		} else if ((v = cli_opt_value(argc, argv, &i, "--chip",
		                              &missing))) {
			if (!(chip = cli_chip_arg("compile", v)))
				return 2;
		} else if ((v = cli_opt_value(argc, argv, &i, "--dump",
		                              &missing))) {
			if (!dump_arg(v, &dump))
				return 2;
		} else if ((v = cli_opt_value(argc, argv, &i, "--timing",
		                              &missing))) {
			if (!cli_timing_arg("compile", v, &timing))
				return 2;
		} else if ((v = cli_opt_value(argc, argv, &i, "--tiles",
		                              &missing))) {
			char *end;
			long n = strtol(v, &end, 10);
			if (end == v || *end || n < 1 || n > 1 << 16) {
				fprintf(stderr,
				        "ipu compile: --tiles wants a number "
				        "of tiles, got '%s'\n",
				        v);
				return 2;
			}
			tiles = (uint32_t)n;
		} else if (missing) {
			fprintf(stderr, "ipu compile: missing value for %s\n",
			        a);
			return 2;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ipu compile: unknown option '%s'\n",
			        a);
			usage(stderr);
			return 2;
		} else if (in) {
			fprintf(stderr, "ipu compile: one graph at a time\n");
			return 2;
		} else {
			in = a;
		}
	}
	if (!in || !out) {
		fprintf(stderr, "ipu compile: %s\n",
		        in ? "no output: give -o OUT.pkg" : "no graph file");
		usage(stderr);
		return 2;
	}
	chip = chip_timed(chip, &timing);
	if (tiles > chip->tiles) {
		fprintf(stderr,
		        "ipu compile: --tiles %u: the %s has %u tiles\n", tiles,
		        chip->name, chip->tiles);
		return 2;
	}
	int bad = cli_check_outputs("compile", &out, 1, &in, 1, force);
	if (bad)
		return bad;

	Diag d;
	diag_clear(&d);
	size_t inlen = strlen(in);
	OnnxModel *m = NULL;
	Graph *g;
	if (inlen > 5 && !strcmp(in + inlen - 5, ".onnx")) {
		if (onnx_import_file(in, dt, &m, &d)) {
			cli_print_diag(&d);
			return 1;
		}
		if (m->notes[0])
			fprintf(stderr, "ipu compile: note: %s\n", m->notes);
		g = m->g;
	} else if (parse_graph(in, &g)) {
		return 1;
	}
	CompileOptions o = {.chip = chip,
	                    .tiles = tiles,
	                    .dump = dump,
	                    .dump_to = stdout,
	                    .no_gemm_overlap = !overlap,
	                    .no_b_under = no_b_under,
	                    .no_a_direct = no_a_direct,
	                    .no_gelu_in_reduction = no_gelu,
	                    .no_cast_in_reduction = no_cast,
	                    .no_carry_layout = no_carry,
	                    .no_b_wrap = no_b_wrap,
	                    .no_red_pipe = no_red_pipe,
	                    .keep_plan = range};
	Package *pk;
	CompileReport rep;
	int r = m ? onnx_compile_package(m, &o, &pk, &rep, &d)
	          : compile_graph(g, &o, &pk, &rep, &d);
	if (!r)
		r = pkg_write_file(pk, out, &d);
	if (r) {
		char buf[1400];
		diag_format(&d, buf, sizeof buf);
		fprintf(stderr, "ipu compile: %s: %s\n", in, buf);
		if (rep.plans > 1)
			fprintf(stderr,
			        "ipu compile: %s: placed %d times (placement's "
			        "packing found tiles over in the first %d)\n",
			        in, rep.plans, rep.plans - 1);
		if (rep.place.nover)
			place_report_print(&rep.place, stderr);
	} else {
		print_summary(g, chip, &rep, out);
		if (range)
			print_range(g, &o, rep.kept_plan);
		if (report && rep.packings)
			print_packing(&rep, stdout);
		if (report)
			place_report_print(&rep.place, stdout);
	}
	pkg_free(pk);
	compile_report_free(&rep);
	if (m)
		onnx_model_free(m);
	else
		graph_free(g);
	return r ? 1 : 0;
}

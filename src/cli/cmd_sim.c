/*
 * cmd_sim.c - `ipu sim FILE`: run a single-tile program on the emulator.
 *
 * FILE is a linked tile image or a relocatable object (linked on the fly with
 * the default layout). The supervisor starts at the image's entry with $lr
 * = 0; `br $lr` ends the run and $m0 is the exit status.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../asm/asm.h"
#include "../sim/sim.h"
#include "cli_profile.h"

enum { MAX_DUMPS = 16 };

typedef struct {
	const char *path;
	const Chip *chip;
	uint64_t max_cycles;
	uint64_t tiles, threads, show_tile;
	const char *trace;
	int force;
	int dump_regs;
	int ndumps;
	uint32_t dump_addr[MAX_DUMPS], dump_len[MAX_DUMPS];
	ProfileOptions prof; /* --profile, --break, --watch */
	int bad;
} SimArgs;

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu sim FILE [options]\n"
	        "  Run a single-tile program (image or object) on the "
	        "emulator.\n"
	        "  --chip NAME          %s (default c600)\n"
	        "  --timing P           timing profile (default nominal; "
	        "docs/fidelity.md)\n"
	        "  --max-cycles N       stop after N cycles (default 10^9)\n"
	        "  --dump-regs          print every context's registers\n"
	        "  --dump-mem ADDR:LEN  print LEN bytes of tile memory at "
	        "ADDR (repeatable)\n"
	        "  --tiles N            run FILE on tiles 0..N-1 (default 1)\n"
	        "  --tile T             the tile whose result and dumps are "
	        "shown (default 0)\n"
	        "  --threads N          host threads (default 1)\n"
	        "  --trace OUT.json     write a Chrome trace of the run "
	        "(kinds only)\n"
	        "  --force              replace existing output files\n"
	        "%s"
	        "  (steps are the supersteps between syncs with other tiles; "
	        "a stop shows --tile)\n"
	        "Exit status: 0 when the supervisor returned or the run "
	        "stopped at --break or\n"
	        "--watch, 1 on a fault, a timeout or a bad file, 2 on a usage "
	        "error.\n",
	        chip_names(), cli_profile_usage);
}

/* The value of a count option: a positive number (--tile: 0 too). */
static int
count_arg(const char *opt, const char *v, int zero, uint64_t *out)
{
	if (cli_parse_u64(v, out) || *out > 100000 || (*out == 0 && !zero)) {
		fprintf(stderr,
		        "ipu sim: %s wants a positive number, got '%s'\n", opt,
		        v);
		return -1;
	}
	return 0;
}

static int
parse_args(int argc, char **argv, SimArgs *a)
{
	*a = (SimArgs){.chip = chip_default(),
	               .max_cycles = 1000000000ull,
	               .tiles = 1,
	               .threads = 1};
	cli_profile_defaults(&a->prof, "sim");
	Timing timing = timing_nominal;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], *v;
		int missing = 0, bad = 0;
		if (cli_profile_opt("sim", argc, argv, &i, &a->prof, 0,
		                    &a->bad)) {
			if (a->bad)
				return -1;
		} else if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(s, "--dump-regs")) {
			a->dump_regs = 1;
		} else if (!strcmp(s, "--force")) {
			a->force = 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--chip",
		                              &missing))) {
			bad = !(a->chip = cli_chip_arg("sim", v));
		} else if ((v = cli_opt_value(argc, argv, &i, "--timing",
		                              &missing))) {
			bad = !cli_timing_arg("sim", v, &timing);
		} else if ((v = cli_opt_value(argc, argv, &i, "--max-cycles",
		                              &missing))) {
			bad = !cli_max_cycles_arg("sim", v, &a->max_cycles);
		} else if ((v = cli_opt_value(argc, argv, &i, "--tiles",
		                              &missing))) {
			bad = count_arg("--tiles", v, 0, &a->tiles);
		} else if ((v = cli_opt_value(argc, argv, &i, "--threads",
		                              &missing))) {
			bad = count_arg("--threads", v, 0, &a->threads);
		} else if ((v = cli_opt_value(argc, argv, &i, "--tile",
		                              &missing))) {
			bad = count_arg("--tile", v, 1, &a->show_tile);
		} else if ((v = cli_opt_value(argc, argv, &i, "--trace",
		                              &missing))) {
			a->trace = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--dump-mem",
		                              &missing))) {
			bad = a->ndumps == MAX_DUMPS ||
			      cli_parse_range(v, &a->dump_addr[a->ndumps],
			                      &a->dump_len[a->ndumps]);
			if (bad)
				fprintf(stderr,
				        "ipu sim: --dump-mem wants ADDR:LEN "
				        "(at most %d), got '%s'\n",
				        MAX_DUMPS, v);
			else
				a->ndumps++;
		} else if (missing) {
			fprintf(stderr, "ipu sim: missing value for %s\n", s);
			return -1;
		} else if (s[0] == '-') {
			fprintf(stderr, "ipu sim: unknown option '%s'\n", s);
			return -1;
		} else if (a->path) {
			fprintf(stderr, "ipu sim: one FILE only\n");
			return -1;
		} else {
			a->path = s;
		}
		if (bad)
			return -1;
	}
	if (!a->path) {
		usage(stderr);
		return -1;
	}
	a->chip = chip_timed(a->chip, &timing);
	return 0;
}

int
cmd_sim(int argc, char **argv)
{
	SimArgs a;
	if (parse_args(argc, argv, &a))
		return 2;
	if (a.tiles > a.chip->tiles || a.show_tile >= a.tiles) {
		fprintf(stderr,
		        "ipu sim: the %s has %u tiles; --tiles %llu, --tile "
		        "%llu\n",
		        a.chip->name, a.chip->tiles,
		        (unsigned long long)a.tiles,
		        (unsigned long long)a.show_tile);
		return 2;
	}
	int bad = cli_check_outputs("sim", &a.trace, 1, &a.path, 1, a.force);
	a.prof.force = a.force;
	a.prof.source = a.path;
	a.prof.show_tile = (int64_t)a.show_tile;
	if (!bad)
		bad = cli_profile_check("sim", &a.prof, &a.path, 1);
	if (bad)
		return bad;
	TileImage img;
	Diag d;
	diag_clear(&d);
	if (img_load_file(a.path, a.chip, &img, &d)) {
		char buf[1024];
		diag_format(&d, buf, sizeof buf);
		fprintf(stderr, "ipu sim: %s\n", buf);
		return 1;
	}
	ChipConfig cfg = {.chip = a.chip,
	                  .tiles = (uint32_t)a.tiles,
	                  .threads = (int)a.threads,
	                  .trace = a.trace != NULL};
	ChipSim *cs = chipsim_new(&cfg);
	for (uint32_t id = 0; id < a.tiles; id++) {
		Tile *t = chipsim_tile(cs, id);
		for (int i = 0; i < img.nseg; i++)
			if (tile_write(t, img.seg[i].addr, img.seg[i].bytes,
			               img.seg[i].size)) {
				fprintf(stderr,
				        "ipu sim: %s: segment %s at 0x%x (+%u "
				        "bytes) is outside tile memory "
				        "0x%05x..0x%05x\n",
				        a.path, img.seg[i].name,
				        img.seg[i].addr, img.seg[i].size,
				        a.chip->mem_base, a.chip->mem_end);
				chipsim_free(cs);
				img_free(&img);
				return 1;
			}
		tile_start(t, img.entry);
	}
	ProfileSession *ps = profile_new(&a.prof);
	if (profile_sim_arm(ps, cs, (uint32_t)a.tiles, &img, &d)) {
		cli_print_diag(&d);
		profile_free(ps);
		chipsim_free(cs);
		img_free(&img);
		return 1;
	}
	double t0 = monotonic_seconds();
	ChipError err;
	RunStatus st = chipsim_run(cs, a.max_cycles, &err);
	ProfileFacts facts = {.host_seconds = monotonic_seconds() - t0};
	profile_sim_ran(ps, cs, st, &err);
	Tile *t = chipsim_tile(cs, (uint32_t)a.show_tile);
	uint64_t issued = 0, by_workers = 0;
	for (uint32_t id = 0; id < a.tiles; id++) {
		issued += chipsim_tile(cs, id)->bundles;
		by_workers += chipsim_tile(cs, id)->worker_issues;
	}
	uint64_t cycles = st == RUN_DONE ? chipsim_cycles(cs) : err.cycle;
	printf("chip:    %s (%s), %llu tile%s\n", a.chip->name,
	       a.chip->arch_name, (unsigned long long)a.tiles,
	       a.tiles > 1 ? "s" : "");
	printf("cycles:  %" PRIu64 " (%.3f us at %.3f GHz)\n", cycles,
	       (double)cycles / a.chip->clock_hz * 1e6, a.chip->clock_hz / 1e9);
	printf("issued:  %" PRIu64 " bundles (%" PRIu64 " by workers)\n",
	       issued, by_workers);
	int rc = 1;
	if (st == RUN_DONE) {
		printf("status:  returned, tile %llu $m0 = %u (0x%08x)\n",
		       (unsigned long long)a.show_tile, t->ctx[0].m[0],
		       t->ctx[0].m[0]);
		rc = 0;
	} else if (profile_stopped_as_asked(ps)) {
		printf("status:  stopped as asked: %s\n", err.msg);
	} else {
		printf("status:  %s\n", st == RUN_FAULT     ? "fault"
		                        : st == RUN_TIMEOUT ? "timeout"
		                                            : "deadlock");
		fprintf(stderr, "ipu sim: %s\n", err.msg);
		if (st == RUN_TIMEOUT)
			fprintf(stderr,
			        "ipu sim: stopped at the limit of %llu cycles "
			        "(--max-cycles, default 10^9); a longer run "
			        "needs a larger --max-cycles\n",
			        (unsigned long long)a.max_cycles);
		uint32_t off;
		const char *sym =
		    err.ctx >= 0 ? img_symbol(&img, err.pc, &off) : NULL;
		if (sym)
			fprintf(stderr, "ipu sim: the %s pc is %s+0x%x\n",
			        st == RUN_FAULT ? "faulting" : "reported", sym,
			        off);
	}
	int files = 0; /* an output could not be written */
	if (a.trace) {
		Diag td;
		diag_clear(&td);
		if (trace_write_json(cs, a.trace, a.force, &td)) {
			char buf[600];
			diag_format(&td, buf, sizeof buf);
			fprintf(stderr, "ipu sim: %s\n", buf);
			files = 1;
		}
	}
	if (a.dump_regs)
		profile_dump_regs(t, stdout);
	for (int i = 0; i < a.ndumps; i++)
		if (profile_dump_mem(t, a.dump_addr[i], a.dump_len[i], stdout))
			fprintf(stderr,
			        "ipu sim: --dump-mem 0x%x:%u is outside tile "
			        "memory 0x%05x..0x%05x\n",
			        a.dump_addr[i], a.dump_len[i], a.chip->mem_base,
			        a.chip->mem_end);
	rc = cli_profile_finish("sim", ps, &facts, rc != 0) || files;
	profile_free(ps);
	chipsim_free(cs);
	img_free(&img);
	return rc;
}

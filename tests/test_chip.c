/*
 * test_chip.c - many tiles: the exchange (point to point across the chip,
 * multicast to all 1472 tiles, an all-to-all permutation, paired 64-bit
 * items), syncs, the host link, mistimed programs and thread-count
 * determinism.
 *
 * Programs are assembled from text at test time and loaded on every tile;
 * each reads its id from $TILE_ID. Delivery cycles are checked against the
 * route timing of docs/chip.md recomputed from the tile geometry
 * (support.c: model_latency), not through src/target/route.c. A receiver
 * sets up its window and mux before the sync that opens the phase and its
 * count right after it (a tile with words due does not arrive at a sync);
 * the supervisor's timing follows the nominal rules D = B = P = 6
 * (docs/fidelity.md), which the comments use.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/asm/asm.h"
#include "../src/bench/tile_kernel.h"

enum { SRC_BUF = 0x60000, DST_BUF = 0x62000 };

#define RULE(r) ((uint64_t)chip_rule(chip_default(), TIMING_##r))
#define D RULE(SUP_DEP)
#define B RULE(SUP_BRANCH)
#define P RULE(SUP_PUT)
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* A received word counts this many cycles after its write
 * (docs/chip.md: the SDK's receive rows end 6 cycles after it). */
enum { LAND = 6 };

static uint32_t
latency(uint32_t s, uint32_t d)
{
	return model_latency(s, d);
}

/* The chip spmd() builds: the C600 at nominal timing unless a test sets
 * a profile (chip_timed). */
static const Chip *model_chip;

static ChipSim *
spmd(const char *text, uint32_t tiles, int threads)
{
	Obj *o, *exe;
	DiagList errs = {0};
	AsmOptions opt = {0};
	if (asm_source("test.s", text, strlen(text), &opt, &o, &errs)) {
		char buf[1024];
		diag_format(&errs.v[0], buf, sizeof buf);
		fail_msg("%s", buf);
	}
	Diag d;
	LinkOptions lo = {0};
	assert_int_equal(link_objects(&o, 1, &lo, &exe, &d), 0);
	obj_free(o);
	TileImage img;
	assert_int_equal(img_from_obj(exe, &img, &d), 0);
	ChipConfig cfg = {.chip = model_chip ? model_chip : chip_default(),
	                  .tiles = tiles,
	                  .threads = threads,
	                  .trace = 1};
	ChipSim *cs = chipsim_new(&cfg);
	for (uint32_t id = 0; id < tiles; id++) {
		Tile *t = chipsim_tile(cs, id);
		tile_load_image(t, &img);
		tile_start(t, img.entry);
	}
	img_free(&img);
	return cs;
}

static void
fill(ChipSim *cs, uint32_t tile, uint32_t words, uint32_t seed)
{
	uint32_t *v = xcalloc(words, 4);
	for (uint32_t i = 0; i < words; i++)
		v[i] = seed * 0x10001u + i * 0x9e3779b9u;
	tile_write(chipsim_tile(cs, tile), SRC_BUF, v, words * 4);
	free(v);
}

static void
expect_data(ChipSim *cs, uint32_t tile, uint32_t words, uint32_t seed)
{
	uint32_t *v = xcalloc(words, 4);
	tile_read(chipsim_tile(cs, tile), DST_BUF, v, words * 4);
	for (uint32_t i = 0; i < words; i++)
		if (v[i] != seed * 0x10001u + i * 0x9e3779b9u)
			fail_msg("tile %u word %u: 0x%08x", tile, i, v[i]);
	free(v);
}

static RunStatus
run(ChipSim *cs, ChipError *err)
{
	RunStatus st = chipsim_run(cs, 100000000, err);
	return st;
}

static void
expect_ok(ChipSim *cs)
{
	ChipError err;
	RunStatus st = run(cs, &err);
	if (st != RUN_DONE)
		fail_msg("status %d: %s", st, err.msg);
}

static uint64_t
send_cycle(ChipSim *cs, uint32_t tile)
{
	Tile *t = chipsim_tile(cs, tile);
	for (int i = 0; i < t->ntrace; i++)
		if (t->trace[i].kind == TR_SEND)
			return t->trace[i].start;
	fail_msg("tile %u never sent", tile);
	return 0;
}

/* One sender, the receivers in [lo, hi) (all others wait). */
static const char p2p_prog[] = "	.equ SRC, %u\n"
                               "	.equ LO, %u\n"
                               "	.equ HI, %u\n"
                               "	.equ N, %u\n"
                               "	.equ SCTL, %u\n"
                               "	.equ FMT, %u\n"
                               "	.equ EXTRA, %d\n"
                               "_start:\n"
                               "	get $m0, $TILE_ID\n"
                               "	setzi $m2, N + EXTRA\n"
                               "	cmpeq $m1, $m0, SRC\n"
                               "	brnz $m1, sender\n"
                               "	cmpult $m1, $m0, LO\n"
                               "	brnz $m1, idle\n"
                               "	cmpult $m1, $m0, HI\n"
                               "	brnz $m1, receiver\n"
                               "idle:\n"
                               "	sync 3\n"
                               "	sync 3\n"
                               "	br $lr\n"
                               "sender:\n"
                               "	sync 3\n"
                               "	send N - 1, 0x60000 / 4, SCTL\n"
                               "	sync 3\n"
                               "	br $lr\n"
                               "receiver:\n"
                               "	setzi $m3, 0x62000\n"
                               "	put $INCOMING_SINIT, $m3\n"
                               "	setzi $m3, FMT\n"
                               "	put $INCOMING_FORMAT, $m3\n"
                               "	setzi $m3, SRC\n"
                               "	put $INCOMING_MUX, $m3\n"
                               "	sync 3\n"
                               "	put $INCOMING_DCOUNT, $m2\n"
                               "	sync 3\n"
                               "	br $lr\n";

/* The first sync's release in p2p_prog: the receivers come last. get at
 * 0, setzi, cmpeq (reading $m0) at D, brnz at 2D; cmpult, brnz at 3D + 1;
 * cmpult, brnz at 4D + 2, taken; setzi at 4D + 2 + B, then three CSR
 * writes each reading the setzi before (D) and holding the next back (P):
 * the sync at 7D + 2 + B + 3P = 68; 126 cycles later, 194. */
static uint64_t
p2p_release(void)
{
	return 7 * D + 2 + B + 3 * P + RULE(SYNC_INTERNAL);
}

static ChipSim *
p2p(uint32_t tiles, uint32_t src, uint32_t lo, uint32_t hi, uint32_t n,
    uint32_t sctl, int extra, int threads)
{
	char text[4096];
	snprintf(text, sizeof text, p2p_prog, src, lo, hi, n, sctl,
	         sctl & 4 ? 1u : 0u, extra);
	ChipSim *cs = spmd(text, tiles, threads);
	fill(cs, src, n * (sctl & 4 ? 2 : 1), src);
	return cs;
}

/* Between the two tiles with the longest route of the chip: 781 to 44,
 * 164 cycles, down the spine (docs/chip.md works it out by hand). */
static void
test_point_to_point(void **state)
{
	(void)state;
	const uint32_t T = 1472, S = 781, DT = 44, N = 48;
	assert_int_equal(latency(S, DT), 164);
	ChipSim *cs = p2p(T, S, DT, DT + 1, N, SCTL_DIR2, 0, 2);
	expect_ok(cs);
	expect_data(cs, DT, N, S);
	/* the sender sends at the first sync's release */
	assert_int_equal(p2p_release(), 194);
	assert_int_equal(send_cycle(cs, S), p2p_release());
	Tile *d = chipsim_tile(cs, DT);
	assert_int_equal(d->x.last_rx_cycle, p2p_release() + N - 1 + 164);
	/* the last sync: the receiver arrives when its last item has
	 * landed */
	uint64_t release = d->x.last_rx_cycle + 1 + LAND + 126;
	assert_int_equal(chipsim_cycles(cs), release + 1);
	chipsim_free(cs);
}

/* chip_route_max_cycles searches only the last row's routes to row 0
 * (target/route.c says why): it must be the longest of all pairs by
 * support.c's model, on both chips (they share the array), 164 cycles as
 * above. */
static void
test_longest_route(void **state)
{
	(void)state;
	uint32_t n = chip_default()->tiles, longest = 0;
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t d = 0; d < n; d++)
			longest = MAX(longest, latency(s, d));
	assert_int_equal(longest, 164);
	assert_int_equal(chip_route_max_cycles(chip_default()), longest);
	assert_int_equal(chip_route_max_cycles(chip_by_name("gc200")), longest);
}

/* One tile multicasts to all 1472. */
static void
test_multicast_all_tiles(void **state)
{
	(void)state;
	const uint32_t T = 1472, S = 700, N = 16;
	ChipSim *cs = p2p(T, S, 0, T, N, 3, 0, 2);
	expect_ok(cs);
	uint64_t sent = send_cycle(cs, S);
	for (uint32_t r = 0; r < T; r++) {
		if (r == S)
			continue; /* the sender listens to nothing */
		expect_data(cs, r, N, S);
		assert_int_equal(chipsim_tile(cs, r)->x.last_rx_cycle,
		                 sent + N - 1 + latency(S, r));
	}
	chipsim_free(cs);
}

/* Every tile sends to the tile half the chip away and receives from the
 * one half the chip back. */
static const char a2a_prog[] = "	.equ T, %u\n"
                               "	.equ N, %u\n"
                               "_start:\n"
                               "	get $m0, $TILE_ID\n"
                               "	add $m3, $m0, T / 2\n"
                               "	cmpult $m1, $m3, T\n"
                               "	brnz $m1, 1f\n"
                               "	add $m3, $m3, -T\n"
                               "1:	setzi $m2, 0x62000\n"
                               "	put $INCOMING_SINIT, $m2\n"
                               "	put $INCOMING_MUX, $m3\n"
                               "	setzi $m2, N\n"
                               "	sync 3\n"
                               "	put $INCOMING_DCOUNT, $m2\n"
                               "	send N - 1, 0x60000 / 4, 3\n"
                               "	sync 3\n"
                               "	br $lr\n";

static ChipSim *
all_to_all(uint32_t T, uint32_t N, int threads)
{
	char text[2048];
	snprintf(text, sizeof text, a2a_prog, T, N);
	ChipSim *cs = spmd(text, T, threads);
	for (uint32_t i = 0; i < T; i++)
		fill(cs, i, N, i);
	return cs;
}

static void
test_all_to_all(void **state)
{
	(void)state;
	const uint32_t T = 1472, N = 32;
	ChipSim *cs = all_to_all(T, N, 2);
	expect_ok(cs);
	for (uint32_t r = 0; r < T; r++) {
		uint32_t s = (r + T / 2) % T;
		expect_data(cs, r, N, s);
		/* get at 0, add (reading $m0) at D, cmpult at 2D, brnz at
		 * 3D: the tiles that branch come last, setzi at 3D + B, put
		 * (reading it) at 4D + B, put, setzi, the sync at
		 * 4D + B + 2P + 1 = 43, released 126 later; each sends after
		 * its count's CSR write (P) */
		uint64_t sent = 4 * D + B + 2 * P + 1 + RULE(SYNC_INTERNAL) + P;
		assert_int_equal(sent, 175);
		assert_int_equal(send_cycle(cs, s), sent);
		assert_int_equal(chipsim_tile(cs, r)->x.last_rx_cycle,
		                 sent + N - 1 + latency(s, r));
	}
	chipsim_free(cs);
}

/* 64-bit items over the pair's wires: twice the bytes per cycle, to both
 * tiles of a pair (40 and 41: logical tiles are assigned in pairs). */
static void
test_paired_64bit(void **state)
{
	(void)state;
	const uint32_t T = 64, S = 5, DT = 40, N = 32;
	assert_int_equal(chip_pair(chip_default(), DT), DT + 1);
	ChipSim *cs = p2p(T, S, DT, DT + 2, N, 4 | 3, 0, 1);
	expect_ok(cs);
	for (uint32_t r = DT; r < DT + 2; r++) {
		expect_data(cs, r, 2 * N, S);
		Tile *d = chipsim_tile(cs, r);
		assert_int_equal(d->x.last_rx_cycle,
		                 p2p_release() + N - 1 + latency(S, r));
	}
	chipsim_free(cs);
}

/* The host writes a buffer to each tile at host sync 0; each tile adds 1
 * to every word; the host reads it back at host sync 1. */
static const char host_prog[] = "	.equ WORDS, %u\n"
                                "_start:\n"
                                "	sync 5\n"
                                "	setzi $m1, 0x90000\n"
                                "	setzi $m2, WORDS - 1\n"
                                "1:	ld32 $m3, $m1, $mzero, 0\n"
                                "	add $m3, $m3, 1\n"
                                "	st32step $m3, $mzero, $m1+=, 1\n"
                                "	brnzdec $m2, 1b\n"
                                "	sync 5\n"
                                "	br $lr\n";

static void
test_host_round_trip(void **state)
{
	(void)state;
	const uint32_t T = 8, WORDS = 16384; /* 64 KiB per tile */
	char text[1024];
	snprintf(text, sizeof text, host_prog, WORDS);
	ChipSim *cs = spmd(text, T, 2);
	uint32_t *in = xcalloc(WORDS, 4), *out = xcalloc(T * WORDS, 4);
	for (uint32_t t = 0; t < T; t++) {
		for (uint32_t i = 0; i < WORDS; i++)
			in[i] = t * 1000003u + i;
		assert_int_equal(
		    chipsim_host_write(cs, 0, t, 0x90000, in, WORDS * 4), 0);
		assert_int_equal(chipsim_host_read(cs, 1, t, 0x90000,
		                                   out + t * WORDS, WORDS * 4),
		                 0);
	}
	expect_ok(cs);
	for (uint32_t t = 0; t < T; t++)
		for (uint32_t i = 0; i < WORDS; i++)
			assert_int_equal(out[t * WORDS + i],
			                 t * 1000003u + i + 1);
	/* Each host sync: 3 us of host sync (4455 cycles) plus the bytes
	 * at 22 GB/s: 512 KiB -> 524288 / 22e9 s x 1.485e9 Hz = 35390.0 */
	uint64_t xfer = (uint64_t)(524288.0 / 22e9 * 1.485e9 + 0.999999);
	assert_int_equal(chipsim_host_cycles(cs), 2 * (4455 + xfer));
	/* sync 5 at cycle 0; setzi, setzi; the loop from when $m1 is ready
	 * (D); a pass: ld, add, st32step each reading the one before (2D),
	 * brnzdec, the next ld max(1 + B, D) later; the last: brnzdec, then
	 * the sync */
	uint64_t r0 = 0 + 4455 + xfer;
	uint64_t arrive =
	    r0 + D + (WORDS - 1) * (2 * D + MAX(1 + B, D)) + 2 * D + 2;
	assert_int_equal(chipsim_cycles(cs), arrive + 4455 + xfer + 1);
	free(in);
	free(out);
	chipsim_free(cs);
}

static void
expect_error(ChipSim *cs, RunStatus want, const char *needle)
{
	ChipError err;
	RunStatus st = run(cs, &err);
	if (st != want || !strstr(err.msg, needle))
		fail_msg("status %d (want %d): '%s' lacks '%s'", st, want,
		         err.msg, needle);
	chipsim_free(cs);
}

/* The i-th sync (0-based) of a tile's trace. */
static TraceEvent
nth_sync(ChipSim *cs, uint32_t tile, int n)
{
	Tile *t = chipsim_tile(cs, tile);
	for (int i = 0; i < t->ntrace; i++)
		if (t->trace[i].kind == TR_SYNC && n-- == 0)
			return t->trace[i];
	fail_msg("tile %u has too few syncs", tile);
	return t->trace[0];
}

/* The route and sync rules at each timing profile (docs/fidelity.md): the
 * route is the same (no bounds); a sync releases its cost after the last
 * arrival, 90 / 126 / 126 cycles for sync 3 and 126 / 600 / 600 for sync 4
 * at fast / nominal / slow, and a receiver arrives when its last word has
 * landed, 0 / 6 / 6 cycles after the write. */
static void
test_profiles(void **state)
{
	(void)state;
	static const struct {
		TimingBound bound;
		uint32_t internal, external, land;
	} cases[] = {{TIMING_FAST, 90, 126, 0},
	             {TIMING_NOMINAL, 126, 600, 6},
	             {TIMING_SLOW, 126, 600, 6}};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		Timing t;
		timing_profile(&t, cases[k].bound);
		model_chip = chip_timed(chip_default(), &t);
		const uint32_t S = 781, DT = 44, N = 8;
		ChipSim *cs = p2p(1472, S, DT, DT + 1, N, SCTL_DIR2, 0, 2);
		expect_ok(cs);
		expect_data(cs, DT, N, S);
		uint64_t last = chipsim_tile(cs, DT)->x.last_rx_cycle;
		assert_int_equal(last, send_cycle(cs, S) + N - 1 + 164);
		/* the opening sync: every tile arrives, then the cost */
		uint64_t arrive = 0;
		for (uint32_t i = 0; i < 1472; i++) {
			TraceEvent e = nth_sync(cs, i, 0);
			arrive = e.start > arrive ? e.start : arrive;
		}
		assert_int_equal(nth_sync(cs, DT, 0).end,
		                 arrive + cases[k].internal);
		/* the closing one: the receiver's last word lands last */
		assert_int_equal(nth_sync(cs, DT, 1).end,
		                 last + 1 + cases[k].land + cases[k].internal);
		chipsim_free(cs);
		/* an external sync (GS1) */
		cs = spmd("_start:\n	sync 4\n	br $lr\n", 2, 1);
		expect_ok(cs);
		TraceEvent e = nth_sync(cs, 1, 0);
		assert_int_equal(e.end, e.start + cases[k].external);
		chipsim_free(cs);
	}
	model_chip = NULL;
}

/* A send reaches only the tiles in the directions its sctl names: 781 to
 * 44 runs down the spine (displacement -47), so direction 1 alone misses;
 * 0 to 1 (displacement 2) is up it, so direction 2 alone misses. */
static void
test_send_direction(void **state)
{
	(void)state;
	assert_int_equal(chip_route_dir(chip_default(), 781, 44), SCTL_DIR2);
	assert_int_equal(chip_route_dir(chip_default(), 0, 1), SCTL_DIR1);
	/* the fault names the send: p2p_prog's sender branches to its sync
	 * (the 12th word, pc 0x4c02c) and sends after it */
	expect_error(p2p(1472, 781, 44, 45, 4, SCTL_DIR1, 0, 2), RUN_FAULT,
	             "tile 44 is in direction 2: its words never reach it; "
	             "the send: tile 781, supervisor, pc 0x4c030 [");
	expect_error(p2p(16, 0, 1, 2, 4, SCTL_DIR2, 0, 1), RUN_FAULT,
	             "tile 1 is in direction 1: its words never reach it");
	ChipSim *cs = p2p(16, 0, 1, 2, 4, SCTL_DIR1, 0, 1);
	expect_ok(cs);
	expect_data(cs, 1, 4, 0);
	chipsim_free(cs);
}

/*
 * The supervisor sends while five workers compute (docs/bench-gemm.md,
 * "Overlapping the exchange with compute"; docs/hardware.md 18 says what
 * silicon has not confirmed). Tile 0 starts five workers with `run`, then
 * sends two streams of N items to tile 1, then syncs LOCAL and globally;
 * with SENDS 0 it only runs the workers. Tile 1 listens to tile 0 from the
 * start, or (BESIDE) runs five workers too and switches its mux in its
 * slot 5. p2p_prog's layout, so the first sync's release is p2p_release()
 * (194 at nominal, slot 2).
 */
static const char overlap_prog[] = "	.equ N, %u\n"
                                   "_start:\n"
                                   "	get $m0, $TILE_ID\n"
                                   "	setzi $m2, %u\n"
                                   "	setzi $m4, spin\n"
                                   "	cmpeq $m1, $m0, 0\n"
                                   "	brnz $m1, sender\n"
                                   "	cmpult $m1, $m0, 1\n"
                                   "	brnz $m1, idle\n"
                                   "	cmpult $m1, $m0, 2\n"
                                   "	brnz $m1, receiver\n"
                                   "idle:\n"
                                   "	sync 3\n"
                                   "	sync 3\n"
                                   "	br $lr\n"
                                   "sender:\n"
                                   "	sync 3\n"
                                   "%s"
                                   "%s"
                                   "	sync 2\n"
                                   "	sync 3\n"
                                   "	br $lr\n"
                                   "receiver:\n"
                                   "	setzi $m3, 0x62000\n"
                                   "	put $INCOMING_SINIT, $m3\n"
                                   "	setzi $m3, 0\n"
                                   "	put $INCOMING_FORMAT, $m3\n"
                                   "	setzi $m3, %u\n"
                                   "	put $INCOMING_MUX, $m3\n"
                                   "	sync 3\n"
                                   "%s"
                                   "	sync 2\n"
                                   "	sync 3\n"
                                   "	br $lr\n"
                                   "	.align 8\n"
                                   "spin:\n"
                                   "	{ rpt 20, 0 ; fnop }\n"
                                   "	{ nop ; fnop }\n"
                                   "	exitz $mzero\n";

static const char five_runs[] = "	run $m4, $mzero, 0\n"
                                "	run $m4, $mzero, 0\n"
                                "	run $m4, $mzero, 0\n"
                                "	run $m4, $mzero, 0\n"
                                "	run $m4, $mzero, 0\n";

static ChipSim *
overlap(uint32_t n, const char *sends, int beside)
{
	char text[4096], rx[512];
	snprintf(rx, sizeof rx, "%s%s", beside ? five_runs : "",
	         beside ? "	put $INCOMING_DCOUNT, $m2\n"
	                  "	delayxpic 0, 0, 0\n"
	                : "	put $INCOMING_DCOUNT, $m2\n");
	snprintf(text, sizeof text, overlap_prog, n, *sends ? 2 * n : 0,
	         five_runs, sends, beside ? MUX_NONE : 0u, rx);
	ChipSim *cs = spmd(text, 16, 1);
	fill(cs, 0, 2 * n, 0);
	expect_ok(cs);
	return cs;
}

/* The cycles of tile 0's first two sends. */
static void
two_sends(ChipSim *cs, uint64_t *at)
{
	Tile *t = chipsim_tile(cs, 0);
	int n = 0;
	for (int i = 0; i < t->ntrace && n < 2; i++)
		if (t->trace[i].kind == TR_SEND)
			at[n++] = t->trace[i].start;
	assert_int_equal(n, 2);
}

/* Worker 4, run last after a release at rel (slot 2), exits last: the
 * runs issue at rel .. rel + 3 (slots 2-5) and rel + 8 (slot 4: slots 0-3
 * are the first four workers' once launched); worker w starts at the
 * first turn of slot w R cycles after its run and issues 22 times (rpt,
 * 20 bundles, exitz). */
static uint64_t
spin_exit(uint64_t rel)
{
	uint64_t first4 = rel + 8 + RULE(RUNALL);
	while (first4 % 6 != 4)
		first4++;
	return first4 + 6 * 21;
}

static void
test_send_beside_five_workers(void **state)
{
	(void)state;
	const uint64_t N = 50, rel = p2p_release();
	assert_int_equal(rel % 6, 2);
	uint64_t last_exit = spin_exit(rel);
	ChipSim *quiet = overlap(N, "", 0),
	        *cs = overlap(N,
	                      "	send N - 1, 0x60000 / 4, 1\n"
	                      "	send N - 1, 0x60000 / 4 + N, 1\n",
	                      0);
	assert_int_equal(chipsim_tile(quiet, 0)->last_exit, last_exit);
	/* the sends take no worker's turn */
	assert_int_equal(chipsim_tile(cs, 0)->last_exit, last_exit);
	expect_data(cs, 1, 2 * (uint32_t)N, 0);
	/* The first send issues in the next free slot, 5 (rel + 9); its
	 * items leave one a cycle; the second waits for the first's N
	 * events and then for slot 5 again (N = 50: 4 cycles). */
	uint64_t at[2];
	two_sends(cs, at);
	assert_int_equal(at[0], rel + 9);
	assert_int_equal(at[0] % 6, 5);
	uint64_t second = at[0] + N;
	while (second % 6 != 5)
		second++;
	assert_int_equal(second - (at[0] + N), 4);
	assert_int_equal(at[1], second);
	assert_int_equal(chipsim_tile(cs, 1)->x.last_rx_cycle,
	                 second + N - 1 + latency(0, 1));
	chipsim_free(quiet);
	chipsim_free(cs);
}

/*
 * Both ends of an exchange beside five workers, as a scheduled phase
 * would run (docs/bench-gemm.md, "The third step"): every supervisor
 * instruction after the runs issues in slot 5, so anything that holds the
 * supervisor a multiple of 6 cycles ends where the next may issue at
 * once. The sender waits with `delay 35` (36 events) and sends 2 x 60
 * items, back to back with no gap; the receiver, its mux off until then,
 * writes its count (a CSR write: 6 cycles) and switches its mux to tile 0
 * with a delayxpic in slot 5, the mux lead (28 cycles from tile 0 to 1)
 * before the first send.
 */
static void
test_exchange_beside_five_workers(void **state)
{
	(void)state;
	const uint64_t N = 60, rel = p2p_release();
	uint64_t last_exit = spin_exit(rel);
	ChipSim *cs = overlap(N,
	                      "	delay 35\n"
	                      "	send N - 1, 0x60000 / 4, 1\n"
	                      "	send N - 1, 0x60000 / 4 + N, 1\n",
	                      1);
	expect_data(cs, 1, 2 * (uint32_t)N, 0);
	uint64_t at[2];
	two_sends(cs, at);
	/* the delay from rel + 9 (slot 5) to rel + 44, the sends in slot 5 */
	assert_int_equal(at[0], rel + 45);
	assert_int_equal(at[1], at[0] + N);
	/* the mux (delayxpic at rel + 15) selects tile 0 before the first
	 * word, and the 120 words arrive one a cycle */
	assert_true((int64_t)(rel + 15) <=
	            (int64_t)at[0] + chip_mux_lead(chip_default(), 0, 1));
	assert_int_equal(chipsim_tile(cs, 1)->x.last_rx_cycle,
	                 at[1] + N - 1 + latency(0, 1));
	/* neither tile's workers lost a turn */
	assert_int_equal(chipsim_tile(cs, 0)->last_exit, last_exit);
	assert_int_equal(chipsim_tile(cs, 1)->last_exit, last_exit);
	chipsim_free(cs);
}

static void
test_mistimed(void **state)
{
	(void)state;
	/* more items expected than sent: the sync waits forever */
	expect_error(p2p(16, 2, 9, 10, 8, 3, 2, 1), RUN_DEADLOCK,
	             "tile 9 waits in sync 3");
	/* fewer expected than sent */
	expect_error(p2p(16, 2, 9, 10, 8, 3, -1, 1), RUN_FAULT,
	             "expects none ($INCOMING_DCOUNT = 0)");
	/* a 64-bit item at a 32-bit receiver: send 64-bit, FMT forced 0 */
	{
		char text[4096];
		snprintf(text, sizeof text, p2p_prog, 2u, 9u, 10u, 4u, 7u, 0u,
		         0);
		ChipSim *cs = spmd(text, 16, 1);
		fill(cs, 2, 8, 2);
		expect_error(cs, RUN_FAULT, "64-bit item from tile 2");
	}
	/* sans has no public semantics: refused, not guessed */
	expect_error(spmd("_start:\n	sans 1\n	br $lr\n", 2, 1),
	             RUN_FAULT, "sans is not modelled");
	/* 64-bit items to one tile of a pair (41 and 42 are in different
	 * pairs) */
	expect_error(p2p(64, 5, 41, 43, 8, 4 | 3, 0, 1), RUN_FAULT,
	             "whole pairs must receive them");
	/* the partner of a 64-bit sender sends at the same time */

	{
		char text[4096];
		snprintf(text, sizeof text,
		         "_start:\n"
		         "	get $m0, $TILE_ID\n"
		         "	sync 3\n"
		         "	send 3, 0x60000 / 4, 1\n"
		         "	sync 3\n"
		         "	br $lr\n");
		ChipSim *cs = spmd(text, 2, 1);
		/* make tile 0's send 64-bit by patching sctl: reassemble */
		chipsim_free(cs);
		snprintf(text, sizeof text,
		         "_start:\n"
		         "	get $m0, $TILE_ID\n"
		         "	brnz $m0, 1f\n"
		         "	sync 3\n"
		         "	send 3, 0x60000 / 4, 5\n"
		         "	bri 2f\n"
		         "1:	sync 3\n"
		         "	send 3, 0x60000 / 4, 1\n"
		         "2:	sync 3\n"
		         "	br $lr\n");
		expect_error(spmd(text, 2, 1), RUN_FAULT,
		             "on the wires it shares with tile 1");
	}
}

static const char late_prog[] = "	.equ BASE, %u\n"
                                "	.equ SIZE, %u\n"
                                "	.equ LATE, %u\n"
                                "_start:\n"
                                "	get $m0, $TILE_ID\n"
                                "	brnz $m0, receiver\n"
                                "	sync 3\n"
                                "	send 7, 0x60000 / 4, 1\n"
                                "	sync 3\n"
                                "	br $lr\n"
                                "receiver:\n"
                                "	setzi $m2, 0x62000\n"
                                "	put $INCOMING_SINIT, $m2\n"
                                "	setzi $m2, BASE\n"
                                "	put $INCOMING_BASE, $m2\n"
                                "	setzi $m2, SIZE\n"
                                "	put $INCOMING_DELTA, $m2\n"
                                "	setzi $m2, 8\n"
                                "	sync 3\n"
                                "	put $INCOMING_DCOUNT, $m2\n"
                                "	delay LATE\n"
                                "	put $INCOMING_MUX, $mzero\n"
                                "	sync 3\n"
                                "	br $lr\n";

/* One receiver, then two, whose muxes switch after tile 0's first items
 * went by (LATE 12: some of the 8, not all, are lost): both receivers get
 * the same last items, so the first item reached no tile with two as with
 * one. The first receiver's items are marked got all at once
 * (xch_commit_senders); unmarked, the second receiver's would count them
 * again, 8 in all, and the loss would go unreported (a deadlock instead). */
static void
test_receive_late_twice(void **state)
{
	(void)state;
	char text[2048];
	snprintf(text, sizeof text, late_prog, 0x62000u, 0u, 12u);
	for (uint32_t tiles = 2; tiles <= 3; tiles++)
		expect_error(spmd(text, tiles, 1), RUN_FAULT,
		             "; item 0 (cycle 175, from 0x60000) reached no "
		             "tile");
	/* not all of them: on time (LATE 0) nothing is lost */
	snprintf(text, sizeof text, late_prog, 0x62000u, 0u, 0u);
	ChipSim *cs = spmd(text, 3, 1);
	ChipError err;
	assert_int_equal(run(cs, &err), RUN_DONE);
	chipsim_free(cs);
}

static void
test_receive_errors(void **state)
{
	(void)state;
	char text[2048];
	/* the mux switches after the first items went by */
	snprintf(text, sizeof text, late_prog, 0x62000u, 0u, 40u);
	expect_error(spmd(text, 2, 1), RUN_FAULT,
	             "reached no tile: no receiver's mux selected tile 0");
	/* a 16-byte receive window for 8 words */
	snprintf(text, sizeof text, late_prog, 0x62000u, 16u, 0u);
	expect_error(spmd(text, 2, 1), RUN_FAULT,
	             "outside its receive window 0x62000..0x62010");
	/* two senders into the same words in one phase */
	snprintf(text, sizeof text,
	         "_start:\n"
	         "	get $m0, $TILE_ID\n"
	         "	cmpeq $m1, $m0, 2\n"
	         "	brnz $m1, receiver\n"
	         "	sync 3\n"
	         "	brz $m0, 1f\n"
	         "	delay 200\n"
	         "1:	send 1, 0x60000 / 4, 1\n"
	         "	sync 3\n"
	         "	br $lr\n"
	         "receiver:\n"
	         "	setzi $m2, 0x62000\n"
	         "	put $INCOMING_SINIT, $m2\n"
	         "	put $INCOMING_MUX, $mzero\n"
	         "	setzi $m3, 4\n"
	         "	setzi $m4, 1\n"
	         "	sync 3\n"
	         "	put $INCOMING_DCOUNT, $m3\n"
	         "	delay 100\n"
	         "	put $INCOMING_SINIT, $m2\n"
	         "	put $INCOMING_MUX, $m4\n"
	         "	sync 3\n"
	         "	br $lr\n");
	expect_error(spmd(text, 3, 1), RUN_FAULT,
	             "word 0x62000 of tile 2 written twice in one phase");
	/* tiles disagree on the zone */
	snprintf(text, sizeof text,
	         "_start:\n"
	         "	get $m0, $TILE_ID\n"
	         "	brz $m0, 1f\n"
	         "	sync 3\n"
	         "	br $lr\n"
	         "1:	sync 4\n"
	         "	br $lr\n");
	expect_error(
	    spmd(text, 2, 1), RUN_DEADLOCK,
	    /* the brz reads $m0 sup-dep (6) cycles after the get: the
	     * sync at 7 */
	    "tile 1 waits in sync 3 since cycle 7 (supervisor, pc "
	    "0x4c008 [0x41800003: sync 3]) but tile 0 waits in sync 4");
}

/* The timed forms: the sender opens a stream with send and continues it
 * with sendoff (skipping 4 words) and sendpic; tile 2 points its own
 * receive side with delaypic/delayxpic and its pair partner's (tile 3)
 * with a partner-selected delayxpic; tile 4 uses a receive-only sendpicp.
 * All three receive the same 12 words. */
static const char timed_prog[] =
    "_start:\n"
    "	get $m0, $TILE_ID\n"
    "	setzi $m2, 12\n"
    "	sync 3\n"
    "	brz $m0, sender\n"
    "	cmpeq $m1, $m0, 1\n" /* tile 1 takes no part */
    "	brnz $m1, done\n"
    "	put $INCOMING_DCOUNT, $m2\n"
    "	cmpeq $m1, $m0, 2\n"
    "	brnz $m1, two\n"
    "	cmpeq $m1, $m0, 4\n"
    "	brnz $m1, four\n"
    "	setzi $m3, 0x62000\n" /* tile 3: its pointer by put */
    "	put $INCOMING_SINIT, $m3\n"
    "	bri done\n"
    "two:\n"
    "	delaypic 0, 0, 0x62000 / 4\n"
    "	delayxpic 0, 0, 0\n"
    "	delayxpic 0, 1, 0\n"
    "	bri done\n"
    "	.align 8\n"
    "four:\n"
    "	sendpicp 0, 0, 0, 0, 0, 0x62000 / 4\n"
    "	bri done\n"
    "sender:\n"
    "	delay 100\n" /* after the receivers' XPICs: lead >= -78 */
    "	send 3, 0x60000 / 4, 1\n"
    "	sendoff 3, 4, 1\n"
    "	sendpic 3, 0, 0x7ff\n"
    "done:\n"
    "	sync 3\n"
    "	br $lr\n";

static void
test_timed_controls(void **state)
{
	(void)state;
	ChipSim *cs = spmd(timed_prog, 5, 1);
	uint32_t src[20];
	for (uint32_t i = 0; i < 20; i++)
		src[i] = 0x1000 + i;
	tile_write(chipsim_tile(cs, 0), SRC_BUF, src, sizeof src);
	expect_ok(cs);
	/* words 0..3, then 8..11 (4 skipped), then 12..15 */
	static const uint32_t want[12] = {0,  1,  2,  3,  8,  9,
	                                  10, 11, 12, 13, 14, 15};
	uint64_t sent = send_cycle(cs, 0);
	for (uint32_t r = 2; r <= 4; r++) {
		uint32_t got[12];
		tile_read(chipsim_tile(cs, r), DST_BUF, got, sizeof got);
		for (int i = 0; i < 12; i++)
			if (got[i] != 0x1000 + want[i])
				fail_msg("tile %u word %d: 0x%x", r, i, got[i]);
		assert_int_equal(chipsim_tile(cs, r)->x.last_rx_cycle,
		                 sent + 11 + latency(0, r));
	}
	chipsim_free(cs);
}

/* Tiles 0..T-1 of two runs: the same cycles, trace, memory and
 * exchange state. */
static void
expect_same_tiles(ChipSim *cs, ChipSim *ref, uint32_t T)
{
	assert_int_equal(chipsim_cycles(cs), chipsim_cycles(ref));
	for (uint32_t i = 0; i < T; i++) {
		Tile *a = chipsim_tile(cs, i), *b = chipsim_tile(ref, i);
		assert_int_equal(a->cycle, b->cycle);
		assert_int_equal(a->bundles, b->bundles);
		assert_int_equal(a->wait.zone, b->wait.zone);
		assert_int_equal(a->ntrace, b->ntrace);
		for (int e = 0; e < a->ntrace; e++) {
			assert_int_equal(a->trace[e].start, b->trace[e].start);
			assert_int_equal(a->trace[e].end, b->trace[e].end);
			assert_int_equal(a->trace[e].kind, b->trace[e].kind);
		}
		size_t n = a->chip->mem_end - a->chip->mem_base;
		if (!mem_same(a->mem, b->mem, n)) /* the first difference */
			assert_memory_equal(a->mem, b->mem, n);
		assert_int_equal(a->x.rx_until, b->x.rx_until);
		assert_int_equal(a->x.ptr, b->x.ptr);
		assert_int_equal(a->x.dcount, b->x.dcount);
		assert_int_equal(a->x.last_rx_cycle, b->x.last_rx_cycle);
		assert_int_equal(a->x.ctl_done, b->x.ctl_done);
		assert_int_equal(a->x.nwritten, b->x.nwritten);
		for (int k = 0; k < a->x.npk; k++)
			assert_int_equal(a->x.pk[k].ngot, b->x.pk[k].ngot);
	}
}

/* The same program gives the same memory, cycles and trace with 1, 2 and
 * 16 host threads. */
static void
test_thread_determinism(void **state)
{
	(void)state;
	const uint32_t T = 256, N = 24;
	ChipSim *ref = NULL;
	const int threads[] = {1, 2, 16};
	for (int k = 0; k < 3; k++) {
		ChipSim *cs = all_to_all(T, N, threads[k]);
		expect_ok(cs);
		if (!ref) {
			ref = cs;
			continue;
		}
		expect_same_tiles(cs, ref, T);
		chipsim_free(cs);
	}
	chipsim_free(ref);
}

/* A watch on the fourth of 8 words a tile receives stops it, whether the
 * walk delivers them one by one or as one run (the fast paths). */
static void
test_receive_watch(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		SimPath saved = sim_path;
		sim_path = k ? SIM_FAST : SIM_PLAIN;
		ChipSim *cs = p2p(16, 2, 9, 10, 8, 3, 0, 1);
		Tile *t = chipsim_tile(cs, 9);
		assert_int_equal(sim_watch(t, DST_BUF + 12, 4), 0);
		ChipError err;
		run(cs, &err);
		sim_path = saved;
		assert_int_equal(t->obs->hit, 1);
		assert_int_equal(t->obs->hit_src, 2);
		assert_int_equal(t->fault.type, FAULT_DBRK);
		assert_int_equal(t->fault.addr, DST_BUF + 12);
		chipsim_free(cs);
	}
}

/* A watch on word w of the 8 a tile receives (one run, xch_commit's
 * sim_observe_receive_run): the cycle it stops at, or 0 if it did not. */
static uint64_t
receive_watch_at(int w, uint32_t len)
{
	ChipSim *cs = p2p(16, 2, 9, 10, 8, 3, 0, 1);
	Tile *t = chipsim_tile(cs, 9);
	assert_int_equal(sim_watch(t, DST_BUF + 4 * (uint32_t)w, len), 0);
	ChipError err;
	run(cs, &err);
	uint64_t at = 0;
	if (t->obs->hit) {
		assert_int_equal(t->fault.type, FAULT_DBRK);
		assert_int_equal(t->fault.addr, DST_BUF + 4 * (uint32_t)w);
		at = t->fault.cycle;
	} else
		assert_int_not_equal(t->fault.type, FAULT_DBRK);
	chipsim_free(cs);
	return at;
}

/* The words of a run arrive one a cycle, so a watch on word w stops the
 * tile w cycles after one on word 0; a watch on the bytes just before or
 * just after the run stops nothing (the run's range test). */
static void
test_receive_watch_items(void **state)
{
	(void)state;
	uint64_t c0 = receive_watch_at(0, 4);
	assert_true(c0 > 0);
	assert_int_equal(receive_watch_at(1, 4), c0 + 1);
	assert_int_equal(receive_watch_at(5, 8), c0 + 5);
	assert_int_equal(receive_watch_at(7, 4), c0 + 7);
	assert_int_equal(receive_watch_at(8, 4), 0);
	assert_int_equal(receive_watch_at(-1, 4), 0);
}

/* Tile 0 sends 8 words to every other tile; tiles BAD1 and BAD2 have a
 * 16-byte receive window, so their fifth word is an error. */
static const char window_prog[] = "	.equ BAD1, %u\n"
                                  "	.equ BAD2, %u\n"
                                  "_start:\n"
                                  "	get $m0, $TILE_ID\n"
                                  "	brnz $m0, receiver\n"
                                  "	sync 3\n"
                                  "	send 7, 0x60000 / 4, 1\n"
                                  "	sync 3\n"
                                  "	br $lr\n"
                                  "receiver:\n"
                                  "	setzi $m2, 0x62000\n"
                                  "	put $INCOMING_SINIT, $m2\n"
                                  "	put $INCOMING_BASE, $m2\n"
                                  "	setzi $m3, 0\n"
                                  "	cmpeq $m1, $m0, BAD1\n"
                                  "	brz $m1, 1f\n"
                                  "	setzi $m3, 16\n"
                                  "1:	cmpeq $m1, $m0, BAD2\n"
                                  "	brz $m1, 2f\n"
                                  "	setzi $m3, 16\n"
                                  "2:	put $INCOMING_DELTA, $m3\n"
                                  "	setzi $m2, 8\n"
                                  "	sync 3\n"
                                  "	put $INCOMING_DCOUNT, $m2\n"
                                  "	put $INCOMING_MUX, $mzero\n"
                                  "	sync 3\n"
                                  "	br $lr\n";

/* An exchange error leaves the chip as the walk of one receiver after
 * another in tile order leaves it, however many threads walk them at
 * once: the tiles before the first failing one (9) have all 8 words, it
 * has the 4 before its error, and the tiles after it, the other failing
 * one (17) too, have nothing written and nothing marked written. */
static void
test_error_state_threads(void **state)
{
	(void)state;
	enum { T = 24, BAD1 = 9, BAD2 = 17 };
	char text[2048];
	snprintf(text, sizeof text, window_prog, (unsigned)BAD1,
	         (unsigned)BAD2);
	ChipSim *ref = NULL;
	const int threads[] = {1, 2, 3};
	for (int k = 0; k < 3; k++) {
		ChipSim *cs = spmd(text, T, threads[k]);
		fill(cs, 0, 8, 0);
		ChipError err;
		assert_int_equal(run(cs, &err), RUN_FAULT);
		assert_int_equal(err.tile, BAD1);
		if (!strstr(err.msg, "tile 9 would write at 0x62010 (item "
		                     "from tile 0"))
			fail_msg("%s", err.msg);
		for (uint32_t i = 1; i < T; i++) {
			const XState *x = &chipsim_tile(cs, i)->x;
			uint32_t words = i < BAD1 ? 8 : i == BAD1 ? 4 : 0;
			uint32_t v[8];
			tile_read(chipsim_tile(cs, i), DST_BUF, v, sizeof v);
			for (uint32_t w = 0; w < 8; w++)
				if (v[w] != (w < words ? w * 0x9e3779b9u : 0))
					fail_msg("%d threads: tile %u word %u: "
					         "0x%x",
					         threads[k], i, w, v[w]);
			/* the words marked written in this phase: the tiles
			 * before the failing one were released into a new
			 * phase, the failing one keeps its 4, and those after
			 * it have none */
			uint64_t bits = x->written_bits
			                    ? x->written_bits[DST_BUF / 4 / 64]
			                    : 0;
			assert_int_equal(bits, i == BAD1 ? 0xf : 0);
			assert_int_equal(x->nwritten, i == BAD1);
			/* the receive state: stored only by a walk that ended
			 * well */
			assert_int_equal(x->ptr, DST_BUF + (i < BAD1 ? 32 : 0));
			assert_int_equal(x->dcount, i < BAD1 ? 0 : 8);
		}
		if (!ref) {
			ref = cs;
			continue;
		}
		expect_same_tiles(cs, ref, T);
		chipsim_free(cs);
	}
	chipsim_free(ref);
}

/* A receiver that waits in sync RECV (0) for its items, twice, from two
 * senders (tiles 0 and 1) whose sends are DELAY apart; the second send has
 * N2 items (1: delivered alone, not as a run) and its count is EXTRA more
 * (a deadlock) or fewer (an item expects none). EARLY is code before the
 * first wait: a late mux switch there takes effect after the wait began,
 * past the cycle its release walks to. */
static const char recv_prog[] = "	.equ DELAY, %u\n"
                                "	.equ N2, %u\n"
                                "	.equ EXTRA, %d\n"
                                "_start:\n"
                                "	get $m0, $TILE_ID\n"
                                "	cmpult $m1, $m0, 2\n"
                                "	brz $m1, receiver\n"
                                "	sync 3\n"
                                "	brnz $m0, second\n"
                                "	send 7, 0x60000 / 4, 3\n"
                                "	sync 3\n"
                                "	br $lr\n"
                                "second:\n"
                                "	delay DELAY\n"
                                "	send N2 - 1, 0x60000 / 4, 3\n"
                                "	sync 3\n"
                                "	br $lr\n"
                                "receiver:\n"
                                "	setzi $m2, 0x62000\n"
                                "	put $INCOMING_SINIT, $m2\n"
                                "	setzi $m4, 8\n"
                                "	put $INCOMING_MUX, $mzero\n"
                                "	sync 3\n"
                                "	put $INCOMING_DCOUNT, $m4\n"
                                "%s"
                                "	sync 0\n"
                                "	setzi $m2, 1\n"
                                "	put $INCOMING_MUX, $m2\n"
                                "	setzi $m2, N2 + EXTRA\n"
                                "	put $INCOMING_DCOUNT, $m2\n"
                                "	sync 0\n"
                                "	sync 3\n"
                                "	br $lr\n";

/* Both runs of a program, on the plain path (the barriers' dry walks, then
 * the real ones) and the fast one (xch_walk_ready's walks, gone on from by
 * resolve_walks): the same status, error and tiles. */
static void
expect_same_runs(ChipSim *plain, ChipSim *fast, uint32_t T)
{
	ChipError ep, ef;
	SimPath saved = sim_path;
	sim_path = SIM_PLAIN;
	RunStatus sp = run(plain, &ep);
	sim_path = SIM_FAST;
	RunStatus sf = run(fast, &ef);
	sim_path = saved;
	assert_int_equal(sp, sf);
	assert_string_equal(ep.msg, ef.msg);
	assert_int_equal(ep.tile, ef.tile);
	assert_int_equal(ep.cycle, ef.cycle);
	assert_int_equal(ep.pc, ef.pc);
	expect_same_tiles(fast, plain, T);
	chipsim_free(plain);
	chipsim_free(fast);
}

/* The barriers' walks that deliver while they look for the ready cycle
 * (chip.c, ready_cycles) against the dry walks: syncs in a global zone and
 * in RECV, receivers whose mux switches before, during and after the
 * items, short and long counts, windows that fault, on 1 and 2 threads. */
static void
test_ready_walks(void **state)
{
	(void)state;
	char text[4096];
	for (int threads = 1; threads <= 2; threads++) {
		for (uint32_t late = 0; late <= 48; late += 4)
			for (uint32_t size = 0; size <= 32; size += 16) {
				snprintf(text, sizeof text, late_prog, 0x62000u,
				         size, late);
				ChipSim *a = spmd(text, 4, threads),
				        *b = spmd(text, 4, threads);
				fill(a, 0, 8, 0);
				fill(b, 0, 8, 0);
				expect_same_runs(a, b, 4);
			}
		for (int k = 0; k < 10; k++)
			for (uint32_t delay = 0; delay <= 600; delay += 60) {
				/* N2 6 with EXTRA -2..2, N2 1 with 0..2; then
				 * the mux switched early */
				uint32_t n2 = k < 5 || k > 7 ? 6 : 1;
				int extra = k < 5 ? k - 2 : k < 8 ? k - 5 : 0;
				const char *early =
				    k < 8 ? ""
				    : k == 8
				        ? "	delay 300\n"
				          "	setzi $m3, 1\n"
				          "	put $INCOMING_MUX, $m3\n"
				        : "	delay 300\n"
				          "	put $INCOMING_MUX, $mzero\n";
				snprintf(text, sizeof text, recv_prog, delay,
				         n2, extra, early);
				ChipSim *a = spmd(text, 6, threads),
				        *b = spmd(text, 6, threads);
				for (uint32_t s = 0; s < 2; s++) {
					fill(a, s, 8, s);
					fill(b, s, 8, s);
				}
				expect_same_runs(a, b, 6);
			}
		for (int extra = -1; extra <= 2; extra++)
			expect_same_runs(
			    p2p(16, 2, 4, 12, 8, 3, extra, threads),
			    p2p(16, 2, 4, 12, 8, 3, extra, threads), 16);
		snprintf(text, sizeof text, window_prog, 9u, 17u);
		ChipSim *a = spmd(text, 24, threads),
		        *b = spmd(text, 24, threads);
		fill(a, 0, 8, 0);
		fill(b, 0, 8, 0);
		expect_same_runs(a, b, 24);
		expect_same_runs(all_to_all(128, 16, threads),
		                 all_to_all(128, 16, threads), 128);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_point_to_point),
	    cmocka_unit_test(test_longest_route),
	    cmocka_unit_test(test_send_direction),
	    cmocka_unit_test(test_send_beside_five_workers),
	    cmocka_unit_test(test_exchange_beside_five_workers),
	    cmocka_unit_test(test_profiles),
	    cmocka_unit_test(test_multicast_all_tiles),
	    cmocka_unit_test(test_all_to_all),
	    cmocka_unit_test(test_paired_64bit),
	    cmocka_unit_test(test_host_round_trip),
	    cmocka_unit_test(test_mistimed),
	    cmocka_unit_test(test_receive_errors),
	    cmocka_unit_test(test_timed_controls),
	    cmocka_unit_test(test_thread_determinism),
	    cmocka_unit_test(test_error_state_threads),
	    cmocka_unit_test(test_receive_watch),
	    cmocka_unit_test(test_receive_watch_items),
	    cmocka_unit_test(test_receive_late_twice),
	    cmocka_unit_test(test_ready_walks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

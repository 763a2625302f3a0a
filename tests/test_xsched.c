/*
 * test_xsched.c - the exchange scheduler and the code it turns into, run on
 * the chip model: hand-built exchange phases (a multicast, a tile that
 * receives from several senders, a tile that sends to itself while it
 * receives, long transfers split into 64-word sends, a 64-bit multicast to
 * whole pairs while the sender's partner waits for its wires, blocks
 * turned into rows: every sender starting at the same receiver, a 64-bit
 * multicast whose own mux control would fall on its send, runs gathered
 * into one row without pointer controls, windows back to back with the
 * mux switched from source to source, a receiver fed first from its
 * shortest mux lead), scheduled,
 * a step's schedule kept for a compile and given again,
 * coded, placed by hand, and checked word for word; and the schedule's own
 * invariants checked independently of the emulator.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "../src/codegen/codegen.h"
#include "../src/kernels/gemm.h"
#include "../src/lower/program.h"

enum { PROG = 0x4c000, DATA = 0x60000 };

enum { FIXTURE_TILES = 128 };

typedef struct {
	Lowered *l;
	int32_t src[FIXTURE_TILES], dst[FIXTURE_TILES], save[FIXTURE_TILES];
} Fixture;

/* A buffer per tile for sending (1 KiB of pattern) and one for receiving
 * (4 KiB), placed by hand at fixed addresses. */
static void
fixture(Fixture *f, uint32_t tiles)
{
	assert_true(tiles <= FIXTURE_TILES);
	f->l = lower_new(chip_default(), tiles);
	for (uint32_t t = 0; t < tiles; t++) {
		f->src[t] = lower_buffer(f->l, t, 1024, 8, REGION_ANY, 0,
		                         INT32_MAX, "send");
		f->dst[t] = lower_buffer(f->l, t, 4096, 8, REGION_ANY, 0,
		                         INT32_MAX, "receive");
		f->save[t] = lower_buffer(f->l, t, 8, 8, REGION_ANY, 0,
		                          INT32_MAX, "return address");
		f->l->buf[f->src[t]].addr = DATA;
		f->l->buf[f->dst[t]].addr = DATA + 0x2000;
		f->l->buf[f->save[t]].addr = DATA + 0x4000;
	}
}

static void
xfer(Step *s, uint32_t src, uint32_t words, uint32_t src_off,
     const uint32_t *dst, const uint32_t *dst_off, uint32_t ndst,
     const Fixture *f)
{
	Transfer *x =
	    lower_transfer(s, src, (BufRef){f->src[src], src_off}, words, ndst);
	for (uint32_t k = 0; k < ndst; k++) {
		x->dst_tile[k] = dst[k];
		x->dst[k] = (BufRef){f->dst[dst[k]], dst_off[k]};
	}
}

static uint32_t
pattern(uint32_t tile, uint32_t word)
{
	return tile * 0x01000193u ^ (word * 0x9e3779b9u + 7);
}

/* Schedule, code, load, run; return the chip for checks. */
static ChipSim *
run_fixture(Fixture *f)
{
	Diag d;
	if (xsched_run(f->l, &d))
		fail_msg("%s", d.msg);
	lower_index(f->l);
	ChipConfig cfg = {
	    .chip = chip_default(), .tiles = f->l->tiles, .trace = 1};
	ChipSim *cs = chipsim_new(&cfg);
	for (uint32_t t = 0; t < f->l->tiles; t++) {
		TileCode tc;
		if (codegen_tile(f->l, NULL, t, PROG, f->save[t], &tc, &d))
			fail_msg("%s", d.msg);
		assert_int_equal(tc.code_len, codegen_size(f->l, t, NULL));
		Tile *tile = chipsim_tile(cs, t);
		tile_write(tile, tc.code_addr, tc.code, tc.code_len);
		uint32_t words[256];
		for (uint32_t i = 0; i < 256; i++)
			words[i] = pattern(t, i);
		tile_write(tile, DATA, words, sizeof words);
		tile_start(tile, tc.entry);
		codegen_free(&tc);
	}
	ChipError err;
	RunStatus st = chipsim_run(cs, 10000000, &err);
	if (st != RUN_DONE)
		fail_msg("run: %s", err.msg);
	return cs;
}

static void
expect_words(ChipSim *cs, uint32_t tile, uint32_t off, uint32_t src,
             uint32_t src_off, uint32_t words)
{
	for (uint32_t i = 0; i < words; i++) {
		uint32_t v;
		tile_read(chipsim_tile(cs, tile), DATA + 0x2000 + off + 4 * i,
		          &v, 4);
		if (v != pattern(src, src_off / 4 + i))
			fail_msg("tile %u word %u: 0x%08x", tile, i, v);
	}
}

/* Do a's and b's sends overlap on some tile's wires? A 64-bit send also
 * uses its sender's pair partner's wires. */
static int
wires_overlap(const Chip *c, const Transfer *a, const Transfer *b)
{
	int shared = a->src_tile == b->src_tile ||
	             (a->wide && chip_pair(c, a->src_tile) == b->src_tile) ||
	             (b->wide && chip_pair(c, b->src_tile) == a->src_tile);
	return shared && a->start < b->start + xfer_items(b) &&
	       b->start < a->start + xfer_items(a);
}

/* No sender sends twice at once, no receiver gets two items in a cycle,
 * controls precede arrivals: checked on the schedule itself. */
static void
check_schedule(const Lowered *l)
{
	for (int si = 0; si < l->nstep; si++) {
		const Step *s = &l->step[si];
		for (int i = 0; i < s->nxfer; i++)
			for (int j = i + 1; j < s->nxfer; j++) {
				const Transfer *a = &s->xfer[i],
				               *b = &s->xfer[j];
				assert_false(wires_overlap(l->chip, a, b));
				for (uint32_t p = 0; p < a->ndst; p++)
					for (uint32_t q = 0; q < b->ndst; q++) {
						if (a->dst_tile[p] !=
						    b->dst_tile[q])
							continue;
						uint32_t r = a->dst_tile[p];
						uint64_t a0 =
						    a->start +
						    chip_route_cycles(
						        l->chip, a->src_tile,
						        r);
						uint64_t b0 =
						    b->start +
						    chip_route_cycles(
						        l->chip, b->src_tile,
						        r);
						assert_true(
						    a0 + xfer_items(a) <= b0 ||
						    b0 + xfer_items(b) <= a0);
					}
			}
		for (int i = 0; i < s->nxfer; i++) {
			const Transfer *x = &s->xfer[i];
			for (uint32_t k = 0; k < x->ndst; k++) {
				/* docs/chip.md: the mux control goes the
				 * mux lead after the send, M before the
				 * write; the pointer acts by the write */
				uint32_t d = x->dst_tile[k];
				uint64_t first =
				    x->start + model_latency(x->src_tile, d);
				int64_t lead = model_lead(x->src_tile, d);
				assert_int_equal((int64_t)x->mux_at[k] -
				                     (int64_t)x->start,
				                 lead);
				assert_int_equal(x->mux_at[k] + model_write(d),
				                 first);
				assert_int_equal(x->off_at[k] + model_write(d),
				                 first + xfer_items(x));
				assert_true(x->ptr_at[k] <= first);
				assert_true(x->mux_at[k] >= XS_PREAMBLE);
			}
		}
	}
}

static void
test_multicast_and_gather(void **state)
{
	(void)state;
	Fixture f;
	fixture(&f, 8);
	Step *s = lower_step(f.l, STEP_EXCHANGE, "phase 1");
	/* tile 0 multicasts 100 words to every tile, itself included */
	uint32_t all[8], off0[8] = {0};
	for (uint32_t t = 0; t < 8; t++)
		all[t] = t;
	xfer(s, 0, 100, 0, all, off0, 8, &f);
	/* tiles 3 and 5 send 40 and 70 words to tiles 1 and 2 after it */
	uint32_t d12[2] = {1, 2}, offa[2] = {400, 400}, offb[2] = {560, 560};
	xfer(s, 3, 40, 64, d12, offa, 2, &f);
	xfer(s, 5, 70, 0, d12, offb, 2, &f);
	/* a second phase: tile 7 sends 200 words (four sends) to tile 6 */
	Step *s2 = lower_step(f.l, STEP_EXCHANGE, "phase 2");
	uint32_t d6[1] = {6}, off6[1] = {1024};
	xfer(s2, 7, 200, 0, d6, off6, 1, &f);
	/* meanwhile tile 4 sends 64 words to the pair 2-3 (64-bit), and its
	 * partner, tile 5, 30 words to tile 0: not while 4 uses its wires */
	uint32_t d23[2] = {2, 3}, off23[2] = {1024, 1024};
	uint32_t d0[1] = {0}, off0b[1] = {1024};
	xfer(s2, 4, 64, 0, d23, off23, 2, &f);
	xfer(s2, 5, 30, 0, d0, off0b, 1, &f);
	ChipSim *cs = run_fixture(&f);
	check_schedule(f.l);
	/* whole pairs (0-1, ..., 6-7) get 64-bit items; tiles 1 and 2, of
	 * different pairs, and single tiles get 32-bit ones */
	const Transfer *x = s->xfer, *y = s2->xfer;
	assert_true(x[0].wide && !x[1].wide && !x[2].wide);
	assert_true(!y[0].wide && y[1].wide && !y[2].wide);
	/* tile 5 waits for the 32 cycles of tile 4's 64-bit send */
	assert_true(y[2].start >= y[1].start + 32);
	for (uint32_t t = 0; t < 8; t++)
		expect_words(cs, t, 0, 0, 0, 100);
	expect_words(cs, 2, 1024, 4, 0, 64);
	expect_words(cs, 3, 1024, 4, 0, 64);
	expect_words(cs, 0, 1024, 5, 0, 30);
	for (uint32_t t = 1; t <= 2; t++) {
		expect_words(cs, t, 400, 3, 64, 40);
		expect_words(cs, t, 560, 5, 0, 70);
	}
	expect_words(cs, 6, 1024, 7, 0, 200);
	/* the phase length the cost model uses bounds the real arrivals */
	for (uint32_t t = 0; t < 8; t++)
		assert_true(chipsim_tile(cs, t)->x.last_rx_cycle > 0);
	chipsim_free(cs);
	lower_free(f.l);
}

/* Every tile sends to the next and receives from the previous, including
 * one long transfer, over three phases. */
static void
test_ring_phases(void **state)
{
	(void)state;
	const uint32_t T = 24;
	Fixture f;
	fixture(&f, T);
	for (int p = 0; p < 3; p++) {
		Step *s = lower_step(f.l, STEP_EXCHANGE, "ring");
		for (uint32_t t = 0; t < T; t++) {
			uint32_t d[1] = {(t + 1 + p) % T}, off[1] = {1024u * p};
			xfer(s, t, p == 1 ? 250 : 60, 0, d, off, 1, &f);
		}
	}
	ChipSim *cs = run_fixture(&f);
	check_schedule(f.l);
	for (int p = 0; p < 3; p++)
		for (uint32_t t = 0; t < T; t++)
			expect_words(cs, (t + 1 + p) % T, 1024u * p, t, 0,
			             p == 1 ? 250 : 60);
	chipsim_free(cs);
	lower_free(f.l);
}

/* Sends in both directions along the spine: tiles 46..91 are the second
 * block of column group 0, whose tiles enter the spine a position further
 * on, so their words to the first block (tiles 0..45) run down it
 * (docs/chip.md: 50 -> 3 has displacement -4) and the first block's to
 * them up it (3 -> 50: 5); from tile 60 (second block) the spine runs
 * down to tiles 2 and 70 and up to tile 93 (column group 1). Codegen sets
 * each send's direction bits for its destinations, both for that
 * multicast; the chip model faults a word sent the wrong way. */
static void
test_both_directions(void **state)
{
	(void)state;
	const Chip *c = chip_default();
	assert_int_equal(chip_route_dir(c, 50, 3), SCTL_DIR2);
	assert_int_equal(chip_route_dir(c, 3, 50), SCTL_DIR1);
	assert_int_equal(chip_route_dir(c, 60, 2), SCTL_DIR2);
	assert_int_equal(chip_route_dir(c, 60, 70), SCTL_DIR2);
	assert_int_equal(chip_route_dir(c, 60, 93), SCTL_DIR1);
	Fixture f;
	fixture(&f, 96);
	Step *s = lower_step(f.l, STEP_EXCHANGE, "both ways");
	uint32_t d3[1] = {3}, d50[1] = {50}, both[3] = {2, 70, 93},
	         off[3] = {0, 0, 0}, off2[3] = {512, 512, 512};
	xfer(s, 50, 20, 0, d3, off, 1, &f);
	xfer(s, 3, 20, 0, d50, off, 1, &f);
	xfer(s, 60, 30, 0, both, off2, 3, &f);
	ChipSim *cs = run_fixture(&f);
	check_schedule(f.l);
	expect_words(cs, 3, 0, 50, 0, 20);
	expect_words(cs, 50, 0, 3, 0, 20);
	for (int k = 0; k < 3; k++)
		expect_words(cs, both[k], 512, 60, 0, 30);
	chipsim_free(cs);
	lower_free(f.l);
}

/* Eight senders (tiles 0-7) each hold a block of eight 4-word rows, one
 * for each receiver (tiles 8-15), listed in receiver order, as a C block
 * cut into whole rows: listed as given, every sender begins with tile 8.
 * The scheduler starts them at different receivers, so each receiver's
 * eight windows follow one another: 8 x (4 + 2 gap) cycles, plus the
 * preamble and the longest route (at least the receiver's XPIC-to-write
 * delay: its first mux control goes no earlier than the preamble's end),
 * the 6 cycles the last word takes to land, and a few cycles of control
 * slack. */
static void
test_blocks_to_rows(void **state)
{
	(void)state;
	Fixture f;
	fixture(&f, 16);
	Step *s = lower_step(f.l, STEP_EXCHANGE, "rows");
	for (uint32_t j = 0; j < 8; j++)
		for (uint32_t k = 0; k < 8; k++) {
			uint32_t d[1] = {8 + k}, off[1] = {16 * j};
			xfer(s, j, 4, 16 * k, d, off, 1, &f);
		}
	ChipSim *cs = run_fixture(&f);
	check_schedule(f.l);
	uint32_t lat = 0;
	for (uint32_t j = 0; j < 8; j++)
		for (uint32_t k = 8; k < 16; k++) {
			uint32_t l = model_latency(j, k), m = model_write(k);
			if (m > l)
				l = m;
			if (l > lat)
				lat = l;
		}
	print_message("rows: %llu cycles (longest route %u)\n",
	              (unsigned long long)s->cycles, lat);
	assert_true(s->cycles <=
	            XS_PREAMBLE + 8 * (4 + XS_RECV_GAP) + lat + 6 + 8);
	for (uint32_t j = 0; j < 8; j++)
		for (uint32_t k = 0; k < 8; k++)
			expect_words(cs, 8 + k, 16 * j, j, 16 * k, 4);
	chipsim_free(cs);
	lower_free(f.l);
}

/* test_blocks_to_rows' step on a fresh fixture, its sends read from the
 * receive buffers (other buffer numbers, the same offsets) when `other` */
static void
rows_step(Fixture *f, int other)
{
	fixture(f, 16);
	Step *s = lower_step(f->l, STEP_EXCHANGE, "rows");
	for (uint32_t j = 0; j < 8; j++)
		for (uint32_t k = 0; k < 8; k++) {
			Transfer *x = lower_transfer(
			    s, j,
			    (BufRef){other ? f->dst[j] : f->src[j], 16 * k}, 4,
			    1);
			x->dst_tile[0] = 8 + k;
			x->dst[0] = (BufRef){f->dst[8 + k], 16 * j};
		}
}

/* Schedules kept for a compile (XschedCache): the same step lowered three
 * times, scheduled without the cache, with it (kept), and with it again
 * from other buffers (given from the cache: a schedule does not depend on
 * buffer numbers), gets the same schedule each time, reordered (the given
 * order has every sender begin at the same receiver), each transfer with
 * its own buffers. */
static void
test_schedules_kept(void **state)
{
	(void)state;
	Fixture a, b, c;
	rows_step(&a, 0);
	rows_step(&b, 0);
	rows_step(&c, 1);
	XschedCache *kc = xsched_cache_new(chip_default());
	b.l->xcache = kc;
	c.l->xcache = kc;
	Diag d;
	assert_int_equal(xsched_run(a.l, &d), 0);
	assert_int_equal(xsched_run(b.l, &d), 0);
	assert_int_equal(xsched_cache_hits(kc), 0);
	assert_int_equal(xsched_run(c.l, &d), 0);
	assert_int_equal(xsched_cache_hits(kc), 1);
	check_schedule(c.l);
	const Step *sa = &a.l->step[0], *sc = &c.l->step[0];
	assert_int_equal(sc->cycles, sa->cycles);
	assert_int_equal(sc->nxfer, 64);
	int moved = 0;
	for (int i = 0; i < sc->nxfer; i++) {
		const Transfer *x = &sa->xfer[i], *y = &sc->xfer[i];
		moved |= y->src_tile != (uint32_t)i / 8;
		assert_int_equal(y->src_tile, x->src_tile);
		assert_int_equal(y->src.offset, x->src.offset);
		assert_int_equal(y->src.buf, c.dst[y->src_tile]);
		assert_int_equal(y->words, x->words);
		assert_int_equal(y->dst_tile[0], x->dst_tile[0]);
		assert_int_equal(y->dst[0].offset, x->dst[0].offset);
		assert_int_equal(y->dst[0].buf, c.dst[y->dst_tile[0]]);
		assert_int_equal(y->wide, x->wide);
		assert_int_equal(y->join, x->join);
		assert_int_equal(y->start, x->start);
		assert_int_equal(y->ptr_at[0], x->ptr_at[0]);
		assert_int_equal(y->mux_at[0], x->mux_at[0]);
		assert_int_equal(y->off_at[0], x->off_at[0]);
	}
	assert_true(moved);
	xsched_cache_free(kc);
	lower_free(a.l);
	lower_free(b.l);
	lower_free(c.l);
}

/* Tile 8 gathers a 4-word run from each of tiles 0-7 into one row, each
 * run where the one before it ended, and in a second lowering the same
 * runs 4 words apart. The incoming pointer advances with every word, so a
 * window that goes on where the last one ended needs no pointer control:
 * tile 8's program is 4 bytes (a delaypic) shorter for each window that
 * follows its row neighbour in time, counted here from the schedule. */
static void
test_gather_row(void **state)
{
	(void)state;
	uint32_t len[2];
	for (int spaced = 0; spaced < 2; spaced++) {
		Fixture f;
		fixture(&f, 9);
		Step *s = lower_step(f.l, STEP_EXCHANGE, "gather");
		for (uint32_t j = 0; j < 8; j++) {
			uint32_t d[1] = {8}, off[1] = {16 * j << spaced};
			xfer(s, j, 4, 16 * j, d, off, 1, &f);
		}
		ChipSim *cs = run_fixture(&f);
		check_schedule(f.l);
		for (uint32_t j = 0; j < 8; j++)
			expect_words(cs, 8, 16 * j << spaced, j, 16 * j, 4);
		len[spaced] = codegen_size(f.l, 8, NULL);
		/* windows in the order given: run j follows run j - 1 */
		for (int j = 1; j < 8; j++)
			assert_true(s->xfer[j].ptr_at[0] >
			            s->xfer[j - 1].off_at[0]);
		chipsim_free(cs);
		lower_free(f.l);
	}
	assert_int_equal(len[1] - len[0], 7 * 4);
}

/* Tile 8 gathers one row: 8 words from tile 0, multicast as 64-bit items
 * to the pair 8-9, then a 4-word run from each of tiles 1-7, each where
 * the one before it ended. Each window starts the cycle after the one
 * before it ended: the mux switches from one source (and item width) to
 * the next in the cycle of the earlier one's mux-off, one control, and
 * only the last window switches it off. The row takes 4 + 7 x 4 cycles
 * from its first word, and the step ends when the last word has landed
 * (6 cycles after its write); the chip model checks every word's source,
 * width and address. */
static void
test_windows_back_to_back(void **state)
{
	(void)state;
	Fixture f;
	fixture(&f, 10);
	Step *s = lower_step(f.l, STEP_EXCHANGE, "row");
	uint32_t pair[2] = {8, 9}, off2[2] = {0, 0};
	xfer(s, 0, 8, 0, pair, off2, 2, &f);
	for (uint32_t j = 1; j < 8; j++) {
		uint32_t d[1] = {8}, off[1] = {16 + 16 * j};
		xfer(s, j, 4, 16 * j, d, off, 1, &f);
	}
	ChipSim *cs = run_fixture(&f);
	check_schedule(f.l);
	/* tile 8's windows in time order */
	const Transfer *w[8];
	for (int i = 0; i < s->nxfer; i++) {
		const Transfer *x = &s->xfer[i];
		int k = i;
		while (k > 0 && w[k - 1]->mux_at[0] > x->mux_at[0]) {
			w[k] = w[k - 1];
			k--;
		}
		w[k] = x;
	}
	assert_true(s->xfer[0].wide);
	for (int k = 1; k < 8; k++)
		assert_int_equal(w[k]->mux_at[0], w[k - 1]->off_at[0]);
	uint64_t first = w[0]->mux_at[0] + model_write(8);
	assert_int_equal(s->cycles, first + 4 + 7 * 4 + 6);
	expect_words(cs, 8, 0, 0, 0, 8);
	expect_words(cs, 9, 0, 0, 0, 8);
	for (uint32_t j = 1; j < 8; j++)
		expect_words(cs, 8, 16 + 16 * j, j, 16 * j, 4);
	chipsim_free(cs);
	lower_free(f.l);
}

/* Tile 0 receives 128 words from the tile of the longest mux lead to it
 * (listed first) and 128 from the tile of the shortest (a negative lead).
 * In the order given the long-lead sender goes first, at cycle 3, and
 * tile 0's mux opens its lead later; lead first (the receiver is the
 * busiest tile) takes the short-lead one first, from the preamble's end,
 * and the long-lead one right after it: the row's first word is written
 * at cycle 3 + M, the step ends 2 x 128 + 6 cycles later (the landing). */
static void
test_lead_first(void **state)
{
	(void)state;
	Fixture f;
	fixture(&f, FIXTURE_TILES);
	uint32_t far = 1, near = 1, n = 128;
	for (uint32_t t = 2; t < FIXTURE_TILES; t++) {
		if (model_lead(t, 0) > model_lead(far, 0))
			far = t;
		if (model_lead(t, 0) < model_lead(near, 0))
			near = t;
	}
	assert_true(model_lead(near, 0) <= 0);
	assert_true(model_lead(far, 0) > 0 && model_lead(far, 0) <= (int)n);
	Step *s = lower_step(f.l, STEP_EXCHANGE, "row");
	uint32_t d[1] = {0}, off0[1] = {0}, off1[1] = {4 * n};
	xfer(s, far, n, 0, d, off0, 1, &f);
	xfer(s, near, n, 0, d, off1, 1, &f);
	ChipSim *cs = run_fixture(&f);
	check_schedule(f.l);
	assert_int_equal(s->xfer[0].src_tile, near);
	assert_int_equal(s->xfer[0].mux_at[0], XS_PREAMBLE);
	assert_int_equal(s->xfer[1].mux_at[0], XS_PREAMBLE + n);
	assert_int_equal(s->cycles, XS_PREAMBLE + model_write(0) + 2 * n + 6);
	expect_words(cs, 0, 0, far, 0, n);
	expect_words(cs, 0, 4 * n, near, 0, n);
	chipsim_free(cs);
	lower_free(f.l);
}

/* Tile 1 multicasts 56 words to the pair 0-1, itself included. As 28
 * 64-bit items its own mux-off control would fall at t + lat + 28 - M,
 * which is t, the send's own cycle, whatever t is: the scheduler sends it
 * as 56 words (found as a failed compile, docs/compiler.md). */
static void
test_own_control_on_send(void **state)
{
	(void)state;
	Fixture f;
	fixture(&f, 2);
	const Chip *c = f.l->chip;
	/* the case this is about: route to itself + 28 items = XPIC delay */
	assert_int_equal(chip_route_cycles(c, 1, 1) + 28,
	                 chip_xpic_cycles(c, 1));
	Step *s = lower_step(f.l, STEP_EXCHANGE, "phase");
	uint32_t pair[2] = {0, 1}, off[2] = {0, 0};
	xfer(s, 1, 56, 0, pair, off, 2, &f);
	ChipSim *cs = run_fixture(&f);
	check_schedule(f.l);
	assert_false(s->xfer[0].wide);
	expect_words(cs, 0, 0, 1, 0, 56);
	expect_words(cs, 1, 0, 1, 0, 56);
	chipsim_free(cs);
	lower_free(f.l);
}

/* ---- phases beside five workers: blocks and panel windows -------------- */

/* The emulator ran single-phase l (traced) with each send and each word
 * at its scheduled cycle: the sends (one TR_SEND per send instruction) at
 * the transfers' starts, all moved by one offset, the phase's cycle 0 on
 * the tiles' clocks; every receiver's last word at its scheduled last
 * write moved by that offset. */
static void
expect_cycles(ChipSim *cs, const Lowered *l)
{
	assert_int_equal(l->nstep, 1);
	const Step *s = &l->step[0];
	uint64_t first_send = UINT64_MAX, first_start = UINT64_MAX;
	for (uint32_t t = 0; t < l->tiles; t++) {
		const Tile *tile = chipsim_tile(cs, t);
		for (int k = 0; k < tile->ntrace; k++)
			if (tile->trace[k].kind == TR_SEND &&
			    tile->trace[k].start < first_send)
				first_send = tile->trace[k].start;
	}
	for (int i = 0; i < s->nxfer; i++)
		if (s->xfer[i].start < first_start)
			first_start = s->xfer[i].start;
	assert_true(first_send != UINT64_MAX && first_send >= first_start);
	uint64_t off = first_send - first_start;
	uint64_t *last = xcalloc(l->tiles, sizeof *last);
	for (int i = 0; i < s->nxfer; i++) {
		const Transfer *x = &s->xfer[i];
		const Tile *tile = chipsim_tile(cs, x->src_tile);
		int found = 0;
		for (int k = 0; k < tile->ntrace && !found; k++)
			found = tile->trace[k].kind == TR_SEND &&
			        tile->trace[k].start == x->start + off;
		if (!found)
			fail_msg("transfer %d: no send from tile %u at %llu", i,
			         x->src_tile,
			         (unsigned long long)(x->start + off));
		for (uint32_t k = 0; k < x->ndst; k++) {
			uint32_t d = x->dst_tile[k];
			uint64_t end = x->start +
			               model_latency(x->src_tile, d) +
			               xfer_items(x);
			if (end > last[d])
				last[d] = end;
		}
	}
	/* the last item arrives at its first write plus its items less 1 */
	for (uint32_t t = 0; t < l->tiles; t++)
		if (last[t])
			assert_int_equal(chipsim_tile(cs, t)->x.last_rx_cycle,
			                 last[t] + off - 1);
	free(last);
}

/* Run f's phase with blocks (run_fixture), its schedule checked by the
 * verifier and by check_schedule. */
static ChipSim *
run_blocks(Fixture *f)
{
	ChipSim *cs = run_fixture(f);
	Diag d;
	if (lower_verify_schedule(f->l, &d))
		fail_msg("%s", d.msg);
	check_schedule(f->l);
	return cs;
}

/* Transfer x, to one tile: its words, start and receive controls as
 * derived by hand. */
static void
expect_piece(const Transfer *x, uint32_t words, uint64_t start, uint64_t ptr,
             uint64_t mux, uint64_t off)
{
	assert_int_equal(x->words, words);
	assert_int_equal(x->start, start);
	assert_int_equal(x->ptr_at[0], ptr);
	assert_int_equal(x->mux_at[0], mux);
	assert_int_equal(x->off_at[0], off);
}

/*
 * Tile 0 sends 130 words to tile 2 in blocks of 6 beside a panel window
 * [100, 145). From the route model (tests/support.c): 0 -> 2 takes 23
 * cycles, tile 2's mux control acts 54 before the write (lead -31). By the
 * block rules (xsched.c, "Blocks"), by hand:
 *   - the first word may land no earlier than block 1 plus 54: 60, so the
 *     send starts at the first boundary t with t + 23 >= 60: 42; its mux
 *     switches at 42 - 31 = 11;
 *   - the window's blocks are [96, 150): the sender has room for 54 items
 *     (42 .. 96), a piece joined to the rest: no mux-off, so the pointer
 *     goes at the first write, 65 (block [60, 66));
 *   - the other 76 words become a transfer of their own, joined to the
 *     first: no pointer, no mux-on (tile 2's mux stays on tile 0), so it
 *     starts at the window's end, 150 (first write 173, past the first
 *     piece's last, 119, and the gap), its mux off at 150 + 76 - 31 =
 *     195 (block [192, 198), free). Its pointer and mux-on read as the
 *     cycle the mux-on would have: 150 - 31 = 119.
 * The phase ends at 150 + 76 + 23 and the landing.
 */
static void
test_blocks_window(void **state)
{
	(void)state;
	assert_int_equal(model_latency(0, 2), 23);
	assert_int_equal(model_write(2), 54);
	Fixture f;
	fixture(&f, 4);
	Step *s = lower_step(f.l, STEP_EXCHANGE, "beside workers");
	uint32_t d2[1] = {2}, off[1] = {0};
	xfer(s, 0, 130, 0, d2, off, 1, &f);
	XWindow w = {100, 45};
	lower_step_blocks(s, XS_BLOCK, &w, 1);
	ChipSim *cs = run_blocks(&f);
	assert_int_equal(s->nxfer, 2);
	const Transfer *x = s->xfer;
	expect_piece(&x[0], 54, 42, 65, 11, 65);
	expect_piece(&x[1], 76, 150, 119, 119, 195);
	assert_int_equal(x[0].join, XJOIN_NEXT);
	assert_int_equal(x[1].join, XJOIN_PREV);
	assert_int_equal(x[1].src.offset, 4 * 54);
	assert_int_equal(x[1].dst[0].offset, 4 * 54);
	assert_int_equal(s->cycles, 150 + 76 + 23 +
	                                chip_rule(f.l->chip, TIMING_RECV_LAND));
	expect_words(cs, 2, 0, 0, 0, 130);
	expect_cycles(cs, f.l);
	chipsim_free(cs);
	lower_free(f.l);
}

/*
 * Controls inside the tile's own send: tile 0 sends 200 words to tile 1
 * (24 cycles, tile 1's mux 52 before the write, lead -28), then tile 1
 * sends 40 words to tile 0 (23 cycles, tile 0's mux 52 before, lead -29).
 * No windows; the reorders find the order given (0 -> 1 can start first:
 * 31 against 32 without blocks), so by hand, in blocks of 6:
 *   - 0 -> 1 starts at the first boundary with t + 24 >= 6 + 52: 36,
 *     holding tile 0's supervisor to 240; at tile 1 the mux goes on at 8,
 *     off at 208, the pointer at the first write, 60;
 *   - 1 -> 0 starts at 36 too (t + 23 >= 58), its mux on at tile 0 at 7,
 *     before tile 0's send; inside tile 0's send (items 36 .. 236) a
 *     control goes only on a boundary after 36: all 40 words would put
 *     the mux off at 47, so the piece is shorter, leaves at least a block
 *     and is joined to the rest (no mux-off): 34 items; the pointer, by
 *     the first write 59, goes at the boundary 54 (a sendpic of tile 0),
 *     and tile 1's own pointer control at 60 falls inside this send, on
 *     a boundary (a sendpic of tile 1);
 *   - the other 6 words, joined (no pointer, no mux-on): tile 1 is free
 *     from 36 + 36 = 72; their mux-off falls 23 before the send's end,
 *     never on a boundary, so not inside tile 0's send (to 240): the
 *     first boundary with t + 6 - 29 >= 240 is 264 (off 241, first write
 *     287; pointer and mux-on read as 264 - 29 = 235).
 * The phase ends at 264 + 6 + 23 and the landing.
 */
static void
test_blocks_control_in_send(void **state)
{
	(void)state;
	assert_int_equal(model_latency(0, 1), 24);
	assert_int_equal(model_latency(1, 0), 23);
	assert_int_equal(model_write(0), 52);
	assert_int_equal(model_write(1), 52);
	Fixture f;
	fixture(&f, 2);
	Step *s = lower_step(f.l, STEP_EXCHANGE, "beside workers");
	uint32_t d1[1] = {1}, d0[1] = {0}, off[1] = {0}, off2[1] = {1024};
	xfer(s, 0, 200, 0, d1, off, 1, &f);
	xfer(s, 1, 40, 0, d0, off2, 1, &f);
	lower_step_blocks(s, XS_BLOCK, NULL, 0);
	ChipSim *cs = run_blocks(&f);
	assert_int_equal(s->nxfer, 3);
	const Transfer *x = s->xfer;
	expect_piece(&x[0], 200, 36, 60, 8, 208);
	expect_piece(&x[1], 34, 36, 54, 7, 41);
	expect_piece(&x[2], 6, 264, 235, 235, 241);
	assert_int_equal(s->cycles,
	                 264 + 6 + 23 + chip_rule(f.l->chip, TIMING_RECV_LAND));
	expect_words(cs, 1, 0, 0, 0, 200);
	expect_words(cs, 0, 1024, 1, 0, 40);
	expect_cycles(cs, f.l);
	chipsim_free(cs);
	lower_free(f.l);
}

/* The verifier refuses a schedule that breaks each block rule: the hand
 * case of test_blocks_window with one event moved. */
static void
test_blocks_verifier(void **state)
{
	(void)state;
	for (int c = 0; c < 7; c++) {
		Fixture f;
		fixture(&f, 4);
		Step *s = lower_step(f.l, STEP_EXCHANGE, "beside workers");
		uint32_t d2[1] = {2}, off[1] = {0};
		xfer(s, 0, 130, 0, d2, off, 1, &f);
		XWindow w = {100, 45};
		lower_step_blocks(s, XS_BLOCK, &w, 1);
		Diag d;
		assert_int_equal(xsched_run(f.l, &d), 0);
		assert_int_equal(lower_verify_schedule(f.l, &d), 0);
		Transfer *x = s->xfer;
		switch (c) {
		case 0: /* a send off the boundaries (and its controls with
		           it, so that only the block rule breaks) */
			x[0].start -= 1;
			x[0].mux_at[0] -= 1;
			x[0].off_at[0] -= 1;
			x[0].ptr_at[0] -= 1;
			break;
		case 1: /* a send holding its supervisor into the window
		           (the first piece a block later, to 102) */
			x[0].start += 6;
			x[0].mux_at[0] += 6;
			x[0].off_at[0] += 6;
			x[0].ptr_at[0] += 6;
			break;
		case 2: /* two controls in one block (6 and the mux-on,
		           11) */
			x[0].ptr_at[0] = 6;
			break;
		case 3: /* controls in the window's blocks: the two
		           pieces not joined, the rest's mux-on at 119 and
		           its pointer at 149, in [96, 150) (the first's
		           pointer at 59, apart from its mux-off) */
			x[0].join = x[1].join = 0;
			x[0].ptr_at[0] = 59;
			x[1].ptr_at[0] = 149;
			break;
		case 4: /* windows out of order */
			s->win[0].len = 0;
			break;
		case 5: /* a piece joined to one that is not its rest */
			x[1].join = 0;
			break;
		case 6: /* a piece joined to a previous one that is not */
			x[0].join = 0;
			break;
		}
		assert_int_equal(lower_verify_schedule(f.l, &d), IPU_EINVAL);
		assert_non_null(strstr(d.msg, "schedule verifier"));
		lower_free(f.l);
	}
}

/* splitmix64's step: the random cases' numbers */
static uint64_t
draw(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Random small phases beside random panel windows: every schedule the
 * block mode makes passes the verifier, and on the emulator every word
 * lands where it should, each send and last word at its cycle. */
static void
test_blocks_random(void **state)
{
	(void)state;
	uint64_t rng = 0x5eed0b10c5ull;
	int cases = 100, splits = 0;
	for (int c = 0; c < cases; c++) {
		uint32_t T = 4 + (uint32_t)(draw(&rng) % 13);
		Fixture f;
		fixture(&f, T);
		Step *s = lower_step(f.l, STEP_EXCHANGE, "random");
		uint32_t *used = xcalloc(T, sizeof *used); /* receive bytes */
		int n = 1 + (int)(draw(&rng) % 8);
		struct {
			uint32_t src, words, src_off, ndst, dst[3], off[3];
		} want[8];
		int nw = 0;
		for (int i = 0; i < n; i++) {
			uint32_t src = (uint32_t)(draw(&rng) % T);
			uint32_t words = 12 + (uint32_t)(draw(&rng) % 245);
			uint32_t src_off =
			    8 *
			    (uint32_t)(draw(&rng) % ((256 - words) / 2 + 1));
			uint32_t ndst = 1 + (uint32_t)(draw(&rng) % 3), nd = 0;
			uint32_t dst[3], off[3];
			for (uint32_t k = 0; k < ndst; k++) {
				uint32_t t = (uint32_t)(draw(&rng) % T);
				int dup = 0;
				for (uint32_t j = 0; j < nd; j++)
					dup |= dst[j] == t;
				if (dup || used[t] + 4 * words > 4096)
					continue;
				dst[nd] = t;
				off[nd++] = used[t];
				used[t] += 4 * words;
			}
			if (!nd)
				continue;
			xfer(s, src, words, src_off, dst, off, nd, &f);
			want[nw].src = src;
			want[nw].words = words;
			want[nw].src_off = src_off;
			want[nw].ndst = nd;
			memcpy(want[nw].dst, dst, sizeof dst);
			memcpy(want[nw].off, off, sizeof off);
			nw++;
		}
		free(used);
		if (!nw) {
			lower_free(f.l);
			continue;
		}
		XWindow w[4];
		int nwin = (int)(draw(&rng) % 5);
		uint64_t at = 0;
		for (int k = 0; k < nwin; k++) {
			at += 20 + draw(&rng) % 300;
			w[k].at = at;
			w[k].len = 20 + draw(&rng) % 50;
			at += w[k].len;
		}
		lower_step_blocks(s, XS_BLOCK, w, nwin);
		ChipSim *cs = run_blocks(&f);
		splits += s->nxfer - nw;
		for (int i = 0; i < nw; i++)
			for (uint32_t k = 0; k < want[i].ndst; k++)
				expect_words(cs, want[i].dst[k], want[i].off[k],
				             want[i].src, want[i].src_off,
				             want[i].words);
		expect_cycles(cs, f.l);
		chipsim_free(cs);
		lower_free(f.l);
	}
	/* the windows did split transfers */
	print_message("random blocks: %d cases, %d transfers split\n", cases,
	              splits);
	assert_true(splits > 0);
}

/* A small GEMM planned with the overlapped superstep (128 x 128 x 512,
 * f16 or f8, on 8 tiles: several supersteps, each but the last beside the next
 * one's exchange; how many is the planner's choice), lowered twice. */
static Lowered *
overlapped_gemm_of(DType t)
{
	Diag d;
	Graph *g = graph_new();
	ElemType e = {t, 0};
	Shape sa = {2, {128, 512}}, sb = {2, {512, 128}};
	int32_t a = graph_input(g, "a", e, &sa, &d);
	int32_t b = graph_input(g, "b", e, &sb, &d);
	int32_t c = graph_matmul(g, a, b, 0, "c", &d);
	assert_int_equal(graph_mark_output(g, c, &d), 0);
	PlanOptions po = {.gemm_overlap = 1};
	Plan *p = NULL;
	if (plan_graph(g, chip_default(), 8, &po, &p, &d))
		fail_msg("%s", d.msg);
	assert_non_null(strstr(p->desc, "overlapped supersteps"));
	Lowered *l = NULL;
	if (lower_plan(p, &l, &d))
		fail_msg("%s", d.msg);
	plan_free(p);
	graph_free(g);
	return l;
}

static Lowered *
overlapped_gemm(void)
{
	return overlapped_gemm_of(DT_F16);
}

/* Step s's first `more` transfers (cyclically) added again, each with
 * 1 / div of its words (at least 2). */
static void
more_transfers(Step *s, int more, uint32_t div)
{
	int given = s->nxfer;
	for (int k = 0; k < more; k++) {
		Transfer *x = &s->xfer[k % given];
		uint32_t nd = x->ndst, src = x->src_tile,
		         w = x->words / div / 2 * 2;
		if (w < 2)
			w = 2;
		BufRef from = x->src;
		Transfer *y = lower_transfer(s, src, from, w, nd);
		x = &s->xfer[k % given]; /* the array may have moved */
		for (uint32_t j = 0; j < nd; j++) {
			y->dst_tile[j] = x->dst_tile[j];
			y->dst[j] = x->dst[j];
		}
	}
}

/* schedule_overlap's choice of the five-worker panels: the chained ones
 * (gemm_five_chained: an f8 miniature) as planned; with transfers of a
 * 32nd of the words added one at a time until the exchange no longer
 * fits beside them (a 16th passed over the plain ones once pieces split
 * at a panel block joined), the plain ones
 * (GemmOptions.plain5), whose windows are longer, before the step is
 * made plain. */
static void
test_overlap_plain_panels(void **state)
{
	(void)state;
	Diag d;
	int chained = 0, plain = 0;
	for (int more = 0; more <= 400 && !plain; more++) {
		Lowered *l = overlapped_gemm_of(DT_F8_F143);
		int first = -1;
		for (int i = 0; i < l->nstep && first < 0; i++)
			if (l->step[i].gwin && l->step[i].nxfer)
				first = i;
		assert_true(first >= 0);
		more_transfers(&l->step[first], more, 32);
		if (xsched_run(l, &d) || lower_verify_schedule(l, &d))
			fail_msg("%s", d.msg);
		const Step *s = &l->step[first];
		if (!s->gwin) { /* made plain: no room beside either */
			lower_free(l);
			break;
		}
		const GemmCall *g = &s->call[0].args.u.gemm;
		assert_true(gemm_five_chained(g->t, g->bm, g->bk));
		for (int k = 1; k < s->ncall; k++)
			assert_int_equal(s->call[k].args.u.gemm.opt.plain5,
			                 g->opt.plain5);
		if (more == 0)
			assert_int_equal(g->opt.plain5, 0);
		/* the step's windows are the kind its calls run */
		uint32_t *rows = xcalloc((size_t)s->ncall, sizeof *rows);
		for (int k = 0; k < s->ncall; k++)
			rows[k] = s->call[k].args.u.gemm.bm;
		GemmWindows w[2];
		for (int p = 0; p < 2; p++)
			gemm_windows(l->chip, g->t, rows, (uint32_t)s->ncall,
			             g->bk, g->opt.five, p, NULL, &w[p]);
		assert_int_equal(s->gwin->done, w[g->opt.plain5].done);
		/* the plain panels are the longer */
		assert_true(w[1].done > w[0].done);
		gemm_windows_free(&w[0]);
		gemm_windows_free(&w[1]);
		free(rows);
		chained += !g->opt.plain5;
		plain += g->opt.plain5;
		lower_free(l);
	}
	print_message("overlapped: chained panels with up to %d transfers "
	              "of a 32nd more, then plain\n",
	              chained - 1);
	assert_true(chained >= 1);
	assert_int_equal(plain, 1);
}

/* xsched_run on overlapped supersteps (xsched.c,
 * schedule_overlap_or_plain): as planned, every one is kept beside the
 * multiply; with one's exchange made 24 times as long (its transfers
 * repeated), it no longer fits beside the panels and is made plain
 * instead of failing: the multiply with six workers (the kernel
 * formula's cycles), then the transfers as an exchange step of its own
 * inserted after it, the buffers' lifetimes moved on with the steps,
 * and the schedule passing the verifier. */
static void
test_overlap_plain_fallback(void **state)
{
	(void)state;
	Diag d;
	Lowered *l = overlapped_gemm(), *big = overlapped_gemm();
	int n0 = l->nstep, first = -1, over = 0;
	for (int i = 0; i < l->nstep; i++)
		if (l->step[i].gwin && l->step[i].nxfer) {
			over++;
			if (first < 0)
				first = i;
		}
	assert_true(over >= 2);
	if (xsched_run(l, &d) || lower_verify_schedule(l, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(l->ovl_beside, over);
	assert_int_equal(l->ovl_no_room + l->ovl_dearer, 0);
	assert_int_equal(l->nstep, n0);
	/* the first overlapped step's exchange 24 times over */
	int given = big->step[first].nxfer;
	more_transfers(&big->step[first], 23 * given, 1);
	int32_t last_a2 = -1;
	for (int b = 0; b < big->nbuf; b++)
		if (!strcmp(big->buf[b].what, "A chunk 2"))
			last_a2 = big->buf[b].last;
	assert_true(last_a2 > first);
	if (xsched_run(big, &d) || lower_verify_schedule(big, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(big->ovl_no_room, 1);
	assert_int_equal(big->ovl_beside, over - 1);
	assert_int_equal(big->nstep, n0 + 1);
	const Step *c = &big->step[first], *x = &big->step[first + 1];
	assert_int_equal(c->kind, STEP_COMPUTE);
	assert_null(c->gwin);
	assert_int_equal(c->nxfer, 0);
	uint64_t most = 0;
	for (int k = 0; k < c->ncall; k++) {
		const KernelCall *k6 = &c->call[k];
		const GemmCall *g = &k6->args.u.gemm;
		assert_int_equal(g->opt.five, 0);
		assert_int_equal(k6->args_bytes, GEMM_ARGS_BYTES);
		uint64_t t =
		    gemm_tile_cycles(big->chip, g->t, 6, g->bm, g->bn, g->bk);
		assert_int_equal(k6->cycles, t);
		if (t > most)
			most = t;
	}
	assert_int_equal(c->cycles, most);
	assert_int_equal(x->kind, STEP_EXCHANGE);
	assert_int_equal(x->nxfer, 24 * given);
	assert_int_equal(x->block, 0);
	assert_non_null(strstr(x->what, "no room"));
	/* every transfer landed in order after the phase's start, and
	 * the step's cycles cover the last word */
	for (int i = 0; i < x->nxfer; i++)
		assert_true(x->xfer[i].start + xfer_items(&x->xfer[i]) <=
		            x->cycles);
	/* the next overlapped step is the one after the inserted
	 * exchange */
	assert_non_null(big->step[first + 2].gwin);
	for (int b = 0; b < big->nbuf; b++)
		if (!strcmp(big->buf[b].what, "A chunk 2"))
			assert_int_equal(big->buf[b].last, last_a2 + 1);
	/* the same words go as in the plan as lowered, 24 times over */
	uint64_t words = 0, want = 0;
	for (int i = 0; i < x->nxfer; i++)
		words += x->xfer[i].words;
	for (int i = 0; i < l->step[first].nxfer; i++)
		want += l->step[first].xfer[i].words;
	assert_true(words == 24 * want);
	assert_int_equal(lower_verify(big, &d), 0);
	lower_free(l);
	lower_free(big);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_multicast_and_gather),
	    cmocka_unit_test(test_ring_phases),
	    cmocka_unit_test(test_both_directions),
	    cmocka_unit_test(test_blocks_to_rows),
	    cmocka_unit_test(test_own_control_on_send),
	    cmocka_unit_test(test_schedules_kept),
	    cmocka_unit_test(test_gather_row),
	    cmocka_unit_test(test_windows_back_to_back),
	    cmocka_unit_test(test_lead_first),
	    cmocka_unit_test(test_blocks_window),
	    cmocka_unit_test(test_blocks_control_in_send),
	    cmocka_unit_test(test_blocks_verifier),
	    cmocka_unit_test(test_blocks_random),
	    cmocka_unit_test(test_overlap_plain_fallback),
	    cmocka_unit_test(test_overlap_plain_panels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

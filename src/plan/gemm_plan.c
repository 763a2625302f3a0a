/*
 * gemm_plan.c - the GEMM planner: candidate tile grids and superstep sizes,
 * priced as lower/gemm.c emits them, the cheapest that fits chosen.
 *
 * Price of a candidate = steps x (sync + exchange phase + kernel call)
 * (the last superstep with the K that is left)
 * + the reduction (pk > 1: sync, the partial slices, the add):
 *   sync      the chip's internal sync (after the last tile arrives)
 *   exchange  the scheduler's phase shape for this pattern: preamble, then
 *             each tile receives its A chunk and then its B chunk back to
 *             back (the scheduler appends windows in that order), plus the
 *             route latency across the grid and the receive gap
 *   kernel    gemm_tile_cycles (src/kernels/gemm.h), the kernel's own
 *             cycle formula, checked against the emulator in its tests
 * Memory: the fullest tile's buffers as the lowering sizes them (the
 * stored input chunks, the receive buffers, the C block, the partials,
 * the kernel argument blocks: plan_gemm_need) and the code (the kernels'
 * image at its largest, plan_kernels_code, and a bound on the program)
 * within the tile memory model's bound (mem.c); for a candidate among the
 * cheapest, the same buffers packed above that code by the placer's
 * packing (plan_gemm_packed: the element rule keeps some apart) within
 * the tile.
 * The search enumerates pk in 1, 2, 4, 8, every pm (pn = the tiles left)
 * and kc of 1..64 K panels: tens of thousands of candidates, a few ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/gemm.h"
#include "../kernels/vadd.h"
#include "plan.h"

/* The route latency across a pm x pn grid of consecutive tiles, bounded
 * by the chip's farthest pair (a grid row, consecutive ids, is close):
 * from the phase's start to a word's landing. A receiver's mux control
 * goes M(d) before the word is written and not before the phase starts,
 * so no word is written sooner than M(d) (lower/xsched.c). */
static uint64_t
grid_latency(const Chip *c, uint32_t tiles)
{
	uint64_t worst = 0;
	for (uint32_t t = 0; t < tiles; t += tiles / 16 + 1) {
		uint64_t l = chip_route_cycles(c, 0, t),
		         m = chip_xpic_cycles(c, t);
		if (m > l)
			l = m;
		if (l > worst)
			worst = l;
	}
	return worst + chip_rule(c, TIMING_RECV_LAND);
}

/* Part k of n split `parts` ways: its size, *first its first. */
static uint32_t
share(uint32_t n, uint32_t parts, uint32_t k, uint32_t *first)
{
	*first = k * (n / parts) + (k < n % parts ? k : n % parts);
	return n / parts + (k < n % parts);
}

GemmSlice
plan_gemm_slice(uint32_t np, uint32_t rows, uint32_t pk, uint32_t q,
                int by_rows_only)
{
	GemmSlice s = {.rows = rows};
	/* the most rows of a panel a group gets, by panels and by rows */
	uint32_t by_panels = np >= pk ? ceil_div(np, pk) * rows
	                              : ceil_div(rows, pk / np),
	         by_rows = ceil_div(rows, pk) * np;
	if (by_rows_only || by_rows < by_panels) {
		s.panels = np;
		s.rows = share(rows, pk, q, &s.row);
		return s;
	}
	if (np >= pk) {
		s.panels = share(np, pk, q, &s.panel);
		return s;
	}
	/* panel p goes to groups ceil(p pk / np) .. ceil((p + 1) pk / np)
	 * - 1, which split its rows */
	s.panel = q * np / pk;
	s.panels = 1;
	uint32_t q0 = ceil_div(s.panel * pk, np),
	         q1 = ceil_div((s.panel + 1) * pk, np);
	s.rows = share(rows, q1 - q0, q - q0, &s.row);
	return s;
}

uint32_t
plan_gemm_slice_segments(const GemmSlice *s, uint32_t rows)
{
	return s->panels > 1 && s->rows < rows ? s->panels : 1;
}

/* The reduction: each tile receives pk - 1 partial slices of its C block
 * one after another, then adds them; the tile with the largest slice
 * sets the pace. */
static uint64_t
reduce_cycles(const Chip *c, const GemmPlan *p, GemmDtype g)
{
	if (p->pk == 1)
		return 0;
	uint64_t bytes = 0, nseg = 1; /* the largest slice */
	for (uint32_t q = 0; q < p->pk; q++) {
		GemmSlice s = plan_gemm_slice(gemm_n_panels(p->bn), p->bm,
		                              p->pk, q, p->norm_cols > 0);
		uint64_t b =
		    (uint64_t)s.panels * gemm_c_bytes(g, s.rows, GEMM_COLS);
		if (b > bytes) {
			bytes = b;
			nseg = plan_gemm_slice_segments(&s, p->bm);
		}
	}
	/* a transfer a segment, each receiver's back to back */
	uint64_t xch = XS_PREAMBLE + (p->pk - 1) * (bytes / 4) +
	               grid_latency(c, p->pk * p->pm * p->pn);
	uint32_t atoms = (uint32_t)(bytes / 8 / nseg);
	return chip_rule(c, TIMING_SYNC_INTERNAL) + xch +
	       (p->norm_cols
	            ? vadd_norm_cycles(c, atoms, p->pk - 1, (uint32_t)nseg)
	            : vadd_cycles(c, atoms, p->pk - 1, (uint32_t)nseg, 0));
}

/* Parts of a chunk of kc: one an owner to spare, at most one a K-panel. */
static uint32_t
parts(const GemmPlan *p, uint32_t spare, uint32_t kc)
{
	uint32_t nk = ceil_div(kc, gemm_k_panel(gemm_dtype_of(p->dtype)));
	return spare < 1 ? 1 : spare < nk ? spare : nk;
}

uint32_t
plan_gemm_a_parts(const GemmPlan *p)
{
	return parts(p, p->pn / p->steps, p->kc) * plan_gemm_a_row_parts(p);
}

/* 1 if A's receivers, a grid row, are whole pairs of tiles (plan.h:
 * pairs_down): the scheduler sends its even-word windows as 64-bit items,
 * in half the cycles (lower/xsched.c). */
static int
a_pairs(const GemmPlan *p)
{
	return !p->pairs_down && p->pn % 2 == 0;
}

uint32_t
plan_gemm_a_row_parts(const GemmPlan *p)
{
	uint32_t nk = ceil_div(p->kc, gemm_k_panel(gemm_dtype_of(p->dtype))),
	         spare = p->pn / p->steps;
	if (spare < 2 * nk)
		return 1;
	/* a part's window in the chunk exchange, in items: a row of a
	 * K-panel is GEMM_A_ROW_BYTES, 64-bit where the grid row is whole
	 * pairs */
	uint32_t item = a_pairs(p) ? 8 : 4, fewest = p->m - (p->pm - 1) * p->bm,
	         r = spare / nk, most = chip_xpic_max_cycles();
	if (fewest > p->bm)
		fewest = p->bm;
	/* each window longer than any receiver's XPIC-to-write delay M(d):
	 * back to back, a window's pointer goes at its first word, M(d)
	 * after its mux switch, which must not be the cycle of a later
	 * window's switch (xsched.c controls_fit); shorter windows leave
	 * gaps the planner does not price (base f16 qkv: 72 windows of 24
	 * and 28 items, the exchange 5,176 -> 6,217 cycles) */
	while (r > 1 && (fewest / r) * GEMM_A_ROW_BYTES / item <= most)
		r--;
	return r > 1 ? r : 1;
}

int
plan_gemm_a_in_place(const GemmPlan *p)
{
	return p->pn == 1;
}

uint32_t
plan_gemm_b_parts(const GemmPlan *p)
{
	return p->b_parts && !p->b_local ? parts(p, p->pm / p->steps, p->kc)
	                                 : 1;
}

uint64_t
plan_gemm_b_local_bytes(const GemmPlan *p)
{
	GemmDtype g = gemm_dtype_of(p->dtype);
	return (uint64_t)(p->steps - 1) * gemm_b_bytes(g, p->kc, p->bn) +
	       gemm_b_bytes(g, p->kg - (p->steps - 1) * p->kc, p->bn);
}

uint64_t
plan_host_loss_panels(const Chip *c, const PlanHost *h, uint64_t items,
                      uint32_t windows, uint32_t tiles, int plain)
{
	uint32_t rows[2] = {h->bm, h->bm_last};
	uint32_t nr = h->bm_last && h->bm_last != h->bm ? 2 : 1;
	uint32_t most = gemm_n_panels(h->bn) * gemm_k_panels(h->t, h->bk);
	GemmWindows w;
	gemm_windows(c, h->t, rows, nr, h->bk, most, plain, NULL, &w);
	/* the exchange's supervisor events in the spans between the panel
	 * blocks, [open[p], close[p]) (open[0] is the frame's 0), from the
	 * mux's first switch: its items and, between two transfers at a
	 * receiver, their three receive controls (the previous one's mux
	 * off, the next one's pointer and mux on), each in a block of its
	 * own beside the five workers (xsched.c "Blocks"); a transfer split
	 * at a panel block is two, the same three again; nothing after the
	 * last panel's span */
	uint64_t gap = 3 * CHIP_SLOTS;
	uint64_t need = items + (windows ? windows - 1 : 0) * gap,
	         at = XS_PREAMBLE + 3, end = 0;
	uint32_t P = 0;
	for (uint32_t p = 0; p < most && !P; p++) {
		uint64_t from = p ? w.open[p] : 0;
		if (at < from)
			at = from;
		if (at >= w.close[p])
			continue;
		uint64_t span = w.close[p] - at;
		if (need <= span) {
			end = at + need;
			P = p + 1;
		} else {
			need -= span;
			need += gap;
			at = w.close[p];
		}
	}
	gemm_windows_free(&w);
	/* none after the last panel's span, nor in it: the scheduler does
	 * not place the weights' parts that tightly (fc1's B, 6,912 items
	 * in 15 transfers a receiver, within 97% of out_proj's 18 spans,
	 * went back to its exchange on the 27-layer tower) */
	if (!P || P == most)
		return UINT64_MAX;
	/* the step as schedule_overlap makes it: the setup and opening, block
	 * 0's lead, the P panels' exit (or the exchange's last word), the
	 * rest with six workers */
	GemmCall call = {.t = h->t, .bm = h->bm, .bn = h->bn, .bk = h->bk};
	call.opt.five = P;
	uint64_t with = plan_overlap_cycles(c, h->t, rows, nr, h->bk, P, plain,
	                                    end + grid_latency(c, tiles),
	                                    plan_overlap_rest(c, &call)),
	         six = gemm_tile_cycles(c, h->t, 6, h->bm, h->bn, h->bk);
	return with > six ? with - six : 0;
}

/* before block 0: the setup to the opening sync (gemm_overlap_setup), the
 * sync, the incoming count's write and the exchange's preamble */
static uint64_t
overlap_opening(const Chip *c, GemmDtype t)
{
	return gemm_overlap_setup(c, t) + 1 +
	       chip_rule(c, TIMING_SYNC_INTERNAL) + 1 +
	       chip_rule(c, TIMING_SUP_PUT) + XS_PREAMBLE;
}

uint64_t
plan_overlap_rest(const Chip *c, const GemmCall *g)
{
	GemmCall rc[2];
	int nr = gemm_rest(g, rc);
	uint64_t t = 0;
	for (int j = 0; j < nr; j++)
		t += gemm_tile_cycles(c, rc[j].t, 6, rc[j].bm, rc[j].bn,
		                      rc[j].bk) +
		     2 * chip_rule(c, TIMING_SUP_BRANCH);
	return t;
}

uint64_t
plan_overlap_cycles(const Chip *c, GemmDtype t, const uint32_t *rows,
                    uint32_t n, uint32_t bk, uint32_t P, int plain,
                    uint64_t xend, uint64_t rest)
{
	GemmWindows w;
	gemm_windows(c, t, rows, n, bk, P, plain, NULL, &w);
	uint64_t five = w.done + chip_rule(c, TIMING_SYNC_LOCAL), lead = w.lead;
	gemm_windows_free(&w);
	if (xend > five)
		five = xend;
	return overlap_opening(c, t) + lead + five + rest;
}

/* Priced with the plain five-worker panels (GemmOptions.plain5): an upper
 * bound where schedule_overlap runs the chained ones (the exchange fits
 * beside them). Priced with the chained ones where they fit, the planner
 * moved the So400m f8 tower's fc1 to C blocks of 122 x 80 on 1,296 tiles,
 * and the tower predicted 5,476,055 against 5,248,792 (docs/kernel-gemm.md,
 * "Five workers, chained"): not worked out. */
uint64_t
plan_host_loss(const Chip *c, const PlanHost *h, uint64_t items,
               uint32_t windows, uint32_t tiles)
{
	return plan_host_loss_panels(c, h, items, windows, tiles, 1);
}

/* One superstep of K kc: its exchange phase (the scheduler's shape) in
 * *xch, its kernel call in *call. */
static void
step_cycles(const Chip *c, const GemmPlan *p, uint32_t kc, uint64_t *xch,
            uint64_t *call)
{
	GemmDtype g = gemm_dtype_of(p->dtype);
	uint64_t a_words = gemm_a_bytes(g, p->bm, kc) / 4;
	uint64_t b_words = gemm_b_bytes(g, kc, p->bn) / 4;
	/* A goes to a grid row, B down a column; the one whose receivers are
	 * whole pairs of tiles (plan.h: pairs_down) the scheduler sends as
	 * 64-bit items, in half the cycles (lower/xsched.c) */
	int wide_a = a_pairs(p) && a_words % 2 == 0;
	int wide_b = p->pairs_down && p->pm % 2 == 0 && b_words % 2 == 0;
	int own_a = plan_gemm_a_in_place(p);
	uint64_t a_cycles = own_a ? 0 : wide_a ? a_words / 2 : a_words;
	uint64_t b_cycles = wide_b ? b_words / 2 : b_words;
	/* A in parts, one window each (none read in place), then B's: one,
	 * or in parts a window per part and n-panel (the B layout keeps an
	 * n-panel's K-panels together), none with b_local; a receiver's
	 * windows go back to back (lower/xsched.c), so their number costs
	 * the plain exchange nothing. B beside an earlier multiply
	 * (GemmPlan.b_host): not in this exchange, the host's step longer by
	 * what its five-worker panels and the exchange between them cost
	 * (plan_host_loss) */
	uint32_t nb =
	    plan_gemm_b_parts(p) > 1 ? parts(p, p->pm / p->steps, kc) : 1;
	uint32_t bw = nb > 1 ? nb * gemm_n_panels(p->bn) : 1;
	/* a weight's B chunk is stored in parts of an n-panel by at most
	 * B_PART_KPANELS K-panels (the weight balance's): a transfer each
	 * beside the host */
	uint32_t spread = gemm_n_panels(p->bn) *
	                  ceil_div(gemm_k_panels(g, kc), B_PART_KPANELS);
	uint64_t loss =
	    !p->b_local && p->b_host.cycles && p->kg <= kc &&
	            p->pk * p->pm * p->pn <= p->b_host.cover
	        ? plan_host_loss(c, &p->b_host, b_cycles, nb > 1 ? bw : spread,
	                         p->pk * p->pm * p->pn)
	        : UINT64_MAX;
	int b_under = loss != UINT64_MAX;
	*xch = XS_PREAMBLE + 3 + a_cycles +
	       (p->b_local ? 0
	        : b_under  ? loss
	                   : b_cycles) +
	       grid_latency(c, p->pk * p->pm * p->pn);
	*call = gemm_tile_cycles(c, g, 6, p->bm, p->bn, kc);
}

typedef uint32_t (*PartBytes)(const GemmGeom *, uint32_t, uint32_t);

/* The tile of a grid line of `line` tiles that holds the most bytes of
 * stored chunk parts (the first such), *most those bytes: part u of
 * superstep s sits `s + u steps` places along the line (mod line), so
 * tile j holds the positions j, j + line, ... of the steps x parts;
 * bytes(G, s, u) sizes one. */
static uint32_t
fullest_stored(const GemmGeom *G, uint32_t line, uint32_t parts,
               PartBytes bytes, uint64_t *most)
{
	uint32_t n = G->p->steps * parts, fullest = 0;
	*most = 0;
	for (uint32_t j = 0; j < line && j < n; j++) {
		uint64_t sum = 0;
		for (uint32_t at = j; at < n; at += line)
			sum += bytes(G, at % G->p->steps, at / G->p->steps);
		if (sum > *most) {
			*most = sum;
			fullest = j;
		}
	}
	return fullest;
}

static uint64_t
most_stored(const GemmGeom *G, uint32_t line, uint32_t parts, PartBytes bytes)
{
	uint64_t most;
	fullest_stored(G, line, parts, bytes, &most);
	return most;
}

/* Part u of group 0's A chunk (0, s), the largest rows. */
static uint32_t
a_part(const GemmGeom *G, uint32_t s, uint32_t u)
{
	return plan_gemm_a_part_bytes(G, 0, s, 0, u);
}

/* Part u of group 0's B chunk (s, 0), the largest columns (b_local: the
 * whole chunk, u the copy). */
static uint32_t
b_part(const GemmGeom *G, uint32_t s, uint32_t u)
{
	GemmBPart bp;
	return plan_gemm_b_part(G, 0, s, 0, u, &bp)
	           ? gemm_b_bytes(G->g, bp.rows, bp.cols)
	           : 0;
}

/* The runs B's part u of chunk (s, 0) is sent in (send_b in
 * lower/gemm.c: one when it has the chunk's K-panels, else one an
 * n-panel); 0: the part is empty. */
static uint32_t
b_runs(const GemmGeom *G, uint32_t s, uint32_t u, uint32_t *bytes)
{
	GemmBPart bp;
	if (!plan_gemm_b_part(G, 0, s, 0, u, &bp))
		return 0;
	*bytes = gemm_b_bytes(G->g, bp.rows, bp.cols);
	return ceil_div(bp.rows, gemm_k_panel(G->g)) == bp.nk
	           ? 1
	           : gemm_n_panels(bp.cols);
}

/* The code of sending a stored part: A's to the grid row, B's in its
 * runs down the column (none with b_local). */
static uint32_t
a_send(const GemmGeom *G, uint32_t s, uint32_t u)
{
	uint32_t b = G->a_own ? 0 : a_part(G, s, u);
	return b ? (uint32_t)plan_code_xfers(0, 1, b / 4) : 0;
}

static uint32_t
b_send(const GemmGeom *G, uint32_t s, uint32_t u)
{
	uint32_t bytes = 0, runs = b_runs(G, s, u, &bytes);
	return runs ? (uint32_t)plan_code_xfers(0, runs, bytes / 4) : 0;
}

/* The program of the GEMM on its fullest tile by the code rules (plan.h,
 * CODE_*): per superstep the exchange phase with the receives of every
 * tile (A's parts, B's runs) and a call; the sends of the tile that
 * stores the most; with pk > 1 the reduction's phase, partials and add. */
static uint64_t
program_bytes(const GemmGeom *G)
{
	const GemmPlan *p = G->p;
	uint64_t code = CODE_PROGRAM_INSNS * CODE_INSN;
	for (uint32_t s = 0; s < p->steps; s++) {
		uint64_t recv = 0;
		for (uint32_t u = 0; u < G->na && !G->a_own; u++)
			recv += a_part(G, s, u) > 0;
		for (uint32_t u = 0; u < G->nb && !p->b_local; u++) {
			uint32_t bytes;
			recv += b_runs(G, s, u, &bytes);
		}
		code += plan_code_phase(p->exchange_cycles) +
		        plan_code_xfers(recv, 0, 0) +
		        CODE_CALL_INSNS * CODE_INSN;
	}
	code += most_stored(G, G->pn, G->na, a_send);
	if (!p->b_local)
		code += most_stored(G, G->pm, G->nb, b_send);
	uint64_t reduce = 0;
	for (uint32_t q = 0; q < G->pk && G->pk > 1; q++) {
		/* group q receives its slice from the others and sends
		 * theirs */
		GemmCSlice sl;
		plan_gemm_c_slice(G, 0, 0, q, &sl);
		uint64_t recv = (uint64_t)(G->pk - 1) * sl.nseg, sends = 0,
		         items = 0;
		for (uint32_t o = 0; o < G->pk; o++) {
			if (o == q || !plan_gemm_c_slice(G, 0, 0, o, &sl))
				continue;
			sends += sl.nseg;
			items += (uint64_t)sl.nseg * sl.seg_bytes / 4;
		}
		uint64_t r = plan_code_phase(p->reduce_cycles) +
		             plan_code_xfers(recv, sends, items) +
		             CODE_CALL_INSNS * CODE_INSN;
		if (r > reduce)
			reduce = r;
	}
	return code + reduce;
}

/* The buffers of the grid's fullest tile as lower/gemm.c makes them and
 * in its order (ties of the packer's orders go by it), the GEMM's steps
 * from 0: of the K group with the most (plan_gemm_tile_buffers on block
 * (q, 0, 0)) its C block, the A chunk (apart from the C block: the kernel
 * reads both in one bundle) and the B chunk, which live in the
 * supersteps' steps; the stored parts of the tiles of the grid row and column
 * that store the most, superstep by superstep (A's, an activation, in the
 * GEMM's steps, one the kernel reads in place apart from the C block;
 * then B's, a weight, the whole program); a GEMM call's arguments a
 * superstep; the partials (apart from the C block, which vadd reads
 * with them, live in the reduction's steps, after the chunks) and
 * vadd's arguments; the save buffer (compile.c). A new array of *n. */
/* A buffer of the GEMM's fullest tile, live from its first step. */
static TileBuf
gemm_buf(uint32_t bytes, uint32_t align, MemRegion region, int32_t last,
         int32_t apart)
{
	return (TileBuf){.bytes = bytes,
	                 .align = align,
	                 .region = region,
	                 .first = 0,
	                 .last = last,
	                 .apart = apart};
}

/* Call c's argument block on a tile of b's calls: the overlapped calls
 * (the first calls_beside) carry the longer block. */
static uint32_t
call_args_bytes(const GemmTileBuffers *b, uint32_t c)
{
	return c < b->calls_beside ? GEMM_OVERLAP_ARGS_BYTES : GEMM_ARGS_BYTES;
}

static TileBuf *
fullest_tile(const GemmGeom *G, int *n)
{
	const GemmPlan *p = G->p;
	int32_t last = plan_gemm_program_steps(p) - 1, all = INT32_MAX,
	        chunks = plan_gemm_superstep_steps(p) - 1;
	GemmTileBuffers tb = {0};
	uint64_t most = 0;
	uint32_t vadd_bytes =
	    p->norm_cols ? VADD_NORM_ARGS_BYTES : VADD_ARGS_BYTES;
	for (uint32_t q = 0; q < G->pk; q++) {
		GemmTileBuffers b = plan_gemm_tile_buffers(G, q, 0, 0);
		/* the chunks, then the partials in their bytes */
		uint64_t chunks = ((uint64_t)b.a_chunk + b.b_chunk) *
		                  (p->overlap ? 2 : 1),
		         sum = (chunks > b.c_partials ? chunks : b.c_partials) +
		               b.c_block + (b.c_partials ? vadd_bytes : 0);
		for (uint32_t c = 0; c < b.calls; c++)
			sum += call_args_bytes(&b, c);
		if (sum > most) {
			most = sum;
			tb = b;
		}
	}
	uint64_t bytes;
	uint32_t ja = fullest_stored(G, G->pn, G->na, a_part, &bytes);
	uint32_t lb = p->b_local ? 1 : G->pm, nb = p->b_local ? 1 : G->nb,
	         jb = fullest_stored(G, lb, nb, b_part, &bytes);
	MemRegion b_region = p->b_local ? REGION_INTERLEAVED : REGION_ANY;
	TileBuf *b =
	    xcalloc(8 + (size_t)p->steps * (G->na + nb + 1), sizeof *b);
	int k = 0; /* the C block is buffer 0 */
	b[k++] = gemm_buf(tb.c_block, 16, REGION_INTERLEAVED, all, -1);
	for (int twice = 0; twice <= (p->overlap != 0); twice++) {
		/* overlapped: the second chunk buffers */
		if (tb.a_chunk)
			b[k++] =
			    gemm_buf(tb.a_chunk, 16, REGION_ANY, chunks, 0);
		if (tb.b_chunk)
			b[k++] = gemm_buf(tb.b_chunk, 16, REGION_INTERLEAVED,
			                  chunks, -1);
	}
	for (uint32_t s = 0; s < p->steps; s++) {
		for (uint32_t u = 0; u < G->na; u++) {
			uint32_t at = s + u * p->steps, a = a_part(G, s, u);
			if (at % G->pn == ja && a)
				b[k++] = gemm_buf(a, 16, REGION_ANY, last,
				                  G->a_own && u == 0 ? 0 : -1);
		}
		for (uint32_t u = 0; u < nb; u++) {
			uint32_t at = s + u * p->steps, a = b_part(G, s, u);
			if (at % lb == jb && a)
				b[k++] = gemm_buf(a, 16, b_region, all, -1);
		}
	}
	for (uint32_t c = 0; c < tb.calls; c++)
		b[k++] =
		    gemm_buf(call_args_bytes(&tb, c), 8, REGION_ANY, all, -1);
	if (tb.c_partials) {
		b[k] = gemm_buf(tb.c_partials, 16, REGION_ANY, last, 0);
		b[k++].first = chunks + 1;
		b[k++] = gemm_buf(vadd_bytes, 8, REGION_ANY, all, -1);
	}
	b[k++] = gemm_buf(PLAN_SAVE_BYTES, 8, REGION_ANY, all, -1);
	*n = k;
	return b;
}

TileBytes
plan_gemm_need(const GemmPlan *p, uint64_t kernels)
{
	/* the grid from tile 0 with B's chunks on rotating rows */
	GemmGeom G;
	plan_gemm_geom(&G, p, &(GemmSite){0});
	int n;
	TileBuf *b = fullest_tile(&G, &n);
	/* the most live at one step: the first, or the reduction's first,
	 * where the partials replace the chunks */
	int32_t red = plan_gemm_superstep_steps(p);
	uint64_t first = 0, reduce = 0;
	for (int i = 0; i < n; i++) {
		if (b[i].first == 0)
			first += b[i].bytes;
		if (b[i].first <= red && red <= b[i].last)
			reduce += b[i].bytes;
	}
	uint64_t data = first > reduce ? first : reduce;
	free(b);
	return (TileBytes){kernels + program_bytes(&G), data};
}

uint64_t
plan_gemm_packed_beside(const Chip *c, const GemmPlan *p, uint64_t code,
                        const TileBuf *beside, int nb)
{
	GemmGeom G;
	plan_gemm_geom(&G, p, &(GemmSite){0});
	int n;
	TileBuf *b = fullest_tile(&G, &n);
	if (nb > 0) {
		b = xrealloc(b, (size_t)(n + nb) * sizeof *b);
		for (int i = 0; i < nb; i++) {
			b[n + i] = beside[i];
			b[n + i].first = 0;
			b[n + i].last = INT32_MAX;
			b[n + i].apart = -1;
		}
		n += nb;
	}
	TilePack s;
	plan_pack_init(&s, n);
	uint64_t high = plan_tile_pack(c, c->mem_base + code, b, n, &s, NULL);
	plan_pack_free(&s);
	free(b);
	return high - c->mem_base - code;
}

uint64_t
plan_gemm_packed(const Chip *c, const GemmPlan *p, uint64_t code)
{
	return plan_gemm_packed_beside(c, p, code, NULL, 0);
}

/* Prices p; 0 if its fullest tile's code and data at their peak fit
 * with `kernels` bytes of kernels' code and `held` bytes of the rest of
 * the program (plan_gemm_need within plan_tile_over), else -1; *need the
 * tile. */
static int
plan_gemm_price(const Chip *c, uint64_t kernels, uint64_t held, GemmPlan *p,
                TileBytes *need)
{
	GemmDtype g = gemm_dtype_of(p->dtype);
	p->steps = ceil_div(p->kg, p->kc);
	step_cycles(c, p, p->kc, &p->exchange_cycles, &p->compute_cycles);
	/* the last superstep has what is left of kg */
	uint64_t last_xch, last_call;
	step_cycles(c, p, p->kg - (p->steps - 1) * p->kc, &last_xch,
	            &last_call);
	p->reduce_cycles = reduce_cycles(c, p, g);
	p->cycles = (uint64_t)(p->steps - 1) *
	                (chip_rule(c, TIMING_SYNC_INTERNAL) +
	                 p->exchange_cycles + p->compute_cycles) +
	            chip_rule(c, TIMING_SYNC_INTERNAL) + last_xch + last_call +
	            p->reduce_cycles;
	/* the overlapped superstep, where asked for and allowed: every
	 * superstep but the last runs beside the next one's exchange; an
	 * estimate (the lowering schedules and prices it exactly): the
	 * exchange stretched by a sixteenth by the blocks and windows
	 * (docs/bench-gemm.md: 5 to 5.5% at 4096^3 f16), the five-worker
	 * panels covering it doing 5/6 of the work of six-worker ones at
	 * the kernel formula's ratio, the rest with six */
	if (p->overlap)
		p->overlap =
		    p->steps >= 2 && !p->b_local && !plan_gemm_a_in_place(p) &&
		    (uint64_t)p->pk * p->kg == p->k && p->kg % p->kc == 0;
	/* the narrowest call's (the last row's and column's blocks): every
	 * tile runs as many five-worker panels (xsched.c, schedule_overlap) */
	uint32_t bm_last = p->m - (p->pm - 1) * p->bm,
	         bn_last = p->n - (p->pn - 1) * p->bn;
	uint64_t c5_last = p->overlap ? gemm_tile_cycles(c, g, 5, bm_last,
	                                                 bn_last, p->kc)
	                              : 0,
	         c5 = p->overlap
	                  ? gemm_tile_cycles(c, g, 5, p->bm, p->bn, p->kc)
	                  : 0,
	         c6 = p->compute_cycles,
	         e = p->exchange_cycles + p->exchange_cycles / 16;
	/* and only where the five-worker panels hold twice the exchange (the
	 * scheduler in blocks must fit it in their windows: a margin, as
	 * small exchanges to many receivers stretch more) */
	if (p->overlap && (2 * e > c5_last || c5 <= c6))
		p->overlap = 0;
	if (p->overlap) {
		p->cycles = chip_rule(c, TIMING_SYNC_INTERNAL) +
		            p->exchange_cycles +
		            (uint64_t)(p->steps - 1) *
		                (c6 + e - e * c6 / (c5 ? c5 : 1)) +
		            last_call + p->reduce_cycles;
	}
	*need = plan_gemm_need(p, kernels);
	/* the plan's own bytes, without the kernels */
	uint64_t bytes = plan_tile_need(*need) - kernels;
	p->tile_bytes = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
	return plan_tile_over(c, (TileBytes){need->code + held, need->data})
	           ? -1
	           : 0;
}

/* The cheapest plans so far, cheapest first. */
typedef struct {
	GemmPlan *plan;
	int n, max;
	uint32_t tried;
} Best;

/* Where p goes among the cheapest (b->max: not among them). */
static int
rank(const Best *b, const GemmPlan *p)
{
	int at = b->n;
	while (at > 0 && p->cycles < b->plan[at - 1].cycles)
		at--;
	return at;
}

static void
keep(Best *b, const GemmPlan *p)
{
	int at = rank(b, p);
	if (at >= b->max)
		return;
	int move = (b->n < b->max ? b->n : b->max - 1) - at;
	memmove(&b->plan[at + 1], &b->plan[at], (size_t)move * sizeof *b->plan);
	b->plan[at] = *p;
	if (b->n < b->max)
		b->n++;
}

/* 1 if t's fullest tile fits beside `held` bytes: by its bound, then
 * packed (the placer's packing: the element rule costs bytes) above its
 * code and the held bytes. */
static int
packed_within(const Chip *c, const GemmTry *t, uint64_t held)
{
	return !plan_tile_over(
	           c, (TileBytes){t->need.code + held, t->need.data}) &&
	       plan_gemm_packed(c, &t->plan, t->need.code + held) <=
	           c->mem_end - c->mem_base - t->need.code - held;
}

static void
tried_add(GemmTried *t, const GemmTry *at)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->at = xrealloc(t->at, (size_t)t->cap * sizeof *t->at);
	}
	t->at[t->n++] = *at;
}

void
plan_gemm_tried_free(GemmTried *t)
{
	if (t)
		free(t->at);
	free(t);
}

int
plan_gemm_tried_hold(const Chip *c, const GemmTried *t, uint64_t held,
                     uint64_t *packed)
{
	/* fewer bytes could admit a candidate its price refused */
	if (t && held < t->held)
		return 0;
	for (int i = 0; t && i < t->n; i++) {
		const GemmTry *at = &t->at[i];
		if (!at->beside) /* refused by the buffers beside, either way */
			continue;
		++*packed;
		if (packed_within(c, at, held) != at->admitted)
			return 0;
	}
	return 1;
}

/* The K-panels a superstep tried after `panels` of `all`: the next power
 * of two, then all of them; with `divisors`, also each divisor of all
 * between the powers of two. */
static uint32_t
next_panels(uint32_t panels, uint32_t all, int divisors)
{
	uint32_t pow = 1;
	while (pow <= panels)
		pow *= 2;
	uint32_t next = panels < all && pow > all ? all : pow;
	for (uint32_t d = panels + 1; divisors && d < next && d < all; d++)
		if (all % d == 0)
			return d;
	return next;
}

/* Every grid of one K group: pm from 1 up, pn = the tiles left. */
static void
search_grids(const Chip *c, uint64_t kernels, const PlanHeld *h, uint32_t tiles,
             uint32_t pk, GemmPlan proto, uint32_t b_local_bytes, Best *best)
{
	uint64_t held = h->bytes;
	uint32_t kp = gemm_k_panel(gemm_dtype_of(proto.dtype));
	for (uint32_t pm = 1; pm * pk <= tiles && pm <= proto.m; pm++) {
		uint32_t pn = tiles / pk / pm;
		if (!pn)
			break;
		uint32_t bn = gemm_n_panels(ceil_div(proto.n, pn)) * GEMM_COLS;
		uint32_t bm = ceil_div(proto.m, pm);
		/* K-panels a superstep: the powers of two, then all of kg;
		 * where the overlap is asked for and kg's K-panels are odd,
		 * also their divisors (the overlapped superstep needs every
		 * superstep of one K: qkv's and fc1's 9 K-panels at batch 1
		 * had only the 9 supersteps of 1; an even count has its
		 * powers of two, and at 36 K-panels the planner's estimate
		 * took 12 supersteps over 9 for 1.8% more cycles scheduled,
		 * test_verify's test_memory_model_overlap) */
		uint32_t all = proto.kg / kp;
		for (uint32_t panels = 1; panels <= 64 && panels <= all;
		     panels =
		         next_panels(panels, all, proto.overlap && all % 2)) {
			GemmPlan p = proto;
			p.pm = ceil_div(proto.m, bm);
			p.pn = ceil_div(proto.n, bn); /* no empty column */
			p.bm = bm;
			p.bn = bn;
			p.kc = panels * kp;
			for (int down = 0; down <= (p.pm % 2 == 0); down++)
				for (int local = 0;
				     local <= (b_local_bytes > 0); local++) {
					best->tried++;
					p.pairs_down = (uint8_t)down;
					p.b_local = (uint8_t)local;
					p.overlap = proto.overlap;
					/* the fullest tile packed (the
					 * placer's packing: the element rule
					 * costs bytes) above the code and
					 * what the rest of the program
					 * holds, only for a plan among the
					 * cheapest */
					TileBytes need;
					if (plan_gemm_price(c, kernels, held,
					                    &p, &need) ||
					    (local &&
					     plan_gemm_b_local_bytes(&p) >
					         b_local_bytes) ||
					    rank(best, &p) >= best->max)
						continue;
					GemmTry at = {.plan = p, .need = need};
					at.beside =
					    (uint8_t)(!h->n ||
					              plan_gemm_packed_beside(
					                  c, &p, need.code,
					                  h->buf, h->n) <=
					                  c->mem_end -
					                      c->mem_base -
					                      need.code);
					at.admitted =
					    (uint8_t)(packed_within(c, &at,
					                            held) &&
					              at.beside);
					if (h->tried)
						tried_add(h->tried, &at);
					if (at.admitted)
						keep(best, &p);
				}
		}
	}
}

int
plan_gemm_top(const Chip *c, uint32_t tiles, DType t, uint32_t m, uint32_t n,
              uint32_t k, uint32_t b_local_bytes, int b_made,
              const PlanHeld *held, GemmPlan *out, int max, int *count, Diag *d)
{
	*count = 0;
	if (!m || !n || !k)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "gemm: empty problem %u x %u x %u", m, n, k);
	uint32_t kp = gemm_k_panel(gemm_dtype_of(t));
	Best best = {.plan = out, .max = max};
	uint64_t kernels = plan_kernels_code(c);
	/* pk a power of two, or any up to 8 where asked (PLAN_GEMM_ANY_PK) */
	int any = (b_made & PLAN_GEMM_ANY_PK) != 0;
	for (uint32_t pk = 1; pk <= 32 && pk <= tiles;
	     pk = any && pk < 8 ? pk + 1 : 2 * pk) {
		uint32_t kg = ceil_div(ceil_div(k, pk), kp) * kp;
		if (pk > 1 && (uint64_t)kg * (pk - 1) >= k)
			break; /* the last group would have no K */
		GemmPlan proto = {
		    .dtype = t,
		    .m = m,
		    .n = n,
		    .k = k,
		    .pk = pk,
		    .kg = kg,
		    .b_parts = (uint8_t)((b_made & PLAN_GEMM_B_MADE) != 0),
		    .overlap = (uint8_t)((b_made & PLAN_GEMM_OVERLAP) != 0),
		    .b_host = held->b_host};
		search_grids(c, kernels, held, tiles, pk, proto, b_local_bytes,
		             &best);
	}
	if (!best.n && held->bytes)
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "gemm %u x %u x %u (%s) does not fit %u tiles "
		                "in any plan beside the %llu bytes a tile the "
		                "rest of the program holds%s",
		                m, n, k, dtype_name(t), tiles,
		                (unsigned long long)held->bytes,
		                held->n
		                    ? " and the buffers a draft's tile held "
		                      "beside it"
		                    : "");
	if (!best.n)
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "gemm %u x %u x %u (%s) does not fit %u tiles "
		                "in any plan",
		                m, n, k, dtype_name(t), tiles);
	for (int i = 0; i < best.n; i++)
		out[i].candidates = best.tried;
	*count = best.n;
	return IPU_OK;
}

int
plan_gemm(const Chip *c, uint32_t tiles, DType t, uint32_t m, uint32_t n,
          uint32_t k, uint32_t b_local_bytes, int b_made, const PlanHeld *held,
          GemmPlan *out, Diag *d)
{
	int count;
	return plan_gemm_top(c, tiles, t, m, n, k, b_local_bytes, b_made, held,
	                     out, 1, &count, d);
}

void
plan_gemm_describe(const GemmPlan *p, char *buf, size_t len)
{
	snprintf(buf, len,
	         "gemm %ux%ux%u %s: %u K groups of %u x %u tiles (pairs "
	         "%s%s%s%s%s), C block "
	         "%u x %u, %u superstep%s of K %u; per superstep %llu exchange "
	         "+ %llu compute cycles; reduction %llu; %llu cycles in all; "
	         "%u bytes on the fullest tile",
	         p->m, p->n, p->k, dtype_name(p->dtype), p->pk, p->pm, p->pn,
	         p->pairs_down ? "down columns" : "along rows",
	         p->b_local ? "; B stored on every tile of its column" : "",
	         plan_gemm_b_parts(p) > 1 ? "; B chunks stored in parts" : "",
	         plan_gemm_a_in_place(p) ? "; A read in place" : "",
	         p->overlap ? "; overlapped supersteps" : "", p->bm, p->bn,
	         p->steps, p->steps == 1 ? "" : "s", p->kc,
	         (unsigned long long)p->exchange_cycles,
	         (unsigned long long)p->compute_cycles,
	         (unsigned long long)p->reduce_cycles,
	         (unsigned long long)p->cycles, p->tile_bytes);
}

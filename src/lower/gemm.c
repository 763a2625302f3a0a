/*
 * gemm.c - lowering a GEMM plan (plan/plan.h) to buffers, steps and tensor
 * pieces.
 *
 * Contract: requires a priced GemmPlan and the graph ids of A [M x K],
 * B [K x N] and C [M x N]; adds to the Lowered, for tile
 * (q, i, j) = (q * pm + i) * pn + j of K group q:
 *   buffers  "A chunk" and "B chunk" (receive, used every superstep; no
 *            B chunk with b_local, no A chunk when a grid row is one
 *            tile: the kernel reads A input), "C block" (the output),
 *            "A input"/
 *            "B input" (the chunks this tile stores and sends; with
 *            b_local the B chunks of its column, which it reads),
 *            "kernel arguments"
 *   steps    per superstep s: an exchange (in each group, A chunk (i, s)
 *            in parts u from tiles (i, s + u steps mod pn) to row i; B
 *            chunk (s, j) from tile ((s + b_rows_from) mod pm, j), or
 *            (b_parts) its K-panels in parts u from tiles ((s +
 *            b_rows_from + u steps) mod pm, j), or
 *            each n-panel from where b_stored put it, to column j, each owner
 *            included; no B with b_local) and a compute step (the GEMM
 *            kernel accumulating into C; the first one from zero); with
 *            pk > 1, the reduction: an exchange of the partial C slices
 *            ("C partials") and a vadd per tile
 *   tensors  A, B and C as pieces in the kernel's layouts
 *            (docs/kernel-gemm.md); C as each tile's reduced slice
 * lower_gemm_bias then makes the reduction add a bias row too.
 * Every input element is stored exactly once, but a b_local B once per
 * grid row.
 */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

#include "../kernels/gemm.h"
#include "../kernels/vadd.h"

typedef struct {
	GemmGeom geo; /* the plan on its tiles (plan/gemm_layout.c) */
	Fp8Format fp8_a, fp8_b;
	int fp8_scale;
	int32_t first, last; /* the steps of this GEMM (inputs and C live
	                        throughout) */
	int32_t chunks_last; /* the last superstep's kernel: the A and B
	                        chunks' last step; the partials live after
	                        it, so they share the chunks' bytes */
	int32_t next;        /* the next step to make or (shared) to join */
	int shared;          /* join the steps of an earlier GEMM */
	int32_t *a_rx, *b_rx, *c_blk; /* per tile */
	int32_t *a_rx2, *b_rx2; /* overlapped (GemmPlan.overlap): the second
	                           chunk buffers, of the odd supersteps */
	int32_t *a_in, *b_in;   /* per (group, superstep, i and part, or j and
	                           copy) */
} Gemm;

/* The lowering's Storage for the GEMM's inputs: buffers for the whole
 * program. */
typedef struct {
	Storage st;
	Lowered *l;
} Inputs;

static int32_t
input_buffer(Storage *st, uint32_t tile, uint32_t bytes, uint32_t align,
             MemRegion region, const char *what)
{
	return lower_buffer(((Inputs *)st)->l, tile, bytes, align, region, 0,
	                    INT32_MAX, what);
}

static void
tile_buffers(Lowered *l, Gemm *G)
{
	const GemmGeom *g = &G->geo;
	for (uint32_t q = 0; q < g->pk; q++)
		for (uint32_t i = 0; i < g->pm; i++)
			for (uint32_t j = 0; j < g->pn; j++) {
				uint32_t t = plan_gemm_tile(g, q, i, j);
				GemmTileBuffers b =
				    plan_gemm_tile_buffers(g, q, i, j);
				G->c_blk[t] = lower_buffer(
				    l, t, b.c_block, 16, REGION_INTERLEAVED,
				    G->first, INT32_MAX, "C block");
				if (!g->a_own) {
					G->a_rx[t] = lower_buffer(
					    l, t, b.a_chunk, 16, REGION_ANY,
					    G->first, G->chunks_last,
					    "A chunk");
					l->buf[G->a_rx[t]].apart = G->c_blk[t];
					if (g->p->overlap) {
						G->a_rx2[t] = lower_buffer(
						    l, t, b.a_chunk, 16,
						    REGION_ANY, G->first,
						    G->chunks_last,
						    "A chunk 2");
						l->buf[G->a_rx2[t]].apart =
						    G->c_blk[t];
					}
				}
				if (!g->p->b_local)
					G->b_rx[t] = lower_buffer(
					    l, t, b.b_chunk, 16,
					    REGION_INTERLEAVED, G->first,
					    G->chunks_last, LOWER_B_CHUNK);
				if (!g->p->b_local && g->p->overlap)
					G->b_rx2[t] = lower_buffer(
					    l, t, b.b_chunk, 16,
					    REGION_INTERLEAVED, G->first,
					    G->chunks_last, "B chunk 2");
			}
}

/* The stored chunks (plan_gemm_inputs); a chunk the kernel reads in
 * place is kept apart from its tile's C block. */
static void
input_chunks(Lowered *l, Gemm *G, TensorPlace *ta, TensorPlace *tb)
{
	Inputs in = {{input_buffer}, l};
	plan_gemm_inputs(&G->geo, &in.st, ta, tb, G->a_in, G->b_in);
	const GemmGeom *g = &G->geo;
	for (uint32_t q = 0; g->a_own && q < g->pk; q++)
		for (uint32_t s = 0; s < g->p->steps; s++)
			for (uint32_t i = 0; i < g->pm; i++) {
				uint32_t k0;
				if (!plan_gemm_k_of(g, q, s, &k0))
					continue;
				int32_t b =
				    G->a_in[plan_gemm_a_index(g, q, s, i, 0)];
				l->buf[b].apart = G->c_blk[l->buf[b].tile];
			}
}

/* The GEMM's next step: a new one, or the one an earlier GEMM made that
 * this one joins (its transfers and calls run in the same phase, on other
 * tiles). Returns an index: a new step may move the others. */
static int32_t
next_step(Lowered *l, Gemm *G, StepKind kind, const char *what)
{
	if (!G->shared)
		lower_step(l, kind, what);
	else
		lower_step_tag(l, &l->step[G->next]);
	return G->next++;
}

/* Superstep s's A and B chunk buffers on tile t: overlapped, the odd
 * supersteps' are the second ones. */
static int32_t
a_rx_of(const Gemm *G, uint32_t s, uint32_t t)
{
	return s % 2 && G->a_rx2 ? G->a_rx2[t] : G->a_rx[t];
}

static int32_t
b_rx_of(const Gemm *G, uint32_t s, uint32_t t)
{
	return s % 2 && G->b_rx2 ? G->b_rx2[t] : G->b_rx[t];
}

/* A's chunk (i, s) of group q, in parts, multicast to grid row i. */
static void
send_a(const Gemm *G, Step *x, uint32_t q, uint32_t s)
{
	const GemmGeom *g = &G->geo;
	uint32_t k0, ks = plan_gemm_k_of(g, q, s, &k0);
	uint32_t kp = gemm_k_panel(g->g);
	for (uint32_t i = 0; i < g->pm && !g->a_own; i++)
		for (uint32_t u = 0; u < g->na; u++) {
			uint32_t c0, r0, rows,
			    nc = plan_gemm_a_part(g, q, s, i, u, &c0, &r0,
			                          &rows),
			    m = plan_gemm_rows(g, i);
			if (!nc)
				continue;
			uint32_t rest = ks - c0 * kp;
			Transfer *t = lower_transfer(
			    x, plan_gemm_a_owner(g, q, i, s, u),
			    (BufRef){G->a_in[plan_gemm_a_index(g, q, s, i, u)],
			             0},
			    gemm_a_bytes(g->g, rows,
			                 nc * kp < rest ? nc * kp : rest) /
			        4,
			    g->pn);
			/* a part of some rows has one K-panel: they land
			 * together in the chunk's */
			for (uint32_t j = 0; j < g->pn; j++) {
				t->dst_tile[j] = plan_gemm_tile(g, q, i, j);
				t->dst[j] =
				    (BufRef){a_rx_of(G, s, t->dst_tile[j]),
				             gemm_a_bytes(g->g, m, c0 * kp) +
				                 r0 * GEMM_A_ROW_BYTES};
			}
		}
}

/* B's chunk, or each of its parts, multicast to column j: a run per
 * n-panel of the part (GemmBPart). */
static void
send_b(const Lowered *l, const Gemm *G, Step *x, uint32_t q, uint32_t s)
{
	const GemmGeom *g = &G->geo;
	uint32_t kp = gemm_k_panel(g->g);
	for (uint32_t j = 0; j < g->pn && !g->p->b_local; j++)
		for (uint32_t u = 0; u < g->nb; u++) {
			GemmBPart bp;
			if (!plan_gemm_b_part(g, q, s, j, u, &bp))
				continue;
			int32_t b = G->b_in[plan_gemm_b_index(g, q, s, j, u)];
			uint32_t p0 = (bp.col0 - j * g->p->bn) / GEMM_COLS,
			         runs = ceil_div(bp.rows, kp) == bp.nk
			                    ? 1
			                    : gemm_n_panels(bp.cols),
			         run = gemm_b_bytes(g->g, bp.rows, bp.cols) /
			               runs;
			for (uint32_t r = 0; r < runs; r++) {
				Transfer *t = lower_transfer(
				    x, l->buf[b].tile, (BufRef){b, r * run},
				    run / 4, g->pm);
				for (uint32_t i = 0; i < g->pm; i++) {
					t->dst_tile[i] =
					    plan_gemm_tile(g, q, i, j);
					t->dst[i] = (BufRef){
					    b_rx_of(G, s, t->dst_tile[i]),
					    ((p0 + r) * bp.nk + bp.kp0) *
					        GEMM_B_PANEL_BYTES};
				}
			}
		}
}

static void
multiply(Lowered *l, const Gemm *G, Step *c, uint32_t q, uint32_t s)
{
	const GemmGeom *g = &G->geo;
	uint32_t k0, ks = plan_gemm_k_of(g, q, s, &k0);
	for (uint32_t i = 0; i < g->pm; i++)
		for (uint32_t j = 0; j < g->pn; j++) {
			uint32_t t = plan_gemm_tile(g, q, i, j),
			         m = plan_gemm_rows(g, i),
			         n = plan_gemm_cols(g, j);
			const char *obj[2];
			gemm_objects(g->g, 6, obj);
			KernelCall *k =
			    lower_call(l, c, t, gemm_entry(g->g, 6, m, n, ks),
			               obj[0], GEMM_ARGS_BYTES);
			k->ref[0] = (BufRef){
			    g->a_own ? G->a_in[plan_gemm_a_index(g, q, s, i, 0)]
			             : a_rx_of(G, s, t),
			    0};
			k->ref[1] = (BufRef){
			    g->p->b_local
			        ? G->b_in[plan_gemm_b_index(g, q, s, j, i)]
			        : b_rx_of(G, s, t),
			    0};
			k->ref[2] = (BufRef){G->c_blk[t], 0};
			k->nref = 3;
			k->args = (KernelArgs){
			    KC_GEMM,
			    .u.gemm = {.t = g->g,
			               .bm = m,
			               .bn = n,
			               .bk = ks,
			               .opt = {.zero = s == 0,
			                       .fp8_in = G->fp8_a,
			                       .fp8_w = G->fp8_b,
			                       .fp8_scale = G->fp8_scale}}};
			k->cycles =
			    gemm_tile_cycles(l->chip, g->g, 6, m, n, ks);
			k->macs = (uint64_t)m * n * ks;
			if (k->cycles > c->cycles)
				c->cycles = k->cycles;
		}
}

/* Overlapped (GemmPlan.overlap; every superstep of one K): superstep 0's
 * exchange alone, then per superstep s a compute step whose transfers are
 * superstep s + 1's exchange (into the other chunk buffers), marked with
 * an empty GemmWindows: xsched_run chooses its five-worker panels and
 * schedules the exchange in their windows (xsched_overlap). */
static void
superstep_overlapped(Lowered *l, Gemm *G, uint32_t s)
{
	if (s == 0) {
		int32_t xi =
		    next_step(l, G, STEP_EXCHANGE, "gemm: A and B chunks");
		for (uint32_t q = 0; q < G->geo.pk; q++) {
			send_a(G, &l->step[xi], q, 0);
			send_b(l, G, &l->step[xi], q, 0);
		}
	}
	int32_t ci = next_step(l, G, STEP_COMPUTE,
	                       s + 1 < G->geo.p->steps
	                           ? "gemm: multiply beside the next chunks"
	                           : "gemm: multiply");
	Step *c = &l->step[ci];
	uint32_t k0;
	for (uint32_t q = 0; q < G->geo.pk; q++)
		if (plan_gemm_k_of(&G->geo, q, s, &k0))
			multiply(l, G, c, q, s);
	if (s + 1 < G->geo.p->steps) {
		for (uint32_t q = 0; q < G->geo.pk; q++) {
			send_a(G, c, q, s + 1);
			send_b(l, G, c, q, s + 1);
		}
		if (c->nxfer) {
			c->gwin = xcalloc(1, sizeof *c->gwin);
			for (int i = 0; i < c->ncall; i++) {
				KernelCall *k = &c->call[i];
				k->args.u.gemm.opt.five = 1;
				k->args_bytes = GEMM_OVERLAP_ARGS_BYTES;
				l->buf[k->args_at].bytes =
				    GEMM_OVERLAP_ARGS_BYTES;
			}
		}
	}
}

static void
superstep(Lowered *l, Gemm *G, uint32_t s)
{
	if (G->geo.p->overlap) {
		superstep_overlapped(l, G, s);
		return;
	}
	int32_t xi = next_step(l, G, STEP_EXCHANGE, "gemm: A and B chunks");
	int32_t ci = next_step(l, G, STEP_COMPUTE, "gemm: multiply");
	Step *x = &l->step[xi], *c = &l->step[ci];
	const GemmGeom *g = &G->geo;
	for (uint32_t q = 0; q < g->pk; q++) {
		uint32_t k0;
		if (!plan_gemm_k_of(g, q, s, &k0))
			continue;
		send_a(G, x, q, s);
		send_b(l, G, x, q, s);
	}
	for (uint32_t q = 0; q < g->pk; q++) {
		uint32_t k0;
		if (plan_gemm_k_of(g, q, s, &k0))
			multiply(l, G, c, q, s);
	}
}

/* pk > 1: every tile gathers the other groups' partials of its slice and
 * adds them; the slices are the output. The partials go in rounds: in
 * round d group q receives from group q + d, so that in every round each
 * tile sends one slice and receives one (the scheduler places transfers
 * greedily in the order given; tile by tile, a sender waiting for one
 * receiver delayed the rest). Partial d - 1 of a slice is group q + d's. */
static void
reduce(Lowered *l, Gemm *G)
{
	int32_t xi = next_step(l, G, STEP_EXCHANGE, "gemm: C partials");
	int32_t ci = next_step(l, G, STEP_COMPUTE, "gemm: add partials");
	Step *x = &l->step[xi], *c = &l->step[ci];
	const GemmGeom *g = &G->geo;
	int32_t *rx = xcalloc(l->tiles, sizeof *rx);
	for (uint32_t d = 1; d < g->pk; d++)
		for (uint32_t q = 0; q < g->pk; q++)
			for (uint32_t i = 0; i < g->pm; i++)
				for (uint32_t j = 0; j < g->pn; j++) {
					uint32_t t = plan_gemm_tile(g, q, i, j);
					GemmCSlice sl;
					uint32_t bytes =
					    plan_gemm_c_slice(g, i, j, q, &sl);
					if (!bytes)
						continue;
					if (d == 1) {
						/* vadd loads a partial and
						 * the C block in one bundle */
						rx[t] = lower_buffer(
						    l, t,
						    plan_gemm_tile_buffers(g, q,
						                           i, j)
						        .c_partials,
						    16, REGION_ANY,
						    G->chunks_last + 1, G->last,
						    "C partials");
						l->buf[rx[t]].apart =
						    G->c_blk[t];
					}
					uint32_t src = plan_gemm_tile(
					    g, (q + d) % g->pk, i, j);
					for (uint32_t e = 0; e < sl.nseg; e++) {
						Transfer *tr = lower_transfer(
						    x, src,
						    (BufRef){
						        G->c_blk[src],
						        sl.off +
						            e * sl.seg_stride},
						    sl.seg_bytes / 4, 1);
						tr->dst_tile[0] = t;
						tr->dst[0] = (BufRef){
						    rx[t],
						    (d - 1) * bytes +
						        e * sl.seg_bytes};
					}
				}
	for (uint32_t q = 0; q < g->pk; q++)
		for (uint32_t i = 0; i < g->pm; i++)
			for (uint32_t j = 0; j < g->pn; j++) {
				uint32_t t = plan_gemm_tile(g, q, i, j);
				GemmCSlice sl;
				uint32_t bytes =
				    plan_gemm_c_slice(g, i, j, q, &sl);
				if (!bytes)
					continue;
				uint32_t nc = g->p->norm_cols;
				KernelCall *k =
				    lower_call(l, c, t,
				               vadd_entry(g->g == GEMM_F32,
				                          nc ? VADD_NORM : 0),
				               "vadd",
				               nc ? VADD_NORM_ARGS_BYTES
				                  : VADD_ARGS_BYTES);
				k->ref[0] = (BufRef){G->c_blk[t], sl.off};
				k->ref[1] = (BufRef){rx[t], 0};
				k->nref = 2;
				k->args = (KernelArgs){
				    KC_VADD,
				    .u.vadd = {.stride = bytes,
				               .nsrc = g->pk - 1,
				               .atoms = sl.seg_bytes / 8,
				               .nseg = sl.nseg,
				               .dst_seg = sl.seg_stride,
				               .src_seg = sl.seg_bytes,
				               .norm_cols = nc}};
				k->cycles =
				    nc ? vadd_norm_cycles(l->chip,
				                          sl.seg_bytes / 8,
				                          g->pk - 1, sl.nseg)
				       : vadd_cycles(l->chip, sl.seg_bytes / 8,
				                     g->pk - 1, sl.nseg, 0);
				if (k->cycles > c->cycles)
					c->cycles = k->cycles;
			}
	free(rx);
}

int
lower_gemm(Lowered *l, const GemmPlan *p, const GemmOperands *o, Diag *d)
{
	Gemm G = {.fp8_a = dtype_fp8_format(p->dtype),
	          .fp8_b = dtype_fp8_format(o->dtype_b),
	          .fp8_scale = o->fp8_scale};
	GemmSite site = o->site;
	site.tiles_all = l->tiles;
	plan_gemm_geom(&G.geo, p, &site);
	const GemmGeom *g = &G.geo;
	/* supersteps of an exchange and a multiply, then the reduction's
	 * exchange and add */
	G.shared = o->step_base >= 0;
	G.first = G.next = G.shared ? o->step_base : l->nstep;
	G.last = G.first + plan_gemm_program_steps(p) - 1;
	G.chunks_last = G.first + plan_gemm_superstep_steps(p) - 1;
	uint32_t tiles = g->pk * g->pm * g->pn;
	if (site.tile_base + tiles > l->tiles ||
	    (G.shared && G.last >= l->nstep))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "gemm plan needs %u x %u x %u tiles from tile "
		                "%u (and steps %d..%d), the program has %u "
		                "tiles (and %d steps)",
		                g->pk, g->pm, g->pn, site.tile_base, G.first,
		                G.last, l->tiles, l->nstep);
	if (p->overlap && (G.shared || p->steps < 2 || p->b_local || g->a_own ||
	                   (uint64_t)p->pk * p->kg != p->k || p->kg % p->kc))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "gemm lowering: the overlapped superstep needs "
		                "2 or more supersteps of one K, A and B "
		                "exchanged, and steps of its own");
	G.a_rx = xcalloc(l->tiles, sizeof *G.a_rx);
	G.b_rx = xcalloc(l->tiles, sizeof *G.b_rx);
	G.c_blk = xcalloc(l->tiles, sizeof *G.c_blk);
	if (p->overlap) {
		G.a_rx2 = xcalloc(l->tiles, sizeof *G.a_rx2);
		G.b_rx2 = xcalloc(l->tiles, sizeof *G.b_rx2);
	}
	G.a_in =
	    xcalloc((size_t)g->pk * p->steps * g->pm * g->na, sizeof *G.a_in);
	G.b_in =
	    xcalloc((size_t)g->pk * p->steps * g->pn * g->nb, sizeof *G.b_in);
	tile_buffers(l, &G);
	input_chunks(l, &G, o->a, o->b);
	for (uint32_t s = 0; s < p->steps; s++)
		superstep(l, &G, s);
	if (g->pk > 1)
		reduce(l, &G);
	plan_gemm_c_pieces(g, G.c_blk, o->c);
	free(G.a_rx);
	free(G.b_rx);
	free(G.c_blk);
	free(G.a_rx2);
	free(G.b_rx2);
	free(G.a_in);
	free(G.b_in);
	if (G.next - 1 != G.last)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "gemm lowering: %d steps made, %d expected "
		                "(an internal error)",
		                G.next - G.first, G.last - G.first + 1);
	return IPU_OK;
}

/* The index of c's piece that reduction call k adds into (its dst), or
 * c->npiece. */
static int
dst_piece(const TensorPlace *c, const KernelCall *k)
{
	int p = 0;
	while (p < c->npiece && (c->piece[p].at.buf != k->ref[0].buf ||
	                         c->piece[p].at.offset != k->ref[0].offset))
		p++;
	return p;
}

/* 1 if piece p of c exists and x's piece p has its rows and padding (a
 * mirror of it laid out as it). */
static int
laid_as(const TensorPlace *c, const TensorPlace *x, int p)
{
	return p < c->npiece && p < x->npiece &&
	       x->piece[p].rows == c->piece[p].rows &&
	       x->piece[p].pad_rows == c->piece[p].pad_rows &&
	       x->piece[p].pad_cols == c->piece[p].pad_cols;
}

/* Reduction call k of step s becomes vadd_entry's `bias` variant, its
 * argument block `bytes`, its cycles and the step's from the formula. */
static void
vadd_variant(Lowered *l, Step *s, KernelCall *k, int bias, uint32_t bytes)
{
	const VaddCall *v = &k->args.u.vadd;
	k->kernel = vadd_entry(0, bias);
	k->object = vadd_object(bias);
	k->args_bytes = bytes;
	l->buf[k->args_at].bytes = bytes;
	k->cycles = vadd_cycles(l->chip, v->atoms, v->nsrc, v->nseg, bias);
	if (k->cycles > s->cycles)
		s->cycles = k->cycles;
}

int
lower_gemm_bias(Lowered *l, int32_t step, const TensorPlace *c,
                const TensorPlace *bias, Diag *d)
{
	Step *s = &l->step[step];
	s->cycles = 0;
	for (int i = 0; i < s->ncall; i++) {
		KernelCall *k = &s->call[i];
		int p = dst_piece(c, k);
		if (k->args.kind != KC_VADD || p == c->npiece ||
		    c->dtype != DT_F16)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "gemm bias: tile %u's reduction has no "
			                "f16 piece of C (an internal error)",
			                k->tile);
		/* a segment a panel: its rows, the block's rows apart in C,
		 * back to back in the partials, one bias row apart */
		const Piece *pc = &c->piece[p], *pb = &bias->piece[p];
		uint32_t row = GEMM_COLS * 2;
		VaddCall *v = &k->args.u.vadd;
		v->atoms = pc->rows * VADD_ROW_ATOMS;
		v->nseg = pc->pad_cols / GEMM_COLS;
		v->dst_seg = pc->pad_rows * row;
		v->src_seg = pc->rows * row;
		v->bias_seg = pb->pad_rows * row;
		v->has_bias = 1;
		k->ref[2] = pb->at;
		k->nref = 3;
		vadd_variant(l, s, k, 1, VADD_BIAS_ARGS_BYTES);
	}
	return IPU_OK;
}

/* What a reduction's last pass takes after the bias (lower_gemm_bias),
 * or after the row division (`norm`: no bias), its fourth operand: a
 * place laid out as C's pieces (h's to add, or q's to write), each call
 * checked by `fits` (with `arg`; NULL: nothing beyond the bias and the
 * layout), then `take` sets the call's flags and `variant`
 * (vadd_variant's) its kernel. */
typedef struct {
	const char *name, *what; /* the internal error when a call does
	                            not fit */
	int (*fits)(const VaddCall *v, const void *arg);
	void (*take)(VaddCall *v, const void *arg);
	int variant;
	uint32_t args_bytes;
	int norm;
} FourthOperand;

/* Every vadd call of compute step `step` gets x's piece laid out as its
 * piece of c as its fourth operand, as f says. */
static int
reduction_fourth(Lowered *l, int32_t step, const TensorPlace *c,
                 const TensorPlace *x, const FourthOperand *f, const void *arg,
                 Diag *d)
{
	Step *s = &l->step[step];
	s->cycles = 0;
	for (int i = 0; i < s->ncall; i++) {
		KernelCall *k = &s->call[i];
		int p = dst_piece(c, k);
		VaddCall *v = &k->args.u.vadd;
		if (k->args.kind != KC_VADD ||
		    !(f->norm ? v->norm_cols : v->has_bias) ||
		    !laid_as(c, x, p) || (f->fits && !f->fits(v, arg)))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "%s: tile %u's reduction has %s (an "
			                "internal error)",
			                f->name, k->tile, f->what);
		f->take(v, arg);
		if (f->norm) /* no bias row: dst, which the pass reads */
			k->ref[2] = k->ref[0];
		k->ref[3] = x->piece[p].at;
		k->nref = 4;
		vadd_variant(l, s, k, f->variant, f->args_bytes);
	}
	return IPU_OK;
}

static void
res_take(VaddCall *v, const void *arg)
{
	(void)arg;
	v->has_res = 1;
}

int
lower_gemm_residual(Lowered *l, int32_t step, const TensorPlace *c,
                    const TensorPlace *res, Diag *d)
{
	static const FourthOperand f = {"gemm residual",
	                                "no biased piece of C laid out as h's",
	                                NULL,
	                                res_take,
	                                2,
	                                VADD_BIAS_ARGS_BYTES,
	                                0};
	return reduction_fourth(l, step, c, res, &f, NULL, d);
}

/* lower_gemm_gelu's and lower_gemm_norm_cast's f8 format: the scale,
 * F152 */
typedef struct {
	int fp8_scale, f152;
} GeluCast;

static int
gelu_fits(const VaddCall *v, const void *arg)
{
	const GeluCast *g = arg;
	return !v->has_res && v->nsrc % 3 == 0 && g->fp8_scale >= -32 &&
	       g->fp8_scale <= 31;
}

static void
f8_take(VaddCall *v, const GeluCast *g)
{
	v->f152 = (uint8_t)g->f152;
	v->fp8_scale = (int8_t)g->fp8_scale;
}

static void
gelu_take(VaddCall *v, const void *arg)
{
	v->has_gelu = 1;
	f8_take(v, arg);
}

int
lower_gemm_gelu(Lowered *l, int32_t step, const TensorPlace *c,
                const TensorPlace *q, int fp8_scale, int f152, Diag *d)
{
	static const FourthOperand f = {
	    "gemm gelu",
	    "no biased piece of C laid out as q's with sources a multiple of "
	    "3",
	    gelu_fits,
	    gelu_take,
	    3,
	    VADD_GELU_ARGS_BYTES,
	    0};
	GeluCast g = {fp8_scale, f152};
	return reduction_fourth(l, step, c, q, &f, &g, d);
}

static int
norm_cast_fits(const VaddCall *v, const void *arg)
{
	const GeluCast *g = arg;
	return v->dst_seg % 2 == 0 && g->fp8_scale >= -32 && g->fp8_scale <= 31;
}

static void
norm_cast_take(VaddCall *v, const void *arg)
{
	v->norm_f8 = 1;
	f8_take(v, arg);
}

int
lower_gemm_norm_cast(Lowered *l, int32_t step, const TensorPlace *c,
                     const TensorPlace *q, int fp8_scale, int f152, Diag *d)
{
	static const FourthOperand f = {
	    "gemm norm cast",
	    "no dividing piece of C laid out as q's with an even dst_seg",
	    norm_cast_fits,
	    norm_cast_take,
	    VADD_NORM_F8,
	    VADD_NORM_F8_ARGS_BYTES,
	    1};
	GeluCast g = {fp8_scale, f152};
	return reduction_fourth(l, step, c, q, &f, &g, d);
}

uint64_t
lower_gemm_six_cycles(const Lowered *l, const Step *s)
{
	uint64_t most = 0;
	for (int i = 0; i < s->ncall; i++) {
		const GemmCall *g = &s->call[i].args.u.gemm;
		uint64_t t =
		    gemm_tile_cycles(l->chip, g->t, 6, g->bm, g->bn, g->bk);
		if (t > most)
			most = t;
	}
	return most;
}

void
lower_gemm_six(Lowered *l, Step *s)
{
	for (int i = 0; i < s->ncall; i++) {
		KernelCall *kc = &s->call[i];
		GemmCall *g = &kc->args.u.gemm;
		g->opt.five = 0;
		g->opt.plain5 = 0;
		kc->args_bytes = GEMM_ARGS_BYTES;
		l->buf[kc->args_at].bytes = GEMM_ARGS_BYTES;
		kc->cycles =
		    gemm_tile_cycles(l->chip, g->t, 6, g->bm, g->bn, g->bk);
	}
	s->cycles = lower_gemm_six_cycles(l, s);
	gemm_windows_free(s->gwin);
	free(s->gwin);
	s->gwin = NULL;
	lower_step_blocks(s, 0, NULL, 0);
}

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
 * Every input element is stored exactly once, but a b_local B once per
 * grid row.
 */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

#include "../kernels/gemm.h"
#include "../kernels/vadd.h"

static uint32_t
ceil_div(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

static uint32_t
min_u(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* param: 0 dtype, 1 rows, 2 cols, 3 k, 4 zero, 5 A's f8 format, 6 f8
 * scale (two's complement), 7 B's f8 format; ref: A, B, C. */
static void
fill_gemm_args(const KernelCall *c, const uint32_t *addr, uint8_t *out)
{
	GemmOptions opt = {.zero = (int)c->param[4],
	                   .fp8_in = (GemmFp8Format)c->param[5],
	                   .fp8_w = (GemmFp8Format)c->param[7],
	                   .fp8_scale = (int32_t)c->param[6]};
	gemm_args_fill((GemmDtype)c->param[0], c->param[1], c->param[2],
	               c->param[3], addr[0], addr[1], addr[2], &opt, out);
}

/* param: 0 f32, 1 stride, 2 nsrc, 3 atoms, 4 nseg, 5 dst_seg, 6 src_seg;
 * ref: dst, src. */
static void
fill_vadd_args(const KernelCall *c, const uint32_t *addr, uint8_t *out)
{
	vadd_args_fill(addr[0], addr[1], c->param[1], c->param[2], c->param[3],
	               c->param[4], c->param[5], c->param[6], out);
}

typedef struct {
	const GemmPlan *p;
	GemmDtype g;
	GemmFp8Format fp8_a, fp8_b;
	int fp8_scale;
	int ta, tb; /* A, B are the transposes of their tensors */
	uint32_t a_row0, b_row0, c_row0; /* the batch's rows in the views */
	int32_t first, last; /* the steps of this GEMM: the receive buffers'
	                        lifetime (inputs and C live throughout) */
	int32_t next;        /* the next step to make or (shared) to join */
	int shared;          /* join the steps of an earlier GEMM */
	uint32_t tile_base;  /* tile (0, 0, 0) of the grid */
	uint32_t *b_stored;  /* B's chunks stored over all the tiles, in
	                        parts: GemmOperands.b_stored */
	uint32_t b_times;    /* GemmOperands.b_times */
	uint32_t b_rows_from, tiles_all;
	uint32_t pm, pn, pk;
	uint32_t na; /* parts of an A chunk */
	int a_own;   /* A's chunks read where they are stored
	                (plan_gemm_a_in_place) */
	uint32_t nb; /* copies of a B chunk: pm (b_local); its parts, each
	                stored apart (b_stored; b_parts: plan_gemm_b_parts);
	                or 1 */
	int32_t *a_rx, *b_rx, *c_blk; /* per tile */
	int32_t *a_in, *b_in; /* per (group, superstep, i and part, or j and
	                         copy) */
} Gemm;

static uint32_t
tile_of(const Gemm *G, uint32_t q, uint32_t i, uint32_t j)
{
	uint32_t group = G->tile_base + q * G->pm * G->pn;
	if (G->p->pairs_down) /* pm is even: (i, j) and (i ^ 1, j) a pair */
		return group + (i / 2) * 2 * G->pn + 2 * j + i % 2;
	return group + i * G->pn + j;
}

/* The tile that stores B's chunk (s, j) of group q, or its K-part u, and
 * multicasts it to column j: a tile of the column, on a row rotating
 * with s (part u steps rows further, as A's parts along a row); or
 * (b_stored) for each n-panel, the tile storing the fewest bytes of
 * weights so far: of the column, when the grid covers at least half of
 * the chip (the multicast then leaves from inside the column, as the plan
 * prices it), else of the whole chip (a small GEMM's weights would pile
 * up on its few tiles). */
static uint32_t
b_owner(const Gemm *G, uint32_t q, uint32_t s, uint32_t j, uint32_t u,
        uint32_t bytes)
{
	uint32_t rot = (G->b_rows_from + s + u * G->p->steps) % G->pm;
	if (!G->b_stored)
		return tile_of(G, q, rot, j);
	bytes *= G->b_times;
	if (2 * G->pk * G->pm * G->pn < G->tiles_all)
		return lower_least_stored(G->b_stored, G->tiles_all, bytes);
	uint32_t best = tile_of(G, q, rot, j);
	for (uint32_t i = 1; i < G->pm; i++) {
		uint32_t t = tile_of(G, q, (rot + i) % G->pm, j);
		if (G->b_stored[t] < G->b_stored[best])
			best = t;
	}
	G->b_stored[best] += bytes;
	return best;
}

/* A's chunk (i, s) of group q is stored in G->na parts of its K-panels
 * (plan_gemm_a_parts), part u on tile (q, i, (s + u steps) mod pn), so
 * that the chunks spread over the whole grid row; each part is
 * multicast to the row on its own. */
static uint32_t
a_owner(const Gemm *G, uint32_t q, uint32_t i, uint32_t s, uint32_t u)
{
	return tile_of(G, q, i, (s + u * G->p->steps) % G->pn);
}

/* Part u of nk K-panels split `parts` ways: its panel count, *first its
 * first. */
static uint32_t
k_part(uint32_t nk, uint32_t parts, uint32_t u, uint32_t *first)
{
	*first = u * (nk / parts) + (u < nk % parts ? u : nk % parts);
	return nk / parts + (u < nk % parts);
}

static size_t
a_index(const Gemm *G, uint32_t q, uint32_t s, uint32_t i, uint32_t u)
{
	return (((size_t)q * G->p->steps + s) * G->pm + i) * G->na + u;
}

static size_t
b_index(const Gemm *G, uint32_t q, uint32_t s, uint32_t j, uint32_t i)
{
	return (((size_t)q * G->p->steps + s) * G->pn + j) * G->nb + i;
}

static uint32_t
rows_of(const Gemm *G, uint32_t i)
{
	return min_u(G->p->bm, G->p->m - i * G->p->bm);
}

static uint32_t
cols_of(const Gemm *G, uint32_t j)
{
	return min_u(G->p->bn, G->p->n - j * G->p->bn);
}

/* K of group q in superstep s (0: nothing left), from *k0 on. */
static uint32_t
k_of(const Gemm *G, uint32_t q, uint32_t s, uint32_t *k0)
{
	uint32_t start = q * G->p->kg + s * G->p->kc;
	uint32_t end = min_u((q + 1) * G->p->kg, G->p->k);
	*k0 = start;
	return start < end ? min_u(G->p->kc, end - start) : 0;
}

static void
tile_buffers(Lowered *l, Gemm *G)
{
	GemmDtype g = G->g;
	for (uint32_t q = 0; q < G->pk; q++)
		for (uint32_t i = 0; i < G->pm; i++)
			for (uint32_t j = 0; j < G->pn; j++) {
				uint32_t t = tile_of(G, q, i, j),
				         m = rows_of(G, i), n = cols_of(G, j),
				         kc = G->p->kc;
				/* a slice by rows (reduce) is a piece whose
				 * padded panels run past the block by its
				 * first row */
				G->c_blk[t] = lower_buffer(
				    l, t,
				    gemm_c_bytes(g, m, n) + gemm_c_tail(g) +
				        (G->pk > 1 ? gemm_c_bytes(g, m, 16)
				                   : 0),
				    16, REGION_INTERLEAVED, G->first, INT32_MAX,
				    "C block");
				if (!G->a_own) {
					G->a_rx[t] = lower_buffer(
					    l, t,
					    gemm_a_bytes(g, m, kc) +
					        GEMM_A_TAIL,
					    16, REGION_ANY, G->first, G->last,
					    "A chunk");
					l->buf[G->a_rx[t]].apart = G->c_blk[t];
				}
				if (!G->p->b_local)
					G->b_rx[t] = lower_buffer(
					    l, t, gemm_b_bytes(g, kc, n), 16,
					    REGION_INTERLEAVED, G->first,
					    G->last, "B chunk");
			}
}

/* A piece of an operand (or of C), its block's rows moved down by row0
 * (the batch's first row in the tensor's 2-D view): of its tensor as it
 * is, or (transposed) the tensor's block is the operand block's
 * transpose. */
static void
operand_piece(TensorPlace *tp, int transposed, uint32_t row0, Piece p)
{
	if (transposed) {
		p = (Piece){.tile = p.tile,
		            .at = p.at,
		            .row0 = p.col0,
		            .rows = p.cols,
		            .col0 = p.row0,
		            .cols = p.rows,
		            .pad_rows = p.pad_rows,
		            .pad_cols = p.pad_cols,
		            .format = p.format == PF_GEMM_B ? PF_GEMM_B_T
		                                            : PF_ROWMAJOR_T};
	}
	p.row0 += row0;
	*lower_piece(tp) = p;
}

/* The stored chunks and their tensor pieces. A's chunk (q, i, s) is kept
 * in the kernel's A layout: one row-major [rows x K-panel] block per
 * panel. */

/* B's chunk (s, j) of group q, or its part u: a block of B whose
 * K-panels are [kp0, kp0 + its own) of the chunk's nk, which the chunk's
 * layout (n-panel outer, K-panel inner) holds in a run per n-panel, one
 * run when it has all nk. Parts: (b_stored) an n-panel by at most
 * B_PART_KPANELS K-panels, (b_parts) every n-panel by part u of the
 * K-panels. 0 if part u is empty. */
enum { B_PART_KPANELS = 4 };
typedef struct {
	uint32_t row0, rows, col0, cols;
	uint32_t kp0, nk;
} BPart;

static uint32_t
b_kparts(const Gemm *G)
{
	return ceil_div(ceil_div(G->p->kc, gemm_k_panel(G->g)), B_PART_KPANELS);
}

static int
b_part(const Gemm *G, uint32_t q, uint32_t s, uint32_t j, uint32_t u, BPart *bp)
{
	uint32_t kp = gemm_k_panel(G->g), k0, ks = k_of(G, q, s, &k0),
	         nk = ceil_div(ks, kp), first = 0, n = nk;
	*bp = (BPart){k0, ks, j * G->p->bn, cols_of(G, j), 0, nk};
	if (G->b_stored) {
		uint32_t kq = b_kparts(G), np = u / kq;
		first = u % kq * B_PART_KPANELS;
		if (16 * np >= bp->cols || first >= nk)
			return 0;
		n = B_PART_KPANELS;
		bp->col0 += 16 * np;
		bp->cols = min_u(16, bp->cols - 16 * np);
	} else if (!G->p->b_local) {
		n = k_part(nk, G->nb, u, &first);
		if (!n)
			return 0;
	}
	bp->kp0 = first;
	bp->row0 = k0 + first * kp;
	bp->rows = min_u(n * kp, ks - first * kp);
	return 1;
}

/* Copy or part i of B's chunk (s, j) of group q: its buffer and piece. */
static void
b_chunk(Lowered *l, const Gemm *G, TensorPlace *tb, uint32_t q, uint32_t s,
        uint32_t j, uint32_t i)
{
	BPart bp;
	if (!b_part(G, q, s, j, i, &bp))
		return;
	uint32_t kp = gemm_k_panel(G->g),
	         bytes = gemm_b_bytes(G->g, bp.rows, bp.cols),
	         owner = G->p->b_local
	                     ? tile_of(G, q, i, j)
	                     : b_owner(G, q, s, j, G->b_stored ? 0 : i, bytes);
	int32_t b =
	    lower_buffer(l, owner, bytes, 16,
	                 G->p->b_local ? REGION_INTERLEAVED : REGION_ANY, 0,
	                 INT32_MAX, "B input");
	G->b_in[b_index(G, q, s, j, i)] = b;
	operand_piece(tb, G->tb, G->b_row0,
	              (Piece){.tile = owner,
	                      .at = {b, 0},
	                      .row0 = bp.row0,
	                      .rows = bp.rows,
	                      .col0 = bp.col0,
	                      .cols = bp.cols,
	                      .pad_rows = ceil_div(bp.rows, kp) * kp,
	                      .pad_cols = ceil_div(bp.cols, 16) * 16,
	                      .format = PF_GEMM_B});
}

static void
input_chunks(Lowered *l, Gemm *G, TensorPlace *ta, TensorPlace *tb)
{
	GemmDtype g = G->g;
	uint32_t kp = gemm_k_panel(g);
	for (uint32_t q = 0; q < G->pk; q++)
		for (uint32_t s = 0; s < G->p->steps; s++) {
			uint32_t k0, ks = k_of(G, q, s, &k0);
			if (!ks)
				continue;
			uint32_t nk = ceil_div(ks, kp);
			for (uint32_t i = 0; i < G->pm; i++)
				for (uint32_t u = 0; u < G->na; u++) {
					uint32_t c0,
					    nc = k_part(nk, G->na, u, &c0);
					if (!nc)
						continue;
					uint32_t owner = a_owner(G, q, i, s, u),
					         m = rows_of(G, i);
					/* read in place: the kernel's
					 * tail, its C block apart */
					int32_t b = lower_buffer(
					    l, owner,
					    gemm_a_bytes(
					        g, m,
					        min_u(nc * kp, ks - c0 * kp)) +
					        (G->a_own ? GEMM_A_TAIL : 0),
					    16, REGION_ANY, 0, INT32_MAX,
					    "A input");
					if (G->a_own)
						l->buf[b].apart =
						    G->c_blk[owner];
					G->a_in[a_index(G, q, s, i, u)] = b;
					for (uint32_t c = c0; c < c0 + nc; c++)
						operand_piece(
						    ta, G->ta, G->a_row0,
						    (Piece){
						        .tile = owner,
						        .at =
						            {b,
						             (c - c0) * m *
						                 GEMM_A_ROW_BYTES},
						        .row0 = i * G->p->bm,
						        .rows = m,
						        .col0 = k0 + c * kp,
						        .cols = min_u(
						            kp, ks - c * kp),
						        .pad_rows = m,
						        .pad_cols = kp,
						        .format = PF_ROWMAJOR});
				}
			/* B's chunk (s, j): on its owner, or (b_local) on
			 * every tile of column j, where the kernel reads it,
			 * or (b_stored) each n-panel i on its own owner */
			for (uint32_t j = 0; j < G->pn; j++)
				for (uint32_t i = 0; i < G->nb; i++)
					b_chunk(l, G, tb, q, s, j, i);
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

static void
superstep(Lowered *l, Gemm *G, uint32_t s)
{
	GemmDtype g = G->g;
	int32_t xi = next_step(l, G, STEP_EXCHANGE, "gemm: A and B chunks");
	int32_t ci = next_step(l, G, STEP_COMPUTE, "gemm: multiply");
	Step *x = &l->step[xi], *c = &l->step[ci];
	for (uint32_t q = 0; q < G->pk; q++) {
		uint32_t k0, ks = k_of(G, q, s, &k0);
		if (!ks)
			continue;
		uint32_t kp = gemm_k_panel(g), nk = ceil_div(ks, kp);
		for (uint32_t i = 0; i < G->pm && !G->a_own; i++)
			for (uint32_t u = 0; u < G->na; u++) {
				uint32_t c0, nc = k_part(nk, G->na, u, &c0),
				             m = rows_of(G, i);
				if (!nc)
					continue;
				Transfer *t = lower_transfer(
				    x, a_owner(G, q, i, s, u),
				    (BufRef){G->a_in[a_index(G, q, s, i, u)],
				             0},
				    gemm_a_bytes(g, m,
				                 min_u(nc * kp, ks - c0 * kp)) /
				        4,
				    G->pn);
				for (uint32_t j = 0; j < G->pn; j++) {
					t->dst_tile[j] = tile_of(G, q, i, j);
					t->dst[j] = (BufRef){
					    G->a_rx[t->dst_tile[j]],
					    gemm_a_bytes(g, m, c0 * kp)};
				}
			}
		/* B's chunk, or each of its parts, multicast to column j: a
		 * run per n-panel of the part (BPart) */
		for (uint32_t j = 0; j < G->pn && !G->p->b_local; j++)
			for (uint32_t u = 0; u < G->nb; u++) {
				BPart bp;
				if (!b_part(G, q, s, j, u, &bp))
					continue;
				int32_t b = G->b_in[b_index(G, q, s, j, u)];
				uint32_t p0 = (bp.col0 - j * G->p->bn) / 16,
				         runs = ceil_div(bp.rows, kp) == bp.nk
				                    ? 1
				                    : gemm_n_panels(bp.cols),
				         run =
				             gemm_b_bytes(g, bp.rows, bp.cols) /
				             runs;
				for (uint32_t r = 0; r < runs; r++) {
					Transfer *t =
					    lower_transfer(x, l->buf[b].tile,
					                   (BufRef){b, r * run},
					                   run / 4, G->pm);
					for (uint32_t i = 0; i < G->pm; i++) {
						t->dst_tile[i] =
						    tile_of(G, q, i, j);
						t->dst[i] = (BufRef){
						    G->b_rx[t->dst_tile[i]],
						    ((p0 + r) * bp.nk +
						     bp.kp0) *
						        GEMM_B_PANEL_BYTES};
					}
				}
			}
	}
	for (uint32_t q = 0; q < G->pk; q++) {
		uint32_t k0, ks = k_of(G, q, s, &k0);
		if (!ks)
			continue;
		for (uint32_t i = 0; i < G->pm; i++)
			for (uint32_t j = 0; j < G->pn; j++) {
				uint32_t t = tile_of(G, q, i, j),
				         m = rows_of(G, i), n = cols_of(G, j);
				KernelCall *k = lower_call(
				    l, c, t, gemm_entry(g),
				    g == GEMM_F8 ? "gemm_f8" : "gemm",
				    GEMM_ARGS_BYTES);
				k->ref[0] = (BufRef){
				    G->a_own ? G->a_in[a_index(G, q, s, i, 0)]
				             : G->a_rx[t],
				    0};
				k->ref[1] = (BufRef){
				    G->p->b_local
				        ? G->b_in[b_index(G, q, s, j, i)]
				        : G->b_rx[t],
				    0};
				k->ref[2] = (BufRef){G->c_blk[t], 0};
				k->nref = 3;
				k->param[0] = g;
				k->param[1] = m;
				k->param[2] = n;
				k->param[3] = ks;
				k->param[4] = s == 0;
				k->param[5] = G->fp8_a;
				k->param[6] = (uint32_t)G->fp8_scale;
				k->param[7] = G->fp8_b;

				k->fill = fill_gemm_args;
				k->cycles =
				    gemm_tile_cycles(l->chip, g, m, n, ks);
				k->macs = (uint64_t)m * n * ks;
				if (k->cycles > c->cycles)
					c->cycles = k->cycles;
			}
	}
}

/* Slice q of tile (., i, j)'s C block: *s, its first segment's offset in
 * the block, its segments, their bytes and the block's stride between
 * them (plan_gemm_slice); returns its bytes. */
typedef struct {
	GemmSlice s;
	uint32_t off, nseg, seg_bytes, seg_stride;
} Slice;

static uint32_t
slice_of(const Gemm *G, uint32_t i, uint32_t j, uint32_t q, Slice *sl)
{
	uint32_t m = rows_of(G, i), row = gemm_c_bytes(G->g, 1, 16);
	sl->s = plan_gemm_slice(ceil_div(cols_of(G, j), 16), m, G->pk, q);
	sl->nseg = plan_gemm_slice_segments(&sl->s, m);
	sl->off = (sl->s.panel * m + sl->s.row) * row;
	sl->seg_stride = m * row;
	sl->seg_bytes = sl->s.panels * sl->s.rows * row / sl->nseg;
	return sl->nseg * sl->seg_bytes;
}

/* pk > 1: every tile gathers the other groups' partials of its slice and
 * adds them; the slices are the output. The partials go in rounds: in
 * round d group q receives from group q + d, so that in every round each
 * tile sends one slice and receives one (the scheduler places transfers
 * greedily in the order given; tile by tile, a sender waiting for one
 * receiver delayed the rest). Partial d - 1 of a slice is group q + d's. */
static void
reduce(Lowered *l, Gemm *G, TensorPlace *tc)
{
	int32_t xi = next_step(l, G, STEP_EXCHANGE, "gemm: C partials");
	int32_t ci = next_step(l, G, STEP_COMPUTE, "gemm: add partials");
	Step *x = &l->step[xi], *c = &l->step[ci];
	int32_t *rx = xcalloc(l->tiles, sizeof *rx);
	for (uint32_t d = 1; d < G->pk; d++)
		for (uint32_t q = 0; q < G->pk; q++)
			for (uint32_t i = 0; i < G->pm; i++)
				for (uint32_t j = 0; j < G->pn; j++) {
					uint32_t t = tile_of(G, q, i, j);
					Slice sl;
					uint32_t bytes =
					    slice_of(G, i, j, q, &sl);
					if (!bytes)
						continue;
					if (d == 1) {
						/* vadd loads a partial and
						 * the C block in one bundle */
						rx[t] = lower_buffer(
						    l, t, bytes * (G->pk - 1),
						    16, REGION_ANY, G->first,
						    G->last, "C partials");
						l->buf[rx[t]].apart =
						    G->c_blk[t];
					}
					uint32_t src =
					    tile_of(G, (q + d) % G->pk, i, j);
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
	for (uint32_t q = 0; q < G->pk; q++)
		for (uint32_t i = 0; i < G->pm; i++)
			for (uint32_t j = 0; j < G->pn; j++) {
				uint32_t t = tile_of(G, q, i, j);
				Slice sl;
				uint32_t bytes = slice_of(G, i, j, q, &sl);
				if (!bytes)
					continue;
				KernelCall *k = lower_call(
				    l, c, t, vadd_entry(G->g == GEMM_F32),
				    "vadd", VADD_ARGS_BYTES);
				k->ref[0] = (BufRef){G->c_blk[t], sl.off};
				k->ref[1] = (BufRef){rx[t], 0};
				k->nref = 2;
				k->param[0] = G->g == GEMM_F32;
				k->param[1] = bytes;
				k->param[2] = G->pk - 1;
				k->param[3] = sl.seg_bytes / 8;
				k->param[4] = sl.nseg;
				k->param[5] = sl.seg_stride;
				k->param[6] = sl.seg_bytes;
				k->fill = fill_vadd_args;
				k->cycles =
				    vadd_cycles(l->chip, sl.seg_bytes / 8,
				                G->pk - 1, sl.nseg);
				if (k->cycles > c->cycles)
					c->cycles = k->cycles;
				/* segments a block's panel apart: the piece's
				 * panels are the block's rows apart */
				uint32_t n = cols_of(G, j);
				operand_piece(
				    tc, 0, G->c_row0,
				    (Piece){
				        .tile = t,
				        .at = {G->c_blk[t], sl.off},
				        .row0 = i * G->p->bm + sl.s.row,
				        .rows = sl.s.rows,
				        .col0 = j * G->p->bn + sl.s.panel * 16,
				        .cols = min_u(sl.s.panels * 16,
				                      n - sl.s.panel * 16),
				        .pad_rows = sl.nseg > 1 ? rows_of(G, i)
				                                : sl.s.rows,
				        .pad_cols = sl.s.panels * 16,
				        .format = PF_GEMM_C});
			}
	free(rx);
}

static GemmFp8Format
fp8_format(DType t)
{
	return t == DT_F8_F152 ? GEMM_FP8_F152 : GEMM_FP8_F143;
}

int
lower_gemm(Lowered *l, const GemmPlan *p, const GemmOperands *o, Diag *d)
{
	Gemm G = {.p = p,
	          .g = plan_gemm_dtype(p->dtype),
	          .fp8_a = fp8_format(p->dtype),
	          .fp8_b = fp8_format(o->dtype_b),
	          .fp8_scale = o->fp8_scale,
	          .ta = o->transpose_a,
	          .tb = o->transpose_b,
	          .pk = p->pk};

	G.pm = ceil_div(p->m, p->bm);
	G.pn = ceil_div(p->n, p->bn);
	G.a_row0 = o->batch * (o->transpose_a ? p->k : p->m);
	G.b_row0 = o->batch * (o->transpose_b ? p->n : p->k);
	G.c_row0 = o->batch * p->m;
	/* supersteps of an exchange and a multiply, then the reduction's
	 * exchange and add */
	G.shared = o->step_base >= 0;
	G.first = G.next = G.shared ? o->step_base : l->nstep;
	G.last = G.first + 2 * (int32_t)p->steps + (p->pk > 1 ? 2 : 0) - 1;
	G.tile_base = o->tile_base;
	G.b_stored = o->b_stored;
	G.b_times = o->b_times ? o->b_times : 1;
	G.b_rows_from = o->b_rows_from;
	G.tiles_all = l->tiles;
	uint32_t tiles = G.pk * G.pm * G.pn;
	if (o->tile_base + tiles > l->tiles || (G.shared && G.last >= l->nstep))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "gemm plan needs %u x %u x %u tiles from tile "
		                "%u (and steps %d..%d), the program has %u "
		                "tiles (and %d steps)",
		                G.pk, G.pm, G.pn, o->tile_base, G.first, G.last,
		                l->tiles, l->nstep);
	G.a_rx = xcalloc(l->tiles, sizeof *G.a_rx);
	G.b_rx = xcalloc(l->tiles, sizeof *G.b_rx);
	G.c_blk = xcalloc(l->tiles, sizeof *G.c_blk);
	G.na = plan_gemm_a_parts(p);
	G.a_own = plan_gemm_a_in_place(p);
	G.a_in = xcalloc((size_t)G.pk * p->steps * G.pm * G.na, sizeof *G.a_in);
	G.nb = p->b_local   ? G.pm
	       : G.b_stored ? ceil_div(p->bn, 16) * b_kparts(&G)
	                    : plan_gemm_b_parts(p);
	G.b_in = xcalloc((size_t)G.pk * p->steps * G.pn * G.nb, sizeof *G.b_in);
	tile_buffers(l, &G);
	input_chunks(l, &G, o->a, o->b);
	for (uint32_t s = 0; s < p->steps; s++)
		superstep(l, &G, s);
	TensorPlace *tc = o->c;
	if (G.pk > 1) {
		reduce(l, &G, tc);
	} else {
		for (uint32_t i = 0; i < G.pm; i++)
			for (uint32_t j = 0; j < G.pn; j++) {
				uint32_t t = tile_of(&G, 0, i, j),
				         n = cols_of(&G, j);
				operand_piece(
				    tc, 0, G.c_row0,
				    (Piece){.tile = t,
				            .at = {G.c_blk[t], 0},
				            .row0 = i * p->bm,
				            .rows = rows_of(&G, i),
				            .col0 = j * p->bn,
				            .cols = n,
				            .pad_rows = rows_of(&G, i),
				            .pad_cols = ceil_div(n, 16) * 16,
				            .format = PF_GEMM_C});
			}
	}
	free(G.a_rx);
	free(G.b_rx);
	free(G.c_blk);
	free(G.a_in);
	free(G.b_in);
	if (G.next - 1 != G.last)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "gemm lowering: %d steps made, %d expected "
		                "(an internal error)",
		                G.next - G.first, G.last - G.first + 1);
	return IPU_OK;
}

/*
 * gemm_layout.c - a GEMM plan placed on tiles: which tile (q, i, j) is,
 * who stores each chunk of A and B, what each piece of A, B and C is, and
 * the bytes of the buffers that hold them (plan.h, GemmGeom). The planner
 * asks it for the layouts it prices and the memory a plan takes; the
 * lowering (lower/gemm.c) makes the same buffers and pieces from it and
 * adds the exchanges and kernel calls.
 *
 * Chunks: A's chunk (i, s) of group q is stored in na parts of its
 * K-panels (plan_gemm_a_parts), part u on tile (q, i, (s + u steps) mod
 * pn), so that the chunks spread over the whole grid row. B's chunk
 * (s, j) is stored on one tile of column j, on a row rotating with s
 * (b_parts: in nb parts, part u steps rows further); with b_local on
 * every tile of column j; with spread_b in parts of an n-panel by at most
 * B_PART_KPANELS K-panels, each on the tile the weight balance chooses.
 */
#include "plan.h"

#include <stdlib.h>

#include "../kernels/vadd.h"

static uint32_t
min_u(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t
b_kparts(const GemmGeom *G)
{
	return ceil_div(ceil_div(G->p->kc, gemm_k_panel(G->g)), B_PART_KPANELS);
}

void
plan_gemm_geom(GemmGeom *G, const GemmPlan *p, const GemmSite *site)
{
	*G = (GemmGeom){.p = p,
	                .g = gemm_dtype_of(p->dtype),
	                .pm = ceil_div(p->m, p->bm),
	                .pn = ceil_div(p->n, p->bn),
	                .pk = p->pk,
	                .na = plan_gemm_a_parts(p),
	                .na_rows = plan_gemm_a_row_parts(p),
	                .a_own = plan_gemm_a_in_place(p),
	                .site = *site};
	G->nb = p->b_local       ? G->pm
	        : site->spread_b ? gemm_n_panels(p->bn) * b_kparts(G)
	                         : plan_gemm_b_parts(p);
	G->a_row0 = site->batch * (site->ta ? p->k : p->m);
	G->b_row0 = site->batch * (site->tb ? p->n : p->k);
	G->c_row0 = site->batch * p->m;
	if (!G->site.b_times)
		G->site.b_times = 1;
}

uint32_t
plan_gemm_tile(const GemmGeom *G, uint32_t q, uint32_t i, uint32_t j)
{
	uint32_t group = G->site.tile_base + q * G->pm * G->pn;
	if (G->p->pairs_down) /* pm is even: (i, j) and (i ^ 1, j) a pair */
		return group + (i / 2) * 2 * G->pn + 2 * j + i % 2;
	return group + i * G->pn + j;
}

uint32_t
plan_gemm_a_owner(const GemmGeom *G, uint32_t q, uint32_t i, uint32_t s,
                  uint32_t u)
{
	return plan_gemm_tile(G, q, i, (s + u * G->p->steps) % G->pn);
}

/* The tile that stores B's chunk (s, j) of group q, or its part u: a tile
 * of the column on a row rotating with s (part u steps rows further); or
 * (spread_b) for each n-panel part, the tile storing the fewest bytes of
 * weights so far: of the column when the grid covers at least half of
 * the chip (the multicast then leaves from inside the column, as the plan
 * prices it), else of the whole chip (a small GEMM's weights would pile
 * up on its few tiles), one part a tile while tiles remain (G->held).
 * The lowering replays the planner's choices. */
static uint32_t
b_owner(GemmGeom *G, uint32_t q, uint32_t s, uint32_t j, uint32_t u,
        uint32_t bytes)
{
	GemmSite *st = &G->site;
	uint32_t rot = (st->b_rows_from + s + u * G->p->steps) % G->pm;
	if (!st->spread_b)
		return plan_gemm_tile(G, q, rot, j);
	TileLog *log = st->owners;
	if (log->replay)
		return tile_log_next(log);
	bytes *= st->b_times;
	uint32_t best;
	if (G->held) {
		/* one part a tile while tiles remain: the emptiest tiles took
		 * all of So400m f8's head fc2 at batch 1 (155 KB each on 32
		 * tiles, which then sent them: 40,025 cycles) */
		best = layout_least_apart(st->stored, G->held, &G->held_n,
		                          st->tiles_all, bytes);
	} else {
		best = plan_gemm_tile(G, q, rot, j);
		for (uint32_t i = 1; i < G->pm; i++) {
			uint32_t t = plan_gemm_tile(G, q, (rot + i) % G->pm, j);
			if (st->stored[t] < st->stored[best])
				best = t;
		}
		st->stored[best] += bytes;
	}
	tile_log_add(log, best);
	return best;
}

uint32_t
plan_gemm_k_part(uint32_t nk, uint32_t parts, uint32_t u, uint32_t *first)
{
	*first = u * (nk / parts) + (u < nk % parts ? u : nk % parts);
	return nk / parts + (u < nk % parts);
}

size_t
plan_gemm_a_index(const GemmGeom *G, uint32_t q, uint32_t s, uint32_t i,
                  uint32_t u)
{
	return (((size_t)q * G->p->steps + s) * G->pm + i) * G->na + u;
}

size_t
plan_gemm_b_index(const GemmGeom *G, uint32_t q, uint32_t s, uint32_t j,
                  uint32_t i)
{
	return (((size_t)q * G->p->steps + s) * G->pn + j) * G->nb + i;
}

uint32_t
plan_gemm_rows(const GemmGeom *G, uint32_t i)
{
	return min_u(G->p->bm, G->p->m - i * G->p->bm);
}

uint32_t
plan_gemm_cols(const GemmGeom *G, uint32_t j)
{
	return min_u(G->p->bn, G->p->n - j * G->p->bn);
}

uint32_t
plan_gemm_k_of(const GemmGeom *G, uint32_t q, uint32_t s, uint32_t *k0)
{
	uint32_t start = q * G->p->kg + s * G->p->kc;
	uint32_t end = min_u((q + 1) * G->p->kg, G->p->k);
	*k0 = start;
	return start < end ? min_u(G->p->kc, end - start) : 0;
}

int
plan_gemm_b_part(const GemmGeom *G, uint32_t q, uint32_t s, uint32_t j,
                 uint32_t u, GemmBPart *bp)
{
	uint32_t kp = gemm_k_panel(G->g), k0, ks = plan_gemm_k_of(G, q, s, &k0),
	         nk = ceil_div(ks, kp), first = 0, n = nk;
	*bp = (GemmBPart){k0, ks, j * G->p->bn, plan_gemm_cols(G, j), 0, nk};
	if (G->site.spread_b) {
		uint32_t kq = b_kparts(G), np = u / kq;
		first = u % kq * B_PART_KPANELS;
		if (GEMM_COLS * np >= bp->cols || first >= nk)
			return 0;
		n = B_PART_KPANELS;
		bp->col0 += GEMM_COLS * np;
		bp->cols = min_u(GEMM_COLS, bp->cols - GEMM_COLS * np);
	} else if (!G->p->b_local) {
		n = plan_gemm_k_part(nk, G->nb, u, &first);
		if (!n)
			return 0;
	}
	bp->kp0 = first;
	bp->row0 = k0 + first * kp;
	bp->rows = min_u(n * kp, ks - first * kp);
	return 1;
}

uint32_t
plan_gemm_c_slice(const GemmGeom *G, uint32_t i, uint32_t j, uint32_t q,
                  GemmCSlice *sl)
{
	uint32_t m = plan_gemm_rows(G, i),
	         row = gemm_c_bytes(G->g, 1, GEMM_COLS);
	sl->s = plan_gemm_slice(gemm_n_panels(plan_gemm_cols(G, j)), m, G->pk,
	                        q, G->p->norm_cols > 0);
	sl->nseg = plan_gemm_slice_segments(&sl->s, m);
	sl->off = (sl->s.panel * m + sl->s.row) * row;
	sl->seg_stride = m * row;
	sl->seg_bytes = sl->s.panels * sl->s.rows * row / sl->nseg;
	return sl->nseg * sl->seg_bytes;
}

int32_t
plan_gemm_superstep_steps(const GemmPlan *p)
{
	/* overlapped: the first exchange, then one compute step a
	 * superstep, each with the next superstep's exchange */
	return p->overlap ? (int32_t)p->steps + 1 : 2 * (int32_t)p->steps;
}

int32_t
plan_gemm_program_steps(const GemmPlan *p)
{
	return plan_gemm_superstep_steps(p) + (p->pk > 1 ? 2 : 0);
}

uint32_t
plan_gemm_c_block_bytes(const GemmGeom *G, uint32_t i, uint32_t j)
{
	uint32_t m = plan_gemm_rows(G, i), n = plan_gemm_cols(G, j);
	/* a slice by rows (reduce) is a piece whose padded panels run past
	 * the block by its first row */
	return gemm_c_bytes(G->g, m, n) + gemm_c_tail(G->g) +
	       (G->pk > 1 ? gemm_c_bytes(G->g, m, GEMM_COLS) : 0);
}

GemmTileBuffers
plan_gemm_tile_buffers(const GemmGeom *G, uint32_t q, uint32_t i, uint32_t j)
{
	uint32_t m = plan_gemm_rows(G, i), n = plan_gemm_cols(G, j),
	         kc = G->p->kc;
	GemmTileBuffers b = {
	    .a_chunk = G->a_own ? 0 : gemm_a_bytes(G->g, m, kc) + GEMM_A_TAIL,
	    .b_chunk = G->p->b_local ? 0 : gemm_b_bytes(G->g, kc, n),
	    .c_block = plan_gemm_c_block_bytes(G, i, j)};
	/* a call a superstep with K; an overlapped plan's calls but the
	 * last run beside the next chunks' exchange, their blocks
	 * GEMM_OVERLAP_ARGS_BYTES. After the first (which zeroes C), those
	 * reading the same chunk buffers with the same K and block read one
	 * argument block (lower_share_args): the received chunks are one
	 * buffer, two when overlapped (by the superstep's parity), and
	 * chunks read in place are a superstep's own */
	uint32_t *key = xcalloc(G->p->steps, sizeof *key), nkey = 0;
	for (uint32_t s = 0; s < G->p->steps; s++) {
		uint32_t k0, ks = plan_gemm_k_of(G, q, s, &k0), u = 0,
		             beside = G->p->overlap && s + 1 < G->p->steps;
		if (!ks)
			continue;
		int own = s == 0 || G->a_own || G->p->b_local;
		uint32_t k =
		    (ks * 2 + (G->p->overlap ? s % 2 : 0)) * 2 + beside;
		while (!own && u < nkey && key[u] != k)
			u++;
		if (own || u == nkey) {
			if (!own)
				key[nkey++] = k;
			b.calls++;
			b.calls_beside += beside;
		}
	}
	free(key);
	GemmCSlice sl;
	if (G->pk > 1 && plan_gemm_c_slice(G, i, j, q, &sl))
		/* vadd_norm_f16 writes its rows' reciprocals after them */
		b.c_partials =
		    sl.nseg * sl.seg_bytes * (G->pk - 1) +
		    (G->p->norm_cols ? vadd_norm_rcp_bytes(sl.seg_bytes / 8)
		                     : 0);
	return b;
}

uint32_t
plan_gemm_a_part(const GemmGeom *G, uint32_t q, uint32_t s, uint32_t i,
                 uint32_t u, uint32_t *c0, uint32_t *r0, uint32_t *rows)
{
	uint32_t k0,
	    ks = plan_gemm_k_of(G, q, s, &k0),
	    nc = plan_gemm_k_part(ceil_div(ks, gemm_k_panel(G->g)),
	                          G->na / G->na_rows, u / G->na_rows, c0);
	*rows = plan_gemm_k_part(plan_gemm_rows(G, i), G->na_rows,
	                         u % G->na_rows, r0);
	return *rows ? nc : 0;
}

uint32_t
plan_gemm_a_part_bytes(const GemmGeom *G, uint32_t q, uint32_t s, uint32_t i,
                       uint32_t u)
{
	uint32_t kp = gemm_k_panel(G->g), k0, ks = plan_gemm_k_of(G, q, s, &k0),
	         c0, r0, rows,
	         nc = plan_gemm_a_part(G, q, s, i, u, &c0, &r0, &rows);
	if (!nc)
		return 0;
	/* read in place: the kernel's tail */
	return gemm_a_bytes(G->g, rows, min_u(nc * kp, ks - c0 * kp)) +
	       (G->a_own ? GEMM_A_TAIL : 0);
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
	*layout_piece(tp) = p;
}

/* Copy or part i of B's chunk (s, j) of group q: its buffer and piece. */
static void
b_chunk(GemmGeom *G, Storage *st, TensorPlace *tb, int32_t *b_in, uint32_t q,
        uint32_t s, uint32_t j, uint32_t i)
{
	GemmBPart bp;
	if (!plan_gemm_b_part(G, q, s, j, i, &bp))
		return;
	uint32_t kp = gemm_k_panel(G->g),
	         bytes = gemm_b_bytes(G->g, bp.rows, bp.cols),
	         owner =
	             G->p->b_local
	                 ? plan_gemm_tile(G, q, i, j)
	                 : b_owner(G, q, s, j, G->site.spread_b ? 0 : i, bytes);
	int32_t b = st->buffer(st, owner, bytes, 16,
	                       G->p->b_local ? REGION_INTERLEAVED : REGION_ANY,
	                       "B input");
	b_in[plan_gemm_b_index(G, q, s, j, i)] = b;
	operand_piece(tb, G->site.tb, G->b_row0,
	              (Piece){.tile = owner,
	                      .at = {b, 0},
	                      .row0 = bp.row0,
	                      .rows = bp.rows,
	                      .col0 = bp.col0,
	                      .cols = bp.cols,
	                      .pad_rows = ceil_div(bp.rows, kp) * kp,
	                      .pad_cols = gemm_n_panels(bp.cols) * GEMM_COLS,
	                      .format = PF_GEMM_B});
}

void
plan_gemm_inputs(GemmGeom *G, Storage *st, TensorPlace *ta, TensorPlace *tb,
                 int32_t *a_in, int32_t *b_in)
{
	GemmDtype g = G->g;
	uint32_t kp = gemm_k_panel(g);
	if (G->site.spread_b && !G->site.owners->replay &&
	    2 * G->pk * G->pm * G->pn < G->site.tiles_all)
		G->held = xcalloc(G->site.tiles_all, 1);
	for (uint32_t q = 0; q < G->pk; q++)
		for (uint32_t s = 0; s < G->p->steps; s++) {
			uint32_t k0, ks = plan_gemm_k_of(G, q, s, &k0);
			if (!ks)
				continue;
			for (uint32_t i = 0; i < G->pm; i++)
				for (uint32_t u = 0; u < G->na; u++) {
					uint32_t c0, r0, rows,
					    nc = plan_gemm_a_part(
					        G, q, s, i, u, &c0, &r0, &rows);
					if (!nc)
						continue;
					uint32_t owner =
					    plan_gemm_a_owner(G, q, i, s, u);
					int32_t b = st->buffer(
					    st, owner,
					    plan_gemm_a_part_bytes(G, q, s, i,
					                           u),
					    16, REGION_ANY, "A input");
					a_in[plan_gemm_a_index(G, q, s, i, u)] =
					    b;
					for (uint32_t c = c0; c < c0 + nc; c++)
						operand_piece(
						    ta, G->site.ta, G->a_row0,
						    (Piece){
						        .tile = owner,
						        .at =
						            {b,
						             (c - c0) * rows *
						                 GEMM_A_ROW_BYTES},
						        .row0 =
						            i * G->p->bm + r0,
						        .rows = rows,
						        .col0 = k0 + c * kp,
						        .cols = min_u(
						            kp, ks - c * kp),
						        .pad_rows = rows,
						        .pad_cols = kp,
						        .format = PF_ROWMAJOR});
				}
			/* B's chunk (s, j): on its owner, or (b_local) on
			 * every tile of column j, where the kernel reads it,
			 * or (spread_b) each n-panel part on its own owner */
			for (uint32_t j = 0; j < G->pn; j++)
				for (uint32_t i = 0; i < G->nb; i++)
					b_chunk(G, st, tb, b_in, q, s, j, i);
		}
	free(G->held);
	G->held = NULL;
}

void
plan_gemm_c_pieces(const GemmGeom *G, const int32_t *c_blk, TensorPlace *tc)
{
	const GemmPlan *p = G->p;
	for (uint32_t q = 0; q < G->pk; q++)
		for (uint32_t i = 0; i < G->pm; i++)
			for (uint32_t j = 0; j < G->pn; j++) {
				uint32_t t = plan_gemm_tile(G, q, i, j),
				         n = plan_gemm_cols(G, j),
				         m = plan_gemm_rows(G, i);
				if (G->pk == 1) {
					operand_piece(
					    tc, 0, G->c_row0,
					    (Piece){.tile = t,
					            .at = {c_blk[t], 0},
					            .row0 = i * p->bm,
					            .rows = m,
					            .col0 = j * p->bn,
					            .cols = n,
					            .pad_rows = m,
					            .pad_cols =
					                gemm_n_panels(n) *
					                GEMM_COLS,
					            .format = PF_GEMM_C});
					continue;
				}
				/* each group's reduced slice; segments a
				 * block's panel apart: the piece's panels are
				 * the block's rows apart */
				GemmCSlice sl;
				if (!plan_gemm_c_slice(G, i, j, q, &sl))
					continue;
				operand_piece(
				    tc, 0, G->c_row0,
				    (Piece){
				        .tile = t,
				        .at = {c_blk[t], sl.off},
				        .row0 = i * p->bm + sl.s.row,
				        .rows = sl.s.rows,
				        .col0 =
				            j * p->bn + sl.s.panel * GEMM_COLS,
				        .cols =
				            min_u(sl.s.panels * GEMM_COLS,
				                  n - sl.s.panel * GEMM_COLS),
				        .pad_rows = sl.nseg > 1 ? m : sl.s.rows,
				        .pad_cols = sl.s.panels * GEMM_COLS,
				        .format = PF_GEMM_C});
			}
}

TensorPlace *
plan_gemm_c_like(const GemmPlan *p, uint32_t tile0, int32_t tensor)
{
	GemmSite site = {.tile_base = tile0};
	GemmGeom G;
	plan_gemm_geom(&G, p, &site);
	int32_t *c_blk =
	    xcalloc((size_t)tile0 + (size_t)G.pk * G.pm * G.pn, sizeof *c_blk);
	TensorPlace *tc = tensor_place_new(
	    tensor, p->m, p->n, p->dtype == DT_F32 ? DT_F32 : DT_F16);
	plan_gemm_c_pieces(&G, c_blk, tc);
	free(c_blk);
	return tc;
}

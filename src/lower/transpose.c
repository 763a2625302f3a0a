/*
 * transpose.c - permutations of a tensor's axes as data movement (and
 * slices that keep whole rows, which move the same way).
 *
 * One that keeps the last axis moves whole rows (a FlatMap for
 * relayout.c). One that moves the last axis L, making axis a of the input
 * the output's last, is three such moves around a 2-D transpose:
 *   T1 = the input with its rows permuted to (the output's other axes in
 *        its order, a, L): each [a x L] matrix of T1 is a batch;
 *   T2 = T1 with every batch transposed to [L x a], on the tiles, by
 *        ew_transpose (kernels/elementwise.S) on whole-row blocks;
 *   out = T2 with its rows permuted into the output's order (a stays
 *        last).
 * The first exchange lands T1 as blocks of whole rows (a range of one
 * batch's a by all of L); each tile transposes its blocks (the k-th on
 * a tile in the k-th compute step), and the second exchange moves the
 * transposed blocks, pieces of T2's view, to the output's place.
 */
#include "transpose.h"

#include <stdlib.h>

#include "elementwise.h"

static uint32_t
pad8(uint32_t n)
{
	return (n + 7) / 8 * 8;
}

/* T2's columns past a block's na rows come from T1's padding rows, and a
 * row of T2 that ends inside a word (an odd f16 na) is sent with the
 * column after it (relayout.c). That column may land in the padding of a
 * GEMM's A, which the kernel multiplies by B's zero padding (NaN x 0 is
 * NaN; the differential test found such NaNs from reused memory), so it
 * must hold zero: row na of such a block gets a row of zeros (a buffer on
 * its tile that nothing writes, so it keeps the loaded memory's zeros) in
 * the exchange that fills the block. */
static void
zero_row_after(Lowered *l, Step *s, const TensorPlace *p1, uint32_t es)
{
	int32_t *zeros = xmalloc(l->tiles * sizeof *zeros);
	for (uint32_t t = 0; t < l->tiles; t++)
		zeros[t] = -1;
	for (int k = 0; k < p1->npiece; k++) {
		const Piece *p = &p1->piece[k];
		uint32_t bytes = p->pad_cols * es;
		if (es * p->rows % 4 == 0)
			continue;
		if (zeros[p->tile] < 0)
			zeros[p->tile] =
			    lower_buffer(l, p->tile, bytes, 8, REGION_ANY, 0,
			                 INT32_MAX, "zeros");
		Transfer *x = lower_transfer(
		    s, p->tile, (BufRef){zeros[p->tile], 0}, bytes / 4, 1);
		x->dst_tile[0] = p->tile;
		x->dst[0] = (BufRef){p->at.buf, p->at.offset + p->rows * bytes};
	}
	free(zeros);
}

int
lower_transpose_last(Lowered *l, const TensorPlace *from, const Shape *in,
                     const Shape *perm, const TensorPlace *to, Diag *d)
{
	DType dt = to->dtype;
	int r = ew_supported(EW_TRANSPOSE, dt, dt, d);
	if (r)
		return r;
	int rank = in->rank, last = rank - 1;
	int64_t a = perm->dim[last];
	/* T1's axes as input axes: the output's others, then a, L; T2's
	 * the same with a and L swapped */
	Shape ord1 = {.rank = rank}, ord2, t2 = {.rank = rank},
	      back = {.rank = rank};
	for (int k = 0, n = 0; k < last; k++)
		if (perm->dim[k] != last)
			ord1.dim[n++] = perm->dim[k];
	ord1.dim[rank - 2] = a;
	ord1.dim[last] = last;
	ord2 = ord1;
	ord2.dim[rank - 2] = last;
	ord2.dim[last] = a;
	for (int k = 0; k < rank; k++) {
		t2.dim[k] = in->dim[ord2.dim[k]];
		/* output axis k is T2's axis back[k] */
		for (int i = 0; i < rank; i++)
			if (ord2.dim[i] == perm->dim[k])
				back.dim[k] = i;
	}
	uint32_t ca = (uint32_t)in->dim[a], cl = (uint32_t)in->dim[last];
	uint32_t nb = (uint32_t)(shape_elems(in) / ((int64_t)ca * cl));
	uint32_t es = (uint32_t)dtype_size(dt);
	/* blocks of whole rows: a batch's a split to fill the tiles */
	uint32_t split = l->tiles / nb ? l->tiles / nb : 1;
	if (split > (ca + 7) / 8)
		split = (ca + 7) / 8;
	uint32_t chunk = pad8((ca + split - 1) / split);
	TensorPlace *p1 = tensor_place_new(from->tensor, nb * ca, cl, dt),
	            *p2 = tensor_place_new(to->tensor, nb * cl, ca, dt);
	uint32_t *seen = xcalloc(l->tiles, sizeof *seen), slots = 0, i = 0;
	int32_t at = l->nstep;
	for (uint32_t bi = 0; bi < nb; bi++)
		for (uint32_t a0 = 0; a0 < ca; a0 += chunk, i++) {
			uint32_t tile = i % l->tiles, slot = seen[tile]++;
			uint32_t na = ca - a0 < chunk ? ca - a0 : chunk;
			if (slot + 1 > slots)
				slots = slot + 1;
			int32_t step = at + 1 + (int32_t)slot;
			uint32_t bytes = pad8(na) * pad8(cl) * es;
			int32_t b1 =
			            lower_buffer(l, tile, bytes, 8, REGION_ANY,
			                         at, step, "rows to transpose"),
			        b2 =
			            lower_buffer(l, tile, bytes, 8, REGION_ANY,
			                         step, INT32_MAX, "transposed");
			*layout_piece(p1) = (Piece){.tile = tile,
			                            .at = {b1, 0},
			                            .row0 = bi * ca + a0,
			                            .rows = na,
			                            .col0 = 0,
			                            .cols = cl,
			                            .pad_rows = pad8(na),
			                            .pad_cols = pad8(cl),
			                            .format = PF_ROWMAJOR};
			*layout_piece(p2) = (Piece){.tile = tile,
			                            .at = {b2, 0},
			                            .row0 = bi * cl,
			                            .rows = cl,
			                            .col0 = a0,
			                            .cols = na,
			                            .pad_rows = pad8(cl),
			                            .pad_cols = pad8(na),
			                            .format = PF_ROWMAJOR};
		}
	/* the transposed blocks live until the last exchange reads them */
	for (int k = 0; k < p2->npiece; k++)
		l->buf[p2->piece[k].at.buf].last = at + 1 + (int32_t)slots;
	RowPerm m1, m2;
	FlatMap f1 = layout_row_perm(&m1, in, &ord1),
	        f2 = layout_row_perm(&m2, &t2, &back);
	Step *s1 = lower_step(l, STEP_EXCHANGE, "transpose: rows");
	r = lower_relayout(s1, from, p1, &f1, d);
	if (!r)
		zero_row_after(l, s1, p1, es);
	if (!r)
		r = lower_elementwise(l, EW_TRANSPOSE, p1, NULL, p2, 0,
		                      "transpose", d);
	if (!r)
		r = lower_relayout(
		    lower_step(l, STEP_EXCHANGE, "transpose: to its place"), p2,
		    to, &f2, d);
	free(seen);
	tensor_place_free(p1);
	tensor_place_free(p2);
	return r;
}

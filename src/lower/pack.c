/*
 * pack.c - a matmul's operand B from where the device left it.
 *
 * Contract: the GEMM lowering wants B in its weight layout, one piece per
 * stored chunk ("B input": a [ks x n] block of B, or with transpose_b
 * the [n x ks] block of B's tensor). For each such piece this makes a
 * staging buffer on the same tile holding the same block of the tensor
 * row-major, padded to whole panels as kernels/pack.S reads it; one
 * exchange step (relayout.c) fills every staging block from B's home,
 * then the pack kernel turns each into the piece (the k-th piece on a
 * tile in the k-th compute step: one call per tile and step). The staging
 * buffers live from the exchange to their pack step.
 */
#include "pack.h"

#include <stdlib.h>

#include "../graph/graph.h"
#include "../kernels/pack.h"
#include "../plan/plan.h"

int
lower_pack_b(Lowered *l, const TensorPlace *from, const FlatMap *map,
             const TensorPlace *want, uint32_t ones, uint8_t one, int32_t at,
             int *inserted, Diag *d)
{
	GemmDtype g = gemm_dtype_of(want->dtype);
	uint32_t es = (uint32_t)dtype_size(want->dtype);
	int tr = want->piece[0].format == PF_GEMM_B_T;
	*inserted = 0;
	lower_insert_step(l, at, STEP_EXCHANGE, "matmul: B from its producer");
	*inserted = 1;
	TensorPlace *stage =
	    tensor_place_new(want->tensor, want->rows, want->cols, want->dtype);
	uint32_t *seen = xcalloc(l->tiles, sizeof *seen);
	for (int k = 0; k < want->npiece; k++) {
		const Piece *w = &want->piece[k];
		uint32_t bk = tr ? w->cols : w->rows,
		         bn = tr ? w->rows : w->cols;
		int32_t slot = (int32_t)seen[w->tile]++;
		if (slot + 1 >= *inserted) {
			lower_insert_step(l, at + 1 + slot, STEP_COMPUTE,
			                  "matmul: pack B");
			++*inserted;
		}
		uint32_t rows = pack_src_rows(g, tr, bk, bn),
		         row = pack_src_row_bytes(g, tr, bk, bn);
		Piece p = *w;
		p.pad_rows = rows;
		p.pad_cols = row / es;
		p.format = PF_ROWMAJOR;
		p.at =
		    (BufRef){lower_buffer(l, w->tile, rows * row, 8, REGION_ANY,
		                          at, at + 1 + slot, "B to pack"),
		             0};
		*layout_piece(stage) = p;
		Step *s = &l->step[at + 1 + slot];
		KernelCall *c = lower_call(l, s, w->tile, pack_entry(g, tr),
		                           pack_object(g, tr), PACK_ARGS_BYTES);
		c->ref[0] = p.at;
		c->ref[1] = w->at;
		c->nref = 2;
		c->args = (KernelArgs){
		    KC_PACK,
		    .u.pack = {.t = g,
		               .transposed = tr,
		               .bk = bk,
		               .bn = bn,
		               .stride = row,
		               .one = ones && !tr && w->col0 + bn == ones ? one
		                                                          : 0}};
		/* addresses do not change the count: priced at zero */
		c->cycles = pack_cycles(l->chip, &c->args.u.pack);
		if (c->cycles > s->cycles)
			s->cycles = c->cycles;
	}
	int r = lower_relayout(&l->step[at], from, stage, map, d);
	free(seen);
	tensor_place_free(stage);
	return r;
}

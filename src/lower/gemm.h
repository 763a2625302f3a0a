/* gemm.h - lowering a GEMM plan (see gemm.c for its contract). */
#ifndef IPU_LOWER_GEMM_H
#define IPU_LOWER_GEMM_H

#include "../plan/plan.h"
#include "lower.h"

/* The places of C = A x B, to which the lowering adds the pieces it
 * stores the operands in (and C's): A is the tensor a, or its transpose
 * (transpose_a: a is [K, M]); the same for B (b is [N, K]). With batch
 * axes, the tensors' 2-D views stack `batches` matrices row-wise and this
 * GEMM is number `batch` of them. It runs on the plan's tiles from
 * tile_base on, in new steps, or (step_base >= 0) in the steps from
 * step_base on that an earlier GEMM with the same plan made, side by
 * side with it on other tiles. */
typedef struct {
	TensorPlace *a, *b, *c;
	uint32_t batches, batch; /* 0 batches = 1 */
	uint32_t tile_base;
	int32_t step_base; /* -1: new steps */
	int transpose_a, transpose_b;
	DType dtype_b; /* B's element type: the plan's (A's), or for f8 the
	                  other f8 format */
	int fp8_scale; /* f8: products scaled by 2^fp8_scale (-32..31), the
	                  sum of A's and B's scales */
	/* non-NULL: B's chunks stored over every tile of the program, each
	 * n-panel (16 columns) on the tile with the fewest bytes in
	 * b_stored[tile] so far (which the lowering adds to), instead of on
	 * the grid's own: a model's weights then spread evenly over the chip
	 * rather than piling up on the tiles of the GEMMs that use few (each
	 * part is sent to its column from wherever it lives) */
	uint32_t *b_stored;
	uint32_t b_times; /* each byte of B stored counts this many (a loop
	                     weight: an iteration's; 0 = 1) */
	/* otherwise B's chunk (s, j) is stored on grid row (b_rows_from + s)
	 * mod pm of column j */
	uint32_t b_rows_from;
} GemmOperands;

int lower_gemm(Lowered *l, const GemmPlan *p, const GemmOperands *o, Diag *d);

#endif

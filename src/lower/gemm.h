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
	/* Where B's chunks are stored (a weight's, kept for the whole run):
	 * B_OWN: superstep s's chunk of a column on the column's row s mod
	 * pm. B_ROWS: on row (s + b_spread_from) mod pm, so that a model
	 * whose weights each start where the last one's rows ended fills
	 * every row of its GEMMs' grids rather than piling them all on the
	 * first rows. B_CHIP: on every tile of the program in turn from tile
	 * b_spread_from, for a grid too small to hold its weight (a chunk
	 * from anywhere on the chip makes the exchange slower: the So400m
	 * MLP block's by 36%, docs/compiler.md). */
	enum { B_OWN, B_ROWS, B_CHIP } b_spread;
	uint32_t b_spread_from;
} GemmOperands;

int lower_gemm(Lowered *l, const GemmPlan *p, const GemmOperands *o, Diag *d);

#endif

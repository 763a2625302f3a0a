/* gemm.h - lowering a GEMM plan (see gemm.c for its contract). */
#ifndef IPU_LOWER_GEMM_H
#define IPU_LOWER_GEMM_H

#include "../plan/plan.h"
#include "lower.h"

/* The places of C = A x B, to which the lowering adds the pieces it
 * stores the operands in (and C's): A is the tensor a, or its transpose
 * (site.ta: a is [K, M]); the same for B (b is [N, K]). With batch axes,
 * the tensors' 2-D views stack matrices row-wise and this GEMM is number
 * site.batch of them. It runs on the plan's tiles from site.tile_base on
 * (GemmSite: where B is stored), in new steps, or (step_base >= 0) in the
 * steps from step_base on that an earlier GEMM with the same plan made,
 * side by side with it on other tiles. */
typedef struct {
	TensorPlace *a, *b, *c;
	GemmSite site;
	int32_t step_base; /* -1: new steps */
	DType dtype_b;     /* B's element type: the plan's (A's), or for f8 the
	                      other f8 format */
	int fp8_scale;     /* f8: products scaled by 2^fp8_scale (-32..31), the
	                      sum of A's and B's scales */
} GemmOperands;

int lower_gemm(Lowered *l, const GemmPlan *p, const GemmOperands *o, Diag *d);
/* After lower_gemm of an f16 C with pk > 1: the reduction's vadd calls in
 * compute step `step` become vadd_bias_f16 calls that add the bias row
 * in bias (a one-row mirror of c's pieces, layout_mirror) after the
 * partials, each C panel of a slice its own segment. */
int lower_gemm_bias(Lowered *l, int32_t step, const TensorPlace *c,
                    const TensorPlace *bias, Diag *d);
/* After lower_gemm_bias: the calls become vadd_bias_res_f16 calls that
 * add h (res: a mirror of c's pieces, each laid out as its piece) after
 * the bias. */
int lower_gemm_residual(Lowered *l, int32_t step, const TensorPlace *c,
                        const TensorPlace *res, Diag *d);
/* After lower_gemm_bias: the calls become vadd_bias_gelu_f16_f8 calls
 * (kernels/vadd_f8.S, plan_reduction_gelu) that write the GELU of the
 * biased sum cast to f8 (F152 with f152, x 2^-fp8_scale) into q (a mirror
 * of c's pieces in f8, each laid out as its piece) instead of C. */
int lower_gemm_gelu(Lowered *l, int32_t step, const TensorPlace *c,
                    const TensorPlace *q, int fp8_scale, int f152, Diag *d);
/* The row division's reduction calls (vadd_norm_f16, GemmPlan.norm_cols)
 * of compute step `step` become vadd_norm_f16_f8 calls
 * (kernels/vadd_norm_f8.S, plan_reduction_cast) that write the result
 * cast to f8 (F152 with f152, x 2^-fp8_scale) into q (a mirror of c's
 * pieces in f8, each laid out as its piece) instead of C. */
int lower_gemm_norm_cast(Lowered *l, int32_t step, const TensorPlace *c,
                         const TensorPlace *q, int fp8_scale, int f152,
                         Diag *d);

#endif

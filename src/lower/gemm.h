/* gemm.h - lowering a GEMM plan (see gemm.c for its contract). */
#ifndef IPU_LOWER_GEMM_H
#define IPU_LOWER_GEMM_H

#include "../plan/plan.h"
#include "lower.h"

/* C = A x B for graph tensors a, b, c; f8 products are scaled by
 * 2^fp8_scale (the sum of A's and B's scales, -32..31). */
int lower_gemm(Lowered *l, const GemmPlan *p, int32_t a, int32_t b, int32_t c,
               int fp8_scale, Diag *d);

#endif

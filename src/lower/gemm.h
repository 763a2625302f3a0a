/* gemm.h - lowering a GEMM plan (see gemm.c for its contract). */
#ifndef IPU_LOWER_GEMM_H
#define IPU_LOWER_GEMM_H

#include "../plan/plan.h"
#include "lower.h"

int lower_gemm(Lowered *l, const GemmPlan *p, int32_t a, int32_t b, int32_t c,
               Diag *d);

#endif

/* rowwise.h - lowering row-wise ops: layernorm, softmax (see rowwise.c). */
#ifndef IPU_LOWER_ROWWISE_H
#define IPU_LOWER_ROWWISE_H

#include "../graph/graph.h"
#include "../kernels/rowwise.h"
#include "lower.h"

/* out (layout_rowwise_out of x) = op(x) per row, in
 * new compute steps at the end; gamma and beta (layernorm; NULL for softmax,
 * and for a layernorm without them, a norm, whose out must be f8):
 * one row next to each piece of x (layout_mirror with one_row). eps and scale
 * as in OpAttrs; exp_f16: the f16 softmax's kernel with its exps in f16
 * (plan_softmax_in_f16); out in f8: that kernel writing f8 at 2^f8_scale
 * (plan_softmax_fused_cast), with unnorm its e not divided by their sum
 * (rw_softmax_f16h8u: PV's reduction divides, GemmPlan.norm_cols). */
int lower_rowwise(Lowered *l, RwOp op, const TensorPlace *x,
                  const TensorPlace *gamma, const TensorPlace *beta,
                  const TensorPlace *out, double eps, double scale, int exp_f16,
                  int f8_scale, int unnorm, const char *what, Diag *d);

#endif

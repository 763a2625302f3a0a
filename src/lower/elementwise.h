/* elementwise.h - lowering elementwise ops (see elementwise.c). */
#ifndef IPU_LOWER_ELEMENTWISE_H
#define IPU_LOWER_ELEMENTWISE_H

#include "../graph/graph.h"
#include "../kernels/elementwise.h"
#include "lower.h"

/* out (layout_mirror of a) = op(a[, b]) in new compute steps at
 * the end; b's piece k matches a's piece k, or one row of it. */
int lower_elementwise(Lowered *l, EwOp op, const TensorPlace *a,
                      const TensorPlace *b, const TensorPlace *out,
                      int fp8_scale, const char *what, Diag *d);

#endif

/* elementwise.h - lowering elementwise ops (see elementwise.c). */
#ifndef IPU_LOWER_ELEMENTWISE_H
#define IPU_LOWER_ELEMENTWISE_H

#include "../graph/graph.h"
#include "../kernels/elementwise.h"
#include "lower.h"

/* IPU_OK if a kernel does op from `in` to `out` elements. */
int lower_ew_supported(EwOp op, DType in, DType out, Diag *d);
/* A new place for `tensor` with like's pieces (tiles, blocks, formats;
 * row-major rows padded to whole 8-byte atoms of dt), in new buffers of
 * dt elements live from step `first`; with one_row, one row of each piece
 * (a row broadcast down the block). Caller frees. */
TensorPlace *lower_mirror(Lowered *l, const TensorPlace *like, int32_t tensor,
                          DType dt, int one_row, int32_t first,
                          const char *what);
/* out (made by lower_mirror from a) = op(a[, b]) in new compute steps at
 * the end; b's piece k matches a's piece k, or one row of it. */
int lower_elementwise(Lowered *l, EwOp op, const TensorPlace *a,
                      const TensorPlace *b, const TensorPlace *out,
                      int fp8_scale, const char *what, Diag *d);

#endif

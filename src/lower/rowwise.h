/* rowwise.h - lowering row-wise ops: layernorm, softmax (see rowwise.c). */
#ifndef IPU_LOWER_ROWWISE_H
#define IPU_LOWER_ROWWISE_H

#include "../graph/graph.h"
#include "../kernels/rowwise.h"
#include "lower.h"

/* 1 if the kernel can run on tp's pieces as they are: row-major, each
 * holding whole rows, 8-byte rows padded to whole atoms. */
int lower_rows_whole(const TensorPlace *tp);
/* A new row-major place for `tensor` (its rows x cols view, dt) whose
 * pieces hold whole rows: the rows spread evenly over l->tiles tiles, one
 * piece each, rows padded to pad_cols elements (a multiple of 8 bytes that
 * covers whole atoms), buffers live from step `first`, the first piece
 * on tile tile0 (then the next tiles, wrapping). Caller frees. */
TensorPlace *lower_row_place(Lowered *l, int32_t tensor, uint32_t rows,
                             uint32_t cols, uint32_t pad_cols, DType dt,
                             int32_t first, uint32_t tile0);
/* The place of op's output on x: x's pieces mirrored (buffers live from
 * step `first`), each row as long as the kernel's dst rows need
 * (rw_dst_row_bytes: the f16 softmax keeps e after each row). Caller
 * frees. */
TensorPlace *lower_rowwise_out(Lowered *l, RwOp op, const TensorPlace *x,
                               int32_t tensor, int32_t first, const char *what);
/* out (made by lower_rowwise_out from x) = op(x) per row, in new compute steps
 * at the end; gamma and beta (layernorm; NULL for softmax): one row next
 * to each piece of x (lower_mirror with one_row). eps and scale as in
 * OpAttrs. */
int lower_rowwise(Lowered *l, RwOp op, const TensorPlace *x,
                  const TensorPlace *gamma, const TensorPlace *beta,
                  const TensorPlace *out, double eps, double scale,
                  const char *what, Diag *d);

#endif

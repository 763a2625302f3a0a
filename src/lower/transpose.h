/* transpose.h - lowering transposes (see transpose.c). */
#ifndef IPU_LOWER_TRANSPOSE_H
#define IPU_LOWER_TRANSPOSE_H

#include "../graph/graph.h"
#include "lower.h"

/* A permutation of the axes before the last, as a FlatMap over whole
 * rows: a source row's index, as digits in the input's axes, goes to the
 * output's row with the digits permuted. */
typedef struct {
	int rank; /* axes before the last */
	int64_t in_dim[GRAPH_MAX_RANK], out_stride[GRAPH_MAX_RANK];
	int64_t perm[GRAPH_MAX_RANK];
	uint64_t cols;
} RowPerm;

/* The map of a tensor of shape `in` to the tensor whose axis k is in's
 * axis perm->dim[k] (perm keeps the last axis). */
FlatMap lower_row_perm(RowPerm *p, const Shape *in, const Shape *perm);

/* A slice that keeps the last axis whole, as a FlatMap over whole rows:
 * a source row inside [begin, end) on every axis goes to its place in the
 * output, the others are dropped (LOWER_DROP). */
typedef struct {
	int rank; /* axes before the last */
	int64_t in_dim[GRAPH_MAX_RANK], begin[GRAPH_MAX_RANK],
	    end[GRAPH_MAX_RANK];
	uint64_t cols;
} RowSlice;
FlatMap lower_row_slice(RowSlice *s, const Shape *in, const Shape *begin,
                        const Shape *end);

/* Steps at the end of l that fill `to` (the output's place) with the
 * tensor in `from` (shape `in`) permuted by perm, whose last axis is one
 * of in's others: an exchange into whole-row blocks, the on-tile 2-D
 * transposes, an exchange into `to`. */
int lower_transpose_last(Lowered *l, const TensorPlace *from, const Shape *in,
                         const Shape *perm, const TensorPlace *to, Diag *d);

#endif

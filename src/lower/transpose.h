/* transpose.h - lowering transposes (see transpose.c). */
#ifndef IPU_LOWER_TRANSPOSE_H
#define IPU_LOWER_TRANSPOSE_H

#include "../graph/graph.h"
#include "lower.h"

/* Steps at the end of l that fill `to` (the output's place) with the
 * tensor in `from` (shape `in`) permuted by perm, whose last axis is one
 * of in's others: an exchange into whole-row blocks, the on-tile 2-D
 * transposes, an exchange into `to`. */
int lower_transpose_last(Lowered *l, const TensorPlace *from, const Shape *in,
                         const Shape *perm, const TensorPlace *to, Diag *d);

#endif

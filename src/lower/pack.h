/* pack.h - packing a matmul's operand B on the device (see pack.c). */
#ifndef IPU_LOWER_PACK_H
#define IPU_LOWER_PACK_H

#include "lower.h"

/* Fill `want` (a GEMM's B pieces, layout_is_packed) from `from` (where B
 * lives, or with `map` the tensor B views) in new steps from index `at`
 * on: an exchange into row-major blocks, then compute steps that pack
 * each block (kernels/pack.S). *inserted gets the number of steps. */
int lower_pack_b(Lowered *l, const TensorPlace *from, const FlatMap *map,
                 const TensorPlace *want, int32_t at, int *inserted, Diag *d);

#endif

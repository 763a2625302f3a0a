/* pack.h - packing a matmul's operand B on the device (see pack.c). */
#ifndef IPU_LOWER_PACK_H
#define IPU_LOWER_PACK_H

#include "lower.h"

/* Fill `want` (a GEMM's B pieces, layout_is_packed) from `from` (where B
 * lives, or with `map` the tensor B views) in new steps from index `at`
 * on: an exchange into row-major blocks, then compute steps that pack
 * each block (kernels/pack.S); with `ones` > 0 (f8 B, GemmPlan.norm_cols)
 * B's column `ones`, the padding column of the pieces that end there,
 * holds the byte `one` in B's rows (PackCall.one). *inserted gets the
 * number of steps. */
int lower_pack_b(Lowered *l, const TensorPlace *from, const FlatMap *map,
                 const TensorPlace *want, uint32_t ones, uint8_t one,
                 int32_t at, int *inserted, Diag *d);

#endif

/*
 * pack.h - the weight-packing kernel (kernels/pack.S) from the host side:
 * the entry, the checks a call must pass, its argument block, its exact
 * cycle count (its one-tile driver: src/bench/tile_kernel.h).
 *
 * A call writes the GEMM weight layout of B[bk x bn] (docs/kernel-gemm.md
 * "Layouts"; byte for byte what gemm_pack_b makes, padding zero) at dst,
 * from a row-major block at src with rows `stride` bytes apart: B itself
 * ([bk x bn]), or with `transposed` its transpose B^T ([bn x bk]). The
 * kernel reads the source padded to whole panels (pack_src_rows rows of
 * pack_src_row_bytes), whatever the padding holds. docs/kernel-pack.md.
 */
#ifndef IPU_PACK_H
#define IPU_PACK_H

#include <stdint.h>

#include "../util/util.h"
#include "gemm.h"

typedef struct {
	GemmDtype t;
	int transposed; /* src holds B^T */
	uint32_t bk, bn;
	uint32_t src, stride; /* bytes */
	uint32_t dst;         /* gemm_b_bytes(t, bk, bn) bytes */
} PackCall;

enum { PACK_ARGS_BYTES = 64 + 6 * 16 };

/* The entry symbol and the kernel object it is in: "pack", or for f8
 * from B "pack_f8" (kernels/pack_f8.S, C600 only). */
const char *pack_entry(GemmDtype t, int transposed);
const char *pack_object(GemmDtype t, int transposed);
/* The source extent the kernel reads: rows and bytes of each row. */
uint32_t pack_src_rows(GemmDtype t, int transposed, uint32_t bk, uint32_t bn);
uint32_t pack_src_row_bytes(GemmDtype t, int transposed, uint32_t bk,
                            uint32_t bn);
/* IPU_OK, or IPU_EINVAL naming the problem: empty shape, 8-byte
 * alignment of src, dst and the stride, a stride shorter than a source
 * row, dst overlapping the source, anything past 4 GiB. */
int pack_check(const PackCall *c, Diag *d);
void pack_args_fill(const PackCall *c, uint8_t out[PACK_ARGS_BYTES]);
/* Cycles of a checked call on chip c (its timing profile) from the
 * supervisor's entry to its return. */
uint64_t pack_cycles(const Chip *chip, const PackCall *c);

#endif

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
	/* f8 from B, bn not a multiple of 16: > 0, the byte that column bn
	 * (padding) holds in B's bk rows instead of 0 (V's 1.0 where PV
	 * sums its rows, GemmPlan.norm_cols) */
	uint8_t one;
} PackCall;

enum { PACK_ARGS_BYTES = 72 + 6 * 16 };

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
 * row, dst overlapping the source, anything past 4 GiB, `one` but for
 * f8 from B with a padding column. */
int pack_check(const PackCall *c, Diag *d);
void pack_args_fill(const PackCall *c, uint8_t out[PACK_ARGS_BYTES]);
/* Cycles of a checked call on chip c (its timing profile) from the
 * supervisor's entry to its return. */
uint64_t pack_cycles(const Chip *chip, const PackCall *c);

/* pack_b_f16_f8 (kernels/pack_f8.S, C600 only): the f8 cast and the
 * pack in one call. Panel i of dst (GEMM_B_PANEL_BYTES at dst + 512 i)
 * is the weight-layout panel of the f8 cast of the 32 x 16 block of f16
 * at src + i x panel_stride, rows `stride` bytes apart: panel row m, byte
 * j = f8(block row j, column m), what pack_b_f8 makes of ew_cast_f16_f8's
 * rows. Blind: a block's padding is cast and stored like its data. */
typedef struct {
	DType f8;      /* DT_F8_F143 or DT_F8_F152 */
	int fp8_scale; /* -32..31, as EwCall's */
	uint32_t panels;
	uint32_t src, stride, panel_stride; /* bytes */
	uint32_t dst;                       /* panels x 512 bytes */
} PackCastCall;

enum { PACK_CAST_ARGS_BYTES = 24 + 6 * 16 };

const char *pack_cast_entry(void);  /* "pack_b_f16_f8" */
const char *pack_cast_object(void); /* "pack_f8" */
/* IPU_OK, or IPU_EINVAL naming the problem: no panels, not an f8 type or
 * scale, 8-byte alignment of src, dst, the strides, a row stride under
 * 32 bytes, dst overlapping a block, anything past 4 GiB. */
int pack_cast_check(const PackCastCall *c, Diag *d);
void pack_cast_args_fill(const PackCastCall *c,
                         uint8_t out[PACK_CAST_ARGS_BYTES]);
/* Cycles of a checked call on chip c from the supervisor's entry to its
 * return. */
uint64_t pack_cast_cycles(const Chip *chip, const PackCastCall *c);

#endif

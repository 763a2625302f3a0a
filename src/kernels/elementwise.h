/*
 * elementwise.h - the elementwise kernels (kernels/elementwise.S,
 * kernels/elementwise_f8.S, kernels/elementwise_bias_f8.S) from the host
 * side: which entry and object
 * serve an operation, the checks a call must pass, its argument block,
 * its exact cycle count (its one-tile driver: src/bench/tile_kernel.h).
 *
 * A call walks
 *     for s < nseg, r < rows, c < cols:  dst[s,r,c] = f(a[s,r,c], b[s,r,c])
 * where x[s,r,c] is at byte x.addr + s*x.seg_stride + r*x.row_stride +
 * c*elemsize(x). b (add, mul) may broadcast with a zero stride. dst may be
 * a when the element sizes are equal. A transpose writes dst[s,c,r] =
 * a[s,r,c] (dst has cols rows of `rows` elements) and may not be in
 * place. docs/kernel-elementwise.md.
 */
#ifndef IPU_ELEMENTWISE_H
#define IPU_ELEMENTWISE_H

#include <stdint.h>

#include "../target/chip.h"
#include "../target/dtype.h"
#include "../util/util.h"

/* EW_GELU_H: GELU in f16 arithmetic (its 2u and sigmoid rounded to f16),
 * for a result that is narrowed to f8 next; EW_GELU computes in f32.
 * EW_BIAS_GELU_H: EW_GELU_H of a + b (the sum rounded to f16), b a bias
 * row: 16 columns a row, b one row a segment (row stride 0), f16 in and
 * f8 out (a GEMM's C panels, its bias add, GELU and cast in one pass). */
typedef enum {
	EW_ADD,
	EW_MUL,
	EW_CAST,
	EW_GELU,
	EW_TRANSPOSE,
	EW_GELU_H,
	EW_RELU, /* max(x, 0) */
	EW_MAX,
	EW_BIAS_GELU_H
} EwOp;

typedef struct {
	uint32_t addr, seg_stride, row_stride; /* bytes */
} EwRef;

typedef struct {
	EwOp op;
	DType in, out;             /* add, mul, max, gelus, relu: equal */
	int fp8_scale;             /* casts to or from f8: -32..31 */
	uint32_t nseg, rows, cols; /* cols (and a transpose's rows): a
	                              multiple of ew_col_multiple */
	EwRef dst, a, b;           /* b: add, mul, max and bias gelu */
} EwCall;

enum { EW_ARGS_BYTES = 48 + 6 * 24 };

/* The entry symbol, NULL if the kernels do not support the combination. */
const char *ew_entry(EwOp op, DType in, DType out);
/* IPU_OK if a kernel does op from `in` to `out` elements, else IPU_EINVAL
 * with a message naming the types. */
int ew_supported(EwOp op, DType in, DType out, Diag *d);
/* The kernel object to link: "elementwise", "elementwise_f8" or
 * "elementwise_bias_f8" (the last two C600 only); NULL if unsupported. */
const char *ew_object(EwOp op, DType in, DType out);
/* cols must be a multiple of this (0 if unsupported). */
uint32_t ew_col_multiple(DType in, DType out);
/* IPU_OK, or IPU_EINVAL with a message naming the field: support, shape,
 * 8-byte alignment of addresses and strides, dst overlapping itself or
 * an input other than exactly in place. */
int ew_check(const EwCall *c, Diag *d);
/* The argument block of a checked call (little-endian words). */
void ew_args_fill(const EwCall *c, uint8_t out[EW_ARGS_BYTES]);
/* Cycles of a checked call on chip c (its timing profile) from the
 * supervisor's entry to its return. */
uint64_t ew_cycles(const Chip *chip, const EwCall *c);

#endif

/*
 * rowwise.h - the row-wise kernels (kernels/rowwise.S) from the host
 * side: which entry serves an operation, the checks a call must pass, its
 * argument block, its exact cycle count (its one-tile driver:
 * src/bench/tile_kernel.h).
 *
 * A call works on `rows` rows of `cols` elements, row r of x at byte
 * x + r * x_stride and of dst at dst + r * dst_stride:
 *     layernorm  dst[r] = (x[r] - mean) * rsqrt(var + eps) * gamma + beta
 *     softmax    dst[r] = exp(scale (x[r] - max)) / sum
 * with the mean, the variance (about the mean, divided by cols), the max
 * and the sum of one row, computed in f32; gamma and beta are one row of
 * cols elements of x's type. dst is written in whole 8-byte atoms: the
 * lanes of a row's last atom past cols get unspecified values (the f16
 * softmax may read x and write dst in the GEMM C layout: x_panel,
 * dst_panel). With
 * fewer than six rows each row may be cut into segments over the workers
 * (split mode, chosen by rw_args_fill when rw_cycles says it is faster);
 * the kernel then writes partial statistics into its argument block.
 * docs/kernel-rowwise.md.
 */
#ifndef IPU_ROWWISE_H
#define IPU_ROWWISE_H

#include <stdint.h>

#include "../target/chip.h"
#include "../target/dtype.h"
#include "../util/util.h"

typedef enum { RW_LAYERNORM, RW_SOFTMAX } RwOp;

typedef struct {
	RwOp op;
	DType type;           /* x, dst, gamma and beta */
	uint32_t rows, cols;  /* cols <= RW_MAX_COLS(type) */
	uint32_t x, x_stride; /* bytes; 8-aligned */
	/* 0, or (f16 softmax) x is in the GEMM C layout, as dst_panel */
	uint32_t x_panel;
	uint32_t dst, dst_stride;
	/* 0, or (f16 softmax) dst is in the GEMM C layout: columns
	 * [16p, 16p + 16) of row r at dst + r * dst_stride + p * dst_panel,
	 * dst_stride 32 (a panel row), e kept after the panels; in f8
	 * (dst_f8) panels of 32 columns, [32p, 32p + 32) */
	uint32_t dst_panel;
	uint32_t gamma, beta; /* layernorm: addresses of one row each */
	float eps;            /* layernorm: >= 0, finite */
	float scale;          /* softmax: > 0, finite */
	/* f16 softmax: t, exp and y in f16 (rw_softmax_f16h; the max and
	 * the sum in f32), for a result only read at f8's precision */
	int exp_f16;
	/* DT_F8_F143 or DT_F8_F152: dst holds y in f8 at 2^f8_scale: the
	 * f16 softmax's (exp_f16, dst in panels of 32 columns, a panel row
	 * of 32 bytes: the f8 GEMM's A K-panel rows)
	 * as the cast of its f16 y (rw_softmax_f16h8); the f16 layernorm's
	 * (dst in rows of cols bytes, cols a multiple of 8) with z = (x -
	 * mean) rsqrt and y = z gamma + beta in f16 arithmetic, the mean
	 * and rsqrt rounded to f16 (rw_layernorm_f16h8). Else (0) dst is in
	 * type */
	DType dst_f8;
	int f8_scale; /* -32 .. 31 */
	/* layernorm writing f8 (dst_f8) without gamma and beta: y = z
	 * (rw_layernorm_f16h8n; gamma and beta unused) */
	int plain;
	/* softmax writing f8 (dst_f8): dst = exp(scale (x - max)), the e
	 * not divided by their sum (rw_softmax_f16h8u: two passes, no e
	 * kept; the lanes of the last panel row past cols are 0). The
	 * reader divides: PV's multiply sums each row in a column of ones
	 * of V */
	int unnorm;
} RwCall;

enum {
	RW_ARGS_BYTES = 456,
	RW_MAX_ATOMS = 65536, /* a row's atoms: rpt's 16-bit count + 1 */
};

/* The entry symbol of a call (its op, type, exp_f16 and dst_f8); NULL
 * for an unknown op or type. */
const char *rw_entry(const RwCall *c);
/* Its object: "rowwise" (kernels/rowwise.S), or "rowwise_f8" (C600
 * only) for dst_f8. */
const char *rw_object(const RwCall *c);
/* Elements per 8-byte atom: 2 (f32) or 4 (f16). dst rows are written up
 * to cols rounded up to this. */
uint32_t rw_group(DType t);
/* Bytes a dst row takes: its atoms, 8 bytes each, and for the f16
 * softmax after them the row's e in f32 (16 bytes an atom), which pass 2
 * keeps for pass 3; in f8 (`to`, the layernorm's), 4 bytes an atom.
 * dst_stride must be at least this (rows > 1). */
uint32_t rw_dst_row_bytes(RwOp op, DType type, DType to, uint32_t cols);
/* Bytes after a panel dst's panels (dst_panel) where the f16 softmax
 * keeps the e of a row a worker (at most six rows at a time), in f32;
 * to_f8 (dst_f8): one atom more, which an odd row's last pair reads.
 * (An unnormalised softmax, RwCall.unnorm, keeps none.) */
uint32_t rw_panel_e_bytes(uint32_t rows, uint32_t cols, int to_f8);
/* IPU_OK, or IPU_EINVAL with a message naming the field: op and type,
 * shape, 8-byte alignment, overlapping rows, dst overlapping an input
 * other than x exactly in place, eps and scale. */
int rw_check(const RwCall *c, Diag *d);
/* The argument block of a checked call (little-endian words). */
void rw_args_fill(const RwCall *c, uint8_t out[RW_ARGS_BYTES]);
/* Cycles of a checked call on chip c (its timing profile) from the
 * supervisor's entry to its return. */
uint64_t rw_cycles(const Chip *chip, const RwCall *c);

#endif

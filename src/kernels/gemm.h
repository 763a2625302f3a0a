/*
 * gemm.h - the per-tile GEMM kernel (kernels/gemm.S, kernels/gemm_f8.S)
 * from the host side: the data layouts as functions, the argument block,
 * the cycle formula for the compiler's cost model (the one-tile driver
 * that runs it on the emulator: src/bench/tile_kernel.h).
 * docs/kernel-gemm.md describes the layouts and the calling convention.
 *
 * Element types are passed as bit patterns: f16 and C of f8 as uint16_t,
 * f32 as uint32_t (IEEE single), f8 as uint8_t (format chosen by the
 * options). Row-major arrays have no padding; the packers zero-pad bn to
 * 16 columns and bk to the K-panel size.
 */
#ifndef IPU_GEMM_H
#define IPU_GEMM_H

#include <stdint.h>

#include "../target/chip.h"
#include "../target/dtype.h"
#include "../util/fp.h"
#include "../util/util.h"

/* The kernel's variants by element type: both f8 formats share one. */
typedef enum { GEMM_F32, GEMM_F16, GEMM_F8 } GemmDtype;

enum {
	GEMM_COLS = 16,           /* columns per N-panel */
	GEMM_A_ROW_BYTES = 32,    /* one row of one A K-panel, every dtype */
	GEMM_B_PANEL_BYTES = 512, /* one weight panel: 64 $CWEI x 8 bytes */
	GEMM_ARGS_BYTES = 168,    /* the argument block with its six vertices */
	GEMM_A_TAIL = 32,         /* readable bytes needed after A */
	GEMM_FLAG_ZERO = 1,       /* C starts from zero (input C ignored) */
};

GemmDtype gemm_dtype_of(DType t);
const char *gemm_dtype_name(GemmDtype t);
uint32_t gemm_k_panel(GemmDtype t);      /* K per panel: 8, 16 or 32 */
uint32_t gemm_in_bytes(GemmDtype t);     /* bytes per A/B element */
uint32_t gemm_c_elem_bytes(GemmDtype t); /* bytes per C element: 4 or 2 */
uint32_t gemm_c_tail(GemmDtype t);       /* readable bytes needed after C */
uint32_t gemm_n_panels(uint32_t bn);
uint32_t gemm_k_panels(GemmDtype t, uint32_t bk);
/* Buffer sizes in the kernel layouts (without the tails). */
uint32_t gemm_a_bytes(GemmDtype t, uint32_t bm, uint32_t bk);
uint32_t gemm_b_bytes(GemmDtype t, uint32_t bk, uint32_t bn);
uint32_t gemm_c_bytes(GemmDtype t, uint32_t bm, uint32_t bn);

/* Row-major to kernel layout and back (out buffers of the sizes above).
 * The C layout (16-column panels) holds elements of any size e: the
 * compiler keeps tensors derived from C in it (docs/compiler.md). */
void gemm_pack_a(GemmDtype t, uint32_t bm, uint32_t bk, const void *a,
                 void *out);
void gemm_pack_b(GemmDtype t, uint32_t bk, uint32_t bn, const void *b,
                 void *out);
void gemm_pack_c(uint32_t e, uint32_t bm, uint32_t bn, const void *c,
                 void *out);
void gemm_unpack_c(uint32_t e, uint32_t bm, uint32_t bn, const void *in,
                   void *c);

/* Everything a call needs besides the shapes and the tile addresses. */
typedef struct {
	int zero;         /* C = A x B (else C += A x B) */
	Fp8Format fp8_in; /* f8: format of A ($FP_INFMT, fp.h) */
	Fp8Format fp8_w;  /* f8: format of B */
	int fp8_scale;    /* f8: products scaled by 2^scale, -32..31 */
	uint32_t calls;   /* gemm_tile_run: back-to-back calls (0 = 1) */
	uint32_t workers; /* 5: the gemm5_* entries, which leave the
	                     supervisor slot 5 while they compute; else 6 */
} GemmOptions;

/* One call: C[bm x bn] (+)= A[bm x bk] x B[bk x bn], the operands at
 * these tile addresses in the kernel's layouts. */
typedef struct {
	GemmDtype t;
	uint32_t bm, bn, bk;
	uint32_t a, b, c; /* tile addresses */
	GemmOptions opt;
} GemmCall;

/* The kernel objects a call links, returning how many: the one with the
 * workers and the six-worker entries ("gemm", or "gemm_f8" for f8) and,
 * with five workers, the one with their entry ("gemm5", "gemm5_f8"),
 * last. */
int gemm_objects(GemmDtype t, uint32_t workers, const char *names[2]);
/* The kernel's entry symbol for t with 5 or 6 workers, and the argument
 * block of a call (little-endian words). */
const char *gemm_entry(GemmDtype t, uint32_t workers);
void gemm_args_fill(const GemmCall *c, uint8_t out[GEMM_ARGS_BYTES]);
/* Whether a further K-panel's run enters at the stream itself, its
 * pointers moved on by the previous run's drain (f16 and f8 with six
 * workers, when every worker's jumps fit the 10-bit stride fields:
 * docs/kernel-gemm.md "Workers"). */
int gemm_k_stream(GemmDtype t, uint32_t workers, uint32_t bm);

/* Cycles of one call with 5 or 6 workers on chip c (its timing profile),
 * from the supervisor's entry to its return, by the formula of
 * docs/kernel-gemm.md. */
uint64_t gemm_tile_cycles(const Chip *c, GemmDtype t, uint32_t workers,
                          uint32_t bm, uint32_t bn, uint32_t bk);

#endif

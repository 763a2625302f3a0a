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
	uint32_t five;    /* an overlapped call (codegen's five-worker
	                     panel loop, below): its first `five` panels, in
	                     the kernel's order (N outer, K inner), run as
	                     codegen's panel blocks with five workers, the
	                     rest as six-worker calls (gemm_rest); 0: none */
	int plain5;       /* those five-worker panels run the plain streams
	                     even where gemm_five_chained allows the chained
	                     ones (the exchange beside them needs the
	                     longer windows: xsched.c, schedule_overlap) */
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
/* The kernel's entry symbol for a call of bm x bn x bk with 5 or 6
 * workers (the chained one across N-panels when gemm_n_chained, else the
 * chained one when gemm_k_chained, else the primed one when
 * gemm_k_primed), and the argument block of a call (little-endian
 * words). */
const char *gemm_entry(GemmDtype t, uint32_t workers, uint32_t bm, uint32_t bn,
                       uint32_t bk);
void gemm_args_fill(const GemmCall *c, uint8_t out[GEMM_ARGS_BYTES]);
/* Whether a further K-panel's run enters at the stream itself, its
 * pointers moved on by the previous run's drain (f16 and f8 with six
 * workers, when every worker's jumps fit the 10-bit stride fields:
 * docs/kernel-gemm.md "Workers"). */
int gemm_k_stream(GemmDtype t, uint32_t workers, uint32_t bm);
/* Whether the call runs primed (gemm_*_primed: the AMP stays primed from
 * one K-panel of an N-panel to the next, docs/kernel-gemm.md "Keeping the
 * AMP primed"): f16 and f8 with six workers, two or more K-panels, every
 * worker two rows or more and its jumps within the 10-bit fields. */
int gemm_k_primed(GemmDtype t, uint32_t workers, uint32_t bm, uint32_t bk);

/* Whether a primed call runs chained (gemm_*_chained: also no warm-up
 * group in a further K-panel, docs/kernel-gemm.md "Chained K-panels"):
 * gemm_k_primed's calls with every worker 3 rows or more and A's jump in
 * two fields (bm <= 306). gemm_k_primed stays true for them. */
int gemm_k_chained(GemmDtype t, uint32_t workers, uint32_t bm, uint32_t bk);

/* Whether a chained call also chains across N-panels (gemm_f8_nchained:
 * an N-panel's last K-panel runs into the next N-panel's first without
 * draining, docs/kernel-gemm.md "Chained across N-panels"): f8,
 * gemm_k_chained's calls with two N-panels or more and every worker's
 * jump to the next N-panel, 4 (bm - n) + 1 atoms, within one 10-bit
 * field (bm <= 153). gemm_k_chained stays true for them. */
int gemm_n_chained(GemmDtype t, uint32_t workers, uint32_t bm, uint32_t bn,
                   uint32_t bk);

/* Cycles of one call with 5 or 6 workers on chip c (its timing profile),
 * from the supervisor's entry to its return, by the formula of
 * docs/kernel-gemm.md. */
uint64_t gemm_tile_cycles(const Chip *c, GemmDtype t, uint32_t workers,
                          uint32_t bm, uint32_t bn, uint32_t bk);

/*
 * The overlapped phase (docs/bench-gemm.md, "The third step"): codegen
 * runs the first P panels of a call itself, with five workers, so that
 * the exchange of the next superstep can go between its panel blocks in
 * the supervisor's slot 5. A panel block is
 *     sync LOCAL; setzi $m1, entry; setzi $m2, A panel;
 *     32 ld128putcs; 5 x run $m1, $m2, 0
 * the workers' $WORKER0..4_BASE and $CCCSLOAD (f8: $FP_INFMT, $FP_ISCL)
 * set once before. An overlapped call's argument block (lower_call_args)
 * is GEMM_OVERLAP_ARGS_BYTES: the five workers' block (their vertices),
 * then the blocks of the rest calls (gemm_rest), GEMM_ARGS_BYTES each.
 */
enum {
	GEMM_OVERLAP_ARGS_BYTES = 3 * GEMM_ARGS_BYTES,
	GEMM_VERTEX_AT = 48,    /* the first vertex in a block */
	GEMM_VERTEX_BYTES = 20, /* a worker's vertex (kernels/gemm.inc) */
	/* the worker entries after the full one, in bytes after it
	 * (kernels/gemm.inc's ENTRY_NEXT_N, ENTRY_NEXT_K, ENTRY_STREAM) */
	GEMM_ENTRY_NEXT_N = 20,
	GEMM_ENTRY_NEXT_K = 24,
	GEMM_ENTRY_STREAM = 32,
};
/* The worker entry kinds of a panel: the call's first, a further
 * N-panel's first, a further K-panel. */
typedef enum { GEMM_FULL, GEMM_NEXT_N, GEMM_NEXT_K } GemmEntry;

/* The worker entry symbol (zero: the zero mode's, which ignores C). */
const char *gemm_worker_entry(GemmDtype t, int zero);
/* Panel p of call c (the kernel's order): its entry kind, whether it runs
 * the zero worker, and its A panel's address. */
GemmEntry gemm_panel(const GemmCall *c, uint32_t p, int *zero,
                     uint32_t *a_panel);
/* Whether an overlapped call's five-worker panels run the chained workers
 * (docs/kernel-gemm.md, "Five workers, chained"): f16 and f8, two or more
 * K-panels, every one of the five workers 3 rows or more and its jumps
 * within the 10-bit fields (bm 15 .. 318). gemm_args_fill gives such a
 * call's five vertices the chained rows and jumps. */
int gemm_five_chained(GemmDtype t, uint32_t bm, uint32_t bk);
/* Whether c's first `panels` panels may run with five workers: not where
 * f16's chained panels would end on an N-panel's first K-panel (that
 * panel both starts cold and drains: the cold-and-drain stream is in
 * gemm_f8.S alone; in gemm.S f32's programs would carry it too). */
int gemm_five_count(const GemmCall *c, uint32_t panels);
/* How five-worker panel p of `panels` runs: the worker symbol, its entry
 * (bytes after the symbol) and each worker's issues besides P n (n its
 * rows, P = 4 or 8): the entry's and the stream's. */
typedef struct {
	const char *worker;
	uint32_t offset;
	uint32_t issues;
} GemmRun;
void gemm_five_run(const GemmCall *c, uint32_t p, uint32_t panels, GemmRun *r);
/* The six-worker calls over the panels after the first c->opt.five: the
 * K-panels left of the N-panel it ends in (when it ends inside one), then
 * the N-panels after it; addresses moved on. Returns how many (0..2). */
int gemm_rest(const GemmCall *c, GemmCall rest[2]);
/* An overlapped call's argument block (GEMM_OVERLAP_ARGS_BYTES). */
void gemm_overlap_args_fill(const GemmCall *c,
                            uint8_t out[GEMM_OVERLAP_ARGS_BYTES]);

/* The CSRs an overlapped step writes before its opening sync (codegen's
 * emit_overlap): the five workers' $WORKERn_BASE and $CCCSLOAD; f8 also
 * $FP_INFMT and $FP_ISCL. */
uint32_t gemm_overlap_csrs(GemmDtype t);
/* That setup by the SupClock from cycle 0: the CSRs' values set into $m1..
 * and the incoming count after them, then the CSR writes, each holding
 * the next instruction back (sup-put). Returns the cycle the sync issues. */
uint64_t gemm_overlap_setup(const Chip *c, GemmDtype t);

/* One panel block of bm rows whose sync LOCAL issues at cycle `at` (the
 * tile's cycle count; the previous block's workers exited by at + 1 -
 * sync-local), by the SupClock: its timing depends only on at mod 6. */
typedef struct {
	uint64_t run[5]; /* the five runs' cycles */
	uint64_t open;   /* the supervisor's first issue after them: the
	                    first slot 5 (cycle mod 6 = 5) */
	uint64_t exit_min, exit_max; /* its workers' first and last exit */
} GemmBlock;
void gemm_block(const Chip *c, GemmDtype t, uint32_t bm, const GemmRun *run,
                uint64_t at, GemmBlock *b);

/*
 * The windows of an overlapped phase's P five-worker panels on tiles of
 * bm[0..n - 1] rows (the same dtype and K), the same on every tile, in the
 * exchange's frame: cycle 0 is the first slot 5 after block 0's runs
 * (every tile the same, whatever the opening sync's release mod 6).
 *   at[p]          block p's sync LOCAL, p = 1 .. P - 1 (at[0] = 0 is
 *                  not used): the latest over the tiles of the previous
 *                  block's last exit + sync-local - 1, and no earlier
 *                  than min_at[p] (NULL: no bound)
 *   open[p]..close[p]
 *                  where the exchange's supervisor instructions may go
 *                  beside panel p, p = 0 .. P - 1: 6-cycle blocks from a
 *                  multiple of 6 (slot 5), each instruction issuing at
 *                  a block's start and ending by close[p]; close[p] is a
 *                  multiple of 6 at most the earliest exit of panel p on
 *                  any tile + 6 (so no tile's supervisor finds a slot
 *                  other than 5 free before it) and at most at[p + 1]
 *   lead           the most cycles from block 0's sync LOCAL to cycle 0
 *                  (over the six phases)
 *   done           the latest exit of the last panel on any tile
 * Panel 0's block starts at an unknown phase: its exits are taken at the
 * worst of the six. The panels run the chained streams where
 * gemm_five_chained allows, unless `plain` (GemmOptions.plain5). The arrays
 * hold P entries each; gemm_windows_free.
 */
typedef struct {
	uint32_t panels;
	uint64_t *at, *open, *close;
	uint64_t lead, done;
} GemmWindows;
void gemm_windows(const Chip *c, GemmDtype t, const uint32_t *bm, uint32_t n,
                  uint32_t bk, uint32_t panels, int plain,
                  const uint64_t *min_at, GemmWindows *w);
void gemm_windows_free(GemmWindows *w);

#endif

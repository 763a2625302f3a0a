/*
 * lower.h - the lowered program: what every tile stores, exchanges and
 * computes, step by step.
 *
 * The lowering of a plan (lower/gemm.c, ...) fills a Lowered with buffers
 * (sizes and lifetimes, no addresses), steps (exchange phases made of
 * transfers, compute steps made of kernel calls) and, for the host, where
 * each graph tensor's elements live. Then, in order:
 *   - placement (place/) gives every buffer an address on its tile;
 *   - the exchange scheduler (xsched.c) gives every transfer its start
 *     cycle and every exchange step its length;
 *   - codegen (codegen/) writes each tile's supervisor program and links it
 *     with the kernels into a package (pkg/).
 * The cost model prices this same structure (lower_cycles), so the plan is
 * priced as it will be emitted.
 */
#ifndef IPU_LOWER_H
#define IPU_LOWER_H

#include <stdint.h>

#include "../target/chip.h"
#include "../util/util.h"

typedef enum {
	REGION_ANY,         /* anywhere in data memory */
	REGION_INTERLEAVED, /* 128-bit accessible (ld128putcs sources) */
} MemRegion;

/* A buffer on one tile. Lifetimes are in steps: the buffer is live from
 * the start of step `first` to the end of step `last`. */
typedef struct {
	uint32_t tile;
	uint32_t bytes;
	uint32_t align;   /* a power of two, >= 8 */
	uint8_t region;   /* MemRegion */
	int32_t first;    /* first step it is used in (0 = from the start) */
	int32_t last;     /* last step (INT32_MAX = to the end: outputs) */
	int32_t apart;    /* a buffer whose memory elements this one must not
	                     share (a kernel reads both in one bundle), or -1 */
	const char *what; /* static text for reports: "A chunk", "C block" */
	uint32_t addr;    /* placement's result (0 = not placed) */
} Buffer;

/* An address inside a buffer: buf's address + offset. */
typedef struct {
	int32_t buf;
	uint32_t offset;
} BufRef;

/* One send, multicast to every destination. Its five per-destination
 * arrays are one allocation, at ptr_at (lower_transfer, lower_free). */
typedef struct {
	uint32_t src_tile;
	BufRef src;
	uint32_t words; /* 32-bit items */
	uint32_t ndst;
	uint32_t *dst_tile; /* ndst tiles (the source may be one of them) */
	BufRef *dst;        /* where each destination stores the words */
	/* Set by the scheduler, in cycles from the phase's start (the
	 * release of the sync that opens it): */
	uint8_t wide;     /* sent as words / 2 64-bit items, one per cycle,
	                     on the sender's and its partner's wires: the
	                     destinations are whole pairs (xsched.c) */
	uint64_t start;   /* the send's issue */
	uint64_t *ptr_at; /* per destination: its incoming pointer is set */
	uint64_t *mux_at; /* per destination: its mux selects src_tile */
	uint64_t *off_at; /* per destination: its mux selects nothing again,
	                     the cycle after the last word arrived */
} Transfer;

enum { CALL_MAX_REFS = 4, CALL_MAX_PARAMS = 16, CALL_MAX_ARG_BYTES = 256 };

/* A kernel call on one tile: $m0 points to its argument block, which the
 * kernel's fill function builds from the placed addresses of the call's
 * buffers and its parameters (shapes, flags). */
typedef struct KernelCall KernelCall;
struct KernelCall {
	uint32_t tile;
	const char *kernel; /* entry symbol in the linked kernels */
	const char *object; /* the kernel object (kernels/NAME.S) it is in */
	int32_t args_at;    /* buffer holding the argument block */
	uint32_t args_bytes;
	BufRef ref[CALL_MAX_REFS]; /* buffers the kernel is given */
	int nref;
	uint32_t param[CALL_MAX_PARAMS];
	void (*fill)(const KernelCall *c, const uint32_t *addr, uint8_t *out);
	uint64_t cycles; /* the kernel's cycle formula */
	uint64_t macs;   /* the graph's multiply-accumulates it computes */
};

typedef enum { STEP_EXCHANGE, STEP_COMPUTE } StepKind;

/* A transfer a tile takes part in: it sends it (dst = -1) or is its
 * destination number dst. */
typedef struct {
	int32_t xfer, dst;
} TileXfer;

typedef struct {
	StepKind kind;
	const char *what; /* for reports: "A/B gather 3", "gemm 3" */
	Transfer *xfer;   /* STEP_EXCHANGE */
	int nxfer;
	KernelCall *call; /* STEP_COMPUTE: at most one per tile */
	int ncall;
	uint64_t cycles; /* exchange: scheduled length; compute: max call */
	/* the graph ops it serves (Lowered.op when it was made, or when an
	 * op's calls or transfers joined it), for reports */
	int32_t *op;
	int nop;
	/* lower_index: each tile's share, for codegen: tile t's transfers
	 * are by_tile[first[t] .. first[t + 1] - 1], its call call_of[t]
	 * (-1: none) */
	uint32_t *first;
	TileXfer *by_tile;
	int32_t *call_of;
} Step;

/* How a block of a tensor is laid out in a buffer. */
typedef enum {
	PF_ROWMAJOR, /* rows x cols elements, row stride = cols */
	PF_GEMM_B,   /* the GEMM kernel's weight layout ($CWEI panels) */
	PF_GEMM_C,   /* the GEMM kernel's output layout (column panels) */
	/* the transpose of the tensor's block, in the layouts above: the
	 * block's rows x cols are the tile's cols x rows */
	PF_ROWMAJOR_T,
	PF_GEMM_B_T,
} PieceFormat;

/* A block [row0, row0 + rows) x [col0, col0 + cols) of a tensor's 2-D
 * view, stored on one tile padded to pad_rows x pad_cols. */
typedef struct {
	uint32_t tile;
	BufRef at;
	uint32_t row0, rows, col0, cols;
	uint32_t pad_rows, pad_cols;
	uint8_t format; /* PieceFormat */
} Piece;

/* Where the elements of one graph tensor (an input or output) live. Every
 * element is in exactly one piece. */
typedef struct {
	int32_t tensor; /* graph tensor id */
	uint32_t rows, cols;
	uint8_t dtype; /* graph DType */
	Piece *piece;
	int npiece;
} TensorPlace;

typedef struct {
	const Chip *chip;
	uint32_t tiles; /* tiles in use: 0..tiles-1 */
	Buffer *buf;
	int nbuf, capbuf;
	Step *step;
	int nstep, capstep;
	TensorPlace *tp;
	int ntp, captp;
	/* A loop (the graph's repeat): steps loop_first .. loop_last run
	 * loop_count times (0: no loop; loop_last -1 while the body is being
	 * lowered). */
	int32_t loop_first, loop_last;
	uint32_t loop_count;
	/* The graph op being lowered: new steps and calls are tagged with
	 * it (Step.op); -1 for the loop's own steps. */
	int32_t op;
} Lowered;

/* lower.c: building and freeing */
Lowered *lower_new(const Chip *chip, uint32_t tiles);
void lower_free(Lowered *l);
int32_t lower_buffer(Lowered *l, uint32_t tile, uint32_t bytes, uint32_t align,
                     MemRegion region, int32_t first, int32_t last,
                     const char *what);
Step *lower_step(Lowered *l, StepKind kind, const char *what);
/* Note that s serves the op being lowered (Lowered.op), once. */
void lower_step_tag(const Lowered *l, Step *s);
Transfer *lower_transfer(Step *s, uint32_t src_tile, BufRef src, uint32_t words,
                         uint32_t ndst);
/* A call with an argument block of args_bytes (initialised data, so it
 * lives for the whole program: kernels may rewrite it). */
KernelCall *lower_call(Lowered *l, Step *s, uint32_t tile, const char *kernel,
                       const char *object, uint32_t args_bytes);

TensorPlace *lower_tensor(Lowered *l, int32_t tensor, uint32_t rows,
                          uint32_t cols, uint8_t dtype);
Piece *lower_piece(TensorPlace *tp);
/* A place of the caller's, outside l->tp (lower/graph.c keeps one per
 * tensor and gives the host's to the Lowered at the end). */
TensorPlace *tensor_place_new(int32_t tensor, uint32_t rows, uint32_t cols,
                              uint8_t dtype);
void tensor_place_free(TensorPlace *tp);
/* A new step at index `at`: later steps and every buffer lifetime from
 * `at` on move up by one (except first = 0, which means from the start:
 * initialised data, host-written inputs), and so do the loop's bounds. */
Step *lower_insert_step(Lowered *l, int32_t at, StepKind kind,
                        const char *what);
uint32_t lower_addr(const Lowered *l, BufRef r); /* after placement */
/* The tile (of 0 .. tiles - 1) with the fewest bytes in stored[], which
 * then stores `bytes` more: where weights go to spread evenly. */
uint32_t lower_least_stored(uint32_t *stored, uint32_t tiles, uint32_t bytes);
/* Move buffer references: each BufRef to a buffer i with to[i].buf >= 0,
 * in l (transfers, calls, l->tp) and in places[0 .. n - 1], becomes
 * {to[i].buf, to[i].offset + its offset}; `apart` partners move too. */
void lower_remap(Lowered *l, const BufRef *to, TensorPlace *const *places,
                 int n);
/* Index every step by tile (Step.first, by_tile, call_of), so that each
 * tile's code is made without scanning the whole chip's transfers. Call
 * once the steps are final (after scheduling). */
void lower_index(Lowered *l);
/* The program's cycles as the cost model sees it: the sum over steps of
 * their lengths plus one sync per exchange step, the loop's steps
 * loop_count times. */
uint64_t lower_cycles(const Lowered *l);
/* The supervisor's cycles around step i as lower_cycles counts them, a
 * run: an exchange's sync, count and CSR write; a compute step's call and
 * return (none if no tile calls). */
uint64_t lower_step_overhead(const Lowered *l, int i);

/* relayout.c: moving a tensor's elements from one place to another.
 * Element f (the flat row-major index of from's 2-D view) goes to element
 * map(f) of to's view; map must move each row of `from` as a whole (a
 * reshape keeps f; a permutation of axes before the last one moves rows;
 * a slice drops rows: map gives LOWER_DROP for elements not moved).
 * NULL: the identity. */
#define LOWER_DROP UINT64_MAX
typedef struct {
	uint64_t (*fn)(const void *ctx, uint64_t flat);
	const void *ctx;
} FlatMap;
/* Adds to exchange step s the transfers that fill every piece of `to`
 * from where `from` holds its elements: contiguous runs on both sides,
 * merged where both sides continue, one multicast per source run that
 * several pieces need. The pieces must be row-major or in the GEMM C
 * layout (runs of whole words; a row's last run may end inside a word
 * whose rest is padding on both sides: it is sent whole); an element of
 * `to` that `from` does not hold is an error. */
int lower_relayout(Step *s, const TensorPlace *from, const TensorPlace *to,
                   const FlatMap *map, Diag *d);
/* An exchange step's cycles before scheduling, for the planner: the
 * busiest tile's sent or received items, a gap per received transfer. */
uint64_t lower_exchange_estimate(const Lowered *l, const Step *s);

/* xsched.c: the exchange scheduler. Gives every transfer of every
 * exchange step a start cycle such that no sender sends two things at
 * once, no receiver gets two items in a cycle, and every receiver's mux
 * and pointer can be switched between its transfers (docs/compiler.md).
 * Sets each exchange step's cycles. */
int xsched_run(Lowered *l, Diag *d);
/* Cycles a transfer occupies its sender and each receiver. */
static inline uint32_t
xfer_items(const Transfer *x)
{
	return x->wide ? x->words / 2 : x->words;
}
/* Phase-relative timing facts the scheduler and codegen share. */

enum {
	XS_PREAMBLE = 3, /* cycles after the sync before any event: the mux
	                    switched off */
	XS_RECV_GAP = 2, /* cycles between two transfers at a receiver */
};

#endif

/*
 * lower.h - the lowered program: what every tile stores, exchanges and
 * computes, step by step.
 *
 * The lowering carries out a plan (plan/plan.h; program.c, gemm.c, ...):
 * it fills a Lowered with buffers (sizes and lifetimes, no addresses),
 * steps (exchange phases made of transfers, compute steps made of kernel
 * calls) and, for the host, where each graph tensor's elements live. Then,
 * in the order compile.c runs them:
 *   - the exchange scheduler (xsched.c) gives every transfer its start
 *     cycle and every exchange step its length;
 *   - placement (place/) gives every buffer an address on its tile,
 *     above the tile's code (whose length codegen_size knows before);
 *   - codegen (codegen/) writes each tile's supervisor program, which
 *     goes with the kernels into a package (pkg/).
 * lower_cycles prices this same structure, the scheduled exchanges and
 * the kernels' formulas: the predicted cycles of the package.
 */
#ifndef IPU_LOWER_H
#define IPU_LOWER_H

#include <stdint.h>

#include "../kernels/elementwise.h"
#include "../kernels/gather.h"
#include "../kernels/gemm.h"
#include "../kernels/pack.h"
#include "../kernels/rowwise.h"
#include "../kernels/vadd.h"
#include "../kernels/wcopy.h"
#include "../plan/plan.h"
#include "../target/chip.h"
#include "../util/util.h"

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
	int32_t op;       /* the graph op being lowered when it was made
	                     (Lowered.op; -1: the loop's, the pipeline's) */
	uint32_t addr;    /* placement's result (0 = not placed) */
	uint8_t wrapped;  /* a B chunk lower_b_wrap made live across the
	                     loop's back edge (lower_b_wrap_undo gives it
	                     back the steps that use it) */
} Buffer;

/* An f16 value at byte `offset` of buffer `buf` from the load
 * (Lowered.init). */
typedef struct {
	int32_t buf;
	uint32_t offset;
	uint16_t bits;
} LowerHalf;

/* Buffer.what of a GEMM's received B chunk (lower/gemm.c), which
 * lower_b_under looks for */
#define LOWER_B_CHUNK "B chunk"

/* Transfer.join's bits */
enum { XJOIN_PREV = 1, XJOIN_NEXT = 2 };

/* One send, multicast to every destination. Its five per-destination
 * arrays are one allocation, at ptr_at (lower_transfer, lower_free). */
typedef struct {
	uint32_t src_tile;
	BufRef src;
	uint32_t words; /* 32-bit items */
	uint32_t ndst;
	uint32_t *dst_tile; /* ndst tiles (the source may be one of them) */
	BufRef *dst;        /* where each destination stores the words */
	/* lower_b_wrap's, in its host (Step.b_wrap): for the next
	 * iteration. Told by this, not by its place in the step: the
	 * scheduler reorders a step's transfers and splits them (its pieces
	 * keep it). */
	uint8_t wrap;
	/* Set by the scheduler, in cycles from the phase's start (the
	 * release of the sync that opens it): */
	uint8_t wide; /* sent as words / 2 64-bit items, one per cycle,
	                 on the sender's and its partner's wires: the
	                 destinations are whole pairs (xsched.c) */
	/* beside five workers (xsched.c "Blocks"): a piece joined to the
	 * transfer's next piece (XJOIN_NEXT: no mux-off) or previous one
	 * (XJOIN_PREV: no pointer, no mux-on); their receivers' mux stays on
	 * the sender between the two, which sends nothing else meanwhile */
	uint8_t join;
	uint64_t start;   /* the send's issue */
	uint64_t *ptr_at; /* per destination: its incoming pointer is set */
	uint64_t *mux_at; /* per destination: its mux selects src_tile */
	uint64_t *off_at; /* per destination: its mux selects nothing again,
	                     the cycle after the last word arrived */
} Transfer;

enum { CALL_MAX_REFS = 4 };

/* What a kernel call computes: the kernel's own call struct (its host-side
 * header), with the tile addresses left 0; they are the call's buffers
 * (KernelCall.ref, in the order given here), filled in once placed
 * (lower_call_args). */
typedef enum {
	KC_GEMM,
	KC_VADD,
	KC_EW,
	KC_RW,
	KC_PACK,
	KC_WCOPY,
	KC_GATHER,
	KC_PACK_CAST
} KernelKind;
typedef struct {
	KernelKind kind;
	union {
		GemmCall gemm; /* KC_GEMM: ref A, B, C */
		VaddCall vadd; /* KC_VADD: ref dst, src, bias, res */
		EwCall ew;     /* KC_EW: ref dst, a, b (add and mul) */
		RwCall rw;     /* KC_RW: ref dst, x, gamma, beta (layernorm) */
		PackCall pack; /* KC_PACK: ref src, dst */
		WcopyCall wcopy;    /* KC_WCOPY: ref bank, dst */
		GatherCall gather;  /* KC_GATHER: ref table, ids, dst */
		PackCastCall pcast; /* KC_PACK_CAST: ref src, dst */
	} u;
} KernelArgs;

/* A kernel call on one tile: $m0 points to its argument block. */
typedef struct {
	uint32_t tile;
	const char *kernel; /* entry symbol in the linked kernels */
	const char *object; /* the kernel object (kernels/NAME.S) it is in */
	int32_t args_at;    /* buffer holding the argument block */
	uint32_t args_bytes;
	BufRef ref[CALL_MAX_REFS]; /* buffers the kernel is given */
	int nref;
	KernelArgs args;
	uint64_t cycles; /* the kernel's cycle formula */
	uint64_t macs;   /* the graph's multiply-accumulates it computes */
} KernelCall;

typedef enum { STEP_EXCHANGE, STEP_COMPUTE } StepKind;

/* An exchange phase beside five workers (docs/bench-gemm.md, "The third
 * step"): the supervisor issues only every `block` cycles, from the
 * phase's cycle 0, and not in the panel windows [at, at + len), when it
 * runs the kernel's panel block (xsched.c, "Blocks"). */
typedef struct {
	uint64_t at, len;
} XWindow;
/* A window this long has no end: nothing of the phase goes at or after
 * its start (an overlapped step's last panel: xsched.c, schedule_overlap) */
#define XWINDOW_ENDLESS (UINT64_MAX / 4)
enum {
	XS_BLOCK = CHIP_SLOTS, /* the supervisor's slot beside five workers
	                          comes back every round of the issue slots
	                          (isa.md 3.1) */
};

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
	/* A compute step whose GEMM calls are overlapped (GemmOptions.five,
	 * the same on every tile): the windows of their five-worker panels,
	 * owned; its transfers (xfer) are the exchange that runs beside
	 * them, scheduled in the windows' frame (gemm.h, gemm_windows;
	 * codegen.c, emit_overlap). NULL otherwise. */
	GemmWindows *gwin;
	/* An exchange beside five workers (lower_step_blocks): block > 0,
	 * and nwin panel windows, sorted and apart (owned by the step) */
	uint32_t block;
	XWindow *win;
	int nwin;
	/* A multiply that runs a later GEMM's B transfers beside it
	 * (lower_b_under): that GEMM's exchange step + 1; 0 otherwise */
	int32_t b_from;
	/* A multiply that also runs the loop body's first weight GEMM's B
	 * transfers for the next iteration (lower_b_wrap): that GEMM's
	 * exchange step + 1 (those transfers have Transfer.wrap); 0
	 * otherwise */
	int32_t b_wrap;
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
	/* a loop over groups (docs/compiler.md "Loops"): iteration i runs
	 * layer i / loop_groups (0 or 1: a layer an iteration) */
	uint32_t loop_groups;
	/* cycles a run of the loop takes beyond loop_count runs of its
	 * steps: over groups, the weights' copies in the first iteration of
	 * each layer, which the loop's first step's cycles (those of the
	 * other iterations, wcopy_every copying nothing) leave out */
	uint64_t loop_extra;
	/* The body's first weight GEMM (loop_weights): its exchange step
	 * whose B transfers read the loop's weights, and the plain multiply
	 * after it; loop_early[t] (NULL: none) the bytes at the start of tile
	 * t's working region (its weights no step after loop_m0 reads), which
	 * lower_b_wrap may copy for the next iteration after loop_m0 */
	int32_t loop_x0, loop_m0;
	uint32_t *loop_early;
	/* f16 values a buffer holds from the program's load (the rest of it
	 * zero): V's column of ones in its blocks' padding (an unnormalised
	 * softmax's PV, GemmPlan.norm_cols), which no step writes */
	LowerHalf *init;
	int ninit, capinit;
	/* The graph op being lowered: new steps and calls are tagged with
	 * it (Step.op); -1 for the loop's own steps. */
	int32_t op;
	/* xsched_run's overlapped GEMM supersteps (Step.gwin as lowered):
	 * kept beside the multiply, and made plain (the multiply, then the
	 * exchange as a step of its own) because the exchange found no room
	 * beside the panels or is cheaper so by the exact cycles */
	uint32_t ovl_beside, ovl_no_room, ovl_dearer;
	/* xsched_run's reductions split by lower_red_pipe: their second
	 * part's exchange beside the first part's five workers, or in a step
	 * of its own after them (no room) */
	uint32_t red_beside, red_no_room;
	/* schedules kept for the compile (xsched.c), or NULL: set by the
	 * compile after lower_plan, not owned */
	struct XschedCache *xcache;
} Lowered;

/* lower.c: building and freeing */
Lowered *lower_new(const Chip *chip, uint32_t tiles);
void lower_free(Lowered *l);
int32_t lower_buffer(Lowered *l, uint32_t tile, uint32_t bytes, uint32_t align,
                     MemRegion region, int32_t first, int32_t last,
                     const char *what);
Step *lower_step(Lowered *l, StepKind kind, const char *what);
/* Make exchange step s one that runs beside five workers: the
 * supervisor's timeline in blocks of `block` cycles from cycle 0, the
 * first kept for the mux's switch-off; the windows win[0 .. nwin - 1]
 * (sorted, apart; copied) are the kernel's panel blocks, which no
 * exchange block may cross. xsched_run then schedules it by those rules
 * (xsched.c, "Blocks") and lower_verify_schedule checks them. */
void lower_step_blocks(Step *s, uint32_t block, const XWindow *win, int nwin);
/* Note that s serves the op being lowered (Lowered.op), once. */
void lower_step_tag(const Lowered *l, Step *s);
Transfer *lower_transfer(Step *s, uint32_t src_tile, BufRef src, uint32_t words,
                         uint32_t ndst);
/* A transfer of words from (src_tile, src) to x's destinations, each
 * `skip` bytes further into its buffer than x's (unscheduled). */
Transfer *lower_transfer_as(Step *s, const Transfer *x, uint32_t src_tile,
                            BufRef src, uint32_t words, uint32_t skip);
/* s's transfers freed; s has none. */
void lower_free_transfers(Step *s);
/* A call with an argument block of args_bytes (initialised data, so it
 * lives for the whole program: kernels may rewrite it). */
KernelCall *lower_call(Lowered *l, Step *s, uint32_t tile, const char *kernel,
                       const char *object, uint32_t args_bytes);
/* The argument block of call c (c->args_bytes) with its buffers at the
 * tile addresses addr[0 .. c->nref - 1]. */
void lower_call_args(const KernelCall *c, const uint32_t *addr, uint8_t *out);

/* GEMM calls on one tile whose argument blocks are equal wherever their
 * buffers are placed (the same buffers, the same call) read one block:
 * the later calls take the first's, theirs left empty. The GEMM kernels
 * only read their block (kernels/gemm*.S), so calls may share it. Call
 * once the calls are final (after scheduling). Returns the blocks left
 * empty. */
uint32_t lower_share_args(Lowered *l);

TensorPlace *lower_tensor(Lowered *l, int32_t tensor, uint32_t rows,
                          uint32_t cols, DType dtype);
/* A new step at index `at`: later steps and every buffer lifetime from
 * `at` on move up by one (except first = 0, which means from the start:
 * initialised data, host-written inputs), and so do the loop's bounds. */
Step *lower_insert_step(Lowered *l, int32_t at, StepKind kind,
                        const char *what);
uint32_t lower_addr(const Lowered *l, BufRef r); /* after placement */
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
/* l's buffers by tile, in index order: tile t's are ids[start[t]] ..
 * ids[start[t + 1] - 1]. Returns the most on one tile; the caller frees
 * both arrays. */
int lower_buffers_by_tile(const Lowered *l, int **start, int **ids);
/* What the tiles of a lowered program hold beside each op, by the tile
 * memory model (plan/mem.c), code[t] the bytes of tile t's code: for each
 * op with want[op] set (ops 0 .. nops - 1), over the tiles where it has
 * buffers and the steps tagged with it, beside[op] = the most data live
 * at one of those steps less the most in buffers the op made, on the tile
 * where that is most, with live bytes counted as the placer counts them
 * (plan_tile_live): what its own peak leaves the tile's peak. But 0 if on
 * each of those tiles the code and all the data live at those steps are
 * within the tile (plan_tile_over). */
void lower_beside(const Lowered *l, const uint32_t *code, const uint8_t *want,
                  int nops, uint32_t *beside);
/* The same count on the tiles with bad[t] set (those placement could not
 * pack), giving the buffers themselves: for each op with want[op] set and
 * buffers on such a tile, out[op] (freed and replaced; each buffer's
 * lifetime clipped to the op's steps, no `apart`) = the other buffers live
 * at its steps on the bad tile where they are most, and beside[op] raised
 * to their most live bytes there. Returns the ops given buffers. */
int lower_beside_bufs(const Lowered *l, const uint8_t *want, const uint8_t *bad,
                      int nops, PlanBeside *out, uint32_t *beside);
/* The supervisor's cycles around step s as lower_cycles counts them, a
 * run: an exchange's sync, count and CSR write; a compute step's call and
 * return (none if no tile calls, or an overlapped multiply's or a
 * lower_step_vadd5 step's, whose cycles hold its calls). */
uint64_t lower_step_overhead(const Chip *c, const Step *s);

/* An exchange step's transfers from moves (layout_moves): the moves that
 * fill every piece of `to` from `from`, in s. */
int lower_relayout(Step *s, const TensorPlace *from, const TensorPlace *to,
                   const FlatMap *map, Diag *d);

/* The loop's part of the program step i is in: 0 before, 1 the body, 2
 * after. */
int lower_loop_part(const Lowered *l, int32_t i);
/* Step `at` removed (its transfers and calls freed), the later steps
 * one earlier: the inverse of lower_insert_step. */
void lower_remove_step(Lowered *l, int32_t at);
/* adirect.c: a GEMM's A sent from its producer straight to the tiles of
 * each chunk's grid row, where one step so costs less than the two (the
 * file's comment); returns the steps removed. */
int lower_a_direct(Lowered *l);
/* bunder.c: a weight GEMM's B transfers moved from its exchange step to
 * an earlier GEMM's multiply, run beside its five-worker panels
 * (the file's comment); returns the transfers moved. lower_b_back puts
 * step c's back (xsched_run, when they do not fit there or do not
 * pay), returning how many. */
int lower_b_under(Lowered *l);
/* The body's first weight GEMM's B transfers (Lowered.loop_x0) into the
 * last plain multiply of the body, for the next iteration: the early part
 * of the loop's weights (Lowered.loop_early) is copied for the next
 * iteration right after that GEMM's multiply (a wcopy step of its own),
 * and before the loop a copy of slot 0's part and an exchange of the
 * moved transfers serve the first iteration (bunder.c). After
 * lower_b_under; returns the number of transfers moved. */
int lower_b_wrap(Lowered *l);
int lower_b_back(Lowered *l, int32_t c);
/* After xsched_run: if every transfer lower_b_wrap moved went back (none
 * paid or fitted where it went), its copy steps and the prologue's
 * exchange are removed and the loop's first step copies whole slots
 * again, the program as without the pass but for the chunks' longer
 * lifetime. Returns 1 if it did. */
int lower_b_wrap_undo(Lowered *l);
/* The cycles lower_b_wrap's own steps add, as scheduled so far: each
 * iteration its copy after the first GEMM's multiply (and its sync) less
 * what the loop's first step's copy saves without that part; *once the
 * prologue's copy and exchange (and their syncs). 0 and *once 0 when the
 * pass made none. */
int64_t lower_b_wrap_steps(const Lowered *l, uint64_t *once);
/* Puts back only lower_b_wrap's transfers of multiply c (Transfer.wrap,
 * each piece the scheduler made of them); returns how many. */
int lower_b_unwrap(Lowered *l, int32_t c);
/* redpipe.c: K-split reductions in two parts of their rows where the
 * price says it gains, the second part's partials exchanged beside the
 * first part's add on five workers (the file's comment). After lowering,
 * before lower_verify and xsched_run; returns the reductions split. */
int lower_red_pipe(Lowered *l);
/* A compute step whose vadd calls run on five workers (VaddCall.five)
 * beside its transfers, scheduled in blocks (redpipe.c; xsched.c,
 * schedule_vadd5; codegen.c, emit_vadd5). */
static inline int
lower_step_vadd5(const Step *s)
{
	return s->kind == STEP_COMPUTE && s->block && !s->gwin;
}
/* Such a step's frame: the cycles from the phase's start to the launch
 * (its setup and opening: lower_vadd5_opening), from the launch to
 * the frame's cycle 0 (*lead), and from there the first slot after the
 * first worker's exit on a block boundary (*close: the exchange's events
 * end before it) and the last worker's exit (*done), the worst of its
 * calls and issue phases; its cycles with that lead and done and the
 * exchange ending at xend (frame cycles): opening, lead, the later of
 * the workers' sync and xend. */
uint64_t lower_vadd5_opening(const Chip *c, const Step *s);
void lower_vadd5_frame(const Chip *c, const Step *s, uint64_t *lead,
                       uint64_t *close, uint64_t *done);
uint64_t lower_vadd5_cycles(const Chip *c, const Step *s, uint64_t lead,
                            uint64_t done, uint64_t xend);
/* gemm.c: multiply step s's cycles as plain six-worker calls; and s made
 * so (an overlapped step made plain: each call's argument block and
 * cycles the six workers', the step's the longest call's, its panel
 * windows and blocks gone; its transfers are the caller's). */
uint64_t lower_gemm_six_cycles(const Lowered *l, const Step *s);
void lower_gemm_six(Lowered *l, Step *s);

/* verify.c: the invariants of a lowered program (lower_verify, after
 * lowering) and of its schedule (lower_verify_schedule, after
 * xsched_run); the file's comment lists them. IPU_EINVAL with d naming
 * the rule and where: an internal error. */
int lower_verify(const Lowered *l, Diag *d);
int lower_verify_schedule(const Lowered *l, Diag *d);
/* print.c: the program as text (ipu compile --dump=lower), and each
 * exchange step's schedule (--dump=sched). */
void lower_print(const Lowered *l, FILE *f);
void lower_print_schedule(const Lowered *l, FILE *f);

/* xsched.c: the exchange scheduler. Gives every transfer of every
 * exchange step a start cycle such that no sender sends two things at
 * once, no receiver gets two items in a cycle, and every receiver's mux
 * and pointer can be switched between its transfers (docs/compiler.md).
 * Sets each exchange step's cycles. An overlapped GEMM superstep (a
 * compute step with Step.gwin and transfers) is priced both ways by the
 * exact cycles (lower_cycles' terms): beside the five workers
 * (schedule_overlap) and plain, its calls with six workers and then its
 * transfers as an exchange step of its own, inserted after it
 * (lower_insert_step); the cheaper is kept, the plain on a tie or when
 * the exchange finds no room beside the panels (Lowered.ovl_*). */
int xsched_run(Lowered *l, Diag *d);
/* An exchange of the n transfers x priced before a schedule: the
 * busiest tile's send items or receive items plus XS_RECV_GAP a window,
 * each 64-bit where it could be (whole pairs of destinations, 8-byte
 * aligned), after the preamble (a lower bound but for the windows, which
 * may go back to back). */
uint64_t xsched_bound(const Lowered *l, const Transfer *x, int n);
/* Exchange step s's transfers scheduled in blocks beside five workers
 * (xsched.c, "Blocks") with nothing at or after frame cycle `close`: the
 * cycle its last word has landed, UINT64_MAX if they do not fit (s is
 * left with blocks and that schedule). */
uint64_t xsched_beside_end(const Lowered *l, Step *s, uint64_t close);
/* Exchange schedules kept by what they are computed from (a step's
 * transfers as given, the chip, the tiles), for every draft and thread of
 * one compile: a schedule is a function of that key alone, so the kept
 * one is the one a step would find itself (xsched.c). Thread-safe. */
typedef struct XschedCache XschedCache;
XschedCache *xsched_cache_new(const Chip *chip);
void xsched_cache_free(XschedCache *c);
/* How many schedules c has given from those it kept. */
uint64_t xsched_cache_hits(XschedCache *c);
/* Exchange step s (no blocks, no overlap) scheduled as xsched_run
 * would: its cycles, UINT64_MAX if no schedule was found. */
uint64_t xsched_step_cycles(const Lowered *l, Step *s);
/* In a step with blocks (lower_step_blocks): the most items a send
 * instruction carries, the largest multiple of the block up to
 * CODE_SEND_ITEMS (60 for blocks of 6), so that back-to-back sends keep
 * the supervisor's issue on the block boundaries; and the cycles a send
 * of n items holds its sender: to the block boundary after its last
 * item. */
static inline uint32_t
xsched_send_max(uint32_t block)
{
	return CODE_SEND_ITEMS / block * block;
}
static inline uint64_t
xsched_hold(uint32_t block, uint64_t items)
{
	return align_up(items, block);
}
/* The items of `words` sent in a width (wide: 64-bit, two words an item). */
static inline uint32_t
words_items(uint32_t words, int wide)
{
	return wide ? words / 2 : words;
}
/* Cycles a transfer occupies its sender and each receiver. */
static inline uint32_t
xfer_items(const Transfer *x)
{
	return words_items(x->words, x->wide);
}
#endif

/*
 * sim.h - the tile emulator: one tile's state, the issue loop, and the
 * helpers that instruction semantics (exec_*.c) use.
 *
 * Timing model (docs/emulator.md has the full story, docs/fidelity.md the
 * rules and their sources; cost.c derives each instruction's costs):
 *   - Six issue slots, round-robin: cycle t belongs to slot t % 6.
 *   - A running worker owns one slot and issues one bundle (or one solo
 *     instruction) per turn, so every instruction has single-issue latency;
 *     a transcendental keeps it from issuing for several turns.
 *   - The supervisor issues in every slot not owned by a running worker
 *     (isa.md 3.1: "one bundle per owned slot per round"; DECISION, flagged),
 *     through a pipeline as deep as the six slots: it waits for $m values
 *     still in flight, after a taken branch and after a CSR write.
 *   - A worker launched by run/runall first issues some cycles later.
 *   - No caches, no speculation. sync waits.
 *
 * Bundle semantics: both halves read registers as they were before the
 * bundle; register writes are logged and committed after both have executed
 * (a store in the main half sees the value the aux half overwrites).
 */
#ifndef IPU_SIM_H
#define IPU_SIM_H

#include <stdint.h>
#include <string.h>

#include "../asm/isa.h"
#include "../target/chip.h"
#include "../util/util.h"

/* Paths with a fast and a plain form: the plain one is the reference
 * semantics, written for clarity; the fast one must give the same state bit
 * for bit, and the differential tests (tests/test_sim_paths.c) run both on
 * the same programs and compare. SIM_PORTABLE is the fast path without the
 * host's optional vector instructions (AVX2). Set before running; read by
 * every host thread. */
typedef enum { SIM_FAST, SIM_PORTABLE, SIM_PLAIN } SimPath;
extern SimPath sim_path;
extern int sim_host_avx2; /* the host has AVX2, F16C and FMA (x86-64) */

/* 1 if the fast paths may use AVX2, F16C and FMA. */
static inline int
sim_use_avx2(void)
{
	return sim_path == SIM_FAST && sim_host_avx2;
}

/* Some half of w has the all-ones exponent (an infinity or a NaN): its
 * exponent field plus one carries into bit 15 of the lane exactly there
 * (0x7c00 + 0x0400; no lane carries into the next). */
static inline int
sim_f16_special(uint64_t w)
{
	return (((w & 0x7c007c007c007c00ull) + 0x0400040004000400ull) &
	        0x8000800080008000ull) != 0;
}

/* Exception types, $WSR.ETYPE / $SSR.ETYPE (isa.md 2.3, TEXCPT_*). */
#define FAULT_TYPES(X)                                                         \
	X(NONE, 0)                                                             \
	X(RBRK, 1)                                                             \
	X(PBRK0, 2)                                                            \
	X(PBRK1, 3)                                                            \
	X(BOS, 4)                                                              \
	X(FP, 5)                                                               \
	X(CONFLICT, 6)                                                         \
	X(EXCONF, 7)                                                           \
	X(INVALID_ADDR, 8)                                                     \
	X(INVALID_OP, 9)                                                       \
	X(INVALID_PC, 10)                                                      \
	X(DBRK, 11)                                                            \
	X(INVALID_INSTR, 12)                                                   \
	X(EXERR, 13)                                                           \
	X(MEMERR, 14)                                                          \
	X(IBRK, 15)

typedef enum {
#define X(name, num) FAULT_##name = num,
	FAULT_TYPES(X)
#undef X
} FaultType;

const char *fault_type_name(FaultType t);

typedef struct {
	FaultType type;
	int ctx;          /* 0 = supervisor, 1..6 = worker 0..5 */
	uint32_t pc;      /* of the faulting instruction or bundle */
	uint32_t word[2]; /* the instruction word(s) */
	int nwords;       /* 0 if the fetch itself failed */
	uint32_t addr;    /* data address, when the cause has one */
	uint64_t cycle;
	char cause[160]; /* human-readable cause */
} Fault;

typedef enum {
	CTXS_IDLE,    /* worker not started / exited */
	CTXS_RUN,     /* issuing */
	CTXS_SYNC,    /* supervisor waiting in sync */
	CTXS_DONE,    /* supervisor returned to the host */
	CTXS_FAULTED, /* stopped by an exception */
} CtxState;

/* AMP pipeline state of one worker (sim/amp.c documents the model). */
typedef struct {
	float acc[16];  /* accumulating: one per engine (16 = both sets) */
	float next[16]; /* partials loaded for the next group */
	float done[16]; /* finished group, drained by the result outputs */
} AmpState;

typedef struct {
	/* what the issue loop reads on every issue first, on one host cache
	 * line */
	CtxState state;
	uint32_t pc;
	uint64_t ready; /* a worker issues from this cycle on (launch delay,
	                   multi-turn instructions) */
	/* rpt */
	uint32_t rpt_count, rpt_first, rpt_end;
	uint32_t m[16];
	uint32_t a[16];
	/* worker CSRs */
	uint32_t vertex_base, worker_base;
	uint32_t fp_sts, fp_ctl, tas, fp_nfmt, fp_scl;
	uint64_t prng[2];
	uint32_t aacc[CHIP_AACC]; /* $AACC bit patterns (f32) */
	AmpState amp;
	uint32_t dbg_data;
	int exit_status; /* last exit* result, -1 = none */
} Context;

/* One pending register write of the bundle in flight. */
typedef struct {
	uint32_t *dst; /* the register, or Exec.msink / Exec.sink for $mzero
	                  and $a14, $a15 */
	uint32_t value;
} RegWrite;

/* One memory access of the bundle in flight, for conflict checks. */
typedef struct {
	uint32_t addr, size;
	uint8_t store;
	int el[2]; /* its memory element(s), -1 = none (a 128-bit access
	              uses both elements of its pair) */
} MemAccess;

typedef struct Tile Tile;
typedef struct ChipSim ChipSim;
typedef struct SimObserve SimObserve;

/* Exchange state of one tile (sim/exchange.c). Controls are the receive
 * side's settings in time order; packets are what it sent. */
typedef enum {
	XC_MUX,    /* incoming mux source: a logical tile, MUX_HOST, MUX_NONE */
	XC_PTR,    /* incoming pointer (byte address) */
	XC_FORMAT, /* $INCOMING_FORMAT: 0 = 32-bit items, 1/2 = 64-bit */
	XC_DCOUNT, /* $INCOMING_DCOUNT: items still expected */
	XC_BASE,   /* $INCOMING_BASE: receive window start */
	XC_SIZE,   /* $INCOMING_DELTA: receive window size, 0 = all memory */
} XControlKind;

typedef struct {
	uint64_t cycle;  /* takes effect at this cycle */
	uint32_t seq;    /* order of issue, for equal cycles */
	uint8_t kind;    /* XControlKind */
	uint8_t partner; /* 1: for the pair partner's receive side */
	uint32_t value;
} XControl;

/* Where a tile's packet blocks come from (exchange.c, xch_send): blocks
 * are freed in the order they were made, so a chunk is cut from its start
 * and reused once its last block is freed. */
typedef struct {
	size_t cap, used; /* bytes of mem, and cut from it */
	uint32_t live;    /* blocks cut and not yet freed */
	_Alignas(16) uint8_t mem[];
} XChunk;

typedef struct {
	uint64_t depart;   /* cycle the first item leaves the sender */
	uint32_t n;        /* items, one per cycle */
	uint32_t item;     /* bytes per item: 4, or 8 for paired sends */
	uint32_t src_addr; /* where the data came from, for messages */
	uint32_t dir;      /* the sctl direction bits it goes (SCTL_DIR) */
	uint32_t pc;       /* of the send, and the context (0 supervisor, */
	uint8_t ctx;       /* 1..6 worker 0..5) that issued it: reports */
	uint8_t *data;     /* n * item bytes, copied at the send; the */
	                   /* block also holds got and pairsum */
	XChunk *chunk;     /* the block's chunk */
	uint8_t *got;      /* per item: received by some tile (set while */
	uint32_t ngot;     /* 0 < ngot < n); items received by some tile */
	/* 64-bit items: per item, a sum over its receivers that is 0 when
	 * they form whole pairs (exchange.c, pair_mark); the terms of the
	 * receivers of every item are in pairsum_all, once, not per item */
	uint64_t *pairsum;
	uint64_t pairsum_all;
	int pairsum_set; /* pairsum zeroed (by its first partial receiver) */
} XPacket;

/* The receive state a walk advances (exchange.c), from XState's fields
 * and the next controls to apply. */
typedef struct {
	uint32_t mux, ptr, format, dcount, base, size;
	uint64_t last_rx_cycle;
	uint32_t last_rx_addr;
	int ctl;          /* next of our own controls */
	int pctl;         /* next of the pair partner's controls */
	uint64_t zero_at; /* when dcount last became 0 */
} XRx;

/* Items a walk delivered, written to its tile when the walk is committed
 * (exchange.c, xch_walk): items i0..i1-1 of packet p from tile src, the
 * first arriving at `at`, to addr on. p NULL: the one word at addr whose
 * written bit an item set before it failed. */
typedef struct {
	XPacket *p;
	uint64_t at;
	uint32_t src, addr, i0, i1;
} XRecv;

typedef struct {
	XControl *ctl;
	int nctl, capctl, ctl_done; /* controls resolved so far */
	uint32_t seq;
	XPacket *pk;
	int npk, cappk, pk_done; /* packets fully decided so far */
	XChunk *chunk, *spare;   /* packet blocks: cut from, and free */
	int pk_checked;          /* packets checked against the pair */
	uint32_t out_ptr;        /* outgoing stream: next source address */
	uint32_t out_sctl;       /* and its direction/width bits */
	int out_open;            /* a send has opened the stream */
	int pctl_done;           /* partner's controls for us, resolved */
	/* receive-side state as resolved up to rx_until */
	uint64_t rx_until;
	uint32_t mux, ptr, format, dcount, base, size;
	uint64_t last_rx_cycle; /* arrival of the latest received item */
	uint64_t zero_at;       /* when $INCOMING_DCOUNT last became 0 */
	uint32_t last_rx_addr;
	uint64_t *written_bits; /* words written by the exchange this phase */
	uint32_t *written;      /* a word in each touched chunk of the bitmap */
	int nwritten, capwritten;
	/* a walk not yet committed (xch_walk): its deliveries, nwritten
	 * before it, and (walked 1: it ended well) the state it reached */
	XRecv *recv;
	int nrecv, caprecv, nwritten0, walked;
	uint64_t walk_until;
	XRx walk_rx;
	/* tracked 1: xch_walk_ready's walk, not yet committed, stopped at
	 * walk_stop (the items before it delivered; walk_stop_ctl 1: the
	 * controls at it applied too) in state walk_rx */
	int tracked, walk_stop_ctl;
	uint64_t walk_stop;
} XState;

/* What the supervisor waits for in a sync with the chip. */
typedef struct {
	int zone;       /* -1: not waiting */
	uint64_t since; /* cycle of the sync instruction */
	uint32_t pc;    /* of the sync instruction, for reports */
} SyncWait;

/* Trace events (sim/trace.c writes them as Chrome trace JSON). */
typedef enum { TR_COMPUTE, TR_SYNC, TR_SEND, TR_HOST } TraceKind;
typedef struct {
	uint64_t start, end;
	uint8_t kind; /* TraceKind */
	uint32_t arg; /* sync: the zone; send: bytes */
} TraceEvent;

/* Everything an instruction's semantics may touch. */
typedef struct {
	Tile *tile;
	Context *c;
	int ctx;           /* 0 supervisor, 1..6 worker */
	const Insn *in;    /* the instruction being executed */
	const InsnDesc *d; /* its table row, isa_row(in->row) */
	uint32_t pc;       /* its bundle's address */
	uint32_t next_pc;  /* set by branches; starts as the fall-through */
	RegWrite wr[16];
	int nwr;
	/* where writes to registers that ignore them go: $mzero, and
	 * $a14, $a15 (apart, so that the supervisor's pipeline can tell
	 * $mzero's) */
	uint32_t msink, sink;
} Exec;

typedef void (*ExecFn)(Exec *);

/* Instructions with a fast form beside their plain one (exec_<mn>): the
 * same semantics, specialised (fast_<mn>); the issue cache runs it on the
 * fast paths, and tests/test_sim_paths.c compares the two. */
#define SIM_FAST_FORMS(X)                                                      \
	X(ld2xst64pace)                                                        \
	X(ld2x64pace)                                                          \
	X(ldst64pace)                                                          \
	X(st64pace)                                                            \
	X(f16v4hihov4amp)                                                      \
	X(f8v8hihov4amp)                                                       \
	X(f16v2add)                                                            \
	X(f16v4add)                                                            \
	X(f16v2sub)                                                            \
	X(f16v4sub)                                                            \
	X(f16v2mul)                                                            \
	X(f16v4mul)                                                            \
	X(f16v2min)                                                            \
	X(f16v4min)                                                            \
	X(f16v2max)                                                            \
	X(f16v4max)                                                            \
	X(f16v2tof32)                                                          \
	X(f16v8tof8)                                                           \
	X(ld32)                                                                \
	X(ld32step)                                                            \
	X(ld64)                                                                \
	X(ld64step)                                                            \
	X(st64)                                                                \
	X(st64step)                                                            \
	X(f32v2add)                                                            \
	X(f32v2sub)                                                            \
	X(f32v2mul)                                                            \
	X(ld64putcs)                                                           \
	X(ld128putcs)                                                          \
	X(f16v4acc)                                                            \
	X(f16v8sqacc)                                                          \
	X(f32v4sqacc)                                                          \
	X(f16v4mix)
#define X(mn) void fast_##mn(Exec *e);
SIM_FAST_FORMS(X)
#undef X

/* The forms built twice (their bodies take the register writes' way as a
 * constant, sim_put): the instance a worker's issue runs (DIssue.work: the
 * fast form, or the plain one where there is none), which logs its
 * register writes, and direct_<mn>, the same body writing straight to the
 * registers, which tile.c's issue_fill puts in DIssue.work where a bundle
 * allows it (direct_halves). Each row names the operands the form writes
 * (bit i: operand i; all of a pair's or a quad's registers) and is a
 * promise for both instances:
 *   (a) the direct instance reads every register it reads before it writes
 *       one, and writes only the registers of those operands;
 *   (c) it writes directly only after every check that may fault passed
 *       (the memory checks of sim_mem_solo and sim_pace_prepare, which
 *       decline under a watch; fpenv_finish's trap), and what it leaves to
 *       the plain semantics (bin16, bin32, f16_to_f32, the plain loads and
 *       stores) logs, as in the logging instance: a fault discards the
 *       log, and the logged writes are committed after the bundle's direct
 *       ones;
 *   and a main-lane row faults only in its memory checks (add and sub
 *       never), an aux-lane row only by an FP trap (fpenv_finish), which
 *       $FP_CTL with no trap bit set makes impossible.
 * (b), per bundle, is direct_halves': no register the main half writes
 * directly is read by the aux half, and the log's order (the main half's
 * writes, then the aux half's) gives what the direct writes give. The plain
 * path (tile.c's issue) runs exec_<mn> and always logs;
 * tests/test_sim_paths.c draws bundles of these forms, faulting ones among
 * them, and compares the fast paths with the plain one. */
#define SIM_DIRECT_FORMS(X)                                                    \
	/* main lane: integer add and sub (no fault) */                        \
	X(add, 1)                                                              \
	X(sub, 1)                                                              \
	/* loads and stores: the data, and the delta of the step forms */      \
	X(ld32, 1)                                                             \
	X(ld32step, 5)                                                         \
	X(ld64, 1)                                                             \
	X(ld64step, 5)                                                         \
	X(st64step, 4)                                                         \
	/* the paced forms: the loaded pairs and the address pair */           \
	X(ld2xst64pace, 5)                                                     \
	X(ld2x64pace, 7)                                                       \
	X(ldst64pace, 5)                                                       \
	X(st64pace, 2)                                                         \
	/* aux lane: f16 and f32 arithmetic, f16 to f32 and to f8 */           \
	X(f16v2add, 1)                                                         \
	X(f16v4add, 1)                                                         \
	X(f16v2sub, 1)                                                         \
	X(f16v4sub, 1)                                                         \
	X(f16v2mul, 1)                                                         \
	X(f16v4mul, 1)                                                         \
	X(f16v2min, 1)                                                         \
	X(f16v4min, 1)                                                         \
	X(f16v2max, 1)                                                         \
	X(f16v4max, 1)                                                         \
	X(f32v2add, 1)                                                         \
	X(f32v2sub, 1)                                                         \
	X(f32v2mul, 1)                                                         \
	X(f16v2tof32, 1)                                                       \
	X(f16v8tof8, 1)                                                        \
	/* and $AACC, which no main half reads or writes */                    \
	X(f16v4mix, 1)
#define X(mn, writes) void direct_##mn(Exec *e);
SIM_DIRECT_FORMS(X)
#undef X

/* One entry of the decode cache: the instruction, its table row, its
 * semantics and its costs (cost.c), so that an issue looks nothing up. */
enum { SIM_HZ_BRANCH = 1, SIM_HZ_JUMP = 2, SIM_HZ_PUT = 4 };
typedef struct {
	Insn in;
	const InsnDesc *d;
	ExecFn fn;
	ExecFn fast;    /* its fast form, or fn */
	uint16_t reads; /* $m registers read (bit r) */
	uint16_t turns; /* worker turns taken (>= 1) */
	uint8_t hazard; /* SIM_HZ_* */
} DInsn;

/* The paced 64-bit forms the fast paths run in two steps (exec_mem.c,
 * sim_pace_prepare), and their operands decoded from the instruction
 * (sim_pace_decode): a fused bundle's DIssue holds them, decoded once for
 * every issue of its words. */
typedef enum { PACE_LD2XST, PACE_LD2X, PACE_LDST, PACE_ST } PaceForm;
typedef struct {
	uint8_t ok;     /* 0: the plain form faults (ld2x64pace, one pair) */
	uint8_t pair;   /* the $mAddr pair (even: 14 has $mzero above) */
	uint8_t stride; /* the $mStride register (15: $mzero) */
	uint8_t src;    /* the stored ARF pair (14: $a14:15, read as 0) */
	uint8_t dst[2]; /* the loaded ARF pairs (14: the writes go nowhere) */
	uint8_t sel[3]; /* the selectors of A0, A1, A2 (0 if no access) */
	/* bit i: A(i) moves by a field of the stride register (a selector
	 * other than 0, the register not $mzero); else by step[i] bytes */
	uint8_t vary;
	uint8_t step[3];
	/* 1: the pair's three addresses may stay unpacked between this
	 * form's issues (tile.c, run_fused): ok, the pair is not $m14
	 * (whose upper half, $mzero, drops A1 and A2's high bits) and no
	 * stride is read from it */
	uint8_t lazy;
} PaceDec;

/* The operands of the two AMP forms the fast paths run in one call
 * (f16v4hihov4amp, f8v8hihov4amp: sim_amp_fast), decoded from the
 * instruction (sim_amp_decode) once per fused bundle: the destination,
 * input and partials pairs (14, 15: $a14:15, read as 0, written nowhere)
 * and the phase. */
typedef struct {
	uint8_t dst, src, part, p;
} AmpDec;

/* One issue (a bundle, a solo or a two-word instruction) that started at
 * a code address and passed every rule of fetch and decode: its halves,
 * its words (for the report of a fault in its semantics), its length, and
 * ISSUE_* for the rules that depend on who issues it and on rpt state, so
 * that the next issue there runs without looking at them again. */
enum { ISSUE_WORKER = 1, ISSUE_SUPERVISOR = 2, ISSUE_IN_RPT = 4 };
/* a worker's fused bundle (pace != 0) allowed in an rpt body: tile.c's
 * run_workers tries it first, with no other rule to check */
enum { ISSUE_LOOP = 8 };
/* run or runall: it starts workers, so tile.c's run_supervisor (which runs
 * the supervisor while no worker does) leaves it to tile_run */
enum { ISSUE_STARTS = 16 };
typedef struct {
	const DInsn *i0, *i1; /* main or only half; aux half or NULL */
	/* what a worker runs for each half: its fast form, or NULL for a
	 * half that is absent or only writes a register that ignores writes
	 * (nop, fnop: its log entry would go nowhere) */
	ExecFn work[2];
	uint32_t word[2];
	uint16_t turns; /* the larger of the halves' */
	/* the supervisor's pipeline: $m registers either half reads, and
	 * their hazards (DInsn.reads, hazard) */
	uint16_t reads;
	uint8_t hazard;
	uint8_t nwords, len, ok;
	/* a bundle tile.c runs as one (issue_fused): a paced form
	 * (PaceForm + 1, 0: not such a bundle) and an AMP form on the aux
	 * side (1 f16v4hihov4amp, 2 f8v8hihov4amp, 0 none or a nop) */
	uint8_t pace, amp;
	/* such a bundle in the GEMMs' common shape, which run_fused runs in
	 * a loop of its own with a form chosen once here (1 + 3 PaceForm +
	 * amp, plus SHAPE_STRIDED where a stream moves by the stride
	 * register, pd.vary, or SHAPE_ZERO_PART where it does not and the
	 * AMP's partials are $a14:15; 0: not in it): ISSUE_LOOP, its pair may
	 * stay unpacked (pd.lazy: the stride register is not the pair), and
	 * none of its other ARF operands is $a14:15 (read as 0, written
	 * nowhere) */
	uint8_t shape;
	PaceDec pd; /* the paced form's operands, if pace */
	AmpDec ad;  /* the AMP form's operands, if amp */
	/* $FP_CTL's trap bits under which a worker runs the main half's
	 * logging instance (i0->fast) instead of work[0]: all three where
	 * work[0] writes directly only while the aux half cannot fault
	 * (tile.c, direct_halves), else none */
	uint8_t trap_log;
} DIssue;
enum { SHAPE_STRIDED = 12, SHAPE_ZERO_PART = 24 };
/* DIssue.shape of PaceForm `form`, amp (0 none, 1 f16, 2 f8) and `extra`
 * (0, SHAPE_STRIDED or SHAPE_ZERO_PART); a constant expression, for
 * tile.c's switch over the shapes' loops. */
#define SIM_SHAPE(form, amp, extra) (1 + 3 * (form) + (amp) + (extra))

/* Decoded issues shared by tiles (tile.c): each is a function of its
 * words and the chip alone, so one copy serves every tile that has those
 * words, wherever they lie (the rules that depend on the address, the
 * context and rpt state are checked per tile, as for its own cache). Built
 * on first use under a lock, immutable after; the issue loop reads it
 * through each tile's Tile.issue_at. */
typedef struct SimCode SimCode;
/* The issue cache is filled a page at a time from templates shared by the
 * tiles whose code there is the same (tile.c, CodePage); Tile.seeded has
 * a bit for each page of the first 64 * SIM_CODE_SEEDED. */
enum { SIM_CODE_PAGE_WORDS = 256, SIM_CODE_SEEDED = 4 };
SimCode *sim_code_new(void);
void sim_code_free(SimCode *s);
/* How often templates were built, and copied into a tile's cache. */
void sim_code_page_counts(SimCode *s, uint64_t *built, uint64_t *copied);

/* The $CWEI registers decoded to doubles for the AMP's fast path
 * (sim/amp.c), laid out for host SIMD across engines: w[n][i][m] is element
 * i of the register engine m reads at weight column n, in the format of
 * cache key key[n] (0 = nothing decoded; FP8 weights times 2^$FP_SCL, which
 * the key includes), decoded from raw[n][m]. Column n is used without a
 * look at cwei while gen[n] equals Tile.cwei_gen. */
typedef struct {
	double w[4][8][16];
	uint64_t raw[4][16];
	uint64_t gen[4];
	uint8_t key[4];
} AmpWeights;

/* Supervisor CSRs that are plain storage. */
typedef struct {
	uint32_t ssr, cr, fp_ictl, fp_infmt, fp_iscl, cccsload;
	uint32_t worker_base[CHIP_WORKERS];
	uint32_t exch[16]; /* 0xa0..0xaf, kept for issue 3's exchange model */
	uint32_t dbg_data;
} SupervisorCsrs;

struct Tile {
	/* What the issue loop reads on every issue, first and together: a
	 * tile is 64-byte aligned (tile_new), so these lie on two host cache
	 * lines, not spread over the 10 KB behind them (ctx, amp_w). */
	_Alignas(64) const Chip *chip;
	uint8_t *mem;     /* chip->mem_end - chip->mem_base bytes */
	uint64_t cycle;   /* cycles elapsed */
	uint64_t bundles; /* issues (bundles or solo instructions) */
	uint64_t worker_issues;
	/* issue cache: the issue starting at each word, once decoded and
	 * checked (tile.c), or NULL; cleared with dvalid. The issues are
	 * the store's (`code`), shared by the tiles of a chip model. */
	const DIssue **issue_at;
	SimObserve *obs; /* marks, watches, totals (observe.c); NULL: none */
	int faulted;
	int nacc; /* accesses of the bundle in flight (acc) */
	int slot_worker[CHIP_SLOTS]; /* ctx running in each slot, or 0 */
	/* every decoded word lies in [code_lo, code_hi - 8): a write outside
	 * [code_lo, code_hi) leaves the caches as they are (a two-word
	 * instruction decodes the word after its first) */
	uint32_t code_lo, code_hi;
	int mem_fast; /* elements by shifts, at most 64: sim_load's fast path */
	/* the chip's memory map, for the fast checks: mem_base, the offset
	 * of the last 8 bytes of memory, and the interleaved region's start */
	uint32_t mem_base, last8, interleave;
	uint64_t sup_ready; /* the supervisor issues again from this cycle */
	uint32_t id;
	Context ctx[CHIP_CONTEXTS];
	SupervisorCsrs sup;
	uint64_t cwei[CHIP_CWEI];
	/* Changes whenever cwei may have: every instruction that writes it
	 * adds 1, and so does tile_run on entry, for writers outside the
	 * emulator (tests, the host), which act between runs. */
	uint64_t cwei_gen;
	AmpWeights amp_w;   /* decoded cwei, a cache (sim/amp.c) */
	uint64_t last_exit; /* cycle of the latest worker exit */
	int lc_and;         /* AND of worker exit statuses */
	Fault fault;
	/* $SSR/$WSR.ETYPE [7:4] of each context: its exception, FAULT_NONE
	 * if none (what the card's tile debug interface reads) */
	uint8_t etype[CHIP_CONTEXTS];
	/* bundle in flight */
	MemAccess acc[4];
	uint64_t acc_elems; /* memory elements they use, a mask */
	/* decode cache: one entry per instruction word of executable memory */
	DInsn *dcache;
	uint8_t *dvalid;
	SimCode *code;
	int own_code; /* a lone tile's store, freed with it */
	/* pages of code memory (SIM_CODE_PAGE_WORDS words each) whose
	 * template the tile looked for since the host last started it
	 * (tile_start; tile.c, code_seed) */
	uint64_t seeded[SIM_CODE_SEEDED];
	/* memory elements by shifts (elem_shift = 0: ask chip_mem_element) */
	int elem_shift;
	uint32_t region0_elems;
	/* per context, the paced streams' (two loads, the store) boxes, built
	 * together by sim_pace_prepare: stream i is proven at a, without the
	 * checks of sim_mem_fast8, when a is 8-aligned and in
	 * [box_lo[i], box_lo[i] + 8 box_n[i]) (box_n 0: none yet) */
	uint32_t box_lo[CHIP_CONTEXTS][3], box_n[CHIP_CONTEXTS][3];
	/* checks left before the next try to build boxes, after a try
	 * found two streams in one block (small buffers share an
	 * interleaved pair, their words alternating between its elements) */
	uint8_t box_wait[CHIP_CONTEXTS];
	/* per context, the two streams whose boxes are one interleaved pair
	 * (1: A0 and A1, 2: A0 and A2, 4: A1 and A2; 0: none): their
	 * accesses must be in its two elements, one each (bit 3 of their
	 * addresses different) */
	uint8_t box_pair[CHIP_CONTEXTS];
	/* with the chip model (NULL for a lone tile) */
	ChipSim *cs;
	uint64_t mready[16]; /* the supervisor's $m values are out of the
	                        pipeline from these cycles (sup-dep) */
	SyncWait wait;
	XState x;
	int trace_on;
	TraceEvent *trace;
	int ntrace, captrace;
	uint64_t compute_start; /* runall/run with no worker running */
};

/* tile.c */
Tile *tile_new(const Chip *chip, uint32_t id);
void tile_free(Tile *t);
/* Let t use the store s (which outlives it, and serves only tiles of
 * t->chip: the key is the words) instead of its own. Before its first
 * run. */
void tile_share_code(Tile *t, SimCode *s);
/* Start the supervisor at `entry`; $lr holds SIM_HOST_RETURN, so that
 * `br $lr` from the entry function ends the run with $m0 as the status. */
void tile_start(Tile *t, uint32_t entry);
enum { SIM_HOST_RETURN = 0 };
/* Start worker w (0..5) at entry: it takes slot w from the next cycle.
 * Returns -1 if that worker is already running. */
int tile_start_worker(Tile *t, int w, uint32_t entry, uint32_t vertex_base);
/* The same for run/runall at this cycle: the worker first issues after
 * the launch delay (rule runall). */
int tile_launch_worker(Tile *t, int w, uint32_t entry, uint32_t vertex_base);
typedef enum {
	RUN_DONE,    /* supervisor returned (or never ran) and workers exited */
	RUN_FAULT,   /* t->fault says what */
	RUN_TIMEOUT, /* max_cycles reached */
	RUN_SYNC,    /* the supervisor waits in a sync with other tiles */
	RUN_DEADLOCK, /* chip: tiles wait for each other or for lost words */
	RUN_HOST,     /* chip: every tile waits in a host sync the host has not
	               * reached yet (chipsim_set_host_stop) */
} RunStatus;
RunStatus tile_run(Tile *t, uint64_t max_cycles);
/* Record a trace event when the tile's chip traces (or an observer
 * watches): the test inline, as a send asks it each time with both off. */
void tile_trace_event(Tile *t, TraceKind kind, uint64_t start, uint64_t end,
                      uint32_t arg);
static inline void
tile_trace(Tile *t, TraceKind kind, uint64_t start, uint64_t end, uint32_t arg)
{
	if (t->obs || t->trace_on)
		tile_trace_event(t, kind, start, end, arg);
}
/* Execute one instruction word in context ctx as the card's tile debug
 * interface does (TDI_INSTRUCTION): its effects on registers, CSRs and
 * memory, without moving the pc or the clock. Control, two-word and system
 * instructions other than get/put/uget/uput are refused (DECISION,
 * docs/hardware.md). 0, or -1 with the
 * reason in why; the tile's own fault state is left as it was. */
int tile_debug_exec(Tile *t, int ctx, uint32_t word, char *why, size_t len);
/* Copy bytes in/out of tile memory (host access, no faults; returns -1 when
 * the range is outside memory). Writes invalidate decoded instructions. */
int tile_write(Tile *t, uint32_t addr, const void *src, uint32_t len);
int tile_read(const Tile *t, uint32_t addr, void *dst, uint32_t len);
/* One line describing the fault: tile, context, pc, disassembly, cause. */
void tile_format_fault(const Tile *t, char *buf, size_t len);
/* Context ctx's instruction at pc, as fault reports show it: "supervisor,
 * pc 0x4c010 [0x...: sync 1]" (a bundle with both words). */
void tile_format_pc(const Tile *t, int ctx, uint32_t pc, char *buf, size_t len);

/* Helpers for exec_*.c. A fault stops the tile after the current bundle;
 * exec functions return right after raising one. */
void sim_fault(Exec *e, FaultType type, uint32_t addr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The register helpers are inline: every instruction uses them. */
static inline uint32_t
sim_rm(const Exec *e, int r) /* $mzero reads 0 */
{
	return r == 15 ? 0 : e->c->m[r];
}

static inline uint32_t
sim_ra(const Exec *e, int r) /* $a14, $a15 read 0 (isa.md 2.1) */
{
	return r >= 14 ? 0 : e->c->a[r];
}

static inline void
sim_log_write(Exec *e, uint32_t *dst, uint32_t v)
{
	int n = e->nwr;
	if (n == (int)(sizeof e->wr / sizeof e->wr[0]))
		die("register write log overflow");
	e->wr[n].dst = dst;
	e->wr[n].value = v;
	e->nwr = n + 1;
}

/* A register write through the write log, or, with direct (a constant in
 * each instance of the forms built twice, SIM_DIRECT_FORMS), straight to
 * the register. */
static inline __attribute__((always_inline)) void
sim_put(Exec *e, uint32_t *dst, uint32_t v, int direct)
{
	if (direct)
		*dst = v;
	else
		sim_log_write(e, dst, v);
}

static inline __attribute__((always_inline)) void
sim_put_m(Exec *e, int r, uint32_t v, int direct) /* $mzero ignores writes */
{
	sim_put(e, r == 15 ? &e->msink : &e->c->m[r], v, direct);
}

static inline __attribute__((always_inline)) void
sim_put_a(Exec *e, int r, uint32_t v, int direct) /* so do $a14, $a15 */
{
	sim_put(e, r >= 14 ? &e->sink : &e->c->a[r], v, direct);
}

static inline void
sim_wm(Exec *e, int r, uint32_t v)
{
	sim_put_m(e, r, v, 0);
}

static inline void
sim_wa(Exec *e, int r, uint32_t v)
{
	sim_put_a(e, r, v, 0);
}

/* Operand i as a value: register contents for M/A kinds, else the
 * immediate. */
static inline uint32_t
sim_src(const Exec *e, int i)
{
	switch (e->d->op[i].kind) {
	case OPK_M:
		return sim_rm(e, e->in->op[i]);
	case OPK_A:
		return sim_ra(e, e->in->op[i]);
	default:
		return (uint32_t)e->in->op[i];
	}
}

/* Write v to operand i, which must be an M or A register operand (direct:
 * as sim_put). */
static inline __attribute__((always_inline)) void
sim_put_dst(Exec *e, int i, uint32_t v, int direct)
{
	OperandKind k = e->d->op[i].kind;
	if (k == OPK_M)
		sim_put_m(e, e->in->op[i], v, direct);
	else if (k == OPK_A)
		sim_put_a(e, e->in->op[i], v, direct);
	else
		die("%s: operand %d is not a register", e->d->variant, i);
}

static inline void
sim_dst(Exec *e, int i, uint32_t v)
{
	sim_put_dst(e, i, v, 0);
}

/* 64-bit ARF pairs: register r holds the low word, r + 1 the high word. */
static inline uint64_t
sim_ra64(const Exec *e, int r)
{
	return (uint64_t)sim_ra(e, r + 1) << 32 | sim_ra(e, r);
}

static inline void
sim_wa64(Exec *e, int r, uint64_t v)
{
	sim_wa(e, r, (uint32_t)v);
	sim_wa(e, r + 1, (uint32_t)(v >> 32));
}
/* Memory: check range, alignment, region and same-element conflicts within
 * the bundle; raise the fault and return 0 on failure. The plain forms
 * (tile.c) check one rule after the other and log each access with its
 * elements; sim_load and sim_store (below) first try the fast form, which
 * passes only accesses that break no rule and otherwise leaves them to the
 * plain one. */
int sim_load_plain(Exec *e, uint32_t addr, void *dst, uint32_t size);
int sim_store_plain(Exec *e, uint32_t addr, const void *src, uint32_t size);
/* Forget decoded instructions in [addr, addr + len) (tile.c). */
void sim_invalidate_code(Tile *t, uint32_t addr, uint32_t len);

static inline __attribute__((always_inline)) void
sim_invalidate(Tile *t, uint32_t addr, uint32_t len)
{
	/* only where something was decoded (Tile.code_lo, code_hi) */
	if (addr < t->code_hi && addr + len > t->code_lo)
		sim_invalidate_code(t, addr, len);
}

/* chip_mem_element for an address inside memory: the same formula with
 * the division by the element size done as a shift. */
static inline __attribute__((always_inline)) int
sim_elem_of(const Tile *t, uint32_t addr)
{
	const Chip *c = t->chip;
	if (!t->elem_shift)
		return chip_mem_element(c, addr);
	if (addr < c->interleave)
		return (int)((addr - c->mem_base) >> t->elem_shift);
	return (int)(t->region0_elems +
	             2 * ((addr - c->interleave) >> (t->elem_shift + 1)) +
	             ((addr >> 3) & 1));
}

/* memcpy with the common sizes as constants, so that they compile to
 * plain moves instead of a library call. */
static inline __attribute__((always_inline)) void
sim_copy_bytes(void *dst, const void *src, uint32_t size)
{
	switch (size) {
	case 4:
		memcpy(dst, src, 4);
		break;
	case 8:
		memcpy(dst, src, 8);
		break;
	case 16:
		memcpy(dst, src, 16);
		break;
	default:
		memcpy(dst, src, size);
	}
}

/* The fast form of the memory checks: 1 and the access logged if it is in
 * memory, aligned (sizes are powers of two), 128-bit only in the
 * interleaved region, and in elements no earlier access of the bundle
 * used (Tile.acc_elems); else 0. */
static inline __attribute__((always_inline)) int
sim_mem_fast(Exec *e, uint32_t addr, uint32_t size, int store)
{
	Tile *t = e->tile;
	const Chip *c = t->chip;
	if (!t->mem_fast || sim_path == SIM_PLAIN || addr < c->mem_base ||
	    addr >= c->mem_end || size > c->mem_end - addr ||
	    (size & (size - 1)) || (addr & (size - 1)) ||
	    (size == 16 && addr < c->interleave) ||
	    t->nacc == (int)(sizeof t->acc / sizeof t->acc[0]))
		return 0;
	int e0 = sim_elem_of(t, addr), e1 = -1;
	uint64_t bits = 1ull << e0;
	if (size == 16) {
		e1 = sim_elem_of(t, addr + 8);
		bits |= 1ull << e1;
	}
	uint64_t used = t->nacc ? t->acc_elems : 0;
	if (used & bits)
		return 0;
	t->acc_elems = used | bits;
	t->acc[t->nacc++] = (MemAccess){addr, size, (uint8_t)store, {e0, e1}};
	return 1;
}

/* The fast check of the n 8-byte accesses of one instruction (addr[k])
 * together: 1 if each is in memory, aligned and in an element of its own,
 * and nothing else in the bundle has accessed memory; else 0 (the plain
 * checks must run). They are not logged: only main-lane instructions
 * access memory (insns.def), so no access can follow in the bundle. */
static inline __attribute__((always_inline)) int
sim_mem_fast8(const Tile *t, const uint32_t *addr, int n)
{
	if (!t->mem_fast || sim_path == SIM_PLAIN || t->nacc)
		return 0;
	uint32_t base = t->mem_base, last8 = t->last8, il = t->interleave;
	uint32_t r0 = t->region0_elems;
	int sh = t->elem_shift;
	uint64_t used = 0;
#pragma GCC unroll 4
	for (int k = 0; k < n; k++) {
		uint32_t a = addr[k];
		/* mem_base <= a <= mem_end - 8, by one unsigned compare */
		if (a - base > last8 || (a & 7))
			return 0;
		/* sim_elem_of */
		uint32_t el =
		    a < il ? (a - base) >> sh
		           : r0 + 2 * ((a - il) >> (sh + 1)) + ((a >> 3) & 1);
		uint64_t bit = 1ull << el;
		if (used & bit)
			return 0;
		used |= bit;
	}
	return 1;
}

/* The fast check of an instruction's single access of size bytes (a power
 * of two, 4 to 16): 1 if it is in memory and aligned, and nothing else in
 * the bundle has accessed memory; else 0 (the plain checks must run). Not
 * logged, as sim_mem_fast8's. One access of up to 8 bytes is in an element
 * of its own; 16 bytes are two elements only in the interleaved region,
 * which the caller checks. */
static inline __attribute__((always_inline)) int
sim_mem_solo(const Tile *t, uint32_t addr, uint32_t size)
{
	return t->mem_fast && sim_path != SIM_PLAIN && !t->nacc &&
	       addr - t->mem_base <= t->last8 + 8 - size &&
	       !(addr & (size - 1));
}

static inline __attribute__((always_inline)) int
sim_load(Exec *e, uint32_t addr, void *dst, uint32_t size)
{
	if (!sim_mem_fast(e, addr, size, 0))
		return sim_load_plain(e, addr, dst, size);
	Tile *t = e->tile;
	sim_copy_bytes(dst, t->mem + (addr - t->chip->mem_base), size);
	return 1;
}

static inline __attribute__((always_inline)) int
sim_store(Exec *e, uint32_t addr, const void *src, uint32_t size)
{
	if (!sim_mem_fast(e, addr, size, 1))
		return sim_store_plain(e, addr, src, size);
	Tile *t = e->tile;
	sim_copy_bytes(t->mem + (addr - t->chip->mem_base), src, size);
	sim_invalidate(t, addr, size);
	return 1;
}

/* The paced 64-bit forms in two steps, for the fast paths: what the
 * instruction would do, computed without doing it (0: it needs the plain
 * form), then its memory store and register writes. Which of A0, A1, A2
 * a form accesses is a constant of the form (sim_pace_on); its loads go to
 * PaceDec.dst in the order of A0, A1. */
typedef struct {
	uint32_t lo, hi;    /* the pair's value after the accesses */
	uint32_t ld[2][2];  /* the loaded words */
	uint32_t st[2], sa; /* the stored words and their address */
} PaceOp;

/* Whether form accesses address i (A0, A1: loads, A2: the store). */
static inline int
sim_pace_on(PaceForm form, int i)
{
	static const uint8_t on[4] = {
	    [PACE_LD2XST] = 7, [PACE_LD2X] = 3, [PACE_LDST] = 5, [PACE_ST] = 4};
	return on[form] >> i & 1;
}

/*
 * Triple-packed addresses of the paced forms (exec_mem.c; isa.md 4.3, bit
 * layout unknown, isa.md 10.4). DECISION: three 21-bit byte addresses A0,
 * A1, A2 in an MRF pair:
 *   low  register = A0[20:0] | A2[10:0]  << 21
 *   high register = A1[20:0] | A2[20:11] << 21   (bit 31 unused, 0)
 * This keeps "the lower register provides the 1st load address, the upper
 * the 2nd, the store address is split over the upper bits of both".
 */
enum { TA_BITS = 21 };
#define TA_MASK ((1u << TA_BITS) - 1)

static inline void
sim_ta_unpack(uint32_t lo, uint32_t hi, uint32_t a[3])
{
	a[0] = lo & TA_MASK;
	a[1] = hi & TA_MASK;
	a[2] = (lo >> TA_BITS) | ((hi >> TA_BITS) & 0x3ffu) << 11;
}

static inline void
sim_ta_pack(const uint32_t a[3], uint32_t *lo, uint32_t *hi)
{
	*lo = (a[0] & TA_MASK) | (a[2] & 0x7ffu) << TA_BITS;
	*hi = (a[1] & TA_MASK) | ((a[2] >> 11) & 0x3ffu) << TA_BITS;
}

/* One paced access's next address (selector sel, access size). */
static inline uint32_t
sim_pace_next(uint32_t addr, uint32_t stride, unsigned sel, uint32_t size)
{
	int32_t n = 1;
	if (sel) {
		uint32_t f = (stride >> (10 * (sel - 1))) & 0x3ffu;
		n = (int32_t)(f ^ 0x200u) - 0x200; /* sign-extend 10 bits */
	}
	return (addr + (uint32_t)n * size) & TA_MASK;
}

/* The operands of a paced form's instruction (ld2xst64pace dst:quad,
 * src:pair, ta, stride, imm6; ld2x64pace dst0, dst1, ta, stride, imm4;
 * ldst64pace dst, src, ta, stride, imm4; st64pace src, ta, stride, imm).
 * Registers are in range and pairs even (isa_decode). */
static inline __attribute__((always_inline)) void
sim_pace_decode(const Insn *in, PaceForm form, PaceDec *d)
{
	const int32_t *op = in->op;
	int k = form == PACE_ST ? 1 : 2; /* the pair's operand */
	unsigned imm = (unsigned)op[k + 2];
	d->ok = !(form == PACE_LD2X && op[0] == op[1]);
	d->pair = (uint8_t)op[k];
	d->stride = (uint8_t)op[k + 1];
	d->src = (uint8_t)(form == PACE_ST     ? op[0]
	                   : form == PACE_LD2X ? 0 /* no store */
	                                       : op[1]);
	d->dst[0] = (uint8_t)(form == PACE_ST ? 0 : op[0]);
	d->dst[1] = (uint8_t)(form == PACE_LD2XST ? op[0] + 2
	                      : form == PACE_LD2X ? op[1]
	                                          : 0 /* one load or none */);
	/* the selectors, two bits each, of the accesses in order */
	d->vary = 0;
	for (int i = 0; i < 3; i++) {
		d->sel[i] = d->step[i] = 0;
		if (!sim_pace_on(form, i))
			continue;
		d->sel[i] = (uint8_t)(imm & 3);
		imm >>= 2;
		if (d->sel[i] && d->stride != 15)
			d->vary |= (uint8_t)(1u << i);
		else /* one access on, or a field of $mzero */
			d->step[i] = (uint8_t)sim_pace_next(0, 0, d->sel[i], 8);
	}
	d->lazy =
	    d->ok && d->pair != 14 &&
	    !(d->vary && (d->stride == d->pair || d->stride == d->pair + 1));
}

/* Whether a paced instruction's accesses (stream i at a[i] where bit i of
 * on is set) lie in the boxes of its context (Tile.box_lo, box_n). The boxes
 * are built together, each one whole memory element, or one pair of the
 * interleaved region, a different one for each stream, inside memory: so
 * any accesses inside them pass sim_mem_fast8. A rotate folds the
 * alignment into the bound. */
static inline __attribute__((always_inline)) int
sim_pace_boxed(const Tile *t, int ctx, const uint32_t *a, unsigned on)
{
#pragma GCC unroll 3
	for (int i = 0; i < 3; i++)
		if (on >> i & 1) {
			uint32_t d = a[i] - t->box_lo[ctx][i];
			if ((d >> 3 | d << 29) >= t->box_n[ctx][i])
				return 0;
		}
	/* two streams in one pair, when both access: in its two elements
	 * (the pairs' bits and `on` constants, a[] indexed by constants) */
	unsigned both =
	    ((on & 3) == 3) | ((on & 5) == 5) << 1 | ((on & 6) == 6) << 2;
	unsigned pc = t->box_pair[ctx] & both;
	if (pc) {
		unsigned diff = ((a[0] ^ a[1]) >> 3 & 1) |
		                ((a[0] ^ a[2]) >> 2 & 2) |
		                ((a[1] ^ a[2]) >> 1 & 4);
		if (!(diff & pc))
			return 0;
	}
	return 1;
}

/* After sim_mem_fast8 passed the accesses a[i] (bit i of on): the boxes
 * that hold them, when they are all in blocks (elements, or interleaved
 * pairs) of their own, or two of them in one interleaved pair (in its two
 * elements, as fast8 found: Tile.box_pair then requires that they stay
 * so); else none. */
static inline void
sim_pace_box(Tile *t, int ctx, const uint32_t *a, unsigned on)
{
	uint32_t base = t->mem_base, il = t->interleave;
	uint32_t blk[3];
	int sh = t->elem_shift;
	unsigned pm = 0;
	memset(t->box_n[ctx], 0, sizeof t->box_n[ctx]);
	t->box_pair[ctx] = 0;
	for (int i = 0; i < 3; i++) {
		if (!(on >> i & 1))
			continue;
		/* mem_base, interleave and mem_end are on boundaries
		 * (tile_new) */
		uint32_t lo, hi;
		if (a[i] < il) {
			lo = base + ((a[i] - base) >> sh << sh);
			hi = lo + (1u << sh);
		} else {
			lo = il + ((a[i] - il) >> (sh + 1) << (sh + 1));
			hi = lo + (2u << sh);
		}
		blk[i] = lo;
		for (int j = 0; j < i; j++)
			if ((on >> j & 1) && blk[j] == lo) {
				if (a[i] >= il && !pm && ((a[i] ^ a[j]) & 8)) {
					pm = 1u << (i + j - 1); /* 1, 2, 4 */
					continue;
				}
				memset(t->box_n[ctx], 0, sizeof t->box_n[ctx]);
				t->box_wait[ctx] = 64;
				return;
			}
		t->box_lo[ctx][i] = lo;
		t->box_n[ctx][i] = (hi - lo) / 8;
	}
	t->box_pair[ctx] = (uint8_t)pm;
}

/* Whether a fused bundle may use the boxes: they only skip the checks
 * sim_mem_fast8 makes for the first access of a bundle on a fast path with
 * fast checks (no watch). */
static inline int
sim_pace_boxes(const Tile *t)
{
	return t->mem_fast && sim_path != SIM_PLAIN && !t->nacc;
}

/* sim_pace_prepare computes all a paced form would do (addresses, its pair
 * register's new value, the words it loads and stores) without doing any of
 * it, when its accesses pass sim_mem_fast8 together; else it declines (0)
 * and the plain form runs the instruction. Inline so that tile.c's fused
 * bundles keep the PaceOp in registers, with the form a constant. ctx >= 0
 * (the fused bundles): accesses inside that context's boxes skip the
 * checks, and passed checks build new boxes. Its three steps apart, for
 * tile.c's run_fused, which keeps the pair's addresses unpacked (a[])
 * between a context's bundles, checks d->ok itself and runs the AMP half
 * between the check and the reads (so that nothing but the addresses is
 * held across the AMP's call): sim_pace_check_at whether the accesses at
 * a[] may run (the boxes or sim_mem_fast8; 0: decline), sim_pace_read_at
 * the loaded and stored words (PaceOp.lo and hi not set), sim_pace_next_at
 * the addresses after the accesses (n may be a). ctx is -1 unless the boxes
 * may be used at all (sim_pace_boxes), which run_fused knows once for all
 * its bundles; fixed 1 or 2 where the caller knows (DIssue.shape) that the
 * stored pair is not $a14:15, and 1 that no stream moves by the stride
 * register (d->vary 0). */
static inline __attribute__((always_inline)) unsigned
sim_pace_mask(PaceForm form)
{
	unsigned on = 0; /* bit i: A(i) is accessed (a constant) */
	for (int i = 0; i < 3; i++)
		on |= (unsigned)sim_pace_on(form, i) << i;
	return on;
}

static inline __attribute__((always_inline)) int
sim_pace_check_at(Tile *t, PaceForm form, int ctx, const uint32_t *a)
{
	unsigned on = sim_pace_mask(form);
	if (ctx >= 0 && sim_pace_boxed(t, ctx, a, on))
		return 1;
	uint32_t at[3];
	int na = 0;
#pragma GCC unroll 3
	for (int i = 0; i < 3; i++)
		if (on >> i & 1)
			at[na++] = a[i];
	if (!sim_mem_fast8(t, at, na))
		return 0;
	if (ctx >= 0 && !t->box_wait[ctx])
		sim_pace_box(t, ctx, a, on);
	else if (ctx >= 0)
		t->box_wait[ctx]--;
	return 1;
}

static inline __attribute__((always_inline)) void
sim_pace_read_at(const Tile *t, const Context *c, const PaceDec *d,
                 PaceForm form, PaceOp *o, const uint32_t *a, int fixed)
{
	const uint8_t *mem = t->mem - t->mem_base;
#pragma GCC unroll 2
	for (int i = 0, k = 0; i < 2; i++)
		if (sim_pace_on(form, i)) {
			const uint8_t *p = mem + a[i];
			o->ld[k][0] = get_le32(p);
			o->ld[k][1] = get_le32(p + 4);
			k++;
		}
	if (sim_pace_on(form, 2)) {
		int src = d->src;
		o->sa = a[2];
		o->st[0] = src == 14 && !fixed ? 0 : c->a[src];
		o->st[1] = src == 14 && !fixed ? 0 : c->a[src + 1];
	}
}

static inline __attribute__((always_inline)) void
sim_pace_next_at(const Context *c, const PaceDec *d, PaceForm form,
                 const uint32_t *a, uint32_t *n, int fixed)
{
	unsigned on = sim_pace_mask(form);
	unsigned vary = fixed == 1 ? 0 : d->vary;
	uint32_t st = c->m[d->stride]; /* read where vary: not $mzero */
#pragma GCC unroll 3
	for (int i = 0; i < 3; i++)
		n[i] = !(on >> i & 1)  ? a[i]
		       : vary >> i & 1 ? sim_pace_next(a[i], st, d->sel[i], 8)
		                       : (a[i] + d->step[i]) & TA_MASK;
}

static inline __attribute__((always_inline)) int
sim_pace_prepare(Tile *t, const Context *c, const PaceDec *d, PaceForm form,
                 PaceOp *o, int ctx)
{
	if (!d->ok)
		return 0; /* the plain form faults */
	int r = d->pair;
	uint32_t a[3], n[3];
	sim_ta_unpack(c->m[r], r == 14 ? 0 : c->m[r + 1], a);
	if (!sim_pace_check_at(t, form,
	                       ctx >= 0 && sim_pace_boxes(t) ? ctx : -1, a))
		return 0;
	sim_pace_read_at(t, c, d, form, o, a, 0);
	sim_pace_next_at(c, d, form, a, n, 0);
	sim_ta_pack(n, &o->lo, &o->hi);
	return 1;
}

/* How many 64-bit loads form makes (to PaceDec.dst[0], then dst[1]). */
static inline int
sim_pace_loads(PaceForm form)
{
	return sim_pace_on(form, 0) + sim_pace_on(form, 1);
}

static inline __attribute__((always_inline)) void
sim_pace_store(Tile *t, PaceForm form, const PaceOp *o)
{
	if (!sim_pace_on(form, 2))
		return;
	uint8_t *p = t->mem + (o->sa - t->mem_base);
	put_le32(p, o->st[0]);
	put_le32(p + 4, o->st[1]);
	sim_invalidate(t, o->sa, 8);
}

/* The loads' register writes, straight to the context (none to
 * $a14:15; fixed 1 or 2: the caller knows there is none, DIssue.shape). */
static inline __attribute__((always_inline)) void
sim_pace_write_loads(Context *c, const PaceDec *d, PaceForm form,
                     const PaceOp *o, int fixed)
{
#pragma GCC unroll 2
	for (int k = 0; k < sim_pace_loads(form); k++)
		if (fixed || d->dst[k] != 14) {
			c->a[d->dst[k]] = o->ld[k][0];
			c->a[d->dst[k] + 1] = o->ld[k][1];
		}
}

/* The register writes, straight to the context (issue_fused): the pair
 * ($mzero above $m14), then the loads. */
static inline __attribute__((always_inline)) void
sim_pace_write(Context *c, const PaceDec *d, PaceForm form, const PaceOp *o)
{
	c->m[d->pair] = o->lo;
	if (d->pair != 14)
		c->m[d->pair + 1] = o->hi;
	sim_pace_write_loads(c, d, form, o, 0);
}

/* chip.c - many tiles: BSP rounds, syncs, and the exchange between them.
 *
 * Tiles run independently (on a pool of host threads) until each reaches a
 * sync with other tiles or ends; then the exchange of that round is resolved
 * in cycle order per receiver, the syncs release, and the next round runs.
 * Results do not depend on the number of threads. */
typedef struct {
	const Chip *chip;
	uint32_t tiles; /* 0 = all of the chip's tiles */
	int threads;    /* host threads; 0 = 1 */
	int trace;      /* record trace events */
} ChipConfig;

/* A chip-level error: a fault of one tile, an exchange error or a
 * deadlock, with the tiles, cycle and address it concerns. */
typedef struct {
	RunStatus status;
	uint32_t tile; /* the tile it concerns */
	uint64_t cycle;
	int ctx;     /* the context whose instruction at pc it concerns (a */
	uint32_t pc; /* fault, a send, a sync), or -1 and pc 0 if none */
	char msg[768];
} ChipError;

/* Fill err (status, tile, cycle, the message); returns -1. */
int chip_error(ChipError *err, RunStatus st, uint32_t tile, uint64_t cycle,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

ChipSim *chipsim_new(const ChipConfig *cfg);
void chipsim_free(ChipSim *cs);
const Chip *chipsim_chip(const ChipSim *cs);
uint32_t chipsim_tiles(const ChipSim *cs);
/* The tile with this logical id, created on first use (NULL if out of
 * range). Tiles never touched take part in nothing. */
Tile *chipsim_tile(ChipSim *cs, uint32_t id);
Tile *chipsim_tile_if_exists(const ChipSim *cs, uint32_t id);
/* The routes into tile dst, by sender: 0 until filled, then
 * chip_route_cycles << 2 | chip_route_dir (exchange.c, deliver_from, fills
 * them on first use). A route is a fixed function of the two tiles; one
 * table a chip, a row a receiver, which only that receiver's walk writes
 * (docs/bench-sim.md, speedx: a memo of 64 senders a receiver missed on
 * 542,541 runs of a base SigLIP layer). */
uint16_t *chipsim_routes_to(ChipSim *cs, uint32_t dst);
/* Run every started tile until all have returned, one faults, a deadlock
 * is found, or a tile passes max_cycles. */
RunStatus chipsim_run(ChipSim *cs, uint64_t max_cycles, ChipError *err);
/* Call fn(ctx, cycles) from chipsim_run's thread after each of its rounds
 * (at every sync of all tiles) with the chip's clock so far: the latest
 * tile's cycle. NULL: none. For progress displays. */
void chipsim_set_progress(ChipSim *cs, void (*fn)(void *ctx, uint64_t cycles),
                          void *ctx);
/* Cycles when the last tile finished (the program's length). */
uint64_t chipsim_cycles(const ChipSim *cs);
/* Host link: queue a host-to-tile write or a tile-to-host read that host
 * sync number `sync` (counted from 0 over the syncs in zones that include
 * the host: 5, 7, 13, 15) performs at PCIe rate (docs/chip.md, "Host
 * link"). A read fills dst when that sync is reached. -1 if the range is
 * outside memory or that sync has passed. */
int chipsim_host_write(ChipSim *cs, uint32_t sync, uint32_t tile, uint32_t addr,
                       const void *src, uint32_t len);
int chipsim_host_read(ChipSim *cs, uint32_t sync, uint32_t tile, uint32_t addr,
                      void *dst, uint32_t len);
/* Host cycles spent in host syncs and transfers so far. */
uint64_t chipsim_host_cycles(const ChipSim *cs);
/* Host syncs performed so far. */
uint32_t chipsim_host_syncs(const ChipSim *cs);
/* The host takes part in host syncs below `n` only: chipsim_run stops
 * with RUN_HOST when every tile waits in host sync number n, leaving them
 * waiting (a later run performs it if the stop has moved on). UINT32_MAX,
 * the default: the host is always there. For a model of the card, where
 * the host reaches a sync by writing a mark. */
void chipsim_set_host_stop(ChipSim *cs, uint32_t n);
/* Host syncs release at a cycle = phase (mod period), later than they
 * would otherwise by less than period (period 0: at once, the default):
 * when the host arrives is the host's choice, and the issue slot of a
 * cycle is its number mod CHIP_SLOTS. */
void chipsim_set_host_phase(ChipSim *cs, uint32_t period, uint32_t phase);

/* trace.c: the trace events of every tile as Chrome trace JSON, through a
 * temporary file (file_create_temp); an existing file is replaced only if
 * `overwrite`. */
int trace_write_json(const ChipSim *cs, const char *path, int overwrite,
                     Diag *d);

/* exchange.c - the exchange of one tile (called by exec_ctl.c/chip.c) */
/* A receive-side control from this tile's program, for itself or (partner)
 * for its pair partner. */
void xch_control(Tile *t, XControlKind kind, uint64_t cycle, uint32_t value,
                 int partner);
/* Log a send of n items from addr; 0 or a fault raised on e. */
int xch_send(Exec *e, uint32_t addr, uint32_t n, uint32_t item, uint32_t dir);
void xch_reset(XState *x);
void xch_free(XState *x);
/* Resolve deliveries to receiver r of items arriving before `until`,
 * given every sender's packets so far. Returns 0, or -1 with err filled;
 * xch_walk then xch_commit. */
int xch_resolve(ChipSim *cs, Tile *r, uint64_t until, ChipError *err);
/* The parts of xch_resolve, so that receivers can be walked on several
 * threads and the walks kept only up to the first that fails. xch_walk
 * decides r's deliveries and checks them, writing nothing but r's written
 * bits; it only reads the senders, so walks of different receivers may
 * run at once. xch_commit then writes r's memory and, if the walk ended
 * well, its receive state (commits of different receivers may run at
 * once), and xch_commit_senders the senders' per-item flags and pair sums
 * (one thread: receivers share them; plain adds cost less than atomic
 * ones). xch_discard instead leaves r as it was before the walk. */
int xch_walk(ChipSim *cs, Tile *r, uint64_t until, ChipError *err);
void xch_commit(Tile *r);
void xch_commit_senders(Tile *r);
void xch_discard(Tile *r);
/* The cycle at which r has received every item it expects (DCOUNT = 0),
 * assuming its controls stay as they are after cycle `from`; UINT64_MAX if
 * it never will. Does not change r. */
uint64_t xch_ready_cycle(ChipSim *cs, const Tile *r, uint64_t from);
/* xch_ready_cycle's answer in *ready by a walk that delivers as xch_walk
 * does (writing nothing but r's written bits) and stops where the dry one
 * would, so that xch_walk_on can go on from there instead of walking the
 * same stretch again. -1 if it meets an error before (a dry walk may not:
 * it checks less), and then xch_discard leaves r as before. */
int xch_walk_ready(ChipSim *cs, Tile *r, uint64_t from, uint64_t *ready);
/* xch_walk(cs, r, until, err), going on from xch_walk_ready's walk if r
 * has one (else from r's committed state, its walk discarded): the same
 * deliveries, checks and state, for xch_commit or xch_discard. */
int xch_walk_on(ChipSim *cs, Tile *r, uint64_t until, ChipError *err);
/* Packets decided at every receiver by `horizon` with items no tile
 * received: -1 and err filled. Frees decided packets. */
int xch_check_lost(ChipSim *cs, uint64_t horizon, ChipError *err);
void xch_new_phase(Tile *t); /* at a global sync: forget written words */
/* A 64-bit send uses the wires of both tiles of a physical pair: -1 and
 * err filled if the partner sent in the same cycles. */
int xch_check_pairs(ChipSim *cs, ChipError *err);

/* ---- observe.c: watching tiles from outside (docs/profile.md) ----
 * A mark is an instruction address of executable memory: when the
 * supervisor issues there (SIM_MARK_LOG) the tile notes the cycle and its
 * running totals (a SimMark); when any context is about to issue there
 * (SIM_MARK_BREAK) the tile stops before it with an IBRK exception. A watch
 * is a byte range: the first write to it (a store, or the exchange) stops
 * the tile with a DBRK exception. None of this changes the program's
 * cycles or memory. */
enum { SIM_MARK_LOG = 1, SIM_MARK_BREAK = 2 };

/* A tile's running totals; as of a mark, with its cycle and pc. */
typedef struct {
	uint64_t cycle; /* the supervisor issued at pc in this cycle */
	uint32_t pc;
	uint64_t sent;    /* bytes sent so far */
	uint64_t barrier; /* cycles waited in syncs with other tiles */
	uint64_t recv;    /* cycles waited in sync RECV (words in flight) */
	uint64_t compute; /* cycles from a runall to its sync (workers) */
} SimMark;

struct SimObserve {
	uint8_t *flag; /* per word below exec_end: SIM_MARK_* */
	SimMark *log;  /* the marks passed, in order */
	int nlog, caplog;
	SimMark total; /* running totals (cycle and pc unused) */
	uint32_t watch_addr, watch_len;
	uint8_t *watch_old;  /* the watched bytes when the watch was set */
	uint32_t break_skip; /* breakpoint passes to let go first */
	int hit;             /* the watch stopped the tile */
	int64_t hit_src;     /* the sending tile of that write, -1: a store */
};

/* The tile's observer, made on first use. */
SimObserve *sim_observe(Tile *t);
void sim_observe_free(Tile *t);
/* Add flags to the instruction word at pc; -1 if pc is not one. */
int sim_mark(Tile *t, uint32_t pc, unsigned flags);
/* Watch [addr, addr + len) from now on; -1 if outside memory. */
int sim_watch(Tile *t, uint32_t addr, uint32_t len);
/* Hooks of the emulator (only when t->obs): an issue at a flagged word
 * (returns 1 when a break stops it), a trace event, a store, a word the
 * exchange writes. */
int sim_observe_issue(Exec *e);
void sim_observe_event(Tile *t, TraceKind kind, uint64_t start, uint64_t end,
                       uint32_t arg);
void sim_observe_store(Exec *e, uint32_t addr, uint32_t len);
void sim_observe_receive(Tile *t, uint32_t addr, uint32_t len, uint32_t src,
                         int src_ctx, uint32_t src_pc, uint64_t at);
/* sim_observe_receive for n items of `item` bytes from addr, arriving
 * at at, at + 1, ... */
void sim_observe_receive_run(Tile *t, uint32_t addr, uint32_t n, uint32_t item,
                             uint32_t src, int src_ctx, uint32_t src_pc,
                             uint64_t at);

/* Where a tile stands after a run (for reports of stops and hangs). */
typedef enum {
	SIM_AT_IDLE,  /* never started */
	SIM_AT_RUN,   /* running (a timeout stopped the chip) */
	SIM_AT_SYNC,  /* waiting in a sync */
	SIM_AT_DONE,  /* returned to the host */
	SIM_AT_FAULT, /* stopped by an exception (a break or watch too) */
} SimAt;
typedef struct {
	SimAt state;
	int ctx;        /* SIM_AT_FAULT: the context */
	int fault;      /* SIM_AT_FAULT: its FaultType */
	uint32_t pc;    /* the supervisor's (the sync's), or the fault's */
	int zone;       /* SIM_AT_SYNC: the zone (-1: LOCAL, workers) */
	uint64_t cycle; /* the tile's clock, or the fault's cycle */
	uint64_t since; /* SIM_AT_SYNC: the sync's cycle */
	uint32_t items; /* $INCOMING_DCOUNT: items still expected */
	uint32_t mux;   /* the incoming mux's source */
	uint32_t lr;    /* the supervisor's $m10 (a call's return) */
	int workers;    /* workers running */
} SimTileStatus;
void sim_tile_status(const Tile *t, SimTileStatus *s);

/* cost.c - timing of one decoded instruction (docs/fidelity.md) */
/* Fill dc's reads, turns and hazard from its row and c's profile. */
void sim_insn_cost(const Chip *c, DInsn *dc);
/* The cycle from which the supervisor may issue an instruction or bundle
 * that reads the $m registers `reads` (DInsn.reads, bit r): when every
 * value it reads is out of the pipeline. Inline: every supervisor issue
 * asks it. */
static inline uint64_t
sim_sup_operands_ready(const Tile *t, uint32_t reads)
{
	uint64_t ready = 0;
	while (reads) {
		int r = __builtin_ctz(reads);
		reads &= reads - 1;
		if (t->mready[r] > ready)
			ready = t->mready[r];
	}
	return ready;
}

/* Instruction semantics: one function per mnemonic, exec_<mnemonic>,
 * declared from the table. */
#define I(var, mn, match, mask, lane, ctx, flags, ops) void exec_##mn(Exec *e);
#include "../target/insns.def"
#undef I

/* --- amp.c (AMP engines, docs/emulator-amp.md) --- */
static inline AmpDec
sim_amp_decode(const Insn *in)
{
	return (AmpDec){.dst = (uint8_t)in->op[0],
	                .src = (uint8_t)in->op[1],
	                .part = (uint8_t)in->op[2],
	                .p = (uint8_t)(in->op[3] & 3)};
}

/* Zero one worker's AMP state (acc, next, done): $FP_CLR.ZAACC. */
void sim_amp_clear(Context *c);

/* ---- exec_rand.c: the per-context PRNG ($PRNG_0/$PRNG_1, isa.md 2.3) ----
 * sim_prng_seed: what writing v to $PRNG_SEED does. sim_prng_next: one
 * step of the generator (xoroshiro128+, DECISION: the tile's algorithm is
 * not public), used by urand*, *grand, *rmask and stochastic rounding. */
void sim_prng_seed(Context *c, uint32_t v);
uint64_t sim_prng_next(Context *c);

#endif

/*
 * sim.h - the tile emulator: one tile's state, the issue loop, and the
 * helpers that instruction semantics (exec_*.c) use.
 *
 * Timing model (docs/emulator.md has the full story and sources):
 *   - Six issue slots, round-robin: cycle t belongs to slot t % 6.
 *   - A running worker owns one slot and issues one bundle (or one solo
 *     instruction) per turn, so every instruction has single-issue latency.
 *   - The supervisor issues in every slot not owned by a running worker
 *     (isa.md 3.1: "one bundle per owned slot per round"; DECISION, flagged).
 *   - No other stalls: no caches, no speculation. sync waits.
 *
 * Bundle semantics: both halves read registers as they were before the
 * bundle; register writes are logged and committed after both have executed
 * (a store in the main half sees the value the aux half overwrites).
 */
#ifndef IPU_SIM_H
#define IPU_SIM_H

#include <stdint.h>

#include "../asm/isa.h"
#include "../target/chip.h"

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
	CtxState state;
	uint32_t pc;
	uint32_t m[16];
	uint32_t a[16];
	/* rpt */
	uint32_t rpt_count, rpt_first, rpt_end;
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
	uint8_t file; /* 0 = MRF, 1 = ARF */
	uint8_t reg;
	uint32_t value;
} RegWrite;

/* One memory access of the bundle in flight, for conflict checks. */
typedef struct {
	uint32_t addr, size;
	uint8_t store;
} MemAccess;

typedef struct Tile Tile;

/* Everything an instruction's semantics may touch. */
typedef struct {
	Tile *tile;
	Context *c;
	int ctx;          /* 0 supervisor, 1..6 worker */
	const Insn *in;   /* the instruction being executed */
	uint32_t pc;      /* its bundle's address */
	uint32_t next_pc; /* set by branches; starts as the fall-through */
	RegWrite wr[16];
	int nwr;
} Exec;

typedef void (*ExecFn)(Exec *);

/* Supervisor CSRs that are plain storage. */
typedef struct {
	uint32_t ssr, cr, fp_ictl, fp_infmt, fp_iscl, cccsload;
	uint32_t worker_base[CHIP_WORKERS];
	uint32_t exch[16]; /* 0xa0..0xaf, kept for issue 3's exchange model */
	uint32_t dbg_data;
} SupervisorCsrs;

struct Tile {
	const Chip *chip;
	uint32_t id;
	uint8_t *mem; /* chip->mem_end - chip->mem_base bytes */
	Context ctx[CHIP_CONTEXTS];
	SupervisorCsrs sup;
	uint64_t cwei[CHIP_CWEI];
	uint64_t cycle;   /* cycles elapsed */
	uint64_t bundles; /* issues (bundles or solo instructions) */
	uint64_t worker_issues;
	int slot_worker[CHIP_SLOTS]; /* ctx running in each slot, or 0 */
	uint64_t last_exit;          /* cycle of the latest worker exit */
	int lc_and;                  /* AND of worker exit statuses */
	Fault fault;
	int faulted;
	/* bundle in flight */
	MemAccess acc[4];
	int nacc;
	/* decode cache: one Insn per instruction word of executable memory */
	Insn *dcache;
	uint8_t *dvalid;
};

/* tile.c */
Tile *tile_new(const Chip *chip, uint32_t id);
void tile_free(Tile *t);
/* Start the supervisor at `entry`; $lr holds SIM_HOST_RETURN, so that
 * `br $lr` from the entry function ends the run with $m0 as the status. */
void tile_start(Tile *t, uint32_t entry);
enum { SIM_HOST_RETURN = 0 };
/* Start worker w (0..5) at entry as run/runall do: it takes slot w from the
 * next cycle. Returns -1 if that worker is already running. */
int tile_start_worker(Tile *t, int w, uint32_t entry, uint32_t vertex_base);
typedef enum {
	RUN_DONE,    /* supervisor returned (or never ran) and workers exited */
	RUN_FAULT,   /* t->fault says what */
	RUN_TIMEOUT, /* max_cycles reached */
} RunStatus;
RunStatus tile_run(Tile *t, uint64_t max_cycles);
/* Copy bytes in/out of tile memory (host access, no faults; returns -1 when
 * the range is outside memory). Writes invalidate decoded instructions. */
int tile_write(Tile *t, uint32_t addr, const void *src, uint32_t len);
int tile_read(const Tile *t, uint32_t addr, void *dst, uint32_t len);
/* One line describing the fault: tile, context, pc, disassembly, cause. */
void tile_format_fault(const Tile *t, char *buf, size_t len);

/* Helpers for exec_*.c. A fault stops the tile after the current bundle;
 * exec functions return right after raising one. */
void sim_fault(Exec *e, FaultType type, uint32_t addr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
uint32_t sim_rm(const Exec *e, int r); /* $mzero reads 0 */
uint32_t sim_ra(const Exec *e, int r); /* $a14, $a15 read 0 (isa.md 2.1) */
void sim_wm(Exec *e, int r, uint32_t v);
void sim_wa(Exec *e, int r, uint32_t v);
/* Operand i as a value: register contents for M/A kinds, else the
 * immediate. */
uint32_t sim_src(const Exec *e, int i);
/* Write v to operand i, which must be an M or A register operand. */
void sim_dst(Exec *e, int i, uint32_t v);

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
 * the bundle; raise the fault and return 0 on failure. */
int sim_load(Exec *e, uint32_t addr, void *dst, uint32_t size);
int sim_store(Exec *e, uint32_t addr, const void *src, uint32_t size);

/* Instruction semantics: one function per mnemonic, exec_<mnemonic>,
 * declared from the table. */
#define I(var, mn, match, mask, lane, ctx, flags, ops) void exec_##mn(Exec *e);
#include "../target/insns.def"
#undef I

/* --- amp.c (AMP engines, docs/emulator-amp.md) --- */
/* Zero one worker's AMP state (acc, next, done): $FP_CLR.ZAACC. */
void sim_amp_clear(Context *c);

/* ---- exec_rand.c: the per-context PRNG ($PRNG_0/$PRNG_1, isa.md 2.3) ----
 * sim_prng_seed: what writing v to $PRNG_SEED does. sim_prng_next: one
 * step of the generator (xoroshiro128+, DECISION: the tile's algorithm is
 * not public), used by urand*, *grand, *rmask and stochastic rounding. */
void sim_prng_seed(Context *c, uint32_t v);
uint64_t sim_prng_next(Context *c);

#endif

/*
 * profile.h - what a run did, seen from outside the chip (docs/profile.md):
 * the profile of a run (profile.json, trace.json, report.html), the
 * debugger's breakpoints and watches, reports of where the tiles stopped,
 * and `ipu profile query` / `diff`.
 *
 * The emulator notes when each tile's supervisor reaches the start of a
 * step's code (marks at the package's step code addresses, sim/observe.c)
 * with its running totals (bytes sent, cycles waited in syncs, cycles its
 * workers ran); this layer names those events by the package's steps, ops
 * and kernels. Observing costs the program no cycle and no byte: the same
 * run with and without a profile gives the same cycles and results.
 *
 * A profile is made in three parts:
 *   ProfProgram  what the program is: its steps (ops, kernels, runs,
 *                predictions, MACs), its memory (code and buffers per
 *                tile), where each step's code starts on each tile; from
 *                a package, or for `ipu sim` from the supersteps of a run
 *   ProfRun      what the emulator saw: per tile the marks it passed and
 *                its totals, and the full trace of a few tiles
 *   the profile  profile.json, built from both (a cJSON tree), from which
 *                trace.json, report.html and the queries are made
 */
#ifndef IPU_PROFILE_H
#define IPU_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include "../asm/asm.h"
#include "../runner/runner.h"
#include "../pkg/pkg.h"
#include "../sim/sim.h"
#include "../util/util.h"

enum { PROFILE_VERSION = 1 };

/* Memory categories of a tile, in the order profile.json lists them. */
#define PROFILE_MEM(X)                                                         \
	X(CODE, "code")                                                        \
	X(XCODE, "exchange code")                                              \
	X(ARGS, "kernel arguments")                                            \
	X(WEIGHTS, "weights")                                                  \
	X(ACTS, "activations")                                                 \
	X(STACK, "stack")                                                      \
	X(FREE, "free")
typedef enum {
#define X(e, name) PM_##e,
	PROFILE_MEM(X)
#undef X
	    PM_COUNT
} ProfMem;
const char *profile_mem_name(ProfMem m);

/* ---- the program ---------------------------------------------------- */

typedef struct {
	uint8_t kind; /* PKG_STEP_*, or PROF_STEP_SUPER for ipu sim */
	char *what;
	uint32_t runs;
	uint64_t predicted; /* cycles of one run, 0: none */
	uint64_t overhead;  /* the cost model's cycles around it, a run */
	uint64_t macs;      /* of one run */
	uint32_t *op, nop;
	uint32_t *kernel, nkernel;
} ProfStep;
enum { PROF_STEP_SUPER = 2 }; /* a superstep of `ipu sim` */

typedef struct {
	char *name, *kind;
	uint64_t macs;
	uint32_t peak; /* MACs a tile can do a cycle at its dtype, 0: none */
} ProfOp;

typedef struct {
	char *name;
	uint32_t entry, calls;
} ProfKernel;

typedef struct {
	uint32_t tile, bytes, first, last; /* last: PKG_TO_END */
	uint8_t category;                  /* PKG_MEM_* */
} ProfBuf;

typedef struct {
	const Chip *chip;
	uint32_t tiles; /* used: 0..tiles-1 */
	uint64_t predicted;
	ProfStep *step;
	uint32_t nstep;
	ProfOp *op;
	uint32_t nop;
	ProfKernel *kernel;
	uint32_t nkernel;
	int32_t loop_first, loop_last; /* -1: no loop */
	uint32_t loop_count;
	uint32_t *step_pc; /* tiles x (nstep + 1), as Package.step_pc */
	/* memory: per tile code bytes (all of mem_base to the program's
	 * end) and the part of it that is exchange steps' code */
	uint32_t *code, *xcode;
	ProfBuf *buf;
	uint32_t nbuf;
} ProfProgram;

/* The program's description from a package (copied: pk may go). */
ProfProgram *profile_program(const Package *pk);
void profile_program_free(ProfProgram *p);

/* ---- what the emulator saw -------------------------------------------- */

/* A tile entering a step instance (the program's steps in run order, a
 * loop's once per iteration) with its totals then. */
typedef struct {
	uint32_t inst;
	SimMark m;
} ProfEntry;

typedef struct {
	ProfEntry *entry; /* increasing instances (owned) */
	int nentry;
	SimMark total;  /* totals at the end */
	uint64_t end;   /* the tile's clock at the end */
	TraceEvent *ev; /* the full trace (lanes only; owned) */
	int nev;
	SimTileStatus at; /* where it stopped */
} ProfTile;

typedef struct {
	ProfTile *tile;     /* [program tiles] */
	uint64_t cycles;    /* the run's: the last tile's end */
	const char *status; /* "done", "fault", "break", ... */
	char message[2048];
} ProfRun;

/* ---- a session: options, the observer, the outputs -------------------- */

typedef struct {
	/* the profile: NULL dir for none */
	const char *dir;
	int force;
	const char *lanes; /* trace.json's tiles: "0,5,100-103"; NULL: auto */
	/* what ran, for the summary */
	const char *command; /* "run graph", "run siglip", "sim" */
	const char *source;  /* the graph, the model, the program */
	const char *dtype;   /* NULL if none */
	int batch;           /* images; 0: not a model */
	/* debugging: stop at the start of step break_step's break_iter-th
	 * run (-1: none), at break_pc (-1: none), at the first write to
	 * watch_len bytes at watch_addr of watch_tile (0: none); then show
	 * show_tile (-1: the first that stopped) and dump ranges of it */
	int64_t break_step;
	uint32_t break_iter;
	int64_t break_pc;
	uint32_t watch_tile, watch_addr, watch_len;
	int64_t show_tile;
	int ndump;
	uint32_t dump_addr[16], dump_len[16];
	FILE *out; /* where stops are reported (stdout) */
} ProfileOptions;

typedef struct ProfileSession ProfileSession;

/* A session that observes the runs of a command through
 * profile_observer; every field of o is copied. */
ProfileSession *profile_new(const ProfileOptions *o);
void profile_free(ProfileSession *s);
const RunnerObserver *profile_observer(ProfileSession *s);
/* The outputs, once the command has run (or failed): DIR's files if a
 * profile was asked for, written even for a run that stopped or a
 * program that did not fit; `facts` adds what the command knows (compile
 * time, MFU inputs). Returns IPU_OK or an error about the files. */
typedef struct {
	double compile_seconds, host_seconds;
	int cached;
	int batch; /* images, when the command learnt it from the run */
} ProfileFacts;
int profile_finish(ProfileSession *s, const ProfileFacts *f, Diag *d);
/* 1 if the run stopped where the user asked (a break or a watch). */
int profile_stopped_as_asked(const ProfileSession *s);
/* Where the tiles stood when the run stopped (and for a stop the user
 * asked for, the shown tile's state), or NULL if it did not stop. */
const char *profile_stop_text(const ProfileSession *s);
/* The profile's folder once profile_finish wrote its files, else NULL. */
const char *profile_dir(const ProfileSession *s);

/* ipu sim: the same, for a chip the CLI runs itself. The program's
 * description is made from the run (supersteps between syncs). */
int profile_sim_arm(ProfileSession *s, ChipSim *cs, uint32_t tiles,
                    const TileImage *img, Diag *d);
void profile_sim_ran(ProfileSession *s, ChipSim *cs, RunStatus st,
                     const ChipError *err);

/* ---- where the tiles stopped (stop.c) --------------------------------- */

/* Lines that say where every tile of a stopped run stands: grouped by
 * what they do (running, waiting in which sync for how many items from
 * whom, returned, stopped by an exception), with the step and its ops
 * each pc lies in when p has step code. */
void profile_explain(const ProfProgram *p, const ProfRun *r, char *buf,
                     size_t len);
/* One tile's state: each context's pc and registers, the sync it waits
 * in, then the dumps. */
void profile_show_tile(ChipSim *cs, uint32_t tile, const ProfProgram *p,
                       const ProfileOptions *o, FILE *f);
/* Every context's registers (those that ran); len bytes of memory at addr
 * as hex, 16 a line (-1 if outside memory). */
void profile_dump_regs(const Tile *t, FILE *f);
int profile_dump_mem(const Tile *t, uint32_t addr, uint32_t len, FILE *f);

/* ---- outputs (json.c, trace.c, report.c) ------------------------------- */

typedef struct cJSON cJSON;
/* profile.json's tree. */
cJSON *profile_json(const ProfProgram *p, const ProfRun *r,
                    const ProfileOptions *o, const ProfileFacts *f,
                    const uint32_t *lanes, int nlanes);
/* trace.json: Chrome trace events of the chip and the lane tiles. */
cJSON *profile_trace(const cJSON *prof, const ProfRun *r, const uint32_t *lanes,
                     int nlanes);
/* report.html: one self-contained page around profile.json's text. */
int profile_report_write(FILE *f, const char *json_text);

/* ---- queries (query.c): `ipu profile` ---------------------------------- */

/* profile.json of DIR, checked (profile_check). */
int profile_load(const char *dir, cJSON **out, Diag *d);
/* Everything the queries read is there and of its type: the format and
 * version, the run's cycles and status, named ops and kernels, steps with
 * counts and in-range ops and kernels, a value of each kind per tile. */
int profile_check(const cJSON *j, Diag *d);
typedef enum { PQ_OP, PQ_KERNEL, PQ_STEP, PQ_TILE, PQ_KIND } ProfGroup;
int profile_query(const cJSON *prof, ProfGroup by, int json, FILE *f);
int profile_diff(const cJSON *a, const cJSON *b, const char *name_a,
                 const char *name_b, int json, FILE *f);

#endif

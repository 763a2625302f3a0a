/*
 * runner.h - a compiled graph on an emulated device: the package loaded, its
 * tensors written and read as float values converted to and from their
 * element types, and `ipu run graph` (a graph file run on .npy data).
 *
 * Conversions round to nearest even; f8 values carry their tensor's scale
 * and saturate at the format's largest value (as the device's casts do).
 */
#ifndef IPU_RUNNER_H
#define IPU_RUNNER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ipu/runtime.h>

#include "../compile/compile.h"

/* Something that watches runs from outside (src/profile: profiles,
 * breakpoints, reports of where the tiles stopped); it can change nothing
 * the program does. Any callback may be NULL. */
typedef struct {
	/* pk is loaded on dev and the run has not started: marks and
	 * watches go on the device's tiles (rt_chipsim). Non-zero: do not
	 * run (the error in d). */
	int (*loaded)(void *ctx, ipu_device *dev, const Package *pk, Diag *d);
	/* the run ended, rc 0, or stopped with rc and d (which it may
	 * extend, e.g. with the steps the tiles stand in) and err, the
	 * runtime's error */
	void (*ran)(void *ctx, ipu_device *dev, int rc, const ipu_error *err,
	            Diag *d);
	/* the program does not fit the chip (rep->layout, rep->place) */
	void (*unfit)(void *ctx, const CompileReport *rep);
	void *ctx;
} RunnerObserver;

/* What runner_build reports of the package. */
typedef struct RunnerBuild {
	uint64_t predicted_cycles;
	double compile_ms; /* of the compile that made it */
	uint32_t tiles, peak_tile_bytes;
	int cached; /* 1: read from the cache, not compiled now */
	Plan *plan; /* with CompileOptions.keep_plan and compiled now, the
	               plan of the package (CompileReport.kept_plan); the
	               caller frees it (plan_free); else NULL */
} RunnerBuild;

/* g compiled for chip with the options `opt` (NULL: the defaults; its
 * chip is `chip`), or the package an earlier call stored in cache_dir
 * for the same graph (its text), chip, options and compiler (this
 * executable's bytes, so a rebuilt `ipu` never reuses an old package).
 * cache_dir NULL:
 * no cache. An entry that does not read back whole (pkg_read checks every
 * field and the CRC) is compiled again and replaced; a cache that cannot
 * be written leaves the package uncached and the call succeeds. If the
 * program does not fit the chip's memory, the placement's per-tile report
 * goes to `report` (NULL: nowhere; the error names the worst tile either
 * way). */
int runner_build(const Graph *g, const Chip *chip, const CompileOptions *opt,
                 const char *cache_dir, FILE *report, const RunnerObserver *obs,
                 Package **pk, RunnerBuild *b, Diag *d);
/* The package of a timing range (docs/fidelity.md): runner_build's
 * program for chip, its plans as that compile chose them, lowered,
 * scheduled and priced on chip `at` (the same chip at another timing
 * profile; CompileOptions.plan). *plan: that compile's plan
 * (RunnerBuild.plan), or NULL if runner_build read its package from the
 * cache: then, unless the package at `at` is in the cache too, g is
 * compiled for chip again for its plan, left in *plan for the next call
 * (the caller frees it). Cached as runner_build's, keyed by both
 * profiles. IPU_ERANGE if the program does not fit at `at`. */
int runner_build_at(const Graph *g, const Chip *chip, const CompileOptions *opt,
                    Plan **plan, const Chip *at, const char *cache_dir,
                    Package **pk, RunnerBuild *b, Diag *d);
/* Entries a cache directory keeps: the most recently written or read. */
enum { RUNNER_CACHE_KEEP = 4 };
/* $XDG_CACHE_HOME/ipu, else $HOME/.cache/ipu, else NULL; malloc'd. */
char *runner_default_cache(void);

/* pk on a new emulated device of chip with `threads` host threads (>= 1);
 * obs (may be NULL) sees it loaded. The device owns pk from here on
 * (ipu_close frees it; a failure here frees it too). */
int runner_open(const Chip *chip, Package *pk, int threads,
                const RunnerObserver *obs, ipu_device **dev, Diag *d);
/* The same on a chosen device: NULL or neither model nor hw, the
 * emulator (sim:); else through the card's device interface
 * (docs/hardware.md): the card model (model:c600) or a card (hw:N, N =
 * card), with an optional configuration capture to replay and a log of
 * every register access (file names without ':'). */
typedef struct RunnerDevice {
	int model, hw;
	uint32_t card; /* hw:N */
	const char *config, *log;
} RunnerDevice;
/* "sim", "sim:CHIP", "model", "model:c600" or "hw:N", the last two
 * optionally followed by :config=FILE and :log=FILE, into *on; spec is
 * cut at its ':' and the file names point into it. *chip (may be NULL)
 * gets sim:CHIP's chip (model and hw: the C600, which runner_open_on
 * checks). IPU_EINVAL with d saying what is expected. */
int runner_device_parse(char *spec, RunnerDevice *on, const Chip **chip,
                        Diag *d);
int runner_open_on(const RunnerDevice *on, const Chip *chip, Package *pk,
                   int threads, const RunnerObserver *obs, ipu_device **dev,
                   Diag *d);

/* One run of the loaded package: its cycles on the chip and the host's
 * seconds it took (also on a fault, whose message says where). A run
 * stops after max_cycles cycles, or with max_cycles 0 after
 * RUNNER_CYCLES_FACTOR x predicted + RUNNER_CYCLES_SLACK: a package that
 * loops forever (a corrupt cache entry) ends with an error that names the
 * limit and --max-cycles, not a process that spins for ever. Predictions
 * are within a few per cent of the emulated cycles (docs/compiler.md), so
 * no run that works comes near the limit, and a program that never ends
 * costs at most ten of its own runs. obs (may be NULL) sees it end. */
int runner_run(ipu_device *dev, uint64_t max_cycles, uint64_t predicted,
               const RunnerObserver *obs, uint64_t *cycles,
               double *host_seconds, Diag *d);
enum { RUNNER_CYCLES_FACTOR = 10, RUNNER_CYCLES_SLACK = 1000000 };
/* A display of runs' progress (cli/progress.c): runner_run calls
 * fn(ctx, 0, predicted, 0) as the run begins, fn(ctx, done, predicted, 0)
 * between the chip's rounds with the cycles so far and the compiler's
 * prediction, and fn(ctx, cycles, predicted, 1) when the run has ended.
 * NULL (the default): no display. */
typedef void (*RunnerProgressFn)(void *ctx, uint64_t done, uint64_t predicted,
                                 int finished);
void runner_set_progress(RunnerProgressFn fn, void *ctx);

/* Model FLOP utilisation of a run of g that took `cycles`: the time each
 * matmul needs at its first operand's peak MACs per tile-cycle (f8 at the
 * f8 rate) over the time taken, on all of the chip's tiles; *macs (may be
 * NULL) gets the matmuls' multiply-accumulates. 0 when cycles is 0. */
double runner_mfu(const Graph *g, const Chip *chip, uint64_t cycles,
                  uint64_t *macs);

/* n values into e's bits (n * dtype_size bytes), as runner_write converts
 * them; returns how many were beyond e's range (f16: infinite; f8: the
 * format's largest at the scale), the first at *first_over (may be NULL). */
size_t runner_encode(ElemType e, const float *v, size_t n, uint8_t *out,
                     size_t *first_over);

/* Every element of host tensor t (an input, weight or output of the
 * loaded package) from or into v. */
int runner_write(ipu_device *dev, const Tensor *t, const float *v, Diag *d);
int runner_read(ipu_device *dev, const Tensor *t, float *v, Diag *d);

/* A graph's text file parsed; d is the first error (file:line:col). */
int runner_load_graph(const char *path, Graph **g, Diag *d);

/* A tensor name bound to a .npy file. */
typedef struct RunnerFile {
	const char *tensor;
	const char *path;
} RunnerFile;

/* The values of t from f's .npy: float32 or float16, exactly t's shape
 * (*v malloc'd). */
int runner_npy_values(const Tensor *t, const RunnerFile *f, float **v, Diag *d);

typedef struct {
	const char *graph;    /* the graph's text file */
	const Chip *chip;     /* NULL: the default chip */
	int threads;          /* host threads of the emulator */
	const RunnerFile *in; /* every input and weight the program reads */
	int nin;
	const RunnerFile *out; /* tensors written as f32 .npy after the run */
	int nout;
	int force;             /* replace existing output files */
	const char *cache_dir; /* runner_build's; NULL: always compile */
	uint64_t max_cycles;   /* runner_run's; 0: the default */
	FILE *place_report;    /* runner_build's; NULL: nowhere */
	const RunnerObserver *observe; /* NULL: none */
	const RunnerDevice *device;    /* NULL: the emulator */
} RunnerGraphRun;

typedef struct {
	uint64_t cycles;
	double host_seconds;
	double mfu; /* runner_mfu's */
	RunnerBuild build;
	/* --in values beyond their tensor's element type: the first such
	 * file and tensor ("" if none), and how many tensors have some */
	char warning[512];
	int nwarned;
} RunnerResult;

/* Parse, compile and run the graph once on r's inputs; write r's outputs.
 * Every check of names and shapes is done before the run; the caller
 * checks the output files (the CLI: cli_check_outputs), and the writes
 * still never replace a file without `force`. */
int runner_graph_file(const RunnerGraphRun *r, RunnerResult *res, Diag *d);

#endif

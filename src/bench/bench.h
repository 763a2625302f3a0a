/*
 * bench.h - benchmarks that run device code on the emulator and report
 * cycles and accuracy. The CLI prints them (`ipu bench ...`); tests check
 * their outputs against independent references.
 */
#ifndef IPU_BENCH_H
#define IPU_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "../target/chip.h"
#include "../target/dtype.h"
#include "../runner/runner.h"
#include "../util/util.h"

typedef enum { AMP_F32, AMP_F16, AMP_F8 } AmpDtype;

/* A benchmark's cycles at the bounds of the timing profile
 * (docs/fidelity.md): the same benchmark run again with every timing rule
 * at its fast bound and at its slow bound (compiled for that profile
 * where it compiles, its results checked as at nominal). */
typedef struct {
	int done;                                /* the bound runs were made */
	uint64_t fast, slow;                     /* emulated cycles */
	uint64_t predicted_fast, predicted_slow; /* the compiler's, if any */
} BenchRange;

/* One run of a benchmark at chip `at` (its config in cfg): the cycles and
 * the compiler's prediction (0 if none). */
typedef int (*BenchOnce)(const void *cfg, const Chip *at, uint64_t *cycles,
                         uint64_t *predicted, Diag *d);
/* The runs at the fast and at the slow bound of c into *r. */
int bench_range(BenchOnce once, const void *cfg, const Chip *c, BenchRange *r,
                Diag *d);

const char *amp_dtype_name(AmpDtype t);
/* The element type of its operands (f8: F143). */
DType amp_dtype_type(AmpDtype t);
int amp_dtype_parse(const char *s, AmpDtype *t); /* 0 or -1 */

typedef struct {
	const Chip *chip;
	AmpDtype dtype;
	uint32_t rows; /* rows of the input, split over six workers */
	uint64_t seed; /* input data */
	int fp8_scale; /* f8: power-of-two scale of inputs and of weights */
	uint64_t max_cycles; /* 0: BENCH_MAX_CYCLES */
	int range; /* also run at the timing bounds (TileAmpResult.range) */
} TileAmpConfig;

/* tile-amp's f8 scale of inputs and of weights unless told (`ipu bench
 * tile-amp --fp8-scale`, `ipu bench sim --dtype f8`). */
#define BENCH_FP8_SCALE (-3)

/* The cycle limit of the benchmarks' own programs (tile-amp, exchange,
 * sim) without --max-cycles: as `ipu sim`'s, a thousand times their
 * largest runs (a few million cycles). */
#define BENCH_MAX_CYCLES 1000000000ull

/*
 * One run of kernels/amp.S on one tile: out = partials + in x W with W of
 * K x 16. Element arrays hold bit patterns: f32 as uint32, f16 as uint16,
 * f8 as uint8; outputs and partials are f16 for f16 and f8.
 */
typedef struct {
	uint32_t k;      /* inputs per row: 16 f16, 32 f8, 8 f32 */
	uint64_t cycles; /* the whole supervisor program */
	uint64_t macs;   /* rows x k x 16 */
	double macs_per_cycle;
	uint32_t peak_macs_per_cycle;
	double max_rel_err; /* max |out - ref| / max |ref|, ref in f64 */
	void *in, *w, *partials, *out; /* rows x k, k x 16, rows x 16 (x2) */
	BenchRange range;
} TileAmpResult;

/* tile_amp.c */
int bench_tile_amp(const TileAmpConfig *cfg, TileAmpResult *res, Diag *d);
void bench_tile_amp_free(TileAmpResult *res);

/* The same benchmark as a job that any number of tiles can run (the chip
 * model's sim-speed benchmark loads it on every tile): amp_job_new plans
 * memory and makes the data (kept in res); amp_job_load writes code and
 * data into a tile and starts its supervisor; after the run,
 * amp_job_check reads that tile's outputs into res and fills the accuracy
 * and speed fields. */
typedef struct AmpJob AmpJob;
struct Tile;
int amp_job_new(const TileAmpConfig *cfg, AmpJob **job, TileAmpResult *res,
                Diag *d);
void amp_job_load(const AmpJob *job, const TileAmpResult *res, struct Tile *t);
void amp_job_check(const AmpJob *job, const struct Tile *t, TileAmpResult *res);
/* Where a tile holds its outputs (*bytes of them). */
uint32_t amp_job_out(const AmpJob *job, uint32_t *bytes);
void amp_job_free(AmpJob *job);

/* ---- exchange.c: the exchange benchmark (docs/bench-exchange.md) ---- */

typedef enum { EXCH_P2P, EXCH_MULTICAST, EXCH_ALL_TO_ALL } ExchPattern;

const char *exch_pattern_name(ExchPattern p);
int exch_pattern_parse(const char *s, ExchPattern *p); /* 0 or -1 */

typedef struct {
	const Chip *chip; /* NULL = the C600 */
	ExchPattern pattern;
	uint32_t tiles;      /* 0 = all of the chip's */
	uint32_t bytes;      /* per receiving tile, a multiple of 4 */
	int threads;         /* host threads of the chip model */
	uint64_t seed;       /* payload */
	uint64_t max_cycles; /* 0: BENCH_MAX_CYCLES */
	/* p2p: the sending and the receiving tile; -1: tile 0, and the tile
	 * with the longest route from the sender */
	int64_t from, to;
} ExchangeConfig;

typedef struct {
	uint32_t tiles, senders, receivers;
	uint32_t bytes;            /* received by each receiving tile */
	uint32_t p2p_src, p2p_dst; /* p2p: the sending and receiving tile */
	int32_t p2p_lead;          /* p2p: their mux lead (chip.h) */
	uint64_t release; /* cycle the sync that opens the phase releases */
	uint64_t last_arrival;             /* cycle the last item arrives */
	uint64_t exchange_cycles;          /* last_arrival + 1 - release */
	uint64_t program_cycles;           /* the whole program, both syncs */
	uint32_t latency_min, latency_max; /* route cycles of the pairs used */
	double bytes_per_cycle_per_tile;   /* bytes / exchange_cycles */
	double aggregate_bytes_per_cycle;  /* x receivers */
	double tb_per_s;      /* aggregate at the chip's clock, 1e12 B/s */
	double peak_tb_per_s; /* tiles x 4 B x clock (system.md 1.2) */
	double host_seconds;  /* wall time of the chip model's run */
} ExchangeResult;

/* Build, run and check one exchange phase; 0 or a negative IPU_E* with d
 * filled (bad sizes, a fault, or a word that arrived wrong). */
int bench_exchange(const ExchangeConfig *cfg, ExchangeResult *res, Diag *d);

/* ---- sim_speed.c: the emulator's own speed (docs/bench-sim.md) ---- */

typedef struct {
	const Chip *chip;    /* NULL = the C600 */
	uint32_t tiles;      /* 0 = all of the chip's */
	uint32_t rows;       /* tile-amp rows per tile */
	int threads;         /* host threads, for the emulator and for SGEMM */
	uint32_t sgemm_n;    /* host SGEMM of n x n x n; 0 = none */
	uint64_t max_cycles; /* 0: BENCH_MAX_CYCLES */
	int f8;              /* 1: the f8 program (BENCH_FP8_SCALE), 0: f16 */
} SimSpeedConfig;

typedef struct {
	uint32_t tiles;
	int threads;
	uint64_t cycles;      /* the chip's: the slowest tile */
	uint64_t tile_cycles; /* summed over tiles */
	uint64_t bundles;     /* issues summed over tiles */
	double host_seconds;  /* wall time of the chip model's run */
	double cpu_seconds;   /* CPU time of that run, all threads */
	double tile_cycles_per_s, bundles_per_s;
	/* host nanoseconds per tile-cycle: of wall time times the threads,
	 * and of CPU time (the figure other load does not change) */
	double thread_ns_per_tile_cycle, cpu_ns_per_tile_cycle;
	double emulated_gflops; /* the AMP work done per host second */
	double chip_seconds;    /* cycles at the chip's clock */
	double slowdown;        /* host_seconds / chip_seconds */
	int sgemm_threads;
	double sgemm_gflops;        /* best of a few runs */
	double sgemm_over_emulated; /* sgemm_gflops / emulated_gflops */
	double max_rel_err;         /* tile 0 against f64 */
} SimSpeedResult;

int bench_sim_speed(const SimSpeedConfig *cfg, SimSpeedResult *res, Diag *d);
/* Run the chip model to the end or max_cycles (0: BENCH_MAX_CYCLES), timed
 * (*seconds): 0, or IPU_EFAULT with d naming `what` and the chip's error
 * (a timeout also the limit and --max-cycles). */
struct ChipSim;
int bench_run_chip(struct ChipSim *cs, const char *what, uint64_t max_cycles,
                   double *seconds, Diag *d);
/* host_sgemm.c: the best of a few n x n x n cblas_sgemm runs on `threads`
 * OpenBLAS threads after a warm-up, in GFLOP/s. */
double bench_host_sgemm(uint32_t n, int threads);

/* ---- gemm.c: a matrix product through the compiler and the runtime
 * (`ipu bench gemm`, docs/bench-gemm.md) ---- */

/* tile_amp.c: a uniform double in [-1, 1) from a splitmix64 state, the
 * benchmarks' reproducible input data. */
double bench_uniform(uint64_t *state);

typedef struct {
	const Chip *chip; /* NULL = the C600 */
	AmpDtype dtype;   /* f16, f32, or f8 (F143, ipu21 only) */
	uint32_t m, n, k; /* C [m, n] = A [m, k] x B [k, n] */
	uint32_t tiles;   /* tiles the compiler may use; 0 = all */
	int threads;      /* host threads of the emulator and of OpenBLAS */
	uint64_t seed;    /* input data */
	uint64_t ref_full_macs; /* 0 = GEMM_REF_FULL_MACS (tests lower it) */
	int fp8_f152[2];        /* f8: A's, B's format is F152 (else F143) */
	int fp8_scale;          /* f8: A and B are stored as x / 2^scale */
	uint64_t max_cycles;    /* runner_run's; 0: the default */
	int range; /* also run at the timing bounds (GemmBenchResult.range) */
	const RunnerDevice *device; /* NULL: the emulator (sim:) */
	int no_overlap;             /* CompileOptions.no_gemm_overlap */
} GemmBenchConfig;

/* Above this many MACs (m * n * k) only GEMM_REF_ROWS rows of C, spread
 * evenly over m, are checked against the f64 reference (all n columns,
 * full k). */
#define GEMM_REF_FULL_MACS ((uint64_t)1 << 31)
enum { GEMM_REF_ROWS = 64 };

typedef struct {
	uint32_t tiles;            /* tiles the plan uses (= the device's) */
	uint64_t macs;             /* m * n * k */
	uint64_t cycles;           /* emulated: the last tile to finish */
	uint64_t predicted_cycles; /* the compiler's cost model */
	double pred_error;         /* predicted / cycles - 1 */
	/* macs / (cycles * chip tiles * peak MACs per tile-cycle of the
	 * dtype): unused tiles count against it */
	double mfu;
	double max_rel_err;       /* max |c - ref| / max |ref|, checked rows */
	uint32_t ref_rows;        /* rows of C checked (m, or GEMM_REF_ROWS) */
	double compile_ms;        /* compile_graph's wall time */
	uint32_t peak_tile_bytes; /* code + data on the fullest tile */
	double host_seconds;      /* wall time of ipu_run */
	char plan[2048];          /* the planner's description */
	BenchRange range;
} GemmBenchResult;

/* Build the graph, compile, run on "sim:CHIP:tiles=T:threads=N", check
 * against OpenBLAS dgemm on the same (rounded) inputs. 0, or a negative
 * IPU_E* with d filled (bad sizes, f8 on an ipu2 chip, a compile error,
 * a runtime error). */
int bench_gemm(const GemmBenchConfig *cfg, GemmBenchResult *res, Diag *d);
/* ---- graph: a model graph compiled and run (graph.c) ---- */
typedef struct {
	const char *path;    /* the graph's text form */
	const Chip *chip;    /* NULL: the C600 */
	uint32_t tiles;      /* 0: all */
	int threads;         /* host threads of the emulator */
	uint64_t seed;       /* input data */
	uint64_t max_cycles; /* runner_run's; 0: the default */
	int range; /* also run at the timing bounds (GraphBenchResult.range) */
} GraphBenchConfig;

typedef struct {
	uint32_t tiles;            /* tiles the program uses */
	uint64_t macs;             /* of the matmuls */
	uint64_t flops;            /* graph_flops: 2 per MAC, 1 per other op */
	uint64_t cycles;           /* emulated */
	uint64_t predicted_cycles; /* the compiler's */
	uint64_t exchange_cycles;  /* predicted, in exchange steps (with */
	uint64_t compute_cycles;   /* the syncs) and in compute steps */
	uint32_t steps;
	double pred_error; /* predicted / cycles - 1 */
	double mfu;        /* runner_mfu: each matmul at its operands' peak */
	double compile_ms;
	uint32_t peak_tile_bytes;
	double host_seconds;
	char plan[2048];
	BenchRange range;
} GraphBenchResult;

int bench_graph(const GraphBenchConfig *cfg, GraphBenchResult *res, Diag *d);

/* ---- siglip.c: the SigLIP vision tower end to end (`ipu bench siglip`,
 * docs/bench-siglip.md) ---- */
typedef struct {
	/* the model: a preset's config (cut to `layers` if nonzero) or a
	 * config.json; its checkpoint `weights` if given, else a seeded
	 * synthetic one (siglip_gen) in a temporary directory */
	const char *preset, *config, *weights;
	int layers;          /* 0: the config's */
	DType dtype;         /* compute: f32, f16 or f8_f143 */
	int batch;           /* images: seeded pixel values in [-1, 1) */
	int micro_batch;     /* images a run (SiglipRun's; 0: the batch) */
	int groups;          /* SiglipRun's (0: none) */
	uint64_t seed;       /* the checkpoint's and the pixels' */
	int check;           /* also the f64 reference (tools/siglip_ref.py) */
	const char *ref;     /* that script; NULL: the binary's own */
	int compile_only;    /* no emulation (cycles 0) */
	int no_fold_ln;      /* f8: the LayerNorms keep gamma and beta */
	int no_b_wrap;       /* CompileOptions.no_b_wrap */
	int range;           /* cycles at the timing bounds (predicted) */
	const Chip *chip;    /* NULL: the C600 */
	int threads;         /* host threads of the emulator */
	uint64_t max_cycles; /* runner_run's; 0: the default */
	FILE *place_report;  /* the placement report if it does not fit */
} SiglipBenchConfig;

typedef struct {
	int layers, tokens, hidden, batch;
	int micro_batch, runs; /* images a run, runs of the program */
	uint32_t tiles, fullest_tile_bytes;
	uint64_t macs; /* of the matmuls, the whole batch */
	/* the device's cycles over every run (host transfers not counted)
	 * and runs x the program's predicted cycles */
	uint64_t cycles, predicted_cycles;
	/* the program's cycles predicted at every rule's fast and slow
	 * bound, its plans kept (siglip_run); 0 without range, or where it
	 * does not fit (range_unfit says why, else "") */
	uint64_t cycles_fast, cycles_slow;
	char range_unfit[1200];
	double images_per_s; /* batch x clock / cycles */
	double mfu;          /* each matmul's MACs at its operands' peak, over
	                        cycles x chip tiles (siglip_run) */
	double compile_s, emulation_s;
	double load_s; /* loading the package and writing inputs, all runs */
	double cosine; /* check: the worst image's against f64, else -2 */
	DType dtype;
	char config_name[64]; /* the preset, or "config" */
} SiglipBenchResult;

int bench_siglip(const SiglipBenchConfig *cfg, SiglipBenchResult *res, Diag *d);

#endif

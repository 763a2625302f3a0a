/*
 * bench.h - benchmarks that run device code on the emulator and report
 * cycles and accuracy. The CLI prints them (`ipu bench ...`); tests check
 * their outputs against independent references.
 */
#ifndef IPU_BENCH_H
#define IPU_BENCH_H

#include <stdint.h>

#include "../target/chip.h"
#include "../util/util.h"

typedef enum { AMP_F32, AMP_F16, AMP_F8 } AmpDtype;

const char *amp_dtype_name(AmpDtype t);
int amp_dtype_parse(const char *s, AmpDtype *t); /* 0 or -1 */

typedef struct {
	const Chip *chip;
	AmpDtype dtype;
	uint32_t rows; /* rows of the input, split over six workers */
	uint64_t seed; /* input data */
	int fp8_scale; /* f8: power-of-two scale of inputs and of weights */
} TileAmpConfig;

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
	uint32_t tiles; /* 0 = all of the chip's */
	uint32_t bytes; /* per receiving tile, a multiple of 4 */
	int threads;    /* host threads of the chip model */
	uint64_t seed;  /* payload */
} ExchangeConfig;

typedef struct {
	uint32_t tiles, senders, receivers;
	uint32_t bytes;   /* received by each receiving tile */
	uint32_t p2p_dst; /* p2p: the receiving tile */
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
	const Chip *chip; /* NULL = the C600 */
	uint32_t tiles;   /* 0 = all of the chip's */
	uint32_t rows;    /* tile-amp f16 rows per tile */
	int threads;      /* host threads, for the emulator and for SGEMM */
	uint32_t sgemm_n; /* host SGEMM of n x n x n; 0 = none */
} SimSpeedConfig;

typedef struct {
	uint32_t tiles;
	int threads;
	uint64_t cycles;      /* the chip's: the slowest tile */
	uint64_t tile_cycles; /* summed over tiles */
	uint64_t bundles;     /* issues summed over tiles */
	double host_seconds;  /* wall time of the chip model's run */
	double tile_cycles_per_s, bundles_per_s;
	double emulated_gflops; /* the AMP work done per host second */
	double chip_seconds;    /* cycles at the chip's clock */
	double slowdown;        /* host_seconds / chip_seconds */
	int sgemm_threads;
	double sgemm_gflops;        /* best of a few runs */
	double sgemm_over_emulated; /* sgemm_gflops / emulated_gflops */
	double max_rel_err;         /* tile 0 against f64 */
} SimSpeedResult;

int bench_sim_speed(const SimSpeedConfig *cfg, SimSpeedResult *res, Diag *d);
/* A monotonic clock in seconds, for timing host work. */
double bench_seconds(void);
/* Run the chip model to the end, timed (*seconds): 0, or IPU_EFAULT with d
 * naming `what` and the chip's error. */
struct ChipSim;
int bench_run_chip(struct ChipSim *cs, const char *what, double *seconds,
                   Diag *d);
/* host_sgemm.c: the best of a few n x n x n cblas_sgemm runs on `threads`
 * OpenBLAS threads after a warm-up, in GFLOP/s. */
double bench_host_sgemm(uint32_t n, int threads);

#endif

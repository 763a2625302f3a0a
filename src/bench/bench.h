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

#endif

/*
 * tile_amp.c - the one-tile AMP benchmark: kernels/amp.S on one emulated
 * tile, R rows of K inputs against a K x 16 weight block.
 *
 * Memory plan (addresses from the chip, see docs/bench-tile-amp.md):
 *   region 0, after the code: supervisor state, six vertices, the input rows
 *   region 1: weights (512 B), partials, outputs; the output buffer starts an
 *             odd number of 8-byte atoms after the partials, so that the
 *             partial load and the result store of every bundle fall in the
 *             two different elements of an interleaved pair
 *   last 64 bytes of memory: the workers' scratch atoms
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../asm/asm.h"
#include "../kernels/kernels.h"
#include "../sim/sim.h"
#include "tile_kernel.h"
#include "../util/fp.h"

enum {
	IN_ROW_BYTES = 32, /* every dtype: 4 atoms of input per row */
	TAIL_BYTES = 160,  /* the drain reads this far past in/partials */
	VERTEX_BYTES = 20,
	SCRATCH_BYTES = 64,
	OUT_COLS = 16,
};

typedef struct {
	const char *name;
	DType type;             /* the graph's element type (f8: F143) */
	const char *supervisor; /* entry symbol in kernels/amp.S */
	uint32_t k;             /* inputs per row */
	uint32_t in_bytes;      /* bytes per input element */
	uint32_t out_bytes;     /* bytes per partial/result element */
} DtypeInfo;

static const DtypeInfo dtypes[] = {
    [AMP_F32] = {"f32", DT_F32, "amp_f32_supervisor", 8, 4, 4},
    [AMP_F16] = {"f16", DT_F16, "amp_f16_supervisor", 16, 2, 2},
    [AMP_F8] = {"f8", DT_F8_F143, "amp_f8_supervisor", 32, 1, 2},
};

const char *
amp_dtype_name(AmpDtype t)
{
	return dtypes[t].name;
}

DType
amp_dtype_type(AmpDtype t)
{
	return dtypes[t].type;
}

int
amp_dtype_parse(const char *s, AmpDtype *t)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(s, dtypes[i].name)) {
			*t = (AmpDtype)i;
			return 0;
		}
	return -1;
}

/* splitmix64: a small, well-known generator for reproducible data. */
static uint64_t
next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double
bench_uniform(uint64_t *s)
{
	return (double)(next_random(s) >> 11) * 0x1p-53 * 2.0 - 1.0;
}

/* Store x as element i of an array of dtype t (inputs or weights when
 * is_io, else partials/outputs); returns the value actually stored. */
static double
put_value(const TileAmpConfig *cfg, void *arr, int is_io, uint32_t i, double x)
{
	unsigned fl = 0;
	if (cfg->dtype == AMP_F32) {
		uint32_t b = fp_f64_to_f32(x, FP_RNE, 0, &fl);
		((uint32_t *)arr)[i] = b;
		return fp_f32_float(b);
	}
	if (cfg->dtype == AMP_F8 && is_io) {
		uint8_t q =
		    fp_f64_to_f8(x, FP8_F143, cfg->fp8_scale, FP_OV_SAT, &fl);
		((uint8_t *)arr)[i] = q;
		return fp_f8_to_f64(q, FP8_F143, cfg->fp8_scale);
	}
	uint16_t h = fp_f64_to_f16(x, FP_RNE, 0, FP_OV_IEEE, &fl);
	((uint16_t *)arr)[i] = h;
	return fp_f16_to_f64(h);
}

static double
get_value(const TileAmpConfig *cfg, const void *arr, uint32_t i)
{
	if (cfg->dtype == AMP_F32)
		return fp_f32_float(((const uint32_t *)arr)[i]);
	return fp_f16_to_f64(((const uint16_t *)arr)[i]);
}

/* The weights in $CWEI order: register idx holds elements of input rows
 * e*n .. e*n + e - 1 (e per register) for output column m, where
 * m = (idx / 32) * 8 + (idx % 32) / 4 and n = idx % 4 (isa.md 5.3;
 * docs/emulator-amp.md). */
static void
cwei_layout(const DtypeInfo *dt, const uint8_t *w, uint8_t *out)
{
	uint32_t per = 8 / dt->in_bytes;
	for (uint32_t idx = 0; idx < CHIP_CWEI; idx++) {
		uint32_t m = (idx / 32) * 8 + (idx % 32) / 4, n = idx % 4;
		for (uint32_t j = 0; j < per; j++) {
			uint32_t k = per * n + j;
			memcpy(out + 8 * idx + j * dt->in_bytes,
			       w + (k * OUT_COLS + m) * dt->in_bytes,
			       dt->in_bytes);
		}
	}
}

/* Everything needed to load the benchmark into any number of tiles: the
 * kernel image, the memory plan, and the data in tile form. */
struct AmpJob {
	TileAmpConfig cfg;
	const DtypeInfo *dt;
	TileImage img;
	uint32_t entry;
	uint32_t sup, vert, in, weights, partials, out, scratch, prow;
	uint8_t cw[8 * CHIP_CWEI], state[16];
	double *xin, *xw; /* the rounded inputs and weights, for the check */
};

int
amp_job_new(const TileAmpConfig *cfg, AmpJob **jobp, TileAmpResult *res,
            Diag *d)
{
	const Chip *c = cfg->chip;
	const DtypeInfo *dt = &dtypes[cfg->dtype];
	memset(res, 0, sizeof *res);
	*jobp = NULL;
	if (cfg->dtype == AMP_F8 && c->arch != ARCH_IPU21)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "f8 needs an ipu21 chip (c600); %s is %s",
		                c->name, c->arch_name);
	if (cfg->rows == 0)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0, "rows must be > 0");
	static const char *const kernels[] = {"amp", "amp_f8"};
	AmpJob *j = xcalloc(1, sizeof *j);
	j->cfg = *cfg;
	j->dt = dt;
	if (kernel_image(kernels, cfg->dtype == AMP_F8 ? 2 : 1, c, &j->img,
	                 d)) {
		free(j);
		return IPU_EINVAL;
	}
	int64_t entry = img_symbol_addr(&j->img, dt->supervisor);
	if (entry < 0)
		die("kernels/amp.S has no %s", dt->supervisor);
	j->entry = (uint32_t)entry;

	uint32_t rows = cfg->rows, k = dt->k;
	uint32_t prow = j->prow = OUT_COLS * dt->out_bytes;
	uint32_t code_end = c->mem_base;
	for (int i = 0; i < j->img.nseg; i++)
		if (j->img.seg[i].addr + j->img.seg[i].size > code_end)
			code_end = j->img.seg[i].addr + j->img.seg[i].size;
	j->sup = align_up(code_end, 16);
	j->vert = j->sup + 16;
	j->in = align_up(j->vert + 6 * VERTEX_BYTES, 32);
	j->weights = c->interleave;
	j->partials = j->weights + 8 * CHIP_CWEI;
	j->out = align_up(j->partials + rows * prow + TAIL_BYTES, 16) + 8;
	j->scratch = c->mem_end - SCRATCH_BYTES;
	uint32_t last_pair = c->mem_end - 2 * c->elem_bytes;
	if (j->in + rows * IN_ROW_BYTES + TAIL_BYTES > c->interleave ||
	    j->out + rows * prow > last_pair) {
		uint32_t max_in =
		    (c->interleave - j->in - TAIL_BYTES) / IN_ROW_BYTES;
		uint32_t max_out =
		    (last_pair - j->partials - TAIL_BYTES - 24) / (2 * prow);
		amp_job_free(j);
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "%u rows of %s do not fit one tile's memory "
		                "(at most %u)",
		                rows, dt->name,
		                max_in < max_out ? max_in : max_out);
	}

	/* Data. */
	uint64_t s = cfg->seed;
	res->k = k;
	res->in = xcalloc(rows * k, dt->in_bytes);
	res->w = xcalloc(k * OUT_COLS, dt->in_bytes);
	res->partials = xcalloc(rows * OUT_COLS, dt->out_bytes);
	res->out = xcalloc(rows * OUT_COLS, dt->out_bytes);
	j->xin = xcalloc(rows * k, sizeof(double));
	j->xw = xcalloc(k * OUT_COLS, sizeof(double));
	for (uint32_t i = 0; i < rows * k; i++)
		j->xin[i] = put_value(cfg, res->in, 1, i, bench_uniform(&s));
	for (uint32_t i = 0; i < k * OUT_COLS; i++)
		j->xw[i] = put_value(cfg, res->w, 1, i, bench_uniform(&s));
	for (uint32_t i = 0; i < rows * OUT_COLS; i++)
		put_value(cfg, res->partials, 0, i, bench_uniform(&s));
	cwei_layout(dt, res->w, j->cw);
	uint32_t scale6 = (uint32_t)cfg->fp8_scale & 0x3f;
	put_le32(j->state, j->weights);
	put_le32(j->state + 4, j->vert);
	put_le32(j->state + 8, 0); /* F143 inputs and weights */
	put_le32(j->state + 12, (scale6 + scale6) & 0x3f);
	*jobp = j;
	return IPU_OK;
}

void
amp_job_load(const AmpJob *j, const TileAmpResult *res, Tile *t)
{
	const DtypeInfo *dt = j->dt;
	uint32_t rows = j->cfg.rows, prow = j->prow;
	tile_load_image(t, &j->img);
	tile_write(t, j->weights, j->cw, sizeof j->cw);
	tile_write(t, j->in, res->in, rows * dt->k * dt->in_bytes);
	tile_write(t, j->partials, res->partials, rows * prow);
	tile_write(t, j->sup, j->state, sizeof j->state);
	for (uint32_t w = 0, first = 0; w < CHIP_WORKERS; w++) {
		uint32_t n = rows / 6 + (w < rows % 6);
		uint8_t v[VERTEX_BYTES];
		put_le32(v, j->in + first * IN_ROW_BYTES);
		put_le32(v + 4, j->partials + first * prow);
		put_le32(v + 8, j->out + first * prow);
		put_le32(v + 12, n);
		put_le32(v + 16, j->scratch + 8 * w);
		tile_write(t, j->vert + w * VERTEX_BYTES, v, sizeof v);
		first += n;
	}
	t->ctx[0].m[0] = j->sup; /* the supervisor's state pointer */
	tile_start(t, j->entry);
}

void
amp_job_check(const AmpJob *j, const Tile *t, TileAmpResult *res)
{
	const TileAmpConfig *cfg = &j->cfg;
	const Chip *c = cfg->chip;
	uint32_t rows = cfg->rows, k = j->dt->k;
	tile_read(t, j->out, res->out, rows * j->prow);

	/* Accuracy against f64, and speed. */
	double err = 0, mag = 0;
	for (uint32_t r = 0; r < rows; r++)
		for (uint32_t m = 0; m < OUT_COLS; m++) {
			double ref =
			    get_value(cfg, res->partials, r * OUT_COLS + m);
			for (uint32_t i = 0; i < k; i++)
				ref +=
				    j->xin[r * k + i] * j->xw[i * OUT_COLS + m];
			double got = get_value(cfg, res->out, r * OUT_COLS + m);
			err = fmax(err, fabs(got - ref));
			mag = fmax(mag, fabs(ref));
		}
	res->max_rel_err = mag > 0 ? err / mag : err;
	res->cycles = t->cycle;
	res->macs = (uint64_t)rows * k * OUT_COLS;
	res->macs_per_cycle = (double)res->macs / (double)t->cycle;
	res->peak_macs_per_cycle =
	    chip_peak_macs(c, amp_dtype_type(cfg->dtype));
}

uint32_t
amp_job_out(const AmpJob *j, uint32_t *bytes)
{
	*bytes = j->cfg.rows * j->prow;
	return j->out;
}

void
amp_job_free(AmpJob *j)
{
	if (!j)
		return;
	img_free(&j->img);
	free(j->xin);
	free(j->xw);
	free(j);
}

static int
tile_amp_once(const TileAmpConfig *cfg, TileAmpResult *res, Diag *d)
{
	AmpJob *j;
	int rc = amp_job_new(cfg, &j, res, d);
	if (rc)
		return rc;
	Tile *t = tile_new(cfg->chip, 0);
	amp_job_load(j, res, t);
	uint64_t limit = cfg->max_cycles ? cfg->max_cycles : BENCH_MAX_CYCLES;
	RunStatus st = tile_run(t, limit);
	if (st != RUN_DONE) {
		char buf[600];
		if (st == RUN_FAULT)
			tile_format_fault(t, buf, sizeof buf);
		else
			snprintf(buf, sizeof buf,
			         "stopped at the limit of %llu cycles "
			         "(--max-cycles, default 10^9)",
			         (unsigned long long)limit);
		rc = diag_set(d, IPU_EFAULT, "kernels/amp.S", 0, 0, "%s", buf);
		bench_tile_amp_free(res);
	} else {
		amp_job_check(j, t, res);
	}
	tile_free(t);
	amp_job_free(j);
	return rc;
}

static int
tile_amp_at(const void *cfg, const Chip *at, uint64_t *cycles,
            uint64_t *predicted, Diag *d)
{
	TileAmpConfig c = *(const TileAmpConfig *)cfg;
	c.chip = at;
	TileAmpResult x;
	int rc = tile_amp_once(&c, &x, d);
	*cycles = x.cycles;
	*predicted = 0;
	bench_tile_amp_free(&x);
	return rc;
}

int
bench_tile_amp(const TileAmpConfig *cfg, TileAmpResult *res, Diag *d)
{
	int rc = tile_amp_once(cfg, res, d);
	if (!rc && cfg->range)
		rc = bench_range(tile_amp_at, cfg,
		                 cfg->chip ? cfg->chip : chip_default(),
		                 &res->range, d);
	if (rc)
		bench_tile_amp_free(res);
	return rc;
}

/* c with every timing rule at bound b. */
static const Chip *
bench_bound_chip(const Chip *c, TimingBound b)
{
	Timing t;
	timing_profile(&t, b);
	return chip_timed(c, &t);
}

int
bench_range(BenchOnce once, const void *cfg, const Chip *c, BenchRange *r,
            Diag *d)
{
	int rc = once(cfg, bench_bound_chip(c, TIMING_FAST), &r->fast,
	              &r->predicted_fast, d);
	if (!rc)
		rc = once(cfg, bench_bound_chip(c, TIMING_SLOW), &r->slow,
		          &r->predicted_slow, d);
	r->done = !rc;
	return rc;
}

void
bench_tile_amp_free(TileAmpResult *res)
{
	free(res->in);
	free(res->w);
	free(res->partials);
	free(res->out);
	res->in = res->w = res->partials = res->out = NULL;
}

/*
 * gemm.c - the GEMM benchmark: one matrix product C = A x B taken through
 * the whole toolchain the way a user would, so that its numbers are the
 * toolchain's. The graph is built with the builder API (inputs a [m, k]
 * and b [k, n], c = matmul a b, output c), compiled by compile_graph
 * (timed), loaded through the runtime API onto an emulated device with
 * exactly the tiles the plan uses, fed random inputs and run. C is then
 * checked against OpenBLAS's cblas_dgemm computed in f64 from the same
 * rounded input values; above GEMM_REF_FULL_MACS only GEMM_REF_ROWS rows
 * spread over m are checked (all of n, all of k), and the result says so.
 *
 * Inputs: uniform in [-1, 1), rounded to the dtype with fp.h (f8: F143 or
 * F152 with the configured power-of-two scale on both A and B).
 * C is f32 for f32 and f16 for f16 and f8. docs/bench-gemm.md has the
 * commands and a sweep of shapes.
 */
#include "bench.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ipu/runtime.h>

#include "../compile/compile.h"
#include "../runner/runner.h"
#include "../util/fp.h"

/* The element type of operand `which` (0: A, 1: B). */
static ElemType
graph_elem(const GemmBenchConfig *cfg, int which)
{
	if (cfg->dtype != AMP_F8)
		return (ElemType){amp_dtype_type(cfg->dtype), 0};
	return (ElemType){cfg->fp8_f152[which] ? DT_F8_F152 : DT_F8_F143,
	                  cfg->fp8_scale};
}

static Graph *
gemm_graph(const GemmBenchConfig *cfg, Diag *d)
{
	Graph *g = graph_new();
	Shape sa = {2, {cfg->m, cfg->k}}, sb = {2, {cfg->k, cfg->n}};
	int32_t a = graph_input(g, "a", graph_elem(cfg, 0), &sa, d);
	int32_t b =
	    a < 0 ? -1 : graph_input(g, "b", graph_elem(cfg, 1), &sb, d);
	int32_t c = b < 0 ? -1 : graph_matmul(g, a, b, 0, "c", d);
	if (c < 0 || graph_mark_output(g, c, d)) {
		graph_free(g);
		return NULL;
	}
	return g;
}

/* n random elements of the input dtype: bit patterns into bits, the
 * values they stand for into val. */
static void
make_input(const GemmBenchConfig *cfg, int which, uint64_t *s, size_t n,
           void *bits, double *val)
{
	AmpDtype t = cfg->dtype;
	Fp8Format f8 = cfg->fp8_f152[which] ? FP8_F152 : FP8_F143;
	unsigned fl = 0;
	for (size_t i = 0; i < n; i++) {
		double x = bench_uniform(s);
		if (t == AMP_F32) {
			uint32_t f = fp_f64_to_f32(x, FP_RNE, 0, &fl);
			((uint32_t *)bits)[i] = f;
			val[i] = fp_f32_float(f);
		} else if (t == AMP_F16) {
			uint16_t h =
			    fp_f64_to_f16(x, FP_RNE, 0, FP_OV_IEEE, &fl);
			((uint16_t *)bits)[i] = h;
			val[i] = fp_f16_to_f64(h);
		} else {
			uint8_t q =
			    fp_f64_to_f8(x, f8, cfg->fp8_scale, FP_OV_SAT, &fl);
			((uint8_t *)bits)[i] = q;
			val[i] = fp_f8_to_f64(q, f8, cfg->fp8_scale);
		}
	}
}

/* The f64 reference for `rows` rows of C (row r is C's row at[r]) and the
 * largest error of the device's C over them, relative to max |ref|. */
static double
check(const GemmBenchConfig *cfg, const double *va, const double *vb,
      const void *c, const uint32_t *at, uint32_t rows)
{
	size_t n = cfg->n, k = cfg->k;
	double *sa = xmalloc(rows * k * sizeof *sa);
	double *ref = xcalloc(rows * n, sizeof *ref);
	for (uint32_t r = 0; r < rows; r++)
		memcpy(sa + r * k, va + at[r] * k, k * sizeof *sa);
	openblas_set_num_threads(cfg->threads > 0 ? cfg->threads : 1);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows,
	            (int)n, (int)k, 1.0, sa, (int)k, vb, (int)n, 0.0, ref,
	            (int)n);
	double max_ref = 0, max_err = 0;
	for (uint32_t r = 0; r < rows; r++)
		for (size_t j = 0; j < n; j++) {
			size_t i = (size_t)at[r] * n + j;
			double got =
			    cfg->dtype == AMP_F32
			        ? fp_f32_float(((const uint32_t *)c)[i])
			        : fp_f16_to_f64(((const uint16_t *)c)[i]);
			double e = fabs(got - ref[r * n + j]);
			if (!(e <= max_err)) /* a NaN is the worst error */
				max_err = isnan(e) ? INFINITY : e;
			if (fabs(ref[r * n + j]) > max_ref)
				max_ref = fabs(ref[r * n + j]);
		}
	free(sa);
	free(ref);
	return max_ref > 0 ? max_err / max_ref : max_err;
}

/* Load the package, write a and b, run, read c; fills the run's fields. */
static int
run(const GemmBenchConfig *cfg, Package *pk, const void *a, const void *b,
    void *c, GemmBenchResult *res, Diag *d)
{
	size_t in_es = cfg->dtype == AMP_F32   ? 4
	               : cfg->dtype == AMP_F16 ? 2
	                                       : 1;
	size_t out_es = cfg->dtype == AMP_F32 ? 4 : 2;
	size_t m = cfg->m, n = cfg->n, k = cfg->k;
	ipu_device *dev;
	int r = runner_open_on(cfg->device, cfg->chip, pk, cfg->threads, NULL,
	                       &dev, d);
	if (r)
		return r;
	ipu_error err;
	const char *what = "write";
	if (ipu_write_tensor(dev, "a", a, m * k * in_es, &err) ||
	    ipu_write_tensor(dev, "b", b, k * n * in_es, &err))
		goto fail;
	r = runner_run(dev, cfg->max_cycles, pk->total_cycles, NULL,
	               &res->cycles, &res->host_seconds, d);
	what = "read";
	if (!r && ipu_read_tensor(dev, "c", c, m * n * out_es, &err))
		goto fail;
	ipu_close(dev);
	return r;
fail:
	ipu_close(dev);
	return diag_set(d, IPU_EFAULT, NULL, 0, 0, "%s: %s", what, err.msg);
}

static int
gemm_once(const GemmBenchConfig *cfg_in, GemmBenchResult *res, Diag *d)
{
	memset(res, 0, sizeof *res);
	GemmBenchConfig cfg = *cfg_in;
	if (!cfg.chip)
		cfg.chip = chip_default();
	const Chip *chip = cfg.chip;
	if (!cfg.m || !cfg.n || !cfg.k)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "m, n and k must be at least 1 "
		                "(got %u x %u x %u)",
		                cfg.m, cfg.n, cfg.k);
	if (cfg.tiles > chip->tiles)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%u tiles asked for, the %s has %u", cfg.tiles,
		                chip->name, chip->tiles);
	if (cfg.dtype == AMP_F8 &&
	    (chip->arch != ARCH_IPU21 || !chip_peak_macs(chip, DT_F8_F143)))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "f8 needs an ipu21 chip (c600); %s is %s",
		                chip->name, chip->arch_name);
	Graph *g = gemm_graph(&cfg, d);
	if (!g)
		return IPU_EINVAL;
	CompileOptions co = {.chip = chip,
	                     .tiles = cfg.tiles,
	                     .no_gemm_overlap = cfg.no_overlap};
	Package *pk;
	CompileReport rep;
	int r = compile_graph(g, &co, &pk, &rep, d);
	graph_free(g);
	if (r) {
		compile_report_free(&rep);
		return r;
	}
	res->tiles = pk->tiles;
	res->macs = (uint64_t)cfg.m * cfg.n * cfg.k;
	res->predicted_cycles = rep.predicted_cycles;
	res->compile_ms = rep.compile_ms;
	res->peak_tile_bytes = rep.peak_tile_bytes;
	snprintf(res->plan, sizeof res->plan, "%s", rep.plan);
	compile_report_free(&rep);

	size_t m = cfg.m, n = cfg.n, k = cfg.k;
	size_t in_es = cfg.dtype == AMP_F32 ? 4 : cfg.dtype == AMP_F16 ? 2 : 1;
	uint8_t *a = xmalloc(m * k * in_es), *b = xmalloc(k * n * in_es);
	uint8_t *c = xmalloc(m * n * (cfg.dtype == AMP_F32 ? 4 : 2));
	double *va = xmalloc(m * k * sizeof *va),
	       *vb = xmalloc(k * n * sizeof *vb);
	uint64_t s = cfg.seed;
	make_input(&cfg, 0, &s, m * k, a, va);
	make_input(&cfg, 1, &s, k * n, b, vb);
	r = run(&cfg, pk, a, b, c, res, d); /* takes pk */
	if (!r) {
		uint64_t full =
		    cfg.ref_full_macs ? cfg.ref_full_macs : GEMM_REF_FULL_MACS;
		uint32_t rows = res->macs > full && cfg.m > GEMM_REF_ROWS
		                    ? GEMM_REF_ROWS
		                    : cfg.m;
		uint32_t *at = xmalloc(rows * sizeof *at);
		for (uint32_t i = 0; i < rows; i++) /* spread, first and last */
			at[i] = rows == cfg.m
			            ? i
			            : (uint32_t)((uint64_t)i * (cfg.m - 1) /
			                         (rows - 1));
		res->ref_rows = rows;
		res->max_rel_err = check(&cfg, va, vb, c, at, rows);
		free(at);
		res->pred_error =
		    res->cycles
		        ? (double)res->predicted_cycles / res->cycles - 1
		        : 0;
		res->mfu =
		    res->cycles
		        ? (double)res->macs /
		              ((double)res->cycles * chip->tiles *
		               chip_peak_macs(chip, amp_dtype_type(cfg.dtype)))
		        : 0;
	}
	free(a);
	free(b);
	free(c);
	free(va);
	free(vb);
	return r;
}

static int
gemm_at(const void *cfg, const Chip *at, uint64_t *cycles, uint64_t *predicted,
        Diag *d)
{
	GemmBenchConfig c = *(const GemmBenchConfig *)cfg;
	c.chip = at;
	c.range = 0;
	GemmBenchResult *x = xmalloc(sizeof *x);
	int r = gemm_once(&c, x, d);
	*cycles = x->cycles;
	*predicted = x->predicted_cycles;
	free(x);
	return r;
}

int
bench_gemm(const GemmBenchConfig *cfg, GemmBenchResult *res, Diag *d)
{
	int r = gemm_once(cfg, res, d);
	if (!r && cfg->range)
		r = bench_range(gemm_at, cfg,
		                cfg->chip ? cfg->chip : chip_default(),
		                &res->range, d);
	return r;
}

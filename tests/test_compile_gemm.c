/*
 * test_compile_gemm.c - the compiler end to end: a matmul graph compiled to
 * a package, loaded through the runtime API, run on the chip model, and
 * every element of C checked against a long-double reference computed from
 * the same inputs; the cost model's prediction against the emulator.
 *
 * Error bound: the GEMM kernel accumulates each K-panel in f32 and rounds
 * the running C to its format after every panel (docs/kernel-gemm.md), so
 * |C - ref| <= panels x (half an ulp of |C| at C's precision) + f32 terms.
 */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ipu/runtime.h>

#include "../src/compile/compile.h"
#include "../src/util/fp.h"

static uint64_t rng = 88172645463325252ull;

static double
uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) * 0x1p-53 * 2 - 1;
}

/* c = a x b, or with flags (GRAPH_TRANSPOSE_A/B) a^T for a [k, m] and
 * b^T for b [n, k]. */
static Graph *
gemm_graph(DType dt, uint32_t m, uint32_t n, uint32_t k, unsigned flags)
{
	Graph *g = graph_new();
	Diag d;
	ElemType e = {dt, 0};
	Shape sa = {2, {m, k}}, sb = {2, {k, n}};
	if (flags & GRAPH_TRANSPOSE_A)
		sa = (Shape){2, {k, m}};
	if (flags & GRAPH_TRANSPOSE_B)
		sb = (Shape){2, {n, k}};
	int32_t a = graph_input(g, "a", e, &sa, &d);
	int32_t b = graph_input(g, "b", e, &sb, &d);
	int32_t c = graph_matmul(g, a, b, flags, "c", &d);
	assert_true(a >= 0 && b >= 0 && c >= 0);
	assert_int_equal(graph_mark_output(g, c, &d), 0);
	return g;
}

/* Compile, run, check; returns emulated cycles, *pred the prediction. */
static uint64_t
run_gemm(DType dt, uint32_t m, uint32_t n, uint32_t k, unsigned flags,
         uint32_t tiles, uint64_t *pred)
{
	Graph *g = gemm_graph(dt, m, n, k, flags);
	CompileOptions o = {.chip = chip_default(), .tiles = tiles};
	Package *pk;
	CompileReport rep;
	Diag d;
	if (compile_graph(g, &o, &pk, &rep, &d)) {
		char buf[1024];
		diag_format(&d, buf, sizeof buf);
		fail_msg("compile: %s", buf);
	}
	uint8_t *bytes;
	size_t len;
	assert_int_equal(pkg_write(pk, &bytes, &len, &d), 0);
	char name[64];
	snprintf(name, sizeof name, "sim:c600:tiles=%u:threads=2", tiles);
	ipu_error err;
	ipu_device *dev = ipu_open(name, &err);
	assert_non_null(dev);
	if (ipu_load_package(dev, bytes, len, &err))
		fail_msg("load: %s", err.msg);
	/* inputs as f16 / f32 bit patterns, with their exact values: va and
	 * vb hold A [m, k] and B [k, n] as used, a and b the tensors (their
	 * transposes if asked) */
	size_t es = dt == DT_F32 ? 4 : 2;
	uint8_t *a = xcalloc((size_t)m * k, es),
	        *b = xcalloc((size_t)k * n, es);
	long double *va = xcalloc((size_t)m * k, sizeof *va);
	long double *vb = xcalloc((size_t)k * n, sizeof *vb);
	unsigned fl = 0;
	for (size_t i = 0; i < (size_t)m * k + (size_t)k * n; i++) {
		int in_a = i < (size_t)m * k;
		size_t j = in_a ? i : i - (size_t)m * k;
		long double *v = in_a ? &va[j] : &vb[j];
		size_t rows = in_a ? m : k, cols = in_a ? k : n;
		int tr = flags & (in_a ? GRAPH_TRANSPOSE_A : GRAPH_TRANSPOSE_B);
		size_t at = tr ? (j % cols) * rows + j / cols : j;
		uint8_t *dst = (in_a ? a : b) + at * es;
		if (dt == DT_F32) {
			float f = (float)uniform();
			memcpy(dst, &f, 4);
			*v = f;
		} else {
			uint16_t h = fp_f64_to_f16(uniform(), FP_RNE, 0,
			                           FP_OV_IEEE, &fl);
			memcpy(dst, &h, 2);
			*v = fp_f16_to_f64(h);
		}
	}
	if (ipu_write_tensor(dev, "a", a, (size_t)m * k * es, &err) ||
	    ipu_write_tensor(dev, "b", b, (size_t)k * n * es, &err))
		fail_msg("write: %s", err.msg);
	if (ipu_run(dev, 0, &err))
		fail_msg("run: %s", err.msg);
	uint8_t *c = xcalloc((size_t)m * n, es);
	if (ipu_read_tensor(dev, "c", c, (size_t)m * n * es, &err))
		fail_msg("read: %s", err.msg);
	uint32_t panels =
	    (k + (dt == DT_F32 ? 7 : 15)) / (dt == DT_F32 ? 8 : 16);
	long double ulp = dt == DT_F32 ? 0x1p-24L : 0x1p-11L;
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t j = 0; j < n; j++) {
			long double ref = 0, mag = 0;
			for (uint32_t q = 0; q < k; q++) {
				long double p = va[(size_t)i * k + q] *
				                vb[(size_t)q * n + j];
				ref += p;
				mag += fabsl(p);
			}
			long double got;
			if (dt == DT_F32) {
				float f;
				memcpy(&f, c + ((size_t)i * n + j) * 4, 4);
				got = f;
			} else {
				uint16_t h;
				memcpy(&h, c + ((size_t)i * n + j) * 2, 2);
				got = fp_f16_to_f64(h);
			}
			long double tol = panels * ulp * (fabsl(ref) + mag) +
			                  16 * 0x1p-24L * mag + 0x1p-24L;
			if (!(fabsl(got - ref) <= tol))
				fail_msg(
				    "%ux%ux%u: c[%u][%u] = %.8Lg, ref %.8Lg", m,
				    n, k, i, j, got, ref);
		}
	uint64_t cycles = ipu_cycles(dev);
	*pred = rep.predicted_cycles;
	ipu_close(dev);
	free(bytes);
	free(a);
	free(b);
	free(c);
	free(va);
	free(vb);
	pkg_free(pk);
	compile_report_free(&rep);
	graph_free(g);
	return cycles;
}

static void
test_shapes(void **state)
{
	(void)state;
	static const struct {
		DType dt;
		uint32_t m, n, k, tiles;
		unsigned flags;
	} cases[] = {
	    {DT_F16, 64, 64, 64, 4, 0},
	    {DT_F16, 7, 33, 40, 6, 0},
	    {DT_F16, 1, 16, 16, 1, 0},
	    {DT_F16, 100, 70, 300, 16, 0},
	    {DT_F32, 48, 40, 72, 8, 0},
	    {DT_F16, 269, 129, 100, 32, 0},
	    /* K-heavy: the planner splits K and reduces the partials */
	    {DT_F16, 24, 64, 2000, 32, 0},
	    {DT_F32, 16, 48, 900, 24, 0},
	    /* transposed operands: y = x W^T (a PyTorch linear), a^T b */
	    {DT_F16, 37, 40, 72, 8, GRAPH_TRANSPOSE_B},
	    {DT_F32, 20, 24, 50, 6, GRAPH_TRANSPOSE_A},
	    {DT_F16, 33, 17, 1000, 16, GRAPH_TRANSPOSE_A | GRAPH_TRANSPOSE_B},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint64_t pred;
		uint64_t got =
		    run_gemm(cases[i].dt, cases[i].m, cases[i].n, cases[i].k,
		             cases[i].flags, cases[i].tiles, &pred);
		print_message("gemm %ux%ux%u%s%s %s on %u tiles: %llu "
		              "cycles, predicted %llu\n",
		              cases[i].m, cases[i].n, cases[i].k,
		              cases[i].flags & GRAPH_TRANSPOSE_A ? " a^T" : "",
		              cases[i].flags & GRAPH_TRANSPOSE_B ? " b^T" : "",
		              dtype_name(cases[i].dt), cases[i].tiles,
		              (unsigned long long)got,
		              (unsigned long long)pred);
		assert_true(got > 0);
	}
}

static void
test_refusals(void **state)
{
	(void)state;
	Graph *g = graph_new();
	Diag d;
	ElemType e = {DT_F16, 0};
	Shape s = {2, {8, 8}};
	int32_t a = graph_input(g, "a", e, &s, &d);
	int32_t b = graph_add(g, a, a, "b", &d);
	graph_mark_output(g, b, &d);
	CompileOptions o = {0};
	Package *pk;
	CompileReport rep;
	assert_int_not_equal(compile_graph(g, &o, &pk, &rep, &d), 0);
	assert_non_null(strstr(d.msg, "only a graph of one matmul"));
	graph_free(g);
	/* f8 scales whose product the kernel cannot apply */
	g = graph_new();
	ElemType e8 = {DT_F8_F143, -20};
	a = graph_input(g, "a", e8, &s, &d);
	int32_t w = graph_input(g, "w", e8, &s, &d);
	int32_t c = graph_matmul(g, a, w, 0, "c", &d);
	graph_mark_output(g, c, &d);
	assert_int_not_equal(compile_graph(g, &o, &pk, &rep, &d), 0);
	assert_non_null(strstr(d.msg, "multiply to 2^-40"));
	graph_free(g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shapes),
	    cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

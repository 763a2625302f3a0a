/*
 * test_compile_gemm.c - the compiler end to end: a matmul graph compiled to
 * a package, loaded through the runtime API, run on the chip model, and
 * every element of C checked against a long-double reference computed from
 * the same inputs; the cost model's prediction against the emulator; the
 * reduction's slices of a C block.
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
#include "../src/plan/plan.h"
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

/* One case: c = a x b on at most `tiles` tiles; with flags
 * (GRAPH_TRANSPOSE_A/B) a is [k, m] and b is [n, k], used transposed; with
 * batches > 1 every tensor has a leading batch axis. */
typedef struct {
	DType dt;
	uint32_t m, n, k, tiles;
	unsigned flags;
	uint32_t batches;
} Case;

static Graph *
gemm_graph(const Case *cs)
{
	Graph *g = graph_new();
	Diag d;
	ElemType e = {cs->dt, 0};
	int ta = cs->flags & GRAPH_TRANSPOSE_A,
	    tb = cs->flags & GRAPH_TRANSPOSE_B;
	Shape sa = {3, {cs->batches, ta ? cs->k : cs->m, ta ? cs->m : cs->k}};
	Shape sb = {3, {cs->batches, tb ? cs->n : cs->k, tb ? cs->k : cs->n}};
	if (cs->batches == 1) { /* plain 2-D */
		sa = (Shape){2, {sa.dim[1], sa.dim[2]}};
		sb = (Shape){2, {sb.dim[1], sb.dim[2]}};
	}
	int32_t a = graph_input(g, "a", e, &sa, &d);
	int32_t b = graph_input(g, "b", e, &sb, &d);
	int32_t c = graph_matmul(g, a, b, cs->flags, "c", &d);
	assert_true(a >= 0 && b >= 0 && c >= 0);
	assert_int_equal(graph_mark_output(g, c, &d), 0);
	return g;
}

/* n random inputs into bits (f16 or f32) and their exact values into v;
 * the values are the operand as used (rows x cols per batch), the bits
 * its tensor (the transpose of each batch's matrix if tr). */
static void
make_operand(DType dt, uint32_t batches, size_t rows, size_t cols, int tr,
             uint8_t *bits, long double *v)
{
	size_t es = dt == DT_F32 ? 4 : 2, per = rows * cols;
	unsigned fl = 0;
	for (size_t i = 0; i < batches * per; i++) {
		size_t j = i % per, base = i - j;
		size_t at = base + (tr ? (j % cols) * rows + j / cols : j);
		if (dt == DT_F32) {
			float f = (float)uniform();
			memcpy(bits + at * es, &f, 4);
			v[i] = f;
		} else {
			uint16_t h = fp_f64_to_f16(uniform(), FP_RNE, 0,
			                           FP_OV_IEEE, &fl);
			memcpy(bits + at * es, &h, 2);
			v[i] = fp_f16_to_f64(h);
		}
	}
}

/* Compile, run, check every element of C; returns emulated cycles, *pred
 * the prediction. */
static uint64_t
run_gemm(const Case *cs, uint64_t *pred)
{
	Graph *g = gemm_graph(cs);
	CompileOptions o = {.chip = chip_default(), .tiles = cs->tiles};
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
	snprintf(name, sizeof name, "sim:c600:tiles=%u:threads=2", cs->tiles);
	ipu_error err;
	ipu_device *dev = ipu_open(name, &err);
	assert_non_null(dev);
	if (ipu_load_package(dev, bytes, len, &err))
		fail_msg("load: %s", err.msg);
	DType dt = cs->dt;
	size_t m = cs->m, n = cs->n, k = cs->k, nb = cs->batches;
	size_t es = dt == DT_F32 ? 4 : 2;
	uint8_t *a = xcalloc(nb * m * k, es), *b = xcalloc(nb * k * n, es);
	long double *va = xcalloc(nb * m * k, sizeof *va);
	long double *vb = xcalloc(nb * k * n, sizeof *vb);
	make_operand(dt, cs->batches, m, k, cs->flags & GRAPH_TRANSPOSE_A, a,
	             va);
	make_operand(dt, cs->batches, k, n, cs->flags & GRAPH_TRANSPOSE_B, b,
	             vb);
	if (ipu_write_tensor(dev, "a", a, nb * m * k * es, &err) ||
	    ipu_write_tensor(dev, "b", b, nb * k * n * es, &err))
		fail_msg("write: %s", err.msg);
	if (ipu_run(dev, 0, &err))
		fail_msg("run: %s", err.msg);
	uint8_t *c = xcalloc(nb * m * n, es);
	if (ipu_read_tensor(dev, "c", c, nb * m * n * es, &err))
		fail_msg("read: %s", err.msg);
	uint32_t panels =
	    (uint32_t)((k + (dt == DT_F32 ? 7 : 15)) / (dt == DT_F32 ? 8 : 16));
	long double ulp = dt == DT_F32 ? 0x1p-24L : 0x1p-11L;
	for (size_t bi = 0; bi < nb; bi++)
		for (size_t i = 0; i < m; i++)
			for (size_t j = 0; j < n; j++) {
				long double ref = 0, mag = 0;
				for (size_t q = 0; q < k; q++) {
					long double p =
					    va[(bi * m + i) * k + q] *
					    vb[(bi * k + q) * n + j];
					ref += p;
					mag += fabsl(p);
				}
				size_t at = (bi * m + i) * n + j;
				long double got;
				if (dt == DT_F32) {
					float f;
					memcpy(&f, c + at * 4, 4);
					got = f;
				} else {
					uint16_t h;
					memcpy(&h, c + at * 2, 2);
					got = fp_f16_to_f64(h);
				}
				long double tol =
				    panels * ulp * (fabsl(ref) + mag) +
				    16 * 0x1p-24L * mag + 0x1p-24L;
				if (!(fabsl(got - ref) <= tol))
					fail_msg(
					    "%zux%zux%zu: c[%zu][%zu][%zu] "
					    "= %.8Lg, ref %.8Lg",
					    m, n, k, bi, i, j, got, ref);
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
	enum { TA = GRAPH_TRANSPOSE_A, TB = GRAPH_TRANSPOSE_B };
	static const Case cases[] = {
	    {DT_F16, 64, 64, 64, 4, 0, 1},
	    {DT_F16, 7, 33, 40, 6, 0, 1},
	    {DT_F16, 1, 16, 16, 1, 0, 1},
	    {DT_F16, 100, 70, 300, 16, 0, 1},
	    {DT_F32, 48, 40, 72, 8, 0, 1},
	    {DT_F16, 269, 129, 100, 32, 0, 1},
	    /* K-heavy: the planner splits K and reduces the partials */
	    {DT_F16, 24, 64, 2000, 32, 0, 1},
	    {DT_F32, 16, 48, 900, 24, 0, 1},
	    /* transposed operands: y = x W^T (a PyTorch linear), a^T b */
	    {DT_F16, 37, 40, 72, 8, TB, 1},
	    {DT_F32, 20, 24, 50, 6, TA, 1},
	    {DT_F16, 33, 17, 1000, 16, TA | TB, 1},
	    /* batch axes (attention's heads), with and without K-split */
	    {DT_F16, 20, 24, 30, 8, 0, 3},
	    {DT_F16, 16, 40, 1200, 16, TB, 2},
	    /* more batches than tiles: groups side by side, the last one
	     * short */
	    {DT_F32, 24, 16, 40, 4, TA, 7},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const Case *cs = &cases[i];
		uint64_t pred;
		uint64_t got = run_gemm(cs, &pred);
		print_message("gemm %u x %ux%ux%u%s%s %s on %u tiles: %llu "
		              "cycles, predicted %llu\n",
		              cs->batches, cs->m, cs->n, cs->k,
		              cs->flags & TA ? " a^T" : "",
		              cs->flags & TB ? " b^T" : "", dtype_name(cs->dt),
		              cs->tiles, (unsigned long long)got,
		              (unsigned long long)pred);
		/* the cost model prices the program as emitted: the
		 * scheduled exchange (64-bit transfers included) and the
		 * kernel formula */
		double err = ((double)pred - (double)got) / (double)got;
		assert_true(got > 0 && err > -0.05 && err < 0.05);
	}
}

/* The reduction's slices of a C block (plan_gemm_slice) cover every row of
 * every panel exactly once, a slice of several panels takes the same rows
 * of each, and the largest slice is the smaller of the two ways to cut:
 * by panels (each panel's rows split among the groups that share it when
 * there are fewer panels than groups) or by rows of all panels. */
static void
test_slices(void **state)
{
	(void)state;
	for (uint32_t np = 1; np <= 10; np++)
		for (uint32_t rows = 1; rows <= 40; rows += 3)
			for (uint32_t pk = 2; pk <= 32; pk *= 2) {
				uint8_t seen[10][40] = {{0}};
				uint32_t largest = 0;
				for (uint32_t q = 0; q < pk; q++) {
					GemmSlice s =
					    plan_gemm_slice(np, rows, pk, q, 0);
					assert_true(s.panel + s.panels <= np);
					assert_true(s.row + s.rows <= rows);
					for (uint32_t p = s.panel;
					     p < s.panel + s.panels; p++)
						for (uint32_t r = s.row;
						     r < s.row + s.rows; r++)
							seen[p][r]++;
					if (s.rows * s.panels > largest)
						largest = s.rows * s.panels;
				}
				for (uint32_t p = 0; p < np; p++)
					for (uint32_t r = 0; r < rows; r++)
						assert_int_equal(seen[p][r], 1);
				uint32_t by_panels =
				    np >= pk ? (np + pk - 1) / pk * rows
				             : (rows + pk / np - 1) / (pk / np);
				uint32_t by_rows = (rows + pk - 1) / pk * np;
				assert_int_equal(largest, by_rows < by_panels
				                              ? by_rows
				                              : by_panels);
			}
}

static void
test_refusals(void **state)
{
	(void)state;
	Diag d;
	ElemType e = {DT_F16, 0};
	Shape s = {2, {8, 8}};
	CompileOptions o = {0};
	Package *pk;
	CompileReport rep;
	int32_t a, w;
	/* more batches than the compiler takes */
	Graph *g = graph_new();
	Shape s3 = {3, {5000, 2, 16}};
	a = graph_input(g, "a", e, &s3, &d);
	int32_t c3 = graph_matmul(g, a, a, GRAPH_TRANSPOSE_B, "c", &d);
	graph_mark_output(g, c3, &d);
	assert_int_not_equal(compile_graph(g, &o, &pk, &rep, &d), 0);
	assert_non_null(strstr(d.msg, "5000 batches; at most 4096"));
	graph_free(g);
	/* f8 scales whose product the kernel cannot apply */
	g = graph_new();
	ElemType e8 = {DT_F8_F143, -20};
	a = graph_input(g, "a", e8, &s, &d);
	w = graph_input(g, "w", e8, &s, &d);
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
	    cmocka_unit_test(test_slices),
	    cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

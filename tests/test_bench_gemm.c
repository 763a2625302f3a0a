/*
 * test_bench_gemm.c - the GEMM benchmark (src/bench/gemm.c) on small
 * shapes of every dtype: each result field is present and agrees with the
 * others and with values derived here (MACs from the shape, MFU and the
 * prediction error recomputed from the cycles, the reference rows), the
 * error against the f64 reference is within the kernel's rounding, and the
 * cost model's prediction is within 15% of the emulated cycles. Also the
 * sampled reference of large problems (forced by a low threshold) and the
 * refusals (f8 on an ipu2 chip, an empty shape, more tiles than the chip).
 */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/bench/bench.h"

static GemmBenchResult
run_ok(const GemmBenchConfig *cfg)
{
	GemmBenchResult r;
	Diag d;
	diag_clear(&d);
	if (bench_gemm(cfg, &r, &d)) {
		char buf[1024];
		diag_format(&d, buf, sizeof buf);
		fail_msg("gemm %ux%ux%u: %s", cfg->m, cfg->n, cfg->k, buf);
	}
	return r;
}

static void
test_shapes(void **state)
{
	(void)state;
	static const struct {
		AmpDtype dt;
		uint32_t m, n, k, tiles;
		int f152, scale; /* f8 only: f152 bit 0 for A, bit 1 for B */
	} cases[] = {
	    {AMP_F16, 64, 48, 40, 8, 0, 0},
	    {AMP_F32, 33, 17, 70, 4, 0, 0},
	    {AMP_F8, 40, 24, 100, 6, 0, 0},
	    {AMP_F16, 1, 16, 16, 1, 0, 0},
	    {AMP_F16, 7, 70, 33, 12, 0, 0},
	    {AMP_F32, 96, 64, 128, 16, 0, 0},
	    {AMP_F8, 40, 24, 100, 6, 3, -3},
	    {AMP_F8, 24, 32, 64, 4, 0, 4},
	    /* mixed formats: F152 x F143, F143 x F152 */
	    {AMP_F8, 33, 20, 70, 6, 1, -2},
	    {AMP_F8, 16, 48, 40, 4, 2, 0},
	};
	const Chip *c = chip_default();
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		GemmBenchConfig cfg = {
		    .chip = c,
		    .dtype = cases[i].dt,
		    .m = cases[i].m,
		    .n = cases[i].n,
		    .k = cases[i].k,
		    .tiles = cases[i].tiles,
		    .threads = 2,
		    .seed = 7,
		    .fp8_f152 = {cases[i].f152 & 1, cases[i].f152 >> 1},
		    .fp8_scale = cases[i].scale};
		GemmBenchResult r = run_ok(&cfg);
		print_message("gemm %ux%ux%u %s: %u tiles, %llu cycles, "
		              "predicted %llu, err %.2e\n",
		              cfg.m, cfg.n, cfg.k, amp_dtype_name(cfg.dtype),
		              r.tiles, (unsigned long long)r.cycles,
		              (unsigned long long)r.predicted_cycles,
		              r.max_rel_err);
		uint64_t macs = (uint64_t)cfg.m * cfg.n * cfg.k;
		assert_true(r.macs == macs);
		assert_true(r.tiles >= 1 && r.tiles <= cfg.tiles);
		assert_int_equal(r.ref_rows, cfg.m);
		/* the chip's peak bounds the rate of the tiles used */
		uint32_t peak = cfg.dtype == AMP_F32   ? 16
		                : cfg.dtype == AMP_F16 ? 64
		                                       : 128;
		assert_int_equal(chip_peak_macs(c, amp_dtype_type(cfg.dtype)),
		                 peak);
		assert_true(r.cycles * r.tiles * peak >= macs);
		double mfu = (double)macs / ((double)r.cycles * 1472 * peak);
		assert_true(fabs(r.mfu - mfu) <= 1e-12 * mfu);
		double pe = (double)r.predicted_cycles / (double)r.cycles - 1;
		assert_true(fabs(r.pred_error - pe) < 1e-12);
		assert_true(fabs(r.pred_error) <= 0.15);
		assert_true(r.max_rel_err <
		            (cfg.dtype == AMP_F32 ? 1e-5 : 1e-2));
		assert_true(r.compile_ms > 0);
		assert_true(r.peak_tile_bytes > 0 &&
		            r.peak_tile_bytes <= c->mem_end - c->mem_base);
		assert_true(r.host_seconds > 0);
		assert_non_null(strstr(r.plan, "gemm"));
	}
}

/* The overlapped superstep (on by default, GemmBenchConfig.no_overlap;
 * docs/bench-gemm.md):
 * small GEMMs of many supersteps in each dtype, whose plans overlap each
 * superstep's exchange with the one before's panels: the results against
 * the bench's f64 reference on the host, the emulated cycles at most the
 * lowering's prediction and fewer than the same GEMM's without the
 * overlap (planned and run the same way). The prediction takes block 0
 * at the worst of the six phases the opening sync may release it at
 * (gemm_windows' lead), so it is above by at most 5 cycles an overlapped
 * superstep (every superstep but the first); the last, plain multiply and
 * the partials' add are priced at one entry phase (mod 6) of their calls,
 * which the run's start cycle sets: up to 5 cycles above each (2 and 4
 * in the f8 case; docs/bench-siglip.md, b1rows). Before the setup's CSR writes
 * were priced at their hold (gemm_overlap_setup), it was 10 to 32 cycles a
 * superstep below. */
static void
test_overlap(void **state)
{
	(void)state;
	static const struct {
		AmpDtype dt;
		uint32_t m, n, k, tiles;
	} cases[] = {
	    {AMP_F16, 128, 128, 512, 8},
	    {AMP_F32, 64, 64, 512, 4},
	    {AMP_F8, 128, 128, 1024, 8},
	};
	const Chip *c = chip_default();
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		GemmBenchConfig cfg = {.chip = c,
		                       .dtype = cases[i].dt,
		                       .m = cases[i].m,
		                       .n = cases[i].n,
		                       .k = cases[i].k,
		                       .tiles = cases[i].tiles,
		                       .threads = 2,
		                       .seed = 11};
		GemmBenchResult r = run_ok(&cfg);
		cfg.no_overlap = 1;
		GemmBenchResult base = run_ok(&cfg);
		print_message("gemm %ux%ux%u %s overlapped: %llu cycles, "
		              "predicted %llu, err %.2e; without: %llu\n",
		              cfg.m, cfg.n, cfg.k, amp_dtype_name(cfg.dtype),
		              (unsigned long long)r.cycles,
		              (unsigned long long)r.predicted_cycles,
		              r.max_rel_err, (unsigned long long)base.cycles);
		assert_non_null(strstr(r.plan, "overlapped supersteps"));
		assert_null(strstr(base.plan, "overlapped"));
		assert_int_equal(r.ref_rows, cfg.m);
		assert_true(r.max_rel_err <
		            (cfg.dtype == AMP_F32 ? 1e-6 : 3e-3));
		const char *at = strstr(r.plan, " supersteps of K");
		assert_non_null(at);
		while (at > r.plan && at[-1] >= '0' && at[-1] <= '9')
			at--;
		uint64_t beside = strtoull(at, NULL, 10) - 1;
		assert_true(beside >= 1);
		assert_true(r.predicted_cycles >= r.cycles);
		assert_true(r.predicted_cycles - r.cycles <= 5 * (beside + 2));
		assert_true(r.cycles < base.cycles);
	}
}

/* A problem "too large" for a full check: 64 rows spread over m, the first
 * and the last among them; the result the same as the full check's rows
 * allow (the error can only shrink over fewer rows). */
static void
test_sampled_reference(void **state)
{
	(void)state;
	GemmBenchConfig cfg = {.dtype = AMP_F16,
	                       .m = 150,
	                       .n = 20,
	                       .k = 24,
	                       .tiles = 8,
	                       .threads = 2,
	                       .seed = 3};
	GemmBenchResult full = run_ok(&cfg);
	cfg.ref_full_macs = 1000;
	GemmBenchResult part = run_ok(&cfg);
	assert_int_equal(full.ref_rows, 150);
	assert_int_equal(part.ref_rows, GEMM_REF_ROWS);
	assert_true(part.cycles == full.cycles);
	assert_true(part.max_rel_err <= full.max_rel_err * 1.0001 + 1e-300);
	assert_true(part.max_rel_err < 1e-2);
}

/* The range: the same GEMM again with every timing rule at its fast and
 * at its slow bound, each the cycles of a run made at that profile, in
 * order, and each bound run checked like the nominal one. */
static void
test_timing_range(void **state)
{
	(void)state;
	GemmBenchConfig cfg = {.dtype = AMP_F16,
	                       .m = 40,
	                       .n = 48,
	                       .k = 200,
	                       .tiles = 8,
	                       .threads = 2,
	                       .seed = 5,
	                       .range = 1};
	GemmBenchResult r = run_ok(&cfg);
	assert_true(r.range.done);
	assert_true(r.range.fast < r.cycles && r.cycles < r.range.slow);
	for (int b = TIMING_FAST; b <= TIMING_SLOW; b++) {
		GemmBenchConfig at = cfg;
		at.range = 0;
		at.chip = profile_chip((TimingBound)b);
		GemmBenchResult x = run_ok(&at);
		assert_false(x.range.done);
		assert_int_equal(x.cycles, b == TIMING_FAST ? r.range.fast
		                                            : r.range.slow);
		assert_int_equal(x.predicted_cycles,
		                 b == TIMING_FAST ? r.range.predicted_fast
		                                  : r.range.predicted_slow);
	}
}

static void
test_refusals(void **state)
{
	(void)state;
	GemmBenchConfig cfg = {.chip = chip_by_name("gc200"),
	                       .dtype = AMP_F8,
	                       .m = 16,
	                       .n = 16,
	                       .k = 16,
	                       .threads = 1};
	GemmBenchResult r;
	Diag d;
	assert_int_not_equal(bench_gemm(&cfg, &r, &d), 0);
	assert_non_null(strstr(d.msg, "ipu21"));
	cfg.chip = NULL;
	cfg.dtype = AMP_F16;
	cfg.k = 0;
	assert_int_not_equal(bench_gemm(&cfg, &r, &d), 0);
	assert_non_null(strstr(d.msg, "at least 1"));
	cfg.k = 16;
	cfg.tiles = 5000;
	assert_int_not_equal(bench_gemm(&cfg, &r, &d), 0);
	assert_non_null(strstr(d.msg, "5000 tiles"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shapes),
	    cmocka_unit_test(test_sampled_reference),
	    cmocka_unit_test(test_overlap),
	    cmocka_unit_test(test_timing_range),
	    cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

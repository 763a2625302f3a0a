/*
 * test_kernel_amp.c - kernels/amp.S computes out = partials + in x W on one
 * tile for f16, f8 and f32 and several row counts (including counts that
 * leave some of the six workers with no rows, or with unequal shares).
 *
 * The reference decodes the bench's bit patterns with decoders written here
 * (not util/fp.c), sums in long double, and allows the rounding error the
 * AMP model permits: f32 accumulation per instruction and one final
 * rounding to the output format.
 */
#include "support.h"

#include <math.h>
#include <string.h>

#include "../src/bench/bench.h"

static long double
f16_value(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	long double v = e ? ldexpl(1024 + m, e - 25) : ldexpl(m, -24);
	return h & 0x8000 ? -v : v;
}

/* F143: 1 sign, 4 exponent (bias 8), 3 mantissa bits, no -0, no inf. */
static long double
f143_value(uint8_t q, int scale)
{
	int e = (q >> 3) & 0xf, m = q & 7;
	long double v = e ? ldexpl(8 + m, e - 8 - 3) : ldexpl(m, -7 - 3);
	return ldexpl(q & 0x80 ? -v : v, scale);
}

static long double
f32_value(uint32_t b)
{
	float f;
	memcpy(&f, &b, 4);
	return f;
}

static long double
elem(const TileAmpConfig *cfg, const void *arr, int io, uint32_t i)
{
	if (cfg->dtype == AMP_F32)
		return f32_value(((const uint32_t *)arr)[i]);
	if (cfg->dtype == AMP_F8 && io)
		return f143_value(((const uint8_t *)arr)[i], cfg->fp8_scale);
	return f16_value(((const uint16_t *)arr)[i]);
}

static void
check(AmpDtype dt, uint32_t rows, const Chip *chip)
{
	TileAmpConfig cfg = {.chip = chip,
	                     .dtype = dt,
	                     .rows = rows,
	                     .seed = 7 + rows,
	                     .fp8_scale = -3};
	TileAmpResult r;
	Diag d;
	diag_clear(&d);
	if (bench_tile_amp(&cfg, &r, &d))
		fail_msg("%s rows %u: %s", amp_dtype_name(dt), rows, d.msg);
	/* output rounding (2^-11 for f16, 2^-24 for f32) and f32 sums */
	long double out_ulp = dt == AMP_F32 ? 0x1p-24L : 0x1p-11L;
	for (uint32_t row = 0; row < rows; row++)
		for (uint32_t m = 0; m < 16; m++) {
			long double ref =
			    elem(&cfg, r.partials, 0, row * 16 + m);
			long double mag = fabsl(ref);
			for (uint32_t k = 0; k < r.k; k++) {
				long double p =
				    elem(&cfg, r.in, 1, row * r.k + k) *
				    elem(&cfg, r.w, 1, k * 16 + m);
				ref += p;
				mag += fabsl(p);
			}
			long double got = elem(&cfg, r.out, 0, row * 16 + m);
			long double tol = out_ulp * fabsl(ref) +
			                  16 * 0x1p-24L * mag + 0x1p-24L;
			if (!(fabsl(got - ref) <= tol))
				fail_msg("%s rows %u: out[%u][%u] = %.9Lg, "
				         "reference %.9Lg",
				         amp_dtype_name(dt), rows, row, m, got,
				         ref);
		}
	assert_true(r.cycles > 0);
	assert_int_equal(r.macs, (uint64_t)rows * r.k * 16);
	bench_tile_amp_free(&r);
}

static const uint32_t row_counts[] = {1, 5, 6, 7, 13, 64, 301};

static void
test_f16(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof row_counts / sizeof row_counts[0]; i++)
		check(AMP_F16, row_counts[i], chip_default());
	check(AMP_F16, 50, chip_by_name("gc200"));
}

static void
test_f32(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof row_counts / sizeof row_counts[0]; i++)
		check(AMP_F32, row_counts[i], chip_default());
}

static void
test_f8(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof row_counts / sizeof row_counts[0]; i++)
		check(AMP_F8, row_counts[i], chip_default());
}

static void
test_bad_configs(void **state)
{
	(void)state;
	TileAmpConfig cfg = {
	    .chip = chip_by_name("gc200"), .dtype = AMP_F8, .rows = 8};
	TileAmpResult r;
	Diag d;
	assert_int_not_equal(bench_tile_amp(&cfg, &r, &d), 0);
	assert_non_null(strstr(d.msg, "ipu21"));
	cfg = (TileAmpConfig){
	    .chip = chip_default(), .dtype = AMP_F16, .rows = 100000};
	assert_int_equal(bench_tile_amp(&cfg, &r, &d), IPU_ERANGE);
	assert_non_null(strstr(d.msg, "do not fit"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_f16),
	    cmocka_unit_test(test_f32),
	    cmocka_unit_test(test_f8),
	    cmocka_unit_test(test_bad_configs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

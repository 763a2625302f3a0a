/*
 * test_fp.c - the number-format library (src/util/fp.c) against
 * independent references:
 *   - numpy (Debian's /usr/bin/python3), run from the test, for f16 -> f32
 *     of all 65,536 halves and f32 -> f16 (round to nearest even) of a
 *     sweep of f32 values dense around every f16 value and midpoint;
 *   - a neighbour search over the sorted f16 / FP8 values for the
 *     directed rounding modes and for FP8 encoding;
 *   - FP8 values derived by hand from the format definitions (model.md 7,
 *     isa.md 6: 7.0 <-> F143 0x56, 8.0 <-> 0x58).
 * The numpy cases are skipped when numpy is not installed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/util/fp.h"

/* Positive finite f16 values in increasing order: patterns 0..0x7bff. */
static double
h_val(unsigned p)
{
	/* Written from the definition, independent of fp.c. */
	unsigned e = p >> 10, m = p & 0x3ff;
	return e ? ldexp(1.0 + m / 1024.0, (int)e - 15) : m * ldexp(1.0, -24);
}

/* Run numpy: in_dtype values from `in` (n raw items of in_size bytes),
 * written back as out_dtype into `out`. Returns 0 if numpy is missing. */
static int
numpy_convert(const void *in, size_t n, size_t in_size, const char *in_dtype,
              void *out, size_t out_size, const char *out_dtype)
{
	if (access("/usr/bin/python3", X_OK) != 0)
		return 0;
	char inpath[] = "/tmp/test_fp_inXXXXXX";
	char outpath[] = "/tmp/test_fp_outXXXXXX";
	int fi = mkstemp(inpath), fo = mkstemp(outpath);
	assert_true(fi >= 0 && fo >= 0);
	FILE *f = fdopen(fi, "wb");
	assert_int_equal(fwrite(in, in_size, n, f), n);
	fclose(f);
	close(fo);
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
	         "/usr/bin/python3 -c \"import numpy as np, sys; "
	         "a = np.fromfile('%s', dtype=np.%s); "
	         "np.seterr(all='ignore'); "
	         "a.astype(np.%s).tofile('%s')\" 2>/dev/null",
	         inpath, in_dtype, out_dtype, outpath);
	int rc = system(cmd);
	int ok = 0;
	if (rc == 0) {
		f = fopen(outpath, "rb");
		ok = f && fread(out, out_size, n, f) == n;
		if (f)
			fclose(f);
	}
	unlink(inpath);
	unlink(outpath);
	return ok;
}

static void
test_f16_to_f32_all(void **state)
{
	(void)state;
	uint16_t *h = malloc(65536 * 2);
	uint32_t *ref = malloc(65536 * 4);
	for (unsigned i = 0; i < 65536; i++)
		h[i] = (uint16_t)i;
	if (!numpy_convert(h, 65536, 2, "float16", ref, 4, "float32")) {
		free(h);
		free(ref);
		skip();
	}
	for (unsigned i = 0; i < 65536; i++) {
		unsigned fl = 0;
		uint32_t got = fp_f16_to_f32((uint16_t)i, &fl);
		if (fp_f16_isnan((uint16_t)i)) {
			assert_int_equal(got, FP32_QNAN);
			assert_int_equal(
			    fl, fp_f16_issnan((uint16_t)i) ? FP_FLAG_INV : 0);
		} else {
			if (got != ref[i])
				fail_msg("f16 0x%04x: got 0x%08x numpy 0x%08x",
				         i, got, ref[i]);
			assert_int_equal(fl, 0);
			/* and the double path agrees with the definition */
			double d = fp_f16_to_f64((uint16_t)i);
			if ((i & 0x7fff) < 0x7c00)
				assert_true(d == ((i & 0x8000) ? -1 : 1) *
				                     h_val(i & 0x7fff));
		}
	}
	free(h);
	free(ref);
}

/* The f32 sweep: a stride through all patterns plus, around every
 * positive f16 value and every midpoint between neighbours, the f32 value
 * itself and its two f32 neighbours, both signs. */
static uint32_t *
f32_sweep(size_t *n)
{
	size_t cap = 3000000, k = 0;
	uint32_t *v = malloc(cap * 4);
	for (uint64_t p = 0; p < 0x100000000ull; p += 4099)
		v[k++] = (uint32_t)p;
	for (unsigned p = 0; p <= 0x7c00; p++) {
		double a = h_val(p);
		double pts[2] = {a, p < 0x7c00 ? (a + h_val(p + 1)) / 2
		                               : 65504.0 + 16.0};
		if (p == 0x7c00)
			pts[0] = 65536.0;
		for (int j = 0; j < 2; j++) {
			float f = (float)pts[j]; /* exact: <= 13 bits */
			float nb[3] = {nextafterf(f, 0), f,
			               nextafterf(f, INFINITY)};
			for (int s = 0; s < 3; s++) {
				uint32_t b = fp_float_f32(nb[s]);
				v[k++] = b;
				v[k++] = b | 0x80000000u;
			}
		}
	}
	*n = k;
	return v;
}

static void
test_f32_to_f16_numpy(void **state)
{
	(void)state;
	size_t n;
	uint32_t *v = f32_sweep(&n);
	uint16_t *ref = malloc(n * 2);
	if (!numpy_convert(v, n, 4, "float32", ref, 2, "float16")) {
		free(v);
		free(ref);
		skip();
	}
	for (size_t i = 0; i < n; i++) {
		unsigned fl = 0;
		uint16_t got = fp_f32_to_f16(v[i], FP_RNE, 0, FP_OV_IEEE, &fl);
		if (fp_f32_isnan(v[i])) {
			assert_int_equal(got, FP16_QNAN);
			continue;
		}
		if (got != ref[i])
			fail_msg("f32 0x%08x: got 0x%04x numpy 0x%04x", v[i],
			         got, ref[i]);
		/* OFLO exactly when a finite input became infinite */
		int ovf = (v[i] & 0x7f800000u) != 0x7f800000u &&
		          (ref[i] & 0x7fff) == 0x7c00;
		assert_int_equal(!!(fl & FP_FLAG_OFLO), ovf);
	}
	free(v);
	free(ref);
}

/* Reference for every mode: neighbour search over the sorted f16 values
 * (binary search for the largest finite value <= |x|). */
static uint16_t
ref_f16(double x, FpRound mode, FpOverflow ov)
{
	if (isnan(x))
		return FP16_QNAN;
	uint16_t s = signbit(x) ? 0x8000 : 0;
	double a = fabs(x);
	if (isinf(x))
		return s | 0x7c00;
	unsigned lo = 0, hi = 0x7bff;
	if (a >= h_val(0x7bff)) {
		lo = 0x7bff;
	} else {
		while (lo < hi) { /* largest p with h_val(p) <= a */
			unsigned mid = (lo + hi + 1) / 2;
			if (h_val(mid) <= a)
				lo = mid;
			else
				hi = mid - 1;
		}
	}
	double below = h_val(lo);
	/* the next value up, with 2^16 standing for "overflow" */
	double above = lo < 0x7bff ? h_val(lo + 1) : 65536.0;
	unsigned pick;
	if (a >= 65536.0) {
		pick = 0x7c00; /* beyond the top binade in every mode */
	} else if (a == below) {
		pick = lo;
	} else {
		int away;
		switch (mode) {
		case FP_RTZ:
			away = 0;
			break;
		case FP_RUP:
			away = !s;
			break;
		case FP_RDN:
			away = !!s;
			break;
		case FP_RNA:
			away = a - below >= above - a;
			break;
		default:
			away = a - below > above - a ||
			       (a - below == above - a && (lo & 1));
			break;
		}
		pick = away ? lo + 1 : lo;
	}
	if (pick > 0x7bff) {
		if (ov == FP_OV_NAN)
			return FP16_QNAN;
		if (ov == FP_OV_SAT)
			return s | 0x7bff;
		int inf = mode == FP_RTZ   ? 0
		          : mode == FP_RUP ? !s
		          : mode == FP_RDN ? !!s
		                           : 1;
		return s | (inf ? 0x7c00 : 0x7bff);
	}
	return (uint16_t)(s | pick);
}

static void
test_f32_to_f16_modes(void **state)
{
	(void)state;
	size_t n;
	uint32_t *v = f32_sweep(&n);
	FpRound modes[] = {FP_RNE, FP_RUP, FP_RDN, FP_RTZ, FP_RNA};
	FpOverflow ovs[] = {FP_OV_IEEE, FP_OV_SAT, FP_OV_NAN};
	for (size_t i = 0; i < n; i += 3) {
		if (fp_f32_isnan(v[i]))
			continue;
		double x = fp_f32_float(v[i]);
		for (int m = 0; m < 5; m++) {
			unsigned fl = 0;
			FpOverflow ov = ovs[(i / 3 + (size_t)m) % 3];
			uint16_t got =
			    fp_f32_to_f16(v[i], modes[m], 0, ov, &fl);
			uint16_t want = ref_f16(x, modes[m], ov);
			if (got != want)
				fail_msg("f32 0x%08x mode %d ov %d: got 0x%04x "
				         "want 0x%04x",
				         v[i], modes[m], ov, got, want);
		}
	}
	free(v);
}

static void
test_f16_ties(void **state)
{
	(void)state;
	unsigned fl = 0;
	/* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even is 1.0 */
	assert_int_equal(fp_f64_to_f16(1 + 0x1p-11, FP_RNE, 0, FP_OV_SAT, &fl),
	                 0x3c00);
	/* 1 + 3*2^-11 is halfway between 0x3c01 and 0x3c02: even 0x3c02 */
	assert_int_equal(
	    fp_f64_to_f16(1 + 3 * 0x1p-11, FP_RNE, 0, FP_OV_SAT, &fl), 0x3c02);
	assert_int_equal(fp_f64_to_f16(1 + 0x1p-11, FP_RNA, 0, FP_OV_SAT, &fl),
	                 0x3c01);
	/* subnormal tie: 1.5 * 2^-24 -> 2 * 2^-24 (even) */
	assert_int_equal(
	    fp_f64_to_f16(1.5 * 0x1p-24, FP_RNE, 0, FP_OV_SAT, &fl), 0x0002);
	assert_int_equal(
	    fp_f64_to_f16(0.5 * 0x1p-24, FP_RNE, 0, FP_OV_SAT, &fl), 0x0000);
	assert_int_equal(
	    fp_f64_to_f16(-0.5 * 0x1p-24, FP_RNE, 0, FP_OV_SAT, &fl), 0x8000);
	assert_int_equal(fl, 0);
	/* 65520 is halfway between 65504 and 2^16: overflows */
	assert_int_equal(fp_f64_to_f16(65520, FP_RNE, 0, FP_OV_SAT, &fl),
	                 0x7bff);
	assert_int_equal(fl, FP_FLAG_OFLO);
	fl = 0;
	assert_int_equal(fp_f64_to_f16(-65520, FP_RNE, 0, FP_OV_NAN, &fl),
	                 FP16_QNAN);
	assert_int_equal(fp_f64_to_f16(65519, FP_RNE, 0, FP_OV_NAN, &fl),
	                 0x7bff);
}

static void
test_stochastic(void **state)
{
	(void)state;
	unsigned fl = 0;
	/* exact values never move */
	assert_int_equal(fp_f64_to_f16(1.0, FP_RSR, 0, FP_OV_SAT, &fl), 0x3c00);
	/* 1 + 2^-12 is a quarter ulp above 1: up iff rbits < 2^30 */
	double x = 1 + 0x1p-12;
	assert_int_equal(fp_f64_to_f16(x, FP_RSR, 0, FP_OV_SAT, &fl), 0x3c01);
	assert_int_equal(fp_f64_to_f16(x, FP_RSR, 0x3fffffffu, FP_OV_SAT, &fl),
	                 0x3c01);
	assert_int_equal(fp_f64_to_f16(x, FP_RSR, 0x40000000u, FP_OV_SAT, &fl),
	                 0x3c00);
	/* unbiased: the mean over all rbits patterns (stepped) is x */
	double sum = 0;
	int cnt = 0;
	for (uint64_t r = 0; r < 0x100000000ull; r += 0x10001, cnt++)
		sum += fp_f16_to_f64(
		    fp_f64_to_f16(-x, FP_RSR, (uint32_t)r, FP_OV_SAT, &fl));
	assert_true(fabs(sum / cnt + x) < 1e-6);
	assert_int_equal(fl, 0);
}

static uint64_t rng = 0x853c49e6748fea9bull;

static uint64_t
rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Doubles as the emulator rounds them: sums, differences and products of
 * two halves (exact in binary64), values with all 53 bits set at random
 * exponents around the f16 range, and points just beside f16 values and
 * midpoints. */
static double
random_exact(void)
{
	uint16_t a = (uint16_t)rnd(), b = (uint16_t)rnd();
	double x = h_val(a & 0x7bff) * (a & 0x8000 ? -1 : 1),
	       y = h_val(b & 0x7bff) * (b & 0x8000 ? -1 : 1);
	switch (rnd() % 5) {
	case 0:
		return x + y;
	case 1:
		return x - y;
	case 2:
		return x * y;
	case 3: {
		double m = (double)(rnd() >> 11) * 0x1p-53; /* [0, 1) */
		return ldexp(1 + m, (int)(rnd() % 48) - 34) *
		       (rnd() & 1 ? -1 : 1);
	}
	default: {
		double v = h_val(a & 0x7bff), next = h_val((a & 0x7bff) + 1u);
		double mid = (v + next) / 2;
		double at = rnd() & 1 ? mid : v;
		return nextafter(at, rnd() & 1 ? INFINITY : 0) *
		       (a & 0x8000 ? -1 : 1);
	}
	}
}

/* Stochastic rounding from the definition: away from zero iff the
 * discarded fraction of an ulp exceeds rbits / 2^32; *over when the result
 * left the finite range. */
static uint16_t
ref_f16_sr(double x, uint32_t rbits, FpOverflow ov, int *over)
{
	uint16_t s = signbit(x) ? 0x8000 : 0;
	double a = fabs(x);
	unsigned pick = 0x7c00; /* from 2^16 up: beyond any rounding */
	if (a < 65536.0) {
		unsigned lo = ref_f16(a, FP_RTZ, FP_OV_SAT); /* largest <= a */
		double below = h_val(lo),
		       above = lo < 0x7bff ? h_val(lo + 1) : 65536.0;
		/* the ulp is a power of two: the division is exact */
		pick = a != below && ldexp((a - below) / (above - below), 32) >
		                         (double)rbits
		           ? lo + 1
		           : lo;
	}
	*over = pick > 0x7bff;
	if (!*over)
		return (uint16_t)(s | pick);
	return ov == FP_OV_NAN   ? FP16_QNAN
	       : ov == FP_OV_SAT ? (uint16_t)(s | 0x7bff)
	                         : (uint16_t)(s | 0x7c00);
}

/* fp_f64_to_f16 on doubles that are not f32 values (sums of halves and
 * more), every mode and overflow rule, against the neighbour search. */
static void
test_f64_to_f16_random(void **state)
{
	(void)state;
	FpRound modes[] = {FP_RNE, FP_RUP, FP_RDN, FP_RTZ, FP_RNA, FP_RSR};
	FpOverflow ovs[] = {FP_OV_IEEE, FP_OV_SAT, FP_OV_NAN};
	for (int i = 0; i < 400000; i++) {
		double x = random_exact();
		FpRound mode = modes[i % 6];
		FpOverflow ov = ovs[(i / 6) % 3];
		uint32_t rbits = (uint32_t)rnd();
		if (rnd() % 8 == 0)
			rbits = rnd() & 1 ? 0 : 0xffffffffu;
		unsigned fl = 0;
		uint16_t got = fp_f64_to_f16(x, mode, rbits, ov, &fl);
		int over;
		uint16_t want;
		if (mode == FP_RSR) {
			want = ref_f16_sr(x, rbits, ov, &over);
		} else {
			want = ref_f16(x, mode, ov);
			over = ref_f16(x, mode, FP_OV_NAN) == FP16_QNAN;
		}
		if (got != want)
			fail_msg("%a mode %d ov %d rbits 0x%08x: got 0x%04x "
			         "want 0x%04x",
			         x, mode, ov, rbits, got, want);
		/* OFLO exactly when the rounded value left the range */
		assert_int_equal(!!(fl & FP_FLAG_OFLO), over);
	}
}

/* The inline nearest-even form against the general one: the f32 sweep
 * (dense around every f16 value and midpoint) and every sign, exponent and
 * top-16 fraction bits with several tails. */
static void
test_f32_to_f16_rne(void **state)
{
	(void)state;
	size_t n;
	uint32_t *v = f32_sweep(&n);
	for (size_t i = 0; i < n; i++) {
		unsigned fa = 0, fb = 0;
		assert_int_equal(
		    fp_f32_to_f16_rne(v[i], &fa),
		    fp_f32_to_f16(v[i], FP_RNE, 0, FP_OV_IEEE, &fb));
		assert_int_equal(fa, fb);
	}
	free(v);
	static const uint32_t tails[] = {0,      1,      0x0fff, 0x1000,
	                                 0x1001, 0x1fff, 0x7fff, 0xffff};
	for (uint32_t top = 0; top < 0x10000; top++)
		for (int k = 0; k < 8; k++) {
			uint32_t f = top << 16 | tails[k];
			unsigned fa = 0, fb = 0;
			uint16_t a = fp_f32_to_f16_rne(f, &fa),
			         b = fp_f32_to_f16(f, FP_RNE, 0, FP_OV_IEEE,
			                           &fb);
			if (a != b || fa != fb)
				fail_msg("0x%08x: 0x%04x (flags %u), want "
				         "0x%04x (flags %u)",
				         f, a, fa, b, fb);
		}
}

/* The inline nearest-even form of fp_f64_to_f16 against the general one,
 * on the random doubles above and every overflow rule. */
static void
test_f64_to_f16_rne(void **state)
{
	(void)state;
	FpOverflow ovs[] = {FP_OV_IEEE, FP_OV_SAT, FP_OV_NAN};
	for (int i = 0; i < 300000; i++) {
		double x = random_exact();
		FpOverflow ov = ovs[i % 3];
		unsigned fa = 0, fb = 0;
		uint16_t a = fp_f64_to_f16_rne(x, ov, &fa),
		         b = fp_f64_to_f16(x, FP_RNE, 0, ov, &fb);
		if (a != b || fa != fb)
			fail_msg("%a ov %d: 0x%04x (flags %u), want 0x%04x "
			         "(flags %u)",
			         x, ov, a, fa, b, fb);
	}
}

/* A random double with its exponent around binary32's range, subnormals
 * and overflow included. */
static double
random_near_f32(void)
{
	uint64_t b = rnd();
	uint64_t e = 1023 - 160 + rnd() % 300;
	b = (b & 0x800fffffffffffffull) | e << 52;
	double x;
	memcpy(&x, &b, 8);
	return x;
}

/* fp_f64_to_f32 against the host's own conversion in the modes it has. */
static void
test_f64_to_f32_random(void **state)
{
	(void)state;
	for (int i = 0; i < 300000; i++) {
		double x = random_near_f32();
		unsigned fl = 0;
		float want = (float)x;
		uint32_t wb;
		memcpy(&wb, &want, 4);
		uint32_t got = fp_f64_to_f32(x, FP_RNE, 0, &fl);
		if (got != wb)
			fail_msg("%a: got 0x%08x want 0x%08x", x, got, wb);
		/* toward zero: the magnitude's bits truncated */
		got = fp_f64_to_f32(x, FP_RTZ, 0, &fl);
		float t = (float)x;
		if (fabs((double)t) > fabs(x))
			t = nextafterf(t, 0);
		memcpy(&wb, &t, 4);
		if (fabs(x) < 0x1p128 && got != wb)
			fail_msg("%a toward zero: got 0x%08x want 0x%08x", x,
			         got, wb);
	}
}

/* The inline nearest-even form of fp_f64_to_f32 against the general one
 * (whose bits test_f64_to_f32_random checks against the host's), flags
 * included: exponents around binary32's range (subnormals, overflow), and
 * zeros, infinities and NaNs. */
static void
test_f64_to_f32_rne(void **state)
{
	(void)state;
	static const double edge[] = {
	    0.0,      -0.0,     INFINITY,       -INFINITY,
	    NAN,      0x1p128,  -0x1p128,       0x1p-150,
	    0x1p-149, 0x1p-126, 0x1.fffffffp127};
	for (int i = 0; i < 300000; i++) {
		double x = random_near_f32();
		if (i % 16 == 0)
			x = edge[(i / 16) % (sizeof edge / sizeof edge[0])];
		unsigned fa = 0, fb = 0;
		uint32_t a = fp_f64_to_f32_rne(x, &fa),
		         w = fp_f64_to_f32(x, FP_RNE, 0, &fb);
		if (a != w || fa != fb)
			fail_msg(
			    "%a: 0x%08x (flags %u), want 0x%08x (flags %u)", x,
			    a, fa, w, fb);
	}
}

/* FP8 from the definitions: value of code q in format (mbits, bias). */
static double
f8_def(unsigned q, int mbits, int bias)
{
	if (q == 0x80)
		return NAN;
	unsigned e = (q & 0x7f) >> mbits, m = q & ((1u << mbits) - 1);
	double frac = (double)m / (1u << mbits);
	double v = e ? ldexp(1 + frac, (int)e - bias) : ldexp(frac, 1 - bias);
	return q & 0x80 ? -v : v;
}

static void
test_f8_decode_all(void **state)
{
	(void)state;
	for (unsigned q = 0; q < 256; q++) {
		double a = fp_f8_to_f64((uint8_t)q, FP8_F143, 0);
		double b = fp_f8_to_f64((uint8_t)q, FP8_F152, 0);
		if (q == 0x80) {
			assert_true(isnan(a) && isnan(b));
			continue;
		}
		assert_true(a == f8_def(q, 3, 8));
		assert_true(b == f8_def(q, 2, 16));
		/* scales are exact powers of two */
		assert_true(fp_f8_to_f64((uint8_t)q, FP8_F143, -5) ==
		            ldexp(a, -5));
		assert_true(fp_f8_to_f64((uint8_t)q, FP8_F152, 31) ==
		            ldexp(b, 31));
		/* round trip through f16 when the value fits */
		unsigned fl = 0;
		uint16_t h =
		    fp_f8_to_f16((uint8_t)q, FP8_F143, 0, FP_OV_SAT, &fl);
		assert_int_equal(fp_f16_to_f8(h, FP8_F143, 0, FP_OV_SAT, &fl),
		                 q);
		h = fp_f8_to_f16((uint8_t)q, FP8_F152, 0, FP_OV_SAT, &fl);
		assert_int_equal(fp_f16_to_f8(h, FP8_F152, 0, FP_OV_SAT, &fl),
		                 q);
		assert_int_equal(fl, 0);
	}
	/* anchors (isa.md 6, model.md 7.1) */
	assert_true(fp_f8_to_f64(0x56, FP8_F143, 0) == 7.0);
	assert_true(fp_f8_to_f64(0x58, FP8_F143, 0) == 8.0);
	assert_true(fp_f8_to_f64(0x7f, FP8_F143, 0) == 240.0);
	assert_true(fp_f8_to_f64(0x01, FP8_F143, 0) == 0x1p-10);
	assert_true(fp_f8_to_f64(0x08, FP8_F143, 0) == 0x1p-7);
	assert_true(fp_f8_to_f64(0x7f, FP8_F152, 0) == 57344.0);
	assert_true(fp_f8_to_f64(0x01, FP8_F152, 0) == 0x1p-17);
	assert_true(fp_f8_to_f64(0x04, FP8_F152, 0) == 0x1p-15);
	assert_true(fp_f8_to_f64(0xd6, FP8_F143, 0) == -7.0);
	unsigned fl = 0;
	assert_int_equal(fp_f64_to_f8(7.0, FP8_F143, 0, FP_OV_SAT, &fl), 0x56);
	assert_int_equal(fp_f64_to_f8(8.0, FP8_F143, 0, FP_OV_SAT, &fl), 0x58);
}

/* Brute-force encoder: nearest of the 255 values, ties to the even code,
 * beyond max + half an ulp overflows. */
static uint8_t
ref_f8(double x, int mbits, int bias, FpOverflow ov)
{
	if (isnan(x))
		return 0x80;
	double a = fabs(x);
	unsigned best = 0;
	double bd = INFINITY;
	for (unsigned q = 0; q < 0x80; q++) {
		double d = fabs(f8_def(q, mbits, bias) - a);
		if (d < bd || (d == bd && !(q & 1))) {
			bd = d;
			best = q;
		}
	}
	double max = f8_def(0x7f, mbits, bias);
	double half = (max - f8_def(0x7e, mbits, bias)) / 2;
	/* ties at max + half go to the even neighbour beyond: overflow */
	if (a >= max + half || isinf(x))
		return ov == FP_OV_NAN ? 0x80
		                       : (uint8_t)((x < 0 ? 0x80 : 0) | 0x7f);
	if (best == 0)
		return 0;
	return (uint8_t)((x < 0 ? 0x80 : 0) | best);
}

static void
test_f8_encode(void **state)
{
	(void)state;
	int scales[] = {0, -3, 4, 31, -32};
	for (unsigned p = 0; p < 0x10000; p += 7) {
		uint16_t h = (uint16_t)p;
		if (fp_f16_isnan(h))
			continue;
		for (int si = 0; si < 5; si++) {
			int s = scales[si];
			double x = ldexp(fp_f16_to_f64(h), -s);
			unsigned fl = 0;
			FpOverflow ov =
			    (p / 7 + (unsigned)si) % 2 ? FP_OV_NAN : FP_OV_SAT;
			uint8_t got = fp_f16_to_f8(h, FP8_F143, s, ov, &fl);
			uint8_t want = ref_f8(x, 3, 8, ov);
			if (got != want)
				fail_msg("F143 f16 0x%04x scale %d: got 0x%02x "
				         "want 0x%02x",
				         p, s, got, want);
			got = fp_f16_to_f8(h, FP8_F152, s, ov, &fl);
			want = ref_f8(x, 2, 16, ov);
			if (got != want)
				fail_msg("F152 f16 0x%04x scale %d: got 0x%02x "
				         "want 0x%02x",
				         p, s, got, want);
		}
	}
	unsigned fl = 0;
	assert_int_equal(fp_f64_to_f8(7.25, FP8_F143, 0, FP_OV_SAT, &fl),
	                 0x56); /* 7.25 between 7.0 (0x56) and 7.5 (0x57) */
	assert_int_equal(fp_f64_to_f8(7.75, FP8_F143, 0, FP_OV_SAT, &fl),
	                 0x58); /* between 7.5 and 8: even code 0x58 */
	assert_int_equal(fl, 0);
	assert_int_equal(fp_f64_to_f8(-1e-9, FP8_F143, 0, FP_OV_SAT, &fl),
	                 0x00);
	assert_int_equal(fp_f64_to_f8(-0.0, FP8_F152, 0, FP_OV_SAT, &fl), 0x00);
	assert_int_equal(fp_f64_to_f8(248, FP8_F143, 0, FP_OV_SAT, &fl), 0x7f);
	assert_int_equal(fl, FP_FLAG_OFLO);
	fl = 0;
	assert_int_equal(fp_f64_to_f8(247.9, FP8_F143, 0, FP_OV_NAN, &fl),
	                 0x7f);
	assert_int_equal(fl, 0);
	assert_int_equal(fp_f64_to_f8(-248, FP8_F143, 0, FP_OV_NAN, &fl), 0x80);
	assert_int_equal(fp_f64_to_f8(-INFINITY, FP8_F143, 0, FP_OV_SAT, &fl),
	                 0xff);
	/* scale: 7 * 2^-2 read with scale 2 */
	assert_int_equal(fp_f64_to_f8(28.0, FP8_F143, 2, FP_OV_SAT, &fl), 0x56);
	assert_int_equal(fp_scale6(0x3f), -1);
	assert_int_equal(fp_scale6(0x20), -32);
	assert_int_equal(fp_scale6(0x1f), 31);
	assert_int_equal(fp_scale6(0xc5), 5);
}

/* fp_f64_to_f8_nr against fp_f64_to_f8 and ref_f8, flags included: x one
 * value at scale s, both formats, both overflow rules. */
static void
check_f8_nr(double x, int s, const char *what, unsigned code)
{
	for (int fmt = 0; fmt < 2; fmt++)
		for (int o = 0; o < 2; o++) {
			Fp8Format f = fmt ? FP8_F152 : FP8_F143;
			FpOverflow ov = o ? FP_OV_NAN : FP_OV_SAT;
			unsigned fa = 0, fb = 0;
			uint8_t got = fp_f64_to_f8_nr(x, f, s, ov, &fa);
			uint8_t old = fp_f64_to_f8(x, f, s, ov, &fb);
			uint8_t want =
			    ref_f8(ldexp(x, -s), fmt ? 2 : 3, fmt ? 16 : 8, ov);
			if (got != old || got != want || fa != fb)
				fail_msg("%s 0x%x fmt %d scale %d ov %d: got "
				         "0x%02x (flags %u) old 0x%02x (%u) "
				         "want 0x%02x",
				         what, code, fmt, s, o, got, fa, old,
				         fb, want);
		}
}

/* Every f16 value (NaN, infinities, subnormals, zeros) at scales 0, 3,
 * -4, 31, -32, and the f64 edges of every code of both formats: each
 * boundary between codes (the exact tie and one binary64 ulp either side),
 * each code's value and its neighbours, the normal / subnormal border,
 * max + half an ulp, the tiniest doubles. */
static void
test_f8_encode_all(void **state)
{
	(void)state;
	int scales[] = {0, 3, -4, 31, -32};
	for (unsigned p = 0; p < 0x10000; p++)
		for (int si = 0; si < 5; si++)
			check_f8_nr(fp_f16_to_f64((uint16_t)p), scales[si],
			            "f16", p);
	for (int fmt = 0; fmt < 2; fmt++) {
		int mb = fmt ? 2 : 3, bias = fmt ? 16 : 8;
		double max = f8_def(0x7f, mb, bias);
		double top = max + (max - f8_def(0x7e, mb, bias)) / 2;
		for (unsigned q = 0; q < 0x80; q++) {
			double a = f8_def(q, mb, bias);
			double b = q < 0x7f ? f8_def(q + 1, mb, bias) : top;
			double mid = (a + b) / 2; /* exact: few bits */
			double xs[] = {
			    a,   nextafter(a, 0),   nextafter(a, INFINITY),
			    mid, nextafter(mid, 0), nextafter(mid, INFINITY),
			    b,   nextafter(b, 0),   nextafter(b, INFINITY)};
			for (int i = 0; i < 9; i++)
				for (int s = -2; s <= 2; s += 2) {
					check_f8_nr(ldexp(xs[i], s), s, "edge",
					            q);
					check_f8_nr(-ldexp(xs[i], s), s,
					            "-edge", q);
				}
		}
	}
	double odd[] = {NAN,  -NAN,      INFINITY,   -INFINITY, 0.0,
	                -0.0, 0x1p-1074, -0x1p-1022, 1e300,     -1e300};
	for (int i = 0; i < 10; i++)
		check_f8_nr(odd[i], 0, "odd", (unsigned)i);
}

static void
test_classes(void **state)
{
	(void)state;
	assert_int_equal(fp_class_f32(0x7f800001u), FP_CLASS_SNAN);
	assert_int_equal(fp_class_f32(0xffc00000u), FP_CLASS_QNAN);
	assert_int_equal(fp_class_f32(0xff800000u), FP_CLASS_NEG_INF);
	assert_int_equal(fp_class_f32(0xbf800000u), FP_CLASS_NEG_NORMAL);
	assert_int_equal(fp_class_f32(0x80000001u), FP_CLASS_NEG_SUBNORMAL);
	assert_int_equal(fp_class_f32(0x80000000u), FP_CLASS_NEG_ZERO);
	assert_int_equal(fp_class_f32(0), FP_CLASS_POS_ZERO);
	assert_int_equal(fp_class_f32(0x007fffffu), FP_CLASS_POS_SUBNORMAL);
	assert_int_equal(fp_class_f32(0x00800000u), FP_CLASS_POS_NORMAL);
	assert_int_equal(fp_class_f32(0x7f800000u), FP_CLASS_POS_INF);
	assert_int_equal(fp_class_f16(0x7c01), FP_CLASS_SNAN);
	assert_int_equal(fp_class_f16(0x7e00), FP_CLASS_QNAN);
	assert_int_equal(fp_class_f16(0xfc00), FP_CLASS_NEG_INF);
	assert_int_equal(fp_class_f16(0x03ff), FP_CLASS_POS_SUBNORMAL);
	assert_int_equal(fp_class_f16(0x8400), FP_CLASS_NEG_NORMAL);
	assert_int_equal(fp_class_f8(0x80, FP8_F143), FP_CLASS_QNAN);
	assert_int_equal(fp_class_f8(0x00, FP8_F143), FP_CLASS_POS_ZERO);
	assert_int_equal(fp_class_f8(0x07, FP8_F143), FP_CLASS_POS_SUBNORMAL);
	assert_int_equal(fp_class_f8(0x08, FP8_F143), FP_CLASS_POS_NORMAL);
	assert_int_equal(fp_class_f8(0x87, FP8_F143), FP_CLASS_NEG_SUBNORMAL);
	assert_int_equal(fp_class_f8(0x87, FP8_F152), FP_CLASS_NEG_NORMAL);
	assert_int_equal(fp_class_f8(0xff, FP8_F152), FP_CLASS_NEG_NORMAL);
}

static void
test_integers(void **state)
{
	(void)state;
	unsigned fl = 0;
	uint32_t p25 = fp_float_f32(2.5f), m25 = fp_float_f32(-2.5f);
	assert_int_equal(fp_f32_to_i32(p25, FP_RNE, &fl), 2);
	assert_int_equal(fp_f32_to_i32(p25, FP_RUP, &fl), 3);
	assert_int_equal(fp_f32_to_i32(p25, FP_RDN, &fl), 2);
	assert_int_equal(fp_f32_to_i32(p25, FP_RTZ, &fl), 2);
	assert_int_equal(fp_f32_to_i32(p25, FP_RNA, &fl), 3);
	assert_int_equal(fp_f32_to_i32(m25, FP_RNE, &fl), -2);
	assert_int_equal(fp_f32_to_i32(m25, FP_RUP, &fl), -2);
	assert_int_equal(fp_f32_to_i32(m25, FP_RDN, &fl), -3);
	assert_int_equal(fp_f32_to_i32(m25, FP_RNA, &fl), -3);
	assert_int_equal(fl, 0);
	assert_int_equal(fp_f32_to_i32(fp_float_f32(3e9f), FP_RNE, &fl),
	                 INT32_MAX);
	assert_int_equal(fl, FP_FLAG_INV);
	fl = 0;
	assert_int_equal(fp_f32_to_i32(fp_float_f32(-0x1p31f), FP_RNE, &fl),
	                 INT32_MIN);
	assert_int_equal(fl, 0);
	assert_int_equal(fp_f32_to_u32(fp_float_f32(-0.4f), FP_RNE, &fl), 0);
	assert_int_equal(fl, 0);
	assert_int_equal(fp_f32_to_u32(fp_float_f32(-1.0f), FP_RNE, &fl), 0);
	assert_int_equal(fl, FP_FLAG_INV);
	fl = 0;
	assert_int_equal(fp_f32_to_u32(fp_float_f32(4e9f), FP_RNE, &fl),
	                 4000000000u);
	assert_int_equal(fp_f32_to_i32(FP32_QNAN, FP_RNE, &fl), 0);
	assert_int_equal(fl, FP_FLAG_INV);
	/* 2^32 - 1 is between 2^32 - 256 and 2^32 */
	assert_int_equal(fp_u32_to_f32(0xffffffffu, FP_RNE), 0x4f800000u);
	assert_int_equal(fp_u32_to_f32(0xffffffffu, FP_RTZ), 0x4f7fffffu);
	assert_int_equal(fp_i32_to_f32(-7, FP_RNE), 0xc0e00000u);
	assert_int_equal(fp_i32_to_f32(16777217, FP_RNE), 0x4b800000u);
	assert_int_equal(fp_i32_to_f32(16777217, FP_RUP), 0x4b800001u);
	assert_int_equal(fp_i32_to_f32(-16777217, FP_RUP), 0xcb800000u);
	fl = 0;
	assert_int_equal(fp_f32_round_int(fp_float_f32(-0.3f), FP_RNE, &fl),
	                 0x80000000u);
	assert_int_equal(fp_f32_round_int(fp_float_f32(2.5f), FP_RNA, &fl),
	                 fp_float_f32(3.0f));
	assert_int_equal(fp_f32_round_int(fp_float_f32(-2.7f), FP_RTZ, &fl),
	                 fp_float_f32(-2.0f));
	assert_int_equal(fp_f32_round_int(fp_float_f32(2.1f), FP_RUP, &fl),
	                 fp_float_f32(3.0f));
	assert_int_equal(fp_f32_round_int(fp_float_f32(-2.1f), FP_RDN, &fl),
	                 fp_float_f32(-3.0f));
	assert_int_equal(fl, 0);
}

static void
test_f32_arith_flags(void **state)
{
	(void)state;
	unsigned fl = 0;
	uint32_t one = 0x3f800000u, zero = 0, inf = 0x7f800000u;
	assert_int_equal(fp_f32_div(one, zero, &fl), inf);
	assert_int_equal(fl, FP_FLAG_DIV0);
	fl = 0;
	assert_int_equal(fp_f32_div(zero, zero, &fl), FP32_QNAN);
	assert_int_equal(fl, FP_FLAG_INV);
	fl = 0;
	assert_int_equal(fp_f32_sub(inf, inf, &fl), FP32_QNAN);
	assert_int_equal(fl, FP_FLAG_INV);
	fl = 0;
	assert_int_equal(fp_f32_add(FP32_QNAN, one, &fl), FP32_QNAN);
	assert_int_equal(fl, 0);
	assert_int_equal(fp_f32_add(0x7f800001u, one, &fl), FP32_QNAN);
	assert_int_equal(fl, FP_FLAG_INV);
	fl = 0;
	assert_int_equal(fp_f32_mul(0x7f7fffffu, 0x40000000u, &fl), inf);
	assert_int_equal(fl, FP_FLAG_OFLO);
	fl = 0;
	assert_int_equal(fp_f32_add(inf, one, &fl), inf);
	assert_int_equal(fl, 0);
	/* subnormals are kept */
	assert_int_equal(fp_f32_mul(0x00800000u, 0x3f000000u, &fl),
	                 0x00400000u);
	/* fused: (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46 exactly */
	assert_int_equal(fp_f32_fma(0x3f800001u, 0x3f800001u, 0xbf800002u, &fl),
	                 0x28800000u);
	assert_int_equal(fp_f32_sqrt(0xbf800000u, &fl), FP32_QNAN);
	assert_int_equal(fl, FP_FLAG_INV);
	fl = 0;
	uint16_t in[1] = {0x3c00};
	assert_int_equal(fp_f16_result(NAN, in, 1, FP_RNE, 0, FP_OV_SAT, &fl),
	                 FP16_QNAN);
	assert_int_equal(fl, FP_FLAG_INV);
	fl = 0;
	assert_int_equal(fp_f16_mul(0x7bff, 0x4000, FP_RNE, 0, FP_OV_SAT, &fl),
	                 0x7bff);
	assert_int_equal(fl, FP_FLAG_OFLO);
	fl = 0;
	assert_int_equal(fp_f16_add(0x3c00, 0x1400, FP_RNE, 0, FP_OV_SAT, &fl),
	                 0x3c01); /* 1 + 2^-10 */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_f16_to_f32_all),
	    cmocka_unit_test(test_f32_to_f16_numpy),
	    cmocka_unit_test(test_f32_to_f16_modes),
	    cmocka_unit_test(test_f16_ties),
	    cmocka_unit_test(test_stochastic),
	    cmocka_unit_test(test_f64_to_f16_random),
	    cmocka_unit_test(test_f64_to_f32_random),
	    cmocka_unit_test(test_f32_to_f16_rne),
	    cmocka_unit_test(test_f64_to_f16_rne),
	    cmocka_unit_test(test_f64_to_f32_rne),
	    cmocka_unit_test(test_f8_decode_all),
	    cmocka_unit_test(test_f8_encode),
	    cmocka_unit_test(test_f8_encode_all),
	    cmocka_unit_test(test_classes),
	    cmocka_unit_test(test_integers),
	    cmocka_unit_test(test_f32_arith_flags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

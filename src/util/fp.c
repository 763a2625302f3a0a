/*
 * fp.c - the IPU's floating-point formats (see fp.h).
 *
 * Every narrowing goes through one routine, round_code(): the exact value
 * is held in a double (binary16 sums and products, binary32 values, FP8
 * values and their power-of-two scalings are all exact in binary64), split
 * into its integer significand bits at the target precision and the bits
 * below, rounded by the mode with integer comparisons (rounds_up), and
 * encoded. Binary32 arithmetic itself is the host's SSE
 * arithmetic (round to nearest even, subnormals kept; the build uses
 * -ffp-contract=off and x86-64 has no excess precision).
 */
#include "fp.h"

#include <math.h>
#include <string.h>

typedef struct {
	int p;    /* significand bits, including the implicit one */
	int emin; /* exponent of the smallest normal */
	int emax; /* exponent of the largest binade */
} Fmt;

static const Fmt FMT_F16 = {11, -14, 15};
static const Fmt FMT_F32 = {24, -126, 127};
static const Fmt FMT_F143 = {4, -7, 7};   /* bias 8, exponent 15 is normal */
static const Fmt FMT_F152 = {3, -15, 15}; /* bias 16, exponent 31 is normal */

static uint64_t
double_bits(double x)
{
	uint64_t b;
	memcpy(&b, &x, 8);
	return b;
}

static double
bits_double(uint64_t b)
{
	double x;
	memcpy(&x, &b, 8);
	return x;
}

/* 2^k, exactly, for k in the normal range of binary64. */
static double
pow2(int k)
{
	return bits_double((uint64_t)(k + 1023) << 52);
}

/* The finite nonzero |x| as m * 2^ex with m an integer of at most 53 bits;
 * returns floor(log2 |x|). */
static int
split(double x, uint64_t *m, int *ex)
{
	uint64_t b = double_bits(x) & 0x7fffffffffffffffull;
	int E = (int)(b >> 52);
	*m = b & 0xfffffffffffffull;
	if (E) {
		*m |= 1ull << 52;
		*ex = E - 1075;
		return E - 1023;
	}
	*ex = -1074; /* a subnormal double */
	return 63 - __builtin_clzll(*m) - 1074;
}

/* Whether a magnitude that is q ulps plus the fraction rem / 2^sh of an ulp
 * (0 <= rem < 2^sh, sh >= 1) rounds up to q + 1 in this mode; neg is the
 * sign of the value. Exact integer comparisons, whatever sh. */
static int
rounds_up(FpRound mode, int neg, uint64_t q, uint64_t rem, int sh,
          uint32_t rbits)
{
	/* the fraction against 1/2: rem against 2^(sh-1) (rem < 2^53) */
	int above_half = sh <= 64 && rem > (1ull << (sh - 1));
	int at_half = sh <= 64 && rem == (1ull << (sh - 1));
	switch (mode) {
	case FP_RUP:
		return !neg && rem;
	case FP_RDN:
		return neg && rem;
	case FP_RTZ:
		return 0;
	case FP_RNA:
		return above_half || at_half;
	case FP_RSR:
		/* rem / 2^sh > rbits / 2^32 */
		if (sh >= 96)
			return rem && !rbits; /* rem / 2^sh < 2^-43 */
		return ((unsigned __int128)rem << 32) >
		       ((unsigned __int128)rbits << sh);
	case FP_RNE:
	default:
		return above_half || (at_half && (q & 1));
	}
}

/* Round the finite nonzero x to format f with unbounded exponent range:
 * the format's code of the rounded magnitude, ((e - emin) << (p - 1)) + q
 * for q ulps of 2^(e - p + 1), e = max(floor(log2 |x|), emin), which is
 * the IEEE-style encoding of the magnitude (subnormals included, and a
 * carry into the next binade comes out right). *over is set when it is
 * beyond the largest finite value. */
static uint32_t
round_code(double x, const Fmt *f, FpRound mode, uint32_t rbits, int *over)
{
	uint64_t m;
	int ex, lg = split(x, &m, &ex);
	int e = lg < f->emin ? f->emin : lg;
	int sh = e - f->p + 1 - ex; /* bits below the ulp: >= 53 - p */
	uint64_t q = sh < 64 ? m >> sh : 0;
	uint64_t rem = sh < 64 ? m & ((1ull << sh) - 1) : m;
	q += (uint64_t)rounds_up(mode, signbit(x) != 0, q, rem, sh, rbits);
	uint32_t code = ((uint32_t)(e - f->emin) << (f->p - 1)) + (uint32_t)q;
	uint32_t max =
	    ((uint32_t)(f->emax - f->emin) << (f->p - 1)) + (1u << f->p) - 1;
	*over = code > max;
	return code;
}

/* What an overflowed value becomes under IEEE rules for this mode. */
static int
ieee_overflow_to_inf(FpRound mode, int neg)
{
	switch (mode) {
	case FP_RTZ:
		return 0;
	case FP_RUP:
		return !neg;
	case FP_RDN:
		return neg;
	default:
		return 1;
	}
}

uint16_t
fp_f64_to_f16(double x, FpRound mode, uint32_t rbits, FpOverflow ov,
              unsigned *flags)
{
	if (isnan(x))
		return FP16_QNAN;
	uint16_t s = signbit(x) ? 0x8000 : 0;
	if (isinf(x))
		return (uint16_t)(s | 0x7c00);
	if (x == 0)
		return s;
	int over;
	uint32_t code = round_code(x, &FMT_F16, mode, rbits, &over);
	if (!over)
		return (uint16_t)(s | code);
	*flags |= FP_FLAG_OFLO;
	if (ov == FP_OV_NAN)
		return FP16_QNAN;
	if (ov == FP_OV_IEEE && ieee_overflow_to_inf(mode, s != 0))
		return (uint16_t)(s | 0x7c00);
	return (uint16_t)(s | FP16_MAX);
}

uint32_t
fp_f64_to_f32(double x, FpRound mode, uint32_t rbits, unsigned *flags)
{
	if (isnan(x))
		return FP32_QNAN;
	uint32_t s = signbit(x) ? 0x80000000u : 0;
	if (isinf(x))
		return s | 0x7f800000u;
	if (x == 0)
		return s;
	int over;
	uint32_t code = round_code(x, &FMT_F32, mode, rbits, &over);
	if (!over)
		return s | code;
	*flags |= FP_FLAG_OFLO;
	if (ieee_overflow_to_inf(mode, s != 0))
		return s | 0x7f800000u;
	return s | 0x7f7fffffu;
}

uint16_t
fp_f32_to_f16(uint32_t f, FpRound mode, uint32_t rbits, FpOverflow ov,
              unsigned *flags)
{
	if (fp_f32_issnan(f))
		*flags |= FP_FLAG_INV;
	return fp_f64_to_f16(fp_f32_float(f), mode, rbits, ov, flags);
}

uint32_t
fp_f16_to_f32(uint16_t h, unsigned *flags)
{
	if (fp_f16_isnan(h)) {
		if (fp_f16_issnan(h))
			*flags |= FP_FLAG_INV;
		return FP32_QNAN;
	}
	return fp_float_f32((float)fp_f16_to_f64(h));
}

uint16_t
fp_f16_result(double r, const uint16_t *in, int n, FpRound mode, uint32_t rbits,
              FpOverflow ov, unsigned *flags)
{
	int anynan = 0, finite = 1;
	for (int i = 0; i < n; i++) {
		if (fp_f16_isnan(in[i])) {
			anynan = 1;
			if (fp_f16_issnan(in[i]))
				*flags |= FP_FLAG_INV;
		}
		if ((in[i] & 0x7c00) == 0x7c00)
			finite = 0;
	}
	if (isnan(r)) {
		if (!anynan)
			*flags |= FP_FLAG_INV;
		return FP16_QNAN;
	}
	if (isinf(r) && finite) {
		/* Only the transcendental functions get here (exact sums and
		 * products of halves are finite in double). */
		*flags |= FP_FLAG_OFLO;
		if (ov == FP_OV_NAN)
			return FP16_QNAN;
		if (ov == FP_OV_SAT)
			return (uint16_t)((signbit(r) ? 0x8000 : 0) | FP16_MAX);
	}
	return fp_f64_to_f16(r, mode, rbits, ov, flags);
}

uint16_t
fp_f16_add(uint16_t a, uint16_t b, FpRound mode, uint32_t rbits, FpOverflow ov,
           unsigned *flags)
{
	uint16_t in[2] = {a, b};
	return fp_f16_result(fp_f16_to_f64(a) + fp_f16_to_f64(b), in, 2, mode,
	                     rbits, ov, flags);
}

uint16_t
fp_f16_sub(uint16_t a, uint16_t b, FpRound mode, uint32_t rbits, FpOverflow ov,
           unsigned *flags)
{
	uint16_t in[2] = {a, b};
	return fp_f16_result(fp_f16_to_f64(a) - fp_f16_to_f64(b), in, 2, mode,
	                     rbits, ov, flags);
}

uint16_t
fp_f16_mul(uint16_t a, uint16_t b, FpRound mode, uint32_t rbits, FpOverflow ov,
           unsigned *flags)
{
	uint16_t in[2] = {a, b};
	return fp_f16_result(fp_f16_to_f64(a) * fp_f16_to_f64(b), in, 2, mode,
	                     rbits, ov, flags);
}

/* A binary32 result r computed in host float from n inputs: canonical NaN,
 * IEEE flags. */
static uint32_t
fp_f32_result(float r, const uint32_t *in, int n, unsigned *flags)
{
	int anynan = 0, finite = 1;
	for (int i = 0; i < n; i++) {
		if (fp_f32_isnan(in[i])) {
			anynan = 1;
			if (fp_f32_issnan(in[i]))
				*flags |= FP_FLAG_INV;
		}
		if ((in[i] & 0x7f800000u) == 0x7f800000u)
			finite = 0;
	}
	if (isnan(r)) {
		if (!anynan)
			*flags |= FP_FLAG_INV;
		return FP32_QNAN;
	}
	if (isinf(r) && finite)
		*flags |= FP_FLAG_OFLO;
	return fp_float_f32(r);
}

uint32_t
fp_f32_add(uint32_t a, uint32_t b, unsigned *flags)
{
	uint32_t in[2] = {a, b};
	return fp_f32_result(fp_f32_float(a) + fp_f32_float(b), in, 2, flags);
}

uint32_t
fp_f32_sub(uint32_t a, uint32_t b, unsigned *flags)
{
	uint32_t in[2] = {a, b};
	return fp_f32_result(fp_f32_float(a) - fp_f32_float(b), in, 2, flags);
}

uint32_t
fp_f32_mul(uint32_t a, uint32_t b, unsigned *flags)
{
	uint32_t in[2] = {a, b};
	return fp_f32_result(fp_f32_float(a) * fp_f32_float(b), in, 2, flags);
}

uint32_t
fp_f32_div(uint32_t a, uint32_t b, unsigned *flags)
{
	uint32_t in[2] = {a, b};
	float fa = fp_f32_float(a), fb = fp_f32_float(b);
	if (fb == 0 && isfinite(fa) && fa != 0) {
		*flags |= FP_FLAG_DIV0;
		return ((a ^ b) & 0x80000000u) | 0x7f800000u;
	}
	return fp_f32_result(fa / fb, in, 2, flags);
}

uint32_t
fp_f32_sqrt(uint32_t a, unsigned *flags)
{
	return fp_f32_result(sqrtf(fp_f32_float(a)), &a, 1, flags);
}

uint32_t
fp_f32_fma(uint32_t a, uint32_t b, uint32_t c, unsigned *flags)
{
	uint32_t in[3] = {a, b, c};
	return fp_f32_result(
	    fmaf(fp_f32_float(a), fp_f32_float(b), fp_f32_float(c)), in, 3,
	    flags);
}

/* Round x to an integral value by mode (no random bits: RSR acts as
 * RNE). */
static double
round_integral(double x, FpRound mode)
{
	if (!isfinite(x) || fabs(x) >= 0x1p52 || x == 0)
		return x;
	uint64_t m;
	int ex;
	split(x, &m, &ex);
	int sh = -ex; /* >= 1: |x| < 2^52 */
	uint64_t q = sh < 64 ? m >> sh : 0;
	uint64_t rem = sh < 64 ? m & ((1ull << sh) - 1) : m;
	int neg = signbit(x) != 0;
	q += (uint64_t)rounds_up(mode == FP_RSR ? FP_RNE : mode, neg, q, rem,
	                         sh, 0);
	return neg ? -(double)q : (double)q;
}

int32_t
fp_f32_to_i32(uint32_t f, FpRound mode, unsigned *flags)
{
	if (fp_f32_isnan(f)) {
		*flags |= FP_FLAG_INV;
		return 0;
	}
	double r = round_integral(fp_f32_float(f), mode);
	if (r >= 0x1p31) {
		*flags |= FP_FLAG_INV;
		return INT32_MAX;
	}
	if (r < -0x1p31) {
		*flags |= FP_FLAG_INV;
		return INT32_MIN;
	}
	return (int32_t)r;
}

uint32_t
fp_f32_to_u32(uint32_t f, FpRound mode, unsigned *flags)
{
	if (fp_f32_isnan(f)) {
		*flags |= FP_FLAG_INV;
		return 0;
	}
	double r = round_integral(fp_f32_float(f), mode);
	if (r >= 0x1p32) {
		*flags |= FP_FLAG_INV;
		return UINT32_MAX;
	}
	if (r < 0) {
		*flags |= FP_FLAG_INV;
		return 0;
	}
	return (uint32_t)r;
}

uint32_t
fp_i32_to_f32(int32_t v, FpRound mode)
{
	unsigned fl = 0;
	return fp_f64_to_f32((double)v, mode, 0, &fl);
}

uint32_t
fp_u32_to_f32(uint32_t v, FpRound mode)
{
	unsigned fl = 0;
	return fp_f64_to_f32((double)v, mode, 0, &fl);
}

uint32_t
fp_f32_round_int(uint32_t f, FpRound mode, unsigned *flags)
{
	if (fp_f32_isnan(f)) {
		if (fp_f32_issnan(f))
			*flags |= FP_FLAG_INV;
		return FP32_QNAN;
	}
	/* The sign of zero survives: -0.3 rounds to -0. */
	return fp_float_f32((float)round_integral(fp_f32_float(f), mode));
}

/* FP8. */

static const Fmt *
f8fmt(Fp8Format fmt)
{
	return fmt == FP8_F152 ? &FMT_F152 : &FMT_F143;
}

int
fp_scale6(uint32_t field)
{
	int s = (int)(field & 0x3f);
	return s >= 32 ? s - 64 : s;
}

int
fp_f8_f143_scale(double max_abs)
{
	if (!(max_abs > 0))
		return 0;
	int s = (int)ceil(log2(max_abs / 240));
	while (ldexp(240, s) < max_abs) /* log2's rounding */
		s++;
	while (ldexp(240, s - 1) >= max_abs)
		s--;
	return s < -32 ? -32 : s > 31 ? 31 : s;
}

double
fp_f8_to_f64(uint8_t q, Fp8Format fmt, int scale)
{
	if (q == FP8_NAN)
		return NAN;
	const Fmt *f = f8fmt(fmt);
	int mb = f->p - 1, bias = 1 - f->emin;
	int e = (q & 0x7f) >> mb, m = q & ((1 << mb) - 1);
	/* exact: a few bits times a power of two well inside binary64 */
	double v = e ? (double)(m + (1 << mb)) * pow2(e - bias - mb + scale)
	             : (double)m * pow2(f->emin - mb + scale);
	return q & 0x80 ? -v : v;
}

uint16_t
fp_f8_to_f16(uint8_t q, Fp8Format fmt, int scale, FpOverflow ov,
             unsigned *flags)
{
	return fp_f64_to_f16(fp_f8_to_f64(q, fmt, scale), FP_RNE, 0, ov, flags);
}

uint8_t
fp_f64_to_f8(double x, Fp8Format fmt, int scale, FpOverflow ov, unsigned *flags)
{
	if (isnan(x))
		return FP8_NAN;
	uint8_t s = signbit(x) ? 0x80 : 0;
	if (isinf(x))
		return ov == FP_OV_NAN ? FP8_NAN : (uint8_t)(s | 0x7f);
	if (x == 0)
		return 0; /* no negative zero: 0x80 is the NaN */
	int over;
	/* x * 2^-scale is exact: x comes from f16, f32 or f64 values far
	 * from the ends of binary64's range, |scale| <= 32 */
	uint32_t code =
	    round_code(x * pow2(-scale), f8fmt(fmt), FP_RNE, 0, &over);
	if (over) {
		*flags |= FP_FLAG_OFLO;
		return ov == FP_OV_NAN ? FP8_NAN : (uint8_t)(s | 0x7f);
	}
	if (code == 0)
		return 0;
	return (uint8_t)(s | code);
}

uint8_t
fp_f16_to_f8(uint16_t h, Fp8Format fmt, int scale, FpOverflow ov,
             unsigned *flags)
{
	if (fp_f16_issnan(h))
		*flags |= FP_FLAG_INV;
	return fp_f64_to_f8(fp_f16_to_f64(h), fmt, scale, ov, flags);
}

/* Classification. */

static FpClass
class_of(int neg, int nan, int snan, int inf, int zero, int sub)
{
	if (nan)
		return snan ? FP_CLASS_SNAN : FP_CLASS_QNAN;
	if (inf)
		return neg ? FP_CLASS_NEG_INF : FP_CLASS_POS_INF;
	if (zero)
		return neg ? FP_CLASS_NEG_ZERO : FP_CLASS_POS_ZERO;
	if (sub)
		return neg ? FP_CLASS_NEG_SUBNORMAL : FP_CLASS_POS_SUBNORMAL;
	return neg ? FP_CLASS_NEG_NORMAL : FP_CLASS_POS_NORMAL;
}

FpClass
fp_class_f32(uint32_t f)
{
	uint32_t e = (f >> 23) & 0xff, m = f & 0x7fffff;
	return class_of(f >> 31, e == 0xff && m, fp_f32_issnan(f),
	                e == 0xff && !m, !e && !m, !e && m);
}

FpClass
fp_class_f16(uint16_t h)
{
	unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
	return class_of(h >> 15, e == 0x1f && m, fp_f16_issnan(h),
	                e == 0x1f && !m, !e && !m, !e && m);
}

FpClass
fp_class_f8(uint8_t q, Fp8Format fmt)
{
	int mb = f8fmt(fmt)->p - 1;
	unsigned e = (q & 0x7f) >> mb;
	return class_of(q >> 7, q == FP8_NAN, 0, 0, q == 0, !e && (q & 0x7f));
}

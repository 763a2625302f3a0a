/*
 * fp.c - the IPU's floating-point formats (see fp.h).
 *
 * Every narrowing goes through one routine, round_fmt(): the exact value is
 * held in a double (binary16 sums and products, binary32 values, FP8 values
 * and their power-of-two scalings are all exact in binary64), split into an
 * integer significand and a fraction of an ulp at the target precision,
 * and rounded by the mode. Binary32 arithmetic itself is the host's SSE
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

float
fp_f32_float(uint32_t bits)
{
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

uint32_t
fp_float_f32(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

int
fp_f32_isnan(uint32_t f)
{
	return (f & 0x7fffffffu) > 0x7f800000u;
}

int
fp_f32_issnan(uint32_t f)
{
	return fp_f32_isnan(f) && !(f & 0x00400000u);
}

int
fp_f16_isnan(uint16_t h)
{
	return (h & 0x7fff) > 0x7c00;
}

int
fp_f16_issnan(uint16_t h)
{
	return fp_f16_isnan(h) && !(h & 0x0200);
}

static double
max_finite(const Fmt *f)
{
	return ldexp(2.0 - ldexp(1.0, 1 - f->p), f->emax);
}

/* Whether a magnitude t + fr (t integral, 0 <= fr < 1) rounds up to t + 1
 * in this mode; neg is the sign of the value. */
static int
rounds_up(FpRound mode, int neg, double t, double fr, uint32_t rbits)
{
	switch (mode) {
	case FP_RUP:
		return !neg && fr > 0;
	case FP_RDN:
		return neg && fr > 0;
	case FP_RTZ:
		return 0;
	case FP_RNA:
		return fr >= 0.5;
	case FP_RSR:
		return fr > ldexp((double)rbits, -32);
	case FP_RNE:
	default:
		return fr > 0.5 || (fr == 0.5 && fmod(t, 2.0) != 0);
	}
}

/* Round the finite nonzero x to format f with unbounded exponent range;
 * *over is set when the magnitude exceeds the largest finite value. */
static double
round_fmt(double x, const Fmt *f, FpRound mode, uint32_t rbits, int *over)
{
	int neg = signbit(x) != 0;
	double a = fabs(x);
	int k;
	frexp(a, &k);
	int e = k - 1 < f->emin ? f->emin : k - 1;
	int sh = e - f->p + 1; /* the ulp is 2^sh */
	double q = ldexp(a, -sh);
	double t = floor(q);
	double fr = q - t; /* exact: q has fewer than 53 bits above 2^0 */
	double r = ldexp(t + rounds_up(mode, neg, t, fr, rbits), sh);
	*over = r > max_finite(f);
	return neg ? -r : r;
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

/* Encode a value exactly representable in binary16 (|r| <= 65504). */
static uint16_t
enc_f16(double r)
{
	uint16_t s = signbit(r) ? 0x8000 : 0;
	double a = fabs(r);
	if (a == 0)
		return s;
	int k;
	frexp(a, &k);
	int e = k - 1;
	if (e < -14)
		return (uint16_t)(s | (uint16_t)ldexp(a, 24));
	uint32_t m = (uint32_t)ldexp(a, 10 - e) - 1024;
	return (uint16_t)(s | (uint32_t)(e + 15) << 10 | m);
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
	double r = round_fmt(x, &FMT_F16, mode, rbits, &over);
	if (!over)
		return enc_f16(r);
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
	double r = round_fmt(x, &FMT_F32, mode, rbits, &over);
	if (!over)
		return fp_float_f32((float)r); /* exact */
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

double
fp_f16_to_f64(uint16_t h)
{
	int e = (h >> 10) & 0x1f;
	int m = h & 0x3ff;
	double v;
	if (e == 0x1f)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, -24);
	else
		v = ldexp(m + 1024, e - 25);
	return h & 0x8000 ? -v : v;
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

uint32_t
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
	if (!isfinite(x) || fabs(x) >= 0x1p52)
		return x;
	int neg = signbit(x) != 0;
	double a = fabs(x), t = floor(a), fr = a - t;
	t += rounds_up(mode == FP_RSR ? FP_RNE : mode, neg, t, fr, 0);
	return neg ? -t : t;
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
	double v =
	    e ? ldexp(m + (1 << mb), e - bias - mb) : ldexp(m, f->emin - mb);
	v = ldexp(v, scale);
	return q & 0x80 ? -v : v;
}

uint16_t
fp_f8_to_f16(uint8_t q, Fp8Format fmt, int scale, FpOverflow ov,
             unsigned *flags)
{
	return fp_f64_to_f16(fp_f8_to_f64(q, fmt, scale), FP_RNE, 0, ov, flags);
}

uint32_t
fp_f8_to_f32(uint8_t q, Fp8Format fmt, int scale, unsigned *flags)
{
	return fp_f64_to_f32(fp_f8_to_f64(q, fmt, scale), FP_RNE, 0, flags);
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
	const Fmt *f = f8fmt(fmt);
	int over;
	double r = round_fmt(ldexp(x, -scale), f, FP_RNE, 0, &over);
	if (over) {
		*flags |= FP_FLAG_OFLO;
		return ov == FP_OV_NAN ? FP8_NAN : (uint8_t)(s | 0x7f);
	}
	if (r == 0)
		return 0;
	int mb = f->p - 1, bias = 1 - f->emin;
	double a = fabs(r);
	int k;
	frexp(a, &k);
	int e = k - 1;
	unsigned code;
	if (e < f->emin)
		code = (unsigned)ldexp(a, mb - f->emin);
	else
		code = (unsigned)(e + bias) << mb |
		       ((unsigned)ldexp(a, mb - e) - (1u << mb));
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

uint8_t
fp_f32_to_f8(uint32_t f, Fp8Format fmt, int scale, FpOverflow ov,
             unsigned *flags)
{
	if (fp_f32_issnan(f))
		*flags |= FP_FLAG_INV;
	return fp_f64_to_f8(fp_f32_float(f), fmt, scale, ov, flags);
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

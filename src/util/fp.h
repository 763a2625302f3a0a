/*
 * fp.h - floating-point number formats of the IPU: IEEE binary32 and
 * binary16, the two FP8 formats F143 and F152 with a power-of-two scale,
 * rounding in every mode the tile knows (including stochastic rounding
 * from caller-supplied random bits), saturation or NaN on overflow,
 * conversions to and from integers and IEEE 754-2008 class codes.
 *
 * Pure functions on bit patterns, independent of the emulator, so that the
 * host side (quantisation, reference checks) computes exactly what the
 * tile computes. Exceptions are reported as FP_FLAG_* bits or-ed into
 * *flags (the bit positions of $FP_STS); flags may not be NULL.
 * docs/emulator-float.md explains every decision taken here.
 */
#ifndef IPU_FP_H
#define IPU_FP_H

#include <stdint.h>
#include <string.h>

/* Rounding modes. Values 0..4 are the f32int immediate and (DECISION) the
 * $FP_CTL.RND encoding: the Colossus LLVM backend emits f32int imm 0 for
 * rint/nearbyint, 1 for ceil, 2 for floor, 3 for trunc, 4 for round. */
typedef enum {
	FP_RNE = 0, /* nearest, ties to even */
	FP_RUP = 1, /* toward +infinity */
	FP_RDN = 2, /* toward -infinity */
	FP_RTZ = 3, /* toward zero */
	FP_RNA = 4, /* nearest, ties away from zero */
	FP_RSR = 5, /* stochastic: away from zero with probability = the
	               discarded fraction, using 32 random bits */
} FpRound;

/* What a finite result too large for the format becomes. */
typedef enum {
	FP_OV_IEEE, /* IEEE: infinity or the largest finite, per mode */
	FP_OV_SAT,  /* the largest finite value of the right sign */
	FP_OV_NAN,  /* NaN ($FP_CTL.NANOO) */
} FpOverflow;

/* Exception flags, bit positions of $FP_STS / $FP_CTL trap enables. */
enum {
	FP_FLAG_INV = 1 << 0,
	FP_FLAG_DIV0 = 1 << 1,
	FP_FLAG_OFLO = 1 << 2,
};

/* IEEE 754-2008 section 5.7.2 classes, numbered in the standard's order
 * (DECISION: the tile's numbering is not public). */
typedef enum {
	FP_CLASS_SNAN = 0,
	FP_CLASS_QNAN = 1,
	FP_CLASS_NEG_INF = 2,
	FP_CLASS_NEG_NORMAL = 3,
	FP_CLASS_NEG_SUBNORMAL = 4,
	FP_CLASS_NEG_ZERO = 5,
	FP_CLASS_POS_ZERO = 6,
	FP_CLASS_POS_SUBNORMAL = 7,
	FP_CLASS_POS_NORMAL = 8,
	FP_CLASS_POS_INF = 9,
} FpClass;

/* FP8 formats; the value is the metadata bit 7 and the $FP_NFMT field
 * (model.md 7.2, poplibs copies metadata bit 7 into $FP_INFMT). */
typedef enum {
	FP8_F143 = 0, /* 1-4-3, bias 8, max 240 */
	FP8_F152 = 1, /* 1-5-2, bias 16, max 57344 */
} Fp8Format;

enum {
	FP16_QNAN = 0x7e00,      /* canonical NaN results */
	FP32_QNAN = 0x7fc00000u, /* canonical NaN results */
	FP8_NAN = 0x80,          /* the only FP8 NaN */
	FP16_MAX = 0x7bff,       /* 65504 */
};

/* Bit patterns <-> host values (binary32 is the host float). These and
 * the predicates are inline: the emulator uses them on every operand. */
static inline float
fp_f32_float(uint32_t bits)
{
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

static inline uint32_t
fp_float_f32(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

/* Predicates. */
static inline int
fp_f32_isnan(uint32_t f)
{
	return (f & 0x7fffffffu) > 0x7f800000u;
}

static inline int
fp_f32_issnan(uint32_t f)
{
	return fp_f32_isnan(f) && !(f & 0x00400000u);
}

static inline int
fp_f16_isnan(uint16_t h)
{
	return (h & 0x7fff) > 0x7c00;
}

static inline int
fp_f16_issnan(uint16_t h)
{
	return fp_f16_isnan(h) && !(h & 0x0200);
}

/* Round the exact value x to binary16. NaN gives FP16_QNAN (no flag: the
 * caller knows whether an input was a NaN); infinities pass through. */
uint16_t fp_f64_to_f16(double x, FpRound mode, uint32_t rbits, FpOverflow ov,
                       unsigned *flags);
/* Round x to binary32 (IEEE overflow). */
uint32_t fp_f64_to_f32(double x, FpRound mode, uint32_t rbits, unsigned *flags);
/* binary32 -> binary16; a signalling NaN raises INV. */
uint16_t fp_f32_to_f16(uint32_t f, FpRound mode, uint32_t rbits, FpOverflow ov,
                       unsigned *flags);
/* fp_f32_to_f16 in its most common use, nearest even with IEEE overflow,
 * inline for zeros and results in the normal range (the integer rounding
 * of round_code, specialised), the rest by fp_f32_to_f16. */
static inline uint16_t
fp_f32_to_f16_rne(uint32_t f, unsigned *flags)
{
	uint32_t s = (f >> 16) & 0x8000u, a = f & 0x7fffffffu;
	if (a == 0)
		return (uint16_t)s;
	if (a >= 0x38800000u && a < 0x477ff000u) { /* [2^-14, 65520) */
		uint32_t r = (a - 0x38000000u) >> 13, rem = a & 0x1fffu;
		r += rem > 0x1000u || (rem == 0x1000u && (r & 1));
		return (uint16_t)(s | r);
	}
	return fp_f32_to_f16(f, FP_RNE, 0, FP_OV_IEEE, flags);
}

/* fp_f64_to_f16 with nearest even, inline for zeros and results in the
 * normal range, the rest by fp_f64_to_f16 (ov applies there). */
static inline uint16_t
fp_f64_to_f16_rne(double x, FpOverflow ov, unsigned *flags)
{
	uint64_t b;
	memcpy(&b, &x, 8);
	uint32_t s = (uint32_t)(b >> 48) & 0x8000u;
	uint64_t a = b & 0x7fffffffffffffffull;
	if (a == 0)
		return (uint16_t)s;
	/* [2^-14, 65520): rebias the exponent (1023 -> 15), keep 10 bits */
	if (a >= 0x3f10000000000000ull && a < 0x40effe0000000000ull) {
		uint64_t r = (a - 0x3f00000000000000ull) >> 42,
		         rem = a & ((1ull << 42) - 1), half = 1ull << 41;
		r += rem > half || (rem == half && (r & 1));
		return (uint16_t)(s | r);
	}
	return fp_f64_to_f16(x, FP_RNE, 0, ov, flags);
}

/* fp_f64_to_f32 with nearest even: the host's conversion (binary32 is
 * the host float, rounding to nearest even, subnormals kept) when it gives
 * a finite value, else fp_f64_to_f32 (NaN, infinities, overflow and its
 * flag). test_fp checks it against fp_f64_to_f32. */
static inline uint32_t
fp_f64_to_f32_rne(double x, unsigned *flags)
{
	float f = (float)x;
	uint32_t b;
	memcpy(&b, &f, 4);
	if ((b & 0x7f800000u) != 0x7f800000u)
		return b;
	return fp_f64_to_f32(x, FP_RNE, 0, flags);
}

/* binary16 -> exact values. NaNs become the host's default NaN (quiet,
 * positive payload 0) with the sign of h. Inline, by bit manipulation: the
 * emulator converts every f16 operand with it. */
static inline double
fp_f16_to_f64(uint16_t h)
{
	uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ffu;
	uint64_t s = (uint64_t)(h & 0x8000u) << 48, b;
	if (e == 0) { /* zero or subnormal: m * 2^-24, exact */
		double v = (double)m * 0x1p-24;
		return h & 0x8000u ? -v : v;
	}
	if (e == 0x1f)
		b = s | (m ? 0x7ff8000000000000ull : 0x7ff0000000000000ull);
	else /* rebias the exponent (15 -> 1023), widen the fraction */
		b = s | (uint64_t)(e + 1008) << 52 | (uint64_t)m << 42;
	double v;
	memcpy(&v, &b, 8);
	return v;
}
uint32_t fp_f16_to_f32(uint16_t h, unsigned *flags);

/* binary16 arithmetic, computed exactly and rounded once. */
uint16_t fp_f16_add(uint16_t a, uint16_t b, FpRound mode, uint32_t rbits,
                    FpOverflow ov, unsigned *flags);
uint16_t fp_f16_sub(uint16_t a, uint16_t b, FpRound mode, uint32_t rbits,
                    FpOverflow ov, unsigned *flags);
uint16_t fp_f16_mul(uint16_t a, uint16_t b, FpRound mode, uint32_t rbits,
                    FpOverflow ov, unsigned *flags);
/* A binary16 result from its exact (or double-rounded, for transcendental
 * functions) value r and the n inputs it came from: NaN handling and INV
 * as IEEE (sNaN input, or NaN from non-NaN inputs), then rounding. */
uint16_t fp_f16_result(double r, const uint16_t *in, int n, FpRound mode,
                       uint32_t rbits, FpOverflow ov, unsigned *flags);

/* binary32 arithmetic, round to nearest even (the host's SSE arithmetic),
 * canonical NaN results, IEEE flags. */
uint32_t fp_f32_add(uint32_t a, uint32_t b, unsigned *flags);
uint32_t fp_f32_sub(uint32_t a, uint32_t b, unsigned *flags);
uint32_t fp_f32_mul(uint32_t a, uint32_t b, unsigned *flags);
uint32_t fp_f32_div(uint32_t a, uint32_t b, unsigned *flags);
uint32_t fp_f32_sqrt(uint32_t a, unsigned *flags);
uint32_t fp_f32_fma(uint32_t a, uint32_t b, uint32_t c, unsigned *flags);

/* Integers. Out-of-range and NaN inputs saturate (NaN gives 0) and raise
 * INV. */
int32_t fp_f32_to_i32(uint32_t f, FpRound mode, unsigned *flags);
uint32_t fp_f32_to_u32(uint32_t f, FpRound mode, unsigned *flags);
uint32_t fp_i32_to_f32(int32_t v, FpRound mode);
uint32_t fp_u32_to_f32(uint32_t v, FpRound mode);
/* Round to an integral binary32 value (f32int). */
uint32_t fp_f32_round_int(uint32_t f, FpRound mode, unsigned *flags);

/* FP8 with a power-of-two scale: reading gives decode(q) * 2^scale,
 * writing encodes x * 2^-scale. Writing rounds to nearest even; a value
 * that rounds to zero (either sign) is 0x00; NaN is 0x80; overflow and
 * infinities give 0x80 (FP_OV_NAN) or the largest magnitude (otherwise),
 * and overflow of a finite value raises OFLO. */
double fp_f8_to_f64(uint8_t q, Fp8Format fmt, int scale); /* NaN for 0x80 */
/* The smallest scale (in -32..31) at which F143 holds max_abs without
 * saturating: 240 * 2^scale >= max_abs; 0 for max_abs 0 or NaN. */
int fp_f8_f143_scale(double max_abs);
uint16_t fp_f8_to_f16(uint8_t q, Fp8Format fmt, int scale, FpOverflow ov,
                      unsigned *flags);
uint8_t fp_f64_to_f8(double x, Fp8Format fmt, int scale, FpOverflow ov,
                     unsigned *flags);
uint8_t fp_f16_to_f8(uint16_t h, Fp8Format fmt, int scale, FpOverflow ov,
                     unsigned *flags);
/* fp_f64_to_f8, inline for results in the normal range (the bulk of a
 * model's weights), the rest by fp_f64_to_f8. The normal range is
 * [2^emin, largest + half an ulp) of x 2^-scale; there the code is the
 * binary64 bits with the exponent rebiased (1023 -> 1 - emin) and the
 * significand rounded to p - 1 bits, nearest even, a carry into the next
 * binade coming out right. test_fp checks it against fp_f64_to_f8 and a
 * brute-force encoder. */
static inline uint8_t
fp_f64_to_f8_nr(double x, Fp8Format fmt, int scale, FpOverflow ov,
                unsigned *flags)
{
	/* p (significand bits) and emin: F143 4, -7; F152 3, -15 */
	int p = fmt == FP8_F152 ? 3 : 4, emin = fmt == FP8_F152 ? -15 : -7;
	int emax = -emin, sh = 53 - p;
	uint64_t b, k = (uint64_t)(1023 - scale) << 52;
	double y, two = 0; /* 2^-scale: |scale| <= 32 */
	memcpy(&two, &k, 8);
	y = x * two;
	memcpy(&b, &y, 8);
	uint64_t a = b & 0x7fffffffffffffffull;
	uint64_t lo = (uint64_t)(1023 + emin) << 52;
	uint64_t hi = ((uint64_t)(1023 + emax) << 52) |
	              (((1ull << p) - 1) << (sh - 1)); /* max + half an ulp */
	if (a >= lo && a < hi) {
		uint64_t r = (a - ((uint64_t)(1022 + emin) << 52)) >> sh;
		uint64_t rem = a & ((1ull << sh) - 1), half = 1ull << (sh - 1);
		r += rem > half || (rem == half && (r & 1));
		return (uint8_t)((b >> 56 & 0x80) | r);
	}
	return fp_f64_to_f8(x, fmt, scale, ov, flags);
}
/* The 6-bit two's complement scale field (bits 5..0) as an int. */
int fp_scale6(uint32_t field);

/* Classification. FP8 has no infinities; 0x80 is a quiet NaN. */
FpClass fp_class_f32(uint32_t f);
FpClass fp_class_f16(uint16_t h);
FpClass fp_class_f8(uint8_t q, Fp8Format fmt);

#endif

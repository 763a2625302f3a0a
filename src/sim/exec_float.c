/*
 * exec_float.c - semantics of the aux-lane floating-point instructions:
 * f32 / f16 element-wise arithmetic, min/max, compares, classification,
 * transcendental functions and conversions (including FP8 on ipu21).
 * Accumulator ($AACC) instructions are in exec_acc.c, random numbers and
 * the PRNG in exec_rand.c; the number formats live in util/fp.c.
 *
 * Numerics (docs/emulator-float.md has the sources and every DECISION):
 *   - f32 results: IEEE binary32, round to nearest even, subnormals kept,
 *     canonical NaN 0x7fc00000.
 *   - f16 results: the exact value (computed in double) rounded once, by
 *     $FP_CTL.RND, or stochastically when $FP_CTL.ESR is set; overflow
 *     gives NaN when $FP_CTL.NANOO is set, else saturates to +-65504.
 *   - INV, DIV0 and OFLO are or-ed into $FP_STS where IEEE raises them;
 *     when the matching $FP_CTL trap enable is set the instruction faults
 *     (FP exception) and writes nothing.
 */
#include "fpsim.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Floating-point environment of the issuing context. */

/* $FP_CTL.RND as FpRound: 5..7 are nearest even (DECISION). */
static inline FpRound
ctl_rnd(uint32_t ctl)
{
	unsigned rnd = (ctl >> 16) & 7;
	return rnd <= FP_RNA ? (FpRound)rnd : FP_RNE;
}

/* $FP_CTL.ESR: stochastic rounding on. */
static inline int
ctl_sr(uint32_t ctl)
{
	return (ctl >> 19) & 1;
}

FpEnv
fpenv(Exec *e)
{
	uint32_t ctl = e->c->fp_ctl;
	FpEnv v = {0};
	v.rnd = ctl_rnd(ctl);
	v.sr = ctl_sr(ctl);
	v.ov = (ctl >> 20) & 1 ? FP_OV_NAN : FP_OV_SAT;
	v.mode = v.sr ? FP_RSR : v.rnd;
	return v;
}

uint32_t
fpenv_rbits(Exec *e, FpEnv *v)
{
	if (!v->sr)
		return 0;
	if (!v->npool) {
		v->pool = sim_prng_next(e->c);
		v->npool = 2;
	}
	return (uint32_t)(v->pool >> (32 * (2 - v->npool--)));
}

int
fpenv_finish(Exec *e, FpEnv *v)
{
	unsigned f = v->flags & 7;
	e->c->fp_sts |= f;
	unsigned trap = f & e->c->fp_ctl & 7;
	if (!trap)
		return 1;
	sim_fault(e, FAULT_FP, 0, "%s raised%s%s%s with the trap enabled",
	          e->d->mnemonic, trap & FP_FLAG_INV ? " INV" : "",
	          trap & FP_FLAG_DIV0 ? " DIV0" : "",
	          trap & FP_FLAG_OFLO ? " OFLO" : "");
	return 0;
}

/* Operands. */

int
op_regs(const Exec *e, int i)
{
	switch (e->d->op[i].kind) {
	case OPK_AP:
		return 2;
	case OPK_AQ:
		return 4;
	default:
		return 1;
	}
}

void
get16(const Exec *e, int i, int n, uint16_t *h)
{
	Decor d = e->d->op[i].decor;
	int r = e->in->op[i];
	if (d == DEC_BL || d == DEC_BU) {
		uint16_t b = (uint16_t)(sim_ra(e, r) >> (d == DEC_BU ? 16 : 0));
		for (int k = 0; k < n; k++)
			h[k] = b;
		return;
	}
	/* a register's two halves at a time (n is odd only for one lane) */
	for (int k = 0; k < n; k += 2) {
		uint32_t w = sim_ra(e, r + k / 2);
		h[k] = (uint16_t)w;
		if (k + 1 < n)
			h[k + 1] = (uint16_t)(w >> 16);
	}
}

void
get32(const Exec *e, int i, int n, uint32_t *w)
{
	int r = e->in->op[i];
	int bcast = e->d->op[i].decor == DEC_B;
	for (int k = 0; k < n; k++)
		w[k] = sim_ra(e, bcast ? r : r + k);
}

void
put16(Exec *e, int i, int n, const uint16_t *h)
{
	for (int k = 0; k < n; k += 2)
		sim_wa(e, e->in->op[i] + k / 2,
		       (uint32_t)h[k] | (uint32_t)h[k + 1] << 16);
}

void
put32(Exec *e, int i, int n, const uint32_t *w)
{
	for (int k = 0; k < n; k++)
		sim_wa(e, e->in->op[i] + k, w[k]);
}

/* Comparisons and min/max on exact values. */

typedef enum {
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_DIV,
	OP_MIN,
	OP_MAX,
	OP_ABSMAX,
	OP_ABSADD,
	OP_CMPEQ,
	OP_CMPNE,
	OP_CMPLT,
	OP_CMPLE,
	OP_CMPGT,
	OP_CMPGE,
} BinOp;

/* a < b with -0 < +0, so that min/max are deterministic on zeros. */
static int
less(double a, double b)
{
	return a < b || (a == 0 && b == 0 && signbit(a) && !signbit(b));
}

/* Compare: 1 true / 0 false. lt/le/gt/ge are IEEE signalling predicates
 * (INV on any NaN), eq/ne quiet (INV only on a signalling NaN, which the
 * caller checks). */
static int
compare(BinOp op, double a, double b, unsigned *flags)
{
	int unord = isnan(a) || isnan(b);
	if (unord && op != OP_CMPEQ && op != OP_CMPNE)
		*flags |= FP_FLAG_INV;
	switch (op) {
	case OP_CMPEQ:
		return a == b;
	case OP_CMPNE:
		return !(a == b);
	case OP_CMPLT:
		return a < b;
	case OP_CMPLE:
		return a <= b;
	case OP_CMPGT:
		return a > b;
	default:
		return a >= b;
	}
}

/* minNum/maxNum (IEEE 754-2008): a NaN loses to a number. Returns which
 * input wins (0 = a, 1 = b), or -1 if both are NaN. */
static int
pick(BinOp op, double a, double b)
{
	if (isnan(a))
		return isnan(b) ? -1 : 1;
	if (isnan(b))
		return 0;
	return op == OP_MIN ? less(b, a) : less(a, b);
}

/* f16 lanes. */

static uint16_t
f16_binop(Exec *e, FpEnv *v, BinOp op, uint16_t a, uint16_t b)
{
	double x = fp_f16_to_f64(a), y = fp_f16_to_f64(b);
	/* The fast path of add, sub and mul in nearest even: finite
	 * operands, so an exact finite result that fp_f16_result would hand
	 * straight to the rounding; fp_f64_to_f16_rne does that rounding. */
	if (sim_path != SIM_PLAIN && v->mode == FP_RNE &&
	    (a & 0x7c00) != 0x7c00 && (b & 0x7c00) != 0x7c00) {
		if (op == OP_ADD)
			return fp_f64_to_f16_rne(x + y, v->ov, &v->flags);
		if (op == OP_SUB)
			return fp_f64_to_f16_rne(x - y, v->ov, &v->flags);
		if (op == OP_MUL)
			return fp_f64_to_f16_rne(x * y, v->ov, &v->flags);
	}
	if (fp_f16_issnan(a) || fp_f16_issnan(b))
		v->flags |= FP_FLAG_INV;
	switch (op) {
	case OP_ADD:
		return fp_f16_add(a, b, v->mode, fpenv_rbits(e, v), v->ov,
		                  &v->flags);
	case OP_SUB:
		return fp_f16_sub(a, b, v->mode, fpenv_rbits(e, v), v->ov,
		                  &v->flags);
	case OP_MUL:
		return fp_f16_mul(a, b, v->mode, fpenv_rbits(e, v), v->ov,
		                  &v->flags);
	case OP_ABSADD:
		return fp_f16_add(a & 0x7fff, b & 0x7fff, v->mode,
		                  fpenv_rbits(e, v), v->ov, &v->flags);
	case OP_ABSMAX:
		a &= 0x7fff, b &= 0x7fff;
		x = fabs(x), y = fabs(y);
		/* fall through */
	case OP_MIN:
	case OP_MAX: {
		int w = pick(op == OP_MIN ? OP_MIN : OP_MAX, x, y);
		return w < 0 ? FP16_QNAN : w ? b : a;
	}
	default:
		return compare(op, x, y, &v->flags) ? 0xffff : 0;
	}
}

/* dst, src0 (may broadcast :BL/:BU), src1; 2 or 4 lanes. */
static void
bin16(Exec *e, BinOp op)
{
	int n = 2 * op_regs(e, 0);
	uint16_t a[4], b[4], r[4];
	get16(e, 1, n, a);
	get16(e, 2, n, b);
	FpEnv v = fpenv(e);
	for (int k = 0; k < n; k++)
		r[k] = f16_binop(e, &v, op, a[k], b[k]);
	if (fpenv_finish(e, &v))
		put16(e, 0, n, r);
}

/* f32 lanes. */

static uint32_t
f32_binop(BinOp op, uint32_t a, uint32_t b, unsigned *flags)
{
	double x = fp_f32_float(a), y = fp_f32_float(b);
	if (op >= OP_MIN && (fp_f32_issnan(a) || fp_f32_issnan(b)))
		*flags |= FP_FLAG_INV;
	switch (op) {
	case OP_ADD:
		return fp_f32_add(a, b, flags);
	case OP_SUB:
		return fp_f32_sub(a, b, flags);
	case OP_MUL:
		return fp_f32_mul(a, b, flags);
	case OP_DIV:
		return fp_f32_div(a, b, flags);
	case OP_ABSADD:
		return fp_f32_add(a & 0x7fffffffu, b & 0x7fffffffu, flags);
	case OP_ABSMAX:
		a &= 0x7fffffffu, b &= 0x7fffffffu;
		x = fabs(x), y = fabs(y);
		/* fall through */
	case OP_MIN:
	case OP_MAX: {
		int w = pick(op == OP_MIN ? OP_MIN : OP_MAX, x, y);
		return w < 0 ? FP32_QNAN : w ? b : a;
	}
	default:
		return compare(op, x, y, flags) ? 0xffffffffu : 0;
	}
}

/* dst, src0 (may broadcast :B), src1; 1 or 2 lanes. */
static void
bin32(Exec *e, BinOp op)
{
	int n = op_regs(e, 0);
	uint32_t a[2], b[2], r[2];
	get32(e, 1, n, a);
	get32(e, 2, n, b);
	FpEnv v = fpenv(e);
	for (int k = 0; k < n; k++)
		r[k] = f32_binop(op, a[k], b[k], &v.flags);
	if (fpenv_finish(e, &v))
		put32(e, 0, n, r);
}

#define BIN16(mn, op)                                                          \
	void exec_##mn(Exec *e)                                                \
	{                                                                      \
		bin16(e, op);                                                  \
	}
#define BIN32(mn, op)                                                          \
	void exec_##mn(Exec *e)                                                \
	{                                                                      \
		bin32(e, op);                                                  \
	}

BIN16(f16v2add, OP_ADD)
BIN16(f16v4add, OP_ADD)
BIN16(f16v2sub, OP_SUB)
BIN16(f16v4sub, OP_SUB)
BIN16(f16v2mul, OP_MUL)
BIN16(f16v4mul, OP_MUL)

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* fast_bin16's lanes by F16C, in f32 (where sim_use_avx2): 0 if a lane
 * overflows (an infinity out of finite operands; the scalar lanes then
 * saturate or give NaN and raise OFLO as the model says). A product of
 * halves is exact in f32 (22 significant bits). A sum or difference is
 * rounded twice, to f32 then to f16, both to nearest even, which gives
 * the single rounding of the exact sum because f32's 24 bits are at least
 * 2 x 11 + 2 (Figueroa, "When is double rounding innocuous?", 1995); one
 * below 2^-13 in magnitude is a multiple of 2^-24 with at most 11 bits,
 * exact in f32. */
__attribute__((target("f16c"))) static int
f16c_lanes(BinOp op, uint64_t a, uint64_t b, uint64_t *r)
{
	__m128 x = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)a));
	__m128 y = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)b));
	__m128 z = op == OP_ADD   ? _mm_add_ps(x, y)
	           : op == OP_SUB ? _mm_sub_ps(x, y)
	                          : _mm_mul_ps(x, y);
	uint64_t v = (uint64_t)_mm_cvtsi128_si64(
	    _mm_cvtps_ph(z, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	if (sim_f16_special(v))
		return 0;
	*r = v;
	return 1;
}

/* Four f32 words to f16 at nearest even by F16C (where sim_use_avx2): 0
 * if a word has the all-ones exponent (NaN or infinity) or a result does
 * (overflow); else the single rounding to nearest even of each value,
 * subnormals kept, which is what fp_f64_to_f16_rne does with it exactly
 * widened to double, raising no flag. */
__attribute__((target("f16c"))) static int
f16c_from_f32(const uint32_t *x, uint64_t *r)
{
	__m128i w = _mm_loadu_si128((const __m128i *)(const void *)x);
	__m128i e = _mm_set1_epi32(0x7f800000);
	if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_and_si128(w, e), e)))
		return 0;
	uint64_t v = (uint64_t)_mm_cvtsi128_si64(
	    _mm_cvtps_ph(_mm_castsi128_ps(w),
	                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	if (sim_f16_special(v))
		return 0;
	*r = v;
	return 1;
}
#else
static int
f16c_lanes(BinOp op, uint64_t a, uint64_t b, uint64_t *r)
{
	(void)op, (void)a, (void)b, (void)r;
	return 0;
}

static int
f16c_from_f32(const uint32_t *x, uint64_t *r)
{
	(void)x, (void)r;
	return 0;
}
#endif

/* The lanes of a 2-operand f16 instruction's sources as get16 reads them
 * (quad: 4 lanes, f16v4*, else 2; src0 may broadcast :BL/:BU): src0's in
 * *a, src1's in *b, lane k in bits 16k.. (a broadcast fills all four). */
static inline __attribute__((always_inline)) void
bin16_operands(const Exec *e, int quad, uint64_t *a, uint64_t *b)
{
	const Insn *in = e->in;
	int r1 = in->op[1], r2 = in->op[2];
	Decor dc = e->d->op[1].decor;
	*b = sim_ra(e, r2);
	if (dc == DEC_BL || dc == DEC_BU) {
		uint64_t h =
		    (uint16_t)(sim_ra(e, r1) >> (dc == DEC_BU ? 16 : 0));
		*a = h * 0x0001000100010001ull;
	} else {
		*a = sim_ra(e, r1);
		if (quad)
			*a |= (uint64_t)sim_ra(e, r1 + 1) << 32;
	}
	if (quad)
		*b |= (uint64_t)sim_ra(e, r2 + 1) << 32;
}

/* The lanes r into the destination (quad: a pair; direct: as sim_put). */
static inline __attribute__((always_inline)) void
bin16_result(Exec *e, int quad, uint64_t r, int direct)
{
	int d = e->in->op[0];
	sim_put_a(e, d, (uint32_t)r, direct);
	if (quad)
		sim_put_a(e, d + 1, (uint32_t)(r >> 32), direct);
}

/* The fast forms of f16 add, sub and mul (sim.h, SIM_FAST_FORMS): the case
 * f16_binop already takes apart, nearest even with no infinity or NaN among
 * the operands, for the whole instruction at once (quad: 4 lanes, f16v4*,
 * whose destination is a pair; else 2), the lanes read straight from the
 * registers as get16 reads them; anything else runs bin16. The exact
 * result (in double) rounds as f16_binop rounds it. f16c: the AVX2 path's
 * instance (sim_use_avx2), whose lanes go by F16C (f16c_lanes); one that
 * overflows runs bin16, whose lanes are f16_binop's fast case. direct: the
 * lanes written straight to the registers (sim.h, SIM_DIRECT_FORMS), after
 * fpenv_finish's trap; bin16 logs. */
static inline __attribute__((always_inline)) void
fast_bin16(Exec *e, BinOp op, int quad, int f16c, int direct)
{
	uint64_t a, b;
	bin16_operands(e, quad, &a, &b);
	int n = quad ? 4 : 2;
	uint64_t lanes = quad ? ~0ull : 0xffffffffull;
	/* fpenv's mode is FP_RNE: ESR clear and RND nearest even */
	uint32_t ctl = e->c->fp_ctl;
	if (ctl_sr(ctl) || ctl_rnd(ctl) != FP_RNE ||
	    sim_f16_special(a & lanes) || sim_f16_special(b & lanes)) {
		bin16(e, op);
		return;
	}
	uint64_t r = 0;
	if (f16c) {
		/* F16C lanes raise no flag: nothing for fpenv_finish */
		if (!f16c_lanes(op, a, b, &r)) {
			bin16(e, op);
			return;
		}
	} else {
		FpEnv v = fpenv(e);
		for (int k = 0; k < n; k++) {
			double x = fp_f16_to_f64((uint16_t)(a >> (16 * k))),
			       y = fp_f16_to_f64((uint16_t)(b >> (16 * k)));
			double z = op == OP_ADD   ? x + y
			           : op == OP_SUB ? x - y
			                          : x * y;
			r |= (uint64_t)fp_f64_to_f16_rne(z, v.ov, &v.flags)
			     << (16 * k);
		}
		if (!fpenv_finish(e, &v))
			return;
	}
	bin16_result(e, quad, r, direct);
}

/* Each fast form twice: fast_bin16's F16C instance, built for F16C
 * (f16c_<mn>: f16c_lanes inline), and its portable one; and so its direct
 * instance (f16cd_<mn> for F16C, direct_<mn>). */
#if defined(__x86_64__) && defined(__GNUC__)
#define F16C_TARGET __attribute__((target("f16c")))
#else
#define F16C_TARGET
#endif
#define FAST16_AS(mn, op, quad, name, f16c_name, direct)                       \
	F16C_TARGET static void f16c_name(Exec *e)                             \
	{                                                                      \
		fast_bin16(e, op, quad, 1, direct);                            \
	}                                                                      \
	void name(Exec *e)                                                     \
	{                                                                      \
		if (sim_use_avx2())                                            \
			f16c_name(e);                                          \
		else                                                           \
			fast_bin16(e, op, quad, 0, direct);                    \
	}
#define FAST16(mn, op, quad)                                                   \
	FAST16_AS(mn, op, quad, fast_##mn, f16c_##mn, 0)                       \
	FAST16_AS(mn, op, quad, direct_##mn, f16cd_##mn, 1)
FAST16(f16v2add, OP_ADD, 0)
FAST16(f16v4add, OP_ADD, 1)
FAST16(f16v2sub, OP_SUB, 0)
FAST16(f16v4sub, OP_SUB, 1)
FAST16(f16v2mul, OP_MUL, 0)
FAST16(f16v4mul, OP_MUL, 1)
BIN16(f16v2min, OP_MIN)
BIN16(f16v4min, OP_MIN)
BIN16(f16v2max, OP_MAX)
BIN16(f16v4max, OP_MAX)

/* A half's place in pick()'s order as an unsigned integer, for a half that
 * is no NaN: the sign bit flipped for a positive, every bit for a negative,
 * so that -0 comes below +0 as less() has it, and equal halves are equal. */
static inline uint16_t
f16_order(uint16_t h)
{
	return (uint16_t)(h & 0x8000 ? ~h : h | 0x8000);
}

/* The fast forms of f16 min and max (sim.h, SIM_FAST_FORMS): with no NaN
 * and no infinity among the lanes (sim_f16_special), each lane is pick()'s
 * choice by f16_order, and no flag is raised (f16_binop's min and max raise
 * only INV, for a signalling NaN), so fpenv_finish would write the lanes
 * as they are; anything else runs bin16. direct: as fast_bin16's. */
static inline __attribute__((always_inline)) void
fast_minmax16(Exec *e, BinOp op, int quad, int direct)
{
	uint64_t a, b;
	bin16_operands(e, quad, &a, &b);
	uint64_t lanes = quad ? ~0ull : 0xffffffffull;
	if (sim_f16_special(a & lanes) || sim_f16_special(b & lanes)) {
		bin16(e, op);
		return;
	}
	uint64_t r = 0;
	for (int k = 0; k < (quad ? 4 : 2); k++) {
		uint16_t x = (uint16_t)(a >> (16 * k)),
		         y = (uint16_t)(b >> (16 * k));
		int w = op == OP_MIN ? f16_order(y) < f16_order(x)
		                     : f16_order(x) < f16_order(y);
		r |= (uint64_t)(w ? y : x) << (16 * k);
	}
	bin16_result(e, quad, r, direct);
}

#define FASTMM16(mn, op, quad)                                                 \
	void fast_##mn(Exec *e)                                                \
	{                                                                      \
		fast_minmax16(e, op, quad, 0);                                 \
	}                                                                      \
	void direct_##mn(Exec *e)                                              \
	{                                                                      \
		fast_minmax16(e, op, quad, 1);                                 \
	}
FASTMM16(f16v2min, OP_MIN, 0)
FASTMM16(f16v4min, OP_MIN, 1)
FASTMM16(f16v2max, OP_MAX, 0)
FASTMM16(f16v4max, OP_MAX, 1)
BIN16(f16v2absmax, OP_ABSMAX)
BIN16(f16v4absmax, OP_ABSMAX)
BIN16(f16v2absadd, OP_ABSADD)
BIN16(f16v4absadd, OP_ABSADD)
BIN16(f16v2cmpeq, OP_CMPEQ)
BIN16(f16v4cmpeq, OP_CMPEQ)
BIN16(f16v2cmpne, OP_CMPNE)
BIN16(f16v4cmpne, OP_CMPNE)
BIN16(f16v2cmplt, OP_CMPLT)
BIN16(f16v4cmplt, OP_CMPLT)
BIN16(f16v2cmple, OP_CMPLE)
BIN16(f16v4cmple, OP_CMPLE)
BIN16(f16v2cmpgt, OP_CMPGT)
BIN16(f16v4cmpgt, OP_CMPGT)
BIN16(f16v2cmpge, OP_CMPGE)
BIN16(f16v4cmpge, OP_CMPGE)

BIN32(f32add, OP_ADD)
BIN32(f32v2add, OP_ADD)
BIN32(f32sub, OP_SUB)
BIN32(f32v2sub, OP_SUB)
BIN32(f32mul, OP_MUL)
BIN32(f32v2mul, OP_MUL)

/* The fast forms of f32v2add, f32v2sub and f32v2mul (sim.h,
 * SIM_FAST_FORMS): the lanes read straight from the registers as get32
 * reads them, the host f32 operation fp_f32_add, fp_f32_sub and fp_f32_mul
 * make, taken as it is when no operand and no result has the all-ones
 * exponent: then fp_f32_result returns it unchanged and no flag can be
 * raised (a NaN needs a NaN or an infinity among the operands; an
 * infinity out of finite operands is OFLO). Anything else runs bin32.
 * direct: the pair written straight to the registers (sim.h,
 * SIM_DIRECT_FORMS); bin32 logs. */
static inline __attribute__((always_inline)) void
fast_bin32(Exec *e, BinOp op, int direct)
{
	const Insn *in = e->in;
	int r1 = in->op[1], r2 = in->op[2];
	uint32_t a0 = sim_ra(e, r1), b0 = sim_ra(e, r2);
	uint32_t a1 = e->d->op[1].decor == DEC_B ? a0 : sim_ra(e, r1 + 1);
	uint32_t b1 = sim_ra(e, r2 + 1);
	float x0 = fp_f32_float(a0), x1 = fp_f32_float(a1);
	float y0 = fp_f32_float(b0), y1 = fp_f32_float(b1);
	float z0 = op == OP_ADD ? x0 + y0 : op == OP_SUB ? x0 - y0 : x0 * y0;
	float z1 = op == OP_ADD ? x1 + y1 : op == OP_SUB ? x1 - y1 : x1 * y1;
	uint32_t w0 = fp_float_f32(z0), w1 = fp_float_f32(z1);
	if (f32_special(a0) | f32_special(a1) | f32_special(b0) |
	    f32_special(b1) | f32_special(w0) | f32_special(w1)) {
		bin32(e, op);
		return;
	}
	sim_put_a(e, in->op[0], w0, direct);
	sim_put_a(e, in->op[0] + 1, w1, direct);
}

#define FAST32(mn, op)                                                         \
	void fast_##mn(Exec *e)                                                \
	{                                                                      \
		fast_bin32(e, op, 0);                                          \
	}                                                                      \
	void direct_##mn(Exec *e)                                              \
	{                                                                      \
		fast_bin32(e, op, 1);                                          \
	}
FAST32(f32v2add, OP_ADD)
FAST32(f32v2sub, OP_SUB)
FAST32(f32v2mul, OP_MUL)

BIN32(f32div, OP_DIV)
BIN32(f32min, OP_MIN)
BIN32(f32v2min, OP_MIN)
BIN32(f32max, OP_MAX)
BIN32(f32v2max, OP_MAX)
BIN32(f32absmax, OP_ABSMAX)
BIN32(f32v2absmax, OP_ABSMAX)
BIN32(f32absadd, OP_ABSADD)
BIN32(f32v2absadd, OP_ABSADD)
BIN32(f32cmpeq, OP_CMPEQ)
BIN32(f32v2cmpeq, OP_CMPEQ)
BIN32(f32cmpne, OP_CMPNE)
BIN32(f32v2cmpne, OP_CMPNE)
BIN32(f32cmplt, OP_CMPLT)
BIN32(f32v2cmplt, OP_CMPLT)
BIN32(f32cmple, OP_CMPLE)
BIN32(f32v2cmple, OP_CMPLE)
BIN32(f32cmpgt, OP_CMPGT)
BIN32(f32v2cmpgt, OP_CMPGT)
BIN32(f32cmpge, OP_CMPGE)
BIN32(f32v2cmpge, OP_CMPGE)

/* clamp: min(max(x, lo), hi), lo/hi from the second source: the low and
 * high half of one register (f16), or a register pair (f32). */

static void
clamp16(Exec *e)
{
	int n = 2 * op_regs(e, 0);
	uint16_t x[4], lim[2], r[4];
	get16(e, 1, n, x);
	get16(e, 2, 2, lim);
	FpEnv v = fpenv(e);
	for (int k = 0; k < n; k++)
		r[k] =
		    f16_binop(e, &v, OP_MIN,
		              f16_binop(e, &v, OP_MAX, x[k], lim[0]), lim[1]);
	if (fpenv_finish(e, &v))
		put16(e, 0, n, r);
}

static void
clamp32(Exec *e)
{
	int n = op_regs(e, 0);
	uint32_t x[2], lim[2], r[2];
	get32(e, 1, n, x);
	get32(e, 2, 2, lim);
	FpEnv v = fpenv(e);
	for (int k = 0; k < n; k++)
		r[k] =
		    f32_binop(OP_MIN, f32_binop(OP_MAX, x[k], lim[0], &v.flags),
		              lim[1], &v.flags);
	if (fpenv_finish(e, &v))
		put32(e, 0, n, r);
}

void
exec_f16v2clamp(Exec *e)
{
	clamp16(e);
}

void
exec_f16v4clamp(Exec *e)
{
	clamp16(e);
}

void
exec_f32clamp(Exec *e)
{
	clamp32(e);
}

void
exec_f32v2clamp(Exec *e)
{
	clamp32(e);
}

/* maxc: lateral max of pairs. f16v2maxc writes its single result to both
 * halves (DECISION, like f32tof16); f16v4maxc writes max(h0,h1),
 * max(h2,h3). */
static void
maxc(Exec *e)
{
	int n = 2 * op_regs(e, 1);
	uint16_t x[4], r[2];
	get16(e, 1, n, x);
	FpEnv v = fpenv(e);
	r[0] = f16_binop(e, &v, OP_MAX, x[0], x[1]);
	r[1] = n == 4 ? f16_binop(e, &v, OP_MAX, x[2], x[3]) : r[0];
	if (fpenv_finish(e, &v))
		put16(e, 0, 2, r);
}

void
exec_f16v2maxc(Exec *e)
{
	maxc(e);
}

void
exec_f16v4maxc(Exec *e)
{
	maxc(e);
}

/* Lateral sums of f16 pairs to f32 (exact in double, rounded once). */
static void
sum16(Exec *e)
{
	int n = 2 * op_regs(e, 1);
	uint16_t x[4];
	uint32_t r[2];
	get16(e, 1, n, x);
	FpEnv v = fpenv(e);
	for (int k = 0; k < n / 2; k++) {
		uint16_t in[2] = {x[2 * k], x[2 * k + 1]};
		double s = fp_f16_to_f64(in[0]) + fp_f16_to_f64(in[1]);
		int nan = fp_f16_isnan(in[0]) || fp_f16_isnan(in[1]);
		if (fp_f16_issnan(in[0]) || fp_f16_issnan(in[1]) ||
		    (isnan(s) && !nan))
			v.flags |= FP_FLAG_INV;
		r[k] = fp_f64_to_f32(s, FP_RNE, 0, &v.flags);
	}
	if (fpenv_finish(e, &v))
		put32(e, 0, n / 2, r);
}

void
exec_f16v2sum(Exec *e)
{
	sum16(e);
}

void
exec_f16v4sum(Exec *e)
{
	sum16(e);
}

/* Classification: one class code (FpClass) per byte, element i in byte i
 * (the LLVM backend widens the bytes with shuf8x8lo/hi). */

static void
class_put(Exec *e, const uint8_t *c, int n)
{
	uint32_t w = 0;
	for (int k = 0; k < n; k++)
		w |= (uint32_t)c[k] << (8 * k);
	sim_wa(e, e->in->op[0], w);
}

static void
class16(Exec *e)
{
	int n = 2 * op_regs(e, 1);
	uint16_t x[4];
	uint8_t c[4];
	get16(e, 1, n, x);
	for (int k = 0; k < n; k++)
		c[k] = (uint8_t)fp_class_f16(x[k]);
	class_put(e, c, n);
}

static void
class32(Exec *e)
{
	int n = op_regs(e, 1);
	uint32_t x[2];
	uint8_t c[2];
	get32(e, 1, n, x);
	for (int k = 0; k < n; k++)
		c[k] = (uint8_t)fp_class_f32(x[k]);
	class_put(e, c, n);
}

void
exec_f16v2class(Exec *e)
{
	class16(e);
}

void
exec_f16v4class(Exec *e)
{
	class16(e);
}

void
exec_f32class(Exec *e)
{
	class32(e);
}

void
exec_f32v2class(Exec *e)
{
	class32(e);
}

/* Transcendental functions: computed in double by the host libm, rounded
 * once (f32: to nearest even; f16: as every f16 result). */

typedef enum {
	FN_EXP,
	FN_EXP2,
	FN_LN,
	FN_LOG2,
	FN_SIGM,
	FN_TANH,
	FN_SQRT,
	FN_OOX,
	FN_OORX
} Fn;

/* f(x); *div0 when IEEE calls the exact infinite result a division by
 * zero (log of 0, reciprocal of 0). */
static double
fn_eval(Fn f, double x, int *div0)
{
	*div0 = 0;
	switch (f) {
	case FN_EXP:
		return exp(x);
	case FN_EXP2:
		return exp2(x);
	case FN_LN:
		*div0 = x == 0;
		return log(x);
	case FN_LOG2:
		*div0 = x == 0;
		return log2(x);
	case FN_SIGM:
		return 1.0 / (1.0 + exp(-x));
	case FN_TANH:
		return tanh(x);
	case FN_SQRT:
		return sqrt(x);
	case FN_OOX:
		*div0 = x == 0;
		return 1.0 / x;
	default:
		*div0 = x == 0;
		return 1.0 / sqrt(x);
	}
}

static void
fn32(Exec *e, Fn f)
{
	uint32_t x = sim_ra(e, e->in->op[1]), r;
	FpEnv v = fpenv(e);
	if (f == FN_SQRT) {
		r = fp_f32_sqrt(x, &v.flags); /* correctly rounded */
	} else if (fp_f32_isnan(x)) {
		if (fp_f32_issnan(x))
			v.flags |= FP_FLAG_INV;
		r = FP32_QNAN;
	} else {
		int div0;
		double xd = fp_f32_float(x), y = fn_eval(f, xd, &div0);
		/* the fast paths: a finite result raises none of the flags
		 * below, so it goes straight to the rounding, which
		 * fp_f64_to_f32_rne is at nearest even (test_fp) */
		if (sim_path != SIM_PLAIN && isfinite(y) && !div0) {
			r = fp_f64_to_f32_rne(y, &v.flags);
			goto done;
		}
		if (isnan(y))
			v.flags |= FP_FLAG_INV;
		else if (div0)
			v.flags |= FP_FLAG_DIV0;
		else if (isinf(y) && isfinite(xd))
			v.flags |= FP_FLAG_OFLO;
		r = fp_f64_to_f32(y, FP_RNE, 0, &v.flags);
	}
done:
	if (fpenv_finish(e, &v))
		sim_wa(e, e->in->op[0], r);
}

/* One f16 lane of a function: f(x) rounded as every f16 result, its
 * flags or-ed into *flags (the plain path, and what fills the tables). */
static uint16_t
fn16_lane(Fn f, uint16_t x, FpRound mode, uint32_t rb, FpOverflow ov,
          unsigned *flags)
{
	int div0;
	double y = fn_eval(f, fp_f16_to_f64(x), &div0);
	if (div0 && !isnan(y)) {
		*flags |= FP_FLAG_DIV0;
		return fp_f64_to_f16(y, mode, rb, ov, flags);
	}
	return fp_f16_result(y, &x, 1, mode, rb, ov, flags);
}

/* A table made by one thread, in its slot unless another thread put one
 * there first (then that one: both hold the same, functions of the slot's
 * key). */
static const void *
table_publish(_Atomic(void *) *slot, void *t)
{
	void *none = NULL;
	if (atomic_compare_exchange_strong(slot, &none, t))
		return t;
	free(t);
	return none;
}

/* The f16 functions on the fast paths at nearest even (no random bits
 * drawn there): fn16_lane of every half for one function and overflow
 * control, made on first use (each 256 KiB) and shared by every thread.
 * An entry is the result (bits 0..15) with the flags it raises (bits
 * 16..18). test_exec_float checks every half of every function at both
 * controls against the plain path. */
enum { FN16_FIRST = FN_EXP, FN16_COUNT = FN_TANH - FN_EXP + 1 };
static _Atomic(void *) fn16_tables[FN16_COUNT][2];

static __attribute__((noinline)) const uint32_t *
fn16_table_make(_Atomic(void *) *slot, Fn f, FpOverflow ov)
{
	uint32_t *t = xmalloc(0x10000 * sizeof *t);
	for (uint32_t h = 0; h < 0x10000; h++) {
		unsigned fl = 0;
		uint16_t r = fn16_lane(f, (uint16_t)h, FP_RNE, 0, ov, &fl);
		t[h] = r | (fl & 7) << 16;
	}
	return table_publish(slot, t);
}

static inline const uint32_t *
fn16_table(Fn f, FpOverflow ov)
{
	_Atomic(void *) *slot = &fn16_tables[f - FN16_FIRST][ov == FP_OV_NAN];
	const uint32_t *t = atomic_load_explicit(slot, memory_order_acquire);
	return t ? t : fn16_table_make(slot, f, ov);
}

static void
fn16(Exec *e, Fn f)
{
	uint16_t x[2], r[2];
	get16(e, 1, 2, x);
	FpEnv v = fpenv(e);
	if (sim_path != SIM_PLAIN && v.mode == FP_RNE) {
		const uint32_t *t = fn16_table(f, v.ov);
		uint32_t a = t[x[0]], b = t[x[1]];
		v.flags |= (a | b) >> 16;
		r[0] = (uint16_t)a;
		r[1] = (uint16_t)b;
	} else {
		for (int k = 0; k < 2; k++)
			r[k] = fn16_lane(f, x[k], v.mode, fpenv_rbits(e, &v),
			                 v.ov, &v.flags);
	}
	if (fpenv_finish(e, &v))
		put16(e, 0, 2, r);
}

#define FN32(mn, f)                                                            \
	void exec_##mn(Exec *e)                                                \
	{                                                                      \
		fn32(e, f);                                                    \
	}
#define FN16(mn, f)                                                            \
	void exec_##mn(Exec *e)                                                \
	{                                                                      \
		fn16(e, f);                                                    \
	}

FN32(f32exp, FN_EXP)
FN32(f32exp2, FN_EXP2)
FN32(f32ln, FN_LN)
FN32(f32log2, FN_LOG2)
FN32(f32sigm, FN_SIGM)
FN32(f32tanh, FN_TANH)
FN32(f32sqrt, FN_SQRT)
FN32(f32oox, FN_OOX)
FN32(f32oorx, FN_OORX)
FN16(f16v2exp, FN_EXP)
FN16(f16v2exp2, FN_EXP2)
FN16(f16v2ln, FN_LN)
FN16(f16v2log2, FN_LOG2)
FN16(f16v2sigm, FN_SIGM)
FN16(f16v2tanh, FN_TANH)

/* Conversions between f32 and f16. */

/* f32 -> f16, n = 1 (duplicated into both halves), 2 or 4 values. */
static void
f32_to_f16(Exec *e)
{
	int n = op_regs(e, 1);
	uint32_t x[4];
	uint16_t r[4];
	get32(e, 1, n, x);
	FpEnv v = fpenv(e);
	uint64_t h;
	/* four lanes at nearest even by F16C where it gives the same */
	if (n == 4 && v.mode == FP_RNE && sim_use_avx2() &&
	    f16c_from_f32(x, &h)) {
		sim_wa(e, e->in->op[0], (uint32_t)h);
		sim_wa(e, e->in->op[0] + 1, (uint32_t)(h >> 32));
		return;
	}
	/* nearest even, its common case: fp_f64_to_f16_rne is fp_f64_to_f16
	 * at FP_RNE (test_fp), which fp_f32_to_f16 calls after raising INV
	 * for a signalling NaN, so those take fp_f32_to_f16 itself */
	for (int k = 0; k < n; k++)
		r[k] =
		    v.mode == FP_RNE && !fp_f32_issnan(x[k])
		        ? fp_f64_to_f16_rne(fp_f32_float(x[k]), v.ov, &v.flags)
		        : fp_f32_to_f16(x[k], v.mode, fpenv_rbits(e, &v), v.ov,
		                        &v.flags);
	if (n == 1)
		r[1] = r[0];
	if (fpenv_finish(e, &v))
		put16(e, 0, n == 1 ? 2 : n, r);
}

void
exec_f32tof16(Exec *e)
{
	f32_to_f16(e);
}

void
exec_f32v2tof16(Exec *e)
{
	f32_to_f16(e);
}

void
exec_f32v4tof16(Exec *e)
{
	f32_to_f16(e);
}

/* f16 -> f32: f16tof32 converts the low half (DECISION); f16v2tof32 both
 * halves into a pair. Exact. */
static void
f16_to_f32(Exec *e)
{
	int n = op_regs(e, 0);
	uint16_t x[2];
	uint32_t r[2];
	get16(e, 1, 2, x);
	FpEnv v = fpenv(e);
	for (int k = 0; k < n; k++)
		r[k] = fp_f16_to_f32(x[k], &v.flags);
	if (fpenv_finish(e, &v))
		put32(e, 0, n, r);
}

void
exec_f16tof32(Exec *e)
{
	f16_to_f32(e);
}

void
exec_f16v2tof32(Exec *e)
{
	f16_to_f32(e);
}

/* The fast form (SIM_FAST_FORMS): two halves with no NaN among them raise
 * no flag, so the conversions go straight to the pair (logged, or with
 * direct, direct_f16v2tof32, written to the registers: sim.h,
 * SIM_DIRECT_FORMS); else f16_to_f32, which logs. */
static inline __attribute__((always_inline)) void
fast_half_pair(Exec *e, int direct)
{
	uint32_t x = sim_ra(e, e->in->op[1]);
	if ((x & 0x7c00) == 0x7c00 || (x & 0x7c000000) == 0x7c000000) {
		f16_to_f32(e);
		return;
	}
	int r = e->in->op[0];
	sim_put_a(e, r, fp_float_f32((float)fp_f16_to_f64((uint16_t)x)),
	          direct);
	sim_put_a(e, r + 1,
	          fp_float_f32((float)fp_f16_to_f64((uint16_t)(x >> 16))),
	          direct);
}

void
fast_f16v2tof32(Exec *e)
{
	fast_half_pair(e, 0);
}

void
direct_f16v2tof32(Exec *e)
{
	fast_half_pair(e, 1);
}

/* Integers. $FP_CTL.RND applies (ESR does not: DECISION). */

void
exec_f32toi32(Exec *e)
{
	FpEnv v = fpenv(e);
	int32_t r = fp_f32_to_i32(sim_ra(e, e->in->op[1]), v.rnd, &v.flags);
	if (fpenv_finish(e, &v))
		sim_wa(e, e->in->op[0], (uint32_t)r);
}

void
exec_f32toui32(Exec *e)
{
	FpEnv v = fpenv(e);
	uint32_t r = fp_f32_to_u32(sim_ra(e, e->in->op[1]), v.rnd, &v.flags);
	if (fpenv_finish(e, &v))
		sim_wa(e, e->in->op[0], r);
}

void
exec_f32fromi32(Exec *e)
{
	FpEnv v = fpenv(e);
	sim_wa(e, e->in->op[0],
	       fp_i32_to_f32((int32_t)sim_ra(e, e->in->op[1]), v.rnd));
}

void
exec_f32fromui32(Exec *e)
{
	FpEnv v = fpenv(e);
	sim_wa(e, e->in->op[0], fp_u32_to_f32(sim_ra(e, e->in->op[1]), v.rnd));
}

/* f32int dst, src, imm: imm 0..4 = FpRound (from the LLVM backend's use:
 * 0 rint, 1 ceil, 2 floor, 3 trunc, 4 round); other values are undefined
 * and fault. */
void
exec_f32int(Exec *e)
{
	int imm = e->in->op[2];
	if (imm > FP_RNA) {
		sim_fault(e, FAULT_INVALID_OP, 0,
		          "f32int rounding immediate %d is not defined (0..4: "
		          "nearest-even, up, down, toward zero, nearest-away)",
		          imm);
		return;
	}
	FpEnv v = fpenv(e);
	uint32_t r =
	    fp_f32_round_int(sim_ra(e, e->in->op[1]), (FpRound)imm, &v.flags);
	if (fpenv_finish(e, &v))
		sim_wa(e, e->in->op[0], r);
}

/* FP8 (ipu21). The register format is $FP_NFMT.ARF_FMT (bit 1; 0 = F143,
 * 1 = F152), the scale $FP_SCL bits 5..0. Round to nearest even both
 * ways; overflow gives NaN (0x80 / f16 NaN) with NANOO, else saturates. */

static Fp8Format
arf_fmt(const Exec *e)
{
	return (Fp8Format)((e->c->fp_nfmt >> 1) & 1);
}

static void
f8_to_f16(Exec *e)
{
	int n = 2 * op_regs(e, 0);
	uint32_t w = sim_ra(e, e->in->op[1]);
	uint16_t r[4];
	FpEnv v = fpenv(e);
	int s = fp_scale6(e->c->fp_scl);
	for (int k = 0; k < n; k++)
		r[k] = fp_f8_to_f16((uint8_t)(w >> (8 * k)), arf_fmt(e), s,
		                    v.ov, &v.flags);
	if (fpenv_finish(e, &v))
		put16(e, 0, n, r);
}

void
exec_f8v2tof16(Exec *e)
{
	f8_to_f16(e);
}

void
exec_f8v4tof16(Exec *e)
{
	f8_to_f16(e);
}

/* f16 -> f8 on the fast paths: fp_f16_to_f8 of every f16 magnitude for
 * one format, 6-bit scale field and overflow control, made on first use
 * (each 64 KiB) and shared by every thread. An entry is the f8 byte of the
 * magnitude with the flags raised above it (bits 8..10). The sign follows
 * from fp_f64_to_f8: s | code, except a zero (0: no negative zero) and
 * the NaN 0x80, which have none; the flags do not depend on it (INV for a
 * signalling NaN, OFLO when the magnitude overflows). test_exec_float
 * checks every half at every format, scale and control against
 * fp_f16_to_f8. */
static _Atomic(void *) f8_tables[2][64][2];

static __attribute__((noinline)) const uint16_t *
f8_table_make(_Atomic(void *) *slot, Fp8Format fmt, int scale, FpOverflow ov)
{
	uint16_t *t = xmalloc(0x8000 * sizeof *t);
	for (uint32_t h = 0; h < 0x8000; h++) {
		unsigned fl = 0;
		uint8_t q = fp_f16_to_f8((uint16_t)h, fmt, scale, ov, &fl);
		t[h] = (uint16_t)(q | (fl & 7) << 8);
	}
	return table_publish(slot, t);
}

static inline const uint16_t *
f8_table(const Exec *e, FpOverflow ov)
{
	Fp8Format fmt = arf_fmt(e);
	unsigned scl = e->c->fp_scl & 63;
	_Atomic(void *) *slot = &f8_tables[fmt][scl][ov == FP_OV_NAN];
	const uint16_t *t = atomic_load_explicit(slot, memory_order_acquire);
	return t ? t : f8_table_make(slot, fmt, fp_scale6(e->c->fp_scl), ov);
}

/* Half x's f8 byte by table t (f8_table), its flags or-ed into *flags. */
static inline uint32_t
f8_lane(const uint16_t *t, uint32_t x, unsigned *flags)
{
	uint32_t q = t[x & 0x7fff];
	*flags |= q >> 8;
	q &= 0xff;
	if ((x & 0x8000) && q && q != FP8_NAN)
		q |= 0x80;
	return q;
}

/* f16v2tof8 writes 2 bytes (upper half zero, DECISION); f16v8tof8 writes
 * 8 bytes to a pair. */
static void
f16_to_f8(Exec *e)
{
	int n = 2 * op_regs(e, 1);
	uint16_t x[8];
	uint32_t r[2] = {0, 0};
	get16(e, 1, n, x);
	FpEnv v = fpenv(e);
	if (sim_path != SIM_PLAIN) {
		const uint16_t *t = f8_table(e, v.ov);
		for (int k = 0; k < n; k++)
			r[k / 4] |= f8_lane(t, x[k], &v.flags) << (8 * (k % 4));
	} else {
		int s = fp_scale6(e->c->fp_scl);
		for (int k = 0; k < n; k++)
			r[k / 4] |= (uint32_t)fp_f16_to_f8(x[k], arf_fmt(e), s,
			                                   v.ov, &v.flags)
			            << (8 * (k % 4));
	}
	if (fpenv_finish(e, &v))
		put32(e, 0, n == 8 ? 2 : 1, r);
}

void
exec_f16v2tof8(Exec *e)
{
	f16_to_f8(e);
}

void
exec_f16v8tof8(Exec *e)
{
	f16_to_f8(e);
}

/* The fast form of f16v8tof8 (sim.h, SIM_FAST_FORMS; on the fast paths
 * only, where f16_to_f8 reads the table too): the quad's four registers
 * read straight (its operand takes no broadcast), each half through the
 * table, the pair written after fpenv_finish's trap (with direct,
 * direct_f16v8tof8, straight to the registers: SIM_DIRECT_FORMS). */
static inline __attribute__((always_inline)) void
fast_f8_quad(Exec *e, int direct)
{
	int s = e->in->op[1];
	FpEnv v = fpenv(e);
	const uint16_t *t = f8_table(e, v.ov);
	uint32_t r[2];
	for (int k = 0; k < 2; k++) {
		uint32_t lo = sim_ra(e, s + 2 * k),
		         hi = sim_ra(e, s + 2 * k + 1);
		r[k] = f8_lane(t, lo & 0xffff, &v.flags) |
		       f8_lane(t, lo >> 16, &v.flags) << 8 |
		       f8_lane(t, hi & 0xffff, &v.flags) << 16 |
		       f8_lane(t, hi >> 16, &v.flags) << 24;
	}
	if (!fpenv_finish(e, &v))
		return;
	int d = e->in->op[0];
	sim_put_a(e, d, r[0], direct);
	sim_put_a(e, d + 1, r[1], direct);
}

void
fast_f16v8tof8(Exec *e)
{
	fast_f8_quad(e, 0);
}

void
direct_f16v8tof8(Exec *e)
{
	fast_f8_quad(e, 1);
}

/* The class of each of 4 FP8 bytes of the register format (the scale does
 * not change a class: DECISION). */
void
exec_f8v4class(Exec *e)
{
	uint32_t w = sim_ra(e, e->in->op[1]);
	uint8_t c[4];
	for (int k = 0; k < 4; k++)
		c[k] =
		    (uint8_t)fp_class_f8((uint8_t)(w >> (8 * k)), arf_fmt(e));
	class_put(e, c, 4);
}

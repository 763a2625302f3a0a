/*
 * amp.c - the AMP (accumulating matrix product) engines of the emulator:
 * every *amp and *slic instruction, and the supervisor weight loads
 * ld64putcs / ld128putcs that fill the CWEI (CCCS) registers.
 *
 * The real AMP pipeline is only partly public (isa.md 5, 10 item 1). What
 * follows is OUR MODEL; docs/emulator-amp.md explains it with its sources.
 * Every number in it is a DECISION unless a section of isa.md is cited, and
 * the whole model is the table `forms` plus a handful of functions below, so
 * that a hardware check can change it in one place.
 *
 * Weights (isa.md 5.3). 64 CWEI registers of 64 bits (tile->cwei), shared by
 * all workers, written only by the supervisor:
 *   ld64putcs k   cwei[k] = 8 bytes at $CCCSLOAD; $CCCSLOAD += 8
 *   ld128putcs k  cwei[k], cwei[k+1] = 16 bytes at $CCCSLOAD; += 16; the
 *                 source must be 16-byte aligned in the interleaved region
 *                 (sim_load enforces that); k must be even (DECISION).
 * k outside the register file faults with INVALID_OP. Engine m (0..15;
 * 0..7 = AMP set 0, 8..15 = set 1) at weight column n (0..3) uses
 * cwei[(m / 8) * 32 + 4 * (m % 8) + n]. Inside one CWEI, element i (half i,
 * f32 word i, or byte i, counted from the least significant end) multiplies
 * input element i, counted the same way across the input register(s).
 *
 * Pipeline. Every worker has its own AmpState (sim.h): per engine `acc`
 * (the group being accumulated), `next` (partials loaded for the following
 * group) and `done` (the finished group, being drained). The phase p comes
 * from the flags immediate: bits [1:0] for the f16/f8 forms (4 phases),
 * bits [2:0] for the f32 forms (8 phases); the other bits are ignored
 * (isa.md 5.7: the real layout is unknown; the assembler's TAMP_* names map
 * to these numbers). One instruction at phase p, in this order:
 *   1. dst    = results of done[] for its io engines (below), converted
 *   2. next[] = the partials operand, for the same io engines
 *   3. acc[m] += sum over inputs i of x[i] * w(m, p)[i], for each engine m
 *      of the form, the previous acc and all exact products summed in
 *      double and rounded to f32 once per instruction (isa.md 2.2: products
 *      exact, wide accumulation; exact rounding unknown)
 *   4. after the last phase: done = acc, acc = next (for the form's engines)
 * So partials enter one group ahead and results leave one group late: a loop
 * of N groups runs 1 warm-up group (zero inputs, the partials of the first
 * real group), the N groups, and 1 drain group (zero inputs) (isa.md 5.4).
 *
 * io engines at phase p: k = results out = partials in per instruction; the
 * engines are k*p .. k*p+k-1. f32sisoamp (8 engines, 8 phases, k = 2) moves
 * them only on even phases (engines p, p+1); on odd phases dst is not written
 * and partials are ignored (isa.md 5.5: poplibs passes $azeros there).
 *
 * Forms (isa.md 5.2, 5.4, 5.5, 6):
 *   mnemonic         engines phases inputs/insn  partials in  results out
 *   f16v4hihoamp       0..7    4    4 x f16        2 x f16      2 x f16
 *   f16v4sihoamp       0..7    4    4 x f16        2 x f32      2 x f16
 *   f16v4sisoamp       0..7    4    4 x f16        2 x f32      2 x f32
 *   f16v4hihov4amp    0..15    4    4 x f16        4 x f16      4 x f16
 *   f32sisoamp         0..7    8    1 x f32        2 x f32      2 x f32
 *   f32sisov2amp      0..15    8    1 x f32        2 x f32      2 x f32
 *   f8v8hihov4amp     0..15    4    8 x f8         4 x f16      4 x f16
 * f32 forms: weight of engine m at phase p = f32 word (p % 2) of the CWEI
 * for column p / 2. FP8 (ipu21): $FP_NFMT bit 0 = weight (CWEI) format,
 * bit 1 = input (ARF) format, 0 = F143 and 1 = F152 (model.md 7.2; the
 * supervisor's $FP_INFMT = (input << 1) | weight is copied at worker start,
 * isa.md 6). Each product is scaled by 2^$FP_SCL (6-bit two's complement:
 * poplibs sets it to s_in + s_w); partials enter unscaled.
 *
 * Not modelled: $FP_STS flags and traps (the AMP raises none), $FP_CTL
 * rounding modes (results round to nearest even), denormal flushing. $AACC
 * (sim.h, Context.aacc) and AmpState are separate state in our model; writing
 * $FP_CLR.ZAACC clears both (sim_amp_clear). SLIC (isa.md 5.6) is not
 * emulated: each *slic instruction faults and says so.
 */
#include <math.h>
#include <string.h>

#include "../util/fp.h"
#include "amp.h"

typedef struct {
	const char *name;
	int engines;  /* 8 (set 0) or 16 (both sets) */
	int phases;   /* 4 or 8 */
	ElemFmt in;   /* input and weight elements */
	int ninputs;  /* inputs per instruction */
	ElemFmt part; /* partials operand */
	ElemFmt res;  /* results (dst) operand */
	int io;       /* partials in = results out per instruction */
	int io_every; /* 1: io on every phase; 2: on even phases only */
} AmpForm;

/* The model's forms (see the table at the top). */
enum { HIHO, SIHO, SISO, HIHOV4, F32SISO, F32SISOV2, F8HIHOV4 };
/* clang-format off */
static const AmpForm forms[] = {
	/*           name            eng ph in     nin part    res     io every */
	[HIHO]      = {"f16v4hihoamp",   8, 4, EF_F16, 4, EF_F16, EF_F16, 2, 1},
	[SIHO]      = {"f16v4sihoamp",   8, 4, EF_F16, 4, EF_F32, EF_F16, 2, 1},
	[SISO]      = {"f16v4sisoamp",   8, 4, EF_F16, 4, EF_F32, EF_F32, 2, 1},
	[HIHOV4]    = {"f16v4hihov4amp",16, 4, EF_F16, 4, EF_F16, EF_F16, 4, 1},
	[F32SISO]   = {"f32sisoamp",     8, 8, EF_F32, 1, EF_F32, EF_F32, 2, 2},
	[F32SISOV2] = {"f32sisov2amp",  16, 8, EF_F32, 1, EF_F32, EF_F32, 2, 1},
	[F8HIHOV4]  = {"f8v8hihov4amp", 16, 4, EF_F8,  8, EF_F16, EF_F16, 4, 1},
};
/* clang-format on */

/* CWEI register of engine m (0..15) at weight column n (0..3), isa.md 5.3. */
static int
cwei_index(int m, int n)
{
	return (m / AMP_SET_ENGINES) * AMP_SET_CWEI + AMP_COLUMNS * (m % 8) + n;
}

/* Phase from the flags immediate. */
static int
amp_phase(const AmpForm *f, uint32_t flags)
{
	return (int)(flags & (uint32_t)(f->phases - 1));
}

/* Round an accumulation to the f32 state. The one place to change if the
 * hardware turns out to accumulate differently (with mac_vectors, its
 * vector form; tests/test_sim_paths.c compares the two). */
static float
acc_round(double v)
{
	return (float)v;
}

/* FP8 values of every byte in both formats (fp.h's Fp8Format numbers them
 * 0 = F143, 1 = F152), with scale 0: fp_f8_to_f64 with its ldexp calls
 * once per value instead of once per input. */
double sim_amp_f8[2][256];

__attribute__((constructor)) static void
f8_table_init(void)
{
	for (int fmt = 0; fmt < 2; fmt++)
		for (int b = 0; b < 256; b++)
			sim_amp_f8[fmt][b] =
			    fp_f8_to_f64((uint8_t)b, (Fp8Format)fmt, 0);
}

/* FP8 value of byte b in the format given by $FP_NFMT bit `bit` (0 for
 * weights, 1 for inputs). */
static double
f8_value(uint8_t b, uint32_t nfmt, int bit)
{
	return sim_amp_f8[(nfmt >> bit) & 1][b];
}

static inline __attribute__((always_inline)) double
bits_double(uint64_t b)
{
	double d;
	memcpy(&d, &b, 8);
	return d;
}

static inline __attribute__((always_inline)) float
bits_float(uint32_t b)
{
	float f;
	memcpy(&f, &b, 4);
	return f;
}

/* An f32 state value as an f16 result: nearest even, overflow to
 * infinity; the AMP raises no $FP_STS flags (DECISION). */
static inline __attribute__((always_inline)) uint16_t
f16_result(float v)
{
	unsigned flags = 0;
	return fp_f32_to_f16_rne(fp_float_f32(v), &flags);
}

/* Element i of a 64-bit word holding 4 f16, 2 f32 or 8 f8. */
static inline __attribute__((always_inline)) double
elem64(uint64_t w, ElemFmt fmt, int i, uint32_t nfmt, int nfmt_bit)
{
	switch (fmt) {
	case EF_F16:
		return fp_f16_to_f64((uint16_t)(w >> (16 * i)));
	case EF_F32:
		return bits_float((uint32_t)(w >> (32 * i)));
	case EF_F8:
		return f8_value((uint8_t)(w >> (8 * i)), nfmt, nfmt_bit);
	}
	return 0;
}

/*
 * Conversions of four halves at a time for the AVX2 path, by F16C: exact
 * for every finite half and every non-NaN result; whenever a NaN could be
 * involved they return 0 and leave the lanes to the scalar conversions,
 * which give NaNs the model's payloads (F16C keeps the operand's).
 */
#if defined(__x86_64__) && defined(__GNUC__)

AMP_SIMD static inline int
halves_to_doubles(uint64_t w, double *x)
{
	if (sim_f16_special(w))
		return 0;
	__m128 f = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)w));
	_mm256_storeu_pd(x, _mm256_cvtps_pd(f));
	return 1;
}

AMP_SIMD static inline int
halves_to_floats(uint64_t w, float *x)
{
	if (sim_f16_special(w))
		return 0;
	_mm_storeu_ps(x, _mm_cvtph_ps(_mm_cvtsi64_si128((long long)w)));
	return 1;
}

/* Four f32 results to halves, nearest even (f16_result), unless one is a
 * NaN. */
AMP_SIMD static inline int
floats_to_halves(const float *v, uint64_t *w)
{
	__m128 f = _mm_loadu_ps(v);
	if (_mm_movemask_ps(_mm_cmpunord_ps(f, f)))
		return 0;
	*w = (uint64_t)_mm_cvtsi128_si64(
	    _mm_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	return 1;
}
#else
static inline int
halves_to_doubles(uint64_t w, double *x)
{
	(void)w, (void)x;
	return 0;
}

static inline int
halves_to_floats(uint64_t w, float *x)
{
	(void)w, (void)x;
	return 0;
}

static inline int
floats_to_halves(const float *v, uint64_t *w)
{
	(void)v, (void)w;
	return 0;
}
#endif

/* ARF register r as the semantics read it ($a14, $a15 read 0), without the
 * call: AMP operands are fixed register numbers of the instruction. */
static inline __attribute__((always_inline)) uint32_t
ra(const Exec *e, int r)
{
	return r >= 14 ? 0 : e->c->a[r];
}

/* Read n elements of format fmt from ARF registers r, r+1 (low word first,
 * low bits first); simd: F16C where it gives the same values. */
static inline __attribute__((always_inline)) void
read_elems(const Exec *e, int r, ElemFmt fmt, int n, float *out, int simd)
{
	if (fmt == EF_F16) {
		float h[4];
		uint64_t w = (uint64_t)ra(e, r + 1) << 32 | ra(e, r);
		if (simd && halves_to_floats(w, h)) {
			memcpy(out, h, sizeof(float) * (size_t)n);
			return;
		}
		for (int i = 0; i < n; i++)
			out[i] =
			    (float)fp_f16_to_f64((uint16_t)(w >> (16 * i)));
		return;
	}
	for (int i = 0; i < n; i++)
		out[i] = bits_float(ra(e, r + i));
}

/* Write n results to ARF registers r, r+1 (low word first). */
static inline __attribute__((always_inline)) void
write_elems(Exec *e, int r, ElemFmt fmt, int n, const float *v, int simd)
{
	if (fmt == EF_F16) {
		uint64_t w = 0;
		float f[4] = {0, 0, 0, 0};
		memcpy(f, v, sizeof(float) * (size_t)n);
		if (!(simd && floats_to_halves(f, &w)))
			for (int i = 0; i < n; i++)
				w |= (uint64_t)f16_result(v[i]) << (16 * i);
		for (int i = 0; i < n; i += 2)
			sim_wa(e, r + i / 2, (uint32_t)(w >> (16 * i)));
	} else {
		for (int i = 0; i < n; i++)
			sim_wa(e, r + i, fp_float_f32(v[i]));
	}
}

/* The inputs of one instruction, as exact doubles. */
static inline __attribute__((always_inline)) void
read_inputs(const Exec *e, const AmpForm *f, int r, double *x, int simd)
{
	if (f->in == EF_F32) {
		x[0] = bits_float(ra(e, r));
		return;
	}
	uint64_t w = (uint64_t)ra(e, r + 1) << 32 | ra(e, r);
	if (f->in == EF_F16 && simd && halves_to_doubles(w, x))
		return;
	for (int i = 0; i < f->ninputs; i++)
		x[i] = elem64(w, f->in, i, e->c->fp_nfmt, 1);
}

/* 2^$FP_SCL for FP8 products, else 1: a power of two in -32..31, built
 * from its bits. */
static double
product_scale(const Context *c, const AmpForm *f)
{
	if (f->in != EF_F8)
		return 1.0;
	return bits_double((uint64_t)(1023 + fp_scale6(c->fp_scl)) << 52);
}

/* One engine's sum, the model's reference: acc, then + x[i] * w[i]
 * (* scale for FP8) for i = 0, 1, ... in double. Which NaN comes out when
 * NaNs meet depends on which operand of each multiply and add the host
 * returns, which C leaves to the compiler, so the order is made explicit:
 * the first operand's NaN (quietened), else the second's, else the
 * operation's own default NaN, as the x86 SSE build of the original code
 * did with its operand order x * w, then * scale, then sum + product. */
/* The NaN an operation returns for NaN operand a: a, quiet. Set by hand,
 * as the compiler may fold a float -> double -> float round trip of a
 * signalling NaN (a partial that became acc) into the unchanged value. */
static double
quiet(double a)
{
	uint64_t b;
	memcpy(&b, &a, 8);
	return bits_double(b | 0x0008000000000000ull);
}

static double
nan_mul(double a, double b)
{
	return isnan(a) ? quiet(a) : isnan(b) ? quiet(b) : a * b;
}

static double
nan_add(double a, double b)
{
	return isnan(a) ? quiet(a) : isnan(b) ? quiet(b) : a + b;
}

static double
engine_sum(float acc, const double *x, const double *w, int n, double scale,
           int scaled)
{
	double sum = acc;
	for (int i = 0; i < n; i++) {
		double p = nan_mul(x[i], w[i]);
		sum = nan_add(sum, scaled ? nan_mul(p, scale) : p);
	}
	return sum;
}

/* Step 3 (multiply-accumulate), plain: every engine's weights decoded
 * from cwei and its sum formed by engine_sum. Engine m at phase p uses
 * CWEI cwei_index(m, col); its weight for input i is element elem0 + i of
 * it (elem0 > 0 only when phases share one CWEI, with one input). */
static inline __attribute__((always_inline)) void
mac_plain(const Tile *t, Context *c, const AmpForm *f, int col, int elem0,
          const double *x, int n, double scale)
{
	AmpState *s = &c->amp;
	for (int m = 0; m < f->engines; m++) {
		uint64_t cw = t->cwei[cwei_index(m, col)];
		double w[AMP_MAX_INPUTS];
		for (int i = 0; i < n; i++)
			w[i] = elem64(cw, f->in, elem0 + i, c->fp_nfmt, 0);
		s->acc[m] = acc_round(
		    engine_sum(s->acc[m], x, w, n, scale, f->in == EF_F8));
	}
}

/* After a vector sum came out NaN (acc unchanged): the instruction's sums
 * again, plain (engine_sum's operand order decides which NaN). */
static __attribute__((noinline, cold)) void
mac_redo(const Tile *t, Context *c, const AmpForm *f, int col, int elem0,
         const double *x, int n)
{
	mac_plain(t, c, f, col, elem0, x, n, product_scale(c, f));
}

/*
 * Step 3, fast: the same sums for all engines at once on host vectors, four
 * engines per vector of doubles, from the tile's decoded weights
 * (Tile.amp_w, by column, element and engine; FP8 weights with the product
 * scale folded in). Every lane does exactly the plain path's operations on
 * its engine in the same order (a product, an add; no fused multiply-add:
 * -ffp-contract=off) and rounds as acc_round does, so non-NaN sums give the
 * same bits; x w 2^k is exact whichever way it is grouped (the product of
 * two inputs has at most 24 x 24 significant bits, and 2^k with k in
 * -32..31 keeps every FP8 product far inside double's range). When a sum
 * is NaN, acc is left as it was and the caller redoes the instruction with
 * mac_redo. Compiled twice, for the baseline ISA (mac_portable) and inside
 * each form's AVX2 instance (AMP_FORM, chosen at run time).
 */
typedef double v4d __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));
typedef int64_t v4l __attribute__((vector_size(32)));

/* acc[m] for the engines, or 0 if a sum is NaN. */
static inline __attribute__((always_inline)) int
mac_vectors(float *acc, const double (*w)[16], const double *x, int n,
            int engines)
{
	v4d sum[AMP_ENGINES / 4];
	v4l nan = {0, 0, 0, 0};
#pragma GCC unroll 4
	for (int g = 0; g < engines; g += 4) {
		v4f a;
		memcpy(&a, acc + g, sizeof a);
		v4d v = __builtin_convertvector(a, v4d);
#pragma GCC unroll 8
		for (int i = 0; i < n; i++) {
			v4d wv;
			memcpy(&wv, &w[i][g], sizeof wv);
			v = v + x[i] * wv;
		}
		nan |= v != v;
		sum[g / 4] = v;
	}
	if (nan[0] | nan[1] | nan[2] | nan[3])
		return 0;
#pragma GCC unroll 4
	for (int g = 0; g < engines; g += 4) {
		v4f r = __builtin_convertvector(sum[g / 4], v4f);
		memcpy(acc + g, &r, sizeof r);
	}
	return 1;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* mac_fused on inputs in an array. */
AMP_SIMD static inline __attribute__((always_inline)) int
mac_fused_x(float *acc, const double (*w)[16], const double *x, int n,
            int engines)
{
	__m256d xv[AMP_MAX_INPUTS];
#pragma GCC unroll 8
	for (int i = 0; i < n; i++)
		xv[i] = _mm256_set1_pd(x[i]);
	return mac_fused(acc, w, xv, n, engines);
}
#endif

/* The forms' shapes as constants, so that each loop above unrolls:
 * (inputs per engine, engines). */
#define MAC_SHAPES(mac)                                                        \
	switch (shape) {                                                       \
	case 0:                                                                \
		return mac(acc, w, x, 8, 16);                                  \
	case 1:                                                                \
		return mac(acc, w, x, 4, 16);                                  \
	case 2:                                                                \
		return mac(acc, w, x, 4, 8);                                   \
	case 3:                                                                \
		return mac(acc, w, x, 1, 16);                                  \
	default:                                                               \
		return mac(acc, w, x, 1, 8);                                   \
	}

static int
mac_portable(int shape, float *acc, const double (*w)[16],
             const double *x){MAC_SHAPES(mac_vectors)}

/* Not always_inline: the portable instance of mac_fast names it too (and
 * never calls it); the AVX2 instance, of the same target, inlines it. */
AMP_SIMD static int mac_simd(int shape, float *acc, const double (*w)[16],
                             const double *x)
{
#if defined(__x86_64__) && defined(__GNUC__)
	MAC_SHAPES(mac_fused_x)
#else
	MAC_SHAPES(mac_vectors)
#endif
}

static int
mac_shape(const AmpForm *f)
{
	return f->in == EF_F8                        ? 0
	       : f->in == EF_F16 && f->engines == 16 ? 1
	       : f->in == EF_F16                     ? 2
	       : f->engines == 16                    ? 3
	                                             : 4;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* FP8 weights of column col for the AVX2 path: the 16 engines' registers
 * cw (all of them, changed or not: each element is a function of its
 * byte, the format and the scale), element i of four engines at a time
 * gathered from the table and multiplied by the scale, the same lookup and
 * the same multiply as weights_refresh's scalar loop. */
AMP_SIMD static void
f8_weights_simd(double (*w)[16], const uint64_t *cw, const double *tab,
                double scale)
{
	__m256d sc = _mm256_set1_pd(scale);
	__m256i ff = _mm256_set1_epi64x(0xff);
	for (int g = 0; g < AMP_ENGINES; g += 4) {
		__m256i v =
		    _mm256_loadu_si256((const __m256i *)(const void *)&cw[g]);
#pragma GCC unroll 8
		for (int i = 0; i < 8; i++) {
			__m256i b =
			    _mm256_and_si256(_mm256_srli_epi64(v, 8 * i), ff);
			__m256d x = _mm256_i64gather_pd(tab, b, 8);
			_mm256_storeu_pd(&w[i][g], _mm256_mul_pd(x, sc));
		}
	}
}
#endif

/* Bring column col of amp_w up to date with cwei, for all 16 engines in the
 * format of key; FP8 weights times the product scale (exact, a power of
 * two: mac_vectors). */
static __attribute__((noinline)) void
weights_refresh(Tile *t, const Context *c, const AmpForm *f, int col,
                uint8_t key, int simd)
{
	AmpWeights *aw = &t->amp_w;
	ElemFmt in = f->in;
	int nel = in == EF_F16 ? 4 : in == EF_F32 ? 2 : 8;
	double scale = product_scale(c, f);
#if defined(__x86_64__) && defined(__GNUC__)
	if (in == EF_F8 && simd) {
		uint64_t cw[AMP_ENGINES];
		for (int m = 0; m < AMP_ENGINES; m++)
			cw[m] = aw->raw[col][m] = t->cwei[cwei_index(m, col)];
		f8_weights_simd(aw->w[col], cw, sim_amp_f8[c->fp_nfmt & 1],
		                scale);
		aw->key[col] = key;
		aw->gen[col] = t->cwei_gen;
		return;
	}
#endif
	for (int m = 0; m < AMP_ENGINES; m++) {
		uint64_t cw = t->cwei[cwei_index(m, col)];
		if (aw->raw[col][m] == cw && aw->key[col] == key)
			continue;
		double h[4];
		if (in == EF_F16 && simd && halves_to_doubles(cw, h))
			for (int i = 0; i < 4; i++)
				aw->w[col][i][m] = h[i];
		else
			for (int i = 0; i < nel; i++)
				aw->w[col][i][m] =
				    elem64(cw, in, i, c->fp_nfmt, 0) * scale;
		aw->raw[col][m] = cw;
	}
	aw->key[col] = key;
	aw->gen[col] = t->cwei_gen;
}

/* Column col of the decoded weights from elem0 on, brought up to date
 * with cwei first if it may have changed. */
static inline __attribute__((always_inline))
const double (*mac_weights(Tile *t, const Context *c, const AmpForm *f, int col,
                           int elem0, int simd))[16]
{
	AmpWeights *aw = &t->amp_w;
	uint8_t key = weight_key(c, f->in);
	if (aw->gen[col] != t->cwei_gen || aw->key[col] != key)
		weights_refresh(t, c, f, col, key, simd);
	return &aw->w[col][elem0];
}

static inline __attribute__((always_inline)) void
mac_fast(Exec *e, const AmpForm *f, int col, int elem0, const double *x, int n,
         int simd)
{
	const double(*w)[16] = mac_weights(e->tile, e->c, f, col, elem0, simd);
	int shape = mac_shape(f);
	/* simd: inlined into the AVX2 instance, so compiled for it */
	if (!(simd ? mac_simd(shape, e->c->amp.acc, w, x)
	           : mac_portable(shape, e->c->amp.acc, w, x)))
		mac_redo(e->tile, e->c, f, col, elem0, x, n);
}

/* One AMP instruction of form f. Operands (all forms): dst, input,
 * partials, flags (insns.def). Inlined into each form's exec function, so
 * that the form is a constant and every loop over engines unrolls; simd:
 * the AVX2, F16C and FMA instance (AMP_FORM). */
static inline __attribute__((always_inline)) void
amp_exec(Exec *e, const AmpForm *f, int simd)
{
	AmpState *s = &e->c->amp;
	int dst = e->in->op[0], src = e->in->op[1], part = e->in->op[2];
	int p = amp_phase(f, (uint32_t)e->in->op[3]);

	/* 1, 2: results out and partials in for this phase's io engines. */
	if (p % f->io_every == 0) {
		int base = (p / f->io_every) * f->io;
		float v[AMP_MAX_IO];
		write_elems(e, dst, f->res, f->io, &s->done[base], simd);
		read_elems(e, part, f->part, f->io, v, simd);
		memcpy(&s->next[base], v, sizeof(float) * (size_t)f->io);
	}

	/* 3: multiply-accumulate. Engine m at phase p uses CWEI
	 * cwei_index(m, col); when phases share one CWEI (f32: one input),
	 * phase p reads its element p % per_cwei. */
	double x[AMP_MAX_INPUTS];
	read_inputs(e, f, src, x, simd);
	int per_cwei = f->phases / AMP_COLUMNS; /* phases sharing one CWEI */
	int col = p / per_cwei, elem0 = per_cwei > 1 ? p % per_cwei : 0;
	int n = f->in == EF_F32 ? 1 : f->ninputs;
	if (sim_path == SIM_PLAIN)
		mac_plain(e->tile, e->c, f, col, elem0, x, n,
		          product_scale(e->c, f));
	else
		mac_fast(e, f, col, elem0, x, n, simd);

	/* 4: end of group. */
	if (p == f->phases - 1)
		for (int m = 0; m < f->engines; m++) {
			s->done[m] = s->acc[m];
			s->acc[m] = s->next[m];
		}
}

/* Each form's exec function, and its AVX2, F16C and FMA instance. */
#define AMP_FORM(mn, form)                                                     \
	AMP_SIMD static void mn##_simd(Exec *e)                                \
	{                                                                      \
		amp_exec(e, &forms[form], 1);                                  \
	}                                                                      \
	void exec_##mn(Exec *e)                                                \
	{                                                                      \
		if (sim_use_avx2())                                            \
			mn##_simd(e);                                          \
		else                                                           \
			amp_exec(e, &forms[form], 0);                          \
	}

AMP_FORM(f16v4hihoamp, HIHO)
AMP_FORM(f16v4sihoamp, SIHO)
AMP_FORM(f16v4sisoamp, SISO)
AMP_FORM(f16v4hihov4amp, HIHOV4)
AMP_FORM(f32sisoamp, F32SISO)
AMP_FORM(f32sisov2amp, F32SISOV2)
AMP_FORM(f8v8hihov4amp, F8HIHOV4)

/*
 * The fast forms of the two AMP forms the compiler's GEMMs use (sim.h,
 * SIM_FAST_FORMS, and the bundles of tile.c's issue_fused): amp_exec's
 * steps for f16v4hihov4amp and f8v8hihov4amp written out for AVX2, F16C
 * and FMA. sim_amp_fast (amp.h, inline in the fused bundles) reads the
 * operands and declines when the vector
 * conversions would not give exactly what the plain path does (a NaN
 * among the results out, an infinity or a NaN among the partials) or the
 * host lacks those instructions; else sim_amp_run (amp.h) does the rest and
 * returns the results for the destination pair. A NaN sum is redone as mac_fast
 * does. The rare paths (weights to decode, NaN sums) are calls in tail
 * position, so that the common one saves no registers and keeps its
 * vectors in registers (about 80 host instructions for f16, 120 for f8).
 */
#if defined(__x86_64__) && defined(__GNUC__)

/* The rest of sim_amp_run after a NaN sum: the sums redone by mac_redo for
 * the f16 or f8 inputs of word xw, then step 4. Called last, so that the
 * common path saves no registers. */
AMP_SIMD __attribute__((noinline, cold)) uint64_t
sim_amp_run_nan(Tile *t, Context *c, int p, int f8, uint64_t xw, uint64_t res)
{
	const AmpForm *f = &forms[f8 ? F8HIHOV4 : HIHOV4];
	double x[AMP_MAX_INPUTS];
	for (int i = 0; i < f->ninputs; i++)
		x[i] = elem64(xw, f->in, i, c->fp_nfmt, 1);
	mac_redo(t, c, f, p, 0, x, f->ninputs);
	group_end(&c->amp, p);
	return res;
}

/* sim_amp_run with the weights of column p out of date: brought up to date,
 * then run. */
__attribute__((noinline)) uint64_t
sim_amp_run_stale(Tile *t, Context *c, int p, int f8, uint64_t xw,
                  uint64_t part)
{
	const AmpForm *f = &forms[f8 ? F8HIHOV4 : HIHOV4];
	weights_refresh(t, c, f, p, weight_key(c, f->in), 1);
	return f8 ? sim_amp_run_f8(t, c, p, xw, part)
	          : sim_amp_run_f16(t, c, p, xw, part);
}

AMP_SIMD uint64_t
sim_amp_run_f16(Tile *t, Context *c, int p, uint64_t xw, uint64_t part)
{
	return sim_amp_run(t, c, p, 0, xw, part, sim_amp_ctx(c, 0));
}

AMP_SIMD uint64_t
sim_amp_run_f8(Tile *t, Context *c, int p, uint64_t xw, uint64_t part)
{
	return sim_amp_run(t, c, p, 1, xw, part, sim_amp_ctx(c, 1));
}

#endif

/* The fast forms: the results logged to the destination pair. */
static inline __attribute__((always_inline)) void
amp_v4_fast(Exec *e, int f8, ExecFn plain)
{
	uint64_t res;
	if (!sim_amp_fast(e->tile, e->c, sim_amp_decode(e->in), f8, &res)) {
		plain(e);
		return;
	}
	sim_wa(e, e->in->op[0], (uint32_t)res);
	sim_wa(e, e->in->op[0] + 1, (uint32_t)(res >> 32));
}

void
fast_f16v4hihov4amp(Exec *e)
{
	amp_v4_fast(e, 0, exec_f16v4hihov4amp);
}

void
fast_f8v8hihov4amp(Exec *e)
{
	amp_v4_fast(e, 1, exec_f8v8hihov4amp);
}

void
sim_amp_clear(Context *c)
{
	memset(&c->amp, 0, sizeof c->amp);
}

/* SLIC: isa.md 5.6 has only a sketch of the data flow; fault honestly. */
static void
slic(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "%s: not emulated: SLIC semantics are only partly public "
	          "(isa.md 5.6)",
	          e->d->mnemonic);
}

void
exec_f16v4hihoslic(Exec *e)
{
	slic(e);
}

void
exec_f16v4sihoslic(Exec *e)
{
	slic(e);
}

void
exec_f16v4sisoslic(Exec *e)
{
	slic(e);
}

void
exec_f16v4hihov4slic(Exec *e)
{
	slic(e);
}

void
exec_f32sisoslic(Exec *e)
{
	slic(e);
}

void
exec_f32sisov2slic(Exec *e)
{
	slic(e);
}

void
exec_f8v8hihov4slic(Exec *e)
{
	slic(e);
}

/* 1 if CWEI index k takes a weight load of n 8-byte words. */
static inline int
putcs_index_ok(int k, int n)
{
	return k >= 0 && k + n <= CHIP_CWEI && !(k % n);
}

/* A weight load's words w (size bytes, read at $CCCSLOAD) into CWEI
 * index k; $CCCSLOAD steps past them. */
static inline __attribute__((always_inline)) void
putcs_commit(Tile *t, int k, const void *w, uint32_t size)
{
	sim_copy_bytes(&t->cwei[k], w, size);
	t->cwei_gen++;
	t->sup.cccsload += size;
}

/* Weight loads (supervisor only; tile.c enforces the context). */
static void
putcs(Exec *e, int n)
{
	int k = e->in->op[0];
	uint32_t size = 8u * (uint32_t)n;
	if (!putcs_index_ok(k, n)) {
		sim_fault(e, FAULT_INVALID_OP, 0,
		          "%s %d: CWEI index must be %s0..%d", e->d->mnemonic,
		          k, n > 1 ? "even, " : "", CHIP_CWEI - n);
		return;
	}
	uint64_t w[2];
	if (!sim_load(e, e->tile->sup.cccsload, w, size))
		return;
	putcs_commit(e->tile, k, w, size);
}

void
exec_ld64putcs(Exec *e)
{
	putcs(e, 1);
}

void
exec_ld128putcs(Exec *e)
{
	putcs(e, 2);
}

/* The fast forms of ld64putcs and ld128putcs (sim.h, SIM_FAST_FORMS), a
 * GEMM's weight loads: an access sim_mem_fast would pass, checked without
 * the bundle's access log by sim_mem_solo (sim.h), 16 bytes only in the
 * interleaved region, where its two words lie in two elements (bit 3 of
 * the address tells them apart). Anything else (a bad index, a watch, the
 * plain path) goes to the plain form, nothing having been done. */
static inline __attribute__((always_inline)) void
fast_putcs(Exec *e, int n, ExecFn plain)
{
	Tile *t = e->tile;
	int k = e->in->op[0];
	uint32_t addr = t->sup.cccsload, size = 8u * (uint32_t)n;
	if (!putcs_index_ok(k, n) || !sim_mem_solo(t, addr, size) ||
	    (n == 2 && addr < t->interleave)) {
		plain(e);
		return;
	}
	putcs_commit(t, k, t->mem + (addr - t->mem_base), size);
}

void
fast_ld64putcs(Exec *e)
{
	fast_putcs(e, 1, exec_ld64putcs);
}

void
fast_ld128putcs(Exec *e)
{
	fast_putcs(e, 2, exec_ld128putcs);
}

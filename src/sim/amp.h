/*
 * amp.h - the AMP's fast form for the GEMMs' two forms (f16v4hihov4amp,
 * f8v8hihov4amp), inline: included by amp.c, which defines the model and
 * the out-of-line entries sim_amp_run_f16/_f8, and by the fused bundles'
 * loops (shapes.h). Where the including translation unit is itself built
 * for AVX2, FMA and F16C (shapes_avx2.c), sim_amp_fast_at runs the
 * arithmetic inline (sim_amp_run); elsewhere it calls sim_amp_run_f16/_f8,
 * which are the same code.
 */
#ifndef IPU_SIM_AMP_H
#define IPU_SIM_AMP_H

#include "sim.h"

enum {
	AMP_ENGINES = 16,    /* both AMP sets */
	AMP_SET_ENGINES = 8, /* isa.md 2.2, TFPU_AMP_UNITS_PER_SET */
	AMP_SET_CWEI = 32,   /* CWEI registers per set (isa.md 5.3) */
	AMP_COLUMNS = 4,     /* CWEI columns per engine */
	AMP_MAX_INPUTS = 8,  /* f8v8: 8 inputs per instruction */
	AMP_MAX_IO = 4,      /* partials in / results out per instruction */
};

/* Element formats of inputs, weights, partials and results. */
typedef enum { EF_F16, EF_F32, EF_F8 } ElemFmt;

/* Cache key of a weight format: f16, f32, or f8 in the format of the
 * $FP_NFMT weight bit with the product scale ($FP_SCL's 6 bits). */
static inline __attribute__((always_inline)) uint8_t
weight_key(const Context *c, ElemFmt in)
{
	return in == EF_F16 ? 1
	       : in == EF_F32
	           ? 2
	           : (uint8_t)(3 + (c->fp_nfmt & 1) + 2 * (c->fp_scl & 63));
}

/* FP8 values of every byte in both formats (fp.h's Fp8Format numbers them
 * 0 = F143, 1 = F152), with scale 0 (amp.c). */
extern double sim_amp_f8[2][256];

/* What the fast forms read of a context besides their operands: the key of
 * its weights' format and, for f8v8hihov4amp, the values of its inputs'
 * format. A function of $FP_NFMT and $FP_SCL, so known once for many
 * bundles where nothing writes them (tile.c's shapes' loops). */
typedef struct {
	const double *in8; /* sim_amp_f8 of the input format (f8) */
	uint8_t key;       /* weight_key */
} AmpCtx;

static inline __attribute__((always_inline)) AmpCtx
sim_amp_ctx(const Context *c, int f8)
{
	return (AmpCtx){f8 ? sim_amp_f8[(c->fp_nfmt >> 1) & 1] : NULL,
	                weight_key(c, f8 ? EF_F8 : EF_F16)};
}

/* Whether this translation unit is built for AVX2, FMA and F16C
 * (shapes_avx2.c): then sim_amp_fast_at inlines the arithmetic. */
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define SIM_AMP_INLINE 1
#else
#define SIM_AMP_INLINE 0
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AMP_SIMD __attribute__((target("avx2,f16c,fma")))

/* The AVX2, F16C and FMA work of sim_amp_fast (amp.c): the phase, the
 * input and the partials pairs in; the words for the destination pair
 * out. Called only where sim_use_avx2(). */
uint64_t sim_amp_run_f16(Tile *t, Context *c, int p, uint64_t xw,
                         uint64_t part);
uint64_t sim_amp_run_f8(Tile *t, Context *c, int p, uint64_t xw, uint64_t part);
/* sim_amp_run's rare paths (amp.c): the sums redone after a NaN sum, and
 * the run after the weights of column p are brought up to date. */
AMP_SIMD uint64_t sim_amp_run_nan(Tile *t, Context *c, int p, int f8,
                                  uint64_t xw, uint64_t res);
uint64_t sim_amp_run_stale(Tile *t, Context *c, int p, int f8, uint64_t xw,
                           uint64_t part);

/* mac_vectors (amp.c) with the multiply and the add fused (FMA), for the
 * AVX2 instance, on inputs broadcast to vectors (xv[i]: input i in every
 * lane). Every product is exact in double (amp.c, above mac_vectors), so
 * one rounding of v + x w is the plain path's rounding of its add. */
AMP_SIMD static inline __attribute__((always_inline)) int
mac_fused(float *acc, const double (*w)[16], const __m256d *xv, int n,
          int engines)
{
	__m256d sum[AMP_ENGINES / 4], nan = _mm256_setzero_pd();
#pragma GCC unroll 4
	for (int g = 0; g < engines; g += 4) {
		__m256d v = _mm256_cvtps_pd(_mm_loadu_ps(acc + g));
#pragma GCC unroll 8
		for (int i = 0; i < n; i++)
			v = _mm256_fmadd_pd(xv[i], _mm256_loadu_pd(&w[i][g]),
			                    v);
		sum[g / 4] = v;
		/* unordered pairs: a NaN in either */
		if (g % 8 == 4)
			nan = _mm256_or_pd(nan, _mm256_cmp_pd(sum[g / 4 - 1], v,
			                                      _CMP_UNORD_Q));
	}
	if (_mm256_movemask_pd(nan))
		return 0;
#pragma GCC unroll 4
	for (int g = 0; g < engines; g += 4)
		_mm_storeu_ps(acc + g, _mm256_cvtpd_ps(sum[g / 4]));
	return 1;
}

/* Step 4 of the fast forms: end of group after phase 3. */
AMP_SIMD static inline __attribute__((always_inline)) void
group_end(AmpState *s, int p)
{
	if (p == 3)
		for (int g = 0; g < AMP_ENGINES; g += 8) {
			_mm256_storeu_ps(&s->done[g],
			                 _mm256_loadu_ps(&s->acc[g]));
			_mm256_storeu_ps(&s->acc[g],
			                 _mm256_loadu_ps(&s->next[g]));
		}
}

/* sim_amp_fast's work for one form (f8 a constant), a: sim_amp_ctx(c, f8). */
AMP_SIMD static inline __attribute__((always_inline)) uint64_t
sim_amp_run(Tile *t, Context *c, int p, int f8, uint64_t xw, uint64_t part,
            AmpCtx a)
{
	AmpState *s = &c->amp;
	AmpWeights *aw = &t->amp_w;
	if (aw->gen[p] != t->cwei_gen || aw->key[p] != a.key)
		return sim_amp_run_stale(t, c, p, f8, xw, part);
	const double(*w)[16] = aw->w[p];
	/* 1, 2: engines 4p .. 4p + 3 give their results, take partials */
	uint64_t res = (uint64_t)_mm_cvtsi128_si64(
	    _mm_cvtps_ph(_mm_loadu_ps(&s->done[4 * p]),
	                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	_mm_storeu_ps(&s->next[4 * p],
	              _mm_cvtph_ps(_mm_cvtsi64_si128((long long)part)));
	/* 3: the inputs, exact, each in every lane of a vector */
	__m256d xv[AMP_MAX_INPUTS];
	int ok;
	if (f8) {
		const double *v = a.in8;
		uint32_t lo = (uint32_t)xw, hi = (uint32_t)(xw >> 32);
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++) {
			xv[i] = _mm256_broadcast_sd(&v[(lo >> (8 * i)) & 255]);
			xv[i + 4] =
			    _mm256_broadcast_sd(&v[(hi >> (8 * i)) & 255]);
		}
		ok = mac_fused(s->acc, w, xv, 8, 16);
	} else {
		__m256d x = _mm256_cvtps_pd(
		    _mm_cvtph_ps(_mm_cvtsi64_si128((long long)xw)));
		xv[0] = _mm256_permute4x64_pd(x, 0x00);
		xv[1] = _mm256_permute4x64_pd(x, 0x55);
		xv[2] = _mm256_permute4x64_pd(x, 0xaa);
		xv[3] = _mm256_permute4x64_pd(x, 0xff);
		ok = mac_fused(s->acc, w, xv, 4, 16);
	}
	if (!ok)
		return sim_amp_run_nan(t, c, p, f8, xw, res);
	group_end(s, p);
	return res;
}
#else
#define AMP_SIMD
#endif

/* f16v4hihov4amp (f8 = 0) and f8v8hihov4amp (f8 = 1), operands d, for the
 * fast paths: 0, having changed nothing, if the plain form must run it;
 * else the instruction's AMP work done and the words for its destination
 * pair in *res, not yet written. It reads no register but its operands and
 * $FP_NFMT/$FP_SCL, and no memory, so a bundle's main half may write its
 * own registers and memory after it (tile.c's fused bundles). Inline, so
 * that a fused bundle makes one call (the arithmetic's) for its AMP half,
 * or none where SIM_AMP_INLINE. inside and avx2: what sim_amp_fast below
 * asks (inside 2: the input pair inside $a0..$a12, the partials $a14:15,
 * read as 0); a: sim_amp_ctx(c, f8). */
static inline __attribute__((always_inline)) int
sim_amp_fast_at(Tile *t, Context *c, AmpDec d, int f8, int inside, int avx2,
                AmpCtx a, uint64_t *res)
{
#if defined(__x86_64__) && defined(__GNUC__)
	uint64_t x, pt; /* the input and partials pairs */
	if (inside == 2) {
		memcpy(&x, &c->a[d.src], 8);
		pt = 0;
	} else if (inside) { /* both inside $a0..$a12 */
		memcpy(&x, &c->a[d.src], 8);
		memcpy(&pt, &c->a[d.part], 8);
	} else {
		pt = (uint64_t)(d.part + 1 >= 14 ? 0 : c->a[d.part + 1]) << 32 |
		     (d.part >= 14 ? 0 : c->a[d.part]);
		x = (uint64_t)(d.src + 1 >= 14 ? 0 : c->a[d.src + 1]) << 32 |
		    (d.src >= 14 ? 0 : c->a[d.src]);
	}
	/* a NaN among the 4 results out (SSE, in every x86-64), a half with
	 * the all-ones exponent among the partials (in host registers: no
	 * vector constants to build at each bundle); a NaN among the inputs
	 * makes every sum NaN, which the run redoes from the input word */
	__m128 done = _mm_loadu_ps(&c->amp.done[4 * d.p]);
	int bad =
	    _mm_movemask_ps(_mm_cmpunord_ps(done, done)) | sim_f16_special(pt);
	if (bad || !avx2)
		return 0;
#if SIM_AMP_INLINE
	*res = sim_amp_run(t, c, d.p, f8, x, pt, a);
#else
	(void)a;
	*res = f8 ? sim_amp_run_f8(t, c, d.p, x, pt)
	          : sim_amp_run_f16(t, c, d.p, x, pt);
#endif
	return 1;
#else
	(void)t, (void)c, (void)d, (void)f8, (void)inside, (void)avx2, (void)a,
	    (void)res;
	return 0;
#endif
}

/* sim_amp_fast_at with what its caller may know once for many bundles
 * (tile.c's run_fused) asked here: whether the input and partials pairs
 * are both inside $a0..$a12, whether the host's AVX2 forms may run. */
static inline __attribute__((always_inline)) int
sim_amp_fast(Tile *t, Context *c, AmpDec d, int f8, uint64_t *res)
{
	return sim_amp_fast_at(t, c, d, f8, d.src < 13 && d.part < 13,
	                       sim_use_avx2(), sim_amp_ctx(c, f8), res);
}

#endif

/*
 * test_kernel_rowwise.c - kernels/rowwise.S on one emulated tile: both
 * ops in f32 and f16 over several blocks (one element, fewer rows than
 * workers, rows ending inside an atom, padded row strides, in place,
 * SigLIP-sized rows; the f16 softmax also from and into the GEMM C layout's
 * panels), random data, compared with a double-precision
 * reference written here, and the call's cycles with rw_cycles (exact).
 * Bad calls are rejected by rw_check with a message.
 *
 * Tolerances. The kernel computes in f32 (unit roundoff u = 2^-24): a
 * row's sum in two lanes of recursive f32 additions is within n u of the
 * exact sum of magnitudes (the standard bound for recursive summation,
 * n = cols), and every other step adds a few roundings. So an f32 result
 * is checked against
 *   layernorm: 4 (n + 8) u (|gamma| (|z| + max|x| / std) + |beta|), the
 *              mean's error n u max|x| scaled by gamma / std, z the
 *              normalised value;
 *   softmax:   4 (n + 8 + |t|max) u p, relative: the sum's n u, and
 *              exp's argument t = scale (x - max) carries 2 u |t|.
 * An f16 result adds half an f16 ulp of the reference (2^-11 |ref|, and
 * 2^-25 for subnormals): the kernel rounds its f32 value once.
 *
 * The f16 softmax with its exps in f16 (rw_softmax_f16h) rounds max - x
 * and t to f16 (2 2^-11 |t| on exp's argument), e to f16 (2^-11, 2^-25
 * absolute below f16's normals), the sum's reciprocal to f16 and y
 * (2^-11 each): y_k is within p_k (eps_k + dS / S + 2 2^-11) + 2 2^-25
 * with eps_k = 2^-10 |t_k| + 2^-11, dS = sum e_k eps_k + n 2^-25 + the
 * f32 sum's slack; checked with a margin of 2^-8 of that for the
 * products of these small terms.
 *
 * The f16 layernorm writing F143 (rw_layernorm_f16h8) takes the f32
 * mean, rounds it to f16 (m16), sums the squares of the deviations x -
 * m16 rounded to f16 (each within 2^-11, so the variance within 2^-10 +
 * 2^-22, and the mean's shift adds (m16 - mean)^2 <= 2^-22 mean^2:
 * rsqrt within 2^-11 + 2^-23 (1 + mean^2 / var)), rounds rsqrt to f16
 * (2^-11), forms z in one rounding to f32 then f16, z gamma and + beta
 * in f16: y within the f32 layernorm's bound plus (1 + 2^-9) (|gamma|
 * (2^-10 |z| + 2^-11 |mean| / std + |z| (2^-11 + 2^-23 (1 + mean^2 /
 * var))) + 2^-11 (|z gamma| + |y|)) + 3 2^-25, then half an F143
 * step. In split mode, where the statistics stay in the argument block,
 * every byte is also checked against a model of that arithmetic written
 * here (rounding to f16 and F143 on their grids, to f32 by C's float).
 */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/asm/asm.h"
#include "../src/kernels/kernels.h"
#include "../src/bench/tile_kernel.h"
#include "../src/kernels/rowwise.h"
#include "../src/util/fp.h"
#include "../src/util/util.h"

enum {
	ARGS = 0x7f000,
	G_AT = 0x7a000, /* gamma, beta: 8 KiB each */
	B_AT = 0x7c000,
	X_AT = 0x80000,
	D_AT = 0xa0000,
	SPAN = 0x40000 /* X_AT .. the end of the dst region */
};

#define U32 0x1p-24

/* ---- data ---- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t
rnd32(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* uniform in [lo, hi) */
static double
rnd_range(double lo, double hi)
{
	return lo + rnd32() / 4294967296.0 * (hi - lo);
}

/* The value of an f16 code, from the format's definition. */
static double
f16_value(uint16_t h)
{
	int e = h >> 10 & 31;
	double m = h & 1023;
	double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
	return h & 0x8000 ? -v : v;
}

/* The f16 code nearest below |x| (truncation: any f16 value will do as
 * input data), with x's sign; |x| < 65504. */
static uint16_t
f16_trunc(double x)
{
	int e;
	double f = frexp(fabs(x), &e); /* |x| = f 2^e, f in [0.5, 1) */
	uint16_t h =
	    e < -13 ? (uint16_t)ldexp(fabs(x), 24) /* subnormal */
	            : (uint16_t)((e + 14) << 10 | ((int)ldexp(f, 11) & 1023));
	return x < 0 ? h | 0x8000 : h;
}

static double
f32_value(uint32_t b)
{
	float f;
	memcpy(&f, &b, 4);
	return f;
}

/* Store x (exactly representable: made by f16_trunc or a float) at p. */
static double
put_elem(uint8_t *p, DType t, double x)
{
	if (t == DT_F32) {
		uint32_t b = fp_float_f32((float)x);
		memcpy(p, &b, 4);
		return f32_value(b);
	}
	uint16_t h = f16_trunc(x);
	memcpy(p, &h, 2);
	return f16_value(h);
}

static double
get_elem(const uint8_t *p, DType t)
{
	if (t == DT_F32) {
		uint32_t b;
		memcpy(&b, p, 4);
		return f32_value(b);
	}
	uint16_t h;
	memcpy(&h, p, 2);
	return f16_value(h);
}

/* ---- the tile ---- */

static const TileImage *
image(void)
{
	static TileImage img;
	static int done;
	if (!done) {
		static const char *const names[] = {"rowwise", "rowwise_f8"};
		Diag d;
		assert_int_equal(
		    kernel_image(names, 2, chip_default(), &img, &d), 0);
		done = 1;
	}
	return &img;
}

typedef struct {
	uint32_t rows, cols;
	uint32_t pad; /* bytes of row stride past the row's atoms */
	int in_place;
	uint32_t panel; /* 0, or dst in panels of rows + panel - 1 rows */
	int x_panels;   /* x in such panels too */
} Block;

/* 1: the f16 softmax's calls take their exps in f16 (RwCall.exp_f16);
 * to_f8 1 too: they write F143 at 2^F8_SCALE (RwCall.dst_f8), dst in
 * panels. ln8: the f16 layernorm writes F143 at 2^LN8_SCALE, dst in
 * rows of cols bytes. */
static int exp16, to_f8, ln8, plain, unnorm;
enum { F8_SCALE = -7, LN8_SCALE = -2 };

/* The value of an F143 code at 2^F8_SCALE, from the format's definition
 * (1-4-3, bias 8, subnormals at exponent field 0); y >= 0 here, so a
 * sign bit (0x80 is F143's NaN) fails. */
static double
f143_value(uint8_t q)
{
	if (q & 0x80)
		fail_msg("F143 code 0x%02x: negative or NaN", q);
	int e = q >> 3;
	double m = q & 7;
	return ldexp(e ? 8 + m : m, (e ? e : 1) - 8 - 3 + F8_SCALE);
}

/* v rounded to nearest even on the grid of `mant` fraction bits, with
 * exponents from emin (subnormals below); no overflow here. */
static double
round_grid(double v, int mant, int emin)
{
	int e;
	frexp(v, &e); /* |v| in [2^(e-1), 2^e) */
	e = e - 1 < emin ? emin : e - 1;
	return rint(ldexp(v, mant - e)) * ldexp(1, e - mant);
}

static double
round_f16(double v)
{
	return round_grid(v, 10, -14);
}

/* The value of an F143 code at 2^LN8_SCALE, any sign (0x80: NaN). */
static double
f143_signed(uint8_t q)
{
	if (q == 0x80)
		fail_msg("F143 code 0x80 (NaN)");
	int e = q >> 3 & 15;
	double m = q & 7,
	       v = ldexp(e ? 8 + m : m, (e ? e : 1) - 8 - 3 + LN8_SCALE);
	return q & 0x80 ? -v : v;
}

/* Half an F143 step at 2^s at or below v >= 0. */
static double
f143_half_step(double v, int s)
{
	int e;
	frexp(ldexp(v, -s), &e); /* v 2^-s in [2^(e-1), 2^e) */
	e = e - 1 < -7 ? -7 : e - 1;
	return ldexp(1, e - 4 + s);
}

/* Reference row results for row r into ref[0..cols-1] and per-element
 * tolerances into tol[]. */
static void
reference(const RwCall *c, const double *x, const double *g, const double *b,
          double *ref, double *tol)
{
	uint32_t n = c->cols;
	double slack = 4 * (n + 8) * U32;
	if (c->op == RW_LAYERNORM) {
		double mean = 0, var = 0, amax = 0;
		for (uint32_t k = 0; k < n; k++) {
			mean += x[k];
			amax = fmax(amax, fabs(x[k]));
		}
		mean /= n;
		for (uint32_t k = 0; k < n; k++)
			var += (x[k] - mean) * (x[k] - mean);
		var /= n;
		double sd = sqrt(var + c->eps);
		for (uint32_t k = 0; k < n; k++) {
			double z = (x[k] - mean) / sd;
			ref[k] = z * g[k] + b[k];
			tol[k] = slack * (fabs(g[k]) * (fabs(z) + amax / sd) +
			                  fabs(b[k]));
			/* in f16 (rw_layernorm_f16h8), then F143; the
			 * variance from deviations rounded to f16 about the
			 * mean rounded to f16: rsqrt within 2^-11 + 2^-23 (1
			 * + mean^2 / var) */
			if (ln8)
				tol[k] +=
				    (1 + 0x1p-9) *
				        (fabs(g[k]) *
				             (0x1p-10 * fabs(z) +
				              0x1p-11 * fabs(mean) / sd +
				              fabs(z) *
				                  (0x1p-11 +
				                   0x1p-23 * (1 + mean * mean /
				                                      var))) +
				         0x1p-11 *
				             (fabs(z * g[k]) + fabs(ref[k]))) +
				    3 * 0x1p-25;
		}
		for (uint32_t k = 0; ln8 && k < n; k++)
			tol[k] +=
			    f143_half_step(fabs(ref[k]) + tol[k], LN8_SCALE);
		if (ln8)
			return;
	} else {
		double m = -INFINITY, sum = 0, tmax = 0;
		for (uint32_t k = 0; k < n; k++)
			m = fmax(m, x[k]);
		for (uint32_t k = 0; k < n; k++) {
			sum += exp(c->scale * (x[k] - m));
			tmax = fmax(tmax, c->scale * (m - x[k]));
		}
		for (uint32_t k = 0; k < n; k++) {
			ref[k] = exp(c->scale * (x[k] - m)) / sum;
			tol[k] = 4 * (n + 8 + tmax) * U32 * ref[k];
		}
		/* unnormalised (rw_softmax_f16h8u): e within eps_k */
		for (uint32_t k = 0; c->unnorm && k < n; k++) {
			ref[k] = exp(c->scale * (x[k] - m));
			tol[k] = (1 + 0x1p-8) *
			         (ref[k] * (0x1p-10 * c->scale * (m - x[k]) +
			                    0x1p-11) +
			          0x1p-25);
		}
		if (c->unnorm)
			return;
		if (c->exp_f16) {
			double ds = (n * 0x1p-25 + 4 * (n + 8) * U32 * sum);
			for (uint32_t k = 0; k < n; k++)
				ds +=
				    exp(c->scale * (x[k] - m)) *
				    (0x1p-10 * c->scale * (m - x[k]) + 0x1p-11);
			for (uint32_t k = 0; k < n; k++)
				tol[k] =
				    (1 + 0x1p-8) *
				    (ref[k] *
				         (0x1p-10 * c->scale * (m - x[k]) +
				          0x1p-11 + ds / sum + 2 * 0x1p-11) +
				     2 * 0x1p-25);
			return;
		}
	}
	if (c->type == DT_F16)
		for (uint32_t k = 0; k < n; k++)
			tol[k] += 0x1p-11 * fabs(ref[k]) + 0x1p-25;
}

/* F32 bits as a float. */
static float
f32_of(const uint8_t *p)
{
	uint32_t b;
	memcpy(&b, p, 4);
	return (float)f32_value(b);
}

/* rw_layernorm_f16h8's row r in split mode, byte for byte: its
 * statistics from the argument block `args` after the call (the row's
 * -mean; its segments' sums of squares about -mean rounded to f16,
 * checked against the model of pass 2, summed in segment order, as the
 * kernel combines them), then z = f16(f32(r16 x + r16
 * (-m16))) (both products exact), y = f16(f16(z gamma) + beta), F143 on
 * its grid. Rows mode keeps no statistics: the bound only. */
static void
ln8_check(const RwCall *c, const uint8_t *args, uint32_t r, const double *x,
          const double *g, const double *b, const uint8_t *got,
          const double *ref, const double *tol)
{
	uint32_t split, k1;
	memcpy(&split, args + 96, 4);
	if (!split)
		return;
	memcpy(&k1, args + 104 + 6 * 4, 4); /* segments - 2 */
	k1++;
	const uint8_t *v = args + 104 + 56 * (k1 + 1) * r;
	float nm = f32_of(v + 12 * 4), ss = 0;
	double m16 = round_f16(nm);
	/* each segment's sum of squares (its vertex's pass-2 partial), of
	 * whole pairs [s P / k, (s + 1) P / k): d = f16(x + (-m16)), d^2
	 * exact into accumulator col % 8 (fused, one rounding), the eight
	 * read and added as ACC8_SUM does */
	uint32_t pairs = c->cols / 8;
	for (uint32_t s = 0; s <= k1; s++) {
		float acc[8] = {0};
		for (uint32_t k = s * pairs / (k1 + 1) * 8;
		     k < (s + 1) * pairs / (k1 + 1) * 8; k++) {
			float d = (float)round_f16(x[k] + m16);
			acc[k % 8] = fmaf(d, d, acc[k % 8]);
		}
		float part = ((acc[4] + acc[6]) + (acc[0] + acc[2])) +
		             ((acc[5] + acc[7]) + (acc[1] + acc[3])),
		      kept = f32_of(v + 56 * s + 11 * 4);
		if (part != kept)
			fail_msg("layernorm to f8 %ux%u: row %u segment %u: "
			         "sum of squares %.9g, the model's %.9g",
			         c->rows, c->cols, r, s, (double)kept,
			         (double)part);
		ss = s ? ss + part : part;
	}
	float mean_sq = ss * (float)(1.0 / c->cols), var = mean_sq + c->eps,
	      rs = (float)(1 / sqrt((double)var));
	double r16 = round_f16(rs);
	for (uint32_t k = 0; k < c->cols; k++) {
		double z = round_f16((float)(r16 * x[k] + r16 * m16)),
		       y = round_f16(round_f16(z * g[k]) + b[k]),
		       want = round_grid(ldexp(y, -LN8_SCALE), 3, -7),
		       have = ldexp(f143_signed(got[k]), -LN8_SCALE);
		if (have != want)
			fail_msg("layernorm to f8 %ux%u: row %u col %u: code "
			         "0x%02x (%g), the model's %g (y %g, f64 %g "
			         "+- %g)",
			         c->rows, c->cols, r, k, got[k], have, want, y,
			         ref[k], tol[k]);
	}
}

/* rw_softmax_f16h8u's row, byte for byte: the max (exact), t =
 * f16(f16(max - x) f16(-scale)), e = f16(exp t), F143 of e at
 * 2^F8_SCALE on its grid; the lanes of the last pair past cols 0. */
static void
unnorm_check(const RwCall *c, uint32_t r, const double *x, const uint8_t *row,
             uint32_t dpanel)
{
	double m = -INFINITY, ns = round_f16(-c->scale);
	uint32_t pairs_end = ((c->cols + 3) / 4 + 1) / 2 * 8;
	for (uint32_t k = 0; k < c->cols; k++)
		m = fmax(m, x[k]);
	for (uint32_t k = 0; k < pairs_end; k++) {
		uint8_t got = row[k / 32 * dpanel + k % 32];
		double want =
		    k < c->cols
		        ? round_grid(ldexp(round_f16(exp(round_f16(
		                               round_f16(m - x[k]) * ns))),
		                           -F8_SCALE),
		                     3, -7)
		        : 0;
		if (ldexp(f143_value(got), -F8_SCALE) != want)
			fail_msg("unnormalised softmax %ux%u: row %u col %u: "
			         "code 0x%02x, the model's %g",
			         c->rows, c->cols, r, k, got, want);
	}
}

/* Runs one call and checks it; returns its cycles. */
static uint64_t
run_case(RwOp op, DType type, const Block *bl)
{
	uint32_t es = (uint32_t)dtype_size(type);
	/* x rows as long as dst's (the f16 softmax keeps e in f32 after
	 * each dst row), so that a call may run in place; an f8 dst's rows
	 * of cols bytes apart */
	uint32_t dbytes = rw_dst_row_bytes(op, type, ln8 ? DT_F8_F143 : DT_F32,
	                                   bl->cols),
	         stride =
	             rw_dst_row_bytes(op, type, DT_F32, bl->cols) + bl->pad,
	         dstride = ln8 ? dbytes + bl->pad : stride,
	         panel = bl->panel ? (bl->rows + bl->panel - 1) * 32 : 0,
	         /* dst in f8: panels of 32 columns, a panel row of 32
	          * bytes (the f8 GEMM's A K-panel rows) */
	    prow = 32, dpanel = panel;
	RwCall c = {.op = op,
	            .type = type,
	            .rows = bl->rows,
	            .cols = bl->cols,
	            .x = X_AT,
	            .x_stride = bl->x_panels ? 32 : stride,
	            .x_panel = bl->x_panels ? panel : 0,
	            .dst = bl->in_place ? X_AT : D_AT,
	            .dst_stride = panel ? prow : dstride,
	            .dst_panel = dpanel,
	            .gamma = G_AT,
	            .beta = B_AT,
	            .eps = 1e-6f,
	            .scale = 0.125f,
	            .exp_f16 = exp16 && op == RW_SOFTMAX && type == DT_F16,
	            .dst_f8 = to_f8 || ln8 ? DT_F8_F143 : DT_F32,
	            .f8_scale = ln8 ? LN8_SCALE : F8_SCALE,
	            .plain = plain,
	            .unnorm = unnorm};
	Diag d;
	if (rw_check(&c, &d))
		fail_msg("rw_check: %s", d.msg);

	/* memory from G_AT: gamma, beta, args, x, dst; garbage first */
	uint32_t span = X_AT + SPAN - G_AT;
	uint8_t *mem = xmalloc(span);
	for (uint32_t i = 0; i < span; i++)
		mem[i] = (uint8_t)rnd32();
	double *x = xmalloc(sizeof(double) * bl->rows * bl->cols),
	       *gv = xmalloc(sizeof(double) * bl->cols),
	       *bv = xmalloc(sizeof(double) * bl->cols);
	/* LayerNorm rows with an offset (mean far from 0 relative to the
	 * spread), softmax rows with a wide range (some exps underflow) */
	double off = op == RW_LAYERNORM ? 3 : 0,
	       spread = op == RW_LAYERNORM ? 2 : 60;
	for (uint32_t k = 0; k < bl->cols; k++) {
		gv[k] = put_elem(mem + G_AT - G_AT + k * es, type,
		                 rnd_range(0.5, 1.5));
		bv[k] = put_elem(mem + B_AT - G_AT + k * es, type,
		                 rnd_range(-1, 1));
		if (plain) /* y = z; gamma and beta (garbage) not read */
			gv[k] = 1, bv[k] = 0;
	}
	/* element k of row r: in a row, or in its panel row */
#define AT(p, r, k)                                                            \
	((r) * ((p) ? 32 : stride) +                                           \
	 ((p) ? (k) / 16 * (p) + (k) % 16 * es : (k)*es))
	for (uint32_t r = 0; r < bl->rows; r++)
		for (uint32_t k = 0; k < bl->cols; k++)
			x[r * bl->cols + k] =
			    put_elem(mem + X_AT - G_AT + AT(c.x_panel, r, k),
			             type, off + rnd_range(-spread, spread));

	/* the calls take turns at the nominal profile and its bounds */
	static int turn;
	const Chip *chip = profile_chip((TimingBound)(turn++ % 3));
	Tile *t = tile_new(chip, 0);
	const TileImage *img = image();
	tile_load_image(t, img);
	tile_write(t, G_AT, mem, span);
	uint64_t cycles = 0;
	if (rw_tile_call(t, img, &c, ARGS, &cycles, &d))
		fail_msg("%s", d.msg);
	uint8_t *after = xmalloc(span);
	tile_read(t, G_AT, after, span);

	double *ref = xmalloc(sizeof(double) * bl->cols),
	       *tol = xmalloc(sizeof(double) * bl->cols);
	uint8_t *written = xcalloc(span, 1);
	uint32_t g = 8 / es, atoms = (bl->cols + g - 1) / g;
#define DST_AT(r, k)                                                           \
	(c.dst - G_AT +                                                        \
	 (to_f8 ? (r)*32 + (k) / 32 * dpanel + (k) % 32                        \
	  : ln8 ? (r)*dstride + (k)                                            \
	        : AT(panel, r, k)))
	for (uint32_t r = 0; r < bl->rows; r++) {
		reference(&c, x + r * bl->cols, gv, bv, ref, tol);
		for (uint32_t k = 0; to_f8 && k < bl->cols; k++)
			tol[k] += f143_half_step(ref[k] + tol[k], F8_SCALE);
		if (ln8)
			ln8_check(&c, after + ARGS - G_AT, r, x + r * bl->cols,
			          gv, bv, after + DST_AT(r, 0), ref, tol);
		if (unnorm)
			unnorm_check(&c, r, x + r * bl->cols,
			             after + DST_AT(r, 0), dpanel);
		for (uint32_t k = 0; k < bl->cols; k++) {
			double got = to_f8 ? f143_value(after[DST_AT(r, k)])
			             : ln8
			                 ? f143_signed(after[DST_AT(r, k)])
			                 : get_elem(after + DST_AT(r, k), type);
			if (!(fabs(got - ref[k]) <= tol[k]))
				fail_msg(
				    "%s %s %ux%u: row %u col %u: got %.9g, "
				    "want %.9g +- %.3g",
				    op == RW_LAYERNORM ? "layernorm"
				                       : "softmax",
				    type == DT_F32 ? "f32" : "f16", bl->rows,
				    bl->cols, r, k, got, ref[k], tol[k]);
		}
		if (!panel)
			memset(written + DST_AT(r, 0), 1, dbytes);
		/* whole atoms, or (f8) pairs of them */
		for (uint32_t a = 0; panel && a < atoms; a += to_f8 ? 2 : 1)
			memset(written + DST_AT(r, a * g), 1, 8);
	}
#undef DST_AT
#undef AT
	if (panel && !unnorm) /* the e after the panels (f8: of 8 atoms) */
		memset(written + c.dst - G_AT +
		           (to_f8 ? (atoms + 7) / 8 : (atoms + 3) / 4) * dpanel,
		       1, rw_panel_e_bytes(bl->rows, bl->cols, to_f8));
	/* nothing else changed but the argument block */
	memset(written + ARGS - G_AT, 1, RW_ARGS_BYTES);
	for (uint32_t i = 0; i < span; i++)
		if (!written[i] && after[i] != mem[i])
			fail_msg("byte 0x%x changed", i + G_AT);

	uint64_t want = rw_cycles(chip, &c);
	if (cycles != want)
		fail_msg("%ux%u at %s: %llu cycles, rw_cycles says %llu",
		         bl->rows, bl->cols, chip->timing->spec,
		         (unsigned long long)cycles, (unsigned long long)want);
	tile_free(t);
	free(mem);
	free(after);
	free(written);
	free(x);
	free(gv);
	free(bv);
	free(ref);
	free(tol);
	return cycles;
}

static const Block blocks[] = {
    {1, 1, 0, 0, 0, 0},    /* one element, a tail of one lane */
    {3, 5, 0, 0, 0, 0},    /* fewer rows than workers; a partial tail */
    {7, 64, 0, 0, 0, 0},   /* whole atoms */
    {13, 37, 16, 0, 0, 0}, /* padded rows, odd cols */
    {9, 30, 8, 1, 0, 0},   /* in place */
    {6, 2, 0, 0, 0, 0},    /* one atom a row (f32) */
    /* fewer rows than workers: rows split into segments */
    {1, 300, 0, 0, 0, 0},
    {2, 101, 8, 0, 0, 0},
    {5, 64, 0, 0, 0, 0},
    {4, 37, 16, 1, 0, 0},
    {1, 9, 0, 0, 0, 0},
};

static void
run_all(RwOp op, DType type)
{
	for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
		run_case(op, type, &blocks[i]);
}

static void
test_layernorm_f32(void **state)
{
	run_all(RW_LAYERNORM, DT_F32);
}

static void
test_layernorm_f16(void **state)
{
	run_all(RW_LAYERNORM, DT_F16);
}

static void
test_softmax_f32(void **state)
{
	run_all(RW_SOFTMAX, DT_F32);
}

static void
test_softmax_f16(void **state)
{
	run_all(RW_SOFTMAX, DT_F16);
}

/* SigLIP's rows: LayerNorm over the 1152 features, softmax over the 729
 * keys. One row on a tile is split over the six workers: it takes less
 * than a third of the time of six rows, one a worker. */
static void
test_siglip_rows(void **state)
{
	for (int op = 0; op < 2; op++)
		for (int t = 0; t < 2; t++) {
			uint64_t one = run_case((RwOp)op, (DType)t,
			                        &(Block){1, 1152, 0, 0, 0, 0}),
			         six = run_case((RwOp)op, (DType)t,
			                        &(Block){6, 1152, 0, 0, 0, 0});
			if (3 * one >= six)
				fail_msg("1 row: %llu cycles, 6 rows: %llu",
				         (unsigned long long)one,
				         (unsigned long long)six);
		}
	run_case(RW_LAYERNORM, DT_F16, &(Block){8, 1152, 0, 0, 0, 0});
	run_case(RW_LAYERNORM, DT_F32, &(Block){6, 1152, 0, 0, 0, 0});
	run_case(RW_SOFTMAX, DT_F16, &(Block){7, 729, 8, 0, 0, 0});
	run_case(RW_SOFTMAX, DT_F32, &(Block){6, 729, 0, 0, 0, 0});
}

/* The f16 softmax into the GEMM C layout: rows mode (a worker taking two
 * rows, a partial last panel, padded panels), split mode (segments of
 * whole panels), one panel, SigLIP's 8 rows of 729 a tile. */
static void
test_softmax_panels(void **state)
{
	static const Block panels[] = {
	    {1, 1, 0, 0, 1, 0},
	    {3, 5, 0, 0, 2, 0},
	    {7, 64, 16, 0, 1, 0},
	    {13, 37, 0, 0, 3, 0},
	    {1, 20, 0, 0, 1, 0},
	    {2, 101, 8, 0, 2, 0},
	    {5, 64, 0, 0, 1, 0},
	    {1, 729, 0, 0, 1, 0},
	    {8, 729, 0, 0, 1, 0},
	    {6, 33, 0, 0, 1, 0},
	    /* x in panels too */
	    {1, 1, 0, 0, 1, 1},
	    {3, 5, 0, 0, 2, 1},
	    {7, 64, 0, 0, 1, 1},
	    {13, 37, 0, 0, 3, 1},
	    {1, 20, 0, 0, 1, 1},
	    {2, 101, 0, 0, 2, 1},
	    {1, 17, 0, 0, 1, 1},
	    {1, 729, 0, 0, 1, 1},
	    {8, 729, 0, 0, 1, 1},
	    {6, 33, 0, 0, 1, 1},
	    {4, 100, 0, 0, 1, 1},
	    /* the So400m tower's tiles: 7 rows of 729 (6 a call, then 1),
	     * 2 (the split call after 6); 13 x 37 and 26 atoms: the
	     * pipelined f8 pass 3's last stored pair ending a panel row */
	    {7, 729, 0, 0, 1, 1},
	    {6, 729, 0, 0, 1, 1},
	    {2, 729, 0, 0, 1, 1},
	    {3, 101, 0, 0, 1, 1},
	};
	for (size_t i = 0; i < sizeof panels / sizeof panels[0]; i++)
		run_case(RW_SOFTMAX, DT_F16, &panels[i]);
}

/* An f16 softmax over `rows` rows of SigLIP's 729 keys in panels (x and
 * dst), for rw_cycles only (no addresses). */
static RwCall
panel_call(uint32_t rows)
{
	return (RwCall){.op = RW_SOFTMAX,
	                .type = DT_F16,
	                .rows = rows,
	                .cols = 729,
	                .x_stride = 32,
	                .x_panel = rows * 32,
	                .dst_stride = 32,
	                .dst_panel = rows * 32,
	                .scale = 1};
}

/* The f16 softmax with its exps in f16: the blocks, SigLIP's rows, the
 * panels. On SigLIP's 8 rows of 729 in panels at the nominal profile it
 * takes less than half the cycles of the f32 exps': 9.5 turns an atom
 * of four halves (1 + 4.5 + 2 bundles over the three passes: pass 2 two
 * atoms in 9 bundles; two f16v2exp of 2 turns) against 22 (1 + 10 + 3,
 * four f32exp of 3), 43% before the rows' fixed issues. */
static void
test_softmax_f16h(void **state)
{
	exp16 = 1;
	run_all(RW_SOFTMAX, DT_F16);
	test_softmax_panels(state);
	run_case(RW_SOFTMAX, DT_F16, &(Block){7, 729, 8, 0, 0, 0});
	RwCall c = panel_call(8), h = c;
	h.exp_f16 = 1;
	uint64_t f32 = rw_cycles(chip_default(), &c),
	         f16 = rw_cycles(chip_default(), &h);
	if (100 * f16 >= 50 * f32)
		fail_msg("8 x 729: %llu cycles with f16 exps, %llu with f32",
		         (unsigned long long)f16, (unsigned long long)f32);
	exp16 = 0;
}

/* The same writing F143 (RwCall.dst_f8), dst in panels: each y the
 * f16 softmax's within half an F143 step; the cycles exact. */
static void
test_softmax_f16h8(void **state)
{
	exp16 = to_f8 = 1;
	test_softmax_panels(state);
	exp16 = to_f8 = 0;
	/* 6 rows of 729 (183 atoms, a row a worker): pass 3 pipelined by
	 * pairs, 17 + 3 x 91 issues against rw_softmax_f16h's 2 x 182 and
	 * its share of `row` (10 more): 84 issues, 504 cycles, fewer a
	 * worker, less the f8 entry's two loads and two puts */
	RwCall h = panel_call(6);
	h.exp_f16 = 1;
	RwCall h8 = h;
	h8.dst_f8 = DT_F8_F143;
	uint64_t c16 = rw_cycles(chip_default(), &h),
	         c8 = rw_cycles(chip_default(), &h8);
	if (!(c8 + 504 >= c16 && c8 + 504 <= c16 + 48))
		fail_msg("6 x 729: %llu cycles into f8, %llu in f16",
		         (unsigned long long)c8, (unsigned long long)c16);
}

/* The same not divided by the sum (RwCall.unnorm): every byte the
 * model's (unnorm_check), each e within its bound and half an F143
 * step, the cycles exact. On the So400m tower's 6 rows of 729 (183
 * atoms, a row a worker, rows mode), by hand from the kernels' code: a
 * row of rw_softmax_f16h8 issues 43 + 182 (pass 1's loop) + 18 x 45 +
 * 5 x 2 (pass 2's) + 17 + 3 x 91 (pass 3's) and takes 2 turns more for
 * f32oox and 366 for its 366 f16v2exp: 1,703; unnormalised, 19 + 182 +
 * 45 + 9 x 91 (pass 2 by 92 pairs, the last one alone, called and
 * returning) and 368 f16v2exp (an odd row's last pair has an atom of
 * -inf): 1,433. Every worker 270 turns, 1,620 cycles, sooner. */
static void
test_softmax_f16h8u(void **state)
{
	exp16 = to_f8 = unnorm = 1;
	test_softmax_panels(state);
	exp16 = to_f8 = unnorm = 0;
	RwCall h8 = panel_call(6);
	h8.exp_f16 = 1;
	h8.dst_f8 = DT_F8_F143;
	RwCall u = h8;
	u.unnorm = 1;
	uint64_t c8 = rw_cycles(chip_default(), &h8),
	         cu = rw_cycles(chip_default(), &u);
	if (cu + 1620 != c8)
		fail_msg("6 x 729: %llu cycles unnormalised, %llu normalised",
		         (unsigned long long)cu, (unsigned long long)c8);
}

/* The blocks both f16h8 layernorms run: unit and split mode, padded
 * strides, SigLIP's rows of 1152. */
static const Block ln8_rows[] = {
    {1, 8, 0, 0, 0, 0},    {3, 16, 0, 0, 0, 0},   {7, 64, 0, 0, 0, 0},
    {13, 40, 16, 0, 0, 0}, {6, 8, 0, 0, 0, 0},    {1, 296, 0, 0, 0, 0},
    {2, 104, 8, 0, 0, 0},  {5, 64, 0, 0, 0, 0},   {4, 40, 16, 0, 0, 0},
    {1, 48, 0, 0, 0, 0},   {2, 16, 0, 0, 0, 0},   {1, 1152, 0, 0, 0, 0},
    {6, 1152, 0, 0, 0, 0}, {8, 1152, 0, 0, 0, 0},
};

/* The f16 layernorm writing F143 (rw_layernorm_f16h8): rows of whole
 * pairs of atoms (cols a multiple of 8) in rows mode (a worker taking
 * two rows, padded strides) and split mode (segments of whole pairs, one
 * pair a segment), SigLIP's rows; each byte within the bound, and (split
 * mode) the model's; the cycles exact. One row of 1152 takes less than
 * 40% of rw_layernorm_f16's cycles at the nominal profile: 1 + 1.5 +
 * 3.5 bundles an atom (pass 2's deviations in f16, a pair in 3 bundles)
 * against 19 (32%), and the fixed issues of the split passes. */
static void
test_layernorm_f16h8(void **state)
{
	ln8 = 1;
	for (size_t i = 0; i < sizeof ln8_rows / sizeof ln8_rows[0]; i++)
		run_case(RW_LAYERNORM, DT_F16, &ln8_rows[i]);
	ln8 = 0;
	RwCall c = {.op = RW_LAYERNORM,
	            .type = DT_F16,
	            .rows = 1,
	            .cols = 1152,
	            .x_stride = 2304,
	            .dst_stride = 2304,
	            .eps = 1e-6f};
	RwCall h = c;
	h.dst_f8 = DT_F8_F143;
	h.dst_stride = 1152;
	uint64_t f16 = rw_cycles(chip_default(), &c),
	         f8 = rw_cycles(chip_default(), &h);
	if (100 * f8 >= 40 * f16)
		fail_msg("1 x 1152: %llu cycles to f8, %llu to f16",
		         (unsigned long long)f8, (unsigned long long)f16);
}

/* The same without gamma and beta (rw_layernorm_f16h8n, RwCall.plain):
 * y = z, gamma's and beta's rows garbage that the kernel must not read
 * (the reference and the model take gamma 1 and beta 0); the same
 * blocks, and one row of 1152 in 1 + 1.5 + 1.5 bundles an atom against
 * rw_layernorm_f16h8's 1 + 1.5 + 3.5 (pass 3's three bundles a pair
 * against seven), under 30% of rw_layernorm_f16's 19 (21%, and the
 * fixed issues). */
static void
test_layernorm_f16h8n(void **state)
{
	ln8 = plain = 1;
	for (size_t i = 0; i < sizeof ln8_rows / sizeof ln8_rows[0]; i++)
		run_case(RW_LAYERNORM, DT_F16, &ln8_rows[i]);
	ln8 = plain = 0;
	RwCall h = {.op = RW_LAYERNORM,
	            .type = DT_F16,
	            .rows = 1,
	            .cols = 1152,
	            .x_stride = 2304,
	            .dst_stride = 1152,
	            .eps = 1e-6f,
	            .dst_f8 = DT_F8_F143};
	RwCall n = h;
	n.plain = 1;
	uint64_t affine = rw_cycles(chip_default(), &h),
	         none = rw_cycles(chip_default(), &n);
	/* 288 atoms on 6 workers: 48 a worker, 24 pairs; 4 bundles fewer
	 * a pair, 6 cycles a bundle: 96 x 6 fewer, and the prologue's */
	if (affine - none < 24 * 4 * 6)
		fail_msg("1 x 1152: %llu cycles without gamma and beta, %llu "
		         "with",
		         (unsigned long long)none, (unsigned long long)affine);
	RwCall f = h;
	f.dst_f8 = DT_F32;
	f.dst_stride = 2304;
	uint64_t f16 = rw_cycles(chip_default(), &f);
	if (100 * none >= 30 * f16)
		fail_msg("1 x 1152: %llu cycles without gamma and beta, %llu "
		         "to f16",
		         (unsigned long long)none, (unsigned long long)f16);
	Diag d;
	n.dst_f8 = DT_F32; /* plain writes f8 only */
	assert_int_equal(rw_check(&n, &d), IPU_EINVAL);
	n.dst_f8 = DT_F8_F143;
	n.op = RW_SOFTMAX;
	assert_int_equal(rw_check(&n, &d), IPU_EINVAL);
}

static void
check_bad(RwCall c, const char *want)
{
	Diag d;
	assert_int_equal(rw_check(&c, &d), IPU_EINVAL);
	if (!strstr(d.msg, want))
		fail_msg("message '%s' lacks '%s'", d.msg, want);
}

static void
test_bad_calls(void **state)
{
	RwCall ok = {.op = RW_LAYERNORM,
	             .type = DT_F16,
	             .rows = 4,
	             .cols = 10,
	             .x = X_AT,
	             .x_stride = 24,
	             .dst = D_AT,
	             .dst_stride = 24,
	             .gamma = G_AT,
	             .beta = B_AT,
	             .eps = 1e-6f,
	             .scale = 1};
	Diag d;
	assert_int_equal(rw_check(&ok, &d), IPU_OK);
	RwCall c = ok;
	c.type = (DType)7;
	check_bad(c, "not supported");
	c = ok;
	c.cols = 0;
	check_bad(c, "empty block");
	c = ok;
	c.cols = RW_MAX_ATOMS * 4 + 1;
	check_bad(c, "rpt");
	c = ok;
	c.x = X_AT + 4;
	check_bad(c, "x address");
	c = ok;
	c.dst_stride = 12;
	check_bad(c, "dst address");
	c = ok;
	c.dst_stride = 16;
	check_bad(c, "dst rows overlap");
	c = ok;
	c.dst = X_AT + 8;
	check_bad(c, "overlaps x");
	c = ok;
	c.gamma = D_AT + 24;
	check_bad(c, "overlaps gamma");
	c = ok;
	c.eps = -1;
	check_bad(c, "eps");
	c = ok;
	c.op = RW_SOFTMAX; /* f16: e in f32 after each dst row */
	check_bad(c, "e in f32 after the row");
	c.x_stride = c.dst_stride = 72;
	assert_int_equal(rw_check(&c, &d), IPU_OK);
	c.scale = 0;
	check_bad(c, "scale");
	c.scale = NAN;
	check_bad(c, "scale");
	c.scale = 2;
	c.gamma = D_AT; /* softmax takes no gamma */
	assert_int_equal(rw_check(&c, &d), IPU_OK);
	c.exp_f16 = 1;
	assert_int_equal(rw_check(&c, &d), IPU_OK);
	c.type = DT_F32; /* exps in f16: the f16 softmax only */
	check_bad(c, "with exps in f16 is not supported");
	c = ok;
	c.exp_f16 = 1;
	check_bad(c, "with exps in f16 is not supported");
	c = ok;
	c.dst = 0xfffffff8u;
	check_bad(c, "4 GiB");
	/* x and dst in panels: the f16 softmax's, 32-byte rows, panels
	 * of every row, apart from each other */
	c = ok;
	c.dst_stride = 32;
	c.dst_panel = 4 * 32;
	check_bad(c, "dst in panels of 128 bytes with rows of 32: not the "
	             "f16 softmax's");
	c.op = RW_SOFTMAX;
	assert_int_equal(rw_check(&c, &d), IPU_OK);
	c.x_stride = 32;
	c.x_panel = 4 * 32;
	assert_int_equal(rw_check(&c, &d), IPU_OK);
	c.x_panel = 3 * 32;
	check_bad(c, "x in panels of 96");
	c.x_panel = 4 * 32;
	c.dst_stride = 24;
	check_bad(c, "not the f16 softmax's 4 rows of 32");
	c.dst_stride = 32;
	c.dst_panel = 3 * 32;
	check_bad(c, "not the f16 softmax's 4 rows of 32");
	c.dst_panel = 4 * 32;
	c.dst = X_AT + 8; /* x's panels end at 128 bytes */
	check_bad(c, "overlaps x");
	c.dst = X_AT + 128;
	assert_int_equal(rw_check(&c, &d), IPU_OK);
	c.dst = 0xffffff80u;
	check_bad(c, "4 GiB");
	/* dst in f8: exps in f16, panel rows of 32 bytes (16 rejected), a
	 * 6-bit scale */
	c.dst = X_AT + 128;
	c.dst_f8 = DT_F8_F143;
	c.f8_scale = -7;
	check_bad(c, "1 to f8 is not supported");
	c.exp_f16 = 1;
	c.dst_stride = 16;
	c.dst_panel = 4 * 16;
	check_bad(c, "not the f16 softmax's 4 rows of 32 bytes");
	c.dst_stride = 32;
	c.dst_panel = 4 * 32;
	assert_int_equal(rw_check(&c, &d), IPU_OK);
	c.f8_scale = 32;
	check_bad(c, "scale in -32 .. 31");
	c.f8_scale = -7;
	c.dst_panel = 0;
	check_bad(c, "dst in rows");
	/* the layernorm to f8: f16, dst in rows, whole pairs of atoms */
	c = ok;
	c.cols = 16;
	c.x_stride = 32;
	c.dst_stride = 16;
	c.dst_f8 = DT_F8_F143;
	assert_int_equal(rw_check(&c, &d), IPU_OK);
	c.cols = 12;
	check_bad(c, "whole pairs of atoms");
	c.cols = 16;
	c.dst_stride = 16;
	c.dst_panel = 4 * 16;
	check_bad(c, "want rows");
	c.dst_panel = 0;
	c.type = DT_F32;
	check_bad(c, "0 to f8 is not supported");
	/* unnormalised: the softmax into f8 only */
	c.type = DT_F16;
	c.unnorm = 1;
	check_bad(c, "op 0 on type 1 to f8 unnormalised is not supported");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layernorm_f32),
	    cmocka_unit_test(test_layernorm_f16),
	    cmocka_unit_test(test_softmax_f32),
	    cmocka_unit_test(test_softmax_f16),
	    cmocka_unit_test(test_siglip_rows),
	    cmocka_unit_test(test_softmax_panels),
	    cmocka_unit_test(test_softmax_f16h),
	    cmocka_unit_test(test_softmax_f16h8),
	    cmocka_unit_test(test_softmax_f16h8u),
	    cmocka_unit_test(test_layernorm_f16h8),
	    cmocka_unit_test(test_layernorm_f16h8n),
	    cmocka_unit_test(test_bad_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

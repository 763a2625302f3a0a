/*
 * test_kernel_elementwise.c - kernels/elementwise.S, elementwise_f8.S
 * and elementwise_bias_f8.S on one emulated C600 tile: every entry over several
 * walks (one group, fewer groups or rows than workers, padded rows, GEMM C
 * panels, segment strides that do not merge, broadcast b, in place, many rows),
 * random data, compared with a host reference written here from the format
 * definitions (values decoded by formula, rounding by binary search over
 * the codes with ties to the even code), and the call's cycles with
 * ew_cycles. Bad calls are rejected by ew_check with a message.
 */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/asm/asm.h"
#include "../src/bench/tile_kernel.h"
#include "../src/kernels/elementwise.h"
#include "../src/kernels/kernels.h"
#include "../src/util/util.h"

/* sqrt(2 / pi), the GELU tanh-form constant */
#define SQRT_2_PI 0.79788456080286535588

enum { ARGS = 0x7f000, A_AT = 0x80000, B_AT = 0xa0000, D_AT = 0xc0000 };

/* ---- reference number formats, from their definitions ---- */

/* Value of a positive code of a binary format with `mant` fraction bits
 * and exponent bias `bias` (subnormals at exponent field 0). */
static double
decode_pos(uint32_t code, int mant, int bias)
{
	uint32_t e = code >> mant, f = code & ((1u << mant) - 1);
	if (e == 0)
		return ldexp(f, 1 - bias - mant);
	return ldexp((double)((1u << mant) | f), (int)e - bias - mant);
}

typedef struct {
	int mant, bias;
	uint32_t sign;    /* sign bit */
	uint32_t maxcode; /* largest finite positive code */
} Fmt;

static const Fmt F16 = {10, 15, 0x8000, 0x7bff};
static const Fmt F143 = {3, 8, 0x80, 0x7f};
static const Fmt F152 = {2, 16, 0x80, 0x7f};

static double
decode(const Fmt *f, uint32_t code)
{
	double v = decode_pos(code & (f->sign - 1), f->mant, f->bias);
	return code & f->sign ? -v : v;
}

/* Nearest code to x (finite), ties to the even code, saturating beyond
 * the largest finite value (NANOO clear). FP8 has no -0: a negative value
 * that rounds to zero is 0x00. */
static uint32_t
encode(const Fmt *f, double x, int fp8)
{
	double ax = fabs(x);
	uint32_t lo = 0, hi = f->maxcode;
	if (ax >= decode_pos(hi, f->mant, f->bias)) {
		lo = hi;
	} else {
		while (hi - lo > 1) { /* decode(lo) <= ax < decode(hi) */
			uint32_t mid = (lo + hi) / 2;
			if (decode_pos(mid, f->mant, f->bias) <= ax)
				lo = mid;
			else
				hi = mid;
		}
		double dl = ax - decode_pos(lo, f->mant, f->bias);
		double dh = decode_pos(hi, f->mant, f->bias) - ax;
		if (dh < dl || (dh == dl && (hi & 1) == 0))
			lo = hi;
	}
	if (x < 0 && !(fp8 && lo == 0))
		lo |= f->sign;
	return lo;
}

static float
f32_of(uint32_t b)
{
	float f;
	memcpy(&f, &b, 4);
	return f;
}

static uint32_t
bits_of(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

/* ---- data ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd32(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* uniform in [-r, r) */
static double
rnd_real(double r)
{
	return (rnd32() / 4294967296.0 * 2 - 1) * r;
}

static const Fmt *
fmt8(DType t)
{
	return t == DT_F8_F143 ? &F143 : &F152;
}

/* A random input element of type t for op (bit pattern). */
static uint32_t
rnd_elem(EwOp op, DType in, DType out, int scale)
{
	if (in == DT_F32) {
		if (op == EW_CAST) {
			/* f16 midpoints (exact ties) and values over the
			 * f16 range, subnormals included */
			uint32_t h = rnd32() % 0x7bff;
			double m = (decode(&F16, h) + decode(&F16, h + 1)) / 2;
			double v =
			    rnd32() % 4
			        ? ldexp(rnd_real(1), -26 + (int)(rnd32() % 42))
			        : m;
			return bits_of((float)(rnd32() & 1 ? -v : v));
		}
		return bits_of((float)rnd_real(op == EW_GELU ? 8 : 4));
	}
	if (in == DT_F16) {
		if (op == EW_CAST && out != DT_F32) {
			/* over the scaled f8 range and a little beyond */
			double top = decode(fmt8(out), 0x7f) * ldexp(1, scale);
			return encode(&F16, rnd_real(top * 1.1), 0);
		}
		if (op == EW_CAST)
			return rnd32() % 0x7c00 | (rnd32() & 0x8000);
		int gelu_h = op == EW_GELU_H || op == EW_BIAS_GELU_H;
		if (gelu_h && rnd32() % 16 == 0)
			return encode(&F16, rnd_real(400), 0); /* x^2 > f16 */
		return encode(&F16, rnd_real(op == EW_GELU || gelu_h ? 8 : 4),
		              0);
	}
	uint32_t q = rnd32() & 0xff;
	return q == 0x80 ? 0 : q; /* f8: any code but the NaN */
}

static void
put_elem(uint8_t *mem, uint32_t off, uint32_t es, uint32_t v)
{
	memcpy(mem + off, &v, es);
}

static uint32_t
get_elem(const uint8_t *mem, uint32_t off, uint32_t es)
{
	uint32_t v = 0;
	memcpy(&v, mem + off, es);
	return v;
}

static double
value(DType t, uint32_t bits)
{
	return t == DT_F32   ? f32_of(bits)
	       : t == DT_F16 ? decode(&F16, bits)
	                     : decode(fmt8(t), bits);
}

/* 0.5 x (1 + tanh u), u = sqrt(2/pi) (x + 0.044715 x^3), in double. For
 * u < 0 the sum 1 + tanh u cancels, so it is computed as the equal
 * e^2u / (1 + e^2u) there. */
static double
gelu(double x)
{
	double u = SQRT_2_PI * (x + 0.044715 * x * x * x);
	if (u >= 0)
		return 0.5 * x * (1 + tanh(u));
	return x * exp(2 * u) / (1 + exp(2 * u));
}

/* Check one output element against the reference; returns 0 if good. */
static int
check_elem(const EwCall *c, uint32_t a, uint32_t b, uint32_t got, char *why,
           size_t len)
{
	double x = value(c->in, a), y = value(c->in, b);
	uint32_t want;
	if (c->op == EW_BIAS_GELU_H) /* the GELU of the f16 sum */
		x = decode(&F16, encode(&F16, x + y, 0));
	switch (c->op) {
	case EW_ADD:
	case EW_MUL: {
		double r = c->op == EW_ADD ? x + y : x * y; /* exact */
		want =
		    c->out == DT_F32 ? bits_of((float)r) : encode(&F16, r, 0);
		break;
	}
	case EW_MAX:
		/* the larger input's bits; -0 < +0 */
		want = x > y || (x == y && !signbit(x)) ? a : b;
		break;
	case EW_CAST:
		if (c->out == DT_F32)
			want = bits_of((float)x);
		else if (c->out == DT_F16)
			want = encode(
			    &F16,
			    x * ldexp(1, c->in == DT_F32 ? 0 : c->fp8_scale),
			    0);
		else
			want = encode(fmt8(c->out), x * ldexp(1, -c->fp8_scale),
			              1);
		break;
	case EW_GELU_H:
	case EW_BIAS_GELU_H: {
		/* GELU in f16 arithmetic, u = 2^-11: 2u = x (C0 + C1 x^2)
		 * with C0, C1 rounded to f16 (relative u each) and four
		 * roundings: relative at most 5u (6u with the second-order
		 * terms), plus 2^-24 absolute where x^2 is subnormal; where
		 * x^2 saturates (|x| >= 256) the sigmoid is 1 or 0 in both.
		 * sigmoid(t + e) / sigmoid(t) is within exp(+-m |e|), m the
		 * largest (1 - sigmoid) between: 1, or 1 - sigmoid(t - |e|)
		 * for t > 0. The sigmoid and the product round once each
		 * (relative u, 2^-25 absolute below the normals). */
		double r = gelu(x),
		       t = 2 * SQRT_2_PI * (x + 0.044715 * x * x * x);
		double e = 6 * ldexp(fabs(t), -11) + ldexp(1, -24);
		double m = t - e > 0 ? 1 / (1 + exp(t - e)) : 1;
		double q = m * e < 30 ? expm1(m * e) : 1e13; /* r ~ 0 */
		double tol =
		    fabs(r) * (q * (1 + ldexp(1, -10)) + ldexp(2.01, -11)) +
		    ldexp(1, -25) * (2 + fabs(x));
		if (fabs(x) >= 256) /* sigmoid 1 or 0 */
			r = x > 0 ? x : 0, tol = 0;
		double g = value(c->out, got);
		if (c->out != DT_F16) {
			/* then narrowed to f8 (round to nearest, monotonic):
			 * between the codes of the interval's ends */
			const Fmt *f = fmt8(c->out);
			double k = ldexp(1, -c->fp8_scale);
			double lo = decode(f, encode(f, (r - tol) * k, 1)),
			       hi = decode(f, encode(f, (r + tol) * k, 1));
			if (g >= lo && g <= hi)
				return 0;
		} else if (fabs(g - r) <= tol) {
			return 0;
		}
		snprintf(why, len, "gelu_h(%.9g) = %.9g, want %.9g +- %.3g", x,
		         g, r, tol);
		return 1;
	}
	case EW_RELU:
		/* max(x, +0): x itself when positive, else +0 (either zero
		 * for a zero x) */
		want = x > 0 ? a : 0;
		if (x == 0 && got == a)
			return 0;
		break;
	default: {
		/* GELU in f32: 2u = x (C0 + C1 x^2) with C0, C1 rounded to
		 * f32 (relative 2^-24 each), four roundings to form it: its
		 * relative error is at most 6 * 2^-24; sigmoid's relative
		 * sensitivity is (1 - s) |2u| <= |2u|; the sigmoid and the
		 * final product round once each. For f16 output add half an
		 * f16 ulp. */
		double r = gelu(x),
		       t = 2 * SQRT_2_PI * (x + 0.044715 * x * x * x);
		double tol =
		    (4 + 8 * fabs(t)) * ldexp(fabs(r), -24) + ldexp(1, -148);
		if (c->out == DT_F16) {
			uint32_t n = encode(&F16, r, 0) & 0x7fff;
			double ulp = decode(&F16, n + 1) - decode(&F16, n);
			tol += ulp / 2 + ldexp(1, -25);
		}
		double g = value(c->out, got);
		if (fabs(g - r) <= tol)
			return 0;
		snprintf(why, len, "gelu(%.9g) = %.9g, want %.9g +- %.3g", x, g,
		         r, tol);
		return 1;
	}
	}
	if (got == want)
		return 0;
	snprintf(why, len, "in %#x %#x (%.9g, %.9g): got %#x, want %#x", a, b,
	         x, y, got, want);
	return 1;
}

/* ---- one call ---- */

typedef struct {
	uint32_t nseg, rows, cols;
	uint32_t row_pad, seg_pad; /* bytes added to the dense strides */
	int gemm_b;                /* b: one 16-column bias row per segment */
	int bcast;                 /* b: one row for all (row stride 0) */
	int in_place;              /* dst = a */
} Shape;

static EwRef
layout(uint32_t addr, const Shape *s, uint32_t es)
{
	uint32_t row = s->cols * es + s->row_pad;
	return (EwRef){addr, s->rows * row + s->seg_pad, row};
}

static int print_rates; /* test_rates prints its calls */

static const TileImage *
image(void)
{
	static TileImage img;
	static int done;
	if (!done) {
		static const char *const names[] = {
		    "elementwise", "elementwise_f8", "elementwise_bias_f8"};
		Diag d;
		assert_int_equal(
		    kernel_image(names, 3, chip_default(), &img, &d), 0);
		done = 1;
	}
	return &img;
}

/* The calls take turns at the nominal timing profile and its bounds; the
 * rates for the docs are at nominal. */
static int turn;

static const Chip *
next_chip(void)
{
	return print_rates ? chip_default()
	                   : profile_chip((TimingBound)(turn++ % 3));
}

static void
run_case(EwOp op, DType in, DType out, int scale, const Shape *s)
{
	const Chip *chip = next_chip();
	uint32_t ei = (uint32_t)dtype_size(in), eo = (uint32_t)dtype_size(out);
	EwCall c = {.op = op,
	            .in = in,
	            .out = out,
	            .fp8_scale = scale,
	            .nseg = s->nseg,
	            .rows = s->rows,
	            .cols = s->cols};
	c.a = layout(A_AT, s, ei);
	c.dst = s->in_place ? c.a : layout(D_AT, s, eo);
	int binary = op == EW_ADD || op == EW_MUL || op == EW_MAX ||
	             op == EW_BIAS_GELU_H;
	if (binary) {
		c.b = layout(B_AT, s, ei);
		if (s->bcast)
			c.b.seg_stride = c.b.row_stride = 0;
		if (s->gemm_b)
			c.b = (EwRef){B_AT, 16 * ei, 0};
	}
	Diag d;
	if (ew_check(&c, &d))
		fail_msg("ew_check: %s", d.msg);

	/* tile memory image from 0x80000: a, b, dst regions */
	uint32_t span = 0x68000;
	uint8_t *mem = xcalloc(span, 1);
	for (uint32_t i = 0; i < span; i++)
		mem[i] = (uint8_t)rnd32(); /* padding is garbage */
	for (uint32_t g = 0; g < s->nseg; g++)
		for (uint32_t r = 0; r < s->rows; r++)
			for (uint32_t k = 0; k < s->cols; k++) {
				uint32_t oa = c.a.addr + g * c.a.seg_stride +
				              r * c.a.row_stride + k * ei;
				put_elem(mem, oa - A_AT, ei,
				         rnd_elem(op, in, out, scale));
				if (binary)
					put_elem(mem,
					         c.b.addr + g * c.b.seg_stride +
					             r * c.b.row_stride +
					             k * ei - A_AT,
					         ei,
					         rnd_elem(op, in, out, scale));
			}
	Tile *t = tile_new(chip, 0);
	const TileImage *img = image();
	tile_load_image(t, img);
	tile_write(t, A_AT, mem, span);
	uint64_t cycles = 0;
	if (ew_tile_call(t, img, &c, ARGS, &cycles, &d))
		fail_msg("%s", d.msg);
	uint8_t *after = xcalloc(span, 1);
	tile_read(t, A_AT, after, span);

	/* every output element, and nothing else written */
	uint8_t *written = xcalloc(span, 1);
	for (uint32_t g = 0; g < s->nseg; g++)
		for (uint32_t r = 0; r < s->rows; r++)
			for (uint32_t k = 0; k < s->cols; k++) {
				uint32_t oa = c.a.addr + g * c.a.seg_stride +
				              r * c.a.row_stride + k * ei -
				              A_AT;
				uint32_t ob = c.b.addr + g * c.b.seg_stride +
				              r * c.b.row_stride + k * ei -
				              A_AT;
				uint32_t od =
				    c.dst.addr + g * c.dst.seg_stride +
				    r * c.dst.row_stride + k * eo - A_AT;
				char why[200];
				uint32_t got = get_elem(after, od, eo);
				if (check_elem(&c, get_elem(mem, oa, ei),
				               binary ? get_elem(mem, ob, ei)
				                      : 0,
				               got, why, sizeof why))
					fail_msg(
					    "%s %s->%s %ux%ux%u [%u,%u,%u]: %s",
					    ew_entry(op, in, out),
					    dtype_name(in), dtype_name(out),
					    s->nseg, s->rows, s->cols, g, r, k,
					    why);
				memset(written + od, 1, eo);
			}
	for (uint32_t i = 0; i < span; i++)
		if (!written[i] && after[i] != mem[i])
			fail_msg("%s: byte 0x%x outside dst changed",
			         ew_entry(op, in, out), A_AT + i);
	uint64_t want = ew_cycles(chip, &c);
	if (cycles != want)
		fail_msg("%s %ux%ux%u at %s: %llu cycles, ew_cycles says %llu",
		         ew_entry(op, in, out), s->nseg, s->rows, s->cols,
		         chip->timing->spec, (unsigned long long)cycles,
		         (unsigned long long)want);
	if (print_rates)
		printf("%-16s %ux%ux%u: %llu cycles, %.3f elements/cycle\n",
		       ew_entry(op, in, out), s->nseg, s->rows, s->cols,
		       (unsigned long long)cycles,
		       (double)s->nseg * s->rows * s->cols / (double)cycles);
	free(mem);
	free(after);
	free(written);
	tile_free(t);
}

/* Shapes in units of the entry's column multiple m. */
static void
run_shapes(EwOp op, DType in, DType out, int scale)
{
	uint32_t m = ew_col_multiple(in, out);
	int binary = op == EW_ADD || op == EW_MUL || op == EW_MAX;
	int same = (uint32_t)dtype_size(in) == (uint32_t)dtype_size(out);
	const Shape shapes[] = {
	    {1, 1, m, 0, 0, 0, 0, 0},       /* one group */
	    {1, 1, 3 * m, 0, 0, 0, 0, 0},   /* fewer groups than workers */
	    {1, 4, 10 * m, 8, 0, 0, 0, 0},  /* fewer rows than workers */
	    {1, 37, 6 * m, 24, 0, 0, 0, 0}, /* padded rows */
	    {3, 13, 16, 0, 0, 0, 0, 0},     /* GEMM C panels: one line */
	    {3, 5, 2 * m, 8, 16, 0, 0, 0},  /* segment wraps */
	    {1, 300, m, 8, 0, 0, 0, 0},     /* many short rows */
	    {1, 9, 16 * m, 0, 0, 0, 1, 0},  /* broadcast row */
	    {4, 7, 16, 0, 0, 1, 0, 0},      /* bias on GEMM panels */
	    {3, 13, 16, 0, 16, 1, 0, 1},    /* ... padded, in place */
	    {1, 3, 16, 0, 0, 0, 1, 0},      /* 16-column bias, 3 rows */
	    {2, 10, 8 * m, 16, 8, 0, 0, 1}, /* in place */
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		const Shape *s = &shapes[i];
		if ((s->bcast || s->gemm_b) && !binary)
			continue;
		if (s->in_place && !same)
			continue;
		if (s->cols % m)
			continue;
		run_case(op, in, out, scale, s);
	}
}

static void
test_binary(void **state)
{
	(void)state;
	run_shapes(EW_ADD, DT_F16, DT_F16, 0);
	run_shapes(EW_ADD, DT_F32, DT_F32, 0);
	run_shapes(EW_MUL, DT_F16, DT_F16, 0);
	run_shapes(EW_MUL, DT_F32, DT_F32, 0);
	run_shapes(EW_MAX, DT_F16, DT_F16, 0);
	run_shapes(EW_MAX, DT_F32, DT_F32, 0);
}

static void
test_cast(void **state)
{
	(void)state;
	run_shapes(EW_CAST, DT_F32, DT_F16, 0);
	run_shapes(EW_CAST, DT_F16, DT_F32, 0);
}

static void
test_cast_f8(void **state)
{
	(void)state;
	static const int scales[] = {0, -3, 5};
	for (int i = 0; i < 3; i++) {
		run_shapes(EW_CAST, DT_F16, DT_F8_F143, scales[i]);
		run_shapes(EW_CAST, DT_F16, DT_F8_F152, scales[i]);
		run_shapes(EW_CAST, DT_F8_F143, DT_F16, scales[i]);
		run_shapes(EW_CAST, DT_F8_F152, DT_F16, scales[i]);
	}
}

static void
test_gelu(void **state)
{
	(void)state;
	run_shapes(EW_GELU, DT_F16, DT_F16, 0);
	run_shapes(EW_GELU, DT_F32, DT_F32, 0);
	run_shapes(EW_GELU_H, DT_F16, DT_F16, 0);
	run_shapes(EW_GELU_H, DT_F16, DT_F8_F143, 0);
	run_shapes(EW_GELU_H, DT_F16, DT_F8_F143, -3);
	run_shapes(EW_GELU_H, DT_F16, DT_F8_F152, 2);
}

/* The bias, GELU and cast in one pass: GEMM C panels (16 columns, one
 * bias row a panel) of 1 to 46 rows, padded segments, a 16-column block
 * with one bias row, checked against the f16 sum's GELU rounded to f8
 * (check_elem). */
static void
test_bias_gelu(void **state)
{
	(void)state;
	const Shape shapes[] = {
	    {1, 1, 16, 0, 0, 1, 0, 0},   /* one row */
	    {3, 1, 16, 0, 0, 1, 0, 0},   /* one row a panel */
	    {2, 2, 16, 0, 8, 1, 0, 0},   /* padded segments */
	    {4, 7, 16, 0, 0, 1, 0, 0},   /* fewer rows than workers */
	    {5, 45, 16, 0, 16, 1, 0, 0}, /* an fc1 slice's panels */
	    {2, 46, 16, 0, 0, 1, 0, 0},  /* rows a worker, odd */
	    {1, 3, 16, 0, 0, 0, 1, 0},   /* a block, one bias row */
	};
	static const struct {
		DType out;
		int scale;
	} f8[] = {{DT_F8_F143, 0}, {DT_F8_F143, -3}, {DT_F8_F152, 2}};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		for (int k = 0; k < 3; k++)
			run_case(EW_BIAS_GELU_H, DT_F16, f8[k].out, f8[k].scale,
			         &shapes[i]);
}

static void
test_relu(void **state)
{
	(void)state;
	run_shapes(EW_RELU, DT_F16, DT_F16, 0);
	run_shapes(EW_RELU, DT_F32, DT_F32, 0);
}

/* dst[s][c][r] = a[s][r][c], bit for bit; padding untouched. */
static void
run_transpose(DType t, uint32_t nseg, uint32_t rows, uint32_t cols,
              uint32_t pad)
{
	uint32_t e = (uint32_t)dtype_size(t);
	uint32_t ra = cols * e + pad, rd = rows * e + 2 * pad;
	EwCall c = {.op = EW_TRANSPOSE,
	            .in = t,
	            .out = t,
	            .nseg = nseg,
	            .rows = rows,
	            .cols = cols,
	            .a = {A_AT, rows * ra + pad, ra},
	            .dst = {D_AT, cols * rd + 3 * pad, rd}};
	Diag d;
	if (ew_check(&c, &d))
		fail_msg("ew_check: %s", d.msg);
	uint32_t span = 0x68000;
	uint8_t *mem = xcalloc(span, 1), *after = xcalloc(span, 1);
	uint8_t *written = xcalloc(span, 1);
	for (uint32_t i = 0; i < span; i++)
		mem[i] = (uint8_t)rnd32();
	const Chip *chip = next_chip();
	Tile *tile = tile_new(chip, 0);
	const TileImage *img = image();
	tile_load_image(tile, img);
	tile_write(tile, A_AT, mem, span);
	uint64_t cycles = 0;
	if (ew_tile_call(tile, img, &c, ARGS, &cycles, &d))
		fail_msg("%s", d.msg);
	tile_read(tile, A_AT, after, span);
	for (uint32_t g = 0; g < nseg; g++)
		for (uint32_t r = 0; r < rows; r++)
			for (uint32_t k = 0; k < cols; k++) {
				uint32_t oa =
				    g * c.a.seg_stride + r * ra + k * e;
				uint32_t od = D_AT - A_AT +
				              g * c.dst.seg_stride + k * rd +
				              r * e;
				if (memcmp(after + od, mem + oa, e))
					fail_msg("transpose %s %ux%ux%u: "
					         "[%u][%u][%u] wrong",
					         dtype_name(t), nseg, rows,
					         cols, g, r, k);
				memset(written + od, 1, e);
			}
	for (uint32_t i = 0; i < span; i++)
		if (!written[i] && after[i] != mem[i])
			fail_msg("transpose: byte 0x%x outside dst changed",
			         A_AT + i);
	if (cycles != ew_cycles(chip, &c))
		fail_msg("transpose %s %ux%ux%u: %llu cycles, ew_cycles says "
		         "%llu",
		         dtype_name(t), nseg, rows, cols,
		         (unsigned long long)cycles,
		         (unsigned long long)ew_cycles(chip, &c));
	if (print_rates)
		printf("%-16s %ux%ux%u: %llu cycles, %.3f elements/cycle\n",
		       ew_entry(EW_TRANSPOSE, t, t), nseg, rows, cols,
		       (unsigned long long)cycles,
		       (double)nseg * rows * cols / (double)cycles);
	free(mem);
	free(after);
	free(written);
	tile_free(tile);
}

static void
test_transpose(void **state)
{
	(void)state;
	static const uint32_t shapes[][4] = {
	    /* nseg, rows, cols, pad */
	    {1, 4, 4, 0},  {1, 4, 12, 8},   {1, 8, 8, 0},   {2, 12, 20, 8},
	    {1, 64, 4, 0}, {3, 16, 72, 16}, {1, 72, 64, 0},
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		const uint32_t *s = shapes[i];
		run_transpose(DT_F16, s[0], s[1], s[2], s[3]);
		run_transpose(DT_F32, s[0], s[1], s[2], s[3]);
		run_transpose(DT_F32, s[0], s[1] / 2, s[2] / 2, s[3]);
	}
}

/* Rates for docs/kernel-elementwise.md: one contiguous 64 KiB-ish block
 * per entry and the bias add on GEMM panels, measured on the tile and
 * checked against ew_cycles like every call above. */
static void
test_rates(void **state)
{
	(void)state;
	static const struct {
		EwOp op;
		DType in, out;
	} entries[] = {
	    {EW_ADD, DT_F16, DT_F16},        {EW_ADD, DT_F32, DT_F32},
	    {EW_MUL, DT_F16, DT_F16},        {EW_CAST, DT_F32, DT_F16},
	    {EW_CAST, DT_F16, DT_F32},       {EW_CAST, DT_F16, DT_F8_F143},
	    {EW_CAST, DT_F8_F143, DT_F16},   {EW_GELU, DT_F16, DT_F16},
	    {EW_GELU, DT_F32, DT_F32},       {EW_GELU_H, DT_F16, DT_F16},
	    {EW_GELU_H, DT_F16, DT_F8_F143}, {EW_RELU, DT_F16, DT_F16},
	    {EW_RELU, DT_F32, DT_F32},       {EW_MAX, DT_F32, DT_F32},
	};
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		const Shape s = {1, 64, 256, 0, 0, 0, 0, 0};
		print_rates = 1;
		run_case(entries[i].op, entries[i].in, entries[i].out, 0, &s);
	}
	const Shape bias = {8, 128, 16, 0, 0, 1, 0, 0};
	run_case(EW_ADD, DT_F16, DT_F16, 0, &bias);
	run_case(EW_GELU_H, DT_F16, DT_F8_F143, 0, &bias);
	run_case(EW_BIAS_GELU_H, DT_F16, DT_F8_F143, 0, &bias);
	run_transpose(DT_F16, 1, 128, 128, 0);
	run_transpose(DT_F32, 1, 128, 64, 0);
	print_rates = 0;
}

/* Bad calls: ew_check names the problem; unsupported ones have no entry. */
static void
expect_reject(const EwCall *c, const char *words)
{
	Diag d;
	assert_int_equal(ew_check(c, &d), IPU_EINVAL);
	if (!strstr(d.msg, words))
		fail_msg("'%s' does not mention '%s'", d.msg, words);
}

static void
test_check(void **state)
{
	(void)state;
	const EwCall good = {.op = EW_ADD,
	                     .in = DT_F16,
	                     .out = DT_F16,
	                     .nseg = 2,
	                     .rows = 3,
	                     .cols = 8,
	                     .dst = {D_AT, 48, 16},
	                     .a = {A_AT, 48, 16},
	                     .b = {B_AT, 0, 0}};
	Diag d;
	assert_int_equal(ew_check(&good, &d), IPU_OK);
	EwCall c = good;
	c.cols = 6;
	expect_reject(&c, "multiple of 4");
	c = good;
	c.a.addr += 4;
	expect_reject(&c, "a address");
	c = good;
	c.b.row_stride = 12;
	expect_reject(&c, "b row stride");
	c = good;
	c.dst.seg_stride = 20;
	expect_reject(&c, "dst segment stride");
	c = good;
	c.rows = 0;
	expect_reject(&c, "empty");
	c = good;
	c.dst.row_stride = 8; /* 16-byte rows 8 apart */
	expect_reject(&c, "overlap");
	c = good;
	c.dst.addr = A_AT + 8; /* shifted in place */
	expect_reject(&c, "overlaps a");
	c = good;
	c.dst = c.a; /* exactly in place */
	assert_int_equal(ew_check(&c, &d), IPU_OK);
	c = good;
	c.op = EW_CAST;
	c.in = DT_F32;
	c.a = (EwRef){A_AT, 96, 32};
	c.dst = c.a; /* in place with different element sizes */
	expect_reject(&c, "overlaps a");
	c = good;
	c.op = EW_GELU;
	c.in = c.out = DT_F8_F143;
	expect_reject(&c, "not supported");
	assert_null(ew_entry(EW_MUL, DT_F16, DT_F32));
	assert_null(ew_entry(EW_CAST, DT_F32, DT_F8_F143));
	c = good;
	c.op = EW_CAST;
	c.out = DT_F8_F152;
	c.fp8_scale = 32;
	expect_reject(&c, "scale");
	c = good;
	c.op = EW_TRANSPOSE;
	c.rows = 6;
	c.dst = (EwRef){D_AT, 128, 16};
	expect_reject(&c, "rows 6 is not a multiple of 4");
	c.rows = 8;
	c.a = (EwRef){A_AT, 128, 16};
	assert_int_equal(ew_check(&c, &d), IPU_OK);
	c.dst.row_stride = 8; /* dst rows are 8 halves = 16 bytes */
	expect_reject(&c, "dst rows overlap");
	c.dst = c.a; /* a transpose cannot be in place */
	expect_reject(&c, "overlaps a");
	c = good; /* the fused bias GELU takes bias lines only */
	c.op = EW_BIAS_GELU_H;
	c.out = DT_F8_F143;
	c.cols = 16;
	c.a = (EwRef){A_AT, 96, 32};
	c.dst = (EwRef){D_AT, 48, 16};
	c.b = (EwRef){B_AT, 32, 0};
	assert_int_equal(ew_check(&c, &d), IPU_OK);
	c.b.row_stride = 32; /* b a full operand */
	expect_reject(&c, "b one row a segment");
	c.b.row_stride = 0;
	c.cols = 32;
	c.a.row_stride = 64;
	c.a.seg_stride = 192;
	c.dst.row_stride = 32;
	c.dst.seg_stride = 96;
	expect_reject(&c, "16 columns");
	assert_string_equal(ew_object(EW_CAST, DT_F8_F152, DT_F16),
	                    "elementwise_f8");
	assert_string_equal(ew_object(EW_GELU, DT_F16, DT_F16), "elementwise");
	assert_string_equal(ew_object(EW_BIAS_GELU_H, DT_F16, DT_F8_F152),
	                    "elementwise_bias_f8");
	assert_int_equal(ew_col_multiple(DT_F16, DT_F8_F143), 8);
	assert_int_equal(ew_col_multiple(DT_F32, DT_F32), 2);
}

/* The GC200 links elementwise.S alone (no f8 instruction in it) and runs
 * it; the f8 object does not link there. */
static void
test_gc200(void **state)
{
	(void)state;
	const Chip *chip = chip_by_name("gc200");
	assert_non_null(chip);
	static const char *const plain[] = {"elementwise"};
	static const char *const f8[] = {"elementwise_f8"};
	TileImage img;
	Diag d;
	assert_int_equal(kernel_image(f8, 1, chip, &img, &d) < 0, 1);
	assert_int_equal(kernel_image(plain, 1, chip, &img, &d), 0);
	Tile *t = tile_new(chip, 0);
	tile_load_image(t, &img);
	float a[16], b[16], got[16];
	for (int i = 0; i < 16; i++) {
		a[i] = (float)i / 8;
		b[i] = 3 - (float)i;
	}
	tile_write(t, A_AT, a, sizeof a);
	tile_write(t, B_AT, b, sizeof b);
	EwCall c = {.op = EW_MUL,
	            .in = DT_F32,
	            .out = DT_F32,
	            .nseg = 1,
	            .rows = 1,
	            .cols = 16,
	            .dst = {D_AT, 0, 0},
	            .a = {A_AT, 0, 0},
	            .b = {B_AT, 0, 0}};
	uint64_t cycles;
	if (ew_tile_call(t, &img, &c, ARGS, &cycles, &d))
		fail_msg("%s", d.msg);
	tile_read(t, D_AT, got, sizeof got);
	for (int i = 0; i < 16; i++)
		assert_true(got[i] == (float)i / 8 * (3 - (float)i));
	assert_int_equal(cycles, ew_cycles(chip, &c));
	tile_free(t);
	img_free(&img);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_binary),    cmocka_unit_test(test_cast),
	    cmocka_unit_test(test_cast_f8),   cmocka_unit_test(test_gelu),
	    cmocka_unit_test(test_relu),      cmocka_unit_test(test_check),
	    cmocka_unit_test(test_rates),     cmocka_unit_test(test_gc200),
	    cmocka_unit_test(test_transpose), cmocka_unit_test(test_bias_gelu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_amp.c - the AMP engines and the CWEI weight loads of the emulator
 * (src/sim/amp.c, docs/emulator-amp.md). Real instruction sequences run as
 * worker 0 (AMP) or as the supervisor (ld64putcs/ld128putcs); expected values
 * come from host references written here in double arithmetic, with this
 * file's own f16 conversions and a hand-written FP8 table (not src/util/fp.c).
 * Test inputs keep every exact sum within 53 bits, so the references do not
 * depend on summation order. */
#include "support.h"

#include <math.h>
#include <string.h>

enum { SENTINEL = 0x5a5a5a5a };

/* Host-side number formats, independent of src/util/fp.c. */

static double
h2d(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;
	if (e == 0x1f)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, -24);
	else
		v = ldexp(1024 + m, e - 25);
	return h & 0x8000 ? -v : v;
}

/* Round to nearest even f16. */
static uint16_t
d2h(double v)
{
	uint16_t sign = signbit(v) ? 0x8000 : 0;
	if (isnan(v))
		return 0x7e00;
	v = fabs(v);
	int e;
	frexp(v, &e);
	int q = (e - 1 < -14 ? -14 : e - 1) - 10; /* quantum exponent */
	double n = nearbyint(ldexp(v, -q));
	double r = ldexp(n, q);
	if (r >= 65536.0)
		return sign | 0x7c00;
	if (r < ldexp(1, -14))
		return sign | (uint16_t)n;
	frexp(r, &e);
	return sign | (uint16_t)((e + 14) << 10) |
	       (uint16_t)(ldexp(r, 11 - e) - 1024);
}

static uint32_t
f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float
u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* FP8 codes with their values, worked out by hand from model.md 7.1:
 * F143 = 1-4-3 bias 8, F152 = 1-5-2 bias 16, no zero sign, 0x80 NaN. */
static const struct {
	uint8_t code;
	double f143, f152;
} fp8_table[] = {
    {0x00, 0.0, 0.0},
    {0x08, 0.0078125, 6.103515625e-05}, /* 2^-7, 2^-14 */
    {0x38, 0.5, 0.25},
    {0x40, 1.0, 1.0},
    {0x44, 1.5, 2.0},
    {0x4b, 2.75, 7.0},
    {0x56, 7.0, 48.0},
    {0xc0, -1.0, -1.0},
    {0xb4, -0.375, -0.125},
    {0xd3, -5.5, -28.0},
    {0x2d, 0.203125, 0.0390625},
    {0x07, 0.0068359375, 5.340576171875e-05}, /* 7 * 2^-10; 1.75 * 2^-15 */
};
enum { FP8_CODES = sizeof fp8_table / sizeof fp8_table[0] };

static double
fp8_value(uint8_t code, int f152)
{
	for (int i = 0; i < FP8_CODES; i++)
		if (fp8_table[i].code == code)
			return f152 ? fp8_table[i].f152 : fp8_table[i].f143;
	fail_msg("fp8 code 0x%02x is not in the test table", code);
	return 0;
}

/* Deterministic pseudo-random numbers. */
static uint32_t rng_state = 12345;

static uint32_t
rnd(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return rng_state >> 8;
}

/* A random f16 in +-[2^-3, 2^3). */
static uint16_t
rnd_f16(void)
{
	uint32_t r = rnd();
	return (uint16_t)((r & 0x8000) | (12 + (r >> 16) % 6) << 10 |
	                  (r & 0x3ff));
}

/* Random 4 x f16 in one 64-bit word, plus the values. */
static uint64_t
rnd_f16x4(double v[4])
{
	uint64_t w = 0;
	for (int i = 0; i < 4; i++) {
		uint16_t h = rnd_f16();
		w |= (uint64_t)h << (16 * i);
		if (v)
			v[i] = h2d(h);
	}
	return w;
}

/* Tiles and runs. */

static int
cwei_index(int m, int n)
{
	return (m / 8) * 32 + 4 * (m % 8) + n;
}

static void
check_done(Tile *t, RunStatus st)
{
	if (st != RUN_DONE) {
		char buf[512];
		tile_format_fault(t, buf, sizeof buf);
		fail_msg("run status %d: %s", st, buf);
	}
}

/* Run `n` words as worker 0 with $a0..$a13 preset from a[] (NULL: all zero
 * but a SENTINEL in each); returns the run status, registers back in a[]. */
static RunStatus
run_worker(Tile *t, const uint32_t *words, int n, uint32_t *a)
{
	uint32_t base = t->chip->mem_base;
	assert_int_equal(tile_write(t, base, words, (uint32_t)n * 4), 0);
	assert_int_equal(tile_start_worker(t, 0, base, 0), 0);
	Context *c = &t->ctx[1];
	for (int i = 0; i < 14; i++)
		c->a[i] = a ? a[i] : SENTINEL;
	RunStatus st = tile_run(t, t->cycle + 10000);
	if (a)
		memcpy(a, c->a, 14 * sizeof *a);
	return st;
}

/* Run `n` words as the supervisor with $m1 = m1. */
static RunStatus
run_supervisor(Tile *t, const uint32_t *words, int n, uint32_t m1)
{
	uint32_t base = t->chip->mem_base;
	assert_int_equal(tile_write(t, base, words, (uint32_t)n * 4), 0);
	tile_start(t, base);
	t->ctx[0].m[1] = m1;
	return tile_run(t, t->cycle + 100000);
}

/* One AMP instruction `variant` with flags: dst $a4(:5), input $a0(:1),
 * partials $a2(:3); $a4, $a5 start as SENTINEL. Returns $a5:$a4. */
static uint64_t
amp1(Tile *t, const char *variant, int flags, uint64_t x, uint64_t part)
{
	uint32_t code[2] = {enc(variant, 4, 4, 0, 2, flags),
	                    enc("exitz_mmmn", 1, 15)};
	uint32_t a[14] = {(uint32_t)x,    (uint32_t)(x >> 32),
	                  (uint32_t)part, (uint32_t)(part >> 32),
	                  SENTINEL,       SENTINEL};
	check_done(t, run_worker(t, code, 2, a));
	return (uint64_t)a[5] << 32 | a[4];
}

/* One 4-phase group of a v4 form (f16v4hihov4amp, f8v8hihov4amp) in one
 * worker run: the input of phase p in $a(2p):(2p+1), which also receives
 * its results; partials of phases 0, 1, 2, 3 in $a8:9, $a10:11, $a12:13,
 * $a8:9. out[4p + i] = result i of phase p. */
static void
run_v4_group(Tile *t, const char *variant, const uint64_t x[4],
             const uint64_t part[3], uint16_t out[16])
{
	static const int preg[4] = {8, 10, 12, 8};
	uint32_t code[5], a[14] = {0};
	for (int p = 0; p < 4; p++) {
		code[p] = enc(variant, 4, 2 * p, 2 * p, preg[p], p);
		a[2 * p] = (uint32_t)x[p];
		a[2 * p + 1] = (uint32_t)(x[p] >> 32);
	}
	code[4] = enc("exitz_mmmn", 1, 15);
	for (int i = 0; i < 3; i++) {
		a[8 + 2 * i] = (uint32_t)part[i];
		a[9 + 2 * i] = (uint32_t)(part[i] >> 32);
	}
	check_done(t, run_worker(t, code, 5, a));
	for (int i = 0; i < 16; i++)
		out[i] = (uint16_t)(a[i / 2] >> (16 * (i % 2)));
}

/* Partial of engine m from the three partial words of run_v4_group. */
static uint16_t
v4_partial(const uint64_t part[3], int m)
{
	int p = m / 4;
	return (uint16_t)(part[p == 3 ? 0 : p] >> (16 * (m % 4)));
}

/* Weight loads. */

static void
test_ld64putcs(void **state)
{
	(void)state;
	Tile *t = tile_new(chip_default(), 0);
	uint64_t data[3] = {0x1111222233334444ull, 0x5555666677778888ull,
	                    0x99990000aaaabbbbull};
	uint32_t src = 0x60000; /* region 0: fine for 64-bit loads */
	tile_write(t, src, data, sizeof data);
	uint32_t code[] = {
	    enc("put_mmmn_zi", 2, 0x50, 1), enc("ld64putcs_mmmn_zi", 1, 0),
	    enc("ld64putcs_mmmn_zi", 1, 37), enc("ld64putcs_mmmn_zi", 1, 63),
	    enc("br_mmmn", 1, 10)};
	check_done(t, run_supervisor(t, code, 5, src));
	assert_true(t->cwei[0] == data[0]);
	assert_true(t->cwei[37] == data[1]);
	assert_true(t->cwei[63] == data[2]);
	assert_true(t->cwei[1] == 0);
	assert_int_equal(t->sup.cccsload, src + 24);
	tile_free(t);
}

static void
test_ld128putcs(void **state)
{
	(void)state;
	Tile *t = tile_new(chip_default(), 0);
	uint64_t data[4] = {1, 2, 0xfedcba9876543210ull, 4};
	uint32_t src = t->chip->interleave + 0x100;
	tile_write(t, src, data, sizeof data);
	uint32_t code[] = {
	    enc("put_mmmn_zi", 2, 0x50, 1), enc("ld128putcs_mmmn_zi", 1, 62),
	    enc("ld128putcs_mmmn_zi", 1, 32), enc("br_mmmn", 1, 10)};
	check_done(t, run_supervisor(t, code, 4, src));
	assert_true(t->cwei[62] == 1 && t->cwei[63] == 2);
	assert_true(t->cwei[32] == data[2] && t->cwei[33] == 4);
	assert_int_equal(t->sup.cccsload, src + 32);
	tile_free(t);
}

/* Run a supervisor putcs program expected to fault with `type`. */
static void
expect_sup_fault(const char *variant, int k, uint32_t src, FaultType type)
{
	Tile *t = tile_new(chip_default(), 0);
	uint32_t code[] = {enc("put_mmmn_zi", 2, 0x50, 1), enc(variant, 1, k),
	                   enc("br_mmmn", 1, 10)};
	assert_int_equal(run_supervisor(t, code, 3, src), RUN_FAULT);
	assert_int_equal(t->fault.type, type);
	assert_int_equal(t->fault.pc, t->chip->mem_base + 4);
	assert_int_equal(t->sup.cccsload, src); /* unchanged */
	tile_free(t);
}

static void
test_putcs_faults(void **state)
{
	(void)state;
	uint32_t il = chip_default()->interleave;
	/* 128-bit source in region 0 */
	expect_sup_fault("ld128putcs_mmmn_zi", 0, 0x60000, FAULT_INVALID_ADDR);
	/* misaligned */
	expect_sup_fault("ld128putcs_mmmn_zi", 0, il + 8, FAULT_INVALID_ADDR);
	expect_sup_fault("ld64putcs_mmmn_zi", 0, 0x60004, FAULT_INVALID_ADDR);
	/* CWEI index out of range; odd ld128putcs index (our decision) */
	expect_sup_fault("ld64putcs_mmmn_zi", 64, 0x60000, FAULT_INVALID_OP);
	expect_sup_fault("ld128putcs_mmmn_zi", 63, il, FAULT_INVALID_OP);
	expect_sup_fault("ld128putcs_mmmn_zi", 1, il, FAULT_INVALID_OP);
}

static void
test_putcs_worker_faults(void **state)
{
	(void)state;
	Tile *t = tile_new(chip_default(), 0);
	uint32_t code[] = {enc("ld64putcs_mmmn_zi", 1, 0),
	                   enc("exitz_mmmn", 1, 15)};
	assert_int_equal(run_worker(t, code, 2, NULL), RUN_FAULT);
	assert_int_equal(t->fault.type, FAULT_INVALID_INSTR);
	assert_int_equal(t->fault.ctx, 1);
	tile_free(t);
}

/* f16v4hihov4amp: a 16 x 16 f16 weight block, G groups with partials. */

enum { G = 4 };

typedef struct {
	uint16_t w[16][16]; /* w[m][k]: engine m, input k */
	uint64_t x[G + 2][4];
	uint64_t part[G + 2][3];    /* partials loaded during group q */
	uint16_t expect[G + 2][16]; /* results of group q */
} GemmCase;

static void
make_gemm(GemmCase *gc)
{
	memset(gc, 0, sizeof *gc);
	for (int m = 0; m < 16; m++)
		for (int k = 0; k < 16; k++)
			gc->w[m][k] = rnd_f16();
	/* group 0 = warm-up, G + 1 = drain: zero inputs */
	for (int q = 1; q <= G; q++)
		for (int p = 0; p < 4; p++)
			gc->x[q][p] = rnd_f16x4(NULL);
	/* partials loaded during q belong to group q + 1 */
	for (int q = 0; q < G; q++)
		for (int i = 0; i < 3; i++)
			gc->part[q][i] = rnd_f16x4(NULL);
	/* reference: acc = partial, then 4 instructions, each rounding the
	 * previous acc plus 4 exact products to f32 once */
	for (int q = 1; q <= G; q++)
		for (int m = 0; m < 16; m++) {
			float acc = (float)h2d(v4_partial(gc->part[q - 1], m));
			for (int n = 0; n < 4; n++) {
				double s = acc;
				for (int i = 0; i < 4; i++)
					s += h2d((uint16_t)(gc->x[q][n] >>
					                    (16 * i))) *
					     h2d(gc->w[m][4 * n + i]);
				acc = (float)s;
			}
			gc->expect[q][m] = d2h(acc);
		}
}

static void
set_cwei_f16(Tile *t, const GemmCase *gc)
{
	for (int m = 0; m < 16; m++)
		for (int n = 0; n < 4; n++) {
			uint64_t v = 0;
			for (int i = 0; i < 4; i++)
				v |= (uint64_t)gc->w[m][4 * n + i] << (16 * i);
			t->cwei[cwei_index(m, n)] = v;
		}
}

/* Run warm-up, G groups and drain; check every result bit for bit. */
static void
run_gemm(Tile *t, const GemmCase *gc)
{
	for (int q = 0; q <= G + 1; q++) {
		uint16_t out[16];
		run_v4_group(t, "f16v4hihov4amp_aaan_ef", gc->x[q], gc->part[q],
		             out);
		for (int m = 0; m < 16; m++) {
			/* results of group q - 1 leave during group q */
			uint16_t want = q == 0 ? 0 : gc->expect[q - 1][m];
			if (out[m] != want)
				fail_msg("group %d engine %d: got 0x%04x (%g), "
				         "want 0x%04x (%g)",
				         q - 1, m, out[m], h2d(out[m]), want,
				         h2d(want));
		}
	}
}

static void
test_hihov4_gemm(void **state)
{
	(void)state;
	static GemmCase gc;
	make_gemm(&gc);
	Tile *t = tile_new(chip_default(), 0);
	set_cwei_f16(t, &gc);
	run_gemm(t, &gc);
	/* the same on the GC200 (ipu2) */
	Tile *t2 = tile_new(chip_by_name("gc200"), 0);
	set_cwei_f16(t2, &gc);
	run_gemm(t2, &gc);
	tile_free(t);
	tile_free(t2);
}

/* Weights through the supervisor: poplibs-like order 0..7, 32..39, ...
 * with ld128putcs, and all 64 with ld64putcs. */
static void
test_hihov4_weights_loaded(void **state)
{
	(void)state;
	static GemmCase gc;
	make_gemm(&gc);
	Tile *ref = tile_new(chip_default(), 0);
	set_cwei_f16(ref, &gc);
	for (int wide = 0; wide < 2; wide++) {
		Tile *t = tile_new(chip_default(), 0);
		uint32_t src = t->chip->interleave + 0x1000;
		uint32_t code[70];
		int n = 0;
		code[n++] = enc("put_mmmn_zi", 2, 0x50, 1);
		uint64_t mem[64];
		int words = 0;
		for (int blk = 0; blk < 8; blk++)
			for (int j = 0; j < 8; j += wide ? 2 : 1) {
				int k = (blk % 2) * 32 + (blk / 2) * 8 + j;
				mem[words++] = ref->cwei[k];
				if (wide)
					mem[words++] = ref->cwei[k + 1];
				code[n++] = enc(wide ? "ld128putcs_mmmn_zi"
				                     : "ld64putcs_mmmn_zi",
				                1, k);
			}
		code[n++] = enc("br_mmmn", 1, 10);
		tile_write(t, src, mem, sizeof mem);
		check_done(t, run_supervisor(t, code, n, src));
		assert_memory_equal(t->cwei, ref->cwei, sizeof t->cwei);
		assert_int_equal(t->sup.cccsload, src + 512);
		run_gemm(t, &gc);
		tile_free(t);
	}
	tile_free(ref);
}

/* Single-set f16 forms: engines 0..7 only, 2 partials in / 2 results out. */
static void
test_single_set_f16(void **state)
{
	(void)state;
	static const char *const variants[3] = {"f16v4hihoamp_aaan_ef",
	                                        "f16v4sihoamp_aaan_ef",
	                                        "f16v4sisoamp_aaan_ef"};
	for (int v = 0; v < 3; v++) {
		int f32_part = v >= 1, f32_res = v == 2;
		Tile *t = tile_new(chip_default(), 0);
		uint16_t w[16][16];
		for (int m = 0; m < 16; m++)
			for (int k = 0; k < 16; k++)
				w[m][k] = rnd_f16();
		for (int m = 0; m < 16; m++)
			for (int n = 0; n < 4; n++) {
				uint64_t c = 0;
				for (int i = 0; i < 4; i++)
					c |= (uint64_t)w[m][4 * n + i]
					     << (16 * i);
				t->cwei[cwei_index(m, n)] = c;
			}
		/* set 1 state, which single-set forms must not touch */
		for (int m = 8; m < 16; m++)
			t->ctx[1].amp.acc[m] = (float)m;
		double x[2][4][4], part[8];
		uint64_t xw[2][4], pw[4];
		for (int p = 0; p < 4; p++) {
			xw[1][p] = rnd_f16x4(x[1][p]);
			xw[0][p] = 0;
			memset(x[0][p], 0, sizeof x[0][p]);
			if (f32_part) {
				float a = (float)(rnd() % 1000) / 8.0f - 60;
				float b = (float)(rnd() % 1000) / 16.0f;
				part[2 * p] = a;
				part[2 * p + 1] = b;
				pw[p] = (uint64_t)f2u(b) << 32 | f2u(a);
			} else {
				uint16_t a = rnd_f16(), b = rnd_f16();
				part[2 * p] = h2d(a);
				part[2 * p + 1] = h2d(b);
				pw[p] = (uint32_t)b << 16 | a;
			}
		}
		/* warm-up (partials in), one group, drain (results out) */
		uint64_t out[4] = {0};
		for (int q = 0; q < 3; q++)
			for (int p = 0; p < 4; p++) {
				uint64_t r = amp1(t, variants[v], p,
				                  q == 1 ? xw[1][p] : 0,
				                  q == 0 ? pw[p] : 0);
				if (q == 2)
					out[p] = r;
			}
		for (int m = 0; m < 8; m++) {
			float acc = (float)part[m];
			for (int n = 0; n < 4; n++) {
				double s = acc;
				for (int i = 0; i < 4; i++)
					s += x[1][n][i] * h2d(w[m][4 * n + i]);
				acc = (float)s;
			}
			uint64_t r = out[m / 2];
			if (f32_res) {
				uint32_t got = (uint32_t)(r >> (32 * (m % 2)));
				assert_int_equal(got, f2u(acc));
			} else {
				uint16_t got = (uint16_t)(r >> (16 * (m % 2)));
				assert_int_equal(got, d2h(acc));
				/* hiho/siho write one register: $a5 kept */
				assert_int_equal((uint32_t)(r >> 32), SENTINEL);
			}
		}
		for (int m = 8; m < 16; m++)
			assert_true(t->ctx[1].amp.acc[m] == (float)m);
		tile_free(t);
	}
}

/* f32sisov2amp (16 engines) and f32sisoamp (8 engines, io on even phases
 * only) against a double reference. */
static void
run_f32(const char *variant, int engines)
{
	Tile *t = tile_new(chip_default(), 0);
	float w[16][8], x[8], part[16];
	for (int m = 0; m < 16; m++)
		for (int k = 0; k < 8; k++) {
			w[m][k] = (float)((int)(rnd() % 2001) - 1000) / 64.0f;
			uint64_t *c = &t->cwei[cwei_index(m, k / 2)];
			*c |= (uint64_t)f2u(w[m][k]) << (32 * (k % 2));
		}
	for (int k = 0; k < 8; k++)
		x[k] = (float)((int)(rnd() % 20001) - 10000) / 1024.0f;
	for (int m = 0; m < 16; m++)
		part[m] = (float)((int)(rnd() % 2001) - 1000) / 4.0f;
	int single = engines == 8;
	uint64_t out[8];
	for (int q = 0; q < 3; q++)
		for (int p = 0; p < 8; p++) {
			int e0 = single ? p : 2 * p; /* io engines */
			uint64_t pw = 0;
			if (q == 0 && (!single || p % 2 == 0))
				pw = (uint64_t)f2u(part[e0 + 1]) << 32 |
				     f2u(part[e0]);
			uint64_t r =
			    amp1(t, variant, p, q == 1 ? f2u(x[p]) : 0, pw);
			if (q == 2)
				out[p] = r;
		}
	for (int m = 0; m < engines; m++) {
		float acc = part[m];
		for (int k = 0; k < 8; k++)
			acc = (float)((double)acc + (double)x[k] * w[m][k]);
		int p = single ? m & ~1 : m / 2;
		uint32_t got = (uint32_t)(out[p] >> (32 * (m % 2)));
		if (got != f2u(acc))
			fail_msg("%s engine %d: got %a want %a", variant, m,
			         (double)u2f(got), (double)acc);
	}
	if (single) /* odd phases leave dst alone */
		for (int p = 1; p < 8; p += 2)
			assert_true(out[p] ==
			            ((uint64_t)SENTINEL << 32 | SENTINEL));
	tile_free(t);
}

static void
test_f32sisov2amp(void **state)
{
	(void)state;
	run_f32("f32sisov2amp_aaan_ef", 16);
}

static void
test_f32sisoamp(void **state)
{
	(void)state;
	run_f32("f32sisoamp_aaan_ef", 8);
}

/* f8v8hihov4amp: formats from $FP_NFMT (bit 0 weights, bit 1 inputs),
 * products scaled by 2^$FP_SCL. One warm-up, one group, one drain. */
static void
run_f8(int nfmt, int scale)
{
	Tile *t = tile_new(chip_default(), 0);
	t->sup.fp_infmt = (uint32_t)nfmt;
	t->sup.fp_iscl = (uint32_t)scale & 0x3f;
	int wf = nfmt & 1, xf = (nfmt >> 1) & 1;
	uint8_t w[16][32], x[32];
	for (int m = 0; m < 16; m++)
		for (int k = 0; k < 32; k++) {
			w[m][k] = fp8_table[rnd() % FP8_CODES].code;
			t->cwei[cwei_index(m, k / 8)] |= (uint64_t)w[m][k]
			                                 << (8 * (k % 8));
		}
	uint64_t xw[4] = {0}, zero[4] = {0}, part[3], nopart[3] = {0};
	for (int k = 0; k < 32; k++) {
		x[k] = fp8_table[rnd() % FP8_CODES].code;
		xw[k / 8] |= (uint64_t)x[k] << (8 * (k % 8));
	}
	for (int i = 0; i < 3; i++)
		part[i] = rnd_f16x4(NULL);
	uint16_t out[16];
	run_v4_group(t, "f8v8hihov4amp_aaan_ef", zero, part, out);
	run_v4_group(t, "f8v8hihov4amp_aaan_ef", xw, nopart, out);
	run_v4_group(t, "f8v8hihov4amp_aaan_ef", zero, nopart, out);
	for (int m = 0; m < 16; m++) {
		float acc = (float)h2d(v4_partial(part, m));
		for (int n = 0; n < 4; n++) {
			double s = acc;
			for (int i = 0; i < 8; i++)
				s += ldexp(fp8_value(x[8 * n + i], xf) *
				               fp8_value(w[m][8 * n + i], wf),
				           scale);
			acc = (float)s;
		}
		if (out[m] != d2h(acc))
			fail_msg("nfmt %d scale %d engine %d: got %g want %g",
			         nfmt, scale, m, h2d(out[m]), (double)acc);
	}
	tile_free(t);
}

static void
test_f8_f143(void **state)
{
	(void)state;
	run_f8(0, 0);
	run_f8(0, -3);
	run_f8(0, 5);
}

static void
test_f8_f152(void **state)
{
	(void)state;
	run_f8(3, -4);
	run_f8(3, 1);
}

static void
test_f8_mixed(void **state)
{
	(void)state;
	run_f8(1, -2); /* F152 weights, F143 inputs */
	run_f8(2, 3);  /* F143 weights, F152 inputs */
}

/* Single products at the ends of the formats. */
static void
test_f8_extremes(void **state)
{
	(void)state;
	static const struct {
		int nfmt, scale;
		uint8_t x, w;
		double want;
	} cases[] = {
	    {0, 0, 0x7f, 0x7f, 57600.0},                /* 240 * 240 */
	    {0, 0, 0x01, 0x58, 0.0078125},              /* 2^-10 * 8 */
	    {0, -31, 0x7f, 0x40, 240.0 / 2147483648.0}, /* f16 subnormal */
	    {0, 31, 0x01, 0x01, 2048.0},                /* 2^-20 * 2^31 */
	    {3, 0, 0x7f, 0x01, 0.4375},                 /* 57344 * 2^-17 */
	    {3, -20, 0x7f, 0x7f, 3136.0},               /* 57344^2 * 2^-20 */
	    {1, 0, 0x40, 0x7f, 57344.0}, /* F143 1.0 * F152 max */
	    {2, 0, 0x40, 0x7f, 240.0},   /* F152 1.0 * F143 max */
	    {0, 0, 0x80, 0x40, NAN},     /* NaN input */
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		Tile *t = tile_new(chip_default(), 0);
		t->sup.fp_infmt = (uint32_t)cases[c].nfmt;
		t->sup.fp_iscl = (uint32_t)cases[c].scale & 0x3f;
		t->cwei[cwei_index(5, 2)] = (uint64_t)cases[c].w << 24;
		uint64_t x[4] = {0, 0, (uint64_t)cases[c].x << 24, 0},
		         zero[4] = {0}, part[3] = {0};
		uint16_t out[16];
		run_v4_group(t, "f8v8hihov4amp_aaan_ef", x, part, out);
		run_v4_group(t, "f8v8hihov4amp_aaan_ef", zero, part, out);
		for (int m = 0; m < 16; m++) {
			if (isnan(cases[c].want)) {
				/* NaN x 0 = NaN: every engine sees it */
				assert_true((out[m] & 0x7c00) == 0x7c00 &&
				            (out[m] & 0x3ff));
				continue;
			}
			if (m != 5) {
				assert_int_equal(out[m], 0);
				continue;
			}
			if (out[m] != d2h(cases[c].want))
				fail_msg("case %zu: got %g want %g", c,
				         h2d(out[m]), cases[c].want);
		}
		tile_free(t);
	}
}

static void
test_f8_not_on_ipu2(void **state)
{
	(void)state;
	Tile *t = tile_new(chip_by_name("gc200"), 0);
	uint32_t code[] = {enc("f8v8hihov4amp_aaan_ef", 4, 0, 0, 2, 0),
	                   enc("exitz_mmmn", 1, 15)};
	assert_int_equal(run_worker(t, code, 2, NULL), RUN_FAULT);
	assert_int_equal(t->fault.type, FAULT_INVALID_INSTR);
	tile_free(t);
}

static void
test_slic_faults(void **state)
{
	(void)state;
	static const char *const slic[] = {
	    "f16v4hihoslic_aaan_ef",  "f16v4sihoslic_aaan_ef",
	    "f16v4sisoslic_aaan_ef",  "f16v4hihov4slic_aaan_ef",
	    "f32sisoslic_aaan_ef",    "f32sisov2slic_aaan_ef",
	    "f8v8hihov4slic_aaan_ef",
	};
	for (size_t i = 0; i < sizeof slic / sizeof slic[0]; i++) {
		Tile *t = tile_new(chip_default(), 0);
		uint32_t code[] = {enc(slic[i], 4, 4, 0, 2, 0),
		                   enc("exitz_mmmn", 1, 15)};
		assert_int_equal(run_worker(t, code, 2, NULL), RUN_FAULT);
		assert_int_equal(t->fault.type, FAULT_INVALID_INSTR);
		assert_non_null(strstr(t->fault.cause, "SLIC"));
		tile_free(t);
	}
}

/* The supervisor cannot run AMP; sim_amp_clear zeroes one worker's state;
 * worker states are independent. */
static void
test_amp_state(void **state)
{
	(void)state;
	Tile *t = tile_new(chip_default(), 0);
	uint32_t code[] = {enc("f16v4hihov4amp_aaan_ef", 4, 4, 0, 2, 0),
	                   enc("br_mmmn", 1, 10)};
	assert_int_equal(run_supervisor(t, code, 2, 0), RUN_FAULT);
	assert_int_equal(t->fault.type, FAULT_INVALID_INSTR);
	tile_free(t);

	t = tile_new(chip_default(), 0);
	t->cwei[cwei_index(0, 3)] = 0x3c00; /* 1.0 */
	/* phase 3 with input 2.0 ends the group: done[0] = 2 */
	amp1(t, "f16v4hihov4amp_aaan_ef", 3, 0x4000, 0);
	assert_true(t->ctx[1].amp.done[0] == 2.0f);
	assert_true(t->ctx[2].amp.done[0] == 0.0f);
	sim_amp_clear(&t->ctx[1]);
	AmpState zero;
	memset(&zero, 0, sizeof zero);
	assert_memory_equal(&t->ctx[1].amp, &zero, sizeof zero);
	tile_free(t);
}

/* The three paths of sim.h (plain, portable, fast with AVX2) on random AMP
 * instructions of every form: the plain path's conversions and
 * engine_sum are the model's reference, the others decode weights into a
 * cache (FP8 ones with $FP_SCL folded in) and sum on host vectors, and
 * redo NaN sums plainly. Inputs, weights, partials and state are random
 * bit patterns, a third of the programs with no special values (so that
 * the vector sums stand), the others with NaNs (signalling too),
 * infinities and denormals, 1 in 64 or 1 in 8; FP8 codes of every kind,
 * both FP8 formats, every scale. Each tile runs twice with the CWEI kept
 * and the formats and scale changed, so that a stale decoded weight would
 * show. Registers, AMP state and cycles must match the plain path's. */
static uint32_t odds; /* 1 in odds values special; 0: none */

static uint16_t
rnd_half(void)
{
	static const uint16_t special[] = {0x0000, 0x8000, 0x7c00, 0xfc00,
	                                   0x7e00, 0x7d01, 0xfe01, 0x0001,
	                                   0x83ff, 0x7bff, 0x0400, 0x8080};
	if (!odds || rnd() % odds)
		return rnd_f16();
	return rnd() % 2 ? special[rnd() % (sizeof special / sizeof special[0])]
	                 : (uint16_t)rnd();
}

/* Two halves, or an f32 (FP8 codes come from both). */
static uint32_t
rnd_word(void)
{
	static const uint32_t special[] = {
	    0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
	    0x7fa00001, 0xffc00123, 0x00000001, 0x807fffff, 0x7f7fffff};
	if (odds && rnd() % odds == 0)
		return special[rnd() % (sizeof special / sizeof special[0])];
	if (rnd() % 4 == 0) /* an f32 near 1 */
		return (rnd() & 0x80000000u) | (120 + rnd() % 16) << 23 |
		       (rnd() & 0x7fffff);
	return (uint32_t)rnd_half() << 16 | rnd_half();
}

enum { PATH_RUNS = 2, PATH_INSNS = 12 };

/* Run prog on t as worker 0 with random registers, AMP state, formats and
 * scale from seed; the worker's state after it into out; the cycles. */
static uint64_t
run_path(Tile *t, const uint32_t *prog, int n, uint32_t seed, Context *out)
{
	uint32_t base = t->chip->mem_base;
	rng_state = seed;
	assert_int_equal(tile_write(t, base, prog, (uint32_t)n * 4), 0);
	t->sup.fp_infmt = rnd() % 4;
	t->sup.fp_iscl = rnd() % 64;
	assert_int_equal(tile_start_worker(t, 0, base, 0), 0);
	Context *c = &t->ctx[1];
	for (int i = 0; i < 16; i++)
		c->a[i] = rnd_word();
	for (int m = 0; m < 16; m++) {
		uint32_t v[3] = {rnd_word(), rnd_word(), rnd_word()};
		memcpy(&c->amp.acc[m], &v[0], 4);
		memcpy(&c->amp.next[m], &v[1], 4);
		memcpy(&c->amp.done[m], &v[2], 4);
	}
	uint64_t start = t->cycle;
	check_done(t, tile_run(t, t->cycle + 10000));
	*out = *c;
	return t->cycle - start;
}

static void
test_paths_random(void **state)
{
	(void)state;
	static const struct {
		const char *variant;
		int pair[3]; /* dst, input, partials: a register pair */
	} forms[] = {
	    {"f16v4hihoamp_aaan_ef", {0, 1, 0}},
	    {"f16v4sihoamp_aaan_ef", {0, 1, 1}},
	    {"f16v4sisoamp_aaan_ef", {1, 1, 1}},
	    {"f16v4hihov4amp_aaan_ef", {1, 1, 1}},
	    {"f32sisoamp_aaan_ef", {1, 0, 1}},
	    {"f32sisov2amp_aaan_ef", {1, 0, 1}},
	    {"f8v8hihov4amp_aaan_ef", {1, 1, 1}},
	};
	static const SimPath paths[] = {SIM_PLAIN, SIM_PORTABLE, SIM_FAST};
	int nans = 0;
	for (int k = 0; k < 7 * 40; k++) {
		int f = k % 7;
		uint32_t seed = 7919u * (uint32_t)k + 1;
		rng_state = seed;
		odds = (uint32_t[]){0, 64, 8}[k / 7 % 3];
		uint32_t prog[PATH_INSNS + 1];
		for (int i = 0; i < PATH_INSNS; i++) {
			int r[3];
			for (int j = 0; j < 3; j++)
				r[j] = (int)(rnd() % 16) &
				       (forms[f].pair[j] ? ~1 : ~0);
			prog[i] = enc(forms[f].variant, 4, r[0], r[1], r[2],
			              (int)(rnd() % 64));
		}
		prog[PATH_INSNS] = enc("exitz_mmmn", 1, 15);
		uint64_t cwei[CHIP_CWEI];
		for (int i = 0; i < CHIP_CWEI; i++)
			cwei[i] = (uint64_t)rnd_word() << 32 | rnd_word();
		Context ref[PATH_RUNS];
		uint64_t ref_cycles[PATH_RUNS];
		for (int p = 0; p < 3; p++) {
			sim_path = paths[p];
			Tile *t = tile_new(chip_default(), 0);
			memcpy(t->cwei, cwei, sizeof cwei);
			for (int run = 0; run < PATH_RUNS; run++) {
				Context got;
				uint64_t cycles = run_path(
				    t, prog, PATH_INSNS + 1,
				    seed + 1000003u * (uint32_t)run, &got);
				if (p == 0) {
					ref[run] = got;
					ref_cycles[run] = cycles;
					for (int m = 0; m < 16; m++)
						nans += isnan(got.amp.acc[m]);
					continue;
				}
				if (cycles != ref_cycles[run] ||
				    memcmp(got.a, ref[run].a, sizeof got.a) ||
				    memcmp(&got.amp, &ref[run].amp,
				           sizeof got.amp))
					fail_msg("%s, program %d, run %d: path "
					         "%d differs from the plain "
					         "path",
					         forms[f].variant, k, run, p);
			}
			tile_free(t);
		}
		sim_path = SIM_FAST;
	}
	/* NaN sums happened (the vector paths' fallback ran) */
	assert_true(nans > 100);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ld64putcs),
	    cmocka_unit_test(test_ld128putcs),
	    cmocka_unit_test(test_putcs_faults),
	    cmocka_unit_test(test_putcs_worker_faults),
	    cmocka_unit_test(test_hihov4_gemm),
	    cmocka_unit_test(test_hihov4_weights_loaded),
	    cmocka_unit_test(test_single_set_f16),
	    cmocka_unit_test(test_f32sisov2amp),
	    cmocka_unit_test(test_f32sisoamp),
	    cmocka_unit_test(test_f8_f143),
	    cmocka_unit_test(test_f8_f152),
	    cmocka_unit_test(test_f8_mixed),
	    cmocka_unit_test(test_f8_extremes),
	    cmocka_unit_test(test_f8_not_on_ipu2),
	    cmocka_unit_test(test_slic_faults),
	    cmocka_unit_test(test_amp_state),
	    cmocka_unit_test(test_paths_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

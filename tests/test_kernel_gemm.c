/*
 * test_kernel_gemm.c - kernels/gemm.S and kernels/gemm_f8.S through
 * gemm_tile_run: C = A x B (+ C) on one emulated tile for f16, f32 and f8
 * over awkward shapes (one row, fewer rows than workers, columns and K not
 * multiples of the panel sizes, thousands of K), both modes, repeated
 * calls, and the cycle formula gemm_tile_cycles against the emulator.
 *
 * The reference decodes the bit patterns with decoders written here and
 * sums in long double. The tolerance follows the AMP model panel by panel
 * (docs/kernel-gemm.md, "Accuracy"): each AMP instruction rounds its
 * accumulator to f32, and each K-panel's result is rounded to the C format
 * (f16 for f16 and f8) before it is the next panel's partial.
 */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/bench/tile_kernel.h"
#include "../src/codegen/codegen.h"
#include "../src/kernels/gemm.h"
#include "../src/kernels/kernels.h"

static long double
f16_value(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	long double v = e ? ldexpl(1024 + m, e - 25) : ldexpl(m, -24);
	return h & 0x8000 ? -v : v;
}

static long double
f32_value(uint32_t b)
{
	float f;
	memcpy(&f, &b, 4);
	return f;
}

/* F143: 1/4/3 bits, bias 8; F152: 1/5/2 bits, bias 16 (model.md 7.2). */
static long double
f8_value(uint8_t q, int f152, int scale)
{
	int eb = f152 ? 5 : 4, mb = 7 - eb, bias = f152 ? 16 : 8;
	int e = (q >> mb) & ((1 << eb) - 1), m = q & ((1 << mb) - 1);
	long double v =
	    e ? ldexpl((1 << mb) + m, e - bias - mb) : ldexpl(m, 1 - bias - mb);
	return ldexpl(q & 0x80 ? -v : v, scale);
}

static uint64_t rng = 0x1234567;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* Random values of moderate size (|x| in [2^-4, 4)) so that sums of a few
 * thousand products stay far from f16 overflow. */
static uint16_t
rnd_f16(void)
{
	uint32_t r = rnd();
	return (uint16_t)((r & 0x8000) | (11 + r % 6) << 10 |
	                  (r >> 16 & 0x3ff));
}

static uint32_t
rnd_f32(void)
{
	uint32_t r = rnd();
	return (r & 0x80000000u) | (123 + r % 6) << 23 | (rnd() & 0x7fffff);
}

static uint8_t
rnd_f8(int f152)
{
	uint32_t r = rnd();
	int eb = f152 ? 5 : 4, mb = 7 - eb, bias = f152 ? 16 : 8;
	uint32_t e = (uint32_t)(bias - 3) + r % 6; /* 2^-3 .. 2^2 */
	return (uint8_t)((r & 0x80) | e << mb | (r >> 8 & ((1u << mb) - 1)));
}

typedef struct {
	GemmDtype t;
	uint32_t bm, bn, bk;
	GemmOptions opt;
	const Chip *chip;
} Case;

static long double
in_value(const Case *cs, const void *arr, size_t i, int is_b)
{
	if (cs->t == GEMM_F32)
		return f32_value(((const uint32_t *)arr)[i]);
	if (cs->t == GEMM_F16)
		return f16_value(((const uint16_t *)arr)[i]);
	int f152 = is_b ? cs->opt.fp8_w : cs->opt.fp8_in;
	/* the scale applies to the product: put it on A's side */
	return f8_value(((const uint8_t *)arr)[i], f152,
	                is_b ? 0 : cs->opt.fp8_scale);
}

static long double
c_value(const Case *cs, const void *arr, size_t i)
{
	return cs->t == GEMM_F32 ? f32_value(((const uint32_t *)arr)[i])
	                         : f16_value(((const uint16_t *)arr)[i]);
}

/* x rounded to f16 (nearest, ties to even; these values stay far from
 * overflow), as a value. */
static long double
round_f16(long double x)
{
	if (x == 0)
		return x;
	int e;
	frexpl(x, &e);                      /* |x| in [2^(e-1), 2^e) */
	int q = e - 1 < -14 ? -24 : e - 11; /* the ulp's exponent */
	return ldexpl(rintl(ldexpl(x, -q)), q);
}

/*
 * The bits the AMP model gives (docs/emulator-amp.md 3, docs/kernel-gemm.md
 * "Accuracy"), for f16 and f8: each element starts from its C partial
 * (f16, unscaled) or 0, each AMP instruction adds its 8 / e products (the
 * f8 scale on each) and rounds the sum to f32 once, and each K-panel's
 * result rounds to f16 before it is the next panel's partial. The test's
 * values keep every sum exact in long double (terms within 2^-28 ..
 * 2^17), so its order does not matter.
 */
static long double
exact_value(const Case *cs, const void *a, const void *b, long double part,
            uint32_t r, uint32_t col)
{
	uint32_t kp = gemm_k_panel(cs->t), per = 8 / gemm_in_bytes(cs->t);
	uint32_t nk = gemm_k_panels(cs->t, cs->bk);
	for (uint32_t p = 0; p < nk; p++) {
		float acc = (float)part;
		for (uint32_t ph = 0; ph < kp / per; ph++) {
			long double s = acc;
			for (uint32_t j = 0; j < per; j++) {
				uint32_t k = p * kp + ph * per + j;
				if (k < cs->bk)
					s += in_value(cs, a,
					              (size_t)r * cs->bk + k,
					              0) *
					     in_value(cs, b,
					              (size_t)k * cs->bn + col,
					              1);
			}
			acc = (float)s;
		}
		part = round_f16(acc);
	}
	return part;
}

/* Random A, B and C (NaN in zero mode, where it must be ignored). */
static void
fill_case(const Case *cs, uint8_t *a, uint8_t *b, uint8_t *c0)
{
	GemmDtype t = cs->t;
	uint32_t bm = cs->bm, bn = cs->bn, bk = cs->bk;
	uint32_t ec = gemm_c_elem_bytes(t);
	for (size_t i = 0; i < (size_t)bm * bk; i++) {
		if (t == GEMM_F32)
			((uint32_t *)a)[i] = rnd_f32();
		else if (t == GEMM_F16)
			((uint16_t *)a)[i] = rnd_f16();
		else
			a[i] = rnd_f8(cs->opt.fp8_in);
	}
	for (size_t i = 0; i < (size_t)bk * bn; i++) {
		if (t == GEMM_F32)
			((uint32_t *)b)[i] = rnd_f32();
		else if (t == GEMM_F16)
			((uint16_t *)b)[i] = rnd_f16();
		else
			b[i] = rnd_f8(cs->opt.fp8_w);
	}
	for (size_t i = 0; i < (size_t)bm * bn; i++) {
		if (cs->opt.zero) /* must be ignored: NaN everywhere */
			memset(c0 + i * ec, 0xff, ec);
		else if (t == GEMM_F32)
			((uint32_t *)c0)[i] = rnd_f32();
		else
			((uint16_t *)c0)[i] = rnd_f16();
	}
}

/* C from c0 against the reference computed here, element by element. */
static void
compare_case(Case cs, const uint8_t *a, const uint8_t *b, const uint8_t *c0,
             const uint8_t *c)
{
	GemmDtype t = cs.t;
	uint32_t bm = cs.bm, bn = cs.bn, bk = cs.bk;
	/* f32 accumulation: 4 AMPs per panel (f16, f8) or 8 (f32), each
	 * rounding once; then the panel result rounds to C's format. */
	long double steps = t == GEMM_F32 ? 8 : 4;
	long double u_out = t == GEMM_F32 ? 0x1p-24L : 0x1p-11L;
	long double tiny = t == GEMM_F32 ? 0x1p-149L : 0x1p-25L;
	uint32_t kp = gemm_k_panel(t), nk = gemm_k_panels(t, bk);
	uint32_t calls = cs.opt.calls ? cs.opt.calls : 1;
	for (uint32_t r = 0; r < bm; r++)
		for (uint32_t col = 0; col < bn; col++) {
			size_t ci = (size_t)r * bn + col;
			long double ref =
			    cs.opt.zero ? 0 : c_value(&cs, c0, ci);
			long double tol = 0;
			for (uint32_t call = 0; call < calls; call++) {
				if (cs.opt.zero)
					ref = 0, tol = 0;
				for (uint32_t p = 0; p < nk; p++) {
					long double s = ref, mag = 0;
					for (uint32_t k = p * kp;
					     k < bk && k < (p + 1) * kp; k++) {
						long double x =
						    in_value(&cs, a,
						             (size_t)r * bk + k,
						             0) *
						    in_value(&cs, b,
						             (size_t)k * bn +
						                 col,
						             1);
						s += x;
						mag += fabsl(x);
					}
					long double acc =
					    steps * 0x1p-24L *
					    (fabsl(ref) + tol + mag);
					tol += acc +
					       u_out * (fabsl(s) + tol + acc) +
					       tiny;
					ref = s;
				}
			}
			long double got = c_value(&cs, c, ci);
			if (t != GEMM_F32) { /* the bits, exactly */
				long double e =
				    cs.opt.zero ? 0 : c_value(&cs, c0, ci);
				for (uint32_t call = 0; call < calls; call++)
					e = exact_value(&cs, a, b,
					                cs.opt.zero ? 0 : e, r,
					                col);
				if (got != e)
					fail_msg("%s %ux%ux%u%s: c[%u][%u] = "
					         "%.9Lg, the AMP model's bits "
					         "%.9Lg",
					         gemm_dtype_name(t), bm, bn, bk,
					         cs.opt.zero ? " zero" : "", r,
					         col, got, e);
			}
			if (!(fabsl(got - ref) <= tol))
				fail_msg("%s %ux%ux%u%s: c[%u][%u] = %.9Lg, "
				         "reference %.9Lg (tolerance %.3Lg)",
				         gemm_dtype_name(t), bm, bn, bk,
				         cs.opt.zero ? " zero" : "", r, col,
				         got, ref, tol);
		}
}

/* Run one case and check every element of C; returns the cycles. */
static uint64_t
check(Case cs)
{
	GemmDtype t = cs.t;
	uint32_t bm = cs.bm, bn = cs.bn, bk = cs.bk;
	uint32_t ein = gemm_in_bytes(t), ec = gemm_c_elem_bytes(t);
	uint8_t *a = malloc((size_t)bm * bk * ein);
	uint8_t *b = malloc((size_t)bk * bn * ein);
	uint8_t *c0 = malloc((size_t)bm * bn * ec);
	uint8_t *c = malloc((size_t)bm * bn * ec);
	fill_case(&cs, a, b, c0);
	memcpy(c, c0, (size_t)bm * bn * ec);
	if (!cs.chip)
		cs.chip = chip_default();
	uint64_t cycles = 0;
	Diag d;
	diag_clear(&d);
	if (gemm_tile_run(cs.chip, t, bm, bn, bk, a, b, c, &cs.opt, &cycles,
	                  &d))
		fail_msg("%s %ux%ux%u: %s", gemm_dtype_name(t), bm, bn, bk,
		         d.msg);
	compare_case(cs, a, b, c0, c);
	free(a);
	free(b);
	free(c0);
	free(c);
	return cycles;
}

static void
shapes(GemmDtype t)
{
	static const uint32_t s[][3] = {
	    {1, 16, 16}, {7, 48, 16},   {13, 20, 1000}, {5, 3, 7},
	    {6, 16, 40}, {269, 48, 64}, {64, 1000, 16}, {13, 16, 4304},
	};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		Case cs = {.t = t, .bm = s[i][0], .bn = s[i][1], .bk = s[i][2]};
		check(cs);
		cs.opt.zero = 1;
		if (i % 2 == 0)
			check(cs);
	}
}

static void
test_f16(void **state)
{
	(void)state;
	shapes(GEMM_F16);
	check((Case){.t = GEMM_F16,
	             .bm = 50,
	             .bn = 40,
	             .bk = 100,
	             .chip = chip_by_name("gc200")});
}

static void
test_f32(void **state)
{
	(void)state;
	shapes(GEMM_F32);
}

static void
test_f8(void **state)
{
	(void)state;
	shapes(GEMM_F8);
	Case cs = {.t = GEMM_F8, .bm = 31, .bn = 33, .bk = 200};
	cs.opt = (GemmOptions){.fp8_in = FP8_F152, .fp8_scale = -3};
	check(cs);
	cs.opt = (GemmOptions){.fp8_w = FP8_F152, .fp8_scale = 2};
	check(cs);
}

/* A second call on the same tile: accumulate adds A x B again, zero mode
 * gives the same C. */
static void
test_repeated_calls(void **state)
{
	(void)state;
	for (int t = GEMM_F32; t <= GEMM_F8; t++) {
		Case cs = {.t = (GemmDtype)t, .bm = 20, .bn = 30, .bk = 70};
		cs.opt.calls = 2;
		check(cs);
		cs.opt.zero = 1;
		check(cs);
	}
}

/* The formula of docs/kernel-gemm.md against the emulator, exactly; the
 * shapes take turns at the nominal timing profile and its bounds. */
static void
test_cycle_formula(void **state)
{
	(void)state;
	static const uint32_t s[][4] = {
	    {GEMM_F16, 1, 16, 16},    {GEMM_F16, 96, 64, 256},
	    {GEMM_F16, 269, 48, 64},  {GEMM_F16, 600, 16, 32},
	    {GEMM_F16, 35, 160, 48},  {GEMM_F32, 7, 16, 8},
	    {GEMM_F32, 96, 64, 64},   {GEMM_F32, 300, 32, 24},
	    {GEMM_F8, 96, 64, 256},   {GEMM_F8, 13, 20, 1000},
	    {GEMM_F8, 400, 32, 64},   {GEMM_F16, 128, 128, 128},
	    {GEMM_F16, 768, 32, 256}, {GEMM_F32, 384, 32, 128},
	    {GEMM_F8, 768, 32, 512},  {GEMM_F16, 50, 160, 480},
	    {GEMM_F32, 13, 112, 200}, {GEMM_F8, 146, 48, 288},
	    {GEMM_F16, 73, 80, 96},   {GEMM_F32, 100, 80, 8},
	};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		Case cs = {.t = (GemmDtype)s[i][0],
		           .bm = s[i][1],
		           .bn = s[i][2],
		           .bk = s[i][3],
		           .chip = profile_chip((TimingBound)(i % 3))};
		uint64_t got = check(cs);
		uint64_t want =
		    gemm_tile_cycles(cs.chip, cs.t, 6, cs.bm, cs.bn, cs.bk);
		if (got != want)
			fail_msg("%s %ux%ux%u at %s: %llu cycles, formula %llu",
			         gemm_dtype_name(cs.t), cs.bm, cs.bn, cs.bk,
			         cs.chip->timing->spec, (unsigned long long)got,
			         (unsigned long long)want);
		/* padded MACs against the tile's peak */
		const Chip *c = chip_default();
		double macs = (double)cs.bm * 16 * gemm_n_panels(cs.bn) *
		              gemm_k_panel(cs.t) * gemm_k_panels(cs.t, cs.bk);
		double peak = cs.t == GEMM_F32   ? c->macs_f32
		              : cs.t == GEMM_F16 ? c->macs_f16
		                                 : c->macs_f8;
		print_message("%s %ux%ux%u: %llu cycles, formula %llu, "
		              "%.1f MACs/cycle (%.1f%% of peak)\n",
		              gemm_dtype_name(cs.t), cs.bm, cs.bn, cs.bk,
		              (unsigned long long)got, (unsigned long long)want,
		              macs / (double)got,
		              100 * macs / (double)got / peak);
	}
}

/* The five-worker calls (gemm5_*): correct results for every dtype, fewer
 * rows than workers, zero mode and a repeated call, and the formula exact
 * against the emulator at the three profiles. */
static void
test_five_workers(void **state)
{
	(void)state;
	static const uint32_t s[][4] = {
	    {GEMM_F16, 3, 16, 16},   {GEMM_F16, 269, 48, 64},
	    {GEMM_F16, 586, 32, 48}, {GEMM_F32, 7, 20, 8},
	    {GEMM_F32, 96, 64, 24},  {GEMM_F8, 13, 20, 200},
	    {GEMM_F8, 146, 48, 96},  {GEMM_F16, 50, 100, 160},
	    {GEMM_F32, 41, 40, 8},   {GEMM_F16, 586, 160, 64},
	};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		Case cs = {.t = (GemmDtype)s[i][0],
		           .bm = s[i][1],
		           .bn = s[i][2],
		           .bk = s[i][3],
		           .opt = {.workers = 5, .zero = i % 4 == 1},
		           .chip = profile_chip((TimingBound)(i % 3))};
		if (i % 4 == 3)
			cs.opt.calls = 2;
		uint64_t got = check(cs);
		uint64_t want =
		    gemm_tile_cycles(cs.chip, cs.t, 5, cs.bm, cs.bn, cs.bk);
		/* a repeated call starts at another slot phase: only its
		 * results are checked */
		if (!cs.opt.calls && got != want)
			fail_msg(
			    "five workers, %s %ux%ux%u at %s: %llu cycles, "
			    "formula %llu",
			    gemm_dtype_name(cs.t), cs.bm, cs.bn, cs.bk,
			    cs.chip->timing->spec, (unsigned long long)got,
			    (unsigned long long)want);
		print_message("five workers, %s %ux%ux%u: %llu cycles, six "
		              "%llu\n",
		              gemm_dtype_name(cs.t), cs.bm, cs.bn, cs.bk,
		              (unsigned long long)want,
		              (unsigned long long)gemm_tile_cycles(
		                  cs.chip, cs.t, 6, cs.bm, cs.bn, cs.bk));
	}
}

/*
 * The overlapped phase (docs/bench-gemm.md, "The third step"): codegen's
 * five-worker panel loop (a compute step with GemmWindows) on two tiles
 * of different rows (and a third without the GEMM), optionally with an exchange
 * placed by hand between the panel blocks (tile 0 -> 1 beside panel 0, 1 -> 0
 * beside panel 1), then the six-worker calls over the rest. Checked: C against
 * the reference of compare_case; the words each tile receives; and every
 * five-worker panel's cycles against gemm_block and gemm_windows: its
 * first run (the tile's TR_COMPUTE start) and the release of the sync
 * LOCAL after it (its end): at[p] + 1 before block p, and for the last
 * panel its workers' last exit + sync-local (the formula's exits).
 */
enum { OV_TILES = 2, OV_WORDS = 100, OV_CODE = 0x3000 };

typedef struct {
	const Chip *chip;
	GemmDtype t;
	uint32_t bm[OV_TILES], bn, bk, five;
	int zero, xfers;
	int late;            /* the sends end at their windows' close */
	const char *refused; /* tile 0's send moved to break the rules:
	                        codegen refuses it with this message */
	uint64_t send_at;    /* that send's cycle */
	uint32_t delay; /* block p no earlier than its earliest (gemm_windows
	                   without bounds) + 12p + (p x delay) mod 6 */
} Overlap;

static int64_t
ov_symbol(void *ctx, const char *name)
{
	return img_symbol_addr(ctx, name);
}

static uint32_t
ov_pattern(uint32_t tile, uint32_t i)
{
	return (tile + 1) * 0x01000193u ^ (i * 0x9e3779b9u + 11);
}

/* Transfer src -> dst of OV_WORDS words sent at `at` (a multiple of 6),
 * its receive controls by the scheduler's rules (xsched.c): the mux on
 * to act at the first word's write less the XPIC delay, off the cycle
 * after the last less it, the pointer at `ptr`. */
static void
ov_xfer(Step *s, const Chip *c, uint32_t src, uint32_t dst, int32_t sbuf,
        int32_t rbuf, uint64_t at, uint64_t ptr)
{
	Transfer *x = lower_transfer(s, src, (BufRef){sbuf, 0}, OV_WORDS, 1);
	x->dst_tile[0] = dst;
	x->dst[0] = (BufRef){rbuf, 0};
	x->start = at;
	uint64_t first = at + chip_route_cycles(c, src, dst);
	x->mux_at[0] = first - chip_xpic_cycles(c, dst);
	x->off_at[0] = x->mux_at[0] + OV_WORDS;
	x->ptr_at[0] = ptr;
	/* each control in a 6-cycle block of its own, after the pointer */
	assert_true(ptr / 6 < x->mux_at[0] / 6);
	assert_true(x->mux_at[0] / 6 < x->off_at[0] / 6);
}

/* Runs the case; returns (A + at[p]) mod 6 seen, as a bit set. */
static unsigned
run_overlap(const Overlap *o)
{
	const Chip *chip = o->chip;
	GemmDtype t = o->t;
	const char *names[2];
	gemm_objects(t, 6, names);
	TileImage img;
	Diag d;
	diag_clear(&d);
	if (kernel_image(names, 1, chip, &img, &d))
		fail_msg("%s", d.msg);
	uint32_t code_end = chip->mem_base;
	for (int i = 0; i < img.nseg; i++)
		if (img.seg[i].addr + img.seg[i].size > code_end)
			code_end = img.seg[i].addr + img.seg[i].size;
	uint32_t bmax = o->bm[0] > o->bm[1] ? o->bm[0] : o->bm[1];
	uint32_t prog = align_up(code_end, 8);
	uint32_t args = align_up(prog + OV_CODE, 16);
	uint32_t save = args + GEMM_OVERLAP_ARGS_BYTES;
	uint32_t sbuf_at = align_up(save + 8, 16);
	uint32_t rbuf_at = sbuf_at + 4 * OV_WORDS;
	uint32_t aa = align_up(rbuf_at + 4 * OV_WORDS, 32);
	uint32_t abytes = gemm_a_bytes(t, bmax, o->bk);
	uint32_t bbytes = gemm_b_bytes(t, o->bk, o->bn);
	uint32_t cbytes = gemm_c_bytes(t, bmax, o->bn);
	assert_true(aa + abytes + GEMM_A_TAIL <= chip->interleave);
	uint32_t bb = align_up(chip->interleave, 16);
	uint32_t cc = align_up(bb + bbytes, 2 * chip->elem_bytes);
	assert_true(cc + cbytes + gemm_c_tail(t) <= chip->mem_end);

	/* a third tile without the GEMM only takes part in the syncs */
	Lowered *l = lower_new(chip, OV_TILES + 1);
	int32_t idle_save = lower_buffer(l, OV_TILES, 8, 8, REGION_ANY, 0,
	                                 INT32_MAX, "return address");
	l->buf[idle_save].addr = save;
	Step *s = lower_step(l, STEP_COMPUTE, "overlapped gemm");
	int32_t sb[OV_TILES], rb[OV_TILES], sv[OV_TILES];
	for (uint32_t i = 0; i < OV_TILES; i++) {
		int32_t ba = lower_buffer(l, i, abytes, 32, REGION_ANY, 0,
		                          INT32_MAX, "A");
		int32_t bbuf = lower_buffer(l, i, bbytes, 16, REGION_ANY, 0,
		                            INT32_MAX, "B");
		int32_t bc = lower_buffer(l, i, cbytes, 16, REGION_ANY, 0,
		                          INT32_MAX, "C");
		sb[i] = lower_buffer(l, i, 4 * OV_WORDS, 8, REGION_ANY, 0,
		                     INT32_MAX, "send");
		rb[i] = lower_buffer(l, i, 4 * OV_WORDS, 8, REGION_ANY, 0,
		                     INT32_MAX, "receive");
		sv[i] = lower_buffer(l, i, 8, 8, REGION_ANY, 0, INT32_MAX,
		                     "return address");
		l->buf[ba].addr = aa;
		l->buf[bbuf].addr = bb;
		l->buf[bc].addr = cc;
		l->buf[sb[i]].addr = sbuf_at;
		l->buf[rb[i]].addr = rbuf_at;
		l->buf[sv[i]].addr = save;
		KernelCall *k = lower_call(
		    l, s, i, gemm_entry(t, 6, o->bm[i], o->bn, o->bk), names[0],
		    GEMM_OVERLAP_ARGS_BYTES);
		l->buf[k->args_at].addr = args;
		k->ref[0] = (BufRef){ba, 0};
		k->ref[1] = (BufRef){bbuf, 0};
		k->ref[2] = (BufRef){bc, 0};
		k->nref = 3;
		k->args.kind = KC_GEMM;
		k->args.u.gemm =
		    (GemmCall){.t = t,
		               .bm = o->bm[i],
		               .bn = o->bn,
		               .bk = o->bk,
		               .opt = {.zero = o->zero, .five = o->five}};
	}
	s->gwin = xmalloc(sizeof *s->gwin);
	uint64_t *min_at = NULL;
	if (o->delay) {
		GemmWindows first;
		gemm_windows(chip, t, o->bm, OV_TILES, o->bk, o->five, 0, NULL,
		             &first);
		min_at = xcalloc(o->five, sizeof *min_at);
		for (uint32_t p = 1; p < o->five; p++)
			min_at[p] = first.at[p] + 12 * p + (p * o->delay) % 6;
		gemm_windows_free(&first);
	}
	gemm_windows(chip, t, o->bm, OV_TILES, o->bk, o->five, 0, min_at,
	             s->gwin);
	free(min_at);
	const GemmWindows *w = s->gwin;
	if (o->xfers) {
		assert_true(o->five >= 3);
		/* a send of OV_WORDS holds its sender 102 cycles */
		uint64_t hold = (OV_WORDS + 5) / 6 * 6;
		ov_xfer(s, chip, 0, 1, sb[0], rb[1],
		        o->refused ? o->send_at
		        : o->late  ? w->close[0] - hold
		                   : 36,
		        0);
		ov_xfer(s, chip, 1, 0, sb[1], rb[0],
		        o->late ? w->close[1] - hold : w->open[1] + 36,
		        w->open[1]);
	}
	lower_index(l);
	if (o->refused) {
		TileCode tc;
		assert_int_equal(codegen_tile(l, NULL, 0, prog, sv[0], &tc, &d),
		                 IPU_EINVAL);
		if (!strstr(d.msg, o->refused))
			fail_msg("refused with: %s", d.msg);
		lower_free(l);
		img_free(&img);
		return 0;
	}

	ChipConfig cfg = {.chip = chip, .tiles = OV_TILES + 1, .trace = 1};
	ChipSim *cs = chipsim_new(&cfg);
	KernelSyms ks = {.symbol = ov_symbol, .ctx = &img};
	uint32_t ein = gemm_in_bytes(t), ec = gemm_c_elem_bytes(t);
	uint8_t *a[OV_TILES], *b[OV_TILES], *c0[OV_TILES];
	uint8_t *pa = xmalloc(abytes), *pb = xmalloc(bbytes),
	        *pc = xmalloc(cbytes);
	for (uint32_t i = 0; i < OV_TILES; i++) {
		Case k = {.t = t, .bm = o->bm[i], .bn = o->bn, .bk = o->bk};
		k.opt.zero = o->zero;
		a[i] = xmalloc((size_t)k.bm * k.bk * ein);
		b[i] = xmalloc((size_t)k.bk * k.bn * ein);
		c0[i] = xmalloc((size_t)k.bm * k.bn * ec);
		fill_case(&k, a[i], b[i], c0[i]);
		TileCode tc;
		if (codegen_tile(l, &ks, i, prog, sv[i], &tc, &d))
			fail_msg("%s", d.msg);
		assert_int_equal(tc.code_len, codegen_size(l, i, NULL));
		assert_true(tc.code_len <= OV_CODE);
		Tile *tile = chipsim_tile(cs, i);
		tile_load_image(tile, &img);
		tile_write(tile, tc.code_addr, tc.code, tc.code_len);
		for (int j = 0; j < tc.ndata; j++)
			tile_write(tile, tc.data[j].addr, tc.data[j].bytes,
			           tc.data[j].len);
		gemm_pack_a(t, k.bm, k.bk, a[i], pa);
		gemm_pack_b(t, k.bk, k.bn, b[i], pb);
		gemm_pack_c(ec, k.bm, k.bn, c0[i], pc);
		tile_write(tile, aa, pa, gemm_a_bytes(t, k.bm, k.bk));
		tile_write(tile, bb, pb, bbytes);
		tile_write(tile, cc, pc, gemm_c_bytes(t, k.bm, k.bn));
		uint32_t words[OV_WORDS];
		for (uint32_t j = 0; j < OV_WORDS; j++)
			words[j] = ov_pattern(i, j);
		tile_write(tile, sbuf_at, words, sizeof words);
		tile_start(tile, tc.entry);
		codegen_free(&tc);
	}
	{
		TileCode tc;
		if (codegen_tile(l, &ks, OV_TILES, prog, idle_save, &tc, &d))
			fail_msg("%s", d.msg);
		Tile *tile = chipsim_tile(cs, OV_TILES);
		tile_write(tile, tc.code_addr, tc.code, tc.code_len);
		tile_start(tile, tc.entry);
		codegen_free(&tc);
	}
	ChipError err;
	if (chipsim_run(cs, 100000000, &err) != RUN_DONE)
		fail_msg("run: %s", err.msg);

	unsigned phases = 0;
	uint64_t sl = chip_rule(chip, TIMING_SYNC_LOCAL), anchor = 0;
	for (uint32_t i = 0; i < OV_TILES; i++) {
		Tile *tile = chipsim_tile(cs, i);
		Case k = {.t = t, .bm = o->bm[i], .bn = o->bn, .bk = o->bk};
		k.opt.zero = o->zero;
		uint8_t *c = xmalloc((size_t)k.bm * k.bn * ec);
		tile_read(tile, cc, pc, gemm_c_bytes(t, k.bm, k.bn));
		gemm_unpack_c(ec, k.bm, k.bn, pc, c);
		compare_case(k, a[i], b[i], c0[i], c);
		free(c);
		if (o->xfers)
			for (uint32_t j = 0; j < OV_WORDS; j++) {
				uint32_t v;
				tile_read(tile, rbuf_at + 4 * j, &v, 4);
				if (v != ov_pattern(1 - i, j))
					fail_msg("tile %u received word %u: "
					         "0x%08x",
					         i, j, v);
			}
		/* the panels' cycles */
		uint64_t rel = 0;
		const TraceEvent *cmp[64];
		uint32_t ncmp = 0;
		for (int j = 0; j < tile->ntrace; j++) {
			const TraceEvent *ev = &tile->trace[j];
			if (ev->kind == TR_SYNC && ev->arg == SYNC_INTERNAL)
				rel = ev->end;
			if (ev->kind == TR_COMPUTE && ncmp < 64)
				cmp[ncmp++] = ev;
		}
		assert_true(rel > 0 && ncmp >= o->five);
		GemmCall g =
		    (GemmCall){.t = t, .bm = k.bm, .bn = k.bn, .bk = k.bk};
		uint64_t at0 =
		    rel + chip_rule(chip, TIMING_SUP_PUT) + XS_PREAMBLE;
		GemmBlock blk;
		GemmRun run;
		gemm_five_run(&g, 0, o->five, &run);
		gemm_block(chip, t, k.bm, &run, at0, &blk);
		if (i == 0)
			anchor = blk.open;
		assert_int_equal(blk.open, anchor); /* every tile's frame */
		assert_true(blk.open - at0 <= w->lead);
		assert_int_equal(cmp[0]->start, blk.run[0]);
		for (uint32_t p = 1; p < o->five; p++) {
			uint64_t at = anchor + w->at[p];
			assert_true(blk.exit_max + sl <= at + 1);
			assert_int_equal(cmp[p - 1]->end, at + 1);
			gemm_five_run(&g, p, o->five, &run);
			gemm_block(chip, t, k.bm, &run, at, &blk);
			assert_int_equal(cmp[p]->start, blk.run[0]);
			phases |= 1u << (at % 6);
		}
		uint64_t last = anchor + w->open[o->five - 1] + 1;
		if (blk.exit_max + sl > last)
			last = blk.exit_max + sl;
		assert_int_equal(cmp[o->five - 1]->end, last);
		assert_true(blk.exit_max <= anchor + w->done);
		print_message("overlapped %s %ux%ux%u, %u of %u panels on "
		              "tile %u: five-worker part %llu cycles from "
		              "cycle 0 (block 0 %llu before), the step %llu\n",
		              gemm_dtype_name(t), k.bm, k.bn, k.bk, o->five,
		              gemm_n_panels(k.bn) * gemm_k_panels(t, k.bk), i,
		              (unsigned long long)(last - anchor),
		              (unsigned long long)(anchor - at0),
		              (unsigned long long)(tile->cycle - rel));
		free(a[i]);
		free(b[i]);
		free(c0[i]);
	}
	free(pa);
	free(pb);
	free(pc);
	chipsim_free(cs);
	lower_free(l);
	img_free(&img);
	return phases;
}

/* Piece one: the panel blocks' cycles (gemm_block, gemm_windows) against
 * the emulator, at the three timing profiles, every entry kind, blocks
 * pushed to every phase mod 6; the results checked as well. */
static void
test_overlap_blocks(void **state)
{
	(void)state;
	static const uint32_t s[][7] = {
	    /* dtype, rows of tile 0 and 1, bn, bk, panels, delay */
	    /* f16 chained where gemm_five_chained allows (a tile of 3 rows
	     * and one K-panel run plain): the last panel an N-panel's last
	     * K-panel or inside one (gemm_five_count: never its first) */
	    {GEMM_F16, 40, 37, 32, 64, 6, 0},
	    {GEMM_F16, 23, 3, 48, 32, 4, 1},
	    {GEMM_F32, 41, 40, 20, 24, 4, 2},
	    {GEMM_F8, 30, 26, 32, 96, 5, 3},
	    {GEMM_F16, 12, 12, 16, 16, 1, 0},
	    {GEMM_F16, 64, 58, 32, 48, 5, 5},
	    {GEMM_F16, 293, 286, 32, 64, 7, 2},
	    /* chained f8: an N-panel's first K-panel that is also the last
	     * panel (cold and drain, accumulating; zero mode in the last
	     * case); fc1's 183 rows beside 146, the last panel inside an
	     * N-panel */
	    {GEMM_F8, 37, 16, 48, 64, 5, 4},
	    {GEMM_F8, 183, 146, 32, 128, 7, 1},
	    {GEMM_F8, 40, 21, 32, 64, 4, 0},
	    {GEMM_F8, 40, 21, 48, 64, 5, 2},
	};
	/* the chained five-worker panels' bounds: 3 rows a worker, A's
	 * jump 4 (bm - n) + 1 within two 10-bit fields (bm 318: workers
	 * of 63 rows jump 1,021 atoms; 319: 1,025), two K-panels */
	assert_int_equal(gemm_five_chained(GEMM_F8, 14, 64), 0);
	assert_int_equal(gemm_five_chained(GEMM_F8, 15, 64), 1);
	assert_int_equal(gemm_five_chained(GEMM_F8, 318, 64), 1);
	assert_int_equal(gemm_five_chained(GEMM_F8, 319, 64), 0);
	assert_int_equal(gemm_five_chained(GEMM_F8, 100, 32), 0);
	assert_int_equal(gemm_five_chained(GEMM_F16, 318, 32), 1);
	assert_int_equal(gemm_five_chained(GEMM_F16, 319, 32), 0);
	assert_int_equal(gemm_five_chained(GEMM_F32, 100, 64), 0);
	/* f16's chained panels never end on an N-panel's first K-panel (its
	 * cold-and-drain stream would be in gemm.S, f32's programs' too):
	 * bk 64 is 4 K-panels of 16, so not after 1, 5, 9 panels */
	GemmCall f16c = {.t = GEMM_F16, .bm = 100, .bn = 48, .bk = 64};
	for (uint32_t P = 1; P <= 12; P++)
		assert_int_equal(gemm_five_count(&f16c, P), P % 4 != 1);
	f16c.opt.plain5 = 1;
	assert_int_equal(gemm_five_count(&f16c, 5), 1);
	GemmCall f8c = {.t = GEMM_F8, .bm = 100, .bn = 48, .bk = 128};
	assert_int_equal(gemm_five_count(&f8c, 5), 1);
	unsigned phases = 0;
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		Overlap o = {.chip = profile_chip((TimingBound)(i % 3)),
		             .t = (GemmDtype)s[i][0],
		             .bm = {s[i][1], s[i][2]},
		             .bn = s[i][3],
		             .bk = s[i][4],
		             .five = s[i][5],
		             .delay = s[i][6],
		             .zero = i % 2 == 1};
		unsigned ph = run_overlap(&o);
		print_message("phases 0x%x\n", ph);
		phases |= ph;
	}
	/* the blocks met every phase */
	assert_int_equal(phases, 0x3f);
}

/* Piece three: the exchange between the blocks; the words land and the
 * GEMM's results and cycles are as without it. */
static void
test_overlap_exchange(void **state)
{
	(void)state;
	Overlap o = {.chip = chip_default(),
	             .t = GEMM_F16,
	             .bm = {40, 37},
	             .bn = 32,
	             .bk = 64,
	             .five = 6,
	             .xfers = 1};
	run_overlap(&o);
	o.zero = 1;
	o.five = 3;
	o.bm[1] = 33;
	run_overlap(&o);
	/* the sends up to the windows' ends: the last cycles before a
	 * worker on tile 1 (fewer rows) exits */
	o.late = 1;
	run_overlap(&o);
	o.late = 0;
	/* a send off the slot-5 grid, and one in the window of block 1 */
	o.refused = "(a send) is not at a multiple of 6";
	o.send_at = 37;
	run_overlap(&o);
	GemmWindows w;
	gemm_windows(o.chip, o.t, o.bm, OV_TILES, o.bk, o.five, 0, NULL, &w);
	o.refused = "is outside the panels' windows";
	o.send_at = w.close[0];
	assert_true(w.close[0] < w.open[1] && w.close[0] % 6 == 0);
	gemm_windows_free(&w);
	run_overlap(&o);
}

static void
test_layouts(void **state)
{
	(void)state;
	/* f16 B: $CWEI 1 holds K 4..7 of column 0, $CWEI 4 K 0..3 of column
	 * 1, $CWEI 32 K 0..3 of column 8 (engine 8 = set 1). */
	uint16_t bsrc[16 * 16], bp[256];
	for (int k = 0; k < 16; k++)
		for (int n = 0; n < 16; n++)
			bsrc[k * 16 + n] = (uint16_t)(k << 8 | n);
	assert_int_equal(gemm_b_bytes(GEMM_F16, 16, 16), 512);
	gemm_pack_b(GEMM_F16, 16, 16, bsrc, bp);
	assert_int_equal(bp[4 * 1 + 0], 4 << 8 | 0);
	assert_int_equal(bp[4 * 1 + 3], 7 << 8 | 0);
	assert_int_equal(bp[4 * 4 + 2], 2 << 8 | 1);
	assert_int_equal(bp[4 * 32 + 1], 1 << 8 | 8);
	assert_int_equal(bp[4 * 63 + 3], 15 << 8 | 15);
	/* f32: $CWEI 5 = K 2, 3 of column 1 */
	uint32_t fsrc[8 * 16], fp[128];
	for (int k = 0; k < 8; k++)
		for (int n = 0; n < 16; n++)
			fsrc[k * 16 + n] = (uint32_t)(k << 8 | n);
	gemm_pack_b(GEMM_F32, 8, 16, fsrc, fp);
	assert_int_equal(fp[2 * 5], 2 << 8 | 1);
	assert_int_equal(fp[2 * 5 + 1], 3 << 8 | 1);
	/* sizes, with padding */
	assert_int_equal(gemm_a_bytes(GEMM_F16, 7, 17), 2 * 7 * 32);
	assert_int_equal(gemm_a_bytes(GEMM_F8, 7, 33), 2 * 7 * 32);
	assert_int_equal(gemm_c_bytes(GEMM_F32, 7, 17), 2 * 7 * 64);
	assert_int_equal(gemm_b_bytes(GEMM_F32, 9, 17), 4 * 512);
	/* A: row 1 of K-panel 1 holds A[1][16..31] */
	uint16_t asrc[2 * 20], ap[2 * 2 * 16];
	for (int i = 0; i < 40; i++)
		asrc[i] = (uint16_t)(i + 1);
	gemm_pack_a(GEMM_F16, 2, 20, asrc, ap);
	assert_int_equal(ap[(1 * 2 + 1) * 16 + 0], 20 + 16 + 1);
	assert_int_equal(ap[(1 * 2 + 1) * 16 + 3], 20 + 19 + 1);
	assert_int_equal(ap[(1 * 2 + 1) * 16 + 4], 0);
	/* C round trip */
	uint16_t csrc[3 * 20], cp[2 * 3 * 16], cback[3 * 20];
	for (int i = 0; i < 60; i++)
		csrc[i] = (uint16_t)(i + 1);
	gemm_pack_c(2, 3, 20, csrc, cp);
	assert_int_equal(cp[(1 * 3 + 2) * 16 + 1], 2 * 20 + 17 + 1);
	gemm_unpack_c(2, 3, 20, cp, cback);
	assert_memory_equal(csrc, cback, sizeof csrc);
}

static void
test_bad_calls(void **state)
{
	(void)state;
	uint16_t x[16] = {0};
	Diag d;
	diag_clear(&d);
	assert_int_equal(gemm_tile_run(chip_by_name("gc200"), GEMM_F8, 1, 1, 1,
	                               x, x, x, NULL, NULL, &d),
	                 IPU_EINVAL);
	assert_non_null(strstr(d.msg, "ipu21"));
	assert_int_equal(gemm_tile_run(chip_default(), GEMM_F16, 0, 1, 1, x, x,
	                               x, NULL, NULL, &d),
	                 IPU_EINVAL);
	/* 2000 x 16000 f16 of A alone is 64 MB */
	uint16_t *big = calloc((size_t)2000 * 16000, 2);
	assert_int_equal(gemm_tile_run(chip_default(), GEMM_F16, 2000, 16,
	                               16000, big, big, big, NULL, NULL, &d),
	                 IPU_ERANGE);
	assert_non_null(strstr(d.msg, "does not fit"));
	free(big);
}

/*
 * The SigLIP So400m f8 tower's per-tile calls (`ipu compile --dump plan`
 * of its 1-layer graph: qkv 146 x 48 x 288, out_proj 73 x 32 x 288, fc1
 * 183 x 48 x 288, fc2 146 x 32 x 544, QK^T 146 x 48 x 72, PV 34 x 72 x
 * 182, the patch embedding's f16 73 x 32 x 160): the bits of the AMP
 * model in both modes, and the formula exact at the three profiles. A
 * further K-panel enters at the stream (its pointers moved by the
 * previous run's drain) when every worker's jumps fit 10 bits: A's is
 * 4 bm - 4 n - 3 atoms, largest for the workers with n = bm / 6 rows:
 * 509 at bm = 153 (n = 25), 513 at 154 (n = 25), 605 for fc1's 183 (n =
 * 30); never for f32 or five workers.
 *
 * The call runs primed (the last column) with two K-panels or more when
 * every worker has 2 rows or more (bm >= 12) and its jumps fit: A's four
 * jumps are bm - n atoms each, largest with n = bm / 6: 511 at bm = 613
 * (n = 102), 512 at 614 (n = 102); the partial load's -(4n + 3) is -415
 * for the 103 rows of 613's worker 0. One K-panel (146 x 48 x 32) or a
 * worker of 1 row (11 x 20 x 70) runs the call before it.
 *
 * A primed call runs chained (the seventh column) when every worker has 3
 * rows or more (bm >= 18) and A's jump, 4 (bm - n) + 1 atoms, fits two
 * fields (1,022): 1,021 at bm = 306 (n = 51), 1,025 at 307 (n = 51 for
 * workers 1-5); fc1's 183 rows 613 (n = 30). 12 and 17 rows run primed
 * but not chained, 613 too.
 *
 * A chained f8 call also chains across N-panels (the eighth column) with
 * two N-panels or more when every worker's jump to the next N-panel, the
 * same 4 (bm - n) + 1 atoms, fits one field (511): 509 at bm = 152 (n =
 * 25), 513 at 153 (n = 25 for workers 3-5); fc1's 183 rows 613. One
 * N-panel (146 x 16 x 288) runs the chained call; 18 x 100 x 64 crosses
 * six times with two K-panels an N-panel, 73 x 64 x 544 three times with
 * 17.
 */
static void
test_tower_calls(void **state)
{
	(void)state;
	static const uint32_t s[][8] = {
	    {GEMM_F8, 146, 48, 288, 1, 1, 1, 1},
	    {GEMM_F8, 73, 32, 288, 1, 1, 1, 1},
	    {GEMM_F8, 183, 48, 288, 0, 1, 1, 0},
	    {GEMM_F8, 146, 32, 544, 1, 1, 1, 1},
	    {GEMM_F8, 146, 48, 72, 1, 1, 1, 1},
	    {GEMM_F8, 34, 72, 182, 1, 1, 1, 1},
	    {GEMM_F16, 73, 32, 160, 1, 1, 1, 0},
	    {GEMM_F8, 153, 20, 70, 1, 1, 1, 0},
	    {GEMM_F8, 154, 20, 70, 0, 1, 1, 0},
	    {GEMM_F16, 5, 30, 50, 1, 0, 0, 0},
	    {GEMM_F8, 613, 20, 70, 0, 1, 0, 0},
	    {GEMM_F8, 614, 20, 70, 0, 0, 0, 0},
	    {GEMM_F8, 12, 20, 70, 1, 1, 0, 0},
	    {GEMM_F8, 11, 20, 70, 1, 0, 0, 0},
	    {GEMM_F8, 146, 48, 32, 1, 0, 0, 0},
	    {GEMM_F16, 146, 20, 40, 1, 1, 1, 0},
	    {GEMM_F8, 17, 20, 70, 1, 1, 0, 0},
	    {GEMM_F8, 18, 20, 70, 1, 1, 1, 1},
	    {GEMM_F16, 19, 36, 48, 1, 1, 1, 0},
	    {GEMM_F8, 306, 20, 70, 0, 1, 1, 0},
	    {GEMM_F8, 307, 20, 70, 0, 1, 0, 0},
	    {GEMM_F16, 306, 20, 40, 0, 1, 1, 0},
	    {GEMM_F8, 152, 20, 70, 1, 1, 1, 1},
	    {GEMM_F8, 146, 16, 288, 1, 1, 1, 0},
	    {GEMM_F8, 105, 64, 96, 1, 1, 1, 1},
	    {GEMM_F8, 41, 80, 160, 1, 1, 1, 1},
	    {GEMM_F8, 73, 64, 544, 1, 1, 1, 1},
	    {GEMM_F8, 18, 100, 64, 1, 1, 1, 1},
	};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		GemmDtype t = (GemmDtype)s[i][0];
		uint32_t bm = s[i][1], bn = s[i][2], bk = s[i][3];
		assert_int_equal(gemm_k_stream(t, 6, bm), s[i][4]);
		assert_int_equal(gemm_k_stream(t, 5, bm), 0);
		assert_int_equal(gemm_k_stream(GEMM_F32, 6, bm), 0);
		assert_int_equal(gemm_k_primed(t, 6, bm, bk), s[i][5]);
		assert_int_equal(gemm_k_primed(t, 5, bm, bk), 0);
		assert_int_equal(gemm_k_primed(GEMM_F32, 6, bm, bk), 0);
		assert_int_equal(gemm_k_chained(t, 6, bm, bk), s[i][6]);
		assert_int_equal(gemm_k_chained(t, 5, bm, bk), 0);
		assert_int_equal(
		    strstr(gemm_entry(t, 6, bm, bn, bk), "chained") != NULL,
		    s[i][6]);
		assert_int_equal(gemm_n_chained(t, 6, bm, bn, bk), s[i][7]);
		assert_int_equal(gemm_n_chained(t, 5, bm, bn, bk), 0);
		assert_int_equal(
		    strstr(gemm_entry(t, 6, bm, bn, bk), "_nchained") != NULL,
		    s[i][7]);
		for (int b = 0; b < 3; b++) {
			Case cs = {.t = t, .bm = bm, .bn = bn, .bk = bk};
			cs.chip = profile_chip((TimingBound)b);
			cs.opt.zero = b == 1;
			cs.opt.fp8_scale = b == 2 ? -2 : 0;
			uint64_t got = check(cs);
			uint64_t want =
			    gemm_tile_cycles(cs.chip, t, 6, bm, bn, bk);
			if (got != want)
				fail_msg("%s %ux%ux%u at %s: %llu cycles, "
				         "formula %llu",
				         gemm_dtype_name(t), bm, bn, bk,
				         cs.chip->timing->spec,
				         (unsigned long long)got,
				         (unsigned long long)want);
		}
	}
}

/* The primed calls of the So400m f8 1-layer plan (`ipu compile --dump
 * plan`: C blocks and K of qkv, QK^T, PV, out_proj, fc1, fc2), in both
 * modes and twice back to back: C against the model, and (gemm_tile_run)
 * every byte outside C unchanged. */
static void
test_layer_calls(void **state)
{
	(void)state;
	static const uint32_t s[][3] = {{73, 48, 576},  {146, 48, 96},
	                                {34, 80, 192},  {73, 32, 288},
	                                {183, 48, 288}, {146, 32, 544}};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
		for (int zero = 0; zero < 2; zero++) {
			assert_int_equal(
			    gemm_k_primed(GEMM_F8, 6, s[i][0], s[i][2]), 1);
			Case cs = {.t = GEMM_F8,
			           .bm = s[i][0],
			           .bn = s[i][1],
			           .bk = s[i][2]};
			cs.opt.zero = zero;
			cs.opt.calls = 2;
			check(cs);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layouts),
	    cmocka_unit_test(test_five_workers),
	    cmocka_unit_test(test_overlap_blocks),
	    cmocka_unit_test(test_overlap_exchange),
	    cmocka_unit_test(test_f16),
	    cmocka_unit_test(test_f32),
	    cmocka_unit_test(test_f8),
	    cmocka_unit_test(test_repeated_calls),
	    cmocka_unit_test(test_cycle_formula),
	    cmocka_unit_test(test_tower_calls),
	    cmocka_unit_test(test_layer_calls),
	    cmocka_unit_test(test_bad_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

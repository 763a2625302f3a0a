/*
 * test_exec_float.c - the floating-point, accumulator and random
 * instructions (src/sim/exec_float.c, exec_acc.c, exec_rand.c). Each case
 * runs real instruction words as worker 0 (then `exitz $mzero`) with the
 * worker's registers and CSR state preset, and checks result registers
 * bit for bit. Expected values are worked out by hand in the comments
 * (f16: 1.0 = 0x3c00, 2.0 = 0x4000, 0.5 = 0x3800; f32: 1.0 = 0x3f800000).
 * Statistical checks of the PRNG and stochastic rounding re-run one tile
 * thousands of times.
 */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/util/fp.h"

#define F1 0x3f800000u /* 1.0f */
#define F2 0x40000000u /* 2.0f */
#define CTL_RND(m) ((uint32_t)(m) << 16)
#define CTL_ESR (1u << 19)
#define CTL_NANOO (1u << 20)

typedef struct {
	Context c;        /* preset in, full state out */
	RunStatus status; /* out */
	FaultType fault;  /* out, when status == RUN_FAULT */
	char why[512];    /* out: the fault, formatted */
} Run;

static void
init(Run *r)
{
	memset(r, 0, sizeof *r);
	for (int i = 0; i < 16; i++)
		r->c.a[i] = r->c.m[i] = POISON;
}

/* Run the words then exitz as worker 0 with the worker state from r->c. */
static void
run(const uint32_t *words, int n, Run *r)
{
	Tile *t = worker_tile(words, n);
	Context *x = &t->ctx[1];
	memcpy(x->a, r->c.a, sizeof x->a);
	memcpy(x->aacc, r->c.aacc, sizeof x->aacc);
	x->fp_ctl = r->c.fp_ctl;
	x->fp_sts = r->c.fp_sts;
	x->fp_nfmt = r->c.fp_nfmt;
	x->fp_scl = r->c.fp_scl;
	x->tas = r->c.tas;
	x->prng[0] = r->c.prng[0];
	x->prng[1] = r->c.prng[1];
	r->status = tile_run(t, 10000);
	r->fault = t->fault.type;
	if (r->status == RUN_FAULT)
		tile_format_fault(t, r->why, sizeof r->why);
	r->c = *x;
	tile_free(t);
}

static void
run1(uint32_t word, Run *r)
{
	run(&word, 1, r);
	if (r->status != RUN_DONE)
		fail_msg("run status %d: %s", r->status, r->why);
}

/* "variant dst, src0, src1" on ARF registers. */
static uint32_t
w3(const char *v, int d, int s0, int s1)
{
	return enc(v, 3, d, s0, s1);
}

static uint32_t
w2(const char *v, int d, int s)
{
	return enc(v, 2, d, s);
}

static uint32_t
h2(uint16_t lo, uint16_t hi)
{
	return (uint32_t)hi << 16 | lo;
}

/* f32 arithmetic. */

static void
test_f32_arith(void **state)
{
	(void)state;
	Run r;
	init(&r);
	r.c.a[0] = 0x3fc00000u; /* 1.5 */
	r.c.a[1] = 0x40100000u; /* 2.25 */
	run1(w3("f32add_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0x40700000u); /* 3.75 */
	run1(w3("f32sub_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0xbf400000u); /* -0.75 */
	run1(w3("f32mul_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0x40580000u); /* 3.375 */
	run1(w3("f32div_aaan", 2, 1, 0), &r);
	assert_int_equal(r.c.a[2], 0x3fc00000u); /* 1.5 */
	assert_int_equal(r.c.fp_sts, 0);
	/* 1/3 rounds to nearest even: 0x3eaaaaab */
	r.c.a[0] = F1;
	r.c.a[1] = 0x40400000u;
	run1(w3("f32div_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0x3eaaaaabu);
	/* f32v2 with :B broadcast of $a4 */
	r.c.a[4] = F2;
	r.c.a[6] = F1;
	r.c.a[7] = 0x40400000u; /* 3.0 */
	run1(w3("f32v2mul_aaat", 2, 4, 6), &r);
	assert_int_equal(r.c.a[2], F2);
	assert_int_equal(r.c.a[3], 0x40c00000u); /* 6.0 */
	run1(w3("f32v2sub_aaan", 8, 6, 4), &r);  /* (1-2, 3-x) */
	assert_int_equal(r.c.a[8], 0xbf800000u);
	assert_int_equal(r.c.a[9], fp_float_f32(3.0f - fp_f32_float(r.c.a[5])));
}

static void
test_f32_flags_and_traps(void **state)
{
	(void)state;
	Run r;
	init(&r);
	r.c.a[0] = F1;
	r.c.a[1] = 0;
	run1(w3("f32div_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0x7f800000u);
	assert_int_equal(r.c.fp_sts, FP_FLAG_DIV0);
	/* 0/0: INV, canonical NaN */
	r.c.a[0] = 0;
	run1(w3("f32div_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], FP32_QNAN);
	assert_int_equal(r.c.fp_sts, FP_FLAG_DIV0 | FP_FLAG_INV);
	/* trap enabled: FP exception, destination untouched */
	init(&r);
	r.c.a[0] = F1;
	r.c.a[1] = 0;
	r.c.fp_ctl = FP_FLAG_DIV0;
	uint32_t w = w3("f32div_aaan", 2, 0, 1);
	run(&w, 1, &r);
	assert_int_equal(r.status, RUN_FAULT);
	assert_int_equal(r.fault, FAULT_FP);
	assert_int_equal(r.c.a[2], POISON);
	assert_int_equal(r.c.fp_sts, FP_FLAG_DIV0);
	/* overflow */
	init(&r);
	r.c.a[0] = 0x7f7fffffu;
	r.c.a[1] = F2;
	run1(w3("f32mul_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0x7f800000u);
	assert_int_equal(r.c.fp_sts, FP_FLAG_OFLO);
}

static void
test_f32_minmax_cmp(void **state)
{
	(void)state;
	Run r;
	init(&r);
	r.c.a[0] = 0xc0400000u; /* -3 */
	r.c.a[1] = F2;
	run1(w3("f32min_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0xc0400000u);
	run1(w3("f32max_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], F2);
	run1(w3("f32absmax_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0x40400000u); /* |-3| */
	run1(w3("f32absadd_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0x40a00000u); /* 5 */
	run1(w3("f32cmplt_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0xffffffffu);
	run1(w3("f32cmpge_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0);
	/* a quiet NaN loses min/max; eq is quiet, lt signals INV */
	r.c.a[3] = FP32_QNAN;
	run1(w3("f32max_aaan", 2, 3, 1), &r);
	assert_int_equal(r.c.a[2], F2);
	run1(w3("f32cmpne_aaan", 2, 3, 3), &r);
	assert_int_equal(r.c.a[2], 0xffffffffu);
	assert_int_equal(r.c.fp_sts, 0);
	run1(w3("f32cmplt_aaan", 2, 3, 1), &r);
	assert_int_equal(r.c.a[2], 0);
	assert_int_equal(r.c.fp_sts, FP_FLAG_INV);
	/* clamp: limits (-1, 1) in a pair */
	init(&r);
	r.c.a[0] = 0xc0400000u;
	r.c.a[4] = 0xbf800000u;
	r.c.a[5] = F1;
	run1(w3("f32clamp_aaan", 2, 0, 4), &r);
	assert_int_equal(r.c.a[2], 0xbf800000u);
	r.c.a[6] = 0x3f000000u; /* 0.5 */
	r.c.a[7] = 0x41200000u; /* 10 */
	run1(w3("f32v2clamp_aaan", 2, 6, 4), &r);
	assert_int_equal(r.c.a[2], 0x3f000000u);
	assert_int_equal(r.c.a[3], F1);
	/* f32v2cmpeq with :B */
	r.c.a[8] = 0x3f000000u;
	run1(w3("f32v2cmpeq_aaat", 0, 8, 6), &r);
	assert_int_equal(r.c.a[0], 0xffffffffu);
	assert_int_equal(r.c.a[1], 0);
	/* min of -0 and +0 is -0 either way round */
	r.c.a[10] = 0x80000000u;
	r.c.a[11] = 0;
	run1(w3("f32min_aaan", 2, 11, 10), &r);
	assert_int_equal(r.c.a[2], 0x80000000u);
	run1(w3("f32max_aaan", 2, 10, 11), &r);
	assert_int_equal(r.c.a[2], 0);
}

static void
test_f16_arith(void **state)
{
	(void)state;
	Run r;
	init(&r);
	r.c.a[0] = h2(0x3c00, 0x4000); /* (1, 2) */
	r.c.a[1] = h2(0x3800, 0xc000); /* (0.5, -2) */
	run1(w3("f16v2add_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], h2(0x3e00, 0x0000)); /* (1.5, 0) */
	run1(w3("f16v2sub_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], h2(0x3800, 0x4400)); /* (0.5, 4) */
	run1(w3("f16v2mul_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], h2(0x3800, 0xc400)); /* (0.5, -4) */
	/* :BL / :BU broadcast the low / high half of the first source */
	run1(w3("f16v2add_aaal", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], h2(0x3e00, 0xbc00)); /* 1+.5, 1-2 */
	run1(w3("f16v2add_aaau", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], h2(0x4100, 0x0000)); /* 2+.5, 2-2 */
	/* f16v4 on pairs */
	r.c.a[4] = h2(0x3c00, 0x4000);
	r.c.a[5] = h2(0x4200, 0x4400); /* (1, 2, 3, 4) */
	r.c.a[6] = h2(0x4000, 0x4000);
	r.c.a[7] = h2(0x3800, 0xbc00); /* (2, 2, .5, -1) */
	run1(w3("f16v4mul_aaan", 8, 4, 6), &r);
	assert_int_equal(r.c.a[8], h2(0x4000, 0x4400)); /* 2, 4 */
	assert_int_equal(r.c.a[9], h2(0x3e00, 0xc400)); /* 1.5, -4 */
	run1(w3("f16v4sub_aaau", 8, 4, 6), &r);         /* 2 - y */
	assert_int_equal(r.c.a[8], h2(0x0000, 0x0000));
	assert_int_equal(r.c.a[9], h2(0x3e00, 0x4200)); /* 1.5, 3 */
	/* 1 + 2^-11 ties to even: 1.0 */
	r.c.a[0] = h2(0x3c00, 0x3c00);
	r.c.a[1] = h2(0x1000, 0x1000); /* 2^-11 */
	run1(w3("f16v2add_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], h2(0x3c00, 0x3c00));
	/* RND = toward +inf (1): 0x3c01 */
	r.c.fp_ctl = CTL_RND(FP_RUP);
	run1(w3("f16v2add_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], h2(0x3c01, 0x3c01));
	assert_int_equal(r.c.fp_sts, 0);
}

static void
test_f16_overflow(void **state)
{
	(void)state;
	Run r;
	init(&r);
	r.c.a[0] = h2(0x7bff, 0xfbff); /* (65504, -65504) */
	run1(w3("f16v2add_aaan", 2, 0, 0), &r);
	assert_int_equal(r.c.a[2], h2(0x7bff, 0xfbff)); /* saturated */
	assert_int_equal(r.c.fp_sts, FP_FLAG_OFLO);
	r.c.fp_ctl = CTL_NANOO;
	r.c.fp_sts = 0;
	run1(w3("f16v2add_aaan", 2, 0, 0), &r);
	assert_int_equal(r.c.a[2], h2(0x7e00, 0x7e00));
	assert_int_equal(r.c.fp_sts, FP_FLAG_OFLO);
	/* infinities are not overflows */
	r.c.fp_sts = 0;
	r.c.a[1] = h2(0x7c00, 0x3c00);
	run1(w3("f16v2add_aaan", 2, 1, 1), &r);
	assert_int_equal(r.c.a[2], h2(0x7c00, 0x4000));
	assert_int_equal(r.c.fp_sts, 0);
	/* inf - inf */
	run1(w3("f16v2sub_aaan", 2, 1, 1), &r);
	assert_int_equal(r.c.a[2], h2(0x7e00, 0x0000));
	assert_int_equal(r.c.fp_sts, FP_FLAG_INV);
	/* OFLO trap */
	init(&r);
	r.c.a[0] = h2(0x7bff, 0);
	r.c.fp_ctl = FP_FLAG_OFLO;
	uint32_t w = w3("f16v2add_aaan", 2, 0, 0);
	run(&w, 1, &r);
	assert_int_equal(r.status, RUN_FAULT);
	assert_int_equal(r.fault, FAULT_FP);
	assert_int_equal(r.c.a[2], POISON);
}

static void
test_f16_minmax_cmp_class(void **state)
{
	(void)state;
	Run r;
	init(&r);
	r.c.a[0] = h2(0xc200, 0x3800); /* (-3, 0.5) */
	r.c.a[1] = h2(0x4000, 0x7e00); /* (2, NaN) */
	run1(w3("f16v2max_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], h2(0x4000, 0x3800));
	run1(w3("f16v2min_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], h2(0xc200, 0x3800));
	run1(w3("f16v2absmax_aaan", 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], h2(0x4200, 0x3800));
	run1(w3("f16v2absadd_aaan", 2, 0, 0), &r);
	assert_int_equal(r.c.a[2], h2(0x4600, 0x3c00)); /* 6, 1 */
	run1(w3("f16v2cmpeq_aaan", 2, 0, 0), &r);
	assert_int_equal(r.c.a[2], 0xffffffffu);
	run1(w3("f16v2cmpgt_aaan", 2, 1, 0), &r);
	assert_int_equal(r.c.a[2], h2(0xffff, 0));
	assert_int_equal(r.c.fp_sts, FP_FLAG_INV); /* NaN in a gt */
	/* clamp to (lo, hi) = (-1, 1) from one register */
	r.c.a[3] = h2(0xbc00, 0x3c00);
	run1(w3("f16v2clamp_aaan", 2, 0, 3), &r);
	assert_int_equal(r.c.a[2], h2(0xbc00, 0x3800));
	r.c.a[4] = h2(0x4000, 0xc000);
	r.c.a[5] = h2(0x0000, 0x3400);
	run1(w3("f16v4clamp_aaan", 6, 4, 3), &r);
	assert_int_equal(r.c.a[6], h2(0x3c00, 0xbc00));
	assert_int_equal(r.c.a[7], h2(0x0000, 0x3400));
	/* maxc: lateral */
	run1(w2("f16v4maxc_aaan", 2, 4), &r);
	assert_int_equal(r.c.a[2], h2(0x4000, 0x3400));
	run1(w2("f16v2maxc_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], h2(0x3800, 0x3800));
	/* class: one code per byte */
	r.c.a[0] = h2(0x7c01, 0x8000); /* sNaN, -0 */
	run1(w2("f16v2class_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], FP_CLASS_SNAN | FP_CLASS_NEG_ZERO << 8);
	r.c.a[4] = h2(0x0001, 0xfc00);
	r.c.a[5] = h2(0x3c00, 0x7e00);
	run1(w2("f16v4class_aaan", 2, 4), &r);
	assert_int_equal(r.c.a[2], FP_CLASS_POS_SUBNORMAL |
	                               FP_CLASS_NEG_INF << 8 |
	                               FP_CLASS_POS_NORMAL << 16 |
	                               (uint32_t)FP_CLASS_QNAN << 24);
	r.c.a[6] = 0x80000001u;
	r.c.a[7] = 0x7f800000u;
	run1(w2("f32v2class_aaan", 2, 6), &r);
	assert_int_equal(r.c.a[2],
	                 FP_CLASS_NEG_SUBNORMAL | FP_CLASS_POS_INF << 8);
	run1(w2("f32class_aaan", 2, 7), &r);
	assert_int_equal(r.c.a[2], FP_CLASS_POS_INF);
	/* lateral sums to f32 */
	r.c.a[4] = h2(0x3c00, 0x4000);
	r.c.a[5] = h2(0x7bff, 0x7bff);
	run1(w2("f16v2sum_aaan", 2, 4), &r);
	assert_int_equal(r.c.a[2], 0x40400000u); /* 3 */
	run1(w2("f16v4sum_aaan", 2, 4), &r);
	assert_int_equal(r.c.a[2], 0x40400000u);
	assert_int_equal(r.c.a[3], 0x47ffe000u); /* 131008, no overflow */
}

static void
test_transcendental(void **state)
{
	(void)state;
	Run r;
	init(&r);
	r.c.a[0] = F1;
	r.c.a[1] = 0x40800000u; /* 4 */
	r.c.a[3] = 0;
	run1(w2("f32exp_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], 0x402df854u); /* e */
	run1(w2("f32exp2_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], F2);
	run1(w2("f32ln_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], 0);
	run1(w2("f32log2_aaan", 2, 1), &r);
	assert_int_equal(r.c.a[2], F2);
	run1(w2("f32sqrt_aaan", 2, 1), &r);
	assert_int_equal(r.c.a[2], F2);
	run1(w2("f32oox_aaan", 2, 1), &r);
	assert_int_equal(r.c.a[2], 0x3e800000u); /* 0.25 */
	run1(w2("f32oorx_aaan", 2, 1), &r);
	assert_int_equal(r.c.a[2], 0x3f000000u); /* 0.5 */
	run1(w2("f32sigm_aaan", 2, 3), &r);
	assert_int_equal(r.c.a[2], 0x3f000000u);
	run1(w2("f32tanh_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], 0x3f42f7d6u); /* tanh 1 = 0.7615942 */
	r.c.a[4] = F2;
	run1(w2("f32sqrt_aaan", 2, 4), &r);
	assert_int_equal(r.c.a[2], 0x3fb504f3u);
	assert_int_equal(r.c.fp_sts, 0);
	run1(w2("f32ln_aaan", 2, 3), &r);
	assert_int_equal(r.c.a[2], 0xff800000u);
	assert_int_equal(r.c.fp_sts, FP_FLAG_DIV0);
	r.c.fp_sts = 0;
	r.c.a[5] = 0x42c80000u; /* 100: e^100 overflows f32 */
	run1(w2("f32exp_aaan", 2, 5), &r);
	assert_int_equal(r.c.a[2], 0x7f800000u);
	assert_int_equal(r.c.fp_sts, FP_FLAG_OFLO);
	r.c.fp_sts = 0;
	/* f16 pairs */
	r.c.a[6] = h2(0x0000, 0x3c00); /* (0, 1) */
	run1(w2("f16v2exp_aaan", 2, 6), &r);
	assert_int_equal(r.c.a[2], h2(0x3c00, 0x4170)); /* 1, e = 2.7188 */
	run1(w2("f16v2exp2_aaan", 2, 6), &r);
	assert_int_equal(r.c.a[2], h2(0x3c00, 0x4000));
	run1(w2("f16v2tanh_aaan", 2, 6), &r);
	assert_int_equal(r.c.a[2], h2(0x0000, 0x3a18)); /* 0.76147 */
	run1(w2("f16v2sigm_aaan", 2, 6), &r);
	assert_int_equal(r.c.a[2], h2(0x3800, 0x39d9)); /* 0.7310586 */
	assert_int_equal(r.c.fp_sts, 0);
	run1(w2("f16v2ln_aaan", 2, 6), &r);
	assert_int_equal(r.c.a[2], h2(0xfc00, 0x0000));
	assert_int_equal(r.c.fp_sts, FP_FLAG_DIV0);
	run1(w2("f16v2log2_aaan", 2, 6), &r);
	assert_int_equal(r.c.a[2], h2(0xfc00, 0x0000));
}

/* f32v4tof16 on random words (with NaNs, infinities, f16's subnormal and
 * overflow ranges) at each rounding and overflow control against
 * fp_f32_to_f16 lane by lane: the halves and the flags. */
static void
test_f32_to_f16_random(void **state)
{
	(void)state;
	static const uint32_t ctl[] = {0, CTL_NANOO, CTL_RND(FP_RUP),
	                               CTL_RND(FP_RTZ) | CTL_NANOO};
	static const uint32_t edge[] = {
	    0x7f800001u, 0xffc00000u, 0x7f800000u, 0xff800000u, 0x477ff000u,
	    0x477fefffu, 0xc7800000u, 0x33000000u, 0x33000001u, 0x387fc000u,
	    0x80000001u, 0x00000000u, 0x80000000u, 0x38800000u};
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 4000; i++) {
		Run r;
		init(&r);
		r.c.fp_ctl = ctl[i % 4];
		uint32_t x[4];
		for (int k = 0; k < 4; k++) {
			seed = seed * 6364136223846793005ull +
			       1442695040888963407ull;
			uint32_t w = (uint32_t)(seed >> 32);
			/* every third lane near f16's range: exponent 100..150
			 */
			if (k % 3 == 1)
				w = (w & 0x807fffffu) | (100u + w % 51) << 23;
			x[k] = i % 7 == 0 ? edge[(i / 7 + k) % 14] : w;
			r.c.a[4 + k] = x[k];
		}
		run1(w2("f32v4tof16_aaan", 8, 4), &r);
		FpRound mode = i % 4 == 2   ? FP_RUP
		               : i % 4 == 3 ? FP_RTZ
		                            : FP_RNE;
		FpOverflow ov =
		    i % 4 == 1 || i % 4 == 3 ? FP_OV_NAN : FP_OV_SAT;
		unsigned flags = 0;
		uint16_t h[4];
		for (int k = 0; k < 4; k++)
			h[k] = fp_f32_to_f16(x[k], mode, 0, ov, &flags);
		assert_int_equal(r.c.a[8], h2(h[0], h[1]));
		assert_int_equal(r.c.a[9], h2(h[2], h[3]));
		assert_int_equal(r.c.fp_sts, flags & 7);
	}
}

static void
test_conversions(void **state)
{
	(void)state;
	Run r;
	init(&r);
	r.c.a[0] = 0x3eaaaaabu; /* 1/3 */
	r.c.a[1] = 0x477fe000u; /* 65504 */
	run1(w2("f32tof16_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], h2(0x3555, 0x3555));
	r.c.fp_ctl = CTL_RND(FP_RUP);
	run1(w2("f32tof16_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], h2(0x3556, 0x3556));
	r.c.fp_ctl = 0;
	run1(w2("f32v2tof16_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], h2(0x3555, 0x7bff));
	r.c.a[4] = F1;
	r.c.a[5] = 0xbf000000u;
	r.c.a[6] = 0x00000001u; /* tiny: 0 */
	r.c.a[7] = 0x47800000u; /* 65536: overflow, saturates */
	run1(w2("f32v4tof16_aaan", 8, 4), &r);
	assert_int_equal(r.c.a[8], h2(0x3c00, 0xb800));
	assert_int_equal(r.c.a[9], h2(0x0000, 0x7bff));
	assert_int_equal(r.c.fp_sts, FP_FLAG_OFLO);
	r.c.a[10] = h2(0xb800, 0x0001);
	run1(w2("f16tof32_aaan", 2, 10), &r);
	assert_int_equal(r.c.a[2], 0xbf000000u);
	run1(w2("f16v2tof32_aaan", 2, 10), &r);
	assert_int_equal(r.c.a[2], 0xbf000000u);
	assert_int_equal(r.c.a[3], 0x33800000u); /* 2^-24 */
	/* integers: RND per $FP_CTL */
	init(&r);
	r.c.a[0] = 0x40200000u; /* 2.5 */
	r.c.a[1] = 0xc0200000u; /* -2.5 */
	run1(w2("f32toi32_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], 2);
	r.c.fp_ctl = CTL_RND(FP_RUP);
	run1(w2("f32toi32_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], 3);
	r.c.fp_ctl = CTL_RND(FP_RDN);
	run1(w2("f32toi32_aaan", 2, 1), &r);
	assert_int_equal(r.c.a[2], (uint32_t)-3);
	r.c.fp_ctl = CTL_RND(FP_RTZ);
	run1(w2("f32toi32_aaan", 2, 1), &r);
	assert_int_equal(r.c.a[2], (uint32_t)-2);
	run1(w2("f32toui32_aaan", 2, 1), &r);
	assert_int_equal(r.c.a[2], 0);
	assert_int_equal(r.c.fp_sts, FP_FLAG_INV);
	r.c.fp_ctl = 0;
	r.c.a[3] = (uint32_t)-7;
	run1(w2("f32fromi32_aaan", 2, 3), &r);
	assert_int_equal(r.c.a[2], 0xc0e00000u);
	run1(w2("f32fromui32_aaan", 2, 3), &r);
	assert_int_equal(r.c.a[2], 0x4f800000u); /* 4294967289 -> 2^32 */
	/* f32int: imm 4 = nearest, ties away; 3 = toward zero */
	run1(enc("f32int_aaan_ef", 3, 2, 0, 4), &r);
	assert_int_equal(r.c.a[2], 0x40400000u);
	run1(enc("f32int_aaan_ef", 3, 2, 1, 0), &r);
	assert_int_equal(r.c.a[2], 0xc0000000u);
	run1(enc("f32int_aaan_ef", 3, 2, 1, 2), &r);
	assert_int_equal(r.c.a[2], 0xc0400000u);
	run1(enc("f32int_aaan_ef", 3, 2, 0, 1), &r);
	assert_int_equal(r.c.a[2], 0x40400000u);
	uint32_t w = enc("f32int_aaan_ef", 3, 2, 0, 9);
	run(&w, 1, &r);
	assert_int_equal(r.status, RUN_FAULT);
	assert_int_equal(r.fault, FAULT_INVALID_OP);
}

static void
test_fp8(void **state)
{
	(void)state;
	Run r;
	init(&r);
	/* F143 (ARF_FMT = 0): 0x56 = 7, 0x58 = 8 */
	r.c.a[0] = 0x80ff5856u; /* bytes 56 58 ff 80 */
	run1(w2("f8v2tof16_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], h2(0x4700, 0x4800));
	run1(w2("f8v4tof16_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], h2(0x4700, 0x4800));
	assert_int_equal(r.c.a[3], h2(0xdb80, 0x7e00)); /* -240, NaN */
	/* scale -1 (6-bit field 0x3f) halves */
	r.c.fp_scl = 0x3f;
	run1(w2("f8v2tof16_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], h2(0x4300, 0x4400)); /* 3.5, 4 */
	/* F152 (ARF_FMT bit 1): 0x56 = 0 10101 10 = 1.5 * 2^5 = 48 */
	r.c.fp_scl = 0;
	r.c.fp_nfmt = 2;
	run1(w2("f8v2tof16_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], h2(0x5200, 0x5400)); /* 48, 64 */
	/* f16 -> F143 */
	init(&r);
	r.c.a[0] = h2(0x4700, 0x8001); /* 7, -tiny -> 0x00 */
	r.c.a[1] = h2(0x5cb0, 0x3c00); /* 300 (overflow), 1 */
	run1(w2("f16v2tof8_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], 0x0056);
	r.c.a[4] = r.c.a[0];
	r.c.a[5] = r.c.a[1];
	r.c.a[6] = h2(0x4800, 0xc700); /* 8, -7 */
	r.c.a[7] = h2(0x7e00, 0x3400); /* NaN, 0.25 */
	run1(w2("f16v8tof8_aaan", 2, 4), &r);
	assert_int_equal(r.c.a[2], 0x407f0056u); /* 1 = 0x40, 300 -> 0x7f */
	assert_int_equal(r.c.a[3], 0x3080d658u); /* 0.25 = 0 0110 000 */
	assert_int_equal(r.c.fp_sts, FP_FLAG_OFLO);
	r.c.fp_ctl = CTL_NANOO;
	run1(w2("f16v8tof8_aaan", 2, 4), &r);
	assert_int_equal(r.c.a[2], 0x40800056u);
	/* scale 2: 28 is written as 7 */
	r.c.fp_scl = 2;
	r.c.a[0] = h2(0x4f00, 0x4f00);
	run1(w2("f16v2tof8_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], 0x5656);
	/* class */
	r.c.a[0] = 0x80870100u;
	run1(w2("f8v4class_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], FP_CLASS_POS_ZERO |
	                               FP_CLASS_POS_SUBNORMAL << 8 |
	                               FP_CLASS_NEG_SUBNORMAL << 16 |
	                               (uint32_t)FP_CLASS_QNAN << 24);
}

static void
test_accumulate_and_gina(void **state)
{
	(void)state;
	Run r;
	init(&r);
	/* f16v8acc twice: AACC[2i] = 2 * x_i, then four f32v2gina read
	 * (0,2), (4,6), (8,10), (12,14) */
	r.c.a[0] = h2(0x3c00, 0x4000);
	r.c.a[1] = h2(0x4200, 0x4400);
	r.c.a[2] = h2(0x4500, 0x4600);
	r.c.a[3] = h2(0x4700, 0x4800); /* 1..8 */
	uint32_t acc = enc("f16v8acc_aaan", 1, 0);
	uint32_t prog[] = {acc,
	                   acc,
	                   enc("f32v2gina_aaan_zi", 3, 4, 14, 0),
	                   enc("f32v2gina_aaan_zi", 3, 6, 14, 0),
	                   enc("f32v2gina_aaan_zi", 3, 8, 14, 0),
	                   enc("f32v2gina_aaan_zi", 3, 10, 14, 0)};
	run(prog, 6, &r);
	assert_int_equal(r.status, RUN_DONE);
	for (int i = 0; i < 8; i++)
		assert_int_equal(r.c.a[4 + i],
		                 fp_float_f32(2.0f * (float)(i + 1)));
	for (int i = 0; i < 32; i++)
		assert_int_equal(r.c.aacc[i], 0); /* drained, zeros in */
	/* gina writes its input into the tail: 4 ginas later it comes out */
	init(&r);
	r.c.a[0] = F1;
	r.c.a[1] = F2;
	for (int i = 0; i < 32; i++)
		r.c.aacc[i] = (uint32_t)i;
	uint32_t g[] = {enc("f32v2gina_aaan_zi", 3, 2, 0, 1),
	                enc("f32v2gina_aaan_zi", 3, 4, 14, 1),
	                enc("f32v2gina_aaan_zi", 3, 6, 14, 1),
	                enc("f32v2gina_aaan_zi", 3, 8, 14, 1),
	                enc("f32v2gina_aaan_zi", 3, 10, 14, 3),
	                enc("f32v2gina_aaan_zi", 3, 12, 14, 1)};
	run(g, 6, &r);
	assert_int_equal(r.c.a[2], 1); /* odd queue: 1, 3 */
	assert_int_equal(r.c.a[3], 3);
	assert_int_equal(r.c.a[6], 9);
	assert_int_equal(r.c.a[7], 11);
	assert_int_equal(r.c.a[8], 13);
	assert_int_equal(r.c.a[9], 15);
	assert_int_equal(r.c.a[12], F1); /* our input came round */
	assert_int_equal(r.c.a[13], F2);
	assert_int_equal(r.c.a[10], 17); /* second set, odd: 17, 19 */
	assert_int_equal(r.c.a[11], 19);
	assert_int_equal(r.c.aacc[0], 0); /* even queue untouched */
	/* f32v4sqacc, f32v4absacc into AACC[0,2,4,6] */
	init(&r);
	r.c.a[0] = 0xc0400000u; /* -3 */
	r.c.a[1] = F2;
	r.c.a[2] = 0x3f000000u;
	r.c.a[3] = F1;
	r.c.aacc[6] = F1;
	uint32_t sq[] = {enc("f32v4sqacc_aaan", 1, 0),
	                 enc("f32v4absacc_aaan", 1, 0)};
	run(sq, 2, &r);
	assert_int_equal(r.c.aacc[0], 0x41400000u); /* 9 + 3 */
	assert_int_equal(r.c.aacc[2], 0x40c00000u); /* 4 + 2 */
	assert_int_equal(r.c.aacc[4], 0x3f400000u); /* .25 + .5 */
	assert_int_equal(r.c.aacc[6], 0x40400000u); /* 1 + 1 + 1 */
	/* f16v4acc / f16v4absacc / f16v8sqacc then f16v4gacc */
	init(&r);
	r.c.a[0] = h2(0xbc00, 0x4000);
	r.c.a[1] = h2(0x3800, 0x0000);
	r.c.a[2] = 0;
	r.c.a[3] = 0;
	uint32_t hv[] = {
	    enc("f16v4acc_aaan", 1, 0), enc("f16v4absacc_aaan", 1, 0),
	    enc("f16v8sqacc_aaan", 1, 0), enc("f16v4gacc_aaan", 1, 4)};
	run(hv, 4, &r);
	/* -1+1+1 = 1, 2+2+4 = 8, .5+.5+.25 = 1.25, 0 */
	assert_int_equal(r.c.a[4], h2(0x3c00, 0x4800));
	assert_int_equal(r.c.a[5], h2(0x3d00, 0x0000));
	assert_int_equal(r.c.aacc[2], 0x41000000u); /* gacc leaves state */
}

static void
test_mac(void **state)
{
	(void)state;
	Run r;
	init(&r);
	/* dot product (1,2).(3,4) twice with f32v2mac, drained by gina */
	r.c.a[0] = F1;
	r.c.a[1] = F2;
	r.c.a[2] = 0x40400000u;
	r.c.a[3] = 0x40800000u;
	uint32_t p[] = {
	    enc("f32v2mac_aaan", 2, 0, 2), enc("f32v2mac_aaan", 2, 0, 2),
	    enc("f32mac_aaan", 2, 1, 1), enc("f32v2gina_aaan_zi", 3, 4, 14, 0)};
	run(p, 4, &r);
	assert_int_equal(r.c.a[4], 0x41200000u); /* 3+3+4 = 10 */
	assert_int_equal(r.c.a[5], 0x41800000u); /* 8+8 = 16 */
	/* f16v4cmac: (1,2,3,4).(1,1,2,2): 3 -> AACC[0], 14 -> AACC[1];
	 * f16v2cmac adds 1*1+2*1 to AACC[0]; read with f16v2gina 0 and 1 */
	init(&r);
	r.c.a[0] = h2(0x3c00, 0x4000);
	r.c.a[1] = h2(0x4200, 0x4400);
	r.c.a[2] = h2(0x3c00, 0x3c00);
	r.c.a[3] = h2(0x4000, 0x4000);
	uint32_t q[] = {enc("f16v4cmac_aaan", 2, 0, 2),
	                enc("f16v2cmac_aaan", 2, 0, 2),
	                enc("f16v2gina_aaan_zi", 3, 4, 15, 0),
	                enc("f16v2gina_aaan_zi", 3, 5, 15, 1)};
	run(q, 4, &r);
	assert_int_equal(r.c.a[4], h2(0x4600, 0x0000)); /* 6, 0 */
	assert_int_equal(r.c.a[5], h2(0x4b00, 0x0000)); /* 14, 0 */
	/* f32v2aop: outer product into AACC[0,2,4,6] */
	init(&r);
	r.c.a[0] = F1;
	r.c.a[1] = F2; /* x */
	r.c.a[2] = 0x40400000u;
	r.c.a[3] = 0x40a00000u; /* y = (3, 5) */
	run1(enc("f32v2aop_aaan_ef", 3, 0, 2, 0), &r);
	assert_int_equal(r.c.aacc[0], 0x40400000u); /* x0 y0 = 3 */
	assert_int_equal(r.c.aacc[2], 0x40c00000u); /* x1 y0 = 6 */
	assert_int_equal(r.c.aacc[4], 0x40a00000u); /* x0 y1 = 5 */
	assert_int_equal(r.c.aacc[6], 0x41200000u); /* x1 y1 = 10 */
}

static void
test_axpy_mix(void **state)
{
	(void)state;
	Run r;
	init(&r);
	/* a = 2: z = 2x + y, result comes out one instruction later */
	r.c.tas = F2;
	r.c.a[0] = F1;
	r.c.a[1] = 0x40400000u; /* x = (1, 3) */
	r.c.a[2] = 0x3f000000u;
	r.c.a[3] = F1; /* y = (0.5, 1) */
	uint32_t p[] = {enc("f32v2axpy_aaan", 3, 4, 0, 2),
	                enc("f32v2axpy_aaan", 3, 6, 14, 14)};
	run(p, 2, &r);
	assert_int_equal(r.c.a[4], 0); /* previous (cleared) state */
	assert_int_equal(r.c.a[5], 0);
	assert_int_equal(r.c.a[6], 0x40200000u); /* 2.5 */
	assert_int_equal(r.c.a[7], 0x40e00000u); /* 7 */
	/* f16v4mix: TAS = (a, b) = (-1, 2): z = -x + 2y */
	init(&r);
	r.c.tas = h2(0xbc00, 0x4000);
	r.c.a[0] = h2(0x3c00, 0x4000);
	r.c.a[1] = h2(0x7bff, 0x0000); /* x = (1, 2, 65504, 0) */
	r.c.a[2] = h2(0x3c00, 0x3c00);
	r.c.a[3] = h2(0x7bff, 0x3800); /* y = (1, 1, 65504, 0.5) */
	uint32_t m[] = {enc("f16v4mix_aaan", 3, 4, 0, 2),
	                enc("f16v4acc_aaan", 1, 0),
	                enc("f16v4mix_aaan", 3, 6, 14, 14)};
	run(m, 3, &r);
	assert_int_equal(r.c.a[4], 0);
	assert_int_equal(r.c.a[5], 0);
	/* -x + 2y + x = 2y: (2, 2, 131008 -> saturate, 1) */
	assert_int_equal(r.c.a[6], h2(0x4000, 0x4000));
	assert_int_equal(r.c.a[7], h2(0x7bff, 0x3c00));
	assert_int_equal(r.c.fp_sts, FP_FLAG_OFLO);
	for (int i = 0; i < 8; i += 2)
		assert_int_equal(r.c.aacc[i], 0); /* 0*a + 0*b */
}

static void
test_stacc_not_emulated(void **state)
{
	(void)state;
	Run r;
	init(&r);
	uint32_t w = enc("f16v4stacc_aaan_ef", 2, 0, 0);
	run(&w, 1, &r);
	assert_int_equal(r.status, RUN_FAULT);
	assert_int_equal(r.fault, FAULT_INVALID_INSTR);
	w = enc("f16v4istacc_aaan_ef", 4, 0, 2, 4, 0);
	run(&w, 1, &r);
	assert_int_equal(r.status, RUN_FAULT);
}

/* Independent xoroshiro128+ reference, seeded as isa.md 2.3 says. */
static uint64_t ref_s[2];

static void
ref_seed(uint32_t v)
{
	uint32_t nv = ~v;
	ref_s[0] = (uint64_t)nv << 32 | v;
	ref_s[1] =
	    (uint64_t)((nv << 13) | (v >> 19)) << 32 | ((v << 13) | (nv >> 19));
}

static uint64_t
ref_next(void)
{
	uint64_t a = ref_s[0], b = ref_s[1], r = a + b;
	b ^= a;
	ref_s[0] = ((a << 24) | (a >> 40)) ^ b ^ (b << 16);
	ref_s[1] = (b << 37) | (b >> 27);
	return r;
}

static void
test_random(void **state)
{
	(void)state;
	Run r;
	init(&r);
	Context tmp;
	sim_prng_seed(&tmp, 12345);
	r.c.prng[0] = tmp.prng[0];
	r.c.prng[1] = tmp.prng[1];
	ref_seed(12345);
	uint64_t x1 = ref_next(), x2 = ref_next(), x3 = ref_next();
	uint32_t p[] = {enc("urand64_aaan", 1, 0), enc("urand32_aaan", 1, 2)};
	run(p, 2, &r);
	assert_int_equal(r.c.a[0], (uint32_t)x1);
	assert_int_equal(r.c.a[1], (uint32_t)(x1 >> 32));
	assert_int_equal(r.c.a[2], (uint32_t)x2);
	/* rmask: p[16] keeps all, 0 masks all, else keep if r16 < p */
	r.c.a[4] = h2(0x3c00, 0x4000);
	r.c.a[5] = h2(0x4200, 0x4400);
	r.c.a[8] = 0x10000;
	run1(w3("f16v4rmask_aaan", 6, 4, 8), &r);
	assert_int_equal(r.c.a[6], r.c.a[4]);
	assert_int_equal(r.c.a[7], r.c.a[5]);
	(void)x3;
	uint64_t x4 = ref_next();
	r.c.a[8] = 0x8000;
	run1(w3("f16v4rmask_aaan", 6, 4, 8), &r);
	uint16_t in[4] = {0x3c00, 0x4000, 0x4200, 0x4400}, want[4];
	for (int i = 0; i < 4; i++)
		want[i] = ((x4 >> (16 * i)) & 0xffff) < 0x8000 ? in[i] : 0;
	assert_int_equal(r.c.a[6], h2(want[0], want[1]));
	assert_int_equal(r.c.a[7], h2(want[2], want[3]));
	r.c.a[8] = 0;
	run1(w3("f32v2rmask_aaan", 6, 4, 8), &r);
	assert_int_equal(r.c.a[6], 0);
	assert_int_equal(r.c.a[7], 0);
	/* sufromui: u -> (u - 2^(n-1) + 1/2) / 2^n */
	init(&r);
	r.c.a[0] = 0x80000000u; /* 2^-33 */
	r.c.a[1] = 0;           /* -0.5 + 2^-33 rounds to -0.5 */
	run1(w2("f32sufromui_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], 0x2f000000u);
	run1(w2("f32v2sufromui_aaan", 2, 0), &r);
	assert_int_equal(r.c.a[2], 0x2f000000u);
	assert_int_equal(r.c.a[3], 0xbf000000u);
	r.c.a[4] = h2(0x8000, 0x7fff); /* 2^-17, -2^-17 */
	r.c.a[5] = h2(0xffff, 0xc000); /* 0.5 (rounded), 0.25 + 2^-17 */
	run1(w2("f16v2sufromui_aaan", 2, 4), &r);
	assert_int_equal(r.c.a[2], h2(0x0080, 0x8080));
	run1(w2("f16v4sufromui_aaan", 2, 4), &r);
	assert_int_equal(r.c.a[3], h2(0x3800, 0x3400));
}

/* A tile holding `word; exitz`, re-run many times as worker 0 without
 * rebuilding it (registers and PRNG state persist between runs). The exec
 * functions are not called directly: a test that references one pulls the
 * weak fallbacks of exec_missing.c out of the archive first. */
static Tile *
loop_tile(uint32_t word)
{
	const Chip *chip = chip_default();
	Tile *t = tile_new(chip, 0);
	uint32_t prog[2] = {word, enc("exitz_mmmn", 1, 15)};
	assert_int_equal(tile_write(t, chip->mem_base, prog, 8), 0);
	return t;
}

static void
rerun(Tile *t)
{
	assert_int_equal(tile_start_worker(t, 0, t->chip->mem_base, 0), 0);
	assert_int_equal(tile_run(t, t->cycle + 100), RUN_DONE);
}

/* f16v8tof8 on every half at both formats, every scale and both overflow
 * controls, on the fast path (exec_float.c's tables) and on the plain
 * path, against fp_f16_to_f8 lane by lane: the bytes and the flags. */
static void
test_f16_to_f8_all(void **state)
{
	(void)state;
	SimPath saved = sim_path;
	for (int path = 0; path < 2; path++) {
		sim_path = path ? SIM_PLAIN : SIM_FAST;
		Tile *t = loop_tile(enc("f16v8tof8_aaan", 2, 0, 4));
		Context *c = &t->ctx[1];
		for (int key = 0; key < 2 * 64 * 2; key++) {
			Fp8Format fmt = (Fp8Format)(key & 1);
			uint32_t scl = (uint32_t)(key >> 1) & 63;
			int nan = key >> 7;
			/* the plain path: every 8th scale, it is slow */
			if (path && scl % 8 != 3)
				continue;
			t->sup.fp_infmt = (uint32_t)fmt << 1;
			t->sup.fp_iscl = scl;
			t->sup.fp_ictl = nan ? CTL_NANOO : 0;
			FpOverflow ov = nan ? FP_OV_NAN : FP_OV_SAT;
			int s = fp_scale6(scl);
			for (uint32_t h = 0; h < 0x10000; h += 8) {
				/* the lanes in a shuffled order */
				uint16_t x[8];
				for (int k = 0; k < 8; k++)
					x[k] = (uint16_t)(h + ((uint32_t)k * 5 &
					                       7));
				for (int k = 0; k < 4; k++)
					c->a[4 + k] =
					    h2(x[2 * k], x[2 * k + 1]);
				c->fp_sts = 0;
				rerun(t);
				unsigned flags = 0;
				uint32_t r[2] = {0, 0};
				for (int k = 0; k < 8; k++)
					r[k / 4] |=
					    (uint32_t)fp_f16_to_f8(x[k], fmt, s,
					                           ov, &flags)
					    << (8 * (k % 4));
				if (c->a[0] != r[0] || c->a[1] != r[1] ||
				    c->fp_sts != (flags & 7))
					fail_msg(
					    "%s path, format %d, scale "
					    "field %u, NANOO %d, halves "
					    "from 0x%04x: 0x%08x%08x sts %u, "
					    "want 0x%08x%08x sts %u",
					    path ? "plain" : "fast", fmt, scl,
					    nan, h, c->a[1], c->a[0], c->fp_sts,
					    r[1], r[0], flags & 7);
			}
		}
		tile_free(t);
	}
	sim_path = saved;
}

/* The f16 functions on every half, both overflow controls, on the fast
 * path (exec_float.c's tables at nearest even) against the plain path
 * (the function in double, rounded lane by lane): the halves and the
 * flags. Lane 1 takes the halves in another order (x * 25 + 7919 is a
 * bijection of the halves), so both lanes see every half. Then the same
 * with every trap enabled on the halves that raise a flag (NaNs, zeros,
 * negative numbers, overflows): the fault and the untouched destination
 * the same; and the plain path's other roundings, which both paths take,
 * on every 61st half. */
static int
fn16_run(Tile *t)
{
	assert_int_equal(tile_start_worker(t, 0, t->chip->mem_base, 0), 0);
	RunStatus st = tile_run(t, t->cycle + 100);
	return st == RUN_FAULT ? 1000 + (int)t->fault.type : (int)st;
}

static void
test_fn16_all(void **state)
{
	(void)state;
	static const char *const mn[] = {"f16v2exp_aaan",  "f16v2exp2_aaan",
	                                 "f16v2ln_aaan",   "f16v2log2_aaan",
	                                 "f16v2sigm_aaan", "f16v2tanh_aaan"};
	SimPath saved = sim_path;
	for (int f = 0; f < 6; f++) {
		Tile *tp[2];
		for (int p = 0; p < 2; p++) {
			sim_path = p ? SIM_PLAIN : SIM_FAST;
			tp[p] = loop_tile(enc(mn[f], 2, 0, 4));
		}
		/* key: NANOO, the traps, the rounding (0 = nearest even) */
		for (int key = 0; key < 2 * 2 * 2; key++) {
			int nan = key & 1, trap = key >> 1 & 1, rz = key >> 2;
			uint32_t ctl = (nan ? CTL_NANOO : 0) | (trap ? 7u : 0) |
			               (rz ? CTL_RND(FP_RTZ) : 0);
			int faults = 0;
			for (uint32_t h = 0; h < 0x10000; h++) {
				if (rz && h % 61)
					continue;
				uint16_t x0 = (uint16_t)h,
				         x1 = (uint16_t)(h * 25 + 7919);
				uint32_t got[2][3];
				for (int p = 0; p < 2; p++) {
					sim_path = p ? SIM_PLAIN : SIM_FAST;
					Tile *t = tp[p];
					Context *c = &t->ctx[1];
					t->sup.fp_ictl = ctl;
					c->a[4] = h2(x0, x1);
					c->a[0] = POISON;
					c->fp_sts = 0;
					got[p][0] = (uint32_t)fn16_run(t);
					got[p][1] = c->a[0];
					got[p][2] = c->fp_sts;
					/* a fault stops the tile until cleared
					 * (the worker's context is FAULTED,
					 * which tile_start_worker restarts) */
					t->faulted = 0;
				}
				faults += got[0][0] != RUN_DONE;
				if (memcmp(got[0], got[1], sizeof got[0]))
					fail_msg(
					    "%s, NANOO %d, traps %d, RZ %d, "
					    "halves 0x%04x 0x%04x: fast "
					    "status %u 0x%08x sts %u, plain "
					    "status %u 0x%08x sts %u",
					    mn[f], nan, trap, rz, x0, x1,
					    got[0][0], got[0][1], got[0][2],
					    got[1][0], got[1][1], got[1][2]);
			}
			/* with the traps on, the NaNs at least fault */
			assert_true(!trap || faults > 0);
		}
		for (int p = 0; p < 2; p++)
			tile_free(tp[p]);
	}
	sim_path = saved;
}

static void
test_gaussian(void **state)
{
	(void)state;
	Tile *t = loop_tile(enc("f32v2grand_aaan", 1, 0));
	sim_prng_seed(&t->ctx[1], 7);
	double s = 0, s2 = 0;
	int n = 20000;
	for (int i = 0; i < n; i++) {
		rerun(t);
		for (int k = 0; k < 2; k++) {
			double g = fp_f32_float(t->ctx[1].a[k]);
			assert_true(isfinite(g));
			s += g;
			s2 += g * g;
		}
	}
	double mean = s / (2 * n), var = s2 / (2 * n) - mean * mean;
	assert_true(fabs(mean) < 0.03);
	assert_true(fabs(var - 1) < 0.05);
	tile_free(t);
	t = loop_tile(enc("f16v2grand_aaan", 1, 0));
	rerun(t);
	uint32_t v = t->ctx[1].a[0];
	assert_false(fp_f16_isnan((uint16_t)v) || fp_f16_isnan(v >> 16));
	tile_free(t);
}

static void
test_stochastic_rounding(void **state)
{
	(void)state;
	Tile *t = loop_tile(enc("f32tof16_aaan", 2, 2, 0));
	Context *c = &t->ctx[1];
	sim_prng_seed(c, 99);
	/* 1 + 2^-12: a quarter ulp above 1.0 in f16 */
	c->a[0] = 0x3f800800u;
	t->sup.fp_ictl = CTL_ESR; /* $FP_CTL at worker start */
	int up = 0, n = 8000;
	for (int i = 0; i < n; i++) {
		rerun(t);
		uint16_t h = (uint16_t)c->a[2];
		assert_true(h == 0x3c00 || h == 0x3c01);
		assert_int_equal(c->a[2] >> 16, h); /* duplicated */
		up += h == 0x3c01;
	}
	/* binomial(8000, 0.25): sd ~ 39 */
	assert_true(abs(up - n / 4) < 200);
	/* the generator only moves when ESR is set */
	uint64_t s0 = c->prng[0];
	t->sup.fp_ictl = 0;
	rerun(t);
	assert_true(c->prng[0] == s0);
	assert_int_equal(c->a[2], h2(0x3c00, 0x3c00));
	tile_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_f32_arith),
	    cmocka_unit_test(test_f32_flags_and_traps),
	    cmocka_unit_test(test_f32_minmax_cmp),
	    cmocka_unit_test(test_f16_arith),
	    cmocka_unit_test(test_f16_overflow),
	    cmocka_unit_test(test_f16_minmax_cmp_class),
	    cmocka_unit_test(test_transcendental),
	    cmocka_unit_test(test_conversions),
	    cmocka_unit_test(test_f32_to_f16_random),
	    cmocka_unit_test(test_fp8),
	    cmocka_unit_test(test_f16_to_f8_all),
	    cmocka_unit_test(test_fn16_all),
	    cmocka_unit_test(test_accumulate_and_gina),
	    cmocka_unit_test(test_mac),
	    cmocka_unit_test(test_axpy_mix),
	    cmocka_unit_test(test_stacc_not_emulated),
	    cmocka_unit_test(test_random),
	    cmocka_unit_test(test_gaussian),
	    cmocka_unit_test(test_stochastic_rounding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

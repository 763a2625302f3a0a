/*
 * test_exec_int.c - semantics of the integer, bitwise and permute
 * instructions (src/sim/exec_int.c). Each case runs one instruction as
 * worker 0 with preset registers, then `exitz $mzero`. Expected values are
 * worked out by hand in the comments; permute lane orders follow the
 * DECISIONs in docs/emulator-memory.md.
 */
#include "support.h"

#include <string.h>

#define CO 0x80000000u /* co-issue bit: first word of a bundle */
#define INT_MIN32 0x80000000u
#define INT_MAX32 0x7fffffffu

typedef struct {
	uint32_t m[16], a[16];
} Regs;

/* Run words + exitz as worker 0 with registers preset from *r; the result
 * registers are copied back into *r. Fails the test on anything but a clean
 * exit. */
static void
run_regs(const uint32_t *words, int n, Regs *r)
{
	Tile *t = worker_tile(words, n);
	Context *x = &t->ctx[1];
	memcpy(x->m, r->m, sizeof x->m);
	memcpy(x->a, r->a, sizeof x->a);
	RunStatus st = tile_run(t, 10000);
	if (st != RUN_DONE) {
		char buf[512];
		tile_format_fault(t, buf, sizeof buf);
		fail_msg("run status %d: %s", st, buf);
	}
	memcpy(r->m, x->m, sizeof r->m);
	memcpy(r->a, x->a, sizeof r->a);
	tile_free(t);
}

static Regs
poisoned(void)
{
	Regs r;
	for (int i = 0; i < 16; i++)
		r.m[i] = r.a[i] = POISON;
	return r;
}

/* "variant $m2, $m0, $m1" with m0 = x, m1 = y; returns m2. */
static uint32_t
m3(const char *variant, uint32_t x, uint32_t y)
{
	Regs r = poisoned();
	r.m[0] = x;
	r.m[1] = y;
	uint32_t w = enc(variant, 3, 2, 0, 1);
	run_regs(&w, 1, &r);
	return r.m[2];
}

/* "variant $m2, $m0, imm". */
static uint32_t
mi(const char *variant, uint32_t x, int32_t imm)
{
	Regs r = poisoned();
	r.m[0] = x;
	uint32_t w = enc(variant, 3, 2, 0, imm);
	run_regs(&w, 1, &r);
	return r.m[2];
}

/* "variant $m2, imm, $m0" (sub's immediate forms). */
static uint32_t
im(const char *variant, int32_t imm, uint32_t y)
{
	Regs r = poisoned();
	r.m[0] = y;
	uint32_t w = enc(variant, 3, 2, imm, 0);
	run_regs(&w, 1, &r);
	return r.m[2];
}

/* "variant $m2, $m0". */
static uint32_t
m2(const char *variant, uint32_t x)
{
	Regs r = poisoned();
	r.m[0] = x;
	uint32_t w = enc(variant, 2, 2, 0);
	run_regs(&w, 1, &r);
	return r.m[2];
}

/* "variant $a2, $a0, $a1". */
static uint32_t
a3(const char *variant, uint32_t x, uint32_t y)
{
	Regs r = poisoned();
	r.a[0] = x;
	r.a[1] = y;
	uint32_t w = enc(variant, 3, 2, 0, 1);
	run_regs(&w, 1, &r);
	return r.a[2];
}

/* "variant $a2, $a0, imm". */
static uint32_t
ai(const char *variant, uint32_t x, int32_t imm)
{
	Regs r = poisoned();
	r.a[0] = x;
	uint32_t w = enc(variant, 3, 2, 0, imm);
	run_regs(&w, 1, &r);
	return r.a[2];
}

/* "variant $a4:5, $a0:1, $a2:3"; returns a4 | a5 << 32. */
static uint64_t
a64(const char *variant, uint64_t x, uint64_t y)
{
	Regs r = poisoned();
	r.a[0] = (uint32_t)x;
	r.a[1] = (uint32_t)(x >> 32);
	r.a[2] = (uint32_t)y;
	r.a[3] = (uint32_t)(y >> 32);
	uint32_t w = enc(variant, 3, 4, 0, 2);
	run_regs(&w, 1, &r);
	return (uint64_t)r.a[5] << 32 | r.a[4];
}

static void
test_add_sub(void **state)
{
	(void)state;
	assert_int_equal(m3("add_mmmn", INT_MAX32, 1), INT_MIN32);
	assert_int_equal(m3("add_mmmn", 0xffffffffu, 1), 0);
	assert_int_equal(mi("add_mmmn_si", 5, -6), 0xffffffffu);
	assert_int_equal(mi("add_mmmn_si", 0, -32768), 0xffff8000u);
	assert_int_equal(mi("add_mmmn_zi", 1, 0xffff), 0x10000u);
	/* sub $d, x, y = x - y */
	assert_int_equal(m3("sub_mmmn", 5, 7), 0xfffffffeu);
	assert_int_equal(m3("sub_mmmn", INT_MIN32, 1), INT_MAX32);
	assert_int_equal(m3("sub_mmmn", 0, INT_MIN32), INT_MIN32);
	/* imm - y: -1 - INT_MIN = INT_MAX; 0xffff - 1 = 0xfffe */
	assert_int_equal(im("sub_mmmn_si", -1, INT_MIN32), INT_MAX32);
	assert_int_equal(im("sub_mmmn_zi", 0xffff, 1), 0xfffeu);
	assert_int_equal(im("sub_mmmn_si", 10, 3), 7);
}

static void
test_mul(void **state)
{
	(void)state;
	assert_int_equal(m3("mul_mmmn", 0xffffffffu, 0xffffffffu), 1);
	assert_int_equal(m3("mul_mmmn", INT_MIN32, 0xffffffffu), INT_MIN32);
	assert_int_equal(m3("mul_mmmn", 0x10000, 0x10000), 0);
	assert_int_equal(m3("mul_mmmn", 0, 12345), 0);
	/* 7 * -3 = -21 = 0xffffffeb */
	assert_int_equal(mi("mul_mmmn_si", 7, -3), 0xffffffebu);
	/* 0x10001 * 0x7fff = 0x7fff7fff */
	assert_int_equal(mi("mul_mmmn_si", 0x10001, 0x7fff), 0x7fff7fffu);
}

static void
test_min_max(void **state)
{
	(void)state;
	assert_int_equal(m3("min_mmmn", 0xffffffffu, 1), 0xffffffffu);
	assert_int_equal(m3("min_mmmn", INT_MIN32, INT_MAX32), INT_MIN32);
	assert_int_equal(m3("max_mmmn", 0xffffffffu, 1), 1);
	assert_int_equal(m3("max_mmmn", INT_MIN32, 0), 0);
	/* zimm16 is a positive value in a signed comparison */
	assert_int_equal(mi("min_mmmn_zi", (uint32_t)-5, 0xffff), (uint32_t)-5);
	assert_int_equal(mi("max_mmmn_zi", (uint32_t)-5, 0xffff), 0xffffu);
	assert_int_equal(mi("max_mmmn_si", (uint32_t)-5, -3), (uint32_t)-3);
	assert_int_equal(mi("min_mmmn_si", 0, -32768), 0xffff8000u);
}

static void
test_compare(void **state)
{
	(void)state;
	assert_int_equal(m3("cmpeq_mmmn", 5, 5), 1);
	assert_int_equal(m3("cmpeq_mmmn", 5, 6), 0);
	assert_int_equal(mi("cmpeq_mmmn_si", 0xffffffffu, -1), 1);
	assert_int_equal(mi("cmpeq_mmmn_zi", 0xffffffffu, 0xffff), 0);
	assert_int_equal(mi("cmpeq_mmmn_zi", 0xffffu, 0xffff), 1);
	assert_int_equal(m3("cmpne_mmmn", 5, 6), 1);
	assert_int_equal(m3("cmpne_mmmn", INT_MIN32, INT_MIN32), 0);
	assert_int_equal(m3("cmpslt_mmmn", 0xffffffffu, 0), 1);
	assert_int_equal(m3("cmpslt_mmmn", 0, 0xffffffffu), 0);
	assert_int_equal(m3("cmpslt_mmmn", INT_MIN32, INT_MAX32), 1);
	assert_int_equal(m3("cmpslt_mmmn", 5, 5), 0);
	assert_int_equal(mi("cmpslt_mmmn_si", (uint32_t)-2, -1), 1);
	assert_int_equal(mi("cmpslt_mmmn_si", (uint32_t)-1, -1), 0);
	assert_int_equal(m3("cmpult_mmmn", 0xffffffffu, 0), 0);
	assert_int_equal(m3("cmpult_mmmn", 0, 0xffffffffu), 1);
	assert_int_equal(mi("cmpult_mmmn_zi", 5, 6), 1);
	assert_int_equal(mi("cmpult_mmmn_zi", 0xffffffffu, 0xffff), 0);
}

static void
test_abs(void **state)
{
	(void)state;
	assert_int_equal(m2("abs_mmmn", 5), 5);
	assert_int_equal(m2("abs_mmmn", (uint32_t)-5), 5);
	assert_int_equal(m2("abs_mmmn", 0), 0);
	assert_int_equal(m2("abs_mmmn", INT_MIN32), INT_MIN32); /* wraps */
	assert_int_equal(m2("abs_mmmn", INT_MIN32 + 1), INT_MAX32);
}

static void
test_bitwise_mrf(void **state)
{
	(void)state;
	uint32_t x = 0xf0f0f0f0u, y = 0xff00ff00u;
	assert_int_equal(m3("and_mmmn", x, y), 0xf000f000u);
	/* x & ~y = 0xf0f0f0f0 & 0x00ff00ff */
	assert_int_equal(m3("andc_mmmn", x, y), 0x00f000f0u);
	assert_int_equal(m3("or_mmmn", x, y), 0xfff0fff0u);
	assert_int_equal(m3("xor_mmmn", x, y), 0x0ff00ff0u);
	assert_int_equal(m3("xnor_mmmn", x, y), 0xf00ff00fu);
	assert_int_equal(m3("xnor_mmmn", 0, 0), 0xffffffffu);
	assert_int_equal(mi("and_mmmn_zi", 0xffffffffu, 0xabc), 0xabcu);
	assert_int_equal(mi("andc_mmmn_zi", 0xffffffffu, 0xfff), 0xfffff000u);
	assert_int_equal(mi("or_mmmn_zi", 0x100, 0x0ff), 0x1ffu);
	/* immz12: the field holds the top 12 bits */
	assert_int_equal(mi("or_mmmn_iz", 1, (int32_t)0xabc00000u),
	                 0xabc00001u);
}

static void
test_bitwise_arf(void **state)
{
	(void)state;
	uint32_t x = 0xf0f0f0f0u, y = 0xff00ff00u;
	assert_int_equal(a3("and_aaan", x, y), 0xf000f000u);
	assert_int_equal(a3("andc_aaan", x, y), 0x00f000f0u);
	assert_int_equal(a3("or_aaan", x, y), 0xfff0fff0u);
	assert_int_equal(ai("and_aaan_zi", 0xffffffffu, 0x123), 0x123u);
	assert_int_equal(ai("and_aaan_iz", 0xffffffffu, (int32_t)0xfff00000u),
	                 0xfff00000u);
	assert_int_equal(ai("andc_aaan_zi", 0xffffffffu, 0xf0f), 0xfffff0f0u);
	assert_int_equal(ai("andc_aaan_iz", 0xffffffffu, (int32_t)INT_MIN32),
	                 INT_MAX32);
	assert_int_equal(ai("or_aaan_zi", 0, 0x123), 0x123u);
	assert_int_equal(ai("or_aaan_iz", 0x5, (int32_t)0x00100000u),
	                 0x00100005u);
	Regs r = poisoned();
	r.a[0] = 0x0f0f0000u;
	uint32_t w = enc("not_aaan", 2, 2, 0);
	run_regs(&w, 1, &r);
	assert_int_equal(r.a[2], 0xf0f0ffffu);
	/* $a14 and $a15 read 0 whatever they hold */
	r = poisoned();
	uint32_t n2[2] = {enc("not_aaan", 2, 2, 15), enc("not_aaan", 2, 3, 14)};
	run_regs(n2, 2, &r);
	assert_int_equal(r.a[2], 0xffffffffu);
	assert_int_equal(r.a[3], 0xffffffffu);
}

static void
test_bitwise64(void **state)
{
	(void)state;
	uint64_t x = 0xf0f0f0f0ff00ff00u, y = 0xff00ff000f0f0f0fu;
	assert_true(a64("and64_aaan", x, y) == 0xf000f0000f000f00u);
	assert_true(a64("andc64_aaan", x, y) == 0x00f000f0f000f000u);
	assert_true(a64("or64_aaan", x, y) == 0xfff0fff0ff0fff0fu);
	Regs r = poisoned();
	r.a[0] = 0x12345678u;
	r.a[1] = 0xffff0000u;
	uint32_t w = enc("not64_aaan", 2, 4, 0);
	run_regs(&w, 1, &r);
	assert_int_equal(r.a[4], 0xedcba987u);
	assert_int_equal(r.a[5], 0x0000ffffu);
}

static void
test_shifts(void **state)
{
	(void)state;
	assert_int_equal(m3("shl_mmmn", 1, 0), 1);
	assert_int_equal(m3("shl_mmmn", 1, 31), INT_MIN32);
	assert_int_equal(m3("shl_mmmn", 1, 32), 0);
	assert_int_equal(m3("shl_mmmn", 0xffffffffu, 4), 0xfffffff0u);
	assert_int_equal(m3("shl_mmmn", 1, 0xffffffffu), 0);
	assert_int_equal(mi("shl_mmmn_zi", 3, 4095), 0);
	assert_int_equal(mi("shl_mmmn_zi", 3, 1), 6);
	assert_int_equal(m3("shr_mmmn", INT_MIN32, 0), INT_MIN32);
	assert_int_equal(m3("shr_mmmn", INT_MIN32, 31), 1);
	assert_int_equal(m3("shr_mmmn", INT_MIN32, 32), 0);
	assert_int_equal(mi("shr_mmmn_zi", 0xf0000000u, 4), 0x0f000000u);
	assert_int_equal(m3("shrs_mmmn", INT_MIN32, 0), INT_MIN32);
	assert_int_equal(m3("shrs_mmmn", INT_MIN32, 31), 0xffffffffu);
	assert_int_equal(m3("shrs_mmmn", INT_MIN32, 32), 0xffffffffu);
	assert_int_equal(m3("shrs_mmmn", 0x40000000u, 32), 0);
	assert_int_equal(m3("shrs_mmmn", 0x40000000u, 30), 1);
	/* 0x80000010 >> 4 with sign fill = 0xf8000001 */
	assert_int_equal(mi("shrs_mmmn_zi", 0x80000010u, 4), 0xf8000001u);
	assert_int_equal(mi("shrs_mmmn_zi", 0xffffffffu, 100), 0xffffffffu);
}

static void
test_bit_counts(void **state)
{
	(void)state;
	assert_int_equal(m2("clz_mmmn", 0), 32);
	assert_int_equal(m2("clz_mmmn", 1), 31);
	assert_int_equal(m2("clz_mmmn", INT_MIN32), 0);
	assert_int_equal(m2("clz_mmmn", 0x00010000u), 15);
	/* cms: bits below bit 31 equal to it */
	assert_int_equal(m2("cms_mmmn", 0), 31);
	assert_int_equal(m2("cms_mmmn", 0xffffffffu), 31);
	assert_int_equal(m2("cms_mmmn", 1), 30);           /* bits 30..1 */
	assert_int_equal(m2("cms_mmmn", 0xfffffffeu), 30); /* bits 30..1 */
	assert_int_equal(m2("cms_mmmn", INT_MIN32), 0);
	assert_int_equal(m2("cms_mmmn", INT_MAX32), 0);
	assert_int_equal(m2("cms_mmmn", 0xc0000000u), 1);
	assert_int_equal(m2("cms_mmmn", 0x00ffffffu), 7);
	assert_int_equal(m2("popc_mmmn", 0), 0);
	assert_int_equal(m2("popc_mmmn", 0xffffffffu), 32);
	assert_int_equal(m2("popc_mmmn", 0x80000001u), 2);
	assert_int_equal(m2("popc_mmmn", 0x00f0f001u), 9);
}

static void
test_byte_ops(void **state)
{
	(void)state;
	/* bytes 0x80 0x03 0x02 0x01 (low first) reverse their bits to
	 * 0x01 0xc0 0x40 0x80 */
	assert_int_equal(m2("bitrev8_mmmn", 0x01020380u), 0x8040c001u);
	assert_int_equal(m2("bitrev8_mmmn", 0xffffffffu), 0xffffffffu);
	assert_int_equal(m2("swap8_mmmn", 0x11223344u), 0x44332211u);
	/* sort8: x0 x2 x1 x3 of 0x44332211 = 11 33 22 44 */
	assert_int_equal(m2("sort8_mmmn", 0x44332211u), 0x44223311u);
	Regs r = poisoned();
	r.a[0] = 0x11223344u;
	uint32_t w[2] = {enc("swap8_aaan", 2, 2, 0),
	                 enc("sort8_aaan", 2, 3, 0)};
	run_regs(w, 2, &r);
	assert_int_equal(r.a[2], 0x44332211u);
	/* bytes 44 33 22 11 -> 44 22 33 11 */
	assert_int_equal(r.a[3], 0x11332244u);
}

static void
test_rolls(void **state)
{
	(void)state;
	/* roll16 = a >> 16 | b << 16 */
	assert_int_equal(m3("roll16_mmmn", 0x11112222u, 0x33334444u),
	                 0x44441111u);
	assert_int_equal(a3("roll16_aaan", 0x11112222u, 0x33334444u),
	                 0x44441111u);
	/* roll8r = a >> 8 | b << 24 */
	assert_int_equal(m3("roll8r_mmmn", 0x11223344u, 0x55667788u),
	                 0x88112233u);
	assert_int_equal(a3("roll8r_aaan", 0x11223344u, 0x55667788u),
	                 0x88112233u);
	/* roll8l = a << 8 | b >> 24 */
	assert_int_equal(m3("roll8l_mmmn", 0x11223344u, 0x55667788u),
	                 0x22334455u);
	assert_int_equal(a3("roll8l_aaan", 0x11223344u, 0x55667788u),
	                 0x22334455u);
	/* roll32 = {a.hi, b.lo} */
	assert_true(a64("roll32_aaan", 0xa1a1a1a1a0a0a0a0u,
	                0xb1b1b1b1b0b0b0b0u) == 0xb0b0b0b0a1a1a1a1u);
}

static void
test_shuffles_sorts(void **state)
{
	(void)state;
	uint32_t a = 0x13121110u, b = 0x23222120u; /* byte k = 0x10+k, 0x20+k */
	/* shuf8x8lo: a0 b0 a1 b1 */
	assert_int_equal(m3("shuf8x8lo_mmmn", a, b), 0x21112010u);
	assert_int_equal(a3("shuf8x8lo_aaan", a, b), 0x21112010u);
	/* shuf8x8hi: a2 b2 a3 b3 */
	assert_int_equal(m3("shuf8x8hi_mmmn", a, b), 0x23132212u);
	assert_int_equal(a3("shuf8x8hi_aaan", a, b), 0x23132212u);
	/* sort8x8lo: a0 a2 b0 b2; sort8x8hi: a1 a3 b1 b3 */
	assert_int_equal(m3("sort8x8lo_mmmn", a, b), 0x22201210u);
	assert_int_equal(a3("sort8x8lo_aaan", a, b), 0x22201210u);
	assert_int_equal(m3("sort8x8hi_mmmn", a, b), 0x23211311u);
	assert_int_equal(a3("sort8x8hi_aaan", a, b), 0x23211311u);
	/* sort4x16lo: {a.lo, b.lo}; sort4x16hi: {a.hi, b.hi} */
	uint32_t x = 0x11112222u, y = 0x33334444u;
	assert_int_equal(m3("sort4x16lo_mmmn", x, y), 0x44442222u);
	assert_int_equal(a3("sort4x16lo_aaan", x, y), 0x44442222u);
	assert_int_equal(m3("sort4x16hi_mmmn", x, y), 0x33331111u);
	assert_int_equal(a3("sort4x16hi_aaan", x, y), 0x33331111u);
	/* :BL makes x 0x22222222 first: hi = {0x2222, 0x3333} */
	assert_int_equal(a3("sort4x16hi_aaal", x, y), 0x33332222u);
	/* :BU makes x 0x11111111 first: lo = {0x1111, 0x4444} */
	assert_int_equal(a3("sort4x16lo_aaau", x, y), 0x44441111u);
	/* sort4x32lo = {a.lo, b.lo}, hi = {a.hi, b.hi} */
	uint64_t p = 0xa1a1a1a1a0a0a0a0u, q = 0xb1b1b1b1b0b0b0b0u;
	assert_true(a64("sort4x32lo_aaan", p, q) == 0xb0b0b0b0a0a0a0a0u);
	assert_true(a64("sort4x32hi_aaan", p, q) == 0xb1b1b1b1a1a1a1a1u);
}

static void
test_moves(void **state)
{
	(void)state;
	/* movz $m2, $m0, $m1: m2 = m0 when m1 == 0 */
	Regs r = poisoned();
	r.m[0] = 7;
	r.m[1] = 0;
	uint32_t w = enc("movz_mmmn", 3, 2, 0, 1);
	run_regs(&w, 1, &r);
	assert_int_equal(r.m[2], 7);
	r = poisoned();
	r.m[0] = 7;
	r.m[1] = INT_MIN32;
	run_regs(&w, 1, &r);
	assert_int_equal(r.m[2], POISON);
	/* $mzero as the gate always moves */
	r = poisoned();
	r.m[0] = 9;
	w = enc("movz_mmmn", 3, 2, 0, 15);
	run_regs(&w, 1, &r);
	assert_int_equal(r.m[2], 9);

	r = poisoned();
	uint32_t ws[3] = {enc("setzi_mmmn_zi", 2, 3, 0xfffff),
	                  enc("setzi_aaan_zi", 2, 4, 0x12345),
	                  enc("setzi_mmmn_zi", 2, 15, 5)};
	run_regs(ws, 3, &r);
	assert_int_equal(r.m[3], 0x000fffffu);
	assert_int_equal(r.a[4], 0x00012345u);
	assert_int_equal(r.m[15], POISON); /* $mzero writes are discarded */

	r = poisoned();
	r.a[3] = 0xcafebabeu;
	w = enc("atom_mamn", 2, 2, 3);
	run_regs(&w, 1, &r);
	assert_int_equal(r.m[2], 0xcafebabeu);
}

/* Both halves of a bundle read pre-bundle registers. */
static void
test_bundle_reads_old_values(void **state)
{
	(void)state;
	Regs r = poisoned();
	r.a[0] = 0x0000ffffu;
	r.m[0] = 10;
	uint32_t w[2] = {
	    CO | enc("atom_mamn", 2, 1, 0), /* m1 = a0 (old) */
	    enc("not_aaan", 2, 0, 0),       /* a0 = ~a0 */
	};
	run_regs(w, 2, &r);
	assert_int_equal(r.m[1], 0x0000ffffu);
	assert_int_equal(r.a[0], 0xffff0000u);
	/* add $m0, $m0, 1 twice in sequence sees each result */
	r = poisoned();
	r.m[0] = 10;
	uint32_t s[2] = {enc("add_mmmn_si", 3, 0, 0, 1),
	                 enc("add_mmmn_si", 3, 0, 0, 1)};
	run_regs(s, 2, &r);
	assert_int_equal(r.m[0], 12);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_add_sub),
	    cmocka_unit_test(test_mul),
	    cmocka_unit_test(test_min_max),
	    cmocka_unit_test(test_compare),
	    cmocka_unit_test(test_abs),
	    cmocka_unit_test(test_bitwise_mrf),
	    cmocka_unit_test(test_bitwise_arf),
	    cmocka_unit_test(test_bitwise64),
	    cmocka_unit_test(test_shifts),
	    cmocka_unit_test(test_bit_counts),
	    cmocka_unit_test(test_byte_ops),
	    cmocka_unit_test(test_rolls),
	    cmocka_unit_test(test_shuffles_sorts),
	    cmocka_unit_test(test_moves),
	    cmocka_unit_test(test_bundle_reads_old_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

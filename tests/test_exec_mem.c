/*
 * test_exec_mem.c - semantics of the loads and stores (src/sim/exec_mem.c):
 * every addressing form with its write-back, sign/zero/broadcast widening,
 * the paced forms with each selector, tapack, the sparse delta loads, and
 * the memory faults (range, alignment, 128-bit region, same-element
 * conflicts) with their fault report.
 *
 * Programs run as worker 0 from the start of memory (element 0 of region 0)
 * and end with `exitz $mzero`. Data lives in other elements:
 *   D5 = 0x60000, D6 = 0x64000, D7 = 0x68000   (region 0, elements 5, 6, 7)
 *   IL = 0x80000                               (region 1, interleaved)
 * Expected addresses and values are worked out by hand in the comments.
 */
#include "support.h"

#include <stdio.h>
#include <string.h>

#define CO 0x80000000u /* co-issue bit: first word of a bundle */
#define D5 0x60000u
#define D6 0x64000u
#define D7 0x68000u
#define IL 0x80000u
#define MZ 15 /* $mzero */

static uint32_t *
M(Tile *t)
{
	return t->ctx[1].m;
}

static uint32_t *
A(Tile *t)
{
	return t->ctx[1].a;
}

static void
put32(Tile *t, uint32_t addr, uint32_t v)
{
	assert_int_equal(tile_write(t, addr, &v, 4), 0);
}

static uint32_t
get32(Tile *t, uint32_t addr)
{
	uint32_t v;
	assert_int_equal(tile_read(t, addr, &v, 4), 0);
	return v;
}

static void
put_bytes(Tile *t, uint32_t addr, const uint8_t *b, uint32_t n)
{
	assert_int_equal(tile_write(t, addr, b, n), 0);
}

/* Run to a clean exit. */
static void
go(Tile *t)
{
	RunStatus st = tile_run(t, 10000);
	if (st != RUN_DONE) {
		char buf[512];
		tile_format_fault(t, buf, sizeof buf);
		fail_msg("run status %d: %s", st, buf);
	}
}

/* Run expecting a fault of this type; returns the fault report. */
static void
go_fault(Tile *t, FaultType type, char *report, size_t len)
{
	assert_int_equal(tile_run(t, 10000), RUN_FAULT);
	tile_format_fault(t, report, len);
	if (t->fault.type != type)
		fail_msg("expected %s, got: %s", fault_type_name(type), report);
}

/* Three-operand forms: EA = base + delta + off * size. */

static void
test_ld32_forms(void **state)
{
	(void)state;
	uint32_t w[4] = {
	    enc("ld32_mmmn", 4, 2, 0, 1, 3),    /* $m2 <- [m0 + m1 + m3*4] */
	    enc("ld32_mmmn_zi", 4, 4, 0, 1, 5), /* $m4 <- [m0 + m1 + 5*4] */
	    enc("ld32_mman", 4, 6, 0, 1, 3),    /* $a6 <- [m0 + m1 + m3*4] */
	    enc("ld32_mman_zi", 4, 7, 0, MZ, 4095), /* $a7 <- [m0 + 4095*4] */
	};
	Tile *t = worker_tile(w, 4);
	M(t)[0] = D5;
	M(t)[1] = 0x10;
	M(t)[3] = 3;
	put32(t, D5 + 0x10 + 12, 0x11111111u);
	put32(t, D5 + 0x10 + 20, 0x22222222u);
	put32(t, D5 + 4095 * 4, 0x33333333u);
	go(t);
	assert_int_equal(M(t)[2], 0x11111111u);
	assert_int_equal(M(t)[4], 0x22222222u);
	assert_int_equal(A(t)[6], 0x11111111u);
	assert_int_equal(A(t)[7], 0x33333333u);
	assert_int_equal(M(t)[1], 0x10); /* no write-back */
	tile_free(t);
}

static void
test_narrow_loads(void **state)
{
	(void)state;
	uint32_t w[8] = {
	    enc("ldz8_mmmn", 4, 2, 0, MZ, 1),     /* byte at D5+m1 */
	    enc("lds8_mmmn_zi", 4, 3, 0, MZ, 1),  /* byte at D5+1 */
	    enc("ldz16_mmmn", 4, 4, 0, MZ, 1),    /* half at D5+m1*2 */
	    enc("lds16_mmmn_zi", 4, 5, 0, MZ, 1), /* half at D5+2 */
	    enc("lds8_mmmn", 4, 6, 0, MZ, MZ),    /* byte at D5: 0x7f */
	    enc("ldb16_mman", 4, 0, 0, MZ, 1),    /* half at D5+m1*2 */
	    enc("ldb16_mman_zi", 4, 1, 0, MZ, 0), /* half at D5 */
	    enc("ldb8_mman_zi", 4, 2, 0, MZ, 1),  /* byte at D5+1 */
	};
	Tile *t = worker_tile(w, 8);
	M(t)[0] = D5;
	M(t)[1] = 1; /* offset register */
	const uint8_t data[4] = {0x7f, 0x80, 0x34, 0x92};
	put_bytes(t, D5, data, 4);
	go(t);
	assert_int_equal(M(t)[2], 0x80u);
	assert_int_equal(M(t)[3], 0xffffff80u);
	assert_int_equal(M(t)[4], 0x9234u);
	assert_int_equal(M(t)[5], 0xffff9234u);
	assert_int_equal(M(t)[6], 0x7fu);
	assert_int_equal(A(t)[0], 0x92349234u);
	assert_int_equal(A(t)[1], 0x807f807fu);
	assert_int_equal(A(t)[2], 0x80808080u);
	tile_free(t);
}

static void
test_wide_loads(void **state)
{
	(void)state;
	uint32_t w[4] = {
	    enc("ld64_mman", 4, 0, 0, 1, 2),      /* $a0:1 <- [D5 + 8 + 1*8] */
	    enc("ld64_mman_zi", 4, 2, 0, MZ, 3),  /* $a2:3 <- [D5 + 24] */
	    enc("ld128_mman", 4, 4, 3, MZ, 2),    /* $a4:7 <- [IL + 1*16] */
	    enc("ld128_mman_zi", 4, 8, 3, MZ, 2), /* $a8:11 <- [IL + 32] */
	};
	Tile *t = worker_tile(w, 4);
	M(t)[0] = D5;
	M(t)[1] = 8;
	M(t)[2] = 1;
	M(t)[3] = IL;
	for (uint32_t k = 0; k < 16; k++) {
		put32(t, D5 + 4 * k, 0x50000000u + k);
		put32(t, IL + 4 * k, 0x10000000u + k);
	}
	go(t);
	/* D5 + 16: words 4, 5; D5 + 24: words 6, 7 */
	assert_int_equal(A(t)[0], 0x50000004u);
	assert_int_equal(A(t)[1], 0x50000005u);
	assert_int_equal(A(t)[2], 0x50000006u);
	assert_int_equal(A(t)[3], 0x50000007u);
	/* IL + 16: words 4..7; IL + 32: words 8..11 */
	for (int k = 0; k < 4; k++) {
		assert_int_equal(A(t)[4 + k], 0x10000004u + k);
		assert_int_equal(A(t)[8 + k], 0x10000008u + k);
	}
	tile_free(t);
}

/* Step forms: EA = base + delta, then delta += stride * size. */

static void
test_step_loads(void **state)
{
	(void)state;
	uint32_t w[6] = {
	    enc("ld32step_mmmn_si", 4, 2, 0, 1, -2),   /* m1 -= 8 */
	    enc("ld32step_mmbn", 4, 0, 0, 3, 4),       /* m3 += m4*4 */
	    enc("ld64step_mmbn_si", 4, 2, 0, 5, 3),    /* m5 += 24 */
	    enc("ld64step_mmbn", 4, 4, 0, 6, 4),       /* m6 += m4*8 */
	    enc("ld32step_mmbn_si", 4, 6, 0, 7, 127),  /* m7 += 508 */
	    enc("ld128step_mmbn_si", 4, 8, 9, 10, -1), /* m10 -= 16 */
	};
	Tile *t = worker_tile(w, 6);
	M(t)[0] = D5;
	M(t)[1] = 0x40;
	M(t)[3] = 0x44;
	M(t)[4] = (uint32_t)-3;
	M(t)[5] = 0x48;
	M(t)[6] = 0x50;
	M(t)[7] = 0x58;
	M(t)[9] = IL;
	M(t)[10] = 0x20;
	for (uint32_t k = 0; k < 32; k++) {
		put32(t, D5 + 4 * k, 0x50000000u + 4 * k);
		put32(t, IL + 4 * k, 0x10000000u + 4 * k);
	}
	go(t);
	assert_int_equal(M(t)[2], 0x50000040u);
	assert_int_equal(M(t)[1], 0x40 - 8);
	assert_int_equal(A(t)[0], 0x50000044u);
	assert_int_equal(M(t)[3], 0x44 - 12);
	assert_int_equal(A(t)[2], 0x50000048u);
	assert_int_equal(A(t)[3], 0x5000004cu);
	assert_int_equal(M(t)[5], 0x48 + 24);
	assert_int_equal(A(t)[4], 0x50000050u);
	assert_int_equal(M(t)[6], 0x50 - 24);
	assert_int_equal(A(t)[6], 0x50000058u);
	assert_int_equal(M(t)[7], 0x58 + 508);
	assert_int_equal(A(t)[8], 0x10000020u);
	assert_int_equal(A(t)[11], 0x1000002cu);
	assert_int_equal(M(t)[10], 0x20 - 16);
	tile_free(t);
}

static void
test_narrow_step_loads(void **state)
{
	(void)state;
	uint32_t w[8] = {
	    enc("ldz8step_mmmn_si", 4, 2, 0, 1, 3),     /* m1 += 3 */
	    enc("lds8step_mmmn", 4, 3, 0, 4, 5),        /* m4 += m5 * 1 */
	    enc("ldz16step_mmmn_si", 4, 6, 0, 7, -1),   /* m7 -= 2 */
	    enc("lds16step_mmmn", 4, 8, 0, 9, 5),       /* m9 += m5 * 2 */
	    enc("ldb16step_mmbn_si", 4, 0, 0, 10, 2),   /* m10 += 4 */
	    enc("ldb16step_mmbn", 4, 1, 0, 11, 5),      /* m11 += m5 * 2 */
	    enc("ldb8step_mmbn_si", 4, 2, 0, 12, -128), /* m12 -= 128 */
	    enc("ldb8step_mmbn", 4, 3, 0, 13, 5),       /* m13 += m5 */
	};
	Tile *t = worker_tile(w, 8);
	const uint8_t data[8] = {0x01, 0x81, 0xfe, 0x7f,
	                         0x00, 0x80, 0x55, 0xaa};
	put_bytes(t, D5 + 0x100, data, 8);
	M(t)[0] = D5 + 0x100;
	M(t)[1] = 1;            /* 0x81 */
	M(t)[4] = 1;            /* 0x81 */
	M(t)[5] = (uint32_t)-2; /* stride register */
	M(t)[7] = 2;            /* 0x7ffe */
	M(t)[9] = 4;            /* 0x8000 */
	M(t)[10] = 6;           /* 0xaa55 */
	M(t)[11] = 2;           /* 0x7ffe */
	M(t)[12] = 7;           /* 0xaa */
	M(t)[13] = 0;           /* 0x01 */
	go(t);
	assert_int_equal(M(t)[2], 0x81u);
	assert_int_equal(M(t)[1], 4);
	assert_int_equal(M(t)[3], 0xffffff81u);
	assert_int_equal(M(t)[4], (uint32_t)-1);
	assert_int_equal(M(t)[6], 0x7ffeu);
	assert_int_equal(M(t)[7], 0);
	assert_int_equal(M(t)[8], 0xffff8000u);
	assert_int_equal(M(t)[9], 0);
	assert_int_equal(A(t)[0], 0xaa55aa55u);
	assert_int_equal(M(t)[10], 10);
	assert_int_equal(A(t)[1], 0x7ffe7ffeu);
	assert_int_equal(M(t)[11], (uint32_t)-2);
	assert_int_equal(A(t)[2], 0xaaaaaaaau);
	assert_int_equal(M(t)[12], 7u - 128u);
	assert_int_equal(A(t)[3], 0x01010101u);
	assert_int_equal(M(t)[13], (uint32_t)-2);
	tile_free(t);
}

/* DECISION: a step load whose destination is also its delta register keeps
 * the loaded value; $mzero as the delta discards the write-back. */
static void
test_step_same_register(void **state)
{
	(void)state;
	uint32_t w[2] = {
	    enc("ld32step_mmmn_si", 4, 1, 0, 1, 1),
	    enc("ld32step_mmmn_si", 4, 2, 0, MZ, 1),
	};
	Tile *t = worker_tile(w, 2);
	M(t)[0] = D5;
	M(t)[1] = 4;
	put32(t, D5, 0xaaaa0000u);
	put32(t, D5 + 4, 0xbbbb0000u);
	go(t);
	assert_int_equal(M(t)[1], 0xbbbb0000u);
	assert_int_equal(M(t)[2], 0xaaaa0000u);
	assert_int_equal(M(t)[15], POISON);
	tile_free(t);
}

static void
test_stores(void **state)
{
	(void)state;
	uint32_t w[8] = {
	    enc("st32_mbmn", 4, 0, 0, 1, 2),       /* a0 -> D5 + 8 + 3*4 */
	    enc("st32_mbmn_zi", 4, 1, 0, 1, 4095), /* a1 -> D5 + 8 + 16380 */
	    enc("st32_mmmn_zi", 4, 3, 0, MZ, 1),   /* m3 -> D5 + 4 */
	    enc("st64_mbmn", 4, 2, 0, 1, 2),       /* a2:3 -> D5 + 8 + 24 */
	    enc("st64_mbmn_zi", 4, 4, 0, MZ, 6),   /* a4:5 -> D5 + 48 */
	    enc("stm32_mmmn", 3, 4, 0, 2),         /* m4 -> D5 + 3*4 */
	    enc("st32_mmmn_zi", 4, MZ, 0, MZ, 0),  /* $mzero -> D5 */
	    enc("st64_mbmn_zi", 4, 14, 0, MZ, 7),  /* $azeros -> D5 + 56 */
	};
	Tile *t = worker_tile(w, 8);
	for (uint32_t k = 0; k < 16; k++)
		put32(t, D5 + 4 * k, POISON);
	M(t)[0] = D5;
	M(t)[1] = 8;
	M(t)[2] = 3;
	M(t)[3] = 0x33333333u;
	M(t)[4] = 0x44444444u;
	A(t)[0] = 0xa0a0a0a0u;
	A(t)[1] = 0xa1a1a1a1u;
	A(t)[2] = 0xa2a2a2a2u;
	A(t)[3] = 0xa3a3a3a3u;
	A(t)[4] = 0xa4a4a4a4u;
	A(t)[5] = 0xa5a5a5a5u;
	go(t);
	assert_int_equal(get32(t, D5 + 20), 0xa0a0a0a0u);
	assert_int_equal(get32(t, D5 + 8 + 16380), 0xa1a1a1a1u);
	assert_int_equal(get32(t, D5 + 4), 0x33333333u);
	assert_int_equal(get32(t, D5 + 32), 0xa2a2a2a2u);
	assert_int_equal(get32(t, D5 + 36), 0xa3a3a3a3u);
	assert_int_equal(get32(t, D5 + 48), 0xa4a4a4a4u);
	assert_int_equal(get32(t, D5 + 52), 0xa5a5a5a5u);
	assert_int_equal(get32(t, D5 + 12), 0x44444444u);
	assert_int_equal(get32(t, D5), 0);
	assert_int_equal(get32(t, D5 + 56), 0);
	assert_int_equal(get32(t, D5 + 60), 0);
	assert_int_equal(get32(t, D5 + 8), POISON); /* untouched */
	tile_free(t);
}

static void
test_step_stores(void **state)
{
	(void)state;
	uint32_t w[7] = {
	    enc("st32step_mbmn", 4, 0, 0, 1, 2),       /* m1 += m2*4 */
	    enc("st32step_mbmn_si", 4, 1, 0, 3, -3),   /* m3 -= 12 */
	    enc("st32step_mmmn_si", 4, 4, 0, 5, 127),  /* m5 += 508 */
	    enc("st64step_mbmn", 4, 2, 0, 6, 2),       /* m6 += m2*8 */
	    enc("st64step_mbmn_si", 4, 4, 0, 7, -128), /* m7 -= 1024 */
	    enc("stm32step_mmmn", 3, 8, 9, 2),         /* m9 += m2*4 */
	    enc("stm32step_mmmn", 3, 10, 11, 12),      /* m11 += 4*4 */
	};
	Tile *t = worker_tile(w, 7);
	M(t)[0] = D5;
	M(t)[1] = 0x10;
	M(t)[2] = (uint32_t)-1;
	M(t)[3] = 0x14;
	M(t)[4] = 0x44444444u;
	M(t)[5] = 0x18;
	M(t)[6] = 0x20;
	M(t)[7] = 0x800;
	M(t)[8] = 0x88888888u;
	M(t)[9] = D5 + 0x30;
	M(t)[10] = 0xaaaaaaaau;
	M(t)[11] = D5 + 0x34;
	M(t)[12] = 4;
	A(t)[0] = 0xa0a0a0a0u;
	A(t)[1] = 0xa1a1a1a1u;
	A(t)[2] = 0xa2a2a2a2u;
	A(t)[3] = 0xa3a3a3a3u;
	A(t)[4] = 0xa4a4a4a4u;
	A(t)[5] = 0xa5a5a5a5u;
	go(t);
	assert_int_equal(get32(t, D5 + 0x10), 0xa0a0a0a0u);
	assert_int_equal(M(t)[1], 0x10 - 4);
	assert_int_equal(get32(t, D5 + 0x14), 0xa1a1a1a1u);
	assert_int_equal(M(t)[3], 0x14 - 12);
	assert_int_equal(get32(t, D5 + 0x18), 0x44444444u);
	assert_int_equal(M(t)[5], 0x18 + 508);
	assert_int_equal(get32(t, D5 + 0x20), 0xa2a2a2a2u);
	assert_int_equal(get32(t, D5 + 0x24), 0xa3a3a3a3u);
	assert_int_equal(M(t)[6], 0x20 - 8);
	assert_int_equal(get32(t, D5 + 0x800), 0xa4a4a4a4u);
	assert_int_equal(get32(t, D5 + 0x804), 0xa5a5a5a5u);
	assert_int_equal(M(t)[7], 0x800 - 1024);
	assert_int_equal(get32(t, D5 + 0x30), 0x88888888u);
	assert_int_equal(M(t)[9], D5 + 0x30 - 4);
	assert_int_equal(get32(t, D5 + 0x34), 0xaaaaaaaau);
	assert_int_equal(M(t)[11], D5 + 0x34 + 16);
	tile_free(t);
}

/* A store reads registers as they were before its bundle, even when the
 * aux half of the bundle overwrites the source. */
static void
test_store_sees_pre_bundle_value(void **state)
{
	(void)state;
	uint32_t w[2] = {
	    CO | enc("st32_mbmn_zi", 4, 0, 0, MZ, 0),
	    enc("not_aaan", 2, 0, 0),
	};
	Tile *t = worker_tile(w, 2);
	M(t)[0] = D5;
	A(t)[0] = 0x12345678u;
	go(t);
	assert_int_equal(get32(t, D5), 0x12345678u);
	assert_int_equal(A(t)[0], 0xedcba987u);
	tile_free(t);
}

/* Triple-packed addresses: the layout is a DECISION (see
 * docs/emulator-memory.md), restated here independently. */
static void
ta_pack_ref(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t *lo, uint32_t *hi)
{
	*lo = a0 | (a2 % 2048) << 21;
	*hi = a1 | (a2 / 2048) << 21;
}

static void
test_tapack(void **state)
{
	(void)state;
	uint32_t w[1] = {enc("tapack_mmmn", 4, 4, 0, 1, 2)};
	Tile *t = worker_tile(w, 1);
	M(t)[0] = 0x60008;
	M(t)[1] = 0x64010;
	M(t)[2] = 0x68018;
	go(t);
	/* 0x68018 = 0xd0 * 2048 + 0x18:
	 * lo = 0x60008 | 0x18 << 21, hi = 0x64010 | 0xd0 << 21 */
	assert_int_equal(M(t)[4], 0x03060008u);
	assert_int_equal(M(t)[5], 0x1a064010u);
	uint32_t lo, hi;
	ta_pack_ref(0xe7ff8, 0x4c000, 0xe7ff8, &lo, &hi);
	tile_free(t);
	t = worker_tile(w, 1);
	M(t)[0] = 0xe7ff8;
	M(t)[1] = 0x4c000;
	M(t)[2] = 0xe7ff8;
	go(t);
	assert_int_equal(M(t)[4], lo);
	assert_int_equal(M(t)[5], hi);
	tile_free(t);
}

/* Stride register for the pace tests: field0 = +2, field1 = -3,
 * field2 = +5 atoms. Selector s moves an address by step[s] atoms. */
#define PACE_STRIDE (2u | (0x3ffu - 2) << 10 | 5u << 20)
static const int32_t step_atoms[4] = {1, 2, -3, 5};

static void
test_ld2x64pace_selectors(void **state)
{
	(void)state;
	for (int s0 = 0; s0 < 4; s0++)
		for (int s1 = 0; s1 < 4; s1++) {
			uint32_t a0 = D5 + 0x100, a1 = D6 + 0x200, lo, hi;
			uint32_t w[2] = {
			    enc("tapack_mmmn", 4, 4, 0, 1, 2),
			    enc("ld2x64pace_mmbn_ef", 5, 0, 2, 4, 3,
			        s0 | s1 << 2),
			};
			Tile *t = worker_tile(w, 2);
			M(t)[0] = a0;
			M(t)[1] = a1;
			M(t)[2] = D7; /* A2, untouched */
			M(t)[3] = PACE_STRIDE;
			put32(t, a0, 0x1111u);
			put32(t, a0 + 4, 0x2222u);
			put32(t, a1, 0x3333u);
			put32(t, a1 + 4, 0x4444u);
			go(t);
			assert_int_equal(A(t)[0], 0x1111u);
			assert_int_equal(A(t)[1], 0x2222u);
			assert_int_equal(A(t)[2], 0x3333u);
			assert_int_equal(A(t)[3], 0x4444u);
			ta_pack_ref(a0 + 8 * step_atoms[s0],
			            a1 + 8 * step_atoms[s1], D7, &lo, &hi);
			assert_int_equal(M(t)[4], lo);
			assert_int_equal(M(t)[5], hi);
			tile_free(t);
		}
}

static void
test_ld2xst64pace_selectors(void **state)
{
	(void)state;
	for (int s = 0; s < 4; s++) {
		/* A0 steps by s, A1 by 3 - s, A2 by s (imm bits 5:4) */
		uint32_t a0 = D5 + 0x100, a1 = D6 + 0x200, a2 = D7 + 0x300;
		uint32_t lo, hi;
		uint32_t w[2] = {
		    enc("tapack_mmmn", 4, 6, 0, 1, 2),
		    enc("ld2xst64pace_mbbn_ef", 5, 0, 4, 6, 3,
		        s | (3 - s) << 2 | s << 4),
		};
		Tile *t = worker_tile(w, 2);
		M(t)[0] = a0;
		M(t)[1] = a1;
		M(t)[2] = a2;
		M(t)[3] = PACE_STRIDE;
		A(t)[4] = 0xa4a4a4a4u;
		A(t)[5] = 0xa5a5a5a5u;
		put32(t, a0, 0x1111u);
		put32(t, a0 + 4, 0x2222u);
		put32(t, a1, 0x3333u);
		put32(t, a1 + 4, 0x4444u);
		go(t);
		assert_int_equal(A(t)[0], 0x1111u);
		assert_int_equal(A(t)[1], 0x2222u);
		assert_int_equal(A(t)[2], 0x3333u);
		assert_int_equal(A(t)[3], 0x4444u);
		assert_int_equal(get32(t, a2), 0xa4a4a4a4u);
		assert_int_equal(get32(t, a2 + 4), 0xa5a5a5a5u);
		ta_pack_ref(a0 + 8 * step_atoms[s], a1 + 8 * step_atoms[3 - s],
		            a2 + 8 * step_atoms[s], &lo, &hi);
		assert_int_equal(M(t)[6], lo);
		assert_int_equal(M(t)[7], hi);
		tile_free(t);
	}
}

/* ldst64pace: load A0 (imm[1:0]), store to A2 (imm[3:2]); with the same
 * pair as source and destination the store sends the old value. */
static void
test_ldst64pace(void **state)
{
	(void)state;
	for (int s = 0; s < 4; s++) {
		uint32_t a0 = D5 + 0x100, a2 = D7 + 0x300, lo, hi;
		uint32_t w[2] = {
		    enc("tapack_mmmn", 4, 6, 0, 1, 2),
		    enc("ldst64pace_mbbn_ef", 5, 0, 0, 6, 3, (3 - s) | s << 2),
		};
		Tile *t = worker_tile(w, 2);
		M(t)[0] = a0;
		M(t)[1] = D6; /* A1, untouched */
		M(t)[2] = a2;
		M(t)[3] = PACE_STRIDE;
		A(t)[0] = 0xa0a0a0a0u;
		A(t)[1] = 0xa1a1a1a1u;
		put32(t, a0, 0x1111u);
		put32(t, a0 + 4, 0x2222u);
		go(t);
		assert_int_equal(A(t)[0], 0x1111u);
		assert_int_equal(A(t)[1], 0x2222u);
		assert_int_equal(get32(t, a2), 0xa0a0a0a0u);
		assert_int_equal(get32(t, a2 + 4), 0xa1a1a1a1u);
		ta_pack_ref(a0 + 8 * step_atoms[3 - s], D6,
		            a2 + 8 * step_atoms[s], &lo, &hi);
		assert_int_equal(M(t)[6], lo);
		assert_int_equal(M(t)[7], hi);
		tile_free(t);
	}
}

/* st64pace: store to A2 with selector imm[1:0]. */
static void
test_st64pace(void **state)
{
	(void)state;
	for (int s = 0; s < 4; s++) {
		uint32_t a2 = D7 + 0x300, lo, hi;
		uint32_t w[2] = {
		    enc("tapack_mmmn", 4, 6, 0, 1, 2),
		    enc("st64pace_mbmn_ef", 4, 2, 6, 3, s),
		};
		Tile *t = worker_tile(w, 2);
		M(t)[0] = D5;
		M(t)[1] = D6;
		M(t)[2] = a2;
		M(t)[3] = PACE_STRIDE;
		A(t)[2] = 0xa2a2a2a2u;
		A(t)[3] = 0xa3a3a3a3u;
		go(t);
		assert_int_equal(get32(t, a2), 0xa2a2a2a2u);
		assert_int_equal(get32(t, a2 + 4), 0xa3a3a3a3u);
		ta_pack_ref(D5, D6, a2 + 8 * step_atoms[s], &lo, &hi);
		assert_int_equal(M(t)[6], lo);
		assert_int_equal(M(t)[7], hi);
		tile_free(t);
	}
}

/* ld64a32pace / ld64b16pace: 64 bits from A0 into the pair, 32 bits or a
 * broadcast 16 bits from A1; A1 steps in units of its own access size. */
static void
test_ld64_narrow_pace(void **state)
{
	(void)state;
	for (int s = 0; s < 4; s++) {
		uint32_t a0 = D5 + 0x100, a1 = D6 + 0x200, lo, hi;
		uint32_t w[3] = {
		    enc("tapack_mmmn", 4, 6, 0, 1, 2),
		    enc("ld64a32pace_mmbn_ef", 5, 0, 2, 6, 3, s | s << 2),
		    enc("ld64b16pace_mmbn_ef", 5, 4, 3, 8, 3, s << 2),
		};
		Tile *t = worker_tile(w, 3);
		M(t)[0] = a0;
		M(t)[1] = a1;
		M(t)[2] = D7;
		M(t)[3] = PACE_STRIDE;
		put32(t, a0, 0x1111u);
		put32(t, a0 + 4, 0x2222u);
		put32(t, a1, 0xabcd1234u);
		/* second instruction's pair: A0 = a0, A1 = a1 + 2 */
		ta_pack_ref(a0, a1 + 2, D7, &M(t)[8], &M(t)[9]);
		go(t);
		assert_int_equal(A(t)[0], 0x1111u);
		assert_int_equal(A(t)[1], 0x2222u);
		assert_int_equal(A(t)[2], 0xabcd1234u);
		ta_pack_ref(a0 + 8 * step_atoms[s], a1 + 4 * step_atoms[s], D7,
		            &lo, &hi);
		assert_int_equal(M(t)[6], lo);
		assert_int_equal(M(t)[7], hi);
		assert_int_equal(A(t)[4], 0x1111u);
		assert_int_equal(A(t)[5], 0x2222u);
		assert_int_equal(A(t)[3], 0xabcdabcdu);
		/* A0 steps one atom (selector 0), A1 by s halves */
		ta_pack_ref(a0 + 8, a1 + 2 + 2 * step_atoms[s], D7, &lo, &hi);
		assert_int_equal(M(t)[8], lo);
		assert_int_equal(M(t)[9], hi);
		tile_free(t);
	}
}

static void
test_pace_invalid_destinations(void **state)
{
	(void)state;
	const uint32_t words[3] = {
	    enc("ld2x64pace_mmbn_ef", 5, 2, 2, 4, MZ, 0),
	    enc("ld64a32pace_mmbn_ef", 5, 2, 3, 4, MZ, 0),
	    enc("ld64b16pace_mmbn_ef", 5, 2, 2, 4, MZ, 0),
	};
	for (int i = 0; i < 3; i++) {
		Tile *t = worker_tile(&words[i], 1);
		ta_pack_ref(D5, D6, D7, &M(t)[4], &M(t)[5]);
		char rep[512];
		go_fault(t, FAULT_INVALID_OP, rep, sizeof rep);
		assert_int_equal(A(t)[2], POISON);
		tile_free(t);
	}
}

/* Sparse loads. */

static void
test_ldd16(void **state)
{
	(void)state;
	/* deltas at D5: 0x0010, 0x0020, 0x0008, 0x0018 (bytes from D6) */
	uint32_t w[3] = {
	    enc("ldd16a32_mmbn", 4, 0, 1, 2, 3), /* a0 <- [D6 + m3] */
	    enc("ldd16a64_mmbn", 4, 2, 1, 2, 3), /* a2:3 <- [D6 + m3] */
	    enc("ldd16b16_mmbn", 4, 4, 1, 2, 3), /* a4 <- b16 [D6 + m3] */
	};
	Tile *t = worker_tile(w, 3);
	const uint8_t deltas[8] = {0x10, 0, 0x20, 0, 0x08, 0, 0x18, 0};
	put_bytes(t, D5, deltas, 8);
	for (uint32_t k = 0; k < 16; k++)
		put32(t, D6 + 4 * k, 0x60000000u + 4 * k);
	M(t)[1] = D5;         /* pointer into the deltas */
	M(t)[2] = D6;         /* base */
	M(t)[3] = 0xffff0004; /* first delta 4; high half ignored */
	go(t);
	/* 1: data at D6+4, delta <- 0x10, ptr D5+2
	 * 2: data at D6+0x10 (pair), delta <- 0x20, ptr D5+4
	 * 3: data at D6+0x20 half 0x0020 broadcast, delta <- 0x08, ptr D5+6 */
	assert_int_equal(A(t)[0], 0x60000004u);
	assert_int_equal(A(t)[2], 0x60000010u);
	assert_int_equal(A(t)[3], 0x60000014u);
	assert_int_equal(A(t)[4], 0x00200020u);
	assert_int_equal(M(t)[3], 0x08);
	assert_int_equal(M(t)[1], D5 + 6);
	tile_free(t);

	/* ldd16v2a32 reads an aligned 32-bit delta pair and uses the upper
	 * delta of the old pair. */
	uint32_t v = enc("ldd16v2a32_mmbn", 4, 5, 1, 2, 3);
	t = worker_tile(&v, 1);
	put32(t, D5 + 8, 0x00240028u);
	for (uint32_t k = 0; k < 16; k++)
		put32(t, D6 + 4 * k, 0x60000000u + 4 * k);
	M(t)[1] = D5 + 8;
	M(t)[2] = D6;
	M(t)[3] = 0x000c0030u; /* upper delta 0x0c */
	go(t);
	assert_int_equal(A(t)[5], 0x6000000cu);
	assert_int_equal(M(t)[3], 0x00240028u);
	assert_int_equal(M(t)[1], D5 + 12);
	tile_free(t);
}

static void
test_ldd16_writebacks(void **state)
{
	(void)state;
	uint32_t w = enc("ldd16a32_mmbn", 4, 0, 1, 2, 3);
	Tile *t = worker_tile(&w, 1);
	const uint8_t deltas[2] = {0x34, 0x92};
	put_bytes(t, D5, deltas, 2);
	put32(t, D6 + 8, 0x77777777u);
	M(t)[1] = D5;
	M(t)[2] = D6;
	M(t)[3] = 8;
	go(t);
	assert_int_equal(A(t)[0], 0x77777777u);
	assert_int_equal(M(t)[1], D5 + 2);
	assert_int_equal(M(t)[3], 0x9234u); /* zero-extended */
	tile_free(t);
}

static void
test_ld64a32(void **state)
{
	(void)state;
	uint32_t w = enc("ld64a32_mmbn", 4, 4, 1, 2, 3);
	Tile *t = worker_tile(&w, 1);
	put32(t, D5 + 0x10, 0x1111u);
	put32(t, D5 + 0x14, 0x2222u);
	put32(t, D6 + 0x40, 0x3333u);
	M(t)[1] = D5 + 0x10;
	M(t)[2] = D6;
	M(t)[3] = 0x12340040u; /* lower 16 bits are the delta */
	go(t);
	assert_int_equal(A(t)[4], POISON); /* first of the quad unchanged */
	assert_int_equal(A(t)[5], 0x3333u);
	assert_int_equal(A(t)[6], 0x1111u);
	assert_int_equal(A(t)[7], 0x2222u);
	assert_int_equal(M(t)[1], D5 + 0x18);
	assert_int_equal(M(t)[3], 0x12340040u);
	tile_free(t);
}

static void
test_ldb16b16_faults_honestly(void **state)
{
	(void)state;
	uint32_t w = enc("ldb16b16_mmbn", 4, 0, 1, 2, 3);
	Tile *t = worker_tile(&w, 1);
	char rep[512];
	go_fault(t, FAULT_INVALID_INSTR, rep, sizeof rep);
	assert_non_null(strstr(rep, "not emulated"));
	tile_free(t);
}

/* Faults. */

static void
expect_fault(uint32_t word, uint32_t m0, FaultType type, const char *cause)
{
	Tile *t = worker_tile(&word, 1);
	M(t)[0] = m0;
	A(t)[0] = 0x0a0a0a0au;
	char rep[512];
	go_fault(t, type, rep, sizeof rep);
	if (!strstr(rep, cause) || !strstr(rep, "worker 0") ||
	    !strstr(rep, "pc 0x4c000"))
		fail_msg("report lacks context, pc or \"%s\": %s", cause, rep);
	assert_int_equal(t->fault.ctx, 1);
	assert_int_equal(t->fault.pc, chip_default()->mem_base);
	tile_free(t);
}

static void
test_misaligned(void **state)
{
	(void)state;
	expect_fault(enc("ld32_mmmn_zi", 4, 1, 0, MZ, 0), D5 + 2,
	             FAULT_INVALID_ADDR, "misaligned 4-byte load");
	expect_fault(enc("ldz16_mmmn_zi", 4, 1, 0, MZ, 0), D5 + 1,
	             FAULT_INVALID_ADDR, "misaligned 2-byte load");
	expect_fault(enc("ld64_mman_zi", 4, 2, 0, MZ, 0), D5 + 4,
	             FAULT_INVALID_ADDR, "misaligned 8-byte load");
	expect_fault(enc("ld128_mman_zi", 4, 4, 0, MZ, 0), IL + 8,
	             FAULT_INVALID_ADDR, "misaligned 16-byte load");
	expect_fault(enc("st32_mbmn_zi", 4, 0, 0, MZ, 0), D5 + 1,
	             FAULT_INVALID_ADDR, "misaligned 4-byte store");
	expect_fault(enc("st64_mbmn_zi", 4, 0, 0, MZ, 0), D5 + 4,
	             FAULT_INVALID_ADDR, "misaligned 8-byte store");
}

static void
test_out_of_range(void **state)
{
	(void)state;
	expect_fault(enc("ld32_mmmn_zi", 4, 1, 0, MZ, 0), 0x4bffc,
	             FAULT_INVALID_ADDR, "outside tile memory");
	expect_fault(enc("ld32_mmmn_zi", 4, 1, 0, MZ, 0), 0xe8000,
	             FAULT_INVALID_ADDR, "outside tile memory");
	expect_fault(enc("st32_mbmn_zi", 4, 0, 0, MZ, 0), 0, FAULT_INVALID_ADDR,
	             "outside tile memory");
	/* base + delta wraps past 2^32 */
	expect_fault(enc("ldz8_mmmn_zi", 4, 1, 0, MZ, 0), 0xffffffffu,
	             FAULT_INVALID_ADDR, "outside tile memory");
}

static void
test_ld128_region0(void **state)
{
	(void)state;
	expect_fault(enc("ld128_mman_zi", 4, 4, 0, MZ, 0), D5,
	             FAULT_INVALID_ADDR, "outside the interleaved region");
	expect_fault(enc("ld128step_mmbn_si", 4, 4, 0, MZ, 1), 0x7fff0,
	             FAULT_INVALID_ADDR, "outside the interleaved region");
}

/* Two accesses of one bundle in one memory element: CONFLICT, and nothing
 * of the bundle is committed (registers) or stored. */
static void
test_conflicts(void **state)
{
	(void)state;
	struct {
		uint32_t a0, a1, a2;
		int conflict;
	} cases[] = {
	    {D5, D5 + 0x100, D7, 1},           /* both loads in element 5 */
	    {D5, D6, D5 + 0x3ff8, 1},          /* store hits A0's element */
	    {D5, D6, D6 + 0x8, 1},             /* store hits A1's element */
	    {D5, D6, D7, 0},                   /* three elements */
	    {IL, IL + 8, D5, 0},               /* the two halves of a pair */
	    {IL, IL + 0x10, D5, 1},            /* same half of a pair */
	    {IL + 0x7ff8, IL + 0x8000, D5, 0}, /* next pair */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint32_t w = enc("ld2xst64pace_mbbn_ef", 5, 0, 4, 6, MZ, 0);
		Tile *t = worker_tile(&w, 1);
		ta_pack_ref(cases[i].a0, cases[i].a1, cases[i].a2, &M(t)[6],
		            &M(t)[7]);
		uint32_t m6 = M(t)[6];
		A(t)[4] = 0x44444444u;
		A(t)[5] = 0x55555555u;
		put32(t, cases[i].a2, 0x12345678u);
		if (!cases[i].conflict) {
			go(t);
			assert_int_equal(get32(t, cases[i].a2), 0x44444444u);
			tile_free(t);
			continue;
		}
		char rep[512];
		go_fault(t, FAULT_CONFLICT, rep, sizeof rep);
		if (!strstr(rep, "conflict") || !strstr(rep, "worker 0") ||
		    !strstr(rep, "pc 0x4c000"))
			fail_msg("case %zu: %s", i, rep);
		assert_int_equal(A(t)[0], POISON);
		assert_int_equal(M(t)[6], m6);
		assert_int_equal(get32(t, cases[i].a2), 0x12345678u);
		tile_free(t);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ld32_forms),
	    cmocka_unit_test(test_narrow_loads),
	    cmocka_unit_test(test_wide_loads),
	    cmocka_unit_test(test_step_loads),
	    cmocka_unit_test(test_narrow_step_loads),
	    cmocka_unit_test(test_step_same_register),
	    cmocka_unit_test(test_stores),
	    cmocka_unit_test(test_step_stores),
	    cmocka_unit_test(test_store_sees_pre_bundle_value),
	    cmocka_unit_test(test_tapack),
	    cmocka_unit_test(test_ld2x64pace_selectors),
	    cmocka_unit_test(test_ld2xst64pace_selectors),
	    cmocka_unit_test(test_ldst64pace),
	    cmocka_unit_test(test_st64pace),
	    cmocka_unit_test(test_ld64_narrow_pace),
	    cmocka_unit_test(test_pace_invalid_destinations),
	    cmocka_unit_test(test_ldd16),
	    cmocka_unit_test(test_ldd16_writebacks),
	    cmocka_unit_test(test_ld64a32),
	    cmocka_unit_test(test_ldb16b16_faults_honestly),
	    cmocka_unit_test(test_misaligned),
	    cmocka_unit_test(test_out_of_range),
	    cmocka_unit_test(test_ld128_region0),
	    cmocka_unit_test(test_conflicts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

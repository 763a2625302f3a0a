/* test_asm.c - the assembler: every row round-trips through the
 * disassembler, hand-encoded poplibs-style lines, expressions, macros,
 * local labels, directives and every error path with its location. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/asm/asm.h"

static void
print_errors(const DiagList *e)
{
	for (int i = 0; i < e->n; i++) {
		char buf[1400];
		diag_format(&e->v[i], buf, sizeof buf);
		print_message("%s\n", buf);
	}
}

/* Assemble or fail the test. */
static Obj *
as_ok(const char *src)
{
	Obj *o;
	DiagList e;
	AsmOptions opt = {.no_include = 1};
	if (asm_source("t.s", src, strlen(src), &opt, &o, &e)) {
		print_errors(&e);
		diaglist_free(&e);
		fail_msg("assembly failed:\n%s", src);
	}
	diaglist_free(&e);
	return o;
}

/* Assemble, expecting errors; returns the formatted first error. */
static DiagList
as_fail(const char *src)
{
	Obj *o;
	DiagList e;
	AsmOptions opt = {.no_include = 1};
	if (!asm_source("t.s", src, strlen(src), &opt, &o, &e)) {
		obj_free(o);
		fail_msg("expected an error from:\n%s", src);
	}
	assert_null(o);
	assert_true(e.n > 0);
	return e;
}

/* "t.s:L:C: <msg contains want>" for error i. */
static void
check_error(const DiagList *e, int i, int line, int col, const char *want)
{
	assert_true(i < e->n);
	const Diag *d = &e->v[i];
	if (strcmp(d->file, "t.s") || d->line != line || d->col != col ||
	    !strstr(d->msg, want)) {
		print_errors(e);
		fail_msg("error %d: want t.s:%d:%d: ...%s...", i, line, col,
		         want);
	}
}

static void
expect_error(const char *src, int line, int col, const char *want)
{
	DiagList e = as_fail(src);
	check_error(&e, 0, line, col, want);
	diaglist_free(&e);
}

static int
section(const Obj *o, const char *name)
{
	for (int i = 0; i < o->nsec; i++)
		if (!strcmp(o->sec[i].name, name))
			return i;
	fail_msg("no section %s", name);
	return -1;
}

static uint32_t
word_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint32_t
word(const Obj *o, const char *sec, int i)
{
	const ObjSection *s = &o->sec[section(o, sec)];
	assert_true((uint32_t)(i + 1) * 4 <= s->size);
	return word_at(s->data + 4 * i);
}

/* Assemble one line and return its only word. */
static uint32_t
one(const char *line)
{
	char src[512];
	snprintf(src, sizeof src, "\t%s\n", line);
	Obj *o = as_ok(src);
	assert_int_equal(o->sec[section(o, ".text")].size, 4);
	assert_int_equal(o->nrel, 0);
	uint32_t w = word(o, ".text", 0);
	obj_free(o);
	return w;
}

/* ---- round trip over the whole table ---- */

/* A value for operand spec s, varied by k (independent of test_isa's). */
static int32_t
sample(const OperandSpec *s, unsigned k)
{
	uint64_t span = (uint64_t)1 << s->width;
	uint64_t x = (k * 0x9e3779b1u + 12345u) % span;
	switch (s->kind) {
	case OPK_M:
	case OPK_A:
		return (int32_t)((k * 5 + 1) % 16);
	case OPK_MP:
	case OPK_AP:
		return (int32_t)(((k * 3) % 8) * 2);
	case OPK_AQ:
		return (int32_t)((k % 4) * 4);
	case OPK_U:
	case OPK_C:
	case OPK_CU:
		return (int32_t)(k == 0 ? 0 : k == 1 ? span - 1 : x);
	case OPK_S:
		return (int32_t)(k == 0   ? -(int64_t)(span / 2)
		                 : k == 1 ? (int64_t)(span / 2) - 1
		                          : (int64_t)x - (int64_t)(span / 2));
	case OPK_Z:
		return (int32_t)(uint32_t)((k == 1 ? span - 1 : x)
		                           << (32 - s->width));
	case OPK_T:
		return (int32_t)((k == 1 ? span - 1 : x) * 4);
	}
	return 0;
}

static Insn
sample_insn(int row, unsigned k)
{
	const InsnDesc *d = isa_row(row);
	Insn in = {.row = (int16_t)row, .nops = d->nops};
	for (int i = 0; i < d->nops; i++)
		in.op[i] = sample(&d->op[i], k + 3 * (unsigned)i);
	return in;
}

enum { SAMPLES = 12 };

/* encode -> disasm text -> assemble -> the same words, for every row (the
 * two-word sendpicp gives two words per sample). */
static void
test_roundtrip_rows(void **state)
{
	(void)state;
	for (int r = 0; r < isa_rows(); r++) {
		/* rpt rows with random bodies: no body alignment check */
		char src[SAMPLES * 160] = "\t.allow_invalid_repeat\n";
		uint32_t want[2 * SAMPLES];
		int nw = isa_words(isa_row(r));
		size_t n = strlen(src);
		for (unsigned k = 0; k < SAMPLES; k++) {
			Insn in = sample_insn(r, k);
			char text[160];
			uint32_t w[2];
			assert_int_equal(isa_encode_wide(&in, w), 0);
			memcpy(&want[k * (unsigned)nw], w,
			       (size_t)nw * sizeof *w);
			assert_int_equal(
			    disasm_insn(&in, ARCH_IPU21, text, sizeof text), 0);
			n += (size_t)snprintf(src + n, sizeof src - n, "\t%s\n",
			                      text);
		}
		Obj *o = as_ok(src);
		assert_int_equal(o->sec[section(o, ".text")].size,
		                 SAMPLES * 4 * nw);
		for (int k = 0; k < SAMPLES * nw; k++)
			if (word(o, ".text", k) != want[k])
				fail_msg("%s: word %d 0x%08x -> '%s' -> 0x%08x",
				         isa_row(r)->variant, k, want[k], src,
				         word(o, ".text", k));
		obj_free(o);
	}
}

/* Bundles: every main-lane row paired with an aux-lane row, through the
 * stream disassembler and back. */
static void
test_roundtrip_bundles(void **state)
{
	(void)state;
	int main_rows[ISA_ROWS], aux_rows[ISA_ROWS], nm = 0, na = 0;
	for (int r = 0; r < isa_rows(); r++) {
		const InsnDesc *d = isa_row(r);
		if (d->flags & F_SOLO)
			continue;
		if (d->lane == LANE_MAIN)
			main_rows[nm++] = r;
		else
			aux_rows[na++] = r;
	}
	int pairs = nm > na ? nm : na;
	uint8_t *bytes = malloc((size_t)pairs * 3 * 8);
	size_t len = 0;
	for (int p = 0; p < pairs * 3; p++) {
		uint32_t a, b;
		Insn ia = sample_insn(main_rows[p % nm], (unsigned)p);
		Insn ib = sample_insn(aux_rows[p % na], (unsigned)p + 7);
		assert_int_equal(isa_encode(&ia, &a), 0);
		assert_int_equal(isa_encode(&ib, &b), 0);
		a |= 0x80000000u;
		for (int i = 0; i < 4; i++) {
			bytes[len + (size_t)i] = (uint8_t)(a >> (8 * i));
			bytes[len + 4 + (size_t)i] = (uint8_t)(b >> (8 * i));
		}
		len += 8;
	}
	char *text = disasm_bytes(bytes, len, 0, ARCH_IPU21, DIS_PLAIN);
	assert_non_null(strstr(text, "{ "));
	char *src = malloc(strlen(text) + 32);
	sprintf(src, "\t.allow_invalid_repeat\n%s", text);
	Obj *o = as_ok(src);
	free(src);
	const ObjSection *s = &o->sec[section(o, ".text")];
	assert_int_equal(s->size, len);
	for (size_t i = 0; i < len; i += 4)
		if (word_at(s->data + i) != word_at(bytes + i))
			fail_msg("word %zu: 0x%08x became 0x%08x", i / 4,
			         word_at(bytes + i), word_at(s->data + i));
	obj_free(o);
	free(text);
	free(bytes);
}

/* ---- hand-checked encodings (fields from insns.def, by hand) ---- */

static void
test_known_encodings(void **state)
{
	(void)state;
	/* ld32_mmmn_zi 0x01000000: base[23:20]=0, dst[19:16]=1,
	 * delta[15:12]=15 ($mzero), imm[11:0]=2 */
	assert_int_equal(one("ld32 $m1, $m0, $mzero, 2"), 0x0101f002);
	/* add_mmmn_zi 0x20000000: src 0 [23:20], dst 0 [19:16], 48 */
	assert_int_equal(one("add $m0, $m0, 48"), 0x20000030);
	/* add_mmmn_si 0x22000000: src 2, dst 1, -4 = 0xfffc */
	assert_int_equal(one("add $m1, $m2, -4"), 0x2221fffc);
	/* setzi_aaan_zi 0x1a000000: $a0 [23:20], ZAACC_BITMASK = 8 */
	assert_int_equal(one("setzi $a0, ZAACC_BITMASK"), 0x1a000008);
	/* uput_aaan_zi 0x51008000: $FP_CLR = 0x101 -> low byte 1 */
	assert_int_equal(one("uput $FP_CLR, $a0"), 0x51008001);
	/* f32v2add_aaan 0x58000003: dst 0 [7:4], src0 2 [23:20],
	 * src1 4 [15:12] */
	assert_int_equal(one("f32v2add $a0:1, $a2:3, $a4:5"), 0x58204003);
	/* f16v2add_aaau 0x580c0001: dst 0, src0 1 (:BU), src1 2 */
	assert_int_equal(one("f16v2add $a0, $a1:BU, $a2"), 0x581c2001);
	/* ld2x64pace 0x46000000: $a0:1 [19:16]=0, $a2:3 [7:4]=2,
	 * $m4:5 [15:12]=4, $m6 [23:20], selectors 0b0101 */
	assert_int_equal(one("ld2x64pace $a0:1, $a2:3, $m4:5+=, $m6, 0b0101"),
	                 0x46604025);
	/* or_mmmn_iz 0x4200c000: 0x100000 >> 20 = 1 in [11:0] */
	assert_int_equal(one("or $m0, $m0, 0x100000"), 0x4200c001);
	/* sync 0x41800000 | zone */
	assert_int_equal(one("sync TEXCH_SYNCZONE_LOCAL"), 0x41800002);
	/* call 0x18000000 | $lr (10) << 20 | 0x4c100 >> 2 */
	assert_int_equal(one("call $lr, 0x4c100"), 0x18a13040);
	/* st32step_mbmn_si 0x5c000000: $a0, base $mzero, $m1+=, stride 1
	 * (value bits 3:0 in word bits 19:16) */
	assert_int_equal(one("st32step $a0, $mzero, $m1+=, 1"), 0x5cf11000);
	/* get_mmmn_zi 0x41000000: dst 0 [19:16], $WSR = 1 */
	assert_int_equal(one("get $m0, $WSR"), 0x41000001);
	/* ld64putcs 0x4100c000 | 4*1 + 2 */
	assert_int_equal(one("ld64putcs $CWEI_1_2"), 0x4100c006);
	/* the pseudo-instructions */
	assert_int_equal(one("nop"), 0x42ff9000);
	assert_int_equal(one("fnop"), 0x52ff9000);
	/* zero $a3 is or $a3, $azero, $azero (LLVM's alias): or_aaan
	 * 0x58000e00, dst 3 [7:4], 15 [23:20], 15 [15:12] */
	assert_int_equal(one("zero $a3"), 0x58f0fe30);
	assert_int_equal(one("mov $m1, $m2"), 0x42219000);
	/* a forced variant: add_mmmn_si with a positive value */
	assert_int_equal(one("add_mmmn_si $m1, $m2, 4"), 0x22210004);
	/* aliases: $sp = $m11, $mworker_base = $m12 */
	assert_int_equal(one("add $sp, $mworker_base, 0"), 0x20cb0000);
}

static void
test_bundle_forms(void **state)
{
	(void)state;
	/* rpt_mmmn_zi 0x4300a000 | 3<<20 | 3, co-issued; fnop 0x52ff9000 */
	Obj *o = as_ok("\t.align 8\n"
	               "{ rpt $m3, 3 ; fnop }\n"
	               "{\n"
	               "  ld32 $a0, $m0, $mzero, 1\n"
	               "  f32add $a1, $a2, $a3\n"
	               "}\n"
	               "{ nop\n fnop }\n");
	assert_int_equal(word(o, ".text", 0), 0xc330a003);
	assert_int_equal(word(o, ".text", 1), 0x52ff9000);
	/* ld32_mman_zi 0x08000000: $a0 [19:16], base 0, delta 15, 1 */
	assert_int_equal(word(o, ".text", 2), 0x8800f001);
	/* f32add 0x58000000: dst 1 [7:4], 2 [23:20], 3 [15:12] */
	assert_int_equal(word(o, ".text", 3), 0x58203010);
	assert_int_equal(word(o, ".text", 4), 0xc2ff9000);
	assert_int_equal(word(o, ".text", 5), 0x52ff9000);
	obj_free(o);
}

/* The exchange rows of ipu-stack.md 3.2; words built by hand from the field
 * positions in insns.def (and in test_isa.c's test_known_words). */
static void
test_exchange(void **state)
{
	(void)state;
	/* delaypic 0x60000000 | 5<<19 | 1<<18 | 0x12345 */
	assert_int_equal(one("delaypic 5, 1, 0x12345"), 0x602d2345);
	/* delayxpic 0x64000000 | 100<<14 | 1<<13 | 0x1abc */
	assert_int_equal(one("delayxpic 100, 1, 0x1abc"), 0x64193abc);
	/* sendoff 0x70000000 | (0x9c5 & 63)<<21 | (0x9c5 >> 6)<<14 |
	 * 0x5a5<<3 | 3 */
	assert_int_equal(one("sendoff 0x9c5, 0x5a5, 3"), 0x70a9ed2b);
	/* sendpic 0x70100000 | 63<<21 | 2<<18 | 0x3ffff */
	assert_int_equal(one("sendpic 63, 2, 0x3ffff"), 0x77fbffff);
	/* sendpicp: 0xf0000000 | 1<<27 | 13<<21 | 0x13000<<3 | 7, then
	 * 0x2abc<<18 | 0x31234; 8 bytes, and the section is 8-aligned. */
	Obj *o = as_ok("\t.supervisor\n"
	               "\tsendpicp 1, 13, 0x13000, 7, 0x2abc, 0x31234\n"
	               "\tsendpicp 0, 0, 0, 0, 0, 0\n"
	               "\tnop\n");
	const ObjSection *t = &o->sec[section(o, ".text")];
	assert_int_equal(t->size, 20);
	assert_int_equal(t->align, 8);
	assert_int_equal(word(o, ".text", 0), 0xf9a98007);
	assert_int_equal(word(o, ".text", 1), 0xaaf31234);
	assert_int_equal(word(o, ".text", 2), 0xf0000000);
	assert_int_equal(word(o, ".text", 3), 0);
	assert_int_equal(word(o, ".text", 4), 0x42ff9000);
	obj_free(o);
	/* Relocation of a first-word operand: R_IPU_OPERAND0 + 2 at the
	 * instruction; the second word is untouched. */
	o = as_ok("\tsendpicp 0, 0, ext, 1, 2, 3\n");
	assert_int_equal(o->nrel, 1);
	assert_int_equal(o->rel[0].type, R_IPU_OPERAND0 + 2);
	assert_int_equal(o->rel[0].offset, 0);
	assert_int_equal(word(o, ".text", 0), 0xf0000001);
	assert_int_equal(word(o, ".text", 1), 2u << 18 | 3);
	char *text = disasm_obj(o, ARCH_IPU21, DIS_PLAIN);
	assert_non_null(strstr(text, "\tsendpicp 0, 0, ext, 1, 2, 3\n"));
	free(text);
	obj_free(o);
	/* Errors: alignment, bundling, relocating the second word, range,
	 * context. */
	expect_error("\tnop\n\tsendpicp 0, 0, 0, 0, 0, 0\n", 2, 2,
	             "'sendpicp' at .text+0x4 is not 8-byte aligned: it is a "
	             "two-word instruction");
	expect_error("\t{ sendpicp 0, 0, 0, 0, 0, 0 ; fnop }\n", 1, 4,
	             "'sendpicp' is a two-word instruction and cannot be "
	             "bundled");
	expect_error("\tsendpicp 0, 0, 0, 0, ext, 0\n", 1, 23,
	             "operand 5 of 'sendpicp' is in its second word, which "
	             "cannot be relocated");
	expect_error("\tsendpicp 0, 0, 0, 0, 0, 0x40000\n", 1, 26,
	             "out of range for operand 6 of 'sendpicp': allowed "
	             "0..262143");
	expect_error("\tdelaypic 128, 0, 0\n", 1, 11, "allowed 0..127");
	expect_error("\t{ sendpic 0, 0, 0 ; fnop }\n", 1, 4,
	             "'sendpic' cannot be bundled");
	expect_error("\t.worker\n\tsendoff 0, 0, 0\n", 2, 2,
	             "'sendoff' is a supervisor-only instruction");
}

static void
test_expressions(void **state)
{
	(void)state;
	Obj *o = as_ok("\t.data\n"
	               "\t.equ X, 5\n"
	               "Y = X * 2\n"
	               "\t.word (3+4)*2, 1<<4|1, -1, ~0 & 0xff, 10/3, 10%3\n"
	               "\t.word 'A', 0b101, 0x10 >> 2, X + Y, -X, 7 ^ 2\n"
	               "a:\t.word b - a, . - a\n"
	               "b:\t.short 0xffff, -2\n"
	               "\t.byte 1, 255\n"
	               "\t.set X, 9\n"
	               "\t.word X\n"
	               "\t.float 1.5, -2\n");
	uint32_t want[] = {14, 17, 0xffffffff, 255,          3, 1, 65,
	                   5,  4,  15,         (uint32_t)-5, 5, 8, 4};
	for (int i = 0; i < 14; i++)
		assert_int_equal(word(o, ".data", i), want[i]);
	const ObjSection *s = &o->sec[section(o, ".data")];
	assert_int_equal(s->data[56], 0xff);
	assert_int_equal(s->data[58], 0xfe);
	assert_int_equal(s->data[59], 0xff);
	assert_int_equal(s->data[60], 1);
	assert_int_equal(s->data[61], 255);
	assert_int_equal(word_at(s->data + 62), 9);
	assert_int_equal(word_at(s->data + 66), 0x3fc00000); /* 1.5f */
	assert_int_equal(word_at(s->data + 70), 0xc0000000); /* -2.0f */
	obj_free(o);
	/* A label difference inside an instruction, as poplibs uses. */
	o = as_ok("\tnop\n"
	          "\t.align 8\n"
	          "\t{ rpt $m0, (2f - 1f) / 8 - 1 ; fnop }\n"
	          "1:\t{ nop ; fnop }\n"
	          "\t{ nop ; fnop }\n"
	          "2:\n");
	/* .align 8 in code pads with a nop */
	assert_int_equal(word(o, ".text", 1), 0x42ff9000);
	/* rpt_mmmn_zi 0x4300a000 | 0<<20 | (16/8 - 1), co-issued */
	assert_int_equal(word(o, ".text", 2), 0xc300a001);
	obj_free(o);
}

static void
test_macros(void **state)
{
	(void)state;
	Obj *o = as_ok(".macro inc reg, n=1\n"
	               "\tadd \\reg, \\reg, \\n\n"
	               ".endm\n"
	               ".macro pair a b\n"
	               "\tinc \\a\n"
	               "\tinc \\b, 3\n"
	               ".endm\n"
	               "\tinc $m1\n"
	               "\tinc $m2, 5\n"
	               "\tpair $m3, $m4\n"
	               ".rept 2\n"
	               "\tnop\n"
	               ".endr\n");
	/* add_mmmn_zi 0x20000000 | r<<20 | r<<16 | n */
	assert_int_equal(word(o, ".text", 0), 0x20110001);
	assert_int_equal(word(o, ".text", 1), 0x20220005);
	assert_int_equal(word(o, ".text", 2), 0x20330001);
	assert_int_equal(word(o, ".text", 3), 0x20440003);
	assert_int_equal(word(o, ".text", 4), 0x42ff9000);
	assert_int_equal(word(o, ".text", 5), 0x42ff9000);
	assert_int_equal(o->sec[section(o, ".text")].size, 24);
	obj_free(o);
	/* \@ gives each expansion its own labels. */
	o = as_ok(".macro loop\n"
	          "L\\@:\tbrnzdec $m0, L\\@\n"
	          ".endm\n"
	          "\tloop\n"
	          "\tloop\n");
	assert_int_equal(o->nrel, 2);
	assert_int_equal(o->rel[0].addend, 0);
	assert_int_equal(o->rel[1].addend, 4);
	obj_free(o);
}

static void
test_local_labels_and_relocs(void **state)
{
	(void)state;
	Obj *o = as_ok("\t.globl _start\n"
	               "_start:\n"
	               "1:\tnop\n"
	               "\tbrnz $m0, 1b\n"
	               "\tbrz $m1, 1f\n"
	               "1:\tnop\n"
	               "\tcall $lr, ext\n"
	               "\t.data\n"
	               "\t.word 1b + 4, ext - 8\n");
	/* brnz: operand 1 -> .text+0; brz -> .text+12; call -> ext;
	 * data: .text+16, ext-8 */
	assert_int_equal(o->nrel, 5);
	const ObjReloc *r = o->rel;
	assert_int_equal(r[0].type, R_IPU_OPERAND0 + 1);
	assert_int_equal(r[0].offset, 4);
	assert_int_equal(r[0].addend, 0);
	assert_int_equal(r[1].offset, 8);
	assert_int_equal(r[1].addend, 12);
	assert_string_equal(o->sym[r[2].symbol].name, "ext");
	assert_int_equal(o->sym[r[2].symbol].section, OBJ_UNDEF);
	assert_int_equal(r[3].type, R_IPU_32);
	assert_int_equal(r[3].addend, 16);
	assert_int_equal(r[4].addend, -8);
	int s = obj_find_symbol(o, "_start");
	assert_true(s >= 0);
	assert_int_equal(o->sym[s].bind, SYMB_GLOBAL);
	obj_free(o);
}

static void
test_directives(void **state)
{
	(void)state;
	Obj *o = as_ok("\t.section .text.k, \"ax\"\n"
	               "\t.globl f\n"
	               "\t.type f, @function\n"
	               "f:\tnop\n"
	               "\tnop\n"
	               "\t.size f, . - f\n"
	               "\t.section .bss.buf, \"aw\", @nobits\n"
	               "\t.align 16\n"
	               "buf:\t.space 64\n"
	               "\t.data\n"
	               "\t.ascii \"ab\"\n"
	               "\t.asciz \"c\\n\"\n"
	               "\t.zero 2\n"
	               "\t.p2align 3\n"
	               "\t.byte 7\n"
	               "\t.worker\n"
	               "\t.text\n"
	               "\tf32add $a0, $a1, $a2\n");
	int f = obj_find_symbol(o, "f");
	assert_int_equal(o->sym[f].type, SYMT_FUNC);
	assert_int_equal(o->sym[f].size, 8);
	const ObjSection *b = &o->sec[section(o, ".bss.buf")];
	assert_true(b->flags & SECF_NOBITS);
	assert_int_equal(b->size, 64);
	assert_int_equal(b->align, 16);
	const ObjSection *d = &o->sec[section(o, ".data")];
	assert_int_equal(d->size, 9);
	assert_memory_equal(d->data, "abc\n\0\0\0\0\7", 9);
	assert_true(o->sec[section(o, ".text.k")].flags & SECF_EXEC);
	obj_free(o);
}

/* ---- errors ---- */

static void
test_errors(void **state)
{
	(void)state;
	expect_error("\tnop\n  ad $m0, $m0, 1\n", 2, 3,
	             "unknown instruction 'ad'; did you mean 'add'?");
	expect_error("\tadd $m0, $m1\n", 1, 2,
	             "wrong number of operands (2) for 'add'");
	expect_error("\tadd $m0, $a1, 3\n", 1, 2,
	             "invalid operands for 'add'; accepted forms: add $mN, "
	             "$mN, $mN");
	expect_error("\tadd $m0, $m1, 70000\n", 1, 16,
	             "immediate 70000 (0x11170) out of range for operand 3 of "
	             "'add': allowed 0..65535 (add_mmmn_zi) or -32768..32767 "
	             "(add_mmmn_si)");
	expect_error("\tsetzi $m0, 1 << 20\n", 1, 13, "allowed 0..1048575");
	expect_error("\t{ fnop ; nop }\n", 1, 4,
	             "'or' is an aux-lane instruction: a bundle is { main-lane "
	             "; aux-lane }");
	expect_error("\t{ exitz $mzero ; fnop }\n", 1, 4,
	             "'exitz' cannot be bundled");
	expect_error("\t{ nop }\n", 1, 2, "a bundle needs two instructions");
	expect_error("\t{ nop ; fnop\n", 1, 2, "bundle is not closed");
	expect_error("\t.frob 3\n", 1, 2, "unknown directive '.frob'");
	expect_error("\tbrz $m0, 1f\n", 1, 11,
	             "local label '1' is not defined");
	expect_error("\tbrz $m0, 1b\n", 1, 11, "no local label '1' before");
	expect_error("\tld64 $a1:2, $m0, $m1, 0\n", 1, 7,
	             "'$a1:2' is not a register pair or quad");
	expect_error("\tf16v2add $a0, $a1:BX, $a2\n", 1, 20,
	             "unknown decoration ':BX'");
	expect_error("\tget $m0, $NOPE\n", 1, 11,
	             "unknown register or control register '$NOPE'");
	expect_error("x:\nx:\n", 2, 1, "symbol 'x' is already defined");
	expect_error("\t.word 1 +\n", 1, 11, "expected an expression");
	expect_error("\t.byte 256\n", 1, 8, "does not fit 1 byte");
	expect_error("\t.data\n\tnop\n", 2, 2, "instruction in data section");
	expect_error("\t.word a - b\n\t.data\nb:\n\t.text\na:\n", 1, 10,
	             "labels of different sections");
	expect_error("\tadd $m0, $m0, x * 2\n", 1, 18, "not relocatable");
	expect_error("\t.rept 2\n\tnop\n", 1, 1, "'.rept' without '.endr'");
	expect_error("\t.include \"x.s\"\n", 1, 2, ".include is disabled");
	expect_error("\t.word 1 / 0\n", 1, 10, "division by zero");
	expect_error("\t.equ a, b\n\t.equ b, a\n\t.word a\n", 1, 7,
	             "defined in terms of itself");
	expect_error("\tnop $m0\n", 1, 2, "'nop' takes no operands");
	expect_error("\t.align 3\n", 1, 9, "not a power of two");
	expect_error("\tadd $m0, $m0, 1 2\n", 1, 18, "unexpected '2'");
	expect_error("\tadd $m0, $m0, @\n", 1, 16, "expected an expression");
	expect_error("\t.float x\n", 1, 9, "expected a floating-point number");
	expect_error("\t`\n", 1, 2, "unexpected character '`'");
	expect_error("/* open\n", 1, 1, "comment started here is not closed");
	expect_error(".macro m\n\tnop\n\tm\n.endm\n\tm\n", 3, 2,
	             "nested too deeply");
	/* The caret line is the source line. */
	DiagList e = as_fail("\tadd $m0, $m1, 99999\n");
	assert_string_equal(e.v[0].source_line, " add $m0, $m1, 99999");
	diaglist_free(&e);
}

/* Several errors in one run, in source order, across both passes. */
static void
test_many_errors(void **state)
{
	(void)state;
	DiagList e = as_fail("\tadd $m0, $m0, 1 << 20\n" /* pass 2 */
	                     "\tfoo\n"                   /* pass 1 */
	                     "\tnop\n"
	                     "\tbar $m0\n"         /* pass 1 */
	                     "\tsetzi $a0, -1\n"); /* pass 2 */
	assert_int_equal(e.n, 4);
	check_error(&e, 0, 1, 16, "out of range");
	check_error(&e, 1, 2, 2, "unknown instruction 'foo'");
	check_error(&e, 2, 4, 2, "unknown instruction 'bar'");
	check_error(&e, 3, 5, 13, "out of range");
	diaglist_free(&e);
	/* At most max_errors. */
	char src[4000] = "";
	for (int i = 0; i < 50; i++)
		strcat(src, "\tbad\n");
	Obj *o;
	AsmOptions opt = {.no_include = 1, .max_errors = 5};
	assert_int_equal(asm_source("t.s", src, strlen(src), &opt, &o, &e),
	                 IPU_EINVAL);
	assert_int_equal(e.n, 5);
	diaglist_free(&e);
}

static void
test_arch(void **state)
{
	(void)state;
	/* f8v2tof16 is ipu21-only: fine on the c600, an error on gc200. */
	const char *src = "\tf8v2tof16 $a0, $a1\n";
	Obj *o = as_ok(src);
	assert_true(o->flags & OBJF_IPU21);
	obj_free(o);
	DiagList e;
	AsmOptions opt = {.chip = chip_by_name("gc200"), .no_include = 1};
	assert_int_equal(asm_source("t.s", src, strlen(src), &opt, &o, &e),
	                 IPU_EINVAL);
	check_error(&e, 0, 1, 2, "not available on gc200");
	diaglist_free(&e);
	/* .supervisor code may not use worker-only instructions. */
	expect_error("\t.supervisor\n\tf32add $a0, $a1, $a2\n", 2, 2,
	             "worker-only instruction");
}

static void
test_include(void **state)
{
	(void)state;
	char dir[] = "/tmp/ipu_asm_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char inc[256], top[256];
	snprintf(inc, sizeof inc, "%s/inc.s", dir);
	snprintf(top, sizeof top, "%s/top.s", dir);
	FILE *f = fopen(inc, "w");
	fputs("\t.equ K, 7\n\tadd $m0, $m0, K\n", f);
	fclose(f);
	f = fopen(top, "w");
	fputs("\t.include \"inc.s\"\n\tadd $m1, $m1, K\n", f);
	fclose(f);
	Obj *o;
	DiagList e;
	assert_int_equal(asm_file(top, NULL, &o, &e), 0);
	assert_int_equal(word(o, ".text", 0), 0x20000007);
	assert_int_equal(word(o, ".text", 1), 0x20110007);
	obj_free(o);
	/* An error inside the included file names that file. */
	f = fopen(inc, "w");
	fputs("\tnop\n\tbogus\n", f);
	fclose(f);
	assert_int_equal(asm_file(top, NULL, &o, &e), IPU_EINVAL);
	assert_string_equal(e.v[0].file, inc);
	assert_int_equal(e.v[0].line, 2);
	diaglist_free(&e);
	remove(inc);
	remove(top);
	rmdir(dir);
}

/* ---- the assembly of real projects (poplibs, the rival's kernels) ---- */

/* Assemble with options; fail the test on errors. */
static Obj *
as_ok_opt(const char *src, AsmOptions *opt)
{
	Obj *o;
	DiagList e;
	opt->no_include = 1;
	if (asm_source("t.s", src, strlen(src), opt, &o, &e)) {
		print_errors(&e);
		diaglist_free(&e);
		fail_msg("assembly failed:\n%s", src);
	}
	diaglist_free(&e);
	return o;
}

static int
nwords(const Obj *o)
{
	return (int)o->sec[section(o, ".text")].size / 4;
}

/* The words of .text against want[n]. */
static void
check_words(const Obj *o, const uint32_t *want, int n)
{
	assert_int_equal(nwords(o), n);
	for (int i = 0; i < n; i++)
		if (word(o, ".text", i) != want[i])
			fail_msg("word %d: 0x%08x, want 0x%08x", i,
			         word(o, ".text", i), want[i]);
}

/* add_mmmn_zi $m0, $m0, k (0x20000000 | k): a marker word. */
#define MARK(k) (0x20000000u | (k))

static void
test_conditionals(void **state)
{
	(void)state;
	Obj *o = as_ok("\t.if 1\n\tadd $m0, $m0, 1\n\t.else\n"
	               "\tadd $m0, $m0, 2\n\t.endif\n"
	               "\t.if 2 - 2\n\tadd $m0, $m0, 3\n"
	               "\t.elseif 1 == 1 && 2 > 1\n\tadd $m0, $m0, 4\n"
	               "\t.elseif 1\n\tadd $m0, $m0, 5\n"
	               "\t.else\n\tadd $m0, $m0, 6\n\t.endif\n"
	               /* nested; the inner .error is skipped */
	               "\t.if 0\n\t.if 1\n\t.error \"no\"\n\t.endif\n"
	               "\t.else\n\t.if 1\n\tadd $m0, $m0, 7\n\t.endif\n"
	               "\t.endif\n"
	               "\t.ifeq 0\n\tadd $m0, $m0, 8\n\t.endif\n"
	               "\t.ifne 0\n\tadd $m0, $m0, 99\n\t.endif\n"
	               "\t.iflt -1\n\tadd $m0, $m0, 9\n\t.endif\n"
	               "\t.ifgt 0\n\tadd $m0, $m0, 99\n\t.endif\n"
	               "\t.ifge 0\n\tadd $m0, $m0, 10\n\t.endif\n"
	               "\t.ifle 1\n\tadd $m0, $m0, 99\n\t.endif\n");
	uint32_t w1[] = {MARK(1), MARK(4), MARK(7), MARK(8), MARK(9), MARK(10)};
	check_words(o, w1, 6);
	obj_free(o);
	/* .ifdef: labels and assignments made so far; .ifc compares the text
	 * as written (quotes and all), as LLVM; .ifb. */
	o = as_ok("here:\n\t.set K, 1\n"
	          "\t.ifdef here\n\tadd $m0, $m0, 1\n\t.endif\n"
	          "\t.ifdef K\n\tadd $m0, $m0, 2\n\t.endif\n"
	          "\t.ifdef later\n\tadd $m0, $m0, 99\n\t.endif\n"
	          "\t.ifndef later\n\tadd $m0, $m0, 3\n\t.endif\n"
	          "\t.ifdef TEXCH_SYNCZONE_LOCAL\n\tadd $m0, $m0, 4\n\t.endif\n"
	          "\t.ifc half , half\n\tadd $m0, $m0, 5\n\t.endif\n"
	          "\t.ifc \"a\", a\n\tadd $m0, $m0, 99\n\t.endif\n"
	          "\t.ifnc \"a\", \"b\"\n\tadd $m0, $m0, 6\n\t.endif\n"
	          "\t.ifeqs \"a\", \"a\"\n\tadd $m0, $m0, 7\n\t.endif\n"
	          "\t.ifb\n\tadd $m0, $m0, 8\n\t.endif\n"
	          "\t.ifnb x\n\tadd $m0, $m0, 9\n\t.endif\n"
	          "later:\n");
	uint32_t w2[] = {MARK(1), MARK(2), MARK(3), MARK(4), MARK(5),
	                 MARK(6), MARK(7), MARK(8), MARK(9)};
	check_words(o, w2, 9);
	obj_free(o);
	/* In a macro, on its parameters (poplibs' .ifc \TYPE, half), and
	 * in .rept; a skipped branch defines no macro. */
	o = as_ok(".macro pick t n\n"
	          ".ifc \\t, half\n\tadd $m0, $m0, 1\n"
	          ".elseif \\n == 3\n\tadd $m0, $m0, 3\n"
	          ".else\n\tadd $m0, $m0, 2\n.endif\n"
	          ".endm\n"
	          "\tpick half 0\n\tpick float 0\n\tpick float 3\n"
	          ".rept 2\n.if 1\n\tadd $m0, $m0, 4\n.endif\n.endr\n");
	uint32_t w3[] = {MARK(1), MARK(2), MARK(3), MARK(4), MARK(4)};
	check_words(o, w3, 5);
	obj_free(o);
	expect_error(".if 0\n.macro never\n.endm\n.endif\n\tnever\n", 5, 2,
	             "unknown instruction 'never'");
	/* RPT_ALIGNED_TO: .if on the distance from a label (constant). */
	o = as_ok("\t.align 8\nstart:\n\tnop\n"
	          "\t.if (. - start) & 7\n\tadd $m0, $m0, 1\n"
	          "\t.else\n\tadd $m0, $m0, 2\n\t.endif\n");
	uint32_t w4[] = {0x42ff9000, MARK(1)};
	check_words(o, w4, 2);
	obj_free(o);
	/* Errors, with where. */
	expect_error("\tnop\n\t.if 1\n\tnop\n", 2, 2, "'.if' without '.endif'");
	expect_error("\t.else\n", 1, 2, "'.else' without '.if'");
	expect_error("  .endif\n", 1, 3, "'.endif' without '.if'");
	expect_error("\t.if 1\n\t.else\n\t.elseif 1\n\t.endif\n", 3, 2,
	             "'.elseif' after '.else' (the '.if' is at t.s:1)");
	expect_error("\t.if x\n\t.endif\nx:\n", 1, 6, "'x' is not defined yet");
	expect_error("\tnop ; .if 1\n", 1, 8, "'.if' must start a line");
	expect_error("\t.ifdef\n\t.endif\n", 1, 8, "takes one symbol name");
	expect_error("\t.ifc a\n\t.endif\n", 1, 7, "two strings");
	/* A conditional must close in the macro that opens it. */
	expect_error(".macro m\n.if 1\n.endm\n\tm\n", 2, 1,
	             "'.if' without '.endif' (conditionals must close");
}

static void
test_messages(void **state)
{
	(void)state;
	/* .error: its text, at its line; also from a macro. */
	expect_error("\tnop\n\t.error \"Load type not supported\"\n", 2, 2,
	             "Load type not supported");
	expect_error(
	    ".macro m t\n.ifnc \\t, ok\n"
	    "  .error \"bad type \\t\"\n.endif\n.endm\n\tm ok\n\tm no\n",
	    3, 3, "bad type no (in macro 'm')");
	expect_error("\t.error\n", 1, 2, ".error directive invoked");
	expect_error("\t.error 3\n", 1, 9, "takes a string in quotes");
	/* .warning does not fail; the caller gets it with its place. */
	DiagList w = {0};
	AsmOptions opt = {.warnings = &w};
	Obj *o = as_ok_opt("\tnop\n\t.warning \"slow path\"\n", &opt);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.v[0].line, 2);
	assert_int_equal(w.v[0].col, 2);
	assert_string_equal(w.v[0].msg, "slow path");
	diaglist_free(&w);
	obj_free(o);
	/* .extern is accepted and changes nothing; .globl's "@function"
	 * (poplibs) is dropped with a warning; .type without its comma. */
	o = as_ok_opt("\t.extern f, g\n\t.globl h, @function\n"
	              "\t.type h @function\nh:\n\tcall $lr, f\n",
	              &opt);
	assert_int_equal(w.n, 1);
	assert_non_null(strstr(w.v[0].msg, "'@function' in '.globl'"));
	diaglist_free(&w);
	int h = obj_find_symbol(o, "h");
	assert_true(h >= 0);
	assert_int_equal(o->sym[h].type, SYMT_FUNC);
	assert_int_equal(o->sym[h].bind, SYMB_GLOBAL);
	assert_true(obj_find_symbol(o, "g") < 0);
	assert_true(obj_find_symbol(o, "@function") < 0);
	obj_free(o);
	/* .size of a name neither defined nor used: dropped, with a
	 * warning (LLVM drops it silently). */
	o = as_ok_opt("x:\n\tnop\n\t.size y, . - x\n", &opt);
	assert_int_equal(w.n, 1);
	assert_non_null(strstr(w.v[0].msg, ".size of 'y'"));
	diaglist_free(&w);
	obj_free(o);
	/* A cpp line marker: the next line is line 20 of orig.S. */
	DiagList e = as_fail("# 20 \"orig.S\" 2\n\tnop\n\tbogus\n");
	assert_string_equal(e.v[0].file, "orig.S");
	assert_int_equal(e.v[0].line, 21);
	assert_string_equal(e.v[0].source_line, " bogus");
	diaglist_free(&e);
}

static void
test_macro_arguments(void **state)
{
	(void)state;
	/* Blank-separated arguments; an operator after a blank joins its
	 * neighbours (LLVM); NAME=value; strings lose their quotes; a ""
	 * default is empty; a comma after the macro name. */
	Obj *o = as_ok(".macro m, r n=1 extra=\"\"\n"
	               "\tadd \\r, \\r, \\n\n\\extra\n.endm\n"
	               "\tm $m1 2\n"
	               "\tm $m2 1 + 2\n"
	               "\tm $m3, n=4\n"
	               "\tm \"$m4\" 5 nop\n"
	               "\tm r=$m5\n");
	/* add_mmmn_zi 0x20000000 | r<<20 | r<<16 | n */
	uint32_t w1[] = {0x20110002, 0x20220003, 0x20330004,
	                 0x20440005, 0x42ff9000, 0x20550001};
	check_words(o, w1, 6);
	obj_free(o);
	/* \@ counts expansions from 0, as in LLVM; :vararg takes the rest;
	 * a call's text need not lex (poplibs passes 4x16bit). */
	o = as_ok(".macro lab\nL\\@:\n.endm\n"
	          ".macro all first rest:vararg\n\tadd \\rest\n.endm\n"
	          ".macro name t\nx_\\t:\n.endm\n"
	          "\tlab\n\tlab\n"
	          "\tall z $m6, $m6, 6\n"
	          "\tname 4x16bit\n");
	assert_true(obj_find_symbol(o, "L0") >= 0);
	assert_true(obj_find_symbol(o, "L1") >= 0);
	assert_true(obj_find_symbol(o, "x_4x16bit") >= 0);
	assert_int_equal(word(o, ".text", 0), 0x20660006);
	obj_free(o);
	expect_error(".macro m a:req\n.endm\n\tm\n", 3, 2,
	             "missing value for required parameter 'a'");
	expect_error(".macro m a\n.endm\n\tm 1 2\n", 3, 6,
	             "too many arguments for macro 'm' (it takes 1)");
	expect_error(".macro m a\n.endm\n\tm b=1\n", 3, 4,
	             "macro 'm' has no parameter 'b'");
	expect_error(".macro m a:vararg b\n.endm\n", 1, 10,
	             "only the last parameter may be :vararg");
	expect_error(".macro m a b\n.endm\n\tm a=1 2\n", 3, 8,
	             "a positional argument after a named one");
}

static void
test_pseudo_real(void **state)
{
	(void)state;
	/* ldconst: setzi of the low 20 bits, then or_iz of the top 12 when
	 * they are not zero (LLVM's ExpandMacroLdconst). setzi_mmmn_zi
	 * 0x19000000 | 1<<20 | 0x45678; or_mmmn_iz 0x4200c000 | 1<<20 |
	 * 1<<16 | 0x123 */
	Obj *o = as_ok("\tldconst $m1, 0x12345678\n\tldconst $m1, 0x1234\n"
	               "\tldconst $a2, -1\n");
	/* setzi_aaan_zi 0x1a000000 | 2<<20 | 0xfffff; or_aaan_iz 0x5200d000
	 * | 2<<20 | 2<<16 | 0xfff */
	uint32_t w1[] = {0x19145678, 0x4211c123, 0x19101234, 0x1a2fffff,
	                 0x5222dfff};
	check_words(o, w1, 5);
	obj_free(o);
	/* movz_mmmn 0x47000a00: operands at [15:12], [23:20], [19:16] */
	assert_int_equal(one("movnz $m1, $m2, $m3"), 0x47231a00);
	/* roll16 $d, $s, $s: roll16_mmmn 0x44000302 [7:4] [23:20] [15:12];
	 * roll16_aaan 0x58000604 */
	assert_int_equal(one("swap16 $m1, $m2"), 0x44202312);
	assert_int_equal(one("swap16 $a1, $a2"), 0x58202614);
	/* sub $d, $s, imm is add $d, $s, -imm: add_mmmn_si 0x22000000 |
	 * 2<<20 | 1<<16 | 0xfffb */
	assert_int_equal(one("sub $m1, $m2, 5"), 0x2221fffb);
	/* zero: the register form of or with the zero register:
	 * or_mmmn 0x44000301 | 15<<20 | 15<<12 | 3<<4;
	 * or64_aaan 0x58000e01 | 14<<20 | 14<<12 | 2<<4 ($azeros is 14) */
	assert_int_equal(one("zero $m3"), 0x44f0f331);
	assert_int_equal(one("zero $a2:3"), 0x58e0ee21);
	/* mov $m, $a is atom_mamn 0x5d000000 | 1<<16 | 2<<4; a pair is
	 * or64 $d, $s, $azeros */
	assert_int_equal(one("mov $m1, $a2"), 0x5d010020);
	assert_int_equal(one("mov $a0:1, $a2:3"), 0x5820ee01);
	/* get/put of an ARF CSR: uget_aaan_zi 0x51000800 | 1<<16 | 2
	 * ($FP_CTL); uput_aaan_zi 0x51008000 | 3<<20 | 1 ($FP_CLR) */
	assert_int_equal(one("get $a1, $FP_CTL"), 0x51010802);
	assert_int_equal(one("put $FP_CLR, $a3"), 0x51308001);
	/* variant aliases and strap (put 255, $mzero: 0x43008000 |
	 * 15<<20 | 255) */
	assert_int_equal(one("adds $m1, $m2, 4"), 0x22210004);
	/* sub_mmmn_zi 0x37000000: $m1 [19:16], 7 [15:0], $m2 [23:20] */
	assert_int_equal(one("subz $m1, 7, $m2"), 0x37210007);
	assert_int_equal(one("strap"), 0x43f080ff);
	/* Memory operands without the delta register ($mzero = 15):
	 * ld32_mmmn_zi 0x01000000 | 2<<20 | 1<<16 | 15<<12 | 4;
	 * ld32_mman 0x4d000800 | 2<<20 | 3<<16 | 15<<12 | 0<<4;
	 * st32_mmmn_zi 0x4f000000 | 2<<20 | 1<<16 | 15<<12 | 3 */
	assert_int_equal(one("ld32 $m1, $m2, 4"), 0x0121f004);
	assert_int_equal(one("ld32 $a0, $m2, $m3"), 0x4d23f800);
	assert_int_equal(one("st32 $m1, $m2, 3"), 0x4f21f003);
	/* $azero in a memory operand is register 15 (poplibs'
	 * ld32 $a0, $m4, $azero, 0): ld32_mman_zi 0x08000000 | 4<<20 |
	 * 15<<12 */
	assert_int_equal(one("ld32 $a0, $m4, $azero, 0"), 0x0840f000);
	/* :B and :BL are one broadcast; the source is one register:
	 * f32v2mul_aaat 0x58080303 | 5<<20 | 2<<12 | 2<<4 */
	assert_int_equal(one("f32v2mul $a2:3, $a5:B, $a2:3"), 0x58582323);
	assert_int_equal(one("f32v2mul $a2:3, $a5:BL, $a2:3"), 0x58582323);
	/* f16v4mul_aaal 0x58080302 | 0<<20 | 4<<12 | 2<<4 */
	assert_int_equal(one("f16v4mul $a2:3, $a0:B, $a4:5"), 0x58084322);
	/* binary16 literals: setzi_aaan_zi 0x1a000000 | 1<<20 | bits:
	 * -1.0 = 0xbc00, 1.5 = 0x3e00, infinity = 0x7c00 */
	assert_int_equal(one("setzi $a1, -1.0h"), 0x1a10bc00);
	assert_int_equal(one("setzi $a1, 1.5h"), 0x1a103e00);
	assert_int_equal(one("setzi $a1, infh"), 0x1a107c00);
	/* Graphcore's nop word, checked against the rival's hardware note
	 * (ipu-stack docs: IPU21 nop is 0x19e00000): setzi $m14, 0. */
	assert_int_equal(one("setzi $m14, 0"), 0x19e00000);
	/* SDK names predefined for plain .s files (sdk.c):
	 * uput 0x51008000 | 7<<20 | (0x102 & 7) */
	assert_int_equal(
	    one("uput CSR_W_FP_CTL__INDEX & CSR_W_WSR__CTXTID_M1__MASK, $a7"),
	    0x51708002);
	/* Errors. */
	expect_error("\tldconst $m1, x\nx:\n", 1, 15, "not defined yet");
	expect_error("\t{ ldconst $m1, 1 ; fnop }\n", 1, 4,
	             "'ldconst' may expand to two instructions and cannot be "
	             "bundled");
	expect_error("\tldconst $m1, 0x100000000\n", 1, 15,
	             "does not fit 32 bits");
	expect_error("\tmovnz $m1, $a2, $m3\n", 1, 2,
	             "'movnz' takes three registers");
	expect_error("\tsub $m1, $m2, 40000\n", 1, 16, "out of range");
}

static void
test_bundles_real(void **state)
{
	(void)state;
	/* A bundle may start at 4 mod 8 (poplibs has hundreds): no padding.
	 * add_mmmn_zi with the co-issue bit, then fnop. */
	Obj *o = as_ok("\tnop\n\t{ add $m0, $m0, 1\n\t  fnop }\n"
	               "\t{add $m0, $m0, 1\n\t fnop}\n");
	uint32_t w1[] = {0x42ff9000, 0xa0000001, 0x52ff9000, 0xa0000001,
	                 0x52ff9000};
	check_words(o, w1, 5);
	obj_free(o);
	/* An rpt body must start 8-byte aligned (LLVM's check). */
	expect_error("\t.align 8\n\trpt $m0, 0\n\t{ nop ; fnop }\n", 2, 2,
	             "the body of this rpt starts at .text+0x4, not 8-byte "
	             "aligned: bundle the rpt with fnop");
	expect_error("\t.align 8\n\tnop\n\t{ rpt $m0, 0 ; fnop }\n"
	             "\t{ nop ; fnop }\n",
	             3, 4, "add a nop before the bundled rpt");
	expect_error("\tnop\n\trpt $m0, 0\n\t{ nop ; fnop }\n", 2, 2,
	             "section '.text' is only 4-byte aligned");
	/* .allow_optimizations: { rpt ; fnop } at 4 mod 8 becomes a lone rpt
	 * (rpt_mmmn_zi 0x4300a000) and the section 8-byte aligned; a
	 * bundle written { aux ; main } is put in order. */
	o = as_ok("\t.allow_optimizations\n\tnop\n\t{ rpt $m0, 0 ; fnop }\n"
	          "\t{ fnop ; add $m0, $m0, 1 }\n");
	uint32_t w2[] = {0x42ff9000, 0x4300a000, 0xa0000001, 0x52ff9000};
	check_words(o, w2, 4);
	assert_int_equal(o->sec[section(o, ".text")].align, 8);
	obj_free(o);
	/* .allow_invalid_repeat turns the check off. */
	o = as_ok("\t.allow_invalid_repeat\n\tnop\n\trpt $m0, 0\n"
	          "\t{ nop ; fnop }\n");
	assert_int_equal(nwords(o), 4);
	obj_free(o);
}

static void
test_real_syntax(void **state)
{
	(void)state;
	/* Precedence is LLVM's (GNU-style): << binds tighter than +, and
	 * | & ^ tighter than + too; comparisons give 1 or 0. */
	Obj *o = as_ok("\t.data\n"
	               "\t.word 1 + 2 << 3, 1 | 2 + 3, 3 == 3 && 2 > 1\n"
	               "\t.word 1 < 0 || 0, 5 != 4, 2 <= 2, 3 >= 4, 1 <> 1\n");
	uint32_t want[] = {17, 6, 1, 0, 1, 1, 0, 0};
	for (int i = 0; i < 8; i++)
		assert_int_equal(word(o, ".data", i), want[i]);
	obj_free(o);
	/* Section names are the tokens up to a ',' or a blank, so poplibs'
	 * .text.f(x) names work. */
	o = as_ok("\t.section .text.f(true_x), \"ax\"\n\tnop\n");
	assert_int_equal(o->sec[section(o, ".text.f(true_x)")].size, 4);
	obj_free(o);
}

/* The preprocessor step: clang -E (or cpp) with the SDK headers. */
static void
test_preprocess(void **state)
{
	(void)state;
	char dir[] = "/tmp/ipu_cpp_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char src[256], hdr[256];
	snprintf(src, sizeof src, "%s/k.S", dir);
	snprintf(hdr, sizeof hdr, "%s/k.h", dir);
	FILE *f = fopen(hdr, "w");
	fputs("#define REG m3\n", f);
	fclose(f);
	f = fopen(src, "w");
	fputs("#include \"arch/gc_tile_defines.h\"\n"
	      "#include \"poplar/TileConstants.hpp\"\n"
	      "#include \"poplar/StackSizeDefs.hpp\"\n"
	      "#include \"k.h\"\n"
	      "// a C++ comment\n"
	      "DEF_STACK_USAGE 0 f\n"
	      ".section .text.f, FUNCTION_IS_WORKER\n"
	      "#if __IPU_ARCH_VERSION__ == 21\n"
	      "  add $REG, $REG, 21\n"
	      "#else\n"
	      "  add $REG, $REG, 2\n"
	      "#endif\n"
	      "  setzi $m0, TMEM_REGION0_BASE_ADDR / 4 + CTXT_WORKERS\n"
	      "  uput CSR_W_FP_CTL__INDEX & CSR_W_WSR__CTXTID_M1__MASK, $a7\n"
	      "#ifdef EXTRA\n"
	      "  bogus\n"
	      "#endif\n",
	      f);
	fclose(f);
	const Chip *chips[2] = {chip_by_name("c600"), chip_by_name("gc200")};
	uint32_t arch_word[2] = {0x20330015, 0x20330002};
	for (int c = 0; c < 2; c++) {
		AsmCppOptions co = {.chip = chips[c]};
		char *text;
		size_t len;
		Diag d;
		assert_int_equal(asm_preprocess(src, &co, &text, &len, &d), 0);
		AsmOptions opt = {.chip = chips[c]};
		Obj *o;
		DiagList e;
		assert_int_equal(asm_source(src, text, len, &opt, &o, &e), 0);
		free(text);
		const ObjSection *t = &o->sec[section(o, ".text.f")];
		assert_int_equal(t->size, 12);
		assert_true(t->flags & SECF_EXEC);
		/* add_mmmn_zi 0x20330000 | 21 or 2; setzi_mmmn_zi 0x19000000
		 * | 0x4c000 / 4 + 6; uput 0x51708002 */
		assert_int_equal(word_at(t->data), arch_word[c]);
		assert_int_equal(word_at(t->data + 4), 0x19013006);
		assert_int_equal(word_at(t->data + 8), 0x51708002);
		obj_free(o);
		diaglist_free(&e);
	}
	/* -D reaches the code; the error names the .S file and its line. */
	const char *defs[] = {"EXTRA"};
	AsmCppOptions co = {.define = defs, .ndefine = 1};
	char *text;
	size_t len;
	Diag d;
	assert_int_equal(asm_preprocess(src, &co, &text, &len, &d), 0);
	Obj *o;
	DiagList e;
	assert_int_equal(asm_source(src, text, len, NULL, &o, &e), IPU_EINVAL);
	free(text);
	assert_string_equal(e.v[0].file, src);
	assert_int_equal(e.v[0].line, 16);
	assert_int_equal(e.v[0].col, 3);
	diaglist_free(&e);
	/* A preprocessor error is reported, not assembled. */
	f = fopen(src, "w");
	fputs("#include \"missing.h\"\n", f);
	fclose(f);
	assert_int_equal(asm_preprocess(src, NULL, &text, &len, &d),
	                 IPU_EINVAL);
	assert_non_null(strstr(d.msg, "missing.h"));
	remove(src);
	remove(hdr);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip_rows),
	    cmocka_unit_test(test_roundtrip_bundles),
	    cmocka_unit_test(test_known_encodings),
	    cmocka_unit_test(test_bundle_forms),
	    cmocka_unit_test(test_exchange),
	    cmocka_unit_test(test_expressions),
	    cmocka_unit_test(test_macros),
	    cmocka_unit_test(test_local_labels_and_relocs),
	    cmocka_unit_test(test_directives),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_many_errors),
	    cmocka_unit_test(test_arch),
	    cmocka_unit_test(test_include),
	    cmocka_unit_test(test_conditionals),
	    cmocka_unit_test(test_messages),
	    cmocka_unit_test(test_macro_arguments),
	    cmocka_unit_test(test_pseudo_real),
	    cmocka_unit_test(test_bundles_real),
	    cmocka_unit_test(test_real_syntax),
	    cmocka_unit_test(test_preprocess),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

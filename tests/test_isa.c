/* test_isa.c - the instruction table itself: size, no overlaps, complete
 * coverage of every bit (both words of the two-word row), and encode/decode
 * agreement for every variant. */
#include "support.h"

#include <stdlib.h>
#include <string.h>

/* The bits operand s occupies in its word (s->word). */
static uint32_t
field_mask(const OperandSpec *s)
{
	uint32_t m = 0;
	for (int i = 0; i < s->npieces; i++) {
		assert_true(s->piece[i].hi < 32);
		for (int b = s->piece[i].lo; b <= s->piece[i].hi; b++)
			m |= 1u << b;
	}
	return m;
}

static void
test_counts(void **state)
{
	(void)state;
	/* 363 rows of isa.md Appendix A + 5 of ipu-stack.md 3.2 */
	assert_int_equal(isa_rows(), 368);
	int mnemonics = 0;
	for (int r = 0; r < isa_rows(); r++) {
		int first = 1;
		for (int q = 0; q < r; q++)
			if (!strcmp(isa_row(q)->mnemonic, isa_row(r)->mnemonic))
				first = 0;
		mnemonics += first;
	}
	assert_int_equal(mnemonics, 251);
	int wide = 0;
	for (int r = 0; r < isa_rows(); r++)
		if (isa_row(r)->flags & F_WIDE) {
			assert_string_equal(isa_row(r)->mnemonic, "sendpicp");
			assert_int_equal(isa_words(isa_row(r)), 2);
			wide++;
		} else {
			assert_int_equal(isa_words(isa_row(r)), 1);
		}
	assert_int_equal(wide, 1);
}

static void
test_no_overlap(void **state)
{
	(void)state;
	for (int a = 0; a < isa_rows(); a++)
		for (int b = a + 1; b < isa_rows(); b++) {
			const InsnDesc *x = isa_row(a), *y = isa_row(b);
			uint32_t common = x->mask & y->mask;
			if (((x->match ^ y->match) & common) == 0)
				fail_msg("%s and %s overlap", x->variant,
				         y->variant);
		}
	/* A bundle's first word (co-issue bit set) is never the two-word
	 * sendpicp, whose bit 31 is an opcode bit; sendpicp's second word is
	 * data, never decoded (test_every_bit_accounted covers its bits). */
	for (int r = 0; r < isa_rows(); r++) {
		const InsnDesc *d = isa_row(r);
		Insn out;
		if (d->flags & F_SOLO)
			continue;
		int got = isa_decode(d->match | 0x80000000u, ARCH_IPU21, &out);
		if (got >= 0 && (isa_row(got)->flags & F_WIDE))
			fail_msg("%s with bit 31 decodes as %s", d->variant,
			         isa_row(got)->variant);
	}
}

/* Every bit of every word of a row is fixed by the mask, the co-issue bit,
 * or exactly one operand. A wide row's second word has no fixed bits, so its
 * operands must cover all 32; a one-word row has no second-word operands.
 * (The second word is data, so only first words can overlap: the check
 * above covers them, the wide row's bit 31 included.) */
static void
test_every_bit_accounted(void **state)
{
	(void)state;
	for (int r = 0; r < isa_rows(); r++) {
		const InsnDesc *d = isa_row(r);
		int wide = (d->flags & F_WIDE) != 0;
		uint32_t seen[2] = {d->mask, 0};
		if (!(d->flags & F_SOLO)) {
			assert_false(wide);
			assert_false(d->mask & 0x80000000u);
			seen[0] |= 0x80000000u;
		} else {
			assert_true(d->mask & 0x80000000u);
			/* Bit 31 set is an opcode bit only in a wide row. */
			assert_int_equal(d->match & 0x80000000u,
			                 wide ? 0x80000000u : 0);
		}
		for (int i = 0; i < d->nops; i++) {
			const OperandSpec *s = &d->op[i];
			assert_true(s->word <= (unsigned)wide);
			uint32_t f = field_mask(s);
			if (seen[s->word] & f)
				fail_msg("%s operand %d overlaps", d->variant,
				         i);
			seen[s->word] |= f;
		}
		if (seen[0] != 0xffffffffu)
			fail_msg("%s: bits 0x%08x neither fixed nor operand",
			         d->variant, ~seen[0]);
		if (wide && seen[1] != 0xffffffffu)
			fail_msg("%s: second-word bits 0x%08x in no operand",
			         d->variant, ~seen[1]);
		assert_int_equal(d->match & ~d->mask, 0);
	}
}

/* A value for operand spec s, varied by k; always fits. */
static int64_t
sample(const OperandSpec *s, unsigned k)
{
	uint32_t w = s->width;
	uint64_t span = (uint64_t)1 << w;
	switch (s->kind) {
	case OPK_M:
	case OPK_A:
		return (k * 7 + 3) % 16;
	case OPK_MP:
	case OPK_AP:
		return ((k * 3 + 1) % 8) * 2;
	case OPK_AQ:
		return (k % 4) * 4;
	case OPK_U:
	case OPK_C:
	case OPK_CU:
		return (int64_t)((k * 2654435761u) % span);
	case OPK_S:
		return (int64_t)((k * 2654435761u) % span) -
		       (int64_t)(span / 2);
	case OPK_Z:
		return (int64_t)(((k * 2654435761u) % span) << (32 - w));
	case OPK_T:
		return (int64_t)((k * 2654435761u) % span) * 4;
	}
	return 0;
}

static void
test_encode_decode_all(void **state)
{
	(void)state;
	for (int r = 0; r < isa_rows(); r++) {
		const InsnDesc *d = isa_row(r);
		for (unsigned k = 0; k < 64; k++) {
			Insn in = {.row = (int16_t)r, .nops = d->nops}, out;
			for (int i = 0; i < d->nops; i++)
				in.op[i] = (int32_t)sample(&d->op[i], k + i);
			uint32_t w[2], w0;
			assert_int_equal(isa_encode_wide(&in, w), 0);
			assert_int_equal(isa_encode(&in, &w0), 0);
			assert_int_equal(w0, w[0]);
			assert_int_equal(w[0] & d->mask, d->match);
			if (isa_words(d) == 1)
				assert_int_equal(w[1], 0);
			assert_int_equal(
			    isa_decode_wide(w[0], w[1], ARCH_IPU21, &out), r);
			for (int i = 0; i < d->nops; i++)
				if (out.op[i] != in.op[i])
					fail_msg("%s op %d: %d -> %d",
					         d->variant, i, in.op[i],
					         out.op[i]);
			/* One word: the row and its first-word operands;
			 * second-word operands read as 0. */
			assert_int_equal(isa_decode(w[0], ARCH_IPU21, &out), r);
			for (int i = 0; i < d->nops; i++)
				assert_int_equal(out.op[i],
				                 d->op[i].word ? 0 : in.op[i]);
			/* The word after a one-word row changes nothing. */
			if (isa_words(d) == 1) {
				assert_int_equal(isa_decode_wide(w[0], ~0u,
				                                 ARCH_IPU21,
				                                 &out),
				                 r);
				for (int i = 0; i < d->nops; i++)
					assert_int_equal(out.op[i], in.op[i]);
			}
			/* The co-issue bit does not change the row. */
			if (!(d->flags & F_SOLO))
				assert_int_equal(isa_decode(w[0] | 0x80000000u,
				                            ARCH_IPU21, &out),
				                 r);
			/* A solo row with bit 31 flipped is no longer it. */
			else
				assert_true(isa_decode(w[0] ^ 0x80000000u,
				                       ARCH_IPU21, &out) != r);
		}
	}
}

static void
test_arch_gating(void **state)
{
	(void)state;
	Insn out;
	uint32_t w = enc("f8v8hihov4amp_aaan_ef", 4, 0, 2, 4, 1);
	assert_true(isa_decode(w, ARCH_IPU21, &out) >= 0);
	assert_int_equal(isa_decode(w, ARCH_IPU2, &out), -1);
	w = enc("f16v4hihov4amp_aaan_ef", 4, 0, 2, 4, 1);
	assert_true(isa_decode(w, ARCH_IPU2, &out) >= 0);
}

static void
test_bad_register_alignment(void **state)
{
	(void)state;
	/* f32v2add with an odd destination pair in bits 7..4 */
	uint32_t w = enc("f32v2add_aaan", 3, 2, 4, 6);
	Insn out;
	assert_true(isa_decode(w, ARCH_IPU21, &out) >= 0);
	assert_int_equal(isa_decode(w | (1u << 4), ARCH_IPU21, &out), -1);
}

/* Words quoted in isa.md 7.4 and ipu-stack.md 3.2 as known encodings. */
static void
test_known_words(void **state)
{
	(void)state;
	assert_int_equal(enc("sync_mmmn_zi", 1, 3), 0x41800003);
	assert_int_equal(enc("delay_mmmn_zi", 1, 40), 0x40a00028);
	assert_int_equal(enc("sans_mmmn_zi", 1, 1), 0x40c00001);
	assert_int_equal(enc("send_mmmn_zi", 3, 1, 6, 3), 0x78200033);
	/* send: words-1 [26:21], absolute word address [20:3], sctl [2:0]
	 * (ipu-stack.md 3.2): 64 words from byte 0x4c000 (word 0x13000),
	 * both directions = 0x78000000 | 63<<21 | 0x13000<<3 | 3 */
	assert_int_equal(enc("send_mmmn_zi", 3, 63, 0x13000, 3), 0x7fe98003);
	/* Exchange rows of ipu-stack.md 3.2, words built by hand:
	 * delaypic 0x60000000 | (events-1)<<19 | sel<<18 | pic:
	 * 6 events, selector 1, PIC 0x12345 = 0x60000000 | 5<<19 | 1<<18 |
	 * 0x12345 = 0x60000000 | 0x280000 | 0x40000 | 0x12345 */
	assert_int_equal(enc("delaypic_mmmn_zi", 3, 5, 1, 0x12345), 0x602d2345);
	/* the widest: 128 events, PIC 0x3ffff = 0x63ffffff */
	assert_int_equal(enc("delaypic_mmmn_zi", 3, 127, 1, 0x3ffff),
	                 0x63ffffff);
	/* delayxpic 0x64000000 | (events-1)<<14 | sel<<13 | xpic:
	 * 101 events, selector 1, XPIC 0x1abc = 0x64000000 | 0x190000 |
	 * 0x2000 | 0x1abc */
	assert_int_equal(enc("delayxpic_mmmn_zi", 3, 100, 1, 0x1abc),
	                 0x64193abc);
	assert_int_equal(enc("delayxpic_mmmn_zi", 3, 4095, 0, 0), 0x67ffc000);
	/* sendoff 0x70000000: words-1 = 0x9c5 splits into bits 11:6 = 0x27
	 * at [19:14] and bits 5:0 = 0x05 at [26:21]; delta 0x5a5 at [13:3];
	 * sctl 3 = 0x70000000 | 0x05<<21 | 0x27<<14 | 0x5a5<<3 | 3 =
	 * 0x70000000 | 0xa00000 | 0x9c000 | 0x2d28 | 3 */
	assert_int_equal(enc("sendoff_mmmn_zi", 3, 0x9c5, 0x5a5, 3),
	                 0x70a9ed2b);
	/* 64 words (field 63 = bits 5:0 only), delta 1, sctl 1 */
	assert_int_equal(enc("sendoff_mmmn_zi", 3, 63, 1, 1),
	                 0x70000000 | 63u << 21 | 1u << 3 | 1);
	/* sendpic 0x70100000 | (words-1)<<21 | sel<<18 | value: 64 words,
	 * selector 2 (a PIC form), value 0x3ffff = 0x70100000 | 0x7e00000 |
	 * 0x80000 | 0x3ffff */
	assert_int_equal(enc("sendpic_mmmn_zi", 3, 63, 2, 0x3ffff), 0x77fbffff);
	/* selector 1 (XPIC), 1 word, value 0x1fff */
	assert_int_equal(enc("sendpic_mmmn_zi", 3, 0, 1, 0x1fff), 0x70141fff);
	/* sendpicp, two words. First 0xf0000000 | hi<<27 | (words-1)<<21 |
	 * address<<3 | sctl: high selector 1, 14 words, word address 0x13000,
	 * sctl 7 = 0xf0000000 | 0x8000000 | 0x1a00000 | 0x98000 | 7.
	 * Second: xpic<<18 | pic = 0x2abc<<18 | 0x31234 = 0xaaf00000 |
	 * 0x31234. */
	{
		int r = isa_row_by_variant("sendpicp_mmmn_zi");
		Insn in = {.row = (int16_t)r,
		           .nops = 6,
		           .op = {1, 13, 0x13000, 7, 0x2abc, 0x31234}},
		     out;
		uint32_t w[2];
		assert_int_equal(isa_encode_wide(&in, w), 0);
		assert_int_equal(w[0], 0xf9a98007);
		assert_int_equal(w[1], 0xaaf31234);
		assert_int_equal(isa_decode_wide(w[0], w[1], ARCH_IPU2, &out),
		                 r);
		assert_memory_equal(out.op, in.op, sizeof in.op);
		/* receive-only form, sctl 0, everything else 0 */
		Insn z = {.row = (int16_t)r, .nops = 6};
		assert_int_equal(isa_encode_wide(&z, w), 0);
		assert_int_equal(w[0], 0xf0000000);
		assert_int_equal(w[1], 0);
		/* 15-bit XPIC, 19-bit PIC: out of range */
		z.op[4] = 0x4000;
		assert_int_equal(isa_encode_wide(&z, w), -5);
		z.op[4] = 0;
		z.op[5] = 0x40000;
		assert_int_equal(isa_encode_wide(&z, w), -6);
	}
	/* With bit 31 clear the same bits are a send-class word, not
	 * sendpicp: 0x79a98007 is send 13, 0x13000, 7. */
	{
		Insn out;
		assert_int_equal(isa_decode(0x79a98007, ARCH_IPU21, &out),
		                 isa_row_by_variant("send_mmmn_zi"));
		assert_int_equal(out.op[0], 13);
		assert_int_equal(out.op[1], 0x13000);
		assert_int_equal(out.op[2], 7);
	}
	/* put CSR, $mR = 0x43008000 | R<<20 | csr */
	assert_int_equal(enc("put_mmmn_zi", 2, 0xa0, 5), 0x43508000 | 0xa0);
	assert_int_equal(enc("br_mmmn", 1, 10), 0x43000000 | 10u << 20);
	/* call = 0x18000000 | ret<<20 | addr>>2 */
	assert_int_equal(enc("call_mmmn_zi", 2, 10, 0x4c100),
	                 0x18000000 | 10u << 20 | (0x4c100 >> 2));
	assert_int_equal(enc("setzi_mmmn_zi", 2, 3, 0x12345),
	                 0x19000000 | 3u << 20 | 0x12345);
	assert_int_equal(enc("trap_mmmn_zi", 1, 0), 0x41801000);
	/* ld32 / st32 immediate forms: base<<20, data<<16, delta<<12 */
	assert_int_equal(enc("ld32_mmmn_zi", 4, 1, 2, 3, 5),
	                 0x01000000 | 2u << 20 | 1u << 16 | 3u << 12 | 5);
	assert_int_equal(enc("st32_mmmn_zi", 4, 1, 2, 3, 5),
	                 0x4f000000 | 2u << 20 | 1u << 16 | 3u << 12 | 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counts),
	    cmocka_unit_test(test_no_overlap),
	    cmocka_unit_test(test_every_bit_accounted),
	    cmocka_unit_test(test_encode_decode_all),
	    cmocka_unit_test(test_arch_gating),
	    cmocka_unit_test(test_bad_register_alignment),
	    cmocka_unit_test(test_known_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

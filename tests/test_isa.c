/* test_isa.c - the instruction table itself: size, no overlaps, complete
 * coverage of every bit, and encode/decode agreement for every variant. */
#include "support.h"

#include <stdlib.h>
#include <string.h>

static uint32_t
field_mask(const OperandSpec *s)
{
	uint32_t m = 0;
	for (int i = 0; i < s->npieces; i++)
		for (int b = s->piece[i].lo; b <= s->piece[i].hi; b++)
			m |= 1u << b;
	return m;
}

static void
test_counts(void **state)
{
	(void)state;
	assert_int_equal(isa_rows(), 363);
	int mnemonics = 0;
	for (int r = 0; r < isa_rows(); r++) {
		int first = 1;
		for (int q = 0; q < r; q++)
			if (!strcmp(isa_row(q)->mnemonic, isa_row(r)->mnemonic))
				first = 0;
		mnemonics += first;
	}
	assert_int_equal(mnemonics, 246);
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
}

static void
test_every_bit_accounted(void **state)
{
	(void)state;
	for (int r = 0; r < isa_rows(); r++) {
		const InsnDesc *d = isa_row(r);
		uint32_t seen = d->mask;
		if (!(d->flags & F_SOLO)) {
			assert_false(d->mask & 0x80000000u);
			seen |= 0x80000000u;
		} else {
			assert_true(d->mask & 0x80000000u);
			assert_int_equal(d->match & 0x80000000u, 0);
		}
		for (int i = 0; i < d->nops; i++) {
			uint32_t f = field_mask(&d->op[i]);
			if (seen & f)
				fail_msg("%s operand %d overlaps", d->variant,
				         i);
			seen |= f;
		}
		if (seen != 0xffffffffu)
			fail_msg("%s: bits 0x%08x neither fixed nor operand",
			         d->variant, ~seen);
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
			uint32_t w;
			assert_int_equal(isa_encode(&in, &w), 0);
			assert_int_equal(w & d->mask, d->match);
			assert_int_equal(isa_decode(w, ARCH_IPU21, &out), r);
			for (int i = 0; i < d->nops; i++)
				if (out.op[i] != in.op[i])
					fail_msg("%s op %d: %d -> %d",
					         d->variant, i, in.op[i],
					         out.op[i]);
			/* The co-issue bit does not change the row. */
			if (!(d->flags & F_SOLO))
				assert_int_equal(isa_decode(w | 0x80000000u,
				                            ARCH_IPU21, &out),
				                 r);
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

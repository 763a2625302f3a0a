/*
 * exec_int.c - emulator semantics of the integer, bitwise and permute
 * instructions: MRF arithmetic and comparisons (main lane), the bitwise ops
 * and byte/half/word permutes that exist on both register files, the 64-bit
 * ARF bitwise ops, setzi and atom.
 *
 * One function per mnemonic serves every variant: operands are read with
 * sim_src (register or immediate, as the table says) and written with
 * sim_dst, so the MRF and ARF forms share code. Where isa.md does not fix the
 * exact semantics (permute lane tables, shifts by 32 or more, movz, cms) the
 * choice is marked DECISION here and listed in docs/emulator-memory.md.
 */
#include "sim.h"

/* Operand i as a 32-bit value, applying a :BL/:BU broadcast decoration
 * (the chosen half duplicated into both halves). */
static uint32_t
src(const Exec *e, int i)
{
	uint32_t v = sim_src(e, i);
	switch (e->d->op[i].decor) {
	case DEC_BL:
		return (v & 0xffffu) * 0x10001u;
	case DEC_BU:
		return (v >> 16) * 0x10001u;
	default:
		return v;
	}
}

/* Operand i as an ARF pair (register r = low word, r + 1 = high word). */
static uint64_t
src64(const Exec *e, int i)
{
	return sim_ra64(e, e->in->op[i]);
}

static void
dst64(Exec *e, int i, uint64_t v)
{
	sim_wa64(e, e->in->op[i], v);
}

static uint32_t
byte_of(uint32_t v, int k)
{
	return (v >> (8 * k)) & 0xffu;
}

/* Little-endian assembly of four bytes, b0 lowest. */
static uint32_t
bytes4(uint32_t b0, uint32_t b1, uint32_t b2, uint32_t b3)
{
	return b0 | b1 << 8 | b2 << 16 | b3 << 24;
}

static uint32_t
count_leading_zeros(uint32_t v)
{
	return v ? (uint32_t)__builtin_clz(v) : 32;
}

/* Arithmetic. */

void
exec_abs(Exec *e)
{
	/* INT_MIN has no positive counterpart: it wraps to itself. */
	uint32_t x = src(e, 1);
	sim_dst(e, 0, (x >> 31) ? 0u - x : x);
}

/* add and sub, each built twice (sim.h, SIM_DIRECT_FORMS): exec_<mn> logs
 * the result, direct_<mn> writes it straight to the register. Assembly
 * order is "sub $d, x, y" = x - y for every variant (the immediate forms
 * put the immediate first). */
#define ADD_SUB(mn, expr)                                                      \
	void exec_##mn(Exec *e)                                                \
	{                                                                      \
		sim_put_dst(e, 0, expr, 0);                                    \
	}                                                                      \
	void direct_##mn(Exec *e)                                              \
	{                                                                      \
		sim_put_dst(e, 0, expr, 1);                                    \
	}
ADD_SUB(add, src(e, 1) + src(e, 2))
ADD_SUB(sub, src(e, 1) - src(e, 2))

void
exec_mul(Exec *e)
{
	/* Low 32 bits of the product are the same for signed and unsigned. */
	sim_dst(e, 0, src(e, 1) * src(e, 2));
}

void
exec_min(Exec *e)
{
	int32_t x = (int32_t)src(e, 1), y = (int32_t)src(e, 2);
	sim_dst(e, 0, (uint32_t)(x < y ? x : y));
}

void
exec_max(Exec *e)
{
	int32_t x = (int32_t)src(e, 1), y = (int32_t)src(e, 2);
	sim_dst(e, 0, (uint32_t)(x > y ? x : y));
}

void
exec_cmpeq(Exec *e)
{
	sim_dst(e, 0, src(e, 1) == src(e, 2));
}

void
exec_cmpne(Exec *e)
{
	sim_dst(e, 0, src(e, 1) != src(e, 2));
}

void
exec_cmpslt(Exec *e)
{
	sim_dst(e, 0, (int32_t)src(e, 1) < (int32_t)src(e, 2));
}

void
exec_cmpult(Exec *e)
{
	sim_dst(e, 0, src(e, 1) < src(e, 2));
}

/* Bitwise. */

void
exec_and(Exec *e)
{
	sim_dst(e, 0, src(e, 1) & src(e, 2));
}

void
exec_andc(Exec *e)
{
	sim_dst(e, 0, src(e, 1) & ~src(e, 2));
}

void
exec_or(Exec *e)
{
	sim_dst(e, 0, src(e, 1) | src(e, 2));
}

void
exec_xor(Exec *e)
{
	sim_dst(e, 0, src(e, 1) ^ src(e, 2));
}

void
exec_xnor(Exec *e)
{
	sim_dst(e, 0, ~(src(e, 1) ^ src(e, 2)));
}

void
exec_not(Exec *e)
{
	sim_dst(e, 0, ~src(e, 1));
}

void
exec_and64(Exec *e)
{
	dst64(e, 0, src64(e, 1) & src64(e, 2));
}

void
exec_andc64(Exec *e)
{
	dst64(e, 0, src64(e, 1) & ~src64(e, 2));
}

void
exec_or64(Exec *e)
{
	dst64(e, 0, src64(e, 1) | src64(e, 2));
}

void
exec_not64(Exec *e)
{
	dst64(e, 0, ~src64(e, 1));
}

/* Shifts. The documents say "up to 31 bits"; the amount is the whole
 * register or zimm12. DECISION: 32 or more shifts everything out (shrs fills
 * with the sign), rather than using the amount modulo 32. */

void
exec_shl(Exec *e)
{
	uint32_t x = src(e, 1), n = src(e, 2);
	sim_dst(e, 0, n >= 32 ? 0 : x << n);
}

void
exec_shr(Exec *e)
{
	uint32_t x = src(e, 1), n = src(e, 2);
	sim_dst(e, 0, n >= 32 ? 0 : x >> n);
}

void
exec_shrs(Exec *e)
{
	uint32_t x = src(e, 1), n = src(e, 2);
	uint32_t fill = (x >> 31) ? 0xffffffffu : 0;
	if (n >= 32)
		sim_dst(e, 0, fill);
	else if (n == 0)
		sim_dst(e, 0, x);
	else
		sim_dst(e, 0, (x >> n) | (fill << (32 - n)));
}

/* Bit counts. */

void
exec_clz(Exec *e)
{
	sim_dst(e, 0, count_leading_zeros(src(e, 1)));
}

void
exec_cms(Exec *e)
{
	/* DECISION: the number of bits below the sign bit, from bit 30 down,
	 * that equal it (0..31). Flipping by the sign turns them into leading
	 * zeros after bit 31, which is then always 0. */
	uint32_t x = src(e, 1);
	uint32_t y = x ^ ((x >> 31) ? 0xffffffffu : 0);
	sim_dst(e, 0, count_leading_zeros(y) - 1);
}

void
exec_popc(Exec *e)
{
	sim_dst(e, 0, (uint32_t)__builtin_popcount(src(e, 1)));
}

void
exec_bitrev8(Exec *e)
{
	uint32_t x = src(e, 1), r = 0;
	for (int bit = 0; bit < 32; bit++)
		if (x >> bit & 1)
			r |= 1u << ((bit & ~7) + 7 - (bit & 7));
	sim_dst(e, 0, r);
}

/* Byte permutes of one word. */

void
exec_swap8(Exec *e)
{
	/* DECISION: full byte reversal (x0 x1 x2 x3 -> x3 x2 x1 x0). */
	uint32_t x = src(e, 1);
	sim_dst(
	    e, 0,
	    bytes4(byte_of(x, 3), byte_of(x, 2), byte_of(x, 1), byte_of(x, 0)));
}

void
exec_sort8(Exec *e)
{
	/* DECISION: even bytes then odd bytes (x0 x2 x1 x3). */
	uint32_t x = src(e, 1);
	sim_dst(
	    e, 0,
	    bytes4(byte_of(x, 0), byte_of(x, 2), byte_of(x, 1), byte_of(x, 3)));
}

/* Permutes across two sources a = operand 1, b = operand 2; byte k of a
 * word is bits 8k+7..8k. All lane tables are DECISIONs (isa.md 10.3). */

void
exec_roll16(Exec *e)
{
	/* Funnel: the upper half of a, then the lower half of b. */
	uint32_t a = src(e, 1), b = src(e, 2);
	sim_dst(e, 0, (a >> 16) | (b << 16));
}

void
exec_roll8r(Exec *e)
{
	/* Upper three bytes of a, then the lowest byte of b on top. */
	uint32_t a = src(e, 1), b = src(e, 2);
	sim_dst(e, 0, (a >> 8) | (b << 24));
}

void
exec_roll8l(Exec *e)
{
	/* Lower three bytes of a moved up, the top byte of b below them. */
	uint32_t a = src(e, 1), b = src(e, 2);
	sim_dst(e, 0, (a << 8) | (b >> 24));
}

void
exec_roll32(Exec *e)
{
	/* The 64-bit analogue of roll16: {a.hi, b.lo}. */
	uint64_t a = src64(e, 1), b = src64(e, 2);
	dst64(e, 0, (a >> 32) | (b << 32));
}

void
exec_shuf8x8lo(Exec *e)
{
	uint32_t a = src(e, 1), b = src(e, 2);
	sim_dst(
	    e, 0,
	    bytes4(byte_of(a, 0), byte_of(b, 0), byte_of(a, 1), byte_of(b, 1)));
}

void
exec_shuf8x8hi(Exec *e)
{
	uint32_t a = src(e, 1), b = src(e, 2);
	sim_dst(
	    e, 0,
	    bytes4(byte_of(a, 2), byte_of(b, 2), byte_of(a, 3), byte_of(b, 3)));
}

void
exec_sort8x8lo(Exec *e)
{
	uint32_t a = src(e, 1), b = src(e, 2);
	sim_dst(
	    e, 0,
	    bytes4(byte_of(a, 0), byte_of(a, 2), byte_of(b, 0), byte_of(b, 2)));
}

void
exec_sort8x8hi(Exec *e)
{
	uint32_t a = src(e, 1), b = src(e, 2);
	sim_dst(
	    e, 0,
	    bytes4(byte_of(a, 1), byte_of(a, 3), byte_of(b, 1), byte_of(b, 3)));
}

void
exec_sort4x16lo(Exec *e)
{
	/* {a.lo16, b.lo16}: the poplibs use isa.md 4.1 cites. src() applies
	 * the :BU broadcast of the first source. */
	uint32_t a = src(e, 1), b = src(e, 2);
	sim_dst(e, 0, (a & 0xffffu) | (b << 16));
}

void
exec_sort4x16hi(Exec *e)
{
	uint32_t a = src(e, 1), b = src(e, 2);
	sim_dst(e, 0, (a >> 16) | (b & 0xffff0000u));
}

void
exec_sort4x32lo(Exec *e)
{
	uint64_t a = src64(e, 1), b = src64(e, 2);
	dst64(e, 0, (a & 0xffffffffu) | (b << 32));
}

void
exec_sort4x32hi(Exec *e)
{
	uint64_t a = src64(e, 1), b = src64(e, 2);
	dst64(e, 0, (a >> 32) | (b & 0xffffffff00000000u));
}

/* Moves. */

void
exec_movz(Exec *e)
{
	/* "movz $d, $s, $g": DECISION (isa.md infers it from the name):
	 * d = s when g == 0, otherwise d keeps its value (no write). */
	if (src(e, 2) == 0)
		sim_dst(e, 0, src(e, 1));
}

void
exec_setzi(Exec *e)
{
	sim_dst(e, 0, src(e, 1));
}

void
exec_atom(Exec *e)
{
	/* ARF bits to MRF, unconverted ($a14/$a15 read 0). */
	sim_dst(e, 0, src(e, 1));
}

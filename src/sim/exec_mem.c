/*
 * exec_mem.c - emulator semantics of every load and store: the 3-operand and
 * post-incrementing (step) forms, stm32, the paced forms that walk a
 * triple-packed address pair (and tapack, which builds one), and the sparse
 * delta-driven loads.
 *
 * Every access goes through sim_load/sim_store, which check range, natural
 * alignment, the interleaved region for 128-bit accesses and same-element
 * conflicts among the accesses of the bundle. Register results and address
 * write-backs are logged with sim_wm/sim_wa and commit at the end of the
 * bundle, so a store always sees pre-bundle register values. Choices the
 * documents leave open are marked DECISION and listed in
 * docs/emulator-memory.md.
 */
#include "sim.h"

/* Tile memory is little-endian: get_le32, put_le32 (util.h). */
static const OperandSpec *
spec(const Exec *e, int i)
{
	return &e->d->op[i];
}

/* Registers spanned by operand i: 1, 2 (pair) or 4 (quad). */
static int
span(const Exec *e, int i)
{
	switch (spec(e, i)->kind) {
	case OPK_AP:
	case OPK_MP:
		return 2;
	case OPK_AQ:
		return 4;
	default:
		return 1;
	}
}

/* Write n words to the register(s) of operand i, starting at its first
 * register plus `first`. */
static void
write_words(Exec *e, int i, int first, const uint32_t *w, int n)
{
	int r = e->in->op[i] + first;
	int mrf = spec(e, i)->kind == OPK_M || spec(e, i)->kind == OPK_MP;
	for (int k = 0; k < n; k++) {
		if (mrf)
			sim_wm(e, r + k, w[k]);
		else
			sim_wa(e, r + k, w[k]);
	}
}

static void
read_words(const Exec *e, int i, uint32_t *w, int n)
{
	int r = e->in->op[i];
	int mrf = spec(e, i)->kind == OPK_M || spec(e, i)->kind == OPK_MP;
	for (int k = 0; k < n; k++)
		w[k] = mrf ? sim_rm(e, r + k) : sim_ra(e, r + k);
}

/*
 * Effective address of the base/delta forms, whose operands are
 * (data, $base, $delta, $off|zimm12) or (data, $base, $delta+=,
 * $stride|simm8):
 *   3-operand: EA = base + delta + off * size (off unsigned)
 *   step:      EA = base + delta; delta += stride * size (stride signed)
 * The delta write-back is logged here, before the caller logs a loaded
 * value, so that when the delta and destination registers coincide the
 * loaded value wins (DECISION).
 */
static uint32_t
base_delta_ea(Exec *e, uint32_t size)
{
	uint32_t base = sim_src(e, 1), delta = sim_src(e, 2);
	if (spec(e, 2)->decor == DEC_PINC) {
		uint32_t stride =
		    sim_src(e, 3); /* simm8 arrives sign-extended */
		sim_wm(e, e->in->op[2], delta + stride * size);
		return base + delta;
	}
	return base + delta + sim_src(e, 3) * size;
}

/* Plain loads: `size` bytes into operand 0, widened by `mode`. */
enum { WIDEN_NONE, WIDEN_ZERO, WIDEN_SIGN, WIDEN_BCAST };

static inline __attribute__((always_inline)) void
load_simple(Exec *e, uint32_t size, int mode)
{
	uint32_t addr = base_delta_ea(e, size);
	uint8_t buf[16];
	if (!sim_load(e, addr, buf, size))
		return;
	uint32_t w[4];
	if (size >= 4) {
		for (uint32_t k = 0; k < size / 4; k++)
			w[k] = get_le32(buf + 4 * k);
		write_words(e, 0, 0, w, (int)(size / 4));
		return;
	}
	uint32_t v =
	    size == 2 ? (uint32_t)buf[0] | (uint32_t)buf[1] << 8 : buf[0];
	uint32_t top = size == 2 ? 0x8000u : 0x80u;
	switch (mode) {
	case WIDEN_SIGN:
		if (v & top)
			v |= ~(2 * top - 1);
		break;
	case WIDEN_BCAST:
		v = size == 2 ? v * 0x10001u : v * 0x01010101u;
		break;
	default:
		break;
	}
	write_words(e, 0, 0, &v, 1);
}

static inline __attribute__((always_inline)) void
store_simple(Exec *e, uint32_t size)
{
	uint32_t addr = base_delta_ea(e, size);
	uint32_t w[2];
	uint8_t buf[8];
	read_words(e, 0, w, (int)(size / 4));
	for (uint32_t k = 0; k < size / 4; k++)
		put_le32(buf + 4 * k, w[k]);
	sim_store(e, addr, buf, size);
}

void
exec_ld32(Exec *e)
{
	load_simple(e, 4, WIDEN_NONE);
}

void
exec_ld32step(Exec *e)
{
	load_simple(e, 4, WIDEN_NONE);
}

void
exec_ld64(Exec *e)
{
	load_simple(e, 8, WIDEN_NONE);
}

void
exec_ld64step(Exec *e)
{
	load_simple(e, 8, WIDEN_NONE);
}

void
exec_ld128(Exec *e)
{
	load_simple(e, 16, WIDEN_NONE);
}

void
exec_ld128step(Exec *e)
{
	load_simple(e, 16, WIDEN_NONE);
}

void
exec_ldz8(Exec *e)
{
	load_simple(e, 1, WIDEN_ZERO);
}

void
exec_ldz8step(Exec *e)
{
	load_simple(e, 1, WIDEN_ZERO);
}

void
exec_lds8(Exec *e)
{
	load_simple(e, 1, WIDEN_SIGN);
}

void
exec_lds8step(Exec *e)
{
	load_simple(e, 1, WIDEN_SIGN);
}

void
exec_ldz16(Exec *e)
{
	load_simple(e, 2, WIDEN_ZERO);
}

void
exec_ldz16step(Exec *e)
{
	load_simple(e, 2, WIDEN_ZERO);
}

void
exec_lds16(Exec *e)
{
	load_simple(e, 2, WIDEN_SIGN);
}

void
exec_lds16step(Exec *e)
{
	load_simple(e, 2, WIDEN_SIGN);
}

void
exec_ldb16(Exec *e)
{
	load_simple(e, 2, WIDEN_BCAST);
}

void
exec_ldb16step(Exec *e)
{
	load_simple(e, 2, WIDEN_BCAST);
}

void
exec_ldb8(Exec *e)
{
	load_simple(e, 1, WIDEN_BCAST);
}

void
exec_ldb8step(Exec *e)
{
	load_simple(e, 1, WIDEN_BCAST);
}

void
exec_st32(Exec *e)
{
	store_simple(e, 4);
}

void
exec_st32step(Exec *e)
{
	store_simple(e, 4);
}

void
exec_st64(Exec *e)
{
	store_simple(e, 8);
}

void
exec_st64step(Exec *e)
{
	store_simple(e, 8);
}

/*
 * The fast forms of ld32, ld32step, ld64, ld64step, st64 and st64step
 * (sim.h, SIM_FAST_FORMS), the vector kernels' plain loads and stores: the
 * operands read straight from the instruction ($base and $delta are
 * registers in every row of them, the fourth operand a register or an
 * immediate), and the single access checked by sim_mem_solo without the
 * bundle's access log: only main-lane instructions access memory
 * (insns.def), so nothing else in the bundle can conflict with it. An
 * access it does not pass (outside memory, misaligned, a watch, the plain
 * path) goes to the plain form, nothing having been done. The register
 * writes are made in the plain forms' order (base_delta_ea: the delta
 * first, then the loaded words), after the check: logged, or with direct
 * (direct_<mn>, sim.h's SIM_DIRECT_FORMS) straight to the registers.
 */
static inline __attribute__((always_inline)) int
fast_ea(Exec *e, int step, uint32_t size, uint32_t *ea, int direct)
{
	const int32_t *op = e->in->op;
	uint32_t base = sim_rm(e, op[1]), delta = sim_rm(e, op[2]);
	uint32_t x = sim_src(e, 3); /* $off, $stride or the immediate */
	*ea = step ? base + delta : base + delta + x * size;
	if (!sim_mem_solo(e->tile, *ea, size))
		return 0;
	if (step)
		sim_put_m(e, op[2], delta + x * size, direct);
	return 1;
}

/* ld32's destination is an $m or an $a register, by row. */
static inline __attribute__((always_inline)) void
fast_load32(Exec *e, int step, ExecFn plain, int direct)
{
	uint32_t ea;
	if (!fast_ea(e, step, 4, &ea, direct)) {
		plain(e);
		return;
	}
	/* an $m or an $a register (insns.def) */
	sim_put_dst(e, 0, get_le32(e->tile->mem + (ea - e->tile->mem_base)),
	            direct);
}

static inline __attribute__((always_inline)) void
fast_load64(Exec *e, int step, ExecFn plain, int direct)
{
	uint32_t ea;
	if (!fast_ea(e, step, 8, &ea, direct)) {
		plain(e);
		return;
	}
	const uint8_t *p = e->tile->mem + (ea - e->tile->mem_base);
	int r = e->in->op[0];
	sim_put_a(e, r, get_le32(p), direct);
	sim_put_a(e, r + 1, get_le32(p + 4), direct);
}

static inline __attribute__((always_inline)) void
fast_store64(Exec *e, int step, ExecFn plain, int direct)
{
	uint32_t ea;
	if (!fast_ea(e, step, 8, &ea, direct)) {
		plain(e);
		return;
	}
	Tile *t = e->tile;
	uint8_t *p = t->mem + (ea - t->mem_base);
	int r = e->in->op[0];
	put_le32(p, sim_ra(e, r));
	put_le32(p + 4, sim_ra(e, r + 1));
	sim_invalidate(t, ea, 8);
}

/* Each fast form, and its direct instance where it writes a register. */
#define FAST_MEM(mn, body, step)                                               \
	void fast_##mn(Exec *e)                                                \
	{                                                                      \
		body(e, step, exec_##mn, 0);                                   \
	}
#define DIRECT_MEM(mn, body, step)                                             \
	FAST_MEM(mn, body, step)                                               \
	void direct_##mn(Exec *e)                                              \
	{                                                                      \
		body(e, step, exec_##mn, 1);                                   \
	}
DIRECT_MEM(ld32, fast_load32, 0)
DIRECT_MEM(ld32step, fast_load32, 1)
DIRECT_MEM(ld64, fast_load64, 0)
DIRECT_MEM(ld64step, fast_load64, 1)
FAST_MEM(st64, fast_store64, 0)
DIRECT_MEM(st64step, fast_store64, 1)

/* stm32 $src, $base, $off: EA = base + off * 4 (no delta register). */
void
exec_stm32(Exec *e)
{
	uint8_t buf[4];
	put_le32(buf, sim_src(e, 0));
	sim_store(e, sim_src(e, 1) + sim_src(e, 2) * 4, buf, 4);
}

/* stm32step $src, $base+=, $stride: EA = base; base += stride * 4. */
void
exec_stm32step(Exec *e)
{
	uint32_t base = sim_src(e, 1);
	uint8_t buf[4];
	put_le32(buf, sim_src(e, 0));
	sim_wm(e, e->in->op[1], base + sim_src(e, 2) * 4);
	sim_store(e, base, buf, 4);
}

/* Triple-packed addresses: sim.h (sim_ta_unpack, sim_ta_pack). */

void
exec_tapack(Exec *e)
{
	uint32_t a[3] = {sim_src(e, 1), sim_src(e, 2), sim_src(e, 3)}, w[2];
	sim_ta_pack(a, &w[0], &w[1]);
	write_words(e, 0, 0, w, 2);
}

/*
 * One paced access: the address, its 2-bit selector and its size. After the
 * access the address moves by 1 unit (selector 00) or by the signed 10-bit
 * stride field 0/1/2 of the stride register (01/10/11). DECISION: the unit is
 * the access's own size (8 bytes, an atom, for the 64-bit accesses every
 * stride in isa.md describes; 4 or 2 bytes for the second address of
 * ld64a32pace/ld64b16pace), and addresses wrap within their 21-bit fields.
 */
typedef struct {
	int which; /* A0, A1 or A2 */
	unsigned sel;
	uint32_t size;
} PaceAccess;

/* sim_pace_next (the rule above): sim.h. */

/* Operands of every pace form, by index. */
typedef struct {
	int pair;   /* the $mAddr pair (+=) */
	int stride; /* the $mStride register */
	int imm;    /* the selector immediate */
} PaceOps;

/* Decode the packed addresses into a[], log the post-incremented pair.
 * Every paced form has the pair (an MRF pair) and the stride (an MRF
 * register) as operands o.pair and o.stride. */
static inline void
pace_addresses(Exec *e, PaceOps o, const PaceAccess *acc, int n, uint32_t a[3])
{
	int r = e->in->op[o.pair];
	uint32_t lo = sim_rm(e, r), hi = sim_rm(e, r + 1);
	sim_ta_unpack(lo, hi, a);
	uint32_t next[3] = {a[0], a[1], a[2]};
	uint32_t stride = sim_rm(e, e->in->op[o.stride]);
	for (int k = 0; k < n; k++)
		next[acc[k].which] = sim_pace_next(a[acc[k].which], stride,
		                                   acc[k].sel, acc[k].size);
	sim_ta_pack(next, &lo, &hi);
	sim_wm(e, r, lo);
	sim_wm(e, r + 1, hi);
}

/* The selector bits of the immediate operand (a U operand). */
static inline unsigned
sel_bits(const Exec *e, int imm_op, int shift)
{
	return ((uint32_t)e->in->op[imm_op] >> shift) & 3u;
}

static inline __attribute__((always_inline)) int
load64(Exec *e, uint32_t addr, uint32_t w[2])
{
	uint8_t buf[8];
	if (!sim_load(e, addr, buf, 8))
		return 0;
	w[0] = get_le32(buf);
	w[1] = get_le32(buf + 4);
	return 1;
}

/* Store the ARF pair of operand op (the paced forms' data are ARF). */
static inline __attribute__((always_inline)) int
store64_from(Exec *e, uint32_t addr, int op)
{
	int r = e->in->op[op];
	uint8_t buf[8];
	put_le32(buf, sim_ra(e, r));
	put_le32(buf + 4, sim_ra(e, r + 1));
	return sim_store(e, addr, buf, 8);
}

/* Write w[0], w[1] to ARF registers r, r + 1 (direct: as sim_put). */
static inline __attribute__((always_inline)) void
put_pair(Exec *e, int r, const uint32_t w[2], int direct)
{
	sim_put_a(e, r, w[0], direct);
	sim_put_a(e, r + 1, w[1], direct);
}

/* Log w[0], w[1] to ARF registers r, r + 1. */
static inline void
wa_pair(Exec *e, int r, const uint32_t w[2])
{
	put_pair(e, r, w, 0);
}

/* Do registers [r0, r0+n0) and [r1, r1+n1) overlap? */
static int
overlap(int r0, int n0, int r1, int n1)
{
	return r0 < r1 + n1 && r1 < r0 + n0;
}

/* ld2x64pace $dst0:pair, $dst1:pair, $ta+=, $stride, imm4:
 * A0 -> dst0 (imm[1:0]), A1 -> dst1 (imm[3:2]). */
void
exec_ld2x64pace(Exec *e)
{
	if (e->in->op[0] == e->in->op[1]) {
		sim_fault(e, FAULT_INVALID_OP, 0,
		          "ld2x64pace: the two destination pairs must differ");
		return;
	}
	PaceOps o = {2, 3, 4};
	PaceAccess acc[2] = {{0, sel_bits(e, 4, 0), 8},
	                     {1, sel_bits(e, 4, 2), 8}};
	uint32_t a[3], w0[2], w1[2];
	pace_addresses(e, o, acc, 2, a);
	if (!load64(e, a[0], w0) || !load64(e, a[1], w1))
		return;
	wa_pair(e, e->in->op[0], w0);
	wa_pair(e, e->in->op[1], w1);
}

/* ld64a32pace / ld64b16pace $dst0:pair, $dst1, $ta+=, $stride, imm4:
 * 64 bits from A0 -> dst0 (imm[1:0]); 32 bits, or 16 bits broadcast, from
 * A1 -> dst1 (imm[3:2]). */
static void
ld64_and_narrow(Exec *e, const char *name, uint32_t size)
{
	if (overlap(e->in->op[0], 2, e->in->op[1], 1)) {
		sim_fault(e, FAULT_INVALID_OP, 0,
		          "%s: the destinations must not overlap", name);
		return;
	}
	PaceOps o = {2, 3, 4};
	PaceAccess acc[2] = {{0, sel_bits(e, 4, 0), 8},
	                     {1, sel_bits(e, 4, 2), size}};
	uint32_t a[3], w0[2];
	uint8_t buf[4];
	pace_addresses(e, o, acc, 2, a);
	if (!load64(e, a[0], w0) || !sim_load(e, a[1], buf, size))
		return;
	uint32_t v =
	    size == 4 ? get_le32(buf)
	              : ((uint32_t)buf[0] | (uint32_t)buf[1] << 8) * 0x10001u;
	wa_pair(e, e->in->op[0], w0);
	sim_wa(e, e->in->op[1], v);
}

void
exec_ld64a32pace(Exec *e)
{
	ld64_and_narrow(e, "ld64a32pace", 4);
}

void
exec_ld64b16pace(Exec *e)
{
	ld64_and_narrow(e, "ld64b16pace", 2);
}

/* ldst64pace $dst:pair, $src:pair, $ta+=, $stride, imm4:
 * load A0 -> dst (imm[1:0]), store src -> A2 (imm[3:2]). The store sends
 * the pre-bundle src even when src == dst. */
void
exec_ldst64pace(Exec *e)
{
	PaceOps o = {2, 3, 4};
	PaceAccess acc[2] = {{0, sel_bits(e, 4, 0), 8},
	                     {2, sel_bits(e, 4, 2), 8}};
	uint32_t a[3], w[2];
	pace_addresses(e, o, acc, 2, a);
	if (!load64(e, a[0], w) || !store64_from(e, a[2], 1))
		return;
	wa_pair(e, e->in->op[0], w);
}

/* ld2xst64pace $dst:quad, $src:pair, $ta+=, $stride, imm6:
 * A0 -> dst low pair (imm[1:0]), A1 -> dst high pair (imm[3:2]),
 * src -> A2 (imm[5:4]): three accesses, which must hit three elements. */
void
exec_ld2xst64pace(Exec *e)
{
	PaceOps o = {2, 3, 4};
	PaceAccess acc[3] = {{0, sel_bits(e, 4, 0), 8},
	                     {1, sel_bits(e, 4, 2), 8},
	                     {2, sel_bits(e, 4, 4), 8}};
	uint32_t a[3], w0[2], w1[2];
	pace_addresses(e, o, acc, 3, a);
	if (!load64(e, a[0], w0) || !load64(e, a[1], w1) ||
	    !store64_from(e, a[2], 1))
		return;
	wa_pair(e, e->in->op[0], w0);
	wa_pair(e, e->in->op[0] + 2, w1);
}

/* st64pace $src:pair, $ta+=, $stride, imm: src -> A2. The documents call
 * the immediate Strimm2; the encoding has 8 bits. DECISION: imm[1:0] is the
 * A2 selector and the other bits are ignored. */
void
exec_st64pace(Exec *e)
{
	PaceOps o = {1, 2, 3};
	PaceAccess acc[1] = {{2, sel_bits(e, 3, 0), 8}};
	uint32_t a[3];
	pace_addresses(e, o, acc, 1, a);
	store64_from(e, a[2], 0);
}

/*
 * The fast forms of the paced 64-bit forms (sim.h, SIM_FAST_FORMS, and
 * the bundles of tile.c's issue_fused): sim_pace_prepare computes all an
 * instruction would do (addresses, its pair register's new value, the
 * words it loads and stores) without doing any of it, when its accesses
 * pass sim_mem_fast8 together; else it declines and the plain form runs
 * the instruction.
 */
/* The fast forms: the prepared effects, the register writes made in the
 * plain forms' order (the pair first): logged, or with direct (direct_<mn>,
 * sim.h's SIM_DIRECT_FORMS) straight to the registers. */
static inline __attribute__((always_inline)) void
pace_fast(Exec *e, PaceForm form, ExecFn plain, int direct)
{
	PaceDec d;
	PaceOp o;
	sim_pace_decode(e->in, form, &d);
	if (!sim_pace_prepare(e->tile, e->c, &d, form, &o, -1)) {
		plain(e);
		return;
	}
	sim_pace_store(e->tile, form, &o);
	sim_put_m(e, d.pair, o.lo, direct);
	sim_put_m(e, d.pair + 1, o.hi, direct);
	for (int k = 0; k < sim_pace_loads(form); k++)
		put_pair(e, d.dst[k], o.ld[k], direct);
}

#define FAST_PACE(mn, form)                                                    \
	void fast_##mn(Exec *e)                                                \
	{                                                                      \
		pace_fast(e, form, exec_##mn, 0);                              \
	}                                                                      \
	void direct_##mn(Exec *e)                                              \
	{                                                                      \
		pace_fast(e, form, exec_##mn, 1);                              \
	}
FAST_PACE(ld2xst64pace, PACE_LD2XST)
FAST_PACE(ld2x64pace, PACE_LD2X)
FAST_PACE(ldst64pace, PACE_LDST)
FAST_PACE(st64pace, PACE_ST)

/*
 * Sparse loads (Graphcore's per-instruction notes, restated in isa.md 4.3).
 * A pointer register walks an array of 16-bit deltas; a data load reads
 * base + delta. DECISION: deltas are unsigned byte offsets, not scaled.
 */

/* ld64a32 $dst:quad, $ptr++, $base, $delta: 64 bits from ptr -> dst+2:3,
 * 32 bits from base + delta[15:0] -> dst+1; dst+0 unchanged; ptr += 8. */
void
exec_ld64a32(Exec *e)
{
	uint32_t ptr = sim_src(e, 1), base = sim_src(e, 2);
	uint32_t delta = sim_src(e, 3) & 0xffffu;
	uint32_t w[2];
	uint8_t buf[4];
	if (!load64(e, ptr, w) || !sim_load(e, base + delta, buf, 4))
		return;
	sim_wm(e, e->in->op[1], ptr + 8);
	uint32_t v = get_le32(buf);
	write_words(e, 0, 1, &v, 1);
	write_words(e, 0, 2, w, 2);
}

/* ldd16a32/a64/b16 $dst, $ptr++, $base, $delta@: 16 bits from ptr become
 * the new delta (zero-extended); data from base + old delta[15:0] -> dst;
 * ptr += 2. ldd16v2a32: 32 bits (a delta pair) from ptr become the new
 * delta register, data from base + old delta[31:16], ptr += 4.
 * DECISION: when ptr and delta are one register, the loaded delta wins. */
enum { DELTA_LO16, DELTA_PAIR };

static void
load_delta(Exec *e, int form, uint32_t size, int bcast)
{
	uint32_t ptr = sim_src(e, 1), base = sim_src(e, 2), old = sim_src(e, 3);
	uint32_t dsize = form == DELTA_PAIR ? 4 : 2;
	uint32_t off = form == DELTA_PAIR ? old >> 16 : old & 0xffffu;
	uint8_t dbuf[4], buf[8];
	if (!sim_load(e, ptr, dbuf, dsize) ||
	    !sim_load(e, base + off, buf, size))
		return;
	uint32_t nd = form == DELTA_PAIR
	                  ? get_le32(dbuf)
	                  : (uint32_t)dbuf[0] | (uint32_t)dbuf[1] << 8;
	sim_wm(e, e->in->op[1], ptr + dsize);
	sim_wm(e, e->in->op[3], nd);
	uint32_t w[2];
	if (bcast) {
		w[0] = ((uint32_t)buf[0] | (uint32_t)buf[1] << 8) * 0x10001u;
	} else {
		w[0] = get_le32(buf);
		if (size == 8)
			w[1] = get_le32(buf + 4);
	}
	write_words(e, 0, 0, w, span(e, 0));
}

void
exec_ldd16a32(Exec *e)
{
	load_delta(e, DELTA_LO16, 4, 0);
}

void
exec_ldd16a64(Exec *e)
{
	load_delta(e, DELTA_LO16, 8, 0);
}

void
exec_ldd16b16(Exec *e)
{
	load_delta(e, DELTA_LO16, 2, 1);
}

void
exec_ldd16v2a32(Exec *e)
{
	load_delta(e, DELTA_PAIR, 4, 0);
}

/* ldb16b16: the notes say one of the two packed 16-bit deltas steps by 2
 * bytes and the other by a 4-bit mini-delta, but not which is which, the
 * mini-delta's unit, or which load lands in which register. Too many guesses
 * to call it emulated. */
void
exec_ldb16b16(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "ldb16b16 is not emulated: semantics unknown (which packed "
	          "delta takes the mini-delta, and its unit)");
}

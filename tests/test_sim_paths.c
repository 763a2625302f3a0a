/* test_sim_paths.c - the emulator's fast paths against its plain ones
 * (sim.h, SimPath), and its results for any number of host threads.
 *
 * One tile: the same random programs run under SIM_PLAIN (the reference),
 * SIM_PORTABLE and SIM_FAST must leave the same complete tile state: every
 * register of every context, the AMP state, the CWEI and CSRs, all of
 * memory, the cycle and issue counters, and the fault with its cause.
 * Programs are random bundles of every worker instruction that does not
 * change the flow (operands random within their fields, registers and
 * memory random bit patterns with NaN, infinity, subnormal and plain
 * values), AMP-heavy ones that keep the engines busy on the same
 * weights, vector ones (the f16 add, sub, mul and conversion and the f32
 * add, sub and mul with fast forms), run by two workers, and ones of the
 * 64-bit loads and stores with fast forms. Their idle slots and waits on
 * multi-turn instructions take the idle skipping of the fast paths
 * (tile.c, next_busy_issue).
 *
 * The chip: compiled graphs that use every kernel (GEMMs in f16, f32 and
 * f8, LayerNorm, softmax, GELU, adds, casts, transposes and the exchange
 * between them) run on the plain path on one host thread and on the fast
 * paths on 1, 2 and 5 threads; every tile's complete state, every trace
 * event, the outputs and the cycle count must be the same. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ipu/runtime.h>

#include "../src/compile/compile.h"
#include "../src/rt/device.h"
#include "../src/util/util.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t
rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t
below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* Rows of each kind a worker may issue in straight-line code. */
typedef struct {
	int16_t row[ISA_ROWS];
	int n;
} RowSet;

/* main: every main-lane row; pair: those that may open a bundle; sup:
 * the main-lane rows the supervisor may issue in straight-line code */
static RowSet main_rows, pair_rows, aux_rows, amp_rows, load_rows, vec_rows,
    ldst_rows, sup_rows;

/* The aux-lane instructions with a fast form of their own (sim.h,
 * SIM_FAST_FORMS) besides the AMP's, or a fast path inside the plain one
 * (exec_float.c: the f8 conversions by table, the functions' rounding):
 * STYLE_VEC's bundles use them. */
static const char *const vec_mnemonics[] = {
    "f16v2add",   "f16v4add",   "f16v2sub",  "f16v4sub",   "f16v2mul",
    "f16v4mul",   "f16v2tof32", "f32v2add",  "f32v2sub",   "f32v2mul",
    "f16v2tof8",  "f16v8tof8",  "f32exp",    "f32sigm",    "f32tanh",
    "f16v2exp",   "f16v2tanh",  "f16v2sigm", "f32v4tof16", "f32v2axpy",
    "f16v2min",   "f16v4min",   "f16v2max",  "f16v4max",   "f16v4acc",
    "f32v4sqacc", "f16v8sqacc", "f16v4mix"};

/* The main-lane loads and stores with a fast form of their own (sim.h,
 * SIM_FAST_FORMS; exec_mem.c, fast_load64, fast_load32): STYLE_LDST's
 * bundles. */
static const char *const ldst_mnemonics[] = {
    "ld32", "ld32step", "ld64", "ld64step", "st64", "st64step"};

/* The forms whose halves may write their registers directly instead of
 * through the write log (sim.h, SIM_DIRECT_FORMS): STYLE_DIRECT's bundles
 * are made of them (main-lane rows: direct_main_rows, aux-lane rows:
 * direct_aux_rows). */
static const char *const direct_mnemonics[] = {
#define X(mn, writes) #mn,
    SIM_DIRECT_FORMS(X)
#undef X
};
static RowSet direct_main_rows, direct_aux_rows;

static void
collect_rows(void)
{
	if (main_rows.n)
		return;
	const Chip *chip = chip_default();
	for (int r = 0; r < isa_rows(); r++) {
		const InsnDesc *d = isa_row(r);
		if (!isa_available(d, chip->arch) ||
		    (d->flags & (F_CONTROL | F_SYSTEM | F_WIDE)))
			continue;
		if (d->ctx != CTX_W && d->lane == LANE_MAIN)
			sup_rows.row[sup_rows.n++] = (int16_t)r;
		if (d->ctx == CTX_S)
			continue;
		RowSet *s = d->lane == LANE_MAIN ? &main_rows : &aux_rows;
		s->row[s->n++] = (int16_t)r;
		if (d->lane == LANE_MAIN && !(d->flags & F_SOLO))
			pair_rows.row[pair_rows.n++] = (int16_t)r;
		if (strstr(d->mnemonic, "amp"))
			amp_rows.row[amp_rows.n++] = (int16_t)r;
		for (size_t k = 0;
		     k < sizeof vec_mnemonics / sizeof vec_mnemonics[0]; k++)
			if (!strcmp(d->mnemonic, vec_mnemonics[k]))
				vec_rows.row[vec_rows.n++] = (int16_t)r;
		for (size_t k = 0;
		     k < sizeof ldst_mnemonics / sizeof ldst_mnemonics[0]; k++)
			if (!strcmp(d->mnemonic, ldst_mnemonics[k]))
				ldst_rows.row[ldst_rows.n++] = (int16_t)r;
		if (d->lane == LANE_MAIN && !(d->flags & F_SOLO) &&
		    (d->flags & F_LOAD))
			load_rows.row[load_rows.n++] = (int16_t)r;
		RowSet *ds =
		    d->lane == LANE_MAIN ? &direct_main_rows : &direct_aux_rows;
		for (size_t k = 0;
		     k < sizeof direct_mnemonics / sizeof direct_mnemonics[0];
		     k++)
			if (!strcmp(d->mnemonic, direct_mnemonics[k]) &&
			    (d->lane == LANE_AUX || !(d->flags & F_SOLO)))
				ds->row[ds->n++] = (int16_t)r;
	}
	assert_true(main_rows.n > 50 && aux_rows.n > 50 && amp_rows.n >= 7 &&
	            load_rows.n > 10 && vec_rows.n >= 10 && ldst_rows.n == 16 &&
	            sup_rows.n > 50 && direct_main_rows.n == 24 &&
	            direct_aux_rows.n == 31);
}

static int32_t
random_operand(const OperandSpec *s)
{
	for (;;) {
		int64_t v;
		uint32_t w = s->width;
		uint64_t field = w >= 32 ? rnd() : rnd() & ((1ull << w) - 1);
		switch (s->kind) {
		case OPK_M:
		case OPK_A:
			v = below(16);
			break;
		case OPK_MP:
		case OPK_AP:
			v = 2 * below(8);
			break;
		case OPK_AQ:
			v = 4 * below(4);
			break;
		case OPK_S:
			v = below(4) ? (int64_t)below(17) - 8
			             : (int64_t)field - ((int64_t)1 << (w - 1));
			break;
		case OPK_Z:
			v = (int64_t)((uint32_t)rnd() &
			              ~((1u << (32 - w)) - 1));
			break;
		default:
			v = below(4) ? below(16) : (int64_t)field;
			break;
		}
		if (isa_operand_fits(s, v))
			return (int32_t)v;
	}
}

/* $m registers by role, so that most accesses land in memory: m0..m3 hold
 * addresses, m4:5 packed addresses, m6..m9 small offsets, m10..m14 take
 * results (make_tile sets them; instructions may change any of them). */
static int32_t
mreg_for(const InsnDesc *d, int i)
{
	static const int addr[] = {0, 1, 2, 3}, off[] = {6, 7, 8, 9, 15},
	                 res[] = {10, 11, 12, 13, 14};
	if (below(10) == 0)
		return (int32_t)below(16);
	if (i == 0 || !(d->flags & (F_LOAD | F_STORE)))
		return res[below(5)];
	/* the sparse loads: ptr++ and base are addresses, delta@ not */
	int sparse = 0;
	for (int k = 0; k < d->nops; k++)
		sparse |= d->op[k].decor == DEC_PP;
	Decor dec = d->op[i].decor;
	int is_addr = dec == DEC_PP || (i == 1 && !sparse) ||
	              (i == 2 && sparse && dec != DEC_AT);
	return is_addr ? addr[below(4)] : off[below(5)];
}

static uint32_t
random_word(const RowSet *set)
{
	Insn in = {.row = set->row[below((uint32_t)set->n)]};
	const InsnDesc *d = isa_row(in.row);
	in.nops = d->nops;
	for (int i = 0; i < d->nops; i++) {
		OperandKind k = d->op[i].kind;
		if (k == OPK_M)
			in.op[i] = mreg_for(d, i);
		else if (k == OPK_MP && i > 0 && below(8))
			in.op[i] = 4;
		else
			in.op[i] = random_operand(&d->op[i]);
	}
	uint32_t w;
	assert_int_equal(isa_encode(&in, &w), 0);
	return w;
}

/* Bit patterns: f16 pairs and f32 values, ordinary and special. With
 * f16_wide, f16 exponents are drawn over the whole range (subnormals,
 * sums and products that overflow or round into the subnormals). */
static int f16_wide;
/* The small offsets all multiples of 8 (random_mregs), so that the 64-bit
 * loads and stores of STYLE_LDST mostly run on (ldst_word). */
static int aligned_offsets;
/* An FP trap enabled in a quarter of the programs (setup_tile). */
static int trap_often;

static uint16_t
random_f16(void)
{
	static const uint16_t special[] = {0x0000, 0x8000, 0x7c00, 0xfc00,
	                                   0x7e00, 0x7d00, 0xfe01, 0x0001,
	                                   0x83ff, 0x7bff, 0xfbff, 0x0400};
	uint32_t k = below(16);
	if (k == 0)
		return special[below(sizeof special / sizeof special[0])];
	if (k == 1)
		return (uint16_t)rnd();
	if (f16_wide)
		return (uint16_t)((rnd() & 0x83ff) | below(31) << 10);
	/* sign, exponent near 1, any fraction */
	return (uint16_t)((rnd() & 0x8000) | (uint32_t)(11 + below(9)) << 10 |
	                  (rnd() & 0x3ff));
}

static uint32_t
random_f32(void)
{
	static const uint32_t special[] = {
	    0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
	    0x7fa00001, 0xffc00123, 0x00000001, 0x807fffff, 0x7f7fffff,
	    0x00800000, 0x477ff000, 0x477fefff, 0x33800000, 0x387fe000};
	uint32_t k = below(16);
	if (k == 0)
		return special[below(sizeof special / sizeof special[0])];
	if (k == 1)
		return (uint32_t)rnd();
	return (uint32_t)(rnd() & 0x80000000u) |
	       (uint32_t)(120 + below(16)) << 23 | (uint32_t)(rnd() & 0x7fffff);
}

static uint32_t
random_aword(void)
{
	switch (below(3)) {
	case 0:
		return random_f32();
	case 1:
		return (uint32_t)random_f16() | (uint32_t)random_f16() << 16;
	default:
		return (uint32_t)rnd();
	}
}

/* Data windows that address registers point into: one in region 0 after
 * the code, one in the interleaved region. */
enum { CODE_BYTES = 0x1000, WINDOW = 0x2000 };

static uint32_t
window_address(const Chip *c)
{
	uint32_t a = below(2) ? c->mem_base + CODE_BYTES : c->interleave;
	return a + 8 * below(WINDOW / 8);
}

/* $m values by role (mreg_for): addresses, packed addresses (the paced
 * loads' $mAddr pair, exec_mem.c: three 21-bit addresses, the third split
 * over the upper bits of both), small offsets (mostly multiples of 8, so
 * that base + delta stays aligned), anything for the rest. */
static void
random_mregs(const Chip *c, uint32_t *m)
{
	for (int i = 0; i < 4; i++)
		m[i] = window_address(c);
	/* A0 in region 0, A1 interleaved, A2 in the next element of region
	 * 0: the three accesses of ld2xst64pace hit three elements */
	uint32_t a[3] = {c->mem_base + CODE_BYTES + 8 * below(WINDOW / 16),
	                 c->interleave + 8 * below(WINDOW / 16),
	                 c->mem_base + 2 * WINDOW + 8 * below(WINDOW / 16)};
	m[4] = a[0] | (a[2] & 0x7ffu) << 21;
	m[5] = a[1] | ((a[2] >> 11) & 0x3ffu) << 21;
	for (int i = 6; i < 10; i++)
		m[i] = below(8) || aligned_offsets ? 8 * below(16) : below(64);
	for (int i = 10; i < 16; i++)
		m[i] = below(2) ? (uint32_t)rnd() : below(64);
}

typedef enum {
	STYLE_ANY,
	STYLE_AMP,
	STYLE_VEC,
	STYLE_LDST,
	STYLE_SUP,
	STYLE_DIRECT
} Style;

/* A main half of STYLE_LDST: a row of ldst_rows whose $base is an
 * address register and whose $delta and register offset or stride are
 * small offsets or $mzero (random_mregs); one in 32 with any operands
 * (random_word), so that some accesses leave memory or are misaligned.
 * Its other main halves are amp_load's, which keep the offsets as they
 * are. */
static uint32_t
ldst_word(void)
{
	if (below(32) == 0)
		return random_word(&ldst_rows);
	Insn in = {.row = ldst_rows.row[below((uint32_t)ldst_rows.n)]};
	const InsnDesc *d = isa_row(in.row);
	static const int off[] = {6, 7, 8, 9, 15};
	in.nops = d->nops;
	/* ld32 into an $m register: one of the results' (mreg_for), so
	 * that the addresses stay */
	in.op[0] = d->op[0].kind == OPK_M ? 10 + (int32_t)below(5)
	                                  : random_operand(&d->op[0]);
	in.op[1] = (int32_t)below(4);
	in.op[2] = off[below(5)];
	/* an immediate offset or stride: mostly small (the stride signed;
	 * ld32step's even, so that $delta stays 8-byte aligned for the
	 * 64-bit accesses) */
	OperandKind k = d->op[3].kind;
	int even = k == OPK_S && !strcmp(d->mnemonic, "ld32step");
	in.op[3] = k == OPK_M      ? off[below(5)]
	           : below(8) == 0 ? random_operand(&d->op[3])
	           : even          ? 2 * ((int32_t)below(9) - 4)
	           : k == OPK_S    ? (int32_t)below(17) - 8
	                           : (int32_t)below(16);
	uint32_t w;
	assert_int_equal(isa_encode(&in, &w), 0);
	return w;
}

/* The main half of an AMP-heavy bundle: the loads that feed AMP loops,
 * on addresses that stay in memory (random_mregs). */
static uint32_t
amp_load(void)
{
	int p = 2 * (int)below(8), q = 2 * (int)((below(7) + 1 + p / 2) % 8);
	switch (below(6)) {
	case 0:
		return enc("ld2x64pace_mmbn_ef", 5, p, q, 4, 15, 0);
	case 4:
		return enc("ldst64pace_mbbn_ef", 5, p, q, 4, 15, 0);
	case 5:
		return enc("st64pace_mbmn_ef", 4, p, 4, 15, 0);
	case 1:
		return enc("ld64step_mmbn_si", 4, p, (int)below(4),
		           6 + (int)below(4), 1);
	case 2:
		return enc("ld2xst64pace_mbbn_ef", 5, 4 * (int)below(4), p, 4,
		           15, 0);
	default:
		return enc("setzi_mmmn_zi", 2, 10 + (int)below(5),
		           (int)below(1000));
	}
}

/* A main half of STYLE_DIRECT: a quarter of them loads and stores of
 * ldst_word (one in 32 with any operands: out of memory or misaligned; st64
 * is not in SIM_DIRECT_FORMS), a quarter the paced loads and stores of
 * amp_load (and its setzi, not in the list either), the rest any row of
 * direct_main_rows with random operands (one in ten of their $m registers
 * any, mreg_for: misaligned or out of memory). */
static uint32_t
direct_main(void)
{
	switch (below(4)) {
	case 0:
		return ldst_word();
	case 1:
		return amp_load();
	default:
		return random_word(&direct_main_rows);
	}
}

/* The worker that STYLE_SUP's runall starts: it exits at once. */
enum { SUP_WORKER = CODE_BYTES - 0x100 };

/* A $CCCSLOAD for sup_program's weight loads: mostly 16-byte aligned in
 * the interleaved data window (ld128putcs's rule), else 8-byte aligned
 * there, in region 0's window (ld64putcs's only), at the end of memory
 * (16 bytes from 8 before it leave memory) or anywhere. */
static uint32_t
putcs_address(const Chip *c)
{
	uint32_t a = c->interleave + 16 * below(WINDOW / 16);
	switch (below(8)) {
	case 0:
		return a + 8;
	case 1:
		return c->mem_base + CODE_BYTES + 8 * below(WINDOW / 8);
	case 2:
		return c->mem_end - 8 * (1 + below(3));
	case 3:
		return below(0x100000);
	default:
		return a;
	}
}

/* A CWEI index: mostly even and in range (ld128putcs's rule), else any
 * the encoding allows. */
static int
putcs_index(void)
{
	return below(8) ? 2 * (int)below(CHIP_CWEI / 2) : (int)below(256);
}

/* A supervisor program of n items, run alone (RUN_SUP) from mem_base, and
 * `br $lr` with $lr 0 (back to the host); returns its words. An item is a
 * random straight-line supervisor instruction (sup_rows), a setzi or a load
 * and an instruction that reads its result (the pipeline's sup-dep wait),
 * a delay,
 * a put (the CSR write's hazard), a brz or brnz over the next item's
 * first word (taken or not: the branch hazard), a runall of SUP_WORKER
 * and its sync LOCAL (the workers run, and the supervisor waits for
 * them), or weight loads (ld128putcs, ld64putcs: their fast forms) from a
 * $CCCSLOAD just put. */
static int
sup_program(const Chip *c, int n, uint32_t *w)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		/* results' registers (mreg_for): the addresses stay */
		int r1 = 10 + (int)below(5), r2 = 10 + (int)below(5);
		switch (below(12)) {
		case 6:
		case 7: /* a load from a data window, its result read next */
			w[k++] = enc("ld32_mmmn_zi", 4, r1, (int)below(4), 15,
			             (int)below(64));
			w[k++] = enc("add_mmmn_zi", 3, r2, r1, 1);
			break;
		case 0:
		case 1:
			w[k++] = enc("setzi_mmmn_zi", 2, r1, (int)below(1000));
			w[k++] =
			    below(2)
			        ? enc("add_mmmn_zi", 3, r2, r1, (int)below(100))
			        : enc("st32_mmmn_zi", 4, r1, 0, 15, 0);
			break;
		case 2:
			w[k++] = enc("delay_mmmn_zi", 1, (int)below(8));
			break;
		case 3:
			w[k++] =
			    enc("put_mmmn_zi", 2,
			        CSR_WORKER0_BASE + (int)below(CHIP_WORKERS),
			        (int)below(16));
			break;
		case 4:
			w[k] =
			    enc(below(2) ? "brz_mmmn_zi" : "brnz_mmmn_zi", 2,
			        (int)below(16),
			        (int32_t)(c->mem_base + 4u * (uint32_t)k + 8));
			k++;
			w[k++] = random_word(&sup_rows);
			break;
		case 5:
			r2 = r1 == 14 ? 10 : r1 + 1; /* not the base's */
			w[k++] = enc("setzi_mmmn_zi", 2, r2,
			             (int32_t)(c->mem_base + SUP_WORKER));
			w[k++] = enc("setzi_mmmn_zi", 2, r1,
			             (int32_t)(c->mem_base + CODE_BYTES));
			w[k++] = enc("runall_mmmn_zi", 3, r2, r1, 0);
			w[k++] = enc("sync_mmmn_zi", 1, SYNC_LOCAL);
			break;
		case 8: /* weight loads from a $CCCSLOAD just put */
			w[k++] = enc("setzi_mmmn_zi", 2, r1,
			             (int32_t)putcs_address(c));
			w[k++] = enc("put_mmmn_zi", 2, CSR_CCCSLOAD, r1);
			for (int j = (int)below(4); j >= 0; j--)
				w[k++] = enc(below(4) ? "ld128putcs_mmmn_zi"
				                      : "ld64putcs_mmmn_zi",
				             1, putcs_index());
			break;
		default: /* 9 to 11 */
			w[k++] = random_word(&sup_rows);
			break;
		}
	}
	w[k++] = enc("setzi_mmmn_zi", 2, 10, SIM_HOST_RETURN);
	w[k++] = enc("br_mmmn", 1, 10);
	return k;
}

/* A worker program of n issues (bundles, and solo main-lane instructions
 * for STYLE_ANY) and exitz; returns its words. STYLE_AMP's and STYLE_VEC's
 * bundles are the body of { rpt 3 ; fnop }, as a kernel's inner loop is:
 * the passes after the first run from the issue cache, so its fast forms
 * (sim.h, SIM_FAST_FORMS) and tile.c's fused bundles meet the plain path
 * here. STYLE_VEC's aux halves are mostly the f16 instructions with fast
 * forms (vec_rows), its main halves loads or anything. STYLE_LDST's are
 * STYLE_VEC's with main halves mostly ld32, ld32step, ld64, ld64step, st64
 * and st64step (ldst_rows, every row: register and immediate offsets and
 * strides). */
static int
make_program(Style style, int n, uint32_t *w)
{
	if (style == STYLE_SUP)
		return sup_program(chip_default(), n, w);
	int k = 0;
	if (style != STYLE_ANY) {
		w[k++] = enc("rpt_mmmn_zi_zi", 2, 3, n - 1) | 0x80000000u;
		w[k++] = enc("or_aaan_zi", 3, 15, 15, 0); /* fnop */
	}
	for (int i = 0; i < n; i++) {
		if (style == STYLE_ANY && below(4) == 0) {
			w[k++] = random_word(&main_rows) & 0x7fffffffu;
			continue;
		}
		if (k % 2) /* bundles are 8-byte aligned: pad with a solo */
			w[k++] = enc("setzi_mmmn_zi", 2, 15, 0);
		if (style == STYLE_DIRECT) {
			w[k++] = direct_main() | 0x80000000u;
			w[k++] = random_word(&direct_aux_rows) & 0x7fffffffu;
			continue;
		}
		int vec = style == STYLE_VEC || style == STYLE_LDST;
		const RowSet *ar = style == STYLE_AMP && below(8) ? &amp_rows
		                   : vec && below(16)             ? &vec_rows
		                                                  : &aux_rows;
		int load = style == STYLE_AMP || style == STYLE_LDST ||
		           (style == STYLE_VEC && below(8));
		uint32_t m = style == STYLE_LDST && below(8) ? ldst_word()
		             : load                          ? amp_load()
		                    : random_word(&pair_rows);
		w[k++] = m | 0x80000000u;
		w[k++] = random_word(ar) & 0x7fffffffu;
	}
	w[k++] = enc("exitz_mmmn", 1, 15);
	return k;
}

/* A running worker w with random registers and AMP state. */
static void
start_random_worker(Tile *t, int w)
{
	const Chip *c = t->chip;
	assert_int_equal(tile_start_worker(t, w, c->mem_base, 0), 0);
	Context *x = &t->ctx[w + 1];
	random_mregs(c, x->m);
	for (int i = 0; i < 16; i++)
		x->a[i] = random_aword();
	x->prng[0] = rnd();
	x->prng[1] = rnd() | 1;
	for (int i = 0; i < CHIP_AACC; i++)
		x->aacc[i] = random_f32();
	for (int m = 0; m < 16; m++) {
		uint32_t v[3] = {random_f32(), random_f32(), random_f32()};
		memcpy(&x->amp.acc[m], &v[0], 4);
		memcpy(&x->amp.next[m], &v[1], 4);
		memcpy(&x->amp.done[m], &v[2], 4);
	}
}

/* Who runs the program: worker 0; workers 0 and 3 with a supervisor
 * program, so that the idle skipping meets two running workers and a
 * supervisor that issues in the free slots; all six workers, so that
 * tile.c's run_fused issues a GEMM's fused bundles from every slot in
 * turn (their loads and stores meet in the same memory); the supervisor
 * alone (tile.c's run_supervisor), with marks of the observer now and then
 * (log marks and breakpoints: its loop leaves them to issue()). */
typedef enum { RUN_ONE, RUN_PAIR, RUN_ALL, RUN_SUP } Runners;

/* Everything a run may change, set from the same seed for every path. */
static Tile *
setup_tile(Tile *t, const uint32_t *prog, int nwords, uint64_t seed,
           Runners who)
{
	const Chip *c = t->chip;
	uint64_t saved = rng;
	rng = seed;
	assert_int_equal(
	    tile_write(t, c->mem_base, prog, 4u * (uint32_t)nwords), 0);
	uint32_t buf[WINDOW / 4];
	for (uint32_t i = 0; i < WINDOW / 4; i++)
		buf[i] = random_aword();
	assert_int_equal(tile_write(t, c->mem_base + CODE_BYTES, buf, WINDOW),
	                 0);
	for (uint32_t i = 0; i < WINDOW / 4; i++)
		buf[i] = random_aword();
	assert_int_equal(tile_write(t, c->interleave, buf, WINDOW), 0);
	for (int k = 0; k < CHIP_CWEI; k++)
		t->cwei[k] = (uint64_t)random_aword() << 32 | random_aword();
	t->sup.fp_infmt = below(4);
	t->sup.fp_iscl = below(64);
	/* rounding mode (bits 18:16) and NANOO/ESR now and then; traps
	 * rarely, so that programs mostly run to the end (with trap_often,
	 * one of INV, DIV0, OFLO enabled in a quarter of the programs) */
	t->sup.fp_ictl = below(4)
	                     ? 0
	                     : (below(8) << 16 | below(2) << 19 |
	                        below(2) << 20 | (below(8) ? 0 : below(8)));
	if (trap_often && below(4) == 0)
		t->sup.fp_ictl |= 1u << below(3);
	if (who == RUN_SUP) {
		uint32_t exit = enc("exitz_mmmn", 1, 15);
		assert_int_equal(
		    tile_write(t, c->mem_base + SUP_WORKER, &exit, 4), 0);
		tile_start(t, c->mem_base);
		random_mregs(c, t->ctx[0].m);
		for (int k = below(4) ? 0 : 1 + (int)below(4); k > 0; k--)
			sim_mark(t, c->mem_base + 4 * below((uint32_t)nwords),
			         below(4) ? SIM_MARK_LOG : SIM_MARK_BREAK);
	} else {
		start_random_worker(t, 0);
	}
	if (who == RUN_ALL)
		for (int w = 1; w < CHIP_WORKERS; w++)
			start_random_worker(t, w);
	if (who == RUN_PAIR) {
		start_random_worker(t, 3);
		/* and the supervisor beside them: pairs of a setzi and an
		 * add that reads its result, so that it waits on its
		 * pipeline (sup-dep) while the workers run; then br $lr */
		uint32_t sup[2 * 24 + 1];
		int ns = 0, pairs = 1 + (int)below(24);
		for (int i = 0; i < pairs; i++) {
			sup[ns++] =
			    enc("setzi_mmmn_zi", 2, 1, (int)below(1000));
			sup[ns++] =
			    enc("add_mmmn_zi", 3, 2, 1, (int)below(100));
		}
		sup[ns++] = enc("br_mmmn", 1, 10);
		uint32_t entry = c->mem_base + CODE_BYTES - 0x200;
		assert_int_equal(tile_write(t, entry, sup, 4u * (uint32_t)ns),
		                 0);
		tile_start(t, entry);
	}
	rng = saved;
	return t;
}

static Tile *
make_tile(const Chip *c, const uint32_t *prog, int nwords, uint64_t seed,
          Runners who)
{
	return setup_tile(tile_new(c, 0), prog, nwords, seed, who);
}

/* The first difference between two tiles' complete state, or NULL. */
static const char *
tile_diff(const Tile *a, const Tile *b)
{
	static char what[80];
#define SAME(field)                                                            \
	if (memcmp(&a->field, &b->field, sizeof a->field)) {                   \
		snprintf(what, sizeof what, "%s (context %d)", #field, i);     \
		return what;                                                   \
	}
	int i = 0;
	for (i = 0; i < CHIP_CONTEXTS; i++) {
		SAME(ctx[i].state);
		SAME(ctx[i].pc);
		SAME(ctx[i].m);
		SAME(ctx[i].a);
		SAME(ctx[i].rpt_count);
		SAME(ctx[i].rpt_first);
		SAME(ctx[i].rpt_end);
		SAME(ctx[i].vertex_base);
		SAME(ctx[i].worker_base);
		SAME(ctx[i].fp_sts);
		SAME(ctx[i].fp_ctl);
		SAME(ctx[i].tas);
		SAME(ctx[i].fp_nfmt);
		SAME(ctx[i].fp_scl);
		SAME(ctx[i].prng);
		SAME(ctx[i].aacc);
		SAME(ctx[i].amp.acc);
		SAME(ctx[i].amp.next);
		SAME(ctx[i].amp.done);
		SAME(ctx[i].dbg_data);
		SAME(ctx[i].exit_status);
		SAME(ctx[i].ready);
	}
	i = -1; /* not a context's */
	SAME(sup.ssr);
	SAME(sup.cr);
	SAME(sup.fp_ictl);
	SAME(sup.fp_infmt);
	SAME(sup.fp_iscl);
	SAME(sup.cccsload);
	SAME(sup.worker_base);
	SAME(sup.exch);
	SAME(sup.dbg_data);
	SAME(cwei);
	SAME(cycle);
	SAME(bundles);
	SAME(worker_issues);
	SAME(slot_worker);
	SAME(last_exit);
	SAME(lc_and);
	SAME(etype); /* $SSR/$WSR.ETYPE, the card's TDI reads them */
	SAME(mready);
	SAME(faulted);
	if (a->faulted) { /* the fault report; its words only then */
		SAME(fault.type);
		SAME(fault.ctx);
		SAME(fault.pc);
		SAME(fault.word);
		SAME(fault.nwords);
		SAME(fault.addr);
		SAME(fault.cycle);
		if (strcmp(a->fault.cause, b->fault.cause))
			return "fault.cause";
	}
	SAME(x.mux); /* the exchange's receive and send state */
	SAME(x.ptr);
	SAME(x.format);
	SAME(x.dcount);
	SAME(x.base);
	SAME(x.size);
	SAME(x.rx_until);
	SAME(x.last_rx_cycle);
	SAME(x.last_rx_addr);
	SAME(x.zero_at);
	SAME(x.ctl_done);
	SAME(x.pctl_done);
	SAME(x.nctl);
	SAME(x.npk);
	SAME(x.out_ptr);
	SAME(x.out_sctl);
	SAME(x.out_open);
	SAME(sup_ready);
	SAME(wait.zone);
	SAME(wait.since);
	SAME(compute_start);
	int na = a->obs ? a->obs->nlog : 0, nb = b->obs ? b->obs->nlog : 0;
	if (na != nb)
		return "marks";
	for (int k = 0; k < na; k++) {
		const SimMark *x = &a->obs->log[k], *y = &b->obs->log[k];
		if (x->cycle != y->cycle || x->pc != y->pc ||
		    x->sent != y->sent || x->barrier != y->barrier ||
		    x->recv != y->recv || x->compute != y->compute)
			return "marks"; /* field by field: the struct pads */
	}
	SAME(ntrace);
	for (int k = 0; k < a->ntrace; k++) {
		const TraceEvent *x = &a->trace[k], *y = &b->trace[k];
		if (x->start != y->start || x->end != y->end ||
		    x->kind != y->kind || x->arg != y->arg)
			return "trace"; /* field by field: the struct pads */
	}
	const Chip *c = a->chip;
	if (!mem_same(a->mem, b->mem, c->mem_end - c->mem_base))
		return "memory";
	return NULL;
#undef SAME
}

/* FNV-1a over the state tile_diff compares (the fault only if there is
 * one). */
static uint64_t
tile_digest(const Tile *t)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < CHIP_CONTEXTS; i++) {
		const Context *c = &t->ctx[i];
		h = fnv_mem(h, &c->state, sizeof c->state);
		h = fnv_mem(h, &c->pc, sizeof c->pc);
		h = fnv_mem(h, c->m, sizeof c->m);
		h = fnv_mem(h, c->a, sizeof c->a);
		h = fnv_mem(h, &c->fp_sts, sizeof c->fp_sts);
		h = fnv_mem(h, c->aacc, sizeof c->aacc);
		h = fnv_mem(h, &c->amp, sizeof c->amp);
		h = fnv_mem(h, c->prng, sizeof c->prng);
	}
	h = fnv_mem(h, t->cwei, sizeof t->cwei);
	h = fnv_mem(h, &t->cycle, sizeof t->cycle);
	h = fnv_mem(h, &t->bundles, sizeof t->bundles);
	if (t->faulted) {
		h = fnv_mem(h, &t->fault.type, sizeof t->fault.type);
		h = fnv_mem(h, &t->fault.pc, sizeof t->fault.pc);
		h = fnv_mem(h, &t->fault.addr, sizeof t->fault.addr);
		h = fnv_mem(h, t->fault.cause, strlen(t->fault.cause));
	}
	const Chip *c = t->chip;
	return fnv_mem(h, t->mem, c->mem_end - c->mem_base);
}

static const SimPath paths[] = {SIM_PLAIN, SIM_PORTABLE, SIM_FAST};
static const char *const path_names[] = {"plain", "portable", "fast"};

/* Programs run, and how many of them ran to their exit without a fault,
 * so that a generator whose programs all fault early shows. */
static int ran, completed;
static uint64_t issued;

/* Run one program under every path; fail on the first difference. */
static void
check_program(Style style, int issues, int index)
{
	uint32_t prog[CODE_BYTES / 4];
	int n = make_program(style, issues, prog);
	uint64_t seed = rnd();
	/* every timing profile in turn: the fast paths keep each one's
	 * cycles (the rules' values are in the decode cache's costs) */
	const Chip *chip = profile_chip((TimingBound)(index % 3));
	/* every fourth AMP program on all six workers (at each profile) */
	Runners who = style == STYLE_SUP                            ? RUN_SUP
	              : style == STYLE_VEC || style == STYLE_DIRECT ? RUN_PAIR
	              : style == STYLE_LDST ? (index % 4 ? RUN_PAIR : RUN_ALL)
	              : style == STYLE_AMP && index % 12 >= 9 ? RUN_ALL
	                                                      : RUN_ONE;
	Tile *t[3];
	for (int p = 0; p < 3; p++) {
		sim_path = paths[p];
		t[p] = make_tile(chip, prog, n, seed, who);
		tile_run(t[p], 100000);
	}
	sim_path = SIM_FAST;
	ran++;
	completed += !t[0]->faulted;
	/* SIM_PATHS_DIGEST=1: one line per program with a hash of its final
	 * state, to compare the reference semantics across versions of the
	 * code (a refactor of an exec function must not change it) */
	if (getenv("SIM_PATHS_DIGEST"))
		print_message("digest %d.%d %016llx\n", style, index,
		              (unsigned long long)tile_digest(t[0]));
	if (getenv("SHOW_FAULTS") && t[0]->faulted) {
		char f[768];
		tile_format_fault(t[0], f, sizeof f);
		print_message("%s\n", f);
	}
	issued += t[0]->bundles;
	for (int p = 1; p < 3; p++) {
		const char *d = tile_diff(t[0], t[p]);
		if (d) {
			char f[768];
			tile_format_fault(t[0], f, sizeof f);
			fail_msg(
			    "program %d (style %d, timing %s): %s differs "
			    "between the plain and the %s path; plain run: %s",
			    index, style,
			    timing_bound_name((TimingBound)(index % 3)), d,
			    path_names[p], t[0]->faulted ? f : "no fault");
		}
	}
	for (int p = 0; p < 3; p++)
		tile_free(t[p]);
}

static void
run_programs(Style style, int count, int min_issues, int max_issues)
{
	collect_rows();
	ran = completed = 0;
	issued = 0;
	for (int i = 0; i < count; i++)
		check_program(
		    style,
		    min_issues +
		        (int)below((uint32_t)(max_issues - min_issues + 1)),
		    i);
	print_message("%d programs, %d ran to their exit, %llu issues\n", ran,
	              completed, (unsigned long long)issued);
	/* a generator whose programs all fault at once tests nothing */
	assert_true(completed >= ran / 10);
	assert_true(issued >= (uint64_t)ran * (uint64_t)min_issues / 4);
}

/* The fast paths' decoded issues are a chip's (a lone tile's own store, a
 * chip model's shared one, tile.c): a word only the C600 decodes (an FP8
 * instruction) must still fault on a GC200 tile right after a C600 tile
 * ran it, and decode on the C600 after the GC200 refused it. Each run is
 * compared with the plain path's, which decodes every word itself. */
static void
test_decode_arch(void **state)
{
	(void)state;
	const Chip *chips[2] = {chip_by_name("c600"), chip_by_name("gc200")};
	assert_non_null(chips[0]);
	assert_non_null(chips[1]);
	RowSet f8 = {.n = 0};
	for (int r = 0; r < isa_rows(); r++) {
		const InsnDesc *d = isa_row(r);
		if (d->ctx != CTX_S && isa_available(d, chips[0]->arch) &&
		    !isa_available(d, chips[1]->arch) &&
		    !(d->flags & (F_CONTROL | F_SYSTEM | F_WIDE | F_SOLO)))
			f8.row[f8.n++] = (int16_t)r;
	}
	assert_true(f8.n >= 4);
	int faults[2] = {0, 0};
	for (int i = 0; i < 200; i++) {
		uint32_t word = random_word(&f8), prog[3];
		Insn in;
		assert_true(isa_decode(word, chips[0]->arch, &in) >= 0);
		int aux = isa_row(in.row)->lane == LANE_AUX, n = 0;
		/* { nop ; word } or { word ; fnop }, then exitz */
		prog[n++] = (aux ? enc("setzi_mmmn_zi", 2, 15, 0)
		                 : word & 0x7fffffffu) |
		            0x80000000u;
		prog[n++] =
		    aux ? word & 0x7fffffffu : enc("or_aaan_zi", 3, 15, 15, 0);
		prog[n++] = enc("exitz_mmmn", 1, 15);
		uint64_t seed = rnd();
		/* the C600 first, then the GC200; every other time the
		 * reverse */
		for (int j = 0; j < 2; j++) {
			const Chip *c = chips[(i + j) % 2];
			Tile *t[2];
			for (int p = 0; p < 2; p++) {
				sim_path = p ? SIM_FAST : SIM_PLAIN;
				t[p] = make_tile(c, prog, n, seed, RUN_ONE);
				tile_run(t[p], 10000);
			}
			sim_path = SIM_FAST;
			const char *d = tile_diff(t[0], t[1]);
			if (d)
				fail_msg(
				    "word 0x%08x on %s: %s differs between "
				    "the plain and the fast path",
				    word, c->name, d);
			/* refused by the decoder (not, say, an FP8 form
			 * that is not emulated) */
			faults[c == chips[1]] +=
			    t[0]->faulted &&
			    t[0]->fault.type == FAULT_INVALID_INSTR &&
			    strstr(t[0]->fault.cause, "is not a valid");
			for (int p = 0; p < 2; p++)
				tile_free(t[p]);
		}
	}
	/* the GC200 refused every word; the C600 decoded them */
	assert_int_equal(faults[1], 200);
	assert_int_equal(faults[0], 0);
}

/* Decoded issues shared by tiles (tile.c, SimCode) are keyed by their
 * words: the same words at another address, run by another context or
 * beside another word must do there what the plain path does. Tiles
 * sharing one store run, in turn, variants of a random program after the
 * earlier ones filled the store: the program itself, the same again (all
 * from the store), with one word changed, 4 bytes further on (its bundles
 * misaligned), and run by the supervisor too. Each is compared with a
 * plain lone tile. */
enum { VAR_SAME, VAR_AGAIN, VAR_WORD, VAR_SHIFT, VAR_SUP, VARIANTS };

static Tile *
variant_tile(Tile *t, int v, const uint32_t *prog, int n, uint64_t seed,
             uint32_t word, int at)
{
	const Chip *c = t->chip;
	setup_tile(t, prog, n, seed, RUN_ONE);
	if (v == VAR_WORD)
		assert_int_equal(
		    tile_write(t, c->mem_base + 4u * (uint32_t)at, &word, 4),
		    0);
	if (v == VAR_SHIFT) {
		assert_int_equal(
		    tile_write(t, c->mem_base + 4, prog, 4u * (uint32_t)n), 0);
		t->ctx[1].pc = c->mem_base + 4;
	}
	if (v == VAR_SUP)
		tile_start(t, c->mem_base);
	return t;
}

static void
test_shared_issues(void **state)
{
	(void)state;
	collect_rows();
	int differ = 0;
	for (int i = 0; i < 40; i++) {
		uint32_t prog[CODE_BYTES / 4];
		Style style = i % 3 ? STYLE_AMP : STYLE_ANY;
		int n = make_program(style, 1 + (int)below(24), prog);
		uint64_t seed = rnd();
		int at = (int)below((uint32_t)n);
		uint32_t word = random_word(below(2) ? &aux_rows : &pair_rows) |
		                (prog[at] & 0x80000000u);
		const Chip *chip = profile_chip((TimingBound)(i % 3));
		SimCode *code = sim_code_new();
		Tile *fast[VARIANTS];
		for (int v = 0; v < VARIANTS; v++) {
			sim_path = SIM_PLAIN;
			Tile *ref = variant_tile(tile_new(chip, 0), v, prog, n,
			                         seed, word, at);
			tile_run(ref, 100000);
			sim_path = i % 2 ? SIM_FAST : SIM_PORTABLE;
			fast[v] = tile_new(chip, 0);
			tile_share_code(fast[v], code);
			variant_tile(fast[v], v, prog, n, seed, word, at);
			tile_run(fast[v], 100000);
			sim_path = SIM_FAST;
			const char *d = tile_diff(ref, fast[v]);
			if (d)
				fail_msg("program %d, variant %d: %s differs "
				         "between the plain path and tiles "
				         "sharing decoded issues",
				         i, v, d);
			differ += v && tile_diff(fast[0], fast[v]) != NULL;
			tile_free(ref);
		}
		for (int v = 0; v < VARIANTS; v++)
			tile_free(fast[v]);
		sim_code_free(code);
	}
	/* the variants did run differently from the program itself */
	assert_true(differ > 40 * 2);
}

/* The page templates (tile.c, CodePage): three tiles sharing a store load
 * one program; the first makes its page's template at its first miss, and
 * each copies it. The program stores a new word over an instruction ahead
 * of it, which the template had put in the tile's cache before it ran
 * there: the tile must run the new one. Then the host loads another
 * program over the first (three words differ) and starts it again: the
 * tiles copy the template's entries again, but must run the new words.
 * Every tile is compared with a plain lone tile run the same way, and the
 * values are known: setzi $m3 gets 222 (the stored word), then 333 (the
 * host's). The supervisor runs them, as the host starts it (tile_start)
 * after it loads code. */
static void
template_load(Tile *t, uint32_t imm, int self)
{
	const Chip *c = t->chip;
	const uint32_t data = c->mem_base + 0x8000;
	uint32_t prog[8] = {
	    enc("ld32_mmmn_zi", 4, 2, 0, 15, 0), /* $m2 <- [data] */
	    enc("st32_mmmn_zi", 4, 2, 1, 15, 0), /* $m2 -> [prog + 20] */
	    enc("setzi_mmmn_zi", 2, 4, 1),
	    enc("setzi_mmmn_zi", 2, 5, 2),
	    enc("setzi_mmmn_zi", 2, 6, 3),
	    enc("setzi_mmmn_zi", 2, 3, (int)imm), /* the stored word's place */
	    enc("br_mmmn", 1, 10),
	    0,
	};
	if (!self) /* the host's program: no store */
		prog[0] = prog[1] = enc("setzi_mmmn_zi", 2, 7, 4);
	uint32_t word = enc("setzi_mmmn_zi", 2, 3, 222);
	assert_int_equal(tile_write(t, c->mem_base, prog, sizeof prog), 0);
	assert_int_equal(tile_write(t, data, &word, 4), 0);
	tile_start(t, c->mem_base);
	t->ctx[0].m[0] = data;
	t->ctx[0].m[1] = c->mem_base + 20;
}

/* Tile.code_lo, code_hi cover every issue in the tile's cache (a write
 * outside them keeps the cache): a bundle's two words and the word after
 * them, a solo's word and the one after it. */
static void
assert_code_range(const Tile *t)
{
	const Chip *c = t->chip;
	for (uint32_t pc = c->mem_base; pc < c->exec_end; pc += 4) {
		const DIssue *u = t->issue_at[(pc - c->mem_base) / 4];
		if (!u)
			continue;
		uint32_t end = pc + (u->i1 ? 12 : 8);
		if (pc < t->code_lo || end > t->code_hi)
			fail_msg(
			    "the issue at 0x%05x (to 0x%05x) is outside the "
			    "decoded range 0x%05x..0x%05x",
			    pc, end, t->code_lo, t->code_hi);
	}
}

static void
test_code_templates(void **state)
{
	(void)state;
	const Chip *chip = chip_default();
	SimCode *code = sim_code_new();
	for (int k = 0; k < 3; k++) {
		sim_path = SIM_PLAIN;
		Tile *ref = tile_new(chip, 0);
		sim_path = SIM_FAST;
		Tile *t = tile_new(chip, 0);
		tile_share_code(t, code);
		Tile *both[2] = {ref, t};
		for (int i = 0; i < 2; i++) {
			sim_path = i ? SIM_FAST : SIM_PLAIN;
			template_load(both[i], 111, 1);
			assert_int_equal(tile_run(both[i], 10000), RUN_DONE);
			assert_int_equal(both[i]->ctx[0].m[3], 222);
			assert_code_range(both[i]);
			template_load(both[i], 333, 0);
			assert_int_equal(tile_run(both[i], 10000), RUN_DONE);
			assert_int_equal(both[i]->ctx[0].m[3], 333);
			assert_code_range(both[i]);
		}
		sim_path = SIM_FAST;
		const char *d = tile_diff(ref, t);
		if (d)
			fail_msg("tile %d: %s differs from the plain path", k,
			         d);
		tile_free(ref);
		tile_free(t);
		uint64_t built, copied;
		sim_code_page_counts(code, &built, &copied);
		/* One template (the second program is close enough to the
		 * first's), copied twice a tile: at the first miss of each
		 * program after tile_start (not after the store: a write to
		 * code leaves the tile's cleared entries to the store). */
		static const uint64_t want_built[3] = {1, 1, 1},
		                      want_copied[3] = {2, 4, 6};
		assert_int_equal(built, want_built[k]);
		assert_int_equal(copied, want_copied[k]);
	}
	sim_code_free(code);
}

static void
test_random_programs(void **state)
{
	(void)state;
	run_programs(STYLE_ANY, 1000, 1, 40);
}

/* The supervisor alone (tile.c's run_supervisor): straight-line code,
 * its pipeline's waits, delays, branches, workers started and waited for,
 * marks of the observer. */
static void
test_random_sup_programs(void **state)
{
	(void)state;
	run_programs(STYLE_SUP, 600, 4, 60);
}

static void
test_random_amp_programs(void **state)
{
	(void)state;
	run_programs(STYLE_AMP, 800, 8, 64);
}

static void
test_random_vec_programs(void **state)
{
	(void)state;
	run_programs(STYLE_VEC, 800, 8, 64);
}

/* The f16 vector forms on values of any exponent: the AVX2 path's F16C
 * lanes (exec_float.c, f16c_lanes) round twice and decline on overflow. */
static void
test_random_vec_wide(void **state)
{
	(void)state;
	f16_wide = 1;
	run_programs(STYLE_VEC, 200, 8, 64);
	f16_wide = 0;
}

/* The plain loads and stores' fast forms (exec_mem.c, fast_load64 and
 * fast_store64): the 3-operand and step forms of ld64 and st64, with
 * register and immediate offsets and strides, in rpt bodies beside the f16
 * vector forms, by two workers and the supervisor or by all six workers
 * (their stores meet the others' loads); some accesses leave memory or
 * are misaligned, so that the fast forms decline to the plain ones. */
static void
test_random_ldst_programs(void **state)
{
	(void)state;
	aligned_offsets = 1;
	run_programs(STYLE_LDST, 600, 8, 64);
	aligned_offsets = 0;
}

/* The halves that write their registers directly (sim.h,
 * SIM_DIRECT_FORMS; tile.c, direct_halves and halves): bundles of those
 * forms only, in rpt bodies, by two workers and the supervisor, the main
 * half's writes often among the aux half's operands (random registers),
 * main halves that fault (misaligned or out of memory) and aux halves
 * that trap (an FP trap enabled in a quarter of the programs,
 * trap_often): a faulting bundle must leave every register as it was. */
static void
test_random_direct_programs(void **state)
{
	(void)state;
	trap_often = aligned_offsets = 1;
	run_programs(STYLE_DIRECT, 1000, 4, 40);
	trap_often = aligned_offsets = 0;
}

/* The fused bundles' boxes (sim.h, sim_pace_box): a paced stream's
 * accesses skip the memory checks while they stay in the element (or
 * interleaved pair) of the last checked access, apart from the other
 * streams' (or, two streams in one pair, each in one of its elements:
 * Tile.box_pair). Streams here start near element and pair boundaries, at the
 * ends of memory, misaligned now and then, or in another stream's element,
 * and move by random strides through an rpt body of paced bundles, so
 * that they cross into other elements, into each other's and out of
 * memory; compared with the plain path on complete tile state. */
static uint32_t
stream_start(const Chip *c, uint32_t other)
{
	/* other: an earlier stream's start, or 0 for the first */
	uint32_t eb = c->elem_bytes, a;
	switch (other ? below(8) : 4) {
	case 0:
		a = below(2) ? c->mem_end : c->mem_base;
		break;
	case 1:
	case 2:
		a = other;
		break;
	case 3: /* just below the element of the other */
		return (other & ~(eb - 1)) - 8 * (1 + below(4));
	default:
		a = below(2)
		        ? c->mem_base +
		              eb * below((c->interleave - c->mem_base) / eb)
		        : c->interleave +
		              2 * eb *
		                  below((c->mem_end - c->interleave) /
		                        (2 * eb));
	}
	a += 8 * below(16) - 64 + (below(64) ? 0 : 4);
	return a & 0x1fffffu;
}

/* A paced form on the pair $m4:5 (or now and then $m14 and $mzero) with
 * the strides in $m6 (or $mzero: selectors other than 0 stay put; mostly
 * so with shapes, as in the GEMMs), its ARF pairs random ($a14:15 among
 * them; ld2x64pace's two the same now and then, which faults): the
 * operands DIssue.pd holds. */
static uint32_t
paced_bundle_main(int pairs, int shapes)
{
	int p = 2 * (int)below(8), q = 2 * (int)((below(7) + 1 + p / 2) % 8);
	/* shapes: the strides from $m6 (DIssue.shape's strided loops) or
	 * $mzero alike */
	int ta = below(16) ? 4 : 14, st = below(shapes ? 2 : 4) ? 6 : 15;
	if (pairs) {
		/* $m4:5 or $m8:9 (or $m14); the strides now and then
		 * from the pair itself or from the other pair */
		ta = below(16) ? 4 + 4 * (int)below(2) : 14;
		switch (below(6)) {
		case 0:
		case 2:
			st = ta == 14 ? 4 : ta + (int)below(2);
			break;
		case 1:
			st = ta == 4 ? 8 + (int)below(2) : 4 + (int)below(2);
			break;
		}
	}
	switch (below(4)) {
	case 0:
		return enc("ld2x64pace_mmbn_ef", 5, p, below(8) ? q : p, ta, st,
		           (int)below(16));
	case 1:
		return enc("ldst64pace_mbbn_ef", 5, p, q, ta, st,
		           (int)below(16));
	case 2:
		return enc("st64pace_mbmn_ef", 4, p, ta, st, (int)below(4));
	default:
		return enc("ld2xst64pace_mbbn_ef", 5, 4 * (int)below(4), p, ta,
		           st, (int)below(64));
	}
}

/* The aux half of a paced bundle: mostly fnop, else any AMP form; with
 * shapes mostly the GEMMs' two (f16v4hihov4amp, f8v8hihov4amp), their
 * pairs mostly inside $a0..$a12 (tile.c's DIssue.shape), now and then
 * $a14:15 (the partials one time in four). */
static uint32_t
paced_bundle_aux(int shapes)
{
	if (!shapes || !below(4))
		return below(4) ? enc("or_aaan_zi", 3, 15, 15, 0)
		                : random_word(&amp_rows) & 0x7fffffffu;
	int r[3]; /* the partials (r[2]) $a14:15 more often: the
	           * accumulation's first pass (SHAPE_ZERO_PART) */
	for (int k = 0; k < 3; k++)
		r[k] = 2 * (int)(below(k == 2 ? 4 : 16) ? below(7) : 7);
	return enc(below(2) ? "f16v4hihov4amp_aaan_ef"
	                    : "f8v8hihov4amp_aaan_ef",
	           4, r[0], r[1], r[2], (int)below(64));
}

static void
pace_programs(int pairs, int shapes)
{
	collect_rows();
	int faults = 0, done = 0;
	for (int i = 0; i < 300; i++) {
		/* { rpt ; fnop } over 1 to 3 paced bundles, then exitz */
		uint32_t prog[16];
		int n = 0, body = 1 + (int)below(3);
		prog[n++] =
		    enc("rpt_mmmn_zi_zi", 2, 2 + (int)below(40), body - 1) |
		    0x80000000u;
		prog[n++] = enc("or_aaan_zi", 3, 15, 15, 0);
		for (int k = 0; k < body; k++) {
			prog[n++] =
			    paced_bundle_main(pairs, shapes) | 0x80000000u;
			prog[n++] = paced_bundle_aux(shapes);
		}
		prog[n++] = enc("exitz_mmmn", 1, 15);
		const Chip *chip = profile_chip((TimingBound)(i % 3));
		/* pairs: a visit of run_fused runs more than one bundle of
		 * a context only when other workers run; shapes: also two
		 * workers with the supervisor issuing in the free slots
		 * (the shapes' loops pass the cycles nobody issues in, and
		 * stop at those the supervisor takes) */
		Runners who = shapes && i % 3 == 2  ? RUN_PAIR
		              : i % (pairs ? 2 : 4) ? RUN_ONE
		                                    : RUN_ALL;
		uint64_t seed = rnd();
		/* each worker's $m4:5 (three streams, the first also in
		 * $m14) and $m6 (strides: three 10-bit fields, mostly
		 * small) */
		uint32_t m[CHIP_WORKERS][3], m8[CHIP_WORKERS][2];
		for (int w = 0; w < CHIP_WORKERS; w++) {
			uint32_t a[3];
			for (int s = 0; s < 3; s++)
				a[s] = stream_start(chip, s ? a[below(s)] : 0);
			m[w][0] = (a[0] & 0x1fffffu) | (a[2] & 0x7ffu) << 21;
			m[w][1] = (a[1] & 0x1fffffu) | ((a[2] >> 11) & 0x3ffu)
			                                   << 21;
			/* pairs: $m8:9 three more streams; bit 31 of the
			 * upper registers (no address bit) set now and
			 * then: a paced form's write clears it */
			for (int s = 0; s < 3 && pairs; s++)
				a[s] = stream_start(chip, s ? a[below(s)] : 0);
			m8[w][0] = (a[0] & 0x1fffffu) | (a[2] & 0x7ffu) << 21;
			m8[w][1] = (a[1] & 0x1fffffu) | ((a[2] >> 11) & 0x3ffu)
			                                    << 21;
			if (pairs && below(4) == 0)
				m[w][1] |= 0x80000000u;
			if (pairs && below(4) == 0)
				m8[w][1] |= 0x80000000u;
			m[w][2] = 0;
			for (int f = 0; f < 3; f++)
				m[w][2] |=
				    ((below(4) ? below(9) - 4 : below(1024)) &
				     0x3ffu)
				    << (10 * f);
		}
		/* shapes: marks of the observer now and then on the body's
		 * bundles (a log mark or a breakpoint ends run_fused's loops
		 * there, and issue() runs the bundle); a breakpoint lets
		 * some passes go first, so that the loops meet it */
		int marks = shapes && !below(3) ? 1 + (int)below(3) : 0;
		uint32_t mark_pc[3], skip = below(4) ? below(64) : 0;
		unsigned mark_kind[3];
		for (int k = 0; k < marks; k++) {
			mark_pc[k] = chip->mem_base + 4 * (2 + 2 * below(body));
			mark_kind[k] = below(2) ? SIM_MARK_LOG : SIM_MARK_BREAK;
		}
		/* plain; fast; fast again, its first issues from the
		 * decoded issues the first fast run left (the fused forms
		 * then meet a bundle's first issue, faulting ones too);
		 * portable (tile.c's build of the shapes' loops, which the
		 * fast path does not run on an AVX2 host: shapes_avx2.c's) */
		Tile *t[4];
		SimCode *code = sim_code_new();
		for (int p = 0; p < 4; p++) {
			sim_path = p == 3 ? SIM_PORTABLE
			           : p    ? SIM_FAST
			                  : SIM_PLAIN;
			t[p] = tile_new(chip, 0);
			if (p == 1 || p == 2)
				tile_share_code(t[p], code);
			setup_tile(t[p], prog, n, seed, who);
			for (int w = 0; w < CHIP_WORKERS; w++) {
				memcpy(&t[p]->ctx[w + 1].m[4], m[w],
				       sizeof m[w]);
				t[p]->ctx[w + 1].m[14] = m[w][0];
				if (pairs)
					memcpy(&t[p]->ctx[w + 1].m[8], m8[w],
					       sizeof m8[w]);
			}
			for (int k = 0; k < marks; k++)
				sim_mark(t[p], mark_pc[k], mark_kind[k]);
			if (marks)
				sim_observe(t[p])->break_skip = skip;
			tile_run(t[p], 100000);
		}
		sim_path = SIM_FAST;
		for (int p = 1; p < 4; p++) {
			const char *d = tile_diff(t[0], t[p]);
			if (d)
				fail_msg("program %d: %s differs between the "
				         "plain and the %s path (run %d)",
				         i, d, p == 3 ? "portable" : "fast", p);
		}
		faults += t[0]->faulted;
		done += !t[0]->faulted;
		for (int p = 0; p < 4; p++)
			tile_free(t[p]);
		sim_code_free(code);
	}
	print_message("%d programs faulted, %d ran to their exit\n", faults,
	              done);
	/* streams did go astray, and did run through */
	assert_true(faults >= 30 && done >= 30);
}

static void
test_pace_boxes(void **state)
{
	(void)state;
	pace_programs(0, 0);
}

/* The fused bundles' pairs kept unpacked between a context's bundles
 * (tile.c, run_fused; PaceDec.lazy): bodies on $m4:5 and $m8:9 (and
 * $m14), in turn within one body, with strides read now and then from
 * the bundle's own pair (which keeps it packed) or from the other pair
 * (which must be packed before it is read), the upper registers' bit 31
 * set now and then (which only a paced form's write clears), streams
 * that go astray (the halves then run the bundle: the pair packed
 * first) and all six workers interleaved; against the plain path on
 * complete tile state. */
static void
test_pace_pairs(void **state)
{
	(void)state;
	pace_programs(1, 0);
}

/* The fused bundles of the GEMMs' common shape, which run_fused runs in a
 * loop per shape with a form chosen once per decoded issue (tile.c,
 * DIssue.shape, run_shape): paced forms with constant steps ($mzero
 * strides) or steps from $m6 (SHAPE_STRIDED) beside f16v4hihov4amp or
 * f8v8hihov4amp (their phases, weights and partials random), and bundles of
 * other shapes or just outside the shape among them in one body ($a14:15 as an
 * operand, a stride register read, a pair that stays packed), streams that go
 * astray inside a shape's loop (the halves run the bundle, or fault),
 * log marks and breakpoints on the body's words; all six workers
 * interleaved now and then, or two with the supervisor issuing in the
 * free slots (the loops pass the cycles nobody issues in and stop at the
 * supervisor's); against the plain path on complete tile state (the
 * observer's log too). */
static void
test_pace_shapes(void **state)
{
	(void)state;
	pace_programs(1, 1);
}

/* A graph compiled for `tiles` tiles, run on the emulated C600 with seeded
 * random inputs (bit patterns of their element type's plain values). */
typedef struct {
	ipu_device *dev;
	uint64_t cycles;
	uint8_t *out; /* every output's bytes, in tensor order */
	size_t nout;
} GraphRun;

static void
run_graph(const Package *pk, const Graph *g, uint32_t tiles, int threads,
          GraphRun *r)
{
	uint8_t *bytes;
	size_t len;
	Diag d;
	assert_int_equal(pkg_write(pk, &bytes, &len, &d), 0);
	char name[96];
	snprintf(name, sizeof name, "sim:c600:tiles=%u:threads=%d:trace", tiles,
	         threads);
	ipu_error err;
	r->dev = ipu_open(name, &err);
	assert_non_null(r->dev);
	if (ipu_load_package(r->dev, bytes, len, &err))
		fail_msg("load: %s", err.msg);
	free(bytes);
	uint64_t saved = rng;
	rng = 0x1234567;
	for (int32_t id = 0; id < g->ntensors; id++) {
		const Tensor *t = graph_tensor(g, id);
		if (t->producer >= 0)
			continue;
		size_t n = (size_t)shape_elems(&t->shape) *
		           (size_t)dtype_size(t->elem.dtype);
		uint8_t *v = xmalloc(n);
		for (size_t i = 0; i < n; i++)
			v[i] = (uint8_t)rnd();
		/* plain values: f16 exponents near 1, f32 too, f8 any but
		 * NaN */
		size_t es = (size_t)dtype_size(t->elem.dtype);
		for (size_t i = 0; i + es <= n; i += es) {
			if (es == 2)
				v[i + 1] = (uint8_t)((v[i + 1] & 0x83) | 0x38);
			else if (es == 4)
				v[i + 3] = (uint8_t)((v[i + 3] & 0x80) | 0x3e);
			else if (v[i] == 0x80)
				v[i] = 0;
		}
		if (ipu_write_tensor(r->dev, t->name, v, n, &err))
			fail_msg("write %s: %s", t->name, err.msg);
		free(v);
	}
	rng = saved;
	if (ipu_run(r->dev, 0, &err))
		fail_msg("run: %s", err.msg);
	r->cycles = ipu_cycles(r->dev);
	r->out = NULL;
	r->nout = 0;
	for (int32_t id = 0; id < g->ntensors; id++) {
		const Tensor *t = graph_tensor(g, id);
		if (t->role != ROLE_OUTPUT)
			continue;
		size_t n = (size_t)shape_elems(&t->shape) *
		           (size_t)dtype_size(t->elem.dtype);
		r->out = xrealloc(r->out, r->nout + n);
		if (ipu_read_tensor(r->dev, t->name, r->out + r->nout, n, &err))
			fail_msg("read %s: %s", t->name, err.msg);
		r->nout += n;
	}
}

/* Compile, then run on every path and thread count; compare with the plain
 * run on one thread. */
static void
check_graph(const char *what, const char *text, uint32_t tiles)
{
	Graph *g;
	Diag errs[GRAPH_MAX_ERRORS], d;
	int nerr;
	if (graph_parse(text, strlen(text), "paths.graph", &g, errs, &nerr))
		fail_msg("%s: parse: %s", what, errs[0].msg);
	CompileOptions o = {.chip = chip_default(), .tiles = tiles};
	Package *pk;
	CompileReport rep;
	if (compile_graph(g, &o, &pk, &rep, &d)) {
		char buf[1024];
		diag_format(&d, buf, sizeof buf);
		fail_msg("%s: compile: %s", what, buf);
	}
	static const struct {
		SimPath path;
		int threads;
	} runs[] = {{SIM_PLAIN, 1},
	            {SIM_FAST, 1},
	            {SIM_FAST, 2},
	            {SIM_PORTABLE, 3},
	            {SIM_FAST, 5}};
	GraphRun ref;
	sim_path = runs[0].path;
	run_graph(pk, g, tiles, runs[0].threads, &ref);
	for (size_t k = 1; k < sizeof runs / sizeof runs[0]; k++) {
		GraphRun r;
		sim_path = runs[k].path;
		run_graph(pk, g, tiles, runs[k].threads, &r);
		const char *pn = path_names[runs[k].path == SIM_FAST       ? 2
		                            : runs[k].path == SIM_PORTABLE ? 1
		                                                           : 0];
		if (r.cycles != ref.cycles)
			fail_msg("%s: %llu cycles on the %s path with %d "
			         "threads, %llu on the plain one",
			         what, (unsigned long long)r.cycles, pn,
			         runs[k].threads,
			         (unsigned long long)ref.cycles);
		assert_int_equal(r.nout, ref.nout);
		if (memcmp(r.out, ref.out, ref.nout))
			fail_msg("%s: outputs differ on the %s path with %d "
			         "threads",
			         what, pn, runs[k].threads);
		ChipSim *a = ref.dev->be, *b = r.dev->be;
		for (uint32_t id = 0; id < tiles; id++) {
			Tile *ta = chipsim_tile_if_exists(a, id),
			     *tb = chipsim_tile_if_exists(b, id);
			assert_true(!ta == !tb);
			const char *diff = ta ? tile_diff(ta, tb) : NULL;
			if (diff)
				fail_msg("%s: tile %u: %s differs on the %s "
				         "path with %d threads",
				         what, id, diff, pn, runs[k].threads);
		}
		ipu_close(r.dev);
		free(r.out);
	}
	sim_path = SIM_FAST;
	print_message("%s: %llu cycles, the same on every path and thread "
	              "count\n",
	              what, (unsigned long long)ref.cycles);
	ipu_close(ref.dev);
	free(ref.out);
	pkg_free(pk);
	compile_report_free(&rep);
	graph_free(g);
}

static void
test_graphs_f16(void **state)
{
	(void)state;
	check_graph("f16 layer",
	            "input x f16 [40, 64]\n"
	            "weight g f16 [64]\n"
	            "weight be f16 [64]\n"
	            "weight w1 f16 [64, 96]\n"
	            "weight b1 f16 [96]\n"
	            "weight w2 f16 [96, 64]\n"
	            "n = layernorm x g be eps=1e-6\n"
	            "h = matmul n w1\n"
	            "hb = add h b1\n"
	            "a = gelu hb\n"
	            "y = matmul a w2\n"
	            "r = add y x\n"
	            "s = softmax r scale=0.125\n"
	            "t = transpose s [1, 0]\n"
	            "k = slice t [0, 0] [32, 40]\n"
	            "output k\n"
	            "output r\n",
	            24);
	/* the second product's K is split over groups and reduced (vadd) */
	check_graph("f16 K-split chain",
	            "input x f16 [16, 512]\n"
	            "weight w f16 [512, 32]\n"
	            "input a f16 [24, 16]\n"
	            "h = matmul x w\n"
	            "y = matmul a h\n"
	            "output y\n",
	            16);
}

static void
test_graphs_f32_f8(void **state)
{
	(void)state;
	check_graph("f32 attention",
	            "input x f32 [12, 32]\n"
	            "weight wq f32 [32, 32]\n"
	            "weight wk f32 [32, 32]\n"
	            "q = matmul x wq\n"
	            "k = matmul x wk\n"
	            "qr = reshape q [12, 2, 16]\n"
	            "kr = reshape k [12, 2, 16]\n"
	            "qh = transpose qr [1, 0, 2]\n"
	            "kh = transpose kr [1, 0, 2]\n"
	            "s = matmul qh kh transpose_b=1\n"
	            "p = softmax s scale=0.25\n"
	            "m = mul p p\n"
	            "output m\n",
	            8);
	check_graph("f8 product, casts",
	            "input x f8_f143 [32, 48]\n"
	            "input k f8_f152 [40, 48]\n"
	            "input z f32 [20, 24]\n"
	            "c = cast k f16\n"
	            "y = matmul x k transpose_b=1\n"
	            "h = cast z f16\n"
	            "q = cast h f8_f143*2^-2\n"
	            "b = cast q f16\n"
	            "output y\n"
	            "output c\n"
	            "output b\n",
	            4);
}

/* support.c's page-skipping compare and hash (tile_diff's and
 * tile_digest's memory) against memcmp and a byte loop over copies kept
 * beside (reading the mappings themselves would touch every page), on
 * mappings with untouched pages, a page touched with zeros, a difference on
 * a middle page and on the partial last one, and an unaligned span. */
static void
test_mem_pages(void **state)
{
	(void)state;
	enum { N = 5 * 4096 + 100 };
	unsigned char *a = xmap_zero(N), *b = xmap_zero(N);
	static unsigned char ca[N], cb[N]; /* a's and b's bytes */
	unsigned char vec[6];
	assert_int_equal(mem_touched(a, N, vec), 6);
#define SET(m, at, v) (m[at] = c##m[at] = (v))
#define CHECK_SAME()                                                           \
	do {                                                                   \
		int want = !memcmp(ca, cb, N);                                 \
		uint64_t ha = 0xcbf29ce484222325ull, hb = ha;                  \
		for (size_t k = 0; k < N; k++) {                               \
			ha = (ha ^ ca[k]) * 0x100000001b3ull;                  \
			hb = (hb ^ cb[k]) * 0x100000001b3ull;                  \
		}                                                              \
		assert_int_equal(mem_same(a, b, N), want);                     \
		assert_int_equal(mem_same(a + 1, b + 1, N - 1), want);         \
		assert_true(fnv_mem(0xcbf29ce484222325ull, a, N) == ha);       \
		assert_true(fnv_mem(0xcbf29ce484222325ull, b, N) == hb);       \
	} while (0)
	CHECK_SAME();
	SET(a, 2 * 4096 + 7, 9); /* a middle page */
	mem_touched(a, N, vec);
	assert_int_equal(vec[2], 1);
	CHECK_SAME();
	SET(b, 2 * 4096 + 7, 9);
	CHECK_SAME();
	SET(a, 4 * 4096, 0); /* touched, still zeros */
	CHECK_SAME();
	SET(b, 5 * 4096 + 99, 1); /* the partial last page */
	CHECK_SAME();
	SET(a, 5 * 4096 + 99, 1);
	CHECK_SAME();
#undef CHECK_SAME
#undef SET
	xunmap(a, N);
	xunmap(b, N);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decode_arch),
	    cmocka_unit_test(test_mem_pages),
	    cmocka_unit_test(test_shared_issues),
	    cmocka_unit_test(test_code_templates),
	    cmocka_unit_test(test_pace_boxes),
	    cmocka_unit_test(test_pace_pairs),
	    cmocka_unit_test(test_pace_shapes),
	    cmocka_unit_test(test_random_programs),
	    cmocka_unit_test(test_random_sup_programs),
	    cmocka_unit_test(test_random_amp_programs),
	    cmocka_unit_test(test_random_vec_programs),
	    cmocka_unit_test(test_random_vec_wide),
	    cmocka_unit_test(test_random_ldst_programs),
	    cmocka_unit_test(test_random_direct_programs),
	    cmocka_unit_test(test_graphs_f16),
	    cmocka_unit_test(test_graphs_f32_f8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * tile.c - one tile: contexts, the round-robin issue loop, fetch and decode,
 * bundle execution with deferred register writes, rpt, and faults.
 *
 * The loop advances one cycle at a time. In cycle t, slot t % 6 issues for
 * the worker that owns it, or else for the supervisor if it can run. Cycles
 * in which nobody can issue are skipped in one step when every context is
 * waiting (sync, the supervisor's pipeline), and on the fast paths also
 * while workers run (next_busy_issue), so the cost of the emulator follows
 * issued work.
 */
#include "shapes.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/fp.h"
#include "../util/util.h"

static const ExecFn exec_for_row[ISA_ROWS] = {
#define I(var, mn, match, mask, lane, ctx, flags, ops) exec_##mn,
#include "../target/insns.def"
#undef I
};

SimPath sim_path = SIM_FAST;
int sim_host_avx2;

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>

__attribute__((constructor)) static void
find_host_simd(void)
{
	unsigned a, b, c, d;
	__builtin_cpu_init(); /* needed in a constructor */
	/* clang has no "f16c" for __builtin_cpu_supports: read CPUID leaf 1 */
	int f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
	sim_host_avx2 = __builtin_cpu_supports("avx2") &&
	                __builtin_cpu_supports("fma") && f16c;
	/* the portable forms on any host, for checks and measurements
	 * (docs/bench-sim.md, speedo) */
	const char *off = getenv("IPU_SIM_NO_AVX2");
	if (off && *off && strcmp(off, "0"))
		sim_host_avx2 = 0;
}
#endif

const char *
fault_type_name(FaultType t)
{
	switch (t) {
#define X(name, num)                                                           \
	case FAULT_##name:                                                     \
		return #name;
		FAULT_TYPES(X)
#undef X
	}
	return "?";
}

Tile *
tile_new(const Chip *chip, uint32_t id)
{
	Tile *t = xaligned_alloc(_Alignof(Tile), sizeof *t);
	memset(t, 0, sizeof *t);
	t->chip = chip;
	t->id = id;
	t->mem = xmap_zero(chip->mem_end - chip->mem_base);
	uint32_t words = (chip->exec_end - chip->mem_base) / 4;
	t->dcache = xmap_zero(words * sizeof *t->dcache);
	t->dvalid = xmap_zero(words);
	t->issue_at = xmap_zero(words * sizeof *t->issue_at);
	t->own_code = 1; /* its store is made when it first decodes */
	t->code_lo = UINT32_MAX;
	for (int i = 0; i < CHIP_CONTEXTS; i++)
		t->ctx[i].exit_status = -1;
	t->lc_and = 1;
	t->wait.zone = -1;
	/* Elements by shifts when they are a power of two and both regions
	 * start and end on element boundaries (both chips); else
	 * chip_mem_element. */
	uint32_t eb = chip->elem_bytes;
	if (eb >= 16 && !(eb & (eb - 1)) && chip->mem_base % eb == 0 &&
	    chip->interleave % (2 * eb) == 0 &&
	    chip->interleave >= chip->mem_base &&
	    chip->mem_end >= chip->interleave &&
	    (chip->mem_end - chip->interleave) % (2 * eb) == 0) {
		while ((1u << t->elem_shift) < eb)
			t->elem_shift++;
		t->region0_elems = (chip->interleave - chip->mem_base) / eb;
		t->mem_fast = chip_mem_elements(chip) <= 64 &&
		              chip->mem_end - chip->mem_base >= 8;
	}
	t->mem_base = chip->mem_base;
	t->last8 = chip->mem_end - chip->mem_base - 8;
	t->interleave = chip->interleave;
	xch_reset(&t->x);
	return t;
}

void
tile_free(Tile *t)
{
	if (!t)
		return;
	const Chip *c = t->chip;
	uint32_t words = (c->exec_end - c->mem_base) / 4;
	xunmap(t->mem, c->mem_end - c->mem_base);
	xunmap(t->dcache, words * sizeof *t->dcache);
	xunmap(t->dvalid, words);
	xunmap(t->issue_at, words * sizeof *t->issue_at);
	if (t->own_code)
		sim_code_free(t->code);

	xch_free(&t->x);
	sim_observe_free(t);
	free(t->trace);
	free(t);
}

void
tile_start(Tile *t, uint32_t entry)
{
	Context *s = &t->ctx[0];
	s->state = CTXS_RUN;
	s->pc = entry;
	s->m[10] = SIM_HOST_RETURN;
	t->sup_ready = t->cycle; /* a new start: nothing holds it back */
	/* the host loads code before it starts the supervisor: look for
	 * templates of what is there now */
	memset(t->seeded, 0, sizeof t->seeded);
}

void
sim_invalidate_code(Tile *t, uint32_t addr, uint32_t len)
{
	const Chip *c = t->chip;
	if (addr >= c->exec_end + 4)
		return; /* data memory: the loop below would not run */
	uint32_t lo = addr, hi = addr + len;
	if (lo < c->mem_base)
		lo = c->mem_base;
	if (hi > c->exec_end)
		hi = c->exec_end;
	/* from one word earlier: a two-word instruction decodes both */
	lo = lo >= c->mem_base + 4 ? lo - 4 : c->mem_base;
	for (uint32_t a = lo & ~3u; a < hi; a += 4) {
		t->dvalid[(a - c->mem_base) / 4] = 0;
		t->issue_at[(a - c->mem_base) / 4] = NULL;
	}
}

int
tile_write(Tile *t, uint32_t addr, const void *src, uint32_t len)
{
	if (!chip_in_memory(t->chip, addr, len))
		return -1;
	memcpy(t->mem + (addr - t->chip->mem_base), src, len);
	sim_invalidate(t, addr, len);
	return 0;
}

int
tile_read(const Tile *t, uint32_t addr, void *dst, uint32_t len)
{
	if (!chip_in_memory(t->chip, addr, len))
		return -1;
	memcpy(dst, t->mem + (addr - t->chip->mem_base), len);
	return 0;
}

/* Faults. */

void
sim_fault(Exec *e, FaultType type, uint32_t addr, const char *fmt, ...)
{
	Tile *t = e->tile;
	if (t->faulted)
		return; /* the first fault of a bundle wins */
	t->faulted = 1;
	t->etype[e->ctx] = (uint8_t)type;
	t->fault.type = type;
	t->fault.ctx = e->ctx;
	t->fault.pc = e->pc;
	t->fault.addr = addr;
	t->fault.cycle = t->cycle;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->fault.cause, sizeof t->fault.cause, fmt, ap);
	va_end(ap);
}

/* Registers. */

static void
commit(Exec *e)
{
	/* the count in a local: a write through dst (a uint32_t) could
	 * change nwr (an int) for all the compiler knows */
	int n = e->nwr;
	for (int i = 0; i < n; i++)
		*e->wr[i].dst = e->wr[i].value;
	e->nwr = 0;
}

/* Memory. */

static int
mem_check(Exec *e, uint32_t addr, uint32_t size, int store)
{
	Tile *t = e->tile;
	const Chip *c = t->chip;
	/* chip_in_memory and chip_is_interleaved, inline */
	if (!(addr >= c->mem_base && addr < c->mem_end &&
	      size <= c->mem_end - addr)) {
		sim_fault(e, FAULT_INVALID_ADDR, addr,
		          "%u-byte %s at 0x%05x is outside tile memory "
		          "0x%05x..0x%05x",
		          size, store ? "store" : "load", addr, c->mem_base,
		          c->mem_end);
		return 0;
	}
	/* sizes are powers of two: addr % size as a mask */
	if ((size & (size - 1)) == 0 ? addr & (size - 1) : addr % size) {
		sim_fault(e, FAULT_INVALID_ADDR, addr,
		          "misaligned %u-byte %s at 0x%05x", size,
		          store ? "store" : "load", addr);
		return 0;
	}
	if (size == 16 && !(addr >= c->interleave && addr < c->mem_end)) {
		sim_fault(e, FAULT_INVALID_ADDR, addr,
		          "128-bit access at 0x%05x outside the interleaved "
		          "region (from 0x%05x)",
		          addr, c->interleave);
		return 0;
	}
	/* Same-element conflicts within one bundle (isa.md 8). A 128-bit
	 * access uses both elements of its pair. */
	int el[2] = {sim_elem_of(t, addr), -1};
	if (size == 16)
		el[1] = sim_elem_of(t, addr + 8);
	if (t->nacc == 0)
		t->acc_elems = 0;
	for (int i = 0; i < t->nacc; i++) {
		MemAccess *o = &t->acc[i];
		const int *oel = o->el; /* as computed above for o */
		for (int a = 0; a < 2; a++)
			for (int b = 0; b < 2; b++)
				if (el[a] >= 0 && el[a] == oel[b]) {
					sim_fault(
					    e, FAULT_CONFLICT, addr,
					    "memory element %d conflict: "
					    "%s at 0x%05x and %s at "
					    "0x%05x in one bundle",
					    el[a], o->store ? "store" : "load",
					    o->addr, store ? "store" : "load",
					    addr);
					return 0;
				}
	}
	if (t->nacc == (int)(sizeof t->acc / sizeof t->acc[0]))
		die("too many memory accesses in one bundle");
	for (int a = 0; a < 2; a++)
		if (el[a] >= 0 && el[a] < 64)
			t->acc_elems |= 1ull << el[a];
	t->acc[t->nacc++] =
	    (MemAccess){addr, size, (uint8_t)store, {el[0], el[1]}};
	return 1;
}

int
sim_load_plain(Exec *e, uint32_t addr, void *dst, uint32_t size)
{
	if (!mem_check(e, addr, size, 0))
		return 0;
	sim_copy_bytes(dst, e->tile->mem + (addr - e->tile->chip->mem_base),
	               size);
	return 1;
}

int
sim_store_plain(Exec *e, uint32_t addr, const void *src, uint32_t size)
{
	if (!mem_check(e, addr, size, 1))
		return 0;
	Tile *t = e->tile;
	sim_copy_bytes(t->mem + (addr - t->chip->mem_base), src, size);
	sim_invalidate(t, addr, size);
	if (t->obs)
		sim_observe_store(e, addr, size);
	return 1;
}

/* Fetch and decode. */

static uint32_t
mem_word(const Tile *t, uint32_t addr)
{
	uint32_t w;
	memcpy(&w, t->mem + (addr - t->chip->mem_base), 4);
	return w;
}

/* The fast form of an instruction's semantics, or its plain one. */
static ExecFn
fast_form(ExecFn plain)
{
#define X(mn)                                                                  \
	if (plain == exec_##mn)                                                \
		return fast_##mn;
	SIM_FAST_FORMS(X)
#undef X
	return plain;
}

/* Decode the word w at pc (in code memory, 4-byte aligned) into *dc: 0,
 * or 1 for a word that is no instruction, 2 for a two-word instruction
 * that is not 8-byte aligned in code memory (dc->in.row says which). */
static int
decode_word(const Tile *t, uint32_t pc, uint32_t w, DInsn *dc)
{
	const Chip *c = t->chip;
	Insn *in = &dc->in;
	if (isa_decode(w, c->arch, in) < 0)
		return 1;
	/* A two-word instruction (sendpicp): its operands span both words,
	 * so decode it whole; the second word is data. */
	if (isa_row(in->row)->flags & F_WIDE) {
		if (pc % 8 || pc + 8 > c->exec_end)
			return 2;
		isa_decode_wide(w, mem_word(t, pc + 4), c->arch, in);
	}
	dc->d = isa_row(in->row);
	dc->fn = exec_for_row[in->row];
	dc->fast = fast_form(dc->fn);
	sim_insn_cost(c, dc);
	return 0;
}

/* Decoded instruction at pc, or NULL after raising the fault. On the fast
 * paths it is decoded into *scratch, not into the tile's own cache: its
 * issue goes to the shared store and the tile's issue cache, so the next
 * issue there does not come here (unless it faults or an observer's mark
 * sends it, whose decodes are kept), and the tile's cache would be a
 * page of fresh memory for every 64 words of code. */
static const DInsn *
fetch(Exec *e, uint32_t pc, uint32_t *word, DInsn *scratch)
{
	Tile *t = e->tile;
	const Chip *c = t->chip;
	if (pc < c->mem_base || pc + 4 > c->exec_end || pc % 4) {
		sim_fault(e, FAULT_INVALID_PC, pc,
		          "instruction fetch at 0x%05x: code must lie in "
		          "0x%05x..0x%05x and be 4-byte aligned",
		          pc, c->mem_base, c->exec_end);
		return NULL;
	}
	uint32_t idx = (pc - c->mem_base) / 4;
	*word = mem_word(t, pc);
	if (!t->dvalid[idx]) {
		int keep =
		    sim_path == SIM_PLAIN || (t->obs && t->obs->flag[idx]);
		DInsn *dc = keep ? &t->dcache[idx] : scratch;
		int bad = decode_word(t, pc, *word, dc);
		if (bad == 1) {
			t->fault.word[0] = *word;
			t->fault.word[1] = 0; /* not the last decoded issue's */
			t->fault.nwords = 1;
			sim_fault(e, FAULT_INVALID_INSTR, pc,
			          "0x%08x is not a valid %s instruction", *word,
			          c->arch_name);
			return NULL;
		}
		if (bad) {
			sim_fault(e, FAULT_INVALID_PC, pc,
			          "two-word %s at 0x%05x must be "
			          "8-byte aligned in code memory",
			          isa_row(dc->in.row)->mnemonic, pc);
			return NULL;
		}
		t->dvalid[idx] = (uint8_t)keep;
		if (pc < t->code_lo)
			t->code_lo = pc;
		if (pc + 8 > t->code_hi)
			t->code_hi = pc + 8;
		return dc;
	}
	return &t->dcache[idx];
}

static int
context_allows(Exec *e, const InsnDesc *d)
{
	if (d->ctx == CTX_W && e->ctx == 0) {
		sim_fault(e, FAULT_INVALID_INSTR, 0,
		          "%s is a worker instruction; the supervisor ran it",
		          d->mnemonic);
		return 0;
	}
	if (d->ctx == CTX_S && e->ctx != 0) {
		sim_fault(e, FAULT_INVALID_INSTR, 0,
		          "%s is a supervisor instruction; worker %d ran it",
		          d->mnemonic, e->ctx - 1);
		return 0;
	}
	return 1;
}

static int
in_rpt_body(const Context *c, uint32_t pc)
{
	return c->rpt_count > 0 && pc >= c->rpt_first && pc <= c->rpt_end;
}

/* The supervisor's pipeline after it issued at this cycle (cost.c made
 * the hazards): the $m values it writes come out sup-dep cycles later; a
 * jump, a conditional branch that branched (left the fall-through path)
 * or a CSR write holds its next issue back. */
static inline void
sup_pipeline(Tile *t, const Exec *e, unsigned hazard, int redirected)
{
	const Chip *c = t->chip;
	uint64_t out = t->cycle + chip_rule(c, TIMING_SUP_DEP);
	/* its $m writes: to its MRF, or to msink for $mzero */
	uintptr_t m0 = (uintptr_t)e->c->m;
	for (int i = 0; i < e->nwr; i++) {
		uintptr_t off = (uintptr_t)e->wr[i].dst - m0;
		if (e->wr[i].dst == &e->msink)
			t->mready[15] = out;
		else if (off < sizeof e->c->m)
			t->mready[off / sizeof e->c->m[0]] = out;
	}
	uint64_t next = 0;
	if ((hazard & SIM_HZ_JUMP) || ((hazard & SIM_HZ_BRANCH) && redirected))
		next = t->cycle + chip_rule(c, TIMING_SUP_BRANCH);
	if ((hazard & SIM_HZ_PUT) &&
	    t->cycle + chip_rule(c, TIMING_SUP_PUT) > next)
		next = t->cycle + chip_rule(c, TIMING_SUP_PUT);
	if (next > t->sup_ready)
		t->sup_ready = next;
}

/* 1 if the instruction's only effect is a write to $mzero, $a14 or $a15,
 * which ignore writes: an `or` there (the assembler's nop and fnop). Its
 * log entry is all it leaves, which matters only to the supervisor's
 * pipeline timing (sup_pipeline). */
static int
ignored_write(const DInsn *i)
{
	if (i->fn != exec_or)
		return 0;
	OperandKind k = i->d->op[0].kind;
	return (k == OPK_M && i->in.op[0] == 15) ||
	       (k == OPK_A && i->in.op[0] >= 14);
}

/* Whether issue_fused can run u: a paced form alone, beside a nop, or
 * beside one of the AMP forms the fast paths have in two steps; and
 * whether it has the GEMMs' common shape (DIssue.shape). */
static void
fused_shape(DIssue *u)
{
	static const struct {
		ExecFn fn;
		PaceForm form;
	} paced[] = {{exec_ld2xst64pace, PACE_LD2XST},
	             {exec_ld2x64pace, PACE_LD2X},
	             {exec_ldst64pace, PACE_LDST},
	             {exec_st64pace, PACE_ST}};
	u->pace = u->amp = u->shape = 0;
	memset(&u->pd, 0, sizeof u->pd);
	memset(&u->ad, 0, sizeof u->ad);
	ExecFn aux = u->work[1] ? u->i1->fn : NULL;
	int amp = !aux                         ? 0
	          : aux == exec_f16v4hihov4amp ? 1
	          : aux == exec_f8v8hihov4amp  ? 2
	                                       : -1;
	if (amp < 0 || !u->work[0])
		return;
	for (size_t k = 0; k < sizeof paced / sizeof paced[0]; k++)
		if (u->i0->fn == paced[k].fn) {
			u->pace = (uint8_t)(paced[k].form + 1);
			u->amp = (uint8_t)amp;
			sim_pace_decode(&u->i0->in, paced[k].form, &u->pd);
			if (amp)
				u->ad = sim_amp_decode(&u->i1->in);
		}
	if (u->pace && (u->ok & ISSUE_WORKER) && (u->ok & ISSUE_IN_RPT))
		u->ok |= ISSUE_LOOP;
	if (!(u->ok & ISSUE_LOOP) || !u->pd.lazy)
		return;
	PaceForm form = (PaceForm)(u->pace - 1);
	const PaceDec *d = &u->pd;
	for (int k = 0; k < sim_pace_loads(form); k++)
		if (d->dst[k] == 14)
			return;
	int zero_part = amp && u->ad.part == 14;
	if ((sim_pace_on(form, 2) && d->src == 14) ||
	    (amp && (u->ad.dst >= 13 || u->ad.src >= 13)) ||
	    (zero_part && d->vary))
		return;
	u->shape = (uint8_t)SIM_SHAPE(form, amp,
	                              u->pd.vary  ? SHAPE_STRIDED
	                              : zero_part ? SHAPE_ZERO_PART
	                                          : 0);
}

/* The operands in `ops` (bit k: operand k) of instruction i as a register
 * set: bit r for $m<r>, bit 16 + r for $a<r> (a pair's and a quad's
 * registers all). */
static uint32_t
operand_regs(const DInsn *i, unsigned ops)
{
	uint32_t set = 0;
	for (int k = 0; k < i->d->nops; k++) {
		if (!(ops >> k & 1))
			continue;
		unsigned r = (unsigned)i->in.op[k] & 15;
		switch (i->d->op[k].kind) {
		case OPK_M:
			set |= 1u << r;
			break;
		case OPK_MP:
			set |= 3u << r;
			break;
		case OPK_A:
			set |= 1u << (16 + r);
			break;
		case OPK_AP:
			set |= 3u << (16 + r);
			break;
		case OPK_AQ:
			set |= 15u << (16 + r);
			break;
		default:
			break;
		}
	}
	return set;
}

/* Instruction i's direct instance (sim.h, SIM_DIRECT_FORMS) and the
 * registers it writes (*writes, as operand_regs), or NULL where it has
 * none. */
static ExecFn
direct_instance(const DInsn *i, uint32_t *writes)
{
#define X(mn, w)                                                               \
	if (i->fn == exec_##mn) {                                              \
		*writes = operand_regs(i, w);                                  \
		return direct_##mn;                                            \
	}
	SIM_DIRECT_FORMS(X)
#undef X
	return NULL;
}

/* The halves of u (DIssue.work) that write their registers directly,
 * their direct instances put in u->work where SIM_DIRECT_FORMS' rules
 * (sim.h) allow: both halves in the list (a form outside it may write
 * registers that are not its operands, or fault after a write; an absent
 * half, or one whose write goes nowhere, counts as in it, writing
 * nothing); then (b), so that the bundle's registers end as the write
 * log's order (the main half's writes, then the aux half's) leaves them:
 * - the aux half directly where no register the main half writes is one
 *   the aux half writes (the main half's logged writes are committed after
 *   it);
 * - the main half directly where no register it writes is among the aux
 *   half's operands (the aux half reads them as they were before the
 *   bundle), and the aux half cannot fault after the main half wrote: with
 *   no aux half, always; else only while $FP_CTL enables no trap (the aux
 *   rows' only fault): u->trap_log names the traps under which halves runs
 *   the main half's logging instance instead (one test an issue). A
 *   fault discards the log, and the direct writes are made only where
 *   nothing can fault any more (SIM_DIRECT_FORMS' (c)). */
static void
direct_halves(DIssue *u)
{
	u->trap_log = 0;
	uint32_t w0 = 0, w1 = 0;
	ExecFn d0 = u->work[0] ? direct_instance(u->i0, &w0) : NULL;
	ExecFn d1 = u->work[1] ? direct_instance(u->i1, &w1) : NULL;
	if ((u->work[0] && !d0) || (u->work[1] && !d1))
		return;
	if (d1 && !(w0 & w1))
		u->work[1] = d1;
	/* every operand of the aux half, as read (its writes among them) */
	if (d0 && !(d1 && (w0 & operand_regs(u->i1, ~0u)))) {
		u->work[0] = d0;
		if (d1)
			u->trap_log = FP_FLAG_INV | FP_FLAG_DIV0 | FP_FLAG_OFLO;
	}
}

/* The issue cache's entry for halves i0 (and i1, NULL for a solo or a
 * two-word instruction) of words w0, w1 (0 for a one-word issue) that
 * passed every rule of fetch and decode but those of the context and rpt
 * state, which u->ok records. */
static void
issue_fill(DIssue *u, const DInsn *i0, const DInsn *i1, uint32_t w0,
           uint32_t w1, int bundle, int wide)
{
	const InsnDesc *d0 = i0->d, *d1 = i1 ? i1->d : NULL;
	u->i0 = i0;
	u->i1 = i1;
	u->word[0] = w0;
	u->word[1] = w1;
	u->nwords = bundle || wide ? 2 : 1;
	u->len = bundle || wide ? 8 : 4;
	u->ok = (uint8_t)((d0->ctx != CTX_S && (!d1 || d1->ctx != CTX_S)
	                       ? ISSUE_WORKER
	                       : 0) |
	                  (d0->ctx != CTX_W && (!d1 || d1->ctx != CTX_W)
	                       ? ISSUE_SUPERVISOR
	                       : 0) |
	                  (bundle && !(d0->flags & (F_CONTROL | F_SYSTEM))
	                       ? ISSUE_IN_RPT
	                       : 0) |
	                  /* both solo: no bundle has them */
	                  (i0->fn == exec_run || i0->fn == exec_runall
	                       ? ISSUE_STARTS
	                       : 0));
	u->work[0] = ignored_write(i0) ? NULL : i0->fast;
	u->work[1] = !i1 || ignored_write(i1) ? NULL : i1->fast;
	u->turns = i1 && i1->turns > i0->turns ? i1->turns : i0->turns;
	u->reads = (uint16_t)(i0->reads | (i1 ? i1->reads : 0));
	u->hazard = (uint8_t)(i0->hazard | (i1 ? i1->hazard : 0));
	fused_shape(u);
	direct_halves(u);
}

/* The shared store of decoded issues (SimCode, sim.h): an open-addressed
 * table keyed by an issue's words (word[1] is 0 for a one-word issue).
 * Each entry holds its halves, so that an issue and what it runs lie
 * together in the host's caches: each part on cache lines of its own, the
 * entries in blocks in the order they were made (code in address order, so
 * that the next issue's lines are near). A tile meets most of its issues
 * once per pass over its code, in a store far larger than the caches. */
typedef struct {
	_Alignas(64) DIssue u;
	_Alignas(64) DInsn half[2];
} SharedIssue;

enum { CODE_BLOCK = 256 }; /* entries per block */
/* issues shared_issue looks up at once, from the one missed on */
enum { CODE_AHEAD = 16 };

/* A page template: the issue cache's entries for one page of code memory
 * (SIM_CODE_PAGE_WORDS words from a multiple of that many past mem_base),
 * every word's issue decoded once from one tile's memory (the contents,
 * kept), and copied into the issue cache of each tile at its first miss
 * in that page after tile_start (code_seed): an entry where the tile has
 * the same words (the issue's one or two), which is what its own misses
 * would have found, one by one, in the shared store (an issue is a
 * function of its words and its address). A page has a few templates, of
 * different contents (tiles of different roles): a tile copies from the
 * one most like its own memory there, and makes another while there are
 * fewer than CODE_PAGE_VARIANTS when none is close. Immutable once made;
 * the tiles' caches are their own, so a write to code clears a tile's
 * copy as it clears what the tile found itself. */
enum { CODE_PAGE_VARIANTS = 8 };
typedef struct {
	/* the words, and the one after the page (0 past exec_end) */
	uint32_t words[SIM_CODE_PAGE_WORDS + 1];
	/* each word's entry, with bit 0 set for a two-word issue and bit 1
	 * for one of two halves (a bundle): the copy reads no entry */
	uintptr_t at[SIM_CODE_PAGE_WORDS];
	/* the first and last words with an entry (first > last: none) */
	int first, last;
} CodePage;
typedef struct CodeBlock {
	SharedIssue e[CODE_BLOCK];
	struct CodeBlock *next;
} CodeBlock;

/* A slot of a table: the entry (0 where free) with its issue's length
 * in bit 0 (1: two words; entries are 64-byte aligned), beside its words,
 * so that a probe compares keys on the slot's cache line and touches no
 * entry but the one it finds. A slot is written once, under the lock: the
 * words first, then the entry with release, so a reader that sees the
 * entry (acquire) sees the words. */
typedef struct {
	_Atomic(uintptr_t) e;
	uint32_t w0, w1;
} CodeSlot;

/* A table of the store: mask + 1 slots. A grown store keeps its older
 * tables (a thread may still be reading one) until it is freed. */
typedef struct CodeTable {
	struct CodeTable *older;
	uint32_t mask;
	CodeSlot slot[];
} CodeTable;

/* Readers load the table and its slots with acquire, without the lock;
 * writers (under the lock) fill an entry before they publish it, and a
 * grown table before it replaces the old one. */
struct SimCode {
	pthread_mutex_t lock;
	_Atomic(CodeTable *) table;
	uint32_t n;
	CodeBlock *blocks; /* the newest first, filled in order */
	/* the page templates (CodePage), CODE_PAGE_VARIANTS a page, for
	 * the pages Tile.seeded covers; under plock, which is taken before
	 * lock, never after */
	pthread_mutex_t plock;
	CodePage *(*pages)[CODE_PAGE_VARIANTS]; /* made on first use */
	uint64_t pages_built, pages_copied;
};

static CodeTable *
code_table(uint32_t mask)
{
	CodeTable *tb =
	    xcalloc(1, sizeof *tb + (mask + 1) * sizeof tb->slot[0]);
	tb->mask = mask;
	return tb; /* all slots NULL: calloc's zeros */
}

SimCode *
sim_code_new(void)
{
	SimCode *s = xcalloc(1, sizeof *s);
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->plock, NULL);
	atomic_init(&s->table, code_table(1023));
	return s;
}

void
sim_code_free(SimCode *s)
{
	if (!s)
		return;
	while (s->blocks) {
		CodeBlock *next = s->blocks->next;
		free(s->blocks);
		s->blocks = next;
	}
	CodeTable *tb = atomic_load(&s->table);
	while (tb) {
		CodeTable *older = tb->older;
		free(tb);
		tb = older;
	}
	for (int i = 0; s->pages && i < 64 * SIM_CODE_SEEDED; i++)
		for (int v = 0; v < CODE_PAGE_VARIANTS; v++)
			free(s->pages[i][v]);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->plock);
	free(s->pages);
	free(s);
}

void
sim_code_page_counts(SimCode *s, uint64_t *built, uint64_t *copied)
{
	pthread_mutex_lock(&s->plock);
	*built = s->pages_built;
	*copied = s->pages_copied;
	pthread_mutex_unlock(&s->plock);
}

void
tile_share_code(Tile *t, SimCode *s)
{
	if (t->own_code)
		sim_code_free(t->code);
	t->code = s;
	t->own_code = 0;
}

/* The entry with these words in tb, or NULL; *free_slot gets the slot it
 * would take. The start slot mixes all the key's bits into the high half
 * of a 64-bit product: code words differ in few bits, often high ones. */
static inline uint32_t
code_start(uint32_t w0, uint32_t w1, uint8_t nwords)
{
	uint64_t k = ((uint64_t)w1 << 32 | w0) ^ (uint64_t)nwords << 62;
	return (uint32_t)((k * 0x9e3779b97f4a7c15ull) >> 32);
}

static SharedIssue *
code_find(const CodeTable *tb, uint32_t w0, uint32_t w1, uint8_t nwords,
          CodeSlot **free_slot)
{
	uintptr_t tag = nwords == 2;
	for (uint32_t i = code_start(w0, w1, nwords);; i++) {
		CodeSlot *p = (CodeSlot *)&tb->slot[i & tb->mask];
		uintptr_t e = atomic_load_explicit(&p->e, memory_order_acquire);
		if (!e) {
			*free_slot = p;
			return NULL;
		}
		if (p->w0 == w0 && p->w1 == w1 && (e & 1) == tag)
			return (SharedIssue *)(e & ~(uintptr_t)1);
	}
}

/* Fill a free slot that code_find gave: the words, then the entry. */
static void
code_put(CodeSlot *p, SharedIssue *e)
{
	p->w0 = e->u.word[0];
	p->w1 = e->u.word[1];
	atomic_store_explicit(&p->e, (uintptr_t)e | (e->u.nwords == 2),
	                      memory_order_release);
}

/* The store's copy of u (a new one, or the one another tile made: the
 * same, as both are functions of the words and the chip). */
static const DIssue *
code_intern(SimCode *s, const DIssue *u)
{
	pthread_mutex_lock(&s->lock);
	CodeTable *tb = atomic_load_explicit(&s->table, memory_order_relaxed);
	CodeSlot *p;
	SharedIssue *e = code_find(tb, u->word[0], u->word[1], u->nwords, &p);
	if (!e) {
		if (2 * (s->n + 1) > tb->mask + 1) { /* at most half full */
			CodeTable *nt = code_table(2 * tb->mask + 1);
			nt->older = tb;
			for (uint32_t i = 0; i <= tb->mask; i++) {
				uintptr_t o = atomic_load_explicit(
				    &tb->slot[i].e, memory_order_relaxed);
				SharedIssue *oe =
				    (SharedIssue *)(o & ~(uintptr_t)1);
				CodeSlot *q;
				if (oe &&
				    !code_find(nt, oe->u.word[0], oe->u.word[1],
				               oe->u.nwords, &q))
					code_put(q, oe);
			}
			atomic_store_explicit(&s->table, nt,
			                      memory_order_release);
			tb = nt;
			code_find(tb, u->word[0], u->word[1], u->nwords, &p);
		}
		if (s->n % CODE_BLOCK == 0) {
			CodeBlock *b = xaligned_alloc(64, sizeof *b);
			b->next = s->blocks;
			s->blocks = b;
		}
		e = &s->blocks->e[s->n % CODE_BLOCK];
		e->u = *u;
		e->half[0] = *u->i0;
		e->u.i0 = &e->half[0];
		if (u->i1) {
			e->half[1] = *u->i1;
			e->u.i1 = &e->half[1];
		} else {
			memset(&e->half[1], 0, sizeof e->half[1]);
		}
		code_put(p, e);
		s->n++;
	}
	pthread_mutex_unlock(&s->lock);
	return &e->u;
}

/* The issue at pc as decode_issue would remember it, from the tile's
 * memory, without faults: 1 and *u (its halves in half) if every rule of
 * fetch and decode holds there but those of the context and rpt state
 * (u->ok), else 0. */
static int
issue_build(const Tile *t, uint32_t pc, DIssue *u, DInsn half[2])
{
	const Chip *c = t->chip;
	if (pc + 4 > c->exec_end)
		return 0;
	uint32_t w0 = mem_word(t, pc), w1 = 0;
	if (decode_word(t, pc, w0, &half[0]))
		return 0;
	const InsnDesc *d0 = half[0].d;
	int wide = (d0->flags & F_WIDE) != 0;
	int bundle = !wide && ((w0 >> 31) & 1);
	const DInsn *i1 = NULL;
	if (wide)
		w1 = mem_word(t, pc + 4);
	if (bundle) {
		if (pc % 8 || pc + 8 > c->exec_end)
			return 0;
		w1 = mem_word(t, pc + 4);
		if (decode_word(t, pc + 4, w1, &half[1]))
			return 0;
		if (d0->lane != LANE_MAIN || half[1].d->lane != LANE_AUX ||
		    (w1 >> 31))
			return 0;
		i1 = &half[1];
	}
	issue_fill(u, &half[0], i1, w0, w1, bundle, wide);
	return 1;
}

/* A template of page pa's code from the tile's memory. */
static CodePage *
page_build(Tile *t, uint32_t pa)
{
	CodePage *p = xcalloc(1, sizeof *p);
	for (uint32_t w = 0; w < SIM_CODE_PAGE_WORDS; w++) {
		uint32_t pc = pa + 4 * w;
		DIssue u;
		DInsn half[2];
		p->words[w] = mem_word(t, pc);
		if (!issue_build(t, pc, &u, half))
			continue;
		p->at[w] = (uintptr_t)code_intern(t->code, &u) |
		           (u.nwords == 2) | (u.i1 ? 2u : 0u);
	}
	p->first = 0;
	p->last = SIM_CODE_PAGE_WORDS - 1;
	while (p->first < SIM_CODE_PAGE_WORDS && !p->at[p->first])
		p->first++;
	while (p->last >= 0 && !p->at[p->last])
		p->last--;
	uint32_t end = pa + 4 * SIM_CODE_PAGE_WORDS;
	p->words[SIM_CODE_PAGE_WORDS] =
	    end + 4 <= t->chip->exec_end ? mem_word(t, end) : 0;
	return p;
}

/* The tile's first miss in page pg since the host last started it: copy
 * the entries of the page's closest template that have the tile's words
 * into its issue cache (making a template first if none is close). */
static __attribute__((noinline)) void
code_seed(Tile *t, uint32_t pg)
{
	const Chip *ch = t->chip;
	SimCode *s = t->code;
	uint32_t pa = ch->mem_base + pg * 4 * SIM_CODE_PAGE_WORDS;
	if (pa + 4 * SIM_CODE_PAGE_WORDS > ch->exec_end)
		return; /* a partial page: left to the store */
	pthread_mutex_lock(&s->plock);
	if (!s->pages)
		s->pages = xcalloc(64 * SIM_CODE_SEEDED, sizeof *s->pages);
	CodePage **v = s->pages[pg], *p = NULL;
	int best = -1, n = 0;
	for (; n < CODE_PAGE_VARIANTS && v[n]; n++) {
		int same = 0; /* in every fourth word: a guide only */
		for (uint32_t w = 0; w < SIM_CODE_PAGE_WORDS; w += 4)
			same += v[n]->words[w] == mem_word(t, pa + 4 * w);
		if (same > best) {
			best = same;
			p = v[n];
		}
	}
	/* none with seven in eight of the words: one more template */
	if (8 * best < 7 * (SIM_CODE_PAGE_WORDS / 4) &&
	    n < CODE_PAGE_VARIANTS) {
		p = v[n] = page_build(t, pa);
		s->pages_built++;
	}
	s->pages_copied++;
	/* The tile has every word of the template (the common case), the
	 * word after the page too if the last issue has two: then no
	 * entry's words need comparing. */
	enum { LAST = SIM_CODE_PAGE_WORDS - 1 };
	uint32_t end = pa + 4 * SIM_CODE_PAGE_WORDS;
	int all =
	    memcmp(p->words, t->mem + (pa - ch->mem_base), end - pa) == 0 &&
	    (!(p->at[LAST] & 1) || p->words[LAST + 1] == mem_word(t, end));
	const DIssue **at = t->issue_at + (pa - ch->mem_base) / 4;
	int first = -1, last = -1; /* the entries copied (all: or had) */
	if (all && p->first <= p->last) {
		/* Every entry of the template is the tile's: a word the tile
		 * has an entry for keeps it (the same issue), the others take
		 * the template's (none where it has none), without a branch.
		 * The range: the template's first and last entries, as any
		 * entry the tile had there already lies in its range. */
		for (int w = p->first; w <= p->last; w++) {
			uintptr_t had = (uintptr_t)at[w];
			at[w] =
			    (const DIssue *)(had ? had
			                         : p->at[w] & ~(uintptr_t)63);
		}
		first = p->first;
		last = p->last;
	}
	for (int w = 0; !all && w < SIM_CODE_PAGE_WORDS; w++) {
		uintptr_t u = p->at[w];
		if (!u || at[w])
			continue;
		uint32_t pc = pa + 4 * (uint32_t)w;
		if (p->words[w] != mem_word(t, pc) ||
		    ((u & 1) && p->words[w + 1] != mem_word(t, pc + 4)))
			continue;
		at[w] = (const DIssue *)(u & ~(uintptr_t)63);
		if (first < 0)
			first = w;
		last = w;
	}
	/* the range shared_issue would note: the last entry's end is the
	 * highest, as the entries' starts are 4 bytes apart at least */
	if (first >= 0) {
		uint32_t lo = pa + 4 * (uint32_t)first,
		         hi = pa + 4 * (uint32_t)last +
		              (p->at[last] & 2 ? 12 : 8);
		if (lo < t->code_lo)
			t->code_lo = lo;
		if (hi > t->code_hi)
			t->code_hi = hi;
	}
	pthread_mutex_unlock(&s->plock);
}

/* The store's entry for the words at pc, or NULL; *len its length (which
 * of the two keys it has says). */
static inline SharedIssue *
store_find(const Tile *t, const CodeTable *tb, uint32_t pc, uint32_t *len)
{
	const Chip *ch = t->chip;
	uint32_t w0 = mem_word(t, pc);
	int two = pc % 8 == 0 && pc + 8 <= ch->exec_end; /* a bundle's */
	uint32_t w1 = two ? mem_word(t, pc + 4) : 0;
	CodeSlot *p;
	SharedIssue *e = NULL;
	*len = 4;
	if (!(w0 >> 31)) /* a solo, or a two-word instruction */
		e = code_find(tb, w0, 0, 1, &p);
	if (!e && two) {
		e = code_find(tb, w0, w1, 2, &p);
		*len = 8;
	}
	return e;
}

/* An issue the store has for the words at pc, now in the tile's cache; or
 * NULL (decode_issue decodes it, or raises the fault). Only the rules that
 * depend on the address are left to check here: a store entry passed every
 * other rule of fetch and decode somewhere, and cached_issue checks those
 * of the context and rpt state. */
static __attribute__((noinline)) const DIssue *
shared_issue(Tile *t, uint32_t pc)
{
	const Chip *ch = t->chip;
	SimCode *s = t->code;
	if (!s)
		return NULL;
	uint32_t pg = (pc - ch->mem_base) / (4 * SIM_CODE_PAGE_WORDS);
	if (pg < 64 * SIM_CODE_SEEDED &&
	    !(t->seeded[pg / 64] >> (pg % 64) & 1)) {
		t->seeded[pg / 64] |= 1ull << (pg % 64);
		code_seed(t, pg);
		const DIssue *u = t->issue_at[(pc - ch->mem_base) / 4];
		if (u)
			return u;
	}
	CodeTable *tb = atomic_load_explicit(&s->table, memory_order_acquire);
	/* Ask the host for the slots of the issues that follow in
	 * straight-line code (a bundle's word says its length, a two-word
	 * instruction's does not: taken for a solo here, which only costs a
	 * useless fetch): they are looked up below, their misses in flight
	 * together, as the code that runs after pc is usually that. */
	uint32_t q = pc;
	for (int k = 0; k < CODE_AHEAD && q + 8 <= ch->exec_end; k++) {
		uint32_t w0 = mem_word(t, q);
		int two = (w0 >> 31) & 1;
		uint32_t start = code_start(w0, two ? mem_word(t, q + 4) : 0,
		                            (uint8_t)(1 + two));
		__builtin_prefetch(&tb->slot[start & tb->mask]);
		q += two ? 8 : 4;
	}
	uint32_t len;
	SharedIssue *e = store_find(t, tb, pc, &len);
	if (!e)
		return NULL;
	/* the range fetch would have noted: each word decoded, plus 8 */
	uint32_t hi = pc + (e->u.i1 ? 12 : 8);
	if (pc < t->code_lo)
		t->code_lo = pc;
	if (hi > t->code_hi)
		t->code_hi = hi;
	t->issue_at[(pc - ch->mem_base) / 4] = &e->u;
	/* The issues after it, while the store has them: what this
	 * function would find at the tile's first miss there (a later
	 * write to code clears them as it would then), with the range
	 * noted as for a bundle (4 more than a two-word instruction's). */
	q = pc + len;
	for (int k = 1; k < CODE_AHEAD && q + 8 <= ch->exec_end; k++) {
		const DIssue **at = &t->issue_at[(q - ch->mem_base) / 4];
		uint32_t n;
		SharedIssue *f = *at ? NULL : store_find(t, tb, q, &n);
		if (!f)
			break;
		__builtin_prefetch(&f->u);
		*at = &f->u;
		if (q + 12 > t->code_hi)
			t->code_hi = q + 12;
		q += n;
	}
	return &e->u;
}

/* Fetch, decode and check the issue at c->pc as the plain path does, one
 * rule after another: its halves into *i0, *i1 (NULL for a solo or a
 * two-word instruction) and its length into *len; 0 after raising the
 * fault. The words go to t->fault.word for a fault during execution. When
 * every rule holds, the issue is remembered (Tile.issues) for the fast
 * path, with the rules that depend on the context and on rpt state. */
static int
decode_issue(Tile *t, Exec *e, int ci, const DInsn **i0, const DInsn **i1,
             uint32_t *len, DInsn scratch[2])
{
	Context *c = &t->ctx[ci];
	uint32_t w0, w1 = 0;
	*i0 = fetch(e, c->pc, &w0, &scratch[0]);
	*i1 = NULL;
	if (!*i0)
		return 0;
	/* word[1] too, as an issue from the cache sets both (DIssue.word) */
	t->fault.word[0] = w0;
	t->fault.word[1] = 0;
	t->fault.nwords = 1;
	const InsnDesc *d0 = (*i0)->d, *d1 = NULL;
	int wide = (d0->flags & F_WIDE) != 0;
	int bundle = !wide && ((w0 >> 31) & 1);
	if (wide) {
		w1 = mem_word(t, c->pc + 4);
		t->fault.word[1] = w1;
		t->fault.nwords = 2;
	}
	int in_rpt = in_rpt_body(c, c->pc);
	if (bundle) {
		if (c->pc % 8) {
			sim_fault(e, FAULT_INVALID_PC, c->pc,
			          "bundle at 0x%05x is not 8-byte aligned",
			          c->pc);
			return 0;
		}
		*i1 = fetch(e, c->pc + 4, &w1, &scratch[1]);
		if (!*i1)
			return 0;
		t->fault.word[1] = w1;
		t->fault.nwords = 2;
		d1 = (*i1)->d;
		if (d0->lane != LANE_MAIN || d1->lane != LANE_AUX ||
		    (w1 >> 31)) {
			sim_fault(e, FAULT_INVALID_INSTR, c->pc,
			          "a bundle is {main; aux}: got {%s; %s}",
			          d0->mnemonic, d1->mnemonic);
			return 0;
		}
	} else if (in_rpt) {
		sim_fault(e, FAULT_INVALID_INSTR, c->pc,
		          "solo instruction %s inside a rpt body",
		          d0->mnemonic);
		return 0;
	}
	if (!context_allows(e, d0) || (d1 && !context_allows(e, d1)))
		return 0;
	if (in_rpt && (d0->flags & (F_CONTROL | F_SYSTEM))) {
		sim_fault(e, FAULT_INVALID_INSTR, c->pc,
		          "%s (control/system) inside a rpt body",
		          d0->mnemonic);
		return 0;
	}
	*len = bundle || wide ? 8 : 4;
	/* every rule held: remember what does not depend on this issue's
	 * context and rpt state, and which of those rules it passes (only
	 * the fast paths read it) */
	if (sim_path == SIM_PLAIN)
		return 1;
	DIssue issue, *u = &issue;
	issue_fill(u, *i0, *i1, w0, w1, bundle, wide);
	if (!t->code)
		t->code = sim_code_new();
	t->issue_at[(c->pc - t->chip->mem_base) / 4] = code_intern(t->code, u);
	return 1;
}

/* The remembered issue at c->pc if the fast path may take it: every rule
 * decode_issue checks holds for this context and rpt state. NULL sends the
 * issue to decode_issue (always on SIM_PLAIN). */
static inline const DIssue *
cached_issue(Tile *t, const Context *c, int ci)
{
	const Chip *ch = t->chip;
	uint32_t off = c->pc - ch->mem_base;
	if (sim_path == SIM_PLAIN || off >= ch->exec_end - ch->mem_base ||
	    (off & 3))
		return NULL;
	if (ci && t->obs && t->obs->flag[off / 4])
		return NULL; /* issue() stops at a breakpoint */
	const DIssue *u = t->issue_at[off / 4];
	if (!u && !(u = shared_issue(t, c->pc)))
		return NULL;
	if (!(u->ok & (ci ? ISSUE_WORKER : ISSUE_SUPERVISOR)))
		return NULL;
	if (!(u->ok & ISSUE_IN_RPT) && in_rpt_body(c, c->pc))
		return NULL;
	return u;
}

/* A fault while cached issue u ran in context c: u's words for the
 * report (on the plain path decode_issue set them), c stopped. */
static void
issue_fault(Tile *t, Context *c, const DIssue *u)
{
	memcpy(t->fault.word, u->word, sizeof u->word);
	t->fault.nwords = u->nwords;
	c->state = CTXS_FAULTED;
}

/* Issue one bundle or solo instruction for context `ci`. */
static void
issue(Tile *t, int ci)
{
	Context *c = &t->ctx[ci];
	/* Field by field: a designated initializer would also zero the
	 * write log, which nothing reads beyond nwr. */
	Exec e;
	e.tile = t;
	e.c = c;
	e.ctx = ci;
	e.in = NULL;
	e.d = NULL;
	e.pc = c->pc;
	e.next_pc = 0;
	e.nwr = 0;
	t->nacc = 0;
	const DInsn *i0, *i1;
	DInsn scratch[2];
	uint32_t len;
	const DIssue *u = cached_issue(t, c, ci);
	if (u) {
		i0 = u->i0;
		i1 = u->i1;
		len = u->len;
	} else if (!decode_issue(t, &e, ci, &i0, &i1, &len, scratch)) {
		goto fault;
	}
	uint32_t fall_through = c->pc + len;
	e.next_pc = fall_through;
	if (ci == 0) {
		/* the values it reads may still be in the pipeline */
		uint64_t ready =
		    sim_sup_operands_ready(t, i0->reads | (i1 ? i1->reads : 0));
		if (ready > t->cycle) {
			t->sup_ready = ready;
			return;
		}
	}
	if (t->obs && t->obs->flag[(c->pc - t->chip->mem_base) / 4] &&
	    sim_observe_issue(&e))
		goto fault_words; /* a breakpoint: stopped before the issue */

	/* a cached issue runs the fast forms */
	e.in = &i0->in;
	e.d = i0->d;
	(u ? i0->fast : i0->fn)(&e);
	if (!t->faulted && i1) {
		e.in = &i1->in;
		e.d = i1->d;
		(u ? i1->fast : i1->fn)(&e);
	}
	if (t->faulted)
		goto fault_words;
	if (ci == 0)
		sup_pipeline(t, &e, i0->hazard | (i1 ? i1->hazard : 0),
		             e.next_pc != fall_through);
	else if (i0->turns > 1 || (i1 && i1->turns > 1)) {
		uint32_t turns =
		    i1 && i1->turns > i0->turns ? i1->turns : i0->turns;
		c->ready = t->cycle + (uint64_t)CHIP_SLOTS * (turns - 1) + 1;
	}
	commit(&e);
	t->bundles++;
	if (ci)
		t->worker_issues++;
	/* rpt: after the last body bundle, loop while iterations remain. */
	if (c->rpt_count && c->pc == c->rpt_end) {
		if (--c->rpt_count)
			e.next_pc = c->rpt_first;
	}
	if (c->state == CTXS_RUN || c->state == CTXS_SYNC)
		c->pc = e.next_pc;
	if (ci == 0 && c->pc == SIM_HOST_RETURN)
		c->state = CTXS_DONE; /* returned to the host */
	return;
fault_words:
	if (u) {
		issue_fault(t, c, u);
		return;
	}
fault:
	c->state = CTXS_FAULTED;
}

/* fused_form with the paced form a constant (DIssue.pace), for worker w
 * (c: its context). */
static inline int
issue_fused(Tile *t, Context *c, int w, const DIssue *u)
{
	switch (u->pace) {
	case PACE_LD2XST + 1:
		return fused_form(t, c, w, u, PACE_LD2XST);
	case PACE_LD2X + 1:
		return fused_form(t, c, w, u, PACE_LD2X);
	case PACE_LDST + 1:
		return fused_form(t, c, w, u, PACE_LDST);
	case PACE_ST + 1:
		return fused_form(t, c, w, u, PACE_ST);
	}
	return 0;
}

/* issue_fused with the pair kept in *z (run_fused), for the bundles
 * outside the common shape (DIssue.shape 0), which run_shape runs. */
static __attribute__((noinline)) int
issue_fused_lazy(Tile *t, Context *c, int w, int box, const DIssue *u, int avx2,
                 LazyPair *z)
{
	AmpCtx a = sim_amp_ctx(c, u->amp == 2);
	switch (u->pace) {
	case PACE_LD2XST + 1:
		return fused_lazy(t, c, w, box, u, PACE_LD2XST, u->amp, 0, 0,
		                  avx2, a, z);
	case PACE_LD2X + 1:
		return fused_lazy(t, c, w, box, u, PACE_LD2X, u->amp, 0, 0,
		                  avx2, a, z);
	case PACE_LDST + 1:
		return fused_lazy(t, c, w, box, u, PACE_LDST, u->amp, 0, 0,
		                  avx2, a, z);
	case PACE_ST + 1:
		return fused_lazy(t, c, w, box, u, PACE_ST, u->amp, 0, 0, avx2,
		                  a, z);
	}
	return 0;
}

/* The halves of a cached worker issue through their fast forms
 * (DIssue.work: their direct instances where direct_halves chose them, the
 * others through the write log), in *e (whose tile is t): the new pc into
 * *next_pc, or 0 after a fault. */
static inline __attribute__((always_inline)) int
halves(Exec *e, Tile *t, Context *c, int w, const DIssue *u, uint32_t *next_pc)
{
	e->c = c;
	e->ctx = w;
	e->pc = c->pc;
	e->next_pc = c->pc + u->len;
	e->nwr = 0;
	t->nacc = 0;
	if (u->work[0]) {
		e->in = &u->i0->in;
		e->d = u->i0->d;
		/* direct_halves: the main half's logging instance where it
		 * writes directly only while no trap is enabled, and one is */
		if (__builtin_expect(c->fp_ctl & u->trap_log, 0))
			u->i0->fast(e);
		else
			u->work[0](e);
	}
	if (u->work[1] && !t->faulted) {
		e->in = &u->i1->in;
		e->d = u->i1->d;
		u->work[1](e);
	}
	if (t->faulted) {
		issue_fault(t, c, u);
		return 0;
	}
	commit(e);
	*next_pc = e->next_pc;
	return 1;
}

/* halves() with an Exec of its own. Apart from issue_cached_worker, so
 * that the fused bundles' path does not carry the Exec on its stack. */
static __attribute__((noinline)) int
issue_halves(Tile *t, Context *c, int w, const DIssue *u, uint32_t *next_pc)
{
	Exec e;
	e.tile = t;
	return halves(&e, t, c, w, u, next_pc);
}

/* A worker's issue when it is in the issue cache: what issue() does for
 * it, with the halves' fast forms (DIssue.work) and none of the
 * supervisor's rules. 0 if it is not cached, or not allowed there: then
 * issue() must run it; else 1 (also after a fault). */
static inline int
issue_cached_worker(Tile *t, int w)
{
	Context *c = &t->ctx[w];
	const DIssue *u = cached_issue(t, c, w);
	if (!u)
		return 0;
	uint32_t next_pc = c->pc + u->len;
	t->nacc = 0; /* a new bundle: no access yet (the fast checks ask) */
	int fused = u->pace && issue_fused(t, c, w, u);
	if (!fused && !issue_halves(t, c, w, u, &next_pc))
		return 1; /* faulted */
	next_pc = worker_issued(c, u, t->cycle, next_pc);
	t->bundles++;
	t->worker_issues++;
	if (c->state == CTXS_RUN || c->state == CTXS_SYNC)
		c->pc = next_pc;
	return 1;
}

/* The cached issue of the slot's worker (into *w) in `cycle`, if it is
 * ready there, its pc in the code, aligned and not at an observer's mark;
 * else NULL (also where the cache has none). */
static inline __attribute__((always_inline)) const DIssue *
fused_next(const Tile *t, uint32_t base, uint32_t words, const uint8_t *mark,
           uint64_t cycle, unsigned slot, int *w)
{
	int k = slot_issuer(t, cycle, slot);
	if (!k)
		return NULL;
	*w = k;
	return worker_issue_at(t, base, words, mark, t->ctx[k].pc);
}

/* shapes_run for any host (shapes.h): the AMP's bundles decline. */
static __attribute__((noinline)) int
run_shape(Tile *t, FusedRun *r, int shape)
{
	return shapes_run(t, r, shape, 0);
}

/* The GEMM's steady state, entered at a fused bundle (run_workers): from
 * this cycle on, while the slot's worker is ready at a fused bundle
 * (ISSUE_LOOP: also allowed to a worker and in an rpt body), issue it as
 * issue_cached_worker would, cycle by cycle in the same order; the
 * bundles of the common shape by run_shape's loop for it, the others here.
 * Only on a fast path (the caller checks). A marked word (a breakpoint or
 * log mark of the observer, set between runs) ends the loop there, as does
 * a write to code (it clears issue_at), a fault, any other issue and
 * max_cycles; a watch makes the fused forms decline (mem_fast), so
 * issue_halves' stores report to it. */
static __attribute__((noinline)) void
run_fused(Tile *t, uint64_t max_cycles)
{
	FusedRun r;
	r.cycle = t->cycle;
	r.max_cycles = max_cycles;
	r.issued = 0;
	r.slot = (unsigned)(r.cycle % CHIP_SLOTS);
	r.base = t->chip->mem_base;
	uint32_t lim = t->chip->exec_end - r.base;
	r.words = ceil_div(lim, 4); /* at most 2^30 */
	r.mark = t->obs ? t->obs->flag : NULL;
	/* the same for every bundle here: t->nacc is 0 at each */
	t->nacc = 0;
	r.boxes = sim_pace_boxes(t);
	r.avx2 = sim_use_avx2(); /* set between runs */
	for (int i = 0; i < CHIP_CONTEXTS; i++)
		r.lazy[i].pair = -1;
	int declined = 0; /* the bundle at r.cycle declined its shape's form */
	while (r.cycle < max_cycles) {
		int w;
		const DIssue *u =
		    fused_next(t, r.base, r.words, r.mark, r.cycle, r.slot, &w);
		if (!u || !(u->ok & ISSUE_LOOP))
			break;
		/* without the boxes the shapes' forms decline (the
		 * checks they fall back to, sim_mem_fast8, refuse then) */
		if (u->shape && !declined && r.boxes) {
#if defined(__x86_64__) && defined(__GNUC__)
			if (r.avx2) {
				declined = sim_run_shape_avx2(t, &r, u->shape);
				continue;
			}
#endif
			declined = run_shape(t, &r, u->shape);
			continue;
		}
		declined = 0;
		Context *c = &t->ctx[w];
		uint32_t next_pc = c->pc + u->len;
		t->nacc = 0;
		if (u->shape || !issue_fused_lazy(t, c, w, r.boxes ? w : -1, u,
		                                  r.avx2, &r.lazy[w])) {
			lazy_flush(c, &r.lazy[w]); /* the halves read it */
			t->cycle = r.cycle; /* a fault's report reads it */
			if (!issue_halves(t, c, w, u, &next_pc)) {
				r.cycle++;
				break; /* faulted: tile_run reports it */
			}
		}
		next_pc = worker_issued(c, u, r.cycle, next_pc);
		r.issued++;
		c->pc = next_pc; /* a paced access or AMP leaves state RUN */
		r.cycle++;
		r.slot = r.slot + 1 == CHIP_SLOTS ? 0 : r.slot + 1;
	}
	for (int i = 1; i < CHIP_CONTEXTS; i++)
		lazy_flush(&t->ctx[i], &r.lazy[i]);
	t->bundles += r.issued;
	t->worker_issues += r.issued;
	t->cycle = r.cycle;
}

/* The cached issue at c's pc for the loops that run issues without
 * issue() (run_workers, run_supervisor): NULL outside the code (its
 * offset from base not under lim), unaligned, at an observer's mark, or
 * where neither cache has one; the loop then hands back to tile_run. */
static inline const DIssue *
loop_issue(Tile *t, const Context *c, uint32_t base, uint32_t lim,
           const uint8_t *mark)
{
	uint32_t off = c->pc - base;
	if (off >= lim || (off & 3) || (mark && mark[off / 4]))
		return NULL;
	const DIssue *u = t->issue_at[off / 4];
	return u ? u : shared_issue(t, c->pc);
}

/* The workers' steady state, entered after a cached worker issue that left
 * its worker running (so some worker runs, and a supervisor in sync stays
 * there): from the next cycle on, what tile_run and issuer() do, cycle by
 * cycle in the same order, with the loop's state in locals. The slot's
 * running worker, ready, issues from the issue cache (at a fused bundle
 * run_fused goes on, else the halves run); a cycle nobody issues in is stepped
 * over, and after a whole turn of them (CHIP_SLOTS in a row) next_busy_issue
 * jumps to the next one anyone issues in. Only on a fast path (the caller
 * checks). Back to tile_run at max_cycles, at a cycle the supervisor may
 * issue in, at an issue the cache does not have or does not allow here,
 * at a marked word (a breakpoint or log mark of the observer, set between
 * runs), after a fault and after an issue that leaves its worker not
 * running (an exit); a write to code clears issue_at, a watch makes the
 * fused and fast forms decline or report. */
static uint64_t next_busy_issue(const Tile *t);

static __attribute__((noinline)) void
run_workers(Tile *t, uint64_t max_cycles)
{
	const uint32_t base = t->chip->mem_base;
	const uint32_t lim = t->chip->exec_end - base;
	const uint8_t *mark = t->obs ? t->obs->flag : NULL;
	uint64_t cycle = t->cycle;
	unsigned slot = (unsigned)(cycle % CHIP_SLOTS);
	unsigned idle = 0; /* cycles in a row nobody issued in */
	Exec e;            /* for the halves: the fields they set, each issue */
	e.tile = t;
	while (cycle < max_cycles) {
		int w = slot_issuer(t, cycle, slot);
		if (!w) {
			/* issuer(): a free slot is the supervisor's (in
			 * sync it stays there while workers run) */
			if (sup_takes_slot(t, cycle, slot))
				break;
			if (++idle < CHIP_SLOTS) {
				cycle++;
				slot = slot + 1 == CHIP_SLOTS ? 0 : slot + 1;
				continue;
			}
			t->cycle = cycle;
			uint64_t next = next_busy_issue(t);
			cycle = next < max_cycles ? next : max_cycles;
			slot = (unsigned)(cycle % CHIP_SLOTS);
			idle = 0;
			continue;
		}
		Context *c = &t->ctx[w];
		const DIssue *u = loop_issue(t, c, base, lim, mark);
		if (!u)
			break;
		idle = 0;
		if (u->ok & ISSUE_LOOP) { /* on while its bundles come */
			t->cycle = cycle;
			run_fused(t, max_cycles);
			if (t->faulted)
				return;
			cycle = t->cycle;
			slot = (unsigned)(cycle % CHIP_SLOTS);
			continue;
		}
		if (!(u->ok & ISSUE_WORKER) ||
		    (!(u->ok & ISSUE_IN_RPT) && in_rpt_body(c, c->pc)))
			break;
		uint32_t next_pc;
		t->cycle = cycle; /* the semantics and a fault's report */
		if (!halves(&e, t, c, w, u, &next_pc)) {
			cycle++;
			break; /* faulted: tile_run reports it */
		}
		next_pc = worker_issued(c, u, cycle, next_pc);
		t->bundles++;
		t->worker_issues++;
		cycle++;
		slot = slot + 1 == CHIP_SLOTS ? 0 : slot + 1;
		if (c->state != CTXS_RUN) { /* an exit: tile_run goes on */
			if (c->state == CTXS_SYNC)
				c->pc = next_pc;
			break;
		}
		c->pc = next_pc;
	}
	t->cycle = cycle;
}

/* The supervisor's code while no worker runs, entered after its issue in
 * tile_run when none ran: from the next cycle on, what tile_run, issuer()
 * and issue() do, cycle by cycle in the same order, with the loop's state
 * in locals and one Exec for all its issues. With no worker running and no
 * slot owned, every cycle from sup_ready on is the supervisor's, and
 * nothing but its own issues changes the tile: each issues from the issue
 * cache once its operands are out of the pipeline (mready), and sup_ready
 * (its hazards, a send, a delay) moves the cycle on. Only on a fast path
 * (the caller checks). Back to tile_run at max_cycles, at an issue the cache
 * does not have or does not allow the supervisor, at one that starts
 * workers (run, runall: tile_run issues it), at a marked word (a breakpoint
 * or log mark of the observer, set between runs: issue() reports it), after
 * a fault and after an issue that leaves the supervisor not running (a
 * sync, the return to the host); a write to code clears issue_at. */
static __attribute__((noinline)) void
run_supervisor(Tile *t, uint64_t max_cycles)
{
	Context *c = &t->ctx[0];
	/* a slot a worker owns is nobody's while it does not run; rpt is a
	 * worker's instruction, so the supervisor's rpt state (the host's,
	 * or a test's) stays as it is here */
	for (int s = 0; s < CHIP_SLOTS; s++)
		if (t->slot_worker[s])
			return;
	if (c->rpt_count)
		return;
	const uint32_t base = t->chip->mem_base;
	const uint32_t lim = t->chip->exec_end - base;
	const uint8_t *mark = t->obs ? t->obs->flag : NULL;
	uint64_t cycle = t->cycle;
	Exec e; /* the fields the issues set, each issue; commit clears nwr */
	e.tile = t;
	e.c = c;
	e.ctx = 0;
	e.nwr = 0;
	while (cycle < max_cycles) {
		if (cycle < t->sup_ready) { /* a send, delay or hazard */
			cycle = t->sup_ready < max_cycles ? t->sup_ready
			                                  : max_cycles;
			continue;
		}
		const DIssue *u = loop_issue(t, c, base, lim, mark);
		if (!u)
			break;
		if ((u->ok & (ISSUE_SUPERVISOR | ISSUE_STARTS)) !=
		    ISSUE_SUPERVISOR)
			break;
		t->cycle = cycle; /* the semantics and a fault's report */
		t->nacc = 0;
		/* the values it reads may still be in the pipeline: the
		 * cycle passes, and the next waits for them */
		uint64_t ready = sim_sup_operands_ready(t, u->reads);
		if (ready > cycle) {
			t->sup_ready = ready;
			cycle++;
			continue;
		}
		const DInsn *i0 = u->i0, *i1 = u->i1;
		uint32_t fall_through = c->pc + u->len;
		e.pc = c->pc;
		e.next_pc = fall_through;
		e.in = &i0->in;
		e.d = i0->d;
		i0->fast(&e);
		if (!t->faulted && i1) {
			e.in = &i1->in;
			e.d = i1->d;
			i1->fast(&e);
		}
		cycle++;
		if (t->faulted) { /* tile_run reports it */
			issue_fault(t, c, u);
			break;
		}
		sup_pipeline(t, &e, u->hazard, e.next_pc != fall_through);
		commit(&e);
		t->bundles++;
		if (c->state == CTXS_RUN || c->state == CTXS_SYNC)
			c->pc = e.next_pc;
		if (c->pc == SIM_HOST_RETURN)
			c->state = CTXS_DONE; /* returned to the host */
		if (c->state != CTXS_RUN)
			break;
	}
	t->cycle = cycle;
}

int
tile_debug_exec(Tile *t, int ctx, uint32_t word, char *why, size_t len)
{
	Insn in;
	if (isa_decode(word, t->chip->arch, &in) < 0) {
		snprintf(why, len, "0x%08x is not a valid %s instruction", word,
		         t->chip->arch_name);
		return -1;
	}
	const InsnDesc *d = isa_row(in.row);
	/* CSR access is the debug interface's purpose; of the other system
	 * instructions (sync, send, run...) nothing says what they do here */
	int csr = !strcmp(d->mnemonic, "get") || !strcmp(d->mnemonic, "put") ||
	          !strcmp(d->mnemonic, "uget") || !strcmp(d->mnemonic, "uput");
	if ((d->flags & (F_CONTROL | F_WIDE)) ||
	    ((d->flags & F_SYSTEM) && !csr)) {
		snprintf(why, len,
		         "%s: the card model executes no control, system or "
		         "two-word instruction through the debug interface "
		         "but get, put, uget and uput",
		         d->mnemonic);
		return -1;
	}
	Fault saved = t->fault;
	int was_faulted = t->faulted;
	uint8_t etype = t->etype[ctx];
	t->faulted = 0;
	Context *c = &t->ctx[ctx];
	Exec e = {.tile = t,
	          .c = c,
	          .ctx = ctx,
	          .in = &in,
	          .d = d,
	          .pc = c->pc,
	          .next_pc = c->pc};
	t->nacc = 0;
	if (context_allows(&e, d))
		exec_for_row[in.row](&e);
	int bad = t->faulted;
	if (bad)
		snprintf(why, len, "%s", t->fault.cause);
	else
		commit(&e);
	t->fault = saved;
	t->faulted = was_faulted;
	t->etype[ctx] = etype;
	return bad ? -1 : 0;
}

int
tile_start_worker(Tile *t, int w, uint32_t entry, uint32_t vertex_base)
{
	Context *c = &t->ctx[w + 1];
	if (c->state == CTXS_RUN)
		return -1;
	c->state = CTXS_RUN;
	c->pc = entry;
	c->rpt_count = 0;
	c->vertex_base = vertex_base;
	c->worker_base = t->sup.worker_base[w];
	c->m[12] = c->worker_base; /* $mworker_base (isa.md 2.1) */
	c->m[13] = vertex_base;    /* $mvertex_base */
	c->fp_ctl = t->sup.fp_ictl;
	c->fp_sts = 0;
	c->fp_nfmt = t->sup.fp_infmt;
	c->fp_scl = t->sup.fp_iscl;
	c->ready = t->cycle;
	t->slot_worker[w] = w + 1;
	return 0;
}

int
tile_launch_worker(Tile *t, int w, uint32_t entry, uint32_t vertex_base)
{
	if (tile_start_worker(t, w, entry, vertex_base))
		return -1;
	t->ctx[w + 1].ready = t->cycle + chip_rule(t->chip, TIMING_RUNALL);
	return 0;
}

static int
workers_busy(const Tile *t)
{
	for (int i = 1; i < CHIP_CONTEXTS; i++)
		if (t->ctx[i].state == CTXS_RUN)
			return 1;
	return 0;
}

/* When a supervisor waiting in sync LOCAL may go on (isa.md 3.4). */
static uint64_t
sync_ready(const Tile *t)
{
	return t->last_exit + chip_rule(t->chip, TIMING_SYNC_LOCAL);
}

/* The context that issues in this cycle, or -1. */
static int
issuer(Tile *t)
{
	int slot = (int)(t->cycle % CHIP_SLOTS);
	int w = t->slot_worker[slot];
	if (w)
		return t->ctx[w].state == CTXS_RUN &&
		               t->cycle >= t->ctx[w].ready
		           ? w
		           : -1;
	Context *s = &t->ctx[0];
	if (s->state == CTXS_SYNC && t->wait.zone < 0 && !workers_busy(t) &&
	    t->cycle >= sync_ready(t)) {
		s->state = CTXS_RUN;
		if (t->compute_start) /* runall .. sync LOCAL */
			tile_trace(t, TR_COMPUTE, t->compute_start - 1,
			           t->cycle, 0);
		t->compute_start = 0;
	}
	if (s->state != CTXS_RUN || t->cycle < t->sup_ready)
		return -1;
	return 0;
}

/* While some worker runs, the first cycle after this one in which a context
 * may issue, by issuer()'s rules: a running worker at a turn of its slot
 * from its ready cycle on, the supervisor (when it runs) in a slot no
 * worker owns from sup_ready on. Until then nothing changes: only an issue
 * (a worker's exit) ends the workers' run, and with them running a
 * supervisor in sync stays there. */
static uint64_t
next_busy_issue(const Tile *t)
{
	uint64_t from = t->cycle + 1, best = UINT64_MAX;
	/* the slot of from, and of a later r, each by one division */
	unsigned from_slot = (unsigned)(from % CHIP_SLOTS);
	unsigned free = 0; /* slots no worker owns */
	for (unsigned s = 0; s < CHIP_SLOTS; s++) {
		int w = t->slot_worker[s];
		if (!w) {
			free |= 1u << s;
			continue;
		}
		if (t->ctx[w].state != CTXS_RUN)
			continue; /* issuer() gives its slot to nobody */
		uint64_t r = from;
		unsigned rs = from_slot;
		if (t->ctx[w].ready > from) {
			r = t->ctx[w].ready;
			rs = (unsigned)(r % CHIP_SLOTS);
		}
		/* the first cycle from r on in slot s */
		uint64_t c = r + (s >= rs ? s - rs : s + CHIP_SLOTS - rs);
		if (c < best)
			best = c;
	}
	if (free && t->ctx[0].state == CTXS_RUN) {
		uint64_t r = from;
		unsigned rs = from_slot;
		if (t->sup_ready > from) {
			r = t->sup_ready;
			rs = (unsigned)(r % CHIP_SLOTS);
		}
		for (uint64_t c = r; c < r + CHIP_SLOTS && c < best; c++) {
			if (free & (1u << rs)) {
				best = c;
				break;
			}
			rs = rs + 1 == CHIP_SLOTS ? 0 : rs + 1;
		}
	}
	return best;
}

void
tile_trace_event(Tile *t, TraceKind kind, uint64_t start, uint64_t end,
                 uint32_t arg)
{
	if (t->obs)
		sim_observe_event(t, kind, start, end, arg);
	if (!t->trace_on)
		return;
	GROW(t->trace, t->ntrace, t->captrace);
	t->trace[t->ntrace++] = (TraceEvent){start, end, (uint8_t)kind, arg};
}

RunStatus
tile_run(Tile *t, uint64_t max_cycles)
{
	t->cwei_gen++; /* cwei may have been written since the last run */
	while (t->cycle < max_cycles) {
		if (t->faulted)
			return RUN_FAULT;
		/* The common case first: the slot's running worker issues.
		 * Then some worker is busy, so none of the checks below
		 * applies, and issuer() would pick that worker. */
		int w = t->slot_worker[t->cycle % CHIP_SLOTS];
		if (w && t->ctx[w].state == CTXS_RUN) {
			if (t->cycle >= t->ctx[w].ready) {
				if (!issue_cached_worker(t, w)) {
					issue(t, w);
					t->cycle++;
				} else if (t->ctx[w].state == CTXS_RUN &&
				           !t->faulted) {
					t->cycle++;
					run_workers(t, max_cycles);
				} else {
					t->cycle++;
				}
			} else if (sim_path == SIM_PLAIN) {
				t->cycle++;
			} else { /* waits (a multi-turn instruction): on to
				    the next cycle anyone issues in */
				uint64_t next = next_busy_issue(t);
				t->cycle =
				    next < max_cycles ? next : max_cycles;
			}
			continue;
		}
		int busy = workers_busy(t);
		CtxState sup = t->ctx[0].state;
		if (!busy && sup == CTXS_SYNC && t->wait.zone >= 0)
			return RUN_SYNC; /* the chip decides when it goes on */
		if (!busy && sup != CTXS_RUN) {
			if (sup != CTXS_SYNC)
				return RUN_DONE;
			/* Only the supervisor's sync is pending: jump ahead
			 * (no further than the limit). */
			if (t->cycle < sync_ready(t)) {
				t->cycle = sync_ready(t) < max_cycles
				               ? sync_ready(t)
				               : max_cycles;
				continue;
			}
		}
		if (!busy && sup == CTXS_RUN && t->cycle < t->sup_ready) {
			/* send, delay or a pipeline hazard in progress */
			t->cycle = t->sup_ready < max_cycles ? t->sup_ready
			                                     : max_cycles;
			continue;
		}
		int ci = issuer(t);
		if (ci >= 0) {
			issue(t, ci);
			t->cycle++;
			/* on while it runs alone */
			if (!ci && !busy && sim_path != SIM_PLAIN &&
			    t->ctx[0].state == CTXS_RUN && !t->faulted)
				run_supervisor(t, max_cycles);
		} else if (busy && sim_path != SIM_PLAIN) {
			/* a dead cycle while workers run (issuer() changed
			 * nothing): on to the next one anyone issues in */
			uint64_t next = next_busy_issue(t);
			t->cycle = next < max_cycles ? next : max_cycles;
		} else {
			t->cycle++;
		}
	}
	return t->faulted ? RUN_FAULT : RUN_TIMEOUT;
}

/* The words of one instruction or bundle and their disassembly:
 * " [0x... 0x...: { a ; b }]". */
static void
format_words(const Tile *t, const uint32_t *word, int nwords, char *buf,
             size_t len)
{
	Insn wide;
	buf[0] = 0;
	if (nwords == 2 &&
	    isa_decode_wide(word[0], word[1], t->chip->arch, &wide) >= 0 &&
	    (isa_row(wide.row)->flags & F_WIDE)) {
		char text[120];
		disasm_insn(&wide, t->chip->arch, text, sizeof text);
		snprintf(buf, len, " [0x%08x 0x%08x: %s]", word[0], word[1],
		         text);
	} else if (nwords) {
		char text[2][80];

		for (int i = 0; i < nwords; i++) {
			Insn in;
			if (isa_decode(word[i], t->chip->arch, &in) < 0 ||
			    disasm_insn(&in, t->chip->arch, text[i],
			                sizeof text[i]) < 0)
				snprintf(text[i], sizeof text[i],
				         ".word 0x%08x", word[i]);
		}
		if (nwords == 1)
			snprintf(buf, len, " [0x%08x: %s]", word[0], text[0]);
		else
			snprintf(buf, len, " [0x%08x 0x%08x: { %s ; %s }]",
			         word[0], word[1], text[0], text[1]);
	}
}

static void
context_name(int ctx, char *buf, size_t len)
{
	if (ctx == 0)
		snprintf(buf, len, "supervisor");
	else
		snprintf(buf, len, "worker %d", ctx - 1);
}

void
tile_format_fault(const Tile *t, char *buf, size_t len)
{
	const Fault *f = &t->fault;
	char who[32], words[200];
	context_name(f->ctx, who, sizeof who);
	format_words(t, f->word, f->nwords, words, sizeof words);
	snprintf(buf, len, "tile %u, %s, pc 0x%05x%s, cycle %llu: %s: %s",
	         t->id, who, f->pc, words, (unsigned long long)f->cycle,
	         fault_type_name(f->type), f->cause);
}

void
tile_format_pc(const Tile *t, int ctx, uint32_t pc, char *buf, size_t len)
{
	const Chip *c = t->chip;
	char who[32], words[200] = "";
	uint32_t w[2];
	int n = 0;
	context_name(ctx, who, sizeof who);
	if (pc % 4 == 0 && pc >= c->mem_base && pc + 4 <= c->mem_end) {
		w[n++] = mem_word(t, pc);
		Insn in;
		int wide = isa_decode(w[0], c->arch, &in) >= 0 &&
		           (isa_row(in.row)->flags & F_WIDE);
		if ((wide || w[0] >> 31) && pc + 8 <= c->mem_end)
			w[n++] = mem_word(t, pc + 4);
	}
	format_words(t, w, n, words, sizeof words);
	snprintf(buf, len, "%s, pc 0x%05x%s", who, pc, words);
}

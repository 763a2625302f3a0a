/*
 * exec_ctl.c - control and system instructions: branches, calls, rpt,
 * worker launch and exit, sync, CSR access, traps.
 *
 * These are the instructions that change who issues and where, so they work
 * closely with tile.c: a branch sets e->next_pc; run/runall claim issue slots;
 * exit frees one; sync parks the supervisor until tile.c's issuer lets it go.
 * Exchange instructions (send, sans, delay) need the chip model and fault
 * here with a message that says so.
 */
#include <string.h>

#include "../util/util.h"
#include "sim.h"

/* Branches: targets are byte addresses (the table scales word fields).
 * A target no fetch can take (outside code memory, not 4-byte aligned)
 * faults at the branch, so that the report shows the branch, its pc and
 * the target; a fault at the fetch would show the target only. The
 * supervisor's return to the host (SIM_HOST_RETURN) is the exception. */
static void
jump(Exec *e, uint32_t target)
{
	const Chip *c = e->tile->chip;
	if ((target < c->mem_base || target + 4 > c->exec_end || target % 4) &&
	    !(target == SIM_HOST_RETURN && e->ctx == 0)) {
		sim_fault(
		    e, FAULT_INVALID_PC, target,
		    "%s to 0x%05x: code must lie in 0x%05x..0x%05x and be "
		    "4-byte aligned",
		    e->d->mnemonic, target, c->mem_base, c->exec_end);
		return;
	}
	e->next_pc = target;
}

static void
branch_if(Exec *e, int cond)
{
	if (cond)
		jump(e, (uint32_t)e->in->op[1]);
}

void
exec_bri(Exec *e)
{
	jump(e, (uint32_t)e->in->op[0]);
}

void
exec_br(Exec *e)
{
	jump(e, sim_src(e, 0));
}

void
exec_brz(Exec *e)
{
	branch_if(e, sim_src(e, 0) == 0);
}

void
exec_brnz(Exec *e)
{
	branch_if(e, sim_src(e, 0) != 0);
}

void
exec_brpos(Exec *e)
{
	branch_if(e, (int32_t)sim_src(e, 0) > 0);
}

void
exec_brneg(Exec *e)
{
	branch_if(e, (int32_t)sim_src(e, 0) < 0);
}

/* brnzdec: if the register is non-zero, decrement it and branch. */
void
exec_brnzdec(Exec *e)
{
	uint32_t v = sim_src(e, 0);
	if (v) {
		sim_dst(e, 0, v - 1);
		jump(e, (uint32_t)e->in->op[1]);
	}
}

/* call $link, target: the link register gets the address after this
 * instruction or bundle. */
void
exec_call(Exec *e)
{
	sim_dst(e, 0, e->next_pc);
	jump(e, (uint32_t)e->in->op[1]);
}

/*
 * rpt count, size: the next size + 1 bundles repeat `count` times (count is
 * 16 bits on ipu2/ipu21, isa.md 3.3). The body starts at the next 8-byte
 * bundle; a count of 0 skips it. tile.c loops at the end of the body.
 */
void
exec_rpt(Exec *e)
{
	uint32_t count = sim_src(e, 0) & 0xffff;
	uint32_t first = e->next_pc;
	uint32_t end = first + 8 * (uint32_t)e->in->op[1];
	if (first % 8) {
		sim_fault(e, FAULT_INVALID_PC, first,
		          "rpt body at 0x%05x is not 8-byte aligned", first);
		return;
	}
	if (count == 0) {
		e->next_pc = end + 8;
		return;
	}
	e->c->rpt_count = count;
	e->c->rpt_first = first;
	e->c->rpt_end = end;
}

/* For the trace: workers run from here until the supervisor's sync LOCAL
 * (0 = no compute step open). */
static void
mark_compute(Tile *t)
{
	if (!t->compute_start)
		t->compute_start = t->cycle + 1;
}

/* Worker launch (isa.md 3.4). The vertex base register is used as an
 * absolute address plus the scaled immediate, as poplibs uses it (DECISION:
 * the ISA text calls it relative to the memory base). */

static int
entry_ok(Exec *e, uint32_t entry, uint32_t vbase)
{
	const Chip *c = e->tile->chip;
	if (entry % 4 || entry < c->mem_base || entry >= c->exec_end) {
		sim_fault(e, FAULT_INVALID_PC, entry,
		          "worker entry 0x%05x is not executable", entry);
		return 0;
	}
	if (vbase % 4) {
		sim_fault(e, FAULT_INVALID_ADDR, vbase,
		          "vertex base 0x%05x is not 4-byte aligned", vbase);
		return 0;
	}
	return 1;
}

void
exec_run(Exec *e)
{
	uint32_t entry = sim_src(e, 0);
	uint32_t vbase = sim_src(e, 1) + 4 * (uint32_t)e->in->op[2];
	if (!entry_ok(e, entry, vbase))
		return;
	for (int w = 0; w < CHIP_WORKERS; w++)
		if (e->tile->ctx[w + 1].state != CTXS_RUN) {
			tile_launch_worker(e->tile, w, entry, vbase);
			mark_compute(e->tile);
			return;
		}
	sim_fault(e, FAULT_EXERR, 0, "run: all six workers are running");
}

void
exec_runall(Exec *e)
{
	uint32_t entry = sim_src(e, 0), base = sim_src(e, 1);
	uint32_t step = 4 * (uint32_t)e->in->op[2];
	for (int w = 0; w < CHIP_WORKERS; w++)
		if (e->tile->ctx[w + 1].state == CTXS_RUN) {
			sim_fault(e, FAULT_EXERR, 0,
			          "runall while worker %d is running", w);
			return;
		}
	if (!entry_ok(e, entry, base) || !entry_ok(e, entry, base + step))
		return;
	for (int w = 0; w < CHIP_WORKERS; w++)
		tile_launch_worker(e->tile, w, entry,
		                   base + (uint32_t)w * step);
	mark_compute(e->tile);
}

/* Worker exit: the status (the named condition on the register) is ANDed
 * into the supervisor's local consensus $SSR.LC (DECISION, isa.md 3.4). */
static void
worker_exit(Exec *e, int status)
{
	Tile *t = e->tile;
	e->c->state = CTXS_IDLE;
	e->c->exit_status = status;
	t->lc_and &= status;
	t->slot_worker[e->ctx - 1] = 0;
	t->last_exit = t->cycle;
}

void
exec_exitz(Exec *e)
{
	worker_exit(e, sim_src(e, 0) == 0);
}

void
exec_exitnz(Exec *e)
{
	worker_exit(e, sim_src(e, 0) != 0);
}

void
exec_exitpos(Exec *e)
{
	worker_exit(e, (int32_t)sim_src(e, 0) > 0);
}

void
exec_exitneg(Exec *e)
{
	worker_exit(e, (int32_t)sim_src(e, 0) < 0);
}

/*
 * sync zone (isa.md 3.4). LOCAL (2) waits for this tile's workers. Every
 * other zone involves other tiles or the host: the chip model (chip.c)
 * decides when the supervisor goes on. A lone tile has no other zones.
 */
void
exec_sync(Exec *e)
{
	uint32_t zone = (uint32_t)e->in->op[0];
	Tile *t = e->tile;
	if (zone == SYNC_LOCAL) {
		e->c->state = CTXS_SYNC;
		return;
	}
	if (!t->cs) {
		sim_fault(e, FAULT_INVALID_OP, 0,
		          "sync %u: only the local zone (2) exists on a "
		          "single tile; other zones need the chip model",
		          zone);
		return;
	}
	for (int i = 1; i < CHIP_CONTEXTS; i++)
		if (t->ctx[i].state == CTXS_RUN) {
			sim_fault(e, FAULT_INVALID_OP, 0,
			          "sync %u while worker %d runs (sync the "
			          "local zone first)",
			          zone, i - 1);
			return;
		}
	e->c->state = CTXS_SYNC;
	t->wait.zone = (int)zone;
	t->wait.since = t->cycle;
	t->wait.pc = e->pc;
}

static void
needs_chip(Exec *e, const char *what)
{
	sim_fault(e, FAULT_INVALID_OP, 0,
	          "%s is an exchange instruction; a single tile has no "
	          "exchange (use the chip model)",
	          what);
}

/* The supervisor is busy for `events` cycles, this one included: the
 * exchange's event clock (ipu-stack.md 3.3). */
static void
occupy(Exec *e, uint64_t events)
{
	e->tile->sup_ready = e->tile->cycle + events;
}

/*
 * send words-1, word address, sctl (ipu-stack.md 3.2): items leave one per
 * cycle from $OUTGOING_BASE + 4 * address; sctl bits 1:0 choose the
 * direction (0: no packet, the events still pass), bit 2 makes the items
 * 64-bit (the pair's wires).
 */
/* $OUTGOING_BASE in SupervisorCsrs.exch */
enum { OUTGOING_BASE = CSR_OUTGOING_BASE - CSR_INCOMING_MUX };

/* Its semantics are not public (isa.md 9: "sync-and-send"? [unknown]), so
 * it is refused rather than guessed. */
void
exec_sans(Exec *e)
{
	if (!e->tile->cs) {
		needs_chip(e, "sans");
		return;
	}
	sim_fault(e, FAULT_INVALID_OP, 0,
	          "sans is not modelled: its semantics are not public "
	          "(isa.md section 9)");
}

/* delay n: n + 1 events (ipu-stack.md 3.2 stores events - 1). */
void
exec_delay(Exec *e)
{
	occupy(e, (uint64_t)e->in->op[0] + 1);
}

void
exec_trap(Exec *e)
{
	sim_fault(e, FAULT_PBRK0, 0, "trap %d", e->in->op[0]);
}

/* CSRs: indices from target/csrs.def (isa.h's CSR_<name>), fields from
 * isa.md 2.3. $PC, index 0, is common to both contexts. */

enum {
	/* the exchange CSRs, kept in SupervisorCsrs.exch */
	EXCH_FIRST = CSR_INCOMING_MUX,
	EXCH_LAST = CSR_EXCHANGE_ADJ,
	/* $CR bits */
	CR_LC_CLR = 1 << 0,
	CR_LC_SET = 1 << 1,
	CR_ZCWEI = 1 << 2,
};

static int
ipu21_only(Exec *e, int idx)
{
	if (e->tile->chip->arch == ARCH_IPU21)
		return 1;
	sim_fault(e, FAULT_INVALID_OP, 0,
	          "CSR 0x%02x exists only on ipu21 (C600)", idx);
	return 0;
}

static uint32_t
ctxt_sts(const Tile *t)
{
	/* 2 bits per context: 0 inactive, 1 active, 3 excepted */
	uint32_t v = 0;
	for (int i = 0; i < CHIP_CONTEXTS; i++) {
		CtxState s = t->ctx[i].state;
		uint32_t f = s == CTXS_FAULTED                   ? 3
		             : (s == CTXS_RUN || s == CTXS_SYNC) ? 1
		                                                 : 0;
		v |= f << (2 * i);
	}
	return v;
}

/* Read a lower-space CSR; returns 0 and faults on an unknown index. */
static int
csr_get(Exec *e, int idx, uint32_t *v)
{
	Tile *t = e->tile;
	Context *c = e->c;
	if (e->ctx == 0) {
		SupervisorCsrs *s = &t->sup;
		if (idx == CSR_PC)
			*v = e->pc;
		else if (idx == CSR_SSR)
			*v = (uint32_t)t->lc_and | (uint32_t)t->etype[0] << 4;
		else if (idx == CSR_CR)
			*v = s->cr;
		else if (idx == CSR_TILE_ID)
			*v = t->id;
		else if (idx == CSR_FP_ICTL)
			*v = s->fp_ictl;
		else if (idx >= CSR_WORKER0_BASE &&
		         idx < CSR_WORKER0_BASE + CHIP_WORKERS)
			*v = s->worker_base[idx - CSR_WORKER0_BASE];
		else if (idx == CSR_FP_INFMT && ipu21_only(e, idx))
			*v = s->fp_infmt;
		else if (idx == CSR_FP_ISCL && ipu21_only(e, idx))
			*v = s->fp_iscl;
		else if (idx == CSR_CCCSLOAD)
			*v = s->cccsload;
		else if (idx == CSR_SCOUNT_L)
			*v = (uint32_t)t->cycle;
		else if (idx == CSR_SCOUNT_U)
			*v = (uint32_t)(t->cycle >> 32);
		else if (idx == CSR_SDBG_DATA)
			*v = s->dbg_data;
		else if (idx == CSR_CTXT_STS)
			*v = ctxt_sts(t);
		else if (idx >= EXCH_FIRST && idx <= EXCH_LAST)
			*v = s->exch[idx - EXCH_FIRST];
		else
			goto bad;
		return !t->faulted;
	}
	switch (idx) {
	case CSR_PC:
		*v = e->pc;
		break;
	case CSR_WSR:
		/* CTXTID_M1 [2:0], ETYPE [7:4] */
		*v = (uint32_t)(e->ctx - 1) | (uint32_t)t->etype[e->ctx] << 4;
		break;
	case CSR_VERTEX_BASE:
		*v = c->vertex_base;
		break;
	case CSR_WORKER_BASE:
		*v = c->worker_base;
		break;
	case CSR_REPEAT_COUNT:
		*v = c->rpt_count;
		break;
	case CSR_REPEAT_FIRST:
		*v = c->rpt_first;
		break;
	case CSR_REPEAT_END:
		*v = c->rpt_end;
		break;
	case CSR_COUNT_L:
		*v = (uint32_t)t->cycle;
		break;
	case CSR_COUNT_U:
		*v = (uint32_t)(t->cycle >> 32);
		break;
	case CSR_DBG_DATA:
		*v = c->dbg_data;
		break;
	default:
		goto bad;
	}
	return 1;
bad:
	sim_fault(e, FAULT_INVALID_OP, 0, "get: no %s CSR 0x%02x",
	          e->ctx ? "worker" : "supervisor", idx);
	return 0;
}

/* Receive-side CSRs become controls in the tile's exchange log, effective
 * a cycle after the put, the mux after its switching delay (isa.md 9). */
static void
exchange_csr(Exec *e, int idx, uint32_t v)
{
	static const struct {
		int idx;
		XControlKind kind;
	} map[] = {
	    {CSR_INCOMING_MUX, XC_MUX},       {CSR_INCOMING_DELTA, XC_SIZE},
	    {CSR_INCOMING_FORMAT, XC_FORMAT}, {CSR_INCOMING_BASE, XC_BASE},
	    {CSR_INCOMING_SINIT, XC_PTR},     {CSR_INCOMING_DCOUNT, XC_DCOUNT},
	};
	Tile *t = e->tile;
	if (!t->cs)
		return;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (map[i].idx == idx) {
			uint64_t at = t->cycle + 1;
			if (map[i].kind == XC_MUX)
				at = t->cycle +
				     chip_rule(t->chip, TIMING_MUX_SWITCH);
			xch_control(t, map[i].kind, at, v, 0);
		}
}

static void
csr_put(Exec *e, int idx, uint32_t v)
{
	Tile *t = e->tile;
	if (e->ctx == 0) {
		SupervisorCsrs *s = &t->sup;
		if (idx == CSR_CR) {
			if (v & CR_LC_CLR)
				t->lc_and = 0;
			if (v & CR_LC_SET)
				t->lc_and = 1;
			if (v & CR_ZCWEI) {
				memset(t->cwei, 0, sizeof t->cwei);
				t->cwei_gen++;
			}
			s->cr = v;
		} else if (idx == CSR_FP_ICTL)
			s->fp_ictl = v;
		else if (idx >= CSR_WORKER0_BASE &&
		         idx < CSR_WORKER0_BASE + CHIP_WORKERS)
			s->worker_base[idx - CSR_WORKER0_BASE] = v & 0x1fffff;
		else if (idx == CSR_FP_INFMT && ipu21_only(e, idx))
			s->fp_infmt = v;
		else if (idx == CSR_FP_ISCL && ipu21_only(e, idx))
			s->fp_iscl = v;
		else if (idx == CSR_CCCSLOAD)
			s->cccsload = v & 0x1fffff;
		else if (idx == CSR_SDBG_DATA)
			s->dbg_data = v;
		else if (idx >= EXCH_FIRST && idx <= EXCH_LAST) {
			s->exch[idx - EXCH_FIRST] = v;
			exchange_csr(e, idx, v);
		} else if (!t->faulted)
			sim_fault(e, FAULT_INVALID_OP, 0,
			          "put: no writable supervisor CSR 0x%02x",
			          idx);
		return;
	}
	if (idx == CSR_DBG_DATA)
		e->c->dbg_data = v;
	else
		sim_fault(e, FAULT_INVALID_OP, 0,
		          "put: no writable worker CSR 0x%02x", idx);
}

void
exec_get(Exec *e)
{
	uint32_t v;
	if (csr_get(e, e->in->op[1], &v))
		sim_dst(e, 0, v);
}

void
exec_put(Exec *e)
{
	csr_put(e, e->in->op[0], sim_src(e, 1));
}

/* Worker upper-space CSRs (uget/uput, isa.md 2.3): $FP_CLR's fields. */
enum {
	FP_CLR_FLAGS = 0x7, /* INV, DIV0, OFLO */
	FP_CLR_ZAACC = 1 << 3,
};

/* PRNG_0_0, _0_1, _1_0, _1_1: the low and high words of prng[0], prng[1]. */
static uint32_t
prng_get(const Context *c, int idx)
{
	int k = idx - CSR_PRNG_0_0;
	return (uint32_t)(c->prng[k / 2] >> (32 * (k % 2)));
}

static void
prng_set(Context *c, int idx, uint32_t v)
{
	int k = idx - CSR_PRNG_0_0, shift = 32 * (k % 2);
	c->prng[k / 2] =
	    (c->prng[k / 2] & ~(0xffffffffull << shift)) | (uint64_t)v << shift;
}

void
exec_uget(Exec *e)
{
	Context *c = e->c;
	int idx = e->in->op[1];
	uint32_t v;
	if (idx == CSR_FP_STS)
		v = c->fp_sts;
	else if (idx == CSR_FP_CTL)
		v = c->fp_ctl;
	else if (idx >= CSR_PRNG_0_0 && idx <= CSR_PRNG_1_1)
		v = prng_get(c, idx);
	else if (idx == CSR_TAS)
		v = c->tas;
	else if (idx == CSR_FP_NFMT && ipu21_only(e, 0x100 + idx))
		v = c->fp_nfmt;
	else if (idx == CSR_FP_SCL && ipu21_only(e, 0x100 + idx))
		v = c->fp_scl;
	else {
		if (!e->tile->faulted)
			sim_fault(e, FAULT_INVALID_OP, 0,
			          "uget: no readable CSR 0x%03x", 0x100 + idx);
		return;
	}
	sim_dst(e, 0, v);
}

void
exec_uput(Exec *e)
{
	Context *c = e->c;
	int idx = e->in->op[0];
	uint32_t v = sim_src(e, 1);
	if (idx == CSR_FP_STS)
		c->fp_sts = v & FP_CLR_FLAGS;
	else if (idx == CSR_FP_CLR) {
		c->fp_sts &= ~(v & FP_CLR_FLAGS);
		if (v & FP_CLR_ZAACC) {
			memset(c->aacc, 0, sizeof c->aacc);
			sim_amp_clear(c);
		}
	} else if (idx == CSR_FP_CTL)
		c->fp_ctl = v;
	else if (idx >= CSR_PRNG_0_0 && idx <= CSR_PRNG_1_1)
		prng_set(c, idx, v);
	else if (idx == CSR_PRNG_SEED)
		sim_prng_seed(c, v);
	else if (idx == CSR_TAS)
		c->tas = v;
	else if (idx == CSR_FP_NFMT && ipu21_only(e, 0x100 + idx))
		c->fp_nfmt = v;
	else if (idx == CSR_FP_SCL && ipu21_only(e, 0x100 + idx))
		c->fp_scl = v;
	else if (!e->tile->faulted)
		sim_fault(e, FAULT_INVALID_OP, 0,
		          "uput: no writable CSR 0x%03x", 0x100 + idx);
}

/*
 * The timed exchange forms of ipu-stack.md 3.2. Count fields hold events-1
 * (or words-1). Controls carry a selector: DECISION, bit 0 chooses this
 * tile (0) or its pair partner (1), which ipu-stack.md 3.3 reports as "the
 * early member of a receiving pair owns the XPIC stream". A PIC value is
 * the word address of the incoming pointer; an XPIC value holds the mux
 * source in bits 10..0 and $INCOMING_FORMAT in bits 12..11 (DECISION).
 */

/* An XPIC issued at `at` selects the words written from M cycles later
 * on (target/route.c): it takes effect then, in the frame of the
 * receiver's writes. The partner is in the same row, so has the same M. */
static void
xpic(Exec *e, uint64_t at, uint32_t sel, uint32_t value)
{
	Tile *t = e->tile;
	at += chip_xpic_cycles(t->chip, t->id);
	xch_control(t, XC_MUX, at, value & XPIC_SOURCE, sel & 1);
	xch_control(t, XC_FORMAT, at, (value >> XPIC_FORMAT_SHIFT) & 3,
	            sel & 1);
}

static void
pic(Exec *e, uint64_t at, uint32_t sel, uint32_t value)
{
	xch_control(e->tile, XC_PTR, at, 4 * value, sel & 1);
}

/* Send n items continuing the outgoing stream (sendoff, sendpic). */
static void
stream_send(Exec *e, uint32_t addr, uint32_t n, uint32_t sctl)
{
	Tile *t = e->tile;
	uint32_t item = sctl & SCTL_64 ? 8 : 4;
	if ((sctl & SCTL_DIR) && xch_send(e, addr, n, item, sctl & SCTL_DIR))
		return;
	t->x.out_ptr = addr + n * item;
	t->x.out_sctl = sctl;
	t->x.out_open = 1;
	if (sctl & SCTL_DIR)
		tile_trace(t, TR_SEND, t->cycle, t->cycle + n, n * item);
	occupy(e, n);
}

/* send words-1, word address, sctl: opens the stream at the address. */
void
exec_send(Exec *e)
{
	Tile *t = e->tile;
	if (!t->cs) {
		needs_chip(e, "send");
		return;
	}
	stream_send(e, t->sup.exch[OUTGOING_BASE] + 4 * (uint32_t)e->in->op[1],
	            (uint32_t)e->in->op[0] + 1, (uint32_t)e->in->op[2]);
}

static int
stream_open(Exec *e, const char *what)
{
	if (e->tile->x.out_open)
		return 1;
	sim_fault(e, FAULT_INVALID_OP, 0,
	          "%s continues the outgoing stream, but no send has "
	          "opened one",
	          what);
	return 0;
}

/* delaypic events-1, sel, pic: the control at the last event. */
void
exec_delaypic(Exec *e)
{
	if (!e->tile->cs) {
		needs_chip(e, "delaypic");
		return;
	}
	uint64_t events = (uint64_t)e->in->op[0] + 1;
	pic(e, e->tile->cycle + events - 1, (uint32_t)e->in->op[1],
	    (uint32_t)e->in->op[2]);
	occupy(e, events);
}

void
exec_delayxpic(Exec *e)
{
	if (!e->tile->cs) {
		needs_chip(e, "delayxpic");
		return;
	}
	uint64_t events = (uint64_t)e->in->op[0] + 1;
	xpic(e, e->tile->cycle + events - 1, (uint32_t)e->in->op[1],
	     (uint32_t)e->in->op[2]);
	occupy(e, events);
}

/* sendoff words-1, delta, sctl: the stream moves on by delta words. */
void
exec_sendoff(Exec *e)
{
	if (!e->tile->cs) {
		needs_chip(e, "sendoff");
		return;
	}
	if (!stream_open(e, "sendoff"))
		return;
	stream_send(e, e->tile->x.out_ptr + 4 * (uint32_t)e->in->op[1],
	            (uint32_t)e->in->op[0] + 1, (uint32_t)e->in->op[2]);
}

/* sendpic words-1, sel, value: a control at the first event (selector
 * bit 1: 0 = XPIC, 1 = PIC), then the stream goes on as it was. */
void
exec_sendpic(Exec *e)
{
	if (!e->tile->cs) {
		needs_chip(e, "sendpic");
		return;
	}
	if (!stream_open(e, "sendpic"))
		return;
	uint32_t sel = (uint32_t)e->in->op[1], value = (uint32_t)e->in->op[2];
	if (sel & 2)
		pic(e, e->tile->cycle, sel, value);
	else
		xpic(e, e->tile->cycle, sel, value);
	stream_send(e, e->tile->x.out_ptr, (uint32_t)e->in->op[0] + 1,
	            e->tile->x.out_sctl);
}

/* sendpicp sel, words-1, address, sctl, xpic, pic: both controls at the
 * first event, and the stream restarts at the absolute address (sctl 0:
 * controls only, the events still pass). */
void
exec_sendpicp(Exec *e)
{
	Tile *t = e->tile;
	if (!t->cs) {
		needs_chip(e, "sendpicp");
		return;
	}
	uint32_t sel = (uint32_t)e->in->op[0];
	xpic(e, t->cycle, sel, (uint32_t)e->in->op[4]);
	pic(e, t->cycle, sel, (uint32_t)e->in->op[5]);
	stream_send(e, t->sup.exch[OUTGOING_BASE] + 4 * (uint32_t)e->in->op[2],
	            (uint32_t)e->in->op[1] + 1, (uint32_t)e->in->op[3]);
}

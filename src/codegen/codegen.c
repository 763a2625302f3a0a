/*
 * codegen.c - each tile's supervisor program, encoded through the
 * instruction table (isa_encode), from the placed and scheduled Lowered.
 *
 * Exchange steps are straight-line and cycle-exact: after `sync 3` every
 * tile starts the phase in the same cycle, the supervisor issues one
 * instruction per cycle (no worker runs; the phase's instructions read no
 * register and branch nowhere, so no supervisor hazard delays them), and
 * the schedule's events are emitted in cycle order with `delay` in
 * between. A control at cycle c is
 * a delaypic/delayxpic whose last event is c; a send at cycle t is a
 * `send` issued at t (split into sends of at most 64 items, back to back;
 * 64-bit items for a transfer the scheduler made wide), in the directions
 * of its destinations along the spine (chip_route_dir).
 */
#include "codegen.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../asm/isa.h"

enum {
	REG_M1 = 1,
	REG_M2 = 2,
	REG_LR = 10,
	REG_MZERO = 15,
	/* items-1 in 6 bits (ipu-stack.md 3.2) */
	SEND_MAX_ITEMS = CODE_SEND_ITEMS,
	DELAYPIC_MAX = 127,   /* events-1 in 7 bits */
	DELAYXPIC_MAX = 4095, /* events-1 in 12 bits */
	DELAY_MAX = (1 << CODE_DELAY_LOG2) - 1,
};

typedef struct {
	uint8_t *buf; /* NULL: count only */
	uint32_t len, cap;
	uint32_t base; /* the code's address */
	uint32_t tile;
	uint32_t *step_at; /* NULL, or where each step starts */
	int err;
	Diag *d;
} Emit;

static void
emit(Emit *e, InsnRow row, int nops, ...)
{
	if (e->err)
		return;
	if (!e->buf) {
		e->len += 4;
		return;
	}
	Insn in = {.row = (int16_t)row, .nops = (uint8_t)nops};
	va_list ap;
	va_start(ap, nops);
	for (int i = 0; i < nops; i++)
		in.op[i] = va_arg(ap, int32_t);
	va_end(ap);
	uint32_t w;
	int r = isa_encode(&in, &w);
	if (r) {
		e->err = diag_set(e->d, IPU_ERANGE, NULL, 0, 0,
		                  "codegen: tile %u: operand %d of %s does not "
		                  "fit (value %d)",
		                  e->tile, -1 - r, isa_row(row)->variant,
		                  in.op[-1 - r]);
		return;
	}
	if (e->len + 4 > e->cap) {
		e->cap = e->cap ? 2 * e->cap : 1024;
		e->buf = xrealloc(e->buf, e->cap);
	}
	memcpy(e->buf + e->len, &w, 4);
	e->len += 4;
}

/* One event of a tile's exchange timeline. */
typedef enum { EV_PTR, EV_MUX, EV_SEND } EvKind; /* EV_MUX: value = source */
typedef struct {
	uint64_t cycle;
	uint8_t kind;
	uint32_t value; /* pointer or source address; mux: XPIC value */
	uint32_t items; /* sends */
	uint8_t sctl;   /* sends: directions (to every destination) and width */
} Event;

static int
cmp_event(const void *a, const void *b)
{
	const Event *x = a, *y = b;
	return x->cycle < y->cycle ? -1 : x->cycle > y->cycle;
}

static int
sorted(const Event *ev, int n)
{
	for (int i = 1; i < n; i++)
		if (ev[i].cycle < ev[i - 1].cycle)
			return 0;
	return 1;
}

/* The tile's events of step s in time order; *dcount = items it receives.
 * Its sends come in time order and so do its receive windows (xsched.c
 * appends both), so the two lists are merged; sorted whole otherwise. */
static Event *
tile_events(const Lowered *l, const Step *s, uint32_t tile, int *n,
            uint32_t *dcount)
{
	uint32_t m = s->first[tile + 1] - s->first[tile];
	Event *snd = xmalloc((3 * (size_t)m + 1) * sizeof *snd),
	      *rcv = xmalloc((3 * (size_t)m + 1) * sizeof *rcv);
	int ns = 0, nr = 0;
	*dcount = 0;
	/* where the incoming pointer stands after the last receive: it
	 * advances with every item written, so a receive that goes on where
	 * the last one ended needs no pointer control (decided on buffers and
	 * offsets, not addresses: codegen_size runs before placement) */
	BufRef next = {-1, 0};
	for (uint32_t i = s->first[tile]; i < s->first[tile + 1]; i++) {
		const Transfer *x = &s->xfer[s->by_tile[i].xfer];
		int32_t j = s->by_tile[i].dst;
		uint32_t fmt = x->wide ? 1u << XPIC_FORMAT_SHIFT : 0;
		if (j < 0) {
			uint32_t sctl = x->wide ? SCTL_64 : 0;
			for (uint32_t k = 0; k < x->ndst; k++)
				sctl |= chip_route_dir(l->chip, x->src_tile,
				                       x->dst_tile[k]);
			snd[ns++] =
			    (Event){x->start, EV_SEND, lower_addr(l, x->src),
			            xfer_items(x), (uint8_t)sctl};
			continue;
		}
		/* a piece joined to the previous one goes on where it ended,
		 * its mux still on the sender */
		if (!(x->join & XJOIN_PREV) &&
		    (x->dst[j].buf != next.buf ||
		     x->dst[j].offset != next.offset))
			rcv[nr++] = (Event){x->ptr_at[j], EV_PTR,
			                    lower_addr(l, x->dst[j]), 0, 0};
		next = (BufRef){x->dst[j].buf, x->dst[j].offset + 4 * x->words};
		if (!(x->join & XJOIN_PREV))
			rcv[nr++] = (Event){x->mux_at[j], EV_MUX,
			                    x->src_tile | fmt, 0, 0};
		if (!(x->join & XJOIN_NEXT))
			rcv[nr++] =
			    (Event){x->off_at[j], EV_MUX, MUX_NONE, 0, 0};
		*dcount += xfer_items(x);
	}
	Event *ev = xmalloc(((size_t)ns + nr + 1) * sizeof *ev);
	int k = 0;
	if (sorted(snd, ns) && sorted(rcv, nr)) {
		int a = 0, b = 0;
		while (a < ns || b < nr)
			ev[k++] =
			    b == nr || (a < ns && snd[a].cycle <= rcv[b].cycle)
			        ? snd[a++]
			        : rcv[b++];
	} else {
		memcpy(ev, snd, (size_t)ns * sizeof *ev);
		memcpy(ev + ns, rcv, (size_t)nr * sizeof *ev);
		k = ns + nr;
		qsort(ev, (size_t)k, sizeof *ev, cmp_event);
	}
	free(snd);
	free(rcv);
	/* a window that starts where the one before ended switches the mux
	 * in that one's off cycle: the switch alone (xsched.c) */
	int kept = 0;
	for (int i = 0; i < k; i++) {
		if (kept && ev[i].cycle == ev[kept - 1].cycle &&
		    ev[i].kind == EV_MUX && ev[kept - 1].kind == EV_MUX) {
			if (ev[i].value != MUX_NONE)
				ev[kept - 1] = ev[i];
			continue;
		}
		ev[kept++] = ev[i];
	}
	*n = kept;
	return ev;
}

/* Burn `events` cycles (>= 1) with delay instructions. */
static void
emit_delay(Emit *e, uint64_t events)
{
	while (events > 0) {
		uint64_t n =
		    events > (uint64_t)DELAY_MAX + 1 ? DELAY_MAX + 1 : events;
		emit(e, INSN_delay_mmmn_zi, 1, (int32_t)(n - 1));
		events -= n;
	}
}

/* A control whose last event is `at`, the timeline being at `cur`. */
static void
emit_control(Emit *e, uint64_t *cur, const Event *ev)
{
	uint64_t gap = ev->cycle - *cur;
	uint64_t max = ev->kind == EV_PTR ? DELAYPIC_MAX : DELAYXPIC_MAX;
	if (gap > max) {
		emit_delay(e, gap - max);
		gap = max;
	}
	if (ev->kind == EV_PTR)
		emit(e, INSN_delaypic_mmmn_zi, 3, (int32_t)gap, 0,
		     (int32_t)(ev->value / 4));
	else
		emit(e, INSN_delayxpic_mmmn_zi, 3, (int32_t)gap, 0,
		     (int32_t)ev->value);
	*cur = ev->cycle + 1;
}

/* The value a sendpic carries for a control, and its selector: bit 1
 * chooses the pointer (PIC) over the mux (XPIC); bit 0 this tile. */
static void
sendpic_control(const Event *c, int32_t *sel, int32_t *value)
{
	*sel = c->kind == EV_PTR ? 2 : 0;
	*value = (int32_t)(c->kind == EV_PTR ? c->value / 4 : c->value);
}

/*
 * A send at its cycle, with the controls that fall inside it: the items up
 * to a control go out with `send` (at most 64 a time, each restarting at
 * its address), and from the control on with `sendpic`, which continues
 * the stream and applies the control at its first item.
 */
static void
emit_send(Emit *e, uint64_t *cur, const Event *ev, const Event *inner,
          int ninner, uint32_t max_items)
{
	if (ev->cycle > *cur)
		emit_delay(e, ev->cycle - *cur);
	uint32_t addr = ev->value, done = 0;
	int k = 0;
	uint32_t item = ev->sctl & SCTL_64 ? 8 : 4;
	int32_t sctl = ev->sctl;
	while (done < ev->items) {
		uint64_t at = ev->cycle + done;
		const Event *c =
		    k < ninner && inner[k].cycle == at ? &inner[k] : NULL;
		uint32_t limit = ev->items - done;
		if (k + (c != NULL) < ninner) {
			uint64_t next = inner[k + (c != NULL)].cycle;
			limit = (uint32_t)(next - at);
		}
		uint32_t n = limit > max_items ? max_items : limit;
		if (c) {
			int32_t sel, value;
			sendpic_control(c, &sel, &value);
			emit(e, INSN_sendpic_mmmn_zi, 3, (int32_t)(n - 1), sel,
			     value);
			k++;
		} else {
			emit(e, INSN_send_mmmn_zi, 3, (int32_t)(n - 1),
			     (int32_t)((addr + item * done) / 4), sctl);
		}
		done += n;
	}
	*cur = ev->cycle + ev->items;
}

static void
emit_exchange(Emit *e, const Lowered *l, const Step *s, uint32_t tile)
{
	int n;
	uint32_t dcount;
	Event *ev = tile_events(l, s, tile, &n, &dcount);
	/* The count is ready before the sync and written right after it
	 * (a tile with words still due does not arrive at a sync); the CSR
	 * write holds the next issue back (docs/fidelity.md, sup-put) by the
	 * same on every tile, so the phase's cycles count from there: cycles
	 * 0..2 (XS_PREAMBLE) switch the mux off (it may still select the
	 * last source of the previous phase). What follows is straight-line
	 * code that reads no register and branches nowhere: no supervisor
	 * hazard changes its timing. */
	emit(e, INSN_setzi_mmmn_zi, 2, REG_M1, (int32_t)dcount);
	emit(e, INSN_sync_mmmn_zi, 1, SYNC_INTERNAL);
	emit(e, INSN_put_mmmn_zi, 2, CSR_INCOMING_DCOUNT, REG_M1);
	emit(e, INSN_delayxpic_mmmn_zi, 3, XS_PREAMBLE - 1, 0, MUX_NONE);
	uint64_t cur = XS_PREAMBLE;
	for (int i = 0; i < n; i++) {
		if (ev[i].cycle < cur) {
			e->err = diag_set(e->d, IPU_EINVAL, NULL, 0, 0,
			                  "codegen: tile %u, %s: two exchange "
			                  "events at cycle %llu",
			                  tile, s->what,
			                  (unsigned long long)ev[i].cycle);
			break;
		}
		if (ev[i].kind == EV_SEND) {
			/* the controls inside the send ride on sendpics */
			int k = i + 1;
			while (k < n && ev[k].cycle < ev[i].cycle + ev[i].items)
				k++;
			emit_send(e, &cur, &ev[i], &ev[i + 1], k - i - 1,
			          SEND_MAX_ITEMS);
			i = k - 1;
		} else {
			emit_control(e, &cur, &ev[i]);
		}
	}
	free(ev);
	/* wait until every expected word has landed ($INCOMING_DCOUNT = 0)
	 * before anything reads them (isa.md 9: sync RECV) */
	emit(e, INSN_sync_mmmn_zi, 1, SYNC_RECV);
}

static const KernelCall *
call_of(const Step *s, uint32_t tile)
{
	return s->call_of[tile] < 0 ? NULL : &s->call[s->call_of[tile]];
}

static void call_data(const Lowered *l, const KernelCall *c, TileCode *tc);

static void
emit_call(Emit *e, const Lowered *l, const KernelSyms *ks, const KernelCall *c,
          TileCode *tc)
{
	uint32_t args = l->buf[c->args_at].addr;
	emit(e, INSN_setzi_mmmn_zi, 2, 0, (int32_t)args);
	int64_t entry = ks ? ks->symbol(ks->ctx, c->kernel) : 0;
	if (e->buf && entry < 0) {
		e->err = diag_set(e->d, IPU_EINVAL, NULL, 0, 0,
		                  "codegen: no kernel named %s", c->kernel);
		return;
	}
	emit(e, INSN_call_mmmn_zi, 2, REG_LR, (int32_t)entry);
	call_data(l, c, tc);
}

/* Call c's argument block, as data of the tile's program. */
static void
call_data(const Lowered *l, const KernelCall *c, TileCode *tc)
{
	if (!tc)
		return;
	/* a block shared by calls (lower_share_args): written once */
	for (int i = 0; i < tc->ndata; i++)
		if (tc->data[i].buf == c->args_at)
			return;
	uint32_t args = l->buf[c->args_at].addr;
	uint32_t addr[CALL_MAX_REFS];
	for (int i = 0; i < c->nref; i++)
		addr[i] = lower_addr(l, c->ref[i]);
	DataSeg seg = {.addr = args, .len = c->args_bytes, .buf = c->args_at};
	seg.bytes = xcalloc(1, seg.len ? seg.len : 1);
	lower_call_args(c, addr, seg.bytes);
	GROW(tc->data, tc->ndata, tc->capdata);
	tc->data[tc->ndata++] = seg;
}

/*
 * The overlapped phase (docs/bench-gemm.md, "The third step"): a compute
 * step whose GEMM call runs its first P panels as codegen's own panel
 * blocks with five workers, beside the step's exchange, then six-worker
 * calls over the rest (gemm_rest):
 *   setup      $WORKER0..4_BASE = the five vertices, $CCCSLOAD = B (f8:
 *              $FP_INFMT, $FP_ISCL), before the opening sync
 *   opening    sync 3; put $INCOMING_DCOUNT; the mux off (XS_PREAMBLE)
 *   block 0    sync LOCAL; setzi $m1, entry; setzi $m2, A panel;
 *              32 ld128putcs; 5 x run $m1, $m2, 0
 *   then, from cycle 0 (the first slot 5 after block 0's runs, the frame
 *   of the windows and of the transfers' cycles), the tile's exchange
 *   events, each in 6-cycle supervisor blocks within its panel's window
 *   [open[p], close[p]), and block p at at[p] (a delay to it)
 *   closing    sync LOCAL; sync RECV
 *   rest       setzi $m0, its argument block; call, once or twice
 * Beside five workers every supervisor instruction issues in slot 5: a
 * send issues at a multiple of 6 and is split into sends of at most
 * xsched_send_max items (a multiple of 6, so that the next goes at once); a
 * control takes the block it acts in (a delaypic or delayxpic issued at
 * the block's start). An event that breaks these rules is an error (the
 * schedule's).
 */
enum {
	OVERLAP_BLOCK_INSNS = 40, /* a panel block: sync, 2 setzi, 32
	                             ld128putcs, 5 runs (emit_block) */
};

/* Delays of n events in all, n a multiple of 6 except maybe the last
 * (each delay but the last a multiple of 6, so that each issues in slot
 * 5 beside the workers). */
static void
emit_delay_beside(Emit *e, uint64_t n)
{
	const uint64_t most = (DELAY_MAX + 1) / XS_BLOCK * XS_BLOCK;
	while (n > 0) {
		uint64_t k = n > most ? most : n;
		emit(e, INSN_delay_mmmn_zi, 1, (int32_t)(k - 1));
		n -= k;
	}
}

static void
emit_block(Emit *e, const KernelSyms *ks, const GemmCall *g, uint32_t p)
{
	int zero;
	uint32_t a_panel;
	GemmRun run;
	gemm_panel(g, p, &zero, &a_panel);
	gemm_five_run(g, p, g->opt.five, &run);
	int64_t entry = ks ? ks->symbol(ks->ctx, run.worker) : 0;
	if (e->buf && entry < 0) {
		e->err = diag_set(e->d, IPU_EINVAL, NULL, 0, 0,
		                  "codegen: no kernel named %s", run.worker);
		return;
	}
	entry += run.offset;
	emit(e, INSN_sync_mmmn_zi, 1, SYNC_LOCAL);
	emit(e, INSN_setzi_mmmn_zi, 2, REG_M1, (int32_t)entry);
	emit(e, INSN_setzi_mmmn_zi, 2, REG_M2, (int32_t)a_panel);
	for (int i = 0; i < 32; i++)
		emit(e, INSN_ld128putcs_mmmn_zi, 1, 2 * i);
	for (int w = 0; w < 5; w++)
		emit(e, INSN_run_mmmn_zi, 3, REG_M1, REG_M2, 0);
}

static int
overlap_error(Emit *e, uint32_t tile, const Step *s, const char *what,
              uint64_t cycle)
{
	if (!e->err)
		e->err =
		    diag_set(e->d, IPU_EINVAL, NULL, 0, 0,
		             "codegen: tile %u, %s: the exchange event at "
		             "cycle %llu %s",
		             tile, s->what, (unsigned long long)cycle, what);
	return e->err;
}

/* The setup and opening of a phase beside five workers: the CSRs csr[i]
 * written with v[i] (every value set first, so that no write waits for
 * its value: sup-dep; sup_csr_setup), then the exchange's opening with
 * the incoming count dcount. */
static void
emit_opening_beside(Emit *e, const uint32_t *v, const uint32_t *csr,
                    uint32_t ncsr, uint32_t dcount)
{
	for (uint32_t i = 0; i < ncsr; i++)
		emit(e, INSN_setzi_mmmn_zi, 2, REG_M1 + (int)i, (int32_t)v[i]);
	emit(e, INSN_setzi_mmmn_zi, 2, REG_M1 + (int)ncsr, (int32_t)dcount);
	for (uint32_t i = 0; i < ncsr; i++)
		emit(e, INSN_put_mmmn_zi, 2, (int)csr[i], REG_M1 + (int)i);
	/* opening, as an exchange phase's */
	emit(e, INSN_sync_mmmn_zi, 1, SYNC_INTERNAL);
	emit(e, INSN_put_mmmn_zi, 2, CSR_INCOMING_DCOUNT, REG_M1 + (int)ncsr);
	emit(e, INSN_delayxpic_mmmn_zi, 3, XS_PREAMBLE - 1, 0, MUX_NONE);
}

/* The tile's exchange events ev[0 .. n - 1] of step s beside five
 * workers, from frame cycle *cur in panel *p's window: each in its
 * panel's window [open[p], close[p]), the next panel's block (g's)
 * emitted at at[p] when an event is past the window (codegen's rules
 * beside five workers, above). */
static void
emit_events_beside(Emit *e, const KernelSyms *ks, const GemmCall *g,
                   const Step *s, uint32_t tile, const Event *ev, int n,
                   const GemmWindows *w, uint32_t *pp, uint64_t *pcur)
{
	uint64_t cur = *pcur;
	uint32_t p = *pp;
	for (int i = 0; i < n && !e->err; i++) {
		int k = i + 1;
		uint64_t issue, end;
		if (ev[i].kind == EV_SEND) {
			while (k < n && ev[k].cycle < ev[i].cycle + ev[i].items)
				k++;
			issue = ev[i].cycle;
			end = issue + xsched_hold(XS_BLOCK, ev[i].items);
			if (issue % XS_BLOCK) {
				overlap_error(
				    e, tile, s,
				    "(a send) is not at a multiple of 6",
				    issue);
				break;
			}
			for (int j = i + 1; j < k; j++)
				if ((ev[j].cycle - issue) % XS_BLOCK) {
					overlap_error(
					    e, tile, s,
					    "(a control inside a send) "
					    "is not at a multiple of 6",
					    ev[j].cycle);
					break;
				}
		} else {
			issue = ev[i].cycle / XS_BLOCK * XS_BLOCK;
			end = issue + XS_BLOCK;
		}
		while (p < w->panels && issue >= w->close[p]) {
			if (p + 1 == w->panels || issue < w->open[p + 1]) {
				overlap_error(e, tile, s,
				              "is outside the panels' windows",
				              ev[i].cycle);
				break;
			}
			p++;
			emit_delay_beside(e, w->at[p] - cur);
			emit_block(e, ks, g, p);
			cur = w->open[p];
		}
		if (e->err)
			break;
		if (issue < cur || end > w->close[p]) {
			overlap_error(e, tile, s,
			              issue < cur ? "comes before the "
			                            "supervisor is free"
			                          : "ends past its window",
			              ev[i].cycle);
			break;
		}
		emit_delay_beside(e, issue - cur);
		cur = issue;
		if (ev[i].kind == EV_SEND) {
			emit_send(e, &cur, &ev[i], &ev[i + 1], k - i - 1,
			          xsched_send_max(XS_BLOCK));
			i = k - 1;
		} else {
			uint64_t at = issue;
			emit_control(e, &at, &ev[i]);
		}
		cur = end;
	}
	*pp = p;
	*pcur = cur;
}

/* A tile without the call of a step beside five workers (`what`'s) only
 * takes part in its syncs: it has no events (ev[0 .. n - 1], freed). */
static void
emit_syncs_beside(Emit *e, uint32_t tile, const Step *s, Event *ev, int n,
                  const char *what)
{
	char why[64];
	snprintf(why, sizeof why, "is on a tile without %s", what);
	if (n)
		overlap_error(e, tile, s, why, ev[0].cycle);
	emit(e, INSN_sync_mmmn_zi, 1, SYNC_INTERNAL);
	emit(e, INSN_sync_mmmn_zi, 1, SYNC_RECV);
	free(ev);
}

static void
emit_overlap(Emit *e, const Lowered *l, const KernelSyms *ks, const Step *s,
             uint32_t tile, TileCode *tc)
{
	const KernelCall *c = call_of(s, tile);
	const GemmWindows *w = s->gwin;
	int n;
	uint32_t dcount;
	Event *ev = tile_events(l, s, tile, &n, &dcount);
	if (!c) { /* a tile outside the GEMM */
		emit_syncs_beside(e, tile, s, ev, n, "the GEMM");
		return;
	}
	GemmCall g = c->args.u.gemm;
	uint32_t total = gemm_n_panels(g.bn) * gemm_k_panels(g.t, g.bk);
	if (c->args.kind != KC_GEMM || !g.opt.five || g.opt.five > total ||
	    w->panels != g.opt.five) {
		if (!e->err)
			e->err = diag_set(e->d, IPU_EINVAL, NULL, 0, 0,
			                  "codegen: tile %u, %s: not an "
			                  "overlapped GEMM call of %u panels",
			                  tile, s->what, w->panels);
		free(ev);
		return;
	}
	g.a = lower_addr(l, c->ref[0]);
	g.b = lower_addr(l, c->ref[1]);
	g.c = lower_addr(l, c->ref[2]);
	uint32_t args = l->buf[c->args_at].addr;
	/* setup (gemm_overlap_setup): every CSR's value first, then the
	 * writes, so that none waits for its value (sup-dep) */
	uint32_t v[8], csr[8], ncsr = 0;
	for (uint32_t i = 0; i < 5; i++) {
		v[ncsr] = args + GEMM_VERTEX_AT + GEMM_VERTEX_BYTES * i;
		csr[ncsr++] = CSR_WORKER0_BASE + i;
	}
	v[ncsr] = g.b;
	csr[ncsr++] = CSR_CCCSLOAD;
	if (g.t == GEMM_F8) {
		v[ncsr] = (uint32_t)g.opt.fp8_in << 1 | (uint32_t)g.opt.fp8_w;
		csr[ncsr++] = CSR_FP_INFMT;
		v[ncsr] = (uint32_t)g.opt.fp8_scale & 0x3f;
		csr[ncsr++] = CSR_FP_ISCL;
	}
	emit_opening_beside(e, v, csr, ncsr, dcount);
	emit_block(e, ks, &g, 0);
	uint64_t cur = 0;
	uint32_t p = 0;
	emit_events_beside(e, ks, &g, s, tile, ev, n, w, &p, &cur);
	free(ev);
	while (!e->err && p + 1 < w->panels) {
		p++;
		emit_delay_beside(e, w->at[p] - cur);
		emit_block(e, ks, &g, p);
		cur = w->open[p];
	}
	emit(e, INSN_sync_mmmn_zi, 1, SYNC_LOCAL);
	emit(e, INSN_sync_mmmn_zi, 1, SYNC_RECV);
	GemmCall rest[2];
	int nrest = gemm_rest(&g, rest);
	for (int i = 0; i < nrest; i++) {
		const char *name = gemm_entry(rest[i].t, 6, rest[i].bm,
		                              rest[i].bn, rest[i].bk);
		int64_t entry = ks ? ks->symbol(ks->ctx, name) : 0;
		if (e->buf && entry < 0 && !e->err)
			e->err = diag_set(e->d, IPU_EINVAL, NULL, 0, 0,
			                  "codegen: no kernel named %s", name);
		emit(e, INSN_setzi_mmmn_zi, 2, 0,
		     (int32_t)(args + (uint32_t)(i + 1) * GEMM_ARGS_BYTES));
		emit(e, INSN_call_mmmn_zi, 2, REG_LR, (int32_t)entry);
	}
	call_data(l, c, tc);
}

/*
 * A reduction's first part on five workers beside its exchange
 * (lower_step_vadd5; lower/redpipe.c):
 *   setup      $WORKER0..4_BASE = the argument block (vadd_bias_gelu:
 *              $FP_INFMT, $FP_ISCL as its entry sets them), before the
 *              opening sync
 *   opening    sync 3; put $INCOMING_DCOUNT; the mux off (XS_PREAMBLE)
 *   launch     setzi $m1, the worker entry (vadd_worker); setzi $m2, the
 *              ranges; run $m1, $m2, w * words for the five workers
 *   then, from cycle 0 (the first slot 5 after the runs), the tile's
 *   exchange events as emit_overlap's, before the frame's close (the
 *   first worker's exit: lower_vadd5_frame)
 *   closing    sync LOCAL; sync RECV
 * A tile without a call only takes part in the syncs.
 */
static void
emit_vadd5(Emit *e, const Lowered *l, const KernelSyms *ks, const Step *s,
           uint32_t tile, TileCode *tc)
{
	const KernelCall *c = call_of(s, tile);
	int n;
	uint32_t dcount;
	Event *ev = tile_events(l, s, tile, &n, &dcount);
	if (!c) {
		emit_syncs_beside(e, tile, s, ev, n, "the reduction");
		return;
	}
	const VaddCall *va = &c->args.u.vadd;
	int bias = vadd_call_variant(va);
	const char *worker = vadd_worker(0, bias);
	int64_t entry = ks && worker ? ks->symbol(ks->ctx, worker) : 0;
	if (c->args.kind != KC_VADD || !va->five || !worker ||
	    (e->buf && entry < 0)) {
		if (!e->err)
			e->err = diag_set(e->d, IPU_EINVAL, NULL, 0, 0,
			                  "codegen: tile %u, %s: not a "
			                  "five-worker vadd call",
			                  tile, s->what);
		free(ev);
		return;
	}
	uint32_t args = l->buf[c->args_at].addr;
	uint32_t v[7], csr[7], ncsr = 0;
	for (uint32_t i = 0; i < 5; i++) {
		v[ncsr] = args;
		csr[ncsr++] = CSR_WORKER0_BASE + i;
	}
	if (va->has_gelu) {
		v[ncsr] = (uint32_t)va->f152 << 1;
		csr[ncsr++] = CSR_FP_INFMT;
		v[ncsr] = (uint32_t)va->fp8_scale & 63;
		csr[ncsr++] = CSR_FP_ISCL;
	}
	emit_opening_beside(e, v, csr, ncsr, dcount);
	uint32_t words = va->has_bias ? 7 : 6;
	emit(e, INSN_setzi_mmmn_zi, 2, REG_M1, (int32_t)entry);
	emit(e, INSN_setzi_mmmn_zi, 2, REG_M2, (int32_t)(args + 40));
	for (uint32_t w = 0; w < 5; w++)
		emit(e, INSN_run_mmmn_zi, 3, REG_M1, REG_M2,
		     (int32_t)(w * words));
	uint64_t lead, close, done, zero = 0;
	lower_vadd5_frame(l->chip, s, &lead, &close, &done);
	GemmWindows w = {
	    .panels = 1, .at = &zero, .open = &zero, .close = &close};
	uint64_t cur = 0;
	uint32_t p = 0;
	emit_events_beside(e, ks, NULL, s, tile, ev, n, &w, &p, &cur);
	free(ev);
	emit(e, INSN_sync_mmmn_zi, 1, SYNC_LOCAL);
	emit(e, INSN_sync_mmmn_zi, 1, SYNC_RECV);
	call_data(l, c, tc);
}

static void
emit_program(Emit *e, const Lowered *l, const KernelSyms *ks, uint32_t tile,
             uint32_t save, TileCode *tc)
{
	emit(e, INSN_setzi_mmmn_zi, 2, REG_M1, (int32_t)save);
	emit(e, INSN_st32_mmmn_zi, 4, REG_LR, REG_M1, REG_MZERO, 0);
	uint32_t head = 0;
	for (int i = 0; i < l->nstep; i++) {
		const Step *s = &l->step[i];
		if (l->loop_count && i == l->loop_first) {
			/* iterations left, in the save buffer's second word */
			emit(e, INSN_setzi_mmmn_zi, 2, REG_M1, (int32_t)save);
			emit(e, INSN_setzi_mmmn_zi, 2, REG_M2,
			     (int32_t)l->loop_count);
			emit(e, INSN_st32_mmmn_zi, 4, REG_M2, REG_M1, REG_MZERO,
			     1);
			head = e->base + e->len;
		}
		if (e->step_at)
			e->step_at[i] = e->base + e->len;
		if (s->kind == STEP_EXCHANGE) {
			emit_exchange(e, l, s, tile);
		} else if (s->gwin) {
			emit_overlap(e, l, ks, s, tile, tc);
		} else if (lower_step_vadd5(s)) {
			emit_vadd5(e, l, ks, s, tile, tc);
		} else {
			const KernelCall *c = call_of(s, tile);
			if (c)
				emit_call(e, l, ks, c, tc);
		}
		if (l->loop_count && i == l->loop_last) {
			emit(e, INSN_setzi_mmmn_zi, 2, REG_M1, (int32_t)save);
			emit(e, INSN_ld32_mmmn_zi, 4, REG_M2, REG_M1, REG_MZERO,
			     1);
			emit(e, INSN_add_mmmn_si, 3, REG_M2, REG_M2, -1);
			emit(e, INSN_st32_mmmn_zi, 4, REG_M2, REG_M1, REG_MZERO,
			     1);
			emit(e, INSN_brnz_mmmn_zi, 2, REG_M2, (int32_t)head);
		}
	}
	if (e->step_at)
		e->step_at[l->nstep] = e->base + e->len;
	emit(e, INSN_setzi_mmmn_zi, 2, REG_M1, (int32_t)save);
	emit(e, INSN_ld32_mmmn_zi, 4, REG_LR, REG_M1, REG_MZERO, 0);
	emit(e, INSN_br_mmmn, 1, REG_LR);
}

uint32_t
codegen_size(const Lowered *l, uint32_t tile, uint32_t *step_at)
{
	Emit e = {.tile = tile, .step_at = step_at};
	emit_program(&e, l, NULL, tile, 0, NULL);
	return e.len;
}

/* The transfers tile t sends or receives in exchange step s. */
static uint32_t
tile_xfers(const Step *s, uint32_t t)
{
	return s->kind == STEP_EXCHANGE ? s->first[t + 1] - s->first[t] : 0;
}

void
codegen_print(const Lowered *l, FILE *f)
{
	uint32_t ns = (uint32_t)l->nstep;
	uint32_t *at = xmalloc(((size_t)ns + 1) * sizeof *at);
	uint32_t *len =
	    xmalloc(((size_t)l->tiles ? l->tiles : 1) * sizeof *len);
	uint64_t *sum = xcalloc((size_t)ns + 1, sizeof *sum);
	uint32_t *max = xcalloc((size_t)ns + 1, sizeof *max);
	uint32_t *max_on = xcalloc((size_t)ns + 1, sizeof *max_on);
	uint32_t *per = xmalloc(((size_t)l->tiles * ns + 1) * sizeof *per);
	uint64_t all = 0;
	for (uint32_t t = 0; t < l->tiles; t++) {
		len[t] = codegen_size(l, t, at);
		all += len[t];
		for (uint32_t s = 0; s < ns; s++) {
			uint32_t b = at[s + 1] - at[s];
			per[(size_t)t * ns + s] = b;
			sum[s] += b;
			if (b > max[s]) {
				max[s] = b;
				max_on[s] = t;
			}
		}
	}
	fprintf(f, "# code: %u tiles, %" PRIu64 " bytes of programs\n",
	        l->tiles, all);
	for (uint32_t s = 0; s < ns; s++)
		if (sum[s])
			fprintf(f,
			        "step %u \"%s\" %" PRIu64
			        " bytes, at most %u on tile %u\n",
			        s, l->step[s].what, sum[s], max[s], max_on[s]);
	for (uint32_t t = 0; t < l->tiles; t++) {
		fprintf(f, "tile %u program %u bytes\n", t, len[t]);
		uint32_t steps = 0;
		for (uint32_t s = 0; s < ns; s++) {
			uint32_t b = per[(size_t)t * ns + s];
			if (!b)
				continue;
			steps += b;
			fprintf(f, "  step %u \"%s\" %u bytes", s,
			        l->step[s].what, b);
			if (l->step[s].kind == STEP_EXCHANGE)
				fprintf(f, ", %u transfers",
				        tile_xfers(&l->step[s], t));
			fputc('\n', f);
		}
		fprintf(f, "  rest %u bytes\n", len[t] - steps);
	}
	free(per);
	free(max_on);
	free(max);
	free(sum);
	free(len);
	free(at);
}

/* The buffers of tile's Lowered.init halves, each a data segment of the
 * whole buffer (zero elsewhere). */
static void
init_data(const Lowered *l, uint32_t tile, TileCode *tc)
{
	for (int i = 0; i < l->ninit; i++) {
		const LowerHalf *h = &l->init[i];
		const Buffer *bf = &l->buf[h->buf];
		if (bf->tile != tile)
			continue;
		int k = 0;
		while (k < tc->ndata && tc->data[k].buf != h->buf)
			k++;
		if (k == tc->ndata) {
			DataSeg seg = {.addr = bf->addr,
			               .len = bf->bytes,
			               .buf = h->buf,
			               .bytes = xcalloc(1, bf->bytes)};
			GROW(tc->data, tc->ndata, tc->capdata);
			tc->data[tc->ndata++] = seg;
		}
		tc->data[k].bytes[h->offset] = (uint8_t)h->bits;
		tc->data[k].bytes[h->offset + 1] = (uint8_t)(h->bits >> 8);
	}
}

int
codegen_tile(const Lowered *l, const KernelSyms *ks, uint32_t tile,
             uint32_t code_addr, int32_t save_buf, TileCode *out, Diag *d)
{
	memset(out, 0, sizeof *out);
	out->tile = tile;
	out->code_addr = out->entry = code_addr;
	out->save_addr = l->buf[save_buf].addr;
	out->step_at = xmalloc(((size_t)l->nstep + 1) * sizeof *out->step_at);
	Emit e = {.buf = xmalloc(1024),
	          .cap = 1024,
	          .base = code_addr,
	          .tile = tile,
	          .step_at = out->step_at,
	          .d = d};
	emit_program(&e, l, ks, tile, out->save_addr, out);
	init_data(l, tile, out);
	out->code = e.buf;
	out->code_len = e.len;
	if (e.err) {
		codegen_free(out);
		return e.err;
	}
	if (code_addr + e.len > l->chip->exec_end) {
		codegen_free(out);
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "codegen: tile %u: %u bytes of program at "
		                "0x%05x pass the end of code memory 0x%05x",
		                tile, e.len, code_addr, l->chip->exec_end);
	}
	return IPU_OK;
}

/* The most bytes tile t's program may take by the code rules the planner
 * sizes programs with (plan.h, CODE_*). */
static uint64_t
code_bound(const Lowered *l, uint32_t t)
{
	uint64_t insns =
	    CODE_PROGRAM_INSNS + (l->loop_count ? CODE_LOOP_INSNS : 0);
	uint64_t bytes = 0;
	for (int i = 0; i < l->nstep; i++) {
		const Step *s = &l->step[i];
		if (s->kind != STEP_EXCHANGE && !s->gwin &&
		    !lower_step_vadd5(s)) {
			insns += call_of(s, t) ? CODE_CALL_INSNS : 0;
			continue;
		}
		uint64_t send_items = CODE_SEND_ITEMS;
		if (lower_step_vadd5(s)) { /* emit_vadd5 */
			/* the setup (the GELU's 4 counted everywhere), the
			 * opening, the launch, the closing syncs */
			insns += 15 + CODE_EXCHANGE_INSNS + 7 + 2;
			send_items = xsched_send_max(XS_BLOCK);
		}
		if (s->gwin) { /* emit_overlap */
			if (!call_of(s, t)) {
				insns += 2; /* the syncs */
				continue;
			}
			/* the setup (f8's 4 counted everywhere), the
			 * opening, a delay and a block a panel, the
			 * closing syncs, the rest calls */
			insns += 16 + CODE_EXCHANGE_INSNS +
			         s->gwin->panels * (1 + OVERLAP_BLOCK_INSNS) +
			         2 + 2 * (CODE_CALL_INSNS + 1);
			send_items = xsched_send_max(XS_BLOCK);
		}
		uint64_t recv = 0, sends = 0, items = 0;
		for (uint32_t k = s->first[t]; k < s->first[t + 1]; k++) {
			const Transfer *x = &s->xfer[s->by_tile[k].xfer];
			if (s->by_tile[k].dst >= 0) {
				recv++;
			} else {
				sends++;
				items += xfer_items(x);
			}
		}
		bytes += plan_code_phase(s->cycles) +
		         plan_code_xfers(recv, sends, items);
		/* beside the workers, sends of xsched_send_max(XS_BLOCK) items
		 */
		if (send_items < CODE_SEND_ITEMS)
			bytes +=
			    (items / send_items - items / CODE_SEND_ITEMS) *
			    CODE_INSN;
	}
	return bytes + insns * CODE_INSN;
}

int
codegen_verify(const Lowered *l, const TileCode *tc, uint32_t code_end, Diag *d)
{
	uint64_t bound = code_bound(l, tc->tile);
	if (tc->code_len > bound)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "codegen verifier: tile %u: %u bytes of program, "
		    "more than the code rules' %llu (an internal "
		    "error)",
		    tc->tile, tc->code_len, (unsigned long long)bound);
	if (tc->code_addr + tc->code_len != code_end ||
	    code_end > l->chip->exec_end)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "codegen verifier: tile %u: %u bytes of program "
		    "at 0x%05x, placed as ending at 0x%05x (exec_end "
		    "0x%05x) (an internal error)",
		    tc->tile, tc->code_len, tc->code_addr, code_end,
		    l->chip->exec_end);
	for (int i = 0; i < tc->ndata; i++) {
		const DataSeg *s = &tc->data[i];
		const Buffer *b =
		    s->buf >= 0 && s->buf < l->nbuf ? &l->buf[s->buf] : NULL;
		if (!b || b->tile != tc->tile || b->addr != s->addr ||
		    s->len > b->bytes || s->addr < code_end)
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "codegen verifier: tile %u: %u bytes of "
			    "data at 0x%05x are not buffer %d's "
			    "(an internal error)",
			    tc->tile, s->len, s->addr, (int)s->buf);
	}
	return IPU_OK;
}

void
codegen_free(TileCode *tc)
{
	free(tc->code);
	free(tc->step_at);
	for (int i = 0; i < tc->ndata; i++)
		free(tc->data[i].bytes);
	free(tc->data);
	memset(tc, 0, sizeof *tc);
}

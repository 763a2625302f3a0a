/*
 * verify.c - the lowered program's invariants, checked after lowering and
 * after exchange scheduling (compile.c runs them after those passes). A
 * failure is the compiler's own bug: the message says which rule, where,
 * and "(an internal error)".
 *
 * After lowering (lower_verify):
 *   - every buffer is on a tile in use, aligned to a power of two >= 8,
 *     with first <= last and an `apart` partner (if any) on its tile;
 *   - every reference (a transfer's source and destinations, a call's
 *     buffers and argument block, a tensor piece) names a buffer that
 *     holds bytes, on the tile that uses it, and a transfer's words lie
 *     inside its buffers;
 *   - a step is an exchange of transfers or a compute step of calls, with
 *     at most one call per tile;
 *   - every buffer a step uses is live in that step (first <= step <=
 *     last), and the loop's steps, if any, are in range.
 * After scheduling (lower_verify_schedule), in each exchange step, with n
 * a transfer's items and first = start + route latency at a destination:
 *   - a destination's mux switches at first and off at first + n, its
 *     pointer before first; all controls at or after XS_PREAMBLE;
 *   - a tile's sends do not overlap, nor overlap its pair partner's
 *     64-bit sends;
 *   - a tile's receive windows do not overlap and lie XS_RECV_GAP apart;
 *   - no two controls of a tile fall in one cycle, and none on the first
 *     cycle of the tile's own send;
 *   - the step lasts until its last mux-off.
 */
#include "lower.h"

#include <stdlib.h>
#include <string.h>

static int bad(Diag *d, const char *pass, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
bad(Diag *d, const char *pass, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "%s verifier: %s (an internal error)", pass, msg);
}

/* ---- after lowering ---------------------------------------------------- */

static int
check_buffers(const Lowered *l, Diag *d)
{
	for (int i = 0; i < l->nbuf; i++) {
		const Buffer *b = &l->buf[i];
		if (b->tile >= l->tiles)
			return bad(d, "lower",
			           "buffer %d (%s) on tile %u of %u", i,
			           b->what, b->tile, l->tiles);
		if (b->align < 8 || (b->align & (b->align - 1)))
			return bad(d, "lower", "buffer %d (%s) aligned to %u",
			           i, b->what, b->align);
		if (b->first < 0 || b->first > b->last)
			return bad(d, "lower", "buffer %d (%s) lives %d..%d", i,
			           b->what, b->first, b->last);
		if (b->apart >= l->nbuf ||
		    (b->apart >= 0 && l->buf[b->apart].tile != b->tile))
			return bad(d, "lower",
			           "buffer %d (%s) kept apart from %d, not a "
			           "buffer of its tile",
			           i, b->what, b->apart);
	}
	return IPU_OK;
}

/* r names `bytes` bytes of a buffer on `tile` that step `step` (-1: none,
 * a tensor piece) may use. */
static int
check_ref(const Lowered *l, BufRef r, uint64_t bytes, uint32_t tile,
          int32_t step, const char *what, Diag *d)
{
	if (r.buf < 0 || r.buf >= l->nbuf)
		return bad(d, "lower", "%s: buffer %d of %d", what, r.buf,
		           l->nbuf);
	const Buffer *b = &l->buf[r.buf];
	if (!b->bytes)
		return bad(d, "lower", "%s: buffer %d (%s) is empty", what,
		           r.buf, b->what);
	if (b->tile != tile)
		return bad(d, "lower",
		           "%s: buffer %d (%s) is on tile %u, not %u", what,
		           r.buf, b->what, b->tile, tile);
	if ((uint64_t)r.offset + bytes > b->bytes)
		return bad(d, "lower",
		           "%s: bytes %u..%llu of buffer %d (%s) of %u", what,
		           r.offset, (unsigned long long)(r.offset + bytes),
		           r.buf, b->what, b->bytes);
	if (step >= 0 && (step < b->first || step > b->last))
		return bad(d, "lower",
		           "%s: buffer %d (%s) lives %d..%d, used in step %d",
		           what, r.buf, b->what, b->first, b->last, step);
	return IPU_OK;
}

static int
check_transfers(const Lowered *l, int32_t i, Diag *d)
{
	const Step *s = &l->step[i];
	char what[300];
	for (int k = 0; k < s->nxfer; k++) {
		const Transfer *x = &s->xfer[k];
		snprintf(what, sizeof what, "step %d (%s), transfer %d", i,
		         s->what, k);
		if (!x->words || !x->ndst)
			return bad(d, "lower", "%s: %u words to %u tiles", what,
			           x->words, x->ndst);
		int r = check_ref(l, x->src, 4 * (uint64_t)x->words,
		                  x->src_tile, i, what, d);
		for (uint32_t j = 0; !r && j < x->ndst; j++)
			r = check_ref(l, x->dst[j], 4 * (uint64_t)x->words,
			              x->dst_tile[j], i, what, d);
		if (r)
			return r;
	}
	return IPU_OK;
}

static int
check_calls(const Lowered *l, int32_t i, uint8_t *seen, Diag *d)
{
	const Step *s = &l->step[i];
	char what[300];
	int r = IPU_OK;
	for (int k = 0; k < s->ncall && !r; k++) {
		const KernelCall *c = &s->call[k];
		snprintf(what, sizeof what,
		         "step %d (%s), call of %s on tile %u", i, s->what,
		         c->kernel, c->tile);
		if (c->tile >= l->tiles)
			return bad(d, "lower", "%s: no such tile", what);
		if (seen[c->tile]++)
			r = bad(d, "lower", "%s: a second call on the tile",
			        what);
		if (!r)
			r = check_ref(l, (BufRef){c->args_at, 0}, c->args_bytes,
			              c->tile, i, what, d);
		/* the buffers a kernel is given: their first byte here (the
		 * kernel's ABI says how far it reads) */
		for (int j = 0; !r && j < c->nref; j++)
			r = check_ref(l, c->ref[j], 0, c->tile, i, what, d);
	}
	for (int k = 0; k < s->ncall; k++)
		seen[s->call[k].tile < l->tiles ? s->call[k].tile : 0] = 0;
	return r;
}

static int
check_pieces(const Lowered *l, Diag *d)
{
	char what[120];
	for (int i = 0; i < l->ntp; i++) {
		const TensorPlace *tp = &l->tp[i];
		for (int k = 0; k < tp->npiece; k++) {
			const Piece *p = &tp->piece[k];
			snprintf(what, sizeof what, "tensor %d, piece %d",
			         tp->tensor, k);
			int t = p->format == PF_ROWMAJOR_T ||
			        p->format == PF_GEMM_B_T;
			uint32_t rows = t ? p->cols : p->rows,
			         cols = t ? p->rows : p->cols;
			if (p->row0 + p->rows > tp->rows ||
			    p->col0 + p->cols > tp->cols ||
			    rows > p->pad_rows || cols > p->pad_cols)
				return bad(d, "lower",
				           "%s: rows %u+%u cols %u+%u padded "
				           "to %u x %u in a %u x %u tensor",
				           what, p->row0, p->rows, p->col0,
				           p->cols, p->pad_rows, p->pad_cols,
				           tp->rows, tp->cols);
			if (p->tile >= l->tiles)
				return bad(d, "lower", "%s: tile %u of %u",
				           what, p->tile, l->tiles);
			int r = check_ref(l, p->at, 0, p->tile, -1, what, d);
			if (r)
				return r;
		}
	}
	return IPU_OK;
}

int
lower_verify(const Lowered *l, Diag *d)
{
	if (l->loop_count &&
	    (l->loop_first < 0 || l->loop_first > l->loop_last ||
	     l->loop_last >= l->nstep))
		return bad(d, "lower", "loop steps %d..%d of %d", l->loop_first,
		           l->loop_last, l->nstep);
	int r = check_buffers(l, d);
	uint8_t *seen = xcalloc(l->tiles ? l->tiles : 1, 1);
	for (int32_t i = 0; !r && i < l->nstep; i++) {
		const Step *s = &l->step[i];
		if (s->kind == STEP_EXCHANGE ? s->ncall != 0 : s->nxfer != 0)
			r = bad(d, "lower",
			        "step %d (%s): %d calls, %d transfers", i,
			        s->what, s->ncall, s->nxfer);
		if (!r)
			r = check_transfers(l, i, d);
		if (!r)
			r = check_calls(l, i, seen, d);
	}
	free(seen);
	return r ? r : check_pieces(l, d);
}

/* ---- after scheduling -------------------------------------------------- */

/* One event of a tile in a phase: a send [a, b), a 64-bit send on the
 * tile's wires by its partner [a, b), a receive window [a, b), or a
 * control at a (b = a + 1). */
typedef enum { EV_SEND, EV_WIRE, EV_WINDOW, EV_CONTROL } EvKind;
typedef struct {
	uint32_t tile;
	uint8_t kind;
	uint64_t a, b;
	int xfer;
} Ev;

static int
ev_order(const void *pa, const void *pb)
{
	const Ev *x = pa, *y = pb;
	if (x->tile != y->tile)
		return x->tile < y->tile ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return x->xfer - y->xfer;
}

static void
add_ev(Ev **ev, int *n, int *cap, Ev e)
{
	GROW(*ev, *n, *cap);
	(*ev)[(*n)++] = e;
}

/* The events of step s; returns their number. */
static int
step_events(const Lowered *l, const Step *s, Ev **ev, int *cap)
{
	int n = 0;
	for (int k = 0; k < s->nxfer; k++) {
		const Transfer *x = &s->xfer[k];
		uint64_t items = xfer_items(x);
		add_ev(
		    ev, &n, cap,
		    (Ev){x->src_tile, EV_SEND, x->start, x->start + items, k});
		uint32_t mate = chip_pair(l->chip, x->src_tile);
		if (x->wide && mate < l->tiles)
			add_ev(
			    ev, &n, cap,
			    (Ev){mate, EV_WIRE, x->start, x->start + items, k});
		for (uint32_t j = 0; j < x->ndst; j++) {
			uint32_t t = x->dst_tile[j];
			add_ev(
			    ev, &n, cap,
			    (Ev){t, EV_WINDOW, x->mux_at[j], x->off_at[j], k});
			uint64_t ctl[3] = {x->ptr_at[j], x->mux_at[j],
			                   x->off_at[j]};
			for (int c = 0; c < 3; c++)
				add_ev(
				    ev, &n, cap,
				    (Ev){t, EV_CONTROL, ctl[c], ctl[c] + 1, k});
		}
	}
	qsort(*ev, (size_t)n, sizeof **ev, ev_order);
	return n;
}

static int
check_transfer_times(const Lowered *l, int32_t i, Diag *d)
{
	const Step *s = &l->step[i];
	for (int k = 0; k < s->nxfer; k++) {
		const Transfer *x = &s->xfer[k];
		uint64_t items = xfer_items(x);
		if (x->start < XS_PREAMBLE)
			return bad(d, "schedule",
			           "step %d (%s), transfer %d sent at %llu", i,
			           s->what, k, (unsigned long long)x->start);
		for (uint32_t j = 0; j < x->ndst; j++) {
			uint64_t first =
			    x->start + chip_route_cycles(l->chip, x->src_tile,
			                                 x->dst_tile[j]);
			if (x->mux_at[j] != first ||
			    x->off_at[j] != first + items ||
			    x->ptr_at[j] >= first ||
			    x->ptr_at[j] < XS_PREAMBLE ||
			    x->off_at[j] > s->cycles)
				return bad(
				    d, "schedule",
				    "step %d (%s), transfer %d to tile %u: "
				    "arrives %llu..%llu, pointer at %llu, mux "
				    "%llu..%llu, step %llu cycles",
				    i, s->what, k, x->dst_tile[j],
				    (unsigned long long)first,
				    (unsigned long long)(first + items),
				    (unsigned long long)x->ptr_at[j],
				    (unsigned long long)x->mux_at[j],
				    (unsigned long long)x->off_at[j],
				    (unsigned long long)s->cycles);
		}
	}
	return IPU_OK;
}

/* Events sorted by (tile, kind, start): overlaps within a kind, and the
 * cross-kind rules of the file's comment. */
static int
check_events(const Step *s, int32_t i, const Ev *ev, int n, Diag *d)
{
	static const char *const name[] = {"sends", "sends and 64-bit wires",
	                                   "receive windows", "controls"};
	for (int e = 1; e < n; e++) {
		const Ev *p = &ev[e - 1], *q = &ev[e];
		if (p->tile != q->tile || p->kind != q->kind)
			continue;
		uint64_t gap = q->kind == EV_WINDOW ? XS_RECV_GAP : 0;
		if (q->a < p->b + gap)
			return bad(d, "schedule",
			           "step %d (%s), tile %u: %s of transfers %d "
			           "and %d at %llu..%llu and %llu..%llu",
			           i, s->what, q->tile, name[q->kind], p->xfer,
			           q->xfer, (unsigned long long)p->a,
			           (unsigned long long)p->b,
			           (unsigned long long)q->a,
			           (unsigned long long)q->b);
	}
	/* a send against the partner's 64-bit sends; a control on a send's
	 * first cycle (by bisection over the tile's sorted sends) */
	for (int e = 0; e < n; e++) {
		const Ev *w = &ev[e];
		if (w->kind != EV_WIRE && w->kind != EV_CONTROL)
			continue;
		/* the first send of w's tile ending after w starts (a
		 * tile's sends sort first among its events) */
		int lo = 0, hi = n;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			const Ev *m = &ev[mid];
			if (m->tile < w->tile ||
			    (m->tile == w->tile && m->kind == EV_SEND &&
			     m->b <= w->a))
				lo = mid + 1;
			else
				hi = mid;
		}
		const Ev *x = lo < n ? &ev[lo] : NULL;
		if (!x || x->tile != w->tile || x->kind != EV_SEND)
			continue;
		int clash = w->kind == EV_WIRE ? x->a < w->b : x->a == w->a;
		if (clash)
			return bad(
			    d, "schedule",
			    "step %d (%s), tile %u: transfer %d's send "
			    "at %llu..%llu meets transfer %d's %s at %llu",
			    i, s->what, w->tile, x->xfer,
			    (unsigned long long)x->a, (unsigned long long)x->b,
			    w->xfer,
			    w->kind == EV_WIRE ? "64-bit send"
			                       : "receive control",
			    (unsigned long long)w->a);
	}
	return IPU_OK;
}

int
lower_verify_schedule(const Lowered *l, Diag *d)
{
	Ev *ev = NULL;
	int cap = 0, r = IPU_OK;
	for (int32_t i = 0; !r && i < l->nstep; i++) {
		const Step *s = &l->step[i];
		if (s->kind != STEP_EXCHANGE || !s->nxfer)
			continue;
		r = check_transfer_times(l, i, d);
		if (!r) {
			int n = step_events(l, s, &ev, &cap);
			r = check_events(s, i, ev, n, d);
		}
	}
	free(ev);
	return r;
}

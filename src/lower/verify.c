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
 *     last), a call's argument block (loaded data) for the whole program,
 *     and the loop's steps, if any, are in range.
 * After scheduling (lower_verify_schedule), in each exchange step, with n
 * a transfer's items, first = start + route latency at a destination (the
 * cycle its first word is written) and M the destination's XPIC-to-write
 * delay (chip_xpic_cycles):
 *   - a destination's mux switches at first - M and off at first + n - M,
 *     its pointer by first; all controls at or after XS_PREAMBLE;
 *   - a tile's sends do not overlap, nor overlap its pair partner's
 *     64-bit sends;
 *   - a tile's receive windows do not overlap (beside five workers: lie
 *     XS_RECV_GAP apart);
 *   - no two controls of a tile fall in one cycle but a window's mux-off
 *     and the next one's mux-on (a switch, not beside five workers), and
 *     none on the first cycle of the tile's own send;
 *   - the step lasts until its last word has landed (recv-land after its
 *     write).
 * And in a step with blocks (lower_step_blocks; xsched.c, "Blocks"), B
 * the block, a send's hold its cycles to the boundary after its last item
 * (xsched_hold):
 *   - the panel windows are sorted and apart;
 *   - every send starts on a block boundary, after block 0, and every
 *     control falls after block 0;
 *   - a tile's sends' holds do not overlap, and no send's hold and no
 *     control's block crosses a window's blocks;
 *   - no two controls of a tile share a block; one inside a hold of the
 *     tile's own send is on a boundary after the send's first item and
 *     before its last;
 *   - the send instructions (at most xsched_send_max items, split at
 *     the controls riding on sendpics) keep the issue on the boundaries:
 *     every one but the last carries a multiple of B items.
 * A reduction's first part beside its exchange (lower_step_vadd5): its
 * calls are five-worker vadd calls, and the block rules hold with
 * nothing at or after the frame's close (lower_vadd5_frame: the first
 * worker's exit), as if a window began there.
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
		/* the argument block is data the package loads: nothing may
		 * share its bytes at any step */
		const Buffer *ab = &l->buf[c->args_at];
		if (!r && (ab->first != 0 || ab->last != INT32_MAX))
			r = bad(d, "lower",
			        "%s: its argument block (buffer %d) lives "
			        "%d..%d, not the whole program",
			        what, c->args_at, ab->first, ab->last);
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
		if (s->kind == STEP_EXCHANGE
		        ? s->ncall != 0
		        : s->nxfer != 0 && !s->gwin && !lower_step_vadd5(s))
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

/* One event of a tile in a phase: a send, a 64-bit send on the tile's
 * wires by its partner, a receive window (each [a, a + len)), or a
 * control at a (len 1). A step's events are kept in buckets by (tile,
 * kind), each sorted by start. */
typedef enum { EV_SEND, EV_WIRE, EV_WINDOW, EV_CONTROL, EV_KINDS } EvKind;
/* A control's kind: a mux-off and the next window's mux-on in one cycle
 * are one control, the switch from one source to the next (xsched.c). */
typedef enum { CTL_OTHER, CTL_ON, CTL_OFF } CtlKind;
typedef struct {
	uint64_t a;
	uint32_t len;
	int32_t xfer;
	uint8_t ctl; /* CtlKind */
} Ev;

typedef struct {
	Ev *ev;
	size_t cap;
	size_t *start; /* bucket (tile, kind) is ev[start[k] .. start[k+1]) */
	size_t *fill;
} Events;

static int
ev_order(const void *pa, const void *pb)
{
	const Ev *x = pa, *y = pb;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return x->xfer - y->xfer;
}

/* Count event e into bucket (tile, kind), or place it there. */
static void
put(Events *e, int place, uint32_t tile, int kind, Ev ev)
{
	size_t key = (size_t)tile * EV_KINDS + (size_t)kind;
	if (place)
		e->ev[e->fill[key]++] = ev;
	else
		e->start[key + 1]++;
}

/* Visit every event of step s: count them, or place them. */
static void
walk_events(const Lowered *l, const Step *s, Events *e, int place)
{
	for (int k = 0; k < s->nxfer; k++) {
		const Transfer *x = &s->xfer[k];
		uint32_t items = xfer_items(x),
		         mate = chip_pair(l->chip, x->src_tile);
		put(e, place, x->src_tile, EV_SEND,
		    (Ev){x->start, items, k, CTL_OTHER});
		if (x->wide && mate < l->tiles)
			put(e, place, mate, EV_WIRE,
			    (Ev){x->start, items, k, CTL_OTHER});
		for (uint32_t j = 0; j < x->ndst; j++) {
			uint32_t t = x->dst_tile[j];
			put(e, place, t, EV_WINDOW,
			    (Ev){x->mux_at[j],
			         (uint32_t)(x->off_at[j] - x->mux_at[j]), k,
			         CTL_OTHER});
			if (!(x->join & XJOIN_PREV)) {
				put(e, place, t, EV_CONTROL,
				    (Ev){x->ptr_at[j], 1, k, CTL_OTHER});
				put(e, place, t, EV_CONTROL,
				    (Ev){x->mux_at[j], 1, k, CTL_ON});
			}
			if (!(x->join & XJOIN_NEXT))
				put(e, place, t, EV_CONTROL,
				    (Ev){x->off_at[j], 1, k, CTL_OFF});
		}
	}
}

/* Step s's events in their buckets, each sorted: the scheduler makes a
 * tile's sends, windows and controls each in time order, so a bucket is
 * sorted only if it is not already. */
static void
step_events(const Lowered *l, const Step *s, Events *e)
{
	size_t keys = (size_t)l->tiles * EV_KINDS;
	memset(e->start, 0, (keys + 1) * sizeof *e->start);
	walk_events(l, s, e, 0);
	for (size_t k = 0; k < keys; k++)
		e->start[k + 1] += e->start[k];
	if (e->start[keys] > e->cap) {
		e->cap = e->start[keys];
		e->ev = xrealloc(e->ev, e->cap * sizeof *e->ev);
	}
	memcpy(e->fill, e->start, keys * sizeof *e->fill);
	walk_events(l, s, e, 1);
	for (size_t k = 0; k < keys; k++) {
		Ev *b = e->ev + e->start[k];
		size_t m = e->start[k + 1] - e->start[k];
		for (size_t j = 1; j < m; j++)
			if (ev_order(&b[j - 1], &b[j]) > 0) {
				qsort(b, m, sizeof *b, ev_order);
				break;
			}
	}
}

static int
check_transfer_times(const Lowered *l, int32_t i, Diag *d)
{
	const Step *s = &l->step[i];
	uint64_t land = chip_rule(l->chip, TIMING_RECV_LAND);
	for (int k = 0; k < s->nxfer; k++) {
		const Transfer *x = &s->xfer[k];
		uint64_t items = xfer_items(x);
		if (x->start < XS_PREAMBLE)
			return bad(d, "schedule",
			           "step %d (%s), transfer %d sent at %llu", i,
			           s->what, k, (unsigned long long)x->start);
		for (uint32_t j = 0; j < x->ndst; j++) {
			uint32_t t = x->dst_tile[j];
			uint64_t first =
			             x->start +
			             chip_route_cycles(l->chip, x->src_tile, t),
			         m = chip_xpic_cycles(l->chip, t);
			if (first < XS_PREAMBLE + m ||
			    x->mux_at[j] != first - m ||
			    x->off_at[j] != first + items - m ||
			    x->ptr_at[j] > first ||
			    x->ptr_at[j] < XS_PREAMBLE ||
			    first + items + land > s->cycles)
				return bad(
				    d, "schedule",
				    "step %d (%s), transfer %d to tile %u: "
				    "written %llu..%llu, pointer at %llu, mux "
				    "%llu..%llu (%llu ahead), step %llu cycles",
				    i, s->what, k, t, (unsigned long long)first,
				    (unsigned long long)(first + items),
				    (unsigned long long)x->ptr_at[j],
				    (unsigned long long)x->mux_at[j],
				    (unsigned long long)x->off_at[j],
				    (unsigned long long)m,
				    (unsigned long long)s->cycles);
		}
	}
	return IPU_OK;
}

/* Tile t's sends (sorted) against its wires or controls (sorted): a wire
 * may not overlap a send, a control may not fall on a send's first cycle.
 * A merge of the two lists. */
static int
check_sends(const Step *s, int32_t i, uint32_t t, const Ev *send, size_t ns,
            const Ev *w, size_t nw, int wire, Diag *d)
{
	size_t k = 0;
	for (size_t e = 0; e < nw; e++) {
		while (k < ns && send[k].a + send[k].len <= w[e].a)
			k++; /* sends ended before */
		if (k == ns)
			break;
		const Ev *x = &send[k];
		if (wire ? x->a < w[e].a + w[e].len : x->a == w[e].a)
			return bad(
			    d, "schedule",
			    "step %d (%s), tile %u: transfer %d's send at "
			    "%llu..%llu meets transfer %d's %s at %llu",
			    i, s->what, t, x->xfer, (unsigned long long)x->a,
			    (unsigned long long)(x->a + x->len), w[e].xfer,
			    wire ? "64-bit send" : "receive control",
			    (unsigned long long)w[e].a);
	}
	return IPU_OK;
}

/* Is y the rest of x: joined to it, from the same sender and source words
 * on, to the same destinations and their words on? */
static int
joined(const Transfer *x, const Transfer *y)
{
	uint32_t bytes = 4 * x->words;
	if (!(y->join & XJOIN_PREV) || y->src_tile != x->src_tile ||
	    y->src.buf != x->src.buf ||
	    y->src.offset != x->src.offset + bytes || y->wide != x->wide ||
	    y->ndst != x->ndst)
		return 0;
	for (uint32_t j = 0; j < x->ndst; j++)
		if (y->dst_tile[j] != x->dst_tile[j] ||
		    y->dst[j].buf != x->dst[j].buf ||
		    y->dst[j].offset != x->dst[j].offset + bytes)
			return 0;
	return 1;
}

/* Overlaps within each bucket of a tile, and the cross-kind rules of the
 * file's comment. */
static int
check_events(const Lowered *l, const Step *s, int32_t i, const Events *e,
             Diag *d)
{
	static const char *const name[] = {"sends", "sends and 64-bit wires",
	                                   "receive windows", "controls"};
	for (uint32_t t = 0; t < l->tiles; t++) {
		const Ev *b[EV_KINDS];
		size_t n[EV_KINDS];
		for (int k = 0; k < EV_KINDS; k++) {
			size_t key = (size_t)t * EV_KINDS + (size_t)k;
			b[k] = e->ev + e->start[key];
			n[k] = e->start[key + 1] - e->start[key];
		}
		for (int k = 0; k < EV_KINDS; k++) {
			uint64_t gap =
			    k == EV_WINDOW && s->block ? XS_RECV_GAP : 0;
			for (size_t j = 1; j < n[k]; j++) {
				const Ev *p = &b[k][j - 1], *q = &b[k][j];
				if (q->a == p->a && p->ctl && q->ctl &&
				    p->ctl != q->ctl && !s->block)
					continue; /* a switch */
				if (q->a < p->a + p->len + gap)
					return bad(
					    d, "schedule",
					    "step %d (%s), tile %u: %s of "
					    "transfers %d and %d at "
					    "%llu..%llu and %llu..%llu",
					    i, s->what, t, name[k], p->xfer,
					    q->xfer, (unsigned long long)p->a,
					    (unsigned long long)(p->a + p->len),
					    (unsigned long long)q->a,
					    (unsigned long long)(q->a +
					                         q->len));
			}
		}
		/* a piece joined to its rest: the rest is the sender's next
		 * send and every receiver's next window (the mux stays on the
		 * sender between them) */
		static const int joins[] = {EV_SEND, EV_WINDOW};
		for (int k = 0; k < 2; k++) {
			const Ev *v = b[joins[k]];
			for (size_t j = 0; j < n[joins[k]]; j++) {
				int x = v[j].xfer;
				const Transfer *y = &s->xfer[x];
				int next = !(y->join & XJOIN_NEXT) ||
				           (j + 1 < n[joins[k]] &&
				            v[j + 1].xfer == x + 1 &&
				            joined(y, y + 1));
				int prev = !(y->join & XJOIN_PREV) ||
				           (j && v[j - 1].xfer == x - 1 &&
				            (y[-1].join & XJOIN_NEXT));
				if (!next || !prev)
					return bad(
					    d, "schedule",
					    "step %d (%s), tile %u: transfer "
					    "%d joined to a piece that is not "
					    "its rest or not in the %s next",
					    i, s->what, t, x, name[joins[k]]);
			}
		}
		int r = check_sends(s, i, t, b[EV_SEND], n[EV_SEND], b[EV_WIRE],
		                    n[EV_WIRE], 1, d);
		if (!r)
			r = check_sends(s, i, t, b[EV_SEND], n[EV_SEND],
			                b[EV_CONTROL], n[EV_CONTROL], 0, d);
		if (r)
			return r;
	}
	return IPU_OK;
}

/* Does [a, b) meet a window's blocks (those from the block of its first
 * cycle to the one of its last)? Windows are few: a scan. */
static int
meets_window(const Step *s, uint64_t a, uint64_t b)
{
	uint64_t B = s->block;
	for (int w = 0; w < s->nwin; w++) {
		uint64_t wa = s->win[w].at / B * B,
		         wb = (s->win[w].at + s->win[w].len + B - 1) / B * B;
		if (wa < b && a < wb)
			return 1;
	}
	return 0;
}

/* The block rules of the file's comment, on step s's sorted buckets. */
static int
check_blocks(const Lowered *l, const Step *s, int32_t i, const Events *e,
             Diag *d)
{
	uint64_t B = s->block;
	for (int w = 0; w < s->nwin; w++)
		if (!s->win[w].len ||
		    (w && s->win[w].at < s->win[w - 1].at + s->win[w - 1].len))
			return bad(
			    d, "schedule",
			    "step %d (%s): panel window %d at %llu, %llu "
			    "cycles",
			    i, s->what, w, (unsigned long long)s->win[w].at,
			    (unsigned long long)s->win[w].len);
	for (uint32_t t = 0; t < l->tiles; t++) {
		size_t key = (size_t)t * EV_KINDS;
		const Ev *snd = e->ev + e->start[key + EV_SEND],
		         *ctl = e->ev + e->start[key + EV_CONTROL];
		size_t ns = e->start[key + EV_SEND + 1] -
		            e->start[key + EV_SEND],
		       nc = e->start[key + EV_CONTROL + 1] -
		            e->start[key + EV_CONTROL];
		size_t k = 0; /* the first send whose hold ends after ctl[c] */
		for (size_t j = 0; j < ns; j++) {
			const Ev *x = &snd[j];
			uint64_t hold = xsched_hold((uint32_t)B, x->len);
			if (x->a % B || x->a < B ||
			    meets_window(s, x->a, x->a + hold) ||
			    (j + 1 < ns && snd[j + 1].a < x->a + hold))
				return bad(
				    d, "schedule",
				    "step %d (%s), tile %u: transfer %d's "
				    "send at %llu holds to %llu: off the "
				    "blocks of %llu, in a panel window or "
				    "over the next send",
				    i, s->what, t, x->xfer,
				    (unsigned long long)x->a,
				    (unsigned long long)(x->a + hold),
				    (unsigned long long)B);
			/* its instructions: at most xsched_send_max items,
			 * a new one at each control inside it */
			uint64_t at = x->a, last = x->a + x->len;
			size_t c = 0;
			while (c < nc && ctl[c].a <= x->a)
				c++;
			while (at < last) {
				uint64_t n = last - at;
				if (n > xsched_send_max((uint32_t)B))
					n = xsched_send_max((uint32_t)B);
				if (c < nc && ctl[c].a < at + n) {
					n = ctl[c].a - at;
					c++;
				}
				if (at + n < last && n % B)
					return bad(
					    d, "schedule",
					    "step %d (%s), tile %u: transfer "
					    "%d's send at %llu has an "
					    "instruction of %llu items at %llu",
					    i, s->what, t, x->xfer,
					    (unsigned long long)x->a,
					    (unsigned long long)n,
					    (unsigned long long)at);
				at += n;
			}
		}
		for (size_t c = 0; c < nc; c++) {
			uint64_t a = ctl[c].a, ba = a / B * B;
			while (k < ns && snd[k].a + xsched_hold((uint32_t)B,
			                                        snd[k].len) <=
			                     a)
				k++;
			int inside = k < ns && snd[k].a <= a;
			const char *why =
			    a < B                         ? "in block 0"
			    : meets_window(s, ba, ba + B) ? "in a panel window"
			    : c && ctl[c - 1].a / B * B == ba
			        ? "in a block with another control"
			    : inside && (a % B || a == snd[k].a ||
			                 a >= snd[k].a + snd[k].len)
			        ? "in a send, off its boundaries"
			        : NULL;
			if (why)
				return bad(
				    d, "schedule",
				    "step %d (%s), tile %u: transfer %d's "
				    "control at %llu: %s",
				    i, s->what, t, ctl[c].xfer,
				    (unsigned long long)a, why);
		}
	}
	return IPU_OK;
}

/* A reduction's first part on five workers (lower_step_vadd5): its calls
 * are five-worker vadd calls, and its exchange keeps the block rules
 * with nothing at or after the frame's close (the first worker's exit:
 * an endless window there). */
static int
check_vadd5(const Lowered *l, const Step *s, int32_t i, const Events *e,
            Diag *d)
{
	for (int k = 0; k < s->ncall; k++)
		if (s->call[k].args.kind != KC_VADD ||
		    !s->call[k].args.u.vadd.five)
			return bad(d, "schedule",
			           "step %d (%s), tile %u: a call beside the "
			           "exchange that is not a five-worker vadd",
			           i, s->what, s->call[k].tile);
	uint64_t lead, close, done;
	lower_vadd5_frame(l->chip, s, &lead, &close, &done);
	XWindow end = {close, XWINDOW_ENDLESS};
	Step v = *s;
	v.win = &end;
	v.nwin = 1;
	return check_blocks(l, &v, i, e, d);
}

int
lower_verify_schedule(const Lowered *l, Diag *d)
{
	size_t keys = (size_t)l->tiles * EV_KINDS;
	Events e = {.start = xmalloc((keys + 1) * sizeof *e.start),
	            .fill = xmalloc((keys + 1) * sizeof *e.fill)};
	int r = IPU_OK;
	for (int32_t i = 0; !r && i < l->nstep; i++) {
		const Step *s = &l->step[i];
		/* exchanges, and overlapped compute steps' (Step.gwin,
		 * lower_step_vadd5) */
		if ((s->kind != STEP_EXCHANGE && !s->gwin &&
		     !lower_step_vadd5(s)) ||
		    !s->nxfer)
			continue;
		r = check_transfer_times(l, i, d);
		if (!r) {
			step_events(l, s, &e);
			r = check_events(l, s, i, &e, d);
		}
		if (!r && lower_step_vadd5(s))
			r = check_vadd5(l, s, i, &e, d);
		else if (!r && s->block)
			r = check_blocks(l, s, i, &e, d);
	}
	free(e.ev);
	free(e.start);
	free(e.fill);
	return r;
}

/*
 * xsched.c - the exchange scheduler: when every transfer of a phase is
 * sent, and when each receiver switches its mux and pointer.
 *
 * Time is counted from the phase's start, when every tile's supervisor,
 * released by the sync that opens the phase and past the CSR write of its
 * count (codegen.c), starts the phase at the same cycle. Each tile's
 * supervisor is one timeline: a send occupies it for one cycle per word, a
 * receive control (delaypic, delayxpic) for the cycle it is issued in, and
 * the first XS_PREAMBLE cycles switch the mux off. A word sent at cycle
 * t + i is written at destination d at t + i + latency(src, d)
 * (chip_route_cycles); the pointer control (PIC) acts when issued, the mux
 * control (XPIC) for a word written at cycle w is issued at w - M(d)
 * (chip_xpic_cycles: the mux lead after the send, target/route.c).
 *
 * Greedy list scheduling in the order the lowering gave: each transfer
 * starts at the earliest cycle at which
 *   - its sender's timeline is free for the whole send;
 *   - at every destination it arrives after the previous transfer there
 *     ended, or right as it ends: the mux then switches from that source
 *     in one control (windows are appended in time order, so a later
 *     transfer never has to be fitted before an earlier one);
 *   - every destination has a free cycle for the pointer after its
 *     previous window's end, a free cycle for the mux M(d) before the
 *     first arrival (switching earlier would catch the end of the source's
 *     previous send to other tiles), and one M(d) before the cycle after
 *     the last arrival, to switch the mux off again (otherwise a later send
 *     of the same source, meant for others, would land too).
 * The phase ends when the last word has landed (the rule recv-land
 * after its write).
 *
 * A transfer whose destinations are whole pairs of tiles goes as 64-bit
 * items (Transfer.wide): half the cycles, but on the wires of the sender's
 * pair partner too, which sends nothing meanwhile (system.md: pair-shared
 * receives).
 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* Intervals [a, b) of a timeline, disjoint and added in time order (a
 * tile's sends start after its previous send ends; a partner's 64-bit
 * sends likewise), so searched by bisection. */
typedef struct {
	struct {
		uint64_t a, b;
	} * v;
	int n, cap;
} Spans;

static void
spans_add(Spans *s, uint64_t a, uint64_t b)
{
	GROW(s->v, s->n, s->cap);
	s->v[s->n].a = a;
	s->v[s->n].b = b;
	s->n++;
}

/* The first interval that ends after a. */
static int
spans_after(const Spans *s, uint64_t a)
{
	int lo = 0, hi = s->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (s->v[mid].b <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The end of an interval that [a, b) overlaps, or 0. The last interval
 * ends last: at or after its end (a search's usual case: a sender's next
 * send after its last), none without a bisection. */
static uint64_t
spans_conflict(const Spans *s, uint64_t a, uint64_t b)
{
	if (!s->n || s->v[s->n - 1].b <= a)
		return 0;
	int i = spans_after(s, a);
	return i < s->n && s->v[i].a < b ? s->v[i].b : 0;
}

/* One tile's supervisor timeline in a phase: its sends, the partner's
 * 64-bit sends (they use this tile's wires too) and the cycles of its
 * receive controls. A control may fall inside one of the tile's own sends
 * (codegen splits the send there and attaches the control to a sendpic),
 * but not on a send's first cycle, and two controls never share a cycle.
 * They are kept sorted and searched by bisection; they come nearly in
 * order (windows are in time order, a window's mux controls M(d) before
 * its writes), so keeping them sorted moves few. The cycles where a
 * control cannot go (a control's, a send's first) are also a bit each in
 * `taken`: the searches ask that at almost every cycle they try. */
typedef struct {
	Spans send;
	Spans wire; /* the pair partner's 64-bit sends */
	Spans hold; /* with blocks: each send's hold of the supervisor, to
	               the block boundary after its last item (same order as
	               send) */
	uint64_t *ctl;
	int nc, capc;
	uint64_t *taken; /* a bit per cycle, ntaken words; past them free */
	size_t ntaken;
	uint64_t rx_end;   /* end of the last receive window */
	uint64_t send_end; /* end of the last send */
} Timeline;

/* A phase beside five workers ("Blocks" below): the block, and the
 * panel windows' blocks. */
typedef struct {
	uint64_t b;    /* the block */
	Spans wspan;   /* each window's blocks: [its first, past its last) */
	uint64_t stop; /* the first block of an endless window
	                  (XWINDOW_ENDLESS), or UINT64_MAX: no send starts
	                  at or after it */
} Blocks;

static void
take(Timeline *tl, uint64_t c)
{
	size_t w = (size_t)(c / 64);
	if (w >= tl->ntaken) {
		size_t n = 2 * w + 64;
		tl->taken = xrealloc(tl->taken, n * sizeof *tl->taken);
		memset(tl->taken + tl->ntaken, 0,
		       (n - tl->ntaken) * sizeof *tl->taken);
		tl->ntaken = n;
	}
	tl->taken[w] |= 1ull << (c % 64);
}

static int
taken(const Timeline *tl, uint64_t c)
{
	size_t w = (size_t)(c / 64);
	return w < tl->ntaken && (tl->taken[w] >> (c % 64) & 1);
}

/* Controls are kept sorted; they come nearly in order. */
static void
add_control(Timeline *tl, uint64_t c)
{
	take(tl, c);
	GROW(tl->ctl, tl->nc, tl->capc);
	int i = tl->nc++;
	for (; i > 0 && tl->ctl[i - 1] > c; i--)
		tl->ctl[i] = tl->ctl[i - 1];
	tl->ctl[i] = c;
}

/* The index of tile tl's first control at or after c. */
static int
ctl_from(const Timeline *tl, uint64_t c)
{
	int lo = 0, hi = tl->nc;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (tl->ctl[mid] < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int
control_at(const Timeline *tl, uint64_t c)
{
	int i = ctl_from(tl, c);
	return i < tl->nc && tl->ctl[i] == c;
}

/* Can a control go at cycle c? `own` is the start of the send being
 * placed when the tile is its own destination (0: none). */
static int
control_free(const Timeline *tl, uint64_t own, uint64_t c)
{
	return c >= XS_PREAMBLE && !taken(tl, c) && !(own && c == own);
}

/* The receive controls of destination d for a window whose first word is
 * written at `first`: the pointer any time after the previous window and
 * by the first word, the mux so that it acts exactly at the first word
 * (earlier, the end of the source's previous send to other tiles would
 * still be passing) and off again the cycle after the last; m is d's
 * XPIC-to-write delay. A window that starts where the previous one ended
 * (first == rx_end) switches the mux straight from that one's source, in
 * the cycle of its mux-off: one control (codegen emits the switch alone),
 * as the vendor's receive windows go back to back (target/route.c). */
static int
controls_fit(const Timeline *d, uint64_t own, uint64_t first, uint32_t words,
             uint32_t m, uint64_t *ptr, uint64_t *mux, uint64_t *off)
{
	uint64_t lo = d->rx_end > XS_PREAMBLE ? d->rx_end : XS_PREAMBLE;
	if (first < lo || first < XS_PREAMBLE + m)
		return 0;
	uint64_t on = first - m, end = first + words - m, p = first;
	/* abutting the previous window, on is its mux-off's cycle, taken by
	 * that control, which becomes the switch */
	int on_free =
	    first == d->rx_end ? !(own && on == own) : control_free(d, own, on);
	if (!on_free || !control_free(d, own, end))
		return 0;
	/* the latest free cycle for the pointer (lo >= XS_PREAMBLE > 0) */
	while (p >= lo && (p == on || p == end || !control_free(d, own, p)))
		p--;
	if (p < lo)
		return 0;
	*ptr = p;
	*mux = on;
	*off = end;
	return 1;
}

enum { XS_MAX_TRIES = 1 << 20 };

/* The pair partner whose wires a 64-bit send from `tile` also uses, or
 * NULL if it is not in use (then it sends nothing). */
static Timeline *
partner_of(const Lowered *l, Timeline *tl, uint32_t tile)
{
	uint32_t mate = chip_pair(l->chip, tile);
	return mate < l->tiles ? &tl[mate] : NULL;
}

/* The route from a transfer's sender to one of its destinations: its
 * cycles (chip_route_cycles) and the destination's mux delay
 * (chip_xpic_cycles), found once; the search asks at every cycle it
 * tries. */
typedef struct {
	uint32_t tile, lat, m;
} Hop;

static void
hops_of(const Lowered *l, const Transfer *x, Hop *hop)
{
	for (uint32_t k = 0; k < x->ndst; k++) {
		uint32_t dst = x->dst_tile[k];
		hop[k] =
		    (Hop){.tile = dst,
		          .lat = chip_route_cycles(l->chip, x->src_tile, dst),
		          .m = chip_xpic_cycles(l->chip, dst)};
	}
}

/* The later of `end` and the cycle after the last of n items of x sent
 * from t lands at its farthest destination (hop: x's): a step's exchange
 * ends when its last transfer has landed. */
static uint64_t
landed(const Transfer *x, const Hop *hop, uint64_t t, uint64_t n, uint64_t end)
{
	for (uint32_t k = 0; k < x->ndst; k++)
		if (t + n + hop[k].lat > end)
			end = t + n + hop[k].lat;
	return end;
}

/* Can n items of x go in its width (x->wide) at all? A tile that receives
 * its own send has its mux controls at t + lat - m and t + lat + n - m:
 * when one of them is t itself, the cycle of the send, for every t, it
 * cannot. */
static int
width_fits(const Transfer *x, const Hop *hop, uint32_t n)
{
	for (uint32_t k = 0; k < x->ndst; k++)
		if (hop[k].tile == x->src_tile &&
		    (hop[k].lat == hop[k].m || hop[k].lat + n == hop[k].m))
			return 0;
	return 1;
}

/* A lower bound of x's start: its sender's last send and, at every
 * destination, the window after the last and its mux control (lat - M
 * before the send) inside the phase. */
static uint64_t
start_bound(const Timeline *tl, uint32_t src, const Hop *hop, uint32_t ndst)
{
	uint64_t need = tl[src].send_end;
	for (uint32_t k = 0; k < ndst; k++) {
		uint64_t lo = tl[hop[k].tile].rx_end;
		if (lo < XS_PREAMBLE + hop[k].m)
			lo = XS_PREAMBLE + hop[k].m;
		if (need + hop[k].lat < lo)
			need = lo - hop[k].lat;
	}
	return need;
}

/* What earliest_start reads of a transfer: its sender, its items in its
 * width, that width and its destinations' number. */
typedef struct {
	uint32_t src_tile, n, ndst;
	uint8_t wide;
} Send;

static Send
send_of(const Transfer *x)
{
	return (Send){x->src_tile, xfer_items(x), x->ndst, x->wide};
}

/* The earliest start at or after `from` for transfer x given the
 * timelines, or UINT64_MAX. Adding to the timelines only takes starts
 * away (a busier sender, later windows, more controls), so a start found
 * before, or start_bound, is a valid `from`: the search gives the same
 * start as from the preamble. The destination whose controls did not fit
 * is asked first at the next start (most starts fail there again). */
static uint64_t
earliest_start(const Lowered *l, Timeline *tl, const Send *x, const Hop *hop,
               uint64_t from)
{
	uint64_t t = from;
	uint32_t n = x->n, last = 0;
	const Timeline *s = &tl[x->src_tile];
	const Timeline *mate = x->wide ? partner_of(l, tl, x->src_tile) : NULL;
	uint64_t bound = start_bound(tl, x->src_tile, hop, x->ndst);
	for (int tries = 0; tries < XS_MAX_TRIES; tries++) {
		uint64_t need = t > s->send_end ? t : s->send_end, end;
		/* the wires: our sends, the partner's 64-bit sends and, for
		 * a 64-bit send, all of the partner's sends (an overlap moves
		 * the start to its end; the loop checks again from there) */
		const Spans *busy[] = {&s->send, &s->wire,
		                       mate ? &mate->send : NULL};
		for (int b = 0; b < 3; b++)
			if (busy[b] &&
			    (end = spans_conflict(busy[b], need, need + n)))
				need = end;
		/* a control at need (past the sender's sends, its only
		 * cycles taken are its controls') */
		if (taken(s, need))
			need++;
		if (need < bound)
			need = bound;
		if (need != t) {
			t = need;
			continue;
		}
		/* controls: try this start; on failure move a cycle on */
		int ok = 1;
		for (uint32_t i = 0; i < x->ndst && ok; i++) {
			uint32_t k = (last + i) % x->ndst;
			uint64_t p, m, o;
			ok = controls_fit(&tl[hop[k].tile],
			                  hop[k].tile == x->src_tile ? t : 0,
			                  t + hop[k].lat, n, hop[k].m, &p, &m,
			                  &o);
			if (!ok)
				last = k;
		}
		if (ok)
			return t;
		t++;
	}
	return UINT64_MAX;
}

static void commit(const Lowered *l, Timeline *tl, const Blocks *k, Transfer *x,
                   const Hop *hop, uint64_t t);

/* Can x go as 64-bit items? Its words pair up on 8-byte boundaries and
 * its destinations are whole pairs (a 64-bit item reaches both tiles of a
 * pair: sim/exchange.c). `mark` is a zeroed byte per tile, left zeroed. */
static int
wide_ok(const Lowered *l, const Transfer *x, uint8_t *mark)
{
	int ok = x->words % 2 == 0 && x->src.offset % 8 == 0;
	for (uint32_t k = 0; k < x->ndst; k++) {
		mark[x->dst_tile[k]] = 1;
		ok = ok && x->dst[k].offset % 8 == 0;
	}
	for (uint32_t k = 0; k < x->ndst && ok; k++) {
		uint32_t mate = chip_pair(l->chip, x->dst_tile[k]);
		ok = mate < l->tiles && mark[mate];
	}
	for (uint32_t k = 0; k < x->ndst; k++)
		mark[x->dst_tile[k]] = 0;
	return ok;
}

/* Give x 64-bit items if `wide` (wide_ok) and it can go so; 0 if it can
 * go in neither width. */
static int
set_width(Transfer *x, const Hop *hop, int wide)
{
	x->wide = (uint8_t)wide;
	if (x->wide && !width_fits(x, hop, xfer_items(x)))
		x->wide = 0; /* twice the items, 32-bit */
	return width_fits(x, hop, xfer_items(x));
}

/* The earliest start of x, 64-bit when `wide` (wide_ok) and it can go so
 * (x->wide says which width it got), or UINT64_MAX. */
static uint64_t
start_of(const Lowered *l, Timeline *tl, Transfer *x, const Hop *hop, int wide)
{
	if (!set_width(x, hop, wide))
		return UINT64_MAX;
	Send w = send_of(x);
	uint64_t t = earliest_start(l, tl, &w, hop, XS_PREAMBLE);
	if (t == UINT64_MAX && x->wide && set_width(x, hop, 0)) {
		w = send_of(x);
		t = earliest_start(l, tl, &w, hop, XS_PREAMBLE);
	}
	return t;
}

static void
free_timelines(Timeline *tl, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		free(tl[i].send.v);
		free(tl[i].wire.v);
		free(tl[i].hold.v);
		free(tl[i].ctl);
		free(tl[i].taken);
	}
	free(tl);
}

/* A step's transfers by sender: the senders in the order each first
 * appears, and each one's transfers in step order, idx[first[t] ..
 * first[t] + count[t]). */
typedef struct {
	uint32_t ns, *order, *count, *first, *idx;
} Senders;

static void
senders_of(const Lowered *l, const Step *s, Senders *g)
{
	g->ns = 0;
	g->count = xcalloc(l->tiles, sizeof *g->count);
	g->order = xmalloc((size_t)l->tiles * sizeof *g->order);
	g->first = xmalloc((size_t)l->tiles * sizeof *g->first);
	g->idx = xmalloc((size_t)s->nxfer * sizeof *g->idx + 1);
	for (int i = 0; i < s->nxfer; i++)
		if (g->count[s->xfer[i].src_tile]++ == 0)
			g->order[g->ns++] = s->xfer[i].src_tile;
	uint32_t *fill = xcalloc(l->tiles, sizeof *fill), at = 0;
	for (uint32_t k = 0; k < g->ns; k++) {
		g->first[g->order[k]] = at;
		at += g->count[g->order[k]];
	}
	for (int i = 0; i < s->nxfer; i++) {
		uint32_t t = s->xfer[i].src_tile;
		g->idx[g->first[t] + fill[t]++] = (uint32_t)i;
	}
	free(fill);
}

static void
senders_free(Senders *g)
{
	free(g->order);
	free(g->count);
	free(g->first);
	free(g->idx);
}

/* Put s's transfers in the order of `pick` (indices into s->xfer). */
static void
permute(Step *s, const uint32_t *pick)
{
	Transfer *out = xmalloc((size_t)s->nxfer * sizeof *out + 1);
	for (int i = 0; i < s->nxfer; i++)
		out[i] = s->xfer[pick[i]];
	memcpy(s->xfer, out, (size_t)s->nxfer * sizeof *out);
	free(out);
}

/* Order s's transfers round by round over the senders (in the order each
 * first appears), each sender's own order kept but rotated: the G senders
 * whose first transfer goes to the same tile start at q / G of the way
 * through their lists (q: their rank among those G). In-order greedy
 * scheduling then meets distinct receivers in most rounds. Without it, a
 * C block turned into whole rows has every column block's sender begin
 * with the same row's tile, and those sends queue one behind another
 * (SigLIP's scores before the softmax: 147,105 -> see docs/compiler.md). */
static int
interleave(const Lowered *l, Step *s)
{
	Senders g;
	senders_of(l, s, &g);
	/* rank of each sender among those sharing its first destination */
	uint32_t *group = xcalloc(l->tiles, sizeof *group),
	         *rank = xmalloc((size_t)l->tiles * sizeof *rank), most = 0;
	for (uint32_t k = 0; k < g.ns; k++) {
		uint32_t t = g.order[k];
		uint32_t to = s->xfer[g.idx[g.first[t]]].dst_tile[0];
		rank[t] = group[to]++;
		if (g.count[t] > most)
			most = g.count[t];
	}
	uint32_t *pick = xmalloc((size_t)s->nxfer * sizeof *pick + 1);
	int n = 0;
	for (uint32_t r = 0; r < most; r++)
		for (uint32_t k = 0; k < g.ns; k++) {
			uint32_t t = g.order[k], c = g.count[t];
			if (r >= c)
				continue;
			uint32_t to = s->xfer[g.idx[g.first[t]]].dst_tile[0];
			uint32_t rot =
			    (uint32_t)((uint64_t)rank[t] * c / group[to]);
			pick[n++] = g.idx[g.first[t] + (rot + r) % c];
		}
	permute(s, pick);
	free(pick);
	free(rank);
	free(group);
	senders_free(&g);
	return 0;
}

/* How far into each sender's list earliest_first looks. */
enum { XS_WINDOW = 64 };

/* A min-heap of senders keyed by a lower bound of their next start. */
typedef struct {
	uint64_t key;
	uint32_t rank; /* the sender's place in Senders.order: ties */
} Entry;

static int
entry_less(Entry a, Entry b)
{
	return a.key < b.key || (a.key == b.key && a.rank < b.rank);
}

static void
heap_push(Entry *h, uint32_t *n, Entry e)
{
	uint32_t i = (*n)++;
	for (; i > 0 && entry_less(e, h[(i - 1) / 2]); i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = e;
}

static Entry
heap_pop(Entry *h, uint32_t *n)
{
	Entry top = h[0], e = h[--*n];
	uint32_t i = 0;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && entry_less(h[c + 1], h[c]))
			c++;
		if (!entry_less(h[c], e))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = e;
	return top;
}

/* What dynamic_order knows of each transfer's start (earliest_start):
 * the start found last is a lower bound of the next, and the next while
 * none of the timelines it read (its sender's, the partner's for a
 * 64-bit send, its destinations') has changed since. A sender's window
 * asks again after each of its commits; with start_bound, most of its
 * transfers need no search to see that they cannot beat the best. By a
 * transfer's place in Senders.idx: a window's transfers lie together,
 * and so do these arrays, which the window reads rather than the
 * transfers themselves (spread over the step). */
typedef struct {
	uint64_t *at;      /* a lower bound: its start found last or more */
	uint32_t *seen;    /* the clock of that search (0: none) */
	uint8_t *wide;     /* its Transfer.wide */
	uint32_t *words;   /* its Transfer.words */
	Hop *hop;          /* its destinations', from hop[first[p]] */
	size_t *first;     /* where its hops start (and the last's end) */
	uint32_t *touched; /* per tile: the clock of its last change */
	uint32_t clock;    /* commits so far, from 1 */
} Known;

/* The start of transfer x at place p, from sender `src`, with what k
 * knows: in x->wide's width if it goes so, else 32-bit from then on. */
static uint64_t
known_start(const Lowered *l, Timeline *tl, Known *k, uint32_t src, Transfer *x,
            uint32_t p)
{
	const Hop *hop = k->hop + k->first[p];
	if (k->seen[p]) {
		uint32_t seen = k->seen[p],
		         ndst = (uint32_t)(k->first[p + 1] - k->first[p]);
		int same = k->touched[src] <= seen;
		uint32_t mate = chip_pair(l->chip, src);
		if (same && k->wide[p] && mate < l->tiles)
			same = k->touched[mate] <= seen;
		for (uint32_t d = 0; d < ndst && same; d++)
			same = k->touched[hop[d].tile] <= seen;
		if (same)
			return k->at[p];
	}
	k->seen[p] = k->clock;
	/* x itself (spread over the step) only if it must go 32-bit */
	uint32_t w = k->words[p];
	Send xs = {src, words_items(w, k->wide[p]),
	           (uint32_t)(k->first[p + 1] - k->first[p]), k->wide[p]};
	k->at[p] = earliest_start(l, tl, &xs, hop, k->at[p]);
	if (k->at[p] == UINT64_MAX && x->wide && set_width(x, hop, 0)) {
		xs = send_of(x);
		k->at[p] = earliest_start(l, tl, &xs, hop, XS_PREAMBLE);
		k->wide[p] = x->wide;
	}
	return k->at[p];
}

/* Order s's transfers as list scheduling on the fly places them. Each
 * sender looks at the first XS_WINDOW transfers left in its list and
 * takes the one that can start earliest (ties: the earlier in its list).
 * `global`: the transfer that starts earliest over all senders goes next
 * (ties: the earlier sender); otherwise the sender that is free first
 * takes its turn. The fixed orders leave a sender idle while the receiver
 * it meets next is still busy, though another of its receivers is free:
 * with windows of 64 words and routes of 18..164 cycles, a rotation's
 * rounds drift apart (docs/compiler.md, "Exchange scheduling rules").
 * The first way starves senders whose receivers others keep busy, the
 * second fills gaps worse; each wins on some steps. Each transfer goes
 * at the earliest start the timelines leave it when it is taken, as
 * schedule_order on the order found would place it: the step's cycles
 * and the transfers' schedule are then schedule_order's. 1 if some
 * transfer has no start. */
static int
dynamic_order(const Lowered *l, Step *s, int global)
{
	Senders g;
	senders_of(l, s, &g);
	Timeline *tl = xcalloc(l->tiles, sizeof *tl);
	uint8_t *mark = xcalloc(l->tiles, 1);
	size_t nx = (size_t)s->nxfer, nhop = 0;
	uint32_t *head = xcalloc(l->tiles, sizeof *head),
	         *pick = xmalloc(nx * sizeof *pick + 1),
	         *slot = xmalloc(nx * sizeof *slot + 1), nh = 0;
	Entry *h = xmalloc((size_t)g.ns * sizeof *h + 1);
	Known k = {.at = xmalloc(nx * sizeof *k.at + 1),
	           .seen = xcalloc(nx + 1, sizeof *k.seen),
	           .wide = xmalloc(nx + 1),
	           .words = xmalloc(nx * sizeof *k.words + 1),
	           .first = xmalloc((nx + 1) * sizeof *k.first),
	           .touched = xcalloc(l->tiles, sizeof *k.touched),
	           .clock = 1};
	for (size_t p = 0; p < nx; p++) {
		k.first[p] = nhop;
		nhop += s->xfer[g.idx[p]].ndst;
	}
	k.first[nx] = nhop;
	k.hop = xmalloc(nhop * sizeof *k.hop + 1);
	for (size_t p = 0; p < nx; p++) {
		Transfer *x = &s->xfer[g.idx[p]];
		Hop *hop = k.hop + k.first[p];
		hops_of(l, x, hop);
		k.at[p] = set_width(x, hop, wide_ok(l, x, mark)) ? XS_PREAMBLE
		                                                 : UINT64_MAX;
		k.wide[p] = x->wide;
		k.words[p] = x->words;
		slot[p] = (uint32_t)p;
	}
	int n = 0, bad = 0;
	uint64_t end = XS_PREAMBLE;
	for (uint32_t r = 0; r < g.ns; r++)
		heap_push(h, &nh, (Entry){.key = 0, .rank = r});
	while (nh && !bad) {
		Entry e = heap_pop(h, &nh);
		uint32_t t = g.order[e.rank], *list = slot + g.first[t];
		uint32_t left = g.count[t] - head[t], best = 0;
		uint64_t at = UINT64_MAX;
		/* none starts before the key: the first that does is best; one
		 * that cannot start before the best so far is not */
		for (uint32_t w = 0; w < left && w < XS_WINDOW && at > e.key;
		     w++) {
			uint32_t p = list[head[t] + w];
			if (k.at[p] >= at)
				continue;
			uint64_t b = start_bound(
			    tl, t, k.hop + k.first[p],
			    (uint32_t)(k.first[p + 1] - k.first[p]));
			if (b > k.at[p])
				k.at[p] = b;
			if (k.at[p] >= at)
				continue;
			uint64_t v =
			    known_start(l, tl, &k, t, &s->xfer[g.idx[p]], p);
			if (v < at) {
				at = v;
				best = w;
			}
		}
		if (at == UINT64_MAX) {
			bad = 1;
			break;
		}
		if (global && at > e.key) { /* others may start earlier */
			heap_push(h, &nh, (Entry){.key = at, .rank = e.rank});
			continue;
		}
		/* take it out of the window, keeping the others' order */
		uint32_t p = list[head[t] + best];
		for (uint32_t w = head[t] + best; w > head[t]; w--)
			list[w] = list[w - 1];
		head[t]++;
		Transfer *x = &s->xfer[g.idx[p]];
		const Hop *hop = k.hop + k.first[p];
		commit(l, tl, NULL, x, hop, at);
		end = landed(x, hop, at, xfer_items(x), end);
		/* the timelines commit changed */
		k.clock++;
		k.touched[x->src_tile] = k.clock;
		uint32_t mate = chip_pair(l->chip, x->src_tile);
		if (x->wide && mate < l->tiles)
			k.touched[mate] = k.clock;
		for (uint32_t d = 0; d < x->ndst; d++)
			k.touched[hop[d].tile] = k.clock;
		pick[n++] = g.idx[p];
		if (head[t] < g.count[t])
			heap_push(
			    h, &nh,
			    (Entry){.key = tl[t].send_end, .rank = e.rank});
	}
	if (!bad) {
		permute(s, pick);
		s->cycles = end + chip_rule(l->chip, TIMING_RECV_LAND);
	}
	free(k.at);
	free(k.seen);
	free(k.wide);
	free(k.words);
	free(k.first);
	free(k.hop);
	free(k.touched);
	free(slot);
	free(h);
	free(pick);
	free(head);
	free_timelines(tl, l->tiles);
	free(mark);
	senders_free(&g);
	return bad;
}

static int
schedule_order(const Lowered *l, Step *s, Diag *d)
{
	Timeline *tl = xcalloc(l->tiles, sizeof *tl);
	uint8_t *mark = xcalloc(l->tiles, 1);
	uint64_t end = XS_PREAMBLE;
	Hop *hop = NULL;
	uint32_t nhop = 0;
	for (int i = 0; i < s->nxfer; i++) {
		Transfer *x = &s->xfer[i];
		if (x->src_tile >= l->tiles || x->words == 0) {
			free_timelines(tl, l->tiles);
			free(mark);
			free(hop);
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "%s: transfer %d from tile %u of %u "
			                "words",
			                s->what, i, x->src_tile, x->words);
		}
		if (x->ndst > nhop) {
			nhop = x->ndst;
			hop = xrealloc(hop, nhop * sizeof *hop);
		}
		hops_of(l, x, hop);
		uint64_t t = start_of(l, tl, x, hop, wide_ok(l, x, mark));
		if (t == UINT64_MAX) {
			free_timelines(tl, l->tiles);
			free(mark);
			free(hop);
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "%s: the exchange scheduler found no "
			                "start for transfer %d from tile %u",
			                s->what, i, x->src_tile);
		}
		commit(l, tl, NULL, x, hop, t);
		end = landed(x, hop, t, xfer_items(x), end);
	}
	free_timelines(tl, l->tiles);
	free(mark);
	free(hop);
	s->cycles = end + chip_rule(l->chip, TIMING_RECV_LAND);
	return IPU_OK;
}

/* The receive controls of every transfer, in step order: the scheduler
 * writes them into arrays a copy of the step's transfers shares. */
static uint64_t *
save_controls(const Step *s)
{
	size_t n = 0;
	for (int i = 0; i < s->nxfer; i++)
		n += 3 * (size_t)s->xfer[i].ndst;
	uint64_t *v = xmalloc((n + 1) * sizeof *v), *p = v;
	for (int i = 0; i < s->nxfer; i++) {
		const Transfer *x = &s->xfer[i];
		for (uint32_t k = 0; k < x->ndst; k++) {
			*p++ = x->ptr_at[k];
			*p++ = x->mux_at[k];
			*p++ = x->off_at[k];
		}
	}
	return v;
}

static void
restore_controls(Step *s, const uint64_t *p)
{
	for (int i = 0; i < s->nxfer; i++) {
		Transfer *x = &s->xfer[i];
		for (uint32_t k = 0; k < x->ndst; k++) {
			x->ptr_at[k] = *p++;
			x->mux_at[k] = *p++;
			x->off_at[k] = *p++;
		}
	}
}

static int
sender_first(const Lowered *l, Step *s)
{
	return dynamic_order(l, s, 0);
}

static int
earliest_first(const Lowered *l, Step *s)
{
	return dynamic_order(l, s, 1);
}

/* Rounds of lead_first: receivers' windows it puts first. */
enum { XS_LEAD_ROUNDS = 4 };

/* Interleaved, then XS_LEAD_ROUNDS windows of each receiver moved to the
 * front: in each round every receiver (in tile order) takes, among its
 * transfers not yet taken from senders not yet taken in the round, the
 * one of the shortest mux lead (lat - M). A receiver's first window
 * otherwise often comes from a sender whose words reach it 80 to 95
 * cycles after its mux could switch (LayerNorm's rows: the sender's
 * first send, at cycle 3), while others, short-lead, would have fed it
 * from the preamble (docs/compiler.md, "Lead first"). */
static int
lead_first(const Lowered *l, Step *s)
{
	interleave(l, s);
	/* each receiver's transfers, in order: in[at[d] .. at[d + 1]) */
	uint32_t *at = xcalloc((size_t)l->tiles + 1, sizeof *at);
	for (int i = 0; i < s->nxfer; i++)
		for (uint32_t k = 0; k < s->xfer[i].ndst; k++)
			at[s->xfer[i].dst_tile[k] + 1]++;
	for (uint32_t t = 0; t < l->tiles; t++)
		at[t + 1] += at[t];
	uint32_t *in = xmalloc((size_t)at[l->tiles] * sizeof *in + 1),
	         *fill = xcalloc(l->tiles, sizeof *fill),
	         *pick = xmalloc((size_t)s->nxfer * sizeof *pick + 1);
	for (int i = 0; i < s->nxfer; i++)
		for (uint32_t k = 0; k < s->xfer[i].ndst; k++) {
			uint32_t d = s->xfer[i].dst_tile[k];
			in[at[d] + fill[d]++] = (uint32_t)i;
		}
	uint8_t *front = xcalloc((size_t)s->nxfer + 1, 1),
	        *sent = xmalloc(l->tiles), *fed = xmalloc(l->tiles);
	int n = 0;
	for (int round = 0; round < XS_LEAD_ROUNDS; round++) {
		memset(sent, 0, l->tiles);
		memset(fed, 0, l->tiles);
		for (uint32_t d = 0; d < l->tiles; d++) {
			int64_t lead = INT64_MAX;
			int best = -1;
			for (uint32_t j = at[d]; j < at[d + 1] && !fed[d];
			     j++) {
				const Transfer *x = &s->xfer[in[j]];
				if (front[in[j]] || sent[x->src_tile])
					continue;
				int64_t v =
				    (int64_t)chip_route_cycles(l->chip,
				                               x->src_tile, d) -
				    (int64_t)chip_xpic_cycles(l->chip, d);
				if (v < lead) {
					lead = v;
					best = (int)in[j];
				}
			}
			if (best < 0)
				continue;
			const Transfer *x = &s->xfer[best];
			front[best] = 1;
			pick[n++] = (uint32_t)best;
			sent[x->src_tile] = 1;
			for (uint32_t k = 0; k < x->ndst; k++)
				fed[x->dst_tile[k]] = 1;
		}
	}
	for (int i = 0; i < s->nxfer; i++)
		if (!front[i])
			pick[n++] = (uint32_t)i;
	permute(s, pick);
	free(front);
	free(sent);
	free(fed);
	free(pick);
	free(fill);
	free(in);
	free(at);
	return 0;
}

/* A step's length with the busiest tile's sends, or its receive windows
 * at XS_RECV_GAP apart, after the preamble: a bound where windows keep
 * that gap, and the threshold that decides whether the costlier orders
 * are tried (with back-to-back windows counted the So400m f8 tower tried
 * them three times as long for 0.02% fewer cycles). */
static int wide_ok(const Lowered *l, const Transfer *x, uint8_t *mark);

/* The bound of n transfers: in the widths the schedule set, or (`rule`)
 * 64-bit wherever wide_ok allows; *receiving (if not NULL) 1 where a
 * receiver is the busiest tile. */
static uint64_t
bound_of(const Lowered *l, const Transfer *xs, int n, int rule, int *receiving)
{
	uint64_t *busy = xcalloc(2 * (size_t)l->tiles, sizeof *busy), most = 0;
	uint8_t *mark = rule ? xcalloc(l->tiles, 1) : NULL;
	for (int i = 0; i < n; i++) {
		const Transfer *x = &xs[i];
		uint64_t items = !rule                 ? xfer_items(x)
		                 : wide_ok(l, x, mark) ? x->words / 2
		                                       : x->words;
		busy[x->src_tile] += items;
		for (uint32_t k = 0; k < x->ndst; k++)
			busy[l->tiles + x->dst_tile[k]] += items + XS_RECV_GAP;
	}
	for (size_t t = 0; t < 2 * (size_t)l->tiles; t++)
		if (busy[t] > most) {
			most = busy[t];
			if (receiving)
				*receiving = t >= l->tiles;
		}
	free(busy);
	free(mark);
	return XS_PREAMBLE + most;
}

static uint64_t
step_bound(const Lowered *l, const Step *s, int *receiving)
{
	return bound_of(l, s->xfer, s->nxfer, 0, receiving);
}

uint64_t
xsched_bound(const Lowered *l, const Transfer *x, int n)
{
	return bound_of(l, x, n, 1, NULL);
}

/* A step's schedule in the order the lowering gave, interleaved, lead
 * first, sender first and earliest first, keeping the shortest:
 * interleaving cut SigLIP's scores-into-rows exchange 34-fold but
 * lengthens some GEMM chunk exchanges (a 4096^3 f16 GEMM by 11% overall),
 * and no order is always the best. Lead first is for receivers' waits: it
 * is tried where a receiver is the busiest tile. The two built on the
 * fly cost the most compile time: they are tried only when the better
 * fixed order is more than the longest route past the bound (and are not
 * scheduled again: dynamic_order's schedule is schedule_order's). */
static int
schedule_fresh(const Lowered *l, Step *s, Diag *d)
{
	enum { LEAD_FIRST = 2, DYNAMIC = 3 };
	static int (*const reorder[])(const Lowered *, Step *) = {
	    NULL, interleave, lead_first, sender_first, earliest_first};
	if (!s->nxfer) /* nothing to reorder: a GEMM superstep whose A is read
	                  in place and whose B is local has no transfers */
		return schedule_order(l, s, d);
	size_t bytes = (size_t)s->nxfer * sizeof *s->xfer;
	Transfer *given = xmalloc(bytes), *best = xmalloc(bytes);
	memcpy(given, s->xfer, bytes);
	uint64_t cycles = UINT64_MAX, *ctl = NULL, good = 0;
	int receiving = 0;
	for (size_t r = 0; r < sizeof reorder / sizeof *reorder &&
	                   (r < DYNAMIC || cycles > good);
	     r++) {
		memcpy(s->xfer, given, bytes);
		Diag dd;
		if ((r == LEAD_FIRST && !receiving) ||
		    (reorder[r] && reorder[r](l, s)))
			continue;
		int moved = !r; /* each transfer owns its destination arrays */
		for (int i = 0; i < s->nxfer && !moved; i++)
			moved = given[i].dst_tile != s->xfer[i].dst_tile;
		/* a dynamic order is scheduled as it is found (dynamic_order),
		 * once the transfers are known good (an order scheduled) */
		int timed = r >= DYNAMIC && cycles != UINT64_MAX;
		if (!moved || (!timed && schedule_order(l, s, r ? &dd : d)) ||
		    s->cycles >= cycles)
			continue;
		cycles = s->cycles;
		if (!good)
			good = step_bound(l, s, &receiving) +
			       chip_route_max_cycles(l->chip) +
			       chip_rule(l->chip, TIMING_RECV_LAND);
		memcpy(best, s->xfer, bytes);
		free(ctl);
		ctl = save_controls(s);
	}
	int found = ctl != NULL;
	if (found) {
		memcpy(s->xfer, best, bytes);
		restore_controls(s, ctl);
		s->cycles = cycles;
	}
	free(ctl);
	free(best);
	free(given);
	return found ? IPU_OK : IPU_EINVAL;
}

/* ---- Schedules kept for the whole compile ---------------------------- */

/*
 * schedule_step's result is a function of what it reads alone: the chip,
 * the tiles in use and, per transfer in the order given, its sender, its
 * words, its destinations and the 8-byte alignment of its offsets
 * (wide_ok); not its buffers, which nothing in the search compares. The
 * drafts of a compile and its two compiles (with and without the
 * overlapped GEMM superstep, in two threads) schedule many of the same
 * steps, so the schedules are kept by that key for the compile
 * (XschedCache, made by compile_graph): whichever draft or thread
 * schedules a step first, every later one gets the same schedule, the one
 * it would have found itself. A schedule is kept as the order it gave (by
 * place in the order given) and each transfer's width, join, start and
 * controls; a step that found none is not kept (its error is said again).
 */
struct XschedCache {
	pthread_mutex_t lock;
	const Chip *chip;
	PlanMemo *index; /* key -> place in kept */
	uint64_t **kept;
	size_t n, cap;
	uint64_t hits; /* schedules given from kept */
};

XschedCache *
xsched_cache_new(const Chip *chip)
{
	XschedCache *c = xcalloc(1, sizeof *c);
	pthread_mutex_init(&c->lock, NULL);
	c->chip = chip;
	c->index = plan_memo_new();
	return c;
}

void
xsched_cache_free(XschedCache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->kept[i]);
	free(c->kept);
	plan_memo_free(c->index);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* The key of step s as given: its words in *n. */
static uint32_t *
cache_key(const Lowered *l, const Step *s, size_t *n)
{
	size_t len = 2;
	for (int i = 0; i < s->nxfer; i++)
		len += 4 + 2 * (size_t)s->xfer[i].ndst;
	uint32_t *k = xmalloc(len * sizeof *k), *p = k;
	*p++ = l->tiles;
	*p++ = (uint32_t)s->nxfer;
	for (int i = 0; i < s->nxfer; i++) {
		const Transfer *x = &s->xfer[i];
		*p++ = x->src_tile;
		*p++ = x->words;
		*p++ = x->src.offset % 8;
		*p++ = x->ndst;
		for (uint32_t j = 0; j < x->ndst; j++) {
			*p++ = x->dst_tile[j];
			*p++ = x->dst[j].offset % 8;
		}
	}
	*n = len;
	return k;
}

/* The schedule kept for key k, or NULL (the kept ones are never changed
 * or freed before the cache). */
static const uint64_t *
cache_get(XschedCache *c, const uint32_t *k, size_t n)
{
	uint64_t at;
	const uint64_t *v = NULL;
	pthread_mutex_lock(&c->lock);
	if (plan_memo_get(c->index, k, n, &at)) {
		v = c->kept[at];
		c->hits++;
	}
	pthread_mutex_unlock(&c->lock);
	return v;
}

uint64_t
xsched_cache_hits(XschedCache *c)
{
	pthread_mutex_lock(&c->lock);
	uint64_t h = c->hits;
	pthread_mutex_unlock(&c->lock);
	return h;
}

/* A transfer's arrays (Transfer.ptr_at: each transfer owns its own) and
 * its place in the order given. */
typedef struct {
	const uint64_t *at;
	uint32_t place;
} Own;

static int
own_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const Own *)a)->at,
	          y = (uintptr_t)((const Own *)b)->at;
	return (x > y) - (x < y);
}

/* Step s as scheduled from `given` (its transfers in the order given,
 * before scheduling) kept under key k: [cycles; per transfer in the
 * order found, its place in `given` | wide << 32 | join << 40, its start,
 * and its destinations' pointer, mux and mux-off cycles]. */
static void
cache_put(XschedCache *c, const uint32_t *k, size_t n, const Step *s,
          const Transfer *given)
{
	size_t len = 1, nx = (size_t)s->nxfer;
	Own *own = xmalloc(nx * sizeof *own + 1);
	for (size_t i = 0; i < nx; i++) {
		own[i] = (Own){given[i].ptr_at, (uint32_t)i};
		len += 2 + 3 * (size_t)s->xfer[i].ndst;
	}
	qsort(own, nx, sizeof *own, own_cmp);
	uint64_t *v = xmalloc(len * sizeof *v), *p = v;
	*p++ = s->cycles;
	for (size_t i = 0; i < nx; i++) {
		const Transfer *x = &s->xfer[i];
		Own key = {x->ptr_at, 0};
		const Own *o = bsearch(&key, own, nx, sizeof *own, own_cmp);
		*p++ = o->place | (uint64_t)x->wide << 32 |
		       (uint64_t)x->join << 40;
		*p++ = x->start;
		for (uint32_t j = 0; j < x->ndst; j++) {
			*p++ = x->ptr_at[j];
			*p++ = x->mux_at[j];
			*p++ = x->off_at[j];
		}
	}
	free(own);
	pthread_mutex_lock(&c->lock);
	uint64_t at;
	if (plan_memo_get(c->index, k, n, &at)) {
		free(v); /* another thread's, the same */
	} else {
		GROW(c->kept, c->n, c->cap);
		plan_memo_put(c->index, k, n, c->n);
		c->kept[c->n++] = v;
	}
	pthread_mutex_unlock(&c->lock);
}

/* A copy of step s's transfers as given (before scheduling reorders and
 * splits them). */
static Transfer *
xfers_given(const Step *s)
{
	size_t bytes = (size_t)s->nxfer * sizeof *s->xfer;
	Transfer *given = xmalloc(bytes + 1);
	memcpy(given, s->xfer, bytes);
	return given;
}

/* Step s (as given) takes schedule v (cache_put's). */
static void
cache_apply(Step *s, const uint64_t *v)
{
	Transfer *given = xfers_given(s);
	s->cycles = *v++;
	for (int i = 0; i < s->nxfer; i++) {
		Transfer *x = &s->xfer[i];
		*x = given[*v & 0xffffffffu];
		x->wide = (uint8_t)(*v >> 32);
		x->join = (uint8_t)(*v++ >> 40);
		x->start = *v++;
		for (uint32_t j = 0; j < x->ndst; j++) {
			x->ptr_at[j] = *v++;
			x->mux_at[j] = *v++;
			x->off_at[j] = *v++;
		}
	}
	free(given);
}

/* schedule_fresh, or the schedule kept for the same key (Lowered.xcache) */
static int
schedule_step(const Lowered *l, Step *s, Diag *d)
{
	XschedCache *c = l->xcache;
	if (!c || c->chip != l->chip || !s->nxfer)
		return schedule_fresh(l, s, d);
	size_t n;
	uint32_t *k = cache_key(l, s, &n);
	const uint64_t *v = cache_get(c, k, n);
	if (v) {
		cache_apply(s, v);
		free(k);
		return IPU_OK;
	}
	Transfer *given = xfers_given(s);
	int r = schedule_fresh(l, s, d);
	if (!r)
		cache_put(c, k, n, s, given);
	free(given);
	free(k);
	return r;
}

uint64_t
xsched_step_cycles(const Lowered *l, Step *s)
{
	Diag d;
	return schedule_step(l, s, &d) ? UINT64_MAX : s->cycles;
}

/* ---- Blocks: a phase beside five workers ------------------------------- */

/*
 * With five workers running, the supervisor issues in one slot of six
 * (isa.md 3.1), so a phase that runs beside them (lower_step_blocks,
 * docs/bench-gemm.md, "The third step") is scheduled on each tile's
 * supervisor timeline in blocks of Step.block cycles from cycle 0:
 *   - block 0 switches the mux off (the preamble): every event is later;
 *   - a send starts on a block boundary and holds its sender to the
 *     boundary after its last item (xsched_hold), as sends of at most
 *     xsched_send_max items (60), which keep the issue on the boundaries;
 *   - a receive control (pointer, mux on, mux off) takes the block its
 *     cycle is in (a delaypic/delayxpic issued at the block's start with
 *     the gap to its cycle): no two controls share a block; inside one of
 *     the tile's own sends a control goes only on a block boundary after
 *     the send's first item and before its last (a sendpic's issue);
 *   - no block that crosses a panel window [at, at + len) is used.
 * The wires, the receive windows and the mux leads are exact as in a
 * phase without blocks. Transfers are placed in the order given; one
 * that does not fit before its sender's next obstacle (a window, its
 * next send, a control off the boundaries, its wires) is split: the items
 * that fit go there and the rest becomes the step's next transfer (the
 * words after, at the offsets after), placed next. The two are joined
 * (Transfer.join): the receivers' mux stays on the sender from the one
 * to the other, which nothing comes between (the rest is the sender's
 * next send and every receiver's next window), so the piece has no
 * mux-off and the rest no pointer or mux-on. A piece then ends at the
 * sender's obstacle, a panel window's block, and the rest starts after
 * it, where a mux-off and mux-on at each receiver would have to fall
 * outside the blocks of all of them: with the receivers' mux leads (lat
 * - m) some 100 cycles apart, that cost about 100 cycles at each panel
 * block (docs/bench-siglip.md, "QK^T's host in fewer panels"). A
 * transfer (and so a piece) has at least a block of items: with fewer,
 * its mux controls could fall in one block.
 */

enum {
	XS_MIN_PIECE = 4, /* blocks of items a split-off piece has at least:
	                     each piece costs its receivers three controls */
};

static uint64_t
blk_up(const Blocks *k, uint64_t c)
{
	return align_up(c, k->b);
}

static uint64_t
blk_down(const Blocks *k, uint64_t c)
{
	return c / k->b * k->b;
}

/* The end of the blocks of a window that [a, b) overlaps, or 0. */
static uint64_t
win_conflict(const Blocks *k, uint64_t a, uint64_t b)
{
	return spans_conflict(&k->wspan, a, b);
}

/* The first block of the next window that does not cover a. */
static uint64_t
win_next(const Blocks *k, uint64_t a)
{
	int i = spans_after(&k->wspan, a);
	return i < k->wspan.n ? k->wspan.v[i].a : UINT64_MAX;
}

/* Can a control go at cycle c of tile tl? own_a, own_n: the send being
 * placed when the tile is its own destination (own_n 0: none). */
static int
ctl_free_b(const Timeline *tl, const Blocks *k, uint64_t own_a, uint64_t own_n,
           uint64_t c)
{
	if (c < k->b)
		return 0;
	uint64_t ba = blk_down(k, c), bb = ba + k->b;
	if (win_conflict(k, ba, bb))
		return 0;
	int j = ctl_from(tl, ba);
	if (j < tl->nc && tl->ctl[j] < bb)
		return 0; /* the block has its control */
	if (own_n && c >= own_a && c < own_a + xsched_hold(k->b, own_n))
		return c % k->b == 0 && c > own_a && c < own_a + own_n;
	int i = spans_after(&tl->hold, c);
	if (i < tl->hold.n && tl->hold.v[i].a <= c)
		return c % k->b == 0 && c > tl->send.v[i].a &&
		       c < tl->send.v[i].b;
	return 1;
}

/* The receive controls of a destination, as controls_fit, by the block
 * rules: 0 if they fit, 1 if the mux-on or the pointer does not (a later
 * start may help), 2 if only the mux-off does not (fewer items may). A
 * piece joined to the previous one (join XJOIN_PREV) has no pointer or
 * mux-on (*ptr is then the mux-on's cycle), one joined to the next
 * (XJOIN_NEXT) no mux-off. */
static int
controls_fit_b(const Timeline *d, const Blocks *k, uint64_t own_a,
               uint64_t own_n, uint64_t first, uint32_t n, uint32_t m, int join,
               uint64_t *ptr, uint64_t *mux, uint64_t *off)
{
	uint64_t lo = d->rx_end > k->b ? d->rx_end : k->b;
	if (first < lo || first < k->b + m)
		return 1;
	uint64_t on = first - m, end = first + n - m, p = first;
	int has_on = !(join & XJOIN_PREV), has_off = !(join & XJOIN_NEXT);
	if (has_on && !ctl_free_b(d, k, own_a, own_n, on))
		return 1;
	if (has_off && ((has_on && blk_down(k, on) == blk_down(k, end)) ||
	                !ctl_free_b(d, k, own_a, own_n, end)))
		return 2;
	/* the latest free block for the pointer (lo >= k->b > 0) */
	while (has_on && p >= lo &&
	       (blk_down(k, p) == blk_down(k, on) ||
	        (has_off && blk_down(k, p) == blk_down(k, end)) ||
	        !ctl_free_b(d, k, own_a, own_n, p)))
		p--;
	if (p < lo)
		return 1;
	*ptr = has_on ? p : on;
	*mux = on;
	*off = end;
	return 0;
}

/* At most n of x's `all` items as a piece: all of them, or a block fewer
 * at most, with both parts able to go on their own (width_fits: a piece
 * put back into its exchange is scheduled there without blocks); 0 if
 * none. */
static uint64_t
piece_items(const Transfer *x, const Hop *hop, uint64_t n, uint32_t all,
            uint32_t b)
{
	if (n < all && n > all - b)
		n = all - b;
	while (n && n < all &&
	       (!width_fits(x, hop, (uint32_t)n) ||
	        !width_fits(x, hop, all - (uint32_t)n)))
		n--;
	return n;
}

/* The earliest start at or after `from` of x's first *piece items by the
 * block rules, or UINT64_MAX; *piece is all of x's items or, when the
 * rest does not fit there, fewer (at least `least` items, and a block
 * left over). */
static uint64_t
place_b(const Lowered *l, Timeline *tl, const Blocks *k, const Transfer *x,
        const Hop *hop, uint64_t from, uint32_t least, uint32_t *piece)
{
	uint32_t all = xfer_items(x), b = (uint32_t)k->b;
	if (least > all)
		least = all;
	const Timeline *s = &tl[x->src_tile];
	const Timeline *mate = x->wide ? partner_of(l, tl, x->src_tile) : NULL;
	/* the wires: the partner's 64-bit sends and, for a 64-bit send, all
	 * of the partner's sends */
	const Spans *busy[] = {&s->wire, mate ? &mate->send : NULL};
	uint64_t t = blk_up(k, from > k->b ? from : k->b);
	for (int tries = 0; tries < XS_MAX_TRIES; tries++) {
		uint64_t need = t > s->send_end ? t : s->send_end, e;
		need = blk_up(k, need);
		if ((e = win_conflict(k, need, need + b)))
			need = e;
		if ((e = spans_conflict(&s->hold, need, need + b)))
			need = e;
		int j = ctl_from(s, need);
		if (j < s->nc && s->ctl[j] < need + b)
			need += b;
		for (int w = 0; w < 2; w++)
			if (busy[w] &&
			    (e = spans_conflict(busy[w], need, need + 1)))
				need = blk_up(k, e);
		for (uint32_t d = 0; d < x->ndst; d++) {
			uint64_t lo = tl[hop[d].tile].rx_end + XS_RECV_GAP;
			if (lo < k->b + hop[d].m)
				lo = k->b + hop[d].m;
			if (need + hop[d].lat < lo)
				need = blk_up(k, lo - hop[d].lat);
		}
		if (need >= k->stop)
			return UINT64_MAX; /* it would follow the endless
			                      window */
		if (need != t) {
			t = need;
			continue;
		}
		/* the room before the sender's next obstacle */
		uint64_t lim = t + all, c;
		int i = spans_after(&s->hold, t);
		if (i < s->hold.n && s->hold.v[i].a < lim)
			lim = s->hold.v[i].a;
		if ((c = win_next(k, t)) < lim)
			lim = c;
		/* (a control off the boundaries after the last item but in
		 * its hold's last block counts too) */
		for (j = ctl_from(s, t + 1);
		     j < s->nc && s->ctl[j] < blk_up(k, lim); j++)
			if (s->ctl[j] % b) {
				lim = blk_down(k, s->ctl[j]);
				break;
			}
		for (int w = 0; w < 2; w++)
			if (busy[w] &&
			    (i = spans_after(busy[w], t)) < busy[w]->n &&
			    busy[w]->v[i].a < lim)
				lim = busy[w]->v[i].a;
		uint64_t n = piece_items(x, hop, lim - t, all, b);
		/* the receivers: a mux-off that does not fit takes items
		 * off the piece, which is then joined to its rest (no
		 * mux-off) */
		int ok = n >= least;
		for (uint32_t d = 0; d < x->ndst && ok;) {
			uint64_t p, m, o;
			int own = hop[d].tile == x->src_tile;
			int join =
			    (x->join & XJOIN_PREV) | (n < all ? XJOIN_NEXT : 0);
			int r = controls_fit_b(&tl[hop[d].tile], k, own ? t : 0,
			                       own ? n : 0, t + hop[d].lat,
			                       (uint32_t)n, hop[d].m, join, &p,
			                       &m, &o);
			if (!r) {
				d++;
				continue;
			}
			if (r == 1 || n <= least) {
				ok = 0;
				break;
			}
			n = piece_items(x, hop, n - 1, all, b);
			d = 0; /* again with the shorter piece */
		}
		if (ok && n >= least) {
			*piece = (uint32_t)n;
			return t;
		}
		t += b;
	}
	return UINT64_MAX;
}

/* Puts x at start t on the timelines: its sender's send (with blocks, k
 * not NULL: and its hold) and each destination's window and controls. */
static void
commit(const Lowered *l, Timeline *tl, const Blocks *k, Transfer *x,
       const Hop *hop, uint64_t t)
{
	uint32_t n = xfer_items(x);
	Timeline *s = &tl[x->src_tile], *mate;
	x->start = t;
	if (!k)
		x->join = 0;
	spans_add(&s->send, t, t + n);
	take(s, t);
	s->send_end = t + n;
	if (k) {
		s->send_end = t + xsched_hold((uint32_t)k->b, n);
		spans_add(&s->hold, t, s->send_end);
	}
	if (x->wide && (mate = partner_of(l, tl, x->src_tile)))
		spans_add(&mate->wire, t, t + n);
	for (uint32_t j = 0; j < x->ndst; j++) {
		Timeline *d = &tl[hop[j].tile];
		uint64_t first = t + hop[j].lat;
		/* the send is on the sender's timeline now: own = 0 */
		if (k)
			controls_fit_b(d, k, 0, 0, first, n, hop[j].m, x->join,
			               &x->ptr_at[j], &x->mux_at[j],
			               &x->off_at[j]);
		else
			controls_fit(d, 0, first, n, hop[j].m, &x->ptr_at[j],
			             &x->mux_at[j], &x->off_at[j]);
		if (!(x->join & XJOIN_PREV)) {
			add_control(d, x->ptr_at[j]);
			if (!control_at(d, x->mux_at[j])) /* else the switch
			                                     from the window
			                                     before */
				add_control(d, x->mux_at[j]);
		}
		if (!(x->join & XJOIN_NEXT))
			add_control(d, x->off_at[j]);
		d->rx_end = first + n;
	}
}

/* Split transfer i of s after its first `items` items: the rest becomes
 * transfer i + 1, joined to it (placed next, so that nothing comes
 * between them at the sender or a receiver). */
static void
split_rest(Step *s, int i, uint32_t items)
{
	Transfer *x = &s->xfer[i];
	uint32_t w = x->wide ? 2 * items : items, ndst = x->ndst;
	Transfer *r = lower_transfer(
	    s, x->src_tile, (BufRef){x->src.buf, x->src.offset + 4 * w},
	    x->words - w, ndst);
	x = &s->xfer[i]; /* the array may have moved */
	for (uint32_t j = 0; j < ndst; j++) {
		r->dst_tile[j] = x->dst_tile[j];
		r->dst[j] = (BufRef){x->dst[j].buf, x->dst[j].offset + 4 * w};
	}
	x->words = w;
	x->join |= XJOIN_NEXT;
	r->wrap = x->wrap;
	r->join = XJOIN_PREV;
	Transfer rest = *r;
	memmove(&s->xfer[i + 2], &s->xfer[i + 1],
	        (size_t)(s->nxfer - 2 - i) * sizeof *s->xfer);
	s->xfer[i + 1] = rest;
}

static int
schedule_blocks(const Lowered *l, Step *s, Diag *d)
{
	for (int i = 0; i < s->nwin; i++)
		if (!s->win[i].len ||
		    (i && s->win[i].at < s->win[i - 1].at + s->win[i - 1].len))
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "%s: panel window %d at %llu (%llu "
			    "cycles) is empty or not after the last",
			    s->what, i, (unsigned long long)s->win[i].at,
			    (unsigned long long)s->win[i].len);
	if (s->block > CODE_SEND_ITEMS)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s: blocks of %u cycles", s->what, s->block);
	Blocks k = {.b = s->block, .stop = UINT64_MAX};
	for (int i = 0; i < s->nwin; i++) {
		spans_add(&k.wspan, blk_down(&k, s->win[i].at),
		          blk_up(&k, s->win[i].at + s->win[i].len));
		if (s->win[i].len >= XWINDOW_ENDLESS &&
		    blk_down(&k, s->win[i].at) < k.stop)
			k.stop = blk_down(&k, s->win[i].at);
	}
	for (int i = 0; i < s->nxfer; i++)
		s->xfer[i].join = 0; /* joined as split here */
	Timeline *tl = xcalloc(l->tiles, sizeof *tl);
	uint8_t *mark = xcalloc(l->tiles, 1);
	uint64_t end = k.b;
	Hop *hop = NULL;
	uint32_t nhop = 0;
	int r = IPU_OK;
	for (int i = 0; i < s->nxfer && !r; i++) {
		Transfer *x = &s->xfer[i];
		if (x->src_tile >= l->tiles || x->words == 0) {
			r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "%s: transfer %d from tile %u of %u words",
			             s->what, i, x->src_tile, x->words);
			break;
		}
		if (x->ndst > nhop) {
			nhop = x->ndst;
			hop = xrealloc(hop, nhop * sizeof *hop);
		}
		hops_of(l, x, hop);
		uint64_t t = UINT64_MAX;
		uint32_t n = 0;
		for (int w = wide_ok(l, x, mark); w >= 0 && t == UINT64_MAX;
		     w--) {
			x->wide = (uint8_t)w;
			/* pieces of XS_MIN_PIECE blocks, or else of one (a
			 * tile that receives its own send may need a piece
			 * that ends before its mux-off) */
			if (xfer_items(x) >= k.b)
				t = place_b(l, tl, &k, x, hop, k.b,
				            XS_MIN_PIECE * s->block, &n);
			if (t == UINT64_MAX && xfer_items(x) >= k.b)
				t = place_b(l, tl, &k, x, hop, k.b, s->block,
				            &n);
		}
		if (t == UINT64_MAX) {
			r = diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "%s: the exchange scheduler found no start "
			    "in blocks of %u for transfer %d from tile "
			    "%u (%u words)",
			    s->what, s->block, i, x->src_tile, x->words);
			break;
		}
		if (n < xfer_items(x)) {
			split_rest(s, i, n);
			x = &s->xfer[i];
		}
		commit(l, tl, &k, x, hop, t);
		end = landed(x, hop, t, n, end);
	}
	free(k.wspan.v);
	free_timelines(tl, l->tiles);
	free(mark);
	free(hop);
	s->cycles = end + chip_rule(l->chip, TIMING_RECV_LAND);
	return r;
}

/* A copy of from's transfers, their schedule with them, in `to` (made
 * empty: lower_transfer's arrays). */
static void
copy_transfers(Step *to, const Step *from)
{
	to->xfer = NULL;
	to->nxfer = 0;
	for (int i = 0; i < from->nxfer; i++) {
		const Transfer *x = &from->xfer[i];
		Transfer *y =
		    lower_transfer(to, x->src_tile, x->src, x->words, x->ndst);
		/* the five arrays are one allocation from ptr_at */
		memcpy(y->ptr_at, x->ptr_at,
		       x->ndst * (3 * sizeof *x->ptr_at + sizeof *x->dst +
		                  sizeof *x->dst_tile));
		y->wide = x->wide;
		y->join = x->join;
		y->start = x->start;
		y->wrap = x->wrap;
	}
}

/* A step with blocks in the order given, sender first and earliest
 * first (orders found without the blocks), keeping the shortest: each
 * try starts from a copy of the transfers as given, as the splits change
 * them. */
static int
schedule_blocks_best(const Lowered *l, Step *s, Diag *d)
{
	static int (*const reorder[])(const Lowered *, Step *) = {
	    NULL, sender_first, earliest_first};
	Step given, best = {0};
	copy_transfers(&given, s);
	uint64_t cycles = UINT64_MAX;
	for (size_t r = 0; r < sizeof reorder / sizeof *reorder; r++) {
		lower_free_transfers(s);
		copy_transfers(s, &given);
		Diag dd;
		if ((reorder[r] && reorder[r](l, s)) ||
		    schedule_blocks(l, s, r ? &dd : d) || s->cycles >= cycles)
			continue;
		lower_free_transfers(&best);
		best.xfer = s->xfer;
		best.nxfer = s->nxfer;
		cycles = s->cycles;
		s->xfer = NULL;
		s->nxfer = 0;
	}
	lower_free_transfers(s);
	if (cycles == UINT64_MAX) { /* d says why the given order failed */
		s->xfer = given.xfer;
		s->nxfer = given.nxfer;
		return IPU_EINVAL;
	}
	lower_free_transfers(&given);
	s->xfer = best.xfer;
	s->nxfer = best.nxfer;
	s->cycles = cycles;
	return IPU_OK;
}

/* The latest end of a supervisor event of a step scheduled in blocks:
 * a send's hold, a control's block. */
static uint64_t
blocks_end(const Step *s)
{
	uint64_t e = 0, B = s->block;
	for (int i = 0; i < s->nxfer; i++) {
		const Transfer *x = &s->xfer[i];
		uint64_t h = x->start + xsched_hold(B, xfer_items(x));
		if (h > e)
			e = h;
		for (uint32_t j = 0; j < x->ndst; j++) {
			uint64_t c[3] = {x->ptr_at[j], x->mux_at[j],
			                 x->off_at[j]};
			for (int k = 0; k < 3; k++)
				if (c[k] / B * B + B > e &&
				    !(k < 2 && (x->join & XJOIN_PREV)) &&
				    !(k == 2 && (x->join & XJOIN_NEXT)))
					e = c[k] / B * B + B;
		}
	}
	return e;
}

/* Buffer ref grown to hold `bytes` from its offset. */
static void
grow_to(Lowered *l, BufRef ref, uint32_t bytes)
{
	Buffer *b = &l->buf[ref.buf];
	if (ref.offset + bytes > b->bytes)
		b->bytes = ref.offset + bytes;
}

/* Whether a host's call of fewer N-panels than its widest can compute as
 * wide: its B and C are buffers of its own (a received B chunk, its C
 * block), which may grow. */
static int
can_widen(const Lowered *l, const KernelCall *k)
{
	return k->nref > 2 &&
	       !strcmp(l->buf[k->ref[1].buf].what, LOWER_B_CHUNK) &&
	       !strcmp(l->buf[k->ref[2].buf].what, "C block");
}

/* A multiply hosting a later GEMM's B (Step.b_from, b_wrap): its calls of
 * fewer N-panels than its widest (a grid's last column: QK^T's 9 columns
 * of 80) compute as wide, so that every tile's supervisor has the widest
 * call's panel windows for the exchange, at no cycle (the step lasts as
 * long as its widest call). The columns past a call's own are read from
 * its grown B chunk (the exchange fills the first columns only) and
 * written to its grown C block's padding, which nothing reads; the block
 * keeps the kernel's C tail after them (gemm_c_tail). */
static void
widen_host(Lowered *l, Step *s)
{
	uint32_t bn = 0;
	for (int i = 0; i < s->ncall; i++)
		if (s->call[i].args.u.gemm.bn > bn)
			bn = s->call[i].args.u.gemm.bn;
	for (int i = 0; i < s->ncall; i++) {
		KernelCall *k = &s->call[i];
		GemmCall *g = &k->args.u.gemm;
		if (gemm_n_panels(g->bn) == gemm_n_panels(bn) ||
		    !can_widen(l, k))
			continue;
		grow_to(l, k->ref[1], gemm_b_bytes(g->t, g->bk, bn));
		/* and the kernel's tail after C, which the placer keeps out
		 * of A's elements with the block (docs/kernel-gemm.md "Memory
		 * rules") */
		grow_to(l, k->ref[2],
		        gemm_c_bytes(g->t, g->bm, bn) + gemm_c_tail(g->t));
		g->bn = bn;
	}
}

/* An overlapped step's cycles with its first P panels five-worker, the
 * exchange ending at xend (plan_overlap_cycles), the rest that of its
 * slowest call. */
static uint64_t
overlap_cycles(const Chip *c, const Step *s, GemmDtype t, const uint32_t *rows,
               uint32_t n, uint32_t bk, uint32_t P, int plain, uint64_t xend)
{
	uint64_t rest = 0;
	for (int i = 0; i < s->ncall; i++) {
		GemmCall g = s->call[i].args.u.gemm;
		g.opt.five = P;
		g.opt.plain5 = plain;
		uint64_t r = plan_overlap_rest(c, &g);
		if (r > rest)
			rest = r;
	}
	return plan_overlap_cycles(c, t, rows, n, bk, P, plain, xend, rest);
}

/*
 * An overlapped GEMM superstep (lower/gemm.c, GemmPlan.overlap): a
 * compute step whose transfers are the next superstep's exchange and
 * whose GemmWindows are still empty. The exchange is scheduled in blocks
 * beside the windows of all the panels the smallest call has (the
 * windows of the first P panels do not depend on P; a host's calls are
 * made as wide as its widest first, widen_host), P is then the
 * fewest panels whose windows hold every supervisor event, and the
 * step's windows and calls (GemmOptions.five) are made for it. Cycles:
 * the setup and opening as codegen's emit_overlap, block 0's lead, the
 * last panel's exit (or the exchange's last word, if later) and its
 * sync, and the rest calls with six workers.
 */
static int
schedule_overlap(Lowered *l, Step *s, Diag *d)
{
	const Chip *c = l->chip;
	if (s->b_from || s->b_wrap)
		widen_host(l, s);
	uint32_t n = 0, most = UINT32_MAX;
	uint32_t *rows = xcalloc((size_t)s->ncall + 1, sizeof *rows);
	GemmCall g0 = {0};
	for (int i = 0; i < s->ncall; i++) {
		const KernelCall *k = &s->call[i];
		const GemmCall *g = &k->args.u.gemm;
		if (k->args.kind != KC_GEMM ||
		    (n && (g->t != g0.t || g->bk != g0.bk))) {
			free(rows);
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "%s: an overlapped step's calls must be "
			    "GEMMs of one dtype and K",
			    s->what);
		}
		if (!n)
			g0 = *g;
		rows[n++] = g->bm;
		uint32_t total =
		    gemm_n_panels(g->bn) * gemm_k_panels(g->t, g->bk);
		if (total < most)
			most = total;
	}
	if (!n) {
		free(rows);
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s: an overlapped step without GEMM calls",
		                s->what);
	}
	/* the chained five-worker panels (gemm_five_chained) first; where
	 * the exchange does not fit beside them, the plain ones, whose
	 * windows are longer (GemmOptions.plain5) */
	Step given = {0};
	copy_transfers(&given, s);
	GemmWindows w;
	int r = 0, plain = 0;
	uint64_t e = 0, xend = 0;
	for (;; plain = 1) {
		gemm_windows(c, g0.t, rows, n, g0.bk, most, plain, NULL, &w);
		XWindow *xw = xcalloc(most, sizeof *xw);
		for (uint32_t p = 0; p + 1 < most; p++)
			xw[p] =
			    (XWindow){w.close[p], w.open[p + 1] - w.close[p]};
		/* nothing after the last panel's window */
		xw[most - 1] = (XWindow){w.close[most - 1], XWINDOW_ENDLESS};
		lower_step_blocks(s, XS_BLOCK, xw, (int)most);
		free(xw);
		r = schedule_blocks_best(l, s, d);
		e = r ? 0 : blocks_end(s);
		xend = s->cycles;
		if (!r && e > w.close[most - 1])
			r = diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "%s: the exchange (to cycle %llu) does not "
			    "fit beside the %u panels of the smallest "
			    "call (their windows end at %llu)",
			    s->what, (unsigned long long)e, most,
			    (unsigned long long)w.close[most - 1]);
		if (!r || plain)
			break;
		gemm_windows_free(&w);
		lower_free_transfers(s);
		copy_transfers(s, &given);
	}
	lower_free_transfers(&given);
	uint32_t P = 1;
	while (!r && P < most && w.close[P - 1] < e)
		P++;
	gemm_windows_free(&w);
	if (r) {
		free(rows);
		return r;
	}
	/* the fewest panels is not always the fewest cycles: the rest
	 * calls' entries (gemm_rest: two where P ends inside an N-panel);
	 * only counts every call's panels can end on (gemm_five_count) */
	uint32_t best = most;
	uint64_t fewest = UINT64_MAX;
	for (uint32_t q = P; q <= most; q++) {
		int can = 1;
		for (int i = 0; i < s->ncall && can; i++) {
			GemmCall g = s->call[i].args.u.gemm;
			g.opt.plain5 = plain;
			can = gemm_five_count(&g, q);
		}
		if (!can)
			continue;
		uint64_t t =
		    overlap_cycles(c, s, g0.t, rows, n, g0.bk, q, plain, xend);
		if (t < fewest) {
			fewest = t;
			best = q;
		}
	}
	P = best;
	/* the windows of the first P panels, the same as above */
	gemm_windows(c, g0.t, rows, n, g0.bk, P, plain, NULL, s->gwin);
	/* the verifier's view: the windows between those panels */
	XWindow *xw = xcalloc(P, sizeof *xw);
	memcpy(xw, s->win, (P - 1) * sizeof *xw);
	lower_step_blocks(s, XS_BLOCK, xw, (int)P - 1);
	free(xw);
	free(rows);
	for (int i = 0; i < s->ncall; i++) {
		KernelCall *k = &s->call[i];
		k->args.u.gemm.opt.five = P;
		k->args.u.gemm.opt.plain5 = plain;
		k->cycles = plan_overlap_rest(c, &k->args.u.gemm);
	}
	s->cycles = fewest;
	return IPU_OK;
}

/* Overlapped step i made plain: its calls with six workers (the cycles
 * multiply gave them), then `plain`'s transfers, already scheduled, as
 * an exchange step of their own inserted after it. */
static void
make_plain(Lowered *l, int i, Step *plain, const char *why)
{
	Step *s = &l->step[i];
	lower_gemm_six(l, s);
	lower_free_transfers(s);
	s->what = "gemm: multiply";
	int32_t *op = s->op;
	int nop = s->nop;
	Step *x = lower_insert_step(l, i + 1, STEP_EXCHANGE, why);
	x->xfer = plain->xfer;
	x->nxfer = plain->nxfer;
	x->cycles = plain->cycles;
	x->op = nop ? xmalloc((size_t)nop * sizeof *op) : NULL;
	if (nop)
		memcpy(x->op, op, (size_t)nop * sizeof *op);
	x->nop = nop;
	plain->xfer = NULL;
	plain->nxfer = 0;
}

/* Overlapped step i (a compute step with an empty Step.gwin and the next
 * superstep's transfers): beside the five workers or plain, whichever
 * lower_cycles counts fewer cycles for (xsched_run). */
static int
schedule_overlap_or_plain(Lowered *l, int i, Diag *d)
{
	const Chip *c = l->chip;
	Step *s = &l->step[i], plain = {.kind = STEP_EXCHANGE, .what = s->what};
	copy_transfers(&plain, s);
	Diag pd;
	int rp = schedule_step(l, &plain, &pd);
	/* the multiply with six workers, then the exchange as its own step */
	uint64_t plain_cycles =
	    rp ? UINT64_MAX
	       : lower_gemm_six_cycles(l, s) + lower_step_overhead(c, s) +
	             plain.cycles + lower_step_overhead(c, &plain);
	Diag od;
	int ro = schedule_overlap(l, s, &od);
	uint64_t beside =
	    ro ? UINT64_MAX : s->cycles + lower_step_overhead(c, s);
	int r = IPU_OK;
	if (ro && rp) {
		*d = pd;
		r = IPU_EINVAL;
	} else if (beside < plain_cycles) {
		l->ovl_beside++;
	} else {
		if (ro)
			l->ovl_no_room++;
		else
			l->ovl_dearer++;
		make_plain(l, i, &plain,
		           ro ? "gemm: A and B chunks (no room beside the "
		                "multiply)"
		              : "gemm: A and B chunks (cheaper than beside "
		                "the multiply)");
	}
	lower_free_transfers(&plain);
	return r;
}

/*
 * A reduction's first part on five workers (redpipe.c, lower_step_vadd5):
 * a compute step whose transfers (the second part's partials) are
 * scheduled in blocks before the first worker's exit (its frame,
 * lower_vadd5_frame: an endless window there), its cycles those of
 * lower_vadd5_cycles. Where they do not fit, the step is made plain: its
 * calls on six workers, then its transfers as an exchange step of their
 * own after it (the rest's add after that reads them).
 */
static int
schedule_vadd5(Lowered *l, Step *s, Diag *d)
{
	uint64_t lead, close, done;
	lower_vadd5_frame(l->chip, s, &lead, &close, &done);
	XWindow end = {close, XWINDOW_ENDLESS};
	lower_step_blocks(s, XS_BLOCK, &end, 1);
	int r = schedule_blocks_best(l, s, d);
	uint64_t e = r ? 0 : blocks_end(s);
	if (!r && e > close)
		r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
		             "%s: the exchange (to cycle %llu) does not fit "
		             "beside the five workers (the first exits at "
		             "%llu)",
		             s->what, (unsigned long long)e,
		             (unsigned long long)close);
	if (r)
		return r;
	s->cycles = lower_vadd5_cycles(l->chip, s, lead, done, s->cycles);
	lower_step_blocks(s, XS_BLOCK, NULL, 0); /* the verifier's view */
	return IPU_OK;
}

uint64_t
xsched_beside_end(const Lowered *l, Step *s, uint64_t close)
{
	XWindow end = {close, XWINDOW_ENDLESS};
	lower_step_blocks(s, XS_BLOCK, &end, 1);
	Diag d;
	if (schedule_blocks_best(l, s, &d) || blocks_end(s) > close)
		return UINT64_MAX;
	return s->cycles;
}

static int
schedule_vadd5_or_plain(Lowered *l, int i, Diag *d)
{
	Step *s = &l->step[i], plain = {.kind = STEP_EXCHANGE, .what = s->what};
	copy_transfers(&plain, s);
	Diag od;
	if (!schedule_vadd5(l, s, &od)) {
		lower_free_transfers(&plain);
		l->red_beside++;
		return IPU_OK;
	}
	l->red_no_room++;

	lower_free_transfers(s);
	lower_step_blocks(s, 0, NULL, 0);
	s->cycles = 0;
	for (int k = 0; k < s->ncall; k++) {
		KernelCall *c = &s->call[k];
		VaddCall *v = &c->args.u.vadd;
		v->five = 0;
		c->cycles = vadd_cycles(l->chip, v->atoms, v->nsrc, v->nseg,
		                        vadd_call_variant(v));
		if (c->cycles > s->cycles)
			s->cycles = c->cycles;
	}
	int r = schedule_step(l, &plain, d);
	if (r) {
		lower_free_transfers(&plain);
		return r;
	}
	Step *x = lower_insert_step(l, i + 1, STEP_EXCHANGE,
	                            "gemm: C partials, the rest's");
	s = &l->step[i];
	x->xfer = plain.xfer;
	x->nxfer = plain.nxfer;
	x->cycles = plain.cycles;
	if (s->nop) {
		x->op = xmalloc((size_t)s->nop * sizeof *x->op);
		memcpy(x->op, s->op, (size_t)s->nop * sizeof *x->op);
		x->nop = s->nop;
	}
	return IPU_OK;
}

/* The busiest receiver's items among multiply c's transfers (those of
 * lower_b_wrap only with `wrap_only`, else all) and its transfers. */
static uint64_t
host_items(const Lowered *l, const Step *c, int wrap_only, uint32_t *count)
{
	uint64_t *items = xcalloc(2 * (size_t)l->tiles, sizeof *items),
	         *n = items + l->tiles, most = 0;
	*count = 0;
	for (int k = 0; k < c->nxfer; k++) {
		const Transfer *x = &c->xfer[k];
		if (wrap_only && !x->wrap)
			continue;
		for (uint32_t j = 0; j < x->ndst; j++) {
			items[x->dst_tile[j]] += xfer_items(x);
			n[x->dst_tile[j]]++;
		}
	}
	for (uint32_t t = 0; t < l->tiles; t++)
		if (items[t] > most) {
			most = items[t];
			*count = (uint32_t)n[t];
		}
	free(items);
	return most;
}

/* Whether multiply c's transfers from an exchange (lower_b_wrap's with
 * `wrap`, else lower_b_under's) pay beside it: they cut the exchange by
 * `cut` cycles an iteration, more than they add to c and, for the wrap,
 * than its own steps add (lower_b_wrap_steps: its copy each iteration,
 * the prologue once over the loop's iterations). Beside a later GEMM's B
 * as well, the wrap's part of c's added cycles is what it adds to the
 * price of that B alone (plan_host_loss of the busiest receiver's items,
 * with and without the wrap's), in proportion. */
static int
b_pays(const Lowered *l, const Step *c, int wrap, int64_t cut)
{
	int64_t add = (int64_t)c->cycles - (int64_t)lower_gemm_six_cycles(l, c);
	if (!wrap)
		return cut >= add;
	if (c->b_from) {
		const GemmCall *g0 = &c->call[0].args.u.gemm;
		PlanHost h = {.cycles = c->cycles,
		              .t = g0->t,
		              .bm = g0->bm,
		              .bm_last = g0->bm,
		              .bn = g0->bn,
		              .bk = g0->bk,
		              .tiles = l->tiles,
		              .cover = l->tiles};
		for (int k = 1; k < c->ncall; k++) {
			const GemmCall *g = &c->call[k].args.u.gemm;
			if (g->bm > h.bm)
				h.bm = g->bm;
			if (g->bm < h.bm_last)
				h.bm_last = g->bm;
			if (g->bn > h.bn)
				h.bn = g->bn;
		}
		uint32_t na, nw;
		uint64_t all = host_items(l, c, 0, &na),
		         ours = host_items(l, c, 1, &nw);
		uint64_t both = plan_host_loss(l->chip, &h, all, na, l->tiles);
		/* the later GEMM's B alone: the busiest receiver less the
		 * wrap's items there, at most */
		uint64_t alone =
		    plan_host_loss(l->chip, &h, all > ours ? all - ours : 0,
		                   na > nw ? na - nw : 1, l->tiles);
		if (both == UINT64_MAX || alone == UINT64_MAX || !both)
			add = 0; /* not priced: kept, as it fits */
		else
			add = both > alone ? (int64_t)((uint64_t)add *
			                               (both - alone) / both)
			                   : 0;
	}
	uint64_t once;
	int64_t per = lower_b_wrap_steps(l, &once);
	int64_t n = l->loop_count ? (int64_t)l->loop_count : 1;
	return cut * n >= (add + per) * n + (int64_t)once;
}

/* Multiply h, beside a later GEMM's B and lower_b_wrap's: the wrap's back
 * to its exchange (lower_b_unwrap); h's panel windows emptied, so that
 * xsched_run schedules it again with that B alone. */
static void
unwrap_host(Lowered *l, int32_t h)
{
	Step *c = &l->step[h];
	lower_b_unwrap(l, h);
	if (c->gwin) {
		gemm_windows_free(c->gwin);
		memset(c->gwin, 0, sizeof *c->gwin);
	}
}

/* Exchange step i, some of whose B transfers lower_b_under moved to
 * earlier multiplies (Step.b_from, scheduled already): scheduled without
 * them, and each such multiply keeps them only where they cut the step
 * by more than they add to the multiply (step i scheduled again with
 * them, on copies); the others go back. The transfers put back go after
 * step i's (lower_b_back), so step i is then the copy scheduled with the
 * last multiply's transfers that went back (its transfers, in that order,
 * the earlier ones' already put back): that schedule is kept rather than
 * made again (schedule_step is deterministic). */
static int
schedule_b_moved(Lowered *l, int32_t i, Diag *d)
{
	Step *x = &l->step[i];
	if (schedule_step(l, x, d))
		return IPU_EINVAL;
	uint64_t without = x->cycles;
	Step last = {0}; /* the copy with the last transfers put back */
	int back = 0;
	for (int32_t h = 0; h < l->nstep; h++) {
		Step *c = &l->step[h];
		/* c's transfers from step i: lower_b_wrap's (Transfer.wrap)
		 * or lower_b_under's */
		int wrap = c->b_wrap == i + 1;
		if (!wrap && c->b_from != i + 1)
			continue;
		Step t = {.kind = STEP_EXCHANGE, .what = x->what};
		for (int k = 0; k < x->nxfer + c->nxfer; k++) {
			const Transfer *f =
			    k < x->nxfer ? &x->xfer[k] : &c->xfer[k - x->nxfer];
			if (k >= x->nxfer && f->wrap != wrap)
				continue;
			lower_transfer_as(&t, f, f->src_tile, f->src, f->words,
			                  0);
		}
		int r = schedule_step(l, &t, d);
		uint64_t with = t.cycles;
		free(t.op);
		t.op = NULL;
		if (!r &&
		    !b_pays(l, c, wrap, (int64_t)with - (int64_t)without)) {
			/* c's go back: all of them, lower_b_wrap's to an
			 * exchange scheduled already, scheduled again; or,
			 * beside a later GEMM's B, only the wrap's, c then
			 * scheduled again with that B alone */
			int32_t w = c->b_wrap - 1;
			if (wrap && c->b_from)
				unwrap_host(l, h);
			else
				lower_b_back(l, h);
			back = 1;
			lower_free_transfers(&last);
			last = t;
			if (w >= 0 && w != i &&
			    schedule_step(l, &l->step[w], d)) {
				lower_free_transfers(&last);
				return IPU_EINVAL;
			}
			continue;
		}
		lower_free_transfers(&t);
		if (r) {
			lower_free_transfers(&last);
			return IPU_EINVAL;
		}
	}
	if (back) {
		/* x's transfers are those of `last`, in its input order */
		lower_free_transfers(x);
		x->xfer = last.xfer;
		x->nxfer = last.nxfer;
		x->cycles = last.cycles;
	}
	return IPU_OK;
}

int
xsched_run(Lowered *l, Diag *d)
{
	/* a multiply after the exchange whose B it runs (lower_b_wrap: the
	 * next iteration's) first, so that the exchange can weigh it */
	for (int i = 0; i < l->nstep; i++) {
		Step *s = &l->step[i];
		if (s->kind == STEP_COMPUTE && s->gwin && !s->gwin->panels &&
		    s->nxfer && s->b_wrap) {
			/* if they do not fit beside the panels with the
			 * later GEMM's B, that B alone, in the loop below */
			Diag od = {0};
			if (schedule_overlap(l, s, &od) &&
			    !(s->b_from ? lower_b_unwrap(l, i) : 0))
				lower_b_back(l, i);
		}
	}
	for (int i = 0; i < l->nstep; i++) {
		Step *s = &l->step[i];
		if (s->kind == STEP_COMPUTE && s->gwin && !s->gwin->panels &&
		    s->nxfer) {
			if (s->b_from) {
				/* a later GEMM's B (lower_b_under) that does
				 * not fit beside the panels: back to its own
				 * exchange, not scheduled yet */
				Diag od = {0};
				if (schedule_overlap(l, s, &od))
					lower_b_back(l, i);
				continue;
			}
			if (schedule_overlap_or_plain(l, i, d))
				return IPU_EINVAL;
			if (!l->step[i].gwin)
				i++; /* the plain exchange, scheduled */
			continue;
		}
		if (lower_step_vadd5(s) && s->nxfer) {
			int n = l->nstep;
			if (schedule_vadd5_or_plain(l, i, d))
				return IPU_EINVAL;
			i += l->nstep - n; /* the plain exchange, scheduled */
			continue;
		}
		if (s->kind != STEP_EXCHANGE)
			continue;
		int moved = 0;
		for (int32_t h = 0; h < l->nstep && !moved; h++)
			moved = l->step[h].b_from == i + 1 ||
			        l->step[h].b_wrap == i + 1;
		if (moved && !s->block) {
			if (schedule_b_moved(l, i, d))
				return IPU_EINVAL;
			continue;
		}
		if (s->block ? schedule_blocks_best(l, s, d)
		             : schedule_step(l, s, d))
			return IPU_EINVAL;
	}
	return IPU_OK;
}

/*
 * xsched.c - the exchange scheduler: when every transfer of a phase is
 * sent, and when each receiver switches its mux and pointer.
 *
 * Time is counted from the release of the sync that opens the phase, when
 * every tile's supervisor starts the phase at the same cycle. Each tile's
 * supervisor is one timeline: a send occupies it for one cycle per word, a
 * receive control (delaypic, delayxpic) for the cycle it takes effect, and
 * the first XS_PREAMBLE cycles set $INCOMING_DCOUNT. A word sent at cycle
 * t + i arrives at destination d at t + i + latency(src, d)
 * (chip_route_cycles).
 *
 * Greedy list scheduling in the order the lowering gave: each transfer
 * starts at the earliest cycle at which
 *   - its sender's timeline is free for the whole send;
 *   - at every destination it arrives after the previous transfer there
 *     ended, plus XS_RECV_GAP (windows are appended in time order, so a
 *     later transfer never has to be fitted before an earlier one);
 *   - every destination has two free cycles between its previous window's
 *     end and the first arrival: the pointer, then the mux; and the cycle
 *     after the last arrival free, to switch the mux off again (otherwise
 *     a later send of the same source, meant for others, would land too).
 * The phase ends one cycle after the last arrival or event.
 */
#include <stdlib.h>
#include <string.h>

#include "lower.h"

/* Busy intervals [a, b) of one tile's supervisor timeline, appended in no
 * particular order; small per phase, so searched linearly. */
typedef struct {
	uint64_t *a, *b;
	int n, cap;
	uint64_t rx_end;   /* end of the last receive window */
	uint64_t send_end; /* end of the last send */
} Timeline;

static void
busy_add(Timeline *tl, uint64_t a, uint64_t b)
{
	if (tl->n == tl->cap) {
		tl->cap = tl->cap ? 2 * tl->cap : 8;
		tl->a = xrealloc(tl->a, tl->cap * sizeof *tl->a);
		tl->b = xrealloc(tl->b, tl->cap * sizeof *tl->b);
	}
	tl->a[tl->n] = a;
	tl->b[tl->n] = b;
	tl->n++;
}

/* The end of an interval that [a, b) overlaps, or 0 if none does. */
static uint64_t
busy_conflict(const Timeline *tl, uint64_t a, uint64_t b)
{
	for (int i = 0; i < tl->n; i++)
		if (tl->a[i] < b && a < tl->b[i])
			return tl->b[i];
	return 0;
}

/* An interval not yet in a timeline: the send being placed, when the
 * sender is also a destination. */
typedef struct {
	uint64_t a, b;
} Span;

/* The latest cycle in [lo, hi] free in tl and outside `also`, or
 * UINT64_MAX if none. */
static uint64_t
latest_free(const Timeline *tl, Span also, uint64_t lo, uint64_t hi)
{
	uint64_t c = hi;
	for (;;) {
		int moved = 0;
		if (also.a <= c && c < also.b) {
			if (also.a == 0)
				return UINT64_MAX;
			c = also.a - 1;
			moved = 1;
		}
		for (int i = 0; i < tl->n; i++)
			if (tl->a[i] <= c && c < tl->b[i]) {
				if (tl->a[i] == 0)
					return UINT64_MAX;
				c = tl->a[i] - 1;
				moved = 1;
			}
		if (c < lo || c == UINT64_MAX)
			return UINT64_MAX;
		if (!moved)
			return c;
	}
}

/* Two free control cycles for destination d receiving from `first` on:
 * the pointer then the mux, after d's previous window. */
static int
controls_fit(const Timeline *d, Span also, uint64_t first, uint64_t *ptr,
             uint64_t *mux)
{
	uint64_t lo = d->rx_end > XS_PREAMBLE ? d->rx_end : XS_PREAMBLE;
	if (first < lo + 1)
		return 0;
	uint64_t m = latest_free(d, also, lo + 1, first);
	if (m == UINT64_MAX)
		return 0;
	uint64_t p = latest_free(d, also, lo, m - 1);
	if (p == UINT64_MAX)
		return 0;
	*ptr = p;
	*mux = m;
	return 1;
}

static Span
own_send(const Transfer *x, uint32_t k, uint64_t t)
{
	if (x->dst_tile[k] == x->src_tile)
		return (Span){t, t + x->words};
	return (Span){0, 0};
}

/* The earliest start for transfer x given the timelines. */
static uint64_t
earliest_start(const Chip *c, Timeline *tl, const Transfer *x)
{
	uint64_t t = XS_PREAMBLE;
	for (;;) {
		uint64_t need = t;
		const Timeline *s = &tl[x->src_tile];
		if (s->send_end > need)
			need = s->send_end;
		uint64_t end = busy_conflict(s, need, need + x->words);
		if (end)
			need = end;
		for (uint32_t k = 0; k < x->ndst; k++) {
			const Timeline *d = &tl[x->dst_tile[k]];
			uint64_t lat =
			    chip_route_cycles(c, x->src_tile, x->dst_tile[k]);
			uint64_t lo = d->rx_end + XS_RECV_GAP;
			if (need + lat < lo)
				need = lo - lat;
		}
		if (need != t) {
			t = need;
			continue;
		}
		/* controls: try this start; on failure move a cycle on */
		int ok = 1;
		for (uint32_t k = 0; k < x->ndst && ok; k++) {
			uint64_t p, m;
			uint64_t lat =
			    chip_route_cycles(c, x->src_tile, x->dst_tile[k]);
			Span own = own_send(x, k, t);
			uint64_t off = t + lat + x->words;
			ok = controls_fit(&tl[x->dst_tile[k]], own, t + lat, &p,
			                  &m) &&
			     latest_free(&tl[x->dst_tile[k]], own, off, off) ==
			         off;
		}
		if (ok)
			return t;
		t++;
	}
}

static void
commit(const Chip *c, Timeline *tl, Transfer *x, uint64_t t)
{
	x->start = t;
	Timeline *s = &tl[x->src_tile];
	busy_add(s, t, t + x->words);
	s->send_end = t + x->words;
	for (uint32_t k = 0; k < x->ndst; k++) {
		Timeline *d = &tl[x->dst_tile[k]];
		uint64_t first =
		    t + chip_route_cycles(c, x->src_tile, x->dst_tile[k]);
		controls_fit(d, (Span){0, 0}, first, &x->ptr_at[k],
		             &x->mux_at[k]);
		x->off_at[k] = first + x->words;
		busy_add(d, x->ptr_at[k], x->ptr_at[k] + 1);
		busy_add(d, x->mux_at[k], x->mux_at[k] + 1);
		busy_add(d, x->off_at[k], x->off_at[k] + 1);
		d->rx_end = first + x->words;
	}
}

static int
schedule_step(const Lowered *l, Step *s, Diag *d)
{
	Timeline *tl = xcalloc(l->tiles, sizeof *tl);
	uint64_t end = XS_PREAMBLE;
	for (int i = 0; i < s->nxfer; i++) {
		Transfer *x = &s->xfer[i];
		if (x->src_tile >= l->tiles || x->words == 0) {
			free(tl);
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "%s: transfer %d from tile %u of %u "
			                "words",
			                s->what, i, x->src_tile, x->words);
		}
		uint64_t t = earliest_start(l->chip, tl, x);
		commit(l->chip, tl, x, t);
		for (uint32_t k = 0; k < x->ndst; k++) {
			uint64_t last = t + x->words +
			                chip_route_cycles(l->chip, x->src_tile,
			                                  x->dst_tile[k]);
			if (last > end)
				end = last;
		}
	}
	for (uint32_t i = 0; i < l->tiles; i++) {
		free(tl[i].a);
		free(tl[i].b);
	}
	free(tl);
	s->cycles = end;
	return IPU_OK;
}

int
xsched_run(Lowered *l, Diag *d)
{
	for (int i = 0; i < l->nstep; i++)
		if (l->step[i].kind == STEP_EXCHANGE &&
		    schedule_step(l, &l->step[i], d))
			return IPU_EINVAL;
	return IPU_OK;
}

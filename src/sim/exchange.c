/*
 * exchange.c - the time-deterministic exchange between tiles.
 *
 * Senders log packets (sim/exec_ctl.c: send): the departure cycle of the
 * first item, one item per cycle, the data as it was in memory. Receivers
 * log their controls in time order (put $INCOMING_MUX and the other
 * incoming CSRs). Nothing is routed while tiles run: at each round of the
 * chip (sim/chip.c) every receiver is walked forward in cycle order,
 * interleaving its controls with the items that arrive at its mux from the
 * source the mux selects. Item i of a packet from tile s arrives (is
 * written) at tile r at depart + i + chip_route_cycles(s, r), the same for
 * every pair of tiles in every run: that is the time determinism of the
 * chip. Controls are kept in the same frame: an XPIC takes effect
 * chip_xpic_cycles after its issue (target/route.c). A received item
 * counts ($INCOMING_DCOUNT, sync RECV) the rule recv-land after its write.
 * A walk only notes what it delivers (xch_walk) and writes it when it is
 * committed (xch_commit), so that receivers can be walked on several
 * threads and those after an error left untouched (chip.c).
 *
 * Every arriving item the mux selects must be expected ($INCOMING_DCOUNT >
 * 0), of the receiver's format, aligned, inside the receive window and not
 * written twice in one phase; an item that no tile receives is lost. Each
 * of these is an error that names tiles, cycle and address.
 *
 * A 64-bit item travels on the wires of both tiles of a pair (system.md:
 * two tiles share an exchange bus; 8 B per cycle only to a pair that
 * receives the same data), so DECISION: a 64-bit item must reach both
 * tiles of every pair it reaches; one that reaches a lone tile is an error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "sim.h"

/* One bit per word of the 21-bit tile address space. */
enum { WRITTEN_BYTES = 0x200000 / 4 / 8 };

void
xch_reset(XState *x)
{
	xch_free(x);
	memset(x, 0, sizeof *x);
	x->mux = MUX_NONE;
}

/* Packet blocks come from chunks of the tile's own: sends are many and
 * small, and most are freed within a few rounds. A chunk whose blocks are
 * all freed becomes the one spare (or is freed if there is one already). */
enum { CHUNK_BYTES = 16384 };
static void
retire(XState *x, XChunk *c)
{
	if (x->spare)
		free(c);
	else
		x->spare = c;
}

/* A block of `size` bytes, 16-aligned. */
static uint8_t *
block_new(XState *x, size_t size, XChunk **from)
{
	size = (size + 15) & ~(size_t)15;
	XChunk *c = x->chunk;
	if (!c || c->cap - c->used < size) {
		if (c && !c->live)
			retire(x, c);
		c = x->spare;
		if (c && c->cap >= size) {
			x->spare = NULL;
		} else {
			size_t cap = size > CHUNK_BYTES ? size : CHUNK_BYTES;
			c = xmalloc(sizeof *c + cap);
			c->cap = cap;
			c->live = 0;
		}
		c->used = 0;
		x->chunk = c;
	}
	uint8_t *b = c->mem + c->used;
	c->used += size;
	c->live++;
	*from = c;
	return b;
}

static void
block_free(XState *x, XChunk *c)
{
	if (--c->live)
		return;
	if (c == x->chunk)
		c->used = 0;
	else
		retire(x, c);
}

void
xch_free(XState *x)
{
	for (int i = x->pk_done; i < x->npk; i++)
		block_free(x, x->pk[i].chunk); /* data, got and pairsum */
	free(x->chunk);
	free(x->spare);
	free(x->pk);
	free(x->ctl);
	free(x->written);
	free(x->recv);
	xunmap(x->written_bits, WRITTEN_BYTES);

	memset(x, 0, sizeof *x);
	x->mux = MUX_NONE;
}

/* Controls stay sorted by (cycle, seq): a new one moves back past those
 * that take effect later (a mux switch takes a few cycles, others one). */
void
xch_control(Tile *t, XControlKind kind, uint64_t cycle, uint32_t value,
            int partner)
{
	XState *x = &t->x;
	GROW(x->ctl, x->nctl, x->capctl);
	XControl c = {cycle, x->seq++, (uint8_t)kind, (uint8_t)partner, value};
	int i = x->nctl++;
	/* after every pending control of the same cycle or an earlier one
	 * (those from ctl_done on are in that order): a PIC, issued without
	 * the XPICs' M cycles, often goes before a run of them */
	if (i > x->ctl_done && x->ctl[i - 1].cycle > cycle) {
		int lo = x->ctl_done, hi = i - 1;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			if (x->ctl[mid].cycle > cycle)
				hi = mid;
			else
				lo = mid + 1;
		}
		memmove(&x->ctl[lo + 1], &x->ctl[lo],
		        (size_t)(i - lo) * sizeof x->ctl[0]);
		i = lo;
	}
	x->ctl[i] = c;
}

int
xch_send(Exec *e, uint32_t addr, uint32_t n, uint32_t item, uint32_t dir)
{
	Tile *t = e->tile;
	uint32_t bytes = n * item;
	if (addr % item || !chip_in_memory(t->chip, addr, bytes)) {
		sim_fault(e, FAULT_INVALID_ADDR, addr,
		          "send of %u %u-byte items from 0x%05x: outside tile "
		          "memory or misaligned",
		          n, item, addr);
		return -1;
	}
	XState *x = &t->x;
	GROW(x->pk, x->npk, x->cappk);
	XPacket *p = &x->pk[x->npk++];
	*p = (XPacket){.depart = t->cycle,
	               .n = n,
	               .item = item,
	               .src_addr = addr,
	               .dir = dir,
	               .pc = e->pc,
	               .ctx = (uint8_t)e->ctx};
	/* one block: the data, then (64-bit items) pairsum, 8-aligned as
	 * the data is n * 8 bytes, then got; pairsum and got are zeroed by
	 * the first receiver that needs them (xch_commit_senders), as most
	 * packets reach whole pairs with all their items */
	size_t sums = item == 8 ? (size_t)n * sizeof *p->pairsum : 0;
	p->data = block_new(x, bytes + sums + n, &p->chunk);
	if (item == 8)
		p->pairsum = (uint64_t *)(void *)(p->data + bytes);
	p->got = p->data + bytes + sums;
	memcpy(p->data, t->mem + (addr - t->chip->mem_base), bytes);
	return 0;
}

void
xch_new_phase(Tile *t)
{
	XState *x = &t->x;
	for (int i = 0; i < x->nwritten; i++)
		x->written_bits[x->written[i] / 64] = 0;
	x->nwritten = 0;
}

/* A walk advances a copy of the receive state: a dry walk leaves the tile
 * untouched, and a real one's is stored when it is committed. */
static void
rx_load(const XState *x, XRx *s)
{
	*s = (XRx){x->mux,      x->ptr,       x->format,        x->dcount,
	           x->base,     x->size,      x->last_rx_cycle, x->last_rx_addr,
	           x->ctl_done, x->pctl_done, x->zero_at};
}

static void
rx_store(XState *x, const XRx *s, uint64_t until)
{
	x->mux = s->mux;
	x->ptr = s->ptr;
	x->format = s->format;
	x->dcount = s->dcount;
	x->base = s->base;
	x->size = s->size;
	x->last_rx_cycle = s->last_rx_cycle;
	x->last_rx_addr = s->last_rx_addr;
	x->ctl_done = s->ctl;
	x->pctl_done = s->pctl;
	x->zero_at = s->zero_at;
	x->rx_until = until;
}

static void
apply_control(XRx *s, const XControl *c)
{
	switch ((XControlKind)c->kind) {
	case XC_MUX:
		s->mux = c->value;
		break;
	case XC_PTR:
		s->ptr = c->value;
		break;
	case XC_FORMAT:
		s->format = c->value;
		break;
	case XC_DCOUNT:
		s->dcount = c->value;
		s->zero_at = c->cycle;
		break;
	case XC_BASE:
		s->base = c->value;
		break;
	case XC_SIZE:
		s->size = c->value;
		break;
	}
}

/* Set `bits` in the bitmap's chunk holding word w, listing the chunk
 * (by w) when it was clear. */
static inline void
chunk_mark(XState *x, uint64_t *chunk, uint64_t bits, uint32_t w)
{
	if (!*chunk) {
		GROW(x->written, x->nwritten, x->capwritten);
		x->written[x->nwritten++] = w;
	}
	*chunk |= bits;
}

/* Has word `w` (address / 4) of tile memory been written by the exchange
 * in this phase? Records it if not: a bitmap, cleared through the list of
 * the 64-bit chunks it touched. */
static int
written_before(XState *x, uint32_t w)
{
	if (!x->written_bits)
		x->written_bits = xmap_zero(WRITTEN_BYTES);
	uint64_t bit = 1ull << (w % 64), *chunk = &x->written_bits[w / 64];
	if (*chunk & bit)
		return 1;
	chunk_mark(x, chunk, bit, w);
	return 0;
}

/* Words [w0, w1) by 64-bit chunks of the bitmap of written_before: 1 if
 * none of them has been written in this phase, and then they are recorded
 * as written_before would record them one by one; else 0 and nothing is
 * recorded. */
static int
written_range(XState *x, uint32_t w0, uint32_t w1)
{
	if (!x->written_bits)
		x->written_bits = xmap_zero(WRITTEN_BYTES);
	if (w0 / 64 == (w1 - 1) / 64) { /* one chunk: the loop's one step */
		uint32_t n = w1 - w0;
		uint64_t bits = (n == 64 ? ~0ull : ((1ull << n) - 1))
		                << (w0 % 64),
		         *chunk = &x->written_bits[w0 / 64];
		if (*chunk & bits)
			return 0;
		chunk_mark(x, chunk, bits, w0);
		return 1;
	}
	for (int mark = 0; mark < 2; mark++)
		for (uint32_t w = w0; w < w1;) {
			uint32_t n =
			    64 - w % 64 < w1 - w ? 64 - w % 64 : w1 - w;
			uint64_t bits = (n == 64 ? ~0ull : ((1ull << n) - 1))
			                << (w % 64),
			         *chunk = &x->written_bits[w / 64];
			if (!mark && (*chunk & bits))
				return 0;
			if (mark)
				chunk_mark(x, chunk, bits, w);
			w += n;
		}
	return 1;
}

/* A receiver's term in a 64-bit item's pair sum: the pair's hash, added
 * by its lower tile and subtracted by the other, so the sum over the
 * receivers is 0 when they are whole pairs (a lone tile leaves its pair's
 * hash, which is not 0). */
static uint64_t
pair_mark(const Chip *c, uint32_t tile)
{
	uint32_t mate = chip_pair(c, tile);
	uint64_t h = (uint64_t)(tile < mate ? tile : mate) + 1;
	h *= 0x9e3779b97f4a7c15ull; /* odd: a bijection, never 0 */
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h |= 1;
	return tile < mate ? h : (uint64_t)0 - h;
}

typedef struct {
	ChipSim *cs;
	Tile *r;
	uint16_t *routes; /* chipsim_routes_to(cs, r->id) */
	int dry;          /* count only: no writes, stop at DCOUNT = 0 */
	int track;        /* a real walk that stops where a dry one would */
	uint64_t from;    /* dry, track: DCOUNT = 0 counts from this cycle on */
	uint64_t ready;   /* dry, track: when DCOUNT is 0 at or after `from` */
	int done;         /* dry, track: ready is known */
	uint64_t stop;    /* track: items before it delivered (and its
	                   * controls applied if stop_ctl) */
	int stop_ctl;
	ChipError *err;
} Walk;

/* Errors of the receiving side end with where the receiving tile's
 * supervisor is (the sync it waits in, or its next instruction); the
 * sending side's with the send instruction itself. ChipError's ctx and
 * pc say the same. */
static int __attribute__((format(printf, 3, 4)))
rx_error(Walk *w, uint64_t at, const char *fmt, ...)
{
	const Tile *r = w->r;
	char what[512], where[320];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	int waits = r->wait.zone >= 0;
	uint32_t pc = waits ? r->wait.pc : r->ctx[0].pc;
	tile_format_pc(r, 0, pc, where, sizeof where);
	chip_error(w->err, RUN_FAULT, r->id, at, "%s; tile %u's %s%s", what,
	           r->id, where,
	           waits ? " (waiting there)" : " (its next instruction)");
	w->err->ctx = 0;
	w->err->pc = pc;
	return -1;
}

static int __attribute__((format(printf, 5, 6)))
tx_error(ChipError *err, const Tile *t, const XPacket *p, uint64_t at,
         const char *fmt, ...)
{
	char what[512], where[320];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	tile_format_pc(t, p->ctx, p->pc, where, sizeof where);
	chip_error(err, RUN_FAULT, t->id, at, "%s; the send: tile %u, %s", what,
	           t->id, where);
	err->ctx = p->ctx;
	err->pc = p->pc;
	return -1;
}

/* Items delivered to a walk's tile, for xch_commit to write: joined to
 * the last note when they continue it. */
static void
note_recv(XState *x, XPacket *p, uint32_t src, uint32_t i0, uint32_t i1,
          uint32_t addr, uint64_t at)
{
	XRecv *l = x->nrecv ? &x->recv[x->nrecv - 1] : NULL;
	if (p && l && l->p == p && l->i1 == i0 &&
	    l->addr + (l->i1 - l->i0) * p->item == addr) {
		l->i1 = i1;
		return;
	}
	GROW(x->recv, x->nrecv, x->caprecv);
	x->recv[x->nrecv++] = (XRecv){p, at, src, addr, i0, i1};
}

/* k more items counted, the last landing at `landed`; a dry or tracking
 * walk knows its ready cycle when DCOUNT reaches 0 at or after w->from
 * (a tracking walk has then delivered every item before `stop`). */
static inline void
counted(Walk *w, XRx *s, uint32_t k, uint64_t landed, uint64_t stop)
{
	if ((s->dcount -= k) != 0)
		return;
	s->zero_at = landed;
	if ((w->dry || w->track) && landed >= w->from) {
		w->ready = landed;
		w->done = 1;
		w->stop = stop;
	}
}

/* Deliver item i of packet p from tile src, arriving at `at`. */
static int
deliver(Walk *w, XRx *s, uint32_t src, XPacket *p, uint32_t i, uint64_t at)
{
	Tile *r = w->r;
	const Chip *c = r->chip;
	uint32_t fmt_item = s->format ? 8 : 4;
	if (p->item != fmt_item)
		return rx_error(w, at,
		                "exchange: a %u-bit item from tile %u "
		                "(sent from 0x%05x) reached tile %u at cycle "
		                "%llu, whose $INCOMING_FORMAT is %u "
		                "(%u-bit items)",
		                8 * p->item, src, p->src_addr + i * p->item,
		                r->id, (unsigned long long)at, s->format,
		                8 * fmt_item);
	if (s->dcount == 0)
		return rx_error(
		    w, at,
		    "exchange: tile %u received an item from tile %u at "
		    "cycle %llu but expects none ($INCOMING_DCOUNT = 0): "
		    "the mux listens at the wrong time, or the count is "
		    "short",
		    r->id, src, (unsigned long long)at);
	uint32_t a = s->ptr;
	uint64_t landed = at + 1 + chip_rule(c, TIMING_RECV_LAND);
	if (w->dry) {
		s->ptr += p->item;
		counted(w, s, 1, landed, at + 1);
		return 0;
	}
	if (a % p->item || !chip_in_memory(c, a, p->item))
		return rx_error(w, at,
		                "exchange: tile %u would write a %u-byte "
		                "item from tile %u at 0x%05x (cycle %llu): "
		                "misaligned or outside memory",
		                r->id, p->item, src, a, (unsigned long long)at);
	if (s->size && (a < s->base || a + p->item > s->base + s->size))
		return rx_error(w, at,
		                "exchange: tile %u would write at 0x%05x "
		                "(item from tile %u, cycle %llu), outside "
		                "its receive window 0x%05x..0x%05x",
		                r->id, a, src, (unsigned long long)at, s->base,
		                s->base + s->size);
	for (uint32_t k = 0; k < p->item; k += 4)
		if (written_before(&r->x, (a + k) / 4)) {
			if (k) /* word a's bit is set: xch_discard clears it */
				note_recv(&r->x, NULL, 0, 0, 0, a, at);
			return rx_error(
			    w, at,
			    "exchange: word 0x%05x of tile %u written twice "
			    "in one phase (again by tile %u at cycle %llu)",
			    a + k, r->id, src, (unsigned long long)at);
		}
	note_recv(&r->x, p, src, i, i + 1, a, at);
	s->ptr += p->item;
	s->last_rx_cycle = at;
	s->last_rx_addr = a;
	counted(w, s, 1, landed, at + 1);
	return 0;
}

/* Items i0 .. i1 - 1 of packet p, arriving at first + i, all at once when
 * deliver() would take each of them without an error (checked up front:
 * the format, enough items expected, and for a real walk the whole range
 * aligned, in memory, in the window and not yet written this phase): what
 * deliver() does item by item, done for the run. Returns 1 if it did, 0 if
 * the items must go one by one (which raises any error where it occurs,
 * and is the plain path: SIM_PLAIN always takes it). */
static int
deliver_run(Walk *w, XRx *s, uint32_t src, XPacket *p, uint32_t i0, uint32_t i1,
            uint64_t first)
{
	Tile *r = w->r;
	const Chip *c = r->chip;
	uint32_t k = i1 - i0, item = p->item;
	if (sim_path == SIM_PLAIN || k < 2 || item != (s->format ? 8u : 4u) ||
	    s->dcount < k)
		return 0;
	uint64_t last = first + i1 - 1; /* the run's last arrival */
	uint64_t landed = last + 1 + chip_rule(c, TIMING_RECV_LAND);
	uint32_t a = s->ptr, bytes = k * item;
	if (w->dry) {
		s->ptr += bytes;
		counted(w, s, k, landed, last + 1);
		return 1;
	}
	if (a % item || !chip_in_memory(c, a, bytes) ||
	    (s->size && (a < s->base || a + bytes > s->base + s->size)))
		return 0;
	if (!written_range(&r->x, a / 4, (a + bytes) / 4))
		return 0;
	note_recv(&r->x, p, src, i0, i1, a, first + i0);
	s->ptr += bytes;
	s->last_rx_cycle = last;
	s->last_rx_addr = a + bytes - item;
	counted(w, s, k, landed, last + 1);
	return 1;
}

/* Items from `src` arriving in [from, to): packets in departure order,
 * items in order, so arrivals are in cycle order. */
static int
deliver_from(Walk *w, XRx *s, uint32_t src, uint64_t from, uint64_t to)
{
	ChipSim *cs = w->cs;
	if (src >= chipsim_tiles(cs))
		return 0; /* the host, or nothing */
	Tile *t = chipsim_tile_if_exists(cs, src);
	if (!t)
		return 0;
	/* the route from src, from the chip's table (filled on first use) */
	uint32_t route = w->routes[src];
	if (!route) {
		const Chip *c = w->r->chip;
		route = chip_route_cycles(c, src, w->r->id) << 2 |
		        chip_route_dir(c, src, w->r->id);
		if (route <= UINT16_MAX)
			w->routes[src] = (uint16_t)route;
	}
	uint64_t lat = route >> 2;
	uint32_t dir = route & 3;
	XState *x = &t->x;
	/* first packet whose last item arrives at or after `from` */
	int lo = x->pk_done, hi = x->npk;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		XPacket *p = &x->pk[mid];
		if (p->depart + p->n + lat <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int k = lo; k < x->npk; k++) {
		XPacket *p = &x->pk[k];
		uint64_t first = p->depart + lat;
		if (first >= to)
			break;
		uint32_t i0 = from > first ? (uint32_t)(from - first) : 0;
		uint64_t i1 = to - first < p->n ? to - first : p->n;
		if (i0 < i1 && !(p->dir & dir))
			return tx_error(
			    w->err, t, p, first + i0,
			    "exchange: tile %u's mux selects tile %u at cycle "
			    "%llu, but that tile's send at cycle %llu goes in "
			    "direction %u (sctl bits 1..0) and tile %u is in "
			    "direction %u: its words never reach it",
			    w->r->id, src, (unsigned long long)(first + i0),
			    (unsigned long long)p->depart, p->dir, w->r->id,
			    dir);
		if (i1 > i0 &&
		    deliver_run(w, s, src, p, i0, (uint32_t)i1, first)) {
			if (w->done)
				return 0;
			continue;
		}
		for (uint32_t i = i0; i < i1; i++) {
			if (deliver(w, s, src, p, i, first + i))
				return -1;
			if (w->done)
				return 0;
		}
	}
	return 0;
}

/* The receiver's next control: the earlier of its own next control and
 * the next one its pair partner issued for it (our own first on a tie),
 * *mine 1 for our own. Skips the entries meant for the other tile.
 * Inline: the walk asks it at every control. */
static inline __attribute__((always_inline)) const XControl *
next_control(const XState *x, const XState *mx, XRx *s, int *mine)
{
	while (s->ctl < x->nctl && x->ctl[s->ctl].partner)
		s->ctl++;
	while (mx && s->pctl < mx->nctl && !mx->ctl[s->pctl].partner)
		s->pctl++;
	const XControl *own = s->ctl < x->nctl ? &x->ctl[s->ctl] : NULL;
	const XControl *theirs =
	    mx && s->pctl < mx->nctl ? &mx->ctl[s->pctl] : NULL;
	*mine = !theirs || (own && own->cycle <= theirs->cycle);
	return *mine ? own : theirs;
}

/* Walk receiver w->r on from *sp at cycle t (the items before t
 * delivered, the controls before it applied) up to `until`, or for a dry
 * or tracking walk until DCOUNT is 0 at or after w->from; *sp is the
 * state reached. */
static int
walk(Walk *w, XRx *sp, uint64_t t, uint64_t until)
{
	XState *x = &w->r->x;
	XRx s = *sp;
	Tile *mate =
	    chipsim_tile_if_exists(w->cs, chip_pair(w->r->chip, w->r->id));
	const XState *mx = mate ? &mate->x : NULL;
	int rc = 0, stops = w->dry || w->track;
	int at_t = 0; /* the controls at t applied */
	/* c: the next control not applied (the stretches' applies and
	 * deliveries change nothing next_control reads but s.ctl, s.pctl) */
	int mine;
	const XControl *c = t < until ? next_control(x, mx, &s, &mine) : NULL;
	while (t < until) {
		uint64_t next = c && c->cycle < until ? c->cycle : until;
		/* dry: nothing more expected, within this stretch of
		 * constant controls, at or after `from` */
		if (stops && s.dcount == 0 && w->from < next) {
			w->ready = s.zero_at > w->from ? s.zero_at : w->from;
			w->stop = t;
			w->stop_ctl = at_t;
			goto out;
		}

		if (next > t && deliver_from(w, &s, s.mux, t, next)) {
			rc = -1;
			goto out;
		}
		if (w->done)
			goto out;
		t = next;
		while (t < until && (c = next_control(x, mx, &s, &mine)) &&
		       c->cycle <= t) {
			apply_control(&s, c);
			if (mine)
				s.ctl++;
			else
				s.pctl++;
		}
		at_t = 1;
	}
	/* it became 0 during the last stretch */
	if (stops && s.dcount == 0)
		w->ready = s.zero_at > w->from ? s.zero_at : w->from;
	w->stop = t;
	w->stop_ctl = 0;
out:
	*sp = s;
	return rc;
}

int
xch_walk(ChipSim *cs, Tile *r, uint64_t until, ChipError *err)
{
	XState *x = &r->x;
	x->nrecv = 0;
	x->nwritten0 = x->nwritten;
	x->walked = 0;
	if (until <= x->rx_until)
		return 0;
	Walk w = {.cs = cs,
	          .r = r,
	          .routes = chipsim_routes_to(cs, r->id),
	          .err = err};
	XRx s;
	rx_load(x, &s);
	if (walk(&w, &s, x->rx_until, until))
		return -1;
	x->walk_rx = s;
	x->walk_until = until;
	x->walked = 1;
	return 0;
}

int
xch_walk_ready(ChipSim *cs, Tile *r, uint64_t from, uint64_t *ready)
{
	XState *x = &r->x;
	ChipError scratch;
	x->nrecv = 0;
	x->nwritten0 = x->nwritten;
	x->walked = 0;
	Walk w = {.cs = cs,
	          .r = r,
	          .routes = chipsim_routes_to(cs, r->id),
	          .track = 1,
	          .from = from,
	          .ready = UINT64_MAX,
	          .err = &scratch};
	rx_load(x, &x->walk_rx);
	x->tracked = 1; /* also on an error: its deliveries, to discard */
	if (walk(&w, &x->walk_rx, x->rx_until, UINT64_MAX))
		return -1;
	x->walk_stop = w.stop;
	x->walk_stop_ctl = w.stop_ctl;
	*ready = w.ready;
	return 0;
}

int
xch_walk_on(ChipSim *cs, Tile *r, uint64_t until, ChipError *err)
{
	XState *x = &r->x;
	if (!x->tracked)
		return xch_walk(cs, r, until, err);
	x->tracked = 0;
	/* past `until`, or with the controls at `until` applied, which a walk
	 * to `until` leaves: walked again from where it began */
	if (x->walk_stop > until ||
	    (x->walk_stop == until && x->walk_stop_ctl)) {
		xch_discard(r);
		return xch_walk(cs, r, until, err);
	}
	Walk w = {.cs = cs,
	          .r = r,
	          .routes = chipsim_routes_to(cs, r->id),
	          .err = err};
	if (walk(&w, &x->walk_rx, x->walk_stop, until))
		return -1;
	x->walk_until = until;
	x->walked = 1;
	return 0;
}

void
xch_commit(Tile *r)
{
	XState *x = &r->x;
	for (int k = 0; k < x->nrecv; k++) {
		const XRecv *v = &x->recv[k];
		const XPacket *p = v->p;
		if (!p)
			continue;
		uint32_t item = p->item, n = v->i1 - v->i0;
		tile_write(r, v->addr, p->data + (size_t)v->i0 * item,
		           n * item);
		if (r->obs)
			sim_observe_receive_run(r, v->addr, n, item, v->src,
			                        p->ctx, p->pc, v->at);
	}
	if (x->walked)
		rx_store(x, &x->walk_rx, x->walk_until);
	x->walked = 0;
	x->tracked = 0;
}

void
xch_commit_senders(Tile *r)
{
	XState *x = &r->x;
	for (int k = 0; k < x->nrecv; k++) {
		const XRecv *v = &x->recv[k];
		XPacket *p = v->p;
		if (!p)
			continue;
		int all = v->i0 == 0 && v->i1 == p->n;
		if (p->pairsum && all)
			p->pairsum_all += pair_mark(r->chip, r->id);
		else if (p->pairsum) {
			uint64_t mark = pair_mark(r->chip, r->id);
			if (!p->pairsum_set) {
				memset(p->pairsum, 0,
				       p->n * sizeof *p->pairsum);
				p->pairsum_set = 1;
			}
			for (uint32_t i = v->i0; i < v->i1; i++)
				p->pairsum[i] += mark;
		}
		/* the first receiver: no item got yet (ngot counts the got
		 * bytes set), so all of its items count; got is zeroed here
		 * when some are left (read only while 0 < ngot < n) */
		if (p->ngot == 0) {
			p->ngot = v->i1 - v->i0;
			if (p->ngot < p->n) {
				memset(p->got, 0, p->n);
				memset(p->got + v->i0, 1, p->ngot);
			}
			continue;
		}
		/* a multicast's later receivers: every item counted */
		for (uint32_t i = v->i0; p->ngot < p->n && i < v->i1; i++) {
			p->ngot += !p->got[i];
			p->got[i] = 1;
		}
	}
	x->nrecv = 0;
}

void
xch_discard(Tile *r)
{
	XState *x = &r->x;
	for (int k = 0; k < x->nrecv; k++) {
		const XRecv *v = &x->recv[k];
		uint32_t w0 = v->addr / 4,
		         w1 =
		             w0 + (v->p ? (v->i1 - v->i0) * v->p->item / 4 : 1);
		for (uint32_t w = w0; w < w1; w++)
			x->written_bits[w / 64] &= ~(1ull << (w % 64));
	}
	x->nwritten = x->nwritten0; /* the chunks it added are 0 again */
	x->nrecv = 0;
	x->walked = 0;
	x->tracked = 0;
}

int
xch_resolve(ChipSim *cs, Tile *r, uint64_t until, ChipError *err)
{
	int rc = xch_walk(cs, r, until, err);
	xch_commit(r);
	xch_commit_senders(r);
	return rc;
}

uint64_t
xch_ready_cycle(ChipSim *cs, const Tile *r, uint64_t from)
{
	ChipError scratch;
	Walk w = {.cs = cs,
	          .r = (Tile *)r,
	          .routes = chipsim_routes_to(cs, r->id),
	          .dry = 1,
	          .from = from,
	          .ready = UINT64_MAX,
	          .err = &scratch};
	XRx s;
	rx_load(&r->x, &s);
	if (walk(&w, &s, r->x.rx_until, UINT64_MAX))
		return UINT64_MAX;
	return w.ready;
}

/* Drop the packets and controls of tile t that no walk reads again, so
 * that a long run's exchange state stays the size of a few phases', not
 * of the whole run: at 64, a tile's arrays stay a few KiB (at 1,024 the
 * sends grew them by reallocation and first touches for most of a layer,
 * docs/bench-sim.md). Between rounds only: the pair partner's pctl_done
 * indexes t's controls. */
enum { COMPACT_MIN = 64 };
static void
compact(Tile *t, Tile *mate)
{
	XState *x = &t->x;
	int k = x->pk_done < x->pk_checked ? x->pk_done : x->pk_checked;
	if (k >= COMPACT_MIN && 2 * k >= x->npk) {
		memmove(x->pk, x->pk + k, (size_t)(x->npk - k) * sizeof *x->pk);
		x->npk -= k;
		x->pk_done -= k;
		x->pk_checked -= k;
	}
	int c = x->ctl_done;
	if (mate && mate->x.pctl_done < c)
		c = mate->x.pctl_done;
	if (c >= COMPACT_MIN && 2 * c >= x->nctl) {
		memmove(x->ctl, x->ctl + c,
		        (size_t)(x->nctl - c) * sizeof *x->ctl);
		x->nctl -= c;
		x->ctl_done -= c;
		if (mate)
			mate->x.pctl_done -= c;
	}
}

int
xch_check_lost(ChipSim *cs, uint64_t horizon, ChipError *err)
{
	const Chip *c = chipsim_chip(cs);
	uint64_t lmax = chip_route_max_cycles(c);
	for (uint32_t id = 0; id < chipsim_tiles(cs); id++) {
		Tile *t = chipsim_tile_if_exists(cs, id);
		if (!t)
			continue;
		XState *x = &t->x;
		while (x->pk_done < x->npk) {
			XPacket *p = &x->pk[x->pk_done];
			if (horizon != UINT64_MAX &&
			    p->depart + p->n + lmax >= horizon)
				break;
			if (p->ngot < p->n) {
				uint32_t i = 0; /* got is set once ngot > 0 */
				while (p->ngot && p->got[i])
					i++;
				return tx_error(
				    err, t, p, p->depart + i,
				    "exchange: tile %u sent %u items at "
				    "cycle %llu from 0x%05x; item %u (cycle "
				    "%llu, from 0x%05x) reached no tile: "
				    "no receiver's mux selected tile %u "
				    "when it arrived",
				    id, p->n, (unsigned long long)p->depart,
				    p->src_addr, i,
				    (unsigned long long)(p->depart + i),
				    p->src_addr + i * p->item, id);
			}
			/* pairsum[i] is 0 until set (pairsum_set) */
			for (uint32_t i = 0; p->pairsum && i < p->n; i++)
				if ((p->pairsum_set ? p->pairsum[i] : 0) +
				    p->pairsum_all)
					return tx_error(
					    err, t, p, p->depart + i,
					    "exchange: 64-bit item %u of tile "
					    "%u's send at cycle %llu (from "
					    "0x%05x) reached a tile whose pair "
					    "partner did not receive it: "
					    "64-bit "
					    "items use both tiles' wires, so "
					    "whole pairs must receive them",
					    i, id,
					    (unsigned long long)p->depart,
					    p->src_addr + i * p->item);
			block_free(x, p->chunk); /* data, got, pairsum */
			p->data = p->got = NULL;
			p->chunk = NULL;
			p->pairsum = NULL;

			x->pk_done++;
		}
		compact(t, chipsim_tile_if_exists(cs, chip_pair(c, id)));
	}
	return 0;
}

int
xch_check_pairs(ChipSim *cs, ChipError *err)
{
	for (uint32_t id = 0; id < chipsim_tiles(cs); id++) {
		Tile *t = chipsim_tile_if_exists(cs, id);
		if (!t)
			continue;
		XState *x = &t->x;
		uint32_t mate = chip_pair(t->chip, id);
		Tile *m = chipsim_tile_if_exists(cs, mate);
		for (; x->pk_checked < x->npk; x->pk_checked++) {
			XPacket *p = &x->pk[x->pk_checked];
			if (p->item != 8 || !m)
				continue;
			for (int k = m->x.pk_done; k < m->x.npk; k++) {
				XPacket *q = &m->x.pk[k];
				if (q->depart < p->depart + p->n &&
				    p->depart < q->depart + q->n)
					return tx_error(
					    err, t, p, p->depart,
					    "exchange: tile %u sends 64-bit "
					    "items at cycles %llu..%llu on "
					    "the wires it shares with tile "
					    "%u, which sends at %llu..%llu",
					    id, (unsigned long long)p->depart,
					    (unsigned long long)(p->depart +
					                         p->n - 1),
					    mate, (unsigned long long)q->depart,
					    (unsigned long long)(q->depart +
					                         q->n - 1));
			}
		}
	}
	return 0;
}

/*
 * chip.c - many tiles of one IPU: bulk-synchronous rounds, syncs between
 * tiles, the host link, and the thread pool that runs tiles in parallel.
 *
 * A round runs every runnable tile until it returns, faults, or reaches a
 * sync with other tiles. Tiles share nothing while they run (sends and
 * receive controls go into per-tile logs), so the pool's threads never
 * touch the same tile and the result cannot depend on their number. Then,
 * in tile order:
 *   1. the exchange is resolved up to where every log is complete (the
 *      receivers are walked on the pool and their walks committed up to
 *      the first that fails: resolve_walks);
 *   2. tiles waiting in `sync 0` (RECV) whose expected items have all
 *      arrived go on after the last one;
 *   3. otherwise, when every waiting tile is in the same global zone, the
 *      barrier releases them all together: at the latest arrival (a tile
 *      arrives when its supervisor syncs and its $INCOMING_DCOUNT is 0)
 *      plus the zone's cost, and with the host link's transfers for zones
 *      that include the host;
 *   4. anything else is a deadlock, reported tile by tile.
 * docs/chip.md states the model and its sources.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "sim.h"

typedef struct {
	uint32_t sync; /* performed at this host sync (0 = the first) */
	uint32_t tile, addr, len;
	uint8_t *data; /* write: the bytes; read: NULL */
	void *dst;     /* read: where the bytes go */
} HostOp;

struct ChipSim {
	const Chip *chip;
	uint32_t ntiles;
	int threads;
	int trace;
	Tile **tile;  /* by logical id, NULL until used */
	uint64_t end; /* cycle at which the last tile finished */
	HostOp *hops;
	int nhops, caphops;
	uint64_t host_cycles;
	uint32_t host_syncs; /* host syncs so far */
	uint32_t host_stop;  /* the host is in no host sync from this on */
	uint32_t host_period, host_phase; /* chipsim_set_host_phase */
	/* a round's tiles */
	uint32_t *run;
	uint32_t nrun;
	RunStatus *status;
	uint64_t max_cycles;
	/* the exchange's walks (resolve): tiles, each to its cycle */
	uint32_t *walk;
	uint64_t *until;
	int *walk_rc;
	uint32_t nwalk, ncommit;
	uint16_t *routes; /* chipsim_routes_to: ntiles x ntiles */
	/* the pool's work: job(cs, i) for i < njobs; next is the next i to
	 * take (atomic) */
	void (*job)(ChipSim *cs, uint32_t i);
	uint32_t njobs, next;
	pthread_mutex_t lock;
	/* the pool's helpers (threads - 1 of them), started at the first
	 * round with work for two, kept until chipsim_free: `rounds` counts
	 * the rounds handed to them, `busy` the helpers not yet done with
	 * the last one, `quit` ends them; all under lock */
	pthread_t helper[63];
	int nhelpers;
	pthread_cond_t go, idle;
	uint64_t rounds;
	int busy, quit;
	SimCode *code; /* the tiles' decoded issues */
	void (*progress)(void *ctx, uint64_t cycles);
	void *progress_ctx;
};

ChipSim *
chipsim_new(const ChipConfig *cfg)
{
	ChipSim *cs = xcalloc(1, sizeof *cs);
	cs->chip = cfg->chip ? cfg->chip : chip_default();
	cs->ntiles = cfg->tiles && cfg->tiles < cs->chip->tiles
	                 ? cfg->tiles
	                 : cs->chip->tiles;
	cs->threads = cfg->threads > 0 ? cfg->threads : 1;
	cs->host_stop = UINT32_MAX;
	cs->trace = cfg->trace;
	cs->tile = xcalloc(cs->ntiles, sizeof *cs->tile);
	cs->run = xcalloc(cs->ntiles, sizeof *cs->run);
	cs->status = xcalloc(cs->ntiles, sizeof *cs->status);
	cs->walk = xcalloc(cs->ntiles, sizeof *cs->walk);
	cs->until = xcalloc(cs->ntiles, sizeof *cs->until);
	cs->walk_rc = xcalloc(cs->ntiles, sizeof *cs->walk_rc);
	cs->routes =
	    xcalloc((size_t)cs->ntiles * cs->ntiles, sizeof *cs->routes);
	pthread_mutex_init(&cs->lock, NULL);
	pthread_cond_init(&cs->go, NULL);
	pthread_cond_init(&cs->idle, NULL);
	cs->code = sim_code_new();
	return cs;
}

void
chipsim_free(ChipSim *cs)
{
	if (!cs)
		return;
	pthread_mutex_lock(&cs->lock);
	cs->quit = 1;
	pthread_cond_broadcast(&cs->go);
	pthread_mutex_unlock(&cs->lock);
	for (int i = 0; i < cs->nhelpers; i++)
		pthread_join(cs->helper[i], NULL);
	for (uint32_t i = 0; i < cs->ntiles; i++)
		tile_free(cs->tile[i]);
	for (int i = 0; i < cs->nhops; i++)
		free(cs->hops[i].data);
	free(cs->hops);
	free(cs->tile);
	free(cs->run);
	free(cs->status);
	free(cs->walk);
	free(cs->until);
	free(cs->walk_rc);
	free(cs->routes);
	sim_code_free(cs->code);
	pthread_mutex_destroy(&cs->lock);
	pthread_cond_destroy(&cs->go);
	pthread_cond_destroy(&cs->idle);
	free(cs);
}

const Chip *
chipsim_chip(const ChipSim *cs)
{
	return cs->chip;
}

uint32_t
chipsim_tiles(const ChipSim *cs)
{
	return cs->ntiles;
}

void
chipsim_set_progress(ChipSim *cs, void (*fn)(void *ctx, uint64_t cycles),
                     void *ctx)
{
	cs->progress = fn;
	cs->progress_ctx = ctx;
}

Tile *
chipsim_tile_if_exists(const ChipSim *cs, uint32_t id)
{
	return id < cs->ntiles ? cs->tile[id] : NULL;
}

uint16_t *
chipsim_routes_to(ChipSim *cs, uint32_t dst)
{
	return cs->routes + (size_t)dst * cs->ntiles;
}

Tile *
chipsim_tile(ChipSim *cs, uint32_t id)
{
	if (id >= cs->ntiles)
		return NULL;
	if (!cs->tile[id]) {
		Tile *t = tile_new(cs->chip, id);
		t->cs = cs;
		tile_share_code(t, cs->code);
		t->trace_on = cs->trace;
		cs->tile[id] = t;
	}
	return cs->tile[id];
}

uint64_t
chipsim_cycles(const ChipSim *cs)
{
	return cs->end;
}

uint64_t
chipsim_host_cycles(const ChipSim *cs)
{
	return cs->host_cycles;
}

uint32_t
chipsim_host_syncs(const ChipSim *cs)
{
	return cs->host_syncs;
}

void
chipsim_set_host_stop(ChipSim *cs, uint32_t n)
{
	cs->host_stop = n;
}

void
chipsim_set_host_phase(ChipSim *cs, uint32_t period, uint32_t phase)
{
	cs->host_period = period;
	cs->host_phase = period ? phase % period : 0;
}

static int
host_op(ChipSim *cs, uint32_t sync, uint32_t tile, uint32_t addr, uint32_t len,
        const void *src, void *dst)
{
	if (tile >= cs->ntiles || !chip_in_memory(cs->chip, addr, len) ||
	    sync < cs->host_syncs)
		return -1;
	GROW(cs->hops, cs->nhops, cs->caphops);
	HostOp *h = &cs->hops[cs->nhops++];
	*h = (HostOp){sync, tile, addr, len, NULL, dst};
	if (src) {
		h->data = xmalloc(len);
		memcpy(h->data, src, len);
	}
	return 0;
}

int
chipsim_host_write(ChipSim *cs, uint32_t sync, uint32_t tile, uint32_t addr,
                   const void *src, uint32_t len)
{
	return host_op(cs, sync, tile, addr, len, src, NULL);
}

int
chipsim_host_read(ChipSim *cs, uint32_t sync, uint32_t tile, uint32_t addr,
                  void *dst, uint32_t len)
{
	return host_op(cs, sync, tile, addr, len, NULL, dst);
}

/* The pool: each thread takes the next job until none is left. */
static void
take_jobs(ChipSim *cs)
{
	for (;;) {
		uint32_t i = __atomic_fetch_add(&cs->next, 1, __ATOMIC_RELAXED);
		if (i >= cs->njobs)
			return;
		cs->job(cs, i);
	}
}

/* A helper: each round handed to the helpers, once. */
static void *
helper_main(void *arg)
{
	ChipSim *cs = arg;
	uint64_t done = 0;
	pthread_mutex_lock(&cs->lock);
	for (;;) {
		while (cs->rounds == done && !cs->quit)
			pthread_cond_wait(&cs->go, &cs->lock);
		if (cs->quit)
			break;
		done = cs->rounds;
		pthread_mutex_unlock(&cs->lock);
		take_jobs(cs);
		pthread_mutex_lock(&cs->lock);
		if (--cs->busy == 0)
			pthread_cond_signal(&cs->idle);
	}
	pthread_mutex_unlock(&cs->lock);
	return NULL;
}

/* job(cs, i) for every i < n on this thread and the helpers (started
 * once, so that a run of many short rounds does not start threads for
 * each). */
static void
pool_run(ChipSim *cs, uint32_t n, void (*job)(ChipSim *cs, uint32_t i))
{
	cs->job = job;
	cs->njobs = n;
	cs->next = 0;
	if (cs->threads <= 1 || n <= 1) {
		take_jobs(cs);
		return;
	}
	if (!cs->nhelpers) {
		int n = cs->threads - 1;
		if (n > (int)(sizeof cs->helper / sizeof cs->helper[0]))
			n = (int)(sizeof cs->helper / sizeof cs->helper[0]);
		for (; cs->nhelpers < n; cs->nhelpers++)
			if (pthread_create(&cs->helper[cs->nhelpers], NULL,
			                   helper_main, cs))
				die("cannot start a host thread");
	}
	pthread_mutex_lock(&cs->lock);
	cs->rounds++;
	cs->busy = cs->nhelpers;
	pthread_cond_broadcast(&cs->go);
	pthread_mutex_unlock(&cs->lock);
	take_jobs(cs);
	pthread_mutex_lock(&cs->lock);
	while (cs->busy)
		pthread_cond_wait(&cs->idle, &cs->lock);
	pthread_mutex_unlock(&cs->lock);
}

static void
run_tile(ChipSim *cs, uint32_t i)
{
	cs->status[i] = tile_run(cs->tile[cs->run[i]], cs->max_cycles);
}

static void
walk_tile(ChipSim *cs, uint32_t i)
{
	ChipError scratch; /* the failing walk is walked again for its error */
	cs->walk_rc[i] =
	    xch_walk_on(cs, cs->tile[cs->walk[i]], cs->until[i], &scratch);
}

static void
commit_tile(ChipSim *cs, uint32_t i)
{
	if (i < cs->ncommit)
		xch_commit(cs->tile[cs->walk[i]]);
	else
		xch_discard(cs->tile[cs->walk[i]]);
}

static void
ready_tile(ChipSim *cs, uint32_t i)
{
	const Tile *t = cs->tile[cs->walk[i]];
	cs->until[i] = xch_ready_cycle(cs, t, t->wait.since);
}

static void
track_tile(ChipSim *cs, uint32_t i)
{
	Tile *t = cs->tile[cs->walk[i]];
	cs->walk_rc[i] = xch_walk_ready(cs, t, t->wait.since, &cs->until[i]);
}

/* Every walk xch_walk_ready left, discarded. */
static void
discard_tracked(ChipSim *cs)
{
	for (uint32_t i = 0; i < cs->ntiles; i++)
		if (cs->tile[i] && cs->tile[i]->x.tracked)
			xch_discard(cs->tile[i]);
}

/* The tiles waiting in sync RECV (recv 1), or (0) in other syncs and not
 * done, in walk[] and in tile order, and their xch_ready_cycle in until[].
 * By walks that deliver (xch_walk_ready), which resolve_walks goes on from
 * instead of walking their stretch a second time (docs/bench-sim.md,
 * speedx), unless one meets an error: then all are discarded and dry walks,
 * which change nothing, answer, as they always do on SIM_PLAIN. All at
 * once on the pool. */
static void
ready_cycles(ChipSim *cs, int recv)
{
	cs->nwalk = 0;
	for (uint32_t i = 0; i < cs->ntiles; i++) {
		const Tile *t = cs->tile[i];
		if (t &&
		    (recv ? t->wait.zone == SYNC_RECV
		          : t->wait.zone >= 0 && t->wait.zone != SYNC_RECV &&
		                t->ctx[0].state != CTXS_DONE))
			cs->walk[cs->nwalk++] = i;
	}
	if (sim_path != SIM_PLAIN) {
		pool_run(cs, cs->nwalk, track_tile);
		uint32_t k = 0;
		while (k < cs->nwalk && !cs->walk_rc[k])
			k++;
		if (k == cs->nwalk)
			return;
		discard_tracked(cs);
	}
	pool_run(cs, cs->nwalk, ready_tile);
}

/* Resolve the exchange at tiles walk[0..nwalk) in that order, each up to
 * until[i], as xch_resolve one after another would: all are walked at
 * once, those before the first that fails are committed, and the rest
 * discarded; the failing one is then resolved alone, which leaves it as
 * the serial walk would (its items before the error written) and fills
 * err. Returns how many were resolved without an error. */
static uint32_t
resolve_walks(ChipSim *cs, ChipError *err)
{
	pool_run(cs, cs->nwalk, walk_tile);
	cs->ncommit = 0;
	while (cs->ncommit < cs->nwalk && !cs->walk_rc[cs->ncommit])
		cs->ncommit++;
	pool_run(cs, cs->nwalk, commit_tile);
	uint32_t k = cs->ncommit;
	for (uint32_t i = 0; i < k; i++)
		xch_commit_senders(cs->tile[cs->walk[i]]);
	if (k < cs->nwalk &&
	    !xch_resolve(cs, cs->tile[cs->walk[k]], cs->until[k], err))
		die("chipsim: an exchange walk failed only on its own thread");
	return k;
}

static int
runnable(const Tile *t)
{
	if (t->ctx[0].state == CTXS_RUN)
		return 1;
	for (int i = 1; i < CHIP_CONTEXTS; i++)
		if (t->ctx[i].state == CTXS_RUN)
			return 1;
	return t->ctx[0].state == CTXS_SYNC && t->wait.zone < 0;
}

int
chip_error(ChipError *err, RunStatus st, uint32_t tile, uint64_t cycle,
           const char *fmt, ...)
{
	err->status = st;
	err->tile = tile;
	err->cycle = cycle;
	err->ctx = -1;
	err->pc = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

/* The earliest fault of the round (cycle, then tile id). */
static void
report_fault(ChipSim *cs, ChipError *err)
{
	Tile *first = NULL;
	for (uint32_t i = 0; i < cs->nrun; i++) {
		Tile *t = cs->tile[cs->run[i]];
		if (cs->status[i] == RUN_FAULT &&
		    (!first || t->fault.cycle < first->fault.cycle))
			first = t;
	}
	err->status = RUN_FAULT;
	err->tile = first->id;
	err->cycle = first->fault.cycle;
	err->ctx = first->fault.ctx;
	err->pc = first->fault.pc;
	tile_format_fault(first, err->msg, sizeof err->msg);
}

/* What a barrier in this zone costs after the last arrival: the host's,
 * an external (GS1, GS2) or the on-chip sync's (syncs.def; docs/chip.md,
 * "Syncs"). */
static uint64_t
zone_cycles(const Chip *c, int zone)
{
	if (sync_zone_has_host(zone))
		return chip_sync_host_cycles(c);
	if (sync_zone_is_external(zone))
		return chip_rule(c, TIMING_SYNC_EXTERNAL);
	return chip_rule(c, TIMING_SYNC_INTERNAL);
}

/* The transfers of this host sync; returns their cycles. */
static uint64_t
host_transfers(ChipSim *cs)
{
	uint64_t total = 0, per_tile_max = 0;
	uint64_t *per_tile = xcalloc(cs->ntiles, sizeof *per_tile);
	int kept = 0;
	for (int i = 0; i < cs->nhops; i++) {
		HostOp *h = &cs->hops[i];
		if (h->sync != cs->host_syncs) {
			cs->hops[kept++] = *h;
			continue;
		}
		Tile *t = chipsim_tile(cs, h->tile);
		if (h->data)
			tile_write(t, h->addr, h->data, h->len);
		else
			tile_read(t, h->addr, h->dst, h->len);
		total += h->len;
		per_tile[h->tile] += h->len;
		if (per_tile[h->tile] > per_tile_max)
			per_tile_max = per_tile[h->tile];
		free(h->data);
	}
	free(per_tile);
	cs->nhops = kept;
	cs->host_syncs++;
	/* PCIe for the whole chip, and 4 bytes per cycle into one tile
	 * (system.md 5.1, 8.1). */
	uint64_t link = chip_host_cycles(cs->chip, total);
	uint64_t tile = (per_tile_max + 3) / 4;
	return link > tile ? link : tile;
}

static void
release(ChipSim *cs, Tile *t, uint64_t at, int new_phase)
{
	tile_trace(t, TR_SYNC, t->wait.since, at, (uint32_t)t->wait.zone);
	t->cycle = at;
	t->wait.zone = -1;
	t->ctx[0].state = CTXS_RUN;
	if (new_phase)
		xch_new_phase(t);
}

/* A deadlock: tile t waits for items that will not come. Lost items are
 * the likely cause, so look for them first: with every tile stopped, all
 * can be resolved to the end of time. */
static int
describe_wait(ChipSim *cs, Tile *t, ChipError *err)
{
	for (uint32_t i = 0; i < cs->ntiles; i++)
		if (cs->tile[i] &&
		    xch_resolve(cs, cs->tile[i], UINT64_MAX, err))
			return -1;
	if (xch_check_lost(cs, UINT64_MAX, err))
		return -1;
	XState *x = &t->x;
	char src[32];
	if (x->mux == MUX_NONE)
		snprintf(src, sizeof src, "nothing");
	else if (x->mux == MUX_HOST)
		snprintf(src, sizeof src, "the host");
	else
		snprintf(src, sizeof src, "tile %u", x->mux);
	char at[320];
	tile_format_pc(t, 0, t->wait.pc, at, sizeof at);
	chip_error(err, RUN_DEADLOCK, t->id, t->wait.since,
	           "deadlock: tile %u waits in sync %d since cycle %llu (%s) "
	           "for %u more items ($INCOMING_DCOUNT) that will never "
	           "come; its mux listens to %s; %s",
	           t->id, t->wait.zone, (unsigned long long)t->wait.since, at,
	           x->dcount, src,
	           x->last_rx_cycle ? "it received its last item"
	                            : "it received nothing");
	err->ctx = 0;
	err->pc = t->wait.pc;
	return -1;
}

/* Tile t waits in another sync than the first waiting tile: both syncs,
 * with their tiles, pcs and instructions. */
static int
sync_mismatch(ChipSim *cs, Tile *t, int zone, ChipError *err)
{
	Tile *o = NULL;
	for (uint32_t i = 0; i < cs->ntiles && !o; i++)
		if (cs->tile[i] && cs->tile[i]->wait.zone == zone &&
		    cs->tile[i]->ctx[0].state != CTXS_DONE)
			o = cs->tile[i];
	char here[320], there[320];
	tile_format_pc(t, 0, t->wait.pc, here, sizeof here);
	tile_format_pc(o, 0, o->wait.pc, there, sizeof there);
	chip_error(err, RUN_DEADLOCK, t->id, t->wait.since,
	           "deadlock: tile %u waits in sync %d since cycle %llu "
	           "(%s) but tile %u waits in sync %d since cycle %llu (%s)",
	           t->id, t->wait.zone, (unsigned long long)t->wait.since, here,
	           o->id, zone, (unsigned long long)o->wait.since, there);
	err->ctx = 0;
	err->pc = t->wait.pc;
	return -1;
}

/* The global barrier's zone and the cycle its last tile arrives (each
 * waiting tile's ready cycle, from cs->until in tile order, or its sync's).
 * Returns the first waiting tile that cannot take part (*mismatch: in
 * another zone than the tiles before it), or NULL. */
static Tile *
barrier_arrival(ChipSim *cs, int *zone, uint64_t *last, int *mismatch)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < cs->ntiles; i++) {
		Tile *t = cs->tile[i];
		/* Tiles that have returned, or never started, take no part. */
		if (!t || t->wait.zone < 0)
			continue;
		if (t->ctx[0].state == CTXS_DONE)
			continue;
		if (t->wait.zone == SYNC_RECV)
			return t;
		if (*zone < 0)
			*zone = t->wait.zone;
		else if (t->wait.zone != *zone) {
			*mismatch = 1;
			return t;
		}
		uint64_t ready = cs->until[k++];
		if (ready == UINT64_MAX)
			return t;
		uint64_t arrive = ready > t->wait.since ? ready : t->wait.since;
		if (arrive > *last)
			*last = arrive;
	}
	return NULL;
}

/* One barrier step after a round; returns 1 if tiles were released, 0 if
 * all tiles are done, 2 if they wait for the host (host_stop), -1 on an
 * error. */
static int
settle(ChipSim *cs, ChipError *err)
{
	/* Every log is complete up to the earliest waiting tile's sync: no
	 * tile can issue a send or a control before it goes on (a tile that
	 * waits in sync RECV may go on right after). */
	uint64_t horizon = UINT64_MAX;
	int waiting = 0;
	for (uint32_t i = 0; i < cs->ntiles; i++) {
		Tile *t = cs->tile[i];
		if (t && t->wait.zone >= 0) {
			if (t->wait.since + 1 < horizon)
				horizon = t->wait.since + 1;
			waiting++;
		}
	}
	if (xch_check_pairs(cs, err))
		return -1;
	/* 1. resolve the exchange as far as every log is complete */
	cs->nwalk = 0;
	for (uint32_t i = 0; i < cs->ntiles; i++)
		if (cs->tile[i] && cs->tile[i]->x.rx_until < horizon) {
			cs->walk[cs->nwalk] = i;
			cs->until[cs->nwalk++] = horizon;
		}
	if (resolve_walks(cs, err) < cs->nwalk)
		return -1;

	if (!waiting)
		return xch_check_lost(cs, UINT64_MAX, err);
	/* Items every tile has resolved past, that none received, are lost:
	 * the likely cause of any wait that follows. */
	uint64_t known = UINT64_MAX;
	for (uint32_t i = 0; i < cs->ntiles; i++)
		if (cs->tile[i] && cs->tile[i]->x.rx_until < known)
			known = cs->tile[i]->x.rx_until;
	if (xch_check_lost(cs, known, err))
		return -1;
	/* 2. sync RECV: go on after the last expected item */
	ready_cycles(cs, 1);
	uint32_t n = 0;
	for (uint32_t k = 0; k < cs->nwalk; k++) {
		Tile *t = cs->tile[cs->walk[k]];
		if (cs->until[k] == UINT64_MAX) {
			if (t->x.tracked)
				xch_discard(t);
			continue;
		}
		cs->walk[n] = cs->walk[k];
		cs->until[n++] = cs->until[k] > t->wait.since + 1
		                     ? cs->until[k]
		                     : t->wait.since + 1;
	}
	cs->nwalk = n;
	if (cs->nwalk) {
		uint32_t ok = resolve_walks(cs, err);
		for (uint32_t k = 0; k < ok; k++)
			release(cs, cs->tile[cs->walk[k]], cs->until[k], 0);
		return ok < cs->nwalk ? -1 : 1;
	}
	/* 3. a global barrier */
	ready_cycles(cs, 0);
	int zone = -1;
	uint64_t last = 0;
	int mismatch = 0;
	Tile *bad = barrier_arrival(cs, &zone, &last, &mismatch);
	/* the run stops before this host sync (chipsim_set_host_stop) */
	int stop = sync_zone_has_host(zone) && cs->host_syncs >= cs->host_stop;
	if (bad || stop) {
		/* the tracked deliveries go before the wait is described */
		discard_tracked(cs);
		if (!bad)
			return 2;
		return mismatch ? sync_mismatch(cs, bad, zone, err)
		                : describe_wait(cs, bad, err);
	}
	uint64_t cost = zone_cycles(cs->chip, zone);
	if (sync_zone_has_host(zone)) {
		uint64_t xfer = host_transfers(cs);
		cs->host_cycles += cost + xfer;
		cost += xfer;
	}
	uint64_t at = last + cost;
	if (sync_zone_has_host(zone) && cs->host_period) {
		uint64_t r =
		    (at + cs->host_period - cs->host_phase) % cs->host_period;
		if (r)
			at += cs->host_period - r;
	}
	cs->nwalk = 0;
	for (uint32_t i = 0; i < cs->ntiles; i++)
		if (cs->tile[i] && cs->tile[i]->wait.zone >= 0) {
			cs->walk[cs->nwalk] = i;
			cs->until[cs->nwalk++] = at;
		}
	uint32_t ok = resolve_walks(cs, err);
	for (uint32_t k = 0; k < ok; k++)
		release(cs, cs->tile[cs->walk[k]], at, 1);
	return ok < cs->nwalk ? -1 : 1;
}

RunStatus
chipsim_run(ChipSim *cs, uint64_t max_cycles, ChipError *err)
{
	memset(err, 0, sizeof *err);
	cs->max_cycles = max_cycles;
	for (;;) {
		cs->nrun = 0;
		for (uint32_t i = 0; i < cs->ntiles; i++)
			if (cs->tile[i] && runnable(cs->tile[i]))
				cs->run[cs->nrun++] = i;
		pool_run(cs, cs->nrun, run_tile);
		for (uint32_t i = 0; i < cs->nrun; i++)
			if (cs->status[i] == RUN_FAULT) {
				report_fault(cs, err);
				return RUN_FAULT;
			}
		for (uint32_t i = 0; i < cs->nrun; i++)
			if (cs->status[i] == RUN_TIMEOUT) {
				Tile *t = cs->tile[cs->run[i]];
				char at[320];
				tile_format_pc(t, 0, t->ctx[0].pc, at,
				               sizeof at);
				chip_error(err, RUN_TIMEOUT, t->id, max_cycles,
				           "tile %u did not finish in %llu "
				           "cycles (next: its %s)",
				           t->id,
				           (unsigned long long)max_cycles, at);
				err->ctx = 0;
				err->pc = t->ctx[0].pc;
				return RUN_TIMEOUT;
			}
		int r = settle(cs, err);
		if (r < 0)
			return err->status;
		if (r == 2)
			return RUN_HOST;
		if (r == 0)
			break;
		if (cs->progress) {
			uint64_t now = 0;
			for (uint32_t i = 0; i < cs->ntiles; i++)
				if (cs->tile[i] && cs->tile[i]->cycle > now)
					now = cs->tile[i]->cycle;
			cs->progress(cs->progress_ctx, now);
		}
	}
	cs->end = 0;
	for (uint32_t i = 0; i < cs->ntiles; i++)
		if (cs->tile[i] && cs->tile[i]->cycle > cs->end)
			cs->end = cs->tile[i]->cycle;
	return RUN_DONE;
}

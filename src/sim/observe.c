/*
 * observe.c - watching tiles from outside (sim.h, "Observation"): marks,
 * breakpoints, watched memory, running totals and where each tile stands.
 *
 * Nothing here changes what the emulated program does or when: a mark is
 * noted when its instruction issues, a total grows when the emulator
 * records what already happened (tile_trace), and a break or a watch stops
 * the tile as an exception would, at a point the program reached on its
 * own. A profile therefore costs the program no cycle and no byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "sim.h"

SimObserve *
sim_observe(Tile *t)
{
	if (!t->obs) {
		const Chip *c = t->chip;
		t->obs = xcalloc(1, sizeof *t->obs);
		t->obs->flag = xcalloc((c->exec_end - c->mem_base) / 4, 1);
	}
	return t->obs;
}

void
sim_observe_free(Tile *t)
{
	if (!t->obs)
		return;
	free(t->obs->flag);
	free(t->obs->log);
	free(t->obs->watch_old);
	free(t->obs);
	t->obs = NULL;
}

int
sim_mark(Tile *t, uint32_t pc, unsigned flags)
{
	const Chip *c = t->chip;
	if (pc % 4 || pc < c->mem_base || pc >= c->exec_end)
		return -1;
	sim_observe(t)->flag[(pc - c->mem_base) / 4] |= (uint8_t)flags;
	return 0;
}

int
sim_watch(Tile *t, uint32_t addr, uint32_t len)
{
	if (!len || !chip_in_memory(t->chip, addr, len))
		return -1;
	SimObserve *o = sim_observe(t);
	free(o->watch_old);
	o->watch_addr = addr;
	o->watch_len = len;
	o->watch_old = xmalloc(len);
	tile_read(t, addr, o->watch_old, len);
	/* the fast paths write memory directly: every store of a watched
	 * tile goes through sim_store_plain, which sees the watch */
	t->mem_fast = 0;
	return 0;
}

/* The supervisor issuing at a marked pc: its totals so far. */
static void
note(Tile *t, SimObserve *o, uint32_t pc)
{
	GROW(o->log, o->nlog, o->caplog);
	SimMark *m = &o->log[o->nlog++];
	*m = o->total;
	m->cycle = t->cycle;
	m->pc = pc;
}

int
sim_observe_issue(Exec *e)
{
	Tile *t = e->tile;
	SimObserve *o = t->obs;
	uint8_t f = o->flag[(e->pc - t->chip->mem_base) / 4];
	if ((f & SIM_MARK_LOG) && e->ctx == 0)
		note(t, o, e->pc);
	if (!(f & SIM_MARK_BREAK))
		return 0;
	if (o->break_skip) {
		o->break_skip--;
		return 0;
	}
	sim_fault(e, FAULT_IBRK, e->pc, "breakpoint at pc 0x%05x", e->pc);
	return 1;
}

void
sim_observe_event(Tile *t, TraceKind kind, uint64_t start, uint64_t end,
                  uint32_t arg)
{
	SimMark *s = &t->obs->total;
	switch (kind) {
	case TR_COMPUTE:
		s->compute += end - start;
		break;
	case TR_SYNC:
		*(arg == 0 ? &s->recv : &s->barrier) += end - start;
		break;
	case TR_SEND:
		s->sent += arg;
		break;
	case TR_HOST:
		break;
	}
}

/* Did [addr, addr + len) touch the watched bytes? */
static int
watched(const SimObserve *o, uint32_t addr, uint32_t len)
{
	return o->watch_len && addr < o->watch_addr + o->watch_len &&
	       o->watch_addr < addr + len;
}

void
sim_observe_store(Exec *e, uint32_t addr, uint32_t len)
{
	SimObserve *o = e->tile->obs;
	if (!watched(o, addr, len) || o->hit)
		return;
	o->hit = 1;
	o->hit_src = -1;
	sim_fault(e, FAULT_DBRK, addr,
	          "watched 0x%05x..0x%05x written by a %u-byte store at "
	          "0x%05x",
	          o->watch_addr, o->watch_addr + o->watch_len, len, addr);
}

void
sim_observe_receive(Tile *t, uint32_t addr, uint32_t len, uint32_t src,
                    int src_ctx, uint32_t src_pc, uint64_t at)
{
	SimObserve *o = t->obs;
	if (!watched(o, addr, len) || o->hit || t->faulted)
		return;
	o->hit = 1;
	o->hit_src = (int64_t)src;
	/* the receiving tile stops where its supervisor stands; the cause
	 * names the send */
	Fault *f = &t->fault;
	int waits = t->wait.zone >= 0;
	*f = (Fault){.type = FAULT_DBRK,
	             .ctx = 0,
	             .pc = waits ? t->wait.pc : t->ctx[0].pc,
	             .addr = addr,
	             .cycle = at};
	snprintf(f->cause, sizeof f->cause,
	         "watched 0x%05x..0x%05x written by the exchange at 0x%05x: "
	         "tile %u's send (%s pc 0x%05x)",
	         o->watch_addr, o->watch_addr + o->watch_len, addr, src,
	         src_ctx ? "worker" : "supervisor", src_pc);
	t->faulted = 1;
	t->etype[0] = FAULT_DBRK; /* as sim_fault does ($SSR.ETYPE) */
	t->ctx[0].state = CTXS_FAULTED;
}

void
sim_observe_receive_run(Tile *t, uint32_t addr, uint32_t n, uint32_t item,
                        uint32_t src, int src_ctx, uint32_t src_pc, uint64_t at)
{
	/* items that touch no watched byte do nothing: look item by item
	 * only when the run does */
	if (!watched(t->obs, addr, n * item))
		return;
	for (uint32_t i = 0; i < n; i++)
		sim_observe_receive(t, addr + i * item, item, src, src_ctx,
		                    src_pc, at + i);
}

void
sim_tile_status(const Tile *t, SimTileStatus *s)
{
	memset(s, 0, sizeof *s);
	const Context *sup = &t->ctx[0];
	s->cycle = t->cycle;
	s->pc = sup->pc;
	s->lr = sup->m[10];
	s->zone = -1;
	if (t->faulted) {
		s->state = SIM_AT_FAULT;
		s->pc = t->fault.pc;
		s->ctx = t->fault.ctx;
		s->fault = t->fault.type;
		s->cycle = t->fault.cycle;
	} else if (sup->state == CTXS_DONE) {
		s->state = SIM_AT_DONE;
	} else if (t->wait.zone >= 0 || sup->state == CTXS_SYNC) {
		s->state = SIM_AT_SYNC;
		s->zone = t->wait.zone;
		s->pc = t->wait.zone >= 0 ? t->wait.pc : sup->pc;
		s->since = t->wait.since;
		s->items = t->x.dcount;
		s->mux = t->x.mux;
	} else if (sup->state == CTXS_RUN) {
		s->state = SIM_AT_RUN;
	} else {
		s->state = SIM_AT_IDLE;
	}
	for (int i = 1; i < CHIP_CONTEXTS; i++)
		if (t->ctx[i].state == CTXS_RUN)
			s->workers++;
}

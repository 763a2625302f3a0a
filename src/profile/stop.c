/*
 * stop.c - where the tiles of a stopped run stand (a fault, a hang, a
 * breakpoint or watch): every tile grouped by what it does, each group
 * with its step, ops and pc; and one tile's registers and memory.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../asm/isa.h"
#include "profile.h"

enum { IN_EPILOGUE = -2 };

/* The step a tile's supervisor is in: the step whose code holds its pc,
 * or, inside a kernel (below the steps' code), the step of the call it
 * returns to. IN_EPILOGUE past the last step's code (also where a tile
 * with no code in the steps after a break stops); -1 if none (the
 * prologue, no step code). */
static int32_t
step_of(const ProfProgram *p, uint32_t t, const SimTileStatus *a)
{
	if (!p->step_pc || t >= p->tiles)
		return -1;
	const uint32_t *at = p->step_pc + (size_t)t * (p->nstep + 1);
	if (a->pc < at[0] && a->lr >= at[0])
		return pkg_step_in(at, p->nstep, a->lr - 4);
	if (a->pc >= at[p->nstep])
		return IN_EPILOGUE;
	return pkg_step_in(at, p->nstep, a->pc);
}

/* The kernel whose code holds pc: the one with the highest entry at or
 * below it, if pc lies below the steps' code. */
static const char *
kernel_at(const ProfProgram *p, uint32_t pc)
{
	const ProfKernel *best = NULL;
	for (uint32_t i = 0; i < p->nkernel; i++)
		if (p->kernel[i].entry <= pc &&
		    (!best || p->kernel[i].entry > best->entry))
			best = &p->kernel[i];
	return best ? best->name : NULL;
}

typedef struct {
	SimAt state;
	int zone, fault;
	int32_t step;
	uint32_t pc_lo, pc_hi;
	uint64_t since_lo, since_hi;
	uint32_t items_lo, items_hi;
	int32_t iter; /* from the entries, -1 unknown */
	uint32_t *tile;
	uint32_t ntile, cap;
} Group;

static int32_t
iteration_of(const ProfProgram *p, const ProfTile *pt)
{
	if (p->loop_first < 0 || !pt->nentry)
		return -1;
	uint32_t k = pt->entry[pt->nentry - 1].inst;
	uint32_t len = (uint32_t)(p->loop_last - p->loop_first + 1);
	if (k < (uint32_t)p->loop_first)
		return -1;
	uint32_t it = (k - (uint32_t)p->loop_first) / len;
	return it < p->loop_count ? (int32_t)it : -1;
}

/* "0-719, 722, 800-803" into buf. */
static void
tile_ranges(const uint32_t *v, uint32_t n, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < n && at + 24 < len;) {
		uint32_t j = i;
		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		at += (size_t)snprintf(buf + at, len - at, "%s%u",
		                       i ? ", " : "", v[i]);
		if (j > i)
			at += (size_t)snprintf(buf + at, len - at, "-%u", v[j]);
		i = j + 1;
		if (i < n && at + 24 >= len)
			snprintf(buf + at, len - at, ", ...");
	}
}

static void
range_text(char *buf, size_t len, const char *what, uint64_t lo, uint64_t hi,
           int hex)
{
	if (lo == hi)
		snprintf(buf, len, hex ? "%s 0x%05" PRIx64 : "%s %" PRIu64,
		         what, lo);
	else
		snprintf(buf, len,
		         hex ? "%ss 0x%05" PRIx64 "..0x%05" PRIx64
		             : "%ss %" PRIu64 "..%" PRIu64,
		         what, lo, hi);
}

static void
step_text(const ProfProgram *p, const Group *g, char *buf, size_t len)
{
	buf[0] = 0;
	if (g->step == IN_EPILOGUE)
		snprintf(buf, len,
		         ", in the program's epilogue (no code in "
		         "the steps after)");
	if (g->step < 0)
		return;
	const ProfStep *s = &p->step[g->step];
	size_t at =
	    (size_t)snprintf(buf, len, ", step %d '%s'", g->step, s->what);
	for (uint32_t k = 0; k < s->nop && at < len; k++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
		                       k ? ", " : " of op ",
		                       p->op[s->op[k]].name);
	if (g->iter >= 0 && at < len)
		snprintf(buf + at, len - at, ", iteration %d", g->iter);
}

void
profile_explain(const ProfProgram *p, const ProfRun *r, char *buf, size_t len)
{
	enum { MAX_GROUPS = 48, SHOWN = 12 };
	Group g[MAX_GROUPS];
	int ng = 0;
	uint32_t other = 0;
	for (uint32_t t = 0; t < p->tiles; t++) {
		const ProfTile *pt = &r->tile[t];
		const SimTileStatus *a = &pt->at;
		/* ipu sim: the superstep it was in */
		int32_t step = p->step_pc ? step_of(p, t, a)
		               : pt->nentry
		                   ? (int32_t)pt->entry[pt->nentry - 1].inst
		                   : (p->nstep ? 0 : -1);
		int32_t iter = iteration_of(p, pt);
		int zone = a->state == SIM_AT_SYNC ? a->zone : -2;
		int fault = a->state == SIM_AT_FAULT ? a->fault : -1;
		int i = 0;
		while (i < ng && !(g[i].state == a->state &&
		                   g[i].zone == zone && g[i].fault == fault &&
		                   g[i].step == step && g[i].iter == iter))
			i++;
		if (i == ng) {
			if (ng == MAX_GROUPS) {
				other++;
				continue;
			}
			g[ng++] = (Group){
			    a->state, zone,     fault,    step,     a->pc,
			    a->pc,    a->since, a->since, a->items, a->items,
			    iter,     NULL,     0,        0};
		}
		Group *x = &g[i];
		if (a->pc < x->pc_lo)
			x->pc_lo = a->pc;
		if (a->pc > x->pc_hi)
			x->pc_hi = a->pc;
		if (a->since < x->since_lo)
			x->since_lo = a->since;
		if (a->since > x->since_hi)
			x->since_hi = a->since;
		if (a->items < x->items_lo)
			x->items_lo = a->items;
		if (a->items > x->items_hi)
			x->items_hi = a->items;
		GROW(x->tile, x->ntile, x->cap);
		x->tile[x->ntile++] = t;
	}
	size_t at =
	    (size_t)snprintf(buf, len, "where the %u tiles stand:\n", p->tiles);
	for (int i = 0; i < ng && at < len; i++) {
		const Group *x = &g[i];
		if (i == SHOWN) {
			at += (size_t)snprintf(buf + at, len - at,
			                       "  ... and %d more groups\n",
			                       ng - SHOWN);
			break;
		}
		char tiles[160], what[256], step[640], pcs[64], since[64],
		    items[64];
		tile_ranges(x->tile, x->ntile, tiles, sizeof tiles);
		step_text(p, x, step, sizeof step);
		range_text(pcs, sizeof pcs, "pc", x->pc_lo, x->pc_hi, 1);
		range_text(since, sizeof since, "cycle", x->since_lo,
		           x->since_hi, 0);
		if (x->items_lo == x->items_hi)
			snprintf(items, sizeof items, "%u", x->items_lo);
		else
			snprintf(items, sizeof items, "%u..%u", x->items_lo,
			         x->items_hi);
		const char *kernel = p->step_pc && x->pc_lo < p->step_pc[0]
		                         ? kernel_at(p, x->pc_lo)
		                         : NULL;
		switch (x->state) {
		case SIM_AT_IDLE:
			snprintf(what, sizeof what, "never started");
			break;
		case SIM_AT_RUN:
			snprintf(what, sizeof what, "running%s%s",
			         kernel ? " in kernel " : "",
			         kernel ? kernel : "");
			break;
		case SIM_AT_DONE:
			snprintf(what, sizeof what, "returned to the host");
			break;
		case SIM_AT_FAULT:
			snprintf(what, sizeof what, "stopped by %s%s%s",
			         fault_type_name((FaultType)x->fault),
			         kernel ? " in kernel " : "",
			         kernel ? kernel : "");
			break;
		case SIM_AT_SYNC:
			if (x->zone < 0)
				snprintf(what, sizeof what,
				         "waiting for their workers (sync "
				         "LOCAL)%s%s",
				         kernel ? " in kernel " : "",
				         kernel ? kernel : "");
			else if (x->zone == 0)
				snprintf(
				    what, sizeof what,
				    "waiting in sync 0 (RECV) since %s for "
				    "%s more items (%s)",
				    since, items,
				    x->items_hi ? "that never come"
				                : "none due: the sync "
				                  "would end");
			else
				snprintf(what, sizeof what,
				         "waiting in sync %d since %s%s%s%s",
				         x->zone, since,
				         x->items_hi ? " with " : "",
				         x->items_hi ? items : "",
				         x->items_hi ? " items still due" : "");
			break;
		}
		at += (size_t)snprintf(
		    buf + at, len - at, "  %u tile%s (%s): %s%s (%s)\n",
		    x->ntile, x->ntile == 1 ? "" : "s", tiles, what, step, pcs);
	}
	if (other && at < len)
		snprintf(buf + at, len - at,
		         "  %u more tiles in other states\n", other);
	for (int i = 0; i < ng; i++)
		free(g[i].tile);
}

void
profile_dump_regs(const Tile *t, FILE *f)
{
	for (int i = 0; i < CHIP_CONTEXTS; i++) {
		const Context *c = &t->ctx[i];
		if (i == 0)
			fprintf(f, "supervisor");
		else if (c->state == CTXS_IDLE && c->exit_status < 0)
			continue; /* never ran */
		else
			fprintf(f, "worker %d", i - 1);
		fprintf(f, " (pc 0x%05x)\n", c->pc);
		for (int r = 0; r < 16; r++)
			fprintf(f, "  %-6s 0x%08x%s", isa_mreg_name(r), c->m[r],
			        r % 4 == 3 ? "\n" : "");
		if (i == 0)
			continue;
		for (int r = 0; r < 16; r++)
			fprintf(f, "  %-6s 0x%08x%s", isa_areg_name(r, 1),
			        c->a[r], r % 4 == 3 ? "\n" : "");
	}
}

int
profile_dump_mem(const Tile *t, uint32_t addr, uint32_t len, FILE *f)
{
	uint8_t *buf = xmalloc(len ? len : 1);
	if (tile_read(t, addr, buf, len)) {
		free(buf);
		return -1;
	}
	for (uint32_t i = 0; i < len; i += 16) {
		fprintf(f, "%05x:", addr + i);
		for (uint32_t j = i; j < i + 16 && j < len; j++)
			fprintf(f, " %02x", buf[j]);
		fprintf(f, "\n");
	}
	free(buf);
	return 0;
}

void
profile_show_tile(ChipSim *cs, uint32_t tile, const ProfProgram *p,
                  const ProfileOptions *o, FILE *f)
{
	const Tile *t = chipsim_tile_if_exists(cs, tile);
	if (!t) {
		fprintf(f, "tile %u: not in use\n", tile);
		return;
	}
	SimTileStatus a;
	sim_tile_status(t, &a);
	char where[320];
	tile_format_pc(t, t->faulted ? t->fault.ctx : 0,
	               t->faulted ? t->fault.pc : t->ctx[0].pc, where,
	               sizeof where);
	int32_t s = step_of(p, tile, &a);
	fprintf(f, "tile %u at cycle %" PRIu64 ": %s", tile, a.cycle, where);
	if (s >= 0)
		fprintf(f, ", step %d '%s'", s, p->step[s].what);
	fprintf(f, "\n");
	if (t->faulted)
		fprintf(f, "stopped: %s: %s\n", fault_type_name(t->fault.type),
		        t->fault.cause);
	if (t->wait.zone >= 0)
		fprintf(f,
		        "waiting in sync %d since cycle %" PRIu64
		        "; $INCOMING_DCOUNT %u, mux 0x%x\n",
		        t->wait.zone, t->wait.since, t->x.dcount, t->x.mux);
	if (t->obs && t->obs->hit) {
		const SimObserve *w = t->obs;
		fprintf(f, "watched 0x%05x..0x%05x, before:\n", w->watch_addr,
		        w->watch_addr + w->watch_len);
		for (uint32_t i = 0; i < w->watch_len; i += 16) {
			fprintf(f, "%05x:", w->watch_addr + i);
			for (uint32_t j = i; j < i + 16 && j < w->watch_len;
			     j++)
				fprintf(f, " %02x", w->watch_old[j]);
			fprintf(f, "\n");
		}
		fprintf(f, "after:\n");
		profile_dump_mem(t, w->watch_addr, w->watch_len, f);
	}
	profile_dump_regs(t, f);
	for (int i = 0; i < o->ndump; i++) {
		fprintf(f, "memory 0x%05x..0x%05x:\n", o->dump_addr[i],
		        o->dump_addr[i] + o->dump_len[i]);
		if (profile_dump_mem(t, o->dump_addr[i], o->dump_len[i], f))
			fprintf(f, "  outside tile memory 0x%05x..0x%05x\n",
			        t->chip->mem_base, t->chip->mem_end);
	}
}

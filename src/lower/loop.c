/*
 * loop.c - a graph's repeat (GraphRepeat) as a loop of steps: the body is
 * lowered once, as iteration 0 (program.c), and its steps l->loop_first ..
 * l->loop_last run l->loop_count times (codegen wraps them in a counted
 * branch). What changes from one iteration to the next is data only:
 *   - the carry: program.c ends the body with an exchange that moves its
 *     carry_out where the body reads carry_in;
 *   - the weights: the body's code reads each iteration's weights at the
 *     same addresses, so here the buffers they were lowered into become
 *     one working region per tile (one contiguous copy), and a bank beside
 *     it holds every iteration's bytes of that region, written by the
 *     host; the loop's first step (wcopy) copies the next slot into the
 *     region. A loop over groups (Lowered.loop_groups) has a slot a
 *     layer, which wcopy_every copies in the first of the layer's
 *     iterations (the others leave the region as it is);
 *     program.c banks each group's carry (carry_bank).
 */
#include "loop.h"

#include <stdlib.h>
#include <string.h>

#include "../kernels/wcopy.h"

/* One tile's working region: its size, alignment, memory region and
 * buffer (once made). */
typedef struct {
	uint32_t bytes, align;
	uint8_t region;
	int32_t id;
} Region;

/* Member buffer i of region buffer `region` was kept apart from a
 * partner (a GEMM's A read in place, from its C block: the kernel loads
 * both in one bundle); the region now must be. A buffer names one
 * partner, and the partners of weights (C blocks) name none: the partner
 * names the region. */
static int
keep_apart(Lowered *l, int32_t i, int32_t region, Diag *d)
{
	int32_t p = l->buf[i].apart;
	l->buf[i].apart = -1;
	if (p < 0)
		return IPU_OK;
	if (l->buf[p].apart < 0 || l->buf[p].apart == region) {
		l->buf[p].apart = region;
		return IPU_OK;
	}
	if (l->buf[region].apart < 0 || l->buf[region].apart == p) {
		l->buf[region].apart = p;
		return IPU_OK;
	}
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "loop: tile %u: the loop's weights must stay apart "
	                "from buffers %d (%s) and %d (%s), and a buffer has "
	                "one such partner so far",
	                l->buf[region].tile, (int)p, l->buf[p].what,
	                (int)l->buf[region].apart,
	                l->buf[l->buf[region].apart].what);
}

/* The body's first weight GEMM (Lowered.loop_x0, loop_m0): the first
 * exchange step of the body with a B transfer from a member buffer, and
 * the first plain multiply after it; last[i] the last step that reads or
 * writes member buffer i (-1: none). Returns 0 if there is no such
 * GEMM. */
static int
first_gemm(Lowered *l, const uint8_t *member, int32_t *last)
{
	l->loop_x0 = l->loop_m0 = -1;
	for (int32_t s = 0; s < l->nstep; s++) {
		const Step *st = &l->step[s];
		for (int i = 0; i < st->nxfer; i++) {
			const Transfer *t = &st->xfer[i];
			int b = 1;
			for (uint32_t k = 0; k < t->ndst; k++) {
				b &= !strcmp(l->buf[t->dst[k].buf].what,
				             LOWER_B_CHUNK);
				if (member[t->dst[k].buf])
					last[t->dst[k].buf] = s;
			}
			if (!member[t->src.buf])
				continue;
			last[t->src.buf] = s;
			if (b && t->ndst && l->loop_x0 < 0 &&
			    st->kind == STEP_EXCHANGE && s > l->loop_first &&
			    s <= l->loop_last)
				l->loop_x0 = s;
		}
		for (int i = 0; i < st->ncall; i++)
			for (int k = 0; k < st->call[i].nref; k++)
				if (member[st->call[i].ref[k].buf])
					last[st->call[i].ref[k].buf] = s;
		if (l->loop_x0 >= 0 && l->loop_m0 < 0 && s > l->loop_x0 &&
		    s <= l->loop_last && st->kind == STEP_COMPUTE &&
		    !st->gwin && !st->nxfer && st->ncall &&
		    st->call[0].args.kind == KC_GEMM)
			l->loop_m0 = s;
	}
	return l->loop_m0 >= 0;
}

int
loop_weights(Lowered *l, TensorPlace *const *places, int nw,
             TensorPlace *const *all, int nall, LoopBank **banks, int *nbanks,
             Diag *d)
{
	uint8_t *member = xcalloc((size_t)l->nbuf, 1);
	for (int i = 0; i < nw; i++)
		for (int k = 0; k < places[i]->npiece; k++)
			member[places[i]->piece[k].at.buf] = 1;
	int32_t nbuf = l->nbuf;
	BufRef *to = xmalloc((size_t)nbuf * sizeof *to);
	Region *rg = xcalloc(l->tiles, sizeof *rg);
	/* the weights only the body's first weight GEMM reads first in each
	 * region (pass 0), loop_early[t] bytes, then the rest */
	int32_t *last = xmalloc((size_t)nbuf * sizeof *last);
	for (int32_t i = 0; i < nbuf; i++)
		last[i] = -1;
	int early = first_gemm(l, member, last);
	uint32_t *early_bytes = xcalloc(l->tiles, sizeof *early_bytes);
	uint32_t nearly = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (int32_t i = 0; i < nbuf; i++) {
			if (!member[i])
				continue;
			int e = early && last[i] >= 0 && last[i] <= l->loop_m0;
			if (e != !pass)
				continue;
			to[i] = (BufRef){-1, 0};
			const Buffer *b = &l->buf[i];
			Region *r = &rg[b->tile];
			r->bytes = align_up(r->bytes, b->align);
			to[i].offset = r->bytes;
			r->bytes += b->bytes;
			if (b->align > r->align)
				r->align = b->align;
			if (b->region == REGION_INTERLEAVED)
				r->region = REGION_INTERLEAVED;
		}
		for (uint32_t t = 0; !pass && t < l->tiles; t++) {
			rg[t].bytes = align_up(rg[t].bytes, 8);
			early_bytes[t] = rg[t].bytes;
			nearly += rg[t].bytes > 0;
		}
	}
	for (int32_t i = 0; i < nbuf; i++)
		if (!member[i])
			to[i] = (BufRef){-1, 0};
	free(last);
	if (nearly)
		l->loop_early = early_bytes;
	else
		free(early_bytes);
	Step *copy = &l->step[l->loop_first];
	/* a loop over groups: a slot a layer, copied for each of its
	 * groups (wcopy_every steps it every loop_groups calls, copying in
	 * the first of them only) */
	uint32_t groups = l->loop_groups > 1 ? l->loop_groups : 1,
	         layers = l->loop_count / groups;
	*nbanks = 0;
	*banks = xmalloc(l->tiles * sizeof **banks);
	int err = IPU_OK;
	uint64_t most = 0; /* the copying wcopy_every's cycles, at most */
	for (uint32_t t = 0; t < l->tiles && !err; t++) {
		Region *r = &rg[t];
		if (!r->bytes)
			continue;
		uint32_t slot = align_up(r->bytes, 8);
		if (slot / 8 > WCOPY_MAX_ATOMS ||
		    (uint64_t)slot * layers > UINT32_MAX) {
			err = diag_set(d, IPU_ERANGE, NULL, 0, 0,
			               "loop: tile %u: %u bytes of weights an "
			               "iteration, %u iterations, is too much",
			               t, slot, l->loop_count);
			break;
		}
		r->id =
		    lower_buffer(l, t, slot, r->align, (MemRegion)r->region,
		                 l->loop_first, l->loop_last, "loop weights");
		int32_t bank = lower_buffer(l, t, slot * layers, 8, REGION_ANY,
		                            0, INT32_MAX, "loop weight bank");
		/* wcopy loads from the bank and stores to the region in one
		 * bundle (ldst64pace): never in one memory element */
		l->buf[bank].apart = r->id;
		(*banks)[(*nbanks)++] = (LoopBank){t, r->id, bank, slot};
		KernelCall *c = groups > 1
		                    ? lower_call(l, copy, t, "wcopy_every",
		                                 "wcopyg", WCOPYG_ARGS_BYTES)
		                    : lower_call(l, copy, t, "wcopy", "wcopy",
		                                 WCOPY_ARGS_BYTES);
		c->ref[0] = (BufRef){bank, 0};
		c->ref[1] = (BufRef){r->id, 0};
		c->nref = 2;
		c->args = (KernelArgs){
		    KC_WCOPY, .u.wcopy = {.slot = slot,
		                          .iterations = layers,
		                          .bytes = slot,
		                          .every = groups > 1 ? groups : 0}};
		/* over groups: the step's cycles those of the iterations that
		 * copy nothing (the same on every tile), the copies in the
		 * first iteration of each layer counted in loop_extra */
		c->cycles = groups > 1 ? wcopy_every_cycles(l->chip, slot, 0)
		                       : wcopy_cycles(l->chip, slot);
		if (c->cycles > copy->cycles)
			copy->cycles = c->cycles;
		uint64_t copying =
		    groups > 1 ? wcopy_every_cycles(l->chip, slot, 1) : 0;
		if (copying > most)
			most = copying;
	}
	if (most)
		l->loop_extra = layers * (most - copy->cycles);
	if (!err) {
		for (int32_t i = 0; i < nbuf; i++)
			if (member[i]) {
				to[i].buf = rg[l->buf[i].tile].id;
				l->buf[i].bytes = 0; /* moved into the region */
			}
		to = xrealloc(to, (size_t)l->nbuf * sizeof *to);
		for (int32_t i = nbuf; i < l->nbuf; i++)
			to[i] = (BufRef){-1, 0};
		lower_remap(l, to, all, nall);
		for (int32_t i = 0; i < nbuf && !err; i++)
			if (member[i])
				err = keep_apart(l, i, to[i].buf, d);
	}
	free(member);
	free(to);
	free(rg);
	return err;
}

void
loop_lifetimes(Lowered *l)
{
	for (int32_t i = 0; l->loop_count && i < l->nbuf; i++) {
		Buffer *b = &l->buf[i];
		if (b->first < l->loop_first && b->last >= l->loop_first &&
		    b->last < l->loop_last)
			b->last = l->loop_last;
	}
}

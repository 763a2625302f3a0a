/*
 * bunder.c - a GEMM's B chunks exchanged under an earlier multiply
 * (lower_b_under; docs/bench-siglip.md "The weights' B chunks under an
 * earlier multiply").
 *
 * A weight GEMM's B parts are stored before the GEMM starts (program
 * inputs, or the loop's working region written by wcopy at the body's
 * first step), so their transfers do not wait for the compute step before
 * the GEMM's "A and B chunks" exchange. This pass moves them into an
 * earlier GEMM's multiply, which then runs as an overlapped step (the
 * machinery of docs/bench-gemm.md "The third step wired into the
 * compiler": five workers for its first panels, the exchange beside them
 * in the supervisor's slot; xsched.c schedule_overlap, codegen.c
 * emit_overlap).
 *
 * Contract: after lowering, before lower_verify and xsched_run. A B
 * transfer is one whose every destination is a "B chunk" buffer. For
 * each exchange step x with B transfers, the latest earlier step c that
 * is a plain multiply (compute, every call a GEMM of one dtype and K, no
 * transfers, not overlapped, not taken by another GEMM's B), on the same
 * side of the loop's bounds, after each moved source buffer's first step,
 * and with a call on every tile that sends or receives a moved transfer,
 * takes them all: its calls get the overlap's argument block
 * (GemmOptions.five = 1, xsched_run chooses P), the B chunk buffers live
 * from c, and c.b_from = x + 1 says where they came from (xsched_run puts
 * them back if they do not fit beside c's panels). Returns the number of
 * transfers moved.
 *
 * lower_b_wrap (after it) does the same across a loop's back edge for the
 * body's first weight GEMM, whose B has no multiply before it in the
 * body: see lower.h and docs/bench-siglip.md "qkv's B under the previous
 * layer's multiply".
 */
#include "lower.h"

#include <stdlib.h>
#include <string.h>

/* a B transfer of exchange step xi whose chunk buffers are first used
 * there (a later superstep's B reuses the chunk: not moved) */
static int
is_b(const Lowered *l, const Transfer *t, int32_t xi)
{
	for (uint32_t i = 0; i < t->ndst; i++) {
		const Buffer *b = &l->buf[t->dst[i].buf];
		if (strcmp(b->what, LOWER_B_CHUNK) || b->first != xi)
			return 0;
	}
	return t->ndst > 0;
}

/* c is a plain multiply that can run transfers beside it (with
 * `also`, or one that runs a later GEMM's B already, lower_b_under's, not
 * scheduled yet): has[t] for the tiles with a call */
static int
can_host(const Lowered *l, const Step *c, uint8_t *has, int also)
{
	int hosting =
	    also && c->b_from && !c->b_wrap && c->gwin && !c->gwin->panels;
	if (c->kind != STEP_COMPUTE || !c->ncall ||
	    (!hosting && (c->gwin || c->nxfer || c->b_from)))
		return 0;
	const GemmCall *g0 = &c->call[0].args.u.gemm;
	memset(has, 0, l->tiles);
	for (int i = 0; i < c->ncall; i++) {
		const KernelCall *k = &c->call[i];
		const GemmCall *g = &k->args.u.gemm;
		if (k->args.kind != KC_GEMM || g->t != g0->t ||
		    g->bk != g0->bk || (g->opt.five && !hosting))
			return 0;
		has[k->tile] = 1;
	}
	return 1;
}

/* t's sender and receivers all have a call (has) */
static int
covered(const Transfer *t, const uint8_t *has)
{
	if (!has[t->src_tile])
		return 0;
	for (uint32_t j = 0; j < t->ndst; j++)
		if (!has[t->dst_tile[j]])
			return 0;
	return 1;
}

/* Moves x's transfers flagged in take to step ci: a later GEMM's B
 * (ci < xi), or with `wrap` the next iteration's, after the ones it may
 * run already */
static int
move(Lowered *l, int32_t xi, int32_t ci, const uint8_t *take, int wrap)
{
	Step *x = &l->step[xi], *c = &l->step[ci];
	int n = 0;
	for (int i = 0; i < x->nxfer; i++)
		n += take[i] != 0;
	c->xfer = xrealloc(c->xfer, (size_t)(c->nxfer + n) * sizeof *c->xfer);
	int k = 0;
	for (int i = 0; i < x->nxfer; i++) {
		Transfer *t = &x->xfer[i];
		if (!take[i]) {
			x->xfer[k++] = *t;
			continue;
		}
		for (uint32_t j = 0; j < t->ndst; j++) {
			Buffer *b = &l->buf[t->dst[j].buf];
			if (b->first > ci)
				b->first = ci;
		}
		c->xfer[c->nxfer] = *t;
		c->xfer[c->nxfer++].wrap = (uint8_t)wrap;
	}
	x->nxfer = k;
	if (wrap) {
		c->b_wrap = xi + 1;
	} else {
		c->b_from = xi + 1;
	}
	if (c->gwin)
		return n;
	c->gwin = xcalloc(1, sizeof *c->gwin);
	for (int i = 0; i < c->ncall; i++) {
		KernelCall *kc = &c->call[i];
		kc->args.u.gemm.opt.five = 1;
		kc->args_bytes = GEMM_OVERLAP_ARGS_BYTES;
		l->buf[kc->args_at].bytes = GEMM_OVERLAP_ARGS_BYTES;
	}
	return n;
}

/* the buffer a call writes: its KernelArgs' destination (lower.h) */
static int32_t
written(const KernelCall *k)
{
	static const int dst[] = {
	    [KC_GEMM] = 2, [KC_VADD] = 0,  [KC_EW] = 0,     [KC_RW] = 0,
	    [KC_PACK] = 1, [KC_WCOPY] = 1, [KC_GATHER] = 2, [KC_PACK_CAST] = 1};
	int i = dst[k->args.kind];
	return i < k->nref ? k->ref[i].buf : -1;
}

/* the buffers step s's calls and transfers write */
static void
touch(const Step *s, uint8_t *touched)
{
	for (int i = 0; i < s->ncall; i++) {
		const KernelCall *k = &s->call[i];
		int32_t b = written(k);
		if (b >= 0)
			touched[b] = 1;
		/* vadd_bias_gelu_f16_f8 and vadd_norm_f16_f8 write q (ref
		 * 3) as well, vadd_norm_f16 its reciprocals after the
		 * sources (ref 1) */
		if (k->args.kind == KC_VADD &&
		    (k->args.u.vadd.has_gelu || k->args.u.vadd.norm_f8))
			touched[k->ref[3].buf] = 1;
		if (k->args.kind == KC_VADD && k->args.u.vadd.norm_cols)
			touched[k->ref[1].buf] = 1;
	}
	for (int i = 0; i < s->nxfer; i++)
		for (uint32_t j = 0; j < s->xfer[i].ndst; j++)
			touched[s->xfer[i].dst[j].buf] = 1;
}

int
lower_b_under(Lowered *l)
{
	int moved = 0;
	uint8_t *has = xcalloc(l->tiles ? l->tiles : 1, 1),
	        *touched = xcalloc(l->nbuf ? (size_t)l->nbuf : 1, 1);
	for (int32_t xi = 1; xi < l->nstep; xi++) {
		Step *x = &l->step[xi];
		if (x->kind != STEP_EXCHANGE || !x->nxfer || x->block)
			continue;
		/* mv: B transfers still to place, take: those step ci runs */
		uint8_t *mv = xcalloc((size_t)x->nxfer * 2, 1),
		        *take = mv + x->nxfer;
		int n = 0;
		for (int i = 0; i < x->nxfer; i++)
			n += mv[i] = (uint8_t)is_b(l, &x->xfer[i], xi);
		/* the steps from ci to xi - 1 must not write a moved
		 * source (a call's destination, a transfer's): a B computed
		 * in the layer (K, V packed) stays */
		memset(touched, 0, (size_t)l->nbuf);
		for (int32_t ci = xi - 1;
		     n && ci >= 0 &&
		     lower_loop_part(l, ci) == lower_loop_part(l, xi);
		     ci--) {
			touch(&l->step[ci], touched);
			for (int i = 0; i < x->nxfer; i++)
				if (mv[i] && touched[x->xfer[i].src.buf]) {
					mv[i] = 0;
					n--;
				}
			if (!n || !can_host(l, &l->step[ci], has, 0))
				continue;
			/* the later GEMM's B parts this multiply's tiles
			 * send and receive */
			int m = 0;
			for (int i = 0; i < x->nxfer; i++) {
				const Transfer *t = &x->xfer[i];
				take[i] = mv[i] && covered(t, has) &&
				          l->buf[t->src.buf].first <= ci;
				m += take[i];
			}
			if (!m)
				continue;
			moved += move(l, xi, ci, take, 0);
			/* x's transfers were compacted: mv follows */
			int k = 0;
			for (int i = 0; i < x->nxfer + m; i++)
				if (!take[i])
					mv[k++] = mv[i];
			n -= m;
		}
		free(mv);
	}
	free(has);
	free(touched);
	return moved;
}

/* Multiply c's transfers whose Transfer.wrap is `wrap` back to exchange
 * step xi, unscheduled (every piece the scheduler made of them: it
 * reorders and splits a step's transfers); c keeps the others, in
 * order. Returns how many went back. */
static int
put_back(Lowered *l, int32_t ci, int wrap, int32_t xi)
{
	Step *c = &l->step[ci], *x = &l->step[xi];
	x->xfer =
	    xrealloc(x->xfer, (size_t)(x->nxfer + c->nxfer) * sizeof *x->xfer);
	int k = 0, n = 0;
	for (int i = 0; i < c->nxfer; i++) {
		Transfer *t = &c->xfer[i];
		if (t->wrap != wrap) {
			c->xfer[k++] = *t;
			continue;
		}
		t->start = 0;
		for (uint32_t j = 0; j < t->ndst; j++) {
			/* the chunk keeps its lifetime from c (another
			 * multiply may still run parts of it earlier) */
			t->ptr_at[j] = t->mux_at[j] = t->off_at[j] = 0;
		}
		t->wide = 0;
		t->join = 0;
		t->wrap = 0;
		x->xfer[x->nxfer++] = *t;
		n++;
	}
	c->nxfer = k;
	return n;
}

int
lower_b_back(Lowered *l, int32_t ci)
{
	Step *c = &l->step[ci];
	if (!c->b_from && !c->b_wrap)
		return 0;
	int n = 0;
	if (c->b_from)
		n += put_back(l, ci, 0, c->b_from - 1);
	if (c->b_wrap)
		n += put_back(l, ci, 1, c->b_wrap - 1);
	lower_free_transfers(c); /* none left: each went where it came from */
	lower_gemm_six(l, c);
	c->b_from = c->b_wrap = 0;
	return n;
}

int
lower_b_unwrap(Lowered *l, int32_t ci)
{
	Step *c = &l->step[ci];
	if (!c->b_wrap)
		return 0;
	int n = put_back(l, ci, 1, c->b_wrap - 1);
	c->b_wrap = 0;
	lower_step_blocks(c, 0, NULL, 0);
	if (!c->b_from)
		lower_gemm_six(l, c);
	return n;
}

/* lower_b_wrap's own steps (Step.what, told apart by the pointer) */
static const char WRAP_NEXT[] = "loop: next weights, the first GEMM's",
                  WRAP_FIRST[] = "loop: first weights, the first GEMM's",
                  WRAP_CHUNKS[] = "loop: first B chunks";

/* wcopy calls in step si for the early part of each tile's working
 * region (Lowered.loop_early): bytes [0, loop_early[t]) of each slot,
 * slot `start` first, `iterations` slots; the bank and region those of
 * the loop's first step's calls */
static void
early_copies(Lowered *l, int32_t si, uint32_t iterations, uint32_t start)
{
	const Step *w = &l->step[l->loop_first];
	Step *s = &l->step[si];
	for (int i = 0; i < w->ncall; i++) {
		const KernelCall *c = &w->call[i];
		uint32_t e = l->loop_early[c->tile];
		if (c->args.kind != KC_WCOPY || !e)
			continue;
		KernelCall *k = lower_call(l, s, c->tile, "wcopy", "wcopy",
		                           WCOPY_ARGS_BYTES);
		k->ref[0] = c->ref[0];
		k->ref[1] = c->ref[1];
		k->nref = 2;
		Buffer *r = &l->buf[c->ref[1].buf];
		if (r->first > si)
			r->first = si;
		k->args = (KernelArgs){KC_WCOPY,
		                       .u.wcopy = {.slot = c->args.u.wcopy.slot,
		                                   .iterations = iterations,
		                                   .bytes = e,
		                                   .start = start}};
		k->cycles = wcopy_cycles(l->chip, e);
		if (k->cycles > s->cycles)
			s->cycles = k->cycles;
	}
}

/* The loop's first step's wcopy calls: each tile's slot from the end of
 * its early part (`rest`), or whole */
static void
first_copies(Lowered *l, int rest)
{
	Step *first = &l->step[l->loop_first];
	first->cycles = 0;
	for (int i = 0; i < first->ncall; i++) {
		KernelCall *c = &first->call[i];
		if (c->args.kind != KC_WCOPY)
			continue;
		WcopyCall *wc = &c->args.u.wcopy;
		wc->from = rest ? l->loop_early[c->tile] : 0;
		wc->bytes = wc->slot - wc->from;
		c->cycles = wcopy_cycles(l->chip, wc->bytes);
		if (c->cycles > first->cycles)
			first->cycles = c->cycles;
	}
}

int
lower_b_wrap(Lowered *l)
{
	/* a loop over groups: its slots step every loop_groups iterations,
	 * which the early copies do not count */
	if (!l->loop_count || !l->loop_early || l->loop_x0 < 0 ||
	    l->loop_m0 < 0 || l->loop_groups > 1)
		return 0;
	int32_t xi = l->loop_x0;
	Step *x = &l->step[xi];
	if (x->kind != STEP_EXCHANGE || x->block || !x->nxfer)
		return 0;
	/* each tile's working region: the loop's first step copies into it */
	int32_t *region = xmalloc(l->tiles * sizeof *region);
	for (uint32_t t = 0; t < l->tiles; t++)
		region[t] = -1;
	const Step *w = &l->step[l->loop_first];
	for (int i = 0; i < w->ncall; i++)
		if (w->call[i].args.kind == KC_WCOPY)
			region[w->call[i].tile] = w->call[i].ref[1].buf;
	/* x's B transfers from the early part of a working region */
	uint8_t *take = xcalloc((size_t)x->nxfer, 1);
	int n = 0;
	for (int i = 0; i < x->nxfer; i++) {
		const Transfer *t = &x->xfer[i];
		take[i] =
		    is_b(l, t, xi) && t->src.buf == region[t->src_tile] &&
		    t->src.offset + 4 * t->words <= l->loop_early[t->src_tile];
		n += take[i];
	}
	free(region);
	/* the host: the body's last plain multiply after the first GEMM's
	 * whose tiles send and receive some of them */
	uint8_t *has = xcalloc(l->tiles ? l->tiles : 1, 1);
	int32_t h = -1;
	for (int32_t c = l->loop_last; n && h < 0 && c > l->loop_m0; c--) {
		if (!can_host(l, &l->step[c], has, 1))
			continue;
		for (int i = 0; i < x->nxfer && h < 0; i++)
			if (take[i] && covered(&x->xfer[i], has))
				h = c;
	}
	if (h < 0) {
		free(take);
		free(has);
		return 0;
	}
	for (int i = 0; i < x->nxfer; i++)
		take[i] = take[i] && covered(&x->xfer[i], has);
	free(has);
	/* the next iteration's early part, right after the first GEMM's
	 * multiply (the last step that reads the part); the loop's first
	 * step copies the rest */
	uint32_t count = l->loop_count;
	int32_t at = l->loop_m0 + 1;
	lower_insert_step(l, at, STEP_COMPUTE, WRAP_NEXT);
	if (h >= at)
		h++;
	early_copies(l, at, count, 1 % count);
	first_copies(l, 1);
	/* before the loop: slot 0's early part, then the first iteration's
	 * transfers */
	int32_t p = l->loop_first;
	lower_insert_step(l, p, STEP_COMPUTE, WRAP_FIRST);
	early_copies(l, p, 1, 0);
	Step *px = lower_insert_step(l, p + 1, STEP_EXCHANGE, WRAP_CHUNKS);
	h += 2;
	xi = l->loop_x0;
	x = &l->step[xi];
	for (int i = 0; i < x->nxfer; i++) {
		if (!take[i])
			continue;
		const Transfer *f = &x->xfer[i];
		lower_transfer_as(px, f, f->src_tile, f->src, f->words, 0);
		/* the chunks live across the loop's back edge */
		for (uint32_t j = 0; j < f->ndst; j++) {
			Buffer *b = &l->buf[f->dst[j].buf];
			b->wrapped = 1;
			b->first = p + 1;
			if (b->last < l->loop_last)
				b->last = l->loop_last;
		}
		Buffer *src = &l->buf[f->src.buf];
		if (src->first > p)
			src->first = p;
	}
	int moved = move(l, xi, h, take, 1);
	free(take);
	return moved;
}

/* buffer b is used in step i: a wrapped chunk's lifetime covers it */
static void
used_at(Lowered *l, int32_t b, int32_t i)
{
	if (b < 0 || !l->buf[b].wrapped)
		return;
	Buffer *f = &l->buf[b];
	if (i < f->first)
		f->first = i;
	if (i > f->last)
		f->last = i;
}

int
lower_b_wrap_undo(Lowered *l)
{
	int ours = 0;
	for (int32_t i = 0; i < l->nstep; i++) {
		if (l->step[i].b_wrap)
			return 0;
		ours += l->step[i].what == WRAP_NEXT;
	}
	if (!ours)
		return 0;
	for (int32_t i = l->nstep - 1; i >= 0; i--) {
		const Step *s = &l->step[i];
		if (s->what != WRAP_NEXT && s->what != WRAP_FIRST &&
		    s->what != WRAP_CHUNKS)
			continue;
		/* its calls' argument blocks go with it */
		for (int k = 0; k < s->ncall; k++)
			if (s->call[k].args_at >= 0)
				l->buf[s->call[k].args_at].bytes = 0;
		lower_remove_step(l, i);
	}
	/* the loop's first step copies each whole slot again */
	first_copies(l, 0);
	/* the chunks live again from the step that writes them to the last
	 * that reads them, as lowered */
	for (int32_t b = 0; b < l->nbuf; b++)
		if (l->buf[b].wrapped) {
			l->buf[b].first = INT32_MAX;
			l->buf[b].last = -1;
		}
	for (int32_t i = 0; i < l->nstep; i++) {
		const Step *s = &l->step[i];
		for (int k = 0; k < s->ncall; k++)
			for (int r = 0; r < s->call[k].nref; r++)
				used_at(l, s->call[k].ref[r].buf, i);
		for (int k = 0; k < s->nxfer; k++) {
			used_at(l, s->xfer[k].src.buf, i);
			for (uint32_t j = 0; j < s->xfer[k].ndst; j++)
				used_at(l, s->xfer[k].dst[j].buf, i);
		}
	}
	for (int32_t b = 0; b < l->nbuf; b++)
		l->buf[b].wrapped = 0;
	return 1;
}

int64_t
lower_b_wrap_steps(const Lowered *l, uint64_t *once)
{
	const Chip *c = l->chip;
	int64_t per = 0;
	*once = 0;
	int ours = 0;
	for (int32_t i = 0; i < l->nstep; i++) {
		const Step *s = &l->step[i];
		if (s->what == WRAP_NEXT) {
			per += (int64_t)(s->cycles + lower_step_overhead(c, s));
			ours = 1;
		} else if (s->what == WRAP_FIRST || s->what == WRAP_CHUNKS) {
			*once += s->cycles + lower_step_overhead(c, s);
		}
	}
	if (!ours || l->loop_first < 0)
		return 0;
	/* the loop's first step: whole slots against the rest of each */
	const Step *w = &l->step[l->loop_first];
	uint64_t whole = 0;
	for (int i = 0; i < w->ncall; i++) {
		const KernelCall *k = &w->call[i];
		if (k->args.kind != KC_WCOPY)
			continue;
		uint64_t t = wcopy_cycles(c, k->args.u.wcopy.slot);
		if (t > whole)
			whole = t;
	}
	return per - ((int64_t)whole - (int64_t)w->cycles);
}

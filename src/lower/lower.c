/*
 * lower.c - building a Lowered program: buffers, steps, transfers, kernel
 * calls and tensor pieces, in growable arrays owned by the Lowered.
 */
#include "lower.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

Lowered *
lower_new(const Chip *chip, uint32_t tiles)
{
	Lowered *l = xcalloc(1, sizeof *l);
	l->chip = chip;
	l->tiles = tiles;
	l->op = -1;
	return l;
}

void
lower_free_transfers(Step *s)
{
	for (int k = 0; k < s->nxfer; k++)
		free(s->xfer[k].ptr_at); /* all five arrays */
	free(s->xfer);
	s->xfer = NULL;
	s->nxfer = 0;
}

static void
step_free(Step *s)
{
	lower_free_transfers(s);
	free(s->win);
	free(s->call);
	free(s->op);
	free(s->first);
	free(s->by_tile);
	free(s->call_of);
	if (s->gwin) {
		gemm_windows_free(s->gwin);
		free(s->gwin);
	}
}

void
lower_free(Lowered *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->nstep; i++)
		step_free(&l->step[i]);
	for (int i = 0; i < l->ntp; i++)
		free(l->tp[i].piece);
	free(l->tp);
	free(l->step);
	free(l->buf);
	free(l->loop_early);
	free(l->init);
	free(l);
}

int32_t
lower_buffer(Lowered *l, uint32_t tile, uint32_t bytes, uint32_t align,
             MemRegion region, int32_t first, int32_t last, const char *what)
{
	GROW(l->buf, l->nbuf, l->capbuf);
	l->buf[l->nbuf] = (Buffer){.tile = tile,
	                           .bytes = bytes,
	                           .align = align < 8 ? 8 : align,
	                           .region = (uint8_t)region,
	                           .first = first,
	                           .last = last,
	                           .apart = -1,
	                           .what = what,
	                           .op = l->op};
	return l->nbuf++;
}

Step *
lower_step(Lowered *l, StepKind kind, const char *what)
{
	GROW(l->step, l->nstep, l->capstep);
	Step *s = &l->step[l->nstep++];
	memset(s, 0, sizeof *s);
	s->kind = kind;
	s->what = what;
	lower_step_tag(l, s);
	return s;
}

void
lower_step_blocks(Step *s, uint32_t block, const XWindow *win, int nwin)
{
	free(s->win);
	s->block = block;
	s->nwin = nwin;
	s->win = nwin ? xmalloc((size_t)nwin * sizeof *win) : NULL;
	if (nwin)
		memcpy(s->win, win, (size_t)nwin * sizeof *win);
}

void
lower_step_tag(const Lowered *l, Step *s)
{
	if (l->op < 0)
		return;
	for (int i = 0; i < s->nop; i++)
		if (s->op[i] == l->op)
			return;
	s->op = xrealloc(s->op, (size_t)(s->nop + 1) * sizeof *s->op);
	s->op[s->nop++] = l->op;
}

Transfer *
lower_transfer(Step *s, uint32_t src_tile, BufRef src, uint32_t words,
               uint32_t ndst)
{
	if (grow_full(s->nxfer))
		s->xfer =
		    xrealloc(s->xfer, (size_t)(s->nxfer ? 2 * s->nxfer : 16) *
		                          sizeof *s->xfer);
	Transfer *x = &s->xfer[s->nxfer++];
	*x = (Transfer){
	    .src_tile = src_tile, .src = src, .words = words, .ndst = ndst};
	/* one allocation for the five arrays (most transfers have one
	 * destination: five would cost more in malloc headers than the data),
	 * the 8-byte ones first */
	x->ptr_at = xcalloc(ndst, 3 * sizeof(uint64_t) + sizeof *x->dst +
	                              sizeof *x->dst_tile);
	x->mux_at = x->ptr_at + ndst;
	x->off_at = x->mux_at + ndst;
	x->dst = (BufRef *)(x->off_at + ndst);
	x->dst_tile = (uint32_t *)(x->dst + ndst);
	return x;
}

Transfer *
lower_transfer_as(Step *s, const Transfer *x, uint32_t src_tile, BufRef src,
                  uint32_t words, uint32_t skip)
{
	Transfer *t = lower_transfer(s, src_tile, src, words, x->ndst);
	for (uint32_t k = 0; k < x->ndst; k++) {
		t->dst_tile[k] = x->dst_tile[k];
		t->dst[k] = (BufRef){x->dst[k].buf, x->dst[k].offset + skip};
	}
	return t;
}

KernelCall *
lower_call(Lowered *l, Step *s, uint32_t tile, const char *kernel,
           const char *object, uint32_t args_bytes)
{
	if (grow_full(s->ncall))
		s->call =
		    xrealloc(s->call, (size_t)(s->ncall ? 2 * s->ncall : 16) *
		                          sizeof *s->call);
	KernelCall *c = &s->call[s->ncall++];
	memset(c, 0, sizeof *c);
	c->tile = tile;
	c->kernel = kernel;
	c->object = object;
	c->args_bytes = args_bytes;
	c->args_at = lower_buffer(l, tile, args_bytes, 8, REGION_ANY, 0,
	                          INT32_MAX, "kernel arguments");
	lower_step_tag(l, s);
	return c;
}

void
lower_call_args(const KernelCall *c, const uint32_t *addr, uint8_t *out)
{
	uint32_t at[CALL_MAX_REFS] = {0};
	for (int i = 0; i < c->nref; i++)
		at[i] = addr[i];
	KernelArgs a = c->args;
	switch (a.kind) {
	case KC_GEMM:
		a.u.gemm.a = at[0];
		a.u.gemm.b = at[1];
		a.u.gemm.c = at[2];
		if (a.u.gemm.opt.five)
			gemm_overlap_args_fill(&a.u.gemm, out);
		else
			gemm_args_fill(&a.u.gemm, out);
		return;
	case KC_VADD:
		a.u.vadd.dst = at[0];
		a.u.vadd.src = at[1];
		a.u.vadd.bias = at[2];
		a.u.vadd.res = at[3];
		vadd_args_fill(&a.u.vadd, out);
		return;
	case KC_EW:
		a.u.ew.dst.addr = at[0];
		a.u.ew.a.addr = at[1];
		a.u.ew.b.addr = at[2];
		ew_args_fill(&a.u.ew, out);
		return;
	case KC_RW:
		a.u.rw.dst = at[0];
		a.u.rw.x = at[1];
		a.u.rw.gamma = at[2];
		a.u.rw.beta = at[3];
		rw_args_fill(&a.u.rw, out);
		return;
	case KC_PACK:
		a.u.pack.src = at[0];
		a.u.pack.dst = at[1];
		pack_args_fill(&a.u.pack, out);
		return;
	case KC_PACK_CAST:
		a.u.pcast.src = at[0];
		a.u.pcast.dst = at[1];
		pack_cast_args_fill(&a.u.pcast, out);
		return;
	case KC_WCOPY:
		a.u.wcopy.bank = at[0];
		a.u.wcopy.dst = at[1];
		wcopy_args_fill(&a.u.wcopy, out);
		return;
	case KC_GATHER:
		a.u.gather.table = at[0];
		a.u.gather.ids = at[1];
		a.u.gather.dst = at[2];
		gather_args_fill(&a.u.gather, out);
		return;
	}
	die("lower_call_args: kernel kind %d", (int)a.kind);
}

/* 1 if GEMM calls x and y, on one tile, have the same argument block
 * wherever their buffers are placed: the same buffers, and the same
 * block at two sets of addresses (bx, by: scratch of its bytes). */
static int
same_args(const KernelCall *x, const KernelCall *y, uint8_t *bx, uint8_t *by)
{
	if (x->args.kind != KC_GEMM || y->args.kind != KC_GEMM ||
	    x->args_bytes != y->args_bytes || x->nref != y->nref)
		return 0;
	for (int i = 0; i < x->nref; i++)
		if (x->ref[i].buf != y->ref[i].buf ||
		    x->ref[i].offset != y->ref[i].offset)
			return 0;
	for (uint32_t at = 0; at < 2; at++) {
		uint32_t addr[CALL_MAX_REFS];
		for (int i = 0; i < x->nref; i++)
			addr[i] = at * (0x10000u + 0x1000u * (uint32_t)i) +
			          x->ref[i].offset;
		memset(bx, 0, x->args_bytes);
		memset(by, 0, x->args_bytes);
		lower_call_args(x, addr, bx);
		lower_call_args(y, addr, by);
		if (memcmp(bx, by, x->args_bytes))
			return 0;
	}
	return 1;
}

uint32_t
lower_share_args(Lowered *l)
{
	/* by tile, the GEMM calls whose blocks are kept so far */
	KernelCall ***kept = xcalloc(l->tiles, sizeof *kept);
	uint32_t *nkept = xcalloc(l->tiles, sizeof *nkept),
	         *cap = xcalloc(l->tiles, sizeof *cap), shared = 0, most = 0;
	for (int32_t i = 0; i < l->nstep; i++)
		for (int k = 0; k < l->step[i].ncall; k++)
			if (l->step[i].call[k].args_bytes > most)
				most = l->step[i].call[k].args_bytes;
	uint8_t *bx = xmalloc((size_t)most + 1),
	        *by = xmalloc((size_t)most + 1);
	for (int32_t i = 0; i < l->nstep; i++)
		for (int k = 0; k < l->step[i].ncall; k++) {
			KernelCall *c = &l->step[i].call[k];
			if (c->args.kind != KC_GEMM || c->args_at < 0)
				continue;
			uint32_t t = c->tile, j = 0;
			while (j < nkept[t] &&
			       !same_args(kept[t][j], c, bx, by))
				j++;
			if (j < nkept[t]) {
				l->buf[c->args_at].bytes = 0;
				c->args_at = kept[t][j]->args_at;
				shared++;
				continue;
			}
			GROW(kept[t], nkept[t], cap[t]);
			kept[t][nkept[t]++] = c;
		}
	for (uint32_t t = 0; t < l->tiles; t++)
		free(kept[t]);
	free(kept);
	free(nkept);
	free(cap);
	free(bx);
	free(by);
	return shared;
}

TensorPlace *
lower_tensor(Lowered *l, int32_t tensor, uint32_t rows, uint32_t cols,
             DType dtype)
{
	GROW(l->tp, l->ntp, l->captp);
	TensorPlace *tp = &l->tp[l->ntp++];
	*tp = (TensorPlace){
	    .tensor = tensor, .rows = rows, .cols = cols, .dtype = dtype};
	return tp;
}

Step *
lower_insert_step(Lowered *l, int32_t at, StepKind kind, const char *what)
{
	lower_step(l, kind, what);
	Step s = l->step[l->nstep - 1];
	memmove(&l->step[at + 1], &l->step[at],
	        (size_t)(l->nstep - 1 - at) * sizeof *l->step);
	l->step[at] = s;
	for (int i = 0; i < l->nbuf; i++) {
		Buffer *b = &l->buf[i];
		if (b->first >= at && b->first > 0) /* 0: from the start */
			b->first++;
		if (b->last >= at && b->last != INT32_MAX)
			b->last++;
	}
	for (int i = 0; i < l->nstep; i++) { /* b_from, b_wrap name steps */
		if (l->step[i].b_from > at)
			l->step[i].b_from++;
		if (l->step[i].b_wrap > at)
			l->step[i].b_wrap++;
	}
	if (l->loop_early && at <= l->loop_x0)
		l->loop_x0++;
	if (l->loop_early && at <= l->loop_m0)
		l->loop_m0++;
	if (l->loop_count && at <= l->loop_first)
		l->loop_first++;
	if (l->loop_count && at <= l->loop_last)
		l->loop_last++;
	return &l->step[at];
}

int
lower_loop_part(const Lowered *l, int32_t i)
{
	if (!l->loop_count || i < l->loop_first)
		return 0;
	return i <= l->loop_last ? 1 : 2;
}

void
lower_remove_step(Lowered *l, int32_t at)
{
	step_free(&l->step[at]);
	memmove(&l->step[at], &l->step[at + 1],
	        (size_t)(l->nstep - 1 - at) * sizeof *l->step);
	l->nstep--;
	for (int i = 0; i < l->nbuf; i++) {
		Buffer *b = &l->buf[i];
		if (b->first > at)
			b->first--;
		if (b->last > at && b->last != INT32_MAX)
			b->last--;
	}
	for (int i = 0; i < l->nstep; i++) { /* b_from, b_wrap name steps */
		if (l->step[i].b_from > at + 1)
			l->step[i].b_from--;
		if (l->step[i].b_wrap > at + 1)
			l->step[i].b_wrap--;
	}
	if (l->loop_early && at < l->loop_x0)
		l->loop_x0--;
	if (l->loop_early && at < l->loop_m0)
		l->loop_m0--;
	if (l->loop_count && at < l->loop_first)
		l->loop_first--;
	if (l->loop_count && at <= l->loop_last)
		l->loop_last--;
}

static void
move_ref(BufRef *r, const BufRef *to)
{
	if (to[r->buf].buf >= 0)
		*r = (BufRef){to[r->buf].buf, to[r->buf].offset + r->offset};
}

void
lower_remap(Lowered *l, const BufRef *to, TensorPlace *const *places, int n)
{
	for (int s = 0; s < l->nstep; s++) {
		Step *st = &l->step[s];
		for (int x = 0; x < st->nxfer; x++) {
			move_ref(&st->xfer[x].src, to);
			for (uint32_t k = 0; k < st->xfer[x].ndst; k++)
				move_ref(&st->xfer[x].dst[k], to);
		}
		for (int c = 0; c < st->ncall; c++)
			for (int k = 0; k < st->call[c].nref; k++)
				move_ref(&st->call[c].ref[k], to);
	}
	for (int i = 0; i < l->nbuf; i++)
		if (l->buf[i].apart >= 0 && to[l->buf[i].apart].buf >= 0)
			l->buf[i].apart = to[l->buf[i].apart].buf;
	for (int i = 0; i < l->ntp; i++)
		for (int k = 0; k < l->tp[i].npiece; k++)
			move_ref(&l->tp[i].piece[k].at, to);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < places[i]->npiece; k++)
			move_ref(&places[i]->piece[k].at, to);
}

int
lower_relayout(Step *s, const TensorPlace *from, const TensorPlace *to,
               const FlatMap *map, Diag *d)
{
	Moves m = {0};
	int r = layout_moves(from, to, map, &m, d);
	if (!r)
		layout_moves_interleave(&m, 0);
	for (int i = 0; !r && i < m.n; i++) {
		const Move *x = &m.move[i];
		Transfer *t =
		    lower_transfer(s, x->src_tile, x->src, x->words, x->ndst);
		for (uint32_t k = 0; k < x->ndst; k++) {
			t->dst_tile[k] = m.dst_tile[x->first + k];
			t->dst[k] = m.dst[x->first + k];
		}
	}
	moves_free(&m);
	return r;
}

uint32_t
lower_addr(const Lowered *l, BufRef r)
{
	return l->buf[r.buf].addr + r.offset;
}

void
lower_index(Lowered *l)
{
	for (int i = 0; i < l->nstep; i++) {
		Step *s = &l->step[i];
		free(s->first);
		free(s->by_tile);
		free(s->call_of);
		s->first = xcalloc(l->tiles + 1, sizeof *s->first);
		s->call_of = xmalloc(l->tiles * sizeof *s->call_of);
		for (uint32_t t = 0; t < l->tiles; t++)
			s->call_of[t] = -1;
		for (int k = 0; k < s->ncall; k++)
			s->call_of[s->call[k].tile] = k;
		/* count, prefix-sum, fill */
		for (int k = 0; k < s->nxfer; k++) {
			const Transfer *x = &s->xfer[k];
			s->first[x->src_tile + 1]++;
			for (uint32_t j = 0; j < x->ndst; j++)
				s->first[x->dst_tile[j] + 1]++;
		}
		for (uint32_t t = 0; t < l->tiles; t++)
			s->first[t + 1] += s->first[t];
		s->by_tile =
		    xmalloc((s->first[l->tiles] + 1) * sizeof *s->by_tile);
		uint32_t *fill = xcalloc(l->tiles, sizeof *fill);
		for (int k = 0; k < s->nxfer; k++) {
			const Transfer *x = &s->xfer[k];
			uint32_t t = x->src_tile;
			s->by_tile[s->first[t] + fill[t]++] = (TileXfer){k, -1};
			for (uint32_t j = 0; j < x->ndst; j++) {
				t = x->dst_tile[j];
				s->by_tile[s->first[t] + fill[t]++] =
				    (TileXfer){k, (int32_t)j};
			}
		}
		free(fill);
	}
}

/*
 * The supervisor code around the steps (codegen.c, emit_program), timed
 * by the chip's rules (D = sup-dep, B = sup-branch, P = sup-put,
 * docs/fidelity.md):
 *   prologue  setzi, st32 of $lr reading it                 D + 1
 *   call      setzi $m0; call (B) ... the kernel's br $lr
 *             (its formula counts up to the cycle after the
 *             br; the next issue is B - 1 later)             2B
 *   exchange  setzi, the sync; put $INCOMING_DCOUNT after it
 *             holds the phase's first cycle back             1 + P
 *   overlapped none: its cycles (schedule_overlap) hold its
 *   multiply   setup, opening and rest calls                 0
 *   loop      setzi, setzi, st32 of the count               D + 2
 *             per pass: setzi, ld32, add, st32, each
 *             reading the one before, brnz (taken but last)  3D + 1 + B
 *   epilogue  setzi, ld32 $lr, br $lr, each reading the
 *             one before                                     2D + 1
 * and Lowered.loop_extra, the steps' cycles in the loop's iterations
 * that differ (a loop over groups' weight copies).
 */
uint64_t
lower_step_overhead(const Chip *c, const Step *s)
{
	if (s->kind == STEP_EXCHANGE)
		return chip_rule(c, TIMING_SYNC_INTERNAL) + 1 +
		       chip_rule(c, TIMING_SUP_PUT);
	/* an overlapped multiply calls only its rest, which its cycles
	 * count (once scheduled: its windows made); a five-worker add
	 * beside its exchange calls nothing (its cycles: emit_vadd5's) */
	if ((s->gwin && s->gwin->panels) || lower_step_vadd5(s))
		return 0;
	return s->ncall ? 2 * chip_rule(c, TIMING_SUP_BRANCH) : 0;
}

uint64_t
lower_cycles(const Lowered *l)
{
	const Chip *c = l->chip;
	uint64_t D = chip_rule(c, TIMING_SUP_DEP),
	         B = chip_rule(c, TIMING_SUP_BRANCH);
	uint64_t total = (D + 1) + (2 * D + 1);
	for (int i = 0; i < l->nstep; i++) {
		const Step *s = &l->step[i];
		uint64_t n =
		    l->loop_count && i >= l->loop_first && i <= l->loop_last
		        ? l->loop_count
		        : 1;
		total += n * (s->cycles + lower_step_overhead(c, s));
	}
	if (l->loop_count)
		total += D + 2 + l->loop_count * (3 * D + 1 + B) - (B - 1) +
		         l->loop_extra;
	return total;
}

int
lower_buffers_by_tile(const Lowered *l, int **start_out, int **ids_out)
{
	uint32_t T = l->tiles;
	/* a counting sort: start[t + 2] counts, then start[t + 1] runs ahead
	 * of tile t's next slot */
	int *start = xcalloc((size_t)T + 2, sizeof *start),
	    *ids = xmalloc(((size_t)l->nbuf + 1) * sizeof *ids);
	for (int i = 0; i < l->nbuf; i++)
		start[l->buf[i].tile + 2]++;
	int most = 0;
	for (uint32_t t = 0; t < T; t++) {
		if (start[t + 2] > most)
			most = start[t + 2];
		start[t + 2] += start[t + 1];
	}
	for (int i = 0; i < l->nbuf; i++)
		ids[start[l->buf[i].tile + 1]++] = i;
	*start_out = start;
	*ids_out = ids;
	return most;
}

/* lower_beside's count for op o on the tile of buffers ids[0 .. n - 1]
 * (code bytes of code), its steps from .. to: sets *over if the tile is
 * over at one of them, and returns the most live there less the most live
 * in o's own buffers; with other, the buffers not o's live there go to
 * other[0 .. *nother - 1]. */
static uint64_t
beside_on_tile(const Lowered *l, const int *ids, int n, int32_t o, int32_t from,
               int32_t to, uint32_t code, TileBuf *all, TileBuf *own,
               TilePack *s, uint8_t *over, TileBuf *other, int *nother)
{
	int na = 0, nb = 0;
	if (nother)
		*nother = 0;
	for (int i = 0; i < n; i++) {
		const Buffer *b = &l->buf[ids[i]];
		if (b->last < from || b->first > to)
			continue;
		TileBuf tb = {.bytes = b->bytes,
		              .align = b->align,
		              .region = b->region,
		              .first = b->first < from ? from : b->first,
		              .last = b->last > to ? to : b->last,
		              .apart = -1};
		all[na++] = tb;
		if (b->op == o)
			own[nb++] = tb;
		else if (other)
			other[(*nother)++] = tb;
	}
	int32_t step;
	uint64_t live = plan_tile_live(all, na, 0, s, &step);
	if (plan_tile_over(l->chip, (TileBytes){code, live}))
		*over = 1;
	uint64_t mine = plan_tile_live(own, nb, 0, s, &step);
	return live - mine;
}

/* The first and last step tagged with each op 0 .. nops - 1 (from > to:
 * none). */
static void
op_steps(const Lowered *l, int nops, int32_t *from, int32_t *to)
{
	for (int o = 0; o < nops; o++) {
		from[o] = INT32_MAX;
		to[o] = -1;
	}
	for (int i = 0; i < l->nstep; i++)
		for (int k = 0; k < l->step[i].nop; k++) {
			int32_t o = l->step[i].op[k];
			if (o < 0 || o >= nops)
				continue;
			if (i < from[o])
				from[o] = i;
			if (i > to[o])
				to[o] = i;
		}
}

/* lower_beside (out NULL: every tile, code[t] its code, over by the
 * bound kept in over[]) and lower_beside_bufs (out: the tiles with bad[t]
 * set, each op's buffers of the tile where they are most); the ops whose
 * count came from at least one tile. */
static int
beside_walk(const Lowered *l, const uint32_t *code, const uint8_t *want,
            const uint8_t *bad, int nops, uint32_t *beside, PlanBeside *out,
            uint8_t *over)
{
	size_t no = (size_t)(nops > 0 ? nops : 0) + 1;
	int32_t *from = xmalloc(no * sizeof *from),
	        *to = xmalloc(no * sizeof *to),
	        *seen = xmalloc(no * sizeof *seen);
	uint64_t *most_rest = xcalloc(no, sizeof *most_rest);
	uint8_t *given = xcalloc(no, 1), dummy = 0;
	op_steps(l, nops, from, to);
	for (int o = 0; o < nops; o++)
		seen[o] = -1;
	int *start, *ids;
	int most = lower_buffers_by_tile(l, &start, &ids);
	TileBuf *all = xmalloc(((size_t)most + 1) * sizeof *all),
	        *own = xmalloc(((size_t)most + 1) * sizeof *own),
	        *other =
	            out ? xmalloc(((size_t)most + 1) * sizeof *other) : NULL;
	TilePack s;
	plan_pack_init(&s, most);
	for (uint32_t t = 0; t < l->tiles; t++) {
		if (bad && !bad[t])
			continue;
		const int *tid = ids + start[t];
		int n = start[t + 1] - start[t];
		for (int i = 0; i < n; i++) {
			int32_t o = l->buf[tid[i]].op;
			if (o < 0 || o >= nops || !want[o] || from[o] > to[o] ||
			    seen[o] == (int32_t)t)
				continue;
			seen[o] = (int32_t)t;
			int nother = 0;
			uint64_t rest = beside_on_tile(
			    l, tid, n, o, from[o], to[o], code ? code[t] : 0,
			    all, own, &s, over ? &over[o] : &dummy, other,
			    out ? &nother : NULL);
			if (given[o] && rest <= most_rest[o])
				continue;
			given[o] = 1;
			most_rest[o] = rest;
			if (rest > beside[o])
				beside[o] = rest > UINT32_MAX ? UINT32_MAX
				                              : (uint32_t)rest;
			if (!out)
				continue;
			free(out[o].buf);
			out[o].buf =
			    xmalloc(((size_t)nother + 1) * sizeof *out[o].buf);
			memcpy(out[o].buf, other,
			       (size_t)nother * sizeof *other);
			out[o].n = nother;
		}
	}
	int count = 0;
	for (int o = 0; o < nops; o++)
		count += given[o];
	plan_pack_free(&s);
	free(all);
	free(own);
	free(other);
	free(start);
	free(ids);
	free(from);
	free(to);
	free(seen);
	free(most_rest);
	free(given);
	return count;
}

void
lower_beside(const Lowered *l, const uint32_t *code, const uint8_t *want,
             int nops, uint32_t *beside)
{
	uint8_t *over = xcalloc((size_t)(nops > 0 ? nops : 0) + 1, 1);
	for (int o = 0; o < nops; o++)
		beside[o] = 0;
	beside_walk(l, code, want, NULL, nops, beside, NULL, over);
	for (int o = 0; o < nops; o++)
		if (!over[o])
			beside[o] = 0;
	free(over);
}

int
lower_beside_bufs(const Lowered *l, const uint8_t *want, const uint8_t *bad,
                  int nops, PlanBeside *out, uint32_t *beside)
{
	return beside_walk(l, NULL, want, bad, nops, beside, out, NULL);
}

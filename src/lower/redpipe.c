/*
 * redpipe.c - a K-split GEMM's reduction in two parts of its rows, the
 * second part's partials exchanged beside the first part's add
 * (docs/compiler.md, "The reduction in two parts").
 *
 * Contract: after lowering (lower_gemm's "gemm: C partials" exchange and
 * "gemm: add partials" step, their bias, residual or GELU passes made),
 * before lower_verify and xsched_run. A reduction whose calls are all
 * f16 vadd calls without a row normalisation (vadd_f16, vadd_bias_f16,
 * vadd_bias_res_f16, vadd_bias_gelu_f16_f8), each slice's segments of
 * whole rows of one 16-column panel (32 bytes a row), every partial
 * transfer a whole segment of one such slice between tiles that both
 * call, is split, where the price below says it gains, at row r1[i] of
 * call i's slice (at least one row each side):
 *   step x     the exchange: the bias and residual copies as before, the
 *              partials' first r1 rows of each segment
 *   step x + 1 the first r1 rows' add on five workers (VaddCall.five,
 *              vadd_five_block), its transfers the partials' other rows,
 *              scheduled beside them in blocks (lower_step_vadd5;
 *              xsched.c, schedule_vadd5; codegen.c, emit_vadd5)
 *   step x + 2 the other rows' add, six workers
 * Each part's call is the reduction's call on its rows (the same kernel:
 * the bias row of each segment, the residual's or the GELU's output rows
 * at the same offsets), so every element gets the same operations in the
 * same order: the bits are the unsplit reduction's. The buffers the rest
 * reads live to its step.
 *
 * The rows: the exchange beside the workers must end before the first
 * of them exits (the supervisor's slot is then no longer one in six), so
 * each call's r1 is the fewest rows whose five workers' first exit comes
 * at a target T or later (RowShape, rows_for): the calls of fewer rows
 * (a grid's last row or column) take a larger part and every tile's
 * workers run about as long. RP_PARTS - 1 targets from the shortest
 * first exit to the longest are priced (price): today X + A (the
 * exchange's bound, xsched_bound, and RP_ROUTE_ALLOW for the routes and
 * gaps it leaves out; the six-worker add; with their supervisor
 * overheads), split X1 + the five-worker step (lower_vadd5_cycles: its
 * opening, the launch, the later of the workers' end and X2) + A2. The
 * targets whose X2 bound is below the first exit are then scheduled
 * beside the workers (xsched_beside_end: in blocks the second exchange
 * costs more than its bound, each control a block and the sends on the
 * boundaries), cheapest bound first, until the next bound is no cheaper
 * than the best scheduled; the best that fits is kept if cheaper than
 * the reduction whole.
 */
#include <stdlib.h>
#include <string.h>

#include "lower.h"

#include "../kernels/kernels.h"
#include "../kernels/vadd.h"

enum {
	RP_PARTS = 16,       /* the targets tried: the first exit at k / 16
	                        of the way from the shortest to the longest */
	RP_ROW = 32,         /* bytes of an f16 row of a 16-column panel */
	RP_ROUTE_ALLOW = 180 /* an exchange's cycles past its bound: the
	                       routes' latency, the windows' gaps (at most
	                       the 183 measured, docs/bench-siglip.md) */
};

uint64_t
lower_vadd5_opening(const Chip *c, const Step *s)
{
	int gelu = s->ncall && s->call[0].args.u.vadd.has_gelu;
	return sup_csr_setup(c, gelu ? 7 : 5) + 1 +
	       chip_rule(c, TIMING_SYNC_INTERNAL) + 1 +
	       chip_rule(c, TIMING_SUP_PUT) + XS_PREAMBLE;
}

void
lower_vadd5_frame(const Chip *c, const Step *s, uint64_t *lead, uint64_t *close,
                  uint64_t *done)
{
	/* as gemm_windows: the worst of the six phases of the launch, over
	 * the calls' shapes (each once) */
	enum { BASE = 6 * 64 };
	uint64_t lo = UINT64_MAX, hi = 0;
	*lead = 0;
	for (int i = 0; i < s->ncall; i++) {
		const VaddCall *v = &s->call[i].args.u.vadd;
		int seen = 0;
		for (int j = 0; j < i && !seen; j++) {
			const VaddCall *u = &s->call[j].args.u.vadd;
			seen = u->atoms == v->atoms && u->nsrc == v->nsrc &&
			       u->nseg == v->nseg &&
			       vadd_call_variant(u) == vadd_call_variant(v);
		}
		for (uint64_t ph = 0; ph < CHIP_SLOTS && !seen; ph++) {
			VaddFive f;
			vadd_five_block(c, v->atoms, v->nsrc, v->nseg,
			                vadd_call_variant(v), BASE + ph, &f);
			if (f.open - (BASE + ph) > *lead)
				*lead = f.open - (BASE + ph);
			if (f.exit_min - f.open < lo)
				lo = f.exit_min - f.open;
			if (f.exit_max - f.open > hi)
				hi = f.exit_max - f.open;
		}
	}
	*close = (lo + CHIP_SLOTS) / CHIP_SLOTS * CHIP_SLOTS;
	*done = hi;
}

uint64_t
lower_vadd5_cycles(const Chip *c, const Step *s, uint64_t lead, uint64_t done,
                   uint64_t xend)
{
	uint64_t end = done + chip_rule(c, TIMING_SYNC_LOCAL);
	return lower_vadd5_opening(c, s) + lead + (xend > end ? xend : end);
}

/* 1 if compute step `c` after exchange `x` is a reduction this pass
 * splits: its calls are f16 vadd calls of whole rows (two or more)
 * without a normalisation, every transfer into a "C partials" buffer a
 * whole segment of its tile's call; *call_of (per tile, -1: none) is
 * made. */
static int
splittable(const Lowered *l, const Step *x, const Step *c, int32_t **call_of)
{
	if (x->kind != STEP_EXCHANGE || c->kind != STEP_COMPUTE || c->gwin ||
	    c->block || c->nxfer || !c->ncall ||
	    strcmp(c->what, "gemm: add partials"))
		return 0;
	int32_t *of = xmalloc(l->tiles * sizeof *of);
	for (uint32_t t = 0; t < l->tiles; t++)
		of[t] = -1;
	int ok = 1;
	for (int i = 0; i < c->ncall && ok; i++) {
		const KernelCall *k = &c->call[i];
		const VaddCall *v = &k->args.u.vadd;
		ok = k->args.kind == KC_VADD && !v->norm_cols && !v->five &&
		     vadd_worker(0, vadd_call_variant(v)) &&
		     !strcmp(k->kernel, vadd_entry(0, vadd_call_variant(v))) &&
		     v->atoms % VADD_ROW_ATOMS == 0 &&
		     v->atoms >= 2 * VADD_ROW_ATOMS &&
		     v->src_seg == v->atoms / VADD_ROW_ATOMS * RP_ROW;
		of[k->tile] = i;
	}
	int partials = 0;
	for (int i = 0; i < x->nxfer && ok; i++) {
		const Transfer *t = &x->xfer[i];
		if (t->ndst != 1 ||
		    strcmp(l->buf[t->dst[0].buf].what, "C partials"))
			continue;
		/* its sender calls too: emit_vadd5 runs events on the
		 * tiles that launch the workers only */
		int32_t k = of[t->dst_tile[0]];
		ok = k >= 0 && of[t->src_tile] >= 0 &&
		     t->words * 4 == c->call[k].args.u.vadd.src_seg &&
		     t->dst[0].offset % c->call[k].args.u.vadd.src_seg == 0;
		partials++;
	}
	if (!ok || !partials) {
		free(of);
		return 0;
	}
	*call_of = of;
	return 1;
}

/* The exchange's two parts, call i's first r1[i] rows: the first in *a
 * (the other transfers and each partial's first rows), the second in
 * *b. */
static void
split_xfers(const Lowered *l, const Step *x, const int32_t *call_of,
            const uint32_t *r1, Step *a, Step *b)
{
	for (int i = 0; i < x->nxfer; i++) {
		const Transfer *t = &x->xfer[i];
		if (t->ndst != 1 ||
		    strcmp(l->buf[t->dst[0].buf].what, "C partials")) {
			lower_transfer_as(a, t, t->src_tile, t->src, t->words,
			                  0);
			continue;
		}
		uint32_t skip = r1[call_of[t->dst_tile[0]]] * RP_ROW;
		lower_transfer_as(a, t, t->src_tile, t->src, skip / 4, 0);
		lower_transfer_as(b, t, t->src_tile,
		                  (BufRef){t->src.buf, t->src.offset + skip},
		                  t->words - skip / 4, skip);
	}
}

/* Call v on its rows [r0, r0 + n) (the offsets of its references in
 * *ref). */
static void
rows_of(VaddCall *v, BufRef *ref, uint32_t r0, uint32_t n)
{
	v->atoms = n * VADD_ROW_ATOMS;
	ref[0].offset += r0 * RP_ROW;
	ref[1].offset += r0 * RP_ROW;
	/* the residual's rows as dst's; the GELU's output a byte an
	 * element */
	if (v->has_res)
		ref[3].offset += r0 * RP_ROW;
	if (v->has_gelu)
		ref[3].offset += r0 * RP_ROW / 2;
}

/* A shape of the reduction's calls: the first exit of five workers
 * adding its first r rows, exit[r] (r = 1 .. rows - 1), from the
 * frame's cycle 0 at one issue phase (the targets' measure). */
typedef struct {
	uint32_t atoms, nsrc, nseg, rows;
	int variant;
	uint64_t *exit;
} RowShape;

/* The shapes of step c's calls, each call's in *shape_of. */
static RowShape *
shapes_of(const Chip *ch, const Step *c, int *n, int *shape_of)
{
	RowShape *sh = NULL;
	int ns = 0, cap = 0;
	for (int i = 0; i < c->ncall; i++) {
		const VaddCall *v = &c->call[i].args.u.vadd;
		int k = 0, var = vadd_call_variant(v);
		while (k < ns &&
		       (sh[k].atoms != v->atoms || sh[k].nsrc != v->nsrc ||
		        sh[k].nseg != v->nseg || sh[k].variant != var))
			k++;
		shape_of[i] = k;
		if (k < ns)
			continue;
		GROW(sh, ns, cap);
		RowShape *p = &sh[ns++];
		*p = (RowShape){v->atoms, v->nsrc,
		                v->nseg,  v->atoms / VADD_ROW_ATOMS,
		                var,      NULL};
		p->exit = xcalloc(p->rows, sizeof *p->exit);
		for (uint32_t r = 1; r < p->rows; r++) {
			VaddFive f;
			vadd_five_block(ch, r * VADD_ROW_ATOMS, v->nsrc,
			                v->nseg, var, 0, &f);
			p->exit[r] = f.exit_min - f.open;
		}
	}
	*n = ns;
	return sh;
}

/* Each call's first rows for target T: the fewest whose five workers'
 * first exit is at T or later (at least 1, at most all but one). */
static void
rows_for(const Step *c, const RowShape *sh, const int *shape_of, uint64_t T,
         uint32_t *r1)
{
	for (int i = 0; i < c->ncall; i++) {
		const RowShape *p = &sh[shape_of[i]];
		uint32_t r = 1;
		while (r + 1 < p->rows && p->exit[r] < T)
			r++;
		r1[i] = r;
	}
}

/* The price of the split with call i's first r1[i] rows (cycles of the
 * reduction's steps with their overheads): with the second exchange's
 * bound (`real` 0; UINT64_MAX if it does not end before the first
 * worker's exit), or scheduled beside the workers (UINT64_MAX if it
 * does not fit there). */
static uint64_t
price(const Lowered *l, const Step *x, const Step *c, const int32_t *call_of,
      const uint32_t *r1, int real)
{
	const Chip *ch = l->chip;
	Step a = {.kind = STEP_EXCHANGE}, b = {.kind = STEP_EXCHANGE};
	split_xfers(l, x, call_of, r1, &a, &b);
	uint64_t x1 = xsched_bound(l, a.xfer, a.nxfer) + RP_ROUTE_ALLOW,
	         x2 = xsched_bound(l, b.xfer, b.nxfer) + RP_ROUTE_ALLOW;
	/* the five-worker part and the rest, as calls */
	Step f = {.kind = STEP_COMPUTE, .ncall = c->ncall};
	f.call = xmalloc((size_t)c->ncall * sizeof *f.call);
	uint64_t rest = 0;
	for (int i = 0; i < c->ncall; i++) {
		f.call[i] = c->call[i];
		VaddCall *v = &f.call[i].args.u.vadd;
		uint32_t rows = v->atoms / VADD_ROW_ATOMS;
		uint64_t r =
		    vadd_cycles(ch, (rows - r1[i]) * VADD_ROW_ATOMS, v->nsrc,
		                v->nseg, vadd_call_variant(v));
		if (r > rest)
			rest = r;
		v->atoms = r1[i] * VADD_ROW_ATOMS;
	}
	uint64_t lead, close, done;
	lower_vadd5_frame(ch, &f, &lead, &close, &done);
	if (real)
		x2 = xsched_beside_end(l, &b, close);
	lower_free_transfers(&a);
	lower_free_transfers(&b);
	free(b.win);
	uint64_t t = x2 > close
	                 ? UINT64_MAX
	                 : x1 + lower_step_overhead(ch, x) +
	                       lower_vadd5_cycles(ch, &f, lead, done, x2) +
	                       rest + lower_step_overhead(ch, c);
	free(f.call);
	return t;
}

/* The cheapest split's first rows in r1 (per call); 0 when no split is
 * cheaper than the reduction whole. The targets are priced with the
 * second exchange's bound, then scheduled beside the workers cheapest
 * first (the blocks cost it more than its bound: the controls each a
 * block, the sends on the boundaries) until the next one's bound price
 * is no less than the best scheduled. */
static int
choose(const Lowered *l, const Step *x, const Step *c, const int32_t *call_of,
       uint32_t *r1)
{
	const Chip *ch = l->chip;
	uint64_t best = xsched_bound(l, x->xfer, x->nxfer) + RP_ROUTE_ALLOW +
	                lower_step_overhead(ch, x) + c->cycles +
	                lower_step_overhead(ch, c);
	int ns, found = 0;
	int *shape_of = xmalloc((size_t)c->ncall * sizeof *shape_of);
	RowShape *sh = shapes_of(ch, c, &ns, shape_of);
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int k = 0; k < ns; k++) {
		if (sh[k].exit[1] < lo)
			lo = sh[k].exit[1];
		if (sh[k].exit[sh[k].rows - 1] > hi)
			hi = sh[k].exit[sh[k].rows - 1];
	}
	size_t n = (size_t)c->ncall;

	uint32_t *r = xmalloc(RP_PARTS * n * sizeof *r);
	uint64_t bound[RP_PARTS];
	for (uint32_t k = 1; k < RP_PARTS; k++) {
		rows_for(c, sh, shape_of, lo + (hi - lo) * k / RP_PARTS,
		         r + k * n);
		bound[k] = price(l, x, c, call_of, r + k * n, 0);
	}
	for (;;) {
		uint32_t k = 0;
		for (uint32_t j = 1; j < RP_PARTS; j++)
			if (bound[j] < best && (!k || bound[j] < bound[k]))
				k = j;
		if (!k)
			break;
		uint64_t t = price(l, x, c, call_of, r + k * n, 1);
		bound[k] = UINT64_MAX;
		if (t < best) {
			best = t;
			found = 1;
			memcpy(r1, r + k * n, n * sizeof *r);
		}
	}
	free(r);
	for (int k = 0; k < ns; k++)
		free(sh[k].exit);
	free(sh);
	free(shape_of);
	return found;
}

/* Reduction (x, x + 1) split with call i's first r1[i] rows: step x + 2
 * made. */
static void
split(Lowered *l, int32_t xi, const int32_t *call_of, const uint32_t *r1)
{
	int last = l->loop_count && l->loop_last == xi + 1;
	int32_t op = l->op; /* the rest's calls serve c's ops, copied */
	l->op = -1;
	Step *r = lower_insert_step(l, xi + 2, STEP_COMPUTE,
	                            "gemm: add partials, the rest");
	if (last)
		l->loop_last++;
	Step *x = &l->step[xi], *c = &l->step[xi + 1];
	r = &l->step[xi + 2];
	if (c->nop) {
		r->op = xmalloc((size_t)c->nop * sizeof *r->op);
		memcpy(r->op, c->op, (size_t)c->nop * sizeof *r->op);
		r->nop = c->nop;
	}
	Step a = {.kind = STEP_EXCHANGE};
	split_xfers(l, x, call_of, r1, &a, c);
	lower_free_transfers(x);
	x->xfer = a.xfer;
	x->nxfer = a.nxfer;
	c->what = "gemm: add partials beside the rest's";
	lower_step_blocks(c, XS_BLOCK, NULL, 0);
	c->cycles = 0;
	for (int i = 0; i < c->ncall; i++) {
		KernelCall *k = &c->call[i];
		VaddCall *v = &k->args.u.vadd;
		uint32_t rows = v->atoms / VADD_ROW_ATOMS;
		KernelCall *n = lower_call(l, r, k->tile, k->kernel, k->object,
		                           k->args_bytes);
		n->args = k->args;
		n->nref = k->nref;
		memcpy(n->ref, k->ref, sizeof n->ref);
		rows_of(&n->args.u.vadd, n->ref, r1[i], rows - r1[i]);
		n->cycles = vadd_cycles(l->chip, n->args.u.vadd.atoms, v->nsrc,
		                        v->nseg, vadd_call_variant(v));
		if (n->cycles > r->cycles)
			r->cycles = n->cycles;
		/* what the rest reads lives to its step */
		for (int j = 0; j < n->nref; j++) {
			Buffer *b = &l->buf[n->ref[j].buf];
			if (b->last == xi + 1)
				b->last = xi + 2;
		}
		v->atoms = r1[i] * VADD_ROW_ATOMS;
		v->five = 1;
		k->cycles = 0;
	}
	l->op = op;
}

int
lower_red_pipe(Lowered *l)
{
	int n = 0;
	for (int32_t i = 0; i + 1 < l->nstep; i++) {
		int32_t *call_of;
		if (!splittable(l, &l->step[i], &l->step[i + 1], &call_of))
			continue;
		const Step *c = &l->step[i + 1];
		uint32_t *r1 = xmalloc((size_t)c->ncall * sizeof *r1);
		if (choose(l, &l->step[i], c, call_of, r1)) {
			split(l, i, call_of, r1);
			n++;
			i += 2;
		}
		free(r1);
		free(call_of);
	}
	return n;
}

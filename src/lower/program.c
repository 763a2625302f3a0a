/*
 * program.c - a whole graph lowered as its plan says (plan/, Plan).
 *
 * Contract: takes a verified graph and its plan; returns a Lowered whose
 * steps run the ops in graph order and whose tensor map (l->tp) holds
 * where the host writes every input and weight and reads every output.
 * It chooses nothing: each op's layouts are the functions of the plan's
 * choices that the planner priced (plan/layout.c, plan/gemm_layout.c),
 * made here in real buffers, and each input reaches the op as the plan's
 * Conv says: as it is, written by the host, or by steps inserted just
 * before the op's own (an exchange, a pack of a GEMM's B, a transpose of
 * its A).
 *
 * Every tensor has a home: the layout where its producer left it, or for
 * an input or weight the layout its first consumer wanted (the host writes
 * it there). Lifetimes: a lowering makes its tensors' buffers live from
 * its first step to the end; here, once every op is lowered, each buffer
 * that holds a tensor is cut back to the last step that reads it (weights
 * and outputs stay live to the end, and inputs live from the start).
 */
#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"
#include "gemm.h"
#include "loop.h"
#include "pack.h"
#include "rowwise.h"
#include "transpose.h"

/* A buffer whose padding must stay zero, and the place it holds pieces of;
 * ones > 0: V's blocks of a matmul whose reduction divides by column
 * `ones` (GemmPlan.norm_cols), which holds 1 instead (V's column of
 * ones, Lowered.init) for the matmul op `pv` (else -1). */
typedef struct {
	int32_t buf;
	const TensorPlace *tp;
	uint32_t ones;
	int32_t pv;
} Zeroed;

typedef struct {
	const Graph *g;
	const Plan *plan;
	Lowered *l;
	uint32_t tiles;
	TensorPlace **home; /* by tensor id */
	TensorPlace **made; /* every place made here, to free and to trim */
	int nmade, capmade;
	TensorPlace **copies; /* more places of inputs and weights, written
	                         by the host like their homes */
	int ncopies, capcopies;
	int32_t *used; /* by buffer: the last step that reads it */
	int nused;
	Zeroed *zeroed; /* buffers whose padding must stay zero (pad_zero) */
	int nzeroed, capzeroed;
	TensorPlace **refill; /* copies of a loop weight an exchange fills
	                         each iteration (loop_copies) */
	int nrefill, caprefill;
	uint32_t tiles_used;
	const int32_t *loop_slot; /* by tensor: >= 0 for a weight of one
	                             iteration of the loop (RepeatMap) */
	int32_t carry;            /* while the loop's body is lowered: its
	                             carry_in, whose home is then the carry's
	                             place (loop_begin); else -1 */
	TensorPlace *carry_home;  /* carry_in's own home meanwhile */
	TensorPlace **slot;       /* a loop over groups: the carry's place's
	                             bytes in slot k of its bank, group k's
	                             (carry_bank) */
	int32_t *bank_of;         /* by buffer: its bank, or -1 */
	int ncopy;                /* steps of carry copies (one call a tile) */
} Build;

/* The lowering's Storage: buffers of l live from step `first` on. */
typedef struct {
	Storage st;
	Lowered *l;
	int32_t first;
} Buffers;

static int32_t
new_buffer(Storage *st, uint32_t tile, uint32_t bytes, uint32_t align,
           MemRegion region, const char *what)
{
	Buffers *b = (Buffers *)st;
	return lower_buffer(b->l, tile, bytes, align, region, b->first,
	                    INT32_MAX, what);
}

static Buffers
buffers_from(Build *b, int32_t first)
{
	return (Buffers){{new_buffer}, b->l, first};
}

/* Keep a place made here (freed and trimmed with the others). */
static TensorPlace *
adopt(Build *b, TensorPlace *tp)
{
	GROW(b->made, b->nmade, b->capmade);
	return b->made[b->nmade++] = tp;
}

static TensorPlace *
new_place(Build *b, int32_t id, uint32_t rows, uint32_t cols, DType dt)
{
	return adopt(b, tensor_place_new(id, rows, cols, dt));
}

/* b->used covers every buffer made so far (new ones unread). */
static void
size_used(Build *b)
{
	if (b->nused < b->l->nbuf) {
		b->used =
		    xrealloc(b->used, (size_t)b->l->nbuf * sizeof *b->used);
		for (int i = b->nused; i < b->l->nbuf; i++)
			b->used[i] = -1;
		b->nused = b->l->nbuf;
	}
}

/* Record that `step` reads every buffer of tp. */
static void
use_place(Build *b, const TensorPlace *tp, int32_t step)
{
	size_used(b);
	for (int k = 0; k < tp->npiece; k++) {
		int32_t buf = tp->piece[k].at.buf;
		if (b->used[buf] < step)
			b->used[buf] = step;
	}
}

/* Every buffer of tp is live from `step` (it is filled there). */
static void
fill_from(Build *b, const TensorPlace *tp, int32_t step)
{
	for (int k = 0; k < tp->npiece; k++)
		b->l->buf[tp->piece[k].at.buf].first = step;
}

/* The default layout of tensor id's view from tile0, buffers live from
 * step `first`. */
static TensorPlace *
default_place(Build *b, int32_t id, uint32_t rows, uint32_t cols, DType dt,
              int32_t first, uint32_t tile0)
{
	Buffers bs = buffers_from(b, first);
	return adopt(
	    b, layout_default(&bs.st, b->tiles, id, rows, cols, dt, tile0));
}

/* The home of tensor id, made in the default layout from tile0 (the
 * plan's) if it is an input or weight that has none yet. */
static TensorPlace *
home_of(Build *b, int32_t id, uint32_t tile0)
{
	if (!b->home[id]) {
		const Tensor *t = graph_tensor(b->g, id);
		b->home[id] =
		    default_place(b, id, tensor_view_rows(t),
		                  tensor_view_cols(t), t->elem.dtype, 0, tile0);
	}
	return b->home[id];
}

/* A mirror of `like` for tensor id (layout_mirror), live from `first`. */
static TensorPlace *
mirror(Build *b, const TensorPlace *like, int32_t id, DType dt, int one_row,
       int32_t first, const char *what)
{
	Buffers bs = buffers_from(b, first);
	return adopt(b, layout_mirror(&bs.st, like, id, dt, one_row, what));
}

/* 1 if `from` is B^T's n-panels already (the f8 cast of a segment
 * stored as B^T panel blocks, layout_segments' bt) and `want` B^T in the
 * f8 GEMM weight layout, or `from` B's weight panels (the cast of
 * layout_segments' vb blocks) and `want` B in it: an exchange of whole
 * panels fills it, no pack. */
static int
bt_packed(const TensorPlace *from, const FlatMap *map, const TensorPlace *want)
{
	if (map || !dtype_is_f8(from->dtype) || from->dtype != want->dtype ||
	    !from->npiece || !want->npiece)
		return 0;
	int vb = from->piece[0].format == PF_GEMM_B;
	for (int k = 0; k < from->npiece; k++)
		if (vb ? !from->piece[k].vb_index ||
		             from->piece[k].format != PF_GEMM_B
		       : !from->piece[k].bt_panels)
			return 0;
	for (int k = 0; k < want->npiece; k++)
		if (want->piece[k].format != (vb ? PF_GEMM_B : PF_GEMM_B_T))
			return 0;
	return 1;
}

/* Fill `want` (tensor id's place as a consumer wants it) before the
 * consumer's first step `at`, as the plan's Conv c says: written there by
 * the host (CONV_HOST: its home from now on; CONV_HOST_COPY: a copy, the
 * home is elsewhere or chosen by the next consumer), or from `from` (its
 * home, a place made from it, or with `map` the home of the tensor it
 * views) by an exchange step inserted at `at` (and packed, for a GEMM's
 * B: pack.c, with 1 in column `ones` if > 0, PackCall.one). Returns the
 * steps inserted. */
static int
bring(Build *b, int32_t id, const Conv *c, const TensorPlace *from,
      const FlatMap *map, TensorPlace *want, int32_t at, const char *what,
      uint32_t ones, int *inserted, Diag *d)
{
	*inserted = 0;
	if (c->kind == CONV_HOST) {
		b->home[id] = want;
		return IPU_OK;
	}
	if (c->kind == CONV_HOST_COPY) {
		GROW(b->copies, b->ncopies, b->capcopies);
		b->copies[b->ncopies++] = want;
		return IPU_OK;
	}
	int r;
	if (layout_is_packed(want) && !bt_packed(from, map, want)) {
		r = lower_pack_b(
		    b->l, from, map, want, ones,
		    ones ? plan_f8_one(graph_tensor(b->g, id)->elem) : 0, at,
		    inserted, d);
	} else {
		Step *s = lower_insert_step(b->l, at, STEP_EXCHANGE, what);
		*inserted = 1;
		r = lower_relayout(s, from, want, map, d);
	}
	if (r)
		return r;
	fill_from(b, want, at);
	use_place(b, from, at);
	return IPU_OK;
}

/* A loop weight wanted in copies (Conv CONV_LOOP_COPIES): stored once
 * where the plan's weight balance put its blocks, and copied into `want`
 * by an exchange step (*s, or a new one). */
static int
loop_copies(Build *b, const OpPlan *o, TileLog *owners, int32_t id,
            TensorPlace *want, Step **s, int32_t at, Diag *d)
{
	(void)o;
	Buffers bs = buffers_from(b, 0);
	TensorPlace *home = adopt(
	    b, layout_loop_copies(&bs.st, want, owners, NULL, b->tiles, 1));
	b->home[id] = home;
	if (!*s)
		*s = lower_step(b->l, STEP_EXCHANGE, "broadcast");
	use_place(b, home, at);
	GROW(b->refill, b->nrefill, b->caprefill);
	b->refill[b->nrefill++] = want;
	return lower_relayout(*s, home, want, NULL, d);
}

/* The weight balance's choices of op o, read in order. */
static TileLog
replay(const OpPlan *o)
{
	return (TileLog){.tile = o->owners.tile, .n = o->owners.n, .replay = 1};
}

/* ---- matmul ------------------------------------------------------------ */

/* The GEMM kernel multiplies whole K panels (docs/kernel-gemm.md), B's
 * padding rows are zero, but A's stale padding can hold an f8 0x80 or an
 * f16 infinity, and NaN x 0 is NaN. Exchanges write only the data, so a
 * buffer that holds a partial panel is kept from the start to the end,
 * shared only by buffers with the same pieces (share_zeroed): its padding
 * keeps the zeros of the loaded memory. */
static void
pad_zero(Build *b, const TensorPlace *tp)
{
	for (int k = 0; k < tp->npiece; k++)
		if (tp->piece[k].cols < tp->piece[k].pad_cols) {
			GROW(b->zeroed, b->nzeroed, b->capzeroed);
			b->zeroed[b->nzeroed++] =
			    (Zeroed){tp->piece[k].at.buf, tp, 0, -1};
		}
}

/* The buffers of tp's B^T panel blocks (layout_segments' bt), whose
 * padding an exchange never writes and their cast reads: kept zero as
 * pad_zero's; so are its B blocks (vb), those of segment k (rows
 * [bounds[k], bounds[k + 1])) with column ones[k] 1 (> 0: Zeroed.ones)
 * for the matmul op pv[k]. */
static void
keep_zeroed(Build *b, const TensorPlace *tp, const uint32_t *bounds, int nseg,
            const uint32_t *ones, const int32_t *pv)
{
	for (int k = 0; k < tp->npiece; k++) {
		const Piece *p = &tp->piece[k];
		if (!(p->bt_panels && !p->col0) && p->vb_index != 1)
			continue;
		uint32_t one = 0;
		int32_t op = -1;
		for (int j = 0; p->vb_index && j < nseg; j++)
			if (p->row0 >= bounds[j] && p->row0 < bounds[j + 1]) {
				one = ones[j];
				op = one ? pv[j] : -1;
			}
		GROW(b->zeroed, b->nzeroed, b->capzeroed);
		b->zeroed[b->nzeroed++] = (Zeroed){p->at.buf, tp, one, op};
	}
}

/* V's column of ones: 1 (f16) at column z->ones of each real row of
 * the blocks of z's buffer that hold it. */
static void
init_ones(Lowered *l, const Zeroed *z)
{
	for (int k = 0; k < z->tp->npiece; k++) {
		const Piece *p = &z->tp->piece[k];
		if (p->at.buf != z->buf || p->col0 + p->cols != z->ones ||
		    p->cols >= p->pad_cols)
			continue;
		for (uint32_t r = 0; r < p->rows; r++) {
			GROW(l->init, l->ninit, l->capinit);
			l->init[l->ninit++] = (LowerHalf){
			    p->at.buf,
			    p->at.offset + (r * p->pad_cols + p->cols) * 2,
			    0x3c00};
		}
	}
}

/* Lower `batches` GEMMs with the plan's GEMM plan, `group` side by side,
 * into l, with the operands' and C's pieces in pa, pb, pc. */
static int
lower_batches(Build *b, const Op *op, const OpPlan *o, uint32_t batches, int ta,
              TileLog *owners, TensorPlace *pa, TensorPlace *pb,
              TensorPlace *pc, Diag *d)
{
	const GemmPlan *p = &o->gemm;
	const Tensor *a = graph_tensor(b->g, op->in[0]),
	             *bt = graph_tensor(b->g, op->in[1]);
	uint32_t one = p->pk * p->pm * p->pn;
	int32_t base = 0;
	int r = IPU_OK;
	for (uint32_t bi = 0; bi < batches && !r; bi++) {
		uint32_t j = bi % o->group;
		if (j == 0)
			base = b->l->nstep;
		GemmOperands go = {
		    .a = pa,
		    .b = pb,
		    .c = pc,
		    .site = {.tile_base = o->tile0 + j * one,
		             .ta = ta,
		             .tb = op->attr.transpose_b,
		             .batch = bi,
		             .spread_b = o->spread_b,
		             .b_times = b->loop_slot[op->in[1]] >= 0
		                            ? b->l->loop_count
		                            : 1,
		             .b_rows_from = o->b_rows_from,
		             .owners = owners},
		    .step_base = j ? base : -1,
		    .dtype_b = bt->elem.dtype,
		    .fp8_scale = dtype_is_f8(a->elem.dtype)
		                     ? a->elem.scale + bt->elem.scale
		                     : 0};
		r = lower_gemm(b->l, p, &go, d);
	}
	return r;
}

/* A transposed operand A that has a home is transposed on the device
 * (transpose.c) into a default layout of its own, [M x K] per batch,
 * which the GEMM then reads as an untransposed A. */
static int
untranspose_a(Build *b, const OpPlan *o, const Tensor *a, uint32_t batches,
              uint32_t m, uint32_t k, TensorPlace **a_home, Diag *d)
{
	Shape perm = {.rank = a->shape.rank};
	for (int i = 0; i < perm.rank; i++)
		perm.dim[i] = i;
	perm.dim[perm.rank - 2] = perm.rank - 1;
	perm.dim[perm.rank - 1] = perm.rank - 2;
	int32_t at = b->l->nstep;
	TensorPlace *to = default_place(b, a->id, batches * m, k, a->elem.dtype,
	                                at, o->a_tile0);
	int r = lower_transpose_last(b->l, *a_home, &a->shape, &perm, to, d);
	use_place(b, *a_home, at);
	*a_home = to;
	return r;
}

/* Fill pb, input ib of the op planned o (its Conv cb, not CONV_NONE), at
 * step `at`: the host writes it, or an exchange (in step s, or a new one
 * named `what`) copies it from its home or the loop's bank. */
static int
fill_operand(Build *b, const OpPlan *o, const Conv *cb, int32_t ib,
             TensorPlace *pb, const char *what, int32_t at, Step *s, Diag *d)
{
	TileLog owners = replay(o);
	if (cb->kind == CONV_HOST) {
		/* the host writes it there (a broadcast row once next to
		 * every block) */
		b->home[ib] = pb;
		return IPU_OK;
	}
	if (cb->kind == CONV_LOOP_COPIES)
		return loop_copies(b, o, &owners, ib, pb, &s, at, d);
	if (cb->kind == CONV_HOST_COPY) {
		/* placed by an earlier op: the host writes this copy too,
		 * instead of an exchange each run */
		GROW(b->copies, b->ncopies, b->capcopies);
		b->copies[b->ncopies++] = pb;
		return IPU_OK;
	}
	TensorPlace *from = b->home[ib];
	if (!s)
		s = lower_step(b->l, STEP_EXCHANGE, what);
	use_place(b, from, at);
	return lower_relayout(s, from, pb, NULL, d);
}

/* The bias add that reads the matmul's C (plan_matmul_bias_add), in its
 * reduction (the last two steps): the bias row's copies move with the
 * partials, the vadd calls add them (lower_gemm_bias). */
static int
bias_in_reduction(Build *b, const Op *op, TensorPlace *pc, Diag *d)
{
	int32_t add = plan_matmul_bias_add(b->g, op);
	if (add < 0 || !plan_bias_in_reduction(b->plan, &b->g->ops[add]))
		return IPU_OK;
	const Op *ad = &b->g->ops[add];
	const OpPlan *ao = &b->plan->op[add];
	int k = ad->in[0] == op->out;
	int32_t ib = ad->in[k], xs = b->l->nstep - 2, cs = b->l->nstep - 1;
	TensorPlace *pbias = mirror(b, pc, ib, DT_F16, 1, xs, "operand block");
	int r = fill_operand(b, ao, &ao->in[k], ib, pbias, "broadcast", xs,
	                     &b->l->step[xs], d);
	if (!r)
		r = lower_gemm_bias(b->l, cs, pc, pbias, d);
	if (r)
		return plan_op_error(b->g, ad, r, d);
	use_place(b, pbias, cs);
	/* the GELU after it and its cast to f8 (plan_reduction_gelu): the
	 * last pass writes the cast's result, the GELU's home as its own
	 * step would have made it (C's pieces in f8) */
	int32_t gl = plan_reduction_gelu(b->plan, ad);
	if (gl >= 0) {
		const Op *go = &b->g->ops[gl];
		const Tensor *q = graph_tensor(
		    b->g, b->g->ops[plan_gelu_fused_cast(b->g, go)].out);
		TensorPlace *pq = mirror(b, pc, go->out, q->elem.dtype, 0, cs,
		                         "tensor block");
		r = lower_gemm_gelu(b->l, cs, pc, pq, q->elem.scale,
		                    q->elem.dtype == DT_F8_F152, d);
		if (r)
			return plan_op_error(b->g, go, r, d);
		use_place(b, pq, cs);
		b->home[go->out] = pq;
		return IPU_OK;
	}
	/* the residual add after it (plan_residual_in_reduction): h's
	 * copies laid out as C move in the same exchange, the last pass
	 * adds them after the bias */
	int32_t ra = plan_bias_add_residual(b->g, op, ad);
	if (ra < 0 || !plan_residual_in_reduction(b->plan, &b->g->ops[ra]))
		return IPU_OK;
	const Op *rd = &b->g->ops[ra];
	const OpPlan *ro = &b->plan->op[ra];
	int kh = rd->in[0] == ad->out;
	int32_t ih = rd->in[kh];
	TensorPlace *ph;
	if (ro->in[kh].kind == CONV_NONE) {
		ph = b->home[ih];
	} else {
		ph = mirror(b, pc, ih, DT_F16, 0, xs, "operand block");
		r = fill_operand(b, ro, &ro->in[kh], ih, ph, "operand", xs,
		                 &b->l->step[xs], d);
	}
	if (!r)
		r = lower_gemm_residual(b->l, cs, pc, ph, d);
	if (r)
		return plan_op_error(b->g, rd, r, d);
	use_place(b, ph, cs);
	return IPU_OK;
}

/* 1 if some block of op's B holds its column of ones (keep_zeroed). */
static int
has_ones(const Build *b, const Op *op)
{
	for (int i = 0; i < b->nzeroed; i++)
		if (b->zeroed[i].pv == op - b->g->ops && b->zeroed[i].ones)
			return 1;
	return 0;
}

/* The cast to f8 that reads the matmul's C (plan_reduction_cast), in its
 * reduction's last pass (the last step, vadd_norm_f16_f8): its home C's
 * pieces in f8, as its own step would have made it. */
static int
cast_in_reduction(Build *b, const Op *op, TensorPlace *pc, Diag *d)
{
	int32_t ci = plan_reduction_cast(b->plan, op);
	if (ci < 0)
		return IPU_OK;
	const Op *co = &b->g->ops[ci];
	const Tensor *q = graph_tensor(b->g, co->out);
	int32_t cs = b->l->nstep - 1;
	TensorPlace *pq =
	    mirror(b, pc, co->out, q->elem.dtype, 0, cs, "tensor block");
	int r = lower_gemm_norm_cast(b->l, cs, pc, pq, q->elem.scale,
	                             q->elem.dtype == DT_F8_F152, d);
	if (r)
		return plan_op_error(b->g, co, r, d);
	use_place(b, pq, cs);
	b->home[co->out] = pq;
	return IPU_OK;
}

static int
lower_matmul_op(Build *b, const Op *op, const OpPlan *o, Diag *d)
{
	const Tensor *a = graph_tensor(b->g, op->in[0]),
	             *tb = graph_tensor(b->g, op->in[1]),
	             *tc = graph_tensor(b->g, op->out);
	int ta = op->attr.transpose_a;
	uint32_t m = (uint32_t)a->shape.dim[a->shape.rank - (ta ? 1 : 2)],
	         k = (uint32_t)a->shape.dim[a->shape.rank - (ta ? 2 : 1)],
	         batches = (uint32_t)shape_batches(&a->shape);
	/* both operands: the host writes it once, both are moved from there */
	if (op->in[0] == op->in[1])
		home_of(b, op->in[0], o->in_tile0);
	MapChain av, bv;
	FlatMap amap, bmap;
	TensorPlace *a_home = b->home[plan_view_of(b->g, op->in[0], &av)],
	            *b_home = b->home[plan_view_of(b->g, op->in[1], &bv)];
	int r = IPU_OK;
	if (o->in[0].kind == CONV_TRANSPOSE) {
		r = untranspose_a(b, o, a, batches, m, k, &a_home, d);
		ta = 0;
	}
	if (r)
		return r;
	DType dt = a->elem.dtype;
	TensorPlace *pa = ta ? new_place(b, op->in[0], tensor_view_rows(a),
	                                 tensor_view_cols(a), dt)
	                     : new_place(b, op->in[0], batches * m, k, dt),
	            *pb = new_place(b, op->in[1], tensor_view_rows(tb),
	                            tensor_view_cols(tb), tb->elem.dtype),
	            *pc = new_place(b, op->out, tensor_view_rows(tc),
	                            tensor_view_cols(tc),
	                            dt == DT_F32 ? DT_F32 : DT_F16);
	int32_t first = b->l->nstep;
	TileLog owners = replay(o);
	r = lower_batches(b, op, o, batches, ta, &owners, pa, pb, pc, d);
	int moved = 0;
	const FlatMap *bm = layout_chain_map(&bv, &bmap);
	/* V's column of ones: in its blocks, or written by its pack */
	if (!r && o->gemm.norm_cols && bt_packed(b_home, bm, pb) &&
	    !has_ones(b, op))
		r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
		             "internal: %s's reduction divides by column %u, "
		             "but its B was not laid out with a column of "
		             "ones there (plan and lowering disagree)",
		             tc->name, o->gemm.norm_cols);
	if (!r)
		r = bring(b, op->in[1], &o->in[1], b_home, bm, pb, first,
		          "matmul: B", o->gemm.norm_cols, &moved, d);
	/* after B's steps: the reads bring records stay where they are */
	if (!r)
		r = bring(b, op->in[0], &o->in[0], a_home,
		          layout_chain_map(&av, &amap), pa, first + moved,
		          "matmul: A from its producer", 0, &moved, d);
	if (r)
		return r;
	if (a_home)
		pad_zero(b, pa);
	r = bias_in_reduction(b, op, pc, d);
	if (!r)
		r = cast_in_reduction(b, op, pc, d);
	if (r)
		return r;
	int32_t last = b->l->nstep - 1;
	use_place(b, pa, last);
	use_place(b, pb, last);
	use_place(b, pc, last);
	b->home[op->out] = pc;
	return IPU_OK;
}

/* ---- layout ops -------------------------------------------------------- */

/* The output of a reshape, transpose or slice: the same elements moved
 * by `map` into a new default layout, in one exchange step; from the
 * tensor its input views, if it is a view (with the view's maps and its
 * own). */
static int
move_op(Build *b, const Op *op, const OpPlan *o, const FlatMap *map,
        const char *what, Diag *d)
{
	const Tensor *t = graph_tensor(b->g, op->out);
	MapChain c;
	FlatMap cm;
	int32_t base = plan_move_of(b->g, op, &c);
	TensorPlace *from =
	    c.unit ? b->home[base] : home_of(b, op->in[0], o->in_tile0);
	if (c.unit)
		map = layout_chain_map(&c, &cm);
	int32_t at = b->l->nstep;
	Step *s = lower_step(b->l, STEP_EXCHANGE, what);
	uint32_t bounds[PLAN_SEGMENTS_MAX + 1], next = o->tile0;
	int nseg = plan_row_segments(b->g, op->out, bounds);
	TensorPlace *to;
	if (nseg) { /* read by slices of its rows (plan_row_segments) */
		uint32_t bt[PLAN_SEGMENTS_MAX], vb[PLAN_SEGMENTS_MAX];
		int32_t vm[PLAN_SEGMENTS_MAX];
		for (int k = 0; k < nseg; k++) {
			bt[k] = plan_segment_bt_rows(b->g, op->out, bounds, k);
			vb[k] = plan_segment_vb_rows(b->g, op->out, bounds, k,
			                             &vm[k]);
		}
		Buffers bs = buffers_from(b, at);
		to = adopt(b, layout_segments(
		                  &bs.st, b->tiles, op->out,
		                  tensor_view_rows(t), tensor_view_cols(t),
		                  t->elem.dtype, bounds, nseg, &next, bt, vb));
		uint32_t ones[PLAN_SEGMENTS_MAX];
		for (int k = 0; k < nseg; k++)
			ones[k] = vb[k] && vm[k] >= 0
			              ? b->plan->op[vm[k]].gemm.norm_cols
			              : 0;
		keep_zeroed(b, to, bounds, nseg, ones, vm);
	} else {
		to = default_place(b, op->out, tensor_view_rows(t),
		                   tensor_view_cols(t), t->elem.dtype, at,
		                   o->tile0);
	}
	int r = lower_relayout(s, from, to, map, d);
	if (r)
		return r;
	use_place(b, from, at);
	use_place(b, to, at);
	b->home[op->out] = to;
	return IPU_OK;
}

/* op's output in the pieces of `from`. */
static int
alias_pieces(Build *b, const Op *op, const TensorPlace *from)
{
	const Tensor *out = graph_tensor(b->g, op->out);
	TensorPlace *to = new_place(b, op->out, tensor_view_rows(out),
	                            tensor_view_cols(out), out->elem.dtype);
	for (int k = 0; k < from->npiece; k++)
		*layout_piece(to) = from->piece[k];
	b->home[op->out] = to;
	return IPU_OK;
}

/* An op that changes nothing in memory (plan_op_aliases): the output is
 * the input's pieces. */
static int
alias_op(Build *b, const Op *op, const OpPlan *o)
{
	return alias_pieces(b, op, home_of(b, op->in[0], o->in_tile0));
}

static int
lower_reshape_op(Build *b, const Op *op, const OpPlan *o, Diag *d)
{
	if (plan_op_is_view(b->g, op)) /* its reader reads the viewed tensor */
		return IPU_OK;
	if (plan_op_aliases(b->g, op))
		return alias_op(b, op, o);
	return move_op(b, op, o, NULL, "reshape", d);
}

static int
lower_transpose_op(Build *b, const Op *op, const OpPlan *o, Diag *d)
{
	const Tensor *in = graph_tensor(b->g, op->in[0]),
	             *out = graph_tensor(b->g, op->out);
	const Shape *perm = &op->attr.perm;
	if (plan_op_is_view(b->g, op))
		return IPU_OK;
	if (o->in[0].kind != CONV_TRANSPOSE) {
		RowPerm p;
		FlatMap map = layout_row_perm(&p, &in->shape, perm);
		return move_op(b, op, o, &map, "transpose", d);
	}
	/* the last axis moves: rows, 2-D transposes, rows (transpose.c) */
	TensorPlace *from = home_of(b, op->in[0], o->in_tile0);
	int32_t at = b->l->nstep;
	TensorPlace *to =
	    default_place(b, op->out, tensor_view_rows(out),
	                  tensor_view_cols(out), out->elem.dtype, at, o->tile0);
	int r = lower_transpose_last(b->l, from, &in->shape, perm, to, d);
	if (r)
		return plan_op_error(b->g, op, r, d);
	use_place(b, from, at);
	use_place(b, to, b->l->nstep - 1);
	b->home[op->out] = to;
	return IPU_OK;
}

/* A slice is an exchange that moves only the rows inside it, and of each
 * row the columns inside it. */
static int
lower_slice_op(Build *b, const Op *op, const OpPlan *o, Diag *d)
{
	const Tensor *in = graph_tensor(b->g, op->in[0]);
	uint32_t r0, r1;
	if (plan_slice_segment(b->g, op, &r0, &r1)) { /* its segment's pieces */
		TensorPlace *to;
		int r = plan_slice_alias(
		    b->g, op, home_of(b, op->in[0], o->in_tile0), &to, d);
		if (!r)
			b->home[op->out] = adopt(b, to);
		return r;
	}
	if (plan_op_is_view(b->g, op))
		return IPU_OK;
	RowSlice s;
	FlatMap map =
	    layout_row_slice(&s, &in->shape, &op->attr.begin, &op->attr.end);
	return move_op(b, op, o, &map, "slice", d);
}

/* A concat along an axis before the last: one exchange step moves the
 * rows of both inputs into the output's place (the plan refuses others). */
static int
lower_concat_op(Build *b, const Op *op, const OpPlan *o, Diag *d)
{
	const Tensor *x = graph_tensor(b->g, op->in[0]),
	             *y = graph_tensor(b->g, op->in[1]),
	             *t = graph_tensor(b->g, op->out);
	TensorPlace *from[2] = {home_of(b, op->in[0], o->in_tile0),
	                        home_of(b, op->in[1], o->a_tile0)};
	int32_t at = b->l->nstep;
	Step *s = lower_step(b->l, STEP_EXCHANGE, "concat");
	TensorPlace *to =
	    default_place(b, op->out, tensor_view_rows(t), tensor_view_cols(t),
	                  t->elem.dtype, at, o->tile0);
	for (int k = 0; k < 2; k++) {
		RowConcat c;
		FlatMap map = layout_row_concat(&c, &x->shape, &y->shape,
		                                op->attr.axis, k);
		int r = lower_relayout(s, from[k], to, &map, d);
		if (r)
			return r;
		use_place(b, from[k], at);
	}
	use_place(b, to, at);
	b->home[op->out] = to;
	return IPU_OK;
}

/* ---- elementwise ------------------------------------------------------- */

/* One elementwise step out = ew(pa[, pb]) (lower_elementwise), its
 * places used by it and out the home of tensor id; an error names op. */
static int
ew_step(Build *b, const Op *op, EwOp ew, TensorPlace *pa, TensorPlace *pb,
        TensorPlace *out, int32_t id, int scale, const char *what, Diag *d)
{
	int r = lower_elementwise(b->l, ew, pa, pb, out, scale, what, d);
	if (r)
		return plan_op_error(b->g, op, r, d);
	int32_t last = b->l->nstep - 1;
	use_place(b, pa, last);
	if (pb)
		use_place(b, pb, last);
	use_place(b, out, last);
	b->home[id] = out;
	return IPU_OK;
}

/* out = op(x) on x's pieces: cast, gelu, relu. */
static int
lower_unary_op(Build *b, const Op *op, const OpPlan *o, Diag *d)
{
	const Tensor *x = graph_tensor(b->g, op->in[0]),
	             *t = graph_tensor(b->g, op->out);
	EwOp ew = plan_unary_kernel(b->g, op);
	if (plan_op_aliases(b->g, op))
		return alias_op(b, op, o); /* a cast to its own type */
	if (plan_gelu_in_reduction(b->plan, op) ||
	    plan_gelu_after_bias(b->plan, op) ||
	    plan_cast_in_reduction(b->plan, op))
		return IPU_OK; /* written by its matmul's reduction or bias */
	/* a GELU that writes its cast's f8 result (plan_gelu_fused_cast) */
	int32_t fc = op->kind == OP_GELU ? plan_gelu_fused_cast(b->g, op) : -1;
	if (fc >= 0)
		t = graph_tensor(b->g, b->g->ops[fc].out);
	TensorPlace *from = home_of(b, op->in[0], o->in_tile0);
	int32_t at = b->l->nstep;
	TensorPlace *to =
	    mirror(b, from, op->out, t->elem.dtype, 0, at, "tensor block");
	int scale = dtype_is_f8(t->elem.dtype)   ? t->elem.scale
	            : dtype_is_f8(x->elem.dtype) ? x->elem.scale
	                                         : 0;
	return ew_step(b, op, ew, from, NULL, to, op->out, scale,
	               op_desc(op->kind)->name, d);
}

/* Bias add `add` of C's pieces pc, the bias rows in pbias, and its GELU
 * gl with the cast to f8 in one pass (plan_bias_gelu): the GELU's home
 * C's pieces in f8, as its own step would have made it; add aliases C. */
static int
bias_gelu(Build *b, const Op *add, int32_t gl, TensorPlace *pc,
          TensorPlace *pbias, Diag *d)
{
	const Op *go = &b->g->ops[gl];
	const Tensor *q =
	    graph_tensor(b->g, b->g->ops[plan_gelu_fused_cast(b->g, go)].out);
	TensorPlace *pq = mirror(b, pc, go->out, q->elem.dtype, 0, b->l->nstep,
	                         "tensor block");
	int r = ew_step(b, go, EW_BIAS_GELU_H, pc, pbias, pq, go->out,
	                q->elem.scale, "bias, gelu", d);
	return r ? r : alias_pieces(b, add, pc);
}

/* out = a op b on a's pieces (add, mul, max): b next to them, or one row of it
 * next to each (a bias), as the plan's Conv says. */
static int
lower_binary_op(Build *b, const Op *op, const OpPlan *o, Diag *d)
{
	int swap = !shape_equal(&graph_tensor(b->g, op->in[0])->shape,
	                        &graph_tensor(b->g, op->out)->shape);
	int32_t ia = op->in[swap], ib = op->in[!swap];
	const Tensor *t = graph_tensor(b->g, op->out);
	int bcast = !shape_equal(&graph_tensor(b->g, ib)->shape, &t->shape);
	DType dt = t->elem.dtype;
	EwOp ew = op->kind == OP_ADD   ? EW_ADD
	          : op->kind == OP_MUL ? EW_MUL
	                               : EW_MAX;
	int res = plan_residual_in_reduction(b->plan, op);
	if (res) { /* on C's pieces, as the planner's */
		ia = plan_residual_c_input(b->plan, op);
		ib = op->in[0] == ia ? op->in[1] : op->in[0];
	}
	TensorPlace *pa = home_of(b, ia, o->in_tile0), *pb;
	if (res || plan_bias_in_reduction(b->plan, op))
		return alias_pieces(b, op, pa); /* added in C's reduction */
	int32_t at = b->l->nstep;
	const Conv *cb = &o->in[!swap];
	int r = IPU_OK;
	if (cb->kind == CONV_NONE) {
		pb = b->home[ib];
	} else {
		pb = mirror(b, pa, ib, dt, bcast, at, "operand block");
		r = fill_operand(b, o, cb, ib, pb,
		                 bcast ? "broadcast" : "operand", at, NULL, d);
		if (r)
			return plan_op_error(b->g, op, r, d);
	}
	int32_t gl = plan_bias_gelu(b->plan, op);
	if (gl >= 0)
		return bias_gelu(b, op, gl, pa, pb, d);
	TensorPlace *out =
	    mirror(b, pa, op->out, dt, 0, b->l->nstep, "tensor block");
	return ew_step(b, op, ew, pa, pb, out, op->out, 0,
	               op_desc(op->kind)->name, d);
}

/* ---- row-wise ---------------------------------------------------------- */

/* 1 if the softmax's fused cast `cast` is the A of a matmul whose
 * reduction divides its rows (GemmPlan.norm_cols): the softmax writes
 * its e unnormalised (rw_softmax_f16h8u). */
static int
pv_divides(const Build *b, int32_t cast)
{
	int32_t pv = plan_one_reader(b->g, b->g->ops[cast].out);
	return pv >= 0 && b->g->ops[pv].kind == OP_MATMUL &&
	       b->plan->op[pv].gemm.norm_cols > 0;
}

/* layernorm, norm, softmax (rowwise.c): x in pieces of whole rows, moved
 * there or written there by the host as the plan says; a layernorm's
 * gamma and beta one row next to each piece, in the same exchange step
 * (a norm has none). */
static int
lower_rowwise_op(Build *b, const Op *op, const OpPlan *o, Diag *d)
{
	const Tensor *x = graph_tensor(b->g, op->in[0]);
	DType dt = x->elem.dtype;
	int32_t at = b->l->nstep;
	Step *s = NULL;
	int r = IPU_OK;
	TensorPlace *px = b->home[x->id];
	RwOp rw = op->kind == OP_SOFTMAX ? RW_SOFTMAX : RW_LAYERNORM;
	if (o->in[0].kind != CONV_NONE) {
		Buffers bs = buffers_from(b, at);
		TensorPlace *rows =
		    adopt(b, layout_rowwise_in(
		                 &bs.st, b->tiles, x->id, tensor_view_rows(x),
		                 tensor_view_cols(x), dt, o->tile0, rw));
		if (o->in[0].kind == CONV_MOVE) {
			s = lower_step(b->l, STEP_EXCHANGE, "rows");
			r = lower_relayout(s, px, rows, &layout_into_rows, d);
			use_place(b, px, at);
		} else {
			b->home[x->id] = rows;
		}
		px = rows;
	}
	TensorPlace *pv[2] = {NULL, NULL};
	TileLog owners = replay(o);
	for (int i = 0; i < 2 && !r && op->kind == OP_LAYERNORM; i++) {
		int32_t id = op->in[1 + i];
		pv[i] = mirror(b, px, id, dt, 1, at, "operand row");
		if (o->in[1 + i].kind == CONV_HOST) {
			b->home[id] = pv[i]; /* the host writes each copy */
			continue;
		}
		if (o->in[1 + i].kind == CONV_LOOP_COPIES) {
			r = loop_copies(b, o, &owners, id, pv[i], &s, at, d);
			continue;
		}
		TensorPlace *from = b->home[id];
		if (!s)
			s = lower_step(b->l, STEP_EXCHANGE, "broadcast");
		r = lower_relayout(s, from, pv[i], NULL, d);
		use_place(b, from, at);
	}
	if (r)
		return plan_op_error(b->g, op, r, d);
	/* a softmax or layernorm that writes its cast's f8 result
	 * (plan_softmax_fused_cast, plan_layernorm_fused_cast) */
	int32_t fc = op->kind == OP_SOFTMAX
	                 ? plan_softmax_fused_cast(b->g, op)
	                 : plan_layernorm_fused_cast(b->g, op);
	if (op->kind == OP_NORM && fc < 0) /* the planner refused it */
		return plan_op_error(b->g, op,
		                     diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                              "a norm without its cast to f8"),
		                     d);
	const ElemType *to =
	    fc >= 0 ? &graph_tensor(b->g, b->g->ops[fc].out)->elem : &x->elem;
	Buffers bs = buffers_from(b, b->l->nstep);
	TensorPlace *out =
	    adopt(b, layout_rowwise_out(&bs.st, px, op->out, rw, to->dtype));
	r = lower_rowwise(b->l, rw, px, pv[0], pv[1], out, op->attr.eps,
	                  op->attr.scale, plan_softmax_in_f16(b->g, op),
	                  to->scale, fc >= 0 && pv_divides(b, fc),
	                  op_desc(op->kind)->name, d);
	if (r)
		return plan_op_error(b->g, op, r, d);
	int32_t last = b->l->nstep - 1;
	use_place(b, px, last);
	for (int i = 0; i < 2 && pv[i]; i++)
		use_place(b, pv[i], last);
	use_place(b, out, last);
	b->home[op->out] = out;
	return IPU_OK;
}

/* ---- gather ------------------------------------------------------------ */

/* A gather (plan_gather_op): table and ids brought into layout_gather's
 * places as the plan says, then one kernels/gather.S call a column block,
 * all in one compute step. */
static int
lower_gather_op(Build *b, const Op *op, const OpPlan *o, Diag *d)
{
	const Tensor *tab = graph_tensor(b->g, op->in[0]),
	             *ids = graph_tensor(b->g, op->in[1]);
	DType dt = tab->elem.dtype;
	Buffers bs = buffers_from(b, b->l->nstep);
	TensorPlace *pl[3];
	int32_t id[3] = {op->in[0], op->in[1], op->out};
	layout_gather(&bs.st, b->tiles, o->tile0, id,
	              (uint32_t)tab->shape.dim[0], (uint32_t)tab->shape.dim[1],
	              (uint32_t)ids->shape.dim[0], dt, pl);
	for (int i = 0; i < 3; i++)
		adopt(b, pl[i]);
	int r = IPU_OK;
	for (int i = 0; i < 2 && !r; i++) {
		int inserted;
		r = bring(b, id[i], &o->in[i], b->home[id[i]], NULL, pl[i],
		          b->l->nstep, "gather input", 0, &inserted, d);
	}
	if (r)
		return plan_op_error(b->g, op, r, d);
	Step *s = lower_step(b->l, STEP_COMPUTE, "gather");
	for (int k = 0; k < pl[2]->npiece; k++) {
		const Piece *po = &pl[2]->piece[k];
		KernelCall *c = lower_call(b->l, s, po->tile, "gather",
		                           "gather", GATHER_ARGS_BYTES);
		/* each ldst64pace loads the table and stores dst */
		b->l->buf[pl[0]->piece[k].at.buf].apart = po->at.buf;
		c->ref[0] = pl[0]->piece[k].at;
		c->ref[1] = pl[1]->piece[k].at;
		c->ref[2] = po->at;
		c->nref = 3;
		c->args = (KernelArgs){
		    KC_GATHER,
		    .u.gather = {.rows = po->rows,
		                 .base = (uint32_t)op->attr.base,
		                 .vrows = (uint32_t)tab->shape.dim[0],
		                 .atoms = po->pad_cols *
		                          (uint32_t)dtype_size(dt) / 8}};
		c->cycles = gather_cycles(b->l->chip, &c->args.u.gather);
		if (c->cycles > s->cycles)
			s->cycles = c->cycles;
	}
	for (int i = 0; i < 3; i++)
		use_place(b, pl[i], b->l->nstep - 1);
	b->home[op->out] = pl[2];
	return IPU_OK;
}

/* ---- the graph --------------------------------------------------------- */

typedef int (*LowerOp)(Build *b, const Op *op, const OpPlan *o, Diag *d);

static const LowerOp lower_op[OP_COUNT] = {
    [OP_MATMUL] = lower_matmul_op,     [OP_ADD] = lower_binary_op,
    [OP_MUL] = lower_binary_op,        [OP_MAX] = lower_binary_op,
    [OP_CAST] = lower_unary_op,        [OP_GELU] = lower_unary_op,
    [OP_RESHAPE] = lower_reshape_op,   [OP_TRANSPOSE] = lower_transpose_op,
    [OP_LAYERNORM] = lower_rowwise_op, [OP_SOFTMAX] = lower_rowwise_op,
    [OP_NORM] = lower_rowwise_op,      [OP_SLICE] = lower_slice_op,
    [OP_CONCAT] = lower_concat_op,     [OP_RELU] = lower_unary_op,
    [OP_GATHER] = lower_gather_op,
};

/* Cut each tensor buffer's lifetime back to its last reader; weights and
 * outputs stay to the end, inputs and weights live from the start (the
 * host writes them before the run). A buffer may hold
 * several tensors (a reshape's output is its input's pieces). */
enum { KEEP_PINNED = 1, KEEP_FROM_START = 2 };

/* The next piece of z->tp in z->buf from index *k on, or NULL. */
static const Piece *
next_piece(const Zeroed *z, int *k)
{
	while (*k < z->tp->npiece && z->tp->piece[*k].at.buf != z->buf)
		++*k;
	return *k < z->tp->npiece ? &z->tp->piece[(*k)++] : NULL;
}

/* Same buffer shape and the same pieces at the same offsets: the data,
 * and so the padding, in the same bytes. And the same `apart` partner:
 * a GEMM that reads A in place keeps it apart from its own C block. */
static int
zeroed_alike(const Lowered *l, const Zeroed *a, const Zeroed *b)
{
	const Buffer *x = &l->buf[a->buf], *y = &l->buf[b->buf];
	if (x->tile != y->tile || x->bytes != y->bytes || a->ones != b->ones ||
	    x->align != y->align || x->region != y->region ||
	    x->apart != y->apart || a->tp->dtype != b->tp->dtype)
		return 0;
	int i = 0, j = 0;
	for (;;) {
		const Piece *p = next_piece(a, &i), *q = next_piece(b, &j);
		if (!p || !q)
			return !p && !q;
		if (p->at.offset != q->at.offset || p->rows != q->rows ||
		    p->cols != q->cols || p->pad_rows != q->pad_rows ||
		    p->pad_cols != q->pad_cols || p->format != q->format)
			return 0;
	}
}

/* pad_zero's buffers kept for the whole program; one whose lifetime
 * starts after an earlier one's ends, with the same pieces, takes that
 * one's place (every layer repeats its GEMMs) and is left empty. */
static void
share_zeroed(Build *b)
{
	Lowered *l = b->l;
	int32_t *to = xmalloc((size_t)l->nbuf * sizeof *to);
	BufRef *move = xmalloc((size_t)l->nbuf * sizeof *move);
	int32_t *end = xmalloc(((size_t)b->nzeroed + 1) * sizeof *end);
	for (int i = 0; i < l->nbuf; i++)
		to[i] = -1;
	for (int i = 0; i < b->nzeroed; i++) {
		const Zeroed *z = &b->zeroed[i];
		Buffer *bz = &l->buf[z->buf];
		end[i] = -1; /* not a kept buffer */
		if (to[z->buf] >= 0)
			continue; /* listed twice */
		to[z->buf] = z->buf;
		for (int j = 0; j < i && to[z->buf] == z->buf; j++)
			if (end[j] >= 0 && end[j] < bz->first &&
			    zeroed_alike(l, &b->zeroed[j], z)) {
				to[z->buf] = b->zeroed[j].buf;
				end[j] = bz->last;
				bz->bytes = 0;
			}
		if (to[z->buf] == z->buf)
			end[i] = bz->last;
	}
	for (int i = 0; i < b->nzeroed; i++)
		if (end[i] >= 0) {
			l->buf[b->zeroed[i].buf].first = 0;
			l->buf[b->zeroed[i].buf].last = INT32_MAX;
			if (b->zeroed[i].ones)
				init_ones(l, &b->zeroed[i]);
		}
	for (int i = 0; i < l->nbuf; i++) /* only the merged ones move */
		move[i] = (BufRef){to[i] == i ? -1 : to[i], 0};
	lower_remap(l, move, b->made, b->nmade);
	free(move);
	free(to);
	free(end);
}

static void
trim_lifetimes(Build *b)
{
	size_used(b);
	uint8_t *keep = xcalloc((size_t)b->l->nbuf, 1);
	/* a loop weight's copy that an exchange fills each iteration lives
	 * from that exchange to its reader, not as its weight; one with
	 * padding stays, so that its padding keeps the loaded zeros */
	uint8_t *refilled = xcalloc((size_t)b->l->nbuf, 1);
	for (int i = 0; i < b->nrefill; i++) {
		const TensorPlace *tp = b->refill[i];
		int padded = 0;
		for (int k = 0; k < tp->npiece; k++)
			padded |= tp->piece[k].cols < tp->piece[k].pad_cols;
		for (int k = 0; !padded && k < tp->npiece; k++)
			refilled[tp->piece[k].at.buf] = 1;
	}
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < b->nmade; i++) {
			const TensorPlace *tp = b->made[i];
			const Tensor *t = graph_tensor(b->g, tp->tensor);
			for (int k = 0; t && k < tp->npiece; k++) {
				int32_t id = tp->piece[k].at.buf;
				Buffer *buf = &b->l->buf[id];
				if (pass == 0 && refilled[id])
					continue;
				if (pass == 0) {
					keep[id] |=
					    t->role == ROLE_WEIGHT ||
					            t->role == ROLE_OUTPUT
					        ? KEEP_PINNED
					        : 0;
					keep[id] |=
					    t->role == ROLE_INPUT ||
					            t->role == ROLE_WEIGHT
					        ? KEEP_FROM_START
					        : 0;
					continue;
				}
				if (keep[id] & KEEP_FROM_START)
					buf->first = 0;
				buf->last = keep[id] & KEEP_PINNED ? INT32_MAX
				            : b->used[id] > buf->first
				                ? b->used[id]
				                : buf->first;
			}
		}
	free(keep);
	free(refilled);
	share_zeroed(b);
}

/* ---- the loop (loop.c) ------------------------------------------------ */

/* A loop over groups keeps each group's carry in a bank beside the
 * carry's place: a buffer of G slots of each of the place's buffers
 * (rounded to 8 bytes, which the copies move), b->slot[k] the place's
 * pieces in slot k; b->ncopy steps copy them, the place's buffers of a
 * tile one a step. The bank is loaded and stored in one bundle with the
 * place (wcopy, wcopy_out): kept apart from it. */
static void
carry_bank(Build *b, const TensorPlace *carry, const RepeatMap *rm, int32_t at)
{
	Lowered *l = b->l;
	uint32_t G = (uint32_t)rm->groups;
	b->bank_of = xmalloc((size_t)l->nbuf * sizeof *b->bank_of);
	for (int32_t i = 0; i < l->nbuf; i++)
		b->bank_of[i] = -1;
	uint32_t *on_tile = xcalloc(l->tiles, sizeof *on_tile);
	b->ncopy = 0;
	for (int k = 0; k < carry->npiece; k++) {
		int32_t cb = carry->piece[k].at.buf;
		if (b->bank_of[cb] >= 0)
			continue;
		/* by value: lower_buffer may move l->buf */
		uint32_t tile = l->buf[cb].tile,
		         bytes = (uint32_t)align_up(l->buf[cb].bytes, 8);
		l->buf[cb].bytes = bytes;
		b->bank_of[cb] = lower_buffer(l, tile, bytes * G, 8, REGION_ANY,
		                              at, INT32_MAX, "loop carry bank");
		l->buf[b->bank_of[cb]].apart = cb;
		if ((int)++on_tile[tile] > b->ncopy)
			b->ncopy = (int)on_tile[tile];
	}
	free(on_tile);
	b->slot = xmalloc(G * sizeof *b->slot);
	for (uint32_t g = 0; g < G; g++) {
		b->slot[g] = new_place(b, rm->group_out[g], carry->rows,
		                       carry->cols, carry->dtype);
		for (int k = 0; k < carry->npiece; k++) {
			Piece p = carry->piece[k];
			p.at =
			    (BufRef){b->bank_of[p.at.buf],
			             g * l->buf[p.at.buf].bytes + p.at.offset};
			*layout_piece(b->slot[g]) = p;
		}
	}
}

/* b->ncopy compute steps: each of the carry's place's buffers copied
 * from its bank's next slot (`out` 0, wcopy) or into it (wcopy_out), the
 * j-th buffer of a tile in the j-th step. */
static void
carry_copies(Build *b, const TensorPlace *carry, uint32_t groups, int out)
{
	Lowered *l = b->l;
	int32_t first = l->nstep;
	for (int j = 0; j < b->ncopy; j++)
		lower_step(l, STEP_COMPUTE,
		           out ? "loop: carry into its bank"
		               : "loop: carry from its bank");
	uint8_t *done = xcalloc((size_t)l->nbuf, 1);
	uint32_t *on_tile = xcalloc(l->tiles, sizeof *on_tile);
	for (int k = 0; k < carry->npiece; k++) {
		int32_t cb = carry->piece[k].at.buf;
		if (done[cb])
			continue;
		done[cb] = 1;
		/* by value: lower_call adds the argument block's buffer, which
		 * may move l->buf */
		uint32_t tile = l->buf[cb].tile, bytes = l->buf[cb].bytes;
		Step *s = &l->step[first + (int32_t)on_tile[tile]++];
		KernelCall *kc = out ? lower_call(l, s, tile, "wcopy_out",
		                                  "wcopyg", WCOPYG_ARGS_BYTES)
		                     : lower_call(l, s, tile, "wcopy", "wcopy",
		                                  WCOPY_ARGS_BYTES);
		kc->ref[0] = (BufRef){b->bank_of[cb], 0};
		kc->ref[1] = (BufRef){cb, 0};
		kc->nref = 2;
		kc->args =
		    (KernelArgs){KC_WCOPY, .u.wcopy = {.slot = bytes,
		                                       .iterations = groups,
		                                       .bytes = bytes,
		                                       .every = out ? 1 : 0,
		                                       .out = (uint32_t)out}};
		kc->cycles = out ? wcopy_out_cycles(l->chip, bytes)
		                 : wcopy_cycles(l->chip, bytes);
		if (kc->cycles > s->cycles)
			s->cycles = kc->cycles;
	}
	free(done);
	free(on_tile);
}

/* Before the loop, the carry gets a place of its own, like carry_in's
 * home or as the plan says (plan_carry_like), filled from it by an
 * exchange: the body reads the carry there
 * (b->carry: never as a value the host wrote), the loop's last step
 * writes the next iteration's there, and carry_in keeps its value for
 * whatever reads it after the loop. The place belongs to last_out, the
 * tensor it holds after the loop. Then the body's first step copies the
 * iteration's weights into place. A loop over groups fills each group's
 * slot of the carry's bank instead (carry_bank), and its next steps copy
 * the iteration's group's slot into the place. */
static int
loop_begin(Build *b, const RepeatMap *rm, Diag *d)
{
	Lowered *l = b->l;
	TensorPlace *home = home_of(b, rm->carry_in, b->plan->loop_tile0),
	            *like = plan_carry_like(b->plan, rm->last_out);
	int32_t at = l->nstep;
	TensorPlace *carry = mirror(b, like ? like : home, rm->last_out,
	                            home->dtype, 0, at, "loop carry");
	tensor_place_free(like);
	if (rm->groups > 1)
		carry_bank(b, carry, rm, at);
	/* each group's start into its slot of the bank, or the one carry
	 * into its place */
	for (int32_t g = 0; g < rm->groups; g++) {
		TensorPlace *from =
		    home_of(b, rm->group_in[g], b->plan->loop_tile0);
		Step *s = lower_step(l, STEP_EXCHANGE, "loop: carry in");
		int r = lower_relayout(
		    s, from, rm->groups > 1 ? b->slot[g] : carry, NULL, d);
		if (r)
			return r;
		use_place(b, from, l->nstep - 1);
	}
	b->carry = rm->carry_in;
	b->carry_home = home;
	b->home[rm->carry_in] = carry;
	l->loop_count = (uint32_t)rm->count;
	l->loop_groups = (uint32_t)rm->groups;
	l->loop_first = l->nstep;
	l->loop_last = -1;
	lower_step(l, STEP_COMPUTE, "loop: next weights");
	if (rm->groups > 1)
		carry_copies(b, carry, (uint32_t)rm->groups, 0);
	return IPU_OK;
}

/* The body's last step moves the carry into its place, where the next
 * iteration reads it; after the loop, the last iteration's carry is
 * there. A loop over groups then copies the place into its group's slot
 * of the bank, where each group's last carry is after the loop. */
static int
loop_end(Build *b, const RepeatMap *rm, Diag *d)
{
	TensorPlace *from = b->home[rm->carry_out], *to = b->home[rm->carry_in];
	Step *s = lower_step(b->l, STEP_EXCHANGE, "loop: carry");
	int32_t at = b->l->nstep - 1;
	int r = lower_relayout(s, from, to, NULL, d);
	if (r)
		return r;
	use_place(b, from, at);
	use_place(b, to, at);
	b->home[rm->last_out] = to;
	if (rm->groups > 1) { /* the carry into its group's slot */
		carry_copies(b, to, (uint32_t)rm->groups, 1);
		at = b->l->nstep - 1;
		use_place(b, to, at);
		for (int32_t g = 0; g < rm->groups; g++) {
			use_place(b, b->slot[g], at);
			b->home[rm->group_out[g]] = b->slot[g];
		}
	}
	b->l->loop_last = at;
	b->home[rm->carry_in] = b->carry_home;
	b->carry = -1;
	return IPU_OK;
}

/* The places of the body's own weights (homes and copies). */
static TensorPlace **
loop_weight_places(const Build *b, const RepeatMap *rm, int *n)
{
	TensorPlace **wp =
	    xmalloc(((size_t)rm->nweights + (size_t)b->ncopies) * sizeof *wp);
	*n = 0;
	for (int j = 0; j < rm->nweights; j++) {
		int32_t w0 = rm->weight[j];
		if (b->home[w0])
			wp[(*n)++] = b->home[w0];
		for (int c = 0; c < b->ncopies; c++)
			if (b->copies[c]->tensor == w0)
				wp[(*n)++] = b->copies[c];
	}
	return wp;
}

/* Tensor id's entry in the host's map: the pieces of tensor of's home
 * and of every copy of it the host writes (a layout only one GEMM reads,
 * a bias next to every block); with bank_of (id is iteration k's weight
 * that stands for iteration 0's `of`), those pieces in slot k of each
 * tile's loop weight bank. Nothing for a tensor no op reads. */
static void
map_tensor(const Build *b, int32_t id, int32_t of, const LoopBank *bank_of,
           uint32_t k)
{
	const Tensor *t = graph_tensor(b->g, id);
	TensorPlace *tp = NULL;
	for (int c = -1; c < b->ncopies; c++) {
		const TensorPlace *from = c < 0 ? b->home[of] : b->copies[c];
		if (!from || (c >= 0 && from->tensor != of))
			continue;
		if (!tp)
			tp = lower_tensor(b->l, id, tensor_view_rows(t),
			                  tensor_view_cols(t), t->elem.dtype);
		for (int i = 0; i < from->npiece; i++) {
			Piece p = from->piece[i];
			if (bank_of) {
				const LoopBank *bk = &bank_of[p.tile];
				p.at = (BufRef){bk->bank,
				                k * bk->slot + p.at.offset};
			}
			*layout_piece(tp) = p;
		}
	}
}

/* The body's weights moved into banks (loop_weights); returns the bank of
 * each tile in *bank_of (malloc'd). */
static int
loop_banks(Build *b, const RepeatMap *rm, LoopBank **bank_of, Diag *d)
{
	int nwp, nbank;
	TensorPlace **wp = loop_weight_places(b, rm, &nwp);
	LoopBank *banks;
	int r =
	    loop_weights(b->l, wp, nwp, b->made, b->nmade, &banks, &nbank, d);
	*bank_of = xcalloc(b->l->tiles, sizeof **bank_of);
	for (int i = 0; !r && i < nbank; i++)
		(*bank_of)[banks[i].tile] = banks[i];
	free(wp);
	free(banks);
	return r;
}

static int
lower_ops(Build *b, const RepeatMap *rm, Diag *d)
{
	const Graph *g = b->g;
	int r = IPU_OK;
	for (int i = 0; i < g->nops && !r; i++) {
		const Op *op = &g->ops[i];
		if (rm->count && i == rm->first) {
			b->l->op = -1; /* the loop's own steps */
			if ((r = loop_begin(b, rm, d)))
				break;
		}
		b->l->op = i;
		r = lower_op[op->kind](b, op, &b->plan->op[i], d);
		if (r && strncmp(d->msg, "compile: ", 9))
			plan_op_error(b->g, op, r, d);
		if (!r && rm->count && i == rm->first + rm->len - 1) {
			b->l->op = -1;
			r = loop_end(b, rm, d);
			i = rm->first + rm->count * rm->len - 1;
		}
	}
	return r;
}

/* The host's map: inputs, weights and outputs where they live. */
static void
host_map(Build *b, const RepeatMap *rm, const LoopBank *bank_of)
{
	for (int32_t id = 0; id < b->g->ntensors; id++) {
		int32_t slot = b->loop_slot[id];
		if (slot >= 0)
			map_tensor(b, id, rm->weight[slot % rm->nweights],
			           bank_of, (uint32_t)(slot / rm->nweights));
		else if (graph_tensor(b->g, id)->role != ROLE_INTERMEDIATE)
			map_tensor(b, id, id, NULL, 0);
	}
}

int
lower_plan(const Plan *plan, Lowered **out, Diag *d)
{
	const Graph *g = plan->g;
	Build b = {.g = g,
	           .plan = plan,
	           .l = lower_new(plan->chip, plan->tiles),
	           .tiles = plan->tiles,
	           .carry = -1};
	b.home = xcalloc((size_t)g->ntensors, sizeof *b.home);
	b.loop_slot = plan->loop_slot;
	const RepeatMap *rm = &plan->loop;
	int r = lower_ops(&b, rm, d);
	LoopBank *bank_of = NULL;
	b.l->op = -1; /* the loop's weight copies */
	if (!r) {
		trim_lifetimes(&b);
		if (rm->count)
			r = loop_banks(&b, rm, &bank_of, d);
		loop_lifetimes(b.l);
	}
	if (!r) {
		host_map(&b, rm, bank_of);
		/* the tiles any buffer is on */
		for (int i = 0; i < b.l->nbuf; i++)
			if (b.l->buf[i].tile + 1 > b.tiles_used)
				b.tiles_used = b.l->buf[i].tile + 1;
		b.l->tiles = b.tiles_used;
	}
	for (int i = 0; i < b.nmade; i++)
		tensor_place_free(b.made[i]);
	free(bank_of);
	free(b.made);
	free(b.copies);
	free(b.home);
	free(b.used);
	free(b.zeroed);
	free(b.refill);
	free(b.slot);
	free(b.bank_of);
	if (r) {
		lower_free(b.l);
		b.l = NULL;
	}
	*out = b.l;
	return r;
}

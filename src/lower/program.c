/*
 * program.c - planning and lowering a whole graph, op by op.
 *
 * Contract: takes a verified graph; returns a Lowered whose steps run the
 * ops in graph order and whose tensor map (l->tp) holds where the host
 * writes every input and weight and reads every output. Each tensor has a
 * home: the place (pieces on tiles) where its producer left it, or for an
 * input or weight the place its first consumer wanted (the host writes it
 * there). A consumer that wants another place gets an exchange step that
 * moves the elements (relayout.c) just before its own steps; a GEMM's B
 * is then also packed into the weight layout there (pack.c).
 *
 * The plan search is greedy in graph order: for each matmul, the GEMM
 * planner's cheapest candidates are each priced together with the exchange
 * that brings its operand A from its home, and the cheapest sum is kept.
 *
 * Lifetimes: a lowering makes its tensors' buffers live from its first
 * step to the end; here, once every op is lowered, each buffer that holds a
 * tensor is cut back to the last step that reads it (weights and outputs
 * stay live to the end, and inputs live from the start).
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

enum {
	GEMM_CANDIDATES = 6,       /* plans priced with their relayout */
	COMPILE_MAX_BATCHES = 4096 /* GEMMs of one batched matmul */
};

/* A buffer whose padding must stay zero, and the place it holds pieces of. */
typedef struct {
	int32_t buf;
	const TensorPlace *tp;
} Zeroed;

typedef struct {
	const Graph *g;
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
	char *desc;
	size_t desc_len;
	uint32_t tiles_used;
	uint32_t next_tile; /* spread(): where the next partial place starts */
	uint32_t *weight_bytes;   /* by tile: bytes of weights stored over the
	                             chip (GemmOperands.b_stored) */
	uint32_t next_weight_row; /* the grid row of a weight's first chunk
	                             stored in its own GEMM's grid */
	uint32_t b_local_left;    /* bytes a tile may still give to weights
	                             stored on every tile that reads them
	                             (GemmPlan.b_local) */
	int weights_many; /* the graph's weights take an eighth of a tile
	                     each or more */
	const int32_t *loop_slot; /* by tensor: >= 0 for a weight of one
	                             iteration of the loop (RepeatMap) */
	uint32_t gemm_bytes;      /* most bytes a GEMM plan may keep on a tile
	                             (0: any the planner accepts) */
	int32_t carry;            /* while the loop's body is lowered: its
	                             carry_in, whose home is then the carry's
	                             place (loop_begin); else -1 */
	TensorPlace *carry_home;  /* carry_in's own home meanwhile */
} Build;

/* The 2-D view of a tensor: the last axis by all the others. */
static uint32_t
view_cols(const Tensor *t)
{
	return (uint32_t)t->shape.dim[t->shape.rank - 1];
}

static uint32_t
view_rows(const Tensor *t)
{
	return (uint32_t)(shape_elems(&t->shape) / view_cols(t));
}

static TensorPlace *
new_place(Build *b, int32_t id, uint32_t rows, uint32_t cols, DType dt)
{
	GROW(b->made, b->nmade, b->capmade);
	return b->made[b->nmade++] =
	           tensor_place_new(id, rows, cols, (uint8_t)dt);
}

/* Keep a place made elsewhere (freed and trimmed with the others). */
static TensorPlace *
adopt(Build *b, TensorPlace *tp)
{
	GROW(b->made, b->nmade, b->capmade);
	return b->made[b->nmade++] = tp;
}

static TensorPlace *
view_place(Build *b, int32_t id)
{
	const Tensor *t = graph_tensor(b->g, id);
	return new_place(b, id, view_rows(t), view_cols(t), t->elem.dtype);
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

/* Add text to the plan's description; a new op's after "; ". */
static void
describe(Build *b, const char *text, int new_op)
{
	size_t at = strlen(b->desc);
	if (new_op && at)
		snprintf(b->desc + at, b->desc_len - at, "; ");
	at = strlen(b->desc);
	snprintf(b->desc + at, b->desc_len - at, "%s", text);
}

/* ---- default layout ---------------------------------------------------- */

/* The first tile of a new place of `pieces` pieces: places that use part
 * of the chip start where the last one ended, so that the work, the
 * exchanges and their code spread over the tiles instead of piling up on
 * tile 0 (a SigLIP layer's row-wise ops, per-head blocks). */
static uint32_t
spread(Build *b, uint32_t pieces)
{
	if (pieces >= b->tiles)
		return 0;
	uint32_t t = b->next_tile % b->tiles;
	b->next_tile = t + pieces;
	return t;
}

/* Elements per row a place pads to: a multiple of 8, what every
 * elementwise kernel walks in (and whole 8-byte atoms). */
static uint32_t
pad_cols_of(uint32_t cols)
{
	return (cols + 7) / 8 * 8;
}

/* A row-major place spreading the view's rows over the tiles (and its
 * columns, in 16s, when there are fewer rows than tiles), buffers live
 * from step `first`. */
static TensorPlace *
default_place(Build *b, int32_t id, uint32_t rows, uint32_t cols, DType dt,
              int32_t first)
{
	TensorPlace *tp = new_place(b, id, rows, cols, dt);
	uint32_t pr = rows < b->tiles ? rows : b->tiles;
	uint32_t pc = b->tiles / pr, panels = (cols + 15) / 16;
	if (pc > panels)
		pc = panels;
	uint32_t bm = (rows + pr - 1) / pr;
	uint32_t bn = ((panels + pc - 1) / pc) * 16;
	uint32_t es = (uint32_t)dtype_size(dt), k = 0,
	         tile0 = spread(b, pr * pc);
	for (uint32_t r0 = 0; r0 < rows; r0 += bm)
		for (uint32_t c0 = 0; c0 < cols; c0 += bn, k++) {
			uint32_t t = (tile0 + k) % b->tiles;
			uint32_t m = rows - r0 < bm ? rows - r0 : bm;
			uint32_t n = cols - c0 < bn ? cols - c0 : bn;
			uint32_t pad = pad_cols_of(n);
			int32_t buf =
			    lower_buffer(b->l, t, m * pad * es, 8, REGION_ANY,
			                 first, INT32_MAX, "tensor block");
			*lower_piece(tp) = (Piece){.tile = t,
			                           .at = {buf, 0},
			                           .row0 = r0,
			                           .rows = m,
			                           .col0 = c0,
			                           .cols = n,
			                           .pad_rows = m,
			                           .pad_cols = pad,
			                           .format = PF_ROWMAJOR};
		}
	return tp;
}

/* The home of tensor id, made in the default layout if it is an input or
 * weight that has none yet. */
static TensorPlace *
home_of(Build *b, int32_t id)
{
	if (!b->home[id]) {
		const Tensor *t = graph_tensor(b->g, id);
		b->home[id] = default_place(b, id, view_rows(t), view_cols(t),
		                            t->elem.dtype, 0);
	}
	return b->home[id];
}

/* 1 if the host writes tensor id's values (an input or weight), so that
 * a copy of it anywhere may be written by the host too; not the loop's
 * carry in its body, which the loop's last step rewrites each iteration. */
static int
host_writes(const Build *b, int32_t id)
{
	const Tensor *t = graph_tensor(b->g, id);
	return (t->role == ROLE_INPUT || t->role == ROLE_WEIGHT) &&
	       id != b->carry;
}

/* 1 if every piece of tp is row-major or GEMM C panels: what the
 * exchange and the elementwise kernels read (not a GEMM's transposed A
 * or packed B, which only that GEMM reads). */
static int
readable(const TensorPlace *tp)
{
	for (int k = 0; k < tp->npiece; k++)
		if (tp->piece[k].format != PF_ROWMAJOR &&
		    tp->piece[k].format != PF_GEMM_C)
			return 0;
	return 1;
}

/* Fill `want` (tensor id's place as a consumer wants it) before the
 * consumer's first step `at` from `from` (its home, or a place made from
 * it): an input or weight without either is written there by the host
 * (and that is its home, unless only this GEMM can read it: a copy then,
 * and the next consumer chooses the home); anything else is moved there
 * by an exchange step inserted at `at` (and packed, for a GEMM's B:
 * pack.c). Returns the steps inserted. */
static int
bring(Build *b, int32_t id, const TensorPlace *from, TensorPlace *want,
      int32_t at, const char *what, int *inserted, Diag *d)
{
	*inserted = 0;
	if (!from && readable(want)) {
		b->home[id] = want;
		return IPU_OK;
	}
	if (!from) {
		GROW(b->copies, b->ncopies, b->capcopies);
		b->copies[b->ncopies++] = want;
		return IPU_OK;
	}
	int r;
	if (lower_is_packed(want)) {
		r = lower_pack_b(b->l, from, want, at, inserted, d);
	} else {
		Step *s = lower_insert_step(b->l, at, STEP_EXCHANGE, what);
		*inserted = 1;
		r = lower_relayout(s, from, want, NULL, d);
	}
	if (r)
		return r;
	fill_from(b, want, at);
	use_place(b, from, at);
	return IPU_OK;
}

/* How many times each byte of weight id is stored: the loop's iterations
 * for a weight of one iteration (the bank holds every iteration's). */
static uint32_t
stored_times(const Build *b, int32_t id)
{
	return b->loop_slot[id] >= 0 ? b->l->loop_count : 1;
}

/* The first place of a weight that `want` holds several copies of (a
 * bias next to every block, LayerNorm's gamma and beta next to every
 * piece of rows): the host writes every copy; but a loop weight, which
 * the bank holds once an iteration, is stored once, each distinct block
 * on the tile storing the fewest weight bytes (its home), and an exchange
 * step (*s, or a new one) copies the blocks into `want`. */
static int
home_of_copies(Build *b, int32_t id, TensorPlace *want, Step **s, int32_t at,
               Diag *d)
{
	if (b->loop_slot[id] < 0) {
		b->home[id] = want;
		return IPU_OK;
	}
	TensorPlace *home =
	    adopt(b, tensor_place_new(id, want->rows, want->cols, want->dtype));
	uint32_t es = (uint32_t)dtype_size((DType)want->dtype);
	for (int k = 0; k < want->npiece; k++) {
		const Piece *p = &want->piece[k];
		int seen = 0;
		for (int i = 0; i < home->npiece && !seen; i++) {
			const Piece *h = &home->piece[i];
			seen = h->row0 == p->row0 && h->rows == p->rows &&
			       h->col0 == p->col0 && h->cols == p->cols;
		}
		if (seen)
			continue;
		uint32_t pad = pad_cols_of(p->cols), bytes = p->rows * pad * es;
		uint32_t t = lower_least_stored(b->weight_bytes, b->tiles,
		                                bytes * stored_times(b, id));
		*lower_piece(home) =
		    (Piece){.tile = t,
		            .at = {lower_buffer(b->l, t, bytes, 8, REGION_ANY,
		                                0, INT32_MAX, "loop weight"),
		                   0},
		            .row0 = p->row0,
		            .rows = p->rows,
		            .col0 = p->col0,
		            .cols = p->cols,
		            .pad_rows = p->rows,
		            .pad_cols = pad,
		            .format = PF_ROWMAJOR};
	}
	b->home[id] = home;
	if (!*s)
		*s = lower_step(b->l, STEP_EXCHANGE, "broadcast");
	use_place(b, home, at);
	return lower_relayout(*s, home, want, NULL, d);
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
			    (Zeroed){tp->piece[k].at.buf, tp};
		}
}

static int64_t
shape_batches(const Shape *s)
{
	int64_t n = 1;
	for (int i = 0; i + 2 < s->rank; i++)
		n *= s->dim[i];
	return n;
}

typedef struct {
	const Op *op;
	DType dt, dtype_b;
	uint32_t m, n, k, batches;
	int fp8_scale;
	int ta;                    /* A is stored transposed */
	const TensorPlace *a_home; /* where A is (NULL: the host writes it) */
} Matmul;

/* Lower `batches` GEMMs with plan p, `group` side by side, into l, with
 * the operands' and C's pieces in pa, pb, pc; stored: NULL, or the bytes
 * of weights each tile stores when B's chunks are stored over the whole
 * chip (a weight: GemmOperands.b_stored). */
static int
lower_batches(Lowered *l, const Matmul *mm, const GemmPlan *p, uint32_t group,
              uint32_t tile0, uint32_t *stored, uint32_t b_times,
              uint32_t b_rows_from, TensorPlace *pa, TensorPlace *pb,
              TensorPlace *pc, Diag *d)
{
	uint32_t one = p->pk * p->pm * p->pn;
	int32_t base = 0;
	int r = IPU_OK;
	for (uint32_t bi = 0; bi < mm->batches && !r; bi++) {
		uint32_t j = bi % group;
		if (j == 0)
			base = l->nstep;
		GemmOperands o = {.a = pa,
		                  .b = pb,
		                  .c = pc,
		                  .batches = mm->batches,
		                  .batch = bi,
		                  .tile_base = tile0 + j * one,
		                  .step_base = j ? base : -1,
		                  .transpose_a = mm->ta,
		                  .transpose_b = mm->op->attr.transpose_b,
		                  .dtype_b = mm->dtype_b,
		                  .fp8_scale = mm->fp8_scale,
		                  .b_stored = stored,
		                  .b_times = b_times,
		                  .b_rows_from = b_rows_from};
		r = lower_gemm(l, p, &o, d);
	}
	return r;
}

/* The cycles of bringing A from its home into the pieces plan p wants: a
 * trial lowering on a scratch program. */
static uint64_t
relayout_price(Build *b, const Matmul *mm, const GemmPlan *p)
{
	const TensorPlace *from = mm->a_home;
	Lowered *l = lower_new(b->l->chip, b->l->tiles);
	TensorPlace *pa = tensor_place_new(from->tensor, from->rows, from->cols,
	                                   from->dtype),
	            *pb = tensor_place_new(-1, 1, 1, (uint8_t)mm->dtype_b),
	            *pc = tensor_place_new(-1, 1, 1, (uint8_t)DT_F32);
	uint64_t cost = UINT64_MAX;
	Diag dd;
	if (!lower_batches(l, mm, p, 1, 0, NULL, 1, 0, pa, pb, pc, &dd)) {
		Step *s = lower_step(l, STEP_EXCHANGE, "trial");
		if (!lower_relayout(s, from, pa, NULL, &dd))
			cost = lower_exchange_estimate(l, s) +
			       chip_rule(l->chip, TIMING_SYNC_INTERNAL);
	}
	tensor_place_free(pa);
	tensor_place_free(pb);
	tensor_place_free(pc);
	lower_free(l);
	return cost;
}

/* The plan for `batches` GEMMs of m x n x k: for each group size g (1 to
 * 16, the powers of two, all of them at once), one GEMM planned on tiles /
 * g tiles, priced as ceil(batches / g) rounds; the cheapest. A single GEMM
 * whose A has a home is priced with the exchange that brings A. */
/* Plan p at `cost` beats the best so far (none: best UINT64_MAX): a
 * plan within b->gemm_bytes before one over it, then the cheaper. */
static int
better(const Build *b, const GemmPlan *p, uint64_t cost, const GemmPlan *cur,
       uint64_t best)
{
	if (best == UINT64_MAX)
		return 1;
	int over = b->gemm_bytes && p->tile_bytes > b->gemm_bytes,
	    cur_over = b->gemm_bytes && cur->tile_bytes > b->gemm_bytes;
	return over != cur_over ? !over : cost < best;
}

static int
plan_matmul(Build *b, const Matmul *mm, GemmPlan *plan, uint32_t *group,
            Diag *d)
{
	const Chip *chip = b->l->chip;
	uint32_t tiles = b->tiles;
	uint64_t best = UINT64_MAX;
	/* a weight the host writes may be written to every tile that reads
	 * it, while the budget lasts */
	const Tensor *tb = graph_tensor(b->g, mm->op->in[1]);
	uint32_t local =
	    mm->batches == 1 && tb->role == ROLE_WEIGHT && !b->home[tb->id]
	        ? b->b_local_left
	        : 0;
	/* B with a home is packed on the device (bring) */
	int made = b->home[tb->id] != NULL;
	if (mm->batches == 1 && mm->a_home) {
		GemmPlan cand[GEMM_CANDIDATES];
		int n;
		int r =
		    plan_gemm_top(chip, tiles, mm->dt, mm->m, mm->n, mm->k,
		                  local, made, cand, GEMM_CANDIDATES, &n, d);
		for (int i = 0; !r && i < n; i++) {
			uint64_t move = relayout_price(b, mm, &cand[i]);
			if (move != UINT64_MAX &&
			    better(b, &cand[i], cand[i].cycles + move, plan,
			           best)) {
				best = cand[i].cycles + move;
				*plan = cand[i];
				*group = 1;
			}
		}
		if (r || best != UINT64_MAX)
			return r;
	}
	for (uint32_t g = 1; g <= mm->batches && g <= tiles; g++) {
		if (g > 16 && (g & (g - 1)) && g != mm->batches)
			continue;
		GemmPlan p;
		Diag dd;
		if (plan_gemm(chip, tiles / g, mm->dt, mm->m, mm->n, mm->k,
		              local, made, &p, &dd))
			continue;
		uint64_t cost =
		    (uint64_t)((mm->batches + g - 1) / g) * p.cycles;
		if (better(b, &p, cost, plan, best)) {
			best = cost;
			*plan = p;
			*group = g;
		}
	}
	if (best == UINT64_MAX) /* none fits: the whole chip's plan's error */
		return plan_gemm(chip, tiles, mm->dt, mm->m, mm->n, mm->k, 0,
		                 made, plan, d);
	if (plan->b_local)
		b->b_local_left -= (uint32_t)plan_gemm_b_local_bytes(plan);
	return IPU_OK;
}

static int
check_matmul(Build *b, const Op *op, Matmul *mm, Diag *d)
{
	const Tensor *a = graph_tensor(b->g, op->in[0]),
	             *bt = graph_tensor(b->g, op->in[1]),
	             *c = graph_tensor(b->g, op->out);
	int64_t batches = shape_batches(&a->shape);
	if (batches > COMPILE_MAX_BATCHES)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: matmul %s: %lld batches; at most %d "
		                "so far (they run one after another)",
		                c->name, (long long)batches,
		                COMPILE_MAX_BATCHES);
	/* f8 operands may mix the two formats (the kernel takes one each) */
	if (a->elem.dtype != bt->elem.dtype &&
	    !(dtype_is_f8(a->elem.dtype) && dtype_is_f8(bt->elem.dtype)))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: matmul %s: operands of different "
		                "types (%s, %s)",
		                c->name, dtype_name(a->elem.dtype),
		                dtype_name(bt->elem.dtype));
	if (dtype_is_f8(a->elem.dtype) && b->l->chip->arch != ARCH_IPU21)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: f8 needs an ipu21 chip; %s is %s",
		                b->l->chip->name, b->l->chip->arch_name);
	/* f8 values are q x 2^scale: the products carry both scales */
	int scale = a->elem.scale + bt->elem.scale;
	if (dtype_is_f8(a->elem.dtype) && (scale < -32 || scale > 31))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: matmul %s: the f8 scales 2^%d (%s) "
		                "and 2^%d (%s) multiply to 2^%d, outside the "
		                "kernel's 2^-32..2^31",
		                c->name, a->elem.scale, a->name, bt->elem.scale,
		                bt->name, scale);
	/* both operands: the host writes it once, both are moved from there */
	if (op->in[0] == op->in[1])
		home_of(b, op->in[0]);
	int tra = op->attr.transpose_a, trb = op->attr.transpose_b;
	int ra = a->shape.rank, rb = bt->shape.rank;
	*mm = (Matmul){.op = op,
	               .dt = a->elem.dtype,
	               .dtype_b = bt->elem.dtype,
	               .m = (uint32_t)a->shape.dim[ra - (tra ? 1 : 2)],
	               .k = (uint32_t)a->shape.dim[ra - (tra ? 2 : 1)],
	               .n = (uint32_t)bt->shape.dim[rb - (trb ? 2 : 1)],
	               .batches = (uint32_t)batches,
	               .fp8_scale = dtype_is_f8(a->elem.dtype) ? scale : 0,
	               .ta = tra,
	               .a_home = b->home[op->in[0]]};
	return IPU_OK;
}

/* A transposed operand A that has a home is transposed on the device
 * (transpose.c) into a row-major place of its own, [M x K] per batch,
 * which the GEMM then reads as an untransposed A. */
static int
untranspose_a(Build *b, Matmul *mm, Diag *d)
{
	const Tensor *a = graph_tensor(b->g, mm->op->in[0]);
	if (dtype_is_f8(a->elem.dtype))
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "compile: matmul %s: operand A (%s) is f8, "
		    "transposed and already on the device; there is "
		    "no f8 transpose kernel yet",
		    graph_tensor(b->g, mm->op->out)->name, a->name);
	Shape perm = {.rank = a->shape.rank};
	for (int i = 0; i < perm.rank; i++)
		perm.dim[i] = i;
	perm.dim[perm.rank - 2] = perm.rank - 1;
	perm.dim[perm.rank - 1] = perm.rank - 2;
	int32_t at = b->l->nstep;
	TensorPlace *to = default_place(b, a->id, mm->batches * mm->m, mm->k,
	                                a->elem.dtype, at);
	int r = lower_transpose_last(b->l, mm->a_home, &a->shape, &perm, to, d);
	use_place(b, mm->a_home, at);
	mm->a_home = to;
	mm->ta = 0;
	return r;
}

static int
lower_matmul_op(Build *b, const Op *op, Diag *d)
{
	Matmul mm = {0};
	int r = check_matmul(b, op, &mm, d);
	if (!r && mm.ta && mm.a_home)
		r = untranspose_a(b, &mm, d);
	GemmPlan plan;
	uint32_t group = 1;
	if (!r)
		r = plan_matmul(b, &mm, &plan, &group, d);
	if (r)
		return r;
	char text[512];
	plan_gemm_describe(&plan, text, sizeof text);
	describe(b, text, 1);
	if (mm.batches > 1) {
		snprintf(text, sizeof text,
		         "; %u batches, %u at a time side by side", mm.batches,
		         group);
		describe(b, text, 0);
	}
	const Tensor *tc = graph_tensor(b->g, op->out);
	TensorPlace *pa = mm.a_home ? new_place(b, op->in[0], mm.a_home->rows,
	                                        mm.a_home->cols, mm.dt)
	                            : view_place(b, op->in[0]),
	            *pb = view_place(b, op->in[1]),
	            *pc = new_place(b, op->out, view_rows(tc), view_cols(tc),
	                            mm.dt == DT_F32 ? DT_F32 : DT_F16);
	int32_t first = b->l->nstep;
	/* a GEMM on part of the chip starts where the last partial place
	 * ended, on an even tile (exchange pairs are tiles 2k, 2k + 1) */
	uint32_t used = plan.pk * plan.pm * plan.pn * group, tile0 = 0;
	if (used < b->tiles) {
		tile0 = b->next_tile % b->tiles & ~1u;
		if (tile0 + used > b->tiles)
			tile0 = 0;
		b->next_tile = tile0 + used;
	}
	/* a weight is written once and kept (unless b_local), so that the
	 * weights of a model do not pile up: when they are many, or the GEMM
	 * is on less than half of the chip, its chunks go over the whole
	 * chip; otherwise they stay in the grid, where the plan prices their
	 * sends, on rows that rotate from weight to weight */
	const Tensor *tb = graph_tensor(b->g, op->in[1]);
	int weight_b =
	    tb->role == ROLE_WEIGHT && !b->home[tb->id] && !plan.b_local;
	int spread_b = weight_b && (b->weights_many || 2 * used < b->tiles);
	uint32_t b_rows_from = 0;
	if (weight_b && !spread_b) {
		b_rows_from = b->next_weight_row;
		b->next_weight_row += plan.steps;
	}
	r = lower_batches(
	    b->l, &mm, &plan, group, tile0, spread_b ? b->weight_bytes : NULL,
	    stored_times(b, op->in[1]), b_rows_from, pa, pb, pc, d);
	int moved = 0;
	if (!r)
		r = bring(b, op->in[1], b->home[op->in[1]], pb, first,
		          "matmul: B", &moved, d);
	/* after B's steps: the reads bring records stay where they are */
	if (!r)
		r = bring(b, op->in[0], mm.a_home, pa, first + moved,
		          "matmul: A from its producer", &moved, d);
	if (r)
		return r;
	if (mm.a_home)
		pad_zero(b, pa);
	int32_t last = b->l->nstep - 1;
	use_place(b, pa, last);
	use_place(b, pb, last);
	use_place(b, pc, last);
	b->home[op->out] = pc;
	return IPU_OK;
}

static int
op_error(const Build *b, const Op *op, int r, Diag *d)
{
	char what[GRAPH_MAX_NAME + 32];
	snprintf(what, sizeof what, "compile: %s %s", op_desc(op->kind)->name,
	         graph_tensor(b->g, op->out)->name);
	graph_diag_prefix(d, what);
	return r;
}

/* ---- layout ops -------------------------------------------------------- */

/* The output of a reshape or transpose: the same elements moved by `map`
 * into a new row-major place, in one exchange step. */
static int
move_op(Build *b, const Op *op, const FlatMap *map, const char *what, Diag *d)
{
	const Tensor *t = graph_tensor(b->g, op->out);
	TensorPlace *from = home_of(b, op->in[0]);
	int32_t at = b->l->nstep;
	Step *s = lower_step(b->l, STEP_EXCHANGE, what);
	TensorPlace *to = default_place(b, op->out, view_rows(t), view_cols(t),
	                                t->elem.dtype, at);
	int r = lower_relayout(s, from, to, map, d);
	if (r)
		return r;
	use_place(b, from, at);
	use_place(b, to, at);
	b->home[op->out] = to;
	return IPU_OK;
}

/* An op that changes nothing in memory: the output is the input's
 * pieces. */
static int
alias_op(Build *b, const Op *op)
{
	const TensorPlace *from = home_of(b, op->in[0]);
	TensorPlace *to = view_place(b, op->out);
	for (int k = 0; k < from->npiece; k++)
		*lower_piece(to) = from->piece[k];
	b->home[op->out] = to;
	return IPU_OK;
}

static int
lower_reshape_op(Build *b, const Op *op, Diag *d)
{
	const Tensor *in = graph_tensor(b->g, op->in[0]),
	             *out = graph_tensor(b->g, op->out);
	if (view_cols(in) != view_cols(out))
		return move_op(b, op, NULL, "reshape", d);
	return alias_op(b, op); /* the same 2-D view */
}

static int
lower_transpose_op(Build *b, const Op *op, Diag *d)
{
	const Tensor *in = graph_tensor(b->g, op->in[0]),
	             *out = graph_tensor(b->g, op->out);
	const Shape *perm = &op->attr.perm;
	if (perm->dim[in->shape.rank - 1] == in->shape.rank - 1) {
		RowPerm p;
		FlatMap map = lower_row_perm(&p, &in->shape, perm);
		return move_op(b, op, &map, "transpose", d);
	}
	/* the last axis moves: rows, 2-D transposes, rows (transpose.c) */
	TensorPlace *from = home_of(b, op->in[0]);
	int32_t at = b->l->nstep;
	TensorPlace *to = default_place(b, op->out, view_rows(out),
	                                view_cols(out), out->elem.dtype, at);
	int r = lower_transpose_last(b->l, from, &in->shape, perm, to, d);
	if (r)
		return op_error(b, op, r, d);
	use_place(b, from, at);
	use_place(b, to, b->l->nstep - 1);
	b->home[op->out] = to;
	return IPU_OK;
}

/* A slice of whole rows is an exchange that moves only the rows inside
 * it; cutting the last axis would need runs within rows (not yet). */
static int
lower_slice_op(Build *b, const Op *op, Diag *d)
{
	const Tensor *in = graph_tensor(b->g, op->in[0]);
	int last = in->shape.rank - 1;
	if (op->attr.begin.dim[last] != 0 ||
	    op->attr.end.dim[last] != in->shape.dim[last])
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: slice %s: the last axis is cut; only "
		                "slices of whole rows are supported so far",
		                graph_tensor(b->g, op->out)->name);
	RowSlice s;
	FlatMap map =
	    lower_row_slice(&s, &in->shape, &op->attr.begin, &op->attr.end);
	return move_op(b, op, &map, "slice", d);
}

/* ---- elementwise ------------------------------------------------------- */

/* The same blocks on the same tiles in the same formats, piece by piece. */
static int
same_pieces(const TensorPlace *x, const TensorPlace *y)
{
	if (x->npiece != y->npiece)
		return 0;
	for (int k = 0; k < x->npiece; k++) {
		const Piece *p = &x->piece[k], *q = &y->piece[k];
		if (p->tile != q->tile || p->row0 != q->row0 ||
		    p->rows != q->rows || p->col0 != q->col0 ||
		    p->cols != q->cols || p->pad_rows != q->pad_rows ||
		    p->pad_cols != q->pad_cols || p->format != q->format)
			return 0;
	}
	return 1;
}

/* out = op(x) on x's pieces: cast, gelu. */
static int
lower_unary_op(Build *b, const Op *op, Diag *d)
{
	const Tensor *x = graph_tensor(b->g, op->in[0]),
	             *o = graph_tensor(b->g, op->out);
	EwOp ew = op->kind == OP_CAST ? EW_CAST : EW_GELU;
	if (ew == EW_CAST && x->elem.dtype == o->elem.dtype &&
	    x->elem.scale == o->elem.scale)
		return alias_op(b, op); /* a cast to its own type */
	int r = lower_ew_supported(ew, x->elem.dtype, o->elem.dtype, d);
	if (r)
		return op_error(b, op, r, d);
	TensorPlace *from = home_of(b, op->in[0]);
	int32_t at = b->l->nstep;
	TensorPlace *to =
	    adopt(b, lower_mirror(b->l, from, op->out, o->elem.dtype, 0, at,
	                          "tensor block"));
	int scale = dtype_is_f8(o->elem.dtype)   ? o->elem.scale
	            : dtype_is_f8(x->elem.dtype) ? x->elem.scale
	                                         : 0;
	r = lower_elementwise(b->l, ew, from, NULL, to, scale,
	                      op_desc(op->kind)->name, d);
	if (r)
		return op_error(b, op, r, d);
	use_place(b, from, b->l->nstep - 1);
	use_place(b, to, b->l->nstep - 1);
	b->home[op->out] = to;
	return IPU_OK;
}

/* 1 if s broadcasts down the rows of out's 2-D view: its last axis is
 * out's, every other axis 1 (a bias). */
static int
row_broadcast(const Shape *s, const Shape *out)
{
	if (s->dim[s->rank - 1] != out->dim[out->rank - 1])
		return 0;
	for (int i = 0; i + 1 < s->rank; i++)
		if (s->dim[i] != 1)
			return 0;
	return 1;
}

/* out = a op b on a's pieces (add, mul): b is moved next to them (or, an
 * input or weight seen here first, written there by the host). */
static int
lower_binary_op(Build *b, const Op *op, Diag *d)
{
	int32_t ia = op->in[0], ib = op->in[1];
	const Tensor *o = graph_tensor(b->g, op->out);
	if (!shape_equal(&graph_tensor(b->g, ia)->shape, &o->shape)) {
		int32_t t = ia;
		ia = ib;
		ib = t;
	}
	const Shape *sb = &graph_tensor(b->g, ib)->shape;
	int bcast = !shape_equal(sb, &o->shape);
	if (!shape_equal(&graph_tensor(b->g, ia)->shape, &o->shape) ||
	    (bcast && !row_broadcast(sb, &o->shape)))
		return op_error(b, op,
		                diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                         "broadcasting other than one row "
		                         "(a bias) down a tensor is not "
		                         "supported yet"),
		                d);
	DType dt = o->elem.dtype;
	EwOp ew = op->kind == OP_ADD ? EW_ADD : EW_MUL;
	int r = lower_ew_supported(ew, dt, dt, d);
	if (r)
		return op_error(b, op, r, d);
	TensorPlace *pa = home_of(b, ia), *pb;
	int32_t at = b->l->nstep;
	if (ia == ib ||
	    (b->home[ib] && !bcast && same_pieces(b->home[ib], pa))) {
		pb = b->home[ib];
	} else {
		pb = adopt(b, lower_mirror(b->l, pa, ib, dt, bcast, at,
		                           "operand block"));
		if (!b->home[ib]) {
			/* an input or weight: the host writes it there (a
			 * broadcast row once next to every block) */
			Step *s = NULL;
			r = home_of_copies(b, ib, pb, &s, at, d);
			if (r)
				return op_error(b, op, r, d);
		} else if (host_writes(b, ib)) {
			/* placed by an earlier op: the host writes this copy
			 * too, instead of an exchange each run */
			GROW(b->copies, b->ncopies, b->capcopies);
			b->copies[b->ncopies++] = pb;
		} else {
			TensorPlace *from = home_of(b, ib);
			Step *s = lower_step(b->l, STEP_EXCHANGE,
			                     bcast ? "broadcast" : "operand");
			r = lower_relayout(s, from, pb, NULL, d);
			if (r)
				return op_error(b, op, r, d);
			use_place(b, from, at);
		}
	}
	TensorPlace *out = adopt(b, lower_mirror(b->l, pa, op->out, dt, 0,
	                                         b->l->nstep, "tensor block"));
	r = lower_elementwise(b->l, ew, pa, pb, out, 0, op_desc(op->kind)->name,
	                      d);
	if (r)
		return op_error(b, op, r, d);
	int32_t last = b->l->nstep - 1;
	use_place(b, pa, last);
	use_place(b, pb, last);
	use_place(b, out, last);
	b->home[op->out] = out;
	return IPU_OK;
}

/* ---- row-wise ---------------------------------------------------------- */

/* layernorm, softmax (rowwise.c): x in pieces of whole rows, moved there
 * when its home is not like that (or, an input seen here first, written
 * there by the host); gamma and beta broadcast next to each piece, in the
 * same exchange step. */
static int
lower_rowwise_op(Build *b, const Op *op, Diag *d)
{
	const Tensor *x = graph_tensor(b->g, op->in[0]);
	DType dt = x->elem.dtype;
	int32_t at = b->l->nstep;
	Step *s = NULL;
	int r = IPU_OK;
	TensorPlace *px = b->home[x->id];
	if (!px || !lower_rows_whole(px)) {
		TensorPlace *rows = adopt(
		    b, lower_row_place(b->l, x->id, view_rows(x), view_cols(x),
		                       pad_cols_of(view_cols(x)), dt, at,
		                       spread(b, view_rows(x))));
		if (px) {
			s = lower_step(b->l, STEP_EXCHANGE, "rows");
			r = lower_relayout(s, px, rows, NULL, d);
			use_place(b, px, at);
		} else {
			b->home[x->id] = rows;
		}
		px = rows;
	}
	TensorPlace *pv[2] = {NULL, NULL};
	for (int i = 0; i < 2 && !r && op->kind == OP_LAYERNORM; i++) {
		pv[i] = adopt(b, lower_mirror(b->l, px, op->in[1 + i], dt, 1,
		                              at, "operand row"));
		if (!b->home[op->in[1 + i]]) { /* the host writes each copy */
			r = home_of_copies(b, op->in[1 + i], pv[i], &s, at, d);
			continue;
		}
		TensorPlace *from = b->home[op->in[1 + i]];
		if (!s)
			s = lower_step(b->l, STEP_EXCHANGE, "broadcast");
		r = lower_relayout(s, from, pv[i], NULL, d);
		use_place(b, from, at);
	}
	if (r)
		return op_error(b, op, r, d);
	RwOp rw = op->kind == OP_LAYERNORM ? RW_LAYERNORM : RW_SOFTMAX;
	TensorPlace *out =
	    adopt(b, lower_rowwise_out(b->l, rw, px, op->out, b->l->nstep,
	                               "tensor block"));
	r = lower_rowwise(b->l, rw, px, pv[0], pv[1], out, op->attr.eps,
	                  op->attr.scale, op_desc(op->kind)->name, d);
	if (r)
		return op_error(b, op, r, d);
	int32_t last = b->l->nstep - 1;
	use_place(b, px, last);
	for (int i = 0; i < 2 && pv[i]; i++)
		use_place(b, pv[i], last);
	use_place(b, out, last);
	b->home[op->out] = out;
	return IPU_OK;
}

/* ---- the graph --------------------------------------------------------- */

typedef int (*LowerOp)(Build *b, const Op *op, Diag *d);

static const LowerOp lower_op[OP_COUNT] = {
    [OP_MATMUL] = lower_matmul_op,       [OP_ADD] = lower_binary_op,
    [OP_MUL] = lower_binary_op,          [OP_CAST] = lower_unary_op,
    [OP_GELU] = lower_unary_op,          [OP_RESHAPE] = lower_reshape_op,
    [OP_TRANSPOSE] = lower_transpose_op, [OP_LAYERNORM] = lower_rowwise_op,
    [OP_SOFTMAX] = lower_rowwise_op,     [OP_SLICE] = lower_slice_op,
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
	if (x->tile != y->tile || x->bytes != y->bytes ||
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
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < b->nmade; i++) {
			const TensorPlace *tp = b->made[i];
			const Tensor *t = graph_tensor(b->g, tp->tensor);
			for (int k = 0; t && k < tp->npiece; k++) {
				int32_t id = tp->piece[k].at.buf;
				Buffer *buf = &b->l->buf[id];
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
	share_zeroed(b);
}

/* ---- the loop (loop.c) ------------------------------------------------ */

/* Before the loop, the carry gets a place of its own, like carry_in's
 * home, filled from it by an exchange: the body reads the carry there
 * (b->carry: never as a value the host wrote), the loop's last step
 * writes the next iteration's there, and carry_in keeps its value for
 * whatever reads it after the loop. The place belongs to last_out, the
 * tensor it holds after the loop. Then the body's first step copies the
 * iteration's weights into place. */
static int
loop_begin(Build *b, const RepeatMap *rm, Diag *d)
{
	Lowered *l = b->l;
	TensorPlace *home = home_of(b, rm->carry_in);
	int32_t at = l->nstep;
	TensorPlace *carry =
	    adopt(b, lower_mirror(l, home, rm->last_out, (DType)home->dtype, 0,
	                          at, "loop carry"));
	Step *s = lower_step(l, STEP_EXCHANGE, "loop: carry in");
	int r = lower_relayout(s, home, carry, NULL, d);
	if (r)
		return r;
	use_place(b, home, at);
	b->carry = rm->carry_in;
	b->carry_home = home;
	b->home[rm->carry_in] = carry;
	l->loop_count = (uint32_t)rm->count;
	l->loop_first = l->nstep;
	l->loop_last = -1;
	lower_step(l, STEP_COMPUTE, "loop: next weights");
	return IPU_OK;
}

/* The body's last step moves the carry into its place, where the next
 * iteration reads it; after the loop, the last iteration's carry is
 * there. */
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
	b->l->loop_last = at;
	b->home[rm->last_out] = to;
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
			tp = lower_tensor(b->l, id, view_rows(t), view_cols(t),
			                  (uint8_t)t->elem.dtype);
		for (int i = 0; i < from->npiece; i++) {
			Piece p = from->piece[i];
			if (bank_of) {
				const LoopBank *bk = &bank_of[p.tile];
				p.at = (BufRef){bk->bank,
				                k * bk->slot + p.at.offset};
			}
			*lower_piece(tp) = p;
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

int
lower_graph(const Graph *g, const Chip *chip, uint32_t tiles, int weight_copies,
            uint32_t gemm_bytes, Lowered **out, char *desc, size_t desc_len,
            Diag *d)
{
	Build b = {.g = g,
	           .l = lower_new(chip, tiles),
	           .tiles = tiles,
	           .gemm_bytes = gemm_bytes,
	           .carry = -1,
	           .desc = desc,
	           .desc_len = desc_len};
	desc[0] = 0;
	b.home = xcalloc((size_t)g->ntensors, sizeof *b.home);
	b.weight_bytes = xcalloc(tiles, sizeof *b.weight_bytes);
	/* weights stored where they are read (GemmPlan.b_local) may take an
	 * eighth of a tile, less the share of all the weights */
	uint64_t weights = 0;
	for (int32_t id = 0; id < g->ntensors; id++) {
		const Tensor *t = graph_tensor(g, id);
		if (t->role == ROLE_WEIGHT)
			weights += (uint64_t)shape_elems(&t->shape) *
			           (uint64_t)dtype_size(t->elem.dtype);
	}
	uint64_t eighth = (chip->mem_end - chip->mem_base) / 8,
	         share = weights / (tiles ? tiles : 1);
	b.b_local_left =
	    weight_copies && share < eighth ? (uint32_t)(eighth - share) : 0;
	b.weights_many = share >= eighth;
	RepeatMap rm;
	int r = graph_repeat_map(g, &rm, d);
	/* by tensor: k * nweights + j for iteration k's weight j, or -1 */
	int32_t *loop_slot = xmalloc((size_t)g->ntensors * sizeof *loop_slot);
	for (int32_t id = 0; id < g->ntensors; id++)
		loop_slot[id] = -1;
	for (int32_t k = 0; !r && k < rm.count * rm.nweights; k++)
		loop_slot[rm.weight[k]] = k;
	b.loop_slot = loop_slot;
	if (!r && !g->nops)
		r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
		             "compile: the graph has no operation");
	for (int i = 0; i < g->nops && !r; i++) {
		const Op *op = &g->ops[i];
		if (rm.count && i == rm.first) {
			b.l->op = -1; /* the loop's own steps */
			r = loop_begin(&b, &rm, d);
			if (r)
				break;
		}
		b.l->op = i;
		if (!lower_op[op->kind]) {
			r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "compile: op %d (%s, making %s) has no "
			             "kernel yet",
			             i, op_desc(op->kind)->name,
			             graph_tensor(g, op->out)->name);
			break;
		}
		r = lower_op[op->kind](&b, op, d);
		if (r &&
		    strncmp(d->msg, "compile: ", 9)) /* e.g. the planner's */
			op_error(&b, op, r, d);
		if (!r && rm.count && i == rm.first + rm.len - 1) {
			b.l->op = -1;
			r = loop_end(&b, &rm, d);
			i = rm.first + rm.count * rm.len - 1;
		}
	}
	LoopBank *bank_of = NULL;
	b.l->op = -1; /* the loop's weight copies */
	if (!r) {
		trim_lifetimes(&b);
		if (rm.count)
			r = loop_banks(&b, &rm, &bank_of, d);
		loop_lifetimes(b.l);
	}
	if (!r) {
		/* the host's map: inputs, weights and outputs where they live
		 */
		for (int32_t id = 0; id < g->ntensors; id++) {
			int32_t slot = loop_slot[id];
			if (slot >= 0)
				map_tensor(
				    &b, id, rm.weight[slot % rm.nweights],
				    bank_of, (uint32_t)(slot / rm.nweights));
			else if (graph_tensor(g, id)->role != ROLE_INTERMEDIATE)
				map_tensor(&b, id, id, NULL, 0);
		}
		/* the tiles any buffer is on */
		for (int i = 0; i < b.l->nbuf; i++)
			if (b.l->buf[i].tile + 1 > b.tiles_used)
				b.tiles_used = b.l->buf[i].tile + 1;
		b.l->tiles = b.tiles_used;
	}
	for (int i = 0; i < b.nmade; i++)
		tensor_place_free(b.made[i]);
	repeat_map_free(&rm);
	free(loop_slot);
	free(bank_of);
	free(b.made);
	free(b.weight_bytes);
	free(b.copies);
	free(b.home);
	free(b.used);
	free(b.zeroed);
	if (r) {
		lower_free(b.l);
		b.l = NULL;
	}
	*out = b.l;
	return r;
}

/*
 * graph_plan.c - the whole graph's plan (plan.h, Plan): every choice the
 * compiler makes, op by op in graph order, before anything is lowered.
 *
 * The planner follows each tensor's home: the layout where its producer
 * leaves it, or for an input or weight the layout its first consumer
 * wants (the host writes it there). Layouts are functions of the choices
 * (layout.c, gemm_layout.c), computed here in a Storage that only numbers
 * their buffers; the lowering computes the same layouts in its own
 * buffers. For each op the planner chooses:
 *   - a matmul's GEMM plan: for a single GEMM whose A has a home, the GEMM
 *     planner's cheapest candidates are each priced with the exchange
 *     that brings A there (layout_moves_cycles) and the cheapest sum
 *     wins; batched GEMMs are priced as rounds of groups side by side;
 *   - where each layout on part of the chip starts (spread): where the
 *     last one ended, so that work, exchanges and code spread over the
 *     chip;
 *   - where weights are stored: a GEMM's B on every tile that reads it
 *     (b_local) while a per-tile budget lasts, else once, in parts on the
 *     tiles with the fewest weight bytes (the weight balance) when the
 *     graph's weights are many or the GEMM small, else on grid rows that
 *     rotate from weight to weight;
 *   - how each input reaches the op (Conv): as it is, written there by
 *     the host, or moved by an exchange (priced), packed or transposed.
 * Contract: takes a verified graph; refuses, naming the op, what no
 * kernel or lowering does yet.
 */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/elementwise.h"
#include "../kernels/pack.h"
#include "../kernels/rowwise.h"
#include "../kernels/vadd.h"
#include "../kernels/wcopy.h"

enum {
	GEMM_CANDIDATES = 6,       /* plans priced with their relayout */
	COMPILE_MAX_BATCHES = 4096 /* GEMMs of one batched matmul */
};

/* The planner's Storage: buffers are numbers, nothing more. */
typedef struct {
	Storage st;
	int32_t next;
} Numbers;

static int32_t
number(Storage *st, uint32_t tile, uint32_t bytes, uint32_t align,
       MemRegion region, const char *what)
{
	(void)tile, (void)bytes, (void)align, (void)region, (void)what;
	return ((Numbers *)st)->next++;
}

/* The planner's numbering, the bytes of the buffers it numbers summed by
 * tile: the loop carry's most on a tile (Plan.carry_bytes). */
typedef struct {
	Storage st;
	Numbers *num;
	uint32_t *bytes; /* by tile */
	uint32_t most;
} Counted;

static int32_t
counted(Storage *st, uint32_t tile, uint32_t bytes, uint32_t align,
        MemRegion region, const char *what)
{
	Counted *c = (Counted *)st;
	c->bytes[tile] += bytes;
	if (c->bytes[tile] > c->most)
		c->most = c->bytes[tile];
	return number(&c->num->st, tile, bytes, align, region, what);
}

typedef struct {
	Plan *plan;
	const Graph *g;
	const Chip *chip;
	uint32_t tiles;
	Numbers num;
	TensorPlace **home; /* by tensor id */
	TensorPlace **made; /* every layout made here, to free */
	int nmade, capmade;
	uint32_t next_tile;       /* spread(): where the next partial layout
	                             starts */
	uint32_t *weight_bytes;   /* by tile: bytes of weights stored by
	                             the weight balance */
	uint32_t next_weight_row; /* the grid row of a weight's first chunk
	                             stored in its own GEMM's grid */
	uint32_t copy_room;       /* bytes a tile may give to weights stored
	                             on every tile that reads them (b_local) */
	uint32_t *copies;         /* by tile: such copies' bytes so far */
	uint32_t copies_max;      /* the most on one tile */
	int weights_many; /* the graph's weights take an eighth of a tile
	                     each or more */
	uint64_t weights; /* bytes of every weight of the graph, a loop's
	                     working region (one iteration's) counted too */
	const int32_t *loop_slot; /* by tensor: >= 0 for a weight of one
	                             layer of the loop (RepeatMap) */
	uint32_t loop_count;      /* the loop's layers (bank slots) */
	TensorPlace **slot;       /* a loop over groups: group g's carry in
	                             the bank, after the loop its last */
	int32_t carry;            /* while the loop's body is planned: its
	                             carry_in, whose home is then the carry's
	                             layout; else -1 */
	TensorPlace *carry_home;  /* carry_in's own home meanwhile */
	int32_t *last_read;       /* by tensor: the last op that reads it
	                             (g->nops for an output) */
	uint64_t *live_tile;      /* by tile: scratch of live_beside */
	uint32_t *buf_end;        /* by planner buffer: scratch of
	                             live_beside, the end of its pieces */
	int32_t nbuf_end;
	PlanHost b_host; /* the last GEMM's multiply, if plain and on this
	                    side of the loop's bounds: where a later weight
	                    B's exchange may go (PlanHeld) */
} Planner;

static TensorPlace *
keep(Planner *P, TensorPlace *tp)
{
	GROW(P->made, P->nmade, P->capmade);
	return P->made[P->nmade++] = tp;
}

/* Add text to the plan's description; a new op's after "; ". */
static void
describe(Planner *P, const char *text, int new_op)
{
	char *desc = P->plan->desc;
	size_t at = strlen(desc);
	if (new_op && at)
		snprintf(desc + at, PLAN_DESC_MAX - at, "; ");
	at = strlen(desc);
	snprintf(desc + at, PLAN_DESC_MAX - at, "%s", text);
}

int
plan_op_error(const Graph *g, const Op *op, int r, Diag *d)
{
	char what[GRAPH_MAX_NAME + 32];
	snprintf(what, sizeof what, "compile: %s %s", op_desc(op->kind)->name,
	         graph_tensor(g, op->out)->name);
	graph_diag_prefix(d, what);
	return r;
}

/* The first tile of a new layout of `pieces` pieces: layouts that use
 * part of the chip start where the last one ended, so that the work, the
 * exchanges and their code spread over the tiles instead of piling up on
 * tile 0 (a SigLIP layer's row-wise ops, per-head blocks). */
static uint32_t
spread(Planner *P, uint32_t pieces)
{
	if (pieces >= P->tiles)
		return 0;
	uint32_t t = P->next_tile % P->tiles;
	P->next_tile = t + pieces;
	return t;
}

/* The default layout of tensor id's view (rows x cols), from a tile
 * spread() chooses, into *tile0. */
static TensorPlace *
default_layout(Planner *P, int32_t id, uint32_t rows, uint32_t cols, DType dt,
               uint32_t *tile0)
{
	*tile0 = spread(P, layout_default_pieces(P->tiles, rows, cols));
	return keep(P, layout_default(&P->num.st, P->tiles, id, rows, cols, dt,
	                              *tile0));
}

/* The home of tensor id, in the default layout if it is an input or
 * weight that has none yet (its first tile into *tile0). */
static TensorPlace *
home_of(Planner *P, int32_t id, uint32_t *tile0)
{
	if (!P->home[id]) {
		const Tensor *t = graph_tensor(P->g, id);
		P->home[id] =
		    default_layout(P, id, tensor_view_rows(t),
		                   tensor_view_cols(t), t->elem.dtype, tile0);
	}
	return P->home[id];
}

/* 1 if the host writes tensor id's values (an input or weight), so that
 * a copy of it anywhere may be written by the host too; not the loop's
 * carry in its body, which the loop's last step rewrites each iteration. */
static int
host_writes(const Planner *P, int32_t id)
{
	const Tensor *t = graph_tensor(P->g, id);
	return (t->role == ROLE_INPUT || t->role == ROLE_WEIGHT) &&
	       id != P->carry;
}

/* Input or weight id, which has no home, is written by the host into
 * `want`: its home from now on, unless only this op can read that layout
 * (a GEMM's packed B, its transposed A): then a copy, and the next
 * consumer chooses the home. */
static void
host_writes_into(Planner *P, int32_t id, TensorPlace *want, Conv *c)
{
	if (layout_readable(want)) {
		P->home[id] = want;
		*c = (Conv){CONV_HOST, 0};
	} else {
		*c = (Conv){CONV_HOST_COPY, 0};
	}
}

/* A PlanMemo key: words. */
typedef struct {
	uint32_t *w;
	size_t n, cap;
} Key;

static void
key_add(Key *k, uint32_t v)
{
	GROW(k->w, k->n, k->cap);
	k->w[k->n++] = v;
}

static void
key_add64(Key *k, uint64_t v)
{
	key_add(k, (uint32_t)v);
	key_add(k, (uint32_t)(v >> 32));
}

/* Every field of tp that layout_moves reads (not the tensor's id, which
 * only its errors name), its buffers' numbers less the first piece's:
 * layout_moves only asks whether two pieces of one side share a buffer
 * (runs merge, a multicast's sources) and sorts by number within a tile,
 * and neither the merges nor the price (each tile's words) depends on
 * that order, so layouts numbered from elsewhere (another plan, whose
 * earlier ops made more buffers) price the same. */
static void
key_place(Key *k, const TensorPlace *tp)
{
	key_add(k, tp->rows);
	key_add(k, tp->cols);
	key_add(k, (uint32_t)tp->dtype);
	key_add(k, (uint32_t)tp->npiece);
	uint32_t base = tp->npiece ? (uint32_t)tp->piece[0].at.buf : 0;
	for (int i = 0; i < tp->npiece; i++) {
		const Piece *p = &tp->piece[i];
		uint32_t w[] = {p->tile,
		                (uint32_t)p->at.buf - base,
		                p->at.offset,
		                p->row0,
		                p->rows,
		                p->col0,
		                p->cols,
		                p->pad_rows,
		                p->pad_cols,
		                (uint32_t)p->format |
		                    (uint32_t)p->bt_panels << 8 |
		                    (uint32_t)p->vb_index << 16 |
		                    (uint32_t)p->vb_count << 24};
		for (size_t j = 0; j < sizeof w / sizeof *w; j++)
			key_add(k, w[j]);
	}
}

/* Every field of c that its map (layout_chain_map) reads. */
static void
key_chain(Key *k, const MapChain *c)
{
	key_add64(k, c->unit);
	if (!c->unit) /* no map */
		return;
	key_add(k, (uint32_t)c->n);
	for (int i = 0; i < c->n; i++) {
		key_add(k, c->slice[i]);
		if (c->slice[i]) {
			const RowSlice *s = &c->s[i];
			key_add(k, (uint32_t)s->rank);
			for (int a = 0; a < s->rank; a++) {
				key_add64(k, (uint64_t)s->in_dim[a]);
				key_add64(k, (uint64_t)s->begin[a]);
				key_add64(k, (uint64_t)s->end[a]);
			}
			key_add64(k, s->cols);
			key_add64(k, s->col_begin);
			key_add64(k, s->out_cols);
		} else {
			const RowPerm *r = &c->p[i];
			key_add(k, (uint32_t)r->rank);
			for (int a = 0; a < r->rank; a++) {
				key_add64(k, (uint64_t)r->in_dim[a]);
				key_add64(k, (uint64_t)r->out_stride[a]);
				key_add64(k, (uint64_t)r->perm[a]);
			}
			key_add64(k, r->cols);
		}
	}
}

/* The exchange that fills `to` from `from` through map (when it is a
 * MapChain's, `chain` that chain), priced (with its sync). The price is a
 * function of the two layouts, the map, the tiles and the sync: kept in
 * the compile's PlanMemo by exactly those where the map is none, the rows'
 * (layout_into_rows) or a chain's (the drafts, the loop carry's candidate
 * plans and the compile without the overlap price the same moves again);
 * an exchange that cannot is not kept (its error is said again). */
static int
price_move(const Planner *P, const TensorPlace *from, const TensorPlace *to,
           const FlatMap *map, const MapChain *chain, Conv *c, Diag *d)
{
	PlanMemo *memo = P->plan->opt.memo;
	if (map && map != &layout_into_rows && !chain)
		memo = NULL; /* a map the key does not say */
	Key k = {0};
	uint64_t cycles;
	if (memo) {
		key_add(&k, P->tiles);
		key_add64(&k, chip_rule(P->chip, TIMING_SYNC_INTERNAL));
		key_place(&k, from);
		key_place(&k, to);
		key_add(&k, map == &layout_into_rows);
		if (chain)
			key_chain(&k, chain);
		if (plan_memo_get(memo, k.w, k.n, &cycles)) {
			free(k.w);
			*c = (Conv){CONV_MOVE, cycles};
			return IPU_OK;
		}
	}
	Moves m = {0};
	int r = layout_moves(from, to, map, &m, d);
	if (!r) {
		*c = (Conv){CONV_MOVE,
		            layout_moves_cycles(&m, 0, P->tiles) +
		                chip_rule(P->chip, TIMING_SYNC_INTERNAL)};
		if (memo)
			plan_memo_put(memo, k.w, k.n, c->cycles);
	}
	free(k.w);
	moves_free(&m);
	return r;
}

/* How many times each byte of weight id is stored: the loop's layers for
 * a weight of one layer (the bank holds every layer's). */
static uint32_t
stored_times(const Planner *P, int32_t id)
{
	return P->loop_slot[id] >= 0 ? P->loop_count : 1;
}

/* A weight wanted in several copies (`want`: a bias next to every block,
 * LayerNorm's gamma and beta next to every piece of rows) that has no
 * home: the host writes every copy; but a loop weight, which the bank
 * holds once an iteration, or any when the weights take much of a tile
 * (copies the host writes live the whole program: So400m f8's position
 * embedding at batch 4, 18,720 bytes on a tile), is stored once, each
 * distinct block on the tile storing the fewest weight bytes (logged in
 * o->owners), and an exchange copies the blocks into `want`. */
static int
copies_home(Planner *P, int32_t id, TensorPlace *want, OpPlan *o, Conv *c,
            Diag *d)
{
	if (P->loop_slot[id] < 0 && !P->weights_many) {
		P->home[id] = want;
		*c = (Conv){CONV_HOST, 0};
		return IPU_OK;
	}
	TensorPlace *home = keep(
	    P, layout_loop_copies(&P->num.st, want, &o->owners, P->weight_bytes,
	                          P->tiles, stored_times(P, id)));
	P->home[id] = home;
	int r = price_move(P, home, want, NULL, NULL, c, d);
	c->kind = CONV_LOOP_COPIES;
	return r;
}

/* ---- matmul ------------------------------------------------------------ */

typedef struct {
	const Op *op;
	DType dt, dtype_b;
	uint32_t m, n, k, batches;
	int ta;                    /* A is stored transposed */
	const TensorPlace *a_home; /* where A is (NULL: the host writes it) */
	MapChain a_view;           /* A a view of a_home's tensor: the maps */
	uint32_t a_rows, a_cols;   /* A's 2-D view as the GEMM reads it */
} Matmul;

/* A's and B's layouts for one GEMM of plan p on `site` (and C's, when tc
 * is not NULL), their buffers from st. */
static void
gemm_layouts(Planner *P, Storage *st, const GemmPlan *p, GemmSite *site,
             TensorPlace *ta, TensorPlace *tb, TensorPlace *tc)
{
	GemmGeom G;
	site->tiles_all = P->tiles;
	plan_gemm_geom(&G, p, site);
	int32_t *a_in = xcalloc((size_t)G.pk * p->steps * G.pm * G.na,
	                        sizeof *a_in),
	        *b_in = xcalloc((size_t)G.pk * p->steps * G.pn * G.nb,
	                        sizeof *b_in),
	        *c_blk = xcalloc(P->tiles, sizeof *c_blk);
	plan_gemm_inputs(&G, st, ta, tb, a_in, b_in);
	for (uint32_t q = 0; tc && q < G.pk; q++)
		for (uint32_t i = 0; i < G.pm; i++)
			for (uint32_t j = 0; j < G.pn; j++) {
				uint32_t t = plan_gemm_tile(&G, q, i, j);
				c_blk[t] = st->buffer(
				    st, t, plan_gemm_c_block_bytes(&G, i, j),
				    16, REGION_INTERLEAVED, "C block");
			}
	if (tc)
		plan_gemm_c_pieces(&G, c_blk, tc);
	free(a_in);
	free(b_in);
	free(c_blk);
}

/* The cycles of bringing A from its home into the layout plan p wants
 * (its grid from tile 0), or UINT64_MAX if the exchange cannot. */
static uint64_t
relayout_price(Planner *P, const Matmul *mm, const GemmPlan *p)
{
	const TensorPlace *from = mm->a_home;
	TensorPlace *pa = tensor_place_new(mm->op->in[0], mm->a_rows,
	                                   mm->a_cols, from->dtype),
	            *pb = tensor_place_new(-1, 1, 1, mm->dtype_b);
	GemmSite site = {.ta = mm->ta, .tb = mm->op->attr.transpose_b};
	Numbers trial = {{number}, 0}; /* its buffers are nobody's */
	gemm_layouts(P, &trial.st, p, &site, pa, pb, NULL);
	Conv c;
	Diag dd;
	FlatMap map;
	uint64_t cost =
	    price_move(P, from, pa, layout_chain_map(&mm->a_view, &map),
	               &mm->a_view, &c, &dd)
	        ? UINT64_MAX
	        : c.cycles;
	tensor_place_free(pa);
	tensor_place_free(pb);
	return cost;
}

/* What an earlier plan's measure says of op (PLAN_FIT_*). */
static uint8_t
fit_of(const Planner *P, const Op *op)
{
	const uint8_t *fit = P->plan->opt.fit;
	return fit ? fit[op - P->g->ops] : 0;
}

/* Plan p at `cost` beats the best so far (none: best UINT64_MAX): for an
 * op measured too big for its tiles (PLAN_FIT_HALF), a plan within half
 * a tile before one over it; then the cheaper. */
static int
better(const Planner *P, const Matmul *mm, const GemmPlan *p, uint64_t cost,
       const GemmPlan *cur, uint64_t best)
{
	if (best == UINT64_MAX)
		return 1;
	const Chip *c = P->chip;
	uint32_t lim = fit_of(P, mm->op) & PLAN_FIT_HALF
	                   ? (uint32_t)(plan_tile_room(c) / 2)
	                   : 0;
	int over = lim && p->tile_bytes > lim,
	    cur_over = lim && cur->tile_bytes > lim;
	return over != cur_over ? !over : cost < best;
}

/* The activations live while the matmul at op index i runs, from the
 * planner's own layouts: every tensor other than a weight that has a home
 * by now and that an op after i reads (or the host, an output), as the
 * lowering keeps a tensor's buffers live from its producer to its last
 * reader (lower/program.c, trim_lifetimes). Its pieces' bytes are summed
 * on each tile, a buffer once (views share their base's buffers); the
 * most on one tile, since the GEMM's grid may take any tile. An input
 * whose first reader comes later has no home yet but is live from the
 * start (the host writes it): its default layout's rows on a tile. Not
 * counted: the relayouts' staging, other ops' argument blocks, the
 * loop's carries beyond their homes (the drafts measure those,
 * PlanOptions.beside). */
static uint64_t
live_beside(Planner *P, int i)
{
	const Graph *g = P->g;
	if (P->nbuf_end < P->num.next) {
		free(P->buf_end);
		P->nbuf_end = P->num.next;
		P->buf_end = xcalloc((size_t)P->nbuf_end, sizeof *P->buf_end);
	}
	if (P->nbuf_end) /* none yet: buf_end is NULL */
		memset(P->buf_end, 0, (size_t)P->nbuf_end * sizeof *P->buf_end);
	memset(P->live_tile, 0, (size_t)P->tiles * sizeof *P->live_tile);
	uint64_t unplaced = 0; /* inputs live from the start, no home yet */
	for (int32_t id = 0; id < g->ntensors; id++) {
		const TensorPlace *tp = P->home[id];
		const Tensor *t = graph_tensor(g, id);
		if (P->last_read[id] <= i || t->role == ROLE_WEIGHT)
			continue;
		if (!tp) {
			/* the default layout's rows on a tile: the host writes
			 * it where a reader after i wants it (if op i reads it
			 * too, into the GEMM's own layout as well, which its
			 * plan counts: a second copy, unless that reader takes
			 * the GEMM's layout as it is) */
			uint64_t rows = tensor_view_rows(t);
			if (t->role == ROLE_INPUT && rows)
				unplaced +=
				    (rows + P->tiles - 1) / P->tiles *
				    layout_pad_cols(tensor_view_cols(t)) *
				    (uint64_t)dtype_size(t->elem.dtype);
			continue;
		}
		uint32_t size = (uint32_t)dtype_size(tp->dtype);
		for (int k = 0; k < tp->npiece; k++) {
			const Piece *pc = &tp->piece[k];
			int32_t b = pc->at.buf;
			uint32_t end =
			    pc->at.offset + pc->pad_rows * pc->pad_cols * size;
			if (pc->tile >= P->tiles || b < 0 || b >= P->nbuf_end ||
			    end <= P->buf_end[b])
				continue;
			P->live_tile[pc->tile] += end - P->buf_end[b];
			P->buf_end[b] = end;
		}
	}
	uint64_t most = 0;
	for (uint32_t t = 0; t < P->tiles; t++)
		if (P->live_tile[t] > most)
			most = P->live_tile[t];
	return most + unplaced;
}

/* The data every tile of mm's grid holds for the rest of the program
 * while it runs (plan_gemm_top's held, the code aside): the share of
 * every weight but mm's own B (its chunks are in its plan's bytes), with
 * the slack of the balance's unit if weights are spread; or what a draft
 * measured there, if more (PlanOptions.beside). */
static uint64_t
held_data(Planner *P, const Matmul *mm)
{
	const Tensor *tb = graph_tensor(P->g, mm->op->in[1]);
	uint64_t own = tb->role == ROLE_WEIGHT
	                   ? (uint64_t)shape_elems(&tb->shape) *
	                         (uint64_t)dtype_size(tb->elem.dtype)
	                   : 0;
	uint64_t rest = P->weights > own ? P->weights - own : 0;
	/* a spread part goes to the tile of its column with the fewest
	 * bytes, so a tile holds at most the share and one part more */
	uint64_t part = P->weights_many
	                    ? (uint64_t)B_PART_KPANELS *
	                          gemm_k_panel(gemm_dtype_of(tb->elem.dtype)) *
	                          GEMM_COLS * dtype_size(tb->elem.dtype) *
	                          stored_times(P, tb->id)
	                    : 0;
	uint64_t share = rest / (P->tiles ? P->tiles : 1) + part +
	                 live_beside(P, (int)(mm->op - P->g->ops));
	const uint32_t *beside = P->plan->opt.beside;
	uint64_t drafted = beside ? beside[mm->op - P->g->ops] : 0;
	return drafted > share ? drafted : share;
}

/* held_data and the code an earlier plan or draft measured. */
static uint64_t
held_for(Planner *P, const Matmul *mm)
{
	return held_data(P, mm) + P->plan->held_code;
}

/* What every GEMM's budget starts from (held_for): the weights with the
 * loop's working region, and the most code measured on a tile. */
static void
held_budget(Planner *P)
{
	for (int32_t id = 0; id < P->g->ntensors; id++) {
		const Tensor *t = graph_tensor(P->g, id);
		uint64_t bytes = (uint64_t)shape_elems(&t->shape) *
		                 (uint64_t)dtype_size(t->elem.dtype);
		if (t->role == ROLE_WEIGHT)
			P->weights += bytes;
		/* the working region holds an iteration's weights again */
		if (P->loop_slot[id] >= 0 &&
		    P->loop_slot[id] < P->plan->loop.nweights)
			P->weights += bytes;
	}
	P->plan->held_code =
	    plan_code_beyond(P->chip, P->plan->opt.code, P->tiles);
}

/* What the copy budget leaves on the tile with the most copies: a
 * GEMM's grid may cover any tile, and one that starts at tile 0 covers
 * the tiles of every earlier one on the whole chip, so this is the budget
 * the sum of all copies left before when they overlapped. */
static uint32_t
copy_left(const Planner *P)
{
	return P->copy_room > P->copies_max ? P->copy_room - P->copies_max : 0;
}

/* Plan g's last multiply as a host for a later weight B's exchange
 * (lower_b_under's can_host: plain, one K on every call), `group` GEMMs
 * side by side: 1 and *h, else 0. */
static int
host_of(const GemmPlan *g, uint32_t group, PlanHost *h)
{
	if (g->overlap || !g->steps)
		return 0;
	GemmGeom G;
	plan_gemm_geom(&G, g, &(GemmSite){0});
	/* each K group's call in the last superstep */
	uint32_t bk = 0, k0;
	for (uint32_t q = 0; q < g->pk; q++) {
		uint32_t kq = plan_gemm_k_of(&G, q, g->steps - 1, &k0);
		if (q && kq != bk)
			return 0;
		bk = kq;
	}
	uint32_t tiles = g->pk * g->pm * g->pn * (group ? group : 1);
	*h = (PlanHost){.cycles = g->compute_cycles,
	                .t = G.g,
	                .bm = g->bm,
	                .bm_last = plan_gemm_rows(&G, g->pm - 1),
	                .bn = g->bn,
	                .bk = bk,
	                .tiles = tiles,
	                .cover = tiles};
	return 1;
}

/* The weight GEMM whose B a multiply at op index i would host: the next
 * matmul in the same part of the graph (the loop's body, before or after
 * it) whose B is a weight with no home, of one batch, priced beside a
 * host (no copy budget: choose_gemm); the matmuls between are assumed to
 * host none, or with `next` there must be none between (a matmul between
 * is the host: qkv's multiply hosts no B, PV's hosts out_proj's). Its
 * shape in *y; 0 if none. */
static int
hosted_after(const Planner *P, int i, int next, Matmul *y)
{
	const Graph *g = P->g;
	const RepeatMap *rm = &P->plan->loop;
	int end = g->nops;
	if (rm->count && i < rm->first)
		end = rm->first;
	else if (rm->count && i < rm->first + rm->len)
		end = rm->first + rm->len;
	for (int j = i + 1; j < end; j++) {
		const Op *op = &g->ops[j];
		if (op->kind != OP_MATMUL)
			continue;
		const Tensor *a = graph_tensor(g, op->in[0]),
		             *b = graph_tensor(g, op->in[1]);
		if (b->role != ROLE_WEIGHT || P->home[b->id] ||
		    shape_batches(&a->shape) != 1 || copy_left(P)) {
			if (next)
				return 0;
			continue;
		}
		int ra = a->shape.rank, rb = b->shape.rank,
		    ta = op->attr.transpose_a, tb = op->attr.transpose_b;
		*y = (Matmul){.op = op,
		              .dt = a->elem.dtype,
		              .dtype_b = b->elem.dtype,
		              .m = (uint32_t)a->shape.dim[ra - (ta ? 1 : 2)],
		              .k = (uint32_t)a->shape.dim[ra - (ta ? 2 : 1)],
		              .n = (uint32_t)b->shape.dim[rb - (tb ? 2 : 1)],
		              .batches = 1};
		return 1;
	}
	return 0;
}

/* Batched GEMMs side by side, `group` at a time, whose best plan on
 * their tiles is *plan: the candidate of the fewest cycles with the
 * weight GEMM whose B their multiply would host (hosted_after), that one
 * priced on the whole chip beside each candidate's multiply. A grid of
 * more tiles may cost a little in its own steps and host all that B (the
 * So400m attention's QK^T: 16 x 9 x 10 tiles hold out_proj's grid of
 * 1,440, 16 x 7 x 12 left 216 of its 864 B transfers in their
 * exchange). */
static void
choose_host(Planner *P, const Matmul *mm, uint32_t group, int made,
            const PlanHeld *held, GemmPlan *plan)
{
	Matmul y;
	if (!P->plan->opt.b_under || group < 2 ||
	    !hosted_after(P, (int)(mm->op - P->g->ops), 0, &y))
		return;
	GemmPlan cand[GEMM_CANDIDATES];
	int n;
	Diag d;
	if (plan_gemm_top(P->chip, P->tiles / group, mm->dt, mm->m, mm->n,
	                  mm->k, 0, made, held, cand, GEMM_CANDIDATES, &n, &d))
		return;
	uint64_t rounds = (mm->batches + group - 1) / group, best = UINT64_MAX;
	PlanHeld hy = {.bytes = held_for(P, &y)};
	int yo = P->plan->opt.gemm_overlap ? PLAN_GEMM_OVERLAP : 0;
	for (int i = 0; i < n; i++) {
		GemmPlan p;
		hy.b_host = (PlanHost){0};
		host_of(&cand[i], group, &hy.b_host);
		if (plan_gemm(P->chip, P->tiles, y.dt, y.m, y.n, y.k, 0, yo,
		              &hy, &p, &d))
			continue;
		uint64_t cost = rounds * cand[i].cycles + p.cycles;
		if (better(P, mm, &cand[i], cost, plan, best)) {
			best = cost;
			*plan = cand[i];
		}
	}
}

/* A single GEMM's overlapped *plan at `cost` against its cheapest plain
 * candidate (`plain` at `plain_cost`), each with the next matmul's weight
 * GEMM priced beside it (hosted_after): an overlapped multiply hosts no
 * B (host_of), so that B goes back to its own exchange, which neither
 * plan's price sees (fc1 overlapped in 3 supersteps of K 96 saves 227
 * cycles a layer of the So400m f8 tower and costs fc2's exchange 4,964:
 * docs/bench-siglip.md, b1ovl). The plain one is taken if its sum is
 * the smaller. */
static void
overlap_or_host(Planner *P, const Matmul *mm, GemmPlan *plan, uint64_t cost,
                const GemmPlan *plain, uint64_t plain_cost)
{
	Matmul y;
	if (!plan->overlap || plain_cost == UINT64_MAX ||
	    !P->plan->opt.b_under ||
	    !hosted_after(P, (int)(mm->op - P->g->ops), 1, &y))
		return;
	PlanHeld hy = {.bytes = held_for(P, &y)};
	GemmPlan with, without;
	Diag d;
	host_of(plain, 1, &hy.b_host);
	if (plan_gemm(P->chip, P->tiles, y.dt, y.m, y.n, y.k, 0,
	              PLAN_GEMM_OVERLAP, &hy, &with, &d))
		return;
	hy.b_host = (PlanHost){0};
	if (plan_gemm(P->chip, P->tiles, y.dt, y.m, y.n, y.k, 0,
	              PLAN_GEMM_OVERLAP, &hy, &without, &d))
		return;
	if (better(P, mm, plain, plain_cost + with.cycles, plan,
	           cost + without.cycles))
		*plan = *plain;
}

/* The plan for `batches` GEMMs of m x n x k: for each group size g (1 to
 * 16, the powers of two, all of them at once), one GEMM planned on tiles /
 * g tiles, priced as ceil(batches / g) rounds; the cheapest. A single GEMM
 * whose A has a home is priced with the exchange that brings A. */
static int
choose_gemm(Planner *P, const Matmul *mm, GemmPlan *plan, uint32_t *group,
            GemmTried *tried, Diag *d)
{
	const Chip *chip = P->chip;
	uint32_t tiles = P->tiles;
	uint64_t best = UINT64_MAX;
	/* a weight the host writes may be written to every tile that reads
	 * it, while the budget lasts, unless an earlier plan's copies were
	 * measured too many for a tile of this GEMM */
	const Tensor *tb = graph_tensor(P->g, mm->op->in[1]);
	uint32_t local = mm->batches == 1 && tb->role == ROLE_WEIGHT &&
	                         !P->home[tb->id] &&
	                         !(fit_of(P, mm->op) & PLAN_FIT_NO_COPIES)
	                     ? copy_left(P)
	                     : 0;
	/* B with a home is packed on the device */
	MapChain bv;
	int made = P->home[plan_view_of(P->g, tb->id, &bv)] != NULL
	               ? PLAN_GEMM_B_MADE
	               : 0;
	if (P->plan->opt.gemm_overlap &&
	    !(fit_of(P, mm->op) & PLAN_FIT_NO_OVERLAP))
		made |= PLAN_GEMM_OVERLAP;
	const PlanBeside *bb =
	    P->plan->opt.beside_bufs
	        ? &P->plan->opt.beside_bufs[mm->op - P->g->ops]
	        : NULL;
	/* B beside the last multiply is priced so (GemmPlan.b_host) only
	 * where no copy may store it on every tile: against such a plan,
	 * which exchanges no B, the priced sixth proved too little (an f32
	 * loop of two 128^3 GEMMs on 8 tiles took a 2 x 4 grid with B beside
	 * for 1 x 8 with copies: 219,687 cycles predicted against 216,876,
	 * the host slower by 1,142 and the loop's weight copy by 1,026) */
	PlanHeld h = {.bytes = held_for(P, mm),
	              .buf = bb ? bb->buf : NULL,
	              .n = bb ? bb->n : 0,
	              .tried = tried,
	              .b_host = mm->batches == 1 && tb->role == ROLE_WEIGHT &&
	                                !P->home[tb->id] && !local
	                            ? P->b_host
	                            : (PlanHost){0}},
	         *held = &h;
	tried->held = h.bytes;
	if (mm->batches == 1 && mm->a_home) {
		GemmPlan cand[GEMM_CANDIDATES];
		int n;
		int r = plan_gemm_top(chip, tiles, mm->dt, mm->m, mm->n, mm->k,
		                      local, made, held, cand, GEMM_CANDIDATES,
		                      &n, d);
		GemmPlan plain = {0};
		uint64_t plain_cost = UINT64_MAX;
		for (int i = 0; !r && i < n; i++) {
			uint64_t move = relayout_price(P, mm, &cand[i]);
			if (move == UINT64_MAX)
				continue;
			if (better(P, mm, &cand[i], cand[i].cycles + move, plan,
			           best)) {
				best = cand[i].cycles + move;
				*plan = cand[i];
				*group = 1;
			}
			if (!cand[i].overlap &&
			    better(P, mm, &cand[i], cand[i].cycles + move,
			           &plain, plain_cost)) {
				plain_cost = cand[i].cycles + move;
				plain = cand[i];
			}
		}
		if (!r && best != UINT64_MAX)
			overlap_or_host(P, mm, plan, best, &plain, plain_cost);
		if (r || best != UINT64_MAX)
			return r;
	}
	for (uint32_t g = 1; g <= mm->batches && g <= tiles; g++) {
		if (g > 16 && (g & (g - 1)) && g != mm->batches)
			continue;
		GemmPlan p;
		Diag dd;
		if (plan_gemm(chip, tiles / g, mm->dt, mm->m, mm->n, mm->k,
		              local,
		              made | (mm->batches > 1 ? PLAN_GEMM_ANY_PK : 0),
		              held, &p, &dd))
			continue;
		uint64_t cost =
		    (uint64_t)((mm->batches + g - 1) / g) * p.cycles;
		if (better(P, mm, &p, cost, plan, best)) {
			best = cost;
			*plan = p;
			*group = g;
		}
	}
	if (best == UINT64_MAX) /* none fits: the whole chip's plan's error */
		return plan_gemm(chip, tiles, mm->dt, mm->m, mm->n, mm->k, 0,
		                 made, held, plan, d);
	choose_host(P, mm, *group,
	            made | (mm->batches > 1 ? PLAN_GEMM_ANY_PK : 0), held,
	            plan);
	return IPU_OK;
}

static int
check_matmul(Planner *P, const Op *op, OpPlan *o, Matmul *mm, Diag *d)
{
	const Tensor *a = graph_tensor(P->g, op->in[0]),
	             *bt = graph_tensor(P->g, op->in[1]),
	             *c = graph_tensor(P->g, op->out);
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
	if (dtype_is_f8(a->elem.dtype) && P->chip->arch != ARCH_IPU21)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: f8 needs an ipu21 chip; %s is %s",
		                P->chip->name, P->chip->arch_name);
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
		home_of(P, op->in[0], &o->in_tile0);
	int tra = op->attr.transpose_a, trb = op->attr.transpose_b;
	int ra = a->shape.rank, rb = bt->shape.rank;
	*mm = (Matmul){.op = op,
	               .dt = a->elem.dtype,
	               .dtype_b = bt->elem.dtype,
	               .m = (uint32_t)a->shape.dim[ra - (tra ? 1 : 2)],
	               .k = (uint32_t)a->shape.dim[ra - (tra ? 2 : 1)],
	               .n = (uint32_t)bt->shape.dim[rb - (trb ? 2 : 1)],
	               .batches = (uint32_t)batches,
	               .ta = tra,
	               .a_rows = tensor_view_rows(a),
	               .a_cols = tensor_view_cols(a)};
	mm->a_home = P->home[plan_view_of(P->g, op->in[0], &mm->a_view)];
	return IPU_OK;
}

/* A transposed operand A that has a home is transposed on the device
 * into a default layout of its own, [M x K] per batch, which the GEMM
 * then reads as an untransposed A. */
static int
untranspose_a(Planner *P, OpPlan *o, Matmul *mm, Diag *d)
{
	const Tensor *a = graph_tensor(P->g, mm->op->in[0]);
	if (dtype_is_f8(a->elem.dtype))
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "compile: matmul %s: operand A (%s) is f8, "
		    "transposed and already on the device; there is "
		    "no f8 transpose kernel yet",
		    graph_tensor(P->g, mm->op->out)->name, a->name);
	int r = ew_supported(EW_TRANSPOSE, a->elem.dtype, a->elem.dtype, d);
	if (r)
		return r;
	mm->a_home = default_layout(P, a->id, mm->batches * mm->m, mm->k,
	                            a->elem.dtype, &o->a_tile0);
	mm->ta = 0;
	mm->a_rows = mm->a_home->rows;
	mm->a_cols = mm->a_home->cols;
	return IPU_OK;
}

/* After a matmul o: its last multiply, if a host (host_of), is where a
 * later weight B's exchange may go, priced by its call (PlanHost), for a
 * grid within its tiles. An overlapped multiply hosts none. One whose K
 * groups end with a shorter K (PV's 4 x 160 + 89) is passed over, as
 * lower_b_under passes it: the host before it stays, unless o's own B
 * took it. */
static void
host_after(Planner *P, const OpPlan *o)
{
	const GemmPlan *g = &o->gemm;
	if (!P->plan->opt.b_under || g->overlap || !g->steps) {
		P->b_host = (PlanHost){0};
		return;
	}
	PlanHost h;
	if (host_of(g, o->group, &h))
		P->b_host = h;
	else if (g->b_host.cycles)
		P->b_host = (PlanHost){0};
}

/* 1 if op's B is made on the device: the cast of blocks of B's weight
 * panels (layout_segments' vb, their padding column kept with V's ones:
 * the lowering's keep_zeroed), or packed by pack_b_f8, which writes the
 * ones (PackCall.one); GemmPlan.norm_cols. */
static int
b_on_device(Planner *P, const Op *op)
{
	MapChain c;
	return P->home[plan_view_of(P->g, op->in[1], &c)] != NULL;
}

static int
plan_matmul_op(Planner *P, const Op *op, OpPlan *o, Diag *d)
{
	Matmul mm = {0};
	int r = check_matmul(P, op, o, &mm, d);
	if (!r && mm.ta && mm.a_home) {
		r = untranspose_a(P, o, &mm, d);
		o->in[0].kind = CONV_TRANSPOSE;
	}
	if (!r) {
		o->tried = xcalloc(1, sizeof *o->tried);
		r = choose_gemm(P, &mm, &o->gemm, &o->group, o->tried, d);
	}
	if (r)
		return r;
	if (o->group != 1) /* batched GEMMs share their steps */
		o->gemm.overlap = 0;
	if (o->gemm.pk > 1 && b_on_device(P, op))
		o->gemm.norm_cols = plan_matmul_norm_cols(P->g, op);
	/* its last multiply may take a later weight B's exchange
	 * (lower_b_under: a plain multiply, every call of one K) */
	host_after(P, o);
	o->held = held_data(P, &mm);
	const GemmPlan *plan = &o->gemm;
	char text[512];
	plan_gemm_describe(plan, text, sizeof text);
	describe(P, text, 1);
	if (mm.batches > 1) {
		snprintf(text, sizeof text,
		         "; %u batches, %u at a time side by side", mm.batches,
		         o->group);
		describe(P, text, 0);
	}
	/* a GEMM on part of the chip starts where the last partial layout
	 * ended, on an even tile (exchange pairs are tiles 2k, 2k + 1) */
	uint32_t one = plan->pk * plan->pm * plan->pn, used = one * o->group;
	o->tile0 = 0;
	if (used < P->tiles) {
		o->tile0 = P->next_tile % P->tiles & ~1u;
		if (o->tile0 + used > P->tiles)
			o->tile0 = 0;
		P->next_tile = o->tile0 + used;
	}
	/* weight copies take their bytes on each tile of the grid */
	for (uint32_t t = o->tile0; plan->b_local && t < o->tile0 + used; t++) {
		P->copies[t] += (uint32_t)plan_gemm_b_local_bytes(plan);
		if (P->copies[t] > P->copies_max)
			P->copies_max = P->copies[t];
	}
	/* a weight is written once and kept (unless b_local), so that the
	 * weights of a model do not pile up: when they are many, or the GEMM
	 * is on less than half of the chip, its chunks go over the whole
	 * chip; otherwise they stay in the grid, where the plan prices their
	 * sends, on rows that rotate from weight to weight */
	const Tensor *tb = graph_tensor(P->g, op->in[1]),
	             *tc = graph_tensor(P->g, op->out);
	int weight_b =
	    tb->role == ROLE_WEIGHT && !P->home[tb->id] && !plan->b_local;
	o->spread_b =
	    (uint8_t)(weight_b && (P->weights_many || 2 * used < P->tiles));
	if (weight_b && !o->spread_b) {
		o->b_rows_from = P->next_weight_row;
		P->next_weight_row += plan->steps;
	}
	/* the layouts of every GEMM (the batches in rounds of group) */
	TensorPlace *pa = keep(P, tensor_place_new(op->in[0], mm.a_rows,
	                                           mm.a_cols, mm.dt)),
	            *pb = keep(P, tensor_place_new(
	                              op->in[1], tensor_view_rows(tb),
	                              tensor_view_cols(tb), tb->elem.dtype)),
	            *pc = keep(
	                P, tensor_place_new(op->out, tensor_view_rows(tc),
	                                    tensor_view_cols(tc),
	                                    mm.dt == DT_F32 ? DT_F32 : DT_F16));
	for (uint32_t bi = 0; bi < mm.batches; bi++) {
		GemmSite site = {.tile_base = o->tile0 + bi % o->group * one,
		                 .ta = mm.ta,
		                 .tb = op->attr.transpose_b,
		                 .batch = bi,
		                 .spread_b = o->spread_b,
		                 .stored = P->weight_bytes,
		                 .b_times = stored_times(P, op->in[1]),
		                 .b_rows_from = o->b_rows_from,
		                 .owners = &o->owners};
		gemm_layouts(P, &P->num.st, plan, &site, pa, pb, pc);
	}
	/* how B and A get there */
	if (b_on_device(P, op)) {
		o->in[1].kind = CONV_PACK;
	} else {
		host_writes_into(P, op->in[1], pb, &o->in[1]);
	}
	if (mm.a_home) {
		Conv c;
		FlatMap map;
		r = price_move(P, mm.a_home, pa,
		               layout_chain_map(&mm.a_view, &map), &mm.a_view,
		               &c, d);
		if (r)
			return r;
		o->in[0] =
		    (Conv){o->in[0].kind == CONV_TRANSPOSE ? CONV_TRANSPOSE
		                                           : CONV_MOVE,
		           c.cycles};
	} else {
		host_writes_into(P, op->in[0], pa, &o->in[0]);
	}
	P->home[op->out] = pc;
	return IPU_OK;
}

/* ---- layout ops -------------------------------------------------------- */

/* The output of a reshape, transpose or slice: the same elements moved
 * by `map` into a new default layout, in one exchange; from the tensor
 * its input views, if it is a view (with the view's maps and its own). */
static int
move_op(Planner *P, const Op *op, OpPlan *o, const FlatMap *map, Diag *d)
{
	const Tensor *t = graph_tensor(P->g, op->out);
	MapChain c;
	FlatMap cm;
	int32_t base = plan_move_of(P->g, op, &c);
	TensorPlace *from =
	    c.unit ? P->home[base] : home_of(P, op->in[0], &o->in_tile0);
	if (c.unit)
		map = layout_chain_map(&c, &cm);
	uint32_t bounds[PLAN_SEGMENTS_MAX + 1];
	int nseg = plan_row_segments(P->g, op->out, bounds);
	TensorPlace *to;
	if (nseg) { /* read by slices of its rows: each spread over the chip */
		uint32_t bt[PLAN_SEGMENTS_MAX], vb[PLAN_SEGMENTS_MAX];
		for (int k = 0; k < nseg; k++) {
			bt[k] = plan_segment_bt_rows(P->g, op->out, bounds, k);
			vb[k] = plan_segment_vb_rows(P->g, op->out, bounds, k,
			                             NULL);
		}
		o->tile0 = P->next_tile;
		to = keep(P,
		          layout_segments(&P->num.st, P->tiles, op->out,
		                          tensor_view_rows(t),
		                          tensor_view_cols(t), t->elem.dtype,
		                          bounds, nseg, &P->next_tile, bt, vb));
	} else {
		to = default_layout(P, op->out, tensor_view_rows(t),
		                    tensor_view_cols(t), t->elem.dtype,
		                    &o->tile0);
	}
	int r = price_move(P, from, to, map, NULL, &o->in[0], d);
	P->home[op->out] = to;
	return r;
}

/* 1 if op may be a view (plan_op_is_view) by its kind and types alone:
 * a reshape, a transpose that keeps the last axis, a slice of whole
 * rows, of a computed tensor, every last axis of whole 32-bit words
 * (the chain's unit then is too) */
static int
view_kind(const Graph *g, const Op *op)
{
	const Tensor *in = graph_tensor(g, op->in[0]),
	             *out = graph_tensor(g, op->out);
	int last = in->shape.rank - 1;
	if (op->kind == OP_TRANSPOSE ? op->attr.perm.dim[last] != last
	    : op->kind == OP_SLICE
	        ? op->attr.begin.dim[last] != 0 ||
	              op->attr.end.dim[last] != in->shape.dim[last]
	        : op->kind != OP_RESHAPE)
		return 0;
	uint32_t es = (uint32_t)dtype_size(in->elem.dtype);
	return in->producer >= 0 && tensor_view_cols(in) * es % 4 == 0 &&
	       tensor_view_cols(out) * es % 4 == 0;
}

/* Layout ops of view_kind in a row above op (op included). */
static int
chain_length(const Graph *g, const Op *op)
{
	int n = 0;
	for (; view_kind(g, op);
	     op = &g->ops[graph_tensor(g, op->in[0])->producer])
		n++;
	return n;
}

/* For a slice of whole rows that keeps a contiguous range of its input's
 * rows (axes of one index, then one axis cut, then whole axes): 1 and
 * the range [*r0, *r1) of the input's view; else 0. */
static int
slice_rows(const Graph *g, const Op *op, uint32_t *r0, uint32_t *r1)
{
	if (op->kind != OP_SLICE)
		return 0;
	const Shape *s = &graph_tensor(g, op->in[0])->shape,
	            *b = &op->attr.begin, *e = &op->attr.end;
	int last = s->rank - 1, a = 0;
	if (b->dim[last] != 0 || e->dim[last] != s->dim[last])
		return 0;
	while (a < last && e->dim[a] - b->dim[a] == 1)
		a++;
	for (int i = a + 1; i < last; i++)
		if (b->dim[i] != 0 || e->dim[i] != s->dim[i])
			return 0;
	uint64_t first = 0, n = 1;
	for (int i = 0; i < last; i++)
		first = first * (uint64_t)s->dim[i] + (uint64_t)b->dim[i];
	for (int i = a; i < last; i++)
		n *= (uint64_t)(e->dim[i] - b->dim[i]);
	*r0 = (uint32_t)first;
	*r1 = (uint32_t)(first + n);
	return 1;
}

int
plan_row_segments(const Graph *g, int32_t id, uint32_t *bounds)
{
	const Tensor *t = graph_tensor(g, id);
	if (t->producer < 0 || t->role == ROLE_OUTPUT)
		return 0;
	const Op *p = &g->ops[t->producer];
	int last = t->shape.rank - 1;
	if (!(p->kind == OP_RESHAPE || p->kind == OP_SLICE ||
	      (p->kind == OP_TRANSPOSE && p->attr.perm.dim[last] == last)) ||
	    plan_op_is_view(g, p) || plan_op_aliases(g, p))
		return 0;
	int32_t at = graph_repeat_iteration(&g->repeat, t->producer);
	uint32_t r[(PLAN_SEGMENTS_MAX - 1) / 2][2];
	int n = 0;
	for (int i = 0; i < g->nops; i++) {
		const Op *c = &g->ops[i];
		int reads = 0;
		for (int k = 0; k < GRAPH_MAX_INPUTS; k++)
			reads += c->in[k] == id;
		if (!reads)
			continue;
		if (n == (PLAN_SEGMENTS_MAX - 1) / 2 || c->in[0] != id ||
		    reads > 1 || !slice_rows(g, c, &r[n][0], &r[n][1]) ||
		    graph_tensor(g, c->out)->role == ROLE_OUTPUT ||
		    graph_repeat_iteration(&g->repeat, i) != at)
			return 0;
		/* in order of their first rows, apart */
		int j = n++;
		for (; j > 0 && r[j - 1][0] > r[j][0]; j--) {
			uint32_t x0 = r[j][0], x1 = r[j][1];
			r[j][0] = r[j - 1][0];
			r[j][1] = r[j - 1][1];
			r[j - 1][0] = x0;
			r[j - 1][1] = x1;
		}
	}
	if (!n)
		return 0;
	int m = 0;
	bounds[0] = 0;
	for (int j = 0; j < n; j++) {
		if (r[j][0] < bounds[m])
			return 0; /* overlapping slices */
		if (r[j][0] > bounds[m])
			bounds[++m] = r[j][0]; /* rows no slice reads */
		bounds[++m] = r[j][1];
	}
	if (bounds[m] < tensor_view_rows(t))
		bounds[++m] = (uint32_t)tensor_view_rows(t);
	return m;
}

int
plan_slice_segment(const Graph *g, const Op *op, uint32_t *r0, uint32_t *r1)
{
	uint32_t bounds[PLAN_SEGMENTS_MAX + 1];
	return slice_rows(g, op, r0, r1) &&
	       plan_row_segments(g, op->in[0], bounds) > 0;
}

int
plan_slice_alias(const Graph *g, const Op *op, const TensorPlace *from,
                 TensorPlace **to, Diag *d)
{
	uint32_t r0, r1;
	*to = plan_slice_segment(g, op, &r0, &r1)
	          ? layout_row_range(from, op->out, r0, r1)
	          : NULL;
	return *to ? IPU_OK
	           : plan_op_error(g, op,
	                           diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                                    "not its input's segment's "
	                                    "pieces (an internal error)"),
	                           d);
}

int
plan_op_is_view(const Graph *g, const Op *op)
{
	uint32_t r0, r1;
	if (plan_slice_segment(g, op, &r0, &r1))
		return 0; /* made as its segment of the input's pieces */
	if (!view_kind(g, op) || chain_length(g, op) >= LAYOUT_CHAIN_MAX)
		return 0;
	const Tensor *t = graph_tensor(g, op->out);
	int32_t at = graph_repeat_iteration(&g->repeat, (int32_t)(op - g->ops));
	if (t->role == ROLE_OUTPUT ||
	    graph_repeat_iteration(&g->repeat,
	                           graph_tensor(g, op->in[0])->producer) != at)
		return 0;
	/* one reader, in the same iteration: a matmul reading it as an
	 * untransposed A or as B (packed on the device), or a layout op of
	 * view_kind (itself a view, or an exchange from the viewed tensor) */
	int readers = 0;
	for (int i = 0; i < g->nops; i++) {
		const Op *c = &g->ops[i];
		int a = c->in[0] == t->id, b = 0;
		for (int k = 1; k < GRAPH_MAX_INPUTS; k++)
			b += c->in[k] == t->id;
		if (!a && !b)
			continue;
		if (readers++ || a + b > 1 ||
		    graph_repeat_iteration(&g->repeat, i) != at)
			return 0;
		if (c->kind == OP_MATMUL ? a && c->attr.transpose_a
		                         : b || !view_kind(g, c))
			return 0;
	}
	return 1;
}

/* The maps of op (a reshape, a transpose that keeps the last axis or a
 * slice of whole rows) appended to c. */
static void
chain_add(const Graph *g, const Op *op, MapChain *c)
{
	const Tensor *in = graph_tensor(g, op->in[0]);
	uint64_t a = c->unit ? c->unit : tensor_view_cols(in),
	         b = tensor_view_cols(graph_tensor(g, op->out));
	while (b) { /* the greatest common divisor */
		uint64_t r = a % b;
		a = b;
		b = r;
	}
	c->unit = a;
	if (op->kind == OP_TRANSPOSE)
		layout_row_perm(&c->p[c->n++], &in->shape, &op->attr.perm);
	else if (op->kind == OP_SLICE) {
		c->slice[c->n] = 1;
		layout_row_slice(&c->s[c->n++], &in->shape, &op->attr.begin,
		                 &op->attr.end);
	}
}

int32_t
plan_view_of(const Graph *g, int32_t id, MapChain *c)
{
	const Op *chain[LAYOUT_CHAIN_MAX];
	int n = 0;
	memset(c, 0, sizeof *c);
	for (const Tensor *t = graph_tensor(g, id);
	     t->producer >= 0 && plan_op_is_view(g, &g->ops[t->producer]);
	     t = graph_tensor(g, id)) {
		chain[n++] = &g->ops[t->producer];
		id = chain[n - 1]->in[0];
	}
	while (n)
		chain_add(g, chain[--n], c);
	return id;
}

int32_t
plan_move_of(const Graph *g, const Op *op, MapChain *c)
{
	int32_t id = plan_view_of(g, op->in[0], c);
	if (c->unit)
		chain_add(g, op, c);
	return id;
}

int
plan_op_aliases(const Graph *g, const Op *op)
{
	const Tensor *in = graph_tensor(g, op->in[0]),
	             *out = graph_tensor(g, op->out);
	if (op->kind == OP_RESHAPE) /* of a view: no pieces to alias */
		return tensor_view_cols(in) == tensor_view_cols(out) &&
		       !(in->producer >= 0 &&
		         plan_op_is_view(g, &g->ops[in->producer]));
	uint32_t r0, r1;
	if (op->kind == OP_SLICE)
		return plan_slice_segment(g, op, &r0, &r1);
	if (op->kind != OP_CAST)
		return 0;
	if (in->elem.dtype == out->elem.dtype &&
	    in->elem.scale == out->elem.scale)
		return 1;
	if (in->producer < 0)
		return 0;
	const Op *p = &g->ops[in->producer];
	return (p->kind == OP_GELU ? plan_gelu_fused_cast(g, p)
	        : p->kind == OP_LAYERNORM || p->kind == OP_NORM
	            ? plan_layernorm_fused_cast(g, p)
	            : plan_softmax_fused_cast(g, p)) == (int32_t)(op - g->ops);
}

EwOp
plan_unary_kernel(const Graph *g, const Op *op)
{
	return op->kind == OP_CAST       ? EW_CAST
	       : op->kind == OP_RELU     ? EW_RELU
	       : plan_gelu_in_f16(g, op) ? EW_GELU_H
	                                 : EW_GELU;
}

int
plan_gelu_in_f16(const Graph *g, const Op *op)
{
	const Tensor *t = graph_tensor(g, op->out);
	if (op->kind != OP_GELU || t->elem.dtype != DT_F16 ||
	    t->role == ROLE_OUTPUT)
		return 0;
	int readers = 0;
	for (int i = 0; i < g->nops; i++) {
		const Op *c = &g->ops[i];
		for (int k = 0; k < GRAPH_MAX_INPUTS; k++) {
			if (c->in[k] != op->out)
				continue;
			if (c->kind != OP_CAST ||
			    !dtype_is_f8(graph_tensor(g, c->out)->elem.dtype))
				return 0;
			readers++;
		}
	}
	return readers > 0;
}

/* 1 if tensor id goes to the host or to no op at all, or some reader
 * does not lead it to casts to f8 (through reshapes, transposes and
 * concats and at most `matmuls` matmuls). */
static int
read_past_f8(const Graph *g, int32_t id, int matmuls)
{
	if (graph_tensor(g, id)->role == ROLE_OUTPUT)
		return 1;
	int readers = 0;
	for (int i = 0; i < g->nops; i++) {
		const Op *c = &g->ops[i];
		for (int k = 0; k < GRAPH_MAX_INPUTS; k++) {
			if (c->in[k] != id)
				continue;
			readers++;
			int ok = c->kind == OP_CAST
			             ? dtype_is_f8(
			                   graph_tensor(g, c->out)->elem.dtype)
			         : c->kind == OP_RESHAPE ||
			                 c->kind == OP_TRANSPOSE ||
			                 c->kind == OP_CONCAT
			             ? !read_past_f8(g, c->out, matmuls)
			         : c->kind == OP_MATMUL && matmuls > 0
			             ? !read_past_f8(g, c->out, matmuls - 1)
			             : 0;
			if (!ok)
				return 1;
		}
	}
	return !readers;
}

int
plan_softmax_in_f16(const Graph *g, const Op *op)
{
	return op->kind == OP_SOFTMAX &&
	       graph_tensor(g, op->out)->elem.dtype == DT_F16 &&
	       !read_past_f8(g, op->out, 1);
}

int32_t
plan_one_reader(const Graph *g, int32_t id)
{
	int32_t r = -1;
	for (int i = 0; i < g->nops; i++)
		for (int k = 0; k < GRAPH_MAX_INPUTS; k++)
			if (g->ops[i].in[k] == id) {
				if (r >= 0)
					return -1;
				r = i;
			}
	return r;
}

/* The index of op's one reader if it is a cast to f8 in op's iteration
 * of the graph's repeat (or both outside it); else -1. */
static int32_t
one_f8_cast(const Graph *g, const Op *op)
{
	int32_t cast = plan_one_reader(g, op->out);
	/* Both in the same iteration or both outside the loop: a loop body
	 * runs its own ops each time, so a cast at the body's start that
	 * reads a GELU or softmax made before the loop (the carry) must
	 * stay a cast. */
	if (cast < 0 || g->ops[cast].kind != OP_CAST ||
	    !dtype_is_f8(graph_tensor(g, g->ops[cast].out)->elem.dtype) ||
	    graph_repeat_iteration(&g->repeat, cast) !=
	        graph_repeat_iteration(&g->repeat, (int32_t)(op - g->ops)))
		return -1;
	return cast;
}

/* The one reader of tensor id if it is op kind `kind` in iteration
 * `at` of the graph's repeat; else -1. */
static int32_t
reader_in(const Graph *g, int32_t id, OpKind kind, int32_t at)
{
	int32_t r = plan_one_reader(g, id);
	if (r < 0 || g->ops[r].kind != kind ||
	    graph_repeat_iteration(&g->repeat, r) != at)
		return -1;
	return r;
}

/* plan_segment_bt_rows (tb 1) and plan_segment_vb_rows (tb 0). */
static uint32_t
segment_b_rows(const Graph *g, int32_t id, const uint32_t *bounds, int s,
               int tb, int32_t *mm)
{
	const Tensor *in = graph_tensor(g, id);
	int32_t at = graph_repeat_iteration(&g->repeat, in->producer);
	int32_t sl = -1;
	for (int i = 0; i < g->nops && sl < 0; i++) {
		uint32_t r0, r1;
		if (g->ops[i].in[0] == id &&
		    slice_rows(g, &g->ops[i], &r0, &r1) && r0 == bounds[s] &&
		    r1 == bounds[s + 1])
			sl = i;
	}
	/* Piece.bt_panels counts a block's panels in a byte */
	if (sl < 0 || in->elem.dtype != DT_F16 ||
	    tensor_view_cols(in) > 255 * LAYOUT_BT_COLS)
		return 0;
	int32_t t = g->ops[sl].out, c;
	int last = in->shape.rank - 1;
	/* through reshapes that keep the last axis (aliases) */
	while ((c = reader_in(g, t, OP_RESHAPE, at)) >= 0) {
		const Tensor *o = graph_tensor(g, g->ops[c].out);
		if (o->shape.dim[o->shape.rank - 1] != in->shape.dim[last])
			return 0;
		t = g->ops[c].out;
	}
	c = reader_in(g, t, OP_CAST, at);
	if (c < 0)
		return 0;
	const Tensor *k8 = graph_tensor(g, g->ops[c].out);
	int32_t m = reader_in(g, k8->id, OP_MATMUL, at);
	if (!dtype_is_f8(k8->elem.dtype) || k8->role == ROLE_OUTPUT ||
	    k8->shape.rank < 2 || m < 0 || g->ops[m].in[1] != k8->id ||
	    g->ops[m].in[0] == k8->id || !g->ops[m].attr.transpose_b != !tb)
		return 0;
	uint32_t rows = (uint32_t)k8->shape.dim[k8->shape.rank - 2];
	*mm = m;
	return rows && (bounds[s + 1] - bounds[s]) % rows == 0 ? rows : 0;
}

uint32_t
plan_segment_bt_rows(const Graph *g, int32_t id, const uint32_t *bounds, int s)
{
	int32_t m;
	return segment_b_rows(g, id, bounds, s, 1, &m);
}

uint32_t
plan_segment_vb_rows(const Graph *g, int32_t id, const uint32_t *bounds, int s,
                     int32_t *matmul)
{
	const Tensor *t = graph_tensor(g, id);
	int32_t m = -1;
	/* even columns: the blocks' f16 rows are whole 32-bit words */
	uint32_t rows = tensor_view_cols(t) % 2
	                    ? 0
	                    : segment_b_rows(g, id, bounds, s, 0, &m);
	if (matmul)
		*matmul = rows ? m : -1;
	return rows;
}

int32_t
plan_gelu_fused_cast(const Graph *g, const Op *op)
{
	return plan_gelu_in_f16(g, op) ? one_f8_cast(g, op) : -1;
}

int32_t
plan_softmax_fused_cast(const Graph *g, const Op *op)
{
	return plan_softmax_in_f16(g, op) ? one_f8_cast(g, op) : -1;
}

uint8_t
plan_f8_one(ElemType e)
{
	Fp8Format f = dtype_fp8_format(e.dtype);
	unsigned flags = 0;
	uint8_t q = fp_f64_to_f8(1.0, f, e.scale, FP_OV_SAT, &flags);
	return fp_f8_to_f64(q, f, e.scale) == 1.0 ? q : 0;
}

uint32_t
plan_matmul_norm_cols(const Graph *g, const Op *op)
{
	if (op->kind != OP_MATMUL || op->attr.transpose_a ||
	    op->attr.transpose_b)
		return 0;
	const Tensor *a = graph_tensor(g, op->in[0]),
	             *bt = graph_tensor(g, op->in[1]);
	uint32_t n = (uint32_t)bt->shape.dim[bt->shape.rank - 1];
	if (!dtype_is_f8(bt->elem.dtype) || n % GEMM_COLS == 0 || n % 4 ||
	    !plan_f8_one(bt->elem) || a->producer < 0 ||
	    plan_one_reader(g, op->in[0]) != op - g->ops)
		return 0;
	int32_t cast = a->producer,
	        sm = graph_tensor(g, g->ops[cast].in[0])->producer;
	return sm >= 0 && g->ops[sm].kind == OP_SOFTMAX &&
	               plan_softmax_fused_cast(g, &g->ops[sm]) == cast
	           ? n
	           : 0;
}

/* 1 if op is an f16 layernorm (or norm) of rows of a multiple of 8,
 * not the graph's output, whose one reader is a cast to f8 in any
 * iteration: the unrolled graph fuses the two (rw_layernorm_f16h8). */
static int
layernorm_to_f8(const Graph *g, const Op *op)
{
	const Tensor *x = graph_tensor(g, op->in[0]),
	             *t = graph_tensor(g, op->out);
	if ((op->kind != OP_LAYERNORM && op->kind != OP_NORM) ||
	    x->elem.dtype != DT_F16 || t->elem.dtype != DT_F16 ||
	    t->role == ROLE_OUTPUT || t->shape.dim[t->shape.rank - 1] % 8 != 0)
		return 0;
	int32_t cast = plan_one_reader(g, op->out);
	return cast >= 0 && g->ops[cast].kind == OP_CAST &&
	       dtype_is_f8(graph_tensor(g, g->ops[cast].out)->elem.dtype);
}

int32_t
plan_layernorm_fused_cast(const Graph *g, const Op *op)
{
	return layernorm_to_f8(g, op) ? one_f8_cast(g, op) : -1;
}

/* 1 if op's kernel takes its f16 arithmetic (EW_GELU_H, rw_softmax_f16h,
 * rw_layernorm_f16h8) in the graph as written out, whatever its repeat
 * (`unrolled`), or in a loop's body (else), where a layernorm takes it
 * only fused with a cast of its own iteration. */
static int
f16_arithmetic(const Graph *g, const Op *op, int unrolled)
{
	switch (op->kind) {
	case OP_GELU:
		return plan_gelu_in_f16(g, op);
	case OP_SOFTMAX:
		return plan_softmax_in_f16(g, op);
	case OP_LAYERNORM:
	case OP_NORM:
		return unrolled ? layernorm_to_f8(g, op)
		                : plan_layernorm_fused_cast(g, op) >= 0;
	default:
		return 0;
	}
}

int
plan_loop_same_arithmetic(const Graph *g, const RepeatMap *rm, Diag *d)
{
	for (int32_t i = rm->first; rm->count && i < rm->first + rm->len; i++) {
		const Op *body = &g->ops[i];
		int loop = f16_arithmetic(g, body, 0),
		    same = loop == f16_arithmetic(g, body, 1);
		/* each group's last iteration is read after the loop */
		for (int32_t k = rm->count - rm->groups; same && k < rm->count;
		     k++)
			same = loop ==
			       f16_arithmetic(g, &g->ops[i + k * rm->len], 1);
		if (same)
			continue;
		return plan_op_error(
		    g, body,
		    diag_set(d, IPU_EINVAL, NULL, 0, 0,
		             "repeat: the loop's body cannot run this op "
		             "with the arithmetic it takes unrolled (its "
		             "result %s a cast to f8 in another iteration "
		             "or after the loop; docs/compiler.md "
		             "\"Loops\"): remove the repeat line",
		             loop ? "does not always go to" : "goes to"),
		    d);
	}
	return IPU_OK;
}

/* op's output in the pieces of `from`. */
static int
alias_pieces(Planner *P, const Op *op, const TensorPlace *from)
{
	const Tensor *out = graph_tensor(P->g, op->out);
	TensorPlace *to =
	    keep(P, tensor_place_new(op->out, tensor_view_rows(out),
	                             tensor_view_cols(out), out->elem.dtype));
	for (int k = 0; k < from->npiece; k++)
		*layout_piece(to) = from->piece[k];
	P->home[op->out] = to;
	return IPU_OK;
}

/* An op that changes nothing in memory (plan_op_aliases): the output is
 * the input's pieces. */
static int
alias_op(Planner *P, const Op *op, OpPlan *o)
{
	return alias_pieces(P, op, home_of(P, op->in[0], &o->in_tile0));
}

static int
plan_reshape_op(Planner *P, const Op *op, OpPlan *o, Diag *d)
{
	if (plan_op_is_view(P->g, op)) /* its reader reads the viewed tensor */
		return IPU_OK;
	if (plan_op_aliases(P->g, op))
		return alias_op(P, op, o);
	return move_op(P, op, o, NULL, d);
}

static int
plan_transpose_op(Planner *P, const Op *op, OpPlan *o, Diag *d)
{
	const Tensor *in = graph_tensor(P->g, op->in[0]),
	             *out = graph_tensor(P->g, op->out);
	const Shape *perm = &op->attr.perm;
	if (plan_op_is_view(P->g, op))
		return IPU_OK;
	if (perm->dim[in->shape.rank - 1] == in->shape.rank - 1) {
		RowPerm p;
		FlatMap map = layout_row_perm(&p, &in->shape, perm);
		return move_op(P, op, o, &map, d);
	}
	/* the last axis moves: rows, 2-D transposes, rows (lower/transpose.c)
	 */
	home_of(P, op->in[0], &o->in_tile0);
	P->home[op->out] =
	    default_layout(P, op->out, tensor_view_rows(out),
	                   tensor_view_cols(out), out->elem.dtype, &o->tile0);
	o->in[0].kind = CONV_TRANSPOSE;
	int r = ew_supported(EW_TRANSPOSE, out->elem.dtype, out->elem.dtype, d);
	return r ? plan_op_error(P->g, op, r, d) : IPU_OK;
}

/* A slice is an exchange that moves only the rows inside it, and of
 * each row the columns inside it. */
static int
plan_slice_op(Planner *P, const Op *op, OpPlan *o, Diag *d)
{
	const Tensor *in = graph_tensor(P->g, op->in[0]);
	uint32_t r0, r1;
	if (plan_slice_segment(P->g, op, &r0, &r1)) { /* its segment's pieces */
		TensorPlace *to;
		int r = plan_slice_alias(
		    P->g, op, home_of(P, op->in[0], &o->in_tile0), &to, d);
		if (!r)
			P->home[op->out] = keep(P, to);
		return r;
	}
	if (plan_op_is_view(P->g, op))
		return IPU_OK;
	RowSlice s;
	FlatMap map =
	    layout_row_slice(&s, &in->shape, &op->attr.begin, &op->attr.end);
	return move_op(P, op, o, &map, d);
}

/* A concat along an axis before the last: one exchange moves the rows of
 * both inputs into the output's default layout (b's home, if it is an
 * input or weight placed here, starts at a_tile0); joining along the last
 * axis would need runs within rows (not yet). */
static int
plan_concat_op(Planner *P, const Op *op, OpPlan *o, Diag *d)
{
	const Tensor *a = graph_tensor(P->g, op->in[0]),
	             *b = graph_tensor(P->g, op->in[1]),
	             *t = graph_tensor(P->g, op->out);
	if (op->attr.axis == a->shape.rank - 1)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: concat %s: joined along the last "
		                "axis; only axes before it are supported so "
		                "far",
		                t->name);
	TensorPlace *from[2] = {home_of(P, op->in[0], &o->in_tile0),
	                        home_of(P, op->in[1], &o->a_tile0)};
	TensorPlace *to =
	    default_layout(P, op->out, tensor_view_rows(t), tensor_view_cols(t),
	                   t->elem.dtype, &o->tile0);
	int r = 0;
	for (int k = 0; k < 2 && !r; k++) {
		RowConcat c;
		FlatMap map = layout_row_concat(&c, &a->shape, &b->shape,
		                                op->attr.axis, k);
		r = price_move(P, from[k], to, &map, NULL, &o->in[k], d);
	}
	P->home[op->out] = to;
	return r;
}

/* ---- elementwise ------------------------------------------------------- */

/* out = op(x) on x's pieces: cast, gelu, relu. */
static int
plan_unary_op(Planner *P, const Op *op, OpPlan *o, Diag *d)
{
	const Tensor *x = graph_tensor(P->g, op->in[0]),
	             *t = graph_tensor(P->g, op->out);
	EwOp ew = plan_unary_kernel(P->g, op);
	if (plan_op_aliases(P->g, op))
		return alias_op(P, op, o); /* a cast to its own type */
	/* a GELU that writes its cast's f8 result: its home has the f8 type */
	int32_t fc = op->kind == OP_GELU ? plan_gelu_fused_cast(P->g, op) : -1;
	DType to = fc >= 0 ? graph_tensor(P->g, P->g->ops[fc].out)->elem.dtype
	                   : t->elem.dtype;
	int r = ew_supported(ew, x->elem.dtype, to, d);
	if (r)
		return plan_op_error(P->g, op, r, d);
	TensorPlace *from = home_of(P, op->in[0], &o->in_tile0);
	P->home[op->out] = keep(
	    P, layout_mirror(&P->num.st, from, op->out, to, 0, "tensor block"));
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

int32_t
plan_matmul_bias_add(const Graph *g, const Op *op)
{
	const Tensor *c = graph_tensor(g, op->out);
	if (op->kind != OP_MATMUL || c->elem.dtype != DT_F16 ||
	    c->role == ROLE_OUTPUT ||
	    shape_batches(&graph_tensor(g, op->in[0])->shape) != 1)
		return -1;
	int32_t add = plan_one_reader(g, op->out);
	if (add < 0)
		return -1;
	const Op *a = &g->ops[add];
	int32_t ib = a->in[0] == op->out ? a->in[1] : a->in[0];
	const Tensor *t = graph_tensor(g, a->out), *b = graph_tensor(g, ib);
	if (a->kind != OP_ADD || ib == op->out || t->elem.dtype != DT_F16 ||
	    b->elem.dtype != DT_F16 || shape_equal(&b->shape, &t->shape) ||
	    !row_broadcast(&b->shape, &t->shape) ||
	    graph_repeat_iteration(&g->repeat, add) !=
	        graph_repeat_iteration(&g->repeat, (int32_t)(op - g->ops)))
		return -1;
	return add;
}

/* The largest slice of plan p's reduction, its segments and the rows
 * between its panels in C. */
static GemmSlice
largest_slice(const GemmPlan *p, uint32_t *best, uint32_t *nseg, uint32_t *pad)
{
	uint32_t np = gemm_n_panels(p->bn);
	GemmSlice s = {0};
	*best = 0;
	for (uint32_t q = 0; q < p->pk; q++) {
		GemmSlice t =
		    plan_gemm_slice(np, p->bm, p->pk, q, p->norm_cols > 0);
		if (t.panels * t.rows > *best) {
			*best = t.panels * t.rows;
			s = t;
		}
	}
	*nseg = plan_gemm_slice_segments(&s, p->bm);
	*pad = *nseg > 1 ? p->bm : s.rows;
	return s;
}

/* The add of an f16 operand to C's slice s (its panels pad rows apart):
 * a bias row (bcast) or a block laid out as C. */
static EwCall
slice_add(const GemmSlice *s, uint32_t pad, int bcast)
{
	uint32_t row = GEMM_COLS * 2;
	return (EwCall){.op = EW_ADD,
	                .in = DT_F16,
	                .out = DT_F16,
	                .nseg = s->panels,
	                .rows = s->rows,
	                .cols = GEMM_COLS,
	                .dst = {0, pad * row, row},
	                .a = {0, pad * row, row},
	                .b = bcast ? (EwRef){0, row, 0}
	                           : (EwRef){0, pad * row, row}};
}

/* 1 if the reduction of plan p adds a bias in fewer cycles than its
 * vadd and a bias add after it (the broadcast's sync aside), on its
 * largest slice: vadd_bias shares whole rows, which on a few rows a
 * worker costs more than it saves. */
static int
bias_pays(const Chip *c, const GemmPlan *p)
{
	uint32_t best, nseg, pad;
	GemmSlice s = largest_slice(p, &best, &nseg, &pad);
	EwCall add = slice_add(&s, pad, 1);
	uint64_t fused = vadd_cycles(c, s.rows * VADD_ROW_ATOMS, p->pk - 1,
	                             s.panels, 1),
	         apart = vadd_cycles(c, best * VADD_ROW_ATOMS / nseg, p->pk - 1,
	                             nseg, 0) +
	                 ew_cycles(c, &add);
	return fused < apart;
}

/* 1 if the residual pays in the reduction of plan p, whose bias is
 * there: vadd_bias_res_f16 against vadd_bias_f16 and the add after it
 * (the operand's exchange aside), on its largest slice. */
static int
res_pays(const Chip *c, const GemmPlan *p)
{
	uint32_t best, nseg, pad;
	GemmSlice s = largest_slice(p, &best, &nseg, &pad);
	EwCall add = slice_add(&s, pad, 0);
	uint32_t atoms = s.rows * VADD_ROW_ATOMS;
	return vadd_cycles(c, atoms, p->pk - 1, s.panels, 2) <
	       vadd_cycles(c, atoms, p->pk - 1, s.panels, 1) +
	           ew_cycles(c, &add);
}

/* The matmul whose bias add is op (plan_matmul_bias_add), or -1. */
static int32_t
bias_add_matmul(const Graph *g, const Op *op)
{
	if (op->kind != OP_ADD)
		return -1;
	for (int k = 0; k < 2; k++) {
		int32_t p = graph_tensor(g, op->in[k])->producer;
		if (p >= 0 && plan_matmul_bias_add(g, &g->ops[p]) ==
		                  (int32_t)(op - g->ops))
			return p;
	}
	return -1;
}

int
plan_bias_in_reduction(const Plan *plan, const Op *op)
{
	int32_t p = bias_add_matmul(plan->g, op);
	if (p < 0)
		return 0;
	const GemmPlan *gp = &plan->op[p].gemm;
	/* not with the row division (vadd_norm_f16 has no bias pass) */
	return gp->pk > 1 && !gp->norm_cols && bias_pays(plan->chip, gp);
}

/* The step after a reduction that its last pass may take over: ew (C's
 * f16 in, f8 `to` out, laid out as C) over slice s (its panels pad rows
 * apart). */
static EwCall
slice_to_f8(EwOp ew, DType to, const GemmSlice *s, uint32_t pad)
{
	return (EwCall){.op = ew,
	                .in = DT_F16,
	                .out = to,
	                .nseg = s->panels,
	                .rows = s->rows,
	                .cols = GEMM_COLS,
	                .dst = {0, pad * GEMM_COLS, GEMM_COLS},
	                .a = {0, pad * GEMM_COLS * 2, GEMM_COLS * 2}};
}

/* 1 if the reduction of plan p pays with the GELU and its cast to f8
 * (`to`) fused: vadd_bias_gelu_f16_f8 against vadd_bias_f16 and the GELU
 * step after it (ew_gelu_f16_f8 over the slice), on its largest slice. */
static int
gelu_pays(const Chip *c, const GemmPlan *p, DType to)
{
	uint32_t best, nseg, pad;
	GemmSlice s = largest_slice(p, &best, &nseg, &pad);
	uint32_t atoms = s.rows * VADD_ROW_ATOMS;
	EwCall gelu = slice_to_f8(EW_GELU_H, to, &s, pad);
	return vadd_cycles(c, atoms, p->pk - 1, s.panels, 3) <
	       vadd_cycles(c, atoms, p->pk - 1, s.panels, 1) +
	           ew_cycles(c, &gelu);
}

/* 1 if the row division's reduction of plan p pays with the cast to f8
 * (`to`) fused: vadd_norm_f16_f8 against vadd_norm_f16 and the cast step
 * after it (ew_cast_f16_f8 over the slice), on its largest slice. */
static int
norm_cast_pays(const Chip *c, const GemmPlan *p, DType to)
{
	uint32_t best, nseg, pad;
	GemmSlice s = largest_slice(p, &best, &nseg, &pad);
	uint32_t atoms = s.rows * VADD_ROW_ATOMS;
	EwCall cast = slice_to_f8(EW_CAST, to, &s, pad);
	return vadd_cycles(c, atoms, p->pk - 1, s.panels, VADD_NORM_F8) <
	       vadd_norm_cycles(c, atoms, p->pk - 1, s.panels) +
	           ew_cycles(c, &cast);
}

int32_t
plan_reduction_cast(const Plan *plan, const Op *mm)
{
	const Graph *g = plan->g;
	int32_t i = (int32_t)(mm - g->ops);
	if (plan->opt.no_cast_in_reduction || mm->kind != OP_MATMUL)
		return -1;
	const GemmPlan *gp = &plan->op[i].gemm;
	const Tensor *c = graph_tensor(g, mm->out);
	int32_t cast = plan_one_reader(g, mm->out);
	if (gp->pk < 2 || !gp->norm_cols || c->elem.dtype != DT_F16 ||
	    c->role == ROLE_OUTPUT || cast < 0 ||
	    g->ops[cast].kind != OP_CAST ||
	    graph_repeat_iteration(&g->repeat, cast) !=
	        graph_repeat_iteration(&g->repeat, i))
		return -1;
	const Tensor *q = graph_tensor(g, g->ops[cast].out);
	if (!dtype_is_f8(q->elem.dtype) || q->elem.scale < -32 ||
	    q->elem.scale > 31 ||
	    !norm_cast_pays(plan->chip, gp, q->elem.dtype))
		return -1;
	return cast;
}

int
plan_cast_in_reduction(const Plan *plan, const Op *op)
{
	int32_t mm = op->kind == OP_CAST
	                 ? graph_tensor(plan->g, op->in[0])->producer
	                 : -1;
	return mm >= 0 && plan_reduction_cast(plan, &plan->g->ops[mm]) ==
	                      (int32_t)(op - plan->g->ops);
}

/* The GELU that is the one reader of bias add `add` (in its iteration,
 * add's result not the graph's output) and writes its cast's f8
 * (plan_gelu_fused_cast), or -1. */
static int32_t
bias_add_gelu(const Graph *g, const Op *add)
{
	int32_t gl = plan_one_reader(g, add->out);
	if (gl < 0 || graph_tensor(g, add->out)->role == ROLE_OUTPUT ||
	    graph_repeat_iteration(&g->repeat, gl) !=
	        graph_repeat_iteration(&g->repeat, (int32_t)(add - g->ops)))
		return -1;
	const Op *op = &g->ops[gl];
	return op->kind == OP_GELU && plan_gelu_fused_cast(g, op) >= 0 ? gl
	                                                               : -1;
}

int32_t
plan_reduction_gelu(const Plan *plan, const Op *add)
{
	const Graph *g = plan->g;
	if (plan->opt.no_gelu_in_reduction ||
	    !plan_bias_in_reduction(plan, add))
		return -1;
	int32_t gl = bias_add_gelu(g, add);
	if (gl < 0)
		return -1;
	int32_t fc = plan_gelu_fused_cast(g, &g->ops[gl]);
	const GemmPlan *gp = &plan->op[bias_add_matmul(g, add)].gemm;
	DType to = graph_tensor(g, g->ops[fc].out)->elem.dtype;
	if ((gp->pk - 1) % 3 || !gelu_pays(plan->chip, gp, to))
		return -1;
	return gl;
}

int
plan_gelu_in_reduction(const Plan *plan, const Op *op)
{
	int32_t a = op->kind == OP_GELU
	                ? graph_tensor(plan->g, op->in[0])->producer
	                : -1;
	return a >= 0 && plan_reduction_gelu(plan, &plan->g->ops[a]) ==
	                     (int32_t)(op - plan->g->ops);
}

int32_t
plan_bias_gelu(const Plan *plan, const Op *add)
{
	if (plan->opt.no_gelu_in_reduction ||
	    bias_add_matmul(plan->g, add) < 0 ||
	    plan_bias_in_reduction(plan, add))
		return -1;
	return bias_add_gelu(plan->g, add);
}

int
plan_gelu_after_bias(const Plan *plan, const Op *op)
{
	int32_t a = op->kind == OP_GELU
	                ? graph_tensor(plan->g, op->in[0])->producer
	                : -1;
	return a >= 0 && plan_bias_gelu(plan, &plan->g->ops[a]) ==
	                     (int32_t)(op - plan->g->ops);
}

int32_t
plan_bias_add_residual(const Graph *g, const Op *mm, const Op *add)
{
	const Tensor *t = graph_tensor(g, add->out);
	if (t->role == ROLE_OUTPUT)
		return -1;
	int32_t res = plan_one_reader(g, add->out);
	if (res < 0)
		return -1;
	const Op *r = &g->ops[res];
	int32_t ih = r->in[0] == add->out ? r->in[1] : r->in[0];
	const Tensor *u = graph_tensor(g, r->out), *h = graph_tensor(g, ih);
	if (r->kind != OP_ADD || ih == add->out || u->elem.dtype != DT_F16 ||
	    h->elem.dtype != DT_F16 || !shape_equal(&h->shape, &t->shape) ||
	    !shape_equal(&u->shape, &t->shape) ||
	    h->producer >= (int32_t)(mm - g->ops) ||
	    graph_repeat_iteration(&g->repeat, res) !=
	        graph_repeat_iteration(&g->repeat, (int32_t)(add - g->ops)))
		return -1;
	return res;
}

int32_t
plan_residual_c_input(const Plan *plan, const Op *op)
{
	const Graph *g = plan->g;
	if (op->kind != OP_ADD)
		return -1;
	for (int k = 0; k < 2; k++) {
		int32_t a = graph_tensor(g, op->in[k])->producer;
		if (a < 0 || !plan_bias_in_reduction(plan, &g->ops[a]))
			continue;
		int32_t mm = bias_add_matmul(g, &g->ops[a]);
		if (plan_bias_add_residual(g, &g->ops[mm], &g->ops[a]) ==
		        (int32_t)(op - g->ops) &&
		    res_pays(plan->chip, &plan->op[mm].gemm))
			return op->in[k];
	}
	return -1;
}

int
plan_residual_in_reduction(const Plan *plan, const Op *op)
{
	return plan_residual_c_input(plan, op) >= 0;
}

/* out = a op b on a's pieces (add, mul, max): b next to them, or one row of it
 * next to each (a bias). */
static int
plan_binary_op(Planner *P, const Op *op, OpPlan *o, Diag *d)
{
	int ia = op->in[0], ib = op->in[1], swap = 0;
	const Tensor *t = graph_tensor(P->g, op->out);
	int res = plan_residual_in_reduction(P->plan, op);
	if (res ? plan_residual_c_input(P->plan, op) != ia
	        : !shape_equal(&graph_tensor(P->g, ia)->shape, &t->shape)) {
		/* on a's pieces: for a residual in the reduction, C's */
		ia = op->in[1];
		ib = op->in[0];
		swap = 1;
	}
	const Shape *sb = &graph_tensor(P->g, ib)->shape;
	int bcast = !shape_equal(sb, &t->shape);
	if (!shape_equal(&graph_tensor(P->g, ia)->shape, &t->shape) ||
	    (bcast && !row_broadcast(sb, &t->shape)))
		return plan_op_error(P->g, op,
		                     diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                              "broadcasting other than one row "
		                              "(a bias) down a tensor is not "
		                              "supported yet"),
		                     d);
	DType dt = t->elem.dtype;
	EwOp ew = op->kind == OP_ADD   ? EW_ADD
	          : op->kind == OP_MUL ? EW_MUL
	                               : EW_MAX;
	int r = ew_supported(ew, dt, dt, d);
	if (r)
		return plan_op_error(P->g, op, r, d);
	Conv *ca = &o->in[swap], *cb = &o->in[!swap];
	TensorPlace *pa = home_of(P, ia, &o->in_tile0);
	if (ia == ib ||
	    (P->home[ib] && !bcast && layout_same(P->home[ib], pa))) {
		*cb = (Conv){CONV_NONE, 0};
	} else {
		TensorPlace *pb =
		    keep(P, layout_mirror(&P->num.st, pa, ib, dt, bcast,
		                          "operand block"));
		if (!P->home[ib]) {
			r = copies_home(P, ib, pb, o, cb, d);
		} else if (host_writes(P, ib)) {
			*cb = (Conv){CONV_HOST_COPY, 0};
		} else {
			r = price_move(P, P->home[ib], pb, NULL, NULL, cb, d);
		}
		if (r)
			return plan_op_error(P->g, op, r, d);
	}
	*ca = (Conv){CONV_NONE, 0};
	if (res || plan_bias_in_reduction(P->plan, op))
		return alias_pieces(P, op, pa); /* added in C's reduction */
	if (plan_bias_gelu(P->plan, op) >= 0)
		return alias_pieces(P, op, pa); /* added in the GELU's pass */
	P->home[op->out] = keep(
	    P, layout_mirror(&P->num.st, pa, op->out, dt, 0, "tensor block"));
	return IPU_OK;
}

/* ---- row-wise ---------------------------------------------------------- */

/* layernorm, norm, softmax: x in pieces of whole rows, moved there when
 * its home is not like that (or, an input seen here first, written there
 * by the host); a layernorm's gamma and beta one row next to each piece
 * (a norm has none: its kernel writes its cast's f8 only). */
static int
plan_rowwise_op(Planner *P, const Op *op, OpPlan *o, Diag *d)
{
	const Tensor *x = graph_tensor(P->g, op->in[0]);
	DType dt = x->elem.dtype;
	int r = IPU_OK;
	TensorPlace *px = P->home[x->id];
	o->in[0] = (Conv){CONV_NONE, 0};
	RwOp rw = op->kind == OP_SOFTMAX ? RW_SOFTMAX : RW_LAYERNORM;
	if (op->kind == OP_NORM && plan_layernorm_fused_cast(P->g, op) < 0)
		return plan_op_error(
		    P->g, op,
		    diag_set(d, IPU_EINVAL, NULL, 0, 0,
		             "a norm (layernorm without gamma and beta) "
		             "runs only as an f16 row of a multiple of 8 "
		             "read by one cast to f8 "
		             "(rw_layernorm_f16h8n)"),
		    d);
	if (!px || !layout_rowwise_reads(px, rw)) {
		o->tile0 = spread(P, tensor_view_rows(x));
		TensorPlace *rows =
		    keep(P, layout_rowwise_in(&P->num.st, P->tiles, x->id,
		                              tensor_view_rows(x),
		                              tensor_view_cols(x), dt, o->tile0,
		                              rw));
		if (px) {
			r = price_move(P, px, rows, &layout_into_rows, NULL,
			               &o->in[0], d);
		} else {
			P->home[x->id] = rows;
			o->in[0].kind = CONV_HOST;
		}
		px = rows;
	}
	for (int i = 0; i < 2 && !r && op->kind == OP_LAYERNORM; i++) {
		int32_t id = op->in[1 + i];
		TensorPlace *pv = keep(
		    P, layout_mirror(&P->num.st, px, id, dt, 1, "operand row"));
		if (!P->home[id]) /* the host writes each copy */
			r = copies_home(P, id, pv, o, &o->in[1 + i], d);
		else
			r = price_move(P, P->home[id], pv, NULL, NULL,
			               &o->in[1 + i], d);
	}
	if (!r && dt != DT_F32 && dt != DT_F16)
		r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
		             "the row-wise kernels take f32 and f16, not %s",
		             dtype_name(dt));
	if (r)
		return plan_op_error(P->g, op, r, d);
	/* a softmax or layernorm that writes its cast's f8 result: its
	 * home has the f8 type */
	int32_t fc = op->kind == OP_SOFTMAX
	                 ? plan_softmax_fused_cast(P->g, op)
	                 : plan_layernorm_fused_cast(P->g, op);
	DType to =
	    fc >= 0 ? graph_tensor(P->g, P->g->ops[fc].out)->elem.dtype : dt;
	P->home[op->out] =
	    keep(P, layout_rowwise_out(&P->num.st, px, op->out, rw, to));
	return IPU_OK;
}

/* ---- gather ------------------------------------------------------------ */

/* A gather: its table in column blocks, the ids next to each, the output
 * in the same blocks (layout_gather); an input without a home is written
 * there by the host, one with a home moved there (or written there too,
 * by the host that wrote its home). */
static int
plan_gather_op(Planner *P, const Op *op, OpPlan *o, Diag *d)
{
	const Tensor *tab = graph_tensor(P->g, op->in[0]),
	             *ids = graph_tensor(P->g, op->in[1]);
	uint32_t v = (uint32_t)tab->shape.dim[0],
	         dcols = (uint32_t)tab->shape.dim[1],
	         n = (uint32_t)ids->shape.dim[0];
	uint32_t w = layout_gather_block(P->tiles, dcols);
	uint64_t block =
	    (uint64_t)v * w * (uint64_t)dtype_size(tab->elem.dtype);
	int r = IPU_OK;
	if (block > PLAN_GATHER_TABLE_MAX)
		r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
		             "a table block of %llu bytes a tile (at most %d)",
		             (unsigned long long)block, PLAN_GATHER_TABLE_MAX);
	o->tile0 = spread(P, ceil_div(dcols, w));
	TensorPlace *pl[3];
	int32_t id[3] = {op->in[0], op->in[1], op->out};
	layout_gather(&P->num.st, P->tiles, o->tile0, id, v, dcols, n,
	              tab->elem.dtype, pl);
	for (int i = 0; i < 3; i++)
		keep(P, pl[i]);
	for (int i = 0; i < 2 && !r; i++) {
		if (P->loop_slot[id[i]] >= 0)
			r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "a gather's input is a loop weight (not "
			             "supported yet)");
		else if (!P->home[id[i]])
			host_writes_into(P, id[i], pl[i], &o->in[i]);
		else if (host_writes(P, id[i]))
			o->in[i] = (Conv){CONV_HOST_COPY, 0};
		else
			r = price_move(P, P->home[id[i]], pl[i], NULL, NULL,
			               &o->in[i], d);
	}
	if (r)
		return plan_op_error(P->g, op, r, d);
	P->home[op->out] = pl[2];
	return IPU_OK;
}

/* ---- the loop ---------------------------------------------------------- */

TensorPlace *
plan_carry_like(const Plan *plan, int32_t tensor)
{
	return plan->carry_c.pk ? plan_gemm_c_like(&plan->carry_c,
	                                           plan->carry_c_tile0, tensor)
	                        : NULL;
}

/* Before the loop, the carry gets a layout of its own, like carry_in's
 * home or as plan_graph chose (plan_carry_like), filled from it by an
 * exchange: the body reads the carry there, the loop's last step writes
 * the next iteration's there. */
static int
loop_begin(Planner *P, const RepeatMap *rm, Diag *d)
{
	TensorPlace *home = home_of(P, rm->carry_in, &P->plan->loop_tile0),
	            *like = plan_carry_like(P->plan, rm->last_out);
	Counted cn = {
	    {counted}, &P->num, xcalloc(P->tiles, sizeof(uint32_t)), 0};
	TensorPlace *carry =
	    keep(P, layout_mirror(&cn.st, like ? like : home, rm->last_out,
	                          home->dtype, 0, "loop carry"));
	/* a loop over groups: a bank of G slots beside it, each group's
	 * start moved into its slot, and each iteration a copy from the
	 * slot and one back (program.c's carry_copies) */
	uint32_t most = cn.most;
	for (int32_t g = 0; rm->groups > 1 && g < rm->groups; g++)
		P->slot[g] =
		    keep(P, layout_mirror(&cn.st, carry, rm->group_out[g],
		                          home->dtype, 0, "loop carry bank"));
	P->plan->carry_bytes = cn.most;
	free(cn.bytes);
	tensor_place_free(like);
	Conv c;
	P->plan->carry_cycles = 0;
	int r = IPU_OK;
	for (int32_t g = 0; g < rm->groups && !r; g++) {
		TensorPlace *from =
		    g ? home_of(P, rm->group_in[g], &P->plan->loop_tile0)
		      : home;
		r = price_move(P, from, rm->groups > 1 ? P->slot[g] : carry,
		               NULL, NULL, &c, d);
		P->plan->carry_cycles += c.cycles;
	}
	uint32_t bytes = (uint32_t)align_up(most, 8);
	if (rm->groups > 1)
		P->plan->carry_cycles +=
		    (uint64_t)rm->count * (wcopy_cycles(P->chip, bytes) +
		                           wcopy_out_cycles(P->chip, bytes));
	P->carry = rm->carry_in;
	P->carry_home = home;
	P->b_host = (PlanHost){0}; /* lower_b_under keeps to a side of
	                              the bounds */
	P->home[rm->carry_in] = carry;
	return r;
}

/* The body's last step moves the carry into its layout; after the loop,
 * the last iteration's carry is there. */
static int
loop_end(Planner *P, const RepeatMap *rm, Diag *d)
{
	TensorPlace *from = P->home[rm->carry_out], *to = P->home[rm->carry_in];
	Conv c;
	int r = price_move(P, from, to, NULL, NULL, &c, d);
	P->plan->carry_cycles += (uint64_t)rm->count * c.cycles;
	P->home[rm->last_out] = to;
	for (int32_t g = 0; rm->groups > 1 && g < rm->groups; g++)
		P->home[rm->group_out[g]] = P->slot[g];
	P->home[rm->carry_in] = P->carry_home;
	P->carry = -1;
	P->b_host = (PlanHost){0};
	return r;
}

/* ---- the graph --------------------------------------------------------- */

typedef int (*PlanOp)(Planner *P, const Op *op, OpPlan *o, Diag *d);

static const PlanOp plan_op[OP_COUNT] = {
    [OP_MATMUL] = plan_matmul_op,     [OP_ADD] = plan_binary_op,
    [OP_MUL] = plan_binary_op,        [OP_MAX] = plan_binary_op,
    [OP_CAST] = plan_unary_op,        [OP_GELU] = plan_unary_op,
    [OP_RESHAPE] = plan_reshape_op,   [OP_TRANSPOSE] = plan_transpose_op,
    [OP_LAYERNORM] = plan_rowwise_op, [OP_SOFTMAX] = plan_rowwise_op,
    [OP_NORM] = plan_rowwise_op,      [OP_SLICE] = plan_slice_op,
    [OP_CONCAT] = plan_concat_op,     [OP_RELU] = plan_unary_op,
    [OP_GATHER] = plan_gather_op,
};

/* The weight budgets: weights stored where they are read (b_local) may
 * take an eighth of a tile, less the share of all the weights. */
static void
weight_budget(Planner *P)
{
	uint64_t weights = 0;
	for (int32_t id = 0; id < P->g->ntensors; id++) {
		const Tensor *t = graph_tensor(P->g, id);
		if (t->role == ROLE_WEIGHT)
			weights += (uint64_t)shape_elems(&t->shape) *
			           (uint64_t)dtype_size(t->elem.dtype);
	}
	const Chip *chip = P->chip;
	uint64_t eighth = plan_tile_room(chip) / 8,
	         share = weights / (P->tiles ? P->tiles : 1);
	P->copy_room = P->plan->opt.weight_copies && share < eighth
	                   ? (uint32_t)(eighth - share)
	                   : 0;
	P->weights_many = share >= eighth;
}

static int
plan_ops(Planner *P, const RepeatMap *rm, Diag *d)
{
	const Graph *g = P->g;
	if (!g->nops)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: the graph has no operation");
	int r = IPU_OK;
	for (int i = 0; i < g->nops && !r; i++) {
		const Op *op = &g->ops[i];
		if (rm->count && i == rm->first && (r = loop_begin(P, rm, d)))
			break;
		if (!plan_op[op->kind])
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "compile: op %d (%s, making %s) has no "
			                "kernel yet",
			                i, op_desc(op->kind)->name,
			                graph_tensor(g, op->out)->name);
		r = plan_op[op->kind](P, op, &P->plan->op[i], d);
		if (r && strncmp(d->msg, "compile: ", 9)) /* e.g. plan_gemm's */
			plan_op_error(P->g, op, r, d);
		if (!r && rm->count && i == rm->first + rm->len - 1) {
			r = loop_end(P, rm, d);
			i = rm->first + rm->count * rm->len - 1;
		}
	}
	return r;
}

/* One plan of the graph, its loop's carry laid out as C of op carry_op
 * of plan `like` (-1: as carry_in's home). */
static int
plan_once(const Graph *g, const Chip *chip, uint32_t tiles,
          const PlanOptions *o, const Plan *like, int32_t carry_op, Plan **out,
          Diag *d)
{
	Plan *plan = xcalloc(1, sizeof *plan);
	*plan = (Plan){.g = g,
	               .chip = chip,
	               .tiles = tiles,
	               .nop = g->nops,
	               .carry_op = carry_op};
	if (carry_op >= 0) {
		plan->carry_c = like->op[carry_op].gemm;
		plan->carry_c_tile0 = like->op[carry_op].tile0;
	}
	if (o)
		plan->opt = *o;
	plan->op = xcalloc((size_t)g->nops + 1, sizeof *plan->op);
	Planner P = {.plan = plan,
	             .g = g,
	             .chip = chip,
	             .tiles = tiles,
	             .num = {{number}, 0},
	             .carry = -1};
	P.home = xcalloc((size_t)g->ntensors, sizeof *P.home);
	P.weight_bytes = xcalloc(tiles, sizeof *P.weight_bytes);
	P.copies = xcalloc(tiles, sizeof *P.copies);
	P.live_tile = xcalloc(tiles, sizeof *P.live_tile);
	P.last_read = xmalloc(((size_t)g->ntensors + 1) * sizeof *P.last_read);
	for (int32_t id = 0; id < g->ntensors; id++)
		P.last_read[id] =
		    graph_tensor(g, id)->role == ROLE_OUTPUT ? g->nops : -1;
	for (int i = 0; i < g->nops; i++)
		for (int k = 0; k < op_desc(g->ops[i].kind)->nin; k++)
			if (g->ops[i].in[k] >= 0 &&
			    P.last_read[g->ops[i].in[k]] < i)
				P.last_read[g->ops[i].in[k]] = i;
	for (uint32_t t = 0; plan->opt.load && t < tiles; t++)
		P.weight_bytes[t] = plan->opt.load[t];
	weight_budget(&P);
	RepeatMap *rm = &plan->loop;
	int r = graph_repeat_map(g, rm, d);
	int32_t *loop_slot = xmalloc((size_t)g->ntensors * sizeof *loop_slot);
	for (int32_t id = 0; id < g->ntensors; id++)
		loop_slot[id] = -1;
	int32_t layers = rm->count / rm->groups;
	for (int32_t k = 0; !r && k < layers * rm->nweights; k++)
		loop_slot[rm->weight[k]] = k;
	plan->loop_slot = loop_slot;
	P.loop_slot = loop_slot;
	P.loop_count = (uint32_t)layers;
	P.slot = xcalloc((size_t)rm->groups, sizeof *P.slot);
	if (!r)
		r = plan_loop_same_arithmetic(g, rm, d);
	if (!r) {
		held_budget(&P);
		r = plan_ops(&P, rm, d);
	}
	for (int i = 0; i < P.nmade; i++)
		tensor_place_free(P.made[i]);
	free(P.made);
	for (uint32_t t = 0; plan->opt.load && t < tiles; t++)
		P.weight_bytes[t] -= plan->opt.load[t];
	plan->weight_bytes = P.weight_bytes;
	free(P.copies);
	free(P.slot);
	free(P.live_tile);
	free(P.last_read);
	free(P.buf_end);
	free(P.home);
	plan->opt.memo = NULL; /* the compile's, which the plan outlives */
	if (r) {
		plan_free(plan);
		plan = NULL;
	}
	*out = plan;
	return r;
}

uint64_t
plan_cycles(const Plan *plan)
{
	const Graph *g = plan->g;
	const RepeatMap *rm = &plan->loop;
	uint64_t sum = plan->carry_cycles;
	for (int i = 0; i < plan->nop; i++) {
		const Op *op = &g->ops[i];
		const OpPlan *o = &plan->op[i];
		uint64_t c = 0;
		if (op->kind == OP_MATMUL && o->group) {
			int64_t n =
			    shape_batches(&graph_tensor(g, op->in[0])->shape);
			c += (uint64_t)(n + o->group - 1) / o->group *
			     o->gemm.cycles;
		}
		for (int k = 0; k < op_desc(op->kind)->nin; k++)
			c += o->in[k].cycles;
		int body =
		    rm->count && i >= rm->first && i < rm->first + rm->len;
		sum += body ? (uint64_t)rm->count * c : c;
	}
	return sum;
}

/* 1 if the loop's carry may be laid out as C of body op i's GEMM: a
 * single matmul whose output has the carry's rows, columns and type. */
static int
carry_candidate(const Plan *p, int i)
{
	const Graph *g = p->g;
	const Op *op = &g->ops[i];
	const Tensor *c = graph_tensor(g, op->out),
	             *h = graph_tensor(g, p->loop.carry_in);
	const GemmPlan *gp = &p->op[i].gemm;
	return op->kind == OP_MATMUL && p->op[i].group == 1 && gp->pk &&
	       shape_batches(&graph_tensor(g, op->in[0])->shape) == 1 &&
	       gp->m == tensor_view_rows(h) && gp->n == tensor_view_cols(h) &&
	       tensor_view_rows(c) == gp->m && tensor_view_cols(c) == gp->n &&
	       h->elem.dtype == (gp->dtype == DT_F32 ? DT_F32 : DT_F16);
}

/* Records a layout of the carry tried (plan p, or failed with d). */
static void
carry_tried(PlanCarry **tried, int *n, int32_t op, const Plan *p, const Diag *d)
{
	*tried = xrealloc(*tried, (size_t)(*n + 1) * sizeof **tried);
	PlanCarry *c = &(*tried)[(*n)++];
	*c = (PlanCarry){.op = op, .failed = !p};
	if (p) {
		c->cycles = plan_cycles(p);
		c->bytes = p->carry_bytes;
	} else {
		memcpy(c->why, d->msg, sizeof c->why - 1);
	}
}

/* 1 if carry layout c is better than b (the plan kept so far): fewer
 * cycles, a tie going to a matmul's C over carry_in's home (the plans'
 * price does not see every move that layout saves: So400m f8 at batch 4,
 * 27 layers, out_proj's priced the same, 50,838 cycles fewer once
 * lowered); `tight` (a measure found a draft's tiles over): fewer of the
 * carry's bytes on a tile first (So400m f8 at batch 4, 27 layers: 18,720
 * as carry_in's home, 4,672 as out_proj's C, on tiles over by 4 to 24
 * KB at the softmax's step). */
static int
carry_better(const PlanCarry *c, const PlanCarry *b, int tight)
{
	if (tight && c->bytes != b->bytes)
		return c->bytes < b->bytes;
	return c->cycles < b->cycles || (c->cycles == b->cycles && b->op < 0);
}

/* The loop's carry is laid out for its readers: as carry_in's home, or
 * as C of one of the body's matmuls of the carry's shape (a residual
 * added in that matmul's reduction then needs no move, and the body's
 * last step moves the carry there, loop.count times, instead of each
 * reader moving it), whichever plan carry_better keeps. Each such
 * matmul costs a plan more: the plan is made again with the carry in its C
 * layout (the GEMM plan and tiles the first plan gave it). */
int
plan_graph(const Graph *g, const Chip *chip, uint32_t tiles,
           const PlanOptions *o, Plan **out, Diag *d)
{
	Plan *first = NULL;
	int r = plan_once(g, chip, tiles, o, NULL, -1, &first, d);
	*out = first;
	if (r || !first->loop.count || first->opt.no_carry_layout)
		return r;
	PlanCarry *tried = NULL;
	int n = 0, best = 0, tight = o && o->load;
	carry_tried(&tried, &n, -1, first, NULL);
	const RepeatMap *rm = &first->loop;
	for (int i = rm->first; i < rm->first + rm->len; i++) {
		if (!carry_candidate(first, i))
			continue;
		Plan *p;
		Diag dd;
		plan_once(g, chip, tiles, o, first, i, &p, &dd);
		carry_tried(&tried, &n, i, p, &dd);
		if (p && carry_better(&tried[n - 1], &tried[best], tight)) {
			if (*out != first)
				plan_free(*out);
			*out = p;
			best = n - 1;
		} else {
			plan_free(p);
		}
	}
	if (*out != first)
		plan_free(first);
	(*out)->carry_tried = tried;
	(*out)->ncarry_tried = n;
	return IPU_OK;
}

void
plan_free(Plan *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nop; i++) {
		free(p->op[i].owners.tile);
		plan_gemm_tried_free(p->op[i].tried);
	}
	repeat_map_free(&p->loop);
	free(p->carry_tried);
	free(p->loop_slot);
	free(p->weight_bytes);
	free(p->op);
	free(p);
}

int
plan_same_gemm(const GemmPlan *a, const GemmPlan *b)
{
	return a->dtype == b->dtype && a->m == b->m && a->n == b->n &&
	       a->k == b->k && a->pm == b->pm && a->pn == b->pn &&
	       a->pk == b->pk && a->kg == b->kg && a->bm == b->bm &&
	       a->bn == b->bn && a->kc == b->kc && a->steps == b->steps &&
	       a->pairs_down == b->pairs_down && a->b_local == b->b_local &&
	       a->b_parts == b->b_parts;
}

int
plan_same_choices(const Plan *a, const Plan *b)
{
	if (a->nop != b->nop || a->loop_tile0 != b->loop_tile0)
		return 0;
	for (int i = 0; i < a->nop; i++) {
		const OpPlan *x = &a->op[i], *y = &b->op[i];
		if (x->tile0 != y->tile0 || x->in_tile0 != y->in_tile0 ||
		    x->a_tile0 != y->a_tile0 || x->group != y->group ||
		    x->spread_b != y->spread_b ||
		    x->b_rows_from != y->b_rows_from ||
		    !plan_same_gemm(&x->gemm, &y->gemm) ||
		    x->owners.n != y->owners.n)
			return 0;
		for (int j = 0; j < GRAPH_MAX_INPUTS; j++)
			if (x->in[j].kind != y->in[j].kind)
				return 0;
		for (uint32_t j = 0; j < x->owners.n; j++)
			if (x->owners.tile[j] != y->owners.tile[j])
				return 0;
	}
	for (uint32_t t = 0; t < a->tiles && t < b->tiles; t++)
		if (a->weight_bytes[t] != b->weight_bytes[t])
			return 0;
	return a->tiles == b->tiles &&
	       plan_same_gemm(&a->carry_c, &b->carry_c) &&
	       a->carry_c_tile0 == b->carry_c_tile0;
}

int
plan_holds_beside(const Plan *p, uint64_t code, const uint32_t *beside,
                  uint64_t *packed)
{
	*packed = 0;
	for (int i = 0; i < p->nop; i++) {
		const OpPlan *o = &p->op[i];
		const GemmTried *t = o->tried;
		if (!t)
			continue;
		/* its searches' budget was held_data (the most of the
		 * weights' share with the activations live, and the drafts'
		 * measure) and p->held_code; the drafts' measure only grows
		 * (compile.c), so planned again its data would be the most
		 * of the old and beside[i] */
		uint64_t data =
		    t->held > p->held_code ? t->held - p->held_code : 0;
		if (beside && beside[i] > data)
			data = beside[i];
		if (!plan_gemm_tried_hold(p->chip, t, data + code, packed))
			return 0;
	}
	return 1;
}

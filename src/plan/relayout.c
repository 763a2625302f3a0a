/*
 * relayout.c - moving a tensor from the pieces its producer left to the
 * pieces a consumer wants: the moves of one exchange (layout.h), which
 * the planner prices and the lowering makes into transfers.
 *
 * Both places are cut into runs: stretches of elements that are
 * consecutive in the tensor's flat row-major order and contiguous in a
 * tile's memory (a row of a row-major piece; a row of one 16-column panel
 * of the GEMM C layout). Every run of `to` is matched against the runs of
 * `from` that hold its elements (each element is in exactly one run of
 * `from`, so they are sorted and searched); each overlap is a transfer.
 * The exchange moves whole 32-bit words: an overlap that ends both runs
 * on a half word (an odd number of f16 columns) takes the next element's
 * place too when both sides have row padding there.
 * Moves that continue each other on both sides are merged, and equal
 * sources going to several tiles become one multicast.
 */
#include <stdlib.h>
#include <string.h>

#include "../kernels/gemm.h"
#include "layout.h"
#include "plan.h"

/* ---- maps over whole rows -------------------------------------------- */

static uint64_t
permute_flat(const void *ctx, uint64_t flat)
{
	const RowPerm *p = ctx;
	uint64_t row = flat / p->cols, col = flat % p->cols, to = 0;
	int64_t digit[GRAPH_MAX_RANK];
	for (int i = p->rank - 1; i >= 0; i--) {
		digit[i] = (int64_t)(row % (uint64_t)p->in_dim[i]);
		row /= (uint64_t)p->in_dim[i];
	}
	/* output axis i is input axis perm[i] */
	for (int i = 0; i < p->rank; i++)
		to += (uint64_t)(digit[p->perm[i]] * p->out_stride[i]);
	return to * p->cols + col;
}

FlatMap
layout_row_perm(RowPerm *p, const Shape *in, const Shape *perm)
{
	int rank = in->rank;
	*p = (RowPerm){.rank = rank - 1, .cols = (uint64_t)in->dim[rank - 1]};
	int64_t stride = 1;
	for (int i = rank - 2; i >= 0; i--) {
		p->in_dim[i] = in->dim[i];
		p->perm[i] = perm->dim[i];
		p->out_stride[i] = stride;
		stride *= in->dim[perm->dim[i]];
	}
	return (FlatMap){.fn = permute_flat, .ctx = p};
}

static uint64_t
slice_flat(const void *ctx, uint64_t flat)
{
	const RowSlice *s = ctx;
	uint64_t row = flat / s->cols, col = flat % s->cols, to = 0, stride = 1;
	if (col < s->col_begin || col >= s->col_begin + s->out_cols)
		return LAYOUT_DROP;
	for (int i = s->rank - 1; i >= 0; i--) {
		int64_t digit = (int64_t)(row % (uint64_t)s->in_dim[i]);
		row /= (uint64_t)s->in_dim[i];
		if (digit < s->begin[i] || digit >= s->end[i])
			return LAYOUT_DROP;
		to += (uint64_t)(digit - s->begin[i]) * stride;
		stride *= (uint64_t)(s->end[i] - s->begin[i]);
	}
	return to * s->out_cols + col - s->col_begin;
}

FlatMap
layout_row_slice(RowSlice *s, const Shape *in, const Shape *begin,
                 const Shape *end)
{
	int last = in->rank - 1;
	*s = (RowSlice){.rank = last,
	                .cols = (uint64_t)in->dim[last],
	                .col_begin = (uint64_t)begin->dim[last],
	                .out_cols =
	                    (uint64_t)(end->dim[last] - begin->dim[last])};
	for (int i = 0; i < s->rank; i++) {
		s->in_dim[i] = in->dim[i];
		s->begin[i] = begin->dim[i];
		s->end[i] = end->dim[i];
	}
	int cut = s->out_cols != s->cols;
	return (FlatMap){.fn = slice_flat,
	                 .ctx = s,
	                 .col_begin = cut ? s->col_begin : 0,
	                 .col_end = cut ? s->col_begin + s->out_cols : 0};
}

static uint64_t
concat_flat(const void *ctx, uint64_t flat)
{
	const RowConcat *c = ctx;
	uint64_t row = flat / c->cols, col = flat % c->cols, to = 0, stride = 1;
	for (int i = c->rank - 1; i >= 0; i--) {
		int64_t digit = (int64_t)(row % (uint64_t)c->in_dim[i]);
		row /= (uint64_t)c->in_dim[i];
		if (i == c->axis)
			digit += c->offset;
		to += (uint64_t)digit * stride;
		stride *= (uint64_t)c->out_dim[i];
	}
	return to * c->cols + col;
}

FlatMap
layout_row_concat(RowConcat *c, const Shape *a, const Shape *b, int axis, int k)
{
	const Shape *in = k ? b : a;
	*c = (RowConcat){.rank = in->rank - 1,
	                 .axis = axis,
	                 .offset = k ? a->dim[axis] : 0,
	                 .cols = (uint64_t)in->dim[in->rank - 1]};
	for (int i = 0; i < c->rank; i++) {
		c->in_dim[i] = in->dim[i];
		c->out_dim[i] = i == axis ? a->dim[i] + b->dim[i] : a->dim[i];
	}
	return (FlatMap){.fn = concat_flat, .ctx = c, .partial = 1};
}

static uint64_t
chain_flat(const void *ctx, uint64_t flat)
{
	const MapChain *c = ctx;
	for (int k = 0; k < c->n && flat != LAYOUT_DROP; k++)
		flat = c->slice[k] ? slice_flat(&c->s[k], flat)
		                   : permute_flat(&c->p[k], flat);
	return flat;
}

const FlatMap *
layout_chain_map(const MapChain *c, FlatMap *m)
{
	if (!c->unit)
		return NULL;
	*m = (FlatMap){.fn = chain_flat, .ctx = c, .unit = c->unit};
	return m;
}

const FlatMap layout_into_rows = {.pad_free = 1};

/* ---- runs -------------------------------------------------------------- */

typedef struct {
	uint64_t flat; /* first element, in the destination's flat order */
	uint32_t len;  /* elements */
	uint32_t room; /* padding bytes after it in its row of the buffer */
	uint32_t tile;
	BufRef at;
	/* room is zeros (a B^T panel block's, layout_segments' bt), or must
	 * be (the GEMM weight layout's): copied with a run that ends a row
	 * on both sides, so that a panel's rows move as one */
	uint8_t zero_room;
} Run;

typedef struct {
	Run *run;
	int n, cap;
} Runs;

static void
add_run(Runs *rs, uint64_t flat, uint32_t len, uint32_t room, uint32_t tile,
        BufRef at)
{
	GROW(rs->run, rs->n, rs->cap);
	rs->run[rs->n++] = (Run){flat, len, room, tile, at, 0};
}

/* The runs of a piece in the GEMM weight layout, panel row by panel row
 * (n-panel outer, K-panel inner; 16 rows of 32 bytes a panel,
 * docs/kernel-pack.md), each run one line's part in one K-panel, its
 * padding to be zero:
 * - B^T (PF_GEMM_B_T: an n x k block of B's tensor, k padded to whole
 *   K-panels in pad_rows, n to whole n-panels in pad_cols; "pack_bt"): a
 *   line is a row of the block, in the tensor's flat order;
 * - f8 B (PF_GEMM_B, `b`: a k x n block, the same paddings): a line is a
 *   column, in the flat order of B's transpose (column c of the tensor's
 *   rows x cols view, then its rows), the columns of a partial n-panel
 *   too (past the tensor's: padding on both sides alike). Both sides of
 *   a move take these runs or neither (layout_moves). */
static void
panel_runs(const TensorPlace *tp, const Piece *p, int b, Runs *rs)
{
	uint32_t es = (uint32_t)dtype_size(tp->dtype),
	         kp = GEMM_A_ROW_BYTES / es, nk = p->pad_rows / kp,
	         lines = b ? p->pad_cols : p->rows, len = b ? p->rows : p->cols;
	for (uint32_t r = 0; r < lines; r++)
		for (uint32_t i = 0; i < nk && i * kp < len; i++) {
			uint32_t n = len - i * kp < kp ? len - i * kp : kp;
			uint32_t off = ((r / GEMM_COLS * nk + i) * GEMM_COLS +
			                r % GEMM_COLS) *
			               GEMM_A_ROW_BYTES;
			uint64_t flat =
			    b ? (uint64_t)(p->col0 + r) * tp->rows + p->row0
			      : (uint64_t)(p->row0 + r) * tp->cols + p->col0;
			add_run(rs, flat + i * kp, n, (kp - n) * es, p->tile,
			        (BufRef){p->at.buf, p->at.offset + off});
			rs->run[rs->n - 1].zero_room = 1;
		}
}

/* 1 if tp is all f8 PF_GEMM_B pieces (panel_runs' b). */
static int
all_b(const TensorPlace *tp)
{
	if (!dtype_is_f8(tp->dtype))
		return 0;
	for (int k = 0; k < tp->npiece; k++)
		if (tp->piece[k].format != PF_GEMM_B)
			return 0;
	return tp->npiece > 0;
}

/* The runs of a place's pieces, row by row (each within one source row,
 * and one unit of a chain's, so that a FlatMap may move it as a whole;
 * cut to the map's column window, with no padding after a run cut
 * short). */
static int
place_runs(const TensorPlace *tp, const FlatMap *map, Runs *rs, Diag *d)
{
	uint32_t es = (uint32_t)dtype_size(tp->dtype);
	for (int k = 0; k < tp->npiece; k++) {
		const Piece *p = &tp->piece[k];
		int panels = p->format == PF_GEMM_C;
		if (p->format == PF_GEMM_B_T && !map &&
		    dtype_is_f8(tp->dtype)) {
			panel_runs(tp, p, 0, rs);
			continue;
		}
		if (p->format == PF_GEMM_B && !map && all_b(tp)) {
			panel_runs(tp, p, 1, rs);
			continue;
		}
		if (p->format != PF_ROWMAJOR && !panels)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "relayout: a piece of tensor %d is "
			                "stored transposed or in the GEMM "
			                "weight layout, which the exchange "
			                "cannot move in runs (not supported "
			                "yet)",
			                tp->tensor);
		uint32_t width = panels ? GEMM_COLS : p->pad_cols;
		for (uint32_t c0 = 0; c0 < p->cols; c0 += width) {
			uint32_t n =
			    p->cols - c0 < width ? p->cols - c0 : width;
			uint32_t seg =
			    panels ? c0 / GEMM_COLS * p->pad_rows : 0;
			/* the run's columns [lo, hi) of the row */
			uint64_t lo = p->col0 + c0, hi = lo + n,
			         room = (width - n) * es;
			if (map && map->col_end) {
				if (hi > map->col_end) {
					hi = map->col_end;
					room = 0;
				}
				if (lo < map->col_begin)
					lo = map->col_begin;
				if (lo >= hi)
					continue;
			}
			for (uint32_t r = 0; r < p->rows; r++)
				for (uint64_t a = lo, b; a < hi; a = b) {
					uint64_t f =
					    (uint64_t)(p->row0 + r) * tp->cols +
					    a;
					b = hi;
					if (map && map->unit &&
					    a + map->unit - f % map->unit < hi)
						b = a + map->unit -
						    f % map->unit;
					if (map && map->fn)
						f = map->fn(map->ctx, f);
					if (f == LAYOUT_DROP)
						continue;
					uint32_t off =
					    p->at.offset +
					    (seg + r) * width * es +
					    (uint32_t)(a - p->col0 - c0) * es;
					add_run(rs, f, (uint32_t)(b - a),
					        b == hi ? (uint32_t)room : 0,
					        p->tile,
					        (BufRef){p->at.buf, off});
					rs->run[rs->n - 1].zero_room =
					    p->bt_panels && b == hi;
				}
		}
	}
	return IPU_OK;
}

static int
run_cmp(const void *a, const void *b)
{
	const Run *x = a, *y = b;
	return x->flat < y->flat ? -1 : x->flat > y->flat;
}

/* One element range to copy, single destination (before multicast). */
typedef struct {
	uint32_t src_tile, dst_tile;
	BufRef src, dst;
	uint32_t bytes;
} Copy;

static int
copy_by_src(const void *a, const void *b)
{
	const Copy *x = a, *y = b;
	if (x->src_tile != y->src_tile)
		return x->src_tile < y->src_tile ? -1 : 1;
	if (x->src.buf != y->src.buf)
		return x->src.buf < y->src.buf ? -1 : 1;
	if (x->src.offset != y->src.offset)
		return x->src.offset < y->src.offset ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	if (x->dst_tile != y->dst_tile)
		return x->dst_tile < y->dst_tile ? -1 : 1;
	return x->dst.offset < y->dst.offset ? -1
	                                     : x->dst.offset > y->dst.offset;
}

/* Merges copies that continue each other on both sides (same source and
 * destination buffers, adjacent addresses): sorted by destination, then
 * walked. */
static int
copy_by_dst(const void *a, const void *b)
{
	const Copy *x = a, *y = b;
	if (x->dst_tile != y->dst_tile)
		return x->dst_tile < y->dst_tile ? -1 : 1;
	if (x->dst.buf != y->dst.buf)
		return x->dst.buf < y->dst.buf ? -1 : 1;
	return x->dst.offset < y->dst.offset ? -1
	                                     : x->dst.offset > y->dst.offset;
}

/* No two copies write the same destination bytes, so copy_by_dst has no
 * ties and copies already in its order (those of a `to` whose pieces go
 * by tile and buffer, about half of them) are that order unsorted. */
static int
merge_copies(Copy *c, int n)
{
	int sorted = 1;
	for (int i = 1; i < n && sorted; i++)
		sorted = copy_by_dst(&c[i - 1], &c[i]) <= 0;
	if (!sorted)
		qsort(c, (size_t)n, sizeof *c, copy_by_dst);
	int m = 0;
	for (int i = 0; i < n; i++) {
		Copy *last = m ? &c[m - 1] : NULL;
		if (last && last->dst_tile == c[i].dst_tile &&
		    last->dst.buf == c[i].dst.buf &&
		    last->dst.offset + last->bytes == c[i].dst.offset &&
		    last->src_tile == c[i].src_tile &&
		    last->src.buf == c[i].src.buf &&
		    last->src.offset + last->bytes == c[i].src.offset) {
			last->bytes += c[i].bytes;
			continue;
		}
		c[m++] = c[i];
	}
	return m;
}

/* Moves from `first` on, made sender by sender, reordered round by
 * round: every sender's first transfer, then every sender's second, ...
 * The scheduler places transfers greedily in order, each after its
 * sender's previous send and its receivers' previous windows; sender by
 * sender, one sender waiting for a shared receiver delays all its later
 * sends and so every sender after it, a chain across the chip. */
typedef struct {
	uint32_t round, src;
	int at;
} Slot;

static int
slot_cmp(const void *a, const void *b)
{
	const Slot *x = a, *y = b;
	if (x->round != y->round)
		return x->round < y->round ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->at - y->at;
}

void
layout_moves_interleave(Moves *m, int first)
{
	if (m->n <= first)
		return;
	size_t n = (size_t)(m->n - first);
	Slot *slot = xmalloc(n * sizeof *slot);
	for (size_t i = 0; i < n; i++) {
		const Move *x = &m->move[first + i];
		uint32_t round =
		    i && x->src_tile == m->move[first + i - 1].src_tile
		        ? slot[i - 1].round + 1
		        : 0;
		slot[i] = (Slot){round, x->src_tile, first + (int)i};
	}
	qsort(slot, n, sizeof *slot, slot_cmp);
	Move *was = xmalloc(n * sizeof *was);
	memcpy(was, m->move + first, n * sizeof *was);
	for (size_t i = 0; i < n; i++)
		m->move[first + i] = was[slot[i].at - first];
	free(was);
	free(slot);
}

/* A new move of `words` words from src to ndst destinations (filled in
 * by the caller). */
static Move *
add_move(Moves *m, uint32_t src_tile, BufRef src, uint32_t words, uint32_t ndst)
{
	GROW(m->move, m->n, m->cap);
	while (m->ndst + ndst > m->capdst) {
		m->capdst = m->capdst ? 2 * m->capdst : 64;
		m->dst_tile =
		    xrealloc(m->dst_tile, m->capdst * sizeof *m->dst_tile);
		m->dst = xrealloc(m->dst, m->capdst * sizeof *m->dst);
	}
	Move *x = &m->move[m->n++];
	*x = (Move){src_tile, src, words, ndst, m->ndst};
	m->ndst += ndst;
	return x;
}

void
moves_free(Moves *m)
{
	free(m->move);
	free(m->dst_tile);
	free(m->dst);
	memset(m, 0, sizeof *m);
}

int
layout_moves(const TensorPlace *from, const TensorPlace *to, const FlatMap *map,
             Moves *m, Diag *d)
{
	Runs src = {0}, dst = {0};
	Copy *copy = NULL;
	int ncopy = 0, cap = 0;
	uint32_t es = (uint32_t)dtype_size(to->dtype);
	if (all_b(from) != all_b(to) || (all_b(from) && map))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "relayout of tensor %d: f8 weight panels move "
		                "only into weight panels, without a map",
		                to->tensor);
	int r = place_runs(from, map, &src, d);
	if (!r)
		r = place_runs(to, NULL, &dst, d);
	if (!r)
		qsort(src.run, (size_t)src.n, sizeof *src.run, run_cmp);
	for (int i = 0; !r && i < dst.n; i++) {
		const Run *w = &dst.run[i];
		uint64_t f = w->flat, end = w->flat + w->len;
		/* the last source run starting at or before f */
		int lo = 0, hi = src.n;
		while (hi - lo > 1) {
			int mid = (lo + hi) / 2;
			if (src.run[mid].flat <= f)
				lo = mid;
			else
				hi = mid;
		}
		for (int j = lo; j < src.n && f < end; j++) {
			const Run *h = &src.run[j];
			if (h->flat + h->len <= f)
				continue;
			if (h->flat > f &&
			    (!map || !map->partial || h->flat >= end))
				break;
			if (h->flat > f)
				f = h->flat; /* a gap another source fills */
			uint64_t stop =
			    h->flat + h->len < end ? h->flat + h->len : end;
			uint32_t so = (uint32_t)(f - h->flat) * es,
			         dof = (uint32_t)(f - w->flat) * es,
			         bytes = (uint32_t)(stop - f) * es;
			/* a row's last piece of a word: the rest of the word
			 * is padding on both sides (an odd f16 row), send it;
			 * into a padding no one reads, as much of it as both
			 * sides have, in whole words */
			int row_end = stop == h->flat + h->len &&
			              stop == w->flat + w->len;
			uint32_t room = h->room < w->room ? h->room : w->room;
			uint32_t tail = (4 - bytes % 4) % 4;
			if (row_end && map && map->pad_free &&
			    (bytes + room) / 4 * 4 > bytes)
				tail = (bytes + room) / 4 * 4 - bytes;
			if (tail && row_end && room >= tail)
				bytes += tail;
			/* zeros into a padding that must be zero, all of it:
			 * a panel's rows continue each other on both sides */
			if (row_end && h->zero_room && w->zero_room &&
			    h->room >= w->room)
				bytes = (uint32_t)(stop - f) * es + w->room;
			if ((h->at.offset + so) % 4 ||
			    (w->at.offset + dof) % 4 || bytes % 4) {
				r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
				             "relayout of tensor %d: elements "
				             "%llu..%llu do not lie on whole "
				             "32-bit words on both sides (not "
				             "supported yet)",
				             to->tensor, (unsigned long long)f,
				             (unsigned long long)stop - 1);
				break;
			}
			GROW(copy, ncopy, cap);
			copy[ncopy++] = (Copy){
			    h->tile, w->tile,
			    (BufRef){h->at.buf, h->at.offset + so},
			    (BufRef){w->at.buf, w->at.offset + dof}, bytes};
			f = stop;
		}
		if (!r && f < end && !(map && map->partial))
			r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "relayout of tensor %d: element %llu is "
			             "in no piece of its source (an internal "
			             "error)",
			             to->tensor, (unsigned long long)f);
	}
	if (!r) {
		ncopy = merge_copies(copy, ncopy);
		qsort(copy, (size_t)ncopy, sizeof *copy, copy_by_src);
		for (int i = 0; i < ncopy;) {
			int j = i + 1;
			while (j < ncopy &&
			       copy[j].src_tile == copy[i].src_tile &&
			       copy[j].src.buf == copy[i].src.buf &&
			       copy[j].src.offset == copy[i].src.offset &&
			       copy[j].bytes == copy[i].bytes)
				j++;
			Move *x =
			    add_move(m, copy[i].src_tile, copy[i].src,
			             copy[i].bytes / 4, (uint32_t)(j - i));
			for (int k = i; k < j; k++) {
				m->dst_tile[x->first + (uint32_t)(k - i)] =
				    copy[k].dst_tile;
				m->dst[x->first + (uint32_t)(k - i)] =
				    copy[k].dst;
			}
			i = j;
		}
	}
	free(copy);
	free(src.run);
	free(dst.run);
	return r;
}

uint64_t
layout_moves_cycles(const Moves *m, int first, uint32_t tiles)
{
	uint64_t *sent = xcalloc(tiles, sizeof *sent),
	         *got = xcalloc(tiles, sizeof *got), most = 0;
	for (int i = first; i < m->n; i++) {
		const Move *x = &m->move[i];
		sent[x->src_tile] += x->words;
		for (uint32_t k = 0; k < x->ndst; k++)
			got[m->dst_tile[x->first + k]] += x->words;
	}
	for (uint32_t t = 0; t < tiles; t++) {
		if (sent[t] > most)
			most = sent[t];
		if (got[t] > most)
			most = got[t];
	}
	free(sent);
	free(got);
	return most + XS_PREAMBLE;
}

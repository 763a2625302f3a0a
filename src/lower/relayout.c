/*
 * relayout.c - moving a tensor from the pieces its producer left to the
 * pieces a consumer wants, as one exchange step (lower.h).
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
 * Transfers that continue each other on both sides are merged, and equal
 * sources going to several tiles become one multicast.
 */
#include <stdlib.h>
#include <string.h>

#include "../graph/graph.h"
#include "lower.h"

typedef struct {
	uint64_t flat; /* first element, in the destination's flat order */
	uint32_t len;  /* elements */
	uint32_t room; /* padding bytes after it in its row of the buffer */
	uint32_t tile;
	BufRef at;
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
	rs->run[rs->n++] = (Run){flat, len, room, tile, at};
}

/* The runs of a place's pieces, row by row (each within one source row,
 * so that a FlatMap may move it as a whole). */
static int
place_runs(const TensorPlace *tp, const FlatMap *map, Runs *rs, Diag *d)
{
	uint32_t es = (uint32_t)dtype_size(tp->dtype);
	for (int k = 0; k < tp->npiece; k++) {
		const Piece *p = &tp->piece[k];
		int panels = p->format == PF_GEMM_C;
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
			for (uint32_t r = 0; r < p->rows; r++) {
				uint64_t f =
				    (uint64_t)(p->row0 + r) * tp->cols +
				    p->col0 + c0;
				if (map && map->fn)
					f = map->fn(map->ctx, f);
				if (f == LOWER_DROP)
					continue;
				uint32_t off =
				    p->at.offset + (seg + r) * width * es;
				add_run(rs, f, n, (width - n) * es, p->tile,
				        (BufRef){p->at.buf, off});
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

static int
merge_copies(Copy *c, int n)
{
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

/* Transfers from `first` on, made sender by sender, reordered round by
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

static void
interleave(Step *s, int first)
{
	if (s->nxfer <= first)
		return;
	size_t n = (size_t)(s->nxfer - first);
	Slot *slot = xmalloc(n * sizeof *slot);
	for (size_t i = 0; i < n; i++) {
		const Transfer *x = &s->xfer[first + i];
		uint32_t round =
		    i && x->src_tile == s->xfer[first + i - 1].src_tile
		        ? slot[i - 1].round + 1
		        : 0;
		slot[i] = (Slot){round, x->src_tile, first + (int)i};
	}
	qsort(slot, n, sizeof *slot, slot_cmp);
	Transfer *was = xmalloc(n * sizeof *was);
	memcpy(was, s->xfer + first, n * sizeof *was);
	for (size_t i = 0; i < n; i++)
		s->xfer[first + i] = was[slot[i].at - first];
	free(was);
	free(slot);
}

int
lower_relayout(Step *s, const TensorPlace *from, const TensorPlace *to,
               const FlatMap *map, Diag *d)
{
	Runs src = {0}, dst = {0};
	Copy *copy = NULL;
	int ncopy = 0, cap = 0;
	uint32_t es = (uint32_t)dtype_size(to->dtype);
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
			if (h->flat > f)
				break;
			uint64_t stop =
			    h->flat + h->len < end ? h->flat + h->len : end;
			uint32_t so = (uint32_t)(f - h->flat) * es,
			         dof = (uint32_t)(f - w->flat) * es,
			         bytes = (uint32_t)(stop - f) * es;
			/* a row's last piece of a word: the rest of the word
			 * is padding on both sides (an odd f16 row), send it */
			uint32_t tail = (4 - bytes % 4) % 4;
			if (tail && stop == h->flat + h->len &&
			    stop == w->flat + w->len && h->room >= tail &&
			    w->room >= tail)
				bytes += tail;
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
		if (!r && f < end)
			r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "relayout of tensor %d: element %llu is "
			             "in no piece of its source (an internal "
			             "error)",
			             to->tensor, (unsigned long long)f);
	}
	int first = s->nxfer;
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
			Transfer *x = lower_transfer(
			    s, copy[i].src_tile, copy[i].src, copy[i].bytes / 4,
			    (uint32_t)(j - i));
			for (int k = i; k < j; k++) {
				x->dst_tile[k - i] = copy[k].dst_tile;
				x->dst[k - i] = copy[k].dst;
			}
			i = j;
		}
		interleave(s, first);
	}
	free(copy);
	free(src.run);
	free(dst.run);
	return r;
}

uint64_t
lower_exchange_estimate(const Lowered *l, const Step *s)
{
	uint64_t *sent = xcalloc(l->tiles, sizeof *sent),
	         *got = xcalloc(l->tiles, sizeof *got), most = 0;
	for (int i = 0; i < s->nxfer; i++) {
		const Transfer *x = &s->xfer[i];
		sent[x->src_tile] += x->words;
		for (uint32_t k = 0; k < x->ndst; k++)
			got[x->dst_tile[k]] += x->words + XS_RECV_GAP;
	}
	for (uint32_t t = 0; t < l->tiles; t++) {
		if (sent[t] > most)
			most = sent[t];
		if (got[t] > most)
			most = got[t];
	}
	free(sent);
	free(got);
	return most + XS_PREAMBLE;
}

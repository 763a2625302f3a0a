/*
 * adirect.c - a GEMM's A sent straight from its producer to the tiles
 * that use each chunk (lower_a_direct; docs/bench-siglip.md "A straight
 * from its producer").
 *
 * A matmul's A arrives in two exchange steps: "matmul: A from its
 * producer" moves the producer's pieces into the GEMM's stored chunk
 * parts ("A input", one tile each), and the GEMM's "A and B chunks"
 * multicasts each part to its grid row. The exchange multicasts, so the
 * producer's tiles can send each piece to the whole grid row at once: one
 * step instead of two. Every receiver then gets its chunk in the
 * producer's pieces (a window each, priced XS_RECV_GAP apart) instead of in the
 * stored parts' few runs, so it pays only where the first step costs
 * more than the windows it adds (the step bounds below).
 *
 * Contract: after lowering, before lower_b_under, lower_verify and
 * xsched_run. For each exchange step a whose transfers all write "A
 * input" buffers read by no step but the next one (a K-padded part, kept
 * from the start for its zeros, too), g, itself an exchange
 * (no overlapped superstep) in the same part of the loop: every transfer
 * of g sending from such a buffer is replaced by the transfers of a that
 * filled its range, each sent to all of g's destinations (a range of the
 * part a did not fill, K padding kept zero from the load, still goes from
 * the part). Kept when g so made, scheduled (xsched_step_cycles), takes
 * fewer cycles than a and g scheduled plus a's sync (lower_step_overhead),
 * tried only where its bound (xsched_bound) is below theirs; then step a
 * is removed (lower_remove_step). Returns the steps removed.
 */
#include "lower.h"

#include <stdlib.h>
#include <string.h>

/* A piece of a stored part as step a wrote it: [off, off + 4 words) of
 * buffer buf, from src on tile src_tile. */
typedef struct {
	int32_t buf;
	uint32_t off, words;
	uint32_t src_tile;
	BufRef src;
} APiece;

static int
piece_cmp(const void *x, const void *y)
{
	const APiece *a = x, *b = y;
	if (a->buf != b->buf)
		return a->buf < b->buf ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* reader[buf]: the one step that reads buffer buf (a transfer's source,
 * a call's reference), -1 none, -2 several */
static int32_t *
readers(const Lowered *l)
{
	int32_t *r = xmalloc((size_t)l->nbuf * sizeof *r);
	for (int i = 0; i < l->nbuf; i++)
		r[i] = -1;
	for (int32_t i = 0; i < l->nstep; i++) {
		const Step *s = &l->step[i];
		for (int k = 0; k < s->nxfer; k++) {
			int32_t b = s->xfer[k].src.buf;
			r[b] = r[b] == -1 || r[b] == i ? i : -2;
		}
		for (int c = 0; c < s->ncall; c++)
			for (int k = 0; k < s->call[c].nref; k++) {
				int32_t b = s->call[c].ref[k].buf;
				r[b] = r[b] == -1 || r[b] == i ? i : -2;
			}
	}
	return r;
}

/* Step a's pieces, sorted, if every transfer of a writes only "A input"
 * buffers that no step but a + 1 reads; else NULL. */
static APiece *
pieces_of(const Lowered *l, const int32_t *reader, int32_t a, int *n)
{
	const Step *s = &l->step[a];
	int np = 0;
	for (int i = 0; i < s->nxfer; i++)
		np += (int)s->xfer[i].ndst;
	if (!np)
		return NULL;
	APiece *p = xmalloc((size_t)np * sizeof *p);
	np = 0;
	for (int i = 0; i < s->nxfer; i++) {
		const Transfer *x = &s->xfer[i];
		for (uint32_t k = 0; k < x->ndst; k++) {
			const Buffer *b = &l->buf[x->dst[k].buf];
			if (strcmp(b->what, "A input") ||
			    reader[x->dst[k].buf] != a + 1) {
				free(p);
				return NULL;
			}
			p[np++] = (APiece){x->dst[k].buf, x->dst[k].offset,
			                   x->words, x->src_tile, x->src};
		}
	}
	qsort(p, (size_t)np, sizeof *p, piece_cmp);
	*n = np;
	return p;
}

/* The first piece of buf ending after off (pieces sorted, disjoint). */
static int
first_after(const APiece *p, int n, int32_t buf, uint32_t off)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (p[mid].buf < buf ||
		    (p[mid].buf == buf && p[mid].off + 4 * p[mid].words <= off))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* g's transfers with those from a stored part replaced by the pieces
 * that filled it, into *out (a step holding only the transfers). 1 if
 * some transfer read a part. */
static int
compose(const Step *g, const APiece *p, int n, Step *out)
{
	int any = 0;
	memset(out, 0, sizeof *out);
	out->kind = STEP_EXCHANGE;
	for (int i = 0; i < g->nxfer; i++) {
		const Transfer *x = &g->xfer[i];
		uint32_t lo = x->src.offset, hi = lo + 4 * x->words, at = lo;
		int k = first_after(p, n, x->src.buf, lo);
		if (k == n || p[k].buf != x->src.buf) {
			lower_transfer_as(out, x, x->src_tile, x->src, x->words,
			                  0);
			continue;
		}
		any = 1;
		for (; k < n && p[k].buf == x->src.buf && p[k].off < hi; k++) {
			uint32_t a = p[k].off > lo ? p[k].off : lo,
			         e = p[k].off + 4 * p[k].words;
			if (e > hi)
				e = hi;
			if (a > at) /* not filled by a: from the part */
				lower_transfer_as(out, x, x->src_tile,
				                  (BufRef){x->src.buf, at},
				                  (a - at) / 4, at - lo);
			lower_transfer_as(
			    out, x, p[k].src_tile,
			    (BufRef){p[k].src.buf,
			             p[k].src.offset + (a - p[k].off)},
			    (e - a) / 4, a - lo);
			at = e;
		}
		if (at < hi)
			lower_transfer_as(out, x, x->src_tile,
			                  (BufRef){x->src.buf, at},
			                  (hi - at) / 4, at - lo);
	}
	return any;
}

int
lower_a_direct(Lowered *l)
{
	int removed = 0;
	int32_t *reader = readers(l);
	for (int32_t a = 0; a + 1 < l->nstep; a++) {
		Step *sa = &l->step[a], *g = &l->step[a + 1];
		if (sa->kind != STEP_EXCHANGE || g->kind != STEP_EXCHANGE ||
		    sa->gwin || g->gwin || sa->block || g->block ||
		    !sa->nxfer ||
		    lower_loop_part(l, a) != lower_loop_part(l, a + 1) ||
		    (l->loop_count && a == l->loop_first))
			continue;
		int n;
		APiece *p = pieces_of(l, reader, a, &n);
		if (!p)
			continue;
		Step d;
		int any = compose(g, p, n, &d);
		free(p);
		uint64_t two = xsched_bound(l, sa->xfer, sa->nxfer) +
		               xsched_bound(l, g->xfer, g->nxfer) +
		               lower_step_overhead(l->chip, sa);
		/* the bound first (cheap), then the schedules: many small
		 * windows schedule well above their bound */
		if (any && xsched_bound(l, d.xfer, d.nxfer) < two &&
		    xsched_step_cycles(l, &d) <
		        xsched_step_cycles(l, sa) + xsched_step_cycles(l, g) +
		            lower_step_overhead(l->chip, sa)) {
			lower_free_transfers(g);
			g->xfer = d.xfer;
			g->nxfer = d.nxfer;
			lower_remove_step(l, a);
			for (int i = 0; i < l->nbuf; i++)
				if (reader[i] > a)
					reader[i]--;
			removed++;
			a--;
		} else
			lower_free_transfers(&d);
	}
	free(reader);
	return removed;
}

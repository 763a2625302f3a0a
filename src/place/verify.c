/*
 * verify.c - placement's result checked on its own terms (compile.c runs
 * it after place_buffers): every buffer that holds bytes lies above its
 * tile's code and below mem_end, aligned, an interleaved one in the
 * interleaved region; two buffers of a tile share bytes only if their
 * lifetimes are disjoint; a buffer and its `apart` partner share no memory
 * element (a 16 KiB element below the interleaved region, a 32 KiB pair in
 * it). A failure is the compiler's own bug.
 */
#include "place.h"

#include <stdlib.h>

typedef struct {
	uint32_t addr, end;
	int32_t id;
} Span;

static int
by_addr(const void *pa, const void *pb)
{
	const Span *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->id - b->id;
}

static int
bad(Diag *d, const Lowered *l, int32_t i, const char *rule)
{
	const Buffer *b = &l->buf[i];
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "placement verifier: buffer %d (%s, tile %u, %u bytes "
	                "at 0x%x, steps %d..%d) %s (an internal error)",
	                i, b->what, b->tile, b->bytes, b->addr, b->first,
	                b->last, rule);
}

static int
check_bounds(const Lowered *l, const uint32_t *code_end, Diag *d)
{
	const Chip *c = l->chip;
	for (int32_t i = 0; i < l->nbuf; i++) {
		const Buffer *b = &l->buf[i];
		if (!b->bytes)
			continue;
		uint32_t low = code_end ? code_end[b->tile] : c->mem_base;
		if (b->region == REGION_INTERLEAVED && low < c->interleave)
			low = c->interleave;
		if (b->addr < low || (uint64_t)b->addr + b->bytes > c->mem_end)
			return bad(d, l, i,
			           "is outside its tile's data memory");
		if (b->addr % b->align)
			return bad(d, l, i, "is not aligned");
		const Buffer *p = b->apart >= 0 ? &l->buf[b->apart] : NULL;
		if (p && p->bytes &&
		    chip_apart_unit(c, b->addr) <=
		        chip_apart_unit(c, p->addr + p->bytes - 1) &&
		    chip_apart_unit(c, p->addr) <=
		        chip_apart_unit(c, b->addr + b->bytes - 1))
			return bad(d, l, i,
			           "shares a memory element with its `apart` "
			           "partner");
	}
	return IPU_OK;
}

int
place_verify(const Lowered *l, const uint32_t *code_end, Diag *d)
{
	int r = check_bounds(l, code_end, d);
	if (r)
		return r;
	/* per tile, by address: each buffer against those that start
	 * before it ends */
	Span *sp = xmalloc(((size_t)l->nbuf + 1) * sizeof *sp);
	uint32_t *count = xcalloc((size_t)l->tiles + 1, sizeof *count);
	for (int32_t i = 0; i < l->nbuf; i++)
		count[l->buf[i].tile + 1]++;
	for (uint32_t t = 0; t < l->tiles; t++)
		count[t + 1] += count[t];
	uint32_t *fill = xcalloc((size_t)l->tiles + 1, sizeof *fill);
	for (int32_t i = 0; i < l->nbuf; i++) {
		const Buffer *b = &l->buf[i];
		sp[count[b->tile] + fill[b->tile]++] =
		    (Span){b->addr, b->addr + b->bytes, i};
	}
	for (uint32_t t = 0; t < l->tiles && !r; t++) {
		Span *s = sp + count[t];
		uint32_t n = count[t + 1] - count[t];
		qsort(s, n, sizeof *s, by_addr);
		for (uint32_t a = 0; a < n && !r; a++)
			for (uint32_t b = a + 1; b < n && s[b].addr < s[a].end;
			     b++) {
				const Buffer *x = &l->buf[s[a].id],
				             *y = &l->buf[s[b].id];
				if (x->bytes && y->bytes &&
				    !(x->last < y->first || y->last < x->first))
					r = bad(d, l, s[b].id,
					        "overlaps a buffer live in the "
					        "same steps");
			}
	}
	free(fill);
	free(count);
	free(sp);
	return r;
}

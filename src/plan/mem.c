/*
 * mem.c - the tile memory model: what a tile needs, one bound for the
 * planner's estimates and the placer's measure (docs/compiler.md,
 * "Memory: what the planner knows").
 *
 * A tile holds, from mem_base up, its code (the kernels' shared image,
 * then its own program) and above it its data buffers; at every step the
 * code and the live buffers must fit the tile's memory. The placer checks
 * this bound on the lowered program's buffers and code (src/place/) and
 * then packs them under the alignment, region and element rules; the GEMM
 * planner checks it on its estimate of a candidate's fullest tile; the
 * compiler reports each tile's measure with it. The packing under those
 * rules is here too (plan_tile_pack): the placer packs every tile with
 * it, and the GEMM planner its candidate's fullest tile, so that a plan
 * it admits packs (docs/placement.md, "The algorithm").
 */
#include <stdlib.h>
#include <string.h>

#include "plan.h"

#include "../kernels/kernels.h"

uint64_t
plan_tile_room(const Chip *c)
{
	return c->mem_end - c->mem_base;
}

uint64_t
plan_tile_need(TileBytes b)
{
	return b.code + b.data;
}

uint64_t
plan_tile_over(const Chip *c, TileBytes b)
{
	uint64_t need = plan_tile_need(b), room = plan_tile_room(c);
	return need > room ? need - room : 0;
}

uint64_t
plan_code_phase(uint64_t cycles)
{
	return (CODE_EXCHANGE_INSNS + (cycles >> CODE_DELAY_LOG2)) * CODE_INSN;
}

uint64_t
plan_code_xfers(uint64_t recv, uint64_t sends, uint64_t items)
{
	/* a send's items in instructions: ceil per send, so at most one more
	 * a send than the items' own */
	return (3 * 2 * recv + 2 * sends + items / CODE_SEND_ITEMS) * CODE_INSN;
}

uint64_t
plan_kernels_code(const Chip *c)
{
	const char *names[64];
	int n = 0;
	for (const KernelObject *o = kernel_objects; o->name && n < 64; o++)
		names[n++] = o->name;
	TileImage img;
	Diag d;
	if (kernel_image(names, n, c, &img, &d))
		return plan_tile_room(c); /* cannot happen: built with them */
	uint64_t end = c->mem_base;
	for (int i = 0; i < img.nseg; i++)
		if (img.seg[i].addr + img.seg[i].size > end)
			end = img.seg[i].addr + img.seg[i].size;
	img_free(&img);
	return align_up(end, 8) - c->mem_base; /* where programs start */
}

uint64_t
plan_code_beyond(const Chip *c, const uint32_t *code, uint32_t tiles)
{
	uint64_t most = 0;
	for (uint32_t t = 0; code && t < tiles; t++)
		if (code[t] > most)
			most = code[t];
	uint64_t kernels = most ? plan_kernels_code(c) : 0;
	return most > kernels ? most - kernels : 0;
}

/* ---- packing one tile (docs/placement.md, "The algorithm") ---------- */

/* The first address of chip_apart_unit's unit u. */
static uint64_t
unit_start(const Chip *c, uint64_t u)
{
	uint64_t r0 = (c->interleave - c->mem_base) / c->elem_bytes;
	if (u < r0)
		return c->mem_base + u * c->elem_bytes;
	return c->interleave + (u - r0) * 2 * c->elem_bytes;
}

static int
lifetimes_meet(int32_t f1, int32_t l1, int32_t f2, int32_t l2)
{
	return !(l1 < f2 || l2 < f1);
}

void
plan_pack_init(TilePack *s, int max)
{
	size_t m = (size_t)(max > 0 ? max : 0) + 1;
	s->key = xcalloc(2 * m, sizeof *s->key);
	s->tmp = xcalloc(2 * m, sizeof *s->tmp);
	s->placed = xcalloc(m, sizeof *s->placed);
	s->addr = xcalloc(m, sizeof *s->addr);
	s->whole = xcalloc(m, sizeof *s->whole);
	s->pstart = xcalloc(m + 1, sizeof *s->pstart);
	s->pl = xcalloc(2 * m, sizeof *s->pl);
	s->fill = xcalloc(m, sizeof *s->fill);
}

void
plan_pack_free(TilePack *s)
{
	free(s->key);
	free(s->tmp);
	free(s->placed);
	free(s->addr);
	free(s->whole);
	free(s->pstart);
	free(s->pl);
	free(s->fill);
	memset(s, 0, sizeof *s);
}

/* Stable sort of k[0..n) by (hi, lo), tmp holding n more: least
 * significant digit first, 8 bits at a time, skipping the digits in which
 * all keys agree (most of them: sizes and steps are small numbers). */
static void
sort_keys(PackKey *k, PackKey *tmp, int n)
{
	if (n < 2)
		return;
	uint64_t dlo = 0, dhi = 0;
	for (int i = 1; i < n; i++) {
		dlo |= k[i].lo ^ k[0].lo;
		dhi |= k[i].hi ^ k[0].hi;
	}
	PackKey *src = k, *dst = tmp;
	for (int pass = 0; pass < 16; pass++) {
		int word = pass / 8, shift = 8 * (pass % 8);
		if (!(((word ? dhi : dlo) >> shift) & 0xff))
			continue;
		int count[257] = {0};
		for (int i = 0; i < n; i++) {
			uint64_t w = word ? src[i].hi : src[i].lo;
			count[((w >> shift) & 0xff) + 1]++;
		}
		for (int d = 0; d < 256; d++)
			count[d + 1] += count[d];
		for (int i = 0; i < n; i++) {
			uint64_t w = word ? src[i].hi : src[i].lo;
			dst[count[(w >> shift) & 0xff]++] = src[i];
		}
		PackKey *t = src;
		src = dst;
		dst = t;
	}
	if (src != k)
		memcpy(k, src, (size_t)n * sizeof *k);
}

/* A signed step as an unsigned number of the same order. */
static uint64_t
step_key(int64_t step)
{
	return (uint64_t)step ^ (1ull << 63);
}

/*
 * The placement orders, as keys over the buffers in index order (the sort
 * is stable, so ties go by index). Interleaved buffers come first in the
 * first three: their window is the narrower one.
 *   0: whole-program buffers (the bottom layer), then largest first, then
 *      longest-lived, then earliest;
 *   1: longest-lived first, then largest, then earliest;
 *   2: largest first, then earliest;
 *   3: as 0, but the whole-program buffers in either region first: a
 *      buffer larger than region 0 left above the code (a loop's weight
 *      bank) then starts at the code and runs into the interleaved
 *      region, instead of above the interleaved buffers with region 0 a
 *      gap that the small buffers fill only in part.
 */
enum { NORDERS = 4 };

static void
order_keys(const TileBuf *b, const uint8_t *whole, int n, int order, PackKey *k)
{
	for (int i = 0; i < n; i++) {
		uint64_t other = b[i].region != REGION_INTERLEAVED;
		uint64_t nbytes = (uint32_t)~b[i].bytes; /* larger first */
		uint64_t nspan =
		    (uint32_t) ~(uint32_t)((int64_t)b[i].last - b[i].first);
		uint64_t first = (uint32_t)b[i].first ^ 0x80000000u;
		switch (order) {
		case 0:
			k[i].hi = other << 63 | (uint64_t)!whole[i] << 62 |
			          nbytes << 30;
			k[i].lo = nspan << 32 | first;
			break;
		case 3:
			k[i].hi = (uint64_t)!whole[i] << 63 |
			          (whole[i] ? 0 : other) << 62 | nbytes << 30;
			k[i].lo = nspan << 32 | first;
			break;
		case 1:
			k[i].hi = other << 63 | nspan << 31;
			k[i].lo = nbytes << 32 | first;
			break;
		default:
			k[i].hi = other << 63 | nbytes << 31;
			k[i].lo = first;
			break;
		}
		k[i].v = i;
	}
}

/* Packs the n buffers in the order of s->key from `lo` up, memory
 * unbounded above: each at the lowest aligned address in its region that
 * overlaps no placed buffer whose lifetime meets its own and shares no
 * unit with a placed partner. Writes s->addr; returns the high-water
 * address (lo if nothing takes memory). */
static uint64_t
pack(const Chip *c, uint64_t lo, const TileBuf *b, TilePack *s, int n)
{
	int np = 0;
	uint64_t high = lo;
	for (int i = 0; i < n; i++)
		s->addr[i] = UINT64_MAX; /* not placed yet */
	for (int k = 0; k < n; k++) {
		int i = (int)s->key[k].v;
		const TileBuf *it = &b[i];
		uint32_t align = it->align < 8 ? 8 : it->align;
		uint64_t base = lo;
		if (it->region == REGION_INTERLEAVED && base < c->interleave)
			base = c->interleave;
		uint64_t a = align_up(base, align);
		if (it->bytes == 0) {
			s->addr[i] = a;
			continue;
		}
		for (;;) {
			for (int j = 0; j < np; j++) {
				const PackPlaced *p = &s->placed[j];
				if (p->addr >= a + it->bytes)
					break;
				if (p->end <= a ||
				    !lifetimes_meet(p->first, p->last,
				                    it->first, it->last))
					continue;
				a = align_up(p->end, align);
			}
			int moved = 0;
			for (int q = s->pstart[i]; q < s->pstart[i + 1]; q++) {
				int o = s->pl[q];
				uint64_t oa = s->addr[o];
				uint32_t ob = b[o].bytes;
				if (oa == UINT64_MAX || ob == 0)
					continue;
				uint64_t olast =
				    chip_apart_unit(c, oa + ob - 1);
				if (chip_apart_unit(c, a) <= olast &&
				    chip_apart_unit(c, oa) <=
				        chip_apart_unit(c, a + it->bytes - 1)) {
					a = align_up(unit_start(c, olast + 1),
					             align);
					moved = 1;
				}
			}
			if (!moved)
				break;
		}
		s->addr[i] = a;
		/* insert, keeping the array sorted by address */
		int at = np;
		while (at > 0 && s->placed[at - 1].addr > a)
			at--;
		memmove(&s->placed[at + 1], &s->placed[at],
		        (size_t)(np - at) * sizeof *s->placed);
		s->placed[at] =
		    (PackPlaced){a, a + it->bytes, it->first, it->last};
		np++;
		if (a + it->bytes > high)
			high = a + it->bytes;
	}
	return high;
}

uint64_t
plan_tile_pack(const Chip *c, uint64_t code_end, const TileBuf *b, int n,
               TilePack *s, uint64_t *addr)
{
	/* the buffers live for the tile's whole step span */
	int32_t smin = INT32_MAX, smax = INT32_MIN;
	for (int i = 0; i < n; i++) {
		if (b[i].first < smin)
			smin = b[i].first;
		if (b[i].last > smax)
			smax = b[i].last;
	}
	for (int i = 0; i < n; i++)
		s->whole[i] = b[i].first <= smin && b[i].last >= smax;
	/* partners of the `apart` rule, both directions */
	memset(s->pstart, 0, (size_t)(n + 1) * sizeof *s->pstart);
	for (int i = 0; i < n; i++)
		if (b[i].apart >= 0) {
			s->pstart[i + 1]++;
			s->pstart[b[i].apart + 1]++;
		}
	for (int i = 0; i < n; i++)
		s->pstart[i + 1] += s->pstart[i];
	for (int i = 0; i < n; i++)
		s->fill[i] = s->pstart[i];
	for (int i = 0; i < n; i++)
		if (b[i].apart >= 0) {
			int j = b[i].apart;
			s->pl[s->fill[i]++] = j;
			s->pl[s->fill[j]++] = i;
		}
	uint64_t best = UINT64_MAX;
	for (int o = 0; o < NORDERS && best > c->mem_end; o++) {
		order_keys(b, s->whole, n, o, s->key);
		sort_keys(s->key, s->tmp, n);
		uint64_t high = pack(c, code_end, b, s, n);
		if (high < best) {
			best = high;
			if (addr)
				memcpy(addr, s->addr, (size_t)n * sizeof *addr);
		}
	}
	return best;
}

uint64_t
plan_tile_live(const TileBuf *b, int n, int inter, TilePack *s, int32_t *step)
{
	int ne = 0;
	for (int i = 0; i < n; i++) {
		if (inter && b[i].region != REGION_INTERLEAVED)
			continue;
		s->key[ne++] = (PackKey){step_key(b[i].first), 0, b[i].bytes};
		s->key[ne++] = (PackKey){step_key((int64_t)b[i].last + 1), 0,
		                         -(int64_t)b[i].bytes};
	}
	sort_keys(s->key, s->tmp, ne);
	int64_t cur = 0, best = 0;
	*step = 0;
	for (int e = 0; e < ne;) {
		uint64_t at = s->key[e].hi;
		while (e < ne && s->key[e].hi == at)
			cur += s->key[e++].v;
		if (cur > best) {
			best = cur;
			*step = (int32_t)(int64_t)(at ^ (1ull << 63));
		}
	}
	return (uint64_t)best;
}

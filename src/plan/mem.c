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
 *      gap that the small buffers fill only in part;
 *   4: as 3, but the whole-program buffers from mem_end down (pack's
 *      `down`): the bank then leaves the code's end to a buffer that
 *      must be apart from another, which above a bank from the code up
 *      would lie in 32 KiB pairs, its partner in the next one;
 *   5: the whole-program buffers first, then longest-lived, then
 *      largest, in either region: the buffers live over most of a loop
 *      (its weights, the carry) a layer right above the bank, instead
 *      of above the larger short-lived ones they all live with.
 */
enum { NORDERS = 6 };

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
		case 4:
			k[i].hi = (uint64_t)!whole[i] << 63 |
			          (whole[i] ? 0 : other) << 62 | nbytes << 30;
			k[i].lo = nspan << 32 | first;
			break;
		case 5:
			k[i].hi = (uint64_t)!whole[i] << 63 | nspan << 31;
			k[i].lo = nbytes << 32 | first;
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

/* 1 if [a, a + bytes) shares a unit with a placed partner of buffer i;
 * *unit0 then the partner's first unit, *unit1 its last. */
static int
partner_near(const Chip *c, const TileBuf *b, const TilePack *s, int i,
             uint64_t a, uint64_t bytes, uint64_t *unit0, uint64_t *unit1)
{
	for (int q = s->pstart[i]; q < s->pstart[i + 1]; q++) {
		int o = s->pl[q];
		uint64_t oa = s->addr[o];
		uint32_t ob = b[o].bytes;
		if (oa == UINT64_MAX || ob == 0)
			continue;
		uint64_t u0 = chip_apart_unit(c, oa),
		         u1 = chip_apart_unit(c, oa + ob - 1);
		if (chip_apart_unit(c, a) <= u1 &&
		    u0 <= chip_apart_unit(c, a + bytes - 1)) {
			*unit0 = u0;
			*unit1 = u1;
			return 1;
		}
	}
	return 0;
}

/* The lowest aligned address from base up for buffer i. */
static uint64_t
place_up(const Chip *c, uint64_t base, const TileBuf *b, const TilePack *s,
         int np, int i, uint32_t align)
{
	const TileBuf *it = &b[i];
	uint64_t a = align_up(base, align), u0, u1;
	for (;;) {
		for (int j = 0; j < np; j++) {
			const PackPlaced *p = &s->placed[j];
			if (p->addr >= a + it->bytes)
				break;
			if (p->end <= a || !lifetimes_meet(p->first, p->last,
			                                   it->first, it->last))
				continue;
			a = align_up(p->end, align);
		}
		if (!partner_near(c, b, s, i, a, it->bytes, &u0, &u1))
			return a;
		a = align_up(unit_start(c, u1 + 1), align);
	}
}

/* The highest aligned address at which buffer i ends by `top` and starts
 * at base or above; UINT64_MAX if there is none. One pass over the
 * placed buffers from the highest address down: lowering the candidate
 * below a conflict leaves the ones already passed above it. */
static uint64_t
place_down(const Chip *c, uint64_t base, uint64_t top, const TileBuf *b,
           const TilePack *s, int np, int i, uint32_t align)
{
	const TileBuf *it = &b[i];
	uint64_t end = top, u0, u1;
	for (;;) {
		if (end < base + it->bytes)
			return UINT64_MAX;
		uint64_t a = (end - it->bytes) / align * align;
		for (int j = np - 1; j >= 0; j--) {
			const PackPlaced *p = &s->placed[j];
			if (p->addr >= a + it->bytes || p->end <= a ||
			    !lifetimes_meet(p->first, p->last, it->first,
			                    it->last))
				continue;
			if (p->addr < base + it->bytes)
				return UINT64_MAX;
			a = (p->addr - it->bytes) / align * align;
		}
		if (a < base)
			return UINT64_MAX;
		if (!partner_near(c, b, s, i, a, it->bytes, &u0, &u1))
			return a;
		end = unit_start(c, u0);
	}
}

/* Packs the n buffers in the order of s->key from `lo` up, memory
 * unbounded above: each at the lowest aligned address in its region that
 * overlaps no placed buffer whose lifetime meets its own and shares no
 * unit with a placed partner; but if `down`, the buffers live for the
 * whole span at the highest such address that ends by mem_end (the
 * lowest if there is none). Writes s->addr; returns the high-water
 * address (lo if nothing takes memory). */
static uint64_t
pack(const Chip *c, uint64_t lo, const TileBuf *b, TilePack *s, int n, int down)
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
		if (it->bytes == 0) {
			s->addr[i] = align_up(base, align);
			continue;
		}
		uint64_t a =
		    down && s->whole[i]
		        ? place_down(c, base, c->mem_end, b, s, np, i, align)
		        : UINT64_MAX;
		if (a == UINT64_MAX)
			a = place_up(c, base, b, s, np, i, align);
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

/* packings a repair tries: about 30 ms on a tile of 500 buffers */
enum { REPAIRS = 256 };

/* 1 unless the tile's live bytes alone pass mem_end (code and data) or
 * the interleaved region: then no packing fits, and no repair is tried.
 * Takes s->key and s->tmp as scratch. */
static int
repair_may_fit(const Chip *c, uint64_t code_end, const TileBuf *b, int n,
               TilePack *s)
{
	int32_t step;
	return code_end + plan_tile_live(b, n, 0, s, &step) <= c->mem_end &&
	       plan_tile_live(b, n, 1, s, &step) <= c->mem_end - c->interleave;
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
	int bo = 0; /* the order of the best packing */
	for (int o = 0; o < NORDERS && best > c->mem_end; o++) {
		order_keys(b, s->whole, n, o, s->key);
		sort_keys(s->key, s->tmp, n);
		uint64_t high = pack(c, code_end, b, s, n, o == 4);
		if (high < best) {
			best = high;
			bo = o;
			if (addr)
				memcpy(addr, s->addr, (size_t)n * sizeof *addr);
		}
	}
	if (best <= c->mem_end || !repair_may_fit(c, code_end, b, n, s))
		return best;
	/* Repair: from the best order, the buffer that ends highest goes
	 * before every buffer not live for the whole span, and the tile is
	 * packed again, up to REPAIRS times or until it fits: what a greedy
	 * order wastes is mostly where the buffers that came late found a
	 * memory already cut up (docs/placement.md, "The algorithm"). */
	PackKey *cur = s->key + n;
	order_keys(b, s->whole, n, bo, cur);
	sort_keys(cur, s->tmp, n);
	for (int r = 0; r < REPAIRS && best > c->mem_end; r++) {
		memcpy(s->key, cur, (size_t)n * sizeof *cur);
		uint64_t high = pack(c, code_end, b, s, n, bo == 4);
		if (high < best) {
			best = high;
			if (addr)
				memcpy(addr, s->addr, (size_t)n * sizeof *addr);
		}
		int top = -1;
		for (int k = 0; k < n; k++) {
			int i = (int)cur[k].v;
			if (b[i].bytes &&
			    (top < 0 ||
			     s->addr[i] + b[i].bytes >
			         s->addr[cur[top].v] + b[cur[top].v].bytes))
				top = k;
		}
		int q = 0;
		while (q < top && s->whole[cur[q].v] && !s->whole[cur[top].v])
			q++;
		if (top <= q)
			break; /* already where it would go */
		PackKey t = cur[top];
		memmove(&cur[q + 1], &cur[q], (size_t)(top - q) * sizeof *cur);
		cur[q] = t;
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

/*
 * test_place.c - placement of lowered buffers (src/place/): alignment,
 * lifetimes, the interleaved region, the `apart` rule, code ends, the
 * overflow report, determinism, and a whole-chip sanity run.
 *
 * The Lowered programs are built by hand (buffer arrays filled directly).
 * Every placement is checked by check_placement, which works the rules out
 * again from the buffer list and chip_mem_element, pair by pair, without
 * the placer's data structures. Expected addresses and report figures are
 * worked out by hand in the comments.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/place/place.h"

static Lowered *
new_lowered(uint32_t tiles)
{
	Lowered *l = calloc(1, sizeof *l);
	l->chip = chip_default();
	l->tiles = tiles;
	return l;
}

static void
free_lowered(Lowered *l)
{
	free(l->buf);
	free(l);
}

static int32_t
add(Lowered *l, uint32_t tile, uint32_t bytes, uint32_t align, MemRegion region,
    int32_t first, int32_t last, const char *what)
{
	if (l->nbuf == l->capbuf) {
		l->capbuf = l->capbuf ? 2 * l->capbuf : 16;
		l->buf = realloc(l->buf, (size_t)l->capbuf * sizeof *l->buf);
	}
	l->buf[l->nbuf] = (Buffer){.tile = tile,
	                           .bytes = bytes,
	                           .align = align,
	                           .region = (uint8_t)region,
	                           .first = first,
	                           .last = last,
	                           .apart = -1,
	                           .what = what};
	return l->nbuf++;
}

/* The `apart` unit of an address from chip_mem_element: an element below
 * the interleaved region, a pair of elements in it. */
static int
unit(const Chip *c, uint32_t addr)
{
	int e = chip_mem_element(c, addr);
	int r0 = chip_mem_element(c, c->interleave);
	assert_true(e >= 0);
	return e < r0 ? e : r0 + (e - r0) / 2;
}

/* Bit set of the units a byte range touches, looked up atom by atom. */
static uint64_t
units(const Chip *c, uint32_t addr, uint32_t bytes)
{
	uint64_t set = 0;
	if (!bytes)
		return 0;
	for (uint32_t a = addr; a < addr + bytes; a = (a | 7) + 1)
		set |= 1ull << unit(c, a);
	set |= 1ull << unit(c, addr + bytes - 1);
	return set;
}

/* Every rule, checked over all pairs of buffers of the same tile; only
 * the buffers of tile `only` if only >= 0. */
static void
check_placement(const Lowered *l, const uint32_t *code_end, int only)
{
	const Chip *c = l->chip;
	int *ids = malloc((size_t)l->nbuf * sizeof *ids);
	int n = 0;
	for (int i = 0; i < l->nbuf; i++)
		if (only < 0 || l->buf[i].tile == (uint32_t)only)
			ids[n++] = i;
	for (int x = 0; x < n; x++) {
		int i = ids[x];
		const Buffer *b = &l->buf[i];
		uint32_t lo = code_end ? code_end[b->tile] : c->mem_base;
		uint32_t align = b->align < 8 ? 8 : b->align;
		assert_true(b->addr != 0);
		assert_int_equal(b->addr % align, 0);
		assert_true(b->addr >= lo);
		assert_true((uint64_t)b->addr + b->bytes <= c->mem_end);
		if (b->region == REGION_INTERLEAVED)
			assert_true(b->addr >= c->interleave);
		for (int y = x + 1; y < n; y++) {
			int j = ids[y];
			const Buffer *o = &l->buf[j];
			if (o->tile != b->tile)
				continue;
			int live_together =
			    !(b->last < o->first || o->last < b->first);
			int overlap = b->bytes && o->bytes &&
			              b->addr < o->addr + o->bytes &&
			              o->addr < b->addr + b->bytes;
			if (live_together && overlap)
				fail_msg("buffers %d and %d overlap", i, j);
			if (b->apart == j || o->apart == i)
				assert_int_equal(
				    units(c, b->addr, b->bytes) &
				        units(c, o->addr, o->bytes),
				    0);
		}
	}
	free(ids);
}

static void
test_alignment(void **state)
{
	(void)state;
	Lowered *l = new_lowered(1);
	const Chip *c = l->chip;
	uint32_t code_end[1] = {c->mem_base + 1234 + 2}; /* 0x4C4D4 */
	static const uint32_t aligns[] = {8, 16, 64, 256, 4096, 16384, 8};
	for (int i = 0; i < 7; i++)
		add(l, 0, 100 + 8 * (uint32_t)i, aligns[i], REGION_ANY, 0, 9,
		    "x");
	PlaceReport rep;
	Diag d;
	assert_int_equal(place_buffers(l, code_end, &rep, &d), IPU_OK);
	check_placement(l, code_end, -1);
	/* The smallest with align 8 goes first among the whole-program ones
	 * of its size order, but some buffer must start at code_end rounded
	 * to 8: 0x4C4D8. */
	uint32_t lowest = UINT32_MAX;
	for (int i = 0; i < l->nbuf; i++)
		if (l->buf[i].addr < lowest)
			lowest = l->buf[i].addr;
	assert_int_equal(lowest, 0x4C4D8);
	assert_int_equal(l->buf[5].addr % 16384, 0);
	place_report_free(&rep);
	free_lowered(l);
}

static void
test_lifetimes(void **state)
{
	(void)state;
	Lowered *l = new_lowered(1);
	const Chip *c = l->chip;
	/* Disjoint lifetimes, nothing else: both at the bottom. */
	int a = add(l, 0, 1000, 8, REGION_ANY, 0, 1, "a");
	int b = add(l, 0, 1000, 8, REGION_ANY, 2, 3, "b");
	/* Live together with b only: right above it. */
	int x = add(l, 0, 64, 8, REGION_ANY, 3, 3, "x");
	PlaceReport rep;
	assert_int_equal(place_buffers(l, NULL, &rep, NULL), IPU_OK);
	check_placement(l, NULL, -1);
	assert_int_equal(l->buf[a].addr, c->mem_base);
	assert_int_equal(l->buf[b].addr, c->mem_base);
	assert_int_equal(l->buf[x].addr, c->mem_base + 1000);
	assert_int_equal(rep.tile[0].peak, 1064);
	assert_int_equal(rep.tile[0].peak_step, 3);
	assert_int_equal(rep.tile[0].high, c->mem_base + 1064);
	place_report_free(&rep);
	free_lowered(l);
}

static uint32_t
lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

/* n random buffers per tile over `steps` steps, some interleaved, some
 * pairs apart; the tiles alike if `same`. */
static Lowered *
random_program(uint32_t tiles, int n, int steps, int same, uint64_t seed)
{
	Lowered *l = new_lowered(tiles);
	static const char *whats[] = {"A chunk", "B chunk", "C block",
	                              "partials", "args"};
	for (uint32_t t = 0; t < tiles; t++) {
		uint64_t s = same ? seed : seed + t * 7919;
		int base = l->nbuf;
		for (int i = 0; i < n; i++) {
			uint32_t r = lcg(&s);
			uint32_t bytes =
			    8 + lcg(&s) % (r % 8 == 0 ? 24000 : 3000);
			uint32_t align = 8u << (lcg(&s) % 4);
			int32_t first = (int32_t)(lcg(&s) % (uint32_t)steps);
			int32_t len = (int32_t)(lcg(&s) % 8);
			int32_t last = first + len;
			if (r % 13 == 0) {
				first = 0;
				last = INT32_MAX;
			}
			MemRegion region =
			    r % 5 == 0 ? REGION_INTERLEAVED : REGION_ANY;
			int id = add(l, t, bytes, align, region, first, last,
			             whats[r % 5]);
			if (i > 0 && r % 7 == 0) {
				int o = base + (int)(lcg(&s) % (uint32_t)i);
				l->buf[id].apart = o;
			}
		}
	}
	return l;
}

static void
test_random_rules(void **state)
{
	(void)state;
	Lowered *l = random_program(3, 150, 40, 0, 12345);
	uint32_t code_end[3] = {0x4C000 + 8000, 0x4C000 + 40004, 0x60000};
	PlaceReport rep;
	Diag d;
	int rc = place_buffers(l, code_end, &rep, &d);
	if (rc)
		fail_msg("%s", d.msg);
	check_placement(l, code_end, -1);
	place_report_free(&rep);
	free_lowered(l);
}

static void
test_interleaved(void **state)
{
	(void)state;
	Lowered *l = new_lowered(1);
	const Chip *c = l->chip;
	int any = add(l, 0, 512, 8, REGION_ANY, 0, 5, "any");
	int in1 = add(l, 0, 4096, 16, REGION_INTERLEAVED, 0, 5, "L");
	int in2 = add(l, 0, 100, 16, REGION_INTERLEAVED, 2, 3, "L");
	uint32_t code_end[1] = {0x70000};
	PlaceReport rep;
	assert_int_equal(place_buffers(l, code_end, &rep, NULL), IPU_OK);
	check_placement(l, code_end, -1);
	/* order: interleaved first, by size: in1 at 0x80000, in2 above it;
	 * then `any` from the code end up. */
	assert_int_equal(l->buf[in1].addr, c->interleave);
	assert_int_equal(l->buf[in2].addr, c->interleave + 4096);
	assert_int_equal(l->buf[any].addr, 0x70000);
	place_report_free(&rep);
	free_lowered(l);
}

/* A whole-program buffer larger than region 0 (a loop's weight bank)
 * beside a whole-program interleaved one. Orders 0 to 2 put the
 * interleaved buffer first, at 0x80000, and the bank above it: 0x80000 +
 * 200,000 + 400,000 = 1,124,288, past mem_end (0xE8000 = 950,272). Order
 * 3 puts the bank first, at mem_base, running into the interleaved
 * region (0x4C000 + 400,000 = 0xADA80), and the interleaved buffer above
 * it: 0xADA80 + 200,000 = 911,296, within the tile. */
static void
test_bottom_layer(void **state)
{
	(void)state;
	Lowered *l = new_lowered(1);
	const Chip *c = l->chip;
	int in = add(l, 0, 200000, 16, REGION_INTERLEAVED, 0, 5, "L");
	int bank = add(l, 0, 400000, 8, REGION_ANY, 0, 5, "bank");
	PlaceReport rep;
	assert_int_equal(place_buffers(l, NULL, &rep, NULL), IPU_OK);
	check_placement(l, NULL, -1);
	assert_int_equal(l->buf[bank].addr, c->mem_base);
	assert_int_equal(l->buf[in].addr, 0xADA80);
	place_report_free(&rep);
	free_lowered(l);
}

/* The bank at the top (order 4). Code to 0x64000; W (235,616 bytes, ANY,
 * steps 0..3), E (180,224, step 0) and S (114,688, step 3), S apart from
 * E. Orders 0 to 3 (and 5) take W first, from the code up: W
 * 0x64000..0x9D860, E above it to 0xC9860, in the pairs 0x98000 to
 * 0xC8000, so S, which E's lifetime does not meet, must start at the
 * next pair, 0xD0000, and ends at 0xEC000, past mem_end. Order 4 puts W
 * from mem_end down, at 0xE8000 - 235,616 = 0xAE7A0; E then starts at
 * the code (to 0x90000: region 0 and the pairs 0x80000, 0x88000) and S
 * at 0x90000, the next unit, ending at 0xAC000, below W. */
static void
test_top_layer(void **state)
{
	(void)state;
	Lowered *l = new_lowered(1);
	int w = add(l, 0, 235616, 8, REGION_ANY, 0, 3, "bank");
	int s = add(l, 0, 114688, 8, REGION_ANY, 3, 3, "s");
	int e = add(l, 0, 180224, 8, REGION_ANY, 0, 0, "e");
	l->buf[e].apart = s;
	uint32_t code_end[1] = {0x64000};
	PlaceReport rep;
	assert_int_equal(place_buffers(l, code_end, &rep, NULL), IPU_OK);
	check_placement(l, code_end, -1);
	assert_int_equal(l->buf[w].addr, 0xAE7A0);
	assert_int_equal(l->buf[e].addr, 0x64000);
	assert_int_equal(l->buf[s].addr, 0x90000);
	assert_int_equal(rep.tile[0].high, 0xE8000);
	place_report_free(&rep);
	free_lowered(l);
}

/* The long-lived layer above the bank (order 5). Code to 0x54000; W
 * (245,104 bytes, ANY, steps 0..3), L (245,760, ANY, steps 1..3), S
 * (114,688, ANY, step 3) and I (49,152, interleaved, step 2). Step 3
 * needs code 32,768 + W + L + S = 638,320 of the tile's 638,976 bytes.
 * Orders 0 to 2 put I first, at 0x80000, so W, which lives with it, does
 * not fit in region 0 below it and L and S end past mem_end. Order 3
 * takes W first (0x54000..0x8FD70), then I (to 0x9BD70), then L, which
 * lives with I, above I (to 0xD7D70), and S lives with both W and L: from
 * 0xD7D70, past the end. Order 4 puts W at the top (0xAC290), I at
 * 0x80000, and L, which does not fit below I, neither between I and W.
 * Order 5 takes the longest-lived first after W: L right above W
 * (0x8FD70..0xCBD70), then S above L (to 0xE7D70) and I beside S, from
 * 0xCBD70 too, since their lifetimes do not meet. */
static void
test_lifetime_layer(void **state)
{
	(void)state;
	Lowered *l = new_lowered(1);
	int w = add(l, 0, 245104, 8, REGION_ANY, 0, 3, "bank");
	int in = add(l, 0, 49152, 8, REGION_INTERLEAVED, 2, 2, "i");
	int lo = add(l, 0, 245760, 8, REGION_ANY, 1, 3, "l");
	int s = add(l, 0, 114688, 8, REGION_ANY, 3, 3, "s");
	uint32_t code_end[1] = {0x54000};
	PlaceReport rep;
	assert_int_equal(place_buffers(l, code_end, &rep, NULL), IPU_OK);
	check_placement(l, code_end, -1);
	assert_int_equal(l->buf[w].addr, 0x54000);
	assert_int_equal(l->buf[lo].addr, 0x8FD70);
	assert_int_equal(l->buf[s].addr, 0xCBD70);
	assert_int_equal(l->buf[in].addr, 0xCBD70);
	assert_int_equal(rep.tile[0].high, 0xE7D70);
	place_report_free(&rep);
	free_lowered(l);
}

/* The repair: code to 0x5C000; W (291,328 bytes, ANY, steps 0..3), Y
 * (262,144, ANY, steps 2..3) and X (16,384, ANY, step 2), X apart from
 * Y. Every order takes Y before X (larger, longer-lived): with W from the
 * code up (orders 0 to 3, 5), W ends at 0xA3200, Y above it to 0xE3200,
 * in the pairs 0xA0000 to 0xE0000, so X must start at 0xE8000, past the
 * end (0xEC000, the best of the orders); with W at the top (order 4,
 * 0xA0E00), Y goes from the code to 0x9C000 and X, apart from it, can
 * start no lower than the pair 0xA0000, where W lies: above W, again
 * 0xEC000. The repair moves X, which ends highest, before Y (after W, the
 * whole-span buffer): X at 0xA3200, and Y in the next pair, 0xA8000,
 * ending at mem_end exactly. */
static void
test_repair(void **state)
{
	(void)state;
	Lowered *l = new_lowered(1);
	int w = add(l, 0, 291328, 8, REGION_ANY, 0, 3, "bank");
	int x = add(l, 0, 16384, 8, REGION_ANY, 2, 2, "x");
	int y = add(l, 0, 262144, 8, REGION_ANY, 2, 3, "y");
	l->buf[y].apart = x;
	uint32_t code_end[1] = {0x5C000};
	PlaceReport rep;
	assert_int_equal(place_buffers(l, code_end, &rep, NULL), IPU_OK);
	check_placement(l, code_end, -1);
	assert_int_equal(l->buf[w].addr, 0x5C000);
	assert_int_equal(l->buf[x].addr, 0xA3200);
	assert_int_equal(l->buf[y].addr, 0xA8000);
	assert_int_equal(rep.tile[0].high, 0xE8000);
	place_report_free(&rep);
	free_lowered(l);
}

static void
test_apart(void **state)
{
	(void)state;
	Lowered *l = new_lowered(1);
	const Chip *c = l->chip;
	/* Region 0: a at the bottom, its partner in the next 16 KiB element
	 * (0x50000); a third, unconstrained, right after a. */
	int a = add(l, 0, 200, 8, REGION_ANY, 0, 3, "a");
	int b = add(l, 0, 100, 8, REGION_ANY, 0, 3, "b");
	int e = add(l, 0, 50, 8, REGION_ANY, 0, 3, "e");
	l->buf[b].apart = a;
	/* Interleaved: p at 0x80000, q apart from it in the next 32 KiB
	 * pair, 0x88000, not merely the next element (0x80008 would be in
	 * the other element of p's pair). */
	int p = add(l, 0, 1000, 16, REGION_INTERLEAVED, 0, 3, "p");
	int q = add(l, 0, 500, 16, REGION_INTERLEAVED, 0, 3, "q");
	l->buf[p].apart = q; /* named from the other side */
	PlaceReport rep;
	assert_int_equal(place_buffers(l, NULL, &rep, NULL), IPU_OK);
	check_placement(l, NULL, -1);
	assert_int_equal(l->buf[a].addr, c->mem_base);
	assert_int_equal(l->buf[e].addr, c->mem_base + 200);
	assert_int_equal(l->buf[b].addr, 0x50000);
	assert_int_equal(l->buf[p].addr, 0x80000);
	assert_int_equal(l->buf[q].addr, 0x88000);
	place_report_free(&rep);
	free_lowered(l);
}

static void
test_code_end(void **state)
{
	(void)state;
	Lowered *l = new_lowered(3);
	uint32_t code_end[3] = {0x4C000, 0x5A001, 0x80000};
	for (uint32_t t = 0; t < 3; t++) {
		add(l, t, 4000, 64, REGION_ANY, 0, INT32_MAX, "w");
		add(l, t, 800, 8, REGION_ANY, 1, 2, "t");
	}
	PlaceReport rep;
	assert_int_equal(place_buffers(l, code_end, &rep, NULL), IPU_OK);
	check_placement(l, code_end, -1);
	assert_int_equal(l->buf[0].addr, 0x4C000);
	assert_int_equal(l->buf[2].addr, 0x5A040); /* 0x5A001 up to 64 */
	assert_int_equal(l->buf[3].addr, 0x5A040 + 4000);
	assert_int_equal(l->buf[4].addr, 0x80000);
	assert_int_equal(rep.tile[1].code, 0x5A001 - 0x4C000);
	assert_int_equal(rep.tile[2].high, 0x80000 + 4800);
	assert_int_equal(rep.top_tile, 2);
	/* code past exec_end does not fit: reported with the data the tile
	 * would hold at its peak (steps 1..2: w 4,000 + t 800) */
	place_report_free(&rep);
	code_end[1] = 0x80008;
	Diag d;
	assert_int_equal(place_buffers(l, code_end, &rep, &d), IPU_ERANGE);
	assert_int_equal(rep.nover, 1);
	const PlaceOverflow *o = &rep.over[0];
	assert_int_equal(o->tile, 1);
	assert_int_equal(o->kind, PLACE_OVER_CODE);
	assert_int_equal(o->need, 0x80008 - 0x4C000);
	assert_int_equal(o->avail, 0x80000 - 0x4C000);
	assert_int_equal(o->over, 8);
	assert_int_equal(o->step, 1);
	assert_int_equal(rep.tile[1].high, 0);
	char line[512];
	place_overflow_format(&rep, o, line, sizeof line);
	assert_string_equal(line,
	                    "tile 1: 213,000 bytes of code, 8 more than the "
	                    "212,992 where instructions can be fetched; with "
	                    "the data live at step 1 it needs 217,800 bytes "
	                    "(code 213,000; w 4,000; t 800), within the "
	                    "tile's 638,976 bytes");
	assert_non_null(strstr(d.msg, "1 of 3 tiles do not fit"));
	/* below the memory is malformed */
	place_report_free(&rep);
	code_end[1] = 0x4B000;
	assert_int_equal(place_buffers(l, code_end, &rep, &d), IPU_EINVAL);
	assert_non_null(strstr(d.msg, "tile 1"));
	place_report_free(&rep);
	free_lowered(l);
}

static void
test_overflow(void **state)
{
	(void)state;
	Lowered *l = new_lowered(4);
	const Chip *c = l->chip;
	uint32_t code_end[4] = {0x4C000 + 4000, 0x4C000 + 9200, 0x4C000,
	                        0x4C000};
	/* Tile 0 fits. */
	add(l, 0, 100000, 8, REGION_ANY, 0, 20, "C block");
	/* Tile 1: live at step 12: C block 327,680 + A chunk 2 x 131,072 +
	 * B chunk 100,000 = 689,824 bytes, with the code 699,024; the
	 * memory holds 0xE8000 - 0x4C000 = 638,976, so 60,048 over. Step
	 * 10..11 hold 589,824 + code, steps 0..5 377,680 + code. */
	add(l, 1, 327680, 8, REGION_ANY, 0, 20, "C block");
	add(l, 1, 131072, 8, REGION_ANY, 10, 12, "A chunk");
	add(l, 1, 131072, 8, REGION_ANY, 10, 12, "A chunk");
	add(l, 1, 100000, 8, REGION_ANY, 12, 14, "B chunk");
	add(l, 1, 50000, 8, REGION_ANY, 0, 5, "scratch");
	/* Tile 2: 500,000 bytes live in the interleaved region at steps 3
	 * and 4; it holds 0xE8000 - 0x80000 = 425,984: 74,016 over. */
	add(l, 2, 250000, 16, REGION_INTERLEAVED, 3, 4, "L panel");
	add(l, 2, 250000, 16, REGION_INTERLEAVED, 2, 4, "L panel");
	/* Tile 3: 600,008 bytes fit in total, but a 600,000-byte buffer
	 * aligned to 256 KiB can only start at 0x80000 (0x40000 is below
	 * memory) and then ends at 0x80000 + 600,000 = 0x1127C0, 174,016
	 * past 0xE8000, whatever the order. */
	add(l, 3, 8, 8, REGION_ANY, 0, INT32_MAX, "X");
	add(l, 3, 600000, 0x40000, REGION_ANY, 0, INT32_MAX, "Y");

	PlaceReport rep;
	Diag d;
	assert_int_equal(place_buffers(l, code_end, &rep, &d), IPU_ERANGE);
	assert_int_equal(rep.nover, 3);

	const PlaceOverflow *o = &rep.over[0];
	assert_int_equal(o->tile, 1);
	assert_int_equal(o->kind, PLACE_OVER_TOTAL);
	assert_int_equal(o->step, 12);
	assert_int_equal(o->need, 699024);
	assert_int_equal(o->avail, 638976);
	assert_int_equal(o->over, 60048);
	char line[512];
	place_overflow_format(&rep, o, line, sizeof line);
	assert_string_equal(line,
	                    "tile 1: needs 699,024 bytes at step 12 (code "
	                    "9,200; C block 327,680; A chunk 262,144 in 2; "
	                    "B chunk 100,000), 60,048 bytes more than the "
	                    "638,976 available");

	o = &rep.over[1];
	assert_int_equal(o->tile, 2);
	assert_int_equal(o->kind, PLACE_OVER_INTERLEAVED);
	assert_int_equal(o->step, 3);
	assert_int_equal(o->over, 74016);
	place_overflow_format(&rep, o, line, sizeof line);
	assert_string_equal(line, "tile 2: needs 500,000 bytes of the "
	                          "interleaved region at step 3 (L panel "
	                          "500,000 in 2), 74,016 bytes more than the "
	                          "425,984 it holds");

	o = &rep.over[2];
	assert_int_equal(o->tile, 3);
	assert_int_equal(o->kind, PLACE_OVER_PACKING);
	assert_int_equal(o->need, 600008);
	assert_int_equal(o->packed, 0x1127C0);
	assert_int_equal(o->over, 174016);
	place_overflow_format(&rep, o, line, sizeof line);
	assert_string_equal(line,
	                    "tile 3: needs 600,008 bytes at step 0 (code 0; "
	                    "Y 600,000; X 8), within the 638,976 available, "
	                    "but alignment, the element rules and "
	                    "fragmentation leave the best packing 174,016 "
	                    "bytes past the end (0x1127c0 > 0xe8000)");

	/* The diagnostic names the worst tile; tile 0 is placed, the
	 * overflowing tiles' buffers are not. */
	assert_non_null(strstr(d.msg, "3 of 4 tiles do not fit"));
	assert_non_null(strstr(d.msg, "tile 3: needs 600,008"));
	assert_int_equal(l->buf[0].addr, c->mem_base + 4000);
	for (int i = 1; i < l->nbuf; i++)
		assert_int_equal(l->buf[i].addr, 0);

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	place_report_print(&rep, f);
	fclose(f);
	if (getenv("PLACE_PRINT"))
		fputs(text, stdout);
	assert_non_null(strstr(text, "3 tiles do not fit"));
	assert_non_null(strstr(text, "tile 1: needs 699,024 bytes at step 12"));
	assert_non_null(strstr(text, "tile 2: needs 500,000 bytes"));
	free(text);
	place_report_free(&rep);
	free_lowered(l);
}

static void
test_report(void **state)
{
	(void)state;
	Lowered *l = new_lowered(2);
	uint32_t code_end[2] = {0x4C000 + 1000, 0x4C000};
	/* Tile 0: live 800 at step 0, 1,200 at step 1, 600 at 2, 200 at 3.
	 * By size: a800 at 0x4C3E8, b400 above it at 0x4C708 (they meet at
	 * step 1), a200 back at 0x4C3E8 (it meets only b); high 0x4C898. */
	add(l, 0, 800, 8, REGION_ANY, 0, 1, "a");
	add(l, 0, 400, 8, REGION_ANY, 1, 2, "b");
	add(l, 0, 200, 8, REGION_ANY, 2, 3, "a");
	/* Tile 1: one 4 KiB buffer: high 0x4D000, the top tile. */
	add(l, 1, 4096, 8, REGION_ANY, 0, INT32_MAX, "b");
	PlaceReport rep;
	assert_int_equal(place_buffers(l, code_end, &rep, NULL), IPU_OK);
	check_placement(l, code_end, -1);
	assert_int_equal(l->buf[0].addr, 0x4C3E8);
	assert_int_equal(l->buf[1].addr, 0x4C708);
	assert_int_equal(l->buf[2].addr, 0x4C3E8);
	assert_int_equal(rep.tile[0].peak, 1200);
	assert_int_equal(rep.tile[0].peak_step, 1);
	assert_int_equal(rep.tile[0].high, 0x4C898);
	assert_int_equal(rep.tile[0].code, 1000);
	assert_int_equal(rep.tile[1].high, 0x4D000);
	assert_int_equal(rep.top_tile, 1);
	assert_int_equal(rep.nbuf, 4);
	/* by kind: b 4,496 (2 buffers, 4,096 on tile 1), then a and code
	 * with 1,000 each, by name */
	assert_int_equal(rep.nkind, 3);
	assert_string_equal(rep.kind[0].what, "b");
	assert_int_equal(rep.kind[0].bytes, 4496);
	assert_int_equal(rep.kind[0].count, 2);
	assert_int_equal(rep.kind[0].tile_max, 4096);
	assert_string_equal(rep.kind[1].what, "a");
	assert_int_equal(rep.kind[1].bytes, 1000);
	assert_int_equal(rep.kind[1].tile_max, 1000);
	assert_string_equal(rep.kind[2].what, "code");
	assert_int_equal(rep.kind[2].bytes, 1000);
	assert_int_equal(rep.kind[2].count, 2);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	place_report_print(&rep, f);
	fclose(f);
	assert_non_null(strstr(text, "placement: 2 tiles, 4 buffers; highest "
	                             "water 0x4d000 on tile 1"));
	free(text);
	place_report_free(&rep);
	free_lowered(l);
}

static void
test_invalid(void **state)
{
	(void)state;
	Lowered *l = new_lowered(2);
	int a = add(l, 0, 64, 8, REGION_ANY, 0, 1, "a");
	int b = add(l, 1, 64, 8, REGION_ANY, 0, 1, "b");
	PlaceReport rep;
	Diag d;
	l->buf[a].apart = b; /* another tile */
	assert_int_equal(place_buffers(l, NULL, &rep, &d), IPU_EINVAL);
	assert_non_null(strstr(d.msg, "apart"));
	l->buf[a].apart = -1;
	l->buf[a].align = 24;
	assert_int_equal(place_buffers(l, NULL, &rep, &d), IPU_EINVAL);
	assert_non_null(strstr(d.msg, "power of two"));
	l->buf[a].align = 8;
	l->buf[b].tile = 2;
	assert_int_equal(place_buffers(l, NULL, &rep, &d), IPU_EINVAL);
	l->buf[b].tile = 1;
	l->buf[b].first = 3;
	assert_int_equal(place_buffers(l, NULL, &rep, &d), IPU_EINVAL);
	l->buf[b].first = 0;
	assert_int_equal(place_buffers(l, NULL, NULL, &d), IPU_OK);
	place_report_free(&rep);
	free_lowered(l);
}

static void
test_determinism(void **state)
{
	(void)state;
	Lowered *l1 = random_program(8, 120, 30, 0, 99);
	Lowered *l2 = random_program(8, 120, 30, 0, 99);
	assert_int_equal(place_buffers(l1, NULL, NULL, NULL), IPU_OK);
	assert_int_equal(place_buffers(l2, NULL, NULL, NULL), IPU_OK);
	for (int i = 0; i < l1->nbuf; i++)
		assert_int_equal(l1->buf[i].addr, l2->buf[i].addr);
	/* Placing again (addresses already set) gives the same again. */
	assert_int_equal(place_buffers(l2, NULL, NULL, NULL), IPU_OK);
	for (int i = 0; i < l1->nbuf; i++)
		assert_int_equal(l1->buf[i].addr, l2->buf[i].addr);
	/* A tile equal to an earlier one gets that tile's addresses. */
	Lowered *s = random_program(4, 120, 30, 1, 5);
	assert_int_equal(place_buffers(s, NULL, NULL, NULL), IPU_OK);
	check_placement(s, NULL, -1);
	for (int i = 0; i < 120; i++)
		assert_int_equal(s->buf[i].addr, s->buf[360 + i].addr);
	free_lowered(l1);
	free_lowered(l2);
	free_lowered(s);
}

static double
seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A whole chip: 1472 tiles x 300 buffers, all different, then all alike.
 * A sanity bound only; the times are printed. */
static void
test_whole_chip(void **state)
{
	(void)state;
	for (int same = 0; same < 2; same++) {
		Lowered *l = random_program(1472, 300, 100, same, 77);
		PlaceReport rep;
		Diag d;
		double t0 = seconds();
		int rc = place_buffers(l, NULL, &rep, &d);
		double dt = seconds() - t0;
		if (rc)
			fail_msg("%s", d.msg);
		/* speed is the benchmarks' business (a loaded machine or the
		 * sanitizer build may take seconds): printed, not asserted */
		printf("place: 1472 tiles x 300 buffers (%s): %.1f ms\n",
		       same ? "alike" : "all different", 1e3 * dt);
		check_placement(l, NULL, 0);
		check_placement(l, NULL, 1471);
		place_report_free(&rep);
		free_lowered(l);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_alignment),
	    cmocka_unit_test(test_lifetimes),
	    cmocka_unit_test(test_random_rules),
	    cmocka_unit_test(test_interleaved),
	    cmocka_unit_test(test_bottom_layer),
	    cmocka_unit_test(test_top_layer),
	    cmocka_unit_test(test_lifetime_layer),
	    cmocka_unit_test(test_repair),
	    cmocka_unit_test(test_apart),
	    cmocka_unit_test(test_code_end),
	    cmocka_unit_test(test_overflow),
	    cmocka_unit_test(test_report),
	    cmocka_unit_test(test_invalid),
	    cmocka_unit_test(test_determinism),
	    cmocka_unit_test(test_whole_chip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_kernel_gather.c - kernels/gather.S on one tile: a table of
 * distinct bytes, ids picked by hand (both ends, repeats, any order, and
 * some below and above the table, which read its end rows), dst compared
 * byte for byte with the table's rows clamp(ids[n] - base), the bytes
 * around it untouched, and the call's cycles against gather_cycles
 * (exact), at the nominal timing profile and at its bounds.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "../src/asm/asm.h"
#include "../src/bench/tile_kernel.h"
#include "../src/kernels/gather.h"
#include "../src/kernels/kernels.h"

enum {
	TABLE = 0x60000,
	IDS = 0x58000,
	DST = 0x90000,
	ARGS = 0x50000,
	GUARD = 16
};

static uint8_t
byte_of(uint32_t row, uint32_t i)
{
	return (uint8_t)(row * 71u + i * 13u + (i >> 8) + 1u);
}

static void
check(const Chip *c, uint32_t vrows, uint32_t atoms, uint32_t rows,
      uint32_t base)
{
	static const char *const names[] = {"gather"};
	TileImage img;
	Diag d;
	assert_int_equal(kernel_image(names, 1, c, &img, &d), 0);
	Tile *t = tile_new(c, 0);
	tile_load_image(t, &img);
	uint32_t row = atoms * 8, out = rows * row;
	for (uint32_t v = 0; v < vrows; v++)
		for (uint32_t i = 0; i < row; i++) {
			uint8_t b = byte_of(v, i);
			tile_write(t, TABLE + v * row + i, &b, 1);
		}
	/* ids: the last row, row 0, then a walk with repeats over the rows
	 * and 3 ids either side, which read the end rows */
	uint32_t *row_of = xmalloc(rows * sizeof *row_of);
	for (uint32_t n = 0; n < rows; n++) {
		int64_t id =
		    n == 0   ? base + vrows - 1
		    : n == 1 ? base
		             : (int64_t)base - 3 + (n * 7 + 3) % (vrows + 6);
		row_of[n] = id < (int64_t)base ? 0
		            : id >= base + (int64_t)vrows
		                ? vrows - 1
		                : (uint32_t)(id - base);
		float f = (float)id;
		tile_write(t, IDS + 4 * n, &f, 4);
	}
	uint8_t *want = xmalloc(out + 2 * GUARD),
	        *got = xmalloc(out + 2 * GUARD);
	memset(want, 0xEE, out + 2 * GUARD);
	tile_write(t, DST - GUARD, want, out + 2 * GUARD);
	for (uint32_t n = 0; n < rows; n++)
		for (uint32_t i = 0; i < row; i++)
			want[GUARD + n * row + i] = byte_of(row_of[n], i);
	GatherCall k = {.table = TABLE,
	                .ids = IDS,
	                .dst = DST,
	                .rows = rows,
	                .base = base,
	                .vrows = vrows,
	                .atoms = atoms};
	uint8_t args[GATHER_ARGS_BYTES];
	gather_args_fill(&k, args);
	TileKernelCall kc = {"gather", "gather", args, sizeof args, ARGS};
	uint64_t took;
	if (tile_kernel_call(t, &img, &kc, &took, &d))
		fail_msg("%s", d.msg);
	tile_read(t, DST - GUARD, got, out + 2 * GUARD);
	if (memcmp(got, want, out + 2 * GUARD))
		fail_msg("atoms %u, rows %u, base %u: dst is not the rows "
		         "picked",
		         atoms, rows, base);
	assert_int_equal(took, gather_cycles(c, &k));
	free(row_of);
	free(want);
	free(got);
	tile_free(t);
	img_free(&img);
}

static void
test_gather(void **state)
{
	(void)state;
	/* V, atoms, rows, base: base 0 (negative ids), a row split's block
	 * (BERT-base's last in f16: 3816 rows from 26712), one past the
	 * address 0x60000 in rows (the table's address less base rows
	 * wraps) */
	static const uint32_t shapes[][4] = {
	    {1, 1, 1, 0},
	    {5, 1, 7, 0},
	    {40, 2, 6, 3},
	    {40, 4, 13, 0},
	    {1000, 8, 32, 0},
	    {3818, 2, 40, 26711},
	    {3, 1, 9, 0x60000 / 8 + 1},
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		for (int b = TIMING_NOMINAL; b <= TIMING_SLOW; b++)
			check(profile_chip((TimingBound)b), shapes[i][0],
			      shapes[i][1], shapes[i][2], shapes[i][3]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gather),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

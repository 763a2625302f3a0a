/*
 * test_kernel_gather.c - kernels/gather.S on one tile: a table of
 * distinct bytes, ids picked by hand (both ends, repeats, any order), dst
 * compared byte for byte with the table's rows ids[n], the bytes around
 * it untouched, and the call's cycles against gather_cycles (exact), at
 * the nominal timing profile and at its bounds.
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
check(const Chip *c, uint32_t vrows, uint32_t atoms, uint32_t rows)
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
	/* ids: the last row, row 0, then a walk with repeats */
	uint32_t *id = xmalloc(rows * sizeof *id);
	for (uint32_t n = 0; n < rows; n++) {
		id[n] = n == 0 ? vrows - 1 : n == 1 ? 0 : (n * 7 + 3) % vrows;
		float f = (float)id[n];
		tile_write(t, IDS + 4 * n, &f, 4);
	}
	uint8_t *want = xmalloc(out + 2 * GUARD),
	        *got = xmalloc(out + 2 * GUARD);
	memset(want, 0xEE, out + 2 * GUARD);
	tile_write(t, DST - GUARD, want, out + 2 * GUARD);
	for (uint32_t n = 0; n < rows; n++)
		for (uint32_t i = 0; i < row; i++)
			want[GUARD + n * row + i] = byte_of(id[n], i);
	GatherCall k = {TABLE, IDS, DST, rows, atoms};
	uint8_t args[GATHER_ARGS_BYTES];
	gather_args_fill(&k, args);
	TileKernelCall kc = {"gather", "gather", args, sizeof args, ARGS};
	uint64_t took;
	if (tile_kernel_call(t, &img, &kc, &took, &d))
		fail_msg("%s", d.msg);
	tile_read(t, DST - GUARD, got, out + 2 * GUARD);
	if (memcmp(got, want, out + 2 * GUARD))
		fail_msg("atoms %u, rows %u: dst is not the rows picked", atoms,
		         rows);
	assert_int_equal(took, gather_cycles(c, &k));
	free(id);
	free(want);
	free(got);
	tile_free(t);
	img_free(&img);
}

static void
test_gather(void **state)
{
	(void)state;
	static const uint32_t shapes[][3] = {
	    {1, 1, 1}, {5, 1, 7}, {40, 2, 6}, {40, 4, 13}, {1000, 8, 32},
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		for (int b = TIMING_NOMINAL; b <= TIMING_SLOW; b++)
			check(profile_chip((TimingBound)b), shapes[i][0],
			      shapes[i][1], shapes[i][2]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gather),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

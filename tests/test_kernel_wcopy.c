/*
 * test_kernel_wcopy.c - kernels/wcopy.S on one tile: a bank of distinct
 * slots, one call per iteration and then one more (the slot after the
 * last is slot 0 again), each time the working region compared byte for
 * byte with the slot it should hold, the bytes around it untouched; also
 * a part of each slot (WcopyCall.from, bytes) from a later first slot
 * (start), the rest of the region untouched; and
 * the call's cycles against wcopy_cycles (exact for the first call), at
 * the nominal timing profile and at its bounds; and kernels/wcopyg.S's
 * copies of a loop over groups the same way.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "../src/asm/asm.h"
#include "../src/bench/tile_kernel.h"
#include "../src/kernels/kernels.h"
#include "../src/kernels/wcopy.h"

enum { BANK = 0x60000, DST = 0x90000, ARGS = 0x50000, GUARD = 16 };

static uint8_t
byte_of(uint32_t slot, uint32_t i)
{
	return (uint8_t)(slot * 71u + i * 13u + (i >> 8) + 1u);
}

/* atoms of slot, copied from atom `from`, `part` atoms of it (0: the
 * rest of the slot), the first call slot `start` */
static void
check(const Chip *c, uint32_t atoms, uint32_t iterations, uint32_t from,
      uint32_t part, uint32_t start)
{
	static const char *const names[] = {"wcopy"};
	TileImage img;
	Diag d;
	assert_int_equal(kernel_image(names, 1, c, &img, &d), 0);
	Tile *t = tile_new(c, 0);
	tile_load_image(t, &img);
	uint32_t slot = atoms * 8;
	uint8_t *want = xmalloc(slot + 2 * GUARD),
	        *got = xmalloc(slot + 2 * GUARD);
	for (uint32_t k = 0; k < iterations; k++)
		for (uint32_t i = 0; i < slot; i++) {
			uint8_t b = byte_of(k, i);
			tile_write(t, BANK + k * slot + i, &b, 1);
		}
	memset(want, 0xEE, slot + 2 * GUARD);
	tile_write(t, DST - GUARD, want, slot + 2 * GUARD);
	uint8_t args[WCOPY_ARGS_BYTES];
	wcopy_args_fill(&(WcopyCall){.bank = BANK,
	                             .dst = DST,
	                             .slot = slot,
	                             .iterations = iterations,
	                             .from = from * 8,
	                             .bytes = part * 8,
	                             .start = start},
	                args);
	uint32_t lo = from * 8, hi = part ? lo + part * 8 : slot;
	/* the block is written once: the kernel steps its own source */
	TileKernelCall kc = {"wcopy", "wcopy", args, sizeof args, ARGS};
	for (uint32_t call = 0; call <= iterations; call++) {
		uint32_t k = (start + call) % iterations;
		uint64_t took;
		if (tile_kernel_call(t, &img, &kc, &took, &d))
			fail_msg("%s", d.msg);
		kc.args = NULL;
		for (uint32_t i = lo; i < hi; i++)
			want[GUARD + i] = byte_of(k, i);
		tile_read(t, DST - GUARD, got, slot + 2 * GUARD);
		if (memcmp(got, want, slot + 2 * GUARD))
			fail_msg("atoms %u, call %u: the working region is not "
			         "slot %u",
			         atoms, call, k);
		/* exact from cycle 0; later calls start in another phase
		 * of the barrel, which moves each worker's first turn by up
		 * to 5 cycles */
		uint64_t model = wcopy_cycles(c, hi - lo);
		if (call == 0)
			assert_int_equal(took, model);
		else if (took + 5 < model || took > model + 5)
			fail_msg("atoms %u, call %u: %llu cycles, model %llu",
			         atoms, call, (unsigned long long)took,
			         (unsigned long long)model);
	}
	free(want);
	free(got);
	tile_free(t);
	img_free(&img);
}

static void
test_wcopy(void **state)
{
	(void)state;
	static const uint32_t atoms[] = {1, 5, 6, 7, 100, 1433};
	for (size_t i = 0; i < sizeof atoms / sizeof atoms[0]; i++)
		for (uint32_t n = 1; n <= 3; n++)
			for (int b = TIMING_NOMINAL; b <= TIMING_SLOW; b++)
				check(profile_chip((TimingBound)b), atoms[i], n,
				      0, 0, 0);
	/* parts: the first 40 of 100 atoms, the other 60, and 7 atoms in
	 * the middle of 1433 (lower_b_wrap's early part and the rest), from
	 * slot 1 of 3 and from slot 0 of 1 */
	for (int b = TIMING_NOMINAL; b <= TIMING_SLOW; b++) {
		const Chip *c = profile_chip((TimingBound)b);
		check(c, 100, 3, 0, 40, 1);
		check(c, 100, 3, 40, 0, 0);
		check(c, 1433, 2, 700, 7, 1);
		check(c, 100, 1, 0, 40, 0);
	}
}

/* kernels/wcopyg.S's entries, `calls` calls of `atoms` atoms over `slots`
 * slots: wcopy_every (`out` 0) fills the region from slot call / every
 * in the first call on a slot, and leaves it alone in the others (the
 * region is scribbled on before each call: the scribble stays), wcopy_out
 * (every 1) copies the region, new each call, into slot call % slots; the
 * bytes around the region and the other slots untouched, the cycles as
 * wcopy_cycles checks them (a call that copies nothing runs no workers:
 * exact in every call). */
static void
check_group(const Chip *c, uint32_t atoms, uint32_t slots, uint32_t every,
            int out)
{
	static const char *const names[] = {"wcopyg"};
	TileImage img;
	Diag d;
	assert_int_equal(kernel_image(names, 1, c, &img, &d), 0);
	Tile *t = tile_new(c, 0);
	tile_load_image(t, &img);
	uint32_t slot = atoms * 8, n = slot * slots + 2 * GUARD;
	uint8_t *bank = xmalloc(n), *got = xmalloc(n),
	        *region = xmalloc(slot + 2 * GUARD);
	memset(bank, 0xDD, n);
	for (uint32_t k = 0; k < slots; k++)
		for (uint32_t i = 0; i < slot; i++)
			bank[GUARD + k * slot + i] = byte_of(k, i);
	tile_write(t, BANK - GUARD, bank, n);
	memset(region, 0xEE, slot + 2 * GUARD);
	tile_write(t, DST - GUARD, region, slot + 2 * GUARD);
	uint8_t args[WCOPYG_ARGS_BYTES];
	wcopy_args_fill(&(WcopyCall){.bank = BANK,
	                             .dst = DST,
	                             .slot = slot,
	                             .iterations = slots,
	                             .every = every,
	                             .out = (uint32_t)out},
	                args);
	TileKernelCall kc = {out ? "wcopy_out" : "wcopy_every", "wcopyg", args,
	                     sizeof args, ARGS};
	for (uint32_t call = 0; call < slots * every + 2; call++) {
		uint32_t k = call / every % slots;
		int copies = out || call % every == 0;
		/* the iteration's new carry, or a scribble that only a copy
		 * replaces */
		for (uint32_t i = 0; i < slot; i++)
			region[GUARD + i] = byte_of(100 + call, i);
		tile_write(t, DST, region + GUARD, slot);
		uint64_t took;
		if (tile_kernel_call(t, &img, &kc, &took, &d))
			fail_msg("%s", d.msg);
		kc.args = NULL;
		if (out)
			memcpy(bank + GUARD + k * slot, region + GUARD, slot);
		else if (copies)
			memcpy(region + GUARD, bank + GUARD + k * slot, slot);
		tile_read(t, BANK - GUARD, got, n);
		if (memcmp(got, bank, n))
			fail_msg("atoms %u, call %u: the bank is not as "
			         "expected (slot %u)",
			         atoms, call, k);
		tile_read(t, DST - GUARD, got, slot + 2 * GUARD);
		if (memcmp(got, region, slot + 2 * GUARD))
			fail_msg("atoms %u, call %u: the region is not slot "
			         "%u",
			         atoms, call, k);
		uint64_t model = out ? wcopy_out_cycles(c, slot)
		                     : wcopy_every_cycles(c, slot, copies);
		if (call == 0 || !copies)
			assert_int_equal(took, model);
		else if (took + 5 < model || took > model + 5)
			fail_msg("atoms %u, call %u: %llu cycles, model %llu",
			         atoms, call, (unsigned long long)took,
			         (unsigned long long)model);
	}
	free(bank);
	free(got);
	free(region);
	tile_free(t);
	img_free(&img);
}

/* wcopy_every's call that copies nothing, counted by hand at the nominal
 * profile (sup-dep 6, sup-put 6, sup-branch 6; docs/fidelity.md): the 5
 * loads at 0..4 ($m3 ready at 6, $m4 7, $m5 8, $m6 9, $m2 10); put 5;
 * add $m4 11 (ready 17); put 12; cmpeq $m1 18 (24); put 19; mul 25 (31);
 * put 26; add $m3 32 (38); put 33; cmpult 39 (45); ld32 bank 40 (46);
 * movz $m3 46 (52); ld32 every 47 (53); movz $m4 53; cmpeq $m2 54 (60);
 * put 55; brz 61, taken; st32 67, st32 68, br $lr 69: 70 cycles, whatever
 * the slot's bytes (the call that copies is checked against the
 * emulator in check_group). */
static void
test_wcopy_skip_by_hand(void **state)
{
	(void)state;
	const Chip *c = profile_chip(TIMING_NOMINAL);
	assert_int_equal(wcopy_every_cycles(c, 8, 0), 70);
	assert_int_equal(wcopy_every_cycles(c, 8 * 1433, 0), 70);
	check_group(c, 7, 2, 3, 0); /* exact in the calls that skip */
}

static void
test_wcopy_groups(void **state)
{
	(void)state;
	static const uint32_t atoms[] = {1, 7, 292};
	for (size_t i = 0; i < sizeof atoms / sizeof atoms[0]; i++)
		for (int b = TIMING_NOMINAL; b <= TIMING_SLOW; b++) {
			const Chip *c = profile_chip((TimingBound)b);
			check_group(c, atoms[i], 3, 2, 0);
			check_group(c, atoms[i], 2, 4, 0);
			check_group(c, atoms[i], 3, 1, 1);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_wcopy),
	    cmocka_unit_test(test_wcopy_groups),
	    cmocka_unit_test(test_wcopy_skip_by_hand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

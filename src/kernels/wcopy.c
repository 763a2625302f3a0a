/*
 * wcopy.c - host side of kernels/wcopy.S: the argument block (six equal
 * ranges of atoms, the first atoms % 6 workers one longer) and the cycle
 * count that follows from the issue model: every instruction one issue,
 * a worker issuing every 6 cycles, the supervisor every cycle.
 */
#include "wcopy.h"

#include <string.h>

#include "../util/util.h"

void
wcopy_args_fill(const WcopyCall *c, uint8_t out[WCOPY_ARGS_BYTES])
{
	uint32_t bank = c->bank, slot = c->slot;
	memset(out, 0, WCOPY_ARGS_BYTES);
	put_le32(out, bank);
	put_le32(out + 4, bank);
	put_le32(out + 8, bank + c->iterations * slot);
	put_le32(out + 12, slot);
	put_le32(out + 16, c->dst);
	uint32_t atoms = slot / 8;
	for (uint32_t w = 0, first = 0; w < 6; w++) {
		uint32_t n = atoms / 6 + (w < atoms % 6);
		put_le32(out + 24 + 8 * w, first * 8);
		put_le32(out + 28 + 8 * w, n);
		first += n;
	}
}

/* The supervisor issues 8 instructions, then the runall; worker w starts
 * at the first turn of slot w after it and issues 3 instructions (no
 * atoms) or 9 + 2 an atom; the sync LOCAL leaves 6 cycles after the last
 * exit; then the next slot (8 instructions, 9 when it wraps). */
uint64_t
wcopy_cycles(uint32_t slot, int wrap)
{
	uint64_t runall = 8, last = 0, atoms = slot / 8;
	for (uint32_t w = 0; w < 6; w++) {
		uint64_t n = atoms / 6 + (w < atoms % 6);
		uint64_t issues = n ? 9 + 2 * n : 3;
		uint64_t start = runall + 1 + (w + 6 - (runall + 1) % 6) % 6;
		uint64_t exit = start + 6 * (issues - 1);
		if (exit > last)
			last = exit;
	}
	return last + 6 + (wrap ? 9 : 8);
}

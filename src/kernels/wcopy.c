/*
 * wcopy.c - host side of kernels/wcopy.S: the argument block (six equal
 * ranges of atoms, the first atoms % 6 workers one longer) and the cycle
 * count that follows from the issue model and the timing rules
 * (docs/emulator.md, docs/fidelity.md).
 */
#include "wcopy.h"

#include <string.h>

#include "kernels.h"

#include "../util/util.h"

void
wcopy_args_fill(const WcopyCall *c, uint8_t *out)
{
	uint32_t bank = c->bank, slot = c->slot;
	uint32_t bytes = c->bytes ? c->bytes : slot - c->from;
	memset(out, 0, c->every ? WCOPYG_ARGS_BYTES : WCOPY_ARGS_BYTES);
	put_le32(out, c->out ? c->dst : bank + c->start * slot);
	put_le32(out + 4, bank);
	put_le32(out + 8, bank + c->iterations * slot);
	put_le32(out + 12, slot);
	put_le32(out + 16, c->out ? bank + c->start * slot : c->dst);
	if (c->every) {
		put_le32(out + 20, c->every);
		put_le32(out + 72, c->every);
	}
	uint32_t atoms = bytes / 8;
	for (uint32_t w = 0, first = 0; w < 6; w++) {
		uint32_t n = atoms / 6 + (w < atoms % 6);
		put_le32(out + 24 + 8 * w, c->from + first * 8);
		put_le32(out + 28 + 8 * w, n);
		first += n;
	}
}

/* From the runall of `bytes` bytes to the return: the workers, the sync,
 * the store of the stepped pointer (and with `left` of the count). */
static uint64_t
run_copy(SupClock *s, uint32_t bytes, int left)
{
	uint64_t first[6], exit[6], atoms = bytes / 8;
	sup_runall(s, SUP_M1 | SUP_M2, first);
	for (uint32_t w = 0; w < 6; w++) {
		uint64_t n = atoms / 6 + (w < atoms % 6);
		exit[w] = first[w] + 6 * ((n ? 12 + n : 3) - 1);
	}
	sup_workers(s, exit);
	sup_sync(s);
	sup_op(s, SUP_M0 | SUP_M3, 0, SUP_PLAIN); /* st32 */
	if (left)
		sup_op(s, SUP_M0 | SUP_M4, 0, SUP_PLAIN); /* st32 left */
	return sup_return(s, 0);
}

/* The supervisor's code in wcopy.S, instruction by instruction (the
 * registers each reads and writes); worker w starts at its first turn
 * after the runall's launch delay and issues 3 instructions (no atoms) or
 * 12 + 1 an atom; the sync LOCAL leaves 6 cycles after the last exit. */
uint64_t
wcopy_cycles(const Chip *c, uint32_t bytes)
{
	SupClock s;
	sup_start(&s, c, 0);
	for (unsigned r = SUP_M3; r <= SUP_M6; r <<= 1)
		sup_op(&s, SUP_M0, r,
		       SUP_PLAIN);             /* ld32 src, slot, end, bank */
	sup_op(&s, 0, SUP_M1, SUP_PLAIN);      /* setzi */
	sup_op(&s, SUP_M0, SUP_M2, SUP_PLAIN); /* add */
	sup_op(&s, SUP_M0, 0, SUP_PUT);
	sup_op(&s, SUP_M3 | SUP_M4, SUP_M3, SUP_PLAIN); /* add */
	sup_op(&s, SUP_M0, 0, SUP_PUT);
	sup_op(&s, SUP_M3 | SUP_M5, SUP_M4, SUP_PLAIN); /* cmpult */
	sup_op(&s, SUP_M0, 0, SUP_PUT);
	sup_op(&s, SUP_M6 | SUP_M4, SUP_M3, SUP_PLAIN); /* movz */
	for (int i = 0; i < 3; i++)
		sup_op(&s, SUP_M0, 0, SUP_PUT);
	return run_copy(&s, bytes, 0);
}

/* The same for wcopyg.S's WCOPY_STEP: `skip` for wcopy_every, whose
 * workers (wcopy's) run only if `copies` (the slot's first call), the
 * others branching past them to the stores. */
static uint64_t
step_cycles(const Chip *c, uint32_t bytes, int skip, int copies)
{
	SupClock s;
	sup_start(&s, c, 0);
	for (unsigned r = SUP_M3; r <= SUP_M6; r <<= 1)
		sup_op(&s, SUP_M0, r,
		       SUP_PLAIN); /* ld32 ptr, left, slot, end */
	if (skip)
		sup_op(&s, SUP_M0, SUP_M2, SUP_PLAIN); /* ld32 left */
	static const unsigned step[][2] = {
	    {SUP_M4, SUP_M4},          /* add left */
	    {SUP_M4, SUP_M1},          /* cmpeq */
	    {SUP_M5 | SUP_M1, SUP_M5}, /* mul step */
	    {SUP_M3 | SUP_M5, SUP_M3}, /* add ptr */
	};
	for (int i = 0; i < 4; i++) {
		sup_op(&s, SUP_M0, 0, SUP_PUT);
		sup_op(&s, step[i][0], step[i][1], SUP_PLAIN);
	}
	sup_op(&s, SUP_M0, 0, SUP_PUT);
	sup_op(&s, SUP_M3 | SUP_M6, SUP_M5, SUP_PLAIN); /* cmpult */
	sup_op(&s, SUP_M0, SUP_M6, SUP_PLAIN);          /* ld32 bank */
	sup_op(&s, SUP_M6 | SUP_M5, SUP_M3, SUP_PLAIN); /* movz */
	sup_op(&s, SUP_M0, SUP_M6, SUP_PLAIN);          /* ld32 every */
	sup_op(&s, SUP_M6 | SUP_M4, SUP_M4, SUP_PLAIN); /* movz */
	if (skip)
		sup_op(&s, SUP_M2 | SUP_M6, SUP_M2, SUP_PLAIN); /* cmpeq */
	sup_op(&s, SUP_M0, 0, SUP_PUT);
	if (skip)
		sup_op(&s, SUP_M2, 0, copies ? SUP_PLAIN : SUP_TAKEN); /* brz */
	if (!copies) {
		sup_op(&s, SUP_M0 | SUP_M3, 0, SUP_PLAIN); /* st32 ptr */
		sup_op(&s, SUP_M0 | SUP_M4, 0, SUP_PLAIN); /* st32 left */
		return sup_return(&s, 0);
	}
	sup_op(&s, 0, SUP_M1, SUP_PLAIN);      /* setzi */
	sup_op(&s, SUP_M0, SUP_M2, SUP_PLAIN); /* add */
	return run_copy(&s, bytes, 1);
}

uint64_t
wcopy_every_cycles(const Chip *c, uint32_t bytes, int copies)
{
	return step_cycles(c, bytes, 1, copies);
}

uint64_t
wcopy_out_cycles(const Chip *c, uint32_t bytes)
{
	return step_cycles(c, bytes, 0, 1);
}

/*
 * gather.c - host side of kernels/gather.S: the argument block (the
 * table's address less base rows, so that the kernel indexes it by the
 * clamped id itself; the clamp's bounds as f32; six ranges of rows, the
 * first rows % 6 workers one longer) and the cycle
 * count that follows from the issue model and the timing rules
 * (docs/emulator.md, docs/fidelity.md).
 */
#include "gather.h"

#include <string.h>

#include "kernels.h"

#include "../util/fp.h"
#include "../util/util.h"

/* Rows of worker w. */
static uint32_t
worker_rows(uint32_t rows, uint32_t w)
{
	return rows / 6 + (w < rows % 6);
}

void
gather_args_fill(const GatherCall *c, uint8_t out[GATHER_ARGS_BYTES])
{
	memset(out, 0, GATHER_ARGS_BYTES);
	/* wraps below address 0 when base rows are more than the address:
	 * the kernel adds them back (32-bit arithmetic) */
	put_le32(out, c->table - c->base * c->atoms * 8);
	put_le32(out + 4, c->ids);
	put_le32(out + 8, c->dst);
	put_le32(out + 12, c->atoms);
	put_le32(out + 16, fp_float_f32((float)c->base));
	put_le32(out + 20, fp_float_f32((float)(c->base + c->vrows - 1)));
	for (uint32_t w = 0, first = 0; w < 6; w++) {
		uint32_t n = worker_rows(c->rows, w);
		put_le32(out + 24 + 8 * w, first);
		put_le32(out + 28 + 8 * w, n);
		first += n;
	}
}

/* The supervisor's code in gather.S, instruction by instruction; worker
 * w starts at its first turn after the runall's launch delay and issues
 * 3 instructions (no rows) or 16 + (11 + atoms) a row, one a turn (all
 * bundles, no transcendental); the sync LOCAL leaves 6 cycles after the
 * last exit. */
uint64_t
gather_cycles(const Chip *c, const GatherCall *k)
{
	SupClock s;
	sup_start(&s, c, 0);
	sup_op(&s, 0, SUP_M1, SUP_PLAIN);      /* setzi */
	sup_op(&s, SUP_M0, SUP_M2, SUP_PLAIN); /* add */
	for (int i = 0; i < 6; i++)
		sup_op(&s, SUP_M0, 0, SUP_PUT);
	uint64_t first[6], exit[6];
	sup_runall(&s, SUP_M1 | SUP_M2, first);
	for (uint32_t w = 0; w < 6; w++) {
		uint64_t n = worker_rows(k->rows, w);
		exit[w] =
		    first[w] +
		    6 * ((n ? 16 + n * (11 + (uint64_t)k->atoms) : 3) - 1);
	}
	sup_workers(&s, exit);
	sup_sync(&s);
	return sup_return(&s, 0);
}

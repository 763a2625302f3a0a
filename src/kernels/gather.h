/*
 * gather.h - the gather kernel (kernels/gather.S) from the host side: its
 * argument block and cycle formula. One call copies, for each of `rows`
 * f32 ids (integers below 2^24 in magnitude), the table's row
 * clamp(ids[n] - base, 0, vrows - 1) (a block of columns, `atoms` 8-byte
 * atoms) to dst row n: an id outside base .. base + vrows - 1 reads an
 * end row, never past the table.
 */
#ifndef IPU_GATHER_H
#define IPU_GATHER_H

#include <stdint.h>

#include "../target/chip.h"

enum { GATHER_ARGS_BYTES = 24 + 6 * 8 };

typedef struct {
	uint32_t table, ids, dst; /* tile addresses: 8-aligned, ids 4 */
	uint32_t rows;            /* ids, and dst rows */
	uint32_t base, vrows;     /* the id of table row 0; table rows, >= 1;
	                             base + vrows <= 2^24 */
	uint32_t atoms;           /* a row of table and dst, 1 .. 65536 (the rpt
	                             counts atoms - 1 in 16 bits) */
} GatherCall;
void gather_args_fill(const GatherCall *c, uint8_t out[GATHER_ARGS_BYTES]);
/* Cycles of one call on chip c (its timing profile), from the
 * supervisor's entry at a cycle that is a multiple of 6 to its return. */
uint64_t gather_cycles(const Chip *c, const GatherCall *k);

#endif

/*
 * wcopy.h - the loop weights' copy kernel (kernels/wcopy.S) from the host
 * side: its argument block and cycle formula. Each call copies the next
 * slot of a bank [iterations][slot bytes] to the working region.
 */
#ifndef IPU_WCOPY_H
#define IPU_WCOPY_H

#include <stdint.h>

#include "../target/chip.h"

enum {
	WCOPY_ARGS_BYTES = 24 + 6 * 8,
	WCOPYG_ARGS_BYTES = WCOPY_ARGS_BYTES + 8, /* kernels/wcopyg.S */
	WCOPY_MAX_ATOMS = 6 * 65535,              /* rpt counts are 16 bits */
};

/* bank: slot 0 of `iterations` slots of `slot` bytes (a multiple of 8);
 * dst: the working region. Each call copies bytes [from, from + bytes)
 * of its slot (bytes 0: the whole slot; both multiples of 8) to the same
 * bytes of the region; the first call copies slot `start`, each next call
 * the next slot, the last slot's next slot 0. every >= 1: wcopyg.S's
 * block (WCOPYG_ARGS_BYTES), the slot stepping after every `every`
 * calls (wcopy_every, which copies in the first of them only), or with
 * `out` the region copied into the slot (wcopy_out). */
typedef struct {
	uint32_t bank, dst; /* tile addresses */
	uint32_t slot, iterations;
	uint32_t from, bytes, start;
	uint32_t every, out;
} WcopyCall;
void wcopy_args_fill(const WcopyCall *c, uint8_t *out);
/* Cycles of one call on chip c (its timing profile) that copies `bytes`
 * bytes, from the supervisor's entry at a cycle that is a multiple of 6 to
 * its return: wcopy's, wcopy_every's (`copies`: the first call on a slot;
 * else one that copies nothing, whatever `bytes`) and wcopy_out's. */
uint64_t wcopy_cycles(const Chip *c, uint32_t bytes);
uint64_t wcopy_every_cycles(const Chip *c, uint32_t bytes, int copies);
uint64_t wcopy_out_cycles(const Chip *c, uint32_t bytes);

#endif

/*
 * wcopy.h - the loop weights' copy kernel (kernels/wcopy.S) from the host
 * side: its argument block and cycle formula. Each call copies the next
 * slot of a bank [iterations][slot bytes] to the working region.
 */
#ifndef IPU_WCOPY_H
#define IPU_WCOPY_H

#include <stdint.h>

enum {
	WCOPY_ARGS_BYTES = 24 + 6 * 8,
	WCOPY_MAX_ATOMS = 6 * 65535, /* rpt counts are 16 bits */
};

/* bank: slot 0 of `iterations` slots of `slot` bytes (a multiple of 8);
 * dst: the working region. The first call copies slot 0. */
typedef struct {
	uint32_t bank, dst; /* tile addresses */
	uint32_t slot, iterations;
} WcopyCall;
void wcopy_args_fill(const WcopyCall *c, uint8_t out[WCOPY_ARGS_BYTES]);
/* Cycles of one call, from the supervisor's entry to its return; wrap: the
 * call copies the last slot (the next is slot 0 again). */
uint64_t wcopy_cycles(uint32_t slot, int wrap);

#endif

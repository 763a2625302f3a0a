/* loop.h - a graph's repeat as a loop of steps (see loop.c). */
#ifndef IPU_LOWER_LOOP_H
#define IPU_LOWER_LOOP_H

#include "lower.h"

/* Where a tile's loop weights are: the working region the body reads and
 * the bank of l->loop_count slots of `slot` bytes the host writes;
 * iteration k's copy of the region's byte o is the bank's byte
 * k * slot + o. */
typedef struct {
	uint32_t tile;
	int32_t region, bank;
	uint32_t slot;
} LoopBank;

/* Move every buffer of places[0 .. nw - 1] (the body's own weights, where
 * the body reads them) into one working region per tile, and make the
 * compute step at l->loop_first fill each region from its tile's bank
 * before each iteration. References in l and in all[0 .. nall - 1] (which
 * must include places) follow. *banks (malloc'd) gets one LoopBank per
 * tile that has loop weights. */
int loop_weights(Lowered *l, TensorPlace *const *places, int nw,
                 TensorPlace *const *all, int nall, LoopBank **banks,
                 int *nbanks, Diag *d);
/* A buffer made before the loop and read in it is kept to its end (every
 * iteration reads it). */
void loop_lifetimes(Lowered *l);

#endif

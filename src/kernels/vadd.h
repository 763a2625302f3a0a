/*
 * vadd.h - the vector-add kernel (kernels/vadd.S) from the host side: its
 * argument block and cycle formula. dst += src_0 + ... + src_{n-1} over
 * segments of 8-byte atoms of f16 or f32.
 */
#ifndef IPU_VADD_H
#define IPU_VADD_H

#include <stdint.h>

#include "../target/chip.h"

enum { VADD_ARGS_BYTES = 40 + 6 * 24 };

/* f32 (4-byte elements) or f16. */
const char *vadd_entry(int f32);
/* One call: nseg segments of `atoms` atoms, dst's at dst + g * dst_seg,
 * source k's (k < nsrc) at src + k * stride + g * src_seg (bytes). */
typedef struct {
	uint32_t dst, src; /* tile addresses */
	uint32_t stride, nsrc, atoms, nseg, dst_seg, src_seg;
} VaddCall;
void vadd_args_fill(const VaddCall *c, uint8_t out[VADD_ARGS_BYTES]);
/* Cycles of one call, from the supervisor's entry to its return. */
uint64_t vadd_cycles(const Chip *c, uint32_t atoms, uint32_t nsrc,
                     uint32_t nseg);

#endif

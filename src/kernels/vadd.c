/*
 * vadd.c - host side of kernels/vadd.S: the argument block (six equal
 * ranges of atoms, the first atoms % 6 workers one longer) and the cycle
 * count that follows from the issue model: every instruction one issue,
 * a worker issuing every 6 cycles.
 */
#include "vadd.h"

#include <string.h>

const char *
vadd_entry(int f32)
{
	return f32 ? "vadd_f32" : "vadd_f16";
}

static void
put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

void
vadd_args_fill(uint32_t dst, uint32_t src, uint32_t stride, uint32_t nsrc,
               uint32_t atoms, uint32_t nseg, uint32_t dst_seg,
               uint32_t src_seg, uint8_t out[VADD_ARGS_BYTES])
{
	memset(out, 0, VADD_ARGS_BYTES);
	put32(out, dst);
	put32(out + 4, src);
	put32(out + 8, stride);
	put32(out + 12, nsrc);
	put32(out + 16, nseg);
	put32(out + 20, dst_seg);
	put32(out + 24, src_seg);
	for (uint32_t w = 0, first = 0; w < 6; w++) {
		uint32_t n = atoms / 6 + (w < atoms % 6);
		put32(out + 40 + 8 * w, first);
		put32(out + 44 + 8 * w, n);
		first += n;
	}
}

/* Worker issues: 3 to read its range and test it; if it has atoms, 9 more
 * to set up, then per pass of three sources 4 an atom and 9 more, per
 * pass of one 2 an atom and 4 more; then the exit. The supervisor issues 16
 * instructions one per cycle, then the runall; worker w starts at the first
 * turn of slot w after it; the sync LOCAL leaves 6 cycles after the last exit;
 * then `brnzdec`, and for the next segment two stores and the runall, or `br
 * $lr`. */
uint64_t
vadd_cycles(uint32_t atoms, uint32_t nsrc, uint32_t nseg)
{
	uint64_t runall = 16, last = 0;
	for (uint32_t g = 0; g < nseg; g++) {
		last = 0;
		for (uint32_t w = 0; w < 6; w++) {
			uint32_t n = atoms / 6 + (w < atoms % 6);
			/* kernels/vadd.S: 12 entry issues; a three-source
			 * pass 9 + 4n; the exit test 2; the remainder test
			 * 1, then 1 + 4 + 2n for each remaining source;
			 * exitz */
			uint64_t p3 = nsrc / 3, r = nsrc % 3;
			uint64_t issues =
			    n ? 12 + p3 * (9 + 4 * (uint64_t)n) + 2 + 1 +
			            (r ? 1 + r * (4 + 2 * (uint64_t)n) : 0) + 1
			      : 3 + 1;
			/* slot w's next turn after the runall */
			uint64_t start =
			    runall + 1 + (w + 6 - (runall + 1) % 6) % 6;
			uint64_t exit = start + 6 * (issues - 1);
			if (exit > last)
				last = exit;
		}
		runall = last + 6 + 3;
	}
	return last + 6 + 2;
}

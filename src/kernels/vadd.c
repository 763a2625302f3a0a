/*
 * vadd.c - host side of kernels/vadd.S: the argument block (the atoms of
 * all the segments as one range, shared by the six workers, the first
 * atoms % 6 one longer) and the cycle count that follows from the issue
 * model and the timing rules (docs/emulator.md, docs/fidelity.md).
 */
#include "vadd.h"

#include <string.h>

#include "kernels.h"

#include "../util/util.h"

const char *
vadd_entry(int f32)
{
	return f32 ? "vadd_f32" : "vadd_f16";
}

/* Worker w's share of the n atoms: *first and its count. */
static uint32_t
share(uint32_t n, uint32_t w, uint32_t *first)
{
	*first = w * (n / 6) + (w < n % 6 ? w : n % 6);
	return n / 6 + (w < n % 6);
}

void
vadd_args_fill(const VaddCall *c, uint8_t out[VADD_ARGS_BYTES])
{
	uint32_t dst = c->dst, src = c->src, atoms = c->atoms, nseg = c->nseg,
	         dst_seg = c->dst_seg, src_seg = c->src_seg;
	memset(out, 0, VADD_ARGS_BYTES);
	put_le32(out, dst);
	put_le32(out + 4, src);
	put_le32(out + 8, c->stride);
	put_le32(out + 12, c->nsrc);
	put_le32(out + 16, nseg);
	put_le32(out + 20, dst_seg);
	put_le32(out + 24, src_seg);
	put_le32(out + 28, atoms);
	for (uint32_t w = 0; w < 6; w++) {
		uint32_t first, n = share(atoms * nseg, w, &first);
		uint32_t g = atoms ? first / atoms : 0, at = first - g * atoms;
		uint32_t here = n < atoms - at ? n : atoms - at;
		uint8_t *r = out + 40 + 24 * w;
		put_le32(r, dst + g * dst_seg + at * 8);
		put_le32(r + 4, src + g * src_seg + at * 8);
		put_le32(r + 8, here);
		put_le32(r + 12, n - here);
		put_le32(r + 16, dst + (g + 1) * dst_seg);
		put_le32(r + 20, src + (g + 1) * src_seg);
	}
}

/* Worker issues: 3 to read its first part's atoms and test them (then
 * exitz), else 10 to set up; per part of n atoms 1 to read the sources,
 * per pass of three sources 9 + 4n, the exit test 2, the remainder test
 * 1, then 1 + 4 + 2n for each remaining source, the test for a next part
 * 1 and 11 to move to it; then the exit. The supervisor (vadd.S:
 * setzi, add, six CSR writes, runall) is timed by SupClock; worker w
 * starts at its first turn after the launch delay; the sync LOCAL leaves
 * 6 cycles after the last exit; then `br $lr`. */
uint64_t
vadd_cycles(const Chip *c, uint32_t atoms, uint32_t nsrc, uint32_t nseg)
{
	SupClock s;
	sup_start(&s, c, 0);
	sup_entry(&s);
	uint64_t first[6], exit[6];
	sup_runall(&s, SUP_M1 | SUP_M2, first);
	uint64_t p3 = nsrc / 3, r = nsrc % 3;
	for (uint32_t w = 0; w < 6; w++) {
		uint32_t at0, n = share(atoms * nseg, w, &at0);
		uint64_t issues = 3;
		if (n) {
			uint32_t at = at0 % atoms;
			issues = 10;
			while (n) {
				uint32_t k = n < atoms - at ? n : atoms - at;
				issues +=
				    1 + p3 * (9 + 4 * (uint64_t)k) + 2 + 1 +
				    (r ? 1 + r * (4 + 2 * (uint64_t)k) : 0) +
				    1 + (n > k ? 11 : 1);
				n -= k;
				at = 0;
			}
		}
		exit[w] = first[w] + 6 * (issues - 1);
	}
	sup_workers(&s, exit);
	sup_sync(&s);
	return sup_return(&s, 0);
}

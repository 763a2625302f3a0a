/*
 * vadd.c - host side of kernels/vadd.S: the argument block (the atoms of
 * all the segments as one range, shared by the six workers, the first
 * atoms % 6 one longer, or each segment its own workers (share); with a
 * bias, whole rows of VADD_ROW_ATOMS) and
 * the cycle count that follows from the issue model and the timing rules
 * (docs/emulator.md, docs/fidelity.md).
 */
#include "vadd.h"

#include <string.h>

#include "kernels.h"

#include "../util/util.h"

const char *
vadd_entry(int f32, int bias)
{
	return bias  ? (f32                    ? NULL
	                : bias == VADD_NORM_F8 ? "vadd_norm_f16_f8"
	                : bias == VADD_NORM    ? "vadd_norm_f16"
	                : bias == 3            ? "vadd_bias_gelu_f16_f8"
	                : bias == 2            ? "vadd_bias_res_f16"
	                                       : "vadd_bias_f16")
	       : f32 ? "vadd_f32"
	             : "vadd_f16";
}

int
vadd_call_variant(const VaddCall *v)
{
	return v->norm_f8     ? VADD_NORM_F8
	       : v->norm_cols ? VADD_NORM
	       : v->has_gelu  ? 3
	       : v->has_res   ? 2
	                      : v->has_bias;
}

const char *
vadd_worker(int f32, int bias)
{
	return bias  ? (f32         ? NULL
	                : bias == 3 ? "vadd_bias_gelu_f16_f8_worker"
	                : bias == 2 ? "vadd_bias_res_f16_worker"
	                : bias == 1 ? "vadd_bias_f16_worker"
	                            : NULL)
	       : f32 ? "vadd_f32_worker"
	             : "vadd_f16_worker";
}

const char *
vadd_object(int bias)
{
	return bias == 3              ? "vadd_f8"
	       : bias == VADD_NORM_F8 ? "vadd_norm_f8"
	                              : "vadd";
}

/* Worker w's share of the n atoms (whole rows with a bias) among nw
 * workers (6, or 5 beside an exchange: VaddCall.five): *first and
 * its count. `aligned` (2 to nw segments): each segment its own workers,
 * nw / nseg of them (one more for the first nw % nseg segments), so that
 * no worker's atoms cross a segment (a part's pass set up again: a
 * 111-row slice of 3 panels 19 + 18 rows a worker, not 19 rows across
 * two); else the atoms of all the segments as one range. */
static uint32_t
share(uint32_t n, uint32_t nseg, uint32_t nw, uint32_t w, int bias, int aligned,
      uint32_t *first)
{
	uint32_t u = bias ? VADD_ROW_ATOMS : 1, rows = n / u;
	if (aligned) {
		uint32_t g = 0, s = 0, k = nw / nseg + (nw % nseg > 0);
		while (w >=
		       s + k) { /* segment g's workers are s .. s + k - 1 */
			s += k;
			g++;
			k = nw / nseg + (g < nw % nseg);
		}
		uint32_t j = w - s, r = rows / nseg; /* rows of a segment */
		*first = u * (g * r + j * (r / k) + (j < r % k ? j : r % k));
		return u * (r / k + (j < r % k));
	}
	*first = u * (w * (rows / nw) + (w < rows % nw ? w : rows % nw));
	return u * (rows / nw + (w < rows % nw));
}

static uint64_t part_issues(const Chip *c, uint64_t k, uint32_t nsrc, int bias);

/* Worker w's issues from its first to its exitz. */
static uint64_t
worker_issues(const Chip *c, uint32_t atoms, uint32_t nsrc, uint32_t nseg,
              uint32_t nw, int bias, int aligned, uint32_t w)
{
	uint32_t at0, n = share(atoms * nseg, nseg, nw, w, bias, aligned, &at0);
	if (!n)
		return 3;
	uint32_t at = at0 % atoms;
	uint64_t issues = bias ? 11 : 10;
	while (n) {
		uint32_t k = n < atoms - at ? n : atoms - at;
		issues += part_issues(c, k, nsrc, bias) +
		          (n > k ? (bias ? 13 : 11) : 1);
		n -= k;
		at = 0;
	}
	return issues;
}

/* 1 if the segments take their own workers (share's `aligned`): 2 to nw
 * segments and the busiest worker's issues no more that way (counted at
 * the C600's nominal rules, so that the argument block and vadd_cycles
 * agree on every profile). */
static int
aligned_of(uint32_t atoms, uint32_t nsrc, uint32_t nseg, uint32_t nw, int bias)
{
	if (nseg < 2 || nseg > nw)
		return 0;
	const Chip *c = chip_default();
	uint64_t most[2] = {0, 0};
	for (int a = 0; a < 2; a++)
		for (uint32_t w = 0; w < nw; w++) {
			uint64_t i =
			    worker_issues(c, atoms, nsrc, nseg, nw, bias, a, w);
			if (i > most[a])
				most[a] = i;
		}
	return most[1] <= most[0];
}

void
vadd_args_fill(const VaddCall *c, uint8_t *out)
{
	uint32_t dst = c->dst, src = c->src, atoms = c->atoms, nseg = c->nseg,
	         dst_seg = c->dst_seg, src_seg = c->src_seg,
	         words = c->has_bias || c->norm_cols ? 7 : 6,
	         nw = c->five ? 5 : 6;
	if (c->five && c->norm_cols)
		die("vadd_args_fill: vadd_norm_f16 runs on six workers");
	if (c->has_gelu &&
	    (!c->has_bias || c->has_res || c->nsrc % 3 || c->dst_seg % 2))
		die("vadd_args_fill: a GELU needs a bias, no residual, "
		    "sources a multiple of 3 and an even dst_seg");
	if (c->norm_f8 && (!c->norm_cols || c->dst_seg % 2))
		die("vadd_args_fill: a row normalisation's cast to f8 needs "
		    "its column and an even dst_seg");
	if (c->norm_cols &&
	    (c->has_bias || c->norm_cols % 4 || c->atoms % VADD_ROW_ATOMS ||
	     c->norm_cols >= c->nseg * 16 || c->dst_seg % 8 || c->stride % 8))
		die("vadd_args_fill: a row normalisation needs no bias, whole "
		    "rows, its column, a multiple of 4, in the segments and "
		    "whole atoms between the sources");
	memset(out, 0,
	       c->has_gelu    ? VADD_GELU_ARGS_BYTES
	       : c->has_bias  ? VADD_BIAS_ARGS_BYTES
	       : c->norm_f8   ? VADD_NORM_F8_ARGS_BYTES
	       : c->norm_cols ? VADD_NORM_ARGS_BYTES
	                      : VADD_ARGS_BYTES);
	put_le32(out, dst);
	put_le32(out + 4, src);
	put_le32(out + 8, c->stride);
	put_le32(out + 12, c->nsrc);
	put_le32(out + 16, nseg);
	put_le32(out + 20, dst_seg);
	put_le32(out + 24, src_seg);
	put_le32(out + 28, atoms);
	/* vadd_norm_f16: the reciprocal cursor back from past a segment's
	 * last row to its first */
	put_le32(out + 32,
	         c->norm_cols ? 0u - vadd_norm_rcp_bytes(atoms) : c->bias_seg);
	if (c->has_res)
		put_le32(out + 36, c->res - c->dst);
	if (c->has_gelu || c->norm_f8) {
		/* q's address less half dst's; the f8 format and scale after
		 * the block of the entry without the cast */
		uint32_t f8 =
		    c->has_gelu ? VADD_BIAS_ARGS_BYTES : VADD_NORM_ARGS_BYTES;
		put_le32(out + 36, c->res - c->dst / 2);
		put_le32(out + f8, (uint32_t)c->f152 << 1);
		put_le32(out + f8 + 4, (uint32_t)c->fp8_scale & 63);
	}
	/* the rows' reciprocals after the sources */
	uint32_t rcp = src + c->nsrc * c->stride;
	int bias = c->has_gelu    ? 3
	           : c->norm_f8   ? VADD_NORM_F8
	           : c->norm_cols ? VADD_NORM
	                          : c->has_bias + c->has_res,
	    aligned = aligned_of(atoms, c->nsrc, nseg, nw, bias);
	for (uint32_t w = 0; w < nw; w++) {
		uint32_t first,
		    n = share(atoms * nseg, nseg, nw, w, bias, aligned, &first);
		uint32_t g = atoms ? first / atoms : 0, at = first - g * atoms;
		uint32_t here = n < atoms - at ? n : atoms - at;
		uint8_t *r = out + 40 + 4 * words * w;
		put_le32(r, dst + g * dst_seg + at * 8);
		put_le32(r + 4, src + g * src_seg + at * 8);
		put_le32(r + 8, here);
		put_le32(r + 12, n - here);
		put_le32(r + 16, dst + (g + 1) * dst_seg);
		put_le32(r + 20, src + (g + 1) * src_seg);
		if (c->has_bias)
			put_le32(r + 24, c->bias + g * c->bias_seg);
		if (c->norm_cols)
			put_le32(r + 24, rcp + vadd_norm_rcp_bytes(at));
	}
	if (!c->norm_cols)
		return;
	/* the ones column's atom in a row of dst and of source 0 */
	uint32_t p = c->norm_cols / 16, a = c->norm_cols % 16 / 4,
	         row = VADD_ROW_ATOMS * 8, ones_dst = dst + p * dst_seg + a * 8,
	         ones_src = src + p * src_seg + a * 8;
	uint8_t *nb = out + VADD_BIAS_ARGS_BYTES;
	put_le32(nb, c->stride / 8);
	put_le32(nb + 4, c->nsrc - 1);
	put_le32(nb + 8, row - c->nsrc * c->stride);
	for (uint32_t w = 0, rows = atoms / VADD_ROW_ATOMS; w < 6; w++) {
		uint32_t r0 = rows * w / 6, r1 = rows * (w + 1) / 6;
		uint8_t *r = nb + 16 + 16 * w;
		put_le32(r, ones_dst + r0 * row);
		put_le32(r + 4, ones_src + r0 * row);
		put_le32(r + 8, rcp + r0 * VADD_NORM_RCP_BYTES);
		put_le32(r + 12, r1 - r0);
	}
}

/* Worker issues: 3 to read its first part's atoms and test them (then
 * exitz), else 10 to set up (11 with a bias: its cursor); per part of n
 * atoms 1 to read the sources, per pass of three sources before the last
 * 15 + 3n (the test 2, the set-up 7 and the rpt, 3 an atom, the last
 * atom's store, 5 to move on), the exit test 2, then: without a bias the
 * remainder test 1 and 1 + 4 + 2n for each remaining source; with one
 * (the last three or four sources, or the last one, with b) the test for
 * three 2 and then 11 + 4n for three (the set-up 9, the rpt, 4 an atom,
 * the branch out; with the residual, bias 2, 3 more to set h up and 5 an
 * atom), else the test for four 2 and then 12 + 5n for four (the set-up
 * 10; with the residual 3 more and 6 an atom), or 2 (+ 6 + 2n for a
 * source before it) and 4 + 3n for one (with the residual 2 more to set
 * its cursor and 4 an atom); the test
 * for a next part 1 and 11 to move to it (13 with a bias); then the
 * exit. The supervisor (vadd.S: setzi, add, six CSR writes, runall) is
 * timed by SupClock; worker w starts at its first turn after the launch
 * delay; the sync LOCAL leaves 6 cycles after the last exit; then `br
 * $lr`. */
static uint64_t
part_issues(const Chip *c, uint64_t k, uint32_t nsrc, int bias)
{
	uint64_t r = nsrc % 3, p3 = nsrc / 3, pass3 = 15 + 3 * k;
	/* vadd_norm_f16: three sources a pass while four are left, the
	 * rest one a pass (the test 2, then 1 + 4 + 2n each before the
	 * last), the last with the reciprocals 6 + 2n (the set-up 4, atom
	 * 0's and 1's 3, the rpt, 8 a row after the first, the last row's
	 * 6); vadd_norm_f16_f8's last 8 + 10 a row (the set-up 7, the first
	 * pair 4, the rpt, 10 a row after the first, the last pair's 5 and
	 * its store) */
	if (bias == VADD_NORM || bias == VADD_NORM_F8) {
		uint64_t q = (nsrc - 1) / 3, one = nsrc - 3 * q;
		return 1 + q * pass3 + 2 + 2 +
		       (one > 1 ? 1 + (one - 1) * (4 + 2 * k) : 0) +
		       (bias == VADD_NORM_F8 ? 8 + 10 * (k / 4) : 6 + 2 * k) +
		       1;
	}
	/* the GELU's last pass (vadd_f8.S, three sources): 2 to set the
	 * pass up, 4 q's cursor and the row count, 2 the first loads, 8 the
	 * first group's sums, the rpt, 46 a row (the last 39 and q's last
	 * store) and the eight f16v2sigm's further turns (docs/fidelity.md,
	 * rule f16v2sigm), the branch out */
	if (bias == 3)
		return 1 + (p3 - 1) * pass3 + 2 + 11 +
		       (46 + 8 * (chip_rule(c, TIMING_F16V2SIGM) - 1)) *
		           (k / 4) +
		       1;
	if (!bias)
		return 1 + p3 * pass3 + 2 + 1 + (r ? 1 + r * (4 + 2 * k) : 0) +
		       1;
	if (!r)
		return 1 + (p3 - 1) * pass3 + 2 + 2 + 11 +
		       (bias == 2 ? 3 + 5 * k : 4 * k) + 1;
	if (r == 1 && p3)
		return 1 + (p3 - 1) * pass3 + 2 + 2 + 2 + 12 +
		       (bias == 2 ? 3 + 6 * k : 5 * k) + 1;
	uint64_t rs = bias == 2 ? 2 : 0;
	return 1 + p3 * pass3 + 2 + 2 + 2 + 2 + (r == 2 ? 2 + 4 + 2 * k : 0) +
	       4 + rs + (3 + (bias == 2)) * k + 1;
}

/* The summing workers' runall (VADD_RUNALL) until the last one exits. */
static void
sum_run(SupClock *s, uint32_t atoms, uint32_t nsrc, uint32_t nseg, int bias)
{
	uint64_t first[6], exit[6];
	sup_runall(s, SUP_M1 | SUP_M2, first);
	int aligned = aligned_of(atoms, nsrc, nseg, 6, bias);
	for (uint32_t w = 0; w < 6; w++)
		exit[w] =
		    first[w] + 6 * (worker_issues(s->chip, atoms, nsrc, nseg, 6,
		                                  bias, aligned, w) -
		                    1);
	sup_workers(s, exit);
}

/* sup_entry, with f8 the format and scale loaded before it and put
 * after it (VADD_RUNALL's loads and puts). */
static void
entry_f8(SupClock *s, int f8)
{
	if (f8) {
		sup_op(s, SUP_M0, SUP_M3, SUP_PLAIN);
		sup_op(s, SUP_M0, SUP_M4, SUP_PLAIN);
	}
	sup_entry(s);
	if (f8) {
		sup_op(s, SUP_M3, 0, SUP_PUT);
		sup_op(s, SUP_M4, 0, SUP_PUT);
	}
}

/* vadd_norm_f16: the reciprocals' runall (sup_entry's setzi, add and
 * puts), worker w's rows [w R / 6, (w + 1) R / 6): 9 issues to set up
 * (3 for no rows), the first row's sum 4 + nsrc (the loads of dst's
 * ones atom and source 0's, the rpt, nsrc - 1 loads and adds, the last
 * add beside the cursor's jump, the branch beside the widening), each
 * further row 4 + nsrc + f32oox's turns (the previous row's f32oox and
 * roundings beside the loads and the rpt, its store beside the
 * widening, the loop's branch), the last row's f32oox, roundings and
 * store 3 + f32oox's turns, and the exit; then (the supervisor's setzi
 * and add beside them, its sync) the summing workers (bias VADD_NORM
 * in part_issues: whole rows, their set-up and the move to a next part
 * as with a bias). `bias`: VADD_NORM, or VADD_NORM_F8 (the f8 format and
 * scale put before the first runall, the last pass's cast). */
static uint64_t
norm_cycles(const Chip *c, uint32_t atoms, uint32_t nsrc, uint32_t nseg,
            int bias)
{
	SupClock s;
	sup_start(&s, c, 0);
	entry_f8(&s, bias == VADD_NORM_F8);
	uint64_t first[6], exit[6];
	sup_runall(&s, SUP_M1 | SUP_M2, first);
	uint32_t rows = atoms / VADD_ROW_ATOMS;
	uint64_t oox = chip_rule(c, TIMING_F32OOX), row = 4 + nsrc + oox;
	for (uint32_t w = 0; w < 6; w++) {
		uint32_t n = rows * (w + 1) / 6 - rows * w / 6;
		uint64_t issues =
		    n ? 9 + 4 + nsrc + (n - 1) * row + 3 + oox + 1 : 3;
		exit[w] = first[w] + 6 * (issues - 1);
	}
	sup_workers(&s, exit);
	sup_op(&s, 0, SUP_M1, SUP_PLAIN);      /* setzi */
	sup_op(&s, SUP_M0, SUP_M2, SUP_PLAIN); /* add */
	sup_sync(&s);
	sum_run(&s, atoms, nsrc, nseg, bias);
	sup_sync(&s);
	return sup_return(&s, 0);
}

uint64_t
vadd_cycles(const Chip *c, uint32_t atoms, uint32_t nsrc, uint32_t nseg,
            int bias)
{
	if (bias == VADD_NORM || bias == VADD_NORM_F8)
		return norm_cycles(c, atoms, nsrc, nseg, bias);
	SupClock s;
	sup_start(&s, c, 0);
	entry_f8(&s, bias == 3);
	sum_run(&s, atoms, nsrc, nseg, bias);
	sup_sync(&s);
	return sup_return(&s, 0);
}

uint64_t
vadd_norm_cycles(const Chip *c, uint32_t atoms, uint32_t nsrc, uint32_t nseg)
{
	return norm_cycles(c, atoms, nsrc, nseg, VADD_NORM);
}

void
vadd_five_block(const Chip *c, uint32_t atoms, uint32_t nsrc, uint32_t nseg,
                int bias, uint64_t at, VaddFive *f)
{
	SupClock s;
	uint64_t first[5], exit[6] = {0};
	sup_start(&s, c, at);
	sup_op(&s, 0, SUP_M1, SUP_PLAIN); /* setzi the entry */
	sup_op(&s, 0, SUP_M2, SUP_PLAIN); /* setzi the ranges */
	int aligned = aligned_of(atoms, nsrc, nseg, 5, bias);
	f->exit_min = UINT64_MAX;
	f->exit_max = 0;
	for (int w = 0; w < 5; w++) {
		sup_run(&s, SUP_M1 | SUP_M2, w, &first[w]);
		exit[w] =
		    first[w] + 6 * (worker_issues(c, atoms, nsrc, nseg, 5, bias,
		                                  aligned, (uint32_t)w) -
		                    1);
		if (exit[w] < f->exit_min)
			f->exit_min = exit[w];
		if (exit[w] > f->exit_max)
			f->exit_max = exit[w];
	}
	sup_workers(&s, exit);
	/* slots 0-4 are the workers': the supervisor's next is in slot 5 */
	f->open = s.t + (5 + CHIP_SLOTS - s.t % CHIP_SLOTS) % CHIP_SLOTS;
}

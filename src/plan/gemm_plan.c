/*
 * gemm_plan.c - the GEMM planner: candidate tile grids and superstep sizes,
 * priced as lower/gemm.c emits them, the cheapest that fits chosen.
 *
 * Price of a candidate = steps x (sync + exchange phase + kernel call):
 *   sync      the chip's internal sync (after the last tile arrives)
 *   exchange  the scheduler's phase shape for this pattern: preamble, then
 *             each tile receives its A chunk and then its B chunk back to
 *             back (the scheduler appends windows in that order), plus the
 *             route latency across the grid and the receive gap
 *   kernel    gemm_tile_cycles (src/kernels/gemm.h), the kernel's own
 *             cycle formula, checked against the emulator in its tests
 * Memory: the stored input chunks, the two receive buffers, the C block,
 * the code (about 60 bytes per superstep) and the kernel argument blocks.
 * The search enumerates every pm (pn = tiles / pm) and kc of 1..64 K
 * panels: a few thousand candidates, well under a millisecond.
 */
#include <stdio.h>

#include "../kernels/gemm.h"
#include "../lower/lower.h"
#include "plan.h"

GemmDtype
plan_gemm_dtype(DType t)
{
	return t == DT_F32 ? GEMM_F32 : dtype_is_f8(t) ? GEMM_F8 : GEMM_F16;
}

static uint32_t
ceil_div(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

/* The route latency across a pm x pn grid of consecutive tiles: bounded
 * by the chip's farthest pair; a grid row (consecutive ids) is close. */
static uint64_t
grid_latency(const Chip *c, uint32_t tiles)
{
	uint64_t worst = 0;
	for (uint32_t t = 0; t < tiles; t += tiles / 16 + 1) {
		uint64_t l = chip_route_cycles(c, 0, t);
		if (l > worst)
			worst = l;
	}
	return worst;
}

enum { CODE_PER_STEP = 64, CODE_FIXED = 64 };

int
plan_gemm_price(const Chip *c, GemmPlan *p)
{
	GemmDtype g = plan_gemm_dtype(p->dtype);
	p->steps = ceil_div(p->k, p->kc);
	uint64_t a_words = gemm_a_bytes(g, p->bm, p->kc) / 4;
	uint64_t b_words = gemm_b_bytes(g, p->kc, p->bn) / 4;
	p->exchange_cycles = XS_PREAMBLE + 3 + a_words + XS_RECV_GAP + 3 +
	                     b_words + grid_latency(c, p->pm * p->pn);
	p->compute_cycles = gemm_tile_cycles(g, p->bm, p->bn, p->kc);
	p->cycles =
	    (uint64_t)p->steps *
	    (c->sync_internal_cycles + p->exchange_cycles + p->compute_cycles);
	/* memory of the fullest tile */
	uint64_t a_store = (uint64_t)ceil_div(p->steps, p->pn) * a_words * 4;
	uint64_t b_store = (uint64_t)ceil_div(p->steps, p->pm) * b_words * 4;
	uint64_t bytes =
	    a_store + b_store + 4 * (a_words + b_words) +
	    gemm_c_bytes(g, p->bm, p->bn) +
	    (uint64_t)p->steps * (CODE_PER_STEP + GEMM_ARGS_BYTES) + CODE_FIXED;
	p->tile_bytes = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
	/* leave room for the kernels' own code */
	return bytes + 16384 <= c->mem_end - c->mem_base ? 0 : -1;
}

int
plan_gemm(const Chip *c, uint32_t tiles, DType t, uint32_t m, uint32_t n,
          uint32_t k, GemmPlan *out, Diag *d)
{
	if (!m || !n || !k)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "gemm: empty problem %u x %u x %u", m, n, k);
	uint32_t kp = gemm_k_panel(plan_gemm_dtype(t));
	GemmPlan best = {0};
	uint32_t tried = 0;
	for (uint32_t pm = 1; pm <= tiles && pm <= m; pm++) {
		uint32_t pn = tiles / pm;
		uint32_t bn = ceil_div(ceil_div(n, pn), 16) * 16;
		pn = ceil_div(n, bn); /* no empty column of tiles */
		uint32_t bm = ceil_div(m, pm);
		for (uint32_t panels = 1; panels <= 64; panels *= 2) {
			GemmPlan p = {.dtype = t,
			              .m = m,
			              .n = n,
			              .k = k,
			              .pm = ceil_div(m, bm),
			              .pn = pn,
			              .bm = bm,
			              .bn = bn,
			              .kc = panels * kp};
			tried++;
			if (p.kc > ceil_div(k, kp) * kp * 2)
				break;
			if (plan_gemm_price(c, &p))
				continue;
			if (!best.cycles || p.cycles < best.cycles)
				best = p;
		}
	}
	if (!best.cycles)
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "gemm %u x %u x %u (%s) does not fit %u tiles "
		                "in any plan",
		                m, n, k, dtype_name(t), tiles);
	best.candidates = tried;
	*out = best;
	return IPU_OK;
}

void
plan_gemm_describe(const GemmPlan *p, char *buf, size_t len)
{
	snprintf(buf, len,
	         "gemm %ux%ux%u %s: %u x %u tiles, C block %u x %u, %u "
	         "supersteps of K %u; per superstep %llu exchange + %llu "
	         "compute cycles; %llu cycles in all; %u bytes on the "
	         "fullest tile",
	         p->m, p->n, p->k, dtype_name(p->dtype), p->pm, p->pn, p->bm,
	         p->bn, p->steps, p->kc, (unsigned long long)p->exchange_cycles,
	         (unsigned long long)p->compute_cycles,
	         (unsigned long long)p->cycles, p->tile_bytes);
}

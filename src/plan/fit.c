/*
 * fit.c - what a plan gives up when it was measured not to fit.
 *
 * The planner does not yet compute a whole tile's bytes itself (every
 * op's buffers with their lifetimes, and the code, exist only after
 * lowering, scheduling and codegen_size). compile.c measures each draft
 * with the placer's own bounds (place_measure, before placement) and a
 * placed plan with its packing, and hands back the tiles that did not fit;
 * plan_refit then chooses what the next plan of the same graph gives up,
 * cheapest first:
 *   0. (plan_refit_own, tried by compile.c on the same draft as the
 *      rest, with the marks they give) a matmul whose own step is the
 *      worst of a tile of its grid is planned again within the bytes
 *      that step measured: a plan that took more than its step could
 *      hold is shrunk on the draft that found it, not left to later
 *      drafts' measures (So400m f8 at batch 4: fc2 over at its own
 *      step at draft 2, where the ladder gives up out_proj's overlap);
 *   1. after the first plan, the weight copies (GemmPlan.b_local) of the
 *      matmuls on those tiles, if one of them has copies;
 *   1b. the overlapped superstep (GemmPlan.overlap) of the matmuls whose
 *      steps are those tiles' worst: its second A, B and C buffers are a
 *      matmul's own, so only the matmuls that were over give them up (the
 *      whole graph without any overlap is compile.c's other compile;
 *      So400m f8 at batch 4 lost every overlap for fc1's alone);
 *   1c. else (over at another op's step: So400m f8 at batch 4 then at the
 *      softmax's) the overlap of one matmul whose grid covers those
 *      tiles, one a plan: its program and argument blocks are there at
 *      every step;
 *   2. every matmul's GEMM plans of more than half a tile, with copies
 *      again: not only on those tiles, because a plan that changes moves the
 * layouts that start after it (spread), and with them the tiles that overflow
 *      (So400m cut to 2 layers, f16 at batch 2, chased them for six
 *      plans and did not fit);
 *   3. every matmul's weight copies.
 * Plans 3 and 4 are the last two of the ladder of global attempts this
 * replaces (half a tile with copies, then without), so what it placed is
 * still placed.
 */
#include "plan.h"

#include <stdlib.h>

/* 1 if matmul op i's GEMMs run on `tile`. */
static int
covers(const Plan *p, int i, uint32_t tile)
{
	const OpPlan *o = &p->op[i];
	const GemmPlan *g = &o->gemm;
	uint32_t n = g->pk * g->pm * g->pn * (o->group ? o->group : 1);
	return tile >= o->tile0 && tile - o->tile0 < n;
}

/* 1 for a matmul the plan planned (a loop's later iterations are its
 * body's). */
static int
planned_matmul(const Plan *p, int i)
{
	return p->g->ops[i].kind == OP_MATMUL &&
	       graph_repeat_iteration(&p->g->repeat, i) <= 0;
}

/* Marks `give` on every planned matmul without it; their number. */
static int
give_all(const Plan *p, uint8_t give, uint8_t *fit)
{
	int marked = 0;
	for (int i = 0; i < p->nop; i++)
		if (planned_matmul(p, i) && !(fit[i] & give)) {
			fit[i] |= give;
			marked++;
		}
	return marked;
}

/* Step 2: every matmul's GEMM plan within half a tile, with the copies
 * step 1 took back (the ladder's third attempt); the matmuls newly
 * marked. */
static int
all_half(const Plan *p, uint8_t *fit)
{
	int marked = 0;
	for (int i = 0; i < p->nop; i++)
		if (planned_matmul(p, i) && !(fit[i] & PLAN_FIT_HALF))
			marked++;
	for (int i = 0; marked && i < p->nop; i++)
		if (planned_matmul(p, i))
			fit[i] = PLAN_FIT_HALF | (fit[i] & PLAN_FIT_NO_OVERLAP);
	return marked;
}

/* Step 1b: the overlapped superstep of the overlapped matmuls whose
 * steps are the worst of tiles over; the matmuls newly marked. */
static int
no_overlap(const Plan *p, const PlanOver *over, int nover, uint8_t *fit)
{
	int marked = 0;
	for (int k = 0; k < nover; k++) {
		int32_t i = over[k].op;
		if (i >= 0 && i < p->nop && planned_matmul(p, i) &&
		    p->op[i].gemm.overlap && !(fit[i] & PLAN_FIT_NO_OVERLAP)) {
			fit[i] |= PLAN_FIT_NO_OVERLAP;
			marked++;
		}
	}
	return marked;
}

/* Step 1c: tiles over at a step where no overlapped matmul runs still
 * hold every overlapped matmul's program and argument blocks there (an
 * overlapped superstep's call has three times a plain one's, and its
 * five-worker panels in the program): the overlap of one matmul goes, of
 * those whose grids cover tiles over, the one covering the most, then
 * the one hiding the least exchange; 1 if one was marked. */
static int
no_overlap_covering(const Plan *p, const PlanOver *over, int nover,
                    uint8_t *fit)
{
	int32_t pick = -1;
	int most = 0;
	uint64_t hidden = 0;
	for (int i = 0; i < p->nop; i++) {
		const GemmPlan *g = &p->op[i].gemm;
		if (!planned_matmul(p, i) || !g->overlap ||
		    (fit[i] & PLAN_FIT_NO_OVERLAP))
			continue;
		int n = 0;
		for (int k = 0; k < nover; k++)
			n += covers(p, i, over[k].tile);
		uint64_t h = (uint64_t)(g->steps - 1) * g->exchange_cycles;
		if (n && (n > most || (n == most && h < hidden))) {
			pick = i;
			most = n;
			hidden = h;
		}
	}
	if (pick < 0)
		return 0;
	fit[pick] |= PLAN_FIT_NO_OVERLAP;
	return 1;
}

int
plan_refit(const Plan *p, const PlanOver *over, int nover, uint8_t *fit)
{
	int first = 1, copies = 0;
	for (int i = 0; i < p->nop; i++) {
		if (fit[i])
			first = 0;
		if (planned_matmul(p, i) && p->op[i].gemm.b_local)
			copies = 1;
	}
	int marked = 0;
	for (int k = 0; first && copies && k < nover; k++) {
		/* a tile where a matmul has copies: none of its matmuls may
		 * (the budget one leaves would go to the next) */
		int here = 0;
		for (int i = 0; i < p->nop; i++)
			if (planned_matmul(p, i) && p->op[i].gemm.b_local &&
			    covers(p, i, over[k].tile))
				here = 1;
		for (int i = 0; here && i < p->nop; i++)
			if (planned_matmul(p, i) &&
			    covers(p, i, over[k].tile) &&
			    !(fit[i] & PLAN_FIT_NO_COPIES)) {
				fit[i] |= PLAN_FIT_NO_COPIES;
				marked++;
			}
	}
	if (!marked)
		marked = no_overlap(p, over, nover, fit);
	if (!marked)
		marked = no_overlap_covering(p, over, nover, fit);
	if (!marked)
		marked = all_half(p, fit);
	if (!marked && copies)
		marked = give_all(p, PLAN_FIT_NO_COPIES, fit);
	return marked;
}

int
plan_refit_own(const Plan *p, const PlanOver *over, int nover, uint64_t code,
               int least, const uint8_t *skip, uint32_t *beside,
               uint8_t *raised)
{
	/* by op: the need of the tile of its grid most (or least) over */
	uint64_t *need = xcalloc((size_t)p->nop + 1, sizeof *need);
	for (int k = 0; k < nover; k++) {
		int32_t i = over[k].op;
		if (i < 0 || i >= p->nop || !planned_matmul(p, i) ||
		    (skip && skip[i]) || !covers(p, i, over[k].tile) ||
		    !over[k].need)
			continue;
		if (!need[i] ||
		    (least ? over[k].need < need[i] : over[k].need > need[i]))
			need[i] = over[k].need;
	}
	int n = 0;
	for (int i = 0; i < p->nop; i++) {
		raised[i] = 0;
		uint64_t own = code + p->op[i].gemm.tile_bytes;
		if (need[i] <= own)
			continue;
		uint64_t want = need[i] - own;
		if (want > UINT32_MAX)
			want = UINT32_MAX;
		if (want <= p->op[i].held || want <= beside[i])
			continue;
		beside[i] = (uint32_t)want;
		raised[i] = 1;
		n++;
	}
	free(need);
	return n;
}

uint32_t
plan_tile_load(const Plan *p, uint32_t t, uint64_t need)
{
	uint64_t w = p->weight_bytes && t < p->tiles ? p->weight_bytes[t] : 0;
	need = need > w ? need - w : 0;
	return need > UINT32_MAX ? UINT32_MAX : (uint32_t)need;
}

/*
 * fit.c - what a plan gives up when it was measured not to fit.
 *
 * The planner does not yet compute a whole tile's bytes itself (every
 * op's buffers with their lifetimes, and the code, exist only after
 * lowering, scheduling and codegen_size). compile.c measures a plan with
 * the placer's own code and hands back the tiles that did not fit;
 * plan_refit then chooses, for the next plan of the same graph, what the
 * matmuls on those tiles give up, cheapest first: their weight copies
 * (GemmPlan.b_local), then GEMM plans of more than half a tile.
 */
#include "plan.h"

/* The tiles a matmul's GEMMs run on: [*first, *first + return). */
static uint32_t
grid_of(const Plan *p, int i, uint32_t *first)
{
	const OpPlan *o = &p->op[i];
	const GemmPlan *g = &o->gemm;
	*first = o->tile0;
	return g->pk * g->pm * g->pn * (o->group ? o->group : 1);
}

static int
covers(const Plan *p, int i, uint32_t tile)
{
	uint32_t first, n = grid_of(p, i, &first);
	return tile >= first && tile - first < n;
}

/* The ops planned (a loop's later iterations are its body's). */
static int
planned(const Plan *p, int i)
{
	const RepeatMap *rm = &p->loop;
	return !rm->count || i < rm->first + rm->len ||
	       i >= rm->first + rm->count * rm->len;
}

int
plan_refit(const Plan *p, const uint32_t *over, int nover, uint8_t *fit)
{
	const Graph *g = p->g;
	int marked = 0;
	for (int k = 0; k < nover; k++) {
		/* copies first, where a matmul on the tile still has them:
		 * then none of its matmuls may have copies (the budget they
		 * leave would go to the next one) */
		int copies = 0;
		for (int i = 0; i < p->nop; i++)
			if (planned(p, i) && g->ops[i].kind == OP_MATMUL &&
			    p->op[i].gemm.b_local &&
			    !(fit[i] & PLAN_FIT_NO_COPIES) &&
			    covers(p, i, over[k]))
				copies = 1;
		uint8_t give = copies ? PLAN_FIT_NO_COPIES : PLAN_FIT_HALF;
		for (int i = 0; i < p->nop; i++) {
			if (!planned(p, i) || g->ops[i].kind != OP_MATMUL ||
			    !covers(p, i, over[k]) || (fit[i] & give))
				continue;
			fit[i] |= give;
			marked++;
		}
	}
	return marked;
}

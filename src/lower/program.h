/* program.h - a whole graph lowered as its plan says (see program.c). */
#ifndef IPU_LOWER_PROGRAM_H
#define IPU_LOWER_PROGRAM_H

#include "../graph/graph.h"
#include "lower.h"

/* Lowers every op of the plan's graph (plan_graph) on the chip's first
 * plan->tiles tiles. On success *out is the program (tiles: those it
 * uses). */
int lower_plan(const Plan *plan, Lowered **out, Diag *d);

#endif

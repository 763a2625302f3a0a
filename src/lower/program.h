/* program.h - a whole graph planned and lowered (see program.c). */
#ifndef IPU_LOWER_PROGRAM_H
#define IPU_LOWER_PROGRAM_H

#include "../graph/graph.h"
#include "lower.h"

/* Plans and lowers every op of the verified graph g on the chip's first
 * `tiles` tiles. On success *out is the program (tiles: those it uses)
 * and desc holds each op's plan, "; " between them. weight_copies: GEMM
 * weights may also be stored where they are read (GemmPlan.b_local),
 * within a budget per tile. gemm_bytes: each GEMM's plan the cheapest
 * whose data on a tile (GemmPlan.tile_bytes) is at most that, if the
 * planner offers one (0: no limit). */
int lower_graph(const Graph *g, const Chip *chip, uint32_t tiles,
                int weight_copies, uint32_t gemm_bytes, Lowered **out,
                char *desc, size_t desc_len, Diag *d);

#endif

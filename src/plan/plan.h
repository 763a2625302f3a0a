/*
 * plan.h - operator plans and the planner.
 *
 * A plan says how an operation is spread over tiles and time; the lowering
 * (src/lower/) turns it into buffers, exchange phases and kernel calls.
 * The planner searches the candidate plans with a cost model that prices
 * each candidate the way the lowering will emit it (the same superstep
 * structure, the same kernel cycle formula, the exchange scheduler's
 * phase shape), and checks per-tile memory.
 *
 * GEMM, C[M x N] = A[M x K] x B[K x N] (docs/compiler.md, "GEMM"):
 *   - tiles form a pm x pn grid; tile (i, j) owns the C block rows
 *     [i * bm, ...) x columns [j * bn, ...); it is tile i * pn + j, or
 *     with pairs_down (pm even) (i / 2) * 2 pn + 2 j + i % 2, so that the
 *     pairs of tiles that share exchange wires (2k, 2k + 1) lie along a
 *     grid row or down a grid column: the operand multicast to whole pairs
 *     (A along rows, B down columns) goes as 64-bit items;
 *   - K is walked in supersteps of kc; in superstep s, the owners of A's
 *     chunk (i, s) (tiles (i, s + u steps mod pn), one per part u of its
 *     K-panels: plan_gemm_a_parts) multicast it to row i of the grid
 *     and the owner of B's chunk (s, j) (tile (s mod pm, j)) to column j;
 *     then every tile runs the GEMM kernel on its chunks, accumulating C;
 *   - each input element is stored once: the chunks rotate over the
 *     owners, so input memory is spread evenly;
 *   - with pk > 1 the grid is repeated pk times, each copy (a K group)
 *     taking a contiguous share kg of K; at the end every C block is
 *     reduced: it is split pk ways (its N-panels, each panel's rows, or
 *     rows of all panels: plan_gemm_slice), each tile receives the
 *     other groups' partials of its share and adds them
 *     (kernels/vadd.S).
 */
#ifndef IPU_PLAN_H
#define IPU_PLAN_H

#include <stdint.h>

#include "../graph/graph.h"
#include "../kernels/gemm.h"
#include "../target/chip.h"
#include "../util/util.h"

/* The exchange phase's shape, in cycles from the sync that opens it: the
 * cost model prices it, the scheduler (lower/xsched.c) and codegen make
 * it. */
enum {
	XS_PREAMBLE = 3, /* after the sync before any event: set the count,
	                    switch the mux off */
	XS_RECV_GAP = 2, /* between two transfers at a receiver */
};

typedef struct {
	DType dtype;        /* of A and B; C is f16 (f16, f8) or f32 */
	uint32_t m, n, k;   /* the problem */
	uint32_t pm, pn;    /* tile grid of one K group */
	uint32_t pk;        /* K groups; tiles = pk * pm * pn */
	uint32_t kg;        /* K per group, a multiple of the K panel */
	uint32_t bm, bn;    /* C block; bn is a multiple of 16 */
	uint32_t kc;        /* K per superstep, a multiple of the K panel */
	uint32_t steps;     /* supersteps: ceil(kg / kc) */
	uint8_t pairs_down; /* tile pairs down grid columns (B 64-bit), else
	                       along rows (A 64-bit) */
	uint8_t b_local;    /* every tile stores the B chunks of its column
	                       (a weight the host writes pm times): no B
	                       exchange */
	uint8_t b_parts;    /* B is made on the device: each chunk is stored
	                       in parts of its K-panels over the column
	                       (plan_gemm_b_parts), so that the pack runs on
	                       that many tiles */
	/* the cost model's view */
	uint64_t compute_cycles;  /* one superstep's kernel call */
	uint64_t exchange_cycles; /* one superstep's exchange phase */
	uint64_t reduce_cycles;   /* pk > 1: the reduction's exchange + add */
	uint64_t cycles;          /* the whole GEMM */
	uint32_t tile_bytes;      /* peak data bytes on the fullest tile */
	uint32_t candidates;      /* plans the search priced */
} GemmPlan;

/* gemm_plan.c */
/* Slice q of a C block of np N-panels and `rows` rows split pk ways for
 * the reduction: rows [row, row + rows) of panels [panel, panel +
 * panels). By panels: with np >= pk the panels are split pk ways (all
 * rows); with fewer, each panel's rows are split among the groups that
 * share it; either way a slice is contiguous in the C layout. By rows,
 * when that gives smaller slices: every group gets some rows of every
 * panel, a segment per panel. */
typedef struct {
	uint32_t panel, panels, row, rows;
} GemmSlice;
GemmSlice plan_gemm_slice(uint32_t np, uint32_t rows, uint32_t pk, uint32_t q);
/* The contiguous segments of slice s of a C block of `rows` rows. */
uint32_t plan_gemm_slice_segments(const GemmSlice *s, uint32_t rows);
/* The parts an A chunk is stored and sent in: as many as the grid row
 * has owners to spare (pn / steps), at most one a K-panel. */
uint32_t plan_gemm_a_parts(const GemmPlan *p);
/* 1 if the kernel reads A's chunks where they are stored: a grid row of
 * one tile, which would only send them to itself. */
int plan_gemm_a_in_place(const GemmPlan *p);
/* The parts a B chunk is stored and sent in: with b_parts, as many as
 * the grid column has owners to spare (pm / steps), at most one a
 * K-panel; else one. */
uint32_t plan_gemm_b_parts(const GemmPlan *p);
/* The `max` cheapest plans on `tiles` tiles, cheapest first, in out[0..
 * *count - 1]. Plans with b_local are tried when they need at most
 * b_local_bytes of B a tile (0: never); b_made: B is made on the device
 * (the plans have b_parts). */
int plan_gemm_top(const Chip *c, uint32_t tiles, DType t, uint32_t m,
                  uint32_t n, uint32_t k, uint32_t b_local_bytes, int b_made,
                  GemmPlan *out, int max, int *count, Diag *d);
/* The best plan on `tiles` tiles. */
int plan_gemm(const Chip *c, uint32_t tiles, DType t, uint32_t m, uint32_t n,
              uint32_t k, uint32_t b_local_bytes, int b_made, GemmPlan *out,
              Diag *d);
/* The bytes of B a tile stores with b_local. */
uint64_t plan_gemm_b_local_bytes(const GemmPlan *p);
void plan_gemm_describe(const GemmPlan *p, char *buf, size_t len);

#endif

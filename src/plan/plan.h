/*
 * plan.h - the planner: every choice the compiler makes, for the whole
 * graph, before anything is lowered (graph_plan.c, Plan), and what those
 * choices mean: layouts (layout.h), a GEMM plan on its tiles
 * (gemm_layout.c), the GEMM planner and its cost model (gemm_plan.c).
 *
 * A plan says how each operation is spread over tiles and time; the
 * lowering (src/lower/) turns it into buffers, exchange phases and kernel
 * calls, computing the same layouts with the same functions. The GEMM
 * planner searches the candidate plans with a cost model that prices each
 * candidate the way the lowering will emit it (the same superstep
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
 *     K-panels, or of their rows: plan_gemm_a_parts) multicast it to row
 *     i of the grid
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
#include "../kernels/elementwise.h"
#include "../kernels/gemm.h"
#include "../target/chip.h"
#include "../util/util.h"
#include "layout.h"

/* The exchange phase's shape, in cycles from the sync that opens it: the
 * cost model prices it, the scheduler (lower/xsched.c) and codegen make
 * it. */
enum {
	XS_PREAMBLE = 3, /* after the sync before any event: the mux
	                    switched off */
	XS_RECV_GAP = 2, /* between two transfers at a receiver beside five
	                    workers (xsched.c's blocks); elsewhere windows
	                    may go back to back, and the planner prices them
	                    so (no cycles a window) */
};

/* A plain multiply that a later weight GEMM's B exchange may go beside
 * (lower_b_under): its call on the tiles of most rows (and of the fewest,
 * the grid's last row of C blocks), the six-worker cycles its step has. */
typedef struct {
	uint64_t cycles; /* its step's call, six workers; 0: no host */
	GemmDtype t;
	uint32_t bm, bm_last; /* rows of its calls: the most, the fewest */
	uint32_t bn; /* columns: the most (a call of fewer computes as wide
	                beside the exchange: xsched.c widen_host) */
	uint32_t bk;
	uint32_t tiles; /* its grid's tiles */
	uint32_t cover; /* the tiles a later grid must lie within:
	                   the host's (lower_b_under moves a transfer
	                   only beside a multiply with calls on its
	                   tiles, and the exchange lasts as long as
	                   its slowest tile's B that stays) */
} PlanHost;

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
	uint8_t overlap;    /* the overlapped superstep (docs/bench-gemm.md,
	                       "The third step"): superstep s + 1's exchange
	                       beside superstep s's five-worker panels, into
	                       second A and B chunk buffers; set only on
	                       request (PlanOptions.gemm_overlap), with 2 or
	                       more supersteps of one K; the planner
	                       neither prices it nor counts its second
	                       buffers yet */
	PlanHost b_host;    /* B is a weight that lower_b_under may move
	                       beside this earlier plain multiply (cycles 0:
	                       none): a one-superstep plan's B whose
	                       exchange fits beside its five-worker panels
	                       is priced as the host's loss
	                       (plan_host_loss), not in the exchange
	                       (docs/compiler.md "Cost model") */
	/* the cost model's view */
	uint64_t compute_cycles;  /* one superstep's kernel call */
	uint64_t exchange_cycles; /* one superstep's exchange phase */
	uint64_t reduce_cycles;   /* pk > 1: the reduction's exchange + add */
	uint64_t cycles;          /* the whole GEMM */
	uint32_t tile_bytes;      /* the fullest tile's data and program
	                             (plan_gemm_need less the kernels) */
	uint32_t candidates;      /* plans the search priced */
	/* > 0: the reduction divides each row's first norm_cols columns
	 * by its column norm_cols (vadd_norm_f16: PV of an unnormalised
	 * softmax, plan_matmul_norm_cols), its slices by rows */
	uint32_t norm_cols;
} GemmPlan;

/* gemm_plan.c */
/* Slice q of a C block of np N-panels and `rows` rows split pk ways for
 * the reduction: rows [row, row + rows) of panels [panel, panel +
 * panels). By panels: with np >= pk the panels are split pk ways (all
 * rows); with fewer, each panel's rows are split among the groups that
 * share it; either way a slice is contiguous in the C layout. By rows,
 * when that gives smaller slices or `by_rows` asks (GemmPlan.norm_cols):
 * every group gets some rows of every panel, a segment per panel. */
typedef struct {
	uint32_t panel, panels, row, rows;
} GemmSlice;
GemmSlice plan_gemm_slice(uint32_t np, uint32_t rows, uint32_t pk, uint32_t q,
                          int by_rows);
/* The contiguous segments of slice s of a C block of `rows` rows. */
uint32_t plan_gemm_slice_segments(const GemmSlice *s, uint32_t rows);
/* The parts an A chunk is stored and sent in: as many as the grid row
 * has owners to spare (pn / steps), at most one a K-panel, each of
 * those split in plan_gemm_a_row_parts row ranges. */
uint32_t plan_gemm_a_parts(const GemmPlan *p);
/* With owners to spare for two K-panels each or more, the row ranges
 * each K-panel's part is split in (one an owner), else 1: the
 * producer's pieces then land on more tiles, whose receives bound the
 * exchange that stores them ("matmul: A from its producer"). At most as
 * many as keep each part's window in the chunk exchange longer than the
 * largest XPIC-to-write delay (chip_xpic_max_cycles), so that the
 * windows go back to back as priced. */
uint32_t plan_gemm_a_row_parts(const GemmPlan *p);
/* 1 if the kernel reads A's chunks where they are stored: a grid row of
 * one tile, which would only send them to itself. */
int plan_gemm_a_in_place(const GemmPlan *p);
/* The parts a B chunk is stored and sent in: with b_parts, as many as
 * the grid column has owners to spare (pm / steps), at most one a
 * K-panel; else one. */
uint32_t plan_gemm_b_parts(const GemmPlan *p);
/* What the rest of the program holds on each tile of a GEMM's grid while
 * it runs (defined with TileBuf below). */
typedef struct PlanHeld PlanHeld;
/* The `max` cheapest plans on `tiles` tiles, cheapest first, in out[0..
 * *count - 1]. Plans with b_local are tried when they need at most
 * b_local_bytes of B a tile (0: never); b_made: B is made on the device
 * (the plans have b_parts); held->bytes: bytes every tile of the grid
 * holds for the rest of the program while the GEMM runs (its code, the
 * weights stored for the whole program), below which the plan's fullest
 * tile is packed: a plan is admitted only if it fits above them, and, with
 * held->buf, only if its fullest tile packed with those buffers fits
 * above its code; none fitting is an error that says so. */
int plan_gemm_top(const Chip *c, uint32_t tiles, DType t, uint32_t m,
                  uint32_t n, uint32_t k, uint32_t b_local_bytes, int b_made,
                  const PlanHeld *held, GemmPlan *out, int max, int *count,
                  Diag *d);
/* b_made's bits: B made on the device, the overlapped superstep
 * wanted where a plan allows it (GemmPlan.overlap: its second chunk
 * buffers counted, its cycles estimated as plan_gemm_price says), and
 * pk any of 1 .. 8 besides the powers of two (the attention's products,
 * heads side by side: PV's K of 729 in 5 groups of 160) */
enum { PLAN_GEMM_B_MADE = 1, PLAN_GEMM_OVERLAP = 2, PLAN_GEMM_ANY_PK = 4 };
/* The best plan on `tiles` tiles. */
int plan_gemm(const Chip *c, uint32_t tiles, DType t, uint32_t m, uint32_t n,
              uint32_t k, uint32_t b_local_bytes, int b_made,
              const PlanHeld *held, GemmPlan *out, Diag *d);
/* The bytes of B a tile stores with b_local. */
uint64_t plan_gemm_b_local_bytes(const GemmPlan *p);
/* An overlapped GEMM call g's six-worker rest calls (gemm_rest, after its
 * g->opt.five panels) and their branches. */
uint64_t plan_overlap_rest(const Chip *c, const GemmCall *g);
/* An overlapped GEMM step's cycles as lower/xsched.c's schedule_overlap
 * makes it and codegen's emit_overlap runs it: the setup and opening,
 * block 0's lead, the first P panels of calls of `rows` (n calls, K bk)
 * with five workers to their exit and sync (or the exchange's last word
 * xend, if later), then the slowest call's rest, `rest` cycles. */
uint64_t plan_overlap_cycles(const Chip *c, GemmDtype t, const uint32_t *rows,
                             uint32_t n, uint32_t bk, uint32_t P, int plain,
                             uint64_t xend, uint64_t rest);
/* The cycles a plain multiply h adds when an exchange of `items` receive
 * cycles at its busiest tile, in `windows` transfers, runs beside it
 * (lower_b_under), on a grid of `tiles`: as lower/xsched.c's
 * schedule_overlap makes the step (the exchange in the supervisor's
 * slots between the five-worker panel blocks of gemm_windows, the first P
 * panels that hold it with five workers, the rest as gemm_rest's
 * six-worker calls), less its six-worker call. UINT64_MAX: the exchange
 * needs the last panel's span (or more): not priced beside. */
uint64_t plan_host_loss(const Chip *c, const PlanHost *h, uint64_t items,
                        uint32_t windows, uint32_t tiles);
/* The same with the five-worker panels of `plain` (GemmOptions.plain5:
 * the plain streams; else the chained ones where gemm_five_chained
 * allows). plan_host_loss prices the plain ones, an upper bound where the
 * scheduler runs the chained ones. */
uint64_t plan_host_loss_panels(const Chip *c, const PlanHost *h, uint64_t items,
                               uint32_t windows, uint32_t tiles, int plain);
void plan_gemm_describe(const GemmPlan *p, char *buf, size_t len);

/* ---- gemm_layout.c: a GEMM plan placed on tiles ---------------------- */

enum {
	/* K-panels of a spread B's part at most: the weight balance's unit
	 * (GemmSite.spread_b) */
	B_PART_KPANELS = 4
};

/* Where one GEMM of a plan runs and stores its operands. */
typedef struct {
	uint32_t tile_base; /* tile (0, 0, 0) of the grid */
	uint32_t tiles_all; /* the program's tiles */
	int ta, tb;         /* A, B are the transposes of their tensors */
	uint32_t batch;     /* its number among a batched matmul's GEMMs */
	/* B's chunks: with spread_b, stored in parts of an n-panel by at
	 * most 4 K-panels, each on the tile the weight balance chooses
	 * (stored[]: bytes of weights per tile, each of B's counting b_times;
	 * the choices go to / come from owners); otherwise chunk (s, j) on
	 * grid row (b_rows_from + s) mod pm of column j */
	int spread_b;
	uint32_t *stored;
	uint32_t b_times; /* 0 = 1 */
	uint32_t b_rows_from;
	TileLog *owners;
} GemmSite;

/* A GEMM plan on its site: the grid and the chunks' parts. */
typedef struct {
	const GemmPlan *p;
	GemmDtype g;
	uint32_t pm, pn, pk; /* grid rows, columns, K groups */
	uint32_t na;         /* parts of an A chunk (plan_gemm_a_parts) */
	uint32_t na_rows;    /* of them, the row ranges each K-part is
	                        split in (plan_gemm_a_row_parts) */
	int a_own;           /* plan_gemm_a_in_place */
	uint32_t nb;         /* of a B chunk: copies (b_local), parts
	                        (spread_b, b_parts) or 1 */
	uint32_t a_row0, b_row0, c_row0; /* the batch's rows in the views */
	GemmSite site;
	/* spread_b over the whole chip: the tiles that hold a part of B
	 * (held_n of them) while plan_gemm_inputs places it */
	uint8_t *held;
	uint32_t held_n;
} GemmGeom;

void plan_gemm_geom(GemmGeom *G, const GemmPlan *p, const GemmSite *site);
/* Tile (q, i, j): q pm pn + i pn + j, or with pairs_down (pm even)
 * q pm pn + (i / 2) 2 pn + 2 j + i mod 2. */
uint32_t plan_gemm_tile(const GemmGeom *G, uint32_t q, uint32_t i, uint32_t j);
/* The tile storing part u of A's chunk (i, s) of group q. */
uint32_t plan_gemm_a_owner(const GemmGeom *G, uint32_t q, uint32_t i,
                           uint32_t s, uint32_t u);
/* Part u of nk K-panels split `parts` ways: its panel count, *first its
 * first. */
uint32_t plan_gemm_k_part(uint32_t nk, uint32_t parts, uint32_t u,
                          uint32_t *first);
/* Part u of A's chunk (i, s) of group q: its K-panels [*c0, *c0 + the
 * count returned) of the chunk's and its rows [*r0, *r0 + *rows) of the
 * block (0: the part is empty). */
uint32_t plan_gemm_a_part(const GemmGeom *G, uint32_t q, uint32_t s, uint32_t i,
                          uint32_t u, uint32_t *c0, uint32_t *r0,
                          uint32_t *rows);
/* Indices of A's chunk parts and B's chunk copies or parts. */
size_t plan_gemm_a_index(const GemmGeom *G, uint32_t q, uint32_t s, uint32_t i,
                         uint32_t u);
size_t plan_gemm_b_index(const GemmGeom *G, uint32_t q, uint32_t s, uint32_t j,
                         uint32_t i);
uint32_t plan_gemm_rows(const GemmGeom *G, uint32_t i); /* C block rows */
uint32_t plan_gemm_cols(const GemmGeom *G, uint32_t j); /* C block cols */
/* K of group q in superstep s (0: nothing left), from *k0 on. */
uint32_t plan_gemm_k_of(const GemmGeom *G, uint32_t q, uint32_t s,
                        uint32_t *k0);
/* B's chunk (s, j) of group q, or its part u: a block of B whose K-panels
 * are [kp0, kp0 + its own) of the chunk's nk, which the chunk's layout
 * (n-panel outer, K-panel inner) holds in a run per n-panel, one run when
 * it has all nk. 0 if part u is empty. */
typedef struct {
	uint32_t row0, rows, col0, cols;
	uint32_t kp0, nk;
} GemmBPart;
int plan_gemm_b_part(const GemmGeom *G, uint32_t q, uint32_t s, uint32_t j,
                     uint32_t u, GemmBPart *bp);
/* Slice q of tile (., i, j)'s C block (plan_gemm_slice), its first
 * segment's offset in the block, its segments, their bytes and the
 * block's stride between them; returns its bytes. */
typedef struct {
	GemmSlice s;
	uint32_t off, nseg, seg_bytes, seg_stride;
} GemmCSlice;
uint32_t plan_gemm_c_slice(const GemmGeom *G, uint32_t i, uint32_t j,
                           uint32_t q, GemmCSlice *sl);
/* Bytes of tile (., i, j)'s C block buffer. */
uint32_t plan_gemm_c_block_bytes(const GemmGeom *G, uint32_t i, uint32_t j);
/* The steps the lowering of plan p makes: an exchange and a multiply a
 * superstep (the A and B chunks live in them), then with pk > 1 the
 * reduction's exchange and add (the partials live in them). */
int32_t plan_gemm_program_steps(const GemmPlan *p);
int32_t plan_gemm_superstep_steps(const GemmPlan *p);
/* The buffers tile (q, i, j) holds for the GEMM besides the chunks it
 * stores, in bytes: lower/gemm.c makes them this size, the planner sizes
 * a plan's tiles with them (plan_gemm_need). The receive buffers and the
 * partials live in the GEMM's steps, the C block from its first step
 * on, the argument blocks (a GEMM call a superstep with K, a vadd) for
 * the whole program. */
typedef struct {
	uint32_t a_chunk;      /* A received (0: read in place) */
	uint32_t b_chunk;      /* B received (0: b_local) */
	uint32_t c_block;      /* plan_gemm_c_block_bytes */
	uint32_t c_partials;   /* pk > 1: the other groups' partial slices
	                          (with norm_cols and the rows' reciprocals;
	                          and a vadd's arguments) */
	uint32_t calls;        /* GEMM argument blocks: one a call, but the
	                          calls of one block (lower_share_args) */
	uint32_t calls_beside; /* of them, overlapped calls' (beside the
	                          next chunks' exchange),
	                          GEMM_OVERLAP_ARGS_BYTES each; the rest
	                          GEMM_ARGS_BYTES */
} GemmTileBuffers;
GemmTileBuffers plan_gemm_tile_buffers(const GemmGeom *G, uint32_t q,
                                       uint32_t i, uint32_t j);
/* Bytes of the buffer storing part u of A's chunk (i, s) of group q
 * (0: the part is empty). */
uint32_t plan_gemm_a_part_bytes(const GemmGeom *G, uint32_t q, uint32_t s,
                                uint32_t i, uint32_t u);
/* The buffers of the chunks of A and B each tile stores ("A input", "B
 * input", from st in walk order; their numbers into a_in and b_in at
 * plan_gemm_a_index / _b_index) and their pieces in ta and tb. With
 * spread_b the weight balance places B's parts (or the site's owners
 * replay the choices). */
void plan_gemm_inputs(GemmGeom *G, Storage *st, TensorPlace *ta,
                      TensorPlace *tb, int32_t *a_in, int32_t *b_in);
/* C's pieces in the C blocks c_blk[tile]: each block, or with pk > 1
 * each group's reduced slice of it. */
void plan_gemm_c_pieces(const GemmGeom *G, const int32_t *c_blk,
                        TensorPlace *tc);
/* A new place of `tensor` (m x n, C's type) laid out as C of plan p on
 * tiles from tile0, its pieces in no buffer (all 0): a model to mirror. */
TensorPlace *plan_gemm_c_like(const GemmPlan *p, uint32_t tile0,
                              int32_t tensor);

/* ---- graph_plan.c: the whole graph's plan ---------------------------- */

/* How an op gets an input where it wants it (its layout for the op). */
typedef enum {
	CONV_NONE,        /* where it is (its home) */
	CONV_HOST,        /* an input or weight not yet anywhere: the host
	                     writes it there, its home from now on */
	CONV_HOST_COPY,   /* an input or weight the host writes here too: a
	                     copy of its home (placed by an earlier op), or
	                     in a layout only this op reads (a GEMM's packed
	                     B, its transposed A) while the home is left to
	                     the next consumer */
	CONV_LOOP_COPIES, /* a loop weight (or any, when the weights take
	                     much of a tile: copies_home) wanted in several
	                     copies (a bias next to every block): stored
	                     once, each distinct block where the weight
	                     balance puts it, and copied by an exchange each
	                     iteration */
	CONV_MOVE,        /* an exchange from its home */
	CONV_PACK,        /* a GEMM's B made on the device: an exchange into
	                     row-major blocks, packed into the weight layout
	                     on the tiles */
	CONV_TRANSPOSE,   /* a GEMM's transposed A on the device: transposed
	                     there into the default layout, then moved */
	CONV_COUNT
} ConvKind;

typedef struct {
	uint8_t kind;    /* ConvKind */
	uint64_t cycles; /* CONV_MOVE, CONV_LOOP_COPIES: the exchange as the
	                    planner prices it (layout_moves_cycles + a sync);
	                    0 for the others */
} Conv;

/* What the planner chose for one op: with the graph, all the lowering
 * needs to lay the op out (the layouts are functions of these). */
typedef struct {
	/* the first tile of a layout on part of the chip (each starts where
	 * the last one ended): the op's own (its output's default or
	 * row-block layout, or its GEMMs' grid: tile0), that of an input the
	 * op meets first (in_tile0), that of a matmul's A transposed on the
	 * device (a_tile0) */
	uint32_t tile0, in_tile0, a_tile0;
	Conv in[GRAPH_MAX_INPUTS]; /* by input */
	/* matmul */
	GemmPlan gemm;           /* every GEMM's plan */
	uint32_t group;          /* batched: GEMMs side by side */
	uint8_t spread_b;        /* B (a weight) stored in parts placed by the
	                            weight balance (GemmSite.spread_b) */
	uint32_t b_rows_from;    /* else a weight's first chunk's grid row */
	uint64_t held;           /* the data bytes beside it on each tile of
	                            its grid that its GEMM plan was chosen with
	                            (plan_gemm_top's held, the code aside) */
	struct GemmTried *tried; /* its GEMM searches' packed candidates
	                            (plan_holds_beside) */
	/* the weight balance's choices, in the order the lowering meets
	 * them: a matmul's B parts, a loop weight's distinct blocks */
	TileLog owners;
} OpPlan;

/* What the planner learned of an op from a measured earlier plan of the
 * same graph (compile.c, "fit"): its GEMM grid covered a tile that did
 * not fit, so it gives up what it may. */
enum {
	PLAN_FIT_NO_COPIES = 1,  /* no weight copies (GemmPlan.b_local) */
	PLAN_FIT_HALF = 2,       /* its GEMM plan the cheapest whose data on a
	                            tile (GemmPlan.tile_bytes) is at most half
	                            a tile, if the planner offers one */
	PLAN_FIT_NO_OVERLAP = 4, /* no overlapped superstep (GemmPlan.overlap):
	                            its second chunks were over a tile */
};

/* A tile a measure found over, and the graph op its worst step serves
 * (PlaceOverflow.op; -1: none). */
typedef struct {
	uint32_t tile;
	int32_t op;
	uint64_t need; /* code and data live at that step, where the tile is
	                  over the memory model's total bound (0: over by
	                  another measure: the interleaved region, the code's
	                  end, the packing) */
} PlanOver;

typedef struct {
	int weight_copies;      /* GEMM weights may be stored on every tile that
	                           reads them (GemmPlan.b_local), within a budget
	                           per tile */
	const uint8_t *fit;     /* by graph op: PLAN_FIT_* (NULL: none) */
	const uint32_t *load;   /* by tile: the bytes a measured earlier plan
	                           held there besides the weights the balance
	                           stored (code and live data at its peak,
	                           plan_tile_load); the weight balance starts
	                           from them, so that it fills the emptiest
	                           tiles (NULL: from zero) */
	const uint32_t *code;   /* by tile: the code (kernels and program) a
	                           measured earlier plan held there; each GEMM
	                           plan then fits beside the most of it (NULL:
	                           not known) */
	const uint32_t *beside; /* by graph op: the data a draft of the same
	                           graph held beside a matmul on its tiles at
	                           its steps, where they did not fit
	                           (lower_beside); its GEMM plan then fits
	                           beside at least that much (NULL, 0: not
	                           known) */
	const struct PlanBeside *beside_bufs; /* by graph op: the buffers a
	                           draft's tile held beside a matmul at its
	                           steps, where that tile did not pack
	                           (lower_beside_bufs); each candidate's
	                           fullest tile is packed with them
	                           (PlanHeld.buf; NULL: none known) */
	int no_gelu_in_reduction;             /* never plan_reduction_gelu nor
	                                         plan_bias_gelu */
	int no_cast_in_reduction;             /* never plan_reduction_cast */
	int no_carry_layout; /* the loop's carry always as carry_in's home
	                        (plan_graph: else laid out for its readers
	                        where that prices fewer cycles) */
	int gemm_overlap;    /* matmuls of 2 or more supersteps of one
	                        K, A and B exchanged, get the
	                        overlapped superstep (GemmPlan.overlap;
	                        experimental, off by default) */
	int b_under;         /* a weight GEMM's B chunks may be exchanged beside
	                        the last GEMM's multiply (lower_b_under): the
	                        planner prices them so (GemmPlan.b_host) */
	struct PlanMemo *memo; /* relayouts' prices kept for every plan of
	                          one compile (NULL: none kept) */
} PlanOptions;

enum {
	PLAN_DESC_MAX = 2048,
	/* Bytes of a gather's table block a tile may hold (layout_gather);
	 * the ONNX importer splits a table whose narrowest block (8
	 * columns) does not fit into gathers of blocks of rows that do
	 * (split_lookup, docs/onnx.md). */
	PLAN_GATHER_TABLE_MAX = 64 << 10,
};

/* A layout of the loop's carry plan_graph planned the graph with. */
typedef struct {
	int32_t op;      /* laid out as this body matmul's C; -1: as
	                    carry_in's home */
	int failed;      /* no plan with it (why: the planner's message) */
	uint64_t cycles; /* its plan's plan_cycles */
	uint32_t bytes;  /* the carry's most bytes on a tile */
	char why[120];
} PlanCarry;

typedef struct {
	const Graph *g;
	const Chip *chip;
	uint32_t tiles;  /* the tiles it may use: 0 .. tiles - 1 */
	PlanOptions opt; /* what it was made with */
	OpPlan *op;      /* by graph op (a loop's later iterations: unused) */
	int nop;
	RepeatMap loop;         /* the graph's repeat (count 0: none) */
	int32_t *loop_slot;     /* by tensor: k * loop.nweights + j for
	                           iteration k's weight j, else -1 */
	uint32_t loop_tile0;    /* the default layout of a loop's carry_in made
	                           before the loop (if it had none) */
	uint32_t *weight_bytes; /* by tile: the weight balance's bytes stored
	                           there (a loop weight's once an iteration) */
	uint64_t held_code;     /* the code beyond the kernels' bound each
	                           GEMM plan was chosen beside
	                           (plan_code_beyond of PlanOptions.code) */
	/* The loop's carry: laid out as C of the GEMM plan carry_c on tiles
	 * from carry_c_tile0 (its pieces, with pk > 1 the groups' reduced
	 * slices), the plan of the body's matmul carry_op when the planner
	 * made it; with carry_c.pk 0 (carry_op -1) as carry_in's home
	 * (plan_carry_like) */
	GemmPlan carry_c;
	uint32_t carry_c_tile0;
	int32_t carry_op;
	uint64_t carry_cycles;  /* the carry's moves into its place, as
	                           priced: before the loop, and loop.count
	                           times at the body's end */
	uint32_t carry_bytes;   /* the carry's most bytes on a tile */
	PlanCarry *carry_tried; /* plan_graph's layouts of the carry, the
	                           home first (--dump=plan) */
	int ncarry_tried;
	char desc[PLAN_DESC_MAX]; /* each op's plan, "; " between them */
} Plan;

/* Plans every op of the verified graph g on the chip's first `tiles`
 * tiles, in graph order (greedy): each matmul's GEMM plan among the
 * planner's cheapest candidates, priced with the exchange that brings A
 * from where its producer left it; where each layout starts; how each
 * input reaches its consumer and what that costs. Ops the compiler cannot
 * do yet are refused here, with the op named. A graph with a loop is
 * planned again for each body matmul whose C may hold the carry, the
 * carry laid out so, and the plan of the fewest cycles kept
 * (plan_cycles; not with PlanOptions.no_carry_layout); once a measure
 * found a draft's tiles over (PlanOptions.load), the plan whose carry
 * holds the fewest bytes on a tile, then the fewest cycles. */
int plan_graph(const Graph *g, const Chip *chip, uint32_t tiles,
               const PlanOptions *o, Plan **out, Diag *d);
void plan_free(Plan *p);
/* The place the loop's carry mirrors (plan_graph's choice): NULL for
 * carry_in's home, else a new place of `tensor` laid out as C of
 * plan->carry_c whose pieces have no buffers (layout_mirror's model);
 * the caller frees it. */
TensorPlace *plan_carry_like(const Plan *plan, int32_t tensor);
/* The cycles the plan prices: each op's GEMMs and its inputs' moves, a
 * loop body's loop.count times, and the carry's moves (carry_cycles). */
uint64_t plan_cycles(const Plan *plan);
/* 1 if a and b make the same choices (each op's layouts' first tiles,
 * GEMM plan, conversions, the weight balance's tiles): lowering either
 * gives the same program, whatever the budgets they were made with. */
int plan_same_choices(const Plan *a, const Plan *b);
/* 1 if a and b are the same GEMM plan (shape, grid, blocks, supersteps,
 * copies, B's parts): the choice plan_same_choices compares by op. */
int plan_same_gemm(const GemmPlan *a, const GemmPlan *b);
/* 1 if plan p, planned again beside `code` bytes of code beyond the
 * kernels' bound on a tile (instead of p->held_code) and, by graph op,
 * at least beside[i] bytes of data beside each matmul (NULL: as p was),
 * would make every GEMM choice as p did, and so every other choice:
 * each matmul's searches admit the same candidates beside the new budget
 * (plan_gemm_tried_hold), by the same packing. Planning again would give
 * the same plan; this asks only the candidates the searches packed.
 * *packed: how many were packed again. */
int plan_holds_beside(const Plan *p, uint64_t code, const uint32_t *beside,
                      uint64_t *packed);
/* 1 if op changes nothing in memory, its output being its input's pieces:
 * a reshape that keeps the 2-D view (rows x last axis) of a tensor that is
 * no view (plan_op_is_view), a slice of its input's segment
 * (plan_row_segments), a cast to its own
 * element type and scale, a cast that its GELU, softmax or layernorm
 * computed (plan_gelu_fused_cast, plan_softmax_fused_cast,
 * plan_layernorm_fused_cast). */
int plan_op_aliases(const Graph *g, const Op *op);
/* 1 if op is a layout op whose output is only a view: a reshape, a
 * transpose that keeps the last axis or a slice of whole rows, of a
 * tensor an op computes, with one reader: a matmul reading it as an
 * untransposed A or as B made on the device, or another such layout op.
 * The reader takes the elements straight from the viewed tensor's home
 * (plan_view_of), one exchange instead of one for each layout op; a
 * tensor read several times is made once (the So400m attention's q, k
 * and v rows, read from there as row-major runs instead of from the
 * GEMM's 16-column panels). */
int plan_op_is_view(const Graph *g, const Op *op);
/* Segments of a tensor that a layout op moves (no view, no alias, not
 * the graph's output) and that only slices of contiguous ranges of
 * whole rows read, apart, in its iteration (So400m's q, k and v rows of
 * the heads' transpose): the tensor is stored as the segments' default
 * layouts (layout_segments: each slice's rows spread over the chip, not
 * a third of it) and each slice aliases its segment's pieces
 * (plan_op_aliases; no exchange, no view). Returns the number of
 * segments (the slices' and the rows between them), their bounds in
 * bounds[0 .. n]; 0: not so. */
enum { PLAN_SEGMENTS_MAX = 15 };
int plan_row_segments(const Graph *g, int32_t id, uint32_t *bounds);
/* Segment s of tensor id's segments (plan_row_segments, bounds) when its
 * slice is read (through reshapes that keep the last axis) only by a
 * cast from f16 to f8 that only a matmul reads, as its B transposed, in
 * the same iteration (the f8 attention's K): the rows of each of the
 * matmul's B^T (K's keys of a head), which layout_segments then stores
 * as B^T's n-panels (layout_segments' bt); 0: not so. */
uint32_t plan_segment_bt_rows(const Graph *g, int32_t id,
                              const uint32_t *bounds, int s);
/* The same for a matmul that reads the cast as its B, not transposed (the
 * f8 attention's V), for an even number of columns: the rows of each
 * matmul's B (V's keys of a head), which layout_segments then stores as
 * blocks of B's weight panels (layout_segments' vb); 0: not so. *matmul
 * (NULL: not asked): that matmul's index in g->ops, or -1. */
uint32_t plan_segment_vb_rows(const Graph *g, int32_t id,
                              const uint32_t *bounds, int s, int32_t *matmul);
/* 1 if op is a slice that aliases its segment of its input
 * (plan_row_segments), with its rows of the input's view in [*r0, *r1). */
int plan_slice_segment(const Graph *g, const Op *op, uint32_t *r0,
                       uint32_t *r1);
/* Such a slice's place: the pieces of `from` (its input's home) in its
 * rows (layout_row_range), in *to; an internal error if they are not
 * (a layout not made by layout_segments). */
int plan_slice_alias(const Graph *g, const Op *op, const TensorPlace *from,
                     TensorPlace **to, Diag *d);
/* The tensor that tensor id views (id itself if no view op made it),
 * with in *c the maps from its flat order to id's (c->unit 0: none). */
int32_t plan_view_of(const Graph *g, int32_t id, MapChain *c);
/* For a layout op that is no view: the tensor its input views and in *c
 * the maps from there to its output (c->unit 0: its input is no view). */
int32_t plan_move_of(const Graph *g, const Op *op, MapChain *c);
/* 1 if op is an f16 GELU whose result only goes to casts to f8 (not to
 * the host): its kernel may compute in f16 (EW_GELU_H), whose rounding is
 * far below an f8 step, instead of in f32. */
int plan_gelu_in_f16(const Graph *g, const Op *op);
/* 1 if op is an f16 softmax whose result reaches only casts to f8
 * (through reshapes, transposes and one matmul: the attention's
 * probabilities times V, then its output cast for out_proj): its kernel
 * may take t, exp and y in f16 (rw_softmax_f16h), whose roundings, a few
 * f16 ulps, are far below an f8 step. */
int plan_softmax_in_f16(const Graph *g, const Op *op);
/* N if op is a matmul P V whose A is the f8 cast fused into a softmax
 * (plan_softmax_fused_cast) and read by it alone, and whose B is f8 of
 * N columns with a padding column (N % 16 > 0, N % 4 == 0) where its
 * type holds 1 exactly (plan_f8_one): the softmax may write its e
 * unnormalised and the reduction divide each row by its sum, column N,
 * where V holds ones (GemmPlan.norm_cols); else 0. */
uint32_t plan_matmul_norm_cols(const Graph *g, const Op *op);
/* The byte of 1 in f8 type e (at its scale), or 0 if 1 is not one of
 * its values (V's column of ones). */
uint8_t plan_f8_one(ElemType e);
/* The index in g->ops of tensor id's one reader (reading it once), or
 * -1. */
int32_t plan_one_reader(const Graph *g, int32_t id);
/* The elementwise kernel of a unary op (cast, relu, gelu), one choice
 * for the planner's pricing and lowering's call. */
EwOp plan_unary_kernel(const Graph *g, const Op *op);
/* The index in g->ops of the one cast to f8 that reads op's result, if op
 * is such a GELU (plan_gelu_in_f16) with no other reader: the GELU's
 * kernel writes the cast's f8 result (EW_GELU_H from f16 to f8) and the
 * cast aliases it (plan_op_aliases); both in the same iteration of the
 * graph's repeat, or both outside it. Else -1. */
int32_t plan_gelu_fused_cast(const Graph *g, const Op *op);
/* The same for an f16 softmax that takes its exps in f16
 * (plan_softmax_in_f16) and whose one reader is a cast to f8: its
 * kernel writes the cast's result (rw_softmax_f16h8, the same bytes as
 * the cast of its f16 result) and the cast aliases it. Else -1. */
int32_t plan_softmax_fused_cast(const Graph *g, const Op *op);
/* The index in g->ops of the add that adds a bias row to op's result,
 * if op is a matmul of one GEMM (no batch axes) with an f16 result whose
 * one reader is that add (a row broadcast down it, f16 out, in the same
 * iteration of the graph's repeat, the result not the graph's output);
 * else -1. With a reduction (pk > 1: plan_bias_in_reduction) the
 * reduction's vadd_bias_f16 adds the bias as it stores the sum, the bias
 * row's copies move in the partials' exchange, and the add aliases C. */
int32_t plan_matmul_bias_add(const Graph *g, const Op *op);
/* 1 if op is such an add, its matmul's plan reduces (pk > 1) and the
 * kernel's cycles say the bias pays there (vadd_bias_f16 against vadd and
 * the bias add, on the plan's largest slice). */
int plan_bias_in_reduction(const Plan *plan, const Op *op);
/* The index in g->ops of the residual add that reads bias add `add`'s
 * result (plan_matmul_bias_add's): its one reader, an f16 add of it and
 * another f16 tensor h of its shape (not it, not made after the matmul
 * mm, which is add's), in its iteration, the bias add's result not the
 * graph's output; else -1. */
int32_t plan_bias_add_residual(const Graph *g, const Op *mm, const Op *add);
/* 1 if op is such a residual add whose bias add is in the reduction
 * (plan_bias_in_reduction) and the kernel's cycles say h pays there too
 * (vadd_bias_res_f16 against vadd_bias_f16 and the add, on the plan's
 * largest slice): the reduction's last pass adds h after the bias, h's
 * copies move in the partials' exchange, and the add aliases C. The
 * bits are those of the separate add's (an f16 add is commutative). */
int plan_residual_in_reduction(const Plan *plan, const Op *op);
/* For such an add: its input that the bias add made (the C side). */
int32_t plan_residual_c_input(const Plan *plan, const Op *op);
/* The index in g->ops of the GELU whose f8 cast's result the reduction
 * of bias add `add` writes: add is in its matmul's reduction
 * (plan_bias_in_reduction), its one reader (in its iteration, its result
 * not the graph's output) a GELU with plan_gelu_fused_cast, the plan's
 * sources (pk - 1) a multiple of 3, and the kernel's cycles say it pays
 * (vadd_bias_gelu_f16_f8 against vadd_bias_f16 and ew_gelu_f16_f8, on
 * the plan's largest slice); PlanOptions.no_gelu_in_reduction: never.
 * Else -1. The reduction's last pass then adds the sources and the bias
 * in f16, takes the GELU in f16 and writes the cast's f8 result, laid
 * out as the GELU's home (C's pieces in f8); the GELU and its cast alias
 * it. The bits of the three steps apart. */
int32_t plan_reduction_gelu(const Plan *plan, const Op *add);
/* 1 if op is the GELU of plan_reduction_gelu. */
int plan_gelu_in_reduction(const Plan *plan, const Op *op);
/* The index in g->ops of the cast to f8 whose result the reduction of
 * matmul mm writes: mm's C is f16 (not the graph's output) and its one
 * reader (in its iteration) a cast of it to f8 (its scale -32..31); mm's
 * plan reduces with the row division (pk > 1, GemmPlan.norm_cols: the
 * reduction whose last pass has an f8 variant, vadd_norm_f16_f8) and the
 * kernel's cycles say it pays (against vadd_norm_f16 and ew_cast_f16_f8,
 * on the plan's largest slice); PlanOptions.no_cast_in_reduction: never.
 * Else -1. The reduction's last pass then writes the cast's f8 result,
 * laid out as the cast's own step would have made it (C's pieces in
 * f8), and never stores C's f16 result; the cast aliases it. The bits of
 * the two steps apart. */
int32_t plan_reduction_cast(const Plan *plan, const Op *mm);
/* 1 if op is the cast of plan_reduction_cast. */
int plan_cast_in_reduction(const Plan *plan, const Op *op);
/* The index in g->ops of the GELU whose f8 cast's result bias add `add`
 * writes in one pass with the GELU (ew_bias_gelu_f16_f8 on C's panels):
 * add is a bias add of its matmul (plan_matmul_bias_add) that is not in
 * its reduction (one K group, or plan_bias_in_reduction says no), its one
 * reader a GELU as for plan_reduction_gelu; PlanOptions.
 * no_gelu_in_reduction: never. Else -1. The add aliases C, the GELU's
 * home is C's pieces in f8 as its own step would have made it, the GELU
 * and its cast alias it; the add's f16 result is never stored. The bits
 * of the add, the GELU and the cast apart. */
int32_t plan_bias_gelu(const Plan *plan, const Op *add);
/* 1 if op is the GELU of plan_bias_gelu. */
int plan_gelu_after_bias(const Plan *plan, const Op *op);
/* Its own rule for an f16 layernorm whose one reader is a cast to f8 in
 * its iteration, its rows whole pairs of atoms (cols a multiple of 8):
 * its kernel writes the cast's result (rw_layernorm_f16h8: z and y in
 * f16 arithmetic, the mean and rsqrt rounded to f16, within a few f16
 * ulps of the f16 layernorm while |mean| < 2^5 std, docs/compiler.md)
 * and the cast aliases it. Else -1. */
int32_t plan_layernorm_fused_cast(const Graph *g, const Op *op);
/* IPU_OK, or IPU_EINVAL naming the first op of rm's body whose kernel's
 * arithmetic (f16 or f32: plan_gelu_in_f16, plan_softmax_in_f16, a
 * layernorm fused with its cast) differs between the loop's body and
 * the graph written out (docs/graph.md "Repeat": the same results), in
 * iteration 0 or the last: the carry's maker whose result goes to a cast
 * to f8 in the next iteration (a layernorm fuses with it only unrolled)
 * or only in some iterations (not after the loop). */
int plan_loop_same_arithmetic(const Graph *g, const RepeatMap *rm, Diag *d);
/* r, with d's message prefixed "compile: <op kind> <output>: ", the way
 * the planner and the lowering name the op an error is about. */
int plan_op_error(const Graph *g, const Op *op, int r, Diag *d);
/* fit.c: what the next plan of the same graph gives up (in fit, by
 * graph op, PLAN_FIT_*, kept from earlier plans) when plan p was measured
 * not to fit on tiles over[0 .. nover - 1]: after the first plan, the
 * weight copies of the matmuls on those tiles if one has copies; else the
 * overlapped superstep of the matmuls whose steps are those tiles' worst;
 * else every matmul's GEMM plans of more than half a tile (copies allowed
 * again); then every matmul's copies. Returns the number of ops given
 * something new to give up (0: nothing is left). */
int plan_refit(const Plan *p, const PlanOver *over, int nover, uint8_t *fit);
/* fit.c, the rung beside plan_refit's ladder (compile.c, compile_once): a
 * matmul whose own step is the worst of a tile of its grid over the total
 * bound (over[k].op, over[k].need) is planned again within the bytes that
 * step measured. Contract: for each such planned matmul i without
 * skip[i], need = the most over[k].need of the tiles of its grid (with
 * least: the least), want = need less `code` (the code the next plan
 * counts on a tile: plan_kernels_code and plan_code_beyond of the code
 * measured so far) less its plan's own bytes (GemmPlan.tile_bytes); where
 * want is more than the data its plan counted beside it (OpPlan.held) and
 * than beside[i], beside[i] (PlanOptions.beside) is raised to it and
 * raised[i] set: its next GEMM plan is admitted only with its own bytes
 * at most the draft's plan's less what that tile was over by (need - the
 * tile's room). Nothing is given up and no other matmul's budget moves.
 * Returns the matmuls raised. */
int plan_refit_own(const Plan *p, const PlanOver *over, int nover,
                   uint64_t code, int least, const uint8_t *skip,
                   uint32_t *beside, uint8_t *raised);
/* fit.c: what tile t of plan p held besides the weights its balance
 * stored there, measured by the placer (`need`: code + the most data live
 * at one step): the next plan's PlanOptions.load. */
uint32_t plan_tile_load(const Plan *p, uint32_t t, uint64_t need);
/* mem.c: the tile memory model, one bound for the planner's estimates
 * and the placer's measure. A tile holds, from mem_base, its code and
 * then its data; at every step both must fit. */
enum {
	/* every tile's save buffer: the program's return address and a
	 * loop's count (codegen), live the whole program */
	PLAN_SAVE_BYTES = 8
};
typedef struct {
	uint64_t code; /* the kernels' shared image and the tile's program */
	uint64_t data; /* the most data bytes live at one step */
} TileBytes;
/* The supervisor code codegen emits (codegen.c, emit_program), in
 * instructions of CODE_INSN bytes: the rules the planner bounds a
 * program's size by (plan_code_phase, plan_code_xfers), which
 * codegen_verify checks on every tile's program. */
enum {
	CODE_INSN = 4,
	CODE_PROGRAM_INSNS = 5, /* prologue 2, epilogue 3 */
	CODE_LOOP_INSNS = 8,    /* the count stored 3, counted and branched 5 */
	CODE_CALL_INSNS = 2,    /* $m0 set, call */
	CODE_EXCHANGE_INSNS = 5, /* the count, sync, its write, the mux
	                            off, sync RECV */
	CODE_SEND_ITEMS = 64,    /* items a send instruction carries */
	CODE_DELAY_LOG2 = 19     /* cycles a delay instruction burns: 2^19 */
};
/* At most the bytes of a tile's exchange phase of `cycles` (its events
 * aside): the fixed part and a delay for every 2^19 cycles. */
uint64_t plan_code_phase(uint64_t cycles);
/* At most the bytes of the events of a tile that receives `recv`
 * transfers and sends `sends` transfers of `items` items in all in an
 * exchange phase: each receive's three controls (pointer, mux, mux off)
 * each with a delay before it or a send split by it, each send in
 * instructions of CODE_SEND_ITEMS items and a delay before it. */
uint64_t plan_code_xfers(uint64_t recv, uint64_t sends, uint64_t items);
/* The bytes of a tile for code and data (mem_end - mem_base). */
uint64_t plan_tile_room(const Chip *c);
/* What a tile needs: its code and its data at their peak. */
uint64_t plan_tile_need(TileBytes b);
/* The bytes by which b passes the tile's room (0: it fits). */
uint64_t plan_tile_over(const Chip *c, TileBytes b);
/* The kernels' shared image at its largest, every kernel object linked:
 * the code every program starts after is at most this. */
uint64_t plan_kernels_code(const Chip *c);
/* The most code (kernels and program, by tile) any of the first `tiles`
 * tiles holds beyond plan_kernels_code: what a GEMM's own bound does not
 * cover (0 if code is NULL). */
uint64_t plan_code_beyond(const Chip *c, const uint32_t *code, uint32_t tiles);
/* One buffer of a tile as the memory model packs it (the placer's
 * Buffer; the GEMM planner's fullest tile). */
typedef struct {
	uint32_t bytes;
	uint32_t align;      /* a power of two; below 8 counts as 8 */
	uint8_t region;      /* MemRegion */
	int32_t first, last; /* the steps it is live in */
	int32_t apart;       /* the index of a buffer of the same tile it
	                        shares no memory element with (a kernel
	                        reads both in one bundle), or -1 */
} TileBuf;
struct PlanHeld {
	uint64_t bytes;     /* below the candidate's fullest tile */
	const TileBuf *buf; /* packed with it, live at all its steps */
	int n;
	PlanHost b_host;         /* the earlier plain multiply that a weight B's
	                            exchange may go beside (lower_b_under;
	                            GemmPlan.b_host), cycles 0 for none */
	struct GemmTried *tried; /* if not NULL, the search records there
	                            the candidates whose admission `bytes`
	                            decided (plan_gemm_tried_hold) */
};
/* The candidates of a GEMM's searches (plan_gemm_top) that were priced
 * within the tile beside the held bytes and ranked among the cheapest
 * so far, so packed: each with whether it was admitted. Every other
 * candidate was skipped by its rank, which depends only on the ones
 * kept before it, or refused by its price, which more held bytes only
 * confirm; so a search beside other held bytes admits the same
 * candidates, keeps the same cheapest and makes the same choice if each
 * recorded candidate is admitted or refused there as it was. */
typedef struct {
	GemmPlan plan;
	TileBytes need;   /* plan_gemm_need's, with the kernels' bound */
	uint8_t admitted; /* beside the held bytes */
	uint8_t beside;   /* its packing with PlanHeld.buf fit (1 without):
	                     independent of the held bytes */
} GemmTry;
typedef struct GemmTried {
	GemmTry *at;
	int n, cap;
	uint64_t held; /* PlanHeld.bytes of the searches recorded */
} GemmTried;
void plan_gemm_tried_free(GemmTried *t);
/* 1 if `held` is at least t->held and every candidate recorded in t is
 * admitted (or refused) beside `held` bytes as it was beside t->held: a
 * search beside them chooses the same. *packed: the candidates packed
 * again. */
int plan_gemm_tried_hold(const Chip *c, const GemmTried *t, uint64_t held,
                         uint64_t *packed);
/* A draft's buffers beside a matmul on the tile of its grid that did not
 * pack (PlanOptions.beside_bufs). */
/* memo.c: prices the planner computes from layouts alone, kept by the
 * exact words of what they are computed from (a key of n words), shared
 * by every plan of one compile and by its threads. A value is a function
 * of its key only, so the plans are the same with or without it. */
typedef struct PlanMemo PlanMemo;
PlanMemo *plan_memo_new(void);
void plan_memo_free(PlanMemo *m);
/* 1 and *value if key was put, else 0 */
int plan_memo_get(PlanMemo *m, const uint32_t *key, size_t n, uint64_t *value);
void plan_memo_put(PlanMemo *m, const uint32_t *key, size_t n, uint64_t value);

typedef struct PlanBeside {
	TileBuf *buf;
	int n;
} PlanBeside;
/* Scratch of plan_tile_pack and plan_tile_live, for tiles of up to the
 * `max` buffers plan_pack_init was given. */
typedef struct {
	uint64_t hi, lo;
	int64_t v;
} PackKey;
typedef struct {
	uint64_t addr, end;
	int32_t first, last;
} PackPlaced;
typedef struct {
	PackKey *key, *tmp; /* placement orders; live-byte events */
	PackPlaced *placed; /* sorted by address */
	uint64_t *addr;
	uint8_t *whole;   /* live for the tile's whole step span */
	int *pstart, *pl; /* partners of i: pl[pstart[i] .. pstart[i + 1]) */
	int *fill;
} TilePack;
void plan_pack_init(TilePack *s, int max);
void plan_pack_free(TilePack *s);
/* Packs b[0..n) from code_end up, memory unbounded above, under the
 * placement rules (alignment, region, lifetimes, the `apart` rule by
 * memory element, docs/placement.md) in up to six orders, then, if none
 * ends within mem_end and the live bytes could, by repairs of the best
 * order; keeps the first packing that ends within mem_end: returns its
 * high-water address (the lowest found if none does; code_end if nothing
 * takes memory) and, if addr, each buffer's address in it.
 * Deterministic. */
uint64_t plan_tile_pack(const Chip *c, uint64_t code_end, const TileBuf *b,
                        int n, TilePack *s, uint64_t *addr);
/* The most bytes live at one step among b[0..n) (only the interleaved
 * ones if inter); *step the first step with that many (0 if none). */
uint64_t plan_tile_live(const TileBuf *b, int n, int inter, TilePack *s,
                        int32_t *step);
/* gemm_plan.c: a priced plan's fullest tile in the memory model's terms,
 * with `kernels` bytes of kernels' code (plan_kernels_code): as data the
 * bytes the lowering gives its buffers there (plan_gemm_tile_buffers, the
 * stored chunks with B on rotating rows, the save buffer), all live at
 * once, as code the kernels and a bound on the program (docs/compiler.md,
 * "Memory: what the planner knows"). */
TileBytes plan_gemm_need(const GemmPlan *p, uint64_t kernels);
/* The data bytes the same tile's buffers take when packed above `code`
 * bytes of code by the placer's packing (plan_tile_pack: alignment,
 * regions, lifetimes and the element rule, which keeps the A chunk, a
 * chunk read in place and the partials apart from the C block): its
 * high water less its code end. The planner admits a candidate whose
 * tile, with plan_gemm_need's code, ends within mem_end. */
uint64_t plan_gemm_packed(const Chip *c, const GemmPlan *p, uint64_t code);
/* The same with the buffers beside[0..n) packed with it (live at every
 * step of the GEMM): the high water less the code end. */
uint64_t plan_gemm_packed_beside(const Chip *c, const GemmPlan *p,
                                 uint64_t code, const TileBuf *beside, int n);
/* The plan as text (ipu compile --dump=plan): a line per op. */
void plan_print(const Plan *p, FILE *f);
/* The plan's invariants: every op planned, GEMM grids on the plan's
 * tiles, first tiles in range, owners on tiles in range. */
int plan_verify(const Plan *p, Diag *d);

#endif

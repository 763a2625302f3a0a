/*
 * compile.h - the compiler's pipeline, from a graph to a package:
 *
 *   plan      choose how each operation is spread over tiles (plan/)
 *   lower     buffers, exchange phases, kernel calls (lower/)
 *   schedule  send and receive cycles of every exchange phase (xsched)
 *   size      each tile's program length (codegen_size)
 *   place     addresses of every buffer above each tile's code (place/)
 *   code      each tile's supervisor program (codegen/)
 *   package   kernels, programs, data and the tensor map (pkg/)
 *
 * One readable function, compile_graph, calls them in this order.
 */
#ifndef IPU_COMPILE_H
#define IPU_COMPILE_H

#include <stdint.h>

#include "../graph/graph.h"
#include "../pkg/pkg.h"
#include "../place/place.h"
#include "../plan/plan.h"
#include "../target/chip.h"
#include "../util/util.h"

/* Passes whose result `ipu compile --dump` prints. */
enum {
	COMPILE_DUMP_PLAN = 1 << 0,  /* each op's plan */
	COMPILE_DUMP_LOWER = 1 << 1, /* the lowered program (lower_print) */
	COMPILE_DUMP_SCHED = 1 << 2, /* the exchange schedule */
	COMPILE_DUMP_PLACE = 1 << 3, /* the buffers' addresses */
	COMPILE_DUMP_CODE = 1 << 4,  /* each program's bytes by step */
};

typedef struct {
	const Chip *chip; /* NULL = the C600 */
	uint32_t tiles;   /* 0 = all of the chip's */
	unsigned dump;    /* COMPILE_DUMP_* bits: printed to dump_to */
	FILE *dump_to;
	int no_gemm_overlap; /* 1: never the overlapped GEMM superstep
	                        (PlanOptions.gemm_overlap off); 0, the
	                        default: compile_graph plans with it and,
	                        where a GEMM plan has it, also without, and
	                        keeps the program of fewer predicted cycles */
	int no_b_under;      /* keep each weight GEMM's B transfers in its
	                        own exchange (else lower_b_under moves them
	                        under an earlier multiply) */
	int no_a_direct;     /* keep each GEMM's A in two exchanges, into its
	                        stored parts and from there (else
	                        lower_a_direct sends it straight from its
	                        producer where that is cheaper) */
	int no_b_wrap;       /* keep the loop body's first weight GEMM's B
	                        transfers in the body (else lower_b_wrap
	                        moves them under the body's last multiply,
	                        for the next iteration; off with no_b_under
	                        too) */
	int no_red_pipe;     /* keep each K-split reduction in one exchange
	                        and one add (else lower_red_pipe splits it
	                        in two parts of its rows where that is
	                        priced cheaper) */
	int no_gelu_in_reduction; /* never the GELU and its cast in a
	                        matmul's reduction or its bias add's pass
	                        (PlanOptions' no_gelu_in_reduction,
	                        plan_reduction_gelu, plan_bias_gelu) */
	int no_cast_in_reduction; /* never a cast to f8 in a matmul's
	                        reduction (PlanOptions'
	                        no_cast_in_reduction, plan_reduction_cast) */
	int no_carry_layout;      /* the loop's carry as carry_in's home (else
	                             laid out for its readers: PlanOptions'
	                             no_carry_layout, plan_graph) */
	int keep_plan;            /* 1: the plan of the program kept goes to
	                             CompileReport.kept_plan */
	const Plan *plan; /* NULL: the graph planned. Else the kept_plan of an
	                     earlier compile of the same graph, options and
	                     chip, maybe at another timing profile: lowered,
	                     scheduled and priced on `chip` (its profile) as
	                     it is, nothing chosen again (no plan, no
	                     compile without the overlap, no refit; what
	                     lowering and the exchange schedule decide by
	                     cycles, they decide at `chip`'s profile); a
	                     program that does not fit fails (IPU_ERANGE):
	                     the one program a timing range prices
	                     (docs/fidelity.md) */
	PlanMemo *memo;   /* prices kept for every plan of the compile
	                     (PlanOptions.memo); compile_graph makes one for
	                     its compiles where NULL */
	struct XschedCache *xcache; /* exchange schedules kept for every draft
	                        of the compile (Lowered.xcache); compile_graph
	                        makes one for its compiles where NULL */
} CompileOptions;

/* CompileReport.overlap: what became of the overlapped GEMM superstep */
typedef enum {
	COMPILE_OVERLAP_NONE,   /* no GEMM plan had it (or it was not asked) */
	COMPILE_OVERLAP_KEPT,   /* kept: fewer cycles than without */
	COMPILE_OVERLAP_DEARER, /* planned, but the program without it has
	                           no more cycles: that one kept */
	COMPILE_OVERLAP_FAILED  /* planned, but that compile failed (the
	                           reason in overlap_why): the one without
	                           kept */
} CompileOverlap;

typedef struct {
	uint64_t predicted_cycles;
	double compile_ms;
	uint32_t peak_tile_bytes; /* the most code + live data of a tile */
	uint32_t tiles_used;
	int plans;         /* plans placed: more than 1 only when placement's
	                     packing found tiles over that the memory model's
	                     bounds kept (docs/compiler.md, "Memory: what the
	                     planner knows"); = 1 + the packings below */
	int code_rounds;   /* drafts of the last plan: more than 1 when its
	                      GEMM plans were chosen again beside the code
	                      or data its lowering sized (compile.c,
	                      DRAFT_ROUNDS) */
	int refits;        /* of those drafts, the ones made again because
	                      the memory model found the last one's tiles over
	                      (place_measure), before placement */
	int own_refits;    /* the matmuls planned again within their own
	                      step's measure on those drafts, beside what the
	                      ladder gave up there (compile.c, own_again) */
	int packings;      /* of those drafts, the ones made again because
	                      placement found the last one's tiles over by the
	                      packing alone (alignment, the element rule) */
	int packed_beside; /* of those, the first: the matmuls planned again
	                      beside the buffers those tiles held (0: the
	                      ladder gave something up instead) */
	int packing_over;  /* then: the tiles over, of packing_tiles */
	uint32_t packing_tiles;
	char packing_first[400]; /* then: the first tile over, its bytes */
	uint32_t a_direct;       /* exchange steps lower_a_direct removed: a
	                            GEMM's A sent from its producer */
	uint32_t b_under;        /* B transfers run beside an earlier multiply
	                            (lower_b_under, after xsched_run) */
	uint32_t b_hosts;        /* the multiplies they run beside */
	uint32_t red_beside;     /* K-split reductions in two parts
	                            (lower_red_pipe), the second's partials
	                            beside the first's add (xsched_run) */
	uint32_t red_no_room;    /* such, the second's partials in a step of
	                            their own (no room beside the add) */
	char plan[2048];         /* each op's plan, "; " between them */
	/* the overlapped GEMM supersteps of the program kept, or with
	 * COMPILE_OVERLAP_DEARER of the one not kept (xsched_run,
	 * Lowered.ovl_*): beside the multiply, made plain for lack of room,
	 * made plain as cheaper so; and the whole program's choice, with
	 * the other program's predicted cycles (0: none) */
	uint32_t ovl_beside, ovl_no_room, ovl_dearer;
	CompileOverlap overlap;
	int side_by_side; /* 1: the compile without it ran in a thread beside
	                     the one with it (compile.c, Plain) */
	uint64_t overlap_other_cycles;
	char overlap_why[512];
	PlaceReport place; /* filled when placement runs; free with
	                      compile_report_free */
	/* a program that does not fit: its buffers, steps and code sizes as
	 * placement left them, as a package with no code or tensors (for a
	 * profile's memory views); NULL otherwise */
	Package *layout;
	Plan *kept_plan; /* with CompileOptions.keep_plan, the plan the
	                    program was lowered from (it points to the
	                    graph); NULL otherwise */
} CompileReport;

/* compile.c */
int compile_graph(const Graph *g, const CompileOptions *o, Package **out,
                  CompileReport *rep, Diag *d);
void compile_report_free(CompileReport *rep);

#endif

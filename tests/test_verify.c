/*
 * test_verify.c - the passes' verifiers catch what they promise (a
 * hand-built program breaking one rule at a time is refused, naming the
 * rule; the same program without the break passes), and the plan of a
 * small graph holds what the planner chose: each input's way in, the
 * first tiles, the weight balance's tiles, and a lowering that follows it.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "../src/codegen/codegen.h"
#include "../src/compile/compile.h"
#include "../src/lower/program.h"
#include "../src/place/place.h"

/* Two tiles, each with a source and a destination buffer, live for the
 * whole program; a compute step with one call per tile, then an exchange
 * of one transfer from tile 0 to tile 1. */
typedef struct {
	Lowered *l;
	int32_t src[2], dst[2], args[2];
	Step *x;
} Prog;

static void
prog(Prog *p)
{
	Lowered *l = p->l = lower_new(chip_default(), 2);
	for (uint32_t t = 0; t < 2; t++) {
		p->src[t] =
		    lower_buffer(l, t, 256, 8, REGION_ANY, 0, INT32_MAX, "src");
		p->dst[t] =
		    lower_buffer(l, t, 256, 8, REGION_ANY, 0, INT32_MAX, "dst");
	}
	Step *c = lower_step(l, STEP_COMPUTE, "add");
	for (uint32_t t = 0; t < 2; t++) {
		KernelCall *k = lower_call(l, c, t, "wcopy", "wcopy", 72);
		k->ref[0] = (BufRef){p->src[t], 0};
		k->ref[1] = (BufRef){p->dst[t], 0};
		k->nref = 2;
		k->args = (KernelArgs){KC_WCOPY, .u.wcopy = {8, 1}};
		p->args[t] = k->args_at;
	}
	p->x = lower_step(l, STEP_EXCHANGE, "move");
	Transfer *x = lower_transfer(p->x, 0, (BufRef){p->src[0], 0}, 16, 1);
	x->dst_tile[0] = 1;
	x->dst[0] = (BufRef){p->dst[1], 64};
}

/* lower_verify refuses p, naming `rule` in its message. */
static void
refused(Prog *p, const char *rule)
{
	Diag d;
	assert_int_not_equal(lower_verify(p->l, &d), 0);
	expect_in(d.msg, rule);
	expect_in(d.msg, "internal error");
	lower_free(p->l);
}

static void
test_lower_verify(void **state)
{
	(void)state;
	Prog p;
	Diag d;
	prog(&p);
	assert_int_equal(lower_verify(p.l, &d), 0);
	lower_free(p.l);

	prog(&p); /* a second call on tile 1 in the compute step */
	KernelCall *k = lower_call(p.l, &p.l->step[0], 1, "wcopy", "wcopy", 72);
	k->args = (KernelArgs){KC_WCOPY, .u.wcopy = {8, 1}};
	refused(&p, "a second call on the tile");

	prog(&p); /* the transfer runs past its destination */
	p.x->xfer[0].dst[0].offset = 200;
	refused(&p, "bytes 200..264");

	prog(&p); /* the source lives only in step 0 */
	p.l->buf[p.src[0]].last = 0;
	refused(&p, "used in step 1");

	prog(&p); /* the destination is on the other tile */
	p.x->xfer[0].dst_tile[0] = 0;
	refused(&p, "is on tile 1, not 0");

	prog(&p); /* an exchange step with a call */
	lower_call(p.l, p.x, 0, "wcopy", "wcopy", 72);
	refused(&p, "1 calls, 1 transfers");

	prog(&p); /* a buffer on a tile the program does not have */
	lower_buffer(p.l, 5, 8, 8, REGION_ANY, 0, INT32_MAX, "stray");
	refused(&p, "on tile 5 of 2");

	prog(&p); /* an argument block that another buffer could share
	           * after its call */
	p.l->buf[p.args[1]].last = 0;
	refused(&p, "not the whole program");
}

static void
test_schedule_verify(void **state)
{
	(void)state;
	Prog p;
	Diag d;
	prog(&p);
	/* a second transfer from tile 0 to tile 1 */
	Transfer *x = lower_transfer(p.x, 0, (BufRef){p.src[0], 64}, 8, 1);
	x->dst_tile[0] = 1;
	x->dst[0] = (BufRef){p.dst[1], 0};
	assert_int_equal(xsched_run(p.l, &d), 0);
	assert_int_equal(lower_verify_schedule(p.l, &d), 0);
	Transfer *a = &p.x->xfer[0], *b = &p.x->xfer[1];
	uint64_t a_start = a->start, a_ptr = a->ptr_at[0], a_mux = a->mux_at[0],
	         a_off = a->off_at[0], b_ptr = b->ptr_at[0];

	/* both sent at once from tile 0: a moved to b's start (its writes
	 * and controls moved with it, the step longer by as much, so that
	 * only the overlap is wrong) */
	uint64_t fwd = b->start - a->start;
	p.x->cycles += fwd;
	a->start += fwd;
	a->ptr_at[0] += fwd;
	a->mux_at[0] += fwd;
	a->off_at[0] += fwd;
	assert_int_not_equal(lower_verify_schedule(p.l, &d), 0);
	expect_in(d.msg, "tile 0: sends of transfers");
	a->start = a_start, a->ptr_at[0] = a_ptr, a->mux_at[0] = a_mux,
	a->off_at[0] = a_off;
	p.x->cycles -= fwd;

	/* a mux switched a cycle late */
	a->mux_at[0]++;
	assert_int_not_equal(lower_verify_schedule(p.l, &d), 0);
	expect_in(d.msg, "written");
	a->mux_at[0] = a_mux;

	/* two controls of tile 1 in one cycle: b's pointer at a's mux-off */
	b->ptr_at[0] = a_off;
	assert_int_not_equal(lower_verify_schedule(p.l, &d), 0);
	expect_in(d.msg, "tile 1: controls");
	b->ptr_at[0] = b_ptr;

	/* the step ends a cycle before its last word has landed (the
	 * scheduler ends it exactly then) */
	uint64_t cycles = p.x->cycles;
	p.x->cycles = cycles - 1;
	assert_int_not_equal(lower_verify_schedule(p.l, &d), 0);
	p.x->cycles = cycles;

	assert_int_equal(lower_verify_schedule(p.l, &d), 0);
	lower_free(p.l);
}

static void
test_place_verify(void **state)
{
	(void)state;
	Prog p;
	Diag d;
	prog(&p);
	assert_int_equal(place_buffers(p.l, NULL, NULL, &d), 0);
	assert_int_equal(place_verify(p.l, NULL, &d), 0);
	Buffer *s0 = &p.l->buf[p.src[0]], *d0 = &p.l->buf[p.dst[0]];
	uint32_t addr = d0->addr;
	d0->addr = s0->addr + 8; /* overlaps, both live throughout */
	assert_int_not_equal(place_verify(p.l, NULL, &d), 0);
	expect_in(d.msg, "overlaps");
	d0->addr = addr;
	s0->addr += 4; /* not 8-aligned */
	assert_int_not_equal(place_verify(p.l, NULL, &d), 0);
	expect_in(d.msg, "not aligned");
	s0->addr -= 4;
	uint32_t code_end[2] = {s0->addr + 16, chip_default()->mem_base};
	assert_int_not_equal(place_verify(p.l, code_end, &d), 0);
	expect_in(d.msg, "outside");
	lower_free(p.l);
}

/* codegen_verify: a tile's program as placement assumed it. */
static void
test_codegen_verify(void **state)
{
	(void)state;
	Prog p;
	Diag d;
	prog(&p);
	int32_t save[2];
	for (uint32_t t = 0; t < 2; t++)
		save[t] = lower_buffer(p.l, t, 8, 8, REGION_ANY, 0, INT32_MAX,
		                       "return address");
	assert_int_equal(xsched_run(p.l, &d), 0);
	lower_index(p.l);
	const Chip *c = chip_default();
	uint32_t code_end[2];
	for (uint32_t t = 0; t < 2; t++)
		code_end[t] = c->mem_base + codegen_size(p.l, t, NULL);
	assert_int_equal(place_buffers(p.l, code_end, NULL, &d), 0);
	TileCode tc;
	assert_int_equal(
	    codegen_tile(p.l, NULL, 1, c->mem_base, save[1], &tc, &d), 0);
	assert_int_equal(tc.ndata, 1);
	assert_int_equal(codegen_verify(p.l, &tc, code_end[1], &d), 0);
	/* placed as if the program were a word shorter */
	assert_int_not_equal(codegen_verify(p.l, &tc, code_end[1] - 4, &d), 0);
	expect_in(d.msg, "placed as ending at");
	/* an argument block written outside its buffer */
	tc.data[0].addr += 8;
	assert_int_not_equal(codegen_verify(p.l, &tc, code_end[1], &d), 0);
	expect_in(d.msg, "are not buffer");
	codegen_free(&tc);
	lower_free(p.l);
}

/* A matmul whose B is a weight, a bias added to it, and the plan's
 * choices for them. */
static void
test_plan(void **state)
{
	(void)state;
	static const char text[] = "input a f16 [32, 48]\n"
	                           "weight w f16 [48, 64]\n"
	                           "weight bias f16 [64]\n"
	                           "c = matmul a w\n"
	                           "y = add c bias\n"
	                           "t = transpose y [1, 0]\n"
	                           "output t\n";
	Graph *g;
	Diag errs[GRAPH_MAX_ERRORS], d;
	int nerr;
	assert_int_equal(graph_parse(text, strlen(text), "t", &g, errs, &nerr),
	                 0);
	Plan *plan;
	PlanOptions o = {.weight_copies = 1};
	assert_int_equal(plan_graph(g, chip_default(), 16, &o, &plan, &d), 0);
	assert_int_equal(plan_verify(plan, &d), 0);
	assert_int_equal(plan->nop, 3);
	const OpPlan *mm = &plan->op[0], *add = &plan->op[1],
	             *tr = &plan->op[2];
	/* both operands are new: the host writes them where the GEMM
	 * wants them; nothing to move, nothing to price. A (row-major) is
	 * at home there; B's packed layout only this GEMM reads, so it is a
	 * copy and B's home is left to a later reader */
	assert_int_equal(mm->in[0].kind, CONV_HOST);
	assert_int_equal(mm->in[1].kind, CONV_HOST_COPY);
	assert_int_equal(mm->in[0].cycles, 0);
	assert_true(mm->gemm.pk * mm->gemm.pm * mm->gemm.pn <= 16);
	assert_int_equal(mm->gemm.m, 32);
	assert_int_equal(mm->gemm.n, 64);
	assert_int_equal(mm->gemm.k, 48);
	/* the sum runs on C's pieces; the bias, new, is written by the host
	 * next to each */
	assert_int_equal(add->in[0].kind, CONV_NONE);
	assert_int_equal(add->in[1].kind, CONV_HOST);
	/* the transpose moves the last axis: on the device */
	assert_int_equal(tr->in[0].kind, CONV_TRANSPOSE);
	assert_true(tr->tile0 < 16);
	assert_true(strstr(plan->desc, "gemm 32x64x48 f16") != NULL);

	/* the plan lowered: the program passes its verifier, its tensor
	 * map has the input, the two weights and the output */
	Lowered *l;
	assert_int_equal(lower_plan(plan, &l, &d), 0);
	assert_int_equal(lower_verify(l, &d), 0);
	assert_int_equal(l->ntp, 4);
	assert_true(l->tiles <= 16);
	lower_free(l);

	/* a plan that refuses: f8 on an ipu2 chip */
	static const char f8[] = "input a f8_f143*2^0 [8, 8]\n"
	                         "input b f8_f143*2^0 [8, 8]\n"
	                         "c = matmul a b\n"
	                         "output c\n";
	Graph *g8;
	assert_int_equal(graph_parse(f8, strlen(f8), "t", &g8, errs, &nerr), 0);
	Plan *p8;
	assert_int_not_equal(
	    plan_graph(g8, chip_by_name("gc200"), 16, &o, &p8, &d), 0);
	expect_in(d.msg, "f8 needs an ipu21 chip");
	assert_null(p8);
	graph_free(g8);
	plan_free(plan);
	graph_free(g);
}

/* ipu compile --dump prints every pass's result before the summary. */
static void
test_dump(void **state)
{
	(void)state;
	char out[1 << 16];
	write_text("mm.graph", "input a f32 [8, 16]\n"
	                       "weight w f32 [16, 16]\n"
	                       "c = matmul a w\n"
	                       "output c\n");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "compile mm.graph -o mm.ipk --tiles 4 "
	                         "--dump=plan,lower,sched,place"),
	                 0);
	expect_in(out, "# plan: 4 tiles");
	expect_in(out, "op 0 matmul c:");
	expect_in(out, "# lowered:");
	expect_in(out, "\"C block\"");
	expect_in(out, "# schedule:");
	expect_in(out, "# placement:");
	expect_in(out, "wrote");
	assert_int_equal(
	    run_ipu(out, sizeof out,
	            "compile mm.graph -o mm2.ipk --dump=plan,bogus"),
	    2);
	expect_in(out, "no pass 'bogus'");
}

static int
setup(void **state)
{
	(void)state;
	return test_dir_make("verify");
}

static int
teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lower_verify),
	    cmocka_unit_test(test_schedule_verify),
	    cmocka_unit_test(test_place_verify),
	    cmocka_unit_test(test_codegen_verify),
	    cmocka_unit_test(test_plan),
	    cmocka_unit_test(test_dump),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

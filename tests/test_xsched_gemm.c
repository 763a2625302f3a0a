/*
 * test_xsched_gemm.c - the exchange scheduler's block mode (xsched.c,
 * "Blocks") on a real GEMM's exchanges: the 4096^3 f16 plan's supersteps,
 * each scheduled as it is today and again beside the five workers' panel
 * windows of docs/bench-gemm.md ("The third step": panels of 2,967
 * cycles, a panel block of about 45), checked by the verifier; it prints
 * each exchange's length as today, in blocks without windows and beside
 * the windows (docs/bench-gemm.md records them).
 * Label `long` (a few seconds of planning and scheduling 1456 tiles).
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "../src/lower/program.h"

enum { PANEL = 2967, PANEL_BLOCK = 45 };

static Lowered *
lowered_gemm(void)
{
	Diag d;
	Graph *g = graph_new();
	Shape s = {2, {4096, 4096}};
	ElemType e = {DT_F16, 0};
	int32_t a = graph_input(g, "a", e, &s, &d);
	int32_t b = graph_input(g, "b", e, &s, &d);
	int32_t c = graph_matmul(g, a, b, 0, "c", &d);
	assert_int_equal(graph_mark_output(g, c, &d), 0);
	PlanOptions po = {0};
	Plan *p = NULL;
	if (plan_graph(g, chip_default(), chip_default()->tiles, &po, &p, &d))
		fail_msg("%s", d.msg);
	Lowered *l = NULL;
	if (lower_plan(p, &l, &d))
		fail_msg("%s", d.msg);
	print_message("plan: %s\n", p->desc);
	plan_free(p);
	graph_free(g);
	return l;
}

static void
test_gemm_4096_f16_blocks(void **state)
{
	(void)state;
	Diag d;
	Lowered *plain = lowered_gemm(), *l = lowered_gemm(),
	        *open = lowered_gemm();
	assert_int_equal(xsched_run(plain, &d), 0);
	/* every exchange beside panel windows [p P - L, p P), cycle 0 being
	 * the first of the supervisor's slots after panel block 0 */
	XWindow win[64];
	for (int p = 0; p < 64; p++)
		win[p] = (XWindow){(uint64_t)(p + 1) * PANEL - PANEL_BLOCK,
		                   PANEL_BLOCK};
	int n = 0;
	/* the supersteps' chunk exchanges (the reduction's runs beside no
	 * workers) */
	for (int i = 0; i < l->nstep; i++)
		if (l->step[i].kind == STEP_EXCHANGE && l->step[i].nxfer &&
		    strstr(l->step[i].what, "chunks")) {
			lower_step_blocks(&l->step[i], XS_BLOCK, win, 64);
			lower_step_blocks(&open->step[i], XS_BLOCK, NULL, 0);
			n++;
		}
	assert_true(n > 0);
	if (xsched_run(l, &d))
		fail_msg("%s", d.msg);
	if (lower_verify_schedule(l, &d) || xsched_run(open, &d) ||
	    lower_verify_schedule(open, &d))
		fail_msg("%s", d.msg);
	for (int i = 0; i < l->nstep; i++) {
		const Step *s = &l->step[i], *q = &plain->step[i];
		if (!s->block)
			continue;
		/* the same words go, split or not */
		uint64_t words = 0, want = 0;
		for (int k = 0; k < s->nxfer; k++)
			words += (uint64_t)s->xfer[k].words * s->xfer[k].ndst;
		for (int k = 0; k < q->nxfer; k++)
			want += (uint64_t)q->xfer[k].words * q->xfer[k].ndst;
		assert_int_equal(words, want);
		uint64_t inside = 0;
		for (int p = 0; p < 64; p++)
			inside += win[p].at < s->cycles;
		print_message("step %d (%s): %d transfers -> %d, %llu cycles "
		              "-> %llu in blocks, %llu beside %llu panel "
		              "windows\n",
		              i, s->what, q->nxfer, s->nxfer,
		              (unsigned long long)q->cycles,
		              (unsigned long long)open->step[i].cycles,
		              (unsigned long long)s->cycles,
		              (unsigned long long)inside);
		assert_true(s->cycles >= q->cycles);
	}
	lower_free(plain);
	lower_free(open);
	lower_free(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gemm_4096_f16_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_timing.c - the issue model: round-robin slots, runall + sync LOCAL,
 * rpt, control flow, CSR reads, and the timing rules of docs/fidelity.md
 * (supervisor hazards, launch delay, transcendentals) at the nominal
 * profile and at its bounds. Expected cycle counts are derived by hand
 * from the model in src/sim/sim.h (comments show the arithmetic; D, B, P,
 * R, T name the rule values sup-dep, sup-branch, sup-put, runall and an
 * instruction's turns).
 */
#include "support.h"

#include <string.h>

#define CO 0x80000000u /* co-issue bit: first word of a bundle */

typedef struct {
	uint32_t w[256];
	int n;
} Prog;

static void
put(Prog *p, uint32_t w)
{
	p->w[p->n++] = w;
}

static void
align8(Prog *p)
{
	if (p->n % 2)
		put(p, enc("or_mmmn_zi", 3, 15, 15, 0)); /* nop */
}

/* { nop ; fnop } */
static void
nop_bundle(Prog *p)
{
	put(p, CO | enc("or_mmmn_zi", 3, 15, 15, 0));
	put(p, enc("or_aaan_zi", 3, 15, 15, 0));
}

static uint32_t
addr_of(int word)
{
	return chip_default()->mem_base + 4u * (uint32_t)word;
}

/* A worker body: { rpt count, body-1 ; fnop }, `body` nop bundles, exitz. */
static void
worker_rpt(Prog *p, int count, int body)
{
	align8(p);
	put(p, CO | enc("rpt_mmmn_zi_zi", 2, count, body - 1));
	put(p, enc("or_aaan_zi", 3, 15, 15, 0));
	for (int i = 0; i < body; i++)
		nop_bundle(p);
	put(p, enc("exitz_mmmn", 1, 15));
}

static Tile *
run_on(const Chip *c, Prog *p, uint32_t entry, RunStatus *st)
{
	Tile *t = tile_new(c, 0);
	assert_int_equal(tile_write(t, c->mem_base, p->w, 4u * p->n), 0);
	tile_start(t, entry);
	*st = tile_run(t, 10000000);
	if (*st == RUN_FAULT) {
		char buf[512];
		tile_format_fault(t, buf, sizeof buf);
		fail_msg("fault: %s", buf);
	}
	return t;
}

static Tile *
run_prog(Prog *p, uint32_t entry, RunStatus *st)
{
	return run_on(chip_default(), p, entry, st);
}

static void
test_supervisor_returns_status(void **state)
{
	(void)state;
	Prog p = {0};
	put(&p, enc("setzi_mmmn_zi", 2, 0, 1234));
	put(&p, enc("br_mmmn", 1, 10));
	RunStatus st;
	Tile *t = run_prog(&p, addr_of(0), &st);
	assert_int_equal(st, RUN_DONE);
	assert_int_equal(t->ctx[0].m[0], 1234);
	/* The supervisor owns all six slots: one instruction per cycle. */
	assert_int_equal(t->cycle, 2);
	tile_free(t);
}

/*
 * Six workers, each { rpt N } over B nop bundles, launched by runall and
 * awaited with sync LOCAL.
 *   cycle 0 setzi $m1 (slot 0); runall reads $m1: it issues at D;
 *   the workers start R cycles later: worker w first issues at the first
 *   cycle >= D + R in slot w, so their first turns fill D + R .. D + R + 5
 *   (at nominal w0 at 12 .. w5 at 17); each issues 1 + N*B + 1 times, 6
 *   cycles apart, so the last exits at D + R + 5 + 6*(N*B + 1).
 *   The sync issues in the first slot a worker frees, and leaves at last
 *   exit + 6 (sync-local), where br $lr issues; the run ends one cycle
 *   later.
 */
static void
runall_sync(TimingBound b)
{
	const int N = 10, NB = 3;
	const Chip *c = profile_chip(b);
	uint64_t D = chip_rule(c, TIMING_SUP_DEP),
	         R = chip_rule(c, TIMING_RUNALL);
	Prog p = {0};
	put(&p, enc("setzi_mmmn_zi", 2, 1, 0)); /* patched below */
	put(&p, enc("runall_mmmn_zi", 3, 1, 15, 0));
	put(&p, enc("sync_mmmn_zi", 1, 2));
	put(&p, enc("br_mmmn", 1, 10));
	align8(&p);
	int entry = p.n;
	worker_rpt(&p, N, NB);
	p.w[0] = enc("setzi_mmmn_zi", 2, 1, (int32_t)addr_of(entry));
	RunStatus st;
	Tile *t = run_on(c, &p, addr_of(0), &st);
	assert_int_equal(st, RUN_DONE);
	/* the workers' first turns fill cycles D + R .. D + R + 5 */
	uint64_t last_exit = D + R + 5 + 6 * (uint64_t)(N * NB + 1);
	assert_int_equal(t->last_exit, last_exit);
	assert_int_equal(t->cycle,
	                 last_exit + chip_rule(c, TIMING_SYNC_LOCAL) + 1);
	/* 6 workers x (N*B + 2) issues + 4 supervisor instructions */
	assert_int_equal(t->bundles, 6 * (N * NB + 2) + 4);
	tile_free(t);
}

static void
test_runall_sync_timing(void **state)
{
	(void)state;
	runall_sync(TIMING_NOMINAL);
	runall_sync(TIMING_FAST);
	runall_sync(TIMING_SLOW);
	/* nominal, by hand: D = 6, R = 6, the last worker at 17 */
	const Chip *c = chip_default();
	assert_int_equal(chip_rule(c, TIMING_SUP_DEP), 6);
	assert_int_equal(chip_rule(c, TIMING_RUNALL), 6);
}

/* One worker alone also issues once every 6 cycles; the supervisor keeps
 * the other five slots. */
static void
test_single_worker_rate(void **state)
{
	(void)state;
	const int N = 20;
	Prog p = {0};
	put(&p, enc("setzi_mmmn_zi", 2, 1, 0));
	put(&p, enc("run_mmmn_zi", 3, 1, 15, 0));
	put(&p, enc("sync_mmmn_zi", 1, 2));
	put(&p, enc("br_mmmn", 1, 10));
	align8(&p);
	int entry = p.n;
	worker_rpt(&p, N, 1);
	p.w[0] = enc("setzi_mmmn_zi", 2, 1, (int32_t)addr_of(entry));
	RunStatus st;
	Tile *t = run_prog(&p, addr_of(0), &st);
	assert_int_equal(st, RUN_DONE);
	/* run waits for $m1 until cycle 6 and takes worker 0, which starts
	 * 6 cycles later: slot 0 at 12; it issues N + 2 times, the exitz at
	 * 12 + 6*(N + 1). */
	assert_int_equal(t->last_exit, 12 + 6 * (uint64_t)(N + 1));
	/* sync issued at cycle 7 (slot 1 is the supervisor's), then waits. */
	assert_int_equal(t->cycle, t->last_exit + 6 + 1);
	tile_free(t);
}

/* A supervisor instruction that reads a register written just before
 * waits for it: setzi $m1 at 0; add $m2, $m1, 1 at D; br $lr at D + 1;
 * the run ends at D + 2. An independent instruction does not wait:
 * setzi $m1 at 0, setzi $m2 at 1, add $m3, $m2, $m2 at 1 + D. */
static void
sup_dep(TimingBound b)
{
	const Chip *c = profile_chip(b);
	uint64_t D = chip_rule(c, TIMING_SUP_DEP);
	Prog p = {0};
	put(&p, enc("setzi_mmmn_zi", 2, 1, 41));
	put(&p, enc("add_mmmn_zi", 3, 2, 1, 1));
	put(&p, enc("br_mmmn", 1, 10));
	RunStatus st;
	Tile *t = run_on(c, &p, addr_of(0), &st);
	assert_int_equal(st, RUN_DONE);
	assert_int_equal(t->ctx[0].m[2], 42);
	assert_int_equal(t->cycle, D + 2);
	tile_free(t);
	p.n = 0;
	put(&p, enc("setzi_mmmn_zi", 2, 1, 1));
	put(&p, enc("setzi_mmmn_zi", 2, 2, 2));
	put(&p, enc("add_mmmn", 3, 3, 2, 2));
	put(&p, enc("br_mmmn", 1, 10));
	t = run_on(c, &p, addr_of(0), &st);
	assert_int_equal(t->ctx[0].m[3], 4);
	assert_int_equal(t->cycle, 1 + D + 2);
	tile_free(t);
	/* through memory: setzi $m3 (the address) at 0, setzi $m1 at 1;
	 * st32 reads both, at 1 + D; ld32 $m2 at 2 + D; the add reads $m2
	 * at 2 + 2D; br at 3 + 2D; end 4 + 2D */
	p.n = 0;
	put(&p, enc("setzi_mmmn_zi", 2, 3, 0x90000));
	put(&p, enc("setzi_mmmn_zi", 2, 1, 7));
	put(&p, enc("st32_mmmn_zi", 4, 1, 3, 15, 0));
	put(&p, enc("ld32_mmmn_zi", 4, 2, 3, 15, 0));
	put(&p, enc("add_mmmn_zi", 3, 0, 2, 1));
	put(&p, enc("br_mmmn", 1, 10));
	t = run_on(c, &p, addr_of(0), &st);
	assert_int_equal(st, RUN_DONE);
	assert_int_equal(t->ctx[0].m[0], 8);
	assert_int_equal(t->cycle, 2 * D + 4);
	tile_free(t);
}

static void
test_sup_dependency(void **state)
{
	(void)state;
	assert_int_equal(chip_rule(chip_default(), TIMING_SUP_DEP), 6);
	sup_dep(TIMING_NOMINAL); /* 6: add at 6, end at 8 */
	sup_dep(TIMING_FAST);
	sup_dep(TIMING_SLOW);
}

/*
 * Taken branches hold the supervisor's next issue back B cycles; a branch
 * not taken costs one. bri at 0, its target setzi at B, br $lr at B + 1,
 * end B + 2. brnz $mzero (never taken) at 0, setzi at 1, br at 2, end 3.
 * A brnzdec loop over $m2 = 3: setzi at 0, brnzdec at D (waits for $m2),
 * then every max(B, D) (the taken branch, and the count it decrements)
 * three more times, the last not taken; br one later.
 */
static void
sup_branch(TimingBound b)
{
	const Chip *c = profile_chip(b);
	uint64_t B = chip_rule(c, TIMING_SUP_BRANCH),
	         D = chip_rule(c, TIMING_SUP_DEP);
	Prog p = {0};
	put(&p, enc("bri_mmmn_zi", 1, (int32_t)addr_of(2)));
	put(&p, enc("setzi_mmmn_zi", 2, 0, 99)); /* skipped */
	put(&p, enc("setzi_mmmn_zi", 2, 1, 5));
	put(&p, enc("br_mmmn", 1, 10));
	RunStatus st;
	Tile *t = run_on(c, &p, addr_of(0), &st);
	assert_int_equal(st, RUN_DONE);
	assert_int_equal(t->ctx[0].m[0], 0);
	assert_int_equal(t->cycle, B + 2);
	tile_free(t);

	p.n = 0;
	put(&p, enc("brnz_mmmn_zi", 2, 15, (int32_t)addr_of(3)));
	put(&p, enc("setzi_mmmn_zi", 2, 1, 5));
	put(&p, enc("br_mmmn", 1, 10));
	t = run_on(c, &p, addr_of(0), &st);
	assert_int_equal(t->ctx[0].m[1], 5);
	assert_int_equal(t->cycle, 3);
	tile_free(t);

	p.n = 0;
	put(&p, enc("setzi_mmmn_zi", 2, 2, 3));
	put(&p, enc("brnzdec_mmmn_zi", 2, 2, (int32_t)addr_of(1)));
	put(&p, enc("br_mmmn", 1, 10));
	t = run_on(c, &p, addr_of(0), &st);
	uint64_t step = B > D ? B : D;
	assert_int_equal(t->cycle, D + 3 * step + 2);
	tile_free(t);
}

static void
test_sup_branch(void **state)
{
	(void)state;
	assert_int_equal(chip_rule(chip_default(), TIMING_SUP_BRANCH), 6);
	sup_branch(TIMING_NOMINAL); /* bri: end at 8; loop: 6+18+2 = 26 */
	sup_branch(TIMING_FAST);
	sup_branch(TIMING_SLOW);
}

/* A CSR write holds the next issue back P cycles: put $CCCSLOAD, $mzero
 * at 0, setzi at P, br $lr at P + 1, end P + 2. A CSR read does not:
 * get at 0, setzi at 1, br at 2, end 3. */
static void
sup_put(TimingBound b)
{
	const Chip *c = profile_chip(b);
	uint64_t P = chip_rule(c, TIMING_SUP_PUT);
	Prog p = {0};
	put(&p, enc("put_mmmn_zi", 2, 0x50, 15));
	put(&p, enc("setzi_mmmn_zi", 2, 1, 5));
	put(&p, enc("br_mmmn", 1, 10));
	RunStatus st;
	Tile *t = run_on(c, &p, addr_of(0), &st);
	assert_int_equal(st, RUN_DONE);
	assert_int_equal(t->cycle, P + 2);
	tile_free(t);
	p.n = 0;
	put(&p, enc("get_mmmn_zi", 2, 3, 0x50));
	put(&p, enc("setzi_mmmn_zi", 2, 1, 5));
	put(&p, enc("br_mmmn", 1, 10));
	t = run_on(c, &p, addr_of(0), &st);
	assert_int_equal(t->cycle, 3);
	tile_free(t);
}

static void
test_sup_put(void **state)
{
	(void)state;
	assert_int_equal(chip_rule(chip_default(), TIMING_SUP_PUT), 6);
	sup_put(TIMING_NOMINAL); /* end at 8 */
	sup_put(TIMING_FAST);    /* 1: no stall, end at 3 */
	sup_put(TIMING_SLOW);
}

/*
 * Each transcendental keeps its worker from issuing for T turns: worker 0
 * (started at cycle 0 by the host) issues { nop ; OP $a0, $a1 } at 0, its
 * exitz at 6T. Worker 1 beside it, running { nop ; fnop } then exitz,
 * keeps its own pace: exits at 1 + 6.
 */
static void
transcendentals(TimingBound b)
{
	const Chip *c = profile_chip(b);
	int checked = 0;
	for (int r = 0; r < TIMING_RULES; r++) {
		const TimingRuleInfo *ri = timing_rule(r);
		if (!ri->mnemonic[0])
			continue;
		const int16_t *rows;
		assert_true(isa_rows_by_mnemonic(ri->mnemonic, &rows) >= 1);
		uint32_t w[6];
		w[0] = CO | enc("or_mmmn_zi", 3, 15, 15, 0);
		const InsnDesc *d = isa_row(rows[0]);
		w[1] = d->nops == 3 ? enc(d->variant, 3, 0, 2, 4)
		                    : enc(d->variant, 2, 0, 2);
		w[2] = enc("exitz_mmmn", 1, 15);
		w[3] = 0;
		w[4] = CO | enc("or_mmmn_zi", 3, 15, 15, 0); /* worker 1 */
		w[5] = enc("or_aaan_zi", 3, 15, 15, 0);
		Tile *t = tile_new(c, 0);
		assert_int_equal(tile_write(t, c->mem_base, w, sizeof w), 0);
		uint32_t exitz = enc("exitz_mmmn", 1, 15);
		assert_int_equal(tile_write(t, c->mem_base + 24, &exitz, 4), 0);
		t->ctx[1].a[2] = t->ctx[1].a[4] = 0x3f800000; /* 1.0f */
		assert_int_equal(tile_start_worker(t, 0, c->mem_base, 0), 0);
		assert_int_equal(tile_start_worker(t, 1, c->mem_base + 16, 0),
		                 0);
		t->ctx[1].a[2] = t->ctx[1].a[4] = 0x3f800000;
		RunStatus st = tile_run(t, 100000);
		assert_int_equal(st, RUN_DONE);
		uint64_t T = chip_rule(c, (TimingRule)r);
		assert_int_equal(T, ri->value[b]);
		assert_int_equal(t->ctx[1].exit_status, 1);
		/* worker 0 exits last unless T = 1 */
		assert_int_equal(t->last_exit, T > 1 ? 6 * T : 7);
		tile_free(t);
		checked++;
	}
	assert_int_equal(checked, 16);
}

static void
test_transcendentals(void **state)
{
	(void)state;
	/* nominal, by hand from docs/fidelity.md: f32exp 3 turns, f32sigm 5 */
	const Chip *c = chip_default();
	assert_int_equal(chip_rule(c, TIMING_F32EXP), 3);
	assert_int_equal(chip_rule(c, TIMING_F32SIGM), 5);
	assert_int_equal(chip_rule(c, TIMING_F16V2TANH), 1);
	transcendentals(TIMING_NOMINAL);
	transcendentals(TIMING_FAST);
	transcendentals(TIMING_SLOW);
}

/* rpt with a count of 0 skips its body. */
static void
test_rpt_zero_skips(void **state)
{
	(void)state;
	Prog p = {0};
	worker_rpt(&p, 0, 2);
	RunStatus st;
	Tile *t = run_words(p.w, p.n, 0, 0, 100000, &st);
	assert_int_equal(st, RUN_DONE);
	assert_int_equal(t->bundles, 2); /* rpt bundle + exitz */
	tile_free(t);
}

/* Control flow: a countdown loop with brnzdec, call/br. */
static void
test_branches(void **state)
{
	(void)state;
	Prog p = {0};
	uint32_t base = chip_default()->mem_base;
	put(&p, enc("setzi_mmmn_zi", 2, 2, 4)); /* m2 = 4 */
	put(&p, enc("setzi_mmmn_zi", 2, 3, 0)); /* m3 = 0 */
	int loop = p.n;
	put(&p, enc("add_mmmn_zi", 3, 3, 3, 10)); /* m3 += 10 */
	put(&p, enc("brnzdec_mmmn_zi", 2, 2, (int32_t)(base + 4 * loop)));
	/* 5 iterations: m3 = 50, m2 = 0 */
	put(&p, enc("call_mmmn_zi", 2, 9, 0)); /* patched: call sub */
	int after = p.n;
	put(&p, enc("brz_mmmn_zi", 2, 2, 0));     /* patched: to done */
	put(&p, enc("setzi_mmmn_zi", 2, 3, 999)); /* skipped */
	int done = p.n;
	put(&p, enc("or_mmmn_zi", 3, 0, 3, 0)); /* m0 = m3 */
	put(&p, enc("br_mmmn", 1, 10));
	int sub = p.n;
	put(&p, enc("add_mmmn_zi", 3, 3, 3, 1)); /* m3 += 1 */
	put(&p, enc("br_mmmn", 1, 9));
	p.w[after - 1] = enc("call_mmmn_zi", 2, 9, (int32_t)(base + 4 * sub));
	p.w[after] = enc("brz_mmmn_zi", 2, 2, (int32_t)(base + 4 * done));
	RunStatus st;
	Tile *t = run_prog(&p, base, &st);
	assert_int_equal(st, RUN_DONE);
	assert_int_equal(t->ctx[0].m[0], 51);
	assert_int_equal(t->ctx[0].m[9], base + 4 * after);
	tile_free(t);
}

/* $COUNT_L read by a worker advances by 6 per issue of that worker. */
static void
test_count_csr(void **state)
{
	(void)state;
	Prog p = {0};
	put(&p, enc("get_mmmn_zi", 2, 1, 0x60));
	put(&p, enc("get_mmmn_zi", 2, 2, 0x60));
	put(&p, enc("get_mmmn_zi", 2, 3, 0x01)); /* $WSR: worker id */
	put(&p, enc("exitz_mmmn", 1, 15));
	RunStatus st;
	Tile *t = run_words(p.w, p.n, 3, 0, 100000, &st);
	assert_int_equal(st, RUN_DONE);
	assert_int_equal(t->ctx[4].m[1], 3); /* worker 3's first turn: slot 3 */
	assert_int_equal(t->ctx[4].m[2] - t->ctx[4].m[1], 6);
	assert_int_equal(t->ctx[4].m[3], 3);
	tile_free(t);
}

static void
expect_fault(const uint32_t *w, int n, int worker, FaultType type,
             const char *needle)
{
	RunStatus st;
	Tile *t = run_words(w, n, worker, 0, 100000, &st);
	assert_int_equal(st, RUN_FAULT);
	assert_int_equal(t->fault.type, type);
	char buf[512];
	tile_format_fault(t, buf, sizeof buf);
	if (!strstr(buf, needle))
		fail_msg("'%s' not in '%s'", needle, buf);
	tile_free(t);
}

static void
test_control_faults(void **state)
{
	(void)state;
	uint32_t w[4];
	/* a worker-only instruction in the supervisor */
	w[0] = enc("exitz_mmmn", 1, 15);
	expect_fault(w, 1, -1, FAULT_INVALID_INSTR, "supervisor");
	/* a supervisor-only instruction in a worker */
	w[0] = enc("sync_mmmn_zi", 1, 2);
	expect_fault(w, 1, 2, FAULT_INVALID_INSTR, "worker 2");
	/* an undecodable word */
	w[0] = 0x6fffffff; /* no row matches (0x7... is send) */
	expect_fault(w, 1, 0, FAULT_INVALID_INSTR, "not a valid ipu21");
	/* branch to data memory above the executable limit */
	w[0] = enc("bri_mmmn_zi", 1, 0x90000);
	expect_fault(w, 1, 0, FAULT_INVALID_PC, "0x90000");
	/* a bundle whose halves are in the wrong lanes */
	w[0] = CO | enc("or_aaan_zi", 3, 15, 15, 0);
	w[1] = enc("or_mmmn_zi", 3, 15, 15, 0);
	expect_fault(w, 2, 0, FAULT_INVALID_INSTR, "{main; aux}");
	/* a solo instruction inside a rpt body */
	w[0] = CO | enc("rpt_mmmn_zi_zi", 2, 2, 0);
	w[1] = enc("or_aaan_zi", 3, 15, 15, 0);
	w[2] = enc("or_mmmn_zi", 3, 15, 15, 0);
	w[3] = enc("exitz_mmmn", 1, 15);
	expect_fault(w, 4, 0, FAULT_INVALID_INSTR, "rpt body");
	/* trap */
	w[0] = enc("trap_mmmn_zi", 1, 5);
	expect_fault(w, 1, -1, FAULT_PBRK0, "trap 5");
	/* exchange on a single tile */
	w[0] = enc("send_mmmn_zi", 3, 0, 0, 1);
	expect_fault(w, 1, -1, FAULT_INVALID_OP, "exchange");
}

/* Profiles: bounds for every rule, per-rule overrides left to right,
 * clear refusals, and interned timed chips. */
static void
test_profile_parse(void **state)
{
	(void)state;
	Timing t;
	Diag d;
	int dep = timing_rule_by_name("sup-dep");
	int exp = timing_rule_by_name("f32exp");
	assert_true(dep >= 0 && exp >= 0);
	assert_int_equal(timing_rule_by_mnemonic("f32exp"), exp);
	assert_int_equal(timing_rule_by_mnemonic("f32add"), -1);
	assert_int_equal(timing_parse("nominal", &t, &d), IPU_OK);
	assert_true(timing_is_nominal(&t));
	assert_int_equal(t.v[dep], 6);
	assert_int_equal(timing_parse("slow", &t, &d), IPU_OK);
	for (int r = 0; r < TIMING_RULES; r++)
		assert_int_equal(t.v[r], timing_rule(r)->value[TIMING_SLOW]);
	assert_int_equal(
	    timing_parse("fast,f32exp=slow,sup-dep=5,f32exp=2", &t, &d),
	    IPU_OK);
	assert_int_equal(t.v[exp], 2); /* the last override wins */
	assert_int_equal(t.v[dep], 5);
	assert_int_equal(t.v[TIMING_SUP_BRANCH],
	                 timing_rule(TIMING_SUP_BRANCH)->value[TIMING_FAST]);
	assert_string_equal(t.spec, "fast,f32exp=slow,sup-dep=5,f32exp=2");
	/* every bound satisfies fast <= nominal <= slow in cycles */
	for (int r = 0; r < TIMING_RULES; r++) {
		const TimingRuleInfo *i = timing_rule(r);
		int bw = !strcmp(i->unit, "MB/s"); /* bandwidth: reversed */
		uint32_t f = i->value[TIMING_FAST],
		         n = i->value[TIMING_NOMINAL],
		         s = i->value[TIMING_SLOW];
		assert_true(bw ? f >= n && n >= s : f <= n && n <= s);
		assert_true(i->source[0]);
	}
	static const char *const bad[] = {
	    "",
	    "medium",
	    "nominal,",
	    "nominal,f32exp",
	    "nominal,x=slow",
	    "nominal,f32exp=0",
	    "nominal,f32exp=-1",
	    "nominal,f32exp=12a",
	    "nominal,f32exp=",
	    "slow,=3",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		Timing keep = t;
		assert_int_equal(timing_parse(bad[i], &t, &d), IPU_EINVAL);
		assert_memory_equal(&keep, &t, sizeof t); /* untouched */
		assert_non_null(strstr(d.msg, "--timing"));
	}
	const Chip *c = chip_default();
	assert_ptr_equal(chip_timed(c, &timing_nominal), c);
	assert_int_equal(timing_parse("slow", &t, &d), IPU_OK);
	const Chip *s1 = chip_timed(c, &t), *s2 = chip_timed(s1, &t);
	assert_ptr_not_equal(s1, c);
	assert_ptr_equal(s1, s2); /* interned, and timed from the base */
	assert_ptr_equal(s1->base, c);
	assert_int_equal(chip_rule(s1, TIMING_SUP_DEP),
	                 timing_rule(TIMING_SUP_DEP)->value[TIMING_SLOW]);
	assert_string_equal(s1->name, "c600");
	assert_int_equal(s1->tiles, c->tiles);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_profile_parse),
	    cmocka_unit_test(test_supervisor_returns_status),
	    cmocka_unit_test(test_runall_sync_timing),
	    cmocka_unit_test(test_single_worker_rate),
	    cmocka_unit_test(test_sup_dependency),
	    cmocka_unit_test(test_sup_branch),
	    cmocka_unit_test(test_sup_put),
	    cmocka_unit_test(test_transcendentals),
	    cmocka_unit_test(test_rpt_zero_skips),
	    cmocka_unit_test(test_branches),
	    cmocka_unit_test(test_count_csr),
	    cmocka_unit_test(test_control_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

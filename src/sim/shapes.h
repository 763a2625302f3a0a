/*
 * shapes.h - the workers' steady state in the GEMMs: the fused bundles of a
 * paced load or store and an AMP instruction (fused_lazy) and the loops that
 * run the bundles of one common shape (DIssue.shape) without leaving
 * (shape_loop, shapes_run). One source, built twice: in tile.c for any host
 * (run_shape, the AMP's bundles there declining to the halves) and in
 * shapes_avx2.c for AVX2, FMA and F16C (sim_run_shape_avx2), where the AMP's
 * arithmetic (amp.h, sim_amp_run) inlines into the loops. run_fused (tile.c)
 * chooses by sim_use_avx2(), once per visit; both give the same state bit
 * for bit, which test_sim_paths checks (SIM_PORTABLE runs tile.c's, SIM_FAST
 * on an AVX2 host shapes_avx2.c's).
 */
#ifndef IPU_SIM_SHAPES_H
#define IPU_SIM_SHAPES_H

#include "amp.h"
#include "sim.h"

/* A bundle of a paced load or store and an AMP instruction (or a nop),
 * the inner loop of every GEMM, as one: both halves' operands read first,
 * then the main half's store and register writes, then the AMP's (which
 * win where both write a register, as the commit order of the log has
 * it). Neither can fault once prepared. 0 if one of them declines: then
 * the halves run as usual, nothing having changed. */
static inline __attribute__((always_inline)) void
fused_done(Tile *t, Context *c, const DIssue *u, PaceForm form, int amp,
           int fixed, const PaceOp *po, uint64_t res, int pair)
{
	sim_pace_store(t, form, po);
	if (pair) /* else kept unpacked (fused_lazy) */
		sim_pace_write(c, &u->pd, form, po);
	else
		sim_pace_write_loads(c, &u->pd, form, po, fixed);
	if (amp) {
		int dst = u->ad.dst;
		if (fixed) { /* the pair inside $a0..$a13 (DIssue.shape) */
			uint32_t v[2] = {(uint32_t)res, (uint32_t)(res >> 32)};
			memcpy(&c->a[dst], v, sizeof v);
		} else {
			if (dst < 14)
				c->a[dst] = (uint32_t)res;
			if (dst + 1 < 14)
				c->a[dst + 1] = (uint32_t)(res >> 32);
		}
	}
}

static inline __attribute__((always_inline)) int
fused_form(Tile *t, Context *c, int w, const DIssue *u, PaceForm form)
{
	PaceOp po;
	uint64_t res = 0;
	if (!sim_pace_prepare(t, c, &u->pd, form, &po, w) ||
	    (u->amp && !sim_amp_fast(t, c, u->ad, u->amp == 2, &res)))
		return 0;
	fused_done(t, c, u, form, u->amp, 0, &po, res, 1);
	return 1;
}

/* A worker's paced pair held unpacked across its fused bundles in
 * run_fused (PaceDec.lazy): the three addresses of $m[pair]:$m[pair + 1],
 * which hold the values before the first of those bundles until
 * lazy_flush packs these into them (pair -1: none). Only the context's own
 * paced forms read the pair while run_fused runs, and it flushes before
 * anything else may (the halves, another form, its end). */
typedef struct {
	uint32_t a[3];
	int pair;
} LazyPair;

static inline void
lazy_flush(Context *c, LazyPair *z)
{
	if (z->pair >= 0) {
		sim_ta_pack(z->a, &c->m[z->pair], &c->m[z->pair + 1]);
		z->pair = -1;
	}
}

/* fused_form with the pair's addresses kept in *z between the context's
 * bundles when the form allows it, so that they are not unpacked and
 * packed again for each: the same results once flushed. box: w, or -1 if
 * the boxes may not be used (sim_pace_boxes), and avx2 sim_use_avx2(), which
 * run_fused knows once; amp u->amp, fixed 1 (constant steps) or 2
 * (steps from the stride register) and zero_part (the AMP's partials
 * $a14:15) where u->shape says so (all constants in the shape's forms);
 * a: sim_amp_ctx(c, amp == 2) where amp. */
static inline __attribute__((always_inline)) int
fused_lazy(Tile *t, Context *c, int w, int box, const DIssue *u, PaceForm form,
           int amp, int fixed, int zero_part, int avx2, AmpCtx a, LazyPair *z)
{
	const PaceDec *d = &u->pd;
	if (!fixed && !d->lazy) {
		lazy_flush(c, z); /* it reads the registers */
		return fused_form(t, c, w, u, form);
	}
	int r = d->pair;
	int fresh = z->pair != r;
	if (fresh) {
		/* another pair first: a stride may be read from it. Not
		 * kept (z->pair -1 again) if the bundle declines: packing
		 * what was unpacked would clear bit 31 of the upper
		 * register */
		lazy_flush(c, z);
		sim_ta_unpack(c->m[r], c->m[r + 1], z->a);
		z->pair = r;
	}
	/* the AMP between the check and the reads: it reads no memory and
	 * only its own registers, which the main half writes after it; so
	 * only z is held across its call */
	uint64_t res = 0;
	if (!sim_pace_check_at(t, form, box, z->a) ||
	    (amp &&
	     !sim_amp_fast_at(t, c, u->ad, amp == 2,
	                      zero_part ? 2
	                      : fixed   ? 1
	                                : u->ad.src < 13 && u->ad.part < 13,
	                      avx2, a, &res))) {
		if (fresh)
			z->pair = -1;
		return 0;
	}
	PaceOp po;
	sim_pace_read_at(t, c, d, form, &po, z->a, fixed);
	sim_pace_next_at(c, d, form, z->a, z->a, fixed);
	fused_done(t, c, u, form, amp, fixed, &po, res, 0);
	return 1;
}

/* What follows a worker's cached issue in `cycle` (its halves or fused form
 * done): its ready cycle after a multi-turn issue and the rpt loop's jump
 * back; the pc it goes on at, next_pc or the body's first. The caller
 * counts the issue (Tile.bundles, worker_issues). */
static inline __attribute__((always_inline)) uint32_t
worker_issued(Context *c, const DIssue *u, uint64_t cycle, uint32_t next_pc)
{
	if (u->turns > 1)
		c->ready = cycle + (uint64_t)CHIP_SLOTS * (u->turns - 1) + 1;
	if (c->pc == c->rpt_end && c->rpt_count && --c->rpt_count)
		next_pc = c->rpt_first;
	return next_pc;
}

/* run_fused's state, which run_shape's loops take over and hand back:
 * the cycle, its slot, the bundles issued (added to the counts at the
 * end), the workers' unpacked pairs, and what is the same for every bundle
 * of the visit. */
typedef struct {
	uint64_t cycle, max_cycles, issued;
	unsigned slot;
	/* the code's window (loop_issue): its first byte, and its words
	 * rounded up (code_word) */
	uint32_t base, words;
	const uint8_t *mark;
	int boxes, avx2;
	LazyPair lazy[CHIP_CONTEXTS];
} FusedRun;

/* The slot's worker if it may issue in `cycle` (running, ready there), else 0
 * (nobody issues there but perhaps the supervisor: sup_takes_slot). */
static inline __attribute__((always_inline)) int
slot_issuer(const Tile *t, uint64_t cycle, unsigned slot)
{
	int k = t->slot_worker[slot];
	const Context *c = &t->ctx[k];
	return k && c->state == CTXS_RUN && cycle >= c->ready ? k : 0;
}

/* In a cycle no worker issues in while some run (issuer()): whether the
 * supervisor takes it, a slot no worker owns with the supervisor running and
 * out of its send, delay or hazard (in sync it stays there while workers
 * run). Else the cycle passes with no issue. */
static inline int
sup_takes_slot(const Tile *t, uint64_t cycle, unsigned slot)
{
	return !t->slot_worker[slot] && t->ctx[0].state == CTXS_RUN &&
	       cycle >= t->sup_ready;
}

/* shape_loop's view of a slot, the same for the whole loop: no bundle of a
 * shape starts or ends a worker (slot_worker stays as it is), and the
 * supervisor does not run inside the loop. */
typedef struct {
	Context *c;  /* the slot's worker's context, NULL if none */
	LazyPair *z; /* its kept pair (FusedRun.lazy) */
	/* sim_amp_ctx of its context (AmpCtx's fields), where the shape
	 * has an AMP; then its context's number: 32 bytes */
	const double *in8;
	uint8_t key;
	int w;
} SlotView;

/* slot_issuer by the slot's view: its worker's context if it may issue in
 * `cycle`, else NULL. */
static inline __attribute__((always_inline)) Context *
view_issuer(const SlotView *v, uint64_t cycle)
{
	Context *c = v->c;
	return c && c->state == CTXS_RUN && cycle >= c->ready ? c : NULL;
}

/* The word of pc in the code's window from base: its offset's word if
 * aligned, else a value of 2^30 or more (the offset's low bits rotated to
 * the top), so that one compare with the window's words rounded up (at
 * most 2^30) tests the window and the alignment together: off < lim and
 * off % 4 == 0 exactly where code_word < lim / 4 rounded up. */
static inline __attribute__((always_inline)) uint32_t
code_word(uint32_t pc, uint32_t base)
{
	uint32_t off = pc - base;
	return off >> 2 | off << 30;
}

/* The cached issue at a worker's pc, if it is in the code (words from base,
 * FusedRun.words), aligned and not at an observer's mark; else NULL (also
 * where the cache has none). */
static inline __attribute__((always_inline)) const DIssue *
worker_issue_at(const Tile *t, uint32_t base, uint32_t words,
                const uint8_t *mark, uint32_t pc)
{
	uint32_t k = code_word(pc, base);
	if (k >= words || (mark && mark[k]))
		return NULL;
	return t->issue_at[k];
}

/* run_fused's loop for the bundles of one shape (DIssue.shape, form, amp,
 * strided and zero_part constants where it is inlined): from r's cycle on,
 * while the slot's worker is at a bundle of that shape, its form with the pair
 * kept in r->lazy, no call; the cycles nobody issues in between (a slot no
 * worker runs in, a worker not ready) pass as in run_workers. 1 if it stopped
 * at such a bundle whose form declined (nothing done: the halves must run
 * it), else 0 (another issue, a marked word, max_cycles, a cycle the
 * supervisor takes, a whole turn with no issue: run_workers goes on). */
static inline __attribute__((always_inline)) int
shape_loop(Tile *t, FusedRun *r, PaceForm form, int amp, int strided,
           int zero_part, int avx2)
{
	const int shape =
	    SIM_SHAPE((int)form, amp,
	              strided * SHAPE_STRIDED + zero_part * SHAPE_ZERO_PART);
	/* in locals: the forms' stores could alias r */
	const uint32_t base = r->base, words = r->words;
	const uint8_t *mark = r->mark;
	const uint64_t max_cycles = r->max_cycles;
	uint64_t cycle = r->cycle, skipped = 0; /* cycles with no issue */
	unsigned slot = r->slot;
	int declined = 0;
	/* nothing here writes $FP_NFMT or $FP_SCL */
	SlotView sv[CHIP_SLOTS];
	for (int s = 0; s < CHIP_SLOTS; s++) {
		int k = t->slot_worker[s];
		sv[s].c = k ? &t->ctx[k] : NULL;
		sv[s].z = &r->lazy[k];
		AmpCtx a = amp && k ? sim_amp_ctx(&t->ctx[k], amp == 2)
		                    : (AmpCtx){NULL, 0};
		sv[s].in8 = a.in8;
		sv[s].key = a.key;
		sv[s].w = k;
	}
	/* no access counted yet (the halves may have left some); nothing
	 * in the shapes' bundles counts one (sim_mem_fast8 only reads it) */
	t->nacc = 0;
	while (cycle < max_cycles) {
		const SlotView *v = &sv[slot];
		Context *c = view_issuer(v, cycle);
		if (!c) {
			/* run_workers' cycles with no issue, here while the
			 * workers are waited for in turns of fewer than
			 * CHIP_SLOTS (after a whole turn it jumps ahead) */
			/* cycles in a row nobody issued in */
			unsigned idle = 0;
			do {
				if (++idle == CHIP_SLOTS ||
				    sup_takes_slot(t, cycle, slot))
					goto out;
				cycle++;
				skipped++;
				slot = slot + 1 == CHIP_SLOTS ? 0 : slot + 1;
				v = &sv[slot];
			} while (cycle < max_cycles &&
			         !(c = view_issuer(v, cycle)));
			if (!c)
				break;
		}
		int w = v->w;
		if (w <= 0)
			__builtin_unreachable(); /* a worker: the boxes' index
			                          */
		const DIssue *u = worker_issue_at(t, base, words, mark, c->pc);
		if (!u || u->shape != shape)
			break;
		if (!fused_lazy(t, c, w, w, u, form, amp, 1 + strided,
		                zero_part, avx2, (AmpCtx){v->in8, v->key},
		                v->z)) {
			declined = 1;
			break;
		}
		/* the bundle wrote no pc: read after it, not kept across */
		c->pc = worker_issued(c, u, cycle, c->pc + u->len);
		cycle++;
		slot = slot + 1 == CHIP_SLOTS ? 0 : slot + 1;
	}
out:
	r->issued += cycle - r->cycle - skipped;
	r->cycle = cycle;
	r->slot = slot;
	return declined;
}

/* shape_loop for `shape`, each a loop of its own: their forms' registers do
 * not meet the other loops' (the call's cost is paid once per run of the
 * shape's bundles). Inlined into tile.c's run_shape (avx2 0: the AMP's
 * bundles decline) and shapes_avx2.c's sim_run_shape_avx2 (avx2 1, the
 * AMP's arithmetic inline). */
static inline __attribute__((always_inline)) int
shapes_run(Tile *t, FusedRun *r, int shape, int avx2)
{
#define SHAPE(form, amp, strided)                                              \
	case SIM_SHAPE(form, amp, (strided)*SHAPE_STRIDED):                    \
		return shape_loop(t, r, form, amp, strided, 0, avx2)
#define ZERO_PART(form, amp)                                                   \
	case SIM_SHAPE(form, amp, SHAPE_ZERO_PART):                            \
		return shape_loop(t, r, form, amp, 0, 1, avx2)
#define SHAPES(strided)                                                        \
	SHAPE(PACE_LD2XST, 0, strided);                                        \
	SHAPE(PACE_LD2XST, 1, strided);                                        \
	SHAPE(PACE_LD2XST, 2, strided);                                        \
	SHAPE(PACE_LD2X, 0, strided);                                          \
	SHAPE(PACE_LD2X, 1, strided);                                          \
	SHAPE(PACE_LD2X, 2, strided);                                          \
	SHAPE(PACE_LDST, 0, strided);                                          \
	SHAPE(PACE_LDST, 1, strided);                                          \
	SHAPE(PACE_LDST, 2, strided);                                          \
	SHAPE(PACE_ST, 0, strided);                                            \
	SHAPE(PACE_ST, 1, strided);                                            \
	SHAPE(PACE_ST, 2, strided)
	switch (shape) {
		SHAPES(0);
		SHAPES(1);
		ZERO_PART(PACE_LD2XST, 1);
		ZERO_PART(PACE_LD2XST, 2);
		ZERO_PART(PACE_LD2X, 1);
		ZERO_PART(PACE_LD2X, 2);
		ZERO_PART(PACE_LDST, 1);
		ZERO_PART(PACE_LDST, 2);
		ZERO_PART(PACE_ST, 1);
		ZERO_PART(PACE_ST, 2);
	}
#undef ZERO_PART
#undef SHAPES
#undef SHAPE
	return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* shapes_run built for AVX2, FMA and F16C (shapes_avx2.c): only where
 * sim_use_avx2(). */
int sim_run_shape_avx2(Tile *t, FusedRun *r, int shape);
#endif

#endif

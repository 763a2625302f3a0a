/*
 * gemm.c - host side of the per-tile GEMM kernel (kernels/gemm.S,
 * kernels/gemm_f8.S): layouts, argument block and cycle formula.
 * docs/kernel-gemm.md is the reference for every layout and constant
 * here.
 */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

#include "kernels.h"

/* Argument block offsets: must match kernels/gemm.inc. */
enum {
	ARG_A = 0,
	ARG_B = 4,
	ARG_KENTRY = 8,
	ARG_APANEL = 12,
	ARG_ABACK = 16,
	ARG_NP1 = 20,
	ARG_NK1 = 24,
	ARG_FLAGS = 28,
	ARG_FP8FMT = 32,
	ARG_FP8SCL = 36,
	ARG_VERTEX = GEMM_VERTEX_AT,
	V_OFFA = 0,
	V_CPTR = 4,
	V_ROWS1 = 8,
	V_CPANEL = 12,
	V_JUMPS = 16,
	VERTEX_BYTES = GEMM_VERTEX_BYTES,
};

GemmDtype
gemm_dtype_of(DType t)
{
	return t == DT_F32 ? GEMM_F32 : dtype_is_f8(t) ? GEMM_F8 : GEMM_F16;
}

const char *
gemm_dtype_name(GemmDtype t)
{
	return t == GEMM_F32 ? "f32" : t == GEMM_F16 ? "f16" : "f8";
}

uint32_t
gemm_k_panel(GemmDtype t)
{
	return t == GEMM_F32 ? 8 : t == GEMM_F16 ? 16 : 32;
}

uint32_t
gemm_in_bytes(GemmDtype t)
{
	return t == GEMM_F32 ? 4 : t == GEMM_F16 ? 2 : 1;
}

uint32_t
gemm_c_elem_bytes(GemmDtype t)
{
	return t == GEMM_F32 ? 4 : 2;
}

/* The last worker's stream reads past its rows: 7 partial atoms (f16, f8)
 * or 11 (f32), rounded up. */
uint32_t
gemm_c_tail(GemmDtype t)
{
	return t == GEMM_F32 ? 96 : 64;
}

uint32_t
gemm_n_panels(uint32_t bn)
{
	return (bn + GEMM_COLS - 1) / GEMM_COLS;
}

uint32_t
gemm_k_panels(GemmDtype t, uint32_t bk)
{
	return (bk + gemm_k_panel(t) - 1) / gemm_k_panel(t);
}

uint32_t
gemm_a_bytes(GemmDtype t, uint32_t bm, uint32_t bk)
{
	return gemm_k_panels(t, bk) * bm * GEMM_A_ROW_BYTES;
}

uint32_t
gemm_b_bytes(GemmDtype t, uint32_t bk, uint32_t bn)
{
	return gemm_n_panels(bn) * gemm_k_panels(t, bk) * GEMM_B_PANEL_BYTES;
}

static uint32_t
c_row_bytes(GemmDtype t)
{
	return GEMM_COLS * gemm_c_elem_bytes(t);
}

uint32_t
gemm_c_bytes(GemmDtype t, uint32_t bm, uint32_t bn)
{
	return gemm_n_panels(bn) * bm * c_row_bytes(t);
}

/* A: [k-panel][row][K-panel elements], zero past bk. */
void
gemm_pack_a(GemmDtype t, uint32_t bm, uint32_t bk, const void *a, void *out)
{
	uint32_t e = gemm_in_bytes(t), kp = gemm_k_panel(t);
	uint32_t nk = gemm_k_panels(t, bk);
	const uint8_t *src = a;
	uint8_t *dst = out;
	memset(out, 0, gemm_a_bytes(t, bm, bk));
	for (uint32_t p = 0; p < nk; p++)
		for (uint32_t r = 0; r < bm; r++) {
			uint32_t k0 = p * kp, n = bk - k0 < kp ? bk - k0 : kp;
			memcpy(dst + ((size_t)p * bm + r) * GEMM_A_ROW_BYTES,
			       src + ((size_t)r * bk + k0) * e, (size_t)n * e);
		}
}

/*
 * B: [n-panel][k-panel][64 x 8 bytes in $CWEI order]. Register idx serves
 * engine (output column) m = (idx / 32) * 8 + (idx % 32) / 4 at phase
 * n = idx % 4 and holds the 8 / e weights W[n * 8/e + j][m], j counted
 * from the least significant end (docs/emulator-amp.md 1 and 4; for f32
 * phases 2n and 2n + 1 read the two words of register n).
 */
void
gemm_pack_b(GemmDtype t, uint32_t bk, uint32_t bn, const void *b, void *out)
{
	uint32_t e = gemm_in_bytes(t), per = 8 / e, kp = gemm_k_panel(t);
	uint32_t np = gemm_n_panels(bn), nk = gemm_k_panels(t, bk);
	const uint8_t *src = b;
	uint8_t *dst = out;
	memset(out, 0, gemm_b_bytes(t, bk, bn));
	for (uint32_t q = 0; q < np; q++)
		for (uint32_t p = 0; p < nk; p++) {
			uint8_t *panel =
			    dst + ((size_t)q * nk + p) * GEMM_B_PANEL_BYTES;
			for (uint32_t idx = 0; idx < 64; idx++) {
				uint32_t m = (idx / 32) * 8 + (idx % 32) / 4;
				uint32_t col = q * GEMM_COLS + m;
				for (uint32_t j = 0; j < per; j++) {
					uint32_t k =
					    p * kp + (idx % 4) * per + j;
					if (k < bk && col < bn)
						memcpy(panel + 8 * idx + j * e,
						       src + ((size_t)k * bn +
						              col) *
						                 e,
						       e);
				}
			}
		}
}

/* C: [n-panel][row][16 columns]. */
void
gemm_pack_c(uint32_t e, uint32_t bm, uint32_t bn, const void *c, void *out)
{
	uint32_t np = gemm_n_panels(bn), row = GEMM_COLS * e;
	const uint8_t *src = c;
	uint8_t *dst = out;
	memset(out, 0, (size_t)np * bm * row);
	for (uint32_t q = 0; q < np; q++)
		for (uint32_t r = 0; r < bm; r++) {
			uint32_t c0 = q * GEMM_COLS;
			uint32_t n = bn - c0 < GEMM_COLS ? bn - c0 : GEMM_COLS;
			memcpy(dst + ((size_t)q * bm + r) * row,
			       src + ((size_t)r * bn + c0) * e, (size_t)n * e);
		}
}

void
gemm_unpack_c(uint32_t e, uint32_t bm, uint32_t bn, const void *in, void *c)
{
	uint32_t np = gemm_n_panels(bn), row = GEMM_COLS * e;
	const uint8_t *src = in;
	uint8_t *dst = c;
	for (uint32_t q = 0; q < np; q++)
		for (uint32_t r = 0; r < bm; r++) {
			uint32_t c0 = q * GEMM_COLS;
			uint32_t n = bn - c0 < GEMM_COLS ? bn - c0 : GEMM_COLS;
			memcpy(dst + ((size_t)r * bn + c0) * e,
			       src + ((size_t)q * bm + r) * row, (size_t)n * e);
		}
}

/* Workers of a call: 5 or 6. */
static uint32_t
call_workers(uint32_t workers)
{
	return workers == 5 ? 5 : 6;
}

int
gemm_objects(GemmDtype t, uint32_t workers, const char *names[2])
{
	names[0] = t == GEMM_F8 ? "gemm_f8" : "gemm";
	if (call_workers(workers) == 6)
		return 1;
	names[1] = t == GEMM_F8 ? "gemm5_f8" : "gemm5";
	return 2;
}

const char *
gemm_entry(GemmDtype t, uint32_t workers, uint32_t bm, uint32_t bn, uint32_t bk)
{
	if (call_workers(workers) == 5)
		return t == GEMM_F32   ? "gemm5_f32"
		       : t == GEMM_F16 ? "gemm5_f16"
		                       : "gemm5_f8";
	if (gemm_n_chained(t, workers, bm, bn, bk))
		return "gemm_f8_nchained";
	if (gemm_k_chained(t, workers, bm, bk))
		return t == GEMM_F16 ? "gemm_f16_chained" : "gemm_f8_chained";
	if (gemm_k_primed(t, workers, bm, bk))
		return t == GEMM_F16 ? "gemm_f16_primed" : "gemm_f8_primed";
	return t == GEMM_F32   ? "gemm_f32"
	       : t == GEMM_F16 ? "gemm_f16"
	                       : "gemm_f8";
}

/* Worker w's rows of bm over nw workers (1 when it repeats a row). */
static uint32_t
worker_rows(uint32_t bm, uint32_t nw, uint32_t w)
{
	uint32_t n = bm / nw + (w < bm % nw);
	return n ? n : 1;
}

/* Three jumps in atoms as the signed 10-bit fields 0, 1, 2 of a stride
 * register; 0 when one does not fit. */
static uint32_t
pack_jumps(const int64_t f[3])
{
	uint32_t v = 0;
	for (int i = 0; i < 3; i++) {
		if (f[i] < -512 || f[i] > 511)
			return 0;
		v |= ((uint32_t)f[i] & 0x3ffu) << (10 * i);
	}
	return v;
}

/*
 * The drain's jumps of a worker with n rows (GEMM_HIHO_WORKER), in atoms:
 * its first drain bundle loads A at atom 4n + 3 and C at 4n + 7 of the
 * worker's rows and jumps them to the next A panel's first row (+4 bm
 * atoms from this one's) and back to the first C row; its last store
 * writes atom 4n - 1 and jumps back to the first. 0 if one of them does
 * not fit a signed 10-bit field.
 */
static uint32_t
drain_jumps(uint32_t bm, uint32_t n)
{
	int64_t f[3] = {4 * (int64_t)bm - 4 * (int64_t)n - 3,
	                -(4 * (int64_t)n + 7), -(4 * (int64_t)n - 1)};
	return pack_jumps(f);
}

/*
 * The primed workers' jumps (GEMM_PRIMED_WORKER), in atoms: A goes from
 * the open end's last load (atom 4n - 1 of the worker's rows) to the
 * worker's first row in the next A panel, 4 (bm - n) + 1 atoms, in four
 * jumps of field 0 (the open end's last load and the primed start's first
 * three) and one atom; the open end's partial load (at atom 4n + 3) goes
 * back to the first row, -(4n + 3); the primed start's sixth store (at
 * atom 4n - 1, row n - 1's last) jumps back to it, -(4n - 1). 0 when one
 * does not fit.
 */
static uint32_t
primed_jumps(uint32_t bm, uint32_t n)
{
	int64_t f[3] = {(int64_t)bm - (int64_t)n, -(4 * (int64_t)n + 3),
	                -(4 * (int64_t)n - 1)};
	return pack_jumps(f);
}

/*
 * The chained workers' jumps (GEMM_CHAINED_WORKER), in atoms: A goes from
 * the chained end's last used load (atom 4n - 1 of the worker's rows) to
 * the worker's first row in the next A panel, 4 (bm - n) + 1 atoms, in two
 * jumps, field 0 then field 2 (the last bundle's unused load between
 * them); the partial load (after atom 4n - 1) and the chained start's
 * sixth store (at atom 4n - 1) go back to the first row, -(4n - 1),
 * field 1. 0 when one does not fit.
 */
static uint32_t
chained_jumps(uint32_t bm, uint32_t n)
{
	int64_t j = 4 * ((int64_t)bm - (int64_t)n) + 1;
	int64_t f[3] = {j - j / 2, -(4 * (int64_t)n - 1), j / 2};
	return pack_jumps(f);
}

/*
 * The chained workers' jumps across N-panels (GEMM_NCHAINED_WORKER), in
 * atoms: field 0 the one jump of 4 (bm - n) + 1 atoms that A takes to the
 * next A panel (the chained tail's field 2, 0, adds nothing), the
 * crossing tail's partial load to the next N-panel's row 0 and the
 * crossed head's sixth store to it; field 1 as chained_jumps (and the
 * crossing tail's A back to the worker's first row). 0 when one does not
 * fit.
 */
static uint32_t
nchained_jumps(uint32_t bm, uint32_t n)
{
	int64_t f[3] = {4 * ((int64_t)bm - (int64_t)n) + 1,
	                -(4 * (int64_t)n - 1), 0};
	return pack_jumps(f);
}

int
gemm_n_chained(GemmDtype t, uint32_t workers, uint32_t bm, uint32_t bn,
               uint32_t bk)
{
	/* f8 only: gemm.S, which f32's programs link, keeps its size */
	if (t != GEMM_F8 || gemm_n_panels(bn) < 2 ||
	    !gemm_k_chained(t, workers, bm, bk))
		return 0;
	for (uint32_t w = 0; w < 6; w++)
		if (!nchained_jumps(bm, worker_rows(bm, 6, w)))
			return 0;
	return 1;
}

int
gemm_k_chained(GemmDtype t, uint32_t workers, uint32_t bm, uint32_t bk)
{
	if (!gemm_k_primed(t, workers, bm, bk) || bm < 18)
		return 0;
	for (uint32_t w = 0; w < 6; w++)
		if (!chained_jumps(bm, worker_rows(bm, 6, w)))
			return 0;
	return 1;
}

int
gemm_five_chained(GemmDtype t, uint32_t bm, uint32_t bk)
{
	if (t == GEMM_F32 || gemm_k_panels(t, bk) < 2 || bm < 15)
		return 0;
	for (uint32_t w = 0; w < 5; w++)
		if (!chained_jumps(bm, worker_rows(bm, 5, w)))
			return 0;
	return 1;
}

/* The five-worker panels that run the N-chained call's streams (their
 * chained ends make the next run's leading loads): A's jump whole in
 * field 0 (nchained_jumps) for every worker. */
static int
five_preload(GemmDtype t, uint32_t bm, uint32_t bk)
{
	if (t != GEMM_F8 || !gemm_five_chained(t, bm, bk))
		return 0;
	for (uint32_t w = 0; w < 5; w++)
		if (!nchained_jumps(bm, worker_rows(bm, 5, w)))
			return 0;
	return 1;
}

int
gemm_k_primed(GemmDtype t, uint32_t workers, uint32_t bm, uint32_t bk)
{
	if (t == GEMM_F32 || call_workers(workers) != 6 ||
	    gemm_k_panels(t, bk) < 2 || bm < 12)
		return 0;
	for (uint32_t w = 0; w < 6; w++)
		if (!primed_jumps(bm, worker_rows(bm, 6, w)))
			return 0;
	return 1;
}

int
gemm_k_stream(GemmDtype t, uint32_t workers, uint32_t bm)
{
	uint32_t nw = call_workers(workers);
	if (t == GEMM_F32 || nw != 6)
		return 0;
	for (uint32_t w = 0; w < nw; w++)
		if (!drain_jumps(bm, worker_rows(bm, nw, w)))
			return 0;
	return 1;
}

/*
 * Rows split as evenly as possible over the W workers (6, or 5 for
 * gemm5_*): worker w gets bm / W rows, one more if w < bm % W. With fewer
 * than W rows the idle workers repeat row w % bm:
 * they load its partials in their first bundles and store the same
 * results ten bundles later than any of them loads, so the copies agree.
 */
void
gemm_args_fill(const GemmCall *c, uint8_t out[GEMM_ARGS_BYTES])
{
	GemmDtype t = c->t;
	uint32_t bm = c->bm, crow = c_row_bytes(t);
	uint32_t nw = call_workers(c->opt.workers);
	int stream = gemm_k_stream(t, c->opt.workers, bm);
	int primed = gemm_k_primed(t, c->opt.workers, bm, c->bk);
	/* an overlapped call's five workers run the chained streams
	 * (gemm_five_run) on the chained vertex */
	int chained = gemm_k_chained(t, c->opt.workers, bm, c->bk) ||
	              (nw == 5 && c->opt.five && !c->opt.plain5 &&
	               gemm_five_chained(t, bm, c->bk));
	int nchained = gemm_n_chained(t, c->opt.workers, bm, c->bn, c->bk);
	/* its streams, the N-chained call's, take that call's jumps */
	int five_pre = chained && nw == 5 && five_preload(t, bm, c->bk);
	memset(out, 0, GEMM_ARGS_BYTES);
	put_le32(out + ARG_A, c->a);
	put_le32(out + ARG_B, c->b);
	/* the primed supervisor has its entries in code */
	if (!primed)
		put_le32(out + ARG_KENTRY,
		         stream ? GEMM_ENTRY_STREAM : GEMM_ENTRY_NEXT_K);
	put_le32(out + ARG_APANEL, bm * GEMM_A_ROW_BYTES);
	if (nchained)
		put_le32(out + ARG_ABACK,
		         (gemm_k_panels(t, c->bk) - 1) * bm * GEMM_A_ROW_BYTES);
	put_le32(out + ARG_NP1, gemm_n_panels(c->bn) - 1);
	put_le32(out + ARG_NK1, gemm_k_panels(t, c->bk) - 1);
	put_le32(out + ARG_FLAGS, c->opt.zero ? 1 : 0);
	put_le32(out + ARG_FP8FMT,
	         (uint32_t)c->opt.fp8_in << 1 | (uint32_t)c->opt.fp8_w);
	put_le32(out + ARG_FP8SCL, (uint32_t)c->opt.fp8_scale & 0x3f);
	for (uint32_t w = 0, first = 0; w < nw; w++) {
		uint32_t n = bm / nw + (w < bm % nw), row = first;
		if (n == 0) {
			n = 1;
			row = w % bm;
		}
		uint8_t *v = out + ARG_VERTEX + w * VERTEX_BYTES;
		put_le32(v + V_OFFA, row * GEMM_A_ROW_BYTES);
		/* the full entry adds V_CPANEL before the first panel */
		put_le32(v + V_CPTR, c->c + row * crow - bm * crow);
		/* primed: the rows loop runs rows - 2 passes, chained
		 * rows - 3 */
		put_le32(v + V_ROWS1, chained ? n - 3 : primed ? n - 2 : n - 1);
		put_le32(v + V_CPANEL, bm * crow);
		put_le32(v + V_JUMPS, nchained || five_pre
		                          ? nchained_jumps(bm, n)
		                      : chained ? chained_jumps(bm, n)
		                      : primed  ? primed_jumps(bm, n)
		                      : stream  ? drain_jumps(bm, n)
		                                : 0);
		first += bm / nw + (w < bm % nw);
	}
}

/*
 * The cycle formula (docs/kernel-gemm.md): the supervisor's code in
 * gemm.inc instruction by instruction on a SupClock, the workers in closed
 * form. P = AMP phases per row (4 for f16 and f8, 8 for f32); worker w has
 * n_w rows (one when bm < 6) and issues W_w = P(n_w + 2) + 5 times a
 * panel after its entry (n rows plus the warm-up and drain groups, one
 * load and two store bundles, rpt, exit), once every 6 cycles, from its
 * first turn after the runall's launch delay. The entry is 7 issues in the
 * call's first run, 3 in the first run of a further N-panel and 2 in a
 * further K-panel's (WORKER_ENTRY).
 *
 * A K-panel's timing depends on the previous one only through the slot
 * phase of its runall (cycle mod 6), so the panels repeat with a period of
 * at most 6: once a phase comes back, whole periods are skipped (shifted
 * by their cycles, a multiple of 6); likewise the N-panels, by the phase
 * of their last runall. The last panel of each loop is always stepped.
 */

typedef struct {
	uint64_t issues[6]; /* W_w */
	uint32_t nk;
	uint64_t
	    next_k; /* a further K-panel's entry issues: ENTRY_NEXT_K or 0 */
} GemmShape;

/* The worker entry's issues: the call's first run, a further N-panel's
 * first run, a further K-panel's run (none when it enters at the
 * stream). */
enum { ENTRY_FULL = 8, ENTRY_NEXT_N = 3, ENTRY_NEXT_K = 2 };

/* Shift every cycle of the timeline by d (whole periods skipped). */
static void
shift(SupClock *s, uint64_t d)
{
	s->t += d;
	s->last_exit += d;
	for (int r = 0; r < 16; r++)
		s->ready[r] += d;
	for (int w = 0; w < 6; w++)
		s->free[w] += d;
}

/* Iterations whose timeline repeats once the phase r % 6 of their key
 * cycle r comes back: what each loop below keeps of them. */
typedef struct {
	uint64_t seen[6], at[6];
} Periods;

static void
periods_start(Periods *pp)
{
	memset(pp->seen, 0xff, sizeof pp->seen);
}

/* Iteration i of n ran with key cycle r: when an earlier one had r's
 * phase, skip whole periods (never the last iteration, which differs);
 * returns the iteration to go on from. */
static uint32_t
periods_step(Periods *pp, SupClock *s, uint32_t i, uint32_t n, uint64_t r)
{
	uint32_t key = (uint32_t)(r % 6);
	if (pp->seen[key] == UINT64_MAX) {
		pp->seen[key] = i;
		pp->at[key] = r;
		return i;
	}
	uint64_t period = i - pp->seen[key], left = n - 2 - i;
	uint64_t skip = i + 2 < n ? left / period : 0;
	shift(s, skip * (r - pp->at[key]));
	periods_start(pp);
	return i + (uint32_t)(skip * period);
}

/* sync, runall (of the entry in $m6 or $m11, the A panel in $m3 or $m14)
 * and the workers of one panel entered with `entry` issues; returns the
 * runall's cycle. */
static uint64_t
run_panel(SupClock *s, const GemmShape *g, unsigned reads, uint64_t entry)
{
	uint64_t first[6], exit[6];
	sup_sync(s);
	uint64_t r = sup_runall(s, reads, first);
	for (int w = 0; w < 6; w++)
		exit[w] = first[w] + 6 * (entry + g->issues[w] - 1);
	sup_workers(s, exit);
	return r;
}

/* Loop 2: the K-panel's weights, sync, runall, add, brnzdec. */
static uint64_t
k_panel(SupClock *s, const GemmShape *g, int last)
{
	sup_ops(s, 32); /* ld128putcs */
	uint64_t r = run_panel(s, g, SUP_M6 | SUP_M3, g->next_k);
	sup_op(s, SUP_M3 | SUP_M5, SUP_M3, SUP_PLAIN); /* add */
	sup_op(s, SUP_M4, SUP_M4, last ? SUP_PLAIN : SUP_TAKEN);
	return r;
}

/* The end of an N-panel after its last runall: or (the next N-panel's
 * entry), brz to the return on the last one, else the next panel's
 * weights and brnzdec. */
static void
n_panel_end(SupClock *s, int last)
{
	sup_op(s, SUP_M11, SUP_M11, SUP_PLAIN);             /* or */
	sup_op(s, SUP_M2, 0, last ? SUP_TAKEN : SUP_PLAIN); /* brz */
	if (!last) {
		sup_ops(s, 32); /* the next N-panel's first ld128putcs */
		sup_op(s, SUP_M2, SUP_M2, SUP_TAKEN); /* brnzdec */
	}
}

/* One N-panel (the K counter .. brnzdec), the call's first when `first`;
 * returns the cycle of its last runall. */
static uint64_t
n_panel(SupClock *s, const GemmShape *g, int first, int last)
{
	uint64_t entry = first ? ENTRY_FULL : ENTRY_NEXT_N;
	if (g->nk == 1) { /* the loop at 5: */
		uint64_t r = run_panel(s, g, SUP_M11 | SUP_M14, entry);
		n_panel_end(s, last);
		return r;
	}
	sup_op(s, SUP_M8, SUP_M4, SUP_PLAIN); /* add: K-panels left - 1 */
	uint64_t r = run_panel(s, g, SUP_M11 | SUP_M14, entry);
	sup_op(s, SUP_M14 | SUP_M5, SUP_M3, SUP_PLAIN); /* add */
	uint32_t mid = g->nk - 1; /* the K-panels after the first */
	Periods pp;
	periods_start(&pp);
	for (uint32_t p = 0; p < mid; p++) {
		r = k_panel(s, g, p == mid - 1);
		p = periods_step(&pp, s, p, mid, r);
	}
	n_panel_end(s, last);
	return r;
}

/*
 * The five-worker call (GEMM5_SUPERVISOR): each panel is the sync, its
 * weights, five runs (workers 0-4 in slots 0-4), then the loop's
 * bookkeeping in slot 5 while they compute. After the sync the timeline
 * depends only on the phase of the runs (cycle mod 6), so the K-panels
 * after the first of an N-panel, and the N-panels after the first, repeat
 * with a period of at most 6 as in the six-worker loops.
 */
static uint64_t
five_panel(SupClock *s, const GemmShape *g, uint64_t entry)
{
	uint64_t first[6] = {0}, exit[6] = {0}, r = 0;
	sup_sync(s);
	sup_ops(s, 32); /* ld128putcs */
	for (int w = 0; w < 5; w++) {
		uint64_t c = sup_run(s, SUP_M1 | SUP_M3, w, &first[w]);
		if (w == 0)
			r = c;
	}
	for (int w = 0; w < 5; w++)
		exit[w] = first[w] + 6 * (entry + g->issues[w] - 1);
	sup_workers(s, exit);
	return r;
}

/* One N-panel: the three adds, its K-panels and the `or`; returns the
 * cycle of its last panel's first run. */
static uint64_t
five_n_panel(SupClock *s, const GemmShape *g, int first)
{
	sup_op(s, SUP_M8, SUP_M4, SUP_PLAIN);  /* K-panels left - 1 */
	sup_op(s, SUP_M14, SUP_M3, SUP_PLAIN); /* the first A panel */
	sup_op(s, SUP_M11, SUP_M1, SUP_PLAIN); /* the first entry */
	uint64_t r = 0;
	Periods pp;
	periods_start(&pp);
	for (uint32_t p = 0; p < g->nk; p++) {
		uint64_t entry = p       ? ENTRY_NEXT_K
		                 : first ? ENTRY_FULL
		                         : ENTRY_NEXT_N;
		r = five_panel(s, g, entry);
		sup_op(s, SUP_M6, SUP_M1, SUP_PLAIN);          /* add */
		sup_op(s, SUP_M3 | SUP_M5, SUP_M3, SUP_PLAIN); /* add */
		sup_op(s, SUP_M4, SUP_M4,
		       p == g->nk - 1 ? SUP_PLAIN : SUP_TAKEN); /* brnzdec */
		if (p) /* the first's entry differs from the rest */
			p = periods_step(&pp, s, p, g->nk, r);
	}
	sup_op(s, SUP_M11, SUP_M11, SUP_PLAIN); /* or */
	return r;
}

static uint64_t
five_cycles(SupClock *s, const GemmShape *g, GemmDtype t, uint32_t np)
{
	static const unsigned base[5] = {SUP_M1, SUP_M2, SUP_M3, SUP_M4,
	                                 SUP_M5};
	for (int w = 0; w < 5; w++)
		sup_op(s, SUP_M0, base[w], SUP_PLAIN); /* add */
	sup_op(s, SUP_M0, SUP_M7, SUP_PLAIN);          /* ld32 B */
	sup_op(s, SUP_M0, SUP_M9, SUP_PLAIN);          /* ld32 flags */
	if (t == GEMM_F8) {
		sup_op(s, SUP_M0, SUP_M8, SUP_PLAIN);
		sup_op(s, SUP_M0, SUP_M13, SUP_PLAIN);
	}
	for (int w = 0; w < 5; w++)
		sup_op(s, base[w], 0, SUP_PUT);
	sup_op(s, SUP_M7, 0, SUP_PUT); /* $CCCSLOAD */
	if (t == GEMM_F8) {
		sup_op(s, SUP_M8, 0, SUP_PUT);
		sup_op(s, SUP_M13, 0, SUP_PUT);
	}
	sup_op(s, SUP_M12 | SUP_M9, SUP_M11, SUP_PLAIN); /* movz */
	sup_op(s, SUP_M0, SUP_M2, SUP_PLAIN);
	sup_op(s, SUP_M0, SUP_M5, SUP_PLAIN);
	sup_op(s, SUP_M0, SUP_M8, SUP_PLAIN);
	sup_op(s, SUP_M0, SUP_M14, SUP_PLAIN);
	sup_op(s, SUP_M12, SUP_M6, SUP_PLAIN); /* the next K-panel's entry */
	Periods pp;
	periods_start(&pp);
	for (uint32_t q = 0; q < np; q++) {
		uint64_t r = five_n_panel(s, g, q == 0);
		sup_op(s, SUP_M2, SUP_M2,
		       q == np - 1 ? SUP_PLAIN : SUP_TAKEN); /* brnzdec */
		if (q) /* the first's entry differs from the rest */
			q = periods_step(&pp, s, q, np, r);
	}
	sup_sync(s);
	return sup_return(s, 0);
}

/*
 * The primed call (GEMM_SUPERVISOR_PRIMED): each N-panel runs its first
 * K-panel from $m11 (the cold start, open end), the further ones but the
 * last from $m6 (primed start, open end) and the last from $m7 (primed
 * start, drain); before each further K-panel the sync comes first, then
 * the weights. A worker of n rows issues 4n + 7 times a run with the open
 * end (a cold or primed start: 11 bundles, rpt, n - 2 passes of 4, 2
 * bundles, exitz) and 4n + 13 with the drain (8 bundles at the end).
 * The chained call (gemm_k_chained) runs the same supervisor: its cold
 * start issues 4n + 7 times (11 bundles, rpt, n - 3 passes, 6 bundles,
 * exitz), a further K-panel 4n + 3 (7 bundles, rpt, n - 3 passes, 6
 * bundles, exitz) and the drain 4n + 9 (7 + 4 bundles, rpt, n - 3
 * passes, 8 bundles, exitz).
 */
typedef struct {
	uint64_t cold[6], open[6], drain[6];
	uint32_t nk;
} PrimedShape;

/* sync, weights, runall (of $m6 or $m7, the A panel in $m3) and the
 * workers of a further K-panel; returns the runall's cycle. */
static uint64_t
primed_run(SupClock *s, unsigned reads, const uint64_t issues[6])
{
	uint64_t first[6], exit[6];
	sup_sync(s);
	sup_ops(s, 32); /* ld128putcs */
	uint64_t r = sup_runall(s, reads, first);
	for (int w = 0; w < 6; w++)
		exit[w] = first[w] + 6 * (issues[w] - 1);
	sup_workers(s, exit);
	return r;
}

/* One N-panel of the primed call (the K counter .. brnzdec); returns the
 * cycle of its last runall. */
static uint64_t
primed_n_panel(SupClock *s, const PrimedShape *g, int first, int last)
{
	uint64_t entry = first ? ENTRY_FULL : ENTRY_NEXT_N, x[6], f[6];
	sup_op(s, SUP_M8, SUP_M4, SUP_PLAIN); /* add: the K counter */
	sup_sync(s);
	sup_runall(s, SUP_M11 | SUP_M14, f);
	for (int w = 0; w < 6; w++)
		x[w] = f[w] + 6 * (entry + g->cold[w] - 1);
	sup_workers(s, x);
	sup_op(s, SUP_M14 | SUP_M5, SUP_M3, SUP_PLAIN); /* add */
	uint32_t mid = g->nk - 2; /* the K-panels between */
	sup_op(s, SUP_M4, 0, mid ? SUP_PLAIN : SUP_TAKEN); /* brz */
	if (mid)
		sup_op(s, SUP_M4, SUP_M4, SUP_PLAIN); /* add */
	Periods pp;
	periods_start(&pp);
	for (uint32_t p = 0; p < mid; p++) {
		uint64_t r = primed_run(s, SUP_M6 | SUP_M3, g->open);
		sup_op(s, SUP_M3 | SUP_M5, SUP_M3, SUP_PLAIN); /* add */
		sup_op(s, SUP_M4, SUP_M4,
		       p == mid - 1 ? SUP_PLAIN : SUP_TAKEN); /* brnzdec */
		p = periods_step(&pp, s, p, mid, r);
	}
	uint64_t r = primed_run(s, SUP_M7 | SUP_M3, g->drain);
	n_panel_end(s, last);
	return r;
}

static uint64_t
primed_cycles(SupClock *s, GemmDtype t, uint32_t bm, uint32_t bn, uint32_t bk,
              int chained)
{
	PrimedShape g = {.nk = gemm_k_panels(t, bk)};
	for (uint32_t w = 0; w < 6; w++) {
		uint64_t n = worker_rows(bm, 6, w);
		g.cold[w] = 4 * n + 7;
		g.open[w] = chained ? 4 * n + 3 : 4 * n + 7;
		g.drain[w] = chained ? 4 * n + 9 : 4 * n + 13;
	}
	sup_op(s, SUP_M12 | SUP_M9, SUP_M11, SUP_PLAIN); /* movz */
	sup_op(s, SUP_M0, SUP_M2, SUP_PLAIN);
	sup_op(s, SUP_M0, SUP_M5, SUP_PLAIN);
	sup_op(s, SUP_M0, SUP_M8, SUP_PLAIN);
	sup_op(s, SUP_M0, SUP_M14, SUP_PLAIN);
	sup_op(s, 0, SUP_M6, SUP_PLAIN); /* setzi the stream entry */
	sup_op(s, 0, SUP_M7, SUP_PLAIN); /* setzi the drain entry */
	sup_ops(s, 32);                  /* the first panel's weights */
	uint32_t np = gemm_n_panels(bn);
	Periods pp;
	periods_start(&pp);
	for (uint32_t q = 0; q < np; q++) {
		uint64_t r = primed_n_panel(s, &g, q == 0, q == np - 1);
		q = periods_step(&pp, s, q, np, r);
	}
	sup_sync(s);
	return sup_return(s, 0);
}

/*
 * The chained call across N-panels (GEMM_NCHAINED_CALL): the chained
 * call's runs, each N-panel but the last ending with the crossing run
 * and the next N-panel's first K-panel the crossed run (4n + 4: its sub
 * and its own leading loads), both after the sync and their weights as
 * a further K-panel; only the call's last K-panel drains. The runs that
 * follow a chained end start without the leading loads (the end made
 * them): a further K-panel and the crossing run 4n + 2, the drain 4n + 8.
 */
static uint64_t
nchained_cycles(SupClock *s, uint32_t bm, uint32_t bn, uint32_t bk)
{
	PrimedShape g = {.nk = gemm_k_panels(GEMM_F8, bk)};
	uint64_t crossed[6], f[6], x[6];
	for (uint32_t w = 0; w < 6; w++) {
		uint64_t n = worker_rows(bm, 6, w);
		g.cold[w] = ENTRY_FULL + 4 * n + 7;
		g.open[w] = 4 * n + 2;
		g.drain[w] = 4 * n + 8;
		crossed[w] = 4 * n + 4;
	}
	sup_op(s, SUP_M12 | SUP_M9, SUP_M11, SUP_PLAIN); /* movz */
	sup_op(s, 0, SUP_M7, SUP_PLAIN);                 /* setzi */
	sup_op(s, 0, SUP_M1, SUP_PLAIN);                 /* setzi */
	sup_op(s, SUP_M1 | SUP_M9, SUP_M7, SUP_PLAIN);   /* movz */
	sup_op(s, 0, SUP_M12, SUP_PLAIN);                /* setzi */
	sup_op(s, 0, SUP_M1, SUP_PLAIN);                 /* setzi */
	sup_op(s, SUP_M1 | SUP_M9, SUP_M12, SUP_PLAIN);  /* movz */
	sup_op(s, SUP_M0, SUP_M2, SUP_PLAIN);            /* ld32 */
	sup_op(s, SUP_M0, SUP_M8, SUP_PLAIN);
	sup_op(s, SUP_M0, SUP_M13, SUP_PLAIN);
	sup_op(s, SUP_M0, SUP_M14, SUP_PLAIN);
	sup_op(s, 0, SUP_M6, SUP_PLAIN);      /* setzi the stream entry */
	sup_op(s, 0, SUP_M1, SUP_PLAIN);      /* setzi the drain entry */
	sup_ops(s, 32);                       /* the first panel's weights */
	sup_op(s, SUP_M8, SUP_M4, SUP_PLAIN); /* add: the K counter */
	sup_sync(s);
	sup_runall(s, SUP_M11 | SUP_M14, f);
	for (int w = 0; w < 6; w++)
		x[w] = f[w] + 6 * (g.cold[w] - 1);
	sup_workers(s, x);
	sup_op(s, 0, 0, SUP_TAKEN); /* bri */
	uint32_t np = gemm_n_panels(bn), mid = g.nk - 2;
	Periods pn;
	periods_start(&pn);
	for (uint32_t q = 0; q < np; q++) {
		int last = q == np - 1;
		sup_op(s, SUP_M4, 0, mid ? SUP_PLAIN : SUP_TAKEN); /* brz */
		if (mid)
			sup_op(s, SUP_M4, SUP_M4, SUP_PLAIN); /* add */
		Periods pp;
		periods_start(&pp);
		for (uint32_t p = 0; p < mid; p++) {
			uint64_t r = primed_run(s, SUP_M6 | SUP_M13, g.open);
			sup_op(s, SUP_M4, SUP_M4,
			       p == mid - 1 ? SUP_PLAIN
			                    : SUP_TAKEN); /* brnzdec */
			p = periods_step(&pp, s, p, mid, r);
		}
		uint64_t r =
		    primed_run(s, SUP_M7 | SUP_M13, last ? g.drain : g.open);
		sup_op(s, SUP_M2, SUP_M2,
		       last ? SUP_PLAIN : SUP_TAKEN); /* brnzdec */
		if (last)
			break;
		sup_op(s, SUP_M1 | SUP_M2, SUP_M7, SUP_PLAIN); /* movz */
		sup_op(s, SUP_M8, SUP_M4, SUP_PLAIN);          /* add */
		primed_run(s, SUP_M12 | SUP_M13, crossed);
		q = periods_step(&pn, s, q, np, r);
	}
	sup_sync(s);
	return sup_return(s, 0);
}

static uint64_t tile_cycles(const Chip *c, GemmDtype t, uint32_t nw,
                            uint32_t bm, uint32_t bn, uint32_t bk);

/* The planner prices tens of thousands of candidates, most of them the
 * same few calls: a small cache per thread of recent calls. */
typedef struct {
	const Chip *chip;
	uint32_t t, nw, bm, bn, bk;
	uint64_t cycles;
} CycleMemo;
enum { MEMO_SLOTS = 1024 };
static _Thread_local CycleMemo memo[MEMO_SLOTS];

uint64_t
gemm_tile_cycles(const Chip *c, GemmDtype t, uint32_t workers, uint32_t bm,
                 uint32_t bn, uint32_t bk)
{
	uint32_t nw = call_workers(workers);
	uint64_t h = ((uint64_t)bm * 0x9e3779b1u ^ (uint64_t)bn * 0x85ebca77u ^
	              (uint64_t)bk * 0xc2b2ae3du ^ (uint64_t)t ^ nw ^
	              (uint64_t)(uintptr_t)c) %
	             MEMO_SLOTS;
	CycleMemo *m = &memo[h];
	if (m->chip != c || m->t != (uint32_t)t || m->nw != nw || m->bm != bm ||
	    m->bn != bn || m->bk != bk)
		*m = (CycleMemo){c,
		                 (uint32_t)t,
		                 nw,
		                 bm,
		                 bn,
		                 bk,
		                 tile_cycles(c, t, nw, bm, bn, bk)};
	return m->cycles;
}

static uint64_t
tile_cycles(const Chip *c, GemmDtype t, uint32_t nw, uint32_t bm, uint32_t bn,
            uint32_t bk)
{
	uint64_t p = t == GEMM_F32 ? 8 : 4;
	GemmShape g = {.nk = gemm_k_panels(t, bk),
	               .next_k = gemm_k_stream(t, nw, bm) ? 0 : ENTRY_NEXT_K};
	for (uint32_t w = 0; w < nw; w++)
		g.issues[w] = p * (worker_rows(bm, nw, w) + 2) + 5;
	SupClock s;
	sup_start(&s, c, 0);
	sup_op(&s, 0, SUP_M11, SUP_PLAIN); /* setzi the entries */
	sup_op(&s, 0, SUP_M12, SUP_PLAIN);
	if (t == GEMM_F32)
		sup_op(&s, 0, 0, SUP_TAKEN); /* bri to the f16 entry's code */
	if (nw == 5)
		return five_cycles(&s, &g, t, gemm_n_panels(bn));
	static const unsigned base[6] = {SUP_M1, SUP_M2, SUP_M3,
	                                 SUP_M4, SUP_M5, SUP_M6};
	for (int w = 0; w < 6; w++)
		sup_op(&s, SUP_M0, base[w], SUP_PLAIN); /* add */
	sup_op(&s, SUP_M0, SUP_M7, SUP_PLAIN);          /* ld32 B */
	sup_op(&s, SUP_M0, SUP_M9, SUP_PLAIN);          /* ld32 flags */
	if (t == GEMM_F8) {
		sup_op(&s, SUP_M0, SUP_M8, SUP_PLAIN);
		sup_op(&s, SUP_M0, SUP_M13, SUP_PLAIN);
	}
	for (int w = 0; w < 6; w++)
		sup_op(&s, base[w], 0, SUP_PUT);
	sup_op(&s, SUP_M7, 0, SUP_PUT); /* $CCCSLOAD */
	if (t == GEMM_F8) {
		sup_op(&s, SUP_M8, 0, SUP_PUT);
		sup_op(&s, SUP_M13, 0, SUP_PUT);
	}
	if (gemm_n_chained(t, nw, bm, bn, bk))
		return nchained_cycles(&s, bm, bn, bk);
	if (gemm_k_primed(t, nw, bm, bk))
		return primed_cycles(&s, t, bm, bn, bk,
		                     gemm_k_chained(t, nw, bm, bk));
	sup_op(&s, SUP_M0, SUP_M6, SUP_PLAIN);            /* ld32 the K entry */
	sup_op(&s, SUP_M12 | SUP_M9, SUP_M11, SUP_PLAIN); /* movz */
	sup_op(&s, SUP_M0, SUP_M2, SUP_PLAIN);
	sup_op(&s, SUP_M0, SUP_M5, SUP_PLAIN);
	sup_op(&s, SUP_M0, SUP_M8, SUP_PLAIN);
	sup_op(&s, SUP_M0, SUP_M14, SUP_PLAIN);
	sup_op(&s, SUP_M12 | SUP_M6, SUP_M6,
	       SUP_PLAIN); /* add: the next K-panel's entry */
	sup_ops(&s, 32);   /* the first panel's weights */
	sup_op(&s, SUP_M8, 0, g.nk == 1 ? SUP_TAKEN : SUP_PLAIN); /* brz */
	uint32_t np = gemm_n_panels(bn);
	Periods pp;
	periods_start(&pp);
	for (uint32_t q = 0; q < np; q++) {
		uint64_t r = n_panel(&s, &g, q == 0, q == np - 1);
		q = periods_step(&pp, &s, q, np, r);
	}
	sup_sync(&s);
	return sup_return(&s, 0);
}

/* The overlapped phase's five-worker part (gemm.h; docs/bench-gemm.md,
 * "The third step"). */

const char *
gemm_worker_entry(GemmDtype t, int zero)
{
	if (t == GEMM_F32)
		return zero ? "gemm_f32_worker_zero" : "gemm_f32_worker";
	if (t == GEMM_F16)
		return zero ? "gemm_f16_worker_zero" : "gemm_f16_worker";
	return zero ? "gemm_f8_worker_zero" : "gemm_f8_worker";
}

GemmEntry
gemm_panel(const GemmCall *c, uint32_t p, int *zero, uint32_t *a_panel)
{
	uint32_t nk = gemm_k_panels(c->t, c->bk), k = p % nk;
	*zero = c->opt.zero && k == 0;
	*a_panel = c->a + k * c->bm * GEMM_A_ROW_BYTES;
	return k ? GEMM_NEXT_K : p ? GEMM_NEXT_N : GEMM_FULL;
}

int
gemm_rest(const GemmCall *c, GemmCall rest[2])
{
	uint32_t nk = gemm_k_panels(c->t, c->bk), np = gemm_n_panels(c->bn);
	uint32_t q = c->opt.five / nk, k0 = c->opt.five % nk, n = 0;
	uint32_t crow = c_row_bytes(c->t) * c->bm;
	GemmCall base = *c;
	base.opt.workers = 6;
	base.opt.five = 0;
	base.opt.calls = 0;
	if (k0 && q < np) { /* the rest of the N-panel it ends in */
		GemmCall *r = &rest[n++];
		*r = base;
		r->a = c->a + k0 * c->bm * GEMM_A_ROW_BYTES;
		r->bk = c->bk - k0 * gemm_k_panel(c->t);
		r->bn = c->bn - GEMM_COLS * q < GEMM_COLS
		            ? c->bn - GEMM_COLS * q
		            : GEMM_COLS;
		r->b = c->b + (q * nk + k0) * GEMM_B_PANEL_BYTES;
		r->c = c->c + q * crow;
		r->opt.zero = 0; /* its first K-panels are in C */
		q++;
	}
	if (q < np) {
		GemmCall *r = &rest[n++];
		*r = base;
		r->bn = c->bn - GEMM_COLS * q;
		r->b = c->b + q * nk * GEMM_B_PANEL_BYTES;
		r->c = c->c + q * crow;
	}
	return (int)n;
}

void
gemm_overlap_args_fill(const GemmCall *c, uint8_t out[GEMM_OVERLAP_ARGS_BYTES])
{
	GemmCall five = *c;
	five.opt.workers = 5;
	memset(out, 0, GEMM_OVERLAP_ARGS_BYTES);
	gemm_args_fill(&five, out);
	GemmCall rest[2];
	int n = gemm_rest(c, rest);
	for (int i = 0; i < n; i++)
		gemm_args_fill(&rest[i], out + (i + 1) * GEMM_ARGS_BYTES);
}

static uint64_t
entry_issues(GemmEntry kind)
{
	return kind == GEMM_FULL     ? ENTRY_FULL
	       : kind == GEMM_NEXT_N ? ENTRY_NEXT_N
	                             : ENTRY_NEXT_K;
}

/* The five workers' entries of the chained streams (kernels/gemm.inc), by
 * the panel's place in its N-panel and the streams' kind; [1] the form
 * that zeroes C first, where one exists. A cold stream starts an N-panel,
 * a cold-and-drain stream is the N-panel's only K-panel; f16 has no
 * cold-and-drain stream (gemm_five_count keeps its panels from needing
 * it), so its name is one codegen refuses. f8's preloaded streams
 * (five_preload) share the plain cold-and-drain stream. */
enum { FIVE_COLD, FIVE_COLD_DRAIN, FIVE_STREAM, FIVE_DRAIN, FIVE_ROLES };
enum { FIVE_F16, FIVE_F8, FIVE_F8_PRELOADED, FIVE_KINDS };
static const char *const five_worker[FIVE_ROLES][FIVE_KINDS][2] = {
    [FIVE_COLD] = {{"gemm_f16_cworker", "gemm_f16_cworker_zero"},
                   {"gemm_f8_cworker", "gemm_f8_cworker_zero"},
                   {"gemm_f8_nworker", "gemm_f8_nworker_zero"}},
    [FIVE_COLD_DRAIN] = {{"gemm_f16_cworker_cd", "gemm_f16_cworker_cd"},
                         {"gemm_f8_cworker_cd", "gemm_f8_cworker_cd_zero"},
                         {"gemm_f8_cworker_cd", "gemm_f8_cworker_cd_zero"}},
    [FIVE_STREAM] = {{"gemm_f16_cworker_stream", "gemm_f16_cworker_stream"},
                     {"gemm_f8_cworker_stream", "gemm_f8_cworker_stream"},
                     {"gemm_f8_nworker_stream", "gemm_f8_nworker_stream"}},
    [FIVE_DRAIN] = {{"gemm_f16_cworker_drain", "gemm_f16_cworker_drain"},
                    {"gemm_f8_cworker_drain", "gemm_f8_cworker_drain"},
                    {"gemm_f8_nworker_drain", "gemm_f8_nworker_drain"}},
};

void
gemm_five_run(const GemmCall *c, uint32_t p, uint32_t panels, GemmRun *r)
{
	int zero;
	uint32_t a, nk = gemm_k_panels(c->t, c->bk), k = p % nk;
	GemmEntry kind = gemm_panel(c, p, &zero, &a);
	uint32_t ph = c->t == GEMM_F32 ? 8 : 4;
	r->offset = kind == GEMM_NEXT_N   ? GEMM_ENTRY_NEXT_N
	            : kind == GEMM_NEXT_K ? GEMM_ENTRY_NEXT_K
	                                  : 0;
	r->issues = (uint32_t)entry_issues(kind) + 2 * ph + 5;
	r->worker = gemm_worker_entry(c->t, zero);
	if (c->opt.plain5 || !gemm_five_chained(c->t, c->bm, c->bk))
		return;
	/* the chained streams: an N-panel's first K-panel starts cold, a
	 * further one chained; the N-panel's last K-panel and the five-worker
	 * panels' last drain (the rest calls start cold). Where A's jump fits
	 * one field, the N-chained call's copies: a run after a chained end
	 * starts without its leading loads. */
	int first = k == 0, last = k == nk - 1 || p + 1 >= panels,
	    pre = five_preload(c->t, c->bm, c->bk);
	int streams = c->t != GEMM_F8 ? FIVE_F16
	              : pre           ? FIVE_F8_PRELOADED
	                              : FIVE_F8;
	int role = first  ? last ? FIVE_COLD_DRAIN : FIVE_COLD
	           : last ? FIVE_DRAIN
	                  : FIVE_STREAM;
	r->worker = five_worker[role][streams][zero != 0];
	if (first) {
		r->issues = (uint32_t)entry_issues(kind) + (last ? 13 : 7);
		return;
	}
	r->offset = 0;
	r->issues = (last ? 9 : 3) - (uint32_t)pre;
}

int
gemm_five_count(const GemmCall *c, uint32_t panels)
{
	uint32_t nk = gemm_k_panels(c->t, c->bk);
	return c->t != GEMM_F16 || c->opt.plain5 ||
	       !gemm_five_chained(c->t, c->bm, c->bk) || panels % nk != 1;
}

uint32_t
gemm_overlap_csrs(GemmDtype t)
{
	return t == GEMM_F8 ? 8 : 6;
}

uint64_t
gemm_overlap_setup(const Chip *c, GemmDtype t)
{
	return sup_csr_setup(c, gemm_overlap_csrs(t));
}

void
gemm_block(const Chip *c, GemmDtype t, uint32_t bm, const GemmRun *run,
           uint64_t at, GemmBlock *b)
{
	uint64_t p = t == GEMM_F32 ? 8 : 4, first[5], exit[6] = {0};
	SupClock s;
	sup_start(&s, c, at);
	sup_sync(&s);
	sup_op(&s, 0, SUP_M1, SUP_PLAIN); /* setzi the entry */
	sup_op(&s, 0, SUP_M2, SUP_PLAIN); /* setzi the A panel */
	sup_ops(&s, 32);                  /* ld128putcs */
	b->exit_min = UINT64_MAX;
	b->exit_max = 0;
	for (int w = 0; w < 5; w++) {
		b->run[w] = sup_run(&s, SUP_M1 | SUP_M2, w, &first[w]);
		uint64_t n = bm / 5 + ((uint32_t)w < bm % 5);
		uint64_t issues = p * (n ? n : 1) + run->issues;
		exit[w] = first[w] + 6 * (issues - 1);
		if (exit[w] < b->exit_min)
			b->exit_min = exit[w];
		if (exit[w] > b->exit_max)
			b->exit_max = exit[w];
	}
	sup_workers(&s, exit);
	/* slots 0-4 are the workers': the supervisor's next is in slot 5 */
	b->open = s.t + (5 + CHIP_SLOTS - s.t % CHIP_SLOTS) % CHIP_SLOTS;
}

static uint64_t
grid_down(uint64_t x)
{
	return x / CHIP_SLOTS * CHIP_SLOTS;
}

void
gemm_windows(const Chip *c, GemmDtype t, const uint32_t *bm, uint32_t n,
             uint32_t bk, uint32_t panels, int plain, const uint64_t *min_at,
             GemmWindows *w)
{
	/* absolute cycles for the model: block 0 from BASE + phase, the
	 * frame's cycle 0 at a slot 5 */
	enum { BASE = 6 * 64 };
	uint64_t sl = chip_rule(c, TIMING_SYNC_LOCAL);
	GemmCall call = {.t = t, .bk = bk, .opt = {.plain5 = plain}};
	GemmRun run;
	memset(w, 0, sizeof *w);
	w->panels = panels;
	w->at = xcalloc(panels ? panels : 1, sizeof *w->at);
	w->open = xcalloc(panels ? panels : 1, sizeof *w->open);
	w->close = xcalloc(panels ? panels : 1, sizeof *w->close);
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint64_t ph = 0; ph < CHIP_SLOTS; ph++)
		for (uint32_t i = 0; i < n; i++) {
			GemmBlock b;
			call.bm = bm[i];
			gemm_five_run(&call, 0, panels, &run);
			gemm_block(c, t, bm[i], &run, BASE + ph, &b);
			if (b.open - (BASE + ph) > w->lead)
				w->lead = b.open - (BASE + ph);
			if (b.exit_min - b.open < lo)
				lo = b.exit_min - b.open;
			if (b.exit_max - b.open > hi)
				hi = b.exit_max - b.open;
		}
	for (uint32_t p = 1; p < panels; p++) {
		uint64_t at = hi + sl - 1;
		if (at < w->open[p - 1])
			at = w->open[p - 1];
		if (min_at && min_at[p] > at)
			at = min_at[p];
		w->at[p] = at;
		uint64_t close = grid_down(lo + CHIP_SLOTS);
		w->close[p - 1] = close < grid_down(at) ? close : grid_down(at);
		uint64_t origin = BASE + 5; /* cycle 0: a slot 5 */
		lo = UINT64_MAX;
		hi = 0;
		for (uint32_t i = 0; i < n; i++) {
			GemmBlock b;
			call.bm = bm[i];
			gemm_five_run(&call, p, panels, &run);
			gemm_block(c, t, bm[i], &run, origin + at, &b);
			w->open[p] = b.open - origin;
			if (b.exit_min - origin < lo)
				lo = b.exit_min - origin;
			if (b.exit_max - origin > hi)
				hi = b.exit_max - origin;
		}
	}
	if (panels) {
		w->close[panels - 1] = grid_down(lo + CHIP_SLOTS);
		w->done = hi;
	}
}

void
gemm_windows_free(GemmWindows *w)
{
	free(w->at);
	free(w->open);
	free(w->close);
	memset(w, 0, sizeof *w);
}

/*
 * gemm.c - lowering a GEMM plan (plan/plan.h) to buffers, steps and tensor
 * pieces.
 *
 * Contract: requires a priced GemmPlan and the graph ids of A [M x K],
 * B [K x N] and C [M x N]; adds to the Lowered, for tile (i, j) = i * pn + j:
 *   buffers  "A chunk" and "B chunk" (receive, used every superstep),
 *            "C block" (the output), "A input"/"B input" (the chunks this
 *            tile stores and sends), "kernel arguments"
 *   steps    per superstep s: an exchange (A chunk (i, s) from tile
 *            (i, s mod pn) to row i; B chunk (s, j) from tile (s mod pm, j)
 *            to column j, each owner included) and a compute step (the
 *            GEMM kernel accumulating into C; the first one from zero)
 *   tensors  A, B and C as pieces in the kernel's layouts
 *            (docs/kernel-gemm.md)
 * Every input element is stored exactly once.
 */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

#include "../kernels/gemm.h"

static uint32_t
ceil_div(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

static uint32_t
min_u(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* param: 0 dtype, 1 rows, 2 cols, 3 k, 4 zero; ref: A, B, C. */
static void
fill_gemm_args(const KernelCall *c, const uint32_t *addr, uint8_t *out)
{
	GemmOptions opt = {.zero = (int)c->param[4]};
	gemm_args_fill((GemmDtype)c->param[0], c->param[1], c->param[2],
	               c->param[3], addr[0], addr[1], addr[2], &opt, out);
}

typedef struct {
	const GemmPlan *p;
	GemmDtype g;
	uint32_t pm, pn;
	int32_t *a_rx, *b_rx, *c_blk; /* per tile */
	int32_t *a_in, *b_in;         /* per superstep: the owner's copy */
} Gemm;

static uint32_t
rows_of(const Gemm *G, uint32_t i)
{
	return min_u(G->p->bm, G->p->m - i * G->p->bm);
}

static uint32_t
cols_of(const Gemm *G, uint32_t j)
{
	return min_u(G->p->bn, G->p->n - j * G->p->bn);
}

static uint32_t
k_of(const Gemm *G, uint32_t s)
{
	return min_u(G->p->kc, G->p->k - s * G->p->kc);
}

static void
tile_buffers(Lowered *l, Gemm *G)
{
	GemmDtype g = G->g;
	for (uint32_t i = 0; i < G->pm; i++)
		for (uint32_t j = 0; j < G->pn; j++) {
			uint32_t t = i * G->pn + j, m = rows_of(G, i),
			         n = cols_of(G, j), kc = G->p->kc;
			G->c_blk[t] = lower_buffer(
			    l, t, gemm_c_bytes(g, m, n) + gemm_c_tail(g), 16,
			    REGION_INTERLEAVED, 0, INT32_MAX, "C block");
			G->a_rx[t] = lower_buffer(
			    l, t, gemm_a_bytes(g, m, kc) + GEMM_A_TAIL, 16,
			    REGION_ANY, 0, INT32_MAX, "A chunk");
			l->buf[G->a_rx[t]].apart = G->c_blk[t];
			G->b_rx[t] = lower_buffer(l, t, gemm_b_bytes(g, kc, n),
			                          16, REGION_INTERLEAVED, 0,
			                          INT32_MAX, "B chunk");
		}
}

/* The stored chunks and their tensor pieces. A's chunk (i, s) is kept in
 * the kernel's A layout: one row-major [rows x K-panel] block per panel. */
static void
input_chunks(Lowered *l, Gemm *G, TensorPlace *ta, TensorPlace *tb)
{
	GemmDtype g = G->g;
	uint32_t kp = gemm_k_panel(g);
	for (uint32_t s = 0; s < G->p->steps; s++) {
		uint32_t ks = k_of(G, s);
		for (uint32_t i = 0; i < G->pm; i++) {
			uint32_t owner = i * G->pn + s % G->pn,
			         m = rows_of(G, i);
			int32_t b =
			    lower_buffer(l, owner, gemm_a_bytes(g, m, ks), 16,
			                 REGION_ANY, 0, INT32_MAX, "A input");
			G->a_in[s * G->pm + i] = b;
			for (uint32_t q = 0; q * kp < ks; q++) {
				Piece *pc = lower_piece(ta);
				*pc =
				    (Piece){.tile = owner,
				            .at = {b, q * m * GEMM_A_ROW_BYTES},
				            .row0 = i * G->p->bm,
				            .rows = m,
				            .col0 = s * G->p->kc + q * kp,
				            .cols = min_u(kp, ks - q * kp),
				            .pad_rows = m,
				            .pad_cols = kp,
				            .format = PF_ROWMAJOR};
			}
		}
		for (uint32_t j = 0; j < G->pn; j++) {
			uint32_t owner = (s % G->pm) * G->pn + j,
			         n = cols_of(G, j);
			int32_t b =
			    lower_buffer(l, owner, gemm_b_bytes(g, ks, n), 16,
			                 REGION_ANY, 0, INT32_MAX, "B input");
			G->b_in[s * G->pn + j] = b;
			Piece *pc = lower_piece(tb);
			*pc = (Piece){.tile = owner,
			              .at = {b, 0},
			              .row0 = s * G->p->kc,
			              .rows = ks,
			              .col0 = j * G->p->bn,
			              .cols = n,
			              .pad_rows = ceil_div(ks, kp) * kp,
			              .pad_cols = ceil_div(n, 16) * 16,
			              .format = PF_GEMM_B};
		}
	}
}

static void
superstep(Lowered *l, Gemm *G, uint32_t s)
{
	GemmDtype g = G->g;
	uint32_t ks = k_of(G, s);
	Step *x = lower_step(l, STEP_EXCHANGE, "gemm: A and B chunks");
	for (uint32_t i = 0; i < G->pm; i++) {
		uint32_t owner = i * G->pn + s % G->pn, m = rows_of(G, i);
		Transfer *t = lower_transfer(
		    x, owner, (BufRef){G->a_in[s * G->pm + i], 0},
		    gemm_a_bytes(g, m, ks) / 4, G->pn);
		for (uint32_t j = 0; j < G->pn; j++) {
			t->dst_tile[j] = i * G->pn + j;
			t->dst[j] = (BufRef){G->a_rx[i * G->pn + j], 0};
		}
	}
	for (uint32_t j = 0; j < G->pn; j++) {
		uint32_t owner = (s % G->pm) * G->pn + j, n = cols_of(G, j);
		Transfer *t = lower_transfer(
		    x, owner, (BufRef){G->b_in[s * G->pn + j], 0},
		    gemm_b_bytes(g, ks, n) / 4, G->pm);
		for (uint32_t i = 0; i < G->pm; i++) {
			t->dst_tile[i] = i * G->pn + j;
			t->dst[i] = (BufRef){G->b_rx[i * G->pn + j], 0};
		}
	}
	Step *c = lower_step(l, STEP_COMPUTE, "gemm: multiply");
	for (uint32_t i = 0; i < G->pm; i++)
		for (uint32_t j = 0; j < G->pn; j++) {
			uint32_t t = i * G->pn + j, m = rows_of(G, i),
			         n = cols_of(G, j);
			KernelCall *k =
			    lower_call(l, c, t, gemm_entry(g), GEMM_ARGS_BYTES);
			k->ref[0] = (BufRef){G->a_rx[t], 0};
			k->ref[1] = (BufRef){G->b_rx[t], 0};
			k->ref[2] = (BufRef){G->c_blk[t], 0};
			k->nref = 3;
			k->param[0] = g;
			k->param[1] = m;
			k->param[2] = n;
			k->param[3] = ks;
			k->param[4] = s == 0;
			k->fill = fill_gemm_args;
			k->cycles = gemm_tile_cycles(g, m, n, ks);
			if (k->cycles > c->cycles)
				c->cycles = k->cycles;
		}
}

int
lower_gemm(Lowered *l, const GemmPlan *p, int32_t a, int32_t b, int32_t c,
           Diag *d)
{
	Gemm G = {.p = p, .g = plan_gemm_dtype(p->dtype)};
	G.pm = ceil_div(p->m, p->bm);
	G.pn = ceil_div(p->n, p->bn);
	if (G.pm * G.pn > l->tiles)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "gemm plan needs %u x %u tiles, the program "
		                "has %u",
		                G.pm, G.pn, l->tiles);
	uint32_t tiles = G.pm * G.pn;
	G.a_rx = xcalloc(tiles, sizeof *G.a_rx);
	G.b_rx = xcalloc(tiles, sizeof *G.b_rx);
	G.c_blk = xcalloc(tiles, sizeof *G.c_blk);
	G.a_in = xcalloc((size_t)p->steps * G.pm, sizeof *G.a_in);
	G.b_in = xcalloc((size_t)p->steps * G.pn, sizeof *G.b_in);
	DType ct = p->dtype == DT_F32 ? DT_F32 : DT_F16;
	TensorPlace *ta = lower_tensor(l, a, p->m, p->k, (uint8_t)p->dtype);
	TensorPlace *tb = lower_tensor(l, b, p->k, p->n, (uint8_t)p->dtype);
	tile_buffers(l, &G);
	input_chunks(l, &G, ta, tb);
	TensorPlace *tc = lower_tensor(l, c, p->m, p->n, (uint8_t)ct);
	for (uint32_t i = 0; i < G.pm; i++)
		for (uint32_t j = 0; j < G.pn; j++) {
			uint32_t t = i * G.pn + j, n = cols_of(&G, j);
			Piece *pc = lower_piece(tc);
			*pc = (Piece){.tile = t,
			              .at = {G.c_blk[t], 0},
			              .row0 = i * p->bm,
			              .rows = rows_of(&G, i),
			              .col0 = j * p->bn,
			              .cols = n,
			              .pad_rows = rows_of(&G, i),
			              .pad_cols = ceil_div(n, 16) * 16,
			              .format = PF_GEMM_C};
		}
	for (uint32_t s = 0; s < p->steps; s++)
		superstep(l, &G, s);
	free(G.a_rx);
	free(G.b_rx);
	free(G.c_blk);
	free(G.a_in);
	free(G.b_in);
	return IPU_OK;
}

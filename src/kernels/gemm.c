/*
 * gemm.c - host side of the per-tile GEMM kernel (kernels/gemm.S,
 * kernels/gemm_f8.S): layouts, argument block and cycle formula.
 * docs/kernel-gemm.md is the reference for every layout and constant
 * here.
 */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

/* Argument block offsets: must match kernels/gemm.inc. */
enum {
	ARG_A = 0,
	ARG_B = 4,
	ARG_C = 8,
	ARG_APANEL = 12,
	ARG_CPANEL = 16,
	ARG_NP = 20,
	ARG_NK = 24,
	ARG_FLAGS = 28,
	ARG_FP8FMT = 32,
	ARG_FP8SCL = 36,
	ARG_VERTEX = 48,
	V_OFFA = 0,
	V_CPTR = 4,
	V_ROWS1 = 8,
	V_OFFC = 12,
	VERTEX_BYTES = 16,
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

const char *
gemm_entry(GemmDtype t)
{
	return t == GEMM_F32   ? "gemm_f32"
	       : t == GEMM_F16 ? "gemm_f16"
	                       : "gemm_f8";
}

/*
 * Rows split as evenly as possible: worker w gets bm / 6 rows, one more if
 * w < bm % 6. With fewer than six rows the idle workers repeat row w % bm:
 * they load its partials in their first bundles and store the same
 * results ten bundles later than any of them loads, so the copies agree.
 */
void
gemm_args_fill(const GemmCall *c, uint8_t out[GEMM_ARGS_BYTES])
{
	GemmDtype t = c->t;
	uint32_t bm = c->bm, crow = c_row_bytes(t);
	memset(out, 0, GEMM_ARGS_BYTES);
	put_le32(out + ARG_A, c->a);
	put_le32(out + ARG_B, c->b);
	put_le32(out + ARG_C, c->c);
	put_le32(out + ARG_APANEL, bm * GEMM_A_ROW_BYTES);
	put_le32(out + ARG_CPANEL, bm * crow);
	put_le32(out + ARG_NP, gemm_n_panels(c->bn));
	put_le32(out + ARG_NK, gemm_k_panels(t, c->bk));
	put_le32(out + ARG_FLAGS, c->opt.zero ? 1 : 0);
	put_le32(out + ARG_FP8FMT,
	         (uint32_t)c->opt.fp8_in << 1 | (uint32_t)c->opt.fp8_w);
	put_le32(out + ARG_FP8SCL, (uint32_t)c->opt.fp8_scale & 0x3f);
	for (uint32_t w = 0, first = 0; w < 6; w++) {
		uint32_t n = bm / 6 + (w < bm % 6), row = first;
		if (n == 0) {
			n = 1;
			row = w % bm;
		}
		uint8_t *v = out + ARG_VERTEX + w * VERTEX_BYTES;
		put_le32(v + V_OFFA, row * GEMM_A_ROW_BYTES);
		put_le32(v + V_CPTR, c->c + row * crow);
		put_le32(v + V_ROWS1, n - 1);
		put_le32(v + V_OFFC, row * crow);
		first += bm / 6 + (w < bm % 6);
	}
}

/*
 * The cycle formula (docs/kernel-gemm.md derives it). P = AMP phases per
 * row (4 for f16 and f8, 8 for f32); the busiest workers have n =
 * ceil(bm / 6) rows and there are r = bm - 6(n - 1) of them. A worker
 * issues W = P(n + 2) + 10 times per panel (n rows plus the warm-up and
 * drain groups, one load and two store bundles, five set-up issues, rpt,
 * exit), once every 6 cycles; the supervisor adds 36 cycles per panel (32
 * ld128putcs, runall, the sync's latency), 2 more when a worker in slot 4
 * or 5 is among the busiest. A new N-panel's vertex update takes 29
 * cycles, less the slots that the workers with one row fewer free early
 * (P per such worker). The call itself costs 46 (50 for f8).
 */
uint64_t
gemm_tile_cycles(GemmDtype t, uint32_t bm, uint32_t bn, uint32_t bk)
{
	uint64_t p = t == GEMM_F32 ? 8 : 4;
	uint64_t n = (bm + 5) / 6, r = bm - 6 * (n - 1);
	uint64_t w = p * (n + 2) + 10;
	uint64_t panel = 6 * w + 36 + (r >= 5 ? 2 : 0);
	uint64_t hidden = n > 1 ? p * (6 - r) : 0;
	uint64_t npanel = hidden < 29 ? 29 - hidden : 0;
	uint64_t np = gemm_n_panels(bn), nk = gemm_k_panels(t, bk);
	return np * nk * panel + (np - 1) * npanel + (t == GEMM_F8 ? 50 : 46);
}

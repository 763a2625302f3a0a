/*
 * pack.c - host side of kernels/pack.S: the checks, the argument block
 * (the workers' panel ranges and the padding the supervisor zeroes) and
 * the exact cycle count, which follows the issue model and the timing
 * rules (docs/emulator.md, docs/fidelity.md).
 */
#include "pack.h"

#include <string.h>

#include "../util/util.h"
#include "kernels.h"

/* Argument block offsets: must match kernels/pack.S. */
enum {
	ARG_TDOWN = 0,
	ARG_TBACK = 4,
	ARG_BAND = 8,
	ARG_PANEL = 12,
	ARG_WRAP = 16,
	ARG_NK1 = 20,
	ARG_ZN = 24,
	ARG_ZA = 28,
	ARG_ZR1 = 32,
	ARG_KN = 36,
	ARG_KA = 40,
	ARG_KM = 44,
	ARG_KZ = 48,
	ARG_KSTEP = 52,
	ARG_ZSKIP = 56,
	ARG_KW = 60,
	ARG_ONE = 64,
	ARG_OA = 68,
	ARG_VERTEX = 72,
	VERTEX_BYTES = 16,
	PANEL_ROW_BYTES = 32, /* a weight panel row: one K-panel, any type */
};

/* Worker issues (PACK_WORKER): an idle worker's run; the set-up before
 * the first panel; after each panel the step, the count and its test;
 * the branch back to a panel of the same n-panel; the wrap into the
 * next; the exit. Panel bodies: the transposes' 4 bands of rpt, blocks,
 * 3 steps, between setzi and the dst fix; the copy's rpt of 16 rows. */
enum {
	W_IDLE = 3,
	W_SETUP = 11,
	W_AFTER = 3,
	W_NEXT = 1,
	W_WRAP = 3,
	W_EXIT = 1,
	B_T16 = 1 + 4 * (1 + 4 * 11 + 3) + 1,
	B_T32 = 1 + 4 * (1 + 8 * 5 + 3) + 1,
	B_T8 = 1 + 8 * 35 + 1,
	B_COPY = 1 + 16 * 8,
};

const char *
pack_entry(GemmDtype t, int transposed)
{
	if (transposed)
		return "pack_bt";
	return t == GEMM_F16   ? "pack_b_f16"
	       : t == GEMM_F32 ? "pack_b_f32"
	                       : "pack_b_f8";
}

const char *
pack_object(GemmDtype t, int transposed)
{
	return t == GEMM_F8 && !transposed ? "pack_f8" : "pack";
}

uint32_t
pack_src_rows(GemmDtype t, int transposed, uint32_t bk, uint32_t bn)
{
	return transposed ? gemm_n_panels(bn) * GEMM_COLS
	                  : gemm_k_panels(t, bk) * gemm_k_panel(t);
}

uint32_t
pack_src_row_bytes(GemmDtype t, int transposed, uint32_t bk, uint32_t bn)
{
	return transposed ? gemm_k_panels(t, bk) * PANEL_ROW_BYTES
	                  : gemm_n_panels(bn) * GEMM_COLS * gemm_in_bytes(t);
}

int
pack_check(const PackCall *c, Diag *d)
{
	if (!c->bk || !c->bn)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "pack: empty block %u x %u", c->bk, c->bn);
	const char *bad = c->src % 8      ? "src address"
	                  : c->dst % 8    ? "dst address"
	                  : c->stride % 8 ? "row stride"
	                                  : NULL;
	if (bad)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "pack: %s is not a multiple of 8 (src 0x%x, "
		                "stride %u, dst 0x%x)",
		                bad, c->src, c->stride, c->dst);
	if (c->one &&
	    (c->t != GEMM_F8 || c->transposed || c->bn % GEMM_COLS == 0))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "pack: a column of 0x%02x past bn %u is for "
		                "f8 from B with a padding column",
		                c->one, c->bn);
	uint32_t rows = pack_src_rows(c->t, c->transposed, c->bk, c->bn),
	         row = pack_src_row_bytes(c->t, c->transposed, c->bk, c->bn);
	if (c->stride < row)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "pack: row stride %u is shorter than a source "
		                "row padded to whole panels (%u bytes)",
		                c->stride, row);
	uint64_t src_end =
	             (uint64_t)c->src + (uint64_t)(rows - 1) * c->stride + row,
	         dst_end = (uint64_t)c->dst + gemm_b_bytes(c->t, c->bk, c->bn);
	if (src_end > UINT32_MAX || dst_end > UINT32_MAX)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0, "pack: the %s runs past 4 GiB",
		    src_end > UINT32_MAX ? "source" : "destination");
	if (c->dst < src_end && c->src < dst_end)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "pack: dst [0x%x, 0x%llx) overlaps the source "
		                "[0x%x, 0x%llx)",
		                c->dst, (unsigned long long)dst_end, c->src,
		                (unsigned long long)src_end);
	return IPU_OK;
}

typedef struct {
	uint32_t e, kp, np, nk, panels;
	uint32_t vr; /* rows of the last n-panel that are B's columns */
	uint32_t vb; /* bytes of the last K-panel's rows that are B's K */
} Dims;

static Dims
dims_of(const PackCall *c)
{
	Dims m = {.e = gemm_in_bytes(c->t),
	          .kp = gemm_k_panel(c->t),
	          .np = gemm_n_panels(c->bn),
	          .nk = gemm_k_panels(c->t, c->bk)};
	m.panels = m.np * m.nk;
	m.vr = c->bn - (m.np - 1) * GEMM_COLS;
	m.vb = (c->bk - (m.nk - 1) * m.kp) * m.e;
	return m;
}

/* The rows of each of the last n-panel's panels that the supervisor
 * zeroes: those past bn, but column bn's with `one`. */
static uint32_t
zero_rows(const PackCall *c, const Dims *m)
{
	return GEMM_COLS - m->vr - (c->one ? 1 : 0);
}

/* Worker w's panels [first, first + count), n-panel outer. */
static void
share(const Dims *m, int w, uint32_t *first, uint32_t *count)
{
	uint64_t a = (uint64_t)m->panels * (uint64_t)w / 6,
	         b = (uint64_t)m->panels * (uint64_t)(w + 1) / 6;
	*first = (uint32_t)a;
	*count = (uint32_t)(b - a);
}

/* Where panel (q, p) starts reading the source. */
static uint32_t
panel_src(const PackCall *c, const Dims *m, uint32_t q, uint32_t p)
{
	if (c->transposed)
		return c->src + q * GEMM_COLS * c->stride + p * PANEL_ROW_BYTES;
	return c->src + p * m->kp * c->stride + q * GEMM_COLS * m->e;
}

void
pack_args_fill(const PackCall *c, uint8_t out[PACK_ARGS_BYTES])
{
	Dims m = dims_of(c);
	uint32_t s = c->stride;
	memset(out, 0, PACK_ARGS_BYTES);
	if (c->transposed) {
		/* the copy: 16 rows of 32 bytes, then the next K-panel */
		put_le32(out + ARG_TDOWN, (s - 24) / 8);
		put_le32(out + ARG_PANEL, PANEL_ROW_BYTES - GEMM_COLS * s);
		put_le32(out + ARG_WRAP,
		         GEMM_COLS * s - m.nk * PANEL_ROW_BYTES);
	} else if (c->t == GEMM_F8) {
		/* 8 bands a panel, each two units of 4 rows x 8 bytes */
		put_le32(out + ARG_TDOWN, s / 8);
		put_le32(out + ARG_TBACK, (uint32_t)((8 - 3 * (int32_t)s) / 8));
		put_le32(out + ARG_BAND, (s - 8) / 8);
		put_le32(out + ARG_WRAP, GEMM_COLS - m.nk * m.kp * s);
	} else {
		/* square blocks of blk rows, 4 bands a panel */
		int32_t blk = (int32_t)(8 / m.e);
		put_le32(out + ARG_TDOWN, s / 8);
		put_le32(out + ARG_TBACK,
		         (uint32_t)((8 - (blk - 1) * (int32_t)s) / 8));
		put_le32(out + ARG_BAND, (uint32_t)blk * s - GEMM_COLS * m.e);
		put_le32(out + ARG_WRAP, GEMM_COLS * m.e - m.nk * m.kp * s);
	}
	put_le32(out + ARG_NK1, m.nk - 1);
	/* column bn's row of the last n-panel: the ones, or the first zero
	 * row */
	uint32_t bn_row = c->dst + (m.np - 1) * m.nk * GEMM_B_PANEL_BYTES +
	                  m.vr * PANEL_ROW_BYTES,
	         zr = zero_rows(c, &m), z0 = GEMM_COLS - zr;
	if (c->one) {
		put_le32(out + ARG_ONE, c->one * 0x01010101u);
		put_le32(out + ARG_OA, bn_row);
	}
	if (zr) {
		put_le32(out + ARG_ZN, m.nk);
		put_le32(out + ARG_ZA, bn_row + (z0 - m.vr) * PANEL_ROW_BYTES);
		put_le32(out + ARG_ZR1, zr - 1);
		put_le32(out + ARG_ZSKIP, z0 * PANEL_ROW_BYTES);
	}
	if (m.vb < PANEL_ROW_BYTES) {
		put_le32(out + ARG_KN, m.np);
		put_le32(out + ARG_KA,
		         c->dst + (m.nk - 1) * GEMM_B_PANEL_BYTES);
		put_le32(out + ARG_KM,
		         m.vb % 4 ? (1u << (8 * (m.vb % 4))) - 1 : 0);
		put_le32(out + ARG_KZ, 7 - m.vb / 4);
		put_le32(out + ARG_KSTEP, m.nk * GEMM_B_PANEL_BYTES);
		put_le32(out + ARG_KW, m.vb / 4 * 4);
	}
	for (int w = 0; w < 6; w++) {
		uint32_t first, count;
		share(&m, w, &first, &count);
		if (!count)
			continue;
		uint32_t q = first / m.nk, p = first % m.nk;
		uint8_t *v = out + ARG_VERTEX + w * VERTEX_BYTES;
		put_le32(v, count);
		put_le32(v + 4, panel_src(c, &m, q, p));
		put_le32(v + 8, c->dst + first * GEMM_B_PANEL_BYTES);
		put_le32(v + 12, m.nk - 1 - p);
	}
}

static uint64_t
worker_issues(const PackCall *c, const Dims *m, int w)
{
	uint32_t first, count;
	share(m, w, &first, &count);
	if (!count)
		return W_IDLE;
	uint64_t body = c->transposed      ? B_COPY
	                : c->t == GEMM_F16 ? B_T16
	                : c->t == GEMM_F32 ? B_T32
	                                   : B_T8;
	uint64_t wraps = 0;
	for (uint32_t t = first; t + 1 < first + count; t++)
		wraps += t % m->nk == m->nk - 1;
	return W_SETUP + count * (body + W_AFTER) + (count - 1) * W_NEXT +
	       wraps * W_WRAP + W_EXIT;
}

/* PACK_MASK6 / PACK_MASK4: n loads, ands, stores through $m12. */
static void
mask_rows(SupClock *s, int n)
{
	static const unsigned reg[6] = {SUP_M3, SUP_M4, SUP_M6,
	                                SUP_M8, SUP_M9, SUP_M11};
	for (int i = 0; i < n; i++)
		sup_op(s, SUP_M12, reg[i], SUP_PLAIN);
	for (int i = 0; i < n; i++)
		sup_op(s, reg[i] | SUP_M5, reg[i], SUP_PLAIN);
	for (int i = 0; i < n; i++)
		sup_op(s, reg[i] | SUP_M12, 0, SUP_PLAIN);
}

/* The supervisor after the sync: bri, pack_padding, br (kernels/pack.S,
 * instruction by instruction). */
static void
padding(SupClock *s, const PackCall *c, const Dims *m)
{
	sup_op(s, 0, 0, SUP_TAKEN); /* bri pack_padding */
	static const unsigned loads[7] = {SUP_M1, SUP_M2, SUP_M6, SUP_M7,
	                                  SUP_M5, SUP_M4, SUP_M8};
	for (int i = 0; i < 7; i++)
		sup_op(s, SUP_M0, loads[i], SUP_PLAIN);
	uint32_t rows = zero_rows(c, m);
	int zero = rows > 0, mask = m->vb < PANEL_ROW_BYTES;
	sup_op(s, SUP_M1, 0, zero ? SUP_PLAIN : SUP_TAKEN); /* brz */
	if (zero) {
		sup_op(s, SUP_M1, SUP_M1, SUP_PLAIN);
		sup_op(s, SUP_M6, SUP_M3, SUP_PLAIN);
		for (uint32_t p = 0; p < m->nk; p++) {
			for (uint32_t r = 0; r < rows; r++) {
				sup_op(s, SUP_M2, 0, SUP_PLAIN);
				sup_ops(s, 7); /* st32 ($m2 ready) */
				sup_op(s, SUP_M2, SUP_M2, SUP_PLAIN);
				sup_op(s, SUP_M3, SUP_M3,
				       r + 1 < rows ? SUP_TAKEN : SUP_PLAIN);
			}
			sup_op(s, SUP_M2 | SUP_M7, SUP_M2, SUP_PLAIN);
			sup_op(s, SUP_M6, SUP_M3, SUP_PLAIN);
			sup_op(s, SUP_M1, SUP_M1,
			       p + 1 < m->nk ? SUP_TAKEN : SUP_PLAIN);
		}
	}
	sup_op(s, SUP_M8, 0, c->one ? SUP_TAKEN : SUP_PLAIN); /* brnz */
	if (c->one) {                                         /* .Lpack_ones */
		sup_op(s, SUP_M0, SUP_M2, SUP_PLAIN);
		sup_op(s, SUP_M0, SUP_M1, SUP_PLAIN);
		for (uint32_t p = 0; p < m->nk; p++) {
			sup_op(s, SUP_M8 | SUP_M2, 0, SUP_PLAIN);
			sup_ops(s, 7); /* st32 ($m2, $m8 ready) */
			sup_op(s, SUP_M2, SUP_M2, SUP_PLAIN);
			sup_op(s, SUP_M1, SUP_M1,
			       p + 1 < m->nk ? SUP_TAKEN : SUP_PLAIN);
		}
		sup_op(s, 0, 0, SUP_TAKEN); /* bri .Lpack_k */
	}
	sup_op(s, SUP_M5, 0, mask ? SUP_PLAIN : SUP_TAKEN); /* brz */
	if (mask) {
		sup_op(s, SUP_M5, SUP_M1, SUP_PLAIN);
		sup_op(s, SUP_M0, SUP_M2, SUP_PLAIN);
		sup_op(s, SUP_M0, SUP_M5, SUP_PLAIN);
		sup_op(s, SUP_M0, SUP_M13, SUP_PLAIN);
		sup_op(s, SUP_M0, SUP_M14, SUP_PLAIN);
		sup_op(s, 0, SUP_M7, SUP_PLAIN);
		sup_op(s, SUP_M4, SUP_M4, SUP_PLAIN);
		sup_op(s, SUP_M7 | SUP_M4, SUP_M7, SUP_PLAIN);
		sup_op(s, SUP_M2 | SUP_M13, SUP_M12, SUP_PLAIN);
		uint64_t kz = 7 - m->vb / 4;
		for (uint32_t q = 0; q < m->np; q++) {
			mask_rows(s, 6);
			mask_rows(s, 6);
			mask_rows(s, 4);
			sup_op(s, SUP_M7, 0, SUP_TAKEN); /* br $m7 */
			if (kz) {
				sup_op(s, SUP_M2, 0, SUP_PLAIN);
				sup_ops(s, 16 * kz - 1);
			}
			sup_op(s, SUP_M2 | SUP_M14, SUP_M2, SUP_PLAIN);
			sup_op(s, SUP_M12 | SUP_M14, SUP_M12, SUP_PLAIN);
			sup_op(s, SUP_M1, SUP_M1,
			       q + 1 < m->np ? SUP_TAKEN : SUP_PLAIN);
		}
	}
}

/* The supervisor's code in pack.S on a SupClock: setzi, add, six CSR
 * writes, runall; worker v starts at its first turn after the launch
 * delay; the sync leaves 6 cycles after the last exit; then the padding. */
uint64_t
pack_cycles(const Chip *chip, const PackCall *c)
{
	Dims m = dims_of(c);
	SupClock s;
	sup_start(&s, chip, 0);
	sup_entry(&s);
	uint64_t first[6], exit[6];
	sup_runall(&s, SUP_M1 | SUP_M2, first);
	for (int v = 0; v < 6; v++)
		exit[v] = first[v] + 6 * (worker_issues(c, &m, v) - 1);
	sup_workers(&s, exit);
	sup_sync(&s);
	padding(&s, c, &m);
	return sup_return(&s, 0);
}

/* pack_b_f16_f8: the argument block (kernels/pack_f8.S, CP_*) and the
 * worker's issues. */
enum {
	CP_DOWN = 0,
	CP_BACK = 4,
	CP_BAND = 8,
	CP_PANEL = 12,
	CP_FMT = 16,
	CP_SCL = 20,
	CP_VERTEX = 24,
	CP_BANDS = 8,   /* bands of 4 rows a panel */
	CP_ROWS = 32,   /* a block's rows: one K-panel of f8 */
	CP_SETUP = 9,   /* the loads and the idle test */
	CP_BAND_I = 55, /* two units of 26, the count, its test, the branch */
	CP_NEXT = 4,    /* into the next panel */
	CP_EXIT = 1,
};

const char *
pack_cast_entry(void)
{
	return "pack_b_f16_f8";
}

const char *
pack_cast_object(void)
{
	return "pack_f8";
}

/* The last byte past the blocks the kernel reads, from src. */
static uint64_t
cast_src_end(const PackCastCall *c)
{
	return (uint64_t)c->src + (uint64_t)(c->panels - 1) * c->panel_stride +
	       (uint64_t)(CP_ROWS - 1) * c->stride + GEMM_COLS * 2;
}

int
pack_cast_check(const PackCastCall *c, Diag *d)
{
	if (!c->panels)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "pack_b_f16_f8: no panels");
	if (c->f8 != DT_F8_F143 && c->f8 != DT_F8_F152)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "pack_b_f16_f8: %s is not an f8 type",
		                dtype_name(c->f8));
	if (c->fp8_scale < -32 || c->fp8_scale > 31)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "pack_b_f16_f8: fp8 scale %d outside -32..31",
		                c->fp8_scale);
	const char *bad = c->src % 8            ? "src address"
	                  : c->dst % 8          ? "dst address"
	                  : c->stride % 8       ? "row stride"
	                  : c->panel_stride % 8 ? "panel stride"
	                                        : NULL;
	if (bad)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "pack_b_f16_f8: %s is not a multiple of 8 (src "
		                "0x%x, stride %u, panel stride %u, dst 0x%x)",
		                bad, c->src, c->stride, c->panel_stride,
		                c->dst);
	if (c->stride < GEMM_COLS * 2)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "pack_b_f16_f8: row stride %u is shorter than a "
		    "block's row (32 bytes)",
		    c->stride);
	uint64_t src_end = cast_src_end(c),
	         dst_end = (uint64_t)c->dst +
	                   (uint64_t)c->panels * GEMM_B_PANEL_BYTES;
	if (src_end > UINT32_MAX || dst_end > UINT32_MAX)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "pack_b_f16_f8: the %s runs past 4 GiB",
		                src_end > UINT32_MAX ? "source"
		                                     : "destination");
	if (c->dst < src_end && c->src < dst_end)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "pack_b_f16_f8: dst [0x%x, 0x%llx) overlaps the "
		    "blocks [0x%x, 0x%llx)",
		    c->dst, (unsigned long long)dst_end, c->src,
		    (unsigned long long)src_end);
	return IPU_OK;
}

/* Worker w's bands [first, first + count) of 8 x panels. */
static void
cast_share(const PackCastCall *c, int w, uint32_t *first, uint32_t *count)
{
	uint64_t t = (uint64_t)c->panels * CP_BANDS;
	*first = (uint32_t)(t * (uint64_t)w / 6);
	*count = (uint32_t)(t * (uint64_t)(w + 1) / 6 - *first);
}

void
pack_cast_args_fill(const PackCastCall *c, uint8_t out[PACK_CAST_ARGS_BYTES])
{
	int32_t s = (int32_t)c->stride;
	memset(out, 0, PACK_CAST_ARGS_BYTES);
	put_le32(out + CP_DOWN, (uint32_t)((s - 8) / 8));
	put_le32(out + CP_BACK, (uint32_t)((8 - 3 * s) / 8));
	put_le32(out + CP_BAND, (uint32_t)((s - 24) / 8));
	put_le32(out + CP_PANEL, c->panel_stride - CP_ROWS * c->stride);
	put_le32(out + CP_FMT, (c->f8 == DT_F8_F152) << 1);
	put_le32(out + CP_SCL, (uint32_t)c->fp8_scale & 63);
	for (int w = 0; w < 6; w++) {
		uint32_t first, count;
		cast_share(c, w, &first, &count);
		if (!count)
			continue;
		uint32_t p = first / CP_BANDS, b = first % CP_BANDS;
		uint8_t *v = out + CP_VERTEX + w * VERTEX_BYTES;
		put_le32(v, count);
		put_le32(v + 4,
		         c->src + p * c->panel_stride + b * 4 * c->stride);
		put_le32(v + 8, c->dst + p * GEMM_B_PANEL_BYTES + b * 4);
		put_le32(v + 12, CP_BANDS - 1 - b);
	}
}

static uint64_t
cast_worker_issues(const PackCastCall *c, int w)
{
	uint32_t first, count;
	cast_share(c, w, &first, &count);
	if (!count)
		return W_IDLE;
	uint64_t next = 0;
	for (uint32_t t = first; t + 1 < first + count; t++)
		next += t % CP_BANDS == CP_BANDS - 1;
	return CP_SETUP + count * CP_BAND_I - 1 + next * CP_NEXT + CP_EXIT;
}

uint64_t
pack_cast_cycles(const Chip *chip, const PackCastCall *c)
{
	SupClock s;
	sup_start(&s, chip, 0);
	sup_op(&s, SUP_M0, SUP_M3, SUP_PLAIN); /* ld32 the format */
	sup_op(&s, SUP_M0, SUP_M4, SUP_PLAIN); /* ld32 the scale */
	sup_entry(&s);
	sup_op(&s, SUP_M3, 0, SUP_PUT);
	sup_op(&s, SUP_M4, 0, SUP_PUT);
	uint64_t first[6], exit[6];
	sup_runall(&s, SUP_M1 | SUP_M2, first);
	for (int v = 0; v < 6; v++)
		exit[v] = first[v] + 6 * (cast_worker_issues(c, v) - 1);
	sup_workers(&s, exit);
	sup_sync(&s);
	return sup_return(&s, 0);
}

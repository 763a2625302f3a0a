/*
 * rowwise.c - lowering a row-wise op (layernorm, softmax) onto pieces that
 * hold whole rows.
 *
 * Contract: x's pieces hold whole rows (layout_rowwise_reads; program.c
 * moves x into layout_rowwise_in's pieces when its home is not like
 * that); the
 * output has the same blocks (layout_rowwise_out: rows, or the f16
 * softmax's GEMM C panels, or its f8 result's panels of 32 columns as
 * layout_rowwise_out_parts pieces a piece of x); gamma and beta are one row on
 * each piece's tile (a norm, a layernorm without them: NULL,
 * rw_layernorm_f16h8n). Each piece is one call of kernels/rowwise.S
 * (src/kernels/rowwise.h) over its rows, or two when that is faster: its rows
 * but the last R mod 6 in rows mode, then those in split mode. A step holds one
 * call a tile, so the op makes as many compute steps as the most calls on one
 * tile.
 */
#include "rowwise.h"

#include <stdlib.h>
#include <string.h>

/* The call checked with its operands at disjoint addresses (placement
 * gives the real ones, 8-aligned and disjoint): shape, eps, scale. */
static int
check_call(const RwCall *k, int gamma_beta, Diag *d)
{
	uint32_t span =
	    k->rows *
	        (k->x_stride > k->dst_stride ? k->x_stride : k->dst_stride) +
	    k->cols * 4 + 8 +
	    gemm_n_panels(k->cols) * (k->x_panel + k->dst_panel) +
	    (k->dst_panel
	         ? rw_panel_e_bytes(k->rows, k->cols, dtype_is_f8(k->dst_f8))
	         : 0);
	span = (uint32_t)align_up(span, 8);
	RwCall c = *k;
	c.dst = 0;
	c.x = span;
	c.gamma = gamma_beta ? 2 * span : 0;
	c.beta = gamma_beta ? 3 * span : 0;
	return rw_check(&c, d);
}

/* What a call writes: out's type (f8: rw_softmax_f16h8) and its f8
 * scale; plain: a layernorm without gamma and beta (a norm). */
typedef struct {
	DType type;
	int f8_scale;
	int plain;
	int unnorm; /* rw_softmax_f16h8u */
} RwOut;

/* A call over `rows` rows of piece px into po (addresses 0). */
static RwCall
piece_call(RwOp op, DType type, RwOut to, const Piece *px, const Piece *po,
           uint32_t rows, double eps, double scale, int exp_f16)
{
	uint32_t es = (uint32_t)dtype_size(type),
	         ds = (uint32_t)dtype_size(to.type);
	/* rows: a panel row of 16 columns, or whole rows; the softmax's
	 * f8 dst, panels of 32 bytes (layout_rowwise_out_parts: po is the
	 * first, a row-major piece of one panel) */
	int f8p = op == RW_SOFTMAX && dtype_is_f8(to.type);
	int xp = px->format == PF_GEMM_C, dp = po->format == PF_GEMM_C || f8p;
	uint32_t xrow = (xp ? GEMM_COLS : px->pad_cols) * es,
	         drow = f8p ? GEMM_A_ROW_BYTES
	                    : (dp ? GEMM_COLS : po->pad_cols) * ds;
	return (RwCall){.op = op,
	                .type = type,
	                .rows = rows,
	                .cols = px->cols,
	                .x_stride = xrow,
	                .x_panel = xp ? px->pad_rows * xrow : 0,
	                .dst_stride = drow,
	                .dst_panel = dp ? po->pad_rows * drow : 0,
	                .eps = (float)eps,
	                .scale = (float)scale,
	                .exp_f16 = exp_f16,
	                .dst_f8 = dtype_is_f8(to.type) ? to.type : DT_F32,
	                .f8_scale = to.f8_scale,
	                .plain = to.plain,
	                .unnorm = to.unnorm};
}

/* One call over rows [r0, r0 + rows) of piece k; its cycles, or 0 with d
 * set. */
static uint64_t
emit_call(Lowered *l, Step *s, RwOp op, DType type, RwOut to,
          const TensorPlace *x, const TensorPlace *gamma,
          const TensorPlace *beta, const TensorPlace *out, int k, uint32_t r0,
          uint32_t rows, double eps, double scale, int exp_f16, Diag *d)
{
	const Piece *px = &x->piece[k],
	            *po = &out->piece[(uint32_t)k * out->npiece / x->npiece];
	RwCall rc = piece_call(op, type, to, px, po, rows, eps, scale, exp_f16);
	KernelCall *c = lower_call(l, s, px->tile, rw_entry(&rc),
	                           rw_object(&rc), RW_ARGS_BYTES);
	c->args = (KernelArgs){KC_RW, .u.rw = rc};
	c->ref[0] = po->at;
	c->ref[0].offset += r0 * c->args.u.rw.dst_stride;
	c->ref[1] = px->at;
	c->ref[1].offset += r0 * c->args.u.rw.x_stride;
	c->nref = 2;
	if (gamma && beta) {
		c->ref[2] = gamma->piece[k].at;
		c->ref[3] = beta->piece[k].at;
		c->nref = 4;
	}
	if (check_call(&c->args.u.rw, c->nref > 2, d))
		return 0;
	/* addresses do not change the count */
	c->cycles = rw_cycles(l->chip, &c->args.u.rw);
	return c->cycles;
}

/* The cycles of a call over `rows` rows of piece px into po (no
 * emission). */
static uint64_t
rows_cycles(const Chip *chip, RwOp op, DType type, RwOut to, const Piece *px,
            const Piece *po, uint32_t rows, int exp_f16)
{
	RwCall c = piece_call(op, type, to, px, po, rows, 0, 1, exp_f16);
	return rw_cycles(chip, &c);
}

int
lower_rowwise(Lowered *l, RwOp op, const TensorPlace *x,
              const TensorPlace *gamma, const TensorPlace *beta,
              const TensorPlace *out, double eps, double scale, int exp_f16,
              int f8_scale, int unnorm, const char *what, Diag *d)
{
	DType type = x->dtype;
	RwOut to = {out->dtype, f8_scale, op == RW_LAYERNORM && !gamma, unnorm};
	if (type != DT_F32 && type != DT_F16)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "the row-wise kernels take f32 and f16, not %s",
		                dtype_name(type));
	if (!layout_rowwise_reads(x, op))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s: pieces without whole rows (an internal "
		                "error)",
		                what);
	/* R rows in rows mode take ceil(R / 6) rounds of the slowest
	 * worker: the R mod 6 rows left over may go faster in a call of
	 * their own, cut into segments (split mode). The k-th call on each
	 * tile goes in compute step k (a step has one call a tile): first
	 * every piece's rows-mode call, then the rest's. */
	uint32_t *seen = xcalloc(l->tiles, sizeof *seen),
	         *rest = xcalloc((size_t)x->npiece, sizeof *rest);
	for (int k = 0; k < x->npiece; k++) {
		const Piece
		    *px = &x->piece[k],
		    *po = &out->piece[(uint32_t)k * out->npiece / x->npiece];
		uint32_t n = px->rows, left = n % CHIP_WORKERS;
		if (n > CHIP_WORKERS && left &&
		    rows_cycles(l->chip, op, type, to, px, po, n - left,
		                exp_f16) +
		            rows_cycles(l->chip, op, type, to, px, po, left,
		                        exp_f16) <
		        rows_cycles(l->chip, op, type, to, px, po, n, exp_f16))
			rest[k] = left;
	}
	int32_t first = l->nstep;
	int r = IPU_OK;
	for (int pass = 0; pass < 2 && !r; pass++) {
		for (int k = 0; k < x->npiece && !r; k++) {
			const Piece *px = &x->piece[k];
			if (pass && !rest[k])
				continue;
			uint32_t slot = seen[px->tile]++;
			if (first + (int32_t)slot >= l->nstep)
				lower_step(l, STEP_COMPUTE, what);
			Step *s = &l->step[first + (int32_t)slot];
			uint32_t r0 = pass ? px->rows - rest[k] : 0,
			         n = pass ? rest[k] : px->rows - rest[k];
			uint64_t c =
			    emit_call(l, s, op, type, to, x, gamma, beta, out,
			              k, r0, n, eps, scale, exp_f16, d);
			if (!c)
				r = IPU_EINVAL;
			if (c > s->cycles)
				s->cycles = c;
		}
		/* the rest's calls start after the last rows-mode call */
		uint32_t most = 0;
		for (uint32_t t = 0; t < l->tiles; t++)
			most = seen[t] > most ? seen[t] : most;
		for (uint32_t t = 0; t < l->tiles; t++)
			seen[t] = most;
	}
	free(rest);
	free(seen);
	return r;
}

/*
 * rowwise.c - lowering a row-wise op (layernorm, softmax) onto pieces that
 * hold whole rows.
 *
 * Contract: x's pieces hold whole rows (lower_rows_whole; program.c moves
 * x into lower_row_place's pieces when its home is not like that); the
 * output mirrors them; gamma and beta are one row on each piece's tile.
 * Each piece is one call of kernels/rowwise.S (src/kernels/rowwise.h) over
 * its rows, or two when that is faster: its rows but the last R mod 6 in
 * rows mode, then those in split mode. A step holds one call a tile, so
 * the op makes as many compute steps as the most calls on one tile.
 */
#include "rowwise.h"

#include <stdlib.h>
#include <string.h>

static int
rw_type_of(DType dt, RwType *t)
{
	if (dt != DT_F32 && dt != DT_F16)
		return IPU_EINVAL;
	*t = dt == DT_F32 ? RW_F32 : RW_F16;
	return IPU_OK;
}

int
lower_rows_whole(const TensorPlace *tp)
{
	RwType t;
	if (rw_type_of((DType)tp->dtype, &t))
		return 0;
	uint32_t es = rw_type_bytes(t), g = rw_group(t);
	uint32_t atoms_cols = (tp->cols + g - 1) / g * g;
	for (int k = 0; k < tp->npiece; k++) {
		const Piece *p = &tp->piece[k];
		if (p->format != PF_ROWMAJOR || p->col0 ||
		    p->cols != tp->cols || p->pad_cols * es % 8 ||
		    p->pad_cols < atoms_cols || p->at.offset % 8)
			return 0;
	}
	return 1;
}

TensorPlace *
lower_row_place(Lowered *l, int32_t tensor, uint32_t rows, uint32_t cols,
                uint32_t pad_cols, DType dt, int32_t first, uint32_t tile0)
{
	TensorPlace *tp = tensor_place_new(tensor, rows, cols, (uint8_t)dt);
	uint32_t es = (uint32_t)dtype_size(dt);
	uint32_t per = (rows + l->tiles - 1) / l->tiles, k = 0;
	for (uint32_t r0 = 0; r0 < rows; r0 += per, k++) {
		uint32_t t = (tile0 + k) % l->tiles;
		uint32_t m = rows - r0 < per ? rows - r0 : per;
		int32_t buf =
		    lower_buffer(l, t, m * pad_cols * es, 8, REGION_ANY, first,
		                 INT32_MAX, "row block");
		*lower_piece(tp) = (Piece){.tile = t,
		                           .at = {buf, 0},
		                           .row0 = r0,
		                           .rows = m,
		                           .col0 = 0,
		                           .cols = cols,
		                           .pad_rows = m,
		                           .pad_cols = pad_cols,
		                           .format = PF_ROWMAJOR};
	}
	return tp;
}

TensorPlace *
lower_rowwise_out(Lowered *l, RwOp op, const TensorPlace *x, int32_t tensor,
                  int32_t first, const char *what)
{
	RwType type = RW_F32; /* x's, checked by the caller */
	rw_type_of((DType)x->dtype, &type);
	uint32_t es = rw_type_bytes(type),
	         need = rw_dst_row_bytes(op, type, x->cols) / es;
	TensorPlace *tp =
	    tensor_place_new(tensor, x->rows, x->cols, (uint8_t)x->dtype);
	for (int k = 0; k < x->npiece; k++) {
		Piece p = x->piece[k];
		if (p.pad_cols < need)
			p.pad_cols = need;
		p.at = (BufRef){
		    lower_buffer(l, p.tile, p.pad_rows * p.pad_cols * es, 8,
		                 REGION_ANY, first, INT32_MAX, what),
		    0};
		*lower_piece(tp) = p;
	}
	return tp;
}

/* param: the RwCall's fields; ref: dst, x, gamma, beta. */
enum {
	P_OP,
	P_TYPE,
	P_ROWS,
	P_COLS,
	P_XSTRIDE,
	P_DSTRIDE,
	P_EPS,  /* f32 bits */
	P_SCALE /* f32 bits */
};

static float
f32_of(uint32_t b)
{
	float f;
	memcpy(&f, &b, 4);
	return f;
}

static uint32_t
bits_of(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

static RwCall
call_of(const KernelCall *k, const uint32_t *addr)
{
	const uint32_t *p = k->param;
	return (RwCall){.op = (RwOp)p[P_OP],
	                .type = (RwType)p[P_TYPE],
	                .rows = p[P_ROWS],
	                .cols = p[P_COLS],
	                .dst = addr[0],
	                .dst_stride = p[P_DSTRIDE],
	                .x = addr[1],
	                .x_stride = p[P_XSTRIDE],
	                .gamma = k->nref > 2 ? addr[2] : 0,
	                .beta = k->nref > 3 ? addr[3] : 0,
	                .eps = f32_of(p[P_EPS]),
	                .scale = f32_of(p[P_SCALE])};
}

static void
fill_rw_args(const KernelCall *k, const uint32_t *addr, uint8_t *out)
{
	RwCall c = call_of(k, addr);
	rw_args_fill(&c, out);
}

/* The call checked with its operands at disjoint addresses (placement
 * gives the real ones, 8-aligned and disjoint): shape, eps, scale. */
static int
check_call(const KernelCall *k, Diag *d)
{
	const uint32_t *p = k->param;
	uint32_t span =
	    p[P_ROWS] *
	        (p[P_XSTRIDE] > p[P_DSTRIDE] ? p[P_XSTRIDE] : p[P_DSTRIDE]) +
	    p[P_COLS] * 4 + 8;
	span = (span + 7) & ~7u;
	uint32_t addr[4] = {0, span, 2 * span, 3 * span};
	RwCall c = call_of(k, addr);
	return rw_check(&c, d);
}

/* One call over rows [r0, r0 + rows) of piece k; its cycles, or 0 with d
 * set. */
static uint64_t
emit_call(Lowered *l, Step *s, RwOp op, RwType type, const TensorPlace *x,
          const TensorPlace *gamma, const TensorPlace *beta,
          const TensorPlace *out, int k, uint32_t r0, uint32_t rows, double eps,
          double scale, Diag *d)
{
	const Piece *px = &x->piece[k], *po = &out->piece[k];
	uint32_t es = rw_type_bytes(type);
	KernelCall *c = lower_call(l, s, px->tile, rw_entry(op, type),
	                           "rowwise", RW_ARGS_BYTES);
	c->ref[0] = po->at;
	c->ref[0].offset += r0 * po->pad_cols * es;
	c->ref[1] = px->at;
	c->ref[1].offset += r0 * px->pad_cols * es;
	c->nref = 2;
	if (gamma && beta) {
		c->ref[2] = gamma->piece[k].at;
		c->ref[3] = beta->piece[k].at;
		c->nref = 4;
	}
	uint32_t *p = c->param;
	p[P_OP] = op;
	p[P_TYPE] = type;
	p[P_ROWS] = rows;
	p[P_COLS] = px->cols;
	p[P_XSTRIDE] = px->pad_cols * es;
	p[P_DSTRIDE] = po->pad_cols * es;
	p[P_EPS] = bits_of((float)eps);
	p[P_SCALE] = bits_of((float)scale);
	c->fill = fill_rw_args;
	if (check_call(c, d))
		return 0;
	/* addresses do not change the count */
	uint32_t zero[4] = {0, 0, 0, 0};
	RwCall rc = call_of(c, zero);
	c->cycles = rw_cycles(l->chip, &rc);
	return c->cycles;
}

/* The cycles of a call over `rows` rows of piece px (no emission). */
static uint64_t
rows_cycles(const Chip *chip, RwOp op, RwType type, const Piece *px,
            uint32_t rows)
{
	uint32_t es = rw_type_bytes(type);
	RwCall c = {.op = op,
	            .type = type,
	            .rows = rows,
	            .cols = px->cols,
	            .x_stride = px->pad_cols * es,
	            .dst_stride = px->pad_cols * es,
	            .scale = 1};
	return rw_cycles(chip, &c);
}

int
lower_rowwise(Lowered *l, RwOp op, const TensorPlace *x,
              const TensorPlace *gamma, const TensorPlace *beta,
              const TensorPlace *out, double eps, double scale,
              const char *what, Diag *d)
{
	RwType type;
	if (rw_type_of((DType)x->dtype, &type))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "the row-wise kernels take f32 and f16, not %s",
		                dtype_name((DType)x->dtype));
	if (!lower_rows_whole(x) || !lower_rows_whole(out))
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
		const Piece *px = &x->piece[k];
		uint32_t n = px->rows, left = n % CHIP_WORKERS;
		if (n > CHIP_WORKERS && left &&
		    rows_cycles(l->chip, op, type, px, n - left) +
		            rows_cycles(l->chip, op, type, px, left) <
		        rows_cycles(l->chip, op, type, px, n))
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
			uint64_t c = emit_call(l, s, op, type, x, gamma, beta,
			                       out, k, r0, n, eps, scale, d);
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

/*
 * elementwise.c - lowering an elementwise op where its input lives.
 *
 * Contract: the output's pieces mirror the first input's (same tiles, block
 * geometry and format, new buffers of the output's type); the second input
 * (add, mul) must already be in `b`, a place whose piece k matches piece k
 * of `a` (one row of it when it is broadcast down the rows: a bias). Each
 * piece is one call of kernels/elementwise*.S (src/kernels/elementwise.h)
 * over its strided walk: a row-major block is one segment of rows, the
 * GEMM C layout one segment per 16-column panel. A tile holding several
 * pieces calls the kernel once per compute step, so the op makes as many
 * compute steps as the most pieces on one tile.
 */
#include "elementwise.h"

#include <stdlib.h>
#include <string.h>

#include "../kernels/elementwise.h"
#include "../kernels/pack.h"

/* A piece's strided walk for one operand of element size es. */
static EwRef
piece_ref(const Piece *p, uint32_t es, uint32_t *nseg, uint32_t *cols)
{
	if (p->format == PF_GEMM_C) {
		*nseg = gemm_n_panels(p->pad_cols);
		*cols = GEMM_COLS;
		return (EwRef){0, p->pad_rows * GEMM_COLS * es, GEMM_COLS * es};
	}
	*nseg = 1;
	*cols = p->cols;
	return (EwRef){0, 0, p->pad_cols * es};
}

int
lower_elementwise(Lowered *l, EwOp op, const TensorPlace *a,
                  const TensorPlace *b, const TensorPlace *out, int fp8_scale,
                  const char *what, Diag *d)
{
	DType in = a->dtype, to = out->dtype;
	const char *entry = ew_entry(op, in, to),
	           *object = ew_object(op, in, to);
	uint32_t mul = ew_col_multiple(in, to);
	if (!entry)
		return ew_supported(op, a->dtype, out->dtype, d);
	uint32_t ei = (uint32_t)dtype_size(in), eo = (uint32_t)dtype_size(to);
	/* the k-th piece on each tile goes in compute step k */
	uint32_t *seen = xcalloc(l->tiles, sizeof *seen);
	int32_t first = l->nstep;
	int r = IPU_OK;
	for (int k = 0; k < a->npiece && !r; k++) {
		const Piece *pa = &a->piece[k], *po = &out->piece[k];
		/* a block's panels (layout_segments' bt) in one call, from
		 * its first: the walk reads their zero padding too */
		int panels = !b && pa->bt_panels && po->bt_panels;
		if (panels && pa->col0)
			continue;
		/* a tile's blocks of B's weight panels (layout_segments' vb)
		 * cast into its panels by one pack_b_f16_f8 call */
		int vb = op == EW_CAST && !b && pa->vb_index &&
		         po->format == PF_GEMM_B;
		if (vb && pa->vb_index > 1)
			continue;
		uint32_t slot = seen[pa->tile]++;
		if (first + (int32_t)slot >= l->nstep)
			lower_step(l, STEP_COMPUTE, what);
		Step *s = &l->step[first + (int32_t)slot];
		if (vb) {
			KernelCall *c = lower_call(
			    l, s, pa->tile, pack_cast_entry(),
			    pack_cast_object(), PACK_CAST_ARGS_BYTES);
			c->ref[0] = pa->at;
			c->ref[1] = po->at;
			c->nref = 2;
			c->args = (KernelArgs){
			    KC_PACK_CAST,
			    .u.pcast = {.f8 = to,
			                .fp8_scale = fp8_scale,
			                .panels = pa->vb_count,
			                .stride = pa->pad_cols * ei,
			                .panel_stride =
			                    pa->pad_rows * pa->pad_cols * ei}};
			c->cycles = pack_cast_cycles(l->chip, &c->args.u.pcast);
			if (c->cycles > s->cycles)
				s->cycles = c->cycles;
			continue;
		}
		uint32_t nseg, cols;
		/* the walk is a's (a transpose's dst has other columns) */
		EwRef ro = piece_ref(po, eo, &nseg, &cols),
		      ra = piece_ref(pa, ei, &nseg, &cols);
		uint32_t rows = pa->rows;
		if (panels) {
			nseg = pa->bt_panels;
			rows = pa->pad_rows;
			cols = pa->pad_cols;
			ra.seg_stride = rows * cols * ei;
			ro.seg_stride = rows * cols * eo;
		}
		cols = (cols + mul - 1) / mul * mul;
		if (op == EW_BIAS_GELU_H && pa->format != PF_GEMM_C) {
			r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "%s: a piece not in GEMM C panels (an "
			             "internal error)",
			             what);
			break;
		}
		if (pa->format != PF_GEMM_C && cols > pa->pad_cols) {
			r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "%s: a piece of %u columns padded to %u; "
			             "the kernel needs multiples of %u (an "
			             "internal error)",
			             what, pa->cols, pa->pad_cols, mul);
			break;
		}
		KernelCall *c =
		    lower_call(l, s, pa->tile, entry, object, EW_ARGS_BYTES);
		c->ref[0] = po->at;
		c->ref[1] = pa->at;
		c->nref = 2;
		EwRef rb = {0};
		if (b) {
			const Piece *pb = &b->piece[k];
			uint32_t sn, sc;
			rb = piece_ref(pb, ei, &sn, &sc);
			if (pb->pad_rows == 1 && pa->pad_rows > 1)
				rb.row_stride = 0; /* one row for all rows */
			c->ref[2] = pb->at;
			c->nref = 3;
		}
		/* a transpose's rows are dst's columns: whole groups too */
		if (op == EW_TRANSPOSE)
			rows = (pa->rows + mul - 1) / mul * mul;
		c->args = (KernelArgs){KC_EW, .u.ew = {.op = op,
		                                       .in = in,
		                                       .out = to,
		                                       .fp8_scale = fp8_scale,
		                                       .nseg = nseg,
		                                       .rows = rows,
		                                       .cols = cols,
		                                       .dst = ro,
		                                       .a = ra,
		                                       .b = rb}};
		/* addresses do not change the count: priced at zero */
		c->cycles = ew_cycles(l->chip, &c->args.u.ew);
		if (c->cycles > s->cycles)
			s->cycles = c->cycles;
	}
	free(seen);
	return r;
}

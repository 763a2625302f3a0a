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

static EwType
ew_type(DType t)
{
	static const EwType of[DT_COUNT] = {[DT_F32] = EW_F32,
	                                    [DT_F16] = EW_F16,
	                                    [DT_F8_F143] = EW_F8_F143,
	                                    [DT_F8_F152] = EW_F8_F152};
	return of[t];
}

/* A refusal lists the type pairs that do have a kernel for the op, so
 * that the message says what to write instead (a cast f32 -> f8 is two
 * casts through f16, say). */
int
lower_ew_supported(EwOp op, DType in, DType out, Diag *d)
{
	if (ew_entry(op, ew_type(in), ew_type(out)))
		return IPU_OK;
	static const DType types[] = {DT_F32, DT_F16, DT_F8_F143, DT_F8_F152};
	char have[256] = "";
	size_t n = 0;
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			if (ew_entry(op, ew_type(types[i]),
			             ew_type(types[j])) &&
			    n < sizeof have)
				n += (size_t)snprintf(
				    have + n, sizeof have - n, "%s%s%s%s",
				    n ? ", " : "", dtype_name(types[i]),
				    types[i] == types[j] ? "" : " -> ",
				    types[i] == types[j]
				        ? ""
				        : dtype_name(types[j]));
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "no elementwise kernel takes %s to %s for this op "
	                "(kernels exist for %s)",
	                dtype_name(in), dtype_name(out), have);
}

TensorPlace *
lower_mirror(Lowered *l, const TensorPlace *like, int32_t tensor, DType dt,
             int one_row, int32_t first, const char *what)
{
	uint32_t es = (uint32_t)dtype_size(dt);
	TensorPlace *tp = tensor_place_new(tensor, one_row ? 1 : like->rows,
	                                   like->cols, (uint8_t)dt);
	for (int k = 0; k < like->npiece; k++) {
		Piece p = like->piece[k];
		if (one_row)
			p.row0 = 0, p.rows = 1, p.pad_rows = 1;
		/* rows of whole 8-byte atoms in this element size too (an f16
		 * softmax's rows of 12 elements an atom, cast to f8) */
		if (p.format == PF_ROWMAJOR && es < 8)
			p.pad_cols =
			    (p.pad_cols + 8 / es - 1) / (8 / es) * (8 / es);
		uint32_t panels = (p.pad_cols + 15) / 16;
		uint32_t bytes = p.format == PF_GEMM_C
		                     ? panels * p.pad_rows * 16 * es
		                     : p.pad_rows * p.pad_cols * es;
		p.at =
		    (BufRef){lower_buffer(l, p.tile, (bytes + 7) & ~7u, 8,
		                          REGION_ANY, first, INT32_MAX, what),
		             0};
		*lower_piece(tp) = p;
	}
	return tp;
}

/* A piece's strided walk for one operand of element size es. */
static EwRef
piece_ref(const Piece *p, uint32_t es, uint32_t *nseg, uint32_t *cols)
{
	if (p->format == PF_GEMM_C) {
		*nseg = (p->pad_cols + 15) / 16;
		*cols = 16;
		return (EwRef){0, p->pad_rows * 16 * es, 16 * es};
	}
	*nseg = 1;
	*cols = p->cols;
	return (EwRef){0, 0, p->pad_cols * es};
}

/* param: the EwCall's fields in order (refs' addresses from the call's
 * buffers); ref: dst, a, b. */
enum {
	P_OP,
	P_IN,
	P_OUT,
	P_SCALE,
	P_NSEG,
	P_ROWS,
	P_COLS,
	P_STRIDES /* seg and row stride of dst, a, b: 6 words */
};

static EwCall
call_of(const KernelCall *k, const uint32_t *addr)
{
	const uint32_t *p = k->param;
	EwCall c = {.op = (EwOp)p[P_OP],
	            .in = (EwType)p[P_IN],
	            .out = (EwType)p[P_OUT],
	            .fp8_scale = (int32_t)p[P_SCALE],
	            .nseg = p[P_NSEG],
	            .rows = p[P_ROWS],
	            .cols = p[P_COLS]};
	EwRef *r[3] = {&c.dst, &c.a, &c.b};
	for (int i = 0; i < 3; i++)
		*r[i] = (EwRef){i < k->nref ? addr[i] : 0, p[P_STRIDES + 2 * i],
		                p[P_STRIDES + 2 * i + 1]};
	return c;
}

static void
fill_ew_args(const KernelCall *k, const uint32_t *addr, uint8_t *out)
{
	EwCall c = call_of(k, addr);
	ew_args_fill(&c, out);
}

int
lower_elementwise(Lowered *l, EwOp op, const TensorPlace *a,
                  const TensorPlace *b, const TensorPlace *out, int fp8_scale,
                  const char *what, Diag *d)
{
	EwType in = ew_type((DType)a->dtype), to = ew_type((DType)out->dtype);
	const char *entry = ew_entry(op, in, to),
	           *object = ew_object(op, in, to);
	uint32_t mul = ew_col_multiple(in, to);
	if (!entry)
		return lower_ew_supported(op, (DType)a->dtype,
		                          (DType)out->dtype, d);
	uint32_t ei = ew_type_bytes(in), eo = ew_type_bytes(to);
	/* the k-th piece on each tile goes in compute step k */
	uint32_t *seen = xcalloc(l->tiles, sizeof *seen);
	int32_t first = l->nstep;
	int r = IPU_OK;
	for (int k = 0; k < a->npiece && !r; k++) {
		const Piece *pa = &a->piece[k], *po = &out->piece[k];
		uint32_t slot = seen[pa->tile]++;
		if (first + (int32_t)slot >= l->nstep)
			lower_step(l, STEP_COMPUTE, what);
		Step *s = &l->step[first + (int32_t)slot];
		uint32_t nseg, cols;
		/* the walk is a's (a transpose's dst has other columns) */
		EwRef ro = piece_ref(po, eo, &nseg, &cols),
		      ra = piece_ref(pa, ei, &nseg, &cols);
		cols = (cols + mul - 1) / mul * mul;
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
		uint32_t *p = c->param;
		p[P_OP] = op;
		p[P_IN] = in;
		p[P_OUT] = to;
		p[P_SCALE] = (uint32_t)fp8_scale;
		p[P_NSEG] = nseg;
		/* a transpose's rows are dst's columns: whole groups too */
		p[P_ROWS] = op == EW_TRANSPOSE
		                ? (pa->rows + mul - 1) / mul * mul
		                : pa->rows;
		p[P_COLS] = cols;
		const EwRef *refs[3] = {&ro, &ra, &rb};
		for (int i = 0; i < 3; i++) {
			p[P_STRIDES + 2 * i] = refs[i]->seg_stride;
			p[P_STRIDES + 2 * i + 1] = refs[i]->row_stride;
		}
		c->fill = fill_ew_args;
		/* addresses do not change the count: price it at zero */
		uint32_t zero[3] = {0, 0, 0};
		EwCall ec = call_of(c, zero);
		c->cycles = ew_cycles(l->chip, &ec);
		if (c->cycles > s->cycles)
			s->cycles = c->cycles;
	}
	free(seen);
	return r;
}

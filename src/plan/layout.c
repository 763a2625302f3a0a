/*
 * layout.c - tensor layouts: making them (the default layout, blocks of
 * whole rows, mirrors of another layout) and asking of them (layout.h).
 * Every buffer comes from the caller's Storage, in piece order.
 */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

#include "../kernels/gemm.h"
#include "../kernels/rowwise.h"

TensorPlace *
tensor_place_new(int32_t tensor, uint32_t rows, uint32_t cols, DType dtype)
{
	TensorPlace *tp = xcalloc(1, sizeof *tp);
	*tp = (TensorPlace){
	    .tensor = tensor, .rows = rows, .cols = cols, .dtype = dtype};
	return tp;
}

void
tensor_place_free(TensorPlace *tp)
{
	if (tp)
		free(tp->piece);
	free(tp);
}

Piece *
layout_piece(TensorPlace *tp)
{
	int n = tp->npiece;
	if (grow_full(n))
		tp->piece = xrealloc(tp->piece, (size_t)(n ? 2 * n : 16) *
		                                    sizeof *tp->piece);
	Piece *p = &tp->piece[tp->npiece++];
	memset(p, 0, sizeof *p);
	return p;
}

uint32_t
layout_pad_cols(uint32_t cols)
{
	return (cols + 7) / 8 * 8;
}

int
layout_same(const TensorPlace *x, const TensorPlace *y)
{
	if (x->npiece != y->npiece)
		return 0;
	for (int k = 0; k < x->npiece; k++) {
		const Piece *p = &x->piece[k], *q = &y->piece[k];
		if (p->tile != q->tile || p->row0 != q->row0 ||
		    p->rows != q->rows || p->col0 != q->col0 ||
		    p->cols != q->cols || p->pad_rows != q->pad_rows ||
		    p->pad_cols != q->pad_cols || p->format != q->format)
			return 0;
	}
	return 1;
}

int
layout_is_packed(const TensorPlace *tp)
{
	return tp->npiece && (tp->piece[0].format == PF_GEMM_B ||
	                      tp->piece[0].format == PF_GEMM_B_T);
}

int
layout_readable(const TensorPlace *tp)
{
	for (int k = 0; k < tp->npiece; k++)
		if (tp->piece[k].format != PF_ROWMAJOR &&
		    tp->piece[k].format != PF_GEMM_C)
			return 0;
	return 1;
}

/* Is p (of tp, f32 or f16) row-major whole rows of whole atoms? */
static int
piece_rows_whole(const TensorPlace *tp, const Piece *p)
{
	uint32_t es = (uint32_t)dtype_size(tp->dtype), g = rw_group(tp->dtype);
	return p->format == PF_ROWMAJOR && !p->col0 && p->cols == tp->cols &&
	       p->pad_cols * es % 8 == 0 &&
	       p->pad_cols >= (tp->cols + g - 1) / g * g &&
	       p->at.offset % 8 == 0;
}

/* 1 if the row-wise kernels can run on tp's pieces as they are: f32 or
 * f16, row-major, each holding whole rows, rows padded to whole 8-byte
 * atoms. */
static int
layout_rows_whole(const TensorPlace *tp)
{
	DType t = tp->dtype;
	if (t != DT_F32 && t != DT_F16)
		return 0;
	for (int k = 0; k < tp->npiece; k++)
		if (!piece_rows_whole(tp, &tp->piece[k]))
			return 0;
	return 1;
}

/* The default layout's grid: pr blocks of bm rows by pc of bn columns. */
typedef struct {
	uint32_t pr, pc, bm, bn;
} Blocks;

static Blocks
default_blocks(uint32_t tiles, uint32_t rows, uint32_t cols)
{
	Blocks b;
	b.pr = rows < tiles ? rows : tiles;
	b.pc = tiles / b.pr;
	uint32_t panels = gemm_n_panels(cols);
	if (b.pc > panels)
		b.pc = panels;
	b.bm = ceil_div(rows, b.pr);
	b.bn = ceil_div(panels, b.pc) * GEMM_COLS;
	return b;
}

uint32_t
layout_default_pieces(uint32_t tiles, uint32_t rows, uint32_t cols)
{
	Blocks b = default_blocks(tiles, rows, cols);
	return b.pr * b.pc;
}

TensorPlace *
layout_default(Storage *st, uint32_t tiles, int32_t tensor, uint32_t rows,
               uint32_t cols, DType dt, uint32_t tile0)
{
	TensorPlace *tp = tensor_place_new(tensor, rows, cols, dt);
	Blocks b = default_blocks(tiles, rows, cols);
	uint32_t es = (uint32_t)dtype_size(dt), k = 0;
	for (uint32_t r0 = 0; r0 < rows; r0 += b.bm)
		for (uint32_t c0 = 0; c0 < cols; c0 += b.bn, k++) {
			uint32_t t = (tile0 + k) % tiles;
			uint32_t m = rows - r0 < b.bm ? rows - r0 : b.bm;
			uint32_t n = cols - c0 < b.bn ? cols - c0 : b.bn;
			uint32_t pad = layout_pad_cols(n);
			int32_t buf = st->buffer(st, t, m * pad * es, 8,
			                         REGION_ANY, "tensor block");
			*layout_piece(tp) = (Piece){.tile = t,
			                            .at = {buf, 0},
			                            .row0 = r0,
			                            .rows = m,
			                            .col0 = c0,
			                            .cols = n,
			                            .pad_rows = m,
			                            .pad_cols = pad,
			                            .format = PF_ROWMAJOR};
		}
	return tp;
}

/* Rows [r0, r1) of tp's view as blocks of B^T rows in panels
 * (layout_segments' bt): matrices of `mrows` rows. */
static void
bt_segment(Storage *st, uint32_t tiles, TensorPlace *tp, uint32_t r0,
           uint32_t r1, uint32_t mrows, uint32_t *next)
{
	uint32_t es = (uint32_t)dtype_size(tp->dtype), w = LAYOUT_BT_COLS,
	         h = LAYOUT_BT_ROWS, np = ceil_div(tp->cols, w),
	         t = *next % tiles;
	for (uint32_t m0 = r0; m0 < r1; m0 += mrows)
		for (uint32_t r = 0; r < mrows; r += h, t = (t + 1) % tiles) {
			int32_t buf = st->buffer(st, t, np * h * w * es, 8,
			                         REGION_ANY, "tensor block");
			for (uint32_t j = 0; j < np; j++)
				*layout_piece(tp) = (Piece){
				    .tile = t,
				    .at = {buf, j * h * w * es},
				    .row0 = m0 + r,
				    .rows = mrows - r < h ? mrows - r : h,
				    .col0 = j * w,
				    .cols = tp->cols - j * w < w
				                ? tp->cols - j * w
				                : w,
				    .pad_rows = h,
				    .pad_cols = w,
				    .format = PF_ROWMAJOR,
				    .bt_panels = (uint8_t)np};
		}
	*next = t;
}

/* The blocks of rows [r0, r1) of tp's view as blocks of B's weight panels
 * (layout_segments' vb): matrices of `mrows` rows, each cut into blocks
 * of 32 rows (the last fewer) by 16 columns (the last fewer), block b on
 * tile (*next + b) % tiles; a tile's blocks in one buffer, its pieces
 * one after another. */
static void
vb_segment(Storage *st, uint32_t tiles, TensorPlace *tp, uint32_t r0,
           uint32_t r1, uint32_t mrows, uint32_t nb, uint32_t *next)
{
	uint32_t es = (uint32_t)dtype_size(tp->dtype), h = LAYOUT_VB_ROWS,
	         w = LAYOUT_VB_COLS, kp = ceil_div(mrows, h),
	         np = ceil_div(tp->cols, w), t0 = *next % tiles,
	         used = nb < tiles ? nb : tiles;
	for (uint32_t u = 0; u < used; u++) {
		uint32_t count = nb / tiles + (u < nb % tiles),
		         t = (t0 + u) % tiles;
		int32_t buf = st->buffer(st, t, count * h * w * es, 8,
		                         REGION_ANY, "tensor block");
		for (uint32_t i = 0; i < count; i++) {
			uint32_t b = u + i * tiles, m = b / (kp * np),
			         kb = b / np % kp, j = b % np,
			         row0 = r0 + m * mrows + kb * h;
			*layout_piece(tp) = (Piece){
			    .tile = t,
			    .at = {buf, i * h * w * es},
			    .row0 = row0,
			    .rows = mrows - kb * h < h ? mrows - kb * h : h,
			    .col0 = j * w,
			    .cols = tp->cols - j * w < w ? tp->cols - j * w : w,
			    .pad_rows = h,
			    .pad_cols = w,
			    .format = PF_ROWMAJOR,
			    .vb_index = (uint8_t)(i + 1),
			    .vb_count = (uint8_t)count};
		}
	}
	(void)r1;
	*next = (t0 + used) % tiles;
}

TensorPlace *
layout_segments(Storage *st, uint32_t tiles, int32_t tensor, uint32_t rows,
                uint32_t cols, DType dt, const uint32_t *bounds, int n,
                uint32_t *next, const uint32_t *bt, const uint32_t *vb)
{
	TensorPlace *tp = tensor_place_new(tensor, rows, cols, dt);
	for (int s = 0; s < n; s++) {
		uint32_t nvb = vb && vb[s]
		                   ? (bounds[s + 1] - bounds[s]) / vb[s] *
		                         ceil_div(vb[s], LAYOUT_VB_ROWS) *
		                         ceil_div(cols, LAYOUT_VB_COLS)
		                   : 0;
		if (nvb && nvb <= LAYOUT_BT_PER_TILE * tiles) {
			vb_segment(st, tiles, tp, bounds[s], bounds[s + 1],
			           vb[s], nvb, next);
			continue;
		}
		uint32_t nbt = bt && bt[s]
		                   ? (bounds[s + 1] - bounds[s]) / bt[s] *
		                         ceil_div(bt[s], LAYOUT_BT_ROWS)
		                   : 0;
		if (nbt && nbt <= LAYOUT_BT_PER_TILE * tiles) {
			bt_segment(st, tiles, tp, bounds[s], bounds[s + 1],
			           bt[s], next);
			continue;
		}
		uint32_t m = bounds[s + 1] - bounds[s],
		         pieces = layout_default_pieces(tiles, m, cols), t = 0;
		if (pieces < tiles) {
			t = *next % tiles;
			*next = t + pieces;
		}
		TensorPlace *seg =
		    layout_default(st, tiles, tensor, m, cols, dt, t);
		for (int k = 0; k < seg->npiece; k++) {
			Piece *p = layout_piece(tp);
			*p = seg->piece[k];
			p->row0 += bounds[s];
		}
		tensor_place_free(seg);
	}
	return tp;
}

TensorPlace *
layout_row_range(const TensorPlace *from, int32_t tensor, uint32_t r0,
                 uint32_t r1)
{
	TensorPlace *tp =
	    tensor_place_new(tensor, r1 - r0, from->cols, from->dtype);
	for (int k = 0; k < from->npiece; k++) {
		const Piece *p = &from->piece[k];
		if (p->row0 + p->rows <= r0 || p->row0 >= r1)
			continue;
		if (p->row0 < r0 || p->row0 + p->rows > r1 ||
		    (p->format != PF_ROWMAJOR && p->format != PF_GEMM_C)) {
			tensor_place_free(tp);
			return NULL;
		}
		Piece *q = layout_piece(tp);
		*q = *p;
		q->row0 -= r0;
	}
	return tp;
}

/* Blocks of whole rows spread evenly over `tiles` tiles from tile0 on, one
 * piece each, rows padded to pad_cols elements; a "row block" buffer
 * each. */
static TensorPlace *
layout_rows(Storage *st, uint32_t tiles, int32_t tensor, uint32_t rows,
            uint32_t cols, uint32_t pad_cols, DType dt, uint32_t tile0)
{
	TensorPlace *tp = tensor_place_new(tensor, rows, cols, dt);
	uint32_t es = (uint32_t)dtype_size(dt);
	uint32_t per = ceil_div(rows, tiles), k = 0;
	for (uint32_t r0 = 0; r0 < rows; r0 += per, k++) {
		uint32_t t = (tile0 + k) % tiles;
		uint32_t m = rows - r0 < per ? rows - r0 : per;
		int32_t buf = st->buffer(st, t, m * pad_cols * es, 8,
		                         REGION_ANY, "row block");
		*layout_piece(tp) = (Piece){.tile = t,
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

uint32_t
layout_gather_block(uint32_t tiles, uint32_t dcols)
{
	uint32_t groups = ceil_div(dcols, 8); /* of 8 columns */
	return ceil_div(groups, groups < tiles ? groups : tiles) * 8;
}

void
layout_gather(Storage *st, uint32_t tiles, uint32_t tile0, const int32_t id[3],
              uint32_t v, uint32_t dcols, uint32_t n, DType dt,
              TensorPlace *place[3])
{
	static const char *const what[3] = {"table block", "ids",
	                                    "tensor block"};
	uint32_t rows[3] = {v, 1, n}, cols[3] = {dcols, n, dcols},
	         es[3] = {(uint32_t)dtype_size(dt), 4,
	                  (uint32_t)dtype_size(dt)};
	DType type[3] = {dt, DT_F32, dt};
	for (int i = 0; i < 3; i++)
		place[i] = tensor_place_new(id[i], rows[i], cols[i], type[i]);
	uint32_t w = layout_gather_block(tiles, dcols);
	for (uint32_t c0 = 0, k = 0; c0 < dcols; c0 += w, k++) {
		uint32_t t = (tile0 + k) % tiles,
		         cw = dcols - c0 < w ? dcols - c0 : w;
		for (int i = 0; i < 3; i++) {
			uint32_t c = i == 1 ? n : cw, pad = layout_pad_cols(c);
			int32_t buf = st->buffer(st, t, rows[i] * pad * es[i],
			                         8, REGION_ANY, what[i]);
			*layout_piece(place[i]) =
			    (Piece){.tile = t,
			            .at = {buf, 0},
			            .row0 = 0,
			            .rows = rows[i],
			            .col0 = i == 1 ? 0 : c0,
			            .cols = c,
			            .pad_rows = rows[i],
			            .pad_cols = pad,
			            .format = PF_ROWMAJOR};
		}
	}
}

TensorPlace *
layout_mirror(Storage *st, const TensorPlace *like, int32_t tensor, DType dt,
              int one_row, const char *what)
{
	uint32_t es = (uint32_t)dtype_size(dt);
	TensorPlace *tp =
	    tensor_place_new(tensor, one_row ? 1 : like->rows, like->cols, dt);
	for (int k = 0; k < like->npiece; k++) {
		Piece p = like->piece[k];
		if (one_row)
			p.row0 = 0, p.rows = 1, p.pad_rows = 1;
		/* rows of whole 8-byte atoms in this element size too (an f16
		 * softmax's rows of 12 elements an atom, cast to f8) */
		if (p.format == PF_ROWMAJOR && es < 8)
			p.pad_cols = (uint32_t)align_up(p.pad_cols, 8 / es);
		uint32_t bytes = p.format == PF_GEMM_C
		                     ? gemm_n_panels(p.pad_cols) * p.pad_rows *
		                           GEMM_COLS * es
		                     : p.pad_rows * p.pad_cols * es;
		if (p.vb_index && !one_row && dtype_is_f8(dt) &&
		    like->dtype == DT_F16) {
			/* the f8 cast of a block of B's weight panels: the
			 * panel, the tile's panels in one buffer */
			uint32_t panel =
			    gemm_b_bytes(GEMM_F8, p.pad_rows, p.pad_cols);
			p.at = p.vb_index > 1
			           ? (BufRef){tp->piece[tp->npiece - 1].at.buf,
			                      (p.vb_index - 1u) * panel}
			           : (BufRef){st->buffer(st, p.tile,
			                                 p.vb_count * panel, 8,
			                                 REGION_ANY, what),
			                      0};
			p.format = PF_GEMM_B;
			*layout_piece(tp) = p;
			continue;
		}
		p.vb_index = p.vb_count = 0;
		if (p.bt_panels && !one_row) { /* the block's panels in one */
			uint32_t j = p.col0 / LAYOUT_BT_COLS;
			p.at = j ? (BufRef){tp->piece[tp->npiece - 1].at.buf,
			                    j * bytes}
			         : (BufRef){st->buffer(st, p.tile,
			                               p.bt_panels * bytes, 8,
			                               REGION_ANY, what),
			                    0};
			*layout_piece(tp) = p;
			continue;
		}
		p.bt_panels = 0;
		p.at = (BufRef){st->buffer(st, p.tile,
		                           (uint32_t)align_up(bytes, 8), 8,
		                           REGION_ANY, what),
		                0};
		*layout_piece(tp) = p;
	}
	return tp;
}

/* x's pieces mirrored for `tensor` of type `to`, each row `row_elems`
 * long, or x's when in x's type and longer (a row-wise kernel's dst
 * rows), `what` each. */
static TensorPlace *
layout_widened(Storage *st, const TensorPlace *x, int32_t tensor, DType to,
               uint32_t row_elems, const char *what)
{
	uint32_t es = (uint32_t)dtype_size(to);
	TensorPlace *tp = tensor_place_new(tensor, x->rows, x->cols, to);
	for (int k = 0; k < x->npiece; k++) {
		Piece p = x->piece[k];
		if (p.pad_cols < row_elems || to != x->dtype)
			p.pad_cols = row_elems;
		p.at = (BufRef){st->buffer(st, p.tile,
		                           p.pad_rows * p.pad_cols * es, 8,
		                           REGION_ANY, what),
		                0};
		*layout_piece(tp) = p;
	}
	return tp;
}

/* The f16 softmax reads and writes the GEMM C layout. */
static int
rowwise_panels(RwOp op, DType dt)
{
	return op == RW_SOFTMAX && dt == DT_F16;
}

int
layout_rowwise_reads(const TensorPlace *tp, RwOp op)
{
	if (!rowwise_panels(op, tp->dtype))
		return layout_rows_whole(tp);
	for (int k = 0; k < tp->npiece; k++) {
		const Piece *p = &tp->piece[k];
		int panels =
		    p->format == PF_GEMM_C && !p->col0 && p->cols == tp->cols &&
		    p->pad_cols == gemm_n_panels(p->cols) * GEMM_COLS &&
		    p->at.offset % 8 == 0;
		if (!panels && !piece_rows_whole(tp, p))
			return 0;
	}
	return 1;
}

TensorPlace *
layout_rowwise_in(Storage *st, uint32_t tiles, int32_t tensor, uint32_t rows,
                  uint32_t cols, DType dt, uint32_t tile0, RwOp op)
{
	int panels = rowwise_panels(op, dt);
	TensorPlace *tp = layout_rows(st, tiles, tensor, rows, cols,
	                              panels ? gemm_n_panels(cols) * GEMM_COLS
	                                     : layout_pad_cols(cols),
	                              dt, tile0);
	/* the same bytes: pad_rows x pad_cols */
	for (int k = 0; panels && k < tp->npiece; k++)
		tp->piece[k].format = PF_GEMM_C;
	return tp;
}

uint32_t
layout_rowwise_out_parts(RwOp op, DType dt, DType to, uint32_t cols)
{
	return rowwise_panels(op, dt) && dtype_is_f8(to)
	           ? (cols + GEMM_A_ROW_BYTES - 1) / GEMM_A_ROW_BYTES
	           : 1;
}

/* The f16 softmax's f8 output (rw_softmax_f16h8): x's pieces in panels
 * of 32 columns, the f8 GEMM's A K-panel rows, each panel a row-major
 * piece of its own (rows x 32 bytes, panel j at j x pad_rows x 32 bytes
 * in one buffer a piece of x, the e after the panels and a panel more:
 * a call from row r0 on keeps its e r0 panel rows further on). */
static TensorPlace *
rowwise_out_f8_panels(Storage *st, const TensorPlace *x, int32_t tensor,
                      DType to)
{
	uint32_t w = GEMM_A_ROW_BYTES, np = layout_rowwise_out_parts(
	                                   RW_SOFTMAX, x->dtype, to, x->cols);
	TensorPlace *tp = tensor_place_new(tensor, x->rows, x->cols, to);
	for (int k = 0; k < x->npiece; k++) {
		const Piece *px = &x->piece[k];
		uint32_t bytes = (np + 1) * w * px->pad_rows +
		                 rw_panel_e_bytes(px->pad_rows, px->cols, 1);
		int32_t buf = st->buffer(st, px->tile, bytes, 8, REGION_ANY,
		                         "tensor block");
		for (uint32_t j = 0; j < np; j++) {
			Piece p = *px;
			p.format = PF_ROWMAJOR;
			p.col0 = px->col0 + j * w;
			p.cols = px->cols - j * w < w ? px->cols - j * w : w;
			p.pad_cols = w;
			p.at = (BufRef){buf, j * w * px->pad_rows};
			*layout_piece(tp) = p;
		}
	}
	return tp;
}

TensorPlace *
layout_rowwise_out(Storage *st, const TensorPlace *x, int32_t tensor, RwOp op,
                   DType to)
{
	DType dt = x->dtype;
	uint32_t es = (uint32_t)dtype_size(to);
	if (!rowwise_panels(op, dt))
		return layout_widened(
		    st, x, tensor, to,
		    rw_dst_row_bytes(op, dt, to, x->cols) / es, "tensor block");
	if (dtype_is_f8(to))
		return rowwise_out_f8_panels(st, x, tensor, to);
	TensorPlace *tp = tensor_place_new(tensor, x->rows, x->cols, to);
	for (int k = 0; k < x->npiece; k++) {
		Piece p = x->piece[k];
		p.format = PF_GEMM_C;
		p.pad_cols = gemm_n_panels(p.cols) * GEMM_COLS;
		/* a call from row r0 on keeps its e r0 panel rows further on
		 * (lower/rowwise.c cuts a piece into two calls) */
		uint32_t bytes =
		    (p.pad_cols + GEMM_COLS) * p.pad_rows * es +
		    rw_panel_e_bytes(p.pad_rows, p.cols, dtype_is_f8(to));
		p.at = (BufRef){st->buffer(st, p.tile, bytes, 8, REGION_ANY,
		                           "tensor block"),
		                0};
		*layout_piece(tp) = p;
	}
	return tp;
}

uint32_t
layout_least_stored(uint32_t *stored, const uint8_t *skip, uint32_t tiles,
                    uint32_t bytes)
{
	uint32_t best = UINT32_MAX;
	for (uint32_t t = 0; t < tiles; t++)
		if (!(skip && skip[t]) &&
		    (best == UINT32_MAX || stored[t] < stored[best]))
			best = t;
	stored[best] += bytes;
	return best;
}

uint32_t
layout_least_apart(uint32_t *stored, uint8_t *held, uint32_t *used,
                   uint32_t tiles, uint32_t bytes)
{
	if (*used == tiles) {
		memset(held, 0, tiles);
		*used = 0;
	}
	uint32_t t = layout_least_stored(stored, held, tiles, bytes);
	held[t] = 1;
	++*used;
	return t;
}

void
tile_log_add(TileLog *log, uint32_t tile)
{
	GROW(log->tile, log->n, log->cap);
	log->tile[log->n++] = tile;
}

uint32_t
tile_log_next(TileLog *log)
{
	if (log->next >= log->n)
		die("a layout placed more weight blocks than its plan");
	return log->tile[log->next++];
}

TensorPlace *
layout_loop_copies(Storage *st, const TensorPlace *want, TileLog *owners,
                   uint32_t *stored, uint32_t tiles, uint32_t times)
{
	TensorPlace *home =
	    tensor_place_new(want->tensor, want->rows, want->cols, want->dtype);
	uint32_t es = (uint32_t)dtype_size(want->dtype), used = 0;
	/* one block a tile while tiles remain: a tile sends each of its
	 * blocks to the block's copies, so blocks piled on the few emptiest
	 * tiles made So400m f8's position embedding at batch 4 an exchange
	 * of 70,353 cycles (283,488 bytes sent by one tile) */
	uint8_t *held = owners->replay ? NULL : xcalloc(tiles, 1);
	for (int k = 0; k < want->npiece; k++) {
		const Piece *p = &want->piece[k];
		int seen = 0;
		for (int i = 0; i < home->npiece && !seen; i++) {
			const Piece *h = &home->piece[i];
			seen = h->row0 == p->row0 && h->rows == p->rows &&
			       h->col0 == p->col0 && h->cols == p->cols;
		}
		if (seen)
			continue;
		uint32_t pad = layout_pad_cols(p->cols),
		         bytes = p->rows * pad * es;
		uint32_t t;
		if (owners->replay) {
			t = tile_log_next(owners);
		} else {
			t = layout_least_apart(stored, held, &used, tiles,
			                       bytes * times);
			tile_log_add(owners, t);
		}
		*layout_piece(home) =
		    (Piece){.tile = t,
		            .at = {st->buffer(st, t, bytes, 8, REGION_ANY,
		                              "loop weight"),
		                   0},
		            .row0 = p->row0,
		            .rows = p->rows,
		            .col0 = p->col0,
		            .cols = p->cols,
		            .pad_rows = p->rows,
		            .pad_cols = pad,
		            .format = PF_ROWMAJOR};
	}
	free(held);
	return home;
}

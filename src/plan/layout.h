/*
 * layout.h - where a tensor's elements live: its layout (TensorPlace), a
 * list of pieces, each a block of the tensor's 2-D view stored on one tile
 * in one format, at an offset in a buffer.
 *
 * A layout is a function of the plan's decisions (which tiles, which
 * format, how padded): the planner computes layouts to price and choose,
 * and the lowering computes the same layouts with the same functions to
 * carry the plan out. The two differ only in their Storage: the buffers a
 * layout asks for are numbered by the planner (who counts their bytes per
 * tile) and made in the Lowered by the lowering (lower_buffer, with
 * lifetimes). A BufRef's buffer is the Storage's number.
 *
 * relayout (layout_moves) cuts two layouts into runs of elements and
 * matches them: the moves that fill one layout from the other, which the
 * planner prices (layout_moves_cycles) and the lowering turns into an
 * exchange step.
 */
#ifndef IPU_LAYOUT_H
#define IPU_LAYOUT_H

#include <stdint.h>

#include "../graph/graph.h"
#include "../kernels/rowwise.h"
#include "../target/dtype.h"
#include "../util/util.h"

typedef enum {
	REGION_ANY,         /* anywhere in data memory */
	REGION_INTERLEAVED, /* 128-bit accessible (ld128putcs sources) */
} MemRegion;

/* An address inside a buffer: buf's address + offset. */
typedef struct {
	int32_t buf;
	uint32_t offset;
} BufRef;

/* How a block of a tensor is laid out in a buffer. */
typedef enum {
	PF_ROWMAJOR, /* rows x cols elements, row stride = cols */
	PF_GEMM_B,   /* the GEMM kernel's weight layout ($CWEI panels) */
	PF_GEMM_C,   /* the GEMM kernel's output layout (column panels) */
	/* the transpose of the tensor's block, in the layouts above: the
	 * block's rows x cols are the tile's cols x rows */
	PF_ROWMAJOR_T,
	PF_GEMM_B_T,
} PieceFormat;

/* A block [row0, row0 + rows) x [col0, col0 + cols) of a tensor's 2-D
 * view, stored on one tile padded to pad_rows x pad_cols. */
typedef struct {
	uint32_t tile;
	BufRef at;
	uint32_t row0, rows, col0, cols;
	uint32_t pad_rows, pad_cols;
	uint8_t format; /* PieceFormat */
	/* with layout_segments' bt: one of the bt_panels panels of 32
	 * columns (col0 / 32 its number) of a block of B^T rows, each
	 * pad_rows x 32 elements, panel j at j x pad_rows x 32 elements of
	 * one buffer, zero-padded; 0: a piece of its own */
	uint8_t bt_panels;
	/* with layout_segments' vb: a 32 x 16 block of B (one weight panel's
	 * K-panel x n-panel), block vb_index - 1 of the vb_count blocks of
	 * one buffer on its tile, 32 x 16 elements each, zero-padded (its f8
	 * mirror: PF_GEMM_B panels, 512 bytes each); 0: not such a block */
	uint8_t vb_index, vb_count;
} Piece;

/* Where the elements of one graph tensor live. Every element is in at
 * least one piece (exactly one, except for copies the host writes). */
typedef struct {
	int32_t tensor; /* graph tensor id */
	uint32_t rows, cols;
	DType dtype;
	Piece *piece;
	int npiece;
} TensorPlace;

/* The buffers layouts are stored in: the planner's numbering or the
 * lowering's buffers. `buffer` returns the new buffer's number. */
typedef struct Storage Storage;
struct Storage {
	int32_t (*buffer)(Storage *s, uint32_t tile, uint32_t bytes,
	                  uint32_t align, MemRegion region, const char *what);
};

/* layout.c */
TensorPlace *tensor_place_new(int32_t tensor, uint32_t rows, uint32_t cols,
                              DType dtype);
void tensor_place_free(TensorPlace *tp);
Piece *layout_piece(TensorPlace *tp); /* a new piece at the end */
/* The same blocks on the same tiles in the same formats, piece by piece. */
int layout_same(const TensorPlace *x, const TensorPlace *y);
/* 1 if every piece of tp is row-major or GEMM C panels: what the
 * exchange and the elementwise and row-wise kernels read (not a GEMM's
 * transposed A or packed B, which only that GEMM reads). */
int layout_readable(const TensorPlace *tp);
/* 1 if tp's pieces are in the GEMM weight layout (PF_GEMM_B, _B_T). */
int layout_is_packed(const TensorPlace *tp);
/* Elements per row a row-major layout pads to: a multiple of 8, what
 * every elementwise kernel walks in (and whole 8-byte atoms). */
uint32_t layout_pad_cols(uint32_t cols);
/* The pieces of the default layout of a rows x cols view on `tiles`
 * tiles (a layout of fewer pieces than tiles starts where the last one
 * ended: the planner's choice of tile0). */
uint32_t layout_default_pieces(uint32_t tiles, uint32_t rows, uint32_t cols);
/* The default layout of a rows x cols view on `tiles` tiles from tile0 on
 * (wrapping): row-major blocks of whole rows spread over the tiles, and
 * column blocks of multiples of 16 when there are fewer rows than tiles,
 * rows padded to layout_pad_cols; a "tensor block" buffer each. */
TensorPlace *layout_default(Storage *st, uint32_t tiles, int32_t tensor,
                            uint32_t rows, uint32_t cols, DType dt,
                            uint32_t tile0);
/* A tensor's rows x cols view cut into segments of whole rows at
 * bounds[0] = 0 < bounds[1] < ... < bounds[n] = rows, each in the default
 * layout of its own rows (its pieces' rows offset by its first): a
 * segment of fewer pieces than tiles from tile *next % tiles on (and
 * *next then past it, as the planner's spread), one of as many or more
 * from tile 0. The slices of whole rows that read such a tensor alias
 * their segment's pieces (layout_row_range), each spread over the chip. */
TensorPlace *layout_segments(Storage *st, uint32_t tiles, int32_t tensor,
                             uint32_t rows, uint32_t cols, DType dt,
                             const uint32_t *bounds, int n, uint32_t *next,
                             const uint32_t *bt, const uint32_t *vb);
/* With bt (NULL: none) and bt[s] > 0 (plan_segment_bt_rows): segment s
 * holds matrices of bt[s] rows, each cut into blocks of 8 rows (the
 * last fewer), a block on a tile of its own from *next on, stored as
 * ceil(cols / 32) panels of 8 x 32 elements in one buffer (Piece
 * bt_panels), zero-padded: the f8 cast of such a block is half of B^T's
 * n-panel in the GEMM weight layout (pack_bt's, docs/kernel-pack.md:
 * rows 0-7 or 8-15 of each of its K-panels, 256 contiguous bytes each). */
/* Only where the blocks take at most LAYOUT_BT_PER_TILE a tile: each
 * is kept for the whole program (So400m f8 at batch 1 and 2; batch 4's
 * fullest tile has a few bytes to spare), else the default layout. */
enum { LAYOUT_BT_ROWS = 8, LAYOUT_BT_COLS = 32, LAYOUT_BT_PER_TILE = 2 };
/* With vb (NULL: none) and vb[s] > 0 (plan_segment_vb_rows): segment s
 * holds matrices of vb[s] rows (B of a matmul each), cut into blocks of
 * 32 rows by 16 columns (the last fewer), zero-padded, spread over the
 * tiles, a tile's blocks in one buffer (Piece vb_index, vb_count): the f8
 * cast of a block is B's weight panel of its K-panel and n-panel
 * (pack_b_f16_f8, docs/kernel-pack.md); its f8 mirror (layout_mirror)
 * holds those panels as PF_GEMM_B pieces. Only where they take at most
 * LAYOUT_BT_PER_TILE a tile (kept for the whole program). */
enum { LAYOUT_VB_ROWS = 32, LAYOUT_VB_COLS = 16 };
/* The pieces of `from` inside rows [r0, r1) of its view, as tensor
 * `tensor`'s pieces (r1 - r0 rows; rows renumbered from r0), the same
 * buffers; NULL if a piece lies across r0 or r1. */
TensorPlace *layout_row_range(const TensorPlace *from, int32_t tensor,
                              uint32_t r0, uint32_t r1);
/* like's pieces (tiles, blocks, formats; row-major rows padded to whole
 * 8-byte atoms of dt) for `tensor` in new buffers of dt elements, `what`
 * each; with one_row, one row of each piece (a row broadcast down the
 * block). */
TensorPlace *layout_mirror(Storage *st, const TensorPlace *like, int32_t tensor,
                           DType dt, int one_row, const char *what);
/* A gather's layouts (kernels/gather.S): the table [v, dcols] in column
 * blocks of all v rows, layout_gather_block columns each (a multiple of
 * 8: whole atoms; the last one may be narrower, padded to 8) on as many
 * tiles from tile0 on (wrapping); the ids [n] whole next to each block;
 * the output [n, dcols] in the table's column blocks: place[0] table,
 * [1] ids, [2] output. */
uint32_t layout_gather_block(uint32_t tiles, uint32_t dcols);
void layout_gather(Storage *st, uint32_t tiles, uint32_t tile0,
                   const int32_t id[3], uint32_t v, uint32_t dcols, uint32_t n,
                   DType dt, TensorPlace *place[3]);
/* 1 if the row-wise kernel of op reads tp's pieces as they are: whole
 * rows (layout_rows_whole), for the f16 softmax also whole rows in the
 * GEMM C layout. */
int layout_rowwise_reads(const TensorPlace *tp, RwOp op);
/* layout_rows for op's kernel: for the f16 softmax in the GEMM C layout
 * (a GEMM's C panels then move into it in blocks of a panel's rows). */
TensorPlace *layout_rowwise_in(Storage *st, uint32_t tiles, int32_t tensor,
                               uint32_t rows, uint32_t cols, DType dt,
                               uint32_t tile0, RwOp op);
/* The output of a row-wise op on x's pieces of whole rows, `tensor`,
 * "tensor block" buffers: x's rows widened to rw_dst_row_bytes, or for
 * the f16 softmax in the GEMM C layout (16-column panels, what a GEMM
 * reads as its A: its relayout then moves panel blocks, not 16-element
 * runs of each row) with the kernel's e after the panels; `to`: the
 * type the kernel writes, x's or (rw_softmax_f16h8) f8, 32 bytes a
 * panel row (layout_rowwise_out_parts). */
TensorPlace *layout_rowwise_out(Storage *st, const TensorPlace *x,
                                int32_t tensor, RwOp op, DType to);
/* Pieces of layout_rowwise_out a piece of x: 1, or for the f16
 * softmax writing f8 (rw_softmax_f16h8) its panels of 32 columns, the f8
 * GEMM's A K-panel rows, as row-major pieces x 32 bytes each, so
 * that PV's A chunks take a block of a panel's rows in one transfer
 * (piece k's panels are pieces k x parts ..). */
uint32_t layout_rowwise_out_parts(RwOp op, DType dt, DType to, uint32_t cols);
/* The tile of 0 .. tiles - 1 (not one marked in skip[], when not NULL;
 * some must be unmarked) with the fewest bytes in stored[], which then
 * stores `bytes` more: where weights go to spread evenly. */
uint32_t layout_least_stored(uint32_t *stored, const uint8_t *skip,
                             uint32_t tiles, uint32_t bytes);
/* layout_least_stored of the tiles not yet in held[] (*used of them;
 * all again once every tile is), which it then marks: one block of a
 * weight a tile while tiles remain, so that no tile sends many. */
uint32_t layout_least_apart(uint32_t *stored, uint8_t *held, uint32_t *used,
                            uint32_t tiles, uint32_t bytes);

/* Tiles chosen in order (the weight balance's): the planner appends its
 * choices, the lowering (replay) reads them back in the same order. */
typedef struct {
	uint32_t *tile;
	uint32_t n, cap;
	uint32_t next; /* replay: the next to read */
	int replay;
} TileLog;
void tile_log_add(TileLog *log, uint32_t tile);
/* The next tile of a replayed log (die()s past its end: a lowering that
 * does not follow its plan). */
uint32_t tile_log_next(TileLog *log);
/* A weight of one loop iteration that a consumer wants in several copies
 * (`want`: a bias next to every block, gamma next to every piece of
 * rows) is stored once: each distinct block of `want` in a new "loop
 * weight" buffer on the tile with the fewest bytes in stored[] (each byte
 * counting `times`) that holds no other block of it while some tile
 * holds none, or, replaying, on the log's next tile. */
TensorPlace *layout_loop_copies(Storage *st, const TensorPlace *want,
                                TileLog *owners, uint32_t *stored,
                                uint32_t tiles, uint32_t times);

/* relayout.c: moving a tensor's elements from one layout to another.
 * Element f (the flat row-major index of from's 2-D view) goes to element
 * map(f) of to's view; map must move each row of `from` as a whole (a
 * reshape keeps f; a permutation of axes before the last one moves rows;
 * a slice drops rows: map gives LAYOUT_DROP for elements not moved), or
 * with a column window only the columns [col_begin, col_end) of each row
 * (a slice that cuts the last axis), each such part as a whole.
 * NULL: the identity. */
#define LAYOUT_DROP UINT64_MAX
typedef struct {
	uint64_t (*fn)(const void *ctx, uint64_t flat);
	const void *ctx;
	/* 1: fills part of `to` only (a concat's input), the rest of `to`
	 * comes from other sources; 0: every element of `to` is moved */
	int partial;
	/* col_end > 0: of each of from's rows only these columns move */
	uint64_t col_begin, col_end;
	/* > 0: from's runs are cut at multiples of `unit` elements of its
	 * flat order, and each such part moves as a whole (a chain of maps
	 * over the rows of narrower tensors: MapChain) */
	uint64_t unit;
	/* 1: no reader of `to` looks at its rows' padding (a row-wise
	 * kernel's private input: it masks a row's last atom and reads no
	 * further), so a row's last move also fills the padding after it
	 * from the source's: the rows of a panel then continue each other
	 * on both sides and merge into one transfer */
	int pad_free;
} FlatMap;
/* The identity into a row-wise kernel's private input (pad_free). */
extern const FlatMap layout_into_rows;

/* A permutation of the axes before the last, as a FlatMap over whole
 * rows: a source row's index, as digits in the input's axes, goes to the
 * output's row with the digits permuted. */
typedef struct {
	int rank; /* axes before the last */
	int64_t in_dim[GRAPH_MAX_RANK], out_stride[GRAPH_MAX_RANK];
	int64_t perm[GRAPH_MAX_RANK];
	uint64_t cols;
} RowPerm;

/* The map of a tensor of shape `in` to the tensor whose axis k is in's
 * axis perm->dim[k] (perm keeps the last axis). */
FlatMap layout_row_perm(RowPerm *p, const Shape *in, const Shape *perm);

/* A slice as a FlatMap over rows: a source row inside [begin, end) on
 * every axis before the last goes to its place in the output, the others
 * are dropped (LAYOUT_DROP); of each row the columns of the last axis's
 * [begin, end) move (a column window when that cuts the row). */
typedef struct {
	int rank; /* axes before the last */
	int64_t in_dim[GRAPH_MAX_RANK], begin[GRAPH_MAX_RANK],
	    end[GRAPH_MAX_RANK];
	uint64_t cols, col_begin, out_cols;
} RowSlice;
FlatMap layout_row_slice(RowSlice *s, const Shape *in, const Shape *begin,
                         const Shape *end);

/* Input k (0 or 1) of a concat along an axis before the last, as a
 * partial FlatMap over whole rows: a row of a's or b's goes to its place
 * in out, b's past a's part of the axis. */
typedef struct {
	int rank; /* axes before the last */
	int64_t in_dim[GRAPH_MAX_RANK], out_dim[GRAPH_MAX_RANK];
	int axis;
	int64_t offset; /* added to the axis: 0 for a, a's dim for b */
	uint64_t cols;
} RowConcat;
FlatMap layout_row_concat(RowConcat *c, const Shape *a, const Shape *b,
                          int axis, int k);

/* Maps over whole rows applied in turn: a tensor seen through reshapes
 * (the flat order kept), permutations of the axes before the last and
 * slices of whole rows of another one (plan_view_of). Its unit is the
 * greatest common divisor of every tensor's last axis in the chain, so
 * that a unit of the first tensor lies in one row of each. */
enum { LAYOUT_CHAIN_MAX = 8 };
typedef struct {
	int n;                           /* maps */
	uint8_t slice[LAYOUT_CHAIN_MAX]; /* map k: 1 s[k], 0 p[k] */
	RowPerm p[LAYOUT_CHAIN_MAX];
	RowSlice s[LAYOUT_CHAIN_MAX];
	uint64_t unit; /* 0: no chain (the tensor itself) */
} MapChain;
/* The chain's map in *m, or NULL for no chain (the identity). */
const FlatMap *layout_chain_map(const MapChain *c, FlatMap *m);

/* One move: `words` 32-bit words from src on src_tile to every dst[k] on
 * dst_tile[k] (a multicast). */
typedef struct {
	uint32_t src_tile;
	BufRef src;
	uint32_t words;
	uint32_t ndst;
	uint32_t first; /* its destinations: Moves.dst_tile / dst[first ..] */
} Move;

typedef struct {
	Move *move;
	int n, cap;
	uint32_t *dst_tile;
	BufRef *dst;
	uint32_t ndst, capdst;
} Moves;

/* Appends to m the moves that fill every piece of `to` from where `from`
 * holds its elements: contiguous runs on both sides, merged where both
 * sides continue, one multicast per source run that several pieces need,
 * sender by sender. The pieces must be row-major or in the
 * GEMM C layout (runs of whole words; a row's last run may end inside a
 * word whose rest is padding on both sides: it is moved whole); an
 * element of `to` that `from` does not hold is an error. */
int layout_moves(const TensorPlace *from, const TensorPlace *to,
                 const FlatMap *map, Moves *m, Diag *d);
void moves_free(Moves *m);
/* The moves m[first ..] reordered round by round over the senders (every
 * sender's first move, then every sender's second, ...), each sender's
 * own order kept: the order an exchange should issue them in (the
 * scheduler places transfers greedily in order). */
void layout_moves_interleave(Moves *m, int first);
/* An exchange of moves m[first ..] on `tiles` tiles, priced before
 * scheduling: the busiest tile's sent or received items (a receiver's
 * moves back to back), the phase's preamble. */
uint64_t layout_moves_cycles(const Moves *m, int first, uint32_t tiles);

#endif

/*
 * pkg.h - the package: one file holding a compiled program for a chip, as
 * codegen writes it and the runtime loads it.
 *
 * A Package is the in-memory form: the chip and the number of tiles used
 * (0..tiles-1); byte blobs, deduplicated, that segments refer to by index;
 * segments shared by every tile (the linked kernels) and each tile's own
 * segments and supervisor entry; the tensor table (every host-visible
 * tensor and the pieces that hold its elements on tiles); and, for reports
 * (`ipu inspect`), the buffers, steps, kernels, the predicted cycles, the
 * compile time and a description of the plan.
 *
 * pkg_write serialises it (docs/package.md gives the byte layout, version
 * PKG_VERSION, with a CRC-32 over everything after the header) and
 * pkg_read parses and validates it: every count, offset, address, piece
 * and string is checked, so a truncated or corrupt file gives a Diag that
 * names what is wrong. The writer runs the same checks, so that a package
 * that was written can always be read.
 *
 * Element types and roles are plain numbers that mirror the graph IR's
 * DType and TensorRole (src/graph/graph.h); this layer does not include
 * the graph.
 */
#ifndef IPU_PKG_H
#define IPU_PKG_H

#include <stddef.h>
#include <stdint.h>

#include "../target/chip.h"
#include "../target/dtype.h"
#include "../util/util.h"

enum {
	PKG_VERSION = 3, /* 2: steps have runs; 3: what a profile needs */
	PKG_HEADER_BYTES = 32,
	PKG_MAX_NAME = 255,     /* tensor, kernel, buffer kind, step text */
	PKG_MAX_PLAN = 1 << 16, /* the plan description */
};

/* The file's first 8 bytes. */
#define PKG_MAGIC "IPUPKG\r\n"

/* Roles: the graph's TensorRole numbers; intermediates are not stored. */
enum { PKG_ROLE_INPUT = 0, PKG_ROLE_WEIGHT = 1, PKG_ROLE_OUTPUT = 3 };

/* Piece formats: plan/layout.h's PieceFormat numbers. The _T formats hold the
 * transpose of the tensor's block (pad_rows x pad_cols on the tile, the
 * block's cols x rows of it used). */
enum {
	PKG_PF_ROWMAJOR = 0,
	PKG_PF_GEMM_B = 1,
	PKG_PF_GEMM_C = 2,
	PKG_PF_ROWMAJOR_T = 3,
	PKG_PF_GEMM_B_T = 4,
};

/* Step kinds: lower.h's StepKind numbers. */
enum { PKG_STEP_EXCHANGE = 0, PKG_STEP_COMPUTE = 1 };

typedef struct {
	uint8_t *data;
	uint32_t len; /* >= 1 */
} PkgBlob;

/* `blob`'s bytes at `addr` of tile memory. */
typedef struct {
	uint32_t addr;
	uint32_t blob; /* index into Package.blob */
} PkgSegment;

typedef struct {
	uint32_t entry; /* the supervisor starts here */
	PkgSegment *seg;
	uint32_t nseg, capseg;
} PkgTile;

/* A block [row0, row0 + rows) x [col0, col0 + cols) of a tensor stored at
 * `addr` of `tile` as a pad_rows x pad_cols block in `format`. */
typedef struct {
	uint32_t tile, addr;
	uint32_t row0, rows, col0, cols;
	uint32_t pad_rows, pad_cols;
	uint8_t format; /* PKG_PF_* */
} PkgPiece;

typedef struct {
	char *name;
	uint8_t dtype; /* DType (target/dtype.h) */
	int8_t scale;  /* f8: power-of-two scale (-32..31); else 0 */
	uint8_t role;  /* PKG_ROLE_* */
	uint32_t rows, cols;
	PkgPiece *piece;
	uint32_t npiece, cappiece;
} PkgTensor;

/* What a buffer holds, for memory reports (docs/profile.md): data the
 * program computes (inputs and outputs too), weights, kernel argument
 * blocks, the supervisor's saved return address and loop count. */
enum {
	PKG_MEM_ACTIVATIONS = 0,
	PKG_MEM_WEIGHTS = 1,
	PKG_MEM_ARGUMENTS = 2,
	PKG_MEM_STACK = 3,
	PKG_MEM_COUNT
};
/* A buffer's last step when it lives to the end of the program. */
#define PKG_TO_END 0xffffffffu

/* A buffer as placed, for reports: `kind` says what it holds. It is live
 * from the start of step `first` to the end of step `last` (PKG_TO_END:
 * the program's end); buffers whose lifetimes are disjoint may share
 * bytes. */
typedef struct {
	uint32_t tile, addr, bytes;
	uint8_t category; /* PKG_MEM_* */
	uint32_t first, last;
	char *kind;
} PkgBuffer;

/* An operation of the graph the program was compiled from: the tensor it
 * makes, its kind ("matmul"), its multiply-accumulates and the element
 * type of its first input (the rate of a matmul's MACs). */
typedef struct {
	char *name, *kind;
	uint64_t macs;
	uint8_t dtype; /* DType (target/dtype.h) */
} PkgOp;

typedef struct {
	uint8_t kind;    /* PKG_STEP_* */
	uint32_t runs;   /* times a run of the program runs it (a loop's: its
	                    iterations), >= 1 */
	uint64_t cycles; /* of one run */
	char *what;
	uint64_t overhead; /* of one run: the cost model's cycles around it
	                      (the sync before an exchange, a call's) */
	uint64_t macs;     /* of one run: the graph's multiply-accumulates */
	uint32_t *op;      /* indices into Package.op of the ops it serves */
	uint32_t nop;      /*   (none: the loop's own steps) */
	uint32_t *kernel;  /* indices into Package.kernel of those it calls */
	uint32_t nkernel;
} PkgStep;

/* A kernel linked into the shared code: its entry and how many calls the
 * program makes (over all tiles and steps). */
typedef struct {
	char *name;
	uint32_t addr;
	uint32_t calls;
} PkgKernel;

typedef struct {
	const Chip *chip;
	uint32_t tiles; /* tiles used: 0..tiles-1 */
	PkgBlob *blob;
	uint32_t nblob, capblob;
	/* pkg_blob's index (open addressing: blob + 1, 0 empty), rebuilt
	 * when it is less than half empty */
	uint32_t *blob_index, blob_index_cap;
	PkgSegment *shared; /* loaded on every tile */
	uint32_t nshared, capshared;
	PkgTile *tile; /* `tiles` entries */
	PkgTensor *tensor;
	uint32_t ntensor, captensor;
	PkgBuffer *buf;
	uint32_t nbuf, capbuf;
	PkgStep *step;
	uint32_t nstep, capstep;
	PkgKernel *kernel;
	uint32_t nkernel, capkernel;
	PkgOp *op;
	uint32_t nop, capop;
	/* Where each step's code starts on each tile: step_pc[t * (nstep + 1)
	 * + s] for step s of tile t, and at s = nstep the program's epilogue
	 * (docs/package.md, "Step code"); NULL: not recorded. */
	uint32_t *step_pc;
	uint64_t total_cycles; /* predicted */
	uint64_t compile_us;   /* compile time, microseconds */
	char *plan;            /* free-form description; never NULL */
} Package;

/* Building (codegen, tests). Strings and bytes are copied. */
Package *pkg_new(const Chip *chip, uint32_t tiles);
void pkg_free(Package *p);
/* Segments of these bytes: identical bytes are stored once (one blob). */
void pkg_add_shared(Package *p, uint32_t addr, const void *data, uint32_t len);
void pkg_add_segment(Package *p, uint32_t tile, uint32_t addr, const void *data,
                     uint32_t len);
void pkg_set_entry(Package *p, uint32_t tile, uint32_t entry);
PkgTensor *pkg_add_tensor(Package *p, const char *name, uint8_t dtype,
                          int8_t scale, uint8_t role, uint32_t rows,
                          uint32_t cols);
PkgPiece *pkg_add_piece(PkgTensor *t);
/* A buffer of category PKG_MEM_ACTIVATIONS alive for the whole program;
 * the caller may set its category and lifetime. */
PkgBuffer *pkg_add_buffer(Package *p, uint32_t tile, uint32_t addr,
                          uint32_t bytes, const char *kind);
/* A step serving no op and calling no kernel, of 0 MACs; see
 * pkg_step_add_op / pkg_step_add_kernel. */
PkgStep *pkg_add_step(Package *p, uint8_t kind, const char *what,
                      uint64_t cycles, uint32_t runs);
void pkg_step_add_op(PkgStep *s, uint32_t op);
void pkg_step_add_kernel(PkgStep *s, uint32_t kernel);
uint32_t pkg_add_op(Package *p, const char *name, const char *kind,
                    uint64_t macs, uint8_t dtype);
/* Record where the code of step s (0..nstep, after the last step is
 * added) starts on tile t. */
void pkg_set_step_pc(Package *p, uint32_t tile, uint32_t step, uint32_t pc);
void pkg_add_kernel(Package *p, const char *name, uint32_t addr,
                    uint32_t calls);
void pkg_set_plan(Package *p, const char *text);

/* Check everything pkg_read checks; 0 or IPU_EINVAL with d filled. */
int pkg_check(const Package *p, Diag *d);

/* Serialise (after pkg_check): *data is malloc'd. */
int pkg_write(const Package *p, uint8_t **data, size_t *len, Diag *d);
/* Write atomically (util's write_file). */
int pkg_write_file(const Package *p, const char *path, Diag *d);
/* Parse and validate `len` bytes; `name` is for messages. On success *out
 * is a new Package, else NULL and d says what is wrong. */
int pkg_read(const uint8_t *data, size_t len, const char *name, Package **out,
             Diag *d);
int pkg_read_file(const char *path, Package **out, Diag *d);

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32): crc is the running
 * value, 0 to start. */
uint32_t pkg_crc32(uint32_t crc, const void *data, size_t len);

/* Facts and lookups. */
const char *pkg_role_name(uint8_t role);     /* "input", "weight", "output" */
const char *pkg_format_name(uint8_t format); /* "rowmajor", "gemm_b", ... */
const PkgTensor *pkg_find_tensor(const Package *p, const char *name);
/* The step whose code holds pc in one tile's nstep + 1 step code
 * addresses (the last of several empty ones at the same address), or -1:
 * before the first step (the prologue), at or after the epilogue, outside
 * the program or no step code. */
int32_t pkg_step_in(const uint32_t *at, uint32_t nstep, uint32_t pc);
/* Bytes a piece occupies on its tile. PF_ROWMAJOR: pad_rows x pad_cols
 * elements, row stride pad_cols, the block's elements top-left and zeros
 * elsewhere. PF_GEMM_B / PF_GEMM_C: that same padded block in the GEMM
 * kernel's weight / output layout (src/kernels/gemm.h) with bk = pad_rows,
 * bn = pad_cols (B) or bm = pad_rows, bn = pad_cols (C): gemm_b_bytes /
 * the C layout's np x pad_rows x 16 elements. C holds any dtype (tensors
 * computed from a GEMM's output keep its layout); B any dtype (f8 as the
 * kernel's f8). */
uint64_t pkg_piece_bytes(const PkgTensor *t, const PkgPiece *pc);
/* 1 if this build converts the piece towards the tile (to_tile = 1, for
 * writing) or back (0, for reading). Every valid piece converts to the
 * tile; GEMM_B pieces do not convert back (gemm.h has no unpacker). */
int pkg_piece_convertible(const PkgTensor *t, const PkgPiece *pc, int to_tile);
/* Between a host row-major array of the whole tensor (rows x cols elements
 * of its dtype) and a piece's on-tile bytes (pkg_piece_bytes of them).
 * Packing zero-fills the padding. -1 (and nothing done) when not
 * pkg_piece_convertible, else 0. */
int pkg_piece_pack(const PkgTensor *t, const PkgPiece *pc, const void *host,
                   uint8_t *tile_bytes);
int pkg_piece_unpack(const PkgTensor *t, const PkgPiece *pc,
                     const uint8_t *tile_bytes, void *host);

#endif

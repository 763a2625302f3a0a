/*
 * pkg.c - the package file: building a Package in memory, checking it,
 * writing it and reading it back with full validation, the CRC-32 that
 * guards the body, and the conversion of tensor pieces between the host's
 * row-major arrays and their on-tile layouts.
 *
 * The byte layout is in docs/package.md. Everything is little-endian;
 * strings are a u32 length and that many bytes (no NUL). The reader never
 * trusts a count: each is checked against the bytes left before anything
 * is allocated, so a corrupt file cannot make it allocate much more than
 * the file's own size. After parsing, pkg_check validates the meaning
 * (addresses inside the chip's tile memory, pieces inside their tensor and
 * a buffer, ...), the same function the writer runs.
 */
#include "pkg.h"

#include "../kernels/gemm.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- CRC-32 ----------------------------------------------------------- */

/* zlib's CRC-32 (the IEEE polynomial, as gzip and PNG use it), fed at
 * most UINT_MAX bytes at a time (its length is an unsigned int). */
uint32_t
pkg_crc32(uint32_t crc, const void *data, size_t len)
{
	const Bytef *b = data;
	while (len) {
		uInt n = len > UINT_MAX ? UINT_MAX : (uInt)len;
		crc = (uint32_t)crc32(crc, b, n);
		b += n;
		len -= n;
	}
	return crc;
}

/* ---- facts ------------------------------------------------------------ */

const char *
pkg_role_name(uint8_t role)
{
	switch (role) {
	case PKG_ROLE_INPUT:
		return "input";
	case PKG_ROLE_WEIGHT:
		return "weight";
	case PKG_ROLE_OUTPUT:
		return "output";
	}
	return "?";
}

const char *
pkg_format_name(uint8_t format)
{
	switch (format) {
	case PKG_PF_ROWMAJOR:
		return "rowmajor";
	case PKG_PF_GEMM_B:
		return "gemm_b";
	case PKG_PF_GEMM_C:
		return "gemm_c";
	case PKG_PF_ROWMAJOR_T:
		return "rowmajor_t";
	case PKG_PF_GEMM_B_T:
		return "gemm_b_t";
	}
	return "?";
}

/* A _T format's layout on the tile, and whether the block is transposed. */
static uint8_t
base_format(uint8_t format)
{
	return format == PKG_PF_ROWMAJOR_T ? PKG_PF_ROWMAJOR
	       : format == PKG_PF_GEMM_B_T ? PKG_PF_GEMM_B
	                                   : format;
}

static int
transposed(uint8_t format)
{
	return format != base_format(format);
}

int32_t
pkg_step_in(const uint32_t *at, uint32_t nstep, uint32_t pc)
{
	/* the last s with at[s] <= pc: the addresses never decrease */
	uint32_t lo = 0, hi = nstep + 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (at[mid] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 || lo > nstep ? -1 : (int32_t)lo - 1;
}

const PkgTensor *
pkg_find_tensor(const Package *p, const char *name)
{
	for (uint32_t i = 0; i < p->ntensor; i++)
		if (!strcmp(p->tensor[i].name, name))
			return &p->tensor[i];
	return NULL;
}

/* The GEMM kernel's element type for a tensor dtype in its weight
 * layout; -1 if there is none. */
static int
gemm_type(uint8_t dtype)
{
	return dtype < DT_COUNT ? (int)gemm_dtype_of(dtype) : -1;
}

/* The C layout's bytes: 16-column panels of pad_rows rows. */
static uint64_t
panel_bytes(const PkgTensor *t, const PkgPiece *pc)
{
	return (uint64_t)gemm_n_panels(pc->pad_cols) * pc->pad_rows *
	       GEMM_COLS * (uint32_t)dtype_size(t->dtype);
}

uint64_t
pkg_piece_bytes(const PkgTensor *t, const PkgPiece *pc)
{
	uint64_t raw = (uint64_t)pc->pad_rows * pc->pad_cols *
	               (uint32_t)dtype_size(t->dtype);
	int g = gemm_type(t->dtype);
	/* The GEMM sizes are 32-bit: only ask for blocks whose elements
	 * alone fit in 2^24 bytes (far beyond a tile; the panels' padding
	 * at most multiplies that by 16 x 32). */
	if (raw > (1u << 24) || g < 0)
		return raw;
	if (base_format(pc->format) == PKG_PF_GEMM_B)
		return gemm_b_bytes((GemmDtype)g, pc->pad_rows, pc->pad_cols);
	if (pc->format == PKG_PF_GEMM_C)
		return panel_bytes(t, pc);
	return raw;
}

/* ---- building --------------------------------------------------------- */

Package *
pkg_new(const Chip *chip, uint32_t tiles)
{
	Package *p = xcalloc(1, sizeof *p);
	p->chip = chip;
	p->tiles = tiles;
	p->tile = xcalloc(tiles, sizeof *p->tile);
	p->plan = xstrdup("");
	return p;
}

void
pkg_free(Package *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->nblob; i++)
		free(p->blob[i].data);
	free(p->blob);
	free(p->blob_index);
	free(p->shared);
	if (p->tile)
		for (uint32_t i = 0; i < p->tiles; i++)
			free(p->tile[i].seg);
	free(p->tile);
	for (uint32_t i = 0; i < p->ntensor; i++) {
		free(p->tensor[i].name);
		free(p->tensor[i].piece);
	}
	free(p->tensor);
	for (uint32_t i = 0; i < p->nbuf; i++)
		free(p->buf[i].kind);
	free(p->buf);
	for (uint32_t i = 0; i < p->nstep; i++) {
		free(p->step[i].what);
		free(p->step[i].op);
		free(p->step[i].kernel);
	}
	free(p->step);
	for (uint32_t i = 0; i < p->nkernel; i++)
		free(p->kernel[i].name);
	free(p->kernel);
	for (uint32_t i = 0; i < p->nop; i++) {
		free(p->op[i].name);
		free(p->op[i].kind);
	}
	free(p->op);
	free(p->step_pc);
	free(p->plan);
	free(p);
}

static uint32_t
blob_hash(const void *data, uint32_t len)
{
	const uint8_t *b = data;
	uint32_t h = 2166136261u; /* FNV-1a */
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* The index slot of `data`: its blob's, or the empty one to take. */
static uint32_t *
blob_slot(Package *p, const void *data, uint32_t len)
{
	uint32_t mask = p->blob_index_cap - 1;
	for (uint32_t i = blob_hash(data, len) & mask;; i = (i + 1) & mask) {
		uint32_t *s = &p->blob_index[i];
		if (!*s)
			return s;
		const PkgBlob *b = &p->blob[*s - 1];
		if (b->len == len && !memcmp(b->data, data, len))
			return s;
	}
}

/* Equal blobs are stored once (argument blocks repeat over tiles). */
/* The index of a blob with these bytes: an existing identical one, or a
 * new one. len >= 1. */
static uint32_t
pkg_blob(Package *p, const void *data, uint32_t len)
{
	if (!len)
		die("pkg_blob: empty blob");
	if (2 * (p->nblob + 1) > p->blob_index_cap) {
		free(p->blob_index);
		p->blob_index_cap =
		    p->blob_index_cap ? 2 * p->blob_index_cap : 64;
		while (p->blob_index_cap < 2 * (p->nblob + 1))
			p->blob_index_cap *= 2;
		p->blob_index =
		    xcalloc(p->blob_index_cap, sizeof *p->blob_index);
		for (uint32_t i = 0; i < p->nblob; i++)
			*blob_slot(p, p->blob[i].data, p->blob[i].len) = i + 1;
	}
	uint32_t *slot = blob_slot(p, data, len);
	if (*slot)
		return *slot - 1;
	*slot = p->nblob + 1;
	GROW(p->blob, p->nblob, p->capblob);
	PkgBlob *b = &p->blob[p->nblob];
	b->data = xmalloc(len);
	memcpy(b->data, data, len);
	b->len = len;
	return p->nblob++;
}

void
pkg_add_shared(Package *p, uint32_t addr, const void *data, uint32_t len)
{
	uint32_t b = pkg_blob(p, data, len);
	GROW(p->shared, p->nshared, p->capshared);
	p->shared[p->nshared++] = (PkgSegment){.addr = addr, .blob = b};
}

void
pkg_add_segment(Package *p, uint32_t tile, uint32_t addr, const void *data,
                uint32_t len)
{
	if (tile >= p->tiles)
		die("pkg_add_segment: tile %u of %u", tile, p->tiles);
	uint32_t b = pkg_blob(p, data, len);
	PkgTile *t = &p->tile[tile];
	GROW(t->seg, t->nseg, t->capseg);
	t->seg[t->nseg++] = (PkgSegment){.addr = addr, .blob = b};
}

void
pkg_set_entry(Package *p, uint32_t tile, uint32_t entry)
{
	if (tile >= p->tiles)
		die("pkg_set_entry: tile %u of %u", tile, p->tiles);
	p->tile[tile].entry = entry;
}

PkgTensor *
pkg_add_tensor(Package *p, const char *name, uint8_t dtype, int8_t scale,
               uint8_t role, uint32_t rows, uint32_t cols)
{
	GROW(p->tensor, p->ntensor, p->captensor);
	PkgTensor *t = &p->tensor[p->ntensor++];
	memset(t, 0, sizeof *t);
	t->name = xstrdup(name);
	t->dtype = dtype;
	t->scale = scale;
	t->role = role;
	t->rows = rows;
	t->cols = cols;
	return t;
}

PkgPiece *
pkg_add_piece(PkgTensor *t)
{
	GROW(t->piece, t->npiece, t->cappiece);
	PkgPiece *pc = &t->piece[t->npiece++];
	memset(pc, 0, sizeof *pc);
	return pc;
}

PkgBuffer *
pkg_add_buffer(Package *p, uint32_t tile, uint32_t addr, uint32_t bytes,
               const char *kind)
{
	GROW(p->buf, p->nbuf, p->capbuf);
	p->buf[p->nbuf] = (PkgBuffer){.tile = tile,
	                              .addr = addr,
	                              .bytes = bytes,
	                              .last = PKG_TO_END,
	                              .kind = xstrdup(kind)};
	return &p->buf[p->nbuf++];
}

PkgStep *
pkg_add_step(Package *p, uint8_t kind, const char *what, uint64_t cycles,
             uint32_t runs)
{
	GROW(p->step, p->nstep, p->capstep);
	p->step[p->nstep] = (PkgStep){.kind = kind,
	                              .runs = runs,
	                              .cycles = cycles,
	                              .what = xstrdup(what)};
	return &p->step[p->nstep++];
}

void
pkg_step_add_op(PkgStep *s, uint32_t op)
{
	s->op = xrealloc(s->op, (s->nop + 1) * sizeof *s->op);
	s->op[s->nop++] = op;
}

void
pkg_step_add_kernel(PkgStep *s, uint32_t kernel)
{
	s->kernel = xrealloc(s->kernel, (s->nkernel + 1) * sizeof *s->kernel);
	s->kernel[s->nkernel++] = kernel;
}

uint32_t
pkg_add_op(Package *p, const char *name, const char *kind, uint64_t macs,
           uint8_t dtype)
{
	GROW(p->op, p->nop, p->capop);
	p->op[p->nop] = (PkgOp){xstrdup(name), xstrdup(kind), macs, dtype};
	return p->nop++;
}

void
pkg_set_step_pc(Package *p, uint32_t tile, uint32_t step, uint32_t pc)
{
	if (tile >= p->tiles || step > p->nstep)
		die("pkg_set_step_pc: tile %u step %u", tile, step);
	if (!p->step_pc)
		p->step_pc = xcalloc((size_t)p->tiles * (p->nstep + 1),
		                     sizeof *p->step_pc);
	p->step_pc[(size_t)tile * (p->nstep + 1) + step] = pc;
}

void
pkg_add_kernel(Package *p, const char *name, uint32_t addr, uint32_t calls)
{
	GROW(p->kernel, p->nkernel, p->capkernel);
	p->kernel[p->nkernel++] =
	    (PkgKernel){.name = xstrdup(name), .addr = addr, .calls = calls};
}

void
pkg_set_plan(Package *p, const char *text)
{
	free(p->plan);
	p->plan = xstrdup(text ? text : "");
}

/* ---- checking --------------------------------------------------------- */

/* An error about the package: d->file (the package's name, or "") stays. */
static int __attribute__((format(printf, 2, 3)))
bad(Diag *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof d->msg, fmt, ap);
	va_end(ap);
	d->line = d->col = 0;
	return IPU_EINVAL;
}

/* A name: 1..PKG_MAX_NAME printable ASCII bytes. Plan text: printable,
 * newlines and tabs, up to PKG_MAX_PLAN bytes. NULL if fine, else why. */
static const char *
bad_text(const char *s, size_t max, int multiline)
{
	size_t n = strlen(s);
	if (!multiline && n == 0)
		return "is empty";
	if (n > max)
		return "is too long";
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 && !(multiline && (ch == '\n' || ch == '\t')))
			return "holds a control character";
		if (ch == 0x7f)
			return "holds a control character";
	}
	return NULL;
}

typedef struct {
	uint32_t lo, hi; /* [lo, hi) */
	int shared;      /* -1: own segment i, else shared segment index */
	uint32_t index;
} Range;

static int
range_cmp(const void *a, const void *b)
{
	const Range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int
piece_cmp(const void *a, const void *b)
{
	const PkgPiece *x = *(PkgPiece *const *)a, *y = *(PkgPiece *const *)b;
	if (x->row0 != y->row0)
		return x->row0 < y->row0 ? -1 : 1;
	return x->col0 < y->col0 ? -1 : x->col0 > y->col0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp((*(PkgTensor *const *)a)->name,
	              (*(PkgTensor *const *)b)->name);
}

static int
check_segment(const Package *p, const PkgSegment *s, const char *what, Diag *d)
{
	const Chip *c = p->chip;
	if (s->blob >= p->nblob)
		return bad(d,
		           "%s: blob %u does not exist (the package has "
		           "%u)",
		           what, s->blob, p->nblob);
	if (!chip_in_memory(c, s->addr, p->blob[s->blob].len))
		return bad(d,
		           "%s: %u bytes at 0x%x are outside tile memory "
		           "0x%05x..0x%05x of the %s",
		           what, p->blob[s->blob].len, s->addr, c->mem_base,
		           c->mem_end, c->name);
	return 0;
}

/* The n segments as address ranges, sorted by address. */
static void
seg_ranges(const Package *p, const PkgSegment *s, uint32_t n, int shared,
           Range *r)
{
	for (uint32_t i = 0; i < n; i++)
		r[i] = (Range){s[i].addr, s[i].addr + p->blob[s[i].blob].len,
		               shared, i};
	qsort(r, n, sizeof *r, range_cmp);
}

/* The first of n sorted, disjoint ranges that ends after addr (n if none):
 * the only one that can hold addr or overlap a range starting there. */
static uint32_t
range_after(const Range *r, uint32_t n, uint32_t addr)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (r[mid].hi > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* a overlaps b, a starting no lower; t is the tile unless both are
 * shared. */
static int
overlap_error(uint32_t t, const Range *a, const Range *b, Diag *d)
{
	char where[32] = "";
	if (!a->shared || !b->shared)
		snprintf(where, sizeof where, "tile %u: ", t);
	return bad(d,
	           "%s%s segment %u (0x%x..0x%x) overlaps %s segment %u "
	           "(0x%x..0x%x)",
	           where, a->shared ? "shared" : "own", a->index, a->lo, a->hi,
	           b->shared ? "shared" : "own", b->index, b->lo, b->hi);
}

/* Segments of one tile: no two overlap; the entry lies in one, below
 * exec_end, word-aligned. `shared` holds the shared segments' ranges,
 * sorted and disjoint; `own` has room for the tile's nseg. Searching the
 * shared ranges keeps the time in the tile's own segments, however many
 * shared ones a file declares. */
static int
check_tile_layout(const Package *p, uint32_t t, const Range *shared, Range *own,
                  Diag *d)
{
	const PkgTile *pt = &p->tile[t];
	const Chip *c = p->chip;
	uint32_t n = pt->nseg, ns = p->nshared;
	seg_ranges(p, pt->seg, n, 0, own);
	for (uint32_t i = 0; i < n; i++) {
		if (i && own[i].lo < own[i - 1].hi)
			return overlap_error(t, &own[i], &own[i - 1], d);
		uint32_t k = range_after(shared, ns, own[i].lo);
		if (k < ns && shared[k].lo < own[i].hi)
			return shared[k].lo >= own[i].lo
			           ? overlap_error(t, &shared[k], &own[i], d)
			           : overlap_error(t, &own[i], &shared[k], d);
	}
	uint32_t e = pt->entry, k = range_after(shared, ns, e);
	int found = k < ns && shared[k].lo <= e;
	for (uint32_t i = 0; i < n && !found; i++)
		found = e >= own[i].lo && e < own[i].hi;
	if (!found || e % 4 || e >= c->exec_end)
		return bad(d, "tile %u: entry 0x%x is %s", t, e,
		           !found  ? "in none of the tile's segments"
		           : e % 4 ? "not a multiple of 4"
		                   : "not below the end of executable "
		                     "memory");
	return 0;
}

static int
check_piece(const Package *p, const PkgTensor *t, uint32_t ti, uint32_t k,
            const uint32_t *buf_first, const uint32_t *buf_order, Diag *d)
{
	const PkgPiece *pc = &t->piece[k];
	const Chip *c = p->chip;
	char what[PKG_MAX_NAME + 64];
	snprintf(what, sizeof what, "tensor %u ('%s') piece %u", ti, t->name,
	         k);
	if (pc->tile >= p->tiles)
		return bad(d, "%s: tile %u is not one of the %u tiles used",
		           what, pc->tile, p->tiles);
	if (pc->format > PKG_PF_GEMM_B_T)
		return bad(d, "%s: unknown format %u", what, pc->format);
	if (!pc->rows || !pc->cols || (uint64_t)pc->row0 + pc->rows > t->rows ||
	    (uint64_t)pc->col0 + pc->cols > t->cols)
		return bad(d,
		           "%s: rows %u..%u x cols %u..%u are not inside "
		           "the %u x %u tensor",
		           what, pc->row0, pc->row0 + pc->rows, pc->col0,
		           pc->col0 + pc->cols, t->rows, t->cols);
	if (base_format(pc->format) != PKG_PF_ROWMAJOR &&
	    gemm_type(t->dtype) < 0)
		return bad(d, "%s: format %s cannot hold %s elements", what,
		           pkg_format_name(pc->format), dtype_name(t->dtype));
	int tr = transposed(pc->format);
	uint32_t brows = tr ? pc->cols : pc->rows,
	         bcols = tr ? pc->rows : pc->cols;
	if (pc->pad_rows < brows || pc->pad_cols < bcols)
		return bad(d,
		           "%s: padded size %u x %u is smaller than the "
		           "%u x %u block%s",
		           what, pc->pad_rows, pc->pad_cols, brows, bcols,
		           tr ? " (transposed)" : "");
	uint64_t bytes = pkg_piece_bytes(t, pc);
	if (bytes > c->mem_end - c->mem_base ||
	    !chip_in_memory(c, pc->addr, (uint32_t)bytes))
		return bad(d,
		           "%s: %llu bytes at 0x%x are outside tile "
		           "memory 0x%05x..0x%05x of the %s",
		           what, (unsigned long long)bytes, pc->addr,
		           c->mem_base, c->mem_end, c->name);
	/* some buffer of its tile holds it */
	for (uint32_t i = buf_first[pc->tile]; i < buf_first[pc->tile + 1];
	     i++) {
		const PkgBuffer *b = &p->buf[buf_order[i]];
		if (pc->addr >= b->addr &&
		    (uint64_t)pc->addr + bytes <= (uint64_t)b->addr + b->bytes)
			return 0;
	}
	return bad(d,
	           "%s: %llu bytes at 0x%x of tile %u lie in no buffer "
	           "of the buffer table",
	           what, (unsigned long long)bytes, pc->addr, pc->tile);
}

/* A piece's top or bottom edge for the sweep below: at `row`, the columns
 * [xs[c0], xs[c1]) gain (+1) or lose (-1) a covering piece. */
typedef struct {
	uint32_t row, c0, c1;
	int delta;
} Edge;

static int
edge_cmp(const void *a, const void *b)
{
	const Edge *x = a, *y = b;
	return x->row < y->row ? -1 : x->row > y->row;
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* A segment tree over the elementary column intervals [xs[i], xs[i+1]):
 * per node, how many pieces cover all of it and how many of its columns
 * some piece covers. */
typedef struct {
	const uint32_t *xs;
	uint32_t *count;
	uint64_t *covered;
} Cover;

static void
cover_add(Cover *cv, uint32_t node, uint32_t lo, uint32_t hi, uint32_t a,
          uint32_t b, int delta)
{
	if (b <= lo || hi <= a)
		return;
	if (a <= lo && hi <= b) {
		cv->count[node] += (uint32_t)delta;
	} else {
		uint32_t mid = lo + (hi - lo) / 2;
		cover_add(cv, 2 * node, lo, mid, a, b, delta);
		cover_add(cv, 2 * node + 1, mid, hi, a, b, delta);
	}
	cv->covered[node] =
	    cv->count[node] ? cv->xs[hi] - cv->xs[lo]
	    : hi - lo == 1  ? 0
	                    : cv->covered[2 * node] + cv->covered[2 * node + 1];
}

/* Elements of t that no piece covers: the tensor's area less the area of
 * the union of its pieces' rectangles, by a sweep down the rows. Memory and
 * time grow with the number of pieces, never with the tensor's declared
 * size (a corrupt file can declare 2^64 elements). The pieces lie inside
 * the tensor (check_piece). */
static uint64_t
uncovered(const PkgTensor *t)
{
	uint32_t n = t->npiece, m = 0;
	uint32_t *xs = xmalloc(2 * (size_t)n * sizeof *xs);
	Edge *e = xmalloc(2 * (size_t)n * sizeof *e);
	for (uint32_t k = 0; k < n; k++) {
		xs[2 * k] = t->piece[k].col0;
		xs[2 * k + 1] = t->piece[k].col0 + t->piece[k].cols;
	}
	qsort(xs, 2 * (size_t)n, sizeof *xs, u32_cmp);
	for (uint32_t i = 0; i < 2 * n; i++)
		if (!m || xs[i] != xs[m - 1])
			xs[m++] = xs[i];
	for (uint32_t k = 0; k < n; k++) {
		const PkgPiece *pc = &t->piece[k];
		uint32_t *x0 = bsearch(&pc->col0, xs, m, sizeof *xs, u32_cmp);
		uint32_t c1 = pc->col0 + pc->cols;
		uint32_t *x1 = bsearch(&c1, xs, m, sizeof *xs, u32_cmp);
		uint32_t a = (uint32_t)(x0 - xs), b = (uint32_t)(x1 - xs);
		e[2 * k] = (Edge){pc->row0, a, b, 1};
		e[2 * k + 1] = (Edge){pc->row0 + pc->rows, a, b, -1};
	}
	qsort(e, 2 * (size_t)n, sizeof *e, edge_cmp);
	Cover cv = {xs, xcalloc(4 * (size_t)m, sizeof *cv.count),
	            xcalloc(4 * (size_t)m, sizeof *cv.covered)};
	uint64_t area = 0;
	for (uint32_t i = 0; i < 2 * n; i++) {
		if (i)
			area += cv.covered[1] * (e[i].row - e[i - 1].row);
		cover_add(&cv, 1, 0, m - 1, e[i].c0, e[i].c1, e[i].delta);
	}
	free(cv.count);
	free(cv.covered);
	free(xs);
	free(e);
	return (uint64_t)t->rows * t->cols - area;
}

/* Inputs and weights may be replicated (the host writes every copy: a
 * bias next to every block that adds it): every element in at least one
 * piece. */
static int
check_replicated_cover(const PkgTensor *t, uint32_t ti, Diag *d)
{
	uint64_t missing = uncovered(t);
	if (missing)
		return bad(d,
		           "tensor %u ('%s'): %llu of its %llu elements are "
		           "in no piece",
		           ti, t->name, (unsigned long long)missing,
		           (unsigned long long)t->rows * t->cols);
	return 0;
}

/* Every element of the tensor in exactly one piece: the areas add up and
 * no two pieces overlap (sorted by first row, so only pieces whose row
 * ranges meet are compared). */
static int
check_cover(const PkgTensor *t, uint32_t ti, PkgPiece **ord, Diag *d)
{
	if (t->role != PKG_ROLE_OUTPUT)
		return check_replicated_cover(t, ti, d);
	uint64_t area = 0;
	for (uint32_t k = 0; k < t->npiece; k++) {
		ord[k] = &t->piece[k];
		area += (uint64_t)t->piece[k].rows * t->piece[k].cols;
	}
	qsort(ord, t->npiece, sizeof *ord, piece_cmp);
	for (uint32_t k = 0; k < t->npiece; k++)
		for (uint32_t j = k + 1;
		     j < t->npiece &&
		     ord[j]->row0 < ord[k]->row0 + ord[k]->rows;
		     j++) {
			const PkgPiece *a = ord[k], *b = ord[j];
			if (b->col0 < a->col0 + a->cols &&
			    a->col0 < b->col0 + b->cols)
				return bad(d,
				           "tensor %u ('%s'): pieces at rows "
				           "%u, cols %u "
				           "and rows %u, cols %u overlap",
				           ti, t->name, a->row0, a->col0,
				           b->row0, b->col0);
		}
	if (area != (uint64_t)t->rows * t->cols)
		return bad(d,
		           "tensor %u ('%s'): its pieces hold %llu of its "
		           "%llu elements",
		           ti, t->name, (unsigned long long)area,
		           (unsigned long long)t->rows * t->cols);
	return 0;
}

static int
check_tensors(const Package *p, Diag *d)
{
	int r = 0;
	/* buffers by tile, for the piece-in-buffer check */
	uint32_t *first = xcalloc(p->tiles + 1, sizeof *first);
	uint32_t *order = xcalloc(p->nbuf, sizeof *order);
	for (uint32_t i = 0; i < p->nbuf; i++)
		first[p->buf[i].tile + 1]++;
	for (uint32_t t = 0; t < p->tiles; t++)
		first[t + 1] += first[t];
	uint32_t *fill = xcalloc(p->tiles, sizeof *fill);
	for (uint32_t i = 0; i < p->nbuf; i++) {
		uint32_t t = p->buf[i].tile;
		order[first[t] + fill[t]++] = i;
	}
	free(fill);
	PkgTensor **names = xcalloc(p->ntensor, sizeof *names);
	for (uint32_t i = 0; i < p->ntensor && !r; i++) {
		const PkgTensor *t = &p->tensor[i];
		const char *why = bad_text(t->name, PKG_MAX_NAME, 0);
		names[i] = &p->tensor[i];
		if (why) {
			r = bad(d, "tensor %u: the name %s", i, why);
			break;
		}
		if (t->dtype >= DT_COUNT)
			r = bad(d, "tensor %u ('%s'): unknown dtype %u", i,
			        t->name, t->dtype);
		else if (dtype_is_f8(t->dtype) ? t->scale < -32 || t->scale > 31
		                               : t->scale != 0)
			r = bad(d,
			        "tensor %u ('%s'): scale %d is not valid "
			        "for %s (f8: -32..31, else 0)",
			        i, t->name, t->scale, dtype_name(t->dtype));
		else if (t->role != PKG_ROLE_INPUT &&
		         t->role != PKG_ROLE_WEIGHT &&
		         t->role != PKG_ROLE_OUTPUT)
			r = bad(d, "tensor %u ('%s'): unknown role %u", i,
			        t->name, t->role);
		else if (!t->rows || !t->cols)
			r = bad(d, "tensor %u ('%s'): shape %u x %u is empty",
			        i, t->name, t->rows, t->cols);
		else if (!t->npiece)
			r = bad(d, "tensor %u ('%s') has no pieces", i,
			        t->name);
		for (uint32_t k = 0; k < t->npiece && !r; k++)
			r = check_piece(p, t, i, k, first, order, d);
		if (!r) {
			PkgPiece **ord = xcalloc(t->npiece, sizeof *ord);
			r = check_cover(t, i, ord, d);
			free(ord);
		}
	}
	if (!r && p->ntensor > 1) {
		qsort(names, p->ntensor, sizeof *names, name_cmp);
		for (uint32_t i = 1; i < p->ntensor && !r; i++)
			if (!strcmp(names[i]->name, names[i - 1]->name))
				r = bad(d, "two tensors are named '%s'",
				        names[i]->name);
	}
	free(names);
	free(first);
	free(order);
	return r;
}

int
pkg_check(const Package *p, Diag *d)
{
	Diag scratch;
	if (!d) {
		d = &scratch;
		diag_clear(d);
	}
	const Chip *c = p->chip;
	if (!c)
		return bad(d, "no chip");
	if (p->tiles < 1 || p->tiles > c->tiles)
		return bad(d, "%u tiles used; the %s has 1..%u", p->tiles,
		           c->name, c->tiles);
	const char *why = bad_text(p->plan, PKG_MAX_PLAN, 1);
	if (why)
		return bad(d, "the plan description %s", why);
	for (uint32_t i = 0; i < p->nblob; i++)
		if (!p->blob[i].len ||
		    p->blob[i].len > c->mem_end - c->mem_base)
			return bad(d,
			           "blob %u: %u bytes (1..%u, the size of "
			           "tile memory)",
			           i, p->blob[i].len, c->mem_end - c->mem_base);
	char what[64];
	for (uint32_t i = 0; i < p->nshared; i++) {
		snprintf(what, sizeof what, "shared segment %u", i);
		if (check_segment(p, &p->shared[i], what, d))
			return IPU_EINVAL;
	}
	uint32_t maxseg = 0;
	for (uint32_t t = 0; t < p->tiles; t++) {
		for (uint32_t i = 0; i < p->tile[t].nseg; i++) {
			snprintf(what, sizeof what, "tile %u segment %u", t, i);
			if (check_segment(p, &p->tile[t].seg[i], what, d))
				return IPU_EINVAL;
		}
		if (p->tile[t].nseg > maxseg)
			maxseg = p->tile[t].nseg;
	}
	Range *shared = xcalloc((size_t)p->nshared + 1, sizeof *shared),
	      *own = xcalloc((size_t)maxseg + 1, sizeof *own);
	seg_ranges(p, p->shared, p->nshared, 1, shared);
	int r = 0;
	for (uint32_t i = 1; i < p->nshared && !r; i++)
		if (shared[i].lo < shared[i - 1].hi)
			r = overlap_error(0, &shared[i], &shared[i - 1], d);
	for (uint32_t t = 0; t < p->tiles && !r; t++)
		r = check_tile_layout(p, t, shared, own, d);
	free(shared);
	free(own);
	if (r)
		return r;
	for (uint32_t i = 0; i < p->nbuf; i++) {
		const PkgBuffer *b = &p->buf[i];
		if ((why = bad_text(b->kind, PKG_MAX_NAME, 0)))
			return bad(d, "buffer %u: the kind %s", i, why);
		if (b->tile >= p->tiles)
			return bad(d,
			           "buffer %u ('%s'): tile %u is not one of "
			           "the %u tiles used",
			           i, b->kind, b->tile, p->tiles);
		if (!b->bytes || !chip_in_memory(c, b->addr, b->bytes))
			return bad(d,
			           "buffer %u ('%s'): %u bytes at 0x%x are "
			           "not inside tile memory 0x%05x..0x%05x "
			           "of the %s",
			           i, b->kind, b->bytes, b->addr, c->mem_base,
			           c->mem_end, c->name);
		if (b->category >= PKG_MEM_COUNT)
			return bad(d, "buffer %u ('%s'): unknown category %u",
			           i, b->kind, b->category);
		if (b->first > b->last ||
		    (b->last != PKG_TO_END && b->last >= p->nstep))
			return bad(d,
			           "buffer %u ('%s'): lifetime steps %u..%u "
			           "(%u steps; %u: to the end)",
			           i, b->kind, b->first, b->last, p->nstep,
			           PKG_TO_END);
	}
	for (uint32_t i = 0; i < p->nop; i++) {
		const PkgOp *o = &p->op[i];
		if ((why = bad_text(o->name, PKG_MAX_NAME, 0)) ||
		    (why = bad_text(o->kind, PKG_MAX_NAME, 0)))
			return bad(d, "op %u: the name or kind %s", i, why);
		if (o->dtype >= DT_COUNT)
			return bad(d, "op %u ('%s'): unknown dtype %u", i,
			           o->name, o->dtype);
	}
	for (uint32_t i = 0; i < p->nstep; i++) {
		const PkgStep *s = &p->step[i];
		if ((why = bad_text(s->what, PKG_MAX_NAME, 0)))
			return bad(d, "step %u: the description %s", i, why);
		if (s->kind > PKG_STEP_COMPUTE)
			return bad(d, "step %u ('%s'): unknown kind %u", i,
			           s->what, s->kind);
		if (!s->runs)
			return bad(d, "step %u ('%s'): runs 0 times", i,
			           s->what);
		for (uint32_t k = 0; k < s->nop; k++)
			if (s->op[k] >= p->nop)
				return bad(d,
				           "step %u ('%s'): op %u does not "
				           "exist (the package has %u)",
				           i, s->what, s->op[k], p->nop);
		for (uint32_t k = 0; k < s->nkernel; k++)
			if (s->kernel[k] >= p->nkernel)
				return bad(d,
				           "step %u ('%s'): kernel %u does not "
				           "exist (the package has %u)",
				           i, s->what, s->kernel[k],
				           p->nkernel);
	}
	for (uint32_t t = 0; p->step_pc && t < p->tiles; t++) {
		const uint32_t *at = p->step_pc + (size_t)t * (p->nstep + 1);
		for (uint32_t s = 0; s <= p->nstep; s++)
			if (at[s] % 4 || at[s] < c->mem_base ||
			    at[s] >= c->exec_end || (s && at[s] < at[s - 1]))
				return bad(d,
				           "tile %u: step %u's code at 0x%x is "
				           "not a word of executable memory at "
				           "or after the previous step's",
				           t, s, at[s]);
	}
	for (uint32_t i = 0; i < p->nkernel; i++) {
		const PkgKernel *k = &p->kernel[i];
		if ((why = bad_text(k->name, PKG_MAX_NAME, 0)))
			return bad(d, "kernel %u: the name %s", i, why);
		int in = 0;
		for (uint32_t j = 0; j < p->nshared && !in; j++) {
			const PkgSegment *s = &p->shared[j];
			in = k->addr >= s->addr &&
			     k->addr - s->addr < p->blob[s->blob].len;
		}
		if (!in || k->addr % 4 || k->addr >= c->exec_end)
			return bad(d,
			           "kernel %u ('%s'): entry 0x%x is not a "
			           "word of executable shared code",
			           i, k->name, k->addr);
	}
	return check_tensors(p, d);
}

/* ---- writing ---------------------------------------------------------- */

typedef struct {
	uint8_t *b;
	size_t n, cap;
} Out;

static void
put(Out *o, const void *src, size_t n)
{
	if (o->n + n > o->cap) {
		while (o->n + n > o->cap)
			o->cap = o->cap ? 2 * o->cap : 4096;
		o->b = xrealloc(o->b, o->cap);
	}
	memcpy(o->b + o->n, src, n);
	o->n += n;
}

static void
put_u8(Out *o, uint8_t v)
{
	put(o, &v, 1);
}

static void
put_u32(Out *o, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
	                (uint8_t)(v >> 24)};
	put(o, b, 4);
}

static void
put_u64(Out *o, uint64_t v)
{
	put_u32(o, (uint32_t)v);
	put_u32(o, (uint32_t)(v >> 32));
}

static void
put_str(Out *o, const char *s)
{
	size_t n = strlen(s);
	put_u32(o, (uint32_t)n);
	put(o, s, n);
}

static void
put_segs(Out *o, const PkgSegment *s, uint32_t n)
{
	put_u32(o, n);
	for (uint32_t i = 0; i < n; i++) {
		put_u32(o, s[i].addr);
		put_u32(o, s[i].blob);
	}
}

int
pkg_write(const Package *p, uint8_t **data, size_t *len, Diag *d)
{
	Diag scratch;
	if (!d)
		d = &scratch;
	diag_clear(d);
	if (pkg_check(p, d))
		return IPU_EINVAL;
	Out o = {0};
	uint8_t zero[PKG_HEADER_BYTES] = {0};
	put(&o, zero, sizeof zero); /* filled in below */
	put_str(&o, p->chip->name);
	put_u32(&o, p->tiles);
	put_u64(&o, p->total_cycles);
	put_u64(&o, p->compile_us);
	put_str(&o, p->plan);
	put_u32(&o, p->nblob);
	for (uint32_t i = 0; i < p->nblob; i++) {
		put_u32(&o, p->blob[i].len);
		put(&o, p->blob[i].data, p->blob[i].len);
	}
	put_segs(&o, p->shared, p->nshared);
	for (uint32_t t = 0; t < p->tiles; t++) {
		put_u32(&o, p->tile[t].entry);
		put_segs(&o, p->tile[t].seg, p->tile[t].nseg);
	}
	put_u32(&o, p->nbuf);
	for (uint32_t i = 0; i < p->nbuf; i++) {
		put_u32(&o, p->buf[i].tile);
		put_u32(&o, p->buf[i].addr);
		put_u32(&o, p->buf[i].bytes);
		put_u32(&o, p->buf[i].category);
		put_u32(&o, p->buf[i].first);
		put_u32(&o, p->buf[i].last);
		put_str(&o, p->buf[i].kind);
	}
	put_u32(&o, p->nop);
	for (uint32_t i = 0; i < p->nop; i++) {
		put_str(&o, p->op[i].name);
		put_str(&o, p->op[i].kind);
		put_u64(&o, p->op[i].macs);
		put_u32(&o, p->op[i].dtype);
	}
	put_u32(&o, p->nstep);
	for (uint32_t i = 0; i < p->nstep; i++) {
		const PkgStep *s = &p->step[i];
		put_u32(&o, s->kind);
		put_u32(&o, s->runs);
		put_u64(&o, s->cycles);
		put_str(&o, s->what);
		put_u64(&o, s->overhead);
		put_u64(&o, s->macs);
		put_u32(&o, s->nop);
		for (uint32_t k = 0; k < s->nop; k++)
			put_u32(&o, s->op[k]);
		put_u32(&o, s->nkernel);
		for (uint32_t k = 0; k < s->nkernel; k++)
			put_u32(&o, s->kernel[k]);
	}
	put_u32(&o, p->nkernel);
	for (uint32_t i = 0; i < p->nkernel; i++) {
		put_str(&o, p->kernel[i].name);
		put_u32(&o, p->kernel[i].addr);
		put_u32(&o, p->kernel[i].calls);
	}
	put_u32(&o, p->ntensor);
	for (uint32_t i = 0; i < p->ntensor; i++) {
		const PkgTensor *t = &p->tensor[i];
		put_str(&o, t->name);
		put_u8(&o, t->dtype);
		put_u8(&o, (uint8_t)t->scale);
		put_u8(&o, t->role);
		put_u8(&o, 0);
		put_u32(&o, t->rows);
		put_u32(&o, t->cols);
		put_u32(&o, t->npiece);
		for (uint32_t k = 0; k < t->npiece; k++) {
			const PkgPiece *pc = &t->piece[k];
			uint32_t f[] = {pc->tile,     pc->addr,     pc->row0,
			                pc->rows,     pc->col0,     pc->cols,
			                pc->pad_rows, pc->pad_cols, pc->format};
			for (size_t j = 0; j < sizeof f / sizeof f[0]; j++)
				put_u32(&o, f[j]);
		}
	}
	size_t npc = p->step_pc ? (size_t)p->tiles * (p->nstep + 1) : 0;
	put_u32(&o, (uint32_t)npc);
	for (size_t i = 0; i < npc; i++)
		put_u32(&o, p->step_pc[i]);
	/* the header */
	size_t body = o.n - PKG_HEADER_BYTES;
	Out h = {0};
	put(&h, PKG_MAGIC, 8);
	put_u32(&h, PKG_VERSION);
	put_u32(&h, PKG_HEADER_BYTES);
	put_u64(&h, body);
	put_u32(&h, pkg_crc32(0, o.b + PKG_HEADER_BYTES, body));
	put_u32(&h, 0);
	memcpy(o.b, h.b, PKG_HEADER_BYTES);
	free(h.b);
	*data = o.b;
	*len = o.n;
	return 0;
}

int
pkg_write_file(const Package *p, const char *path, Diag *d)
{
	uint8_t *data;
	size_t len;
	int r = pkg_write(p, &data, &len, d);
	if (r) {
		if (d)
			snprintf(d->file, sizeof d->file, "%s", path);
		return r;
	}
	r = write_file(path, data, len, d);
	free(data);
	return r;
}

/* ---- reading ---------------------------------------------------------- */

typedef struct {
	const uint8_t *b;
	size_t n, at;
	Diag *d;
	int bad;
} In;

/* n more bytes for `what`, or a truncation error. */
static const uint8_t *
need(In *in, size_t n, const char *what)
{
	if (in->bad)
		return NULL;
	if (n > in->n - in->at) {
		bad(in->d,
		    "truncated: %s at offset %zu needs %zu bytes, %zu are "
		    "left",
		    what, in->at, n, in->n - in->at);
		in->bad = 1;
		return NULL;
	}
	const uint8_t *p = in->b + in->at;
	in->at += n;
	return p;
}

static uint32_t
get_u32(In *in, const char *what)
{
	const uint8_t *b = need(in, 4, what);
	return b ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	               (uint32_t)b[3] << 24
	         : 0;
}

static uint64_t
get_u64(In *in, const char *what)
{
	uint64_t lo = get_u32(in, what);
	return lo | (uint64_t)get_u32(in, what) << 32;
}

/* A string of at most max bytes, NUL-free, as a new C string; NULL after
 * an error. */
static char *
get_str(In *in, size_t max, const char *what)
{
	size_t at = in->at;
	uint32_t n = get_u32(in, what);
	if (in->bad)
		return NULL;
	if (n > max) {
		bad(in->d,
		    "%s at offset %zu: length %u exceeds the limit of %zu",
		    what, at, n, max);
		in->bad = 1;
		return NULL;
	}
	const uint8_t *b = need(in, n, what);
	if (!b)
		return NULL;
	if (memchr(b, 0, n)) {
		bad(in->d, "%s at offset %zu holds a NUL byte", what, at);
		in->bad = 1;
		return NULL;
	}
	char *s = xmalloc((size_t)n + 1);
	memcpy(s, b, n);
	s[n] = 0;
	return s;
}

/* A count of records of at least `each` bytes: all of them must fit in
 * what is left, so that a corrupt count cannot make us allocate. */
static uint32_t
get_count(In *in, size_t each, const char *what)
{
	size_t at = in->at;
	uint32_t n = get_u32(in, what);
	if (!in->bad && n > (in->n - in->at) / each) {
		bad(in->d,
		    "%s at offset %zu: %u records of at least %zu bytes "
		    "do not fit the %zu bytes left",
		    what, at, n, each, in->n - in->at);
		in->bad = 1;
	}
	return in->bad ? 0 : n;
}

static void
get_segs(In *in, PkgSegment **seg, uint32_t *n, const char *what)
{
	*n = get_count(in, 8, what);
	*seg = xcalloc(*n, sizeof **seg);
	for (uint32_t i = 0; i < *n; i++) {
		(*seg)[i].addr = get_u32(in, what);
		(*seg)[i].blob = get_u32(in, what);
	}
}

static int
parse(In *in, Package *p)
{
	char what[96];
	char *chip = get_str(in, PKG_MAX_NAME, "chip name");
	if (!chip)
		return IPU_EINVAL;
	p->chip = chip_by_name(chip);
	if (!p->chip) {
		bad(in->d, "unknown chip '%s' (known: %s)", chip, chip_names());
		free(chip);
		return IPU_EINVAL;
	}
	free(chip);
	size_t at = in->at;
	p->tiles = get_u32(in, "tiles used");
	if (!in->bad && (p->tiles < 1 || p->tiles > p->chip->tiles))
		return bad(in->d,
		           "tiles used at offset %zu: %u; the %s has 1..%u", at,
		           p->tiles, p->chip->name, p->chip->tiles);
	p->total_cycles = get_u64(in, "predicted cycles");
	p->compile_us = get_u64(in, "compile time");
	free(p->plan);
	p->plan = get_str(in, PKG_MAX_PLAN, "plan description");
	if (!p->plan) {
		p->plan = xstrdup("");
		return IPU_EINVAL;
	}
	p->nblob = p->capblob = get_count(in, 5, "blob count");
	p->blob = xcalloc(p->nblob, sizeof *p->blob);
	for (uint32_t i = 0; i < p->nblob && !in->bad; i++) {
		snprintf(what, sizeof what, "blob %u", i);
		uint32_t len = get_u32(in, what);
		const uint8_t *b = need(in, len, what);
		if (!b)
			break;
		p->blob[i].data = xmalloc(len ? len : 1);
		memcpy(p->blob[i].data, b, len);
		p->blob[i].len = len;
	}
	get_segs(in, &p->shared, &p->nshared, "shared segments");
	p->capshared = p->nshared;
	/* each tile takes at least 8 bytes: check before allocating */
	if (!in->bad && p->tiles > (in->n - in->at) / 8) {
		bad(in->d,
		    "truncated: %u tile records need at least %llu bytes, "
		    "%zu are left",
		    p->tiles, 8ull * p->tiles, in->n - in->at);
		return IPU_EINVAL;
	}
	if (in->bad)
		return IPU_EINVAL;
	p->tile = xcalloc(p->tiles, sizeof *p->tile);
	for (uint32_t t = 0; t < p->tiles && !in->bad; t++) {
		snprintf(what, sizeof what, "tile %u", t);
		p->tile[t].entry = get_u32(in, what);
		get_segs(in, &p->tile[t].seg, &p->tile[t].nseg, what);
		p->tile[t].capseg = p->tile[t].nseg;
	}
	p->nbuf = p->capbuf = get_count(in, 28, "buffer count");
	p->buf = xcalloc(p->nbuf, sizeof *p->buf);
	for (uint32_t i = 0; i < p->nbuf && !in->bad; i++) {
		snprintf(what, sizeof what, "buffer %u", i);
		p->buf[i].tile = get_u32(in, what);
		p->buf[i].addr = get_u32(in, what);
		p->buf[i].bytes = get_u32(in, what);
		uint32_t cat = get_u32(in, what);
		p->buf[i].category = cat > 255 ? 255 : (uint8_t)cat;
		p->buf[i].first = get_u32(in, what);
		p->buf[i].last = get_u32(in, what);
		p->buf[i].kind = get_str(in, PKG_MAX_NAME, what);
	}
	p->nop = p->capop = get_count(in, 20, "op count");
	p->op = xcalloc(p->nop, sizeof *p->op);
	for (uint32_t i = 0; i < p->nop && !in->bad; i++) {
		snprintf(what, sizeof what, "op %u", i);
		p->op[i].name = get_str(in, PKG_MAX_NAME, what);
		p->op[i].kind = get_str(in, PKG_MAX_NAME, what);
		p->op[i].macs = get_u64(in, what);
		uint32_t dt = get_u32(in, what);
		p->op[i].dtype = dt > 255 ? 255 : (uint8_t)dt;
	}
	p->nstep = p->capstep = get_count(in, 32, "step count");
	p->step = xcalloc(p->nstep, sizeof *p->step);
	for (uint32_t i = 0; i < p->nstep && !in->bad; i++) {
		PkgStep *s = &p->step[i];
		snprintf(what, sizeof what, "step %u", i);
		uint32_t kind = get_u32(in, what);
		s->kind = kind > 255 ? 255 : (uint8_t)kind;
		s->runs = get_u32(in, what);
		s->cycles = get_u64(in, what);
		s->what = get_str(in, PKG_MAX_NAME, what);
		s->overhead = get_u64(in, what);
		s->macs = get_u64(in, what);
		s->nop = get_count(in, 4, what);
		s->op = xcalloc(s->nop, sizeof *s->op);
		for (uint32_t k = 0; k < s->nop; k++)
			s->op[k] = get_u32(in, what);
		s->nkernel = get_count(in, 4, what);
		s->kernel = xcalloc(s->nkernel, sizeof *s->kernel);
		for (uint32_t k = 0; k < s->nkernel; k++)
			s->kernel[k] = get_u32(in, what);
	}
	p->nkernel = p->capkernel = get_count(in, 12, "kernel count");
	p->kernel = xcalloc(p->nkernel, sizeof *p->kernel);
	for (uint32_t i = 0; i < p->nkernel && !in->bad; i++) {
		snprintf(what, sizeof what, "kernel %u", i);
		p->kernel[i].name = get_str(in, PKG_MAX_NAME, what);
		p->kernel[i].addr = get_u32(in, what);
		p->kernel[i].calls = get_u32(in, what);
	}
	p->ntensor = p->captensor = get_count(in, 20, "tensor count");
	p->tensor = xcalloc(p->ntensor, sizeof *p->tensor);
	for (uint32_t i = 0; i < p->ntensor && !in->bad; i++) {
		PkgTensor *t = &p->tensor[i];
		snprintf(what, sizeof what, "tensor %u", i);
		t->name = get_str(in, PKG_MAX_NAME, what);
		const uint8_t *b = need(in, 4, what);
		if (!b)
			break;
		if (b[3])
			return bad(in->d,
			           "tensor %u ('%s'): reserved byte is %u, "
			           "not 0",
			           i, t->name, b[3]);
		t->dtype = b[0];
		t->scale = (int8_t)b[1];
		t->role = b[2];
		t->rows = get_u32(in, what);
		t->cols = get_u32(in, what);
		snprintf(what, sizeof what, "tensor %u piece count", i);
		t->npiece = t->cappiece = get_count(in, 36, what);
		t->piece = xcalloc(t->npiece, sizeof *t->piece);
		snprintf(what, sizeof what, "tensor %u pieces", i);
		for (uint32_t k = 0; k < t->npiece && !in->bad; k++) {
			PkgPiece *pc = &t->piece[k];
			uint32_t *f[] = {&pc->tile,     &pc->addr,    &pc->row0,
			                 &pc->rows,     &pc->col0,    &pc->cols,
			                 &pc->pad_rows, &pc->pad_cols};
			for (size_t j = 0; j < sizeof f / sizeof f[0]; j++)
				*f[j] = get_u32(in, what);
			uint32_t fmt = get_u32(in, what);
			pc->format = fmt > 255 ? 255 : (uint8_t)fmt;
		}
	}
	size_t at_pc = in->at;
	uint32_t npc = get_count(in, 4, "step code");
	if (!in->bad && npc && npc != (uint64_t)p->tiles * (p->nstep + 1))
		return bad(in->d,
		           "step code at offset %zu: %u addresses, not 0 or "
		           "%u tiles x %u (the steps and the epilogue)",
		           at_pc, npc, p->tiles, p->nstep + 1);
	if (npc && !in->bad) {
		p->step_pc = xcalloc(npc, sizeof *p->step_pc);
		for (uint32_t i = 0; i < npc; i++)
			p->step_pc[i] = get_u32(in, "step code");
	}
	if (in->bad)
		return IPU_EINVAL;
	if (in->at != in->n)
		return bad(in->d,
		           "%zu bytes follow the step code at offset %zu",
		           in->n - in->at, in->at);
	return 0;
}

int
pkg_read(const uint8_t *data, size_t len, const char *name, Package **out,
         Diag *d)
{
	Diag scratch;
	if (!d)
		d = &scratch;
	diag_clear(d);
	snprintf(d->file, sizeof d->file, "%s", name ? name : "package");
	*out = NULL;
	if (len < PKG_HEADER_BYTES)
		return bad(d,
		           "%s: %zu bytes are shorter than the %d-byte "
		           "package header",
		           len >= 8 && !memcmp(data, PKG_MAGIC, 8)
		               ? "truncated"
		               : "not a package",
		           len, PKG_HEADER_BYTES);
	if (memcmp(data, PKG_MAGIC, 8))
		return bad(d, "not a package (the file does not start with "
		              "the package magic \"IPUPKG\\r\\n\")");
	In in = {.b = data, .n = len, .at = 8, .d = d};
	uint32_t version = get_u32(&in, "version");
	if (version != PKG_VERSION)
		return bad(d,
		           "package format version %u; this build reads "
		           "version %u",
		           version, PKG_VERSION);
	uint32_t hdr = get_u32(&in, "header size");
	uint64_t body = get_u64(&in, "body size");
	uint32_t crc = get_u32(&in, "checksum");
	uint32_t flags = get_u32(&in, "flags");
	if (hdr != PKG_HEADER_BYTES)
		return bad(d, "header size %u, expected %d", hdr,
		           PKG_HEADER_BYTES);
	if (flags)
		return bad(d, "header flags 0x%x: none are defined", flags);
	if (body != len - PKG_HEADER_BYTES)
		return bad(d,
		           "%s: the header says the body has %llu bytes, "
		           "the file holds %zu",
		           body > len - PKG_HEADER_BYTES ? "truncated"
		                                         : "trailing bytes",
		           (unsigned long long)body, len - PKG_HEADER_BYTES);
	uint32_t got = pkg_crc32(0, data + PKG_HEADER_BYTES, (size_t)body);
	if (got != crc)
		return bad(d,
		           "checksum mismatch: the header says 0x%08x, the "
		           "body's CRC-32 is 0x%08x (the file is corrupt)",
		           crc, got);
	Package *p = xcalloc(1, sizeof *p);
	p->plan = xstrdup("");
	int r = parse(&in, p);
	if (!r)
		r = pkg_check(p, d);
	if (r) {
		/* tiles may be unallocated: pkg_free copes with tile == NULL */
		pkg_free(p);
		return r;
	}
	*out = p;
	return 0;
}

int
pkg_read_file(const char *path, Package **out, Diag *d)
{
	uint8_t *data;
	size_t len;
	*out = NULL;
	int r = read_file(path, &data, &len, d);
	if (r)
		return r;
	r = pkg_read(data, len, path, out, d);
	free(data);
	return r;
}

/* ---- pieces ----------------------------------------------------------- */

int
pkg_piece_convertible(const PkgTensor *t, const PkgPiece *pc, int to_tile)
{
	if (!(uint32_t)dtype_size(t->dtype))
		return 0;
	switch (base_format(pc->format)) {
	case PKG_PF_ROWMAJOR:
		return 1;
	case PKG_PF_GEMM_B: /* weights: gemm.h packs them, nothing unpacks */
		return to_tile && gemm_type(t->dtype) >= 0;
	case PKG_PF_GEMM_C:
		return 1;
	}
	return 0;
}

/* Element (r, c) of the tile's pad_rows x pad_cols row-major block: its
 * offset in the host array, or -1 for padding (zero). */
static int64_t
host_index(const PkgTensor *t, const PkgPiece *pc, uint32_t r, uint32_t c)
{
	if (transposed(pc->format)) {
		uint32_t x = r;
		r = c;
		c = x;
	}
	if (r >= pc->rows || c >= pc->cols)
		return -1;
	return (int64_t)(pc->row0 + r) * t->cols + pc->col0 + c;
}

/* The piece's block of the host array as a pad_rows x pad_cols row-major
 * block (zero beyond the block), or back. A block as it is moves a row at a
 * time (these are the big tensors' pieces); a transposed one an element at
 * a time. */
static void
block_out(const PkgTensor *t, const PkgPiece *pc, const uint8_t *host,
          uint8_t *blk)
{
	size_t es = (uint32_t)dtype_size(t->dtype);
	size_t row = (size_t)pc->pad_cols * es;
	for (uint32_t r = 0; r < pc->pad_rows; r++) {
		uint8_t *b = blk + r * row;
		if (transposed(pc->format)) {
			for (uint32_t c = 0; c < pc->pad_cols; c++) {
				int64_t i = host_index(t, pc, r, c);
				if (i < 0)
					memset(b + c * es, 0, es);
				else
					memcpy(b + c * es,
					       host + (size_t)i * es, es);
			}
			continue;
		}
		size_t used = r < pc->rows ? pc->cols * es : 0;
		if (used)
			memcpy(b, host + (size_t)host_index(t, pc, r, 0) * es,
			       used);
		memset(b + used, 0, row - used);
	}
}

static void
block_in(const PkgTensor *t, const PkgPiece *pc, const uint8_t *blk,
         uint8_t *host)
{
	size_t es = (uint32_t)dtype_size(t->dtype);
	size_t row = (size_t)pc->pad_cols * es;
	for (uint32_t r = 0; r < pc->pad_rows; r++) {
		const uint8_t *b = blk + r * row;
		if (transposed(pc->format)) {
			for (uint32_t c = 0; c < pc->pad_cols; c++) {
				int64_t i = host_index(t, pc, r, c);
				if (i >= 0)
					memcpy(host + (size_t)i * es,
					       b + c * es, es);
			}
		} else if (r < pc->rows) {
			memcpy(host + (size_t)host_index(t, pc, r, 0) * es, b,
			       pc->cols * es);
		}
	}
}

int
pkg_piece_pack(const PkgTensor *t, const PkgPiece *pc, const void *host,
               uint8_t *tile_bytes)
{
	if (!pkg_piece_convertible(t, pc, 1))
		return -1;
	if (base_format(pc->format) == PKG_PF_ROWMAJOR) {
		block_out(t, pc, host, tile_bytes);
		return 0;
	}
	uint32_t es = (uint32_t)dtype_size(t->dtype);
	uint8_t *blk = xmalloc((size_t)pc->pad_rows * pc->pad_cols * es);
	block_out(t, pc, host, blk);
	if (base_format(pc->format) == PKG_PF_GEMM_B)
		gemm_pack_b((GemmDtype)gemm_type(t->dtype), pc->pad_rows,
		            pc->pad_cols, blk, tile_bytes);
	else
		gemm_pack_c(es, pc->pad_rows, pc->pad_cols, blk, tile_bytes);
	free(blk);
	return 0;
}

int
pkg_piece_unpack(const PkgTensor *t, const PkgPiece *pc,
                 const uint8_t *tile_bytes, void *host)
{
	if (!pkg_piece_convertible(t, pc, 0))
		return -1;
	if (base_format(pc->format) == PKG_PF_ROWMAJOR) {
		block_in(t, pc, tile_bytes, host);
		return 0;
	}
	uint32_t es = (uint32_t)dtype_size(t->dtype);
	uint8_t *blk = xmalloc((size_t)pc->pad_rows * pc->pad_cols * es);
	gemm_unpack_c(es, pc->pad_rows, pc->pad_cols, tile_bytes, blk);
	block_in(t, pc, blk, host);
	free(blk);
	return 0;
}

/*
 * rowwise.c - host side of kernels/rowwise.S: the table of entries, the
 * checks, the argument block (the split of rows over the six workers, the
 * tail atom's masks) and the exact cycle count, which follows the issue
 * model (docs/emulator.md): one issue per instruction or bundle, a worker
 * issuing every 6 cycles.
 */
#include "rowwise.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "../util/util.h"

/* A worker's issues (kernels/rowwise.S): `setup` once after the common
 * entry, then per row `row` plus `atom` for each atom past the first
 * (the rpt bodies of its three passes). */
static const struct {
	const char *entry;
	uint32_t setup, row, atom;
} kernels[2][2] = {
    [RW_LAYERNORM] = {[RW_F32] = {"rw_layernorm_f32", 0, 30, 9},
                      [RW_F16] = {"rw_layernorm_f16", 0, 47, 26}},
    [RW_SOFTMAX] = {[RW_F32] = {"rw_softmax_f32", 1, 29, 12},
                    [RW_F16] = {"rw_softmax_f16", 1, 46, 27}},
};

/* RW_WORKER_ENTRY, an idle worker's run (ld, brz, exitz), the exit. */
enum { W_ENTRY = 9, W_IDLE = 3, W_EXIT = 1 };
/* The supervisor's issues up to and including runall (RW_ENTRY). */
enum { SUP_RUNALL = 9 };

static const char *const op_names[] = {"layernorm", "softmax"};

const char *
rw_entry(RwOp op, RwType type)
{
	if ((unsigned)op > RW_SOFTMAX || (unsigned)type > RW_F16)
		return NULL;
	return kernels[op][type].entry;
}

uint32_t
rw_type_bytes(RwType t)
{
	return t == RW_F32 ? 4 : 2;
}

uint32_t
rw_group(RwType t)
{
	return 8 / rw_type_bytes(t);
}

static uint32_t
atoms_of(const RwCall *c)
{
	uint32_t g = rw_group(c->type);
	return (uint32_t)(((uint64_t)c->cols + g - 1) / g);
}

/* Last byte + 1 of rows of `bytes` at `stride` (64-bit: no overflow). */
static uint64_t
rows_end(uint32_t addr, uint32_t rows, uint32_t stride, uint32_t bytes)
{
	return (uint64_t)addr + (uint64_t)(rows - 1) * stride + bytes;
}

int
rw_check(const RwCall *c, Diag *d)
{
	const char *entry = rw_entry(c->op, c->type);
	if (!entry)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "rowwise: op %d on type %d is not supported",
		                (int)c->op, (int)c->type);
	const char *op = op_names[c->op];
	if (!c->rows || !c->cols)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "rowwise %s: empty block %u x %u", op, c->rows,
		                c->cols);
	uint32_t atoms = atoms_of(c), bytes = atoms * 8;
	if (atoms > RW_MAX_ATOMS)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "rowwise %s: a row of %u columns is more than "
		                "%u atoms (rpt's count)",
		                op, c->cols, RW_MAX_ATOMS);
	int ln = c->op == RW_LAYERNORM;
	struct {
		const char *name;
		uint32_t addr, stride, rows;
	} ref[4] = {{"dst", c->dst, c->dst_stride, c->rows},
	            {"x", c->x, c->x_stride, c->rows},
	            {"gamma", c->gamma, 0, 1},
	            {"beta", c->beta, 0, 1}};
	int n = ln ? 4 : 2;
	for (int i = 0; i < n; i++) {
		if (ref[i].addr % 8 || ref[i].stride % 8)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "rowwise %s: %s address 0x%x or row "
			                "stride %u is not a multiple of 8",
			                op, ref[i].name, ref[i].addr,
			                ref[i].stride);
		if (rows_end(ref[i].addr, ref[i].rows, ref[i].stride, bytes) >
		    UINT32_MAX)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "rowwise %s: %s runs past 4 GiB", op,
			                ref[i].name);
	}
	if (c->rows > 1 && c->dst_stride < bytes)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "rowwise %s: dst rows overlap (stride %u for "
		                "%u bytes a row)",
		                op, c->dst_stride, bytes);
	uint64_t dend = rows_end(c->dst, c->rows, c->dst_stride, bytes);
	for (int i = 1; i < n; i++) {
		uint64_t end =
		    rows_end(ref[i].addr, ref[i].rows, ref[i].stride, bytes);
		int overlap = ref[i].addr < dend && c->dst < end;
		int same =
		    i == 1 && c->x == c->dst && c->x_stride == c->dst_stride;
		if (overlap && !same)
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "rowwise %s: dst [0x%x, 0x%llx) overlaps "
			    "%s [0x%x, 0x%llx) other than exactly "
			    "in place",
			    op, c->dst, (unsigned long long)dend, ref[i].name,
			    ref[i].addr, (unsigned long long)end);
	}
	if (ln && !(isfinite(c->eps) && c->eps >= 0))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "rowwise layernorm: eps %g is not finite and "
		                ">= 0",
		                (double)c->eps);
	if (!ln && !(isfinite(c->scale) && c->scale > 0))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "rowwise softmax: scale %g is not finite and "
		                "> 0 (the kernel takes the max of x)",
		                (double)c->scale);
	return IPU_OK;
}

static void
put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t
f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

/* Worker w's rows: [first, first + count). */
static void
worker_rows(uint32_t rows, int w, uint32_t *first, uint32_t *count)
{
	uint32_t a = (uint32_t)((uint64_t)rows * (uint32_t)w / 6),
	         b = (uint32_t)((uint64_t)rows * (uint32_t)(w + 1) / 6);
	*first = a;
	*count = b - a;
}

void
rw_args_fill(const RwCall *c, uint8_t out[RW_ARGS_BYTES])
{
	assert(rw_entry(c->op, c->type) && "rw_args_fill of an unchecked call");
	uint32_t atoms = atoms_of(c), g = rw_group(c->type);
	uint32_t es = rw_type_bytes(c->type), valid = c->cols - (atoms - 1) * g;
	memset(out, 0, RW_ARGS_BYTES);
	put32(out + 0, atoms - 1);
	put32(out + 4, (atoms - 1) * 8);
	put32(out + 8, c->x_stride);
	put32(out + 12, c->dst_stride);
	if (c->op == RW_LAYERNORM) {
		put32(out + 16, f32_bits((float)(1.0 / c->cols)));
		put32(out + 20, f32_bits(c->eps));
		put32(out + 24, c->gamma);
		put32(out + 28, c->beta);
	} else {
		put32(out + 16, f32_bits(-c->scale));
	}
	/* the tail atom: the row's lanes kept, -inf in the others */
	static const uint8_t ninf32[4] = {0, 0, 0x80, 0xff},
	                     ninf16[2] = {0, 0xfc};
	for (uint32_t k = 0; k < g; k++) {
		if (k < valid)
			memset(out + 32 + k * es, 0xff, es);
		else
			memcpy(out + 40 + k * es, es == 4 ? ninf32 : ninf16,
			       es);
	}
	for (uint32_t k = 0; c->type == RW_F16 && k < valid; k++)
		put32(out + 48 + 4 * k, UINT32_MAX);
	for (int w = 0; w < 6; w++) {
		uint32_t first, count;
		worker_rows(c->rows, w, &first, &count);
		uint8_t *v = out + 64 + 16 * w;
		put32(v, count);
		put32(v + 4, c->x + first * c->x_stride);
		put32(v + 8, c->dst + first * c->dst_stride);
	}
}

uint64_t
rw_cycles(const RwCall *c)
{
	assert(rw_entry(c->op, c->type) && "rw_cycles of an unchecked call");
	uint64_t n1 = atoms_of(c) - 1;
	/* runall issues at cycle R (the supervisor alone issues every
	 * cycle); worker v starts at the next turn of slot v; the sync
	 * leaves 6 cycles after the last exit and `br $lr` issues then. */
	uint64_t R = SUP_RUNALL - 1, last = 0;
	for (int v = 0; v < 6; v++) {
		uint32_t first, rows;
		worker_rows(c->rows, v, &first, &rows);
		uint64_t issues =
		    rows ? W_ENTRY + kernels[c->op][c->type].setup +
		               rows * (kernels[c->op][c->type].row +
		                       n1 * kernels[c->op][c->type].atom) +
		               W_EXIT
		         : W_IDLE;
		uint64_t start = R + 1 + (v + 6 - (R + 1) % 6) % 6;
		uint64_t exit = start + 6 * (issues - 1);
		if (exit > last)
			last = exit;
	}
	return last + 6 + 1;
}

int
rw_tile_call(Tile *t, const Image *img, const RwCall *c, uint32_t args,
             uint64_t *cycles, Diag *d)
{
	int rc = rw_check(c, d);
	if (rc)
		return rc;
	const char *name = rw_entry(c->op, c->type);
	int64_t entry = img_symbol_addr(img, name);
	if (entry < 0)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "rowwise: the image has no %s (link rowwise)",
		                name);
	uint8_t block[RW_ARGS_BYTES];
	rw_args_fill(c, block);
	if (tile_write(t, args, block, sizeof block))
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "rowwise: argument block at 0x%x is outside "
		                "the tile",
		                args);
	uint64_t start = t->cycle;
	t->ctx[0].m[0] = args;
	tile_start(t, (uint32_t)entry);
	RunStatus st = tile_run(t, start + 4000000000ull);
	if (cycles)
		*cycles = t->cycle - start;
	if (st != RUN_DONE) {
		char buf[600] = "did not finish";
		if (st == RUN_FAULT)
			tile_format_fault(t, buf, sizeof buf);
		return diag_set(d, IPU_EFAULT, "kernels/rowwise.S", 0, 0,
		                "%s: %s", name, buf);
	}
	return IPU_OK;
}

/*
 * rowwise.c - host side of kernels/rowwise.S: the table of entries, the
 * checks, the argument block (the split of rows, or of one row's atoms,
 * over the six workers; the tail atom's masks) and the exact cycle count
 * of both modes, which follows the issue model and the timing rules
 * (docs/emulator.md, docs/fidelity.md).
 */
#include "rowwise.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "../util/fp.h"
#include "../util/util.h"
#include "kernels.h"

/* A worker's issues (kernels/rowwise.S). Rows mode: `setup` once after
 * the common entry, then per row `row` plus `atom` for each atom past the
 * first (the rpt bodies of its three passes). Split mode, pass j: `fixed`
 * plus `atom` per atom of its segment past the first, plus (passes 2 and
 * 3) RW_COMBINE's 6 + (k - 1) over the row's k partials. A row or
 * segment of one atom takes `one` fewer in pass `one_pass` (the f16
 * layernorm's last, pipelined, skips its loop's way in and out; the f16
 * softmax's second skips its loops' counts). `odd` fewer when a row or
 * segment has an even number of atoms (atoms - 1 odd): the f8 pass 3
 * stores pairs of atoms (kernels/rowwise_f8.S). `pair` (the f8
 * layernorm, whose rows and segments are whole pairs): pass 3 issues per
 * pair past the first, `atom` then counting passes 1 and 2 only, and
 * `one` fewer for a single pair; `pair2` (the same kernels, pass 2 in
 * f16): pass 2 issues per pair past the first, `atom` then counting pass
 * 1 only. `p2_four`, `p2_one` (the f16h
 * softmaxes, whose pass 2 takes its atoms past the lead two pairs at a
 * time, then one by one): pass 2 issues per four atoms and per atom of
 * the rest (n - 1 = 4 F + r: p2_four F + p2_one r), `atom` and the split
 * pass 2's counting the other passes only. `pipe3` (rw_softmax_f16h8):
 * pass 3 pipelined by pairs, its issues pass3_pairs() beyond `row` or
 * the split pass 3's `fixed`, `atom` and `odd` then not counting it. */
typedef struct {
	uint32_t fixed, atom;
} Phase;

typedef struct {
	const char *entry;
	uint32_t setup, row, atom, one, one_pass;
	Phase split[3];
	uint32_t odd, pair, p2_four, p2_one, pipe3, pair2;
} Kernel;

static const Kernel kernels[2][2] = {
    [RW_LAYERNORM] = {[DT_F32] = {"rw_layernorm_f32",
                                  0,
                                  34,
                                  9,
                                  0,
                                  2,
                                  {{15, 1}, {19, 3}, {22, 5}},
                                  0,
                                  0,
                                  0,
                                  0,
                                  0,
                                  0},
                      [DT_F16] = {"rw_layernorm_f16",
                                  0,
                                  56,
                                  19,
                                  3,
                                  2,
                                  {{18, 1}, {25, 5}, {35, 13}},
                                  0,
                                  0,
                                  0,
                                  0,
                                  0,
                                  0}},
    [RW_SOFTMAX] = {[DT_F32] = {"rw_softmax_f32",
                                1,
                                29,
                                8,
                                0,
                                2,
                                {{16, 1}, {23, 5}, {16, 2}},
                                0,
                                0,
                                0,
                                0,
                                0,
                                0},
                    [DT_F16] = {"rw_softmax_f16",
                                3,
                                55,
                                14,
                                4,
                                1,
                                {{22, 1}, {40, 10}, {22, 3}},
                                0,
                                0,
                                0,
                                0,
                                0,
                                0}},
};

/* The f16 softmax with t, exp and y in f16 (RwCall.exp_f16), and the
 * same writing f8 (RwCall.dst_f8). */
static const Kernel softmax_f16h = {"rw_softmax_f16h",
                                    1,
                                    53,
                                    3,
                                    0,
                                    1,
                                    {{22, 1}, {37, 0}, {21, 2}},
                                    0,
                                    0,
                                    18,
                                    5,
                                    0,
                                    0};
static const Kernel softmax_f16h8 = {"rw_softmax_f16h8",
                                     1,
                                     43,
                                     1,
                                     0,
                                     1,
                                     {{22, 1}, {37, 0}, {11, 0}},
                                     0,
                                     0,
                                     18,
                                     5,
                                     1,
                                     0};
/* The same not divided by the sum (RwCall.unnorm): two passes, pass 2
 * by pairs (pass2u_pairs() beyond `row` or the split pass 2's `fixed`,
 * `atom` counting pass 1 only). */
static const Kernel softmax_f16h8u = {"rw_softmax_f16h8u",
                                      1,
                                      19,
                                      1,
                                      0,
                                      1,
                                      {{22, 1}, {10, 0}, {0, 0}},
                                      0,
                                      0,
                                      0,
                                      0,
                                      0,
                                      0};
/* The f16 layernorm with z and y in f16, writing f8 (RwCall.dst_f8). */
static const Kernel layernorm_f16h8 = {"rw_layernorm_f16h8",
                                       0,
                                       55,
                                       1,
                                       3,
                                       2,
                                       {{15, 1}, {25, 0}, {30, 0}},
                                       0,
                                       7,
                                       0,
                                       0,
                                       0,
                                       3};
/* The same without gamma and beta (RwCall.plain): y = z. */
static const Kernel layernorm_f16h8n = {"rw_layernorm_f16h8n",
                                        0,
                                        47,
                                        1,
                                        3,
                                        2,
                                        {{15, 1}, {25, 0}, {22, 0}},
                                        0,
                                        3,
                                        0,
                                        0,
                                        0,
                                        3};

static int
to_f8(const RwCall *c)
{
	return dtype_is_f8(c->dst_f8);
}

static const Kernel *
kernel_of(const RwCall *c)
{
	return to_f8(c)     ? c->op == RW_LAYERNORM
	                          ? c->plain ? &layernorm_f16h8n : &layernorm_f16h8
	                      : c->unnorm ? &softmax_f16h8u
	                                  : &softmax_f16h8
	       : c->exp_f16 ? &softmax_f16h
	                    : &kernels[c->op][c->type];
}

/* The f8 layernorm (rw_layernorm_f16h8). */
static int
ln_f8(const RwCall *c)
{
	return to_f8(c) && c->op == RW_LAYERNORM;
}

/* A row or segment of n atoms: its loop units past the first (the f8
 * layernorm's pass 3: pairs; else atoms). */
static uint64_t
loop_units(const Kernel *k, uint32_t n)
{
	return k->pair ? n / 2 - 1 : n - 1;
}

/* Pass 2's loop issues beyond `atom` for n atoms (p2_four, p2_one). */
static uint64_t
pass2_units(const Kernel *k, uint32_t n)
{
	return (uint64_t)k->p2_four * ((n - 1) / 4) +
	       (uint64_t)k->p2_one * ((n - 1) % 4);
}

/* rw_softmax_f16h8's pass 3 (pipe3) over n atoms, P = L + 1 pairs: the
 * pair alone (L = 0), or 17 + 3 L (kernels/rowwise_f8.S). */
static uint64_t
pass3_pairs(const Kernel *k, uint32_t n)
{
	uint64_t l = (n - 1) / 2;
	return !k->pipe3 ? 0 : l ? 17 + 3 * l : 11;
}

/* rw_softmax_f16h8u's pass 2 over n atoms, P = L + 1 pairs, with its
 * return: the last pair alone (L = 0, 32 issues), or 45 + 9 L
 * (kernels/rowwise_f8.S). */
static uint64_t
pass2u_pairs(const Kernel *k, uint32_t n)
{
	uint64_t l = (n - 1) / 2;
	return k != &softmax_f16h8u ? 0 : l ? 45 + 9 * l : 32;
}

/* The atoms whose exps a pass computes: rw_softmax_f16h8u takes whole
 * pairs (an odd count's last pair has an atom of -inf). */
static uint32_t
exp_atoms(const Kernel *k, uint32_t n)
{
	return k == &softmax_f16h8u ? n + n % 2 : n;
}

/* RW_ROWS_ENTRY, an idle worker's run (ld, brz, exitz), the exit,
 * RW_COMBINE's fixed issues. */
enum { W_ENTRY = 10, W_IDLE = 3, W_EXIT = 1, W_COMBINE = 6 };

/* The transcendentals of a row (rows mode) or of a segment's pass j
 * (split mode) of n atoms: exp_atom * n + exp_fixed f32exp, exp16_atom *
 * n f16v2exp, oox f32oox, oorx f32oorx (kernels/rowwise.S); each takes
 * its worker's turns for several issues (docs/fidelity.md). */
typedef struct {
	uint32_t exp_atom, exp_fixed, oox, oorx, exp16_atom;
} Trans;

static const Trans row_trans[2][2] = {
    [RW_LAYERNORM] = {[DT_F32] = {0, 0, 0, 1, 0}, [DT_F16] = {0, 0, 0, 1, 0}},
    [RW_SOFTMAX] = {[DT_F32] = {2, 0, 1, 0, 0}, [DT_F16] = {4, 0, 1, 0, 0}},
};
static const Trans split_trans[2][2][3] = {
    [RW_LAYERNORM] = {[DT_F32] = {{0}, {0}, {0, 0, 0, 1, 0}},
                      [DT_F16] = {{0}, {0}, {0, 0, 0, 1, 0}}},
    [RW_SOFTMAX] = {[DT_F32] = {{0}, {2, 0, 0, 0, 0}, {0, 0, 1, 0, 0}},
                    [DT_F16] = {{0}, {4, 0, 0, 0, 0}, {0, 0, 1, 0, 0}}},
};
static const Trans row_trans_f16h = {0, 0, 1, 0, 2};
static const Trans split_trans_f16h[3] = {
    {0}, {0, 0, 0, 0, 2}, {0, 0, 1, 0, 0}};
/* rw_softmax_f16h8u: no reciprocal */
static const Trans row_trans_f16h8u = {0, 0, 0, 0, 2};
static const Trans split_trans_f16h8u[2] = {{0}, {0, 0, 0, 0, 2}};

static const Trans *
row_trans_of(const RwCall *c)
{
	return c->unnorm    ? &row_trans_f16h8u
	       : c->exp_f16 ? &row_trans_f16h
	                    : &row_trans[c->op][c->type];
}

static const Trans *
split_trans_of(const RwCall *c, int j)
{
	return c->unnorm    ? &split_trans_f16h8u[j]
	       : c->exp_f16 ? &split_trans_f16h[j]
	                    : &split_trans[c->op][c->type][j];
}

/* The turns beyond one issue each that the transcendentals take. */
static uint64_t
trans_turns(const Chip *chip, const Trans *t, uint64_t n)
{
	return (t->exp_atom * n + t->exp_fixed) *
	           (chip_rule(chip, TIMING_F32EXP) - 1) +
	       t->exp16_atom * n * (chip_rule(chip, TIMING_F16V2EXP) - 1) +
	       t->oox * (chip_rule(chip, TIMING_F32OOX) - 1) +
	       t->oorx * (chip_rule(chip, TIMING_F32OORX) - 1);
}

/* Argument block offsets (kernels/rowwise.S). */
enum {
	ARG_TAILSET = 32,
	ARG_FULLSET = 64,
	ARG_SPLIT = 96,
	ARG_JUMP = 100,
	ARG_VERTEX = 104,
	ARG_XJUMP = 440,
	ARG_FP8FMT = 444,
	ARG_FP8SCL = 448,
	SPLIT_VERTEX_BYTES = 56,
	/* rw_softmax_f16h8u: every lane -inf (in the tail set's f32 mask,
	 * which the softmax does not read) */
	ARG_PASTSET = 48,
	PANEL_ATOMS = 4, /* a panel row of the GEMM C layout: 16 halves */
	/* an f8 dst's panel row: 32 bytes, the f8 GEMM's A K-panel row */
	PANEL_ATOMS_F8 = 8
};

static const char *const op_names[] = {"layernorm", "softmax"};

const char *
rw_entry(const RwCall *c)
{
	if ((unsigned)c->op > RW_SOFTMAX || (unsigned)c->type > DT_F16 ||
	    (c->exp_f16 && (c->op != RW_SOFTMAX || c->type != DT_F16)) ||
	    (to_f8(c) && c->type != DT_F16) ||
	    (to_f8(c) && c->op == RW_SOFTMAX && !c->exp_f16) ||
	    (c->plain && (c->op != RW_LAYERNORM || !to_f8(c))) ||
	    (c->unnorm && (c->op != RW_SOFTMAX || !to_f8(c))))
		return NULL;
	return kernel_of(c)->entry;
}

const char *
rw_object(const RwCall *c)
{
	return to_f8(c) ? "rowwise_f8" : "rowwise";
}

uint32_t
rw_group(DType t)
{
	return 8 / (uint32_t)dtype_size(t);
}

static uint32_t
atoms_of(const RwCall *c)
{
	uint32_t g = rw_group(c->type);
	return (uint32_t)(((uint64_t)c->cols + g - 1) / g);
}

/* Atoms of a panel row of dst: 4 (16 columns), or 8 in f8 (32 bytes). */
static uint32_t
dst_panel_atoms(const RwCall *c)
{
	return to_f8(c) ? PANEL_ATOMS_F8 : PANEL_ATOMS;
}

/* x's 16-column panels (x in panels). */
static uint32_t
panels_of(const RwCall *c)
{
	return (atoms_of(c) + PANEL_ATOMS - 1) / PANEL_ATOMS;
}

/* A panel dst's panels: of 16 columns, or of 32 in f8. */
static uint32_t
dst_panels_of(const RwCall *c)
{
	return (atoms_of(c) + dst_panel_atoms(c) - 1) / dst_panel_atoms(c);
}

/* The f16 softmax keeps e in the dst row after the row's atoms, or after
 * a panel dst's panels. */
static int
keeps_e(RwOp op, DType type)
{
	return op == RW_SOFTMAX && type == DT_F16;
}

uint32_t
rw_dst_row_bytes(RwOp op, DType type, DType to, uint32_t cols)
{
	RwCall c = {.type = type, .cols = cols};
	return dtype_is_f8(to) ? atoms_of(&c) * 4
	                       : atoms_of(&c) * (keeps_e(op, type) ? 24 : 8);
}

uint32_t
rw_panel_e_bytes(uint32_t rows, uint32_t cols, int to_f8)
{
	RwCall c = {.type = DT_F16, .cols = cols};
	return ((rows < 6 ? rows : 6) * atoms_of(&c) + (to_f8 ? 1 : 0)) * 16;
}

/* Byte offset of a row's atom a: in the row, or in a panel layout of
 * panels `panel` bytes apart. */
static uint32_t
atom_offset(uint32_t a, uint32_t panel)
{
	return panel ? a / PANEL_ATOMS * panel + a % PANEL_ATOMS * 8 : a * 8;
}

/* The same in dst: f8 (4 bytes an atom) in panels of 8 atoms. */
static uint32_t
dst_atom_offset(const RwCall *c, uint32_t a)
{
	if (!to_f8(c))
		return atom_offset(a, c->dst_panel);
	return c->dst_panel
	           ? a / PANEL_ATOMS_F8 * c->dst_panel + a % PANEL_ATOMS_F8 * 4
	           : a * 4;
}

/* A jump from a panel row's last store (an atom, or an f8 pair's) to
 * the next panel's (1: rows): a panel row of `atoms` atoms. */
static uint32_t
panel_jump(uint32_t panel, uint32_t atoms, int pairs)
{
	return panel ? panel / 8 - (atoms / (pairs ? 2 : 1) - 1) : 1;
}

/* Where a panel dst's e start. */
static uint32_t
panel_e(const RwCall *c)
{
	return c->dst + dst_panels_of(c) * c->dst_panel;
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
	const char *entry = rw_entry(c);
	if (!entry)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "rowwise: op %d on type %d%s%s%s%s is not supported",
		    (int)c->op, (int)c->type,
		    c->exp_f16 ? " with exps in f16" : "",
		    to_f8(c) ? " to f8" : "",
		    c->plain ? " without gamma and beta" : "",
		    c->unnorm ? " unnormalised" : "");
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
	uint32_t dbytes = rw_dst_row_bytes(c->op, c->type, c->dst_f8, c->cols);
	/* panels: the f16 softmax's, rows of one panel row, every row in
	 * each panel */
	struct {
		const char *name;
		uint32_t addr, stride, rows, bytes, panel;
	} ref[4] = {
	    {"dst", c->dst, c->dst_stride, c->rows, dbytes, c->dst_panel},
	    {"x", c->x, c->x_stride, c->rows, bytes, c->x_panel},
	    {"gamma", c->gamma, 0, 1, bytes, 0},
	    {"beta", c->beta, 0, 1, bytes, 0}};
	int n = ln && !c->plain ? 4 : 2;
	uint64_t end[4];
	if (to_f8(c) && ((c->dst_panel == 0) != ln || c->f8_scale < -32 ||
	                 c->f8_scale > 31 || (ln && atoms % 2)))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "rowwise %s to f8: dst %s, scale 2^%d, %u "
		                "columns: want %s, a scale in -32 .. 31%s",
		                op, c->dst_panel ? "in panels" : "in rows",
		                c->f8_scale, c->cols, ln ? "rows" : "panels",
		                ln ? " and whole pairs of atoms (columns a "
		                     "multiple of 8)"
		                   : "");
	for (int i = 0; i < n; i++) {
		/* a panel row: 16 halves, or (dst in f8) 32 bytes */
		uint32_t prow =
		    !i && to_f8(c) ? PANEL_ATOMS_F8 * 4 : PANEL_ATOMS * 8;
		if (ref[i].panel &&
		    (!keeps_e(c->op, c->type) || ref[i].stride != prow ||
		     ref[i].panel % 8 || ref[i].panel < c->rows * prow))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "rowwise %s: %s in panels of %u bytes "
			                "with rows of %u: not the f16 "
			                "softmax's %u rows of %u bytes, "
			                "8-aligned",
			                op, ref[i].name, ref[i].panel,
			                ref[i].stride, c->rows, prow);
		if (ref[i].addr % 8 || ref[i].stride % 8)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "rowwise %s: %s address 0x%x or row "
			                "stride %u is not a multiple of 8",
			                op, ref[i].name, ref[i].addr,
			                ref[i].stride);
		/* a panel dst keeps the e after its panels */
		end[i] =
		    ref[i].panel
		        ? (uint64_t)ref[i].addr +
		              (uint64_t)(i ? panels_of(c) : dst_panels_of(c)) *
		                  ref[i].panel +
		              (i || c->unnorm ? 0
		                              : rw_panel_e_bytes(
		                                    c->rows, c->cols, to_f8(c)))
		        : rows_end(ref[i].addr, ref[i].rows, ref[i].stride,
		                   ref[i].bytes);
		if (end[i] > UINT32_MAX)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "rowwise %s: %s runs past 4 GiB", op,
			                ref[i].name);
	}
	if (c->rows > 1 && !c->dst_panel && c->dst_stride < dbytes)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "rowwise %s: dst rows overlap (stride %u for "
		                "%u bytes a row%s)",
		                op, c->dst_stride, dbytes,
		                dbytes > bytes ? ", e in f32 after the row"
		                               : "");
	for (int i = 1; i < n; i++) {
		int overlap = ref[i].addr < end[0] && c->dst < end[i];
		int same = i == 1 && !c->dst_panel && !c->x_panel &&
		           c->x == c->dst && c->x_stride == c->dst_stride;
		if (overlap && !same)
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "rowwise %s: dst [0x%x, 0x%llx) overlaps "
			    "%s [0x%x, 0x%llx) other than exactly "
			    "in place",
			    op, c->dst, (unsigned long long)end[0], ref[i].name,
			    ref[i].addr, (unsigned long long)end[i]);
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

/* Worker w's rows: [first, first + count). */
static void
worker_rows(uint32_t rows, int w, uint32_t *first, uint32_t *count)
{
	uint32_t a = (uint32_t)((uint64_t)rows * (uint32_t)w / 6),
	         b = (uint32_t)((uint64_t)rows * (uint32_t)(w + 1) / 6);
	*first = a;
	*count = b - a;
}

/* Split mode: k segments a row (1: rows mode only); worker w takes
 * segment w % k of row w / k, atoms [a0, a0 + n): whole panels for a
 * panel dst (pass 3 stores a panel row at a time; an f8 dst's panels of
 * 8 atoms are whole panels of x's too), whole pairs for the f8 layernorm
 * (pass 3 stores a pair's 8 bytes). */
static uint32_t
segments(const RwCall *c)
{
	uint32_t k = c->rows < 6 ? 6 / c->rows : 1,
	         units = c->dst_panel ? dst_panels_of(c)
	                 : c->x_panel ? panels_of(c)
	                 : ln_f8(c)   ? atoms_of(c) / 2
	                              : atoms_of(c);
	return k < units ? k : units;
}

static int
segment(const RwCall *c, uint32_t k, int w, uint32_t *a0, uint32_t *n)
{
	uint32_t atoms = atoms_of(c), seg = (uint32_t)w % k;
	if (c->dst_panel || c->x_panel) {
		uint32_t pa = c->dst_panel ? dst_panel_atoms(c) : PANEL_ATOMS,
		         p = (atoms + pa - 1) / pa,
		         end = (seg + 1) * p / k * pa;
		*a0 = seg * p / k * pa;
		*n = (end < atoms ? end : atoms) - *a0;
	} else {
		uint32_t u = ln_f8(c) ? 2 : 1, units = atoms / u;
		*a0 = seg * units / k * u;
		*n = (seg + 1) * units / k * u - *a0;
	}
	return (uint32_t)w / k < c->rows;
}

/* The supervisor up to the branch on the mode (RW_ENTRY, instruction by
 * instruction): (f8: ld32 format, ld32 scale) ld32 split, add, (f8: put
 * $FP_INFMT, put $FP_ISCL) setzi, setzi, six CSR writes. */
static void
entry(SupClock *s, const Chip *chip, const RwCall *c)
{
	sup_start(s, chip, 0);
	if (to_f8(c)) {
		sup_op(s, SUP_M0, SUP_M1, SUP_PLAIN);
		sup_op(s, SUP_M0, SUP_M4, SUP_PLAIN);
	}
	sup_op(s, SUP_M0, SUP_M3, SUP_PLAIN);
	sup_op(s, SUP_M0, SUP_M2, SUP_PLAIN);
	if (to_f8(c)) {
		sup_op(s, SUP_M1, 0, SUP_PUT);
		sup_op(s, SUP_M4, 0, SUP_PUT);
	}
	sup_op(s, 0, SUP_M1, SUP_PLAIN);
	sup_op(s, 0, SUP_M4, SUP_PLAIN);
	for (int i = 0; i < 6; i++)
		sup_op(s, SUP_M0, 0, SUP_PUT);
}

/* A runall reading `reads` and its workers' turns: they start at their
 * first turns after the launch delay and exit turns[v] - 1 turns later. */
static void
run_workers(SupClock *s, unsigned reads, const uint64_t turns[6])
{
	uint64_t first[6], exit[6];
	sup_runall(s, reads, first);
	for (int v = 0; v < 6; v++)
		exit[v] = first[v] + 6 * (turns[v] - 1);
	sup_workers(s, exit);
}

static uint64_t
rows_cycles(const Chip *chip, const RwCall *c)
{
	uint64_t n1 = atoms_of(c) - 1, turns[6];
	const Kernel *k = kernel_of(c);
	for (int v = 0; v < 6; v++) {
		uint32_t first, rows;
		worker_rows(c->rows, v, &first, &rows);
		uint64_t u = loop_units(k, (uint32_t)n1 + 1);
		turns[v] =
		    rows ? W_ENTRY + k->setup +
		               rows * (k->row + n1 * k->atom +
		                       u * (k->pair + k->pair2) +
		                       pass2_units(k, (uint32_t)n1 + 1) +
		                       pass3_pairs(k, (uint32_t)n1 + 1) +
		                       pass2u_pairs(k, (uint32_t)n1 + 1) -
		                       (u ? 0 : k->one) - (n1 & 1) * k->odd +
		                       trans_turns(
		                           chip, row_trans_of(c),
		                           exp_atoms(k, (uint32_t)n1 + 1))) +
		               W_EXIT
		         : W_IDLE;
	}
	SupClock s;
	entry(&s, chip, c);
	sup_op(&s, SUP_M3, 0, SUP_PLAIN); /* brnz: rows mode */
	run_workers(&s, SUP_M1 | SUP_M2, turns);
	sup_sync(&s);
	return sup_return(&s, 0);
}

static uint64_t
split_cycles(const Chip *chip, const RwCall *c)
{
	uint32_t k = segments(c);
	SupClock s;
	entry(&s, chip, c);
	sup_op(&s, SUP_M3, 0, SUP_TAKEN); /* brnz: split mode */
	static const unsigned entry_reg[3] = {SUP_M4, SUP_M1, SUP_M4};
	int passes = c->unnorm ? 2 : 3;
	for (int j = 0; j < passes; j++) {
		const Phase *ph = &kernel_of(c)->split[j];
		uint64_t turns[6];
		for (int v = 0; v < 6; v++) {
			uint32_t a0, n;
			const Kernel *kn = kernel_of(c);
			turns[v] =
			    segment(c, k, v, &a0, &n)
			        ? ph->fixed + ph->atom * (n - 1) +
			              loop_units(kn, n) * (j == 2   ? kn->pair
			                                   : j == 1 ? kn->pair2
			                                            : 0) +
			              (j == 1 ? pass2_units(kn, n) : 0) +
			              (j == 2 ? pass3_pairs(kn, n) : 0) +
			              (j == 1 ? pass2u_pairs(kn, n) : 0) +
			              (j ? W_COMBINE + (k - 1) : 0) -
			              ((uint32_t)j == kn->one_pass &&
			                       loop_units(kn, n) == 0
			                   ? kn->one
			                   : 0) -
			              (j == 2
			                   ? ((n - 1) & 1) * kernel_of(c)->odd
			                   : 0) +
			              trans_turns(chip, split_trans_of(c, j),
			                          exp_atoms(kn, n))
			        : W_IDLE;
		}
		run_workers(&s, entry_reg[j] | SUP_M2, turns);
		if (j == 0) {
			sup_op(&s, 0, SUP_M1, SUP_PLAIN); /* setzi s2 */
			if (passes == 3)
				sup_op(&s, 0, SUP_M4, SUP_PLAIN); /* s3 */
		}
		sup_sync(&s);
	}
	return sup_return(&s, 0);
}

/* Split mode when it has more than one segment a row and is faster: a
 * choice made at the nominal timing profile, so that the argument block
 * (and the code that writes it) is the same under every profile. */
static int
use_split(const RwCall *c)
{
	return segments(c) > 1 &&
	       split_cycles(chip_default(), c) < rows_cycles(chip_default(), c);
}

void
rw_args_fill(const RwCall *c, uint8_t out[RW_ARGS_BYTES])
{
	assert(rw_entry(c) && "rw_args_fill of an unchecked call");
	uint32_t atoms = atoms_of(c), g = rw_group(c->type);
	uint32_t es = (uint32_t)dtype_size(c->type),
	         valid = c->cols - (atoms - 1) * g;
	memset(out, 0, RW_ARGS_BYTES);
	put_le32(out + 0, atoms - 1);
	put_le32(out + 4, atom_offset(atoms - 1, c->x_panel));
	put_le32(out + 8, c->x_stride);
	put_le32(out + 12, c->dst_stride);
	put_le32(out + ARG_JUMP,
	         panel_jump(c->dst_panel, dst_panel_atoms(c), to_f8(c)));
	put_le32(out + ARG_XJUMP, panel_jump(c->x_panel, PANEL_ATOMS, 0));
	if (c->op == RW_LAYERNORM) {
		put_le32(out + 16, fp_float_f32((float)(1.0 / c->cols)));
		put_le32(out + 20, fp_float_f32(c->eps));
		put_le32(out + 24, c->gamma);
		put_le32(out + 28, c->beta);
	} else {
		put_le32(out + 16, fp_float_f32(-c->scale));
	}
	if (to_f8(c)) {
		put_le32(out + ARG_FP8FMT, (c->dst_f8 == DT_F8_F152) << 1);
		put_le32(out + ARG_FP8SCL, (uint32_t)c->f8_scale & 63);
	}
	/* the tail set: the row's lanes kept, -inf in the others; the full
	 * set keeps every lane (its fill is 0) */
	static const uint8_t ninf32[4] = {0, 0, 0x80, 0xff},
	                     ninf16[2] = {0, 0xfc};
	uint8_t *tail = out + ARG_TAILSET, *full = out + ARG_FULLSET;
	for (uint32_t k = 0; k < g; k++) {
		if (k < valid)
			memset(tail + k * es, 0xff, es);
		else
			memcpy(tail + 8 + k * es, es == 4 ? ninf32 : ninf16,
			       es);
	}
	for (uint32_t k = 0; c->type == DT_F16 && !c->unnorm && k < valid; k++)
		put_le32(tail + 16 + 4 * k, UINT32_MAX);
	memset(full, 0xff, 8);
	memset(full + 16, 0xff, 16);
	/* rw_softmax_f16h8u: the past set (every lane -inf, for an odd
	 * row's last pair) where the tail set's f32 mask was */
	for (uint32_t k = 0; c->unnorm && k < 4; k++)
		memcpy(out + ARG_PASTSET + 8 + 2 * k, ninf16, 2);
	if (use_split(c)) {
		uint32_t k = segments(c);
		put_le32(out + ARG_SPLIT, 1);
		for (int w = 0; w < 6; w++) {
			uint8_t *v = out + ARG_VERTEX + SPLIT_VERTEX_BYTES * w;
			uint32_t a0, n, row = (uint32_t)w / k;
			if (!segment(c, k, w, &a0, &n))
				continue;
			uint32_t words[10] = {
			    1,
			    c->x + row * c->x_stride +
			        atom_offset(a0, c->x_panel),
			    c->dst + row * c->dst_stride +
			        dst_atom_offset(c, a0),
			    n - 1,
			    atom_offset(n - 1, c->x_panel),
			    ARG_VERTEX + SPLIT_VERTEX_BYTES * row * k,
			    k - 2,
			    (uint32_t)w % k == k - 1 ? ARG_TAILSET
			                             : ARG_FULLSET,
			    c->op == RW_LAYERNORM ? c->gamma + a0 * 8
			    : c->unnorm           ? 0
			    : c->dst_panel
			        ? panel_e(c) + (row * atoms + a0) * 16
			    : keeps_e(c->op, c->type)
			        ? c->dst + row * c->dst_stride + atoms * 8 +
			              a0 * 16
			        : 0,
			    c->op == RW_LAYERNORM ? c->beta + a0 * 8 : 0};
			for (int i = 0; i < 10; i++)
				put_le32(v + 4 * i, words[i]);
		}
		return;
	}
	for (int w = 0; w < 6; w++) {
		uint32_t first, count;
		worker_rows(c->rows, w, &first, &count);
		uint8_t *v = out + ARG_VERTEX + 16 * w;
		put_le32(v, count);
		put_le32(v + 4, c->x + first * c->x_stride);
		put_le32(v + 8, c->dst + first * c->dst_stride);
		/* the f16 softmax's e: after the worker's first dst row, or
		 * its slot after a panel dst's panels (a row a worker) */
		uint32_t slot = c->rows < 6 ? first : (uint32_t)w;
		if (keeps_e(c->op, c->type) && !c->unnorm)
			put_le32(v + 12, c->dst_panel
			                     ? panel_e(c) + slot * atoms * 16
			                     : c->dst + first * c->dst_stride +
			                           atoms * 8);
	}
}

uint64_t
rw_cycles(const Chip *chip, const RwCall *c)
{
	assert(rw_entry(c) && "rw_cycles of an unchecked call");
	return use_split(c) ? split_cycles(chip, c) : rows_cycles(chip, c);
}

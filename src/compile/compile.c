/*
 * compile.c - the pipeline from a graph to a package, in one function.
 *
 * For now the graph must be one matrix product of two 2-D inputs (more
 * operators come with the next issues; anything else is refused with a
 * message naming the operation).
 */
#include "compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../asm/asm.h"
#include "../codegen/codegen.h"
#include "../kernels/kernels.h"
#include "../lower/gemm.h"
#include "../lower/lower.h"
#include "../plan/plan.h"

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The one matmul of the graph and its operands. */
/* Batch axes: `group` GEMMs at a time side by side, each on its share of
 * the tiles, and the groups one after another (each adds its own program
 * steps). */
enum { COMPILE_MAX_BATCHES = 4096 };

/* The product of the axes before the last two (graph_infer has checked
 * that both operands have the same). */
static int64_t
shape_batches(const Shape *s)
{
	int64_t n = 1;
	for (int i = 0; i + 2 < s->rank; i++)
		n *= s->dim[i];
	return n;
}

/* The plan for `batches` GEMMs of m x n x k: for each group size g (1 to
 * 16, the powers of two, all of them at once), one GEMM planned on tiles / g
 * tiles, priced as ceil(batches / g) rounds; the cheapest. */
static int
plan_batches(const Chip *chip, uint32_t tiles, DType dt, uint32_t m, uint32_t n,
             uint32_t k, uint32_t batches, GemmPlan *plan, uint32_t *group,
             Diag *d)
{
	uint64_t best = UINT64_MAX;
	for (uint32_t g = 1; g <= batches && g <= tiles; g++) {
		if (g > 16 && (g & (g - 1)) && g != batches)
			continue;
		GemmPlan p;
		Diag dd;
		if (plan_gemm(chip, tiles / g, dt, m, n, k, &p, &dd))
			continue;
		uint64_t cost = (uint64_t)((batches + g - 1) / g) * p.cycles;
		if (cost < best) {
			best = cost;
			*plan = p;
			*group = g;
		}
	}
	/* none fits: the error of the whole chip's plan */
	return best == UINT64_MAX ? plan_gemm(chip, tiles, dt, m, n, k, plan, d)
	                          : IPU_OK;
}

static int
find_gemm(const Graph *g, const Op **mm, Diag *d)
{
	*mm = NULL;
	for (int i = 0; i < g->nops; i++) {
		const Op *op = &g->ops[i];
		if (op->kind != OP_MATMUL || *mm)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "compile: only a graph of one matmul "
			                "is supported so far; op %d is %s",
			                i, op_desc(op->kind)->name);
		*mm = op;
	}
	if (!*mm)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: the graph has no operation");
	const Op *op = *mm;
	const Tensor *a = graph_tensor(g, op->in[0]),
	             *b = graph_tensor(g, op->in[1]);
	int64_t batches = shape_batches(&a->shape);
	if (batches > COMPILE_MAX_BATCHES)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: matmul %s: %lld batches; at most %d "
		                "so far (they run one after another)",
		                graph_tensor(g, op->out)->name,
		                (long long)batches, COMPILE_MAX_BATCHES);
	/* f8 operands may mix the two formats (the kernel takes one each) */
	if (a->elem.dtype != b->elem.dtype &&
	    !(dtype_is_f8(a->elem.dtype) && dtype_is_f8(b->elem.dtype)))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: matmul %s: operands of different "
		                "types (%s, %s)",
		                graph_tensor(g, op->out)->name,
		                dtype_name(a->elem.dtype),
		                dtype_name(b->elem.dtype));
	return IPU_OK;
}

typedef struct {
	Image img;
} Kernels;

static int64_t
kernel_symbol(void *ctx, const char *name)
{
	return img_symbol_addr(&((Kernels *)ctx)->img, name);
}

static uint32_t
image_end(const Image *img)
{
	uint32_t end = 0;
	for (int i = 0; i < img->nseg; i++)
		if (img->seg[i].addr + img->seg[i].size > end)
			end = img->seg[i].addr + img->seg[i].size;
	return (end + 7) & ~7u;
}

static void
add_tensors(Package *pk, const Graph *g, const Lowered *l)
{
	for (int i = 0; i < l->ntp; i++) {
		const TensorPlace *tp = &l->tp[i];
		const Tensor *t = graph_tensor(g, tp->tensor);
		PkgTensor *pt = pkg_add_tensor(
		    pk, t->name, tp->dtype, (int8_t)t->elem.scale,
		    (uint8_t)t->role, tp->rows, tp->cols);
		for (int k = 0; k < tp->npiece; k++) {
			const Piece *p = &tp->piece[k];
			PkgPiece *pp = pkg_add_piece(pt);
			*pp = (PkgPiece){p->tile,     lower_addr(l, p->at),
			                 p->row0,     p->rows,
			                 p->col0,     p->cols,
			                 p->pad_rows, p->pad_cols,
			                 p->format};
		}
	}
}

static int
build_package(Package *pk, const Graph *g, const Lowered *l, Kernels *k,
              uint32_t code_at, const int32_t *save, Diag *d)
{
	for (int i = 0; i < k->img.nseg; i++)
		pkg_add_shared(pk, k->img.seg[i].addr, k->img.seg[i].bytes,
		               k->img.seg[i].size);
	KernelSyms ks = {.symbol = kernel_symbol, .ctx = k};
	for (uint32_t t = 0; t < l->tiles; t++) {
		TileCode tc;
		int r = codegen_tile(l, &ks, t, code_at, save[t], &tc, d);
		if (r)
			return r;
		pkg_set_entry(pk, t, tc.entry);
		pkg_add_segment(pk, t, tc.code_addr, tc.code, tc.code_len);
		for (int i = 0; i < tc.ndata; i++)
			pkg_add_segment(pk, t, tc.data[i].addr,
			                tc.data[i].bytes, tc.data[i].len);
		codegen_free(&tc);
	}
	add_tensors(pk, g, l);
	for (int i = 0; i < l->nbuf; i++)
		pkg_add_buffer(pk, l->buf[i].tile, l->buf[i].addr,
		               l->buf[i].bytes, l->buf[i].what);
	for (int i = 0; i < l->nstep; i++)
		pkg_add_step(pk, (uint8_t)l->step[i].kind, l->step[i].what,
		             l->step[i].cycles);
	return IPU_OK;
}

int
compile_graph(const Graph *g, const CompileOptions *o, Package **out,
              CompileReport *rep, Diag *d)
{
	double t0 = now_ms();
	const Chip *chip = o && o->chip ? o->chip : chip_default();
	uint32_t tiles = o && o->tiles ? o->tiles : chip->tiles;
	memset(rep, 0, sizeof *rep);
	*out = NULL;
	const Op *mm;
	int r = graph_verify(g, d);
	if (!r)
		r = find_gemm(g, &mm, d);
	if (r)
		return r;
	const Tensor *ta = graph_tensor(g, mm->in[0]),
	             *tb = graph_tensor(g, mm->in[1]);
	DType dt = ta->elem.dtype;
	if (dtype_is_f8(dt) && chip->arch != ARCH_IPU21)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: f8 needs an ipu21 chip; %s is %s",
		                chip->name, chip->arch_name);
	/* f8 values are q x 2^scale: the products carry both scales */
	int fp8_scale = ta->elem.scale + tb->elem.scale;
	if (dtype_is_f8(dt) && (fp8_scale < -32 || fp8_scale > 31))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compile: matmul %s: the f8 scales 2^%d (%s) "
		                "and 2^%d (%s) multiply to 2^%d, outside the "
		                "kernel's 2^-32..2^31",
		                graph_tensor(g, mm->out)->name, ta->elem.scale,
		                ta->name, tb->elem.scale, tb->name, fp8_scale);
	/* plan: A [m, k] and B [k, n] as used (the transposes of their
	 * tensors if asked) */
	int tra = mm->attr.transpose_a, trb = mm->attr.transpose_b;
	int ra = ta->shape.rank, rb = tb->shape.rank;
	uint32_t dm = (uint32_t)ta->shape.dim[ra - (tra ? 1 : 2)],
	         dk = (uint32_t)ta->shape.dim[ra - (tra ? 2 : 1)],
	         dn = (uint32_t)tb->shape.dim[rb - (trb ? 2 : 1)];
	uint32_t batches = (uint32_t)shape_batches(&ta->shape);
	GemmPlan plan;
	uint32_t group = 1;
	r = plan_batches(chip, tiles, dt, dm, dn, dk, batches, &plan, &group,
	                 d);
	if (r)
		return r;
	plan_gemm_describe(&plan, rep->plan, sizeof rep->plan);
	if (batches > 1) {
		size_t at = strlen(rep->plan);
		snprintf(rep->plan + at, sizeof rep->plan - at,
		         "; %u batches, %u at a time side by side", batches,
		         group);
	}
	/* lower and schedule */
	uint32_t one = plan.pk * plan.pm * plan.pn, used = one * group;
	Lowered *l = lower_new(chip, used);
	int32_t base = 0;
	for (uint32_t bi = 0; bi < batches && !r; bi++) {
		uint32_t j = bi % group;
		if (j == 0)
			base = l->nstep;
		GemmOperands ops = {.a = mm->in[0],
		                    .b = mm->in[1],
		                    .c = mm->out,
		                    .batches = batches,
		                    .batch = bi,
		                    .tile_base = j * one,
		                    .step_base = j ? base : -1,
		                    .transpose_a = tra,
		                    .transpose_b = trb,
		                    .dtype_b = tb->elem.dtype,
		                    .fp8_scale = fp8_scale};
		r = lower_gemm(l, &plan, &ops, d);
	}

	int32_t *save = xcalloc(used, sizeof *save);
	for (uint32_t t = 0; t < used; t++)
		save[t] = lower_buffer(l, t, 8, 8, REGION_ANY, 0, INT32_MAX,
		                       "return address");
	if (!r)
		r = xsched_run(l, d);
	/* kernels, code sizes, placement */
	Kernels k = {0};
	static const char *const kernel_names[] = {"gemm", "vadd", "gemm_f8"};
	if (!r)
		r = kernel_image(kernel_names, dtype_is_f8(dt) ? 3 : 2, chip,
		                 &k.img, d);

	uint32_t code_at = image_end(&k.img);
	uint32_t *code_end = xcalloc(used, sizeof *code_end);
	for (uint32_t t = 0; !r && t < used; t++)
		code_end[t] = code_at + codegen_size(l, t);
	if (!r)
		r = place_buffers(l, code_end, &rep->place, d);
	/* code and package */
	Package *pk = NULL;
	if (!r) {
		pk = pkg_new(chip, used);
		r = build_package(pk, g, l, &k, code_at, save, d);
	}
	if (!r) {
		rep->predicted_cycles = lower_cycles(l);
		rep->tiles_used = used;
		/* what a tile needs (code + the most data live at once), not
		 * its high-water address, which counts the gap placement
		 * leaves below the interleaved region */
		for (uint32_t t = 0; t < used; t++) {
			const PlaceTile *pt = &rep->place.tile[t];
			if (pt->code + pt->peak > rep->peak_tile_bytes)
				rep->peak_tile_bytes =
				    (uint32_t)(pt->code + pt->peak);
		}
		pk->total_cycles = rep->predicted_cycles;
		pkg_set_plan(pk, rep->plan);
		pkg_add_kernel(pk, gemm_entry(plan_gemm_dtype(dt)),
		               (uint32_t)kernel_symbol(
		                   &k, gemm_entry(plan_gemm_dtype(dt))),
		               plan.steps * used);
		rep->compile_ms = now_ms() - t0;
		pk->compile_us = (uint64_t)(rep->compile_ms * 1e3);
		r = pkg_check(pk, d);
	}
	if (r) {
		pkg_free(pk);
		pk = NULL;
	}
	*out = pk;
	img_free(&k.img);
	free(code_end);
	free(save);
	lower_free(l);
	return r;
}

void
compile_report_free(CompileReport *rep)
{
	place_report_free(&rep->place);
}

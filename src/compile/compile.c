/*
 * compile.c - the pipeline from a graph to a package, in one function.
 * Which operators compile, and how, is lower/program.c's business.
 */
#include "compile.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../asm/asm.h"
#include "../codegen/codegen.h"
#include "../kernels/kernels.h"
#include "../lower/lower.h"
#include "../lower/program.h"

typedef struct {
	TileImage img;
} Kernels;

static int64_t
kernel_symbol(void *ctx, const char *name)
{
	return img_symbol_addr(&((Kernels *)ctx)->img, name);
}

static uint32_t
image_end(const TileImage *img)
{
	uint32_t end = 0;
	for (int i = 0; i < img->nseg; i++)
		if (img->seg[i].addr + img->seg[i].size > end)
			end = img->seg[i].addr + img->seg[i].size;
	return (uint32_t)align_up(end, 8);
}

/* The package file keeps its own numbers for what it shares with the
 * compiler (the runtime reads it without the compiler's headers). */
_Static_assert((int)PKG_ROLE_INPUT == ROLE_INPUT &&
                   (int)PKG_ROLE_WEIGHT == ROLE_WEIGHT &&
                   (int)PKG_ROLE_OUTPUT == ROLE_OUTPUT,
               "roles");
_Static_assert((int)PKG_PF_ROWMAJOR == PF_ROWMAJOR &&
                   (int)PKG_PF_GEMM_B == PF_GEMM_B &&
                   (int)PKG_PF_GEMM_C == PF_GEMM_C &&
                   (int)PKG_PF_ROWMAJOR_T == PF_ROWMAJOR_T &&
                   (int)PKG_PF_GEMM_B_T == PF_GEMM_B_T,
               "piece formats");
_Static_assert((int)PKG_STEP_EXCHANGE == STEP_EXCHANGE &&
                   (int)PKG_STEP_COMPUTE == STEP_COMPUTE,
               "step kinds");

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

/* The kernel objects the program calls, each once, and its entries with
 * their numbers of calls (for the package's kernel list). */
enum { MAX_KERNELS = 32 };

typedef struct {
	const char *object[MAX_KERNELS], *entry[MAX_KERNELS];
	uint32_t calls[MAX_KERNELS];
	int nobject, nentry;
	Kernels *syms; /* where they are, once linked */
} KernelsUsed;

static int
find_name(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

static int
kernels_used(const Lowered *l, KernelsUsed *u, Diag *d)
{
	memset(u, 0, sizeof *u);
	for (int i = 0; i < l->nstep; i++)
		for (int k = 0; k < l->step[i].ncall; k++) {
			const KernelCall *c = &l->step[i].call[k];
			int e = find_name(u->entry, u->nentry, c->kernel);
			if (e < 0 && u->nentry == MAX_KERNELS)
				return diag_set(d, IPU_EINVAL, NULL, 0, 0,
				                "compile: more than %d kernels",
				                MAX_KERNELS);
			if (e < 0) {
				e = u->nentry++;
				u->entry[e] = c->kernel;
				if (find_name(u->object, u->nobject,
				              c->object) < 0)
					u->object[u->nobject++] = c->object;
			}
			u->calls[e]++;
		}
	return IPU_OK;
}

/* What each buffer holds (PKG_MEM_*): argument blocks, the return
 * address, weights (the pieces of weight tensors the host writes, and the
 * loop's weight bank and working region, which the loop's first step
 * copies between), and everything else the program's data. */
static uint8_t *
buffer_categories(const Graph *g, const Lowered *l, const int32_t *save)
{
	uint8_t *cat = xcalloc((size_t)l->nbuf + 1, 1);
	for (int i = 0; i < l->ntp; i++)
		if (graph_tensor(g, l->tp[i].tensor)->role == ROLE_WEIGHT)
			for (int k = 0; k < l->tp[i].npiece; k++)
				cat[l->tp[i].piece[k].at.buf] = PKG_MEM_WEIGHTS;
	for (int i = 0; i < l->nstep; i++)
		for (int k = 0; k < l->step[i].ncall; k++) {
			const KernelCall *c = &l->step[i].call[k];
			cat[c->args_at] = PKG_MEM_ARGUMENTS;
			for (int r = 0;
			     l->loop_count && i == l->loop_first && r < c->nref;
			     r++)
				cat[c->ref[r].buf] = PKG_MEM_WEIGHTS;
		}
	for (uint32_t t = 0; t < l->tiles; t++)
		cat[save[t]] = PKG_MEM_STACK;
	return cat;
}

/* For reports and profiles (docs/profile.md): the graph's ops, every
 * buffer with its category and lifetime, and every step with the ops it
 * serves, the kernels it calls and their multiply-accumulates. */
static void
describe_program(Package *pk, const Graph *g, const Lowered *l,
                 const KernelsUsed *ku, const int32_t *save)
{
	for (int i = 0; i < g->nops; i++) {
		const Op *op = &g->ops[i];
		pkg_add_op(pk, graph_tensor(g, op->out)->name,
		           op_desc(op->kind)->name,
		           (uint64_t)graph_op_work(g, op).macs,
		           (uint8_t)graph_tensor(g, op->in[0])->elem.dtype);
	}
	uint8_t *cat = buffer_categories(g, l, save);
	for (int i = 0; i < l->nbuf; i++) {
		const Buffer *b = &l->buf[i];
		if (!b->bytes) /* an empty one holds nothing to show */
			continue;
		PkgBuffer *pb =
		    pkg_add_buffer(pk, b->tile, b->addr, b->bytes, b->what);
		pb->category = cat[i];
		pb->first = (uint32_t)b->first;
		pb->last =
		    b->last == INT32_MAX ? PKG_TO_END : (uint32_t)b->last;
	}
	free(cat);
	for (int i = 0; i < l->nstep; i++) {
		const Step *s = &l->step[i];
		int loop =
		    l->loop_count && i >= l->loop_first && i <= l->loop_last;
		PkgStep *ps = pkg_add_step(pk, (uint8_t)s->kind, s->what,
		                           s->cycles, loop ? l->loop_count : 1);
		ps->overhead = lower_step_overhead(l->chip, s);
		for (int k = 0; k < s->nop; k++)
			pkg_step_add_op(ps, (uint32_t)s->op[k]);
		for (int k = 0; k < s->ncall; k++) {
			ps->macs += s->call[k].macs;
			uint32_t e = (uint32_t)find_name(ku->entry, ku->nentry,
			                                 s->call[k].kernel);
			uint32_t j = 0;
			while (j < ps->nkernel && ps->kernel[j] != e)
				j++;
			if (j == ps->nkernel)
				pkg_step_add_kernel(ps, e);
		}
	}
	for (int e = 0; e < ku->nentry; e++)
		pkg_add_kernel(pk, ku->entry[e],
		               (uint32_t)kernel_symbol(ku->syms, ku->entry[e]),
		               ku->calls[e]);
}

static int
build_package(Package *pk, const Graph *g, const Lowered *l, Kernels *k,
              const KernelsUsed *ku, uint32_t code_at, const uint32_t *code_end,
              const int32_t *save, Diag *d)
{
	for (int i = 0; i < k->img.nseg; i++)
		pkg_add_shared(pk, k->img.seg[i].addr, k->img.seg[i].bytes,
		               k->img.seg[i].size);
	describe_program(pk, g, l, ku, save);
	KernelSyms ks = {.symbol = kernel_symbol, .ctx = k};
	for (uint32_t t = 0; t < l->tiles; t++) {
		TileCode tc;
		int r = codegen_tile(l, &ks, t, code_at, save[t], &tc, d);
		if (!r)
			r = codegen_verify(l, &tc, code_end[t], d);
		if (r) {
			codegen_free(&tc);
			return r;
		}
		pkg_set_entry(pk, t, tc.entry);
		pkg_add_segment(pk, t, tc.code_addr, tc.code, tc.code_len);
		for (int i = 0; i < tc.ndata; i++)
			pkg_add_segment(pk, t, tc.data[i].addr,
			                tc.data[i].bytes, tc.data[i].len);
		for (int s = 0; s <= l->nstep; s++)
			pkg_set_step_pc(pk, t, (uint32_t)s, tc.step_at[s]);
		codegen_free(&tc);
	}
	add_tensors(pk, g, l);
	return IPU_OK;
}

/* A program that does not fit: what placement made of it, as a package
 * without code or tensors (buffers of tiles that did not fit at address
 * 0), for the memory views of a profile (CompileReport.layout). */
static Package *
layout_of(const Graph *g, const Lowered *l, Kernels *k, const KernelsUsed *ku,
          uint32_t code_at, const int32_t *save)
{
	Package *pk = pkg_new(l->chip, l->tiles);
	for (int i = 0; i < k->img.nseg; i++)
		pkg_add_shared(pk, k->img.seg[i].addr, k->img.seg[i].bytes,
		               k->img.seg[i].size);
	describe_program(pk, g, l, ku, save);
	uint32_t *at = xmalloc(((size_t)l->nstep + 1) * sizeof *at);
	for (uint32_t t = 0; t < l->tiles; t++) {
		/* the program's bytes, as zeros: only its size matters */
		uint32_t len = codegen_size(l, t, at);
		uint8_t *zero = xcalloc(len ? len : 1, 1);
		pkg_add_segment(pk, t, code_at, zero, len ? len : 1);
		free(zero);
		pkg_set_entry(pk, t, code_at);
		for (int s = 0; s <= l->nstep; s++)
			pkg_set_step_pc(pk, t, (uint32_t)s, code_at + at[s]);
	}
	free(at);
	return pk;
}

enum {
	/* plans made again with nothing new to give up, only the weight
	 * balance started from the last plan's measure (compile_graph) */
	BALANCE_ROUNDS = 4
};

/* What the placer measured of the plans so far, for the next. */
typedef struct {
	uint32_t *load;   /* by tile: the next plan's PlanOptions.load */
	uint32_t *code;   /* by tile: the last plan's code, the next plan's
	                     PlanOptions.code */
	uint32_t *beside; /* by graph op: the most data the drafts held beside
	                     a matmul where its tiles did not fit, the next
	                     plan's PlanOptions.beside */
	uint64_t *extra;  /* by tile: the bytes it was over by in the plans
	                     made again for the balance only, added to its
	                     load so that the balance keeps off it */
	int rounds;       /* such plans so far */
	uint64_t over;    /* the bytes the last plan's tiles were over by */
	PlanBeside *bufs; /* by graph op: the buffers beside a matmul on a
	                     tile of a draft that did not pack, the next
	                     plan's PlanOptions.beside_bufs */
	uint8_t *own;     /* by graph op: a matmul already planned again
	                     within its own step's measure (own_again): once
	                     a compile each */
} Measure;

/* 1 if the weight balance could make the plan fit: every tile over
 * stores more balanced weight bytes than it is over by, and the tiles
 * that fit have room for all that is over (need: by tile, as measured). */
static int
balance_may_fit(const Plan *plan, const uint64_t *need)
{
	uint64_t mem = plan_tile_room(plan->chip), over = 0, room = 0;
	for (uint32_t t = 0; t < plan->tiles; t++) {
		uint64_t w = plan->weight_bytes ? plan->weight_bytes[t] : 0;
		if (need[t] > mem && w < need[t] - mem)
			return 0;
		if (need[t] > mem)
			over += need[t] - mem;
		else
			room += mem - need[t];
	}
	return over && over <= room;
}

/* The tiles placement found not to fit, for plan_refit: what the
 * planner gives up for the next plan (into fit); the number of ops given
 * something new. Every tile's bytes besides the weights the plan's
 * balance stored there go into m->load: the placer's measure (code and
 * the most data live at once; for a tile that did not fit, its best
 * packing's end if that is more), from which the next plan's balance
 * starts. With nothing left to give up, while the rounds last and the
 * balance could help, -1: the same plan again with only the balance
 * started anew, the tiles over weighed down by what they were over by
 * and a margin (equal loads alone swapped which few tiles overflowed:
 * So400m f8 at batch 2, 3 then 5 tiles; without the margin 3, 3, 2, 1,
 * the last 192 bytes past the end), as long as each round shrinks the
 * bytes over. */
static int
refit(const Plan *plan, const PlaceReport *rep, uint8_t *fit, Measure *m)
{
	PlanOver *over = xcalloc((size_t)rep->nover + 1, sizeof *over);
	for (int i = 0; i < rep->nover; i++)
		over[i] = (PlanOver){rep->over[i].tile, rep->over[i].op, 0};
	int n = plan_refit(plan, over, rep->nover, fit);
	free(over);
	uint32_t T = plan->tiles;
	uint64_t mem = plan_tile_room(plan->chip);
	if (!m->load) {
		m->load = xcalloc(T, sizeof *m->load);
		m->extra = xcalloc(T, sizeof *m->extra);
		m->code = xcalloc(T, sizeof *m->code);
	}
	for (uint32_t t = 0; t < T && t < rep->tiles; t++)
		m->code[t] = rep->tile[t].code;
	uint64_t *need = xcalloc(T, sizeof *need);
	for (uint32_t t = 0; t < T && t < rep->tiles; t++)
		need[t] = plan_tile_need(
		    (TileBytes){rep->tile[t].code, rep->tile[t].peak});
	for (int i = 0; i < rep->nover; i++) {
		const PlaceOverflow *o = &rep->over[i];
		uint64_t packed = o->packed > plan->chip->mem_base
		                      ? o->packed - plan->chip->mem_base
		                      : 0;
		if (o->tile < T && packed > need[o->tile])
			need[o->tile] = packed;
	}
	uint64_t total = 0;
	for (uint32_t t = 0; t < T; t++)
		total += need[t] > mem ? need[t] - mem : 0;
	/* a round that did not shrink what is over gives up */
	if (!n && m->rounds < BALANCE_ROUNDS &&
	    (!m->rounds || total < m->over) && balance_may_fit(plan, need)) {
		m->rounds++;
		n = -1;
		/* what it was over by and a 64th of the tile: the slack
		 * that alignment and the element rules leave (20 KB on
		 * So400m's tiles) may sink a tile over by a few bytes again */
		for (uint32_t t = 0; t < T; t++)
			if (need[t] > mem)
				m->extra[t] += need[t] - mem + mem / 64;
	}
	for (uint32_t t = 0; t < T; t++) {
		uint64_t l =
		    (uint64_t)plan_tile_load(plan, t, need[t]) + m->extra[t];
		m->load[t] = l > UINT32_MAX ? UINT32_MAX : (uint32_t)l;
	}
	m->over = total;
	free(need);
	return n;
}

/* The op whose step the report's worst tile is over at, as text for the
 * error ("; at that step: op N, matmul h0"; the first the step serves),
 * or "" if the step is the loop's or the pipeline's own. */
static void
worst_op(const Graph *g, const PlaceReport *rep, char *buf, size_t len)
{
	buf[0] = 0;
	if (rep->worst < 0 || rep->worst >= rep->nover)
		return;
	const PlaceOverflow *o = &rep->over[rep->worst];
	if (o->op < 0 || o->op >= g->nops)
		return;
	const Op *op = &g->ops[o->op];
	snprintf(buf, len, "; at that step: op %d, %s %s%s", (int)o->op,
	         op_desc(op->kind)->name, graph_tensor(g, op->out)->name,
	         o->nop > 1 ? " (and other ops)" : "");
}

/* A plan lowered, scheduled and its code sized: everything placement
 * takes. */
typedef struct {
	Plan *plan;
	Lowered *l;
	int32_t *save; /* by tile: the return address's buffer */
	Kernels k;     /* the kernels linked */
	KernelsUsed ku;
	uint32_t code_at;   /* where the programs start */
	uint32_t *code_end; /* by tile: where its program ends */
	int shared;         /* plan is CompileOptions.plan's struct on another
	                       chip, its arrays that plan's (plan_given) */
} Draft;

static void
draft_free(Draft *f)
{
	if (f->shared)
		free(f->plan);
	else
		plan_free(f->plan);
	img_free(&f->k.img);
	free(f->code_end);
	free(f->save);
	lower_free(f->l);
	memset(f, 0, sizeof *f);
}

/* Plans the graph with po and verifies the plan (*p NULL on an error). */
static int
plan_checked(const Graph *g, const CompileOptions *o, const PlanOptions *po,
             Plan **p, Diag *d)
{
	int r = plan_graph(g, o->chip, o->tiles, po, p, d);
	if (!r)
		r = plan_verify(*p, d);
	if (r) {
		plan_free(*p);
		*p = NULL;
	}
	return r;
}

/* CompileOptions.plan on o->chip: a copy of the struct, with the chip
 * lowering reads (lower_plan: plan->chip) set to o->chip, and its arrays
 * the given plan's (draft_free frees the copy alone); NULL with d set if
 * the plan is of another graph or chip. */
static Plan *
plan_given(const Graph *g, const CompileOptions *o, Diag *d)
{
	const Plan *given = o->plan;
	if (given->g != g || given->chip->base != o->chip->base ||
	    given->tiles != o->tiles) {
		diag_set(d, IPU_EINVAL, NULL, 0, 0,
		         "compile: the plan given is of another graph, chip "
		         "or number of tiles");
		return NULL;
	}
	Plan *p = xmalloc(sizeof *p);
	*p = *given;
	p->chip = o->chip;
	return p;
}

/* Lowers plan (f takes it), schedules its exchanges and sizes each
 * tile's program (codegen_size), with the dumps asked for. */
static int
draft(const CompileOptions *o, Plan *plan, Draft *f, CompileReport *rep,
      Diag *d)
{
	const Chip *chip = o->chip;
	FILE *dump = o->dump_to ? o->dump_to : stdout;
	memset(f, 0, sizeof *f);
	f->plan = plan;
	f->shared = o->plan != NULL;
	if (o->dump & COMPILE_DUMP_PLAN)
		plan_print(f->plan, dump);
	snprintf(rep->plan, sizeof rep->plan, "%s", f->plan->desc);
	int r = lower_plan(f->plan, &f->l, d);
	if (r)
		return r;
	Lowered *l = f->l;
	l->xcache = o->xcache;
	if (!o->no_a_direct)
		rep->a_direct = (uint32_t)lower_a_direct(l);
	if (!o->no_b_under)
		lower_b_under(l);
	if (!o->no_b_under && !o->no_b_wrap)
		lower_b_wrap(l);
	if (!o->no_red_pipe)
		lower_red_pipe(l);
	uint32_t used = l->tiles;
	f->save = xcalloc(used, sizeof *f->save);
	for (uint32_t t = 0; t < used; t++)
		f->save[t] = lower_buffer(l, t, PLAN_SAVE_BYTES, 8, REGION_ANY,
		                          0, INT32_MAX, "return address");
	r = lower_verify(l, d);
	if (!r && (o->dump & COMPILE_DUMP_LOWER))
		lower_print(l, dump);
	if (!r)
		r = xsched_run(l, d);
	rep->ovl_beside = l->ovl_beside;
	rep->ovl_no_room = l->ovl_no_room;
	rep->ovl_dearer = l->ovl_dearer;
	rep->red_beside = l->red_beside;
	rep->red_no_room = l->red_no_room;
	if (!r)
		lower_b_wrap_undo(l);
	if (!r)
		lower_share_args(l);
	if (!r)
		r = lower_verify_schedule(l, d);
	if (!r && (o->dump & COMPILE_DUMP_SCHED))
		lower_print_schedule(l, dump);
	lower_index(l);
	/* kernels and code sizes */
	if (!r)
		r = kernels_used(l, &f->ku, d);
	if (!r)
		r = kernel_image(f->ku.object, f->ku.nobject, chip, &f->k.img,
		                 d);
	f->ku.syms = &f->k;
	f->code_at = image_end(&f->k.img);
	if (f->code_at < chip->mem_base) /* no kernels: only exchanges */
		f->code_at = chip->mem_base;
	f->code_end = xcalloc(used, sizeof *f->code_end);
	for (uint32_t t = 0; !r && t < used; t++)
		f->code_end[t] = f->code_at + codegen_size(l, t, NULL);
	if (!r && (o->dump & COMPILE_DUMP_CODE))
		codegen_print(l, dump);
	return r;
}

enum {
	/* plans drafted at most (compile_once); each counts at least the
	 * last one's code and data, so they settle in two on every graph
	 * measured (docs/compiler.md, "The code in the first plan") */
	DRAFT_ROUNDS = 4
};

/* The matmuls of draft f whose tiles, at their steps, are over the tile
 * by the memory model's bound with more data beside them than their GEMM
 * plans counted (lower_beside against OpPlan.held): their number, the
 * most data beside one in *most, that one's op in *at; beside (by op)
 * raised to the measure. */
static int
beside_more(const Graph *g, const Draft *f, const uint8_t *matmul,
            uint32_t *beside, uint64_t *most, int *at)
{
	uint32_t T = f->l->tiles, *code = xcalloc((size_t)T + 1, sizeof *code),
	         *now = xcalloc((size_t)g->nops + 1, sizeof *now);
	for (uint32_t t = 0; t < T; t++)
		code[t] = f->code_end[t] - f->l->chip->mem_base;
	lower_beside(f->l, code, matmul, g->nops, now);
	int more = 0;
	*most = 0;
	for (int i = 0; i < g->nops; i++) {
		if (now[i] > f->plan->op[i].held) {
			more++;
			if (now[i] > *most) {
				*most = now[i];
				*at = i;
			}
		}
		if (now[i] > beside[i])
			beside[i] = now[i];
	}
	free(code);
	free(now);
	return more;
}

/* The compile without the overlapped GEMM superstep that compile_graph
 * compares (below), run in a thread of its own beside the compile with it
 * once that one's first plan has an overlapped GEMM plan (compile_once
 * starts it; with no overlapped plan the two compiles are the same and
 * the second is not made). */
typedef struct {
	const Graph *g;
	CompileOptions opt; /* no_gemm_overlap set */
	Package *out;
	CompileReport rep;
	Diag d;
	int r;
	int started; /* th runs plain_run */
	pthread_t th;
} Plain;

static int compile_with(const Graph *g, const CompileOptions *o, Package **out,
                        CompileReport *rep, Diag *d, Plain *pl);

static void *
plain_run(void *arg)
{
	Plain *pl = arg;
	pl->r = compile_with(pl->g, &pl->opt, &pl->out, &pl->rep, &pl->d, NULL);
	return NULL;
}

/* starts pl's compile if plan p has an overlapped GEMM plan */
static void
plain_start(Plain *pl, const Plan *p)
{
	int any = 0;
	for (int i = 0; i < p->nop && !any; i++)
		any = p->op[i].gemm.overlap;
	if (any && !pl->started)
		pl->started = !pthread_create(&pl->th, NULL, plain_run, pl);
}

/* own_again's --dump line for the plan made with the budgets of op j
 * (-1: every op raised) and what came of it. */
static void
own_print(FILE *dump, const Graph *g, const Plan *p, int j,
          const uint8_t *raised, const uint32_t *want, uint64_t counted,
          const char *what)
{
	fprintf(dump, "# within their own steps' measure (code counted %llu):",
	        (unsigned long long)counted);
	for (int i = 0; i < g->nops; i++)
		if (raised[i] && (j < 0 || i == j))
			fprintf(dump,
			        " op %d, matmul %s, %u bytes of its plan, "
			        "data beside it %llu -> %u;",
			        i, graph_tensor(g, g->ops[i].out)->name,
			        p->op[i].gemm.tile_bytes,
			        (unsigned long long)p->op[i].held, want[i]);
	fprintf(dump, " %s\n", what);
}

/* The rung beside the refit ladder: draft f's tiles over the memory
 * model's total bound (mr) at a step of a matmul planned in f, on its own
 * grid, say that matmul's plan took more than its step could hold. Each
 * such matmul, once a compile (m->own), is planned again within the bytes
 * its step measured (plan_refit_own: its budget's data raised so that its
 * plan's own bytes are at most the draft's less what the tile was over
 * by), every other matmul's budget as it was, with po's marks (the ladder
 * has given up on the same draft what it gives up: compile_once): by the
 * tile most over, all of them at once, then each alone in the graph's
 * order; then the same by the tile least over (a tile far over may be so
 * for other reasons than the plan: So400m f8 at batch 4, fc2's grid had
 * tiles 87,880 bytes over, no fc2 plan that small, and tiles 2,378 over).
 * The first plan in which a matmul raised has another GEMM plan than in
 * the draft is taken: the matmuls raised in it, *p the new plan; 0 with
 * m->beside as it was: the ladder's marks alone. */
static int
own_again(const Graph *g, const CompileOptions *o, const PlanOptions *po,
          const Draft *f, const PlaceReport *mr, const uint32_t *code,
          Measure *m, Plan **p)
{
	size_t no = (size_t)g->nops + 1;
	if (!m->own)
		m->own = xcalloc(no, 1);
	/* each graph op the worst step of a tile over serves, with that
	 * step's need (a matmul's multiply may serve an op fused with it
	 * first) */
	int nover = 0, cap = mr->nover + 1;
	PlanOver *over = xcalloc((size_t)cap, sizeof *over);
	for (int i = 0; i < mr->nover; i++) {
		const PlaceOverflow *ov = &mr->over[i];
		if (ov->kind != PLACE_OVER_TOTAL || ov->step < 0 ||
		    ov->step >= f->l->nstep)
			continue;
		const Step *st = &f->l->step[ov->step];
		for (int k = 0; k < st->nop; k++) {
			if (nover == cap) {
				cap *= 2;
				over =
				    xrealloc(over, (size_t)cap * sizeof *over);
			}
			over[nover++] =
			    (PlanOver){ov->tile, st->op[k], ov->need};
		}
	}
	uint64_t counted = plan_kernels_code(o->chip) +
	                   plan_code_beyond(o->chip, code, o->tiles);
	uint32_t *before = xmalloc(no * sizeof *before),
	         *want = xmalloc(no * sizeof *want);
	uint8_t *raised = xcalloc(no, 1), *tried = xcalloc(no, 1);
	memcpy(before, m->beside, no * sizeof *before);
	int took = 0;
	/* by the tile most over, then by the one least over: round -1 all
	 * the matmuls raised, round j op j alone */
	for (int least = 0; least < 2 && !took; least++) {
		memcpy(m->beside, before, no * sizeof *before);
		int n = plan_refit_own(f->plan, over, nover, counted, least,
		                       m->own, m->beside, raised);
		memcpy(want, m->beside, no * sizeof *want);
		for (int i = 0; i < g->nops; i++)
			tried[i] |= raised[i];
		for (int j = -1; n && !took && j < g->nops; j++) {
			if (j >= 0 && (!raised[j] || n == 1))
				continue;
			if (j >= 0) {
				memcpy(m->beside, before, no * sizeof *before);
				m->beside[j] = want[j];
			}
			Plan *np = NULL;
			Diag dd;
			int r = plan_checked(g, o, po, &np, &dd);
			/* the same GEMM plan for every matmul raised: the
			 * raise changed nothing (the held bytes enter the
			 * planner only through the GEMM admissions) */
			int same = !r;
			for (int i = 0; same && i < g->nops; i++)
				if (raised[i] && (j < 0 || i == j))
					same = plan_same_gemm(
					    &np->op[i].gemm,
					    &f->plan->op[i].gemm);
			if (o->dump)
				own_print(o->dump_to ? o->dump_to : stdout, g,
				          f->plan, j, raised, want, counted,
				          r      ? dd.msg
				          : same ? "the same choices"
				                 : "a new plan");
			if (r)
				continue;
			if (same) {
				plan_free(np);
				continue;
			}
			*p = np;
			took = j < 0 ? n : 1;
		}
	}
	for (int i = 0; i < g->nops; i++)
		if (tried[i])
			m->own[i] = 1;
	if (!took)
		memcpy(m->beside, before, no * sizeof *before);
	free(over);
	free(before);
	free(want);
	free(raised);
	free(tried);
	return took;
}

/* The pipeline on the plan made with `fit`, its GEMM plans chosen beside
 * the code and the data its own lowering sizes: a draft whose programs
 * hold more code beyond the kernels than its GEMM budgets counted
 * (Plan.held_code), or whose matmuls' tiles do not fit with more data
 * beside them than their plans counted (beside_more), is planned again
 * beside those bytes, before any placement; if no plan fits beside the
 * data, the draft goes on as it is. Then every tile of the draft is
 * measured at every step by the memory model's bounds (place_measure) and,
 * if they hold, placed (place_buffers, whose packing is the only part the
 * bounds do not decide): tiles over either way make the planner give up
 * what it may (refit) and plan again, as a draft; with nothing left to
 * give up the compile fails with the measure's or the placement's message
 * (tile, step, bytes), rep holding the placement's per-tile report and the
 * layout of the program that failed. One call: no plan is made after it. */
static int
compile_once(const Graph *g, const CompileOptions *o, uint8_t *fit, Measure *m,
             double t0, Package **out, CompileReport *rep, Diag *d, Plain *pl)
{
	const Chip *chip = o->chip;
	FILE *dump = o->dump_to ? o->dump_to : stdout;
	memset(rep, 0, sizeof *rep);
	*out = NULL;
	/* by tile: the most code of the drafts and of a measured plan */
	uint32_t *code = xcalloc(o->tiles, sizeof *code);
	for (uint32_t t = 0; m->code && t < o->tiles; t++)
		code[t] = m->code[t];
	/* by graph op: the data beside a matmul, of the drafts and plans
	 * so far */
	if (!m->beside)
		m->beside = xcalloc((size_t)g->nops + 1, sizeof *m->beside);
	uint8_t *matmul = xcalloc((size_t)g->nops + 1, 1);
	uint32_t *prev = xcalloc((size_t)g->nops + 1, sizeof *prev);
	for (int i = 0; i < g->nops; i++)
		matmul[i] = g->ops[i].kind == OP_MATMUL;
	PlanOptions po = {.weight_copies = 1,
	                  .no_gelu_in_reduction = o->no_gelu_in_reduction,
	                  .no_cast_in_reduction = o->no_cast_in_reduction,
	                  .no_carry_layout = o->no_carry_layout,
	                  .gemm_overlap = !o->no_gemm_overlap,
	                  .b_under = !o->no_b_under,
	                  .fit = fit,
	                  .load = m->load,
	                  .code = m->code ? code : NULL,
	                  .beside = m->beside,
	                  .memo = o->memo};
	Draft f = {0};
	Plan *p = NULL;
	/* known: the draft's tiles are over by the memory model and the
	 * planner has nothing left to give up (kd says where) */
	int known = 0, placed = 0;
	Diag kd = {0};
	char at_op[GRAPH_MAX_NAME + 96] = "";
	int r = IPU_OK, round = 0;
	if (o->plan)
		r = (p = plan_given(g, o, d)) ? IPU_OK : IPU_EINVAL;
	else
		r = plan_checked(g, o, &po, &p, d);
	if (!r && pl)
		plain_start(pl, p);
	while (!r) {
		for (int settle = 1; !r; settle++) {
			round++;
			r = draft(o, p, &f, rep, d);
			if (r)
				break;
			uint64_t held = f.plan->held_code;
			for (uint32_t t = 0; t < f.l->tiles; t++)
				if (f.code_end[t] - chip->mem_base > code[t])
					code[t] =
					    f.code_end[t] - chip->mem_base;
			rep->code_rounds = round;
			uint64_t beyond =
			             plan_code_beyond(chip, code, o->tiles),
			         most;
			memcpy(prev, m->beside,
			       ((size_t)g->nops + 1) * sizeof *prev);
			int at = 0;
			int more =
			    beside_more(g, &f, matmul, m->beside, &most, &at);
			if (o->plan || (beyond <= held && !more) ||
			    settle == DRAFT_ROUNDS)
				break;
			/* the planner's own check first: if every GEMM search
			 * admits beside these bytes the candidates it admitted,
			 * planning again gives the same plan (the draft's) */
			uint64_t packed = 0;
			int holds = plan_holds_beside(f.plan, beyond, m->beside,
			                              &packed);
			const char *again = holds ? "its GEMM searches checked "
			                            "beside it"
			                          : "planning again beside it";
			if (o->dump && beyond > held)
				fprintf(
				    dump,
				    "# plan %d holds %llu bytes of code beyond "
				    "the kernels on a tile, its GEMM plans "
				    "%llu: %s\n",
				    round, (unsigned long long)beyond,
				    (unsigned long long)held, again);
			if (o->dump && more)
				fprintf(dump,
				        "# plan %d: the tiles of %d matmul%s "
				        "do not fit at %s steps, with up to "
				        "%llu bytes of other data beside %s "
				        "that %s GEMM plan%s did not count "
				        "(op %d, matmul %s: its plan counted "
				        "%llu): %s\n",
				        round, more, more == 1 ? "" : "s",
				        more == 1 ? "its" : "their",
				        (unsigned long long)most,
				        more == 1 ? "it" : "them",
				        more == 1 ? "its" : "their",
				        more == 1 ? "" : "s", at,
				        graph_tensor(g, g->ops[at].out)->name,
				        (unsigned long long)f.plan->op[at].held,
				        again);
			po.code = code;
			if (holds) {
				if (o->dump)
					fprintf(
					    dump,
					    "# plan %d's GEMM searches admit "
					    "the same candidates beside it "
					    "(%llu packed again): its program "
					    "kept\n",
					    round, (unsigned long long)packed);
				break;
			}
			r = plan_checked(g, o, &po, &p, d);
			/* no plan beside this draft's data: the draft goes to
			 * placement, or, if its code was more too, is planned
			 * beside that code and the data measured before it (the
			 * refit below may still make it fit) */
			if (r && more) {
				if (o->dump)
					fprintf(
					    dump, "# plan %d again: %s; %s\n",
					    round, d->msg,
					    beyond > held ? "planning beside "
					                    "its code alone"
					                  : "placed as it is");
				memcpy(m->beside, prev,
				       ((size_t)g->nops + 1) * sizeof *prev);
				if (beyond <= held) {
					r = IPU_OK;
					break;
				}
				r = plan_checked(g, o, &po, &p, d);
			}
			/* the same choices beside the code: the same program */
			if (!r && plan_same_choices(p, f.plan)) {
				if (o->dump)
					fprintf(dump,
					        "# the same choices: plan %d's "
					        "program kept\n",
					        round);
				plan_free(p);
				break;
			}
			if (!r)
				draft_free(&f);
		}
		if (r)
			break;
		/* every tile at every step by the memory model (the placer's
		 * bounds, place_measure), then placement's packing: tiles over
		 * make the planner give up what it may (plan_refit) and plan
		 * again as a draft; with nothing left to give up the draft is
		 * placed for the per-tile report and the compile fails with the
		 * measure's or the placement's message */
		PlaceReport mr;
		Diag md;
		int packing = 0;
		if (!place_measure(f.l, f.code_end, &mr, &md)) {
			place_report_free(&mr);
			/* the bounds hold: only the packing can fail, and only
			 * placement packs every tile (the planner packs a
			 * GEMM's fullest tile, not every op's buffers with
			 * their lifetimes) */
			placed = 1;
			r = place_buffers(f.l, f.code_end, &rep->place, d);
			if (!r || !rep->place.nover)
				break;
			mr = rep->place;
			md = *d;
			packing = 1;
		}
		/* a draft that keeps the bounds but does not pack, the first
		 * time: its matmuls on those tiles are planned again with each
		 * candidate's fullest tile packed beside the buffers the
		 * draft's tile held at their steps (lower_beside_bufs), before
		 * anything is given up */
		if (packing && !m->bufs && !o->plan) {
			m->bufs = xcalloc((size_t)g->nops + 1, sizeof *m->bufs);
			uint8_t *bad = xcalloc((size_t)f.l->tiles + 1, 1);
			for (int i = 0; i < mr.nover; i++)
				bad[mr.over[i].tile] = 1;
			memcpy(prev, m->beside,
			       ((size_t)g->nops + 1) * sizeof *prev);
			int given = lower_beside_bufs(f.l, matmul, bad, g->nops,
			                              m->bufs, m->beside);
			free(bad);
			po.beside_bufs = m->bufs;
			po.load = m->load;
			po.code = code;
			Diag bd;
			if (given && !plan_checked(g, o, &po, &p, &bd)) {
				if (!plan_same_choices(p, f.plan)) {
					if (o->dump) {
						char line[400];
						place_overflow_format(
						    &mr, &mr.over[0], line,
						    sizeof line);
						fprintf(
						    dump,
						    "# plan %d does not pack "
						    "(placement, the memory "
						    "model's bounds kept): %d "
						    "of %u tiles over (the "
						    "first, %s); %d matmul%s "
						    "planned again beside the "
						    "buffers those tiles held "
						    "at %s steps\n",
						    round, mr.nover, mr.tiles,
						    line, given,
						    given == 1 ? "" : "s",
						    given == 1 ? "its"
						               : "their");
					}
					rep->packings++;
					rep->packed_beside = given;
					rep->packing_over = mr.nover;
					rep->packing_tiles = mr.tiles;
					place_overflow_format(
					    &mr, &mr.over[0],
					    rep->packing_first,
					    sizeof rep->packing_first);
					place_report_free(&mr);
					rep->place = (PlaceReport){0};
					placed = 0;
					draft_free(&f);
					r = IPU_OK;
					continue;
				}
				plan_free(p);
			}
			/* no plan beside them, or the same: the ladder */
			po.beside_bufs = NULL;
			memcpy(m->beside, prev,
			       ((size_t)g->nops + 1) * sizeof *prev);
		}
		/* the ladder gives up what it may (refit: fit and the
		 * balance's load for the next plan), and on the same draft
		 * each matmul over at its own step is planned again within
		 * what its step measured, with the ladder's marks (own_again):
		 * the next plan has both */
		int n = o->plan ? 0 : refit(f.plan, &mr, fit, m);
		po.load = m->load;
		po.code = code;
		int own = packing || o->plan
		              ? 0
		              : own_again(g, o, &po, &f, &mr, code, m, &p);
		if (!n && !own) {
			/* the placement's own report stays in rep */
			known = 1;
			kd = md;
			worst_op(g, &mr, at_op, sizeof at_op);
			if (!packing)
				place_report_free(&mr);
			r = IPU_OK;
			break;
		}
		placed = 0;
		if (packing)
			rep->place = (PlaceReport){0};
		if (o->dump) {
			char line[400], what[96];
			place_overflow_format(&mr, &mr.over[0], line,
			                      sizeof line);
			snprintf(what, sizeof what,
			         "%s%d matmul%s over at %s own step%s planned "
			         "again within the bytes measured there",
			         n ? "; " : "", own, own == 1 ? "" : "s",
			         own == 1 ? "its" : "their",
			         own == 1 ? "" : "s");
			fprintf(
			    dump,
			    "# plan %d does not %s: %d of %u "
			    "tiles over (the first, %s); %s%s: planning "
			    "again\n",
			    round,
			    packing ? "pack (placement, the memory model's "
			              "bounds kept)"
			            : "fit by the memory model",
			    mr.nover, mr.tiles, line,
			    !n ? ""
			    : n < 0
			        ? "the weight balance starts from the bytes "
			          "measured on each tile"
			        : "matmuls give up weight copies or GEMM "
			          "plans over half a tile",
			    own ? what : "");
		}
		if (own) {
			rep->refits++;
			rep->own_refits += own;
			place_report_free(&mr);
			draft_free(&f);
			continue;
		}
		if (packing) {
			rep->packings++;
			rep->packing_over = mr.nover;
			rep->packing_tiles = mr.tiles;
			place_overflow_format(&mr, &mr.over[0],
			                      rep->packing_first,
			                      sizeof rep->packing_first);
		} else {
			rep->refits++;
		}
		place_report_free(&mr);
		po.load = m->load;
		po.code = code;
		r = plan_checked(g, o, &po, &p, d);
		if (!r)
			draft_free(&f);
	}
	free(code);
	free(matmul);
	free(prev);
	if (r) {
		draft_free(&f);
		return r;
	}
	Lowered *l = f.l;
	uint32_t used = l->tiles, code_at = f.code_at, *code_end = f.code_end;
	int32_t *save = f.save;
	Kernels *k = &f.k;
	const KernelsUsed *ku = &f.ku;
	if (!r && !placed)
		r = place_buffers(l, code_end, &rep->place, d);
	else if (!r && known) /* placed and found over by the packing */
		r = IPU_ERANGE;
	if (!r)
		r = place_verify(l, code_end, d);
	if (!r && (o->dump & COMPILE_DUMP_PLACE))
		place_print(l, code_end, dump);
	/* over by the memory model with nothing left to give up: placed
	 * for the per-tile report and the layout, failed with the measure's
	 * message, no plan more */
	if (known) {
		if (!r)
			r = IPU_ERANGE;
		if (r == IPU_ERANGE && o->plan)
			diag_set(d, IPU_ERANGE, NULL, 0, 0,
			         "compile: the plan given does not fit at "
			         "timing %s: %s%s",
			         chip->timing->spec, kd.msg, at_op);
		else if (r == IPU_ERANGE)
			diag_set(d, IPU_ERANGE, NULL, 0, 0,
			         "compile: no plan fits: %s%s", kd.msg, at_op);
	}
	if (r && rep->place.nover)
		rep->layout = layout_of(g, l, k, ku, code_at, save);
	/* code and package */
	Package *pk = NULL;
	if (!r) {
		pk = pkg_new(chip, used);
		r = build_package(pk, g, l, k, ku, code_at, code_end, save, d);
	}
	if (!r) {
		rep->predicted_cycles = lower_cycles(l);
		rep->tiles_used = used;
		for (int i = 0; i < l->nstep; i++)
			if (l->step[i].b_from || l->step[i].b_wrap) {
				rep->b_under += (uint32_t)l->step[i].nxfer;
				rep->b_hosts++;
			}
		/* what a tile needs (code + the most data live at once), not
		 * its high-water address, which counts the gap placement
		 * leaves below the interleaved region */
		for (uint32_t t = 0; t < used; t++) {
			const PlaceTile *pt = &rep->place.tile[t];
			uint64_t need =
			    plan_tile_need((TileBytes){pt->code, pt->peak});
			if (need > rep->peak_tile_bytes)
				rep->peak_tile_bytes = (uint32_t)need;
		}
		pk->total_cycles = rep->predicted_cycles;
		pkg_set_plan(pk, rep->plan);
		rep->compile_ms = 1e3 * monotonic_seconds() - t0;
		pk->compile_us = (uint64_t)(rep->compile_ms * 1e3);
		r = pkg_check(pk, d);
	}
	if (r) {
		pkg_free(pk);
		pk = NULL;
	}
	*out = pk;
	if (!r && o->keep_plan && !f.shared) {
		/* the budgets it was made with are this compile's, freed
		 * below; the choices are the plan's own */
		PlanOptions *po_kept = &f.plan->opt;
		po_kept->fit = NULL;
		po_kept->load = po_kept->code = po_kept->beside = NULL;
		po_kept->beside_bufs = NULL;
		rep->kept_plan = f.plan;
		f.plan = NULL;
	}
	draft_free(&f);
	return r;
}

/* A tensor larger than the memory of all the tiles the compiler may use
 * can never be placed: said up front, naming it, the op that makes it and
 * the tiles, rather than by a plan search or a placement of shares that no
 * tile holds (a share of 4 GiB would not even fit a buffer's 32 bits). */
static int
check_sizes(const Graph *g, const Chip *chip, uint32_t tiles, Diag *d)
{
	uint64_t room = (uint64_t)tiles * plan_tile_room(chip);
	for (int32_t id = 0; id < g->ntensors; id++) {
		const Tensor *t = graph_tensor(g, id);
		uint64_t bytes = (uint64_t)shape_elems(&t->shape) *
		                 (uint64_t)dtype_size(t->elem.dtype);
		if (bytes <= room)
			continue;
		char shape[96], elem[32], op[GRAPH_MAX_NAME + 32] = "";
		shape_format(&t->shape, shape, sizeof shape);
		elem_format(t->elem, elem, sizeof elem);
		if (t->producer >= 0)
			snprintf(op, sizeof op, "%s %s: ",
			         op_desc(g->ops[t->producer].kind)->name,
			         t->name);
		return diag_set(
		    d, IPU_ERANGE, NULL, 0, 0,
		    "compile: %stensor %s %s %s is %llu bytes, more "
		    "than the %llu bytes of memory of the %u tile%s "
		    "it may use (the %s has %u)",
		    op, t->name, elem, shape, (unsigned long long)bytes,
		    (unsigned long long)room, tiles, tiles == 1 ? "" : "s",
		    chip->name, chip->tiles);
	}
	return IPU_OK;
}

/* compile_graph with the overlapped GEMM superstep as opt says. */
static int
compile_with(const Graph *g, const CompileOptions *o, Package **out,
             CompileReport *rep, Diag *d, Plain *pl)
{
	double t0 = 1e3 * monotonic_seconds();
	CompileOptions opt = *o;
	/* Plan, lower and measure with the placer's bounds, then place
	 * (compile_once); while tiles do not fit, by the bounds or by the
	 * packing, the planner gives up what it may (plan_refit: the copies
	 * of the matmuls on them, then every GEMM plan of more than half a
	 * tile, then every copy) and the graph is planned again as a draft,
	 * its weight balance started from each tile's bytes as measured
	 * (refit); with nothing left to give up, up to BALANCE_ROUNDS plans
	 * more with only the balance started anew, while they shrink what is
	 * over. A graph that fits the first time is placed once; one that
	 * cannot fit fails once, with the last plan's per-tile report
	 * (docs/compiler.md, "Memory: what the planner knows"). */
	uint8_t *fit = xcalloc((size_t)g->nops + 1, 1);
	Measure m = {0};
	int r = compile_once(g, &opt, fit, &m, t0, out, rep, d, pl);
	rep->plans = 1 + rep->packings;
	free(fit);
	free(m.load);
	free(m.extra);
	free(m.code);
	free(m.beside);
	for (int i = 0; m.bufs && i < g->nops; i++)
		free(m.bufs[i].buf);
	free(m.bufs);
	free(m.own);
	return r;
}

/* The overlapped GEMM superstep is priced exactly only once lowered and
 * scheduled (xsched_run prices each superstep both ways and keeps the
 * cheaper), but the plan it is lowered from is chosen by the planner's
 * estimate and holds second chunk buffers: so a graph whose GEMM plans
 * have it is compiled again without it, and the program of fewer
 * predicted cycles (lower_cycles, exact against the emulator's) is kept,
 * the one without on a tie or when the compile with it fails. */
int
compile_graph(const Graph *g, const CompileOptions *o, Package **out,
              CompileReport *rep, Diag *d)
{
	double t0 = 1e3 * monotonic_seconds();
	CompileOptions opt = o ? *o : (CompileOptions){0};
	if (!opt.chip)
		opt.chip = chip_default();
	if (!opt.tiles)
		opt.tiles = opt.chip->tiles;
	/* the graph once: every plan below is of the same graph */
	int bad = graph_verify(g, d);
	if (!bad && check_sizes(g, opt.chip, opt.tiles, d))
		bad = IPU_ERANGE;
	if (bad) {
		memset(rep, 0, sizeof *rep);
		*out = NULL;
		return bad;
	}
	/* a plan given: its program, nothing chosen again */
	if (opt.plan)
		return compile_with(g, &opt, out, rep, d, NULL);
	/* both compiles' plans share the prices (a relayout's, by its
	 * layouts: the same whichever plan computes it first) */
	PlanMemo *memo = opt.memo ? NULL : plan_memo_new();
	if (memo)
		opt.memo = memo;
	/* and the exchange schedules (by a step's transfers, likewise) */
	XschedCache *xcache = opt.xcache ? NULL : xsched_cache_new(opt.chip);
	if (xcache)
		opt.xcache = xcache;
	/* without a dump to keep in pipeline order, the compile without
	 * the overlap runs beside this one (Plain) */
	Plain pl = {.g = g, .opt = opt};
	pl.opt.no_gemm_overlap = 1;
	int r = compile_with(g, &opt, out, rep, d,
	                     opt.no_gemm_overlap || opt.dump ? NULL : &pl);
	if (pl.started)
		pthread_join(pl.th, NULL);
	if (opt.no_gemm_overlap ||
	    (!r && !rep->ovl_beside && !rep->ovl_no_room && !rep->ovl_dearer)) {
		/* no GEMM plan had it: the same as without */
		if (pl.started) {
			compile_report_free(&pl.rep);
			pkg_free(pl.out);
		}
		plan_memo_free(memo);
		xsched_cache_free(xcache);
		return r;
	}
	FILE *dump = opt.dump_to ? opt.dump_to : stdout;
	CompileReport with = *rep;
	Package *pw = *out;
	Diag dw = *d;
	int rw = r;
	opt.no_gemm_overlap = 1;
	if (pl.started) {
		r = pl.r;
		*out = pl.out;
		*rep = pl.rep;
		*d = pl.d;
		with.side_by_side = rep->side_by_side = 1;
	} else {
		if (opt.dump)
			fprintf(dump, "# again without the overlapped GEMM "
			              "superstep\n");
		r = compile_with(g, &opt, out, rep, d, NULL);
	}
	int keep_with =
	    !rw && (r || with.predicted_cycles < rep->predicted_cycles);
	if (keep_with) {
		uint64_t other = r ? 0 : rep->predicted_cycles;
		compile_report_free(rep);
		pkg_free(*out);
		*rep = with;
		*out = pw;
		r = IPU_OK;
		rep->overlap = COMPILE_OVERLAP_KEPT;
		rep->overlap_other_cycles = other;
	} else {
		if (!r && rw) {
			rep->overlap = COMPILE_OVERLAP_FAILED;
			memcpy(rep->overlap_why, dw.msg,
			       sizeof rep->overlap_why);
			rep->overlap_why[sizeof rep->overlap_why - 1] = 0;
		} else if (!r) {
			rep->overlap = COMPILE_OVERLAP_DEARER;
			rep->overlap_other_cycles = with.predicted_cycles;
			rep->ovl_beside = with.ovl_beside;
			rep->ovl_no_room = with.ovl_no_room;
			rep->ovl_dearer = with.ovl_dearer;
		}
		compile_report_free(&with);
		pkg_free(pw);
	}
	if (opt.dump && !r) {
		if (rep->overlap == COMPILE_OVERLAP_FAILED)
			fprintf(dump,
			        "# the overlapped GEMM superstep not kept: its "
			        "compile failed (%s)\n",
			        rep->overlap_why);
		else
			fprintf(dump,
			        "# the overlapped GEMM superstep %s: %llu "
			        "cycles predicted, %llu %s\n",
			        rep->overlap == COMPILE_OVERLAP_KEPT
			            ? "kept"
			            : "not kept, no cheaper",
			        (unsigned long long)rep->predicted_cycles,
			        (unsigned long long)rep->overlap_other_cycles,
			        rep->overlap == COMPILE_OVERLAP_KEPT
			            ? "without it"
			            : "with it");
	}
	plan_memo_free(memo);
	xsched_cache_free(xcache);
	rep->compile_ms = 1e3 * monotonic_seconds() - t0;
	return r;
}

void
compile_report_free(CompileReport *rep)
{
	place_report_free(&rep->place);
	pkg_free(rep->layout);
	rep->layout = NULL;
	plan_free(rep->kept_plan);
	rep->kept_plan = NULL;
}

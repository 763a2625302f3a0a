/*
 * test_graph_diff.c - the compiler's randomized differential test (issue
 * 11): seeded random graphs, compiled for a small emulated chip, run, and
 * every output element compared with the tests' interpreter (interp.c)
 * within the bound it derives for that element from the element types
 * and the kernels' documented accuracy.
 *
 * The graphs use every op of the graph format, broadcasts (a row, either
 * operand; rarely others, which the compiler refuses), casts between all
 * element types, and repeat bodies of every shape the format allows: one
 * to five ops (and closing ops that make the carry's type and shape), the
 * carry read by any op and in either operand position, in several
 * positions, shared tensors and weights of each iteration's own, a loop
 * input that is an input, a weight or made by an op, read again after the
 * loop or an output. A graph with a repeat also runs unrolled (the same
 * graph without the line): the same bits where it has no matmul (the
 * same arithmetic), both within the bounds anyway.
 *
 * A refusal (a clear compile error) is counted, not a failure; a wrong
 * value, a fault or a hang of a compiled graph is. A failing case is
 * shrunk (ops replaced by inputs, outputs and the repeat dropped, while
 * it still fails the same way) and printed with its seed, the files to
 * run it with `ipu run graph`, and the command that checks it again.
 *
 *   test_graph_diff                      the suite's cases ($IPU_DIFF_CASES,
 *                                        default 1000), seeds 1..
 *   test_graph_diff --cases N --seed S   N cases from seed S
 *   test_graph_diff --graph F --tiles T --values V
 *                                        one graph file, checked
 * docs/compiler.md "Testing the compiler" describes it.
 */
#include "support.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ipu/runtime.h>

#include "../src/compile/compile.h"
#include "../src/util/npy.h"
#include "interp.h"

/* ---- random numbers ----------------------------------------------------- */

typedef struct {
	uint64_t s;
} Rng;

static uint64_t
next(Rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t
below(Rng *r, uint32_t n)
{
	return (uint32_t)(next(r) % n);
}

static int
chance(Rng *r, double p)
{
	return (double)(next(r) >> 11) * 0x1p-53 < p;
}

static double
uniform(Rng *r)
{
	return (double)(next(r) >> 11) * 0x1p-53 * 2 - 1;
}

/* ---- generating a graph ------------------------------------------------- */

enum {
	MAX_ELEMS = 1536, /* elements of a generated tensor */
	MAX_CAND = 256,
	MAX_BODY = 12, /* ops of a loop body, closing ops included */
	MAX_SLOTS = 24,
};

/* How an op of a loop body reads an input, for iterations 1..: */
typedef enum {
	REF_SHARED, /* the same tensor (v), made before the loop */
	REF_CARRY,  /* the carry */
	REF_BODY,   /* body op v of its own iteration */
	REF_WEIGHT, /* weight slot v of its own iteration */
} RefKind;

typedef struct {
	RefKind kind;
	int32_t v;
} Ref;

typedef struct {
	int32_t id; /* the tensor (iteration 0's in a body) */
	Ref ref;
} Cand;

typedef struct {
	OpKind kind;
	OpAttrs attr;
	Ref in[GRAPH_MAX_INPUTS];
} BodyOp;

typedef struct {
	ElemType elem;
	Shape shape;
} Slot;

typedef struct {
	Graph *g;
	Rng *r;
	Cand cand[MAX_CAND];
	int ncand;
	int body; /* generating iteration 0 of a loop body */
	int32_t carry_in;
	BodyOp bop[MAX_BODY];
	int nbop;
	Slot slot[MAX_SLOTS];
	int nslot;
	int nleaf;
	int failed; /* a builder call refused what was generated */
	char why[512];
} Gen;

static int
is_wide(DType t)
{
	return t == DT_F32 || t == DT_F16;
}

static ElemType
rand_elem(Rng *r)
{
	uint32_t k = below(r, 20);
	if (k < 7)
		return (ElemType){DT_F32, 0};
	if (k < 16)
		return (ElemType){DT_F16, 0};
	return (ElemType){k < 18 ? DT_F8_F143 : DT_F8_F152,
	                  (int)below(r, 7) - 3};
}

static int64_t
rand_dim(Rng *r)
{
	static const int64_t d[] = {1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 40};
	return d[below(r, sizeof d / sizeof d[0])];
}

/* A last axis: mostly whole words and exchange atoms (multiples of 8),
 * sometimes any width. */
static int64_t
rand_cols(Rng *r)
{
	static const int64_t d[] = {8, 16, 24, 32, 40, 48, 64};
	if (chance(r, 0.2))
		return 1 + below(r, 40);
	return d[below(r, sizeof d / sizeof d[0])];
}

static Shape
rand_shape(Rng *r)
{
	static const int ranks[] = {1, 1, 2, 2, 2, 2, 2, 3, 3, 4};
	Shape s = {.rank = ranks[below(r, 10)]};
	s.dim[s.rank - 1] = rand_cols(r);
	for (int i = 0; i + 1 < s.rank; i++)
		s.dim[i] = rand_dim(r);
	for (int i = 0; shape_elems(&s) > MAX_ELEMS && i + 1 < s.rank; i++)
		s.dim[i] = 1;
	if (shape_elems(&s) > MAX_ELEMS)
		s.dim[s.rank - 1] = 32;
	return s;
}

static void
gen_fail(Gen *G, const char *what, const Diag *d)
{
	if (!G->failed)
		snprintf(G->why, sizeof G->why, "%s: %.400s", what, d->msg);
	G->failed = 1;
}

static void
add_cand(Gen *G, int32_t id, Ref ref)
{
	if (G->ncand < MAX_CAND)
		G->cand[G->ncand++] = (Cand){id, ref};
}

/* A new input or weight of this type and shape: in a body, mostly a
 * weight of each iteration's own (a slot), else shared. */
static Cand
leaf(Gen *G, ElemType e, const Shape *s)
{
	Diag d;
	char name[32];
	int weight = chance(G->r, 0.6);
	snprintf(name, sizeof name, "%s%d", weight ? "w" : "x", G->nleaf++);
	int32_t id = weight ? graph_weight(G->g, name, e, s, &d)
	                    : graph_input(G->g, name, e, s, &d);
	if (id < 0) {
		gen_fail(G, "leaf", &d);
		return (Cand){-1, {REF_SHARED, -1}};
	}
	if (G->body && weight && G->nslot < MAX_SLOTS && chance(G->r, 0.7)) {
		G->slot[G->nslot] = (Slot){e, *s};
		return (Cand){id, {REF_WEIGHT, G->nslot++}};
	}
	return (Cand){id, {REF_SHARED, id}};
}

/* A tensor's type and shape, copied: builder calls move the tensors. */
typedef struct {
	ElemType elem;
	Shape shape;
} Type;

static Type
tensor(const Gen *G, Cand c)
{
	const Tensor *t = graph_tensor(G->g, c.id);
	return (Type){t->elem, t->shape};
}

/* Pick an operand: mostly one of the last few made, so that ops chain.
 * Returns 0 if there is none. */
static int
pick(Gen *G, Cand *out)
{
	int n = G->ncand;
	if (!n)
		return 0;
	int k = chance(G->r, 0.6) ? n - 1 - (int)below(G->r, n < 3 ? n : 3)
	                          : (int)below(G->r, (uint32_t)n);
	*out = G->cand[k];
	return 1;
}

/* Emit op kind on inputs c[0..nin-1]; in a body, record it. The output
 * becomes a candidate. */
static Cand
emit(Gen *G, OpKind kind, const Cand *c, int nin, const OpAttrs *attr)
{
	Diag d;
	int32_t in[GRAPH_MAX_INPUTS] = {-1, -1, -1};
	for (int i = 0; i < nin; i++)
		in[i] = c[i].id;
	OpAttrs a = attr ? *attr : (OpAttrs){0};
	Cand out = {-1, {REF_SHARED, -1}};
	if (G->failed)
		return out;
	if (G->body && G->nbop == MAX_BODY) {
		G->failed = 1;
		snprintf(G->why, sizeof G->why, "body too long");
		return out;
	}
	out.id = graph_op(G->g, kind, in, &a, NULL, &d);
	if (out.id < 0) {
		gen_fail(G, op_desc(kind)->name, &d);
		return out;
	}
	if (G->body) {
		BodyOp *b = &G->bop[G->nbop];
		*b = (BodyOp){.kind = kind, .attr = a};
		for (int i = 0; i < nin; i++)
			b->in[i] = c[i].ref;
		out.ref = (Ref){REF_BODY, G->nbop++};
	} else {
		out.ref = (Ref){REF_SHARED, out.id};
	}
	add_cand(G, out.id, out.ref);
	return out;
}

/* x cast to `to` by the casts the compiler has (f32 <-> f16 <-> f8),
 * through f16 where it takes two; x itself if it is of that type. */
static Cand
cast_to(Gen *G, Cand x, ElemType to)
{
	if (x.id < 0 || elem_equal(tensor(G, x).elem, to))
		return x;
	ElemType from = tensor(G, x).elem;
	OpAttrs a = {.to = to};
	if (from.dtype != DT_F16 && to.dtype != DT_F16) {
		OpAttrs h = {.to = {DT_F16, 0}};
		x = emit(G, OP_CAST, &x, 1, &h);
		if (x.id < 0)
			return x;
	}
	return emit(G, OP_CAST, &x, 1, &a);
}

/* x in a type the elementwise kernels take: f8 cast to f16. */
static Cand
widen(Gen *G, Cand x)
{
	if (is_wide(tensor(G, x).elem.dtype))
		return x;
	return cast_to(G, x, (ElemType){DT_F16, 0});
}

/* matmul x b: b a new leaf, or a candidate that fits. */
static void
gen_matmul(Gen *G, Cand x, int x_second)
{
	Rng *r = G->r;
	Type tx = tensor(G, x);
	if (tx.shape.rank < 2)
		return;
	OpAttrs a = {.transpose_a = chance(r, 0.25),
	             .transpose_b = chance(r, 0.3)};
	Shape s0 = tx.shape, *s = &s0;
	int rk = s->rank;
	static const int64_t ns[] = {8, 16, 24, 32, 48, 5, 12};
	int64_t n = ns[below(r, 7)];
	ElemType eb = tx.elem;
	if (!is_wide(eb.dtype))
		eb = (ElemType){chance(r, 0.5) ? DT_F8_F143 : DT_F8_F152,
		                (int)below(r, 5) - 2};
	Cand c[2];
	if (x_second) {
		/* x is B: A is [.., m, k] with k x's rows (or its columns,
		 * transposed) */
		int64_t k = s->dim[rk - (a.transpose_b ? 1 : 2)];
		Shape sa = *s;
		int64_t m = 1 + below(r, 24);
		sa.dim[rk - 2] = a.transpose_a ? k : m;
		sa.dim[rk - 1] = a.transpose_a ? m : k;
		if (shape_elems(&sa) > MAX_ELEMS)
			return;
		c[0] = leaf(G, eb, &sa);
		c[1] = x;
	} else {
		int64_t k = s->dim[rk - (a.transpose_a ? 2 : 1)];
		Shape sb = *s;
		sb.dim[rk - 2] = a.transpose_b ? n : k;
		sb.dim[rk - 1] = a.transpose_b ? k : n;
		if (shape_elems(&sb) > MAX_ELEMS)
			return;
		c[0] = x;
		c[1] = leaf(G, eb, &sb);
		/* sometimes x times itself (a Gram matrix) */
		if (chance(r, 0.1) && s->dim[rk - 1] == s->dim[rk - 2]) {
			c[1] = x;
			a.transpose_b = 0;
		}
	}
	if (c[0].id < 0 || c[1].id < 0)
		return;
	Shape so = tensor(G, c[0]).shape;
	so.dim[rk - 1] =
	    tensor(G, c[1]).shape.dim[rk - (a.transpose_b ? 2 : 1)];
	if (shape_elems(&so) > MAX_ELEMS)
		return;
	emit(G, OP_MATMUL, c, 2, &a);
}

/* add or mul of x and an operand of the same shape (a candidate or a
 * leaf), a row broadcast down it, x itself, or (rarely) another
 * broadcast; x first or second. */
static void
gen_binary(Gen *G, OpKind kind, Cand x, int x_second)
{
	Rng *r = G->r;
	x = widen(G, x);
	if (x.id < 0)
		return;
	Type tx = tensor(G, x);
	Cand y = {-1, {REF_SHARED, -1}};
	uint32_t how = below(r, 20);
	if (how < 2) {
		y = x;
	} else if (how < 8) {
		for (int i = G->ncand - 1; i >= 0 && y.id < 0; i--) {
			Type t = tensor(G, G->cand[i]);
			if (G->cand[i].id != x.id &&
			    elem_equal(t.elem, tx.elem) &&
			    shape_equal(&t.shape, &tx.shape) && chance(r, 0.5))
				y = G->cand[i];
		}
		if (y.id < 0)
			y = leaf(G, tx.elem, &tx.shape);
	} else if (how < 11) {
		y = leaf(G, tx.elem, &tx.shape);
	} else if (how < 19) {
		Shape row = {.rank = 1 + (tx.shape.rank > 1 && chance(r, 0.3))};
		row.dim[row.rank - 1] = tx.shape.dim[tx.shape.rank - 1];
		if (row.rank == 2)
			row.dim[0] = 1;
		y = leaf(G, tx.elem, &row);
	} else {
		/* a column [.., m, 1] or a scalar [1]: refused so far */
		Shape col = tx.shape;
		col.dim[col.rank - 1] = 1;
		if (chance(r, 0.5))
			col = (Shape){.rank = 1, .dim = {1}};
		y = leaf(G, tx.elem, &col);
	}
	if (y.id < 0)
		return;
	Cand c[2] = {x, y};
	if (x_second) {
		c[0] = y;
		c[1] = x;
	}
	emit(G, kind, c, 2, NULL);
}

/* A new shape of the same elements: the last axis kept (a view) or not,
 * the others merged or split. */
static int
reshape_to(Rng *r, const Shape *s, Shape *out)
{
	int64_t n = shape_elems(s), last = s->dim[s->rank - 1];
	if (chance(r, 0.5)) {
		int64_t divs[64];
		int nd = 0;
		for (int64_t d = 1; d <= n && nd < 64; d++)
			if (n % d == 0 && (d % 8 == 0 || chance(r, 0.3)))
				divs[nd++] = d;
		if (nd)
			last = divs[below(r, (uint32_t)nd)];
	}
	int64_t rest = n / last;
	*out = (Shape){.rank = 1};
	while (rest > 1 && out->rank < 4 && chance(r, 0.6)) {
		int64_t f = 2;
		while (f < rest && (rest % f || chance(r, 0.5)))
			f++;
		if (rest % f)
			f = rest;
		out->dim[out->rank - 1] = f;
		rest /= f;
		out->rank++;
	}
	out->dim[out->rank - 1] = rest;
	if (chance(r, 0.2) && out->rank < 5) { /* a leading 1 */
		memmove(&out->dim[1], &out->dim[0],
		        (size_t)out->rank * sizeof out->dim[0]);
		out->dim[0] = 1;
		out->rank++;
	}
	out->dim[out->rank] = last;
	out->rank++;
	return !shape_equal(out, s) || chance(r, 0.2);
}

/* One random op reading x (in either operand position where it has
 * two). */
static void
gen_op_on(Gen *G, Cand x)
{
	Rng *r = G->r;
	Type tx = tensor(G, x);
	OpAttrs a = {0};
	switch (below(r, 16)) {
	case 0:
	case 1:
	case 2:
		gen_matmul(G, x, chance(r, 0.25));
		break;
	case 3:
	case 4:
		gen_binary(G, OP_ADD, x, chance(r, 0.5));
		break;
	case 5:
		gen_binary(G, chance(r, 0.5) ? OP_MUL : OP_MAX, x,
		           chance(r, 0.5));
		break;
	case 6:
		/* mostly a cast the compiler has (through f16 if need be),
		 * sometimes any (an identity, f32 to f8: refused so far) */
		a.to = rand_elem(r);
		if (chance(r, 0.85))
			cast_to(G, x, a.to);
		else
			emit(G, OP_CAST, &x, 1, &a);
		break;
	case 7:
		if (reshape_to(r, &tx.shape, &a.shape))
			emit(G, OP_RESHAPE, &x, 1, &a);
		break;
	case 8: {
		int rk = tx.shape.rank;
		if (rk < 2)
			break;
		a.perm.rank = rk;
		for (int i = 0; i < rk; i++)
			a.perm.dim[i] = i;
		for (int i = rk - 1; i > 0; i--) {
			int j = (int)below(r, (uint32_t)i + 1);
			int64_t t = a.perm.dim[i];
			a.perm.dim[i] = a.perm.dim[j];
			a.perm.dim[j] = t;
		}
		emit(G, OP_TRANSPOSE, &x, 1, &a);
		break;
	}
	case 9: {
		int rk = tx.shape.rank;
		a.begin.rank = a.end.rank = rk;
		for (int i = 0; i < rk; i++) {
			int64_t d = tx.shape.dim[i];
			int whole =
			    i == rk - 1 ? chance(r, 0.9) : chance(r, 0.3);
			int64_t b = whole ? 0 : below(r, (uint32_t)d);
			int64_t e =
			    whole ? d : b + 1 + below(r, (uint32_t)(d - b));
			a.begin.dim[i] = b;
			a.end.dim[i] = e;
		}
		emit(G, OP_SLICE, &x, 1, &a);
		break;
	}
	case 10:
		x = widen(G, x);
		if (x.id >= 0)
			emit(G, chance(r, 0.7) ? OP_GELU : OP_RELU, &x, 1,
			     NULL);
		break;
	case 14: { /* joined with itself or a leaf along any axis */
		int rk = tx.shape.rank;
		/* the last axis (refused by the compiler) now and then */
		a.axis = (int)below(
		    r, (uint32_t)(rk > 1 && chance(r, 0.85) ? rk - 1 : rk));
		Shape s = tx.shape;
		s.dim[a.axis] = 1 + below(r, 4);
		Cand c[2] = {x, chance(r, 0.2) ? x : leaf(G, tx.elem, &s)};
		if (chance(r, 0.5)) {
			Cand t = c[0];
			c[0] = c[1];
			c[1] = t;
		}
		if (c[0].id >= 0 && c[1].id >= 0)
			emit(G, OP_CONCAT, c, 2, &a);
		break;
	}
	case 15: { /* rows of x's 2-D view picked by ids: an input named
		    "id<rows>_<k>", whose values are integers below rows */
		int rk = tx.shape.rank;
		int64_t rows = shape_elems(&tx.shape) / tx.shape.dim[rk - 1];
		Cand c[2] = {x, {-1, {REF_SHARED, -1}}};
		if (rk != 2) {
			a.shape = (Shape){2, {rows, tx.shape.dim[rk - 1]}};
			c[0] = emit(G, OP_RESHAPE, &x, 1, &a);
		}
		char name[32];
		snprintf(name, sizeof name, "id%lld_%d", (long long)rows,
		         G->nleaf++);
		Diag d;
		c[1].id = graph_input(G->g, name, (ElemType){DT_F32, 0},
		                      &(Shape){1, {1 + below(r, 40)}}, &d);
		c[1].ref.v = c[1].id;
		if (c[0].id >= 0 && c[1].id >= 0)
			emit(G, OP_GATHER, c, 2, NULL);
		break;
	}
	case 11:
	case 12: {
		x = widen(G, x);
		if (x.id < 0)
			break;
		tx = tensor(G, x);
		Shape row = {.rank = 1,
		             .dim = {tx.shape.dim[tx.shape.rank - 1]}};
		Cand c[3] = {x, leaf(G, tx.elem, &row), leaf(G, tx.elem, &row)};
		static const double eps[] = {1e-5, 1e-6, 1e-3, 0};
		a.eps = eps[below(r, 4)];
		if (chance(r, 0.25)) {
			/* a norm: runs only in f16, read by its one cast
			 * to f8 (a second reader later is refused) */
			x = cast_to(G, x, (ElemType){DT_F16, 0});
			x = x.id >= 0 ? emit(G, OP_NORM, &x, 1, &a) : x;
			if (x.id >= 0)
				cast_to(G, x,
				        (ElemType){chance(r, 0.5) ? DT_F8_F143
				                                  : DT_F8_F152,
				                   (int)below(r, 5) - 2});
		} else if (c[1].id >= 0 && c[2].id >= 0)
			emit(G, OP_LAYERNORM, c, 3, &a);
		break;
	}
	default: {
		x = widen(G, x);
		static const double sc[] = {1, 0.5, 0.125, 2};
		a.scale = sc[below(r, 4)];
		if (x.id >= 0)
			emit(G, OP_SOFTMAX, &x, 1, &a);
		break;
	}
	}
}

static void
gen_op(Gen *G)
{
	Cand x;
	if (pick(G, &x))
		gen_op_on(G, x);
}

static Cand
body_out(const Gen *G, int j)
{
	for (int i = 0; i < G->ncand; i++)
		if (G->cand[i].ref.kind == REF_BODY && G->cand[i].ref.v == j)
			return G->cand[i];
	return (Cand){-1, {REF_SHARED, -1}};
}

/* The body's op that makes the carry's next value: one of its outputs of
 * the carry's type and shape, or closing ops that make one from the
 * last output (a reshape and a cast) or from the carry (times or plus a
 * weight, in f16 for an f8 carry). Returns its body index, or -1. */
static int
close_body(Gen *G)
{
	Type c = tensor(G, (Cand){G->carry_in, {REF_CARRY, 0}});
	int match[MAX_BODY], n = 0;
	for (int j = 0; j < G->nbop; j++) {
		Type t = tensor(G, body_out(G, j));
		if (elem_equal(t.elem, c.elem) &&
		    shape_equal(&t.shape, &c.shape))
			match[n++] = j;
	}
	if (n && chance(G->r, 0.8))
		return match[n - 1 - (int)below(G->r, (uint32_t)n)];
	Cand last =
	    G->nbop ? body_out(G, G->nbop - 1) : (Cand){-1, {REF_SHARED, -1}};
	OpAttrs a = {0};
	Type tl = last.id >= 0 ? tensor(G, last) : c;
	if (last.id >= 0 && shape_elems(&tl.shape) == shape_elems(&c.shape) &&
	    chance(G->r, 0.7)) {
		if (!shape_equal(&tl.shape, &c.shape)) {
			a.shape = c.shape;
			last = emit(G, OP_RESHAPE, &last, 1, &a);
		}
		last = cast_to(G, last, c.elem);
	} else {
		Cand x = {G->carry_in, {REF_CARRY, 0}};
		x = widen(G, x);
		if (x.id < 0)
			return -1;
		Cand w = leaf(G, tensor(G, x).elem, &c.shape), k[2] = {x, w};
		if (chance(G->r, 0.5)) {
			k[0] = w;
			k[1] = x;
		}
		last = emit(G, chance(G->r, 0.5) ? OP_ADD : OP_MUL, k, 2, NULL);
		last = cast_to(G, last, c.elem);
	}
	return last.id < 0 ? -1 : last.ref.v;
}

/* A loop: the body generated as iteration 0 from the carry (a candidate),
 * then iterations 1..count-1 built from its record. Returns last_out, or
 * -1. */
static int32_t
gen_loop(Gen *G, Cand carry)
{
	Rng *r = G->r;
	Graph *g = G->g;
	Diag d;
	int32_t first = g->nops;
	Cand saved[MAX_CAND];
	int nsaved = G->ncand;
	memcpy(saved, G->cand, sizeof saved);
	/* the body's candidates: the carry, and what was made before the
	 * loop but the carry's own tensor (which iteration 1 reads as the
	 * carry) */
	G->ncand = 0;
	for (int i = 0; i < nsaved; i++)
		if (saved[i].id != carry.id)
			add_cand(G, saved[i].id, saved[i].ref);
	Cand c = {carry.id, {REF_CARRY, 0}};
	add_cand(G, c.id, c.ref);
	G->body = 1;
	G->carry_in = carry.id;
	G->nbop = G->nslot = 0;
	/* the first op reads the carry (gen_op_on may find no op that fits
	 * it; the closing ops always do) */
	for (int k = 0; k < 8 && !G->nbop && !G->failed; k++)
		gen_op_on(G, c);
	int len = 1 + (int)below(r, 4);
	for (int k = 1; k < len && G->nbop < MAX_BODY - 4; k++)
		gen_op(G);
	int rel = !G->failed ? close_body(G) : -1;
	G->body = 0;
	G->ncand = nsaved;
	memcpy(G->cand, saved, sizeof saved);
	if (rel < 0 || G->failed)
		return -1;
	int count = 2 + (int)below(r, 3);
	int32_t prev = g->ops[first + rel].out, slotw[MAX_SLOTS];
	for (int k = 1; k < count && !G->failed; k++) {
		for (int s = 0; s < G->nslot; s++) {
			char name[32];
			snprintf(name, sizeof name, "w%d", G->nleaf++);
			slotw[s] = graph_weight(g, name, G->slot[s].elem,
			                        &G->slot[s].shape, &d);
			if (slotw[s] < 0)
				gen_fail(G, "slot", &d);
		}
		int32_t mine[MAX_BODY];
		for (int j = 0; j < G->nbop && !G->failed; j++) {
			const BodyOp *b = &G->bop[j];
			int32_t in[GRAPH_MAX_INPUTS] = {-1, -1, -1};
			for (int i = 0; i < op_desc(b->kind)->nin; i++) {
				Ref f = b->in[i];
				in[i] = f.kind == REF_SHARED  ? f.v
				        : f.kind == REF_CARRY ? prev
				        : f.kind == REF_BODY  ? mine[f.v]
				                              : slotw[f.v];
			}
			mine[j] = graph_op(g, b->kind, in, &b->attr, NULL, &d);
			if (mine[j] < 0)
				gen_fail(G, "iteration", &d);
		}
		prev = G->failed ? -1 : mine[rel];
	}
	if (G->failed)
		return -1;
	if (graph_set_repeat(g, first, G->nbop, count, 1, &d)) {
		char *text = graph_print_str(g);
		gen_fail(G, "graph_set_repeat refused a generated loop", &d);
		fprintf(stderr, "%s(repeat %d from op %d, %d ops)\n", text,
		        count, first, G->nbop);

		free(text);
		return -1;
	}
	return prev;
}

/* A random graph of case `seed`, on *tiles tiles; NULL (G->why) if the
 * builder refused what was generated (a bug of this generator or of the
 * graph's checks: the test fails). */
static Graph *
gen_graph(uint64_t seed, uint32_t *tiles, char *why, size_t why_len)
{
	Rng r = {seed * 0x2545f4914f6cdd1dull + 1};
	static const uint32_t tile_counts[] = {4, 6, 8, 12, 16};
	*tiles = tile_counts[below(&r, 5)];
	Gen *G = xcalloc(1, sizeof *G);
	G->g = graph_new();
	G->r = &r;
	int nin = 1 + (int)below(&r, 2);
	for (int i = 0; i < nin; i++) {
		Shape s = rand_shape(&r);
		Cand c = leaf(G, rand_elem(&r), &s);
		if (c.id >= 0)
			add_cand(G, c.id, c.ref);
	}
	int pre = (int)below(&r, 4) + (chance(&r, 0.3) ? 0 : 1);
	for (int i = 0; i < pre && !G->failed; i++)
		gen_op(G);
	int32_t carry_in = -1, last_out = -1;
	if (chance(&r, 0.65) && !G->failed) {
		Cand c;
		pick(G, &c);
		carry_in = c.id;
		last_out = gen_loop(G, c);
		if (last_out >= 0) {
			add_cand(G, last_out, (Ref){REF_SHARED, last_out});
			/* the loop's input read again after it */
			const Tensor *tc = graph_tensor(G->g, carry_in);
			if (chance(&r, 0.4) && is_wide(tc->elem.dtype)) {
				Cand k[2] = {
				    {last_out, {REF_SHARED, last_out}},
				    {carry_in, {REF_SHARED, carry_in}}};
				emit(G, chance(&r, 0.5) ? OP_ADD : OP_MUL, k, 2,
				     NULL);
			}
		}
	}
	int post = (int)below(&r, 3);
	for (int i = 0; i < post && !G->failed; i++)
		gen_op(G);
	/* outputs: every tensor made outside the loop that nothing reads,
	 * last_out if nothing reads it, sometimes others (the loop's input
	 * among them) */
	Graph *g = G->g;
	RepeatMap rm;
	Diag d;
	int nout = 0;
	if (!G->failed && !graph_repeat_map(g, &rm, &d)) {
		int *read = xcalloc((size_t)g->ntensors, sizeof *read);
		for (int i = 0; i < g->nops; i++)
			for (int k = 0; k < op_desc(g->ops[i].kind)->nin; k++)
				read[g->ops[i].in[k]]++;
		for (int32_t id = 0; id < g->ntensors; id++) {
			const Tensor *t = graph_tensor(g, id);
			int p = t->producer;
			int in_loop = rm.count && p >= rm.first &&
			              p < rm.first + rm.len * rm.count;
			if (p < 0 || (in_loop && id != rm.last_out))
				continue;
			if (!read[id] ||
			    chance(&r, id == carry_in ? 0.5 : 0.15))
				nout += !graph_mark_output(g, id, &d);
		}
		free(read);
		repeat_map_free(&rm);
	}
	if (!G->failed && !nout)
		snprintf(G->why, sizeof G->why, "no output");
	Graph *out = !G->failed && nout ? g : NULL;
	if (!out) {
		snprintf(why, why_len, "%s", G->why);
		graph_free(g);
	}
	free(G);
	return out;
}

/* ---- running a graph ---------------------------------------------------- */

typedef enum {
	CASE_PASS,
	CASE_REFUSED, /* the compiler refused it, with a message */
	CASE_SKIPPED, /* values out of the range the bounds assume */
	CASE_FAIL_VALUE,
	CASE_FAIL_RUN,
	CASE_FAIL_LOOP, /* loop and unrolled differ where they may not */
} CaseStatus;

typedef struct {
	CaseStatus status;
	char msg[1024];
	uint64_t checked, unchecked; /* output elements */
} CaseResult;

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/* The values of input or weight t for value seed vseed: uniform in
 * [-1, 1] (f8: [-4, 4] x 2^scale), rounded to its type, or a gather's
 * ids (case 15 of gen_op_on); by name, so that shrinking the graph keeps
 * every other tensor's values. */
static long double *
leaf_values(const Tensor *t, uint64_t vseed)
{
	Rng r = {vseed ^ name_hash(t->name)};
	size_t n = (size_t)shape_elems(&t->shape);
	long double *v = xcalloc(n, sizeof *v);
	long long rows;
	if (sscanf(t->name, "id%lld_", &rows) == 1) { /* gather ids */
		for (size_t e = 0; e < n; e++)
			v[e] = below(&r, (uint32_t)rows);
		return v;
	}
	double f = is_wide(t->elem.dtype) ? 1 : 4 * ldexp(1, t->elem.scale);
	for (size_t e = 0; e < n; e++)
		v[e] = interp_round(t->elem, uniform(&r) * f);
	return v;
}

/* The interpreter's values of g on the inputs' and weights' values of
 * seed vseed. */
static void
interpret(const Graph *g, uint64_t vseed, Interp *in)
{
	interp_init(in, g);
	for (int32_t id = 0; id < g->ntensors; id++)
		if (g->tensors[id].producer < 0)
			in->val[id] = leaf_values(&g->tensors[id], vseed);
	interp_run(g, in);
}

/* Largest magnitude the bounds and kernels are exercised at without
 * overflow concerns (f16's largest is 65504). */
static int
in_range(const Graph *g, const Interp *in)
{
	for (int32_t id = 0; id < g->ntensors; id++) {
		const Tensor *t = graph_tensor(g, id);
		if (!is_wide(t->elem.dtype))
			continue;
		size_t n = (size_t)shape_elems(&t->shape);
		for (size_t e = 0; e < n; e++)
			if (!(fabsl(in->val[id][e]) <= 4096))
				return 0;
	}
	return 1;
}

/* Compile g for `tiles` tiles, run it on the values, check every output
 * against the interpreter; *outs (if outs) every output's bits, in
 * tensor order. */
static void
run_once(const Graph *g, uint32_t tiles, const Interp *in, CaseResult *res,
         uint8_t **outs, size_t *nouts)
{
	CompileOptions o = {.chip = chip_default(), .tiles = tiles};
	Package *pk = NULL;
	CompileReport rep;
	Diag d;
	if (compile_graph(g, &o, &pk, &rep, &d)) {
		diag_format(&d, res->msg, sizeof res->msg);
		res->status = CASE_REFUSED;
		compile_report_free(&rep);
		return;
	}
	uint8_t *bytes;
	size_t len;
	if (pkg_write(pk, &bytes, &len, &d))
		fail_msg("pkg_write: %s", d.msg);
	char name[64];
	snprintf(name, sizeof name, "sim:c600:tiles=%u:threads=1", tiles);
	ipu_error err;
	ipu_device *dev = ipu_open(name, &err);
	if (!dev || ipu_load_package(dev, bytes, len, &err))
		fail_msg("load: %s", err.msg);
	for (int32_t id = 0; id < g->ntensors; id++) {
		const Tensor *t = graph_tensor(g, id);
		ipu_tensor_desc td;
		if (t->producer >= 0 ||
		    ipu_tensor_info(dev, t->name, &td, &err))
			continue; /* read by no op: not in the package */
		size_t n = (size_t)shape_elems(&t->shape),
		       es = (size_t)dtype_size(t->elem.dtype);
		uint8_t *bits = xcalloc(n, es);
		for (size_t e = 0; e < n; e++)
			interp_to_bits(t->elem, in->val[id][e], bits + e * es);
		if (ipu_write_tensor(dev, t->name, bits, n * es, &err) &&
		    res->status == CASE_PASS) {
			res->status = CASE_FAIL_RUN;
			snprintf(res->msg, sizeof res->msg, "write %s: %s",
			         t->name, err.msg);
		}
		free(bits);
	}
	uint64_t limit = 20 * rep.predicted_cycles + 1000000;
	if (res->status == CASE_PASS && ipu_run(dev, limit, &err)) {
		res->status = CASE_FAIL_RUN;
		snprintf(res->msg, sizeof res->msg, "run: %s", err.msg);
	}
	for (int32_t id = 0; id < g->ntensors && res->status == CASE_PASS;
	     id++) {
		const Tensor *t = graph_tensor(g, id);
		if (t->role != ROLE_OUTPUT)
			continue;
		size_t n = (size_t)shape_elems(&t->shape),
		       es = (size_t)dtype_size(t->elem.dtype);
		uint8_t *bits = xcalloc(n, es);
		if (ipu_read_tensor(dev, t->name, bits, n * es, &err)) {
			res->status = CASE_FAIL_RUN;
			snprintf(res->msg, sizeof res->msg, "read %s: %s",
			         t->name, err.msg);
		}
		for (size_t e = 0; e < n && res->status == CASE_PASS; e++) {
			long double got =
			    interp_from_bits(t->elem, bits + e * es);
			long double want = in->val[id][e];
			double bound = in->err[id][e];
			if (isinf(bound)) {
				res->unchecked++;
				continue;
			}
			res->checked++;
			if (!(fabsl(got - want) <= bound)) {
				res->status = CASE_FAIL_VALUE;
				snprintf(res->msg, sizeof res->msg,
				         "%s[%zu] = %.9Lg, the interpreter's "
				         "%.9Lg, more than the bound %.3g "
				         "apart",
				         t->name, e, got, want, bound);
			}
		}
		if (outs) {
			*outs = xrealloc(*outs, *nouts + n * es);
			memcpy(*outs + *nouts, bits, n * es);
			*nouts += n * es;
		}
		free(bits);
	}
	ipu_close(dev);
	free(bytes);
	pkg_free(pk);
	compile_report_free(&rep);
}

static int
has_matmul(const Graph *g)
{
	for (int i = 0; i < g->nops; i++)
		if (g->ops[i].kind == OP_MATMUL)
			return 1;
	return 0;
}

/* Run graph g (the text form's parse) on values of seed vseed; a graph
 * with a repeat runs unrolled too. */
static void
run_case(Graph *g, uint32_t tiles, uint64_t vseed, CaseResult *res)
{
	memset(res, 0, sizeof *res);
	Interp in;
	interpret(g, vseed, &in);
	if (!in_range(g, &in)) {
		res->status = CASE_SKIPPED;
		interp_free(&in, g);
		return;
	}
	uint8_t *outs[2] = {NULL, NULL};
	size_t nouts[2] = {0, 0};
	run_once(g, tiles, &in, res, &outs[0], &nouts[0]);
	GraphRepeat rp = g->repeat;
	if (res->status == CASE_PASS && rp.count) {
		Diag d;
		graph_set_repeat(g, 0, 0, 0, 1, &d); /* unrolled */
		run_once(g, tiles, &in, res, &outs[1], &nouts[1]);
		g->repeat = rp;
		if (res->status == CASE_REFUSED)
			snprintf(res->msg + strlen(res->msg),
			         sizeof res->msg - strlen(res->msg),
			         " (unrolled; the loop compiled)");
		if (res->status == CASE_PASS && !has_matmul(g) &&
		    (nouts[0] != nouts[1] ||
		     memcmp(outs[0], outs[1], nouts[0]))) {
			res->status = CASE_FAIL_LOOP;
			snprintf(res->msg, sizeof res->msg,
			         "the loop's outputs differ from the unrolled "
			         "graph's (the same arithmetic: they must be "
			         "the same bits)");
		}
	}
	free(outs[0]);
	free(outs[1]);
	interp_free(&in, g);
}

static int
failed(CaseStatus s)
{
	return s >= CASE_FAIL_VALUE;
}

/* Parse and run a text: -1 if it does not parse. */
static int
run_text(const char *text, uint32_t tiles, uint64_t vseed, CaseResult *res)
{
	Graph *g;
	Diag errs[GRAPH_MAX_ERRORS];
	int nerr;
	if (graph_parse(text, strlen(text), "case.graph", &g, errs, &nerr))
		return -1;
	run_case(g, tiles, vseed, res);
	graph_free(g);
	return 0;
}

/* ---- shrinking ---------------------------------------------------------- */

/* An edit of a graph's text form, line by line (graph_print writes one
 * line per tensor, in id order, then the outputs, then the repeat). */
typedef struct {
	int8_t *as;      /* by tensor: 0 keep, 1 drop, 2 an input, 3 a weight */
	uint8_t *no_out; /* by tensor: drop its output line */
	int repeat;      /* 0 drop the line, 1 keep, 2 rewrite as below */
	int rcount;
	int32_t rfirst, rlast; /* ops' output tensors */
	int32_t from, to;      /* rename tensor `from` to `to` (-1: none) */
} Edit;

/* Append line to *buf with every whole token `from` replaced by `to`. */
static void
put_renamed(char **buf, size_t *len, const char *line, size_t n,
            const char *from, const char *to)
{
	size_t fl = from ? strlen(from) : 0;
	for (size_t i = 0; i < n;) {
		int starts = i == 0 || line[i - 1] == ' ';
		if (from && starts && i + fl <= n &&
		    !strncmp(line + i, from, fl) &&
		    (i + fl == n || line[i + fl] == ' ')) {
			size_t tl = strlen(to);
			*buf = xrealloc(*buf, *len + tl + 1);
			memcpy(*buf + *len, to, tl);
			*len += tl;
			i += fl;
			continue;
		}
		*buf = xrealloc(*buf, *len + 2);
		(*buf)[(*len)++] = line[i++];
	}
	*buf = xrealloc(*buf, *len + 2);
	(*buf)[(*len)++] = '\n';
	(*buf)[*len] = 0;
}

static char *
edit_text(const Graph *g, const Edit *e)
{
	char *text = graph_print_str(g), *out = xcalloc(1, 1);
	size_t len = 0;
	const char *from = e->from >= 0 ? g->tensors[e->from].name : NULL,
	           *to = e->to >= 0 ? g->tensors[e->to].name : NULL;
	const char *p = text;
	for (int32_t id = 0; *p; id++) {
		const char *nl = strchr(p, '\n');
		size_t n = (size_t)(nl - p);
		char line[512];
		const Tensor *t = id < g->ntensors ? &g->tensors[id] : NULL;
		if (t && e->as[id] == 1) {
			/* dropped */
		} else if (t && e->as[id] >= 2) {
			char el[32], sh[160];
			elem_format(t->elem, el, sizeof el);
			shape_format(&t->shape, sh, sizeof sh);
			int k = snprintf(line, sizeof line, "%s %s %s %s",
			                 e->as[id] == 2 ? "input" : "weight",
			                 t->name, el, sh);
			put_renamed(&out, &len, line, (size_t)k, NULL, NULL);
		} else if (t) {
			put_renamed(&out, &len, p, n, from, to);
		} else if (!strncmp(p, "output ", 7)) {
			char name[GRAPH_MAX_NAME + 1];
			snprintf(name, sizeof name, "%.*s", (int)(n - 7),
			         p + 7);
			int32_t o = graph_find(g, name);
			if (o >= 0 && !e->no_out[o] && !e->as[o])
				put_renamed(&out, &len, p, n, from, to);
		} else if (!strncmp(p, "repeat ", 7) && e->repeat) {
			if (e->repeat == 1) {
				put_renamed(&out, &len, p, n, NULL, NULL);
			} else {
				int k = snprintf(line, sizeof line,
				                 "repeat %d %s %s", e->rcount,
				                 g->tensors[e->rfirst].name,
				                 g->tensors[e->rlast].name);
				put_renamed(&out, &len, line, (size_t)k, NULL,
				            NULL);
			}
		}
		p = nl + 1;
	}
	free(text);
	return out;
}

enum { SHRINK_MAX_RUNS = 400 };

/* Candidate c of a shrinking round on g into e: 1 made, 0 not
 * applicable, -1 past the last. In order: drop the inputs and weights no
 * op reads, then also the ops whose outputs nothing reads (none of the
 * loop's), drop the repeat line, drop the loop's last iteration, replace
 * an op by an input (later ops first; a body op by a weight of each
 * iteration's own), drop an output. */
static int
candidate(const Graph *g, const RepeatMap *rm, const int *read, int c, Edit *e)
{
	int32_t end = rm->first + rm->len * rm->count;
	if (c <= 1) {
		int any = 0;
		for (int32_t id = 0; id < g->ntensors; id++) {
			const Tensor *t = &g->tensors[id];
			int p = t->producer;
			if (read[id] || t->role == ROLE_OUTPUT ||
			    (c == 0 && p >= 0) ||
			    (rm->count && p >= rm->first && p < end))
				continue;
			e->as[id] = 1;
			any = 1;
		}
		return any;
	}
	if (c == 2) {
		e->repeat = 0;
		return rm->count > 0;
	}
	if (c == 3) {
		if (rm->count <= 2)
			return 0;
		int32_t last = rm->first + rm->len * (rm->count - 1);
		for (int32_t o = last; o < end; o++)
			e->as[g->ops[o].out] = 1;
		int32_t rel = g->tensors[rm->carry_out].producer - rm->first;
		e->from = rm->last_out;
		e->to = g->ops[last - rm->len + rel].out;
		e->repeat = 2;
		e->rcount = rm->count - 1;
		e->rfirst = g->ops[rm->first].out;
		e->rlast = g->ops[rm->first + rm->len - 1].out;
		return 1;
	}
	c -= 4;
	if (c < g->nops) {
		int32_t o = g->nops - 1 - c;
		if (!rm->count || o < rm->first || o >= end) {
			e->as[g->ops[o].out] = 2;
			return 1;
		}
		int32_t j = o - rm->first;
		if (j >= rm->len || rm->len == 1 ||
		    g->ops[o].out == rm->carry_out)
			return 0;
		for (int32_t k = 0; k < rm->count; k++)
			e->as[g->ops[rm->first + k * rm->len + j].out] = 3;
		e->repeat = 2;
		e->rcount = rm->count;
		e->rfirst = g->ops[rm->first + (j == 0)].out;
		e->rlast =
		    g->ops[rm->first + rm->len - 1 - (j == rm->len - 1)].out;
		return 1;
	}
	c -= g->nops;
	if (c < g->ntensors) {
		int nout = 0;
		for (int32_t id = 0; id < g->ntensors; id++)
			nout += g->tensors[id].role == ROLE_OUTPUT;
		if (g->tensors[c].role != ROLE_OUTPUT || nout < 2)
			return 0;
		e->no_out[c] = 1;
		return 1;
	}
	return -1;
}

/* The smallest text reached by edits that keep the failure `kind`. */
static char *
shrink(const char *text, uint32_t tiles, uint64_t vseed, CaseStatus kind)
{
	char *cur = xstrdup(text);
	int runs = 0, progress = 1;
	while (progress && runs < SHRINK_MAX_RUNS) {
		progress = 0;
		Graph *g;
		Diag errs[GRAPH_MAX_ERRORS], d;
		int nerr;
		if (graph_parse(cur, strlen(cur), "case.graph", &g, errs,
		                &nerr))
			break;
		RepeatMap rm;
		if (graph_repeat_map(g, &rm, &d)) {
			graph_free(g);
			break;
		}
		int32_t n = g->ntensors;
		int *read = xcalloc((size_t)n, sizeof *read);
		for (int i = 0; i < g->nops; i++)
			for (int k = 0; k < op_desc(g->ops[i].kind)->nin; k++)
				read[g->ops[i].in[k]]++;
		Edit e = {.as = xcalloc((size_t)n, 1),
		          .no_out = xcalloc((size_t)n, 1)};
		for (int c = 0; !progress && runs < SHRINK_MAX_RUNS; c++) {
			memset(e.as, 0, (size_t)n);
			memset(e.no_out, 0, (size_t)n);
			e.repeat = 1;
			e.from = e.to = -1;
			int made = candidate(g, &rm, read, c, &e);
			if (made < 0)
				break;
			if (!made)
				continue;
			char *cand = edit_text(g, &e);
			Graph *h;
			if (!graph_parse(cand, strlen(cand), "case.graph", &h,
			                 errs, &nerr)) {
				CaseResult res;
				run_case(h, tiles, vseed, &res);
				runs++;
				if (res.status == kind) {
					free(cur);
					cur = graph_print_str(h);
					progress = 1;
				}
				graph_free(h);
			}
			free(cand);
		}
		free(e.as);
		free(e.no_out);
		free(read);
		repeat_map_free(&rm);
		graph_free(g);
	}
	return cur;
}

/* ---- reporting ---------------------------------------------------------- */

/* The values of tensor id as float32 .npy (exact for every element type)
 * at dir/NAME.SUFFIX. */
static void
save_npy(const char *dir, const Tensor *t, const long double *v,
         const char *suffix)
{
	size_t n = (size_t)shape_elems(&t->shape);
	float *f = xcalloc(n, sizeof *f);
	for (size_t e = 0; e < n; e++)
		f[e] = (float)v[e];
	NpyArray a = {.dtype = NPY_F32, .rank = t->shape.rank, .data = f};
	for (int i = 0; i < t->shape.rank; i++)
		a.shape[i] = (uint64_t)t->shape.dim[i];
	char path[512];
	Diag d;
	snprintf(path, sizeof path, "%s/%s%s", dir, t->name, suffix);
	if (npy_write(path, &a, 0, &d))
		print_message("(could not write %s: %s)\n", path, d.msg);
	free(f);
}

/* Print a failure's reproducer: the seed, the shrunk graph, and files to
 * run it with `ipu run graph` (the inputs' values, the interpreter's
 * outputs) in a new directory. */
static void
report(uint64_t seed, const char *shrunk, uint32_t tiles, uint64_t vseed,
       const CaseResult *res)
{
	Graph *g;
	Diag errs[GRAPH_MAX_ERRORS];
	int nerr;
	char dir[] = "/tmp/graph_diff_XXXXXX";
	print_message("graph_diff: case seed %llu failed: %s\n",
	              (unsigned long long)seed, res->msg);
	if (graph_parse(shrunk, strlen(shrunk), "case.graph", &g, errs,
	                &nerr) ||
	    !mkdtemp(dir)) {
		print_message("%s", shrunk);
		return;
	}
	char path[512];
	Diag d;
	snprintf(path, sizeof path, "%s/case.graph", dir);
	if (write_new_file(path, shrunk, strlen(shrunk), &d))
		print_message("(could not write %s: %s)\n", path, d.msg);
	Interp in;
	interpret(g, vseed, &in);
	for (int32_t id = 0; id < g->ntensors; id++) {
		const Tensor *t = &g->tensors[id];
		if (t->producer < 0)
			save_npy(dir, t, in.val[id], ".npy");
		else if (t->role == ROLE_OUTPUT)
			save_npy(dir, t, in.val[id], ".expected.npy");
	}
	/* in pieces: print_message has a buffer of its own */
	print_message("--- %s/case.graph (shrunk; seed %llu, %u tiles, "
	              "values %llu)\n",
	              dir, (unsigned long long)seed, tiles,
	              (unsigned long long)vseed);
	for (const char *p = shrunk; *p;) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);
		print_message("%.*s\n", n, p);
		p += n + (nl != NULL);
	}
	print_message("---\ncheck it again: build/tests/test_graph_diff "
	              "--graph %s/case.graph --tiles %u --values %llu\n",
	              dir, tiles, (unsigned long long)vseed);
	print_message("run it on the whole chip (another plan): build/ipu "
	              "run graph --graph %s/case.graph",
	              dir);
	for (int32_t id = 0; id < g->ntensors; id++) {
		const Tensor *t = &g->tensors[id];
		if (t->producer < 0 || t->role == ROLE_OUTPUT)
			print_message(" --%s %s=%s/%s.npy",
			              t->producer < 0 ? "in" : "out", t->name,
			              dir, t->name);
	}
	print_message("\n");
	print_message("  (the interpreter's outputs: %s/NAME.expected.npy)\n",
	              dir);
	interp_free(&in, g);
	graph_free(g);
}

/* ---- the test ----------------------------------------------------------- */

static struct {
	long cases;
	uint64_t seed;
	const char *graph;
	uint32_t tiles;
	uint64_t values;
	int verbose;
} opt = {.cases = 1000, .seed = 1, .tiles = 8, .values = 1};

/* What a crash leaves: the case being run. */
static const char *volatile crash_text;
static volatile uint64_t crash_seed;

static void
on_crash(int sig)
{
	char head[96];
	int n = snprintf(head, sizeof head,
	                 "\ngraph_diff: crashed (signal %d) in case seed "
	                 "%llu:\n",
	                 sig, (unsigned long long)crash_seed);
	if (write(2, head, (size_t)n) < 0 ||
	    (crash_text && write(2, crash_text, strlen(crash_text)) < 0))
		_exit(1);
	signal(sig, SIG_DFL);
	raise(sig);
}

typedef struct {
	char msg[160];
	int n;
} Refusal;

/* A refusal's message without names and numbers, to count alike ones. */
static void
count_refusal(Refusal *tab, int *ntab, const char *msg)
{
	char key[160];
	size_t k = 0;
	const char *m = strstr(msg, "compile: ");
	for (m = m ? m : msg; *m && *m != '\n' && k + 2 < sizeof key; m++) {
		if ((*m >= '0' && *m <= '9') ||
		    ((*m == 't' || *m == 'w' || *m == 'x') && m[1] >= '0' &&
		     m[1] <= '9' &&
		     (m == msg || m[-1] == ' ' || m[-1] == '\''))) {
			while (m[1] >= '0' && m[1] <= '9')
				m++;
			if (k == 0 || key[k - 1] != '#')
				key[k++] = '#';
			continue;
		}
		key[k++] = *m;
	}
	key[k] = 0;
	for (int i = 0; i < *ntab; i++)
		if (!strcmp(tab[i].msg, key)) {
			tab[i].n++;
			return;
		}
	if (*ntab < 64) {
		snprintf(tab[*ntab].msg, sizeof tab[*ntab].msg, "%s", key);
		tab[(*ntab)++].n = 1;
	}
}

static int
by_count(const void *a, const void *b)
{
	return ((const Refusal *)b)->n - ((const Refusal *)a)->n;
}

/* What the checked cases covered. */
typedef struct {
	long op[OP_COUNT];
	long loops, carry_first, carry_second, carry_read_after, carry_output,
	    carry_leaf;
} Coverage;

static void
cover(const Graph *g, Coverage *cv)
{
	for (int i = 0; i < g->nops; i++)
		cv->op[g->ops[i].kind]++;
	RepeatMap rm;
	Diag d;
	if (!g->repeat.count || graph_repeat_map(g, &rm, &d))
		return;
	cv->loops++;
	int first = 0, second = 0, after = 0;
	for (int j = 0; j < rm.len; j++) {
		const Op *o = &g->ops[rm.first + j];
		first |= o->in[0] == rm.carry_in;
		second |= op_desc(o->kind)->nin > 1 && o->in[1] == rm.carry_in;
	}
	for (int i = rm.first + rm.len * rm.count; i < g->nops; i++)
		for (int k = 0; k < op_desc(g->ops[i].kind)->nin; k++)
			after |= g->ops[i].in[k] == rm.carry_in;
	const Tensor *c = graph_tensor(g, rm.carry_in);
	cv->carry_first += first;
	cv->carry_second += second;
	cv->carry_read_after += after;
	cv->carry_output += c->role == ROLE_OUTPUT;
	cv->carry_leaf += c->producer < 0;
	repeat_map_free(&rm);
}

static void
test_random_graphs(void **state)
{
	(void)state;
	long status[CASE_FAIL_LOOP + 1] = {0};
	uint64_t checked = 0, unchecked = 0;
	Coverage cv = {0};
	Refusal *refused = xcalloc(64, sizeof *refused);
	int nrefused = 0, nfail = 0;
	for (long i = 0; i < opt.cases; i++) {
		uint64_t seed = opt.seed + (uint64_t)i;
		uint32_t tiles;
		char why[512];
		Graph *g = gen_graph(seed, &tiles, why, sizeof why);
		if (!g) {
			if (strcmp(why, "no output"))
				fail_msg("case seed %llu: the generated graph "
				         "was refused: %s",
				         (unsigned long long)seed, why);
			continue;
		}
		char *text = graph_print_str(g);
		crash_seed = seed;
		crash_text = text;
		if (opt.verbose)
			print_message("case seed %llu, %u tiles\n%s",
			              (unsigned long long)seed, tiles, text);
		CaseResult res;
		run_case(g, tiles, seed, &res);
		status[res.status]++;
		checked += res.checked;
		unchecked += res.unchecked;
		if (res.status == CASE_PASS)
			cover(g, &cv);
		if (res.status == CASE_REFUSED)
			count_refusal(refused, &nrefused, res.msg);
		if (failed(res.status)) {
			char *small = shrink(text, tiles, seed, res.status);
			report(seed, small, tiles, seed, &res);
			free(small);
			nfail++;
		}
		crash_text = NULL;
		free(text);
		graph_free(g);
	}
	print_message(
	    "graph_diff: %ld cases from seed %llu: %ld passed, %ld refused "
	    "by the compiler, %ld skipped (values beyond 4096), %ld wrong, "
	    "%ld faulted, %ld loops unlike their unrolled graph; %llu "
	    "output elements checked, %llu unbounded\n",
	    opt.cases, (unsigned long long)opt.seed, status[CASE_PASS],
	    status[CASE_REFUSED], status[CASE_SKIPPED], status[CASE_FAIL_VALUE],
	    status[CASE_FAIL_RUN], status[CASE_FAIL_LOOP],
	    (unsigned long long)checked, (unsigned long long)unchecked);
	print_message("passed:");
	for (int k = 0; k < OP_COUNT; k++)
		print_message(" %s %ld", op_desc((OpKind)k)->name, cv.op[k]);
	print_message("; %ld loops: the carry read first %ld, second %ld, "
	              "read after the loop %ld, an output %ld, an input or "
	              "weight %ld\n",
	              cv.loops, cv.carry_first, cv.carry_second,
	              cv.carry_read_after, cv.carry_output, cv.carry_leaf);
	qsort(refused, (size_t)nrefused, sizeof *refused, by_count);
	for (int i = 0; i < nrefused && i < 12; i++)
		print_message("  refused %4d x %s\n", refused[i].n,
		              refused[i].msg);
	free(refused);
	assert_int_equal(nfail, 0);
	/* enough of the space is run to mean something */
	if (opt.cases >= 100) {
		for (int k = 0; k < OP_COUNT; k++)
			assert_true(cv.op[k] > 0);
		assert_true(status[CASE_PASS] * 2 > opt.cases);
		assert_true(cv.loops * 5 > opt.cases);
		assert_true(cv.carry_second > 0 && cv.carry_read_after > 0 &&
		            cv.carry_output > 0 && cv.carry_leaf > 0);
	}
}

/* --graph F: one graph file, checked as a case. */
static void
test_graph_file(void **state)
{
	(void)state;
	size_t len;
	uint8_t *data;
	Diag d;
	if (read_file(opt.graph, &data, &len, &d))
		fail_msg("%s", d.msg);
	char *text = xcalloc(len + 1, 1);
	memcpy(text, data, len);
	free(data);
	CaseResult res;
	if (run_text(text, opt.tiles, opt.values, &res))
		fail_msg("%s: does not parse", opt.graph);
	print_message("%s on %u tiles, values %llu: %s%s%s\n", opt.graph,
	              opt.tiles, (unsigned long long)opt.values,
	              res.status == CASE_PASS      ? "matches the interpreter"
	              : res.status == CASE_REFUSED ? "refused: "
	              : res.status == CASE_SKIPPED ? "values out of range"
	                                           : "FAILED: ",
	              res.msg, "");
	free(text);
	assert_false(failed(res.status));
}

int
main(int argc, char **argv)
{
	const char *env = getenv("IPU_DIFF_CASES");
	if (env)
		opt.cases = strtol(env, NULL, 10);
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--verbose")) {
			opt.verbose = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr,
			        "usage: test_graph_diff [--cases N] [--seed S] "
			        "[--verbose] | --graph F [--tiles T] "
			        "[--values V]\n");
			return 2;
		}
		if (!strcmp(argv[i], "--cases"))
			opt.cases = strtol(v, NULL, 10);
		else if (!strcmp(argv[i], "--seed"))
			opt.seed = strtoull(v, NULL, 10);
		else if (!strcmp(argv[i], "--graph"))
			opt.graph = v;
		else if (!strcmp(argv[i], "--tiles"))
			opt.tiles = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(argv[i], "--values"))
			opt.values = strtoull(v, NULL, 10);
		i++;
	}
	signal(SIGSEGV, on_crash);
	signal(SIGABRT, on_crash);
	signal(SIGFPE, on_crash);
	const struct CMUnitTest random[] = {
	    cmocka_unit_test(test_random_graphs),
	};
	const struct CMUnitTest file[] = {
	    cmocka_unit_test(test_graph_file),
	};
	return opt.graph ? cmocka_run_group_tests(file, NULL, NULL)
	                 : cmocka_run_group_tests(random, NULL, NULL);
}

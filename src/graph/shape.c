/*
 * shape.c - the operator table and what it knows per op: the checks every
 * op shares (input ids, dtypes, attributes), then each op's inference of
 * its output element type and shape, then each op's useful work.
 *
 * graph_infer is the one place an output type is decided: the builder
 * calls it before appending an op and graph_verify calls it again and
 * compares. An infer function may assume its inputs exist, have allowed
 * dtypes (and equal ones for OPF_ELEMENTWISE) and that its attributes are
 * well formed; it reports what is wrong without the op name, which
 * graph_infer puts in front ("matmul: inner dimensions differ: ...").
 *
 * Shape rules (docs/graph.md):
 *   matmul     [B.., M, K] x [B.., K, N] -> [B.., M, N]; transpose_a/b swap
 *              the last two axes of a/b first; batch axes equal, no
 *              broadcasting; f32 if either input is f32, else f16.
 *   add, mul   numpy broadcasting: axes aligned from the right, each pair
 *              equal or one of them 1; the result takes the larger.
 *   cast       same shape, element type `to`.
 *   reshape    same element count.
 *   transpose  output axis i is input axis perm[i].
 *   layernorm  x [.., N], gamma and beta [N] of x's type; output like x.
 *   norm       layernorm without gamma and beta: x alone; output like x.
 *   softmax    output like x; scale > 0 (the max of x is the max of
 *              scale * x).
 */
#include "graph.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- per-op rules, named in ops.def ---- */

/* a * b, saturating at INT64_MAX (both >= 0). */
static int64_t
mul_sat(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static const char *
shape_str(const Shape *s, char *buf, size_t len)
{
	shape_format(s, buf, len);
	return buf;
}

/* The shape of a matmul operand as used: last two axes swapped if t. */
static Shape
operand_shape(const Shape *s, int t)
{
	Shape r = *s;
	if (t && r.rank >= 2) {
		r.dim[r.rank - 1] = s->dim[r.rank - 2];
		r.dim[r.rank - 2] = s->dim[r.rank - 1];
	}
	return r;
}

static int
matmul_error(const Tensor *const in[], const OpAttrs *a, const char *what,
             Diag *d)
{
	char sa[128], sb[128];
	const char *t = a->transpose_a && a->transpose_b ? " (transpose_a, "
	                                                   "transpose_b)"
	                : a->transpose_a                 ? " (transpose_a)"
	                : a->transpose_b                 ? " (transpose_b)"
	                                                 : "";
	return diag_set(d, IPU_EINVAL, NULL, 0, 0, "%s: a is %s, b is %s%s",
	                what, shape_str(&in[0]->shape, sa, sizeof sa),
	                shape_str(&in[1]->shape, sb, sizeof sb), t);
}

static int
infer_matmul(const Tensor *const in[], const OpAttrs *a, Tensor *out, Diag *d)
{
	Shape x = operand_shape(&in[0]->shape, a->transpose_a);
	Shape y = operand_shape(&in[1]->shape, a->transpose_b);
	int r = x.rank;
	if (x.rank < 2 || y.rank < 2)
		return matmul_error(in, a, "operands need rank >= 2", d);
	if (x.rank != y.rank)
		return matmul_error(in, a, "batch axes differ", d);
	for (int i = 0; i < r - 2; i++)
		if (x.dim[i] != y.dim[i])
			return matmul_error(in, a, "batch axes differ", d);
	if (x.dim[r - 1] != y.dim[r - 2])
		return matmul_error(in, a, "inner dimensions differ", d);
	out->shape = x;
	out->shape.dim[r - 1] = y.dim[r - 1];
	int f32 = in[0]->elem.dtype == DT_F32 || in[1]->elem.dtype == DT_F32;
	out->elem = (ElemType){f32 ? DT_F32 : DT_F16, 0};
	return 0;
}

static int
infer_broadcast(const Tensor *const in[], const OpAttrs *a, Tensor *out,
                Diag *d)
{
	const Shape *x = &in[0]->shape, *y = &in[1]->shape;
	Shape r = {.rank = x->rank > y->rank ? x->rank : y->rank};
	for (int i = 1; i <= r.rank; i++) {
		int64_t p = i <= x->rank ? x->dim[x->rank - i] : 1;
		int64_t q = i <= y->rank ? y->dim[y->rank - i] : 1;
		if (p != q && p != 1 && q != 1) {
			char sa[128], sb[128];
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "shapes do not broadcast: a is %s, b "
			                "is %s",
			                shape_str(x, sa, sizeof sa),
			                shape_str(y, sb, sizeof sb));
		}
		r.dim[r.rank - i] = p > q ? p : q;
	}
	out->shape = r;
	out->elem = in[0]->elem;
	return 0;
}

static int
infer_cast(const Tensor *const in[], const OpAttrs *a, Tensor *out, Diag *d)
{
	out->shape = in[0]->shape;
	out->elem = a->to;
	return 0;
}

static int
infer_same(const Tensor *const in[], const OpAttrs *a, Tensor *out, Diag *d)
{
	out->shape = in[0]->shape;
	out->elem = in[0]->elem;
	return 0;
}

static int
infer_reshape(const Tensor *const in[], const OpAttrs *a, Tensor *out, Diag *d)
{
	int e = graph_check_shape(&a->shape, d);
	if (e)
		return e;
	int64_t n = shape_elems(&in[0]->shape), m = shape_elems(&a->shape);
	if (n != m) {
		char sx[128], ss[128];
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "element counts differ: x is %s (%lld), shape "
		    "%s (%lld)",
		    shape_str(&in[0]->shape, sx, sizeof sx), (long long)n,
		    shape_str(&a->shape, ss, sizeof ss), (long long)m);
	}
	out->shape = a->shape;
	out->elem = in[0]->elem;
	return 0;
}

static int
infer_transpose(const Tensor *const in[], const OpAttrs *a, Tensor *out,
                Diag *d)
{
	const Shape *x = &in[0]->shape, *p = &a->perm;
	char sx[128], sp[128];
	int seen = 0;
	for (int i = 0; i < p->rank && p->rank == x->rank; i++) {
		int64_t ax = p->dim[i];
		if (ax < 0 || ax >= x->rank || (seen >> ax & 1))
			break;
		seen |= 1 << ax;
		out->shape.dim[i] = x->dim[ax];
	}
	if (p->rank != x->rank || seen != (1 << x->rank) - 1)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "perm %s is not a permutation of the %d axes "
		                "of x %s",
		                shape_str(p, sp, sizeof sp), x->rank,
		                shape_str(x, sx, sizeof sx));
	out->shape.rank = x->rank;
	out->elem = in[0]->elem;
	return 0;
}

static int
infer_slice(const Tensor *const in[], const OpAttrs *a, Tensor *out, Diag *d)
{
	const Shape *x = &in[0]->shape, *b = &a->begin, *e = &a->end;
	char sx[128], sb[128], se[128];
	int ok = b->rank == x->rank && e->rank == x->rank;
	for (int i = 0; ok && i < x->rank; i++) {
		ok = 0 <= b->dim[i] && b->dim[i] < e->dim[i] &&
		     e->dim[i] <= x->dim[i];
		out->shape.dim[i] = e->dim[i] - b->dim[i];
	}
	if (!ok)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "begin %s and end %s are not a non-empty range "
		                "of every axis of x %s",
		                shape_str(b, sb, sizeof sb),
		                shape_str(e, se, sizeof se),
		                shape_str(x, sx, sizeof sx));
	out->shape.rank = x->rank;
	out->elem = in[0]->elem;
	return 0;
}

static int
infer_concat(const Tensor *const in[], const OpAttrs *a, Tensor *out, Diag *d)
{
	const Shape *x = &in[0]->shape, *y = &in[1]->shape;
	char sx[128], sy[128], ex[32], ey[32];
	if (!elem_equal(in[0]->elem, in[1]->elem)) {
		elem_format(in[0]->elem, ex, sizeof ex);
		elem_format(in[1]->elem, ey, sizeof ey);
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "a is %s, b %s: want one element type", ex, ey);
	}
	int ok = x->rank == y->rank && a->axis < x->rank;
	for (int i = 0; ok && i < x->rank; i++)
		ok = i == a->axis || x->dim[i] == y->dim[i];
	if (!ok)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "a %s and b %s do not join along axis %d (same "
		                "rank, other axes equal)",
		                shape_str(x, sx, sizeof sx),
		                shape_str(y, sy, sizeof sy), a->axis);
	out->shape = *x;
	out->shape.dim[a->axis] += y->dim[a->axis];
	out->elem = in[0]->elem;
	return shape_elems(&out->shape) > GRAPH_MAX_ELEMS
	           ? diag_set(d, IPU_EINVAL, NULL, 0, 0, "too many elements")
	           : 0;
}

static int
infer_gather(const Tensor *const in[], const OpAttrs *a, Tensor *out, Diag *d)
{
	const Shape *t = &in[0]->shape, *ids = &in[1]->shape;
	char st[128], si[128];
	if (t->rank != 2 || ids->rank != 1)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "table %s and ids %s: want a table [V, D] and "
		                "ids [N]",
		                shape_str(t, st, sizeof st),
		                shape_str(ids, si, sizeof si));
	if (in[1]->elem.dtype != DT_F32)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "ids are %s; want f32 (integers as exact "
		                "values)",
		                dtype_name(in[1]->elem.dtype));
	/* the kernel clamps ids as f32 to base .. base + V - 1: exact */
	if (a->base + t->dim[0] > GRAPH_MAX_INT_ATTR)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "base=%d and %lld rows pass 2^24 (ids are "
		                "exact f32 integers below it)",
		                a->base, (long long)t->dim[0]);
	out->shape = (Shape){2, {ids->dim[0], t->dim[1]}};
	out->elem = in[0]->elem;
	return shape_elems(&out->shape) > GRAPH_MAX_ELEMS
	           ? diag_set(d, IPU_EINVAL, NULL, 0, 0, "too many elements")
	           : 0;
}

static int
infer_layernorm(const Tensor *const in[], const OpAttrs *a, Tensor *out,
                Diag *d)
{
	const Shape *x = &in[0]->shape;
	for (int i = 1; i < 3; i++) {
		char sx[128], sp[128], ex[32], ep[32];
		const Shape *p = &in[i]->shape;
		const char *what = i == 1 ? "gamma" : "beta";
		if (p->rank != 1 || p->dim[0] != x->dim[x->rank - 1])
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "%s is %s; want [%lld], the last axis "
			                "of x %s",
			                what, shape_str(p, sp, sizeof sp),
			                (long long)x->dim[x->rank - 1],
			                shape_str(x, sx, sizeof sx));
		if (!elem_equal(in[i]->elem, in[0]->elem)) {
			elem_format(in[0]->elem, ex, sizeof ex);
			elem_format(in[i]->elem, ep, sizeof ep);
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "%s is %s; want x's type %s", what, ep,
			                ex);
		}
	}
	if (!(a->eps >= 0))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "eps=%g: want a value >= 0", a->eps);
	return infer_same(in, a, out, d);
}

/* layernorm without gamma and beta: x alone */
static int
infer_norm(const Tensor *const in[], const OpAttrs *a, Tensor *out, Diag *d)
{
	if (!(a->eps >= 0))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "eps=%g: want a value >= 0", a->eps);
	return infer_same(in, a, out, d);
}

static int
infer_softmax(const Tensor *const in[], const OpAttrs *a, Tensor *out, Diag *d)
{
	if (!(a->scale > 0))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "scale=%g: want a value > 0 (softmax(scale * "
		                "x); write scale=1 for plain softmax)",
		                a->scale);
	return infer_same(in, a, out, d);
}

static OpWork
work_matmul(const Tensor *const in[], const OpAttrs *a, const Tensor *out)
{
	const Shape *x = &in[0]->shape;
	int64_t k = x->dim[x->rank - (a->transpose_a ? 2 : 1)];
	return (OpWork){mul_sat(shape_elems(&out->shape), k), 0};
}

static OpWork
work_elementwise(const Tensor *const in[], const OpAttrs *a, const Tensor *out)
{
	return (OpWork){0, shape_elems(&out->shape)};
}

/* Per element: the mean's add; the variance's subtract, square, add;
 * the output's subtract, two multiplies, add. */
static OpWork
work_layernorm(const Tensor *const in[], const OpAttrs *a, const Tensor *out)
{
	return (OpWork){0, mul_sat(shape_elems(&out->shape), 8)};
}

/* Per element: layernorm's but gamma's multiply and beta's add. */
static OpWork
work_norm(const Tensor *const in[], const OpAttrs *a, const Tensor *out)
{
	return (OpWork){0, mul_sat(shape_elems(&out->shape), 6)};
}

/* Per element: the max, subtract and scale, exp, the sum, the divide. */
static OpWork
work_softmax(const Tensor *const in[], const OpAttrs *a, const Tensor *out)
{
	return (OpWork){0, mul_sat(shape_elems(&out->shape), 5)};
}

static OpWork
work_none(const Tensor *const in[], const OpAttrs *a, const Tensor *out)
{
	return (OpWork){0, 0};
}

/* ---- the tables ---- */

static const OpDesc ops[] = {
#define OP(id, name, nin, attrs, infer, work, dtypes, flags, doc)              \
	{name, nin, attrs, infer, work, dtypes, flags, doc},
#include "ops.def"
};

static const AttrDesc attrs[] = {
#define ATTR(id, name, kind, field, positional) {name, kind, positional},
#include "ops.def"
};

_Static_assert(sizeof ops / sizeof ops[0] == OP_COUNT, "ops.def rows");
_Static_assert(ATTR_COUNT <= 16, "attribute masks are unsigned");

const OpDesc *
op_desc(OpKind k)
{
	return (unsigned)k < OP_COUNT ? &ops[k] : NULL;
}

const AttrDesc *
attr_desc(AttrId a)
{
	return (unsigned)a < ATTR_COUNT ? &attrs[a] : NULL;
}

OpKind
op_from_name(const char *s, size_t len)
{
	for (int k = 0; k < OP_COUNT; k++)
		if (strlen(ops[k].name) == len && !memcmp(ops[k].name, s, len))
			return (OpKind)k;
	return OP_COUNT;
}

void *
attr_ptr(OpAttrs *a, AttrId id)
{
	switch (id) {
#define ATTR(id, name, kind, field, positional)                                \
	case ATTR_##id:                                                        \
		return &a->field;
#include "ops.def"
	default:
		return NULL;
	}
}

/* ---- checks shared by every op ---- */

int
graph_check_shape(const Shape *s, Diag *d)
{
	char buf[128];
	if (s->rank < 1 || s->rank > GRAPH_MAX_RANK)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "rank %d is outside 1..%d", s->rank,
		                GRAPH_MAX_RANK);
	int64_t n = 1;
	for (int i = 0; i < GRAPH_MAX_RANK; i++) {
		int64_t v = s->dim[i];
		if (i >= s->rank ? v != 0 : v < 1)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "shape %s: dimensions must be >= 1",
			                shape_str(s, buf, sizeof buf));
		if (i < s->rank && (n = mul_sat(n, v)) > GRAPH_MAX_ELEMS)
			return diag_set(d, IPU_ERANGE, NULL, 0, 0,
			                "shape %s: more than 2^40 elements",
			                shape_str(s, buf, sizeof buf));
	}
	return 0;
}

int
graph_check_elem(ElemType e, Diag *d)
{
	if ((unsigned)e.dtype >= DT_COUNT)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0, "unknown dtype %d",
		                (int)e.dtype);
	if (!dtype_is_f8(e.dtype) && e.scale)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s has no scale (only f8 types do)",
		                dtype_name(e.dtype));
	if (e.scale < GRAPH_F8_SCALE_MIN || e.scale > GRAPH_F8_SCALE_MAX)
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "f8 scale 2^%d is outside 2^%d..2^%d", e.scale,
		                GRAPH_F8_SCALE_MIN, GRAPH_F8_SCALE_MAX);
	return 0;
}

/* An attribute the op takes is well formed; one it does not is zero. */
static int
check_attr(OpAttrs *a, AttrId id, int used, Diag *d)
{
	void *p = attr_ptr(a, id);
	switch (attr_desc(id)->kind) {
	case AK_FLAG: {
		int v = *(int *)p;
		if (used ? v != 0 && v != 1 : v != 0)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "%s=%d: want %s", attrs[id].name, v,
			                used ? "0 or 1" : "none");
		return 0;
	}
	case AK_ELEM: {
		ElemType *e = p;
		if (used)
			return graph_check_elem(*e, d);
		return e->dtype || e->scale
		           ? diag_set(d, IPU_EINVAL, NULL, 0, 0, "takes no %s",
		                      attrs[id].name)
		           : 0;
	}
	case AK_DIMS: {
		Shape *s = p;
		if (used ? s->rank < 0 || s->rank > GRAPH_MAX_RANK : s->rank)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "%s: rank %d", attrs[id].name, s->rank);
		for (int i = s->rank; i < GRAPH_MAX_RANK; i++)
			if (s->dim[i])
				return diag_set(d, IPU_EINVAL, NULL, 0, 0,
				                "%s: entries past the rank are "
				                "not zero",
				                attrs[id].name);
		return 0;
	}
	case AK_INT: {
		int v = *(int *)p;
		if (v < 0 || v > GRAPH_MAX_INT_ATTR || (!used && v))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "%s=%d: want %s", attrs[id].name, v,
			                used ? "an int in 0 .. 2^24" : "none");
		return 0;
	}
	case AK_FLOAT: {
		double v = *(double *)p;
		/* unused: +0 exactly (the printer leaves it out) */
		if (used ? !isfinite(v) : v != 0 || signbit(v))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "%s=%g: want %s", attrs[id].name, v,
			                used ? "a finite number" : "none");
		return 0;
	}
	}
	return 0;
}

static int
dtype_error(unsigned mask, const Tensor *t, const char *elem, Diag *d)
{
	char ok[64] = "";
	size_t n = 0;
	for (int k = 0; k < DT_COUNT && n < sizeof ok; k++)
		if (mask >> k & 1)
			n += snprintf(ok + n, sizeof ok - n, "%s%s",
			              n ? ", " : "", dtype_name((DType)k));
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "input '%s' is %s; the op takes %s", t->name, elem, ok);
}

/* The inputs exist and have dtypes the op takes. */
static int
check_inputs(const Graph *g, const Op *op, const Tensor *in[], Diag *d)
{
	const OpDesc *od = &ops[op->kind];
	for (int i = 0; i < GRAPH_MAX_INPUTS; i++) {
		if (i >= od->nin) {
			if (op->in[i] != -1)
				return diag_set(d, IPU_EINVAL, NULL, 0, 0,
				                "input %d set, the op takes %d",
				                i, od->nin);
			continue;
		}
		in[i] = graph_tensor(g, op->in[i]);
		if (!in[i])
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "input %d: no tensor with id %d", i,
			                (int)op->in[i]);
		char e[32];
		elem_format(in[i]->elem, e, sizeof e);
		if (!(od->dtypes >> in[i]->elem.dtype & 1))
			return dtype_error(od->dtypes, in[i], e, d);
		char e0[32];
		elem_format(in[0]->elem, e0, sizeof e0);
		if ((od->flags & OPF_ELEMENTWISE) &&
		    !elem_equal(in[i]->elem, in[0]->elem))
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "element types differ: a is %s, b is %s", e0, e);
	}
	return 0;
}

static int
infer_checked(const Graph *g, const Op *op, Tensor *out, Diag *d)
{
	const OpDesc *od = &ops[op->kind];
	const Tensor *in[GRAPH_MAX_INPUTS] = {0};
	OpAttrs a = op->attr;
	int e = check_inputs(g, op, in, d);
	for (int i = 0; !e && i < ATTR_COUNT; i++)
		e = check_attr(&a, (AttrId)i, od->attrs >> i & 1, d);
	if (!e)
		e = od->infer(in, &op->attr, out, d);
	if (!e)
		e = graph_check_shape(&out->shape, d);
	return e;
}

int
graph_infer(const Graph *g, const Op *op, Tensor *out, Diag *d)
{
	if ((unsigned)op->kind >= OP_COUNT)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0, "unknown op kind %d",
		                (int)op->kind);
	*out = (Tensor){.id = -1, .producer = -1};
	int e = infer_checked(g, op, out, d);
	if (e)
		graph_diag_prefix(d, ops[op->kind].name);
	return e;
}

int
graph_diag_prefix(Diag *d, const char *what)
{
	if (d) {
		char msg[sizeof d->msg];
		snprintf(msg, sizeof msg, "%s: %.400s", what, d->msg);
		memcpy(d->msg, msg, sizeof msg);
	}
	return IPU_EINVAL;
}

/* ---- work ---- */

OpWork
graph_op_work(const Graph *g, const Op *op)
{
	const Tensor *in[GRAPH_MAX_INPUTS] = {0};
	const Tensor *out = graph_tensor(g, op->out);
	if ((unsigned)op->kind >= OP_COUNT || !out)
		return (OpWork){0, 0};
	for (int i = 0; i < ops[op->kind].nin; i++)
		if (!(in[i] = graph_tensor(g, op->in[i])))
			return (OpWork){0, 0};
	return ops[op->kind].work(in, &op->attr, out);
}

int64_t
graph_flops(const Graph *g)
{
	int64_t n = 0;
	for (int i = 0; i < g->nops; i++) {
		OpWork w = graph_op_work(g, &g->ops[i]);
		int64_t f = mul_sat(w.macs, 2);
		if (__builtin_add_overflow(f, w.ops, &f) ||
		    __builtin_add_overflow(n, f, &n))
			return INT64_MAX;
	}
	return n;
}

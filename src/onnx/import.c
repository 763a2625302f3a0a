/*
 * import.c - an ONNX model (ModelProto, protobuf-c) into the graph IR
 * (onnx.h, docs/onnx.md).
 *
 * The nodes are taken in their (topological) order. A node whose inputs
 * are all known at import time is computed on the host (fold.c); Shape of
 * a computed tensor is known too, since every shape is fixed. The others
 * map onto IR operators. Decomposed LayerNorm and GELU and a softmax's
 * scale are recognised by their structure: the nodes inside such a form
 * (ReduceMean, Pow, Sqrt, Erf, ...), which have no IR operator of their
 * own, are *deferred* until the node that completes the form emits one
 * IR op; a deferred value used any other way is an error that names the
 * node with no IR operator. Dead IR ops (bypassed by a form) are dropped
 * at the end.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plan/plan.h"
#include "../util/fp.h"
#include "onnxpriv.h"

#define T(x) ONNX__TENSOR_PROTO__DATA_TYPE__##x

enum { OPSET_MIN = 13, OPSET_MAX = 17 };

typedef enum { V_HOST, V_TENSOR, V_DEFER } VKind;

/* One named ONNX value. */
typedef struct {
	const char *name;
	VKind kind;
	Host h;         /* V_HOST */
	int32_t id;     /* V_TENSOR: the IR tensor */
	int onnx_rank;  /* V_TENSOR: its ONNX rank (the IR's is >= 1) */
	int32_t w[2];   /* V_HOST: its IR weight, activation / f8 type */
	int node;       /* the producing node, -1 for inputs, initializers */
	int ints;       /* an integer model input (f32 in the IR), or 2: one
	                   reshaped (a mask before its Cast) */
	int64_t range;  /* ints: Gather rows it indexes (the fewest) */
	int wide;       /* held in f32 though activations are f16 (below) */
	int blame;      /* V_DEFER: the node with no IR operator */
	int64_t pad[4]; /* V_TENSOR: zeros around its spatial axes (h, w
	                   begin; h, w end), a Pad the Conv or AveragePool
	                   reading it applies */
} Value;

typedef struct {
	const Onnx__GraphProto *gp;
	const char *file;
	OnnxDType dt;
	ElemType act; /* activations and non-matmul weights */
	Graph *g;
	Value **val; /* each its own allocation: pointers to values stay
	              * valid while later ones are defined */
	int nval, capval;
	int32_t *index; /* open addressing: value + 1; 0 empty */
	int index_cap;
	int *consumers;          /* per value: how many node inputs read it */
	unsigned char *absorbed; /* nodes emitted as part of an earlier form */
	/* weights: IR id and values */
	int32_t *wid;
	float **wval;
	int nw, capw;
	int erf_gelu;         /* an Erf GELU was mapped to the IR's tanh form */
	int64_t clamped;      /* constants clamped to f16's range */
	char clamped_in[128]; /* the first weight holding one */
} Imp;

/* ---- values ------------------------------------------------------------ */

static uint64_t
name_hash(const char *s)
{
	return fnv1a64(FNV1A64_INIT, s, strlen(s));
}

static Value *
find(Imp *im, const char *name)
{
	if (!name || !im->index_cap)
		return NULL;
	for (uint64_t h = name_hash(name);; h++) {
		int32_t k = im->index[h & (uint64_t)(im->index_cap - 1)];
		if (!k)
			return NULL;
		if (!strcmp(im->val[k - 1]->name, name))
			return im->val[k - 1];
	}
}

static void
reindex(Imp *im)
{
	free(im->index);
	im->index_cap = 64;
	while (im->index_cap < 2 * im->nval + 2)
		im->index_cap *= 2;
	im->index = xcalloc((size_t)im->index_cap, sizeof *im->index);
	for (int i = 0; i < im->nval; i++)
		for (uint64_t h = name_hash(im->val[i]->name);; h++) {
			int32_t *slot =
			    &im->index[h & (uint64_t)(im->index_cap - 1)];
			if (!*slot) {
				*slot = i + 1;
				break;
			}
		}
}

/* A new value; NULL after an error if the name is taken or empty. */
static Value *
define(Imp *im, const char *name, VKind kind, int node, Diag *d)
{
	if (!name || !name[0]) {
		diag_set(d, IPU_EINVAL, im->file, 0, 0, "a value has no name");
		return NULL;
	}
	if (find(im, name)) {
		diag_set(d, IPU_EINVAL, im->file, 0, 0,
		         "value '%.200s' is defined twice", name);
		return NULL;
	}
	GROW(im->val, im->nval, im->capval);
	Value *v = im->val[im->nval++] = xcalloc(1, sizeof *v);
	v->name = name;
	v->kind = kind;
	v->node = node;
	v->id = -1;
	v->w[0] = v->w[1] = -1;
	if (2 * im->nval + 2 > im->index_cap)
		reindex(im);
	else
		for (uint64_t h = name_hash(name);; h++) {
			int32_t *slot =
			    &im->index[h & (uint64_t)(im->index_cap - 1)];
			if (!*slot) {
				*slot = im->nval;
				break;
			}
		}
	return v;
}

/* ---- IR names and tensors ---------------------------------------------- */

/* An IR name for an ONNX name: other characters become '_', a leading
 * digit or '.' gets a '_' before it, long names are cut, and a name taken
 * gets _2, _3, ... */
static void
ir_name(const Imp *im, const char *onnx, char *buf)
{
	char base[48];
	size_t n = 0;
	if (!(onnx[0] == '_' || (onnx[0] >= 'a' && onnx[0] <= 'z') ||
	      (onnx[0] >= 'A' && onnx[0] <= 'Z')))
		base[n++] = '_';
	for (const char *p = onnx; *p && n < sizeof base - 1; p++) {
		char c = *p;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		         (c >= '0' && c <= '9') || c == '_' || c == '.';
		if (c == '/' && p == onnx)
			continue; /* PyTorch's leading '/' */
		base[n++] = ok ? c : '_';
	}
	base[n] = 0;
	strcpy(buf, base);
	for (int k = 2; graph_find(im->g, buf) >= 0; k++)
		snprintf(buf, GRAPH_MAX_NAME + 1, "%s_%d", base, k);
}

static int
ir_shape(const Onnx__NodeProto *n, int rank, const int64_t *dim, Shape *s,
         Diag *d)
{
	memset(s, 0, sizeof *s);
	if (rank > GRAPH_MAX_RANK)
		return node_error(d, n, "rank %d: the IR holds at most %d axes",
		                  rank, GRAPH_MAX_RANK);
	s->rank = rank ? rank : 1;
	s->dim[0] = 1;
	for (int i = 0; i < rank; i++) {
		if (dim[i] < 1)
			return node_error(d, n,
			                  "an empty tensor (axis %d has "
			                  "size %lld)",
			                  i, (long long)dim[i]);
		s->dim[i] = dim[i];
	}
	return IPU_OK;
}

/* The largest finite value of an activation type. */
static double
act_max(DType t)
{
	return t == DT_F16 ? fp_f16_to_f64(FP16_MAX) : FLT_MAX;
}

static int
add_weight_values(Imp *im, int32_t id, const Host *h, double mul)
{
	if (im->nw == im->capw) {
		im->capw = im->capw ? 2 * im->capw : 16;
		im->wid = xrealloc(im->wid, (size_t)im->capw * sizeof *im->wid);
		im->wval =
		    xrealloc(im->wval, (size_t)im->capw * sizeof *im->wval);
	}
	/* A finite constant beyond f16's range would be infinite as an f16
	 * weight, and 0 x inf is NaN: PyTorch's attention masks, (1 - m) x
	 * finfo(float32).min, would give NaN where a token is kept. It is
	 * clamped to f16's largest finite value instead (infinities stay:
	 * they are the model's own). f8 saturates as it is encoded, f32
	 * holds what folding rounded to float. */
	const Tensor *t = graph_tensor(im->g, id);
	double top = t->elem.dtype == DT_F16 ? act_max(DT_F16) : INFINITY;
	float *v = xmalloc((size_t)h->n * sizeof *v);
	for (int64_t i = 0; i < h->n; i++) {
		double x = h->v[i] * mul;
		if (isfinite(x) && fabs(x) > top) {
			x = copysign(top, x);
			if (!im->clamped++)
				snprintf(im->clamped_in, sizeof im->clamped_in,
				         "%s", t->name);
		}
		v[i] = (float)x;
	}
	im->wid[im->nw] = id;
	im->wval[im->nw++] = v;
	return IPU_OK;
}

static int
f8_scale(const Host *h)
{
	double m = 0;
	for (int64_t i = 0; i < h->n; i++)
		if (fabs(h->v[i]) > m)
			m = fabs(h->v[i]);
	return fp_f8_f143_scale(m);
}

/* The IR weight holding host value v (made once per type). mm: it is a
 * matmul operand (f8 under ONNX_F8). */
static int32_t
weight_of(Imp *im, const Onnx__NodeProto *n, Value *v, int mm, Diag *d)
{
	int k = mm && im->dt == ONNX_F8;
	if (v->w[k] >= 0)
		return v->w[k];
	if (host_is_int(v->h.type)) {
		node_error(d, n,
		           "integer constant '%.100s' used as a float "
		           "operand",
		           v->name);
		return -1;
	}
	Shape s;
	if (ir_shape(n, v->h.rank, v->h.dim, &s, d))
		return -1;
	ElemType e = k ? (ElemType){DT_F8_F143, f8_scale(&v->h)} : im->act;
	char name[GRAPH_MAX_NAME + 1];
	ir_name(im, v->name, name);
	int32_t id = graph_weight(im->g, name, e, &s, d);
	if (id < 0)
		return -1;
	add_weight_values(im, id, &v->h, 1);
	return v->w[k] = id;
}

/* A weight of values h * mul (not shared). */
static int32_t
weight_new(Imp *im, const Onnx__NodeProto *n, const Host *h, double mul,
           const char *hint, Diag *d)
{
	Shape s;
	if (ir_shape(n, h->rank, h->dim, &s, d))
		return -1;
	char name[GRAPH_MAX_NAME + 1];
	ir_name(im, hint, name);
	int32_t id = graph_weight(im->g, name, im->act, &s, d);
	if (id >= 0)
		add_weight_values(im, id, h, mul);
	return id;
}

/* Where an IR error names no node, say which. */
static int
in_node(const Onnx__NodeProto *n, int32_t id, Diag *d)
{
	if (id < 0) {
		char msg[sizeof d->msg];
		snprintf(msg, sizeof msg, "%s", d->msg);
		return node_error(d, n, "%s", msg);
	}
	return IPU_OK;
}

/* Set output k of node ni to IR tensor id of ONNX rank r. */
static int
set_tensor(Imp *im, const Onnx__NodeProto *n, int ni, size_t k, int32_t id,
           int r, Diag *d)
{
	if (in_node(n, id, d))
		return IPU_EINVAL;
	Value *v = define(im, n->output[k], V_TENSOR, ni, d);
	if (!v)
		return IPU_EINVAL;
	v->id = id;
	v->onnx_rank = r;
	return IPU_OK;
}

static const Tensor *
tensor(const Imp *im, const Value *v)
{
	return graph_tensor(im->g, v->id);
}

static int32_t
op1(Imp *im, OpKind k, int32_t x, const OpAttrs *a, const char *name, Diag *d)
{
	int32_t in[GRAPH_MAX_INPUTS] = {x, -1, -1};
	return graph_op(im->g, k, in, a, name, d);
}

static int32_t
reshape(Imp *im, int32_t x, const Shape *s, const char *name, Diag *d)
{
	const Tensor *t = graph_tensor(im->g, x);
	if (!name && shape_equal(&t->shape, s))
		return x;
	return graph_reshape(im->g, x, s, name, d);
}

/* ---- the forms ----------------------------------------------------------- */

static const Onnx__NodeProto *
node_of(const Imp *im, const Value *v)
{
	return v && v->node >= 0 ? im->gp->node[v->node] : NULL;
}

static int
is_op(const Onnx__NodeProto *n, const char *op)
{
	return n && n->op_type && !strcmp(n->op_type, op);
}

static Value *
input(Imp *im, const Onnx__NodeProto *n, size_t k)
{
	return k < n->n_input && n->input[k][0] ? find(im, n->input[k]) : NULL;
}

static int
scalar(const Value *v, double *x)
{
	if (!v || v->kind != V_HOST || v->h.n != 1)
		return 0;
	*x = v->h.v[0];
	return 1;
}

static int
near(double a, double b)
{
	return fabs(a - b) <= 1e-3 * fabs(b);
}

/* A binary node's operands as (the one matching pred, the other). */
static int
split2(Imp *im, const Onnx__NodeProto *n, int (*pred)(const Value *, void *),
       void *arg, Value **hit, Value **other)
{
	if (n->n_input != 2)
		return 0;
	for (int k = 0; k < 2; k++) {
		Value *a = input(im, n, (size_t)k), *b = input(im, n, 1 - k);
		if (a && b && pred(a, arg)) {
			*hit = a;
			*other = b;
			return 1;
		}
	}
	return 0;
}

static int
is_scalar_near(const Value *v, void *want)
{
	double x;
	return scalar(v, &x) && near(x, *(double *)want);
}

static int
is_same(const Value *v, void *want)
{
	return v == want;
}

/* ReduceMean over the last axis only, keeping it; its input. */
static Value *
mean_last(Imp *im, const Onnx__NodeProto *n, int rank)
{
	if (!is_op(n, "ReduceMean") || n->n_input != 1)
		return NULL;
	int64_t axes[HOST_MAX_RANK], keep;
	int na;
	Diag d;
	if (attr_ints(n, "axes", axes, HOST_MAX_RANK, &na, &d) || na != 1 ||
	    attr_int(n, "keepdims", 1, &keep, &d) || !keep)
		return NULL;
	if (axes[0] != -1 && axes[0] != rank - 1)
		return NULL;
	return input(im, n, 0);
}

/* x if v is x * c for a scalar c near want (either order), else NULL. */
static Value *
times(Imp *im, const Value *v, double want)
{
	const Onnx__NodeProto *n = node_of(im, v);
	Value *c, *x = NULL;
	if (!is_op(n, "Mul") || !split2(im, n, is_scalar_near, &want, &c, &x))
		return NULL;
	return x;
}

/* x if v is x^3 (Pow(x, 3), or x * (x * x) in any order), else NULL. */
static Value *
cube(Imp *im, const Value *v)
{
	const Onnx__NodeProto *n = node_of(im, v);
	double three = 3;
	if (is_op(n, "Pow") && is_scalar_near(input(im, n, 1), &three))
		return input(im, n, 0);
	if (!is_op(n, "Mul") || n->n_input != 2)
		return NULL;
	for (int k = 0; k < 2; k++) {
		Value *x = input(im, n, (size_t)k);
		const Onnx__NodeProto *sq = node_of(im, input(im, n, 1 - k));
		if (x && is_op(sq, "Mul") && sq->n_input == 2 &&
		    input(im, sq, 0) == x && input(im, sq, 1) == x)
			return x;
	}
	return NULL;
}

/* x if n is 1 + erf(x / sqrt 2) (*erf = 1) or 1 + tanh(sqrt(2 / pi) (x +
 * 0.044715 x^3)) (*erf = 0), either order of every operation; else NULL. */
static Value *
gelu_inner(Imp *im, const Onnx__NodeProto *n, int *erf)
{
	double one = 1, r2 = sqrt(2), ir2 = 1 / sqrt(2);
	Value *c, *e, *x = NULL;
	if (!is_op(n, "Add") || !split2(im, n, is_scalar_near, &one, &c, &e))
		return NULL;
	const Onnx__NodeProto *en = node_of(im, e);
	if (is_op(en, "Erf")) {
		const Onnx__NodeProto *q = node_of(im, input(im, en, 0));
		if (is_op(q, "Div") && is_scalar_near(input(im, q, 1), &r2))
			x = input(im, q, 0);
		else
			x = times(im, input(im, en, 0), ir2);
		*erf = 1;
	} else if (is_op(en, "Tanh")) {
		Value *s = times(im, input(im, en, 0), sqrt(2 / acos(-1)));
		const Onnx__NodeProto *a = node_of(im, s);
		for (int k = 0; is_op(a, "Add") && a->n_input == 2 && k < 2;
		     k++) {
			Value *y = input(im, a, (size_t)k),
			      *m = input(im, a, 1 - (size_t)k);
			if (y && cube(im, times(im, m, 0.044715)) == y)
				x = y;
		}
		*erf = 0;
	}
	return x && x->kind == V_TENSOR ? x : NULL;
}

/* GELU, x * 0.5 * (1 + inner) (gelu_inner's), ending at Mul node n: its
 * x. */
static Value *
match_gelu(Imp *im, const Onnx__NodeProto *n, int *erf)
{
	double half = 0.5;
	Value *c, *m, *a, *x;
	if (!is_op(n, "Mul"))
		return NULL;
	/* (x * (1 + inner)) * 0.5 */
	if (split2(im, n, is_scalar_near, &half, &c, &m)) {
		const Onnx__NodeProto *mn = node_of(im, m);
		for (int k = 0; is_op(mn, "Mul") && k < 2; k++) {
			x = input(im, mn, (size_t)k);
			a = input(im, mn, 1 - (size_t)k);
			if (x && x->kind == V_TENSOR &&
			    gelu_inner(im, node_of(im, a), erf) == x)
				return x;
		}
	}
	/* (x * 0.5) * (1 + inner) */
	for (int k = 0; k < 2 && n->n_input == 2; k++) {
		Value *h = input(im, n, (size_t)k);
		a = input(im, n, 1 - (size_t)k);
		if (h && h->kind == V_TENSOR && (x = times(im, h, 0.5)) &&
		    gelu_inner(im, node_of(im, a), erf) == x)
			return x;
	}
	return NULL;
}

/* LayerNorm's decomposition ending at Div node n: (x - mean(x)) /
 * sqrt(mean((x - mean(x))^2) + eps), means over the last axis. */
static Value *
match_layernorm(Imp *im, const Onnx__NodeProto *n, double *eps)
{
	if (!is_op(n, "Div"))
		return NULL;
	Value *dv = input(im, n, 0), *c;
	const Onnx__NodeProto *sub = node_of(im, dv);
	if (!is_op(sub, "Sub"))
		return NULL;
	Value *x = input(im, sub, 0);
	if (!x || x->kind != V_TENSOR)
		return NULL;
	int rank = x->onnx_rank;
	if (mean_last(im, node_of(im, input(im, sub, 1)), rank) != x)
		return NULL;
	const Onnx__NodeProto *sq = node_of(im, input(im, n, 1));
	if (!is_op(sq, "Sqrt"))
		return NULL;
	const Onnx__NodeProto *add = node_of(im, input(im, sq, 0));
	Value *var = NULL;
	if (!is_op(add, "Add") || n->n_input != 2)
		return NULL;
	for (int k = 0; k < 2 && !var; k++)
		if (scalar(input(im, add, (size_t)k), eps) && *eps >= 0)
			var = input(im, add, 1 - (size_t)k);
	if (!var)
		return NULL;
	Value *p = mean_last(im, node_of(im, var), rank);
	const Onnx__NodeProto *pw = node_of(im, p);
	double two = 2;
	if (is_op(pw, "Pow")) {
		if (input(im, pw, 0) != dv ||
		    !is_scalar_near(input(im, pw, 1), &two))
			return NULL;
	} else if (is_op(pw, "Mul")) {
		if (!split2(im, pw, is_same, dv, &c, &c) ||
		    input(im, pw, 0) != input(im, pw, 1))
			return NULL;
	} else {
		return NULL;
	}
	return x;
}

/* ---- nodes ----------------------------------------------------------------
 */

/* The only node reading value name, or -1. */
static int
sole_consumer(const Imp *im, const char *name)
{
	int who = -1;
	for (size_t i = 0; i < im->gp->n_node; i++) {
		const Onnx__NodeProto *n = im->gp->node[i];
		for (size_t k = 0; k < n->n_input; k++)
			if (!strcmp(n->input[k], name)) {
				if (who >= 0)
					return -1;
				who = (int)i;
			}
	}
	for (size_t i = 0; i < im->gp->n_output; i++)
		if (!strcmp(im->gp->output[i]->name, name))
			return -1;
	return who;
}

/* A host [N] (or broadcastable to it: leading ones) for LayerNorm's
 * affine part: 1 with *h set. */
static int
row_param(const Value *v, int64_t N, const Host **h)
{
	if (!v || v->kind != V_HOST || host_is_int(v->h.type) || v->h.n != N ||
	    v->h.rank < 1 || v->h.dim[v->h.rank - 1] != N)
		return 0;
	*h = &v->h;
	return 1;
}

static int
emit_layernorm(Imp *im, int ni, Value *x, double eps, Diag *d)
{
	const Onnx__NodeProto *n = im->gp->node[ni];
	const Tensor *t = tensor(im, x);
	int64_t N = t->shape.dim[t->shape.rank - 1];
	const char *out = n->output[0];
	int last = ni;
	/* gamma and beta from a Mul and an Add that follow */
	const Host *gamma = NULL, *beta = NULL;
	int mi = sole_consumer(im, n->output[0]);
	if (mi > ni && is_op(im->gp->node[mi], "Mul") &&
	    im->gp->node[mi]->n_input == 2 && im->gp->node[mi]->n_output == 1) {
		const Onnx__NodeProto *m = im->gp->node[mi];
		Value *g = find(im, m->input[!strcmp(m->input[0], out)]);
		if (row_param(g, N, &gamma)) {
			out = m->output[0];
			last = mi;
			int ai = sole_consumer(im, out);
			const Onnx__NodeProto *a =
			    ai >= 0 ? im->gp->node[ai] : NULL;
			if (ai > mi && is_op(a, "Add") && a->n_input == 2 &&
			    a->n_output == 1) {
				Value *b = find(
				    im, a->input[!strcmp(a->input[0], out)]);
				if (row_param(b, N, &beta)) {
					out = a->output[0];
					last = ai;
				}
			}
		}
	}
	int64_t one = N;
	Host ones, zeros;
	host_alloc(&ones, T(FLOAT), 1, &one, d);
	host_alloc(&zeros, T(FLOAT), 1, &one, d);
	for (int64_t i = 0; i < N; i++)
		ones.v[i] = 1;
	Host g1 = gamma ? *gamma : ones, b1 = beta ? *beta : zeros;
	g1.rank = b1.rank = 1;
	g1.dim[0] = b1.dim[0] = N;
	char hint[80];
	snprintf(hint, sizeof hint, "%.60s.gamma", n->name ? n->name : "ln");
	int32_t gw = weight_new(im, n, &g1, 1, hint, d);
	snprintf(hint, sizeof hint, "%.60s.beta", n->name ? n->name : "ln");
	int32_t bw = gw < 0 ? -1 : weight_new(im, n, &b1, 1, hint, d);
	host_tensor_free(&ones);
	host_tensor_free(&zeros);
	if (bw < 0)
		return in_node(n, -1, d);
	char name[GRAPH_MAX_NAME + 1];
	ir_name(im, out, name);
	OpAttrs a = {.eps = eps};
	int32_t in[GRAPH_MAX_INPUTS] = {x->id, gw, bw};
	int32_t id = graph_op(im->g, OP_LAYERNORM, in, &a, name, d);
	if (in_node(n, id, d))
		return IPU_EINVAL;
	for (int i = ni + 1; i <= last; i++)
		if (i == mi || (last != mi && i == last))
			im->absorbed[i] = 1;
	Value *v = define(im, out, V_TENSOR, last, d);
	if (!v)
		return IPU_EINVAL;
	v->id = id;
	v->onnx_rank = x->onnx_rank;
	return IPU_OK;
}

/* Is node n the start of a form: an op with no IR operator that a form
 * can hold, or a scaling that a form absorbs? */
static int
defers(Imp *im, const Onnx__NodeProto *n)
{
	const char *op = n->op_type;
	if (!strcmp(op, "ReduceMean")) {
		/* LayerNorm's mean: over the last axis, read by its Sub */
		Value *x = input(im, n, 0);
		int ci =
		    n->n_output == 1 ? sole_consumer(im, n->output[0]) : -1;
		return x && x->kind == V_TENSOR &&
		       mean_last(im, n, x->onnx_rank) &&
		       (ci < 0 || is_op(im->gp->node[ci], "Sub"));
	}
	if (!strcmp(op, "Pow") || !strcmp(op, "Sqrt") || !strcmp(op, "Erf") ||
	    !strcmp(op, "Tanh"))
		return 1;
	if (!strcmp(op, "Div") || !strcmp(op, "Mul")) {
		Value *b = input(im, n, 1);
		double c;
		if (!strcmp(op, "Div") && b && b->kind != V_HOST)
			return 1;
		int ci =
		    n->n_output == 1 ? sole_consumer(im, n->output[0]) : -1;
		if (ci >= 0 &&
		    (is_op(im->gp->node[ci], "Erf") ||
		     is_op(im->gp->node[ci], "Softmax")) &&
		    (scalar(b, &c) || scalar(input(im, n, 0), &c)))
			return 1;
	}
	return 0;
}

/* The IR name of node n's first output, now (after any weights it made). */
static const char *
out_name(const Imp *im, const Onnx__NodeProto *n, char *buf)
{
	ir_name(im, n->output[0], buf);
	return buf;
}

/* The weight for constant c (times mul, or its reciprocal) as an operand
 * of an elementwise op with a computed tensor of shape ts, in a form the
 * compiler takes: one row [N] broadcast down the tensor (N its last axis)
 * when c is uniform or varies along the last axis only, else c expanded
 * to the full shape of the result. */
static int32_t
operand_weight(Imp *im, const Onnx__NodeProto *n, const Host *c, double mul,
               int recip, const Shape *ts, const char *hint, Diag *d)
{
	Host cv = *c, hv;
	int r = ts->rank > c->rank ? ts->rank : c->rank;
	if (r > GRAPH_MAX_RANK) {
		node_error(d, n, "rank %d is too large", r);
		return -1;
	}
	int64_t dim[HOST_MAX_RANK], idx[HOST_MAX_RANK] = {0};
	for (int i = 0; i < r; i++) {
		int jt = i - (r - ts->rank), jc = i - (r - c->rank);
		int64_t a = jt >= 0 ? ts->dim[jt] : 1,
		        b = jc >= 0 ? c->dim[jc] : 1;
		if (a != b && a != 1 && b != 1) {
			node_error(d, n, "shapes do not broadcast");
			return -1;
		}
		dim[i] = a > b ? a : b;
	}
	int uniform = 1, row = 1;
	for (int64_t i = 1; i < c->n; i++)
		uniform &= c->v[i] == c->v[0];
	for (int i = 0; i + 1 < c->rank; i++)
		row &= c->dim[i] == 1;
	int64_t N = dim[r - 1];
	if (uniform || row) {
		if (host_alloc(&hv, T(FLOAT), 1, &N, d))
			return -1;
		for (int64_t i = 0; i < N; i++)
			hv.v[i] = c->v[uniform || c->n == 1 ? 0 : i];
	} else {
		if (host_alloc(&hv, T(FLOAT), r, dim, d))
			return -1;
		for (int64_t i = 0; i < hv.n; i++) {
			int64_t off = 0;
			for (int k = 0; k < c->rank; k++) {
				int64_t ik = idx[k + (r - c->rank)];
				off =
				    off * c->dim[k] + (c->dim[k] == 1 ? 0 : ik);
			}
			hv.v[i] = cv.v[off];
			for (int k = r - 1; k >= 0 && ++idx[k] == dim[k]; k--)
				idx[k] = 0;
		}
	}
	for (int64_t i = 0; i < hv.n; i++)
		hv.v[i] = recip ? mul / hv.v[i] : mul * hv.v[i];
	int32_t w = weight_new(im, n, &hv, 1, hint, d);
	host_tensor_free(&hv);
	return w;
}

/* Is every value of c equal to x? */
static int
all_equal(const Host *c, double x)
{
	for (int64_t i = 0; i < c->n; i++)
		if (c->v[i] != x)
			return 0;
	return 1;
}

/* A weight of values h in type e (a lookup's rows of ones and of -v, a
 * mask's ones). */
static int32_t
weight_host(Imp *im, const Host *h, ElemType e, const char *onnx,
            const char *suffix, Diag *d)
{
	char hint[300], name[GRAPH_MAX_NAME + 1];
	snprintf(hint, sizeof hint, "%s.%s", onnx, suffix);
	ir_name(im, hint, name);
	Shape s = {h->rank, {0}};
	for (int i = 0; i < h->rank; i++)
		s.dim[i] = h->dim[i];
	int32_t id = graph_weight(im->g, name, e, &s, d);
	if (id >= 0)
		add_weight_values(im, id, h, 1);
	return id;
}

/* Tensor y of a computed elementwise pair, broadcast to shape r in a form
 * the compiler takes: as it is when it is r or one row (every axis but the
 * last 1); when its leading axes are r's and the rest but the last 1 (an
 * attention mask's bias [B, 1, 1, S] against scores [B, H, S, S]), the
 * rows repeated by a batched product with ones: [P, M, 1] x [P, 1, S],
 * exact (each element one value times 1). */
static int32_t
expand_rows(Imp *im, const Onnx__NodeProto *n, int32_t y, const Shape *r,
            Diag *d)
{
	const Shape *s = &graph_tensor(im->g, y)->shape;
	int k = r->rank, off = k - s->rank, p = 0;
	int64_t dim[GRAPH_MAX_RANK] = {0};
	for (int i = 0; i < k; i++)
		dim[i] = i < off ? 1 : s->dim[i - off];
	while (p < k - 1 && dim[p] == r->dim[p] && dim[p] != 1)
		p++;
	int ok = dim[k - 1] == r->dim[k - 1];
	for (int i = p; i < k - 1; i++)
		ok &= dim[i] == 1;
	if (!ok) {
		node_error(d, n,
		           "broadcasting a computed tensor other than along "
		           "its leading axes' rows (a bias [B, 1, 1, S]) is "
		           "not supported");
		return -1;
	}
	int64_t P = 1, M = 1;
	for (int i = 0; i < p; i++)
		P *= r->dim[i];
	for (int i = p; i < k - 1; i++)
		M *= r->dim[i];
	if (p == 0 || M == 1)
		return p == 0 ? y : reshape(im, y, r, NULL, d);
	Host one = {.rank = 3, .dim = {P, M, 1}, .n = P * M};
	one.v = xmalloc((size_t)one.n * sizeof *one.v);
	for (int64_t i = 0; i < one.n; i++)
		one.v[i] = 1;
	int32_t w = weight_host(im, &one, graph_tensor(im->g, y)->elem,
	                        n->output[0], "ones", d);
	free(one.v);
	Shape row = {3, {P, 1, r->dim[k - 1]}};
	int32_t t = w < 0 ? -1 : reshape(im, y, &row, NULL, d);
	if (t >= 0)
		t = graph_matmul(im->g, w, t, 0, NULL, d);
	return t < 0 ? -1 : reshape(im, t, r, NULL, d);
}

/* Add, Sub, Mul, Div with at least one computed operand. */
static int
mapped_binary(Imp *im, const Onnx__NodeProto *n, int ni, Value *a, Value *b,
              Diag *d)
{
	const char *op = n->op_type;
	char name[GRAPH_MAX_NAME + 1];
	int r = a->kind == V_TENSOR ? a->onnx_rank : a->h.rank;
	int rb = b->kind == V_TENSOR ? b->onnx_rank : b->h.rank;
	if (rb > r)
		r = rb;
	int add = op[0] == 'A' || op[0] == 'S', id;
	if (a->kind == V_TENSOR && b->kind == V_TENSOR) {
		int32_t y = b->id;
		if (op[0] == 'D')
			return node_error(
			    d, n,
			    "division by a computed tensor "
			    "is supported only inside LayerNorm's "
			    "decomposition");
		if (op[0] == 'S') {
			Host one = {.rank = 0,
			            .n = 1,
			            .type = T(FLOAT),
			            .v = (double[]){-1}};
			const Tensor *tb = tensor(im, b);
			int32_t m1 = operand_weight(im, n, &one, 1, 0,
			                            &tb->shape, "minus_one", d);
			y = m1 < 0 ? -1 : graph_mul(im->g, y, m1, NULL, d);
			if (y < 0)
				return in_node(n, -1, d);
		}
		/* the broadcast operand repeated to the other's shape */
		int32_t x = a->id;
		Shape sa = tensor(im, a)->shape,
		      sb = graph_tensor(im->g, y)->shape;
		if (!shape_equal(&sa, &sb)) {
			int a_full = shape_elems(&sa) >= shape_elems(&sb);
			int32_t *small = a_full ? &y : &x;
			*small =
			    expand_rows(im, n, *small, a_full ? &sa : &sb, d);
			if (*small < 0)
				return in_node(n, -1, d);
		}
		out_name(im, n, name);
		id = add ? graph_add(im->g, x, y, name, d)
		         : graph_mul(im->g, x, y, name, d);
		return set_tensor(im, n, ni, 0, id, r, d);
	}
	/* a computed tensor t and a constant c */
	int c_first = a->kind == V_HOST;
	Value *t = c_first ? b : a, *c = c_first ? a : b;
	if (host_is_int(c->h.type))
		return node_error(d, n,
		                  "integer constant '%.100s' used as a "
		                  "float operand",
		                  c->name);
	if (op[0] == 'D' && c_first)
		return node_error(d, n,
		                  "a constant divided by a computed "
		                  "tensor is not supported");
	int32_t x = t->id;
	const Tensor *tt = tensor(im, t);
	double mul = 1;
	if (op[0] == 'S' && c_first) { /* c - t = (-1) t + c */
		Host one = {
		    .rank = 0, .n = 1, .type = T(FLOAT), .v = (double[]){-1}};
		int32_t m1 = operand_weight(im, n, &one, 1, 0, &tt->shape,
		                            "minus_one", d);
		x = m1 < 0 ? -1 : graph_mul(im->g, x, m1, NULL, d);
		if (x < 0)
			return in_node(n, -1, d);
	} else if (op[0] == 'S') {
		mul = -1;
	}
	/* x + 0 and x * 1 are x (the mask of ones' bias, a scale of 1) */
	int same_shape = c->h.rank <= t->onnx_rank;
	for (int i = 0; same_shape && i < c->h.rank; i++)
		same_shape = c->h.dim[c->h.rank - 1 - i] == 1 ||
		             c->h.dim[c->h.rank - 1 - i] ==
		                 tt->shape.dim[tt->shape.rank - 1 - i];
	if (same_shape && x == t->id && all_equal(&c->h, add ? 0 : 1)) {
		Value *v = define(im, n->output[0], V_TENSOR, ni, d);
		if (!v)
			return IPU_EINVAL;
		v->id = t->id;
		v->onnx_rank = t->onnx_rank;
		return IPU_OK;
	}
	int32_t w = operand_weight(im, n, &c->h, mul, op[0] == 'D', &tt->shape,
	                           c->name, d);
	if (w < 0)
		return in_node(n, -1, d);
	out_name(im, n, name);
	id = add ? graph_add(im->g, x, w, name, d)
	         : graph_mul(im->g, x, w, name, d);
	return set_tensor(im, n, ni, 0, id, r, d);
}

/* f8: a computed operand of an f8 weight is cast to F143 at scale 0
 * (the kernels take one input type; DECISION in docs/onnx.md). */
static int
f8_pair(Imp *im, int32_t *x, int32_t *y, Diag *d)
{
	const ElemType f8 = {DT_F8_F143, 0};
	int fx = dtype_is_f8(graph_tensor(im->g, *x)->elem.dtype),
	    fy = dtype_is_f8(graph_tensor(im->g, *y)->elem.dtype);
	if (fx != fy && !fx)
		*x = graph_cast(im->g, *x, f8, NULL, d);
	if (fx != fy && !fy && *x >= 0)
		*y = graph_cast(im->g, *y, f8, NULL, d);
	return *x < 0 || *y < 0 ? IPU_EINVAL : IPU_OK;
}

static int
emit_matmul(Imp *im, const Onnx__NodeProto *n, int ni, Value *a, Value *b,
            int transpose_b, Diag *d)
{
	int ra = a->kind == V_TENSOR ? a->onnx_rank : a->h.rank,
	    rb = b->kind == V_TENSOR ? b->onnx_rank : b->h.rank;
	if (ra < 1 || rb < 1)
		return node_error(d, n, "MatMul of a scalar");
	int32_t x = a->kind == V_TENSOR ? a->id : weight_of(im, n, a, 1, d);
	int32_t y = b->kind == V_TENSOR ? b->id : weight_of(im, n, b, 1, d);
	if (x < 0 || y < 0 || f8_pair(im, &x, &y, d))
		return in_node(n, -1, d);
	Shape sa = graph_tensor(im->g, x)->shape,
	      sb = graph_tensor(im->g, y)->shape;
	/* vectors as a row and a column, their axes dropped again below */
	if (ra == 1) {
		sa = (Shape){2, {1, sa.dim[0]}};
		x = reshape(im, x, &sa, NULL, d);
	}
	if (rb == 1 && x >= 0) {
		sb = (Shape){2, {sb.dim[0], 1}};
		y = reshape(im, y, &sb, NULL, d);
	}
	if (x < 0 || y < 0)
		return in_node(n, -1, d);
	Shape out = sa;
	out.dim[out.rank - 1] = transpose_b ? sb.dim[0] : sb.dim[1];
	if (sb.rank == 2 && sa.rank > 2) {
		/* [.., M, K] x [K, N]: the batch axes folded into M */
		Shape flat = {2,
		              {shape_elems(&sa) / sa.dim[sa.rank - 1],
		               sa.dim[sa.rank - 1]}};
		x = reshape(im, x, &flat, NULL, d);
	} else if (sa.rank != sb.rank) {
		return node_error(d, n,
		                  "batch axes that broadcast (ranks %d "
		                  "and %d) are not supported",
		                  sa.rank, sb.rank);
	} else {
		out = sb; /* checked by the IR */
		out.dim[out.rank - 2] = sa.dim[sa.rank - 2];
		out.dim[out.rank - 1] =
		    transpose_b ? sb.dim[sb.rank - 2] : sb.dim[sb.rank - 1];
	}
	int rout = ra > rb ? ra : rb;
	if (ra == 1) {
		out.dim[out.rank - 2] = out.dim[out.rank - 1];
		out.dim[--out.rank] = 0;
		rout = rb - 1;
	}
	if (rb == 1) {
		out.dim[--out.rank] = 0;
		rout = ra - 1;
	}
	if (out.rank == 0)
		out = (Shape){1, {1}};
	char name[GRAPH_MAX_NAME + 1];
	ir_name(im, n->output[0], name);
	int direct = sa.rank == sb.rank && ra > 1 && rb > 1;
	int32_t id = x < 0 ? -1
	                   : graph_matmul(im->g, x, y,
	                                  transpose_b ? GRAPH_TRANSPOSE_B : 0,
	                                  direct ? name : NULL, d);
	if (id >= 0 && !direct)
		id = graph_reshape(im->g, id, &out, name, d);
	return set_tensor(im, n, ni, 0, id, rout, d);
}

static int
emit_gemm(Imp *im, const Onnx__NodeProto *n, int ni, Value **in, Diag *d)
{
	int64_t ta, tb;
	double alpha, beta;
	int e = attr_int(n, "transA", 0, &ta, d);
	if (!e)
		e = attr_int(n, "transB", 0, &tb, d);
	if (!e)
		e = attr_float(n, "alpha", 1, &alpha, d);
	if (!e)
		e = attr_float(n, "beta", 1, &beta, d);
	if (e)
		return e;
	if (ta || in[0]->kind != V_TENSOR || in[0]->onnx_rank != 2)
		return node_error(d, n,
		                  "only A computed, [M, K], not "
		                  "transposed, is supported");
	if (alpha != 1 || (in[2] && beta != 1))
		return node_error(d, n,
		                  "alpha and beta other than 1 are not "
		                  "supported");
	if (in[1]->kind == V_TENSOR || in[1]->h.rank != 2)
		return node_error(d, n,
		                  "B must be a constant [K, N] or [N, K]");
	char mm[300];
	snprintf(mm, sizeof mm, "%s.mm", n->output[0]);
	char *keep = n->output[0];
	if (in[2])
		n->output[0] = mm;
	e = emit_matmul(im, n, ni, in[0], in[1], (int)tb, d);
	n->output[0] = keep;
	if (e || !in[2])
		return e;
	/* found again: defining mm may have moved the values */
	Value *p = find(im, mm), *c = find(im, n->input[2]);
	Onnx__NodeProto add = *n;
	char *ins[2] = {mm, n->input[2]};
	add.op_type = "Add";
	add.input = ins;
	add.n_input = 2;
	return mapped_binary(im, &add, ni, p, c, d);
}

static int
emit_reshape_to(Imp *im, const Onnx__NodeProto *n, int ni, size_t k, Value *x,
                int rank, const int64_t *dim, Diag *d)
{
	Shape s;
	if (ir_shape(n, rank, dim, &s, d))
		return IPU_EINVAL;
	char name[GRAPH_MAX_NAME + 1];
	ir_name(im, n->output[k], name);
	/* a wide value narrowed once its last axis is not 1 */
	int narrow = x->wide && s.dim[s.rank - 1] > 1;
	int32_t id = graph_reshape(im->g, x->id, &s, narrow ? NULL : name, d);
	if (id >= 0 && narrow)
		id = graph_cast(im->g, id, im->act, name, d);
	if (set_tensor(im, n, ni, k, id, rank, d))
		return IPU_EINVAL;
	find(im, n->output[k])->wide = x->wide && !narrow;
	return IPU_OK;
}

static int
need_host(const Onnx__NodeProto *n, const Value *v, const char *what, Diag *d)
{
	if (!v || v->kind != V_HOST)
		return node_error(d, n,
		                  "%s must be known at import time (a "
		                  "constant, or computed from shapes)",
		                  what);
	return IPU_OK;
}

/* The ONNX dims of a computed value. */
static void
onnx_dims(const Imp *im, const Value *v, int64_t *dim)
{
	const Tensor *t = tensor(im, v);
	for (int i = 0; i < v->onnx_rank; i++)
		dim[i] = t->shape.dim[i];
}

static int64_t
gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* x[b:e] as output k of n. The compiler slices whole rows only, so a
 * slice that cuts the last axis L is taken as rows of x viewed as
 * [.., L / g, g], g = gcd(b, e, L) (a Split of q, k, v: g = the part). */
static int
emit_slice(Imp *im, const Onnx__NodeProto *n, int ni, size_t k, Value *x,
           const int64_t *b, const int64_t *e, Diag *d)
{
	const Tensor *t = tensor(im, x);
	Shape out = t->shape;
	int r = t->shape.rank, whole = 1;
	OpAttrs a = {0};
	a.begin.rank = a.end.rank = r;
	for (int i = 0; i < r; i++) {
		a.begin.dim[i] = b[i];
		a.end.dim[i] = e[i];
		out.dim[i] = e[i] - b[i];
		if (e[i] <= b[i])
			return node_error(d, n, "an empty slice");
		whole &= b[i] == 0 && e[i] == t->shape.dim[i];
	}
	char name[GRAPH_MAX_NAME + 1];
	int64_t L = t->shape.dim[r - 1],
	        g = gcd64(gcd64(b[r - 1], e[r - 1]), L);
	int32_t in = x->id, id;
	if (!whole && g < L && g > 1 && r < GRAPH_MAX_RANK) {
		Shape v = t->shape;
		v.dim[r - 1] = L / g;
		v.dim[r] = g;
		v.rank = r + 1;
		a.begin.rank = a.end.rank = r + 1;
		a.begin.dim[r - 1] = b[r - 1] / g;
		a.end.dim[r - 1] = e[r - 1] / g;
		a.begin.dim[r] = 0;
		a.end.dim[r] = g;
		in = reshape(im, in, &v, NULL, d);
		id = in < 0 ? -1 : op1(im, OP_SLICE, in, &a, NULL, d);
		id = id < 0 ? -1
		            : graph_reshape(
		                  im->g, id, &out,
		                  (ir_name(im, n->output[k], name), name), d);
		return set_tensor(im, n, ni, k, id, x->onnx_rank, d);
	}
	ir_name(im, n->output[k], name);
	id = whole ? graph_reshape(im->g, in, &t->shape, name, d)
	           : op1(im, OP_SLICE, in, &a, name, d);
	return set_tensor(im, n, ni, k, id, x->onnx_rank, d);
}

static int
emit_slice_node(Imp *im, const Onnx__NodeProto *n, int ni, Value **in, int nin,
                Diag *d)
{
	for (int k = 1; k < nin; k++)
		if (in[k] &&
		    need_host(n, in[k], "starts, ends, axes, steps", d))
			return IPU_EINVAL;
	Value *x = in[0];
	int64_t dim[HOST_MAX_RANK], b[HOST_MAX_RANK] = {0}, e[HOST_MAX_RANK];
	onnx_dims(im, x, dim);
	/* fold.c's Slice on an index tensor gives the ranges */
	Host idx[HOST_MAX_RANK];
	int r = x->onnx_rank;
	for (int i = 0; i < r; i++)
		e[i] = dim[i];
	/* run the slice on a host tensor of the same shape whose values are
	 * linear indices: its first and last element give begin and end */
	Host lin;
	int err = host_alloc(&lin, T(INT64), r, dim, d);
	if (err)
		return node_error(d, n, "%s", d->msg);
	for (int64_t i = 0; i < lin.n; i++)
		lin.v[i] = (double)i;
	Host *args[5] = {&lin, NULL, NULL, NULL, NULL};
	for (int k = 1; k < nin && k < 5; k++)
		args[k] = in[k] ? &in[k]->h : NULL;
	Host out;
	err = fold_node(n, args, nin, &out, d);
	host_tensor_free(&lin);
	(void)idx;
	if (err)
		return err;
	if (!out.n) {
		host_tensor_free(&out);
		return node_error(d, n, "an empty slice");
	}
	int64_t first = (int64_t)out.v[0], last = (int64_t)out.v[out.n - 1];
	for (int i = r - 1; i >= 0; i--) {
		b[i] = first % dim[i];
		e[i] = last % dim[i] + 1;
		first /= dim[i];
		last /= dim[i];
		if (out.dim[i] != e[i] - b[i]) {
			host_tensor_free(&out);
			return node_error(d, n,
			                  "steps other than 1 are not "
			                  "supported");
		}
	}
	host_tensor_free(&out);
	return emit_slice(im, n, ni, 0, x, b, e, d);
}

static int
emit_split(Imp *im, const Onnx__NodeProto *n, int ni, Value **in, int nin,
           Diag *d)
{
	Value *x = in[0];
	int64_t a;
	int axis, e = attr_int(n, "axis", 0, &a, d);
	if (!e)
		e = axis_norm(n, a, x->onnx_rank, &axis, d);
	if (e)
		return e;
	int64_t dim[HOST_MAX_RANK], b[HOST_MAX_RANK] = {0}, end[HOST_MAX_RANK];
	onnx_dims(im, x, dim);
	int64_t len = dim[axis], at = 0, outs = (int64_t)n->n_output;
	if (nin > 1 && in[1] && need_host(n, in[1], "split", d))
		return IPU_EINVAL;
	const Host *sp = nin > 1 && in[1] ? &in[1]->h : NULL;
	if (sp && sp->n != outs)
		return node_error(d, n, "split has %lld sizes for %lld outputs",
		                  (long long)sp->n, (long long)outs);
	if (!sp && len % outs)
		return node_error(d, n,
		                  "%lld does not split in %lld equal "
		                  "parts",
		                  (long long)len, (long long)outs);
	for (int i = 0; i < x->onnx_rank; i++)
		end[i] = dim[i];
	for (size_t k = 0; k < n->n_output; k++) {
		int64_t part = sp ? (int64_t)sp->v[k] : len / outs;
		if (part < 1 || at + part > len)
			return node_error(d, n,
			                  "split sizes do not add up to "
			                  "%lld",
			                  (long long)len);
		b[axis] = at;
		end[axis] = at + part;
		at += part;
		if (!n->output[k][0])
			continue;
		if ((e = emit_slice(im, n, ni, k, x, b, end, d)))
			return e;
	}
	if (at != len)
		return node_error(d, n, "split sizes do not add up to %lld",
		                  (long long)len);
	return IPU_OK;
}

static int
is_float_type(int64_t t)
{
	return t == T(FLOAT) || t == T(FLOAT16) || t == T(DOUBLE) ||
	       t == T(BFLOAT16);
}

/* Is the list of count ints (absent: count -1) all equal to want? */
static int
ints_all(const int64_t *v, int count, int64_t want)
{
	for (int i = 0; i < count; i++)
		if (v[i] != want)
			return 0;
	return 1;
}

/* The mean of x over its last axis K as a matmul by a column of 1/K: x
 * is [M, K], the result [M, 1] (the IR has no reduction but the GEMM).
 * In f32 (x cast to it if need be): a column of f16 would be half words,
 * which the exchange does not move; the caller casts the result back. */
static int32_t
mean_rows(Imp *im, const Onnx__NodeProto *n, int32_t x, Diag *d)
{
	Shape s = {2, {graph_tensor(im->g, x)->shape.dim[1], 1}};
	char name[GRAPH_MAX_NAME + 1], hint[300];
	snprintf(hint, sizeof hint, "%s.mean", n->output[0]);
	ir_name(im, hint, name);
	int32_t w = graph_weight(im->g, name, (ElemType){DT_F32, 0}, &s, d);
	if (w < 0)
		return -1;
	Host col = {.rank = 2, .dim = {s.dim[0], 1}, .n = s.dim[0]};
	col.v = xmalloc((size_t)col.n * sizeof *col.v);
	for (int64_t i = 0; i < col.n; i++)
		col.v[i] = 1.0 / (double)col.n;
	add_weight_values(im, w, &col, 1);
	free(col.v);
	if (graph_tensor(im->g, x)->elem.dtype != DT_F32)
		x = graph_cast(im->g, x, (ElemType){DT_F32, 0}, NULL, d);
	return x < 0 ? -1 : graph_matmul(im->g, x, w, 0, NULL, d);
}

/* The mean of x over the axes red[i] != 0 (kept as 1 if keep): the
 * reduced axes moved last (a transpose, unless they are last already),
 * the tensor viewed as [M, K], its rows' means by mean_rows. */
static int
emit_mean_axes(Imp *im, const Onnx__NodeProto *n, int ni, Value *x,
               const int *red, int keep, Diag *d)
{
	int r = x->onnx_rank, nout = 0;
	int64_t dim[HOST_MAX_RANK], out[HOST_MAX_RANK];
	onnx_dims(im, x, dim);
	OpAttrs at = {0};
	at.perm.rank = r;
	int64_t M = 1, K = 1;
	int moved = 0, k = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < r; i++)
			if (red[i] == pass) {
				at.perm.dim[k++] = i;
				*(pass ? &K : &M) *= dim[i];
			}
	for (int i = 0; i < r; i++)
		moved |= at.perm.dim[i] != i;
	for (int i = 0; i < r; i++)
		if (!red[i] || keep)
			out[nout++] = red[i] ? 1 : dim[i];
	int32_t t = x->id;
	if (moved)
		t = op1(im, OP_TRANSPOSE, t, &at, NULL, d);
	Shape s = {2, {M, K}}, so;
	if (t >= 0)
		t = reshape(im, t, &s, NULL, d);
	if (t >= 0)
		t = mean_rows(im, n, t, d);
	if (t < 0 || ir_shape(n, nout, out, &so, d))
		return in_node(n, -1, d);
	char name[GRAPH_MAX_NAME + 1];
	int cast = graph_tensor(im->g, x->id)->elem.dtype != DT_F32;
	/* [.., 1] in f16 would be pieces of half words, which the exchange
	 * does not move: such a result stays f32 (wide) until a reshape
	 * gives it a longer last axis */
	int wide = cast && so.dim[so.rank - 1] == 1 && M > 1;
	if (wide) {
		t = graph_reshape(im->g, t, &so, out_name(im, n, name), d);
		if (set_tensor(im, n, ni, 0, t, nout, d))
			return IPU_EINVAL;
		find(im, n->output[0])->wide = 1;
		return IPU_OK;
	}
	if (cast) {
		/* cast as [M] rows: a cast of [.., 1] would be pieces of
		 * half words, which the exchange does not move */
		Shape m1 = {1, {M}};
		t = graph_reshape(im->g, t, &m1, NULL, d);
		if (t >= 0)
			t = graph_cast(im->g, t,
			               graph_tensor(im->g, x->id)->elem, NULL,
			               d);
	}
	if (t >= 0)
		t = graph_reshape(im->g, t, &so, out_name(im, n, name), d);
	return set_tensor(im, n, ni, 0, t, nout, d);
}

/* ReduceMean over any axes of a computed tensor, outside LayerNorm's
 * form. */
static int
emit_mean(Imp *im, const Onnx__NodeProto *n, int ni, Value *x, Diag *d)
{
	int r = x->onnx_rank, na, e;
	int64_t axes[HOST_MAX_RANK], keep;
	if ((e = attr_ints(n, "axes", axes, HOST_MAX_RANK, &na, d)) ||
	    (e = attr_int(n, "keepdims", 1, &keep, d)))
		return e;
	if (n->n_input > 1)
		return node_error(d, n,
		                  "axes as an input (opset 18) is not "
		                  "supported");
	int red[HOST_MAX_RANK] = {0};
	for (int i = 0; i < (na < 0 ? r : na); i++) {
		int a = i;
		if (na >= 0 && (e = axis_norm(n, axes[i], r, &a, d)))
			return e;
		if (red[a])
			return node_error(d, n, "axis %d is listed twice", a);
		red[a] = 1;
	}
	return emit_mean_axes(im, n, ni, x, red, keep != 0, d);
}

enum { WIN_MAX = 1 << 20 }; /* kernel_shape, strides, dilations */

/* A 2-D pooling or convolution window: kernel k, strides s, dilations dl,
 * ONNX pads (h, w begin; h, w end), ceil_mode; o the output size. */
typedef struct {
	int64_t k[2], s[2], dl[2], pads[4], o[2];
	int ceil;
} Win;

/* The output size along spatial axis a of an image of L elements: ONNX's
 * (and PyTorch's) floor or ceiling, a ceil_mode window that would start
 * in the end padding dropped; 0 if the kernel's extent is larger than
 * the padded image. */
static int64_t
win_out(const Win *w, int a, int64_t L)
{
	int64_t span =
	    L + w->pads[a] + w->pads[a + 2] - (w->dl[a] * (w->k[a] - 1) + 1);
	if (span < 0)
		return 0;
	int64_t o = (w->ceil ? span + w->s[a] - 1 : span) / w->s[a] + 1;
	if (w->ceil && (o - 1) * w->s[a] >= L + w->pads[a])
		o--;
	return o;
}

/* How many taps of window j along axis a fall in [lo, hi) (the image's
 * coordinates). */
static int64_t
win_count(const Win *w, int a, int64_t j, int64_t lo, int64_t hi)
{
	int64_t c = 0;
	for (int64_t i = 0; i < w->k[a]; i++) {
		int64_t p = j * w->s[a] + i * w->dl[a] - w->pads[a];
		c += p >= lo && p < hi;
	}
	return c;
}

/* The spatial sizes L of x [N, C, H, W] (dims dim) with the Pad of zeros
 * it holds (Value.pad). */
static void
win_len(const Value *x, const int64_t *dim, int64_t L[2])
{
	for (int a = 0; a < 2; a++)
		L[a] = dim[2 + a] + x->pad[a] + x->pad[a + 2];
}

static int
is_str(const Onnx__AttributeProto *a, const char *s)
{
	return a->s.len == strlen(s) && !memcmp(a->s.data, s, a->s.len);
}

/* The window attributes of a 2-D Conv or pooling node whose input has L
 * elements a spatial axis (an absorbed Pad's included); kernel_shape as
 * kw (a Conv's weight) when absent (NULL: required). Errors name the
 * attribute. */
static int
win_attrs(const Onnx__NodeProto *n, const int64_t *kw, const int64_t L[2],
          Win *w, Diag *d)
{
	int64_t ks[HOST_MAX_RANK], st[HOST_MAX_RANK], pads[2 * HOST_MAX_RANK],
	    dil[HOST_MAX_RANK], ceil_mode;
	int nks, nst, npads, ndil, e;
	if ((e = attr_ints(n, "kernel_shape", ks, HOST_MAX_RANK, &nks, d)) ||
	    (e = attr_ints(n, "strides", st, HOST_MAX_RANK, &nst, d)) ||
	    (e = attr_ints(n, "pads", pads, 2 * HOST_MAX_RANK, &npads, d)) ||
	    (e = attr_ints(n, "dilations", dil, HOST_MAX_RANK, &ndil, d)) ||
	    (e = attr_int(n, "ceil_mode", 0, &ceil_mode, d)))
		return e;
	const Onnx__AttributeProto *ap = attr_find(n, "auto_pad");
	int lower = ap && is_str(ap, "SAME_LOWER"),
	    same = lower || (ap && is_str(ap, "SAME_UPPER"));
	if (ap && !same && !is_str(ap, "NOTSET") && !is_str(ap, "VALID"))
		return node_error(d, n,
		                  "attribute auto_pad: NOTSET, VALID, "
		                  "SAME_UPPER or SAME_LOWER expected, not "
		                  "'%.*s'",
		                  (int)(ap->s.len < 40 ? ap->s.len : 40),
		                  (const char *)ap->s.data);
	if (same && (npads >= 0 || ceil_mode))
		return node_error(d, n,
		                  "attribute auto_pad SAME_%s with pads or "
		                  "ceil_mode is not supported (ONNX: pads "
		                  "are computed)",
		                  lower ? "LOWER" : "UPPER");
	memset(w, 0, sizeof *w);
	w->ceil = ceil_mode != 0;
	if (nks < 0 && !kw)
		return node_error(d, n, "attribute kernel_shape is required");
	if (nks >= 0 &&
	    (nks != 2 || (kw && (ks[0] != kw[0] || ks[1] != kw[1]))))
		return node_error(d, n,
		                  "attribute kernel_shape: 2 values expected "
		                  "(a Conv's: its weight's)");
	if ((nst >= 0 && nst != 2) || (ndil >= 0 && ndil != 2) ||
	    (npads >= 0 && npads != 4))
		return node_error(d, n,
		                  "attributes strides, dilations, pads: 2, 2 "
		                  "and 4 values expected (2-D)");
	for (int a = 0; a < 2; a++) {
		w->k[a] = nks >= 0 ? ks[a] : kw[a];
		w->s[a] = nst >= 0 ? st[a] : 1;
		w->dl[a] = ndil >= 0 ? dil[a] : 1;
		/* bounded so that the window arithmetic cannot overflow */
		if (w->k[a] < 1 || w->s[a] < 1 || w->dl[a] < 1 ||
		    w->k[a] > WIN_MAX || w->s[a] > WIN_MAX ||
		    w->dl[a] > WIN_MAX)
			return node_error(
			    d, n,
			    "attributes kernel_shape, strides, "
			    "dilations: values in 1 .. 2^20 expected");
	}
	for (int i = 0; i < 4; i++) {
		w->pads[i] =
		    npads >= 0 && !(ap && is_str(ap, "VALID")) ? pads[i] : 0;
		if (w->pads[i] < 0)
			return node_error(d, n,
			                  "attribute pads: negative values are "
			                  "not supported");
	}
	/* SAME: ceil(L / s) windows, the padding they need split in two,
	 * the odd one at the end (UPPER) or the beginning (LOWER) */
	for (int a = 0; same && a < 2; a++) {
		int64_t o = (L[a] + w->s[a] - 1) / w->s[a],
		        t = (o - 1) * w->s[a] + w->dl[a] * (w->k[a] - 1) + 1 -
		            L[a];
		t = t < 0 ? 0 : t;
		w->pads[a] = lower ? (t + 1) / 2 : t / 2;
		w->pads[a + 2] = t - w->pads[a];
	}
	return IPU_OK;
}

/* Is every window along both axes one with an image element (a MaxPool's
 * padding is never its maximum, an AveragePool's count never 0)? Else an
 * error naming pads. */
static int
win_hits(const Onnx__NodeProto *n, const Win *w, const int64_t *dim,
         const int64_t *lo, const int64_t *hi, Diag *d)
{
	for (int a = 0; a < 2; a++)
		for (int64_t j = 0; j < w->o[a]; j++)
			if (!win_count(w, a, j, lo[a], dim[2 + a] + hi[a]))
				return node_error(
				    d, n,
				    "attribute pads: window %lld of spatial "
				    "axis %d holds no image element (pads "
				    "larger than the kernel's extent are not "
				    "supported)",
				    (long long)j, a);
	return IPU_OK;
}

/* x joined along axis a (before the last) with a constant `fill` of
 * `len` rows on one side (after: 1 = after x). */
static int32_t
pad_axis(Imp *im, const Onnx__NodeProto *n, int32_t x, int a, int64_t len,
         int after, double fill, Diag *d)
{
	const Shape *s = &graph_tensor(im->g, x)->shape;
	int64_t dim[HOST_MAX_RANK];
	for (int i = 0; i < s->rank; i++)
		dim[i] = s->dim[i];
	dim[a] = len;
	Host h = {0};
	if (host_alloc(&h, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, s->rank, dim,
	               d))
		return -1;
	for (int64_t i = 0; i < h.n; i++)
		h.v[i] = fill;
	char hint[300];
	snprintf(hint, sizeof hint, "%s.pad", n->output[0]);
	int32_t w = weight_new(im, n, &h, 1, hint, d);
	host_tensor_free(&h);
	int32_t io[GRAPH_MAX_INPUTS] = {after ? x : w, after ? w : x, -1};
	OpAttrs at = {.axis = a};
	return w < 0 ? -1 : graph_op(im->g, OP_CONCAT, io, &at, NULL, d);
}

enum { TAPS_MAX = 64 }; /* kernel elements of a pooling or padded Conv */

/* The window taps of a 2-D pooling or convolution over x [N, C, H, W]
 * (window w, its output size set here) padded with `fill`: tap[i kw + j]
 * is [OH, OW, N, C], element (oh, ow) the image's (oh s0 + i dl0 -
 * pads[0], ow s1 + j dl1 - pads[1]). The image goes channels last,
 * [H, W, N, C], so that every cut is of whole rows (the compiler's
 * slices); each spatial axis is padded (or cut) to Lq = s ((e - 1) / s +
 * O) elements, e = dl (k - 1) + 1 the kernel's extent, and viewed as
 * [Lq / s, s], so that a tap is one slice with steps of 1. Rows of an odd
 * C in f16 are not whole words, which the exchange moves: there the
 * image gets one more channel of `fill` first (dim[1] says how many the
 * taps have). */
static int
emit_taps(Imp *im, const Onnx__NodeProto *n, const Value *x, Win *w,
          double fill, int32_t *tap, int64_t *dim, Diag *d)
{
	onnx_dims(im, x, dim);
	if (w->k[0] * w->k[1] > TAPS_MAX)
		return node_error(d, n,
		                  "attribute kernel_shape: a kernel of %lld x "
		                  "%lld; at most %d elements are supported "
		                  "(but for a Conv whose strides are its "
		                  "kernel, unpadded)",
		                  (long long)w->k[0], (long long)w->k[1],
		                  TAPS_MAX);
	for (int a = 0; a < 2; a++)
		if (!(w->o[a] = win_out(w, a, dim[2 + a])))
			return node_error(
			    d, n,
			    "attributes kernel_shape, dilations: the "
			    "kernel's extent %lld is larger than the padded "
			    "image (%lld)",
			    (long long)(w->dl[a] * (w->k[a] - 1) + 1),
			    (long long)(dim[2 + a] + w->pads[a] +
			                w->pads[a + 2]));
	int32_t t = x->id;
	if (dim[1] % 2 && dtype_size(im->act.dtype) < 4) {
		t = pad_axis(im, n, t, 1, 1, 1, fill, d);
		dim[1]++;
	}
	OpAttrs at = {.perm = {4, {2, 3, 0, 1}}};
	if (t >= 0)
		t = op1(im, OP_TRANSPOSE, t, &at, NULL, d);
	int64_t q[2];
	for (int a = 0; a < 2 && t >= 0; a++) {
		int64_t L = dim[2 + a], s = w->s[a];
		q[a] = s * ((w->dl[a] * (w->k[a] - 1)) / s + w->o[a]);
		int64_t after = q[a] - w->pads[a] - L;
		if (after < 0) { /* rows no window reads */
			OpAttrs sl = {
			    .begin = {4, {0}},
			    .end = {4, {dim[2], dim[3], dim[0], dim[1]}}};
			sl.end.dim[a] = L + after;
			t = op1(im, OP_SLICE, t, &sl, NULL, d);
		}
		if (t >= 0 && w->pads[a] > 0)
			t = pad_axis(im, n, t, a, w->pads[a], 0, fill, d);
		if (t >= 0 && after > 0)
			t = pad_axis(im, n, t, a, after, 1, fill, d);
	}
	const int64_t *s = w->s;
	Shape v = {6, {q[0] / s[0], s[0], q[1] / s[1], s[1], dim[0], dim[1]}};
	if (t >= 0)
		t = reshape(im, t, &v, NULL, d);
	Shape o = {4, {w->o[0], w->o[1], dim[0], dim[1]}};
	for (int i = 0; i < w->k[0] && t >= 0; i++)
		for (int j = 0; j < w->k[1]; j++) {
			int64_t y = i * w->dl[0], z = j * w->dl[1];
			OpAttrs sl = {.begin = {6,
			                        {y / s[0], y % s[0], z / s[1],
			                         z % s[1], 0, 0}},
			              .end = {6,
			                      {y / s[0] + w->o[0], y % s[0] + 1,
			                       z / s[1] + w->o[1], z % s[1] + 1,
			                       dim[0], dim[1]}}};
			int32_t c = op1(im, OP_SLICE, t, &sl, NULL, d);
			tap[i * w->k[1] + j] =
			    c < 0 ? -1 : reshape(im, c, &o, NULL, d);
			if (tap[i * w->k[1] + j] < 0)
				return in_node(n, -1, d);
		}
	return in_node(n, t, d);
}

/* The windows' taps [OH, OW, N, C'] back to ONNX's [N, C, OH, OW] (the
 * first C channels). */
static int
emit_taps_done(Imp *im, const Onnx__NodeProto *n, int ni, int32_t t, int64_t C,
               Diag *d)
{
	const Shape *s = &graph_tensor(im->g, t)->shape;
	int cut = s->dim[3] != C;
	OpAttrs at = {.perm = {4, {2, 3, 0, 1}}},
	        sl = {.begin = {4, {0}},
	              .end = {4, {s->dim[2], C, s->dim[0], s->dim[1]}}};
	char name[GRAPH_MAX_NAME + 1];
	t = op1(im, OP_TRANSPOSE, t, &at, cut ? NULL : out_name(im, n, name),
	        d);
	if (t >= 0 && cut)
		t = op1(im, OP_SLICE, t, &sl, out_name(im, n, name), d);
	return set_tensor(im, n, ni, 0, t, 4, d);
}

/* The taps of window w combined by the binary op k (max, add). */
static int32_t
taps_reduce(Imp *im, const Win *w, const int32_t *tap, OpKind k, Diag *d)
{
	int32_t m = tap[0];
	for (int i = 1; i < w->k[0] * w->k[1] && m >= 0; i++) {
		int32_t io[GRAPH_MAX_INPUTS] = {m, tap[i], -1};
		m = graph_op(im->g, k, io, NULL, NULL, d);
	}
	return m;
}

/* AveragePool other than windows that tile the image (padded,
 * overlapping, ceil_mode, or after a Pad of zeros it absorbs: x->pad):
 * the sum of the taps (emit_taps, padded with zeros) times a weight of
 * 1 / the count of each window, [OH, OW, 1, 1]. The count is of the taps
 * inside the image and the absorbed Pad's zeros, with count_include_pad
 * also inside the pads (PyTorch's: within the padded image, so a
 * ceil_mode window's taps past it are not counted). */
static int
emit_pool_taps(Imp *im, const Onnx__NodeProto *n, int ni, Value *x, Win *w,
               Diag *d)
{
	int64_t inc, dim[HOST_MAX_RANK], C = tensor(im, x)->shape.dim[1];
	int e;
	if ((e = attr_int(n, "count_include_pad", 0, &inc, d)))
		return e;
	int32_t tap[TAPS_MAX];
	for (int i = 0; i < 4; i++)
		w->pads[i] += x->pad[i];
	if ((e = emit_taps(im, n, x, w, 0, tap, dim, d)))
		return e;
	onnx_dims(im, x, dim); /* the image's, not a padding channel's */
	int64_t lo[2], hi[2];
	for (int a = 0; a < 2; a++) {
		lo[a] = -(inc ? w->pads[a] : x->pad[a]);
		hi[a] = inc ? w->pads[a + 2] : x->pad[a + 2];
	}
	if ((e = win_hits(n, w, dim, lo, hi, d)))
		return e;
	int32_t t = taps_reduce(im, w, tap, OP_ADD, d);
	if (t < 0)
		return in_node(n, -1, d);
	Host c = {0};
	int64_t cd[4] = {w->o[0], w->o[1], 1, 1};
	if ((e = host_alloc(&c, T(FLOAT), 4, cd, d)))
		return e;
	for (int64_t i = 0; i < w->o[0]; i++)
		for (int64_t j = 0; j < w->o[1]; j++)
			c.v[i * w->o[1] + j] =
			    1.0 /
			    (double)(win_count(w, 0, i, lo[0], dim[2] + hi[0]) *
			             win_count(w, 1, j, lo[1], dim[3] + hi[1]));
	int32_t cw = operand_weight(
	    im, n, &c, 1, 0, &graph_tensor(im->g, t)->shape, n->output[0], d);
	host_tensor_free(&c);
	t = cw < 0 ? -1 : graph_mul(im->g, t, cw, NULL, d);
	return t < 0 ? in_node(n, -1, d) : emit_taps_done(im, n, ni, t, C, d);
}

/* GlobalAveragePool: the mean over the spatial axes, kept as 1s.
 * AveragePool with strides equal to its kernel and no padding (the
 * windows tile the image): the image [N, C, H, W] viewed as
 * [N, C, H/kh, kh, W/kw, kw], the mean over the kh and kw axes; other
 * AveragePools through emit_pool_taps. */
static int
emit_pool(Imp *im, const Onnx__NodeProto *n, int ni, Value *x, Diag *d)
{
	int r = x->onnx_rank, red[HOST_MAX_RANK] = {0}, e;
	if (r < 3)
		return node_error(d, n,
		                  "an input of rank %d (N, C and "
		                  "spatial axes expected)",
		                  r);
	if (!strcmp(n->op_type, "GlobalAveragePool")) {
		for (int i = 2; i < r; i++)
			red[i] = 1;
		return emit_mean_axes(im, n, ni, x, red, 1, d);
	}
	if (r != 4)
		return node_error(d, n,
		                  "a %d-D input: only 2-D pooling ([N, C, H, "
		                  "W]) is supported",
		                  r);
	Win w;
	int64_t dim[HOST_MAX_RANK], L[2];
	onnx_dims(im, x, dim);
	win_len(x, dim, L);
	if ((e = win_attrs(n, NULL, L, &w, d)))
		return e;
	int tiles = !w.ceil && ints_all(w.pads, 4, 0) && ints_all(x->pad, 4, 0);
	for (int i = 0; tiles && i < 2; i++)
		tiles = w.s[i] == w.k[i] && w.dl[i] == 1 &&
		        dim[2 + i] % w.k[i] == 0;
	if (!tiles)
		return emit_pool_taps(im, n, ni, x, &w, d);
	int64_t v[6] = {dim[0], dim[1],          dim[2] / w.k[0],
	                w.k[0], dim[3] / w.k[1], w.k[1]};
	char hint[300], name[GRAPH_MAX_NAME + 1];
	snprintf(hint, sizeof hint, "%s.windows", n->output[0]);
	ir_name(im, hint, name);
	Shape s = {6, {v[0], v[1], v[2], v[3], v[4], v[5]}};
	int32_t t = graph_reshape(im->g, x->id, &s, name, d);
	if (t < 0)
		return in_node(n, -1, d);
	Value wv = *x;
	wv.id = t;
	wv.onnx_rank = 6;
	red[3] = red[5] = 1;
	return emit_mean_axes(im, n, ni, &wv, red, 0, d);
}

/* MaxPool 2-D: the IR max of its windows' taps (emit_taps), the padding
 * the lowest finite value of the activation type, which no window takes
 * since each holds an image element (win_hits). Exact: max picks one of
 * its inputs. */
static int
emit_maxpool(Imp *im, const Onnx__NodeProto *n, int ni, Value *x, Diag *d)
{
	int64_t order;
	int e;
	Win w;
	if ((e = attr_int(n, "storage_order", 0, &order, d)))
		return e;
	if (x->onnx_rank != 4)
		return node_error(d, n,
		                  "only 2-D max pooling ([N, C, H, W]) is "
		                  "supported");
	if (order)
		return node_error(d, n,
		                  "attribute storage_order 1 (the Indices "
		                  "output's order) is not supported");
	if (n->n_output > 2)
		return node_error(d, n, "%zu outputs (at most 2)", n->n_output);
	if (n->n_output > 1 && n->output[1][0])
		return node_error(d, n,
		                  "the Indices output ('%.100s') is not "
		                  "supported",
		                  n->output[1]);
	int32_t tap[TAPS_MAX];
	int64_t dim[HOST_MAX_RANK], C = tensor(im, x)->shape.dim[1],
	                            zero[2] = {0, 0}, L[2];
	onnx_dims(im, x, dim);
	win_len(x, dim, L);
	if ((e = win_attrs(n, NULL, L, &w, d)))
		return e;
	double low = -act_max(im->act.dtype);
	if ((e = emit_taps(im, n, x, &w, low, tap, dim, d)))
		return e;
	onnx_dims(im, x, dim);
	if ((e = win_hits(n, &w, dim, zero, zero, d)))
		return e;
	int32_t m = taps_reduce(im, &w, tap, OP_MAX, d);
	return m < 0 ? in_node(n, -1, d) : emit_taps_done(im, n, ni, m, C, d);
}

/* The bias b [O] (if any) added to t [M, O]. */
static int32_t
conv_bias(Imp *im, const Onnx__NodeProto *n, int32_t t, const Value *b, Diag *d)
{
	if (t < 0 || !b)
		return t;
	int32_t bw = operand_weight(
	    im, n, &b->h, 1, 0, &graph_tensor(im->g, t)->shape, n->input[2], d);
	return bw < 0 ? -1 : graph_add(im->g, t, bw, NULL, d);
}

/* Conv with padding, dilations or strides other than its kernel (a 3x3
 * of stride 1 and padding 1): im2col. The taps of its windows
 * (emit_taps, padded with zeros) [OH, OW, N, C] as [M, 1, C], M = OH OW
 * N, joined (IR concats) into rows [M, kh kw C], times the weight w
 * [O, C, kh, kw] reordered on the host to [O, kh, kw, C]
 * (`transpose_b`); the bias added, the result [OH, OW, N, O] back to
 * [N, O, OH, OW]. Exact: the same products as the convolution, summed in
 * another order. */
static int
emit_conv_taps(Imp *im, const Onnx__NodeProto *n, int ni, Value *x,
               const Value *w, const Value *b, Win *win, Diag *d)
{
	int64_t O = w->h.dim[0], C = w->h.dim[1];
	int32_t tap[TAPS_MAX];
	int64_t dim[HOST_MAX_RANK];
	int e = emit_taps(im, n, x, win, 0, tap, dim, d);
	if (e)
		return e;
	int64_t N = dim[0], Cz = dim[1], M = win->o[0] * win->o[1] * N,
	        K = win->k[0] * win->k[1];
	Shape row = {3, {M, 1, Cz}};
	int32_t t = reshape(im, tap[0], &row, NULL, d);
	for (int i = 1; i < K && t >= 0; i++) {
		int32_t io[GRAPH_MAX_INPUTS] = {
		    t, reshape(im, tap[i], &row, NULL, d), -1};
		OpAttrs at = {.axis = 1};
		t = io[1] < 0 ? -1
		              : graph_op(im->g, OP_CONCAT, io, &at, NULL, d);
	}
	Shape sa = {2, {M, K * Cz}};
	if (t >= 0)
		t = reshape(im, t, &sa, NULL, d);
	Value wv = *w;
	wv.w[0] = wv.w[1] = -1;
	int64_t wd[2] = {O, K * Cz};
	if (t < 0 || host_alloc(&wv.h, w->h.type, 2, wd, d))
		return in_node(n, t, d);
	for (int64_t o = 0; o < O; o++) /* a padding channel's zeros too */
		for (int64_t c = 0; c < C; c++)
			for (int64_t j = 0; j < K; j++)
				wv.h.v[(o * K + j) * Cz + c] =
				    w->h.v[(o * C + c) * K + j];
	int32_t y = weight_of(im, n, &wv, 1, d);
	host_tensor_free(&wv.h);
	if (y < 0 || f8_pair(im, &t, &y, d))
		return in_node(n, -1, d);
	t = graph_matmul(im->g, t, y, GRAPH_TRANSPOSE_B, NULL, d);
	t = conv_bias(im, n, t, b, d);
	Shape s4 = {4, {win->o[0], win->o[1], N, O}};
	if (t >= 0)
		t = reshape(im, t, &s4, NULL, d);
	return t < 0 ? in_node(n, -1, d) : emit_taps_done(im, n, ni, t, O, d);
}

/* Conv's weight [O, C / g, kh, kw] of g groups as the block-diagonal
 * [O, C, kh, kw] of one (zeros outside output o's group's channels). */
static int
conv_ungroup(const Onnx__NodeProto *n, const Host *w, int64_t g, int64_t C,
             Host *out, Diag *d)
{
	int64_t O = w->dim[0], Cg = w->dim[1], K = w->dim[2] * w->dim[3];
	if (g < 1 || C % g || O % g || Cg != C / g)
		return node_error(d, n,
		                  "attribute group %lld: the weight [%lld, "
		                  "%lld, ..] does not fit %lld channels in "
		                  "%lld groups",
		                  (long long)g, (long long)O, (long long)Cg,
		                  (long long)C, (long long)g);
	int64_t dim[4] = {O, C, w->dim[2], w->dim[3]};
	if (host_alloc(out, w->type, 4, dim, d))
		return IPU_EINVAL;
	for (int64_t o = 0; o < O; o++)
		for (int64_t c = 0; c < Cg; c++)
			memcpy(&out->v[(o * C + o / (O / g) * Cg + c) * K],
			       &w->v[(o * Cg + c) * K],
			       (size_t)K * sizeof *out->v);
	return IPU_OK;
}

/* Conv whose strides are its kernel, unpadded and undilated (emit_conv):
 * the patches' rows times the weight w [O, C, kh, kw]. */
static int
emit_conv_patches(Imp *im, const Onnx__NodeProto *n, int ni, Value *x,
                  const Value *w, const Value *b, Diag *d)
{
	int64_t dim[HOST_MAX_RANK];
	onnx_dims(im, x, dim);
	int64_t O = w->h.dim[0], C = dim[1], kh = w->h.dim[2], kw = w->h.dim[3],
	        N = dim[0], Hp = dim[2] / kh, Wp = dim[3] / kw;
	int32_t t = x->id;
	OpAttrs at = {0};
	if (kh == 1 && kw == 1) {
		at.perm = (Shape){4, {0, 2, 3, 1}};
	} else {
		Shape s6 = {6, {N, C, Hp, kh, Wp, kw}};
		t = reshape(im, t, &s6, NULL, d);
		at.perm = (Shape){6, {0, 2, 4, 1, 3, 5}};
	}
	if (t >= 0 && C > 1) /* with one channel the order is right */
		t = op1(im, OP_TRANSPOSE, t, &at, NULL, d);
	Shape sa = {2, {N * Hp * Wp, C * kh * kw}};
	if (t >= 0)
		t = reshape(im, t, &sa, NULL, d);
	/* the weight [O, C kh kw], PyTorch's order, as B transposed */
	Value wv = *w;
	wv.h.rank = 2;
	wv.h.dim[1] = C * kh * kw;
	int32_t y = t < 0 ? -1 : weight_of(im, n, &wv, 1, d);
	if (y < 0 || f8_pair(im, &t, &y, d))
		return in_node(n, -1, d);
	t = graph_matmul(im->g, t, y, GRAPH_TRANSPOSE_B, NULL, d);
	t = conv_bias(im, n, t, b, d);
	Shape s4 = {4, {N, Hp, Wp, O}};
	if (t >= 0)
		t = reshape(im, t, &s4, NULL, d);
	at.perm = (Shape){4, {0, 3, 1, 2}};
	char name[GRAPH_MAX_NAME + 1];
	if (t >= 0)
		t = op1(im, OP_TRANSPOSE, t, &at, out_name(im, n, name), d);
	return set_tensor(im, n, ni, 0, t, 4, d);
}

/* Conv 2-D. Groups: the block-diagonal weight of one (conv_ungroup).
 * Strides equal to its kernel, without padding or dilation (a ViT's
 * patch embedding; 1x1 when the kernel is 1): a product of the image's
 * patches and the weight; others through emit_conv_taps. The image
 * [N, C, H, W] as [N, C, H/kh, kh, W/kw, kw], its axes into [N, H/kh,
 * W/kw, C, kh, kw], rows [N P, C kh kw] times the weight [O, C kh kw]
 * transposed, the bias added, the result [N, P, O] back to [N, O, H/kh,
 * W/kw]. */
static int
emit_conv(Imp *im, const Onnx__NodeProto *n, int ni, Value **in, int nin,
          Diag *d)
{
	Value *x = in[0], *w = nin > 1 ? in[1] : NULL,
	      *b = nin > 2 ? in[2] : NULL;
	int64_t group, dim[HOST_MAX_RANK];
	int e;
	if ((e = attr_int(n, "group", 1, &group, d)))
		return e;
	if (x->onnx_rank != 4)
		return node_error(d, n,
		                  "a %d-D input: only 2-D convolutions "
		                  "([N, C, H, W]) are supported",
		                  x->onnx_rank);
	if (!w || w->kind != V_HOST || host_is_int(w->h.type) || w->h.rank != 4)
		return node_error(d, n,
		                  "the weight must be a float constant "
		                  "[O, C, kh, kw]");
	onnx_dims(im, x, dim);
	int64_t O = w->h.dim[0], C = dim[1], kh = w->h.dim[2], kw = w->h.dim[3];
	Win win;
	int64_t L[2];
	win_len(x, dim, L);
	if ((e = win_attrs(n, &w->h.dim[2], L, &win, d)))
		return e;
	for (int i = 0; i < 4; i++)
		win.pads[i] += x->pad[i];
	if (b && (b->kind != V_HOST || host_is_int(b->h.type) || b->h.n != O))
		return node_error(d, n,
		                  "the bias must be a float constant "
		                  "[O]");
	Value wv = *w; /* the weight of one group */
	wv.w[0] = wv.w[1] = -1;
	int own = group != 1 || w->h.dim[1] != C;
	if (own && (e = conv_ungroup(n, &w->h, group, C, &wv.h, d)))
		return e;
	if (win.s[0] != kh || win.s[1] != kw || win.dl[0] != 1 ||
	    win.dl[1] != 1 || !ints_all(win.pads, 4, 0) || dim[2] % kh ||
	    dim[3] % kw)
		e = emit_conv_taps(im, n, ni, x, &wv, b, &win, d);
	else
		e = emit_conv_patches(im, n, ni, x, &wv, b, d);
	if (own)
		host_tensor_free(&wv.h);
	return e;
}

/* Pad: of zero widths, nothing (PyTorch writes one before AvgPool2d);
 * constant zeros around the spatial axes of [N, C, H, W] read only by a
 * Conv or AveragePool (PyTorch's AvgPool2d with count_include_pad), left
 * to that node (Value.pad). */
static int
emit_pad(Imp *im, const Onnx__NodeProto *n, int ni, Value **in, int nin,
         Diag *d)
{
	Value *x = in[0], *p = nin > 1 ? in[1] : NULL,
	      *c = nin > 2 ? in[2] : NULL;
	const Onnx__AttributeProto *mode = attr_find(n, "mode");
	double z = 0;
	int r = x->onnx_rank, ok = p && p->kind == V_HOST && p->h.n == 2 * r;
	for (int64_t i = 0; ok && i < p->h.n; i++)
		ok = p->h.v[i] >= 0;
	if (!ok)
		return node_error(d, n,
		                  "input pads: a constant of 2 x rank "
		                  "non-negative values is supported");
	if (all_equal(&p->h, 0))
		return set_tensor(im, n, ni, 0, x->id, r, d);
	int ci = n->n_output == 1 ? sole_consumer(im, n->output[0]) : -1;
	const Onnx__NodeProto *cn = ci >= 0 ? im->gp->node[ci] : NULL;
	ok = (!mode || is_str(mode, "constant")) && r == 4 &&
	     (!c || (scalar(c, &z) && z == 0)) && p->h.v[0] == 0 &&
	     p->h.v[1] == 0 && p->h.v[4] == 0 && p->h.v[5] == 0 &&
	     (is_op(cn, "Conv") || is_op(cn, "AveragePool")) &&
	     !strcmp(cn->input[0], n->output[0]);
	if (!ok)
		return node_error(d, n,
		                  "attribute mode, inputs pads and "
		                  "constant_value: only zeros around the "
		                  "spatial axes of [N, C, H, W] that a Conv or "
		                  "AveragePool alone reads are supported");
	int e = set_tensor(im, n, ni, 0, x->id, r, d);
	if (!e) {
		Value *v = find(im, n->output[0]);
		for (int i = 0; i < 4; i++)
			v->pad[i] = (int64_t)p->h.v[2 + i / 2 * 4 + i % 2];
	}
	return e;
}

/* Concat of computed tensors and constants (weights) along an axis before
 * the last: IR concats, two inputs at a time. */
static int
emit_concat(Imp *im, const Onnx__NodeProto *n, int ni, Value **in, int nin,
            Diag *d)
{
	int64_t a;
	int axis, e, r = -1;
	for (int k = 0; k < nin; k++)
		if (in[k] && in[k]->kind == V_TENSOR)
			r = in[k]->onnx_rank;
	if ((e = attr_int(n, "axis", 0, &a, d)) ||
	    (e = axis_norm(n, a, r, &axis, d)))
		return e;
	if (axis == r - 1)
		return node_error(d, n,
		                  "Concat along the last axis of a computed "
		                  "tensor is not supported yet (only axes "
		                  "before it)");
	int32_t acc = -1;
	char name[GRAPH_MAX_NAME + 1];
	for (int k = 0; k < nin; k++) {
		if (!in[k])
			return node_error(d, n, "input %d is missing", k);
		int rk =
		    in[k]->kind == V_TENSOR ? in[k]->onnx_rank : in[k]->h.rank;
		if (rk != r)
			return node_error(d, n, "inputs of ranks %d and %d", r,
			                  rk);
		int32_t t = in[k]->kind == V_TENSOR
		                ? in[k]->id
		                : weight_of(im, n, in[k], 0, d);
		if (t < 0)
			return in_node(n, -1, d);
		if (acc < 0) {
			acc = t;
			continue;
		}
		int32_t io[GRAPH_MAX_INPUTS] = {acc, t, -1};
		OpAttrs at = {.axis = axis};
		acc = graph_op(im->g, OP_CONCAT, io, &at,
		               k == nin - 1 ? out_name(im, n, name) : NULL, d);
		if (acc < 0)
			return in_node(n, -1, d);
	}
	if (nin == 1)
		acc =
		    graph_reshape(im->g, acc, &graph_tensor(im->g, acc)->shape,
		                  out_name(im, n, name), d);
	return set_tensor(im, n, ni, 0, acc, r, d);
}

/* Gather of a computed tensor with constant indices: a scalar index (the
 * class token: x[:, 0]) is a slice with that axis dropped, a run of
 * consecutive indices a slice. */
static int
emit_gather(Imp *im, const Onnx__NodeProto *n, int ni, Value **in, int nin,
            Diag *d)
{
	Value *x = in[0], *ix = nin > 1 ? in[1] : NULL;
	int64_t a, dim[HOST_MAX_RANK], b[HOST_MAX_RANK], en[HOST_MAX_RANK];
	int axis, e, r = x->onnx_rank;
	if ((e = attr_int(n, "axis", 0, &a, d)) ||
	    (e = axis_norm(n, a, r, &axis, d)))
		return e;
	if (!ix || ix->kind != V_HOST || !host_is_int(ix->h.type) ||
	    ix->h.rank > 1 || ix->h.n < 1)
		return node_error(d, n,
		                  "indices into a computed tensor must be "
		                  "constant integers, a scalar or a list "
		                  "(computed indices, as token ids, are not "
		                  "supported yet)");
	onnx_dims(im, x, dim);
	for (int i = 0; i < r; i++)
		b[i] = 0, en[i] = dim[i];
	int64_t first = (int64_t)ix->h.v[0];
	if (first < 0)
		first += dim[axis];
	for (int64_t i = 0; i < ix->h.n; i++) {
		int64_t v = (int64_t)ix->h.v[i];
		if (v < 0)
			v += dim[axis];
		if (v != first + i || v < 0 || v >= dim[axis])
			return node_error(d, n,
			                  "indices must be consecutive and "
			                  "inside axis %d (size %lld)",
			                  axis, (long long)dim[axis]);
	}
	b[axis] = first;
	en[axis] = first + ix->h.n;
	if (ix->h.rank == 1)
		return emit_slice(im, n, ni, 0, x, b, en, d);
	/* a scalar index: the slice, then the axis dropped */
	char tmp[300];
	snprintf(tmp, sizeof tmp, "%s.slice", n->output[0]);
	char *keep = n->output[0];
	n->output[0] = tmp;
	e = emit_slice(im, n, ni, 0, x, b, en, d);
	n->output[0] = keep;
	if (e)
		return e;
	int64_t to[HOST_MAX_RANK];
	for (int i = 0, k = 0; i < r; i++)
		if (i != axis)
			to[k++] = dim[i];
	return emit_reshape_to(im, n, ni, 0, find(im, tmp), r - 1, to, d);
}

/* The lookup of emit_lookup for a table too large for one gather (a
 * block of 8 columns above PLAN_GATHER_TABLE_MAX): B blocks of R rows,
 * each an IR gather from its own table [zeros; rows r0 .. r0 + R - 1;
 * zeros] (no zeros before the first block or after the last: no id is
 * there) with `base` the id of its row 0; the gather clamps each id into
 * the table, so an id outside the block reads a row of zeros; the B
 * results summed by `add`s: each id is in one block, so each sum is its
 * row plus zeros, exact. */
static int32_t
split_lookup(Imp *im, const Onnx__NodeProto *n, Value *tab, int32_t ids,
             Diag *d)
{
	int64_t V = tab->h.dim[0], D = tab->h.n / V,
	        rmax = PLAN_GATHER_TABLE_MAX /
	                   (8 * (int64_t)dtype_size(im->act.dtype)) -
	               2,
	        B = (V + rmax - 1) / rmax, R = (V + B - 1) / B;
	Host t = {.rank = 2, .dim = {R + 2, D}};
	t.v = xmalloc((size_t)((R + 2) * D) * sizeof *t.v);
	int32_t sum = -1;
	for (int64_t b = 0; b < B; b++) {
		int64_t r0 = b * R, rows = V - r0 < R ? V - r0 : R,
		        before = b > 0, after = b < B - 1;
		t.dim[0] = before + rows + after;
		t.n = t.dim[0] * D;
		memset(t.v, 0, (size_t)t.n * sizeof *t.v);
		memcpy(t.v + before * D, tab->h.v + r0 * D,
		       (size_t)(rows * D) * sizeof *t.v);
		char suffix[40];
		snprintf(suffix, sizeof suffix, "rows%lld", (long long)b);
		int32_t in[2] = {
		    weight_host(im, &t, im->act, n->output[0], suffix, d), ids};
		int32_t g =
		    in[0] < 0 ? -1
		              : graph_op(im->g, OP_GATHER, in,
		                         &(OpAttrs){.base = (int)(r0 - before)},
		                         NULL, d);
		if (g < 0)
			break;
		sum = b ? graph_add(im->g, sum, g, NULL, d) : g;
		if (sum < 0)
			break;
		if (b == B - 1) {
			free(t.v);
			return sum;
		}
	}
	free(t.v);
	return -1;
}

/* Gather of rows of a constant table [V, ..] (axis 0) by computed
 * indices (token ids: an integer model input, f32 in the IR): the IR's
 * gather (a copy on the tiles holding the table's columns) when a block
 * of 8 of the table's columns fits the planner's bound for a tile
 * (PLAN_GATHER_TABLE_MAX), else split by rows (split_lookup; DECISIONS in
 * docs/onnx.md). */
static int
emit_lookup(Imp *im, const Onnx__NodeProto *n, int ni, Value *tab, Value *ix,
            int axis, Diag *d)
{
	if (axis != 0 || tab->h.rank < 1)
		return node_error(d, n,
		                  "computed indices are supported into axis "
		                  "0 of a constant table (an embedding "
		                  "lookup), not axis %d",
		                  axis);
	if (host_is_int(tab->h.type))
		return node_error(d, n, "an integer table is not supported");
	if (ix->ints == 2)
		return node_error(d, n,
		                  "the indices are a reshaped model input; "
		                  "they must be the input itself");
	if (!ix->ints)
		return node_error(d, n,
		                  "computed indices must be an integer model "
		                  "input (token ids), not a computed or float "
		                  "tensor");
	int64_t V = tab->h.dim[0], D = tab->h.n / (V ? V : 1),
	        N = shape_elems(&tensor(im, ix)->shape);
	if (V > (1 << 24))
		return node_error(d, n,
		                  "a table of %lld rows (at most 2^24: the "
		                  "indices are exact f32 values)",
		                  (long long)V);
	int64_t odim[HOST_MAX_RANK];
	int orank = ix->onnx_rank + tab->h.rank - 1;
	if (orank > GRAPH_MAX_RANK)
		return node_error(d, n, "the result has rank %d", orank);
	onnx_dims(im, ix, odim);
	for (int i = 1; i < tab->h.rank; i++)
		odim[ix->onnx_rank + i - 1] = tab->h.dim[i];
	Shape flat = {2, {V, D}}, ids = {1, {N}};
	int32_t t = reshape(im, ix->id, &ids, NULL, d);
	if (t >= 0 &&
	    V * 8 * dtype_size(im->act.dtype) <= PLAN_GATHER_TABLE_MAX) {
		int32_t in[2] = {weight_of(im, n, tab, 0, d), t};
		if (in[0] >= 0 && tab->h.rank != 2)
			in[0] = reshape(im, in[0], &flat, NULL, d);
		t = in[0] < 0 ? -1
		              : graph_op(im->g, OP_GATHER, in, &(OpAttrs){0},
		                         NULL, d);
	} else if (t >= 0) {
		t = split_lookup(im, n, tab, t, d);
	}
	Shape so;
	if (t < 0 || ir_shape(n, orank, odim, &so, d))
		return in_node(n, -1, d);
	char name[GRAPH_MAX_NAME + 1];
	ir_name(im, n->output[0], name);
	if (!ix->range || V < ix->range)
		ix->range = V; /* the session checks the ids against it */
	return set_tensor(im, n, ni, 0, graph_reshape(im->g, t, &so, name, d),
	                  orank, d);
}

/* A node with a computed input, mapped onto IR operators. */
static int
emit(Imp *im, int ni, Value **in, int nin, Diag *d)
{
	const Onnx__NodeProto *n = im->gp->node[ni];
	const char *op = n->op_type;
	Value *x = in[0];
	char name[GRAPH_MAX_NAME + 1];
	int64_t dim[HOST_MAX_RANK], to[HOST_MAX_RANK], a;
	int rank, e, axis;
	if (!x)
		return node_error(d, n, "its first input is missing");
	int reshapes = !strcmp(op, "Reshape") || !strcmp(op, "Flatten") ||
	               !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze");
	for (int k = 0; k < nin; k++)
		if (in[k] && in[k]->wide && !(reshapes && k == 0)) {
			int32_t c =
			    graph_cast(im->g, in[k]->id, im->act, NULL, d);
			if (c < 0)
				return in_node(n, -1, d);
			in[k]->id = c; /* every later reader takes the cast */
			in[k]->wide = 0;
		}
	if (n->n_output != 1 && strcmp(op, "Split") &&
	    strcmp(op, "LayerNormalization") && strcmp(op, "MaxPool"))
		return node_error(d, n, "%zu outputs (1 expected)",
		                  n->n_output);
	if (!strcmp(op, "Identity") || !strcmp(op, "Cast")) {
		if (!strcmp(op, "Cast") &&
		    ((e = attr_int(n, "to", 0, &a, d)) || !is_float_type(a)))
			return e ? e
			         : node_error(d, n,
			                      "a computed tensor cast to "
			                      "element type %lld (only float "
			                      "types are supported)",
			                      (long long)a);
		Value *v = define(im, n->output[0], V_TENSOR, ni, d);
		if (!v)
			return IPU_EINVAL;
		v->id = x->id;
		v->onnx_rank = x->onnx_rank;
		return IPU_OK;
	}
	if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") ||
	    !strcmp(op, "Div")) {
		if (nin != 2 || !in[0] || !in[1])
			return node_error(d, n, "needs two inputs");
		return mapped_binary(im, n, ni, in[0], in[1], d);
	}
	if (!strcmp(op, "MatMul")) {
		if (nin != 2 || !in[0] || !in[1])
			return node_error(d, n, "needs two inputs");
		return emit_matmul(im, n, ni, in[0], in[1], 0, d);
	}
	if (!strcmp(op, "Gemm")) {
		if (nin < 2 || !in[0] || !in[1])
			return node_error(d, n, "needs A and B");
		return emit_gemm(im, n, ni, in, d);
	}
	if (!strcmp(op, "Concat"))
		return emit_concat(im, n, ni, in, nin, d);
	if (!strcmp(op, "Gather") && x->kind == V_HOST && nin == 2 && in[1] &&
	    in[1]->kind == V_TENSOR) {
		if ((e = attr_int(n, "axis", 0, &a, d)) ||
		    (e = axis_norm(n, a, x->h.rank, &axis, d)))
			return e;
		return emit_lookup(im, n, ni, x, in[1], axis, d);
	}
	if (x->kind != V_TENSOR)
		return node_error(d, n, "its first input must be computed");
	onnx_dims(im, x, dim);
	ir_name(im, n->output[0], name);
	if (!strcmp(op, "Transpose")) {
		int64_t perm[HOST_MAX_RANK];
		int np;
		if ((e = attr_ints(n, "perm", perm, HOST_MAX_RANK, &np, d)))
			return e;
		OpAttrs at = {0};
		at.perm.rank = x->onnx_rank;
		for (int i = 0; i < x->onnx_rank; i++)
			at.perm.dim[i] =
			    np < 0 ? x->onnx_rank - 1 - i : perm[i];
		if (np >= 0 && np != x->onnx_rank)
			return node_error(d, n,
			                  "perm has %d axes, the input %d", np,
			                  x->onnx_rank);
		return set_tensor(im, n, ni, 0,
		                  op1(im, OP_TRANSPOSE, x->id, &at, name, d),
		                  x->onnx_rank, d);
	}
	if (!strcmp(op, "Reshape")) {
		if (need_host(n, nin > 1 ? in[1] : NULL, "the shape", d))
			return IPU_EINVAL;
		if ((e = onnx_reshape_dims(n, dim, x->onnx_rank, &in[1]->h, to,
		                           &rank, d)))
			return e;
		return emit_reshape_to(im, n, ni, 0, x, rank, to, d);
	}
	if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
		if (nin > 1 && in[1] && need_host(n, in[1], "axes", d))
			return IPU_EINVAL;
		if ((e = onnx_squeeze_dims(n, op[0] == 'U', dim, x->onnx_rank,
		                           nin > 1 && in[1] ? &in[1]->h : NULL,
		                           to, &rank, d)))
			return e;
		return emit_reshape_to(im, n, ni, 0, x, rank, to, d);
	}
	if (!strcmp(op, "Flatten")) {
		if ((e = attr_int(n, "axis", 1, &a, d)) ||
		    (e = axis_norm(n, a, x->onnx_rank + 1, &axis, d)))
			return e;
		int64_t two[2] = {1, 1};
		for (int i = 0; i < x->onnx_rank; i++)
			two[i >= axis] *= dim[i];
		return emit_reshape_to(im, n, ni, 0, x, 2, two, d);
	}
	if (!strcmp(op, "Relu"))
		return set_tensor(im, n, ni, 0,
		                  op1(im, OP_RELU, x->id, NULL, name, d),
		                  x->onnx_rank, d);
	if (!strcmp(op, "Conv"))
		return emit_conv(im, n, ni, in, nin, d);
	if (!strcmp(op, "Gather"))
		return emit_gather(im, n, ni, in, nin, d);
	if (!strcmp(op, "ReduceMean"))
		return emit_mean(im, n, ni, x, d);
	if (!strcmp(op, "Pad"))
		return emit_pad(im, n, ni, in, nin, d);
	if (!strcmp(op, "GlobalAveragePool") || !strcmp(op, "AveragePool"))
		return emit_pool(im, n, ni, x, d);
	if (!strcmp(op, "MaxPool"))
		return emit_maxpool(im, n, ni, x, d);
	if (!strcmp(op, "Slice"))
		return emit_slice_node(im, n, ni, in, nin, d);
	if (!strcmp(op, "Split"))
		return emit_split(im, n, ni, in, nin, d);
	if (!strcmp(op, "Softmax")) {
		if ((e = attr_int(n, "axis", -1, &a, d)) ||
		    (e = axis_norm(n, a, x->onnx_rank, &axis, d)))
			return e;
		if (axis != x->onnx_rank - 1)
			return node_error(d, n,
			                  "softmax over axis %d: only the "
			                  "last axis is supported",
			                  axis);
		OpAttrs at = {.scale = 1};
		return set_tensor(im, n, ni, 0,
		                  op1(im, OP_SOFTMAX, x->id, &at, name, d),
		                  x->onnx_rank, d);
	}
	if (!strcmp(op, "LayerNormalization")) {
		double eps;
		if ((e = attr_int(n, "axis", -1, &a, d)) ||
		    (e = axis_norm(n, a, x->onnx_rank, &axis, d)) ||
		    (e = attr_float(n, "epsilon", 1e-5, &eps, d)))
			return e;
		if (axis != x->onnx_rank - 1)
			return node_error(d, n,
			                  "normalising from axis %d: only "
			                  "the last axis is supported",
			                  axis);
		for (size_t k = 1; k < n->n_output; k++)
			if (n->output[k][0])
				return node_error(d, n,
				                  "the mean and inverse "
				                  "deviation outputs are not "
				                  "supported");
		const Host *g = NULL, *b = NULL;
		int64_t N = dim[x->onnx_rank - 1];
		if (nin < 2 || !row_param(in[1], N, &g) ||
		    (nin > 2 && in[2] && !row_param(in[2], N, &b)))
			return node_error(d, n,
			                  "Scale and B must be constants "
			                  "of [%lld]",
			                  (long long)N);
		Host zeros;
		host_alloc(&zeros, T(FLOAT), 1, &N, d);
		int32_t gw = weight_new(im, n, g, 1, n->input[1], d);
		int32_t bw = gw < 0
		                 ? -1
		                 : weight_new(im, n, b ? b : &zeros, 1,
		                              b ? n->input[2] : "ln_beta", d);
		host_tensor_free(&zeros);
		if (bw < 0)
			return in_node(n, -1, d);
		OpAttrs at = {.eps = eps};
		int32_t ins[GRAPH_MAX_INPUTS] = {x->id, gw, bw};
		return set_tensor(im, n, ni, 0,
		                  graph_op(im->g, OP_LAYERNORM, ins, &at,
		                           out_name(im, n, name), d),
		                  x->onnx_rank, d);
	}
	if (fold_supports(op))
		return node_error(d, n,
		                  "%s of a computed tensor has no IR "
		                  "operator (it is computed only when its "
		                  "inputs are known at import time)",
		                  op);
	return node_error(d, n,
	                  "operator %s is not supported (docs/onnx.md "
	                  "lists those that are)",
	                  op);
}

/* A node with a deferred input: a form ends here, or it is deferred too. */
static int
emit_form(Imp *im, int ni, Value **in, int nin, int *blame_out, Diag *d)
{
	const Onnx__NodeProto *n = im->gp->node[ni];
	char name[GRAPH_MAX_NAME + 1];
	Value *x;
	double eps = 0, c;
	int erf = 0;
	if ((x = match_gelu(im, n, &erf))) {
		ir_name(im, n->output[0], name);
		im->erf_gelu |= erf;
		return set_tensor(im, n, ni, 0,
		                  op1(im, OP_GELU, x->id, NULL, name, d),
		                  x->onnx_rank, d);
	}
	if ((x = match_layernorm(im, n, &eps)))
		return emit_layernorm(im, ni, x, eps, d);
	if (is_op(n, "Softmax") && nin == 1) {
		const Onnx__NodeProto *s = node_of(im, in[0]);
		Value *y = NULL;
		double scale = 0;
		if (is_op(s, "Div") && scalar(input(im, s, 1), &c))
			y = input(im, s, 0), scale = 1 / c;
		else if (is_op(s, "Mul") && scalar(input(im, s, 1), &c))
			y = input(im, s, 0), scale = c;
		else if (is_op(s, "Mul") && scalar(input(im, s, 0), &c))
			y = input(im, s, 1), scale = c;
		int64_t a;
		int axis;
		if (y && y->kind == V_TENSOR && scale > 0 && isfinite(scale) &&
		    !attr_int(n, "axis", -1, &a, d) &&
		    !axis_norm(n, a, y->onnx_rank, &axis, d) &&
		    axis == y->onnx_rank - 1) {
			ir_name(im, n->output[0], name);
			OpAttrs at = {.scale = scale};
			return set_tensor(
			    im, n, ni, 0,
			    op1(im, OP_SOFTMAX, y->id, &at, name, d),
			    y->onnx_rank, d);
		}
	}
	/* could still be inside a form: defer, blaming the first node */
	static const char *const inner[] = {"Sub", "Pow",  "ReduceMean",
	                                    "Add", "Sqrt", "Div",
	                                    "Mul", "Erf",  "Tanh"};
	int blame = -1;
	for (int k = 0; k < nin; k++)
		if (in[k] && in[k]->kind == V_DEFER && blame < 0)
			blame = in[k]->blame;
	for (size_t i = 0; i < sizeof inner / sizeof inner[0]; i++)
		if (!strcmp(n->op_type, inner[i]) && n->n_output == 1) {
			Value *v = define(im, n->output[0], V_DEFER, ni, d);
			if (!v)
				return IPU_EINVAL;
			v->blame = blame;
			return IPU_OK;
		}
	*blame_out = blame;
	return 1; /* no form: the caller blames */
}

static int
blame_error(Imp *im, int blame, Diag *d)
{
	const Onnx__NodeProto *b = im->gp->node[blame];
	return node_error(d, b,
	                  "%s of a computed tensor has no IR operator; it is "
	                  "supported only inside the forms PyTorch exports "
	                  "for LayerNorm (ReduceMean, Sub, Pow, Add, Sqrt, "
	                  "Div over the last axis), GELU (x * 0.5 * (1 + "
	                  "erf(x / sqrt 2)) or its tanh form) and a scaled "
	                  "Softmax",
	                  b->op_type);
}

static int
constant_node(Imp *im, const Onnx__NodeProto *n, int ni, Diag *d)
{
	if (n->n_output != 1 || n->n_attribute != 1)
		return node_error(d, n, "needs one output and one attribute");
	const Onnx__AttributeProto *at = n->attribute[0];
	Value *v = define(im, n->output[0], V_HOST, ni, d);
	if (!v)
		return IPU_EINVAL;
	const char *an = at->name ? at->name : "";
	int64_t one = 1, cnt;
	if (!strcmp(an, "value") && at->t) {
		if (host_from_tensor(at->t, &v->h, "value", d))
			return node_error(d, n, "%s", d->msg);
		return IPU_OK;
	}
	if (!strcmp(an, "value_float") &&
	    at->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) {
		host_alloc(&v->h, T(FLOAT), 0, &one, d);
		v->h.v[0] = at->f;
		return IPU_OK;
	}
	if (!strcmp(an, "value_int") &&
	    at->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
		host_alloc(&v->h, T(INT64), 0, &one, d);
		v->h.v[0] = (double)at->i;
		return IPU_OK;
	}
	if (!strcmp(an, "value_floats") || !strcmp(an, "value_ints")) {
		int fl = an[6] == 'f';
		cnt = (int64_t)(fl ? at->n_floats : at->n_ints);
		if (host_alloc(&v->h, fl ? T(FLOAT) : T(INT64), 1, &cnt, d))
			return node_error(d, n, "%s", d->msg);
		for (int64_t i = 0; i < cnt; i++)
			v->h.v[i] = fl ? at->floats[i] : (double)at->ints[i];
		return IPU_OK;
	}
	return node_error(d, n, "attribute '%.60s' is not supported", an);
}

static int
node(Imp *im, int ni, Diag *d)
{
	const Onnx__NodeProto *n = im->gp->node[ni];
	if (im->absorbed[ni])
		return IPU_OK;
	if (!n->op_type || !n->op_type[0])
		return diag_set(d, IPU_EINVAL, im->file, 0, 0,
		                "node %d has no op_type", ni);
	if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx"))
		return node_error(d, n, "domain '%.60s' is not supported",
		                  n->domain);
	if (!n->n_output)
		return node_error(d, n, "no outputs");
	for (size_t k = 0; k < n->n_attribute; k++) {
		const Onnx__AttributeProto *at = n->attribute[k];
		if (!at->name || !at->name[0])
			return node_error(d, n, "an attribute has no name");
		if (at->ref_attr_name && at->ref_attr_name[0])
			return node_error(d, n,
			                  "attribute references are "
			                  "only for functions");
		if (at->g || at->n_graphs)
			return node_error(d, n,
			                  "subgraphs (control flow) are "
			                  "not supported");
	}
	if (!strcmp(n->op_type, "Constant"))
		return constant_node(im, n, ni, d);
	enum { MAX_IN = 64 };
	Value *in[MAX_IN] = {0};
	Host *hin[MAX_IN] = {0};
	int nin = (int)n->n_input, known = 1, deferred = 0;
	if (nin > MAX_IN)
		return node_error(d, n, "%d inputs (at most %d)", nin, MAX_IN);
	for (int k = 0; k < nin; k++) {
		in[k] = NULL;
		hin[k] = NULL;
		if (!n->input[k][0])
			continue; /* an omitted optional input */
		if (!(in[k] = find(im, n->input[k])))
			return node_error(d, n,
			                  "input '%.100s' is not defined "
			                  "before the node (no node, input or "
			                  "initializer makes it)",
			                  n->input[k]);
		known &= in[k]->kind == V_HOST;
		deferred |= in[k]->kind == V_DEFER;
		hin[k] = &in[k]->h;
	}
	const char *op = n->op_type;
	if (!strcmp(op, "Shape") && nin == 1 && in[0] &&
	    in[0]->kind == V_TENSOR) {
		int64_t dim[HOST_MAX_RANK];
		onnx_dims(im, in[0], dim);
		Value *v = define(im, n->output[0], V_HOST, ni, d);
		return v ? onnx_shape_of(n, in[0]->onnx_rank, dim, &v->h, d)
		         : IPU_EINVAL;
	}
	/* an integer input: Gather's indices (the input itself), or reshaped
	 * and cast to a float type (an attention mask) */
	int int_view = !strcmp(op, "Unsqueeze") || !strcmp(op, "Squeeze") ||
	               !strcmp(op, "Reshape") || !strcmp(op, "Flatten") ||
	               !strcmp(op, "Identity") || !strcmp(op, "Cast");
	for (int k = 0; k < nin; k++)
		if (in[k] && in[k]->ints && (k != 0 || !int_view) &&
		    (strcmp(op, "Gather") || k != 1 || !in[0] ||
		     in[0]->kind != V_HOST))
			return node_error(
			    d, n,
			    "integer input '%.100s' is read as "
			    "input %d: integer inputs are supported "
			    "only as the indices of a Gather from a "
			    "constant table (an embedding lookup), or "
			    "reshaped and cast to a float type (an "
			    "attention mask)",
			    in[k]->name, k);
	if (known && fold_supports(op)) {
		if (n->n_output != 1)
			return node_error(d, n, "%zu outputs (1 expected)",
			                  n->n_output);
		Host out;
		int e = fold_node(n, hin, nin, &out, d);
		if (e)
			return e;
		Value *v = define(im, n->output[0], V_HOST, ni, d);
		if (!v) {
			host_tensor_free(&out);
			return IPU_EINVAL;
		}
		v->h = out;
		return IPU_OK;
	}
	if (known && nin)
		return node_error(d, n,
		                  "operator %s on constants is not "
		                  "supported",
		                  op);
	if (deferred) {
		int blame = -1;
		int e = emit_form(im, ni, in, nin, &blame, d);
		return e == 1 ? blame_error(im, blame, d) : e;
	}
	if (defers(im, n)) {
		if (n->n_output != 1)
			return node_error(d, n, "%zu outputs", n->n_output);
		Value *v = define(im, n->output[0], V_DEFER, ni, d);
		if (!v)
			return IPU_EINVAL;
		v->blame = ni;
		return IPU_OK;
	}
	int e = emit(im, ni, in, nin, d);
	if (!e && nin && in[0] && in[0]->ints && int_view) {
		/* the IR tensor is f32 (the input's type): a Cast makes it
		 * a float tensor, held wide if activations are f16 */
		Value *v = find(im, n->output[0]);
		int cast = !strcmp(op, "Cast");
		v->ints = cast ? 0 : 2;
		v->wide = cast && im->act.dtype != DT_F32;
	}
	return e;
}

/* ---- the model ------------------------------------------------------------
 */

static int
check_opset(const Onnx__ModelProto *mp, const char *file, Diag *d)
{
	if (!mp->has_ir_version || mp->ir_version < 3)
		return diag_set(
		    d, IPU_EINVAL, file, 0, 0,
		    "not an ONNX model (no ir_version of 3 or more)");
	int64_t v = -1;
	for (size_t i = 0; i < mp->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
		if (!o->domain || !o->domain[0] ||
		    !strcmp(o->domain, "ai.onnx"))
			v = o->has_version ? o->version : -1;
	}
	if (v < OPSET_MIN || v > OPSET_MAX)
		return diag_set(d, IPU_EINVAL, file, 0, 0,
		                "opset %lld of the default domain: opsets "
		                "%d..%d are supported (torch.onnx.export's "
		                "opset_version)",
		                (long long)v, OPSET_MIN, OPSET_MAX);
	if (!mp->graph)
		return diag_set(d, IPU_EINVAL, file, 0, 0,
		                "the model has no "
		                "graph");
	const Onnx__GraphProto *gp = mp->graph;
	for (size_t i = 0; i < gp->n_node; i++)
		if (!gp->node[i]->op_type || !gp->node[i]->op_type[0])
			return diag_set(d, IPU_EINVAL, file, 0, 0,
			                "node %zu has no op_type", i);
	for (size_t i = 0; i < gp->n_input + gp->n_output; i++) {
		const Onnx__ValueInfoProto *v =
		    i < gp->n_input ? gp->input[i]
		                    : gp->output[i - gp->n_input];
		if (!v->name || !v->name[0])
			return diag_set(d, IPU_EINVAL, file, 0, 0,
			                "a graph %s has no name",
			                i < gp->n_input ? "input" : "output");
	}
	if (mp->graph->n_sparse_initializer)
		return diag_set(d, IPU_EINVAL, file, 0, 0,
		                "sparse initializers are not supported");
	return IPU_OK;
}

/* A value_info's tensor type: element type and fixed dims. */
static int
value_type(const Onnx__ValueInfoProto *vi, const char *what, const char *file,
           int *elem, int *rank, int64_t *dim, Diag *d)
{
	const char *nm = vi->name ? vi->name : "";
	const Onnx__TypeProto *tp = vi->type;
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !tp->tensor_type || !tp->tensor_type->has_elem_type)
		return diag_set(
		    d, IPU_EINVAL, file, 0, 0,
		    "%s '%.100s' is not a tensor of a known element "
		    "type",
		    what, nm);
	*elem = tp->tensor_type->elem_type;
	const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
	*rank = -1; /* unknown */
	if (!sh)
		return IPU_OK;
	if (sh->n_dim > GRAPH_MAX_RANK)
		return diag_set(d, IPU_EINVAL, file, 0, 0,
		                "%s '%.100s' has rank %zu (at most %d)", what,
		                nm, sh->n_dim, GRAPH_MAX_RANK);
	*rank = (int)sh->n_dim;
	for (size_t i = 0; i < sh->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *dm = sh->dim[i];
		if (dm->value_case !=
		        ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
		    dm->dim_value < 1)
			return diag_set(
			    d, IPU_EINVAL, file, 0, 0,
			    "%s '%.100s': axis %zu is %s%.60s%s, not a fixed "
			    "size; export the model with fixed shapes (no "
			    "dynamic_axes)",
			    what, nm, i,
			    dm->value_case ==
			            ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
			        ? "the symbol '"
			        : "unknown",
			    dm->value_case ==
			            ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
			        ? dm->dim_param
			        : "",
			    dm->value_case ==
			            ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
			        ? "'"
			        : "");
		dim[i] = dm->dim_value;
	}
	return IPU_OK;
}

static int
declare_inputs(Imp *im, OnnxModel *m, Diag *d)
{
	const Onnx__GraphProto *gp = im->gp;
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *t = gp->initializer[i];
		char what[160];
		snprintf(what, sizeof what, "initializer '%.100s'",
		         t->name ? t->name : "");
		Value *v = define(im, t->name, V_HOST, -1, d);
		if (!v || host_from_tensor(t, &v->h, what, d))
			return IPU_EINVAL;
	}
	m->inputs = xcalloc(gp->n_input + 1, sizeof *m->inputs);
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		if (vi->name && find(im, vi->name) &&
		    find(im, vi->name)->kind == V_HOST)
			continue; /* an initializer listed as an input */
		int elem, rank;
		int64_t dim[GRAPH_MAX_RANK];
		int e = value_type(vi, "input", im->file, &elem, &rank, dim, d);
		if (e)
			return e;
		if (rank < 0)
			return diag_set(d, IPU_EINVAL, im->file, 0, 0,
			                "input '%.100s' has no shape",
			                vi->name);
		int ints = elem == T(INT64) || elem == T(INT32);
		if (!is_float_type(elem) && !ints)
			return diag_set(d, IPU_EINVAL, im->file, 0, 0,
			                "input '%.100s' has element type %d: "
			                "float, int32 and int64 inputs are "
			                "supported",
			                vi->name, elem);
		Value *v = define(im, vi->name, V_TENSOR, -1, d);
		if (!v)
			return IPU_EINVAL;
		v->ints = ints;
		Shape s = {rank ? rank : 1, {1}};
		for (int k = 0; k < rank; k++)
			s.dim[k] = dim[k];
		char name[GRAPH_MAX_NAME + 1];
		ir_name(im, vi->name, name);
		/* integers as exact f32 values (indices below 2^24) */
		ElemType et = ints ? (ElemType){DT_F32, 0} : im->act;
		if ((v->id = graph_input(im->g, name, et, &s, d)) < 0)
			return IPU_EINVAL;
		v->onnx_rank = rank;
		OnnxPort *p = &m->inputs[m->ninputs++];
		p->name = xstrdup(vi->name);
		p->id = v->id;
		p->shape = s;
		p->onnx_rank = rank;
		p->is_int = ints;
	}
	if (!m->ninputs)
		return diag_set(d, IPU_EINVAL, im->file, 0, 0,
		                "the graph has no inputs (everything is "
		                "constant)");
	return IPU_OK;
}

static int
mark_outputs(Imp *im, OnnxModel *m, Diag *d)
{
	const Onnx__GraphProto *gp = im->gp;
	if (!gp->n_output)
		return diag_set(d, IPU_EINVAL, im->file, 0, 0,
		                "the graph has no outputs");
	m->outputs = xcalloc(gp->n_output, sizeof *m->outputs);
	for (size_t i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		Value *v = find(im, vi->name);
		if (!v)
			return diag_set(d, IPU_EINVAL, im->file, 0, 0,
			                "output '%.100s' is made by no node",
			                vi->name ? vi->name : "");
		if (v->kind == V_DEFER)
			return blame_error(im, v->blame, d);
		if (v->kind == V_HOST)
			return diag_set(
			    d, IPU_EINVAL, im->file, 0, 0,
			    "output '%.100s' is a constant: it does "
			    "not depend on any input",
			    vi->name);
		int elem, rank;
		int64_t dim[GRAPH_MAX_RANK];
		int e =
		    value_type(vi, "output", im->file, &elem, &rank, dim, d);
		if (e)
			return e;
		const Tensor *t = tensor(im, v);
		int same = rank < 0 || rank == v->onnx_rank;
		for (int k = 0; same && k < rank; k++)
			same = dim[k] == t->shape.dim[k];
		if (!same) {
			char have[96];
			shape_format(&t->shape, have, sizeof have);
			return diag_set(d, IPU_EINVAL, im->file, 0, 0,
			                "output '%.100s': the model declares "
			                "another shape than its nodes compute "
			                "(%s)",
			                vi->name, have);
		}
		int32_t id = v->id;
		/* an input, or an output already, is copied to its own */
		if (t->producer < 0 || t->role == ROLE_OUTPUT) {
			char name[GRAPH_MAX_NAME + 1];
			ir_name(im, vi->name, name);
			if ((id = graph_reshape(im->g, id, &t->shape, name,
			                        d)) < 0)
				return IPU_EINVAL;
		}
		if (graph_mark_output(im->g, id, d))
			return IPU_EINVAL;
		OnnxPort *p = &m->outputs[m->noutputs++];
		p->name = xstrdup(vi->name);
		p->id = id;
		p->shape = graph_tensor(im->g, id)->shape;
		p->onnx_rank = v->onnx_rank;
	}
	return IPU_OK;
}

/* g without the ops and weights no output needs (inputs all kept, so that
 * every model input can be bound); ids in m and im renumbered. */
static int
drop_dead(Imp *im, OnnxModel *m, Diag *d)
{
	Graph *g = im->g, *h = graph_new();
	unsigned char *live = xcalloc((size_t)g->ntensors + 1, 1);
	int32_t *map = xmalloc(((size_t)g->ntensors + 1) * sizeof *map);
	for (int32_t i = 0; i < g->ntensors; i++)
		live[i] = g->tensors[i].role == ROLE_OUTPUT ||
		          g->tensors[i].role == ROLE_INPUT;
	for (int i = g->nops - 1; i >= 0; i--)
		if (live[g->ops[i].out])
			for (int k = 0; k < op_desc(g->ops[i].kind)->nin; k++)
				live[g->ops[i].in[k]] = 1;
	int e = IPU_OK;
	for (int32_t i = 0; !e && i < g->ntensors; i++) {
		const Tensor *t = &g->tensors[i];
		map[i] = -1;
		if (!live[i])
			continue;
		if (t->role == ROLE_INPUT)
			map[i] = graph_input(h, t->name, t->elem, &t->shape, d);
		else if (t->role == ROLE_WEIGHT)
			map[i] =
			    graph_weight(h, t->name, t->elem, &t->shape, d);
		else {
			Op op = g->ops[t->producer];
			for (int k = 0; k < op_desc(op.kind)->nin; k++)
				op.in[k] = map[op.in[k]];
			map[i] =
			    graph_op(h, op.kind, op.in, &op.attr, t->name, d);
			if (map[i] >= 0 && t->role == ROLE_OUTPUT)
				e = graph_mark_output(h, map[i], d);
		}
		if (map[i] < 0)
			e = IPU_EINVAL;
	}
	int nw = 0;
	for (int i = 0; !e && i < im->nw; i++) {
		if (map[im->wid[i]] < 0) {
			free(im->wval[i]);
			continue;
		}
		im->wid[nw] = map[im->wid[i]];
		im->wval[nw++] = im->wval[i];
	}
	if (!e) {
		im->nw = nw;
		for (int i = 0; i < m->ninputs; i++)
			m->inputs[i].id = map[m->inputs[i].id];
		for (int i = 0; i < m->noutputs; i++)
			m->outputs[i].id = map[m->outputs[i].id];
		graph_free(g);
		im->g = h;
	} else {
		graph_free(h);
	}
	free(live);
	free(map);
	return e;
}

int
onnx_dtype_from_name(const char *name, OnnxDType *t)
{
	static const char *const names[] = {"f32", "f16", "f8"};
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, names[i])) {
			*t = (OnnxDType)i;
			return 1;
		}
	return 0;
}

int
onnx_import(const uint8_t *data, size_t len, const char *file, OnnxDType t,
            OnnxModel **out, Diag *d)
{
	*out = NULL;
	diag_clear(d);
	Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, data);
	if (!mp)
		return diag_set(d, IPU_EINVAL, file, 0, 0,
		                "not a valid ONNX protobuf (truncated, or not "
		                "an .onnx file)");
	int e = check_opset(mp, file, d);
	Imp im = {.gp = mp->graph,
	          .file = file,
	          .dt = t,
	          .act = {t == ONNX_F32 ? DT_F32 : DT_F16, 0}};
	OnnxModel *m = xcalloc(1, sizeof *m);
	if (!e) {
		im.g = graph_new();
		im.absorbed = xcalloc(im.gp->n_node + 1, 1);
		reindex(&im);
		e = declare_inputs(&im, m, d);
	}
	for (size_t i = 0; !e && i < (im.gp ? im.gp->n_node : 0); i++)
		e = node(&im, (int)i, d);
	if (!e)
		e = mark_outputs(&im, m, d);
	for (int i = 0; !e && i < m->ninputs; i++)
		if (m->inputs[i].is_int)
			m->inputs[i].index_range =
			    find(&im, m->inputs[i].name)->range;
	if (!e)
		e = drop_dead(&im, m, d);
	if (!e)
		e = graph_verify(im.g, d);
	if (e && !d->file[0])
		snprintf(d->file, sizeof d->file, "%s", file);
	if (!e) {
		m->g = im.g;
		im.g = NULL;
		m->weight_id = im.wid;
		m->weight_value = im.wval;
		m->nweights = im.nw;
		im.wid = NULL;
		im.wval = NULL;
		im.nw = 0;
		if (im.erf_gelu)
			snprintf(
			    m->notes, sizeof m->notes,
			    "GELU (erf) computed as the IR's tanh "
			    "approximation (they differ by at most 4.7e-4)");
		if (im.clamped) {
			size_t k = strlen(m->notes);
			snprintf(m->notes + k, sizeof m->notes - k,
			         "%s%lld constants beyond f16's range clamped "
			         "to +-65504 (the first in %.60s)",
			         k ? "; " : "", (long long)im.clamped,
			         im.clamped_in);
		}
		*out = m;
	} else {
		onnx_model_free(m);
	}
	for (int i = 0; i < im.nval; i++) {
		host_tensor_free(&im.val[i]->h);
		free(im.val[i]);
	}
	for (int i = 0; i < im.nw; i++)
		free(im.wval[i]);
	free(im.wid);
	free(im.wval);
	free(im.val);
	free(im.index);
	free(im.absorbed);
	graph_free(im.g);
	onnx__model_proto__free_unpacked(mp, NULL);
	return e;
}

int
onnx_import_file(const char *path, OnnxDType t, OnnxModel **out, Diag *d)
{
	uint8_t *data;
	size_t len;
	*out = NULL;
	int e = read_file(path, &data, &len, d);
	if (e)
		return e;
	e = onnx_import(data, len, path, t, out, d);
	free(data);
	return e;
}

void
onnx_model_free(OnnxModel *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->ninputs; i++)
		free(m->inputs[i].name);
	for (int i = 0; i < m->noutputs; i++)
		free(m->outputs[i].name);
	for (int i = 0; i < m->nweights; i++)
		free(m->weight_value[i]);
	free(m->inputs);
	free(m->outputs);
	free(m->weight_id);
	free(m->weight_value);
	graph_free(m->g);
	free(m);
}

const OnnxPort *
onnx_find_port(const OnnxModel *m, const char *name, int output)
{
	const OnnxPort *p = output ? m->outputs : m->inputs;
	int n = output ? m->noutputs : m->ninputs;
	for (int i = 0; i < n; i++)
		if (!strcmp(p[i].name, name) ||
		    !strcmp(graph_tensor(m->g, p[i].id)->name, name))
			return &p[i];
	return NULL;
}

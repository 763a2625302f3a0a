/*
 * graph.c - the graph builder: element types, shapes, the tensor and op
 * vectors, the name index and the builder functions.
 *
 * Every builder goes through graph_op (ops) or declare (inputs, weights):
 * it checks the name, runs the op's inference (shape.c) on a scratch
 * tensor, and only then appends, so a failed call leaves the graph as it
 * was. Names are found through an open-addressing hash table of tensor
 * ids, rebuilt when it is half full, so parsing large graphs stays linear.
 */
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t
shape_elems(const Shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		n *= s->dim[i];
	return n;
}

void
shape_format(const Shape *s, char *buf, size_t len)
{
	size_t n = snprintf(buf, len, "[");
	for (int i = 0; i < s->rank && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%lld", i ? ", " : "",
		              (long long)s->dim[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

void
elem_format(ElemType e, char *buf, size_t len)
{
	if (dtype_is_f8(e.dtype))
		snprintf(buf, len, "%s*2^%d", dtype_name(e.dtype), e.scale);
	else
		snprintf(buf, len, "%s", dtype_name(e.dtype));
}

int
elem_equal(ElemType a, ElemType b)
{
	return a.dtype == b.dtype && a.scale == b.scale;
}

int
shape_equal(const Shape *a, const Shape *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dim[i] != b->dim[i])
			return 0;
	return 1;
}

int64_t
shape_batches(const Shape *s)
{
	int64_t n = 1;
	for (int i = 0; i + 2 < s->rank; i++)
		n *= s->dim[i];
	return n;
}

uint32_t
tensor_view_cols(const Tensor *t)
{
	return (uint32_t)t->shape.dim[t->shape.rank - 1];
}

uint32_t
tensor_view_rows(const Tensor *t)
{
	return (uint32_t)(shape_elems(&t->shape) / tensor_view_cols(t));
}

/* ---- the graph and its name index ---- */

Graph *
graph_new(void)
{
	return xcalloc(1, sizeof(Graph));
}

void
graph_free(Graph *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->ntensors; i++)
		free(g->tensors[i].name);
	free(g->tensors);
	free(g->ops);
	free(g->index);
	free(g);
}

Tensor *
graph_tensor(const Graph *g, int32_t id)
{
	return id >= 0 && id < g->ntensors ? &g->tensors[id] : NULL;
}

/* FNV-1a. */
static uint32_t
name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

int32_t
graph_find(const Graph *g, const char *name)
{
	if (!g->index_cap)
		return -1;
	uint32_t mask = (uint32_t)g->index_cap - 1;
	for (uint32_t i = name_hash(name) & mask;; i = (i + 1) & mask) {
		int32_t slot = g->index[i];
		if (!slot)
			return -1;
		const Tensor *t = graph_tensor(g, slot - 1);
		if (t && t->name && !strcmp(t->name, name))
			return slot - 1;
	}
}

static void
index_put(Graph *g, int32_t id)
{
	uint32_t mask = (uint32_t)g->index_cap - 1;
	uint32_t i = name_hash(g->tensors[id].name) & mask;
	while (g->index[i])
		i = (i + 1) & mask;
	g->index[i] = id + 1;
}

/* Keep the index at most half full. */
static void
index_grow(Graph *g)
{
	if (2 * (g->ntensors + 1) <= g->index_cap)
		return;
	free(g->index);
	g->index_cap = g->index_cap ? 2 * g->index_cap : 64;
	g->index = xcalloc((size_t)g->index_cap, sizeof *g->index);
	for (int32_t id = 0; id < g->ntensors; id++)
		index_put(g, id);
}

/* ---- building ---- */

static int
name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > GRAPH_MAX_NAME || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		            (c >= '0' && c <= '9');
		if (!alnum && c != '_' && c != '.')
			return 0;
	}
	return 1;
}

/* The name of the next tensor in buf: the given one, checked, or a fresh
 * "t<id>". */
static int
pick_name(const Graph *g, const char *name, char *buf, size_t len, Diag *d)
{
	if (name) {
		if (!name_ok(name))
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "bad tensor name '%.80s': want a letter "
			    "or '_', then letters, digits, '_' or "
			    "'.', at most %d bytes",
			    name, GRAPH_MAX_NAME);
		if (graph_find(g, name) >= 0)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "tensor '%s' is already defined", name);
		snprintf(buf, len, "%s", name);
		return 0;
	}
	snprintf(buf, len, "t%d", g->ntensors);
	for (int k = 1; graph_find(g, buf) >= 0; k++)
		snprintf(buf, len, "t%d_%d", g->ntensors, k);
	return 0;
}

/* Append a tensor whose elem and shape are already checked. */
static int32_t
append_tensor(Graph *g, const char *name, const Tensor *proto, TensorRole role,
              int32_t producer)
{
	GROW(g->tensors, g->ntensors, g->cap_tensors);
	index_grow(g);
	int32_t id = g->ntensors++;
	Tensor *t = &g->tensors[id];
	*t = *proto;
	t->id = id;
	t->name = xstrdup(name);
	t->role = role;
	t->producer = producer;
	index_put(g, id);
	return id;
}

static int32_t
declare(Graph *g, const char *name, ElemType e, const Shape *s, TensorRole role,
        Diag *d)
{
	char buf[GRAPH_MAX_NAME + 16];
	if (graph_check_elem(e, d) || graph_check_shape(s, d) ||
	    pick_name(g, name, buf, sizeof buf, d))
		return -1;
	Tensor t = {.elem = e, .shape = *s};
	return append_tensor(g, buf, &t, role, -1);
}

int32_t
graph_input(Graph *g, const char *name, ElemType e, const Shape *s, Diag *d)
{
	return declare(g, name, e, s, ROLE_INPUT, d);
}

int32_t
graph_weight(Graph *g, const char *name, ElemType e, const Shape *s, Diag *d)
{
	return declare(g, name, e, s, ROLE_WEIGHT, d);
}

int32_t
graph_op(Graph *g, OpKind kind, const int32_t *in, const OpAttrs *a,
         const char *name, Diag *d)
{
	if ((unsigned)kind >= OP_COUNT) {
		diag_set(d, IPU_EINVAL, NULL, 0, 0, "unknown op kind %d",
		         (int)kind);
		return -1;
	}
	Op op = {.kind = kind, .in = {-1, -1, -1}, .out = -1};
	for (int i = 0; i < op_desc(kind)->nin; i++)
		op.in[i] = in[i];
	if (a)
		op.attr = *a;
	Tensor t = {0};
	char buf[GRAPH_MAX_NAME + 16];
	if (graph_infer(g, &op, &t, d) ||
	    pick_name(g, name, buf, sizeof buf, d))
		return -1;
	GROW(g->ops, g->nops, g->cap_ops);
	op.out = append_tensor(g, buf, &t, ROLE_INTERMEDIATE, g->nops);
	g->ops[g->nops++] = op;
	return op.out;
}

int32_t
graph_matmul(Graph *g, int32_t a, int32_t b, unsigned flags, const char *name,
             Diag *d)
{
	OpAttrs at = {.transpose_a = !!(flags & GRAPH_TRANSPOSE_A),
	              .transpose_b = !!(flags & GRAPH_TRANSPOSE_B)};
	return graph_op(g, OP_MATMUL, (int32_t[]){a, b}, &at, name, d);
}

int32_t
graph_add(Graph *g, int32_t a, int32_t b, const char *name, Diag *d)
{
	return graph_op(g, OP_ADD, (int32_t[]){a, b}, NULL, name, d);
}

int32_t
graph_mul(Graph *g, int32_t a, int32_t b, const char *name, Diag *d)
{
	return graph_op(g, OP_MUL, (int32_t[]){a, b}, NULL, name, d);
}

int32_t
graph_cast(Graph *g, int32_t x, ElemType to, const char *name, Diag *d)
{
	OpAttrs at = {.to = to};
	return graph_op(g, OP_CAST, &x, &at, name, d);
}

int32_t
graph_reshape(Graph *g, int32_t x, const Shape *s, const char *name, Diag *d)
{
	OpAttrs at = {.shape = *s};
	return graph_op(g, OP_RESHAPE, &x, &at, name, d);
}

int32_t
graph_transpose(Graph *g, int32_t x, const Shape *perm, const char *name,
                Diag *d)
{
	OpAttrs at = {.perm = *perm};
	return graph_op(g, OP_TRANSPOSE, &x, &at, name, d);
}

int
graph_mark_output(Graph *g, int32_t id, Diag *d)
{
	Tensor *t = graph_tensor(g, id);
	if (!t)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "output: no tensor with id %d", (int)id);
	if (t->role == ROLE_INPUT || t->role == ROLE_WEIGHT)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "output: '%s' is declared as %s, not written "
		                "by an op",
		                t->name,
		                t->role == ROLE_INPUT ? "input" : "weight");
	t->role = ROLE_OUTPUT;
	return 0;
}

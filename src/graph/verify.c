/*
 * verify.c - graph_verify: every invariant of the graph IR, checked from
 * the stored facts alone, so that a pass that corrupts a graph is caught
 * right after it runs.
 *
 * Invariants (docs/graph.md):
 *   1. tensors[i].id == i; each name is set and found by graph_find at its
 *      own id (so names are unique and the index is current).
 *   2. Element types and shapes are valid (graph_check_elem/_shape); the
 *      role is known.
 *   3. Inputs and weights have no producer; every other tensor has one op
 *      whose out is that tensor (each tensor is written exactly once).
 *   4. Every op reads only tensors defined before it: inputs, weights or
 *      outputs of earlier ops. The op list is thus a topological order and
 *      the graph has no cycle.
 *   5. graph_infer accepts each op (ids, dtypes, attributes) and gives the
 *      element type and shape stored in its output tensor.
 *   6. At least one tensor is an output.
 *   7. The repeat promise, if any, holds (graph_repeat_map).
 * The first broken invariant is reported, naming the tensor or op.
 */
#include "graph.h"

#include <stdio.h>
#include <string.h>

static int
verify_tensor(const Graph *g, int32_t id, Diag *d)
{
	const Tensor *t = &g->tensors[id];
	if (t->id != id)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "tensor %d: id field is %d", (int)id,
		                (int)t->id);
	if (!t->name || graph_find(g, t->name) != id)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "tensor %d: name '%s' is not unique or not "
		                "indexed",
		                (int)id, t->name ? t->name : "(null)");
	char what[GRAPH_MAX_NAME + 32];
	snprintf(what, sizeof what, "tensor '%.*s'", GRAPH_MAX_NAME, t->name);
	if (graph_check_elem(t->elem, d) || graph_check_shape(&t->shape, d))
		return graph_diag_prefix(d, what);
	if ((unsigned)t->role > ROLE_OUTPUT)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "tensor '%s': unknown role %d", t->name,
		                (int)t->role);
	int declared = t->role == ROLE_INPUT || t->role == ROLE_WEIGHT;
	if (declared && t->producer != -1)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "tensor '%s': an input or weight with producer "
		                "op %d",
		                t->name, (int)t->producer);
	if (!declared && (t->producer < 0 || t->producer >= g->nops ||
	                  g->ops[t->producer].out != id))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "tensor '%s': producer op %d does not write it",
		                t->name, (int)t->producer);
	return 0;
}

/* Inputs of op i are defined before it. */
static int
verify_order(const Graph *g, int i, Diag *d)
{
	const Op *op = &g->ops[i];
	const OpDesc *od = op_desc(op->kind);
	for (int k = 0; od && k < od->nin; k++) {
		const Tensor *t = graph_tensor(g, op->in[k]);
		if (!t)
			continue; /* graph_infer names it */
		if (t->producer >= i)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "input '%s' is written later, by op %d",
			                t->name, (int)t->producer);
	}
	return 0;
}

static int
verify_op(const Graph *g, int i, Diag *d)
{
	const Op *op = &g->ops[i];
	const Tensor *out = graph_tensor(g, op->out);
	char what[GRAPH_MAX_NAME + 32], e1[32], e2[32], s1[128], s2[128];
	Tensor t;
	if (!out || out->producer != i)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "op %d: output %d is not a tensor it writes", i,
		                (int)op->out);
	snprintf(what, sizeof what, "op %d ('%.*s')", i, GRAPH_MAX_NAME,
	         out->name);
	if (verify_order(g, i, d))
		return graph_diag_prefix(d, what);
	if (graph_infer(g, op, &t, d))
		return graph_diag_prefix(d, what);
	if (elem_equal(t.elem, out->elem) && shape_equal(&t.shape, &out->shape))
		return 0;
	elem_format(out->elem, e1, sizeof e1);
	shape_format(&out->shape, s1, sizeof s1);
	elem_format(t.elem, e2, sizeof e2);
	shape_format(&t.shape, s2, sizeof s2);
	diag_set(d, IPU_EINVAL, NULL, 0, 0,
	         "output is %s %s, inference says %s %s", e1, s1, e2, s2);
	return graph_diag_prefix(d, what);
}

int
graph_verify(const Graph *g, Diag *d)
{
	int outputs = 0;
	for (int32_t id = 0; id < g->ntensors; id++) {
		if (verify_tensor(g, id, d))
			return IPU_EINVAL;
		outputs += g->tensors[id].role == ROLE_OUTPUT;
	}
	for (int i = 0; i < g->nops; i++)
		if (verify_op(g, i, d))
			return IPU_EINVAL;
	if (!outputs)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "the graph has no output");
	RepeatMap m;
	int r = graph_repeat_map(g, &m, d);
	repeat_map_free(&m);
	return r;
}

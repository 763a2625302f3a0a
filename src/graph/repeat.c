/*
 * repeat.c - checking a graph's repeat promise (GraphRepeat) and mapping
 * each iteration's tensors to the first iteration's.
 *
 * The rules, checked op by op for iterations 1 .. count - 1 against
 * iteration 0 (the body):
 *   - the same op kind, attributes, output type and shape;
 *   - each input is either made by the same body op of the same iteration,
 *     or the same tensor as iteration 0's (shared: made before the loop),
 *     or, where iteration 0 reads the carry_in (made before the loop), the
 *     tensor the iteration before made at the carry's place in the body,
 *     or a weight of the iteration's own with the type and shape of
 *     iteration 0's;
 * and each input keeps its kind (the body's own, shared, carried, a
 * weight of its own) in every iteration; the carry is read only where
 * it is carried and keeps its type and shape; each weight stands for one
 * weight of one iteration; over the whole graph, a tensor made in the
 * loop is read only by its own iteration, except the carry (by the next
 * iteration, or after the loop, the last one's), and an iteration's own
 * weight only by it. The lowering (docs/compiler.md "Loops") relies on
 * each of these: it runs iteration 0's ops with the carry and the
 * weights swapped in, the same way every time.
 */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

static int
attrs_equal(const OpAttrs *a, const OpAttrs *b)
{
	return a->transpose_a == b->transpose_a &&
	       a->transpose_b == b->transpose_b && elem_equal(a->to, b->to) &&
	       shape_equal(&a->shape, &b->shape) &&
	       shape_equal(&a->perm, &b->perm) &&
	       shape_equal(&a->begin, &b->begin) &&
	       shape_equal(&a->end, &b->end) && a->eps == b->eps &&
	       a->scale == b->scale;
}

/* What an op of iterations 1.. reads where iteration 0 reads ta. */
typedef enum {
	READ_BODY,   /* the same op's output, of its own iteration */
	READ_SHARED, /* ta itself, made before the loop */
	READ_CARRY,  /* the iteration before's carry_out */
	READ_WEIGHT, /* a weight of its own, in place of ta */
} ReadKind;

static const char *const read_text[] = {
    [READ_BODY] = "a tensor of its own iteration",
    [READ_SHARED] = "a tensor made before the loop",
    [READ_CARRY] = "the carry",
    [READ_WEIGHT] = "a weight of its own",
};

typedef struct {
	const Graph *g;
	RepeatMap *m;
	int32_t carry_rel; /* body index of the op making carry_out, or -1 */
	int32_t *wslot;    /* by tensor: its weight index j, or -1 */
	int32_t stride;    /* m->weight is [count][stride] while checking */
	int8_t *kind;      /* [len][GRAPH_MAX_INPUTS]: iteration 1's ReadKind */
} Check;

int32_t
graph_repeat_iteration(const GraphRepeat *r, int32_t o)
{
	if (o < r->first || o >= r->first + r->len * r->count)
		return -1;
	return (o - r->first) / r->len;
}

static const char *
name_of(const Graph *g, int32_t id)
{
	return g->tensors[id].name;
}

/* What input ta of body op j is read as (tb) by iteration k's copy of
 * it: its ReadKind, or -1 after a message. */
static int
read_kind(Check *c, int32_t j, int32_t k, int32_t ta, int32_t tb, Diag *d)
{
	const Graph *g = c->g;
	RepeatMap *m = c->m;
	const Tensor *a = &g->tensors[ta], *b = &g->tensors[tb];
	int32_t pa = a->producer, pb = b->producer;
	const char *op = name_of(g, g->ops[m->first + k * m->len + j].out);
	if (pa >= m->first && pa < m->first + m->len) {
		if (pb == pa + k * m->len)
			return READ_BODY;
	} else if (ta == tb) {
		return READ_SHARED;
	} else if (pb >= m->first + (k - 1) * m->len &&
	           pb < m->first + k * m->len) {
		int32_t rel = pb - m->first - (k - 1) * m->len;
		if (m->carry_in < 0) {
			m->carry_in = ta;
			c->carry_rel = rel;
		}
		if (m->carry_in == ta && c->carry_rel == rel)
			return READ_CARRY;
		diag_set(d, IPU_EINVAL, NULL, 0, 0,
		         "repeat: '%s' (iteration %d) reads '%s' of the "
		         "iteration before where iteration 0 reads '%s': only "
		         "one tensor may be carried",
		         op, (int)k, b->name, a->name);
		return -1;
	} else if (a->role == ROLE_WEIGHT && b->role == ROLE_WEIGHT &&
	           elem_equal(a->elem, b->elem) &&
	           shape_equal(&a->shape, &b->shape)) {
		/* iteration 1 meets every weight first */
		int32_t *w = &c->wslot[ta];
		if (*w < 0 && k == 1)
			*w = m->nweights++;
		if (*w >= 0) {
			int32_t *slot =
			    &m->weight[(size_t)k * (size_t)c->stride +
			               (size_t)*w];
			m->weight[*w] = ta;
			if (*slot < 0)
				*slot = tb;
			if (*slot == tb)
				return READ_WEIGHT;
		}
	}
	diag_set(d, IPU_EINVAL, NULL, 0, 0,
	         "repeat: '%s' (iteration %d) reads '%s' where iteration 0 "
	         "reads '%s'",
	         op, (int)k, b->name, a->name);
	return -1;
}

/* Input i of body op j, read as tb by iteration k: what iteration 1
 * reads it as, iteration k reads it as too (the loop runs the same code
 * each time). */
static int
check_input(Check *c, int32_t j, int i, int32_t k, int32_t ta, int32_t tb,
            Diag *d)
{
	int kind = read_kind(c, j, k, ta, tb, d);
	if (kind < 0)
		return IPU_EINVAL;
	int8_t *first = &c->kind[j * GRAPH_MAX_INPUTS + i];
	if (k == 1)
		*first = (int8_t)kind;
	if (*first == kind)
		return IPU_OK;
	const Graph *g = c->g;
	const RepeatMap *m = c->m;
	const Op *o = &g->ops[m->first + k * m->len + j],
	         *o1 = &g->ops[m->first + m->len + j];
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "repeat: '%s' (iteration %d) reads '%s', %s, where "
	                "iteration 1 reads '%s', %s",
	                name_of(g, o->out), (int)k, name_of(g, tb),
	                read_text[kind], name_of(g, o1->in[i]),
	                read_text[*first]);
}

static int
check_op(Check *c, int32_t j, int32_t k, Diag *d)
{
	const Graph *g = c->g;
	const RepeatMap *m = c->m;
	const Op *a = &g->ops[m->first + j],
	         *b = &g->ops[m->first + k * m->len + j];
	const Tensor *ta = &g->tensors[a->out], *tb = &g->tensors[b->out];
	if (a->kind != b->kind || !attrs_equal(&a->attr, &b->attr) ||
	    !elem_equal(ta->elem, tb->elem) ||
	    !shape_equal(&ta->shape, &tb->shape))
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "repeat: '%s' (iteration %d) is not the same "
		    "op, attributes and type as '%s' of iteration 0",
		    tb->name, (int)k, ta->name);
	for (int i = 0; i < op_desc(a->kind)->nin; i++) {
		int r = check_input(c, j, i, k, a->in[i], b->in[i], d);
		if (r)
			return r;
	}
	return IPU_OK;
}

/* Who may read tensor t: op o of iteration io. */
static int
check_reader(const Check *c, const int32_t *wit, int32_t o, int32_t t, Diag *d)
{
	const Graph *g = c->g;
	const RepeatMap *m = c->m;
	int32_t io = graph_repeat_iteration(&g->repeat, o),
	        p = g->tensors[t].producer;
	int32_t ip = p >= 0 ? graph_repeat_iteration(&g->repeat, p) : -1;
	if (wit[t] >= 0 && wit[t] != io)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "repeat: weight '%s' of iteration %d is read by "
		    "'%s'",
		    name_of(g, t), (int)wit[t], name_of(g, g->ops[o].out));
	if (ip < 0 || ip == io)
		return IPU_OK;
	int carry = (p - m->first) % m->len == c->carry_rel;
	if (carry && (io == ip + 1 || (io < 0 && ip == m->count - 1)))
		return IPU_OK;
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "repeat: '%s' of iteration %d is read by '%s'%s",
	                name_of(g, t), (int)ip, name_of(g, g->ops[o].out),
	                io < 0 ? " after the loop" : "");
}

/* The loop keeps the carry in one place of one type and shape, which
 * the body reads wherever iteration 0 reads carry_in: so it must read
 * carry_in nowhere else (another iteration's x there would be the
 * carry's value), and carry_out must be like carry_in. */
static int
check_carry(const Check *c, Diag *d)
{
	const Graph *g = c->g;
	const RepeatMap *m = c->m;
	for (int32_t j = 0; j < m->len; j++) {
		const Op *o = &g->ops[m->first + j],
		         *o1 = &g->ops[m->first + m->len + j];
		for (int i = 0; i < op_desc(o->kind)->nin; i++)
			if (o->in[i] == m->carry_in &&
			    c->kind[j * GRAPH_MAX_INPUTS + i] != READ_CARRY)
				return diag_set(
				    d, IPU_EINVAL, NULL, 0, 0,
				    "repeat: '%s' reads the carry '%s' where "
				    "iteration 1 reads '%s', %s, not the "
				    "carry",
				    name_of(g, o->out), name_of(g, m->carry_in),
				    name_of(g, o1->in[i]),
				    read_text[c->kind[j * GRAPH_MAX_INPUTS +
				                      i]]);
	}
	const Tensor *a = &g->tensors[m->carry_in],
	             *b = &g->tensors[m->carry_out];
	if (elem_equal(a->elem, b->elem) && shape_equal(&a->shape, &b->shape))
		return IPU_OK;
	char ea[32], eb[32], sa[96], sb[96];
	elem_format(a->elem, ea, sizeof ea);
	elem_format(b->elem, eb, sizeof eb);
	shape_format(&a->shape, sa, sizeof sa);
	shape_format(&b->shape, sb, sizeof sb);
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "repeat: the carry '%s' is %s %s but iteration 1 "
	                "reads '%s', %s %s, in its place: the carry keeps "
	                "its type and shape",
	                a->name, ea, sa, b->name, eb, sb);
}

/* Each weight is one iteration's, in place of one of iteration 0's: the
 * host writes it into that one slot of the loop's weight bank. */
static int
check_weights(const Check *c, Diag *d)
{
	const Graph *g = c->g;
	const RepeatMap *m = c->m;
	int32_t n = m->count * m->nweights;
	int32_t *at = xmalloc((size_t)g->ntensors * sizeof *at);
	for (int32_t t = 0; t < g->ntensors; t++)
		at[t] = -1;
	int r = IPU_OK;
	for (int32_t s = 0; s < n && !r; s++) {
		int32_t w = m->weight[s], s0 = w < 0 ? -1 : at[w];
		if (w < 0)
			continue;
		if (s0 < 0) {
			at[w] = s;
			continue;
		}
		r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
		             "repeat: weight '%s' is read by iteration %d in "
		             "place of '%s' and by iteration %d in place of "
		             "'%s': each weight stands for one",
		             name_of(g, w), (int)(s0 / m->nweights),
		             name_of(g, m->weight[s0 % m->nweights]),
		             (int)(s / m->nweights),
		             name_of(g, m->weight[s % m->nweights]));
	}
	free(at);
	return r;
}

static int
check_uses(Check *c, Diag *d)
{
	const Graph *g = c->g;
	RepeatMap *m = c->m;
	int32_t *wit = xmalloc((size_t)g->ntensors * sizeof *wit);
	for (int32_t t = 0; t < g->ntensors; t++)
		wit[t] = -1;
	for (int32_t k = 0; k < m->count; k++)
		for (int j = 0; j < m->nweights; j++)
			wit[m->weight[(size_t)k * (size_t)m->nweights +
			              (size_t)j]] = k;
	int r = IPU_OK;
	for (int32_t o = 0; o < g->nops && !r; o++)
		for (int i = 0; i < op_desc(g->ops[o].kind)->nin && !r; i++)
			r = check_reader(c, wit, o, g->ops[o].in[i], d);
	for (int32_t t = 0; t < g->ntensors && !r; t++) {
		int32_t p = g->tensors[t].producer;
		if (g->tensors[t].role == ROLE_OUTPUT && p >= 0 &&
		    graph_repeat_iteration(&g->repeat, p) >= 0 &&
		    t != m->last_out)
			r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "repeat: output '%s' is made in the loop "
			             "and is not the last iteration's carry",
			             name_of(g, t));
	}
	free(wit);
	return r;
}

int
graph_repeat_map(const Graph *g, RepeatMap *m, Diag *d)
{
	const GraphRepeat *rp = &g->repeat;
	*m = (RepeatMap){.first = rp->first,
	                 .len = rp->len,
	                 .count = rp->count,
	                 .carry_in = -1,
	                 .carry_out = -1,
	                 .last_out = -1};
	if (!rp->count)
		return IPU_OK;
	if (rp->count < 2 || rp->len < 1 || rp->first < 0 ||
	    (int64_t)rp->first + (int64_t)rp->len * rp->count > g->nops)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "repeat: %d iterations of %d ops from op %d do "
		                "not fit the graph's %d ops (at least 2 of 1)",
		                (int)rp->count, (int)rp->len, (int)rp->first,
		                g->nops);
	Check c = {.g = g, .m = m, .carry_rel = -1};
	c.kind = xmalloc((size_t)rp->len * GRAPH_MAX_INPUTS);
	c.wslot = xmalloc((size_t)g->ntensors * sizeof *c.wslot);
	for (int32_t t = 0; t < g->ntensors; t++) {
		c.wslot[t] = -1;
		c.stride += g->tensors[t].role == ROLE_WEIGHT;
	}
	size_t n = (size_t)m->count * (size_t)(c.stride ? c.stride : 1);
	m->weight = xmalloc(n * sizeof *m->weight);
	for (size_t i = 0; i < n; i++)
		m->weight[i] = -1;
	int r = IPU_OK;
	for (int32_t k = 1; k < m->count && !r; k++)
		for (int32_t j = 0; j < m->len && !r; j++)
			r = check_op(&c, j, k, d);
	free(c.wslot);
	if (!r && m->carry_in < 0)
		r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
		             "repeat: no iteration reads what the one before "
		             "made (nothing is carried)");
	if (r) {
		free(c.kind);
		repeat_map_free(m);
		return r;
	}
	/* weight [k][stride] -> [k][nweights] */
	for (int32_t k = 0; k < m->count; k++)
		memmove(&m->weight[k * m->nweights], &m->weight[k * c.stride],
		        (size_t)m->nweights * sizeof *m->weight);
	m->carry_out = g->ops[m->first + c.carry_rel].out;
	m->last_out =
	    g->ops[m->first + (m->count - 1) * m->len + c.carry_rel].out;
	r = check_carry(&c, d);
	if (!r)
		r = check_weights(&c, d);
	if (!r)
		r = check_uses(&c, d);
	free(c.kind);
	if (r)
		repeat_map_free(m);
	return r;
}

void
repeat_map_free(RepeatMap *m)
{
	free(m->weight);
	m->weight = NULL;
	m->nweights = 0;
}

int
graph_set_repeat(Graph *g, int32_t first, int32_t len, int32_t count, Diag *d)
{
	GraphRepeat old = g->repeat;
	g->repeat = (GraphRepeat){first, len, count};
	RepeatMap m;
	int r = graph_repeat_map(g, &m, d);
	repeat_map_free(&m);
	if (r)
		g->repeat = old;
	return r;
}

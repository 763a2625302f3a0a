/*
 * repeat.c - checking a graph's repeat promise (GraphRepeat) and mapping
 * each iteration's tensors to the first iteration's.
 *
 * The rules, checked op by op for iterations 1 .. count - 1 against
 * iteration 0 (the body), with G groups (iteration i is layer i / G of
 * group i % G; G is 1 but for a loop over groups):
 *   - the same op kind, attributes, output type and shape;
 *   - each input is either made by the same body op of the same iteration,
 *     or the same tensor as iteration 0's (shared: made before the loop),
 *     or, where iteration 0 reads the carry_in (made before the loop), the
 *     tensor iteration i - G made at the carry's place in the body (the
 *     first G iterations: a tensor made before the loop of carry_in's
 *     type and shape, its group's start), or a weight of the layer's own
 *     with the type and shape of iteration 0's (layer 0: the same);
 * and each input keeps its kind (the body's own, shared, carried, a
 * weight of its own) in every iteration; the carry is read only where
 * it is carried and keeps its type and shape; each weight stands for one
 * weight of one iteration; over the whole graph, a tensor made in the
 * loop is read only by its own iteration, except the carry (by iteration
 * i + G, or after the loop, the last G's), and a layer's own weight only
 * by its G iterations. The lowering (docs/compiler.md "Loops") relies on
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
	READ_CARRY,  /* iteration i - G's carry_out */
	READ_WEIGHT, /* a weight of its layer's own, in place of ta */
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
	int32_t stride;    /* m->weight is [layers][stride] while checking */
	int8_t *kind;      /* [len][GRAPH_MAX_INPUTS]: iteration G's ReadKind
	                    */
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
 * it (k >= G): its ReadKind, or -1 after a message. */
static int
read_kind(Check *c, int32_t j, int32_t k, int32_t ta, int32_t tb, Diag *d)
{
	const Graph *g = c->g;
	RepeatMap *m = c->m;
	const Tensor *a = &g->tensors[ta], *b = &g->tensors[tb];
	int32_t pa = a->producer, pb = b->producer, from = k - m->groups;
	const char *op = name_of(g, g->ops[m->first + k * m->len + j].out);
	if (pa >= m->first && pa < m->first + m->len) {
		if (pb == pa + k * m->len)
			return READ_BODY;
	} else if (ta == tb) {
		return READ_SHARED;
	} else if (pb >= m->first + from * m->len &&
	           pb < m->first + (from + 1) * m->len) {
		int32_t rel = pb - m->first - from * m->len;
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
		/* iteration G meets every weight first */
		int32_t *w = &c->wslot[ta];
		if (*w < 0 && k == m->groups)
			*w = m->nweights++;
		if (*w >= 0) {
			int32_t *slot = &m->weight[(size_t)(k / m->groups) *
			                               (size_t)c->stride +
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

/* What the first iteration of group k (0 < k < G) reads where iteration
 * 0 reads ta and iteration G reads it as `kind`: the same as iteration
 * 0 but for the carry, where its group starts from a tensor made before
 * the loop, like carry_in (group_in[k]). ReadKind, or -1 after a
 * message. */
static int
group_start_kind(Check *c, int kind, int32_t j, int32_t k, int32_t ta,
                 int32_t tb, Diag *d)
{
	const Graph *g = c->g;
	RepeatMap *m = c->m;
	const Tensor *a = &g->tensors[ta], *b = &g->tensors[tb];
	int32_t pa = a->producer, pb = b->producer;
	const char *op = name_of(g, g->ops[m->first + k * m->len + j].out);
	if (kind == READ_BODY && pb == pa + k * m->len)
		return READ_BODY;
	if ((kind == READ_SHARED || kind == READ_WEIGHT) && ta == tb)
		return kind;
	if (kind != READ_CARRY)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "repeat: '%s' (iteration %d) reads '%s' where "
		                "iteration 0 reads '%s'",
		                op, (int)k, b->name, a->name),
		       -1;
	if (pb < m->first && elem_equal(a->elem, b->elem) &&
	    shape_equal(&a->shape, &b->shape) &&
	    (m->group_in[k] < 0 || m->group_in[k] == tb)) {
		m->group_in[k] = tb;
		return READ_CARRY;
	}
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "repeat: '%s' (iteration %d, group %d's first) "
	                "reads '%s' where iteration 0 reads the carry '%s': "
	                "a group starts from one tensor made before the "
	                "loop, of the carry's type and shape",
	                op, (int)k, (int)k, b->name, a->name),
	       -1;
}

/* Input i of body op j, read as tb by iteration k: what iteration G
 * reads it as, iteration k reads it as too (the loop runs the same code
 * each time). */
static int
check_input(Check *c, int32_t j, int i, int32_t k, int32_t ta, int32_t tb,
            Diag *d)
{
	const RepeatMap *m = c->m;
	int8_t *first = &c->kind[j * GRAPH_MAX_INPUTS + i];
	int kind = k < m->groups ? group_start_kind(c, *first, j, k, ta, tb, d)
	                         : read_kind(c, j, k, ta, tb, d);
	if (kind < 0)
		return IPU_EINVAL;
	if (k == m->groups)
		*first = (int8_t)kind;
	if (*first == kind)
		return IPU_OK;
	const Graph *g = c->g;
	const Op *o = &g->ops[m->first + k * m->len + j],
	         *o1 = &g->ops[m->first + m->groups * m->len + j];
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "repeat: '%s' (iteration %d) reads '%s', %s, where "
	                "iteration %d reads '%s', %s",
	                name_of(g, o->out), (int)k, name_of(g, tb),
	                read_text[kind], (int)m->groups, name_of(g, o1->in[i]),
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
	        p = g->tensors[t].producer, G = m->groups;
	int32_t ip = p >= 0 ? graph_repeat_iteration(&g->repeat, p) : -1;
	if (wit[t] >= 0 && (io < 0 || io / G != wit[t]))
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "repeat: weight '%s' of iteration %d is read by "
		    "'%s'",
		    name_of(g, t), (int)(wit[t] * G),
		    name_of(g, g->ops[o].out));
	if (ip < 0 || ip == io)
		return IPU_OK;
	int carry = (p - m->first) % m->len == c->carry_rel;
	if (carry && (io == ip + G || (io < 0 && ip >= m->count - G)))
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
		         *o1 = &g->ops[m->first + m->groups * m->len + j];
		for (int i = 0; i < op_desc(o->kind)->nin; i++)
			if (o->in[i] == m->carry_in &&
			    c->kind[j * GRAPH_MAX_INPUTS + i] != READ_CARRY)
				return diag_set(
				    d, IPU_EINVAL, NULL, 0, 0,
				    "repeat: '%s' reads the carry '%s' where "
				    "iteration %d reads '%s', %s, not the "
				    "carry",
				    name_of(g, o->out), name_of(g, m->carry_in),
				    (int)m->groups, name_of(g, o1->in[i]),
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
	                "repeat: the carry '%s' is %s %s but iteration %d "
	                "reads '%s', %s %s, in its place: the carry keeps "
	                "its type and shape",
	                a->name, ea, sa, (int)m->groups, b->name, eb, sb);
}

/* Each weight is one layer's, in place of one of iteration 0's: the
 * host writes it into that one slot of the loop's weight bank. */
static int
check_weights(const Check *c, Diag *d)
{
	const Graph *g = c->g;
	const RepeatMap *m = c->m;
	int32_t n = m->count / m->groups * m->nweights;
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
		             name_of(g, w), (int)(s0 / m->nweights * m->groups),
		             name_of(g, m->weight[s0 % m->nweights]),
		             (int)(s / m->nweights * m->groups),
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
	for (int32_t k = 0; k < m->count / m->groups; k++)
		for (int j = 0; j < m->nweights; j++)
			wit[m->weight[(size_t)k * (size_t)m->nweights +
			              (size_t)j]] = k;
	int r = IPU_OK;
	for (int32_t o = 0; o < g->nops && !r; o++)
		for (int i = 0; i < op_desc(g->ops[o].kind)->nin && !r; i++)
			r = check_reader(c, wit, o, g->ops[o].in[i], d);
	for (int32_t t = 0; t < g->ntensors && !r; t++) {
		int32_t p = g->tensors[t].producer;
		int32_t it =
		    p >= 0 ? graph_repeat_iteration(&g->repeat, p) : -1;
		if (g->tensors[t].role == ROLE_OUTPUT && it >= 0 &&
		    (it < m->count - m->groups ||
		     t != m->group_out[it % m->groups]))
			r = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "repeat: output '%s' is made in the loop "
			             "and is not the last iteration's carry%s",
			             name_of(g, t),
			             m->groups > 1 ? " of its group" : "");
	}
	free(wit);
	return r;
}

int
graph_repeat_map(const Graph *g, RepeatMap *m, Diag *d)
{
	const GraphRepeat *rp = &g->repeat;
	int32_t G = rp->groups > 1 ? rp->groups : 1;
	*m = (RepeatMap){.first = rp->first,
	                 .len = rp->len,
	                 .count = rp->count,
	                 .groups = G,
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
	if (rp->count % G || rp->count / G < 2)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "repeat: %d iterations are not %d groups of the "
		    "same number of layers, at least 2",
		    (int)rp->count, (int)G);
	Check c = {.g = g, .m = m, .carry_rel = -1};
	c.kind = xmalloc((size_t)rp->len * GRAPH_MAX_INPUTS);
	c.wslot = xmalloc((size_t)g->ntensors * sizeof *c.wslot);
	for (int32_t t = 0; t < g->ntensors; t++) {
		c.wslot[t] = -1;
		c.stride += g->tensors[t].role == ROLE_WEIGHT;
	}
	int32_t layers = m->count / G;
	size_t n = (size_t)layers * (size_t)(c.stride ? c.stride : 1);
	m->weight = xmalloc(n * sizeof *m->weight);
	for (size_t i = 0; i < n; i++)
		m->weight[i] = -1;
	m->group_in = xmalloc((size_t)G * sizeof *m->group_in);
	m->group_out = xmalloc((size_t)G * sizeof *m->group_out);
	for (int32_t k = 0; k < G; k++)
		m->group_in[k] = m->group_out[k] = -1;
	/* iteration G first: what it reads is what every later one reads,
	 * and the first iteration of each group but for the carry */
	int r = IPU_OK;
	for (int32_t i = 0; i < m->count - 1 && !r; i++) {
		int32_t k = G + i < m->count ? G + i : G + i - m->count + 1;
		for (int32_t j = 0; j < m->len && !r; j++)
			r = check_op(&c, j, k, d);
	}
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
	for (int32_t k = 0; k < layers; k++)
		memmove(&m->weight[k * m->nweights], &m->weight[k * c.stride],
		        (size_t)m->nweights * sizeof *m->weight);
	m->carry_out = g->ops[m->first + c.carry_rel].out;
	m->group_in[0] = m->carry_in;
	for (int32_t k = 0; k < G; k++)
		m->group_out[k] =
		    g->ops[m->first + (m->count - G + k) * m->len + c.carry_rel]
		        .out;
	m->last_out = m->group_out[G - 1];
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
	free(m->group_in);
	free(m->group_out);
	m->weight = m->group_in = m->group_out = NULL;
	m->nweights = 0;
}

int
graph_set_repeat(Graph *g, int32_t first, int32_t len, int32_t count,
                 int32_t groups, Diag *d)
{
	GraphRepeat old = g->repeat;
	g->repeat = (GraphRepeat){first, len, count, groups};
	RepeatMap m;
	int r = graph_repeat_map(g, &m, d);
	repeat_map_free(&m);
	if (r)
		g->repeat = old;
	return r;
}

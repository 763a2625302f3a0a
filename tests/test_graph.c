/* test_graph.c - the graph IR: every op built with good and bad shapes
 * (messages checked), names, the text round trip over graphs using every
 * op, parse errors with their line:col, the verifier on hand-corrupted
 * graphs, and work counts against hand-computed values. */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/graph/graph.h"

static const ElemType F32 = {DT_F32, 0};
static const ElemType F16 = {DT_F16, 0};

#define SHAPE(...)                                                             \
	(&(Shape){sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t),          \
	          {__VA_ARGS__}})

/* Fail unless d holds exactly `want`. */
static void
check_msg(const Diag *d, const char *want)
{
	if (strcmp(d->msg, want))
		fail_msg("message\n  '%s'\nwant\n  '%s'", d->msg, want);
}

static void
check_shape(const Graph *g, int32_t id, const Shape *want)
{
	assert_true(id >= 0);
	const Tensor *t = graph_tensor(g, id);
	char have[128], w[128];
	shape_format(&t->shape, have, sizeof have);
	shape_format(want, w, sizeof w);
	assert_string_equal(have, w);
}

/* ---- builder ---- */

/* The MLP of the issue, built by hand. */
static Graph *
mlp(void)
{
	Graph *g = graph_new();
	Diag d;
	int32_t x = graph_input(g, "x", F16, SHAPE(729, 1152), &d);
	int32_t w1 = graph_weight(g, "w1", F16, SHAPE(1152, 4304), &d);
	int32_t w2 = graph_weight(g, "w2", (ElemType){DT_F8_F143, -3},
	                          SHAPE(4304, 1152), &d);
	int32_t h = graph_matmul(g, x, w1, 0, "h", &d);
	int32_t h2 = graph_cast(g, h, F16, "h2", &d);
	int32_t y = graph_matmul(g, h2, w2, 0, "y", &d);
	int32_t z = graph_add(g, y, x, "z", &d);
	assert_int_equal(z, 6);
	assert_int_equal(graph_mark_output(g, z, &d), 0);
	assert_int_equal(graph_verify(g, &d), 0);
	return g;
}

static void
test_build_mlp(void **state)
{
	Graph *g = mlp();
	assert_int_equal(g->ntensors, 7);
	assert_int_equal(g->nops, 4);
	check_shape(g, graph_find(g, "h"), SHAPE(729, 4304));
	check_shape(g, graph_find(g, "z"), SHAPE(729, 1152));
	/* f16 x f8 -> f16 */
	assert_int_equal(graph_tensor(g, graph_find(g, "y"))->elem.dtype,
	                 DT_F16);
	assert_int_equal(graph_tensor(g, 6)->role, ROLE_OUTPUT);
	assert_int_equal(graph_tensor(g, 3)->role, ROLE_INTERMEDIATE);
	assert_int_equal(graph_tensor(g, 3)->producer, 0);
	assert_int_equal(graph_tensor(g, 0)->producer, -1);
	assert_int_equal(graph_tensor(g, 2)->elem.scale, -3);
	assert_null(graph_tensor(g, 7));
	assert_int_equal(graph_find(g, "nope"), -1);
	graph_free(g);
}

static void
test_matmul(void **state)
{
	Graph *g = graph_new();
	Diag d;
	int32_t a = graph_input(g, "a", F16, SHAPE(4, 7), &d);
	int32_t b = graph_input(g, "b", F16, SHAPE(8, 3), &d);
	int32_t at = graph_input(g, "at", F32, SHAPE(7, 4), &d);
	int32_t c = graph_input(g, "c", F16, SHAPE(3, 7), &d);
	int32_t v = graph_input(g, "v", F16, SHAPE(7), &d);
	int32_t p = graph_input(g, "p", F16, SHAPE(2, 3, 4, 5), &d);
	int32_t q = graph_input(g, "q", F16, SHAPE(2, 3, 6, 5), &d);
	int32_t r = graph_input(g, "r", F16, SHAPE(2, 4, 6, 5), &d);
	int n = g->ntensors;

	assert_int_equal(graph_matmul(g, a, b, 0, NULL, &d), -1);
	check_msg(&d, "matmul: inner dimensions differ: a is [4, 7], b is "
	              "[8, 3]");
	assert_int_equal(graph_matmul(g, a, c, GRAPH_TRANSPOSE_A, NULL, &d),
	                 -1);
	check_msg(&d, "matmul: inner dimensions differ: a is [4, 7], b is "
	              "[3, 7] (transpose_a)");
	assert_int_equal(graph_matmul(g, a, v, 0, NULL, &d), -1);
	check_msg(&d, "matmul: operands need rank >= 2: a is [4, 7], b is "
	              "[7]");
	assert_int_equal(graph_matmul(g, p, a, 0, NULL, &d), -1);
	check_msg(&d, "matmul: batch axes differ: a is [2, 3, 4, 5], b is "
	              "[4, 7]");
	assert_int_equal(graph_matmul(g, p, r, GRAPH_TRANSPOSE_B, NULL, &d),
	                 -1);
	check_msg(&d, "matmul: batch axes differ: a is [2, 3, 4, 5], b is "
	              "[2, 4, 6, 5] (transpose_b)");
	assert_int_equal(graph_matmul(g, a, 99, 0, NULL, &d), -1);
	check_msg(&d, "matmul: input 1: no tensor with id 99");
	assert_int_equal(g->ntensors, n); /* failures change nothing */
	assert_int_equal(g->nops, 0);

	/* [4, 7] x [3, 7]^T -> [4, 3]; f16 x f16 -> f16 */
	int32_t m1 = graph_matmul(g, a, c, GRAPH_TRANSPOSE_B, NULL, &d);
	check_shape(g, m1, SHAPE(4, 3));
	assert_int_equal(graph_tensor(g, m1)->elem.dtype, DT_F16);
	/* [7, 4]^T x [3, 7]^T -> [4, 3]; f32 x f16 -> f32 */
	int32_t m2 = graph_matmul(g, at, c, 3, NULL, &d);
	check_shape(g, m2, SHAPE(4, 3));
	assert_int_equal(graph_tensor(g, m2)->elem.dtype, DT_F32);
	/* batch [2, 3]: [4, 5] x [6, 5]^T -> [4, 6] */
	check_shape(g, graph_matmul(g, p, q, GRAPH_TRANSPOSE_B, NULL, &d),
	            SHAPE(2, 3, 4, 6));
	const Op *op = &g->ops[1];
	assert_int_equal(op->kind, OP_MATMUL);
	assert_int_equal(op->attr.transpose_a, 1);
	assert_int_equal(op->attr.transpose_b, 1);
	graph_free(g);
}

static void
test_elementwise(void **state)
{
	Graph *g = graph_new();
	Diag d;
	int32_t a = graph_input(g, "a", F16, SHAPE(4, 3), &d);
	int32_t bias = graph_input(g, "bias", F16, SHAPE(3), &d);
	int32_t col = graph_input(g, "col", F16, SHAPE(4, 1), &d);
	int32_t u = graph_input(g, "u", F16, SHAPE(2, 1, 3), &d);
	int32_t f = graph_input(g, "f", F32, SHAPE(4, 3), &d);
	int32_t e =
	    graph_input(g, "e", (ElemType){DT_F8_F152, 2}, SHAPE(4, 3), &d);
	int32_t r = graph_input(g, "r", F16, SHAPE(4), &d);

	check_shape(g, graph_add(g, a, a, NULL, &d), SHAPE(4, 3));
	check_shape(g, graph_add(g, a, bias, NULL, &d), SHAPE(4, 3));
	check_shape(g, graph_mul(g, bias, col, NULL, &d), SHAPE(4, 3));
	check_shape(g, graph_mul(g, u, col, NULL, &d), SHAPE(2, 4, 3));
	assert_int_equal(graph_add(g, a, r, NULL, &d), -1);
	check_msg(&d, "add: shapes do not broadcast: a is [4, 3], b is [4]");
	assert_int_equal(graph_mul(g, a, f, NULL, &d), -1);
	check_msg(&d, "mul: element types differ: a is f16, b is f32");
	assert_int_equal(graph_add(g, e, e, NULL, &d), -1);
	check_msg(&d, "add: input 'e' is f8_f152*2^2; the op takes f32, f16");
	graph_free(g);
}

static void
test_cast_reshape_transpose(void **state)
{
	Graph *g = graph_new();
	Diag d;
	int32_t x = graph_input(g, "x", F16, SHAPE(2, 3, 4), &d);
	ElemType f8 = {DT_F8_F143, -3};
	int32_t c = graph_cast(g, x, f8, "c", &d);
	assert_true(elem_equal(graph_tensor(g, c)->elem, f8));
	check_shape(g, c, SHAPE(2, 3, 4));
	assert_int_equal(graph_cast(g, x, (ElemType){DT_F16, 1}, NULL, &d), -1);
	check_msg(&d, "cast: f16 has no scale (only f8 types do)");
	assert_int_equal(graph_cast(g, x, (ElemType){DT_F8_F152, 32}, NULL, &d),
	                 -1);
	check_msg(&d, "cast: f8 scale 2^32 is outside 2^-32..2^31");

	check_shape(g, graph_reshape(g, c, SHAPE(6, 4), NULL, &d), SHAPE(6, 4));
	assert_int_equal(graph_reshape(g, x, SHAPE(5, 5), NULL, &d), -1);
	check_msg(&d, "reshape: element counts differ: x is [2, 3, 4] (24), "
	              "shape [5, 5] (25)");
	assert_int_equal(graph_reshape(g, x, SHAPE(24, 0), NULL, &d), -1);
	check_msg(&d, "reshape: shape [24, 0]: dimensions must be >= 1");

	/* output axis i is input axis perm[i] */
	check_shape(g, graph_transpose(g, x, SHAPE(2, 0, 1), NULL, &d),
	            SHAPE(4, 2, 3));
	assert_int_equal(graph_transpose(g, x, SHAPE(0, 0, 1), NULL, &d), -1);
	check_msg(&d, "transpose: perm [0, 0, 1] is not a permutation of the "
	              "3 axes of x [2, 3, 4]");
	assert_int_equal(graph_transpose(g, x, SHAPE(1, 0), NULL, &d), -1);
	check_msg(&d, "transpose: perm [1, 0] is not a permutation of the 3 "
	              "axes of x [2, 3, 4]");

	/* slice: elements begin[i] .. end[i] - 1 of each axis */
	OpAttrs sa = {.begin = *SHAPE(1, 0, 1), .end = *SHAPE(2, 3, 3)};
	check_shape(g, graph_op(g, OP_SLICE, &x, &sa, NULL, &d),
	            SHAPE(1, 3, 2));
	sa.end = *SHAPE(2, 3, 5);
	assert_int_equal(graph_op(g, OP_SLICE, &x, &sa, NULL, &d), -1);
	check_msg(&d, "slice: begin [1, 0, 1] and end [2, 3, 5] are not a "
	              "non-empty range of every axis of x [2, 3, 4]");
	sa = (OpAttrs){.begin = *SHAPE(0, 0), .end = *SHAPE(2, 3)};
	assert_int_equal(graph_op(g, OP_SLICE, &x, &sa, NULL, &d), -1);

	/* gather: rows of a table [V, D] by f32 ids [N] */
	int32_t gi[2] = {graph_weight(g, "tab", F16, SHAPE(7, 5), &d),
	                 graph_input(g, "ids", F32, SHAPE(3), &d)};
	int32_t gt = graph_op(g, OP_GATHER, gi, &(OpAttrs){0}, NULL, &d);
	check_shape(g, gt, SHAPE(3, 5));
	assert_int_equal(graph_tensor(g, gt)->elem.dtype, DT_F16);
	gi[1] = x;
	assert_int_equal(graph_op(g, OP_GATHER, gi, &(OpAttrs){0}, NULL, &d),
	                 -1);
	check_msg(&d, "gather: table [7, 5] and ids [2, 3, 4]: want a table "
	              "[V, D] and ids [N]");
	gi[1] = graph_input(g, "ids16", F16, SHAPE(3), &d);
	assert_int_equal(graph_op(g, OP_GATHER, gi, &(OpAttrs){0}, NULL, &d),
	                 -1);
	check_msg(&d, "gather: ids are f16; want f32 (integers as exact "
	              "values)");
	/* a row split's block: ids from base, f32-exact past its end */
	gi[1] = graph_input(g, "ids2", F32, SHAPE(3), &d);
	assert_true(graph_op(g, OP_GATHER, gi, &(OpAttrs){.base = 1 << 23},
	                     NULL, &d) >= 0);
	assert_int_equal(graph_op(g, OP_GATHER, gi,
	                          &(OpAttrs){.base = (1 << 24) - 6}, NULL, &d),
	                 -1);
	check_msg(&d, "gather: base=16777210 and 7 rows pass 2^24 (ids are "
	              "exact f32 integers below it)");
	graph_free(g);
}

static void
test_norm_ops(void **state)
{
	Graph *g = graph_new();
	Diag d;
	int32_t x = graph_input(g, "x", F16, SHAPE(2, 3, 4), &d);
	int32_t gm = graph_weight(g, "g", F16, SHAPE(4), &d);
	int32_t bt = graph_weight(g, "b", F16, SHAPE(4), &d);
	int32_t g5 = graph_weight(g, "g5", F16, SHAPE(5), &d);
	int32_t g32 = graph_weight(g, "g32", F32, SHAPE(4), &d);
	int32_t g2 = graph_weight(g, "g2", F16, SHAPE(1, 4), &d);
	OpAttrs a = {.eps = 1e-6};
	int32_t y =
	    graph_op(g, OP_LAYERNORM, (int32_t[]){x, gm, bt}, &a, "y", &d);
	check_shape(g, y, SHAPE(2, 3, 4));
	assert_true(elem_equal(graph_tensor(g, y)->elem, F16));
	assert_int_equal(
	    graph_op(g, OP_LAYERNORM, (int32_t[]){x, g5, bt}, &a, NULL, &d),
	    -1);
	check_msg(&d, "layernorm: gamma is [5]; want [4], the last axis of x "
	              "[2, 3, 4]");
	assert_int_equal(
	    graph_op(g, OP_LAYERNORM, (int32_t[]){x, gm, g2}, &a, NULL, &d),
	    -1);
	check_msg(&d, "layernorm: beta is [1, 4]; want [4], the last axis of "
	              "x [2, 3, 4]");
	assert_int_equal(
	    graph_op(g, OP_LAYERNORM, (int32_t[]){x, g32, bt}, &a, NULL, &d),
	    -1);
	check_msg(&d, "layernorm: gamma is f32; want x's type f16");
	a.eps = -1;
	assert_int_equal(
	    graph_op(g, OP_LAYERNORM, (int32_t[]){x, gm, bt}, &a, NULL, &d),
	    -1);
	check_msg(&d, "layernorm: eps=-1: want a value >= 0");
	a.eps = INFINITY;
	assert_int_equal(
	    graph_op(g, OP_LAYERNORM, (int32_t[]){x, gm, bt}, &a, NULL, &d),
	    -1);
	check_msg(&d, "layernorm: eps=inf: want a finite number");
	a = (OpAttrs){.scale = 0.5};
	assert_int_equal(
	    graph_op(g, OP_LAYERNORM, (int32_t[]){x, gm, bt}, &a, NULL, &d),
	    -1);
	check_msg(&d, "layernorm: scale=0.5: want none");

	a = (OpAttrs){.scale = 0.125};
	int32_t s = graph_op(g, OP_SOFTMAX, (int32_t[]){y}, &a, "s", &d);
	check_shape(g, s, SHAPE(2, 3, 4));
	a.scale = 0;
	assert_int_equal(graph_op(g, OP_SOFTMAX, (int32_t[]){y}, &a, NULL, &d),
	                 -1);
	check_msg(&d, "softmax: scale=0: want a value > 0 (softmax(scale * "
	              "x); write scale=1 for plain softmax)");
	a.scale = NAN;
	assert_int_equal(graph_op(g, OP_SOFTMAX, (int32_t[]){y}, &a, NULL, &d),
	                 -1);
	check_msg(&d, "softmax: scale=nan: want a finite number");
	a = (OpAttrs){.scale = 1, .eps = -0.0};
	assert_int_equal(graph_op(g, OP_SOFTMAX, (int32_t[]){y}, &a, NULL, &d),
	                 -1);
	check_msg(&d, "softmax: eps=-0: want none");
	/* 8 and 5 operations an element */
	assert_int_equal(graph_op_work(g, &g->ops[0]).ops, 8 * 24);
	assert_int_equal(graph_op_work(g, &g->ops[1]).ops, 5 * 24);
	graph_free(g);
}

static void
test_names_and_outputs(void **state)
{
	Graph *g = graph_new();
	Diag d;
	int32_t a = graph_input(g, "t1", F32, SHAPE(2, 2), &d);
	int32_t b = graph_add(g, a, a, NULL, &d); /* id 1: "t1" is taken */
	assert_string_equal(graph_tensor(g, b)->name, "t1_1");
	int32_t c = graph_add(g, b, a, NULL, &d);
	assert_string_equal(graph_tensor(g, c)->name, "t2");
	assert_int_equal(graph_add(g, a, a, "t2", &d), -1);
	check_msg(&d, "tensor 't2' is already defined");
	assert_int_equal(graph_input(g, "2x", F32, SHAPE(1), &d), -1);
	assert_non_null(strstr(d.msg, "bad tensor name '2x'"));
	assert_int_equal(graph_input(g, "x", F32, &(Shape){7, {1}}, &d), -1);
	check_msg(&d, "rank 7 is outside 1..6");
	assert_int_equal(
	    graph_input(g, "x", F32, SHAPE(1 << 20, 1 << 20, 2), &d), -1);
	check_msg(&d, "shape [1048576, 1048576, 2]: more than 2^40 elements");
	assert_int_equal(graph_verify(g, &d), IPU_EINVAL);
	check_msg(&d, "the graph has no output");
	assert_int_equal(graph_mark_output(g, a, &d), IPU_EINVAL);
	check_msg(&d, "output: 't1' is declared as input, not written by an "
	              "op");
	assert_int_equal(graph_mark_output(g, 42, &d), IPU_EINVAL);
	assert_int_equal(graph_mark_output(g, c, &d), 0);
	assert_int_equal(graph_mark_output(g, c, &d), 0);
	assert_int_equal(graph_verify(g, &d), 0);
	graph_free(g);
}

/* ---- text ---- */

/* Parse or fail the test. */
static Graph *
parse_ok(const char *src)
{
	Graph *g;
	Diag e[GRAPH_MAX_ERRORS];
	int n;
	if (graph_parse(src, strlen(src), "t.graph", &g, e, &n)) {
		char buf[1400];
		diag_format(&e[0], buf, sizeof buf);
		fail_msg("parse failed (%d errors):\n%s", n, buf);
	}
	return g;
}

/* Same tensors, ops and attributes, field by field. */
static void
check_same_graph(const Graph *a, const Graph *b)
{
	assert_int_equal(a->ntensors, b->ntensors);
	assert_int_equal(a->nops, b->nops);
	assert_int_equal(a->repeat.first, b->repeat.first);
	assert_int_equal(a->repeat.len, b->repeat.len);
	assert_int_equal(a->repeat.count, b->repeat.count);
	assert_int_equal(a->repeat.groups, b->repeat.groups);
	for (int i = 0; i < a->ntensors; i++) {
		const Tensor *s = &a->tensors[i], *t = &b->tensors[i];
		assert_int_equal(s->id, t->id);
		assert_string_equal(s->name, t->name);
		assert_true(elem_equal(s->elem, t->elem));
		assert_true(shape_equal(&s->shape, &t->shape));
		assert_int_equal(s->role, t->role);
		assert_int_equal(s->producer, t->producer);
	}
	for (int i = 0; i < a->nops; i++) {
		const Op *p = &a->ops[i], *q = &b->ops[i];
		assert_int_equal(p->kind, q->kind);
		assert_memory_equal(p->in, q->in, sizeof p->in);
		assert_int_equal(p->out, q->out);
		assert_int_equal(p->attr.transpose_a, q->attr.transpose_a);
		assert_int_equal(p->attr.transpose_b, q->attr.transpose_b);
		assert_true(elem_equal(p->attr.to, q->attr.to));
		assert_true(shape_equal(&p->attr.shape, &q->attr.shape));
		assert_true(shape_equal(&p->attr.perm, &q->attr.perm));
		/* bit for bit: -0 and +0 differ */
		assert_memory_equal(&p->attr.eps, &q->attr.eps, sizeof(double));
		assert_memory_equal(&p->attr.scale, &q->attr.scale,
		                    sizeof(double));
	}
}

/* print -> parse -> print gives the same text and the same graph. */
static void
round_trip(const Graph *g)
{
	char *text = graph_print_str(g);
	Graph *back = parse_ok(text);
	char *again = graph_print_str(back);
	assert_string_equal(text, again);
	check_same_graph(g, back);
	free(text);
	free(again);
	graph_free(back);
}

static const char mlp_text[] = "# a small MLP\n"
                               "input x f16 [729, 1152]\n"
                               "weight w1 f16 [1152, 4304]\n"
                               "weight w2 f8_f143*2^-3 [4304, 1152]\n"
                               "h = matmul x w1\n"
                               "h2 = cast h f16\n"
                               "y = matmul h2 w2 transpose_b=0\n"
                               "z = add y x\n"
                               "output z\n";

/* Every op, every attribute, broadcasting, both f8 formats, several
 * outputs, a declaration after ops and odd spacing. */
static const char every_op_text[] =
    "input a f32 [2, 3, 4, 5]   # batch 2x3\n"
    "weight b f32 [2, 3, 6, 5]\n"
    "\tc  =  matmul a b transpose_b=1  \n"
    "ct = matmul b c transpose_a=1 transpose_b=1\n"
    "weight bias f32 [6]\n"
    "d = add c bias\n"
    "e = mul d d\n"
    "e2 = gelu e\n"
    "e3 = relu e2\n"
    "e4 = max e2 bias\n"
    "f = cast e2 f8_f152*2^7\n"
    "g = cast f f8_f143*2^-32\n"
    "r = reshape g [6, 4, 6]\n"
    "t = transpose r [2, 0, 1]\n"
    "u = cast t f16\n"
    "weight ln_g f16 [4]\n"
    "weight ln_b f16 [4]\n"
    "n = layernorm u ln_g ln_b eps=1e-6\n"
    "nn = norm u eps=1e-5\n"
    "s = softmax n scale=0.125\n"
    "sl = slice s [1, 0, 2] [6, 3, 4]\n"
    "sl2 = slice s [0, 0, 0] [6, 2, 4]\n"
    "cc = concat s sl2 axis=1\n"
    "weight tab f16 [5, 4]\n"
    "input ids f32 [3]\n"
    "gt = gather tab ids\n"
    "gb = gather tab ids base=30000\n"
    "output gt\n"
    "output gb\n"
    "output s\n"
    "output cc\n"
    "output sl\n"
    "output u\n"
    "output ct\n"
    "output e4\n";

static void
test_round_trip(void **state)
{
	Graph *g = mlp();
	Graph *p = parse_ok(mlp_text);
	check_same_graph(g, p);
	round_trip(g);
	char *text = graph_print_str(p);
	assert_string_equal(text, "input x f16 [729, 1152]\n"
	                          "weight w1 f16 [1152, 4304]\n"
	                          "weight w2 f8_f143*2^-3 [4304, 1152]\n"
	                          "h = matmul x w1\n"
	                          "h2 = cast h f16\n"
	                          "y = matmul h2 w2\n"
	                          "z = add y x\n"
	                          "output z\n");
	free(text);
	graph_free(p);
	graph_free(g);

	g = parse_ok(every_op_text);
	int seen[OP_COUNT] = {0};
	for (int i = 0; i < g->nops; i++)
		seen[g->ops[i].kind]++;
	for (int k = 0; k < OP_COUNT; k++)
		if (!seen[k])
			fail_msg("every_op_text lacks op %s",
			         op_desc((OpKind)k)->name);
	check_shape(g, graph_find(g, "t"), SHAPE(6, 6, 4));
	check_shape(g, graph_find(g, "ct"), SHAPE(2, 3, 5, 4));
	assert_int_equal(graph_tensor(g, graph_find(g, "g"))->elem.scale, -32);
	assert_int_equal(graph_tensor(g, graph_find(g, "ct"))->role,
	                 ROLE_OUTPUT);
	round_trip(g);
	graph_free(g);
}

/* Float attributes: the shortest text that reads back exactly, reals in
 * every form the tokenizer takes, -0 kept, +0 left out. */
static void
test_float_attrs(void **state)
{
	Graph *g = parse_ok("input x f32 [2, 8]\n"
	                    "weight g f32 [8]\n"
	                    "weight b f32 [8]\n"
	                    "a = layernorm x g b eps=1e-6\n"
	                    "c = layernorm x g b eps=0.1\n"
	                    "e = layernorm x g b eps=-0\n"
	                    "f = layernorm x g b eps=0\n"
	                    "h = layernorm x g b eps=2.5E+3\n"
	                    "i = layernorm x g b\n"
	                    "j = softmax x scale=0.08838834764831843\n"
	                    "k = softmax x scale=3\n"
	                    "l = softmax x scale=1.\n"
	                    "output a\n");
	assert_true(g->ops[0].attr.eps == 1e-6);
	assert_true(g->ops[1].attr.eps == 0.1);
	assert_true(g->ops[2].attr.eps == 0 && signbit(g->ops[2].attr.eps));
	assert_true(g->ops[4].attr.eps == 2500);
	assert_true(g->ops[5].attr.eps == 0 && !signbit(g->ops[5].attr.eps));
	assert_true(g->ops[6].attr.scale == 1 / sqrt(128));
	char *text = graph_print_str(g);
	assert_string_equal(text, "input x f32 [2, 8]\n"
	                          "weight g f32 [8]\n"
	                          "weight b f32 [8]\n"
	                          "a = layernorm x g b eps=1e-06\n"
	                          "c = layernorm x g b eps=0.1\n"
	                          "e = layernorm x g b eps=-0\n"
	                          "f = layernorm x g b\n"
	                          "h = layernorm x g b eps=2.5e+03\n"
	                          "i = layernorm x g b\n"
	                          "j = softmax x scale=0.08838834764831843\n"
	                          "k = softmax x scale=3\n"
	                          "l = softmax x scale=1\n"
	                          "output a\n");
	free(text);
	round_trip(g);
	graph_free(g);
	/* builder values that need all 17 digits */
	g = graph_new();
	Diag d;
	int32_t x = graph_input(g, "x", F32, SHAPE(3), &d);
	OpAttrs a = {.scale = nextafter(0.1, 1)};
	int32_t y = graph_op(g, OP_SOFTMAX, (int32_t[]){x}, &a, "y", &d);
	graph_mark_output(g, y, &d);
	round_trip(g);
	graph_free(g);
}

/* The docs example, keyword names and generated names. */
static void
test_round_trip_names(void **state)
{
	Graph *g;
	char *text;
	/* the example of docs/graph.md; keywords as tensor names */
	g = parse_ok("# a small MLP\n"
	             "input x f16 [729, 1152]\n"
	             "weight w1 f16 [1152, 4304]\n"
	             "weight w2 f8_f143*2^-3 [4304, 1152]\n"
	             "h = matmul x w1\n"
	             "h2 = cast h f16\n"
	             "y = matmul h2 w2 transpose_b=0\n"
	             "z = add y x\n"
	             "r = reshape z [729, 32, 36]\n"
	             "t = transpose r [1, 0, 2]\n"
	             "output z\n"
	             "output t\n");
	check_shape(g, graph_find(g, "t"), SHAPE(32, 729, 36));
	round_trip(g);
	graph_free(g);
	g = parse_ok("input input f32 [2]\noutput = add input input\n"
	             "output output\n");
	round_trip(g);
	graph_free(g);

	/* builder-made names survive too */
	g = graph_new();
	int32_t x = graph_input(g, NULL, F16, SHAPE(3, 3), NULL);
	int32_t y = graph_transpose(g, x, SHAPE(1, 0), NULL, NULL);
	graph_mark_output(g, graph_matmul(g, x, y, 0, NULL, NULL), NULL);
	text = graph_print_str(g);
	assert_string_equal(text, "input t0 f16 [3, 3]\n"
	                          "t1 = transpose t0 [1, 0]\n"
	                          "t2 = matmul t0 t1\n"
	                          "output t2\n");
	free(text);
	round_trip(g);
	graph_free(g);
}

/* Parse, expecting errors; returns their number. */
static int
parse_fail(const char *src, Diag *e)
{
	Graph *g = (Graph *)1;
	int n = -1;
	assert_int_equal(graph_parse(src, strlen(src), "t.graph", &g, e, &n),
	                 IPU_EINVAL);
	assert_null(g);
	assert_true(n > 0);
	return n;
}

static void
check_error(const Diag *d, int line, int col, const char *want)
{
	if (strcmp(d->file, "t.graph") || d->line != line || d->col != col ||
	    strcmp(d->msg, want))
		fail_msg("error %s:%d:%d: %s\nwant t.graph:%d:%d: %s", d->file,
		         d->line, d->col, d->msg, line, col, want);
}

static void
test_parse_errors(void **state)
{
	Diag e[GRAPH_MAX_ERRORS];
	/* several errors, each on its line; y's failure silences z */
	const char *src = "input x f16 [4, 7]\n"
	                  "weight w f16 [8, 3]\n"
	                  "y = matmul x w\n"
	                  "z = add y x\n"
	                  "q = frob x\n"
	                  "input v f16 [4, 0]\n"
	                  "input k f16 [4] junk\n"
	                  "output nothere\n"
	                  "c = cast x f16*2^1\n"
	                  "s = reshape x [2, 14] transpose_a=1\n";
	assert_int_equal(parse_fail(src, e), 7);
	check_error(&e[0], 3, 5,
	            "matmul: inner dimensions differ: a is [4, 7], b is "
	            "[8, 3]");
	assert_string_equal(e[0].source_line, "y = matmul x w");
	check_error(&e[1], 5, 5, "expected an op name, found 'frob'");
	check_error(&e[2], 6, 7, "shape [4, 0]: dimensions must be >= 1");
	check_error(&e[3], 7, 17, "unexpected 'junk' after the statement");
	check_error(&e[4], 8, 8, "unknown tensor 'nothere'");
	check_error(&e[5], 9, 15, "f16 takes no scale");
	check_error(&e[6], 10, 23, "reshape takes no attribute 'transpose_a'");
	char buf[1400];
	diag_format(&e[0], buf, sizeof buf);
	assert_string_equal(buf, "t.graph:3:5: matmul: inner dimensions "
	                         "differ: a is [4, 7], b is [8, 3]\n"
	                         "  y = matmul x w\n"
	                         "      ^");
}

/* One error each, with its position. */
static void
test_parse_error_cases(void **state)
{
	Diag e[GRAPH_MAX_ERRORS];
	parse_fail("input x f8_f143*2^40 [1]\n", e);
	check_error(&e[0], 1, 17, "the scale must be 2^N with N in -32..31");
	parse_fail("input x f16 [1, 2, 3, 4, 5, 6, 7]\n", e);
	check_error(&e[0], 1, 32, "more than 6 axes");
	parse_fail("input x f16 [2]\ny = matmul x x transpose_a=2\n", e);
	check_error(&e[0], 2, 28, "transpose_a takes 0 or 1");
	parse_fail("input x f16 [2]\n"
	           "y = matmul x x transpose_a=1 transpose_a=0\n",
	           e);
	check_error(&e[0], 2, 30, "transpose_a given twice");
	parse_fail("input x f16 [2, 2]\ny = concat x x axis=16777217\n", e);
	check_error(&e[0], 2, 21, "axis takes 0 .. 2^24");
	parse_fail("input x f16 [2]\nx = add x x\n", e);
	check_error(&e[0], 2, 1, "tensor 'x' is already defined");
	parse_fail("input x f16 [2] $\n", e);
	check_error(&e[0], 1, 17, "unexpected character 0x24");
	parse_fail("matmul x y\n", e);
	check_error(
	    &e[0], 1, 1,
	    "expected input, weight, output, repeat or 'name = op ...', found "
	    "'matmul'");
	parse_fail("input x f16 [2]\noutput x\n", e);
	check_error(&e[0], 2, 8,
	            "output: 'x' is declared as input, not written by an op");
	parse_fail("# nothing\ninput x f16 [2]\n", e);
	assert_int_equal(e[0].line, 0);
	check_msg(&e[0], "no output: mark a result with 'output NAME'");
}

static void
test_parse_error_limits(void **state)
{
	Diag e[GRAPH_MAX_ERRORS];
	/* at most GRAPH_MAX_ERRORS; NULL errs is allowed */
	char many[400] = "";
	for (int i = 0; i < 20; i++)
		strcat(many, "bogus\n");
	assert_int_equal(parse_fail(many, e), GRAPH_MAX_ERRORS);
	Graph *g;
	assert_int_equal(graph_parse(many, strlen(many), "m", &g, NULL, NULL),
	                 IPU_EINVAL);
	/* a NUL byte and no final newline */
	assert_int_equal(
	    graph_parse("input x f16 [2]\n\0", 17, "m", &g, e, NULL),
	    IPU_EINVAL);
	check_msg(&e[0], "unexpected character 0x00");
}

/* ---- verifier ---- */

/* Break a fresh MLP with `corrupt`, expect verify to say `want`. */
static void
check_corrupt(void (*corrupt)(Graph *), const char *want)
{
	Graph *g = mlp();
	Diag d;
	corrupt(g);
	assert_int_equal(graph_verify(g, &d), IPU_EINVAL);
	check_msg(&d, want);
	graph_free(g);
}

static void
dup_name(Graph *g)
{
	free(g->tensors[4].name);
	g->tensors[4].name = xstrdup("h"); /* h2 -> h */
}

static void
bad_shape(Graph *g)
{
	g->tensors[3].shape.dim[1] = 4305;
}

static void
bad_elem(Graph *g)
{
	g->tensors[6].elem.dtype = DT_F32;
}

static void
use_before_def(Graph *g)
{
	g->ops[0].in[1] = 5; /* h = matmul x y, y written by op 2 */
}

static void
self_cycle(Graph *g)
{
	g->ops[1].in[0] = 4; /* h2 = cast h2 */
}

static void
written_twice(Graph *g)
{
	g->ops[1].out = 3; /* op 1 writes h as well */
}

static void
declared_written(Graph *g)
{
	g->tensors[3].role = ROLE_WEIGHT;
}

static void
bad_dtype_for_op(Graph *g)
{
	g->ops[3].in[1] = 2; /* add y w2: f8 */
}

static void
stray_attr(Graph *g)
{
	g->ops[3].attr.transpose_a = 1;
}

static void
no_output(Graph *g)
{
	g->tensors[6].role = ROLE_INTERMEDIATE;
}

static void
bad_id(Graph *g)
{
	g->tensors[2].id = 7;
}

static void
bad_kind(Graph *g)
{
	g->ops[2].kind = OP_COUNT;
}

static void
test_verify(void **state)
{
	check_corrupt(dup_name, "tensor 4: name 'h' is not unique or not "
	                        "indexed");
	check_corrupt(bad_shape, "op 0 ('h'): output is f16 [729, 4305], "
	                         "inference says f16 [729, 4304]");
	check_corrupt(bad_elem, "op 3 ('z'): output is f32 [729, 1152], "
	                        "inference says f16 [729, 1152]");
	check_corrupt(use_before_def, "op 0 ('h'): input 'y' is written "
	                              "later, by op 2");
	check_corrupt(self_cycle, "op 1 ('h2'): input 'h2' is written "
	                          "later, by op 1");
	check_corrupt(written_twice, "tensor 'h2': producer op 1 does not "
	                             "write it");
	check_corrupt(declared_written, "tensor 'h': an input or weight with "
	                                "producer op 0");
	check_corrupt(bad_dtype_for_op,
	              "op 3 ('z'): add: input 'w2' is f8_f143*2^-3; the op "
	              "takes f32, f16");
	check_corrupt(stray_attr, "op 3 ('z'): add: transpose_a=1: want none");
	check_corrupt(no_output, "the graph has no output");
	check_corrupt(bad_id, "tensor 2: id field is 7");
	char want[64];
	snprintf(want, sizeof want, "op 2 ('y'): unknown op kind %d", OP_COUNT);
	check_corrupt(bad_kind, want);
}

/* ---- work ---- */

static void
test_work(void **state)
{
	Graph *g = mlp();
	/* h = [729, 1152] x [1152, 4304]: 729 * 1152 = 839,808;
	 * 839,808 * 4304 = 3,359,232,000 + 251,942,400 + 3,359,232
	 * = 3,614,533,632 MACs. y = [729, 4304] x [4304, 1152]: the same.
	 * z = add over [729, 1152]: 839,808 operations. The cast: none. */
	OpWork w = graph_op_work(g, &g->ops[0]);
	assert_int_equal(w.macs, 3614533632LL);
	assert_int_equal(w.ops, 0);
	assert_int_equal(graph_op_work(g, &g->ops[1]).macs, 0);
	assert_int_equal(graph_op_work(g, &g->ops[1]).ops, 0);
	assert_int_equal(graph_op_work(g, &g->ops[2]).macs, 3614533632LL);
	assert_int_equal(graph_op_work(g, &g->ops[3]).ops, 839808);
	/* 2 * 2 * 3,614,533,632 + 839,808 = 14,458,974,336 */
	assert_int_equal(graph_flops(g), 14458974336LL);
	graph_free(g);

	/* batch [2, 3], M 4, K 5, N 6: 2*3*4*5*6 = 720 MACs, with a or b
	 * transposed or not; broadcast add to [2, 4, 3]: 24 ops */
	g = parse_ok("input a f16 [2, 3, 4, 5]\n"
	             "input at f16 [2, 3, 5, 4]\n"
	             "input b f16 [2, 3, 5, 6]\n"
	             "input bt f16 [2, 3, 6, 5]\n"
	             "input u f16 [2, 1, 3]\n"
	             "input v f16 [4, 1]\n"
	             "m1 = matmul a b\n"
	             "m2 = matmul at bt transpose_a=1 transpose_b=1\n"
	             "s = add u v\n"
	             "r = reshape s [24]\n"
	             "output m1\noutput m2\noutput r\n");
	assert_int_equal(graph_op_work(g, &g->ops[0]).macs, 720);
	assert_int_equal(graph_op_work(g, &g->ops[1]).macs, 720);
	assert_int_equal(graph_op_work(g, &g->ops[2]).ops, 24);
	assert_int_equal(graph_op_work(g, &g->ops[3]).ops, 0);
	assert_int_equal(graph_flops(g), 2 * 720 * 2 + 24);
	graph_free(g);
}

static void
test_tables(void **state)
{
	for (int k = 0; k < OP_COUNT; k++) {
		const OpDesc *od = op_desc((OpKind)k);
		assert_int_equal(op_from_name(od->name, strlen(od->name)), k);
		assert_true(od->nin >= 1 && od->nin <= GRAPH_MAX_INPUTS);
		assert_non_null(od->infer);
		assert_non_null(od->work);
	}
	assert_int_equal(op_from_name("matmu", 5), OP_COUNT);
	assert_int_equal(dtype_from_name("f8_f152", 7), DT_F8_F152);
	assert_int_equal(dtype_from_name("f8", 2), -1);
	assert_int_equal(dtype_size(DT_F32), 4);
	assert_int_equal(dtype_size(DT_F16), 2);
	assert_int_equal(dtype_size(DT_F8_F143), 1);
	assert_true(dtype_is_f8(DT_F8_F143) && !dtype_is_f8(DT_F16));
	char buf[32];
	elem_format((ElemType){DT_F8_F152, -5}, buf, sizeof buf);
	assert_string_equal(buf, "f8_f152*2^-5");
}

/* Two layers of h = x + x w, each on its own weight, then a GELU; `last`
 * is what the GELU reads, `extra` one more line. */
static void
repeat_graph(char *buf, size_t n, const char *last, const char *extra)
{
	snprintf(buf, n,
	         "input x f16 [4, 8]\n"
	         "weight w0 f16 [8, 8]\n"
	         "m0 = matmul x w0\n"
	         "h0 = add x m0\n"
	         "weight w1 f16 [8, 8]\n"
	         "m1 = matmul h0 w1\n"
	         "h1 = add h0 m1\n"
	         "z = gelu %s\n"
	         "output z\n"
	         "%s",
	         last, extra);
}

static void
test_repeat(void **state)
{
	(void)state;
	char text[1024];
	repeat_graph(text, sizeof text, "h1", "repeat 2 m0 h0\n");
	Graph *g = parse_ok(text);
	assert_int_equal(g->repeat.first, 0);
	assert_int_equal(g->repeat.len, 2);
	assert_int_equal(g->repeat.count, 2);
	round_trip(g);
	RepeatMap m;
	Diag d, e[GRAPH_MAX_ERRORS];
	assert_int_equal(graph_repeat_map(g, &m, &d), 0);
	assert_int_equal(m.carry_in, graph_find(g, "x"));
	assert_int_equal(m.carry_out, graph_find(g, "h0"));
	assert_int_equal(m.last_out, graph_find(g, "h1"));
	assert_int_equal(m.nweights, 1);
	assert_int_equal(m.weight[0], graph_find(g, "w0"));
	assert_int_equal(m.weight[1], graph_find(g, "w1"));
	repeat_map_free(&m);
	/* clearing and a refused promise leave the graph as it was */
	assert_int_equal(graph_set_repeat(g, 0, 2, 0, 1, &d), 0);
	assert_int_equal(g->repeat.count, 0);
	assert_int_not_equal(graph_set_repeat(g, 1, 2, 2, 1, &d), 0);
	assert_int_equal(g->repeat.count, 0);
	graph_free(g);

	repeat_graph(text, sizeof text, "h1", "repeat 3 m0 h0\n");
	parse_fail(text, e);
	check_error(&e[0], 10, 0,
	            "repeat: 3 iterations of 2 ops from op 0 do not fit the "
	            "graph's 5 ops (at least 2 of 1)");
	repeat_graph(text, sizeof text, "m1", "repeat 2 m0 h0\n");
	parse_fail(text, e);
	check_error(&e[0], 10, 0,
	            "repeat: 'm1' of iteration 1 is read by 'z' after the "
	            "loop");
	repeat_graph(text, sizeof text, "h1", "repeat 2 m0 q\n");
	parse_fail(text, e);
	check_error(&e[0], 10, 0, "repeat: 'q' is not made by an op");
	repeat_graph(text, sizeof text, "h1",
	             "repeat 2 m0 h0\nrepeat 2 m0 h0\n");
	parse_fail(text, e);
	check_error(&e[0], 11, 1, "a second repeat (the first is on line 10)");
	/* iteration 1 is not the same op */
	parse_fail("input x f16 [4, 8]\nweight w0 f16 [8, 8]\n"
	           "m0 = matmul x w0\nh0 = add x m0\n"
	           "weight w1 f16 [8, 8]\nm1 = matmul h0 w1\n"
	           "h1 = mul h0 m1\noutput h1\nrepeat 2 m0 h0\n",
	           e);
	check_error(&e[0], 9, 0,
	            "repeat: 'h1' (iteration 1) is not the same op, "
	            "attributes and type as 'h0' of iteration 0");
	/* iteration 1 reads iteration 0's weight as well as its own */
	parse_fail("input x f16 [4, 8]\nweight w0 f16 [8, 8]\n"
	           "m0 = matmul x w0\nh0 = add x m0\n"
	           "weight w1 f16 [8, 8]\nm1 = matmul h0 w1\n"
	           "h1 = add h0 m1\nz = matmul h1 w0\noutput z\n"
	           "repeat 2 m0 h0\n",
	           e);
	check_error(&e[0], 10, 0,
	            "repeat: weight 'w0' of iteration 0 is read by 'z'");
	/* nothing carried: each iteration reads x */
	parse_fail("input x f16 [4, 8]\nweight w0 f16 [8, 8]\n"
	           "m0 = matmul x w0\nweight w1 f16 [8, 8]\n"
	           "m1 = matmul x w1\nh = add m0 m1\noutput h\n"
	           "repeat 2 m0 m0\n",
	           e);
	check_error(&e[0], 8, 0,
	            "repeat: no iteration reads what the one before made "
	            "(nothing is carried)");
	/* The loop runs iteration 0's code each time with the carry and the
	 * weights swapped in; what that cannot express is refused (issue
	 * 11: each of these compiled and ran wrong before). Iteration 0
	 * reads x as the carry and as itself, which iteration 1 reads: */
	parse_fail("input x f32 [4, 8]\nh0 = add x x\nh1 = add h0 x\n"
	           "output h1\nrepeat 2 h0 h0\n",
	           e);
	check_error(&e[0], 5, 0,
	            "repeat: 'h0' reads the carry 'x' where iteration 1 reads "
	            "'x', a tensor made before the loop, not the carry");
	/* iteration 2 starts again from x */
	parse_fail("input x f32 [4, 8]\nweight w f32 [4, 8]\n"
	           "h0 = add x w\nh1 = add h0 w\nh2 = add x w\n"
	           "output h2\nrepeat 3 h0 h0\n",
	           e);
	check_error(&e[0], 7, 0,
	            "repeat: 'h2' (iteration 2) reads 'x', a tensor made "
	            "before the loop, where iteration 1 reads 'h0', the carry");
	/* w1 stands for both of iteration 0's weights */
	parse_fail("input x f32 [4, 8]\nweight a0 f32 [4, 8]\n"
	           "weight b0 f32 [4, 8]\nweight w1 f32 [4, 8]\n"
	           "h0 = add x a0\nk0 = mul h0 b0\n"
	           "h1 = add k0 w1\nk1 = mul h1 w1\n"
	           "output k1\nrepeat 2 h0 k0\n",
	           e);
	check_error(&e[0], 10, 0,
	            "repeat: weight 'w1' is read by iteration 1 in place of "
	            "'a0' and by iteration 1 in place of 'b0': each weight "
	            "stands for one");
	/* the carry w0 is also iteration 0's own weight */
	parse_fail("weight w0 f32 [4, 8]\nweight w1 f32 [4, 8]\n"
	           "h0 = add w0 w0\nh1 = add h0 w1\n"
	           "output h1\nrepeat 2 h0 h0\n",
	           e);
	check_error(&e[0], 6, 0,
	            "repeat: 'h0' reads the carry 'w0' where iteration 1 reads "
	            "'w1', a weight of its own, not the carry");
	/* a row carried into a matrix */
	parse_fail("input x f16 [8]\nweight b0 f16 [4, 8]\n"
	           "h0 = add x b0\nweight b1 f16 [4, 8]\nh1 = add h0 b1\n"
	           "output h1\nrepeat 2 h0 h0\n",
	           e);
	check_error(&e[0], 7, 0,
	            "repeat: the carry 'x' is f16 [8] but iteration 1 reads "
	            "'h0', f16 [4, 8], in its place: the carry keeps its "
	            "type and shape");
}

/* Two layers of h = x + x w on two groups, a from a and b from b; group
 * 1's first reads `start1` where group 0's reads a, layer 0's group 1
 * weight `w01`, layer 1's group 1 carry `c11`; `extra` the last lines. */
static void
group_graph(char *buf, size_t n, const char *start1, const char *w01,
            const char *c11, const char *extra)
{
	snprintf(buf, n,
	         "input a f16 [4, 8]\n"
	         "input b f16 [4, 8]\n"
	         "weight w0 f16 [8, 8]\n"
	         "weight w1 f16 [8, 8]\n"
	         "m0 = matmul a w0\n"
	         "h0 = add a m0\n"
	         "m1 = matmul %s %s\n"
	         "h1 = add %s m1\n"
	         "m2 = matmul h0 w1\n"
	         "h2 = add h0 m2\n"
	         "m3 = matmul %s w1\n"
	         "h3 = add %s m3\n"
	         "%s",
	         start1, w01, start1, c11, c11, extra);
}

/* A loop over groups: iteration i is layer i / 2 of group i % 2, the
 * groups' iterations of a layer on its weights, each group carrying on
 * from its own start. */
static void
test_repeat_groups(void **state)
{
	(void)state;
	char text[1024];
	Diag e[GRAPH_MAX_ERRORS];
	static const char joined[] = "z = concat h2 h3 axis=0\noutput z\n";
	char tail[256];
	snprintf(tail, sizeof tail, "%srepeat 4 m0 h0 groups 2\n", joined);
	group_graph(text, sizeof text, "b", "w0", "h1", tail);
	Graph *g = parse_ok(text);
	assert_int_equal(g->repeat.count, 4);
	assert_int_equal(g->repeat.groups, 2);
	round_trip(g);
	char *printed = graph_print_str(g);
	assert_non_null(strstr(printed, "\nrepeat 4 m0 h0 groups 2\n"));
	free(printed);
	RepeatMap m;
	Diag d;
	assert_int_equal(graph_repeat_map(g, &m, &d), 0);
	assert_int_equal(m.groups, 2);
	assert_int_equal(m.carry_in, graph_find(g, "a"));
	assert_int_equal(m.carry_out, graph_find(g, "h0"));
	assert_int_equal(m.last_out, graph_find(g, "h3"));
	assert_int_equal(m.group_in[0], graph_find(g, "a"));
	assert_int_equal(m.group_in[1], graph_find(g, "b"));
	assert_int_equal(m.group_out[0], graph_find(g, "h2"));
	assert_int_equal(m.group_out[1], graph_find(g, "h3"));
	assert_int_equal(m.nweights, 1);
	assert_int_equal(m.weight[0], graph_find(g, "w0"));
	assert_int_equal(m.weight[1], graph_find(g, "w1"));
	repeat_map_free(&m);
	graph_free(g);

	/* not whole layers of 2 groups, or one layer (nothing carried) */
	snprintf(tail, sizeof tail, "%srepeat 4 m0 h0 groups 3\n", joined);
	group_graph(text, sizeof text, "b", "w0", "h1", tail);
	parse_fail(text, e);
	check_error(&e[0], 15, 0,
	            "repeat: 4 iterations are not 3 groups of the same "
	            "number of layers, at least 2");
	snprintf(tail, sizeof tail, "%srepeat 4 m0 h0 groups 4\n", joined);
	group_graph(text, sizeof text, "b", "w0", "h1", tail);
	parse_fail(text, e);
	check_error(&e[0], 15, 0,
	            "repeat: 4 iterations are not 4 groups of the same "
	            "number of layers, at least 2");
	snprintf(tail, sizeof tail, "%srepeat 4 m0 h0 groups 0\n", joined);
	group_graph(text, sizeof text, "b", "w0", "h1", tail);
	parse_fail(text, e);
	check_error(&e[0], 15, 0, "repeat: expected 1 to 4 groups, found 0");
	/* group 1 of layer 0 on layer 1's weight */
	snprintf(tail, sizeof tail, "%srepeat 4 m0 h0 groups 2\n", joined);
	group_graph(text, sizeof text, "b", "w1", "h1", tail);
	parse_fail(text, e);
	check_error(&e[0], 15, 0,
	            "repeat: 'm1' (iteration 1) reads 'w1' where iteration 0 "
	            "reads 'w0'");
	/* group 1 starts from group 0's first carry */
	group_graph(text, sizeof text, "h0", "w0", "h1", tail);
	parse_fail(text, e);
	check_error(&e[0], 15, 0,
	            "repeat: 'm1' (iteration 1, group 1's first) reads 'h0' "
	            "where iteration 0 reads the carry 'a': a group starts "
	            "from one tensor made before the loop, of the carry's "
	            "type and shape");
	/* group 1's layer 1 carries on from group 0's layer 0 */
	group_graph(text, sizeof text, "b", "w0", "h0", tail);
	parse_fail(text, e);
	check_error(&e[0], 15, 0,
	            "repeat: 'm3' (iteration 3) reads 'h0' where iteration 0 "
	            "reads 'a'");
	/* group 1's layer 0 carry is an output */
	group_graph(text, sizeof text, "b", "w0", "h1",
	            "z = concat h2 h3 axis=0\noutput z\noutput h1\n"
	            "repeat 4 m0 h0 groups 2\n");
	parse_fail(text, e);
	check_error(&e[0], 16, 0,
	            "repeat: output 'h1' is made in the loop and is not the "
	            "last iteration's carry of its group");
	/* layer 0's weight after the loop */
	group_graph(text, sizeof text, "b", "w0", "h1",
	            "z = matmul h3 w0\noutput z\nrepeat 4 m0 h0 groups 2\n");
	parse_fail(text, e);
	check_error(&e[0], 15, 0,
	            "repeat: weight 'w0' of iteration 0 is read by 'z'");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_build_mlp),
	    cmocka_unit_test(test_matmul),
	    cmocka_unit_test(test_elementwise),
	    cmocka_unit_test(test_cast_reshape_transpose),
	    cmocka_unit_test(test_names_and_outputs),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_round_trip_names),
	    cmocka_unit_test(test_float_attrs),
	    cmocka_unit_test(test_norm_ops),
	    cmocka_unit_test(test_parse_errors),
	    cmocka_unit_test(test_parse_error_cases),
	    cmocka_unit_test(test_parse_error_limits),
	    cmocka_unit_test(test_verify),
	    cmocka_unit_test(test_work),
	    cmocka_unit_test(test_tables),
	    cmocka_unit_test(test_repeat),
	    cmocka_unit_test(test_repeat_groups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

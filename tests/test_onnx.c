/*
 * test_onnx.c - the ONNX importer (src/onnx/) on models built here with
 * protobuf-c: a good model with a shape subgraph that must fold away,
 * checked through the tests' graph interpreter against sums by hand; and
 * files that must be refused with an error naming what and where
 * (truncated, missing initializer, unknown op, wrong opset, dynamic
 * shape, mismatched output shape, an op with no IR form, bad tensor data).
 */
#include "support.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/onnx/onnx.h"
#include "../src/plan/plan.h"
#include "interp.h"
#include "onnx.pb-c.h"

/* Everything a model allocates, freed at the end of each test. */
static void *arena[512];
static int narena;

static void *
alloc(size_t n)
{
	assert_true(narena < 512);
	return arena[narena++] = xcalloc(1, n);
}

static void
arena_free(void)
{
	while (narena)
		free(arena[--narena]);
}

static Onnx__ValueInfoProto *
vinfo(const char *name, int rank, const int64_t *dim, const char *param)
{
	Onnx__ValueInfoProto *v = alloc(sizeof *v);
	onnx__value_info_proto__init(v);
	v->name = (char *)name;
	Onnx__TypeProto *t = v->type = alloc(sizeof *t);
	onnx__type_proto__init(t);
	t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	Onnx__TypeProto__Tensor *tt = t->tensor_type = alloc(sizeof *tt);
	onnx__type_proto__tensor__init(tt);
	tt->has_elem_type = 1;
	tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	Onnx__TensorShapeProto *s = tt->shape = alloc(sizeof *s);
	onnx__tensor_shape_proto__init(s);
	s->n_dim = (size_t)rank;
	s->dim = alloc((size_t)rank * sizeof *s->dim);
	for (int i = 0; i < rank; i++) {
		Onnx__TensorShapeProto__Dimension *d = s->dim[i] =
		    alloc(sizeof *d);
		onnx__tensor_shape_proto__dimension__init(d);
		if (param && i == 0) {
			d->value_case =
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = (char *)param;
		} else {
			d->value_case =
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dim[i];
		}
	}
	return v;
}

static Onnx__TensorProto *
floats(const char *name, int rank, const int64_t *dim, const float *v, size_t n)
{
	Onnx__TensorProto *t = alloc(sizeof *t);
	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->n_dims = (size_t)rank;
	t->dims = (int64_t *)dim;
	t->has_data_type = 1;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	t->n_float_data = n;
	t->float_data = (float *)v;
	return t;
}

static Onnx__TensorProto *
ints(const char *name, const int64_t *v, size_t n)
{
	Onnx__TensorProto *t = alloc(sizeof *t);
	int64_t *dim = alloc(sizeof *dim);
	*dim = (int64_t)n;
	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->n_dims = 1;
	t->dims = dim;
	t->has_data_type = 1;
	t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	t->n_int64_data = n;
	t->int64_data = (int64_t *)v;
	return t;
}

/* A node; ins and outs NULL-terminated. */
static Onnx__NodeProto *
node(const char *op, const char *name, const char *const *ins,
     const char *const *outs)
{
	Onnx__NodeProto *n = alloc(sizeof *n);
	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->name = (char *)name;
	while (ins[n->n_input])
		n->n_input++;
	while (outs[n->n_output])
		n->n_output++;
	n->input = (char **)ins;
	n->output = (char **)outs;
	return n;
}

/* a appended to n's attributes */
static void
add_attr(Onnx__NodeProto *n, Onnx__AttributeProto *a)
{
	Onnx__AttributeProto **was = n->attribute;
	n->attribute = alloc((n->n_attribute + 1) * sizeof *n->attribute);
	for (size_t i = 0; i < n->n_attribute; i++)
		n->attribute[i] = was[i];
	n->attribute[n->n_attribute++] = a;
}

static void
int_attr(Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = alloc(sizeof *a);
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a->has_i = 1;
	a->i = v;
	add_attr(n, a);
}

static void
str_attr(Onnx__NodeProto *n, const char *name, const char *v)
{
	Onnx__AttributeProto *a = alloc(sizeof *a);
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
	a->has_s = 1;
	a->s.len = strlen(v);
	a->s.data = (uint8_t *)v;
	add_attr(n, a);
}

typedef struct {
	Onnx__ModelProto m;
	Onnx__GraphProto g;
	Onnx__OperatorSetIdProto op;
	Onnx__OperatorSetIdProto *ops[1];
	Onnx__NodeProto *node[16];
	Onnx__TensorProto *init[8];
	Onnx__ValueInfoProto *in[2], *out[2];
} Model;

static const int64_t XD[] = {2, 4}, WD[] = {4, 3}, BD[] = {3}, YD[] = {2, 3};
static const float W[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
static const float Bv[] = {0.5f, -1, 2};
static const int64_t ZERO[] = {0}, MINUS1[] = {-1};

/* x [2, 4] -> y = reshape(x W + b, concat(unsqueeze(shape(x)[0]), [-1]))
 * at opset 13: the shape arithmetic folds to a constant [2, -1]. */
static void
good_model(Model *md)
{
	memset(md, 0, sizeof *md);
	onnx__model_proto__init(&md->m);
	onnx__graph_proto__init(&md->g);
	onnx__operator_set_id_proto__init(&md->op);
	md->op.domain = "";
	md->op.has_version = 1;
	md->op.version = 13;
	md->ops[0] = &md->op;
	md->m.has_ir_version = 1;
	md->m.ir_version = 7;
	md->m.n_opset_import = 1;
	md->m.opset_import = md->ops;
	md->m.graph = &md->g;
	static const char *const mm_in[] = {"x", "W", NULL};
	static const char *const mm_out[] = {"mm", NULL};
	static const char *const add_in[] = {"mm", "b", NULL};
	static const char *const add_out[] = {"h", NULL};
	static const char *const sh_in[] = {"x", NULL};
	static const char *const sh_out[] = {"s", NULL};
	static const char *const ga_in[] = {"s", "i0", NULL};
	static const char *const ga_out[] = {"s0", NULL};
	static const char *const un_in[] = {"s0", "zero", NULL};
	static const char *const un_out[] = {"s1", NULL};
	static const char *const cc_in[] = {"s1", "minus1", NULL};
	static const char *const cc_out[] = {"shape", NULL};
	static const char *const rs_in[] = {"h", "shape", NULL};
	static const char *const rs_out[] = {"y", NULL};
	int k = 0;
	md->node[k++] = node("MatMul", "mm", mm_in, mm_out);
	md->node[k++] = node("Add", "add", add_in, add_out);
	md->node[k++] = node("Shape", "shape_of", sh_in, sh_out);
	md->node[k++] = node("Gather", "gather", ga_in, ga_out);
	md->node[k++] = node("Unsqueeze", "unsq", un_in, un_out);
	Onnx__NodeProto *cc = node("Concat", "concat", cc_in, cc_out);
	int_attr(cc, "axis", 0);
	md->node[k++] = cc;
	md->node[k++] = node("Reshape", "reshape", rs_in, rs_out);
	md->g.n_node = (size_t)k;
	md->g.node = md->node;
	md->init[0] = floats("W", 2, WD, W, 12);
	md->init[1] = floats("b", 1, BD, Bv, 3);
	md->init[2] = ints("zero", ZERO, 1);
	md->init[3] = ints("minus1", MINUS1, 1);
	md->init[4] = ints("i0", ZERO, 1);
	md->init[4]->n_dims = 0; /* a scalar index: Gather drops the axis */
	md->g.n_initializer = 5;
	md->g.initializer = md->init;
	md->in[0] = vinfo("x", 2, XD, NULL);
	md->out[0] = vinfo("y", 2, YD, NULL);
	md->g.n_input = md->g.n_output = 1;
	md->g.input = md->in;
	md->g.output = md->out;
}

static uint8_t *
pack(const Model *md, size_t *len)
{
	*len = onnx__model_proto__get_packed_size(&md->m);
	uint8_t *b = xmalloc(*len);
	onnx__model_proto__pack(&md->m, b);
	return b;
}

/* Import md in type t; returns the error text ("" on success, *out
 * set). */
static const char *
import_as(const Model *md, OnnxDType t, OnnxModel **out)
{
	static Diag d;
	size_t len;
	uint8_t *b = pack(md, &len);
	OnnxModel *m = NULL;
	int e = onnx_import(b, len, "t.onnx", t, &m, &d);
	free(b);
	if (out)
		*out = m;
	else
		onnx_model_free(m);
	if (e) {
		static char buf[1400];
		diag_format(&d, buf, sizeof buf);
		return buf;
	}
	return "";
}

static const char *
import(const Model *md, OnnxModel **out)
{
	return import_as(md, ONNX_F32, out);
}

static void
expect_error(const Model *md, const char *a, const char *b)
{
	const char *msg = import(md, NULL);
	if (!strstr(msg, a) || (b && !strstr(msg, b)))
		fail_msg("error '%s' lacks '%s' / '%s'", msg, a, b ? b : "");
	arena_free();
}

/* The imported model's weights as the interpreter's values. */
static void
interp_set_weights(Interp *in, const OnnxModel *m)
{
	for (int w = 0; w < m->nweights; w++) {
		int32_t id = m->weight_id[w];
		size_t n = (size_t)shape_elems(&graph_tensor(m->g, id)->shape);
		in->val[id] = xcalloc(n, sizeof(long double));
		for (size_t i = 0; i < n; i++)
			in->val[id][i] = m->weight_value[w][i];
	}
}

static void
test_good_model(void **state)
{
	(void)state;
	Model md;
	good_model(&md);
	OnnxModel *m;
	const char *msg = import(&md, &m);
	assert_string_equal(msg, "");
	assert_int_equal(m->ninputs, 1);
	assert_int_equal(m->noutputs, 1);
	assert_string_equal(m->inputs[0].name, "x");
	assert_int_equal(m->nweights, 2);
	/* the shape arithmetic left no op behind: matmul, add, reshape */
	assert_true(m->g->nops <= 3);
	for (int i = 0; i < m->g->nops; i++)
		assert_true(m->g->ops[i].kind == OP_MATMUL ||
		            m->g->ops[i].kind == OP_ADD ||
		            m->g->ops[i].kind == OP_RESHAPE);
	Interp in;
	interp_init(&in, m->g);
	long double x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (long double)(i - 3) / 4;
	in.val[m->inputs[0].id] = xcalloc(8, sizeof(long double));
	memcpy(in.val[m->inputs[0].id], x, sizeof x);
	interp_set_weights(&in, m);
	interp_run(m->g, &in);
	const long double *y = in.val[m->outputs[0].id];
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 3; c++) {
			long double want = Bv[c];
			for (int k = 0; k < 4; k++)
				want += x[r * 4 + k] * W[k * 3 + c];
			assert_true(fabsl(y[r * 3 + c] - want) < 1e-6L);
		}
	interp_free(&in, m->g);
	onnx_model_free(m);
	arena_free();
}

static void
test_truncated(void **state)
{
	(void)state;
	Model md;
	good_model(&md);
	size_t len;
	uint8_t *b = pack(&md, &len);
	OnnxModel *m;
	Diag d;
	for (size_t cut = 1; cut < len; cut += 7) {
		int e = onnx_import(b, cut, "t.onnx", ONNX_F32, &m, &d);
		assert_int_not_equal(e, 0); /* never a crash, never a model */
		assert_null(m);
	}
	assert_int_equal(onnx_import(b, len / 2, "t.onnx", ONNX_F16, &m, &d),
	                 IPU_EINVAL);
	assert_non_null(strstr(d.msg, "not a valid ONNX protobuf"));
	assert_string_equal(d.file, "t.onnx");
	free(b);
	arena_free();
}

static void
test_missing_initializer(void **state)
{
	(void)state;
	Model md;
	good_model(&md);
	md.g.n_initializer = 1; /* W only: no b */
	expect_error(&md, "node 'add' (Add)", "input 'b' is not defined");
}

static void
test_unknown_op(void **state)
{
	(void)state;
	Model md;
	good_model(&md);
	md.node[1]->op_type = "Frobnicate";
	expect_error(&md, "node 'add' (Frobnicate)",
	             "operator Frobnicate is not supported");
}

static void
test_opset(void **state)
{
	(void)state;
	Model md;
	good_model(&md);
	md.op.version = 12;
	expect_error(&md, "opset 12", "13..17");
}

static void
test_dynamic_shape(void **state)
{
	(void)state;
	Model md;
	good_model(&md);
	md.in[0] = vinfo("x", 2, XD, "batch");
	expect_error(&md, "input 'x'", "the symbol 'batch'");
}

static void
test_output_shape(void **state)
{
	(void)state;
	Model md;
	good_model(&md);
	static const int64_t wrong[] = {3, 2};
	md.out[0] = vinfo("y", 2, wrong, NULL);
	expect_error(&md, "output 'y'", "[2, 3]");
}

static void
test_no_ir_operator(void **state)
{
	(void)state;
	Model md;
	good_model(&md);
	/* y = Sqrt(h): only LayerNorm's form holds a Sqrt */
	static const char *const in[] = {"h", NULL}, *const out[] = {"y", NULL};
	md.node[2] = node("Sqrt", "sqrt", in, out);
	md.g.n_node = 3;
	expect_error(&md, "node 'sqrt' (Sqrt)", "LayerNorm");
}

static void
test_bad_tensor_data(void **state)
{
	(void)state;
	Model md;
	good_model(&md);
	md.init[0]->n_float_data = 11; /* dims say 12 */
	expect_error(&md, "initializer 'W'", "12 elements");
}

static void
test_bad_reshape(void **state)
{
	(void)state;
	Model md;
	good_model(&md);
	static const int64_t five[] = {5};
	md.init[3] = ints("minus1", five, 1); /* [2, 5] from 6 elements */
	expect_error(&md, "node 'reshape' (Reshape)", "cannot be reshaped");
}

static void
ints_attr(Onnx__NodeProto *n, const char *name, const int64_t *v, size_t cnt)
{
	Onnx__AttributeProto *a = alloc(sizeof *a);
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a->n_ints = cnt;
	a->ints = (int64_t *)v;
	add_attr(n, a);
}

/* x [1, 2, 4, 4] -> Conv (2 x 2 kernel, stride 2, bias) -> ReduceMean
 * over the image -> y [1, 3]: the patches times the weight and the mean as
 * matmuls (through tests/interp.c) against sums by hand; padded by 1 (3 x
 * 3 windows, those at the edges half outside): the windows' taps joined
 * and times the reordered weight. */
static const int64_t CXD[] = {1, 2, 4, 4}, CWD[] = {3, 2, 2, 2}, CBD[] = {3},
                     CYD[] = {1, 3}, TWO2[] = {2, 2}, AXES23[] = {2, 3},
                     PADS1[] = {1, 1, 1, 1};
static float CW[24];
static const float CB[] = {0.25f, -0.5f, 1};

static void
conv_model(Model *md)
{
	good_model(md);
	for (int i = 0; i < 24; i++)
		CW[i] = (float)((i * 7) % 11 - 5) / 4;
	static const char *const cv_in[] = {"x", "CW", "CB", NULL};
	static const char *const cv_out[] = {"c", NULL};
	static const char *const mn_in[] = {"c", NULL};
	static const char *const mn_out[] = {"y", NULL};
	Onnx__NodeProto *cv = node("Conv", "conv", cv_in, cv_out);
	ints_attr(cv, "kernel_shape", TWO2, 2);
	ints_attr(cv, "strides", TWO2, 2);
	Onnx__NodeProto *mn = node("ReduceMean", "mean", mn_in, mn_out);
	int_attr(mn, "keepdims", 0);
	ints_attr(mn, "axes", AXES23, 2);
	md->node[0] = cv;
	md->node[1] = mn;
	md->g.n_node = 2;
	md->init[0] = floats("CW", 4, CWD, CW, 24);
	md->init[1] = floats("CB", 1, CBD, CB, 3);
	md->g.n_initializer = 2;
	md->in[0] = vinfo("x", 4, CXD, NULL);
	md->out[0] = vinfo("y", 2, CYD, NULL);
}

static void
test_conv_mean(void **state)
{
	(void)state;
	Model md;
	for (int p = 0; p < 2; p++) {
		conv_model(&md);
		if (p)
			ints_attr(md.node[0], "pads", PADS1, 4);
		OnnxModel *m;
		const char *msg = import(&md, &m);
		assert_string_equal(msg, "");
		Interp in;
		interp_init(&in, m->g);
		long double x[32];
		for (int i = 0; i < 32; i++)
			x[i] = (long double)((i * 5) % 13 - 6) / 8;
		in.val[m->inputs[0].id] = xcalloc(32, sizeof(long double));
		memcpy(in.val[m->inputs[0].id], x, sizeof x);
		interp_set_weights(&in, m);
		interp_run(m->g, &in);
		const long double *y = in.val[m->outputs[0].id];
		int side = 2 + p; /* output positions a side */
		for (int o = 0; o < 3; o++) {
			long double want = 0; /* the mean of the outputs */
			for (int py = 0; py < side; py++)
				for (int px = 0; px < side; px++) {
					long double s = CB[o];
					for (int c = 0; c < 2; c++)
						for (int i = 0; i < 2; i++)
							for (int j = 0; j < 2;
							     j++) {
								int r = py * 2 +
								        i - p,
								    q = px * 2 +
								        j - p;
								if (r < 0 ||
								    r > 3 ||
								    q < 0 ||
								    q > 3)
									continue;
								s +=
								    CW[((o * 2 +
								         c) *
								            2 +
								        i) *
								           2 +
								       j] *
								    x[(c * 4 +
								       r) *
								          4 +
								      q];
							}
					want += s / (side * side);
				}
			assert_true(fabsl(y[o] - want) < 1e-5L);
		}
		interp_free(&in, m->g);
		onnx_model_free(m);
		arena_free();
	}
}

/* x [1, 2, 5, 5] -> MaxPool (3 x 3, stride 2, pads 1) -> y [1, 2, 3, 3]
 * (ResNet's stem pooling; the edge windows partly outside), interpreted
 * against the windows' maxima by hand; an attribute `what` set to 1
 * (storage_order: refused). */
static const int64_t PXD[] = {1, 2, 5, 5}, PYD[] = {1, 2, 3, 3},
                     THREE2[] = {3, 3};

static void
maxpool_model(Model *md, const char *what)
{
	good_model(md);
	static const char *const mp_in[] = {"x", NULL};
	static const char *const mp_out[] = {"y", NULL};
	Onnx__NodeProto *mp = node("MaxPool", "pool", mp_in, mp_out);
	if (what)
		int_attr(mp, what, 1);
	ints_attr(mp, "kernel_shape", THREE2, 2);
	ints_attr(mp, "strides", TWO2, 2);
	ints_attr(mp, "pads", PADS1, 4);
	md->node[0] = mp;
	md->g.n_node = 1;
	md->g.n_initializer = 0;
	md->in[0] = vinfo("x", 4, PXD, NULL);
	md->out[0] = vinfo("y", 4, PYD, NULL);
}

static void
test_maxpool(void **state)
{
	(void)state;
	Model md;
	maxpool_model(&md, NULL);
	OnnxModel *m;
	const char *msg = import(&md, &m);
	assert_string_equal(msg, "");
	Interp in;
	interp_init(&in, m->g);
	long double *x = xcalloc(50, sizeof *x);
	for (int i = 0; i < 50; i++)
		x[i] = (long double)((i * 17) % 23 - 15) / 4; /* mostly < 0 */
	in.val[m->inputs[0].id] = x;
	interp_set_weights(&in, m);
	interp_run(m->g, &in);
	const long double *y = in.val[m->outputs[0].id];
	for (int c = 0; c < 2; c++)
		for (int oy = 0; oy < 3; oy++)
			for (int ox = 0; ox < 3; ox++) {
				long double want = -INFINITY;
				for (int r = oy * 2 - 1; r <= oy * 2 + 1; r++)
					for (int q = ox * 2 - 1;
					     q <= ox * 2 + 1; q++)
						if (r >= 0 && r < 5 && q >= 0 &&
						    q < 5 &&
						    x[(c * 5 + r) * 5 + q] >
						        want)
							want =
							    x[(c * 5 + r) * 5 +
							      q];
				assert_true(y[(c * 3 + oy) * 3 + ox] == want);
			}
	interp_free(&in, m->g);
	onnx_model_free(m);
	arena_free();
	maxpool_model(&md, "storage_order");
	expect_error(&md, "node 'pool' (MaxPool)", "attribute storage_order 1");
	maxpool_model(&md, NULL);
	static const char *const with_idx[] = {"y", "idx", NULL};
	md.node[0]->output = (char **)with_idx;
	md.node[0]->n_output = 2;
	expect_error(&md, "node 'pool' (MaxPool)", "the Indices output");
}

/* One 2-D window op (Conv, MaxPool, AveragePool; pre: a Pad of zeros
 * around the image first), checked through tests/interp.c against loops
 * over the windows here that follow ONNX's definitions. */
typedef struct {
	const char *op;
	int64_t x[4], k[2], s[2], dl[2], pads[4], pre[4];
	int64_t O, group, ceil, inc; /* Conv's O, group; pooling's modes */
} Win2;

/* The output size along axis a (ONNX's, PyTorch's ceil_mode rule). */
static int64_t
win2_out(const Win2 *c, int a, int64_t L)
{
	int64_t span = L + c->pads[a] + c->pads[a + 2] -
	               c->dl[a] * (c->k[a] - 1) - 1,
	        o = (c->ceil ? span + c->s[a] - 1 : span) / c->s[a] + 1;
	return c->ceil && (o - 1) * c->s[a] >= L + c->pads[a] ? o - 1 : o;
}

static Onnx__NodeProto *
win2_node(const Win2 *c, const char *in)
{
	const char **ins = alloc(4 * sizeof *ins),
	           **outs = alloc(2 * sizeof *outs);
	ins[0] = in;
	ins[1] = c->O ? "CW" : NULL;
	ins[2] = c->O ? "CB" : NULL;
	outs[0] = "y";
	Onnx__NodeProto *n = node(c->op, "win", ins, outs);
	if (c->group != 1)
		int_attr(n, "group", c->group);
	if (c->ceil)
		int_attr(n, "ceil_mode", 1);
	if (c->inc)
		int_attr(n, "count_include_pad", 1);
	ints_attr(n, "kernel_shape", c->k, 2);
	ints_attr(n, "strides", c->s, 2);
	ints_attr(n, "dilations", c->dl, 2);
	ints_attr(n, "pads", c->pads, 4);
	return n;
}

/* md for case c; w, b its Conv weight and bias; yd its output dims. */
static void
win2_model(Model *md, const Win2 *c, float *w, float *b, int64_t *yd)
{
	good_model(md);
	int64_t L[2] = {c->x[2] + c->pre[0] + c->pre[2],
	                c->x[3] + c->pre[1] + c->pre[3]};
	yd[0] = c->x[0];
	yd[1] = c->O ? c->O : c->x[1];
	yd[2] = win2_out(c, 0, L[0]);
	yd[3] = win2_out(c, 1, L[1]);
	int k = 0;
	if (c->pre[0] || c->pre[1] || c->pre[2] || c->pre[3]) {
		static const char *const pd_in[] = {"x", "pp", NULL};
		static const char *const pd_out[] = {"xp", NULL};
		md->node[k++] = node("Pad", "pad", pd_in, pd_out);
		int64_t *pp = alloc(8 * sizeof *pp);
		pp[2] = c->pre[0], pp[3] = c->pre[1];
		pp[6] = c->pre[2], pp[7] = c->pre[3];
		md->init[md->g.n_initializer = 0] = ints("pp", pp, 8);
		md->g.n_initializer = 1;
	} else {
		md->g.n_initializer = 0;
	}
	md->node[k] = win2_node(c, k ? "xp" : "x");
	md->g.n_node = (size_t)k + 1;
	if (c->O) {
		int64_t *wd = alloc(4 * sizeof *wd), *bd = alloc(sizeof *bd);
		wd[0] = c->O, wd[1] = c->x[1] / c->group;
		wd[2] = c->k[0], wd[3] = c->k[1];
		*bd = c->O;
		size_t nw = (size_t)(wd[0] * wd[1] * wd[2] * wd[3]);
		for (size_t i = 0; i < nw; i++)
			w[i] = (float)((int)(i * 7 % 11) - 5) / 4;
		for (int64_t o = 0; o < c->O; o++)
			b[o] = (float)(o % 3) / 2 - 0.5f;
		md->init[md->g.n_initializer++] = floats("CW", 4, wd, w, nw);
		md->init[md->g.n_initializer++] =
		    floats("CB", 1, bd, b, (size_t)c->O);
	}
	md->in[0] = vinfo("x", 4, c->x, NULL);
	md->out[0] = vinfo("y", 4, yd, NULL);
}

/* The reference: x zero-padded by pre, then the op by its definition. */
static long double
win2_ref(const Win2 *c, const long double *x, const float *w, const float *b,
         int64_t n, int64_t o, int64_t i, int64_t j)
{
	int64_t H = c->x[2], W = c->x[3], C = c->x[1],
	        Hp = H + c->pre[0] + c->pre[2], Wp = W + c->pre[1] + c->pre[3];
	int64_t cg = C / c->group, og = c->O / c->group;
	long double acc = c->O                        ? b[o]
	                  : !strcmp(c->op, "MaxPool") ? -INFINITY
	                                              : 0;
	int64_t cnt = 0, c0 = c->O ? o / og * cg : o,
	        c1 = c->O ? c0 + cg : o + 1;
	for (int64_t ch = c0; ch < c1; ch++)
		for (int64_t a = 0; a < c->k[0]; a++)
			for (int64_t e = 0; e < c->k[1]; e++) {
				int64_t r = i * c->s[0] + a * c->dl[0] -
				            c->pads[0],
				        q = j * c->s[1] + e * c->dl[1] -
				            c->pads[1];
				int in = r >= 0 && r < Hp && q >= 0 && q < Wp;
				cnt += c->inc ? r < Hp + c->pads[2] &&
				                    q < Wp + c->pads[3]
				              : in;
				if (!in)
					continue;
				r -= c->pre[0], q -= c->pre[1];
				long double v =
				    r >= 0 && r < H && q >= 0 && q < W
				        ? x[((n * C + ch) * H + r) * W + q]
				        : 0;
				if (c->O)
					acc += w[((o * cg + ch - c0) * c->k[0] +
					          a) *
					             c->k[1] +
					         e] *
					       v;
				else if (!strcmp(c->op, "MaxPool"))
					acc = v > acc ? v : acc;
				else
					acc += v;
			}
	return !strcmp(c->op, "AveragePool") ? acc / cnt : acc;
}

/* auto_pad = mode in place of n's pads. */
static void
set_autopad(Onnx__NodeProto *n, const char *mode)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (!strcmp(n->attribute[i]->name, "pads"))
			n->attribute[i] = n->attribute[--n->n_attribute];
	str_attr(n, "auto_pad", mode);
}

/* Case c (auto_pad: that attribute in place of its pads, which are what
 * it must come to) imported and interpreted against win2_ref. */
static void
win2_check(const Win2 *c, const char *autopad, size_t ci)
{
	Model md;
	float w[256], b[8];
	int64_t yd[4];
	win2_model(&md, c, w, b, yd);
	if (autopad)
		set_autopad(md.node[0], autopad);
	OnnxModel *m;
	const char *msg = import(&md, &m);
	if (msg[0])
		fail_msg("case %zu: %s", ci, msg);
	Interp in;
	interp_init(&in, m->g);
	int64_t nx = c->x[0] * c->x[1] * c->x[2] * c->x[3];
	long double *x = xcalloc((size_t)nx, sizeof *x);
	for (int64_t i = 0; i < nx; i++)
		x[i] = (long double)((i * 17) % 23 - 11) / 4;
	in.val[m->inputs[0].id] = x;
	interp_set_weights(&in, m);
	interp_run(m->g, &in);
	const long double *y = in.val[m->outputs[0].id];
	for (int64_t n = 0; n < yd[0]; n++)
		for (int64_t o = 0; o < yd[1]; o++)
			for (int64_t i = 0; i < yd[2]; i++)
				for (int64_t j = 0; j < yd[3]; j++) {
					long double
					    want = win2_ref(c, x, w, b, n, o, i,
					                    j),
					    got = y[((n * yd[1] + o) * yd[2] +
					             i) *
					                yd[3] +
					            j];
					if (fabsl(got - want) > 1e-6L)
						fail_msg(
						    "case %zu: y[%lld, "
						    "%lld, %lld, %lld] "
						    "%Lg, want %Lg",
						    ci, (long long)n,
						    (long long)o, (long long)i,
						    (long long)j, got, want);
				}
	interp_free(&in, m->g);
	onnx_model_free(m);
	arena_free();
}

static void
test_windows(void **state)
{
	(void)state;
	/* op, x, kernel, strides, dilations, pads, Pad's, O, group, ceil_mode,
	 * count_include_pad */
	/* clang-format off */
	static const Win2 cases[] = {
	    /* dilated convolutions */
	    {"Conv", {1, 2, 7, 7}, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}, {0}, 3, 1, 0, 0},
	    {"Conv", {1, 3, 6, 5}, {2, 3}, {2, 1}, {2, 1}, {1, 0, 0, 1}, {0}, 2, 1, 0, 0},
	    /* groups: 2 of 2 channels, depthwise, and the patch product */
	    {"Conv", {1, 4, 5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {0}, 6, 2, 0, 0},
	    {"Conv", {2, 3, 4, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, {0}, 3, 3, 0, 0},
	    {"Conv", {1, 4, 4, 4}, {2, 2}, {2, 2}, {1, 1}, {0}, {0}, 2, 2, 0, 0},
	    /* a Pad of zeros before a Conv */
	    {"Conv", {1, 2, 4, 4}, {3, 3}, {1, 1}, {1, 1}, {0}, {1, 0, 1, 2}, 2, 1, 0, 0},
	    /* MaxPool: ceil_mode (its last window dropped when it would start
	     * in the padding), dilations */
	    {"MaxPool", {1, 2, 6, 6}, {3, 3}, {2, 2}, {1, 1}, {0}, {0}, 0, 1, 1, 0},
	    {"MaxPool", {1, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {0}, 0, 1, 1, 0},
	    {"MaxPool", {1, 2, 7, 7}, {2, 2}, {1, 1}, {2, 2}, {1, 1, 1, 1}, {0}, 0, 1, 0, 0},
	    /* AveragePool: padded (count_include_pad both ways), ceil_mode,
	     * overlapping, after a Pad of zeros (PyTorch's count_include_pad) */
	    {"AveragePool", {1, 2, 5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {0}, 0, 1, 0, 0},
	    {"AveragePool", {1, 2, 5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {0}, 0, 1, 0, 1},
	    {"AveragePool", {1, 1, 6, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {0}, 0, 1, 1, 1},
	    {"AveragePool", {1, 1, 6, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {0}, 0, 1, 1, 0},
	    {"AveragePool", {2, 3, 4, 4}, {3, 3}, {1, 1}, {1, 1}, {0}, {0}, 0, 1, 0, 0},
	    {"AveragePool", {1, 2, 4, 4}, {3, 3}, {1, 1}, {1, 1}, {0}, {1, 1, 1, 1}, 0, 1, 0, 0},
	};
	/* clang-format on */
	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
		win2_check(&cases[ci], NULL, ci);
	/* auto_pad: the pads it must come to (Conv SAME_UPPER as PyTorch's
	 * padding='same' pads, found with F.conv2d on a one-hot image; the
	 * odd one first for SAME_LOWER; strided pools: ONNX's ceil(L / s)
	 * windows by hand) */
	/* clang-format off */
	static const Win2 same[] = {
	    {"Conv", {1, 2, 5, 5}, {4, 2}, {1, 1}, {1, 1}, {1, 0, 2, 1}, {0}, 2, 1, 0, 0},
	    {"Conv", {1, 2, 5, 5}, {2, 2}, {1, 1}, {3, 3}, {1, 1, 2, 2}, {0}, 2, 1, 0, 0},
	    {"Conv", {1, 2, 5, 5}, {4, 2}, {1, 1}, {1, 1}, {2, 1, 1, 0}, {0}, 2, 1, 0, 0},
	    {"MaxPool", {1, 2, 6, 5}, {3, 3}, {2, 2}, {1, 1}, {0, 1, 1, 1}, {0}, 0, 1, 0, 0},
	    {"AveragePool", {1, 2, 5, 6}, {2, 2}, {2, 2}, {1, 1}, {1, 0, 0, 0}, {0}, 0, 1, 0, 0},
	};
	/* clang-format on */
	static const char *const mode[] = {"SAME_UPPER", "SAME_UPPER",
	                                   "SAME_LOWER", "SAME_UPPER",
	                                   "SAME_LOWER"};
	for (size_t ci = 0; ci < sizeof same / sizeof same[0]; ci++)
		win2_check(&same[ci], mode[ci], ci);
	/* refused, naming the attribute or input */
	/* clang-format off */
	static const Win2 bad_group = {"Conv", {1, 2, 4, 4}, {3, 3}, {1, 1}, {1, 1}, {0}, {0}, 4, 4, 0, 0},
	    empty_window = {"MaxPool", {1, 1, 4, 4}, {2, 2}, {1, 1}, {1, 1}, {2, 2, 2, 2}, {0}, 0, 1, 0, 0},
	    max_after_pad = {"MaxPool", {1, 1, 4, 4}, {2, 2}, {1, 1}, {1, 1}, {0}, {1, 1, 1, 1}, 0, 1, 0, 0},
	    big_kernel = {"AveragePool", {1, 1, 12, 12}, {9, 9}, {1, 1}, {1, 1}, {1, 1, 1, 1}, {0}, 0, 1, 0, 0};
	/* clang-format on */
	float w[256], b[8];
	int64_t yd[4];
	Model md;
	win2_model(&md, &bad_group, w, b, yd);
	expect_error(&md, "node 'win' (Conv)", "attribute group 4");
	win2_model(&md, &empty_window, w, b, yd);
	expect_error(&md, "node 'win' (MaxPool)", "attribute pads: window 0");
	win2_model(&md, &max_after_pad, w, b, yd);
	expect_error(&md, "node 'pad' (Pad)", "attribute mode, inputs pads");
	win2_model(&md, &big_kernel, w, b, yd);
	expect_error(&md, "node 'win' (AveragePool)", "attribute kernel_shape");
	Win2 far = cases[6];
	far.s[0] = (int64_t)1 << 21;
	win2_model(&md, &far, w, b, yd);
	expect_error(&md, "node 'win' (MaxPool)", "values in 1 .. 2^20");
	win2_model(&md, &cases[6], w, b, yd);
	str_attr(md.node[0], "auto_pad", "SAME_UPPER");
	expect_error(&md, "node 'win' (MaxPool)",
	             "attribute auto_pad SAME_UPPER with pads or ceil_mode");
	win2_model(&md, &same[3], w, b, yd);
	set_autopad(md.node[0], "SAME");
	expect_error(&md, "node 'win' (MaxPool)",
	             "attribute auto_pad: NOTSET, VALID, SAME_UPPER or "
	             "SAME_LOWER expected, not 'SAME'");
}

/* ids [2, 3] (int64) -> Gather from a table [V, 2] -> Relu -> y [2, 3, 2]:
 * the IR's gather (a table of 5 rows) or, for a table too large for its
 * blocks (PLAN_GATHER_TABLE_MAX), one gather a block of rows, and the
 * relu (through tests/interp.c, which aborts on an id outside a gather's
 * table) against the table's rows picked by hand; an integer input read
 * by another op is refused. */
static const int64_t IDD[] = {2, 3}, LYD[] = {2, 3, 2};
static const float TAB[] = {0.5f, -1, 2, 3, -4, 0.25f, 1.5f, -2, 7, 0};
/* rows of 3 blocks: 8 f32 columns, 2 rows of zeros each (split_lookup) */
enum { BLOCK = PLAN_GATHER_TABLE_MAX / 32 - 2, BIG = 3 * BLOCK - 1 };

static void
lookup_model(Model *md, int64_t rows, const float *tab)
{
	good_model(md);
	static const char *const ga_in[] = {"T", "x", NULL};
	static const char *const ga_out[] = {"e", NULL};
	static const char *const re_in[] = {"e", NULL};
	static const char *const re_out[] = {"y", NULL};
	md->node[0] = node("Gather", "lookup", ga_in, ga_out);
	md->node[1] = node("Relu", "relu", re_in, re_out);
	md->g.n_node = 2;
	int64_t *td = alloc(2 * sizeof *td);
	td[0] = rows;
	td[1] = 2;
	md->init[0] = floats("T", 2, td, tab, (size_t)rows * 2);
	md->g.n_initializer = 1;
	md->in[0] = vinfo("x", 2, IDD, NULL);
	md->in[0]->type->tensor_type->elem_type =
	    ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	md->out[0] = vinfo("y", 3, LYD, NULL);
}

/* The model of a table of `rows` imported and interpreted on ids; its
 * number of gather ops. */
static int
lookup_check(int64_t rows, const float *tab, const int ids[6])
{
	Model md;
	lookup_model(&md, rows, tab);
	OnnxModel *m;
	const char *msg = import(&md, &m);
	assert_string_equal(msg, "");
	assert_true(m->inputs[0].is_int);
	assert_int_equal(m->inputs[0].index_range, rows);
	int gathers = 0;
	for (int i = 0; i < m->g->nops; i++)
		gathers += m->g->ops[i].kind == OP_GATHER;
	Interp in;
	interp_init(&in, m->g);
	in.val[m->inputs[0].id] = xcalloc(6, sizeof(long double));
	for (int i = 0; i < 6; i++)
		in.val[m->inputs[0].id][i] = ids[i];
	interp_set_weights(&in, m);
	interp_run(m->g, &in);
	const long double *y = in.val[m->outputs[0].id];
	for (int i = 0; i < 6; i++)
		for (int c = 0; c < 2; c++) {
			float t = tab[ids[i] * 2 + c];
			assert_true(y[i * 2 + c] == (t > 0 ? t : 0));
		}
	interp_free(&in, m->g);
	onnx_model_free(m);
	arena_free();
	return gathers;
}

static void
test_lookup(void **state)
{
	(void)state;
	static const int ids[6] = {4, 0, 2, 2, 3, 1};
	assert_int_equal(lookup_check(5, TAB, ids), 1);
	float *big = xmalloc(BIG * 2 * sizeof *big);
	for (int i = 0; i < BIG * 2; i++)
		big[i] =
		    (float)(i % 37) + 0.5f; /* positive: a row of zeros shows */
	/* each block's first and last rows (R = BIG / 3 rows a block) */
	enum { R = BIG / 3 + 1 };
	static const int far[6] = {BIG - 1, 0, R - 1, R, 2 * R - 1, 2 * R};
	assert_int_equal(lookup_check(BIG, big, far), 3);
	free(big);
	Model md;
	/* the ids read as a float operand */
	lookup_model(&md, 5, TAB);
	static const char *const bad_in[] = {"x", "x", NULL};
	static const char *const bad_out[] = {"e", NULL};
	md.node[0] = node("Add", "add_ids", bad_in, bad_out);
	expect_error(&md, "node 'add_ids' (Add)", "integer input 'x'");
	/* float indices */
	lookup_model(&md, 5, TAB);
	md.in[0]->type->tensor_type->elem_type =
	    ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	expect_error(&md, "node 'lookup' (Gather)", "integer model input");
}

/* x [2, 3, 4] + cast(unsqueeze(m, 1)): an int64 mask [2, 4] as a bias
 * [2, 1, 4] repeated over x's rows (interpreted against sums by hand);
 * the mask unsqueezed at axis 2 against x [2, 4, 3] (a broadcast along
 * the last axis) is refused, and so is Gather by the reshaped ints. */
static const int64_t MXD[] = {2, 3, 4}, MXD2[] = {2, 4, 3}, MD[] = {2, 4},
                     ONE[] = {1}, TWO[] = {2};

static void
mask_model(Model *md, const int64_t *xd, const int64_t *axis)
{
	good_model(md);
	static const char *const un_in[] = {"m", "axis", NULL};
	static const char *const un_out[] = {"mu", NULL};
	static const char *const ca_in[] = {"mu", NULL};
	static const char *const ca_out[] = {"mf", NULL};
	static const char *const ad_in[] = {"x", "mf", NULL};
	static const char *const ad_out[] = {"y", NULL};
	md->node[0] = node("Unsqueeze", "unsq", un_in, un_out);
	md->node[1] = node("Cast", "cast", ca_in, ca_out);
	int_attr(md->node[1], "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
	md->node[2] = node("Add", "add", ad_in, ad_out);
	md->g.n_node = 3;
	md->init[0] = ints("axis", axis, 1);
	md->g.n_initializer = 1;
	md->in[0] = vinfo("x", 3, xd, NULL);
	md->in[1] = vinfo("m", 2, MD, NULL);
	md->in[1]->type->tensor_type->elem_type =
	    ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	md->g.n_input = 2;
	md->out[0] = vinfo("y", 3, xd, NULL);
}

static void
test_mask(void **state)
{
	(void)state;
	Model md;
	mask_model(&md, MXD, ONE);
	OnnxModel *m;
	assert_string_equal(import(&md, &m), "");
	assert_true(m->inputs[1].is_int);
	assert_int_equal(m->inputs[1].index_range, 0);
	Interp in;
	interp_init(&in, m->g);
	long double *x = in.val[m->inputs[0].id] =
	                xcalloc(24, sizeof(long double)),
	            *mk = in.val[m->inputs[1].id] =
	                xcalloc(8, sizeof(long double));
	for (int i = 0; i < 24; i++)
		x[i] = i * 0.5L;
	for (int i = 0; i < 8; i++)
		mk[i] = i % 3;
	interp_set_weights(&in, m);
	interp_run(m->g, &in);
	const long double *y = in.val[m->outputs[0].id];
	for (int b = 0; b < 2; b++)
		for (int r = 0; r < 3; r++)
			for (int c = 0; c < 4; c++) {
				int i = (b * 3 + r) * 4 + c;
				assert_true(y[i] == x[i] + mk[b * 4 + c]);
			}
	interp_free(&in, m->g);
	onnx_model_free(m);
	arena_free();
	mask_model(&md, MXD2, TWO);
	expect_error(&md, "node 'add' (Add)", "broadcasting a computed");
	/* the reshaped ints as Gather indices */
	mask_model(&md, MXD, ONE);
	static const char *const ga_in[] = {"T", "mu", NULL};
	static const char *const ga_out[] = {"y", NULL};
	md.node[1] = node("Gather", "lookup", ga_in, ga_out);
	md.g.n_node = 2;
	static const int64_t td[] = {3, 2}, yd[] = {2, 1, 4, 2};
	md.init[1] = floats("T", 2, td, TAB, 6);
	md.g.n_initializer = 2;
	md.g.n_input = 1;
	md.in[0] = md.in[1];
	md.out[0] = vinfo("y", 4, yd, NULL);
	expect_error(&md, "node 'lookup' (Gather)", "reshaped model input");
}

/* good_model's bias with float32's lowest value (PyTorch's mask constant
 * finfo.min), 1e5 and -inf: as an f16 weight the finite ones are clamped
 * to +-65504 (as f16 they would be infinite, and 0 x inf NaN), with a
 * note; -inf stays; in f32 they are as given. */
static void
test_clamp(void **state)
{
	(void)state;
	static const float big[] = {-FLT_MAX, 1e5f, -INFINITY};
	for (int f16 = 0; f16 < 2; f16++) {
		Model md;
		good_model(&md);
		md.init[1] = floats("b", 1, BD, big, 3);
		OnnxModel *m;
		assert_string_equal(
		    import_as(&md, f16 ? ONNX_F16 : ONNX_F32, &m), "");
		const float *b = NULL;
		for (int w = 0; w < m->nweights; w++)
			if (!strcmp(graph_tensor(m->g, m->weight_id[w])->name,
			            "b"))
				b = m->weight_value[w];
		assert_non_null(b);
		assert_true(b[0] == (f16 ? -65504.0f : -FLT_MAX));
		assert_true(b[1] == (f16 ? 65504.0f : 1e5f));
		assert_true(b[2] == -INFINITY);
		if (f16)
			assert_non_null(strstr(m->notes, "2 constants beyond "
			                                 "f16's range clamped "
			                                 "to +-65504 (the "
			                                 "first in b)"));
		else
			assert_string_equal(m->notes, "");
		onnx_model_free(m);
		arena_free();
	}
}

/* What the fuzz target found: nodes without an op, a Reshape without its
 * shape input. */
static void
test_fuzz_finds(void **state)
{
	(void)state;
	Model md;
	good_model(&md);
	md.node[5]->op_type = "";
	expect_error(&md, "node 5 has no op_type", NULL);
	good_model(&md);
	md.node[6]->n_input = 1;
	expect_error(&md, "node 'reshape' (Reshape)",
	             "the shape must be known");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good_model),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_missing_initializer),
	    cmocka_unit_test(test_unknown_op),
	    cmocka_unit_test(test_opset),
	    cmocka_unit_test(test_dynamic_shape),
	    cmocka_unit_test(test_output_shape),
	    cmocka_unit_test(test_no_ir_operator),
	    cmocka_unit_test(test_bad_tensor_data),
	    cmocka_unit_test(test_bad_reshape),
	    cmocka_unit_test(test_fuzz_finds),
	    cmocka_unit_test(test_conv_mean),
	    cmocka_unit_test(test_maxpool),
	    cmocka_unit_test(test_lookup),
	    cmocka_unit_test(test_mask),
	    cmocka_unit_test(test_clamp),
	    cmocka_unit_test(test_windows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * fold.c - host tensors and the ops the ONNX importer computes at import
 * time: constants, and every node whose inputs are all known (the shape
 * arithmetic PyTorch's exporter emits around fixed shapes, and weights
 * transformed by constant ops). Semantics are ONNX's at opsets 13-17.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "onnxpriv.h"

#define T(x) ONNX__TENSOR_PROTO__DATA_TYPE__##x

void
host_tensor_free(Host *h)
{
	free(h->v);
	memset(h, 0, sizeof *h);
}

int
host_is_int(int type)
{
	return type != T(FLOAT) && type != T(FLOAT16) && type != T(DOUBLE) &&
	       type != T(BFLOAT16);
}

int
host_alloc(Host *h, int type, int rank, const int64_t *dim, Diag *d)
{
	memset(h, 0, sizeof *h);
	if (rank < 0 || rank > HOST_MAX_RANK)
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "rank %d: at most %d axes are supported", rank,
		                HOST_MAX_RANK);
	int64_t n = 1;
	for (int i = 0; i < rank; i++) {
		if (dim[i] < 0 || (dim[i] && n > HOST_MAX_ELEMS / dim[i]))
			return diag_set(d, IPU_ERANGE, NULL, 0, 0,
			                "a tensor of more than 2^28 elements "
			                "(or a negative dimension)");
		n *= dim[i];
		h->dim[i] = dim[i];
	}
	h->rank = rank;
	h->n = n;
	h->type = type;
	h->v = xcalloc((size_t)(n ? n : 1), sizeof *h->v);
	return IPU_OK;
}

/* ---- attributes ----------------------------------------------------- */

const Onnx__AttributeProto *
attr_find(const Onnx__NodeProto *n, const char *name)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name &&
		    !strcmp(n->attribute[i]->name, name))
			return n->attribute[i];
	return NULL;
}

int
node_error(Diag *d, const Onnx__NodeProto *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return diag_set(d, IPU_EINVAL, NULL, 0, 0, "node '%.100s' (%.40s): %s",
	                n->name && n->name[0] ? n->name : "(unnamed)",
	                n->op_type ? n->op_type : "?", msg);
}

int
attr_int(const Onnx__NodeProto *n, const char *name, int64_t def, int64_t *out,
         Diag *d)
{
	const Onnx__AttributeProto *a = attr_find(n, name);
	*out = def;
	if (!a)
		return IPU_OK;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
		return node_error(d, n, "attribute %s must be an int", name);
	*out = a->i;
	return IPU_OK;
}

int
attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *out, int max,
          int *count, Diag *d)
{
	const Onnx__AttributeProto *a = attr_find(n, name);
	*count = -1;
	if (!a)
		return IPU_OK;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
		return node_error(d, n, "attribute %s must be a list of ints",
		                  name);
	if (a->n_ints > (size_t)max)
		return node_error(d, n,
		                  "attribute %s has %zu values (at most "
		                  "%d)",
		                  name, a->n_ints, max);
	for (size_t i = 0; i < a->n_ints; i++)
		out[i] = a->ints[i];
	*count = (int)a->n_ints;
	return IPU_OK;
}

int
attr_float(const Onnx__NodeProto *n, const char *name, double def, double *out,
           Diag *d)
{
	const Onnx__AttributeProto *a = attr_find(n, name);
	*out = def;
	if (!a)
		return IPU_OK;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT ||
	    !isfinite(a->f))
		return node_error(d, n, "attribute %s must be a finite float",
		                  name);
	*out = a->f;
	return IPU_OK;
}

int
axis_norm(const Onnx__NodeProto *n, int64_t axis, int rank, int *out, Diag *d)
{
	*out = 0;
	if (axis < -rank || axis >= (rank ? rank : 1))
		return node_error(d, n, "axis %lld is outside a rank-%d tensor",
		                  (long long)axis, rank);
	*out = (int)(axis < 0 ? axis + rank : axis);
	return IPU_OK;
}

/* ---- TensorProto ---------------------------------------------------- */

/* Bytes per element of raw_data for the types we read; 0: not read. */
static int
raw_size(int type)
{
	switch (type) {
	case T(FLOAT):
	case T(INT32):
	case T(UINT32):
		return 4;
	case T(INT64):
	case T(DOUBLE):
	case T(UINT64):
		return 8;
	case T(FLOAT16):
	case T(INT16):
	case T(UINT16):
		return 2;
	case T(INT8):
	case T(UINT8):
	case T(BOOL):
		return 1;
	default:
		return 0;
	}
}

static double
half_to_double(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v = e == 0    ? ldexp(m, -24)
	           : e == 31 ? (m ? NAN : INFINITY)
	                     : ldexp(m + 1024, e - 25);
	return h & 0x8000 ? -v : v;
}

static double
raw_value(int type, const uint8_t *p)
{
	union {
		float f;
		double d;
		int32_t i32;
		uint32_t u32;
		int64_t i64;
		uint64_t u64;
		int16_t i16;
		uint16_t u16;
	} u;
	memcpy(&u, p, (size_t)raw_size(type));
	switch (type) {
	case T(FLOAT):
		return u.f;
	case T(DOUBLE):
		return u.d;
	case T(INT32):
		return u.i32;
	case T(UINT32):
		return u.u32;
	case T(INT64):
		return (double)u.i64;
	case T(UINT64):
		return (double)u.u64;
	case T(INT16):
		return u.i16;
	case T(UINT16):
		return u.u16;
	case T(FLOAT16):
		return half_to_double(u.u16);
	case T(INT8):
		return (int8_t)p[0];
	case T(BOOL):
		return p[0] != 0;
	default:
		return p[0];
	}
}

int
host_from_tensor(const Onnx__TensorProto *t, Host *h, const char *what, Diag *d)
{
	memset(h, 0, sizeof *h);
	int type = t->has_data_type ? t->data_type : 0;
	if (!raw_size(type))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s: element type %d is not supported (float, "
		                "float16, double and integer types are)",
		                what, type);
	if (t->has_data_location &&
	    t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s: its data is in an external file, which is "
		                "not supported (export with the weights inside "
		                "the model)",
		                what);
	if (t->segment)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s: segmented tensors are not supported",
		                what);
	if (t->n_dims > HOST_MAX_RANK)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s: rank %zu (at most %d)", what, t->n_dims,
		                HOST_MAX_RANK);
	Diag sub;
	if (host_alloc(h, type, (int)t->n_dims, t->dims, &sub))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0, "%s: %s", what,
		                sub.msg);
	size_t n = (size_t)h->n, have;
	const char *field;
	if (t->has_raw_data) {
		have = t->raw_data.len / (size_t)raw_size(type);
		field = "raw_data";
		if (t->raw_data.len % (size_t)raw_size(type))
			have = (size_t)-1;
		else
			for (size_t i = 0; i < n && have == n; i++)
				h->v[i] =
				    raw_value(type, t->raw_data.data +
				                        i * raw_size(type));
	} else if (type == T(FLOAT)) {
		have = t->n_float_data, field = "float_data";
		for (size_t i = 0; i < n && have == n; i++)
			h->v[i] = t->float_data[i];
	} else if (type == T(DOUBLE)) {
		have = t->n_double_data, field = "double_data";
		for (size_t i = 0; i < n && have == n; i++)
			h->v[i] = t->double_data[i];
	} else if (type == T(INT64)) {
		have = t->n_int64_data, field = "int64_data";
		for (size_t i = 0; i < n && have == n; i++)
			h->v[i] = (double)t->int64_data[i];
	} else if (type == T(UINT64) || type == T(UINT32)) {
		have = t->n_uint64_data, field = "uint64_data";
		for (size_t i = 0; i < n && have == n; i++)
			h->v[i] = (double)t->uint64_data[i];
	} else {
		/* int32_data holds every narrower type, float16 as bits */
		have = t->n_int32_data, field = "int32_data";
		for (size_t i = 0; i < n && have == n; i++)
			h->v[i] =
			    type == T(FLOAT16)
			        ? half_to_double((uint16_t)t->int32_data[i])
			        : (double)t->int32_data[i];
	}
	if (have != n) {
		host_tensor_free(h);
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s: %zu elements by its dims, but %s holds %s",
		                what, n, field,
		                have == (size_t)-1 ? "a partial element"
		                                   : "another number");
	}
	return IPU_OK;
}

/* ---- folding ---------------------------------------------------------- */

/* Round a value to its type, as a computation of that type would. */
static double
to_type(int type, double v)
{
	if (type == T(FLOAT))
		return (float)v;
	if (type == T(BOOL))
		return v != 0;
	if (host_is_int(type))
		return isfinite(v) ? trunc(v) : 0;
	return v;
}

static int
copy_host(const Host *a, Host *out, Diag *d)
{
	int e = host_alloc(out, a->type, a->rank, a->dim, d);
	if (!e)
		memcpy(out->v, a->v, (size_t)a->n * sizeof *a->v);
	return e;
}

/* The element offset into x (broadcast to out's shape) of out's element
 * with multi-index idx. */
static int64_t
bcast_offset(const Host *x, const Host *out, const int64_t *idx)
{
	int64_t off = 0;
	int shift = out->rank - x->rank;
	for (int i = 0; i < x->rank; i++)
		off = off * x->dim[i] + (x->dim[i] == 1 ? 0 : idx[i + shift]);
	return off;
}

static void
next_index(const Host *out, int64_t *idx)
{
	for (int i = out->rank - 1; i >= 0; i--) {
		if (++idx[i] < out->dim[i])
			return;
		idx[i] = 0;
	}
}

static int
bcast_shape(const Onnx__NodeProto *n, Host *const *in, int nin, int *rank,
            int64_t *dim, Diag *d)
{
	*rank = 0;
	for (int k = 0; k < nin; k++)
		if (in[k]->rank > *rank)
			*rank = in[k]->rank;
	for (int i = 0; i < *rank; i++) {
		dim[i] = 1;
		for (int k = 0; k < nin; k++) {
			int j = i - (*rank - in[k]->rank);
			int64_t x = j >= 0 ? in[k]->dim[j] : 1;
			if (x != 1 && dim[i] != 1 && x != dim[i])
				return node_error(d, n,
				                  "shapes do not broadcast "
				                  "(axis %d: %lld and %lld)",
				                  i, (long long)dim[i],
				                  (long long)x);
			if (x != 1)
				dim[i] = x;
		}
	}
	return IPU_OK;
}

typedef double (*Binary)(double, double, int isint);

static double
b_add(double a, double b, int i)
{
	(void)i;
	return a + b;
}
static double
b_sub(double a, double b, int i)
{
	(void)i;
	return a - b;
}
static double
b_mul(double a, double b, int i)
{
	(void)i;
	return a * b;
}
static double
b_div(double a, double b, int i)
{
	if (i)
		return b == 0 ? 0 : trunc(a / b);
	return a / b;
}
static double
b_pow(double a, double b, int i)
{
	(void)i;
	return pow(a, b);
}
static double
b_equal(double a, double b, int i)
{
	(void)i;
	return a == b;
}
static double
b_less(double a, double b, int i)
{
	(void)i;
	return a < b;
}
static double
b_greater(double a, double b, int i)
{
	(void)i;
	return a > b;
}

static int
fold_binary(const Onnx__NodeProto *n, Host *const *in, Host *out, Binary f,
            int result_type, Diag *d)
{
	if (in[0]->type != in[1]->type)
		return node_error(d, n, "inputs of element types %d and %d",
		                  in[0]->type, in[1]->type);
	int rank;
	int64_t dim[HOST_MAX_RANK], idx[HOST_MAX_RANK] = {0};
	int e = bcast_shape(n, in, 2, &rank, dim, d);
	if (!e)
		e = host_alloc(out, result_type ? result_type : in[0]->type,
		               rank, dim, d);
	for (int64_t i = 0; !e && i < out->n; i++, next_index(out, idx))
		out->v[i] = to_type(out->type,
		                    f(in[0]->v[bcast_offset(in[0], out, idx)],
		                      in[1]->v[bcast_offset(in[1], out, idx)],
		                      host_is_int(in[0]->type)));
	return e;
}

static int
fold_unary(const Host *a, Host *out, double (*f)(double), Diag *d)
{
	int e = host_alloc(out, a->type, a->rank, a->dim, d);
	for (int64_t i = 0; !e && i < a->n; i++)
		out->v[i] = to_type(a->type, f(a->v[i]));
	return e;
}

static double
u_recip(double x)
{
	return 1 / x;
}
static double
u_neg(double x)
{
	return -x;
}
static double
u_relu(double x)
{
	return x > 0 ? x : 0;
}
static double
u_not(double x)
{
	return x == 0;
}

/* A 1-D integer input as a list (at most HOST_MAX_RANK values unless max
 * says otherwise). */
static int
int_list(const Onnx__NodeProto *n, const Host *h, const char *what,
         int64_t *out, int max, int *count, Diag *d)
{
	if (!host_is_int(h->type) || h->rank > 1 || h->n > max)
		return node_error(d, n,
		                  "%s must be a list of at most %d "
		                  "integers",
		                  what, max);
	for (int64_t i = 0; i < h->n; i++)
		out[i] = (int64_t)h->v[i];
	*count = (int)h->n;
	return IPU_OK;
}

static int
fold_reshape_to(const Host *a, int rank, const int64_t *dim, Host *out, Diag *d)
{
	int e = host_alloc(out, a->type, rank, dim, d);
	if (!e)
		memcpy(out->v, a->v, (size_t)a->n * sizeof *a->v);
	return e;
}

int
fold_supports(const char *op)
{
	static const char *const ops[] = {"Identity",
	                                  "Cast",
	                                  "Gather",
	                                  "Unsqueeze",
	                                  "Squeeze",
	                                  "Concat",
	                                  "Reshape",
	                                  "Flatten",
	                                  "Slice",
	                                  "Add",
	                                  "Sub",
	                                  "Mul",
	                                  "Div",
	                                  "Pow",
	                                  "Sqrt",
	                                  "Reciprocal",
	                                  "Neg",
	                                  "Erf",
	                                  "Tanh",
	                                  "Equal",
	                                  "Less",
	                                  "Greater",
	                                  "Not",
	                                  "Where",
	                                  "ConstantOfShape",
	                                  "Expand",
	                                  "Transpose",
	                                  "Range",
	                                  "Shape",
	                                  "Constant",
	                                  "Exp",
	                                  "Abs",
	                                  "Relu"};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (!strcmp(op, ops[i]))
			return 1;
	return 0;
}

/* Shape: start and end attributes (opset 15) select axes. */
int
onnx_shape_of(const Onnx__NodeProto *n, int rank, const int64_t *dim, Host *out,
              Diag *d)
{
	int64_t start, end;
	int e = attr_int(n, "start", 0, &start, d);
	if (!e)
		e = attr_int(n, "end", rank, &end, d);
	if (e)
		return e;
	if (start < 0)
		start += rank;
	if (end < 0)
		end += rank;
	start = start < 0 ? 0 : start > rank ? rank : start;
	end = end < 0 ? 0 : end > rank ? rank : end;
	int64_t len = end > start ? end - start : 0;
	e = host_alloc(out, T(INT64), 1, &len, d);
	for (int64_t i = 0; !e && i < len; i++)
		out->v[i] = (double)dim[start + i];
	return e;
}

static int
fold_gather(const Onnx__NodeProto *n, const Host *x, const Host *ix, Host *out,
            Diag *d)
{
	int64_t a;
	int axis;
	int e = attr_int(n, "axis", 0, &a, d);
	if (!e)
		e = axis_norm(n, a, x->rank, &axis, d);
	if (!e && (x->rank == 0 || x->rank - 1 + ix->rank > HOST_MAX_RANK))
		e = node_error(d, n, "cannot gather from a rank-%d tensor",
		               x->rank);
	if (e)
		return e;
	int64_t dim[HOST_MAX_RANK];
	int r = 0;
	for (int i = 0; i < axis; i++)
		dim[r++] = x->dim[i];
	for (int i = 0; i < ix->rank; i++)
		dim[r++] = ix->dim[i];
	for (int i = axis + 1; i < x->rank; i++)
		dim[r++] = x->dim[i];
	int64_t outer = 1, inner = 1, len = x->dim[axis];
	for (int i = 0; i < axis; i++)
		outer *= x->dim[i];
	for (int i = axis + 1; i < x->rank; i++)
		inner *= x->dim[i];
	e = host_alloc(out, x->type, r, dim, d);
	for (int64_t o = 0; !e && o < outer; o++)
		for (int64_t k = 0; !e && k < ix->n; k++) {
			int64_t j = (int64_t)ix->v[k];
			if (j < 0)
				j += len;
			if (j < 0 || j >= len) {
				host_tensor_free(out);
				return node_error(
				    d, n, "index %lld outside 0..%lld",
				    (long long)ix->v[k], (long long)len - 1);
			}
			memcpy(out->v + (o * ix->n + k) * inner,
			       x->v + (o * len + j) * inner,
			       (size_t)inner * sizeof *out->v);
		}
	return e;
}

static int
fold_concat(const Onnx__NodeProto *n, Host *const *in, int nin, Host *out,
            Diag *d)
{
	int64_t a;
	int axis;
	int e = attr_int(n, "axis", 0, &a, d);
	if (!e && nin < 1)
		e = node_error(d, n, "no inputs");
	if (!e)
		e = axis_norm(n, a, in[0]->rank, &axis, d);
	if (e)
		return e;
	int64_t dim[HOST_MAX_RANK];
	memcpy(dim, in[0]->dim, sizeof dim);
	dim[axis] = 0;
	for (int k = 0; k < nin; k++) {
		if (in[k]->rank != in[0]->rank || in[k]->type != in[0]->type)
			return node_error(d, n,
			                  "inputs differ in rank or "
			                  "type");
		for (int i = 0; i < in[0]->rank; i++)
			if (i != axis && in[k]->dim[i] != in[0]->dim[i])
				return node_error(d, n,
				                  "inputs differ on axis "
				                  "%d",
				                  i);
		dim[axis] += in[k]->dim[axis];
	}
	e = host_alloc(out, in[0]->type, in[0]->rank, dim, d);
	int64_t outer = 1, inner = 1;
	for (int i = 0; i < axis; i++)
		outer *= dim[i];
	for (int i = axis + 1; i < in[0]->rank; i++)
		inner *= dim[i];
	int64_t at = 0;
	for (int64_t o = 0; !e && o < outer; o++)
		for (int k = 0; k < nin; k++) {
			int64_t len = in[k]->dim[axis] * inner;
			memcpy(out->v + at, in[k]->v + o * len,
			       (size_t)len * sizeof *out->v);
			at += len;
		}
	return e;
}

static int
fold_transpose(const Onnx__NodeProto *n, const Host *x, Host *out, Diag *d)
{
	int64_t perm[HOST_MAX_RANK];
	int np;
	int e = attr_ints(n, "perm", perm, HOST_MAX_RANK, &np, d);
	if (e)
		return e;
	if (np < 0)
		for (np = 0; np < x->rank; np++)
			perm[np] = x->rank - 1 - np;
	int seen = 0;
	for (int i = 0; i < np; i++) {
		if (perm[i] < 0 || perm[i] >= x->rank || (seen >> perm[i] & 1))
			return node_error(d, n,
			                  "perm is not a permutation of "
			                  "the %d axes",
			                  x->rank);
		seen |= 1 << perm[i];
	}
	if (np != x->rank)
		return node_error(d, n, "perm has %d axes, the input %d", np,
		                  x->rank);
	int64_t dim[HOST_MAX_RANK], idx[HOST_MAX_RANK] = {0},
	                            stride[HOST_MAX_RANK];
	for (int i = x->rank - 1, s = 1; i >= 0; s *= (int)x->dim[i], i--)
		stride[i] = s;
	for (int i = 0; i < np; i++)
		dim[i] = x->dim[perm[i]];
	e = host_alloc(out, x->type, x->rank, dim, d);
	for (int64_t i = 0; !e && i < out->n; i++, next_index(out, idx)) {
		int64_t off = 0;
		for (int k = 0; k < np; k++)
			off += idx[k] * stride[perm[k]];
		out->v[i] = x->v[off];
	}
	return e;
}

/* Slice with steps: starts, ends, axes, steps as host inputs. */
static int
fold_slice(const Onnx__NodeProto *n, Host *const *in, int nin, Host *out,
           Diag *d)
{
	const Host *x = in[0];
	int64_t st[HOST_MAX_RANK], en[HOST_MAX_RANK], ax[HOST_MAX_RANK],
	    sp[HOST_MAX_RANK];
	int ns, ne, na = -1, np = -1;
	int e = int_list(n, in[1], "starts", st, HOST_MAX_RANK, &ns, d);
	if (!e)
		e = int_list(n, in[2], "ends", en, HOST_MAX_RANK, &ne, d);
	if (!e && nin > 3 && in[3])
		e = int_list(n, in[3], "axes", ax, HOST_MAX_RANK, &na, d);
	if (!e && nin > 4 && in[4])
		e = int_list(n, in[4], "steps", sp, HOST_MAX_RANK, &np, d);
	if (e)
		return e;
	if (ne != ns || (na >= 0 && na != ns) || (np >= 0 && np != ns))
		return node_error(d, n,
		                  "starts, ends, axes and steps differ "
		                  "in length");
	int64_t b[HOST_MAX_RANK], step[HOST_MAX_RANK], dim[HOST_MAX_RANK];
	for (int i = 0; i < x->rank; i++)
		b[i] = 0, step[i] = 1, dim[i] = x->dim[i];
	for (int k = 0; k < ns; k++) {
		int a;
		if ((e = axis_norm(n, na >= 0 ? ax[k] : k, x->rank, &a, d)))
			return e;
		int64_t s = np >= 0 ? sp[k] : 1, len = x->dim[a];
		if (s == 0)
			return node_error(d, n, "a step of 0");
		int64_t lo = st[k] < 0 ? st[k] + len : st[k],
		        hi = en[k] < 0 ? en[k] + len : en[k];
		if (s > 0) {
			lo = lo < 0 ? 0 : lo > len ? len : lo;
			hi = hi < 0 ? 0 : hi > len ? len : hi;
			dim[a] = hi > lo ? (hi - lo + s - 1) / s : 0;
		} else {
			lo = lo < 0 ? -1 : lo > len - 1 ? len - 1 : lo;
			hi = hi < -1 ? -1 : hi > len - 1 ? len - 1 : hi;
			dim[a] = lo > hi ? (lo - hi - s - 1) / -s : 0;
		}
		b[a] = lo, step[a] = s;
	}
	e = host_alloc(out, x->type, x->rank, dim, d);
	int64_t idx[HOST_MAX_RANK] = {0};
	for (int64_t i = 0; !e && i < out->n; i++, next_index(out, idx)) {
		int64_t off = 0;
		for (int k = 0; k < x->rank; k++)
			off = off * x->dim[k] + b[k] + idx[k] * step[k];
		out->v[i] = x->v[off];
	}
	return e;
}

int
onnx_reshape_dims(const Onnx__NodeProto *n, const int64_t *from, int rank,
                  const Host *shape, int64_t *dim, int *out_rank, Diag *d)
{
	int nd;
	int64_t allowzero;
	int e = int_list(n, shape, "the shape", dim, HOST_MAX_RANK, &nd, d);
	if (!e)
		e = attr_int(n, "allowzero", 0, &allowzero, d);
	if (e)
		return e;
	int64_t total = 1, known = 1;
	int infer = -1;
	for (int i = 0; i < rank; i++)
		total *= from[i];
	for (int i = 0; i < nd; i++) {
		if (dim[i] == 0 && !allowzero) {
			if (i >= rank)
				return node_error(d, n,
				                  "shape copies axis %d of "
				                  "a rank-%d tensor",
				                  i, rank);
			dim[i] = from[i];
		}
		if (dim[i] == -1) {
			if (infer >= 0)
				return node_error(d, n, "two -1 in the shape");
			infer = i;
		} else if (dim[i] < 0) {
			return node_error(d, n, "a negative dimension %lld",
			                  (long long)dim[i]);
		} else {
			known *= dim[i];
		}
	}
	if (infer >= 0) {
		if (!known || total % known)
			return node_error(d, n,
			                  "cannot infer the -1 dimension");
		dim[infer] = total / known;
		known = total;
	}
	if (known != total)
		return node_error(d, n,
		                  "%lld elements cannot be reshaped to "
		                  "%lld",
		                  (long long)total, (long long)known);
	*out_rank = nd;
	return IPU_OK;
}

int
onnx_squeeze_dims(const Onnx__NodeProto *n, int unsqueeze, const int64_t *from,
                  int rank, const Host *axes, int64_t *dim, int *out_rank,
                  Diag *d)
{
	int64_t ax[HOST_MAX_RANK];
	int na = -1, e = IPU_OK;
	if (axes)
		e = int_list(n, axes, "axes", ax, HOST_MAX_RANK, &na, d);
	if (e)
		return e;
	unsigned mark = 0;
	int r = unsqueeze ? rank + na : rank;
	if (unsqueeze && na < 0)
		return node_error(d, n, "no axes");
	if (r > HOST_MAX_RANK)
		return node_error(d, n, "rank %d is too large", r);
	for (int k = 0; k < na; k++) {
		int a = 0;
		if ((e = axis_norm(n, ax[k], r, &a, d)))
			return e;
		if (mark >> a & 1)
			return node_error(d, n, "axis %d twice", a);
		mark |= 1u << a;
	}
	int nd = 0;
	if (unsqueeze) {
		for (int i = 0, j = 0; i < r; i++)
			dim[nd++] = mark >> i & 1 ? 1 : from[j++];
	} else {
		for (int i = 0; i < rank; i++) {
			int drop = na < 0 ? from[i] == 1 : (int)(mark >> i & 1);
			if (drop && from[i] != 1)
				return node_error(d, n,
				                  "axis %d has size %lld, "
				                  "not 1",
				                  i, (long long)from[i]);
			if (!drop)
				dim[nd++] = from[i];
		}
	}
	*out_rank = nd;
	return IPU_OK;
}

static int
fold_expand(const Onnx__NodeProto *n, const Host *x, const Host *shape,
            Host *out, Diag *d)
{
	int64_t want[HOST_MAX_RANK];
	int nd;
	int e = int_list(n, shape, "the shape", want, HOST_MAX_RANK, &nd, d);
	if (e)
		return e;
	Host s = {.rank = nd, .type = x->type};
	for (int i = 0; i < nd; i++)
		s.dim[i] = want[i];
	Host *pair[2] = {(Host *)x, &s};
	int rank;
	int64_t dim[HOST_MAX_RANK], idx[HOST_MAX_RANK] = {0};
	if ((e = bcast_shape(n, pair, 2, &rank, dim, d)))
		return e;
	e = host_alloc(out, x->type, rank, dim, d);
	for (int64_t i = 0; !e && i < out->n; i++, next_index(out, idx))
		out->v[i] = x->v[bcast_offset(x, out, idx)];
	return e;
}

static int
fold_where(const Onnx__NodeProto *n, Host *const *in, Host *out, Diag *d)
{
	int rank;
	int64_t dim[HOST_MAX_RANK], idx[HOST_MAX_RANK] = {0};
	int e = bcast_shape(n, in, 3, &rank, dim, d);
	if (!e && in[1]->type != in[2]->type)
		e = node_error(d, n, "X and Y differ in element type");
	if (!e)
		e = host_alloc(out, in[1]->type, rank, dim, d);
	for (int64_t i = 0; !e && i < out->n; i++, next_index(out, idx))
		out->v[i] = in[0]->v[bcast_offset(in[0], out, idx)]
		                ? in[1]->v[bcast_offset(in[1], out, idx)]
		                : in[2]->v[bcast_offset(in[2], out, idx)];
	return e;
}

static int
fold_constant_of_shape(const Onnx__NodeProto *n, const Host *shape, Host *out,
                       Diag *d)
{
	int64_t dim[HOST_MAX_RANK];
	int nd;
	int e = int_list(n, shape, "the shape", dim, HOST_MAX_RANK, &nd, d);
	if (e)
		return e;
	Host fill = {0};
	const Onnx__AttributeProto *a = attr_find(n, "value");
	if (a) {
		if (!a->t)
			return node_error(d, n, "value must be a tensor");
		if ((e = host_from_tensor(a->t, &fill, "value", d)))
			return node_error(d, n, "%s", d->msg);
		if (fill.n != 1) {
			host_tensor_free(&fill);
			return node_error(d, n, "value must hold one element");
		}
	}
	e = host_alloc(out, a ? fill.type : T(FLOAT), nd, dim, d);
	for (int64_t i = 0; !e && i < out->n; i++)
		out->v[i] = a ? fill.v[0] : 0;
	host_tensor_free(&fill);
	return e;
}

static int
fold_range(const Onnx__NodeProto *n, Host *const *in, Host *out, Diag *d)
{
	for (int k = 0; k < 3; k++)
		if (in[k]->n != 1)
			return node_error(d, n, "inputs must be scalars");
	double start = in[0]->v[0], limit = in[1]->v[0], delta = in[2]->v[0];
	if (delta == 0)
		return node_error(d, n, "a delta of 0");
	double c = ceil((limit - start) / delta);
	int64_t len = c > 0 ? (int64_t)c : 0;
	if (len > HOST_MAX_ELEMS)
		return node_error(d, n, "%lld elements", (long long)len);
	int e = host_alloc(out, in[0]->type, 1, &len, d);
	for (int64_t i = 0; !e && i < len; i++)
		out->v[i] = to_type(out->type, start + (double)i * delta);
	return e;
}

static int
fold_cast(const Onnx__NodeProto *n, const Host *x, Host *out, Diag *d)
{
	int64_t to;
	int e = attr_int(n, "to", 0, &to, d);
	if (!e && !raw_size((int)to))
		e = node_error(d, n,
		               "cast to element type %lld is not "
		               "supported",
		               (long long)to);
	if (!e)
		e = host_alloc(out, (int)to, x->rank, x->dim, d);
	for (int64_t i = 0; !e && i < x->n; i++)
		out->v[i] = to_type((int)to, x->v[i]);
	return e;
}

int
fold_node(const Onnx__NodeProto *n, Host *const *in, int nin, Host *out,
          Diag *d)
{
	const char *op = n->op_type;
	int64_t dim[HOST_MAX_RANK];
	int rank, e;
	/* required inputs present */
	int need = !strcmp(op, "Constant") || !strcmp(op, "Concat") ? 0
	           : !strcmp(op, "Slice") || !strcmp(op, "Where") ||
	                   !strcmp(op, "Range")
	               ? 3
	           : !strcmp(op, "Add") || !strcmp(op, "Sub") ||
	                   !strcmp(op, "Mul") || !strcmp(op, "Div") ||
	                   !strcmp(op, "Pow") || !strcmp(op, "Equal") ||
	                   !strcmp(op, "Less") || !strcmp(op, "Greater") ||
	                   !strcmp(op, "Gather") || !strcmp(op, "Reshape") ||
	                   !strcmp(op, "Expand")
	               ? 2
	               : 1;
	if (!strcmp(op, "Unsqueeze"))
		need = 2;
	for (int k = 0; k < need; k++)
		if (k >= nin || !in[k])
			return node_error(d, n, "input %d is missing", k);
	if (!strcmp(op, "Identity"))
		return copy_host(in[0], out, d);
	if (!strcmp(op, "Cast"))
		return fold_cast(n, in[0], out, d);
	if (!strcmp(op, "Shape"))
		return onnx_shape_of(n, in[0]->rank, in[0]->dim, out, d);
	if (!strcmp(op, "Gather"))
		return fold_gather(n, in[0], in[1], out, d);
	if (!strcmp(op, "Concat"))
		return fold_concat(n, in, nin, out, d);
	if (!strcmp(op, "Transpose"))
		return fold_transpose(n, in[0], out, d);
	if (!strcmp(op, "Slice"))
		return fold_slice(n, in, nin, out, d);
	if (!strcmp(op, "Expand"))
		return fold_expand(n, in[0], in[1], out, d);
	if (!strcmp(op, "Where"))
		return fold_where(n, in, out, d);
	if (!strcmp(op, "ConstantOfShape"))
		return fold_constant_of_shape(n, in[0], out, d);
	if (!strcmp(op, "Range"))
		return fold_range(n, in, out, d);
	if (!strcmp(op, "Reshape")) {
		e = onnx_reshape_dims(n, in[0]->dim, in[0]->rank, in[1], dim,
		                      &rank, d);
		return e ? e : fold_reshape_to(in[0], rank, dim, out, d);
	}
	if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
		e = onnx_squeeze_dims(n, op[0] == 'U', in[0]->dim, in[0]->rank,
		                      nin > 1 ? in[1] : NULL, dim, &rank, d);
		return e ? e : fold_reshape_to(in[0], rank, dim, out, d);
	}
	if (!strcmp(op, "Flatten")) {
		int64_t a;
		int axis;
		e = attr_int(n, "axis", 1, &a, d);
		if (!e)
			e = axis_norm(n, a, in[0]->rank + 1, &axis, d);
		if (e)
			return e;
		dim[0] = dim[1] = 1;
		for (int i = 0; i < in[0]->rank; i++)
			dim[i >= axis] *= in[0]->dim[i];
		return fold_reshape_to(in[0], 2, dim, out, d);
	}
	static const struct {
		const char *op;
		Binary f;
		int bool_out;
	} bin[] = {{"Add", b_add, 0},   {"Sub", b_sub, 0},
	           {"Mul", b_mul, 0},   {"Div", b_div, 0},
	           {"Pow", b_pow, 0},   {"Equal", b_equal, 1},
	           {"Less", b_less, 1}, {"Greater", b_greater, 1}};
	for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++)
		if (!strcmp(op, bin[i].op)) {
			if (!strcmp(op, "Pow") && in[1]->type != in[0]->type) {
				/* Pow's exponent may have its own type */
				Host y = *in[1];
				y.type = in[0]->type;
				Host *pair[2] = {in[0], &y};
				return fold_binary(n, pair, out, bin[i].f, 0,
				                   d);
			}
			return fold_binary(n, in, out, bin[i].f,
			                   bin[i].bool_out ? T(BOOL) : 0, d);
		}
	static const struct {
		const char *op;
		double (*f)(double);
	} un[] = {{"Sqrt", sqrt}, {"Reciprocal", u_recip}, {"Neg", u_neg},
	          {"Erf", erf},   {"Tanh", tanh},          {"Not", u_not},
	          {"Exp", exp},   {"Abs", fabs},           {"Relu", u_relu}};
	for (size_t i = 0; i < sizeof un / sizeof un[0]; i++)
		if (!strcmp(op, un[i].op))
			return fold_unary(in[0], out, un[i].f, d);
	return node_error(d, n, "cannot be computed at import time");
}

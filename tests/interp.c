/*
 * interp.c - the graph interpreter of the compiler's tests (interp.h).
 *
 * Values: long double arithmetic on the inputs' exact values, each op's
 * result rounded to its tensor's element type (as the device stores it).
 *
 * Bounds: for each element, err >= |device - val|, from three parts:
 *   p  what the inputs' bounds can move the exact result (rigorous: a
 *      product's |a| eb + |b| ea + ea eb, GELU's slope at most 1.13, a
 *      row's normalisation and softmax below);
 *   k  the kernel's own error before it stores its result, as its docs
 *      state it ("Accuracy" of docs/kernel-gemm.md, kernel-elementwise.md,
 *      kernel-rowwise.md);
 *   and half an ulp of the result for the device's rounding and half for
 *   ours (settle).
 */
#include "interp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/plan/plan.h"
#include "../src/util/fp.h"

static Fp8Format
f8_format(DType dt)
{
	return dt == DT_F8_F152 ? FP8_F152 : FP8_F143;
}

void
interp_to_bits(ElemType e, long double v, uint8_t *out)
{
	unsigned fl = 0;
	if (e.dtype == DT_F32) {
		float f = (float)v;
		memcpy(out, &f, 4);
	} else if (e.dtype == DT_F16) {
		uint16_t h =
		    fp_f64_to_f16((double)v, FP_RNE, 0, FP_OV_IEEE, &fl);
		memcpy(out, &h, 2);
	} else {
		*out = fp_f64_to_f8((double)v, f8_format(e.dtype), e.scale,
		                    FP_OV_SAT, &fl);
	}
}

long double
interp_from_bits(ElemType e, const uint8_t *in)
{
	if (e.dtype == DT_F32) {
		float f;
		memcpy(&f, in, 4);
		return f;
	}
	if (e.dtype == DT_F16) {
		uint16_t h;
		memcpy(&h, in, 2);
		return fp_f16_to_f64(h);
	}
	return fp_f8_to_f64(*in, f8_format(e.dtype), e.scale);
}

long double
interp_round(ElemType e, long double v)
{
	uint8_t bits[4];
	interp_to_bits(e, v, bits);
	return interp_from_bits(e, bits);
}

/* Half an ulp relative to the value (normal numbers): 2^-(mantissa + 1). */
static double
unit(ElemType e)
{
	switch (e.dtype) {
	case DT_F32:
		return 0x1p-24;
	case DT_F16:
		return 0x1p-11;
	case DT_F8_F143:
		return 0x1p-4;
	default:
		return 0x1p-3;
	}
}

/* Half the smallest subnormal: the rounding error near zero. */
static double
tiny(ElemType e)
{
	if (e.dtype == DT_F32)
		return 0x1p-150;
	if (e.dtype == DT_F16)
		return 0x1p-25;
	return fp_f8_to_f64(1, f8_format(e.dtype), e.scale) / 2;
}

/* The bound on a result y stored as o: p from the inputs' bounds, k the
 * kernel's error before it rounds, then both roundings to o (of values
 * up to |y| + p + k; the last factor covers |y| being itself rounded). */
static double
settle(ElemType o, long double y, double p, double k)
{
	if (!isfinite(y) || !isfinite(p) || !isfinite(k))
		return INFINITY;
	double m = (double)fabsl(y) + p + k;
	return p + k + 2 * (unit(o) * m * (1 + 0x1p-8) + tiny(o));
}

/* Element index of `out` coordinates in a tensor of shape s, read with
 * numpy broadcasting (axes aligned from the right, size-1 axes repeat). */
static size_t
broadcast_index(const Shape *s, const Shape *out, const int64_t *coord)
{
	size_t at = 0;
	for (int i = 0; i < s->rank; i++) {
		int64_t c = coord[out->rank - s->rank + i];
		at = at * (size_t)s->dim[i] + (size_t)(s->dim[i] == 1 ? 0 : c);
	}
	return at;
}

static double
err_at(const Interp *in, int32_t id, size_t e)
{
	return in->err[id] ? in->err[id][e] : 0;
}

/* One row of a layernorm or softmax: its values x, the largest bound
 * of them (big) and their largest magnitude (most), and the row's
 * statistics: the mean and sigma = sqrt(var + eps), or the max and the
 * sum of exps (and the min, for the softmax's largest argument). */
typedef struct {
	const long double *x;
	double n, big, most;
	long double a, b, lo;
} Row;

enum { STAT_ROUNDINGS = 4 }; /* docs/kernel-rowwise.md: 4 (n + 8) u */

/* Element k of a layernorm row: the centred row moves by at most 2E (E =
 * big) in every element, so its RMS, and sigma, by at most 2E; z = c /
 * sigma then by at most 2E (1 + |z|) / (sigma - 2E) while sigma - 2E >
 * sigma / 2, and always by at most sqrt(n) + |z|. The kernel's own
 * error: 4 (n + 8) 2^-24 (|gamma| (|z| + max|x| / sigma) + |beta|); when
 * it writes its cast to f8 (plan_layernorm_fused_cast: z and y in f16,
 * the mean and rsqrt rounded to f16, the variance from deviations about
 * the f16 mean rounded to f16; docs/kernel-rowwise.md) also (1 + 2^-9)
 * (|gamma| (2^-10 |z| + 2^-11 |mean| / sigma + |z| (2^-11 + 2^-23 (1 +
 * mean^2 / sigma^2))) + 2^-11 (2 |z gamma| + |beta|)) + 3 2^-25. */
static long double
layernorm_element(const Interp *in, const Op *op, const Row *w, size_t k,
                  int in_f16, double *p, double *kern)
{
	/* a norm: gamma 1 and beta 0, exactly */
	int affine = op->kind == OP_LAYERNORM;
	long double z = (w->x[k] - w->a) / w->b,
	            g = affine ? in->val[op->in[1]][k] : 1,
	            be = affine ? in->val[op->in[2]][k] : 0;
	double eg = affine ? err_at(in, op->in[1], k) : 0,
	       eb = affine ? err_at(in, op->in[2], k) : 0;
	double az = (double)fabsl(z), sigma = (double)w->b,
	       lo = sigma - 2 * w->big;
	double dz =
	    lo > sigma / 2 ? 2 * w->big * (1 + az) / lo : sqrt(w->n) + az;
	*p = (double)fabsl(g) * dz + (az + dz) * eg + eb;
	double sd = lo > sqrt(op->attr.eps) ? lo : sqrt(op->attr.eps);
	double scale = (az + dz) + (w->most + w->big) / sd;
	*kern =
	    sd > 0
	        ? STAT_ROUNDINGS * (w->n + 8) * 0x1p-24 *
	              (((double)fabsl(g) + eg) * scale + (double)fabsl(be) + eb)
	        : INFINITY;
	double ag = (double)fabsl(g) + eg;
	if (in_f16)
		*kern += (1 + 0x1p-9) *
		             (ag * (0x1p-10 * (az + dz) +
		                    0x1p-11 * (double)fabsl(w->a) / sd +
		                    (az + dz) *
		                        (0x1p-11 +
		                         0x1p-23 * (1 + (double)(w->a * w->a) /
		                                            (sd * sd)))) +
		              0x1p-11 * (2 * ag * (az + dz) +
		                         (double)fabsl(be) + eb)) +
		         3 * 0x1p-25;
	return z * g + be;
}

/* Element k of a softmax row: each exp and the sum move by factors
 * within e^(+-s E), so y by at most y (e^(2 s E) - 1). The kernel's own
 * relative error: 4 (n + 8 + t_max) 2^-24, t = s (x - max); the f16
 * kernel's t = s x + (-s max) adds 2 |s max| 2^-24. With its exps in f16
 * (plan_softmax_in_f16; docs/kernel-rowwise.md): e within 2^-10 |t| +
 * 2^-11 relative and 2^-25 absolute, the sum within the same relative
 * error and n 2^-25, the reciprocal and y rounded to f16. */
static long double
softmax_element(const Graph *g, const Op *op, const Row *w, ElemType o,
                size_t k, double *p, double *kern)
{
	double s = op->attr.scale;
	long double v = expl(s * (w->x[k] - w->a)) / w->b;
	*p = (double)v * expm1(2 * s * w->big);
	double tmax = s * ((double)(w->a - w->lo) + 2 * w->big);
	double rel = STAT_ROUNDINGS * (w->n + 8 + tmax) * 0x1p-24, abs = 0;
	if (o.dtype == DT_F16)
		rel += 2 * s * ((double)fabsl(w->a) + w->big) * 0x1p-24;
	if (plan_softmax_in_f16(g, op)) {
		rel += 2 * (0x1p-10 * tmax + 0x1p-11) + 2 * 0x1p-11;
		abs = (2 + w->n) * 0x1p-25;
	}
	*kern = rel * ((double)v + *p) + abs;
	return v;
}

/* layernorm and softmax over the last axis (docs/kernel-rowwise.md: f32
 * statistics, one rounding to the output's type at the end). */
static void
interpret_rowwise(const Graph *g, const Op *op, Interp *in)
{
	const Tensor *o = graph_tensor(g, op->out);
	int32_t ix = op->in[0];
	size_t cols = (size_t)o->shape.dim[o->shape.rank - 1],
	       rows = (size_t)shape_elems(&o->shape) / cols;
	for (size_t r = 0; r < rows; r++) {
		const long double *x = in->val[ix] + r * cols;
		Row w = {.x = x, .n = (double)cols, .lo = x[0]};
		for (size_t k = 0; k < cols; k++) {
			double ek = err_at(in, ix, r * cols + k);
			w.big = ek > w.big ? ek : w.big;
			if (fabsl(x[k]) > w.most)
				w.most = (double)fabsl(x[k]);
		}
		if (op->kind != OP_SOFTMAX) {
			for (size_t k = 0; k < cols; k++)
				w.a += x[k];
			w.a /= cols;
			for (size_t k = 0; k < cols; k++)
				w.b += (x[k] - w.a) * (x[k] - w.a);
			w.b = sqrtl(w.b / cols + op->attr.eps);
		} else {
			w.a = x[0];
			for (size_t k = 1; k < cols; k++) {
				w.a = fmaxl(w.a, x[k]);
				w.lo = fminl(w.lo, x[k]);
			}
			for (size_t k = 0; k < cols; k++)
				w.b += expl(op->attr.scale * (x[k] - w.a));
		}
		for (size_t k = 0; k < cols; k++) {
			double p, kern;
			long double v =
			    op->kind != OP_SOFTMAX
			        ? layernorm_element(
			              in, op, &w, k,
			              plan_layernorm_fused_cast(g, op) >= 0, &p,
			              &kern)
			        : softmax_element(g, op, &w, o->elem, k, &p,
			                          &kern);
			size_t e = r * cols + k;
			in->val[o->id][e] = interp_round(o->elem, v);
			in->err[o->id][e] =
			    settle(o->elem, in->val[o->id][e], p, kern);
		}
	}
}

/* Element e of a matmul (coordinates coord): the sum in long double; p
 * from the operands' bounds; the kernel's f32 accumulation (`steps`
 * roundings of 2^-24 per K-panel) and the rounding of each K-panel's
 * partial and of each K group's partial in the reduction to C's type
 * (docs/kernel-gemm.md "Accuracy"; at most 32 K groups). */
static void
matmul_element(const Graph *g, const Op *op, Interp *in, size_t e,
               const int64_t *coord)
{
	const Tensor *o = graph_tensor(g, op->out),
	             *a = graph_tensor(g, op->in[0]),
	             *b = graph_tensor(g, op->in[1]);
	int r = o->shape.rank, ra = a->shape.rank, rb = b->shape.rank;
	int ta = op->attr.transpose_a, tb = op->attr.transpose_b;
	size_t K = (size_t)a->shape.dim[ra - (ta ? 2 : 1)];
	size_t batch = e / (size_t)(o->shape.dim[r - 2] * o->shape.dim[r - 1]);
	size_t am = (size_t)(a->shape.dim[ra - 2] * a->shape.dim[ra - 1]),
	       bm = (size_t)(b->shape.dim[rb - 2] * b->shape.dim[rb - 1]);
	size_t M = (size_t)a->shape.dim[ra - (ta ? 1 : 2)],
	       N = (size_t)b->shape.dim[rb - (tb ? 2 : 1)];
	size_t row = (size_t)coord[r - 2], col = (size_t)coord[r - 1];
	long double v = 0;
	double p = 0, sum = 0, pa = 0, row_err = 0;
	for (size_t q = 0; q < K; q++) {
		size_t ia = batch * am + (ta ? q * M + row : row * K + q),
		       ib = batch * bm + (tb ? col * K + q : q * N + col);
		long double x = in->val[a->id][ia], y = in->val[b->id][ib];
		double ex = err_at(in, a->id, ia), ey = err_at(in, b->id, ib);
		v += x * y;
		sum += (double)fabsl(x * y);
		p += (double)fabsl(x) * ey + (double)fabsl(y) * ex + ex * ey;
		pa += (double)fabsl(y) * ex;
		row_err += ex;
	}
	double panel = a->elem.dtype == DT_F32   ? 8
	               : a->elem.dtype == DT_F16 ? 16
	                                         : 32;
	double nk = ceil((double)K / panel), groups = nk < 32 ? nk : 32;
	double steps = a->elem.dtype == DT_F32 ? 8 : 4;
	double kern =
	    (nk * (steps * 0x1p-24 + unit(o->elem)) + groups * unit(o->elem)) *
	        (sum + p) +
	    (nk + groups) * tiny(o->elem);
	if (plan_matmul_norm_cols(g, op)) {
		/* P V of an unnormalised softmax (rw_softmax_f16h8u,
		 * vadd_norm_f16): a_q = f8(p_q) / S, S the sum of the row's
		 * f8(p) (a column of the product). f8(p_q)'s relative error is
		 * at most twice its bound here, half an f8 step of a_q (the
		 * step's ratio to a value spans a factor 2), and dividing by S
		 * moves a_q by a_q times the row's mean relative error, at most
		 * twice the sum of the row's bounds (the a sum to 1); S's own
		 * roundings are an element's, then its reciprocal's (f32, f16)
		 * and the product's */
		p += pa + 2 * row_err * sum;
		kern += (nk * (steps * 0x1p-24 + unit(o->elem)) +
		         groups * unit(o->elem) + 0x1p-24 + 2 * 0x1p-11) *
		        (sum + p);
	}
	in->val[o->id][e] = interp_round(o->elem, v);
	in->err[o->id][e] = settle(o->elem, in->val[o->id][e], p, kern);
}

void
interp_init(Interp *in, const Graph *g)
{
	in->val = xcalloc((size_t)g->ntensors, sizeof *in->val);
	in->err = xcalloc((size_t)g->ntensors, sizeof *in->err);
}

void
interp_free(Interp *in, const Graph *g)
{
	for (int32_t id = 0; id < g->ntensors; id++) {
		free(in->val[id]);
		free(in->err[id]);
	}
	free(in->val);
	free(in->err);
}

void
interp_run(const Graph *g, Interp *in)
{
	for (int i = 0; i < g->nops; i++) {
		const Op *op = &g->ops[i];
		const Tensor *o = graph_tensor(g, op->out),
		             *a = graph_tensor(g, op->in[0]);
		size_t n = (size_t)shape_elems(&o->shape);
		long double *y = in->val[o->id] = xcalloc(n, sizeof *y);
		double *ye = in->err[o->id] = xcalloc(n, sizeof *ye);
		const long double *x = in->val[a->id];
		int r = o->shape.rank;
		if (op->kind == OP_LAYERNORM || op->kind == OP_NORM ||
		    op->kind == OP_SOFTMAX) {
			interpret_rowwise(g, op, in);
			continue;
		}
		int64_t coord[GRAPH_MAX_RANK];
		for (size_t e = 0; e < n; e++) {
			size_t rest = e;
			for (int k = r - 1; k >= 0; k--) {
				coord[k] =
				    (int64_t)(rest % (size_t)o->shape.dim[k]);
				rest /= (size_t)o->shape.dim[k];
			}
			if (op->kind == OP_MATMUL) {
				matmul_element(g, op, in, e, coord);
				continue;
			}
			long double v = 0;
			double p = 0, kern = 0;
			size_t at = e; /* the input element it reads */
			switch (op->kind) {
			case OP_ADD:
			case OP_MUL:
			case OP_MAX: {
				const Tensor *b = graph_tensor(g, op->in[1]);
				size_t ia = broadcast_index(&a->shape,
				                            &o->shape, coord);
				size_t ib = broadcast_index(&b->shape,
				                            &o->shape, coord);
				long double s = x[ia], t = in->val[b->id][ib];
				double es = err_at(in, a->id, ia),
				       et = err_at(in, b->id, ib);
				v = op->kind == OP_ADD   ? s + t
				    : op->kind == OP_MUL ? s * t
				    : s > t              ? s
				                         : t;
				/* max: exact, the larger error of the two */
				p = op->kind == OP_ADD ? es + et
				    : op->kind == OP_MUL
				        ? (double)fabsl(s) * et +
				              (double)fabsl(t) * es + es * et
				        : fmax(es, et);
				break;
			}
			case OP_CAST:
			case OP_RESHAPE:
				v = x[e];
				p = err_at(in, a->id, e);
				break;
			case OP_RELU:
				/* exact: x or 0 (an input's error passes
				 * through, shrunk by nothing) */
				v = x[e] > 0 ? x[e] : 0;
				p = err_at(in, a->id, e);
				break;
			case OP_GELU: {
				/* kernel: (4 + 8 |2u|) 2^-24 |gelu| + 2^-148
				 * in f32 (docs/kernel-elementwise.md) */
				double ex = err_at(in, a->id, e),
				       ax = (double)fabsl(x[e]) + ex;
				double two_u = 2 * 0.7978845608028654 *
				               (ax + 0.044715 * ax * ax * ax);
				v = 0.5L * x[e] *
				    (1 + tanhl(0.79788456080286535588L *
				               (x[e] + 0.044715L * x[e] * x[e] *
				                           x[e])));
				p = 1.13 * ex;
				kern = (4 + 8 * two_u) * 0x1p-24 *
				           ((double)fabsl(v) + p) +
				       0x1p-148;
				/* a GELU read only by casts to f8 runs in f16
				 * (plan_gelu_in_f16): 2u within 6 2^-11 |2u|
				 * + 2^-24, the sigmoid's relative change at
				 * most exp of that, its rounding, subnormals
				 * (docs/kernel-elementwise.md) */
				if (plan_gelu_in_f16(g, op))
					kern = (expm1(6 * 0x1p-11 * two_u +
					              0x1p-24) *
					            (1 + 0x1p-10) +
					        2.01 * 0x1p-11) *
					           ((double)fabsl(v) + p) +
					       0x1p-25 * (2 + ax);
				break;
			}
			case OP_TRANSPOSE: {
				/* output axis k is input axis perm[k] */
				int64_t ic[GRAPH_MAX_RANK];
				for (int k = 0; k < r; k++)
					ic[op->attr.perm.dim[k]] = coord[k];
				at = 0;
				for (int k = 0; k < r; k++)
					at = at * (size_t)a->shape.dim[k] +
					     (size_t)ic[k];
				v = x[at];
				p = err_at(in, a->id, at);
				break;
			}
			case OP_SLICE: {
				at = 0;
				for (int k = 0; k < r; k++)
					at = at * (size_t)a->shape.dim[k] +
					     (size_t)(coord[k] +
					              op->attr.begin.dim[k]);
				v = x[at];
				p = err_at(in, a->id, at);
				break;
			}
			case OP_CONCAT: {
				/* from a, or from b past a's part of the axis
				 */
				int ax = op->attr.axis;
				const Tensor *src = a;
				int64_t c[GRAPH_MAX_RANK] = {0};
				for (int k = 0; k < r; k++)
					c[k] = coord[k];
				if (c[ax] >= a->shape.dim[ax]) {
					c[ax] -= a->shape.dim[ax];
					src = graph_tensor(g, op->in[1]);
				}
				at = 0;
				for (int k = 0; k < r; k++)
					at = at * (size_t)src->shape.dim[k] +
					     (size_t)c[k];
				v = in->val[src->id][at];
				p = err_at(in, src->id, at);
				break;
			}
			case OP_GATHER: {
				/* table row clamp(id - base, 0, V - 1)
				 * (the ids are integers: the graph's
				 * contract) */
				const Tensor *ids = graph_tensor(g, op->in[1]);
				long double id =
				    in->val[ids->id][coord[0]] - op->attr.base;
				if (id != floorl(id))
					abort();
				id = id < 0 ? 0
				     : id >= a->shape.dim[0]
				         ? a->shape.dim[0] - 1
				         : id;
				at = (size_t)id * (size_t)a->shape.dim[1] +
				     (size_t)coord[1];
				v = x[at];
				p = err_at(in, a->id, at);
				break;
			}
			default:
				abort(); /* every op of ops.def is above */
			}
			y[e] = interp_round(o->elem, v);
			/* moves are exact; casts and arithmetic round */
			ye[e] = op->kind == OP_RESHAPE ||
			                op->kind == OP_TRANSPOSE ||
			                op->kind == OP_SLICE ||
			                op->kind == OP_CONCAT ||
			                op->kind == OP_GATHER
			            ? p
			            : settle(o->elem, y[e], p, kern);
		}
	}
}

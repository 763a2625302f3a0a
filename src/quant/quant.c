/*
 * quant.c - FP8 quantization of a SigLIP checkpoint (quant.h).
 *
 * The float tower (after smoothing) and the quantized one live side by
 * side as HostTowers; a policy weight (siglip_dense_weights' order) maps
 * to one HostLinear, or three for the head's in_proj_weight (q, k, v).
 * Weight scales are shared by every layer's weight at one GEMM position
 * (and by q, k and v, which run as one fused GEMM), so that the layers
 * still run as one loop body unless the mixed-precision search keeps
 * some of them in f16.
 */
#include "quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

struct Quantized {
	SiglipConfig c;
	SiglipQuant pol;
	HostTower fl; /* float weights (smoothed) */
	HostTower qt; /* as the device computes: decoded weights, f8 inputs */
	uint8_t **codes; /* [nweight]: the checkpoint tensor's codes, or NULL */
	float **chan;    /* [nweight]: channel scales [rows], or NULL */
	unsigned methods;
};

enum { WMAX = 240 }; /* the largest F143 value at 2^0 */

static const struct {
	const char *name;
	unsigned bit;
} method_names[] = {
    {"tensor", QUANT_TENSOR},
    {"channel", QUANT_CHANNEL},
    {"mse", QUANT_MSE},
    {"smooth", QUANT_SMOOTH},
};
enum { NMETHODS = sizeof method_names / sizeof method_names[0] };

int
quant_parse_methods(const char *text, unsigned *out, Diag *d)
{
	*out = 0;
	for (const char *s = text; *s;) {
		size_t len = strcspn(s, ",");
		int k = 0;
		while (k < NMETHODS && (strlen(method_names[k].name) != len ||
		                        strncmp(method_names[k].name, s, len)))
			k++;
		if (k == NMETHODS)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "method '%.*s': not one of tensor, "
			                "channel, mse, smooth",
			                (int)len, s);
		*out |= method_names[k].bit;
		s += len + (s[len] == ',');
	}
	if (!*out)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0, "no method given");
	if ((*out & QUANT_TENSOR) && (*out & QUANT_CHANNEL))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "methods tensor and channel are two kinds of "
		                "weight scale: one of them");
	return IPU_OK;
}

const char *
quant_methods_name(unsigned methods)
{
	static char buf[64];
	size_t at = 0;
	buf[0] = 0;
	if (!(methods & QUANT_CHANNEL))
		methods |= QUANT_TENSOR;
	for (int k = 0; k < NMETHODS; k++)
		if (methods & method_names[k].bit)
			at += (size_t)snprintf(buf + at, sizeof buf - at,
			                       "%s%s", at ? "," : "",
			                       method_names[k].name);
	return buf;
}

const SiglipQuant *
quant_policy(const Quantized *q)
{
	return &q->pol;
}

/* The HostLinears of policy weight w in tower t (3 for in_proj). */
static int
linears(HostTower *t, const SiglipQWeight *w, HostLinear *out[3])
{
	if (w->pos == SIGLIP_EMBED) {
		out[0] = &t->embed;
		return 1;
	}
	if (w->layer >= 0) {
		HostLayer *y = &t->layer[w->layer];
		out[0] = strstr(w->name, ".q_proj.")    ? &y->q
		         : strstr(w->name, ".k_proj.")  ? &y->k
		         : strstr(w->name, ".v_proj.")  ? &y->v
		         : strstr(w->name, ".out_proj") ? &y->out
		         : strstr(w->name, ".fc1.")     ? &y->fc1
		                                        : &y->fc2;
		return 1;
	}
	switch (w->pos) {
	case SIGLIP_HEAD_KV:
		out[0] = &t->hq;
		out[1] = &t->hk;
		out[2] = &t->hv;
		return 3;
	case SIGLIP_HEAD_OUT:
		out[0] = &t->hout;
		return 1;
	case SIGLIP_HEAD_FC1:
		out[0] = &t->hfc1;
		return 1;
	default:
		out[0] = &t->hfc2;
		return 1;
	}
}

/* The position whose activation part k of w reads. */
static SiglipGemm
reads(const SiglipQWeight *w, int k)
{
	return w->parts == 3 && k == 0 ? SIGLIP_HEAD_Q : w->pos;
}

/* ---- calibration ---- */

enum { ACT_CANDIDATES = 4 };

typedef struct {
	int pass; /* 0: maxima (and channel maxima), 1: squared errors */
	double max[SIGLIP_GEMMS];
	int smax[SIGLIP_GEMMS];
	double sse[SIGLIP_GEMMS][ACT_CANDIDATES];
	float *chmax; /* [layers][2 (qkv, fc1)][d], or NULL */
	int d;
} Calib;

static void
calib_input(void *ctx, int layer, SiglipGemm pos, const float *x, int rows,
            int cols)
{
	Calib *k = ctx;
	size_t n = (size_t)rows * cols;
	if (k->pass == 0) {
		for (size_t i = 0; i < n; i++)
			k->max[pos] = fmax(k->max[pos], fabs(x[i]));
		int slot = pos == SIGLIP_QKV ? 0 : pos == SIGLIP_FC1 ? 1 : -1;
		if (k->chmax && layer >= 0 && slot >= 0) {
			float *m = k->chmax + ((size_t)layer * 2 + slot) * k->d;
			for (int r = 0; r < rows; r++)
				for (int j = 0; j < cols; j++)
					m[j] = fmaxf(
					    m[j],
					    fabsf(x[(size_t)r * cols + j]));
		}
		return;
	}
	for (int c = 0; c < ACT_CANDIDATES; c++) {
		int s = k->smax[pos] - c;
		double e = 0;
		for (size_t i = 0; i < n; i++) {
			double r = host_f8_round(x[i], FP8_F143, s) - x[i];
			e += r * r;
		}
		k->sse[pos][c] += e;
	}
}

static void
calibrate(const HostTower *t, const float *px, int n, Calib *k)
{
	HostHooks hk = {.input = calib_input, .ctx = k};
	size_t per = (size_t)t->c.channels * t->c.image * t->c.image;
	for (int i = 0; i < n; i++)
		free(host_forward(t, px + i * per, 1, &hk));
}

/* ---- smoothing (SmoothQuant) ---- */

/* Divide LayerNorm (g, b)'s channel j by s_j and multiply column j of the
 * weights it feeds by s_j, s_j = amax_j^alpha / wmax_j^(1 - alpha). */
static void
smooth(float *g, float *b, HostLinear **w, int nw, const float *amax, int d,
       double alpha)
{
	for (int j = 0; j < d; j++) {
		double wmax = 0;
		for (int k = 0; k < nw; k++)
			for (int o = 0; o < w[k]->out; o++)
				wmax = fmax(
				    wmax,
				    fabs(w[k]->w[(size_t)o * w[k]->in + j]));
		if (!(amax[j] > 0) || !(wmax > 0))
			continue;
		double s = pow(amax[j], alpha) / pow(wmax, 1 - alpha);
		s = fmin(fmax(s, 1e-4), 1e4);
		g[j] = (float)(g[j] / s);
		b[j] = (float)(b[j] / s);
		for (int k = 0; k < nw; k++)
			for (int o = 0; o < w[k]->out; o++)
				w[k]->w[(size_t)o * w[k]->in + j] *= (float)s;
	}
}

/* ---- weights ---- */

static double
f16_value(double x)
{
	unsigned fl = 0;
	return fp_f16_to_f64(fp_f64_to_f16(x, FP_RNE, 0, FP_OV_SAT, &fl));
}

static double
decode(uint8_t q, int scale)
{
	return fp_f8_to_f64(q, FP8_F143, scale);
}

static uint8_t
encode(double x, int scale)
{
	unsigned fl = 0;
	return fp_f64_to_f8(x, FP8_F143, scale, FP_OV_SAT, &fl);
}

/* Squared error of w[n] / c coded at 2^s, decoded times c. */
static double
sse(const float *w, size_t n, int s, double c)
{
	double e = 0;
	for (size_t i = 0; i < n; i++) {
		double r = decode(encode(w[i] / c, s), s) * c - w[i];
		e += r * r;
	}
	return e;
}

/* One scale group: every weight at GEMM position pos (part `part` of the
 * head's in_proj_weight). Its scale: the max's, or with mse the best of
 * it and the two below. */
static int
group_scale(Quantized *q, SiglipGemm pos, int part)
{
	double max = 0;
	for (int i = 0; i < q->pol.nweight; i++) {
		SiglipQWeight *w = &q->pol.weight[i];
		HostLinear *l[3];
		linears(&q->fl, w, l);
		if (w->pos != pos)
			continue;
		HostLinear *x = l[w->parts == 3 ? part : 0];
		for (size_t k = 0; k < (size_t)x->out * x->in; k++)
			max = fmax(max, fabs(x->w[k]));
	}
	int smax = fp_f8_f143_scale(max), best = smax;
	if (!(q->methods & QUANT_MSE) || (q->methods & QUANT_CHANNEL))
		return smax;
	double beste = INFINITY;
	for (int s = smax; s >= smax - 2; s--) {
		double e = 0;
		for (int i = 0; i < q->pol.nweight; i++) {
			SiglipQWeight *w = &q->pol.weight[i];
			HostLinear *l[3];
			linears(&q->fl, w, l);
			if (w->pos == pos) {
				HostLinear *x = l[w->parts == 3 ? part : 0];
				e += sse(x->w, (size_t)x->out * x->in, s, 1);
			}
		}
		if (e < beste) {
			beste = e;
			best = s;
		}
	}
	return best;
}

/* Quantize HostLinear src at 2^s (with channel scales into chan[out]) into
 * codes[out in] and dst's weights (decoded). */
static void
quantize_linear(const Quantized *q, const HostLinear *src, int s,
                uint8_t *codes, float *chan, HostLinear *dst)
{
	size_t in = (size_t)src->in;
	for (int o = 0; o < src->out; o++) {
		const float *row = src->w + o * in;
		double c = 1;
		if (chan) {
			double m = 0;
			for (size_t k = 0; k < in; k++)
				m = fmax(m, fabs(row[k]));
			double c0 = m > 0 ? m / ldexp(WMAX, s) : 1;
			c = fmax(f16_value(c0), 0x1p-14);
			if (q->methods & QUANT_MSE) {
				double beste = sse(row, in, s, c);
				for (int f = 19; f >= 10; f--) {
					double cf = fmax(f16_value(c0 * f / 20),
					                 0x1p-14);
					double e = sse(row, in, s, cf);
					if (e < beste) {
						beste = e;
						c = cf;
					}
				}
			}
			chan[o] = (float)c;
		}
		for (size_t k = 0; k < in; k++) {
			uint8_t b = encode(row[k] / c, s);
			codes[o * in + k] = b;
			dst->w[o * in + k] = (float)(decode(b, s) * c);
		}
	}
}

static void
quantize_weights(Quantized *q)
{
	int chan = (q->methods & QUANT_CHANNEL) != 0;
	int gscale[SIGLIP_GEMMS][3];
	for (int p = 0; p < SIGLIP_GEMMS; p++)
		for (int k = 0; k < 3; k++)
			gscale[p][k] = p == SIGLIP_EMBED ? 0
			               : k && p != SIGLIP_HEAD_KV
			                   ? 0
			                   : group_scale(q, (SiglipGemm)p, k);
	for (int i = 0; i < q->pol.nweight; i++) {
		SiglipQWeight *w = &q->pol.weight[i];
		if (w->pos == SIGLIP_EMBED)
			continue; /* the patch embedding stays f16 */
		HostLinear *src[3], *dst[3];
		int np = linears(&q->fl, w, src);
		linears(&q->qt, w, dst);
		size_t per = (size_t)src[0]->out * src[0]->in;
		q->codes[i] = xmalloc(per * np);
		if (chan)
			q->chan[i] = xmalloc((size_t)src[0]->out * np *
			                     sizeof *q->chan[i]);
		w->dtype = DT_F8_F143;
		w->channel = chan;
		for (int k = 0; k < np; k++) {
			w->scale[k] = gscale[w->pos][k];
			quantize_linear(
			    q, src[k], w->scale[k], q->codes[i] + k * per,
			    chan ? q->chan[i] + k * src[0]->out : NULL, dst[k]);
		}
	}
}

/* Weight i in f8 (the codes' decoded values, its input cast) or f16. */
static void
set_f8(Quantized *q, int i, int f8)
{
	SiglipQWeight *w = &q->pol.weight[i];
	HostLinear *src[3], *dst[3];
	int np = linears(&q->fl, w, src);
	linears(&q->qt, w, dst);
	size_t per = (size_t)src[0]->out * src[0]->in;
	for (int k = 0; k < np; k++) {
		for (size_t e = 0; e < per; e++) {
			double c =
			    q->chan[i]
			        ? q->chan[i][k * src[0]->out + e / src[0]->in]
			        : 1;
			dst[k]->w[e] =
			    f8 ? (float)(decode(q->codes[i][k * per + e],
			                        w->scale[k]) *
			                 c)
			       : src[k]->w[e];
		}
		dst[k]->f8 = f8;
		dst[k]->fmt = FP8_F143;
		dst[k]->scale = q->pol.act_scale[reads(w, k)];
	}
	w->dtype = f8 ? DT_F8_F143 : DT_F16;
}

/* ---- the mixed-precision search ---- */

static double
min_cos(const Quantized *q, const float *px, int n)
{
	double *c = xmalloc((size_t)n * sizeof *c), m = 1;
	quant_eval(q, px, n, c);
	for (int i = 0; i < n; i++)
		m = fmin(m, c[i]);
	free(c);
	return m;
}

/* A unit of the search: the weights that run as one GEMM (q, k, v of a
 * layer) or one weight. */
typedef struct {
	int first, n;
	double gain;
} Unit;

static int
by_gain(const void *a, const void *b)
{
	const Unit *x = a, *y = b;
	return (x->gain < y->gain) - (x->gain > y->gain);
}

static void
set_unit(Quantized *q, const Unit *u, int f8)
{
	for (int i = u->first; i < u->first + u->n; i++)
		set_f8(q, i, f8);
}

static void
search(Quantized *q, const float *px, int n, double target, FILE *log)
{
	Unit *u = xcalloc((size_t)q->pol.nweight, sizeof *u);
	int nu = 0;
	for (int i = 0; i < q->pol.nweight;) {
		const SiglipQWeight *w = &q->pol.weight[i];
		int len = w->pos == SIGLIP_QKV ? 3 : 1;
		if (dtype_is_f8(w->dtype))
			u[nu++] = (Unit){.first = i, .n = len};
		i += len;
	}
	double base = min_cos(q, px, n);
	if (log)
		fprintf(log, "search: all f8: cosine %.6f (target %.6f)\n",
		        base, target);
	if (base >= target) {
		free(u);
		return;
	}
	for (int k = 0; k < nu; k++) {
		set_unit(q, &u[k], 0);
		u[k].gain = min_cos(q, px, n) - base;
		set_unit(q, &u[k], 1);
	}
	qsort(u, (size_t)nu, sizeof *u, by_gain);
	/* the shortest prefix (of units in f16) reaching the target, by
	 * bisection: none does not, all do or are the best there is */
	int lo = 1, hi = nu;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		for (int k = 0; k < nu; k++)
			set_unit(q, &u[k], k >= mid);
		double c = min_cos(q, px, n);
		if (log)
			fprintf(log, "search: %d of %d in f16: cosine %.6f\n",
			        mid, nu, c);
		if (c >= target)
			hi = mid;
		else
			lo = mid + 1;
	}
	for (int k = 0; k < nu; k++)
		set_unit(q, &u[k], k >= lo);
	free(u);
}

/* ---- the whole ---- */

int
quant_siglip(const SiglipConfig *c, const StFile *f, const float *calib,
             int ncalib, const QuantOpts *o, Quantized **out, Diag *d)
{
	Quantized *q = xcalloc(1, sizeof *q);
	q->c = *c;
	q->methods =
	    o->methods & QUANT_CHANNEL ? o->methods : o->methods | QUANT_TENSOR;
	int e = host_load(&q->fl, c, f, d);
	if (e) {
		free(q);
		return e;
	}
	q->pol.nweight = siglip_dense_weights(c, &q->pol.weight);
	q->codes = xcalloc((size_t)q->pol.nweight, sizeof *q->codes);
	q->chan = xcalloc((size_t)q->pol.nweight, sizeof *q->chan);
	int d_ = c->hidden;
	Calib k = {.d = d_};
	if (q->methods & QUANT_SMOOTH) {
		k.chmax = xcalloc((size_t)c->layers * 2 * d_, sizeof *k.chmax);
		calibrate(&q->fl, calib, ncalib, &k);
		for (int l = 0; l < c->layers; l++) {
			HostLayer *y = &q->fl.layer[l];
			HostLinear *qkv[3] = {&y->q, &y->k, &y->v},
			           *fc1 = &y->fc1;
			smooth(y->ln1_g, y->ln1_b, qkv, 3,
			       k.chmax + (size_t)l * 2 * d_, d_, o->alpha);
			smooth(y->ln2_g, y->ln2_b, &fc1, 1,
			       k.chmax + ((size_t)l * 2 + 1) * d_, d_,
			       o->alpha);
		}
		free(k.chmax);
		k = (Calib){.d = d_};
	}
	calibrate(&q->fl, calib, ncalib, &k);
	for (int p = 0; p < SIGLIP_GEMMS; p++)
		k.smax[p] = fp_f8_f143_scale(k.max[p]);
	q->pol.act_scale[SIGLIP_EMBED] = 0;
	if (q->methods & QUANT_MSE) {
		k.pass = 1;
		calibrate(&q->fl, calib, ncalib, &k);
	}
	for (int p = 0; p < SIGLIP_GEMMS; p++) {
		int best = 0;
		for (int cand = 1;
		     (q->methods & QUANT_MSE) && cand < ACT_CANDIDATES; cand++)
			if (k.sse[p][cand] < k.sse[p][best])
				best = cand;
		q->pol.act_scale[p] = k.smax[p] - best;
	}
	host_copy(&q->qt, &q->fl);
	q->qt.f16 = 1;
	quantize_weights(q);
	for (int i = 0; i < q->pol.nweight; i++)
		if (q->codes[i])
			set_f8(q, i, 1);
	if (o->target_cos > 0)
		search(q, calib, ncalib, o->target_cos, o->log);
	for (int p = 0; p < SIGLIP_GEMMS; p++)
		q->pol.act[p] = DT_F16;
	for (int i = 0; i < q->pol.nweight; i++) {
		const SiglipQWeight *w = &q->pol.weight[i];
		for (int k2 = 0; dtype_is_f8(w->dtype) && k2 < w->parts; k2++)
			q->pol.act[reads(w, k2)] = DT_F8_F143;
	}
	q->pol.methods = xstrdup(quant_methods_name(q->methods));
	*out = q;
	return IPU_OK;
}

void
quant_eval(const Quantized *q, const float *pixels, int n, double *cos)
{
	size_t per = (size_t)q->c.channels * q->c.image * q->c.image;
	for (int i = 0; i < n; i++) {
		float *ref = host_forward(&q->fl, pixels + i * per, 1, NULL),
		      *got = host_forward(&q->qt, pixels + i * per, 1, NULL);
		cos[i] = host_cosine(ref, got, (size_t)q->c.hidden);
		free(ref);
		free(got);
	}
}

/* ---- writing ---- */

/* The float values a smoothed tensor has now, or NULL if unchanged. */
static const float *
smoothed(const Quantized *q, const char *name)
{
	if (!(q->methods & QUANT_SMOOTH))
		return NULL;
	static const char pre[] = "vision_model.encoder.layers.";
	if (strncmp(name, pre, sizeof pre - 1))
		return NULL;
	char *end;
	long l = strtol(name + sizeof pre - 1, &end, 10);
	const HostLayer *y = &q->fl.layer[l];
	return !strcmp(end, ".layer_norm1.weight")   ? y->ln1_g
	       : !strcmp(end, ".layer_norm1.bias")   ? y->ln1_b
	       : !strcmp(end, ".layer_norm2.weight") ? y->ln2_g
	       : !strcmp(end, ".layer_norm2.bias")   ? y->ln2_b
	                                             : NULL;
}

/* Tensor i of the output: its spec and bytes (malloc'd). */
typedef struct {
	StSpec spec;
	char name[SIGLIP_MAX_NAME + 8];
	uint64_t shape[4];
	uint8_t *data;
	size_t len;
} OutTensor;

static uint8_t *
f32_bytes(const float *v, size_t n)
{
	uint8_t *b = xmalloc(n * 4);
	for (size_t i = 0; i < n; i++) {
		uint32_t u = fp_float_f32(v[i]);
		for (int k = 0; k < 4; k++)
			b[4 * i + k] = (uint8_t)(u >> (8 * k));
	}
	return b;
}

/* Weight w's float values after smoothing (all parts, whole tensor). */
static float *
weight_floats(const Quantized *q, const SiglipQWeight *w)
{
	HostLinear *l[3];
	int np = linears((HostTower *)&q->fl, w, l);
	size_t per = (size_t)l[0]->out * l[0]->in;
	float *v = xmalloc(per * np * sizeof *v);
	for (int k = 0; k < np; k++)
		memcpy(v + k * per, l[k]->w, per * sizeof *v);
	return v;
}

int
quant_write(const Quantized *q, const StFile *f, const char *calib,
            const char *path, int overwrite, Diag *d)
{
	size_t cap = f->ntensor + (size_t)q->pol.nweight, n = 0;
	OutTensor *t = xcalloc(cap, sizeof *t);
	SiglipTensor *vision;
	size_t nvision = siglip_tensors(&q->c, &vision);
	int e = IPU_OK;
	for (size_t i = 0; i < f->ntensor && !e; i++) {
		const StTensor *s = &f->tensor[i];
		int known = 0; /* the vision tower's (not a text tower's) */
		for (size_t k = 0; k < nvision && !known; k++)
			known = !strcmp(vision[k].name, s->name);
		if (!known || s->rank > 4)
			continue;
		const SiglipQWeight *w = siglip_quant_find(&q->pol, s->name);
		int wi = w ? (int)(w - q->pol.weight) : -1;
		OutTensor *o = &t[n++];
		snprintf(o->name, sizeof o->name, "%s", s->name);
		memcpy(o->shape, s->shape, (size_t)s->rank * sizeof *o->shape);
		o->spec = (StSpec){o->name, ST_F32, s->rank, o->shape};
		uint64_t elems = st_elements(s);
		const float *sm = smoothed(q, s->name);
		if (w && dtype_is_f8(w->dtype)) {
			o->spec.dtype = ST_F8_E4M3FNUZ;
			o->len = elems;
			o->data = xmalloc(elems);
			memcpy(o->data, q->codes[wi], elems);
		} else if (w || sm) {
			float *v = w ? weight_floats(q, w) : NULL;
			o->data = f32_bytes(w ? v : sm, elems);
			o->len = elems * 4;
			free(v);
		} else {
			float *v = xmalloc(elems * sizeof *v);
			e = st_to_f32(f, s, v, d);
			o->data = f32_bytes(v, elems);
			o->len = elems * 4;
			free(v);
		}
		if (w && dtype_is_f8(w->dtype) && w->channel) {
			OutTensor *c = &t[n++];
			siglip_quant_scale_name(s->name, c->name,
			                        sizeof c->name);
			c->shape[0] = s->shape[0];
			c->spec = (StSpec){c->name, ST_F32, 1, c->shape};
			c->data = f32_bytes(q->chan[wi], s->shape[0]);
			c->len = s->shape[0] * 4;
		}
	}
	SiglipQuant pol = q->pol;
	pol.calibration = (char *)calib;
	char *json = siglip_quant_json(&pol);
	StMeta meta[] = {{"format", "pt"}, {SIGLIP_QUANT_KEY, json}};
	StSpec *spec = xcalloc(n, sizeof *spec);
	const void **data = xcalloc(n, sizeof *data);
	for (size_t i = 0; i < n; i++) {
		spec[i] = t[i].spec;
		data[i] = t[i].data;
	}
	if (!e)
		e = st_write(path, spec, data, n, meta, 2, overwrite, d);
	for (size_t i = 0; i < n; i++)
		free(t[i].data);
	free(t);
	free(vision);
	free(spec);
	free(data);
	free(json);
	return e;
}

void
quant_free(Quantized *q)
{
	if (!q)
		return;
	for (int i = 0; i < q->pol.nweight; i++) {
		free(q->codes[i]);
		free(q->chan[i]);
	}
	free(q->codes);
	free(q->chan);
	siglip_quant_free(&q->pol);
	host_free(&q->fl);
	host_free(&q->qt);
	free(q);
}

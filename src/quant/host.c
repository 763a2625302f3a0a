/*
 * host.c - the SigLIP vision tower on the host (host.h), op for op as
 * model.md section 1 and src/models/siglip_graph.c compute it.
 */
#include "host.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- FP8 rounding ---- */

static const struct {
	int p, emin; /* significant bits, smallest normal exponent */
	double max;
} grid[] = {[FP8_F143] = {4, -7, 240}, [FP8_F152] = {3, -15, 57344}};

double
host_f8_max(Fp8Format fmt)
{
	return grid[fmt].max;
}

float
host_f8_round(float x, Fp8Format fmt, int scale)
{
	if (x == 0 || isnan(x))
		return x;
	double a = ldexp((double)x, -scale), m = grid[fmt].max;
	int e;
	frexp(a, &e); /* |a| in [2^(e-1), 2^e) */
	e -= 1;
	if (e < grid[fmt].emin)
		e = grid[fmt].emin;
	double step = ldexp(1, e - (grid[fmt].p - 1));
	double r = nearbyint(a / step) * step; /* nearest even */
	r = r > m ? m : r < -m ? -m : r;
	return (float)ldexp(r, scale);
}

/* Every element of x[n] so rounded (host_f8_round). */
static void
host_f8_round_all(float *x, size_t n, Fp8Format fmt, int scale)
{
	for (size_t i = 0; i < n; i++)
		x[i] = host_f8_round(x[i], fmt, scale);
}

static void
round_f16(const HostTower *t, float *x, size_t n)
{
	if (!t->f16)
		return;
	unsigned flags = 0;
	for (size_t i = 0; i < n; i++)
		x[i] = fp_f32_float(
		    fp_f16_to_f32(fp_f32_to_f16(fp_float_f32(x[i]), FP_RNE, 0,
		                                FP_OV_IEEE, &flags),
		                  &flags));
}

double
host_cosine(const float *a, const float *b, size_t n)
{
	double ab = 0, aa = 0, bb = 0;
	for (size_t i = 0; i < n; i++) {
		ab += (double)a[i] * b[i];
		aa += (double)a[i] * a[i];
		bb += (double)b[i] * b[i];
	}
	return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0;
}

/* ---- loading ---- */

static float *
get(const StFile *f, const char *name, size_t row0, size_t n, int *e, Diag *d)
{
	if (*e)
		return NULL;
	const StTensor *s = st_find(f, name);
	if (!s || st_elements(s) < row0 + n) {
		*e = diag_set(d, IPU_EINVAL, NULL, 0, 0,
		              "the checkpoint has no %s of %zu elements", name,
		              row0 + n);
		return NULL;
	}
	float *all = xmalloc(st_elements(s) * sizeof *all);
	if ((*e = st_to_f32(f, s, all, d))) {
		free(all);
		return NULL;
	}
	memmove(all, all + row0, n * sizeof *all);
	return all;
}

static void
linear_load(HostLinear *l, const StFile *f, const char *w, const char *b,
            int part, int out, int in, int *e, Diag *d)
{
	size_t row0 = part >= 0 ? (size_t)part * out : 0;
	*l = (HostLinear){.out = out, .in = in};
	l->w = get(f, w, row0 * in, (size_t)out * in, e, d);
	l->b = get(f, b, row0, (size_t)out, e, d);
}

int
host_load(HostTower *t, const SiglipConfig *c, const StFile *f, Diag *d)
{
	memset(t, 0, sizeof *t);
	t->c = *c;
	int e = IPU_OK, dd = c->hidden, ff = c->intermediate,
	    pp = c->channels * c->patch * c->patch;
	char w[160], b[160];
	linear_load(
	    &t->embed, f, "vision_model.embeddings.patch_embedding.weight",
	    "vision_model.embeddings.patch_embedding.bias", -1, dd, pp, &e, d);
	t->pos = get(f, "vision_model.embeddings.position_embedding.weight", 0,
	             (size_t)siglip_tokens(c) * dd, &e, d);
	t->layer = xcalloc((size_t)c->layers, sizeof *t->layer);
	for (int l = 0; l < c->layers && !e; l++) {
		HostLayer *y = &t->layer[l];
		char p[64];
		snprintf(p, sizeof p, "vision_model.encoder.layers.%d", l);
#define LN(field, name)                                                        \
	snprintf(w, sizeof w, "%s.%s", p, name);                               \
	y->field = get(f, w, 0, (size_t)dd, &e, d)
		LN(ln1_g, "layer_norm1.weight");
		LN(ln1_b, "layer_norm1.bias");
		LN(ln2_g, "layer_norm2.weight");
		LN(ln2_b, "layer_norm2.bias");
#undef LN
		struct {
			HostLinear *l;
			const char *name;
			int out, in;
		} lin[] = {{&y->q, "self_attn.q_proj", dd, dd},
		           {&y->k, "self_attn.k_proj", dd, dd},
		           {&y->v, "self_attn.v_proj", dd, dd},
		           {&y->out, "self_attn.out_proj", dd, dd},
		           {&y->fc1, "mlp.fc1", ff, dd},
		           {&y->fc2, "mlp.fc2", dd, ff}};
		for (int i = 0; i < 6; i++) {
			snprintf(w, sizeof w, "%s.%s.weight", p, lin[i].name);
			snprintf(b, sizeof b, "%s.%s.bias", p, lin[i].name);
			linear_load(lin[i].l, f, w, b, -1, lin[i].out,
			            lin[i].in, &e, d);
		}
	}
	t->post_g =
	    get(f, "vision_model.post_layernorm.weight", 0, (size_t)dd, &e, d);
	t->post_b =
	    get(f, "vision_model.post_layernorm.bias", 0, (size_t)dd, &e, d);
	if (c->use_head) {
		const char *iw = "vision_model.head.attention.in_proj_weight",
		           *ib = "vision_model.head.attention.in_proj_bias";
		t->probe =
		    get(f, "vision_model.head.probe", 0, (size_t)dd, &e, d);
		linear_load(&t->hq, f, iw, ib, 0, dd, dd, &e, d);
		linear_load(&t->hk, f, iw, ib, 1, dd, dd, &e, d);
		linear_load(&t->hv, f, iw, ib, 2, dd, dd, &e, d);
		linear_load(&t->hout, f,
		            "vision_model.head.attention.out_proj.weight",
		            "vision_model.head.attention.out_proj.bias", -1, dd,
		            dd, &e, d);
		linear_load(&t->hfc1, f, "vision_model.head.mlp.fc1.weight",
		            "vision_model.head.mlp.fc1.bias", -1, ff, dd, &e,
		            d);
		linear_load(&t->hfc2, f, "vision_model.head.mlp.fc2.weight",
		            "vision_model.head.mlp.fc2.bias", -1, dd, ff, &e,
		            d);
		t->hln_g = get(f, "vision_model.head.layernorm.weight", 0,
		               (size_t)dd, &e, d);
		t->hln_b = get(f, "vision_model.head.layernorm.bias", 0,
		               (size_t)dd, &e, d);
	}
	if (e)
		host_free(t);
	return e;
}

/* fn on every linear of t: the patch embedding's, each layer's, the
 * head's. */
static void
each_linear(HostTower *t, void (*fn)(HostLinear *))
{
	fn(&t->embed);
	for (int l = 0; t->layer && l < t->c.layers; l++) {
		HostLayer *y = &t->layer[l];
		HostLinear *lin[] = {&y->q,   &y->k,   &y->v,
		                     &y->out, &y->fc1, &y->fc2};
		for (int i = 0; i < 6; i++)
			fn(lin[i]);
	}
	HostLinear *h[] = {&t->hq,   &t->hk,   &t->hv,
	                   &t->hout, &t->hfc1, &t->hfc2};
	for (int i = 0; i < 6; i++)
		fn(h[i]);
}

/* fn on every other array of t, with its length: the position
 * embedding, the LayerNorms' parameters, the probe. */
static void
each_vector(HostTower *t, void (*fn)(float **x, size_t n))
{
	size_t d = (size_t)t->c.hidden;
	fn(&t->pos, (size_t)siglip_tokens(&t->c) * d);
	for (int l = 0; t->layer && l < t->c.layers; l++) {
		HostLayer *y = &t->layer[l];
		float **v[] = {&y->ln1_g, &y->ln1_b, &y->ln2_g, &y->ln2_b};
		for (int i = 0; i < 4; i++)
			fn(v[i], d);
	}
	float **v[] = {&t->post_g, &t->post_b, &t->probe, &t->hln_g, &t->hln_b};
	for (int i = 0; i < 5; i++)
		fn(v[i], d);
}

static void
vector_free(float **x, size_t n)
{
	(void)n;
	free(*x);
}

static void
linear_free(HostLinear *l)
{
	free(l->w);
	free(l->b);
}

void
host_free(HostTower *t)
{
	each_linear(t, linear_free);
	each_vector(t, vector_free);
	free(t->layer);
	memset(t, 0, sizeof *t);
}

static float *
dup(const float *x, size_t n)
{
	if (!x)
		return NULL;
	float *y = xmalloc(n * sizeof *y);
	memcpy(y, x, n * sizeof *y);
	return y;
}

/* *x replaced by a copy of its n floats (NULL stays NULL) */
static void
vector_dup(float **x, size_t n)
{
	*x = dup(*x, n);
}

static void
linear_dup(HostLinear *l)
{
	vector_dup(&l->w, (size_t)l->out * l->in);
	vector_dup(&l->b, (size_t)l->out);
}

void
host_copy(HostTower *dst, const HostTower *src)
{
	*dst = *src;
	dst->layer = xmalloc((size_t)src->c.layers * sizeof *dst->layer);
	memcpy(dst->layer, src->layer,
	       (size_t)src->c.layers * sizeof *dst->layer);
	each_linear(dst, linear_dup);
	each_vector(dst, vector_dup);
}

/* ---- operators ---- */

/* y [rows, out] = x W^T + b; x is not changed (an f8 input is rounded in
 * a copy). */
static void
linear(const HostTower *t, const HostLinear *l, int layer, SiglipGemm pos,
       const float *x, int rows, float *y, const HostHooks *hk)
{
	size_t n = (size_t)rows * l->in;
	if (hk && hk->input)
		hk->input(hk->ctx, layer, pos, x, rows, l->in);
	float *xq = NULL;
	if (l->f8) {
		xq = dup(x, n);
		host_f8_round_all(xq, n, l->fmt, l->scale);
		x = xq;
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, l->out,
	            l->in, 1.0f, x, l->in, l->w, l->in, 0.0f, y, l->out);
	round_f16(t, y, (size_t)rows * l->out);
	for (int r = 0; r < rows; r++)
		for (int j = 0; j < l->out; j++)
			y[(size_t)r * l->out + j] += l->b[j];
	round_f16(t, y, (size_t)rows * l->out);
	free(xq);
}

static void
layernorm(const HostTower *t, const float *x, int rows, int n, const float *g,
          const float *b, float *y)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * n;
		float *yr = y + (size_t)r * n;
		float mean = 0, var = 0;
		for (int i = 0; i < n; i++)
			mean += xr[i];
		mean /= (float)n;
		for (int i = 0; i < n; i++)
			var += (xr[i] - mean) * (xr[i] - mean);
		var /= (float)n;
		float inv = 1.0f / sqrtf(var + (float)t->c.ln_eps);
		for (int i = 0; i < n; i++)
			yr[i] = (xr[i] - mean) * inv * g[i] + b[i];
	}
	round_f16(t, y, (size_t)rows * n);
}

static void
gelu(const HostTower *t, float *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float v = x[i];
		x[i] =
		    0.5f * v *
		    (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
	}
	round_f16(t, x, n);
}

static void
add(const HostTower *t, float *y, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] += x[i];
	round_f16(t, y, n);
}

/* Multi-head attention of nq queries over nk keys for each image: q
 * [batch nq, d], k and v [batch nk, d] -> o [batch nq, d]. */
static void
attention(const HostTower *t, const float *q, const float *k, const float *v,
          int batch, int nq, int nk, float *o)
{
	int d = t->c.hidden, h = t->c.heads, dh = d / h;
	float *s = xmalloc((size_t)nq * nk * sizeof *s);
	float scale = 1.0f / sqrtf((float)dh);
	for (int b = 0; b < batch; b++)
		for (int head = 0; head < h; head++) {
			const float *qh = q + (size_t)b * nq * d + head * dh,
			            *kh = k + (size_t)b * nk * d + head * dh,
			            *vh = v + (size_t)b * nk * d + head * dh;
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq,
			            nk, dh, 1.0f, qh, d, kh, d, 0.0f, s, nk);
			round_f16(t, s, (size_t)nq * nk);
			for (int r = 0; r < nq; r++) {
				float *sr = s + (size_t)r * nk, mx = -INFINITY,
				      sum = 0;
				for (int j = 0; j < nk; j++)
					mx = fmaxf(mx, sr[j]);
				for (int j = 0; j < nk; j++)
					sum += sr[j] =
					    expf(scale * (sr[j] - mx));
				for (int j = 0; j < nk; j++)
					sr[j] /= sum;
			}
			round_f16(t, s, (size_t)nq * nk);
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
			            nq, dh, nk, 1.0f, s, nk, vh, d, 0.0f,
			            o + (size_t)b * nq * d + head * dh, d);
		}
	round_f16(t, o, (size_t)batch * nq * d);
	free(s);
}

/* ---- the tower ---- */

/* The layers of the forward pass on a batch; h is [batch N, d]. */
static void
host_embed(const HostTower *t, const float *pixels, int batch, float *h,
           const HostHooks *hk)
{
	const SiglipConfig *c = &t->c;
	int n = siglip_tokens(c), d = c->hidden;
	size_t pp = (size_t)c->channels * c->patch * c->patch;
	float *patches = xmalloc((size_t)batch * n * pp * sizeof *patches);
	siglip_patches(c, batch, pixels, patches);
	round_f16(t, patches, (size_t)batch * n * pp);
	linear(t, &t->embed, -1, SIGLIP_EMBED, patches, batch * n, h, hk);
	for (int b = 0; b < batch; b++)
		add(t, h + (size_t)b * n * d, t->pos, (size_t)n * d);
	free(patches);
}

static void
host_layer(const HostTower *t, int l, float *h, int batch, const HostHooks *hk)
{
	const HostLayer *y = &t->layer[l];
	int n = siglip_tokens(&t->c), d = t->c.hidden, f = t->c.intermediate;
	int rows = batch * n;
	size_t rd = (size_t)rows * d;
	float *a = xmalloc(rd * sizeof *a), *q = xmalloc(rd * sizeof *q),
	      *k = xmalloc(rd * sizeof *k), *v = xmalloc(rd * sizeof *v),
	      *o = xmalloc(rd * sizeof *o),
	      *m = xmalloc((size_t)rows * f * sizeof *m);
	layernorm(t, h, rows, d, y->ln1_g, y->ln1_b, a);
	linear(t, &y->q, l, SIGLIP_QKV, a, rows, q, hk);
	linear(t, &y->k, l, SIGLIP_QKV, a, rows, k, NULL);
	linear(t, &y->v, l, SIGLIP_QKV, a, rows, v, NULL);
	attention(t, q, k, v, batch, n, n, o);
	linear(t, &y->out, l, SIGLIP_OUT, o, rows, a, hk);
	add(t, h, a, rd);
	layernorm(t, h, rows, d, y->ln2_g, y->ln2_b, a);
	linear(t, &y->fc1, l, SIGLIP_FC1, a, rows, m, hk);
	gelu(t, m, (size_t)rows * f);
	linear(t, &y->fc2, l, SIGLIP_FC2, m, rows, a, hk);
	add(t, h, a, rd);
	free(a);
	free(q);
	free(k);
	free(v);
	free(o);
	free(m);
}

/* post LayerNorm and the MAP head: pooled [batch, d] */
static void
host_head(const HostTower *t, const float *h, int batch, float *pooled,
          const HostHooks *hk)
{
	int n = siglip_tokens(&t->c), d = t->c.hidden, f = t->c.intermediate;
	size_t rd = (size_t)batch * n * d;
	float *last = xmalloc(rd * sizeof *last);
	layernorm(t, h, batch * n, d, t->post_g, t->post_b, last);
	if (!t->c.use_head) { /* no pooled output: the first token's */
		for (int b = 0; b < batch; b++)
			memcpy(pooled + (size_t)b * d, last + (size_t)b * n * d,
			       (size_t)d * sizeof *pooled);
		free(last);
		return;
	}
	float *k = xmalloc(rd * sizeof *k), *v = xmalloc(rd * sizeof *v);
	float *probe = xmalloc((size_t)batch * d * sizeof *probe),
	      *q = xmalloc((size_t)batch * d * sizeof *q),
	      *o = xmalloc((size_t)batch * d * sizeof *o),
	      *a = xmalloc((size_t)batch * d * sizeof *a),
	      *ln = xmalloc((size_t)batch * d * sizeof *ln),
	      *m = xmalloc((size_t)batch * f * sizeof *m);
	for (int b = 0; b < batch; b++)
		memcpy(probe + (size_t)b * d, t->probe,
		       (size_t)d * sizeof *probe);
	round_f16(t, probe, (size_t)batch * d);
	linear(t, &t->hq, -1, SIGLIP_HEAD_Q, probe, batch, q, hk);
	linear(t, &t->hk, -1, SIGLIP_HEAD_KV, last, batch * n, k, hk);
	linear(t, &t->hv, -1, SIGLIP_HEAD_KV, last, batch * n, v, NULL);
	attention(t, q, k, v, batch, 1, n, o);
	linear(t, &t->hout, -1, SIGLIP_HEAD_OUT, o, batch, a, hk);
	layernorm(t, a, batch, d, t->hln_g, t->hln_b, ln);
	linear(t, &t->hfc1, -1, SIGLIP_HEAD_FC1, ln, batch, m, hk);
	gelu(t, m, (size_t)batch * f);
	linear(t, &t->hfc2, -1, SIGLIP_HEAD_FC2, m, batch, pooled, hk);
	add(t, pooled, a, (size_t)batch * d);
	free(last);
	free(k);
	free(v);
	free(probe);
	free(q);
	free(o);
	free(a);
	free(ln);
	free(m);
}

/* Layers l.. and the head on h [batch N, d] (overwritten): pooled
 * [batch, d] (malloc'd). */
static float *
run_from(const HostTower *t, float *h, int l, int batch, const HostHooks *hk)
{
	float *pooled = xmalloc((size_t)batch * t->c.hidden * sizeof *pooled);
	for (; l < t->c.layers; l++)
		host_layer(t, l, h, batch, hk);
	host_head(t, h, batch, pooled, hk);
	return pooled;
}

static size_t
stream_size(const HostTower *t, int batch)
{
	return (size_t)batch * siglip_tokens(&t->c) * t->c.hidden;
}

float *
host_forward(const HostTower *t, const float *pixels, int batch,
             const HostHooks *hk)
{
	float *h = xmalloc(stream_size(t, batch) * sizeof *h);
	host_embed(t, pixels, batch, h, hk);
	float *pooled = run_from(t, h, 0, batch, hk);
	free(h);
	return pooled;
}

float *
host_states(const HostTower *t, const float *pixels, int batch)
{
	size_t rd = stream_size(t, batch);
	float *s = xmalloc((size_t)(t->c.layers + 1) * rd * sizeof *s);
	host_embed(t, pixels, batch, s, NULL);
	for (int l = 0; l < t->c.layers; l++) {
		memcpy(s + (l + 1) * rd, s + l * rd, rd * sizeof *s);
		host_layer(t, l, s + (l + 1) * rd, batch, NULL);
	}
	return s;
}

float *
host_forward_from(const HostTower *t, const float *h, int l, int batch)
{
	size_t rd = stream_size(t, batch);
	float *x = xmalloc(rd * sizeof *x);
	memcpy(x, h, rd * sizeof *x);
	float *pooled = run_from(t, x, l, batch, NULL);
	free(x);
	return pooled;
}

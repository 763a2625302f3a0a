/*
 * siglip_fp8.c - the scales of an f8 tower (siglip_graph.h): weights get
 * the smallest power of two that covers their largest |w|; activations one
 * scale per GEMM position, by default from bounds that no input can exceed
 * (computed from the checkpoint, so that the device's saturating cast
 * never clips), or as the user sets them (`--f8-scales`, for scales
 * measured by `tools/siglip_ref.py calibrate`).
 *
 * Why bounds and not typical ranges: F143 keeps its 4 significant bits
 * over 2^15 below its largest value (240 down to the smallest normal
 * 2^-7), so a scale a few binades too large costs only the smallest
 * values, while one too small saturates the largest, which carry most of
 * a dot product.
 */
#include "siglip_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/fp.h"

const char *const siglip_gemm_names[SIGLIP_GEMMS] = {
    [SIGLIP_QKV] = "qkv",
    [SIGLIP_OUT] = "out",
    [SIGLIP_FC1] = "fc1",
    [SIGLIP_FC2] = "fc2",
    [SIGLIP_HEAD_Q] = "head.q",
    [SIGLIP_HEAD_KV] = "head.kv",
    [SIGLIP_HEAD_OUT] = "head.out",
    [SIGLIP_HEAD_FC1] = "head.fc1",
    [SIGLIP_HEAD_FC2] = "head.fc2",
    [SIGLIP_Q] = "q",
    [SIGLIP_K] = "k",
    [SIGLIP_EMBED] = "embed"};

/* A checkpoint tensor as floats (malloc'd); `rows` of `cols` from row
 * `row0` (the head's in_proj parts). */
static float *
tensor(const StFile *f, const char *name, size_t row0, size_t rows, size_t cols,
       Diag *d)
{
	const StTensor *s = st_find(f, name);
	if (!s || st_elements(s) < (row0 + rows) * cols) {
		diag_set(d, IPU_EINVAL, NULL, 0, 0,
		         "the checkpoint has no %s of at least %zu elements",
		         name, (row0 + rows) * cols);
		return NULL;
	}
	float *all = xmalloc(st_elements(s) * sizeof *all);
	if (st_to_f32(f, s, all, d)) {
		free(all);
		return NULL;
	}
	memmove(all, all + row0 * cols, rows * cols * sizeof *all);
	return all;
}

/* A LayerNorm's output bounds: the largest |y_i| and |y|_2. */
typedef struct {
	double max, l2;
} Bound;

/* `plain`: the norm's (gamma 1, beta 0): |z_i| <= sqrt(n - 1). */
static int
ln_bound(const StFile *f, const char *ln, int n, int plain, Bound *b, Diag *d)
{
	if (plain) {
		*b = (Bound){sqrt(n - 1.0), sqrt((double)n)};
		return IPU_OK;
	}
	char name[160];
	snprintf(name, sizeof name, "%s.weight", ln);
	float *g = tensor(f, name, 0, 1, (size_t)n, d);
	snprintf(name, sizeof name, "%s.bias", ln);
	float *be = g ? tensor(f, name, 0, 1, (size_t)n, d) : NULL;
	if (!be) {
		free(g);
		return IPU_EINVAL;
	}
	/* z = (x - mean) / sd has sum z_i^2 <= n, so |z_i| <= sqrt(n - 1)
	 * (the rest of the sum is at least z_i^2 / (n - 1)) and |z|_2 <=
	 * sqrt(n); eps only shrinks z */
	double gmax = 0, b2 = 0;
	b->max = 0;
	for (int i = 0; i < n; i++) {
		double y = fabs(g[i]) * sqrt(n - 1.0) + fabs(be[i]);
		b->max = fmax(b->max, y);
		gmax = fmax(gmax, fabs(g[i]));
		b2 += (double)be[i] * be[i];
	}
	b->l2 = gmax * sqrt((double)n) + sqrt(b2);
	free(g);
	free(be);
	return IPU_OK;
}

/* max_j |W_j|_2 x_l2 + |c_j| for W's rows row0 .. row0 + out - 1 */
static int
linear_bound(const StFile *f, const char *w, const char *bias, size_t row0,
             int out, int in, double x_l2, double *max, Diag *d)
{
	float *wt = tensor(f, w, row0, (size_t)out, (size_t)in, d);
	float *c = wt ? tensor(f, bias, row0, (size_t)out, 1, d) : NULL;
	if (!c) {
		free(wt);
		return IPU_EINVAL;
	}
	*max = 0;
	for (int j = 0; j < out; j++) {
		double s = 0;
		for (int i = 0; i < in; i++) {
			double v = wt[(size_t)j * in + i];
			s += v * v;
		}
		*max = fmax(*max, sqrt(s) * x_l2 + fabs(c[j]));
	}
	free(wt);
	free(c);
	return IPU_OK;
}

/* GELU(x) >= -0.17 (its minimum, near x = -0.75) and <= max(x, 0) */
static double
gelu_bound(double x)
{
	return fmax(x, 0.17);
}

/* The bounds of one encoder layer's (or the head's) GEMM inputs into
 * max[]: q/k/v (or k/v) from LayerNorm `ln`, the out projection's from the
 * v rows of `vw`/`vb` (from row `v0`), fc1 from LayerNorm `ln_mlp`, fc2
 * from fc1 of `mlp`; with `attn` (an encoder layer's self_attn) QK^T's
 * q and k into qk[0], qk[1]. */
static int
block_bounds(const SiglipConfig *c, const StFile *f, int fold, const char *ln,
             const char *vw, const char *vb, size_t v0, const char *ln_mlp,
             const char *mlp, const char *attn, double *qkv, double *out,
             double *fc1, double *fc2, double *qk, Diag *d)
{
	/* q, k, v and fc1 read the affine LayerNorm's y even when the
	 * casts read z: their bounds are the unfolded model's */
	Bound fa, fm;
	int n = c->hidden;
	Bound a, m;
	double v, h;
	char w[160], b[160];
	int e = ln_bound(f, ln, n, 0, &a, d);
	if (!e)
		e = ln_bound(f, ln, n, fold, &fa, d);
	for (int i = 0; attn && i < 2 && !e; i++) {
		double y;
		snprintf(w, sizeof w, "%s.%c_proj.weight", attn, "qk"[i]);
		snprintf(b, sizeof b, "%s.%c_proj.bias", attn, "qk"[i]);
		e = linear_bound(f, w, b, 0, n, n, a.l2, &y, d);
		qk[i] = fmax(qk[i], y);
	}
	snprintf(w, sizeof w, "%s.fc1.weight", mlp);
	snprintf(b, sizeof b, "%s.fc1.bias", mlp);
	if (!e)
		e = linear_bound(f, vw, vb, v0, n, n, a.l2, &v, d);
	if (!e)
		e = ln_bound(f, ln_mlp, n, 0, &m, d);
	if (!e)
		e = ln_bound(f, ln_mlp, n, fold, &fm, d);
	if (!e)
		e = linear_bound(f, w, b, 0, c->intermediate, n, m.l2, &h, d);
	if (e)
		return e;
	*qkv = fmax(*qkv, fa.max);
	*out = fmax(*out, v); /* softmax rows sum to 1 */
	*fc1 = fmax(*fc1, fm.max);
	*fc2 = fmax(*fc2, gelu_bound(h));
	return IPU_OK;
}

int
siglip_f8_bounds(const SiglipConfig *c, const StFile *f, int fold,
                 int scale[SIGLIP_GEMMS], Diag *d)
{
	double max[SIGLIP_GEMMS] = {0};
	int e = IPU_OK;
	for (int l = 0; l < c->layers && !e; l++) {
		char p[64], ln1[96], ln2[96], at[96], vw[128], vb[128], mlp[96];
		snprintf(p, sizeof p, "vision_model.encoder.layers.%d", l);
		snprintf(ln1, sizeof ln1, "%s.layer_norm1", p);
		snprintf(ln2, sizeof ln2, "%s.layer_norm2", p);
		snprintf(at, sizeof at, "%s.self_attn", p);
		snprintf(vw, sizeof vw, "%s.v_proj.weight", at);
		snprintf(vb, sizeof vb, "%s.v_proj.bias", at);
		snprintf(mlp, sizeof mlp, "%s.mlp", p);
		e = block_bounds(c, f, fold, ln1, vw, vb, 0, ln2, mlp, at,
		                 &max[SIGLIP_QKV], &max[SIGLIP_OUT],
		                 &max[SIGLIP_FC1], &max[SIGLIP_FC2],
		                 &max[SIGLIP_Q], d);
	}
	if (!e && c->use_head) {
		const char *hw = "vision_model.head.attention";
		char w[128], b[128];
		snprintf(w, sizeof w, "%s.in_proj_weight", hw);
		snprintf(b, sizeof b, "%s.in_proj_bias", hw);
		e = block_bounds(
		    c, f, fold, "vision_model.post_layernorm", w, b,
		    2 * (size_t)c->hidden, "vision_model.head.layernorm",
		    "vision_model.head.mlp", NULL, &max[SIGLIP_HEAD_KV],
		    &max[SIGLIP_HEAD_OUT], &max[SIGLIP_HEAD_FC1],
		    &max[SIGLIP_HEAD_FC2], NULL, d);
		float *probe = e ? NULL
		                 : tensor(f, "vision_model.head.probe", 0, 1,
		                          (size_t)c->hidden, d);
		if (!e && !probe)
			e = IPU_EINVAL;
		for (int i = 0; probe && i < c->hidden; i++)
			max[SIGLIP_HEAD_Q] =
			    fmax(max[SIGLIP_HEAD_Q], fabs(probe[i]));
		free(probe);
	}
	for (int i = 0; i < SIGLIP_GEMMS; i++)
		scale[i] = fp_f8_f143_scale(max[i]);
	return e;
}

int
siglip_f8_parse_scales(const char *text, int scale[SIGLIP_GEMMS],
                       int set[SIGLIP_GEMMS], Diag *d)
{
	const char *s = text;
	while (*s) {
		const char *eq = strchr(s, '='), *end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		int i = 0;
		while (i < SIGLIP_GEMMS && eq && eq < end &&
		       (strlen(siglip_gemm_names[i]) != (size_t)(eq - s) ||
		        strncmp(siglip_gemm_names[i], s, (size_t)(eq - s))))
			i++;
		char *num_end = NULL;
		long v = eq && eq < end ? strtol(eq + 1, &num_end, 10) : 0;
		if (i >= SIGLIP_EMBED || !eq || eq > end)
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "f8 scales '%s': '%.*s' is not POSITION=N; "
			    "positions: qkv, out, fc1, fc2, head.q, head.kv, "
			    "head.out, head.fc1, head.fc2, q, k",
			    text, (int)(end - s), s);
		if (num_end != end || num_end == eq + 1 ||
		    v < GRAPH_F8_SCALE_MIN || v > GRAPH_F8_SCALE_MAX)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "f8 scales '%s': %s wants an integer "
			                "power of two in %d..%d",
			                text, siglip_gemm_names[i],
			                GRAPH_F8_SCALE_MIN, GRAPH_F8_SCALE_MAX);
		if (set[i])
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "f8 scales '%s': %s is given twice",
			                text, siglip_gemm_names[i]);
		scale[i] = (int)v;
		set[i] = 1;
		s = *end ? end + 1 : end;
	}
	return IPU_OK;
}

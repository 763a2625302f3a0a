/*
 * siglip_graph.c - the SigLIP vision tower as a graph (the text form of
 * docs/graph.md), op for op as model.md section 1 describes it.
 *
 * Weights keep their checkpoint names, so that the runner finds each one
 * in the safetensors file; three kinds are derived from a checkpoint
 * tensor on the host (siglip_weight_source says how):
 *   - the patch embedding's conv weight [d, 3, P, P] is the same bytes as
 *     the matrix [d, 3 P P] the graph declares;
 *   - the position embedding and the head's probe are repeated for every
 *     image of the batch (the graph has no broadcast along the batch);
 *   - the head's in_proj_weight [3d, d] and in_proj_bias [3d] are split
 *     into q, k and v parts (".q", ".k", ".v");
 *   - each encoder layer's q_proj, k_proj and v_proj are one fused
 *     qkv_proj [3d, d] (and bias [3d]): one GEMM of 3d columns, whose
 *     output is split into heads and sliced into q, k and v;
 *   - a weight with per-K-block scales is one graph weight per block of
 *     input columns (".kb<b>") and one scale vector per block (".ks<b>",
 *     a column of the checkpoint's "<weight>_kscale").
 * The input is the batch's patches [B N, 3 P P], each patch flattened
 * channel first, then row, then column, tokens row-major over the grid
 * (siglip_patches makes them from pixel values).
 */
#include "siglip_graph.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	char *text;
	size_t len, cap;
	/* the layer of a group after the first: its weights are declared */
	int declared;
} Text;

static void
put(Text *t, const char *fmt, ...)
{
	va_list ap;
	if (t->declared && !strncmp(fmt, "weight ", 7))
		return;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(t->text + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		t->cap = 2 * t->cap + (size_t)n + 1;
		t->text = xrealloc(t->text, t->cap);
	}
}

/* The types of a tower: `dt` for everything but the dense GEMMs' operands. */
typedef struct {
	const SiglipPrecision *p;
	const char *dt;
	int f8;
	char
	    cast[128]; /* the last activation cast emitted (k and v share it) */
} Types;

/* Dense GEMM weight `name`'s type. */
static SiglipWType
wtype(const Types *ty, const char *name)
{
	SiglipWType t = {.dtype = DT_F16};
	if (!ty->f8)
		return t;
	if (ty->p->weight_type) {
		ty->p->weight_type(ty->p->ctx, name, &t);
		return t;
	}
	if (strstr(name, ".patch_embedding."))
		return t;
	t.dtype = DT_F8_F143;
	t.scale =
	    ty->p->weight_scale ? ty->p->weight_scale(ty->p->ctx, name) : 0;
	return t;
}

/* The name a dense GEMM with weight `w` reads for activation x at position
 * `pos`: x, or if the weight is f8, x cast on the device with the
 * position's format and scale (once: q, k and v share it). */
static const char *
gemm_input(Text *t, Types *ty, SiglipGemm pos, const char *x, const char *w,
           char *buf, size_t n)
{
	if (!dtype_is_f8(wtype(ty, w).dtype))
		return x;
	snprintf(buf, n, "%s.f8", x);
	if (strcmp(ty->cast, buf)) {
		put(t, "%s = cast %s %s*2^%d\n", buf, x,
		    ty->p->act_f152[pos] ? "f8_f152" : "f8_f143",
		    ty->p->act_scale[pos]);
		snprintf(ty->cast, sizeof ty->cast, "%s", buf);
	}
	return buf;
}

/* The element type of dense GEMM weight `name`. */
static const char *
dense_type(const Types *ty, const char *name, char buf[32])
{
	SiglipWType w = wtype(ty, name);
	if (!dtype_is_f8(w.dtype))
		return ty->dt;
	snprintf(buf, 32, "%s*2^%d", dtype_name(w.dtype), w.scale);
	return buf;
}

/* The graph name of dense weight w's channel scales: "<w>_scale", or for
 * a part of the head's in_proj_weight ("...in_proj_weight.q")
 * "...in_proj_weight_scale.q" (siglip_weight_source: rows of the
 * checkpoint's "...in_proj_weight_scale"). */
static void
scale_name(const char *w, char *out, size_t n)
{
	size_t len = strlen(w);
	if (strstr(w, ".in_proj_") && len > 2 && w[len - 2] == '.')
		snprintf(out, n, "%.*s_scale%s", (int)(len - 2), w,
		         w + len - 2);
	else
		snprintf(out, n, "%s_scale", w);
}

/* "<y>.mm" = x w^T for dense weight `w` [out, in] and x [rows, in] (the
 * GEMM's input, cast if w is f8): one matmul, or with per-K-block scales
 * one per block of x's columns (an exchange slices them out of the cast
 * input), each product multiplied by its block's scales, summed. */
static void
product(Text *t, const Types *ty, const char *y, const char *x, const char *w,
        int rows, int in, int out)
{
	SiglipWType wt = wtype(ty, w);
	char type[32];
	if (!wt.k_block) {
		put(t, "weight %s %s [%d, %d]\n", w, dense_type(ty, w, type),
		    out, in);
		put(t, "%s.mm = matmul %s %s transpose_b=1\n", y, x, w);
		return;
	}
	int nb = (in + wt.k_block - 1) / wt.k_block;
	for (int b = 0; b < nb; b++) {
		int c0 = b * wt.k_block,
		    c1 = c0 + wt.k_block < in ? c0 + wt.k_block : in;
		put(t, "weight %s.kb%d %s [%d, %d]\n", w, b,
		    dense_type(ty, w, type), out, c1 - c0);
		put(t, "weight %s.ks%d %s [%d]\n", w, b, ty->dt, out);
		put(t, "%s.x%d = slice %s [0, %d] [%d, %d]\n", y, b, x, c0,
		    rows, c1);
		put(t, "%s.p%d = matmul %s.x%d %s.kb%d transpose_b=1\n", y, b,
		    y, b, w, b);
		/* the running sum: <y>.a<b>, the last one <y>.mm */
		char sum[96];
		if (b == nb - 1)
			snprintf(sum, sizeof sum, "%s.mm", y);
		else
			snprintf(sum, sizeof sum, "%s.a%d", y, b);
		if (!b) {
			put(t, "%s = mul %s.p0 %s.ks0\n", sum, y, w);
			continue;
		}
		put(t, "%s.s%d = mul %s.p%d %s.ks%d\n", y, b, y, b, w, b);
		put(t, "%s = add %s.a%d %s.s%d\n", sum, y, b - 1, y, b);
	}
}

/* y = mm (x channel scales) + b for dense weight `w` ([out, in]) of bias
 * `bias`, the product `mm` already defined. */
static void
bias_add(Text *t, const Types *ty, const char *y, const char *mm, const char *w,
         const char *bias, int out)
{
	if (wtype(ty, w).channel) {
		char sc[192];
		scale_name(w, sc, sizeof sc);
		put(t, "weight %s %s [%d]\n", sc, ty->dt, out);
		put(t, "%s.sc = mul %s %s\n", y, mm, sc);
		put(t, "%s = add %s.sc %s\n", y, y, bias);
	} else
		put(t, "%s = add %s %s\n", y, mm, bias);
}

/* y = x W^T + b for a checkpoint Linear named `w` (weight [out, in]), x
 * [rows, in] at GEMM position pos. */
static void
linear(Text *t, Types *ty, SiglipGemm pos, const char *y, const char *x,
       const char *w, int rows, int in, int out)
{
	char name[160], bias[168], buf[128];
	snprintf(name, sizeof name, "%s.weight", w);
	snprintf(bias, sizeof bias, "%s.bias", w);
	x = gemm_input(t, ty, pos, x, name, buf, sizeof buf);
	product(t, ty, y, x, name, rows, in, out);
	put(t, "weight %s %s [%d]\n", bias, ty->dt, out);
	char mm[144];
	snprintf(mm, sizeof mm, "%s.mm", y);
	bias_add(t, ty, y, mm, name, bias, out);
}

/* y = LayerNorm `w` of x; `norm`: without its gamma and beta (a norm op:
 * the host folded them into the one linear layer that reads y,
 * siglip_fold_source) */
static void
layernorm(Text *t, const char *dt, const char *y, const char *x, const char *w,
          int d, double eps, int norm)
{
	if (norm) {
		put(t, "%s = norm %s eps=%.17g\n", y, x, eps);
		return;
	}
	put(t, "weight %s.weight %s [%d]\n", w, dt, d);
	put(t, "weight %s.bias %s [%d]\n", w, dt, d);
	put(t, "%s = layernorm %s %s.weight %s.bias eps=%.17g\n", y, x, w, w,
	    eps);
}

int
siglip_folds(const SiglipPrecision *p)
{
	return dtype_is_f8(p->dtype) && !p->weight_type &&
	       (p->fold_ln > 0 || (!p->fold_ln && SIGLIP_FOLD_DEFAULT));
}

int
siglip_fold_source(const char *gname, char *ln, size_t nln, char *w, size_t nw)
{
	static const char layer[] = "vision_model.encoder.layers.";
	static const struct {
		const char *weight, *bias, *ln; /* ln "": the layer's */
	} rows[] = {
	    {"self_attn.qkv_proj.weight", "self_attn.qkv_proj.bias",
	     "layer_norm1"},
	    {"mlp.fc1.weight", "mlp.fc1.bias", "layer_norm2"},
	    {"vision_model.head.attention.in_proj_weight.k",
	     "vision_model.head.attention.in_proj_bias.k",
	     "vision_model.post_layernorm"},
	    {"vision_model.head.attention.in_proj_weight.v",
	     "vision_model.head.attention.in_proj_bias.v",
	     "vision_model.post_layernorm"},
	    {"vision_model.head.mlp.fc1.weight",
	     "vision_model.head.mlp.fc1.bias", "vision_model.head.layernorm"},
	};
	/* an encoder layer's: after "<layer><l>." */
	const char *rest = gname;
	int l = -1, at = 0;
	if (!strncmp(gname, layer, sizeof layer - 1) &&
	    sscanf(gname + sizeof layer - 1, "%d.%n", &l, &at) == 1 && at)
		rest = gname + sizeof layer - 1 + at;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int enc = i < 2;
		if (enc != (rest != gname))
			continue;
		int kind = !strcmp(rest, rows[i].weight) ? SIGLIP_FOLD_WEIGHT
		           : !strcmp(rest, rows[i].bias) ? SIGLIP_FOLD_BIAS
		                                         : 0;
		if (!kind)
			continue;
		if (enc) {
			snprintf(ln, nln, "%s%d.%s", layer, l, rows[i].ln);
			snprintf(w, nw, "%s%d.%s", layer, l, rows[i].weight);
		} else {
			snprintf(ln, nln, "%s", rows[i].ln);
			snprintf(w, nw, "%s", rows[i].weight);
		}
		return kind;
	}
	return 0;
}

void
siglip_fold_weight(float *w, size_t rows, size_t cols, const float *gamma)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < cols; c++)
			w[r * cols + c] =
			    (float)((double)w[r * cols + c] * gamma[c]);
}

void
siglip_fold_bias(float *b, const float *w, size_t rows, size_t cols,
                 const float *beta)
{
	for (size_t r = 0; r < rows; r++) {
		double s = b[r];
		for (size_t c = 0; c < cols; c++)
			s += (double)w[r * cols + c] * beta[c];
		b[r] = (float)s;
	}
}

/* [B rows, H heads x Dh] -> [B, H, rows, Dh] */
static void
split_heads(Text *t, const char *y, const char *x, int b, int rows, int h,
            int dh)
{
	put(t, "%s.r = reshape %s [%d, %d, %d, %d]\n", y, x, b, rows, h, dh);
	put(t, "%s = transpose %s.r [0, 2, 1, 3]\n", y, y);
}

/* The scale of the attention's probabilities P as F143 in an f8 tower's
 * PV product: P <= 1 is 128 at most, under F143's 240, and P's typical
 * 1 / tokens (So400m 1/729, 2^-9.5) 2^-2.5, far above its smallest
 * normal 2^-7. */
enum { SIGLIP_P_SCALE = -7 };

/* y.o = softmax(q k^T / sqrt(dh)) v over heads already split ([b, h,
 * rows, dh]); with `scale` (the f8 tower's act_scale), both products in
 * F143: q and k cast at their positions' scales, P at SIGLIP_P_SCALE, V
 * at out_proj's input scale (attention outputs are convex combinations
 * of V's rows, so that bound holds V) */
static void
scores_times_v(Text *t, const char *y, const char *qh, const char *kh,
               const char *vh, int dh, const int *scale)
{
	if (scale) {
		put(t, "%s.q8 = cast %s f8_f143*2^%d\n", y, qh,
		    scale[SIGLIP_Q]);
		put(t, "%s.k8 = cast %s f8_f143*2^%d\n", y, kh,
		    scale[SIGLIP_K]);
		put(t, "%s.s = matmul %s.q8 %s.k8 transpose_b=1\n", y, y, y);
	} else
		put(t, "%s.s = matmul %s %s transpose_b=1\n", y, qh, kh);
	put(t, "%s.p = softmax %s.s scale=%.17g\n", y, y,
	    1.0 / sqrt((double)dh));
	if (scale) {
		put(t, "%s.p8 = cast %s.p f8_f143*2^%d\n", y, y,
		    SIGLIP_P_SCALE);
		put(t, "%s.v8 = cast %s f8_f143*2^%d\n", y, vh,
		    scale[SIGLIP_OUT]);
		put(t, "%s.o = matmul %s.p8 %s.v8\n", y, y, y);
	} else
		put(t, "%s.o = matmul %s.p %s\n", y, y, vh);
}

/* y.o [b, h, qrows, dh] back to y [b qrows, d]; with `cast` (the f8
 * tower's out_proj input scale) y.f8, the F143 cast out_proj reads, made
 * before the heads are merged: y.o cast where PV's reduction left it and
 * the transpose and reshape moving f8 (one exchange of half the bytes
 * into out_proj's A instead of the reshape's and then A's; the same
 * bits, a cast commuting with moving elements; docs/bench-siglip.md
 * "b1cast") */
static void
merge_heads(Text *t, const char *y, int b, int qrows, int h, int dh,
            const int *cast)
{
	if (cast) {
		put(t, "%s.o8 = cast %s.o f8_f143*2^%d\n", y, y, *cast);
		put(t, "%s.t = transpose %s.o8 [0, 2, 1, 3]\n", y, y);
		put(t, "%s.f8 = reshape %s.t [%d, %d]\n", y, y, b * qrows,
		    h * dh);
		return;
	}
	put(t, "%s.t = transpose %s.o [0, 2, 1, 3]\n", y, y);
	put(t, "%s = reshape %s.t [%d, %d]\n", y, y, b * qrows, h * dh);
}

static void
attend_heads(Text *t, const char *y, const char *qh, const char *kh,
             const char *vh, int b, int qrows, int h, int dh)
{
	scores_times_v(t, y, qh, kh, vh, dh, NULL);
	merge_heads(t, y, b, qrows, h, dh, NULL);
}

/* attend_heads on q, k, v of [b rows, d] */
static void
attend(Text *t, const char *y, const char *q, const char *k, const char *v,
       int b, int qrows, int krows, int h, int dh)
{
	char qh[64], kh[64], vh[64];
	snprintf(qh, sizeof qh, "%s.qh", y);
	snprintf(kh, sizeof kh, "%s.kh", y);
	snprintf(vh, sizeof vh, "%s.vh", y);
	split_heads(t, qh, q, b, qrows, h, dh);
	split_heads(t, kh, k, b, krows, h, dh);
	split_heads(t, vh, v, b, krows, h, dh);
	attend_heads(t, y, qh, kh, vh, b, qrows, h, dh);
}

/* An encoder layer's attention on qkv.t [3, b, h, n, dh], its images in
 * rounds of at most `pairs` (image, head) pairs (at least one image a
 * round): each round's scores and probabilities live only through its
 * own steps, so a large batch holds one round's (docs/bench-siglip.md,
 * "Batch 8 of So400m f8"); the rounds' outputs joined along the batch. */
static void
attend_rounds(Text *t, const char *y, const char *qkv, int b, int n, int h,
              int dh, int pairs, const int *scale)
{
	int per = pairs / h > 1 ? pairs / h : 1;
	char prev[112] = "";
	for (int b0 = 0, r = 0; b0 < b; b0 += per, r++) {
		int bc = b - b0 < per ? b - b0 : per;
		char yr[96], hd[3][112];
		if (per >= b)
			snprintf(yr, sizeof yr, "%s", y);
		else
			snprintf(yr, sizeof yr, "%s.r%d", y, r);
		for (int i = 0; i < 3; i++) {
			snprintf(hd[i], sizeof hd[i], "%s.%ch", yr, "qkv"[i]);
			put(t,
			    "%s.s = slice %s.t [%d, %d, 0, 0, 0] [%d, %d, %d, "
			    "%d, %d]\n",
			    hd[i], qkv, i, b0, i + 1, b0 + bc, h, n, dh);
			put(t, "%s = reshape %s.s [%d, %d, %d, %d]\n", hd[i],
			    hd[i], bc, h, n, dh);
		}
		scores_times_v(t, yr, hd[0], hd[1], hd[2], dh, scale);
		if (per >= b)
			break;
		char joined[112];
		if (!r)
			snprintf(joined, sizeof joined, "%s.o", yr);
		else {
			if (b0 + bc >= b) /* the last join is y.o */
				snprintf(joined, sizeof joined, "%s.o", y);
			else
				snprintf(joined, sizeof joined, "%s.j%d", y, r);
			put(t, "%s = concat %s %s.o axis=0\n", joined, prev,
			    yr);
		}
		snprintf(prev, sizeof prev, "%s", joined);
	}
	merge_heads(t, y, b, n, h, dh, scale ? &scale[SIGLIP_OUT] : NULL);
}

/* fc2(gelu(fc1(x))) with the checkpoint's mlp names under `w`, x [rows,
 * d]; `pos` the fc1 position (fc2's follows it) */
static void
mlp(Text *t, Types *ty, SiglipGemm pos, const char *y, const char *x,
    const char *w, int rows, int d, int f)
{
	char a[96], g[96], n1[96], n2[96];
	snprintf(a, sizeof a, "%s.fc1", y);
	snprintf(g, sizeof g, "%s.gelu", y);
	snprintf(n1, sizeof n1, "%s.fc1", w);
	snprintf(n2, sizeof n2, "%s.fc2", w);
	linear(t, ty, pos, a, x, n1, rows, d, f);
	put(t, "%s = gelu %s\n", g, a);
	linear(t, ty, (SiglipGemm)(pos + 1), y, g, n2, rows, f, d);
}

char *
siglip_graph_text(const SiglipConfig *c, int batch, const SiglipPrecision *p)
{
	Text t = {.text = xmalloc(1 << 14), .cap = 1 << 14};
	Types ty = {.p = p, .f8 = dtype_is_f8(p->dtype)};
	ty.dt = dtype_name(ty.f8 ? DT_F16 : p->dtype);
	const char *dt = ty.dt;
	int fold = siglip_folds(p);
	int d = c->hidden, f = c->intermediate, h = c->heads, dh = d / h;
	int n = siglip_tokens(c), pp = c->channels * c->patch * c->patch;
	int rows = batch * n, groups = p->groups > 1 ? p->groups : 1;
	int gb = batch / groups, grows = gb * n; /* a group's */
	put(&t,
	    "# SigLIP vision tower: %d layers, d %d, f %d, %d heads, "
	    "%d tokens, batch %d, %s\n",
	    c->layers, d, f, h, n, batch,
	    ty.f8 ? "f8 dense GEMMs, f16 elsewhere" : dt);
	put(&t, "input patches %s [%d, %d]\n", dt, rows, pp);
	/* the patch embedding: the conv as a matmul of the patches */
	const char *pw = "vision_model.embeddings.patch_embedding.weight",
	           *pb = "vision_model.embeddings.patch_embedding.bias";
	char px[128];
	const char *xp =
	    gemm_input(&t, &ty, SIGLIP_EMBED, "patches", pw, px, sizeof px);
	product(&t, &ty, "emb", xp, pw, rows, pp, d);
	put(&t, "weight %s %s [%d]\n", pb, dt, d);
	put(&t,
	    "weight vision_model.embeddings.position_embedding.weight "
	    "%s [%d, %d]\n",
	    dt, rows, d);
	bias_add(&t, &ty, "emb.b", "emb.mm", pw, pb, d);
	put(&t, "h0 = add emb.b "
	        "vision_model.embeddings.position_embedding.weight\n");
	char x[64], w[96], y[64];
	snprintf(x, sizeof x, "h0");
	/* groups: group k's rows of h0 ("h0g<k>") through every layer
	 * ("l<l>g<k>.", "h<l>g<k>"), a layer's groups one after another */
	char gs[16] = "";
	for (int k = 0; groups > 1 && k < groups; k++)
		put(&t, "h0g%d = slice h0 [%d, 0] [%d, %d]\n", k, k * grows,
		    (k + 1) * grows, d);
	int pairs = p->round_pairs ? p->round_pairs : SIGLIP_ROUND_PAIRS;
	for (int i = 0; i < c->layers * groups; i++) {
		int l = i / groups;
		char p[64], qkv[64], a[64], o[64], r[64], m[64];
		if (groups > 1) {
			snprintf(gs, sizeof gs, "g%d", i % groups);
			snprintf(x, sizeof x, "h%d%s", l, gs);
		}
		t.declared = i % groups > 0;
		snprintf(p, sizeof p, "vision_model.encoder.layers.%d", l);
		snprintf(y, sizeof y, "l%d%s.ln1", l, gs);
		snprintf(w, sizeof w, "%s.layer_norm1", p);
		layernorm(&t, dt, y, x, w, d, c->ln_eps, fold);
		/* q, k, v: one GEMM, its [rows, 3 d] as [3, B, H, n, dh]
		 * (a permutation of whole rows), each a slice of it */
		snprintf(qkv, sizeof qkv, "l%d%s.qkv", l, gs);
		snprintf(w, sizeof w, "%s.self_attn.qkv_proj", p);
		linear(&t, &ty, SIGLIP_QKV, qkv, y, w, grows, d, 3 * d);
		put(&t, "%s.r = reshape %s [%d, %d, 3, %d, %d]\n", qkv, qkv, gb,
		    n, h, dh);
		put(&t, "%s.t = transpose %s.r [2, 0, 3, 1, 4]\n", qkv, qkv);
		snprintf(a, sizeof a, "l%d%s.attn", l, gs);
		/* QK^T and PV in f8 in the f8 tower (not a quantized
		 * checkpoint's, whose policy names its own formats) */
		const int *as =
		    ty.f8 && !ty.p->weight_type ? ty.p->act_scale : NULL;
		attend_rounds(&t, a, qkv, gb, n, h, dh, pairs, as);
		/* with `as`, attend_rounds made out_proj's input cast,
		 * a.f8 (merge_heads): gemm_input reads it */
		if (as)
			snprintf(ty.cast, sizeof ty.cast, "%s.f8", a);
		snprintf(o, sizeof o, "l%d%s.out", l, gs);
		snprintf(w, sizeof w, "%s.self_attn.out_proj", p);
		linear(&t, &ty, SIGLIP_OUT, o, a, w, grows, d, d);
		snprintf(r, sizeof r, "l%d%s.res1", l, gs);
		put(&t, "%s = add %s %s\n", r, x, o);
		snprintf(y, sizeof y, "l%d%s.ln2", l, gs);
		snprintf(w, sizeof w, "%s.layer_norm2", p);
		layernorm(&t, dt, y, r, w, d, c->ln_eps, fold);
		snprintf(m, sizeof m, "l%d%s.mlp", l, gs);
		snprintf(w, sizeof w, "%s.mlp", p);
		mlp(&t, &ty, SIGLIP_FC1, m, y, w, grows, d, f);
		snprintf(x, sizeof x, "h%d%s", l + 1, gs);
		put(&t, "%s = add %s %s\n", x, r, m);
	}
	t.declared = 0;
	/* every layer is the same ops on its own weights: the compiler runs
	 * the first as a loop body (docs/graph.md "Repeat") */
	if (c->layers >= 2 && !p->unroll && groups > 1)
		put(&t, "repeat %d l0g0.ln1 h1g0 groups %d\n",
		    c->layers * groups, groups);
	else if (c->layers >= 2 && !p->unroll)
		put(&t, "repeat %d l0.ln1 h1\n", c->layers);
	/* the groups' last layers joined along the batch */
	if (groups > 1)
		snprintf(x, sizeof x, "h%dg0", c->layers);
	for (int k = 1; k < groups; k++) {
		if (k + 1 < groups)
			snprintf(y, sizeof y, "h%dj%d", c->layers, k);
		else
			snprintf(y, sizeof y, "h%d", c->layers);
		put(&t, "%s = concat %s h%dg%d axis=0\n", y, x, c->layers, k);
		snprintf(x, sizeof x, "%s", y);
	}
	/* the post-LayerNorm folds into the head's k and v (without the
	 * head it is the output) */
	layernorm(&t, dt, "last", x, "vision_model.post_layernorm", d,
	          c->ln_eps, fold && c->use_head);
	if (!c->use_head) {
		put(&t, "output last\n");
		return t.text;
	}
	/* MAP head: the probe (one per image) attends over the tokens */
	const char *hw = "vision_model.head.attention";
	put(&t, "weight vision_model.head.probe %s [%d, %d]\n", dt, batch, d);
	const char *part[3] = {"q", "k", "v"}, *from[3];
	char name[3][160], buf[3][128];
	for (int i = 0; i < 3; i++) {
		snprintf(name[i], sizeof name[i], "%s.in_proj_weight.%s", hw,
		         part[i]);
		from[i] = i ? gemm_input(&t, &ty, SIGLIP_HEAD_KV, "last",
		                         name[i], buf[i], sizeof buf[i])
		            : gemm_input(&t, &ty, SIGLIP_HEAD_Q,
		                         "vision_model.head.probe", name[i],
		                         buf[i], sizeof buf[i]);
	}
	for (int i = 0; i < 3; i++) {
		char bias[160], y[32];
		snprintf(bias, sizeof bias, "%s.in_proj_bias.%s", hw, part[i]);
		snprintf(y, sizeof y, "head.%s", part[i]);
		product(&t, &ty, y, from[i], name[i], i ? rows : batch, d, d);
		put(&t, "weight %s %s [%d]\n", bias, dt, d);
		char mm[48];
		snprintf(mm, sizeof mm, "%s.mm", y);
		bias_add(&t, &ty, y, mm, name[i], bias, d);
	}
	attend(&t, "head.attn", "head.q", "head.k", "head.v", batch, 1, n, h,
	       dh);
	snprintf(w, sizeof w, "%s.out_proj", hw);
	linear(&t, &ty, SIGLIP_HEAD_OUT, "head.out", "head.attn", w, batch, d,
	       d);
	layernorm(&t, dt, "head.ln", "head.out", "vision_model.head.layernorm",
	          d, c->ln_eps, fold);
	mlp(&t, &ty, SIGLIP_HEAD_FC1, "head.mlp", "head.ln",
	    "vision_model.head.mlp", batch, d, f);
	put(&t, "pooled = add head.out head.mlp\n");
	put(&t, "output pooled\n");
	return t.text;
}

void
siglip_weight_source(const char *graph_name, SiglipSource *s)
{
	*s = (SiglipSource){.n = 1, .part = -1, .block = -1};
	/* a K block: ".kb<b>" or ".ks<b>" after the weight's graph name */
	char g[256];
	snprintf(g, sizeof g, "%s", graph_name);
	char *dot = strrchr(g, '.');
	int b, at;
	if (dot && (!strncmp(dot, ".kb", 3) || !strncmp(dot, ".ks", 3)) &&
	    sscanf(dot + 3, "%d%n", &b, &at) == 1 && !dot[3 + at] && b >= 0) {
		s->block = b;
		s->kscale = dot[2] == 's';
		*dot = 0;
	}
	graph_name = g;
	snprintf(s->name[0], sizeof s->name[0], "%s", graph_name);
	size_t n = strlen(graph_name);
	static const char *const suffix[3] = {".q", ".k", ".v"};
	for (int i = 0; i < 3; i++)
		if (n > 2 && strstr(graph_name, ".in_proj_") &&
		    !strcmp(graph_name + n - 2, suffix[i])) {
			s->name[0][n - 2] = 0;
			s->part = i;
		}
	const char *fused = strstr(graph_name, ".qkv_proj.");
	if (!fused)
		return;
	s->n = 3;
	for (int i = 0; i < 3; i++)
		snprintf(s->name[i], sizeof s->name[i], "%.*s.%c_proj.%s",
		         (int)(fused - graph_name), graph_name, "qkv"[i],
		         fused + strlen(".qkv_proj."));
}

void
siglip_patches(const SiglipConfig *c, int batch, const float *pixels,
               float *out)
{
	int g = siglip_grid(c), p = c->patch, s = c->image, ch = c->channels;
	size_t at = 0;
	for (int b = 0; b < batch; b++)
		for (int gy = 0; gy < g; gy++)
			for (int gx = 0; gx < g; gx++)
				for (int k = 0; k < ch; k++)
					for (int y = 0; y < p; y++)
						for (int x = 0; x < p; x++)
							out[at++] = pixels
							    [(((size_t)b * ch +
							       k) *
							          s +
							      gy * p + y) *
							         s +
							     gx * p + x];
}

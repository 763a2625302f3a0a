/*
 * siglip_quant.c - quantized SigLIP checkpoints (siglip_quant.h): the
 * policy in the "ipu.quant" metadata, its JSON, and the check of every
 * tensor against it.
 */
#include "siglip_quant.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../util/fp.h"

enum { SCALE_MIN = -32, SCALE_MAX = 31 };

static void
dense(SiglipQWeight *w, const char *name, SiglipGemm pos, int layer, int parts)
{
	*w = (SiglipQWeight){
	    .pos = pos, .layer = layer, .parts = parts, .dtype = DT_F16};
	snprintf(w->name, sizeof w->name, "%s", name);
}

int
siglip_dense_weights(const SiglipConfig *c, SiglipQWeight **out)
{
	int n = 0, cap = 6 * c->layers + 5;
	SiglipQWeight *w = xcalloc((size_t)cap, sizeof *w);
	dense(&w[n++], "vision_model.embeddings.patch_embedding.weight",
	      SIGLIP_EMBED, -1, 1);
	static const struct {
		const char *suffix;
		SiglipGemm pos;
	} layer[] = {
	    {"self_attn.q_proj.weight", SIGLIP_QKV},
	    {"self_attn.k_proj.weight", SIGLIP_QKV},
	    {"self_attn.v_proj.weight", SIGLIP_QKV},
	    {"self_attn.out_proj.weight", SIGLIP_OUT},
	    {"mlp.fc1.weight", SIGLIP_FC1},
	    {"mlp.fc2.weight", SIGLIP_FC2},
	};
	for (int l = 0; l < c->layers; l++)
		for (size_t k = 0; k < sizeof layer / sizeof layer[0]; k++) {
			char name[SIGLIP_MAX_NAME];
			snprintf(name, sizeof name,
			         "vision_model.encoder.layers.%d.%s", l,
			         layer[k].suffix);
			dense(&w[n++], name, layer[k].pos, l, 1);
		}
	if (c->use_head) {
		dense(&w[n++], "vision_model.head.attention.in_proj_weight",
		      SIGLIP_HEAD_KV, -1, 3);
		dense(&w[n++], "vision_model.head.attention.out_proj.weight",
		      SIGLIP_HEAD_OUT, -1, 1);
		dense(&w[n++], "vision_model.head.mlp.fc1.weight",
		      SIGLIP_HEAD_FC1, -1, 1);
		dense(&w[n++], "vision_model.head.mlp.fc2.weight",
		      SIGLIP_HEAD_FC2, -1, 1);
	}
	*out = w;
	return n;
}

const SiglipQWeight *
siglip_quant_find(const SiglipQuant *q, const char *name)
{
	for (int i = 0; i < q->nweight; i++)
		if (!strcmp(q->weight[i].name, name))
			return &q->weight[i];
	return NULL;
}

void
siglip_quant_scale_name(const char *weight, char *out, size_t n)
{
	snprintf(out, n, "%s_scale", weight);
}

void
siglip_quant_kscale_name(const char *weight, char *out, size_t n)
{
	snprintf(out, n, "%s_kscale", weight);
}

static const StMeta *
meta(const StFile *f, const char *key)
{
	for (size_t i = 0; i < f->nmeta; i++)
		if (!strcmp(f->meta[i].key, key))
			return &f->meta[i];
	return NULL;
}

int
siglip_is_quantized(const StFile *f)
{
	return meta(f, SIGLIP_QUANT_KEY) != NULL;
}

static const char *
format_name(DType t)
{
	return t == DT_F8_F152 ? "F152" : t == DT_F8_F143 ? "F143" : "f16";
}

static StDtype
st_of(DType t)
{
	return t == DT_F8_F152 ? ST_F8_E5M2FNUZ : ST_F8_E4M3FNUZ;
}

/* "F143" / "F152" -> the dtype, else -1. */
static int
format_of(const char *s)
{
	return !strcmp(s, "F143")   ? DT_F8_F143
	       : !strcmp(s, "F152") ? DT_F8_F152
	                            : -1;
}

/* A problem with the policy: "ipu.quant: <message>". */
static int
bad(Diag *d, const char *what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return diag_set(d, IPU_EINVAL, what, 0, 0, "%s: %s", SIGLIP_QUANT_KEY,
	                msg);
}

/* A scale: an integer in SCALE_MIN..SCALE_MAX. */
static int
scale_of(const cJSON *v, int *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
	    v->valuedouble < SCALE_MIN || v->valuedouble > SCALE_MAX)
		return -1;
	*out = (int)v->valuedouble;
	return 0;
}

/* {"format": "F143"|"F152", "scale": N} of a position or weight (parts
 * scales for the head's in_proj_weight; a weight's may add
 * "channel_scales" and "k_block"), or "f16". */
static int
parse_entry(const cJSON *e, const char *what, const char *name, int parts,
            int weight, DType *dt, int *scale, int *channel, int *k_block,
            Diag *d)
{
	*channel = 0;
	*k_block = 0;
	if (cJSON_IsString(e) && !strcmp(e->valuestring, "f16")) {
		*dt = DT_F16;
		return IPU_OK;
	}
	if (!cJSON_IsObject(e))
		return bad(d, what,
		           "'%s': not \"f16\" or an object with "
		           "\"format\" and \"scale\"",
		           name);
	const cJSON *fmt = NULL, *sc = NULL, *ch = NULL, *kb = NULL;
	for (const cJSON *k = e->child; k; k = k->next) {
		if (!strcmp(k->string, "format"))
			fmt = k;
		else if (!strcmp(k->string, "scale"))
			sc = k;
		else if (weight && !strcmp(k->string, "channel_scales"))
			ch = k;
		else if (weight && !strcmp(k->string, "k_block"))
			kb = k;
		else
			return bad(d, what, "'%s': unknown key \"%s\"", name,
			           k->string);
	}
	if (!fmt || !cJSON_IsString(fmt) || format_of(fmt->valuestring) < 0)
		return bad(d, what,
		           "'%s': \"format\" must be \"F143\" or \"F152\"",
		           name);
	*dt = (DType)format_of(fmt->valuestring);
	if (!sc)
		return bad(d, what, "'%s': missing \"scale\"", name);
	if (parts == 1 && scale_of(sc, &scale[0]))
		return bad(d, what,
		           "'%s': \"scale\" must be an integer in -32..31",
		           name);
	if (parts == 3) {
		if (!cJSON_IsArray(sc) || cJSON_GetArraySize(sc) != 3)
			return bad(d, what,
			           "'%s': \"scale\" must be a list of three "
			           "integers (q, k, v parts)",
			           name);
		for (int i = 0; i < 3; i++)
			if (scale_of(cJSON_GetArrayItem(sc, i), &scale[i]))
				return bad(d, what,
				           "'%s': \"scale\" must hold integers "
				           "in -32..31",
				           name);
	}
	if (ch && !cJSON_IsBool(ch))
		return bad(d, what,
		           "'%s': \"channel_scales\" must be true "
		           "or false",
		           name);
	*channel = ch && cJSON_IsTrue(ch);
	/* blocks of 32k columns: the device slices them out of the f8
	 * input on whole words */
	if (kb && (!cJSON_IsNumber(kb) || kb->valuedouble < 32 ||
	           kb->valuedouble > 65536 ||
	           kb->valuedouble != 32 * floor(kb->valuedouble / 32)))
		return bad(d, what,
		           "'%s': \"k_block\" must be a multiple of 32 "
		           "(input columns per block, up to 65536)",
		           name);
	*k_block = kb ? (int)kb->valuedouble : 0;
	return IPU_OK;
}

/* The tensor's bytes of FP8 codes hold no NaN (0x80). */
static int
check_codes(const StFile *f, const StTensor *t, const char *what, Diag *d)
{
	const uint8_t *b = st_bytes(f, t);
	for (uint64_t i = 0; i < st_elements(t); i++)
		if (b[i] == 0x80)
			return diag_set(d, IPU_EINVAL, what, 0, 0,
			                "tensor '%s': element %llu is the FP8 "
			                "NaN code 0x80",
			                t->name, (unsigned long long)i);
	return IPU_OK;
}

/* A scale tensor of weight w (its checkpoint tensor wt): kscale 0, its
 * channel scales "<w>_scale", F32 [out]; 1, its K-block scales
 * "<w>_kscale", F32 [out, K / k_block rounded up]; there if and only if
 * the policy says so, of that shape, finite and positive. */
static int
check_scales(const StFile *f, const SiglipQWeight *w, const StTensor *wt,
             int kscale, const char *what, Diag *d)
{
	int want = kscale ? w->k_block > 0 : w->channel,
	    k_block = kscale ? w->k_block : 0;
	char name[SIGLIP_MAX_NAME + 8];
	const char *kind = kscale ? "K-block" : "channel";
	if (kscale)
		siglip_quant_kscale_name(w->name, name, sizeof name);
	else
		siglip_quant_scale_name(w->name, name, sizeof name);
	const StTensor *s = st_find(f, name);
	if (!want)
		return s ? diag_set(d, IPU_EINVAL, what, 0, 0,
		                    "tensor '%s' is there, but %s '%s' has no "
		                    "\"%s\"",
		                    name, SIGLIP_QUANT_KEY, w->name,
		                    kscale ? "k_block" : "channel_scales")
		         : IPU_OK;
	if (!s)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "missing tensor '%s' (the %s scales %s says "
		                "'%s' has)",
		                name, kind, SIGLIP_QUANT_KEY, w->name);
	uint64_t rows = wt->shape[0],
	         blocks = k_block ? (wt->shape[1] + (uint64_t)k_block - 1) /
	                                (uint64_t)k_block
	                          : 1;
	char want_shape[64];
	if (k_block)
		snprintf(want_shape, sizeof want_shape, "[%llu, %llu]",
		         (unsigned long long)rows, (unsigned long long)blocks);
	else
		snprintf(want_shape, sizeof want_shape, "[%llu]",
		         (unsigned long long)rows);
	if (s->dtype != ST_F32 || s->rank != (k_block ? 2 : 1) ||
	    s->shape[0] != rows || (k_block && s->shape[1] != blocks))
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "tensor '%s': must be F32 %s (one scale per "
		                "output channel%s), is %s of %llu elements",
		                name, want_shape,
		                k_block ? " and block of K" : "",
		                st_dtype_name(s->dtype),
		                (unsigned long long)st_elements(s));
	float *v = xmalloc(rows * blocks * sizeof *v);
	int e = st_to_f32(f, s, v, d);
	for (uint64_t i = 0; !e && i < rows * blocks; i++)
		if (!(v[i] > 0) || isinf(v[i]))
			e = diag_set(d, IPU_EINVAL, what, 0, 0,
			             "tensor '%s': element %llu is %g; %s "
			             "scales must be finite and positive",
			             name, (unsigned long long)i, v[i], kind);
	free(v);
	return e;
}

/* Every expected tensor with its shape and a dtype the policy allows. */
static int
check_tensors(const SiglipConfig *c, const StFile *f, const SiglipQuant *q,
              const char *what, Diag *d)
{
	SiglipTensor *t;
	size_t n = siglip_tensors(c, &t);
	int e = IPU_OK;
	for (size_t i = 0; i < n && !e; i++) {
		const StTensor *s = st_find(f, t[i].name);
		char want[96], have[96];
		st_shape_str(want, sizeof want, t[i].rank, t[i].shape);
		if (!s) {
			e = diag_set(d, IPU_EINVAL, what, 0, 0,
			             "missing tensor '%s' (expected shape %s)",
			             t[i].name, want);
			break;
		}
		st_shape_str(have, sizeof have, s->rank, s->shape);
		if (strcmp(want, have)) {
			e = diag_set(d, IPU_EINVAL, what, 0, 0,
			             "tensor '%s': shape %s, but the config "
			             "expects %s",
			             t[i].name, have, want);
			break;
		}
		const SiglipQWeight *w = siglip_quant_find(q, t[i].name);
		int f8 = w && dtype_is_f8(w->dtype);
		int flt = s->dtype == ST_F32 || s->dtype == ST_F16 ||
		          s->dtype == ST_BF16;
		if (f8 && s->dtype != st_of(w->dtype))
			e = diag_set(d, IPU_EINVAL, what, 0, 0,
			             "tensor '%s': dtype %s, but %s says %s "
			             "(%s)",
			             t[i].name, st_dtype_name(s->dtype),
			             SIGLIP_QUANT_KEY, format_name(w->dtype),
			             st_dtype_name(st_of(w->dtype)));
		else if (!f8 && !flt)
			e = diag_set(d, IPU_EINVAL, what, 0, 0,
			             "tensor '%s': dtype %s; a tensor kept "
			             "unquantized must be F32, F16 or BF16%s",
			             t[i].name, st_dtype_name(s->dtype),
			             w ? " (the policy keeps it in f16)" : "");
		else if (f8)
			e = check_codes(f, s, what, d);
		for (int k = 0; k < 2 && !e && w; k++)
			e = check_scales(f, w, s, k, what, d);
	}
	/* nothing else but the channel and K-block scales */
	for (size_t i = 0; !e && i < f->ntensor; i++) {
		const char *name = f->tensor[i].name;
		int known = 0;
		for (size_t k = 0; k < n && !known; k++)
			known = !strcmp(t[k].name, name);
		for (int k = 0; k < q->nweight && !known; k++) {
			char s[SIGLIP_MAX_NAME + 8];
			siglip_quant_scale_name(q->weight[k].name, s, sizeof s);
			known = q->weight[k].channel && !strcmp(s, name);
			siglip_quant_kscale_name(q->weight[k].name, s,
			                         sizeof s);
			known |= q->weight[k].k_block > 0 && !strcmp(s, name);
		}
		if (!known)
			e = diag_set(d, IPU_EINVAL, what, 0, 0,
			             "unexpected tensor '%s' for this config "
			             "(%d layers, head %s) and policy",
			             name, c->layers,
			             c->use_head ? "on" : "off");
	}
	free(t);
	return e;
}

static int
parse_policy(const cJSON *root, const char *what, SiglipQuant *q, Diag *d)
{
	if (!cJSON_IsObject(root))
		return bad(d, what, "is not a JSON object");
	const cJSON *ver = NULL, *acts = NULL, *weights = NULL;
	for (const cJSON *k = root->child; k; k = k->next) {
		if (!strcmp(k->string, "version"))
			ver = k;
		else if (!strcmp(k->string, "activations"))
			acts = k;
		else if (!strcmp(k->string, "weights"))
			weights = k;
		else if (!strcmp(k->string, "methods") && cJSON_IsString(k))
			q->methods = xstrdup(k->valuestring);
		else if (!strcmp(k->string, "calibration") && cJSON_IsString(k))
			q->calibration = xstrdup(k->valuestring);
		else
			return bad(d, what, "unknown key \"%s\"", k->string);
	}
	if (!ver || !cJSON_IsNumber(ver) || ver->valuedouble != 1)
		return bad(d, what, "\"version\" must be 1 (this reader's)");
	if (!cJSON_IsObject(acts) || !cJSON_IsObject(weights))
		return bad(d, what,
		           "needs \"activations\" and \"weights\" "
		           "objects");
	int set[SIGLIP_GEMMS] = {0};
	for (const cJSON *k = acts->child; k; k = k->next) {
		int i = 0;
		while (i < SIGLIP_GEMMS &&
		       strcmp(siglip_gemm_names[i], k->string))
			i++;
		if (i == SIGLIP_GEMMS)
			return bad(d, what,
			           "activations: unknown position \"%s\" (%s)",
			           k->string,
			           "qkv, out, fc1, fc2, head.q, head.kv, "
			           "head.out, head.fc1, head.fc2, q, k, embed");
		if (set[i])
			return bad(d, what, "activations: \"%s\" given twice",
			           k->string);
		int ch, kb, sc[3];
		int e = parse_entry(k, what, k->string, 1, 0, &q->act[i], sc,
		                    &ch, &kb, d);
		if (e)
			return e;
		q->act_scale[i] = sc[0];
		set[i] = 1;
	}
	for (const cJSON *k = weights->child; k; k = k->next) {
		SiglipQWeight *w = NULL;
		for (int i = 0; i < q->nweight && !w; i++)
			if (!strcmp(q->weight[i].name, k->string))
				w = &q->weight[i];
		if (!w)
			return bad(
			    d, what,
			    "weights: '%s' is not a dense GEMM weight of "
			    "this config",
			    k->string);
		int e = parse_entry(k, what, k->string, w->parts, 1, &w->dtype,
		                    w->scale, &w->channel, &w->k_block, d);
		if (e)
			return e;
	}
	for (int i = 0; i < q->nweight; i++) {
		const SiglipQWeight *w = &q->weight[i];
		const cJSON *k =
		    cJSON_GetObjectItemCaseSensitive(weights, w->name);
		if (!k)
			return bad(d, what,
			           "weights: missing '%s' (every dense GEMM "
			           "weight needs \"f16\" or its format and "
			           "scale)",
			           w->name);
		/* q, k, v read the probe (q) and the tokens (k, v) */
		int f8 = dtype_is_f8(w->dtype);
		SiglipGemm pos = w->parts == 3 ? SIGLIP_HEAD_Q : w->pos;
		for (; f8 && pos <= w->pos; pos++)
			if (!set[pos] || !dtype_is_f8(q->act[pos]))
				return bad(
				    d, what,
				    "activations: '%s' is f8, so position "
				    "\"%s\" needs an f8 format and scale",
				    w->name, siglip_gemm_names[pos]);
	}
	for (int i = 0; i < SIGLIP_GEMMS; i++)
		if (!set[i])
			q->act[i] = DT_F16;
	return IPU_OK;
}

int
siglip_quant_read(const SiglipConfig *c, const StFile *f, const char *what,
                  SiglipQuant *q, Diag *d)
{
	memset(q, 0, sizeof *q);
	q->nweight = siglip_dense_weights(c, &q->weight);
	const StMeta *m = meta(f, SIGLIP_QUANT_KEY);
	if (!m) {
		siglip_quant_free(q);
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "no \"%s\" metadata: not a quantized "
		                "checkpoint",
		                SIGLIP_QUANT_KEY);
	}
	cJSON *root = cJSON_Parse(m->value);
	int e = root ? parse_policy(root, what, q, d)
	             : bad(d, what, "is not valid JSON");
	cJSON_Delete(root);
	if (!e)
		e = check_tensors(c, f, q, what, d);
	if (e)
		siglip_quant_free(q);
	return e;
}

static cJSON *
entry(DType dt, const int *scale, int parts, int channel, int k_block)
{
	if (!dtype_is_f8(dt))
		return cJSON_CreateString("f16");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "format", format_name(dt));
	if (parts == 3)
		cJSON_AddItemToObject(o, "scale",
		                      cJSON_CreateIntArray(scale, 3));
	else
		cJSON_AddNumberToObject(o, "scale", scale[0]);
	if (channel)
		cJSON_AddTrueToObject(o, "channel_scales");
	if (k_block)
		cJSON_AddNumberToObject(o, "k_block", k_block);
	return o;
}

char *
siglip_quant_json(const SiglipQuant *q)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "version", 1);
	if (q->methods)
		cJSON_AddStringToObject(root, "methods", q->methods);
	if (q->calibration)
		cJSON_AddStringToObject(root, "calibration", q->calibration);
	cJSON *acts = cJSON_AddObjectToObject(root, "activations");
	for (int i = 0; i < SIGLIP_GEMMS; i++)
		cJSON_AddItemToObject(
		    acts, siglip_gemm_names[i],
		    entry(q->act[i], &q->act_scale[i], 1, 0, 0));
	cJSON *ws = cJSON_AddObjectToObject(root, "weights");
	for (int i = 0; i < q->nweight; i++) {
		const SiglipQWeight *w = &q->weight[i];
		cJSON_AddItemToObject(ws, w->name,
		                      entry(w->dtype, w->scale, w->parts,
		                            w->channel, w->k_block));
	}
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	char *out = xstrdup(text);
	cJSON_free(text);
	return out;
}

void
siglip_quant_free(SiglipQuant *q)
{
	free(q->weight);
	free(q->methods);
	free(q->calibration);
	memset(q, 0, sizeof *q);
}

/*
 * siglip_config.c - SigLIP vision configs (siglip_config.h).
 *
 * The integer fields are one table (JSON key, struct member, transformers'
 * default): parsing, defaults, bounds and writing all walk it. Keys the
 * vision tower does not use (architectures, torch_dtype, attention_dropout,
 * ...) are ignored, as transformers keeps them without effect on the
 * inference math.
 */
#include "siglip_config.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

enum { FIELD_MAX = 1 << 20 }; /* bound on every size, far above any model */

static const struct {
	const char *key;
	size_t offset;
	int dflt; /* configuration_siglip.py SiglipVisionConfig */
} int_fields[] = {
    {"hidden_size", offsetof(SiglipConfig, hidden), 768},
    {"intermediate_size", offsetof(SiglipConfig, intermediate), 3072},
    {"num_hidden_layers", offsetof(SiglipConfig, layers), 12},
    {"num_attention_heads", offsetof(SiglipConfig, heads), 12},
    {"num_channels", offsetof(SiglipConfig, channels), 3},
    {"image_size", offsetof(SiglipConfig, image), 224},
    {"patch_size", offsetof(SiglipConfig, patch), 16},
};
#define NINT (sizeof int_fields / sizeof int_fields[0])

static const double DEFAULT_EPS = 1e-6;
static const char *const ACT = "gelu_pytorch_tanh"; /* the only one */

static int *
field(SiglipConfig *c, size_t i)
{
	return (int *)((char *)c + int_fields[i].offset);
}

static const int *
field_c(const SiglipConfig *c, size_t i)
{
	return (const int *)((const char *)c + int_fields[i].offset);
}

static const struct {
	const char *name;
	SiglipConfig c;
} presets[] = {
    {"base", {768, 3072, 12, 12, 3, 224, 16, 1e-6, 1}},
    {"so400m", {1152, 4304, 27, 16, 3, 384, 14, 1e-6, 1}},
};

int
siglip_preset(const char *name, SiglipConfig *out)
{
	for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
		if (!strcmp(name, presets[i].name)) {
			*out = presets[i].c;
			return 0;
		}
	return -1;
}

const char *
siglip_preset_names(void)
{
	return "base (siglip-base-patch16-224), so400m "
	       "(siglip-so400m-patch14-384)";
}

/* The member `key` of object o; of several with that key, the last, as
 * Python's json (and so transformers) keeps it (cJSON's lookup gives the
 * first). */
static const cJSON *
member(const cJSON *o, const char *key)
{
	const cJSON *found = NULL;
	for (const cJSON *c = o ? o->child : NULL; c; c = c->next)
		if (c->string && !strcmp(c->string, key))
			found = c;
	return found;
}

/* An integer field: a JSON integer, or for image_size and patch_size also
 * [h, w] with h == w (transformers accepts a pair; we need squares). */
static int
read_int(const cJSON *v, const char *key, int *out, const char *what, Diag *d)
{
	int pair = cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 &&
	           (!strcmp(key, "image_size") || !strcmp(key, "patch_size"));
	if (pair) {
		const cJSON *h = v->child, *w = v->child->next;
		if (!cJSON_IsNumber(h) || !cJSON_IsNumber(w) ||
		    h->valuedouble != w->valuedouble)
			return diag_set(d, IPU_EINVAL, what, 0, 0,
			                "%s: only square sizes [n, n] are "
			                "supported",
			                key);
		v = h;
	}
	double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
	if (!(x >= 1 && x <= FIELD_MAX) || floor(x) != x)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "%s is not an integer in 1..%d", key,
		                FIELD_MAX);
	*out = (int)x;
	return IPU_OK;
}

static int
read_other(const cJSON *vc, SiglipConfig *c, const char *what, Diag *d)
{
	const cJSON *v = member(vc, "layer_norm_eps");
	if (v) {
		if (!cJSON_IsNumber(v))
			return diag_set(d, IPU_EINVAL, what, 0, 0,
			                "layer_norm_eps is not a number");
		c->ln_eps = v->valuedouble;
	}
	v = member(vc, "hidden_act");
	if (v && !(cJSON_IsString(v) && !strcmp(v->valuestring, ACT)))
		return diag_set(
		    d, IPU_EINVAL, what, 0, 0,
		    "hidden_act %s%.40s%s is not supported (only %s)",
		    cJSON_IsString(v) ? "\"" : "",
		    cJSON_IsString(v) ? v->valuestring : "(not a string)",
		    cJSON_IsString(v) ? "\"" : "", ACT);
	v = member(vc, "vision_use_head");
	if (v) {
		if (!cJSON_IsBool(v))
			return diag_set(d, IPU_EINVAL, what, 0, 0,
			                "vision_use_head is not true or false");
		c->use_head = cJSON_IsTrue(v);
	}
	return IPU_OK;
}

static int
read_vision(const cJSON *vc, SiglipConfig *c, const char *what, Diag *d)
{
	for (size_t i = 0; i < NINT; i++) {
		*field(c, i) = int_fields[i].dflt;
		const cJSON *v = member(vc, int_fields[i].key);
		int rc =
		    v ? read_int(v, int_fields[i].key, field(c, i), what, d)
		      : 0;
		if (rc)
			return rc;
	}
	c->ln_eps = DEFAULT_EPS;
	c->use_head = 1;
	int rc = read_other(vc, c, what, d);
	return rc ? rc : siglip_config_validate(c, what, d);
}

/* The vision config inside the root: "vision_config" of a SiglipConfig, or
 * the root itself. A model_type, where given, must be a SigLIP one. */
static int
find_vision(const cJSON *root, const cJSON **vc, const char *what, Diag *d)
{
	static const cJSON empty; /* SiglipConfig without vision_config */
	const cJSON *mt = member(root, "model_type");
	const cJSON *sub = member(root, "vision_config");
	const char *type = cJSON_IsString(mt) ? mt->valuestring : NULL;
	if (mt && !type)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "model_type is not a string");
	if (type && strcmp(type, "siglip") &&
	    strcmp(type, "siglip_vision_model"))
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "model_type \"%.40s\" is not siglip or "
		                "siglip_vision_model",
		                type);
	if (sub) {
		if (!cJSON_IsObject(sub))
			return diag_set(d, IPU_EINVAL, what, 0, 0,
			                "vision_config is not an object");
		mt = member(sub, "model_type");
		if (mt && !(cJSON_IsString(mt) &&
		            !strcmp(mt->valuestring, "siglip_vision_model")))
			return diag_set(d, IPU_EINVAL, what, 0, 0,
			                "vision_config.model_type is not "
			                "siglip_vision_model");
		*vc = sub;
	} else
		*vc = type && !strcmp(type, "siglip") ? &empty : root;
	return IPU_OK;
}

int
siglip_config_parse(const char *text, size_t len, const char *what,
                    SiglipConfig *out, Diag *d)
{
	const char *stop = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &stop, 0);
	if (!root)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "not valid JSON (near byte %zu)",
		                stop ? (size_t)(stop - text) : 0);
	const cJSON *vc = NULL;
	int rc = cJSON_IsObject(root)
	             ? find_vision(root, &vc, what, d)
	             : diag_set(d, IPU_EINVAL, what, 0, 0, "not a JSON object");
	if (!rc)
		rc = read_vision(vc, out, what, d);
	cJSON_Delete(root);
	return rc;
}

int
siglip_config_read(const char *path, SiglipConfig *out, Diag *d)
{
	uint8_t *buf;
	size_t len;
	int rc = read_file(path, &buf, &len, d);
	if (rc)
		return rc;
	rc = siglip_config_parse((const char *)buf, len, path, out, d);
	free(buf);
	return rc;
}

/* The model code counts elements of one image's tensors in int (tokens =
 * grid^2, tokens x f activations, ...): every such count must fit, or an
 * image_size of 1048576 with patch_size 1 makes 2^40 tokens wrap to 0 (and
 * a "valid" config whose run asks for terabytes). Products in double,
 * exact far beyond INT_MAX. */
static int
check_products(const SiglipConfig *c, const char *what, Diag *d)
{
	double grid = c->image / c->patch, tokens = grid * grid;
	const struct {
		const char *name;
		double n;
	} counts[] = {
	    {"tokens (image_size / patch_size)^2", tokens},
	    {"the pixels (num_channels x image_size^2)",
	     (double)c->channels * c->image * c->image},
	    {"the patch weights (num_channels x patch_size^2 x hidden_size)",
	     (double)c->channels * c->patch * c->patch * c->hidden},
	    {"the MLP activations (tokens x intermediate_size)",
	     tokens * c->intermediate},
	    {"the MLP weights (hidden_size x intermediate_size)",
	     (double)c->hidden * c->intermediate},
	    {"the attention scores (num_attention_heads x tokens^2)",
	     c->heads * tokens * tokens},
	};
	for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
		if (counts[i].n > INT_MAX)
			return diag_set(
			    d, IPU_EINVAL, what, 0, 0,
			    "%s: %.0f elements (of one image), more than "
			    "the %d the model supports",
			    counts[i].name, counts[i].n, INT_MAX);
	return IPU_OK;
}

int
siglip_config_validate(const SiglipConfig *c, const char *what, Diag *d)
{
	for (size_t i = 0; i < NINT; i++)
		if (*field_c(c, i) < 1 || *field_c(c, i) > FIELD_MAX)
			return diag_set(
			    d, IPU_EINVAL, what, 0, 0, "%s %d is not in 1..%d",
			    int_fields[i].key, *field_c(c, i), FIELD_MAX);
	if (c->hidden % c->heads)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "hidden_size %d is not divisible by "
		                "num_attention_heads %d",
		                c->hidden, c->heads);
	/* no divisibility: so400m has 384 = 27 * 14 + 6, the stride-14
	 * conv ignores the last 6 rows and columns */
	if (c->image < c->patch)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "image_size %d is smaller than patch_size %d",
		                c->image, c->patch);
	if (!(c->ln_eps > 0 && c->ln_eps < 1))
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "layer_norm_eps %g is not in (0, 1)",
		                c->ln_eps);
	return check_products(c, what, d);
}

int
siglip_config_write(const char *path, const SiglipConfig *c, int overwrite,
                    Diag *d)
{
	int rc = siglip_config_validate(c, path, d);
	if (rc)
		return rc;
	cJSON *root = cJSON_CreateObject();
	cJSON *arch = cJSON_AddArrayToObject(root, "architectures");
	cJSON_AddItemToArray(arch, cJSON_CreateString("SiglipVisionModel"));
	cJSON_AddStringToObject(root, "model_type", "siglip_vision_model");
	for (size_t i = 0; i < NINT; i++)
		cJSON_AddNumberToObject(root, int_fields[i].key,
		                        *field_c(c, i));
	cJSON_AddStringToObject(root, "hidden_act", ACT);
	cJSON_AddNumberToObject(root, "layer_norm_eps", c->ln_eps);
	cJSON_AddBoolToObject(root, "vision_use_head", c->use_head);
	char *text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		die("out of memory printing config.json");
	char tmp[4096];
	FILE *f = file_create_temp(path, tmp, sizeof tmp, d);
	if (!f) {
		free(text);
		return IPU_EIO;
	}
	fprintf(f, "%s\n", text);
	free(text);
	return file_commit_temp(f, tmp, path, overwrite, d);
}

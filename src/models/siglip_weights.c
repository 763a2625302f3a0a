/*
 * siglip_weights.c - the SigLIP vision tower's tensor list and the
 * checkpoint check (siglip_weights.h).
 *
 * The list is data: rows of (name suffix, kind, shape in symbols of the
 * config) for the embeddings, one encoder layer, the post LayerNorm and the
 * MAP head (model.md 3), expanded with the config's sizes.
 */
#include "siglip_weights.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Dimension symbols of the rows. */
typedef enum { S_NONE, S_1, S_D, S_3D, S_F, S_C, S_P, S_N } Sym;

typedef struct {
	const char *suffix;
	SiglipKind kind;
	Sym dim[SIGLIP_MAX_RANK]; /* S_NONE ends the shape */
} Row;

static const Row embed_rows[] = {
    {"patch_embedding.weight", SW_CONV, {S_D, S_C, S_P, S_P}},
    {"patch_embedding.bias", SW_BIAS, {S_D}},
    {"position_embedding.weight", SW_POSITION, {S_N, S_D}},
};

static const Row layer_rows[] = {
    {"layer_norm1.weight", SW_LN_WEIGHT, {S_D}},
    {"layer_norm1.bias", SW_LN_BIAS, {S_D}},
    {"self_attn.q_proj.weight", SW_LINEAR, {S_D, S_D}},
    {"self_attn.q_proj.bias", SW_BIAS, {S_D}},
    {"self_attn.k_proj.weight", SW_LINEAR, {S_D, S_D}},
    {"self_attn.k_proj.bias", SW_BIAS, {S_D}},
    {"self_attn.v_proj.weight", SW_LINEAR, {S_D, S_D}},
    {"self_attn.v_proj.bias", SW_BIAS, {S_D}},
    {"self_attn.out_proj.weight", SW_LINEAR, {S_D, S_D}},
    {"self_attn.out_proj.bias", SW_BIAS, {S_D}},
    {"layer_norm2.weight", SW_LN_WEIGHT, {S_D}},
    {"layer_norm2.bias", SW_LN_BIAS, {S_D}},
    {"mlp.fc1.weight", SW_LINEAR, {S_F, S_D}},
    {"mlp.fc1.bias", SW_BIAS, {S_F}},
    {"mlp.fc2.weight", SW_LINEAR, {S_D, S_F}},
    {"mlp.fc2.bias", SW_BIAS, {S_D}},
};

static const Row post_rows[] = {
    {"post_layernorm.weight", SW_LN_WEIGHT, {S_D}},
    {"post_layernorm.bias", SW_LN_BIAS, {S_D}},
};

/* in_proj stacks the q, k, v projections (model.md 1.4). */
static const Row head_rows[] = {
    {"probe", SW_PROBE, {S_1, S_1, S_D}},
    {"attention.in_proj_weight", SW_LINEAR, {S_3D, S_D}},
    {"attention.in_proj_bias", SW_BIAS, {S_3D}},
    {"attention.out_proj.weight", SW_LINEAR, {S_D, S_D}},
    {"attention.out_proj.bias", SW_BIAS, {S_D}},
    {"layernorm.weight", SW_LN_WEIGHT, {S_D}},
    {"layernorm.bias", SW_LN_BIAS, {S_D}},
    {"mlp.fc1.weight", SW_LINEAR, {S_F, S_D}},
    {"mlp.fc1.bias", SW_BIAS, {S_F}},
    {"mlp.fc2.weight", SW_LINEAR, {S_D, S_F}},
    {"mlp.fc2.bias", SW_BIAS, {S_D}},
};

#define COUNT(a) (sizeof a / sizeof a[0])

static uint64_t
sym_value(const SiglipConfig *c, Sym s)
{
	switch (s) {
	case S_1:
		return 1;
	case S_D:
		return c->hidden;
	case S_3D:
		return 3 * (uint64_t)c->hidden;
	case S_F:
		return c->intermediate;
	case S_C:
		return c->channels;
	case S_P:
		return c->patch;
	case S_N:
		return siglip_tokens(c);
	case S_NONE:
		break;
	}
	die("no value for dimension symbol %d", (int)s);
}

static void
add_rows(const SiglipConfig *c, const char *prefix, const Row *rows, size_t n,
         SiglipTensor *out, size_t *count)
{
	for (size_t i = 0; i < n; i++) {
		SiglipTensor *t = &out[(*count)++];
		snprintf(t->name, sizeof t->name, "%s%s", prefix,
		         rows[i].suffix);
		t->kind = rows[i].kind;
		t->rank = 0;
		while (t->rank < SIGLIP_MAX_RANK && rows[i].dim[t->rank]) {
			t->shape[t->rank] = sym_value(c, rows[i].dim[t->rank]);
			t->rank++;
		}
	}
}

size_t
siglip_tensors(const SiglipConfig *c, SiglipTensor **out)
{
	size_t max = COUNT(embed_rows) + c->layers * COUNT(layer_rows) +
	             COUNT(post_rows) + COUNT(head_rows);
	SiglipTensor *t = xcalloc(max, sizeof *t);
	size_t n = 0;
	add_rows(c, "vision_model.embeddings.", embed_rows, COUNT(embed_rows),
	         t, &n);
	for (int l = 0; l < c->layers; l++) {
		char prefix[64];
		snprintf(prefix, sizeof prefix,
		         "vision_model.encoder.layers.%d.", l);
		add_rows(c, prefix, layer_rows, COUNT(layer_rows), t, &n);
	}
	add_rows(c, "vision_model.", post_rows, COUNT(post_rows), t, &n);
	if (c->use_head)
		add_rows(c, "vision_model.head.", head_rows, COUNT(head_rows),
		         t, &n);
	*out = t;
	return n;
}

uint64_t
siglip_tensor_elements(const SiglipTensor *t)
{
	uint64_t n = 1;
	for (int i = 0; i < t->rank; i++)
		n *= t->shape[i];
	return n;
}

/* Tensors of a full SiglipModel checkpoint outside the vision tower. */
static int
is_text_tower(const char *name)
{
	return !strncmp(name, "text_model.", 11) ||
	       !strcmp(name, "logit_scale") || !strcmp(name, "logit_bias");
}

static int
same_shape(const SiglipTensor *e, const StTensor *t)
{
	if (e->rank != t->rank)
		return 0;
	for (int i = 0; i < e->rank; i++)
		if (e->shape[i] != t->shape[i])
			return 0;
	return 1;
}

/* One expected tensor against the file; dtype of the first is the file's. */
static int
check_one(const SiglipTensor *e, const StTensor *t, StDtype want,
          const char *what, Diag *d)
{
	char a[128], b[128];
	if (!t)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "missing tensor '%s' (expected shape %s)",
		                e->name,
		                st_shape_str(a, sizeof a, e->rank, e->shape));
	if (!same_shape(e, t))
		return diag_set(
		    d, IPU_EINVAL, what, 0, 0,
		    "tensor '%s': shape %s, but the config expects %s", e->name,
		    st_shape_str(a, sizeof a, t->rank, t->shape),
		    st_shape_str(b, sizeof b, e->rank, e->shape));
	if (t->dtype != want)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "tensor '%s': dtype %s, but the checkpoint's "
		                "dtype (that of %s) is %s",
		                e->name, st_dtype_name(t->dtype),
		                "the patch embedding", st_dtype_name(want));
	return IPU_OK;
}

static int
check_all(const SiglipConfig *c, const SiglipTensor *exp, size_t n,
          const StFile *f, const char *what, SiglipCheck *sum, Diag *d)
{
	const StTensor *first = st_find(f, exp[0].name);
	if (first && first->dtype != ST_F32 && first->dtype != ST_F16 &&
	    first->dtype != ST_BF16)
		return diag_set(
		    d, IPU_EINVAL, what, 0, 0,
		    "tensor '%s': dtype %s, but a checkpoint must be "
		    "F32, F16 or BF16",
		    exp[0].name, st_dtype_name(first->dtype));
	char *used = xcalloc(f->ntensor ? f->ntensor : 1, 1);
	int rc = IPU_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		const StTensor *t = st_find(f, exp[i].name);
		rc = check_one(&exp[i], t, first ? first->dtype : ST_F32, what,
		               d);
		if (rc)
			break;
		used[t - f->tensor] = 1;
		sum->params += st_elements(t);
		sum->bytes += t->end - t->begin;
	}
	for (size_t i = 0; i < f->ntensor && !rc; i++) {
		if (used[i])
			continue;
		if (is_text_tower(f->tensor[i].name)) {
			sum->nignored++;
			continue;
		}
		rc = diag_set(d, IPU_EINVAL, what, 0, 0,
		              "unexpected tensor '%s' for this config (%d "
		              "layers, head %s)",
		              f->tensor[i].name, c->layers,
		              c->use_head ? "on" : "off");
	}
	free(used);
	sum->ntensor = n;
	sum->dtype = first ? first->dtype : ST_F32;
	return rc;
}

int
siglip_check(const SiglipConfig *c, const StFile *f, const char *what,
             SiglipCheck *sum, Diag *d)
{
	int rc = siglip_config_validate(c, what, d);
	if (rc)
		return rc;
	SiglipTensor *exp;
	size_t n = siglip_tensors(c, &exp);
	SiglipCheck local;
	memset(&local, 0, sizeof local);
	rc = check_all(c, exp, n, f, what, &local, d);
	free(exp);
	if (!rc && sum)
		*sum = local;
	return rc;
}

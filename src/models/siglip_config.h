/*
 * siglip_config.h - the SigLIP vision tower's configuration: read from a
 * Hugging Face config.json (a SiglipVisionConfig at the top level, or a
 * SiglipConfig holding one as "vision_config"), with transformers' defaults
 * for absent fields (model.md 2), validated; built-in presets; written back
 * as a vision-only config.json.
 */
#ifndef IPU_SIGLIP_CONFIG_H
#define IPU_SIGLIP_CONFIG_H

#include <stddef.h>

#include "../util/util.h"

typedef struct {
	int hidden;       /* hidden_size, d */
	int intermediate; /* intermediate_size, f (the MLP width) */
	int layers;       /* num_hidden_layers, L */
	int heads;        /* num_attention_heads, H */
	int channels;     /* num_channels of the input image */
	int image;        /* image_size, pixels per side (square) */
	int patch;        /* patch_size, pixels per side (square) */
	double ln_eps;    /* layer_norm_eps */
	int use_head;     /* vision_use_head: the MAP pooling head exists */
} SiglipConfig;

/* siglip_config.c */
/* "base" (google/siglip-base-patch16-224) or "so400m"
 * (google/siglip-so400m-patch14-384); -1 for another name. */
int siglip_preset(const char *name, SiglipConfig *out);
const char *siglip_preset_names(void); /* for usage text */

/* Parse config.json text; `what` names it in diagnostics. */
int siglip_config_parse(const char *text, size_t len, const char *what,
                        SiglipConfig *out, Diag *d);
int siglip_config_read(const char *path, SiglipConfig *out, Diag *d);
/* Sizes positive and bounded, d divisible by H, the image at least one
 * patch, 0 < eps < 1. The image need not be a multiple of the patch: the
 * grid is image / patch rounded down (384 / 14 = 27 for so400m), as in
 * transformers. */
int siglip_config_validate(const SiglipConfig *c, const char *what, Diag *d);
/* A vision-only config.json (model_type siglip_vision_model) holding every
 * field; never replaces an existing file unless `overwrite`. */
int siglip_config_write(const char *path, const SiglipConfig *c, int overwrite,
                        Diag *d);

static inline int
siglip_grid(const SiglipConfig *c) /* patches per side, rounded down */
{
	return c->image / c->patch;
}
static inline int
siglip_tokens(const SiglipConfig *c) /* N */
{
	return siglip_grid(c) * siglip_grid(c);
}

#endif

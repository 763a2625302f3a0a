/*
 * siglip_quant.h - quantized SigLIP checkpoints (docs/quantization.md "The
 * quantized checkpoint"): the Hugging Face tensors with each dense GEMM's
 * weight either kept (F16, F32 or BF16) or stored as FP8 codes
 * (F8_E4M3FNUZ = F143, F8_E5M2FNUZ = F152) with a power-of-two scale and,
 * optionally, a per-output-channel scale tensor "<weight>_scale" (F32
 * [out]) or per-K-block scales "<weight>_kscale" (F32 [out, blocks]); the
 * scales and the activations' formats and scales in the
 * safetensors metadata under "ipu.quant", a JSON object:
 *
 *   {"version": 1, "methods": "...", "calibration": "...",
 *    "activations": {"qkv": {"format": "F143", "scale": -2}, ...,
 *                    "embed": "f16", ...},
 *    "weights": {"<name>": {"format": "F143", "scale": -9,
 *                           "channel_scales": true}, "<name>": "f16", ...}}
 *
 * A weight element's value is decode(code) x 2^scale (x its row's channel
 * scale) (x its row's and column block's K-block scale, "k_block": B
 * columns a block). The head's in_proj_weight holds q, k and v: its scale is a
 * list of three, one per part. siglip_quant_read checks all of it against the
 * config and names the first problem.
 */
#ifndef IPU_SIGLIP_QUANT_H
#define IPU_SIGLIP_QUANT_H

#include "siglip_graph.h"
#include "siglip_weights.h"

#define SIGLIP_QUANT_KEY "ipu.quant"

/* One dense GEMM weight of the checkpoint. */
typedef struct {
	char name[SIGLIP_MAX_NAME]; /* the checkpoint tensor */
	SiglipGemm pos;             /* the position whose activation it reads */
	int layer;                  /* encoder layer, -1 outside them */
	int parts;    /* 3 for the head's in_proj_weight, else 1 */
	DType dtype;  /* DT_F16 (kept), DT_F8_F143, DT_F8_F152 */
	int scale[3]; /* f8: 2^scale, per part */
	int channel;  /* f8: "<name>_scale" F32 [out] multiplies */
	/* f8: > 0 (a multiple of 32): a scale per row and block of
	 * k_block input columns, "<name>_kscale" F32 [out, K / k_block
	 * rounded up] multiplies ("k_block") */
	int k_block;
} SiglipQWeight;

typedef struct {
	SiglipQWeight *weight; /* siglip_dense_weights' order */
	int nweight;
	/* each position's activation: DT_F16 (not cast) or an f8 format,
	 * with its scale */
	DType act[SIGLIP_GEMMS];
	int act_scale[SIGLIP_GEMMS];
	char *methods, *calibration; /* what made it (may be NULL) */
} SiglipQuant;

/* The dense GEMM weights of a config, as SiglipQWeight rows with dtype
 * DT_F16 (kept), in checkpoint order; *out malloc'd, returns the count. */
int siglip_dense_weights(const SiglipConfig *c, SiglipQWeight **out);
/* The weight named `name` in q, or NULL. */
const SiglipQWeight *siglip_quant_find(const SiglipQuant *q, const char *name);

/* 1 if f carries the "ipu.quant" metadata. */
int siglip_is_quantized(const StFile *f);
/* Parse f's policy and check every tensor against it and the config:
 * each expected tensor present with its shape; the quantized weights in
 * the policy's FP8 dtype, the kept ones and every other tensor in F32, F16
 * or BF16; a channel-scale tensor for exactly the weights that say so,
 * F32 [out], finite and positive; scales in -32..31; an activation entry
 * for every position with an f8 weight; no FP8 NaN code (0x80). */
int siglip_quant_read(const SiglipConfig *c, const StFile *f, const char *what,
                      SiglipQuant *q, Diag *d);
/* The policy as the metadata's JSON text (malloc'd). */
char *siglip_quant_json(const SiglipQuant *q);
void siglip_quant_free(SiglipQuant *q);

/* The name of a weight's channel-scale tensor ("<name>_scale"). */
void siglip_quant_scale_name(const char *weight, char *out, size_t n);
/* The name of a weight's K-block-scale tensor ("<name>_kscale"). */
void siglip_quant_kscale_name(const char *weight, char *out, size_t n);

#endif

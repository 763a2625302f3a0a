/*
 * siglip_weights.h - the tensors of a SigLIP vision tower checkpoint as
 * Hugging Face names them (model.md 3): the list a config implies, and the
 * check of a safetensors file against it.
 */
#ifndef IPU_SIGLIP_WEIGHTS_H
#define IPU_SIGLIP_WEIGHTS_H

#include "safetensors.h"
#include "siglip_config.h"

/* What a tensor is, which sets how the generator draws it. */
typedef enum {
	SW_LINEAR,   /* [out, in] matmul weight */
	SW_CONV,     /* [d, C, P, P] patch embedding */
	SW_POSITION, /* [N, d] position embedding */
	SW_PROBE,    /* [1, 1, d] MAP head query */
	SW_BIAS,
	SW_LN_WEIGHT,
	SW_LN_BIAS,
} SiglipKind;

enum { SIGLIP_MAX_NAME = 96, SIGLIP_MAX_RANK = 4 };

typedef struct {
	char name[SIGLIP_MAX_NAME];
	SiglipKind kind;
	int rank;
	uint64_t shape[SIGLIP_MAX_RANK];
} SiglipTensor;

/* What siglip_check found. */
typedef struct {
	size_t ntensor;  /* vision tensors, all expected */
	uint64_t params; /* their elements */
	uint64_t bytes;  /* their data */
	StDtype dtype;   /* the one dtype they share */
	size_t nignored; /* text-tower tensors of a full SiglipModel file */
} SiglipCheck;

/* siglip_weights.c */
/* The expected tensors in checkpoint order (embeddings, layers, post
 * LayerNorm, head); *out is malloc'd. Returns the count, 16 L + 16 with the
 * head. */
size_t siglip_tensors(const SiglipConfig *c, SiglipTensor **out);
uint64_t siglip_tensor_elements(const SiglipTensor *t);

/* Every expected tensor present with its shape, all in one float dtype
 * (F32, F16 or BF16, that of the patch embedding), nothing unexpected:
 * tensors of a full SiglipModel's text tower (text_model.*, logit_scale,
 * logit_bias) are counted as ignored. Reports the first problem by name
 * with expected and found values. `sum` may be NULL. */
int siglip_check(const SiglipConfig *c, const StFile *f, const char *what,
                 SiglipCheck *sum, Diag *d);

#endif

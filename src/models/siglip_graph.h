/* siglip_graph.h - the SigLIP vision tower as a graph, and the host-side
 * steps around it (see siglip_graph.c and siglip_run.c). */
#ifndef IPU_SIGLIP_GRAPH_H
#define IPU_SIGLIP_GRAPH_H

#include "../graph/graph.h"
#include "../target/chip.h"
#include "siglip_config.h"

/* The tower for `batch` images computing in dtype (f32 or f16), as the
 * graph text form; output "pooled" [batch, d] (or "last" [batch N, d]
 * without the head). Caller frees. */
char *siglip_graph_text(const SiglipConfig *c, int batch, DType dtype);
/* The checkpoint tensor a graph weight comes from (ckpt), and for the
 * head's split in_proj the part (0 q, 1 k, 2 v; rows part d .. part d + d
 * - 1), else -1. */
int siglip_weight_source(const char *graph_name, char *ckpt, size_t len,
                         int *part);
/* Pixel values [batch, channels, image, image] to the graph's patches
 * [batch N, channels P P] (pixels past the last whole patch are unused). */
void siglip_patches(const SiglipConfig *c, int batch, const float *pixels,
                    float *out);

typedef struct {
	const char *weights, *config; /* safetensors, config.json */
	const char *const *images;    /* PNG/JPEG files, or */
	int nimages;
	const char *pixels; /* a .npy of pixel values [B, 3, S, S] (f32) */
	DType dtype;        /* compute: f32 or f16 */
	const Chip *chip;   /* NULL: the C600 */
	int threads;        /* emulator host threads */
} SiglipRun;

typedef struct {
	int batch, d;
	float *embedding; /* batch x d, malloc'd */
	uint64_t cycles, predicted_cycles, macs;
	double mfu, compile_ms, host_seconds, chip_seconds;
	uint32_t tiles, peak_tile_bytes;
} SiglipResult;

/* Load, check, compile, run on the emulator, read the embedding. */
int siglip_run(const SiglipRun *r, SiglipResult *out, Diag *d);
void siglip_result_free(SiglipResult *r);

#endif

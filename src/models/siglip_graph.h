/* siglip_graph.h - the SigLIP vision tower as a graph, and the host-side
 * steps around it (see siglip_graph.c and siglip_run.c). */
#ifndef IPU_SIGLIP_GRAPH_H
#define IPU_SIGLIP_GRAPH_H

#include <stdio.h>

#include "../runner/runner.h"
#include "../graph/graph.h"
#include "../target/chip.h"
#include "safetensors.h"
#include "siglip_config.h"

/* The dense GEMMs that an f8 tower computes in f8, by the activation they
 * read: one activation scale each, shared by every layer (a layer's q, k
 * and v read the same LayerNorm output; so do the head's k and v). */
typedef enum {
	SIGLIP_QKV,
	SIGLIP_OUT, /* attention out projection */
	SIGLIP_FC1,
	SIGLIP_FC2,
	SIGLIP_HEAD_Q, /* the MAP head's q from the probe */
	SIGLIP_HEAD_KV,
	SIGLIP_HEAD_OUT,
	SIGLIP_HEAD_FC1,
	SIGLIP_HEAD_FC2,
	/* an encoder layer's QK^T in the f8 tower: q and k, each its own
	 * scale (a quantized checkpoint's tower keeps QK^T in f16) */
	SIGLIP_Q,
	SIGLIP_K,
	SIGLIP_EMBED, /* the patch embedding: f16 unless a quantized
	                 checkpoint (siglip_quant.h) says otherwise */
	SIGLIP_GEMMS
} SiglipGemm;

/* Position names for --f8-scales ("qkv", "out", ..., "head.fc2"). */
extern const char *const siglip_gemm_names[SIGLIP_GEMMS];

/* The tower's compute types. f32 and f16: everything in that type. f8
 * (DT_F8_F143): the dense GEMMs take F143 operands, the weight with its own
 * scale (weight_scale) and the activation cast on the device with its
 * position's act_scale; their results and everything else are f16. */
/* A dense GEMM weight's type in an f8 tower: DT_F16 (the GEMM runs in
 * f16, its input is not cast) or an f8 format with its scale; `channel`:
 * a vector "<weight>_scale" [out] (f16) multiplies the product before the
 * bias is added (per-output-channel scales, docs/quantization.md);
 * `k_block` > 0: the GEMM runs by blocks of k_block input columns, block
 * b's weight "<weight>.kb<b>" [out, k_block] (the last block shorter) and
 * its product multiplied by the vector "<weight>.ks<b>" [out] (f16), the
 * blocks summed (per-K-block scales). */
typedef struct {
	DType dtype;
	int scale;
	int channel;
	int k_block;
} SiglipWType;

typedef struct {
	DType dtype;
	int act_scale[SIGLIP_GEMMS];
	int act_f152[SIGLIP_GEMMS]; /* 1: the cast is to F152, not F143 */
	/* f8: graph weight `name`'s scale (NULL: 2^0 for every weight) */
	int (*weight_scale)(void *ctx, const char *name);
	/* f8, optional, overrides weight_scale: graph weight `name`'s whole
	 * type (without it the patch embedding stays f16, every other dense
	 * GEMM is F143 with weight_scale's scale) */
	void (*weight_type)(void *ctx, const char *name, SiglipWType *t);
	void *ctx;
	int unroll; /* 1: no `repeat` (the layers' types differ) */
	/* the encoder layers run on this many groups of batch / groups
	 * images each, layer by layer, in one `repeat ... groups` (0 or 1:
	 * the whole batch at once; must divide the batch) */
	int groups;
	/* an encoder layer's attention in rounds of at most this many
	 * (image, head) pairs (0: SIGLIP_ROUND_PAIRS) */
	int round_pairs;
	/* f8 without weight_type: 1 the LayerNorms whose one reader is a
	 * linear layer (LN1 -> qkv, LN2 -> fc1, the post-LayerNorm -> the
	 * head's k and v, the head's -> its fc1) are norms, their gamma and
	 * beta folded by the host into that layer's weight and bias
	 * (siglip_fold_source); -1 they keep them; 0 SIGLIP_FOLD_DEFAULT */
	int fold_ln;
} SiglipPrecision;

/* fold_ln's default (docs/siglip.md "The LayerNorms folded") */
enum { SIGLIP_FOLD_DEFAULT = 1 };
/* 1 if the tower of p folds its LayerNorms (siglip_graph_text) */
int siglip_folds(const SiglipPrecision *p);
/* The host's side of the fold, for graph weight `gname` of a folding
 * tower: SIGLIP_FOLD_WEIGHT, its values are the checkpoint's W diag(gamma)
 * (each column times LayerNorm `ln`'s "<ln>.weight"); SIGLIP_FOLD_BIAS,
 * b + W beta with W graph weight `w` as the checkpoint has it and beta
 * "<ln>.bias"; 0: not folded (ln and w not set). */
enum { SIGLIP_FOLD_WEIGHT = 1, SIGLIP_FOLD_BIAS = 2 };
int siglip_fold_source(const char *gname, char *ln, size_t nln, char *w,
                       size_t nw);
/* w [rows, cols] = w diag(gamma) in place: each product in f64, rounded
 * once to f32 (the product of two f32 is exact in f64) */
void siglip_fold_weight(float *w, size_t rows, size_t cols, const float *gamma);
/* b [rows] = b + w beta in place, w [rows, cols]: the sum in f64, rounded
 * once to f32 */
void siglip_fold_bias(float *b, const float *w, size_t rows, size_t cols,
                      const float *beta);

/* Batch 4 of So400m (16 heads) runs its 64 pairs at once and places;
 * batch 8's 128 at once hold twice the scores (docs/bench-siglip.md). */
enum { SIGLIP_ROUND_PAIRS = 64 };

/* The tower for `batch` images, as the graph text form; output "pooled"
 * [batch, d] (or "last" [batch N, d] without the head). Caller frees. */
char *siglip_graph_text(const SiglipConfig *c, int batch,
                        const SiglipPrecision *p);
/* Where a graph weight comes from: n checkpoint tensors, concatenated
 * by rows (an encoder layer's fused qkv_proj: its q_proj, k_proj and
 * v_proj), and for the head's split in_proj the part (0 q, 1 k, 2 v; rows
 * part d .. part d + d - 1), else -1; `block` >= 0 (a K block of a
 * per-K-block-scaled weight, "<w>.kb<b>" or "<w>.ks<b>"): of those rows
 * the columns of block `block`, of the weights (name[], kscale 0) or of
 * their K-block scales ("<name>_kscale", kscale 1: column `block`). */
typedef struct {
	char name[3][256];
	int n, part;
	int block, kscale;
} SiglipSource;
void siglip_weight_source(const char *graph_name, SiglipSource *s);
/* Pixel values [batch, channels, image, image] to the graph's patches
 * [batch N, channels P P] (pixels past the last whole patch are unused). */
void siglip_patches(const SiglipConfig *c, int batch, const float *pixels,
                    float *out);

typedef struct {
	const char *weights, *config; /* safetensors, config.json */
	const char *const *images;    /* PNG/JPEG files, or */
	int nimages;
	const char *pixels; /* a .npy of pixel values [B, 3, S, S] (f32) */
	DType dtype;        /* compute: f32, f16 or f8_f143 (f8 GEMMs) */
	/* the user chose dtype, or gave --f8-scales (a quantized checkpoint,
	 * siglip_quant.h, brings its own policy and refuses both) */
	int dtype_given, scales_given;
	/* f8: activation scales set by the user (set[i] nonzero), the others
	 * from siglip_f8_bounds */
	int act_scale[SIGLIP_GEMMS], act_set[SIGLIP_GEMMS];
	const Chip *chip; /* NULL: the C600 */
	int threads;      /* emulator host threads */
	/* where the placement report goes if the program does not fit the
	 * chip's memory (NULL: nowhere; the error names the worst tile) */
	FILE *place_report;
	/* runner_build's package cache (NULL: always compile) */
	const char *cache_dir;
	uint64_t max_cycles;           /* runner_run's; 0: the default */
	const RunnerObserver *observe; /* the run's observer, or NULL */
	/* the device of the run at nominal timing (NULL: the emulator);
	 * the bounds' runs are the emulator's */
	const struct RunnerDevice *device;
	/* the cycles of the same program at the timing profile's bounds
	 * (docs/fidelity.md): SIGLIP_RANGE_PREDICT lowers the program's plans
	 * (as its compile chose them) for the profile with every rule at its
	 * fast and at its slow bound (runner_build_at) and takes the cost
	 * model's cycles (exact against emulation); SIGLIP_RANGE_EMULATE runs
	 * those programs too */
	int range;
	/* compile only (and the range, if asked, predicted) */
	int compile_only;
	int round_pairs; /* SiglipPrecision's (0: the default) */
	/* images a run (0: the whole batch): one program for micro_batch
	 * images, run ceil(batch / micro_batch) times, the last run's
	 * missing images copies of the batch's last image whose outputs are
	 * dropped (docs/siglip.md "Micro-batches"); IPU_EINVAL if below 1
	 * or above the batch */
	int micro_batch;
	/* SiglipPrecision's groups (0 or 1: none): the layers on groups of
	 * a run's images, which it must divide */
	int groups;
	int fold_ln; /* SiglipPrecision's (0: SIGLIP_FOLD_DEFAULT) */
	/* lower_b_wrap (CompileOptions.no_b_wrap): -1 off, else on (the
	 * default) */
	int b_wrap;
} SiglipRun;

enum { SIGLIP_RANGE_NONE, SIGLIP_RANGE_PREDICT, SIGLIP_RANGE_EMULATE };

typedef struct {
	int batch, d;
	int micro_batch, runs; /* images a run, and the runs */
	float *embedding;      /* batch x d, malloc'd */
	/* cycles: the device's over every run (host transfers before and
	 * after a run are not counted); predicted_cycles: runs x the
	 * program's, run_predicted_cycles; macs: the batch's images' (not
	 * the padding's) */
	uint64_t cycles, predicted_cycles, run_predicted_cycles, macs;
	/* host_seconds: the runs' emulation; load_seconds: loading the
	 * package and writing the weights and inputs, every run */
	double mfu, compile_ms, host_seconds, load_seconds, chip_seconds;
	uint32_t tiles, peak_tile_bytes;
	int cached; /* the package came from the cache */
	/* f8: the activation scales used (have_scales: chosen, even if
	 * the run failed later) */
	int act_scale[SIGLIP_GEMMS], have_scales;
	/* the checkpoint was quantized (its policy ran); its layers did not
	 * run as one loop body (their types differ) */
	int quantized, unrolled;
	/* range: the program's cycles with every timing rule at its fast
	 * and at its slow bound (emulated or predicted as SiglipRun.range
	 * says; 0 when not asked for, or when the program does not fit at
	 * that bound: range_unfit says why, "" otherwise) */
	uint64_t cycles_fast, cycles_slow;
	char range_unfit[1200];
} SiglipResult;

/* A batch's pixel values [batch, C, S, S] (malloc'd): the images decoded
 * and preprocessed as SigLIP's processor does, or a .npy of them. */
int siglip_load_pixels(const SiglipConfig *c, const char *const *images,
                       int nimages, const char *pixels, float **px, int *batch,
                       Diag *d);

/* Load, check, compile, run on the emulator, read the embedding. */
int siglip_run(const SiglipRun *r, SiglipResult *out, Diag *d);
void siglip_result_free(SiglipResult *r);

/* siglip_fp8.c */
/* Each GEMM position's activation scale from bounds that hold for any
 * input (so nothing is clipped): a LayerNorm output's |y_i| <= |g_i|
 * sqrt(d - 1) + |b_i|, a linear of it |W_j . y| + |c_j| <= |W_j|_2 |y|_2 +
 * |c_j|, attention outputs are convex combinations of v rows, GELU keeps
 * the bound (or -0.17); the largest over the layers. `fold` (the tower
 * folds its LayerNorms, siglip_folds): the casts after them read z, gamma
 * 1 and beta 0. */
int siglip_f8_bounds(const SiglipConfig *c, const StFile *f, int fold,
                     int scale[SIGLIP_GEMMS], Diag *d);
/* "qkv=-2,fc1=1": each named position's scale into scale[] and set[i] =
 * 1; unknown names and scales outside -32..31 are refused. */
int siglip_f8_parse_scales(const char *text, int scale[SIGLIP_GEMMS],
                           int set[SIGLIP_GEMMS], Diag *d);

#endif

/*
 * host.h - the SigLIP vision tower on the host, in f32 with OpenBLAS, for
 * quantization: calibration (hooks see every dense GEMM's input) and the
 * accuracy of a quantized tower (each GEMM's weights as the device
 * decodes them, its input rounded to the position's FP8 format and
 * scale). Internal to src/quant.
 *
 * Numerics: products summed in f32 (OpenBLAS); LayerNorm statistics and
 * softmax in f32; with `f16` every stored tensor (each op's output) is
 * rounded to f16 as the device stores it. Not bit-exact with the device
 * (its partial sums are f16, its summation order differs), close enough
 * to rank quantization choices (docs/quantization.md measures the gap).
 */
#ifndef IPU_QUANT_HOST_H
#define IPU_QUANT_HOST_H

#include "../models/siglip_graph.h"
#include "../util/fp.h"

/* A dense layer y = x W^T + b as the host runs it. */
typedef struct {
	int out, in;
	float *w; /* [out, in] as the GEMM sees it (dequantized) */
	float *b; /* [out] */
	int f8;   /* round the input to fmt at 2^scale first */
	Fp8Format fmt;
	int scale;
} HostLinear;

typedef struct {
	float *ln1_g, *ln1_b, *ln2_g, *ln2_b;
	HostLinear q, k, v, out, fc1, fc2;
} HostLayer;

typedef struct {
	SiglipConfig c;
	HostLinear embed; /* the patch embedding on patches [N, C P P] */
	float *pos;       /* [N, d] */
	HostLayer *layer;
	float *post_g, *post_b;
	float *probe; /* [d] */
	HostLinear hq, hk, hv, hout, hfc1, hfc2;
	float *hln_g, *hln_b;
	int f16; /* round stored tensors to f16 */
} HostTower;

/* Calibration hooks: input() sees each dense GEMM's input x [rows, cols]
 * before any cast, with its layer (-1 outside the encoder layers). */
typedef struct {
	void (*input)(void *ctx, int layer, SiglipGemm pos, const float *x,
	              int rows, int cols);
	void *ctx;
} HostHooks;

/* The tower's float weights from a checkpoint (siglip_check'ed). */
int host_load(HostTower *t, const SiglipConfig *c, const StFile *f, Diag *d);
void host_free(HostTower *t);
/* A deep copy (weights and settings). */
void host_copy(HostTower *dst, const HostTower *src);

/* All of it: pixels [batch, C, S, S] -> pooled [batch, d] (malloc'd). */
float *host_forward(const HostTower *t, const float *pixels, int batch,
                    const HostHooks *hk);

/* The residual stream entering each encoder layer and the head:
 * [layers + 1][batch N, d] (malloc'd), so that a tower changed only from
 * layer l on can resume from the l-th (host_forward_from). */
float *host_states(const HostTower *t, const float *pixels, int batch);
/* host_forward from h [batch N, d], the stream entering layer l (l ==
 * layers: the head): equal to host_forward's pooled [batch, d] when h is
 * host_states' l-th of a tower with the same embedding and layers < l. */
float *host_forward_from(const HostTower *t, const float *h, int l, int batch);

/* x rounded to the FP8 format's grid at 2^scale: nearest even, saturating
 * at the largest value (the device's cast with NANOO clear). */
float host_f8_round(float x, Fp8Format fmt, int scale);
/* The largest finite value of the format at 2^0 (240, 57344). */
double host_f8_max(Fp8Format fmt);

/* Cosine similarity of a[n] and b[n], in double. */
double host_cosine(const float *a, const float *b, size_t n);

#endif

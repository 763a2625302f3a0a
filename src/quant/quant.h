/*
 * quant.h - FP8 quantization of a SigLIP checkpoint on the host (`ipu
 * quant`, docs/quantization.md): calibrate on images, choose each dense
 * GEMM's weight codes and scales and each GEMM position's activation
 * scale by the chosen methods, optionally keep the fewest GEMMs in f16
 * that reach a cosine target, estimate the result's accuracy on the host
 * (host.h) and write the quantized checkpoint (siglip_quant.h) that `ipu
 * run siglip` runs directly.
 */
#ifndef IPU_QUANT_H
#define IPU_QUANT_H

#include <stdio.h>

#include "../models/siglip_quant.h"

/* Methods; combine all but tensor with channel freely. */
enum {
	QUANT_TENSOR = 1 << 0,  /* one power-of-two scale per weight: its max */
	QUANT_CHANNEL = 1 << 1, /* per-output-channel weight scales */
	QUANT_MSE = 1 << 2,     /* scales of least squared error, not the max */
	QUANT_SMOOTH = 1 << 3,  /* migrate activation outliers into weights */
	QUANT_PERCENTILE = 1 << 4, /* activation scales from a percentile */
	QUANT_GPTQ = 1 << 5,       /* weight codes by GPTQ, not nearest */
	QUANT_BIAS = 1 << 6,       /* bias correction of the weights' error */
	QUANT_FORMAT = 1 << 7,     /* F143 or F152 per tensor by error */
	QUANT_BLOCK = 1 << 8,      /* per-K-block weight scales (host only) */
};

typedef struct {
	unsigned methods;
	double alpha;      /* smooth: migration strength in [0, 1] (0.5) */
	double percentile; /* percentile: P in (0, 100] (99.99) */
	double damp;       /* gptq: dampening, a fraction of mean diag H */
	double target_cos; /* > 0: the fewest GEMMs in f16 reaching it */
	int block;         /* block: columns per K block (128) */
	FILE *log;         /* progress lines, or NULL */
} QuantOpts;

typedef struct Quantized Quantized;

/* "channel,mse" -> QUANT_CHANNEL | QUANT_MSE; names: tensor, channel, mse,
 * smooth, percentile, gptq, bias, format, block. */
int quant_parse_methods(const char *text, unsigned *out, Diag *d);

/* Quantize checkpoint f (siglip_check'ed against c) calibrating on
 * pixels [ncalib, C, S, S]. Fails (with d) only when GPTQ meets a
 * Hessian that is not positive definite (no dampening). */
int quant_siglip(const SiglipConfig *c, const StFile *f, const float *calib,
                 int ncalib, const QuantOpts *o, Quantized **out, Diag *d);
/* The chosen policy. */
const SiglipQuant *quant_policy(const Quantized *q);
/* Per image of pixels [n, C, S, S]: the cosine of the pooled embedding of
 * the quantized tower (on the host, stored tensors rounded to f16 as the
 * device does) against the float tower's (f32) into cos[n]. */
void quant_eval(const Quantized *q, const float *pixels, int n, double *cos);
/* The quantized checkpoint: f's tensors with the policy's codes, channel
 * scales, smoothed LayerNorms and the policy in the metadata. `calib`
 * describes the calibration images for the metadata. */
int quant_write(const Quantized *q, const StFile *f, const char *calib,
                const char *path, int overwrite, Diag *d);
void quant_free(Quantized *q);

#endif

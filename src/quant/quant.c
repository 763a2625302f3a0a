/*
 * quant.c - FP8 quantization of a SigLIP checkpoint (quant.h).
 *
 * The float tower (after smoothing) and the quantized one live side by
 * side as HostTowers; a policy weight (siglip_dense_weights' order) maps
 * to one HostLinear, or three for the head's in_proj_weight (q, k, v).
 * Weight scales are shared by every layer's weight at one GEMM position
 * (and by q, k and v, which run as one fused GEMM), so that the layers
 * still run as one loop body unless the mixed-precision search keeps
 * some of them in f16.
 */
#include "quant.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

/* LAPACK (in OpenBLAS): Cholesky factor and inverse, column-major. */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda,
             int *info);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda,
             int *info);

struct Quantized {
	SiglipConfig c;
	SiglipQuant pol;
	HostTower fl; /* float weights (smoothed) */
	HostTower qt; /* as the device computes: decoded weights, f8 inputs */
	uint8_t **codes; /* [nweight]: the checkpoint tensor's codes, or NULL */
	float **chan;    /* [nweight]: channel scales [rows], or NULL */
	float **kscale; /* [nweight]: K-block scales [parts][blocks], or NULL */
	unsigned methods;
	QuantOpts o;
	Fp8Format wfmt[SIGLIP_GEMMS][3]; /* each weight group's format */
	Fp8Format afmt[SIGLIP_GEMMS];    /* each activation's format */
	/* per GEMM input group (layer, position; group()): the Hessian
	 * X^T X (gptq, upper triangle) and the column means (bias) */
	double **hess, **mean;
};

static const struct {
	const char *name;
	unsigned bit;
} method_names[] = {
    {"tensor", QUANT_TENSOR},
    {"channel", QUANT_CHANNEL},
    {"mse", QUANT_MSE},
    {"smooth", QUANT_SMOOTH},
    {"percentile", QUANT_PERCENTILE},
    {"gptq", QUANT_GPTQ},
    {"bias", QUANT_BIAS},
    {"format", QUANT_FORMAT},
    {"block", QUANT_BLOCK},
};
enum { NMETHODS = sizeof method_names / sizeof method_names[0] };

int
quant_parse_methods(const char *text, unsigned *out, Diag *d)
{
	*out = 0;
	for (const char *s = text; *s;) {
		size_t len = strcspn(s, ",");
		int k = 0;
		while (k < NMETHODS && (strlen(method_names[k].name) != len ||
		                        strncmp(method_names[k].name, s, len)))
			k++;
		if (k == NMETHODS)
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "method '%.*s': not one of tensor, "
			    "channel, mse, smooth, percentile, gptq, "
			    "bias, format, block",
			    (int)len, s);
		*out |= method_names[k].bit;
		s += len + (s[len] == ',');
	}
	if (!*out)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0, "no method given");
	if ((*out & QUANT_TENSOR) && (*out & QUANT_CHANNEL))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "methods tensor and channel are two kinds of "
		                "weight scale: one of them");
	if ((*out & QUANT_BLOCK) &&
	    (*out & (QUANT_MSE | QUANT_FORMAT | QUANT_CHANNEL)))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "method block with mse, format or channel: "
		                "not built (block scales each row's blocks; "
		                "the others' weight scale searches do not "
		                "know blocks)");
	return IPU_OK;
}

/* The methods as text (a static buffer's). */
static const char *
quant_methods_name(unsigned methods)
{
	static char buf[64];
	size_t at = 0;
	buf[0] = 0;
	if (!(methods & QUANT_CHANNEL))
		methods |= QUANT_TENSOR;
	for (int k = 0; k < NMETHODS; k++)
		if (methods & method_names[k].bit)
			at += (size_t)snprintf(buf + at, sizeof buf - at,
			                       "%s%s", at ? "," : "",
			                       method_names[k].name);
	return buf;
}

const SiglipQuant *
quant_policy(const Quantized *q)
{
	return &q->pol;
}

/* The HostLinears of policy weight w in tower t (3 for in_proj). */
static int
linears(HostTower *t, const SiglipQWeight *w, HostLinear *out[3])
{
	if (w->pos == SIGLIP_EMBED) {
		out[0] = &t->embed;
		return 1;
	}
	if (w->layer >= 0) {
		HostLayer *y = &t->layer[w->layer];
		out[0] = strstr(w->name, ".q_proj.")    ? &y->q
		         : strstr(w->name, ".k_proj.")  ? &y->k
		         : strstr(w->name, ".v_proj.")  ? &y->v
		         : strstr(w->name, ".out_proj") ? &y->out
		         : strstr(w->name, ".fc1.")     ? &y->fc1
		                                        : &y->fc2;
		return 1;
	}
	switch (w->pos) {
	case SIGLIP_HEAD_KV:
		out[0] = &t->hq;
		out[1] = &t->hk;
		out[2] = &t->hv;
		return 3;
	case SIGLIP_HEAD_OUT:
		out[0] = &t->hout;
		return 1;
	case SIGLIP_HEAD_FC1:
		out[0] = &t->hfc1;
		return 1;
	default:
		out[0] = &t->hfc2;
		return 1;
	}
}

/* The position whose activation part k of w reads. */
static SiglipGemm
reads(const SiglipQWeight *w, int k)
{
	return w->parts == 3 && k == 0 ? SIGLIP_HEAD_Q : w->pos;
}

/* The GEMM input group of (layer, position): each encoder layer's four,
 * then the head's five. */
static int
group(const SiglipConfig *c, int layer, SiglipGemm pos)
{
	return layer >= 0 ? layer * 4 + (int)pos
	                  : c->layers * 4 + (int)(pos - SIGLIP_HEAD_Q);
}

static int
ngroups(const SiglipConfig *c)
{
	return c->layers * 4 + 5;
}

/* The smallest scale (-32..31) at which fmt holds max_abs without
 * saturating (fp_f8_f143_scale for either format). */
static int
fmt_scale(double max_abs, Fp8Format fmt)
{
	if (!(max_abs > 0))
		return 0;
	double m = host_f8_max(fmt);
	int s = (int)ceil(log2(max_abs / m));
	while (ldexp(m, s) < max_abs)
		s++;
	while (ldexp(m, s - 1) >= max_abs)
		s--;
	return s < -32 ? -32 : s > 31 ? 31 : s;
}

/* ---- calibration ---- */

enum { ACT_CANDIDATES = 4, NSCALES = 64 };

typedef struct {
	int pass; /* 0: maxima (and channel maxima), 1: squared errors */
	double max[SIGLIP_GEMMS];
	/* percentile: the count of elements by the scale each needs, per
	 * format (index scale + 32; zeros at 0), and of all elements */
	double need[2][SIGLIP_GEMMS][NSCALES], count[SIGLIP_GEMMS];
	int smax[SIGLIP_GEMMS]; /* F143: the first candidate */
	int s152[SIGLIP_GEMMS]; /* format: F152's scale */
	double sse[SIGLIP_GEMMS][ACT_CANDIDATES], sse152[SIGLIP_GEMMS];
	float *chmax; /* [layers][2 (qkv, fc1)][d], or NULL */
	int d;
	const SiglipConfig *c;
	double **hess, **sum; /* per group (pass 0; NULL: not wanted) */
	double *rows;         /* per group: the rows summed */
	int *cols;            /* per group: the columns */
	double *xd;           /* scratch for x in double */
	int percentile, format;
} Calib;

/* Pass 0's sums per GEMM input group: X^T X (upper triangle) and the
 * column sums. */
static void
calib_sums(Calib *k, int layer, SiglipGemm pos, const float *x, int rows,
           int cols)
{
	int g = group(k->c, layer, pos);
	size_t n = (size_t)rows * cols;
	k->rows[g] += rows;
	k->cols[g] = cols;
	if (k->sum) {
		if (!k->sum[g])
			k->sum[g] = xcalloc((size_t)cols, sizeof *k->sum[g]);
		for (size_t i = 0; i < n; i++)
			k->sum[g][i % (size_t)cols] += x[i];
	}
	if (k->hess) {
		if (!k->hess[g])
			k->hess[g] =
			    xcalloc((size_t)cols * cols, sizeof *k->hess[g]);
		k->xd = xrealloc(k->xd, n * sizeof *k->xd);
		for (size_t i = 0; i < n; i++)
			k->xd[i] = x[i];
		cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, cols, rows,
		            1.0, k->xd, cols, 1.0, k->hess[g], cols);
	}
}

static void
calib_input(void *ctx, int layer, SiglipGemm pos, const float *x, int rows,
            int cols)
{
	Calib *k = ctx;
	size_t n = (size_t)rows * cols;
	if (k->pass == 0) {
		for (size_t i = 0; i < n; i++)
			k->max[pos] = fmax(k->max[pos], fabs(x[i]));
		for (size_t i = 0; k->percentile && i < n; i++)
			for (int f = 0; f < 2; f++) {
				double a = fabs(x[i]);
				k->need[f][pos]
				       [a > 0 ? fmt_scale(a, (Fp8Format)f) + 32
				              : 0] += 1;
			}
		k->count[pos] += (double)n;
		if ((k->hess || k->sum) && pos != SIGLIP_EMBED)
			calib_sums(k, layer, pos, x, rows, cols);
		int slot = pos == SIGLIP_QKV ? 0 : pos == SIGLIP_FC1 ? 1 : -1;
		if (k->chmax && layer >= 0 && slot >= 0) {
			float *m = k->chmax + ((size_t)layer * 2 + slot) * k->d;
			for (int r = 0; r < rows; r++)
				for (int j = 0; j < cols; j++)
					m[j] = fmaxf(
					    m[j],
					    fabsf(x[(size_t)r * cols + j]));
		}
		return;
	}
	for (int c = 0; c < ACT_CANDIDATES; c++) {
		int s = k->smax[pos] - c;
		double e = 0;
		for (size_t i = 0; i < n; i++) {
			double r = host_f8_round(x[i], FP8_F143, s) - x[i];
			e += r * r;
		}
		k->sse[pos][c] += e;
	}
	double e = 0;
	for (size_t i = 0; k->format && i < n; i++) {
		double r = host_f8_round(x[i], FP8_F152, k->s152[pos]) - x[i];
		e += r * r;
	}
	k->sse152[pos] += e;
}

/* percentile: the smallest scale at which at least P% of pos's elements
 * fit fmt (the nearest-rank percentile of |x|'s scale). */
static int
pct_scale(const Calib *k, SiglipGemm pos, Fp8Format fmt, double p)
{
	double rank = fmax(ceil(p * k->count[pos] / 100), 1), cum = 0;
	for (int i = 0; i < NSCALES; i++)
		if ((cum += k->need[fmt][pos][i]) >= rank)
			return i - 32;
	return 31;
}

static void
calibrate(const HostTower *t, const float *px, int n, Calib *k)
{
	HostHooks hk = {.input = calib_input, .ctx = k};
	size_t per = (size_t)t->c.channels * t->c.image * t->c.image;
	for (int i = 0; i < n; i++)
		free(host_forward(t, px + i * per, 1, &hk));
}

/* ---- smoothing (SmoothQuant) ---- */

/* Divide LayerNorm (g, b)'s channel j by s_j and multiply column j of the
 * weights it feeds by s_j, s_j = amax_j^alpha / wmax_j^(1 - alpha). */
static void
smooth(float *g, float *b, HostLinear **w, int nw, const float *amax, int d,
       double alpha)
{
	for (int j = 0; j < d; j++) {
		double wmax = 0;
		for (int k = 0; k < nw; k++)
			for (int o = 0; o < w[k]->out; o++)
				wmax = fmax(
				    wmax,
				    fabs(w[k]->w[(size_t)o * w[k]->in + j]));
		if (!(amax[j] > 0) || !(wmax > 0))
			continue;
		double s = pow(amax[j], alpha) / pow(wmax, 1 - alpha);
		s = fmin(fmax(s, 1e-4), 1e4);
		g[j] = (float)(g[j] / s);
		b[j] = (float)(b[j] / s);
		for (int k = 0; k < nw; k++)
			for (int o = 0; o < w[k]->out; o++)
				w[k]->w[(size_t)o * w[k]->in + j] *= (float)s;
	}
}

/* ---- weights ---- */

static double
f16_value(double x)
{
	unsigned fl = 0;
	return fp_f16_to_f64(fp_f64_to_f16(x, FP_RNE, 0, FP_OV_SAT, &fl));
}

static double
decode(uint8_t q, int scale, Fp8Format fmt)
{
	return fp_f8_to_f64(q, fmt, scale);
}

static uint8_t
encode(double x, int scale, Fp8Format fmt)
{
	unsigned fl = 0;
	return fp_f64_to_f8_nr(x, fmt, scale, FP_OV_SAT, &fl);
}

/* Squared error of w[n] / c coded at 2^s, decoded times c. */
static double
sse(const float *w, size_t n, int s, double c, Fp8Format fmt)
{
	double e = 0;
	for (size_t i = 0; i < n; i++) {
		double r = decode(encode(w[i] / c, s, fmt), s, fmt) * c - w[i];
		e += r * r;
	}
	return e;
}

/* Row row[in]'s channel scale at 2^s in fmt (1 without channel scales)
 * and its squared error with nearest rounding into *err: the max's, or
 * with mse the best of it times 20/20 ... 10/20. */
static double
row_scale(const Quantized *q, const float *row, size_t in, int s, Fp8Format fmt,
          double *err)
{
	if (!(q->methods & QUANT_CHANNEL)) {
		*err = sse(row, in, s, 1, fmt);
		return 1;
	}
	double m = 0;
	for (size_t k = 0; k < in; k++)
		m = fmax(m, fabs(row[k]));
	double c0 = m > 0 ? m / ldexp(host_f8_max(fmt), s) : 1;
	double c = fmax(f16_value(c0), 0x1p-14);
	*err = sse(row, in, s, c, fmt);
	for (int f = 19; (q->methods & QUANT_MSE) && f >= 10; f--) {
		double cf = fmax(f16_value(c0 * f / 20), 0x1p-14);
		double e = sse(row, in, s, cf, fmt);
		if (e < *err) {
			*err = e;
			c = cf;
		}
	}
	return c;
}

/* The squared error of weight group (pos, part) coded at 2^s in fmt with
 * nearest rounding (and its channel scales). */
static double
group_err(const Quantized *q, SiglipGemm pos, int part, int s, Fp8Format fmt)
{
	double e = 0;
	for (int i = 0; i < q->pol.nweight; i++) {
		const SiglipQWeight *w = &q->pol.weight[i];
		HostLinear *l[3];
		linears((HostTower *)&q->fl, w, l);
		if (w->pos != pos)
			continue;
		const HostLinear *x = l[w->parts == 3 ? part : 0];
		for (int o = 0; o < x->out; o++) {
			double r;
			row_scale(q, x->w + (size_t)o * x->in, (size_t)x->in, s,
			          fmt, &r);
			e += r;
		}
	}
	return e;
}

/* One scale group: every weight at GEMM position pos (part `part` of the
 * head's in_proj_weight). Its scale: the max's, or with mse (per tensor)
 * the best of it and the two below; with format, F143 or F152, the one
 * of less squared error (nearest rounding), into *fmt. */
static int
group_scale(Quantized *q, SiglipGemm pos, int part, int formats, Fp8Format *fmt)
{
	double max = 0;
	for (int i = 0; i < q->pol.nweight; i++) {
		SiglipQWeight *w = &q->pol.weight[i];
		HostLinear *l[3];
		linears(&q->fl, w, l);
		if (w->pos != pos)
			continue;
		HostLinear *x = l[w->parts == 3 ? part : 0];
		for (size_t k = 0; k < (size_t)x->out * x->in; k++)
			max = fmax(max, fabs(x->w[k]));
	}
	int nf = formats, best = 0;
	double beste = INFINITY;
	*fmt = FP8_F143;
	for (int f = 0; f < nf; f++) {
		int smax = fmt_scale(max, (Fp8Format)f);
		int low =
		    (q->methods & QUANT_MSE) && !(q->methods & QUANT_CHANNEL)
		        ? smax - 2
		        : smax;
		for (int s = smax; s >= low; s--) {
			double e =
			    nf > 1 || low < smax
			        ? group_err(q, pos, part, s, (Fp8Format)f)
			        : 0;
			if (e < beste) {
				beste = e;
				best = s;
				*fmt = (Fp8Format)f;
			}
		}
	}
	return best;
}

/* GPTQ (Frantar et al. 2022, "GPTQ: accurate post-training quantization
 * for generative pre-trained transformers"): the columns of w [out, in]
 * coded in order, each one's error, weighted by the inverse Hessian's
 * Cholesky factor, carried into the columns not yet coded; blocks of
 * GPTQ_BLOCK columns, the rest updated once per block. h is X^T X
 * (upper triangle; dampened here by damp times its mean diagonal).
 * Row o, column i is coded at 2^s times cm[o nb + i / bsz] (channel
 * scales: nb 1, bsz in). Codes into codes[out in], values into deq. */
enum { GPTQ_BLOCK = 128 };

static int
gptq(const HostLinear *src, const double *h, const double *cm, int nb, int bsz,
     int s, Fp8Format fmt, double damp, uint8_t *codes, float *deq, Diag *d)
{
	int out = src->out, n = src->in, info = 0;
	size_t nn = (size_t)n * n;
	double *u = xmalloc(nn * sizeof *u),
	       *w = xmalloc((size_t)out * n * sizeof *w),
	       *err = xmalloc((size_t)out * GPTQ_BLOCK * sizeof *err);
	memcpy(u, h, nn * sizeof *u);
	for (size_t i = 0; i < (size_t)out * n; i++)
		w[i] = src->w[i];
	double diag = 0;
	for (int j = 0; j < n; j++) {
		if (u[(size_t)j * n + j] == 0) { /* a column never used */
			u[(size_t)j * n + j] = 1;
			for (int o = 0; o < out; o++)
				w[(size_t)o * n + j] = 0;
		}
		diag += u[(size_t)j * n + j];
	}
	for (int j = 0; j < n; j++)
		u[(size_t)j * n + j] += damp * diag / n;
	/* row-major upper = column-major lower: H = L L^T, then H^-1, then
	 * H^-1 = L L^T again, whose L^T is the upper factor U wanted */
	const char lo = 'L';
	dpotrf_(&lo, &n, u, &n, &info);
	if (!info)
		dpotri_(&lo, &n, u, &n, &info);
	if (!info)
		dpotrf_(&lo, &n, u, &n, &info);
	if (info) {
		free(u);
		free(w);
		free(err);
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "gptq: the Hessian of a %d x %d weight's "
		                "inputs is not positive definite (column %d); "
		                "give a dampening --damp above 0",
		                out, n, info);
	}
	for (int b0 = 0; b0 < n; b0 += GPTQ_BLOCK) {
		int b1 = b0 + GPTQ_BLOCK < n ? b0 + GPTQ_BLOCK : n;
		for (int i = b0; i < b1; i++) {
			const double *ui = u + (size_t)i * n;
			for (int o = 0; o < out; o++) {
				double *wo = w + (size_t)o * n,
				       ci = cm[(size_t)o * nb + i / bsz];
				uint8_t b = encode(wo[i] / ci, s, fmt);
				double v = decode(b, s, fmt) * ci,
				       e = (wo[i] - v) / ui[i];
				codes[(size_t)o * n + i] = b;
				deq[(size_t)o * n + i] = (float)v;
				err[(size_t)o * GPTQ_BLOCK + (i - b0)] = e;
				for (int j = i + 1; j < b1; j++)
					wo[j] -= e * ui[j];
			}
		}
		if (b1 < n)
			cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
			            out, n - b1, b1 - b0, -1.0, err, GPTQ_BLOCK,
			            u + (size_t)b0 * n + b1, n, 1.0, w + b1, n);
	}
	free(u);
	free(w);
	free(err);
	return IPU_OK;
}

/* Quantize HostLinear src at 2^s in fmt (with channel scales into
 * chan[out]; with block, a scale per row and block of K into
 * ksc[out][blocks]: the row's max in the block over the format's top at
 * 2^s, in f16 as channel scales are) into codes[out in] and dst's weights
 * (decoded): nearest, or with h (X^T X of its inputs) GPTQ. */
static int
quantize_linear(const Quantized *q, const HostLinear *src, int s, Fp8Format fmt,
                const double *h, uint8_t *codes, float *chan, float *ksc,
                HostLinear *dst, Diag *d)
{
	size_t in = (size_t)src->in, bsz = ksc ? (size_t)q->o.block : in;
	size_t nb = (in + bsz - 1) / bsz;
	double *c = xmalloc((size_t)src->out * nb * sizeof *c);
	for (int o = 0; o < src->out; o++)
		for (size_t b0 = 0; b0 < in; b0 += bsz) {
			size_t b1 = b0 + bsz < in ? b0 + bsz : in;
			const float *row = src->w + o * in;
			double e, m = 0, v;
			if (ksc) {
				for (size_t k = b0; k < b1; k++)
					m = fmax(m, fabs(row[k]));
				v = m > 0 ? fmax(f16_value(
				                     m / ldexp(host_f8_max(fmt),
				                               s)),
				                 0x1p-14)
				          : 1;
				ksc[o * nb + b0 / bsz] = (float)v;
			} else {
				v = row_scale(q, row, in, s, fmt, &e);
				if (chan)
					chan[o] = (float)v;
			}
			c[o * nb + b0 / bsz] = v;
		}
	int r = IPU_OK;
	if (h)
		r = gptq(src, h, c, (int)nb, (int)bsz, s, fmt, q->o.damp, codes,
		         dst->w, d);
	else
		for (int o = 0; o < src->out; o++)
			for (size_t k = 0; k < in; k++) {
				double ck = c[o * nb + k / bsz];
				uint8_t b =
				    encode(src->w[o * in + k] / ck, s, fmt);
				codes[o * in + k] = b;
				dst->w[o * in + k] =
				    (float)(decode(b, s, fmt) * ck);
			}
	free(c);
	return r;
}

/* Weight w's K blocks per part (0 without per-K-block scales). */
static int
kblocks(const Quantized *q, const HostLinear *l)
{
	return q->methods & QUANT_BLOCK ? (l->in + q->o.block - 1) / q->o.block
	                                : 0;
}

static int
quantize_weights(Quantized *q, Diag *d)
{
	int chan = (q->methods & QUANT_CHANNEL) != 0;
	int gscale[SIGLIP_GEMMS][3];
	int nf = q->methods & QUANT_FORMAT ? 2 : 1;
	for (int p = 0; p < SIGLIP_GEMMS; p++)
		for (int k = 0; k < 3; k++) {
			q->wfmt[p][k] = FP8_F143;
			gscale[p][k] = p == SIGLIP_EMBED ? 0
			               : k && p != SIGLIP_HEAD_KV
			                   ? 0
			                   : group_scale(q, (SiglipGemm)p, k,
			                                 nf, &q->wfmt[p][k]);
		}
	/* the head's in_proj_weight is one tensor of one format: F143
	 * unless each part chose F152 */
	Fp8Format *hf = q->wfmt[SIGLIP_HEAD_KV];
	if (hf[0] != hf[1] || hf[1] != hf[2])
		for (int k = 0; k < 3; k++)
			gscale[SIGLIP_HEAD_KV][k] =
			    group_scale(q, SIGLIP_HEAD_KV, k, 1, &hf[k]);
	for (int i = 0; i < q->pol.nweight; i++) {
		SiglipQWeight *w = &q->pol.weight[i];
		if (w->pos == SIGLIP_EMBED)
			continue; /* the patch embedding stays f16 */
		HostLinear *src[3], *dst[3];
		int np = linears(&q->fl, w, src);
		linears(&q->qt, w, dst);
		size_t per = (size_t)src[0]->out * src[0]->in;
		q->codes[i] = xmalloc(per * np);
		if (chan)
			q->chan[i] = xmalloc((size_t)src[0]->out * np *
			                     sizeof *q->chan[i]);
		int nb = kblocks(q, src[0]);
		if (nb)
			q->kscale[i] = xmalloc((size_t)src[0]->out * nb * np *
			                       sizeof *q->kscale[i]);
		w->channel = chan;
		w->k_block = nb ? q->o.block : 0;
		for (int k = 0; k < np; k++) {
			w->scale[k] = gscale[w->pos][k];
			const double *h =
			    q->hess
			        ? q->hess[group(&q->c, w->layer, reads(w, k))]
			        : NULL;
			int e = quantize_linear(
			    q, src[k], w->scale[k], q->wfmt[w->pos][k], h,
			    q->codes[i] + k * per,
			    chan ? q->chan[i] + k * src[0]->out : NULL,
			    nb ? q->kscale[i] + (size_t)k * src[0]->out * nb
			       : NULL,
			    dst[k], d);
			if (e)
				return e;
		}
	}
	return IPU_OK;
}

static DType
fmt_dtype(Fp8Format f)
{
	return f == FP8_F152 ? DT_F8_F152 : DT_F8_F143;
}

/* Weight i in f8 (the codes' decoded values, its input cast) or f16.
 * With bias correction an f8 weight's bias is b - E[x] (W_q - W)^T, x
 * its float inputs' mean over the calibration images. */
static void
set_f8(Quantized *q, int i, int f8)
{
	SiglipQWeight *w = &q->pol.weight[i];
	HostLinear *src[3], *dst[3];
	int np = linears(&q->fl, w, src);
	linears(&q->qt, w, dst);
	size_t in = (size_t)src[0]->in, per = (size_t)src[0]->out * in;
	for (int k = 0; k < np; k++) {
		Fp8Format fmt = q->wfmt[w->pos][k];
		for (size_t e = 0; e < per; e++) {
			double c = q->chan[i]
			               ? q->chan[i][k * src[0]->out + e / in]
			               : 1;
			if (q->kscale[i])
				c = q->kscale[i][((size_t)k * src[0]->out +
				                  e / in) *
				                     kblocks(q, src[0]) +
				                 e % in / (size_t)q->o.block];
			dst[k]->w[e] =
			    f8 ? (float)(decode(q->codes[i][k * per + e],
			                        w->scale[k], fmt) *
			                 c)
			       : src[k]->w[e];
		}
		const double *m =
		    q->mean ? q->mean[group(&q->c, w->layer, reads(w, k))]
		            : NULL;
		for (int o = 0; o < src[0]->out; o++) {
			double b = src[k]->b[o];
			for (size_t j = 0; f8 && m && j < in; j++)
				b -= m[j] * ((double)dst[k]->w[o * in + j] -
				             src[k]->w[o * in + j]);
			dst[k]->b[o] = (float)b;
		}
		dst[k]->f8 = f8;
		dst[k]->fmt = q->afmt[reads(w, k)];
		dst[k]->scale = q->pol.act_scale[reads(w, k)];
	}
	w->dtype = f8 ? fmt_dtype(q->wfmt[w->pos][0]) : DT_F16;
}

/* ---- the mixed-precision search ---- */

/* The float tower's embeddings of n images [n, hidden]: the search
 * compares every policy with them, so they are computed once. */
static float *
float_embeddings(const Quantized *q, const float *px, int n)
{
	size_t per = (size_t)q->c.channels * q->c.image * q->c.image,
	       d = (size_t)q->c.hidden;
	float *e = xmalloc((size_t)n * d * sizeof *e);
	for (int i = 0; i < n; i++) {
		float *r = host_forward(&q->fl, px + i * per, 1, NULL);
		memcpy(e + i * d, r, d * sizeof *e);
		free(r);
	}
	return e;
}

/* The search's passes: the all-f8 tower's residual streams of each of
 * the n images (host_states), from which a policy that first differs from
 * all f8 at layer l resumes, and the float tower's embeddings [n, hidden]
 * to judge by. One image a pass, as quant_eval's. */
typedef struct {
	float **states, *ref;
	int n;
} Passes;

/* The smallest cosine over the images of the quantized tower, which
 * differs from all f8 only from layer l on, against the float tower's. */
static double
min_cos(const Quantized *q, const Passes *p, int l)
{
	size_t rd = (size_t)siglip_tokens(&q->c) * q->c.hidden,
	       d = (size_t)q->c.hidden;
	double m = 1;
	for (int i = 0; i < p->n; i++) {
		float *got =
		    host_forward_from(&q->qt, p->states[i] + l * rd, l, 1);
		m = fmin(m, host_cosine(p->ref + i * d, got, d));
		free(got);
	}
	return m;
}

/* A unit of the search: the weights that run as one GEMM (q, k, v of a
 * layer) or one weight. */
typedef struct {
	int first, n;
	int start; /* its layer, the layer count for the head's */
	double gain;
} Unit;

static int
by_gain(const void *a, const void *b)
{
	const Unit *x = a, *y = b;
	return (x->gain < y->gain) - (x->gain > y->gain);
}

static void
set_unit(Quantized *q, const Unit *u, int f8)
{
	for (int i = u->first; i < u->first + u->n; i++)
		set_f8(q, i, f8);
}

static void
search(Quantized *q, const float *px, int n, double target, FILE *log)
{
	Unit *u = xcalloc((size_t)q->pol.nweight, sizeof *u);
	int nu = 0, layers = q->c.layers;
	for (int i = 0; i < q->pol.nweight;) {
		const SiglipQWeight *w = &q->pol.weight[i];
		int len = w->pos == SIGLIP_QKV ? 3 : 1;
		if (dtype_is_f8(w->dtype))
			u[nu++] =
			    (Unit){.first = i,
			           .n = len,
			           .start = w->layer < 0 ? layers : w->layer};
		i += len;
	}
	size_t per = (size_t)q->c.channels * q->c.image * q->c.image;
	Passes p = {.states = xcalloc((size_t)n, sizeof *p.states),
	            .ref = float_embeddings(q, px, n),
	            .n = n};
	for (int i = 0; i < n; i++)
		p.states[i] = host_states(&q->qt, px + i * per, 1);
	double base = min_cos(q, &p, 0);
	if (log)
		fprintf(log, "search: all f8: cosine %.6f (target %.6f)\n",
		        base, target);
	if (base >= target)
		goto done;
	for (int k = 0; k < nu; k++) {
		set_unit(q, &u[k], 0);
		u[k].gain = min_cos(q, &p, u[k].start) - base;
		set_unit(q, &u[k], 1);
	}
	qsort(u, (size_t)nu, sizeof *u, by_gain);
	for (int k = 0; log && k < nu; k++)
		fprintf(log, "search: gain %s %.2e\n",
		        q->pol.weight[u[k].first].name, u[k].gain);
	/* the shortest prefix (of units in f16) reaching the target, by
	 * bisection: none does not, all do or are the best there is */
	int lo = 1, hi = nu;
	while (lo < hi) {
		int mid = (lo + hi) / 2, start = layers;
		for (int k = 0; k < nu; k++) {
			set_unit(q, &u[k], k >= mid);
			if (k < mid && u[k].start < start)
				start = u[k].start;
		}
		double c = min_cos(q, &p, start);
		if (log)
			fprintf(log, "search: %d of %d in f16: cosine %.6f\n",
			        mid, nu, c);
		if (c >= target)
			hi = mid;
		else
			lo = mid + 1;
	}
	for (int k = 0; k < nu; k++)
		set_unit(q, &u[k], k >= lo);
done:
	for (int i = 0; i < n; i++)
		free(p.states[i]);
	free(p.states);
	free(p.ref);
	free(u);
}

/* ---- the whole ---- */

/* Activation scales and formats from the calibration passes: the max's
 * power of two, or with percentile the P-th percentile's, then with mse
 * the best of it and the three below; with format F152 (at its max's or
 * percentile's scale) where its squared error is less. */
static void
act_scales(Quantized *q, const float *calib, int ncalib, Calib *k)
{
	int pct = (q->methods & QUANT_PERCENTILE) != 0;
	for (int p = 0; p < SIGLIP_GEMMS; p++) {
		k->smax[p] =
		    pct ? pct_scale(k, (SiglipGemm)p, FP8_F143, q->o.percentile)
		        : fmt_scale(k->max[p], FP8_F143);
		k->s152[p] =
		    pct ? pct_scale(k, (SiglipGemm)p, FP8_F152, q->o.percentile)
		        : fmt_scale(k->max[p], FP8_F152);
	}
	k->format = (q->methods & QUANT_FORMAT) != 0;
	if ((q->methods & QUANT_MSE) || k->format) {
		k->pass = 1;
		calibrate(&q->fl, calib, ncalib, k);
	}
	for (int p = 0; p < SIGLIP_GEMMS; p++) {
		int best = 0;
		for (int cand = 1;
		     (q->methods & QUANT_MSE) && cand < ACT_CANDIDATES; cand++)
			if (k->sse[p][cand] < k->sse[p][best])
				best = cand;
		q->pol.act_scale[p] = k->smax[p] - best;
		q->afmt[p] = FP8_F143;
		if (k->format && k->sse152[p] < k->sse[p][best]) {
			q->afmt[p] = FP8_F152;
			q->pol.act_scale[p] = k->s152[p];
		}
	}
	q->pol.act_scale[SIGLIP_EMBED] = 0;
}

int
quant_siglip(const SiglipConfig *c, const StFile *f, const float *calib,
             int ncalib, const QuantOpts *o, Quantized **out, Diag *d)
{
	Quantized *q = xcalloc(1, sizeof *q);
	q->c = *c;
	q->o = *o;
	q->methods =
	    o->methods & QUANT_CHANNEL ? o->methods : o->methods | QUANT_TENSOR;
	int e = host_load(&q->fl, c, f, d);
	if (e) {
		free(q);
		return e;
	}
	q->pol.nweight = siglip_dense_weights(c, &q->pol.weight);
	q->codes = xcalloc((size_t)q->pol.nweight, sizeof *q->codes);
	q->chan = xcalloc((size_t)q->pol.nweight, sizeof *q->chan);
	q->kscale = xcalloc((size_t)q->pol.nweight, sizeof *q->kscale);
	int d_ = c->hidden, ng = ngroups(c);
	Calib *k = xcalloc(1, sizeof *k);
	if (q->methods & QUANT_SMOOTH) {
		*k = (Calib){.d = d_, .c = c};
		k->chmax =
		    xcalloc((size_t)c->layers * 2 * d_, sizeof *k->chmax);
		calibrate(&q->fl, calib, ncalib, k);
		for (int l = 0; l < c->layers; l++) {
			HostLayer *y = &q->fl.layer[l];
			HostLinear *qkv[3] = {&y->q, &y->k, &y->v},
			           *fc1 = &y->fc1;
			smooth(y->ln1_g, y->ln1_b, qkv, 3,
			       k->chmax + (size_t)l * 2 * d_, d_, o->alpha);
			smooth(y->ln2_g, y->ln2_b, &fc1, 1,
			       k->chmax + ((size_t)l * 2 + 1) * d_, d_,
			       o->alpha);
		}
		free(k->chmax);
	}
	*k = (Calib){.d = d_,
	             .c = c,
	             .percentile = (q->methods & QUANT_PERCENTILE) != 0};
	k->rows = xcalloc((size_t)ng, sizeof *k->rows);
	k->cols = xcalloc((size_t)ng, sizeof *k->cols);
	if (q->methods & QUANT_GPTQ)
		k->hess = xcalloc((size_t)ng, sizeof *k->hess);
	if (q->methods & QUANT_BIAS)
		k->sum = xcalloc((size_t)ng, sizeof *k->sum);
	calibrate(&q->fl, calib, ncalib, k);
	q->hess = k->hess;
	q->mean = k->sum; /* sums, divided next */
	for (int g = 0; q->mean && g < ng; g++) {
		for (int j = 0; q->mean[g] && j < k->cols[g]; j++)
			q->mean[g][j] /= k->rows[g];
	}
	free(k->rows);
	free(k->cols);
	free(k->xd);
	act_scales(q, calib, ncalib, k);
	free(k);
	host_copy(&q->qt, &q->fl);
	q->qt.f16 = 1;
	e = quantize_weights(q, d);
	if (e) {
		quant_free(q);
		return e;
	}
	for (int i = 0; i < q->pol.nweight; i++)
		if (q->codes[i])
			set_f8(q, i, 1);
	if (o->target_cos > 0)
		search(q, calib, ncalib, o->target_cos, o->log);
	for (int p = 0; p < SIGLIP_GEMMS; p++)
		q->pol.act[p] = DT_F16;
	for (int i = 0; i < q->pol.nweight; i++) {
		const SiglipQWeight *w = &q->pol.weight[i];
		for (int k2 = 0; dtype_is_f8(w->dtype) && k2 < w->parts; k2++)
			q->pol.act[reads(w, k2)] =
			    fmt_dtype(q->afmt[reads(w, k2)]);
	}
	q->pol.methods = xstrdup(quant_methods_name(q->methods));
	*out = q;
	return IPU_OK;
}

void
quant_eval(const Quantized *q, const float *pixels, int n, double *cos)
{
	size_t per = (size_t)q->c.channels * q->c.image * q->c.image,
	       d = (size_t)q->c.hidden;
	float *ref = float_embeddings(q, pixels, n);
	for (int i = 0; i < n; i++) {
		float *got = host_forward(&q->qt, pixels + i * per, 1, NULL);
		cos[i] = host_cosine(ref + i * d, got, d);
		free(got);
	}
	free(ref);
}

/* ---- writing ---- */

/* The float values a smoothed tensor has now, or NULL if unchanged. */
static const float *
smoothed(const Quantized *q, const char *name)
{
	if (!(q->methods & QUANT_SMOOTH))
		return NULL;
	static const char pre[] = "vision_model.encoder.layers.";
	if (strncmp(name, pre, sizeof pre - 1))
		return NULL;
	char *end;
	long l = strtol(name + sizeof pre - 1, &end, 10);
	const HostLayer *y = &q->fl.layer[l];
	return !strcmp(end, ".layer_norm1.weight")   ? y->ln1_g
	       : !strcmp(end, ".layer_norm1.bias")   ? y->ln1_b
	       : !strcmp(end, ".layer_norm2.weight") ? y->ln2_g
	       : !strcmp(end, ".layer_norm2.bias")   ? y->ln2_b
	                                             : NULL;
}

/* The corrected bias of an f8 weight (bias correction) as it is now, or
 * NULL (malloc'd, all parts). */
static float *
corrected_bias(const Quantized *q, const char *name)
{
	size_t len = strlen(name);
	char wname[SIGLIP_MAX_NAME + 8];
	if (!(q->methods & QUANT_BIAS) || len < 4 ||
	    strcmp(name + len - 4, "bias") || len + 2 >= sizeof wname)
		return NULL;
	snprintf(wname, sizeof wname, "%.*sweight", (int)(len - 4), name);
	const SiglipQWeight *w = siglip_quant_find(&q->pol, wname);
	if (!w || !dtype_is_f8(w->dtype))
		return NULL;
	HostLinear *l[3];
	int np = linears((HostTower *)&q->qt, w, l);
	float *v = xmalloc((size_t)l[0]->out * np * sizeof *v);
	for (int k = 0; k < np; k++)
		memcpy(v + (size_t)k * l[0]->out, l[k]->b,
		       (size_t)l[0]->out * sizeof *v);
	return v;
}

/* Tensor i of the output: its spec and bytes (malloc'd). */
typedef struct {
	StSpec spec;
	char name[SIGLIP_MAX_NAME + 8];
	uint64_t shape[4];
	uint8_t *data;
	size_t len;
} OutTensor;

static uint8_t *
f32_bytes(const float *v, size_t n)
{
	uint8_t *b = xmalloc(n * 4);
	for (size_t i = 0; i < n; i++) {
		uint32_t u = fp_float_f32(v[i]);
		for (int k = 0; k < 4; k++)
			b[4 * i + k] = (uint8_t)(u >> (8 * k));
	}
	return b;
}

/* Weight w's float values after smoothing (all parts, whole tensor). */
static float *
weight_floats(const Quantized *q, const SiglipQWeight *w)
{
	HostLinear *l[3];
	int np = linears((HostTower *)&q->fl, w, l);
	size_t per = (size_t)l[0]->out * l[0]->in;
	float *v = xmalloc(per * np * sizeof *v);
	for (int k = 0; k < np; k++)
		memcpy(v + k * per, l[k]->w, per * sizeof *v);
	return v;
}

int
quant_write(const Quantized *q, const StFile *f, const char *calib,
            const char *path, int overwrite, Diag *d)
{
	size_t cap = f->ntensor + 2 * (size_t)q->pol.nweight, n = 0;
	OutTensor *t = xcalloc(cap, sizeof *t);
	SiglipTensor *vision;
	size_t nvision = siglip_tensors(&q->c, &vision);
	int e = IPU_OK;
	for (size_t i = 0; i < f->ntensor && !e; i++) {
		const StTensor *s = &f->tensor[i];
		int known = 0; /* the vision tower's (not a text tower's) */
		for (size_t k = 0; k < nvision && !known; k++)
			known = !strcmp(vision[k].name, s->name);
		if (!known || s->rank > 4)
			continue;
		const SiglipQWeight *w = siglip_quant_find(&q->pol, s->name);
		int wi = w ? (int)(w - q->pol.weight) : -1;
		OutTensor *o = &t[n++];
		snprintf(o->name, sizeof o->name, "%s", s->name);
		memcpy(o->shape, s->shape, (size_t)s->rank * sizeof *o->shape);
		o->spec = (StSpec){o->name, ST_F32, s->rank, o->shape};
		uint64_t elems = st_elements(s);
		const float *sm = smoothed(q, s->name);
		float *cb = corrected_bias(q, s->name);
		if (cb) {
			o->data = f32_bytes(cb, elems);
			o->len = elems * 4;
			free(cb);
		} else if (w && dtype_is_f8(w->dtype)) {
			o->spec.dtype = w->dtype == DT_F8_F152 ? ST_F8_E5M2FNUZ
			                                       : ST_F8_E4M3FNUZ;
			o->len = elems;
			o->data = xmalloc(elems);
			memcpy(o->data, q->codes[wi], elems);
		} else if (w || sm) {
			float *v = w ? weight_floats(q, w) : NULL;
			o->data = f32_bytes(w ? v : sm, elems);
			o->len = elems * 4;
			free(v);
		} else {
			float *v = xmalloc(elems * sizeof *v);
			e = st_to_f32(f, s, v, d);
			o->data = f32_bytes(v, elems);
			o->len = elems * 4;
			free(v);
		}
		if (w && dtype_is_f8(w->dtype) && w->channel) {
			OutTensor *c = &t[n++];
			siglip_quant_scale_name(s->name, c->name,
			                        sizeof c->name);
			c->shape[0] = s->shape[0];
			c->spec = (StSpec){c->name, ST_F32, 1, c->shape};
			c->data = f32_bytes(q->chan[wi], s->shape[0]);
			c->len = s->shape[0] * 4;
		}
		if (w && dtype_is_f8(w->dtype) && w->k_block) {
			OutTensor *c = &t[n++];
			siglip_quant_kscale_name(s->name, c->name,
			                         sizeof c->name);
			c->shape[0] = s->shape[0];
			c->shape[1] = (s->shape[1] + (uint64_t)w->k_block - 1) /
			              (uint64_t)w->k_block;
			c->spec = (StSpec){c->name, ST_F32, 2, c->shape};
			c->data =
			    f32_bytes(q->kscale[wi], c->shape[0] * c->shape[1]);
			c->len = c->shape[0] * c->shape[1] * 4;
		}
	}
	SiglipQuant pol = q->pol;
	pol.calibration = (char *)calib;
	char *json = siglip_quant_json(&pol);
	StMeta meta[] = {{"format", "pt"}, {SIGLIP_QUANT_KEY, json}};
	StSpec *spec = xcalloc(n, sizeof *spec);
	const void **data = xcalloc(n, sizeof *data);
	for (size_t i = 0; i < n; i++) {
		spec[i] = t[i].spec;
		data[i] = t[i].data;
	}
	if (!e)
		e = st_write(path, spec, data, n, meta, 2, overwrite, d);
	for (size_t i = 0; i < n; i++)
		free(t[i].data);
	free(t);
	free(vision);
	free(spec);
	free(data);
	free(json);
	return e;
}

void
quant_free(Quantized *q)
{
	if (!q)
		return;
	for (int i = 0; i < q->pol.nweight; i++) {
		free(q->codes[i]);
		free(q->chan[i]);
		free(q->kscale[i]);
	}
	free(q->codes);
	free(q->chan);
	free(q->kscale);
	for (int g = 0; g < ngroups(&q->c); g++) {
		free(q->hess ? q->hess[g] : NULL);
		free(q->mean ? q->mean[g] : NULL);
	}
	free(q->hess);
	free(q->mean);
	siglip_quant_free(&q->pol);
	host_free(&q->fl);
	host_free(&q->qt);
	free(q);
}

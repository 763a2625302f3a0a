/*
 * siglip_gen.c - seeded synthetic SigLIP checkpoints (siglip_gen.h).
 *
 * Each tensor's stream: splitmix64 started at seed ^ FNV-1a-64(name); a
 * uniform double in [-1, 1) from the top 53 bits of each output; normal
 * pairs by Marsaglia's polar method, which needs only a logarithm and a
 * square root. sqrt is exact in IEEE arithmetic; the logarithm is our own
 * series in + - * / (libm's log may differ by an ulp between machines),
 * so the bytes depend on nothing but the seed. Values are mean + std * z
 * in double, rounded once to f32 or f16 (to nearest even), or to f32 and
 * then bf16.
 */
#include "siglip_gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/fp.h"

typedef enum {
	STD_FIXED,    /* the table's std */
	STD_XAVIER,   /* sqrt(2 / (fan_in + fan_out)) */
	STD_LECUN,    /* 1 / sqrt(fan_in) */
	STD_INV_SQRT, /* 1 / sqrt(d) */
} StdRule;

/* By SiglipKind; docs/models.md explains the choices. */
static const struct {
	double mean, std;
	StdRule rule;
} kind_stats[] = {
    [SW_LINEAR] = {0, 0, STD_XAVIER},     [SW_CONV] = {0, 0, STD_LECUN},
    [SW_POSITION] = {0, 0, STD_INV_SQRT}, [SW_PROBE] = {0, 0, STD_INV_SQRT},
    [SW_BIAS] = {0, 0.02, STD_FIXED},     [SW_LN_WEIGHT] = {1, 0.05, STD_FIXED},
    [SW_LN_BIAS] = {0, 0.02, STD_FIXED},
};

/* Mean and standard deviation the generator draws t from. */
static void
siglip_gen_stats(const SiglipConfig *c, const SiglipTensor *t, double *mean,
                 double *std)
{
	*mean = kind_stats[t->kind].mean;
	*std = kind_stats[t->kind].std;
	switch (kind_stats[t->kind].rule) {
	case STD_FIXED:
		break;
	case STD_XAVIER: /* [out, in] */
		*std = sqrt(2.0 / (double)(t->shape[0] + t->shape[1]));
		break;
	case STD_LECUN: /* [d, C, P, P]: fan_in C * P * P */
		*std =
		    1 / sqrt((double)(t->shape[1] * t->shape[2] * t->shape[3]));
		break;
	case STD_INV_SQRT:
		*std = 1 / sqrt((double)c->hidden);
		break;
	}
}

static uint64_t
splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Uniform in [-1, 1), exactly representable. */
static double
uniform_pm1(uint64_t *state)
{
	return (double)(splitmix64(state) >> 11) * 0x1p-52 - 1.0;
}

/* ln(x) for x > 0 from x = m 2^e, m in [sqrt(1/2), sqrt(2)):
 * ln m = 2 atanh(t), t = (m - 1) / (m + 1), |t| < 0.172, summed to t^25
 * (the next term is below 1e-20). frexp is exact. */
static double
own_log(double x)
{
	int e;
	double m = frexp(x, &e);
	if (m < 0.70710678118654752) {
		m *= 2;
		e--;
	}
	double t = (m - 1) / (m + 1), t2 = t * t, sum = 0;
	for (int k = 25; k >= 1; k -= 2)
		sum = sum * t2 + 1.0 / k;
	return 2 * t * sum + e * 0.69314718055994531;
}

void
siglip_gen_values(const SiglipConfig *c, const SiglipTensor *t, uint64_t seed,
                  double *out)
{
	double mean, std;
	siglip_gen_stats(c, t, &mean, &std);
	uint64_t state = seed ^ fnv1a64(FNV1A64_INIT, t->name, strlen(t->name));
	uint64_t n = siglip_tensor_elements(t);
	for (uint64_t i = 0; i < n;) {
		double u, v, s;
		do {
			u = uniform_pm1(&state);
			v = uniform_pm1(&state);
			s = u * u + v * v;
		} while (s >= 1 || s == 0);
		double f = sqrt(-2 * own_log(s) / s);
		out[i++] = mean + std * (u * f);
		if (i < n)
			out[i++] = mean + std * (v * f);
	}
}

/* The values as little-endian elements of dtype. */
static void
encode(const double *v, uint64_t n, StDtype dtype, uint8_t *out)
{
	unsigned flags = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t bits = fp_float_f32((float)v[i]);
		int size = 4;
		if (dtype == ST_F16) {
			bits =
			    fp_f64_to_f16(v[i], FP_RNE, 0, FP_OV_IEEE, &flags);
			size = 2;
		} else if (dtype == ST_BF16) {
			bits = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16;
			size = 2;
		}
		for (int k = 0; k < size; k++)
			out[i * size + k] = (uint8_t)(bits >> (8 * k));
	}
}

static int
write_tensors(StWriter *w, const SiglipConfig *c, const SiglipTensor *t,
              size_t n, StDtype dtype, uint64_t seed, Diag *d)
{
	int rc = IPU_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t elems = siglip_tensor_elements(&t[i]);
		double *v = xmalloc(elems * sizeof *v);
		uint8_t *bytes = xmalloc(elems * 4);
		siglip_gen_values(c, &t[i], seed, v);
		encode(v, elems, dtype, bytes);
		rc = st_writer_put(w, bytes, elems * st_dtype_bits(dtype) / 8,
		                   d);
		free(v);
		free(bytes);
	}
	return rc;
}

int
siglip_gen(const char *path, const SiglipConfig *c, StDtype dtype,
           uint64_t seed, int overwrite, Diag *d)
{
	if (dtype != ST_F32 && dtype != ST_F16 && dtype != ST_BF16)
		return diag_set(d, IPU_EINVAL, path, 0, 0,
		                "dtype %s: only F32, F16 and BF16 checkpoints",
		                st_dtype_name(dtype));
	int rc = siglip_config_validate(c, path, d);
	if (rc)
		return rc;
	SiglipTensor *t;
	size_t n = siglip_tensors(c, &t);
	StSpec *spec = xcalloc(n, sizeof *spec);
	for (size_t i = 0; i < n; i++)
		spec[i] = (StSpec){t[i].name, dtype, t[i].rank, t[i].shape};
	char seed_text[32];
	snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)seed);
	const StMeta meta[] = {
	    {"format", "pt"},
	    {"generator", "ipu model gen (synthetic SigLIP weights)"},
	    {"seed", seed_text},
	};
	StWriter *w;
	rc = st_writer_open(path, spec, n, meta, 3, overwrite, &w, d);
	if (!rc) {
		rc = write_tensors(w, c, t, n, dtype, seed, d);
		if (rc)
			st_writer_abort(w);
		else
			rc = st_writer_close(w, d);
	}
	free(spec);
	free(t);
	return rc;
}

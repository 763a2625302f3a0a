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

/* mean + std z for the tensor's stream of normals (Marsaglia's polar
 * method), into out[n]. */
static void
normals(uint64_t state, double mean, double std, uint64_t n, double *out)
{
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

static uint64_t
stream(uint64_t seed, const char *name, const char *tag)
{
	uint64_t h = fnv1a64(FNV1A64_INIT, name, strlen(name));
	return seed ^ fnv1a64(h, tag, strlen(tag));
}

/* A chi-square variate of 6 degrees of freedom: -2 ln(u1 u2 u3), each u
 * uniform in (0, 1] from the top 53 bits of one output. */
static double
chi2_6(uint64_t *state)
{
	double p = 1;
	for (int k = 0; k < 3; k++)
		p *= (double)((splitmix64(state) >> 11) + 1) * 0x1p-53;
	return -2 * own_log(p);
}

/*
 * The realistic recipe (docs/models.md "Realistic checkpoints" gives the
 * sources): heavy-tailed weights with unequal rows, outlier channels in
 * the residual stream and the LayerNorm gains that amplify them, register
 * neurons in layer 0's MLP that write massive activations into two
 * channels of a few tokens, and attention in the later layers that sinks
 * onto those tokens. Every choice comes from streams keyed by fixed names,
 * so the values still depend only on the seed, the tensor's name and the
 * config's widths.
 */
static const struct {
	double ln_gain_std, ln_bias_std;
	double sys_bias, sys_ln_bias;  /* embedding bias, LayerNorm bias */
	double sys_gain1, sys_gain2;   /* LayerNorm gain factors on C_sys */
	double mass_gain1, mass_gain2; /* LayerNorm gains on C_mass */
	double trigger;                /* position embedding + trigger u */
	double reg_in, reg_bias;       /* register neuron: fc1 row, -bias */
	double reg_out;                /* fc2 into C_mass */
	double sink_key, sink_query;   /* k_proj on C_mass, q_proj bias */
	double sink_value;             /* v_proj columns C_mass scaled by */
} real = {
    .ln_gain_std = 0.25,
    .ln_bias_std = 0.1,
    .sys_bias = 4,
    .sys_ln_bias = 0.5,
    .sys_gain1 = 2.5,
    .sys_gain2 = 6,
    .mass_gain1 = 2,
    .mass_gain2 = 12,
    .trigger = 30,
    .reg_in = 5,
    .reg_bias = 15,
    .reg_out = 5,
    .sink_key = 0.3,
    .sink_query = 2,
    .sink_value = 0.1,
};

enum { REAL_MASS = 2, REAL_REG = 4 };

typedef struct {
	int nsys, ntrig;
	int *sys, mass[REAL_MASS], *trig, reg[REAL_REG];
	double *sign; /* [d]: +-1 for sys and mass channels */
} Real;

/* The first k of a partial Fisher-Yates shuffle of 0..n-1 (j = i +
 * r mod (n - i) for i = 0..k-1), r from the stream. */
static void
choose(uint64_t state, int n, int k, int *out)
{
	int *a = xmalloc((size_t)n * sizeof *a);
	for (int i = 0; i < n; i++)
		a[i] = i;
	for (int i = 0; i < k; i++) {
		int j = i + (int)(splitmix64(&state) % (uint64_t)(n - i));
		int t = a[i];
		a[i] = a[j];
		a[j] = t;
		out[i] = a[i];
	}
	free(a);
}

static void
real_init(const SiglipConfig *c, uint64_t seed, Real *r)
{
	int d = c->hidden, n = siglip_tokens(c);
	r->nsys = d / 256 > 2 ? d / 256 : 2;
	r->ntrig = (int)((2 * (int64_t)n + 50) / 100); /* 2%, rounded */
	if (r->ntrig < 1)
		r->ntrig = 1;
	int *ch = xmalloc((size_t)(r->nsys + REAL_MASS) * sizeof *ch);
	choose(stream(seed, "realistic", ".channels"), d, r->nsys + REAL_MASS,
	       ch);
	r->sys = ch;
	memcpy(r->mass, ch + r->nsys, sizeof r->mass);
	r->trig = xmalloc((size_t)r->ntrig * sizeof *r->trig);
	choose(stream(seed, "realistic", ".tokens"), n, r->ntrig, r->trig);
	choose(stream(seed, "realistic", ".neurons"), c->intermediate, REAL_REG,
	       r->reg);
	r->sign = xcalloc((size_t)d, sizeof *r->sign);
	uint64_t s = stream(seed, "realistic", ".signs");
	for (int i = 0; i < r->nsys + REAL_MASS; i++)
		r->sign[ch[i]] = splitmix64(&s) >> 63 ? -1.0 : 1.0;
}

static void
real_free(Real *r)
{
	free(r->sys);
	free(r->trig);
	free(r->sign);
}

static int
in_list(const int *list, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (list[i] == x)
			return 1;
	return 0;
}

/* The trigger direction u [d]: normals, zero on C_sys and C_mass, the
 * others less their mean, unit length. */
static double *
trigger_dir(const SiglipConfig *c, uint64_t seed, const Real *r)
{
	int d = c->hidden;
	double *u = xmalloc((size_t)d * sizeof *u), mean = 0, norm = 0;
	normals(stream(seed, "realistic", ".u"), 0, 1, (uint64_t)d, u);
	int others = d - r->nsys - REAL_MASS;
	for (int i = 0; i < d; i++) {
		if (in_list(r->sys, r->nsys, i) ||
		    in_list(r->mass, REAL_MASS, i))
			u[i] = 0;
		mean += u[i];
	}
	mean /= others;
	for (int i = 0; i < d; i++)
		if (u[i] != 0)
			u[i] -= mean;
	for (int i = 0; i < d; i++)
		norm += u[i] * u[i];
	norm = sqrt(norm);
	for (int i = 0; i < d; i++)
		u[i] /= norm;
	return u;
}

/* "vision_model.encoder.layers.L.<suffix>": L, and *suffix; else -1. */
static int
layer_of(const char *name, const char **suffix)
{
	static const char pre[] = "vision_model.encoder.layers.";
	if (strncmp(name, pre, sizeof pre - 1))
		return -1;
	char *end;
	long l = strtol(name + sizeof pre - 1, &end, 10);
	if (*end != '.')
		return -1;
	*suffix = end + 1;
	return (int)l;
}

/* The plain values made realistic: heavy tails and row spread for
 * matrices, then the planted structure of the tensor's role. */
static void
realistic(const SiglipConfig *c, const SiglipTensor *t, uint64_t seed,
          double *out)
{
	uint64_t n = siglip_tensor_elements(t);
	if (t->kind == SW_LINEAR || t->kind == SW_CONV) {
		/* z -> z sqrt(4 / chi2_6) is Student's t with 6 degrees of
		 * freedom at unit variance; each row times sqrt(chi2_6 / 6),
		 * unit mean square */
		uint64_t rows = t->shape[0], cols = n / rows;
		uint64_t st = stream(seed, t->name, "#t"),
		         sr = stream(seed, t->name, "#row");
		for (uint64_t i = 0; i < rows; i++) {
			double row = sqrt(chi2_6(&sr) / 6);
			for (uint64_t k = 0; k < cols; k++)
				out[i * cols + k] *=
				    sqrt(4 / chi2_6(&st)) * row;
		}
	}
	Real r;
	real_init(c, seed, &r);
	int d = c->hidden, dh = d / c->heads;
	const char *sfx = "";
	int l = layer_of(t->name, &sfx);
	if (!strcmp(t->name, "vision_model.embeddings.patch_embedding.bias"))
		for (int i = 0; i < r.nsys; i++)
			out[r.sys[i]] += real.sys_bias * r.sign[r.sys[i]];
	if (!strcmp(t->name,
	            "vision_model.embeddings.position_embedding.weight")) {
		double *u = trigger_dir(c, seed, &r);
		for (int k = 0; k < r.ntrig; k++)
			for (int i = 0; i < d; i++)
				out[(size_t)r.trig[k] * d + i] +=
				    real.trigger * u[i];
		free(u);
	}
	int ln1 = l >= 0 && !strcmp(sfx, "layer_norm1.weight"),
	    ln2 = l >= 0 && !strcmp(sfx, "layer_norm2.weight");
	if (ln1 || ln2) {
		for (int i = 0; i < r.nsys; i++)
			out[r.sys[i]] *= ln1 ? real.sys_gain1 : real.sys_gain2;
		for (int i = 0; i < REAL_MASS; i++)
			out[r.mass[i]] =
			    ln1 ? real.mass_gain1 : real.mass_gain2;
	}
	if (l >= 0 && (!strcmp(sfx, "layer_norm1.bias") ||
	               !strcmp(sfx, "layer_norm2.bias")))
		for (int i = 0; i < r.nsys; i++)
			out[r.sys[i]] += real.sys_ln_bias * r.sign[r.sys[i]];
	if (l == 0 && !strcmp(sfx, "mlp.fc1.weight")) {
		/* register neurons read u through LayerNorm 2's gains */
		SiglipTensor g = {
		    .kind = SW_LN_WEIGHT, .rank = 1, .shape = {(uint64_t)d}};
		snprintf(g.name, sizeof g.name,
		         "vision_model.encoder.layers.0.layer_norm2.weight");
		double *gain = xmalloc((size_t)d * sizeof *gain);
		siglip_gen_values(c, &g, seed, SIGLIP_GEN_REALISTIC, gain);
		double *u = trigger_dir(c, seed, &r);
		for (int k = 0; k < REAL_REG; k++)
			for (int i = 0; i < d; i++)
				out[(size_t)r.reg[k] * d + i] +=
				    real.reg_in * u[i] / gain[i];
		free(u);
		free(gain);
	}
	if (l == 0 && !strcmp(sfx, "mlp.fc1.bias"))
		for (int k = 0; k < REAL_REG; k++)
			out[r.reg[k]] = -real.reg_bias;
	if (l == 0 && !strcmp(sfx, "mlp.fc2.weight"))
		for (int m = 0; m < REAL_MASS; m++)
			for (int k = 0; k < REAL_REG; k++)
				out[(size_t)r.mass[m] * c->intermediate +
				    r.reg[k]] =
				    real.reg_out * r.sign[r.mass[m]];
	int key = l >= 1 && !strcmp(sfx, "self_attn.k_proj.weight"),
	    query = l >= 1 && !strcmp(sfx, "self_attn.q_proj.bias");
	if (key || query) {
		/* per head a unit direction r_h: keys of C_mass along it,
		 * every query biased along it */
		char tag[48];
		snprintf(tag, sizeof tag, ".sink.%d", l);
		double *dir = xmalloc((size_t)d * sizeof *dir);
		normals(stream(seed, "realistic", tag), 0, 1, (uint64_t)d, dir);
		for (int h = 0; h < c->heads; h++) {
			double norm = 0, *v = dir + (size_t)h * dh;
			for (int i = 0; i < dh; i++)
				norm += v[i] * v[i];
			norm = sqrt(norm);
			for (int i = 0; i < dh; i++)
				v[i] /= norm;
		}
		for (int i = 0; i < d; i++) {
			if (query)
				out[i] += real.sink_query * dir[i];
			for (int m = 0; key && m < REAL_MASS; m++)
				out[(size_t)i * d + r.mass[m]] =
				    real.sink_key * dir[i] * r.sign[r.mass[m]];
		}
		free(dir);
	}
	if (l >= 1 && !strcmp(sfx, "self_attn.v_proj.weight"))
		for (int i = 0; i < d; i++)
			for (int m = 0; m < REAL_MASS; m++)
				out[(size_t)i * d + r.mass[m]] *=
				    real.sink_value;
	real_free(&r);
}

void
siglip_gen_values(const SiglipConfig *c, const SiglipTensor *t, uint64_t seed,
                  unsigned flags, double *out)
{
	double mean, std;
	siglip_gen_stats(c, t, &mean, &std);
	int real_ln = flags & SIGLIP_GEN_REALISTIC;
	if (real_ln && t->kind == SW_LN_WEIGHT)
		std = real.ln_gain_std;
	if (real_ln && t->kind == SW_LN_BIAS)
		std = real.ln_bias_std;
	normals(stream(seed, t->name, ""), mean, std, siglip_tensor_elements(t),
	        out);
	if (flags & SIGLIP_GEN_REALISTIC)
		realistic(c, t, seed, out);
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
              size_t n, StDtype dtype, uint64_t seed, unsigned flags, Diag *d)
{
	int rc = IPU_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t elems = siglip_tensor_elements(&t[i]);
		double *v = xmalloc(elems * sizeof *v);
		uint8_t *bytes = xmalloc(elems * 4);
		siglip_gen_values(c, &t[i], seed, flags, v);
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
           uint64_t seed, unsigned flags, int overwrite, Diag *d)
{
	if (dtype != ST_F32 && dtype != ST_F16 && dtype != ST_BF16)
		return diag_set(d, IPU_EINVAL, path, 0, 0,
		                "dtype %s: only F32, F16 and BF16 checkpoints",
		                st_dtype_name(dtype));
	int rc = siglip_config_validate(c, path, d);
	if (rc)
		return rc;
	if ((flags & SIGLIP_GEN_REALISTIC) &&
	    (c->hidden < 16 || c->intermediate < 4))
		return diag_set(d, IPU_EINVAL, path, 0, 0,
		                "a realistic checkpoint needs hidden_size >= "
		                "16 and intermediate_size >= 4 (it plants "
		                "outlier channels and 4 register neurons)");
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
	    {"realistic", flags & SIGLIP_GEN_REALISTIC ? "1" : "0"},
	};
	StWriter *w;
	rc = st_writer_open(path, spec, n, meta, 4, overwrite, &w, d);
	if (!rc) {
		rc = write_tensors(w, c, t, n, dtype, seed, flags, d);
		if (rc)
			st_writer_abort(w);
		else
			rc = st_writer_close(w, d);
	}
	free(spec);
	free(t);
	return rc;
}

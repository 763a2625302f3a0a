/*
 * siglip_run.c - `ipu run siglip`: a checkpoint and images in, the pooled
 * embedding out, through the compiler and the emulated chip.
 *
 * Order: config and checkpoint checked (siglip_check), pixels made
 * (images decoded and preprocessed, or read from a .npy), the graph built
 * for the micro-batch (the batch unless SiglipRun.micro_batch says fewer)
 * and compiled, then for each run of it every input and weight written by
 * name (converted to the compute type; the derived weights as
 * siglip_weight_source says), the run, the output read back.
 */
#include "siglip_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/fp.h"

#include <ipu/runtime.h>

#include "../runner/runner.h"
#include "../image/image.h"
#include "../util/npy.h"
#include "safetensors.h"
#include "siglip_quant.h"
#include "siglip_weights.h"

int
siglip_load_pixels(const SiglipConfig *c, const char *const *images,
                   int nimages, const char *pixels, float **px, int *batch,
                   Diag *d)
{
	size_t per = (size_t)c->channels * c->image * c->image;
	if (pixels) {
		NpyArray a;
		int e = npy_read(pixels, &a, d);
		if (e)
			return e;
		if (a.dtype != NPY_F32 || a.rank != 4 ||
		    a.shape[1] != (uint64_t)c->channels ||
		    a.shape[2] != (uint64_t)c->image ||
		    a.shape[3] != (uint64_t)c->image || !a.shape[0]) {
			npy_free(&a);
			return diag_set(d, IPU_EINVAL, pixels, 0, 0,
			                "pixel values must be f32 [B, %d, %d, "
			                "%d] for this config",
			                c->channels, c->image, c->image);
		}
		*batch = (int)a.shape[0];
		*px = a.data;
		return IPU_OK;
	}
	if (nimages < 1)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "no image given (--image or --pixels)");
	if (c->channels != 3)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "images are RGB; the config has %d channels",
		                c->channels);
	Image *img = xcalloc((size_t)nimages, sizeof *img);
	int e = IPU_OK, n = 0;
	for (; n < nimages && !e; n++)
		e = image_load(images[n], &img[n], d);
	if (!e) {
		*px = xmalloc((size_t)nimages * per * sizeof **px);
		Preprocess p = preprocess_siglip((uint32_t)c->image);
		e = preprocess_images(img, (size_t)nimages, &p, *px, d);
		*batch = nimages;
	}
	for (int i = 0; i < n; i++)
		image_free(&img[i]);
	free(img);
	return e;
}

/* Columns [c0, c1) of rows [r0, r0 + rows) of matrix m [.., cols]. */
static void
columns(const float *m, size_t cols, size_t r0, size_t rows, size_t c0,
        size_t c1, float *to)
{
	for (size_t r = 0; r < rows; r++)
		memcpy(to + r * (c1 - c0), m + (r0 + r) * cols + c0,
		       (c1 - c0) * sizeof *to);
}

static int weight_values(const StFile *f, const SiglipQuant *q,
                         const char *gname, size_t want, int fold, float *out,
                         Diag *d);

/* A LayerNorm's gamma or beta ("<ln>.weight", "<ln>.bias") of n values
 * (malloc'd), or NULL with d set. */
static float *
ln_values(const StFile *f, const char *ln, const char *which, size_t n, Diag *d)
{
	char name[200];
	snprintf(name, sizeof name, "%s.%s", ln, which);
	const StTensor *s = st_find(f, name);
	if (!s || st_elements(s) != n) {
		diag_set(d, IPU_EINVAL, NULL, 0, 0,
		         "the checkpoint has no %s of %zu values (to fold)",
		         name, n);
		return NULL;
	}
	float *v = xmalloc(n * sizeof *v);
	if (st_to_f32(f, s, v, d)) {
		free(v);
		return NULL;
	}
	return v;
}

/* A folded graph weight (siglip_fold_source says which LayerNorm): out
 * holds its checkpoint values [want]; W diag(gamma), or b + W beta. */
static int
fold_values(const StFile *f, const char *gname, size_t want, float *out,
            Diag *d)
{
	char ln[160], wname[200];
	int kind =
	    siglip_fold_source(gname, ln, sizeof ln, wname, sizeof wname);
	if (!kind)
		return IPU_OK;
	/* the LayerNorm's width: its gamma's */
	char gn[200];
	snprintf(gn, sizeof gn, "%s.weight", ln);
	const StTensor *gt = st_find(f, gn);
	size_t cols = gt ? st_elements(gt) : 0;
	size_t rows = kind == SIGLIP_FOLD_WEIGHT && cols ? want / cols : want;
	if (!cols || (kind == SIGLIP_FOLD_WEIGHT && rows * cols != want))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "graph weight %s: %zu values do not fold "
		                "with %s",
		                gname, want, gn);
	float *v = ln_values(
	    f, ln, kind == SIGLIP_FOLD_WEIGHT ? "weight" : "bias", cols, d);
	if (!v)
		return IPU_EINVAL;
	int e = IPU_OK;
	if (kind == SIGLIP_FOLD_WEIGHT)
		siglip_fold_weight(out, rows, cols, v);
	else {
		float *w = xmalloc(rows * cols * sizeof *w);
		e = weight_values(f, NULL, wname, rows * cols, 0, w, d);
		if (!e)
			siglip_fold_bias(out, w, rows, cols, v);
		free(w);
	}
	free(v);
	return e;
}

/* Graph weight `gname` ([want] elements) from the checkpoint, as f32
 * values (siglip_weight_source says from which tensors; a K block's
 * columns by q's k_block); `fold`: a folding tower's (siglip_folds),
 * whose weights and biases after a LayerNorm take its gamma and beta. */
static int
weight_values(const StFile *f, const SiglipQuant *q, const char *gname,
              size_t want, int fold, float *out, Diag *d)
{
	SiglipSource src;
	siglip_weight_source(gname, &src);
	int e = IPU_OK;
	size_t each = want / (size_t)src.n;
	const SiglipQWeight *w =
	    src.block >= 0 && q ? siglip_quant_find(q, src.name[0]) : NULL;
	if (src.block >= 0 && (!w || !w->k_block))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "graph weight %s: %s has no K blocks", gname,
		                src.name[0]);
	for (int k = 0; !e && k < src.n; k++) {
		char name[sizeof src.name[0] + 8];
		if (src.kscale)
			siglip_quant_kscale_name(src.name[k], name,
			                         sizeof name);
		else
			snprintf(name, sizeof name, "%s", src.name[k]);
		const StTensor *s = st_find(f, name);
		if (!s)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "the checkpoint has no %s (for graph "
			                "weight %s)",
			                name, gname);
		size_t have = st_elements(s);
		float *all = xmalloc(have * sizeof *all), *to = out + k * each;
		e = st_to_f32(f, s, all, d);
		if (!e && w) { /* a K block of rows part d (or all rows) */
			size_t cols = s->shape[1],
			       rows = s->shape[0] / (src.part >= 0 ? 3 : 1),
			       c0 = src.kscale ? (size_t)src.block
			                       : (size_t)src.block * w->k_block,
			       c1 = src.kscale ? c0 + 1
			                       : c0 + (size_t)w->k_block;
			c1 = c1 < cols ? c1 : cols;
			if (c0 < c1 && rows * (c1 - c0) == each)
				columns(all, cols,
				        src.part >= 0 ? src.part * rows : 0,
				        rows, c0, c1, to);
			else
				e = diag_set(d, IPU_EINVAL, NULL, 0, 0,
				             "graph weight %s holds %zu "
				             "elements, block %d of %s %zu",
				             gname, want, src.block, name,
				             c0 < c1 ? rows * (c1 - c0) : 0);
		} else if (!e && src.part >= 0 &&
		           have == 3 * each) /* rows part d */
			memcpy(to, all + (size_t)src.part * each,
			       each * sizeof *to);
		else if (!e && src.part < 0 && each % have == 0) /* repeated
		                                                    per image */
			for (size_t i = 0; i < each; i += have)
				memcpy(to + i, all, have * sizeof *to);
		else if (!e)
			e = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "graph weight %s holds %zu elements, "
			             "checkpoint tensor %s %zu",
			             gname, want, src.name[k], have);
		free(all);
	}
	if (!e && fold)
		e = fold_values(f, gname, want, out, d);
	return e;
}

/* siglip_graph_text's weight_scale: the scale covering the largest |w|
 * of the weight, or for an encoder layer's, of that weight in every layer
 * (the graph runs one loop body for all layers: siglip_graph.c); the
 * first error stays in the context. */
enum { SCALE_MEMO = 16 };
typedef struct {
	const StFile *f;
	int layers;
	int fold; /* the tower folds its LayerNorms (siglip_folds) */
	int e;
	Diag d;
	char suffix[SCALE_MEMO][128]; /* layer weights done: their scale */
	int scale[SCALE_MEMO], nmemo;
} ScaleCtx;

static double
max_abs(ScaleCtx *sc, const char *gname)
{
	SiglipSource src;
	siglip_weight_source(gname, &src);
	const StTensor *s = st_find(sc->f, src.name[0]);
	if (sc->e || !s)
		return 0; /* siglip_check found every tensor */
	size_t n = st_elements(s) * (size_t)src.n / (src.part >= 0 ? 3 : 1);
	float *v = xmalloc(n * sizeof *v);
	double max = 0;
	sc->e = weight_values(sc->f, NULL, gname, n, sc->fold, v, &sc->d);
	for (size_t i = 0; !sc->e && i < n; i++)
		max = fmax(max, fabs(v[i]));
	free(v);
	return max;
}

static int
weight_scale(void *ctx, const char *gname)
{
	ScaleCtx *sc = ctx;
	static const char layer[] = "vision_model.encoder.layers.";
	if (strncmp(gname, layer, sizeof layer - 1))
		return fp_f8_f143_scale(max_abs(sc, gname));
	const char *suffix = strchr(gname + sizeof layer - 1, '.');
	if (!suffix || strlen(suffix) >= sizeof sc->suffix[0])
		return fp_f8_f143_scale(max_abs(sc, gname));
	for (int i = 0; i < sc->nmemo; i++)
		if (!strcmp(sc->suffix[i], suffix))
			return sc->scale[i];
	double max = 0;
	for (int l = 0; l < sc->layers; l++) {
		char name[256];
		snprintf(name, sizeof name, "%s%d%s", layer, l, suffix);
		max = fmax(max, max_abs(sc, name));
	}
	int scale = fp_f8_f143_scale(max);
	if (sc->nmemo < SCALE_MEMO) {
		snprintf(sc->suffix[sc->nmemo], sizeof sc->suffix[0], "%s",
		         suffix);
		sc->scale[sc->nmemo++] = scale;
	}
	return scale;
}

/* siglip_graph_text's weight_type for a quantized checkpoint: the
 * policy's type of the graph weight's checkpoint tensor (of its part);
 * the three tensors of a fused qkv_proj must agree, as they run as one
 * GEMM. The first problem stays in the context. */
typedef struct {
	const SiglipQuant *q;
	int e;
	Diag d;
} QuantCtx;

static void
quant_type(void *ctx, const char *gname, SiglipWType *t)
{
	QuantCtx *qc = ctx;
	SiglipSource src;
	siglip_weight_source(gname, &src);
	*t = (SiglipWType){.dtype = DT_F16};
	for (int k = 0; k < src.n; k++) {
		const SiglipQWeight *w = siglip_quant_find(qc->q, src.name[k]);
		if (!w)
			return; /* siglip_quant_read knows every dense weight */
		SiglipWType x = {w->dtype,
		                 w->scale[src.part > 0 ? src.part : 0],
		                 w->channel, w->k_block};
		if (k == 0)
			*t = x;
		else if ((x.dtype != t->dtype ||
		          (dtype_is_f8(x.dtype) && x.scale != t->scale) ||
		          x.channel != t->channel || x.k_block != t->k_block) &&
		         !qc->e)
			qc->e = diag_set(&qc->d, IPU_EINVAL, NULL, 0, 0,
			                 "%s: '%s' and '%s' run as one fused "
			                 "GEMM, so they need the same format, "
			                 "scale, channel scales and K blocks",
			                 SIGLIP_QUANT_KEY, src.name[0],
			                 src.name[k]);
	}
}

/* 1 if some encoder layer's weights have other types than layer 0's:
 * the layers then cannot run as one loop body. */
static int
layers_differ(const SiglipQuant *q)
{
	for (int i = 0; i < q->nweight; i++) {
		const SiglipQWeight *w = &q->weight[i], *first = NULL;
		if (w->layer <= 0)
			continue;
		const char *sfx = strchr(strstr(w->name, "layers.") + 7, '.');
		for (int k = 0; k < q->nweight && !first; k++)
			if (q->weight[k].layer == 0 &&
			    !strcmp(
			        strchr(strstr(q->weight[k].name, "layers.") + 7,
			               '.'),
			        sfx))
				first = &q->weight[k];
		if (first->dtype != w->dtype || first->channel != w->channel ||
		    first->k_block != w->k_block ||
		    (dtype_is_f8(w->dtype) && first->scale[0] != w->scale[0]))
			return 1;
	}
	return 0;
}

/* 1 if graph weight gname comes from FP8 codes (a quantized checkpoint). */
static int
from_codes(const StFile *f, const char *gname)
{
	SiglipSource src;
	siglip_weight_source(gname, &src);
	if (src.kscale)
		return 0;
	const StTensor *s = st_find(f, src.name[0]);
	return s && (s->dtype == ST_F8_E4M3FNUZ || s->dtype == ST_F8_E5M2FNUZ);
}

static int
write_inputs(ipu_device *dev, const Graph *g, const StFile *f,
             const SiglipQuant *q, int fold, const float *patches, Diag *d)
{
	for (int32_t id = 0; id < g->ntensors; id++) {
		const Tensor *t = graph_tensor(g, id);
		ipu_tensor_desc desc;
		ipu_error err;
		if (t->producer >= 0 ||
		    ipu_tensor_info(dev, t->name, &desc, &err))
			continue;
		size_t n = (size_t)shape_elems(&t->shape);
		float *v = xmalloc(n * sizeof *v);
		int e = IPU_OK;
		if (!strcmp(t->name, "patches"))
			memcpy(v, patches, n * sizeof *v);
		else
			e = weight_values(f, q, t->name, n, fold, v, d);
		/* a quantized checkpoint's FP8 codes read at 2^0: their
		 * values are 2^scale that (the graph type's scale) */
		for (size_t i = 0; !e && from_codes(f, t->name) && i < n; i++)
			v[i] = ldexpf(v[i], t->elem.scale);
		if (!e)
			e = runner_write(dev, t, v, d);
		free(v);
		if (e)
			return e;
	}
	return IPU_OK;
}

/* The images of run k of a micro-batched batch: images k m .. k m + m - 1
 * of the batch's patches (`per` values an image), the last run's places
 * past the batch's n images filled with the batch's last image. */
static void
run_patches(const float *patches, size_t per, int n, int m, int k, float *to)
{
	for (int i = 0; i < m; i++) {
		int img = k * m + i < n ? k * m + i : n - 1;
		memcpy(to + (size_t)i * per, patches + (size_t)img * per,
		       per * sizeof *to);
	}
}

/* The package run `runs` times, each run on m images of the batch's n:
 * every run loads the package on a fresh device and writes every weight
 * again (the runtime resets a device's tiles when a package is loaded
 * after a run: include/ipu/runtime.h), then the run's patches; the
 * embedding rows of padding images are dropped. The observer sees the
 * first run only. */
static int
run_package(const SiglipRun *r, const Chip *chip, Package *pk, const Graph *g,
            const StFile *f, const SiglipQuant *q, int fold,
            const SiglipConfig *c, const float *patches, int m, int runs,
            SiglipResult *out, Diag *d)
{
	const Tensor *res =
	    graph_tensor(g, graph_find(g, c->use_head ? "pooled" : "last"));
	size_t rows = (size_t)shape_elems(&res->shape) / (size_t)m;
	size_t per =
	    (size_t)siglip_tokens(c) * c->channels * c->patch * c->patch;
	out->embedding =
	    xmalloc((size_t)out->batch * rows * sizeof *out->embedding);
	float *emb = xmalloc((size_t)m * rows * sizeof *emb);
	float *px = runs > 1 ? xmalloc((size_t)m * per * sizeof *px) : NULL;
	uint8_t *bytes = NULL; /* the package for the runs after the first */
	size_t len = 0;
	int e = runs > 1 ? pkg_write(pk, &bytes, &len, d) : IPU_OK;
	if (e)
		pkg_free(pk);
	for (int k = 0; !e && k < runs; k++) {
		Package *p = pk;
		if (k && (e = pkg_read(bytes, len, "siglip", &p, d)))
			break;
		if (runs > 1)
			run_patches(patches, per, out->batch, m, k, px);
		ipu_device *dev;
		const RunnerObserver *obs = k ? NULL : r->observe;
		double t0 = monotonic_seconds();
		e = runner_open_on(r->device, chip, p, r->threads, obs, &dev,
		                   d);
		if (!e)
			e = write_inputs(dev, g, f, q, fold,
			                 runs > 1 ? px : patches, d);
		out->load_seconds += monotonic_seconds() - t0;
		uint64_t cycles = 0;
		double host = 0;
		if (!e)
			e = runner_run(dev, r->max_cycles, p->total_cycles, obs,
			               &cycles, &host, d);
		out->cycles += cycles;
		out->host_seconds += host;
		if (!e)
			e = runner_read(dev, res, emb, d);
		int keep = out->batch - k * m < m ? out->batch - k * m : m;
		if (!e)
			memcpy(out->embedding + (size_t)k * m * rows, emb,
			       (size_t)keep * rows * sizeof *emb);
		if (dev)
			ipu_close(dev);
	}
	free(bytes);
	free(px);
	free(emb);
	return e;
}

/* The range (SiglipRun.range; docs/fidelity.md): the program's plans
 * (*plan, runner_build's; NULL if its package came from the cache)
 * lowered for the chip with every rule at its fast and at its slow bound
 * (runner_build_at), priced, or run as run_package runs the program. A
 * bound at which that program does not fit has cycles 0 and the reason in
 * out->range_unfit. */
static int
run_range(const SiglipRun *r, const Chip *chip, const CompileOptions *co,
          const Graph *g, Plan **plan, const StFile *f, const SiglipQuant *q,
          int fold, const SiglipConfig *c, const float *patches, int m,
          SiglipResult *out, Diag *d)
{
	int e = IPU_OK;
	for (int b = TIMING_FAST; !e && b <= TIMING_SLOW; b++) {
		Timing t;
		timing_profile(&t, (TimingBound)b);
		const Chip *at = chip_timed(chip, &t);
		uint64_t *cycles =
		    b == TIMING_FAST ? &out->cycles_fast : &out->cycles_slow;
		Package *pk = NULL;
		RunnerBuild rb;
		e = runner_build_at(g, chip, co, plan, at, r->cache_dir, &pk,
		                    &rb, d);
		if (e == IPU_ERANGE) {
			size_t n = strlen(out->range_unfit);
			snprintf(out->range_unfit + n,
			         sizeof out->range_unfit - n, "%s%s: %s",
			         n ? "; " : "", timing_bound_name(b), d->msg);
			e = IPU_OK;
			continue;
		}
		if (e)
			break;
		if (r->range == SIGLIP_RANGE_PREDICT || r->compile_only) {
			*cycles = rb.predicted_cycles * (uint64_t)out->runs;
			pkg_free(pk);
			continue;
		}
		/* the run at nominal timing is observed; the card model runs
		 * nominal timing only */
		SiglipRun bound = *r;
		bound.observe = NULL;
		bound.device = NULL;
		SiglipResult x = {.batch = out->batch};
		e = run_package(&bound, at, pk, g, f, q, fold, c, patches, m,
		                out->runs, &x, d);
		*cycles = x.cycles;
		siglip_result_free(&x);
	}
	return e;
}

int
siglip_run(const SiglipRun *r, SiglipResult *out, Diag *d)
{
	memset(out, 0, sizeof *out);
	const Chip *chip = r->chip ? r->chip : chip_default();
	if (r->dtype != DT_F32 && r->dtype != DT_F16 && r->dtype != DT_F8_F143)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "compute type %s: f32, f16 or f8_f143 only",
		                dtype_name(r->dtype));
	SiglipConfig c;
	StFile f;
	int e = siglip_config_read(r->config, &c, d);
	if (e)
		return e;
	if ((e = st_open(r->weights, &f, d)))
		return e;
	float *px = NULL, *patches = NULL;
	Graph *g = NULL;
	Package *pk = NULL;
	Plan *plan = NULL; /* the package's, for the range */
	SiglipQuant q = {0};
	int quant = siglip_is_quantized(&f);
	DType dtype = r->dtype;
	if (quant && r->dtype_given && !dtype_is_f8(r->dtype))
		e = diag_set(d, IPU_EINVAL, r->weights, 0, 0,
		             "a quantized checkpoint (\"%s\" metadata) runs "
		             "as its policy says: drop --dtype %s",
		             SIGLIP_QUANT_KEY, dtype_name(r->dtype));
	else if (quant && r->scales_given)
		e = diag_set(d, IPU_EINVAL, r->weights, 0, 0,
		             "a quantized checkpoint carries its activation "
		             "scales (\"%s\" metadata): drop --f8-scales",
		             SIGLIP_QUANT_KEY);
	else if (quant) {
		e = siglip_quant_read(&c, &f, r->weights, &q, d);
		dtype = DT_F8_F143;
	} else
		e = siglip_check(&c, &f, r->weights, NULL, d);
	SiglipPrecision prec = {.dtype = dtype,
	                        .round_pairs = r->round_pairs,
	                        .groups = r->groups,
	                        .fold_ln = r->fold_ln};
	ScaleCtx sc = {.f = &f, .layers = c.layers};
	QuantCtx qc = {.q = &q};
	if (!e && quant) {
		prec.weight_type = quant_type;
		prec.ctx = &qc;
		prec.unroll = layers_differ(&q);
		for (int i = 0; i < SIGLIP_GEMMS; i++) {
			prec.act_scale[i] = q.act_scale[i];
			prec.act_f152[i] = q.act[i] == DT_F8_F152;
		}
		memcpy(out->act_scale, prec.act_scale, sizeof prec.act_scale);
		out->quantized = 1;
		out->unrolled = prec.unroll;
	} else if (!e && dtype_is_f8(r->dtype)) {
		prec.weight_scale = weight_scale;
		prec.ctx = &sc;
		sc.fold = siglip_folds(&prec);
		e = siglip_f8_bounds(&c, &f, sc.fold, prec.act_scale, d);
		for (int i = 0; i < SIGLIP_GEMMS; i++)
			if (r->act_set[i])
				prec.act_scale[i] = r->act_scale[i];
		memcpy(out->act_scale, prec.act_scale, sizeof prec.act_scale);
		out->have_scales = !e;
	}
	if (!e)
		e = siglip_load_pixels(&c, r->images, r->nimages, r->pixels,
		                       &px, &out->batch, d);
	int m = 0; /* images a run */
	if (!e) {
		m = r->micro_batch ? r->micro_batch : out->batch;
		out->micro_batch = m;
		if (m < 1)
			e = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "micro-batch %d: 1 or more images a run",
			             m);
		else if (m > out->batch)
			e = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "micro-batch %d: more than the batch's %d "
			             "image%s",
			             m, out->batch, out->batch > 1 ? "s" : "");
		else if (r->groups > 1 && m % r->groups)
			e = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "%d groups do not divide the %d image%s "
			             "a run",
			             r->groups, m, m > 1 ? "s" : "");
		else
			out->runs = (out->batch + m - 1) / m;
	}
	if (!e) {
		out->d = c.hidden;
		size_t n = (size_t)out->batch * siglip_tokens(&c) * c.channels *
		           c.patch * c.patch;
		patches = xmalloc(n * sizeof *patches);
		siglip_patches(&c, out->batch, px, patches);
		char *text = siglip_graph_text(&c, m, &prec);
		Diag errs[GRAPH_MAX_ERRORS];
		int nerr = 0;
		if ((e = sc.e))
			*d = sc.d;
		else if ((e = qc.e))
			*d = qc.d;
		else if ((e = graph_parse(text, strlen(text), "siglip", &g,
		                          errs, &nerr)))
			*d = errs[0];
		free(text);
	}
	/* CompileOptions.no_b_wrap; the plan kept for the range */
	CompileOptions co = {.no_b_wrap = r->b_wrap < 0,
	                     .keep_plan = r->range != SIGLIP_RANGE_NONE};
	if (!e) {
		RunnerBuild b;
		e = runner_build(g, chip, &co, r->cache_dir, r->place_report,
		                 r->observe, &pk, &b, d);
		plan = b.plan;
		out->compile_ms = b.compile_ms;
		out->run_predicted_cycles = b.predicted_cycles;
		out->predicted_cycles =
		    b.predicted_cycles * (uint64_t)out->runs;
		out->tiles = b.tiles;
		out->peak_tile_bytes = b.peak_tile_bytes;
		out->cached = b.cached;
		if (e == IPU_ERANGE && (r->micro_batch || out->batch > 1)) {
			Diag why = *d;
			char what[96] = "";
			if (r->micro_batch)
				snprintf(what, sizeof what,
				         "the micro-batch of %d image%s (%d "
				         "run%s for %d) does not fit: ",
				         m, m > 1 ? "s" : "", out->runs,
				         out->runs > 1 ? "s" : "", out->batch);
			e = diag_set(d, e, why.file[0] ? why.file : NULL,
			             why.line, why.col, "%s%s%s", what, why.msg,
			             m > 1 ? "; a smaller --micro-batch may fit"
			                   : "");
		}
	}
	if (!e && !r->compile_only) {
		e = run_package(r, chip, pk, g, &f, &q, sc.fold, &c, patches, m,
		                out->runs, out, d);
		pk = NULL; /* the device had it */
	}
	if (!e && r->range != SIGLIP_RANGE_NONE)
		e = run_range(r, chip, &co, g, &plan, &f, &q, sc.fold, &c,
		              patches, m, out, d);
	if (!e) { /* MACs even compiled only; MFU 0 without cycles */
		/* the program's MACs are m images'; the padding images' are
		 * not counted (the tower's MACs are the same for each image) */
		uint64_t macs;
		out->mfu =
		    runner_mfu(g, chip, out->cycles, &macs) * out->batch / m;
		out->macs += macs / (uint64_t)m * (uint64_t)out->batch;
		out->chip_seconds = (double)out->cycles / chip->clock_hz;
	}
	siglip_quant_free(&q);
	pkg_free(pk);
	plan_free(plan); /* before its graph */
	graph_free(g);
	free(patches);
	free(px);
	st_free(&f);
	return e;
}

void
siglip_result_free(SiglipResult *r)
{
	free(r->embedding);
	r->embedding = NULL;
}

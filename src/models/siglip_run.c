/*
 * siglip_run.c - `ipu run siglip`: a checkpoint and images in, the pooled
 * embedding out, through the compiler and the emulated chip.
 *
 * Order: config and checkpoint checked (siglip_check), pixels made
 * (images decoded and preprocessed, or read from a .npy), the graph built
 * for the batch and compiled, every input and weight written by name
 * (converted to the compute type; the derived weights as
 * siglip_weight_source says), one run, the output read back.
 */
#include "siglip_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ipu/runtime.h>

#include "../runner/runner.h"
#include "../image/image.h"
#include "../util/npy.h"
#include "safetensors.h"
#include "siglip_weights.h"

/* The batch's pixel values [B, 3, S, S]. */
static int
load_pixels(const SiglipRun *r, const SiglipConfig *c, float **px, int *batch,
            Diag *d)
{
	size_t per = (size_t)c->channels * c->image * c->image;
	if (r->pixels) {
		NpyArray a;
		int e = npy_read(r->pixels, &a, d);
		if (e)
			return e;
		if (a.dtype != NPY_F32 || a.rank != 4 ||
		    a.shape[1] != (uint64_t)c->channels ||
		    a.shape[2] != (uint64_t)c->image ||
		    a.shape[3] != (uint64_t)c->image || !a.shape[0]) {
			npy_free(&a);
			return diag_set(d, IPU_EINVAL, r->pixels, 0, 0,
			                "pixel values must be f32 [B, %d, %d, "
			                "%d] for this config",
			                c->channels, c->image, c->image);
		}
		*batch = (int)a.shape[0];
		*px = a.data;
		return IPU_OK;
	}
	if (r->nimages < 1)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "no image given (--image or --pixels)");
	if (c->channels != 3)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "images are RGB; the config has %d channels",
		                c->channels);
	Image *img = xcalloc((size_t)r->nimages, sizeof *img);
	int e = IPU_OK, n = 0;
	for (; n < r->nimages && !e; n++)
		e = image_load(r->images[n], &img[n], d);
	if (!e) {
		*px = xmalloc((size_t)r->nimages * per * sizeof **px);
		Preprocess p = preprocess_siglip((uint32_t)c->image);
		e = preprocess_images(img, (size_t)r->nimages, &p, *px, d);
		*batch = r->nimages;
	}
	for (int i = 0; i < n; i++)
		image_free(&img[i]);
	free(img);
	return e;
}

/* Graph weight `gname` ([want] elements) from the checkpoint, as f32
 * values (siglip_weight_source says from which tensors). */
static int
weight_values(const StFile *f, const char *gname, size_t want, float *out,
              Diag *d)
{
	SiglipSource src;
	siglip_weight_source(gname, &src);
	int e = IPU_OK;
	size_t each = want / (size_t)src.n;
	for (int k = 0; !e && k < src.n; k++) {
		const StTensor *s = st_find(f, src.name[k]);
		if (!s)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "the checkpoint has no %s (for graph "
			                "weight %s)",
			                src.name[k], gname);
		size_t have = st_elements(s);
		float *all = xmalloc(have * sizeof *all), *to = out + k * each;
		e = st_to_f32(f, s, all, d);
		if (!e && src.part >= 0 && have == 3 * each) /* rows part d */
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
	sc->e = weight_values(sc->f, gname, n, v, &sc->d);
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
		return siglip_f8_scale(max_abs(sc, gname));
	const char *suffix = strchr(gname + sizeof layer - 1, '.');
	if (!suffix || strlen(suffix) >= sizeof sc->suffix[0])
		return siglip_f8_scale(max_abs(sc, gname));
	for (int i = 0; i < sc->nmemo; i++)
		if (!strcmp(sc->suffix[i], suffix))
			return sc->scale[i];
	double max = 0;
	for (int l = 0; l < sc->layers; l++) {
		char name[256];
		snprintf(name, sizeof name, "%s%d%s", layer, l, suffix);
		max = fmax(max, max_abs(sc, name));
	}
	int scale = siglip_f8_scale(max);
	if (sc->nmemo < SCALE_MEMO) {
		snprintf(sc->suffix[sc->nmemo], sizeof sc->suffix[0], "%s",
		         suffix);
		sc->scale[sc->nmemo++] = scale;
	}
	return scale;
}

static int
write_inputs(ipu_device *dev, const Graph *g, const StFile *f,
             const float *patches, Diag *d)
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
			e = weight_values(f, t->name, n, v, d);
		if (!e)
			e = runner_write(dev, t, v, d);
		free(v);
		if (e)
			return e;
	}
	return IPU_OK;
}

static int
run_package(const SiglipRun *r, const Chip *chip, Package *pk, const Graph *g,
            const StFile *f, const SiglipConfig *c, const float *patches,
            SiglipResult *out, Diag *d)
{
	ipu_device *dev;
	int e = runner_open(chip, pk, r->threads, r->observe, &dev, d);
	if (!e)
		e = write_inputs(dev, g, f, patches, d);
	if (!e)
		e = runner_run(dev, r->max_cycles, pk->total_cycles, r->observe,
		               &out->cycles, &out->host_seconds, d);
	const Tensor *res =
	    graph_tensor(g, graph_find(g, c->use_head ? "pooled" : "last"));
	out->embedding =
	    xmalloc((size_t)shape_elems(&res->shape) * sizeof *out->embedding);
	if (!e)
		e = runner_read(dev, res, out->embedding, d);
	if (dev)
		ipu_close(dev);
	return e;
}

static int
run_once(const SiglipRun *r, SiglipResult *out, Diag *d)
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
	e = siglip_check(&c, &f, r->weights, NULL, d);
	SiglipPrecision prec = {.dtype = r->dtype};
	ScaleCtx sc = {.f = &f, .layers = c.layers};
	if (!e && dtype_is_f8(r->dtype)) {
		prec.weight_scale = weight_scale;
		prec.ctx = &sc;
		e = siglip_f8_bounds(&c, &f, prec.act_scale, d);
		for (int i = 0; i < SIGLIP_GEMMS; i++)
			if (r->act_set[i])
				prec.act_scale[i] = r->act_scale[i];
		memcpy(out->act_scale, prec.act_scale, sizeof prec.act_scale);
		out->have_scales = !e;
	}
	if (!e)
		e = load_pixels(r, &c, &px, &out->batch, d);
	if (!e) {
		out->d = c.hidden;
		size_t n = (size_t)out->batch * siglip_tokens(&c) * c.channels *
		           c.patch * c.patch;
		patches = xmalloc(n * sizeof *patches);
		siglip_patches(&c, out->batch, px, patches);
		char *text = siglip_graph_text(&c, out->batch, &prec);
		Diag errs[GRAPH_MAX_ERRORS];
		int nerr = 0;
		if ((e = sc.e))
			*d = sc.d;
		else if ((e = graph_parse(text, strlen(text), "siglip", &g,
		                          errs, &nerr)))
			*d = errs[0];
		free(text);
	}
	if (!e) {
		RunnerBuild b;
		e = runner_build(g, chip, r->cache_dir, r->place_report,
		                 r->observe, &pk, &b, d);
		out->compile_ms = b.compile_ms;
		out->predicted_cycles = b.predicted_cycles;
		out->tiles = b.tiles;
		out->peak_tile_bytes = b.peak_tile_bytes;
		out->cached = b.cached;
	}
	if (!e && !r->compile_only) {
		e = run_package(r, chip, pk, g, &f, &c, patches, out, d);
		pk = NULL; /* the device had it */
	}
	if (!e) {
		/* MFU: the time at each matmul's peak (f8 operands run at
		 * the f8 rate) over the time taken (none compiled only) */
		double ideal = 0;
		for (int i = 0; i < g->nops; i++) {
			const Op *op = &g->ops[i];
			if (op->kind != OP_MATMUL)
				continue;
			uint64_t macs = (uint64_t)graph_op_work(g, op).macs;
			DType dt = graph_tensor(g, op->in[0])->elem.dtype;
			uint32_t peak = dt == DT_F32      ? chip->macs_f32
			                : dtype_is_f8(dt) ? chip->macs_f8
			                                  : chip->macs_f16;
			out->macs += macs;
			ideal += peak ? (double)macs / peak : 0;
		}
		out->chip_seconds = (double)out->cycles / chip->clock_hz;
		if (out->cycles)
			out->mfu = ideal / ((double)out->cycles * chip->tiles);
	}
	pkg_free(pk);
	graph_free(g);
	free(patches);
	free(px);
	st_free(&f);
	return e;
}

int
siglip_run(const SiglipRun *r, SiglipResult *out, Diag *d)
{
	int e = run_once(r, out, d);
	for (int b = TIMING_FAST; !e && r->range && b <= TIMING_SLOW; b++) {
		SiglipRun at = *r;
		Timing t;
		timing_profile(&t, (TimingBound)b);
		at.chip = chip_timed(r->chip ? r->chip : chip_default(), &t);
		at.range = SIGLIP_RANGE_NONE;
		at.observe = NULL; /* the run at nominal timing is observed */
		at.compile_only = r->range == SIGLIP_RANGE_PREDICT;
		SiglipResult x;
		e = run_once(&at, &x, d);
		*(b == TIMING_FAST ? &out->cycles_fast : &out->cycles_slow) =
		    at.compile_only ? x.predicted_cycles : x.cycles;
		siglip_result_free(&x);
	}
	return e;
}

void
siglip_result_free(SiglipResult *r)
{
	free(r->embedding);
	r->embedding = NULL;
}

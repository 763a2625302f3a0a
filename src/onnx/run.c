/*
 * run.c - an imported ONNX model on the emulated chip: compiled through
 * runner_build (and its cache: the package holds no weight values, so the
 * key is the graph's text alone), loaded once with its weights, then run
 * on inputs as many times as asked (onnx.h). And the self-contained
 * package of `ipu compile model.onnx`, whose tiles hold the weights.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.h"

#include "../util/npy.h"

struct OnnxSession {
	OnnxModel *m;
	const Chip *chip;
	Package *pk; /* the next load's (runner_open takes it), or NULL */
	uint8_t *pkg_bytes; /* the package, for the loads after the first */
	size_t pkg_len;
	int threads;
	const RunnerDevice *device; /* NULL: the emulator */
	ipu_device *dev;            /* loaded, weights written, not run yet */
	uint64_t predicted, max_cycles;
	RunnerBuild build;
};

/* Is tensor t in the loaded program (one that no op reads is not)? */
static int
loaded(ipu_device *dev, const Tensor *t)
{
	ipu_tensor_desc desc;
	ipu_error none;
	return !ipu_tensor_info(dev, t->name, &desc, &none);
}

/* A fresh device with the package and the weights (a device runs a
 * loaded program once, and owns its package: the first load takes the
 * built one, the later ones a copy read back from its bytes). */
static int
load(OnnxSession *s, Diag *d)
{
	const OnnxModel *m = s->m;
	if (s->dev)
		ipu_close(s->dev);
	s->dev = NULL;
	int e = s->pk ? IPU_OK
	              : pkg_read(s->pkg_bytes, s->pkg_len, "onnx session",
	                         &s->pk, d);
	Package *pk = s->pk;
	s->pk = NULL;
	if (!e)
		e = runner_open_on(s->device, s->chip, pk, s->threads, NULL,
		                   &s->dev, d);
	for (int i = 0; !e && i < m->nweights; i++) {
		const Tensor *t = graph_tensor(m->g, m->weight_id[i]);
		if (loaded(s->dev, t))
			e = runner_write(s->dev, t, m->weight_value[i], d);
	}
	return e;
}

int
onnx_session_open(OnnxModel *m, const OnnxRunOptions *o, OnnxSession **out,
                  RunnerBuild *b, Diag *d)
{
	OnnxSession *s = xcalloc(1, sizeof *s);
	s->m = m;
	s->chip = o->chip ? o->chip : chip_default();
	s->max_cycles = o->max_cycles;
	s->device = o->device;
	s->threads = o->threads > 0 ? o->threads : 2;
	int e = runner_build(m->g, s->chip, NULL, o->cache_dir, NULL, NULL,
	                     &s->pk, &s->build, d);
	if (!e)
		e = pkg_write(s->pk, &s->pkg_bytes, &s->pkg_len, d);
	if (!e)
		e = load(s, d);
	s->predicted = s->build.predicted_cycles;
	if (b)
		*b = s->build;
	if (e) {
		s->m = NULL; /* the caller keeps m */
		onnx_session_close(s);
		return e;
	}
	*out = s;
	return IPU_OK;
}

const OnnxModel *
onnx_session_model(const OnnxSession *s)
{
	return s->m;
}

/* Element i of integer input p is x, which is no index into its table
 * (or, read by no Gather, no integer below 2^24 in magnitude: exact as
 * f32). */
static int
not_index(const OnnxPort *p, int64_t i, const char *x, Diag *d)
{
	if (!p->index_range)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "input '%.100s': element %lld is %s, not an "
		                "integer below 2^24 in magnitude",
		                p->name, (long long)i, x);
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "input '%.100s': element %lld is %s, not an index into "
	                "the %lld rows of its Gather",
	                p->name, (long long)i, x, (long long)p->index_range);
}

/* The bound of integer input p's values: its Gather's rows (negatives
 * count from the end), or 2^24 for one no Gather reads (a mask). */
static int64_t
int_bound(const OnnxPort *p)
{
	return p->index_range ? p->index_range : (int64_t)1 << 24;
}

/* An integer input's values checked (integers inside the table that
 * Gather reads: the lookup would give a row of zeros or read past the
 * table, not an error, for any other) and negatives counted from the
 * end. */
static int
index_values(const OnnxPort *p, const float *in, float **out, Diag *d)
{
	int64_t n = shape_elems(&p->shape), r = int_bound(p);
	float *v = xmalloc((size_t)n * sizeof *v);
	for (int64_t i = 0; i < n; i++) {
		double x = in[i];
		if (x != floor(x) || x < (double)-r || x >= (double)r) {
			free(v);
			char s[32];
			snprintf(s, sizeof s, "%.9g", x);
			return not_index(p, i, s, d);
		}
		v[i] = (float)(x < 0 && p->index_range ? x + (double)r : x);
	}
	*out = v;
	return IPU_OK;
}

int
onnx_input_npy(const OnnxModel *m, const OnnxPort *p, const char *path,
               float **v, Diag *d)
{
	if (!p->is_int)
		return runner_npy_values(graph_tensor(m->g, p->id),
		                         &(RunnerFile){.path = path}, v, d);
	NpyArray a;
	int e = npy_read(path, &a, d);
	if (e)
		return e;
	int same = a.rank == p->onnx_rank &&
	           (a.dtype == NPY_I64 || a.dtype == NPY_I32);
	for (int i = 0; same && i < a.rank; i++)
		same = a.shape[i] == (uint64_t)p->shape.dim[i];
	if (!same) {
		char want[96];
		shape_format(&p->shape, want, sizeof want);
		npy_free(&a);
		return diag_set(d, IPU_EINVAL, path, 0, 0,
		                "input '%.100s' holds token ids: it needs an "
		                "int64 or int32 .npy of shape %s",
		                p->name, p->onnx_rank ? want : "() (a scalar)");
	}
	int64_t n = shape_elems(&p->shape);
	*v = xmalloc((size_t)n * sizeof **v);
	for (int64_t i = 0; !e && i < n; i++) {
		int64_t x;
		if (a.dtype == NPY_I64)
			memcpy(&x, (const int64_t *)a.data + i, sizeof x);
		else
			x = ((const int32_t *)a.data)[i];
		char s[32];
		snprintf(s, sizeof s, "%lld", (long long)x);
		/* checked here as an integer: far ones are not exact floats */
		if (x < -int_bound(p) || x >= int_bound(p))
			e = not_index(p, i, s, d);
		(*v)[i] = (float)x;
	}
	npy_free(&a);
	if (e) {
		free(*v);
		*v = NULL;
	}
	return e;
}

int
onnx_session_run(OnnxSession *s, const float *const *in, float **out,
                 OnnxStats *st, Diag *d)
{
	const OnnxModel *m = s->m;
	memset(st, 0, sizeof *st);
	st->build = s->build;
	int e = s->dev ? IPU_OK : load(s, d);
	for (int i = 0; !e && i < m->ninputs; i++) {
		const Tensor *t = graph_tensor(m->g, m->inputs[i].id);
		float *ids = NULL;
		if (m->inputs[i].is_int)
			e = index_values(&m->inputs[i], in[i], &ids, d);
		if (!e && loaded(s->dev, t))
			e = runner_write(s->dev, t, ids ? ids : in[i], d);
		free(ids);
	}
	if (!e)
		e = runner_run(s->dev, s->max_cycles, s->predicted, NULL,
		               &st->cycles, &st->host_seconds, d);
	for (int i = 0; !e && i < m->noutputs; i++)
		e = runner_read(s->dev, graph_tensor(m->g, m->outputs[i].id),
		                out[i], d);
	if (s->dev)
		ipu_close(s->dev); /* the next run loads afresh */
	s->dev = NULL;
	if (!e) {
		st->mfu = runner_mfu(m->g, s->chip, st->cycles, &st->macs);
		st->chip_seconds = (double)st->cycles / s->chip->clock_hz;
	}
	return e;
}

void
onnx_session_close(OnnxSession *s)
{
	if (!s)
		return;
	if (s->dev)
		ipu_close(s->dev);
	pkg_free(s->pk);
	free(s->pkg_bytes);
	onnx_model_free(s->m);
	free(s);
}

int
onnx_compile_package(const OnnxModel *m, const CompileOptions *o, Package **pk,
                     CompileReport *rep, Diag *d)
{
	int e = compile_graph(m->g, o, pk, rep, d);
	/* each weight's pieces packed into segments of their tiles */
	for (int i = 0; !e && i < m->nweights; i++) {
		const Tensor *t = graph_tensor(m->g, m->weight_id[i]);
		const PkgTensor *pt = pkg_find_tensor(*pk, t->name);
		if (!pt)
			continue; /* read by no op */
		size_t n = (size_t)shape_elems(&t->shape);
		uint8_t *host = xmalloc(n * (size_t)dtype_size(t->elem.dtype));
		runner_encode(t->elem, m->weight_value[i], n, host, NULL);
		for (uint32_t k = 0; !e && k < pt->npiece; k++) {
			const PkgPiece *pc = &pt->piece[k];
			uint64_t bytes = pkg_piece_bytes(pt, pc);
			uint8_t *tile = xmalloc((size_t)bytes);
			if (pkg_piece_pack(pt, pc, host, tile))
				e = diag_set(d, IPU_EINVAL, NULL, 0, 0,
				             "weight %s: piece %u cannot be "
				             "packed",
				             t->name, k);
			else
				pkg_add_segment(*pk, pc->tile, pc->addr, tile,
				                (uint32_t)bytes);
			free(tile);
		}
		free(host);
	}
	if (!e)
		e = pkg_check(*pk, d);
	return e;
}

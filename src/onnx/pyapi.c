/*
 * pyapi.c - the C entry points of libipu.so, which the Python package
 * (python/ipu/__init__.py) calls through ctypes: an ONNX model imported,
 * compiled and loaded (onnx.h's session), its ports described, runs on
 * float32 arrays. Plain C types only; errors as text in a caller's buffer.
 */
#include <stdio.h>
#include <string.h>

#include "onnx.h"

#define EXPORT __attribute__((visibility("default")))

static void
say(const Diag *d, char *err, size_t len)
{
	if (err && len)
		diag_format(d, err, len);
}

/* The model at path compiled for dtype ("f32", "f16", "f8") on the
 * default chip; cache_dir may be NULL. NULL and err filled on failure. */
EXPORT void *
ipu_py_open(const char *path, const char *dtype, const char *cache_dir,
            int threads, char *err, size_t errlen)
{
	Diag d;
	diag_clear(&d);
	OnnxDType t;
	if (!onnx_dtype_from_name(dtype, &t)) {
		diag_set(&d, IPU_EINVAL, NULL, 0, 0,
		         "dtype '%.40s': f32, f16 or f8", dtype);
		say(&d, err, errlen);
		return NULL;
	}
	OnnxModel *m;
	if (onnx_import_file(path, t, &m, &d)) {
		say(&d, err, errlen);
		return NULL;
	}
	OnnxRunOptions o = {.cache_dir = cache_dir, .threads = threads};
	OnnxSession *s;
	if (onnx_session_open(m, &o, &s, NULL, &d)) {
		onnx_model_free(m);
		say(&d, err, errlen);
		return NULL;
	}
	return s;
}

EXPORT void
ipu_py_close(void *s)
{
	onnx_session_close(s);
}

/* Number of inputs (output 0) or outputs (1). */
EXPORT int
ipu_py_ports(void *s, int output)
{
	const OnnxModel *m = onnx_session_model(s);
	return output ? m->noutputs : m->ninputs;
}

/* Port i's ONNX name; its ONNX rank, dims into dim[0..rank-1]. */
EXPORT const char *
ipu_py_port(void *s, int output, int i, int *rank, long long *dim)
{
	const OnnxModel *m = onnx_session_model(s);
	const OnnxPort *p = output ? &m->outputs[i] : &m->inputs[i];
	*rank = p->onnx_rank;
	for (int k = 0; k < p->onnx_rank; k++)
		dim[k] = p->shape.dim[k];
	return p->name;
}

/* One run: in[i] and out[i] float32 row-major arrays of each port's
 * shape. stats: cycles, predicted cycles, seconds at the chip's clock,
 * MFU, host seconds. 0 or -1 with err filled. */
EXPORT int
ipu_py_run(void *s, const float *const *in, float **out, double *stats,
           char *err, size_t errlen)
{
	Diag d;
	diag_clear(&d);
	OnnxStats st;
	if (onnx_session_run(s, in, out, &st, &d)) {
		say(&d, err, errlen);
		return -1;
	}
	stats[0] = (double)st.cycles;
	stats[1] = (double)st.build.predicted_cycles;
	stats[2] = st.chip_seconds;
	stats[3] = st.mfu;
	stats[4] = st.host_seconds;
	return 0;
}

/* The import's notes on approximations ("" if none). */
EXPORT const char *
ipu_py_notes(void *s)
{
	return onnx_session_model(s)->notes;
}

/*
 * onnx.h - the ONNX front end: a `.onnx` model file (protobuf, read with
 * protobuf-c and the onnx.proto of Debian's libonnx-dev) checked field by
 * field and turned into a graph of the IR (docs/graph.md) plus the values
 * of its weights; and the imported model compiled and run on the emulated
 * chip (docs/onnx.md).
 *
 * Import folds everything that does not depend on a graph input (constant
 * and shape subgraphs: Shape, Gather, Concat, ... as PyTorch's exporter
 * emits them around fixed shapes) on the host, maps the rest onto the IR's
 * operators, and recognises the decomposed forms PyTorch exports for
 * LayerNorm and GELU. Anything else fails with the node's name and op.
 */
#ifndef IPU_ONNX_H
#define IPU_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "../graph/graph.h"
#include "../runner/runner.h"

/* The compute type of an imported model: f32, f16, or f8 (matmul weights
 * in f8 F143 with a power-of-two scale each, everything else in f16). */
typedef enum { ONNX_F32, ONNX_F16, ONNX_F8 } OnnxDType;
/* "f32", "f16", "f8" into *t; 0 if the name is none of them. */
int onnx_dtype_from_name(const char *name, OnnxDType *t);

/* A graph input or output of the model under its ONNX name. */
typedef struct {
	char *name;    /* the ONNX name */
	int32_t id;    /* the IR tensor */
	Shape shape;   /* the ONNX shape (rank 0 stored as [1]) */
	int onnx_rank; /* the ONNX rank (0 for a scalar) */
	/* an integer input (token ids): its values, given as floats, must
	 * be integers in [-index_range, index_range) (negatives count from
	 * the end, as Gather's do); 0 for a float input, or an integer one
	 * no Gather reads (a mask: integers below 2^24 in magnitude) */
	int64_t index_range;
	int is_int;
} OnnxPort;

typedef struct {
	Graph *g;
	OnnxPort *inputs, *outputs;
	int ninputs, noutputs;
	/* the values of every weight of g, in tensor id order */
	int32_t *weight_id;
	float **weight_value;
	int nweights;
	/* approximations the import made, for the user ("" if none) */
	char notes[256];
} OnnxModel;

/* Import a model from its bytes; file names it in errors. */
int onnx_import(const uint8_t *data, size_t len, const char *file, OnnxDType t,
                OnnxModel **out, Diag *d);
int onnx_import_file(const char *path, OnnxDType t, OnnxModel **out, Diag *d);
void onnx_model_free(OnnxModel *m);
/* The model's input or output named name (ONNX or IR name), or NULL. */
const OnnxPort *onnx_find_port(const OnnxModel *m, const char *name,
                               int output);

/* ---- run.c: an imported model compiled and loaded on an emulated device */

typedef struct OnnxSession OnnxSession;

typedef struct {
	const Chip *chip;           /* NULL: the default chip */
	int threads;                /* host threads of the emulator; 0: 2 */
	const char *cache_dir;      /* runner_build's; NULL: always compile */
	uint64_t max_cycles;        /* runner_run's; 0: the default */
	const RunnerDevice *device; /* runner_open_on's; NULL: the emulator */
} OnnxRunOptions;

/* What a run measured. */
typedef struct {
	uint64_t cycles;
	double chip_seconds; /* cycles at the chip's clock */
	double mfu;          /* runner_mfu's */
	uint64_t macs;
	double host_seconds;
	RunnerBuild build;
} OnnxStats;

/* m compiled (or read from the cache), loaded, its weights written. The
 * session keeps m (freed with it). */
int onnx_session_open(OnnxModel *m, const OnnxRunOptions *o, OnnxSession **s,
                      RunnerBuild *b, Diag *d);
const OnnxModel *onnx_session_model(const OnnxSession *s);
/* One run: in[i] the values of m->inputs[i] (row-major, its shape); out[i]
 * receives those of m->outputs[i]. */
int onnx_session_run(OnnxSession *s, const float *const *in, float **out,
                     OnnxStats *st, Diag *d);
void onnx_session_close(OnnxSession *s);

/* The values of model input p (its shape) read from the .npy file at
 * path, as onnx_session_run takes them: a float input's from float32 or
 * float16, an integer input's (token ids) from int64 or int32, each an
 * index into its Gather's table. */
int onnx_input_npy(const OnnxModel *m, const OnnxPort *p, const char *path,
                   float **v, Diag *d);

/* The model compiled into a package that holds its weights' values too
 * (`ipu compile model.onnx`). */
int onnx_compile_package(const OnnxModel *m, const CompileOptions *o,
                         Package **pk, CompileReport *rep, Diag *d);

#endif

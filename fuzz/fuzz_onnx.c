/*
 * fuzz_onnx.c - libFuzzer entry point for the ONNX importer: arbitrary
 * bytes as a .onnx file, through protobuf-c's parser, the field checks,
 * constant folding and the mapping onto the graph IR. A failure must say
 * why and leave no model; a model that imports must verify as a graph.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../src/onnx/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	OnnxModel *m;
	Diag d;
	if (onnx_import(data, size, "fuzz.onnx", ONNX_F16, &m, &d) != 0) {
		if (m || !d.msg[0])
			abort();
		return 0;
	}
	if (graph_verify(m->g, &d) || !m->ninputs || !m->noutputs)
		abort();
	onnx_model_free(m);
	return 0;
}

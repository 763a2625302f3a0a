/*
 * onnxpriv.h - what the ONNX front end's files share: host tensors (the
 * values of constants and folded subgraphs), node attributes, and the
 * folding of one node on host tensors (fold.c).
 */
#ifndef IPU_ONNXPRIV_H
#define IPU_ONNXPRIV_H

#include <onnx.pb-c.h> /* generated (CMakeLists.txt) */
#include "onnx.h"

enum {
	HOST_MAX_RANK = 8,
	/* Largest constant folded on the host (elements): weights are
	 * constants too, so this is the largest weight as well. */
	HOST_MAX_ELEMS = (int64_t)1 << 28,
};

/* A tensor known at import time. Every type is held as doubles: integers
 * (shapes, indices) are exact up to 2^53, which no shape comes near. */
typedef struct {
	int rank;
	int64_t dim[HOST_MAX_RANK];
	int64_t n;
	int type; /* the ONNX element type (ONNX__TENSOR_PROTO__DATA_TYPE__*) */
	double *v;
} Host;

void host_tensor_free(Host *h);
/* A new host tensor of type, rank and dims (values zero); IPU_ERANGE if
 * it would be too large. */
int host_alloc(Host *h, int type, int rank, const int64_t *dim, Diag *d);
int host_is_int(int type);

/* The node's attribute `name`, or NULL. */
const Onnx__AttributeProto *attr_find(const Onnx__NodeProto *n,
                                      const char *name);
/* An INT attribute (def if absent); an INTS attribute (*n = -1 if absent). */
int attr_int(const Onnx__NodeProto *n, const char *name, int64_t def,
             int64_t *out, Diag *d);
int attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *out, int max,
              int *count, Diag *d);
int attr_float(const Onnx__NodeProto *n, const char *name, double def,
               double *out, Diag *d);
/* "node 'NAME' (OP): " before d's message; returns IPU_EINVAL. */
int node_error(Diag *d, const Onnx__NodeProto *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A TensorProto's values (checked: type, dims, data length). */
int host_from_tensor(const Onnx__TensorProto *t, Host *h, const char *what,
                     Diag *d);

/* Can fold.c compute this op on host tensors? */
int fold_supports(const char *op);
/* Compute node n on host inputs in[0..nin-1] (NULL: an omitted optional
 * input) into out[0..n_output-1]. */
int fold_node(const Onnx__NodeProto *n, Host *const *in, int nin, Host *out,
              Diag *d);

/* Shape's output for a tensor of these dims (its start and end). */
int onnx_shape_of(const Onnx__NodeProto *n, int rank, const int64_t *dim,
                  Host *out, Diag *d);
/* The dims Reshape's shape input asks for (0 copies, -1 infers). */
int onnx_reshape_dims(const Onnx__NodeProto *n, const int64_t *from, int rank,
                      const Host *shape, int64_t *dim, int *out_rank, Diag *d);
/* Squeeze's or Unsqueeze's result dims (axes: an input, NULL if none). */
int onnx_squeeze_dims(const Onnx__NodeProto *n, int unsqueeze,
                      const int64_t *from, int rank, const Host *axes,
                      int64_t *dim, int *out_rank, Diag *d);

/* An axis attribute in -rank..rank-1 made non-negative. */
int axis_norm(const Onnx__NodeProto *n, int64_t axis, int rank, int *out,
              Diag *d);

#endif

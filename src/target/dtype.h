/*
 * dtype.h - element types: the one table of the number formats tensors
 * are stored in. The graph, the kernels' host side, the package file and
 * the runtime all use these numbers (the runtime's public ipu_dtype
 * mirrors them, checked at compile time in src/rt/package.c).
 */
#ifndef IPU_DTYPE_H
#define IPU_DTYPE_H

#include <stddef.h>

#include "../util/fp.h"

/* X(ID, text name, bytes per element, is f8). f8 values carry a
 * power-of-two scale outside the format (graph ElemType, docs/graph.md). */
#define DTYPES(X)                                                              \
	X(F32, "f32", 4, 0)         /* IEEE binary32 */                        \
	X(F16, "f16", 2, 0)         /* IEEE binary16 */                        \
	X(F8_F143, "f8_f143", 1, 1) /* 1-4-3, bias 8 (fp.h FP8_F143) */        \
	X(F8_F152, "f8_f152", 1, 1) /* 1-5-2, bias 16 (fp.h FP8_F152) */

typedef enum {
#define X(id, name, size, f8) DT_##id,
	DTYPES(X)
#undef X
	    DT_COUNT
} DType;

/* dtype.c; each "?", 0 or 0 for a number outside the table */
const char *dtype_name(DType t);
int dtype_size(DType t); /* bytes per element */
int dtype_is_f8(DType t);
/* The fp.h format of an f8 type t. */
Fp8Format dtype_fp8_format(DType t);
/* Look up a dtype by its text name; -1 if none. */
int dtype_from_name(const char *s, size_t len);

#endif

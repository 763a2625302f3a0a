/*
 * npy.h - NumPy .npy files: the format numpy.save writes and numpy.load
 * reads (a magic string, a version, a Python dict literal naming dtype,
 * memory order and shape, then the raw elements).
 *
 * Written: version 1.0, little-endian, C order, the header padded so the
 * data starts at a multiple of 64 bytes (as numpy does). Read: versions
 * 1.0, 2.0 and 3.0; the dict must hold exactly the keys 'descr',
 * 'fortran_order' and 'shape'; fortran_order must be False; the data must
 * be exactly as long as the shape says. Any rank up to NPY_MAX_RANK,
 * including 0 (a scalar). Every malformed file gets a Diag naming the
 * file and the problem. docs/image.md describes the format's use.
 */
#ifndef IPU_NPY_H
#define IPU_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Element types, one row each in npy.c's table of descr strings. */
typedef enum {
	NPY_F32, /* '<f4' */
	NPY_F16, /* '<f2', IEEE binary16 bit patterns */
	NPY_U8,  /* '|u1' */
	NPY_I32, /* '<i4' */
	NPY_I64, /* '<i8' */
} NpyDtype;

enum { NPY_MAX_RANK = 32 }; /* numpy's own limit (NPY_MAXDIMS) */

typedef struct {
	NpyDtype dtype;
	int rank;                     /* 0..NPY_MAX_RANK */
	uint64_t shape[NPY_MAX_RANK]; /* the first `rank` are used */
	void *data; /* elements in C order, little-endian; owned by whoever
	               filled the struct (npy_free for npy_read/npy_decode) */
} NpyArray;

/* Bytes per element. */
size_t npy_dtype_size(NpyDtype t);
/* Elements in the array (1 for rank 0). */
uint64_t npy_count(const NpyArray *a);

/* The whole file in memory; *buf is malloc'd. Fails if the shape's byte
 * count overflows. */
int npy_encode(const NpyArray *a, uint8_t **buf, size_t *len, Diag *d);
/* Parse a file image; `name` goes into diagnostics. out->data is a
 * malloc'd copy of the elements. */
int npy_decode(const uint8_t *buf, size_t len, const char *name, NpyArray *out,
               Diag *d);

/* Write a to path. With overwrite == 0 an existing file is left alone and
 * the call fails ("exists"); with 1 it is replaced atomically. */
int npy_write(const char *path, const NpyArray *a, int overwrite, Diag *d);
int npy_read(const char *path, NpyArray *out, Diag *d);
/* Frees a->data (from npy_read or npy_decode). */
void npy_free(NpyArray *a);

#endif

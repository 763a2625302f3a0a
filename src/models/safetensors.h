/*
 * safetensors.h - the Hugging Face safetensors file: a strict reader (from
 * a buffer or a mapped file) and a streaming writer.
 *
 * Layout: 8 bytes little-endian N, N bytes of a UTF-8 JSON object (the
 * header), then the data section. The header maps each tensor name to
 * {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to
 * the data section) and may hold "__metadata__", a string->string object.
 * The reader checks every rule of the format (docs/models.md lists them):
 * a bounded N inside the file, valid UTF-8 and JSON, known dtypes, shapes
 * whose byte size equals end - begin without overflow, unique names, and
 * tensors that tile the data section exactly (no hole, no overlap, no
 * trailing byte). The first violation is reported in a Diag naming the
 * tensor and the numbers involved.
 */
#ifndef IPU_SAFETENSORS_H
#define IPU_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "../graph/graph.h"
#include "../util/util.h"

/* The format's element types: X(ID, header spelling, bits per element,
 * our graph dtype or -1). F8_E4M3 and F8_E5M2 are the OCP formats; their
 * FNUZ variants are the IPU's F143 and F152 (model.md 7.1), the only FP8
 * formats that map to ours. */
#define ST_DTYPES(X)                                                           \
	X(BOOL, "BOOL", 8, -1)                                                 \
	X(F4, "F4", 4, -1)                                                     \
	X(F6_E2M3, "F6_E2M3", 6, -1)                                           \
	X(F6_E3M2, "F6_E3M2", 6, -1)                                           \
	X(U8, "U8", 8, -1)                                                     \
	X(I8, "I8", 8, -1)                                                     \
	X(F8_E5M2, "F8_E5M2", 8, -1)                                           \
	X(F8_E4M3, "F8_E4M3", 8, -1)                                           \
	X(F8_E8M0, "F8_E8M0", 8, -1)                                           \
	X(F8_E4M3FNUZ, "F8_E4M3FNUZ", 8, DT_F8_F143)                           \
	X(F8_E5M2FNUZ, "F8_E5M2FNUZ", 8, DT_F8_F152)                           \
	X(I16, "I16", 16, -1)                                                  \
	X(U16, "U16", 16, -1)                                                  \
	X(F16, "F16", 16, DT_F16)                                              \
	X(BF16, "BF16", 16, -1)                                                \
	X(I32, "I32", 32, -1)                                                  \
	X(U32, "U32", 32, -1)                                                  \
	X(F32, "F32", 32, DT_F32)                                              \
	X(C64, "C64", 64, -1)                                                  \
	X(F64, "F64", 64, -1)                                                  \
	X(I64, "I64", 64, -1)                                                  \
	X(U64, "U64", 64, -1)

typedef enum {
#define X(id, name, bits, dt) ST_##id,
	ST_DTYPES(X)
#undef X
	    ST_DTYPE_COUNT
} StDtype;

enum {
	ST_MAX_HEADER = 100000000, /* bytes, the reference library's bound */
};

typedef struct {
	char *name; /* owned, NUL-terminated */
	StDtype dtype;
	int rank;        /* 0 for a scalar */
	uint64_t *shape; /* owned, rank entries */
	uint64_t begin;  /* byte offsets in the data section, end - begin = */
	uint64_t end;    /* elements * bits / 8 */
} StTensor;

typedef struct {
	char *key, *value; /* owned */
} StMeta;

typedef struct {
	StTensor *tensor; /* in data order (by begin) */
	size_t ntensor;
	StMeta *meta; /* __metadata__, in header order */
	size_t nmeta;
	const uint8_t *data; /* the data section (not owned) */
	uint64_t data_len;
	uint64_t header_len;      /* N */
	const StTensor **by_name; /* sorted by name, for st_find */
	void *map; /* st_open's mapping of the whole file, or NULL */
	size_t map_len;
} StFile;

/* safetensors.c */
const char *st_dtype_name(StDtype t);
int st_dtype_bits(StDtype t);
/* The graph dtype of t, or -1 when we have none. */
int st_dtype_graph(StDtype t);
/* Look up a header spelling; -1 if unknown. */
int st_dtype_from_name(const char *s);

/* Parse a whole file held in buf[len]; `what` names it in diagnostics.
 * The StFile points into buf, which must outlive it. */
int st_parse(const uint8_t *buf, size_t len, const char *what, StFile *out,
             Diag *d);
/* Map the file read-only and parse it; st_free unmaps. */
int st_open(const char *path, StFile *out, Diag *d);
void st_free(StFile *f);

/* "[a, b, c]" into buf, for messages. */
const char *st_shape_str(char *buf, size_t len, int rank,
                         const uint64_t *shape);
const StTensor *st_find(const StFile *f, const char *name);
uint64_t st_elements(const StTensor *t);
const uint8_t *st_bytes(const StFile *f, const StTensor *t);
/* The elements of an F32, F16, BF16, F64, F8_E4M3FNUZ or F8_E5M2FNUZ
 * (F143 and F152 codes, at scale 2^0) tensor as floats in out[], which
 * holds st_elements(t). Other dtypes are refused. */
int st_to_f32(const StFile *f, const StTensor *t, float *out, Diag *d);

/* A tensor to write: its data comes later, through st_writer_put. */
typedef struct {
	const char *name;
	StDtype dtype;
	int rank;
	const uint64_t *shape;
} StSpec;

/* The header for these tensors, laid out in the given order: the 8-byte
 * length, the JSON and spaces up to a multiple of 8 (so that the data
 * section is 8-byte aligned, as the reference writer does). Validates the
 * specs (names unique and not "__metadata__", sizes in range). */
int st_header(const StSpec *spec, size_t n, const StMeta *meta, size_t nmeta,
              uint8_t **out, size_t *len, Diag *d);

/* Streaming writer: the data of each tensor in spec order, in any number
 * of pieces. The file appears at `path` only when st_writer_close succeeds
 * with every byte written; an existing file is replaced only with
 * `overwrite`. */
typedef struct StWriter StWriter;
int st_writer_open(const char *path, const StSpec *spec, size_t n,
                   const StMeta *meta, size_t nmeta, int overwrite,
                   StWriter **out, Diag *d);
int st_writer_put(StWriter *w, const void *data, size_t len, Diag *d);
/* Commits (or, on error, discards) the file and frees w. */
int st_writer_close(StWriter *w, Diag *d);
/* Discard an unfinished file. */
void st_writer_abort(StWriter *w);

/* All at once: data[i] holds tensor i's bytes. */
int st_write(const char *path, const StSpec *spec, const void *const *data,
             size_t n, const StMeta *meta, size_t nmeta, int overwrite,
             Diag *d);

#endif

/*
 * safetensors.c - the safetensors reader and writer (safetensors.h).
 *
 * Reading is in three passes: the fixed prefix and the header bytes (length
 * bounds, UTF-8, no NUL), the JSON (cJSON) entry by entry (fields, dtype,
 * shape, offsets, byte size), then the layout over all tensors (unique
 * names; sorted by offset they must start at 0, touch end to start and end
 * at the data section's end). Numbers arrive from cJSON as doubles: a
 * count or offset must be an integer of at most 2^53, where doubles are
 * still exact.
 */
#define _DEFAULT_SOURCE /* MAP_PRIVATE with the POSIX feature macro */
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../util/fp.h"

static const struct {
	const char *name;
	int bits;
	int graph;
} dtypes[] = {
#define X(id, name, bits, dt) {name, bits, dt},
    ST_DTYPES(X)
#undef X
};

#define MAX_EXACT ((uint64_t)1 << 53) /* integers a double holds exactly */

const char *
st_dtype_name(StDtype t)
{
	return dtypes[t].name;
}

int
st_dtype_bits(StDtype t)
{
	return dtypes[t].bits;
}

int
st_dtype_graph(StDtype t)
{
	return dtypes[t].graph;
}

int
st_dtype_from_name(const char *s)
{
	for (int i = 0; i < ST_DTYPE_COUNT; i++)
		if (!strcmp(s, dtypes[i].name))
			return i;
	return -1;
}

static uint64_t
le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

const char *
st_shape_str(char *buf, size_t len, int rank, const uint64_t *shape)
{
	size_t n = snprintf(buf, len, "[");
	for (int i = 0; i < rank && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%" PRIu64, i ? ", " : "",
		              shape[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
	return buf;
}

/* Bytes of `elements` of t, or -1 on overflow or a partial byte. */
static int
tensor_bytes(StDtype t, uint64_t elements, uint64_t *bytes)
{
	uint64_t bits;
	if (__builtin_mul_overflow(elements, (uint64_t)dtypes[t].bits, &bits) ||
	    bits % 8)
		return -1;
	*bytes = bits / 8;
	return 0;
}

/* Elements of a shape; -1 on overflow. */
static int
shape_elements(int rank, const uint64_t *shape, uint64_t *out)
{
	uint64_t n = 1;
	for (int i = 0; i < rank; i++)
		if (__builtin_mul_overflow(n, shape[i], &n))
			return -1;
	*out = n;
	return 0;
}

uint64_t
st_elements(const StTensor *t)
{
	uint64_t n = 0;
	shape_elements(t->rank, t->shape, &n); /* checked when parsed */
	return n;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0: overlong forms,
 * surrogates and code points past U+10FFFF are invalid (RFC 3629). */
static int
utf8_seq(const uint8_t *s, size_t left)
{
	uint8_t c = s[0];
	if (c < 0x80)
		return 1;
	int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
	if (!n || c > 0xf4 || (size_t)n > left)
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

/* The header bytes: UTF-8, no NUL byte and no \u0000 escape (a C string
 * cannot hold either, so a name with one would silently change). */
static int
check_header_text(const uint8_t *h, size_t n, const char *what, Diag *d)
{
	if (n == 0 || h[0] != '{')
		return diag_set(
		    d, IPU_EINVAL, what, 0, 0,
		    "header does not start with '{' (a JSON object)");
	for (size_t i = 0; i < n;) {
		int k = utf8_seq(h + i, n - i);
		if (!k)
			return diag_set(
			    d, IPU_EINVAL, what, 0, 0,
			    "header is not valid UTF-8 (at byte %zu "
			    "of the header)",
			    i);
		if (h[i] == 0)
			return diag_set(
			    d, IPU_EINVAL, what, 0, 0,
			    "header holds a NUL byte (at byte %zu of "
			    "the header)",
			    i);
		if (h[i] == '\\' && i + 1 < n) {
			if (i + 5 < n && !memcmp(h + i + 1, "u0000", 5))
				return diag_set(d, IPU_EINVAL, what, 0, 0,
				                "header holds a \\u0000 escape "
				                "(at byte %zu of the header)",
				                i);
			i += 2; /* the escaped character */
			continue;
		}
		i += k;
	}
	return IPU_OK;
}

/* A JSON number that is an integer in 0..2^53. */
static int
json_uint(const cJSON *v, uint64_t *out)
{
	if (!cJSON_IsNumber(v))
		return -1;
	double x = v->valuedouble;
	if (!(x >= 0) || x > (double)MAX_EXACT || floor(x) != x)
		return -1;
	*out = (uint64_t)x;
	return 0;
}

static int
parse_shape(const cJSON *v, StTensor *t, const char *what, Diag *d)
{
	if (!cJSON_IsArray(v))
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "tensor '%s': shape is not an array", t->name);
	int rank = cJSON_GetArraySize(v);
	t->shape = xcalloc(rank ? rank : 1, sizeof *t->shape);
	int i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++)
		if (json_uint(e, &t->shape[i]))
			return diag_set(d, IPU_EINVAL, what, 0, 0,
			                "tensor '%s': shape[%d] is not a "
			                "non-negative integer",
			                t->name, i);
	t->rank = rank;
	return IPU_OK;
}

static int
parse_offsets(const cJSON *v, StTensor *t, const char *what, Diag *d)
{
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 ||
	    json_uint(v->child, &t->begin) ||
	    json_uint(v->child->next, &t->end))
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "tensor '%s': data_offsets is not [begin, end] "
		                "of non-negative integers",
		                t->name);
	return IPU_OK;
}

static int
parse_dtype(const cJSON *v, StTensor *t, const char *what, Diag *d)
{
	if (!cJSON_IsString(v))
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "tensor '%s': dtype is not a string", t->name);
	int dt = st_dtype_from_name(v->valuestring);
	if (dt < 0)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "tensor '%s': unknown dtype \"%.40s\"", t->name,
		                v->valuestring);
	t->dtype = dt;
	return IPU_OK;
}

/* The three fields, each exactly once, and nothing else. */
static int
parse_fields(const cJSON *obj, StTensor *t, const char *what, Diag *d)
{
	static const char *const field[3] = {"dtype", "shape", "data_offsets"};
	const cJSON *seen[3] = {0};
	for (const cJSON *f = obj->child; f; f = f->next) {
		int k = 0;
		while (k < 3 && strcmp(f->string, field[k]))
			k++;
		if (k == 3)
			return diag_set(d, IPU_EINVAL, what, 0, 0,
			                "tensor '%s': unknown field \"%.40s\"",
			                t->name, f->string);
		if (seen[k])
			return diag_set(
			    d, IPU_EINVAL, what, 0, 0,
			    "tensor '%s': field \"%s\" appears twice", t->name,
			    field[k]);
		seen[k] = f;
	}
	for (int k = 0; k < 3; k++)
		if (!seen[k])
			return diag_set(d, IPU_EINVAL, what, 0, 0,
			                "tensor '%s': no \"%s\"", t->name,
			                field[k]);
	int rc = parse_dtype(seen[0], t, what, d);
	if (!rc)
		rc = parse_shape(seen[1], t, what, d);
	if (!rc)
		rc = parse_offsets(seen[2], t, what, d);
	return rc;
}

/* One tensor entry, checked on its own against the data section. */
static int
parse_tensor(const cJSON *obj, StTensor *t, uint64_t data_len, const char *what,
             Diag *d)
{
	if (!cJSON_IsObject(obj))
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "tensor '%s': entry is not an object", t->name);
	int rc = parse_fields(obj, t, what, d);
	if (rc)
		return rc;
	char s[256];
	uint64_t elements, bits;
	if (shape_elements(t->rank, t->shape, &elements) ||
	    __builtin_mul_overflow(elements, (uint64_t)dtypes[t->dtype].bits,
	                           &bits))
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "tensor '%s': the size of shape %s overflows",
		                t->name,
		                st_shape_str(s, sizeof s, t->rank, t->shape));
	if (bits % 8)
		return diag_set(
		    d, IPU_EINVAL, what, 0, 0,
		    "tensor '%s': %" PRIu64
		    " elements of %s are not a whole number of bytes",
		    t->name, elements, st_dtype_name(t->dtype));
	uint64_t bytes = bits / 8;
	if (t->end < t->begin)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "tensor '%s': data_offsets [%" PRIu64
		                ", %" PRIu64 "] end before they begin",
		                t->name, t->begin, t->end);
	if (t->end - t->begin != bytes)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "tensor '%s': shape %s of %s needs %" PRIu64
		                " bytes but data_offsets [%" PRIu64 ", %" PRIu64
		                "] hold %" PRIu64,
		                t->name,
		                st_shape_str(s, sizeof s, t->rank, t->shape),
		                st_dtype_name(t->dtype), bytes, t->begin,
		                t->end, t->end - t->begin);
	if (t->end > data_len)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "tensor '%s': data_offsets [%" PRIu64
		                ", %" PRIu64
		                "] run past the data section (%" PRIu64
		                " bytes): truncated file?",
		                t->name, t->begin, t->end, data_len);
	return IPU_OK;
}

static int
parse_metadata(const cJSON *obj, StFile *f, const char *what, Diag *d)
{
	if (!cJSON_IsObject(obj))
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "__metadata__ is not an object");
	size_t n = cJSON_GetArraySize(obj);
	f->meta = xcalloc(n ? n : 1, sizeof *f->meta);
	for (const cJSON *e = obj->child; e; e = e->next) {
		if (!cJSON_IsString(e))
			return diag_set(
			    d, IPU_EINVAL, what, 0, 0,
			    "__metadata__ \"%.40s\" is not a string",
			    e->string);
		for (size_t i = 0; i < f->nmeta; i++)
			if (!strcmp(f->meta[i].key, e->string))
				return diag_set(d, IPU_EINVAL, what, 0, 0,
				                "__metadata__ key \"%.40s\" "
				                "appears twice",
				                e->string);
		f->meta[f->nmeta].key = xstrdup(e->string);
		f->meta[f->nmeta++].value = xstrdup(e->valuestring);
	}
	return IPU_OK;
}

static int
by_offset(const void *a, const void *b)
{
	const StTensor *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp((*(const StTensor *const *)a)->name,
	              (*(const StTensor *const *)b)->name);
}

/* Names unique; in offset order the tensors tile [0, data_len). */
static int
check_layout(StFile *f, const char *what, Diag *d)
{
	qsort(f->tensor, f->ntensor, sizeof *f->tensor, by_offset);
	f->by_name = xcalloc(f->ntensor ? f->ntensor : 1, sizeof *f->by_name);
	for (size_t i = 0; i < f->ntensor; i++)
		f->by_name[i] = &f->tensor[i];
	qsort(f->by_name, f->ntensor, sizeof *f->by_name, by_name);
	for (size_t i = 1; i < f->ntensor; i++) {
		const char *name = f->by_name[i]->name;
		if (!strcmp(f->by_name[i - 1]->name, name))
			return diag_set(d, IPU_EINVAL, what, 0, 0,
			                "tensor '%s' appears twice", name);
	}
	uint64_t at = 0;
	for (size_t i = 0; i < f->ntensor; i++) {
		const StTensor *t = &f->tensor[i];
		if (t->begin > at && i == 0)
			return diag_set(
			    d, IPU_EINVAL, what, 0, 0,
			    "tensor '%s' starts at byte %" PRIu64
			    ": a hole at the start of the data section",
			    t->name, t->begin);
		if (t->begin > at)
			return diag_set(d, IPU_EINVAL, what, 0, 0,
			                "a hole of %" PRIu64
			                " bytes between tensor '%s' (ends at "
			                "%" PRIu64
			                ") and tensor '%s' (starts at "
			                "%" PRIu64 ")",
			                t->begin - at, f->tensor[i - 1].name,
			                at, t->name, t->begin);
		if (t->begin < at)
			return diag_set(
			    d, IPU_EINVAL, what, 0, 0,
			    "tensors '%s' [%" PRIu64 ", %" PRIu64
			    ") and '%s' [%" PRIu64 ", %" PRIu64 ") overlap",
			    f->tensor[i - 1].name, f->tensor[i - 1].begin,
			    f->tensor[i - 1].end, t->name, t->begin, t->end);
		at = t->end;
	}
	if (at != f->data_len)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "the data section has %" PRIu64
		                " bytes but the tensors end at byte %" PRIu64
		                ": %" PRIu64 " trailing bytes",
		                f->data_len, at, f->data_len - at);
	return IPU_OK;
}

static int
parse_header(const cJSON *root, StFile *f, const char *what, Diag *d)
{
	if (!cJSON_IsObject(root))
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "header is not a JSON object");
	size_t n = cJSON_GetArraySize(root);
	f->tensor = xcalloc(n ? n : 1, sizeof *f->tensor);
	int have_meta = 0;
	for (const cJSON *e = root->child; e; e = e->next) {
		int rc;
		if (!strcmp(e->string, "__metadata__")) {
			if (have_meta++)
				return diag_set(d, IPU_EINVAL, what, 0, 0,
				                "__metadata__ appears twice");
			rc = parse_metadata(e, f, what, d);
		} else {
			StTensor *t = &f->tensor[f->ntensor++];
			t->name = xstrdup(e->string);
			rc = parse_tensor(e, t, f->data_len, what, d);
		}
		if (rc)
			return rc;
	}
	return check_layout(f, what, d);
}

int
st_parse(const uint8_t *buf, size_t len, const char *what, StFile *out, Diag *d)
{
	memset(out, 0, sizeof *out);
	if (len < 8)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "%zu bytes: too short for the 8-byte header "
		                "length",
		                len);
	uint64_t n = le64(buf);
	if (n > ST_MAX_HEADER)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "header length %" PRIu64
		                " exceeds the limit of %d bytes",
		                n, ST_MAX_HEADER);
	if (n > len - 8)
		return diag_set(d, IPU_EINVAL, what, 0, 0,
		                "header length %" PRIu64
		                " runs past the end of the file (%zu bytes)",
		                n, len);
	int rc = check_header_text(buf + 8, n, what, d);
	if (rc)
		return rc;
	/* cJSON wants a NUL after the text to prove nothing follows it */
	char *text = xmalloc(n + 1);
	memcpy(text, buf + 8, n);
	text[n] = 0;
	const char *stop = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, n + 1, &stop, 1);
	if (!root) {
		size_t at = stop ? (size_t)(stop - text) : 0;
		free(text);
		return diag_set(
		    d, IPU_EINVAL, what, 0, 0,
		    "header is not valid JSON (near byte %zu of the "
		    "header)",
		    at);
	}
	out->header_len = n;
	out->data = buf + 8 + n;
	out->data_len = len - 8 - n;
	rc = parse_header(root, out, what, d);
	cJSON_Delete(root);
	free(text);
	if (rc)
		st_free(out);
	return rc;
}

int
st_open(const char *path, StFile *out, Diag *d)
{
	memset(out, 0, sizeof *out);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return diag_set(d, IPU_EIO, path, 0, 0, "cannot open: %s",
		                strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return diag_set(d, IPU_EIO, path, 0, 0, "not a regular file");
	}
	size_t len = st.st_size;
	void *map = NULL;
	if (len) {
		map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			close(fd);
			return diag_set(d, IPU_EIO, path, 0, 0,
			                "cannot map: %s", strerror(errno));
		}
	}
	close(fd);
	static const uint8_t empty[1];
	int rc = st_parse(map ? map : empty, len, path, out, d);
	if (rc) {
		if (map)
			munmap(map, len);
		return rc;
	}
	out->map = map;
	out->map_len = len;
	return IPU_OK;
}

void
st_free(StFile *f)
{
	for (size_t i = 0; i < f->ntensor; i++) {
		free(f->tensor[i].name);
		free(f->tensor[i].shape);
	}
	for (size_t i = 0; i < f->nmeta; i++) {
		free(f->meta[i].key);
		free(f->meta[i].value);
	}
	free(f->tensor);
	free(f->meta);
	free(f->by_name);
	if (f->map)
		munmap(f->map, f->map_len);
	memset(f, 0, sizeof *f);
}

const StTensor *
st_find(const StFile *f, const char *name)
{
	size_t lo = 0, hi = f->ntensor;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const StTensor *t = f->by_name[mid];
		int c = strcmp(name, t->name);
		if (!c)
			return t;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const uint8_t *
st_bytes(const StFile *f, const StTensor *t)
{
	return f->data + t->begin;
}

int
st_to_f32(const StFile *f, const StTensor *t, float *out, Diag *d)
{
	const uint8_t *p = st_bytes(f, t);
	uint64_t n = st_elements(t);
	if (t->dtype == ST_F8_E4M3FNUZ || t->dtype == ST_F8_E5M2FNUZ) {
		/* the IPU's F143 and F152 codes at scale 2^0; NaN is 0x80 */
		Fp8Format fmt =
		    t->dtype == ST_F8_E4M3FNUZ ? FP8_F143 : FP8_F152;
		for (uint64_t i = 0; i < n; i++)
			out[i] = (float)fp_f8_to_f64(p[i], fmt, 0);
		return IPU_OK;
	}
	if (t->dtype != ST_F32 && t->dtype != ST_F16 && t->dtype != ST_BF16 &&
	    t->dtype != ST_F64)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "tensor '%s': no conversion from %s to f32",
		                t->name, st_dtype_name(t->dtype));
	unsigned flags = 0;
	/* by element kind, whole runs: on a little-endian host each load is
	 * one move (get_le32), f32 a copy in effect */
	if (t->dtype == ST_F32) {
		for (uint64_t i = 0; i < n; i++)
			out[i] = fp_f32_float(get_le32(p + 4 * i));
	} else if (t->dtype == ST_BF16) {
		for (uint64_t i = 0; i < n; i++)
			out[i] = fp_f32_float(
			    (uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16);
	} else if (t->dtype == ST_F16) {
		for (uint64_t i = 0; i < n; i++) {
			uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
			/* exact by bits; NaNs the canonical quiet one */
			out[i] = fp_f16_isnan(h)
			             ? fp_f32_float(fp_f16_to_f32(h, &flags))
			             : (float)fp_f16_to_f64(h);
		}
	} else {
		for (uint64_t i = 0; i < n; i++) {
			uint64_t v = (uint64_t)get_le32(p + 8 * i + 4) << 32 |
			             get_le32(p + 8 * i);
			double x;
			memcpy(&x, &v, sizeof x);
			out[i] = (float)x;
		}
	}
	return IPU_OK;
}

/* ---- writing ---- */

static int
check_specs(const StSpec *spec, size_t n, uint64_t *total, Diag *d)
{
	*total = 0;
	for (size_t i = 0; i < n; i++) {
		const StSpec *s = &spec[i];
		uint64_t elements = 0, bytes = 0;
		if (!s->name || !strcmp(s->name, "__metadata__"))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "tensor %zu: no usable name", i);
		for (size_t k = 0; s->name[k];) {
			int len = utf8_seq((const uint8_t *)s->name + k,
			                   strlen(s->name + k));
			if (!len)
				return diag_set(d, IPU_EINVAL, NULL, 0, 0,
				                "tensor %zu: name is not "
				                "UTF-8",
				                i);
			k += len;
		}
		for (size_t k = 0; k < i; k++)
			if (!strcmp(spec[k].name, s->name))
				return diag_set(d, IPU_EINVAL, NULL, 0, 0,
				                "tensor '%s' appears twice",
				                s->name);
		if ((unsigned)s->dtype >= ST_DTYPE_COUNT || s->rank < 0 ||
		    shape_elements(s->rank, s->shape, &elements) ||
		    tensor_bytes(s->dtype, elements, &bytes) ||
		    __builtin_add_overflow(*total, bytes, total) ||
		    *total > MAX_EXACT)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "tensor '%s': bad dtype or shape",
			                s->name);
	}
	return IPU_OK;
}

/* Bytes of a spec that check_specs accepted. */
static uint64_t
spec_bytes(const StSpec *s)
{
	uint64_t elements = 0, bytes = 0;
	shape_elements(s->rank, s->shape, &elements);
	tensor_bytes(s->dtype, elements, &bytes);
	return bytes;
}

static cJSON *
raw_u64(uint64_t v)
{
	char s[32];
	snprintf(s, sizeof s, "%" PRIu64, v);
	return cJSON_CreateRaw(s);
}

static cJSON *
header_json(const StSpec *spec, size_t n, const StMeta *meta, size_t nmeta)
{
	cJSON *root = cJSON_CreateObject();
	if (nmeta) {
		cJSON *m = cJSON_AddObjectToObject(root, "__metadata__");
		for (size_t i = 0; i < nmeta; i++)
			cJSON_AddStringToObject(m, meta[i].key, meta[i].value);
	}
	uint64_t at = 0;
	for (size_t i = 0; i < n; i++) {
		const StSpec *s = &spec[i];
		uint64_t bytes = spec_bytes(s);
		cJSON *t = cJSON_AddObjectToObject(root, s->name);
		cJSON_AddStringToObject(t, "dtype", st_dtype_name(s->dtype));
		cJSON *shape = cJSON_AddArrayToObject(t, "shape");
		for (int k = 0; k < s->rank; k++)
			cJSON_AddItemToArray(shape, raw_u64(s->shape[k]));
		cJSON *off = cJSON_AddArrayToObject(t, "data_offsets");
		cJSON_AddItemToArray(off, raw_u64(at));
		cJSON_AddItemToArray(off, raw_u64(at + bytes));
		at += bytes;
	}
	return root;
}

int
st_header(const StSpec *spec, size_t n, const StMeta *meta, size_t nmeta,
          uint8_t **out, size_t *len, Diag *d)
{
	uint64_t total;
	int rc = check_specs(spec, n, &total, d);
	if (rc)
		return rc;
	for (size_t i = 0; i < nmeta; i++)
		for (size_t k = 0; k < i; k++)
			if (!strcmp(meta[k].key, meta[i].key))
				return diag_set(
				    d, IPU_EINVAL, NULL, 0, 0,
				    "__metadata__ key \"%s\" appears "
				    "twice",
				    meta[i].key);
	cJSON *root = header_json(spec, n, meta, nmeta);
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!text)
		die("out of memory printing a safetensors header");
	size_t tlen = strlen(text), padded = (tlen + 7) / 8 * 8;
	if (padded > ST_MAX_HEADER) {
		free(text);
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "header of %zu bytes exceeds the limit",
		                padded);
	}
	uint8_t *h = xmalloc(8 + padded);
	for (int i = 0; i < 8; i++)
		h[i] = (uint8_t)((uint64_t)padded >> (8 * i));
	memcpy(h + 8, text, tlen);
	memset(h + 8 + tlen, ' ', padded - tlen);
	free(text);
	*out = h;
	*len = 8 + padded;
	return IPU_OK;
}

struct StWriter {
	FILE *f;
	char tmp[4096];
	char *path;
	int overwrite;
	uint64_t left; /* data bytes still to come */
};

int
st_writer_open(const char *path, const StSpec *spec, size_t n,
               const StMeta *meta, size_t nmeta, int overwrite, StWriter **out,
               Diag *d)
{
	uint8_t *h;
	size_t hlen;
	uint64_t total = 0;
	int rc = st_header(spec, n, meta, nmeta, &h, &hlen, d);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		total += spec_bytes(&spec[i]);
	if (!overwrite && access(path, F_OK) == 0) {
		free(h); /* fail now, not after writing gigabytes */
		return diag_set(d, IPU_EIO, path, 0, 0,
		                "exists; refusing to overwrite it");
	}
	StWriter *w = xcalloc(1, sizeof *w);
	w->f = file_create_temp(path, w->tmp, sizeof w->tmp, d);
	if (!w->f) {
		free(h);
		free(w);
		return IPU_EIO;
	}
	w->path = xstrdup(path);
	w->overwrite = overwrite;
	w->left = total;
	errno = 0;
	int ok = fwrite(h, 1, hlen, w->f) == hlen, e = errno;
	free(h);
	if (!ok) {
		st_writer_abort(w);
		return diag_set(d, IPU_EIO, path, 0, 0, "write error: %s",
		                e ? strerror(e) : "unknown reason");
	}
	*out = w;
	return IPU_OK;
}

int
st_writer_put(StWriter *w, const void *data, size_t len, Diag *d)
{
	if (len > w->left)
		return diag_set(d, IPU_EINVAL, w->path, 0, 0,
		                "%zu bytes of data but only %" PRIu64
		                " remain to write",
		                len, w->left);
	errno = 0;
	if (fwrite(data, 1, len, w->f) != len)
		return diag_set(d, IPU_EIO, w->path, 0, 0, "write error: %s",
		                errno ? strerror(errno) : "unknown reason");
	w->left -= len;
	return IPU_OK;
}

int
st_writer_close(StWriter *w, Diag *d)
{
	int rc;
	if (w->left) {
		rc = diag_set(d, IPU_EINVAL, w->path, 0, 0,
		              "%" PRIu64 " bytes of tensor data never written",
		              w->left);
		st_writer_abort(w);
		return rc;
	}
	rc = file_commit_temp(w->f, w->tmp, w->path, w->overwrite, d);
	free(w->path);
	free(w);
	return rc;
}

void
st_writer_abort(StWriter *w)
{
	file_discard_temp(w->f, w->tmp);
	free(w->path);
	free(w);
}

int
st_write(const char *path, const StSpec *spec, const void *const *data,
         size_t n, const StMeta *meta, size_t nmeta, int overwrite, Diag *d)
{
	StWriter *w;
	int rc = st_writer_open(path, spec, n, meta, nmeta, overwrite, &w, d);
	for (size_t i = 0; i < n && !rc; i++) {
		rc = st_writer_put(w, data[i], spec_bytes(&spec[i]), d);
		if (rc)
			st_writer_abort(w);
	}
	if (rc)
		return rc;
	return st_writer_close(w, d);
}

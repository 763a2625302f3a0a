/*
 * npy.c - reading and writing NumPy .npy files (npy.h).
 *
 * The header is a Python dict literal; we parse the small subset numpy
 * writes (quoted keys, a quoted descr, True/False, a tuple of integers)
 * with a cursor, and reject anything else with the byte offset where it
 * went wrong.
 */
#include "npy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Data is copied as bytes: the host must be little-endian like the files. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "npy.c assumes a little-endian host");

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* One row per NpyDtype: its descr string and element size. */
static const struct {
	const char *descr;
	size_t size;
} dtypes[] = {
    [NPY_F32] = {"<f4", 4}, [NPY_F16] = {"<f2", 2}, [NPY_U8] = {"|u1", 1},
    [NPY_I32] = {"<i4", 4}, [NPY_I64] = {"<i8", 8},
};
enum { NDTYPES = sizeof dtypes / sizeof dtypes[0] };

size_t
npy_dtype_size(NpyDtype t)
{
	return dtypes[t].size;
}

uint64_t
npy_count(const NpyArray *a)
{
	uint64_t n = 1;
	for (int i = 0; i < a->rank; i++)
		n *= a->shape[i];
	return n;
}

/* The data's byte count, or 0 with a message if it overflows size_t. */
static int
data_bytes(NpyDtype t, int rank, const uint64_t *shape, size_t *bytes)
{
	uint64_t n = dtypes[t].size;
	for (int i = 0; i < rank; i++) {
		if (shape[i] && n > SIZE_MAX / shape[i])
			return -1;
		n *= shape[i];
	}
	*bytes = (size_t)n;
	return 0;
}

int
npy_encode(const NpyArray *a, uint8_t **buf, size_t *len, Diag *d)
{
	if (a->rank < 0 || a->rank > NPY_MAX_RANK)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "npy: rank %d is outside 0..%d", a->rank,
		                NPY_MAX_RANK);
	size_t nbytes;
	if (data_bytes(a->dtype, a->rank, a->shape, &nbytes))
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "npy: the shape's byte count overflows");
	char dict[1024];
	int n = snprintf(dict, sizeof dict,
	                 "{'descr': '%s', 'fortran_order': False, 'shape': (",
	                 dtypes[a->dtype].descr);
	for (int i = 0; i < a->rank; i++)
		n += snprintf(dict + n, sizeof dict - n, "%s%" PRIu64,
		              i ? ", " : "", a->shape[i]);
	/* a 1-tuple needs its trailing comma */
	n += snprintf(dict + n, sizeof dict - n, "%s), }",
	              a->rank == 1 ? "," : "");
	/* magic, version, u16 length, dict, spaces, '\n': a multiple of 64 */
	size_t head = (10 + (size_t)n + 1 + 63) / 64 * 64;
	uint8_t *out = xmalloc(head + nbytes);
	memcpy(out, npy_magic, 6);
	out[6] = 1;
	out[7] = 0;
	out[8] = (uint8_t)((head - 10) & 0xff);
	out[9] = (uint8_t)((head - 10) >> 8);
	memcpy(out + 10, dict, (size_t)n);
	memset(out + 10 + n, ' ', head - 10 - (size_t)n);
	out[head - 1] = '\n';
	if (nbytes)
		memcpy(out + head, a->data, nbytes);
	*buf = out;
	*len = head + nbytes;
	return IPU_OK;
}

/* ---- the header dict ---- */

typedef struct {
	const char *s; /* the dict text */
	size_t n, pos;
	const char *name; /* file name, for messages */
	Diag *d;
} Cursor;

static int
bad(Cursor *c, const char *what)
{
	return diag_set(c->d, IPU_EINVAL, c->name, 0, 0,
	                "npy header: %s at byte %zu of the dict", what, c->pos);
}

static void
skip_space(Cursor *c)
{
	while (c->pos < c->n && strchr(" \t\r\n", c->s[c->pos]))
		c->pos++;
}

/* Consume ch (after spaces) if it is next; 1 if it was. */
static int
accept(Cursor *c, char ch)
{
	skip_space(c);
	if (c->pos < c->n && c->s[c->pos] == ch) {
		c->pos++;
		return 1;
	}
	return 0;
}

/* A quoted string ('...' or "...") without escapes, into out. */
static int
parse_string(Cursor *c, char *out, size_t cap)
{
	skip_space(c);
	if (c->pos >= c->n || (c->s[c->pos] != '\'' && c->s[c->pos] != '"'))
		return bad(c, "expected a quoted string");
	char q = c->s[c->pos++];
	size_t start = c->pos;
	while (c->pos < c->n && c->s[c->pos] != q)
		if (c->s[c->pos++] == '\\')
			return bad(c, "escapes in strings are not supported");
	if (c->pos >= c->n)
		return bad(c, "unterminated string");
	size_t len = c->pos - start;
	c->pos++;
	if (len >= cap)
		return bad(c, "string too long");
	memcpy(out, c->s + start, len);
	out[len] = 0;
	return 0;
}

static int
parse_descr(Cursor *c, NpyDtype *t)
{
	char s[32];
	if (parse_string(c, s, sizeof s))
		return IPU_EINVAL;
	for (int i = 0; i < NDTYPES; i++)
		if (!strcmp(s, dtypes[i].descr)) {
			*t = (NpyDtype)i;
			return 0;
		}
	/* numpy also writes '<u1' for uint8 and '=...' is never written */
	if (!strcmp(s, "<u1")) {
		*t = NPY_U8;
		return 0;
	}
	char msg[128];
	snprintf(msg, sizeof msg,
	         "dtype '%s' is not supported (only '<f4', '<f2', '|u1', "
	         "'<i4', '<i8')",
	         s);
	return bad(c, msg);
}

static int
parse_bool(Cursor *c, int *v)
{
	skip_space(c);
	const char *p = c->s + c->pos;
	size_t left = c->n - c->pos;
	if (left >= 4 && !memcmp(p, "True", 4)) {
		c->pos += 4;
		*v = 1;
	} else if (left >= 5 && !memcmp(p, "False", 5)) {
		c->pos += 5;
		*v = 0;
	} else {
		return bad(c, "expected True or False");
	}
	return 0;
}

/* '(' [int (',' int)* [',']] ')' */
static int
parse_shape(Cursor *c, int *rank, uint64_t *shape)
{
	if (!accept(c, '('))
		return bad(c, "expected '(' to open the shape");
	*rank = 0;
	while (!accept(c, ')')) {
		skip_space(c);
		if (c->pos >= c->n || c->s[c->pos] < '0' || c->s[c->pos] > '9')
			return bad(c, "expected a dimension (a non-negative "
			              "integer)");
		uint64_t v = 0;
		while (c->pos < c->n && c->s[c->pos] >= '0' &&
		       c->s[c->pos] <= '9') {
			if (v > (UINT64_MAX - 9) / 10)
				return bad(c, "dimension too large");
			v = v * 10 + (uint64_t)(c->s[c->pos++] - '0');
		}
		if (*rank == NPY_MAX_RANK)
			return bad(c, "more dimensions than NPY_MAX_RANK (32)");
		shape[(*rank)++] = v;
		if (accept(c, ')'))
			break;
		if (!accept(c, ','))
			return bad(c, "expected ',' or ')' in the shape");
	}
	return 0;
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

static int
parse_dict(Cursor *c, NpyArray *out)
{
	if (!accept(c, '{'))
		return bad(c, "expected '{'");
	int seen = 0, fortran = 0;
	while (!accept(c, '}')) {
		char key[32];
		if (parse_string(c, key, sizeof key))
			return IPU_EINVAL;
		if (!accept(c, ':'))
			return bad(c, "expected ':' after a key");
		int bit = !strcmp(key, "descr")           ? KEY_DESCR
		          : !strcmp(key, "fortran_order") ? KEY_FORTRAN
		          : !strcmp(key, "shape")         ? KEY_SHAPE
		                                          : 0;
		if (!bit) {
			char msg[64];
			snprintf(msg, sizeof msg, "unknown key '%s'", key);
			return bad(c, msg);
		}
		if (seen & bit)
			return bad(c, "duplicate key");
		seen |= bit;
		int r = bit == KEY_DESCR ? parse_descr(c, &out->dtype)
		        : bit == KEY_FORTRAN
		            ? parse_bool(c, &fortran)
		            : parse_shape(c, &out->rank, out->shape);
		if (r)
			return r;
		if (accept(c, '}'))
			break;
		if (!accept(c, ','))
			return bad(c, "expected ',' or '}'");
	}
	skip_space(c);
	if (c->pos != c->n)
		return bad(c, "text after the dict");
	if (seen != (KEY_DESCR | KEY_FORTRAN | KEY_SHAPE))
		return bad(c, !(seen & KEY_DESCR)     ? "no 'descr' key"
		              : !(seen & KEY_FORTRAN) ? "no 'fortran_order' key"
		                                      : "no 'shape' key");
	if (fortran)
		return bad(c, "fortran_order True (column-major) is not "
		              "supported");
	return 0;
}

int
npy_decode(const uint8_t *buf, size_t len, const char *name, NpyArray *out,
           Diag *d)
{
	memset(out, 0, sizeof *out);
	if (len < 10 || memcmp(buf, npy_magic, 6))
		return diag_set(d, IPU_EINVAL, name, 0, 0,
		                "not a .npy file (no \\x93NUMPY magic)");
	unsigned major = buf[6], minor = buf[7];
	if (major < 1 || major > 3 || minor != 0)
		return diag_set(d, IPU_EINVAL, name, 0, 0,
		                "npy version %u.%u is not supported (1.0, 2.0, "
		                "3.0 are)",
		                major, minor);
	/* 1.0 has a 16-bit header length, 2.0 and 3.0 a 32-bit one */
	size_t lenbytes = major == 1 ? 2 : 4, hlen = 0;
	if (len < 8 + lenbytes)
		return diag_set(d, IPU_EINVAL, name, 0, 0,
		                "npy file truncated in its header length");
	for (size_t i = 0; i < lenbytes; i++)
		hlen |= (size_t)buf[8 + i] << (8 * i);
	size_t start = 8 + lenbytes;
	if (hlen > len - start)
		return diag_set(d, IPU_EINVAL, name, 0, 0,
		                "npy header says %zu bytes but the file has "
		                "%zu after it",
		                hlen, len - start);
	/* Python refuses a NUL in the dict's text; here strcmp and strchr
	 * would stop at one ('<f4\0junk' read as '<f4') */
	const uint8_t *nul = memchr(buf + start, 0, hlen);
	if (nul)
		return diag_set(
		    d, IPU_EINVAL, name, 0, 0,
		    "npy header: a NUL byte at byte %zu of the dict",
		    (size_t)(nul - (buf + start)));
	Cursor c = {(const char *)buf + start, hlen, 0, name, d};
	if (parse_dict(&c, out))
		return IPU_EINVAL;
	size_t nbytes;
	size_t have = len - start - hlen;
	if (data_bytes(out->dtype, out->rank, out->shape, &nbytes))
		return diag_set(d, IPU_EINVAL, name, 0, 0,
		                "npy shape's byte count overflows");
	if (nbytes != have)
		return diag_set(d, IPU_EINVAL, name, 0, 0,
		                "npy shape wants %zu data bytes but the file "
		                "has %zu",
		                nbytes, have);
	out->data = xmalloc(nbytes);
	if (nbytes)
		memcpy(out->data, buf + start + hlen, nbytes);
	return IPU_OK;
}

int
npy_write(const char *path, const NpyArray *a, int overwrite, Diag *d)
{
	uint8_t *buf;
	size_t len;
	int r = npy_encode(a, &buf, &len, d);
	if (r) {
		if (d)
			snprintf(d->file, sizeof d->file, "%s", path);
		return r;
	}
	r = overwrite ? write_file(path, buf, len, d)
	              : write_new_file(path, buf, len, d);
	free(buf);
	return r;
}

int
npy_read(const char *path, NpyArray *out, Diag *d)
{
	uint8_t *buf;
	size_t len;
	memset(out, 0, sizeof *out);
	int r = read_file(path, &buf, &len, d);
	if (r)
		return r;
	r = npy_decode(buf, len, path, out, d);
	free(buf);
	return r;
}

void
npy_free(NpyArray *a)
{
	free(a->data);
	a->data = NULL;
}

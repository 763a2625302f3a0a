/*
 * test_safetensors.c - the safetensors reader and writer
 * (src/models/safetensors.h): hand-built files for every malformation
 * class, each with the message it must give; the example file of the
 * format's reference documentation; a file written by numpy under Debian's
 * python3 (an independent writer) read back with the values numpy put in;
 * writer round trips, alignment, refusal to overwrite and incomplete
 * writes that leave nothing behind.
 */
#include "support.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/models/safetensors.h"
#include "../src/util/fp.h"

static int
setup(void **state)
{
	(void)state;
	return test_dir_make("safetensors");
}

static int
teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

/* A file: the 8-byte length of `json`, `json`, then data_len bytes
 * counting up from 0. */
static uint8_t *
build(const char *json, size_t json_len, size_t data_len, size_t *len)
{
	*len = 8 + json_len + data_len;
	uint8_t *b = malloc(*len);
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)((uint64_t)json_len >> (8 * i));
	memcpy(b + 8, json, json_len);
	for (size_t i = 0; i < data_len; i++)
		b[8 + json_len + i] = (uint8_t)i;
	return b;
}

/* st_parse must fail with a message containing `fragment`. */
static void
expect_bad(const uint8_t *buf, size_t len, const char *fragment)
{
	StFile f;
	Diag d;
	diag_clear(&d);
	int rc = st_parse(buf, len, "t.safetensors", &f, &d);
	if (rc == 0 || !strstr(d.msg, fragment))
		fail_msg("expected an error containing \"%s\", got rc %d: %s",
		         fragment, rc, d.msg);
	assert_string_equal(d.file, "t.safetensors");
}

static void
expect_bad_json(const char *json, size_t data_len, const char *fragment)
{
	size_t len;
	uint8_t *b = build(json, strlen(json), data_len, &len);
	expect_bad(b, len, fragment);
	free(b);
}

#define T(name, dtype, shape, offsets)                                         \
	"\"" name "\":{\"dtype\":\"" dtype "\",\"shape\":" shape               \
	",\"data_offsets\":" offsets "}"

static void
test_bad_prefix(void **state)
{
	(void)state;
	uint8_t five[5] = {0};
	expect_bad(five, 5, "too short for the 8-byte header length");
	size_t len;
	uint8_t *b = build("{}", 2, 0, &len);
	b[5] = 1; /* 2^40 + 2 */
	expect_bad(b, len, "exceeds the limit of 100000000 bytes");
	b[5] = 0;
	b[0] = 200; /* past the end: the file has 10 bytes */
	expect_bad(b, len, "header length 200 runs past the end of the file");
	free(b);
	/* a length one too long takes the first data byte (0) as header */
	b = build("{}", 2, 2, &len);
	b[0] = 3;
	expect_bad(b, len, "NUL byte (at byte 2 of the header)");
	free(b);
}

static void
test_bad_header_text(void **state)
{
	(void)state;
	expect_bad_json("[1]", 0, "does not start with '{'");
	expect_bad_json(" {}", 0, "does not start with '{'");
	expect_bad_json("{\"a\":", 0, "not valid JSON (near byte 5");
	expect_bad_json("{} x", 0, "not valid JSON");
	expect_bad_json("{\"\xff\":1}", 0, "not valid UTF-8 (at byte 2");
	expect_bad_json("{\"\xc0\xaf\":1}", 0,
	                "not valid UTF-8"); /* overlong */
	expect_bad_json("{\"\xed\xa0\x80\":1}", 0,
	                "not valid UTF-8"); /* D800 */
	expect_bad_json("{\"a\\u0000b\":1}", 0, "\\u0000 escape");
	size_t len;
	uint8_t *b = build("{\"a\":1}", 7, 0, &len);
	b[8 + 3] = 0;
	expect_bad(b, len, "NUL byte (at byte 3");
	free(b);
	expect_bad_json("{\"a\":1}", 0, "tensor 'a': entry is not an object");
}

static void
test_bad_fields(void **state)
{
	(void)state;
	expect_bad_json("{" T("w", "F33", "[1]", "[0,4]") "}", 4,
	                "tensor 'w': unknown dtype \"F33\"");
	expect_bad_json("{\"w\":{\"dtype\":5,\"shape\":[1],"
	                "\"data_offsets\":[0,4]}}",
	                4, "tensor 'w': dtype is not a string");
	expect_bad_json("{" T("w", "F32", "[2,-1]", "[0,8]") "}", 8,
	                "tensor 'w': shape[1] is not a non-negative integer");
	expect_bad_json("{" T("w", "F32", "[1.5]", "[0,4]") "}", 4,
	                "shape[0] is not a non-negative integer");
	expect_bad_json("{" T("w", "F32", "[1e300]", "[0,4]") "}", 4,
	                "shape[0] is not a non-negative integer");
	expect_bad_json("{" T("w", "F32", "2", "[0,8]") "}", 8,
	                "tensor 'w': shape is not an array");
	expect_bad_json("{" T("w", "F32", "[1]", "[0]") "}", 4,
	                "tensor 'w': data_offsets is not [begin, end]");
	expect_bad_json("{" T("w", "F32", "[1]", "[0,4,8]") "}", 8,
	                "data_offsets is not [begin, end]");
	expect_bad_json("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4,
	                "tensor 'w': no \"data_offsets\"");
	expect_bad_json("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],"
	                "\"data_offsets\":[0,4],\"strides\":[1]}}",
	                4, "tensor 'w': unknown field \"strides\"");
	expect_bad_json("{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F32\","
	                "\"shape\":[1],\"data_offsets\":[0,4]}}",
	                4, "field \"dtype\" appears twice");
	expect_bad_json("{\"__metadata__\":{\"k\":1}}", 0,
	                "__metadata__ \"k\" is not a string");
	expect_bad_json("{\"__metadata__\":[]}", 0,
	                "__metadata__ is not an object");
	expect_bad_json("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}", 0,
	                "__metadata__ key \"k\" appears twice");
}

static void
test_bad_sizes(void **state)
{
	(void)state;
	/* 2 x 3 f32 = 24 bytes, offsets give 20 */
	expect_bad_json("{" T("w", "F32", "[2,3]", "[0,20]") "}", 20,
	                "tensor 'w': shape [2, 3] of F32 needs 24 bytes but "
	                "data_offsets [0, 20] hold 20");
	/* 2^32 * 2^32 elements overflow 64 bits */
	expect_bad_json(
	    "{" T("w", "F32", "[4294967296,4294967296]", "[0,4]") "}", 4,
	    "tensor 'w': the size of shape [4294967296, "
	    "4294967296] overflows");
	/* 2^62 elements of 32 bits: the bit count overflows */
	expect_bad_json(
	    "{" T("w", "F32", "[2147483648,2147483648]", "[0,4]") "}", 4,
	    "overflows");
	/* 3 elements of 4 bits are 12 bits */
	expect_bad_json("{" T("w", "F4", "[3]", "[0,1]") "}", 1,
	                "tensor 'w': 3 elements of F4 are not a whole number "
	                "of bytes");
	expect_bad_json("{" T("w", "F32", "[1]", "[8,4]") "}", 8,
	                "tensor 'w': data_offsets [8, 4] end before they "
	                "begin");
}

static void
test_bad_layout(void **state)
{
	(void)state;
	/* past the data section: the file holds 8 of the 16 bytes */
	expect_bad_json("{" T("w", "F32", "[4]", "[0,16]") "}", 8,
	                "tensor 'w': data_offsets [0, 16] run past the data "
	                "section (8 bytes): truncated file?");
	expect_bad_json("{" T("a", "F32", "[2]",
	                      "[0,8]") "," T("b", "F32", "[2]", "[4,12]") "}",
	                12, "tensors 'a' [0, 8) and 'b' [4, 12) overlap");
	/* listed in reverse order: found after sorting by offset */
	expect_bad_json("{" T("b", "F32", "[1]",
	                      "[8,12]") "," T("a", "F32", "[1]", "[0,4]") "}",
	                12,
	                "a hole of 4 bytes between tensor 'a' (ends at 4) "
	                "and tensor 'b' (starts at 8)");
	expect_bad_json("{" T("a", "F32", "[1]", "[4,8]") "}", 8,
	                "tensor 'a' starts at byte 4: a hole at the start");
	expect_bad_json("{" T("a", "F32", "[1]", "[0,4]") "}", 8,
	                "the data section has 8 bytes but the tensors end at "
	                "byte 4: 4 trailing bytes");
	expect_bad_json("{}", 3, "3 trailing bytes");
	expect_bad_json("{" T("a", "F32", "[1]",
	                      "[0,4]") "," T("a", "F32", "[1]", "[4,8]") "}",
	                8, "tensor 'a' appears twice");
}

/* The example file of the format's reference documentation (docs.rs
 * safetensors): header length '<' = 60, one I32 2x2 tensor. */
static void
test_reference_example(void **state)
{
	(void)state;
	static const char json[] = "{\"test\":{\"dtype\":\"I32\",\"shape\":[2,"
	                           "2],\"data_offsets\":[0,16]}}";
	assert_int_equal(strlen(json), '<');
	size_t len;
	uint8_t *b = build(json, strlen(json), 16, &len);
	StFile f;
	Diag d;
	assert_int_equal(st_parse(b, len, "ex", &f, &d), 0);
	assert_int_equal(f.ntensor, 1);
	const StTensor *t = st_find(&f, "test");
	assert_non_null(t);
	assert_int_equal(t->dtype, ST_I32);
	assert_int_equal(t->rank, 2);
	assert_int_equal(t->shape[0], 2);
	assert_int_equal(t->shape[1], 2);
	assert_int_equal(st_elements(t), 4);
	assert_ptr_equal(st_bytes(&f, t), b + 8 + 60);
	assert_null(st_find(&f, "tes"));
	/* not convertible to f32 */
	float out[4];
	assert_int_not_equal(st_to_f32(&f, t, out, &d), 0);
	assert_non_null(strstr(d.msg, "no conversion from I32"));
	st_free(&f);
	free(b);
}

/* Edge cases the format allows: a scalar, zero-size tensors sharing an
 * offset, escapes in names, padding spaces after the JSON, no tensors. */
static void
test_valid_edges(void **state)
{
	(void)state;
	static const char json[] = "{\"__metadata__\":{\"format\":\"pt\"}," T(
	    "caf\\u00e9", "F64", "[]",
	    "[0,8]") "," T("e1", "U8", "[0,5]",
	                   "[8,8]") "," T("e0", "BOOL", "[0]",
	                                  "[8,8]") "," T("f", "F4", "[2,2]",
	                                                 "[8,10]") "}    ";
	size_t len;
	uint8_t *b = build(json, strlen(json), 10, &len);
	StFile f;
	Diag d;
	diag_clear(&d);
	if (st_parse(b, len, "edges", &f, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(f.ntensor, 4);
	assert_int_equal(f.nmeta, 1);
	assert_string_equal(f.meta[0].key, "format");
	assert_string_equal(f.meta[0].value, "pt");
	const StTensor *t = st_find(&f, "caf\xc3\xa9");
	assert_non_null(t);
	assert_int_equal(t->rank, 0);
	assert_int_equal(st_elements(t), 1);
	assert_int_equal(st_find(&f, "e1")->shape[1], 5);
	assert_int_equal(st_elements(st_find(&f, "e0")), 0);
	assert_int_equal(st_find(&f, "f")->end, 10);
	/* data order: the scalar first, the F4 tensor last */
	assert_string_equal(f.tensor[0].name, "caf\xc3\xa9");
	assert_string_equal(f.tensor[3].name, "f");
	st_free(&f);
	free(b);
	b = build("{}", 2, 0, &len);
	assert_int_equal(st_parse(b, len, "empty", &f, &d), 0);
	assert_int_equal(f.ntensor, 0);
	st_free(&f);
	free(b);
}

static void
test_dtype_table(void **state)
{
	(void)state;
	assert_int_equal(st_dtype_from_name("BF16"), ST_BF16);
	assert_int_equal(st_dtype_from_name("bf16"), -1);
	assert_int_equal(st_dtype_bits(ST_F6_E3M2), 6);
	assert_int_equal(st_dtype_bits(ST_C64), 64);
	assert_int_equal(st_dtype_graph(ST_F32), DT_F32);
	assert_int_equal(st_dtype_graph(ST_F16), DT_F16);
	/* IPU F143/F152 are the FNUZ formats, not OCP E4M3/E5M2 */
	assert_int_equal(st_dtype_graph(ST_F8_E4M3FNUZ), DT_F8_F143);
	assert_int_equal(st_dtype_graph(ST_F8_E5M2FNUZ), DT_F8_F152);
	assert_int_equal(st_dtype_graph(ST_F8_E4M3), -1);
	assert_int_equal(st_dtype_graph(ST_BF16), -1);
	for (int i = 0; i < ST_DTYPE_COUNT; i++)
		assert_int_equal(st_dtype_from_name(st_dtype_name(i)), i);
}

static void
path_in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", test_dir, name);
}

static int
files_in_dir(void)
{
	DIR *d = opendir(test_dir);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void
test_write_read(void **state)
{
	(void)state;
	/* f16 1, -2, 65504, 2^-24; bf16 1, 3.140625; f32 0.1 */
	uint8_t h[8] = {0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00};
	uint8_t bf[4] = {0x80, 0x3f, 0x49, 0x40};
	float f32 = 0.1f;
	uint64_t s4[] = {2, 2}, s2[] = {2}, s1[] = {1};
	StSpec spec[] = {
	    {"half", ST_F16, 2, s4},
	    {"brain", ST_BF16, 1, s2},
	    {"single", ST_F32, 1, s1},
	};
	const void *data[] = {h, bf, &f32};
	StMeta meta[] = {{"format", "pt"}, {"seed", "7"}};
	char path[128];
	path_in_dir(path, sizeof path, "rt.safetensors");
	Diag d;
	diag_clear(&d);
	assert_int_equal(st_write(path, spec, data, 3, meta, 2, 0, &d), 0);
	StFile f;
	assert_int_equal(st_open(path, &f, &d), 0);
	assert_int_equal((8 + f.header_len) % 8, 0); /* aligned data */
	assert_int_equal(f.data_len, 8 + 4 + 4);
	assert_int_equal(f.nmeta, 2);
	assert_string_equal(f.meta[1].value, "7");
	float v[4];
	assert_int_equal(st_to_f32(&f, st_find(&f, "half"), v, &d), 0);
	assert_true(v[0] == 1.0f && v[1] == -2.0f && v[2] == 65504.0f &&
	            v[3] == 0x1p-24f);
	assert_int_equal(st_to_f32(&f, st_find(&f, "brain"), v, &d), 0);
	assert_true(v[0] == 1.0f && v[1] == 3.140625f);
	assert_int_equal(st_to_f32(&f, st_find(&f, "single"), v, &d), 0);
	assert_true(v[0] == 0.1f);
	assert_memory_equal(st_bytes(&f, st_find(&f, "half")), h, 8);
	st_free(&f);

	/* never replaced without asking; the old file survives intact */
	f32 = 0.5f;
	assert_int_not_equal(st_write(path, spec, data, 3, meta, 2, 0, &d), 0);
	assert_non_null(strstr(d.msg, "refusing to overwrite"));
	assert_int_equal(st_open(path, &f, &d), 0);
	assert_int_equal(st_to_f32(&f, st_find(&f, "single"), v, &d), 0);
	assert_true(v[0] == 0.1f);
	st_free(&f);
	assert_int_equal(st_write(path, spec, data, 3, meta, 2, 1, &d), 0);
	assert_int_equal(st_open(path, &f, &d), 0);
	assert_int_equal(st_to_f32(&f, st_find(&f, "single"), v, &d), 0);
	assert_true(v[0] == 0.5f);
	st_free(&f);
	assert_int_equal(files_in_dir(), 1); /* no temporary left */
	unlink(path);
}

/* Every f16 and bf16 code through st_to_f32 against the definitions (f16:
 * (-1)^s 2^(e-15) (1 + m/1024), subnormals 2^-14 m/1024, NaN the canonical
 * quiet one as fp_f16_to_f32 gives it; bf16: the f32 of the high half), and
 * f32 / f64 specials bit for bit. */
static void
test_to_f32_all_codes(void **state)
{
	(void)state;
	enum { N = 1 << 16 };
	uint8_t *h = malloc(2 * N), *bf = malloc(2 * N);
	float *v = malloc(sizeof(float) * N);
	for (uint32_t i = 0; i < N; i++) {
		h[2 * i] = bf[2 * i] = (uint8_t)i;
		h[2 * i + 1] = bf[2 * i + 1] = (uint8_t)(i >> 8);
	}
	uint32_t f32[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu,
	                  0x7f800000u, 0xff800000u, 0x7fc00001u, 0x7f800001u,
	                  0x3f800000u, 0xc2f6e979u};
	double f64[] = {0.0,      -0.0, 1e-300, -3.5, 0x1.fffffffffffffp+127,
	                INFINITY, 0.1};
	uint64_t sn[] = {N}, s32[] = {10}, s64[] = {7};
	StSpec spec[] = {
	    {"h", ST_F16, 1, sn},
	    {"bf", ST_BF16, 1, sn},
	    {"f", ST_F32, 1, s32},
	    {"d", ST_F64, 1, s64},
	};
	const void *data[] = {h, bf, f32, f64};
	char path[128];
	path_in_dir(path, sizeof path, "codes.safetensors");
	Diag d;
	diag_clear(&d);
	assert_int_equal(st_write(path, spec, data, 4, NULL, 0, 1, &d), 0);
	StFile f;
	assert_int_equal(st_open(path, &f, &d), 0);
	assert_int_equal(st_to_f32(&f, st_find(&f, "h"), v, &d), 0);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t e = (i >> 10) & 0x1f, m = i & 0x3ff;
		float want;
		uint32_t wb;
		if (e == 0x1f && m) {
			wb = FP32_QNAN;
		} else {
			want = e == 0x1f ? INFINITY
			       : e       ? ldexpf(1 + m / 1024.0f, (int)e - 15)
			                 : ldexpf(m / 1024.0f, -14);
			if (i & 0x8000)
				want = -want;
			memcpy(&wb, &want, 4);
		}
		uint32_t gb;
		memcpy(&gb, &v[i], 4);
		if (gb != wb)
			fail_msg("f16 0x%04x: got 0x%08x want 0x%08x", i, gb,
			         wb);
	}
	assert_int_equal(st_to_f32(&f, st_find(&f, "bf"), v, &d), 0);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t gb;
		memcpy(&gb, &v[i], 4);
		assert_int_equal(gb, i << 16);
	}
	assert_int_equal(st_to_f32(&f, st_find(&f, "f"), v, &d), 0);
	assert_memory_equal(v, f32, sizeof f32);
	assert_int_equal(st_to_f32(&f, st_find(&f, "d"), v, &d), 0);
	for (int i = 0; i < 7; i++) {
		float w = (float)f64[i];
		assert_memory_equal(&v[i], &w, 4);
	}
	st_free(&f);
	unlink(path);
	free(h);
	free(bf);
	free(v);
}

static void
test_writer_errors(void **state)
{
	(void)state;
	uint64_t s[] = {4};
	StSpec spec[] = {{"a", ST_F32, 1, s}, {"a", ST_F32, 1, s}};
	char path[128];
	path_in_dir(path, sizeof path, "w.safetensors");
	Diag d;
	StWriter *w;
	assert_int_not_equal(st_writer_open(path, spec, 2, NULL, 0, 0, &w, &d),
	                     0);
	assert_non_null(strstr(d.msg, "tensor 'a' appears twice"));
	StSpec meta_name[] = {{"__metadata__", ST_F32, 1, s}};
	assert_int_not_equal(
	    st_writer_open(path, meta_name, 1, NULL, 0, 0, &w, &d), 0);
	/* too little data: nothing appears, no temporary stays */
	assert_int_equal(st_writer_open(path, spec, 1, NULL, 0, 0, &w, &d), 0);
	float x[4] = {0};
	assert_int_equal(st_writer_put(w, x, 12, &d), 0);
	assert_int_not_equal(st_writer_put(w, x, 8, &d), 0); /* too much */
	assert_int_not_equal(st_writer_close(w, &d), 0);
	assert_non_null(strstr(d.msg, "4 bytes of tensor data never written"));
	assert_int_equal(files_in_dir(), 0);
}

/* A file written by numpy with its own framing (HF writers sort tensors by
 * dtype then name, ours keeps the given order: both are valid), then
 * truncated by one byte. */
static void
test_numpy_written(void **state)
{
	(void)state;
	if (access("/usr/bin/python3", X_OK) != 0)
		skip();
	char path[128], cmd[2048];
	path_in_dir(path, sizeof path, "np.safetensors");
	snprintf(
	    cmd, sizeof cmd,
	    "/usr/bin/python3 -c \"\n"
	    "import json, struct, numpy as np\n"
	    "t = {'w': np.arange(6, dtype=np.float32).reshape(2, 3) / 8,\n"
	    "     'h': np.array([0.5, -1.25, 65504, 2**-14], np.float16),\n"
	    "     'd': np.array([1e-3], np.float64)}\n"
	    "hdr, off, blob = {'__metadata__': {'format': 'pt'}}, 0, b''\n"
	    "for k in sorted(t):\n"
	    "    b = t[k].tobytes()\n"
	    "    hdr[k] = {'dtype': {'float32': 'F32', 'float16': 'F16',\n"
	    "              'float64': 'F64'}[str(t[k].dtype)],\n"
	    "              'shape': list(t[k].shape),\n"
	    "              'data_offsets': [off, off + len(b)]}\n"
	    "    off += len(b); blob += b\n"
	    "j = json.dumps(hdr).encode()\n"
	    "open('%s', 'wb').write(struct.pack('<Q', len(j)) + j + blob)\n"
	    "\"",
	    path);
	assert_int_equal(system(cmd), 0);
	StFile f;
	Diag d;
	diag_clear(&d);
	if (st_open(path, &f, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(f.ntensor, 3);
	float v[6];
	assert_int_equal(st_to_f32(&f, st_find(&f, "w"), v, &d), 0);
	for (int i = 0; i < 6; i++)
		assert_true(v[i] == i / 8.0f);
	assert_int_equal(st_find(&f, "w")->shape[1], 3);
	assert_int_equal(st_to_f32(&f, st_find(&f, "h"), v, &d), 0);
	assert_true(v[0] == 0.5f && v[1] == -1.25f && v[2] == 65504.0f &&
	            v[3] == 0x1p-14f);
	assert_int_equal(st_to_f32(&f, st_find(&f, "d"), v, &d), 0);
	assert_true(v[0] == (float)1e-3);
	/* sorted names d, h, w give the data order */
	assert_string_equal(f.tensor[0].name, "d");
	size_t len = 8 + f.header_len + f.data_len;
	st_free(&f);
	assert_int_equal(truncate(path, (off_t)len - 1), 0);
	assert_int_not_equal(st_open(path, &f, &d), 0);
	assert_non_null(strstr(d.msg, "tensor 'w': data_offsets [16, 40] run "
	                              "past the data section (39 bytes)"));
	assert_string_equal(d.file, path);
	unlink(path);
}

static void
test_open_errors(void **state)
{
	(void)state;
	StFile f;
	Diag d;
	char path[128];
	path_in_dir(path, sizeof path, "none.safetensors");
	assert_int_equal(st_open(path, &f, &d), IPU_EIO);
	assert_non_null(strstr(d.msg, "cannot open"));
	assert_int_equal(st_open(test_dir, &f, &d), IPU_EIO);
	assert_non_null(strstr(d.msg, "not a regular file"));
	path_in_dir(path, sizeof path, "empty.safetensors");
	FILE *e = fopen(path, "w");
	fclose(e);
	assert_int_equal(st_open(path, &f, &d), IPU_EINVAL);
	assert_non_null(strstr(d.msg, "0 bytes: too short"));
	unlink(path);
}

/* The fuzz seeds, written by python's json module (an independent writer
 * of every dtype class: sub-byte, FP8, complex, zero-size, escapes). */
static void
test_fuzz_seeds(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		size_t ntensor, nmeta;
	} seeds[] = {
	    {"reference_i32", 1, 0},
	    {"siglip_like", 4, 2},
	    {"many_dtypes", 8, 0},
	};
	for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
		char path[512];
		snprintf(path, sizeof path,
		         "%s/fuzz/corpus/fuzz_safetensors/%s.safetensors",
		         IPU_SOURCE_DIR, seeds[i].file);
		StFile f;
		Diag d;
		diag_clear(&d);
		if (st_open(path, &f, &d))
			fail_msg("%s: %s", path, d.msg);
		assert_int_equal(f.ntensor, seeds[i].ntensor);
		assert_int_equal(f.nmeta, seeds[i].nmeta);
		st_free(&f);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bad_prefix),
	    cmocka_unit_test(test_bad_header_text),
	    cmocka_unit_test(test_bad_fields),
	    cmocka_unit_test(test_bad_sizes),
	    cmocka_unit_test(test_bad_layout),
	    cmocka_unit_test(test_reference_example),
	    cmocka_unit_test(test_valid_edges),
	    cmocka_unit_test(test_dtype_table),
	    cmocka_unit_test(test_write_read),
	    cmocka_unit_test(test_writer_errors),
	    cmocka_unit_test(test_numpy_written),
	    cmocka_unit_test(test_open_errors),
	    cmocka_unit_test(test_fuzz_seeds),
	    cmocka_unit_test(test_to_f32_all_codes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * test_npy.c - src/util/npy.c against numpy (Debian's /usr/bin/python3,
 * tests/npy_ref.py): files numpy.save wrote read back here, files written
 * here loaded by numpy.load with the same dtype, shape, values and header
 * layout; malformed headers refused with a message naming the problem;
 * an existing file kept unless the caller allows overwriting.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/util/fp.h"
#include "../src/util/npy.h"

static int
setup(void **state)
{
	(void)state;
	return test_dir_make("npy");
}

static int
teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

static int
python(const char *mode)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/npy_ref.py %s %s",
	         IPU_SOURCE_DIR, mode, test_dir);
	return system(cmd);
}

/* The arrays both sides make: element i is value(dtype, i) (npy_ref.py). */
static const struct {
	const char *name;
	NpyDtype dtype;
	int rank;
	uint64_t shape[5];
} arrays[] = {
    {"f32", NPY_F32, 3, {2, 3, 4}},
    {"f16", NPY_F16, 2, {5, 7}},
    {"u8", NPY_U8, 1, {300}},
    {"i32", NPY_I32, 2, {3, 5}},
    {"i64", NPY_I64, 2, {2, 8}},
    {"scalar", NPY_F32, 0, {0}},
    {"rank5", NPY_F32, 5, {1, 2, 1, 3, 2}},
    {"empty", NPY_F32, 2, {0, 4}},
};
enum { NARRAYS = sizeof arrays / sizeof arrays[0] };

/* Element i's bytes. */
static void
value(NpyDtype t, uint64_t i, uint8_t *out)
{
	unsigned flags = 0;
	if (t == NPY_U8) {
		out[0] = (uint8_t)(i * 7 % 256);
	} else if (t == NPY_I32) {
		int32_t v = (int32_t)i * 40503 - 1000000;
		memcpy(out, &v, 4);
	} else if (t == NPY_I64) {
		int64_t v = (int64_t)i * 3000000007 - ((int64_t)1 << 40);
		memcpy(out, &v, 8);
	} else if (t == NPY_F16) {
		uint16_t h = fp_f64_to_f16((double)(i % 97) * 0.125 - 3, FP_RNE,
		                           0, FP_OV_IEEE, &flags);
		memcpy(out, &h, 2);
	} else {
		float f = (float)(i % 251) * 0.25f - 17;
		memcpy(out, &f, 4);
	}
}

static NpyArray
make(int k)
{
	NpyArray a = {.dtype = arrays[k].dtype, .rank = arrays[k].rank};
	memcpy(a.shape, arrays[k].shape, sizeof arrays[k].shape);
	size_t size = npy_dtype_size(a.dtype);
	uint64_t n = npy_count(&a);
	a.data = malloc(n * size + 1);
	for (uint64_t i = 0; i < n; i++)
		value(a.dtype, i, (uint8_t *)a.data + i * size);
	return a;
}

static void
expect_equal(const NpyArray *got, int k, const char *what)
{
	NpyArray want = make(k);
	assert_int_equal(got->dtype, want.dtype);
	assert_int_equal(got->rank, want.rank);
	for (int i = 0; i < want.rank; i++)
		assert_int_equal(got->shape[i], want.shape[i]);
	size_t bytes = npy_count(&want) * npy_dtype_size(want.dtype);
	if (bytes && memcmp(got->data, want.data, bytes))
		fail_msg("%s: elements differ", what);
	free(want.data);
}

static void
reads_what_numpy_wrote(void **state)
{
	(void)state;
	assert_int_equal(python("write"), 0);
	char p[256];
	for (int k = 0; k < NARRAYS; k++) {
		NpyArray a;
		Diag d;
		snprintf(p, sizeof p, "%s/np_%s.npy", test_dir, arrays[k].name);
		if (npy_read(p, &a, &d))
			fail_msg("%s: %s", p, d.msg);
		expect_equal(&a, k, p);
		npy_free(&a);
	}
	/* version 2.0 (32-bit header length): a 3x3 f32 */
	NpyArray a;
	Diag d;
	snprintf(p, sizeof p, "%s/np_v2.npy", test_dir);
	assert_int_equal(npy_read(p, &a, &d), 0);
	assert_int_equal(a.rank, 2);
	assert_int_equal(a.shape[0] * a.shape[1], 9);
	float f8;
	memcpy(&f8, (float *)a.data + 8, 4);
	assert_true(f8 == 8 * 0.25f - 17);
	npy_free(&a);
	/* what we do not read, with the reason */
	static const struct {
		const char *file, *msg;
	} refused[] = {
	    {"np_fortran.npy", "fortran_order True"},
	    {"np_big.npy", "dtype '>f4' is not supported"},
	    {"np_f64.npy", "dtype '<f8' is not supported"},
	};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s/%s", test_dir, refused[i].file);
		assert_int_not_equal(npy_read(p, &a, &d), 0);
		assert_string_equal(d.file, p);
		if (!strstr(d.msg, refused[i].msg))
			fail_msg("%s: '%s'", p, d.msg);
	}
}

static void
numpy_reads_what_we_wrote(void **state)
{
	(void)state;
	for (int k = 0; k < NARRAYS; k++) {
		char p[256];
		Diag d;
		NpyArray a = make(k);
		snprintf(p, sizeof p, "%s/c_%s.npy", test_dir, arrays[k].name);
		if (npy_write(p, &a, 1, &d))
			fail_msg("%s: %s", p, d.msg);
		/* and our own reader agrees */
		NpyArray back;
		assert_int_equal(npy_read(p, &back, &d), 0);
		expect_equal(&back, k, p);
		npy_free(&back);
		free(a.data);
	}
	assert_int_equal(python("check"), 0);
}

/* A file with the given header dict and `data` zero bytes after it. */
static int
decode_dict(const char *dict, size_t data, Diag *d)
{
	size_t n = strlen(dict);
	uint8_t *buf = calloc(10 + n + data, 1);
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (uint8_t)n;
	buf[9] = (uint8_t)(n >> 8);
	memcpy(buf + 10, dict, n);
	NpyArray a;
	int r = npy_decode(buf, 10 + n + data, "t.npy", &a, d);
	if (!r)
		npy_free(&a);
	free(buf);
	return r;
}

static void
refuses_malformed_headers(void **state)
{
	(void)state;
	static const struct {
		const char *dict;
		size_t data;
		const char *msg;
	} cases[] = {
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24,
	     NULL},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20,
	     "wants 24 data bytes but the file has 20"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28,
	     "wants 24 data bytes but the file has 28"},
	    {"{'descr': '<f4', 'shape': (2,)}", 8, "no 'fortran_order' key"},
	    {"{'fortran_order': False, 'shape': (2,)}", 8, "no 'descr' key"},
	    {"{'descr': '<f4', 'fortran_order': False}", 4, "no 'shape' key"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
	     "'x': 1}",
	     8, "unknown key 'x'"},
	    {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
	     "'shape': ()}",
	     4, "duplicate key"},
	    {"{'descr': '<i2', 'fortran_order': False, 'shape': ()}", 2,
	     "dtype '<i2' is not supported"},
	    {"{'descr': '<f4', 'fortran_order': false, 'shape': ()}", 4,
	     "expected True or False"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, -1)}", 0,
	     "expected a dimension"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': [3]}", 12,
	     "expected '('"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': (3 4)}", 48,
	     "expected ',' or ')'"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': ()} x", 4,
	     "text after the dict"},
	    {"{'descr': '<f4, 'fortran_order': False, 'shape': ()}", 4,
	     "dtype '<f4, ' is not supported"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': "
	     "(99999999999, 99999999999, 99999999999)}",
	     4, "overflows"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,"
	     "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}",
	     4, "more dimensions than"},
	    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8,
	     "expected ',' or '}'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		Diag d;
		diag_clear(&d);
		int r = decode_dict(cases[i].dict, cases[i].data, &d);
		if (!cases[i].msg) {
			assert_int_equal(r, 0);
			continue;
		}
		assert_int_not_equal(r, 0);
		assert_string_equal(d.file, "t.npy");
		if (!strstr(d.msg, cases[i].msg))
			fail_msg("case %zu: '%s', want '%s'", i, d.msg,
			         cases[i].msg);
	}
	/* the bytes before the dict */
	static const struct {
		const char *bytes;
		size_t len;
		const char *msg;
	} raw[] = {
	    {"", 0, "no \\x93NUMPY magic"},
	    {"\x93NUMPX\x01\x00\x00\x00", 10, "no \\x93NUMPY magic"},
	    {"\x93NUMPY\x09\x00\x00\x00", 10, "version 9.0 is not supported"},
	    {"\x93NUMPY\x01\x00\x40\x00{}", 12,
	     "says 64 bytes but the file "
	     "has 2"},
	    {"\x93NUMPY\x02\x00\x01\x00", 10,
	     "truncated in its header "
	     "length"},
	};
	for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
		NpyArray a;
		Diag d;
		assert_int_not_equal(npy_decode((const uint8_t *)raw[i].bytes,
		                                raw[i].len, "r.npy", &a, &d),
		                     0);
		assert_null(a.data);
		if (!strstr(d.msg, raw[i].msg))
			fail_msg("raw %zu: '%s', want '%s'", i, d.msg,
			         raw[i].msg);
	}
}

static void
keeps_existing_files(void **state)
{
	(void)state;
	char p[256];
	snprintf(p, sizeof p, "%s/kept.npy", test_dir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("precious", f);
	fclose(f);
	NpyArray a = make(0);
	Diag d;
	assert_int_not_equal(npy_write(p, &a, 0, &d), 0);
	assert_non_null(strstr(d.msg, "exists; refusing to overwrite"));
	uint8_t *buf;
	size_t len;
	assert_int_equal(read_file(p, &buf, &len, &d), 0);
	assert_int_equal(len, 8);
	assert_memory_equal(buf, "precious", 8);
	free(buf);
	/* a new name is written; overwrite = 1 replaces */
	snprintf(p, sizeof p, "%s/new.npy", test_dir);
	assert_int_equal(npy_write(p, &a, 0, &d), 0);
	snprintf(p, sizeof p, "%s/kept.npy", test_dir);
	assert_int_equal(npy_write(p, &a, 1, &d), 0);
	NpyArray back;
	assert_int_equal(npy_read(p, &back, &d), 0);
	expect_equal(&back, 0, p);
	npy_free(&back);
	free(a.data);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(reads_what_numpy_wrote),
	    cmocka_unit_test(numpy_reads_what_we_wrote),
	    cmocka_unit_test(refuses_malformed_headers),
	    cmocka_unit_test(keeps_existing_files),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

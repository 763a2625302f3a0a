/*
 * test_image.c - src/image/ against PIL: decoding (PNG in every colour
 * type and depth, interlaced, JPEG 4:2:0/4:2:2/4:4:4/progressive/gray,
 * the photos Debian's python3-skimage ships), the resize (bicubic and
 * bilinear, down and up, byte for byte), the SigLIP processor's floats
 * (bit for bit), and malformed files (truncated, corrupt, wrong
 * signature, empty, too large) with their messages.
 *
 * The inputs and PIL's answers come from tests/image_ref.py, run once
 * with Debian's /usr/bin/python3 into a temporary directory; it lists the
 * cases in a manifest.
 */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../src/image/image.h"
#include "../src/util/npy.h"

static int
setup(void **state)
{
	(void)state;
	if (test_dir_make("image"))
		return -1;
	char cmd[512];
	snprintf(cmd, sizeof cmd,
	         "/usr/bin/python3 %s/tests/image_ref.py %s 2>/dev/null",
	         IPU_SOURCE_DIR, test_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

/* A manifest name: relative to the temp test_dir unless absolute. */
static void
case_path(char *out, size_t len, const char *name)
{
	if (name[0] == '/')
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%s/%s", test_dir, name);
}

/* Calls fn(words, nwords) for each manifest line of the given kind;
 * returns how many there were. */
static int
each_case(const char *kind, void (*fn)(char **w, int n))
{
	char path[128], line[1024];
	snprintf(path, sizeof path, "%s/manifest.txt", test_dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	int count = 0;
	while (fgets(line, sizeof line, f)) {
		char *w[32];
		int n = 0;
		for (char *t = strtok(line, " \n"); t && n < 32;
		     t = strtok(NULL, " \n"))
			w[n++] = t;
		if (n && !strcmp(w[0], kind)) {
			fn(w, n);
			count++;
		}
	}
	fclose(f);
	return count;
}

static void
load(const char *name, Image *img)
{
	char p[512];
	Diag d;
	case_path(p, sizeof p, name);
	if (image_load(p, img, &d))
		fail_msg("%s: %s", p, d.msg);
}

/* PIL's uint8 [h, w, 3] array against an image, byte for byte. */
static void
expect_pixels(const char *ref_name, const Image *img, const char *what)
{
	char p[512];
	NpyArray ref;
	Diag d;
	case_path(p, sizeof p, ref_name);
	if (npy_read(p, &ref, &d))
		fail_msg("%s: %s", p, d.msg);
	assert_int_equal(ref.dtype, NPY_U8);
	assert_int_equal(ref.rank, 3);
	if (ref.shape[0] != img->height || ref.shape[1] != img->width)
		fail_msg("%s: %ux%u, PIL gives %llux%llu", what, img->width,
		         img->height, (unsigned long long)ref.shape[1],
		         (unsigned long long)ref.shape[0]);
	const uint8_t *want = ref.data;
	size_t n = (size_t)img->width * img->height * 3;
	for (size_t i = 0; i < n; i++)
		if (img->rgb[i] != want[i])
			fail_msg("%s: pixel (%zu, %zu) channel %zu is %u, PIL "
			         "has %u",
			         what, i / 3 % img->width, i / 3 / img->width,
			         i % 3, img->rgb[i], want[i]);
	npy_free(&ref);
}

static void
check_decode(char **w, int n)
{
	assert_int_equal(n, 3);
	Image img;
	load(w[1], &img);
	expect_pixels(w[2], &img, w[1]);
	image_free(&img);
}

static void
decode_matches_pil(void **state)
{
	(void)state;
	assert_int_equal(each_case("decode", check_decode), 36);
}

/* The format comes from the signature, and the layout says what the file
 * held. */
static void
decode_reports_format(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		ImageFormat format;
		const char *layout;
	} want[] = {
	    {"jpeg_named.png", IMAGE_JPEG, "YCbCr"},
	    {"progressive.jpg", IMAGE_JPEG, "YCbCr, progressive"},
	    {"gray.jpg", IMAGE_JPEG, "gray"},
	    {"p16.png", IMAGE_PNG, "palette 4-bit"},
	    {"la16.png", IMAGE_PNG, "gray+alpha 16-bit"},
	    {"rgb8_interlaced.png", IMAGE_PNG, "RGB 8-bit, interlaced"},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		Image img;
		load(want[i].file, &img);
		assert_int_equal(img.format, want[i].format);
		assert_string_equal(img.layout, want[i].layout);
		image_free(&img);
	}
}

static void
check_resize(char **w, int n)
{
	assert_int_equal(n, 6);
	Image src, out;
	Diag d;
	load(w[1], &src);
	if (image_resize(&src, (uint32_t)atoi(w[2]), (uint32_t)atoi(w[3]),
	                 (ResampleFilter)atoi(w[4]), &out, &d))
		fail_msg("resize %s: %s", w[1], d.msg);
	char what[256];
	snprintf(what, sizeof what, "%s to %sx%s filter %s", w[1], w[2], w[3],
	         w[4]);
	expect_pixels(w[5], &out, what);
	image_free(&src);
	image_free(&out);
}

static void
resize_matches_pil(void **state)
{
	(void)state;
	assert_int_equal(each_case("resize", check_resize), 40);
}

/* Independent of PIL: a uniform image stays exactly uniform at any size
 * and filter (the fixed-point weights sum to 2^22 within a few units,
 * far less than the half that rounding adds). */
static void
resize_keeps_uniform_images(void **state)
{
	(void)state;
	uint8_t px[13 * 9 * 3];
	for (size_t i = 0; i < sizeof px; i++)
		px[i] = (uint8_t)(i % 3 == 0 ? 0 : i % 3 == 1 ? 137 : 255);
	Image in = {.width = 13, .height = 9, .rgb = px};
	static const uint32_t sizes[][2] = {
	    {1, 1}, {5, 3}, {13, 40}, {224, 224}, {2, 9}};
	for (size_t s = 0; s < 5; s++)
		for (int f = RESAMPLE_BILINEAR; f <= RESAMPLE_BICUBIC; f++) {
			Image out;
			Diag d;
			assert_int_equal(
			    image_resize(&in, sizes[s][0], sizes[s][1],
			                 (ResampleFilter)f, &out, &d),
			    0);
			for (size_t i = 0; i < (size_t)out.width * out.height;
			     i++) {
				assert_int_equal(out.rgb[3 * i], 0);
				assert_int_equal(out.rgb[3 * i + 1], 137);
				assert_int_equal(out.rgb[3 * i + 2], 255);
			}
			image_free(&out);
		}
}

static void
resize_rejects_bad_arguments(void **state)
{
	(void)state;
	uint8_t px[3] = {1, 2, 3};
	Image in = {.width = 1, .height = 1, .rgb = px}, out;
	Diag d;
	assert_int_not_equal(
	    image_resize(&in, 4, 4, (ResampleFilter)1, &out, &d), 0);
	assert_non_null(strstr(d.msg, "unknown filter 1"));
	assert_int_not_equal(
	    image_resize(&in, 0, 4, RESAMPLE_BICUBIC, &out, &d), 0);
	assert_non_null(strstr(d.msg, "out of range"));
	assert_int_not_equal(
	    image_resize(&in, 1 << 14, 1 << 14, RESAMPLE_BICUBIC, &out, &d), 0);
	Image empty = {0};
	assert_int_not_equal(
	    image_resize(&empty, 4, 4, RESAMPLE_BICUBIC, &out, &d), 0);
	assert_non_null(strstr(d.msg, "input image is empty"));
	Preprocess p = preprocess_siglip(8);
	p.std[1] = 0.0f;
	float buf[3 * 8 * 8];
	assert_int_not_equal(preprocess_images(&in, 1, &p, buf, &d), 0);
	assert_non_null(strstr(d.msg, "channel 1"));
}

static void
check_preprocess(char **w, int n)
{
	assert_true(n >= 11);
	Preprocess p = {.size = (uint32_t)atoi(w[1]),
	                .resample = (ResampleFilter)atoi(w[2]),
	                .rescale = 1.0 / 255.0};
	for (int c = 0; c < 3; c++) {
		p.mean[c] = strtof(w[3 + c], NULL);
		p.std[c] = strtof(w[6 + c], NULL);
	}
	size_t nimg = (size_t)n - 10;
	Image *imgs = calloc(nimg, sizeof *imgs);
	for (size_t i = 0; i < nimg; i++)
		load(w[10 + i], &imgs[i]);
	size_t per = (size_t)3 * p.size * p.size;
	float *px = malloc(nimg * per * sizeof *px);
	Diag d;
	assert_int_equal(preprocess_images(imgs, nimg, &p, px, &d), 0);
	char ref_path[512];
	NpyArray ref;
	case_path(ref_path, sizeof ref_path, w[9]);
	assert_int_equal(npy_read(ref_path, &ref, &d), 0);
	assert_int_equal(ref.dtype, NPY_F32);
	assert_int_equal(ref.rank, 4);
	assert_int_equal(ref.shape[0], nimg);
	assert_int_equal(ref.shape[1], 3);
	assert_int_equal(ref.shape[2], p.size);
	assert_int_equal(ref.shape[3], p.size);
	/* bit for bit: the same operations in the same precisions */
	const float *want = ref.data;
	for (size_t i = 0; i < nimg * per; i++)
		if (memcmp(&px[i], &want[i], sizeof(float)))
			fail_msg("%s element %zu: %.9g, the processor gives "
			         "%.9g",
			         w[9], i, px[i], want[i]);
	npy_free(&ref);
	for (size_t i = 0; i < nimg; i++)
		image_free(&imgs[i]);
	free(imgs);
	free(px);
}

static void
preprocess_matches_processor(void **state)
{
	(void)state;
	assert_int_equal(each_case("preprocess", check_preprocess), 3);
}

static void
siglip_defaults(void **state)
{
	(void)state;
	Preprocess p = preprocess_siglip(384);
	assert_int_equal(p.size, 384);
	assert_int_equal(p.resample, 3); /* model.md 6: resample = 3 */
	assert_true(p.rescale == 0.00392156862745098);
	for (int c = 0; c < 3; c++) {
		assert_true(p.mean[c] == 0.5f);
		assert_true(p.std[c] == 0.5f);
	}
}

/* Each malformed file of the manifest and the words its message must
 * hold. */
static const struct {
	const char *file, *msg;
} bad_files[] = {
    {"tiny.gif", "not a PNG or JPEG file (unknown signature 47 49 46 38)"},
    {"trunc.png", "PNG: file is truncated"},
    {"trunc_header.png", "PNG: file is truncated"},
    {"trunc.jpg", "JPEG: file is truncated: Premature end of JPEG file"},
    {"garbage.png", "not a PNG or JPEG file"},
    {"empty.png", "empty file"},
    {"badsig.png", "unknown signature 89 51 4e 47"},
    {"crc.png", "PNG: IHDR: CRC error"},
    {"huge.png", "100000x100000 pixels is larger than the limit"},
    {"zero.png", "PNG: "},
    {"badzlib.png", "PNG: IDAT: "},
    {"huge.jpg", "60000x60000 pixels is larger than the limit"},
    {"cmyk.jpg", "JPEG: CMYK images are not supported"},
};

static void
check_bad(char **w, int n)
{
	assert_int_equal(n, 2);
	for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
		if (strcmp(w[1], bad_files[i].file))
			continue;
		char p[512], text[1400];
		Image img;
		Diag d;
		diag_clear(&d);
		case_path(p, sizeof p, w[1]);
		assert_int_not_equal(image_load(p, &img, &d), 0);
		assert_null(img.rgb);
		diag_format(&d, text, sizeof text);
		/* the message starts with the file's path */
		if (strncmp(text, p, strlen(p)) ||
		    !strstr(text, bad_files[i].msg))
			fail_msg("%s: got '%s', want '%s'", w[1], text,
			         bad_files[i].msg);
		return;
	}
	fail_msg("no expected message for %s", w[1]);
}

static void
malformed_files_fail_clearly(void **state)
{
	(void)state;
	assert_int_equal(each_case("bad", check_bad),
	                 (int)(sizeof bad_files / sizeof bad_files[0]));
	Image img;
	Diag d;
	assert_int_not_equal(image_load("/nonexistent/x.png", &img, &d), 0);
	assert_non_null(strstr(d.msg, "cannot open"));
	/* Every proper prefix of a JPEG fails (PIL calls them truncated);
	 * a PNG prefix may decode once its last row is in (PIL does not
	 * insist on IEND either), and then to the same pixels. ASan watches
	 * for reads past the end. */
	static const char *whole[] = {"odd.jpg", "tiny_interlaced.png",
	                              "gray4.png"};
	for (int k = 0; k < 3; k++) {
		char p[512];
		uint8_t *buf;
		size_t len;
		Image full;
		case_path(p, sizeof p, whole[k]);
		assert_int_equal(read_file(p, &buf, &len, &d), 0);
		load(whole[k], &full);
		for (size_t cut = 0; cut < len; cut += 1 + cut / 64) {
			if (image_decode(buf, cut, whole[k], &img, &d))
				continue;
			if (k == 0 || img.width != full.width ||
			    img.height != full.height ||
			    memcmp(img.rgb, full.rgb,
			           (size_t)full.width * full.height * 3))
				fail_msg("%s cut to %zu of %zu bytes decoded",
				         whole[k], cut, len);
			image_free(&img);
		}
		image_free(&full);
		free(buf);
	}
}

/* `ipu image` writes the processor's tensor (the manifest's first batch)
 * and keeps an existing output unless --force. */
static void
cli_writes_pixel_values(void **state)
{
	(void)state;
	char out[4096];
	const char *args = "image rgb8.png q90.jpg gray8.png --size 224 "
	                   "--out px.npy";
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	expect_in(out, "rgb8.png  PNG 451x300  RGB 8-bit");
	expect_in(out, "q90.jpg  JPEG 451x300  YCbCr");
	expect_in(out, "pixel_values [3, 3, 224, 224] float32 (bicubic");
	expect_in(out, "channel B  min ");
	uint8_t *a, *b;
	size_t alen, blen;
	char p[256];
	Diag d;
	snprintf(p, sizeof p, "%s/px.npy", test_dir);
	assert_int_equal(read_file(p, &a, &alen, &d), 0);
	snprintf(p, sizeof p, "%s/pixels0.npy", test_dir);
	assert_int_equal(read_file(p, &b, &blen, &d), 0);
	/* numpy's header differs in layout only; compare the elements */
	size_t data = (size_t)3 * 3 * 224 * 224 * 4;
	assert_true(alen >= data && blen >= data);
	assert_memory_equal(a + alen - data, b + blen - data, data);
	free(a);
	free(b);
	assert_int_equal(run_ipu(out, sizeof out, args), 1);
	expect_in(out, "px.npy exists; refusing to overwrite it");
	assert_int_equal(run_ipu(out, sizeof out, "image empty.png --size 8"),
	                 1);
	expect_in(out, "empty.png: empty file");
	assert_int_equal(run_ipu(out, sizeof out, "image rgb8.png"), 2);
	expect_in(out, "--size N");
	assert_int_equal(
	    run_ipu(out, sizeof out, "image rgb8.png --size 8 --mean 1,2"), 2);
	expect_in(out, "--mean wants three numbers");
	assert_int_equal(
	    run_ipu(out, sizeof out, "image rgb8.png --size 8 --resample box"),
	    2);
	expect_in(out, "--resample wants bicubic or bilinear");
	/* bilinear with CLIP's statistics: the manifest's third batch */
	assert_int_equal(
	    run_ipu(out, sizeof out,
	            "image crop.png p16.png --size 64 --resample "
	            "bilinear --mean 0.48145466,0.4578275,0.40821073 "
	            "--std 0.26862954,0.26130258,0.27577711 --out "
	            "clip.npy"),
	    0);
	expect_in(out, "pixel_values [2, 3, 64, 64] float32 (bilinear");
	NpyArray got, want;
	snprintf(p, sizeof p, "%s/clip.npy", test_dir);
	assert_int_equal(npy_read(p, &got, &d), 0);
	snprintf(p, sizeof p, "%s/pixels2.npy", test_dir);
	assert_int_equal(npy_read(p, &want, &d), 0);
	assert_memory_equal(got.data, want.data, (size_t)2 * 3 * 64 * 64 * 4);
	npy_free(&got);
	npy_free(&want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(decode_matches_pil),
	    cmocka_unit_test(decode_reports_format),
	    cmocka_unit_test(resize_matches_pil),
	    cmocka_unit_test(resize_keeps_uniform_images),
	    cmocka_unit_test(resize_rejects_bad_arguments),
	    cmocka_unit_test(preprocess_matches_processor),
	    cmocka_unit_test(siglip_defaults),
	    cmocka_unit_test(malformed_files_fail_clearly),
	    cmocka_unit_test(cli_writes_pixel_values),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

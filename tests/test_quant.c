/*
 * test_quant.c - `ipu quant` (src/quant/) and the quantized checkpoint
 * (siglip_quant.h) on a small --realistic checkpoint: each method's codes,
 * channel scales, smoothed LayerNorms, GPTQ codes, corrected biases,
 * formats and scales against the algorithms written again in the PyTorch
 * reference (tools/siglip_ref.py quant-check), the emulated run of
 * quantized checkpoints against the reference's decoding of them, the
 * mixed-precision search (and its passes resumed from a layer's input),
 * and the checkpoint format's errors.
 */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/models/safetensors.h"
#include "../src/models/siglip_config.h"
#include "../src/models/siglip_quant.h"
#include "../src/quant/host.h"
#include "../src/util/fp.h"
#include "../src/util/npy.h"

#define PHOTOS "/usr/lib/python3/dist-packages/skimage/data/"
#define CALIB "--calib " PHOTOS "astronaut.png --calib " PHOTOS "coffee.png"
#define EVAL "--eval " PHOTOS "chelsea.png --eval " PHOTOS "rocket.jpg"
#define REF_CALIB "--image " PHOTOS "astronaut.png --image " PHOTOS "coffee.png"
#define REF_EVAL                                                               \
	"--eval-image " PHOTOS "chelsea.png --eval-image " PHOTOS "rocket.jpg"

/* d 64, 2 heads, 2 layers, 16 patches of 8x8 */
static const char tiny[] =
    "{\"model_type\": \"siglip_vision_model\", \"hidden_size\": 64, "
    "\"intermediate_size\": 128, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 2, \"image_size\": 32, \"patch_size\": 8}";

static int
setup(void **state)
{
	(void)state;
	if (test_dir_make("quant"))
		return -1;
	write_text("tiny.json", tiny);
	char out[4096];
	return run_ipu(out, sizeof out,
	               "model gen --config tiny.json --realistic --seed 3 "
	               "--out tiny.safetensors");
}

static int
teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

static int
shell(const char *line)
{
	char cmd[8192];
	assert_true((size_t)snprintf(cmd, sizeof cmd, "cd %s && %s", test_dir,
	                             line) < sizeof cmd);
	return system(cmd);
}

/* ipu quant with `methods` (and `extra` options) into out_st (its output
 * into <out_st>.log). */
static void
quantize_only(const char *methods, const char *extra, const char *out_st)
{
	char args[1024], out[8192];
	snprintf(args, sizeof args,
	         "quant --weights tiny.safetensors --config tiny.json " CALIB
	         " " EVAL " --method %s %s --out %s",
	         methods, extra, out_st);
	int rc = run_ipu(out, sizeof out, args);
	print_message("%s", out);
	assert_int_equal(rc, 0);
	expect_in(out, "held-out        min");
	char log[256];
	snprintf(log, sizeof log, "%s.log", out_st);
	write_text(log, out);
}

/* The reference's check of out_st (with `ref_extra` options), its decoded
 * tower's embedding of the held-out images into <out_st>.ref.npy: the
 * arguments of `siglip_ref.py` into line. */
static void
check_line(char *line, size_t n, const char *ref_extra, const char *out_st)
{
	assert_true(
	    (size_t)snprintf(line, n,
	                     "quant-check --weights tiny.safetensors "
	                     "--quantized %s --config tiny.json " REF_CALIB
	                     " " REF_EVAL " %s --out %s.ref.npy",
	                     out_st, ref_extra, out_st) < n);
}

/* The reference's checks of `n` lines (check_line's) in one interpreter
 * (tests/ref_batch.py: every check made, each failure named). */
static void
checks(char (*lines)[512], int n)
{
	char cmd[6144];
	size_t at = (size_t)snprintf(cmd, sizeof cmd,
	                             "/usr/bin/python3 %s/tests/ref_batch.py",
	                             IPU_SOURCE_DIR);
	for (int i = 0; i < n && at < sizeof cmd; i++)
		at += (size_t)snprintf(cmd + at, sizeof cmd - at, " '%s'",
		                       lines[i]);
	assert_true(at < sizeof cmd);
	assert_int_equal(shell(cmd), 0);
}

/* quantize_only, then the reference's check of it. */
static void
quantize_ref(const char *methods, const char *extra, const char *ref_extra,
             const char *out_st)
{
	char line[1][512];
	quantize_only(methods, extra, out_st);
	check_line(line[0], sizeof line[0], ref_extra, out_st);
	checks(line, 1);
}

static void
quantize(const char *methods, const char *extra, const char *out_st)
{
	quantize_ref(methods, extra, "", out_st);
}

static void
test_methods_match_reference(void **state)
{
	(void)state;
	SKIP_UNDER_SANITIZERS("test_run_quantized (channel,mse,smooth)");
	static const char *const methods[] = {"tensor",  "mse",
	                                      "channel", "channel,mse",
	                                      "smooth",  "channel,mse,smooth"};
	enum { N = sizeof methods / sizeof methods[0] };
	char lines[N][512];
	for (size_t i = 0; i < N; i++) {
		char name[64];
		snprintf(name, sizeof name, "q%zu.safetensors", i);
		quantize_only(methods[i], "", name);
		check_line(lines[i], sizeof lines[i], "", name);
	}
	checks(lines, N);
}

/* percentile, gptq, bias correction and the format choice (alone and with
 * the others), each against the reference's own implementation; the
 * options given to both. */
static void
test_more_methods_match_reference(void **state)
{
	(void)state;
	SKIP_UNDER_SANITIZERS("test_run_gptq_bias_f152 and test_block");
	static const struct {
		const char *methods, *opts;
	} m[] = {
	    {"percentile", "--percentile 99"},
	    {"percentile,mse", "--percentile 99.9"},
	    {"gptq", "--damp 0.01"},
	    {"channel,gptq", "--damp 0.1"},
	    {"bias", ""},
	    {"channel,gptq,bias", ""},
	    {"format", ""},
	    {"format,percentile", "--percentile 90"},
	    {"block,gptq,bias", "--block 64"},
	};
	enum { N = sizeof m / sizeof m[0] };
	char lines[N][512];
	for (size_t i = 0; i < N; i++) {
		char name[64];
		snprintf(name, sizeof name, "m%zu.safetensors", i);
		quantize_only(m[i].methods, m[i].opts, name);
		check_line(lines[i], sizeof lines[i], m[i].opts, name);
	}
	checks(lines, N);
}

/* The pooled embedding of a run of checkpoint w on the held-out photos. */
static SiglipResult
emulate(const char *w)
{
	char wpath[256], cpath[256];
	snprintf(wpath, sizeof wpath, "%s/%s", test_dir, w);
	snprintf(cpath, sizeof cpath, "%s/tiny.json", test_dir);
	const char *images[] = {PHOTOS "chelsea.png", PHOTOS "rocket.jpg"};
	SiglipRun r = {.weights = wpath,
	               .config = cpath,
	               .images = images,
	               .nimages = 2,
	               .dtype = DT_F32,
	               .threads = 2};
	SiglipResult res;
	Diag d;
	expect_diag_ok(siglip_run(&r, &res, &d), &d, "siglip_run");
	return res;
}

/* siglip_quant_read of checkpoint path (opened into f) for the tiny
 * config: its result. */
static int
read_policy(const char *path, StFile *f, SiglipQuant *q, Diag *d)
{
	SiglipConfig c;
	assert_int_equal(siglip_config_parse(tiny, strlen(tiny), "t", &c, d),
	                 0);
	assert_int_equal(st_open(path, f, d), 0);
	return siglip_quant_read(&c, f, path, q, d);
}

/* The emulated chip runs what the reference decodes from the checkpoint:
 * channel scales, smoothed LayerNorms and the policy's casts. */
static void
test_run_quantized(void **state)
{
	(void)state;
	quantize("channel,mse,smooth", "", "qrun.safetensors");
	SiglipResult r = emulate("qrun.safetensors");
	assert_true(r.quantized);
	assert_false(r.unrolled);
	expect_cosines(r.embedding, r.batch, r.d, "qrun.safetensors.ref.npy",
	               0.999);
	siglip_result_free(&r);
	/* it brings its own types */
	char out[4096];
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights qrun.safetensors "
	                         "--config tiny.json --image " PHOTOS
	                         "chelsea.png --dtype f16"),
	                 1);
	expect_in(out, "drop --dtype f16");
}

/* GPTQ codes, corrected biases and F152 activations (chosen by the
 * format method at the 99th percentile's scales) run on the emulated chip
 * as the reference decodes them. */
static void
test_run_gptq_bias_f152(void **state)
{
	(void)state;
	quantize_ref("gptq,bias,format,percentile", "--percentile 99",
	             "--percentile 99", "qg.safetensors");
	char path[256];
	snprintf(path, sizeof path, "%s/qg.safetensors", test_dir);
	StFile f;
	SiglipQuant q;
	Diag d;
	assert_int_equal(read_policy(path, &f, &q, &d), 0);
	int f152 = 0;
	for (int i = 0; i < SIGLIP_GEMMS; i++)
		f152 += q.act[i] == DT_F8_F152;
	print_message("%d activations cast to F152\n", f152);
	assert_true(f152 >= 1);
	siglip_quant_free(&q);
	st_free(&f);
	SiglipResult r = emulate("qg.safetensors");
	assert_false(r.unrolled);
	expect_cosines(r.embedding, r.batch, r.d, "qg.safetensors.ref.npy",
	               0.999);
	siglip_result_free(&r);
}

/* --target-cos between what all-f8 and all-f16 reach keeps some GEMMs
 * in f16, not all; the layers then differ and run unrolled. */
static void
test_mixed(void **state)
{
	(void)state;
	quantize("tensor", "--target-cos 0.9995", "qmix.safetensors");
	char path[256];
	snprintf(path, sizeof path, "%s/qmix.safetensors", test_dir);
	StFile f;
	SiglipQuant q;
	Diag d;
	assert_int_equal(read_policy(path, &f, &q, &d), 0);
	int kept = 0, f8 = 0;
	for (int i = 1; i < q.nweight; i++) { /* the patch embedding: f16 */
		kept += q.weight[i].dtype == DT_F16;
		f8 += dtype_is_f8(q.weight[i].dtype);
	}
	print_message("%d weights kept in f16, %d in f8\n", kept, f8);
	assert_true(kept >= 1);
	assert_true(f8 >= 1);
	siglip_quant_free(&q);
	st_free(&f);
	SiglipResult r = emulate("qmix.safetensors");
	assert_true(r.unrolled);
	expect_cosines(r.embedding, r.batch, r.d, "qmix.safetensors.ref.npy",
	               0.999);
	siglip_result_free(&r);
}

/* The search against the reference's own (quant-check --search-log): on
 * this checkpoint at P 97 the percentile scales clip hard enough that
 * keeping a GEMM in f16 moves the cosine by up to 0.2, so the two models'
 * rankings and the choice for a target of 0.94 (2 of 12 kept) are decided
 * by margins above their 1e-3-scale disagreement, which the reference
 * checks before it compares. */
static void
test_search_matches_reference(void **state)
{
	(void)state;
	quantize_ref("percentile", "--percentile 97 --target-cos 0.94",
	             "--percentile 97 --search-log qs.safetensors.log",
	             "qs.safetensors");
}

/* The search's resumed passes (host_states, host_forward_from): from the
 * stream entering layer l, a tower changed only from layer l on gives
 * host_forward's embedding bit for bit (and the change shows in it). */
static void
test_resume(void **state)
{
	(void)state;
	char path[256];
	SiglipConfig c;
	StFile f;
	Diag d;
	HostTower t, u;
	snprintf(path, sizeof path, "%s/tiny.json", test_dir);
	assert_int_equal(siglip_config_read(path, &c, &d), 0);
	snprintf(path, sizeof path, "%s/tiny.safetensors", test_dir);
	assert_int_equal(st_open(path, &f, &d), 0);
	assert_int_equal(host_load(&t, &c, &f, &d), 0);
	st_free(&f);
	size_t px = (size_t)c.channels * c.image * c.image,
	       rd = (size_t)siglip_tokens(&c) * c.hidden,
	       dim = (size_t)c.hidden;
	float *pixels = malloc(px * sizeof *pixels);
	for (size_t i = 0; i < px; i++)
		pixels[i] = (float)((i * 37 % 101) / 50.0 - 1);
	float *s = host_states(&t, pixels, 1);
	host_copy(&u, &t);
	for (int l = 0; l <= c.layers; l++) {
		/* u: t with layer l's fc2 biases (the head's fc2's) moved */
		HostLinear *fc2 = l < c.layers ? &u.layer[l].fc2 : &u.hfc2;
		for (int o = 0; o < fc2->out; o++)
			fc2->b[o] += 0.25f;
		float *want = host_forward(&u, pixels, 1, NULL),
		      *got = host_forward_from(&u, s + l * rd, l, 1),
		      *old = host_forward(&t, pixels, 1, NULL);
		assert_memory_equal(got, want, dim * sizeof *got);
		assert_memory_not_equal(old, want, dim * sizeof *old);
		free(want);
		free(got);
		free(old);
		memcpy(fc2->b, l < c.layers ? t.layer[l].fc2.b : t.hfc2.b,
		       (size_t)fc2->out * sizeof *fc2->b);
	}
	host_free(&u);
	host_free(&t);
	free(s);
	free(pixels);
}

/* A copy of checkpoint src as dst with: tensor `drop` left out, tensor
 * `as_f16` stored as F16 values, and metadata ipu.quant's text with `from`
 * replaced by `to` (NULLs: no change). */
static void
rewrite(const char *src, const char *dst, const char *drop, const char *as_f16,
        const char *from, const char *to)
{
	StFile f;
	Diag d;
	assert_int_equal(st_open(src, &f, &d), 0);
	StSpec *spec = calloc(f.ntensor, sizeof *spec);
	const void **data = calloc(f.ntensor, sizeof *data);
	void **own = calloc(f.ntensor, sizeof *own);
	size_t n = 0;
	for (size_t i = 0; i < f.ntensor; i++) {
		const StTensor *t = &f.tensor[i];
		if (drop && !strcmp(t->name, drop))
			continue;
		spec[n] = (StSpec){t->name, t->dtype, t->rank, t->shape};
		data[n] = st_bytes(&f, t);
		if (as_f16 && !strcmp(t->name, as_f16)) {
			uint64_t m = st_elements(t);
			float *v = malloc(m * sizeof *v);
			uint16_t *h = malloc(m * sizeof *h);
			assert_int_equal(st_to_f32(&f, t, v, &d), 0);
			unsigned fl = 0;
			for (uint64_t k = 0; k < m; k++)
				h[k] = fp_f32_to_f16(fp_float_f32(v[k]), FP_RNE,
				                     0, FP_OV_IEEE, &fl);
			free(v);
			spec[n].dtype = ST_F16;
			data[n] = own[n] = h;
		}
		n++;
	}
	StMeta *meta = calloc(f.nmeta, sizeof *meta);
	for (size_t i = 0; i < f.nmeta; i++) {
		meta[i] = f.meta[i];
		char *at = from && !strcmp(meta[i].key, SIGLIP_QUANT_KEY)
		               ? strstr(meta[i].value, from)
		               : NULL;
		if (at) {
			size_t len = strlen(meta[i].value) + strlen(to) + 1;
			char *v = malloc(len);
			snprintf(v, len, "%.*s%s%s", (int)(at - meta[i].value),
			         meta[i].value, to, at + strlen(from));
			meta[i].value = v;
		}
	}
	assert_int_equal(st_write(dst, spec, data, n, meta, f.nmeta, 1, &d), 0);
	for (size_t i = 0; i < f.nmeta; i++)
		if (meta[i].value != f.meta[i].value)
			free(meta[i].value);
	for (size_t i = 0; i < n; i++)
		free(own[i]);
	free(meta);
	free(own);
	free(spec);
	free(data);
	st_free(&f);
}

/* The text of checkpoint path's ipu.quant entry that starts with `key`,
 * up to its closing brace, into out. */
static void
policy_entry(const char *path, const char *key, char *out, size_t n)
{
	StFile f;
	Diag d;
	assert_int_equal(st_open(path, &f, &d), 0);
	const char *at = NULL;
	for (size_t i = 0; i < f.nmeta; i++)
		if (!strcmp(f.meta[i].key, SIGLIP_QUANT_KEY))
			at = strstr(f.meta[i].value, key);
	assert_non_null(at);
	snprintf(out, n, "%.*s", (int)(strchr(at, '}') - at + 1), at);
	st_free(&f);
}

/* siglip_quant_read's message for checkpoint path */
static void
expect_refused(const char *path, const char *msg)
{
	StFile f;
	SiglipQuant q;
	Diag d;
	assert_int_not_equal(read_policy(path, &f, &q, &d), 0);
	print_message("refused: %s\n", d.msg);
	if (!strstr(d.msg, msg))
		fail_msg("'%s' not in '%s'", msg, d.msg);
	st_free(&f);
}

static void
test_format_errors(void **state)
{
	(void)state;
	quantize("channel", "", "qf.safetensors");
	char src[256], bad[256];
	snprintf(src, sizeof src, "%s/qf.safetensors", test_dir);
	snprintf(bad, sizeof bad, "%s/bad.safetensors", test_dir);
	const char *fc1 = "vision_model.encoder.layers.1.mlp.fc1.weight";
	rewrite(src, bad, "vision_model.encoder.layers.1.mlp.fc1.weight_scale",
	        NULL, NULL, NULL);
	expect_refused(bad, "missing tensor "
	                    "'vision_model.encoder.layers.1.mlp.fc1.weight_"
	                    "scale'");
	rewrite(src, bad, NULL, fc1, NULL, NULL);
	expect_refused(bad, "dtype F16, but ipu.quant says F143");
	rewrite(src, bad, NULL, NULL, "\"scale\":", "\"scales\":");
	expect_refused(bad, "unknown key \"scales\"");
	/* the qkv activation's entry without its scale */
	char from[96];
	policy_entry(src, "\"qkv\":{", from, sizeof from);
	rewrite(src, bad, NULL, NULL, from, "\"qkv\":{\"format\":\"F143\"}");
	expect_refused(bad, "'qkv': missing \"scale\"");
	rewrite(src, bad, NULL, NULL, "\"version\":1", "\"version\":2");
	expect_refused(bad, "\"version\" must be 1");
	rewrite(src, bad, NULL, NULL, "\"F143\"", "\"E4M3\"");
	expect_refused(bad, "\"format\" must be \"F143\" or \"F152\"");
	/* ipu quant's own usage errors */
	char out[4096];
	assert_int_equal(run_ipu(out, sizeof out,
	                         "quant --weights tiny.safetensors --config "
	                         "tiny.json " CALIB
	                         " --method tensor,channel --out x.st"),
	                 2);
	expect_in(out, "one of them");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "quant --weights tiny.safetensors --config "
	                         "tiny.json --method mse --out x.st"),
	                 2);
	expect_in(out, "calibration images");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "quant --weights tiny.safetensors --config "
	                         "tiny.json " CALIB
	                         " --method percentile --percentile 0 --out "
	                         "x.st"),
	                 2);
	expect_in(out, "--percentile wants a number in");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "quant --weights tiny.safetensors --config "
	                         "tiny.json " CALIB
	                         " --method tensor --percentile 99 --out x.st"),
	                 2);
	expect_in(out, "--percentile is for --method percentile");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "quant --weights tiny.safetensors --config "
	                         "tiny.json " CALIB " --method tensor,gptk "
	                         "--out x.st"),
	                 2);
	expect_in(out, "method 'gptk': not one of");
	/* the head's q reads the probe alone: its Hessian has rank 1, which
	 * GPTQ cannot invert without dampening */
	assert_int_equal(run_ipu(out, sizeof out,
	                         "quant --weights tiny.safetensors --config "
	                         "tiny.json " CALIB " --method gptq --damp 0 "
	                         "--out x.st"),
	                 1);
	expect_in(out, "not positive definite");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "quant --weights tiny.safetensors --config "
	                         "tiny.json " CALIB
	                         " --out tiny.safetensors --force"),
	                 2);
}

/* Per-K-block scales: every code and block scale against the reference's
 * (with gptq and bias above), the emulated run (each GEMM by blocks of 32
 * input columns) against the reference's decoding of the checkpoint with
 * the device's roundings (--device-blocks: each block's product, scaled
 * product and running sum in f16), and ipu quant's errors for them. */
static void
test_block(void **state)
{
	(void)state;
	quantize_ref("block", "--block 32", "--block 32 --device-blocks",
	             "qb.safetensors");
	SiglipResult r = emulate("qb.safetensors");
	assert_true(r.quantized);
	assert_false(r.unrolled);
	expect_cosines(r.embedding, r.batch, r.d, "qb.safetensors.ref.npy",
	               0.999);
	siglip_result_free(&r);
	/* the format's errors for blocks */
	char src[256], bad[256];
	snprintf(src, sizeof src, "%s/qb.safetensors", test_dir);
	snprintf(bad, sizeof bad, "%s/badb.safetensors", test_dir);
	rewrite(src, bad, "vision_model.encoder.layers.0.mlp.fc2.weight_kscale",
	        NULL, NULL, NULL);
	expect_refused(bad, "missing tensor "
	                    "'vision_model.encoder.layers.0.mlp.fc2.weight_"
	                    "kscale' (the K-block scales");
	rewrite(src, bad, NULL, NULL, "\"k_block\":32", "\"k_block\":48");
	expect_refused(bad, "\"k_block\" must be a multiple of 32");
	rewrite(src, bad, NULL, NULL, "\"k_block\":32", "\"k_block\":64");
	expect_refused(bad, "must be F32 [64, 1] (one scale per output "
	                    "channel and block of K)");
	char out[8192];
	assert_int_equal(run_ipu(out, sizeof out,
	                         "quant --weights tiny.safetensors --config "
	                         "tiny.json " CALIB " --method block --block "
	                         "48 --out x.st"),
	                 2);
	expect_in(out, "--block wants a multiple of 32");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "quant --weights tiny.safetensors --config "
	                         "tiny.json " CALIB
	                         " --method tensor --block 32 --out x.st"),
	                 2);
	expect_in(out, "--block is for --method block");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "quant --weights tiny.safetensors --config "
	                         "tiny.json " CALIB
	                         " --method channel,block --out x.st"),
	                 2);
	expect_in(out, "method block with mse, format or channel");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_methods_match_reference),
	    cmocka_unit_test(test_more_methods_match_reference),
	    cmocka_unit_test(test_run_quantized),
	    cmocka_unit_test(test_run_gptq_bias_f152),
	    cmocka_unit_test(test_mixed),
	    cmocka_unit_test(test_search_matches_reference),
	    cmocka_unit_test(test_resume),
	    cmocka_unit_test(test_format_errors),
	    cmocka_unit_test(test_block),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

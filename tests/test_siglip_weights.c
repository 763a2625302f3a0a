/*
 * test_siglip_weights.c - the SigLIP tensor list, the checkpoint check and
 * the generator (src/models/siglip_weights.h, siglip_gen.h), and the
 * `ipu model` command.
 *
 * Counts and parameter totals are model.md's (sections 0, 3, 4), derived
 * there by hand. Generated checkpoints (base with 2 layers in f16, so400m
 * with 1 layer in f32 and bf16) must pass siglip_check and be read by an
 * independent reader under Debian's python3 (tests/siglip_ref.py: its own
 * safetensors parser, its own tensor table, the documented statistics, the
 * documented generator re-implemented). Every kind of mismatch is built
 * with the writer and must be named.
 */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/models/siglip_gen.h"

static int
setup(void **state)
{
	(void)state;
	return test_dir_make("siglip_weights");
}

static int
teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

static const char *
in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", test_dir, name);
	return buf;
}

static uint64_t
total_params(const SiglipConfig *c, size_t *count)
{
	SiglipTensor *t;
	size_t n = siglip_tensors(c, &t);
	uint64_t p = 0;
	for (size_t i = 0; i < n; i++)
		p += siglip_tensor_elements(&t[i]);
	free(t);
	*count = n;
	return p;
}

static const SiglipTensor *
find(const SiglipTensor *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	fail_msg("no tensor %s", name);
	return NULL;
}

static void
test_tensor_list(void **state)
{
	(void)state;
	SiglipConfig c;
	size_t n;
	assert_int_equal(siglip_preset("so400m", &c), 0);
	assert_int_equal(total_params(&c, &n), 428225600); /* model.md 0 */
	assert_int_equal(n, 448);
	c.layers = 1; /* one layer: 15,239,504 (model.md 4) */
	assert_int_equal(total_params(&c, &n), 428225600 - 26 * 15239504ull);
	assert_int_equal(n, 32);
	assert_int_equal(siglip_preset("base", &c), 0);
	assert_int_equal(total_params(&c, &n), 92884224);
	assert_int_equal(n, 208);
	c.use_head = 0; /* the head is 7,087,104 (model.md 4) */
	assert_int_equal(total_params(&c, &n), 92884224 - 7087104);
	assert_int_equal(n, 197);

	assert_int_equal(siglip_preset("so400m", &c), 0);
	SiglipTensor *t;
	n = siglip_tensors(&c, &t);
	const SiglipTensor *x =
	    find(t, n, "vision_model.embeddings.patch_embedding.weight");
	assert_int_equal(x->rank, 4);
	assert_true(x->shape[0] == 1152 && x->shape[1] == 3 &&
	            x->shape[2] == 14 && x->shape[3] == 14);
	x = find(t, n, "vision_model.embeddings.position_embedding.weight");
	assert_true(x->shape[0] == 729 && x->shape[1] == 1152);
	x = find(t, n, "vision_model.head.attention.in_proj_weight");
	assert_true(x->shape[0] == 3456 && x->shape[1] == 1152);
	x = find(t, n, "vision_model.head.probe");
	assert_true(x->rank == 3 && x->shape[0] == 1 && x->shape[2] == 1152);
	x = find(t, n, "vision_model.encoder.layers.26.mlp.fc2.weight");
	assert_true(x->shape[0] == 1152 && x->shape[1] == 4304);
	assert_int_equal(x->kind, SW_LINEAR);
	free(t);
}

/* A small config whose checkpoints the mismatch tests build by hand. */
static SiglipConfig
tiny(void)
{
	SiglipConfig c = {8, 16, 1, 2, 3, 4, 2, 1e-6, 1};
	return c;
}

/* Write a checkpoint of c's tensors (zeros, F32), changed by `edit`:
 * "drop NAME", "shape NAME" (one more row), "dtype NAME" (F16), "int
 * NAME" (I32), "add NAME". Then check it against c; returns the result and the
 * message. */
static int
check_edited(const SiglipConfig *c, const char *edit, const char *name,
             SiglipCheck *sum, char *msg)
{
	SiglipTensor *t;
	size_t n = siglip_tensors(c, &t);
	StSpec *spec = calloc(n + 1, sizeof *spec);
	uint64_t extra_shape[1] = {4};
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		int hit = !strcmp(t[i].name, name);
		if (hit && !strcmp(edit, "drop"))
			continue;
		if (hit && !strcmp(edit, "shape"))
			t[i].shape[0]++;
		StDtype dt = !hit                     ? ST_F32
		             : !strcmp(edit, "dtype") ? ST_F16
		             : !strcmp(edit, "int")   ? ST_I32
		                                      : ST_F32;
		spec[m++] = (StSpec){t[i].name, dt, t[i].rank, t[i].shape};
	}
	if (!strcmp(edit, "add"))
		spec[m++] = (StSpec){name, ST_F32, 1, extra_shape};
	static uint8_t zeros[1 << 16];
	const void **data = calloc(m, sizeof *data);
	for (size_t i = 0; i < m; i++)
		data[i] = zeros;
	char path[128];
	in_dir(path, sizeof path, "edited.safetensors");
	Diag d;
	diag_clear(&d);
	assert_int_equal(st_write(path, spec, data, m, NULL, 0, 1, &d), 0);
	StFile f;
	assert_int_equal(st_open(path, &f, &d), 0);
	int rc = siglip_check(c, &f, path, sum, &d);
	strcpy(msg, d.msg);
	st_free(&f);
	free(data);
	free(spec);
	free(t);
	return rc;
}

static void
expect_mismatch(const char *edit, const char *name, const char *fragment)
{
	SiglipConfig c = tiny();
	char msg[512];
	SiglipCheck s;
	int rc = check_edited(&c, edit, name, &s, msg);
	if (rc == 0 || !strstr(msg, fragment))
		fail_msg("%s %s: expected \"%s\", got rc %d: %s", edit, name,
		         fragment, rc, msg);
}

static void
test_check_mismatches(void **state)
{
	(void)state;
	expect_mismatch("drop",
	                "vision_model.encoder.layers.0.self_attn.k_proj.bias",
	                "missing tensor 'vision_model.encoder.layers.0."
	                "self_attn.k_proj.bias' (expected shape [8])");
	expect_mismatch("shape", "vision_model.head.mlp.fc1.weight",
	                "tensor 'vision_model.head.mlp.fc1.weight': shape "
	                "[17, 8], but the config expects [16, 8]");
	expect_mismatch("dtype", "vision_model.post_layernorm.bias",
	                "tensor 'vision_model.post_layernorm.bias': dtype F16, "
	                "but the checkpoint's dtype");
	expect_mismatch("add", "vision_model.encoder.layers.1.mlp.fc1.bias",
	                "unexpected tensor "
	                "'vision_model.encoder.layers.1.mlp.fc1.bias' for this "
	                "config (1 layers, head on)");
	/* the first tensor sets the dtype the others must share */
	expect_mismatch(
	    "dtype", "vision_model.embeddings.patch_embedding.weight",
	    "tensor 'vision_model.embeddings.patch_embedding.bias': "
	    "dtype F32, but the checkpoint's dtype (that of the "
	    "patch embedding) is F16");
	expect_mismatch("int", "vision_model.embeddings.patch_embedding.weight",
	                "dtype I32, but a checkpoint must be F32, F16 or BF16");

	/* a full SiglipModel file: the text tower is ignored, counted */
	SiglipConfig c = tiny();
	char msg[512];
	SiglipCheck s;
	assert_int_equal(
	    check_edited(&c, "add", "text_model.final.bias", &s, msg), 0);
	assert_int_equal(s.nignored, 1);
	assert_int_equal(s.ntensor, 32);
	/* d 8, f 16, C 3, P 2, N 4, by model.md 3's rows: embeddings, one
	 * layer, post LayerNorm, head */
	uint64_t want =
	    (8 * 3 * 2 * 2 + 8 + 4 * 8) +
	    (2 * 8 + 4 * (8 * 8 + 8) + 2 * 8 + (16 * 8 + 16) + (8 * 16 + 8)) +
	    2 * 8 +
	    (8 + (24 * 8 + 24) + (8 * 8 + 8) + 2 * 8 + (16 * 8 + 16) +
	     (8 * 16 + 8));
	assert_int_equal(s.params, want);
	assert_int_equal(s.bytes, 4 * want);
	assert_int_equal(s.dtype, ST_F32);
}

/* siglip_ref.py on a checkpoint; 0 when it agrees. */
static int
python_check(const char *weights, const char *config, uint64_t seed)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
	         "/usr/bin/python3 %s/tests/siglip_ref.py %s %s %llu",
	         IPU_SOURCE_DIR, weights, config, (unsigned long long)seed);
	return system(cmd);
}

static void
gen_and_check(const char *preset, int layers, StDtype dtype, uint64_t seed,
              const char *name)
{
	SiglipConfig c;
	assert_int_equal(siglip_preset(preset, &c), 0);
	c.layers = layers;
	char w[128], cfg[160];
	in_dir(w, sizeof w, name);
	snprintf(cfg, sizeof cfg, "%s.json", w);
	Diag d;
	diag_clear(&d);
	if (siglip_gen(w, &c, dtype, seed, 0, 0, &d) ||
	    siglip_config_write(cfg, &c, 0, &d))
		fail_msg("%s", d.msg);
	StFile f;
	SiglipCheck s;
	assert_int_equal(st_open(w, &f, &d), 0);
	if (siglip_check(&c, &f, w, &s, &d))
		fail_msg("%s", d.msg);
	size_t n;
	assert_int_equal(s.params, total_params(&c, &n));
	assert_int_equal(s.ntensor, n);
	assert_int_equal(s.dtype, dtype);
	assert_int_equal(s.bytes, s.params * st_dtype_bits(dtype) / 8);
	/* the generator's values, rounded, are what the file holds */
	SiglipTensor *t;
	siglip_tensors(&c, &t);
	const StTensor *probe = st_find(&f, t[n - 11].name);
	assert_string_equal(probe->name, "vision_model.head.probe");
	uint64_t m = st_elements(probe);
	double *v = malloc(m * sizeof *v);
	float *got = malloc(m * sizeof *got);
	siglip_gen_values(&c, &t[n - 11], seed, 0, v);
	assert_int_equal(st_to_f32(&f, probe, got, &d), 0);
	for (uint64_t i = 0; i < m; i++)
		assert_true(fabs(got[i] - v[i]) <= fabs(v[i]) * 0x1p-8);
	free(v);
	free(got);
	free(t);
	st_free(&f);
	if (access("/usr/bin/python3", X_OK) == 0)
		assert_int_equal(python_check(w, cfg, seed), 0);
}

static void
test_gen_base_f16(void **state)
{
	(void)state;
	gen_and_check("base", 2, ST_F16, 42, "base2.safetensors");
}

static void
test_gen_so400m(void **state)
{
	(void)state;
	gen_and_check("so400m", 1, ST_F32, 7, "so1.safetensors");
	gen_and_check("so400m", 1, ST_BF16, 7, "so1bf.safetensors");
}

/* Same seed, same bytes; fewer layers, same values for the layers kept;
 * another seed, other values. */
static void
test_gen_deterministic(void **state)
{
	(void)state;
	SiglipConfig c = tiny();
	c.layers = 2;
	char a[128], b[128], e[128];
	Diag d;
	assert_int_equal(
	    siglip_gen(in_dir(a, sizeof a, "a.st"), &c, ST_F32, 5, 0, 0, &d),
	    0);
	assert_int_equal(
	    siglip_gen(in_dir(b, sizeof b, "b.st"), &c, ST_F32, 5, 0, 0, &d),
	    0);
	c.layers = 1;
	assert_int_equal(
	    siglip_gen(in_dir(e, sizeof e, "e.st"), &c, ST_F32, 6, 0, 0, &d),
	    0);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
	assert_int_equal(system(cmd), 0);
	assert_int_not_equal(siglip_gen(a, &c, ST_F32, 5, 0, 0, &d), 0);
	assert_non_null(strstr(d.msg, "refusing to overwrite"));
	assert_int_equal(siglip_gen(a, &c, ST_F32, 5, 0, 1, &d),
	                 0); /* 1 layer */
	StFile fa, fb, fe;
	assert_int_equal(st_open(a, &fa, &d), 0);
	assert_int_equal(st_open(b, &fb, &d), 0);
	assert_int_equal(st_open(e, &fe, &d), 0);
	assert_int_equal(fa.ntensor + 16, fb.ntensor);
	for (size_t i = 0; i < fa.ntensor; i++) {
		const StTensor *x = &fa.tensor[i], *y = st_find(&fb, x->name);
		const StTensor *z = st_find(&fe, x->name);
		assert_non_null(y);
		size_t len = x->end - x->begin;
		assert_memory_equal(st_bytes(&fa, x), st_bytes(&fb, y), len);
		assert_memory_not_equal(st_bytes(&fa, x), st_bytes(&fe, z),
		                        len);
	}
	st_free(&fa);
	st_free(&fb);
	st_free(&fe);
	assert_int_not_equal(siglip_gen(a, &c, ST_I8, 5, 0, 1, &d), 0);
	assert_non_null(strstr(d.msg, "only F32, F16 and BF16"));
}

/* --realistic: tests/realistic_ref.py regenerates every tensor from the
 * recipe's description; the plain and realistic checkpoints share their
 * normals (a non-outlier LayerNorm bias is exactly 0.1 / 0.02 = 5 times
 * the plain one), the planted register neurons' fc1 bias is -15, and a
 * width too small for the recipe is refused. */
static void
test_gen_realistic(void **state)
{
	(void)state;
	SiglipConfig c = tiny();
	c.hidden = 32;
	c.intermediate = 40;
	c.heads = 2;
	c.image = 32;
	c.patch = 8;
	c.layers = 2;
	char w[128], p[128], cfg[160];
	Diag d;
	in_dir(w, sizeof w, "real.st");
	in_dir(p, sizeof p, "plain.st");
	in_dir(cfg, sizeof cfg, "real.json");
	assert_int_equal(
	    siglip_gen(w, &c, ST_F32, 11, SIGLIP_GEN_REALISTIC, 0, &d), 0);
	assert_int_equal(siglip_gen(p, &c, ST_F32, 11, 0, 0, &d), 0);
	assert_int_equal(siglip_config_write(cfg, &c, 0, &d), 0);
	StFile fr, fp;
	assert_int_equal(st_open(w, &fr, &d), 0);
	assert_int_equal(st_open(p, &fp, &d), 0);
	assert_int_equal(siglip_check(&c, &fr, w, NULL, &d), 0);
	const char *lnb = "vision_model.encoder.layers.1.layer_norm2.bias";
	float br[32], bp[32], b1[40];
	assert_int_equal(st_to_f32(&fr, st_find(&fr, lnb), br, &d), 0);
	assert_int_equal(st_to_f32(&fp, st_find(&fp, lnb), bp, &d), 0);
	int same = 0;
	for (int i = 0; i < 32; i++)
		same += fabs(br[i] - 5 * bp[i]) <= 1e-6 * fabs(br[i]);
	assert_int_equal(same, 32 - 2); /* two outlier channels moved */
	assert_int_equal(
	    st_to_f32(
	        &fr, st_find(&fr, "vision_model.encoder.layers.0.mlp.fc1.bias"),
	        b1, &d),
	    0);
	int reg = 0;
	for (int i = 0; i < 40; i++)
		reg += b1[i] == -15.0f;
	assert_int_equal(reg, 4);
	st_free(&fr);
	st_free(&fp);
	if (access("/usr/bin/python3", X_OK) == 0) {
		char cmd[1024];
		snprintf(cmd, sizeof cmd,
		         "/usr/bin/python3 %s/tests/realistic_ref.py %s %s 11",
		         IPU_SOURCE_DIR, w, cfg);
		assert_int_equal(system(cmd), 0);
	}
	c.hidden = 8;
	c.heads = 1;
	assert_int_not_equal(
	    siglip_gen(w, &c, ST_F32, 11, SIGLIP_GEN_REALISTIC, 1, &d), 0);
	assert_non_null(strstr(d.msg, "needs hidden_size >= 16"));
}

static void
test_cli(void **state)
{
	(void)state;
	char out[4096];
	assert_int_equal(
	    run_ipu(out, sizeof out,
	            "model gen --preset base --layers 1 --dtype f16 "
	            "--seed 3 --out w.st --config-out c.json"),
	    0);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model check --weights w.st --config c.json"),
	                 0);
	/* base with one layer: 92,884,224 - 11 * 7,087,872 (model.md 4) */
	expect_in(out, "tensors     32\n");
	expect_in(out, "parameters  14917632\n");
	expect_in(out, "bytes       29835264 (28.5 MiB), F16");
	/* the full base config expects 12 layers */
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model check --weights w.st --preset base"),
	                 1);
	expect_in(out, "w.st: missing tensor "
	               "'vision_model.encoder.layers.1.layer_norm1.weight'");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model check --weights w.st --preset so400m"),
	                 1);
	expect_in(out, "patch_embedding.weight': shape [768, 3, 16, 16], but "
	               "the config expects [1152, 3, 14, 14]");
	/* outputs are never replaced without --force */
	assert_int_equal(
	    run_ipu(out, sizeof out,
	            "model gen --preset base --layers 1 --out x.st "
	            "--config-out c.json"),
	    1);
	expect_in(out, "c.json exists; refusing to overwrite it");
	char x[128];
	assert_int_equal(access(in_dir(x, sizeof x, "x.st"), F_OK), -1);
	assert_int_equal(
	    run_ipu(out, sizeof out,
	            "model gen --preset base --layers 1 --out w.st "
	            "--config-out c.json --force --seed 4"),
	    0);
	assert_int_equal(
	    run_ipu(out, sizeof out, "model gen --preset big --out y"), 2);
	expect_in(out, "unknown preset 'big'");
	assert_int_equal(run_ipu(out, sizeof out, "model gen --preset base"),
	                 2);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model gen --preset base --layers 0 --out y"),
	                 2);
	expect_in(out, "--layers wants a number in 1..1048576, got '0'");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model gen --preset base --dtype f8 --out y"),
	                 2);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model check --weights c.json "
	                         "--preset base"),
	                 1);
	expect_in(out, "c.json: header length");
	assert_int_equal(run_ipu(out, sizeof out, "help"), 0);
	expect_in(out, "model ");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tensor_list),
	    cmocka_unit_test(test_check_mismatches),
	    cmocka_unit_test(test_gen_base_f16),
	    cmocka_unit_test(test_gen_so400m),
	    cmocka_unit_test(test_gen_deterministic),
	    cmocka_unit_test(test_gen_realistic),
	    cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * test_siglip_ops.c - each operator of the SigLIP tower on its own, as the
 * tower's graph writes it, compiled and run on the emulated C600 through
 * `ipu run graph`, against the independent PyTorch reference's operator
 * (tools/siglip_ref.py op, f64 arithmetic on the same float32 inputs):
 * layernorm, GELU (tanh), softmax, a linear layer with its bias, multi-head
 * attention (729-token-like odd lengths, head_dim 72, and the MAP head's
 * single probe query) and the patch embedding (siglip_patches on the host,
 * then the matmul; the reference is a strided convolution).
 *
 * Bounds, from the errors each case prints (measured when this file was
 * added: at most 6.3e-7 of max |y| in f32, 1.6e-3 in f16, 1 - cosine at
 * most 7.2e-7 in f16) with a margin of ~4-5x: f32 within 3e-6 of max |y|
 * everywhere and a cosine of at least 0.9999999; f16 (inputs and every
 * op's result rounded to f16, 2^-11 relative each) within 8e-3 of max |y|
 * and a cosine of at least 0.999996.
 *
 * The inputs of every case are made in the group's setup, drawn from one
 * generator in case order, and the reference runs all seven operators in
 * one Python process (tests/ref_batch.py: PyTorch started once, each
 * operator into its own file, every run made and each failure named).
 */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/models/siglip_graph.h"
#include "../src/util/npy.h"

static int
teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

/* Normal-ish values (sum of uniforms) times `scale` plus `shift`. */
static float *
values(size_t n, double scale, double shift)
{
	float *v = malloc(n * sizeof *v);
	for (size_t i = 0; i < n; i++) {
		double s = 0;
		for (int k = 0; k < 4; k++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			s += (double)(rng >> 11) * 0x1p-53 - 0.5;
		}
		v[i] = (float)(s * 1.7320508 * scale + shift);
	}
	return v;
}

static void
save(const char *name, const float *v, int rank, const int64_t *shape)
{
	NpyArray a = {.dtype = NPY_F32, .rank = rank, .data = (void *)v};
	for (int i = 0; i < rank; i++)
		a.shape[i] = (uint64_t)shape[i];
	char path[256];
	snprintf(path, sizeof path, "%s/%s", test_dir, name);
	Diag d;
	assert_int_equal(npy_write(path, &a, 1, &d), 0);
}

static float *
load(const char *name, size_t want)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", test_dir, name);
	NpyArray a;
	Diag d;
	assert_int_equal(npy_read(path, &a, &d), 0);
	assert_int_equal(a.dtype, NPY_F32);
	assert_int_equal(npy_count(&a), want);
	return a.data;
}

/* The reference's runs, one a case (`siglip_ref.py op NAME ARGS --out
 * CASE.ref.npy`), made in one interpreter by setup. */
static char ref_lines[8][256];
static int nref;

static void
reference(const char *ref, const char *name, const char *args)
{
	assert_true(nref < 8);
	snprintf(ref_lines[nref++], sizeof ref_lines[0],
	         "op %s %s --dtype f64 --out %s --force", name, args, ref);
}

/* The graph (text with %s for the element type) run on the chip on
 * `inputs` (NAME=FILE pairs), output y into y.npy; y against `ref`. */
static void
check(const char *what, const char *graph_fmt, const char *dt,
      const char *inputs, const char *ref_file, size_t n)
{
	char text[4096], out[8192], args[1024];
	snprintf(text, sizeof text, graph_fmt, dt, dt, dt, dt, dt, dt);
	write_text("op.graph", text);
	snprintf(args, sizeof args,
	         "run graph --graph op.graph %s --out y=y.npy --force", inputs);
	int rc = run_ipu(out, sizeof out, args);
	if (rc)
		fail_msg("ipu %s: %s", args, out);
	float *y = load("y.npy", n), *ref = load(ref_file, n);
	double max_ref = 0, max_err = 0, dot = 0, ny = 0, nr = 0;
	for (size_t i = 0; i < n; i++) {
		double a = y[i], b = ref[i];
		max_ref = fmax(max_ref, fabs(b));
		max_err = fmax(max_err, fabs(a - b));
		dot += a * b, ny += a * a, nr += b * b;
	}
	double rel = max_err / max_ref, cos = dot / sqrt(ny * nr);
	int f32 = !strcmp(dt, "f32");
	print_message("%-28s %s: max error %.3g of max |y| %.4g (rel %.3g), "
	              "cosine %.9f\n",
	              what, dt, max_err, max_ref, rel, cos);
	assert_true(rel <= (f32 ? 3e-6 : 8e-3));
	assert_true(cos >= (f32 ? 0.9999999 : 0.999996));
	free(y);
	free(ref);
}

static const char *const dtypes[] = {"f32", "f16"};

/* Each case's inputs (files named by the case) and reference run. */
static void
make_layernorm(void)
{
	int64_t xs[] = {37, 144}, ws[] = {144};
	float *x = values(37 * 144, 3, 0.5), *g = values(144, 0.3, 1),
	      *b = values(144, 0.2, 0);
	save("ln_x.npy", x, 2, xs);
	save("ln_g.npy", g, 1, ws);
	save("ln_b.npy", b, 1, ws);
	reference("ln.ref.npy", "layernorm",
	          "--in ln_x.npy --in ln_g.npy --in ln_b.npy --eps 1e-6");
	free(x), free(g), free(b);
}

static void
test_layernorm(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++)
		check("layernorm [37, 144]",
		      "input x %s [37, 144]\nweight g %s [144]\n"
		      "weight b %s [144]\ny = layernorm x g b eps=1e-6\n"
		      "output y\n",
		      dtypes[i],
		      "--in x=ln_x.npy --in g=ln_g.npy --in b=ln_b.npy",
		      "ln.ref.npy", 37 * 144);
}

static void
make_gelu(void)
{
	int64_t xs[] = {29, 538};
	float *x = values(29 * 538, 2, -0.3);
	save("gelu_x.npy", x, 2, xs);
	reference("gelu.ref.npy", "gelu", "--in gelu_x.npy");
	free(x);
}

static void
test_gelu(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++)
		check("gelu [29, 538]",
		      "input x %s [29, 538]\ny = gelu x\noutput y\n", dtypes[i],
		      "--in x=gelu_x.npy", "gelu.ref.npy", 29 * 538);
}

static void
make_softmax(void)
{
	int64_t xs[] = {2, 3, 37};
	float *x = values(2 * 3 * 37, 4, 1);
	save("sm_x.npy", x, 3, xs);
	reference("sm.ref.npy", "softmax", "--in sm_x.npy");
	free(x);
}

static void
test_softmax(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++)
		check(
		    "softmax [2, 3, 37]",
		    "input x %s [2, 3, 37]\ny = softmax x scale=1\noutput y\n",
		    dtypes[i], "--in x=sm_x.npy", "sm.ref.npy", 2 * 3 * 37);
}

/* x [2, 37, 144] through a [538, 144] weight (PyTorch's [out, in]) and a
 * bias: the tower's matmul with transpose_b on the flattened tokens. */
static void
make_linear(void)
{
	int64_t xs[] = {2, 37, 144}, ws[] = {538, 144}, bs[] = {538};
	float *x = values(2 * 37 * 144, 1, 0), *w = values(538 * 144, 0.05, 0),
	      *b = values(538, 0.1, 0);
	save("lin_x.npy", x, 3, xs);
	save("lin_w.npy", w, 2, ws);
	save("lin_b.npy", b, 1, bs);
	reference("lin.ref.npy", "linear",
	          "--in lin_x.npy --in lin_w.npy --in lin_b.npy");
	free(x), free(w), free(b);
}

static void
test_linear(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++)
		check("linear [2, 37, 144] -> 538",
		      "input x %s [2, 37, 144]\nweight w %s [538, 144]\n"
		      "weight b %s [538]\nx2 = reshape x [74, 144]\n"
		      "m = matmul x2 w transpose_b=1\nm2 = add m b\n"
		      "y = reshape m2 [2, 37, 538]\noutput y\n",
		      dtypes[i],
		      "--in x=lin_x.npy --in w=lin_w.npy --in b=lin_b.npy",
		      "lin.ref.npy", 2 * 37 * 538);
}

/* Heads split by reshape and transpose, scores scaled inside the softmax
 * by head_dim^-0.5 = 72^-0.5, heads merged back: q [2, nq, 144] against k,
 * v [2, 37, 144], 2 heads of 72. */
static const char attention_fmt[] =
    "input q %%s [2, %d, 144]\ninput k %%s [2, 37, 144]\n"
    "input v %%s [2, 37, 144]\n"
    "qr = reshape q [2, %d, 2, 72]\nqh = transpose qr [0, 2, 1, 3]\n"
    "kr = reshape k [2, 37, 2, 72]\nkh = transpose kr [0, 2, 1, 3]\n"
    "vr = reshape v [2, 37, 2, 72]\nvh = transpose vr [0, 2, 1, 3]\n"
    "s = matmul qh kh transpose_b=1\n"
    "p = softmax s scale=0.11785113019775793\n"
    "o = matmul p vh\not = transpose o [0, 2, 1, 3]\n"
    "y = reshape ot [2, %d, 144]\noutput y\n";

/* The inputs' files are named att<nq>_q.npy etc., the reference's
 * att<nq>.ref.npy. */
static void
make_attention(int nq)
{
	int64_t qs[] = {2, nq, 144}, ks[] = {2, 37, 144};
	float *q = values((size_t)2 * nq * 144, 1, 0),
	      *k = values(2 * 37 * 144, 1, 0), *v = values(2 * 37 * 144, 1, 0);
	char f[3][32], ref[32], args[160];
	for (int i = 0; i < 3; i++)
		snprintf(f[i], sizeof f[i], "att%d_%c.npy", nq, "qkv"[i]);
	save(f[0], q, 3, qs);
	save(f[1], k, 3, ks);
	save(f[2], v, 3, ks);
	snprintf(ref, sizeof ref, "att%d.ref.npy", nq);
	snprintf(args, sizeof args, "--in %s --in %s --in %s --heads 2", f[0],
	         f[1], f[2]);
	reference(ref, "attention", args);
	free(q), free(k), free(v);
}

static void
attention(int nq)
{
	char fmt[sizeof attention_fmt + 16];
	snprintf(fmt, sizeof fmt, attention_fmt, nq, nq, nq);
	char what[64], inputs[128], ref[32];
	snprintf(what, sizeof what, "attention q %d, kv 37, 2 x 72", nq);
	snprintf(inputs, sizeof inputs,
	         "--in q=att%d_q.npy --in k=att%d_k.npy --in v=att%d_v.npy", nq,
	         nq, nq);
	snprintf(ref, sizeof ref, "att%d.ref.npy", nq);
	for (int i = 0; i < 2; i++)
		check(what, fmt, dtypes[i], inputs, ref, (size_t)2 * nq * 144);
}

static void
test_attention(void **state)
{
	(void)state;
	attention(37);
}

/* The MAP head's probe: one query over all the tokens. */
static void
test_attention_probe(void **state)
{
	(void)state;
	attention(1);
}

/* Pixels [2, 3, 48, 48] (48 = 3 x 14 + 6: the last 6 pixels unused), a
 * [144, 3, 14, 14] convolution of stride 14 with a bias. */
static void
make_patch_embed(void)
{
	SiglipConfig c = {.channels = 3, .image = 48, .patch = 14};
	int64_t ps[] = {2, 3, 48, 48}, ws[] = {144, 3, 14, 14}, bs[] = {144},
	        ts[] = {18, 588};
	float *px = values(2 * 3 * 48 * 48, 0.5, 0),
	      *w = values(144 * 588, 0.04, 0), *b = values(144, 0.1, 0),
	      *patches = malloc(18 * 588 * sizeof *patches);
	siglip_patches(&c, 2, px, patches);
	save("pe_px.npy", px, 4, ps);
	save("pe_w.npy", w, 4, ws);
	save("pe_b.npy", b, 1, bs);
	save("pe_patches.npy", patches, 2, ts);
	save("pe_w2.npy", w, 2, (int64_t[]){144, 588});
	reference("pe.ref.npy", "patch_embed",
	          "--in pe_px.npy --in pe_w.npy --in pe_b.npy");
	free(px), free(w), free(b), free(patches);
}

static void
test_patch_embed(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++)
		check("patch embedding 48 px / 14",
		      "input patches %s [18, 588]\nweight w %s [144, 588]\n"
		      "weight b %s [144]\nm = matmul patches w transpose_b=1\n"
		      "y = add m b\noutput y\n",
		      dtypes[i],
		      "--in patches=pe_patches.npy --in w=pe_w2.npy "
		      "--in b=pe_b.npy",
		      "pe.ref.npy", 18 * 144);
}

/* Every case's inputs, in case order from the one generator, and the
 * reference's seven operators in one process. */
static int
setup(void **state)
{
	(void)state;
	if (test_dir_make("siglip_ops"))
		return -1;
	make_layernorm();
	make_gelu();
	make_softmax();
	make_linear();
	make_attention(37);
	make_attention(1);
	make_patch_embed();
	char cmd[4096];
	size_t at = (size_t)snprintf(
	    cmd, sizeof cmd, "cd %s && /usr/bin/python3 %s/tests/ref_batch.py",
	    test_dir, IPU_SOURCE_DIR);
	for (int i = 0; i < nref && at < sizeof cmd; i++)
		at += (size_t)snprintf(cmd + at, sizeof cmd - at, " '%s'",
		                       ref_lines[i]);
	if (at >= sizeof cmd || system(cmd) != 0) {
		fprintf(stderr, "the reference failed: %s\n", cmd);
		return -1;
	}
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layernorm),
	    cmocka_unit_test(test_gelu),
	    cmocka_unit_test(test_softmax),
	    cmocka_unit_test(test_linear),
	    cmocka_unit_test(test_attention),
	    cmocka_unit_test(test_attention_probe),
	    cmocka_unit_test(test_patch_embed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

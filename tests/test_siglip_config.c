/*
 * test_siglip_config.c - SigLIP configs (src/models/siglip_config.h):
 * the presets against model.md 2; config.json as Hugging Face writes it
 * (vision-only with every field, a full SiglipConfig whose vision_config
 * holds only model_type, as google/siglip-base-patch16-224 does, one with
 * no vision_config, [n, n] sizes) with transformers' defaults for absent
 * fields; every rejection with its message; write and read back, and no
 * overwrite.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/models/siglip_config.h"

static void
expect_config(const char *json, int d, int f, int l, int h, int img, int p)
{
	SiglipConfig c;
	Diag e;
	diag_clear(&e);
	if (siglip_config_parse(json, strlen(json), "config.json", &c, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(c.hidden, d);
	assert_int_equal(c.intermediate, f);
	assert_int_equal(c.layers, l);
	assert_int_equal(c.heads, h);
	assert_int_equal(c.image, img);
	assert_int_equal(c.patch, p);
	assert_int_equal(c.channels, 3);
	assert_true(c.ln_eps == 1e-6);
}

static void
expect_reject(const char *json, const char *fragment)
{
	SiglipConfig c;
	Diag e;
	diag_clear(&e);
	int rc = siglip_config_parse(json, strlen(json), "config.json", &c, &e);
	if (rc == 0 || !strstr(e.msg, fragment))
		fail_msg("expected \"%s\", got rc %d: %s", fragment, rc, e.msg);
	assert_string_equal(e.file, "config.json");
}

static void
test_presets(void **state)
{
	(void)state;
	SiglipConfig c;
	assert_int_equal(siglip_preset("so400m", &c), 0);
	/* model.md 0: 1152 / 4304 / 27 / 16, 384 / 14, 27x27 = 729 tokens */
	assert_int_equal(c.hidden, 1152);
	assert_int_equal(c.intermediate, 4304);
	assert_int_equal(c.layers, 27);
	assert_int_equal(c.heads, 16);
	assert_int_equal(siglip_grid(&c), 27);
	assert_int_equal(siglip_tokens(&c), 729);
	assert_int_equal(siglip_preset("base", &c), 0);
	assert_int_equal(c.hidden, 768);
	assert_int_equal(siglip_tokens(&c), 196);
	assert_int_equal(c.use_head, 1);
	assert_int_equal(siglip_preset("large", &c), -1);
}

static void
test_hf_configs(void **state)
{
	(void)state;
	/* so400m: a SiglipConfig with explicit vision fields (model.md 2) */
	expect_config("{\"architectures\": [\"SiglipModel\"], "
	              "\"model_type\": \"siglip\", \"torch_dtype\": "
	              "\"float32\", \"text_config\": {\"hidden_size\": 1152}, "
	              "\"vision_config\": {\"hidden_size\": 1152, "
	              "\"image_size\": 384, \"intermediate_size\": 4304, "
	              "\"model_type\": \"siglip_vision_model\", "
	              "\"num_attention_heads\": 16, \"num_hidden_layers\": 27, "
	              "\"patch_size\": 14}}",
	              1152, 4304, 27, 16, 384, 14);
	/* base-patch16-224: vision_config holds only model_type */
	expect_config("{\"model_type\": \"siglip\", \"vision_config\": "
	              "{\"model_type\": \"siglip_vision_model\"}}",
	              768, 3072, 12, 12, 224, 16);
	/* a SiglipConfig without vision_config: every default */
	expect_config("{\"model_type\": \"siglip\"}", 768, 3072, 12, 12, 224,
	              16);
	/* a vision-only config with the extra fields TinyLLaVA copies add */
	expect_config("{\"model_type\": \"siglip_vision_model\", "
	              "\"hidden_act\": \"gelu_pytorch_tanh\", "
	              "\"layer_norm_eps\": 1e-06, \"num_channels\": 3, "
	              "\"hidden_size\": 1152, \"intermediate_size\": 4304, "
	              "\"num_hidden_layers\": 27, \"num_attention_heads\": 16, "
	              "\"image_size\": [384, 384], \"patch_size\": 14, "
	              "\"attention_dropout\": 0.0}",
	              1152, 4304, 27, 16, 384, 14);
	SiglipConfig c;
	Diag e;
	const char *nohead = "{\"vision_use_head\": false, "
	                     "\"layer_norm_eps\": 1e-5}";
	assert_int_equal(
	    siglip_config_parse(nohead, strlen(nohead), "x", &c, &e), 0);
	assert_int_equal(c.use_head, 0);
	assert_true(c.ln_eps == 1e-5);
}

static void
test_rejections(void **state)
{
	(void)state;
	expect_reject("{\"hidden_size\": 1000, \"num_attention_heads\": 16}",
	              "hidden_size 1000 is not divisible by "
	              "num_attention_heads 16");
	expect_reject("{\"image_size\": 10, \"patch_size\": 14}",
	              "image_size 10 is smaller than patch_size 14");
	expect_reject("{\"image_size\": [384, 512]}",
	              "image_size: only square sizes");
	expect_reject("{\"hidden_act\": \"quick_gelu\"}",
	              "hidden_act \"quick_gelu\" is not supported (only "
	              "gelu_pytorch_tanh)");
	expect_reject("{\"hidden_size\": 1152.5}",
	              "hidden_size is not an integer");
	expect_reject("{\"num_hidden_layers\": \"27\"}",
	              "num_hidden_layers is not an integer");
	expect_reject("{\"num_hidden_layers\": 0}",
	              "num_hidden_layers is not an integer in 1..");
	expect_reject("{\"layer_norm_eps\": \"1e-6\"}",
	              "layer_norm_eps is not a number");
	expect_reject("{\"layer_norm_eps\": 0}",
	              "layer_norm_eps 0 is not in (0, 1)");
	expect_reject("{\"vision_use_head\": 1}",
	              "vision_use_head is not true or false");
	expect_reject("{\"model_type\": \"clip_vision_model\"}",
	              "model_type \"clip_vision_model\" is not siglip");
	expect_reject("{\"model_type\": \"siglip\", \"vision_config\": 3}",
	              "vision_config is not an object");
	expect_reject("{\"model_type\": \"siglip\", \"vision_config\": "
	              "{\"model_type\": \"siglip_text_model\"}}",
	              "vision_config.model_type is not siglip_vision_model");
	expect_reject("{\"hidden_size\": ", "not valid JSON");
	expect_reject("[768]", "not a JSON object");
}

static void
test_write_read(void **state)
{
	(void)state;
	char dir[] = "/tmp/ipu_test_cfg_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof path, "%s/config.json", dir);
	SiglipConfig c, back;
	assert_int_equal(siglip_preset("so400m", &c), 0);
	c.layers = 2;
	c.use_head = 0;
	Diag e;
	diag_clear(&e);
	assert_int_equal(siglip_config_write(path, &c, 0, &e), 0);
	assert_int_equal(siglip_config_read(path, &back, &e), 0);
	assert_true(back.hidden == 1152 && back.intermediate == 4304 &&
	            back.layers == 2 && back.heads == 16 &&
	            back.channels == 3 && back.image == 384 &&
	            back.patch == 14 && back.ln_eps == 1e-6 &&
	            back.use_head == 0);
	/* json.load from Debian's python sees the same fields */
	if (access("/usr/bin/python3", X_OK) == 0) {
		char cmd[512];
		snprintf(
		    cmd, sizeof cmd,
		    "/usr/bin/python3 -c \"import json; c = json.load(open("
		    "'%s')); assert c['hidden_size'] == 1152 and "
		    "c['num_hidden_layers'] == 2 and c['layer_norm_eps'] == "
		    "1e-6 and c['vision_use_head'] is False\"",
		    path);
		assert_int_equal(system(cmd), 0);
	}
	c.layers = 5;
	assert_int_not_equal(siglip_config_write(path, &c, 0, &e), 0);
	assert_non_null(strstr(e.msg, "refusing to overwrite"));
	assert_int_equal(siglip_config_read(path, &back, &e), 0);
	assert_int_equal(back.layers, 2);
	assert_int_equal(siglip_config_write(path, &c, 1, &e), 0);
	assert_int_equal(siglip_config_read(path, &back, &e), 0);
	assert_int_equal(back.layers, 5);
	c.heads = 7; /* invalid configs are not written */
	assert_int_not_equal(siglip_config_write(path, &c, 1, &e), 0);
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_presets),
	    cmocka_unit_test(test_hf_configs),
	    cmocka_unit_test(test_rejections),
	    cmocka_unit_test(test_write_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

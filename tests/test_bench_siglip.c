/*
 * test_bench_siglip.c - `ipu bench siglip` (docs/bench-siglip.md): its JSON
 * fields against figures worked out here from the config and the chip's
 * facts (the matmul MACs of a SigLIP tower by hand, images/s from the
 * clock, MFU from the MACs and the f16 peak), the cosine against the f64
 * reference, the predicted range around the prediction, and its files: a
 * temporary directory of its own, removed afterwards; the user's files
 * only read.
 */
#include "support.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/target/chip.h"

static char tmp_dir[128]; /* TMPDIR of the runs */

static int
setup(void **state)
{
	(void)state;
	if (test_dir_make("bench_siglip"))
		return -1;
	snprintf(tmp_dir, sizeof tmp_dir, "%s/tmp", test_dir);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "mkdir %s", tmp_dir);
	if (system(cmd))
		return -1;
	return setenv("TMPDIR", tmp_dir, 1);
}

static int
teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

/* Entries of a directory other than . and .. */
static int
entries(const char *path)
{
	DIR *d = opendir(path);
	assert_non_null(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* `ipu bench siglip ARGS --json`, which must succeed: the JSON object
 * it printed (other lines may be the reference's messages). */
static cJSON *
bench_json(const char *args)
{
	char out[8192], line[512];
	snprintf(line, sizeof line, "bench siglip %s --json", args);
	int rc = run_ipu(out, sizeof out, line);
	if (rc)
		fail_msg("exit %d:\n%s", rc, out);
	const char *at = strstr(out, "{\"bench\": \"siglip\"");
	if (!at)
		fail_msg("no JSON in:\n%s", out);
	cJSON *j = cJSON_Parse(at);
	assert_non_null(j);
	return j;
}

static double
num(const cJSON *o, const char *k)
{
	const cJSON *x = cJSON_GetObjectItem(o, k);
	if (!cJSON_IsNumber(x))
		fail_msg("%s is not a number", k);
	return x->valuedouble;
}

/* The matmul MACs of one image through a SigLIP tower, from the model's
 * definition (docs/siglip.md; model.md): the patch embedding, per layer
 * q, k, v, out, fc1, fc2 and the attention's two products, and the MAP
 * head (its probe's query, k and v of every token, one query's attention,
 * out, fc1, fc2). */
static uint64_t
tower_macs(uint64_t n, uint64_t p, uint64_t d, uint64_t f, uint64_t layers)
{
	uint64_t layer = n * (4 * d * d + 2 * d * f) + 2 * n * n * d;
	uint64_t head = 2 * d * d + 2 * n * d * d + 2 * n * d + 2 * d * f;
	return n * p * d + layers * layer + head;
}

/* d 64, 2 heads, 2 layers, 16 patches of 8 x 8 (test_siglip_model's) */
static const char tiny[] =
    "{\"model_type\": \"siglip_vision_model\", \"hidden_size\": 64, "
    "\"intermediate_size\": 128, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 2, \"image_size\": 32, \"patch_size\": 8}";

static void
test_tiny_check(void **state)
{
	(void)state;
	write_text("tiny.json", tiny);
	int before = entries(test_dir);
	cJSON *j = bench_json("--config tiny.json --dtype f16 --batch 2 "
	                      "--seed 3 --check --threads 2");
	const Chip *chip = chip_default();
	double cycles = num(j, "cycles"), pred = num(j, "predicted_cycles");
	double macs = num(j, "macs");
	print_message("tiny f16 batch 2: %.0f cycles (predicted %.0f, "
	              "%.0f .. %.0f), cosine %.9f\n",
	              cycles, pred, num(j, "cycles_fast"),
	              num(j, "cycles_slow"), num(j, "cosine"));
	assert_int_equal((int)num(j, "batch"), 2);
	assert_int_equal((int)num(j, "groups"), 1);
	assert_int_equal((int)num(j, "tokens"), 16);
	assert_true(macs == 2.0 * tower_macs(16, 3 * 8 * 8, 64, 128, 2));
	assert_true(cycles > 0);
	/* the cost model within 1% (docs/siglip.md: 0.1% on the towers) */
	assert_true(fabs(pred / cycles - 1) < 0.01);
	/* the range is this program's at the bounds (its plans kept) */
	assert_true(num(j, "cycles_fast") <= pred);
	assert_true(num(j, "cycles_slow") >= pred);
	assert_true(num(j, "cycles_fast") < num(j, "cycles_slow"));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "range_unfit")));
	double ips = 2 * chip->clock_hz / cycles;
	assert_true(fabs(num(j, "images_per_s") / ips - 1) < 1e-4);
	double mfu = macs / (cycles * chip->tiles * chip->macs_f16);
	assert_true(fabs(num(j, "mfu") / mfu - 1) < 1e-3);
	assert_true(num(j, "fullest_tile_bytes") > 0);
	assert_true(num(j, "fullest_tile_bytes") <=
	            chip->mem_end - chip->mem_base);
	assert_true(num(j, "compile_s") > 0);
	assert_true(num(j, "emulation_s") > 0);
	assert_true(num(j, "cosine") >= 0.999); /* f16's bar */
	assert_true(num(j, "cosine") <= 1.000001);
	cJSON_Delete(j);
	/* nothing new beside the config; the scratch directory gone */
	assert_int_equal(entries(test_dir), before);
	assert_int_equal(entries(tmp_dir), 0);
}

/* --micro-batch: 3 images as 2 runs of a batch-2 program (the last
 * padded with a copy of image 2): every image against the f64 reference,
 * the MACs of 3 images (not the padding's), images/s from 3 images over
 * the runs' cycles, the prediction twice the program's (within 1% of the
 * emulation, as one run's is). test_siglip_model's test_micro_batch has
 * the runs' rows and cycles against the program run apart. */
static void
test_micro_batch_check(void **state)
{
	(void)state;
	write_text("tiny.json", tiny);
	cJSON *j = bench_json("--config tiny.json --dtype f16 --batch 3 "
	                      "--micro-batch 2 --seed 3 --check --no-range "
	                      "--threads 2");
	const Chip *chip = chip_default();
	double cycles = num(j, "cycles"), pred = num(j, "predicted_cycles");
	print_message("tiny f16 3 images as runs of 2: %.0f cycles "
	              "(predicted %.0f), cosine %.9f\n",
	              cycles, pred, num(j, "cosine"));
	assert_int_equal((int)num(j, "batch"), 3);
	assert_int_equal((int)num(j, "micro_batch"), 2);
	assert_int_equal((int)num(j, "runs"), 2);
	assert_true(num(j, "macs") ==
	            3.0 * tower_macs(16, 3 * 8 * 8, 64, 128, 2));
	assert_true(cycles > 0);
	assert_true(fabs(pred / cycles - 1) < 0.01);
	assert_true(
	    fabs(num(j, "images_per_s") / (3 * chip->clock_hz / cycles) - 1) <
	    1e-4);
	assert_true(num(j, "load_s") > 0);
	assert_true(num(j, "cosine") >= 0.999);
	assert_true(num(j, "cosine") <= 1.000001);
	cJSON_Delete(j);
	/* without --micro-batch: one run of the whole batch */
	j = bench_json("--config tiny.json --dtype f16 --batch 2 "
	               "--compile-only --no-range");
	assert_int_equal((int)num(j, "micro_batch"), 2);
	assert_int_equal((int)num(j, "runs"), 1);
	cJSON_Delete(j);
	assert_int_equal(entries(tmp_dir), 0);
}

/* A preset cut to one layer, compiled only: no cycles, the prediction,
 * the MACs of base's layer and head at 196 tokens. Not under the
 * sanitizers (about 50 of the test's 80 CPU seconds there: base's layer
 * compiled at -O1 with ASan): its paths are taken there by the cases
 * named below; base's compile itself runs in the release build (here and
 * in test_siglip_real_base_f16_b2). */
static void
test_preset_compile_only(void **state)
{
	(void)state;
	SKIP_UNDER_SANITIZERS(
	    "test_signal_leaves_nothing (--preset base --compile-only up to "
	    "its checkpoint), test_micro_batch_check (--compile-only's JSON), "
	    "test_errors (--layers against the preset's)");
	cJSON *j = bench_json("--preset base --layers 1 --dtype f16 "
	                      "--compile-only --no-range");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "cycles")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "cycles_fast")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "range_unfit")));
	assert_true(num(j, "predicted_cycles") > 0);
	assert_int_equal((int)num(j, "layers"), 1);
	assert_int_equal((int)num(j, "tokens"), 196);
	assert_true(num(j, "macs") ==
	            (double)tower_macs(196, 3 * 16 * 16, 768, 3072, 1));
	assert_true(num(j, "images_per_s") == 0);
	cJSON_Delete(j);
	assert_int_equal(entries(tmp_dir), 0);
}

/* Refused arguments: the exit status and what the message names; the
 * last, a checkpoint that is not there, after the scratch directory was
 * made (it must be gone). */
static void
test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *args, *says;
		int status;
	} cases[] = {
	    {"--preset base --layers 13", "13 layers: the config has 12", 1},
	    {"--weights w.safetensors", "--preset NAME or --config C is needed",
	     2},
	    {"--config tiny.json --weights w.safetensors --layers 1",
	     "no layer count", 1},
	    {"--preset base --check --compile-only", "not with compile only",
	     1},
	    {"--preset huge", "unknown preset 'huge'", 1},
	    {"--preset base --dtype bf16", "--dtype wants f32, f16 or f8", 2},
	    {"--config tiny.json --weights missing.safetensors",
	     "missing.safetensors", 1},
	    {"--config tiny.json --batch 2 --micro-batch 3",
	     "micro-batch 3: 1 to the batch's 2 images", 1},
	    {"--config tiny.json --batch 2 --micro-batch 0",
	     "--micro-batch wants a number in 1..64", 2},
	    {"--config tiny.json --check --ref missing.py",
	     "missing.py: cannot read the reference script", 1},
	};
	write_text("tiny.json", tiny);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char out[8192], line[256];
		snprintf(line, sizeof line, "bench siglip %s", cases[i].args);
		assert_int_equal(run_ipu(out, sizeof out, line),
		                 cases[i].status);
		expect_in(out, cases[i].says);
	}
	assert_int_equal(entries(tmp_dir), 0);
}

/* Batch 2 as 2 groups in the layers' loop: one program, the whole
 * batch's MACs, the cost model within 1% as without groups. */
static void
test_tiny_groups(void **state)
{
	(void)state;
	write_text("tiny.json", tiny);
	cJSON *j = bench_json("--config tiny.json --dtype f16 --batch 2 "
	                      "--group 2 --seed 3 --no-range --threads 2");
	assert_int_equal((int)num(j, "groups"), 2);
	assert_int_equal((int)num(j, "runs"), 1);
	assert_true(num(j, "macs") ==
	            2.0 * tower_macs(16, 3 * 8 * 8, 64, 128, 2));
	double cycles = num(j, "cycles"), pred = num(j, "predicted_cycles");
	assert_true(cycles > 0);
	assert_true(fabs(pred / cycles - 1) < 0.01);
	cJSON_Delete(j);
	assert_int_equal(entries(tmp_dir), 0);
}

/* The only entry of tmp_dir with `file` in it, or 0: its path in dir. */
static int
scratch_with(const char *file, char *dir, size_t len)
{
	DIR *t = opendir(tmp_dir);
	assert_non_null(t);
	int found = 0;
	for (struct dirent *e; !found && (e = readdir(t));) {
		char path[1100];
		snprintf(dir, len, "%s/%s", tmp_dir, e->d_name);
		snprintf(path, sizeof path, "%s/%s", dir, file);
		found = e->d_name[0] != '.' && access(path, F_OK) == 0;
	}
	closedir(t);
	return found;
}

/* SIGTERM while the base tower's checkpoint (12 layers in f32, about
 * 350 MB) is being written: the process dies of the signal, as it would
 * without the cleanup, and its scratch directory is gone with the
 * checkpoint's temporary file in it. */
static void
test_signal_leaves_nothing(void **state)
{
	(void)state;
	char ipu[512], dir[512];
	snprintf(ipu, sizeof ipu, "%s/ipu", IPU_BINARY_DIR);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		execl(ipu, ipu, "bench", "siglip", "--preset", "base",
		      "--compile-only", "--no-range", (char *)NULL);
		_exit(127);
	}
	/* the config is written before the checkpoint */
	int seen = 0;
	for (int i = 0; i < 2000 && !seen; i++) {
		seen = scratch_with("config.json", dir, sizeof dir);
		if (!seen)
			nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
	}
	assert_true(seen);
	kill(pid, SIGTERM);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(entries(tmp_dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_preset_compile_only),
	    cmocka_unit_test(test_tiny_check),
	    cmocka_unit_test(test_micro_batch_check),
	    cmocka_unit_test(test_tiny_groups),
	    cmocka_unit_test(test_signal_leaves_nothing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * siglip.c - `ipu bench siglip`: the SigLIP vision tower measured end to
 * end through `ipu run siglip`'s own path (siglip_run): a preset or a
 * config, a seeded synthetic checkpoint and seeded pixel values written
 * to a temporary directory of our own (removed afterwards; the user's
 * files are only read), compiled without the package cache (compile_s is
 * a measurement), run once on the emulated chip, and with `check` compared
 * with the independent f64 reference (tools/siglip_ref.py, PyTorch).
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../models/siglip_gen.h"
#include "../models/siglip_graph.h"
#include "../util/npy.h"

extern char **environ;

/* tools/siglip_ref.py, carried in the binary (cmake/embed_text.cmake) */
extern const char bench_siglip_ref_py[];

/* The files the benchmark may make in its directory. */
static const char *const made[] = {"config.json", "weights.safetensors",
                                   "pixels.npy", "ref.npy", "siglip_ref.py"};
enum {
	MADE_CONFIG,
	MADE_WEIGHTS,
	MADE_PIXELS,
	MADE_REF,
	MADE_SCRIPT,
	MADE_COUNT
};

typedef struct {
	char dir[512];
	char path[MADE_COUNT][600];
} Scratch;

static int
scratch_open(Scratch *s, Diag *d)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(s->dir, sizeof s->dir, "%s/ipu-bench-siglip-XXXXXX",
	         tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(s->dir))
		return diag_set(d, IPU_EIO, s->dir, 0, 0,
		                "cannot create a temporary directory: %s",
		                strerror(errno));
	/* a run stopped by a signal leaves nothing behind (1.7 GB of
	 * checkpoint for So400m in f32); the writers' own temporaries are
	 * guarded by file_create_temp */
	file_guard(s->dir, 1);
	for (size_t i = 0; i < MADE_COUNT; i++) {
		snprintf(s->path[i], sizeof s->path[i], "%s/%s", s->dir,
		         made[i]);
		file_guard(s->path[i], 0);
	}
	return IPU_OK;
}

static void
scratch_remove(const Scratch *s)
{
	for (int i = 0; i < MADE_COUNT; i++) {
		unlink(s->path[i]);
		file_unguard(s->path[i]);
	}
	rmdir(s->dir);
	file_unguard(s->dir);
}

/* The model's config: the preset's or the file's, cut to cfg->layers. */
static int
model_config(const SiglipBenchConfig *cfg, SiglipConfig *c, Diag *d)
{
	if (!cfg->preset == !cfg->config)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "give one of a preset and a config");
	if (cfg->weights && (!cfg->config || cfg->layers))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "a checkpoint of one's own needs its config "
		                "and runs whole (no layer count)");
	if (cfg->preset && siglip_preset(cfg->preset, c))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "unknown preset '%s' (known: %s)", cfg->preset,
		                siglip_preset_names());
	int e = cfg->config ? siglip_config_read(cfg->config, c, d) : IPU_OK;
	if (!e && cfg->layers > c->layers)
		e = diag_set(d, IPU_EINVAL, NULL, 0, 0,
		             "%d layers: the config has %d", cfg->layers,
		             c->layers);
	if (!e && cfg->layers)
		c->layers = cfg->layers;
	return e;
}

/* Seeded pixel values [batch, channels, image, image] in [-1, 1), the
 * range SigLIP's preprocessing gives. */
static int
write_pixels(const SiglipConfig *c, int batch, uint64_t seed, const char *path,
             Diag *d)
{
	size_t n = (size_t)batch * c->channels * c->image * c->image;
	float *px = xmalloc(n * sizeof *px);
	uint64_t s = seed ^ 0x5049584c53ull; /* not the weights' streams */
	for (size_t i = 0; i < n; i++)
		px[i] = (float)bench_uniform(&s);
	NpyArray a = {.dtype = NPY_F32,
	              .rank = 4,
	              .shape = {(uint64_t)batch, (uint64_t)c->channels,
	                        (uint64_t)c->image, (uint64_t)c->image},
	              .data = px};
	int e = npy_write(path, &a, 0, d);
	free(px);
	return e;
}

/* tools/siglip_ref.py run in f64 on the same checkpoint and pixels; its
 * messages go to stderr, its summary nowhere. */
static int
run_reference(const char *script, const char *weights, const char *config,
              const Scratch *s, Diag *d)
{
	char *argv[] = {"/usr/bin/python3",
	                (char *)script,
	                "run",
	                "--weights",
	                (char *)weights,
	                "--config",
	                (char *)config,
	                "--pixels",
	                (char *)s->path[MADE_PIXELS],
	                "--dtype",
	                "f64",
	                "--out",
	                (char *)s->path[MADE_REF],
	                NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	int status = 0;
	if (e == 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	if (e)
		return diag_set(d, IPU_EIO, script, 0, 0,
		                "cannot run /usr/bin/python3 (Debian's python3 "
		                "with python3-torch): %s",
		                strerror(e));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return diag_set(d, IPU_EIO, script, 0, 0,
		                "the reference failed (exit status %d; its "
		                "message is above)",
		                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return IPU_OK;
}

/* The smallest cosine of an image's embedding against the reference's. */
static int
worst_cosine(const SiglipResult *r, const char *ref_path, double *cos, Diag *d)
{
	NpyArray ref;
	int e = npy_read(ref_path, &ref, d);
	if (e)
		return e;
	if (ref.dtype != NPY_F32 ||
	    npy_count(&ref) != (uint64_t)r->batch * r->d)
		e = diag_set(d, IPU_EINVAL, ref_path, 0, 0,
		             "the reference's embedding is not f32 [%d, %d]",
		             r->batch, r->d);
	const float *want = ref.data;
	*cos = 2;
	for (int b = 0; !e && b < r->batch; b++) {
		double dot = 0, na = 0, nb = 0;
		for (int k = 0; k < r->d; k++) {
			double x = r->embedding[(size_t)b * r->d + k],
			       y = want[(size_t)b * r->d + k];
			dot += x * y, na += x * x, nb += y * y;
		}
		*cos = fmin(*cos, na && nb ? dot / sqrt(na * nb) : 0);
	}
	npy_free(&ref);
	return e;
}

static int
measure(const SiglipBenchConfig *cfg, const SiglipConfig *c, const Scratch *s,
        SiglipBenchResult *res, Diag *d)
{
	int own = cfg->weights != NULL;
	const char *weights = own ? cfg->weights : s->path[MADE_WEIGHTS];
	const char *config = own ? cfg->config : s->path[MADE_CONFIG];
	int e = IPU_OK;
	if (!own)
		e = siglip_config_write(config, c, 0, d);
	if (!e && !own)
		e = siglip_gen(weights, c, ST_F32, cfg->seed, 0, 0, d);
	if (!e)
		e = write_pixels(c, cfg->batch, cfg->seed, s->path[MADE_PIXELS],
		                 d);
	if (e)
		return e;
	SiglipRun r = {.weights = weights,
	               .config = config,
	               .pixels = s->path[MADE_PIXELS],
	               .dtype = cfg->dtype,
	               .chip = cfg->chip,
	               .threads = cfg->threads,
	               .place_report = cfg->place_report,
	               .max_cycles = cfg->max_cycles,
	               .range = cfg->range ? SIGLIP_RANGE_PREDICT
	                                   : SIGLIP_RANGE_NONE,
	               .compile_only = cfg->compile_only,
	               .micro_batch = cfg->micro_batch,
	               .groups = cfg->groups,
	               .fold_ln = cfg->no_fold_ln ? -1 : 0,
	               .b_wrap = cfg->no_b_wrap ? -1 : 0};
	SiglipResult out;
	e = siglip_run(&r, &out, d);
	const Chip *chip = cfg->chip ? cfg->chip : chip_default();
	res->micro_batch = out.micro_batch;
	res->runs = out.runs;
	res->load_s = out.load_seconds;
	res->tiles = out.tiles;
	res->fullest_tile_bytes = out.peak_tile_bytes;
	res->macs = out.macs;
	res->cycles = out.cycles;
	res->predicted_cycles = out.predicted_cycles;
	res->cycles_fast = out.cycles_fast;
	res->cycles_slow = out.cycles_slow;
	memcpy(res->range_unfit, out.range_unfit, sizeof res->range_unfit);
	res->mfu = out.mfu;
	res->compile_s = out.compile_ms / 1e3;
	res->emulation_s = out.host_seconds;
	if (out.cycles)
		res->images_per_s =
		    cfg->batch * chip->clock_hz / (double)out.cycles;
	if (!e && cfg->check && !cfg->ref)
		e = write_file(s->path[MADE_SCRIPT], bench_siglip_ref_py,
		               strlen(bench_siglip_ref_py), d);
	if (!e && cfg->check)
		e = run_reference(cfg->ref ? cfg->ref : s->path[MADE_SCRIPT],
		                  weights, config, s, d);
	if (!e && cfg->check)
		e = worst_cosine(&out, s->path[MADE_REF], &res->cosine, d);
	siglip_result_free(&out);
	return e;
}

int
bench_siglip(const SiglipBenchConfig *cfg, SiglipBenchResult *res, Diag *d)
{
	memset(res, 0, sizeof *res);
	res->cosine = -2;
	res->dtype = cfg->dtype;
	res->batch = cfg->batch;
	SiglipConfig c;
	int e = model_config(cfg, &c, d);
	if (e)
		return e;
	if (cfg->batch < 1 || cfg->batch > 64)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "batch %d: 1 to 64 images", cfg->batch);
	if (cfg->micro_batch < 0 || cfg->micro_batch > cfg->batch)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "micro-batch %d: 1 to the batch's %d image%s",
		                cfg->micro_batch, cfg->batch,
		                cfg->batch > 1 ? "s" : "");
	if (cfg->check && cfg->compile_only)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "a check needs the run: not with compile only");
	if (cfg->ref && access(cfg->ref, R_OK))
		return diag_set(d, IPU_EIO, cfg->ref, 0, 0,
		                "cannot read the reference script: %s",
		                strerror(errno));
	snprintf(res->config_name, sizeof res->config_name, "%s",
	         cfg->preset ? cfg->preset : "config");
	res->layers = c.layers;
	res->tokens = siglip_tokens(&c);
	res->hidden = c.hidden;
	Scratch s;
	if ((e = scratch_open(&s, d)))
		return e;
	e = measure(cfg, &c, &s, res, d);
	scratch_remove(&s);
	return e;
}

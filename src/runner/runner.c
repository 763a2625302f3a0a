/*
 * runner.c - compiled graphs on the emulated device (runner.h): loading a
 * package, tensors as float values, and `ipu run graph`.
 */
#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../rt/rt.h"
#include "../util/fp.h"
#include "../util/npy.h"

/* ---- the package cache ---------------------------------------------- */

static uint64_t self_hash;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

/* This executable's bytes (0 if unreadable: no cache). */
static void
hash_self(void)
{
	uint8_t *bytes;
	size_t len;
	Diag d;
	if (read_file("/proc/self/exe", &bytes, &len, &d) == IPU_OK) {
		self_hash = fnv1a64(FNV1A64_INIT, bytes, len) | 1;
		free(bytes);
	}
}

char *
runner_default_cache(void)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	char buf[4096];
	if (x && *x)
		snprintf(buf, sizeof buf, "%s/ipu", x);
	else if (h && *h)
		snprintf(buf, sizeof buf, "%s/.cache/ipu", h);
	else
		return NULL;
	return xstrdup(buf);
}

/* mkdir -p; 0 on success. */
static int
make_dirs(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1;; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;
		*p = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		if (!c)
			return 0;
		*p = c;
	}
}

/* The entry's path without its extension, or 0 if there is no cache.
 * planned_on: the chip whose compile chose the plans of a range's program
 * (runner_build_at), NULL for a compile of its own. */
static int
cache_path(const Graph *g, const Chip *chip, const Chip *planned_on,
           const CompileOptions *o, const char *dir, char *out, size_t len)
{
	pthread_once(&self_once, hash_self);
	if (!dir || !self_hash || strlen(dir) + 24 > len)
		return 0;
	char *text = graph_print_str(g);
	uint64_t h = fnv1a64(FNV1A64_INIT, text, strlen(text) + 1);
	h = fnv1a64(h, chip->name, strlen(chip->name) + 1);
	/* the profile's values: the exchange schedule depends on them */
	h = fnv1a64(h, chip->timing->v, sizeof chip->timing->v);
	h = fnv1a64(h, &self_hash, sizeof self_hash);
	/* the options that change the program */
	const uint32_t opts[] = {o->tiles, o->no_gemm_overlap, o->no_b_under,
	                         o->no_a_direct, o->no_b_wrap};
	h = fnv1a64(h, opts, sizeof opts);
	if (planned_on)
		h = fnv1a64(h, planned_on->timing->v,
		            sizeof planned_on->timing->v);
	free(text);
	snprintf(out, len, "%s/%016" PRIx64, dir, h);
	return 1;
}

/* The entry: its package and the sidecar with the report's numbers. */
static int
cache_read(const char *base, const Chip *chip, Package **pk, RunnerBuild *b)
{
	char path[4224];
	unsigned long long peak;
	double ms;
	snprintf(path, sizeof path, "%s.txt", base);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok =
	    fscanf(f, "peak_tile_bytes %llu compile_ms %lf", &peak, &ms) == 2;
	fclose(f);
	snprintf(path, sizeof path, "%s.pkg", base);
	Diag d;
	if (!ok || pkg_read_file(path, pk, &d))
		return 0;
	if ((*pk)->chip != chip->base) {
		pkg_free(*pk);
		*pk = NULL;
		return 0;
	}
	*b = (RunnerBuild){.predicted_cycles = (*pk)->total_cycles,
	                   .compile_ms = ms,
	                   .tiles = (*pk)->tiles,
	                   .peak_tile_bytes = (uint32_t)peak,
	                   .cached = 1};
	utimensat(AT_FDCWD, path, NULL, 0); /* recently used: kept longer */
	return 1;
}

/* An entry's package: 16 hex digits and ".pkg". */
static int
entry_name(const char *name)
{
	size_t n = strlen(name);
	if (n != 20 || strcmp(name + 16, ".pkg"))
		return 0;
	for (int i = 0; i < 16; i++)
		if (!strchr("0123456789abcdef", name[i]))
			return 0;
	return 1;
}

/* At most RUNNER_CACHE_KEEP entries stay, the most recently written or
 * read (a package of a SigLIP tower is 100 MB or more, and every rebuilt
 * `ipu` makes new names). */
static void
cache_trim(const char *dir)
{
	DIR *dh = opendir(dir);
	if (!dh)
		return;
	struct {
		char name[24];
		struct timespec t;
	} e[64];
	int n = 0;
	struct dirent *de;
	char path[4224];
	while ((de = readdir(dh)) && n < 64) {
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (entry_name(de->d_name) && !stat(path, &st)) {
			memcpy(e[n].name, de->d_name, 21); /* entry_name: 20 */
			e[n++].t = st.st_mtim;
		}
	}
	closedir(dh);
	while (n > RUNNER_CACHE_KEEP) {
		int old = 0;
		for (int i = 1; i < n; i++)
			if (e[i].t.tv_sec < e[old].t.tv_sec ||
			    (e[i].t.tv_sec == e[old].t.tv_sec &&
			     e[i].t.tv_nsec < e[old].t.tv_nsec))
				old = i;
		snprintf(path, sizeof path, "%s/%.16s.txt", dir, e[old].name);
		remove(path); /* the sidecar first: the entry is then invalid */
		snprintf(path, sizeof path, "%s/%s", dir, e[old].name);
		remove(path);
		e[old] = e[--n];
	}
}

/* Package first, then the sidecar that makes the entry valid; both
 * replaced atomically (a reader never sees half a file). */
static void
cache_write(const char *dir, const char *base, const Package *pk,
            const RunnerBuild *b)
{
	char path[4224], text[128];
	Diag d;
	if (make_dirs(dir))
		return;
	snprintf(path, sizeof path, "%s.pkg", base);
	if (pkg_write_file(pk, path, &d))
		return;
	int n =
	    snprintf(text, sizeof text, "peak_tile_bytes %u compile_ms %.3f\n",
	             b->peak_tile_bytes, b->compile_ms);
	snprintf(path, sizeof path, "%s.txt", base);
	write_file(path, text, (size_t)n, &d);
	cache_trim(dir);
}

/* g compiled with co, into the cache entry base (NULL: none). */
static int
compile_to(const Graph *g, const CompileOptions *co, const char *cache_dir,
           const char *base, FILE *report, const RunnerObserver *obs,
           Package **pk, RunnerBuild *b, Diag *d)
{
	CompileReport rep = {0};
	int e = compile_graph(g, co, pk, &rep, d);
	if (e && rep.place.nover && report)
		place_report_print(&rep.place, report);
	if (e && rep.layout && obs && obs->unfit)
		obs->unfit(obs->ctx, &rep);
	b->predicted_cycles = rep.predicted_cycles;
	b->compile_ms = rep.compile_ms;
	b->tiles = rep.tiles_used;
	b->peak_tile_bytes = rep.peak_tile_bytes;
	b->plan = rep.kept_plan;
	rep.kept_plan = NULL;
	compile_report_free(&rep);
	if (!e && base)
		cache_write(cache_dir, base, *pk, b);
	return e;
}

int
runner_build(const Graph *g, const Chip *chip, const CompileOptions *opt,
             const char *cache_dir, FILE *report, const RunnerObserver *obs,
             Package **pk, RunnerBuild *b, Diag *d)
{
	memset(b, 0, sizeof *b);
	CompileOptions co = opt ? *opt : (CompileOptions){0};
	co.chip = chip;
	co.plan = NULL;
	char base[4200];
	int cache =
	    cache_path(g, chip, NULL, &co, cache_dir, base, sizeof base);
	if (cache && cache_read(base, chip, pk, b))
		return IPU_OK;
	return compile_to(g, &co, cache_dir, cache ? base : NULL, report, obs,
	                  pk, b, d);
}

int
runner_build_at(const Graph *g, const Chip *chip, const CompileOptions *opt,
                Plan **plan, const Chip *at, const char *cache_dir,
                Package **pk, RunnerBuild *b, Diag *d)
{
	memset(b, 0, sizeof *b);
	CompileOptions co = opt ? *opt : (CompileOptions){0};
	co.chip = at;
	co.keep_plan = 0;
	co.plan = NULL;
	char base[4200];
	int cache = cache_path(g, at, chip, &co, cache_dir, base, sizeof base);
	if (cache && cache_read(base, at, pk, b))
		return IPU_OK;
	if (!*plan) { /* runner_build's package came from the cache */
		CompileOptions pc = co;
		pc.chip = chip;
		pc.keep_plan = 1;
		Package *own = NULL;
		RunnerBuild ob = {0};
		int e =
		    compile_to(g, &pc, NULL, NULL, NULL, NULL, &own, &ob, d);
		pkg_free(own);
		*plan = ob.plan;
		if (e)
			return e;
	}
	co.plan = *plan;
	return compile_to(g, &co, cache_dir, cache ? base : NULL, NULL, NULL,
	                  pk, b, d);
}

/* ---- devices and tensors ---------------------------------------------- */

int
runner_open(const Chip *chip, Package *pk, int threads,
            const RunnerObserver *obs, ipu_device **dev, Diag *d)
{
	return runner_open_on(NULL, chip, pk, threads, obs, dev, d);
}

int
runner_open_on(const RunnerDevice *on, const Chip *chip, Package *pk,
               int threads, const RunnerObserver *obs, ipu_device **dev,
               Diag *d)
{
	*dev = NULL;
	int e = IPU_OK;
	char name[96 + TIMING_SPEC_MAX + 2 * 256];
	int n;
	if (on && (on->model || on->hw)) {
		if (strcmp(chip->timing->spec, "nominal") ||
		    chip->arch != ARCH_IPU21) {
			pkg_free(pk);
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "%s runs the C600 at the nominal "
			                "timing only",
			                on->hw ? "a card" : "the card model");
		}
		if (on->hw)
			n = snprintf(name, sizeof name, "hw:%u:tiles=%u",
			             on->card, pk->tiles);
		else
			n = snprintf(name, sizeof name, "model:%s:tiles=%u",
			             chip->name, pk->tiles);
		if (on->config)
			n += snprintf(name + n, sizeof name - (size_t)n,
			              ":config=%s", on->config);
		if (on->log)
			snprintf(name + n, sizeof name - (size_t)n, ":log=%s",
			         on->log);
	} else {
		n = snprintf(name, sizeof name, "sim:%s:tiles=%u:threads=%d",
		             chip->name, pk->tiles, threads > 0 ? threads : 1);
		if (strcmp(chip->timing->spec, "nominal"))
			snprintf(name + n, sizeof name - (size_t)n,
			         ":timing=%s", chip->timing->spec);
	}
	ipu_error err;
	ipu_device *v = ipu_open(name, &err);
	if (!v) {
		pkg_free(pk);
		e = diag_set(d, IPU_EINVAL, NULL, 0, 0, "open %s: %s", name,
		             err.msg);
	} else if (rt_load_package(v, pk, &err)) {
		e = diag_set(d, IPU_EINVAL, NULL, 0, 0, "load: %s", err.msg);
	}
	if (!e && obs && obs->loaded)
		e = obs->loaded(obs->ctx, v, pk, d);
	if (e && v)
		ipu_close(v);
	else
		*dev = v;
	return e;
}

int
runner_device_parse(char *spec, RunnerDevice *on, const Chip **chip, Diag *d)
{
	static const char forms[] =
	    "sim, sim:CHIP, model:c600 or hw:N, the last two optionally "
	    "with :config=FILE and :log=FILE";
	memset(on, 0, sizeof *on);
	char *rest = strchr(spec, ':');
	if (rest)
		*rest++ = 0;
	if (!strcmp(spec, "sim")) {
		const Chip *c = rest ? chip_by_name(rest) : NULL;
		if (rest && !c)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "--device sim:%s: unknown chip (known: "
			                "%s)",
			                rest, chip_names());
		if (c && chip)
			*chip = c;
		return IPU_OK;
	}
	on->model = !strcmp(spec, "model");
	on->hw = !strcmp(spec, "hw");
	if (!on->model && !on->hw)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "--device %s: expected %s", spec, forms);
	char *field = rest ? rest : NULL;
	if (field && (rest = strchr(field, ':')))
		*rest++ = 0;
	if (on->model && field && strcmp(field, "c600"))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "--device model:%s: the card model is of the "
		                "C600 only (model:c600)",
		                field);
	if (on->hw) {
		char *end;
		unsigned long n = field && *field >= '0' && *field <= '9'
		                      ? strtoul(field, &end, 10)
		                      : 256;
		if (n > 255 || *end)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "--device hw:%s: expected hw:N, N the "
			                "number of /dev/ipuN (0..255)",
			                field ? field : "");
		on->card = (uint32_t)n;
	}
	for (char *opt = rest; opt; opt = rest) {
		if ((rest = strchr(opt, ':')))
			*rest++ = 0;
		const char **file = !strncmp(opt, "config=", 7) ? &on->config
		                    : !strncmp(opt, "log=", 4)  ? &on->log
		                                                : NULL;
		if (!file || !strchr(opt, '=')[1])
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "--device: '%s' is not :config=FILE or "
			                ":log=FILE (expected %s)",
			                opt, forms);
		*file = strchr(opt, '=') + 1;
	}
	return IPU_OK;
}

static uint64_t
cycle_limit(uint64_t predicted)
{
	if (predicted >
	    (UINT64_MAX - RUNNER_CYCLES_SLACK) / RUNNER_CYCLES_FACTOR)
		return UINT64_MAX;
	return RUNNER_CYCLES_FACTOR * predicted + RUNNER_CYCLES_SLACK;
}

static struct {
	RunnerProgressFn fn;
	void *ctx;
	uint64_t predicted; /* of the run in progress */
} progress;

void
runner_set_progress(RunnerProgressFn fn, void *ctx)
{
	progress.fn = fn;
	progress.ctx = ctx;
}

static void
progress_step(void *ctx, uint64_t cycles)
{
	(void)ctx;
	progress.fn(progress.ctx, cycles, progress.predicted, 0);
}

int
runner_run(ipu_device *dev, uint64_t max_cycles, uint64_t predicted,
           const RunnerObserver *obs, uint64_t *cycles, double *host_seconds,
           Diag *d)
{
	ipu_error err;
	uint64_t limit = max_cycles ? max_cycles : cycle_limit(predicted);
	progress.predicted = predicted;
	ipu_set_progress(dev, progress.fn ? progress_step : NULL, NULL, &err);
	double t0 = monotonic_seconds();
	if (progress.fn)
		progress.fn(progress.ctx, 0, predicted, 0);
	int e = IPU_OK, kind = ipu_run(dev, limit, &err);
	if (progress.fn)
		progress.fn(progress.ctx, ipu_cycles(dev), predicted, 1);
	if (kind == IPU_ERR_TIMEOUT && max_cycles)
		e = diag_set(d, IPU_EFAULT, NULL, 0, 0,
		             "run: stopped at the limit of --max-cycles %llu "
		             "(%s); a longer run needs a larger --max-cycles",
		             (unsigned long long)limit, err.msg);
	else if (kind == IPU_ERR_TIMEOUT)
		e = diag_set(
		    d, IPU_EFAULT, NULL, 0, 0,
		    "run: stopped at the default limit of %llu cycles, "
		    "%d x the %llu predicted + %d (%s): the program "
		    "seems not to end; if it should run longer, give "
		    "--max-cycles N",
		    (unsigned long long)limit, RUNNER_CYCLES_FACTOR,
		    (unsigned long long)predicted, RUNNER_CYCLES_SLACK,
		    err.msg);
	else if (kind)
		e = diag_set(d, IPU_EFAULT, NULL, 0, 0, "run: %s", err.msg);
	*host_seconds = monotonic_seconds() - t0;
	*cycles = ipu_cycles(dev);
	if (obs && obs->ran)
		obs->ran(obs->ctx, dev, e, &err, d);
	return e;
}

size_t
runner_encode(ElemType e, const float *v, size_t n, uint8_t *out,
              size_t *first_over)
{
	size_t over = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned fl = 0;
		if (e.dtype == DT_F32) {
			memcpy(out + 4 * i, &v[i], 4);
		} else if (e.dtype == DT_F16) {
			uint16_t h = fp_f32_to_f16_rne(fp_float_f32(v[i]), &fl);
			memcpy(out + 2 * i, &h, 2);
		} else {
			out[i] =
			    fp_f64_to_f8_nr(v[i], dtype_fp8_format(e.dtype),
			                    e.scale, FP_OV_SAT, &fl);
		}
		if ((fl & FP_FLAG_OFLO) && !over++ && first_over)
			*first_over = i;
	}
	return over;
}

static void
decode_values(ElemType e, const uint8_t *in, size_t n, float *out)
{
	for (size_t i = 0; i < n; i++) {
		if (e.dtype == DT_F32) {
			memcpy(&out[i], in + 4 * i, 4);
		} else if (e.dtype == DT_F16) {
			uint16_t h;
			memcpy(&h, in + 2 * i, 2);
			out[i] = (float)fp_f16_to_f64(h);
		} else {
			out[i] = (float)fp_f8_to_f64(
			    in[i], dtype_fp8_format(e.dtype), e.scale);
		}
	}
}

int
runner_write(ipu_device *dev, const Tensor *t, const float *v, Diag *d)
{
	size_t n = (size_t)shape_elems(&t->shape),
	       es = (size_t)dtype_size(t->elem.dtype);
	uint8_t *bits = xmalloc(n * es);
	runner_encode(t->elem, v, n, bits, NULL);
	ipu_error err;
	int e = IPU_OK;
	if (ipu_write_tensor(dev, t->name, bits, n * es, &err))
		e = diag_set(d, IPU_EINVAL, NULL, 0, 0, "write %s: %s", t->name,
		             err.msg);
	free(bits);
	return e;
}

int
runner_read(ipu_device *dev, const Tensor *t, float *v, Diag *d)
{
	size_t n = (size_t)shape_elems(&t->shape),
	       es = (size_t)dtype_size(t->elem.dtype);
	uint8_t *bits = xmalloc(n * es);
	ipu_error err;
	int e = IPU_OK;
	if (ipu_read_tensor(dev, t->name, bits, n * es, &err))
		e = diag_set(d, IPU_EFAULT, NULL, 0, 0, "read %s: %s", t->name,
		             err.msg);
	else
		decode_values(t->elem, bits, n, v);
	free(bits);
	return e;
}

int
runner_load_graph(const char *path, Graph **g, Diag *d)
{
	uint8_t *text;
	size_t len;
	int e = read_file(path, &text, &len, d);
	if (e)
		return e;
	Diag errs[GRAPH_MAX_ERRORS];
	int nerr = 0;
	e = graph_parse((const char *)text, len, path, g, errs, &nerr);
	if (e)
		*d = errs[0];
	free(text);
	return e;
}

double
runner_mfu(const Graph *g, const Chip *chip, uint64_t cycles, uint64_t *macs)
{
	double ideal = 0;
	uint64_t total = 0;
	for (int i = 0; i < g->nops; i++) {
		const Op *op = &g->ops[i];
		if (op->kind != OP_MATMUL)
			continue;
		uint64_t m = (uint64_t)graph_op_work(g, op).macs;
		uint32_t peak = chip_peak_macs(
		    chip, graph_tensor(g, op->in[0])->elem.dtype);
		total += m;
		ideal += peak ? (double)m / peak : 0;
	}
	if (macs)
		*macs = total;
	return cycles ? ideal / ((double)cycles * chip->tiles) : 0;
}

/* The tensor a --in or --out binding names, checked for its role. */
static int
bound_tensor(const Graph *g, const RunnerFile *f, int output, Diag *d)
{
	int32_t id = graph_find(g, f->tensor);
	if (id < 0)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "the graph has no tensor %s (%s=%s)", f->tensor,
		                f->tensor, f->path);
	const Tensor *t = graph_tensor(g, id);
	if (output && t->role != ROLE_OUTPUT)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s is not an output of the graph (the graph "
		                "needs a line `output %s`)",
		                t->name, t->name);
	if (!output && t->producer >= 0)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s is computed by the graph, not an input or "
		                "weight",
		                t->name);
	return IPU_OK;
}

int
runner_npy_values(const Tensor *t, const RunnerFile *f, float **v, Diag *d)
{
	NpyArray a;
	int e = npy_read(f->path, &a, d);
	if (e)
		return e;
	int same = a.rank == t->shape.rank;
	for (int i = 0; same && i < a.rank; i++)
		same = a.shape[i] == (uint64_t)t->shape.dim[i];
	char want[96];
	shape_format(&t->shape, want, sizeof want);
	if (!same || (a.dtype != NPY_F32 && a.dtype != NPY_F16)) {
		npy_free(&a);
		return diag_set(d, IPU_EINVAL, f->path, 0, 0,
		                "tensor %s needs float32 or float16 %s",
		                t->name, want);
	}
	size_t n = (size_t)npy_count(&a);
	*v = xmalloc(n * sizeof **v);
	decode_values((ElemType){a.dtype == NPY_F32 ? DT_F32 : DT_F16, 0},
	              a.data, n, *v);
	npy_free(&a);
	return IPU_OK;
}

/* Names, roles and files checked before anything is compiled or run. */
static int
check_bindings(const RunnerGraphRun *r, const Graph *g, Diag *d)
{
	int e = IPU_OK;
	for (int i = 0; !e && i < r->nin; i++) {
		e = bound_tensor(g, &r->in[i], 0, d);
		for (int j = 0; !e && j < i; j++)
			if (!strcmp(r->in[i].tensor, r->in[j].tensor))
				e = diag_set(d, IPU_EINVAL, NULL, 0, 0,
				             "%s is given twice (--in)",
				             r->in[i].tensor);
	}
	for (int i = 0; !e && i < r->nout; i++)
		e = bound_tensor(g, &r->out[i], 1, d);
	for (int32_t id = 0; !e && id < g->ntensors; id++) {
		const Tensor *t = graph_tensor(g, id);
		int given = t->producer >= 0;
		for (int i = 0; !given && i < r->nin; i++)
			given = !strcmp(r->in[i].tensor, t->name);
		char shape[96], elem[32];
		shape_format(&t->shape, shape, sizeof shape);
		elem_format(t->elem, elem, sizeof elem);
		if (!given)
			e = diag_set(d, IPU_EINVAL, NULL, 0, 0,
			             "%s %s %s %s has no values: give --in "
			             "%s=FILE.npy",
			             t->role == ROLE_WEIGHT ? "weight"
			                                    : "input",
			             t->name, elem, shape, t->name);
	}
	return e;
}

/* Values the element type cannot hold (beyond f16's 65504, or an f8
 * format's largest at the tensor's scale): the device would get inf or the
 * largest value. Said in res->warning, the first such tensor in full. */
static void
check_range(const Tensor *t, const RunnerFile *f, const float *v,
            RunnerResult *res)
{
	size_t n = (size_t)shape_elems(&t->shape), first = 0;
	uint8_t *bits = xmalloc(n * (size_t)dtype_size(t->elem.dtype));
	size_t over = runner_encode(t->elem, v, n, bits, &first);
	free(bits);
	if (!over)
		return;
	char elem[32];
	elem_format(t->elem, elem, sizeof elem);
	if (!res->warning[0])
		snprintf(res->warning, sizeof res->warning,
		         "%s: %zu of the %zu values of %s (%s) are beyond "
		         "what %s holds and become %s (the first: %g, at "
		         "index %zu)",
		         f->path, over, n, t->name, elem, elem,
		         t->elem.dtype == DT_F16 ? "infinite"
		                                 : "its largest value",
		         (double)v[first], first);
	res->nwarned++;
}

/* Every --in file read and checked (before anything is compiled): v[i]
 * the values of r->in[i]. */
static int
read_inputs(const RunnerGraphRun *r, const Graph *g, float **v,
            RunnerResult *res, Diag *d)
{
	int e = IPU_OK;
	for (int i = 0; !e && i < r->nin; i++) {
		const Tensor *t =
		    graph_tensor(g, graph_find(g, r->in[i].tensor));
		e = runner_npy_values(t, &r->in[i], &v[i], d);
		if (!e)
			check_range(t, &r->in[i], v[i], res);
	}
	return e;
}

static int
write_inputs(const RunnerGraphRun *r, const Graph *g, float **v,
             ipu_device *dev, Diag *d)
{
	int e = IPU_OK;
	for (int i = 0; !e && i < r->nin; i++) {
		const Tensor *t =
		    graph_tensor(g, graph_find(g, r->in[i].tensor));
		ipu_tensor_desc desc;
		ipu_error none;
		/* an input no op reads is not in the package */
		if (!ipu_tensor_info(dev, t->name, &desc, &none))
			e = runner_write(dev, t, v[i], d);
	}
	return e;
}

static int
write_outputs(const RunnerGraphRun *r, const Graph *g, ipu_device *dev, Diag *d)
{
	int e = IPU_OK;
	for (int i = 0; !e && i < r->nout; i++) {
		const Tensor *t =
		    graph_tensor(g, graph_find(g, r->out[i].tensor));
		NpyArray a = {.dtype = NPY_F32, .rank = t->shape.rank};
		for (int k = 0; k < a.rank; k++)
			a.shape[k] = (uint64_t)t->shape.dim[k];
		float *v = xmalloc((size_t)shape_elems(&t->shape) * sizeof *v);
		e = runner_read(dev, t, v, d);
		a.data = v;
		if (!e)
			e = npy_write(r->out[i].path, &a, r->force, d);
		free(v);
	}
	return e;
}

int
runner_graph_file(const RunnerGraphRun *r, RunnerResult *res, Diag *d)
{
	memset(res, 0, sizeof *res);
	const Chip *chip = r->chip ? r->chip : chip_default();
	Graph *g = NULL;
	int e = runner_load_graph(r->graph, &g, d);
	if (!e)
		e = check_bindings(r, g, d);
	float **v = xcalloc((size_t)r->nin + 1, sizeof *v);
	if (!e)
		e = read_inputs(r, g, v, res, d);
	Package *pk = NULL;
	if (!e)
		e = runner_build(g, chip, NULL, r->cache_dir, r->place_report,
		                 r->observe, &pk, &res->build, d);
	ipu_device *dev = NULL;
	if (!e)
		e = runner_open_on(r->device, chip, pk, r->threads, r->observe,
		                   &dev, d); /* takes pk */
	else
		pkg_free(pk);
	if (!e)
		e = write_inputs(r, g, v, dev, d);
	if (!e)
		e = runner_run(dev, r->max_cycles, res->build.predicted_cycles,
		               r->observe, &res->cycles, &res->host_seconds, d);
	if (!e)
		res->mfu = runner_mfu(g, chip, res->cycles, NULL);
	if (!e)
		e = write_outputs(r, g, dev, d);
	if (dev)
		ipu_close(dev);
	for (int i = 0; i < r->nin; i++)
		free(v[i]);
	free(v);
	graph_free(g);
	return e;
}

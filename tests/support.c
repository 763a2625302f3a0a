/* support.c - helpers shared by the unit tests. */
#define _DEFAULT_SOURCE /* mincore */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../src/graph/graph.h"
#include "../src/util/npy.h"

uint32_t
enc(const char *variant, int nops, ...)
{
	Insn in = {.row = (int16_t)isa_row_by_variant(variant),
	           .nops = (uint8_t)nops};
	if (in.row < 0)
		fail_msg("no variant %s", variant);
	va_list ap;
	va_start(ap, nops);
	for (int i = 0; i < nops; i++)
		in.op[i] = va_arg(ap, int32_t);
	va_end(ap);
	uint32_t w;
	int r = isa_encode(&in, &w);
	if (r)
		fail_msg("%s: operand %d does not fit", variant, -1 - r);
	return w;
}

Graph *
graph_of_text(const char *text)
{
	Graph *g;
	Diag errs[GRAPH_MAX_ERRORS];
	int nerr;
	if (graph_parse(text, strlen(text), "test.graph", &g, errs, &nerr))
		fail_msg("parse: %s", errs[0].msg);
	return g;
}

Tile *
run_words(const uint32_t *words, int n, int worker, uint32_t vbase,
          uint64_t max_cycles, RunStatus *status)
{
	const Chip *c = chip_default();
	Tile *t = tile_new(c, 0);
	assert_int_equal(tile_write(t, c->mem_base, words, (uint32_t)n * 4), 0);
	if (worker >= 0)
		tile_start_worker(t, worker, c->mem_base, vbase);
	else
		tile_start(t, c->mem_base);
	*status = tile_run(t, max_cycles);
	return t;
}

const Chip *
profile_chip(TimingBound b)
{
	Timing t;
	timing_profile(&t, b);
	return chip_timed(chip_default(), &t);
}

Tile *
worker_tile(const uint32_t *words, int n)
{
	const Chip *c = chip_default();
	Tile *t = tile_new(c, 0);
	uint32_t prog[64];
	assert_true(n < 64);
	memcpy(prog, words, 4u * (uint32_t)n);
	prog[n] = enc("exitz_mmmn", 1, 15);
	assert_int_equal(tile_write(t, c->mem_base, prog, 4u * (n + 1)), 0);
	assert_int_equal(tile_start_worker(t, 0, c->mem_base, 0), 0);
	for (int i = 0; i < 16; i++)
		t->ctx[1].m[i] = t->ctx[1].a[i] = POISON;
	return t;
}

/*
 * The exchange route timing of docs/chip.md ("Route latency"), written
 * again from the logical id and per direction, as the docs state it, not
 * as target/route.c computes it: a tile's block is pair / 23 (23 rows,
 * mirrored in odd blocks), its column group block / 2, its parity block &
 * 1; groups 0..7 are side 0 at spine positions 0..7, groups 15..8 side 1
 * at positions 0..7.
 */
typedef struct {
	int row, side, pos, lane, parity;
} ModelTile;

static ModelTile
model_tile(uint32_t logical)
{
	int pair = (int)logical / 2, block = pair / 23, row = pair % 23;
	int group = block / 2;
	ModelTile t = {.row = block & 1 ? 22 - row : row,
	               .side = group >= 8,
	               .lane = (int)logical & 1,
	               .parity = block & 1};
	t.pos = t.side ? 15 - group : group;
	return t;
}

int
model_lead(uint32_t src, uint32_t dst)
{
	ModelTile s = model_tile(src), d = model_tile(dst);
	int shift = s.side != s.parity; /* s enters a position further on */
	int tap = d.lane ? (d.parity == d.side ? 2 : 4)
	                 : (d.parity == d.side ? 1 : 5);
	int skew = d.side ? 3 : 5;
	int base = s.side == 1 && d.side == 0 ? -14 : -30;
	int rows = 2 * (s.row - d.row);
	if (6 * (d.pos - s.pos - shift) + tap >= 1) /* east */
		return base + (6 - skew) * (d.pos - s.pos) - 6 * shift + tap +
		       rows;
	return base + (6 + skew) * (s.pos - d.pos) + 6 * shift - tap + rows;
}

uint32_t
model_write(uint32_t dst)
{
	return 52 + 2 * (uint32_t)model_tile(dst).row;
}

uint32_t
model_latency(uint32_t src, uint32_t dst)
{
	return (uint32_t)(model_lead(src, dst) + (int)model_write(dst));
}

char test_dir[64];

int
test_dir_make(const char *name)
{
	snprintf(test_dir, sizeof test_dir, "/tmp/ipu_test_%s_XXXXXX", name);
	return mkdtemp(test_dir) ? 0 : -1;
}

int
test_dir_remove(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", test_dir);
	return system(cmd);
}

void
write_text(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", test_dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

void
shared_weight_graph(char *text, size_t cap, int k, int rows, int wcols)
{
	size_t n =
	    (size_t)snprintf(text, cap, "weight w f32 [256, %d]\n", wcols);
	for (int i = 0; i < k && n < cap; i++)
		n += (size_t)snprintf(text + n, cap - n,
		                      "input x%d f32 [%d, 256]\n"
		                      "y%d = matmul x%d w\n"
		                      "output y%d\n",
		                      i, rows, i, i, i);
	assert_true(n < cap);
}

int
run_ipu(char *out, size_t len, const char *args)
{
	/* a default package cache inside the test's directory, never the
	 * user's */
	char cmd[1200];
	const char *dir = test_dir[0] ? test_dir : ".";
	snprintf(cmd, sizeof cmd,
	         "cd %s && XDG_CACHE_HOME=%s/.cache %s/ipu %s 2>&1", dir, dir,
	         IPU_BINARY_DIR, args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, len - 1, p);
	out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

unsigned long long
run_cycles(const char *out)
{
	const char *c = strstr(out, "cycles ");
	assert_non_null(c);
	return strtoull(c + 7, NULL, 10);
}

void
expect_in(const char *text, const char *needle)
{
	if (!strstr(text, needle))
		fail_msg("'%s' not in:\n%s", needle, text);
}

void
expect_diag_ok(int e, const Diag *d, const char *what)
{
	if (e) {
		char buf[1024];
		diag_format(d, buf, sizeof buf);
		fail_msg("%s: %s", what, buf);
	}
}

void
expect_cosines(const float *got, int batch, int n, const char *ref_npy,
               double min)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", test_dir, ref_npy);
	NpyArray ref;
	Diag d;
	assert_int_equal(npy_read(path, &ref, &d), 0);
	assert_int_equal(npy_count(&ref), (uint64_t)batch * (uint64_t)n);
	const float *want = ref.data;
	for (int b = 0; b < batch; b++) {
		double dot = 0, na = 0, nb = 0;
		for (int k = 0; k < n; k++) {
			double x = got[(size_t)b * n + k],
			       y = want[(size_t)b * n + k];
			dot += x * y, na += x * x, nb += y * y;
		}
		double cos = dot / sqrt(na * nb);
		print_message("image %d: cosine %.9f against %s (at least "
		              "%.4f)\n",
		              b, cos, ref_npy, min);
		assert_true(cos >= min);
	}
	npy_free(&ref);
}

/* Whether the host has swap: then a page that is not resident may hold data. */
static int
host_has_swap(void)
{
	static int known = -1;
	if (known >= 0)
		return known;
	known = 1;
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return known;
	char line[128];
	unsigned long kb;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "SwapTotal: %lu", &kb) == 1)
			known = kb != 0;
	fclose(f);
	return known;
}

size_t
mem_touched(const void *p, size_t n, unsigned char *vec)
{
	size_t pages = (n + 4095) / 4096;
	if (sysconf(_SC_PAGESIZE) != 4096 || (uintptr_t)p % 4096 ||
	    host_has_swap() || mincore((void *)p, n, vec) != 0) {
		memset(vec, 1, pages);
		return pages;
	}
	for (size_t i = 0; i < pages; i++)
		vec[i] &= 1; /* the other bits are reserved */
	return pages;
}

int
mem_same(const void *a, const void *b, size_t n)
{
	static const unsigned char zero[4096];
	size_t pages = (n + 4095) / 4096;
	unsigned char *va = malloc(pages ? pages : 1);
	unsigned char *vb = malloc(pages ? pages : 1);
	assert_non_null(va);
	assert_non_null(vb);
	mem_touched(a, n, va);
	mem_touched(b, n, vb);
	int same = 1;
	for (size_t i = 0; i < pages && same; i++) {
		size_t at = i * 4096, len = n - at < 4096 ? n - at : 4096;
		const unsigned char *x = (const unsigned char *)a + at;
		const unsigned char *y = (const unsigned char *)b + at;
		if (va[i] || vb[i])
			same = !memcmp(va[i] ? x : zero, vb[i] ? y : zero, len);
	}
	free(va);
	free(vb);
	return same;
}

static const uint64_t fnv_prime = 0x100000001b3ull;

static uint64_t
fnv_bytes(uint64_t h, const unsigned char *b, size_t n)
{
	for (size_t k = 0; k < n; k++)
		h = (h ^ b[k]) * fnv_prime;
	return h;
}

/* FNV-1a's prime to the power e (mod 2^64): the hash after e zero bytes is
 * the hash before times this. */
static uint64_t
fnv_prime_pow(size_t e)
{
	uint64_t r = 1, b = fnv_prime;
	for (; e; e >>= 1, b *= b)
		if (e & 1)
			r *= b;
	return r;
}

uint64_t
fnv_mem(uint64_t h, const void *p, size_t n)
{
	if (n < 4096) /* no whole page to skip */
		return fnv_bytes(h, p, n);
	size_t pages = (n + 4095) / 4096;
	unsigned char *v = malloc(pages);
	assert_non_null(v);
	mem_touched(p, n, v);
	for (size_t i = 0; i < pages; i++) {
		size_t at = i * 4096, len = n - at < 4096 ? n - at : 4096;
		h = v[i] ? fnv_bytes(h, (const unsigned char *)p + at, len)
		         : h * fnv_prime_pow(len);
	}
	free(v);
	return h;
}

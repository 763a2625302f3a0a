/* support.c - helpers shared by the unit tests. */
#include "support.h"

#include <stdlib.h>
#include <string.h>

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

/* ipu-stack.md 3.1: lane = bit 0, pair = id / 2, 23 rows per block,
 * mirrored in odd blocks; physical = row * 64 + column field + 2 * lane. */
static uint32_t
model_physical(uint32_t logical)
{
	uint32_t lane = logical & 1, pair = logical / 2;
	uint32_t block = pair / 23, row = pair % 23;
	if (block & 1)
		row = 22 - row;
	return row * 64 + (block / 2) * 4 + (block & 1) + 2 * lane;
}

uint32_t
model_latency(uint32_t s, uint32_t d)
{
	uint32_t ps = model_physical(s), pd = model_physical(d);
	int dc = (int)((ps >> 2) & 15) - (int)((pd >> 2) & 15);
	int dr = (int)(ps >> 6) - (int)(pd >> 6);
	return 30 + 6 * (uint32_t)abs(dc) + 2 * (uint32_t)abs(dr) +
	       ((ps ^ pd) & 1) + (((ps ^ pd) >> 1) & 1);
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

void
expect_in(const char *text, const char *needle)
{
	if (!strstr(text, needle))
		fail_msg("'%s' not in:\n%s", needle, text);
}

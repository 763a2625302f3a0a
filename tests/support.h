/* support.h - helpers shared by the unit tests. */
#ifndef IPU_TEST_SUPPORT_H
#define IPU_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../src/sim/sim.h"

/* Encode one instruction by variant name with operands in assembly order;
 * fails the test if it does not encode. */
uint32_t enc(const char *variant, int nops, ...);

/* Load words at the start of tile memory and run them. With worker >= 0 the
 * words run as that worker (vertex base = `vbase`), otherwise as the
 * supervisor. The caller frees the tile. */
Tile *run_words(const uint32_t *words, int n, int worker, uint32_t vbase,
                uint64_t max_cycles, RunStatus *status);
/* The default chip (C600) with every timing rule at bound b: the profiles
 * that the exact cycle checks run under. */
const Chip *profile_chip(TimingBound b);

/* Text parsed as a graph, or the test fails with the parser's first
 * message; the caller frees the graph. */
struct Graph *graph_of_text(const char *text);

/* Registers a test did not set read as this, so untouched ones show. */
#define POISON 0xdeadbeefu

/* A tile with `words` plus a final `exitz $mzero` at the start of memory and
 * worker 0 started there, its $m and $a registers set to POISON. The test
 * presets state in t->ctx[1], then calls tile_run. */
Tile *worker_tile(const uint32_t *words, int n);

/* The chip model's route timing between two logical C600 tiles
 * (docs/chip.md, "Route latency"), worked out here from the tile geometry,
 * per direction, rather than through src/target/route.c. */
int model_lead(uint32_t src, uint32_t dst);         /* the mux lead X */
uint32_t model_write(uint32_t dst);                 /* XPIC to write, M */
uint32_t model_latency(uint32_t src, uint32_t dst); /* X + M */

/* A temporary directory for one test file (setup/teardown of its group):
 * /tmp/ipu_test_NAME_XXXXXX, removed with everything in it. */
extern char test_dir[64];
int test_dir_make(const char *name);
int test_dir_remove(void);
/* Write text to a file of test_dir. */
void write_text(const char *name, const char *text);
/* Run `ipu ARGS` (the built program) in test_dir (or in the current
 * directory before test_dir_make), with XDG_CACHE_HOME there too (the
 * default package cache): its exit status, and its stdout and stderr in
 * out. */
int run_ipu(char *out, size_t len, const char *args);
/* The number after "cycles " in a run's output (ipu run graph/siglip). */
unsigned long long run_cycles(const char *out);
/* Into text (cap bytes): a graph of k matmuls y_i = x_i w, each x_i an
 * input f32 [rows, 256] and an output y_i, sharing the weight w f32
 * [256, wcols]. */
void shared_weight_graph(char *text, size_t cap, int k, int rows, int wcols);
/* Fails the test unless needle is in text. */
void expect_in(const char *text, const char *needle);
/* Fails the test with what and d's message unless e is 0. */
void expect_diag_ok(int e, const Diag *d, const char *what);
/* Fails the test unless each of the batch rows of got[batch, n] has a
 * cosine of at least min against its row of the f32 .npy `ref_npy` of
 * test_dir (which holds batch x n values); prints each cosine. */
void expect_cosines(const float *got, int batch, int n, const char *ref_npy,
                    double min);

/* Tile memory compared and hashed without reading the pages no one touched.
 * Reading an untouched page of an anonymous mapping (the emulator's
 * xmap_zero) costs a page fault, which dominated the tests that compare
 * whole tiles. mem_touched sets vec[i] (one byte a page, (n + 4095) / 4096
 * of them) where page i of p may hold a nonzero byte: mincore's resident
 * pages, since with no swap a page that is not resident was never written;
 * every page where there is swap or p is not page-aligned. Returns the
 * number of pages. */
size_t mem_touched(const void *p, size_t n, unsigned char *vec);
/* Whether n bytes at a and b are the same (as memcmp == 0). */
int mem_same(const void *a, const void *b, size_t n);
/* FNV-1a of n bytes at p continued from h (as a byte loop would give). */
uint64_t fnv_mem(uint64_t h, const void *p, size_t n);

/* A case that repeats, at a cost of minutes under the sanitizers, code
 * paths that cheaper cases run there too: skipped (and said so) in the
 * sanitizer build, run in the release build. `covered_by` names the cases
 * that take its paths under the sanitizers. */
#ifdef IPU_TEST_SANITIZED
#define SKIP_UNDER_SANITIZERS(covered_by)                                      \
	do {                                                                   \
		print_message("skipped under the sanitizers (covered there "   \
		              "by %s)\n",                                      \
		              covered_by);                                     \
		skip();                                                        \
	} while (0)
#else
#define SKIP_UNDER_SANITIZERS(covered_by) (void)(covered_by)
#endif

#endif

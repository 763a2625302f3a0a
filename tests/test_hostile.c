/*
 * test_hostile.c - every entry point as a hostile user drives it (issue 11,
 * items 3 to 11): outputs that are inputs, existing files, missing folders
 * and duplicate outputs refused before any work; temporary files that
 * never clobber a file and vanish on a signal; /dev/zero as an input;
 * reasons for failed writes; cycle limits; overflowing sizes and
 * expressions; fault reports with their context; and the smaller
 * refusals. Each case is built here from the description and runs
 * the built `ipu` (or the library function behind it).
 */
#include "support.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ipu/runtime.h>

#include "../src/models/siglip_config.h"
#include "../src/pkg/pkg.h"
#include "../src/place/place.h"
#include "../src/util/npy.h"

static int
setup(void **state)
{
	(void)state;
	return test_dir_make("hostile");
}

static int
teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

/* The bytes of a file of test_dir (malloc'd, NUL-terminated), or NULL. */
static char *
slurp(const char *name, size_t *len)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", test_dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	b[fread(b, 1, (size_t)n, f)] = 0;
	fclose(f);
	if (len)
		*len = (size_t)n;
	return b;
}

/* Fails unless file `name` of test_dir holds exactly `text`. */
static void
expect_file(const char *name, const char *text)
{
	char *b = slurp(name, NULL);
	if (!b)
		fail_msg("%s is gone", name);
	if (strcmp(b, text))
		fail_msg("%s changed: '%.60s'", name, b);
	free(b);
}

static int
exists(const char *name)
{
	char path[256];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", test_dir, name);
	return lstat(path, &st) == 0;
}

/* A shell line in test_dir (IPU names the program): its exit status. */
static int
sh(const char *line)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "cd %s && IPU=%s/ipu; %s", test_dir,
	         IPU_BINARY_DIR, line);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* No temporary file (NAME.tmp.PID.K) left in test_dir. */
static void
expect_no_temps(void)
{
	assert_int_equal(sh("! ls | grep -q '\\.tmp\\.'"), 0);
}

static const char prog[] = "_start:\n\tsetzi $m0, 7\n\tbr $lr\n";

/* A 1-layer SigLIP small enough to generate in a moment. */
static const char tiny_config[] =
    "{\"model_type\": \"siglip_vision_model\", \"hidden_size\": 32, "
    "\"intermediate_size\": 64, \"num_hidden_layers\": 1, "
    "\"num_attention_heads\": 2, \"image_size\": 32, \"patch_size\": 16}\n";

/* Item 5: one rule for every command's outputs. An existing file is
 * replaced only with --force; an output that is an input (by name, through
 * a symlink or a hard link) never, even with --force. */
static void
test_outputs_never_inputs(void **state)
{
	(void)state;
	char out[8192];
	write_text("p.s", prog);
	assert_int_equal(run_ipu(out, sizeof out, "asm p.s"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "asm p.s"), 1);
	expect_in(out, "p.o exists; refusing to overwrite it (--force "
	               "replaces it)");
	assert_int_equal(run_ipu(out, sizeof out, "asm p.s --force"), 0);
	assert_int_equal(sh("ln -s p.s sym.o && ln p.s hard.o"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "asm p.s -o sym.o --force"),
	                 2);
	expect_in(out, "output sym.o is also the input p.s; refusing to "
	               "overwrite it (even with --force)");
	assert_int_equal(run_ipu(out, sizeof out, "asm p.s -o hard.o --force"),
	                 2);
	expect_file("p.s", prog);
	assert_int_equal(run_ipu(out, sizeof out, "link p.o -o p.elf"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "link p.o -o p.elf"), 1);
	expect_in(out, "p.elf exists");
	assert_int_equal(run_ipu(out, sizeof out, "link p.o -o p.elf --force"),
	                 0);
	/* sim --trace over its own program, with --force: refused */
	size_t n0, n1;
	char *before = slurp("p.o", &n0);
	assert_int_equal(
	    run_ipu(out, sizeof out, "sim p.o --trace p.o --force"), 2);
	expect_in(out, "output p.o is also the input p.o");
	char *after = slurp("p.o", &n1);
	assert_true(n0 == n1 && !memcmp(before, after, n0));
	free(before);
	free(after);
	write_text("t.json", "keep");
	assert_int_equal(run_ipu(out, sizeof out, "sim p.o --trace t.json"), 1);
	expect_in(out, "t.json exists");
	expect_file("t.json", "keep");
	assert_int_equal(
	    run_ipu(out, sizeof out, "sim p.o --trace t.json --force"), 0);
	/* compile */
	write_text("g.txt", "input x f32 [2, 3]\ny = add x x\noutput y\n");
	assert_int_equal(run_ipu(out, sizeof out, "compile g.txt -o g.pkg"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "compile g.txt -o g.pkg"), 1);
	expect_in(out, "g.pkg exists");
	assert_int_equal(
	    run_ipu(out, sizeof out, "compile g.txt -o g.pkg --force"), 0);
	assert_int_equal(sh("ln -s g.txt g.lnk"), 0);
	assert_int_equal(
	    run_ipu(out, sizeof out, "compile g.txt -o g.lnk --force"), 2);
	/* model gen: the config it reads is not its --config-out */
	write_text("tiny.json", tiny_config);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model gen --config tiny.json --out w.st "
	                         "--config-out ./tiny.json --force"),
	                 2);
	expect_in(out, "output ./tiny.json is also the input tiny.json");
	expect_file("tiny.json", tiny_config);
	assert_false(exists("w.st"));
	assert_int_equal(
	    run_ipu(out, sizeof out, "model gen --config tiny.json --out w.st"),
	    0);
	/* run siglip: never over its weights, config or pixels */
	float px[3 * 32 * 32];
	for (int i = 0; i < 3 * 32 * 32; i++)
		px[i] = (float)(i % 17) / 17;
	NpyArray a = {
	    .dtype = NPY_F32, .rank = 4, .shape = {1, 3, 32, 32}, .data = px};
	char path[256];
	snprintf(path, sizeof path, "%s/px.npy", test_dir);
	Diag d;
	assert_int_equal(npy_write(path, &a, 1, &d), 0);
	size_t nw0, nw1;
	char *w0 = slurp("w.st", &nw0);
	static const char *const siglip_outs[] = {"w.st", "tiny.json",
	                                          "px.npy"};
	for (int i = 0; i < 3; i++) {
		char args[256];
		snprintf(
		    args, sizeof args,
		    "run siglip --weights w.st --config tiny.json --pixels "
		    "px.npy --out %s --force --no-cache",
		    siglip_outs[i]);
		assert_int_equal(run_ipu(out, sizeof out, args), 2);
		expect_in(out, "is also the input");
	}
	char *w1 = slurp("w.st", &nw1);
	assert_true(nw0 == nw1 && !memcmp(w0, w1, nw0));
	free(w0);
	free(w1);
	expect_file("tiny.json", tiny_config);
	/* run graph: neither its graph nor an --in file */
	snprintf(path, sizeof path, "%s/x.npy", test_dir);
	a = (NpyArray){
	    .dtype = NPY_F32, .rank = 2, .shape = {2, 3}, .data = px};
	assert_int_equal(npy_write(path, &a, 1, &d), 0);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run graph --graph g.txt --in x=x.npy --out "
	                         "y=x.npy --force"),
	                 2);
	expect_in(out, "output x.npy is also the input x.npy");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run graph --graph g.txt --in x=x.npy --out "
	                         "y=g.txt --force"),
	                 2);
	expect_file("g.txt", "input x f32 [2, 3]\ny = add x x\noutput y\n");
	/* image: never over an image it reads */
	assert_int_equal(sh("cp " IPU_SOURCE_DIR
	                    "/fuzz/corpus/fuzz_image/cat16x12.png cat.png"),
	                 0);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "image cat.png --size 16 --out ./cat.png "
	                         "--force"),
	                 2);
}

/* Item 7: outputs are checked before the work: the same file twice, a
 * missing folder, a folder as the output. Nothing runs (no "cycles" line)
 * and nothing is written. */
static void
test_outputs_checked_first(void **state)
{
	(void)state;
	char out[8192];
	write_text("g2.txt", "input x f32 [2, 3]\nc = add x x\nd = mul x x\n"
	                     "output c\noutput d\n");
	float v[6] = {1, 2, 3, 4, 5, 6};
	NpyArray a = {.dtype = NPY_F32, .rank = 2, .shape = {2, 3}, .data = v};
	char path[256];
	Diag d;
	snprintf(path, sizeof path, "%s/x2.npy", test_dir);
	assert_int_equal(npy_write(path, &a, 1, &d), 0);
	static const struct {
		const char *outs, *needle;
		int rc;
	} bad[] = {
	    {"--out c=same.npy --out d=same.npy",
	     "same.npy and same.npy are the same output file", 2},
	    {"--out c=same.npy --out d=./same.npy --force",
	     "same.npy and ./same.npy are the same output file", 2},
	    {"--out c=nowhere/c.npy", "the folder nowhere does not exist", 1},
	    {"--out c=x2.npy/c.npy", "the folder x2.npy is not a folder", 1},
	    {"--out c=. --force", "output . is a folder", 1},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char args[256];
		snprintf(args, sizeof args,
		         "run graph --graph g2.txt --in x=x2.npy %s",
		         bad[i].outs);
		assert_int_equal(run_ipu(out, sizeof out, args), bad[i].rc);
		expect_in(out, bad[i].needle);
		assert_null(strstr(out, "cycles"));
		assert_false(exists("same.npy"));
	}
	/* run siglip: a missing folder before any compile or run */
	write_text("tiny.json", tiny_config);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights w.st --config tiny.json "
	                         "--pixels px.npy --out no/e.npy"),
	                 1);
	expect_in(out, "the folder no does not exist");
	/* model gen: --out and --config-out the same file */
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model gen --config tiny.json --out two.st "
	                         "--config-out ./two.st"),
	                 2);
	assert_false(exists("two.st"));
}

/* Item 6: sim --trace writes through the project's temporary files: an
 * existing T.tmp file and a symlink there are left alone; no temporary is
 * left behind. */
static void
test_trace_temp_file(void **state)
{
	(void)state;
	char out[8192];
	write_text("q.s", prog);
	assert_int_equal(run_ipu(out, sizeof out, "asm q.s"), 0);
	write_text("victim", "precious");
	write_text("tr.json.tmp", "mine");
	assert_int_equal(sh("ln -s victim tr2.json.tmp"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "sim q.o --trace tr.json"),
	                 0);
	assert_int_equal(run_ipu(out, sizeof out, "sim q.o --trace tr2.json"),
	                 0);
	expect_file("tr.json.tmp", "mine");
	expect_file("victim", "precious");
	char *t = slurp("tr2.json", NULL);
	assert_non_null(t);
	assert_non_null(strstr(t, "traceEvents"));
	free(t);
	assert_int_equal(sh("rm tr.json.tmp tr2.json.tmp"), 0);
	expect_no_temps();
}

/* Item 6: a signal while a file is being written removes its temporary,
 * then ends the process as the signal would have. In a child: start a
 * write, send the signal to itself. */
static void
test_signal_removes_temps(void **state)
{
	(void)state;
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (int i = 0; i < 3; i++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			char target[256], tmp[4096];
			snprintf(target, sizeof target, "%s/big.out", test_dir);
			Diag d;
			FILE *f = file_create_temp(target, tmp, sizeof tmp, &d);
			if (!f)
				_exit(10);
			for (int k = 0; k < 1000; k++)
				fputs("some of a large output\n", f);
			fflush(f);
			if (access(tmp, F_OK) != 0)
				_exit(11);
			kill(getpid(), sigs[i]);
			_exit(12); /* not reached: the signal ends us */
		}
		int st;
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (!WIFSIGNALED(st))
			fail_msg("signal %d: the child exited with %d", sigs[i],
			         WEXITSTATUS(st));
		assert_int_equal(WTERMSIG(st), sigs[i]);
		expect_no_temps();
		assert_false(exists("big.out"));
	}
}

/* Item 9: /dev/zero as any input is an error, not a process that fills
 * memory; a folder says it is one. */
static void
test_endless_inputs(void **state)
{
	(void)state;
	char out[8192];
	assert_int_equal(run_ipu(out, sizeof out, "inspect /dev/zero"), 1);
	expect_in(out, "/dev/zero: more than 256 MiB from a file that is not "
	               "a regular file");
	write_text("inc.s", "_start:\n\t.include \"/dev/zero\"\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm inc.s -o inc.o"), 1);
	expect_in(out, "inc.s:2:11: cannot include '/dev/zero': more than 256 "
	               "MiB");
	assert_int_equal(run_ipu(out, sizeof out, "compile . -o dir.pkg"), 1);
	expect_in(out, ".: is a directory");
	/* a pipe that ends is read whole */
	assert_int_equal(sh("printf 'input x f32 [4]\\ny = add x x\\noutput "
	                    "y\\n' | $IPU compile /dev/stdin -o pipe.pkg "
	                    ">/dev/null"),
	                 0);
}

/* Item 11: a write that fails says why. A file size limit (ulimit -f, with
 * SIGXFSZ ignored) makes the write fail with EFBIG, as a full disk fails
 * with ENOSPC; the message carries strerror's text and no temporary is
 * left. */
static void
test_write_error_reason(void **state)
{
	(void)state;
	write_text("tiny2.json", tiny_config);
	assert_int_equal(sh("(ulimit -f 4; trap '' XFSZ; $IPU model gen "
	                    "--config tiny2.json --out big.st) > why.txt 2>&1"),
	                 1);
	char *why = slurp("why.txt", NULL);
	expect_in(why, "big.st: write error: File too large");
	free(why);
	assert_false(exists("big.st"));
	expect_no_temps();
}

/* Every package file in test_dir/DIR made into a program that never ends:
 * each tile's entry word becomes `bri` to itself (the CRC recomputed by
 * the writer), as a corrupt cache entry could be. The number changed. */
static int
make_endless(const char *dir)
{
	char cmd[512], path[512];
	snprintf(cmd, sizeof cmd, "ls %s/%s/*.pkg", test_dir, dir);
	FILE *ls = popen(cmd, "r");
	int n = 0;
	while (fgets(path, sizeof path, ls)) {
		path[strcspn(path, "\n")] = 0;
		Package *p;
		Diag d;
		if (pkg_read_file(path, &p, &d))
			fail_msg("%s: %s", path, d.msg);
		for (uint32_t t = 0; t < p->tiles; t++) {
			uint32_t e = p->tile[t].entry,
			         w = enc("bri_mmmn_zi", 1, (int32_t)e);
			PkgTile *pt = &p->tile[t];
			for (uint32_t i = 0; i < p->nshared + pt->nseg; i++) {
				PkgSegment *s = i < p->nshared
				                    ? &p->shared[i]
				                    : &pt->seg[i - p->nshared];
				PkgBlob *b = &p->blob[s->blob];
				if (e >= s->addr && e - s->addr < b->len)
					memcpy(b->data + (e - s->addr), &w, 4);
			}
		}
		assert_int_equal(pkg_write_file(p, path, &d), 0);
		pkg_free(p);
		n++;
	}
	pclose(ls);
	return n;
}

/* Item 4: every command that runs the chip stops at a cycle limit, by
 * default far above the prediction, with a message that names the limit
 * and --max-cycles; one parser for the option everywhere. */
static void
test_cycle_limits(void **state)
{
	(void)state;
	char out[8192];
	write_text("e.txt", "input x f32 [4, 8]\ny = add x x\noutput y\n");
	float v[32] = {0};
	NpyArray a = {.dtype = NPY_F32, .rank = 2, .shape = {4, 8}, .data = v};
	char path[256];
	Diag d;
	snprintf(path, sizeof path, "%s/e.npy", test_dir);
	assert_int_equal(npy_write(path, &a, 1, &d), 0);
	const char *run = "run graph --graph e.txt --in x=e.npy --cache pc "
	                  "--threads 1";
	assert_int_equal(run_ipu(out, sizeof out, run), 0);
	assert_int_equal(make_endless("pc"), 1);
	assert_int_equal(run_ipu(out, sizeof out, run), 1);
	expect_in(out, "run: stopped at the default limit of ");
	expect_in(out, "cycles, 10 x the ");
	expect_in(out, "give --max-cycles N");
	/* the limit is 10 x the prediction + 10^6: check the numbers */
	const char *at = strstr(out, "default limit of ");
	unsigned long long limit, pred;
	assert_int_equal(sscanf(at,
	                        "default limit of %llu cycles, 10 x the "
	                        "%llu predicted",
	                        &limit, &pred),
	                 2);
	assert_true(pred > 0 && limit == 10 * pred + 1000000);
	char args[256];
	snprintf(args, sizeof args, "%s --max-cycles 5000", run);
	assert_int_equal(run_ipu(out, sizeof out, args), 1);
	expect_in(out, "stopped at the limit of --max-cycles 5000");
	/* the others: a limit below what the program needs */
	assert_int_equal(run_ipu(out, sizeof out,
	                         "bench graph --graph e.txt --tiles 4 "
	                         "--threads 1 --max-cycles 10"),
	                 1);
	expect_in(out, "stopped at the limit of --max-cycles 10");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "bench gemm --m 16 --n 16 --k 16 --tiles 2 "
	                         "--threads 1 --max-cycles 0x10"),
	                 1);
	expect_in(out, "stopped at the limit of --max-cycles 16");
	/* the benchmarks that run programs of their own */
	static const char *const own[] = {
	    "bench tile-amp --rows 96 --max-cycles 50",
	    "bench exchange --tiles 4 --threads 1 --max-cycles 50",
	    "bench sim --tiles 2 --sgemm-n 16 --threads 1 --max-cycles 50"};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(run_ipu(out, sizeof out, own[i]), 1);
		expect_in(out,
		          "stopped at the limit of 50 cycles (--max-cycles, "
		          "default 10^9)");
	}
	write_text("tiny.json", tiny_config);
	assert_int_equal(
	    run_ipu(out, sizeof out, "model gen --config tiny.json --out t.st"),
	    0);
	float px[3 * 32 * 32] = {0};
	a = (NpyArray){
	    .dtype = NPY_F32, .rank = 4, .shape = {1, 3, 32, 32}, .data = px};
	snprintf(path, sizeof path, "%s/tpx.npy", test_dir);
	assert_int_equal(npy_write(path, &a, 1, &d), 0);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights t.st --config tiny.json "
	                         "--pixels tpx.npy --no-cache --threads 1 "
	                         "--max-cycles 100"),
	                 1);
	expect_in(out, "stopped at the limit of --max-cycles 100");
	write_text("loop.s", "_start:\n1:\tbri 1b\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm loop.s"), 0);
	assert_int_equal(
	    run_ipu(out, sizeof out, "sim loop.o --max-cycles 1000"), 1);
	expect_in(out, "stopped at the limit of 1000 cycles (--max-cycles");
	/* one parser: the same refusal everywhere */
	static const char *const cmds[] = {
	    "sim loop.o", "run graph --graph e.txt --in x=e.npy",
	    "bench graph --graph e.txt",
	    "run siglip --weights t.st --config tiny.json --pixels tpx.npy"};
	static const char *const bad[] = {"0", "-5", "ten", "1e99"};
	for (int i = 0; i < 4; i++) {
		snprintf(args, sizeof args, "%s --max-cycles %s", cmds[i],
		         bad[i]);
		assert_int_equal(run_ipu(out, sizeof out, args), 2);
		expect_in(out, "--max-cycles wants a number of cycles, 1 or "
		               "more");
	}
}

/* Item 8: 64-bit assembler expressions that leave the signed range are
 * errors at the operator, not silent wraps (1 << 64 was 0). */
static void
test_expr_overflow(void **state)
{
	(void)state;
	char out[8192];
	write_text("ov.s", "_start:\n"
	                   "\t.equ a2, 1 << 64\n"
	                   "\t.equ a3, 0x7fffffffffffffff + 1\n"
	                   "\t.equ a4, 3 * 0x4000000000000000\n"
	                   "\t.equ a5, -(-0x7fffffffffffffff - 1)\n"
	                   "\t.equ a6, (-0x7fffffffffffffff - 1) - 1\n"
	                   "\t.equ a7, 1 << 63\n"
	                   "\t.equ a8, (-0x7fffffffffffffff - 1) / -1\n"
	                   "\t.equ a9, 1 << -1\n"
	                   "\t.word a2, a3, a4, a5, a6, a7, a8, a9\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm ov.s"), 1);
	expect_in(out, "ov.s:2:13: shift count is not in 0..63");
	expect_in(out, "ov.s:3:30: overflow: the result does not fit 64 bits "
	               "(signed)");
	expect_in(out, "ov.s:4:13: overflow");
	expect_in(out, "ov.s:5:11: overflow");
	expect_in(out, "ov.s:6:37: overflow");
	expect_in(out, "ov.s:7:13: overflow");
	expect_in(out, "ov.s:8:37: overflow");
	expect_in(out, "ov.s:9:13: shift count");
	expect_in(out, "8 errors");
	/* what fits stays exact: the edges of the range, and patterns written
	 * above INT64_MAX, which are their two's complement; each term below
	 * is 1 or 0, the sum 5 */
	write_text("ok.s", "\t.equ b2, 0x7ffffffffffffffe + 1\n"
	                   "\t.equ b3, -0x7fffffffffffffff - 1\n"
	                   "\t.equ b4, -1 << 63\n"
	                   "\t.equ b5, 0xffffffffffffffff + 1\n"
	                   "\t.equ b6, 1 << 62 >> 62\n"
	                   "\t.equ b7, 3037000499 * 3037000499\n"
	                   "_start:\n"
	                   "\tsetzi $m0, b6 + b5 + (b2 - 0x7ffffffffffffffe) + "
	                   "(b3 + 0x7fffffffffffffff + 2) + ((b4 >> 62) + 3) + "
	                   "(b7 - 9223372030926249000)\n"
	                   "\tbr $lr\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm ok.s"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "sim ok.o"), 0);
	expect_in(out, "$m0 = 5 ");
}

/* Item 8: sizes whose products overflow an int: image_size 1048576 (or
 * 65537 with patch 1) made 2^40 (or 2^32 + ...) tokens wrap to 0 or less,
 * and the config passed. */
static void
test_config_overflow(void **state)
{
	(void)state;
	static const struct {
		const char *json, *needle;
	} bad[] = {
	    {"{\"image_size\": 1048576, \"patch_size\": 1}",
	     "tokens (image_size / patch_size)^2: 1099511627776 elements"},
	    {"{\"image_size\": 65537, \"patch_size\": 1}",
	     "tokens (image_size / patch_size)^2: 4295098369 elements"},
	    {"{\"image_size\": 46341, \"patch_size\": 1}",
	     "tokens (image_size / patch_size)^2: 2147488281"},
	    {"{\"image_size\": 2048, \"patch_size\": 8, "
	     "\"num_attention_heads\": 1, \"hidden_size\": 8}",
	     "the attention scores (num_attention_heads x tokens^2): "
	     "4294967296"},
	    {"{\"image_size\": 1024, \"patch_size\": 1, "
	     "\"intermediate_size\": 4096, \"num_attention_heads\": 1}",
	     "the MLP activations (tokens x intermediate_size): 4294967296"},
	    {"{\"hidden_size\": 1048576, \"intermediate_size\": 1048576, "
	     "\"num_attention_heads\": 1}",
	     "the MLP weights (hidden_size x intermediate_size): "
	     "1099511627776 elements"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		SiglipConfig c;
		Diag d;
		diag_clear(&d);
		if (!siglip_config_parse(bad[i].json, strlen(bad[i].json),
		                         "c.json", &c, &d))
			fail_msg("%s: accepted", bad[i].json);
		if (!strstr(d.msg, bad[i].needle))
			fail_msg("'%s' not in '%s'", bad[i].needle, d.msg);
	}
	/* the largest grid whose tokens fit: 46340^2 = 2147395600 (the
	 * config fails further on, on its pixels) */
	SiglipConfig c;
	Diag d;
	const char *edge = "{\"image_size\": 46340, \"patch_size\": 1, "
	                   "\"intermediate_size\": 1, \"hidden_size\": 1, "
	                   "\"num_attention_heads\": 1}";
	assert_int_not_equal(
	    siglip_config_parse(edge, strlen(edge), "c.json", &c, &d), 0);
	assert_null(strstr(d.msg, "tokens (image_size"));
	expect_in(d.msg, "the pixels");
	/* so400m and base are far inside */
	assert_int_equal(siglip_preset("so400m", &c), 0);
	assert_int_equal(siglip_config_validate(&c, "so400m", &d), 0);
	/* the CLI: model check refuses the config instead of "matching" */
	char out[4096];
	write_text("huge.json", "{\"image_size\": 1048576, \"patch_size\": "
	                        "1}\n");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model check --config huge.json --weights "
	                         "none.st"),
	                 1);
	expect_in(out, "huge.json: tokens (image_size / patch_size)^2");
}

/* Item 8: a tensor share of 4 GiB or more no longer wraps: a tensor
 * larger than the tiles' memory is refused before planning, naming it,
 * its op and the tiles; and the placement report's per-tile maximum is
 * 64-bit (it was clamped to 4,294,967,295 beside a 4,294,967,296 total). */
static void
test_huge_shares(void **state)
{
	(void)state;
	char out[8192];
	write_text("big.txt", "input a f32 [65536, 16384]\nb = add a a\n"
	                      "output b\n");
	assert_int_equal(
	    run_ipu(out, sizeof out, "compile big.txt -o big.pkg --tiles 1"),
	    1);
	expect_in(out, "tensor a f32 [65536, 16384] is 4294967296 bytes, more "
	               "than the 638976 bytes of memory of the 1 tile it may "
	               "use (the c600 has 1472)");
	write_text("big2.txt", "input a f16 [8, 8]\n"
	                       "b = reshape a [64]\n"
	                       "c = cast b f32\n"
	                       "output c\n"
	                       "weight w f32 [600000]\n"
	                       "d = add c c\n"
	                       "output d\n");
	assert_int_equal(
	    run_ipu(out, sizeof out, "compile big2.txt -o big2.pkg --tiles 3"),
	    1);
	expect_in(out, "tensor w f32 [600000] is 2400000 bytes, more than the "
	               "1916928 bytes of memory of the 3 tiles");
	/* the report: two 3 GiB buffers on one tile */
	Lowered l = {.chip = chip_default(), .tiles = 1};
	Buffer b[2];
	for (int i = 0; i < 2; i++)
		b[i] = (Buffer){.tile = 0,
		                .bytes = 3u << 30,
		                .align = 8,
		                .first = 0,
		                .last = 0,
		                .apart = -1,
		                .what = "block"};
	l.buf = b;
	l.nbuf = l.capbuf = 2;
	PlaceReport rep;
	Diag d;
	assert_int_equal(place_buffers(&l, NULL, &rep, &d), IPU_ERANGE);
	char path[256];
	snprintf(path, sizeof path, "%s/report.txt", test_dir);
	FILE *f = fopen(path, "w");
	place_report_print(&rep, f);
	fclose(f);
	place_report_free(&rep);
	char *text = slurp("report.txt", NULL);
	expect_in(text, "6,442,450,944 bytes in 2 buffers, at most "
	                "6,442,450,944 on a tile");
	free(text);
}

/* Item 3, past the reader: `ipu inspect` of a package that declares
 * 20,000 buffer kinds over 1472 tiles (its memory table used to take
 * tiles x kinds x 8 bytes: 235 MB here) gives each kind's stats, worked
 * out here by hand. */
static void
test_inspect_many_kinds(void **state)
{
	(void)state;
	char out[1 << 16];
	write_text("wide.txt", "input a f32 [2944, 8]\nb = add a a\n"
	                       "output b\n");
	assert_int_equal(
	    run_ipu(out, sizeof out, "compile wide.txt -o wide.pkg"), 0);
	char path[256];
	snprintf(path, sizeof path, "%s/wide.pkg", test_dir);
	Package *p;
	Diag d;
	assert_int_equal(pkg_read_file(path, &p, &d), 0);
	uint32_t T = p->tiles, base = p->chip->mem_base;
	assert_int_equal(T, 1472);
	char name[32];
	for (uint32_t i = 0; i < 20000; i++) {
		snprintf(name, sizeof name, "k%05u", i);
		pkg_add_buffer(p, i % T, base, i % 100 + 1, name);
	}
	for (uint32_t t = 0; t < T; t++)
		pkg_add_buffer(p, t, base, t + 1, "every");
	snprintf(path, sizeof path, "%s/kinds.pkg", test_dir);
	if (pkg_write_file(p, path, &d))
		fail_msg("%s", d.msg);
	pkg_free(p);
	assert_int_equal(
	    run_ipu(out, sizeof out, "inspect kinds.pkg --json > kinds.json"),
	    0);
	char *j = slurp("kinds.json", NULL);
	/* one buffer of 100 bytes on tile 19999 mod 1472 = 863 */
	expect_in(j, "{\"kind\": \"k19999\", \"min\": 0, \"median\": 0, "
	             "\"max\": 100, \"max_tile\": 863}");
	/* tile t holds t + 1 bytes: median the 736th smallest */
	expect_in(j, "{\"kind\": \"every\", \"min\": 1, \"median\": 736, "
	             "\"max\": 1472, \"max_tile\": 1471}");
	free(j);
}

/* Two tiles: each points its mux at the other and expects one item, then
 * waits; nobody sends (a deadlock). */
static const char deadlock_prog[] = "_start:\n"
                                    "\tget $m0, $TILE_ID\n"
                                    "\tsetzi $m2, 0x62000\n"
                                    "\tput $INCOMING_SINIT, $m2\n"
                                    "\tsetzi $m2, 1\n"
                                    "\tsync 3\n"
                                    "\tput $INCOMING_DCOUNT, $m2\n"
                                    "\tsetzi $m1, 1\n"
                                    "\tput $INCOMING_MUX, $m1\n"
                                    "\tsync 3\n" /* 0x4c020 */
                                    "\tbr $lr\n";

/* Item 10: fault reports carry the context, the pc and the instruction:
 * exchange errors (the send, or the receiving tile's sync), deadlocks (the
 * sync each tile waits in), timeouts (the next instruction), and a branch
 * to a bad address (the branch, its pc and the target, not the target as
 * the pc); a model too large for the chip names its op and the tiles. */
static void
test_fault_context(void **state)
{
	(void)state;
	char out[8192];
	write_text("dl.s", deadlock_prog);
	assert_int_equal(run_ipu(out, sizeof out, "asm dl.s"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "sim dl.o --tiles 2"), 1);
	expect_in(out, "deadlock: tile 0 waits in sync 3 since cycle ");
	expect_in(out, "(supervisor, pc 0x4c020 [0x41800003: sync 3]) for 1 "
	               "more items");
	expect_in(out, "the reported pc is _start+0x20");
	/* the same through the runtime's structured error */
	size_t len;
	char *obj = slurp("dl.o", &len);
	ipu_error err;
	ipu_device *dev = ipu_open("sim:c600:tiles=2:threads=1", &err);
	assert_non_null(dev);
	assert_int_equal(ipu_load_image(dev, obj, len, 0, 2, &err), 0);
	assert_int_equal(ipu_run(dev, 0, &err), IPU_ERR_DEADLOCK);
	assert_int_equal(err.context, 0);
	assert_int_equal(err.pc, 0x4c020);
	ipu_close(dev);
	free(obj);
	/* a send nobody receives: the send instruction */
	write_text("lost.s", "_start:\n"
	                     "\tsync 3\n"
	                     "\tsend 0, 0x60000 / 4, 1\n"
	                     "\tsync 3\n"
	                     "\tbr $lr\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm lost.s"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "sim lost.o --tiles 2"), 1);
	expect_in(out, "reached no tile: no receiver's mux selected tile 0 "
	               "when it arrived; the send: tile 0, supervisor, pc "
	               "0x4c004 [0x780c0001: send 0, 0x18000, 1]");
	/* an item for a tile that expects none: where that tile waits */
	write_text("nodc.s", "_start:\n"
	                     "\tget $m0, $TILE_ID\n"
	                     "\tadd $m1, $m0, 1\n"
	                     "\tand $m1, $m1, 1\n"
	                     "\tsetzi $m2, 0x62000\n"
	                     "\tput $INCOMING_SINIT, $m2\n"
	                     "\tsync 3\n"
	                     "\tput $INCOMING_MUX, $m1\n"
	                     "\tsend 0, 0x60000 / 4, 1\n"
	                     "\tsync 3\n" /* 0x4c020 */
	                     "\tbr $lr\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm nodc.s"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "sim nodc.o --tiles 2"), 1);
	expect_in(out, "expects none ($INCOMING_DCOUNT = 0)");
	expect_in(out, "tile 0's supervisor, pc 0x4c020 [0x41800003: sync 3] "
	               "(waiting there)");
	/* a timeout: the instruction it would run next */
	write_text("spin.s", "_start:\n\tnop\n1:\tbri 1b\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm spin.s"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "sim spin.o --max-cycles 40"),
	                 1);
	expect_in(out, "did not finish in 40 cycles (next: its supervisor, pc "
	               "0x4c004 [0x40813001: bri 0x4c004])");
	/* a branch out of code memory: the branch is the faulting pc */
	write_text("br.s", "_start:\n"
	                   "\tsetzi $m1, 0x90000\n"
	                   "\tbr $m1\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm br.s"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "sim br.o"), 1);
	/* the br reads $m1 sup-dep (6) cycles after the setzi */
	expect_in(out, "supervisor, pc 0x4c004 [0x43100000: br $m1], cycle 6: "
	               "INVALID_PC: br to 0x90000: code must lie in "
	               "0x4c000..0x80000 and be 4-byte aligned");
	expect_in(out, "the faulting pc is _start+0x4");
	write_text("br2.s", "_start:\n"
	                    "\tsetzi $m1, 1\n"
	                    "\tbrnz $m1, 1f\n"
	                    "\tnop\n"
	                    "1:\tsetzi $m2, 0x4c002\n"
	                    "\tbr $m2\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm br2.s"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "sim br2.o"), 1);
	expect_in(out, "pc 0x4c010 [0x43200000: br $m2], cycle ");
	expect_in(out, "br to 0x4c002: code must lie");
	write_text("call.s", "_start:\n\tnop\n\tcall $m3, 0x90000\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm call.s"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "sim call.o"), 1);
	expect_in(out, "pc 0x4c004 [");
	expect_in(out, "call to 0x90000: code must lie");
	/* a matmul no plan fits: its op, its output and the tiles */
	write_text("mm.txt", "input a f16 [16384, 16384]\n"
	                     "weight w f16 [16384, 16384]\n"
	                     "c = matmul a w\n"
	                     "output c\n");
	assert_int_equal(run_ipu(out, sizeof out, "compile mm.txt -o mm.pkg"),
	                 1);
	expect_in(out, "compile: matmul c: gemm 16384 x 16384 x 16384 (f16) "
	               "does not fit 1472 tiles in any plan");
}

/* Item 11, the smaller findings, each from its description. */
static void
test_small_items(void **state)
{
	(void)state;
	char out[8192];
	/* model gen --layers beyond the preset's; model graph's numbers */
	assert_int_equal(run_ipu(out, sizeof out,
	                         "model gen --preset base --layers 14 --out "
	                         "l.st"),
	                 2);
	expect_in(out, "--layers 14: the config has 12 layers");
	assert_false(exists("l.st"));
	assert_int_equal(
	    run_ipu(out, sizeof out, "model graph --preset base --layers x"),
	    2);
	expect_in(out, "--layers wants a number in 1..");
	/* `output b` twice */
	write_text("o2.txt", "input a f32 [2, 3]\nb = add a a\noutput b\n"
	                     "output b\n");
	assert_int_equal(run_ipu(out, sizeof out, "compile o2.txt -o o2.pkg"),
	                 1);
	expect_in(out, "o2.txt:4:8: 'b' is already an output");
	/* bench --tiles beyond the chip */
	write_text("g1.txt", "input a f32 [2, 3]\nb = add a a\noutput b\n");
	assert_int_equal(
	    run_ipu(out, sizeof out, "bench graph --graph g1.txt --tiles 5000"),
	    2);
	expect_in(out, "--tiles 5000: the c600 has 1472 tiles");
	assert_int_equal(
	    run_ipu(out, sizeof out, "bench gemm --tiles 1473 --chip gc200"),
	    2);
	expect_in(out, "--tiles 1473: the gc200 has 1472 tiles");
	/* bench graph --json: the path is a JSON string, escaped */
	assert_int_equal(sh("cp g1.txt 'q\"b\\s.txt'"), 0);
	assert_int_equal(sh("$IPU bench graph --graph 'q\"b\\s.txt' "
	                    "--tiles 2 --threads 1 --json > j.json && "
	                    "/usr/bin/python3 -c \"import json; "
	                    "assert json.load(open('j.json'))['graph'] == "
	                    "'q\\\"b\\\\\\\\s.txt'\""),
	                 0);
	/* run siglip: --image and --pixels together */
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights w.st --config c.json "
	                         "--image a.png --pixels p.npy"),
	                 2);
	expect_in(out, "--image and --pixels are two ways to give the batch: "
	               "one of them");
	/* --f8-scales with a position twice */
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights w.st --config c.json "
	                         "--pixels p.npy --dtype f8 --f8-scales "
	                         "qkv=1,qkv=2"),
	                 2);
	expect_in(out, "f8 scales 'qkv=1,qkv=2': qkv is given twice");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run siglip --weights w.st --config c.json "
	                         "--pixels p.npy --dtype f8 --f8-scales fc1=1 "
	                         "--f8-scales fc1=2"),
	                 2);
	expect_in(out, "fc1 is given twice");
	/* a config key given twice: the last value, as Python's json */
	SiglipConfig c;
	Diag d;
	const char *dup = "{\"hidden_size\": 64, \"num_attention_heads\": 2, "
	                  "\"hidden_size\": 32}";
	assert_int_equal(siglip_config_parse(dup, strlen(dup), "c", &c, &d), 0);
	assert_int_equal(c.hidden, 32);
	const char *dup2 = "{\"vision_config\": {\"patch_size\": 32}, "
	                   "\"model_type\": \"siglip\", \"vision_config\": "
	                   "{\"patch_size\": 14, \"image_size\": 28}}";
	assert_int_equal(siglip_config_parse(dup2, strlen(dup2), "c", &c, &d),
	                 0);
	assert_int_equal(c.patch, 14);
	assert_int_equal(c.image, 28);
	/* a NUL inside a .npy header ('<f4\0x' was read as '<f4') */
	static const char dict[] =
	    "{'descr': '<f4\0x', 'fortran_order': False, 'shape': (1,), }";
	uint8_t npy[128] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
	memset(npy + 10, ' ', 118);
	memcpy(npy + 10, dict, sizeof dict - 1);
	npy[127] = '\n';
	uint8_t file[132];
	memcpy(file, npy, 128);
	memset(file + 128, 0, 4);
	NpyArray a;
	assert_int_not_equal(npy_decode(file, sizeof file, "nul.npy", &a, &d),
	                     0);
	expect_in(d.msg, "npy header: a NUL byte at byte 14 of the dict");
	file[10 + 14] = '\''; /* '<f4'  : the same header without it */
	file[10 + 15] = ' ';
	file[10 + 16] = ' ';
	assert_int_equal(npy_decode(file, sizeof file, "ok.npy", &a, &d), 0);
	npy_free(&a);
	/* the config fuzz target's seeds are accepted by the parser */
	static const char *const seeds[] = {"so400m.json", "vision_only.json"};
	for (int i = 0; i < 2; i++) {
		char path[512];
		snprintf(path, sizeof path,
		         IPU_SOURCE_DIR "/fuzz/corpus/fuzz_config/%s",
		         seeds[i]);
		if (siglip_config_read(path, &c, &d))
			fail_msg("%s: %s", seeds[i], d.msg);
	}
	assert_int_equal(c.image, 224);
	assert_int_equal(c.use_head, 0);
}

/* Item 11: casts to a tensor's own type are the tensor (they were
 * refused); casts and transposes without a kernel are refused naming the
 * op, its tensor and what does exist; the fuzz corpus's every_op graph
 * compiles; --in values beyond the element type are a warning naming the
 * file, the tensor and the count. */
static void
test_casts_and_ranges(void **state)
{
	(void)state;
	char out[8192];
	write_text("id.txt", "input a f32 [2, 3]\n"
	                     "b = cast a f32\n"
	                     "c = add b a\n"
	                     "output b\n"
	                     "output c\n");
	const float v[6] = {1.5f, -2, 0.25f, 3, 1e-3f, -7};
	NpyArray a = {
	    .dtype = NPY_F32, .rank = 2, .shape = {2, 3}, .data = (void *)v};
	char path[256];
	Diag d;
	snprintf(path, sizeof path, "%s/ia.npy", test_dir);
	assert_int_equal(npy_write(path, &a, 1, &d), 0);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run graph --graph id.txt --in a=ia.npy --out "
	                         "b=ib.npy --out c=ic.npy --threads 1"),
	                 0);
	NpyArray b, c;
	snprintf(path, sizeof path, "%s/ib.npy", test_dir);
	assert_int_equal(npy_read(path, &b, &d), 0);
	snprintf(path, sizeof path, "%s/ic.npy", test_dir);
	assert_int_equal(npy_read(path, &c, &d), 0);
	for (int i = 0; i < 6; i++) {
		assert_true(((float *)b.data)[i] == v[i]);
		assert_true(((float *)c.data)[i] == 2 * v[i]);
	}
	npy_free(&b);
	npy_free(&c);
	write_text("c8.txt", "input a f32 [4, 8]\nb = cast a f8_f143\n"
	                     "output b\n");
	assert_int_equal(run_ipu(out, sizeof out, "compile c8.txt -o c8.pkg"),
	                 1);
	expect_in(out, "compile: cast b: no elementwise kernel takes f32 to "
	               "f8_f143 for this op (kernels exist for f32 -> f16, "
	               "f16 -> f32, f16 -> f8_f143");
	write_text("t8.txt", "input a f8_f143 [4, 8]\nb = transpose a [1, 0]\n"
	                     "output b\n");
	assert_int_equal(run_ipu(out, sizeof out, "compile t8.txt -o t8.pkg"),
	                 1);
	expect_in(out, "compile: transpose b: no elementwise kernel takes "
	               "f8_f143 to f8_f143 for this op (kernels exist for f32, "
	               "f16)");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "compile " IPU_SOURCE_DIR
	                         "/fuzz/corpus/fuzz_graph/every_op.graph -o "
	                         "every.pkg"),
	                 0);
	/* --in values beyond f16 */
	write_text("h.txt", "input x f16 [2, 3]\ny = add x x\noutput y\n");
	const float big[6] = {1, 70000, -2, -1e6f, 65504, 3};
	a.data = (void *)big;
	snprintf(path, sizeof path, "%s/big.npy", test_dir);
	assert_int_equal(npy_write(path, &a, 1, &d), 0);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run graph --graph h.txt --in x=big.npy "
	                         "--threads 1"),
	                 0);
	expect_in(out, "ipu run graph: warning: big.npy: 2 of the 6 values of "
	               "x (f16) are beyond what f16 holds and become infinite "
	               "(the first: 70000, at index 1)");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run graph --graph h.txt --in x=ia.npy "
	                         "--threads 1"),
	                 0);
	assert_null(strstr(out, "warning"));
}

int
main(void)
{
	/* test_signal_removes_temps needs these signals' default action, as
	 * a terminal gives it; under nohup or as a background job they come
	 * ignored, and the cleanup rightly leaves an ignored signal alone. */
	static const int defaults[] = {SIGINT, SIGTERM, SIGHUP};
	for (int i = 0; i < 3; i++)
		signal(defaults[i], SIG_DFL);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_outputs_never_inputs),
	    cmocka_unit_test(test_outputs_checked_first),
	    cmocka_unit_test(test_trace_temp_file),
	    cmocka_unit_test(test_signal_removes_temps),
	    cmocka_unit_test(test_endless_inputs),
	    cmocka_unit_test(test_write_error_reason),
	    cmocka_unit_test(test_cycle_limits),
	    cmocka_unit_test(test_expr_overflow),
	    cmocka_unit_test(test_config_overflow),
	    cmocka_unit_test(test_huge_shares),
	    cmocka_unit_test(test_fault_context),
	    cmocka_unit_test(test_inspect_many_kinds),
	    cmocka_unit_test(test_small_items),
	    cmocka_unit_test(test_casts_and_ranges),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

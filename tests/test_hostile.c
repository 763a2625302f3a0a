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

int
main(void)
{
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
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

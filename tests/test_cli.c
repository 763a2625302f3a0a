/*
 * test_cli.c - the `ipu` program end to end: assemble, link, run on the
 * emulator with register and memory dumps, a faulting program, bad usage,
 * `ipu asm` on a .S file through the preprocessor,
 * the tile-amp and gemm benchmarks' JSON, and `ipu compile` (a package
 * that `ipu inspect` reads, parse errors with file:line:col, a graph the
 * compiler refuses, an output that would overwrite the input), and `ipu
 * run graph` on .npy values with its refusals. Runs the built binary.
 */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/util/npy.h"

static int
setup(void **state)
{
	(void)state;
	return test_dir_make("cli");
}

static int
teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

/* Six workers each store 100 + their index; the supervisor sums them. */
static const char sum_prog[] =
    "_start:\n"
    "	setzi $m1, worker\n"
    "	setzi $m2, results\n"
    "	runall $m1, $m2, 1\n"
    "	sync TEXCH_SYNCZONE_LOCAL\n"
    "	setzi $m0, 0\n"
    "	setzi $m3, 5\n"
    "1:	ld32step $m4, $mzero, $m2+=, 1\n"
    "	add $m0, $m0, $m4\n"
    "	brnzdec $m3, 1b\n"
    "	br $lr\n"
    "	.align 8\n"
    "worker:\n"
    "	get $m1, $WSR\n"
    "	and $m1, $m1, CSR_W_WSR__CTXTID_M1__MASK\n"
    "	add $m1, $m1, 100\n"
    "	st32 $m1, $mvertex_base, $mzero, 0\n"
    "	exitz $mzero\n"
    "	.data\n"
    "results: .space 24\n";

static void
test_asm_link_sim(void **state)
{
	(void)state;
	char out[8192];
	write_text("sum.s", sum_prog);
	assert_int_equal(run_ipu(out, sizeof out, "asm sum.s -o sum.o"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "link sum.o -o sum.elf"), 0);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "sim sum.elf --dump-regs --dump-mem "
	                         "results:24"),
	                 2); /* ADDR must be a number */
	int rc = run_ipu(out, sizeof out, "sim sum.elf --dump-regs");
	assert_int_equal(rc, 0);
	/* 100 + 101 + ... + 105 */
	expect_in(out, "status:  returned, tile 0 $m0 = 615 (0x00000267)");
	expect_in(out, "worker 5");
	/* objects run directly too, linked with the default layout */
	assert_int_equal(run_ipu(out, sizeof out, "sim sum.o"), 0);
	expect_in(out, "$m0 = 615");
}

/* `ipu asm` on a .S file: the preprocessor step with -D, a .warning
 * printed with its place, the SDK names; --no-cpp assembles the text as
 * it is, where the #if'd-out line is an error at its line. */
static void
test_asm_preprocessed(void **state)
{
	(void)state;
	char out[8192];
	write_text("k.S", "#include \"arch/gc_tile_defines.h\"\n"
	                  "#if defined(TWO)\n"
	                  "\tadd $m0, $m0, CTXT_WORKERS\n"
	                  "#else\n"
	                  "\tbogus\n"
	                  "#endif\n"
	                  "\t.warning \"check\"\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm k.S -DTWO -o k.o"), 0);
	expect_in(out, "k.S:7:2: warning: check");
	assert_int_equal(run_ipu(out, sizeof out, "asm k.S -o k.o --force"), 1);
	expect_in(out, "k.S:5:2: unknown instruction 'bogus'");
	assert_int_equal(
	    run_ipu(out, sizeof out, "asm k.S -DTWO --no-cpp -o k2.o"), 1);
	expect_in(out, "k.S:5:2: unknown instruction 'bogus'");
	assert_int_equal(run_ipu(out, sizeof out, "asm k.S -I"), 2);
	expect_in(out, "missing value for '-I'");
}

static void
test_sim_fault_and_usage(void **state)
{
	(void)state;
	char out[8192];
	write_text("bad.s", "_start:\n"
	                    "	setzi $m1, 0x4c002\n"
	                    "	ld32 $m2, $m1, $mzero, 0\n"
	                    "	br $lr\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm bad.s -o bad.o"), 0);
	assert_int_equal(run_ipu(out, sizeof out, "sim bad.o"), 1);
	expect_in(out, "supervisor, pc 0x4c004");
	expect_in(out, "ld32 $m2, $m1, $mzero, 0");
	expect_in(out, "INVALID_ADDR: misaligned 4-byte load at 0x4c002");
	expect_in(out, "_start+0x4");
	assert_int_equal(run_ipu(out, sizeof out, "sim bad.o --chip tpu"), 2);
	expect_in(out, "unknown chip 'tpu'");
	assert_int_equal(run_ipu(out, sizeof out, "sim missing.elf"), 1);
	expect_in(out, "missing.elf");
	write_text("loop.s", "_start:\n1:	bri 1b\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm loop.s -o loop.o"), 0);
	assert_int_equal(
	    run_ipu(out, sizeof out, "sim loop.o --max-cycles 100"), 1);
	expect_in(out, "did not finish in 100 cycles");
	assert_int_equal(run_ipu(out, sizeof out, "frobnicate"), 2);
}

/* Four tiles, each sends its id to the next; a trace that is valid JSON
 * with a track per tile. */
static void
test_sim_tiles_trace(void **state)
{
	(void)state;
	char out[8192];
	write_text("ring.s", "_start:\n"
	                     "	get $m0, $TILE_ID\n"
	                     "	setzi $m3, 0x60000\n"
	                     "	st32 $m0, $m3, $mzero, 0\n"
	                     "	add $m1, $m0, 3\n"
	                     "	and $m1, $m1, 3\n" /* from the previous tile */
	                     "	setzi $m2, 0x62000\n"
	                     "	put $INCOMING_SINIT, $m2\n"
	                     "	setzi $m2, 1\n"
	                     "	sync 3\n"
	                     "	put $INCOMING_DCOUNT, $m2\n"
	                     "	put $INCOMING_MUX, $m1\n"
	                     "	send 0, 0x60000 / 4, 1\n"
	                     "	sync 3\n"
	                     "	setzi $m3, 0x62000\n"
	                     "	ld32 $m0, $m3, $mzero, 0\n"

	                     "	br $lr\n");
	assert_int_equal(run_ipu(out, sizeof out, "asm ring.s -o ring.o"), 0);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "sim ring.o --tiles 4 --threads 2 --tile 2 "
	                         "--trace ring.json"),
	                 0);
	expect_in(out, "4 tiles");
	expect_in(out, "tile 2 $m0 = 1 "); /* received from tile 1 */
	char cmd[512];
	snprintf(cmd, sizeof cmd,
	         "/usr/bin/python3 -c \"import json; d = json.load(open("
	         "'%s/ring.json')); e = d['traceEvents']; "
	         "assert len({x['tid'] for x in e if x['ph'] == 'X'}) == 4; "
	         "assert any(x['name'] == 'send' for x in e)\"",
	         test_dir);
	assert_int_equal(system(cmd), 0);
}

static double
json_number(const char *json, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\": ", key);
	const char *p = strstr(json, k);
	if (!p)
		fail_msg("no %s in %s", key, json);
	return strtod(p + strlen(k), NULL);
}

static void
test_bench_json(void **state)
{
	(void)state;
	char out[4096];
	assert_int_equal(run_ipu(out, sizeof out,
	                         "bench tile-amp --rows 96 --dtype f16 --json"),
	                 0);
	double macs = json_number(out, "macs");
	double cycles = json_number(out, "cycles");
	assert_true(macs == 96.0 * 16 * 16);
	assert_true(cycles > macs / 64); /* cannot beat the AMP peak */
	double mpc = json_number(out, "macs_per_cycle");
	assert_true(mpc > macs / cycles - 1e-3 && mpc < macs / cycles + 1e-3);
	assert_true(json_number(out, "max_rel_err") < 1e-3);
	assert_int_equal(
	    run_ipu(out, sizeof out, "bench tile-amp --dtype f8 --chip gc200"),
	    1);
	expect_in(out, "ipu21");
	assert_int_equal(run_ipu(out, sizeof out, "bench tile-amp --rows 0"),
	                 2);
}

static void
test_compile(void **state)
{
	(void)state;
	char out[8192];
	write_text("mm.txt", "# a small matrix product\n"
	                     "input a f16 [64, 40]\n"
	                     "input b f16 [40, 48]\n"
	                     "c = matmul a b\n"
	                     "output c\n");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "compile mm.txt -o mm.pkg --tiles 8 --report"),
	                 0);
	expect_in(out, "plan           gemm 64x48x40 f16");
	expect_in(out, "predicted      ");
	expect_in(out, "tiles used     ");
	expect_in(out, "fullest tile   ");
	expect_in(out, "compile time   ");
	expect_in(out, "placement: ");
	assert_int_equal(run_ipu(out, sizeof out, "inspect mm.pkg --json"), 0);
	expect_in(out, "\"chip\": \"c600\"");
	expect_in(out, "\"name\": \"c\", \"dtype\": \"f16\", \"scale\": 0, "
	               "\"role\": \"output\", \"rows\": 64, \"cols\": 48");
	/* the MFU of a graph of two types: each matmul's MACs at its own
	 * peak (f16 64, f8 128 a tile-cycle), not all at the first one's */
	write_text("mix.txt", "input a f16 [512, 512]\n"
	                      "input b f16 [512, 512]\n"
	                      "c = matmul a b\n"
	                      "input x f8_f143 [1024, 1024]\n"
	                      "input w f8_f143 [1024, 1024]\n"
	                      "y = matmul x w\n"
	                      "output c\n"
	                      "output y\n");
	assert_int_equal(run_ipu(out, sizeof out, "compile mix.txt -o mix.pkg"),
	                 0);
	const char *pc = strstr(out, "predicted      "),
	           *pm = strstr(out, "predicted MFU  ");
	assert_non_null(pc);
	assert_non_null(pm);
	double cycles = strtod(pc + 15, NULL), mfu = strtod(pm + 15, NULL);
	double ideal = 512.0 * 512 * 512 / 64 + 1024.0 * 1024 * 1024 / 128;
	assert_true(cycles > 0);
	assert_true(fabs(mfu - 100 * ideal / (cycles * 1472)) <= 0.006);
	/* two errors, both reported with their place and a caret */
	write_text("bad.txt", "input a f16 [64, 40]\n"
	                      "input b f16 [41, 48]\n"
	                      "c = matmul a b\n"
	                      "d = frob a\n"
	                      "output c\n");
	assert_int_equal(run_ipu(out, sizeof out, "compile bad.txt -o bad.pkg"),
	                 1);
	expect_in(out, "bad.txt:3:5: matmul: inner dimensions differ");
	expect_in(out, "bad.txt:4:5: expected an op name, found 'frob'");
	expect_in(out, "  d = frob a\n      ^");
	/* valid, but not something the compiler does yet */
	write_text("bmm.txt", "input x f8_f143 [32, 32]\n"
	                      "input a f8_f143 [32, 32]\n"
	                      "c = cast x f16\n"
	                      "y = matmul x a transpose_a=1\n"
	                      "output y\n"
	                      "output c\n");
	assert_int_equal(run_ipu(out, sizeof out, "compile bmm.txt -o bmm.pkg"),
	                 1);
	expect_in(out, "is f8, transposed and already on the device");
	assert_int_equal(run_ipu(out, sizeof out, "inspect bmm.pkg"), 1);
	/* a model that does not fit: the worst tiles, then a count (each
	 * tensor under the chip's memory, both together over it: a cast
	 * plans and places in a second where a matmul of that size took a
	 * minute, ten under the sanitizers) */
	write_text("big.txt", "input a f32 [4096, 45056]\n"
	                      "c = cast a f16\n"
	                      "output c\n");
	assert_int_equal(run_ipu(out, sizeof out, "compile big.txt -o big.pkg"),
	                 1);
	expect_in(out, "tiles do not fit; the worst: tile ");
	expect_in(out, "bytes more than the 638,976 available");
	expect_in(out, "more tiles that do not fit\n");
	/* never over an input, whatever the spelling */
	assert_int_equal(run_ipu(out, sizeof out, "compile mm.txt -o ./mm.txt"),
	                 2);
	expect_in(out, "refusing to overwrite");
	assert_int_equal(run_ipu(out, sizeof out, "compile mm.txt"), 2);
	assert_int_equal(
	    run_ipu(out, sizeof out, "compile mm.txt -o x.pkg --chip tpu"), 2);
}

static void
test_bench_gemm_json(void **state)
{
	(void)state;
	char out[4096];
	assert_int_equal(run_ipu(out, sizeof out,
	                         "bench gemm --m 64 --n 48 --k 40 --tiles 8 "
	                         "--threads 2 --json"),
	                 0);
	expect_in(out, "\"bench\": \"gemm\"");
	expect_in(out, "\"dtype\": \"f16\"");
	double cycles = json_number(out, "cycles");
	double pred = json_number(out, "predicted_cycles");
	double tiles = json_number(out, "tiles");
	assert_true(json_number(out, "m") == 64 &&
	            json_number(out, "n") == 48 && json_number(out, "k") == 40);
	assert_true(tiles >= 1 && tiles <= 8);
	assert_true(cycles * tiles * 64 >= 64.0 * 48 * 40);
	double mfu = json_number(out, "mfu");
	double want = 64.0 * 48 * 40 / (cycles * 1472 * 64);
	assert_true(mfu > want - 1e-4 && mfu < want + 1e-4);
	double pe = json_number(out, "pred_error");
	assert_true(pe > pred / cycles - 1 - 1e-3 &&
	            pe < pred / cycles - 1 + 1e-3);
	assert_true(json_number(out, "max_rel_err") < 1e-2);
	assert_true(json_number(out, "ref_rows") == 64);
	assert_true(json_number(out, "compile_ms") > 0);
	assert_true(json_number(out, "peak_tile_bytes") > 0);
	assert_true(json_number(out, "host_seconds") >= 0);
	/* through the card model, named as run graph names it: the same
	 * cycles and error, and the register log */
	char model[4096], cmd[512];
	assert_int_equal(run_ipu(model, sizeof model,
	                         "bench gemm --m 64 --n 48 --k 40 --tiles 8 "
	                         "--threads 2 --json --device "
	                         "model:c600:log=gemm.log"),
	                 0);
	assert_true(json_number(model, "cycles") == cycles);
	assert_true(json_number(model, "max_rel_err") ==
	            json_number(out, "max_rel_err"));
	snprintf(cmd, sizeof cmd,
	         "grep -q '^mail 4078020e' %s/gemm.log && rm %s/gemm.log",
	         test_dir, test_dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(run_ipu(model, sizeof model,
	                         "bench gemm --m 16 --n 16 --k 16 --device "
	                         "model:gc200"),
	                 2);
	expect_in(model, "--device wants sim, model, model:c600 or hw:N");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "bench gemm --m 16 --n 16 --k 16 --dtype f8 "
	                         "--chip gc200"),
	                 1);
	expect_in(out, "ipu21");
	assert_int_equal(run_ipu(out, sizeof out, "bench gemm --m 0"), 2);
}

static void
save_npy(const char *name, const float *v, int rank, uint64_t d0, uint64_t d1)
{
	NpyArray a = {.dtype = NPY_F32,
	              .rank = rank,
	              .shape = {d0, d1},
	              .data = (void *)v};
	char path[256];
	snprintf(path, sizeof path, "%s/%s", test_dir, name);
	Diag d;
	assert_int_equal(npy_write(path, &a, 1, &d), 0);
}

/* ipu run graph through the card model (--device model:c600): the same
 * output file, byte for byte, and the same cycles as on the emulator,
 * and the log of every register access; what --device refuses. */
static void
test_run_graph_device(void **state)
{
	(void)state;
	char out[8192], sim[8192];
	write_text("dm.txt", "input a f16 [32, 24]\nweight b f16 [24, 16]\n"
	                     "c = matmul a b\ny = add c c\noutput y\n");
	float a[32 * 24], b[24 * 16];
	for (int i = 0; i < 32 * 24; i++)
		a[i] = (float)(i % 7) - 3;
	for (int i = 0; i < 24 * 16; i++)
		b[i] = (float)(i % 5) * 0.25f;
	save_npy("da.npy", a, 2, 32, 24);
	save_npy("db.npy", b, 2, 24, 16);
	const char *run = "run graph --graph dm.txt --in a=da.npy --in "
	                  "b=db.npy --force --threads 1 --out";
	char args[512];
	snprintf(args, sizeof args, "%s y=ys.npy", run);
	assert_int_equal(run_ipu(sim, sizeof sim, args), 0);
	snprintf(args, sizeof args, "%s y=ym.npy --device model:c600:log=d.log",
	         run);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	assert_true(run_cycles(sim) > 0);
	assert_int_equal(run_cycles(out), run_cycles(sim));
	char cmd[512];
	snprintf(cmd, sizeof cmd,
	         "cd %s && cmp ys.npy ym.npy && grep -q '^ioctl c008ed0a "
	         "USER_ATTACH$' d.log && grep -q '^mail 4078020e' d.log && "
	         "grep -q '<- 00000001 HSP_GS1' d.log && grep -q "
	         "'CTXT_STATUS' d.log",
	         test_dir);
	assert_int_equal(system(cmd), 0);
	/* the log is never overwritten */
	assert_int_equal(run_ipu(out, sizeof out, args), 1);
	expect_in(out, "nothing is overwritten");
	/* a configuration capture replayed first: one write to CCSR; and
	 * one whose second write is outside the BAR, refused whole */
	for (int k = 0; k < 2; k++) {
		uint8_t cfg[28] = "IPUCFG1";
		uint32_t w[4] = {k ? 2 : 1, 0x2000, 0x5, 0x80000};
		for (int i = 0; i < 4; i++)
			for (int b = 0; b < 4; b++)
				cfg[8 + 4 * i + b] = (uint8_t)(w[i] >> 8 * b);
		char path[300];
		snprintf(path, sizeof path, "%s/c%d.cfg", test_dir, k);
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(cfg, 1, k ? 28 : 20, f), k ? 28 : 20);
		fclose(f);
	}
	snprintf(args, sizeof args,
	         "%s y=yc.npy --device model:c600:config=c0.cfg:log=c.log",
	         run);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	assert_int_equal(run_cycles(out), run_cycles(sim));
	snprintf(cmd, sizeof cmd,
	         "cd %s && cmp ys.npy yc.npy && grep -q '^w 02000 <- 00000005 "
	         "CCSR$' c.log",
	         test_dir);
	assert_int_equal(system(cmd), 0);
	snprintf(args, sizeof args,
	         "%s y=yc.npy --device model:c600:config=c1.cfg", run);
	assert_int_equal(run_ipu(out, sizeof out, args), 1);
	expect_in(out, "c1.cfg: write 1 is at offset 0x80000, not a word of "
	               "the 0x80000-byte BAR; nothing was written");
	snprintf(args, sizeof args,
	         "%s y=yc.npy --device model:c600:config=nothere.cfg", run);
	assert_int_equal(run_ipu(out, sizeof out, args), 1);
	expect_in(out, "configuration capture: ");
	expect_in(out, "nothere.cfg");
	static const struct {
		const char *device;
		int rc;
		const char *needle;
	} bad[] = {
	    {"model:gc200", 2, "the card model is of the C600 only"},
	    {"model:c600:speed=2", 2, "'speed=2' is not :config=FILE"},
	    {"card", 2, "expected sim, sim:CHIP, model:c600 or hw:N"},
	    {"hw:x", 2, "expected hw:N"},
	    {"sim:c700", 2, "unknown chip"},
	    {"model:c600 --timing slow", 1, "nominal timing only"},
	    {"model:c600 --profile p", 1, "need the emulator"},
	    {"hw:0", 1, "/ipu0 does not exist: no C600 card"},
	};
	setenv("IPU_DEV_DIR", "/nonexistent/ipu-test", 1);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(args, sizeof args, "%s y=yb.npy --device %s", run,
		         bad[i].device);
		assert_int_equal(run_ipu(out, sizeof out, args), bad[i].rc);
		expect_in(out, bad[i].needle);
	}
	unsetenv("IPU_DEV_DIR");
}

/* x * w + x, f32, on six values; refusals before anything runs. */
static void
test_run_graph(void **state)
{
	(void)state;
	char out[8192];
	write_text("g.txt", "input x f32 [2, 3]\nweight w f32 [3]\n"
	                    "m = mul x w\ny = add m x\noutput y\n");
	const float x[6] = {1, -2, 0.5f, 3, 0.25f, -1}, w[3] = {2, -1, 4};
	save_npy("x.npy", x, 2, 2, 3);
	save_npy("w.npy", w, 1, 3, 0);
	save_npy("w6.npy", x, 2, 3, 2);
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run graph --graph g.txt --in x=x.npy "
	                         "--in w=w.npy --out y=y.npy --threads 1"),
	                 0);
	expect_in(out, "cycles");
	char path[256];
	snprintf(path, sizeof path, "%s/y.npy", test_dir);
	NpyArray y;
	Diag d;
	assert_int_equal(npy_read(path, &y, &d), 0);
	assert_int_equal(y.rank, 2);
	assert_int_equal(y.shape[0], 2);
	assert_int_equal(y.shape[1], 3);
	for (int i = 0; i < 6; i++) /* exact in f32 */
		assert_true(((float *)y.data)[i] == x[i] * w[i % 3] + x[i]);
	npy_free(&y);

	/* refusals: rc 1 with the reason, y.npy untouched */
	static const struct {
		const char *args, *needle;
	} bad[] = {
	    {"--in x=x.npy --out y=y2.npy", "weight w f32 [3] has no values"},
	    {"--in x=x.npy --in w=w6.npy", "tensor w needs float32 or float16 "
	                                   "[3]"},
	    {"--in x=x.npy --in w=w.npy --out y=y.npy", "exists"},
	    {"--in x=x.npy --in w=w.npy --out z=z.npy", "no tensor z"},
	    {"--in x=x.npy --in w=w.npy --out m=m.npy", "not an output"},
	    {"--in x=x.npy --in w=w.npy --in m=x.npy", "computed by the graph"},
	    {"--in x=x.npy --in x=x.npy --in w=w.npy", "given twice"},
	    {"--in x=none.npy --in w=w.npy", "none.npy"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char args[256];
		snprintf(args, sizeof args, "run graph --graph g.txt %s",
		         bad[i].args);
		assert_int_equal(run_ipu(out, sizeof out, args), 1);
		expect_in(out, bad[i].needle);
	}
	assert_int_equal(npy_read(path, &y, &d), 0);
	assert_true(((float *)y.data)[1] == x[1] * w[1] + x[1]);
	npy_free(&y);
	/* the package cache: a second run reads it, a damaged entry is
	 * compiled again, another graph gets its own entry */
	const char *cached =
	    "run graph --graph g.txt --in x=x.npy --in w=w.npy "
	    "--out y=c.npy --force --cache cache/pkgs";
	assert_int_equal(run_ipu(out, sizeof out, cached), 0);
	assert_null(strstr(out, "from the cache"));
	assert_int_equal(run_ipu(out, sizeof out, cached), 0);
	expect_in(out, "(package from the cache)");
	char cmd[512];
	snprintf(cmd, sizeof cmd,
	         "for f in %s/cache/pkgs/*.pkg; do echo damaged > $f; done",
	         test_dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(run_ipu(out, sizeof out, cached), 0);
	assert_null(strstr(out, "from the cache"));
	snprintf(path, sizeof path, "%s/c.npy", test_dir);
	assert_int_equal(npy_read(path, &y, &d), 0);
	for (int i = 0; i < 6; i++)
		assert_true(((float *)y.data)[i] == x[i] * w[i % 3] + x[i]);
	npy_free(&y);
	write_text("g2.txt", "input x f32 [2, 3]\nweight w f32 [3]\n"
	                     "m = mul x w\ny = add m m\noutput y\n");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "run graph --graph g2.txt --in x=x.npy --in "
	                         "w=w.npy --cache cache/pkgs"),
	                 0);
	snprintf(cmd, sizeof cmd, "test $(ls %s/cache/pkgs/*.pkg | wc -l) = 2",
	         test_dir);
	assert_int_equal(system(cmd), 0);
	/* four more graphs: the cache keeps the RUNNER_CACHE_KEEP (4) newest,
	 * each with its sidecar */
	for (int i = 3; i <= 6; i++) {
		char text[160], args[160];
		snprintf(text, sizeof text,
		         "input x f32 [2, 3]\nweight w f32 [3]\nm = mul x w\n"
		         "y%d = add m x\noutput y%d\n",
		         i, i);
		write_text("gi.txt", text);
		snprintf(args, sizeof args,
		         "run graph --graph gi.txt --in x=x.npy --in w=w.npy "
		         "--cache cache/pkgs");
		assert_int_equal(run_ipu(out, sizeof out, args), 0);
	}
	snprintf(cmd, sizeof cmd,
	         "test $(ls %s/cache/pkgs/*.pkg | wc -l) = 4 && "
	         "test $(ls %s/cache/pkgs/*.txt | wc -l) = 4",
	         test_dir, test_dir);
	assert_int_equal(system(cmd), 0);

	assert_int_equal(run_ipu(out, sizeof out, "run graph --in x"), 2);
	assert_int_equal(run_ipu(out, sizeof out, "run graph --in x=x.npy"), 2);
	expect_in(out, "--graph is needed");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_asm_link_sim),
	    cmocka_unit_test(test_asm_preprocessed),
	    cmocka_unit_test(test_sim_fault_and_usage),
	    cmocka_unit_test(test_sim_tiles_trace),

	    cmocka_unit_test(test_bench_json),
	    cmocka_unit_test(test_compile),
	    cmocka_unit_test(test_bench_gemm_json),
	    cmocka_unit_test(test_run_graph),
	    cmocka_unit_test(test_run_graph_device),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

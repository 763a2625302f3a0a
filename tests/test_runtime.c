/*
 * test_runtime.c - the runtime API (include/ipu/runtime.h) through the
 * emulator backend: device names, loading images built at test time,
 * tensors by name and address, host transfers in host syncs, per-tile
 * counters, and one test per error kind.
 *
 * Expected values are computed here from the program's definition (each
 * tile doubles its words and adds its id) and cycle counts are derived by
 * hand from the issue model (docs/emulator.md: the supervisor issues one
 * instruction per cycle when no worker runs, waits D cycles for a value
 * it has just written, B after a taken branch, P after a CSR write; a
 * worker issues once every 6 cycles and starts R cycles after run) and
 * the chip model (docs/chip.md); comments show the arithmetic, with the
 * nominal timing profile's D = B = P = R = 6 (docs/fidelity.md).
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ipu/runtime.h>

#include "../src/asm/asm.h"

/* The nominal rules the counts below follow (docs/fidelity.md). */
#define RULE(r) ((uint64_t)chip_rule(chip_default(), TIMING_##r))
#define D RULE(SUP_DEP)
#define B RULE(SUP_BRANCH)
#define P RULE(SUP_PUT)
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* ELF bytes of an assembled program: linked into an image (ET_EXEC) or,
 * with link = 0, the relocatable object itself. */
static uint8_t *
build(const char *text, int link, size_t *len)
{
	Obj *o;
	DiagList errs = {0};
	AsmOptions opt = {0};
	if (asm_source("test.s", text, strlen(text), &opt, &o, &errs)) {
		char buf[1024];
		diag_format(&errs.v[0], buf, sizeof buf);
		fail_msg("%s", buf);
	}
	Diag d;
	uint8_t *data;
	if (link) {
		Obj *exe;
		LinkOptions lo = {0};
		assert_int_equal(link_objects(&o, 1, &lo, &exe, &d), 0);
		assert_int_equal(obj_write(exe, &data, len, &d), 0);
		obj_free(exe);
	} else {
		assert_int_equal(obj_write(o, &data, len, &d), 0);
	}
	obj_free(o);
	return data;
}

static ipu_device *
open_ok(const char *name)
{
	ipu_error err;
	ipu_device *dev = ipu_open(name, &err);
	if (!dev)
		fail_msg("ipu_open(%s): %s", name, err.msg);
	assert_int_equal(err.kind, IPU_ERR_NONE);
	return dev;
}

static void
load_ok(ipu_device *dev, const char *text, int link, uint32_t first, uint32_t n)
{
	size_t len;
	uint8_t *elf = build(text, link, &len);
	ipu_error err;
	if (ipu_load_image(dev, elf, len, first, n, &err))
		fail_msg("ipu_load_image: %s", err.msg);
	free(elf);
}

static void
run_ok(ipu_device *dev)
{
	ipu_error err;
	if (ipu_run(dev, 0, &err))
		fail_msg("ipu_run: %s: %s", ipu_error_kind_name(err.kind),
		         err.msg);
	assert_int_equal(err.kind, IPU_ERR_NONE);
}

/* Fails unless `r` and err are of kind `kind` and msg contains needle. */
static void
expect_err(int r, const ipu_error *err, ipu_error_kind kind, const char *needle)
{
	if (r != (int)kind || err->kind != kind || !strstr(err->msg, needle))
		fail_msg("got %s (%d) '%s', want %s with '%s'",
		         ipu_error_kind_name(err->kind), r, err->msg,
		         ipu_error_kind_name(kind), needle);
}

static void
test_open_names(void **state)
{
	(void)state;
	ipu_device_info info;
	ipu_device *dev = open_ok("sim:c600");
	assert_int_equal(ipu_info(dev, &info, NULL), 0);
	assert_string_equal(info.backend, "sim");
	assert_string_equal(info.chip, "c600");
	assert_int_equal(info.tiles, 1472);
	assert_int_equal(info.mem_base, 0x4c000);
	assert_int_equal(info.mem_end, 0xe8000);
	assert_int_equal(info.exec_end, 0x80000);
	assert_true(info.threads >= 1 && info.threads <= 64);
	assert_int_equal(info.trace, 0);
	ipu_close(dev);

	dev = open_ok("sim:gc200:tiles=16:threads=3:trace");
	assert_int_equal(ipu_info(dev, &info, NULL), 0);
	assert_string_equal(info.chip, "gc200");
	assert_int_equal(info.tiles, 16);
	assert_int_equal(info.threads, 3);
	assert_int_equal(info.trace, 1);
	ipu_close(dev);

	dev = open_ok("sim:c600:tiles=1472");
	ipu_close(dev);
	ipu_close(NULL);

	static const struct {
		const char *name;
		ipu_error_kind kind;
		const char *needle;
	} bad[] = {
	    {"", IPU_ERR_ARGUMENT, "unknown device ''"},
	    {"sim", IPU_ERR_ARGUMENT, "names no chip"},
	    {"sim:", IPU_ERR_ARGUMENT, "names no chip"},
	    {"sim:c700", IPU_ERR_ARGUMENT, "unknown chip 'c700' (known: "},
	    {"sim:c600:tiles=0", IPU_ERR_ARGUMENT, "'tiles=0' must be 1..1472"},
	    {"sim:c600:tiles=1473", IPU_ERR_ARGUMENT, "must be 1..1472"},
	    {"sim:c600:tiles=", IPU_ERR_ARGUMENT, "must be 1..1472"},
	    {"sim:c600:tiles=-4", IPU_ERR_ARGUMENT, "must be 1..1472"},
	    {"sim:c600:tiles=4x", IPU_ERR_ARGUMENT, "must be 1..1472"},
	    {"sim:c600:threads=65", IPU_ERR_ARGUMENT, "must be 1..64"},
	    {"sim:c600:fast", IPU_ERR_ARGUMENT, "unknown option 'fast'"},
	    {"ipu:c600", IPU_ERR_ARGUMENT, "unknown device 'ipu:c600'"},
	    {"hw:0", IPU_ERR_NO_BACKEND, "/ipu0 does not exist: no C600"},
	    {"hw:7:tiles=2", IPU_ERR_NO_BACKEND, "/ipu7 does not exist"},
	    {"hw", IPU_ERR_ARGUMENT, "names no card"},
	    {"hw:c600", IPU_ERR_ARGUMENT, "expected hw:N"},
	    {"hw:256", IPU_ERR_ARGUMENT, "(0..255)"},
	    {"hw:0:trace", IPU_ERR_ARGUMENT, "unknown option 'trace'"},
	    {"sim::c600", IPU_ERR_ARGUMENT, "names no chip"},
	    {"sim:c600:", IPU_ERR_ARGUMENT, "unknown option ''"},
	};
	/* hw:N looks for ipuN here: no card, whatever the machine */
	setenv("IPU_DEV_DIR", "/nonexistent/ipu-test", 1);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ipu_error err;
		dev = ipu_open(bad[i].name, &err);
		assert_null(dev);
		expect_err((int)err.kind, &err, bad[i].kind, bad[i].needle);
		assert_int_equal(err.tile, IPU_UNKNOWN);
	}
	ipu_error err;
	assert_null(ipu_open(NULL, &err));
	expect_err((int)err.kind, &err, IPU_ERR_ARGUMENT, "name is NULL");
	assert_null(ipu_open("hw:0", NULL)); /* err may be NULL */
	unsetenv("IPU_DEV_DIR");
	assert_string_equal(ipu_error_kind_name(IPU_ERR_NO_BACKEND),
	                    "no backend");
}

/* Each tile doubles the N words of `data` and adds its tile id; $m0 (the
 * exit status) is the tile id. 4 + 5N instructions, one per cycle. */
static const char double_prog[] = "	.equ N, 16\n"
                                  "	.text\n"
                                  "	.globl _start\n"
                                  "_start:\n"
                                  "	get $m0, $TILE_ID\n"
                                  "	setzi $m1, data\n"
                                  "	setzi $m2, N - 1\n"
                                  "1:	ld32 $m3, $m1, $mzero, 0\n"
                                  "	add $m3, $m3, $m3\n"
                                  "	add $m3, $m3, $m0\n"
                                  "	st32step $m3, $mzero, $m1+=, 1\n"
                                  "	brnzdec $m2, 1b\n"
                                  "	br $lr\n"
                                  "	.data\n"
                                  "	.align 8\n"
                                  "	.globl data\n"
                                  "	.type data, @object\n"
                                  "data:\n"
                                  "	.space N * 4\n"
                                  "	.size data, . - data\n";
enum { N = 16 };

static uint32_t
input_word(uint32_t tile, uint32_t i)
{
	return tile * 0x01000193u + i * 0x9e3779b9u;
}

static void
double_on_tiles(ipu_device *dev, int link, uint32_t first, uint32_t ntiles)
{
	load_ok(dev, double_prog, link, first, ntiles);
	for (uint32_t t = first; t < first + ntiles; t++) {
		uint32_t in[N];
		for (uint32_t i = 0; i < N; i++)
			in[i] = input_word(t, i);
		ipu_error err;
		if (ipu_write_symbol(dev, t, "data", in, sizeof in, &err))
			fail_msg("%s", err.msg);
	}
	run_ok(dev);
	for (uint32_t t = first; t < first + ntiles; t++) {
		uint32_t out[N];
		assert_int_equal(
		    ipu_read_symbol(dev, t, "data", out, sizeof out, NULL), 0);
		for (uint32_t i = 0; i < N; i++)
			assert_int_equal(out[i], 2 * input_word(t, i) + t);
		ipu_counters c;
		assert_int_equal(ipu_tile_counters(dev, t, &c, NULL), 0);
		/* get, setzi, setzi; the loop starts when $m1 is out of
		 * the pipeline (1 + D); a pass: ld, add, add, st32step each
		 * reading the one before (3D), brnzdec, then the next ld
		 * when both the taken branch and the stepped $m1 allow it;
		 * the last pass ends with brnzdec, br $lr: 403 cycles */
		assert_int_equal(c.cycles,
		                 1 + D + (N - 1) * (3 * D + MAX(1 + B, D)) +
		                     3 * D + 3);
		assert_int_equal(c.cycles, 403);
		assert_int_equal(c.bundles, 4 + 5 * N);
		assert_int_equal(c.worker_issues, 0);
		assert_int_equal(c.loaded, 1);
		assert_int_equal(c.returned, 1);
		assert_int_equal(c.exit_status, t);
	}
	assert_int_equal(ipu_cycles(dev), 403);
	assert_int_equal(ipu_host_cycles(dev), 0);
}

static void
test_double_by_symbol(void **state)
{
	(void)state;
	ipu_device *dev = open_ok("sim:c600:tiles=8:threads=2");
	/* the symbol as the linker placed it: after the code */
	load_ok(dev, double_prog, 1, 0, 1);
	uint32_t addr, size;
	assert_int_equal(ipu_symbol(dev, 0, "data", &addr, &size, NULL), 0);
	assert_int_equal(size, 4 * N);
	assert_true(addr > 0x4c000 && addr % 8 == 0);
	ipu_close(dev);

	/* an image on tiles 2..5, then a relocatable object on 0..3 */
	dev = open_ok("sim:c600:tiles=8:threads=2");
	double_on_tiles(dev, 1, 2, 4);
	ipu_counters c;
	assert_int_equal(ipu_tile_counters(dev, 1, &c, NULL), 0);
	assert_int_equal(c.cycles + c.bundles + c.loaded + c.returned, 0);
	double_on_tiles(dev, 0, 0, 4);
	/* the second load reset the device: tile 5 holds nothing now */
	assert_int_equal(ipu_tile_counters(dev, 5, &c, NULL), 0);
	assert_int_equal(c.loaded, 0);
	assert_int_equal(c.cycles, 0);
	uint32_t w = 1;
	assert_int_equal(ipu_read(dev, 5, addr, &w, 4, NULL), 0);
	assert_int_equal(w, 0);
	/* by address: the same words as by name */
	uint32_t a[N], b[N];
	assert_int_equal(ipu_read(dev, 3, addr, a, sizeof a, NULL), 0);
	assert_int_equal(ipu_read_symbol(dev, 3, "data", b, sizeof b, NULL), 0);
	assert_memory_equal(a, b, sizeof a);
	/* what was written is read back, on a tile without an image too */
	const uint8_t bytes[5] = {1, 2, 3, 4, 5};
	uint8_t back[5];
	assert_int_equal(ipu_write(dev, 7, 0xe7ffb, bytes, 5, NULL), 0);
	assert_int_equal(ipu_read(dev, 7, 0xe7ffb, back, 5, NULL), 0);
	assert_memory_equal(back, bytes, 5);
	ipu_close(dev);
}

/* Per-tile counters: tiles 0..3 count down from their id; tiles 4 and 5
 * run one worker of K nops. */
static const char countdown_prog[] = "_start:\n"
                                     "	get $m0, $TILE_ID\n"
                                     "	mov $m1, $m0\n"
                                     "1:	brnzdec $m1, 1b\n"
                                     "	br $lr\n";
static const char worker_prog[] = "	.equ K, 5\n"
                                  "_start:\n"
                                  "	setzi $m1, worker\n"
                                  "	run $m1, $mzero, 0\n"
                                  "	sync 2\n"
                                  "	br $lr\n"
                                  "	.align 8\n"
                                  "worker:\n"
                                  "	.rept K\n"
                                  "	nop\n"
                                  "	.endr\n"
                                  "	exitz $mzero\n";

static void
test_tile_counters(void **state)
{
	(void)state;
	const uint64_t K = 5;
	ipu_device *dev = open_ok("sim:gc200:tiles=6");
	load_ok(dev, countdown_prog, 1, 0, 4);
	load_ok(dev, worker_prog, 0, 4, 2);
	run_ok(dev);
	ipu_counters c;
	for (uint32_t t = 0; t < 4; t++) {
		/* get at 0, mov (reading $m0) at D, brnzdec (reading $m1)
		 * at 2D, t times more max(B, D) apart, br, end: 14 + 6t */
		assert_int_equal(ipu_tile_counters(dev, t, &c, NULL), 0);
		assert_int_equal(c.cycles, 2 * D + t * MAX(B, D) + 2);
		assert_int_equal(c.cycles, 14 + 6 * t);
		assert_int_equal(c.bundles, t + 4);
		assert_int_equal(c.worker_issues, 0);
		assert_int_equal(c.exit_status, t);
	}
	/* setzi at 0, run (reading $m1) at D = 6: worker 0 starts R = 6
	 * cycles later, at its slot 0's turn 12; it issues K nops and exitz
	 * 6 cycles apart, exiting at 12 + 6K; the supervisor's sync (issued
	 * at 7) leaves 6 cycles after that, br $lr issues there and the
	 * tile ends one cycle later: 19 + 6K. */
	for (uint32_t t = 4; t < 6; t++) {
		assert_int_equal(ipu_tile_counters(dev, t, &c, NULL), 0);
		assert_int_equal(c.cycles, 19 + 6 * K);
		assert_int_equal(c.bundles, 4 + K + 1);
		assert_int_equal(c.worker_issues, K + 1);
		assert_int_equal(c.returned, 1);
	}
	assert_int_equal(ipu_cycles(dev), 19 + 6 * K);
	ipu_close(dev);
}

/* The host writes each tile's `buf` at host sync 0, the tile adds 1 to
 * every word, the host reads it back at host sync 1. */
static const char stream_prog[] = "	.equ WORDS, 64\n"
                                  "_start:\n"
                                  "	sync 5\n"
                                  "	setzi $m1, buf\n"
                                  "	setzi $m2, WORDS - 1\n"
                                  "1:	ld32 $m3, $m1, $mzero, 0\n"
                                  "	add $m3, $m3, 1\n"
                                  "	st32step $m3, $mzero, $m1+=, 1\n"
                                  "	brnzdec $m2, 1b\n"
                                  "	sync 5\n"
                                  "	br $lr\n"
                                  "	.bss\n"
                                  "	.align 8\n"
                                  "buf:\n"
                                  "	.space WORDS * 4\n"
                                  "	.size buf, . - buf\n";

/* The same on sim: and through the card model, whose host streams go
 * over host pages, a host phase (an HSP_GS2 mark) per host sync. */
static void
test_stream_host_syncs(void **state)
{
	(void)state;
	enum { T = 4, WORDS = 64 };
	assert_int_equal(test_dir_make("stream"), 0);
	char model[128];
	snprintf(model, sizeof model, "model:c600:tiles=4:log=%s/m.log",
	         test_dir);
	const char *const names[] = {"sim:c600:tiles=4", model};
	for (int k = 0; k < 2; k++) {
		ipu_device *dev = open_ok(names[k]);
		load_ok(dev, stream_prog, 1, 0, T);
		uint32_t buf;
		assert_int_equal(ipu_symbol(dev, 0, "buf", &buf, NULL, NULL),
		                 0);
		uint32_t in[WORDS], out[T][WORDS];
		memset(out, 0, sizeof out);
		for (uint32_t t = 0; t < T; t++) {
			for (uint32_t i = 0; i < WORDS; i++)
				in[i] = 1000u * t + 7 * i;
			/* `in` is copied: reuse it for the next tile */
			assert_int_equal(ipu_stream_write(dev, 0, t, buf, in,
			                                  sizeof in, NULL),
			                 0);
			assert_int_equal(ipu_stream_read(dev, 1, t, buf, out[t],
			                                 sizeof out[t], NULL),
			                 0);
		}
		run_ok(dev);
		for (uint32_t t = 0; t < T; t++)
			for (uint32_t i = 0; i < WORDS; i++)
				assert_int_equal(out[t][i],
				                 1000u * t + 7 * i + 1);
		/* Each host sync: 3 us at 1.485 GHz (4455 cycles) plus 1024
		 * bytes, over PCIe at 22 GB/s: 1024 / 22e9 * 1.485e9 = 69.12
		 * -> 70 cycles (more than 256 bytes into one tile at 4 a
		 * cycle: 64). */
		const uint64_t sync = 4455 + 70;
		assert_int_equal(ipu_host_cycles(dev), 2 * sync);
		/* released from the first sync at 4525: setzi, setzi; the
		 * loop from when $m1 is ready (D); a pass: ld, add, st32step
		 * each reading the one before (2D), brnzdec, the next ld
		 * max(1 + B, D) later; the last: brnzdec, the second sync;
		 * then br $lr */
		assert_int_equal(ipu_cycles(dev),
		                 sync + D +
		                     (WORDS - 1) * (2 * D + MAX(1 + B, D)) +
		                     2 * D + 2 + sync + 1);
		ipu_close(dev);
	}
	/* the register-level traffic: a mark 1 in HSP_GS2 for each of the
	 * two host syncs, cleared by the card; four buffers attached (the
	 * two loads' transport buffers, the two host pages) */
	char cmd[512];
	snprintf(cmd, sizeof cmd,
	         "cd %s && test $(grep -c '^w 03030 <- 00000001 HSP_GS2$' "
	         "m.log) = 2 && test $(grep -c '^r 03030 -> 00000000 "
	         "HSP_GS2$' m.log) = 2 && test $(grep -c '^ioctl .* "
	         "BUFFER_ATTACH' m.log) = 4",
	         test_dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(test_dir_remove(), 0);
}

static const char fault_prog[] = "_start:\n"
                                 "	get $m0, $TILE_ID\n"
                                 "	cmpeq $m1, $m0, 2\n"
                                 "	brnz $m1, bad\n"
                                 "	br $lr\n"
                                 "bad:\n"
                                 "	ld32 $m2, $mzero, $mzero, 0\n"
                                 "	br $lr\n";

static void
test_fault(void **state)
{
	(void)state;
	ipu_device *dev = open_ok("sim:c600:tiles=4");
	load_ok(dev, fault_prog, 1, 0, 4);
	uint32_t bad;
	assert_int_equal(ipu_symbol(dev, 2, "bad", &bad, NULL, NULL), 0);
	ipu_error err;
	int r = ipu_run(dev, 0, &err);
	expect_err(r, &err, IPU_ERR_FAULT, "outside tile memory");
	assert_int_equal(err.tile, 2);
	assert_int_equal(err.context, 0);
	assert_int_equal(err.pc, bad);
	assert_int_equal(err.address, 0);
	/* get at 0, cmpeq (reading $m0) at D, brnz (reading $m1) at 2D,
	 * taken: the load at 2D + B */
	assert_int_equal(err.cycle, 2 * D + B);
	assert_string_equal(err.fault_name, "INVALID_ADDR");
	assert_int_equal(err.fault_type, 8);
	assert_non_null(strstr(err.msg, "tile 2, supervisor"));
	assert_non_null(strstr(err.msg, "ld32"));
	assert_non_null(strstr(err.msg, "the pc is bad+0x0 in image"));
	assert_int_equal(ipu_cycles(dev), 0);
	/* memory and counters stay readable; a second run is refused */
	ipu_counters c;
	assert_int_equal(ipu_tile_counters(dev, 0, &c, NULL), 0);
	assert_int_equal(c.returned, 1);
	expect_err(ipu_run(dev, 0, &err), &err, IPU_ERR_ARGUMENT,
	           "already run");
	ipu_close(dev);
}

/* Tile 0 syncs in zone 4, the others in zone 3: no barrier completes. */
static const char deadlock_prog[] = "_start:\n"
                                    "	get $m0, $TILE_ID\n"
                                    "	brz $m0, 1f\n"
                                    "	sync 3\n"
                                    "	br $lr\n"
                                    "1:	sync 4\n"
                                    "	br $lr\n";

static void
test_deadlock(void **state)
{
	(void)state;
	ipu_device *dev = open_ok("sim:c600:tiles=3");
	load_ok(dev, deadlock_prog, 1, 0, 3);
	ipu_error err;
	/* tile 1: get, brz (reading $m0) at D = 6, not taken, the sync at
	 * D + 1 = 7; tile 0: the brz taken, its sync at D + B = 12 */
	assert_int_equal(D + 1, 7);
	assert_int_equal(D + B, 12);
	expect_err(ipu_run(dev, 0, &err), &err, IPU_ERR_DEADLOCK,
	           "tile 1 waits in sync 3 since cycle 7 (supervisor, pc "
	           "0x4c008 [0x41800003: sync 3]) but tile 0 waits in sync 4 "
	           "since cycle 12 (supervisor, pc 0x4c010 [0x41800004: sync "
	           "4])");
	assert_int_equal(err.tile, 1);
	/* get, brz (reading $m0) at D, then the sync */
	assert_int_equal(err.cycle, D + 1);
	/* the sync it waits in */
	assert_int_equal(err.context, 0);
	assert_int_equal(err.pc, 0x4c008);
	ipu_close(dev);
}

static void
test_timeout(void **state)
{
	(void)state;
	ipu_device *dev = open_ok("sim:c600:tiles=2");
	load_ok(dev, "_start:\n1:	bri 1b\n", 1, 0, 2);
	ipu_error err;
	expect_err(ipu_run(dev, 1000, &err), &err, IPU_ERR_TIMEOUT,
	           "did not finish in 1000 cycles");
	assert_int_equal(err.tile, 0);
	assert_int_equal(err.cycle, 1000);
	ipu_counters c;
	assert_int_equal(ipu_tile_counters(dev, 1, &c, NULL), 0);
	assert_int_equal(c.cycles, 1000);
	assert_int_equal(c.returned, 0);
	ipu_close(dev);
}

/* Tile 0 sends two words to tile 1, which expects one. The receiver sets
 * its window and mux before the sync that opens the phase and the count
 * right after it (a tile with words due does not arrive at a sync). */
static const char exchange_prog[] = "_start:\n"
                                    "	get $m0, $TILE_ID\n"
                                    "	brnz $m0, receiver\n"
                                    "	sync 3\n"
                                    "	send 1, 0x60000 / 4, 1\n"
                                    "	sync 3\n"
                                    "	br $lr\n"
                                    "receiver:\n"
                                    "	setzi $m2, 0x62000\n"
                                    "	put $INCOMING_SINIT, $m2\n"
                                    "	put $INCOMING_MUX, $mzero\n"
                                    "	setzi $m2, 1\n"
                                    "	sync 3\n"
                                    "	put $INCOMING_DCOUNT, $m2\n"
                                    "	sync 3\n"
                                    "	br $lr\n";

static void
test_exchange_error(void **state)
{
	(void)state;
	ipu_device *dev = open_ok("sim:c600:tiles=2");
	load_ok(dev, exchange_prog, 1, 0, 2);
	ipu_error err;
	expect_err(ipu_run(dev, 0, &err), &err, IPU_ERR_EXCHANGE,
	           "expects none ($INCOMING_DCOUNT = 0)");
	assert_int_equal(err.tile, 1);
	/* Tile 1 reaches the first sync last: get, brnz (reading $m0) at
	 * D, taken; setzi at D + B, put (reading $m2) at 2D + B, put at
	 * 2D + B + P, setzi, the sync at 2D + B + 2P + 1 = 31; released
	 * 126 cycles later at 157, when tile 0 sends, one item a cycle.
	 * Logical tiles 0 and 1 are pair partners, physical 0 and 2: 24
	 * cycles (docs/chip.md). The second item arrives at 157 + 1 + 24. */
	uint64_t release = 2 * D + B + 2 * P + 1 + RULE(SYNC_INTERNAL);
	assert_int_equal(release, 157);
	assert_int_equal(err.cycle, release + 1 + 24);
	/* the receiver's supervisor, waiting in its sync 3 */
	expect_err(IPU_ERR_EXCHANGE, &err, IPU_ERR_EXCHANGE,
	           "tile 1's supervisor, pc 0x4c030 [0x41800003: sync 3] "
	           "(waiting there)");
	assert_int_equal(err.context, 0);
	assert_int_equal(err.pc, 0x4c030);
	assert_string_equal(err.fault_name, "");
	ipu_close(dev);
}

static void
test_bad_images(void **state)
{
	(void)state;
	ipu_device *dev = open_ok("sim:c600:tiles=2");
	ipu_error err;
	const char junk[] = "this is not an ELF file at all";
	expect_err(ipu_load_image(dev, junk, sizeof junk, 0, 1, &err), &err,
	           IPU_ERR_FORMAT, "ipu_load_image: ");
	size_t len;
	uint8_t *elf = build(double_prog, 1, &len);
	expect_err(ipu_load_image(dev, elf, len / 2, 0, 1, &err), &err,
	           IPU_ERR_FORMAT, "ipu_load_image: ");
	/* nothing was loaded */
	expect_err(ipu_run(dev, 0, &err), &err, IPU_ERR_ARGUMENT,
	           "no image is loaded");
	/* from a file */
	char path[512];
	snprintf(path, sizeof path, "%s/test_runtime.elf", IPU_BINARY_DIR);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(elf, 1, len, f), len);
	fclose(f);
	free(elf);
	assert_int_equal(ipu_load_image_file(dev, path, 1, 1, &err), 0);
	uint32_t addr;
	assert_int_equal(ipu_symbol(dev, 1, "data", &addr, NULL, NULL), 0);
	remove(path);
	expect_err(ipu_load_image_file(dev, "/nonexistent/x.elf", 0, 1, &err),
	           &err, IPU_ERR_IO, "/nonexistent/x.elf");
	ipu_close(dev);
}

static void
test_argument_errors(void **state)
{
	(void)state;
	ipu_error err;
	uint32_t w[4] = {0};
	ipu_counters c;
	/* NULL device */
	expect_err(ipu_write(NULL, 0, 0x50000, w, 4, &err), &err,
	           IPU_ERR_ARGUMENT, "ipu_write: dev is NULL");
	expect_err(ipu_run(NULL, 0, &err), &err, IPU_ERR_ARGUMENT,
	           "ipu_run: dev is NULL");
	expect_err(ipu_tile_counters(NULL, 0, &c, &err), &err, IPU_ERR_ARGUMENT,
	           "dev is NULL");
	assert_int_equal(ipu_cycles(NULL), 0);
	assert_int_equal(ipu_info(NULL, NULL, NULL), IPU_ERR_ARGUMENT);

	ipu_device *dev = open_ok("sim:c600:tiles=4");
	/* run before load */
	expect_err(ipu_run(dev, 0, &err), &err, IPU_ERR_ARGUMENT,
	           "ipu_run: no image is loaded");
	expect_err(ipu_stream_write(dev, 0, 0, 0x50000, w, 4, &err), &err,
	           IPU_ERR_ARGUMENT, "no image is loaded");
	/* tiles */
	expect_err(ipu_write(dev, 4, 0x50000, w, 4, &err), &err,
	           IPU_ERR_ARGUMENT,
	           "ipu_write: tile 4 is out of range: device "
	           "'sim:c600:tiles=4' has tiles 0..3");
	assert_int_equal(err.tile, 4);
	expect_err(ipu_tile_counters(dev, 9, &c, &err), &err, IPU_ERR_ARGUMENT,
	           "tile 9 is out of range");
	expect_err(ipu_tile_counters(dev, 0, NULL, &err), &err,
	           IPU_ERR_ARGUMENT, "out is NULL");
	/* byte ranges */
	expect_err(ipu_read(dev, 1, 0x4bffc, w, 8, &err), &err,
	           IPU_ERR_ARGUMENT,
	           "ipu_read: 8 bytes at 0x4bffc are outside the memory of "
	           "tile 1 (0x4c000..0xe8000 on the c600)");
	assert_int_equal(err.address, 0x4bffc);
	expect_err(ipu_write(dev, 1, 0xe7ffc, w, 8, &err), &err,
	           IPU_ERR_ARGUMENT, "8 bytes at 0xe7ffc are outside");
	expect_err(ipu_write(dev, 1, 0x50000, w, SIZE_MAX, &err), &err,
	           IPU_ERR_ARGUMENT, "are outside");
	expect_err(ipu_write(dev, 1, 0x50000, NULL, 4, &err), &err,
	           IPU_ERR_ARGUMENT, "the buffer is NULL");
	assert_int_equal(ipu_write(dev, 1, 0, NULL, 0, &err), 0);
	/* symbols */
	expect_err(ipu_symbol(dev, 0, "data", NULL, NULL, &err), &err,
	           IPU_ERR_ARGUMENT, "tile 0 holds no image");
	load_ok(dev, double_prog, 1, 0, 2);
	expect_err(ipu_symbol(dev, 1, "weights", NULL, NULL, &err), &err,
	           IPU_ERR_ARGUMENT, "defines no symbol 'weights'");
	expect_err(ipu_symbol(dev, 1, NULL, NULL, NULL, &err), &err,
	           IPU_ERR_ARGUMENT, "name is NULL");
	uint32_t big[N + 1] = {0};
	expect_err(ipu_write_symbol(dev, 1, "data", big, sizeof big, &err),
	           &err, IPU_ERR_ARGUMENT,
	           "68 bytes do not fit 'data' on tile 1 (64 bytes");
	/* loads */
	size_t len;
	uint8_t *elf = build(double_prog, 1, &len);
	expect_err(ipu_load_image(dev, elf, len, 1, 2, &err), &err,
	           IPU_ERR_ARGUMENT, "tile 1 already holds image");
	expect_err(ipu_load_image(dev, elf, len, 3, 2, &err), &err,
	           IPU_ERR_ARGUMENT, "2 tiles from tile 3 do not fit");
	expect_err(ipu_load_image(dev, elf, len, 2, 0, &err), &err,
	           IPU_ERR_ARGUMENT, "ntiles is 0");
	expect_err(ipu_load_image(dev, NULL, len, 2, 1, &err), &err,
	           IPU_ERR_ARGUMENT, "data is NULL");
	free(elf);
	/* a stream transfer for a sync that has passed: none has yet; the
	 * trace of a device opened without :trace */
	expect_err(ipu_write_trace(dev, "x.json", &err), &err, IPU_ERR_ARGUMENT,
	           "open it with ':trace'");
	run_ok(dev);
	expect_err(ipu_stream_read(dev, 0, 0, 0x50000, w, 4, &err), &err,
	           IPU_ERR_ARGUMENT, "the program has run");
	/* arguments were rejected without harm: the run was the expected one */
	uint32_t out[N];
	assert_int_equal(ipu_read_symbol(dev, 0, "data", out, sizeof out, NULL),
	                 0);
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(out[i], 0);
	assert_int_equal(ipu_read_symbol(dev, 1, "data", out, sizeof out, NULL),
	                 0);
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(out[i], 1);
	ipu_close(dev);
}

static void
test_trace(void **state)
{
	(void)state;
	ipu_device *dev = open_ok("sim:c600:tiles=2:trace");
	load_ok(dev, stream_prog, 1, 0, 2);
	run_ok(dev);
	char path[512];
	snprintf(path, sizeof path, "%s/test_runtime.trace.json",
	         IPU_BINARY_DIR);
	ipu_error err;
	assert_int_equal(ipu_write_trace(dev, path, &err), 0);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char text[8192];
	size_t n = fread(text, 1, sizeof text - 1, f);
	text[n] = 0;
	fclose(f);
	remove(path);
	assert_int_equal(text[0], '{');
	assert_non_null(strstr(text, "\"tile 1\""));
	assert_non_null(strstr(text, "\"sync\""));
	expect_err(ipu_write_trace(dev, "/nonexistent/dir/t.json", &err), &err,
	           IPU_ERR_IO, "/nonexistent/dir/t.json");
	ipu_close(dev);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_open_names),
	    cmocka_unit_test(test_double_by_symbol),
	    cmocka_unit_test(test_tile_counters),
	    cmocka_unit_test(test_stream_host_syncs),
	    cmocka_unit_test(test_fault),
	    cmocka_unit_test(test_deadlock),
	    cmocka_unit_test(test_timeout),
	    cmocka_unit_test(test_exchange_error),
	    cmocka_unit_test(test_bad_images),
	    cmocka_unit_test(test_argument_errors),
	    cmocka_unit_test(test_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_boot.c - our own tile bootloader (kernels/boot.S) against the card
 * model: installed by the autoloader, fed frames over host buffer 0 batch
 * by batch (hw_load), the programs started at the handoff; and what the
 * host sees when a frame is lost or a tile never gets its last frame.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/asm/asm.h"
#include "../src/bench/bench.h"
#include "../src/kernels/kernels.h"
#include "../src/rt/hw.h"
#include "../src/sim/card.h"
#include "support.h"

enum { WORDS = 600, OUT = 0x60000 }; /* 2400 bytes of data: 3 frames */

static uint32_t
pattern(uint32_t tile, uint32_t i)
{
	return tile * 0x9e3779b9u ^ (i * 2654435761u + 12345u);
}

/* A tile's program: stores $TILE_ID at OUT and returns; its data, WORDS
 * words of pattern(), placed above the bootloader's area. */
static void
program(uint32_t tile, TileImage *img)
{
	const Chip *c = chip_default();
	size_t cap = 300 + WORDS * 24;
	char *src = malloc(cap);
	int n = snprintf(src, cap,
	                 "\t.section .text.prog, \"ax\"\n\t.globl _start\n"
	                 "_start:\n\tget $m0, $TILE_ID\n"
	                 "\tsetzi $m1, %u\n\tst32 $m0, $m1, $mzero, 0\n"
	                 "\tbr $lr\n\t.section .data.d, \"aw\"\n",
	                 OUT);
	for (uint32_t i = 0; i < WORDS; i++)
		n += snprintf(src + n, cap - n, "\t.word %u\n",
		              pattern(tile, i));
	Obj *o, *exe;
	DiagList errs = {0};
	Diag d;
	if (asm_source("p.s", src, strlen(src), NULL, &o, &errs))
		fail_msg("does not assemble: %s", errs.n ? errs.v[0].msg : "");
	LinkPlace place[] = {{".text.prog", c->mem_base + CARD_BOOT_AREA},
	                     {".data.d", c->mem_base + 2 * CARD_BOOT_AREA}};
	LinkOptions opt = {.chip = c, .place = place, .nplace = 2};
	assert_int_equal(link_objects(&o, 1, &opt, &exe, &d), 0);
	obj_free(o);
	assert_int_equal(img_from_obj(exe, img, &d), 0);
	free(src);
}

/* A model of `tiles` tiles, reset, our bootloader installed on all. */
static HwDev *
booted(uint32_t tiles)
{
	char name[64];
	snprintf(name, sizeof name, "model:c600:tiles=%u", tiles);
	ipu_error err;
	HwDev *d = hw_open(name, NULL, &err);
	assert_non_null(d);
	assert_int_equal(hw_reset(d, &err), 0);
	TileImage boot;
	const char *names[] = {"boot"};
	Diag dg;
	assert_int_equal(kernel_image(names, 1, chip_default(), &boot, &dg), 0);
	assert_int_equal(boot.nseg, 1);
	assert_int_equal(hw_install_bootloader(d, boot.seg[0].bytes,
	                                       boot.seg[0].size, tiles, &err),
	                 0);
	img_free(&boot);
	return d;
}

/* The image the autoloader takes: code at the base of tile memory, the
 * frame area where the card model writes (card.def BOOT_RECV). */
static void
test_boot_image(void **state)
{
	(void)state;
	const Chip *c = chip_default();
	TileImage boot;
	const char *names[] = {"boot"};
	Diag d;
	assert_int_equal(kernel_image(names, 1, c, &boot, &d), 0);
	assert_int_equal(boot.entry, c->mem_base);
	assert_int_equal(boot.nseg, 1);
	assert_int_equal(boot.seg[0].addr, c->mem_base);
	assert_true(boot.seg[0].size <= CARD_BOOT_AREA);
	/* a copy ending at an entry (aligned to 8) starts aligned too */
	assert_int_equal(img_symbol_addr(&boot, "boot_end"),
	                 c->mem_base + boot.seg[0].size);
	assert_int_equal(boot.seg[0].size % 8, 0);
	assert_int_equal(img_symbol_addr(&boot, "boot_frame"),
	                 c->mem_base + CARD_BOOT_RECV);
	img_free(&boot);
}

/* 70 tiles: two batches; every tile's data arrives across frames and its
 * program runs after the handoff. */
static void
test_boot_load(void **state)
{
	(void)state;
	enum { TILES = 70 };
	const Chip *c = chip_default();
	HwDev *d = booted(TILES);
	TileImage *imgs = calloc(TILES, sizeof *imgs);
	HwTileImage *ts = calloc(TILES, sizeof *ts);
	for (uint32_t i = 0; i < TILES; i++) {
		program(i, &imgs[i]);
		ts[i].physical = chip_physical(c, i);
		ts[i].prog = &imgs[i];
	}
	assert_int_equal(hw_boot_frames(&imgs[0]), 1 + 1 + 3);
	ipu_error err;
	assert_int_equal(hw_load(d, ts, TILES, CARD_HANDOFF_MARK, &err), 0);
	const ChipError *ce;
	assert_int_equal(cardsim_last_run(hw_model(d), &ce), RUN_DONE);
	for (uint32_t i = 0; i < TILES; i += 23) {
		uint32_t p = chip_physical(c, i), v;
		assert_int_equal(hw_tile_read(d, p, 0, OUT, &v, &err), 0);
		assert_int_equal(v, i);
		for (uint32_t k = 0; k < WORDS; k += 97) {
			assert_int_equal(hw_tile_read(d, p, 0,
			                              c->mem_base +
			                                  2 * CARD_BOOT_AREA +
			                                  4 * k,
			                              &v, &err),
			                 0);
			assert_int_equal(v, pattern(i, k));
		}
	}
	for (uint32_t i = 0; i < TILES; i++)
		img_free(&imgs[i]);
	free(imgs);
	free(ts);
	hw_close(d);
}

/* One batch of 4 tiles, with `spoil` applied to the transport buffer
 * before the mark: the mark is not cleared, the chip stopped with a
 * fault, tile `bad`'s diagnosis names the exception `etype`, and its pc
 * is the bootloader's stop for `why`. */
static void
lost(void (*spoil)(uint8_t *buf, HwTileImage *ts), uint32_t bad,
     const char *etype, const char *why)
{
	const Chip *c = chip_default();
	HwDev *d = booted(4);
	TileImage imgs[4];
	HwTileImage ts[4] = {0};
	for (uint32_t i = 0; i < 4; i++) {
		program(i, &imgs[i]);
		ts[i].physical = chip_physical(c, i);
		ts[i].prog = &imgs[i];
	}
	uint8_t *buf = calloc(1, CARD_TRANSPORT_SIZE);
	ipu_error err;
	assert_int_equal(hw_attach_buffer(d, 0, buf, CARD_TRANSPORT_SIZE, &err),
	                 0);
	assert_int_equal(hw_build_batch(buf, CARD_TRANSPORT_SIZE, ts, 4, &err),
	                 0);
	spoil(buf, ts);
	assert_int_equal(hw_write32(d, CARD_REG_HSP_GS1, 1, &err), 0);
	uint32_t v;
	assert_int_equal(hw_read32(d, CARD_REG_HSP_GS1, &v, &err), 0);
	const ChipError *ce;
	RunStatus st = cardsim_last_run(hw_model(d), &ce);
	if (st == RUN_HOST) { /* the batch went in: the handoff fails */
		assert_int_equal(v, 0);
		assert_int_equal(
		    hw_write32(d, CARD_REG_HSP_GS1, CARD_HANDOFF_MARK, &err),
		    0);
		st = cardsim_last_run(hw_model(d), &ce);
	}
	assert_int_equal(st, RUN_FAULT);
	assert_int_equal(ce->tile, bad);
	assert_int_equal(hw_read32(d, CARD_REG_HSP_GS1, &v, &err), 0);
	assert_true(v != 0); /* the card never clears the mark */
	char line[400];
	assert_int_equal(
	    hw_tile_report(d, chip_physical(c, bad), line, sizeof line, &err),
	    0);
	expect_in(line, etype);
	uint32_t pc;
	assert_int_equal(hw_tile_pc(d, chip_physical(c, bad), 0, &pc, &err), 0);
	TileImage boot;
	const char *names[] = {"boot"};
	Diag dg;
	assert_int_equal(kernel_image(names, 1, c, &boot, &dg), 0);
	const char *stop = hw_boot_stop(&boot, c->mem_base, pc);
	assert_non_null(stop);
	expect_in(stop, why);
	/* the same stop in a copy linked elsewhere; none in the program */
	assert_ptr_equal(hw_boot_stop(&boot, c->mem_base + 0x8000, pc + 0x8000),
	                 stop);
	assert_null(hw_boot_stop(&boot, c->mem_base, OUT));
	img_free(&boot);
	for (uint32_t i = 0; i < 4; i++)
		img_free(&imgs[i]);
	free(buf);
	hw_close(d);
}

/* Tile 2's second frame never arrives: the third comes in its place. */
static void
drop_frame(uint8_t *buf, HwTileImage *ts)
{
	(void)ts;
	uint32_t off = get_le32(buf + 8 * 2);
	uint8_t *f = buf + off + CARD_FRAME_SIZE;
	memmove(f, f + CARD_FRAME_SIZE, 3 * CARD_FRAME_SIZE);
	put_le32(buf + 8 * 2 + 4, get_le32(buf + 8 * 2 + 4) - 1);
}

/* Tile 1 never gets its last frame: it cannot start at the handoff. */
static void
no_last(uint8_t *buf, HwTileImage *ts)
{
	(void)ts;
	put_le32(buf + 8 * 1 + 4, get_le32(buf + 8 * 1 + 4) - 1);
}

/* Malformed frames: tile 3's first frame with an index that is no mark,
 * tile 1's with an unknown flag, tile 3's with a payload longer than a
 * frame's, tile 0's over the bootloader, tile 2's past the end of tile
 * memory. */
static uint8_t *
first_frame(uint8_t *buf, uint32_t slot)
{
	return buf + get_le32(buf + 8 * slot);
}

static void
bad_flags(uint8_t *buf, HwTileImage *ts)
{
	(void)ts;
	uint8_t *f = first_frame(buf, 1);
	put_le32(f + 8, get_le32(f + 8) | 1u << 20);
}

static void
bad_index(uint8_t *buf, HwTileImage *ts)
{
	(void)ts;
	put_le32(first_frame(buf, 3), 0x12345678);
}

static void
bad_len(uint8_t *buf, HwTileImage *ts)
{
	(void)ts;
	put_le32(first_frame(buf, 3) + 8, CARD_FRAME_PAYLOAD + 4);
}

static void
over_boot(uint8_t *buf, HwTileImage *ts)
{
	(void)ts;
	/* the payload's last word is the bootloader's first */
	uint8_t *f = first_frame(buf, 0);
	uint32_t n = get_le32(f + 8) & CARD_BOOT_LEN_MASK;
	put_le32(f + 12, chip_default()->mem_base + 4 - n);
}

static void
past_memory(uint8_t *buf, HwTileImage *ts)
{
	(void)ts;
	put_le32(first_frame(buf, 2) + 12, chip_default()->mem_end - 8);
}

static void
test_boot_lost_frame(void **state)
{
	(void)state;
	lost(drop_frame, 2, "PBRK", "out of order");
	lost(bad_index, 3, "PBRK", "index is no mark of ours");
	lost(bad_flags, 1, "PBRK", "flags hold more");
	lost(bad_len, 3, "PBRK", "length is not a multiple of 4 or more");
	lost(over_boot, 0, "PBRK", "overwrite the running bootloader");
	lost(past_memory, 2, "INVALID_ADDR", "outside tile memory");
}

static void
test_boot_no_last(void **state)
{
	(void)state;
	lost(no_last, 1, "PBRK", "GO) before the tile's last frame");
}

/* The load as a whole reports the handoff it could not finish. */
static void
test_boot_timeout(void **state)
{
	(void)state;
	HwDev *d = booted(2);
	TileImage img;
	program(0, &img);
	HwTileImage ts[1] = {{.physical = 0, .prog = &img}};
	ipu_error err;
	/* tile 1 has no program: GO before its last frame */
	assert_int_equal(hw_load(d, ts, 1, CARD_HANDOFF_MARK, &err),
	                 IPU_ERR_TIMEOUT);
	expect_in(err.msg, "the handoff");
	img_free(&img);
	hw_close(d);
}

/* src assembled into an object file's bytes (the caller frees them). */
static void
object_bytes(const char *src, uint8_t **bytes, size_t *len)
{
	Obj *o;
	DiagList errs = {0};
	Diag d;
	if (asm_source("t.s", src, strlen(src), NULL, &o, &errs))
		fail_msg("does not assemble: %s", errs.n ? errs.v[0].msg : "");
	assert_int_equal(obj_write(o, bytes, len, &d), 0);
	obj_free(o);
}

/* The same image through sim: and model:, its cycles and what it stored. */
static void
same_run(const char *body, uint32_t tiles)
{
	char src[1024];
	snprintf(src, sizeof src,
	         "\t.section .text.prog, \"ax\"\n\t.globl _start\n"
	         "_start:\n%s",
	         body);
	uint8_t *bytes;
	size_t len;
	object_bytes(src, &bytes, &len);
	uint64_t cyc[2];
	uint32_t out[2][4];
	for (int k = 0; k < 2; k++) {
		char name[64];
		snprintf(name, sizeof name, "%s:c600:tiles=%u",
		         k ? "model" : "sim", tiles);
		ipu_error err;
		ipu_device *dev = ipu_open(name, &err);
		assert_non_null(dev);
		assert_int_equal(
		    ipu_load_image(dev, bytes, len, 0, tiles, &err), 0);
		assert_int_equal(ipu_run(dev, 100000, &err), 0);
		cyc[k] = ipu_cycles(dev);
		assert_int_equal(
		    ipu_read(dev, tiles - 1, OUT, out[k], sizeof out[k], &err),
		    0);
		ipu_close(dev);
	}
	free(bytes);
	assert_memory_equal(out[0], out[1], sizeof out[0]);
	assert_int_equal(cyc[1], cyc[0]);
}

/* Programs through the runtime on model: as on sim: (the cycles from
 * the entry's first issue to the last tile's end). */
static void
test_model_backend(void **state)
{
	(void)state;
	same_run("\tsetzi $m1, 0x60000\n\tget $m0, $TILE_ID\n"
	         "\tst32 $m0, $m1, $mzero, 0\n\tbr $lr\n",
	         1);
	same_run("\tsetzi $m1, 0x60000\n\tget $m0, $TILE_ID\n"
	         "\tsync TEXCH_SYNCZONE_INTERNAL\n"
	         "\tst32 $m0, $m1, $mzero, 0\n\tbr $lr\n",
	         4);
}

/* A program that faults on tile 1 of 2 (a load outside tile memory):
 * model: finds it through TDI (the handoff never completes) and reports
 * the same tile, context, pc and exception as sim:. */
static void fault_both(const char *src);

static void
test_model_fault(void **state)
{
	(void)state;
	/* the entry at the base (the copy in a gap) and 8 KiB above it
	 * (the fall-through load) */
	for (int low = 0; low <= 8192; low += 8192) {
		char src[512];
		snprintf(src, sizeof src,
		         "\t.section .text.prog, \"ax\"\n\t.space %d\n"
		         "\t.globl _start\n_start:\n"
		         "\tget $m0, $TILE_ID\n"
		         "\tbrz $m0, 1f\n"
		         "\tsetzi $m1, 0x10\n"
		         "\tld32 $m2, $m1, $mzero, 0\n"
		         "1:\tbr $lr\n",
		         low);
		fault_both(src);
	}
}

static void
fault_both(const char *src)
{
	uint8_t *bytes;
	size_t len;
	object_bytes(src, &bytes, &len);
	ipu_error e[2];
	for (int k = 0; k < 2; k++) {
		ipu_device *dev = ipu_open(
		    k ? "model:c600:tiles=2" : "sim:c600:tiles=2", &e[k]);
		assert_non_null(dev);
		assert_int_equal(ipu_load_image(dev, bytes, len, 0, 2, &e[k]),
		                 0);
		assert_int_equal(ipu_run(dev, 100000, &e[k]), IPU_ERR_FAULT);
		ipu_close(dev);
	}
	free(bytes);
	expect_in(e[1].msg, "tile 1 (TDI)");
	assert_int_equal(e[1].tile, 1);
	assert_int_equal(e[1].tile, e[0].tile);
	assert_int_equal(e[1].context, e[0].context);
	assert_int_equal(e[1].pc, e[0].pc);
	assert_int_equal(e[1].fault_type, e[0].fault_type);
	assert_string_equal(e[1].fault_name, e[0].fault_name);
	assert_true(e[0].fault_name[0] && e[0].pc != IPU_UNKNOWN);
}

/* A tile whose executable memory the program fills leaves no room for
 * the relocated bootloader: the run says so (nothing reached the card,
 * so no TDI diagnosis) instead of a wrong answer. */
static void
test_model_full_tile(void **state)
{
	(void)state;
	static const char src[] = "\t.globl _start\n_start:\n\tbr $lr\n";
	uint8_t *bytes;
	size_t len;
	object_bytes(src, &bytes, &len);
	const Chip *c = chip_default();
	uint32_t from = c->mem_base + CARD_BOOT_AREA, n = c->exec_end - from;
	uint8_t *fill = calloc(1, n);
	ipu_error err;
	ipu_device *dev = ipu_open("model:c600:tiles=1", &err);
	assert_non_null(dev);
	assert_int_equal(ipu_load_image(dev, bytes, len, 0, 1, &err), 0);
	assert_int_equal(ipu_write(dev, 0, from, fill, n, &err), 0);
	assert_int_equal(ipu_run(dev, 100000, &err), IPU_ERR_ARGUMENT);
	expect_in(err.msg, "tile 0: no ");
	expect_in(err.msg, "free bytes for the bootloader");
	assert_null(strstr(err.msg, "(TDI)"));
	ipu_close(dev);
	free(fill);
	free(bytes);
}

/* A program whose bytes fill every byte of executable memory, its entry
 * well above the base: the load falls through (a copy of the bootloader
 * ends at the entry, and the program's own bytes for the copy's place
 * come at the handoff), and the program sees the same memory and takes
 * the same cycles as on sim:. It stores what lies at the base (where the
 * installed bootloader was), at the copy's first word and just below the
 * entry. */
static void
test_model_fall_through(void **state)
{
	(void)state;
	const Chip *c = chip_default();
	enum { LOW = 8192, CODE = 64, SEEN = 0x90000 };
	TileImage boot;
	const char *names[] = {"boot"};
	Diag dg;
	assert_int_equal(kernel_image(names, 1, c, &boot, &dg), 0);
	uint32_t entry = c->mem_base + LOW, copy = entry - boot.seg[0].size;
	img_free(&boot);
	char src[1024];
	snprintf(src, sizeof src,
	         "\t.section .text.prog, \"ax\"\n\t.space %u\n"
	         "\t.globl _start\n_start:\n"
	         "\tsetzi $m1, 0x%x\n"
	         "\tsetzi $m2, 0x%x\n\tld32 $m0, $m2, $mzero, 0\n"
	         "\tst32 $m0, $m1, $mzero, 0\n"
	         "\tsetzi $m2, 0x%x\n\tld32 $m0, $m2, $mzero, 0\n"
	         "\tst32 $m0, $m1, $mzero, 1\n"
	         "\tsetzi $m2, 0x%x\n\tld32 $m0, $m2, $mzero, 0\n"
	         "\tst32 $m0, $m1, $mzero, 2\n\tbr $lr\n",
	         LOW, SEEN, c->mem_base, copy, entry - 4);
	uint8_t *bytes;
	size_t len;
	object_bytes(src, &bytes, &len);
	uint32_t n = c->exec_end - c->mem_base;
	uint32_t *fill = malloc(n);
	for (uint32_t i = 0; i < n / 4; i++)
		fill[i] = 0x9e3779b9u * (i + 1);
	uint32_t seen[2][3], mem[2][3][64];
	uint64_t cyc[2];
	for (int k = 0; k < 2; k++) {
		ipu_error err;
		ipu_device *dev = ipu_open(
		    k ? "model:c600:tiles=1" : "sim:c600:tiles=1", &err);
		assert_non_null(dev);
		assert_int_equal(ipu_load_image(dev, bytes, len, 0, 1, &err),
		                 0);
		/* all but the program's code */
		assert_int_equal(
		    ipu_write(dev, 0, c->mem_base, fill, LOW, &err), 0);
		assert_int_equal(ipu_write(dev, 0, entry + CODE,
		                           (uint8_t *)fill + LOW + CODE,
		                           n - LOW - CODE, &err),
		                 0);
		assert_int_equal(ipu_run(dev, 100000, &err), 0);
		cyc[k] = ipu_cycles(dev);
		assert_int_equal(
		    ipu_read(dev, 0, SEEN, seen[k], sizeof seen[k], &err), 0);
		const uint32_t at[3] = {c->mem_base, copy, entry - 256};
		for (int r = 0; r < 3; r++)
			assert_int_equal(ipu_read(dev, 0, at[r], mem[k][r],
			                          sizeof mem[k][r], &err),
			                 0);
		ipu_close(dev);
	}
	assert_int_equal(seen[0][0], fill[0]);
	assert_int_equal(seen[0][1], fill[(copy - c->mem_base) / 4]);
	assert_int_equal(seen[0][2], fill[LOW / 4 - 1]);
	assert_memory_equal(seen[0], seen[1], sizeof seen[0]);
	assert_memory_equal(mem[0], mem[1], sizeof mem[0]);
	assert_int_equal(cyc[1], cyc[0]);
	free(fill);
	free(bytes);
}

/* The GEMM benchmark through the card model: the same C as on sim: (its
 * largest error against the f64 reference, to the bit) and the same
 * cycles (from the entry's first issue; the load excluded). */
static void
test_model_gemm(void **state)
{
	(void)state;
	RunnerDevice on = {.model = 1};
	GemmBenchConfig cfg = {.dtype = AMP_F16, .tiles = 2, .threads = 1};
	cfg.m = cfg.n = cfg.k = 32; /* 2 tiles: an exchange and a sync */
	cfg.seed = 3;
	GemmBenchResult r[2];
	Diag d;
	for (int k = 0; k < 2; k++) {
		cfg.device = k ? &on : NULL;
		if (bench_gemm(&cfg, &r[k], &d))
			fail_msg("%s", d.msg);
	}
	assert_true(r[0].max_rel_err == r[1].max_rel_err);
	assert_true(r[0].max_rel_err < 1e-2);
	assert_int_equal(r[1].cycles, r[0].cycles);
}

/* What model: refuses when it opens: a bad capture, a log that exists,
 * a chip that is not the C600; a program that never ends, host streams
 * beyond the program's host syncs. */
static void
test_model_open(void **state)
{
	(void)state;
	assert_int_equal(test_dir_make("boot"), 0);
	char path[300], name[400];
	snprintf(path, sizeof path, "%s/bad.cfg", test_dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("IPUCFG2", f);
	fclose(f);
	ipu_error err;
	snprintf(name, sizeof name, "model:c600:tiles=2:config=%s", path);
	assert_null(ipu_open(name, &err));
	expect_in(err.msg, "not a configuration capture");
	snprintf(name, sizeof name, "model:c600:tiles=2:log=%s", path);
	assert_null(ipu_open(name, &err));
	assert_int_equal(err.kind, IPU_ERR_IO);
	expect_in(err.msg, "nothing is overwritten");
	assert_null(ipu_open("model:gc200", &err));
	expect_in(err.msg, "C600 only");
	/* a program that never ends: the handoff's mark is never cleared,
	 * TDI finds the tile running */
	static const char loop[] = "\t.globl _start\n_start:\n1:\tbri 1b\n";
	uint8_t *bytes;
	size_t len;
	object_bytes(loop, &bytes, &len);
	ipu_device *dev = ipu_open("model:c600:tiles=2", &err);
	assert_non_null(dev);
	assert_int_equal(ipu_load_image(dev, bytes, len, 1, 1, &err), 0);
	assert_int_equal(ipu_run(dev, 5000, &err), IPU_ERR_TIMEOUT);
	expect_in(err.msg, "tile 1 (TDI)");
	expect_in(err.msg, "running");
	assert_int_equal(err.tile, 1);
	free(bytes);
	ipu_close(dev);
	/* host streams that name a host sync the program never reaches:
	 * the card never clears that phase's mark */
	static const char one_sync[] =
	    "\t.globl _start\n_start:\n\tsync 5\n\tbr $lr\n";
	object_bytes(one_sync, &bytes, &len);
	dev = ipu_open("model:c600:tiles=1", &err);
	assert_non_null(dev);
	assert_int_equal(ipu_load_image(dev, bytes, len, 0, 1, &err), 0);
	uint32_t w = 7;
	assert_int_equal(ipu_stream_write(dev, 0, 0, OUT, &w, 4, &err), 0);
	assert_int_equal(ipu_stream_read(dev, 1, 0, OUT, &w, 4, &err), 0);
	assert_int_equal(ipu_run(dev, 0, &err), IPU_ERR_TIMEOUT);
	expect_in(err.msg, "host phase 1: the card did not clear host sync "
	                   "mark 1 in HSP_GS2");
	assert_int_equal(w, 7);
	free(bytes);
	ipu_close(dev);
	assert_int_equal(test_dir_remove(), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_boot_image),
	    cmocka_unit_test(test_boot_load),
	    cmocka_unit_test(test_boot_lost_frame),
	    cmocka_unit_test(test_boot_no_last),
	    cmocka_unit_test(test_boot_timeout),
	    cmocka_unit_test(test_model_backend),
	    cmocka_unit_test(test_model_fault),
	    cmocka_unit_test(test_model_full_tile),
	    cmocka_unit_test(test_model_fall_through),
	    cmocka_unit_test(test_model_gemm),
	    cmocka_unit_test(test_model_open),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

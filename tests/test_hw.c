/*
 * test_hw.c - the card's device interface (src/rt/hw.h) against the card
 * model (src/sim/card.c), and the card's facts (src/target/card.def).
 *
 * Expected values are worked out here by hand from the facts' sources
 * (the driver's ioctl encoding, the frame arithmetic of ipu-stack.md), or
 * read from the emulated chip directly, not through the interface under
 * test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/asm/asm.h"
#include "../src/bench/tile_kernel.h"
#include "../src/rt/hw.h"
#include "../src/sim/card.h"
#include "support.h"

/* Linux _IOC by hand: dir << 30 | size << 16 | 'type' << 8 | nr. */
static void
test_ioctl_codes(void **state)
{
	(void)state;
	assert_int_equal(CARD_IOCTL_MAILBOX, 0xC008ED1Ful);
	assert_int_equal(CARD_IOCTL_USER_ATTACH, 0xC008ED0Aul);
	assert_int_equal(CARD_IOCTL_RESET, 0x4004ED2Dul);
	assert_int_equal(CARD_IOCTL_SET_SECONDARY_ID, 0x4008ED2Ful);
	assert_int_equal(CARD_IOCTL_DETACH_ALL, 0xED12ul);
	assert_string_equal(card_ioctl_name(0xC008ED0Bul), "BUFFER_ATTACH");
	assert_null(card_ioctl_name(0x1234));
	/* the argument layouts the driver takes */
	assert_int_equal(sizeof(CardAttach), 16);
	assert_int_equal(sizeof(CardMail), 20);
	assert_int_equal(sizeof(CardMailArg), 2 * sizeof(void *));
}

static void
test_layout_facts(void **state)
{
	(void)state;
	const Chip *c = chip_default();
	/* ipu-stack.md: 643 frames of 992 bytes from base + 0x10 end at the
	 * application limit 0xe7bb0, inside tile memory. */
	assert_int_equal(CARD_FRAME_PAYLOAD, 992);
	assert_int_equal(c->mem_base + CARD_LOAD_OFFSET +
	                     CARD_FRAME_MAX * CARD_FRAME_PAYLOAD,
	                 0xE7BB0);
	assert_true(0xE7BB0 <= c->mem_end);
	/* 1472 tiles in batches of 64: the handoff mark */
	assert_int_equal(c->tiles / CARD_TILES_PER_BATCH, CARD_HANDOFF_MARK);
	/* the TDI block of every tile lies inside the BAR */
	assert_true(card_tdi_reg(c->tiles - 1, 15) < CARD_BAR_SIZE);
	assert_int_equal(card_tdi_reg(5, CARD_TDI_DATA), 0x3015C);
	assert_int_equal(card_xb_reg(0), 0x5404);
	assert_int_equal(card_xb_reg(7), 0x5404 + 7 * 0x400);
	assert_int_equal(card_xb_reg(8), 0x1B804);
	char b[40];
	assert_string_equal(card_reg_name(0x2068, b, sizeof b), "AUTOLD_CSR");
	assert_string_equal(card_reg_name(0x3015C, b, sizeof b), "TDI 5 DATA");
	assert_string_equal(card_reg_name(0x1BC04, b, sizeof b), "XB9_DCXCR");
}

/* The injected instruction words are the instructions the driver names
 * them after, by our own decoder. */
static void
test_tdi_words(void **state)
{
	(void)state;
	static const struct {
		uint32_t w;
		const char *text;
	} cases[] = {
	    {CARD_TDI_GET_M0_PC, "get $m0, $PC"},
	    {CARD_TDI_GET_M1_DBG, "get $m1, 112"},
	    {CARD_TDI_LD_M0_AT_M1, "ld32 $m0, $mzero, $m1, 0"},
	    {CARD_TDI_ST_M0_AT_M1, "st32 $m0, $m1, $mzero, 0"},
	    {CARD_TDI_PUT_DBG_M0 | 3 << 20, "put 112, $m3"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t b[4];
		memcpy(b, &cases[i].w, 4);
		char *t = disasm_bytes(b, 4, 0, ARCH_IPU21, DIS_PLAIN);
		expect_in(t, cases[i].text);
		free(t);
	}
}

static void
test_linux_missing(void **state)
{
	(void)state;
	ipu_error err;
	char dir[] = "/tmp/ipu_test_hw_XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("IPU_DEV_DIR", dir, 1);
	assert_null(hw_open("hw:0", NULL, &err));
	assert_int_equal(err.kind, IPU_ERR_NO_BACKEND);
	expect_in(err.msg, "/ipu0 does not exist");
	/* the runtime's hw: backend: the same, and no empty log left */
	char lname[200], l0[100];
	snprintf(l0, sizeof l0, "%s/l0.txt", dir);
	snprintf(lname, sizeof lname, "hw:0:log=%s", l0);
	assert_null(ipu_open(lname, &err));
	assert_int_equal(err.kind, IPU_ERR_NO_BACKEND);
	expect_in(err.msg, "no C600 card, or Graphcore's kernel driver is "
	                   "not loaded");
	assert_int_equal(access(l0, F_OK), -1);
	/* a regular file is no card: refused before any mapping */
	char path[64];
	snprintf(path, sizeof path, "%s/ipu3", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_null(hw_open("hw:3", NULL, &err));
	expect_in(err.msg, "not a character device");
	remove(path);
	/* a character device that maps but is not Graphcore's driver
	 * (/dev/zero): the first ioctl, USER_ATTACH, says so; through the
	 * runtime's hw: backend too, whose log keeps the failed ioctl */
	snprintf(path, sizeof path, "%s/ipu1", dir);
	assert_int_equal(symlink("/dev/zero", path), 0);
	assert_null(hw_open("hw:1", NULL, &err));
	assert_int_equal(err.kind, IPU_ERR_IO);
	expect_in(err.msg, "ioctl USER_ATTACH (0xc008ed0a)");
	char name[200], logp[100];
	snprintf(logp, sizeof logp, "%s/l.txt", dir);
	snprintf(name, sizeof name, "hw:1:tiles=4:log=%s", logp);
	assert_null(ipu_open(name, &err));
	expect_in(err.msg, "ioctl USER_ATTACH");
	FILE *lf = fopen(logp, "r");
	assert_non_null(lf); /* the failed ioctl is logged */
	char line[200];
	assert_non_null(fgets(line, sizeof line, lf));
	expect_in(line, "ioctl c008ed0a USER_ATTACH failed");
	fclose(lf);
	remove(logp);
	remove(path);
	rmdir(dir);
	unsetenv("IPU_DEV_DIR");
	assert_null(hw_open("hw:x", NULL, &err));
	assert_int_equal(err.kind, IPU_ERR_ARGUMENT);
	assert_null(hw_open("model:gc200", NULL, &err));
	expect_in(err.msg, "C600 only");
	assert_null(hw_open("model:c600:tiles=0", NULL, &err));
	assert_null(hw_open("pci:0", NULL, &err));
}

/* Read the whole log written so far. */
static char *
log_text(FILE *f)
{
	fflush(f);
	long n = ftell(f);
	char *t = calloc(1, (size_t)n + 1);
	rewind(f);
	assert_int_equal(fread(t, 1, (size_t)n, f), (size_t)n);
	fseek(f, 0, SEEK_END);
	return t;
}

static void
test_model_reset_and_log(void **state)
{
	(void)state;
	ipu_error err;
	FILE *log = tmpfile();
	HwDev *d = hw_open("model:c600:tiles=2", log, &err);
	assert_non_null(d);
	assert_string_equal(hw_kind(d), "model");
	CardSim *cs = hw_model(d);
	assert_non_null(cs);
	assert_int_equal(hw_write32(d, 0x2000, 0x77, &err), 0);
	assert_int_equal(hw_reset(d, &err), 0);
	assert_int_equal(cardsim_resets(cs), 1);
	uint32_t v = 1;
	assert_int_equal(hw_read32(d, 0x2000, &v, &err), 0);
	assert_int_equal(v, 0); /* the reset cleared it */
	char *t = log_text(log);
	/* the driver's order: attach, id, monitor off, ICU reset, ... */
	const char *order[] = {
	    "USER_ATTACH",          "SET_IPU_ID",       "STOP_MONITOR",
	    "mail 4078020e",        "START_MONITOR",    "ACCUMULATE_ERR",
	    "ioctl 4004ed2d RESET", "SET_SECONDARY_ID", "r 02000 -> 00000000"};
	const char *at = t;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const char *p = strstr(at, order[i]);
		if (!p)
			fail_msg("'%s' not after the previous step in:\n%s",
			         order[i], t);
		at = p;
	}
	expect_in(t, "w 02000 <- 00000077 CCSR");
	free(t);
	/* ioctls the model does not know, and bad offsets */
	assert_int_equal(hw_ioctl(d, 0xC008ED63ul, NULL, &err), IPU_ERR_IO);
	expect_in(err.msg, "not one of the driver's");
	assert_int_not_equal(hw_read32(d, 0x80000, &v, &err), 0);
	assert_int_not_equal(hw_write32(d, 0x2002, 0, &err), 0);
	CardMail bad = {{0x1234}}, reply;
	assert_int_equal(hw_mailbox(d, &bad, &reply, &err), IPU_ERR_IO);
	/* host buffers */
	static uint8_t page[4096];
	uint32_t size;
	assert_int_equal(hw_attach_buffer(d, 7, page, sizeof page, &err), 0);
	assert_ptr_equal(cardsim_buffer(cs, 7, &size), page);
	assert_int_equal(size, 4096);
	assert_int_equal(hw_attach_buffer(d, 7, page, 4, &err), IPU_ERR_IO);
	assert_int_equal(hw_attach_buffer(d, 8, page, 0, &err), IPU_ERR_IO);
	assert_int_equal(hw_detach_buffer(d, 7, &err), 0);
	assert_null(cardsim_buffer(cs, 7, &size));
	hw_close(d);
	fclose(log);
}

static void
put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

/* An IPUCFG1 capture of n writes (offset, value pairs). */
static size_t
make_config(uint8_t *buf, const uint32_t *pairs, uint32_t n)
{
	memcpy(buf, "IPUCFG1", 8);
	put32(buf + 8, n);
	for (uint32_t i = 0; i < 2 * n; i++)
		put32(buf + 12 + 4 * i, pairs[i]);
	return 12 + 8 * n;
}

static void
test_config_replay(void **state)
{
	(void)state;
	ipu_error err;
	FILE *log = tmpfile();
	HwDev *d = hw_open("model:c600:tiles=1", log, &err);
	assert_non_null(d);
	uint8_t buf[256];
	const uint32_t good[] = {0x2000, 0x1234, 0x302c, 5,
	                         0x5404, 0x99,   0x3030, 9};
	size_t n = make_config(buf, good, 4);
	assert_int_equal(hw_replay_config(d, buf, n, "c.bin", &err), 0);
	uint32_t v;
	hw_read32(d, 0x2000, &v, &err);
	assert_int_equal(v, 0x1234);
	hw_read32(d, 0x5404, &v, &err);
	assert_int_equal(v, 0x99);
	hw_read32(d, CARD_REG_HSP_GS1, &v, &err);
	assert_int_equal(v, 0); /* the capture's marks are not replayed */
	char *t = log_text(log);
	assert_null(strstr(t, "w 0302c <- 00000005"));
	expect_in(t, "w 0302c <- 00000000 HSP_GS1");
	expect_in(t, "w 05404 <- 00000099 XB0_DCXCR");
	free(t);

	/* bad captures change nothing */
	const uint32_t bad_off[] = {0x2000, 0x5555, 0x80000, 1};
	n = make_config(buf, bad_off, 2);
	assert_int_equal(hw_replay_config(d, buf, n, "c.bin", &err),
	                 IPU_ERR_FORMAT);
	expect_in(err.msg, "c.bin: write 1 is at offset 0x80000");
	hw_read32(d, 0x2000, &v, &err);
	assert_int_equal(v, 0x1234);
	n = make_config(buf, good, 4);
	assert_int_equal(hw_replay_config(d, buf, n - 1, "c.bin", &err),
	                 IPU_ERR_FORMAT);
	expect_in(err.msg, "counts 4 register writes");
	buf[6] = '2';
	assert_int_equal(hw_replay_config(d, buf, n, "c.bin", &err),
	                 IPU_ERR_FORMAT);
	expect_in(err.msg, "not a configuration capture");
	assert_int_equal(hw_replay_config(d, buf, 5, "c.bin", &err),
	                 IPU_ERR_FORMAT);
	hw_close(d);
	fclose(log);
}

/* Assemble `src` with the default layout for the C600. */
static void
assemble(const char *src, TileImage *img)
{
	Obj *o;
	DiagList errs = {0};
	Diag d;
	uint8_t *bytes;
	size_t len;
	if (asm_source("t.s", src, strlen(src), NULL, &o, &errs))
		fail_msg("does not assemble: %s", errs.n ? errs.v[0].msg : "");
	assert_int_equal(obj_write(o, &bytes, &len, &d), 0);
	obj_free(o);
	assert_int_equal(img_load(bytes, len, "t.o", NULL, img, &d), 0);
	free(bytes);
}

/* Assemble `body` after a _start label, run it as tile 0's supervisor on
 * the model's chip for max_cycles, expecting `st`; the address of label
 * `sym` in *addr. */
static Tile *
run_on_tile0(HwDev *d, const char *body, const char *sym, uint32_t *addr,
             uint64_t max_cycles, RunStatus st)
{
	char src[512];
	snprintf(src, sizeof src, "\t.globl _start\n_start:\n%s", body);
	ChipSim *chip = cardsim_chip(hw_model(d));
	TileImage img;
	assemble(src, &img);
	Tile *t = chipsim_tile(chip, 0);
	tile_load_image(t, &img);
	tile_start(t, img.entry);
	*addr = (uint32_t)img_symbol_addr(&img, sym);
	img_free(&img);
	ChipError ce;
	assert_int_equal(chipsim_run(chip, max_cycles, &ce), st);
	return t;
}

/* A supervisor that stores, sets registers and faults: the debug
 * interface reads its pc, exception, memory and registers, and puts back
 * the registers it borrows. */
static void
test_tdi_fault(void **state)
{
	(void)state;
	ipu_error err;
	HwDev *d = hw_open("model:c600:tiles=1", NULL, &err);
	assert_non_null(d);
	uint32_t bad;
	Tile *t = run_on_tile0(d,
	                       "\tsetzi $m1, 0x60000\n"
	                       "\tsetzi $m2, 0x1234\n"
	                       "\tst32 $m2, $m1, $mzero, 0\n"
	                       "\tsetzi $m0, 77\n"
	                       "bad:\tld32 $m4, $mzero, $mzero, 0\n",
	                       "bad", &bad, 1000, RUN_FAULT);

	uint32_t p = chip_physical(chip_default(), 0), v;
	assert_int_equal(hw_tile_states(d, p, &v, &err), 0);
	assert_int_equal(v & 3, CARD_MODEL_CTX_EXCPT);
	assert_int_equal(hw_tile_pc(d, p, 0, &v, &err), 0);
	assert_int_equal(v, bad);
	assert_int_equal(hw_tile_status(d, p, 0, &v, &err), 0);
	assert_int_equal(v >> 4 & 15, FAULT_INVALID_ADDR);
	assert_int_equal(hw_tile_read(d, p, 0, 0x60000, &v, &err), 0);
	assert_int_equal(v, 0x1234);
	assert_int_equal(hw_tile_write(d, p, 0, 0x60004, 0xabcd, &err), 0);
	uint32_t w;
	tile_read(t, 0x60004, &w, 4);
	assert_int_equal(w, 0xabcd);
	/* the borrowed registers are back, the fault is still there */
	assert_int_equal(t->ctx[0].m[0], 77);
	assert_int_equal(t->ctx[0].m[1], 0x60000);
	assert_true(t->faulted);
	assert_int_equal(t->fault.type, FAULT_INVALID_ADDR);
	char line[600];
	assert_int_equal(hw_tile_report(d, p, line, sizeof line, &err), 0);
	char want[100];
	snprintf(want, sizeof want,
	         "supervisor: exception INVALID_ADDR at pc 0x%05x;", bad);
	expect_in(line, want);
	assert_null(strstr(line, "worker"));
	/* an idle worker context works too; its $WSR has no exception */
	assert_int_equal(hw_tile_status(d, p, 1, &v, &err), 0);
	assert_int_equal(v, 0); /* CTXTID_M1 0, ETYPE none */
	/* bad arguments */
	assert_int_equal(hw_tile_read(d, p, 0, 0x4c002, &v, &err),
	                 IPU_ERR_ARGUMENT);
	assert_int_equal(hw_tile_read(d, p, 0, 0xe8000, &v, &err),
	                 IPU_ERR_ARGUMENT);
	assert_int_equal(hw_tile_pc(d, p, 7, &v, &err), IPU_ERR_ARGUMENT);
	/* an instruction the debug interface cannot run: status says so */
	assert_int_equal(
	    hw_write32(d, card_tdi_reg(p, CARD_TDI_INSN), 0xffffffff, &err), 0);
	hw_read32(d, card_tdi_reg(p, CARD_TDI_STATUS), &v, &err);
	assert_true(v & CARD_TDI_FAILED);
	hw_close(d);
}

/* A watch the exchange hits stops the receiving tile outside sim_fault:
 * the TDI must still read the supervisor as stopped by an exception whose
 * ETYPE is DBRK. */
static void
test_tdi_watch(void **state)
{
	(void)state;
	ipu_error err;
	HwDev *d = hw_open("model:c600:tiles=1", NULL, &err);
	assert_non_null(d);
	uint32_t start;
	Tile *t =
	    run_on_tile0(d, "\tbr $lr\n", "_start", &start, 1000, RUN_DONE);
	assert_int_equal(sim_watch(t, 0x60000, 4), 0);
	sim_observe_receive(t, 0x60000, 4, 1, 0, start, t->cycle);
	uint32_t p = chip_physical(chip_default(), 0), v;
	assert_int_equal(hw_tile_states(d, p, &v, &err), 0);
	assert_int_equal(v & 3, CARD_MODEL_CTX_EXCPT);
	assert_int_equal(hw_tile_status(d, p, 0, &v, &err), 0);
	assert_int_equal(v >> 4 & 15, FAULT_DBRK);
	hw_close(d);
}

/* A running supervisor (stopped by a cycle limit mid-loop) is stopped with
 * RUN_BREAK for the read and let go after. */
static void
test_tdi_running(void **state)
{
	(void)state;
	ipu_error err;
	FILE *log = tmpfile();
	HwDev *d = hw_open("model:c600:tiles=1", log, &err);
	assert_non_null(d);
	uint32_t loop;
	Tile *t = run_on_tile0(d,
	                       "loop:\tsetzi $m0, 1\n"
	                       "\tbri loop\n",
	                       "loop", &loop, 101, RUN_TIMEOUT);
	uint32_t p = chip_physical(chip_default(), 0), v;
	assert_int_equal(hw_tile_states(d, p, &v, &err), 0);
	assert_int_equal(v & 3, CARD_MODEL_CTX_RUN);
	assert_int_equal(hw_tile_pc(d, p, 0, &v, &err), 0);
	assert_true(v == loop || v == loop + 4);
	assert_int_equal(v, t->ctx[0].pc);
	assert_int_equal(hw_tile_states(d, p, &v, &err), 0);
	assert_int_equal(v & 3, CARD_MODEL_CTX_RUN); /* let go again */
	char *txt = log_text(log);
	char want[64];
	snprintf(want, sizeof want, "w %05x <- 00000001 TDI %u RUN_BREAK",
	         card_tdi_reg(p, CARD_TDI_RUN_BREAK), p);
	expect_in(txt, want);
	snprintf(want, sizeof want, "w %05x <- 00000000 TDI %u RUN_BREAK",
	         card_tdi_reg(p, CARD_TDI_RUN_BREAK), p);
	expect_in(txt, want);
	free(txt);
	hw_close(d);
	fclose(log);
}

/* Random words at random addresses, read and written through the debug
 * interface of an idle worker context, against the tile's memory read
 * directly; and a random replay of bytes flipped in a good capture is
 * either refused whole or applied. */
static void
test_random(void **state)
{
	(void)state;
	ipu_error err;
	HwDev *d = hw_open("model:c600:tiles=1", NULL, &err);
	assert_non_null(d);
	const Chip *c = chip_default();
	Tile *t = chipsim_tile(cardsim_chip(hw_model(d)), 0);
	uint32_t p = chip_physical(c, 0), seed = 12345;
	uint32_t words = (c->mem_end - c->mem_base) / 4;
	for (int i = 0; i < 300; i++) {
		seed = seed * 1664525u + 1013904223u;
		uint32_t addr = c->mem_base + 4 * (seed % words), v, got;
		seed = seed * 1664525u + 1013904223u;
		v = seed;
		int ctx = 1 + i % 6;
		if (i & 1) {
			tile_write(t, addr, &v, 4);
			assert_int_equal(
			    hw_tile_read(d, p, ctx, addr, &got, &err), 0);
		} else {
			assert_int_equal(
			    hw_tile_write(d, p, ctx, addr, v, &err), 0);
			tile_read(t, addr, &got, 4);
		}
		assert_int_equal(got, v);
	}
	uint8_t good[12 + 8 * 2], buf[sizeof good];
	const uint32_t pairs[] = {0x2000, 0x11, 0x2004, 0x22};
	make_config(good, pairs, 2);
	for (int i = 0; i < 500; i++) {
		memcpy(buf, good, sizeof buf);
		seed = seed * 1664525u + 1013904223u;
		buf[seed % sizeof buf] ^= (uint8_t)(1 + (seed >> 24) % 255);
		size_t len = sizeof buf - (seed >> 8) % 3;
		int rc = hw_replay_config(d, buf, len, "r.cfg", &err);
		assert_true(rc == 0 || rc == IPU_ERR_FORMAT ||
		            rc == IPU_ERR_IO);
	}
	hw_close(d);
}

/* The autoloader installs an image on tiles 0..n-1 and starts them. */
static void
test_autoloader(void **state)
{
	(void)state;
	ipu_error err;
	HwDev *d = hw_open("model:c600:tiles=4", NULL, &err);
	assert_non_null(d);
	const Chip *c = chip_default();
	TileImage img;
	assemble("\t.globl _start\n_start:\n"
	         "\tget $m0, $TILE_ID\n"
	         "\tsetzi $m1, 0x60000\n"
	         "\tst32 $m0, $m1, $mzero, 0\n"
	         "\tbr $lr\n",
	         &img);
	assert_int_equal(img.entry, c->mem_base);
	const TileSegment *s = &img.seg[0];
	assert_int_equal(s->addr, c->mem_base);
	/* refused: no tiles, too large, a GO to tiles before an image */
	assert_int_equal(hw_install_bootloader(d, s->bytes, s->size, 0, &err),
	                 IPU_ERR_ARGUMENT);
	static uint8_t big[CARD_BOOT_AREA + 4];
	assert_int_equal(hw_install_bootloader(d, big, sizeof big, 4, &err),
	                 IPU_ERR_ARGUMENT);
	assert_int_equal(
	    hw_write32(d, CARD_REG_AUTOLD_CSR,
	               3 << CARD_AUTOLD_TILE_SHIFT | CARD_AUTOLD_GO, &err),
	    IPU_ERR_IO);
	expect_in(err.msg, "without an image");
	/* more tiles than the model's chip */
	assert_int_equal(hw_install_bootloader(d, s->bytes, s->size, 5, &err),
	                 IPU_ERR_IO);
	assert_int_equal(hw_install_bootloader(d, s->bytes, s->size, 4, &err),
	                 0);
	img_free(&img);
	ChipSim *chip = cardsim_chip(hw_model(d));
	ChipError ce;
	assert_int_equal(chipsim_run(chip, 1000, &ce), RUN_DONE);
	for (uint32_t id = 0; id < 4; id++) {
		uint32_t v;
		assert_int_equal(
		    hw_tile_read(d, chip_physical(c, id), 0, 0x60000, &v, &err),
		    0);
		assert_int_equal(v, id);
	}
	hw_close(d);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Frames and a batch, every field by hand: 993 bytes take 2 frames, the
 * second with one byte of image. */
static void
test_frames(void **state)
{
	(void)state;
	ipu_error err;
	uint8_t img[993], out[2 * 1024];
	for (size_t i = 0; i < sizeof img; i++)
		img[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(hw_frames(992), 1);
	assert_int_equal(hw_frames(993), 2);
	assert_int_equal(hw_frame_tile(17, img, sizeof img, out, &err), 0);
	assert_int_equal(get32(out), 0);
	assert_int_equal(get32(out + 4), 17);
	assert_int_equal(get32(out + 8), 0);
	assert_int_equal(get32(out + 1024), 1);
	assert_int_equal(get32(out + 1024 + 8), 8u << 24);
	assert_memory_equal(out + 16, img, 992);
	assert_int_equal(out[1024 + 16], img[992]);
	for (int i = 1024 + 17; i < 2048 - 16; i++)
		assert_int_equal(out[i], 0);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(out[1008 + i], 0xff);
		assert_int_equal(out[2032 + i], 0xff);
	}
	/* the limits: 643 frames of 992 bytes, no empty image */
	static uint8_t big[644 * 992], bigout[644 * 1024];
	assert_int_equal(hw_frame_tile(0, big, 643 * 992, bigout, &err), 0);
	assert_int_equal(hw_frame_tile(0, big, 643 * 992 + 1, bigout, &err),
	                 IPU_ERR_ARGUMENT);
	assert_int_equal(hw_frame_tile(0, img, 0, out, &err), IPU_ERR_ARGUMENT);

	/* a batch of two tiles: descriptors, then frames from 4096 */
	static uint8_t buf[4096 + 3 * 1024];
	HwTileImage t[2] = {{.physical = 5, .img = img, .len = sizeof img},
	                    {.physical = 9, .img = img, .len = 10}};
	assert_int_equal(hw_build_batch(buf, sizeof buf, t, 2, &err), 0);
	assert_int_equal(get32(buf), 4096);
	assert_int_equal(get32(buf + 4), 2);
	assert_int_equal(get32(buf + 8), 4096 + 2048);
	assert_int_equal(get32(buf + 12), 1);
	assert_int_equal(get32(buf + 16), 0); /* slot 2 empty */
	assert_int_equal(get32(buf + 4096 + 2048 + 4), 9);
	assert_int_equal(get32(buf + 4096 + 2048 + 8), 8u << 24);
	assert_memory_equal(buf + 4096 + 2048 + 16, img, 10);
	/* one byte short of room */
	assert_int_equal(hw_build_batch(buf, sizeof buf - 1, t, 2, &err),
	                 IPU_ERR_ARGUMENT);
}

static void
test_cli(void **state)
{
	(void)state;
	char out[32768];
	assert_int_equal(test_dir_make("hw"), 0);
	setenv("IPU_DEV_DIR", test_dir, 1);
	assert_int_equal(run_ipu(out, sizeof out, "device probe"), 1);
	expect_in(out, "no ");
	expect_in(out, "/ipuN device nodes");
	assert_int_equal(run_ipu(out, sizeof out, "device info"), 1);
	expect_in(out, "ipu0 does not exist");
	unsetenv("IPU_DEV_DIR");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "device info --device model:c600:tiles=2 "
	                         "--reset --log l.txt"),
	                 0);
	expect_in(out, "reset: ICU reset");
	char path[128], logbuf[4096] = {0};
	snprintf(path, sizeof path, "%s/l.txt", test_dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_true(fread(logbuf, 1, sizeof logbuf - 1, f) > 0);
	fclose(f);
	expect_in(logbuf, "mail 4078020e");
	expect_in(logbuf, "r 30000 -> 00000000 TDI 0 CTXT_STATUS");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "device info --device model:c600:tiles=2 "
	                         "--log l.txt"),
	                 1); /* not over the log without --force */
	write_text("bad.cfg", "IPUCFG2");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "device info --device model:c600 --config "
	                         "bad.cfg"),
	                 1);
	expect_in(out, "not a configuration capture");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "device info --device model:c600:tiles=3 "
	                         "--tiles 3"),
	                 0);
	expect_in(out, "tile 2, tile 64 (physical): every context idle");
	assert_int_equal(run_ipu(out, sizeof out,
	                         "device info --device model:c600 --tiles 0"),
	                 2);
	assert_int_equal(run_ipu(out, sizeof out, "device info --facts"), 0);
	expect_in(out, "REG_AUTOLD_CSR");
	assert_int_equal(run_ipu(out, sizeof out, "device info --frob"), 2);
	assert_int_equal(run_ipu(out, sizeof out, "device flash"), 2);
	assert_int_equal(test_dir_remove(), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ioctl_codes),
	    cmocka_unit_test(test_layout_facts),
	    cmocka_unit_test(test_tdi_words),
	    cmocka_unit_test(test_linux_missing),
	    cmocka_unit_test(test_model_reset_and_log),
	    cmocka_unit_test(test_config_replay),
	    cmocka_unit_test(test_tdi_fault),
	    cmocka_unit_test(test_tdi_watch),
	    cmocka_unit_test(test_tdi_running),
	    cmocka_unit_test(test_random),
	    cmocka_unit_test(test_autoloader),
	    cmocka_unit_test(test_frames),
	    cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

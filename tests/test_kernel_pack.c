/*
 * test_kernel_pack.c - kernels/pack.S on one emulated C600 tile: B or B^T
 * in a row-major block with random bytes everywhere (padding included)
 * packed into the GEMM weight layout, compared byte for byte with the
 * host packer gemm_pack_b (for f8 from B, itself checked against the
 * layout's definition); every byte outside dst unchanged; the call's
 * cycles equal to pack_cycles. Bad calls are rejected by pack_check.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/asm/asm.h"
#include "../src/kernels/kernels.h"
#include "../src/bench/tile_kernel.h"
#include "../src/kernels/elementwise.h"
#include "../src/kernels/pack.h"
#include "../src/util/util.h"

enum { ARGS = 0x7f000, SRC_AT = 0x80000, DST_AT = 0xc0000, SPAN = 0x60000 };

static int print_rates;

static uint32_t
rnd32(void)
{
	static uint64_t s = 0x9e3779b97f4a7c15ull;
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (uint32_t)(s >> 16);
}

/* The kernel linked for the C600 (0: pack_f8, which brings pack, whose
 * padding routine it shares) or the GC200 (1: pack alone). */
static const TileImage *
image(const Chip *chip)
{
	static TileImage img[2];
	static int done[2];
	int i = chip->base != chip_default();
	if (!done[i]) {
		const char *names[] = {i ? "pack" : "pack_f8"};
		Diag d;
		assert_int_equal(kernel_image(names, 1, chip, &img[i], &d), 0);
		done[i] = 1;
	}
	return &img[i];
}

/* B [bk x bn] f8 (row-major) to the weight layout by its definition
 * (docs/kernel-gemm.md "Layouts": panel (q, p) row m holds K 32p.. of
 * column 16q + m, zero past bk and bn), apart from gemm_pack_b. */
static void
transpose_f8(const uint8_t *b, uint32_t bk, uint32_t bn, uint8_t *out)
{
	uint32_t nk = (bk + 31) / 32, np = (bn + 15) / 16;
	for (uint32_t q = 0; q < np; q++)
		for (uint32_t p = 0; p < nk; p++)
			for (uint32_t m = 0; m < 16; m++)
				for (uint32_t j = 0; j < 32; j++) {
					uint32_t k = 32 * p + j, n = 16 * q + m;
					out[(q * nk + p) * 512 + 32 * m + j] =
					    k < bk && n < bn ? b[k * bn + n]
					                     : 0;
				}
}

/* Pack B [bk x bn] (or, transposed, from B^T) with `extra` bytes more than
 * the padded source row between rows; with `one` (f8 from B) column bn
 * of the bk rows holding that byte: what packs B with that column added
 * makes. */
static void
run_pack_on(const Chip *chip, GemmDtype t, int transposed, uint32_t bk,
            uint32_t bn, uint32_t extra, uint8_t one)
{
	uint32_t e = gemm_in_bytes(t);
	uint32_t row = pack_src_row_bytes(t, transposed, bk, bn);
	PackCall c = {.t = t,
	              .transposed = transposed,
	              .bk = bk,
	              .bn = bn,
	              .src = SRC_AT,
	              .stride = row + extra,
	              .dst = DST_AT,
	              .one = one};
	Diag d;
	if (pack_check(&c, &d))
		fail_msg("pack_check: %s", d.msg);
	uint8_t *mem = xcalloc(SPAN, 1), *after = xcalloc(SPAN, 1);
	for (uint32_t i = 0; i < SPAN; i++)
		mem[i] = (uint8_t)rnd32();
	/* B row-major, read from the source as the kernel should */
	uint32_t bw = bn + (one ? 1 : 0); /* B's columns and the ones */
	uint8_t *b = xcalloc((size_t)bk * bw, e);
	for (uint32_t k = 0; k < bk; k++) {
		for (uint32_t n = 0; n < bn; n++) {
			uint32_t off = transposed ? n * c.stride + k * e
			                          : k * c.stride + n * e;
			memcpy(b + ((size_t)k * bw + n) * e, mem + off, e);
		}
		if (one)
			b[(size_t)k * bw + bn] = one;
	}
	uint32_t bytes = gemm_b_bytes(t, bk, bn);
	uint8_t *want = xcalloc(bytes, 1);
	gemm_pack_b(t, bk, bw, b, want);
	if (t == GEMM_F8) { /* the host packer agrees with the definition */
		uint8_t *def = xcalloc(bytes, 1);
		transpose_f8(b, bk, bw, def);
		assert_memory_equal(def, want, bytes);
		free(def);
	}

	Tile *tile = tile_new(chip, 0);
	const TileImage *img = image(chip);
	tile_load_image(tile, img);
	tile_write(tile, SRC_AT, mem, SPAN);
	uint64_t cycles = 0;
	if (pack_tile_call(tile, img, &c, ARGS, &cycles, &d))
		fail_msg("%s", d.msg);
	tile_read(tile, SRC_AT, after, SPAN);
	const char *name = pack_entry(t, transposed);
	for (uint32_t i = 0; i < bytes; i++)
		if (after[DST_AT - SRC_AT + i] != want[i])
			fail_msg("%s %ux%u: byte %u (panel %u, row %u) is "
			         "0x%02x, gemm_pack_b has 0x%02x",
			         name, bk, bn, i, i / 512, i % 512 / 32,
			         after[DST_AT - SRC_AT + i], want[i]);
	for (uint32_t i = 0; i < SPAN; i++)
		if ((i < DST_AT - SRC_AT || i >= DST_AT - SRC_AT + bytes) &&
		    after[i] != mem[i])
			fail_msg("%s %ux%u: byte 0x%x outside dst changed",
			         name, bk, bn, SRC_AT + i);
	if (cycles != pack_cycles(chip, &c))
		fail_msg("%s %ux%u at %s: %llu cycles, pack_cycles says %llu",
		         name, bk, bn, chip->timing->spec,
		         (unsigned long long)cycles,
		         (unsigned long long)pack_cycles(chip, &c));
	if (print_rates)
		printf(
		    "%-10s %s %4u x %4u: %6llu cycles, %.3f elements/cycle\n",
		    name, gemm_dtype_name(t), bk, bn,
		    (unsigned long long)cycles,
		    (double)bk * bn / (double)cycles);
	tile_free(tile);
	free(want);
	free(b);
	free(mem);
	free(after);
}

/* On the C600; the shapes take turns at the nominal timing profile and
 * its bounds. */
static void
run_pack(GemmDtype t, int transposed, uint32_t bk, uint32_t bn, uint32_t extra)
{
	run_pack_on(profile_chip((TimingBound)((bk + bn + t) % 3)), t,
	            transposed, bk, bn, extra, 0);
}

static const uint32_t shapes[][3] = {
    /* bk, bn, extra stride */
    {1, 1, 0},    {16, 16, 0}, {8, 16, 8},   {17, 5, 0},   {3, 40, 16},
    {72, 40, 0},  {40, 72, 8}, {33, 48, 0},  {100, 50, 0}, {64, 16, 24},
    {16, 100, 0}, {5, 33, 0},  {129, 7, 64},
};

static void
test_pack_b(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		for (GemmDtype t = GEMM_F32; t <= GEMM_F8; t++)
			run_pack(t, 0, shapes[i][0], shapes[i][1],
			         shapes[i][2]);
	}
}

static void
test_pack_bt(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		for (GemmDtype t = GEMM_F32; t <= GEMM_F8; t++)
			run_pack(t, 1, shapes[i][0], shapes[i][1],
			         shapes[i][2]);
}

/* f8 from B with a byte in column bn (V's ones, PV's sum): ragged and
 * whole K-panels, one to eight padding columns (15: no row past bn is
 * zeroed), at the three profiles. */
static void
test_pack_ones(void **state)
{
	(void)state;
	static const uint32_t ones[][3] = {
	    /* bk, bn, extra stride */
	    {729, 72, 0}, {96, 72, 8},  {17, 5, 0},
	    {32, 15, 0},  {129, 7, 64}, {100, 50, 0},
	};
	for (size_t i = 0; i < sizeof ones / sizeof ones[0]; i++)
		run_pack_on(profile_chip((TimingBound)(i % 3)), GEMM_F8, 0,
		            ones[i][0], ones[i][1], ones[i][2],
		            (uint8_t)(0x38 + i));
}

/* The GC200 (ipu2) links and runs pack too: nothing in it is ipu21's;
 * pack_f8 (shuf8x8lo/hi) is refused. */
static void
test_gc200(void **state)
{
	(void)state;
	const Chip *chip = chip_by_name("gc200");
	assert_non_null(chip);
	run_pack_on(chip, GEMM_F16, 0, 72, 40, 0, 0);
	run_pack_on(chip, GEMM_F32, 0, 33, 48, 8, 0);
	run_pack_on(chip, GEMM_F16, 1, 40, 72, 0, 0);
	static const char *const f8[] = {"pack_f8"};
	TileImage img;
	Diag d;
	assert_int_equal(kernel_image(f8, 1, chip, &img, &d), IPU_EINVAL);
	if (!strstr(d.msg, "ipu21"))
		fail_msg("'%s' does not name ipu21", d.msg);
}

/* Rates for docs/kernel-pack.md (checked like every call above). */
static void
test_rates(void **state)
{
	(void)state;
	print_rates = 1;
	run_pack(GEMM_F16, 0, 128, 128, 0);
	run_pack(GEMM_F32, 0, 128, 64, 0);
	run_pack(GEMM_F16, 1, 128, 128, 0);
	run_pack(GEMM_F32, 1, 64, 128, 0);
	run_pack(GEMM_F8, 0, 128, 128, 0);
	run_pack(GEMM_F8, 1, 128, 128, 0);
	run_pack(GEMM_F16, 0, 72, 61, 0);
	run_pack(GEMM_F16, 1, 72, 61, 0);
	run_pack(GEMM_F8, 0, 96, 72, 0);
	run_pack(GEMM_F8, 1, 96, 72, 0);
	print_rates = 0;
}

static void
expect_reject(const PackCall *c, const char *words)
{
	Diag d;
	assert_int_equal(pack_check(c, &d), IPU_EINVAL);
	if (!strstr(d.msg, words))
		fail_msg("'%s' does not mention '%s'", d.msg, words);
}

static void
test_check(void **state)
{
	(void)state;
	const PackCall good = {.t = GEMM_F16,
	                       .bk = 20,
	                       .bn = 20,
	                       .src = SRC_AT,
	                       .stride = 64,
	                       .dst = DST_AT};
	Diag d;
	assert_int_equal(pack_check(&good, &d), IPU_OK);
	PackCall c = good;
	c.t = GEMM_F8; /* 20 columns pad to 32 bytes */
	c.stride = 32;
	assert_int_equal(pack_check(&c, &d), IPU_OK);
	c.one = 0x38;
	assert_int_equal(pack_check(&c, &d), IPU_OK);
	c.bn = 32;
	expect_reject(&c, "padding column");
	c.bn = 20;
	c.transposed = 1;
	expect_reject(&c, "padding column");
	c.transposed = 0;
	c.t = GEMM_F16;
	c.stride = 64;
	expect_reject(&c, "padding column");
	c.t = GEMM_F8;
	c.one = 0;
	c.stride = 24;
	expect_reject(&c, "(32 bytes)");
	c.dst = SRC_AT + 32 * 31; /* the source's last padded row */
	c.stride = 32;
	expect_reject(&c, "overlaps");
	c = good;
	c.bn = 0;
	expect_reject(&c, "empty");
	c = good;
	c.src += 4;
	expect_reject(&c, "src address");
	c = good;
	c.dst += 2;
	expect_reject(&c, "dst address");
	c = good;
	c.stride = 60;
	expect_reject(&c, "multiple of 8");
	c = good;
	c.stride = 56; /* 20 columns pad to 32: 64 bytes */
	expect_reject(&c, "shorter");
	c = good;
	c.dst = SRC_AT + 64 * 31; /* the source's last padded row */
	expect_reject(&c, "overlaps");
	c = good;
	c.src = 0xffffff00u;
	expect_reject(&c, "4 GiB");
}

/* The f8 attention's K as B^T's n-panel straight from its cast
 * (layout_segments' bt, docs/kernel-pack.md "pack_bt from the cast"):
 * K's rows [n x k] f16 (n <= block: 8, the compiler's, or 16) stored as
 * ceil(k / 32) panels of block x 32 halves, zero-padded, and
 * ew_cast_f16_f8 walking them as nseg = panels, rows = block, cols = 32
 * writes, byte for byte, what the separate kernels make: ew_cast_f16_f8
 * of the rows, then pack_bt of its f8 rows (each panel's first block
 * rows; the rest is pack_bt's zero rows past bn). Random finite
 * halves (|x| < 2, scale 2^-1), n and k ragged; the cycles exactly
 * ew_cycles'. */
static void
run_cast_bt(uint32_t block, uint32_t n, uint32_t k)
{
	enum {
		ROWS = 0x80000,
		F8 = 0x90000,
		PANELS = 0xa0000,
		OUT = 0xb0000,
		REF = 0xc0000,
		SPAN2 = 0x48000
	};
	const Chip *chip = chip_default();
	static TileImage img;
	static int done;
	if (!done) {
		const char *names[] = {"elementwise", "elementwise_f8",
		                       "pack_f8"};
		Diag d0;
		assert_int_equal(kernel_image(names, 3, chip, &img, &d0), 0);
		done = 1;
	}
	uint32_t np = (k + 31) / 32, kr = (k + 7) / 8 * 8;
	uint8_t *mem = xcalloc(SPAN2, 1), *after = xcalloc(SPAN2, 1);
	for (uint32_t i = 0; i < SPAN2; i++)
		mem[i] = (uint8_t)rnd32();
	/* the panels' padding zero, their data the rows' */
	memset(mem + PANELS - ROWS, 0, np * block * 64);
	for (uint32_t r = 0; r < n; r++)
		for (uint32_t c = 0; c < kr; c++) {
			uint16_t h = (uint16_t)(rnd32() & 0xbfff); /* |x| < 2 */
			if (c >= k)
				continue;
			memcpy(mem + (r * kr + c) * 2, &h, 2);
			memcpy(mem + PANELS - ROWS +
			           ((c / 32 * block + r) * 32 + c % 32) * 2,
			       &h, 2);
		}
	Tile *tile = tile_new(chip, 0);
	tile_load_image(tile, &img);
	tile_write(tile, ROWS, mem, SPAN2);
	Diag d;
	uint64_t cycles = 0, other = 0;
	/* the one call on the panels, first on the fresh tile (its cycles
	 * from a known phase of the workers' turns) */
	EwCall fused = {
	    .op = EW_CAST, .in = DT_F16, .out = DT_F8_F143, .fp8_scale = -1};
	fused.nseg = np;
	fused.rows = block;
	fused.cols = 32;
	fused.a = (EwRef){PANELS, block * 64, 64};
	fused.dst = (EwRef){OUT, block * 32, 32};
	if (ew_tile_call(tile, &img, &fused, ARGS, &cycles, &d))
		fail_msg("%s", d.msg);
	/* the separate kernels: the cast of the rows, pack_bt of its rows */
	EwCall cast = {.op = EW_CAST,
	               .in = DT_F16,
	               .out = DT_F8_F143,
	               .fp8_scale = -1,
	               .nseg = 1,
	               .rows = n,
	               .cols = kr,
	               .a = {ROWS, 0, kr * 2},
	               .dst = {F8, 0, np * 32}};
	if (ew_tile_call(tile, &img, &cast, ARGS, &other, &d))
		fail_msg("%s", d.msg);
	PackCall pack = {.t = GEMM_F8,
	                 .transposed = 1,
	                 .bk = k,
	                 .bn = n,
	                 .src = F8,
	                 .stride = np * 32,
	                 .dst = REF};
	if (pack_tile_call(tile, &img, &pack, ARGS, &other, &d))
		fail_msg("%s", d.msg);
	tile_read(tile, ROWS, after, SPAN2);
	uint32_t bytes = gemm_b_bytes(GEMM_F8, k, n);
	assert_int_equal(bytes, np * 512);
	for (uint32_t i = 0; i < np * block * 32; i++) {
		uint32_t j = i / (block * 32), o = i % (block * 32);
		if (after[OUT - ROWS + i] != after[REF - ROWS + j * 512 + o])
			fail_msg(
			    "cast to B^T panels of %u rows, %ux%u: panel "
			    "%u byte %u (row %u) is 0x%02x, cast + pack_bt "
			    "0x%02x",
			    block, n, k, j, o, o / 32, after[OUT - ROWS + i],
			    after[REF - ROWS + j * 512 + o]);
	}
	if (cycles != ew_cycles(chip, &fused))
		fail_msg("cast to B^T panels of %u rows, %ux%u: %llu cycles, "
		         "ew_cycles says %llu",
		         block, n, k, (unsigned long long)cycles,
		         (unsigned long long)ew_cycles(chip, &fused));
	if (print_rates)
		printf("cast to B^T panels of %2u rows, %2u x %3u: %llu "
		       "cycles\n",
		       block, n, k, (unsigned long long)cycles);
	tile_free(tile);
	free(mem);
	free(after);
}

static void
test_cast_bt(void **state)
{
	(void)state;
	static const uint32_t shape[][3] = {
	    {8, 8, 72},  {8, 1, 72}, {8, 5, 40},   {8, 8, 24},   {16, 16, 72},
	    {16, 9, 72}, {16, 1, 8}, {16, 16, 32}, {16, 16, 96}, {16, 3, 104}};
	for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++)
		run_cast_bt(shape[i][0], shape[i][1], shape[i][2]);
}

/* pack_b_f16_f8 on one tile: `panels` blocks of 32 x 16 f16 with random
 * halves (|x| < 2, or any bits with `raw`), rows stride bytes apart,
 * blocks panel_stride apart (side by side in one row-major block when
 * panel_stride is 32), cast and packed by the one call; against
 * ew_cast_f16_f8 of each block followed by pack_b_f8 of its f8 rows
 * (bk 32, bn 16) on the same tile, byte for byte; no byte outside dst
 * changed; the cycles exactly pack_cast_cycles'. */
static void
run_cast_pack(const Chip *chip, uint32_t panels, uint32_t stride,
              uint32_t panel_stride, DType f8, int scale, int raw)
{
	enum {
		SRC = 0x80000,
		F8 = 0x90000,
		OUT = 0xa0000,
		REF = 0xb0000,
		SPAN3 = 0x40000
	};
	static TileImage img[3];
	static const Chip *linked[3];
	int slot = 0;
	while (slot < 2 && linked[slot] && linked[slot] != chip)
		slot++;
	if (linked[slot] != chip) {
		const char *names[] = {"elementwise", "elementwise_f8",
		                       "pack_f8"};
		Diag d0;
		assert_int_equal(kernel_image(names, 3, chip, &img[slot], &d0),
		                 0);
		linked[slot] = chip;
	}
	uint8_t *mem = xcalloc(SPAN3, 1), *after = xcalloc(SPAN3, 1);
	for (uint32_t i = 0; i < SPAN3; i++)
		mem[i] = (uint8_t)rnd32();
	for (uint32_t p = 0; p < panels; p++)
		for (uint32_t r = 0; r < 32; r++)
			for (uint32_t c = 0; c < 16; c++) {
				uint16_t h = (uint16_t)rnd32();
				if (!raw)
					h &= 0xbfff; /* |x| < 2 */
				memcpy(mem + p * panel_stride + r * stride +
				           2 * c,
				       &h, 2);
			}
	Tile *tile = tile_new(chip, 0);
	tile_load_image(tile, &img[slot]);
	tile_write(tile, SRC, mem, SPAN3);
	Diag d;
	uint64_t cycles = 0, other = 0;
	PackCastCall call = {.f8 = f8,
	                     .fp8_scale = scale,
	                     .panels = panels,
	                     .src = SRC,
	                     .stride = stride,
	                     .panel_stride = panel_stride,
	                     .dst = OUT};
	if (pack_cast_tile_call(tile, &img[slot], &call, ARGS, &cycles, &d))
		fail_msg("%s", d.msg);
	tile_read(tile, SRC, after, SPAN3);
	for (uint32_t i = 0; i < SPAN3; i++)
		if ((i < OUT - SRC || i >= OUT - SRC + panels * 512) &&
		    after[i] != mem[i])
			fail_msg(
			    "pack_b_f16_f8 of %u panels: byte 0x%x outside "
			    "dst changed",
			    panels, SRC + i);
	/* the separate kernels, a block at a time */
	for (uint32_t p = 0; p < panels; p++) {
		EwCall cast = {.op = EW_CAST,
		               .in = DT_F16,
		               .out = f8,
		               .fp8_scale = scale,
		               .nseg = 1,
		               .rows = 32,
		               .cols = 16,
		               .a = {SRC + p * panel_stride, 0, stride},
		               .dst = {F8, 0, 16}};
		if (ew_tile_call(tile, &img[slot], &cast, ARGS, &other, &d))
			fail_msg("%s", d.msg);
		PackCall pack = {.t = GEMM_F8,
		                 .bk = 32,
		                 .bn = 16,
		                 .src = F8,
		                 .stride = 16,
		                 .dst = REF + p * 512};
		if (pack_tile_call(tile, &img[slot], &pack, ARGS, &other, &d))
			fail_msg("%s", d.msg);
	}
	uint8_t *ref = xcalloc(panels * 512, 1),
	        *out = xcalloc(panels * 512, 1);
	tile_read(tile, REF, ref, panels * 512);
	tile_read(tile, OUT, out, panels * 512);
	for (uint32_t i = 0; i < panels * 512; i++)
		if (out[i] != ref[i])
			fail_msg(
			    "pack_b_f16_f8 of %u panels (stride %u, panel "
			    "stride %u): panel %u row %u byte %u is 0x%02x, "
			    "cast + pack_b_f8 0x%02x",
			    panels, stride, panel_stride, i / 512, i % 512 / 32,
			    i % 32, out[i], ref[i]);
	if (cycles != pack_cast_cycles(chip, &call))
		fail_msg("pack_b_f16_f8 of %u panels at %s: %llu cycles, "
		         "pack_cast_cycles says %llu",
		         panels, chip->timing->spec, (unsigned long long)cycles,
		         (unsigned long long)pack_cast_cycles(chip, &call));
	if (print_rates)
		printf("pack_b_f16_f8 %2u panels (stride %u, panel stride %u): "
		       "%llu cycles\n",
		       panels, stride, panel_stride,
		       (unsigned long long)cycles);
	tile_free(tile);
	free(ref);
	free(out);
	free(mem);
	free(after);
}

static void
test_cast_pack(void **state)
{
	(void)state;
	/* panels, extra stride, side by side, type, scale, raw bits */
	static const struct {
		uint32_t panels, extra;
		int side, f152, scale, raw;
	} c[] = {
	    {1, 0, 0, 0, -1, 0}, {2, 0, 0, 0, 0, 0},   {3, 8, 0, 1, 2, 0},
	    {5, 0, 1, 0, -1, 0}, {5, 16, 1, 0, 3, 1},  {6, 0, 0, 0, -1, 0},
	    {7, 24, 0, 1, 0, 1}, {1, 40, 0, 0, -5, 0}, {13, 0, 0, 0, -1, 0},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		uint32_t stride = c[i].side ? 32 * c[i].panels + c[i].extra
		                            : 32 + c[i].extra,
		         ps = c[i].side ? 32 : 32 * stride + 8 * (uint32_t)i;
		run_cast_pack(profile_chip((TimingBound)(i % 3)), c[i].panels,
		              stride, ps, c[i].f152 ? DT_F8_F152 : DT_F8_F143,
		              c[i].scale, c[i].raw);
	}
	print_rates = 1;
	run_cast_pack(chip_default(), 1, 32, 1024, DT_F8_F143, -1, 0);
	run_cast_pack(chip_default(), 2, 32, 1024, DT_F8_F143, -1, 0);
	run_cast_pack(chip_default(), 5, 160, 32, DT_F8_F143, -1, 0);
	print_rates = 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pack_b),    cmocka_unit_test(test_pack_bt),
	    cmocka_unit_test(test_check),     cmocka_unit_test(test_gc200),
	    cmocka_unit_test(test_rates),     cmocka_unit_test(test_cast_bt),
	    cmocka_unit_test(test_cast_pack), cmocka_unit_test(test_pack_ones),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

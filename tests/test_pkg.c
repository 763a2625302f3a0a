/*
 * test_pkg.c - the package file (src/pkg/), loading packages and moving
 * tensors through the runtime, and `ipu inspect`.
 *
 * The package is built by hand: two c600 tiles share one supervisor
 * program, assembled here, that copies N words from an input piece to an
 * output piece; each tile's own data segment is the argument block (where
 * the pieces are, how many words). Tensor x (4 x 6 f32) is split by rows
 * over the tiles, padded to 8 columns (and tile 1 to 3 rows), and y has
 * the same layout, so after a run y must equal x; the test sets x from a
 * formula and checks y, and the zero padding, element by element. Reader
 * checks cover every truncation, every flipped byte, and one file per
 * validation rule with the CRC fixed up so the rule itself is reached.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ipu/runtime.h>

#include "../src/asm/asm.h"
#include "../src/graph/graph.h"
#include "../src/lower/lower.h"
#include "../src/pkg/pkg.h"

enum {
	ARGS = 0x50000, /* each tile's argument block */
	XADDR = 0x60000,
	YADDR = 0x61000,
	WADDR = 0x62000, /* w, in the GEMM weight layout, on tile 0 */
	ROWS = 4,
	COLS = 6,
	PADC = 8,
};

static const char copy_prog[] =
    "	.text\n"
    "	.globl _start\n"
    "_start:\n"
    "	setzi $m1, 0x50000\n"
    "	ld32 $m2, $m1, $mzero, 0\n" /* source */
    "	ld32 $m3, $m1, $mzero, 1\n" /* destination */
    "	ld32 $m4, $m1, $mzero, 2\n" /* words - 1 */
    "1:	ld32step $m5, $mzero, $m2+=, 1\n"
    "	st32step $m5, $mzero, $m3+=, 1\n"
    "	brnzdec $m4, 1b\n"
    "	setzi $m0, 0\n"
    "	br $lr\n"
    "	.globl copy\n"
    "copy:\n"
    "	br $lr\n";

/* The copy program linked with the default layout (code at mem_base). */
static void
build_image(TileImage *img)
{
	Obj *o, *exe;
	DiagList errs = {0};
	AsmOptions opt = {0};
	if (asm_source("copy.s", copy_prog, strlen(copy_prog), &opt, &o,
	               &errs)) {
		char buf[1024];
		diag_format(&errs.v[0], buf, sizeof buf);
		fail_msg("%s", buf);
	}
	Diag d;
	LinkOptions lo = {0};
	assert_int_equal(link_objects(&o, 1, &lo, &exe, &d), 0);
	obj_free(o);
	assert_int_equal(img_from_obj(exe, img, &d), 0);
}

/* Piece rows of tile t: tile 0 rows 0..1 (padded to 2), tile 1 rows 2..3
 * (padded to 3). */
static uint32_t pad_rows_of[2] = {2, 3};

static Package *
build_package(void)
{
	const Chip *c = chip_by_name("c600");
	Package *p = pkg_new(c, 2);
	TileImage img;
	build_image(&img);
	uint32_t copy_addr = 0;
	for (int i = 0; i < img.nseg; i++)
		if (img.seg[i].size)
			pkg_add_shared(p, img.seg[i].addr, img.seg[i].bytes,
			               img.seg[i].size);
	copy_addr = (uint32_t)img_symbol_addr(&img, "copy");
	static const uint8_t consts[16] = {1, 2,  3,  4,  5,  6,  7,  8,
	                                   9, 10, 11, 12, 13, 14, 15, 16};
	PkgTensor *x =
	    pkg_add_tensor(p, "x", DT_F32, 0, PKG_ROLE_INPUT, ROWS, COLS);
	PkgTensor *y =
	    pkg_add_tensor(p, "y", DT_F32, 0, PKG_ROLE_OUTPUT, ROWS, COLS);
	for (uint32_t t = 0; t < 2; t++) {
		uint32_t words = pad_rows_of[t] * PADC;
		uint32_t args[3] = {XADDR, YADDR, words - 1};
		pkg_add_segment(p, t, ARGS, args, sizeof args);
		pkg_add_segment(p, t, ARGS + 0x100, consts, sizeof consts);
		pkg_set_entry(p, t, img.entry);
		pkg_add_buffer(p, t, XADDR, words * 4, "x block");
		pkg_add_buffer(p, t, YADDR, words * 4, "y block");
		pkg_add_buffer(p, t, ARGS, 12, "arguments")->category =
		    PKG_MEM_ARGUMENTS;
		PkgTensor *ts[2] = {x, y};
		for (int k = 0; k < 2; k++) {
			PkgPiece *pc = pkg_add_piece(ts[k]);
			pc->tile = t;
			pc->addr = k ? YADDR : XADDR;
			pc->row0 = 2 * t;
			pc->rows = 2;
			pc->col0 = 0;
			pc->cols = COLS;
			pc->pad_rows = pad_rows_of[t];
			pc->pad_cols = PADC;
			pc->format = PKG_PF_ROWMAJOR;
		}
	}
	/* w: 8 x 16 f32 as one GEMM B panel (512 bytes), unused by the
	 * program */
	PkgTensor *w =
	    pkg_add_tensor(p, "w", DT_F32, 0, PKG_ROLE_WEIGHT, 8, 16);
	*pkg_add_piece(w) = (PkgPiece){.tile = 0,
	                               .addr = WADDR,
	                               .rows = 8,
	                               .cols = 16,
	                               .pad_rows = 8,
	                               .pad_cols = 16,
	                               .format = PKG_PF_GEMM_B};
	PkgBuffer *wb = pkg_add_buffer(p, 0, WADDR, 512, "w panels");
	wb->category = PKG_MEM_WEIGHTS;
	wb->first = 1;
	wb->last = 1;
	uint32_t op = pkg_add_op(p, "y", "copy", 48, DT_F32);
	PkgStep *s0 = pkg_add_step(p, PKG_STEP_COMPUTE, "copy x to y", 60, 1);
	s0->macs = 48;
	s0->overhead = 9;
	pkg_step_add_op(s0, op);
	pkg_step_add_kernel(s0, 0);
	pkg_add_step(p, PKG_STEP_EXCHANGE, "nothing to send", 7, 3);
	pkg_add_kernel(p, "copy", copy_addr, 2);
	/* both steps start at the entry (the program has no step code of
	 * its own), the epilogue at its return */
	for (uint32_t t = 0; t < 2; t++) {
		pkg_set_step_pc(p, t, 0, img.entry);
		pkg_set_step_pc(p, t, 1, img.entry + 8);
		pkg_set_step_pc(p, t, 2, img.entry + 32);
	}
	p->total_cycles = 67;
	p->compile_us = 1500;
	pkg_set_plan(p, "rows split over 2 tiles\n\t\"quoted\" line");
	img_free(&img);
	return p;
}

static uint8_t *
write_ok(const Package *p, size_t *len)
{
	uint8_t *data;
	Diag d;
	if (pkg_write(p, &data, len, &d))
		fail_msg("pkg_write: %s", d.msg);
	return data;
}

/* Fails unless reading gives an error whose text contains needle. */
static void
expect_read_error(const uint8_t *data, size_t len, const char *needle)
{
	Package *p;
	Diag d;
	if (!pkg_read(data, len, "t.ipk", &p, &d))
		fail_msg("read %zu bytes: no error (want '%s')", len, needle);
	assert_null(p);
	char buf[1024];
	diag_format(&d, buf, sizeof buf);
	if (needle && !strstr(buf, needle))
		fail_msg("'%s' not in '%s'", needle, buf);
}

static void
test_crc32(void **state)
{
	(void)state;
	/* the standard check value of CRC-32/ISO-HDLC */
	assert_int_equal(pkg_crc32(0, "123456789", 9), 0xcbf43926u);
	assert_int_equal(pkg_crc32(0, "", 0), 0);
	assert_int_equal(pkg_crc32(pkg_crc32(0, "1234", 4), "56789", 5),
	                 0xcbf43926u);
	/* one zero byte: table entry 0xff of the reflected polynomial,
	 * complemented: 0xd202ef8d */
	assert_int_equal(pkg_crc32(0, "\0", 1), 0xd202ef8du);
}

static void
compare(const Package *a, const Package *b)
{
	assert_ptr_equal(a->chip, b->chip);
	assert_int_equal(a->tiles, b->tiles);
	assert_int_equal(a->nblob, b->nblob);
	for (uint32_t i = 0; i < a->nblob; i++) {
		assert_int_equal(a->blob[i].len, b->blob[i].len);
		assert_memory_equal(a->blob[i].data, b->blob[i].data,
		                    a->blob[i].len);
	}
	assert_int_equal(a->nshared, b->nshared);
	assert_memory_equal(a->shared, b->shared,
	                    a->nshared * sizeof *a->shared);
	for (uint32_t t = 0; t < a->tiles; t++) {
		assert_int_equal(a->tile[t].entry, b->tile[t].entry);
		assert_int_equal(a->tile[t].nseg, b->tile[t].nseg);
		assert_memory_equal(a->tile[t].seg, b->tile[t].seg,
		                    a->tile[t].nseg * sizeof *a->tile[t].seg);
	}
	assert_int_equal(a->ntensor, b->ntensor);
	for (uint32_t i = 0; i < a->ntensor; i++) {
		const PkgTensor *x = &a->tensor[i], *y = &b->tensor[i];
		assert_string_equal(x->name, y->name);
		assert_int_equal(x->dtype, y->dtype);
		assert_int_equal(x->scale, y->scale);
		assert_int_equal(x->role, y->role);
		assert_int_equal(x->rows, y->rows);
		assert_int_equal(x->cols, y->cols);
		assert_int_equal(x->npiece, y->npiece);
		for (uint32_t k = 0; k < x->npiece; k++) {
			const PkgPiece *u = &x->piece[k], *v = &y->piece[k];
			assert_int_equal(u->tile, v->tile);
			assert_int_equal(u->addr, v->addr);
			assert_int_equal(u->row0, v->row0);
			assert_int_equal(u->rows, v->rows);
			assert_int_equal(u->col0, v->col0);
			assert_int_equal(u->cols, v->cols);
			assert_int_equal(u->pad_rows, v->pad_rows);
			assert_int_equal(u->pad_cols, v->pad_cols);
			assert_int_equal(u->format, v->format);
		}
	}
	assert_int_equal(a->nbuf, b->nbuf);
	for (uint32_t i = 0; i < a->nbuf; i++) {
		assert_int_equal(a->buf[i].tile, b->buf[i].tile);
		assert_int_equal(a->buf[i].addr, b->buf[i].addr);
		assert_int_equal(a->buf[i].bytes, b->buf[i].bytes);
		assert_int_equal(a->buf[i].category, b->buf[i].category);
		assert_int_equal(a->buf[i].first, b->buf[i].first);
		assert_int_equal(a->buf[i].last, b->buf[i].last);
		assert_string_equal(a->buf[i].kind, b->buf[i].kind);
	}
	assert_int_equal(a->nop, b->nop);
	for (uint32_t i = 0; i < a->nop; i++) {
		assert_string_equal(a->op[i].name, b->op[i].name);
		assert_string_equal(a->op[i].kind, b->op[i].kind);
		assert_int_equal(a->op[i].macs, b->op[i].macs);
		assert_int_equal(a->op[i].dtype, b->op[i].dtype);
	}
	assert_int_equal(a->nstep, b->nstep);
	for (uint32_t i = 0; i < a->nstep; i++) {
		const PkgStep *x = &a->step[i], *y = &b->step[i];
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->cycles, y->cycles);
		assert_string_equal(x->what, y->what);
		assert_int_equal(x->macs, y->macs);
		assert_int_equal(x->overhead, y->overhead);
		assert_int_equal(x->nop, y->nop);
		assert_int_equal(x->nkernel, y->nkernel);
		for (uint32_t k = 0; k < x->nop; k++)
			assert_int_equal(x->op[k], y->op[k]);
		for (uint32_t k = 0; k < x->nkernel; k++)
			assert_int_equal(x->kernel[k], y->kernel[k]);
	}
	assert_int_equal(!a->step_pc, !b->step_pc);
	if (a->step_pc)
		assert_memory_equal(a->step_pc, b->step_pc,
		                    a->tiles * (a->nstep + 1) *
		                        sizeof *a->step_pc);
	assert_int_equal(a->nkernel, b->nkernel);
	for (uint32_t i = 0; i < a->nkernel; i++) {
		assert_string_equal(a->kernel[i].name, b->kernel[i].name);
		assert_int_equal(a->kernel[i].addr, b->kernel[i].addr);
		assert_int_equal(a->kernel[i].calls, b->kernel[i].calls);
	}
	assert_int_equal(a->total_cycles, b->total_cycles);
	assert_int_equal(a->compile_us, b->compile_us);
	assert_string_equal(a->plan, b->plan);
}

static void
test_roundtrip(void **state)
{
	(void)state;
	Package *p = build_package();
	/* the code, two argument blocks; the constants are deduplicated */
	assert_int_equal(p->nblob, 4);
	assert_int_equal(p->tile[0].seg[1].blob, p->tile[1].seg[1].blob);
	assert_int_not_equal(p->tile[0].seg[0].blob, p->tile[1].seg[0].blob);
	size_t len;
	uint8_t *data = write_ok(p, &len);
	assert_memory_equal(data, PKG_MAGIC, 8);
	assert_int_equal(data[8], PKG_VERSION);
	Package *q;
	Diag d;
	if (pkg_read(data, len, "t.ipk", &q, &d))
		fail_msg("pkg_read: %s", d.msg);
	compare(p, q);
	/* writing what was read gives the same bytes */
	size_t len2;
	uint8_t *again = write_ok(q, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(data, again, len);
	/* through a file */
	char path[] = "/tmp/ipu_test_pkg_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pkg_write_file(p, path, &d), 0);
	Package *r;
	assert_int_equal(pkg_read_file(path, &r, &d), 0);
	compare(p, r);
	remove(path);
	pkg_free(r);
	free(again);
	pkg_free(q);
	free(data);
	pkg_free(p);
}

static void
test_truncated(void **state)
{
	(void)state;
	Package *p = build_package();
	size_t len;
	uint8_t *data = write_ok(p, &len);
	for (size_t n = 0; n < len; n++)
		expect_read_error(data, n,
		                  n < 8 ? "not a package" : "truncated");
	free(data);
	pkg_free(p);
}

static void
test_flipped(void **state)
{
	(void)state;
	Package *p = build_package();
	size_t len;
	uint8_t *data = write_ok(p, &len);
	for (size_t i = 0; i < len; i++) {
		data[i] ^= 0xff;
		expect_read_error(data, len,
		                  i < 8    ? "not a package"
		                  : i < 12 ? "version"
		                  : i < 16 ? "header size"
		                  : i < 24 ? "body has"
		                  : i < 28 ? "checksum mismatch"
		                  : i < 32 ? "flags"
		                           : "checksum mismatch");
		data[i] ^= 0xff;
	}
	free(data);
	pkg_free(p);
}

/* Put a new CRC in the header, so that the reader gets past it. */
static void
fix_crc(uint8_t *data, size_t len)
{
	uint32_t c =
	    pkg_crc32(0, data + PKG_HEADER_BYTES, len - PKG_HEADER_BYTES);
	for (int i = 0; i < 4; i++)
		data[24 + i] = (uint8_t)(c >> 8 * i);
}

/* Any single byte changed, CRC fixed: the reader either accepts (a value
 * that is still valid, e.g. a cycle count) or names an error; never a
 * crash (the sanitizer build checks that). What it accepts must write
 * back to the same bytes. */
static void
test_flipped_fixed_crc(void **state)
{
	(void)state;
	Package *p = build_package();
	size_t len;
	uint8_t *data = write_ok(p, &len);
	int accepted = 0, rejected = 0;
	for (size_t i = PKG_HEADER_BYTES; i < len; i++)
		for (int v = 0; v < 3; v++) {
			static const uint8_t xr[3] = {0x01, 0x80, 0xff};
			data[i] ^= xr[v];
			fix_crc(data, len);
			Package *q;
			Diag d;
			if (pkg_read(data, len, "t.ipk", &q, &d) == 0) {
				size_t n2;
				uint8_t *w = write_ok(q, &n2);
				assert_int_equal(n2, len);
				assert_memory_equal(w, data, len);
				free(w);
				pkg_free(q);
				accepted++;
			} else {
				assert_true(d.msg[0] != 0);
				rejected++;
			}
			data[i] ^= xr[v];
		}
	assert_true(rejected > 0 && accepted > 0);
	free(data);
	pkg_free(p);
}

/* Patch a little-endian u32 at `off` and fix the CRC. */
static void
patch32(uint8_t *data, size_t len, size_t off, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		data[off + i] = (uint8_t)(v >> 8 * i);
	fix_crc(data, len);
}

static void
test_header_errors(void **state)
{
	(void)state;
	Package *p = build_package();
	size_t len;
	uint8_t *data = write_ok(p, &len);
	uint8_t *copy = malloc(len + 4);
	memcpy(copy, data, len);
	patch32(copy, len, 8, 2);
	expect_read_error(
	    copy, len, "package format version 2; this build reads version 3");
	memcpy(copy, data, len);
	copy[24] ^= 1;
	expect_read_error(copy, len, "checksum mismatch");
	/* a chip name the build does not know: body offset 4 is "c600" */
	memcpy(copy, data, len);
	assert_memory_equal(copy + 36, "c600", 4);
	copy[39] = '1';
	fix_crc(copy, len);
	expect_read_error(copy, len, "unknown chip 'c601'");
	/* tiles used: 1473 */
	memcpy(copy, data, len);
	patch32(copy, len, 40, 1473);
	expect_read_error(copy, len, "1473; the c600 has 1..1472");
	/* trailing bytes, with the body size and CRC covering them */
	memcpy(copy, data, len);
	memset(copy + len, 0, 4);
	patch32(copy, len + 4, 16, (uint32_t)(len + 4 - PKG_HEADER_BYTES));
	expect_read_error(copy, len + 4, "4 bytes follow the step code");
	/* a huge blob count cannot make the reader allocate */
	memcpy(copy, data, len);
	size_t plan_at = 32 + 4 + 4 + 4 + 8 + 8;
	uint32_t plan_len = (uint32_t)strlen(p->plan);
	patch32(copy, len, plan_at + 4 + plan_len, 0xffffffffu);
	expect_read_error(copy, len, "blob count");
	free(copy);
	free(data);
	pkg_free(p);
}

/* One rule of pkg_check each: the writer refuses, naming the problem. */
static void
test_check_errors(void **state)
{
	(void)state;
	static const char *const want[] = {
	    "tensor 0 ('x') piece 1: rows 2..5 x cols 0..6 are not inside the "
	    "4 x 6 tensor",
	    "lie in no buffer",
	    "buffer 0 ('x block'): 64 bytes at 0xe7ff0 are not inside tile "
	    "memory 0x4c000..0xe8000 of the c600",
	    "tile 1: own segment 1 (0x50008..0x50018) overlaps own segment 0 "
	    "(0x50000..0x5000c)",
	    "entry 0x4c002 is not a multiple of 4",
	    "two tensors are named 'x'",
	    "unknown dtype 9",
	    "tensor 1 ('y'): its pieces hold 18 of its 24 elements",
	    "tensor 1 ('y'): pieces at rows 0, cols 0 and rows 1, cols 0 "
	    "overlap",
	    "kernel 0 ('copy'): entry",
	    "blob 99 does not exist",
	    "scale 3 is not valid for f32",
	    "padded size 2 x 5 is smaller than the 2 x 6 block",
	    "the name holds a control character",
	    "0 tiles used; the c600 has 1..1472",
	    "padded size 2 x 8 is smaller than the 6 x 2 block (transposed)",
	    "unknown format 5",
	    "tensor 0 ('x'): 12 of its 24 elements are in no piece",
	    /* (2^32 - 1)^2 elements, 24 in pieces: counted, not allocated */
	    "tensor 0 ('x'): 18446744065119617001 of its "
	    "18446744065119617025 elements are in no piece",
	    "shared segment 1 (0x4c010..0x4c020) overlaps shared segment 0",
	    "buffer 6 ('w panels'): unknown category 4",
	    "buffer 6 ('w panels'): lifetime steps 1..0",
	    "buffer 6 ('w panels'): lifetime steps 1..2 (2 steps",
	    "step 0 ('copy x to y'): op 1 does not exist (the package has 1)",
	    "step 0 ('copy x to y'): kernel 3 does not exist",
	    "op 0: the name or kind is empty",
	    "tile 1: step 2's code at 0x4c004 is not a word of executable "
	    "memory at or after the previous step's",
	    "tile 0: step 2's code at 0x80000 is not a word",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		Package *p = build_package();
		PkgTensor *x = &p->tensor[0];
		switch (i) {
		case 0:
			x->piece[1].rows = 3;
			break;
		case 1:
			x->piece[0].addr += 4;
			break;
		case 2:
			p->buf[0].addr = 0xe7ff0;
			break;
		case 3:
			p->tile[1].seg[1].addr = ARGS + 8;
			break;
		case 4:
			p->tile[0].entry += 2;
			break;
		case 5:
			free(p->tensor[1].name);
			p->tensor[1].name = xstrdup("x");
			break;
		case 6:
			x->dtype = 9;
			break;
		case 7: /* an output's pieces cover it exactly once */
			p->tensor[1].piece[1].rows = 1;
			break;
		case 8:
			p->tensor[1].piece[1].row0 = 1;
			break;
		case 9:
			p->kernel[0].addr = ARGS;
			break;
		case 10:
			p->tile[0].seg[0].blob = 99;
			break;
		case 11:
			x->scale = 3;
			break;
		case 12:
			x->piece[0].pad_cols = 5;
			break;
		case 13:
			x->name[0] = '\n';
			break;
		case 14:
			p->tiles = 0;
			break;
		case 15:
			x->piece[0].format = PKG_PF_ROWMAJOR_T;
			break;
		case 16:
			x->piece[0].format = 5;
			break;
		case 17: /* an input may be replicated, not incomplete:
		          * piece 1 copies rows 0..1, rows 2..3 are lost */
			x->piece[1].row0 = 0;
			break;
		case 18:
			x->rows = x->cols = 0xffffffffu;
			break;
		case 19: {
			static const uint8_t code[16] = {0};
			pkg_add_shared(p, 0x4c010, code, sizeof code);
			break;
		}
		case 20:
			p->buf[6].category = PKG_MEM_COUNT;
			break;
		case 21:
			p->buf[6].last = 0;
			break;
		case 22:
			p->buf[6].last = 2;
			break;
		case 23:
			p->step[0].op[0] = 1;
			break;
		case 24:
			p->step[0].kernel[0] = 3;
			break;
		case 25:
			p->op[0].kind[0] = 0;
			break;
		case 26:
			p->step_pc[3 + 2] = p->step_pc[3 + 1] - 4;
			break;
		case 27:
			p->step_pc[2] = 0x80000;
			break;
		}
		uint8_t *data = NULL;
		size_t len;
		Diag d;
		if (!pkg_write(p, &data, &len, &d))
			fail_msg("case %zu: written", i);
		if (!strstr(d.msg, want[i]))
			fail_msg("case %zu: '%s' not in '%s'", i, want[i],
			         d.msg);
		p->tiles = 2;
		pkg_free(p);
	}
}

/* The offset in a written package of tensor `name`'s rows field (its
 * record: str name, dtype, scale, role, 0, rows, cols). */
static size_t
tensor_rows_at(const uint8_t *data, size_t len, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = PKG_HEADER_BYTES; i + 8 + n < len; i++)
		if (data[i] == n && !data[i + 1] && !data[i + 2] &&
		    !data[i + 3] && !memcmp(data + i + 4, name, n) &&
		    !data[i + 4 + n + 3])
			return i + 4 + n + 4;
	fail_msg("no tensor record '%s'", name);
	return 0;
}

/* A small package whose CRC is right but whose input declares a
 * 2^32 - 1 by 2^32 - 1 tensor: the reader names the missing elements
 * instead of asking for 2^61 bytes of bitmap (it used to abort). */
static void
test_huge_tensor_read(void **state)
{
	(void)state;
	Package *p = build_package();
	size_t len;
	uint8_t *data = write_ok(p, &len);
	assert_true(len < 4096);
	size_t at = tensor_rows_at(data, len, "x");
	patch32(data, len, at, 0xffffffffu);
	patch32(data, len, at + 4, 0xffffffffu);
	expect_read_error(data, len,
	                  "tensor 0 ('x'): 18446744065119617001 of its "
	                  "18446744065119617025 elements are in no piece");
	/* the weight w too: 8 x 16 declared 65536 x 65536 */
	free(data);
	data = write_ok(p, &len);
	at = tensor_rows_at(data, len, "w");
	patch32(data, len, at, 65536);
	patch32(data, len, at + 4, 65536);
	expect_read_error(data, len, "4294967168 of its 4294967296");
	free(data);
	pkg_free(p);
}

/* Inputs may be replicated: random pieces of a 5 x 7 input, some
 * overlapping, against a count of uncovered elements on a grid. */
static void
test_replicated_cover(void **state)
{
	(void)state;
	enum { R = 5, C = 7, RADDR = 0x63000 };
	unsigned seed = 12345;
	int complete = 0, incomplete = 0;
	for (int trial = 0; trial < 300; trial++) {
		Package *p = build_package();
		PkgTensor *t =
		    pkg_add_tensor(p, "r", DT_F32, 0, PKG_ROLE_INPUT, R, C);
		pkg_add_buffer(p, 0, RADDR, R * C * 4, "r copies");
		int grid[R][C] = {{0}};
		int npieces =
		    1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 8;
		for (int k = 0; k < npieces; k++) {
			uint32_t v[4];
			for (int j = 0; j < 4; j++)
				v[j] = (seed = seed * 1103515245 + 12345) >> 16;
			/* every other piece whole rows, so that some
			 * trials cover the tensor */
			uint32_t r0 = v[0] % R, c0 = k % 2 ? v[1] % C : 0;
			uint32_t rows = 1 + v[2] % (R - r0),
			         cols = k % 2 ? 1 + v[3] % (C - c0) : C;
			*pkg_add_piece(t) =
			    (PkgPiece){.tile = 0,
			               .addr = RADDR,
			               .row0 = r0,
			               .rows = rows,
			               .col0 = c0,
			               .cols = cols,
			               .pad_rows = rows,
			               .pad_cols = cols,
			               .format = PKG_PF_ROWMAJOR};
			for (uint32_t r = r0; r < r0 + rows; r++)
				for (uint32_t c = c0; c < c0 + cols; c++)
					grid[r][c] = 1;
		}
		int missing = 0;
		for (int r = 0; r < R; r++)
			for (int c = 0; c < C; c++)
				missing += !grid[r][c];
		uint8_t *data = NULL;
		size_t len;
		Diag d;
		int e = pkg_write(p, &data, &len, &d);
		if (missing) {
			char want[96];
			snprintf(want, sizeof want,
			         "tensor 3 ('r'): %d of its %d elements are "
			         "in no piece",
			         missing, R * C);
			assert_int_not_equal(e, 0);
			if (!strstr(d.msg, want))
				fail_msg("trial %d: '%s' not in '%s'", trial,
				         want, d.msg);
			incomplete++;
		} else {
			if (e)
				fail_msg("trial %d: %s", trial, d.msg);
			complete++;
		}
		free(data);
		pkg_free(p);
	}
	if (complete < 10 || incomplete < 10)
		fail_msg("%d complete, %d incomplete", complete, incomplete);
}

/* A 3 x 5 f16 tensor (element (r, c) = 0x100 + 5r + c) and its block rows
 * 1..2 x cols 2..4, laid out by hand: row-major padded to 3 x 4, and
 * transposed (the tile's row r is the tensor's column 2 + r) padded to
 * 4 x 3. Both convert back to exactly the block. */
static void
test_pack_rowmajor(void **state)
{
	(void)state;
	static const struct {
		uint8_t format;
		uint32_t pad_rows, pad_cols;
		uint16_t want[12];
	} cases[] = {
	    {PKG_PF_ROWMAJOR,
	     3,
	     4,
	     {0x107, 0x108, 0x109, 0, /* row 1 */
	      0x10c, 0x10d, 0x10e, 0, /* row 2 */
	      0, 0, 0, 0}},
	    {PKG_PF_ROWMAJOR_T,
	     4,
	     3,
	     {0x107, 0x10c, 0, /* column 2 */
	      0x108, 0x10d, 0, /* column 3 */
	      0x109, 0x10e, 0, /* column 4 */
	      0, 0, 0}},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		Package *p = pkg_new(chip_by_name("c600"), 1);
		PkgTensor *t =
		    pkg_add_tensor(p, "h", DT_F16, 0, PKG_ROLE_INPUT, 3, 5);
		PkgPiece *pc = pkg_add_piece(t);
		*pc = (PkgPiece){.tile = 0,
		                 .addr = XADDR,
		                 .row0 = 1,
		                 .rows = 2,
		                 .col0 = 2,
		                 .cols = 3,
		                 .pad_rows = cases[k].pad_rows,
		                 .pad_cols = cases[k].pad_cols,
		                 .format = cases[k].format};
		uint16_t host[15];
		for (int i = 0; i < 15; i++)
			host[i] = (uint16_t)(0x100 + i);
		assert_int_equal(pkg_piece_bytes(t, pc), 24);
		uint16_t tile[12];
		memset(tile, 0xaa, sizeof tile);
		assert_true(pkg_piece_convertible(t, pc, 1));
		assert_true(pkg_piece_convertible(t, pc, 0));
		assert_int_equal(pkg_piece_pack(t, pc, host, (uint8_t *)tile),
		                 0);
		assert_memory_equal(tile, cases[k].want, sizeof tile);
		uint16_t back[15] = {0};
		assert_int_equal(pkg_piece_unpack(t, pc, (uint8_t *)tile, back),
		                 0);
		for (int i = 0; i < 15; i++) {
			int r = i / 5, c = i % 5;
			int inside = r >= 1 && c >= 2;
			assert_int_equal(back[i], inside ? 0x100 + i : 0);
		}
		pkg_free(p);
	}
}

/* The GEMM layouts, element positions worked out from docs/kernel-gemm.md
 * (C: [n-panel][row][16 columns]; B: [n-panel][k-panel][64 registers of
 * 8 bytes], register idx serving column (idx / 32) * 8 + (idx % 32) / 4 at
 * phase idx % 4 with 8 / e weights of rows phase * 8 / e + j). */
static void
test_pack_gemm(void **state)
{
	(void)state;
	Package *p = pkg_new(chip_by_name("c600"), 1);
	/* C: a 5 x 20 f32 tensor; the piece rows 1..3, all 20 columns, in
	 * two column panels of 16 */
	PkgTensor *c =
	    pkg_add_tensor(p, "c", DT_F32, 0, PKG_ROLE_OUTPUT, 5, 20);
	PkgPiece *pc = pkg_add_piece(c);
	*pc = (PkgPiece){.row0 = 1,
	                 .rows = 3,
	                 .cols = 20,
	                 .pad_rows = 3,
	                 .pad_cols = 20,
	                 .format = PKG_PF_GEMM_C};
	assert_int_equal(pkg_piece_bytes(c, pc), 2 * 3 * 16 * 4);
	float host[100], back[100];
	for (int i = 0; i < 100; i++)
		host[i] = (float)i;
	float tile[2 * 3 * 16];
	assert_int_equal(pkg_piece_pack(c, pc, host, (uint8_t *)tile), 0);
	for (int r = 0; r < 3; r++)
		for (int col = 0; col < 32; col++) {
			float v = tile[((col / 16) * 3 + r) * 16 + col % 16];
			assert_true(
			    v == (col < 20 ? host[(1 + r) * 20 + col] : 0.0f));
		}
	memset(back, 0, sizeof back);
	assert_int_equal(pkg_piece_unpack(c, pc, (uint8_t *)tile, back), 0);
	for (int i = 0; i < 100; i++)
		assert_true(back[i] == (i >= 20 && i < 80 ? host[i] : 0.0f));
	/* the C layout holds f8 too (a cast of a GEMM output keeps it):
	 * 1-byte elements, 16 a panel row; element (r, col) of the block */
	c->dtype = DT_F8_F143;
	assert_true(pkg_piece_convertible(c, pc, 0));
	assert_int_equal(pkg_piece_bytes(c, pc), 2 * 3 * 16);
	uint8_t h8[100], t8[2 * 3 * 16];
	for (int i = 0; i < 100; i++)
		h8[i] = (uint8_t)(i + 1);
	assert_int_equal(pkg_piece_pack(c, pc, h8, t8), 0);
	for (int r = 0; r < 3; r++)
		for (int col = 0; col < 32; col++)
			assert_int_equal(
			    t8[((col / 16) * 3 + r) * 16 + col % 16],
			    col < 20 ? h8[(1 + r) * 20 + col] : 0);
	c->dtype = DT_F32;

	/* B: 8 x 16 f32, one panel; (k = 3, col = 5) is register 21 (col 5:
	 * idx / 32 = 0, (idx % 32) / 4 = 5; k = 3: phase 1, j = 1), word 1:
	 * byte 8 * 21 + 4 */
	PkgTensor *b =
	    pkg_add_tensor(p, "b", DT_F32, 0, PKG_ROLE_WEIGHT, 8, 16);
	PkgPiece *pb = pkg_add_piece(b);
	*pb = (PkgPiece){.rows = 8,
	                 .cols = 16,
	                 .pad_rows = 8,
	                 .pad_cols = 16,
	                 .format = PKG_PF_GEMM_B};
	assert_int_equal(pkg_piece_bytes(b, pb), 512);
	float w[128];
	for (int i = 0; i < 128; i++)
		w[i] = (float)(i + 1);
	uint8_t panel[512];
	assert_int_equal(pkg_piece_pack(b, pb, w, panel), 0);
	float got;
	memcpy(&got, panel + 8 * 21 + 4, 4);
	assert_true(got == w[3 * 16 + 5]);
	/* every weight appears exactly once */
	float sum = 0;
	for (int i = 0; i < 128; i++) {
		memcpy(&got, panel + 4 * i, 4);
		sum += got;
	}
	assert_true(sum == 128 * 129 / 2);
	/* and B does not convert back */
	assert_true(pkg_piece_convertible(b, pb, 1));
	assert_false(pkg_piece_convertible(b, pb, 0));
	assert_int_equal(pkg_piece_unpack(b, pb, panel, w), -1);
	pkg_free(p);
}

/* ---- runtime ---------------------------------------------------------- */

static void
expect_err(int r, const ipu_error *err, ipu_error_kind kind, const char *needle)
{
	if (r != (int)kind || err->kind != kind || !strstr(err->msg, needle))
		fail_msg("got %s (%d) '%s', want %s with '%s'",
		         ipu_error_kind_name(err->kind), r, err->msg,
		         ipu_error_kind_name(kind), needle);
}

static float
x_value(int r, int c)
{
	return (float)(r * 10 + c) + 0.25f;
}

static void
test_runtime_package(void **state)
{
	(void)state;
	Package *p = build_package();
	size_t len;
	uint8_t *data = write_ok(p, &len);
	ipu_error err;
	ipu_device *dev = ipu_open("sim:c600:tiles=4", &err);
	assert_non_null(dev);
	/* no package yet */
	float x[ROWS * COLS], y[ROWS * COLS];
	expect_err(ipu_write_tensor(dev, "x", x, sizeof x, &err), &err,
	           IPU_ERR_ARGUMENT, "no package is loaded");
	assert_int_equal(ipu_tensor_count(dev), 0);
	if (ipu_load_package(dev, data, len, &err))
		fail_msg("ipu_load_package: %s", err.msg);
	/* the tensor table */
	assert_int_equal(ipu_tensor_count(dev), 3);
	ipu_tensor_desc td;
	assert_int_equal(ipu_tensor_info(dev, "y", &td, &err), 0);
	assert_string_equal(td.name, "y");
	assert_int_equal(td.dtype, IPU_DTYPE_F32);
	assert_int_equal(td.role, IPU_ROLE_OUTPUT);
	assert_int_equal(td.rows, ROWS);
	assert_int_equal(td.cols, COLS);
	assert_int_equal(td.bytes, sizeof y);
	assert_int_equal(td.pieces, 2);
	assert_int_equal(ipu_tensor_at(dev, 0, &td, &err), 0);
	assert_string_equal(td.name, "x");
	assert_int_equal(td.role, IPU_ROLE_INPUT);
	expect_err(ipu_tensor_at(dev, 3, &td, &err), &err, IPU_ERR_ARGUMENT,
	           "index 3 is out of range");
	expect_err(ipu_tensor_info(dev, "z", &td, &err), &err, IPU_ERR_ARGUMENT,
	           "no tensor 'z' (it has: x, y, w)");
	/* w goes to the tile in the GEMM weight layout, and cannot come
	 * back: (k = 3, col = 5) is byte 8 * 21 + 4 of the panel
	 * (test_pack_gemm) */
	float w[128], wt;
	for (int i = 0; i < 128; i++)
		w[i] = (float)i * 0.5f;
	assert_int_equal(ipu_write_tensor(dev, "w", w, sizeof w, &err), 0);
	assert_int_equal(ipu_read(dev, 0, WADDR + 8 * 21 + 4, &wt, 4, &err), 0);
	assert_true(wt == w[3 * 16 + 5]);
	expect_err(ipu_read_tensor(dev, "w", w, sizeof w, &err), &err,
	           IPU_ERR_FORMAT, "cannot be converted back to row-major");
	/* argument errors leave the device unchanged */
	expect_err(ipu_write_tensor(dev, "v", x, sizeof x, &err), &err,
	           IPU_ERR_ARGUMENT, "no tensor 'v'");
	expect_err(ipu_write_tensor(dev, "x", x, sizeof x - 4, &err), &err,
	           IPU_ERR_ARGUMENT,
	           "92 bytes given; tensor 'x' (f32, 4 x 6) "
	           "has 96");
	expect_err(ipu_read_tensor(dev, "x", NULL, sizeof x, &err), &err,
	           IPU_ERR_ARGUMENT, "NULL");
	/* an image on the package's tiles is refused */
	{
		Obj *o;
		DiagList errs = {0};
		AsmOptions opt = {0};
		assert_int_equal(asm_source("c.s", copy_prog, strlen(copy_prog),
		                            &opt, &o, &errs),
		                 0);
		uint8_t *elf;
		size_t elen;
		Diag dd;
		assert_int_equal(obj_write(o, &elf, &elen, &dd), 0);
		obj_free(o);
		expect_err(ipu_load_image(dev, elf, elen, 1, 2, &err), &err,
		           IPU_ERR_ARGUMENT, "tile 1 already holds package");
		free(elf);
	}
	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < COLS; c++)
			x[r * COLS + c] = x_value(r, c);
	/* y's memory holds garbage first, to see the copy overwrite it */
	uint8_t junk[3 * PADC * 4];
	memset(junk, 0x5a, sizeof junk);
	assert_int_equal(ipu_write(dev, 1, YADDR, junk, sizeof junk, &err), 0);
	if (ipu_write_tensor(dev, "x", x, sizeof x, &err))
		fail_msg("ipu_write_tensor: %s", err.msg);
	/* x on tile 1: rows 2..3, then a padding row; columns 6, 7 zero */
	float raw[3 * PADC];
	assert_int_equal(ipu_read(dev, 1, XADDR, raw, sizeof raw, &err), 0);
	for (int r = 0; r < 3; r++)
		for (int c = 0; c < PADC; c++)
			assert_true(
			    raw[r * PADC + c] ==
			    (r < 2 && c < COLS ? x_value(2 + r, c) : 0));
	if (ipu_run(dev, 100000, &err))
		fail_msg("ipu_run: %s", err.msg);
	ipu_counters cnt;
	for (uint32_t t = 0; t < 2; t++) {
		assert_int_equal(ipu_tile_counters(dev, t, &cnt, &err), 0);
		assert_int_equal(cnt.loaded, 1);
		assert_int_equal(cnt.returned, 1);
		assert_int_equal(cnt.exit_status, 0);
	}
	assert_int_equal(ipu_tile_counters(dev, 2, &cnt, &err), 0);
	assert_int_equal(cnt.loaded, 0);
	memset(y, 0, sizeof y);
	if (ipu_read_tensor(dev, "y", y, sizeof y, &err))
		fail_msg("ipu_read_tensor: %s", err.msg);
	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < COLS; c++)
			assert_true(y[r * COLS + c] == x_value(r, c));
	/* the program copied the padding too: y's pad row on tile 1 is 0 */
	assert_int_equal(ipu_read(dev, 1, YADDR, raw, sizeof raw, &err), 0);
	for (int c = 0; c < PADC; c++)
		assert_true(raw[2 * PADC + c] == 0);

	/* loading again after the run resets the device and runs again */
	if (ipu_load_package(dev, data, len, &err))
		fail_msg("reload: %s", err.msg);
	expect_err(ipu_load_package(dev, data, len, &err), &err,
	           IPU_ERR_ARGUMENT, "are not free");
	ipu_close(dev);

	/* the device must fit the package */
	dev = ipu_open("sim:c600:tiles=1", &err);
	expect_err(ipu_load_package(dev, data, len, &err), &err,
	           IPU_ERR_ARGUMENT,
	           "uses 2 tiles; device 'sim:c600:tiles=1' "
	           "has 1");
	ipu_close(dev);
	dev = ipu_open("sim:gc200:tiles=2", &err);
	expect_err(ipu_load_package(dev, data, len, &err), &err,
	           IPU_ERR_ARGUMENT, "compiled for the c600");
	ipu_close(dev);
	/* corrupt bytes and files */
	dev = ipu_open("sim:c600:tiles=2", &err);
	data[len - 1] ^= 1;
	expect_err(ipu_load_package(dev, data, len, &err), &err, IPU_ERR_FORMAT,
	           "checksum mismatch");
	data[len - 1] ^= 1;
	expect_err(ipu_load_package_file(dev, "/nonexistent/p.ipk", &err), &err,
	           IPU_ERR_IO, "cannot open");
	char path[] = "/tmp/ipu_test_pkg_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	Diag d;
	assert_int_equal(pkg_write_file(p, path, &d), 0);
	if (ipu_load_package_file(dev, path, &err))
		fail_msg("ipu_load_package_file: %s", err.msg);
	assert_int_equal(ipu_write_tensor(dev, "x", x, sizeof x, &err), 0);
	assert_int_equal(ipu_run(dev, 100000, &err), 0);
	memset(y, 0, sizeof y);
	assert_int_equal(ipu_read_tensor(dev, "y", y, sizeof y, &err), 0);
	assert_memory_equal(x, y, sizeof x);
	remove(path);
	ipu_close(dev);
	free(data);
	pkg_free(p);
}

/* ---- ipu inspect -------------------------------------------------------- */

static void
test_inspect(void **state)
{
	(void)state;
	Package *p = build_package();
	char path[] = "/tmp/ipu_test_pkg_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	Diag d;
	assert_int_equal(pkg_write_file(p, path, &d), 0);
	static char out[16384];
	char args[256];
	snprintf(args, sizeof args, "inspect %s", path);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	uint32_t code = p->blob[0].len; /* the one shared segment */
	assert_int_equal(p->nshared, 1);
	char line[256];
	expect_in(out, "chip         c600\n");
	expect_in(out, "tiles used   2 of 1472\n");
	snprintf(line, sizeof line, "shared code  %u bytes in 1 segment,",
	         code);
	expect_in(out, line);
	expect_in(out, "blobs        4 distinct");
	/* per tile: own segments 12 + 16 bytes; x block 64 / 96 bytes */
	expect_in(out, "  tile segments                    28         28 "
	               "        28  0\n");
	expect_in(out, "  x block                          64         64 "
	               "        96  1\n");
	expect_in(out, "  arguments                        12         12 "
	               "        12  0\n");
	expect_in(out, "  w panels                          0          0 "
	               "       512  0\n");
	/* in use on tile 0: code + 12 + 16 + 64 + 64 + 512 (the arguments
	 * buffer is the argument segment) */
	snprintf(line, sizeof line, "fullest tile: 0, %u of 638976 bytes",
	         code + 12 + 16 + 64 + 64 + 512);
	expect_in(out, line);
	expect_in(out,
	          "     0  compute            60 cycles x 1   copy x to y\n");
	expect_in(
	    out,
	    "     1  exchange            7 cycles x 3   nothing to send\n");
	expect_in(out, "predicted total: 67 cycles");
	snprintf(line, sizeof line,
	         "  copy                             at "
	         "0x%05x, 2 calls\n",
	         p->kernel[0].addr);
	expect_in(out, line);
	expect_in(out, "  x                    input  f32          4 x 6, 2 "
	               "pieces\n");
	expect_in(out, "compile time 0.002 s\n");
	expect_in(out,
	          "plan\n  rows split over 2 tiles\n  \t\"quoted\" line\n");

	snprintf(args, sizeof args, "inspect --json %s", path);
	assert_int_equal(run_ipu(out, sizeof out, args), 0);
	expect_in(out, "\"chip\": \"c600\", \"tiles\": 2,");
	expect_in(out, "{\"kind\": \"x block\", \"min\": 64, \"median\": 64, "
	               "\"max\": 96, \"max_tile\": 1}");
	expect_in(out, "{\"kind\": \"compute\", \"what\": \"copy x to y\", "
	               "\"cycles\": 60, \"runs\": 1}");
	expect_in(out, "\"predicted_cycles\": 67");
	expect_in(out,
	          "\"plan\": \"rows split over 2 tiles\\n\\t\\\"quoted\\\" "
	          "line\"}");
	/* python's json module parses it */
	char cmd[600];
	snprintf(cmd, sizeof cmd,
	         "%s/ipu inspect --json %s | python3 -c 'import json,sys; "
	         "j=json.load(sys.stdin); assert j[\"tiles\"]==2; "
	         "assert j[\"tensors\"][1][\"role\"]==\"output\"'",
	         IPU_BINARY_DIR, path);
	assert_int_equal(system(cmd), 0);

	/* a corrupt package is reported, not summarised */
	uint8_t *data;
	size_t len;
	assert_int_equal(read_file(path, &data, &len, &d), 0);
	data[len - 3] ^= 0x10;
	assert_int_equal(write_file(path, data, len, &d), 0);
	free(data);
	snprintf(args, sizeof args, "inspect %s", path);
	assert_int_equal(run_ipu(out, sizeof out, args), 1);
	expect_in(out, "checksum mismatch");
	assert_int_equal(run_ipu(out, sizeof out, "inspect"), 2);
	assert_int_equal(run_ipu(out, sizeof out, "inspect --bogus x"), 2);
	remove(path);
	pkg_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_crc32),
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_flipped),
	    cmocka_unit_test(test_flipped_fixed_crc),
	    cmocka_unit_test(test_header_errors),
	    cmocka_unit_test(test_check_errors),
	    cmocka_unit_test(test_huge_tensor_read),
	    cmocka_unit_test(test_replicated_cover),
	    cmocka_unit_test(test_pack_rowmajor),
	    cmocka_unit_test(test_pack_gemm),
	    cmocka_unit_test(test_runtime_package),
	    cmocka_unit_test(test_inspect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

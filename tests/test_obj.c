/* test_obj.c - ELF objects and images (write, read, validation of corrupt
 * and truncated files) and the linker (layout, symbols, relocations and
 * their errors). Expected words are computed by hand from insns.def. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/asm/asm.h"

static Obj *
as_ok(const char *name, const char *src)
{
	Obj *o;
	DiagList e;
	AsmOptions opt = {.no_include = 1};
	if (asm_source(name, src, strlen(src), &opt, &o, &e)) {
		char buf[1400];
		diag_format(&e.v[0], buf, sizeof buf);
		fail_msg("%s", buf);
	}
	diaglist_free(&e);
	return o;
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static const ObjSection *
sec(const Obj *o, const char *name)
{
	for (int i = 0; i < o->nsec; i++)
		if (!strcmp(o->sec[i].name, name))
			return &o->sec[i];
	fail_msg("no section %s", name);
	return NULL;
}

static const char a_src[] = "\t.globl _start\n"
                            "_start:\n"
                            "\tsetzi $m1, table\n"
                            "\tcall $lr, func\n"
                            "\tbri _start\n"
                            "\t.data\n"
                            "ptr:\t.word func + 4\n";

static const char b_src[] = "\t.globl func, table\n"
                            "func:\tbr $lr\n"
                            "\t.data\n"
                            "\t.word 0\n"
                            "table:\t.word 0x11, 0x22\n";

static int
link2(const LinkOptions *opt, Obj **img, Diag *d)
{
	Obj *o[2] = {as_ok("a.o", a_src), as_ok("b.o", b_src)};
	int r = link_objects(o, 2, opt, img, d);
	obj_free(o[0]);
	obj_free(o[1]);
	return r;
}

static void
test_link_two_objects(void **state)
{
	(void)state;
	Obj *img;
	Diag d;
	assert_int_equal(link2(NULL, &img, &d), 0);
	/* .text: a (12 bytes) at 0x4c000, b at 0x4c00c; .data follows at
	 * 0x4c010: a's word, then b's two words at 0x4c014 (table +4). */
	const ObjSection *t = sec(img, ".text"), *dt = sec(img, ".data");
	assert_int_equal(t->addr, 0x4c000);
	assert_int_equal(t->size, 16);
	assert_int_equal(dt->addr, 0x4c010);
	assert_int_equal(dt->size, 16);
	/* setzi_mmmn_zi 0x19000000 | $m1 << 20 | table (0x4c018) */
	assert_int_equal(rd32(t->data + 0), 0x1914c018);
	/* call 0x18000000 | $lr << 20 | func (0x4c00c) >> 2 */
	assert_int_equal(rd32(t->data + 4), 0x18a13003);
	/* bri 0x40800000 | 0x4c000 >> 2 */
	assert_int_equal(rd32(t->data + 8), 0x40813000);
	/* br $lr: 0x43000000 | 10 << 20 */
	assert_int_equal(rd32(t->data + 12), 0x43a00000);
	assert_int_equal(rd32(dt->data + 0), 0x4c010); /* func + 4 */
	assert_int_equal(rd32(dt->data + 8), 0x11);
	assert_int_equal(img->entry, 0x4c000);
	obj_free(img);

	/* A fixed address for .data moves table and ptr's target stays. */
	LinkPlace pl[] = {{".data", 0x60000}};
	LinkOptions opt = {.place = pl, .nplace = 1};
	assert_int_equal(link2(&opt, &img, &d), 0);
	t = sec(img, ".text");
	assert_int_equal(sec(img, ".data")->addr, 0x60000);
	assert_int_equal(rd32(t->data + 0), 0x19160008);
	obj_free(img);
}

static void
check_link_error(const char *a, const char *b, const LinkOptions *opt,
                 const char *want)
{
	Obj *o[2] = {as_ok("a.o", a), b ? as_ok("b.o", b) : NULL};
	Obj *img;
	Diag d;
	diag_clear(&d);
	assert_int_not_equal(link_objects(o, b ? 2 : 1, opt, &img, &d), 0);
	assert_null(img);
	if (!strstr(d.msg, want))
		fail_msg("got '%s', want '%s'", d.msg, want);
	obj_free(o[0]);
	obj_free(o[1]);
}

static void
test_link_errors(void **state)
{
	(void)state;
	check_link_error("\tcall $lr, nowhere\n", NULL, NULL,
	                 "undefined symbol 'nowhere' (referenced from a.o, "
	                 ".text+0x0)");
	check_link_error("\t.globl f\nf:\tnop\n", "\t.globl f\nf:\tnop\n", NULL,
	                 "duplicate definition of global symbol 'f' in a.o "
	                 "and b.o");
	check_link_error("\tor $m0, $m0, f\n", "\t.globl f\nf:\tnop\n", NULL,
	                 "relocation against 'f' in a.o .text+0x0: value "
	                 "0x4c004 does not fit operand 3 of or_mmmn_zi "
	                 "(allowed 0..4095)");
	check_link_error("\t.data\n\t.short f\n", "\t.globl f\nf:\tnop\n", NULL,
	                 "does not fit 2 bytes");
	LinkPlace hi[] = {{".text", 0x80000}};
	LinkOptions opt = {.place = hi, .nplace = 1};
	check_link_error("\tnop\n", NULL, &opt,
	                 "code section .text ends at 0x80004, beyond 0x80000");
	LinkPlace low[] = {{".text", 0x1000}};
	opt.place = low;
	check_link_error("\tnop\n", NULL, &opt,
	                 "section .text [0x1000, 0x1004) does not fit in tile "
	                 "memory");
	LinkPlace both[] = {{".text", 0x50000}, {".data", 0x50000}};
	opt = (LinkOptions){.place = both, .nplace = 2};
	check_link_error("\tnop\n\t.data\n\t.word 1\n", NULL, &opt,
	                 "sections .text and .data overlap");
	LinkPlace none[] = {{".nope", 0x50000}};
	opt = (LinkOptions){.place = none, .nplace = 1};
	check_link_error("\tnop\n", NULL, &opt, "--section .nope");
	LinkPlace odd[] = {{".text", 0x50002}};
	opt = (LinkOptions){.place = odd, .nplace = 1};
	check_link_error("\tnop\n", NULL, &opt, "4-byte alignment");
	opt = (LinkOptions){.chip = chip_by_name("gc200")};
	check_link_error("\tf8v2tof16 $a0, $a1\n", NULL, &opt,
	                 "uses ipu21 instructions");
	opt = (LinkOptions){.entry = "missing"};
	check_link_error("\tnop\n", NULL, &opt,
	                 "entry symbol 'missing' is not defined");
}

static void
test_entry_default(void **state)
{
	(void)state;
	Obj *o =
	    as_ok("a.o", "\t.data\n\t.word 1\n\t.text\n\tnop\nmain:\tnop\n");
	Obj *img;
	Diag d;
	assert_int_equal(link_objects(&o, 1, NULL, &img, &d), 0);
	assert_int_equal(img->entry, 0x4c004); /* local main, no _start */
	obj_free(img);
	obj_free(o);
	o = as_ok("a.o", "\tnop\n");
	assert_int_equal(link_objects(&o, 1, NULL, &img, &d), 0);
	assert_int_equal(img->entry, 0x4c000); /* first code section */
	obj_free(img);
	obj_free(o);
}

/* Object -> bytes -> object keeps everything. */
static void
test_write_read(void **state)
{
	(void)state;
	Obj *o = as_ok("a.o", "\t.globl g\n\t.type g, @function\n"
	                      "g:\tcall $lr, ext\n"
	                      "\t.section .bss.x, \"aw\", @nobits\n"
	                      "\t.align 8\nx:\t.space 24\n"
	                      "\t.data\n\t.word x + 8\n");
	uint8_t *bytes;
	size_t len;
	Diag d;
	assert_int_equal(obj_write(o, &bytes, &len, &d), 0);
	Obj *r;
	assert_int_equal(obj_read(bytes, len, "a.o", &r, &d), 0);
	assert_int_equal(r->kind, OBJ_REL);
	assert_int_equal(r->nsec, o->nsec);
	for (int i = 0; i < o->nsec; i++) {
		assert_string_equal(r->sec[i].name, o->sec[i].name);
		assert_int_equal(r->sec[i].flags, o->sec[i].flags);
		assert_int_equal(r->sec[i].size, o->sec[i].size);
		assert_int_equal(r->sec[i].align, o->sec[i].align);
		if (o->sec[i].data)
			assert_memory_equal(r->sec[i].data, o->sec[i].data,
			                    o->sec[i].size);
	}
	assert_int_equal(r->nsym, o->nsym);
	assert_int_equal(r->nrel, o->nrel);
	for (int i = 0; i < o->nrel; i++) {
		assert_int_equal(r->rel[i].type, o->rel[i].type);
		assert_int_equal(r->rel[i].offset, o->rel[i].offset);
		assert_int_equal(r->rel[i].addend, o->rel[i].addend);
		assert_string_equal(r->sym[r->rel[i].symbol].name,
		                    o->sym[o->rel[i].symbol].name);
	}
	int g = obj_find_symbol(r, "g");
	assert_int_equal(r->sym[g].bind, SYMB_GLOBAL);
	assert_int_equal(r->sym[g].type, SYMT_FUNC);
	int e = obj_find_symbol(r, "ext");
	assert_int_equal(r->sym[e].section, OBJ_UNDEF);
	/* And again: the bytes are a fixed point. */
	uint8_t *again;
	size_t len2;
	assert_int_equal(obj_write(r, &again, &len2, &d), 0);
	assert_int_equal(len2, len);
	assert_memory_equal(again, bytes, len);
	free(again);
	free(bytes);
	obj_free(r);
	obj_free(o);
}

static void
expect_bad(const uint8_t *b, size_t len, const char *want)
{
	Obj *o;
	Diag d;
	diag_clear(&d);
	assert_int_equal(obj_read(b, len, "x.o", &o, &d), IPU_EINVAL);
	assert_null(o);
	assert_string_equal(d.file, "x.o");
	if (!strstr(d.msg, want))
		fail_msg("got '%s', want '%s'", d.msg, want);
}

static void
put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
test_corrupt(void **state)
{
	(void)state;
	Obj *img;
	Diag d;
	assert_int_equal(link2(NULL, &img, &d), 0);
	Obj *o = as_ok("a.o", a_src);
	uint8_t *files[2];
	size_t lens[2];
	assert_int_equal(obj_write(o, &files[0], &lens[0], &d), 0);
	assert_int_equal(obj_write(img, &files[1], &lens[1], &d), 0);
	for (int f = 0; f < 2; f++) {
		uint8_t *b = files[f];
		size_t len = lens[f];
		/* Every truncation fails (the section table is at the end). */
		for (size_t n = 0; n < len; n++) {
			Obj *r;
			assert_int_not_equal(obj_read(b, n, "x.o", &r, &d), 0);
		}
		/* Every single-byte corruption is either rejected or read
		 * into a consistent object: no crash (run under ASan). */
		uint8_t *c = malloc(len);
		for (size_t i = 0; i < len; i++)
			for (int k = 0; k < 2; k++) {
				memcpy(c, b, len);
				c[i] ^= k ? 0xff : 0x80;
				Obj *r;
				if (obj_read(c, len, "x.o", &r, &d) == 0)
					obj_free(r);
			}
		free(c);
	}
	uint8_t *b = files[0], *c = malloc(lens[0]);
	expect_bad((const uint8_t *)"hello", 5, "not an ELF file");
	expect_bad(b, 20, "truncated ELF header: 20 bytes");
	memcpy(c, b, lens[0]);
	c[4] = 2;
	expect_bad(c, lens[0], "EI_CLASS: ELF class 2");
	memcpy(c, b, lens[0]);
	c[18] = 0x34;
	c[19] = 0x12;
	expect_bad(c, lens[0], "e_machine: machine 0x1234");
	memcpy(c, b, lens[0]);
	put32(c + 32, 0xfffffff0);
	expect_bad(c, lens[0], "e_shoff");
	memcpy(c, b, lens[0]);
	c[50] = 0xee; /* e_shstrndx */
	expect_bad(c, lens[0], "e_shstrndx");
	free(c);
	free(files[0]);
	free(files[1]);
	obj_free(o);
	obj_free(img);
}

/* The two-word sendpicp: a first-word operand links, the section stays
 * 8-byte aligned after a 4-byte piece, and a relocation of a second-word
 * operand is refused by the linker and by the object reader. */
static void
test_wide(void **state)
{
	(void)state;
	Obj *o[2] = {as_ok("a.o", "\t.globl _start, n\n\t.set n, 0x13000\n"
	                          "_start:\tbr $lr\n"),
	             as_ok("b.o", "p:\tsendpicp 1, 0, n, 7, 5, 6\n")};
	Obj *img;
	Diag d;
	assert_int_equal(link_objects(o, 2, NULL, &img, &d), 0);
	/* a's 4 bytes, then b's piece at the next multiple of 8:
	 * 0xf0000000 | 1<<27 | 0x13000<<3 | 7, then 5<<18 | 6 */
	const ObjSection *t = sec(img, ".text");
	assert_int_equal(t->size, 16);
	assert_int_equal(rd32(t->data + 8), 0xf8098007);
	assert_int_equal(rd32(t->data + 12), 5u << 18 | 6);
	obj_free(img);
	/* Operand 5 (XPIC, second word) relocated: refused. */
	ObjReloc *r = &o[1]->rel[0];
	assert_int_equal(o[1]->nrel, 1);
	assert_int_equal(r->type, R_IPU_OPERAND0 + 2);
	r->type = R_IPU_OPERAND0 + 4;
	diag_clear(&d);
	assert_int_not_equal(link_objects(o, 2, NULL, &img, &d), 0);
	if (!strstr(d.msg, "operand 5 of sendpicp_mmmn_zi, which is in the "
	                   "instruction's second word"))
		fail_msg("got '%s'", d.msg);
	uint8_t *bytes;
	size_t len;
	assert_int_equal(obj_write(o[1], &bytes, &len, &d), 0);
	expect_bad(bytes, len,
	           "operand 5 of sendpicp_mmmn_zi is in its "
	           "second word, which cannot be relocated");
	free(bytes);
	obj_free(o[0]);
	obj_free(o[1]);
}

static void
test_image(void **state)
{
	(void)state;
	Obj *img;
	Diag d;
	LinkPlace pl[] = {{".bss", 0x90000}};
	Obj *o[2] = {as_ok("a.o", a_src),
	             as_ok("b.o", "\t.globl func, table\nfunc:\tbr $lr\n"
	                          "\t.data\ntable:\t.word 7\n"
	                          "\t.bss\nbuf:\t.space 32\n")};
	LinkOptions opt = {.place = pl, .nplace = 1};
	assert_int_equal(link_objects(o, 2, &opt, &img, &d), 0);
	uint8_t *bytes;
	size_t len;
	assert_int_equal(obj_write(img, &bytes, &len, &d), 0);
	TileImage im;
	assert_int_equal(img_read(bytes, len, &im, &d), 0);
	assert_int_equal(im.entry, 0x4c000);
	assert_int_equal(im.nseg, 3);
	assert_int_equal(im.seg[0].addr, 0x4c000);
	assert_true(im.seg[0].exec);
	assert_int_equal(im.seg[0].size, 16);
	assert_int_equal(rd32(im.seg[0].bytes + 12), 0x43a00000);
	assert_int_equal(im.seg[2].addr, 0x90000);
	assert_int_equal(im.seg[2].size, 32);
	assert_false(im.seg[2].exec);
	uint32_t off;
	assert_string_equal(img_symbol(&im, 0x4c008, &off), "_start");
	assert_int_equal(off, 8);
	assert_string_equal(img_symbol(&im, 0x4c00c, &off), "func");
	assert_int_equal(img_symbol_addr(&im, "table"), 0x4c014);
	assert_int_equal(img_symbol_addr(&im, "buf"), 0x90000);
	assert_int_equal(img_symbol_addr(&im, "nope"), -1);
	img_free(&im);
	free(bytes);

	/* img_load links an object with the default layout. */
	assert_int_equal(obj_write(o[1], &bytes, &len, &d), 0);
	assert_int_equal(img_load(bytes, len, "b.o", NULL, &im, &d), 0);
	assert_int_equal(im.entry, 0x4c000);
	assert_int_equal(im.seg[0].addr, 0x4c000);
	img_free(&im);
	/* img_read insists on an image. */
	assert_int_equal(img_read(bytes, len, &im, &d), IPU_EINVAL);
	assert_non_null(strstr(d.msg, "not a linked image"));
	free(bytes);
	obj_free(o[0]);
	obj_free(o[1]);
	obj_free(img);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_link_two_objects),
	    cmocka_unit_test(test_link_errors),
	    cmocka_unit_test(test_entry_default),
	    cmocka_unit_test(test_write_read),
	    cmocka_unit_test(test_corrupt),
	    cmocka_unit_test(test_wide),
	    cmocka_unit_test(test_image),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

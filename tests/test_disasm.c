/* test_disasm.c - the disassembler's text (aliases, CSR names, variant
 * names, bundles, invalid words, symbols) and the asm/link/disasm
 * subcommands, which are compiled into this test to check their exit codes
 * and messages. */
#include "support.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/asm/asm.h"
#include "../src/cli/cmd_asm.c"
#include "../src/cli/outputs.c"

static const char *
text_of(const char *variant, int nops, int32_t a, int32_t b, int32_t c)
{
	static char buf[200];
	Insn in = {.row = (int16_t)isa_row_by_variant(variant),
	           .nops = (uint8_t)nops,
	           .op = {a, b, c}};
	assert_true(in.row >= 0);
	assert_int_equal(disasm_insn(&in, ARCH_IPU21, buf, sizeof buf), 0);
	return buf;
}

static void
test_insn_text(void **state)
{
	(void)state;
	assert_string_equal(text_of("add_mmmn_zi", 3, 1, 2, 5),
	                    "add $m1, $m2, 5");
	/* The assembler would pick _zi for 5: the variant is named. */
	assert_string_equal(text_of("add_mmmn_si", 3, 1, 2, 5),
	                    "add_mmmn_si $m1, $m2, 5");
	assert_string_equal(text_of("add_mmmn_si", 3, 1, 2, -5),
	                    "add $m1, $m2, -5");
	/* A zero-tailed 0 would assemble as _zi. */
	assert_string_equal(text_of("or_mmmn_iz", 3, 0, 0, 0),
	                    "or_mmmn_iz $m0, $m0, 0x0");
	assert_string_equal(text_of("or_mmmn_iz", 3, 0, 0, (int32_t)0xfff00000),
	                    "or $m0, $m0, 0xfff00000");
	assert_string_equal(text_of("or_mmmn_zi", 3, 15, 15, 0), "nop");
	assert_string_equal(text_of("or_aaan_zi", 3, 15, 15, 0), "fnop");
	assert_string_equal(text_of("br_mmmn", 1, 10, 0, 0), "br $lr");
	assert_string_equal(text_of("add_mmmn", 3, 11, 12, 13),
	                    "add $sp, $m12, $m13");
	assert_string_equal(text_of("f16v2add_aaau", 3, 0, 1, 15),
	                    "f16v2add $a0, $a1:BU, $azero");
	assert_string_equal(text_of("f32v2add_aaan", 3, 0, 14, 4),
	                    "f32v2add $a0:1, $azeros, $a4:5");
	assert_string_equal(text_of("ld32step_mmmn_si", 4, 1, 2, 3),
	                    "ld32step $m1, $m2, $m3+=, 0");
	/* CSRs: named when only one CSR has the index, else a number. */
	assert_string_equal(text_of("put_mmmn_zi", 2, 0x50, 1, 0),
	                    "put $CCCSLOAD, $m1");
	assert_string_equal(text_of("get_mmmn_zi", 2, 0, 1, 0),
	                    "get $m0, 1"); /* $WSR and $SSR */
	assert_string_equal(text_of("uget_aaan_zi", 2, 3, 2, 0),
	                    "uget $a3, $FP_CTL");
	assert_string_equal(text_of("bri_mmmn_zi", 1, 0x4c000, 0, 0),
	                    "bri 0x4c000");
}

static char *
raw(const uint32_t *w, int n, uint32_t addr, Arch arch, int flags)
{
	uint8_t b[64];
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 4; k++)
			b[4 * i + k] = (uint8_t)(w[i] >> (8 * k));
	return disasm_bytes(b, (size_t)n * 4, addr, arch, flags);
}

static void
test_stream(void **state)
{
	(void)state;
	uint32_t nop = 0x42ff9000, fnop = 0x52ff9000;
	/* f8v2tof16 $a0, $a1: ipu21 only (0x52006c00 | 1 << 20) */
	uint32_t f8 = 0x52106c00;
	/* 0x6fffffff: class 11 (bits 30..29) but none of delaypic (bits
	 * 28..26 = 000), delayxpic (001), send/sendoff/sendpic (1xx). */
	uint32_t w[] = {nop | 0x80000000u, fnop, 0x6fffffff, nop, f8,
	                nop | 0x80000000u};
	char *t = raw(w, 6, 0x4c000, ARCH_IPU2, 0);
	assert_non_null(strstr(t, "  0004c000:  c2ff9000 52ff9000  { nop ; "
	                          "fnop }\n"));
	assert_non_null(strstr(t, "0004c008:  6fffffff           .word "
	                          "0x6fffffff  # no instruction has this "
	                          "encoding\n"));
	assert_non_null(strstr(t, "0004c00c:  42ff9000           nop\n"));
	assert_non_null(strstr(t, ".word 0x52106c00  # only on ipu21"));
	/* Co-issue bit at a 4-mod-8 address: not a bundle. */
	assert_non_null(strstr(t, ".word 0xc2ff9000  # co-issue bit set "
	                          "outside a bundle"));
	free(t);
	t = raw(w, 2, 0, ARCH_IPU21, DIS_PLAIN);
	assert_string_equal(t, "\t{ nop ; fnop }\n");
	free(t);
	/* Two main-lane words with the co-issue bit are no bundle. */
	uint32_t m[] = {nop | 0x80000000u, nop};
	t = raw(m, 2, 0, ARCH_IPU21, DIS_PLAIN);
	assert_string_equal(t, "\t.word 0xc2ff9000  # co-issue bit set "
	                       "outside a bundle\n\tnop\n");
	free(t);
	uint8_t odd[6] = {0, 0x90, 0xff, 0x42, 0xab, 0xcd};
	t = disasm_bytes(odd, 6, 0, ARCH_IPU21, DIS_PLAIN);
	assert_string_equal(t, "\tnop\n\t.byte 0xab\n\t.byte 0xcd\n");
	free(t);
}

/* The two-word sendpicp: one line for 8 bytes at an 8-byte boundary, else
 * a .word saying why. Words from test_isa.c's test_known_words:
 * sendpicp 1, 13, 0x13000, 7, 0x2abc, 0x31234 = 0xf9a98007 0xaaf31234. */
static void
test_wide(void **state)
{
	(void)state;
	uint32_t nop = 0x42ff9000, p0 = 0xf9a98007, p1 = 0xaaf31234;
	uint32_t w[] = {p0, p1, nop, p0, p1, nop, p0};
	char *t = raw(w, 7, 0x4c000, ARCH_IPU2, 0);
	assert_non_null(strstr(t, "  0004c000:  f9a98007 aaf31234  sendpicp "
	                          "1, 13, 0x13000, 7, 0x2abc, 0x31234\n"
	                          "  0004c008:  42ff9000           nop\n"));
	/* At 4 mod 8, and at the end with no second word. */
	assert_non_null(strstr(t, "  0004c00c:  f9a98007           .word "
	                          "0xf9a98007  # first word of a two-word "
	                          "sendpicp, which must be 8-byte aligned "
	                          "and followed by its second word\n"));
	assert_non_null(strstr(t, "  0004c018:  f9a98007           .word "
	                          "0xf9a98007  # first word of a two-word"));
	free(t);
	/* Plain text re-assembles to the same bytes. */
	t = raw(w, 3, 0, ARCH_IPU21, DIS_PLAIN);
	assert_string_equal(t, "\tsendpicp 1, 13, 0x13000, 7, 0x2abc, "
	                       "0x31234\n\tnop\n");
	Obj *o;
	DiagList e;
	AsmOptions opt = {.no_include = 1};
	assert_int_equal(asm_source("t.s", t, strlen(t), &opt, &o, &e), 0);
	assert_int_equal(o->sec[0].size, 12);
	for (int i = 0; i < 3; i++) {
		const uint8_t *b = o->sec[0].data + 4 * i;
		assert_int_equal((uint32_t)b[0] | (uint32_t)b[1] << 8 |
		                     (uint32_t)b[2] << 16 |
		                     (uint32_t)b[3] << 24,
		                 w[i]);
	}
	obj_free(o);
	free(t);
	/* The one-word view: the row, second-word operands 0. */
	Insn in;
	char buf[200];
	assert_int_equal(isa_decode(p0, ARCH_IPU21, &in),
	                 isa_row_by_variant("sendpicp_mmmn_zi"));
	assert_int_equal(disasm_insn(&in, ARCH_IPU21, buf, sizeof buf), 0);
	assert_string_equal(buf, "sendpicp 1, 13, 0x13000, 7, 0, 0");
}

static Obj *
as_ok(const char *src)
{
	Obj *o;
	DiagList e;
	AsmOptions opt = {.no_include = 1};
	assert_int_equal(asm_source("t.s", src, strlen(src), &opt, &o, &e), 0);
	return o;
}

static void
test_objects(void **state)
{
	(void)state;
	const char *src = "\t.globl _start\n"
	                  "_start:\tcall $lr, func\n"
	                  "\tbrz $m0, done\n"
	                  "func:\tbr $lr\n"
	                  "done:\texitz $mzero\n"
	                  "\t.data\n"
	                  "tab:\t.word func\n"
	                  "\t.bss\n"
	                  "b0:\t.space 8\n"
	                  "b1:\t.space 4\n";
	Obj *o = as_ok(src);
	char *t = disasm_obj(o, ARCH_IPU21, DIS_PLAIN);
	/* Relocated operands print their targets; labels are kept. */
	assert_non_null(strstr(t, "\t.globl _start\n_start:\n\tcall $lr, "
	                          "func\n"));
	assert_non_null(strstr(t, "\tbrz $m0, done\n"));
	assert_non_null(strstr(t, "tab:\n\t.word func\n"));
	assert_non_null(strstr(t, "b0:\n\t.space 8\nb1:\n\t.space 4\n"));
	/* The plain text assembles back to the same object bytes. */
	Obj *o2 = as_ok(t);
	uint8_t *b1, *b2;
	size_t l1, l2;
	Diag d;
	Obj *img1, *img2;
	assert_int_equal(link_objects(&o, 1, NULL, &img1, &d), 0);
	assert_int_equal(link_objects(&o2, 1, NULL, &img2, &d), 0);
	assert_int_equal(obj_write(img1, &b1, &l1, &d), 0);
	assert_int_equal(obj_write(img2, &b2, &l2, &d), 0);
	assert_int_equal(img1->nsec, img2->nsec);
	for (int i = 0; i < img1->nsec; i++) {
		const ObjSection *x = &img1->sec[i], *y = &img2->sec[i];
		assert_string_equal(x->name, y->name);
		assert_int_equal(x->addr, y->addr);
		assert_int_equal(x->size, y->size);
		if (x->data)
			assert_memory_equal(x->data, y->data, x->size);
	}
	assert_int_equal(img2->entry, img1->entry);
	free(t);
	/* In an image targets are named by symbols, with addresses. */
	t = disasm_obj(img1, ARCH_IPU21, 0);
	assert_non_null(strstr(t, "_start:\n  0004c000:  18a13002           "
	                          "call $lr, func\n"));
	assert_non_null(strstr(t, "Entry: 0x4c000"));
	free(t);
	free(b1);
	free(b2);
	obj_free(img1);
	obj_free(img2);
	obj_free(o);
	obj_free(o2);
}

/* ---- the subcommands ---- */

static char tmpdir[64];

static char *
path(const char *name)
{
	static char buf[4][128];
	static int k;
	char *p = buf[k++ % 4];
	snprintf(p, sizeof buf[0], "%s/%s", tmpdir, name);
	return p;
}

static void
put_file(const char *name, const void *data, size_t len)
{
	FILE *f = fopen(path(name), "wb");
	assert_non_null(f);
	fwrite(data, 1, len, f);
	fclose(f);
}

/* Run a subcommand with stderr captured into `err` and stdout into the
 * file "stdout" of the temporary directory. */
static int
run(int (*cmd)(int, char **), char *err, size_t errlen, int argc, ...)
{
	char *argv[16];
	va_list ap;
	va_start(ap, argc);
	for (int i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	argv[argc] = NULL;
	fflush(stderr);
	int saved = dup(2);
	int fd = open(path("stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	close(fd);
	int out = dup(1);
	fd = open(path("stdout"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 1);
	close(fd);
	int r = cmd(argc, argv);
	fflush(stderr);
	fflush(stdout);
	dup2(saved, 2);
	close(saved);
	dup2(out, 1);
	close(out);
	FILE *f = fopen(path("stderr"), "r");
	size_t n = fread(err, 1, errlen - 1, f);
	err[n] = 0;
	fclose(f);
	return r;
}

static void
test_cli(void **state)
{
	(void)state;
	char err[2000];
	snprintf(tmpdir, sizeof tmpdir, "/tmp/ipu_disasm_XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	const char *good = "\t.globl _start\n_start:\tnop\n\tbri _start\n";
	put_file("a.s", good, strlen(good));
	const char *bad = "\tnop\n\tadd $m0, $m0, 99999\n";
	put_file("bad.s", bad, strlen(bad));
	put_file("odd.bin", "\0\x90\xff\x42\x01\x02", 6);
	/* sendpicp 1, 13, 0x13000, 7, 0x2abc, 0x31234 and its data word,
	 * then nop (little-endian) */
	put_file("wide.bin", "\x07\x80\xa9\xf9\x34\x12\xf3\xaa\x00\x90\xff\x42",
	         12);

	assert_int_equal(run(cmd_asm, err, sizeof err, 4, "asm", path("a.s"),
	                     "-o", path("a.o")),
	                 0);
	assert_int_equal(run(cmd_link, err, sizeof err, 4, "link", path("a.o"),
	                     "-o", path("a.elf")),
	                 0);
	assert_int_equal(
	    run(cmd_disasm, err, sizeof err, 2, "disasm", path("a.elf")), 0);
	assert_int_equal(run(cmd_link, err, sizeof err, 6, "link", path("a.o"),
	                     "-o", path("b.elf"), "--section", ".text=0x50000"),
	                 0);
	/* Errors name file:line:col. */
	assert_int_equal(run(cmd_asm, err, sizeof err, 4, "asm", path("bad.s"),
	                     "-o", path("bad.o")),
	                 1);
	char want[200];
	snprintf(want, sizeof want, "%s:2:16: immediate 99999", path("bad.s"));
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "1 error\n"));
	/* Raw input of odd length. */
	assert_int_equal(run(cmd_disasm, err, sizeof err, 3, "disasm", "--raw",
	                     path("odd.bin")),
	                 1);
	assert_non_null(strstr(err, "length 6 bytes is not a multiple of 4"));
	assert_int_equal(run(cmd_disasm, err, sizeof err, 5, "disasm", "--raw",
	                     "--base", "0x4c000", path("wide.bin")),
	                 0);
	char out[400] = "";
	FILE *f = fopen(path("stdout"), "r");
	assert_non_null(f);
	out[fread(out, 1, sizeof out - 1, f)] = 0;
	fclose(f);
	if (!strstr(out, "  0004c000:  f9a98007 aaf31234  sendpicp 1, 13, "
	                 "0x13000, 7, 0x2abc, 0x31234\n"
	                 "  0004c008:  42ff9000           nop\n"))
		fail_msg("ipu disasm --raw printed:\n%s", out);
	assert_int_equal(
	    run(cmd_disasm, err, sizeof err, 2, "disasm", path("odd.bin")), 1);
	assert_non_null(strstr(err, "not an ELF object or image"));
	/* Never overwrite an input. */
	assert_int_equal(run(cmd_asm, err, sizeof err, 4, "asm", path("a.s"),
	                     "-o", path("a.s")),
	                 2);
	assert_non_null(strstr(err, "refusing to overwrite"));
	assert_int_equal(run(cmd_link, err, sizeof err, 4, "link", path("a.o"),
	                     "-o", path("a.o")),
	                 2);
	/* Usage errors and help. */
	assert_int_equal(run(cmd_link, err, sizeof err, 2, "link", path("a.o")),
	                 2);
	assert_non_null(strstr(err, "-o IMAGE is required"));
	assert_int_equal(run(cmd_asm, err, sizeof err, 2, "asm", "--help"), 0);
	assert_int_equal(run(cmd_asm, err, sizeof err, 4, "asm", path("a.s"),
	                     "--chip", "zz"),
	                 2);
	assert_non_null(strstr(err, "unknown chip 'zz'"));
	assert_int_equal(run(cmd_link, err, sizeof err, 6, "link", path("a.o"),
	                     "-o", path("c.elf"), "--section", "bogus"),
	                 2);
	/* Link errors: a corrupt object names the file. */
	put_file("junk.o",
	         "\x7f"
	         "ELF",
	         4);
	assert_int_equal(run(cmd_link, err, sizeof err, 4, "link",
	                     path("junk.o"), "-o", path("d.elf")),
	                 1);
	assert_non_null(strstr(err, "truncated ELF header"));
	const char *names[] = {"a.s",    "a.o",     "a.elf",  "b.elf",
	                       "bad.s",  "odd.bin", "junk.o", "stderr",
	                       "stdout", "wide.bin"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		remove(path(names[i]));
	rmdir(tmpdir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_insn_text), cmocka_unit_test(test_stream),
	    cmocka_unit_test(test_wide),      cmocka_unit_test(test_objects),
	    cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

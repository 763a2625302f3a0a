/*
 * cmd_asm.c - the `ipu asm`, `ipu link` and `ipu disasm` subcommands: option
 * parsing, file handling and printing around asm/asm.h.
 *
 * Exit status: 0 success, 1 bad input (errors printed as file:line:col with
 * a caret), 2 usage error. Outputs follow cli_check_outputs: never over an
 * input, over an existing file only with --force.
 * The helpers declared in cli.h (cli_*) serve the other commands too.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../asm/asm.h"
#include "cli.h"

void
cli_print_diag(const Diag *d)
{
	char buf[1400];
	diag_format(d, buf, sizeof buf);
	fprintf(stderr, "%s\n", buf);
}

/* `--name VALUE` or `--name=VALUE`; advances *i. NULL if argv[*i] is not
 * this option; sets *missing when the value is absent. */
const char *
cli_opt_value(int argc, char **argv, int *i, const char *name, int *missing)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	if (strncmp(a, name, n))
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n])
		return NULL;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

static int
is_help(const char *a)
{
	return !strcmp(a, "--help") || !strcmp(a, "-h");
}

const Chip *
cli_chip_arg(const char *cmd, const char *name)
{
	const Chip *c = chip_by_name(name);
	if (!c)
		fprintf(stderr, "ipu %s: unknown chip '%s' (known: %s)\n", cmd,
		        name, chip_names());
	return c;
}

int
cli_timing_arg(const char *cmd, const char *spec, Timing *out)
{
	Diag d;
	diag_clear(&d);
	if (!timing_parse(spec, out, &d))
		return 1;
	char msg[512];
	diag_format(&d, msg, sizeof msg);
	fprintf(stderr, "ipu %s: %s\n", cmd, msg);
	return 0;
}

int
cli_threads_arg(const char *cmd, const char *v, int *out)
{
	char *end;
	long n = strtol(v, &end, 10);
	if (end == v || *end || n < 1 || n > 64) {
		fprintf(stderr, "ipu %s: --threads wants 1..64, got '%s'\n",
		        cmd, v);
		return 0;
	}
	*out = (int)n;
	return 1;
}

int
cli_parse_cycles(const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 0);
	if (errno || end == v || *end || v[0] == '-' || n < 1 || n > INT64_MAX)
		return -1;
	*out = n;
	return 0;
}

int
cli_max_cycles_arg(const char *cmd, const char *v, uint64_t *out)
{
	if (!cli_parse_cycles(v, out))
		return 1;
	fprintf(stderr,
	        "ipu %s: --max-cycles wants a number of cycles, 1 or more, "
	        "got '%s'\n",
	        cmd, v);
	return 0;
}

void
cli_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '\t')
			fputs("\\t", f);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* ---- ipu asm ---- */

static void
asm_usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu asm IN.s [-o OUT.o] [--force] [--chip c600|gc200] "
	        "[-I DIR]... [-D NAME[=V]]... [-U NAME]... [--cpp|--no-cpp]\n"
	        "\n"
	        "Assemble IN.s into a relocatable ELF object (default OUT: IN "
	        "with .o).\n"
	        "  -o FILE        output object\n"
	        "  --force        replace OUT if it exists\n"
	        "  --chip NAME    instructions available (default c600: "
	        "ipu21)\n"
	        "  --cpp          run the C preprocessor first (the default "
	        "for IN.S)\n"
	        "  --no-cpp       do not, even for IN.S\n"
	        "  -I DIR, -D NAME[=VALUE], -U NAME   passed to the "
	        "preprocessor\n"
	        "Syntax, directives and the preprocessor step: "
	        "docs/assembler.md.\n");
}

/* -I DIR, -IDIR (and -D, -U): the value, advancing *i; NULL if argv[*i] is
 * not this flag; *missing when the value is absent. */
static const char *
short_value(int argc, char **argv, int *i, char flag, int *missing)
{
	const char *a = argv[*i];
	if (a[0] != '-' || a[1] != flag)
		return NULL;
	if (a[2])
		return a + 2;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

/* Does the name end in ".S" (assembly for the C preprocessor)? */
static int
wants_cpp(const char *in)
{
	size_t n = strlen(in);
	return n > 2 && !strcmp(in + n - 2, ".S");
}

/* Assemble `in`, through the preprocessor when asked. */
static int
assemble(const char *in, int cpp, const AsmCppOptions *co,
         const AsmOptions *opt, Obj **o, DiagList *errs)
{
	if (!cpp)
		return asm_file(in, opt, o, errs);
	char *text;
	size_t len;
	Diag d;
	*o = NULL;
	errs->v = NULL;
	errs->n = 0;
	if (asm_preprocess(in, co, &text, &len, &d)) {
		cli_print_diag(&d);
		return IPU_EINVAL;
	}
	if (d.msg[0])
		fprintf(stderr, "ipu asm: preprocessor: %s\n", d.msg);
	int r = asm_source(in, text, len, opt, o, errs);
	free(text);
	return r;
}

static char *
default_output(const char *in, const char *ext)
{
	const char *slash = strrchr(in, '/');
	const char *dot = strrchr(in, '.');
	size_t n =
	    dot && (!slash || dot > slash) ? (size_t)(dot - in) : strlen(in);
	char *out = xmalloc(n + strlen(ext) + 1);
	memcpy(out, in, n);
	strcpy(out + n, ext);
	return out;
}

int
cmd_asm(int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *v;
	DiagList warns = {0};
	AsmOptions opt = {.warnings = &warns};
	AsmCppOptions co = {0};
	const char **inc = xcalloc((size_t)argc, sizeof *inc);
	const char **def = xcalloc((size_t)argc, sizeof *def);
	const char **und = xcalloc((size_t)argc, sizeof *und);
	co.include = inc;
	co.define = def;
	co.undef = und;
	int force = 0, cpp = -1; /* cpp < 0: by the file name */
	int status = 2;
	for (int i = 1; i < argc; i++) {
		int missing = 0;
		if (is_help(argv[i])) {
			asm_usage(stdout);
			status = 0;
			goto done;
		} else if (!strcmp(argv[i], "--force"))
			force = 1;
		else if ((v = cli_opt_value(argc, argv, &i, "-o", &missing)))
			out = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--chip",
		                            &missing))) {
			if (!(opt.chip = cli_chip_arg("asm", v)))
				goto done;
		} else if (!strcmp(argv[i], "--cpp") ||
		           !strcmp(argv[i], "--no-cpp"))
			cpp = argv[i][2] == 'c';
		else if ((v = short_value(argc, argv, &i, 'I', &missing)))
			inc[co.ninclude++] = v;
		else if ((v = short_value(argc, argv, &i, 'D', &missing)))
			def[co.ndefine++] = v;
		else if ((v = short_value(argc, argv, &i, 'U', &missing)))
			und[co.nundef++] = v;
		else if (missing || argv[i][0] == '-' || in) {
			fprintf(stderr, "ipu asm: %s '%s'\n",
			        missing ? "missing value for"
			        : in    ? "unexpected argument"
			                : "unknown option",
			        argv[i]);
			asm_usage(stderr);
			goto done;
		} else
			in = argv[i];
	}
	if (!in) {
		asm_usage(stderr);
		goto done;
	}
	co.chip = opt.chip;
	char *defout = out ? NULL : default_output(in, ".o");
	if (!out)
		out = defout;
	status = cli_check_outputs("asm", &out, 1, &in, 1, force);
	if (status) {
		free(defout);
		goto done;
	}
	status = 1;
	Obj *o;
	DiagList errs;
	int r =
	    assemble(in, cpp < 0 ? wants_cpp(in) : cpp, &co, &opt, &o, &errs);
	for (int i = 0; i < warns.n; i++) {
		Diag w = warns.v[i];
		snprintf(w.msg, sizeof w.msg, "warning: %.480s",
		         warns.v[i].msg);
		cli_print_diag(&w);
	}
	diaglist_free(&warns);
	if (r) {
		for (int i = 0; i < errs.n; i++)
			cli_print_diag(&errs.v[i]);
		if (errs.n)
			fprintf(stderr, "%d error%s\n", errs.n,
			        errs.n == 1 ? "" : "s");
	} else {
		Diag d;
		diag_clear(&d);
		if (obj_write_file(o, out, &d))
			cli_print_diag(&d);
		else
			status = 0;
		obj_free(o);
	}
	diaglist_free(&errs);
	free(defout);
done:
	free(inc);
	free(def);
	free(und);
	return status;
}

/* ---- ipu link ---- */

static void
link_usage(FILE *f)
{
	fprintf(f, "usage: ipu link A.o [B.o ...] -o IMAGE [--force] "
	           "[--section NAME=ADDR]...\n"
	           "                [--chip c600|gc200] [--entry SYMBOL]\n"
	           "\n"
	           "Link objects into a tile image (ELF executable).\n"
	           "  -o FILE            output image\n"
	           "  --force            replace IMAGE if it exists\n"
	           "  --section N=ADDR   place section N at ADDR (repeatable); "
	           "others follow\n"
	           "                     from the chip's memory base, code "
	           "first\n"
	           "  --chip NAME        memory map and instruction set "
	           "(default c600)\n"
	           "  --entry SYMBOL     entry point (default _start, main, "
	           "else the first\n"
	           "                     code section)\n");
}

static int
parse_place(const char *s, LinkPlace *p)
{
	const char *eq = strrchr(s, '=');
	if (!eq || eq == s || !eq[1])
		return -1;
	char *end;
	unsigned long a = strtoul(eq + 1, &end, 0);
	if (*end || a > UINT32_MAX)
		return -1;
	p->name = strndup(s, (size_t)(eq - s));
	p->addr = (uint32_t)a;
	return 0;
}

int
cmd_link(int argc, char **argv)
{
	const char *out = NULL, *v;
	char **in = xcalloc((size_t)argc, sizeof *in);
	LinkPlace *place = xcalloc((size_t)argc, sizeof *place);
	LinkOptions opt = {.place = place};
	int nin = 0, status = 2, force = 0;
	Obj **objs = NULL;
	for (int i = 1; i < argc; i++) {
		int missing = 0;
		if (is_help(argv[i])) {
			link_usage(stdout);
			status = 0;
			goto done;
		} else if (!strcmp(argv[i], "--force"))
			force = 1;
		else if ((v = cli_opt_value(argc, argv, &i, "-o", &missing)))
			out = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--chip",
		                            &missing))) {
			if (!(opt.chip = cli_chip_arg("link", v)))
				goto done;
		} else if ((v = cli_opt_value(argc, argv, &i, "--entry",
		                              &missing)))
			opt.entry = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--section",
		                            &missing))) {
			if (parse_place(v, &place[opt.nplace])) {
				fprintf(stderr,
				        "ipu link: --section wants NAME=ADDR, "
				        "not '%s'\n",
				        v);
				goto done;
			}
			opt.nplace++;
		} else if (missing || argv[i][0] == '-') {
			fprintf(stderr, "ipu link: %s '%s'\n",
			        missing ? "missing value for"
			                : "unknown option",
			        argv[i]);
			link_usage(stderr);
			goto done;
		} else
			in[nin++] = argv[i];
	}
	if (!nin || !out) {
		fprintf(stderr, "ipu link: %s\n",
		        nin ? "-o IMAGE is required" : "no input objects");
		link_usage(stderr);
		goto done;
	}
	if ((status = cli_check_outputs("link", &out, 1,
	                                (const char *const *)in, nin, force)))
		goto done;
	status = 1;
	objs = xcalloc((size_t)nin, sizeof *objs);
	Diag d;
	diag_clear(&d);
	for (int i = 0; i < nin; i++)
		if (obj_read_file(in[i], &objs[i], &d)) {
			cli_print_diag(&d);
			goto done;
		}
	Obj *img;
	if (link_objects(objs, nin, &opt, &img, &d)) {
		fprintf(stderr, "ipu link: ");
		cli_print_diag(&d);
		goto done;
	}
	if (obj_write_file(img, out, &d))
		cli_print_diag(&d);
	else
		status = 0;
	obj_free(img);
done:
	for (int i = 0; objs && i < nin; i++)
		obj_free(objs[i]);
	free(objs);
	for (int i = 0; i < opt.nplace; i++)
		free((char *)place[i].name);
	free(place);
	free(in);
	return status;
}

/* ---- ipu disasm ---- */

static void
disasm_usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu disasm FILE [--raw [--base ADDR]] [--plain] "
	        "[--chip c600|gc200]\n"
	        "\n"
	        "Disassemble an object or image section by section, or with "
	        "--raw a file of\n"
	        "little-endian 32-bit words.\n"
	        "  --raw          FILE holds raw instruction words\n"
	        "  --base ADDR    address of the first raw word (default 0)\n"
	        "  --plain        no addresses or hex words (re-assemblable)\n"
	        "  --chip NAME    instruction set (default c600: ipu21)\n");
}

int
cmd_disasm(int argc, char **argv)
{
	const char *in = NULL, *v;
	const Chip *chip = chip_default();
	int raw = 0, flags = 0;
	unsigned long base = 0;
	for (int i = 1; i < argc; i++) {
		int missing = 0;
		char *end;
		if (is_help(argv[i])) {
			disasm_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--raw"))
			raw = 1;
		else if (!strcmp(argv[i], "--plain"))
			flags |= DIS_PLAIN;
		else if ((v = cli_opt_value(argc, argv, &i, "--chip",
		                            &missing))) {
			if (!(chip = cli_chip_arg("disasm", v)))
				return 2;
		} else if ((v = cli_opt_value(argc, argv, &i, "--base",
		                              &missing))) {
			base = strtoul(v, &end, 0);
			if (*end || base > UINT32_MAX || base % 4) {
				fprintf(stderr,
				        "ipu disasm: --base wants a 4-byte "
				        "aligned address, not '%s'\n",
				        v);
				return 2;
			}
		} else if (missing || argv[i][0] == '-' || in) {
			fprintf(stderr, "ipu disasm: %s '%s'\n",
			        missing ? "missing value for"
			        : in    ? "unexpected argument"
			                : "unknown option",
			        argv[i]);
			disasm_usage(stderr);
			return 2;
		} else
			in = argv[i];
	}
	if (!in) {
		disasm_usage(stderr);
		return 2;
	}
	uint8_t *data;
	size_t len;
	Diag d;
	diag_clear(&d);
	if (read_file(in, &data, &len, &d)) {
		cli_print_diag(&d);
		return 1;
	}
	char *text = NULL;
	if (raw && len % 4) {
		fprintf(stderr,
		        "%s: length %zu bytes is not a multiple of 4 (raw "
		        "input is 32-bit words)\n",
		        in, len);
	} else if (raw) {
		text =
		    disasm_bytes(data, len, (uint32_t)base, chip->arch, flags);
	} else if (!obj_is_elf(data, len)) {
		fprintf(stderr,
		        "%s: not an ELF object or image (use --raw for raw "
		        "words)\n",
		        in);
	} else {
		Obj *o;
		if (obj_read(data, len, in, &o, &d))
			cli_print_diag(&d);
		else {
			text = disasm_obj(o, chip->arch, flags);
			obj_free(o);
		}
	}
	free(data);
	if (!text)
		return 1;
	fputs(text, stdout);
	free(text);
	return 0;
}

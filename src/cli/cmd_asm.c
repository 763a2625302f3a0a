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

/* ---- ipu asm ---- */

static void
asm_usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu asm IN.s [-o OUT.o] [--force] [--chip "
	        "c600|gc200]\n"
	        "\n"
	        "Assemble IN.s into a relocatable ELF object (default OUT: IN "
	        "with .o).\n"
	        "  -o FILE        output object\n"
	        "  --force        replace OUT if it exists\n"
	        "  --chip NAME    instructions available (default c600: "
	        "ipu21)\n"
	        "Syntax and directives: docs/assembler.md.\n");
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
	AsmOptions opt = {0};
	int force = 0;
	for (int i = 1; i < argc; i++) {
		int missing = 0;
		if (is_help(argv[i])) {
			asm_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--force"))
			force = 1;
		else if ((v = cli_opt_value(argc, argv, &i, "-o", &missing)))
			out = v;
		else if ((v = cli_opt_value(argc, argv, &i, "--chip",
		                            &missing))) {
			if (!(opt.chip = cli_chip_arg("asm", v)))
				return 2;
		} else if (missing || argv[i][0] == '-' || in) {
			fprintf(stderr, "ipu asm: %s '%s'\n",
			        missing ? "missing value for"
			        : in    ? "unexpected argument"
			                : "unknown option",
			        argv[i]);
			asm_usage(stderr);
			return 2;
		} else
			in = argv[i];
	}
	if (!in) {
		asm_usage(stderr);
		return 2;
	}
	char *def = out ? NULL : default_output(in, ".o");
	if (!out)
		out = def;
	int status = cli_check_outputs("asm", &out, 1, &in, 1, force);
	if (status) {
		free(def);
		return status;
	}
	status = 1;
	Obj *o;
	DiagList errs;
	if (asm_file(in, &opt, &o, &errs)) {
		for (int i = 0; i < errs.n; i++)
			cli_print_diag(&errs.v[i]);
		fprintf(stderr, "%d error%s\n", errs.n, errs.n == 1 ? "" : "s");
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
	free(def);
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

/* main.c - the `ipu` command: a table of subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	int (*run)(int, char **);
	const char *help;
} commands[] = {
    {"asm", cmd_asm, "assemble IPU assembly into a relocatable object"},
    {"link", cmd_link, "place objects into a tile image"},
    {"disasm", cmd_disasm, "disassemble an object, an image or raw words"},
    {"sim", cmd_sim, "run a single-tile program on the emulator"},
    {"compile", cmd_compile, "compile a text graph to a package"},
    {"bench", cmd_bench, "benchmarks with JSON output"},
    {"inspect", cmd_inspect, "summarise a package file"},
    {"model", cmd_model, "generate or check a SigLIP checkpoint"},
    {"image", cmd_image, "decode and preprocess images for a vision model"},
    {"run", cmd_run, "run SigLIP or a graph file on the emulated chip"},
    {"device", cmd_device, "find and examine C600 cards (or the card model)"},
    {"profile", cmd_profile, "query or compare the profiles runs wrote"},
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: ipu <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'ipu <command> --help' describes each command.\n");
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "ipu: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}

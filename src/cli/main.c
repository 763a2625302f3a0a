/* main.c - the `ipu` command: dispatch to subcommands. */
#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0) {
		printf("usage: ipu <command> [options]\n");
		return argc < 2;
	}
	fprintf(stderr, "ipu: unknown command '%s'\n", argv[1]);
	return 2;
}

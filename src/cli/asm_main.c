/*
 * asm_main.c - `ipu-asm`: the assembler and linker commands on their own.
 * The build uses it to assemble kernels/NAME.S before the `ipu` program, which
 * embeds them, can be linked.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int
main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "asm"))
		return cmd_asm(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "link"))
		return cmd_link(argc - 1, argv + 1);
	fprintf(stderr, "usage: ipu-asm asm|link ... (see ipu --help)\n");
	return 2;
}

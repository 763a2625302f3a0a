/* cmd_asm.c - placeholder until this command lands. */
#include <stdio.h>
#include "cli.h"

int
cmd_asm(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "ipu %s: not implemented yet\n", argv[0]);
	return 2;
}

int
cmd_link(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "ipu %s: not implemented yet\n", argv[0]);
	return 2;
}

int
cmd_disasm(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "ipu %s: not implemented yet\n", argv[0]);
	return 2;
}

/* cmd_sim.c - placeholder until this command lands. */
#include <stdio.h>
#include "cli.h"

int
cmd_sim(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "ipu %s: not implemented yet\n", argv[0]);
	return 2;
}

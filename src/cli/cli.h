/* cli.h - subcommands of the `ipu` program. Only cli/ prints and exits. */
#ifndef IPU_CLI_H
#define IPU_CLI_H

/* Each returns the process exit status: 0 success, 1 the input was bad or
 * the program faulted, 2 usage error. argv[0] is the subcommand name. */
int cmd_asm(int argc, char **argv);     /* cmd_asm.c */
int cmd_link(int argc, char **argv);    /* cmd_asm.c */
int cmd_disasm(int argc, char **argv);  /* cmd_asm.c */
int cmd_sim(int argc, char **argv);     /* cmd_sim.c */
int cmd_bench(int argc, char **argv);   /* cmd_bench.c */
int cmd_inspect(int argc, char **argv); /* cmd_inspect.c */

#endif

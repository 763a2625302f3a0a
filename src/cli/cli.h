/* cli.h - subcommands of the `ipu` program. Only cli/ prints and exits. */
#ifndef IPU_CLI_H
#define IPU_CLI_H

#include "../graph/graph.h"
#include "../target/chip.h"
#include "../util/util.h"

/* Each returns the process exit status: 0 success, 1 the input was bad or
 * the program faulted, 2 usage error. argv[0] is the subcommand name. */
int cmd_asm(int argc, char **argv);       /* cmd_asm.c */
int cmd_link(int argc, char **argv);      /* cmd_asm.c */
int cmd_disasm(int argc, char **argv);    /* cmd_asm.c */
int cmd_sim(int argc, char **argv);       /* cmd_sim.c */
int cmd_bench(int argc, char **argv);     /* cmd_bench.c */
int cmd_inspect(int argc, char **argv);   /* cmd_inspect.c */
int cmd_compile(int argc, char **argv);   /* cmd_compile.c */
int cmd_model(int argc, char **argv);     /* cmd_model.c */
int cmd_image(int argc, char **argv);     /* cmd_image.c */
int cmd_quant(int argc, char **argv);     /* cmd_quant.c */
int cmd_run(int argc, char **argv);       /* cmd_run.c */
int cmd_run_graph(int argc, char **argv); /* cmd_run_graph.c: `run graph` */
int cmd_run_onnx(int argc, char **argv);  /* cmd_run_onnx.c: `run onnx` */
int cmd_device(int argc, char **argv);    /* cmd_device.c */
int cmd_profile(int argc, char **argv);   /* cmd_profile.c */
/* What `run graph` and `run onnx` share (cmd_run_graph.c); runner.h
 * defines the structs (cli.h stays free of the runtime's headers, which
 * ipu-asm does not have). */
struct RunnerFile;
struct RunnerBuild;
/* The options both take: --in, --out, --cache, --chip, --timing,
 * --threads, --max-cycles, --quiet. */
typedef struct {
	struct RunnerFile *in, *out; /* argc entries each */
	int nin, nout;
	const char *cache_dir;
	const Chip *chip; /* NULL until given */
	Timing timing;
	int threads;
	uint64_t max_cycles;
	int quiet; /* --quiet: no progress line (cli_progress) */
} CliRunOptions;
/* Their usage lines for --cache, --max-cycles and --quiet. */
extern const char cli_run_usage[];
/* 1 if argv[*i] is one of them (*bad set if its value is malformed), 0
 * if not (*missing set when it lacks its value). */
int cli_run_option(const char *cmd, int argc, char **argv, int *i,
                   CliRunOptions *o, int *bad, int *missing);
/* --device D (runner_device_parse; v is cut at its ':'): 1, or 0 after a
 * message. The usage lines of --device. */
struct RunnerDevice;
int cli_device_arg(const char *cmd, char *v, struct RunnerDevice *on,
                   const Chip **chip);
extern const char cli_device_usage[];
/* A run's cycles, time at the chip's clock, MFU, compile and emulation. */
void cli_print_run(const Chip *chip, uint64_t cycles, double mfu,
                   const struct RunnerBuild *b, double host_seconds);
/* A SigLIP compute type: f32, f16 or f8 (= f8_f143: f8 dense GEMMs);
 * 1 after a message otherwise (cmd_run.c). */
int cli_siglip_dtype(const char *cmd, const char *name, DType *out);
int cli_siglip_dtype_parse(const char *name, DType *out); /* 0 or -1 */

/* Helpers the commands share (cmd_asm.c). */
/* A diagnostic on stderr: file:line:col: msg, the line and a caret. */
void cli_print_diag(const Diag *d);
/* `--name VALUE` or `--name=VALUE`; advances *i. NULL if argv[*i] is not
 * this option; sets *missing when the value is absent. */
const char *cli_opt_value(int argc, char **argv, int *i, const char *name,
                          int *missing);
/* The chip called `name`, or NULL after a message naming the known ones. */
const Chip *cli_chip_arg(const char *cmd, const char *name);
/* `--timing SPEC` (target/timing.h): the profile into *out, else 0 after
 * a message. Commands apply it with chip_timed once all options are read. */
int cli_timing_arg(const char *cmd, const char *spec, Timing *out);
/* `--threads N`: 1..64 into *out, else 0 after a message. */
int cli_threads_arg(const char *cmd, const char *v, int *out);
/* `--max-cycles N`, the cycles a run may take before it is stopped, for
 * every command that runs the chip: a whole number 1..2^63-1 (decimal or
 * 0x hex). cli_parse_cycles: 0, or -1 if v is not one; cli_max_cycles_arg:
 * 1, or 0 after a message. */
int cli_parse_cycles(const char *v, uint64_t *out);
int cli_max_cycles_arg(const char *cmd, const char *v, uint64_t *out);
/* The progress line on stderr during runs of the emulator (progress.c):
 * on when stderr is a terminal unless quiet (`--quiet`). */
void cli_progress(int quiet);
/* s as a JSON string literal: quotes, backslashes and control characters
 * escaped (a path may hold any of them). */
void cli_json_str(FILE *f, const char *s);
/* The rule for every command's output files (docs/files.md; outputs.c),
 * checked before any work: an output is never one of the inputs (the same
 * file by device and inode, so hard links and symlinks count; --force does
 * not change that), never given twice, in a folder that exists and can be
 * written, not a folder, and not an existing file unless `force`. 0 if all
 * hold; else a message and the exit status: 2 for an output that is an
 * input or given twice, 1 otherwise. NULL entries are skipped. */
int cli_check_outputs(const char *cmd, const char *const *out, int nout,
                      const char *const *in, int nin, int force);

/* A whole number (decimal or 0x hex, no sign): 0, or -1. */
int cli_parse_u64(const char *s, uint64_t *v);
/* ADDR:LEN (LEN 1..2^20); 0, or -1 if malformed. */
int cli_parse_range(const char *s, uint32_t *addr, uint32_t *len);

#endif

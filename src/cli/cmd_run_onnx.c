/*
 * cmd_run_onnx.c - `ipu run onnx --model M.onnx --in NAME=F.npy ...
 * [--out NAME=F.npy ...] [--dtype f32|f16|f8] [--force] [--cache DIR]
 * [--chip C] [--timing P] [--threads N] [--max-cycles N] [--device D]
 * [--quiet]`: an ONNX model imported (src/onnx/), compiled (or its package
 * read from the cache), run once on the emulated chip (or through the card
 * model, or a card: --device) on values from .npy files; prints what
 * `run graph` prints, writes the named outputs as float32 .npy. Nothing
 * runs until every name, shape and file has been checked.
 *
 * Exit status: 0 success, 1 a model, file, compile or run error, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../onnx/onnx.h"
#include "../util/npy.h"
#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu run onnx --model M.onnx --in NAME=F.npy ... "
	        "[--out NAME=F.npy ...]\n"
	        "                    [--dtype f32|f16|f8] [--force] [--cache "
	        "DIR] [--chip C]\n"
	        "                    [--timing P] [--threads N] "
	        "[--max-cycles N] [--device D] [--quiet]\n"
	        "  Import the ONNX model (docs/onnx.md), compile it, run it "
	        "once on the\n"
	        "  emulated chip and print the cycles, the time at the "
	        "chip's clock and MFU.\n"
	        "  --in NAME=F    values of model input NAME: a .npy of its "
	        "shape, float32 or\n"
	        "                 float16 (int64 or int32 for token ids)\n"
	        "  --out NAME=F   model output NAME as float32 .npy; never "
	        "over an existing\n"
	        "                 file unless --force\n"
	        "  --dtype T      f32 (default), f16, or f8 (matmul weights "
	        "in f8 F143, one\n"
	        "                 power-of-two scale each; the rest in f16)\n"
	        "%s%s",
	        cli_run_usage, cli_device_usage);
}

/* Names against the model's ports, before any file is read. */
static int
check_names(const OnnxModel *m, const RunnerFile *in, int nin,
            const RunnerFile *out, int nout, Diag *d)
{
	for (int i = 0; i < nin; i++) {
		if (!onnx_find_port(m, in[i].tensor, 0))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "the model has no input %s",
			                in[i].tensor);
		for (int j = 0; j < i; j++)
			if (onnx_find_port(m, in[i].tensor, 0) ==
			    onnx_find_port(m, in[j].tensor, 0))
				return diag_set(d, IPU_EINVAL, NULL, 0, 0,
				                "input %s is given twice",
				                in[i].tensor);
	}
	for (int i = 0; i < nout; i++)
		if (!onnx_find_port(m, out[i].tensor, 1))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "the model has no output %s",
			                out[i].tensor);
	for (int k = 0; k < m->ninputs; k++) {
		int given = 0;
		for (int i = 0; i < nin; i++)
			given |=
			    onnx_find_port(m, in[i].tensor, 0) == &m->inputs[k];
		if (!given) {
			char shape[96];
			shape_format(&m->inputs[k].shape, shape, sizeof shape);
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "input %s %s has no values: give --in "
			                "%s=FILE.npy",
			                m->inputs[k].name, shape,
			                m->inputs[k].name);
		}
	}
	return IPU_OK;
}

static int
write_output(const OnnxPort *p, const float *v, const char *path, int force,
             Diag *d)
{
	NpyArray a = {.dtype = NPY_F32, .rank = p->onnx_rank};
	for (int k = 0; k < a.rank; k++)
		a.shape[k] = (uint64_t)p->shape.dim[k];
	a.data = (void *)v;
	return npy_write(path, &a, force, d);
}

static int
run(const char *model, OnnxDType dt, const OnnxRunOptions *o,
    const RunnerFile *in, int nin, const RunnerFile *out, int nout, int force,
    Diag *d)
{
	OnnxModel *m;
	int e = onnx_import_file(model, dt, &m, d);
	if (e)
		return e;
	if (m->notes[0])
		fprintf(stderr, "ipu run onnx: note: %s\n", m->notes);
	e = check_names(m, in, nin, out, nout, d);
	float **iv = xcalloc((size_t)m->ninputs + 1, sizeof *iv),
	      **ov = xcalloc((size_t)m->noutputs + 1, sizeof *ov);
	for (int i = 0; !e && i < nin; i++) {
		const OnnxPort *p = onnx_find_port(m, in[i].tensor, 0);
		e = onnx_input_npy(m, p, in[i].path, &iv[p - m->inputs], d);
	}
	for (int i = 0; i < m->noutputs; i++)
		ov[i] = xmalloc((size_t)shape_elems(&m->outputs[i].shape) *
		                sizeof **ov);
	OnnxSession *s = NULL;
	OnnxStats st;
	int nin_m = m->ninputs, nout_m = m->noutputs;
	if (!e) {
		e = onnx_session_open(m, o, &s, NULL, d);
		if (e)
			onnx_model_free(m);
		m = NULL;
	}
	if (!e)
		e = onnx_session_run(s, (const float *const *)iv, ov, &st, d);
	if (!e) {
		const OnnxModel *sm = onnx_session_model(s);
		cli_print_run(o->chip, st.cycles, st.mfu, &st.build,
		              st.host_seconds);
		for (int i = 0; !e && i < nout; i++) {
			const OnnxPort *p =
			    onnx_find_port(sm, out[i].tensor, 1);
			e = write_output(p, ov[p - sm->outputs], out[i].path,
			                 force, d);
			if (!e)
				printf("wrote           %s (%s)\n", out[i].path,
				       out[i].tensor);
		}
	}
	for (int i = 0; i < nin_m; i++)
		free(iv[i]);
	for (int i = 0; i < nout_m; i++)
		free(ov[i]);
	free(iv);
	free(ov);
	onnx_session_close(s);
	onnx_model_free(m);
	return e;
}

int
cmd_run_onnx(int argc, char **argv)
{
	const char *model = NULL, *cmd = "run onnx";
	OnnxDType dt = ONNX_F32;
	CliRunOptions o = {.in = xcalloc((size_t)argc, sizeof *o.in),
	                   .out = xcalloc((size_t)argc, sizeof *o.out),
	                   .timing = timing_nominal,
	                   .threads = 2};
	RunnerFile *in = o.in, *out = o.out;
	RunnerDevice on = {0};
	int force = 0, bad = 0, help = 0;
	for (int i = 2; i < argc && !bad && !help; i++) {
		int missing = 0;
		const char *v;
		if (!strcmp(argv[i], "--force")) {
			force = 1;
		} else if (!strcmp(argv[i], "--help")) {
			help = 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--model",
		                              &missing))) {
			model = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--device",
		                              &missing))) {
			bad = !cli_device_arg(cmd, (char *)v, &on, &o.chip);
		} else if ((v = cli_opt_value(argc, argv, &i, "--dtype",
		                              &missing))) {
			if (!onnx_dtype_from_name(v, &dt)) {
				fprintf(stderr,
				        "ipu run onnx: --dtype wants f32, f16 "
				        "or f8, got '%s'\n",
				        v);
				bad = 1;
			}
		} else if (!cli_run_option(cmd, argc, argv, &i, &o, &bad,
		                           &missing)) {
			fprintf(stderr, "ipu run onnx: %s '%s'\n",
			        missing ? "missing value for"
			                : "unknown option",
			        argv[i]);
			bad = 1;
		}
	}
	int nin = o.nin, nout = o.nout;
	OnnxRunOptions ro = {
	    .chip = chip_timed(o.chip ? o.chip : chip_default(), &o.timing),
	    .threads = o.threads,
	    .cache_dir = o.cache_dir,
	    .max_cycles = o.max_cycles,
	    .device = &on};
	if (!bad && !help && !model) {
		fprintf(stderr, "ipu run onnx: --model is needed\n");
		bad = 1;
	}
	int rc = 0;
	if (help || bad) {
		usage(help ? stdout : stderr);
		rc = help ? 0 : 2;
	} else {
		const char **ins = xcalloc((size_t)nin + 1, sizeof *ins),
		           **outs = xcalloc((size_t)nout + 1, sizeof *outs);
		ins[0] = model;
		for (int i = 0; i < nin; i++)
			ins[i + 1] = in[i].path;
		for (int i = 0; i < nout; i++)
			outs[i] = out[i].path;
		rc = cli_check_outputs(cmd, outs, nout, ins, nin + 1, force);
		free(ins);
		free(outs);
		Diag d;
		diag_clear(&d);
		cli_progress(o.quiet);
		if (!rc && run(model, dt, &ro, in, nin, out, nout, force, &d)) {
			cli_print_diag(&d);
			rc = 1;
		}
	}
	free(in);
	free(out);
	return rc;
}

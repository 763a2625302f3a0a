/*
 * cmd_run.c - `ipu run siglip --weights W --config C (--image IMG... |
 * --pixels P.npy) [--dtype f32|f16|f8] [--f8-scales POS=N,...] [--out F.npy]
 * [--force] [--cache DIR | --no-cache] [--chip C] [--micro-batch M]
 * [--group G] [--threads N]`: the SigLIP
 * vision tower compiled (or its package read from the cache) and run
 * on the emulated chip (src/models/siglip_run.c); prints the embedding's
 * summary and the speed at the chip's clock, writes the embedding [B, d] as
 * .npy.
 *
 * Exit status: 0 success, 1 a model, image, compile or run error, 2 usage.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runner/runner.h"
#include "../models/siglip_graph.h"
#include "../models/siglip_quant.h"
#include "../util/npy.h"
#include "cli_profile.h"

int
cli_siglip_dtype_parse(const char *name, DType *out)
{
	int dt = dtype_from_name(name, strlen(name));
	if (!strcmp(name, "f8"))
		dt = DT_F8_F143;
	if (dt != DT_F32 && dt != DT_F16 && dt != DT_F8_F143)
		return -1;
	*out = (DType)dt;
	return 0;
}

int
cli_siglip_dtype(const char *cmd, const char *name, DType *out)
{
	if (cli_siglip_dtype_parse(name, out)) {
		fprintf(stderr,
		        "ipu %s: --dtype wants f32, f16 or f8 (f8_f143), got "
		        "'%s'\n",
		        cmd, name);
		return 1;
	}
	return 0;
}

/* The f8 activation scales, as --f8-scales takes them. */
static void
print_scales(const SiglipResult *res, FILE *f)
{
	if (res->quantized) {
		fprintf(f, "quantized       the checkpoint's policy (%s)%s\n",
		        SIGLIP_QUANT_KEY,
		        res->unrolled ? "; its layers differ, so they run "
		                        "unrolled, not as one loop body"
		                      : "");
		return;
	}
	if (!res->have_scales)
		return;
	fprintf(f, "f8 scales       ");
	for (int i = 0; i < SIGLIP_EMBED; i++)
		fprintf(f, "%s%s=%d", i ? "," : "", siglip_gemm_names[i],
		        res->act_scale[i]);
	fprintf(f, "\n");
}

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu run siglip --weights W.safetensors --config "
	        "config.json\n"
	        "                      (--image IMG [--image IMG ...] | "
	        "--pixels P.npy)\n"
	        "                      [--dtype f32|f16|f8] [--f8-scales "
	        "POS=N,...] [--out F.npy]\n"
	        "                      [--force] [--cache DIR | --no-cache] "
	        "[--chip C] [--timing P]\n"
	        "                      [--micro-batch M] [--group G] "
	        "[--threads N] [--max-cycles N]\n"
	        "                      [--device D] [--quiet] "
	        "[--no-fold-ln]\n"
	        "  Compile the SigLIP vision tower for the batch of images, "
	        "run it on the\n"
	        "  emulated chip and print the pooled embedding's summary, "
	        "cycles, time at\n"
	        "  the chip's clock, images/s and MFU.\n"
	        "  --image IMG   a PNG or JPEG (repeat for a batch); resized "
	        "as SigLIP's processor\n"
	        "  --pixels P    pixel values [B, 3, S, S] float32 instead "
	        "(e.g. from ipu image)\n"
	        "  --no-fold-ln  f8: the LayerNorms keep gamma and beta "
	        "(default: folded into\n"
	        "                the next GEMM's weights and bias on the "
	        "host, docs/siglip.md)\n"
	        "  --micro-batch M  one program for M images (default: the "
	        "batch), run\n"
	        "                ceil(B / M) times, the last run padded with "
	        "copies of the last\n"
	        "                image whose outputs are dropped; cycles "
	        "are the runs' sum\n"
	        "                (docs/siglip.md \"Micro-batches\")\n"
	        "  --group G     the layers on G groups of a run's images, "
	        "one loop\n"
	        "                (docs/siglip.md)\n"
	        "  W.safetensors a checkpoint, or one `ipu quant` wrote: "
	        "that runs as its\n"
	        "                policy says (docs/quantization.md), "
	        "without --dtype\n"
	        "  --dtype T     compute type (default f32); f8: the dense "
	        "GEMMs in f8 F143\n"
	        "                (weights scaled on the host, one scale per "
	        "weight over all\n"
	        "                layers; activations cast on the device), "
	        "f16 elsewhere\n"
	        "  --f8-scales S activation scales 2^N per GEMM position, "
	        "e.g. qkv=-2,fc1=1\n"
	        "                (positions qkv, out, fc1, fc2, head.q, "
	        "head.kv, head.out,\n"
	        "                head.fc1, head.fc2, and QK^T's q, k); the "
	        "others from "
	        "bounds no input exceeds\n"
	        "                (docs/siglip.md; measure with "
	        "tools/siglip_ref.py calibrate)\n"
	        "  --out F.npy   the embedding [B, d] float32; never over an "
	        "existing file unless --force\n"
	        "  --cache DIR   keep compiled packages in DIR and reuse "
	        "them while the graph,\n"
	        "                the chip and this ipu are the same "
	        "(default: $XDG_CACHE_HOME/ipu\n"
	        "                or ~/.cache/ipu); --no-cache always "
	        "compiles\n"
	        "  --timing P    timing profile (default nominal; "
	        "docs/fidelity.md)\n"
	        "  --range R     this program's cycles with every timing "
	        "rule at its fast and\n"
	        "                slow bound (its plans kept): predict "
	        "(default: lowered for\n"
	        "                those profiles, the cost model's cycles), "
	        "emulate (run too:\n"
	        "                three emulations), none\n"
	        "  --max-cycles N stop the run after N cycles (default: 10 x "
	        "the predicted\n"
	        "                cycles + 10^6)\n"
	        "  --quiet       no progress line on stderr (shown only when "
	        "it is a terminal)\n"
	        "%s%s%s"
	        "       ipu run graph --help: a graph file on .npy values\n"
	        "       ipu run onnx --help: an ONNX model on .npy values\n",
	        cli_device_usage, cli_profile_usage, cli_profile_show_usage);
}

int
cmd_run(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "graph"))
		return cmd_run_graph(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "onnx"))
		return cmd_run_onnx(argc, argv);
	if (argc < 2 || strcmp(argv[1], "siglip")) {
		usage(argc < 2 || !strcmp(argv[1], "--help") ? stdout : stderr);
		return argc >= 2 && !strcmp(argv[1], "--help") ? 0 : 2;
	}
	SiglipRun r = {.dtype = DT_F32,
	               .threads = 2,
	               .place_report = stderr,
	               .range = SIGLIP_RANGE_PREDICT};
	/* room for the images, then the other inputs */
	const char **images = xcalloc((size_t)argc + 3, sizeof *images);
	const char *out = NULL, *cache = NULL;
	int force = 0, bad = 0, no_cache = 0, quiet = 0;
	ProfileOptions prof;
	cli_profile_defaults(&prof, "run siglip");
	Timing timing = timing_nominal;
	RunnerDevice on = {0};
	r.device = &on;
	for (int i = 2; i < argc && !bad; i++) {
		int missing = 0;
		const char *v;
		if (cli_profile_opt("run siglip", argc, argv, &i, &prof, 1,
		                    &bad)) {
			continue;
		} else if (!strcmp(argv[i], "--force")) {
			force = 1;
		} else if (!strcmp(argv[i], "--no-cache")) {
			no_cache = 1;
		} else if (!strcmp(argv[i], "--quiet")) {
			quiet = 1;
		} else if (!strcmp(argv[i], "--no-fold-ln")) {
			r.fold_ln = -1;
		} else if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			free(images);
			return 0;
		} else if ((v = cli_opt_value(argc, argv, &i, "--cache",
		                              &missing))) {
			cache = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--weights",
		                              &missing))) {
			r.weights = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--config",
		                              &missing))) {
			r.config = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--image",
		                              &missing))) {
			images[r.nimages++] = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--pixels",
		                              &missing))) {
			r.pixels = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--out",
		                              &missing))) {
			out = v;
		} else if ((v = cli_opt_value(argc, argv, &i, "--dtype",
		                              &missing))) {
			bad = cli_siglip_dtype("run", v, &r.dtype);
			r.dtype_given = 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--f8-scales",
		                              &missing))) {
			Diag d;
			r.scales_given = 1;
			if (siglip_f8_parse_scales(v, r.act_scale, r.act_set,
			                           &d)) {
				cli_print_diag(&d);
				bad = 1;
			}
		} else if ((v = cli_opt_value(argc, argv, &i, "--chip",
		                              &missing))) {
			if (!(r.chip = cli_chip_arg("run", v)))
				bad = 1;
		} else if ((v = cli_opt_value(argc, argv, &i, "--device",
		                              &missing))) {
			bad = !cli_device_arg("run siglip", (char *)v, &on,
			                      &r.chip);
		} else if ((v = cli_opt_value(argc, argv, &i, "--timing",
		                              &missing))) {
			bad = !cli_timing_arg("run", v, &timing);
		} else if ((v = cli_opt_value(argc, argv, &i, "--range",
		                              &missing))) {
			static const char *const names[] = {"none", "predict",
			                                    "emulate"};
			int k = 0;
			while (k < 3 && strcmp(v, names[k]))
				k++;
			if (k == 3) {
				fprintf(stderr,
				        "ipu run siglip: --range wants none, "
				        "predict or emulate, got '%s'\n",
				        v);
				bad = 1;
			}
			r.range = k;
		} else if ((v = cli_opt_value(argc, argv, &i, "--micro-batch",
		                              &missing))) {
			char *end;
			long n = strtol(v, &end, 10);
			if (end == v || *end || n < 1 || n > 4096) {
				fprintf(stderr,
				        "ipu run siglip: --micro-batch wants "
				        "the images a run, 1..4096 (at most "
				        "the batch), got '%s'\n",
				        v);
				bad = 1;
			}
			r.micro_batch = (int)n;
		} else if ((v = cli_opt_value(argc, argv, &i, "--group",
		                              &missing))) {
			char *end;
			long n = strtol(v, &end, 10);
			if (end == v || *end || n < 1 || n > 4096) {
				fprintf(stderr,
				        "ipu run siglip: --group wants the "
				        "groups of a run's images, 1..4096, "
				        "got '%s'\n",
				        v);
				bad = 1;
			}
			r.groups = (int)n;
		} else if ((v = cli_opt_value(argc, argv, &i, "--threads",
		                              &missing))) {
			bad = !cli_threads_arg("run", v, &r.threads);
		} else if ((v = cli_opt_value(argc, argv, &i, "--max-cycles",
		                              &missing))) {
			bad = !cli_max_cycles_arg("run", v, &r.max_cycles);
		} else {
			fprintf(stderr, "ipu run: %s '%s'\n",
			        missing ? "missing value for"
			                : "unknown option",
			        argv[i]);
			bad = 1;
		}
	}
	r.chip = chip_timed(r.chip ? r.chip : chip_default(), &timing);
	int scales_set = 0;
	for (int i = 0; i < SIGLIP_GEMMS; i++)
		scales_set |= r.act_set[i];
	if (!bad && scales_set && !dtype_is_f8(r.dtype)) {
		fprintf(stderr, "ipu run siglip: --f8-scales needs --dtype "
		                "f8\n");
		bad = 1;
	}
	if (!bad && r.nimages && r.pixels) {
		fprintf(stderr, "ipu run siglip: --image and --pixels are two "
		                "ways to give the batch: one of them\n");
		bad = 1;
	}
	if (!bad && (!r.weights || !r.config || (!r.nimages && !r.pixels))) {
		fprintf(stderr, "ipu run siglip: --weights, --config and "
		                "either --image or --pixels are needed\n");
		bad = 1;
	}
	if (!bad && cache && no_cache) {
		fprintf(stderr, "ipu run siglip: --cache and --no-cache\n");
		bad = 1;
	}
	if (bad) {
		free(images);
		usage(stderr);
		return 2;
	}
	/* before minutes of run: the inputs are the weights, the config and
	 * the images or pixels */
	images[r.nimages] = r.weights;
	images[r.nimages + 1] = r.config;
	images[r.nimages + 2] = r.pixels;
	int refused = cli_check_outputs("run siglip", &out, 1, images,
	                                r.nimages + 3, force);
	prof.force = force;
	prof.source = r.weights;
	prof.dtype = dtype_name(r.dtype);
	if (!refused)
		refused = cli_profile_check("run siglip", &prof, images,
		                            r.nimages + 3);
	if (refused) {
		free(images);
		return refused;
	}
	char *cache_default = no_cache || cache ? NULL : runner_default_cache();
	r.cache_dir = cache ? cache : cache_default;
	r.images = images;
	cli_progress(quiet);
	/* the batch is known once the images are read; the profile's
	 * summary takes it from the result */
	ProfileSession *ps = NULL;
	SiglipResult res;
	Diag d;
	diag_clear(&d);
	prof.batch = r.nimages;
	ps = profile_new(&prof);
	r.observe = profile_observer(ps);
	int e = siglip_run(&r, &res, &d);
	if (!e && out) {
		NpyArray a = {.dtype = NPY_F32,
		              .rank = 2,
		              .shape = {(uint64_t)res.batch, (uint64_t)res.d},
		              .data = res.embedding};
		e = npy_write(out, &a, force, &d);
	}
	ProfileFacts facts = {.compile_seconds = res.compile_ms / 1e3,
	                      .host_seconds = res.host_seconds,
	                      .cached = res.cached,
	                      .batch = res.batch};
	if (e) {
		int asked = profile_stopped_as_asked(ps);
		if (!asked) {
			print_scales(&res, stderr);
			cli_print_diag(&d);
		} else {
			printf("stopped         %s\n", d.msg);
		}
		int rc = cli_profile_finish("run siglip", ps, &facts, 1);
		profile_free(ps);
		siglip_result_free(&res);
		free(images);
		free(cache_default);
		return rc;
	}
	for (int b = 0; b < res.batch; b++) {
		const float *v = res.embedding + (size_t)b * res.d;
		double sum = 0, sq = 0;
		for (int k = 0; k < res.d; k++)
			sum += v[k], sq += (double)v[k] * v[k];
		printf("image %d: embedding [%d], mean %.6g, norm %.6g, first "
		       "%.6g %.6g %.6g\n",
		       b, res.d, sum / res.d, sqrt(sq), v[0], v[1 % res.d],
		       v[2 % res.d]);
	}
	printf("cycles          %llu emulated, %llu predicted (timing %s)\n",
	       (unsigned long long)res.cycles,
	       (unsigned long long)res.predicted_cycles, r.chip->timing->spec);
	if (res.runs > 1)
		printf("runs            %d images as %d runs of %d (one "
		       "program, %llu cycles predicted a run; the cycles "
		       "are the runs' sum)\n",
		       res.batch, res.runs, res.micro_batch,
		       (unsigned long long)res.run_predicted_cycles);
	if (r.range)
		printf("timing range    %llu .. %llu cycles %s, this program "
		       "with every rule at its fast .. slow bound "
		       "(docs/fidelity.md)\n",
		       (unsigned long long)res.cycles_fast,
		       (unsigned long long)res.cycles_slow,
		       r.range == SIGLIP_RANGE_EMULATE ? "emulated"
		                                       : "predicted");
	if (r.range && res.range_unfit[0])
		printf("range unfit     %s\n", res.range_unfit);
	printf("time            %.3f ms at the chip's clock, %.1f images/s\n",
	       res.chip_seconds * 1e3, res.batch / res.chip_seconds);
	printf("MFU             %.2f%% (matmul MACs)\n", 100 * res.mfu);
	printf("compile         %.1f ms%s, %u tiles, fullest tile %u bytes\n",
	       res.compile_ms, res.cached ? " (package from the cache)" : "",
	       res.tiles, res.peak_tile_bytes);
	printf("emulation       %.1f s\n", res.host_seconds);
	if (res.runs > 1)
		printf("loads           %.1f s (the package and every weight "
		       "written again for each of the %d runs)\n",
		       res.load_seconds, res.runs);
	print_scales(&res, stdout);
	if (out)
		printf("wrote           %s\n", out);
	int rc = cli_profile_finish("run siglip", ps, &facts, 0);
	profile_free(ps);
	siglip_result_free(&res);
	free(images);
	free(cache_default);
	return rc;
}

/*
 * graph.c - `ipu bench graph`: a graph (text form) compiled for the chip,
 * run once on the emulator with seeded random inputs, and timed: emulated
 * cycles against the compiler's prediction, MFU of its matmuls, where the
 * cycles go (exchange or compute steps, as predicted). Correctness is the
 * tests' job (test_compile_graph checks every op against an interpreter);
 * this reports speed.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ipu/runtime.h>

#include "../compile/compile.h"
#include "../runner/runner.h"

static uint64_t
next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* n values uniform in [-1, 1). */
static void
random_values(uint64_t *seed, float *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (float)((double)(next(seed) >> 11) * 0x1p-53 * 2 - 1);
}

static int
graph_once(const GraphBenchConfig *cfg, GraphBenchResult *res, Diag *d)
{
	memset(res, 0, sizeof *res);
	const Chip *chip = cfg->chip ? cfg->chip : chip_default();
	Graph *g;
	int r = runner_load_graph(cfg->path, &g, d);
	if (r)
		return r;
	CompileOptions co = {.chip = chip, .tiles = cfg->tiles};
	Package *pk = NULL;
	CompileReport rep;
	r = compile_graph(g, &co, &pk, &rep, d);
	if (r) {
		compile_report_free(&rep);
		graph_free(g);
		return r;
	}
	res->tiles = pk->tiles;
	res->predicted_cycles = rep.predicted_cycles;
	res->compile_ms = rep.compile_ms;
	res->peak_tile_bytes = rep.peak_tile_bytes;
	snprintf(res->plan, sizeof res->plan, "%s", rep.plan);
	compile_report_free(&rep);
	res->flops = (uint64_t)graph_flops(g);
	for (uint32_t i = 0; i < pk->nstep; i++) {
		uint64_t c = pk->step[i].runs * pk->step[i].cycles;
		if (pk->step[i].kind == PKG_STEP_EXCHANGE)
			res->exchange_cycles += c;
		else
			res->compute_cycles += c;
		res->steps++;
	}

	ipu_device *dev = NULL;
	r = runner_open(chip, pk, cfg->threads, NULL, &dev, d); /* takes pk */
	uint64_t seed = cfg->seed;
	for (int32_t id = 0; !r && id < g->ntensors; id++) {
		const Tensor *t = graph_tensor(g, id);
		ipu_tensor_desc desc;
		ipu_error none;
		if (t->producer >= 0 ||
		    ipu_tensor_info(dev, t->name, &desc, &none))
			continue; /* computed, or unused by the program */
		size_t n = (size_t)shape_elems(&t->shape);
		float *v = xmalloc(n * sizeof *v);
		random_values(&seed, v, n);
		r = runner_write(dev, t, v, d);
		free(v);
	}
	if (!r)
		r = runner_run(dev, cfg->max_cycles, res->predicted_cycles,
		               NULL, &res->cycles, &res->host_seconds, d);
	if (!r && res->cycles)
		res->pred_error =
		    (double)res->predicted_cycles / res->cycles - 1;
	res->mfu = runner_mfu(g, chip, res->cycles, &res->macs);
	if (dev)
		ipu_close(dev);
	graph_free(g);
	return r;
}

static int
graph_at(const void *cfg, const Chip *at, uint64_t *cycles, uint64_t *predicted,
         Diag *d)
{
	GraphBenchConfig c = *(const GraphBenchConfig *)cfg;
	c.chip = at;
	c.range = 0;
	GraphBenchResult *x = xmalloc(sizeof *x);
	int r = graph_once(&c, x, d);
	*cycles = x->cycles;
	*predicted = x->predicted_cycles;
	free(x);
	return r;
}

int
bench_graph(const GraphBenchConfig *cfg, GraphBenchResult *res, Diag *d)
{
	int r = graph_once(cfg, res, d);
	if (!r && cfg->range)
		r = bench_range(graph_at, cfg,
		                cfg->chip ? cfg->chip : chip_default(),
		                &res->range, d);
	return r;
}

/*
 * sim_speed.c - how fast the emulator itself runs: the tile-amp f16 or f8
 * program (kernels/amp.S, set up by tile_amp.c's AmpJob) on every tile of the
 * chip model at once, timed on the host, and in the same run the host's own
 * SGEMM rate (host_sgemm.c), so that the cost of emulating the chip's
 * arithmetic can be set against doing that arithmetic natively
 * (docs/bench-sim.md).
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#include "../sim/sim.h"

int
bench_run_chip(ChipSim *cs, const char *what, uint64_t max_cycles,
               double *seconds, Diag *d)
{
	ChipError err;
	uint64_t limit = max_cycles ? max_cycles : BENCH_MAX_CYCLES;
	double t0 = monotonic_seconds();
	RunStatus st = chipsim_run(cs, limit, &err);
	*seconds = monotonic_seconds() - t0;
	if (st == RUN_TIMEOUT)
		return diag_set(d, IPU_EFAULT, what, 0, 0,
		                "stopped at the limit of %llu cycles "
		                "(--max-cycles, default 10^9): %s",
		                (unsigned long long)limit, err.msg);
	return st == RUN_DONE
	           ? IPU_OK
	           : diag_set(d, IPU_EFAULT, what, 0, 0, "%s", err.msg);
}

int
bench_sim_speed(const SimSpeedConfig *cfg, SimSpeedResult *res, Diag *d)
{
	memset(res, 0, sizeof *res);
	TileAmpConfig ac = {.chip = cfg->chip ? cfg->chip : chip_default(),
	                    .dtype = cfg->f8 ? AMP_F8 : AMP_F16,
	                    .rows = cfg->rows,
	                    .seed = 1,
	                    .fp8_scale = BENCH_FP8_SCALE};
	TileAmpResult amp;
	AmpJob *job;
	int rc = amp_job_new(&ac, &job, &amp, d);
	if (rc)
		return rc;
	res->threads = cfg->threads > 0 ? cfg->threads : 1;
	ChipConfig cc = {
	    .chip = ac.chip, .tiles = cfg->tiles, .threads = res->threads};
	ChipSim *cs = chipsim_new(&cc);
	uint32_t T = res->tiles = chipsim_tiles(cs);
	for (uint32_t id = 0; id < T; id++)
		amp_job_load(job, &amp, chipsim_tile(cs, id));

	double cpu0 = process_cpu_seconds();
	rc = bench_run_chip(cs, "kernels/amp.S", cfg->max_cycles,
	                    &res->host_seconds, d);
	res->cpu_seconds = process_cpu_seconds() - cpu0;
	if (rc)
		goto done;
	/* Tile 0 against the f64 reference; the others must match it, as
	 * every tile has the same inputs. */
	amp_job_check(job, chipsim_tile(cs, 0), &amp);
	res->max_rel_err = amp.max_rel_err;
	uint32_t out_bytes, out = amp_job_out(job, &out_bytes);
	uint8_t *other = xmalloc(out_bytes);
	for (uint32_t id = 0; id < T && !rc; id++) {
		Tile *t = chipsim_tile(cs, id);
		tile_read(t, out, other, out_bytes);
		if (memcmp(other, amp.out, out_bytes))
			rc = diag_set(d, IPU_EFAULT, NULL, 0, 0,
			              "tile %u computed other outputs than "
			              "tile 0 from the same inputs",
			              id);
		res->tile_cycles += t->cycle;
		res->bundles += t->bundles;
	}
	free(other);
	if (rc)
		goto done;
	res->cycles = chipsim_cycles(cs);
	double s = res->host_seconds > 0 ? res->host_seconds : 1e-9;
	res->tile_cycles_per_s = (double)res->tile_cycles / s;
	res->thread_ns_per_tile_cycle =
	    1e9 * s * res->threads / (double)res->tile_cycles;
	res->cpu_ns_per_tile_cycle =
	    1e9 * res->cpu_seconds / (double)res->tile_cycles;
	res->bundles_per_s = (double)res->bundles / s;
	res->emulated_gflops = 2.0 * (double)amp.macs * T / s / 1e9;
	res->chip_seconds = (double)res->cycles / ac.chip->clock_hz;
	res->slowdown = res->host_seconds / res->chip_seconds;
	if (cfg->sgemm_n) {
		res->sgemm_threads = res->threads;
		res->sgemm_gflops =
		    bench_host_sgemm(cfg->sgemm_n, res->threads);
		res->sgemm_over_emulated =
		    res->sgemm_gflops / res->emulated_gflops;
	}
done:
	chipsim_free(cs);
	bench_tile_amp_free(&amp);
	amp_job_free(job);
	return rc;
}

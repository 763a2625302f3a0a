/*
 * backend_sim.c - the runtime's emulator backend ("sim:"): a ChipSim of the
 * chosen chip and tile count. It turns the runtime's calls into chip-model
 * calls and the chip's ChipError / Fault into a structured ipu_error.
 */
#include <stdio.h>
#include <string.h>

#include "../sim/sim.h"
#include "../util/util.h"
#include "backend.h"
#include "device.h"
#include "rt_sim.h"

static void *
simbe_open(const RtConfig *cfg, ipu_error *err)
{
	(void)err; /* the emulator cannot fail to open */
	ChipConfig cc = {.chip = cfg->chip,
	                 .tiles = cfg->tiles,
	                 .threads = cfg->threads,
	                 .trace = cfg->trace};
	return chipsim_new(&cc);
}

static void
simbe_close(void *be)
{
	chipsim_free(be);
}

static int
simbe_load(void *be, uint32_t tile, const TileImage *img, ipu_error *err)
{
	Tile *t = chipsim_tile(be, tile);
	for (int i = 0; i < img->nseg; i++)
		if (tile_write(t, img->seg[i].addr, img->seg[i].bytes,
		               img->seg[i].size))
			/* runtime.c checked the segments: our bug */
			die("segment %d outside tile memory", i);
	tile_start(t, img->entry);
	(void)err;
	return 0;
}

static int
simbe_write(void *be, uint32_t tile, uint32_t addr, const void *src,
            uint32_t len, ipu_error *err)
{
	(void)err;
	if (tile_write(chipsim_tile(be, tile), addr, src, len))
		die("write outside tile memory");
	return 0;
}

static int
simbe_read(void *be, uint32_t tile, uint32_t addr, void *dst, uint32_t len,
           ipu_error *err)
{
	(void)err;
	/* Reading must not create a tile: untouched tiles read as zero. */
	const Tile *t = chipsim_tile_if_exists(be, tile);
	if (!t)
		memset(dst, 0, len);
	else if (tile_read(t, addr, dst, len))
		die("read outside tile memory");
	return 0;
}

static int
simbe_stream_write(void *be, uint32_t sync, uint32_t tile, uint32_t addr,
                   const void *src, uint32_t len, ipu_error *err)
{
	if (chipsim_host_write(be, sync, tile, addr, src, len))
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "ipu_stream_write: host sync %u has passed",
		                sync);
	return 0;
}

static int
simbe_stream_read(void *be, uint32_t sync, uint32_t tile, uint32_t addr,
                  void *dst, uint32_t len, ipu_error *err)
{
	if (chipsim_host_read(be, sync, tile, addr, dst, len))
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "ipu_stream_read: host sync %u has passed",
		                sync);
	return 0;
}

/* Fault types whose Fault.addr means something (sim_fault's callers pass 0
 * for the others). */
static int
fault_has_addr(FaultType t)
{
	return t == FAULT_INVALID_ADDR || t == FAULT_INVALID_PC ||
	       t == FAULT_CONFLICT || t == FAULT_MEMERR;
}

static int
simbe_run(void *be, uint64_t max_cycles, ipu_progress_fn progress,
          void *progress_ctx, ipu_error *err)
{
	ChipSim *cs = be;
	ChipError ce;
	chipsim_set_progress(cs, progress, progress_ctx);
	RunStatus st = chipsim_run(cs, max_cycles, &ce);
	if (st == RUN_DONE)
		return 0;
	ipu_error_kind kind;
	switch (st) {
	case RUN_TIMEOUT:
		kind = IPU_ERR_TIMEOUT;
		break;
	case RUN_DEADLOCK:
		kind = IPU_ERR_DEADLOCK;
		break;
	default:
		/* The chip reports exchange errors as faults of the
		 * receiving tile, told apart by their message. */
		kind = strncmp(ce.msg, "exchange:", 9) ? IPU_ERR_FAULT
		                                       : IPU_ERR_EXCHANGE;
		break;
	}
	rt_error(err, kind, "%s", ce.msg);
	err->tile = ce.tile;
	err->cycle = ce.cycle;
	if (ce.ctx >= 0) {
		err->context = ce.ctx;
		err->pc = ce.pc;
	}
	const Tile *t = chipsim_tile_if_exists(cs, ce.tile);
	if (kind == IPU_ERR_FAULT && t && t->faulted) {
		const Fault *f = &t->fault;
		err->context = f->ctx;
		err->pc = f->pc;
		err->cycle = f->cycle;
		err->fault_type = (int)f->type;
		snprintf(err->fault_name, sizeof err->fault_name, "%s",
		         fault_type_name(f->type));
		if (fault_has_addr(f->type))
			err->address = f->addr;
	}
	return kind;
}

static void
simbe_counters(void *be, uint32_t tile, ipu_counters *out)
{
	const Tile *t = chipsim_tile_if_exists(be, tile);
	if (!t)
		return;
	out->cycles = t->cycle;
	out->bundles = t->bundles;
	out->worker_issues = t->worker_issues;
	out->returned = t->ctx[0].state == CTXS_DONE;
	out->exit_status = out->returned ? t->ctx[0].m[0] : 0;
}

static uint64_t
simbe_cycles(void *be)
{
	return chipsim_cycles(be);
}

static uint64_t
simbe_host_cycles(void *be)
{
	return chipsim_host_cycles(be);
}

static int
simbe_write_trace(void *be, const char *path, ipu_error *err)
{
	Diag d;
	diag_clear(&d);
	if (trace_write_json(be, path, 1, &d)) {
		char buf[640];
		diag_format(&d, buf, sizeof buf);
		return rt_error(err, IPU_ERR_IO, "ipu_write_trace: %s", buf);
	}
	return 0;
}

const RtBackend rt_backend_sim = {
    .name = "sim",
    .open = simbe_open,
    .close = simbe_close,
    .load = simbe_load,
    .write = simbe_write,
    .read = simbe_read,
    .stream_write = simbe_stream_write,
    .stream_read = simbe_stream_read,
    .run = simbe_run,
    .counters = simbe_counters,
    .cycles = simbe_cycles,
    .host_cycles = simbe_host_cycles,
    .write_trace = simbe_write_trace,
};

ChipSim *
rt_chipsim(ipu_device *dev)
{
	return dev && dev->ops == &rt_backend_sim ? dev->be : NULL;
}

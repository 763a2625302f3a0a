/*
 * trace.c - the chip's trace as Chrome trace-event JSON (the format Perfetto
 * and chrome://tracing open): one process, one track per tile, complete
 * ("X") events for compute steps, syncs and sends, with times in
 * microseconds at the chip's clock.
 */
#include <stdio.h>

#include "../util/util.h"
#include "sim.h"

static const char *const kind_name[] = {
    [TR_COMPUTE] = "compute",
    [TR_SYNC] = "sync",
    [TR_SEND] = "send",
    [TR_HOST] = "host",
};

int
trace_write_json(const ChipSim *cs, const char *path, int overwrite, Diag *d)
{
	char tmp[4096];
	FILE *f = file_create_temp(path, tmp, sizeof tmp, d);
	if (!f)
		return IPU_EIO;
	const Chip *c = chipsim_chip(cs);
	double us = 1e6 / c->clock_hz;
	fprintf(f,
	        "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"chip\": "
	        "\"%s\", \"clock_hz\": %.0f},\n\"traceEvents\": [\n",
	        c->name, c->clock_hz);
	fprintf(f,
	        "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, "
	        "\"args\": {\"name\": \"%s\"}}",
	        c->name);
	for (uint32_t id = 0; id < chipsim_tiles(cs); id++) {
		const Tile *t = chipsim_tile_if_exists(cs, id);
		if (!t)
			continue;
		fprintf(f,
		        ",\n{\"name\": \"thread_name\", \"ph\": \"M\", "
		        "\"pid\": 0, \"tid\": %u, \"args\": {\"name\": "
		        "\"tile %u\"}}",
		        id, id);
		for (int i = 0; i < t->ntrace; i++) {
			const TraceEvent *e = &t->trace[i];
			fprintf(f,
			        ",\n{\"name\": \"%s\", \"ph\": \"X\", \"pid\": "
			        "0, \"tid\": %u, \"ts\": %.6f, \"dur\": %.6f, "
			        "\"args\": {\"start_cycle\": %llu, "
			        "\"cycles\": %llu, \"arg\": %u}}",
			        kind_name[e->kind], id, (double)e->start * us,
			        (double)(e->end - e->start) * us,
			        (unsigned long long)e->start,
			        (unsigned long long)(e->end - e->start),
			        e->arg);
		}
	}
	fprintf(f, "\n]}\n");
	return file_commit_temp(f, tmp, path, overwrite, d);
}

/*
 * trace.c - trace.json: the run as Chrome trace events (Perfetto and
 * chrome://tracing open it). Process 0 is the chip: one track of step
 * instances (each exchange with its barrier as a nested "sync" slice);
 * process 1 holds one track per lane tile: the step instances as that tile
 * ran them, with its compute (workers running), sync waits and sends
 * nested inside. Times are microseconds at the chip's clock; every event's
 * args give its cycles.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

typedef struct {
	cJSON *ev;
	double us; /* microseconds a cycle */
} Out;

static cJSON *
slice(Out *o, const char *name, const char *cat, int pid, uint32_t tid,
      uint64_t start, uint64_t end)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "name", name);
	cJSON_AddStringToObject(e, "cat", cat);
	cJSON_AddStringToObject(e, "ph", "X");
	cJSON_AddNumberToObject(e, "pid", pid);
	cJSON_AddNumberToObject(e, "tid", tid);
	cJSON_AddNumberToObject(e, "ts", (double)start * o->us);
	cJSON_AddNumberToObject(e, "dur", (double)(end - start) * o->us);
	cJSON *a = cJSON_AddObjectToObject(e, "args");
	cJSON_AddNumberToObject(a, "start_cycle", (double)start);
	cJSON_AddNumberToObject(a, "cycles", (double)(end - start));
	cJSON_AddItemToArray(o->ev, e);
	return a;
}

static void
meta(Out *o, const char *what, int pid, int64_t tid, const char *name)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "name", what);
	cJSON_AddStringToObject(e, "ph", "M");
	cJSON_AddNumberToObject(e, "pid", pid);
	if (tid >= 0)
		cJSON_AddNumberToObject(e, "tid", (double)tid);
	cJSON *a = cJSON_AddObjectToObject(e, "args");
	cJSON_AddStringToObject(a, "name", name);
	cJSON_AddItemToArray(o->ev, e);
}

/* "step 12 gemm: multiply [l0.mlp.fc1.mm]" */
static void
step_name(const cJSON *prof, int s, char *buf, size_t len)
{
	const cJSON *st =
	    cJSON_GetArrayItem(cJSON_GetObjectItem(prof, "steps"), s);
	const cJSON *ops = cJSON_GetObjectItem(prof, "ops");
	size_t at = (size_t)snprintf(
	    buf, len, "%d %s", s,
	    cJSON_GetStringValue(cJSON_GetObjectItem(st, "what")));
	const cJSON *o;
	int first = 1;
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(st, "ops"))
	{
		if (at >= len)
			break;
		const cJSON *op = cJSON_GetArrayItem(ops, (int)o->valuedouble);
		at += (size_t)snprintf(
		    buf + at, len - at, "%s%s", first ? " [" : ", ",
		    cJSON_GetStringValue(cJSON_GetObjectItem(op, "name")));
		first = 0;
	}
	if (!first && at < len)
		snprintf(buf + at, len - at, "]");
}

static void
step_args(const cJSON *prof, cJSON *a, int s, int iter)
{
	const cJSON *st =
	    cJSON_GetArrayItem(cJSON_GetObjectItem(prof, "steps"), s);
	const cJSON *kers = cJSON_GetObjectItem(prof, "kernels");
	cJSON_AddNumberToObject(a, "step", s);
	cJSON_AddNumberToObject(a, "iteration", iter);
	cJSON_AddStringToObject(
	    a, "kind", cJSON_GetStringValue(cJSON_GetObjectItem(st, "kind")));
	cJSON *k = cJSON_AddArrayToObject(a, "kernels");
	const cJSON *o;
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(st, "kernels"))
	{
		const cJSON *ker =
		    cJSON_GetArrayItem(kers, (int)o->valuedouble);
		cJSON_AddItemToArray(k, cJSON_CreateString(cJSON_GetStringValue(
		                            cJSON_GetObjectItem(ker, "name"))));
	}
}

static const char *const ev_name[] = {
    [TR_COMPUTE] = "compute",
    [TR_SYNC] = "sync",
    [TR_SEND] = "send",
    [TR_HOST] = "host",
};

cJSON *
profile_trace(const cJSON *prof, const ProfRun *r, const uint32_t *lanes,
              int nlanes)
{
	const cJSON *run = cJSON_GetObjectItem(prof, "run");
	double hz = cJSON_GetNumberValue(cJSON_GetObjectItem(run, "clock_hz"));
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "displayTimeUnit", "ns");
	cJSON *other = cJSON_AddObjectToObject(root, "otherData");
	cJSON_AddStringToObject(
	    other, "chip",
	    cJSON_GetStringValue(cJSON_GetObjectItem(run, "chip")));
	cJSON_AddNumberToObject(other, "clock_hz", hz);
	cJSON_AddStringToObject(
	    other, "source",
	    cJSON_GetStringValue(cJSON_GetObjectItem(run, "source")));
	Out o = {cJSON_AddArrayToObject(root, "traceEvents"), 1e6 / hz};
	meta(&o, "process_name", 0, -1, "chip");
	meta(&o, "thread_name", 0, 0, "steps");
	meta(&o, "process_name", 1, -1, "tiles");
	/* the chip's instances */
	const cJSON *insts = cJSON_GetObjectItem(prof, "instances");
	int ninst = cJSON_GetArraySize(insts);
	uint32_t *inst_step = xcalloc((size_t)ninst + 1, sizeof *inst_step);
	uint32_t *inst_iter = xcalloc((size_t)ninst + 1, sizeof *inst_iter);
	char name[512];
	int k = 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, insts)
	{
		int s =
		    (int)cJSON_GetNumberValue(cJSON_GetObjectItem(x, "step"));
		int it = (int)cJSON_GetNumberValue(
		    cJSON_GetObjectItem(x, "iteration"));
		uint64_t start = (uint64_t)cJSON_GetNumberValue(
		             cJSON_GetObjectItem(x, "start")),
		         end = (uint64_t)cJSON_GetNumberValue(
		             cJSON_GetObjectItem(x, "end"));
		double rel =
		    cJSON_GetNumberValue(cJSON_GetObjectItem(x, "sync_end"));
		inst_step[k] = (uint32_t)s;
		inst_iter[k++] = (uint32_t)it;
		step_name(prof, s, name, sizeof name);
		cJSON *a = slice(&o, name, "step", 0, 0, start, end);
		step_args(prof, a, s, it);
		cJSON_AddNumberToObject(
		    a, "bytes_sent",
		    cJSON_GetNumberValue(cJSON_GetObjectItem(x, "bytes_sent")));
		if (rel >= (double)start && rel <= (double)end)
			slice(&o, "sync", "sync", 0, 0, start, (uint64_t)rel);
	}
	/* the lanes */
	for (int i = 0; r && i < nlanes; i++) {
		uint32_t t = lanes[i];
		const ProfTile *pt = &r->tile[t];
		char lane[32];
		snprintf(lane, sizeof lane, "tile %u", t);
		meta(&o, "thread_name", 1, t, lane);
		/* its step instances: from each entry to the next */
		for (int j = 0; j < pt->nentry; j++) {
			uint64_t start = pt->entry[j].m.cycle;
			uint64_t end = j + 1 < pt->nentry
			                   ? pt->entry[j + 1].m.cycle
			                   : pt->end;
			uint32_t kk = pt->entry[j].inst;
			if (kk >= (uint32_t)ninst || end <= start)
				continue;
			step_name(prof, (int)inst_step[kk], name, sizeof name);
			cJSON *a = slice(&o, name, "step", 1, t, start, end);
			step_args(prof, a, (int)inst_step[kk],
			          (int)inst_iter[kk]);
		}
		for (int j = 0; j < pt->nev; j++) {
			const TraceEvent *e = &pt->ev[j];
			cJSON *a = slice(&o, ev_name[e->kind], ev_name[e->kind],
			                 1, t, e->start, e->end);
			if (e->kind == TR_SYNC)
				cJSON_AddNumberToObject(a, "zone", e->arg);
			else if (e->kind == TR_SEND)
				cJSON_AddNumberToObject(a, "bytes", e->arg);
		}
	}
	free(inst_step);
	free(inst_iter);
	return root;
}

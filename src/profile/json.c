/*
 * json.c - profile.json (docs/profile.md gives the schema): the run's
 * summary, the program's ops, kernels and steps, every step instance (a
 * loop step once per iteration) with its start and end cycle on the chip,
 * per-tile totals on the chip's floorplan, and memory per tile by
 * category and over the steps.
 *
 * Time on the chip. Tile t enters instance k when its supervisor reaches
 * the start of k's code (or of the first later instance it has code in);
 * it leaves k when it enters k + 1, or when it stops. The chip finishes
 * instance k when its last tile leaves it: E(k) = max over tiles; k spans
 * [E(k - 1), E(k)) with E(-1) = 0 and the last instance ending at the
 * run's end, so the instances' cycles add up to the run's exactly. A tile
 * is busy in k for the cycles it spends in k less those it waits in syncs
 * with other tiles (the barrier before an exchange).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

typedef struct {
	uint32_t step, iter;
} Inst;

/* The program's steps in the order one run runs them: the loop's steps
 * once per iteration. */
static Inst *
instances(const ProfProgram *p, uint32_t *n)
{
	uint32_t len = p->loop_first >= 0
	                   ? (uint32_t)(p->loop_last - p->loop_first + 1)
	                   : 0;
	size_t total = p->nstep + (size_t)len * (p->loop_count - 1);
	if (p->loop_first < 0)
		total = p->nstep;
	Inst *v = xmalloc((total + 1) * sizeof *v);
	uint32_t k = 0;
	for (uint32_t s = 0; s < p->nstep; s++) {
		if (p->loop_first >= 0 && s == (uint32_t)p->loop_first) {
			for (uint32_t it = 0; it < p->loop_count; it++)
				for (uint32_t j = 0; j < len; j++)
					v[k++] = (Inst){s + j, it};
			s = (uint32_t)p->loop_last;
		} else {
			v[k++] = (Inst){s, 0};
		}
	}
	*n = k;
	return v;
}

static cJSON *
num_array(const uint64_t *v, uint32_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (uint32_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
	return a;
}

static cJSON *
u32_array(const uint32_t *v, uint32_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (uint32_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
	return a;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* min / median (the lower middle) / mean / max over n values, with the
 * tile holding the max. */
static cJSON *
summary(const uint64_t *v, uint32_t n)
{
	cJSON *o = cJSON_CreateObject();
	uint64_t *s = xmalloc(((size_t)n + 1) * sizeof *s);
	memcpy(s, v, (size_t)n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_u64);
	uint64_t sum = 0;
	uint32_t at = 0;
	for (uint32_t i = 0; i < n; i++) {
		sum += v[i];
		if (v[i] > v[at])
			at = i;
	}
	cJSON_AddNumberToObject(o, "min", n ? (double)s[0] : 0);
	cJSON_AddNumberToObject(o, "median", n ? (double)s[(n - 1) / 2] : 0);
	cJSON_AddNumberToObject(o, "mean", n ? (double)sum / n : 0);
	cJSON_AddNumberToObject(o, "max", n ? (double)s[n - 1] : 0);
	cJSON_AddNumberToObject(o, "max_tile", at);
	free(s);
	return o;
}

static const char *
kind_name(const ProfProgram *p, const ProfStep *s)
{
	if (s->kind == PROF_STEP_SUPER)
		return "superstep";
	if (!s->nop && p->loop_first >= 0)
		return "loop"; /* the loop's own steps serve no op */
	return s->kind == PKG_STEP_EXCHANGE ? "exchange" : "compute";
}

/* Where a logical tile sits on the die (chip.h, target/route.c): the 16
 * column groups stand 8 on each side of the exchange spine, group g at
 * spine position g on side 0 and 15 - g on side 1; each is 4 tiles wide
 * (the lane bits) and `rows` tall, row 0 next to the spine. x runs along
 * the spine, y across it (side 0 above, one empty row for the spine). */
static void
floorplan(const Chip *c, uint32_t logical, uint32_t *x, uint32_t *y)
{
	uint32_t ph = chip_physical(c, logical);
	uint32_t row = ph >> 6, group = (ph >> 2) & 15, side = group >> 3;
	uint32_t pos = side ? 15 - group : group;
	*x = pos * 4 + (ph & 3);
	*y = side ? c->rows + 1 + row : c->rows - 1 - row;
}

/* The cycle the chip's barrier released in [from, to], from a traced
 * tile's sync events (every tile that syncs is released together), or
 * -1. */
static int64_t
release_in(const ProfTile *t, uint64_t from, uint64_t to, int *cursor)
{
	for (int i = *cursor; t && i < t->nev; i++) {
		const TraceEvent *e = &t->ev[i];
		if (e->kind != TR_SYNC || e->arg == 0)
			continue;
		if (e->end > to)
			return -1;
		*cursor = i + 1;
		if (e->end >= from)
			return (int64_t)e->end;
	}
	return -1;
}

/* The lanes' own timelines: each instance a lane tile ran ([instance,
 * start, end]) and its trace ([kind, start, end, arg]: compute, sync with
 * its zone, send with its bytes; back-to-back sends as one). */
static cJSON *
lane_json(const ProfRun *r, uint32_t K, const uint32_t *lanes, int nlanes)
{
	static const char *const kind[] = {[TR_COMPUTE] = "compute",
	                                   [TR_SYNC] = "sync",
	                                   [TR_SEND] = "send",
	                                   [TR_HOST] = "host"};
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; r && i < nlanes; i++) {
		const ProfTile *pt = &r->tile[lanes[i]];
		cJSON *l = cJSON_CreateObject();
		cJSON_AddNumberToObject(l, "tile", lanes[i]);
		cJSON *st = cJSON_AddArrayToObject(l, "steps");
		for (int j = 0; j < pt->nentry; j++) {
			uint64_t start = pt->entry[j].m.cycle,
			         end = j + 1 < pt->nentry
			                   ? pt->entry[j + 1].m.cycle
			                   : pt->end;
			if (pt->entry[j].inst >= K)
				continue;
			uint64_t v[3] = {pt->entry[j].inst, start, end};
			cJSON_AddItemToArray(st, num_array(v, 3));
		}
		cJSON *ev = cJSON_AddArrayToObject(l, "events");
		for (int j = 0; j < pt->nev; j++) {
			TraceEvent e = pt->ev[j];
			while (e.kind == TR_SEND && j + 1 < pt->nev &&
			       pt->ev[j + 1].kind == TR_SEND &&
			       pt->ev[j + 1].start == e.end) {
				e.end = pt->ev[++j].end;
				e.arg += pt->ev[j].arg;
			}
			cJSON *x = cJSON_CreateArray();
			cJSON_AddItemToArray(x,
			                     cJSON_CreateString(kind[e.kind]));
			cJSON_AddItemToArray(
			    x, cJSON_CreateNumber((double)e.start));
			cJSON_AddItemToArray(x,
			                     cJSON_CreateNumber((double)e.end));
			cJSON_AddItemToArray(x, cJSON_CreateNumber(e.arg));
			cJSON_AddItemToArray(ev, x);
		}
		cJSON_AddItemToArray(a, l);
	}
	return a;
}

typedef struct {
	uint64_t enter;
	SimMark m; /* totals on entering */
} Edge;

cJSON *
profile_json(const ProfProgram *p, const ProfRun *r, const ProfileOptions *o,
             const ProfileFacts *f, const uint32_t *lanes, int nlanes)
{
	const Chip *c = p->chip;
	uint32_t T = p->tiles, S = p->nstep, K;
	Inst *in = instances(p, &K);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "format", "ipu-profile");
	cJSON_AddNumberToObject(root, "version", PROFILE_VERSION);

	/* ---- time: per tile, walk the instances ---- */
	uint64_t *E = xcalloc((size_t)K + 1, sizeof *E);
	uint64_t *ibusy_max = xcalloc((size_t)K + 1, sizeof *ibusy_max);
	uint64_t *ibusy_sum = xcalloc((size_t)K + 1, sizeof *ibusy_sum);
	uint64_t *isent = xcalloc((size_t)K + 1, sizeof *isent);
	uint64_t *sbusy = xcalloc((size_t)S * T + 1, sizeof *sbusy);
	uint64_t *ssent = xcalloc((size_t)S + 1, sizeof *ssent);
	uint64_t *tb = xcalloc(T, sizeof *tb), *tc = xcalloc(T, sizeof *tc),
	         *tw = xcalloc(T, sizeof *tw), *tr = xcalloc(T, sizeof *tr),
	         *ts = xcalloc(T, sizeof *ts), *te = xcalloc(T, sizeof *te);
	uint32_t reached = 0; /* instances some tile entered */
	for (uint32_t t = 0; r && t < T; t++) {
		const ProfTile *pt = &r->tile[t];
		const ProfEntry *en = pt->entry;
		int j = 0, n = pt->nentry;
		Edge prev = {0, {0}}; /* every tile starts at cycle 0 */
		for (uint32_t k = 0; k < K; k++) {
			/* entering k + 1 (or the first later instance the
			 * tile has code in), else its end */
			while (j < n && en[j].inst <= k)
				j++;
			Edge next = j < n ? (Edge){en[j].m.cycle, en[j].m}
			                  : (Edge){pt->end, pt->total};
			uint64_t span = next.enter - prev.enter;
			uint64_t wait = next.m.barrier - prev.m.barrier;
			uint64_t busy = span > wait ? span - wait : 0;
			if (next.enter > E[k])
				E[k] = next.enter;
			if (busy > ibusy_max[k])
				ibusy_max[k] = busy;
			ibusy_sum[k] += busy;
			isent[k] += next.m.sent - prev.m.sent;
			sbusy[(size_t)in[k].step * T + t] += busy;
			ssent[in[k].step] += next.m.sent - prev.m.sent;
			prev = next;
		}
		if (n && en[n - 1].inst + 1 > reached)
			reached = en[n - 1].inst + 1;
		tb[t] = pt->end > pt->total.barrier
		            ? pt->end - pt->total.barrier
		            : 0;
		tc[t] = pt->total.compute;
		tw[t] = pt->total.barrier;
		tr[t] = pt->total.recv;
		ts[t] = pt->total.sent;
		te[t] = pt->end;
	}
	if (r && !strcmp(r->status, "done"))
		reached = K;
	if (reached > K)
		reached = K;
	uint64_t total = r ? r->cycles : 0;
	/* the instances end at the run's end, in order */
	for (uint32_t k = 0; k < reached; k++) {
		if (k && E[k] < E[k - 1])
			E[k] = E[k - 1];
		if (E[k] > total)
			E[k] = total;
	}
	if (reached)
		E[reached - 1] = total;

	/* ---- run ---- */
	cJSON *run = cJSON_AddObjectToObject(root, "run");
	cJSON_AddStringToObject(run, "command", o->command ? o->command : "");
	cJSON_AddStringToObject(run, "source", o->source ? o->source : "");
	cJSON_AddStringToObject(run, "chip", c->name);
	cJSON_AddStringToObject(run, "arch", c->arch_name);
	cJSON_AddStringToObject(run, "timing", c->timing->spec);
	cJSON_AddNumberToObject(run, "clock_hz", c->clock_hz);
	cJSON_AddNumberToObject(run, "chip_tiles", c->tiles);
	cJSON_AddNumberToObject(run, "tiles", T);
	cJSON_AddNumberToObject(run, "tile_bytes", c->mem_end - c->mem_base);
	if (o->dtype)
		cJSON_AddStringToObject(run, "dtype", o->dtype);
	int batch = f && f->batch ? f->batch : o->batch;
	if (batch)
		cJSON_AddNumberToObject(run, "batch", batch);
	cJSON_AddStringToObject(run, "status", r ? r->status : "unfit");
	cJSON_AddStringToObject(run, "message", r ? r->message : "");
	cJSON_AddNumberToObject(run, "cycles", (double)total);
	cJSON_AddNumberToObject(run, "predicted_cycles", (double)p->predicted);
	double secs = (double)total / c->clock_hz;
	cJSON_AddNumberToObject(run, "seconds", secs);
	if (batch && total && r && !strcmp(r->status, "done"))
		cJSON_AddNumberToObject(run, "images_per_second", batch / secs);
	/* the matmuls' time at their peak rate, over the steps (a loop's
	 * each run; the ops of a loop's later iterations have none) */
	double ideal = 0, *sideal = xcalloc((size_t)S + 1, sizeof *sideal);
	uint64_t macs = 0;
	for (uint32_t s = 0; s < S; s++) {
		const ProfStep *st = &p->step[s];
		uint32_t peak = 0; /* the rate of its first op with MACs */
		for (uint32_t k = 0; k < st->nop && !peak; k++)
			if (p->op[st->op[k]].macs)
				peak = p->op[st->op[k]].peak;
		if (peak)
			sideal[s] =
			    (double)st->macs * st->runs / peak / c->tiles;
		ideal += sideal[s];
		macs += st->macs * st->runs;
	}
	cJSON_AddNumberToObject(run, "macs", (double)macs);
	cJSON_AddNumberToObject(run, "mfu", total ? ideal / (double)total : 0);
	cJSON_AddNumberToObject(run, "host_seconds", f ? f->host_seconds : 0);
	if (f)
		cJSON_AddNumberToObject(run, "compile_seconds",
		                        f->compile_seconds);

	/* ---- ops, kernels ---- */
	cJSON *ops = cJSON_AddArrayToObject(root, "ops");
	for (uint32_t i = 0; i < p->nop; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", p->op[i].name);
		cJSON_AddStringToObject(x, "kind", p->op[i].kind);
		cJSON_AddNumberToObject(x, "macs", (double)p->op[i].macs);
		cJSON_AddNumberToObject(x, "peak_macs", p->op[i].peak);
		cJSON_AddItemToArray(ops, x);
	}
	cJSON *kers = cJSON_AddArrayToObject(root, "kernels");
	for (uint32_t i = 0; i < p->nkernel; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", p->kernel[i].name);
		cJSON_AddNumberToObject(x, "entry", p->kernel[i].entry);
		cJSON_AddNumberToObject(x, "calls", p->kernel[i].calls);
		cJSON_AddItemToArray(kers, x);
	}

	/* ---- instances (and each step's sums) ---- */
	uint64_t *scyc = xcalloc((size_t)S + 1, sizeof *scyc);
	uint64_t *ssync = xcalloc((size_t)S + 1, sizeof *ssync);
	const ProfTile *t0 = r && T ? &r->tile[0] : NULL;
	int cursor = 0;
	cJSON *insts = cJSON_AddArrayToObject(root, "instances");
	for (uint32_t k = 0; k < reached; k++) {
		uint64_t start = k ? E[k - 1] : 0, end = E[k];
		const ProfStep *st = &p->step[in[k].step];
		int64_t rel = -1;
		if (st->kind == PKG_STEP_EXCHANGE)
			rel = release_in(t0, start, end, &cursor);
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "step", in[k].step);
		cJSON_AddNumberToObject(x, "iteration", in[k].iter);
		cJSON_AddNumberToObject(x, "start", (double)start);
		cJSON_AddNumberToObject(x, "end", (double)end);
		cJSON_AddNumberToObject(x, "sync_end", (double)rel);
		cJSON_AddNumberToObject(x, "busy_max", (double)ibusy_max[k]);
		cJSON_AddNumberToObject(x, "busy_mean",
		                        T ? (double)ibusy_sum[k] / T : 0);
		cJSON_AddNumberToObject(x, "bytes_sent", (double)isent[k]);
		cJSON_AddItemToArray(insts, x);
		scyc[in[k].step] += end - start;
		if (rel >= 0)
			ssync[in[k].step] += (uint64_t)rel - start;
	}
	cJSON *steps = cJSON_AddArrayToObject(root, "steps");
	uint64_t *col = xmalloc(((size_t)T + 1) * sizeof *col);
	for (uint32_t s = 0; s < S; s++) {
		const ProfStep *st = &p->step[s];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "index", s);
		cJSON_AddStringToObject(x, "kind", kind_name(p, st));
		cJSON_AddStringToObject(x, "what", st->what);
		cJSON_AddItemToObject(x, "ops", u32_array(st->op, st->nop));
		cJSON_AddItemToObject(x, "kernels",
		                      u32_array(st->kernel, st->nkernel));
		cJSON_AddNumberToObject(x, "runs", st->runs);
		cJSON_AddNumberToObject(x, "predicted_cycles",
		                        (double)st->predicted);
		cJSON_AddNumberToObject(x, "predicted_overhead",
		                        (double)st->overhead);
		cJSON_AddNumberToObject(x, "macs", (double)st->macs);
		cJSON_AddNumberToObject(x, "ideal_cycles", sideal[s]);
		cJSON_AddNumberToObject(x, "cycles", (double)scyc[s]);
		cJSON_AddNumberToObject(x, "sync_cycles", (double)ssync[s]);
		cJSON_AddNumberToObject(x, "bytes_sent", (double)ssent[s]);
		for (uint32_t t = 0; t < T; t++)
			col[t] = sbusy[(size_t)s * T + t];
		cJSON_AddItemToObject(x, "busy", summary(col, T));
		cJSON_AddItemToArray(steps, x);
	}

	/* ---- tiles ---- */
	cJSON *tiles = cJSON_AddObjectToObject(root, "tiles");
	uint32_t *fx = xmalloc(((size_t)T + 1) * sizeof *fx),
	         *fy = xmalloc(((size_t)T + 1) * sizeof *fy),
	         *ph = xmalloc(((size_t)T + 1) * sizeof *ph);
	for (uint32_t t = 0; t < T; t++) {
		floorplan(c, t, &fx[t], &fy[t]);
		ph[t] = chip_physical(c, t);
	}
	cJSON *fp = cJSON_AddObjectToObject(tiles, "floorplan");
	cJSON_AddNumberToObject(fp, "width", 32);
	cJSON_AddNumberToObject(fp, "height", 2 * c->rows + 1);
	cJSON_AddNumberToObject(fp, "spine_row", c->rows);
	cJSON_AddItemToObject(tiles, "physical", u32_array(ph, T));
	cJSON_AddItemToObject(tiles, "x", u32_array(fx, T));
	cJSON_AddItemToObject(tiles, "y", u32_array(fy, T));
	cJSON_AddItemToObject(tiles, "cycles", num_array(te, T));
	cJSON_AddItemToObject(tiles, "busy", num_array(tb, T));
	cJSON_AddItemToObject(tiles, "compute", num_array(tc, T));
	cJSON_AddItemToObject(tiles, "barrier_wait", num_array(tw, T));
	cJSON_AddItemToObject(tiles, "recv_wait", num_array(tr, T));
	cJSON_AddItemToObject(tiles, "bytes_sent", num_array(ts, T));
	cJSON *sb = cJSON_AddArrayToObject(tiles, "step_busy");
	for (uint32_t s = 0; s < S; s++)
		cJSON_AddItemToArray(sb, num_array(sbusy + (size_t)s * T, T));
	cJSON_AddItemToObject(tiles, "lanes", lane_json(r, K, lanes, nlanes));
	free(fx);
	free(fy);
	free(ph);

	/* ---- memory ---- */
	cJSON *mem = cJSON_AddObjectToObject(root, "memory");
	uint32_t tile_bytes = c->mem_end - c->mem_base;
	cJSON *cats = cJSON_AddArrayToObject(mem, "categories");
	for (int m = 0; m < PM_COUNT; m++)
		cJSON_AddItemToArray(
		    cats, cJSON_CreateString(profile_mem_name((ProfMem)m)));
	/* live data bytes per step and tile, by category at each tile's
	 * peak step */
	uint64_t *live = xcalloc((size_t)S * T + 1, sizeof *live);
	for (uint32_t i = 0; i < p->nbuf; i++) {
		const ProfBuf *b = &p->buf[i];
		uint32_t last = b->last == PKG_TO_END || b->last >= S
		                    ? (S ? S - 1 : 0)
		                    : b->last;
		for (uint32_t s = b->first; S && s <= last; s++)
			live[(size_t)s * T + b->tile] += b->bytes;
	}
	uint32_t *peak_step = xcalloc((size_t)T + 1, sizeof *peak_step);
	uint64_t *peak = xcalloc((size_t)T + 1, sizeof *peak);
	for (uint32_t t = 0; t < T; t++)
		for (uint32_t s = 0; s < S; s++)
			if (live[(size_t)s * T + t] > peak[t]) {
				peak[t] = live[(size_t)s * T + t];
				peak_step[t] = s;
			}
	uint64_t *bycat = xcalloc((size_t)PM_COUNT * T + 1, sizeof *bycat);
	for (uint32_t t = 0; t < T; t++) {
		bycat[PM_CODE * T + t] = p->code[t] - p->xcode[t];
		bycat[PM_XCODE * T + t] = p->xcode[t];
	}
	for (uint32_t i = 0; i < p->nbuf; i++) {
		const ProfBuf *b = &p->buf[i];
		uint32_t s = peak_step[b->tile];
		if (b->first > s || (b->last != PKG_TO_END && b->last < s))
			continue;
		static const ProfMem of[PKG_MEM_COUNT] = {
		    [PKG_MEM_ACTIVATIONS] = PM_ACTS,
		    [PKG_MEM_WEIGHTS] = PM_WEIGHTS,
		    [PKG_MEM_ARGUMENTS] = PM_ARGS,
		    [PKG_MEM_STACK] = PM_STACK};
		bycat[of[b->category] * T + b->tile] += b->bytes;
	}
	for (uint32_t t = 0; t < T; t++) {
		uint64_t used = p->code[t] + peak[t];
		bycat[PM_FREE * T + t] =
		    used < tile_bytes ? tile_bytes - used : 0;
	}
	cJSON *pt = cJSON_AddObjectToObject(mem, "per_tile");
	for (int m = 0; m < PM_COUNT; m++)
		cJSON_AddItemToObject(pt, profile_mem_name((ProfMem)m),
		                      num_array(bycat + (size_t)m * T, T));
	cJSON_AddItemToObject(mem, "peak", num_array(peak, T));
	cJSON_AddItemToObject(mem, "peak_step", u32_array(peak_step, T));
	cJSON *lv = cJSON_AddArrayToObject(mem, "live");
	for (uint32_t s = 0; s < S; s++)
		cJSON_AddItemToArray(lv, num_array(live + (size_t)s * T, T));
	/* the fullest tiles: code + data at their peak */
	cJSON *full = cJSON_AddArrayToObject(mem, "fullest");
	uint64_t *used = xmalloc(((size_t)T + 1) * sizeof *used);
	for (uint32_t t = 0; t < T; t++)
		used[t] = p->code[t] + peak[t];
	for (int n = 0; n < 8 && n < (int)T; n++) {
		uint32_t best = 0;
		for (uint32_t t = 1; t < T; t++)
			if (used[t] > used[best])
				best = t;
		if (used[best] == 0 && n)
			break;
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "tile", best);
		cJSON_AddNumberToObject(x, "bytes", (double)used[best]);
		cJSON_AddNumberToObject(x, "step", peak_step[best]);
		cJSON_AddNumberToObject(
		    x, "free",
		    used[best] < tile_bytes
		        ? (double)(tile_bytes - used[best])
		        : -(double)(used[best] - tile_bytes));
		cJSON_AddItemToArray(full, x);
		used[best] = 0;
	}
	free(used);
	free(live);
	free(peak_step);
	free(peak);
	free(bycat);
	free(col);
	free(sideal);
	free(scyc);
	free(ssync);
	free(E);
	free(ibusy_max);
	free(ibusy_sum);
	free(isent);
	free(sbusy);
	free(ssent);
	free(tb);
	free(tc);
	free(tw);
	free(tr);
	free(ts);
	free(te);
	free(in);
	return root;
}

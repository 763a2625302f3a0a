/*
 * session.c - a profile session (profile.h): the observer of a run (marks
 * at every step's code on every tile, the full trace of a few tiles,
 * breakpoints and watches), what it collects when the run ends, and the
 * files it writes.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../rt/rt_sim.h"
#include "profile.h"

struct ProfileSession {
	ProfileOptions o;
	RunnerObserver obs;
	ProfProgram *prog;
	ProfRun *run;
	uint32_t *lanes;
	int nlanes;
	int asked_stop;  /* the run stopped at a break or watch */
	char *stop_text; /* where the tiles stopped, when the run did */
	char *unfit;     /* placement's lines for a program that does not fit */
	int written;     /* profile_finish wrote the files */
};

static char *
dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* ---- lanes ------------------------------------------------------------- */

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* "0,5,100-103" into sorted distinct tiles below `tiles`; 0 or -1 with d
 * naming the bad part. NULL spec: tile 0, the last tile and four between
 * them. */
static int
parse_lanes(const char *spec, uint32_t tiles, uint32_t **out, int *n, Diag *d)
{
	uint32_t *v = NULL;
	int cap = 0, k = 0;
	if (!spec) {
		uint32_t pick[] = {0,
		                   1,
		                   tiles / 4,
		                   tiles / 2,
		                   3 * tiles / 4,
		                   tiles ? tiles - 1 : 0};
		for (size_t i = 0; i < sizeof pick / sizeof *pick; i++) {
			GROW(v, k, cap);
			v[k++] = pick[i] < tiles ? pick[i] : 0;
		}
	}
	for (const char *p = spec; p && *p;) {
		char *end;
		errno = 0;
		unsigned long a = strtoul(p, &end, 10), b = a;
		if (end == p || errno)
			goto bad;
		if (*end == '-') {
			const char *q = end + 1;
			b = strtoul(q, &end, 10);
			if (end == q || errno || b < a)
				goto bad;
		}
		if (b >= tiles || b - a >= 4096)
			goto bad;
		for (unsigned long t = a; t <= b; t++) {
			GROW(v, k, cap);
			v[k++] = (uint32_t)t;
		}
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	qsort(v, (size_t)k, sizeof *v, cmp_u32);
	int m = 0;
	for (int i = 0; i < k; i++)
		if (!m || v[i] != v[m - 1])
			v[m++] = v[i];
	*out = v;
	*n = m;
	return 0;
bad:
	free(v);
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "--profile-tiles %s: want tiles like 0,5,100-103 "
	                "below %u (at most 4096 in a range)",
	                spec, tiles);
}

/* ---- marks and entries ------------------------------------------------- */

static uint32_t
inst_of(const ProfProgram *p, uint32_t s, uint32_t it)
{
	if (p->loop_first < 0 || s < (uint32_t)p->loop_first)
		return s;
	uint32_t len = (uint32_t)(p->loop_last - p->loop_first + 1);
	if (s <= (uint32_t)p->loop_last)
		return s + it * len;
	return s + (p->loop_count - 1) * len;
}

static int
in_loop(const ProfProgram *p, int32_t s)
{
	return p->loop_first >= 0 && s >= p->loop_first && s <= p->loop_last;
}

/* Tile t's marks as step instances: the step whose code starts at each
 * mark's pc, the loop's iteration counted by its jumps back. */
static void
tile_entries(const ProfProgram *p, uint32_t t, const SimMark *mk, int n,
             ProfTile *pt)
{
	const uint32_t *at = p->step_pc + (size_t)t * (p->nstep + 1);
	pt->entry = xcalloc((size_t)n + 1, sizeof *pt->entry);
	uint32_t it = 0;
	int32_t prev = -1;
	for (int i = 0; i < n; i++) {
		int32_t s = pkg_step_in(at, p->nstep, mk[i].pc);
		if (s < 0)
			continue; /* the epilogue */
		if (in_loop(p, s) && in_loop(p, prev) && s <= prev)
			it++;
		prev = s;
		uint32_t k = inst_of(p, (uint32_t)s, it);
		if (pt->nentry && k <= pt->entry[pt->nentry - 1].inst)
			continue; /* cannot happen: the program runs forward */
		pt->entry[pt->nentry++] = (ProfEntry){k, mk[i]};
	}
}

/* ---- the observer --------------------------------------------------------
 */

static int
arm_tiles(ProfileSession *s, ChipSim *cs, Diag *d)
{
	const ProfProgram *p = s->prog;
	const ProfileOptions *o = &s->o;
	if (o->break_step >= (int64_t)p->nstep)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "--break %" PRId64
		                ": the program has steps 0..%u",
		                o->break_step, p->nstep ? p->nstep - 1 : 0);
	if (o->break_step >= 0 && o->break_iter &&
	    o->break_iter >= p->step[o->break_step].runs)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "--break %" PRId64 "@%u: step %" PRId64
		                " runs %u time%s",
		                o->break_step, o->break_iter, o->break_step,
		                p->step[o->break_step].runs,
		                p->step[o->break_step].runs == 1 ? "" : "s");
	if (o->watch_len && o->watch_tile >= p->tiles)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "--watch: tile %u is not one of the %u tiles "
		                "the program uses",
		                o->watch_tile, p->tiles);
	for (uint32_t t = 0; t < p->tiles; t++) {
		Tile *tl = chipsim_tile_if_exists(cs, t);
		if (!tl)
			continue;
		const uint32_t *at =
		    p->step_pc ? p->step_pc + (size_t)t * (p->nstep + 1) : NULL;
		/* always: a run that stops is then reported with the step
		 * and iteration each tile is in */
		for (uint32_t k = 0; at && k <= p->nstep; k++)
			sim_mark(tl, at[k], SIM_MARK_LOG);
		if (o->break_step >= 0 && at) {
			sim_mark(tl, at[o->break_step], SIM_MARK_BREAK);
			sim_observe(tl)->break_skip = o->break_iter;
		}
		if (o->break_pc >= 0 &&
		    sim_mark(tl, (uint32_t)o->break_pc, SIM_MARK_BREAK))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "--break 0x%" PRIx64
			                ": not a word of executable memory "
			                "(0x%05x..0x%05x)",
			                o->break_pc, p->chip->mem_base,
			                p->chip->exec_end);
		if (o->watch_len && t == o->watch_tile &&
		    sim_watch(tl, o->watch_addr, o->watch_len))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "--watch %u:0x%x:%u is outside tile "
			                "memory 0x%05x..0x%05x",
			                o->watch_tile, o->watch_addr,
			                o->watch_len, p->chip->mem_base,
			                p->chip->mem_end);
	}
	/* the lanes' full traces; tile 0's also gives the barriers */
	if (o->dir) {
		int e =
		    parse_lanes(o->lanes, p->tiles, &s->lanes, &s->nlanes, d);
		if (e)
			return e;
		for (int i = 0; i < s->nlanes; i++) {
			Tile *tl = chipsim_tile_if_exists(cs, s->lanes[i]);
			if (tl)
				tl->trace_on = 1;
		}
		Tile *t0 = chipsim_tile_if_exists(cs, 0);
		if (t0)
			t0->trace_on = 1;
	}
	return IPU_OK;
}

static int
on_loaded(void *ctx, ipu_device *dev, const Package *pk, Diag *d)
{
	ProfileSession *s = ctx;
	ChipSim *cs = rt_chipsim(dev);
	const ProfileOptions *o = &s->o;
	int asked = o->dir || o->break_step >= 0 || o->break_pc >= 0 ||
	            o->watch_len || o->show_tile >= 0 || o->ndump;
	if (!cs && !asked)
		return IPU_OK; /* another device: nothing to observe */
	if (!cs)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "profiles and breakpoints (--profile, --break, "
		                "--watch, --show-tile, --dump-mem) need the "
		                "emulator (--device sim)");
	profile_program_free(s->prog);
	s->prog = profile_program(pk);
	return arm_tiles(s, cs, d);
}

static const char *
status_of(ipu_error_kind kind, int fault_type)
{
	switch (kind) {
	case IPU_ERR_NONE:
		return "done";
	case IPU_ERR_FAULT:
		return fault_type == FAULT_IBRK   ? "break"
		       : fault_type == FAULT_DBRK ? "watch"
		                                  : "fault";
	case IPU_ERR_EXCHANGE:
		return "exchange";
	case IPU_ERR_DEADLOCK:
		return "deadlock";
	case IPU_ERR_TIMEOUT:
		return "timeout";
	default:
		return "error";
	}
}

static int
is_lane(const ProfileSession *s, uint32_t t)
{
	for (int i = 0; i < s->nlanes; i++)
		if (s->lanes[i] == t)
			return 1;
	return t == 0;
}

/* A run of the program's tiles, each with nothing seen yet. */
static ProfRun *
run_new(const ProfProgram *p)
{
	ProfRun *r = xcalloc(1, sizeof *r);
	r->tile = xcalloc((size_t)p->tiles + 1, sizeof *r->tile);
	return r;
}

/* Tile t of the chip, with its end and where it stopped noted in pt; NULL
 * if the chip never made it. */
static Tile *
run_tile(ChipSim *cs, uint32_t t, ProfTile *pt)
{
	Tile *tl = chipsim_tile_if_exists(cs, t);
	if (tl) {
		pt->end = tl->cycle;
		sim_tile_status(tl, &pt->at);
	}
	return tl;
}

/* Take what the tiles saw (the logs move into the run). */
static ProfRun *
collect(ProfileSession *s, ChipSim *cs)
{
	const ProfProgram *p = s->prog;
	ProfRun *r = run_new(p);
	for (uint32_t t = 0; t < p->tiles; t++) {
		ProfTile *pt = &r->tile[t];
		Tile *tl = run_tile(cs, t, pt);
		if (!tl)
			continue;
		if (tl->obs) {
			pt->total = tl->obs->total;
			if (p->step_pc)
				tile_entries(p, t, tl->obs->log, tl->obs->nlog,
				             pt);
		}
		if (is_lane(s, t)) {
			pt->ev = tl->trace;
			pt->nev = tl->ntrace;
			tl->trace = NULL;
			tl->ntrace = tl->captrace = 0;
		}
		if (pt->end > r->cycles)
			r->cycles = pt->end;
	}
	return r;
}

static int
asked(const ProfileOptions *o, const char *status)
{
	return (!strcmp(status, "break") &&
	        (o->break_step >= 0 || o->break_pc >= 0)) ||
	       (!strcmp(status, "watch") && o->watch_len);
}

/* Where the tiles stand, and for a stop the user asked for, the state of
 * the tile to show; into s->stop_text. */
static void
describe_stop(ProfileSession *s, ChipSim *cs, uint32_t first)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	char buf[8192];
	profile_explain(s->prog, s->run, buf, sizeof buf);
	fputs(buf, f);
	if (s->asked_stop) {
		uint32_t t =
		    s->o.show_tile >= 0 ? (uint32_t)s->o.show_tile : first;
		profile_show_tile(cs, t, s->prog, &s->o, f);
	}
	fclose(f);
	free(s->stop_text);
	s->stop_text = text;
}

static void
on_ran(void *ctx, ipu_device *dev, int rc, const ipu_error *err, Diag *d)
{
	ProfileSession *s = ctx;
	ChipSim *cs = rt_chipsim(dev);
	if (!cs || !s->prog)
		return;
	s->run = collect(s, cs);
	s->run->status = status_of(err->kind, err->fault_type);
	if (!rc)
		s->run->cycles = ipu_cycles(dev);
	snprintf(s->run->message, sizeof s->run->message, "%s",
	         rc ? d->msg : "");
	s->asked_stop = rc && asked(&s->o, s->run->status);
	if (rc)
		describe_stop(s, cs, err->tile != IPU_UNKNOWN ? err->tile : 0);
}

static void
on_unfit(void *ctx, const CompileReport *rep)
{
	ProfileSession *s = ctx;
	profile_program_free(s->prog);
	s->prog = profile_program(rep->layout);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	for (int i = 0; i < rep->place.nover; i++) {
		char line[1024];
		place_overflow_format(&rep->place, &rep->place.over[i], line,
		                      sizeof line);
		fprintf(f, "%s\n", line);
	}
	fclose(f);
	free(s->unfit);
	s->unfit = text;
}

ProfileSession *
profile_new(const ProfileOptions *o)
{
	ProfileSession *s = xcalloc(1, sizeof *s);
	s->o = *o;
	s->o.dir = dup_or_null(o->dir);
	s->o.lanes = dup_or_null(o->lanes);
	s->o.command = dup_or_null(o->command);
	s->o.source = dup_or_null(o->source);
	s->o.dtype = dup_or_null(o->dtype);
	s->obs = (RunnerObserver){
	    .loaded = on_loaded, .ran = on_ran, .unfit = on_unfit, .ctx = s};
	return s;
}

static void
run_free(ProfRun *r, uint32_t tiles)
{
	if (!r)
		return;
	for (uint32_t t = 0; t < tiles; t++) {
		free(r->tile[t].entry);
		free(r->tile[t].ev);
	}
	free(r->tile);
	free(r);
}

void
profile_free(ProfileSession *s)
{
	if (!s)
		return;
	run_free(s->run, s->prog ? s->prog->tiles : 0);
	profile_program_free(s->prog);
	free((char *)s->o.dir);
	free((char *)s->o.lanes);
	free((char *)s->o.command);
	free((char *)s->o.source);
	free((char *)s->o.dtype);
	free(s->lanes);
	free(s->stop_text);
	free(s->unfit);
	free(s);
}

const RunnerObserver *
profile_observer(ProfileSession *s)
{
	return &s->obs;
}

int
profile_stopped_as_asked(const ProfileSession *s)
{
	return s->asked_stop;
}

const char *
profile_stop_text(const ProfileSession *s)
{
	return s->stop_text;
}

const char *
profile_dir(const ProfileSession *s)
{
	return s->written ? s->o.dir : NULL;
}

/* ---- ipu sim ------------------------------------------------------------
 */

int
profile_sim_arm(ProfileSession *s, ChipSim *cs, uint32_t tiles,
                const TileImage *img, Diag *d)
{
	ProfProgram *p = xcalloc(1, sizeof *p);
	p->chip = chipsim_chip(cs);
	p->tiles = tiles;
	p->loop_first = p->loop_last = -1;
	p->code = xcalloc(tiles, sizeof *p->code);
	p->xcode = xcalloc(tiles, sizeof *p->xcode);
	p->step = xcalloc(1, sizeof *p->step);
	p->op = xcalloc(1, sizeof *p->op);
	p->kernel = xcalloc(1, sizeof *p->kernel);
	/* memory: the image's code and data on every tile, live throughout */
	p->buf = xcalloc((size_t)tiles * (size_t)img->nseg + 1, sizeof *p->buf);
	for (uint32_t t = 0; t < tiles; t++)
		for (int i = 0; i < img->nseg; i++) {
			const TileSegment *g = &img->seg[i];
			if (g->exec) {
				uint32_t end =
				    g->addr + g->size - p->chip->mem_base;
				if (end > p->code[t])
					p->code[t] = end;
			} else if (g->size) {
				p->buf[p->nbuf++] =
				    (ProfBuf){t, g->size, 0, PKG_TO_END,
				              PKG_MEM_ACTIVATIONS};
			}
		}
	profile_program_free(s->prog);
	s->prog = p;
	int e = arm_tiles(s, cs, d);
	/* supersteps come from the syncs: every tile's trace */
	for (uint32_t t = 0; !e && s->o.dir && t < tiles; t++) {
		Tile *tl = chipsim_tile_if_exists(cs, t);
		if (tl)
			tl->trace_on = 1;
	}
	return e;
}

/* The barrier releases of a run: the end of every sync a tile waited in
 * with others (the same cycle on every tile that took part). */
static uint64_t *
releases(ChipSim *cs, uint32_t tiles, uint32_t *n, int **zone)
{
	uint64_t *v = NULL;
	int *z = NULL;
	int cap = 0, zc = 0, k = 0;
	for (uint32_t t = 0; t < tiles; t++) {
		const Tile *tl = chipsim_tile_if_exists(cs, t);
		for (int i = 0; tl && i < tl->ntrace; i++) {
			const TraceEvent *e = &tl->trace[i];
			if (e->kind != TR_SYNC || e->arg == 0)
				continue;
			int seen = 0;
			for (int j = 0; j < k && !seen; j++)
				seen = v[j] == e->end;
			if (seen)
				continue;
			GROW(v, k, cap);
			int kz = k;
			GROW(z, kz, zc);
			v[k] = e->end;
			z[k++] = (int)e->arg;
		}
	}
	/* in time order (insertion: there are few) */
	for (int i = 1; i < k; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			uint64_t tv = v[j];
			v[j] = v[j - 1];
			v[j - 1] = tv;
			int tz = z[j];
			z[j] = z[j - 1];
			z[j - 1] = tz;
		}
	*n = (uint32_t)k;
	*zone = z;
	return v;
}

/* Totals of a tile's events up to (and at) cycle c. */
static SimMark
totals_at(const Tile *tl, uint64_t c)
{
	SimMark m = {.cycle = c};
	for (int i = 0; i < tl->ntrace; i++) {
		const TraceEvent *e = &tl->trace[i];
		if (e->end > c)
			continue;
		if (e->kind == TR_COMPUTE)
			m.compute += e->end - e->start;
		else if (e->kind == TR_SYNC)
			*(e->arg ? &m.barrier : &m.recv) += e->end - e->start;
		else if (e->kind == TR_SEND)
			m.sent += e->arg;
	}
	return m;
}

void
profile_sim_ran(ProfileSession *s, ChipSim *cs, RunStatus st,
                const ChipError *err)
{
	ProfProgram *p = s->prog;
	if (!p)
		return;
	uint32_t nrel;
	int *zone;
	uint64_t *rel = releases(cs, p->tiles, &nrel, &zone);
	/* the supersteps: between barrier releases (known from the tiles'
	 * traces, recorded for a profile only) */
	p->nstep = s->o.dir ? nrel + 1 : 0;
	free(p->step);
	p->step = xcalloc(p->nstep, sizeof *p->step);
	for (uint32_t k = 0; k < p->nstep; k++) {
		char what[96];
		if (k < nrel)
			snprintf(what, sizeof what,
			         "superstep %u (to sync %d at cycle %" PRIu64
			         ")",
			         k, zone[k], rel[k]);
		else
			snprintf(what, sizeof what, "superstep %u (to the end)",
			         k);
		p->step[k] = (ProfStep){.kind = PROF_STEP_SUPER,
		                        .what = xstrdup(what),
		                        .runs = 1,
		                        .op = xcalloc(1, sizeof(uint32_t)),
		                        .kernel = xcalloc(1, sizeof(uint32_t))};
	}
	ProfRun *r = run_new(p);
	for (uint32_t t = 0; t < p->tiles; t++) {
		ProfTile *pt = &r->tile[t];
		Tile *tl = run_tile(cs, t, pt);
		if (!tl)
			continue;
		pt->total = totals_at(tl, UINT64_MAX);
		pt->entry = xcalloc((size_t)nrel + 1, sizeof *pt->entry);
		for (uint32_t k = 0; k + 1 < p->nstep; k++)
			for (int i = 0; i < tl->ntrace; i++)
				if (tl->trace[i].kind == TR_SYNC &&
				    tl->trace[i].arg &&
				    tl->trace[i].end == rel[k]) {
					pt->entry[pt->nentry++] = (ProfEntry){
					    k + 1, totals_at(tl, rel[k])};
					break;
				}
		if (is_lane(s, t) && tl->ntrace) { /* --trace writes them too */
			pt->nev = tl->ntrace;
			pt->ev = xmalloc((size_t)pt->nev * sizeof *pt->ev);
			memcpy(pt->ev, tl->trace,
			       (size_t)pt->nev * sizeof *pt->ev);
		}
		if (pt->end > r->cycles)
			r->cycles = pt->end;
	}
	free(rel);
	free(zone);
	static const char *const names[] = {
	    [RUN_DONE] = "done",         [RUN_FAULT] = "fault",
	    [RUN_TIMEOUT] = "timeout",   [RUN_SYNC] = "sync",
	    [RUN_DEADLOCK] = "deadlock", [RUN_HOST] = "host",
	};
	r->status = names[st];
	if (st == RUN_FAULT && err->tile < p->tiles) {
		const Tile *tl = chipsim_tile_if_exists(cs, err->tile);
		if (tl && tl->fault.type == FAULT_IBRK)
			r->status = "break";
		else if (tl && tl->fault.type == FAULT_DBRK)
			r->status = "watch";
	}
	if (st == RUN_DONE)
		r->cycles = chipsim_cycles(cs);
	snprintf(r->message, sizeof r->message, "%s",
	         st == RUN_DONE ? "" : err->msg);
	run_free(s->run, p->tiles);
	s->run = r;
	s->asked_stop = st != RUN_DONE && asked(&s->o, r->status);
	if (st != RUN_DONE)
		describe_stop(s, cs, err->tile < p->tiles ? err->tile : 0);
}

/* ---- the files ------------------------------------------------------------
 */

static int
write_json(const char *path, const cJSON *j, int force, Diag *d)
{
	char *text = cJSON_PrintUnformatted(j);
	if (!text)
		return diag_set(d, IPU_EIO, path, 0, 0, "out of memory");
	char tmp[4200];
	FILE *f = file_create_temp(path, tmp, sizeof tmp, d);
	int e = IPU_EIO;
	if (f) {
		fputs(text, f);
		fputc('\n', f);
		e = file_commit_temp(f, tmp, path, force, d);
	}
	free(text);
	return e;
}

int
profile_finish(ProfileSession *s, const ProfileFacts *facts, Diag *d)
{
	const ProfileOptions *o = &s->o;
	if (!o->dir || !s->prog)
		return IPU_OK;
	if (mkdir(o->dir, 0777) && errno != EEXIST)
		return diag_set(d, IPU_EIO, o->dir, 0, 0,
		                "cannot make the profile's folder: %s",
		                strerror(errno));
	if (!s->lanes)
		parse_lanes(NULL, s->prog->tiles, &s->lanes, &s->nlanes, d);
	cJSON *prof =
	    profile_json(s->prog, s->run, o, facts, s->lanes, s->nlanes);
	if (s->unfit) {
		cJSON *run = cJSON_GetObjectItem(prof, "run");
		cJSON_ReplaceItemInObject(run, "message",
		                          cJSON_CreateString(s->unfit));
	}
	char path[4200];
	snprintf(path, sizeof path, "%s/profile.json", o->dir);
	int e = write_json(path, prof, o->force, d);
	if (!e) {
		cJSON *tr = profile_trace(prof, s->run, s->lanes, s->nlanes);
		snprintf(path, sizeof path, "%s/trace.json", o->dir);
		e = write_json(path, tr, o->force, d);
		cJSON_Delete(tr);
	}
	if (!e) {
		char *text = cJSON_PrintUnformatted(prof);
		char tmp[4200];
		snprintf(path, sizeof path, "%s/report.html", o->dir);
		FILE *f = file_create_temp(path, tmp, sizeof tmp, d);
		e = IPU_EIO;
		if (f) {
			profile_report_write(f, text);
			e = file_commit_temp(f, tmp, path, o->force, d);
		}
		free(text);
	}
	cJSON_Delete(prof);
	s->written = !e;
	return e;
}

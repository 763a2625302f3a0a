/*
 * query.c - `ipu profile query DIR --group-by op|kernel|step|tile|kind` and
 * `ipu profile diff DIR_A DIR_B`, over profile.json (docs/profile.md).
 *
 * Groups add steps: a step belongs to the group of its ops (ops that share
 * a step, GEMMs run in one phase, are one group: the cycles are not split
 * by a guess), of its kernels, or of its kind. A loop body's step counts
 * every iteration. Every group's cycles add up to the run's.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

static double
num(const cJSON *o, const char *k)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(o, k));
}

static const char *
str(const cJSON *o, const char *k)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
	return s ? s : "";
}

/* A finite number >= 0 (and at most max). */
static int
count(const cJSON *o, const char *k, double max)
{
	const cJSON *x = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(x) && x->valuedouble >= 0 &&
	       x->valuedouble <= max;
}

/* An array of n counts (n < 0: any length, into *n). */
static int
counts(const cJSON *o, const char *k, int *n, double max)
{
	const cJSON *a = cJSON_GetObjectItem(o, k), *x;
	if (!cJSON_IsArray(a) || (*n >= 0 && cJSON_GetArraySize(a) != *n))
		return 0;
	cJSON_ArrayForEach(x, a)
	{
		if (!cJSON_IsNumber(x) || x->valuedouble < 0 ||
		    x->valuedouble > max)
			return 0;
	}
	*n = cJSON_GetArraySize(a);
	return 1;
}

/* Objects that each have a string "name". */
static int
named(const cJSON *a)
{
	const cJSON *x;
	if (!cJSON_IsArray(a))
		return 0;
	cJSON_ArrayForEach(x, a)
	{
		if (!cJSON_IsString(cJSON_GetObjectItem(x, "name")))
			return 0;
	}
	return 1;
}

int
profile_check(const cJSON *j, Diag *d)
{
	static const double BIG = 1e18; /* beyond any cycle count */
	const cJSON *run = cJSON_GetObjectItem(j, "run"),
	            *ops = cJSON_GetObjectItem(j, "ops"),
	            *kers = cJSON_GetObjectItem(j, "kernels"),
	            *steps = cJSON_GetObjectItem(j, "steps"),
	            *tiles = cJSON_GetObjectItem(j, "tiles"),
	            *mem = cJSON_GetObjectItem(j, "memory"), *x;
	const char *why = NULL;
	if (strcmp(str(j, "format"), "ipu-profile") ||
	    num(j, "version") != PROFILE_VERSION)
		why = "not a profile of this version (format \"ipu-profile\")";
	else if (!cJSON_IsObject(run) || !count(run, "cycles", BIG) ||
	         !cJSON_IsString(cJSON_GetObjectItem(run, "status")))
		why = "\"run\" needs cycles and a status";
	else if (!named(ops) || !named(kers) || !cJSON_IsArray(steps))
		why = "\"ops\", \"kernels\" and \"steps\" must be lists of "
		      "named things";
	static const char *const step_num[] = {
	    "cycles", "sync_cycles",  "predicted_cycles", "predicted_overhead",
	    "macs",   "ideal_cycles", "bytes_sent"};
	int no = cJSON_GetArraySize(ops), nk = cJSON_GetArraySize(kers);
	const cJSON *each = why ? NULL : steps;
	cJSON_ArrayForEach(x, each)
	{
		int any = -1;
		for (size_t i = 0; i < sizeof step_num / sizeof *step_num; i++)
			if (!count(x, step_num[i], BIG))
				why = "a step needs counts of its cycles, "
				      "predictions, MACs and bytes";
		if (!count(x, "index", 2147483647.0) || /* printed as int */
		    !count(x, "runs", 4294967295.0) ||
		    !cJSON_IsString(cJSON_GetObjectItem(x, "kind")) ||
		    !cJSON_IsString(cJSON_GetObjectItem(x, "what")))
			why = "a step needs runs, a kind and what it is";
		if (!counts(x, "ops", &any, no - 1) ||
		    !counts(x, "kernels", &(int){-1}, nk - 1))
			why = "a step's ops and kernels must be indices of "
			      "the lists";
		if (why)
			break;
	}
	int n = -1;
	static const char *const per_tile[] = {
	    "busy", "compute", "barrier_wait", "recv_wait", "bytes_sent"};
	if (!why &&
	    (!cJSON_IsObject(tiles) || !counts(tiles, "cycles", &n, BIG)))
		why = "\"tiles\" needs its cycles";
	for (size_t i = 0; !why && i < sizeof per_tile / sizeof *per_tile; i++)
		if (!counts(tiles, per_tile[i], &n, BIG))
			why = "\"tiles\" needs a value of each kind per tile";
	if (!why &&
	    (!cJSON_IsObject(mem) || !counts(mem, "peak", &n, BIG) ||
	     !counts(cJSON_GetObjectItem(mem, "per_tile"), "free", &n, BIG)))
		why = "\"memory\" needs the peak and the free bytes per tile";
	return why ? diag_set(d, IPU_EINVAL, NULL, 0, 0, "%s", why) : IPU_OK;
}

int
profile_load(const char *dir, cJSON **out, Diag *d)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/profile.json", dir);
	uint8_t *text;
	size_t len;
	*out = NULL;
	int e = read_file(path, &text, &len, d);
	if (e)
		return e;
	cJSON *j = cJSON_ParseWithLength((const char *)text, len);
	free(text);
	if (!j)
		return diag_set(d, IPU_EINVAL, path, 0, 0, "not valid JSON");
	Diag why;
	if (profile_check(j, &why)) {
		cJSON_Delete(j);
		return diag_set(d, IPU_EINVAL, path, 0, 0, "%s", why.msg);
	}
	*out = j;
	return IPU_OK;
}

typedef struct {
	char key[512];
	double cycles, predicted, macs, ideal, bytes;
	int steps, has_pred;
} Row;

typedef struct {
	Row *v;
	int n, cap;
} Rows;

static Row *
row(Rows *r, const char *key)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].key, key))
			return &r->v[i];
	GROW(r->v, r->n, r->cap);
	Row *x = &r->v[r->n++];
	memset(x, 0, sizeof *x);
	snprintf(x->key, sizeof x->key, "%s", key);
	return x;
}

/* The names of a step's ops or kernels, ", " between them. */
static void
names(const cJSON *prof, const cJSON *st, const char *list, const char *table,
      char *buf, size_t len)
{
	const cJSON *tab = cJSON_GetObjectItem(prof, table), *o;
	size_t at = 0;
	buf[0] = 0;
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(st, list))
	{
		if (at >= len)
			break;
		at += (size_t)snprintf(
		    buf + at, len - at, "%s%s", at ? ", " : "",
		    str(cJSON_GetArrayItem(tab, (int)o->valuedouble), "name"));
	}
}

/* The group a step is in. */
static void
group_key(const cJSON *prof, const cJSON *st, ProfGroup by, char *buf,
          size_t len)
{
	const char *kind = str(st, "kind");
	switch (by) {
	case PQ_OP:
		names(prof, st, "ops", "ops", buf, len);
		if (!buf[0])
			snprintf(buf, len, "(%s)", kind);
		break;
	case PQ_KERNEL:
		names(prof, st, "kernels", "kernels", buf, len);
		if (!buf[0])
			snprintf(buf, len, "(%s)", kind);
		break;
	case PQ_STEP:
		snprintf(buf, len, "%d %s", (int)num(st, "index"),
		         str(st, "what"));
		break;
	default:
		snprintf(buf, len, "%s", kind);
	}
}

/* Step st's cycles, and its predicted ones (a run's times its runs), in
 * x; `whole`: also its MACs and bytes (not for its sync part). */
static void
add_step(Row *x, const cJSON *st, double cycles, double predicted, int whole)
{
	x->cycles += cycles;
	x->steps++;
	x->predicted += predicted * num(st, "runs");
	x->has_pred |= predicted > 0;
	if (!whole)
		return;
	x->macs += num(st, "macs") * num(st, "runs");
	x->ideal += num(st, "ideal_cycles");
	x->bytes += num(st, "bytes_sent");
}

static int
by_cycles(const void *a, const void *b)
{
	double x = ((const Row *)a)->cycles, y = ((const Row *)b)->cycles;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* The groups of every step (by kind, an exchange's barrier is "sync"). */
static void
group_steps(const cJSON *prof, ProfGroup by, Rows *r)
{
	const cJSON *st;
	char key[512];
	cJSON_ArrayForEach(st, cJSON_GetObjectItem(prof, "steps"))
	{
		group_key(prof, st, by, key, sizeof key);
		double cyc = num(st, "cycles"), sync = num(st, "sync_cycles"),
		       pred = num(st, "predicted_cycles"),
		       over = num(st, "predicted_overhead");
		if (by == PQ_KIND && sync > 0) {
			/* the barrier, and the cost model's sync */
			add_step(row(r, "sync"), st, sync, over, 0);
			cyc -= sync;
			over = 0;
		}
		add_step(row(r, key), st, cyc, pred + over, 1);
	}
	if (by != PQ_STEP)
		qsort(r->v, (size_t)r->n, sizeof *r->v, by_cycles);
}

static void
print_rows(const cJSON *prof, const Rows *r, int json, const char *what,
           FILE *f)
{
	const cJSON *run = cJSON_GetObjectItem(prof, "run");
	double total = num(run, "cycles");
	if (json) {
		cJSON *a = cJSON_CreateArray();
		for (int i = 0; i < r->n; i++) {
			const Row *x = &r->v[i];
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, what, x->key);
			cJSON_AddNumberToObject(o, "cycles", x->cycles);
			cJSON_AddNumberToObject(o, "share",
			                        total ? x->cycles / total : 0);
			if (x->has_pred) {
				cJSON_AddNumberToObject(o, "predicted",
				                        x->predicted);
				cJSON_AddNumberToObject(
				    o, "error",
				    x->predicted ? x->cycles / x->predicted - 1
				                 : 0);
			}
			cJSON_AddNumberToObject(o, "macs", x->macs);
			cJSON_AddNumberToObject(
			    o, "mfu", x->cycles ? x->ideal / x->cycles : 0);
			cJSON_AddNumberToObject(o, "bytes_sent", x->bytes);
			cJSON_AddNumberToObject(o, "steps", x->steps);
			cJSON_AddItemToArray(a, o);
		}
		char *t = cJSON_Print(a);
		fprintf(f, "%s\n", t);
		free(t);
		cJSON_Delete(a);
		return;
	}
	fprintf(f, "%-44s %12s %7s %12s %7s %14s %6s %12s\n", what, "cycles",
	        "share", "predicted", "error", "MACs", "MFU", "bytes sent");
	for (int i = 0; i < r->n; i++) {
		const Row *x = &r->v[i];
		char pred[32] = "-", err[32] = "-";
		if (x->has_pred) {
			snprintf(pred, sizeof pred, "%.0f", x->predicted);
			if (x->predicted)
				snprintf(err, sizeof err, "%+.1f%%",
				         100 * (x->cycles / x->predicted - 1));
		}
		fprintf(
		    f,
		    "%-44.44s %12.0f %6.1f%% %12s %7s %14.0f %5.1f%% %12.0f\n",
		    x->key, x->cycles, total ? 100 * x->cycles / total : 0,
		    pred, err, x->macs,
		    x->cycles ? 100 * x->ideal / x->cycles : 0, x->bytes);
	}
	fprintf(f, "%-44s %12.0f (%s, %s)\n", "total", total,
	        str(run, "status"), str(run, "source"));
}

/* Per tile: its cycles, busy, compute, waits, bytes and memory. */
static void
print_tiles(const cJSON *prof, int json, FILE *f)
{
	const cJSON *t = cJSON_GetObjectItem(prof, "tiles"),
	            *m = cJSON_GetObjectItem(prof, "memory");
	static const char *const col[] = {"cycles",    "busy",
	                                  "compute",   "barrier_wait",
	                                  "recv_wait", "bytes_sent"};
	enum { NCOL = sizeof col / sizeof *col };
	const cJSON *arr[NCOL];
	for (int c = 0; c < NCOL; c++)
		arr[c] = cJSON_GetObjectItem(t, col[c]);
	const cJSON *peak = cJSON_GetObjectItem(m, "peak"),
	            *free_ = cJSON_GetObjectItem(
	                cJSON_GetObjectItem(m, "per_tile"), "free");
	int n = cJSON_GetArraySize(arr[1]);
	/* busiest first */
	int *ord = xmalloc(((size_t)n + 1) * sizeof *ord);
	for (int i = 0; i < n; i++)
		ord[i] = i;
	for (int i = 1; i < n; i++)
		for (int j = i;
		     j > 0 &&
		     cJSON_GetArrayItem(arr[1], ord[j])->valuedouble >
		         cJSON_GetArrayItem(arr[1], ord[j - 1])->valuedouble;
		     j--) {
			int x = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = x;
		}
	if (json) {
		cJSON *a = cJSON_CreateArray();
		for (int i = 0; i < n; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "tile", ord[i]);
			for (int c = 0; c < NCOL; c++)
				cJSON_AddNumberToObject(
				    o, col[c],
				    cJSON_GetArrayItem(arr[c], ord[i])
				        ->valuedouble);
			cJSON_AddNumberToObject(
			    o, "peak_data_bytes",
			    cJSON_GetNumberValue(
			        cJSON_GetArrayItem(peak, ord[i])));
			cJSON_AddNumberToObject(
			    o, "free_bytes",
			    cJSON_GetNumberValue(
			        cJSON_GetArrayItem(free_, ord[i])));
			cJSON_AddItemToArray(a, o);
		}
		char *s = cJSON_Print(a);
		fprintf(f, "%s\n", s);
		free(s);
		cJSON_Delete(a);
	} else {
		fprintf(f, "%6s %12s %12s %12s %12s %12s %12s %12s %10s\n",
		        "tile", "cycles", "busy", "compute", "barrier wait",
		        "recv wait", "bytes sent", "peak data", "free");
		for (int i = 0; i < n && i < 20; i++) {
			fprintf(f, "%6d", ord[i]);
			for (int c = 0; c < NCOL; c++)
				fprintf(f, " %12.0f",
				        cJSON_GetArrayItem(arr[c], ord[i])
				            ->valuedouble);
			fprintf(f, " %12.0f %10.0f\n",
			        cJSON_GetNumberValue(
			            cJSON_GetArrayItem(peak, ord[i])),
			        cJSON_GetNumberValue(
			            cJSON_GetArrayItem(free_, ord[i])));
		}
		if (n > 20)
			fprintf(f, "... %d more tiles (--json lists all)\n",
			        n - 20);
	}
	free(ord);
}

int
profile_query(const cJSON *prof, ProfGroup by, int json, FILE *f)
{
	static const char *const what[] = {"op", "kernel", "step", "tile",
	                                   "kind"};
	if (by == PQ_TILE) {
		print_tiles(prof, json, f);
		return 0;
	}
	Rows r = {0};
	group_steps(prof, by, &r);
	print_rows(prof, &r, json, what[by], f);
	free(r.v);
	return 0;
}

typedef struct {
	const char *key;
	double a, b;
} Change;

static int
by_change(const void *x, const void *y)
{
	double p = fabs(((const Change *)x)->b - ((const Change *)x)->a),
	       q = fabs(((const Change *)y)->b - ((const Change *)y)->a);
	return p < q ? 1 : p > q ? -1 : 0;
}

int
profile_diff(const cJSON *a, const cJSON *b, const char *name_a,
             const char *name_b, int json, FILE *f)
{
	Rows ra = {0}, rb = {0};
	group_steps(a, PQ_OP, &ra);
	group_steps(b, PQ_OP, &rb);
	Change *c = xcalloc((size_t)(ra.n + rb.n) + 1, sizeof *c);
	int n = 0;
	for (int i = 0; i < ra.n; i++)
		c[n++] = (Change){ra.v[i].key, ra.v[i].cycles, 0};
	for (int i = 0; i < rb.n; i++) {
		int k = 0;
		while (k < n && strcmp(c[k].key, rb.v[i].key))
			k++;
		if (k == n)
			c[n++] = (Change){rb.v[i].key, 0, 0};
		c[k].b = rb.v[i].cycles;
	}
	qsort(c, (size_t)n, sizeof *c, by_change);
	double ta = num(cJSON_GetObjectItem(a, "run"), "cycles"),
	       tb = num(cJSON_GetObjectItem(b, "run"), "cycles");
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "a", name_a);
		cJSON_AddStringToObject(o, "b", name_b);
		cJSON_AddNumberToObject(o, "cycles_a", ta);
		cJSON_AddNumberToObject(o, "cycles_b", tb);
		cJSON_AddNumberToObject(o, "change", tb - ta);
		cJSON *ops = cJSON_AddArrayToObject(o, "ops");
		for (int i = 0; i < n; i++) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "op", c[i].key);
			cJSON_AddNumberToObject(x, "cycles_a", c[i].a);
			cJSON_AddNumberToObject(x, "cycles_b", c[i].b);
			cJSON_AddNumberToObject(x, "change", c[i].b - c[i].a);
			cJSON_AddItemToArray(ops, x);
		}
		char *t = cJSON_Print(o);
		fprintf(f, "%s\n", t);
		free(t);
		cJSON_Delete(o);
	} else {
		fprintf(f, "A: %s (%.0f cycles)\nB: %s (%.0f cycles)\n", name_a,
		        ta, name_b, tb);
		fprintf(f, "total: %+.0f cycles (%+.2f%%)\n", tb - ta,
		        ta ? 100 * (tb - ta) / ta : 0);
		fprintf(f, "%-44s %12s %12s %12s %8s\n", "op", "A", "B",
		        "change", "");
		for (int i = 0; i < n; i++) {
			double d = c[i].b - c[i].a;
			fprintf(f, "%-44.44s %12.0f %12.0f %+12.0f %8s\n",
			        c[i].key, c[i].a, c[i].b, d,
			        d < 0   ? "faster"
			        : d > 0 ? "slower"
			                : "same");
		}
	}
	free(c);
	free(ra.v);
	free(rb.v);
	return 0;
}

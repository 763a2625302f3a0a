/*
 * cmd_inspect.c - `ipu inspect PKG [--json]`: summarise a package file.
 *
 * Prints the chip and tiles used, the shared code, the memory each tile
 * uses by kind (min / median / max across the tiles used, and the fullest
 * tile), the steps with their predicted cycles, the kernels, the tensors,
 * the predicted total, the compile time and the plan description. With
 * --json the same facts as one JSON object. The package is read with full
 * validation (pkg_read), so a corrupt file is reported, not summarised.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pkg/pkg.h"
#include "cli.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: ipu inspect PKG [--json]\n"
	           "  Summarise a package: chip, tiles, memory per tile by "
	           "kind, steps,\n"
	           "  kernels, tensors and the predicted cycles.\n"
	           "  --json   one JSON object on stdout\n"
	           "Exit status: 0 on success, 1 for a bad package, 2 on a "
	           "usage error.\n");
}

/* Min, median (the lower middle value for an even number of tiles) and
 * max of a quantity over the tiles used, and the first tile with the max.
 * Everything below works in the number of the package's records, never
 * in tiles x records: a hostile package may declare 100,000 buffer kinds
 * or shared segments (pkg_read bounds their count by the file's size). */
typedef struct {
	uint64_t min, median, max;
	uint32_t max_tile;
} Stats;

/* One kind of memory and its bytes over the tiles. */
typedef struct {
	const char *name;
	Stats st;
	uint32_t first; /* the first buffer of the kind: the print order */
} Kind;

typedef struct {
	uint32_t tile;
	uint64_t bytes;
} TileBytes;

static int
tb_cmp(const void *a, const void *b)
{
	const TileBytes *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return x->tile < y->tile ? -1 : x->tile > y->tile;
}

/* Stats over n tiles of which the m in v (distinct tiles, bytes > 0) hold
 * some and the others none; v is sorted. */
static Stats
stats_sparse(TileBytes *v, uint32_t m, uint32_t n)
{
	qsort(v, m, sizeof *v, tb_cmp);
	uint32_t zeros = n - m, mid = (n - 1) / 2, top = m;
	Stats st = {zeros ? 0 : v[0].bytes,
	            mid < zeros ? 0 : v[mid - zeros].bytes,
	            m ? v[m - 1].bytes : 0, 0};
	while (top > 0 && v[top - 1].bytes == st.max)
		top--;
	st.max_tile = m ? v[top].tile : 0;
	return st;
}

/* Stats of a value per tile (v[0..n), every tile). */
static Stats
stats(const uint64_t *v, uint32_t n)
{
	TileBytes *tb = xmalloc(n * sizeof *tb);
	uint32_t m = 0;
	for (uint32_t t = 0; t < n; t++)
		if (v[t])
			tb[m++] = (TileBytes){t, v[t]};
	Stats st = stats_sparse(tb, m, n);
	free(tb);
	return st;
}

typedef struct {
	uint32_t lo, hi;
} Span;

static int
span_cmp(const void *a, const void *b)
{
	const Span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The spans sorted and merged into disjoint ones, in place: their count. */
static uint32_t
merge_spans(Span *s, uint32_t n)
{
	qsort(s, n, sizeof *s, span_cmp);
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (m && s[i].lo <= s[m - 1].hi) {
			if (s[i].hi > s[m - 1].hi)
				s[m - 1].hi = s[i].hi;
		} else {
			s[m++] = s[i];
		}
	return m;
}

/* Bytes below address x of the n sorted, disjoint spans u; pre[i] holds
 * the bytes of u[0..i). */
static uint64_t
covered_below(const Span *u, const uint64_t *pre, uint32_t n, uint32_t x)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (u[mid].hi > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return pre[lo] + (lo < n && u[lo].lo < x ? x - u[lo].lo : 0);
}

typedef struct {
	Kind *kind;
	uint32_t nkind;
	uint64_t *used; /* by tile: union of segments and buffers */
	uint64_t shared_bytes;
	uint64_t blob_bytes;
	uint32_t refs; /* segments referring to blobs */
} Summary;

static int
kind_first_cmp(const void *a, const void *b)
{
	const Kind *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Buffer i's kind, then its tile, then i: a sort that groups kinds. */
static const Package *sort_pkg;
static int
buf_cmp(const void *a, const void *b)
{
	const PkgBuffer *x = &sort_pkg->buf[*(const uint32_t *)a],
	                *y = &sort_pkg->buf[*(const uint32_t *)b];
	int c = strcmp(x->kind, y->kind);
	if (c)
		return c;
	if (x->tile != y->tile)
		return x->tile < y->tile ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The buffers' kinds, each with its stats over the tiles, in the order
 * of their first buffer, after s->kind[0..from). */
static void
buffer_kinds(const Package *p, Summary *s)
{
	uint32_t n = p->nbuf, T = p->tiles;
	uint32_t *ord = xmalloc((n + 1) * sizeof *ord);
	TileBytes *tb = xmalloc((n + 1) * sizeof *tb);
	for (uint32_t i = 0; i < n; i++)
		ord[i] = i;
	sort_pkg = p;
	qsort(ord, n, sizeof *ord, buf_cmp);
	s->kind = xrealloc(s->kind, (s->nkind + n) * sizeof *s->kind);
	uint32_t from = s->nkind;
	for (uint32_t i = 0; i < n;) {
		const char *name = p->buf[ord[i]].kind;
		uint32_t m = 0, first = ord[i];
		for (; i < n && !strcmp(p->buf[ord[i]].kind, name); i++) {
			const PkgBuffer *b = &p->buf[ord[i]];
			if (m && tb[m - 1].tile == b->tile)
				tb[m - 1].bytes += b->bytes;
			else
				tb[m++] = (TileBytes){b->tile, b->bytes};
			if (ord[i] < first)
				first = ord[i];
		}
		s->kind[s->nkind++] =
		    (Kind){name, stats_sparse(tb, m, T), first};
	}
	qsort(s->kind + from, s->nkind - from, sizeof *s->kind, kind_first_cmp);
	free(tb);
	free(ord);
}

static void
summarise(const Package *p, Summary *s)
{
	memset(s, 0, sizeof *s);
	uint32_t T = p->tiles;
	for (uint32_t i = 0; i < p->nblob; i++)
		s->blob_bytes += p->blob[i].len;
	for (uint32_t i = 0; i < p->nshared; i++)
		s->shared_bytes += p->blob[p->shared[i].blob].len;
	s->refs = p->nshared;
	uint64_t *v = xcalloc(T, sizeof *v);
	uint32_t maxseg = 0;
	for (uint32_t t = 0; t < T; t++) {
		for (uint32_t i = 0; i < p->tile[t].nseg; i++)
			v[t] += p->blob[p->tile[t].seg[i].blob].len;
		s->refs += p->tile[t].nseg;
		if (p->tile[t].nseg > maxseg)
			maxseg = p->tile[t].nseg;
	}
	s->kind = xcalloc(2, sizeof *s->kind);
	s->kind[0] =
	    (Kind){"shared code",
	           {s->shared_bytes, s->shared_bytes, s->shared_bytes, 0},
	           0};
	s->kind[1] = (Kind){"tile segments", stats(v, T), 0};
	s->nkind = 2;
	free(v);
	buffer_kinds(p, s);

	/* the union of every tile's spans: the shared ones merged once,
	 * then per tile its own (segments and buffers) merged, plus the
	 * bytes of those outside the shared */
	uint32_t *nb = xcalloc(T + 1, sizeof *nb), maxbuf = 0;
	for (uint32_t i = 0; i < p->nbuf; i++)
		nb[p->buf[i].tile + 1]++;
	for (uint32_t t = 0; t < T; t++) {
		maxbuf = nb[t + 1] > maxbuf ? nb[t + 1] : maxbuf;
		nb[t + 1] += nb[t];
	}
	uint32_t *order = xcalloc(p->nbuf + 1, sizeof *order),
	         *fill = xcalloc(T, sizeof *fill);
	for (uint32_t i = 0; i < p->nbuf; i++) {
		uint32_t t = p->buf[i].tile;
		order[nb[t] + fill[t]++] = i;
	}
	free(fill);
	Span *u = xmalloc(((size_t)p->nshared + 1) * sizeof *u);
	for (uint32_t i = 0; i < p->nshared; i++)
		u[i] =
		    (Span){p->shared[i].addr,
		           p->shared[i].addr + p->blob[p->shared[i].blob].len};
	uint32_t nu = merge_spans(u, p->nshared);
	uint64_t *pre = xcalloc((size_t)nu + 1, sizeof *pre);
	for (uint32_t i = 0; i < nu; i++)
		pre[i + 1] = pre[i] + (u[i].hi - u[i].lo);
	Span *sp = xmalloc(((size_t)maxseg + maxbuf + 1) * sizeof *sp);
	s->used = xcalloc(T, sizeof *s->used);
	for (uint32_t t = 0; t < T; t++) {
		uint32_t n = 0;
		for (uint32_t i = 0; i < p->tile[t].nseg; i++, n++) {
			const PkgSegment *g = &p->tile[t].seg[i];
			sp[n] = (Span){g->addr, g->addr + p->blob[g->blob].len};
		}
		for (uint32_t i = nb[t]; i < nb[t + 1]; i++, n++) {
			const PkgBuffer *b = &p->buf[order[i]];
			sp[n] = (Span){b->addr, b->addr + b->bytes};
		}
		n = merge_spans(sp, n);
		uint64_t used = pre[nu];
		for (uint32_t i = 0; i < n; i++)
			used += (sp[i].hi - sp[i].lo) -
			        (covered_below(u, pre, nu, sp[i].hi) -
			         covered_below(u, pre, nu, sp[i].lo));
		s->used[t] = used;
	}
	free(sp);
	free(pre);
	free(u);
	free(order);
	free(nb);
}

static void
summary_free(Summary *s)
{
	free(s->kind);
	free(s->used);
}

static const char *
step_kind(uint8_t k)
{
	return k == PKG_STEP_EXCHANGE ? "exchange" : "compute";
}

static void
print_json(const Package *p, const Summary *s, const char *path, size_t len)
{
	const Chip *c = p->chip;
	printf("{\"package\": ");
	cli_json_str(stdout, path);
	printf(", \"format_version\": %d, \"bytes\": %zu, \"chip\": ",
	       PKG_VERSION, len);
	cli_json_str(stdout, c->name);
	printf(", \"tiles\": %u, \"chip_tiles\": %u, \"tile_memory\": %u,\n",
	       p->tiles, c->tiles, c->mem_end - c->mem_base);
	printf(" \"shared\": {\"segments\": %u, \"bytes\": %" PRIu64 "},\n",
	       p->nshared, s->shared_bytes);
	printf(" \"blobs\": {\"count\": %u, \"bytes\": %" PRIu64
	       ", \"references\": %u},\n",
	       p->nblob, s->blob_bytes, s->refs);
	printf(" \"memory\": [");
	for (uint32_t k = 0; k <= s->nkind; k++) {
		const char *name =
		    k < s->nkind ? s->kind[k].name : "total in use";
		Stats st =
		    k < s->nkind ? s->kind[k].st : stats(s->used, p->tiles);
		printf("%s\n  {\"kind\": ", k ? "," : "");
		cli_json_str(stdout, name);
		printf(", \"min\": %" PRIu64 ", \"median\": %" PRIu64
		       ", \"max\": %" PRIu64 ", \"max_tile\": %u}",
		       st.min, st.median, st.max, st.max_tile);
	}
	Stats u = stats(s->used, p->tiles);
	printf("],\n \"fullest_tile\": {\"tile\": %u, \"bytes\": %" PRIu64
	       ", \"free\": %" PRIu64 "},\n",
	       u.max_tile, u.max, (uint64_t)(c->mem_end - c->mem_base) - u.max);
	printf(" \"steps\": [");
	for (uint32_t i = 0; i < p->nstep; i++) {
		printf("%s\n  {\"kind\": \"%s\", \"what\": ", i ? "," : "",
		       step_kind(p->step[i].kind));
		cli_json_str(stdout, p->step[i].what);
		printf(", \"cycles\": %" PRIu64 ", \"runs\": %u}",
		       p->step[i].cycles, p->step[i].runs);
	}
	printf("],\n \"kernels\": [");
	for (uint32_t i = 0; i < p->nkernel; i++) {
		printf("%s\n  {\"name\": ", i ? "," : "");
		cli_json_str(stdout, p->kernel[i].name);
		printf(", \"addr\": %u, \"calls\": %u}", p->kernel[i].addr,
		       p->kernel[i].calls);
	}
	printf("],\n \"tensors\": [");
	for (uint32_t i = 0; i < p->ntensor; i++) {
		const PkgTensor *t = &p->tensor[i];
		printf("%s\n  {\"name\": ", i ? "," : "");
		cli_json_str(stdout, t->name);
		printf(", \"dtype\": \"%s\", \"scale\": %d, \"role\": \"%s\", "
		       "\"rows\": %u, \"cols\": %u, \"pieces\": %u}",
		       dtype_name(t->dtype), t->scale, pkg_role_name(t->role),
		       t->rows, t->cols, t->npiece);
	}
	printf("],\n \"predicted_cycles\": %" PRIu64
	       ", \"predicted_seconds\": %.9g, \"compile_seconds\": %.6f,\n"
	       " \"plan\": ",
	       p->total_cycles, (double)p->total_cycles / c->clock_hz,
	       (double)p->compile_us / 1e6);
	cli_json_str(stdout, p->plan);
	printf("}\n");
}

static void
print_text(const Package *p, const Summary *s, const char *path, size_t len)
{
	const Chip *c = p->chip;
	uint32_t mem = c->mem_end - c->mem_base;
	printf("package      %s (format %d, %zu bytes)\n", path, PKG_VERSION,
	       len);
	printf("chip         %s\n", c->name);
	printf("tiles used   %u of %u\n", p->tiles, c->tiles);
	printf("shared code  %" PRIu64 " bytes in %u segment%s, on every "
	       "tile\n",
	       s->shared_bytes, p->nshared, p->nshared == 1 ? "" : "s");
	printf("blobs        %u distinct, %" PRIu64
	       " bytes, referred to by %u segments\n",
	       p->nblob, s->blob_bytes, s->refs);
	printf("compile time %.3f s\n", (double)p->compile_us / 1e6);
	printf("\nmemory per tile (bytes)        min     median        max  "
	       "max on tile\n");
	for (uint32_t k = 0; k <= s->nkind; k++) {
		const char *name =
		    k < s->nkind ? s->kind[k].name : "total in use";
		Stats st =
		    k < s->nkind ? s->kind[k].st : stats(s->used, p->tiles);
		printf("  %-24s %10" PRIu64 " %10" PRIu64 " %10" PRIu64
		       "  %u\n",
		       name, st.min, st.median, st.max, st.max_tile);
	}
	Stats u = stats(s->used, p->tiles);
	printf("fullest tile: %u, %" PRIu64 " of %u bytes in use (%.1f%%), "
	       "%" PRIu64 " free\n",
	       u.max_tile, u.max, mem, 100.0 * (double)u.max / mem,
	       (uint64_t)mem - u.max);
	printf("\nsteps (%u)\n", p->nstep);
	for (uint32_t i = 0; i < p->nstep; i++)
		printf("  %4u  %-8s %12" PRIu64 " cycles x %-3u %s\n", i,
		       step_kind(p->step[i].kind), p->step[i].cycles,
		       p->step[i].runs, p->step[i].what);
	printf("predicted total: %" PRIu64 " cycles (%.3f us at %.0f MHz)\n",
	       p->total_cycles, (double)p->total_cycles / c->clock_hz * 1e6,
	       c->clock_hz / 1e6);
	printf("\nkernels (%u)\n", p->nkernel);
	for (uint32_t i = 0; i < p->nkernel; i++)
		printf("  %-32s at 0x%05x, %u call%s\n", p->kernel[i].name,
		       p->kernel[i].addr, p->kernel[i].calls,
		       p->kernel[i].calls == 1 ? "" : "s");
	printf("\ntensors (%u)\n", p->ntensor);
	for (uint32_t i = 0; i < p->ntensor; i++) {
		const PkgTensor *t = &p->tensor[i];
		char dt[32];
		if (dtype_is_f8(t->dtype))
			snprintf(dt, sizeof dt, "%s*2^%d", dtype_name(t->dtype),
			         t->scale);
		else
			snprintf(dt, sizeof dt, "%s", dtype_name(t->dtype));
		printf("  %-20s %-6s %-12s %u x %u, %u piece%s\n", t->name,
		       pkg_role_name(t->role), dt, t->rows, t->cols, t->npiece,
		       t->npiece == 1 ? "" : "s");
	}
	printf("\nplan\n");
	const char *l = p->plan;
	if (!*l)
		printf("  (none)\n");
	while (*l) {
		const char *nl = strchr(l, '\n');
		int n = nl ? (int)(nl - l) : (int)strlen(l);
		printf("  %.*s\n", n, l);
		l += n + (nl != NULL);
	}
}

int
cmd_inspect(int argc, char **argv)
{
	const char *path = NULL;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "ipu inspect: unknown option '%s'\n",
			        argv[i]);
			usage(stderr);
			return 2;
		} else if (path) {
			fprintf(stderr, "ipu inspect: one package at a time\n");
			usage(stderr);
			return 2;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	uint8_t *data;
	size_t len;
	Diag d;
	diag_clear(&d);
	Package *p = NULL;
	if (read_file(path, &data, &len, &d) == 0) {
		pkg_read(data, len, path, &p, &d);
		free(data);
	}
	if (!p) {
		char buf[800];
		diag_format(&d, buf, sizeof buf);
		fprintf(stderr, "ipu inspect: %s\n", buf);
		return 1;
	}
	Summary s;
	summarise(p, &s);
	if (json)
		print_json(p, &s, path, len);
	else
		print_text(p, &s, path, len);
	summary_free(&s);
	pkg_free(p);
	return 0;
}

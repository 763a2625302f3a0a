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

/* Per-tile byte counts of one kind of memory. */
typedef struct {
	const char *name;
	uint64_t *bytes; /* by tile */
} Kind;

typedef struct {
	uint64_t min, median, max;
	uint32_t max_tile;
} Stats;

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Median: the lower middle value for an even number of tiles. */
static Stats
stats(const uint64_t *v, uint32_t n)
{
	uint64_t *s = xmalloc(n * sizeof *s);
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, u64_cmp);
	Stats st = {s[0], s[(n - 1) / 2], s[n - 1], 0};
	for (uint32_t t = 0; t < n; t++)
		if (v[t] == st.max) {
			st.max_tile = t;
			break;
		}
	free(s);
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

/* Bytes of tile memory covered by at least one of the spans. */
static uint64_t
union_bytes(Span *s, uint32_t n)
{
	qsort(s, n, sizeof *s, span_cmp);
	uint64_t total = 0;
	uint32_t end = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t lo = s[i].lo > end ? s[i].lo : end;
		if (s[i].hi > lo)
			total += s[i].hi - lo;
		if (s[i].hi > end)
			end = s[i].hi;
	}
	return total;
}

typedef struct {
	Kind *kind;
	uint32_t nkind;
	uint64_t *used; /* by tile: union of segments and buffers */
	uint64_t shared_bytes;
	uint64_t blob_bytes;
	uint32_t refs; /* segments referring to blobs */
} Summary;

static uint32_t
kind_index(Summary *s, const char *name, uint32_t tiles)
{
	for (uint32_t i = 0; i < s->nkind; i++)
		if (!strcmp(s->kind[i].name, name))
			return i;
	s->kind = xrealloc(s->kind, (s->nkind + 1) * sizeof *s->kind);
	s->kind[s->nkind].name = name;
	s->kind[s->nkind].bytes = xcalloc(tiles, sizeof(uint64_t));
	return s->nkind++;
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
	uint32_t ks = kind_index(s, "shared code", T);
	uint32_t ko = kind_index(s, "tile segments", T);
	uint32_t maxseg = 0;
	for (uint32_t t = 0; t < T; t++) {
		s->kind[ks].bytes[t] = s->shared_bytes;
		for (uint32_t i = 0; i < p->tile[t].nseg; i++)
			s->kind[ko].bytes[t] +=
			    p->blob[p->tile[t].seg[i].blob].len;
		s->refs += p->tile[t].nseg;
		if (p->tile[t].nseg > maxseg)
			maxseg = p->tile[t].nseg;
	}
	/* buffers by kind, and every tile's spans for the union */
	uint32_t *nb = xcalloc(T, sizeof *nb);
	for (uint32_t i = 0; i < p->nbuf; i++) {
		uint32_t k = kind_index(s, p->buf[i].kind, T);
		s->kind[k].bytes[p->buf[i].tile] += p->buf[i].bytes;
		nb[p->buf[i].tile]++;
	}
	uint32_t maxbuf = 0;
	for (uint32_t t = 0; t < T; t++)
		if (nb[t] > maxbuf)
			maxbuf = nb[t];
	uint32_t *first = xcalloc(T + 1, sizeof *first);
	for (uint32_t t = 0; t < T; t++)
		first[t + 1] = first[t] + nb[t];
	uint32_t *order = xcalloc(p->nbuf, sizeof *order);
	memset(nb, 0, T * sizeof *nb);
	for (uint32_t i = 0; i < p->nbuf; i++) {
		uint32_t t = p->buf[i].tile;
		order[first[t] + nb[t]++] = i;
	}
	Span *sp = xcalloc((size_t)p->nshared + maxseg + maxbuf, sizeof *sp);
	s->used = xcalloc(T, sizeof *s->used);
	for (uint32_t t = 0; t < T; t++) {
		uint32_t n = 0;
		for (uint32_t i = 0; i < p->nshared; i++, n++)
			sp[n] = (Span){p->shared[i].addr,
			               p->shared[i].addr +
			                   p->blob[p->shared[i].blob].len};
		for (uint32_t i = 0; i < p->tile[t].nseg; i++, n++) {
			const PkgSegment *g = &p->tile[t].seg[i];
			sp[n] = (Span){g->addr, g->addr + p->blob[g->blob].len};
		}
		for (uint32_t i = first[t]; i < first[t + 1]; i++, n++) {
			const PkgBuffer *b = &p->buf[order[i]];
			sp[n] = (Span){b->addr, b->addr + b->bytes};
		}
		s->used[t] = union_bytes(sp, n);
	}
	free(sp);
	free(order);
	free(first);
	free(nb);
}

static void
summary_free(Summary *s)
{
	for (uint32_t i = 0; i < s->nkind; i++)
		free(s->kind[i].bytes);
	free(s->kind);
	free(s->used);
}

static const char *
step_kind(uint8_t k)
{
	return k == PKG_STEP_EXCHANGE ? "exchange" : "compute";
}

/* A JSON string literal (names and texts are printable ASCII, the plan
 * may hold newlines and tabs: pkg_check). */
static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '\t')
			fputs("\\t", f);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void
print_json(const Package *p, const Summary *s, const char *path, size_t len)
{
	const Chip *c = p->chip;
	printf("{\"package\": ");
	json_str(stdout, path);
	printf(", \"format_version\": %d, \"bytes\": %zu, \"chip\": ",
	       PKG_VERSION, len);
	json_str(stdout, c->name);
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
		    stats(k < s->nkind ? s->kind[k].bytes : s->used, p->tiles);
		printf("%s\n  {\"kind\": ", k ? "," : "");
		json_str(stdout, name);
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
		json_str(stdout, p->step[i].what);
		printf(", \"cycles\": %" PRIu64 ", \"runs\": %u}",
		       p->step[i].cycles, p->step[i].runs);
	}
	printf("],\n \"kernels\": [");
	for (uint32_t i = 0; i < p->nkernel; i++) {
		printf("%s\n  {\"name\": ", i ? "," : "");
		json_str(stdout, p->kernel[i].name);
		printf(", \"addr\": %u, \"calls\": %u}", p->kernel[i].addr,
		       p->kernel[i].calls);
	}
	printf("],\n \"tensors\": [");
	for (uint32_t i = 0; i < p->ntensor; i++) {
		const PkgTensor *t = &p->tensor[i];
		printf("%s\n  {\"name\": ", i ? "," : "");
		json_str(stdout, t->name);
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
	json_str(stdout, p->plan);
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
		    stats(k < s->nkind ? s->kind[k].bytes : s->used, p->tiles);
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

/*
 * place.c - placement of a Lowered program's buffers in tile memory.
 *
 * Tiles are independent. For each tile, the buffers are packed by the tile
 * memory model's packer (plan_tile_pack, src/plan/mem.c, which the GEMM
 * planner runs on its candidates' fullest tiles too), a greedy first-fit
 * over address and lifetime: they are taken in a fixed order
 * (interleaved ones first, then the ones live for the tile's whole program,
 * then by size, largest first) and each goes to the lowest aligned address
 * at which it overlaps no already placed buffer whose lifetime meets its
 * own, lies in its region and shares no memory element with its `apart`
 * partners. If the packing passes mem_end, other orders are tried, then
 * repairs of the best one (docs/placement.md), before the tile is
 * reported. Tiles
 * whose buffers and code end are the same as an earlier tile's copy that
 * tile's addresses. docs/placement.md describes the rules and the report.
 */
#include "place.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *
what_of(const char *w)
{
	return w ? w : "buffer";
}

/* ---- kinds ----------------------------------------------------------- */

typedef struct {
	PlaceKind *k;
	int n, cap;
	const char **key; /* pointer -> kind, open addressing */
	int *val;
	size_t hcap, hn;
} Kinds;

static size_t
ptr_hash(const char *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32);
}

static void
kinds_rehash(Kinds *ks, size_t cap)
{
	const char **key = xcalloc(cap, sizeof *key);
	int *val = xcalloc(cap, sizeof *val);
	for (size_t i = 0; i < ks->hcap; i++) {
		if (!ks->key[i])
			continue;
		size_t h = ptr_hash(ks->key[i]) & (cap - 1);
		while (key[h])
			h = (h + 1) & (cap - 1);
		key[h] = ks->key[i];
		val[h] = ks->val[i];
	}
	free(ks->key);
	free(ks->val);
	ks->key = key;
	ks->val = val;
	ks->hcap = cap;
}

/* The kind of a `what` text: by pointer, then by content. */
static int
kinds_get(Kinds *ks, const char *what)
{
	what = what_of(what);
	if (2 * (ks->hn + 1) > ks->hcap)
		kinds_rehash(ks, ks->hcap ? 2 * ks->hcap : 64);
	size_t h = ptr_hash(what) & (ks->hcap - 1);
	while (ks->key[h]) {
		if (ks->key[h] == what)
			return ks->val[h];
		h = (h + 1) & (ks->hcap - 1);
	}
	int k;
	for (k = 0; k < ks->n; k++)
		if (!strcmp(ks->k[k].what, what))
			break;
	if (k == ks->n) {
		GROW(ks->k, ks->n, ks->cap);
		ks->k[ks->n++] = (PlaceKind){.what = what};
	}
	ks->key[h] = what;
	ks->val[h] = k;
	ks->hn++;
	return k;
}

static int
cmp_kind(const void *pa, const void *pb)
{
	const PlaceKind *a = pa, *b = pb;
	if (a->bytes != b->bytes)
		return (a->bytes < b->bytes) - (a->bytes > b->bytes);
	return strcmp(a->what, b->what);
}

/* ---- overflow -------------------------------------------------------- */

/* Which of the memory model's bounds a tile breaks, in the order the
 * report names them (code, the total, the interleaved region), or
 * PLACE_OVER_PACKING when it keeps them all (then only the packing can
 * fail). code_room: the bytes of code the tile can fetch from (exec_end -
 * mem_base); live, ilive: the most data live at one step, all and in the
 * interleaved region. */
static PlaceOverKind
bound_broken(const Chip *c, uint64_t code, uint64_t code_room, uint64_t live,
             uint64_t ilive)
{
	if (code > code_room)
		return PLACE_OVER_CODE;
	if (plan_tile_over(c, (TileBytes){code, live}))
		return PLACE_OVER_TOTAL;
	if (ilive > c->mem_end - c->interleave)
		return PLACE_OVER_INTERLEAVED;
	return PLACE_OVER_PACKING;
}

static void
fill_overflow(const Lowered *l, const TileBuf *b, const int *tid, int n,
              TilePack *s, uint32_t tile, uint32_t code, uint32_t code_room,
              uint64_t packed, PlaceOverflow *o)
{
	const Chip *c = l->chip;
	int32_t step, istep;
	uint64_t live = plan_tile_live(b, n, 0, s, &step);
	uint64_t ilive = plan_tile_live(b, n, 1, s, &istep);
	uint64_t mem = plan_tile_room(c);
	uint64_t imem = c->mem_end - c->interleave;
	memset(o, 0, sizeof *o);
	o->tile = tile;
	o->packed = packed;
	o->kind = bound_broken(c, code, code_room, live, ilive);
	if (o->kind == PLACE_OVER_CODE) {
		o->step = step;
		o->need = code;
		o->avail = code_room;
		o->over = code - code_room;
	} else if (o->kind == PLACE_OVER_TOTAL) {
		/* the memory model's bound (plan/mem.c), the planner's too */
		o->step = step;
		o->need = plan_tile_need((TileBytes){code, live});
		o->avail = mem;
		o->over = plan_tile_over(l->chip, (TileBytes){code, live});
	} else if (o->kind == PLACE_OVER_INTERLEAVED) {
		o->step = istep;
		o->need = ilive;
		o->avail = imem;
		o->over = ilive - imem;
	} else {
		o->step = step;
		o->need = plan_tile_need((TileBytes){code, live});
		o->avail = mem;
		o->over = packed - c->mem_end;
	}
	o->op = -1;
	if (o->step >= 0 && o->step < l->nstep && l->step[o->step].nop) {
		o->op = l->step[o->step].op[0];
		o->nop = l->step[o->step].nop;
	}
	int inter = o->kind == PLACE_OVER_INTERLEAVED;
	o->live = xcalloc((size_t)n + 1, sizeof *o->live);
	if (!inter)
		o->live[o->nlive++] = (PlaceKind){"code", code, 1, code};
	int from = o->nlive;
	for (int i = 0; i < n; i++) {
		const TileBuf *it = &b[i];
		if (it->first > o->step || it->last < o->step)
			continue;
		if (inter && it->region != REGION_INTERLEAVED)
			continue;
		const char *w = what_of(l->buf[tid[i]].what);
		int k;
		for (k = from; k < o->nlive; k++)
			if (!strcmp(o->live[k].what, w))
				break;
		if (k == o->nlive)
			o->live[o->nlive++] = (PlaceKind){.what = w};
		o->live[k].bytes += it->bytes;
		o->live[k].count++;
		if (it->bytes > o->live[k].tile_max)
			o->live[k].tile_max = it->bytes;
	}
	qsort(o->live + from, (size_t)(o->nlive - from), sizeof *o->live,
	      cmp_kind);
}

/* ---- the same tile twice --------------------------------------------- */

static uint64_t
tile_hash(const TileBuf *b, int n, uint32_t code_end)
{
	uint64_t h = 0xcbf29ce484222325ull ^ code_end;
	for (int i = 0; i < n; i++) {
		const TileBuf *it = &b[i];
		uint64_t v[3] = {
		    it->bytes | (uint64_t)it->align << 32,
		    (uint32_t)it->first | (uint64_t)(uint32_t)it->last << 32,
		    it->region | (uint64_t)(uint32_t)it->apart << 32};
		for (int j = 0; j < 3; j++) {
			h ^= v[j];
			h *= 0x100000001b3ull;
			h ^= h >> 29;
		}
	}
	return h;
}

static int
same_tile(const Lowered *l, const int *ids_a, const int *ids_b, int n)
{
	for (int i = 0; i < n; i++) {
		const Buffer *a = &l->buf[ids_a[i]], *b = &l->buf[ids_b[i]];
		if (a->bytes != b->bytes || a->align != b->align ||
		    a->region != b->region || a->first != b->first ||
		    a->last != b->last || (a->apart < 0) != (b->apart < 0))
			return 0;
	}
	return 1;
}

/* Local index of a buffer id in a tile's sorted id list. */
static int32_t
local_of(const int *ids, int n, int32_t id)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int m = (lo + hi) / 2;
		if (ids[m] < id)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < n && ids[lo] == id ? lo : -1;
}

/* ---- the pass -------------------------------------------------------- */

static int
validate(const Lowered *l, const uint32_t *code_end, Diag *d)
{
	const Chip *c = l->chip;
	for (int i = 0; i < l->nbuf; i++) {
		const Buffer *b = &l->buf[i];
		const char *w = what_of(b->what);
		if (b->tile >= l->tiles)
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "placement: buffer %d (%s) is on tile %u "
			    "of %u",
			    i, w, b->tile, l->tiles);
		if (!b->align || (b->align & (b->align - 1)))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "placement: buffer %d (%s): alignment "
			                "%u is not a power of two",
			                i, w, b->align);
		if (b->first > b->last)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "placement: buffer %d (%s): first step "
			                "%d after last step %d",
			                i, w, b->first, b->last);
		if (b->region != REGION_ANY && b->region != REGION_INTERLEAVED)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "placement: buffer %d (%s): unknown "
			                "region %u",
			                i, w, b->region);
		if (b->apart >= 0 && (b->apart >= l->nbuf || b->apart == i ||
		                      l->buf[b->apart].tile != b->tile))
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "placement: buffer %d (%s): `apart` "
			                "names buffer %d, which is not another "
			                "buffer of tile %u",
			                i, w, b->apart, b->tile);
		if (b->apart < -1)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "placement: buffer %d (%s): `apart` %d",
			                i, w, b->apart);
	}
	for (uint32_t t = 0; code_end && t < l->tiles; t++)
		if (code_end[t] < c->mem_base)
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "placement: tile %u: code ends at 0x%x, "
			    "below 0x%x",
			    t, code_end[t], c->mem_base);
	return IPU_OK;
}

/* place_buffers, or with pack 0 place_measure: the bounds alone, no
 * address given. */
static int
place_run(Lowered *l, const uint32_t *code_end, int pack, PlaceReport *rep,
          Diag *d)
{
	PlaceReport dummy;
	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof *rep);
	rep->worst = -1;
	if (!l || !l->chip)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "placement: no program or no chip");
	int rc = validate(l, code_end, d);
	if (rc)
		return rc;

	const Chip *c = l->chip;
	uint32_t T = l->tiles;
	rep->tiles = T;
	rep->mem_end = c->mem_end;
	rep->mem_bytes = (uint32_t)plan_tile_room(c);
	rep->tile = xcalloc(T ? T : 1, sizeof *rep->tile);
	rep->nbuf = (uint64_t)l->nbuf;

	int *start, *ids;
	int nmax = lower_buffers_by_tile(l, &start, &ids);

	TilePack s;
	plan_pack_init(&s, nmax);
	TileBuf *tb = xcalloc((size_t)nmax + 1, sizeof *tb);
	uint64_t *addr = xcalloc((size_t)nmax + 1, sizeof *addr);

	/* Tiles placed before, by hash (open addressing; -1 = empty). */
	size_t mcap = 16;
	while (mcap < 2 * (size_t)T)
		mcap *= 2;
	uint64_t *mhash = xcalloc(mcap, sizeof *mhash);
	int64_t *mtile = xmalloc(mcap * sizeof *mtile);
	for (size_t i = 0; i < mcap; i++)
		mtile[i] = -1;

	Kinds ks = {0};
	int code_kind = kinds_get(&ks, "code");
	uint64_t *ksum = NULL; /* this tile's bytes by kind */
	int ksum_n = 0;
	int capover = 0;
	uint64_t worst_over = 0;
	int worst = -1;

	for (uint32_t t = 0; t < T; t++) {
		int n = start[t + 1] - start[t];
		const int *tid = ids + start[t];
		uint32_t ce = code_end ? code_end[t] : c->mem_base;
		PlaceTile *pt = &rep->tile[t];
		pt->code = ce - c->mem_base;
		pt->nbuf = (uint32_t)n;

		/* bytes by kind */
		ks.k[code_kind].bytes += pt->code;
		ks.k[code_kind].count++;
		if (pt->code > ks.k[code_kind].tile_max)
			ks.k[code_kind].tile_max = pt->code;
		for (int i = 0; i < n; i++) {
			int k = kinds_get(&ks, l->buf[tid[i]].what);
			if (k >= ksum_n) {
				int nn = ks.cap;
				ksum =
				    xrealloc(ksum, (size_t)nn * sizeof *ksum);
				memset(ksum + ksum_n, 0,
				       (size_t)(nn - ksum_n) * sizeof *ksum);
				ksum_n = nn;
			}
			ksum[k] += l->buf[tid[i]].bytes;
			ks.k[k].bytes += l->buf[tid[i]].bytes;
			ks.k[k].count++;
		}
		/* the kinds so far (ksum has room for ks.cap) */
		for (int k = 0; k < ks.n && k < ksum_n; k++) {
			if (ksum[k] > ks.k[k].tile_max)
				ks.k[k].tile_max = ksum[k];
			ksum[k] = 0;
		}

		/* the tile's buffers in the memory model's terms */
		for (int i = 0; i < n; i++) {
			const Buffer *b = &l->buf[tid[i]];
			tb[i] = (TileBuf){
			    .bytes = b->bytes,
			    .align = b->align,
			    .region = b->region,
			    .first = b->first,
			    .last = b->last,
			    .apart =
			        b->apart < 0 ? -1 : local_of(tid, n, b->apart)};
		}

		/* a tile like an earlier one takes its addresses */
		uint64_t h = tile_hash(tb, n, ce);
		size_t hb = (size_t)h & (mcap - 1);
		int copied = 0;
		for (; pack && mtile[hb] >= 0; hb = (hb + 1) & (mcap - 1)) {
			uint32_t o = (uint32_t)mtile[hb];
			if (mhash[hb] != h || start[o + 1] - start[o] != n ||
			    (code_end ? code_end[o] : c->mem_base) != ce ||
			    !same_tile(l, ids + start[o], tid, n))
				continue;
			const int *oid = ids + start[o];
			int same_apart = 1;
			for (int i = 0; i < n && same_apart; i++) {
				int32_t a = l->buf[oid[i]].apart;
				if (a >= 0 &&
				    local_of(oid, n, a) != tb[i].apart)
					same_apart = 0;
			}
			if (!same_apart)
				continue;
			for (int i = 0; i < n; i++)
				l->buf[tid[i]].addr = l->buf[oid[i]].addr;
			pt->peak = rep->tile[o].peak;
			pt->peak_step = rep->tile[o].peak_step;
			pt->high = rep->tile[o].high;
			copied = 1;
			break;
		}
		if (copied)
			continue;

		pt->peak = plan_tile_live(tb, n, 0, &s, &pt->peak_step);

		if (!pack) {
			/* the memory model's bounds, no packing */
			int32_t is;
			uint64_t il = plan_tile_live(tb, n, 1, &s, &is);
			if (bound_broken(c, pt->code, c->exec_end - c->mem_base,
			                 pt->peak, il) == PLACE_OVER_PACKING)
				continue;
		}
		/* too much code: the data are not placed, but what they would
		 * need is reported with it */
		uint64_t best = !pack ? 0
		                : ce <= c->exec_end
		                    ? plan_tile_pack(c, ce, tb, n, &s, addr)
		                    : UINT64_MAX;
		if (pack && best <= c->mem_end) {
			for (int i = 0; i < n; i++)
				l->buf[tid[i]].addr = (uint32_t)addr[i];
			pt->high = (uint32_t)best;
			mhash[hb] = h;
			mtile[hb] = t;
			continue;
		}
		for (int i = 0; pack && i < n; i++)
			l->buf[tid[i]].addr = 0;
		pt->high = 0;
		GROW(rep->over, rep->nover, capover);
		PlaceOverflow *o = &rep->over[rep->nover++];
		fill_overflow(l, tb, tid, n, &s, t, pt->code,
		              c->exec_end - c->mem_base, best, o);
		if (worst < 0 || o->over > worst_over) {
			worst = rep->nover - 1;
			worst_over = o->over;
		}
	}

	for (uint32_t t = 1; t < T; t++)
		if (rep->tile[t].high > rep->tile[rep->top_tile].high)
			rep->top_tile = t;
	qsort(ks.k, (size_t)ks.n, sizeof *ks.k, cmp_kind);
	rep->kind = ks.k;
	rep->nkind = ks.n;

	rc = IPU_OK;
	if (rep->nover) {
		char line[400];
		rep->worst = worst;
		place_overflow_format(rep, &rep->over[worst], line,
		                      sizeof line);
		rc = diag_set(d, IPU_ERANGE, NULL, 0, 0,
		              "%s: %d of %u tiles do not fit; the worst: %s",
		              pack ? "placement" : "memory model", rep->nover,
		              T, line);
	}

	free(ks.key);
	free(ks.val);
	free(ksum);
	free(mhash);
	free(mtile);
	plan_pack_free(&s);
	free(tb);
	free(addr);
	free(start);
	free(ids);
	if (rep == &dummy)
		place_report_free(rep);
	return rc;
}

/* ---- text ------------------------------------------------------------ */

/* n with thousands separators: 702416 -> "702,416". */
static const char *
commas(char *buf, uint64_t n)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof tmp, "%" PRIu64, n);
	int o = 0;
	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}

void
place_overflow_format(const PlaceReport *rep, const PlaceOverflow *o, char *buf,
                      size_t len)
{
	char a[32], b[32];
	size_t n = 0;
#define PUT(...)                                                               \
	do {                                                                   \
		if (n < len)                                                   \
			n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__);  \
	} while (0)
	if (!len)
		return;
	buf[0] = 0;
	uint64_t all = 0; /* code and data live at o->step */
	for (int i = 0; i < o->nlive; i++)
		all += o->live[i].bytes;
	if (o->kind == PLACE_OVER_CODE) {
		char c[32], e[32];
		PUT("tile %u: %s bytes of code, %s more than the %s where "
		    "instructions can be fetched; with the data live at step "
		    "%d it needs %s bytes (",
		    o->tile, commas(a, o->need), commas(b, o->over),
		    commas(c, o->avail), o->step, commas(e, all));
	} else {
		PUT("tile %u: needs %s bytes", o->tile, commas(a, o->need));
		if (o->kind == PLACE_OVER_INTERLEAVED)
			PUT(" of the interleaved region");
		PUT(" at step %d (", o->step);
	}
	for (int i = 0; i < o->nlive; i++) {
		PUT("%s%s %s", i ? "; " : "", o->live[i].what,
		    commas(a, o->live[i].bytes));
		if (o->live[i].count > 1)
			PUT(" in %u", o->live[i].count);
	}
	PUT(")");
	switch (o->kind) {
	case PLACE_OVER_TOTAL:
		PUT(", %s bytes more than the %s available", commas(a, o->over),
		    commas(b, o->avail));
		break;
	case PLACE_OVER_INTERLEAVED:
		PUT(", %s bytes more than the %s it holds", commas(a, o->over),
		    commas(b, o->avail));
		break;
	case PLACE_OVER_CODE:
		PUT(", %s the tile's %s bytes",
		    all > rep->mem_bytes ? "more than" : "within",
		    commas(a, rep->mem_bytes));
		break;
	default:
		PUT(", within the %s available, but alignment, the element "
		    "rules and fragmentation leave the best packing %s bytes "
		    "past the end (0x%" PRIx64 " > 0x%x)",
		    commas(a, o->avail), commas(b, o->over), o->packed,
		    rep->mem_end);
		break;
	}
#undef PUT
}

int
place_buffers(Lowered *l, const uint32_t *code_end, PlaceReport *rep, Diag *d)
{
	return place_run(l, code_end, 1, rep, d);
}

int
place_measure(const Lowered *l, const uint32_t *code_end, PlaceReport *rep,
              Diag *d)
{
	return place_run((Lowered *)l, code_end, 0, rep, d);
}

void
place_report_print(const PlaceReport *rep, FILE *f)
{
	char a[32], b[32], c[32];
	fprintf(f, "placement: %u tiles, %s buffers", rep->tiles,
	        commas(a, rep->nbuf));
	if (rep->tiles && rep->tile[rep->top_tile].high) {
		const PlaceTile *t = &rep->tile[rep->top_tile];
		fprintf(f,
		        "; highest water 0x%x on tile %u (code %s; %s data "
		        "bytes live at step %d), %s bytes free above it",
		        t->high, rep->top_tile, commas(a, t->code),
		        commas(b, t->peak), t->peak_step,
		        commas(c, rep->mem_end - t->high));
	}
	if (rep->nover)
		fprintf(f, "; %d tile%s do%s not fit", rep->nover,
		        rep->nover == 1 ? "" : "s",
		        rep->nover == 1 ? "es" : "");
	fputc('\n', f);
	for (int i = 0; i < rep->nkind; i++) {
		const PlaceKind *k = &rep->kind[i];
		int code = !strcmp(k->what, "code");
		fprintf(f,
		        "  %-20s %15s bytes in %u %s%s, at most %s on a tile\n",
		        k->what, commas(a, k->bytes), k->count,
		        code ? "tile" : "buffer", k->count == 1 ? "" : "s",
		        commas(b, k->tile_max));
	}
	/* a model far too big overflows on every tile: the first few say
	 * enough */
	enum { SHOWN = 16 };
	for (int i = 0; i < rep->nover && i < SHOWN; i++) {
		char line[1024];
		place_overflow_format(rep, &rep->over[i], line, sizeof line);
		fprintf(f, "%s\n", line);
	}
	if (rep->nover > SHOWN)
		fprintf(f, "... and %d more tiles that do not fit\n",
		        rep->nover - SHOWN);
}

void
place_report_free(PlaceReport *rep)
{
	if (!rep)
		return;
	for (int i = 0; i < rep->nover; i++)
		free(rep->over[i].live);
	free(rep->over);
	free(rep->kind);
	free(rep->tile);
	memset(rep, 0, sizeof *rep);
}

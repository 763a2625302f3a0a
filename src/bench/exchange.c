/*
 * exchange.c - the exchange benchmark: one exchange phase between two global
 * syncs on the chip model, for three patterns, with every received word
 * checked.
 *
 *   p2p         tile --from (0) sends N bytes to tile --to (the tile
 *               with the longest route from the sender)
 *   multicast   tile 0 sends N bytes once; every other tile listens
 *   all-to-all  every tile i sends N bytes to (i + T/2) mod T and receives
 *               N bytes from (i - T/2) mod T: all tiles send and receive at
 *               once, the load of system.md 8.3's aggregate check
 *
 * Every tile runs the same program, assembled from text at run time; the
 * host writes each tile's part (receive pointer, item count, mux source,
 * whether it sends) into a parameter block. Every tile points its receive
 * window and mux before the sync that opens the phase; the count is set
 * right after it (a tile arrives at a sync only when its count is 0).
 * The schedule, relative to the release R of the first sync
 * (docs/bench-exchange.md derives the cycles; P is the rule sup-put, the
 * cycles a CSR write holds the next instruction back, docs/fidelity.md):
 *   R      put $INCOMING_DCOUNT
 *   R + P  the first of ceil(N / 256) back-to-back sends of 64 words, in
 *          both directions (sctl 3: one program for every pair); item j
 *          leaves at R + P + j and arrives latency(s, r) cycles later.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../asm/asm.h"
#include "../sim/sim.h"
#include "tile_kernel.h"

enum {
	SEND_MAX_WORDS = 64, /* send's count field: words-1 in 6 bits */
	PARAM_BYTES = 16,    /* dest pointer, count, mux source, sends */
	BYTES_PER_CYCLE = 4, /* system.md 1.2: receive rate per tile */
};

static const char *const pattern_names[] = {
    [EXCH_P2P] = "p2p",
    [EXCH_MULTICAST] = "multicast",
    [EXCH_ALL_TO_ALL] = "all-to-all",
};

const char *
exch_pattern_name(ExchPattern p)
{
	return pattern_names[p];
}

int
exch_pattern_parse(const char *s, ExchPattern *p)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(s, pattern_names[i])) {
			*p = (ExchPattern)i;
			return 0;
		}
	return -1;
}

/* The data tile s sends: distinct per tile and word, so a word delivered
 * from the wrong tile or to the wrong place shows. */
static uint32_t
payload_word(uint32_t s, uint32_t i, uint64_t seed)
{
	uint32_t x = (uint32_t)seed ^ (s * 0x9e3779b1u) ^ (i * 0x85ebca77u);
	x ^= x >> 15;
	return x * 0x2c1b3c6du;
}

/* Who sends to whom: src[r] is tile r's source, or MUX_NONE. */
static void
plan_pattern(const ExchangeConfig *cfg, const Chip *c, uint32_t T,
             uint32_t *src)
{
	for (uint32_t r = 0; r < T; r++)
		src[r] = MUX_NONE;
	if (cfg->pattern == EXCH_P2P) {
		uint32_t from = cfg->from >= 0 ? (uint32_t)cfg->from : 0;
		uint32_t to = cfg->to >= 0 ? (uint32_t)cfg->to : from == 0;
		for (uint32_t r = 0; cfg->to < 0 && r < T; r++)
			if (r != from && chip_route_cycles(c, from, r) >
			                     chip_route_cycles(c, from, to))
				to = r;
		src[to] = from;
	} else if (cfg->pattern == EXCH_MULTICAST) {
		for (uint32_t r = 1; r < T; r++)
			src[r] = 0;
	} else {
		for (uint32_t r = 0; r < T; r++)
			src[r] = (r + T - T / 2) % T;
	}
}

/* The program's text: the fixed prologue and epilogue around the sends. */
static char *
program_text(uint32_t param, uint32_t src_addr, uint32_t words)
{
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		die("open_memstream failed");
	fprintf(f,
	        "_start:\n"
	        "	setzi $m1, 0x%x\n"
	        "	ld32 $m5, $m1, $mzero, 3\n"
	        "	ld32 $m2, $m1, $mzero, 0\n"
	        "	ld32 $m4, $m1, $mzero, 2\n"
	        "	ld32 $m3, $m1, $mzero, 1\n"
	        "	brz $m5, idle\n"
	        "	put $INCOMING_SINIT, $m2\n"
	        "	put $INCOMING_MUX, $m4\n"
	        "	sync 3\n"
	        "	put $INCOMING_DCOUNT, $m3\n",
	        param);
	for (uint32_t w = 0; w < words; w += SEND_MAX_WORDS) {
		uint32_t n =
		    words - w < SEND_MAX_WORDS ? words - w : SEND_MAX_WORDS;
		fprintf(f, "	send %u, 0x%x, 3\n", n - 1, src_addr / 4 + w);
	}
	fprintf(f, "	sync 3\n"
	           "	br $lr\n"
	           "idle:\n"
	           "	put $INCOMING_SINIT, $m2\n"
	           "	put $INCOMING_MUX, $m4\n"
	           "	sync 3\n"
	           "	put $INCOMING_DCOUNT, $m3\n"
	           "	sync 3\n"
	           "	br $lr\n");
	fclose(f);
	return text;
}

static int
assemble(const char *text, const Chip *c, TileImage *img, Diag *d)
{
	Obj *o, *exe;
	DiagList errs = {0};
	AsmOptions opt = {.chip = c};
	if (asm_source("exchange.s", text, strlen(text), &opt, &o, &errs)) {
		char buf[1024];
		diag_format(&errs.v[0], buf, sizeof buf);
		diaglist_free(&errs);
		die("the exchange program does not assemble: %s", buf);
	}
	LinkOptions lo = {.chip = c};
	int rc = link_objects(&o, 1, &lo, &exe, d);
	obj_free(o);
	return rc ? rc : img_from_obj(exe, img, d);
}

static uint32_t
image_end(const TileImage *img, uint32_t lo)
{
	for (int i = 0; i < img->nseg; i++)
		if (img->seg[i].addr + img->seg[i].size > lo)
			lo = img->seg[i].addr + img->seg[i].size;
	return lo;
}

/* The release of the first sync, from tile 0's trace. */
static uint64_t
first_release(const Tile *t)
{
	for (int i = 0; i < t->ntrace; i++)
		if (t->trace[i].kind == TR_SYNC)
			return t->trace[i].end;
	die("tile %u never synced", t->id);
}

int
bench_exchange(const ExchangeConfig *cfg, ExchangeResult *res, Diag *d)
{
	const Chip *c = cfg->chip ? cfg->chip : chip_default();
	uint32_t T =
	    cfg->tiles && cfg->tiles < c->tiles ? cfg->tiles : c->tiles;
	memset(res, 0, sizeof *res);
	if (T < 2)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "an exchange needs at least 2 tiles");
	if (cfg->pattern != EXCH_P2P && (cfg->from >= 0 || cfg->to >= 0))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "--from and --to choose the tiles of the p2p "
		                "pattern, not of %s",
		                exch_pattern_name(cfg->pattern));
	if (cfg->from >= (int64_t)T || cfg->to >= (int64_t)T)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "--%s %lld: there are tiles 0..%u",
		    cfg->from >= (int64_t)T ? "from" : "to",
		    (long long)(cfg->from >= (int64_t)T ? cfg->from : cfg->to),
		    T - 1);
	if (cfg->bytes == 0 || cfg->bytes % 4)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "--bytes must be a positive multiple of 4 "
		                "(32-bit items), got %u",
		                cfg->bytes);
	uint32_t words = cfg->bytes / 4;
	/* The code grows with the sends; place it first, then the data. */
	char *text = program_text(0, 0, words);
	TileImage img;
	int rc = assemble(text, c, &img, d);
	free(text);
	if (rc)
		return rc;
	uint32_t param = (image_end(&img, c->mem_base) + 15) & ~15u;
	uint32_t src_addr = param + PARAM_BYTES;
	uint32_t dst_addr = src_addr + cfg->bytes;
	img_free(&img);
	if (dst_addr > c->mem_end || cfg->bytes > c->mem_end - dst_addr)
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "%u bytes to send and %u to receive do not "
		                "fit one tile's memory (at most %u each)",
		                cfg->bytes, cfg->bytes,
		                (c->mem_end - src_addr) / 2 & ~3u);
	text = program_text(param, src_addr, words);
	rc = assemble(text, c, &img, d);
	free(text);
	if (rc)
		return rc;

	uint32_t *src = xcalloc(T, sizeof *src);
	uint8_t *sends = xcalloc(T, 1);
	plan_pattern(cfg, c, T, src);
	for (uint32_t r = 0; r < T; r++)
		if (src[r] != MUX_NONE)
			sends[src[r]] = 1;
	ChipConfig cc = {
	    .chip = c, .tiles = T, .threads = cfg->threads, .trace = 1};
	ChipSim *cs = chipsim_new(&cc);
	uint32_t *buf = xcalloc(words, 4);
	res->latency_min = UINT32_MAX;
	for (uint32_t id = 0; id < T; id++) {
		Tile *t = chipsim_tile(cs, id);
		tile_load_image(t, &img);
		uint32_t p[4] = {dst_addr, src[id] == MUX_NONE ? 0 : words,
		                 src[id], sends[id]};
		tile_write(t, param, p, sizeof p);
		if (sends[id]) {
			for (uint32_t i = 0; i < words; i++)
				buf[i] = payload_word(id, i, cfg->seed);
			tile_write(t, src_addr, buf, cfg->bytes);
			res->senders++;
		}
		if (src[id] != MUX_NONE) {
			uint32_t lat = chip_route_cycles(c, src[id], id);
			res->latency_max =
			    lat > res->latency_max ? lat : res->latency_max;
			res->latency_min =
			    lat < res->latency_min ? lat : res->latency_min;
			res->receivers++;
		}
		tile_start(t, img.entry);
	}
	img_free(&img);

	rc = bench_run_chip(cs, "exchange program", cfg->max_cycles,
	                    &res->host_seconds, d);
	if (rc)
		goto done;
	/* Every receiver holds its source's words, in order. */
	for (uint32_t r = 0; r < T; r++) {
		if (src[r] == MUX_NONE)
			continue;
		Tile *t = chipsim_tile(cs, r);
		tile_read(t, dst_addr, buf, cfg->bytes);
		for (uint32_t i = 0; i < words; i++)
			if (buf[i] != payload_word(src[r], i, cfg->seed)) {
				rc = diag_set(
				    d, IPU_EFAULT, NULL, 0, 0,
				    "tile %u received 0x%08x as word "
				    "%u from tile %u, not 0x%08x",
				    r, buf[i], i, src[r],
				    payload_word(src[r], i, cfg->seed));
				goto done;
			}
		if (t->x.last_rx_cycle > res->last_arrival)
			res->last_arrival = t->x.last_rx_cycle;
	}
	res->tiles = T;
	res->bytes = cfg->bytes;
	if (cfg->pattern == EXCH_P2P)
		for (uint32_t r = 0; r < T; r++)
			if (src[r] != MUX_NONE) {
				res->p2p_src = src[r];
				res->p2p_dst = r;
				res->p2p_lead = chip_mux_lead(c, src[r], r);
			}
	res->release = first_release(chipsim_tile(cs, 0));
	res->exchange_cycles = res->last_arrival + 1 - res->release;
	res->program_cycles = chipsim_cycles(cs);
	res->bytes_per_cycle_per_tile =
	    (double)cfg->bytes / (double)res->exchange_cycles;
	res->aggregate_bytes_per_cycle =
	    res->bytes_per_cycle_per_tile * res->receivers;
	res->tb_per_s = res->aggregate_bytes_per_cycle * c->clock_hz / 1e12;
	res->peak_tb_per_s = (double)T * BYTES_PER_CYCLE * c->clock_hz / 1e12;
done:
	free(buf);
	free(src);
	free(sends);
	chipsim_free(cs);
	return rc;
}

/*
 * backend_card.c - the runtime over the card's device interface: the card
 * model ("model:c600") and a card ("hw:N", /dev/ipuN). Both run the same
 * sequence through hw.h's register writes, ioctls and frames; they differ
 * only in the device under hw.h (hw_model.c, hw_linux.c).
 *
 *   open   reset (ICU mailbox), the configuration capture the user gave
 *          (:config=FILE) replayed, our bootloader (kernels/boot.S)
 *          installed by the autoloader on every tile
 *   load   and writes before the run: kept, per tile, as segments
 *   run    first a copy of the bootloader linked in a gap of each tile's
 *          program (so that the program may fill the base of tile memory)
 *          is sent and started; then every tile's segments in frames over
 *          host buffer 0, batch by batch, and the handoff (hw_load, twice);
 *          a tile without a program is started at boot_idle, which returns
 *          at once. Then every tile's contexts polled through TDI until
 *          none runs. The copy's bytes stay in the gap: a program that
 *          reads memory it never wrote sees them (the emulator's zeros on
 *          sim:)
 *   read   and writes after the run: tile debug (TDI) memory words
 *   fault  the tiles in an exception found and named through TDI
 *
 * Cycles exist on the model only: the model chip's from the first issue
 * of the programs' entry (a log mark the model sets; the load and the
 * bootloader's own cycles are excluded) to the last tile's end. A card
 * gives none (no public cycle counter): 0, and max_cycles is not
 * enforced there (a program that never ends is a poll that times out).
 * Host streams (model: only): kept until the run; after the handoff a
 * command table and the streams' bytes in two host buffers attached as
 * host pages, then one host phase (an HSP_GS2 mark) per host sync up to
 * the last a stream names; the reads come back in the data page. A card
 * refuses them: there the tiles' own programs move host data (card.def
 * HOST_*).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/kernels.h"
#include "../sim/card.h"
#include "../sim/sim.h"
#include "../util/util.h"
#include "backend.h"
#include "hw.h"

typedef struct {
	TileImage prog; /* entry and segments (copies) */
	int loaded;     /* an image was loaded: entry is its */
} ModelTile;

/* A host stream queued for the run: a write's bytes (a copy) or a
 * read's destination. */
typedef struct {
	uint32_t sync, tile, addr, len;
	uint8_t *src;
	void *dst;
} CardStream;

typedef struct {
	RtConfig cfg;
	HwDev *hw;
	FILE *log;
	ModelTile *tile;    /* by logical id */
	uint32_t boot_size; /* the bootloader image's bytes */
	int booted;         /* the programs have been sent and run */
	uint64_t entry_cycle;
	uint64_t entry_host_cycles; /* the load's host syncs' */
	CardStream *streams;
	uint32_t nstreams;
} ModelBe;

/* For messages: "model" or "hw". */
static const char *
kind(const ModelBe *m)
{
	return m->cfg.card == RT_CARD_MODEL ? "model" : "hw";
}

static void
drop_segments(ModelTile *t)
{
	for (int i = 0; i < t->prog.nseg; i++)
		free(t->prog.seg[i].bytes);
	free(t->prog.seg);
	memset(t, 0, sizeof *t);
}

static void
drop_streams(ModelBe *m)
{
	for (uint32_t i = 0; i < m->nstreams; i++)
		free(m->streams[i].src);
	free(m->streams);
	m->streams = NULL;
	m->nstreams = 0;
}

static void
mdl_close(void *p)
{
	ModelBe *m = p;
	if (!m)
		return;
	drop_streams(m);
	hw_close(m->hw);
	if (m->log)
		fclose(m->log);
	for (uint32_t i = 0; m->tile && i < m->cfg.tiles; i++)
		drop_segments(&m->tile[i]);
	free(m->tile);
	free(m);
}

/* Reset, configuration, bootloader: the card ready to take frames. */
static int
bring_up(ModelBe *m, ipu_error *err)
{
	int rc = hw_reset(m->hw, err);
	if (!rc && m->cfg.config[0]) {
		uint8_t *bytes;
		size_t len;
		Diag d;
		if (read_file(m->cfg.config, &bytes, &len, &d))
			return rt_error(err, IPU_ERR_IO,
			                "configuration capture: %s", d.msg);
		rc = hw_replay_config(m->hw, bytes, len, m->cfg.config, err);
		free(bytes);
	}
	if (rc)
		return rc;
	TileImage boot;
	Diag d;
	const char *names[] = {"boot"};
	if (kernel_image(names, 1, m->cfg.chip, &boot, &d))
		die("the bootloader does not link: %s", d.msg);
	if (boot.nseg != 1 || boot.entry != m->cfg.chip->mem_base ||
	    img_symbol_addr(&boot, "boot_idle") < 0)
		die("the bootloader's image is not one segment at the base of "
		    "tile memory");
	m->boot_size = boot.seg[0].size;
	rc = hw_install_bootloader(m->hw, boot.seg[0].bytes, boot.seg[0].size,
	                           m->cfg.tiles, err);
	img_free(&boot);
	return rc;
}

static void *
mdl_open(const RtConfig *cfg, ipu_error *err)
{
	ModelBe *m = xcalloc(1, sizeof *m);
	m->cfg = *cfg;
	if (cfg->log[0] && !(m->log = fopen(cfg->log, "wx"))) {
		rt_error(err, IPU_ERR_IO,
		         "%s: cannot create the log %s (it exists, or the "
		         "directory cannot be written); nothing is overwritten",
		         cfg->card == RT_CARD_MODEL ? "model" : "hw", cfg->log);
		free(m);
		return NULL;
	}
	char name[64];
	if (cfg->card == RT_CARD_MODEL)
		snprintf(name, sizeof name, "model:%s:tiles=%u",
		         cfg->chip->name, cfg->tiles);
	else
		snprintf(name, sizeof name, "hw:%u", cfg->card);
	m->tile = xcalloc(cfg->tiles, sizeof *m->tile);
	m->hw = hw_open(name, m->log, err);
	if (!m->hw && m->log && ftell(m->log) == 0) {
		/* no device at all: an empty log is no record */
		fclose(m->log);
		m->log = NULL;
		remove(cfg->log);
	}
	if (!m->hw || bring_up(m, err)) {
		mdl_close(m);
		return NULL;
	}
	return m;
}

static void
push_segment(TileImage *img, uint32_t addr, const uint8_t *src, uint32_t len)
{
	img->seg =
	    xrealloc(img->seg, (size_t)(img->nseg + 1) * sizeof *img->seg);
	TileSegment *s = &img->seg[img->nseg++];
	memset(s, 0, sizeof *s);
	s->addr = addr;
	s->size = len;
	s->bytes = xmalloc(len ? len : 1);
	memcpy(s->bytes, src, len);
}

static void
add_segment(ModelTile *t, uint32_t addr, const void *src, uint32_t len)
{
	TileSegment *last = t->prog.nseg ? &t->prog.seg[t->prog.nseg - 1] : 0;
	if (last && len && last->size && addr == last->addr + last->size &&
	    last->size <= UINT32_MAX - len) {
		/* one run of bytes: fewer frames (a frame per segment) */
		last->bytes = xrealloc(last->bytes, last->size + len);
		memcpy(last->bytes + last->size, src, len);
		last->size += len;
		return;
	}
	push_segment(&t->prog, addr, src, len);
}

static int
mdl_load(void *p, uint32_t tile, const TileImage *img, ipu_error *err)
{
	ModelBe *m = p;
	if (m->booted) {
		/* a new load after a run: the card starts again */
		for (uint32_t i = 0; i < m->cfg.tiles; i++)
			drop_segments(&m->tile[i]);
		drop_streams(m);
		m->booted = 0;
		int rc = bring_up(m, err);
		if (rc)
			return rc;
	}
	ModelTile *t = &m->tile[tile];
	for (int i = 0; i < img->nseg; i++)
		add_segment(t, img->seg[i].addr, img->seg[i].bytes,
		            img->seg[i].size);
	t->prog.entry = img->entry;
	t->loaded = 1;
	return 0;
}

/* Tile memory through TDI, a word at a time (bytes at the edges read and
 * written back). */
static int
tdi_copy(ModelBe *m, uint32_t tile, uint32_t addr, uint8_t *buf, uint32_t len,
         int write, ipu_error *err)
{
	uint32_t p = chip_physical(m->cfg.chip, tile);
	for (uint32_t a = addr & ~3u; a < addr + len; a += 4) {
		uint8_t w[4];
		uint32_t v;
		int rc = hw_tile_read(m->hw, p, 0, a, &v, err);
		if (rc)
			return rc;
		put_le32(w, v);
		for (uint32_t b = 0; b < 4; b++) {
			if (a + b < addr || a + b >= addr + len)
				continue;
			if (write)
				w[b] = buf[a + b - addr];
			else
				buf[a + b - addr] = w[b];
		}
		if (write &&
		    (rc = hw_tile_write(m->hw, p, 0, a, get_le32(w), err)))
			return rc;
	}
	return 0;
}

static int
mdl_write(void *p, uint32_t tile, uint32_t addr, const void *src, uint32_t len,
          ipu_error *err)
{
	ModelBe *m = p;
	if (!m->booted) {
		add_segment(&m->tile[tile], addr, src, len);
		return 0;
	}
	return tdi_copy(m, tile, addr, (uint8_t *)src, len, 1, err);
}

static int
mdl_read(void *p, uint32_t tile, uint32_t addr, void *dst, uint32_t len,
         ipu_error *err)
{
	ModelBe *m = p;
	if (!m->booted)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: tile memory is read after the run (the "
		                "programs reach the card when it starts)",
		                kind(m));
	return tdi_copy(m, tile, addr, dst, len, 0, err);
}

static int
queue_stream(ModelBe *m, uint32_t sync, uint32_t tile, uint32_t addr,
             const void *src, void *dst, uint32_t len, ipu_error *err)
{
	if (m->cfg.card != RT_CARD_MODEL)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "hw: host streams need the tiles' own host "
		                "exchange (on a card a host sync moves no data "
		                "by itself), which our programs do not have; "
		                "model: and sim: serve them");
	m->streams =
	    xrealloc(m->streams, (m->nstreams + 1) * sizeof *m->streams);
	CardStream *s = &m->streams[m->nstreams++];
	*s = (CardStream){
	    .sync = sync, .tile = tile, .addr = addr, .len = len, .dst = dst};
	if (src) {
		s->src = xmalloc(len ? len : 1);
		memcpy(s->src, src, len);
	}
	return 0;
}

static int
mdl_stream(void *p, uint32_t sync, uint32_t tile, uint32_t addr,
           const void *src, uint32_t len, ipu_error *err)
{
	return queue_stream(p, sync, tile, addr, src, NULL, len, err);
}

static int
mdl_stream_read(void *p, uint32_t sync, uint32_t tile, uint32_t addr, void *dst,
                uint32_t len, ipu_error *err)
{
	return queue_stream(p, sync, tile, addr, NULL, dst, len, err);
}

/* Whole host pages for n bytes (at least one). */
static uint32_t
host_pages(size_t n)
{
	size_t pages = n ? (n + CARD_HOST_PAGE - 1) / CARD_HOST_PAGE : 1;
	if (pages > UINT32_MAX / CARD_HOST_PAGE)
		die("host streams of %zu bytes", n);
	return (uint32_t)pages * CARD_HOST_PAGE;
}

/* After the handoff, the programs wait in their first host sync: the
 * streams' table and bytes attached as host pages, a host phase per host
 * sync up to the last a stream names, the reads copied out. */
static int
serve_streams(ModelBe *m, ipu_error *err)
{
	size_t bytes = 0;
	uint32_t phases = 0;
	for (uint32_t i = 0; i < m->nstreams; i++) {
		bytes += (m->streams[i].len + 3u) & ~3u;
		if (m->streams[i].sync >= phases)
			phases = m->streams[i].sync + 1;
	}
	uint32_t size[2] = {
	    host_pages(4 + (size_t)4 * CARD_HOST_ENTRY_WORDS * m->nstreams),
	    host_pages(bytes)};
	uint8_t *page[2] = {xcalloc(1, size[0]), xcalloc(1, size[1])};
	uint8_t *tab = page[CARD_HOST_TABLE_PAGE],
	        *data = page[CARD_HOST_DATA_PAGE];
	put_le32(tab, m->nstreams);
	uint32_t off = 0;
	for (uint32_t i = 0; i < m->nstreams; i++) {
		const CardStream *s = &m->streams[i];
		uint8_t *e = tab + 4 + 4 * CARD_HOST_ENTRY_WORDS * i;
		put_le32(e, s->sync);
		put_le32(e + 4, chip_physical(m->cfg.chip, s->tile));
		put_le32(e + 8, s->addr);
		put_le32(e + 12, s->len | (s->dst ? CARD_HOST_TO_HOST : 0));
		put_le32(e + 16, off);
		if (s->src)
			memcpy(data + off, s->src, s->len);
		off += (s->len + 3u) & ~3u;
	}
	int rc = hw_attach_pages(m->hw, (void *const *)page, size, 2, err);
	for (uint32_t k = 0; !rc && k < phases; k++)
		rc = hw_host_phase(m->hw, k, err);
	off = 0;
	for (uint32_t i = 0; !rc && i < m->nstreams; i++) {
		const CardStream *s = &m->streams[i];
		if (s->dst)
			memcpy(s->dst, data + off, s->len);
		off += (s->len + 3u) & ~3u;
	}
	for (uint32_t i = 0; i < 2; i++) {
		ipu_error e2;
		int rc2 = hw_detach_buffer(m->hw, i, rc ? &e2 : err);
		if (!rc)
			rc = rc2;
		free(page[i]);
	}
	return rc;
}

/* After a load or run that did not finish: the first tile TDI finds in
 * an exception, named (during a load, boot_at[tile] the address of the
 * bootloader that ran there: a stop of its is named as the frame it
 * refused); else the first that still runs; with the load's own error. */
static int
diagnose(ModelBe *m, const uint32_t *boot_at, ipu_error *err)
{
	for (uint32_t i = 0; i < m->cfg.tiles; i++) {
		uint32_t p = chip_physical(m->cfg.chip, i), sts;
		ipu_error e2;
		if (hw_tile_states(m->hw, p, &sts, &e2))
			continue;
		for (int c = 0; c < CHIP_CONTEXTS; c++) {
			if ((sts >> 2 * c & 3) != CARD_MODEL_CTX_EXCPT)
				continue;
			char line[300];
			uint32_t pc = 0, sr = 0;
			if (hw_tile_report(m->hw, p, line, sizeof line, &e2) ||
			    hw_tile_pc(m->hw, p, (uint32_t)c, &pc, &e2) ||
			    hw_tile_status(m->hw, p, (uint32_t)c, &sr, &e2))
				continue;
			char why[200], stop[128] = "";
			snprintf(why, sizeof why, "%.199s", err->msg);
			if (boot_at) {
				TileImage boot;
				Diag d;
				const char *names[] = {"boot"};
				if (kernel_image(names, 1, m->cfg.chip, &boot,
				                 &d))
					die("the bootloader does not link: %s",
					    d.msg);
				const char *s =
				    hw_boot_stop(&boot, boot_at[i], pc);
				if (s)
					snprintf(stop, sizeof stop,
					         " our bootloader refused %s;",
					         s);
				img_free(&boot);
			}
			rt_error(err, IPU_ERR_FAULT,
			         "tile %u (TDI): %.300s;%s %s", i, line, stop,
			         why);
			err->tile = i;
			err->context = c;
			err->pc = pc;
			err->fault_type = (int)(sr >> 4 & 15);
			snprintf(err->fault_name, sizeof err->fault_name, "%s",
			         fault_type_name((FaultType)err->fault_type));
			return IPU_ERR_FAULT;
		}
	}
	/* none excepted: the first tile still running (a hang) */
	for (uint32_t i = 0; i < m->cfg.tiles; i++) {
		uint32_t p = chip_physical(m->cfg.chip, i), sts;
		ipu_error e2;
		char line[300];
		if (hw_tile_states(m->hw, p, &sts, &e2) || !sts ||
		    hw_tile_report(m->hw, p, line, sizeof line, &e2))
			continue;
		char why[200];
		snprintf(why, sizeof why, "%.199s", err->msg);
		int kind = err->kind;
		rt_error(err, kind, "tile %u (TDI): %.300s; %s", i, line, why);
		err->tile = i;
		return kind;
	}
	return err->kind;
}

/* The bootloader linked at g. */
static void
link_boot(const ModelBe *m, uint32_t g, TileImage *out)
{
	LinkPlace at = {".text.boot", g};
	Diag d;
	const char *names[] = {"boot"};
	if (kernel_image_at(names, 1, m->cfg.chip, &at, 1, out, &d))
		die("the bootloader does not link at 0x%x: %s", g, d.msg);
}

/* The bootloader linked where it fits in no segment of the tile's
 * program, nor in the first one's area, as high as it can be. */
static int
relocated_boot(ModelBe *m, uint32_t tile, TileImage *out, ipu_error *err)
{
	const Chip *c = m->cfg.chip;
	const TileImage *prog = &m->tile[tile].prog;
	uint32_t size = m->boot_size;
	uint32_t top = c->exec_end < c->mem_end ? c->exec_end : c->mem_end;
	uint32_t g = (top - size) & ~7u;
	for (int moved = 1; moved;) {
		moved = 0;
		for (int i = 0; i < prog->nseg; i++) {
			const TileSegment *s = &prog->seg[i];
			if (s->addr < g + size && g < s->addr + s->size) {
				g = s->addr < size ? 0 : (s->addr - size) & ~7u;
				moved = 1;
			}
		}
		if (g < c->mem_base + CARD_BOOT_AREA)
			return rt_error(
			    err, IPU_ERR_ARGUMENT,
			    "%s: tile %u: no %u free bytes for the "
			    "bootloader in executable memory outside "
			    "the program (its code and the tensors "
			    "written before the run fill 0x%x..0x%x); "
			    "this package runs on sim: only",
			    kind(m), tile, size, c->mem_base + CARD_BOOT_AREA,
			    top);
	}
	link_boot(m, g, out);
	return 0;
}

/* Where a copy of the bootloader that ends at the tile's entry starts
 * (the fall-through handoff, kernels/boot.S): below the entry, in
 * executable memory, above the installed bootloader; 0 if it cannot. */
static uint32_t
below_entry(const ModelBe *m, const ModelTile *t)
{
	const Chip *c = m->cfg.chip;
	uint32_t e = t->prog.entry;
	if (!t->loaded || e % 8 || e > c->exec_end ||
	    e < c->mem_base + 2 * m->boot_size)
		return 0;
	return e - m->boot_size;
}

/* The program's bytes in [lo, hi): its segments in order (a later one
 * over an earlier), zeros where none (the emulator's fresh memory). */
static uint8_t *
region_bytes(const TileImage *prog, uint32_t lo, uint32_t hi)
{
	uint8_t *out = xcalloc(1, hi - lo);
	for (int i = 0; i < prog->nseg; i++) {
		const TileSegment *s = &prog->seg[i];
		uint32_t a = s->addr > lo ? s->addr : lo,
		         b = s->addr + s->size < hi ? s->addr + s->size : hi;
		if (a < b)
			memcpy(out + (a - lo), s->bytes + (a - s->addr), b - a);
	}
	return out;
}

/* The first stage of the fall-through load (fall_through): the program's
 * bytes outside the installed bootloader's [base, base + boot) and the
 * copy's [g, entry), then the copy (boot), started at its base. */
static void
first_stage(const ModelBe *m, const TileImage *prog, uint32_t g,
            TileImage *boot, TileImage *out)
{
	const Chip *c = m->cfg.chip;
	const uint32_t cut[2][2] = {{c->mem_base, c->mem_base + m->boot_size},
	                            {g, prog->entry}};
	memset(out, 0, sizeof *out);
	for (int i = 0; i < prog->nseg; i++) {
		const TileSegment *s = &prog->seg[i];
		/* the parts of [a, end) outside both cuts (cut[0] is below
		 * cut[1]) */
		uint32_t a = s->addr, end = s->addr + s->size;
		for (int k = 0; k <= 2 && a < end; k++) {
			uint32_t b = k < 2 && cut[k][0] < end ? cut[k][0] : end;
			if (b > a)
				push_segment(out, a, s->bytes + (a - s->addr),
				             b - a);
			if (k < 2 && cut[k][1] > a)
				a = cut[k][1];
		}
	}
	for (int i = 0; i < boot->nseg; i++)
		push_segment(out, boot->seg[i].addr, boot->seg[i].bytes,
		             boot->seg[i].size);
	out->entry = boot->entry;
}

/* Send each tile its image (prog[tile]) and hand off, with the bytes
 * raw[tile] (may be NULL) at the handoff. */
static int
send(ModelBe *m, TileImage *prog, uint8_t **raw, uint32_t *raw_len,
     ipu_error *err)
{
	HwTileImage *ts = xcalloc(m->cfg.tiles, sizeof *ts);
	for (uint32_t i = 0; i < m->cfg.tiles; i++) {
		ts[i].physical = chip_physical(m->cfg.chip, i);
		ts[i].prog = &prog[i];
		ts[i].raw = raw ? raw[i] : NULL;
		ts[i].raw_len = raw ? raw_len[i] : 0;
	}
	int rc = hw_load(m->hw, ts, m->cfg.tiles, CARD_HANDOFF_MARK, err);
	free(ts);
	return rc;
}

/* After the handoff: every tile's contexts through TDI until none runs
 * (the model has run the programs to their end within the handoff, so
 * one read a tile; a card's programs run on while the host polls). An
 * exception ends the wait: IPU_ERR_FAULT for diagnose to name. */
static int
wait_programs(ModelBe *m, ipu_error *err)
{
	uint32_t next = 0;
	for (long polls = 0; next < m->cfg.tiles; polls++) {
		uint32_t sts;
		int rc = hw_tile_states(m->hw, chip_physical(m->cfg.chip, next),
		                        &sts, err);
		if (rc)
			return rc;
		int running = 0;
		for (int c = 0; c < CHIP_CONTEXTS; c++) {
			uint32_t st = sts >> 2 * c & 3;
			if (st == CARD_MODEL_CTX_EXCPT)
				return rt_error(err, IPU_ERR_FAULT,
				                "a context stopped in an "
				                "exception");
			running |= st == CARD_MODEL_CTX_RUN;
		}
		if (!running) {
			next++;
			continue;
		}
		if (polls >= RT_CARD_POLLS)
			return rt_error(err, IPU_ERR_TIMEOUT,
			                "the programs did not end (%d reads "
			                "of the tiles' context states)",
			                RT_CARD_POLLS);
	}
	return 0;
}

/* The stages' images and the handoff's bytes. Fall-through (every
 * loaded tile's entry leaves room below it for a copy of the bootloader
 * above the installed one): first the program but for the installed
 * bootloader's bytes and the copy's, with the copy, started; then the
 * installed bootloader's bytes and the entry, after which the copy waits
 * in its last sync; and at the handoff the copy's bytes, the program's
 * own (raw), over which it falls into the entry. So every byte of the
 * program arrives, however full its executable memory. Else (a program
 * that starts near the base) the copy goes in a gap of the program
 * (relocated_boot) and the whole program follows. A tile without a
 * program gets a copy in a gap that returns at once (boot_idle). */
typedef struct {
	TileImage *boot;  /* the copies */
	TileImage *first; /* fall-through: the first stage's (not owning) */
	TileImage *second;
	uint8_t **raw;
	uint32_t *raw_len;
	int fall;
} Stages;

static void
stages_free(const ModelBe *m, Stages *st)
{
	for (uint32_t i = 0; i < m->cfg.tiles; i++) {
		img_free(&st->boot[i]);
		if (st->fall) {
			img_free(&st->first[i]); /* each owns its bytes */
			img_free(&st->second[i]);
			free(st->raw[i]);
		}
	}
	free(st->boot);
	free(st->first);
	free(st->second);
	free(st->raw);
	free(st->raw_len);
}

static int
plan_stages(ModelBe *m, Stages *st, ipu_error *err)
{
	const Chip *c = m->cfg.chip;
	uint32_t n = m->cfg.tiles;
	memset(st, 0, sizeof *st);
	st->fall = 1;
	for (uint32_t i = 0; i < n; i++)
		if (m->tile[i].loaded && !below_entry(m, &m->tile[i]))
			st->fall = 0;
	st->boot = xcalloc(n, sizeof *st->boot);
	if (st->fall) {
		st->first = xcalloc(n, sizeof *st->first);
		st->second = xcalloc(n, sizeof *st->second);
		st->raw = xcalloc(n, sizeof *st->raw);
		st->raw_len = xcalloc(n, sizeof *st->raw_len);
	}
	for (uint32_t i = 0; i < n; i++) {
		ModelTile *t = &m->tile[i];
		uint32_t g = st->fall ? below_entry(m, t) : 0;
		if (!g) {
			int rc = relocated_boot(m, i, &st->boot[i], err);
			if (rc)
				return rc;
			if (!t->loaded) /* the copy's */
				t->prog.entry = (uint32_t)img_symbol_addr(
				    &st->boot[i], "boot_idle");
			if (st->fall) {
				/* GO at the handoff's first sync: no raw
				 * bytes */
				push_segment(&st->first[i],
				             st->boot[i].seg[0].addr,
				             st->boot[i].seg[0].bytes,
				             st->boot[i].seg[0].size);
				st->first[i].entry = st->boot[i].entry;
				st->second[i].entry = t->prog.entry;
				for (int k = 0; k < t->prog.nseg; k++)
					push_segment(&st->second[i],
					             t->prog.seg[k].addr,
					             t->prog.seg[k].bytes,
					             t->prog.seg[k].size);
			}
			continue;
		}
		link_boot(m, g, &st->boot[i]);
		if (st->boot[i].nseg != 1 ||
		    st->boot[i].seg[0].addr + st->boot[i].seg[0].size !=
		        t->prog.entry)
			die("the bootloader's copy does not end at 0x%x",
			    t->prog.entry);
		first_stage(m, &t->prog, g, &st->boot[i], &st->first[i]);
		uint8_t *low = region_bytes(&t->prog, c->mem_base,
		                            c->mem_base + m->boot_size);
		push_segment(&st->second[i], c->mem_base, low, m->boot_size);
		free(low);
		st->second[i].entry = t->prog.entry;
		st->raw[i] = region_bytes(&t->prog, g, t->prog.entry);
		st->raw_len[i] = m->boot_size;
	}
	return 0;
}

static int
mdl_run(void *p, uint64_t max_cycles, ipu_progress_fn progress,
        void *progress_ctx, ipu_error *err)
{
	(void)progress, (void)progress_ctx;
	ModelBe *m = p;
	CardSim *cs = hw_model(m->hw); /* NULL on a card */
	ChipSim *chip = cs ? cardsim_chip(cs) : NULL;
	m->booted = 1;
	Stages st;
	int rc = plan_stages(m, &st, err);
	if (rc) {
		stages_free(m, &st);
		return rc; /* nothing was sent: no tile to diagnose */
	}
	/* where the bootloader that takes each stage runs: the installed
	 * one, then the copies */
	uint32_t *at = xcalloc(m->cfg.tiles, sizeof *at);
	for (uint32_t i = 0; i < m->cfg.tiles; i++)
		at[i] = m->cfg.chip->mem_base;
	rc = send(m, st.fall ? st.first : st.boot, NULL, NULL, err);
	if (rc) {
		stages_free(m, &st);
		rc = diagnose(m, at, err);
		free(at);
		return rc;
	}
	/* the model's clock of the programs: their entry's first issue
	 * (not the card's: a card has no such mark) */
	for (uint32_t i = 0; chip && i < m->cfg.tiles; i++) {
		ModelTile *t = &m->tile[i];
		if (t->loaded && sim_mark(chipsim_tile(chip, i), t->prog.entry,
		                          SIM_MARK_LOG))
			die("entry 0x%x is not code", t->prog.entry);
	}
	if (cs)
		cardsim_set_max_cycles(cs, max_cycles);
	TileImage *progs = xcalloc(m->cfg.tiles, sizeof *progs);
	for (uint32_t i = 0; i < m->cfg.tiles; i++)
		progs[i] = st.fall ? st.second[i] : m->tile[i].prog;
	for (uint32_t i = 0; i < m->cfg.tiles; i++)
		at[i] = st.boot[i].seg[0].addr;
	rc = send(m, progs, st.raw, st.raw_len, err);
	int loading = rc != 0;
	free(progs);
	stages_free(m, &st);
	/* the programs' host syncs from here (the load's are not theirs) */
	m->entry_host_cycles = chip ? chipsim_host_cycles(chip) : 0;
	if (!rc && m->nstreams)
		rc = serve_streams(m, err);
	drop_streams(m);
	if (!rc)
		rc = wait_programs(m, err);
	m->entry_cycle = UINT64_MAX;
	for (uint32_t i = 0; chip && i < m->cfg.tiles; i++) {
		Tile *tl = chipsim_tile_if_exists(chip, i);
		if (tl && tl->obs && tl->obs->nlog &&
		    tl->obs->log[0].cycle < m->entry_cycle)
			m->entry_cycle = tl->obs->log[0].cycle;
	}
	if (rc)
		rc = diagnose(m, loading ? at : NULL, err);
	free(at);
	return rc;
}

static void
mdl_counters(void *p, uint32_t tile, ipu_counters *out)
{
	ModelBe *m = p;
	if (!hw_model(m->hw))
		return; /* a card: no counters we know how to read */
	rt_backend_sim.counters(cardsim_chip(hw_model(m->hw)), tile, out);
	if (out->cycles >= m->entry_cycle)
		out->cycles -= m->entry_cycle;
}

static uint64_t
mdl_cycles(void *p)
{
	ModelBe *m = p;
	if (!hw_model(m->hw))
		return 0;
	uint64_t end = chipsim_cycles(cardsim_chip(hw_model(m->hw)));
	return end >= m->entry_cycle ? end - m->entry_cycle : 0;
}

static uint64_t
mdl_host_cycles(void *p)
{
	ModelBe *m = p;
	return hw_model(m->hw)
	           ? chipsim_host_cycles(cardsim_chip(hw_model(m->hw))) -
	                 m->entry_host_cycles
	           : 0;
}

const RtBackend rt_backend_model = {
    .name = "model",
    .open = mdl_open,
    .close = mdl_close,
    .load = mdl_load,
    .write = mdl_write,
    .read = mdl_read,
    .stream_write = mdl_stream,
    .stream_read = mdl_stream_read,
    .run = mdl_run,
    .counters = mdl_counters,
    .cycles = mdl_cycles,
    .host_cycles = mdl_host_cycles,
    .write_trace = NULL,
};

/* The same over /dev/ipuN: never run on a card (docs/hardware.md). */
const RtBackend rt_backend_hw = {
    .name = "hw",
    .open = mdl_open,
    .close = mdl_close,
    .load = mdl_load,
    .write = mdl_write,
    .read = mdl_read,
    .stream_write = mdl_stream,
    .stream_read = mdl_stream_read,
    .run = mdl_run,
    .counters = mdl_counters,
    .cycles = mdl_cycles,
    .host_cycles = mdl_host_cycles,
    .write_trace = NULL,
};

/*
 * card.c - the register-level card model (card.h).
 *
 * The BAR is a word array: a register the model gives no meaning to reads
 * back what was written last (so a configuration capture replays into it).
 * The meaningful ones:
 *   AUTOLD_CSR/TARGET/DATA  the autoloader: DATA words gather in a buffer;
 *                           a GO with DATA_PRESENT takes them as the image;
 *                           a GO without it writes the image at the base of
 *                           tile memory of tiles 0..CSR's tile field and
 *                           starts their supervisors there (DECISION).
 *   HSP_GS1                 a mark 1: a batch of frames in host buffer 0,
 *                           one frame per tile per host sync into our
 *                           bootloader's frame area; another mark: the
 *                           handoff, GO to every started tile (and with
 *                           a BOOT_RAW table in buffer 0, at the next
 *                           sync each listed tile's bytes) and the
 *                           program run to its end (DECISIONs, card.def).
 *                           The mark reads 0 once the chip has taken it.
 *   HSP_GS2                 after the handoff, a mark 1 is a host phase
 *                           while the tiles wait in a host sync: the
 *                           command table's transfers for it (host
 *                           buffers HOST_TABLE_PAGE, HOST_DATA_PAGE), the
 *                           programs run on to their next host sync or
 *                           end, and the mark cleared (DECISION,
 *                           MODEL_HOST_PHASE); otherwise stored
 *   TDI block               per tile, by physical id: context states from
 *                           the emulated contexts, RUN_BREAK, debug data
 *                           and instruction injection (tile_debug_exec).
 * ioctls check what the driver checks on the argument's face: a buffer
 * attach needs a non-empty buffer; anything before USER_ATTACH is refused.
 */
#include "card.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../target/card.h"
#include "../util/util.h"

typedef struct {
	void *ptr;
	uint32_t size;
} CardBuffer;

/* The TDI registers of one tile that the model keeps (the rest are
 * computed from the tile when read). */
typedef struct {
	uint32_t run_break, owner, status, excpt_state;
} TdiRegs;

struct CardSim {
	ChipConfig cfg;
	ChipSim *chip;
	uint32_t *bar; /* CARD_BAR_SIZE / 4 words */
	int attached;  /* USER_ATTACH seen */
	int monitoring;
	uint32_t resets;
	CardBuffer *buf; /* by index */
	uint32_t nbuf;
	/* autoloader */
	uint32_t ald[CARD_BOOT_AREA / 4];
	uint32_t nald;  /* words written to DATA since CSR was cleared */
	uint32_t *boot; /* the image taken by a GO with DATA_PRESENT */
	uint32_t nboot;
	TdiRegs *tdi;        /* by physical id */
	uint64_t max_cycles; /* of the programs, from the handoff */
	int handed_off;      /* the programs run: HSP_GS2 serves phases */
	uint32_t phase;      /* host phases served since the handoff */
	uint64_t limit;      /* the handoff's cycle bound (max_cycles) */
	RunStatus run;       /* the last run's */
	ChipError run_err;
};

static int fail(char *msg, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return -1;
}

CardSim *
cardsim_new(const ChipConfig *cfg)
{
	CardSim *cs = xcalloc(1, sizeof *cs);
	cs->cfg = *cfg;
	cs->chip = chipsim_new(cfg);
	cs->bar = xcalloc(CARD_BAR_SIZE / 4, sizeof *cs->bar);
	cs->tdi = xcalloc(cfg->chip->tiles, sizeof *cs->tdi);
	cs->max_cycles = UINT64_MAX;
	chipsim_set_host_stop(cs->chip, 0);
	return cs;
}

void
cardsim_free(CardSim *cs)
{
	if (!cs)
		return;
	chipsim_free(cs->chip);
	free(cs->bar);
	free(cs->buf);
	free(cs->boot);
	free(cs->tdi);
	free(cs);
}

ChipSim *
cardsim_chip(CardSim *cs)
{
	return cs->chip;
}

uint32_t
cardsim_resets(const CardSim *cs)
{
	return cs->resets;
}

void *
cardsim_buffer(const CardSim *cs, uint32_t index, uint32_t *size)
{
	if (index >= cs->nbuf || !cs->buf[index].ptr)
		return NULL;
	*size = cs->buf[index].size;
	return cs->buf[index].ptr;
}

/* The ICU reset: a fresh chip, every register back to 0. */
static void
reset(CardSim *cs)
{
	chipsim_free(cs->chip);
	cs->chip = chipsim_new(&cs->cfg);
	chipsim_set_host_stop(cs->chip, 0);
	memset(cs->bar, 0, CARD_BAR_SIZE / 4 * sizeof *cs->bar);
	memset(cs->tdi, 0, cs->cfg.chip->tiles * sizeof *cs->tdi);
	cs->nald = 0;
	free(cs->boot);
	cs->boot = NULL;
	cs->nboot = 0;
	cs->handed_off = 0;
	cs->resets++;
}

/* The emulated tile at a physical id, or NULL if the model's chip has no
 * such tile (a device of fewer tiles). */
static Tile *
tile_at(CardSim *cs, uint32_t physical, int create)
{
	const Chip *c = chipsim_chip(cs->chip);
	if (physical >= c->tiles)
		return NULL;
	uint32_t logical = chip_logical(c, physical);
	if (logical >= chipsim_tiles(cs->chip))
		return NULL;
	return create ? chipsim_tile(cs->chip, logical)
	              : chipsim_tile_if_exists(cs->chip, logical);
}

static uint32_t
ctx_state(const Tile *t, const TdiRegs *r, int ci)
{
	if (t && t->etype[ci] != FAULT_NONE && t->ctx[ci].state == CTXS_FAULTED)
		return CARD_MODEL_CTX_EXCPT;
	int active = t && (t->ctx[ci].state == CTXS_RUN ||
	                   t->ctx[ci].state == CTXS_SYNC);
	if (r->run_break >> ci & 1)
		return CARD_MODEL_CTX_BREAK;
	return active ? CARD_MODEL_CTX_RUN : CARD_MODEL_CTX_IDLE;
}

static uint32_t *
dbg_data(Tile *t, uint32_t ctx)
{
	return ctx ? &t->ctx[ctx].dbg_data : &t->sup.dbg_data;
}

static int
tdi_read(CardSim *cs, uint32_t physical, uint32_t reg, uint32_t *v)
{
	TdiRegs *r = &cs->tdi[physical];
	Tile *t = tile_at(cs, physical, 0);
	*v = 0;
	switch (reg) {
	case CARD_TDI_CTXT_STATUS:
		for (int ci = 0; ci < CHIP_CONTEXTS; ci++)
			*v |= ctx_state(t, r, ci) << (2 * ci);
		break;
	case CARD_TDI_RUN_BREAK:
		*v = r->run_break;
		break;
	case CARD_TDI_INSN_OWNER:
		*v = r->owner;
		break;
	case CARD_TDI_EXCPT_STATE:
		*v = r->excpt_state;
		break;
	case CARD_TDI_DATA:
		if (t)
			*v = *dbg_data(t, r->owner);
		break;
	case CARD_TDI_STATUS:
		*v = r->status;
		break;
	case CARD_TDI_DCOUNT:
		if (t)
			*v = t->x.dcount;
		break;
	case CARD_TDI_XCTL:
		if (t)
			*v = t->sup.exch[0xa9 - 0xa0]; /* $EXCHANGE_CTL */
		break;
	}
	return 0;
}

static int
tdi_write(CardSim *cs, uint32_t physical, uint32_t reg, uint32_t v, char *msg,
          size_t len)
{
	TdiRegs *r = &cs->tdi[physical];
	switch (reg) {
	case CARD_TDI_RUN_BREAK:
		r->run_break = v & ((1u << CHIP_CONTEXTS) - 1);
		return 0;
	case CARD_TDI_INSN_OWNER:
		if (v >= CHIP_CONTEXTS)
			return fail(msg, len,
			            "TDI %u: owner context %u is not "
			            "0..6",
			            physical, v);
		r->owner = v;
		return 0;
	case CARD_TDI_EXCPT_STATE:
		r->excpt_state = v;
		return 0;
	case CARD_TDI_EXCPT_CLEAR:
		/* A stop by RUN_BREAK is the RUN_BREAK bit itself here, and
		 * resuming a faulted context is not modelled: nothing. */
		return 0;
	case CARD_TDI_STATUS_CLEAR:
		r->status &= ~v;
		return 0;
	case CARD_TDI_DATA: {
		Tile *t = tile_at(cs, physical, 1);
		if (t)
			*dbg_data(t, r->owner) = v;
		return 0;
	}
	case CARD_TDI_INSN: {
		Tile *t = tile_at(cs, physical, 1);
		char why[200];
		r->status &= ~(uint32_t)CARD_TDI_FAILED;
		if (!t) {
			r->status |= 1;
			return 0;
		}
		uint32_t st = ctx_state(t, r, (int)r->owner);
		/* The context must be stopped or idle (the driver stops
		 * it first): else the instruction fails (DECISION). */
		if (st == CARD_MODEL_CTX_RUN) {
			r->status |= 1;
			return 0;
		}
		if (tile_debug_exec(t, (int)r->owner, v, why, sizeof why))
			r->status |= 2;
		return 0;
	}
	}
	return 0; /* read-only or unmodelled: ignored */
}

static int run_chip(CardSim *cs, uint32_t stop, uint64_t limit);

/* The autoloader's second GO: the image into tiles 0..last, supervisors
 * started at the base of tile memory. */
static int
autoload(CardSim *cs, uint32_t csr, char *msg, size_t len)
{
	const Chip *c = chipsim_chip(cs->chip);
	uint32_t target = cs->bar[CARD_REG_AUTOLD_TARGET / 4];
	if (csr & CARD_AUTOLD_DATA_PRESENT) {
		uint32_t kib = target >> CARD_AUTOLD_ADDR_SHIFT & 0x3ff;
		if (!cs->nald || kib * 1024 != cs->nald * 4)
			return fail(msg, len,
			            "autoloader: %u words written to DATA but "
			            "TARGET says %u KiB",
			            cs->nald, kib);
		if ((csr & CARD_AUTOLD_PTR_MASK) !=
		    ((cs->nald - 1) & CARD_AUTOLD_PTR_MASK))
			return fail(
			    msg, len,
			    "autoloader: load pointer %u does not match "
			    "%u words",
			    csr & CARD_AUTOLD_PTR_MASK, cs->nald);
		free(cs->boot);
		cs->boot = xmalloc(cs->nald * 4);
		memcpy(cs->boot, cs->ald, cs->nald * 4);
		cs->nboot = cs->nald;
		return 0;
	}
	if (!cs->boot)
		return fail(msg, len,
		            "autoloader: GO to tiles without an "
		            "image (no GO with DATA_PRESENT first)");
	uint32_t last = csr >> CARD_AUTOLD_TILE_SHIFT & CARD_AUTOLD_TILE_MASK;
	if (last >= chipsim_tiles(cs->chip))
		return fail(msg, len,
		            "autoloader: tiles 0..%u, but the model's chip has "
		            "%u",
		            last, chipsim_tiles(cs->chip));
	for (uint32_t p = 0, n = 0; p < c->tiles && n <= last; p++) {
		Tile *t = tile_at(cs, p, 1);
		if (!t)
			continue;
		n++;
		if (tile_write(t, c->mem_base, cs->boot, cs->nboot * 4))
			die("bootloader larger than tile memory");
		tile_start(t, c->mem_base);
	}
	/* the tiles run their bootloader until it waits for the host */
	run_chip(cs, chipsim_host_syncs(cs->chip), UINT64_MAX);
	return 0;
}

/* Run the chip until it waits for the host at host sync `stop`, or
 * ends; 0 if so, -1 if it stopped otherwise (cs->run says how). */
static int
run_chip(CardSim *cs, uint32_t stop, uint64_t limit)
{
	chipsim_set_host_stop(cs->chip, stop);
	cs->run = chipsim_run(cs->chip, limit, &cs->run_err);
	chipsim_set_host_stop(cs->chip, chipsim_host_syncs(cs->chip));
	return cs->run == RUN_HOST || cs->run == RUN_DONE ? 0 : -1;
}

/* Where a frame for this tile lands: the bootloader's receive pointer,
 * the supervisor's $m5 while it waits (MODEL_RECV_REG); 0 if that is not
 * a frame's room of tile memory (the frame is lost). */
static uint32_t
recv_addr(CardSim *cs, uint32_t logical)
{
	const Chip *c = chipsim_chip(cs->chip);
	const Tile *t = chipsim_tile_if_exists(cs->chip, logical);
	if (!t)
		return 0;
	uint32_t a = t->ctx[0].m[CARD_MODEL_RECV_REG];
	return chip_in_memory(c, a, CARD_FRAME_SIZE) ? a : 0;
}

/* A batch mark: the frames of host buffer 0's descriptors, frame k of
 * every tile at the k-th host sync from now, each into the frame area of
 * the tile its header names. The mark stays set if the chip does not get
 * to the sync after the last (a tile stopped or ran away). */
static int
serve_batch(CardSim *cs, char *msg, size_t len)
{
	const Chip *c = chipsim_chip(cs->chip);
	uint32_t size;
	const uint8_t *buf = cardsim_buffer(cs, 0, &size);
	if (!buf || size < CARD_BOOT_AREA)
		return fail(msg, len,
		            "HSP_GS1 batch mark: no host buffer of at least "
		            "%u bytes attached as index 0",
		            CARD_BOOT_AREA);
	uint32_t first = chipsim_host_syncs(cs->chip), most = 0;
	for (uint32_t slot = 0; slot < CARD_TILES_PER_BATCH; slot++) {
		uint32_t off = get_le32(buf + 8 * slot);
		uint32_t n = get_le32(buf + 8 * slot + 4);
		if (!n)
			continue;
		if (off > size || n > (size - off) / CARD_FRAME_SIZE)
			return fail(
			    msg, len,
			    "HSP_GS1 batch mark: slot %u's %u frames at "
			    "0x%x run past the %u-byte buffer",
			    slot, n, off, size);
		for (uint32_t k = 0; k < n; k++) {
			const uint8_t *f = buf + off + k * CARD_FRAME_SIZE;
			uint32_t p = get_le32(f + 4), at;
			if (p >= c->tiles || !tile_at(cs, p, 0) ||
			    !(at = recv_addr(cs, chip_logical(c, p))))
				continue; /* no tile listens: lost */
			chipsim_host_write(cs->chip, first + k,
			                   chip_logical(c, p), at, f,
			                   CARD_FRAME_SIZE);
		}
		if (n > most)
			most = n;
	}
	if (!run_chip(cs, first + most, UINT64_MAX))
		cs->bar[CARD_REG_HSP_GS1 / 4] = 0;
	return 0;
}

/* Host buffer 0's BOOT_RAW table: each listed tile's bytes at its
 * receive address at host sync `sync`; 1 if there is a table, 0 if not,
 * -1 if it is malformed. */
static int
raw_handoff(CardSim *cs, uint32_t sync, char *msg, size_t len)
{
	const Chip *c = chipsim_chip(cs->chip);
	uint32_t size;
	const uint8_t *buf = cardsim_buffer(cs, 0, &size);
	if (!buf || size < 8 || get_le32(buf) != CARD_BOOT_RAW)
		return 0;
	uint32_t n = get_le32(buf + 4);
	if (n > (size - 8) / 12)
		return fail(msg, len,
		            "handoff: %u raw entries overrun the "
		            "buffer",
		            n);
	for (uint32_t k = 0; k < n; k++) {
		const uint8_t *e = buf + 8 + 12 * k;
		uint32_t p = get_le32(e), off = get_le32(e + 4),
		         bytes = get_le32(e + 8), at;
		if (off > size || bytes > size - off)
			return fail(msg, len,
			            "handoff: entry %u's %u bytes at 0x%x run "
			            "past the %u-byte buffer",
			            k, bytes, off, size);
		if (p >= c->tiles || !tile_at(cs, p, 0) ||
		    !(at = recv_addr(cs, chip_logical(c, p))) ||
		    !chip_in_memory(c, at, bytes))
			continue; /* no tile listens: lost */
		chipsim_host_write(cs->chip, sync, chip_logical(c, p), at,
		                   buf + off, bytes);
	}
	return 1;
}

/* The handoff mark: GO to every started tile at the next host sync (or
 * the BOOT_RAW table's bytes), then the programs run until they end or
 * wait for the host again. */
static int
handoff(CardSim *cs, char *msg, size_t len)
{
	uint8_t go[16] = {0};
	put_le32(go, CARD_BOOT_GO);
	uint32_t sync = chipsim_host_syncs(cs->chip), at;
	for (uint32_t i = 0; i < chipsim_tiles(cs->chip); i++)
		if ((at = recv_addr(cs, i)))
			chipsim_host_write(cs->chip, sync, i, at, go,
			                   sizeof go);
	/* with a BOOT_RAW table, the tiles that fall through wait once
	 * more after GO, for their bytes at the next sync */
	uint32_t size;
	const uint8_t *buf = cardsim_buffer(cs, 0, &size);
	int raw = buf && size >= 4 && get_le32(buf) == CARD_BOOT_RAW;
	if (raw) {
		if (run_chip(cs, sync + 1, UINT64_MAX))
			return 0; /* the mark stays set: the host diagnoses */
		if (raw_handoff(cs, ++sync, msg, len) < 0)
			return -1;
	}
	/* the programs start in the issue slot of a fresh tile's cycle 0 */
	chipsim_set_host_phase(cs->chip, CHIP_SLOTS,
	                       raw ? CARD_MODEL_RAW_PHASE
	                           : CARD_MODEL_GO_PHASE);
	/* max_cycles counts from here: the load's cycles are not the
	 * program's */
	uint64_t now = 0;
	for (uint32_t i = 0; i < chipsim_tiles(cs->chip); i++) {
		const Tile *t = chipsim_tile_if_exists(cs->chip, i);
		if (t && t->cycle > now)
			now = t->cycle;
	}
	uint64_t limit = cs->max_cycles > UINT64_MAX - now
	                     ? UINT64_MAX
	                     : now + cs->max_cycles;
	int rc = run_chip(cs, sync + 1, limit);
	chipsim_set_host_phase(cs->chip, 0, 0);
	if (!rc)
		cs->bar[CARD_REG_HSP_GS1 / 4] = 0;
	cs->handed_off = 1;
	cs->phase = 0;
	cs->limit = limit;
	return 0;
}

/* A host phase (HSP_GS2 mark 1 after the handoff): if every tile waits
 * in a host sync, the command table's entries of this phase become that
 * sync's transfers (a read lands in the data page when the sync is
 * performed), the programs run on, and the mark is cleared when they
 * wait for the host again or end. */
static int
host_phase(CardSim *cs, char *msg, size_t len)
{
	const Chip *c = chipsim_chip(cs->chip);
	if (cs->run != RUN_HOST)
		return 0; /* no tile in a host sync: the mark stays */
	uint32_t tsize = 0, dsize = 0;
	const uint8_t *tab = cardsim_buffer(cs, CARD_HOST_TABLE_PAGE, &tsize);
	uint8_t *data = cardsim_buffer(cs, CARD_HOST_DATA_PAGE, &dsize);
	uint32_t sync = chipsim_host_syncs(cs->chip);
	uint32_t n = tab && tsize >= 4 ? get_le32(tab) : 0;
	if (n > (tsize - 4) / (4 * CARD_HOST_ENTRY_WORDS))
		return fail(msg, len,
		            "host phase %u: the command table's %u entries "
		            "overrun its %u bytes",
		            cs->phase, n, tsize);
	for (uint32_t k = 0; k < n; k++) {
		const uint8_t *e = tab + 4 + 4 * CARD_HOST_ENTRY_WORDS * k;
		if (get_le32(e) != cs->phase)
			continue;
		uint32_t p = get_le32(e + 4), addr = get_le32(e + 8),
		         w = get_le32(e + 12), off = get_le32(e + 16),
		         bytes = w & ~(uint32_t)CARD_HOST_TO_HOST;
		if (!data || off > dsize || bytes > dsize - off)
			return fail(
			    msg, len,
			    "host phase %u: entry %u's %u bytes at 0x%x "
			    "run past the %u-byte data page",
			    cs->phase, k, bytes, off, dsize);
		int rc = p >= c->tiles || !tile_at(cs, p, 0);
		if (!rc)
			rc = w & CARD_HOST_TO_HOST
			         ? chipsim_host_read(cs->chip, sync,
			                             chip_logical(c, p), addr,
			                             data + off, bytes)
			         : chipsim_host_write(cs->chip, sync,
			                              chip_logical(c, p), addr,
			                              data + off, bytes);
		if (rc)
			return fail(
			    msg, len,
			    "host phase %u: entry %u: %u bytes at 0x%x "
			    "of physical tile %u are not tile memory of "
			    "the model's chip",
			    cs->phase, k, bytes, addr, p);
	}
	cs->phase++;
	if (!run_chip(cs, sync + 1, cs->limit))
		cs->bar[CARD_REG_HSP_GS2 / 4] = 0;
	return 0;
}

RunStatus
cardsim_last_run(const CardSim *cs, const ChipError **err)
{
	*err = &cs->run_err;
	return cs->run;
}

void
cardsim_set_max_cycles(CardSim *cs, uint64_t max_cycles)
{
	cs->max_cycles = max_cycles;
}

static int
check_off(uint32_t off, char *msg, size_t len)
{
	if (off % 4 || off > CARD_BAR_SIZE - 4)
		return fail(
		    msg, len,
		    "BAR offset 0x%x is not a word inside the 0x%x-byte "
		    "configuration BAR",
		    off, CARD_BAR_SIZE);
	return 0;
}

int
cardsim_read32(CardSim *cs, uint32_t off, uint32_t *v, char *msg, size_t len)
{
	if (check_off(off, msg, len))
		return -1;
	if (off >= CARD_TDI_BASE &&
	    off < CARD_TDI_BASE + cs->cfg.chip->tiles * CARD_TDI_STRIDE)
		return tdi_read(cs, (off - CARD_TDI_BASE) / CARD_TDI_STRIDE,
		                off % CARD_TDI_STRIDE / 4, v);
	*v = cs->bar[off / 4];
	if (off == CARD_REG_AUTOLD_CSR)
		*v &= ~(uint32_t)CARD_AUTOLD_GO; /* done at once */
	return 0;
}

int
cardsim_write32(CardSim *cs, uint32_t off, uint32_t v, char *msg, size_t len)
{
	if (check_off(off, msg, len))
		return -1;
	if (off >= CARD_TDI_BASE &&
	    off < CARD_TDI_BASE + cs->cfg.chip->tiles * CARD_TDI_STRIDE)
		return tdi_write(cs, (off - CARD_TDI_BASE) / CARD_TDI_STRIDE,
		                 off % CARD_TDI_STRIDE / 4, v, msg, len);
	switch (off) {
	case CARD_REG_AUTOLD_DATA:
		if (cs->nald == CARD_BOOT_AREA / 4)
			return fail(msg, len,
			            "autoloader: more than %u words written to "
			            "DATA (the bootloader area is %u bytes)",
			            CARD_BOOT_AREA / 4, CARD_BOOT_AREA);
		cs->ald[cs->nald++] = v;
		return 0;
	case CARD_REG_AUTOLD_CSR:
		cs->bar[off / 4] = v;
		if (!v)
			cs->nald = 0;
		return v & CARD_AUTOLD_GO ? autoload(cs, v, msg, len) : 0;
	case CARD_REG_HSP_GS1:
		cs->bar[off / 4] = v & CARD_HSP_MARK_MASK;
		if (!cs->bar[off / 4])
			return 0;
		if (cs->bar[off / 4] == CARD_MODEL_BATCH_MARK)
			return serve_batch(cs, msg, len);
		return handoff(cs, msg, len);
	case CARD_REG_HSP_GS2:
		cs->bar[off / 4] = v & CARD_HSP_MARK_MASK;
		if (cs->handed_off && cs->bar[off / 4] == CARD_HSP_PHASE_MARK)
			return host_phase(cs, msg, len);
		return 0;
	}
	cs->bar[off / 4] = v;
	return 0;
}

static int
ioc_fail(int *errnum, int e, char *msg, size_t len, const char *what)
{
	*errnum = e;
	return fail(msg, len, "%s", what);
}

int
cardsim_ioctl(CardSim *cs, unsigned long req, void *arg, int *errnum, char *msg,
              size_t len)
{
	*errnum = 0;
	if (req == CARD_IOCTL_USER_ATTACH) {
		cs->attached = 1;
		return 0;
	}
	if (!cs->attached)
		return ioc_fail(errnum, EPERM, msg, len,
		                "the card model refuses ioctls before "
		                "USER_ATTACH");
	if (req == CARD_IOCTL_SET_IPU_ID || req == CARD_IOCTL_ACCUMULATE_ERR ||
	    req == CARD_IOCTL_HEXOPT_IDENTITY || req == CARD_IOCTL_RESET ||
	    req == CARD_IOCTL_SET_SECONDARY_ID)
		return 0;
	if (req == CARD_IOCTL_STOP_MONITOR || req == CARD_IOCTL_START_MONITOR) {
		cs->monitoring = req == CARD_IOCTL_START_MONITOR;
		return 0;
	}
	if (req == CARD_IOCTL_MAILBOX) {
		const CardMailArg *m = arg;
		if (!m || !m->sent || !m->received)
			return ioc_fail(errnum, EFAULT, msg, len,
			                "MAILBOX: NULL message");
		if (m->sent->w[0] != CARD_ICU_RESET_WORD)
			return ioc_fail(
			    errnum, EINVAL, msg, len,
			    "MAILBOX: the card model knows only the "
			    "ICU reset request");
		reset(cs);
		memset(m->received, 0, sizeof *m->received);
		m->received->w[0] = CARD_MODEL_ICU_REPLY;
		return 0;
	}
	if (req == CARD_IOCTL_BUFFER_ATTACH) {
		const CardAttach *a = arg;
		if (!a || !a->address || !a->size)
			return ioc_fail(errnum, EINVAL, msg, len,
			                "BUFFER_ATTACH: empty buffer");
		if (a->index >= 1u << 16)
			return ioc_fail(errnum, EINVAL, msg, len,
			                "BUFFER_ATTACH: the card model keeps "
			                "buffer indices below 65536");
		if (a->index >= cs->nbuf) {
			uint32_t n = a->index + 1;
			cs->buf = xrealloc(cs->buf, n * sizeof *cs->buf);
			memset(cs->buf + cs->nbuf, 0,
			       (n - cs->nbuf) * sizeof *cs->buf);
			cs->nbuf = n;
		}
		if (cs->buf[a->index].ptr)
			return ioc_fail(
			    errnum, EBUSY, msg, len,
			    "BUFFER_ATTACH: index already attached");
		cs->buf[a->index].ptr = (void *)(uintptr_t)a->address;
		cs->buf[a->index].size = a->size;
		return 0;
	}
	if (req == CARD_IOCTL_BUFFER_DETACH) {
		uint32_t i = (uint32_t)(uintptr_t)arg;
		if (i < cs->nbuf)
			cs->buf[i].ptr = NULL;
		return 0;
	}
	if (req == CARD_IOCTL_DETACH_ALL) {
		for (uint32_t i = 0; i < cs->nbuf; i++)
			cs->buf[i].ptr = NULL;
		return 0;
	}
	*errnum = ENOTTY;
	return fail(msg, len, "ioctl 0x%08lx is not one of the driver's", req);
}

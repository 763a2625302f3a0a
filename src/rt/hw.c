/*
 * hw.c - the card's device interface (hw.h): names, the log of every
 * access, and the bring-up steps, written once over the implementation's
 * read32/write32/ioctl so that the card model sees exactly what a card
 * would.
 */
#include "hw.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/sim.h"
#include "../util/util.h"
#include "backend.h"

struct HwDev {
	char *name;
	const HwOps *ops;
	void *impl;
	FILE *log;
};

/* Polls of a busy bit before giving up: a card answers within
 * microseconds (the driver allows 100 ms for TDI, 2 s for the
 * autoloader; a register read takes about a microsecond). */
enum { HW_POLLS = 100000 };

HwDev *
hw_open(const char *name, FILE *log, ipu_error *err)
{
	const HwOps *ops = NULL;
	void *impl = NULL;
	if (!strncmp(name, "hw:", 3)) {
		const char *s = name + 3;
		char *end;
		errno = 0;
		unsigned long n = strtoul(s, &end, 10);
		if (*s < '0' || *s > '9' || *end || errno || n > 255) {
			rt_error(err, IPU_ERR_ARGUMENT,
			         "device '%s': expected hw:N, N the number of "
			         "/dev/ipuN (0..255)",
			         name);
			return NULL;
		}
		impl = hw_linux_open((uint32_t)n, &ops, err);
	} else if (!strncmp(name, "model:", 6)) {
		impl = hw_model_open(name + 6, &ops, err);
	} else {
		rt_error(err, IPU_ERR_ARGUMENT,
		         "device '%s': expected hw:N (a card) or model:c600 "
		         "(the card model)",
		         name);
		return NULL;
	}
	if (!impl)
		return NULL;
	HwDev *d = xcalloc(1, sizeof *d);
	d->name = xstrdup(name);
	d->ops = ops;
	d->impl = impl;
	d->log = log;
	if (hw_ioctl(d, CARD_IOCTL_USER_ATTACH, NULL, err) ||
	    hw_ioctl(d, CARD_IOCTL_SET_IPU_ID, NULL, err)) {
		hw_close(d);
		return NULL;
	}
	return d;
}

void
hw_close(HwDev *d)
{
	if (!d)
		return;
	d->ops->close(d->impl);
	free(d->name);
	free(d);
}

const char *
hw_name(const HwDev *d)
{
	return d->name;
}

const char *
hw_kind(const HwDev *d)
{
	return d->ops->kind;
}

struct CardSim *
hw_model(HwDev *d)
{
	return strcmp(d->ops->kind, "model") ? NULL : d->impl;
}

int
hw_read32(HwDev *d, uint32_t off, uint32_t *v, ipu_error *err)
{
	int rc = d->ops->read32(d->impl, off, v, err);
	if (d->log) {
		char name[40];
		fprintf(d->log, "r %05x %s %08x %s\n", off, rc ? "!" : "->",
		        rc ? 0 : *v, card_reg_name(off, name, sizeof name));
	}
	return rc;
}

int
hw_write32(HwDev *d, uint32_t off, uint32_t v, ipu_error *err)
{
	int rc = d->ops->write32(d->impl, off, v, err);
	if (d->log) {
		char name[40];
		fprintf(d->log, "w %05x %s %08x %s\n", off, rc ? "!" : "<-", v,
		        card_reg_name(off, name, sizeof name));
	}
	return rc;
}

int
hw_ioctl(HwDev *d, unsigned long req, void *arg, ipu_error *err)
{
	int rc = d->ops->ioctl(d->impl, req, arg, err);
	if (d->log) {
		const char *n = card_ioctl_name(req);
		fprintf(d->log, "ioctl %08lx %s%s\n", req, n ? n : "?",
		        rc ? " failed" : "");
	}
	return rc;
}

int
hw_mailbox(HwDev *d, const CardMail *req, CardMail *reply, ipu_error *err)
{
	CardMailArg a = {req, reply};
	int rc = hw_ioctl(d, CARD_IOCTL_MAILBOX, &a, err);
	if (d->log && !rc) {
		fprintf(d->log, "mail");
		for (int i = 0; i < CARD_MAILBOX_WORDS; i++)
			fprintf(d->log, " %08x", req->w[i]);
		fprintf(d->log, " ->");
		for (int i = 0; i < CARD_MAILBOX_WORDS; i++)
			fprintf(d->log, " %08x", reply->w[i]);
		fprintf(d->log, "\n");
	}
	return rc;
}

int
hw_attach_buffer(HwDev *d, uint32_t index, void *p, uint32_t size,
                 ipu_error *err)
{
	CardAttach a = {index, size, (uint64_t)(uintptr_t)p};
	return hw_ioctl(d, CARD_IOCTL_BUFFER_ATTACH, &a, err);
}

int
hw_detach_buffer(HwDev *d, uint32_t index, ipu_error *err)
{
	/* the driver takes the index by value */
	return hw_ioctl(d, CARD_IOCTL_BUFFER_DETACH, (void *)(uintptr_t)index,
	                err);
}

int
hw_reset(HwDev *d, ipu_error *err)
{
	CardMail req = {{CARD_ICU_RESET_WORD}}, reply = {{0}};
	uint32_t id = 0;
	int rc;
	if ((rc = hw_ioctl(d, CARD_IOCTL_STOP_MONITOR, NULL, err)) ||
	    (rc = hw_mailbox(d, &req, &reply, err)))
		return rc;
	if (reply.w[0] >> CARD_ICU_REPLY_SHIFT !=
	    req.w[0] >> CARD_ICU_REPLY_SHIFT)
		return rt_error(err, IPU_ERR_IO,
		                "%s: the ICU answered the reset request "
		                "0x%08x with 0x%08x (its high half must "
		                "repeat the request's)",
		                d->name, req.w[0], reply.w[0]);
	if ((rc = hw_ioctl(d, CARD_IOCTL_START_MONITOR, NULL, err)) ||
	    (rc = hw_ioctl(d, CARD_IOCTL_ACCUMULATE_ERR, NULL, err)) ||
	    (rc = hw_ioctl(d, CARD_IOCTL_RESET, NULL, err)) ||
	    (rc = hw_ioctl(d, CARD_IOCTL_SET_SECONDARY_ID, &id, err)))
		return rc;
	return 0;
}

int
hw_replay_config(HwDev *d, const uint8_t *bytes, size_t len, const char *what,
                 ipu_error *err)
{
	static const char magic[8] = "IPUCFG1";
	if (len < CARD_CFG_HEADER || memcmp(bytes, magic, 8))
		return rt_error(err, IPU_ERR_FORMAT,
		                "%s: not a configuration capture (it must "
		                "start with 'IPUCFG1' and a NUL)",
		                what);
	uint32_t n = get_le32(bytes + 8);
	if ((len - CARD_CFG_HEADER) / 8 != n || (len - CARD_CFG_HEADER) % 8)
		return rt_error(
		    err, IPU_ERR_FORMAT,
		    "%s: the header counts %u register writes "
		    "(%llu bytes) but the file holds %zu bytes after "
		    "it",
		    what, n, 8ull * n, len - CARD_CFG_HEADER);
	/* Check every write before the first one reaches the card. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t off = get_le32(bytes + CARD_CFG_HEADER + 8 * i);
		if (off % 4 || off > CARD_BAR_SIZE - 4)
			return rt_error(
			    err, IPU_ERR_FORMAT,
			    "%s: write %u is at offset 0x%x, not a "
			    "word of the 0x%x-byte BAR; nothing was "
			    "written",
			    what, i, off, CARD_BAR_SIZE);
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *w = bytes + CARD_CFG_HEADER + 8 * i;
		uint32_t off = get_le32(w);
		if (off == CARD_REG_HSP_GS1 || off == CARD_REG_HSP_GS2)
			continue; /* the capture's own sync protocol */
		int rc = hw_write32(d, off, get_le32(w + 4), err);
		if (rc)
			return rc;
	}
	static const uint32_t marks[] = {CARD_REG_HSP_GS1, CARD_REG_HSP_GS2};
	for (int i = 0; i < 2; i++) {
		uint32_t v;
		int rc;
		if ((rc = hw_write32(d, marks[i], 0, err)) ||
		    (rc = hw_read32(d, marks[i], &v, err)))
			return rc;
		if (v & CARD_HSP_MARK_MASK)
			return rt_error(
			    err, IPU_ERR_IO,
			    "%s: the host sync mark at 0x%x reads %u "
			    "after being cleared",
			    d->name, marks[i], v & CARD_HSP_MARK_MASK);
	}
	return 0;
}

static int
wait_autoloader(HwDev *d, ipu_error *err)
{
	for (int i = 0; i < HW_POLLS; i++) {
		uint32_t v;
		int rc = hw_read32(d, CARD_REG_AUTOLD_CSR, &v, err);
		if (rc)
			return rc;
		if (!(v & CARD_AUTOLD_GO))
			return 0;
	}
	return rt_error(err, IPU_ERR_TIMEOUT,
	                "%s: the autoloader did not finish (GO still set after "
	                "%d reads of AUTOLD_CSR)",
	                d->name, HW_POLLS);
}

int
hw_install_bootloader(HwDev *d, const uint8_t *img, size_t len, uint32_t tiles,
                      ipu_error *err)
{
	if (!len || len > CARD_BOOT_AREA || len % 4)
		return rt_error(
		    err, IPU_ERR_ARGUMENT,
		    "%s: a bootloader of %zu bytes: it must be whole "
		    "words, 1..%u bytes",
		    d->name, len, CARD_BOOT_AREA);
	if (!tiles || tiles - 1 > CARD_AUTOLD_TILE_MASK)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: the autoloader takes 1..%u tiles, not %u",
		                d->name, CARD_AUTOLD_TILE_MASK + 1, tiles);
	uint32_t words = (uint32_t)(len + 1023) / 1024 * 256;
	uint32_t kib = words / 256, ptr = (words - 1) & CARD_AUTOLD_PTR_MASK;
	uint32_t zone = (uint32_t)CARD_AUTOLD_ZONE << CARD_AUTOLD_ZONE_SHIFT;
	int rc;
	if ((rc = hw_write32(d, CARD_REG_AUTOLD_CSR, 0, err)))
		return rc;
	for (uint32_t i = 0; i < words; i++) {
		uint32_t w = 4 * i < len ? get_le32(img + 4 * i) : 0;
		if ((rc = hw_write32(d, CARD_REG_AUTOLD_DATA, w, err)))
			return rc;
	}
	if ((rc = hw_write32(d, CARD_REG_AUTOLD_TARGET,
	                     zone | kib << CARD_AUTOLD_ADDR_SHIFT, err)) ||
	    (rc = hw_write32(d, CARD_REG_AUTOLD_CSR,
	                     CARD_AUTOLD_DATA_PRESENT | CARD_AUTOLD_GO | ptr,
	                     err)) ||
	    (rc = wait_autoloader(d, err)))
		return rc;
	/* The second GO names the tiles and the size of tile memory. */
	const Chip *c = chip_default();
	uint32_t mem_kib = (c->mem_end - c->mem_base) / 1024;
	if ((rc = hw_write32(d, CARD_REG_AUTOLD_TARGET,
	                     zone | mem_kib << CARD_AUTOLD_ADDR_SHIFT | kib,
	                     err)) ||
	    (rc = hw_write32(d, CARD_REG_AUTOLD_CSR,
	                     (tiles - 1) << CARD_AUTOLD_TILE_SHIFT |
	                         CARD_AUTOLD_GO | ptr,
	                     err)))
		return rc;
	return wait_autoloader(d, err);
}

/* Write a mark to an HSP register and wait for the card to clear it. */
static int
hsp_mark(HwDev *d, uint32_t reg, uint32_t mark, const char *what,
         ipu_error *err)
{
	int rc = hw_write32(d, reg, mark, err);
	for (int i = 0; !rc && i < HW_POLLS; i++) {
		uint32_t v;
		if ((rc = hw_read32(d, reg, &v, err)))
			break;
		if (!(v & CARD_HSP_MARK_MASK))
			return 0;
	}
	return rc ? rc
	          : rt_error(err, IPU_ERR_TIMEOUT,
	                     "%s: %s: the card did not clear host sync mark "
	                     "%u in HSP_GS%d (%d reads); a tile stopped or "
	                     "never reached the sync: see the tile "
	                     "diagnosis",
	                     d->name, what, mark,
	                     reg == CARD_REG_HSP_GS1 ? 1 : 2, HW_POLLS);
}

/* The handoff's BOOT_RAW table in the transport buffer, if any tile has
 * raw bytes (card.def BOOT_RAW); else the buffer is left as it is. */
static int
raw_table(uint8_t *buf, size_t size, const HwTileImage *tiles, uint32_t n,
          ipu_error *err)
{
	uint32_t count = 0;
	for (uint32_t i = 0; i < n; i++)
		count += tiles[i].raw_len > 0;
	if (!count)
		return 0;
	size_t at = 8 + (size_t)12 * count, e = 8;
	memset(buf, 0, size);
	put_le32(buf, CARD_BOOT_RAW);
	put_le32(buf + 4, count);
	for (uint32_t i = 0; i < n; i++) {
		const HwTileImage *t = &tiles[i];
		if (!t->raw_len)
			continue;
		at = (at + 7) & ~(size_t)7;
		if (t->raw_len > size - at)
			return rt_error(
			    err, IPU_ERR_ARGUMENT,
			    "the handoff's bytes for %u tiles do not "
			    "fit the transport buffer of %zu bytes",
			    count, size);
		put_le32(buf + e, t->physical);
		put_le32(buf + e + 4, (uint32_t)at);
		put_le32(buf + e + 8, t->raw_len);
		memcpy(buf + at, t->raw, t->raw_len);
		e += 12;
		at += t->raw_len;
	}
	return 0;
}

int
hw_load(HwDev *d, const HwTileImage *tiles, uint32_t n, uint32_t handoff,
        ipu_error *err)
{
	uint8_t *buf = xcalloc(1, CARD_TRANSPORT_SIZE);
	int rc = hw_attach_buffer(d, 0, buf, CARD_TRANSPORT_SIZE, err);
	for (uint32_t at = 0; !rc && at < n; at += CARD_TILES_PER_BATCH) {
		uint32_t k = n - at < CARD_TILES_PER_BATCH
		                 ? n - at
		                 : CARD_TILES_PER_BATCH;
		char what[64];
		snprintf(what, sizeof what, "loading tiles %u..%u", at,
		         at + k - 1);
		if (!(rc = hw_build_batch(buf, CARD_TRANSPORT_SIZE, tiles + at,
		                          k, err)))
			rc = hsp_mark(d, CARD_REG_HSP_GS1,
			              CARD_MODEL_BATCH_MARK, what, err);
	}
	if (!rc)
		rc = raw_table(buf, CARD_TRANSPORT_SIZE, tiles, n, err);
	if (!rc)
		rc = hsp_mark(d, CARD_REG_HSP_GS1, handoff, "the handoff", err);
	ipu_error e2;
	int rc2 = hw_detach_buffer(d, 0, rc ? &e2 : err);
	if (!rc)
		rc = rc2;
	free(buf);
	return rc;
}

int
hw_attach_pages(HwDev *d, void *const *pages, const uint32_t *sizes, uint32_t n,
                ipu_error *err)
{
	int rc = hw_ioctl(d, CARD_IOCTL_DETACH_ALL, NULL, err);
	for (uint32_t i = 0; !rc && i < n; i++)
		if (!(rc = hw_write32(d, CARD_REG_XWINDOW, CARD_XWINDOW_HEXOPT,
		                      err)))
			rc = hw_attach_buffer(d, i, pages[i], sizes[i], err);
	return rc;
}

int
hw_host_phase(HwDev *d, uint32_t k, ipu_error *err)
{
	char what[48];
	snprintf(what, sizeof what, "host phase %u", k);
	return hsp_mark(d, CARD_REG_HSP_GS2, CARD_HSP_PHASE_MARK, what, err);
}

/* Tile debug access. */

static int
tdi_read(HwDev *d, uint32_t p, uint32_t reg, uint32_t *v, ipu_error *err)
{
	return hw_read32(d, card_tdi_reg(p, reg), v, err);
}

static int
tdi_write(HwDev *d, uint32_t p, uint32_t reg, uint32_t v, ipu_error *err)
{
	return hw_write32(d, card_tdi_reg(p, reg), v, err);
}

static int
check_tile(HwDev *d, uint32_t p, uint32_t ctx, ipu_error *err)
{
	if (p > CARD_AUTOLD_TILE_MASK ||
	    card_tdi_reg(p, 15) > CARD_BAR_SIZE - 4 || ctx >= 7)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: no tile debug registers for physical tile "
		                "%u, context %u",
		                d->name, p, ctx);
	return 0;
}

int
hw_tile_states(HwDev *d, uint32_t p, uint32_t *sts, ipu_error *err)
{
	int rc = check_tile(d, p, 0, err);
	return rc ? rc : tdi_read(d, p, CARD_TDI_CTXT_STATUS, sts, err);
}

/* Execute one instruction word in a stopped context. */
static int
tdi_exec(HwDev *d, uint32_t p, uint32_t ctx, uint32_t word, ipu_error *err)
{
	int rc;
	if ((rc = tdi_write(d, p, CARD_TDI_STATUS_CLEAR, 6, err)) ||
	    (rc = tdi_write(d, p, CARD_TDI_INSN_OWNER, ctx, err)) ||
	    (rc = tdi_write(d, p, CARD_TDI_INSN, word, err)))
		return rc;
	for (int i = 0; i < HW_POLLS; i++) {
		uint32_t st;
		if ((rc = tdi_read(d, p, CARD_TDI_STATUS, &st, err)))
			return rc;
		if (st & CARD_TDI_BUSY)
			continue;
		if (st & CARD_TDI_FAILED)
			return rt_error(err, IPU_ERR_IO,
			                "%s: tile %u context %u: the debug "
			                "instruction 0x%08x failed (TDI status "
			                "0x%x)",
			                d->name, p, ctx, word, st);
		return 0;
	}
	return rt_error(err, IPU_ERR_TIMEOUT,
	                "%s: tile %u: a debug instruction stayed busy", d->name,
	                p);
}

enum { PUT_DBG_REG_SHIFT = 20 }; /* put $DBG_DATA, $mN (card.def) */

static int
get_m(HwDev *d, uint32_t p, uint32_t ctx, uint32_t r, uint32_t *v,
      ipu_error *err)
{
	int rc = tdi_exec(d, p, ctx,
	                  CARD_TDI_PUT_DBG_M0 | r << PUT_DBG_REG_SHIFT, err);
	return rc ? rc : tdi_read(d, p, CARD_TDI_DATA, v, err);
}

static int
set_m(HwDev *d, uint32_t p, uint32_t ctx, uint32_t get_insn, uint32_t v,
      ipu_error *err)
{
	int rc = tdi_write(d, p, CARD_TDI_DATA, v, err);
	return rc ? rc : tdi_exec(d, p, ctx, get_insn, err);
}

/* Stop the context if it runs, do op, let it go again. */
typedef int (*TdiOp)(HwDev *d, uint32_t p, uint32_t ctx, void *arg,
                     ipu_error *err);

static int
with_stopped(HwDev *d, uint32_t p, uint32_t ctx, TdiOp op, void *arg,
             ipu_error *err)
{
	uint32_t brk, sts;
	int rc;
	if ((rc = check_tile(d, p, ctx, err)) ||
	    (rc = tdi_read(d, p, CARD_TDI_RUN_BREAK, &brk, err)) ||
	    (rc = tdi_read(d, p, CARD_TDI_CTXT_STATUS, &sts, err)))
		return rc;
	uint32_t st = sts >> (2 * ctx) & 3, bit = 1u << ctx;
	int stopped = st == CARD_MODEL_CTX_BREAK ||
	              st == CARD_MODEL_CTX_EXCPT || st == CARD_MODEL_CTX_IDLE;
	if (!stopped) {
		if ((rc = tdi_write(d, p, CARD_TDI_RUN_BREAK, brk | bit, err)))
			return rc;
		for (int i = 0;; i++) {
			if ((rc = tdi_read(d, p, CARD_TDI_CTXT_STATUS, &sts,
			                   err)))
				return rc;
			st = sts >> (2 * ctx) & 3;
			if (st == CARD_MODEL_CTX_BREAK ||
			    st == CARD_MODEL_CTX_EXCPT)
				break;
			if (i == HW_POLLS)
				return rt_error(
				    err, IPU_ERR_TIMEOUT,
				    "%s: tile %u context %u did not "
				    "stop",
				    d->name, p, ctx);
		}
	}
	rc = op(d, p, ctx, arg, err);
	if (!stopped) {
		ipu_error e2;
		int rc2 = tdi_write(d, p, CARD_TDI_RUN_BREAK, brk, &e2);
		if (!rc2 && !(brk & bit))
			rc2 = tdi_write(d, p, CARD_TDI_EXCPT_CLEAR, bit, &e2);
		if (rc2 && !rc) {
			*err = e2;
			rc = rc2;
		}
	}
	return rc;
}

/* Read a value into $m0 with `insn` and out through $DBG_DATA, $m0
 * restored after. */
static int
op_get(HwDev *d, uint32_t p, uint32_t ctx, void *arg, ipu_error *err)
{
	uint32_t *io = arg, m0; /* io[0]: the instruction, io[1]: result */
	int rc;
	if ((rc = get_m(d, p, ctx, 0, &m0, err)) ||
	    (rc = tdi_exec(d, p, ctx, io[0], err)) ||
	    (rc = get_m(d, p, ctx, 0, &io[1], err)))
		return rc;
	return set_m(d, p, ctx, CARD_TDI_GET_M0_DBG, m0, err);
}

int
hw_tile_pc(HwDev *d, uint32_t p, uint32_t ctx, uint32_t *pc, ipu_error *err)
{
	uint32_t io[2] = {CARD_TDI_GET_M0_PC, 0};
	int rc = with_stopped(d, p, ctx, op_get, io, err);
	*pc = io[1];
	return rc;
}

int
hw_tile_status(HwDev *d, uint32_t p, uint32_t ctx, uint32_t *sr, ipu_error *err)
{
	uint32_t io[2] = {CARD_TDI_GET_M0_SR, 0};
	int rc = with_stopped(d, p, ctx, op_get, io, err);
	*sr = io[1];
	return rc;
}

/* io[0]: address, io[1]: the word (in for a write, out for a read), io[2]:
 * 1 to write. $m0 and $m1 restored after. */
static int
op_mem(HwDev *d, uint32_t p, uint32_t ctx, void *arg, ipu_error *err)
{
	uint32_t *io = arg, m0, m1;
	int rc;
	if ((rc = get_m(d, p, ctx, 0, &m0, err)) ||
	    (rc = get_m(d, p, ctx, 1, &m1, err)) ||
	    (rc = set_m(d, p, ctx, CARD_TDI_GET_M1_DBG, io[0], err)))
		return rc;
	if (io[2])
		rc = set_m(d, p, ctx, CARD_TDI_GET_M0_DBG, io[1], err);
	if (!rc)
		rc = tdi_exec(
		    d, p, ctx,
		    io[2] ? CARD_TDI_ST_M0_AT_M1 : CARD_TDI_LD_M0_AT_M1, err);
	if (!rc && !io[2])
		rc = get_m(d, p, ctx, 0, &io[1], err);
	ipu_error e2;
	int rc2 = set_m(d, p, ctx, CARD_TDI_GET_M1_DBG, m1, &e2);
	if (!rc2)
		rc2 = set_m(d, p, ctx, CARD_TDI_GET_M0_DBG, m0, &e2);
	if (rc2 && !rc) {
		*err = e2;
		rc = rc2;
	}
	return rc;
}

static int
check_word_addr(HwDev *d, uint32_t addr, ipu_error *err)
{
	const Chip *c = chip_default(); /* the C600 */
	if (addr % 4 || !chip_in_memory(c, addr, 4))
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: 0x%x is not a word of tile memory "
		                "0x%x..0x%x",
		                d->name, addr, c->mem_base, c->mem_end);
	return 0;
}

int
hw_tile_read(HwDev *d, uint32_t p, uint32_t ctx, uint32_t addr, uint32_t *word,
             ipu_error *err)
{
	uint32_t io[3] = {addr, 0, 0};
	int rc = check_word_addr(d, addr, err);
	if (!rc)
		rc = with_stopped(d, p, ctx, op_mem, io, err);
	*word = io[1];
	return rc;
}

int
hw_tile_write(HwDev *d, uint32_t p, uint32_t ctx, uint32_t addr, uint32_t word,
              ipu_error *err)
{
	uint32_t io[3] = {addr, word, 1};
	int rc = check_word_addr(d, addr, err);
	return rc ? rc : with_stopped(d, p, ctx, op_mem, io, err);
}

int
hw_tile_report(HwDev *d, uint32_t p, char *buf, size_t len, ipu_error *err)
{
	uint32_t sts;
	int rc = hw_tile_states(d, p, &sts, err);
	if (rc)
		return rc;
	size_t n = (size_t)snprintf(buf, len, "tile %u (physical):", p);
	int shown = 0;
	for (uint32_t c = 0; c < 7 && n < len; c++) {
		uint32_t st = sts >> (2 * c) & 3, pc, sr;
		if (st == CARD_MODEL_CTX_IDLE)
			continue;
		if ((rc = hw_tile_pc(d, p, c, &pc, err)))
			return rc;
		char who[16];
		if (c)
			snprintf(who, sizeof who, "worker %u", c - 1);
		else
			snprintf(who, sizeof who, "supervisor");
		if (st == CARD_MODEL_CTX_EXCPT) {
			if ((rc = hw_tile_status(d, p, c, &sr, err)))
				return rc;
			n += (size_t)snprintf(
			    buf + n, len - n, " %s: exception %s at pc 0x%05x;",
			    who, fault_type_name((FaultType)(sr >> 4 & 15)),
			    pc);
		} else {
			n += (size_t)snprintf(
			    buf + n, len - n,
			    " %s: %s at pc "
			    "0x%05x;",
			    who,
			    st == CARD_MODEL_CTX_RUN ? "running" : "stopped",
			    pc);
		}
		shown++;
	}
	if (!shown && n < len)
		snprintf(buf + n, len - n, " every context idle");
	return 0;
}

const char *
hw_boot_stop(const TileImage *boot, uint32_t at, uint32_t pc)
{
	static const struct {
		const char *label, *why;
	} stops[] = {
	    {"boot_lost", "a frame out of order (one was lost, or its index "
	                  "is no mark of ours)"},
	    {"boot_early", "the handoff (GO) before the tile's last frame"},
	    {"boot_bad_flags", "a frame whose flags hold more than the "
	                       "last-frame mark and the payload's length"},
	    {"boot_bad_len", "a frame whose payload length is not a multiple "
	                     "of 4 or more than a frame's payload"},
	    {"boot_bad_addr", "a frame whose payload would overwrite the "
	                      "running bootloader"},
	    {"boot_store", "a frame whose payload address is misaligned or "
	                   "outside tile memory (its store faulted)"},
	};
	uint32_t base = boot->seg[0].addr;
	for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) {
		int64_t a = img_symbol_addr(boot, stops[i].label);
		if (a >= 0 && pc - at == (uint32_t)a - base)
			return stops[i].why;
	}
	return NULL;
}

size_t
hw_frames(size_t len)
{
	return (len + CARD_FRAME_PAYLOAD - 1) / CARD_FRAME_PAYLOAD;
}

int
hw_frame_tile(uint32_t physical, const uint8_t *img, size_t len, uint8_t *out,
              ipu_error *err)
{
	size_t n = hw_frames(len);
	if (!n || n > CARD_FRAME_MAX)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "tile %u: an image of %zu bytes takes %zu "
		                "frames; the loader takes 1..%u (%u bytes)",
		                physical, len, n, CARD_FRAME_MAX,
		                CARD_FRAME_MAX * CARD_FRAME_PAYLOAD);
	for (size_t f = 0; f < n; f++) {
		uint8_t *fr = out + f * CARD_FRAME_SIZE;
		size_t at = f * CARD_FRAME_PAYLOAD;
		size_t part = len - at < CARD_FRAME_PAYLOAD
		                  ? len - at
		                  : CARD_FRAME_PAYLOAD;
		memset(fr, 0, CARD_FRAME_SIZE - CARD_FRAME_TRAILER);
		put_le32(fr, (uint32_t)f);
		put_le32(fr + 4, physical);
		put_le32(fr + 8, f + 1 == n ? CARD_FRAME_LAST : 0);
		memcpy(fr + CARD_FRAME_HEADER, img + at, part);
		memset(fr + CARD_FRAME_SIZE - CARD_FRAME_TRAILER, 0xff,
		       CARD_FRAME_TRAILER);
	}
	return 0;
}

size_t
hw_boot_frames(const TileImage *prog)
{
	size_t n = 1; /* the last: the entry */
	for (int i = 0; i < prog->nseg; i++)
		n += hw_frames(prog->seg[i].size);
	return n;
}

/* One frame of ours: the driver's header with the payload's bytes in the
 * flags and its address in the fourth word (card.def BOOT_*). */
static void
boot_frame(uint8_t *fr, uint32_t index, uint32_t physical, uint32_t flags,
           uint32_t addr, const uint8_t *payload, size_t len)
{
	memset(fr, 0, CARD_FRAME_SIZE - CARD_FRAME_TRAILER);
	put_le32(fr, index);
	put_le32(fr + 4, physical);
	put_le32(fr + 8, flags | (uint32_t)((len + 3) & ~(size_t)3));
	put_le32(fr + 12, addr);
	if (len)
		memcpy(fr + CARD_FRAME_HEADER, payload, len);
	memset(fr + CARD_FRAME_SIZE - CARD_FRAME_TRAILER, 0xff,
	       CARD_FRAME_TRAILER);
}

/* One tile's boot frames (hw.h, hw_boot_frames) into out. */
static int
hw_frame_boot(uint32_t physical, const TileImage *prog, uint8_t *out,
              ipu_error *err)
{
	size_t n = hw_boot_frames(prog);
	if (n > CARD_BOOT_LEN_MASK)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "tile %u: an image of %zu frames; our "
		                "bootloader takes at most %u",
		                physical, n, CARD_BOOT_LEN_MASK);
	uint32_t f = 0;
	for (int i = 0; i < prog->nseg; i++) {
		const TileSegment *sg = &prog->seg[i];
		for (size_t at = 0; at < sg->size; at += CARD_FRAME_PAYLOAD) {
			size_t part = sg->size - at < CARD_FRAME_PAYLOAD
			                  ? sg->size - at
			                  : CARD_FRAME_PAYLOAD;
			boot_frame(out + f * CARD_FRAME_SIZE, f, physical, 0,
			           sg->addr + (uint32_t)at, sg->bytes + at,
			           part);
			f++;
		}
	}
	boot_frame(out + f * CARD_FRAME_SIZE, f, physical, CARD_FRAME_LAST,
	           prog->entry, NULL, 0);
	return 0;
}

int
hw_build_batch(uint8_t *buf, size_t size, const HwTileImage *tiles, uint32_t n,
               ipu_error *err)
{
	if (n > CARD_TILES_PER_BATCH || size < CARD_BOOT_AREA)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "a batch holds at most %u tiles in a buffer of "
		                "at least %u bytes",
		                CARD_TILES_PER_BATCH, CARD_BOOT_AREA);
	memset(buf, 0, size);
	size_t at = CARD_BOOT_AREA;
	for (uint32_t i = 0; i < n; i++) {
		const HwTileImage *t = &tiles[i];
		size_t frames =
		    t->prog ? hw_boot_frames(t->prog) : hw_frames(t->len);
		if (frames * CARD_FRAME_SIZE > size - at)
			return rt_error(err, IPU_ERR_ARGUMENT,
			                "tile %u's %zu frames do not fit the "
			                "transport buffer of %zu bytes",
			                tiles[i].physical, frames, size);
		int rc =
		    t->prog ? hw_frame_boot(t->physical, t->prog, buf + at, err)
		            : hw_frame_tile(t->physical, t->img, t->len,
		                            buf + at, err);
		if (rc)
			return rc;
		put_le32(buf + 8 * i, (uint32_t)at);
		put_le32(buf + 8 * i + 4, (uint32_t)frames);
		at += frames * CARD_FRAME_SIZE;
	}
	return 0;
}

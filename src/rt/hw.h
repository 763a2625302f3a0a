/*
 * hw.h - the card's device interface, inside the runtime below its
 * backends (internal to src/rt/): open a
 * card, its configuration BAR a word at a time, the kernel driver's ioctls,
 * host buffers, the ICU mailbox; and the steps of the bring-up built on
 * them (reset, configuration replay, the autoloader, tile debug access).
 *
 * Two implementations behind one table of functions:
 *   hw:N          /dev/ipuN of Graphcore's kernel driver (hw_linux.c)
 *   model:CHIP    the register-level card model around the emulator
 *                 (hw_model.c over sim/card.c), options :tiles=N
 * Every register access and ioctl can be logged (hw_open's log), one line
 * each, the same lines for both, so that a run on the model and one on a
 * card can be compared. The numbers are target/card.def's; docs/hardware.md
 * is the sequence step by step.
 */
#ifndef IPU_HW_H
#define IPU_HW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../include/ipu/runtime.h"
#include "../asm/asm.h"
#include "../target/card.h"

typedef struct HwDev HwDev;
struct CardSim;

/* The implementation's functions: 0, or the kind of the error with *err
 * filled. */
typedef struct {
	const char *kind; /* "linux", "model" */
	int (*read32)(void *impl, uint32_t off, uint32_t *v, ipu_error *err);
	int (*write32)(void *impl, uint32_t off, uint32_t v, ipu_error *err);
	int (*ioctl)(void *impl, unsigned long req, void *arg, ipu_error *err);
	void (*close)(void *impl);
} HwOps;

/* Open "hw:N" or "model:CHIP[:tiles=N]" and attach (USER_ATTACH,
 * SET_IPU_ID) as the driver's users do, logging to `log` if not NULL. For
 * hw:N this opens /dev/ipuN and maps the BAR; a missing node, driver or
 * permission is an IPU_ERR_NO_BACKEND or IPU_ERR_IO that says which and
 * what to do. */
HwDev *hw_open(const char *name, FILE *log, ipu_error *err);
void hw_close(HwDev *d);
const char *hw_name(const HwDev *d);
const char *hw_kind(const HwDev *d);
/* The card model under a model: device, NULL for a card. */
struct CardSim *hw_model(HwDev *d);

int hw_read32(HwDev *d, uint32_t off, uint32_t *v, ipu_error *err);
int hw_write32(HwDev *d, uint32_t off, uint32_t v, ipu_error *err);
int hw_ioctl(HwDev *d, unsigned long req, void *arg, ipu_error *err);

int hw_mailbox(HwDev *d, const CardMail *req, CardMail *reply, ipu_error *err);
int hw_attach_buffer(HwDev *d, uint32_t index, void *p, uint32_t size,
                     ipu_error *err);
int hw_detach_buffer(HwDev *d, uint32_t index, ipu_error *err);

/* Bring-up steps (docs/hardware.md). */
/* Monitoring off, the ICU reset through the mailbox (its reply checked),
 * monitoring on, errors accumulated, the driver told of the reset, the
 * secondary IPU id set. */
int hw_reset(HwDev *d, ipu_error *err);
/* Replay an IPUCFG1 configuration capture (file bytes): every write but
 * the host sync marks, which are cleared after and checked. `what` names
 * the file in messages. */
int hw_replay_config(HwDev *d, const uint8_t *bytes, size_t len,
                     const char *what, ipu_error *err);
/* Install a bootloader image (at most CARD_BOOT_AREA bytes, padded to a
 * whole KiB) on tiles 0..tiles-1 with the autoloader, which starts them. */
int hw_install_bootloader(HwDev *d, const uint8_t *img, size_t len,
                          uint32_t tiles, ipu_error *err);

/* Tile debug access by physical tile id and context (0 supervisor, 1..6
 * workers). Contexts that run are stopped (RUN_BREAK) for the access and
 * let go after; registers the access borrows ($m0, $m1) are restored. */
int hw_tile_states(HwDev *d, uint32_t physical, uint32_t *sts, ipu_error *err);
int hw_tile_pc(HwDev *d, uint32_t physical, uint32_t ctx, uint32_t *pc,
               ipu_error *err);
/* $SSR (ctx 0) or $WSR: ETYPE in bits 7..4. */
int hw_tile_status(HwDev *d, uint32_t physical, uint32_t ctx, uint32_t *sr,
                   ipu_error *err);
int hw_tile_read(HwDev *d, uint32_t physical, uint32_t ctx, uint32_t addr,
                 uint32_t *word, ipu_error *err);
int hw_tile_write(HwDev *d, uint32_t physical, uint32_t ctx, uint32_t addr,
                  uint32_t word, ipu_error *err);

/* Where hw:N's node ipuN is looked for: $IPU_DEV_DIR, else /dev (tests
 * point it elsewhere). */
const char *hw_dev_dir(void);
/* One line for a hang or fault diagnosis: each context that is not idle,
 * its state and pc, and the exception's name for one that excepted. */
int hw_tile_report(HwDev *d, uint32_t physical, char *buf, size_t len,
                   ipu_error *err);
/* Why our bootloader (kernels/boot.S; `boot` its image as linked at the
 * base of tile memory), running linked at `at`, stopped at pc: the frame
 * it refused, or NULL if pc is none of its stops. */
const char *hw_boot_stop(const TileImage *boot, uint32_t at, uint32_t pc);

/* The loader's host side (docs/hardware.md, step 6). One tile's image as
 * frames of CARD_FRAME_SIZE bytes: header {u32 index, u32 physical tile,
 * u32 flags (CARD_FRAME_LAST on the last)}, CARD_FRAME_PAYLOAD bytes of the
 * image (zero-padded), a trailer of 0xff. hw_frames: the frames an image
 * of len bytes takes. hw_frame_tile writes them into out (at least
 * hw_frames(len) x CARD_FRAME_SIZE bytes): 0, or IPU_ERR_ARGUMENT for an
 * empty image or one of more than CARD_FRAME_MAX frames. */
size_t hw_frames(size_t len);
int hw_frame_tile(uint32_t physical, const uint8_t *img, size_t len,
                  uint8_t *out, ipu_error *err);
/* The frames of our own bootloader (kernels/boot.S) for a program: the
 * driver's frames with the payload's bytes in the flags' low half and its
 * address in the header's fourth word, each segment in turn; then a last
 * frame (CARD_FRAME_LAST) with the entry and no payload. Segment sizes are
 * rounded up to whole words. */
size_t hw_boot_frames(const TileImage *prog);
/* One batch of up to CARD_TILES_PER_BATCH tiles in the transport buffer
 * (size bytes, zeroed first): a descriptor {u32 offset, u32 frames} per
 * slot at the start, the tiles' frames from CARD_BOOT_AREA on. */
typedef struct {
	uint32_t physical;
	const uint8_t *img; /* the SDK bootloader's flat image */
	size_t len;
	const TileImage *prog; /* or, if not NULL, a program for ours */
	/* hw_load: the bytes written at the tile's receive address at the
	 * handoff's second sync (BOOT_RAW), if any tile has some; all get
	 * the GO frame at its first */
	const uint8_t *raw;
	uint32_t raw_len;
} HwTileImage;
int hw_build_batch(uint8_t *buf, size_t size, const HwTileImage *tiles,
                   uint32_t n, ipu_error *err);

/* Load programs through our own bootloader (installed on their tiles):
 * a transport buffer attached as index 0; per batch of
 * CARD_TILES_PER_BATCH tiles their frames (hw_build_batch, each with
 * .prog) and a mark 1 in HSP_GS1 that the card clears when the tiles have
 * them; then the mark `handoff` (with a BOOT_RAW table of the tiles'
 * .raw bytes in the buffer if any has some), after which they run. The
 * card model runs the programs to their end within the handoff. A mark
 * the card does not clear is IPU_ERR_TIMEOUT: diagnose the tiles
 * (hw_tile_report). */
int hw_load(HwDev *d, const HwTileImage *tiles, uint32_t n, uint32_t handoff,
            ipu_error *err);

/* The program's own host exchange after the handoff (docs/hardware.md,
 * step 8): every buffer detached, then pages[i] (sizes[i] bytes)
 * attached as index i in order, EXCHANGE_WINDOW_BASE = HEXOPT before
 * each; and host phase k: HSP_GS2 = 1, then polled until the card
 * clears it (IPU_ERR_TIMEOUT if it does not). */
int hw_attach_pages(HwDev *d, void *const *pages, const uint32_t *sizes,
                    uint32_t n, ipu_error *err);
int hw_host_phase(HwDev *d, uint32_t k, ipu_error *err);

/* Implementations (hw_linux.c, hw_model.c): fill *ops and return the
 * state, or NULL with *err filled. */
void *hw_linux_open(uint32_t index, const HwOps **ops, ipu_error *err);
void *hw_model_open(const char *spec, const HwOps **ops, ipu_error *err);

#endif

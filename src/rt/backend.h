/*
 * backend.h - what the runtime (runtime.c) needs from a device backend.
 *
 * runtime.c owns everything that does not depend on the device: parsing
 * device names, checking every argument against the chip's facts (tile
 * count, memory map), parsing images and keeping their symbol tables, and
 * the order of calls (load, run, load again). A backend only moves bytes,
 * starts supervisors, runs and reports: so its functions may assume valid
 * arguments (tile in range, byte range inside tile memory). The emulator
 * (backend_sim.c); the card model and a card, both through the card's
 * device interface (backend_card.c).
 */
#ifndef IPU_RT_BACKEND_H
#define IPU_RT_BACKEND_H

#include <stdint.h>

#include "../../include/ipu/runtime.h"
#include "../asm/asm.h"
#include "../target/chip.h"

typedef struct {
	const Chip *chip;
	uint32_t tiles; /* 1..chip->tiles */
	int threads;    /* >= 1 */
	int trace;
	char config[256]; /* model, hw: the configuration capture to replay */
	char log[256];    /* model, hw: the log of every register access */
	uint32_t card;    /* hw:N's N, or RT_CARD_MODEL */
} RtConfig;
#define RT_CARD_MODEL UINT32_MAX
enum {
	/* reads of the tiles' context states while a card's programs run
	 * (about a microsecond each) before the run is a hang */
	RT_CARD_POLLS = 10000000
};

typedef struct {
	const char *name; /* the name prefix: "sim" */
	/* A new backend state, or NULL with *err filled. */
	void *(*open)(const RtConfig *cfg, ipu_error *err);
	void (*close)(void *be);
	/* Write the image's segments into the tile and start its supervisor
	 * at the entry. */
	int (*load)(void *be, uint32_t tile, const TileImage *img,
	            ipu_error *err);
	int (*write)(void *be, uint32_t tile, uint32_t addr, const void *src,
	             uint32_t len, ipu_error *err);
	int (*read)(void *be, uint32_t tile, uint32_t addr, void *dst,
	            uint32_t len, ipu_error *err);
	/* Queue a host transfer at host sync `sync` of the next run. */
	int (*stream_write)(void *be, uint32_t sync, uint32_t tile,
	                    uint32_t addr, const void *src, uint32_t len,
	                    ipu_error *err);
	int (*stream_read)(void *be, uint32_t sync, uint32_t tile,
	                   uint32_t addr, void *dst, uint32_t len,
	                   ipu_error *err);
	/* max_cycles: UINT64_MAX for no limit; progress: NULL or called
	 * between rounds (ipu_set_progress). Fills the structured fields of
	 * *err; runtime.c adds the symbol of a faulting pc. */
	int (*run)(void *be, uint64_t max_cycles, ipu_progress_fn progress,
	           void *progress_ctx, ipu_error *err);
	/* All fields but `loaded`, which runtime.c knows. */
	void (*counters)(void *be, uint32_t tile, ipu_counters *out);
	uint64_t (*cycles)(void *be);
	uint64_t (*host_cycles)(void *be);
	/* NULL if the backend cannot trace. */
	int (*write_trace)(void *be, const char *path, ipu_error *err);
} RtBackend;

extern const RtBackend rt_backend_sim;
extern const RtBackend rt_backend_model;
extern const RtBackend rt_backend_hw;

/* Fill *err (never NULL here) and return its kind. */
int rt_error(ipu_error *err, ipu_error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

/*
 * chip.h - facts about each IPU: tiles, tile memory map, clocks, peak rates,
 * and the timing profile its emulation and cost model use (timing.h).
 *
 * Every number carries its source. Where the chip's behaviour is unknown the
 * value is a decision, marked DECISION, and listed in docs/emulator.md (the
 * timing rules: docs/fidelity.md); reports print the chip name and timing
 * profile so that results can be traced to these numbers.
 */
#ifndef IPU_CHIP_H
#define IPU_CHIP_H

#include <stdint.h>

#include "dtype.h"
#include "timing.h"

typedef enum {
	ARCH_IPU2,  /* GC200 (Mk2), no FP8 */
	ARCH_IPU21, /* C600: Mk2 tile with FP8 (system.md 1.3) */
} Arch;

/* Instruction-availability flags shared with insns.def and csrs.def. */
enum {
	F_IPU2 = 1 << 0,  /* ipu2 and later */
	F_IPU21 = 1 << 1, /* ipu21 only */
	F_SOLO = 1 << 2,  /* cannot be co-issued */
	F_LOAD = 1 << 3,
	F_STORE = 1 << 4,
	F_CONTROL = 1 << 5,
	F_SYSTEM = 1 << 6,
	F_RE = 1 << 7,   /* reverse-engineered encoding */
	F_WIDE = 1 << 8, /* two words (8 bytes, 8-byte aligned); the second is
	                     data, fields 63..32 of insns.def (isa.h) */
};

enum {
	CHIP_WORKERS = 6,  /* worker contexts per tile (isa.md 3.1) */
	CHIP_CONTEXTS = 7, /* supervisor + 6 workers */
	CHIP_SLOTS = 6,    /* round-robin issue slots (isa.md 3.1) */
	CHIP_CWEI = 64,    /* $CWEI registers, 2 AMP sets (isa.md 5.3) */
	CHIP_AACC = 32,    /* $AACC per worker, 2 AMP sets (isa.md 2.2) */
};

typedef struct Chip {
	const char *name; /* "c600", "gc200" */
	const char *arch_name;
	Arch arch;
	uint32_t tiles;
	double clock_hz;

	/* Tile memory (byte addresses). */
	uint32_t mem_base;   /* first byte of SRAM */
	uint32_t mem_end;    /* one past the last byte */
	uint32_t interleave; /* start of the interleaved region (region 1) */
	uint32_t exec_end;   /* instruction fetch only below this */
	uint32_t elem_bytes; /* one memory element */

	/* Peak multiply-accumulates per tile per cycle (AMP). */
	uint32_t macs_f32, macs_f16, macs_f8;

	/* Geometry: physical id = row * 64 + column group * 4 + lane bits. */
	uint32_t columns; /* column groups along the exchange spine */
	uint32_t rows;    /* tile pairs per column group and block */

	/* The timing rules' values (timing.h); chip_by_name's chips carry
	 * timing_nominal, chip_timed makes a chip with another profile. */
	const Timing *timing;
	const struct Chip *base; /* the chip_by_name chip this one times */
} Chip;

/* Source ids on the exchange besides tiles (the $INCOMING_MUX value). */
enum {
	MUX_HOST = 0x600, /* ipu-stack.md 3.2: TILE_MUX_HOST */
	MUX_NONE = 0x7ff, /* listen to nothing (DECISION) */
};

/* Fields of the timed exchange instructions (docs/chip.md). A send's sctl:
 * bits 1..0 the directions the words go (0: no packet; chip_route_dir),
 * bit 2 64-bit items (ipu-stack.md 3.2). An XPIC control's value (DECISION):
 * the mux source in bits 10..0, $INCOMING_FORMAT in bits 12..11 (0: 32-bit
 * items, else 64-bit). */
enum {
	SCTL_DIR = 3,
	SCTL_DIR1 = 1, /* up the spine positions (displacement >= 1, route.c) */
	SCTL_DIR2 = 2, /* down them */
	SCTL_64 = 4,
	XPIC_SOURCE = 0x7ff,
	XPIC_FORMAT_SHIFT = 11,
};

/* chip.c */
const Chip *chip_by_name(const char *name); /* NULL if unknown */
const Chip *chip_default(void);             /* the C600 */
const char *chip_names(void);               /* "c600, gc200" for messages */
/* The chip c (or the chip it times) with timing profile t: the same facts,
 * other rule values. Chips are interned: the same base and profile give
 * the same pointer, which lives until exit; a nominal profile gives the
 * chip_by_name chip itself. */
const Chip *chip_timed(const Chip *c, const Timing *t);
/* The value of one timing rule for this chip. */
static inline uint32_t
chip_rule(const Chip *c, TimingRule r)
{
	return c->timing->v[r];
}

/* Logical tile id <-> physical id (ipu-stack.md 3.1). */
/* Peak multiply-accumulates a tile does a cycle for a matmul whose
 * operands are of type t: f32, f8 (F143 or F152), else f16; 0 where the
 * chip has none (f8 on the GC200). */
uint32_t chip_peak_macs(const Chip *c, DType t);
uint32_t chip_physical(const Chip *c, uint32_t logical);
uint32_t chip_logical(const Chip *c, uint32_t physical);
/* The tile sharing the 64-bit exchange resources: physical id ^ 2. */
uint32_t chip_pair(const Chip *c, uint32_t logical);
/* Exchange route timing (route.c; docs/chip.md, "Route latency"). The
 * mux lead: a receiver's XPIC issued this many cycles after a sender's word
 * (negative: before) selects that word. */
int32_t chip_mux_lead(const Chip *c, uint32_t src, uint32_t dst);
/* XPIC issue to the selected words' write at the receiver (and so to the
 * XPIC taking effect in the emulator's frame): 52 + 2 x its row. */
uint32_t chip_xpic_cycles(const Chip *c, uint32_t dst);
/* The largest chip_xpic_cycles of the tile array (both chips share it). */
uint32_t chip_xpic_max_cycles(void);
/* A send's issue to the word's write at the receiver: lead + XPIC cycles,
 * always positive. */
uint32_t chip_route_cycles(const Chip *c, uint32_t src, uint32_t dst);
/* The largest chip_route_cycles over all pairs of tiles. */
uint32_t chip_route_max_cycles(const Chip *c);
/* The direction bit (SCTL_DIR1 or SCTL_DIR2) a send needs in its sctl for
 * its words to reach dst. */
uint32_t chip_route_dir(const Chip *c, uint32_t src, uint32_t dst);
/* Host link: cycles to move `bytes` over PCIe at this chip's clock. */
uint64_t chip_host_cycles(const Chip *c, uint64_t bytes);
/* Cycles of a sync that includes the host (rule sync-host, in ns). */
uint64_t chip_sync_host_cycles(const Chip *c);

/* Memory element of a byte address (0-based, both regions), -1 outside. */
int chip_mem_element(const Chip *c, uint32_t addr);
int chip_mem_elements(const Chip *c); /* number of elements */
/* The unit of the placer's `apart` rule that holds addr: an element below
 * the interleaved region, a pair of elements in it (and past the memory's
 * end, for the planner's unbounded packing, further pairs). */
uint64_t chip_apart_unit(const Chip *c, uint64_t addr);
int chip_in_memory(const Chip *c, uint32_t addr, uint32_t size);

/* Sync zones, the immediate of `sync` (syncs.def). */
typedef enum {
#define Z(name, zone, host, ext, note) SYNC_##name = zone,
#include "syncs.def"
#undef Z
} SyncZone;

/* 1 if `sync zone` includes the host (syncs.def), else 0. */
static inline int
sync_zone_has_host(int zone)
{
	switch (zone) {
#define Z(name, zone, host, ext, note)                                         \
	case zone:                                                             \
		return host;
#include "syncs.def"
#undef Z
	}
	return 0;
}

/* 1 if `sync zone` spans IPUs without the host (syncs.def), else 0. */
static inline int
sync_zone_is_external(int zone)
{
	switch (zone) {
#define Z(name, zone, host, ext, note)                                         \
	case zone:                                                             \
		return ext;
#include "syncs.def"
#undef Z
	}
	return 0;
}

#endif

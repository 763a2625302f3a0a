/*
 * chip.c - the chips we know, as data.
 *
 * Tile memory, both chips (isa.md section 8; ipu-stack.md 3.1 for the C600):
 *   0x4C000 .. 0x7FFFF  region 0, 13 elements of 16 KiB, code may live here
 *   0x80000 .. 0xE7FFF  region 1, interleaved: 13 pairs of 16 KiB elements,
 *                       consecutive 8-byte atoms alternate between the pair
 * isa.md infers the region boundary at 0x60000 from Mk1; ipu-stack.md found on
 * a real C600 that instruction fetch works only below 0x80000 and that the
 * interleaved region starts there. We use 0x80000 for both chips (DECISION for
 * the GC200: same tile design, no direct evidence).
 */
#include "chip.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"

static const Chip chips[] = {
    {
        .name = "c600",
        .arch_name = "ipu21",
        .arch = ARCH_IPU21,
        .tiles = 1472,         /* system.md 1.1 */
        .clock_hz = 1.485e9,   /* system.md 1.3: 280 TF / (1472 x 128) */
        .mem_base = 0x4C000,   /* isa.md 8, TMEM_REGION0_BASE_ADDR */
        .mem_end = 0xE8000,    /* 624 KiB (system.md 1.1) */
        .interleave = 0x80000, /* ipu-stack.md 3.1 */
        .exec_end = 0x80000,   /* ipu-stack.md 3.1 */
        .elem_bytes = 0x4000,  /* isa.md 8, TMEM_ELEMSIZE */
        .macs_f32 = 16,        /* system.md 1.2 */
        .macs_f16 = 64,        /* system.md 1.2 */
        .macs_f8 = 128,        /* system.md 1.2 */
        .columns = 16,         /* ipu-stack.md 3.1 */
        .rows = 23,            /* ipu-stack.md 3.1: 23 x 64 = 1472 */
        .timing = &timing_nominal,
        .base = &chips[0],
    },
    {
        .name = "gc200",
        .arch_name = "ipu2",
        .arch = ARCH_IPU2,
        .tiles = 1472,       /* system.md 1.1 */
        .clock_hz = 1.325e9, /* system.md 1.1: POD64 datasheet */
        .mem_base = 0x4C000,
        .mem_end = 0xE8000,
        .interleave = 0x80000, /* DECISION, see above */
        .exec_end = 0x80000,
        .elem_bytes = 0x4000,
        .macs_f32 = 16,
        .macs_f16 = 64,
        .macs_f8 = 0,  /* no FP8 on ipu2 */
        .columns = 16, /* same tile array as the C600 */
        .rows = 23,
        .timing = &timing_nominal, /* DECISION: as the C600 */
        .base = &chips[1],
    },
};

const Chip *
chip_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof chips / sizeof chips[0]; i++)
		if (strcmp(chips[i].name, name) == 0 ||
		    strcmp(chips[i].arch_name, name) == 0)
			return &chips[i];
	return NULL;
}

uint32_t
chip_peak_macs(const Chip *c, DType t)
{
	return t == DT_F32      ? c->macs_f32
	       : dtype_is_f8(t) ? c->macs_f8
	                        : c->macs_f16;
}

const Chip *
chip_default(void)
{
	return &chips[0];
}

const char *
chip_names(void)
{
	return "c600 (ipu21), gc200 (ipu2)";
}

/* Timed chips, interned: a list that lives until exit. */
typedef struct Timed {
	Chip chip;
	Timing timing;
	struct Timed *next;
} Timed;

static Timed *timed;
static pthread_mutex_t timed_lock = PTHREAD_MUTEX_INITIALIZER;

const Chip *
chip_timed(const Chip *c, const Timing *t)
{
	const Chip *base = c->base;
	if (timing_is_nominal(t) && !strcmp(t->spec, "nominal"))
		return base;
	pthread_mutex_lock(&timed_lock);
	Timed *x = timed;
	while (x && !(x->chip.base == base &&
	              !memcmp(x->timing.v, t->v, sizeof t->v) &&
	              !strcmp(x->timing.spec, t->spec)))
		x = x->next;
	if (!x) {
		x = xcalloc(1, sizeof *x);
		x->chip = *base;
		x->timing = *t;
		x->chip.timing = &x->timing;
		x->next = timed;
		timed = x;
	}
	pthread_mutex_unlock(&timed_lock);
	return &x->chip;
}

int
chip_in_memory(const Chip *c, uint32_t addr, uint32_t size)
{
	return addr >= c->mem_base && addr < c->mem_end &&
	       size <= c->mem_end - addr;
}

int
chip_mem_elements(const Chip *c)
{
	return (int)((c->interleave - c->mem_base) / c->elem_bytes +
	             (c->mem_end - c->interleave) / c->elem_bytes);
}

int
chip_mem_element(const Chip *c, uint32_t addr)
{
	if (!chip_in_memory(c, addr, 1))
		return -1;
	if (addr < c->interleave)
		return (int)((addr - c->mem_base) / c->elem_bytes);
	uint32_t region0 = (c->interleave - c->mem_base) / c->elem_bytes;
	uint32_t pair = (addr - c->interleave) / (2 * c->elem_bytes);
	return (int)(region0 + 2 * pair + ((addr >> 3) & 1));
}

uint64_t
chip_apart_unit(const Chip *c, uint64_t addr)
{
	if (addr < c->interleave)
		return (addr - c->mem_base) / c->elem_bytes;
	return (c->interleave - c->mem_base) / c->elem_bytes +
	       (addr - c->interleave) / (2 * c->elem_bytes);
}

/*
 * Logical -> physical (ipu-stack.md 3.1): lane = bit 0, pair = id / 2;
 * block = pair / rows, row = pair % rows, mirrored in odd blocks; the column
 * field is (block / 2) * 4 + (block & 1); physical = row * 64 + column +
 * 2 * lane. So bit 0 is the block parity, bit 1 the pair lane, bits 2..5
 * the column group and bits 6.. the row.
 */
uint32_t
chip_physical(const Chip *c, uint32_t logical)
{
	uint32_t lane = logical & 1, pair = logical / 2;
	uint32_t block = pair / c->rows, row = pair % c->rows;
	if (block & 1)
		row = c->rows - 1 - row;
	uint32_t column = (block / 2) * 4 + (block & 1);
	return row * 64 + column + 2 * lane;
}

uint32_t
chip_logical(const Chip *c, uint32_t physical)
{
	uint32_t row = physical / 64, column = physical % 64;
	uint32_t lane = (column >> 1) & 1;
	uint32_t block = (column / 4) * 2 + (column & 1);
	if (block & 1)
		row = c->rows - 1 - row;
	return 2 * (block * c->rows + row) + lane;
}

uint32_t
chip_pair(const Chip *c, uint32_t logical)
{
	return chip_logical(c, chip_physical(c, logical) ^ 2);
}

uint64_t
chip_host_cycles(const Chip *c, uint64_t bytes)
{
	double s = (double)bytes / (chip_rule(c, TIMING_HOST_LINK) * 1e6);
	return (uint64_t)(s * c->clock_hz + 0.999999);
}

uint64_t
chip_sync_host_cycles(const Chip *c)
{
	return (uint64_t)(chip_rule(c, TIMING_SYNC_HOST) * 1e-9 * c->clock_hz +
	                  0.5);
}

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

#include <string.h>

static const Chip chips[] = {
    {
        .name = "c600",
        .arch_name = "ipu21",
        .arch = ARCH_IPU21,
        .tiles = 1472,          /* system.md 1.1 */
        .clock_hz = 1.485e9,    /* system.md 1.3: 280 TF / (1472 x 128) */
        .mem_base = 0x4C000,    /* isa.md 8, TMEM_REGION0_BASE_ADDR */
        .mem_end = 0xE8000,     /* 624 KiB (system.md 1.1) */
        .interleave = 0x80000,  /* ipu-stack.md 3.1 */
        .exec_end = 0x80000,    /* ipu-stack.md 3.1 */
        .elem_bytes = 0x4000,   /* isa.md 8, TMEM_ELEMSIZE */
        .macs_f32 = 16,         /* system.md 1.2 */
        .macs_f16 = 64,         /* system.md 1.2 */
        .macs_f8 = 128,         /* system.md 1.2 */
        .sync_local_cycles = 6, /* system.md 8.2: tile-local sync ~6 */
        .run_start_cycles = 1,  /* DECISION: next slot turn */
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
        .macs_f8 = 0, /* no FP8 on ipu2 */
        .sync_local_cycles = 6,
        .run_start_cycles = 1,
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

int
chip_in_memory(const Chip *c, uint32_t addr, uint32_t size)
{
	return addr >= c->mem_base && addr < c->mem_end &&
	       size <= c->mem_end - addr;
}

int
chip_is_interleaved(const Chip *c, uint32_t addr)
{
	return addr >= c->interleave && addr < c->mem_end;
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

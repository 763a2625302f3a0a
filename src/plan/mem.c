/*
 * mem.c - the tile memory model: what a tile needs, one bound for the
 * planner's estimates and the placer's measure (docs/compiler.md,
 * "Memory: what the planner knows").
 *
 * A tile holds, from mem_base up, its code (the kernels' shared image,
 * then its own program) and above it its data buffers; at every step the
 * code and the live buffers must fit the tile's memory. The placer checks
 * this bound on the lowered program's buffers and code (src/place/) and
 * then packs them under the alignment, region and element rules; the GEMM
 * planner checks it on its estimate of a candidate's fullest tile; the
 * compiler reports each tile's measure with it.
 */
#include "plan.h"

#include "../kernels/kernels.h"

uint64_t
plan_tile_room(const Chip *c)
{
	return c->mem_end - c->mem_base;
}

uint64_t
plan_tile_need(TileBytes b)
{
	return b.code + b.data;
}

uint64_t
plan_tile_over(const Chip *c, TileBytes b)
{
	uint64_t need = plan_tile_need(b), room = plan_tile_room(c);
	return need > room ? need - room : 0;
}

uint64_t
plan_code_phase(uint64_t cycles)
{
	return (CODE_EXCHANGE_INSNS + (cycles >> CODE_DELAY_LOG2)) * CODE_INSN;
}

uint64_t
plan_code_xfers(uint64_t recv, uint64_t sends, uint64_t items)
{
	/* a send's items in instructions: ceil per send, so at most one more
	 * a send than the items' own */
	return (3 * 2 * recv + 2 * sends + items / CODE_SEND_ITEMS) * CODE_INSN;
}

uint64_t
plan_kernels_code(const Chip *c)
{
	const char *names[64];
	int n = 0;
	for (const KernelObject *o = kernel_objects; o->name && n < 64; o++)
		names[n++] = o->name;
	TileImage img;
	Diag d;
	if (kernel_image(names, n, c, &img, &d))
		return plan_tile_room(c); /* cannot happen: built with them */
	uint64_t end = c->mem_base;
	for (int i = 0; i < img.nseg; i++)
		if (img.seg[i].addr + img.seg[i].size > end)
			end = img.seg[i].addr + img.seg[i].size;
	img_free(&img);
	return align_up(end, 8) - c->mem_base; /* where programs start */
}

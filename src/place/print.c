/*
 * print.c - placement's result as text, for `ipu compile --dump=place`:
 * each tile's code end, then every buffer that holds bytes with its
 * address range and lifetime.
 */
#include "place.h"

void
place_print(const Lowered *l, const uint32_t *code_end, FILE *f)
{
	fprintf(f, "# placement: %u tiles, %d buffers\n", l->tiles, l->nbuf);
	for (uint32_t t = 0; t < l->tiles; t++)
		fprintf(f, "tile %u code 0x%x..0x%x\n", t, l->chip->mem_base,
		        code_end ? code_end[t] : l->chip->mem_base);
	for (int i = 0; i < l->nbuf; i++) {
		const Buffer *b = &l->buf[i];
		if (!b->bytes)
			continue;
		fprintf(f, "buffer b%d tile %u 0x%x..0x%x steps %d..", i,
		        b->tile, b->addr, b->addr + b->bytes, b->first);
		if (b->last == INT32_MAX)
			fputs("end", f);
		else
			fprintf(f, "%d", b->last);
		fprintf(f, " \"%s\"\n", b->what);
	}
}

/*
 * fuzz_obj.c - libFuzzer entry point for the ELF reader: arbitrary bytes as
 * an object or image. Reading must reject bad input with a Diag and never
 * crash; whatever it accepts must also disassemble, load as an image and
 * link (objects) without crashing.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../src/asm/asm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Obj *o;
	Diag d;
	if (obj_read(data, size, "fuzz.o", &o, &d) != 0)
		return 0;
	free(disasm_obj(o, ARCH_IPU21, 0));
	obj_free(o);
	TileImage img;
	if (img_load(data, size, "fuzz.o", NULL, &img, &d) == 0)
		img_free(&img);
	return 0;
}

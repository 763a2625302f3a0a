/*
 * fuzz_asm.c - libFuzzer entry point for the assembler: arbitrary bytes as
 * a source file (seeds in corpus/fuzz_asm: conditionals, macros, the
 * pseudo-instructions and directives of real code). Includes are disabled
 * (and the preprocessor, a separate program, is not run); the assembler
 * must report errors and never crash, hang or leak. When the input
 * assembles, the object also goes through the ELF writer, the reader and
 * the disassembler.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../src/asm/asm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	DiagList warns = {0};
	AsmOptions opt = {.no_include = 1, .warnings = &warns};
	Obj *o;
	DiagList errs;
	if (asm_source("fuzz.s", (const char *)data, size, &opt, &o, &errs) ==
	    0) {
		uint8_t *bytes;
		size_t len;
		Diag d;
		Obj *back;
		if (obj_write(o, &bytes, &len, &d) == 0) {
			if (obj_read(bytes, len, "fuzz.o", &back, &d) != 0)
				abort(); /* our own output must read back */
			obj_free(back);
			free(bytes);
		}
		free(disasm_obj(o, ARCH_IPU21, DIS_PLAIN));
		obj_free(o);
	}
	diaglist_free(&errs);
	diaglist_free(&warns);
	return 0;
}

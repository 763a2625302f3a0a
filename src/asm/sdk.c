/*
 * sdk.c - the names Graphcore's SDK headers give to tile constants, with
 * this project's values, for assembly written against the SDK.
 *
 * poplibs' codelets and the rival's kernels include "arch/gc_tile_defines.h",
 * "poplar/TileConstants.hpp", "poplar/StackSizeDefs.hpp" and
 * "poplar/AvailableVTypes.h", which are not public. The names they use are
 * known from that code; the values come from the project's own tables (CSR
 * indices from target/csrs.def, memory facts from the chip) or from the
 * public sources cited row by row, and where nothing public gives one (the
 * AMP flag encodings) they are this project's own assignment, the one the
 * emulator decodes. The same table serves twice: the assembler predefines
 * every name as a symbol (so plain .s files may use them), and the
 * preprocessor step (cpp.c) writes headers of these names for #include.
 */
#include "asmpriv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SDK_HEADER = 1 }; /* written into the headers, not only predefined */

/* Values independent of the chip. CSR fields are (mask, shift) pairs. */
static const struct {
	const char *name;
	int64_t value;
	int flags;
} fixed[] = {
    /* AMP flag immediates: our own assignment (docs/assembler.md); the
     * emulator reads the phase from bits [1:0] (f16, f8) or [2:0] (f32)
     * and ignores the rest. E1/E2 (fewer engines) carry 0x20/0x10 above
     * the phase so that they stay distinct; the emulator does not model
     * them. */
    {"TAMP_F16V4_E4_P0", 0, SDK_HEADER},
    {"TAMP_F16V4_E4_P1", 1, SDK_HEADER},
    {"TAMP_F16V4_E4_P2", 2, SDK_HEADER},
    {"TAMP_F16V4_E4_P3", 3, SDK_HEADER},
    {"TAMP_F16V4_E2_P0", 0x10, SDK_HEADER},
    {"TAMP_F16V4_E2_P1", 0x11, SDK_HEADER},
    {"TAMP_F16V4_E1_P0", 0x20, SDK_HEADER},
    {"TAMP_F8V8_E4_P0", 0, SDK_HEADER},
    {"TAMP_F8V8_E4_P1", 1, SDK_HEADER},
    {"TAMP_F8V8_E4_P2", 2, SDK_HEADER},
    {"TAMP_F8V8_E4_P3", 3, SDK_HEADER},
    {"TAMP_F32_E4_P0", 0, SDK_HEADER},
    {"TAMP_F32_E4_P1", 1, SDK_HEADER},
    {"TAMP_F32_E4_P2", 2, SDK_HEADER},
    {"TAMP_F32_E4_P3", 3, SDK_HEADER},
    {"TAMP_F32_E4_P4", 4, SDK_HEADER},
    {"TAMP_F32_E4_P5", 5, SDK_HEADER},
    {"TAMP_F32_E4_P6", 6, SDK_HEADER},
    {"TAMP_F32_E4_P7", 7, SDK_HEADER},
    {"TAMP_F32_E2_P0", 0x10, SDK_HEADER},
    {"TAMP_F32_E2_P1", 0x11, SDK_HEADER},
    {"TAMP_F32_E2_P2", 0x12, SDK_HEADER},
    {"TAMP_F32_E2_P3", 0x13, SDK_HEADER},
    {"TAMP_F32_E1_P0", 0x20, SDK_HEADER},
    {"TAMP_F32_E1_P1", 0x21, SDK_HEADER},
    {"TAMP_F32_E1_P2", 0x22, SDK_HEADER},
    {"TAMP_F32_E1_P3", 0x23, SDK_HEADER},
    /* SLIC weight selectors: our own assignment. */
    {"TSLIC_F16V4_1x4_W0", 0, SDK_HEADER},
    {"TSLIC_F16V4_1x4_W1", 1, SDK_HEADER},
    /* f16v4istacc / f16v4stacc phases: poplibs f3e4940d (2019) defined
     * them itself with these values. */
    {"TISTACC_P0", 0, SDK_HEADER},
    {"TISTACC_P1", 1, SDK_HEADER},
    {"TSTACC_P0", 0, SDK_HEADER},
    {"TSTACC_P1", 1, SDK_HEADER},
/* sync zones (target/syncs.def, isa.md 3.4) */
#define Z(name, zone, host, ext, note)                                         \
	{"TEXCH_SYNCZONE_" #name, zone, SDK_HEADER},
#include "../target/syncs.def"
#undef Z
    /* comparison results (poplibs comments: CTCInferenceSort.S,
     * unaryOpsOps.h.S) */
    {"TFPU_FP32_TRUE", 0xffffffff, SDK_HEADER},
    {"TFPU_FP32_FALSE", 0, SDK_HEADER},
    {"TFPU_FP16_TRUE", 0xffff, SDK_HEADER},
    {"TFPU_FP16_FALSE", 0, SDK_HEADER},
    /* CSR fields (isa.md 2.3) */
    {"CSR_W_WSR__CTXTID_M1__MASK", 7, SDK_HEADER},
    {"CSR_W_WSR__CTXTID_M1__SHIFT", 0, SDK_HEADER},
    {"CSR_W_REPEAT_COUNT__VALUE__MASK", 0xffff, SDK_HEADER},
    {"CSR_W_REPEAT_COUNT__VALUE__SHIFT", 0, SDK_HEADER},
    {"CSR_W_FP_CLR__ZAACC__MASK", 1, SDK_HEADER},
    {"CSR_W_FP_CLR__ZAACC__SHIFT", 3, SDK_HEADER},
    {"CSR_W_FP_CTL__INV__MASK", 1, SDK_HEADER},
    {"CSR_W_FP_CTL__INV__SHIFT", 0, SDK_HEADER},
    {"CSR_W_FP_CTL__DIV0__MASK", 1, SDK_HEADER},
    {"CSR_W_FP_CTL__DIV0__SHIFT", 1, SDK_HEADER},
    {"CSR_W_FP_CTL__OFLO__MASK", 1, SDK_HEADER},
    {"CSR_W_FP_CTL__OFLO__SHIFT", 2, SDK_HEADER},
    {"CSR_W_FP_CTL__RND__MASK", 7, SDK_HEADER},
    {"CSR_W_FP_CTL__RND__SHIFT", 16, SDK_HEADER},
    {"CSR_W_FP_CTL__ESR__MASK", 1, SDK_HEADER},
    {"CSR_W_FP_CTL__ESR__SHIFT", 19, SDK_HEADER},
    {"CSR_W_FP_CTL__NANOO__MASK", 1, SDK_HEADER},
    {"CSR_W_FP_CTL__NANOO__SHIFT", 20, SDK_HEADER},
    {"CSR_S_FP_ICTL__INV__MASK", 1, SDK_HEADER},
    {"CSR_S_FP_ICTL__INV__SHIFT", 0, SDK_HEADER},
    {"CSR_S_FP_ICTL__DIV0__MASK", 1, SDK_HEADER},
    {"CSR_S_FP_ICTL__DIV0__SHIFT", 1, SDK_HEADER},
    {"CSR_S_FP_ICTL__OFLO__MASK", 1, SDK_HEADER},
    {"CSR_S_FP_ICTL__OFLO__SHIFT", 2, SDK_HEADER},
    {"CSR_S_FP_ICTL__RND__MASK", 7, SDK_HEADER},
    {"CSR_S_FP_ICTL__RND__SHIFT", 16, SDK_HEADER},
    {"CSR_S_FP_ICTL__ESR__MASK", 1, SDK_HEADER},
    {"CSR_S_FP_ICTL__ESR__SHIFT", 19, SDK_HEADER},
    {"CSR_S_FP_ICTL__NANOO__MASK", 1, SDK_HEADER},
    {"CSR_S_FP_ICTL__NANOO__SHIFT", 20, SDK_HEADER},
    /* tile memory: a 21-bit byte address space (poplibs' own
     * TileConstants.hpp before fd84c3a4, isa.md 8); the mask of a full
     * address follows from it (DECISION: the SDK's value is not public) */
    {"TMEM_BYTE_MAX_ADDRESS_WIDTH", 21, SDK_HEADER},
    {"TMEM_FULL_ADDRESS_MASK", (1 << 21) - 1, SDK_HEADER},
    {"CTXT_WORKERS", CHIP_WORKERS, SDK_HEADER},
    /* a poplibs macro (CommonPoplibsMacros.h.S), predefined for our own
     * kernels only: the bit of $FP_CLR that zeroes the accumulators */
    {"ZAACC_BITMASK", 8, 0},
};

/* The CSR indices of csrs.def: CSR_W_<name>__INDEX (upper-space worker
 * CSRs at 0x100 + index, as in CSR_W_FP_CTL__INDEX = 258 of poplibs'
 * TileConstants.hpp before fd84c3a4) and CSR_S_<name>__INDEX. */
enum { SP_CSR_W, SP_CSR_WU, SP_CSR_S };
#define NAME_CSR_W(n) "CSR_W_" #n "__INDEX"
#define NAME_CSR_WU(n) "CSR_W_" #n "__INDEX"
#define NAME_CSR_S(n) "CSR_S_" #n "__INDEX"
static const struct {
	const char *name;
	int index;
	uint32_t arch;
} csrs[] = {
#define R(name, space, index, arch, note)                                      \
	{NAME_##space(name), index + (SP_##space == SP_CSR_WU ? 0x100 : 0),    \
	 arch},
#include "../target/csrs.def"
#undef R
};

int
sdk_names(const Chip *chip, SdkName *out, int max, int header_only)
{
	int n = 0;
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (n < max && (!header_only || fixed[i].flags & SDK_HEADER))
			out[n++] = (SdkName){fixed[i].name, fixed[i].value};
	for (size_t i = 0; i < sizeof csrs / sizeof csrs[0]; i++)
		if (n < max &&
		    (!(csrs[i].arch & F_IPU21) || chip->arch == ARCH_IPU21))
			out[n++] = (SdkName){csrs[i].name, csrs[i].index};
	if (n + 2 <= max) {
		out[n++] = (SdkName){"TMEM_REGION0_BASE_ADDR", chip->mem_base};
		out[n++] = (SdkName){"TMEM_ELEMSIZE", chip->elem_bytes};
	}
	return n;
}

/* The headers, by the path poplibs includes them with. */
const char *const sdk_header_paths[] = {
    "arch/gc_tile_defines.h",
    "poplar/TileConstants.hpp",
    "poplar/StackSizeDefs.hpp",
    "poplar/AvailableVTypes.h",
    NULL,
};

static const char header_note[] =
    "/* Written by the ipu assembler for the C preprocessor: Graphcore's\n"
    " * SDK header of this name is not public. These are the ipu project's\n"
    " * values (src/asm/sdk.c, docs/assembler.md); do not edit. */\n";

/* DECISION: the section flags of worker code, used by poplibs with either
 * header; Graphcore's are not public, ours mark code. */
static const char worker_flags[] = "#ifndef FUNCTION_IS_WORKER\n"
                                   "#define FUNCTION_IS_WORKER \"ax\"\n"
                                   "#endif\n";

char *
sdk_header_text(const char *path, const Chip *chip)
{
	Str s = {0};
	str_printf(&s, "%s#pragma once\n", header_note);
	if (!strcmp(path, "arch/gc_tile_defines.h")) {
		SdkName v[512];
		int n = sdk_names(chip, v, 512, 1);
		for (int i = 0; i < n; i++)
			str_printf(&s, "#define %s %#llx\n", v[i].name,
			           (unsigned long long)v[i].value);
	} else if (!strcmp(path, "poplar/TileConstants.hpp")) {
		str_printf(&s, "#include \"arch/gc_tile_defines.h\"\n%s",
		           worker_flags);
	} else if (!strcmp(path, "poplar/StackSizeDefs.hpp")) {
		/* Poplar records each vertex's stack use; nothing here needs
		 * it, so the records are accepted and dropped. */
		str_printf(&s,
		           "%s.macro DEF_STACK_USAGE size:req, name:req\n"
		           ".endm\n"
		           ".macro DEF_STACK_SIZE_OWN size:req, name:req\n"
		           ".endm\n",
		           worker_flags);
	} else if (!strcmp(path, "poplar/AvailableVTypes.h")) {
		/* DECISION: no compact vector layouts: 16-bit scaled pointers
		 * cannot reach 624 KiB of tile memory. Define VECTOR_AVAIL_*
		 * or VECTORLIST_AVAIL_DELTAN with -D to assemble the others. */
	} else {
		free(s.p);
		return NULL;
	}
	return s.p;
}

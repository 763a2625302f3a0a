/*
 * isa.h - the instruction table (target/insns.def) in usable form: operand
 * specifications, decoding a word, encoding operands, register and CSR names.
 *
 * Everything that knows an encoding goes through here: the assembler, the
 * disassembler, the linker (relocations re-encode one operand) and the
 * emulator's decoder. No other file holds an opcode.
 */
#ifndef IPU_ISA_H
#define IPU_ISA_H

#include <stddef.h>
#include <stdint.h>

#include "../target/chip.h"

typedef enum { LANE_MAIN, LANE_AUX } Lane;
typedef enum { CTX_W, CTX_S, CTX_B } InsnContext;

typedef enum {
	OPK_M,  /* MRF register */
	OPK_MP, /* MRF pair, even first register */
	OPK_A,  /* ARF register */
	OPK_AP, /* ARF pair, even first register */
	OPK_AQ, /* ARF quad, first register a multiple of 4 */
	OPK_U,  /* unsigned immediate */
	OPK_S,  /* signed immediate */
	OPK_Z,  /* zero-tailed immediate: the field holds the top bits */
	OPK_T,  /* code address; the field holds address / 4 */
	OPK_C,  /* CSR index, lower space (get/put) */
	OPK_CU, /* CSR index, upper space (uget/uput) */
} OperandKind;

typedef enum {
	DEC_NONE,
	DEC_BL,   /* :BL broadcast lower half */
	DEC_BU,   /* :BU broadcast upper half */
	DEC_B,    /* :B broadcast f32 */
	DEC_PINC, /* += post-increment */
	DEC_PP,   /* ++ */
	DEC_AT,   /* @ */
	DEC_SHR,  /* >> */
} Decor;

typedef struct {
	uint8_t hi, lo; /* bits of the word */
	uint8_t vlo;    /* value bit held by bit `lo` */
} FieldPiece;

typedef struct {
	OperandKind kind;
	Decor decor;
	uint8_t word; /* 0, or 1: the second word of an F_WIDE row (insns.def
	                 bits 63..32); pieces are bits of that word */
	uint8_t npieces;
	uint8_t
	    width; /* bits of the encoded value, including implied low zeros */
	FieldPiece piece[3];
} OperandSpec;

typedef struct {
	const char *variant;  /* "add_mmmn_si": unique */
	const char *mnemonic; /* "add" */
	uint32_t match, mask;
	Lane lane;
	InsnContext ctx;
	uint32_t flags; /* F_* from chip.h */
	uint8_t nops;
	OperandSpec op[6];
} InsnDesc;

/* A decoded instruction: the table row and operand values in assembly order.
 * Registers are numbers (first register of a pair or quad); immediates are
 * values (sign-extended, zero-tailed shifted into place, code addresses in
 * bytes). */
typedef struct {
	int16_t row;
	uint8_t nops;
	int32_t op[6];
} Insn;

/* The rows of insns.def in table order, by variant name (INSN_send_mmmn_zi):
 * code that emits a fixed instruction names its row, never a string. */
typedef enum {
#define I(var, mn, match, mask, lane, ctx, flags, ops) INSN_##var,
#include "../target/insns.def"
#undef I
	INSN_COUNT
} InsnRow;

/* Control and status registers (target/csrs.def): the space of an index,
 * and CSR_<name>, each register's index in its space (an upper-space
 * index without its 0x100, as uget/uput take it). */
typedef enum { CSR_W, CSR_WU, CSR_S } CsrSpace;
enum {
#define R(name, space, index, arch, note) CSR_##name = index,
#include "../target/csrs.def"
#undef R
};

/* 363 rows of isa.md Appendix A + 5 exchange rows of ipu-stack.md 3.2. */
enum { ISA_ROWS = INSN_COUNT, ISA_MAX_OPS = 6 };

/* isa.c */
const InsnDesc *isa_row(int row);
int isa_rows(void);
int isa_row_by_variant(const char *variant); /* -1 if none */
/* Rows of one mnemonic, in table order; returns count, *first = a list. */
int isa_rows_by_mnemonic(const char *mnemonic, const int16_t **rows);
int isa_available(const InsnDesc *d, Arch arch);
/* Words of the instruction: 2 for F_WIDE rows (8 bytes, 8-byte aligned, the
 * second word is data), else 1. */
int isa_words(const InsnDesc *d);

/* Decode one word. Returns the row, or -1 if no row matches, the row is not
 * on this chip, or an operand is malformed (odd pair register). The co-issue
 * bit is ignored here; callers read it from the word, except for F_WIDE rows,
 * where bit 31 is an opcode bit (check the row's flags first). For an F_WIDE
 * row the operands held by the second word read as 0: use isa_decode_wide. */
int isa_decode(uint32_t word, Arch arch, Insn *out);
/* Decode an instruction from its first word and the word after it: as
 * isa_decode, and for an F_WIDE row the second-word operands come from w1
 * (which is ignored otherwise). */
int isa_decode_wide(uint32_t w0, uint32_t w1, Arch arch, Insn *out);

/* Does `value` fit operand `i` of `row`? Registers must be aligned for their
 * kind; immediates must fit the field. */
int isa_operand_fits(const OperandSpec *s, int64_t value);
/* Encode; returns 0, or -1-i when operand i does not fit. For an F_WIDE
 * row this gives the first word only (every operand is still checked). */
int isa_encode(const Insn *in, uint32_t *word);
/* Encode isa_words() words into w[0], w[1] (w[1] = 0 for a one-word row);
 * returns 0, or -1-i when operand i does not fit. */
int isa_encode_wide(const Insn *in, uint32_t w[2]);
/* The field bits of one operand only, in the word that holds it (s->word);
 * for relocation. */
uint32_t isa_encode_operand(const OperandSpec *s, int64_t value);

/* Registers, CSRs. */
const char *isa_mreg_name(int r);        /* "$m3", "$lr", "$mzero" ... */
const char *isa_areg_name(int r, int n); /* n = 1, 2, 4 registers */
/* CSR by name ("FP_CTL", with or without '$'); kind OPK_C or OPK_CU and the
 * context that names it (supervisor CSRs and worker CSRs share indices).
 * Returns the index or -1. */
int isa_csr_index(const char *name, OperandKind kind, int supervisor_ok,
                  int worker_ok);
const char *isa_csr_name(int index, OperandKind kind, InsnContext ctx);

/* disasm.c: one instruction as assembly text that re-assembles to the same
 * word ("add $m1, $m2, 5"; the variant name when the assembler would pick
 * another row). Returns 0, or IPU_EINVAL for a bad row. */
int disasm_insn(const Insn *in, Arch arch, char *buf, size_t len);

#endif

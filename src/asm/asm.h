/*
 * asm.h - the assembler, relocatable objects, the linker, tile images and
 * the disassembler.
 *
 * Flow: assembly text -> asm_source() -> Obj (OBJ_REL) -> obj_write() ELF32
 * relocatable; objects -> link_objects() -> Obj (OBJ_EXEC) -> obj_write()
 * ELF32 executable tile image; image bytes -> img_read() -> TileImage (segments
 * the emulator copies into tile memory). Every encoding goes through isa.h;
 * nothing here knows an opcode. The syntax, directives, pseudo-instructions,
 * object format and link rules are described in docs/assembler.md.
 *
 * Errors are user errors: functions return 0 or a negative IPU_E* and fill a
 * Diag (the assembler fills a list, one per error).
 */
#ifndef IPU_ASM_H
#define IPU_ASM_H

#include <stddef.h>
#include <stdint.h>

#include "../util/util.h"
#include "isa.h"

/* ELF identification of our objects and images. EM_IPU is this project's
 * own machine number, not Graphcore's (their value is not public). */
enum {
	EM_IPU = 0x4950,    /* "PI": this project's own */
	OBJF_IPU21 = 1 << 0 /* e_flags: uses ipu21-only instructions */
};

/* Relocation types (ELF32 RELA; r_info low byte). OPERAND relocations
 * re-encode operand i of the instruction word at r_offset through the
 * instruction table; the data relocations store S + A little-endian. */
enum {
	R_IPU_NONE = 0,
	R_IPU_32 = 1,
	R_IPU_16 = 2,
	R_IPU_8 = 3,
	R_IPU_OPERAND0 = 16, /* .. R_IPU_OPERAND0 + ISA_MAX_OPS - 1 */
};

typedef enum { OBJ_REL, OBJ_EXEC } ObjKind;

enum {
	SECF_WRITE = 1 << 0,  /* writable data */
	SECF_EXEC = 1 << 1,   /* code */
	SECF_NOBITS = 1 << 2, /* zero-filled, no file contents (.bss) */
};

enum { OBJ_UNDEF = -1, OBJ_ABS = -2 }; /* ObjSymbol.section */
enum { SYMB_LOCAL, SYMB_GLOBAL };
enum { SYMT_NOTYPE, SYMT_OBJECT, SYMT_FUNC, SYMT_SECTION };

typedef struct {
	char *name;
	uint32_t flags; /* SECF_* */
	uint32_t align; /* bytes, a power of two */
	uint32_t size;  /* bytes */
	uint8_t *data;  /* size bytes; NULL when SECF_NOBITS */
	uint32_t addr;  /* OBJ_EXEC: load address; OBJ_REL: 0 */
} ObjSection;

typedef struct {
	char *name;
	int section;    /* index into Obj.sec, OBJ_UNDEF or OBJ_ABS */
	uint32_t value; /* OBJ_REL: offset in section; OBJ_EXEC: address */
	uint32_t size;  /* bytes (.size), 0 if unknown */
	uint8_t bind;   /* SYMB_* */
	uint8_t type;   /* SYMT_* */
} ObjSymbol;

typedef struct {
	int section;     /* section patched */
	uint32_t offset; /* byte offset of the patched word/half/byte */
	uint32_t type;   /* R_IPU_* */
	int symbol;      /* index into Obj.sym */
	int32_t addend;
} ObjReloc;

typedef struct {
	ObjKind kind;
	uint32_t flags; /* OBJF_* */
	uint32_t entry; /* OBJ_EXEC: first instruction */
	char *name;     /* file name for messages; may be NULL */
	ObjSection *sec;
	int nsec;
	ObjSymbol *sym;
	int nsym;
	ObjReloc *rel;
	int nrel;
} Obj;

/* obj.c */
Obj *obj_new(ObjKind kind, const char *name);
void obj_free(Obj *o);
int obj_add_section(Obj *o, const char *name, uint32_t flags, uint32_t align);
int obj_add_symbol(Obj *o, const ObjSymbol *s); /* copies the name */
void obj_add_reloc(Obj *o, const ObjReloc *r);
int obj_find_symbol(const Obj *o, const char *name); /* -1 if none */
/* ELF32 bytes (malloc'd) of an object or image. */
int obj_write(const Obj *o, uint8_t **data, size_t *len, Diag *d);
int obj_write_file(const Obj *o, const char *path, Diag *d);
/* Parse and validate ELF32 bytes (relocatable or executable); `name` is
 * used in messages and kept in the Obj. */
int obj_read(const uint8_t *data, size_t len, const char *name, Obj **out,
             Diag *d);
int obj_read_file(const char *path, Obj **out, Diag *d);
/* Does the buffer start like an ELF file? */
int obj_is_elf(const uint8_t *data, size_t len);
/* The bits of `word` that operand `s` occupies. */
uint32_t obj_operand_mask(const OperandSpec *s);
/* "0..65535", "-128..127", ... for messages. */
void obj_operand_range(const OperandSpec *s, char *buf, size_t len);

/* asm.c */
typedef struct {
	Diag *v; /* in source order */
	int n;
} DiagList;

typedef struct {
	const Chip *chip;   /* rows available; NULL = chip_default() */
	int max_errors;     /* stop after this many; 0 = 20 */
	int no_include;     /* reject .include (fuzzing, tests) */
	DiagList *warnings; /* if set, .warning messages are appended here
	                       (the caller frees them); else dropped */
} AsmOptions;

void diaglist_free(DiagList *l);

/* Assemble `len` bytes of `text` named `name` (used in messages and to find
 * .include files). On success *out is a new OBJ_REL object. On failure
 * returns IPU_EINVAL and `errs` holds every error found. */
int asm_source(const char *name, const char *text, size_t len,
               const AsmOptions *opt, Obj **out, DiagList *errs);
int asm_file(const char *path, const AsmOptions *opt, Obj **out,
             DiagList *errs);

/* cpp.c: the C preprocessor step for .S files (docs/assembler.md). */
typedef struct {
	const Chip *chip;           /* __IPU_ARCH_VERSION__, SDK header values;
	                               NULL = chip_default() */
	const char *const *include; /* -I directories, searched before the
	                               SDK headers' */
	int ninclude;
	const char *const *define; /* -D: "NAME" or "NAME=VALUE" */
	int ndefine;
	const char *const *undef; /* -U NAME */
	int nundef;
} AsmCppOptions;

/* Run `cpp` on the file at path: *text (malloc'd, *len bytes) is its
 * output, line markers included, for asm_source(path, ...). Returns 0
 * (d->msg then holds any warnings cpp printed, else is empty) or IPU_E*
 * with d saying why (cpp's messages, or that it could not run). */
int asm_preprocess(const char *path, const AsmCppOptions *o, char **text,
                   size_t *len, Diag *d);

/* Variant selection, shared with the disassembler. An operand as written:
 * a register (first register of a pair/quad), an immediate, or a name
 * ($FP_CTL, $CWEI_1_2) that only some operand kinds accept. */
typedef enum { AOP_MREG, AOP_AREG, AOP_IMM, AOP_NAME } AopClass;
typedef struct {
	AopClass cls;
	uint8_t nregs;    /* registers: 1, 2 or 4 */
	Decor decor;      /* as written after the operand */
	int known;        /* AOP_IMM: value known (else it is relocated) */
	int64_t value;    /* register number or immediate */
	const char *name; /* AOP_NAME, without '$' */
} AsmOperand;

enum {
	SEL_NO_MNEMONIC = -1, /* no such mnemonic or variant */
	SEL_NOT_ON_ARCH = -2, /* exists, but not on this chip */
	SEL_NOPS = -3,        /* no row takes this many operands */
	SEL_KINDS = -4,       /* operand kinds/decorations match no row */
	SEL_RANGE = -5,       /* kinds match, a value does not fit */
};

/* Pick the row for a mnemonic (or full variant name) and operands; the
 * preference order is in docs/assembler.md. On success returns the row and
 * fills vals[] with the operand values (CSR names resolved). On SEL_RANGE,
 * *bad_op is the first operand that did not fit the first kind-matching
 * row. */
int asm_select(const char *mnemonic, const AsmOperand *ops, int nops, Arch arch,
               int32_t *vals, int *bad_op);

/* link.c */
typedef struct {
	const char *name; /* section name */
	uint32_t addr;
} LinkPlace;

typedef struct {
	const Chip *chip;       /* memory map; NULL = chip_default() */
	const LinkPlace *place; /* fixed section addresses */
	int nplace;
	const char *entry; /* NULL: _start, main, first code section */
} LinkOptions;

/* Link relocatable objects into an OBJ_EXEC image. */
int link_objects(Obj *const *objs, int n, const LinkOptions *opt, Obj **out,
                 Diag *d);

/* A loadable tile image, for the emulator. */
typedef struct {
	uint32_t addr;    /* load address */
	uint32_t size;    /* bytes in memory */
	uint8_t *bytes;   /* size bytes (zero-filled beyond the file data) */
	int exec;         /* holds code */
	const char *name; /* section name, "" if unknown */
} TileSegment;

typedef struct {
	uint32_t entry;
	TileSegment *seg;
	int nseg;
	Obj *obj; /* the OBJ_EXEC image: symbols for reports */
} TileImage;

/* The image of a linked object; takes ownership of `exe` (OBJ_EXEC). */
int img_from_obj(Obj *exe, TileImage *img, Diag *d);
/* Read an executable image (ELF ET_EXEC). */
int img_read(const uint8_t *data, size_t len, TileImage *img, Diag *d);
/* Read an image, or a relocatable object linked with the default layout
 * for `chip` (NULL = chip_default()). `name` is for messages. */
int img_load(const uint8_t *data, size_t len, const char *name,
             const Chip *chip, TileImage *img, Diag *d);
int img_load_file(const char *path, const Chip *chip, TileImage *img, Diag *d);
void img_free(TileImage *img);
/* The symbol at or nearest below addr (function or label), NULL if none;
 * *offset = addr - symbol. */
const char *img_symbol(const TileImage *img, uint32_t addr, uint32_t *offset);
/* Address of a defined symbol; -1 if none. */
int64_t img_symbol_addr(const TileImage *img, const char *name);

/* disasm.c (disasm_insn itself is declared in isa.h) */
enum {
	DIS_PLAIN = 1 << 0, /* no address and hex words: re-assemblable */
};
/* Disassemble raw little-endian words starting at `addr`; returns a
 * malloc'd text, one instruction or bundle per line. */
char *disasm_bytes(const uint8_t *bytes, size_t len, uint32_t addr, Arch arch,
                   int flags);
/* Disassemble every section of an object or image with labels. */
char *disasm_obj(const Obj *o, Arch arch, int flags);

#endif

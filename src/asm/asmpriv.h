/*
 * asmpriv.h - declarations shared by the assembler's files (lex.c, expr.c,
 * pass1.c, asm.c) and nobody else: tokens, expressions, the assembler state.
 *
 * The assembler state As lives for one asm_source() call. Strings and
 * expression nodes come from its arena and die with it; sections, symbols,
 * items and relocations are growable arrays.
 */
#ifndef IPU_ASMPRIV_H
#define IPU_ASMPRIV_H

#include "asm.h"

typedef enum {
	TK_EOL,
	TK_IDENT, /* name, directive, mnemonic, "." */
	TK_NUM,   /* integer or character literal; value in num. A half
	           * literal (1.5h) has punct 'h' and num = its binary16 bits */
	TK_LOCAL, /* 1f / 1b: num = label, punct = 'f' or 'b' */
	TK_REG,   /* $name: s..len excludes the '$' */
	TK_STR,   /* "...": s..len includes the quotes */
	TK_FLOAT, /* 1.5, 2e3: only .float reads it (from the text) */
	TK_PUNCT, /* punct = a character or a P_* */
} TokKind;

enum {
	P_SHL = 256,
	P_SHR,
	P_PLUSEQ,
	P_PLUSPLUS,
	P_EQ,   /* == */
	P_NE,   /* != or <> */
	P_LE,   /* <= */
	P_GE,   /* >= */
	P_LAND, /* && */
	P_LOR,  /* || */
};

typedef struct {
	TokKind kind;
	int col;       /* 1-based column */
	int len;       /* characters of source */
	const char *s; /* start in the line */
	int64_t num;
	int punct;
} Token;

typedef struct {
	Token *v;
	int n, cap;
} TokList;

/* lex.c: tokenize one line (comments already blanked); -1 on a bad
 * character or literal with *errcol and msg set. */
int lex_line(const char *line, TokList *out, int *errcol, char *msg,
             size_t msglen);
/* Blank comments (# // and C block comments) to spaces, keeping newlines
 * and columns. Returns a malloc'd copy. *unterminated_line is the line of
 * an unterminated block comment, else 0. */
char *lex_strip_comments(const char *text, size_t len, int *unterminated_line);
/* Decode a TK_STR token into a malloc'd buffer; -1 on a bad escape. */
int lex_string(const Token *t, char **out, size_t *outlen);

/* expr.c */
enum { EV_ABS = -1 }; /* ExprVal.sec: no section */

typedef struct {
	int64_t v;
	int sec; /* EV_ABS or a section number */
	int sym; /* an undefined (external) symbol, or -1 */
} ExprVal;

typedef struct Expr Expr;
struct Expr {
	int op;  /* E_* in expr.c */
	int col; /* for messages */
	int64_t num;
	int sec, sym;
	Expr *l, *r;
};

typedef struct {
	void *ctx;
	/* A name or local label at parse time: a node (a folded constant or a
	 * symbol reference), NULL after reporting an error. */
	Expr *(*ident)(void *ctx, const Token *t);
	/* The current location ("."). */
	Expr *(*dot)(void *ctx, int col);
	/* The value of symbol `sym` at evaluation time; -1 after reporting. */
	int (*symval)(void *ctx, int sym, int col, ExprVal *v);
	void (*error)(void *ctx, int col, const char *msg);
	void *(*alloc)(void *ctx, size_t n);
} ExprHooks;

Expr *expr_parse(const ExprHooks *h, const Token *t, int n, int *pos);
int expr_eval(const ExprHooks *h, const Expr *e, ExprVal *out);
Expr *expr_num(const ExprHooks *h, int64_t v, int col);
Expr *expr_sym(const ExprHooks *h, int sym, int col);
Expr *expr_secrel(const ExprHooks *h, int sec, int64_t off, int col);

/* disasm.c: growing text (p is NUL-terminated once anything is printed) */
typedef struct {
	char *p;
	size_t n, cap;
} Str;
void str_printf(Str *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- the assembler state (asm.c, pass1.c) ---- */

/* Where a statement came from. */
typedef struct {
	const char *file;  /* file name as given or resolved for .include */
	int line;          /* 1-based */
	const char *show;  /* the line as written, for the caret */
	const char *macro; /* expanded from this macro, or NULL */
} SrcPos;

/* One source line: `text` has comments blanked and is lexed; `show` is as
 * written. Both NUL-terminated, arena-owned. */
typedef struct {
	const char *text;
	const char *show;
	const char *file;
	int line;
	const char *macro;
} SrcLine;

typedef struct {
	char *name;
	uint32_t flags;     /* SECF_* */
	uint32_t align;     /* bytes */
	uint8_t *data;      /* NULL for SECF_NOBITS */
	uint32_t size, cap; /* bytes */
	int implicit;       /* the default .text nobody asked for */
} ASec;

enum { SK_UNDEF, SK_LABEL, SK_EQU };

typedef struct {
	char *name;
	int kind;        /* SK_* */
	int sec;         /* SK_LABEL: section */
	int64_t value;   /* SK_LABEL: offset; SK_EQU: constant if !equ */
	Expr *equ;       /* SK_EQU not constant at definition: lazy */
	int global;      /* .globl */
	int type;        /* SYMT_* from .type */
	uint32_t size;   /* from .size */
	Expr *size_expr; /* .size, evaluated in pass 2 */
	SrcPos size_pos; /* of the .size directive */
	int local;       /* .L name or numeric label: not exported */
	int64_t numeric; /* numeric local label number, -1 otherwise */
	int predefined;  /* TAMP_... and friends: never exported */
	int busy;        /* being evaluated (cycle guard) */
	int used;        /* undefined but relocated against */
	int objsym;      /* index in the output object, -1 if none */
	SrcPos pos;      /* definition, or first reference */
	int col;
} ASym;

typedef struct {
	AsmOperand a;
	Expr *e; /* AOP_IMM */
	int col;
} ParsedOp;

enum { IT_INSN, IT_DATA };

/* An instruction or data value whose bytes are written in pass 2. */
typedef struct {
	int kind; /* IT_* */
	int sec;  /* section and byte offset of the bytes */
	uint32_t off;
	SrcPos pos;
	int col;
	const char *mnem; /* IT_INSN: mnemonic or variant name */
	int mcol;
	int nops;
	ParsedOp op[ISA_MAX_OPS];
	int bundle;      /* 0 alone, 1 first of a bundle, 2 second */
	int bcol;        /* column of the bundle's '{' */
	InsnContext ctx; /* .worker / .supervisor marking, CTX_B if none */
	long seq;        /* statement number, orders the errors */
	int size;        /* IT_DATA: bytes (1, 2, 4) */
	Expr *e;         /* IT_DATA: value */
	int fnop;        /* written as fnop */
	int rpt;         /* an rpt: its body must be 8-byte aligned */
	int swap_ok;     /* bundle under .allow_optimizations: may be
	                    reordered to { main ; aux } */
} Item;

typedef struct {
	int sec;       /* patched section */
	uint32_t off;  /* byte offset */
	uint32_t type; /* R_IPU_* */
	int sym;       /* external symbol, or -1 */
	int tsec;      /* sym < 0: the section whose symbol is used */
	int32_t addend;
} ARel;

typedef struct {
	char *name;
	int nparams;
	char **param;
	char **def; /* default text, or NULL */
	int *req;   /* NAME:req: a value must be given */
	int vararg; /* the last parameter takes the rest of the line */
	SrcLine *body;
	int nbody;
} Macro;

typedef struct As As;
struct As {
	const char *name; /* top-level file name */
	const Chip *chip;
	int max_errors, no_include;
	DiagList errs;
	int stop;         /* too many errors */
	int quiet;        /* evaluating speculatively: errors not reported */
	int quiet_failed; /* ... and one happened */
	int pass1;        /* undefined symbols are errors, not externals */
	struct Block *arena;
	ExprHooks hooks;
	ASec *sec;
	int nsec, capsec, cur;
	ASym *sym;
	int nsym, capsym;
	int *hash; /* open addressing over sym, -1 = empty */
	int hcap;
	Item *item;
	int nitem, capitem;
	ARel *rel;
	int nrel;
	struct {
		int64_t label;
		int count; /* instances defined so far */
	} * num;
	int nnum;
	Macro *mac;
	int nmac;
	int in_bundle;   /* inside { } */
	int bundle_n;    /* instructions so far in it */
	int bundle_col;  /* where it opened */
	int bundle_item; /* index of its first item */
	SrcPos bundle_pos;
	InsnContext ctx;     /* from .worker / .supervisor */
	uint32_t objflags;   /* OBJF_* */
	const SrcPos *pos;   /* statement being processed, for hook errors */
	uint32_t dot;        /* offset of "." in the current section */
	int depth;           /* include/macro/rept nesting */
	long lines;          /* lines processed, bounded */
	long seq;            /* current statement number (errors sort by it) */
	long *errseq;        /* per error */
	unsigned expansions; /* \@ counter */
	int allow_opt;       /* .allow_optimizations seen */
	int allow_bad_rpt;   /* .allow_invalid_repeat seen */
	DiagList *warnings;  /* AsmOptions.warnings: where .warning goes */
};

/* asm.c */
void as_error(As *as, const SrcPos *pos, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A message that does not fail the assembly (.warning). */
void as_warning(As *as, const SrcPos *pos, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void *as_alloc(As *as, size_t n);
char *as_strndup(As *as, const char *s, size_t n);
/* Narrow the text [*a, *b) to drop blanks at both ends. */
void as_trim(const char **a, const char **b);
int as_section(As *as, const char *name, uint32_t flags, int explicit_flags);
int64_t as_reserve(As *as, const SrcPos *pos, int col, uint64_t n);
/* The symbol named `name`, or -1 if there is none yet. */
int as_lookup(As *as, const char *name);
int as_symbol(As *as, const char *name, const SrcPos *pos, int col);
void as_label(As *as, const char *name, int64_t numeric, const SrcPos *pos,
              int col);
void as_equ(As *as, const char *name, Expr *e, const SrcPos *pos, int col);
int as_const(As *as, Expr *e, int64_t *v);
int asm_known_mnemonic(const char *mn);
/* Words a statement of this mnemonic or variant name takes: 2 for the
 * two-word (F_WIDE) rows, else 1. */
int asm_mnemonic_words(const char *mn);
uint32_t asm_nop_word(void);
Item *as_item(As *as, int kind, const SrcPos *pos, int col);
const char *asm_decor_text(Decor d);
void as_select_error(As *as, const Item *it, const AsmOperand *ops, int code,
                     int bad);

/* pass1.c */
void as_run_file(As *as, const char *file, const char *text, size_t len,
                 const SrcPos *from);
/* After pass 1: every rpt body must start 8-byte aligned in a section
 * aligned to at least 8 (errors otherwise, unless .allow_invalid_repeat). */
void as_check_rpt(As *as);

/* pseudo.c: a statement as the real instructions it stands for. */
typedef struct {
	const char *mnem; /* mnemonic or variant name */
	int nops;
	ParsedOp op[ISA_MAX_OPS];
	int fnop; /* the aux no-op (bundle relaxation looks for it) */
} RealInsn;
/* Rewrite a pseudo-instruction or operand short form `mn ops` into out[]
 * (at most 2): returns the count, 0 when the statement is none (assemble
 * ops, which may have been respelt, as written), -1 after an error
 * (reported). */
int pseudo_expand(As *as, const SrcPos *pos, const char *mn, int mcol,
                  ParsedOp *ops, int nops, RealInsn *out);

/* sdk.c: the names of Graphcore's SDK headers with the project's values. */
typedef struct {
	const char *name;
	int64_t value;
} SdkName;
/* Up to max names for chip into out[]; header_only leaves out those only
 * predefined for the project's own kernels. Returns the count. */
int sdk_names(const Chip *chip, SdkName *out, int max, int header_only);
/* NULL-terminated: the header paths sdk_header_text knows. */
extern const char *const sdk_header_paths[];
/* The text of one of those headers (malloc'd), NULL for another path. */
char *sdk_header_text(const char *path, const Chip *chip);

/* cond.c: conditional assembly over one walk of lines (a file, a macro
 * expansion, a .rept iteration). */
typedef struct {
	int parent;  /* the enclosing code is assembled */
	int active;  /* this branch is assembled */
	int taken;   /* some branch of this .if was (or is) assembled */
	int in_else; /* past .else */
	SrcPos pos;  /* of the .if, for "not closed" */
	int col;
} CondFrame;
typedef struct {
	CondFrame *v;
	int n, cap;
} CondStack;
/* Is w (a line's first word) one of the conditional directives? */
int cond_is_directive(const char *w);
/* Handle line l if its first word w is a conditional directive: returns 1
 * if it was one (consumed), else 0. */
int cond_line(As *as, CondStack *cs, const SrcLine *l, const char *w);
/* Are lines assembled at this point? */
int cond_active(const CondStack *cs);
/* End of the walk: every .if still open is an error. Frees the stack. */
void cond_finish(As *as, CondStack *cs);

#endif

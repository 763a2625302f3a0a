/*
 * cond.c - conditional assembly: .if and its relatives, .else, .elseif and
 * .endif, as Graphcore's assembler (LLVM's MC parser) reads them.
 *
 * The directives are recognised by the first word of a line, like .macro,
 * so they work wherever lines are walked: in a file, in a macro body as it
 * expands (where \param has already been substituted) and in a .rept body.
 * Each walk keeps its own stack, so a conditional opened in a macro or an
 * included file must be closed there. While a branch is skipped, its lines
 * are not looked at except to follow the nesting of conditionals, so a
 * skipped .macro is not defined and a skipped .error is not raised.
 */
#include "asmpriv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
	C_IF,     /* expression != 0 */
	C_IFEQ,   /* == 0 */
	C_IFNE,   /* != 0 */
	C_IFLT,   /* < 0 */
	C_IFLE,   /* <= 0 */
	C_IFGT,   /* > 0 */
	C_IFGE,   /* >= 0 */
	C_IFDEF,  /* the symbol is defined (label or assignment) */
	C_IFNDEF, /* it is not */
	C_IFC,    /* the two strings are the same text */
	C_IFNC,   /* they are not */
	C_IFEQS,  /* two quoted strings are equal */
	C_IFNES,  /* they are not */
	C_IFB,    /* the rest of the line is blank */
	C_IFNB,   /* it is not */
} CondKind;

static const struct {
	const char *name;
	CondKind kind;
} conds[] = {
    {".if", C_IF},           {".ifeq", C_IFEQ},   {".ifne", C_IFNE},
    {".iflt", C_IFLT},       {".ifle", C_IFLE},   {".ifgt", C_IFGT},
    {".ifge", C_IFGE},       {".ifdef", C_IFDEF}, {".ifndef", C_IFNDEF},
    {".ifnotdef", C_IFNDEF}, {".ifc", C_IFC},     {".ifnc", C_IFNC},
    {".ifeqs", C_IFEQS},     {".ifnes", C_IFNES}, {".ifb", C_IFB},
    {".ifnb", C_IFNB},
};

static int
cond_kind(const char *w)
{
	for (size_t i = 0; i < sizeof conds / sizeof conds[0]; i++)
		if (!strcmp(w, conds[i].name))
			return (int)conds[i].kind;
	return -1;
}

int
cond_is_directive(const char *w)
{
	return cond_kind(w) >= 0 || !strcmp(w, ".else") ||
	       !strcmp(w, ".elseif") || !strcmp(w, ".endif");
}

int
cond_active(const CondStack *cs)
{
	return cs->n == 0 || cs->v[cs->n - 1].active;
}

/* The text after the directive word, its column, and a position. */
static const char *
after_word(const SrcLine *l, const char *w, int *col)
{
	const char *s = strstr(l->text, w) + strlen(w);
	while (*s == ' ' || *s == '\t')
		s++;
	*col = (int)(s - l->text) + 1;
	return s;
}

/* Tokenize the line and evaluate the expression after the directive; -1
 * after an error (reported). */
static int
cond_expr(As *as, const SrcLine *l, const SrcPos *pos, int64_t *v)
{
	TokList tl = {0};
	int errcol, r = -1;
	char msg[160];
	if (lex_line(l->text, &tl, &errcol, msg, sizeof msg)) {
		as_error(as, pos, errcol, "%s", msg);
		free(tl.v);
		return -1;
	}
	int p = 1; /* past the directive */
	as->dot = as->sec[as->cur].size;
	Expr *e = expr_parse(&as->hooks, tl.v, tl.n, &p);
	if (e && tl.v[p].kind != TK_EOL)
		as_error(as, pos, tl.v[p].col, "unexpected '%.*s'",
		         tl.v[p].len ? tl.v[p].len : 1, tl.v[p].s);
	else if (e)
		r = as_const(as, e, v);
	free(tl.v);
	return r;
}

/* The end of a comma-separated piece of text, quote-aware. */
static const char *
piece_end(const char *s)
{
	char q = 0;
	for (; *s; s++) {
		if (q) {
			if (*s == '\\' && s[1])
				s++;
			else if (*s == q)
				q = 0;
		} else if (*s == '"') {
			q = *s;
		} else if (*s == ',') {
			break;
		}
	}
	return s;
}

/* Trimmed text [a, b) into the arena. */
static char *
trimmed(As *as, const char *a, const char *b)
{
	as_trim(&a, &b);
	return as_strndup(as, a, (size_t)(b - a));
}

/* The two strings of .ifc/.ifeqs; -1 after an error. */
static int
two_strings(As *as, const SrcLine *l, const SrcPos *pos, const char *s, int col,
            char **a, char **b)
{
	const char *comma = piece_end(s);
	if (*comma != ',') {
		as_error(as, pos, col, "expected two strings separated by ','");
		return -1;
	}
	*a = trimmed(as, s, comma);
	*b = trimmed(as, comma + 1, comma + strlen(comma));
	return 0;
}

/* A "quoted" string's contents; NULL if it is not one. */
static const char *
unquote(As *as, const char *s)
{
	size_t n = strlen(s);
	if (n < 2 || s[0] != '"' || s[n - 1] != '"')
		return NULL;
	return as_strndup(as, s + 1, n - 2);
}

/* Is the condition of this .if-family line true? -1 after an error. */
static int
evaluate(As *as, const SrcLine *l, const SrcPos *pos, const char *w, int kind)
{
	int col;
	const char *s = after_word(l, w, &col);
	int64_t v = 0;
	char *a, *b;
	switch ((CondKind)kind) {
	case C_IF:
	case C_IFEQ:
	case C_IFNE:
	case C_IFLT:
	case C_IFLE:
	case C_IFGT:
	case C_IFGE:
		if (cond_expr(as, l, pos, &v))
			return -1;
		return kind == C_IF     ? v != 0
		       : kind == C_IFEQ ? v == 0
		       : kind == C_IFNE ? v != 0
		       : kind == C_IFLT ? v < 0
		       : kind == C_IFLE ? v <= 0
		       : kind == C_IFGT ? v > 0
		                        : v >= 0;
	case C_IFDEF:
	case C_IFNDEF: {
		size_t n = strcspn(s, " \t");
		if (!n || s[n]) {
			as_error(as, pos, col, "'%s' takes one symbol name", w);
			return -1;
		}
		int i = as_lookup(as, as_strndup(as, s, n));
		int def = i >= 0 && as->sym[i].kind != SK_UNDEF;
		return kind == C_IFDEF ? def : !def;
	}
	case C_IFC:
	case C_IFNC:
		/* LLVM compares the text as written, quotes included. */
		if (two_strings(as, l, pos, s, col, &a, &b))
			return -1;
		return (strcmp(a, b) == 0) == (kind == C_IFC);
	case C_IFEQS:
	case C_IFNES: {
		if (two_strings(as, l, pos, s, col, &a, &b))
			return -1;
		const char *qa = unquote(as, a), *qb = unquote(as, b);
		if (!qa || !qb) {
			as_error(as, pos, col,
			         "'%s' compares two quoted strings", w);
			return -1;
		}
		return (strcmp(qa, qb) == 0) == (kind == C_IFEQS);
	}
	case C_IFB:
	case C_IFNB:
		return (*s == 0) == (kind == C_IFB);
	}
	return -1;
}

int
cond_line(As *as, CondStack *cs, const SrcLine *l, const char *w)
{
	SrcPos pos = {l->file, l->line, l->show, l->macro};
	int kind = cond_kind(w);
	if (kind < 0 && !cond_is_directive(w))
		return 0;
	int wcol = (int)(strstr(l->text, w) - l->text) + 1;
	as->seq = as->lines;
	as->pos = &pos;
	int live = cond_active(cs);
	if (kind >= 0) {
		GROW(cs->v, cs->n, cs->cap);
		CondFrame *f = &cs->v[cs->n++];
		/* In a skipped branch nothing is evaluated; a failed condition
		 * counts as false (its error is reported). */
		int r = live ? evaluate(as, l, &pos, w, kind) : 0;
		*f = (CondFrame){.parent = live,
		                 .active = live && r > 0,
		                 .taken = live && r > 0,
		                 .pos = pos,
		                 .col = wcol};
		as->pos = NULL;
		return 1;
	}
	if (!strcmp(w, ".endif")) {
		if (!cs->n)
			as_error(as, &pos, wcol, "'.endif' without '.if'");
		else
			cs->n--;
		as->pos = NULL;
		return 1;
	}
	if (!cs->n) {
		as_error(as, &pos, wcol, "'%s' without '.if'", w);
		as->pos = NULL;
		return 1;
	}
	CondFrame *f = &cs->v[cs->n - 1];
	if (f->in_else) {
		as_error(as, &pos, wcol,
		         "'%s' after '.else' (the '.if' is at %s:%d)", w,
		         f->pos.file, f->pos.line);
	} else if (!strcmp(w, ".else")) {
		f->in_else = 1;
		f->active = f->parent && !f->taken;
		f->taken |= f->active;
	} else { /* .elseif */
		int r =
		    f->parent && !f->taken ? evaluate(as, l, &pos, w, C_IF) : 0;
		f->active = r > 0;
		f->taken |= f->active;
	}
	as->pos = NULL;
	return 1;
}

void
cond_finish(As *as, CondStack *cs)
{
	for (int i = cs->n - 1; i >= 0; i--) {
		as->seq = as->lines;
		as_error(
		    as, &cs->v[i].pos, cs->v[i].col,
		    "'.if' without '.endif' (conditionals must close in the "
		    "file, macro or .rept body that opens them)");
	}
	free(cs->v);
	*cs = (CondStack){0};
}

/*
 * pass1.c - pass 1 of the assembler: source text to items.
 *
 * A file becomes an array of SrcLine (comments blanked, lines split).
 * process_lines() walks such an array; block directives (.macro ... .endm,
 * .rept ... .endr) are recognised by the first word of a line and their
 * bodies taken from the same array, so a body is always whole lines.
 * Macro calls, .rept and .include recurse into process_lines() on new
 * arrays, bounded in depth and in total lines. Each remaining line is
 * tokenized and split into statements at ';', '{' and '}'; a statement is
 * a label, an assignment, a directive or an instruction. Instructions and
 * data values become Items for pass 2 (asm.c); everything else takes effect
 * here.
 */
#include "asmpriv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	MAX_DEPTH = 32,      /* nested .include / macro calls / .rept */
	MAX_LINES = 2000000, /* lines processed after expansion */
	MAX_NAME = 256,      /* symbol and macro names */
};

static void process_lines(As *as, const SrcLine *lines, int n);

/* ---- lines ---- */

/* A C preprocessor's line marker, `# 12 "file.S" 2` or `#line 12`: the next
 * line is line 12 of file.S. Returns 1 and fills *line (and *name, *nlen
 * when a name is given), else 0. */
static int
linemarker(const char *s, size_t len, long *line, const char **name,
           size_t *nlen)
{
	size_t i = 1;
	if (!len || s[0] != '#')
		return 0;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (len - i > 4 && !strncmp(s + i, "line", 4) &&
	    (s[i + 4] == ' ' || s[i + 4] == '\t'))
		for (i += 4; i < len && (s[i] == ' ' || s[i] == '\t'); i++)
			;
	if (i >= len || s[i] < '0' || s[i] > '9')
		return 0;
	long v = 0;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		if ((v = v * 10 + (s[i] - '0')) > INT32_MAX)
			return 0;
	*line = v;
	*name = NULL;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < len && s[i] == '"') {
		size_t j = i + 1;
		while (j < len && s[j] != '"')
			j++;
		if (j >= len)
			return 0;
		*name = s + i + 1;
		*nlen = j - i - 1;
	}
	return 1;
}

static SrcLine *
split_lines(As *as, const char *file, const char *text, size_t len, int *n,
            int *unterminated)
{
	char *stripped = lex_strip_comments(text, len, unterminated);
	char *lex = as_strndup(as, stripped, len);
	char *show = as_strndup(as, text, len);
	free(stripped);
	int count = 1;
	for (size_t i = 0; i < len; i++)
		count += text[i] == '\n';
	SrcLine *lines = as_alloc(as, (size_t)count * sizeof *lines);
	size_t start = 0;
	long next = 1; /* line number of the next line */
	for (int k = 0; k < count; k++) {
		size_t end = start;
		while (end < len && text[end] != '\n')
			end++;
		lex[end] = show[end] = 0;
		if (end > start && show[end - 1] == '\r')
			lex[end - 1] = show[end - 1] = 0;
		int lineno = (int)next++;
		lines[k] =
		    (SrcLine){lex + start, show + start, file, lineno, NULL};
		long mark;
		const char *name;
		size_t nlen;
		if (linemarker(text + start, end - start, &mark, &name,
		               &nlen)) {
			next = mark;
			if (name)
				file = as_strndup(as, name, nlen);
		}
		if (memchr(text + start, 0, end - start)) {
			SrcPos pos = {lines[k].file, lineno, "", NULL};
			as_error(as, &pos, 1, "NUL byte in the source line");
			lines[k].text = "";
		}
		start = end + 1;
	}
	*n = count;
	return lines;
}

void
as_run_file(As *as, const char *file, const char *text, size_t len,
            const SrcPos *from)
{
	if (as->depth >= MAX_DEPTH) {
		as_error(as, from, 1, ".include nested too deeply");
		return;
	}
	int n, unterminated;
	file = as_strndup(as, file, strlen(file));
	SrcLine *lines = split_lines(as, file, text, len, &n, &unterminated);
	if (unterminated) {
		const SrcLine *u = &lines[unterminated - 1];
		SrcPos pos = {u->file, u->line, u->show, NULL};
		as_error(as, &pos, 1, "comment started here is not closed");
	}
	as->depth++;
	process_lines(as, lines, n);
	as->depth--;
}

/* The first word of a line (".macro", "nop", ...), for block scanning. */
static void
first_word(const char *s, char *w, size_t len)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = 0;
	while (n + 1 < len &&
	       (s[n] == '.' || s[n] == '_' || (s[n] >= 'a' && s[n] <= 'z') ||
	        (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9')))
		n++;
	memcpy(w, s, n);
	w[n] = 0;
}

/* Index of the line closing the block opened at lines[i], or -1. */
static int
block_end(const SrcLine *lines, int i, int n, const char *open,
          const char *close)
{
	int depth = 0;
	for (int j = i; j < n; j++) {
		char w[16];
		first_word(lines[j].text, w, sizeof w);
		if (!strcmp(w, open))
			depth++;
		else if (!strcmp(w, close) && --depth == 0)
			return j;
	}
	return -1;
}

static SrcPos
line_pos(const SrcLine *l)
{
	return (SrcPos){l->file, l->line, l->show, l->macro};
}

/* ---- tokens ---- */

static int
is_punct(const Token *t, int c)
{
	return t->kind == TK_PUNCT && t->punct == c;
}

static int
stmt_end(const Token *t)
{
	return t->kind == TK_EOL || is_punct(t, ';') || is_punct(t, '{') ||
	       is_punct(t, '}');
}

static int
skip_stmt(const Token *t, int p)
{
	while (!stmt_end(&t[p]))
		p++;
	return p;
}

static int
tok_is(const Token *t, const char *s)
{
	return t->kind == TK_IDENT && (int)strlen(s) == t->len &&
	       !strncmp(t->s, s, (size_t)t->len);
}

/* A name token into buf; -1 (reported) when it is not one. */
static int
tok_name(As *as, const SrcPos *pos, const Token *t, char *buf, size_t len,
         const char *what)
{
	if (t->kind != TK_IDENT) {
		as_error(as, pos, t->col, "expected %s", what);
		return -1;
	}
	if ((size_t)t->len >= len) {
		as_error(as, pos, t->col, "name too long");
		return -1;
	}
	memcpy(buf, t->s, (size_t)t->len);
	buf[t->len] = 0;
	return 0;
}

static int
expect_comma(As *as, const SrcPos *pos, const Token *t)
{
	if (is_punct(t, ','))
		return 0;
	as_error(as, pos, t->col, "expected ','");
	return -1;
}

/* ---- .macro / .rept ---- */

enum { MAX_PARAMS = 32 };

/* One piece of a macro call or .macro line: an optional NAME= and a value. */
typedef struct {
	char *name;        /* keyword argument or parameter name, or NULL */
	char *value;       /* as substituted: quotes of strings removed */
	int col;           /* where the piece starts in the line */
	const char *start; /* and that place itself */
} MacArg;

static int
mac_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.';
}

/* Does an operator token start at s? (LLVM's isOperator: a blank before one
 * does not end a macro argument.) A '.' starting a name is not one. */
static int
starts_operator(const char *s)
{
	if (s[0] == '.')
		return !mac_ident_char(s[1]);
	return s[0] && strchr("+-~/*=|^&!<>", s[0]) != NULL;
}

/* The value of argument text [a, b): trimmed, with the quotes of quoted
 * strings dropped (LLVM substitutes a string's contents). */
static char *
arg_value(As *as, const char *a, const char *b)
{
	as_trim(&a, &b);
	char *v = as_alloc(as, (size_t)(b - a) + 1), *o = v;
	for (int q = 0; a < b; a++) {
		if (*a == '"') {
			q = !q;
			continue;
		}
		if (q && *a == '\\' && a + 1 < b)
			*o++ = *a++;
		*o++ = *a;
	}
	*o = 0;
	return v;
}

/* Split the arguments of a macro call (or the parameters of .macro) as
 * LLVM's assembler does: pieces end at a top-level ',' or at a blank that is
 * not followed by an operator, so `m a, b`, `m a b` and `m a + 1 b` all
 * work; NAME=value names a parameter. Stops at the end of the line or a
 * top-level ';'. Returns the count (-1 when more than max) and *end. */
static int
macro_args(As *as, const char *line, const char *s, MacArg *out, int max,
           const char **end)
{
	int n = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == ';')
			break;
		if (n == max) {
			*end = s;
			return -1;
		}
		MacArg *a = &out[n++];
		a->col = (int)(s - line) + 1;
		a->start = s;
		a->name = NULL;
		const char *id = s;
		while (mac_ident_char(*id) && *id != '$' && *id != '.')
			id++;
		const char *eq = id;
		while (*eq == ' ' || *eq == '\t')
			eq++;
		if (id > s && *eq == '=' && eq[1] != '=') {
			a->name = as_strndup(as, s, (size_t)(id - s));
			for (s = eq + 1; *s == ' ' || *s == '\t'; s++)
				;
		}
		const char *v = s;
		int depth = 0;
		while (*s) {
			if (*s == '"') { /* a string, blanks and all */
				for (s++; *s && *s != '"'; s++)
					if (*s == '\\' && s[1])
						s++;
				if (*s)
					s++;
				continue;
			}
			if (depth == 0 && (*s == ',' || *s == ';'))
				break;
			if (depth == 0 && (*s == ' ' || *s == '\t')) {
				const char *k = s;
				while (*k == ' ' || *k == '\t')
					k++;
				if (!starts_operator(k))
					break;
				/* the operator, then blanks after it */
				s = k + 1;
				if (*s && strchr("=<>&|!", *k) &&
				    strchr("=<>&|", *s))
					s++;
				while (*s == ' ' || *s == '\t')
					s++;
				continue;
			}
			if (*s == '(')
				depth++;
			else if (*s == ')' && depth)
				depth--;
			s++;
		}
		a->value = arg_value(as, v, s);
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == ',')
			s++;
	}
	*end = s;
	return n;
}

static void
define_macro(As *as, const SrcLine *l, const SrcLine *body, int nbody)
{
	SrcPos pos = line_pos(l);
	const char *s = strstr(l->text, ".macro") + 6;
	while (*s == ' ' || *s == '\t')
		s++;
	size_t nlen = strcspn(s, " \t,");
	if (!nlen || nlen >= MAX_NAME) {
		as_error(as, &pos, (int)(s - l->text) + 1,
		         "expected a macro name");
		return;
	}
	char *name = as_strndup(as, s, nlen);
	if (name[0] == '.' || asm_known_mnemonic(name)) {
		as_error(as, &pos, (int)(s - l->text) + 1,
		         "'%s' is a directive or instruction and cannot be a "
		         "macro name",
		         name);
		return;
	}
	MacArg raw[MAX_PARAMS];
	const char *end, *p = s + nlen;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == ',') /* .macro NAME, A, B */
		p++;
	/* NAME, NAME=default, NAME:req; separated by commas or blanks. */
	int n = macro_args(as, l->text, p, raw, MAX_PARAMS, &end);
	if (n < 0) {
		as_error(as, &pos, 1, "too many macro parameters (at most %d)",
		         MAX_PARAMS);
		return;
	}
	Macro m = {.name = name};
	m.param = as_alloc(as, (size_t)(n + 1) * sizeof *m.param);
	m.def = as_alloc(as, (size_t)(n + 1) * sizeof *m.def);
	m.req = as_alloc(as, (size_t)(n + 1) * sizeof *m.req);
	for (int i = 0; i < n; i++) {
		char *p = raw[i].name ? raw[i].name : raw[i].value;
		char *colon = strchr(p, ':');
		m.req[i] = colon && !strcmp(colon, ":req");
		int va = colon && !strcmp(colon, ":vararg");
		if ((colon && !m.req[i] && !va) || (va && i != n - 1)) {
			as_error(as, &pos, raw[i].col,
			         va ? "only the last parameter may be :vararg"
			            : "unsupported parameter qualifier '%s' "
			              "(:req or :vararg)",
			         colon);
			return;
		}
		m.vararg = va;
		if (colon)
			*colon = 0;
		for (const char *c = p; *c; c++)
			if (!mac_ident_char(*c) || *c == '.' || *c == '$') {
				as_error(as, &pos, raw[i].col,
				         "bad macro parameter name '%s'", p);
				return;
			}
		if (!*p) {
			as_error(as, &pos, raw[i].col,
			         "expected a parameter name");
			return;
		}
		m.param[i] = p;
		m.def[i] = raw[i].name ? raw[i].value : NULL;
	}
	m.nparams = n;
	m.body = (SrcLine *)body;
	m.nbody = nbody;
	for (int i = 0; i < as->nmac; i++)
		if (!strcmp(as->mac[i].name, name)) {
			as->mac[i] = m; /* redefinition replaces */
			return;
		}
	as->mac = xrealloc(as->mac, (size_t)(as->nmac + 1) * sizeof *as->mac);
	as->mac[as->nmac++] = m;
}

static const Macro *
find_macro(As *as, const Token *t)
{
	for (int i = 0; i < as->nmac; i++)
		if ((int)strlen(as->mac[i].name) == t->len &&
		    !strncmp(as->mac[i].name, t->s, (size_t)t->len))
			return &as->mac[i];
	return NULL;
}

/* Body line with \param, \@ and \() replaced. */
static char *
substitute(As *as, const Macro *m, char **args, const char *s)
{
	size_t cap = strlen(s) + 64, n = 0;
	char *out = xmalloc(cap);
	char counter[16];
	snprintf(counter, sizeof counter, "%u", as->expansions);
	while (*s) {
		const char *rep = NULL;
		size_t skip = 1;
		if (s[0] == '\\') {
			if (s[1] == '@') {
				rep = counter;
				skip = 2;
			} else if (s[1] == '(' && s[2] == ')') {
				rep = "";
				skip = 3;
			} else {
				size_t len = 0; /* LLVM's identifier chars */
				while (mac_ident_char(s[1 + len]))
					len++;
				for (int i = 0; i < m->nparams && len; i++)
					if (strlen(m->param[i]) == len &&
					    !strncmp(m->param[i], s + 1, len)) {
						rep = args[i];
						skip = len + 1;
					}
			}
		}
		size_t add = rep ? strlen(rep) : 1;
		if (n + add + 1 > cap) {
			cap = (n + add + 1) * 2;
			out = xrealloc(out, cap);
		}
		if (rep)
			memcpy(out + n, rep, add);
		else
			out[n] = *s;
		n += add;
		s += skip;
	}
	out[n] = 0;
	char *r = as_strndup(as, out, n);
	free(out);
	return r;
}

/* Expand the call of m at token `name`; returns where its arguments end
 * in the line (a ';' may follow with more statements). */
static const char *
expand_macro(As *as, const Macro *m, const SrcLine *l, const Token *name)
{
	SrcPos pos = line_pos(l);
	MacArg given[MAX_PARAMS + 1];
	char *args[MAX_PARAMS];
	const char *end;
	int n = macro_args(as, l->text, name->s + name->len, given,
	                   MAX_PARAMS + 1, &end);
	if (m->vararg && n >= m->nparams && !given[m->nparams - 1].name) {
		/* the last parameter takes the rest of the statement */
		MacArg *v = &given[m->nparams - 1];
		const char *a = v->start, *b = end;
		as_trim(&a, &b);
		v->value = as_strndup(as, a, (size_t)(b - a));
		n = m->nparams;
	}
	if (n < 0) {
		as_error(as, &pos, name->col,
		         "too many arguments for macro '%s' (it takes %d)",
		         m->name, m->nparams);
		return end;
	}
	for (int i = 0; i < m->nparams; i++)
		args[i] = NULL;
	for (int i = 0, next = 0, named = 0; i < n; i++) {
		int k = next;
		if (named && !given[i].name) {
			as_error(
			    as, &pos, given[i].col,
			    "a positional argument after a named one (NAME=) "
			    "in a call of macro '%s'",
			    m->name);
			return end;
		}
		if (given[i].name) {
			named = 1;
			for (k = 0; k < m->nparams; k++)
				if (!strcmp(m->param[k], given[i].name))
					break;
			if (k == m->nparams) {
				as_error(as, &pos, given[i].col,
				         "macro '%s' has no parameter '%s'",
				         m->name, given[i].name);
				return end;
			}
		} else if (k >= m->nparams) {
			as_error(as, &pos, given[i].col,
			         "too many arguments for macro '%s' (it takes "
			         "%d)",
			         m->name, m->nparams);
			return end;
		} else {
			next++;
		}
		args[k] = given[i].value;
	}
	for (int i = 0; i < m->nparams; i++) {
		if (args[i] && args[i][0])
			continue;
		if (m->req[i]) {
			as_error(as, &pos, name->col,
			         "missing value for required parameter '%s' of "
			         "macro '%s'",
			         m->param[i], m->name);
			return end;
		}
		args[i] = m->def[i] ? m->def[i] : "";
	}
	if (as->depth >= MAX_DEPTH) {
		as_error(as, &pos, name->col,
		         "macro '%s' nested too deeply (recursive?)", m->name);
		return end;
	}
	SrcLine *lines = as_alloc(as, (size_t)(m->nbody + 1) * sizeof *lines);
	for (int i = 0; i < m->nbody; i++) {
		char *t = substitute(as, m, args, m->body[i].text);
		lines[i] =
		    (SrcLine){t, t, m->body[i].file, m->body[i].line, m->name};
	}
	as->expansions++; /* \@ counts from 0, as in LLVM */
	as->depth++;
	process_lines(as, lines, m->nbody);
	as->depth--;
	return end;
}

static void
repeat(As *as, const SrcLine *l, const SrcLine *body, int nbody)
{
	SrcPos pos = line_pos(l);
	TokList tl = {0};
	int errcol;
	char msg[128];
	as->pos = &pos;
	if (lex_line(l->text, &tl, &errcol, msg, sizeof msg)) {
		as_error(as, &pos, errcol, "%s", msg);
		free(tl.v);
		return;
	}
	int p = 1;
	int64_t count = 0;
	Expr *e = expr_parse(&as->hooks, tl.v, tl.n, &p);
	if (e && !as_const(as, e, &count)) {
		if (count < 0 || count > MAX_LINES)
			as_error(as, &pos, e->col,
			         ".rept count %lld is out of range",
			         (long long)count);
		else if (as->depth >= MAX_DEPTH)
			as_error(as, &pos, 1, ".rept nested too deeply");
		else {
			as->depth++;
			for (int64_t i = 0; i < count && !as->stop; i++)
				process_lines(as, body, nbody);
			as->depth--;
		}
	}
	free(tl.v);
	as->pos = NULL;
}

/* ---- registers and operands ---- */

static const struct {
	const char *name;
	char file;
	int num;
} reg_alias[] = {
    {"mzero", 'm', 15},
    {"azero", 'a', 15},
    {"lr", 'm', 10},
    {"sp", 'm', 11},
    {"fp", 'm', 9},
    {"bp", 'm', 8},
    {"mworker_base", 'm', 12},
    {"mvertex_base", 'm', 13},
};

/* "$m3", "$a12", "$lr" ... -> file and number; 0 if not a register. */
static int
reg_name(const char *s, char *file, int *num)
{
	for (size_t i = 0; i < sizeof reg_alias / sizeof reg_alias[0]; i++)
		if (!strcmp(s, reg_alias[i].name)) {
			*file = reg_alias[i].file;
			*num = reg_alias[i].num;
			return 1;
		}
	if ((s[0] != 'm' && s[0] != 'a') || s[1] < '0' || s[1] > '9')
		return 0;
	if (s[2] && (s[1] == '0' || s[2] < '0' || s[2] > '9' || s[3]))
		return 0;
	*num = atoi(s + 1);
	*file = s[0];
	return *num < 16;
}

static int
reg_operand(As *as, const SrcPos *pos, const Token *t, int p, ParsedOp *op)
{
	const Token *r = &t[p++];
	char name[MAX_NAME];
	char file;
	int num;
	if (r->len >= MAX_NAME) {
		as_error(as, pos, r->col, "register name too long");
		return -1;
	}
	snprintf(name, sizeof name, "%.*s", r->len, r->s);
	if (!strcmp(name, "azeros")) {
		op->a = (AsmOperand){.cls = AOP_AREG, .nregs = 2, .value = 14};
	} else if (reg_name(name, &file, &num)) {
		int nregs = 1;
		if (is_punct(&t[p], ':') && t[p + 1].kind == TK_NUM) {
			int64_t hi = t[p + 1].num;
			p += 2;
			if (hi == num + 1 && num % 2 == 0)
				nregs = 2;
			else if (hi == num + 3 && num % 4 == 0 && file == 'a')
				nregs = 4;
			else {
				as_error(
				    as, pos, r->col,
				    "'$%s:%lld' is not a register pair or "
				    "quad: a pair is an even register and "
				    "the next ($%c0:1), an ARF quad starts "
				    "at a multiple of 4 ($a4:7)",
				    name, (long long)hi, file);
				return -1;
			}
		}
		op->a = (AsmOperand){.cls = file == 'm' ? AOP_MREG : AOP_AREG,
		                     .nregs = (uint8_t)nregs,
		                     .value = num};
	} else {
		op->a =
		    (AsmOperand){.cls = AOP_NAME,
		                 .name = as_strndup(as, name, strlen(name))};
	}
	if (is_punct(&t[p], ':') && t[p + 1].kind == TK_IDENT) {
		const Token *d = &t[p + 1];
		if (tok_is(d, "BL"))
			op->a.decor = DEC_BL;
		else if (tok_is(d, "BU"))
			op->a.decor = DEC_BU;
		else if (tok_is(d, "B"))
			op->a.decor = DEC_B;
		else {
			as_error(as, pos, d->col,
			         "unknown decoration ':%.*s' (expected :BL, "
			         ":BU or :B)",
			         d->len, d->s);
			return -1;
		}
		p += 2;
	}
	if (t[p].kind == TK_PUNCT) {
		switch (t[p].punct) {
		case P_PLUSEQ:
			op->a.decor = DEC_PINC;
			p++;
			break;
		case P_PLUSPLUS:
			op->a.decor = DEC_PP;
			p++;
			break;
		case '@':
			op->a.decor = DEC_AT;
			p++;
			break;
		case P_SHR:
			op->a.decor = DEC_SHR;
			p++;
			break;
		}
	}
	return p;
}

static int
operand(As *as, const SrcPos *pos, const Token *t, int n, int p, ParsedOp *op)
{
	memset(op, 0, sizeof *op);
	op->col = t[p].col;
	if (t[p].kind == TK_REG)
		return reg_operand(as, pos, t, p, op);
	Expr *e = expr_parse(&as->hooks, t, n, &p);
	if (!e)
		return -1;
	op->a.cls = AOP_IMM;
	op->e = e;
	return p;
}

/* ---- instructions ---- */

/* Reserve and record one real instruction of the current statement. */
static void
emit_insn(As *as, const SrcPos *pos, int mcol, const RealInsn *r)
{
	const char *mn = r->mnem;
	ASec *s = &as->sec[as->cur];
	if (!(s->flags & SECF_EXEC) || (s->flags & SECF_NOBITS)) {
		as_error(as, pos, mcol,
		         "instruction in data section '%s' (use .text or "
		         ".section NAME, \"ax\")",
		         s->name);
		return;
	}
	if (s->size % 4) {
		as_error(as, pos, mcol,
		         "instruction at %s+0x%x is not 4-byte aligned",
		         s->name, s->size);
		return;
	}
	int bundle = 0;
	if (as->in_bundle) {
		bundle = ++as->bundle_n;
		if (bundle > 2) {
			as_error(as, pos, mcol,
			         "a bundle holds two instructions: "
			         "{ main-lane ; aux-lane }");
			return;
		}
		if (bundle == 1)
			as->bundle_item = as->nitem;
	}
	int words = asm_mnemonic_words(mn);
	if (words == 2 && bundle) {
		as_error(as, pos, mcol,
		         "'%s' is a two-word instruction and cannot be bundled",
		         mn);
		return;
	}
	if (words == 2 && s->size % 8)
		as_error(as, pos, mcol,
		         "'%s' at %s+0x%x is not 8-byte aligned: it is a "
		         "two-word instruction (add .align 8 or a nop before "
		         "it)",
		         mn, s->name, s->size);
	if (words == 2 && s->align < 8)
		s->align = 8; /* so that linking keeps it aligned */
	int64_t off = as_reserve(as, pos, mcol, 4u * (unsigned)words);
	if (off < 0)
		return;
	Item *it = as_item(as, IT_INSN, pos, mcol);
	if (!it)
		return;
	it->off = (uint32_t)off;
	it->mnem = mn;
	it->mcol = mcol;
	it->nops = r->nops;
	memcpy(it->op, r->op, (size_t)r->nops * sizeof *r->op);
	it->bundle = bundle;
	it->bcol = as->bundle_col;
	it->ctx = as->ctx;
	it->fnop = r->fnop;
	it->rpt = !strncmp(mn, "rpt", 3) && (!mn[3] || mn[3] == '_');
	if (it->rpt && as->allow_opt && s->align < 8)
		s->align = 8; /* as LLVM does for a section with an rpt */
}

static int
instruction(As *as, const SrcPos *pos, const Token *t, int n, int p)
{
	const Token *m = &t[p++];
	ParsedOp ops[ISA_MAX_OPS];
	int nops = 0;
	if (m->len >= 64) {
		as_error(as, pos, m->col, "unknown instruction '%.*s'", m->len,
		         m->s);
		return skip_stmt(t, p);
	}
	while (!stmt_end(&t[p])) {
		if (nops == ISA_MAX_OPS) {
			as_error(as, pos, t[p].col,
			         "too many operands (at most %d)", ISA_MAX_OPS);
			return skip_stmt(t, p);
		}
		p = operand(as, pos, t, n, p, &ops[nops]);
		if (p < 0)
			return -1;
		nops++;
		if (!is_punct(&t[p], ','))
			break;
		p++;
		if (stmt_end(&t[p])) {
			as_error(as, pos, t[p].col,
			         "expected an operand after ','");
			return skip_stmt(t, p);
		}
	}
	const char *mn = as_strndup(as, m->s, (size_t)m->len);
	RealInsn real[2];
	int k = pseudo_expand(as, pos, mn, m->col, ops, nops, real);
	if (k < 0)
		return p;
	if (k == 0) {
		if (!asm_known_mnemonic(mn)) {
			Item tmp = {.pos = *pos, .mnem = mn, .mcol = m->col};
			as_select_error(as, &tmp, NULL, SEL_NO_MNEMONIC, -1);
			return p;
		}
		real[0] = (RealInsn){.mnem = mn, .nops = nops};
		memcpy(real[0].op, ops, (size_t)nops * sizeof *ops);
		k = 1;
	}
	for (int i = 0; i < k; i++)
		emit_insn(as, pos, m->col, &real[i]);
	return p;
}

/* ---- directives ---- */

typedef int (*DirFn)(As *as, const SrcPos *pos, const Token *t, int n, int p,
                     const Token *dir);

static int
d_section_named(As *as, const char *name)
{
	as_section(as, name, 0, 0);
	return 0;
}

static int
d_text(As *as, const SrcPos *pos, const Token *t, int n, int p,
       const Token *dir)
{
	d_section_named(as, dir->len == 5 && !strncmp(dir->s, ".text", 5)
	                        ? ".text"
	                    : !strncmp(dir->s, ".data", 5) ? ".data"
	                                                   : ".bss");
	return p;
}

static int
d_section(As *as, const SrcPos *pos, const Token *t, int n, int p,
          const Token *dir)
{
	char name[MAX_NAME];
	if (t[p].kind == TK_STR && t[p].len - 2 < MAX_NAME) {
		snprintf(name, sizeof name, "%.*s", t[p].len - 2, t[p].s + 1);
		p++;
	} else {
		/* As LLVM: the tokens up to a ',', a blank or the end, so a
		 * name may hold punctuation (.text.f(x), .text.a-b). */
		int q = p;
		while (!stmt_end(&t[q]) && !is_punct(&t[q], ',') &&
		       (q == p || t[q].s == t[q - 1].s + t[q - 1].len))
			q++;
		int len = q > p ? (int)(t[q - 1].s + t[q - 1].len - t[p].s) : 0;
		if (len >= MAX_NAME) {
			as_error(as, pos, t[p].col, "section name too long");
			return skip_stmt(t, p);
		}
		snprintf(name, sizeof name, "%.*s", len, t[p].s);
		if (q == p || t[p].kind == TK_STR) {
			as_error(as, pos, t[p].col, "expected a section name");
			return skip_stmt(t, p);
		}
		p = q;
	}
	if (!name[0]) {
		as_error(as, pos, t[p].col, "empty section name");
		return skip_stmt(t, p);
	}
	if (!is_punct(&t[p], ',')) {
		as_section(as, name, 0, 0);
		return p;
	}
	p++;
	if (t[p].kind != TK_STR) {
		as_error(as, pos, t[p].col,
		         "expected section flags as a string (\"ax\", \"aw\")");
		return skip_stmt(t, p);
	}
	uint32_t flags = 0;
	for (int i = 1; i < t[p].len - 1; i++) {
		char c = t[p].s[i];
		if (c == 'w')
			flags |= SECF_WRITE;
		else if (c == 'x')
			flags |= SECF_EXEC;
		else if (c != 'a') {
			as_error(as, pos, t[p].col + i,
			         "unknown section flag '%c' (a, w, x)", c);
			return skip_stmt(t, p);
		}
	}
	p++;
	if (is_punct(&t[p], ',')) {
		p++;
		if (is_punct(&t[p], '@') || is_punct(&t[p], '%'))
			p++;
		if (tok_is(&t[p], "nobits"))
			flags |= SECF_NOBITS;
		else if (!tok_is(&t[p], "progbits")) {
			as_error(as, pos, t[p].col,
			         "expected @progbits or @nobits");
			return skip_stmt(t, p);
		}
		p++;
	}
	int had = as->nsec;
	as_section(as, name, flags, 1);
	if (as->nsec == had &&
	    (as->sec[as->cur].flags & (SECF_EXEC | SECF_NOBITS)) !=
	        (flags & (SECF_EXEC | SECF_NOBITS)))
		as_error(as, pos, dir->col,
		         "section '%s' was first used with other flags", name);
	return p;
}

static void
write_fill(As *as, uint32_t off, uint32_t len, int64_t fill)
{
	ASec *s = &as->sec[as->cur];
	if (s->data)
		memset(s->data + off, (int)(fill & 0xff), len);
}

static int
d_align(As *as, const SrcPos *pos, const Token *t, int n, int p,
        const Token *dir)
{
	int64_t a, fill = -1;
	Expr *e = expr_parse(&as->hooks, t, n, &p);
	if (!e || as_const(as, e, &a))
		return skip_stmt(t, p);
	if (tok_is(dir, ".p2align")) {
		if (a < 0 || a > 16) {
			as_error(as, pos, e->col, ".p2align %lld: 0..16",
			         (long long)a);
			return skip_stmt(t, p);
		}
		a = (int64_t)1 << a;
	}
	if (a < 1 || a > 65536 || (a & (a - 1))) {
		as_error(as, pos, e->col,
		         "alignment %lld is not a power of two 1..65536",
		         (long long)a);
		return skip_stmt(t, p);
	}
	if (is_punct(&t[p], ',')) {
		p++;
		Expr *f = expr_parse(&as->hooks, t, n, &p);
		if (!f || as_const(as, f, &fill))
			return skip_stmt(t, p);
	}
	ASec *s = &as->sec[as->cur];
	if ((uint32_t)a > s->align)
		s->align = (uint32_t)a;
	uint32_t pad = (uint32_t)(-(int64_t)s->size & (a - 1));
	int64_t off = as_reserve(as, pos, dir->col, pad);
	if (off < 0 || !pad)
		return p;
	if (fill >= 0 || !(s->flags & SECF_EXEC)) {
		write_fill(as, (uint32_t)off, pad, fill < 0 ? 0 : fill);
		return p;
	}
	/* Code: zero bytes up to a word, then nops. */
	uint32_t nop = asm_nop_word();
	s = &as->sec[as->cur];
	for (uint32_t o = (uint32_t)off; o < off + pad; o++) {
		uint32_t k = o % 4;
		uint32_t word_start = o - k;
		s->data[o] = word_start >= off && word_start + 4 <= off + pad
		                 ? (uint8_t)(nop >> (8 * k))
		                 : 0;
	}
	return p;
}

static int
d_globl(As *as, const SrcPos *pos, const Token *t, int n, int p,
        const Token *dir)
{
	for (;;) {
		char name[MAX_NAME];
		if (is_punct(&t[p], '@') && t[p + 1].kind == TK_IDENT) {
			/* `.globl f, @function` (poplibs): LLVM makes a
			 * global named "@function" of it; we drop it. */
			as_warning(as, pos, t[p].col,
			           "'@%.*s' in '%.*s' is not a symbol name; "
			           "ignored",
			           t[p + 1].len, t[p + 1].s, dir->len, dir->s);
			p += 2;
		} else {
			if (tok_name(as, pos, &t[p], name, sizeof name,
			             "a symbol name"))
				return skip_stmt(t, p);
			int s = as_symbol(as, name, pos, t[p].col);
			as->sym[s].global = 1;
			p++;
		}
		if (!is_punct(&t[p], ','))
			return p;
		p++;
	}
}

/* The "NAME," that starts .type, .size and .equ: the name into name (at
 * column *col), *p past the comma; -1 after an error is reported. */
static int
name_comma(As *as, const SrcPos *pos, const Token *t, int *p,
           char name[MAX_NAME], int *col)
{
	if (tok_name(as, pos, &t[*p], name, MAX_NAME, "a symbol name"))
		return -1;
	*col = t[*p].col;
	if (expect_comma(as, pos, &t[*p + 1])) {
		(*p)++;
		return -1;
	}
	*p += 2;
	return 0;
}

static int
d_type(As *as, const SrcPos *pos, const Token *t, int n, int p,
       const Token *dir)
{
	char name[MAX_NAME];
	int col = t[p].col;
	if (tok_name(as, pos, &t[p], name, sizeof name, "a symbol name"))
		return skip_stmt(t, p);
	if (is_punct(&t[++p], ',')) /* optional, as in LLVM */
		p++;
	int s = as_symbol(as, name, pos, col);
	if (is_punct(&t[p], '@') || is_punct(&t[p], '%'))
		p++;
	const Token *k = &t[p];
	if (tok_is(k, "function") || tok_is(k, "STT_FUNC"))
		as->sym[s].type = SYMT_FUNC;
	else if (tok_is(k, "object") || tok_is(k, "STT_OBJECT"))
		as->sym[s].type = SYMT_OBJECT;
	else if (tok_is(k, "notype") || tok_is(k, "STT_NOTYPE"))
		as->sym[s].type = SYMT_NOTYPE;
	else {
		as_error(as, pos, k->col,
		         "expected @function, @object or @notype");
		return skip_stmt(t, p);
	}
	return p + 1;
}

static int
d_size(As *as, const SrcPos *pos, const Token *t, int n, int p,
       const Token *dir)
{
	char name[MAX_NAME];
	int col;
	if (name_comma(as, pos, t, &p, name, &col))
		return skip_stmt(t, p);
	int s = as_symbol(as, name, pos, col);
	Expr *e = expr_parse(&as->hooks, t, n, &p);
	if (!e)
		return skip_stmt(t, p);
	as->sym[s].size_expr = e;
	as->sym[s].size_pos = *pos;
	return p;
}

static int
no_bits_error(As *as, const SrcPos *pos, const Token *dir)
{
	ASec *s = &as->sec[as->cur];
	if (!(s->flags & SECF_NOBITS))
		return 0;
	as_error(as, pos, dir->col,
	         "'%.*s' puts data in no-bits section '%s' (only .space, "
	         ".align and labels)",
	         dir->len, dir->s, s->name);
	return 1;
}

static int
d_data(As *as, const SrcPos *pos, const Token *t, int n, int p,
       const Token *dir)
{
	int size = tok_is(dir, ".byte") ? 1
	           : tok_is(dir, ".short") || tok_is(dir, ".hword") ||
	                   tok_is(dir, ".half")
	               ? 2
	               : 4;
	if (no_bits_error(as, pos, dir))
		return skip_stmt(t, p);
	for (;;) {
		int col = t[p].col;
		as->dot = as->sec[as->cur].size; /* "." moves per value */
		Expr *e = expr_parse(&as->hooks, t, n, &p);
		if (!e)
			return skip_stmt(t, p);
		int64_t off = as_reserve(as, pos, col, (uint64_t)size);
		if (off < 0)
			return skip_stmt(t, p);
		Item *it = as_item(as, IT_DATA, pos, col);
		if (!it)
			return skip_stmt(t, p);
		it->off = (uint32_t)off;
		it->size = size;
		it->e = e;
		if (!is_punct(&t[p], ','))
			return p;
		p++;
	}
}

static int
d_space(As *as, const SrcPos *pos, const Token *t, int n, int p,
        const Token *dir)
{
	int64_t len, fill = 0;
	Expr *e = expr_parse(&as->hooks, t, n, &p);
	if (!e || as_const(as, e, &len))
		return skip_stmt(t, p);
	if (is_punct(&t[p], ',')) {
		p++;
		Expr *f = expr_parse(&as->hooks, t, n, &p);
		if (!f || as_const(as, f, &fill))
			return skip_stmt(t, p);
		if (fill && (as->sec[as->cur].flags & SECF_NOBITS)) {
			as_error(as, pos, f->col,
			         "a no-bits section can only hold zeros");
			return p;
		}
	}
	if (len < 0) {
		as_error(as, pos, e->col, "negative size %lld", (long long)len);
		return p;
	}
	int64_t off = as_reserve(as, pos, e->col, (uint64_t)len);
	if (off >= 0)
		write_fill(as, (uint32_t)off, (uint32_t)len, fill);
	return p;
}

static int
d_float(As *as, const SrcPos *pos, const Token *t, int n, int p,
        const Token *dir)
{
	if (no_bits_error(as, pos, dir))
		return skip_stmt(t, p);
	for (;;) {
		int q = p;
		while (!stmt_end(&t[q]) && !is_punct(&t[q], ','))
			q++;
		if (q == p) {
			as_error(as, pos, t[p].col, "expected a number");
			return skip_stmt(t, p);
		}
		size_t len = (size_t)(t[q].s - t[p].s);
		char buf[128], *end;
		snprintf(buf, sizeof buf, "%.*s", (int)len, t[p].s);
		while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
			buf[--len] = 0;
		float f = strtof(buf, &end);
		if (!len || *end) {
			as_error(as, pos, t[p].col,
			         "expected a floating-point number, not '%s'",
			         buf);
			return skip_stmt(t, p);
		}
		int64_t off = as_reserve(as, pos, t[p].col, 4);
		if (off < 0)
			return skip_stmt(t, p);
		uint32_t u;
		memcpy(&u, &f, 4);
		uint8_t *d = as->sec[as->cur].data + off;
		for (int i = 0; i < 4; i++)
			d[i] = (uint8_t)(u >> (8 * i));
		p = q;
		if (!is_punct(&t[p], ','))
			return p;
		p++;
	}
}

static int
d_ascii(As *as, const SrcPos *pos, const Token *t, int n, int p,
        const Token *dir)
{
	int zero = !tok_is(dir, ".ascii");
	if (no_bits_error(as, pos, dir))
		return skip_stmt(t, p);
	for (;;) {
		char *s;
		size_t len;
		if (t[p].kind != TK_STR) {
			as_error(as, pos, t[p].col, "expected a string");
			return skip_stmt(t, p);
		}
		if (lex_string(&t[p], &s, &len)) {
			as_error(as, pos, t[p].col, "bad escape in string");
			return skip_stmt(t, p);
		}
		int64_t off = as_reserve(as, pos, t[p].col, len + (size_t)zero);
		if (off >= 0)
			memcpy(as->sec[as->cur].data + off, s, len);
		free(s);
		p++;
		if (!is_punct(&t[p], ','))
			return p;
		p++;
	}
}

static int
d_equ(As *as, const SrcPos *pos, const Token *t, int n, int p, const Token *dir)
{
	char name[MAX_NAME];
	int col;
	if (name_comma(as, pos, t, &p, name, &col))
		return skip_stmt(t, p);
	Expr *e = expr_parse(&as->hooks, t, n, &p);
	if (!e)
		return skip_stmt(t, p);
	as_equ(as, name, e, pos, col);
	return p;
}

static int
d_include(As *as, const SrcPos *pos, const Token *t, int n, int p,
          const Token *dir)
{
	char *name;
	size_t len;
	if (t[p].kind != TK_STR || lex_string(&t[p], &name, &len)) {
		as_error(as, pos, t[p].col, "expected a file name in quotes");
		return skip_stmt(t, p);
	}
	if (as->no_include) {
		as_error(as, pos, dir->col, ".include is disabled here");
		free(name);
		return p + 1;
	}
	/* Relative to the including file's directory. */
	const char *slash = strrchr(pos->file, '/');
	size_t dirlen =
	    name[0] != '/' && slash ? (size_t)(slash - pos->file) + 1 : 0;
	char *path = xmalloc(dirlen + len + 1);
	memcpy(path, pos->file, dirlen);
	memcpy(path + dirlen, name, len + 1);
	free(name);
	uint8_t *data;
	size_t size;
	Diag d;
	if (read_file(path, &data, &size, &d)) {
		as_error(as, pos, t[p].col, "cannot include '%s': %s", path,
		         d.msg);
	} else {
		as_run_file(as, path, (const char *)data, size, pos);
		free(data);
	}
	free(path);
	return p + 1;
}

static int
d_context(As *as, const SrcPos *pos, const Token *t, int n, int p,
          const Token *dir)
{
	as->ctx = tok_is(dir, ".worker") ? CTX_W : CTX_S;
	return p;
}

/* .error "text" / .warning "text": the text, at this line. */
static int
d_message(As *as, const SrcPos *pos, const Token *t, int n, int p,
          const Token *dir)
{
	int warn = tok_is(dir, ".warning");
	char *text = NULL;
	size_t len;
	if (t[p].kind == TK_STR) {
		if (lex_string(&t[p], &text, &len)) {
			as_error(as, pos, t[p].col, "bad escape in string");
			return skip_stmt(t, p);
		}
		p++;
	} else if (!stmt_end(&t[p])) {
		as_error(as, pos, t[p].col, "'%.*s' takes a string in quotes",
		         dir->len, dir->s);
		return skip_stmt(t, p);
	}
	const char *msg = text   ? text
	                  : warn ? ".warning directive invoked in source file"
	                         : ".error directive invoked in source file";
	if (warn)
		as_warning(as, pos, dir->col, "%s", msg);
	else
		as_error(as, pos, dir->col, "%s", msg);
	free(text);
	return p;
}

/* .extern NAME, ...: accepted and ignored, as by LLVM and GNU as (an
 * undefined symbol is external anyway). */
static int
d_extern(As *as, const SrcPos *pos, const Token *t, int n, int p,
         const Token *dir)
{
	for (;;) {
		char name[MAX_NAME];
		if (tok_name(as, pos, &t[p], name, sizeof name,
		             "a symbol name"))
			return skip_stmt(t, p);
		if (!is_punct(&t[++p], ','))
			return p;
		p++;
	}
}

/* .allow_optimizations: from here on the assembler may reorder a bundle
 * written { aux ; main } and turn { rpt ; fnop } at 4 mod 8 into a lone rpt
 * so that the loop body is 8-byte aligned (LLVM's Colossus backend). */
static int
d_allow_opt(As *as, const SrcPos *pos, const Token *t, int n, int p,
            const Token *dir)
{
	as->allow_opt = 1;
	return p;
}

/* .allow_invalid_repeat: no rpt body alignment check (LLVM's). */
static int
d_allow_bad_rpt(As *as, const SrcPos *pos, const Token *t, int n, int p,
                const Token *dir)
{
	as->allow_bad_rpt = 1;
	return p;
}

static const struct {
	const char *name;
	DirFn fn;
} directives[] = {
    {".text", d_text},
    {".data", d_text},
    {".bss", d_text},
    {".section", d_section},
    {".align", d_align},
    {".balign", d_align},
    {".p2align", d_align},
    {".globl", d_globl},
    {".global", d_globl},
    {".type", d_type},
    {".size", d_size},
    {".word", d_data},
    {".int", d_data},
    {".long", d_data},
    {".short", d_data},
    {".hword", d_data},
    {".half", d_data},
    {".byte", d_data},
    {".space", d_space},
    {".zero", d_space},
    {".skip", d_space},
    {".float", d_float},
    {".single", d_float},
    {".ascii", d_ascii},
    {".asciz", d_ascii},
    {".string", d_ascii},
    {".equ", d_equ},
    {".set", d_equ},
    {".include", d_include},
    {".worker", d_context},
    {".supervisor", d_context},
    {".error", d_message},
    {".warning", d_message},
    {".extern", d_extern},
    {".allow_optimizations", d_allow_opt},
    {".allow_invalid_repeat", d_allow_bad_rpt},
};

static int
directive(As *as, const SrcPos *pos, const Token *t, int n, int p)
{
	const Token *dir = &t[p];
	for (size_t i = 0; i < sizeof directives / sizeof directives[0]; i++)
		if (tok_is(dir, directives[i].name))
			return directives[i].fn(as, pos, t, n, p + 1, dir);
	char w[16];
	snprintf(w, sizeof w, "%.*s", dir->len < 15 ? dir->len : 15, dir->s);
	if (tok_is(dir, ".macro") || tok_is(dir, ".endm") ||
	    tok_is(dir, ".rept") || tok_is(dir, ".endr") ||
	    cond_is_directive(w))
		as_error(as, pos, dir->col, "'%.*s' must start a line",
		         dir->len, dir->s);
	else
		as_error(as, pos, dir->col, "unknown directive '%.*s'",
		         dir->len, dir->s);
	return skip_stmt(t, p + 1);
}

/* ---- statements ---- */

static void
open_bundle(As *as, const SrcPos *pos, const Token *k)
{
	if (as->in_bundle) {
		as_error(as, pos, k->col, "'{' inside a bundle");
		return;
	}
	as->in_bundle = 1;
	as->bundle_n = 0;
	as->bundle_col = k->col;
	as->bundle_pos = *pos;
}

/* { rpt ; fnop } (either order) at 4 mod 8 under .allow_optimizations
 * becomes a lone rpt, so that the loop body after it is 8-byte aligned:
 * the relaxation of LLVM's ColossusMCAsmBackend. */
static void
relax_rpt_bundle(As *as, Item *a, Item *b)
{
	if (!as->allow_opt || a->off % 8 == 0 ||
	    !((a->rpt && b->fnop) || (a->fnop && b->rpt)))
		return;
	if (a->fnop) {
		uint32_t off = a->off;
		*a = *b;
		a->off = off;
	}
	a->bundle = 0;
	as->nitem--;
	as->sec[a->sec].size -= 4;
}

static void
close_bundle(As *as, const SrcPos *pos, const Token *k)
{
	if (!as->in_bundle) {
		as_error(as, pos, k->col, "'}' without '{'");
		return;
	}
	as->in_bundle = 0;
	if (as->bundle_n < 2) {
		as_error(as, &as->bundle_pos, as->bundle_col,
		         "a bundle needs two instructions, main-lane then "
		         "aux-lane (found %d)",
		         as->bundle_n);
		return;
	}
	if (as->nitem != as->bundle_item + 2)
		return; /* an instruction was refused (reported) */
	Item *a = &as->item[as->bundle_item], *b = a + 1;
	a->swap_ok = as->allow_opt;
	relax_rpt_bundle(as, a, b);
}

void
as_check_rpt(As *as)
{
	for (int i = 0; i < as->nitem && !as->allow_bad_rpt; i++) {
		const Item *it = &as->item[i];
		if (!it->rpt || it->bundle == 2)
			continue;
		uint32_t body = it->off + (it->bundle ? 8 : 4);
		if (as->sec[it->sec].align >= 8 && body % 8 == 0)
			continue;
		as->seq = it->seq;
		if (body % 8 == 0)
			as_error(
			    as, &it->pos, it->mcol,
			    "the body of this rpt must be 8-byte aligned, "
			    "but section '%s' is only %u-byte aligned (add "
			    ".align 8 before the code)",
			    as->sec[it->sec].name, as->sec[it->sec].align);
		else
			as_error(as, &it->pos, it->mcol,
			         "the body of this rpt starts at %s+0x%x, not "
			         "8-byte aligned: %s",
			         as->sec[it->sec].name, body,
			         it->bundle ? "add a nop before the bundled rpt"
			                    : "bundle the rpt with fnop");
	}
}

/* One statement from t[p]; returns the index after it. */
static int
statement(As *as, const SrcPos *pos, const SrcLine *l, const Token *t, int n,
          int p)
{
	const Token *k = &t[p];
	as->dot = as->sec[as->cur].size;
	if (is_punct(k, ';'))
		return p + 1;
	if (is_punct(k, '{')) {
		open_bundle(as, pos, k);
		return p + 1;
	}
	if (is_punct(k, '}')) {
		close_bundle(as, pos, k);
		return p + 1;
	}
	int label = (k->kind == TK_IDENT || k->kind == TK_NUM) &&
	            is_punct(&t[p + 1], ':');
	int assign = k->kind == TK_IDENT && is_punct(&t[p + 1], '=');
	int dir = k->kind == TK_IDENT && k->s[0] == '.' && k->len > 1;
	if (as->in_bundle && (label || assign || dir)) {
		as_error(as, pos, k->col,
		         "only instructions may appear inside a bundle");
		return skip_stmt(t, p + 1);
	}
	int q;
	if (label) {
		char name[MAX_NAME];
		if (k->kind == TK_NUM)
			as_label(as, NULL, k->num, pos, k->col);
		else if (!tok_name(as, pos, k, name, sizeof name, "a label"))
			as_label(as, name, -1, pos, k->col);
		return p + 2;
	} else if (assign) {
		char name[MAX_NAME];
		q = p + 2;
		Expr *e = expr_parse(&as->hooks, t, n, &q);
		if (e && !tok_name(as, pos, k, name, sizeof name, "a name"))
			as_equ(as, name, e, pos, k->col);
		if (!e)
			return skip_stmt(t, q);
	} else if (dir) {
		q = directive(as, pos, t, n, p);
	} else if (k->kind == TK_IDENT) {
		const Macro *m = find_macro(as, k);
		if (m) {
			/* The arguments run to the end of the line or a ';'. */
			const char *end = expand_macro(as, m, l, k);
			q = p + 1;
			while (t[q].kind != TK_EOL && t[q].s < end)
				q++;
			return q;
		}
		q = instruction(as, pos, t, n, p);
		if (q < 0)
			return skip_stmt(t, p + 1);
	} else {
		as_error(as, pos, k->col,
		         "expected a label, directive or instruction");
		return skip_stmt(t, p + 1);
	}
	if (!stmt_end(&t[q])) {
		as_error(as, pos, t[q].col, "unexpected '%.*s'",
		         t[q].len ? t[q].len : 1, t[q].s);
		q = skip_stmt(t, q);
	}
	return q;
}

static void
process_line(As *as, const SrcLine *l)
{
	SrcPos pos = line_pos(l);
	TokList tl = {0};
	int errcol;
	char msg[160];
	as->seq = as->lines;
	as->pos = &pos;
	if (lex_line(l->text, &tl, &errcol, msg, sizeof msg)) {
		/* A macro call's arguments are text, not tokens (`m 4x16bit`):
		 * only then is a line that does not lex fine. */
		char w[MAX_NAME];
		first_word(l->text, w, sizeof w);
		const char *at = l->text + strspn(l->text, " \t");
		Token name = {.kind = TK_IDENT,
		              .s = at,
		              .len = (int)strlen(w),
		              .col = (int)(at - l->text) + 1};
		const Macro *m = w[0] ? find_macro(as, &name) : NULL;
		const char *end = m ? expand_macro(as, m, l, &name) : NULL;
		if (!m || *end)
			as_error(as, &pos,
			         m ? (int)(end - l->text) + 1 : errcol, "%s",
			         msg);
	} else {
		int p = 0;
		while (tl.v[p].kind != TK_EOL && !as->stop) {
			p = statement(as, &pos, l, tl.v, tl.n, p);
			as->pos = &pos; /* a macro call may have moved it */
		}
	}
	free(tl.v);
	as->pos = NULL;
}

static void
process_lines(As *as, const SrcLine *lines, int n)
{
	CondStack cs = {0};
	for (int i = 0; i < n && !as->stop; i++) {
		const SrcLine *l = &lines[i];
		if (++as->lines > MAX_LINES) {
			SrcPos pos = line_pos(l);
			as_error(as, &pos, 1,
			         "more than %d lines after expanding macros "
			         "and .rept",
			         MAX_LINES);
			as->stop = 1;
			break;
		}
		char w[16];
		first_word(l->text, w, sizeof w);
		if (cond_line(as, &cs, l, w) || !cond_active(&cs))
			continue;
		int isrept = !strcmp(w, ".rept");
		if (isrept || !strcmp(w, ".macro")) {
			const char *close = isrept ? ".endr" : ".endm";
			int j = block_end(lines, i, n, w, close);
			if (j < 0) {
				SrcPos pos = line_pos(l);
				as_error(as, &pos, 1, "'%s' without '%s'", w,
				         close);
				break;
			}
			as->seq = as->lines;
			if (isrept)
				repeat(as, l, lines + i + 1, j - i - 1);
			else
				define_macro(as, l, lines + i + 1, j - i - 1);
			i = j;
			continue;
		}
		if (!strcmp(w, ".endm") || !strcmp(w, ".endr")) {
			SrcPos pos = line_pos(l);
			as->seq = as->lines;
			as_error(as, &pos, 1, "'%s' without '%s'", w,
			         w[4] == 'm' ? ".macro" : ".rept");
			continue;
		}
		process_line(as, l);
	}
	cond_finish(as, &cs);
}

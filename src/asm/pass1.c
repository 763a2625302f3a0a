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
	for (int k = 0; k < count; k++) {
		size_t end = start;
		while (end < len && text[end] != '\n')
			end++;
		lex[end] = show[end] = 0;
		if (end > start && show[end - 1] == '\r')
			lex[end - 1] = show[end - 1] = 0;
		lines[k] =
		    (SrcLine){lex + start, show + start, file, k + 1, NULL};
		if (memchr(text + start, 0, end - start)) {
			SrcPos pos = {file, k + 1, "", NULL};
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
		SrcPos pos = {file, unterminated, lines[unterminated - 1].show,
		              NULL};
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

/* Split `s` at top-level commas into trimmed pieces (arena). */
static int
split_args(As *as, const char *s, char **out, int max)
{
	int n = 0, depth = 0;
	char q = 0;
	const char *start = s;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return 0;
	start = s;
	for (;; s++) {
		if (q) {
			if (*s == '\\' && s[1])
				s++;
			else if (*s == q)
				q = 0;
			if (*s)
				continue;
		}
		if (*s == '"' || *s == '\'')
			q = *s;
		else if (*s == '(')
			depth++;
		else if (*s == ')' && depth)
			depth--;
		if (*s == 0 || (*s == ',' && depth == 0)) {
			const char *a = start, *b = s;
			while (a < b && (*a == ' ' || *a == '\t'))
				a++;
			while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
				b--;
			if (n == max)
				return -1;
			out[n++] = as_strndup(as, a, (size_t)(b - a));
			if (!*s)
				return n;
			start = s + 1;
		}
	}
}

enum { MAX_PARAMS = 32 };

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
	char *raw[MAX_PARAMS];
	/* Parameters may be separated by commas or blanks (GNU as). */
	char *params = as_strndup(as, s + nlen, strlen(s + nlen));
	for (char *p = params; *p; p++)
		if (*p == ' ' || *p == '\t')
			*p = ',';
	int n = split_args(as, params, raw, MAX_PARAMS), k = 0;
	if (n < 0) {
		as_error(as, &pos, 1, "too many macro parameters");
		return;
	}
	Macro m = {.name = name};
	m.param = as_alloc(as, (size_t)(n + 1) * sizeof *m.param);
	m.def = as_alloc(as, (size_t)(n + 1) * sizeof *m.def);
	for (int i = 0; i < n; i++) {
		if (!raw[i][0])
			continue;
		char *eq = strchr(raw[i], '=');
		m.def[k] = eq ? eq + 1 : NULL;
		if (eq)
			*eq = 0;
		m.param[k++] = raw[i];
	}
	m.nparams = k;
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
				size_t len = 0;
				while (
				    s[1 + len] == '_' ||
				    (s[1 + len] >= 'a' && s[1 + len] <= 'z') ||
				    (s[1 + len] >= 'A' && s[1 + len] <= 'Z') ||
				    (s[1 + len] >= '0' && s[1 + len] <= '9'))
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

static void
expand_macro(As *as, const Macro *m, const SrcLine *l, const Token *name)
{
	SrcPos pos = line_pos(l);
	char *args[MAX_PARAMS];
	int n = split_args(as, name->s + name->len, args, MAX_PARAMS);
	if (n < 0 || n > m->nparams) {
		as_error(as, &pos, name->col,
		         "too many arguments for macro '%s' (it takes %d)",
		         m->name, m->nparams);
		return;
	}
	for (int i = 0; i < m->nparams; i++) {
		if (i < n && args[i][0])
			continue;
		args[i] = m->def[i] ? m->def[i] : "";
	}
	if (as->depth >= MAX_DEPTH) {
		as_error(as, &pos, name->col,
		         "macro '%s' nested too deeply (recursive?)", m->name);
		return;
	}
	as->expansions++;
	SrcLine *lines = as_alloc(as, (size_t)(m->nbody + 1) * sizeof *lines);
	for (int i = 0; i < m->nbody; i++) {
		char *t = substitute(as, m, args, m->body[i].text);
		lines[i] =
		    (SrcLine){t, t, m->body[i].file, m->body[i].line, m->name};
	}
	as->depth++;
	process_lines(as, lines, m->nbody);
	as->depth--;
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

/* ---- pseudo-instructions (docs/assembler.md) ---- */

static void
set_reg(ParsedOp *op, AopClass cls, int num, int col)
{
	memset(op, 0, sizeof *op);
	op->a = (AsmOperand){.cls = cls, .nregs = 1, .value = num};
	op->col = col;
}

static void
set_zero(As *as, ParsedOp *op, int col)
{
	memset(op, 0, sizeof *op);
	op->a.cls = AOP_IMM;
	op->e = expr_num(&as->hooks, 0, col);
	op->col = col;
}

static int
single(const ParsedOp *op, AopClass cls)
{
	return op->a.cls == cls && op->a.nregs == 1 && op->a.decor == DEC_NONE;
}

/* Rewrite a pseudo-instruction into its real form; 0 if `mn` is not one,
 * 1 if rewritten, -1 after an error. */
static int
pseudo(As *as, const SrcPos *pos, const Token *m, const char **mn,
       ParsedOp *ops, int *nops)
{
	int col = m->col;
	if (tok_is(m, "nop") || tok_is(m, "fnop")) {
		int aux = tok_is(m, "fnop");
		if (*nops) {
			as_error(as, pos, col, "'%.*s' takes no operands",
			         m->len, m->s);
			return -1;
		}
		AopClass c = aux ? AOP_AREG : AOP_MREG;
		set_reg(&ops[0], c, 15, col);
		set_reg(&ops[1], c, 15, col);
		set_zero(as, &ops[2], col);
		*mn = aux ? "or_aaan_zi" : "or_mmmn_zi";
		*nops = 3;
		return 1;
	}
	if (tok_is(m, "zero")) {
		if (*nops != 1 || (!single(&ops[0], AOP_MREG) &&
		                   !single(&ops[0], AOP_AREG))) {
			as_error(as, pos, col,
			         "'zero' takes one register: zero $mN or "
			         "zero $aN");
			return -1;
		}
		AopClass c = ops[0].a.cls;
		set_reg(&ops[1], c, 15, ops[0].col);
		set_zero(as, &ops[2], ops[0].col);
		*mn = c == AOP_AREG ? "or_aaan_zi" : "or_mmmn_zi";
		*nops = 3;
		return 1;
	}
	if (tok_is(m, "mov")) {
		AopClass c = ops[0].a.cls;
		if (*nops != 2 || !(c == AOP_MREG || c == AOP_AREG) ||
		    !single(&ops[0], c) || !single(&ops[1], c)) {
			as_error(as, pos, col,
			         "'mov' copies a register: mov $mD, $mS or "
			         "mov $aD, $aS");
			return -1;
		}
		set_zero(as, &ops[2], ops[1].col);
		*mn = c == AOP_AREG ? "or_aaan_zi" : "or_mmmn_zi";
		*nops = 3;
		return 1;
	}
	return 0;
}

/* ---- instructions ---- */

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
	int ps =
	    asm_known_mnemonic(mn) ? 0 : pseudo(as, pos, m, &mn, ops, &nops);
	if (ps < 0)
		return p;
	if (!ps && !asm_known_mnemonic(mn)) {
		Item tmp = {.pos = *pos, .mnem = mn, .mcol = m->col};
		as_select_error(as, &tmp, NULL, SEL_NO_MNEMONIC, -1);
		return p;
	}
	ASec *s = &as->sec[as->cur];
	if (!(s->flags & SECF_EXEC) || (s->flags & SECF_NOBITS)) {
		as_error(as, pos, m->col,
		         "instruction in data section '%s' (use .text or "
		         ".section NAME, \"ax\")",
		         s->name);
		return p;
	}
	if (s->size % 4) {
		as_error(as, pos, m->col,
		         "instruction at %s+0x%x is not 4-byte aligned",
		         s->name, s->size);
		return p;
	}
	int bundle = 0;
	if (as->in_bundle) {
		bundle = ++as->bundle_n;
		if (bundle > 2) {
			as_error(as, pos, m->col,
			         "a bundle holds two instructions: "
			         "{ main-lane ; aux-lane }");
			return p;
		}
		if (bundle == 1 && s->size % 8) {
			as_error(as, pos, as->bundle_col,
			         "bundle at %s+0x%x is not 8-byte aligned (add "
			         ".align 8 or a nop before it)",
			         s->name, s->size);
		}
	}
	int words = asm_mnemonic_words(mn);
	if (words == 2 && bundle) {
		as_error(as, pos, m->col,
		         "'%s' is a two-word instruction and cannot be bundled",
		         mn);
		return p;
	}
	if (words == 2 && s->size % 8)
		as_error(as, pos, m->col,
		         "'%s' at %s+0x%x is not 8-byte aligned: it is a "
		         "two-word instruction (add .align 8 or a nop before "
		         "it)",
		         mn, s->name, s->size);
	if (words == 2 && s->align < 8)
		s->align = 8; /* so that linking keeps it aligned */
	int64_t off = as_reserve(as, pos, m->col, 4u * (unsigned)words);
	if (off < 0)
		return p;
	Item *it = as_item(as, IT_INSN, pos, m->col);
	if (!it)
		return p;
	it->off = (uint32_t)off;
	it->mnem = mn;
	it->mcol = m->col;
	it->nops = nops;
	memcpy(it->op, ops, (size_t)nops * sizeof *ops);
	it->bundle = bundle;
	it->bcol = as->bundle_col;
	it->ctx = as->ctx;
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
	} else if (tok_name(as, pos, &t[p], name, sizeof name,
	                    "a section name"))
		return skip_stmt(t, p);
	if (!name[0]) {
		as_error(as, pos, t[p].col, "empty section name");
		return skip_stmt(t, p);
	}
	p++;
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
		if (tok_name(as, pos, &t[p], name, sizeof name,
		             "a symbol name"))
			return skip_stmt(t, p);
		int s = as_symbol(as, name, pos, t[p].col);
		as->sym[s].global = 1;
		p++;
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
	int col;
	if (name_comma(as, pos, t, &p, name, &col))
		return skip_stmt(t, p);
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
};

static int
directive(As *as, const SrcPos *pos, const Token *t, int n, int p)
{
	const Token *dir = &t[p];
	for (size_t i = 0; i < sizeof directives / sizeof directives[0]; i++)
		if (tok_is(dir, directives[i].name))
			return directives[i].fn(as, pos, t, n, p + 1, dir);
	if (tok_is(dir, ".macro") || tok_is(dir, ".endm") ||
	    tok_is(dir, ".rept") || tok_is(dir, ".endr"))
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

static void
close_bundle(As *as, const SrcPos *pos, const Token *k)
{
	if (!as->in_bundle) {
		as_error(as, pos, k->col, "'}' without '{'");
		return;
	}
	as->in_bundle = 0;
	if (as->bundle_n < 2)
		as_error(as, &as->bundle_pos, as->bundle_col,
		         "a bundle needs two instructions, main-lane then "
		         "aux-lane (found %d)",
		         as->bundle_n);
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
			expand_macro(as, m, l, k);
			return n -
			       1; /* the arguments are the rest of the line */
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
		as_error(as, &pos, errcol, "%s", msg);
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
	for (int i = 0; i < n && !as->stop; i++) {
		const SrcLine *l = &lines[i];
		if (++as->lines > MAX_LINES) {
			SrcPos pos = line_pos(l);
			as_error(as, &pos, 1,
			         "more than %d lines after expanding macros "
			         "and .rept",
			         MAX_LINES);
			as->stop = 1;
			return;
		}
		char w[16];
		first_word(l->text, w, sizeof w);
		int isrept = !strcmp(w, ".rept");
		if (isrept || !strcmp(w, ".macro")) {
			const char *close = isrept ? ".endr" : ".endm";
			int j = block_end(lines, i, n, w, close);
			if (j < 0) {
				SrcPos pos = line_pos(l);
				as_error(as, &pos, 1, "'%s' without '%s'", w,
				         close);
				return;
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
}

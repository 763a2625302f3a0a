/*
 * expr.c - assembler expressions: a precedence-climbing parser over tokens
 * and an evaluator over relocatable values.
 *
 * Operators and precedence are those of Graphcore's (LLVM's GNU-style)
 * assembler, not C's: unary - + ~ !, then * / % << >>, then | & ^ (one
 * level, left to right), + -, the comparisons == != <> < <= > >= (1 for
 * true, 0 for false), &&, ||. A value is absolute, section-relative (a label,
 * ".") or an undefined symbol plus a constant. Only these combine: rel + abs,
 * abs + rel, rel - abs, and rel - rel within one section (which is absolute);
 * anything else is an error, because no relocation could express it. Symbols
 * are the caller's business (ExprHooks), so the parser knows no symbol table.
 */
#include "asmpriv.h"

#include <stdio.h>
#include <string.h>

enum {
	E_NUM,    /* num */
	E_SYM,    /* sym */
	E_SECREL, /* sec + num */
	E_NEG,
	E_NOT,
	E_LNOT,
	E_BIN, /* num = operator (a character or P_SHL/P_SHR) */
};

static Expr *
node(const ExprHooks *h, int op, int col)
{
	Expr *e = h->alloc(h->ctx, sizeof *e);
	memset(e, 0, sizeof *e);
	e->op = op;
	e->col = col;
	e->sym = -1;
	e->sec = EV_ABS;
	return e;
}

Expr *
expr_num(const ExprHooks *h, int64_t v, int col)
{
	Expr *e = node(h, E_NUM, col);
	e->num = v;
	return e;
}

Expr *
expr_sym(const ExprHooks *h, int sym, int col)
{
	Expr *e = node(h, E_SYM, col);
	e->sym = sym;
	return e;
}

Expr *
expr_secrel(const ExprHooks *h, int sec, int64_t off, int col)
{
	Expr *e = node(h, E_SECREL, col);
	e->sec = sec;
	e->num = off;
	return e;
}

/* Binding power of a binary operator token; 0 if it is not one. The levels
 * are LLVM's getGNUBinOpPrecedence (the Colossus assembler is LLVM's MC),
 * so `1 + 2 << 3` is 17 and `a | b + c` is (a | b) + c, as there. */
static int
binary_prec(const Token *t)
{
	if (t->kind != TK_PUNCT)
		return 0;
	switch (t->punct) {
	case '*':
	case '/':
	case '%':
	case P_SHL:
	case P_SHR:
		return 6;
	case '|':
	case '&':
	case '^':
		return 5;
	case '+':
	case '-':
		return 4;
	case P_EQ:
	case P_NE:
	case '<':
	case P_LE:
	case '>':
	case P_GE:
		return 3;
	case P_LAND:
		return 2;
	case P_LOR:
		return 1;
	}
	return 0;
}

static Expr *parse_binary(const ExprHooks *h, const Token *t, int n, int *pos,
                          int minprec, int depth);

static Expr *
parse_unary(const ExprHooks *h, const Token *t, int n, int *pos, int depth)
{
	const Token *k = &t[*pos];
	if (depth > 200) {
		h->error(h->ctx, k->col, "expression nested too deeply");
		return NULL;
	}
	if (k->kind == TK_PUNCT && k->punct == '-' && k[1].kind == TK_NUM &&
	    k[1].punct == 'h') { /* -1.0h negates the binary16 value */
		*pos += 2;
		return expr_num(h, k[1].num ^ 0x8000, k->col);
	}
	if (k->kind == TK_PUNCT && (k->punct == '-' || k->punct == '+' ||
	                            k->punct == '~' || k->punct == '!')) {
		(*pos)++;
		Expr *a = parse_unary(h, t, n, pos, depth + 1);
		if (!a || k->punct == '+')
			return a;
		Expr *e = node(h,
		               k->punct == '-'   ? E_NEG
		               : k->punct == '~' ? E_NOT
		                                 : E_LNOT,
		               k->col);
		e->l = a;
		return e;
	}
	if (k->kind == TK_PUNCT && k->punct == '(') {
		(*pos)++;
		Expr *e = parse_binary(h, t, n, pos, 1, depth + 1);
		if (!e)
			return NULL;
		if (t[*pos].kind != TK_PUNCT || t[*pos].punct != ')') {
			h->error(h->ctx, t[*pos].col, "expected ')'");
			return NULL;
		}
		(*pos)++;
		return e;
	}
	if (k->kind == TK_NUM) {
		(*pos)++;
		return expr_num(h, k->num, k->col);
	}
	if (k->kind == TK_IDENT && k->len == 1 && k->s[0] == '.') {
		(*pos)++;
		return h->dot(h->ctx, k->col);
	}
	if (k->kind == TK_IDENT || k->kind == TK_LOCAL) {
		(*pos)++;
		return h->ident(h->ctx, k);
	}
	if (k->kind == TK_FLOAT)
		h->error(h->ctx, k->col,
		         "a floating-point number is only allowed in .float");
	else if (k->kind == TK_REG)
		h->error(h->ctx, k->col,
		         "a register cannot be used in an expression");
	else if (k->kind == TK_EOL)
		h->error(h->ctx, k->col, "expected an expression");
	else
		h->error(h->ctx, k->col, "expected an expression here");
	return NULL;
}

static Expr *
parse_binary(const ExprHooks *h, const Token *t, int n, int *pos, int minprec,
             int depth)
{
	Expr *l = parse_unary(h, t, n, pos, depth);
	while (l && *pos < n) {
		const Token *k = &t[*pos];
		int prec = binary_prec(k);
		if (!prec || prec < minprec)
			break;
		(*pos)++;
		Expr *r = parse_binary(h, t, n, pos, prec + 1, depth + 1);
		if (!r)
			return NULL;
		Expr *e = node(h, E_BIN, k->col);
		e->num = k->punct;
		e->l = l;
		e->r = r;
		l = e;
	}
	return l;
}

Expr *
expr_parse(const ExprHooks *h, const Token *t, int n, int *pos)
{
	return parse_binary(h, t, n, pos, 1, 0);
}

static int
fail(const ExprHooks *h, int col, const char *msg)
{
	h->error(h->ctx, col, msg);
	return -1;
}

static int
is_abs(const ExprVal *v)
{
	return v->sec == EV_ABS && v->sym < 0;
}

static const char not_reloc[] =
    "expression is not relocatable: use a constant, or one symbol plus or "
    "minus a constant";

/* Bitwise results in uint64_t, as int64_t without undefined behaviour. */
static int64_t
wrap(uint64_t v)
{
	int64_t r;
	memcpy(&r, &v, sizeof r);
	return r;
}

/* Values are signed 64-bit (a number written above INT64_MAX is its
 * two's-complement pattern: 0xffffffffffffffff is -1); + - * << and
 * unary - that leave that range are errors at the operator, never a
 * silent wrap (1 << 64 is not 0). */
static int
overflow(const ExprHooks *h, int col)
{
	return fail(h, col,
	            "overflow: the result does not fit 64 bits (signed)");
}

static int
eval_add(const ExprHooks *h, int op, int col, ExprVal *a, const ExprVal *b)
{
	if (op == '+') {
		if (!is_abs(a) && !is_abs(b))
			return fail(h, col, not_reloc);
		if (is_abs(a)) {
			a->sec = b->sec;
			a->sym = b->sym;
		}
		return __builtin_add_overflow(a->v, b->v, &a->v)
		           ? overflow(h, col)
		           : 0;
	}
	if (is_abs(b) || (a->sym < 0 && b->sym < 0 && a->sec == b->sec)) {
		if (!is_abs(b))
			a->sec = EV_ABS;
		return __builtin_sub_overflow(a->v, b->v, &a->v)
		           ? overflow(h, col)
		           : 0;
	}
	if (a->sym < 0 && b->sym < 0 && a->sec != EV_ABS && b->sec != EV_ABS)
		return fail(h, col,
		            "cannot subtract labels of different sections");
	return fail(h, col, not_reloc);
}

/* Comparisons and logical operators of absolute values: 1 or 0. */
static int
eval_logic(const ExprHooks *h, const Expr *e, ExprVal *a, const ExprVal *b)
{
	if (!is_abs(a) || !is_abs(b))
		return fail(h, e->col, not_reloc);
	int64_t x = a->v, y = b->v;
	switch ((int)e->num) {
	case P_EQ:
		a->v = x == y;
		break;
	case P_NE:
		a->v = x != y;
		break;
	case '<':
		a->v = x < y;
		break;
	case P_LE:
		a->v = x <= y;
		break;
	case '>':
		a->v = x > y;
		break;
	case P_GE:
		a->v = x >= y;
		break;
	case P_LAND:
		a->v = x && y;
		break;
	default: /* P_LOR */
		a->v = x || y;
		break;
	}
	return 0;
}

static int
eval_bin(const ExprHooks *h, const Expr *e, ExprVal *a, const ExprVal *b)
{
	int op = (int)e->num;
	if (op == '+' || op == '-')
		return eval_add(h, op, e->col, a, b);
	if (binary_prec(&(Token){.kind = TK_PUNCT, .punct = op}) <= 3)
		return eval_logic(h, e, a, b);
	if (!is_abs(a) || !is_abs(b))
		return fail(h, e->col, not_reloc);
	uint64_t x = (uint64_t)a->v, y = (uint64_t)b->v;
	switch (op) {
	case '*':
		if (__builtin_mul_overflow(a->v, b->v, &a->v))
			return overflow(h, e->col);
		break;
	case '/':
	case '%':
		if (b->v == 0)
			return fail(h, e->col, "division by zero");
		if (a->v == INT64_MIN && b->v == -1 && op == '/')
			return overflow(h, e->col);
		if (a->v == INT64_MIN && b->v == -1)
			a->v = 0;
		else
			a->v = op == '/' ? a->v / b->v : a->v % b->v;
		break;
	case P_SHL:
		if (b->v < 0 || b->v > 63)
			return fail(h, e->col, "shift count is not in 0..63");
		if (wrap(x << y) >> y != a->v)
			return overflow(h, e->col);
		a->v = wrap(x << y);
		break;
	case P_SHR: /* arithmetic, as in GNU as */
		a->v =
		    b->v < 0 || b->v > 63 ? (a->v < 0 ? -1 : 0) : a->v >> b->v;
		break;
	case '&':
		a->v = wrap(x & y);
		break;
	case '^':
		a->v = wrap(x ^ y);
		break;
	case '|':
		a->v = wrap(x | y);
		break;
	default:
		return fail(h, e->col, "unknown operator");
	}
	return 0;
}

int
expr_eval(const ExprHooks *h, const Expr *e, ExprVal *out)
{
	ExprVal b;
	switch (e->op) {
	case E_NUM:
		*out = (ExprVal){e->num, EV_ABS, -1};
		return 0;
	case E_SECREL:
		*out = (ExprVal){e->num, e->sec, -1};
		return 0;
	case E_SYM:
		return h->symval(h->ctx, e->sym, e->col, out);
	case E_NEG:
	case E_NOT:
	case E_LNOT:
		if (expr_eval(h, e->l, out))
			return -1;
		if (!is_abs(out))
			return fail(h, e->col, not_reloc);
		if (e->op == E_NEG && out->v == INT64_MIN)
			return overflow(h, e->col);
		out->v = e->op == E_NEG   ? -out->v
		         : e->op == E_NOT ? ~out->v
		                          : !out->v;
		return 0;
	case E_BIN:
		if (expr_eval(h, e->l, out) || expr_eval(h, e->r, &b))
			return -1;
		return eval_bin(h, e, out, &b);
	}
	return fail(h, e->col, "bad expression");
}

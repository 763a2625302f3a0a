/*
 * asm.c - the assembler: statements to a relocatable object.
 *
 * Two passes over an in-memory item list. Pass 1 walks the source lines
 * (pass1.c expands macros, .rept and .include into more lines), defines
 * labels, handles directives and records each instruction and data value as
 * an Item at a fixed section offset; every instruction is 4 bytes whatever
 * its variant, so addresses are final after pass 1. Pass 2 evaluates the
 * operand expressions, picks the variant (asm_select), encodes through
 * isa.h and emits a relocation for every value that depends on a section
 * address or an undefined symbol. Errors are collected (up to max_errors)
 * with file, line, column and the source line, and both passes keep going
 * after an error so one run reports as many as it can.
 */
#include "asmpriv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Limits that keep hostile input (and the fuzzer) bounded. */
enum {
	MAX_SECTION_BYTES = 1 << 24,
	MAX_ITEMS = 1 << 22,
};

/* ---- errors ---- */

/* Fill d with a message at pos/col (NULL pos: the file as a whole). */
static void
fill_diag(const As *as, Diag *d, const SrcPos *pos, int col, const char *fmt,
          va_list ap)
{
	memset(d, 0, sizeof *d);
	char msg[sizeof d->msg - 100]; /* room for the macro note */
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (pos && pos->macro)
		snprintf(d->msg, sizeof d->msg, "%s (in macro '%.64s')", msg,
		         pos->macro);
	else
		snprintf(d->msg, sizeof d->msg, "%s", msg);
	if (pos) {
		snprintf(d->file, sizeof d->file, "%s", pos->file);
		d->line = pos->line;
		d->col = col;
		snprintf(d->source_line, sizeof d->source_line, "%s",
		         pos->show ? pos->show : "");
		for (char *p = d->source_line; *p; p++)
			if (*p == '\t') /* one column per character */
				*p = ' ';
	} else {
		snprintf(d->file, sizeof d->file, "%s", as->name);
	}
}

void
as_error(As *as, const SrcPos *pos, int col, const char *fmt, ...)
{
	if (as->quiet) {
		as->quiet_failed = 1;
		return;
	}
	if (as->stop)
		return;
	if (as->errs.n >= as->max_errors) {
		as->stop = 1;
		return;
	}
	as->errs.v =
	    xrealloc(as->errs.v, (size_t)(as->errs.n + 1) * sizeof *as->errs.v);
	as->errseq =
	    xrealloc(as->errseq, (size_t)(as->errs.n + 1) * sizeof *as->errseq);
	as->errseq[as->errs.n] = as->seq;
	va_list ap;
	va_start(ap, fmt);
	fill_diag(as, &as->errs.v[as->errs.n++], pos, col, fmt, ap);
	va_end(ap);
}

void
as_warning(As *as, const SrcPos *pos, int col, const char *fmt, ...)
{
	DiagList *w = as->warnings;
	if (!w || as->quiet || w->n >= 1000)
		return;
	w->v = xrealloc(w->v, (size_t)(w->n + 1) * sizeof *w->v);
	va_list ap;
	va_start(ap, fmt);
	fill_diag(as, &w->v[w->n++], pos, col, fmt, ap);
	va_end(ap);
}

void
diaglist_free(DiagList *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* ---- arena ---- */

typedef struct Block Block;
struct Block {
	Block *next;
	size_t used, cap;
};
enum { BLOCK_HDR = 32, BLOCK_SIZE = 1 << 16 };

void *
as_alloc(As *as, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	Block *b = as->arena;
	if (!b || b->used + n > b->cap) {
		size_t cap = n > BLOCK_SIZE ? n : BLOCK_SIZE;
		b = xmalloc(BLOCK_HDR + cap);
		b->next = as->arena;
		b->used = 0;
		b->cap = cap;
		as->arena = b;
	}
	void *p = (char *)b + BLOCK_HDR + b->used;
	b->used += n;
	return p;
}

char *
as_strndup(As *as, const char *s, size_t n)
{
	char *p = as_alloc(as, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

void
as_trim(const char **a, const char **b)
{
	while (*a < *b && (**a == ' ' || **a == '\t'))
		(*a)++;
	while (*b > *a && ((*b)[-1] == ' ' || (*b)[-1] == '\t'))
		(*b)--;
}

static void
arena_free(As *as)
{
	for (Block *b = as->arena, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	as->arena = NULL;
}

/* ---- sections ---- */

static int
find_section(As *as, const char *name)
{
	for (int i = 0; i < as->nsec; i++)
		if (!strcmp(as->sec[i].name, name))
			return i;
	return -1;
}

/* Flags of a section named without explicit flags. */
static uint32_t
default_flags(const char *name)
{
	if (!strncmp(name, ".text", 5))
		return SECF_EXEC;
	if (!strncmp(name, ".bss", 4))
		return SECF_WRITE | SECF_NOBITS;
	if (!strncmp(name, ".rodata", 7))
		return 0;
	return SECF_WRITE;
}

int
as_section(As *as, const char *name, uint32_t flags, int explicit_flags)
{
	int i = find_section(as, name);
	if (i >= 0)
		as->sec[i].implicit = 0;
	if (i < 0) {
		GROW(as->sec, as->nsec, as->capsec);
		i = as->nsec++;
		ASec *s = &as->sec[i];
		memset(s, 0, sizeof *s);
		s->name = as_strndup(as, name, strlen(name));
		s->flags = explicit_flags ? flags : default_flags(name);
		s->align = 4;
	}
	as->cur = i;
	return i;
}

/* Reserve n bytes in the current section; returns the offset, -1 when the
 * section would grow too large (reported). */
int64_t
as_reserve(As *as, const SrcPos *pos, int col, uint64_t n)
{
	ASec *s = &as->sec[as->cur];
	if (n > MAX_SECTION_BYTES || s->size + n > MAX_SECTION_BYTES) {
		as_error(as, pos, col, "section %s would exceed %d bytes",
		         s->name, MAX_SECTION_BYTES);
		return -1;
	}
	uint32_t off = s->size;
	s->size += (uint32_t)n;
	if (!(s->flags & SECF_NOBITS)) {
		if (s->size > s->cap) {
			uint32_t cap = s->cap ? s->cap : 256;
			while (cap < s->size)
				cap *= 2;
			s->data = xrealloc(s->data, cap);
			s->cap = cap;
		}
		if (n)
			memset(s->data + off, 0, n);
	}
	return off;
}

/* ---- symbols ---- */

static uint32_t
hash_name(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static void
rehash(As *as)
{
	free(as->hash);
	as->hcap = as->hcap ? as->hcap * 2 : 256;
	as->hash = xmalloc((size_t)as->hcap * sizeof *as->hash);
	for (int i = 0; i < as->hcap; i++)
		as->hash[i] = -1;
	for (int i = 0; i < as->nsym; i++) {
		uint32_t h = hash_name(as->sym[i].name) & (as->hcap - 1);
		while (as->hash[h] >= 0)
			h = (h + 1) & (as->hcap - 1);
		as->hash[h] = i;
	}
}

int
as_lookup(As *as, const char *name)
{
	if (!as->hcap)
		return -1;
	uint32_t h = hash_name(name) & (as->hcap - 1);
	for (; as->hash[h] >= 0; h = (h + 1) & (as->hcap - 1))
		if (!strcmp(as->sym[as->hash[h]].name, name))
			return as->hash[h];
	return -1;
}

/* The symbol `name`, created undefined if new (first seen at pos/col). */
int
as_symbol(As *as, const char *name, const SrcPos *pos, int col)
{
	int i = as_lookup(as, name);
	if (i >= 0)
		return i;
	if ((as->nsym + 1) * 2 > as->hcap)
		rehash(as);
	GROW(as->sym, as->nsym, as->capsym);
	i = as->nsym++;
	ASym *s = &as->sym[i];
	memset(s, 0, sizeof *s);
	s->name = as_strndup(as, name, strlen(name));
	s->local = !strncmp(name, ".L", 2);
	s->numeric = -1;
	if (pos)
		s->pos = *pos;
	s->col = col;
	uint32_t h = hash_name(name) & (as->hcap - 1);
	while (as->hash[h] >= 0)
		h = (h + 1) & (as->hcap - 1);
	as->hash[h] = i;
	return i;
}

/* Name of the instance of numeric label `n`: not spellable in source. */
static void
numeric_name(char *buf, size_t len, int64_t n, int instance)
{
	snprintf(buf, len, "\001L%lld#%d", (long long)n, instance);
}

static int *
numeric_count(As *as, int64_t n)
{
	for (int i = 0; i < as->nnum; i++)
		if (as->num[i].label == n)
			return &as->num[i].count;
	as->num = xrealloc(as->num, (size_t)(as->nnum + 1) * sizeof *as->num);
	as->num[as->nnum].label = n;
	as->num[as->nnum].count = 0;
	return &as->num[as->nnum++].count;
}

void
as_label(As *as, const char *name, int64_t numeric, const SrcPos *pos, int col)
{
	char buf[64];
	if (numeric >= 0) {
		int *count = numeric_count(as, numeric);
		numeric_name(buf, sizeof buf, numeric, ++*count);
		name = buf;
	}
	int i = as_symbol(as, name, pos, col);
	ASym *s = &as->sym[i];
	if (s->kind != SK_UNDEF) {
		as_error(as, pos, col,
		         "symbol '%s' is already defined (at %s:%d)", name,
		         s->pos.file, s->pos.line);
		return;
	}
	s->kind = SK_LABEL;
	s->sec = as->cur;
	s->value = as->sec[as->cur].size;
	s->pos = *pos;
	s->col = col;
	if (numeric >= 0) {
		s->numeric = numeric;
		s->local = 1;
	}
}

void
as_equ(As *as, const char *name, Expr *e, const SrcPos *pos, int col)
{
	int i = as_symbol(as, name, pos, col);
	ASym *s = &as->sym[i];
	if (s->kind == SK_LABEL) {
		as_error(as, pos, col, "'%s' is already a label (at %s:%d)",
		         name, s->pos.file, s->pos.line);
		return;
	}
	/* A constant folds now, so a later .set does not change earlier
	 * uses; anything else is evaluated lazily in pass 2. */
	ExprVal v;
	as->quiet = 1;
	as->quiet_failed = 0;
	as->pass1 = 1;
	int r = expr_eval(&as->hooks, e, &v);
	as->pass1 = 0;
	as->quiet = 0;
	s->kind = SK_EQU;
	s->pos = *pos;
	s->col = col;
	if (r == 0 && v.sec == EV_ABS && v.sym < 0) {
		s->value = v.v;
		s->equ = NULL;
	} else {
		s->equ = e;
	}
}

/* ---- expression hooks ---- */

static Expr *
hook_ident(void *ctx, const Token *t)
{
	As *as = ctx;
	char buf[300];
	int i;
	if (t->kind == TK_LOCAL) {
		int *count = numeric_count(as, t->num);
		if (t->punct == 'b' && *count == 0) {
			as_error(as, as->pos, t->col,
			         "no local label '%lld' before this point",
			         (long long)t->num);
			return NULL;
		}
		numeric_name(buf, sizeof buf, t->num,
		             *count + (t->punct == 'f'));
		i = as_symbol(as, buf, as->pos, t->col);
		as->sym[i].numeric = t->num;
		as->sym[i].local = 1;
	} else {
		if (t->len >= (int)sizeof buf) {
			as_error(as, as->pos, t->col, "name too long");
			return NULL;
		}
		snprintf(buf, sizeof buf, "%.*s", t->len, t->s);
		i = as_symbol(as, buf, as->pos, t->col);
		if (as->sym[i].kind == SK_EQU && !as->sym[i].equ)
			return expr_num(&as->hooks, as->sym[i].value, t->col);
	}
	return expr_sym(&as->hooks, i, t->col);
}

static Expr *
hook_dot(void *ctx, int col)
{
	As *as = ctx;
	return expr_secrel(&as->hooks, as->cur, as->dot, col);
}

static int
hook_symval(void *ctx, int sym, int col, ExprVal *v)
{
	As *as = ctx;
	ASym *s = &as->sym[sym];
	const SrcPos *pos = as->pos;
	switch (s->kind) {
	case SK_LABEL:
		*v = (ExprVal){s->value, s->sec, -1};
		return 0;
	case SK_EQU:
		if (!s->equ) {
			*v = (ExprVal){s->value, EV_ABS, -1};
			return 0;
		}
		if (s->busy) {
			as_error(as, &s->pos, s->col,
			         "symbol '%s' is defined in terms of itself",
			         s->name);
			return -1;
		}
		/* Errors inside point at the definition. */
		s->busy = 1;
		as->pos = &s->pos;
		int r = expr_eval(&as->hooks, s->equ, v);
		as->pos = pos;
		s->busy = 0;
		return r;
	default:
		break;
	}
	if (s->numeric >= 0) {
		as_error(as, pos, col, "local label '%lld' is not defined %s",
		         (long long)s->numeric,
		         as->pass1 ? "yet (its value is needed here)"
		                   : "after this point");
		return -1;
	}
	if (as->pass1) {
		as_error(as, pos, col,
		         "'%s' is not defined yet (its value is needed here)",
		         s->name);
		return -1;
	}
	if (s->local) {
		as_error(as, pos, col, "undefined local symbol '%s'", s->name);
		return -1;
	}
	s->used = 1;
	*v = (ExprVal){0, EV_ABS, sym};
	return 0;
}

static void
hook_error(void *ctx, int col, const char *msg)
{
	As *as = ctx;
	as_error(as, as->pos, col, "%s", msg);
}

static void *
hook_alloc(void *ctx, size_t n)
{
	return as_alloc(ctx, n);
}

/* Evaluate an expression that must be an absolute constant now (pass 1). */
int
as_const(As *as, Expr *e, int64_t *v)
{
	ExprVal ev;
	as->pass1 = 1;
	int r = expr_eval(&as->hooks, e, &ev);
	as->pass1 = 0;
	if (r)
		return -1;
	if (ev.sec != EV_ABS || ev.sym >= 0) {
		as_error(as, as->pos, e->col,
		         "expected a constant, not an address");
		return -1;
	}
	*v = ev.v;
	return 0;
}

/* ---- items ---- */

Item *
as_item(As *as, int kind, const SrcPos *pos, int col)
{
	if (as->nitem >= MAX_ITEMS) {
		as_error(as, pos, col, "too many statements");
		return NULL;
	}
	GROW(as->item, as->nitem, as->capitem);
	Item *it = &as->item[as->nitem++];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->pos = *pos;
	it->col = col;
	it->sec = as->cur;
	it->seq = as->seq;
	return it;
}

/* ---- pass 2 ---- */

static void
add_reloc(As *as, int sec, uint32_t off, uint32_t type, const ExprVal *v,
          const Item *it, int col)
{
	if (v->v < INT32_MIN || v->v > INT32_MAX) {
		as_error(as, &it->pos, col,
		         "addend %lld of a relocated value does not fit 32 "
		         "bits",
		         (long long)v->v);
		return;
	}
	as->rel = xrealloc(as->rel, (size_t)(as->nrel + 1) * sizeof *as->rel);
	ARel *r = &as->rel[as->nrel++];
	r->sec = sec;
	r->off = off;
	r->type = type;
	r->sym = v->sym;
	r->tsec = v->sym >= 0 ? -1 : v->sec;
	r->addend = (int32_t)v->v;
}

static void
put_le(uint8_t *p, uint64_t v, int size)
{
	for (int i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
resolve_data(As *as, Item *it)
{
	ExprVal v;
	as->pos = &it->pos;
	if (expr_eval(&as->hooks, it->e, &v))
		return;
	ASec *s = &as->sec[it->sec];
	if (v.sec == EV_ABS && v.sym < 0) {
		int64_t lo = -((int64_t)1 << (8 * it->size - 1));
		int64_t hi = ((int64_t)1 << (8 * it->size)) - 1;
		if (v.v < lo || v.v > hi) {
			as_error(
			    as, &it->pos, it->e->col,
			    "value %lld does not fit %d byte%s (%lld..%lld)",
			    (long long)v.v, it->size, it->size > 1 ? "s" : "",
			    (long long)lo, (long long)hi);
			return;
		}
		put_le(s->data + it->off, (uint64_t)v.v, it->size);
		return;
	}
	uint32_t type = it->size == 4   ? R_IPU_32
	                : it->size == 2 ? R_IPU_16
	                                : R_IPU_8;
	add_reloc(as, it->sec, it->off, type, &v, it, it->e->col);
}

static void
check_bundle(As *as, const Item *it, const InsnDesc *d)
{
	if (d->flags & F_SOLO) {
		as_error(as, &it->pos, it->mcol,
		         "'%s' cannot be bundled (it must issue alone)",
		         d->mnemonic);
		return;
	}
	if (it->bundle == 1 && d->lane != LANE_MAIN)
		as_error(as, &it->pos, it->mcol,
		         "'%s' is an aux-lane instruction: a bundle is "
		         "{ main-lane ; aux-lane }, write the main-lane "
		         "instruction first",
		         d->mnemonic);
	else if (it->bundle == 2 && d->lane != LANE_AUX)
		as_error(as, &it->pos, it->mcol,
		         "'%s' is a main-lane instruction: the second "
		         "instruction of a bundle must be aux-lane (floating "
		         "point, ARF, AMP)",
		         d->mnemonic);
}

static void
check_context(As *as, const Item *it, const InsnDesc *d)
{
	if (it->ctx == CTX_B || d->ctx == CTX_B || d->ctx == it->ctx)
		return;
	as_error(as, &it->pos, it->mcol,
	         "'%s' is a %s-only instruction, but this code is marked %s",
	         d->mnemonic, d->ctx == CTX_W ? "worker" : "supervisor",
	         it->ctx == CTX_W ? ".worker" : ".supervisor");
}

static void
resolve_insn(As *as, Item *it)
{
	AsmOperand ops[ISA_MAX_OPS];
	ExprVal ev[ISA_MAX_OPS];
	as->pos = &it->pos;
	for (int i = 0; i < it->nops; i++) {
		ops[i] = it->op[i].a;
		if (ops[i].cls != AOP_IMM)
			continue;
		if (expr_eval(&as->hooks, it->op[i].e, &ev[i]))
			return;
		ops[i].known = ev[i].sec == EV_ABS && ev[i].sym < 0;
		ops[i].value = ev[i].v;
	}
	int32_t vals[ISA_MAX_OPS];
	int bad = -1;
	int row =
	    asm_select(it->mnem, ops, it->nops, as->chip->arch, vals, &bad);
	if (row < 0) {
		as_select_error(as, it, ops, row, bad);
		return;
	}
	const InsnDesc *d = isa_row(row);
	ASec *s = &as->sec[it->sec];
	for (int i = 0; i < it->nops; i++) {
		if (ops[i].cls != AOP_IMM || ops[i].known)
			continue;
		if (d->op[i].word) {
			as_error(as, &it->pos, it->op[i].col,
			         "operand %d of '%s' is in its second word, "
			         "which cannot be relocated: it must be a "
			         "constant",
			         i + 1, it->mnem);
			return;
		}
		vals[i] = 0; /* the linker fills the field */
		add_reloc(as, it->sec, it->off, R_IPU_OPERAND0 + (uint32_t)i,
		          &ev[i], it, it->op[i].col);
	}
	Insn in = {.row = (int16_t)row, .nops = d->nops};
	memcpy(in.op, vals, sizeof vals);
	uint32_t w[2];
	if (isa_encode_wide(&in, w))
		die("asm_select chose %s but it does not encode", d->variant);
	if (it->bundle) {
		check_bundle(as, it, d);
		if (it->bundle == 1)
			w[0] |= 0x80000000u;
	}
	check_context(as, it, d);
	if (d->flags & F_IPU21)
		as->objflags |= OBJF_IPU21;
	for (int i = 0; i < isa_words(d); i++)
		put_le(s->data + it->off + 4 * i, w[i], 4);
}

static void
resolve_sizes(As *as)
{
	for (int i = 0; i < as->nsym; i++) {
		ASym *s = &as->sym[i];
		if (!s->size_expr)
			continue;
		if (s->kind == SK_UNDEF && !s->used && !s->global) {
			/* Not in the object (LLVM drops it too): a .size
			 * naming the wrong symbol, as poplibs has one. */
			as_warning(as, &s->size_pos, s->size_expr->col,
			           ".size of '%s', which is neither defined "
			           "nor used, is ignored",
			           s->name);
			continue;
		}
		ExprVal v;
		as->pos = &s->size_pos;
		if (expr_eval(&as->hooks, s->size_expr, &v))
			continue;
		if (v.sec != EV_ABS || v.sym >= 0 || v.v < 0 ||
		    v.v > UINT32_MAX) {
			as_error(as, &s->size_pos, s->size_expr->col,
			         ".size of '%s' must be a constant 0..2^32-1",
			         s->name);
			continue;
		}
		s->size = (uint32_t)v.v;
	}
}

/* The lane of the row an item will get; -1 if it selects none (its error
 * is reported when it is resolved). */
static int
item_lane(As *as, const Item *it)
{
	AsmOperand ops[ISA_MAX_OPS];
	int32_t vals[ISA_MAX_OPS];
	int r = 0;
	as->pos = &it->pos;
	as->quiet = 1;
	for (int i = 0; i < it->nops && !r; i++) {
		ExprVal ev;
		ops[i] = it->op[i].a;
		if (ops[i].cls != AOP_IMM)
			continue;
		r = expr_eval(&as->hooks, it->op[i].e, &ev);
		ops[i].known = ev.sec == EV_ABS && ev.sym < 0;
		ops[i].value = ev.v;
	}
	as->quiet = 0;
	int row =
	    r ? -1
	      : asm_select(it->mnem, ops, it->nops, as->chip->arch, vals, NULL);
	return row < 0 ? -1 : (int)isa_row(row)->lane;
}

/* Under .allow_optimizations a bundle written { aux ; main } is emitted as
 * { main ; aux } (LLVM's SwapBundleInstructionsIfRequired). */
static void
order_bundle(As *as, Item *a)
{
	Item *b = a + 1;
	if (item_lane(as, a) != LANE_AUX || item_lane(as, b) != LANE_MAIN)
		return;
	uint32_t off = a->off;
	a->off = b->off;
	b->off = off;
	a->bundle = 2;
	b->bundle = 1;
}

static void
pass2(As *as)
{
	for (int i = 0; i < as->nitem && !as->stop; i++) {
		Item *it = &as->item[i];
		as->seq = it->seq;
		if (it->bundle == 1 && it->swap_ok && i + 1 < as->nitem)
			order_bundle(as, it);
		if (it->kind == IT_INSN)
			resolve_insn(as, it);
		else
			resolve_data(as, it);
	}
	as->seq = as->lines + 1;
	resolve_sizes(as);
	as->pos = NULL;
}

/* ---- output ---- */

static int
exported(const ASym *s)
{
	if (s->numeric >= 0 || s->predefined)
		return 0;
	if (s->kind == SK_LABEL)
		return !s->local || s->global;
	if (s->kind == SK_EQU)
		return s->global;
	return s->global || s->used;
}

static int
equ_value(As *as, ASym *s, int64_t *v)
{
	if (!s->equ) {
		*v = s->value;
		return 0;
	}
	ExprVal ev;
	as->pos = &s->pos;
	if (expr_eval(&as->hooks, s->equ, &ev))
		return -1;
	if (ev.sec != EV_ABS || ev.sym >= 0) {
		as_error(as, &s->pos, s->col,
		         "global '%s' must be a label or a constant", s->name);
		return -1;
	}
	*v = ev.v;
	return 0;
}

static Obj *
build_obj(As *as)
{
	Obj *o = obj_new(OBJ_REL, as->name);
	o->flags = as->objflags;
	/* The implicit .text goes when empty and unlabelled. */
	int drop = as->sec[0].implicit && as->sec[0].size == 0;
	for (int i = 0; i < as->nsym && drop; i++)
		if (as->sym[i].kind == SK_LABEL && as->sym[i].sec == 0)
			drop = 0;
	int *map = xcalloc((size_t)as->nsec, sizeof *map);
	for (int i = 0; i < as->nsec; i++) {
		ASec *s = &as->sec[i];
		map[i] = i - drop;
		if (i < drop)
			continue;
		int k = obj_add_section(o, s->name, s->flags, s->align);
		ObjSection *os = &o->sec[k];
		os->size = s->size;
		if (!(s->flags & SECF_NOBITS)) {
			os->data = xmalloc(s->size);
			if (s->size)
				memcpy(os->data, s->data, s->size);
		}
		ObjSymbol sym = {.name = s->name,
		                 .section = k,
		                 .bind = SYMB_LOCAL,
		                 .type = SYMT_SECTION};
		obj_add_symbol(o, &sym);
	}
	for (int i = 0; i < as->nsym; i++) {
		ASym *s = &as->sym[i];
		s->objsym = -1;
		if (!exported(s))
			continue;
		ObjSymbol sym = {.name = s->name,
		                 .bind = s->global ? SYMB_GLOBAL : SYMB_LOCAL,
		                 .type = (uint8_t)s->type,
		                 .size = s->size};
		if (s->kind == SK_LABEL) {
			sym.section = map[s->sec];
			sym.value = (uint32_t)s->value;
		} else if (s->kind == SK_EQU) {
			int64_t v;
			if (equ_value(as, s, &v))
				continue;
			sym.section = OBJ_ABS;
			sym.value = (uint32_t)v;
		} else {
			sym.section = OBJ_UNDEF;
			sym.bind = SYMB_GLOBAL;
		}
		s->objsym = obj_add_symbol(o, &sym);
	}
	for (int i = 0; i < as->nrel; i++) {
		ARel *r = &as->rel[i];
		ObjReloc orl = {.section = map[r->sec],
		                .offset = r->off,
		                .type = r->type,
		                .symbol = r->sym >= 0 ? as->sym[r->sym].objsym
		                                      : map[r->tsec],
		                .addend = r->addend};
		if (orl.symbol < 0)
			die("relocation against an unexported symbol");
		obj_add_reloc(o, &orl);
	}
	free(map);
	return o;
}

/* Errors in statement order: pass 2 finds some after pass 1 found later
 * ones. Insertion sort keeps equal keys in order; lists are short. */
static void
sort_errors(As *as)
{
	for (int i = 1; i < as->errs.n; i++) {
		Diag d = as->errs.v[i];
		long k = as->errseq[i];
		int j = i;
		for (; j > 0 && as->errseq[j - 1] > k; j--) {
			as->errs.v[j] = as->errs.v[j - 1];
			as->errseq[j] = as->errseq[j - 1];
		}
		as->errs.v[j] = d;
		as->errseq[j] = k;
	}
}

/* ---- driver ---- */

static void
as_init(As *as, const char *name, const AsmOptions *opt)
{
	memset(as, 0, sizeof *as);
	as->name = name;
	as->chip = opt && opt->chip ? opt->chip : chip_default();
	as->max_errors = opt && opt->max_errors > 0 ? opt->max_errors : 20;
	as->no_include = opt && opt->no_include;
	as->warnings = opt ? opt->warnings : NULL;
	as->hooks = (ExprHooks){as,          hook_ident, hook_dot,
	                        hook_symval, hook_error, hook_alloc};
	as->ctx = CTX_B;
	/* The SDK's names (TAMP_..., CSR_..., sdk.c): never exported. */
	SdkName sdk[512];
	int nsdk = sdk_names(as->chip, sdk, 512, 0);
	for (int i = 0; i < nsdk; i++) {
		int s = as_symbol(as, sdk[i].name, NULL, 0);
		as->sym[s].kind = SK_EQU;
		as->sym[s].value = sdk[i].value;
		as->sym[s].predefined = 1;
		as->sym[s].pos.file = "<predefined>";
	}
	as_section(as, ".text", 0, 0);
	as->sec[0].implicit = 1;
}

static void
as_free(As *as)
{
	for (int i = 0; i < as->nsec; i++)
		free(as->sec[i].data);
	free(as->sec);
	free(as->sym);
	free(as->hash);
	free(as->item);
	free(as->rel);
	free(as->num);
	free(as->mac);
	free(as->errseq);
	arena_free(as);
}

int
asm_source(const char *name, const char *text, size_t len,
           const AsmOptions *opt, Obj **out, DiagList *errs)
{
	As as;
	*out = NULL;
	errs->v = NULL;
	errs->n = 0;
	as_init(&as, name, opt);
	as_run_file(&as, name, text, len, NULL);
	if (as.in_bundle)
		as_error(&as, &as.bundle_pos, as.bundle_col,
		         "bundle is not closed with '}'");
	as_check_rpt(&as);
	pass2(&as);
	if (as.errs.n == 0)
		*out = build_obj(&as);
	sort_errors(&as);
	*errs = as.errs;
	as_free(&as);
	return errs->n ? IPU_EINVAL : IPU_OK;
}

int
asm_file(const char *path, const AsmOptions *opt, Obj **out, DiagList *errs)
{
	uint8_t *data;
	size_t len;
	Diag d;
	diag_clear(&d);
	*out = NULL;
	errs->v = NULL;
	errs->n = 0;
	if (read_file(path, &data, &len, &d)) {
		errs->v = xmalloc(sizeof *errs->v);
		errs->v[0] = d;
		errs->n = 1;
		return IPU_EIO;
	}
	int r = asm_source(path, (const char *)data, len, opt, out, errs);
	free(data);
	return r;
}

/* ---- variant selection ---- */

/* Preference among rows of one mnemonic: zero-extended immediates first,
 * then signed, then zero-tailed (docs/assembler.md, "Variants"). */
static int
imm_rank(const InsnDesc *d)
{
	int r = 0;
	for (int i = 0; i < d->nops; i++) {
		if (d->op[i].kind == OPK_S && r < 1)
			r = 1;
		if (d->op[i].kind == OPK_Z)
			r = 2;
	}
	return r;
}

enum { MAX_CAND = 16 };

static int
candidates(const char *mn, int16_t *out)
{
	if (strchr(mn, '_')) { /* no mnemonic has one: a variant name */
		int r = isa_row_by_variant(mn);
		if (r < 0)
			return 0;
		out[0] = (int16_t)r;
		return 1;
	}
	const int16_t *rows;
	int n = isa_rows_by_mnemonic(mn, &rows);
	if (n > MAX_CAND)
		n = MAX_CAND;
	for (int i = 0; i < n; i++) {
		int16_t r = rows[i];
		int j = i;
		for (; j > 0 &&
		       imm_rank(isa_row(out[j - 1])) > imm_rank(isa_row(r));
		     j--)
			out[j] = out[j - 1];
		out[j] = r;
	}
	return n;
}

int
asm_known_mnemonic(const char *mn)
{
	int16_t cand[MAX_CAND];
	return candidates(mn, cand) > 0;
}

int
asm_mnemonic_words(const char *mn)
{
	int16_t cand[MAX_CAND];
	return candidates(mn, cand) > 0 ? isa_words(isa_row(cand[0])) : 1;
}

/* The main-lane no-op: or $mzero, $mzero, 0 (isa.md 3.2). */
uint32_t
asm_nop_word(void)
{
	Insn in = {
	    .row = (int16_t)INSN_or_mmmn_zi, .nops = 3, .op = {15, 15, 0}};
	uint32_t w;
	if (isa_encode(&in, &w))
		die("no encodable nop");
	return w;
}

/* $CWEI_m_n -> 4m + n (isa.md 5.3), -1 if not such a name. */
static int
cwei_index(const char *name)
{
	int m = 0, n = 0, i = 5;
	if (strncmp(name, "CWEI_", 5))
		return -1;
	if (name[i] < '0' || name[i] > '9')
		return -1;
	while (name[i] >= '0' && name[i] <= '9' && m < 100)
		m = m * 10 + (name[i++] - '0');
	if (name[i++] != '_' || name[i] < '0' || name[i] > '3' || name[i + 1])
		return -1;
	n = name[i] - '0';
	return m < CHIP_CWEI / 4 ? 4 * m + n : -1;
}

static int
name_value(const InsnDesc *d, const OperandSpec *s, const char *name)
{
	if (s->kind == OPK_C || s->kind == OPK_CU)
		return isa_csr_index(name, s->kind, 1, 1);
	if (s->kind == OPK_U && (!strcmp(d->mnemonic, "ld64putcs") ||
	                         !strcmp(d->mnemonic, "ld128putcs")))
		return cwei_index(name);
	return -1;
}

static int
kind_ok(const InsnDesc *d, const OperandSpec *s, const AsmOperand *op)
{
	if (op->decor != s->decor)
		return 0;
	switch (s->kind) {
	case OPK_M:
		return op->cls == AOP_MREG && op->nregs == 1;
	case OPK_MP:
		return op->cls == AOP_MREG && op->nregs == 2;
	case OPK_A:
		return op->cls == AOP_AREG && op->nregs == 1;
	case OPK_AP:
		return op->cls == AOP_AREG && op->nregs == 2;
	case OPK_AQ:
		return op->cls == AOP_AREG && op->nregs == 4;
	default:
		if (op->cls == AOP_NAME)
			return name_value(d, s, op->name) >= 0;
		return op->cls == AOP_IMM;
	}
}

static int
kinds_ok(const InsnDesc *d, const AsmOperand *ops, int nops)
{
	if (d->nops != nops)
		return 0;
	for (int i = 0; i < nops; i++)
		if (!kind_ok(d, &d->op[i], &ops[i]))
			return 0;
	return 1;
}

/* Operand values for row d; -1, or the first operand that does not fit. */
static int
fit_values(const InsnDesc *d, const AsmOperand *ops, int32_t *vals)
{
	for (int i = 0; i < d->nops; i++) {
		int64_t x = ops[i].value;
		if (ops[i].cls == AOP_NAME)
			x = name_value(d, &d->op[i], ops[i].name);
		else if (ops[i].cls == AOP_IMM && !ops[i].known) {
			vals[i] = 0; /* relocated: the linker checks */
			continue;
		}
		if (!isa_operand_fits(&d->op[i], x))
			return i;
		vals[i] = (int32_t)x;
	}
	return -1;
}

int
asm_select(const char *mnemonic, const AsmOperand *ops, int nops, Arch arch,
           int32_t *vals, int *bad_op)
{
	int16_t cand[MAX_CAND];
	int n = candidates(mnemonic, cand);
	int avail = 0, nops_seen = 0, kinds_seen = 0, bad = -1;
	for (int c = 0; c < n; c++) {
		const InsnDesc *d = isa_row(cand[c]);
		if (!isa_available(d, arch))
			continue;
		avail = 1;
		if (d->nops != nops)
			continue;
		nops_seen = 1;
		if (!kinds_ok(d, ops, nops))
			continue;
		kinds_seen = 1;
		int32_t v[ISA_MAX_OPS];
		int b = fit_values(d, ops, v);
		if (b < 0) {
			memcpy(vals, v, (size_t)nops * sizeof *v);
			return cand[c];
		}
		if (bad < 0)
			bad = b;
	}
	if (bad_op)
		*bad_op = bad;
	if (!n)
		return SEL_NO_MNEMONIC;
	if (!avail)
		return SEL_NOT_ON_ARCH;
	return !nops_seen ? SEL_NOPS : !kinds_seen ? SEL_KINDS : SEL_RANGE;
}

/* ---- selection errors ---- */

const char *
asm_decor_text(Decor d)
{
	static const char *const t[] = {"",   ":BL", ":BU", ":B",
	                                "+=", "++",  "@",   ">>"};
	return (unsigned)d < sizeof t / sizeof t[0] ? t[d] : "";
}

/* "add $mN, $mN, zimm16" */
static void
form_text(const InsnDesc *d, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", d->mnemonic);
	for (int i = 0; i < d->nops && n < len; i++) {
		const OperandSpec *s = &d->op[i];
		char t[32];
		switch (s->kind) {
		case OPK_M:
			snprintf(t, sizeof t, "$mN");
			break;
		case OPK_MP:
			snprintf(t, sizeof t, "$mN:N+1");
			break;
		case OPK_A:
			snprintf(t, sizeof t, "$aN");
			break;
		case OPK_AP:
			snprintf(t, sizeof t, "$aN:N+1");
			break;
		case OPK_AQ:
			snprintf(t, sizeof t, "$aN:N+3");
			break;
		case OPK_U:
			snprintf(t, sizeof t, "zimm%d", s->width);
			break;
		case OPK_S:
			snprintf(t, sizeof t, "simm%d", s->width);
			break;
		case OPK_Z:
			snprintf(t, sizeof t, "immz%d", s->width);
			break;
		case OPK_T:
			snprintf(t, sizeof t, "target");
			break;
		case OPK_C:
		case OPK_CU:
			snprintf(t, sizeof t, "$CSR");
			break;
		}
		n +=
		    (size_t)snprintf(buf + n, len - n, "%s%s%s", i ? ", " : " ",
		                     t, asm_decor_text(s->decor));
	}
}

static void
forms_text(const char *mn, Arch arch, char *buf, size_t len)
{
	int16_t cand[MAX_CAND];
	int n = candidates(mn, cand);
	size_t used = 0;
	buf[0] = 0;
	for (int c = 0; c < n && used < len; c++) {
		const InsnDesc *d = isa_row(cand[c]);
		if (!isa_available(d, arch))
			continue;
		char f[128];
		form_text(d, f, sizeof f);
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		                         used ? " | " : "", f);
	}
}

static int
edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b);
	if (la > 30 || lb > 30)
		return 99;
	int row[32];
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int prev = row[0];
		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int cur = row[j];
			int sub = prev + (a[i - 1] != b[j - 1]);
			int del = row[j] + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins)
			                   : (del < ins ? del : ins);
			prev = cur;
		}
	}
	return row[lb];
}

static const char *
nearest_mnemonic(const char *mn)
{
	const char *best = NULL;
	int bestd = 3;
	for (int r = 0; r < isa_rows(); r++) {
		const char *m = isa_row(r)->mnemonic;
		int dist = edit_distance(mn, m);
		if (dist < bestd) {
			bestd = dist;
			best = m;
		}
	}
	return best;
}

static void
range_error(As *as, const Item *it, const AsmOperand *ops, int bad)
{
	int16_t cand[MAX_CAND];
	int n = candidates(it->mnem, cand);
	char ranges[400];
	size_t used = 0;
	ranges[0] = 0;
	for (int c = 0; c < n && used < sizeof ranges; c++) {
		const InsnDesc *d = isa_row(cand[c]);
		if (!isa_available(d, as->chip->arch) ||
		    !kinds_ok(d, ops, it->nops))
			continue;
		char r[96];
		obj_operand_range(&d->op[bad], r, sizeof r);
		used += (size_t)snprintf(ranges + used, sizeof ranges - used,
		                         "%s%s (%s)", used ? " or " : "", r,
		                         d->variant);
	}
	const AsmOperand *o = &ops[bad];
	if (o->cls == AOP_NAME)
		as_error(as, &it->pos, it->op[bad].col,
		         "'$%s' is out of range for operand %d of '%s': "
		         "allowed %s",
		         o->name, bad + 1, it->mnem, ranges);
	else
		as_error(as, &it->pos, it->op[bad].col,
		         "immediate %lld (0x%llx) out of range for operand %d "
		         "of '%s': allowed %s",
		         (long long)o->value, (unsigned long long)o->value,
		         bad + 1, it->mnem, ranges);
}

void
as_select_error(As *as, const Item *it, const AsmOperand *ops, int code,
                int bad)
{
	char forms[400];
	const char *mn = it->mnem;
	switch (code) {
	case SEL_NO_MNEMONIC: {
		const char *near =
		    strchr(mn, '_') ? NULL : nearest_mnemonic(mn);
		if (near)
			as_error(as, &it->pos, it->mcol,
			         "unknown instruction '%s'; did you mean '%s'?",
			         mn, near);
		else
			as_error(as, &it->pos, it->mcol,
			         "unknown instruction '%s'", mn);
		return;
	}
	case SEL_NOT_ON_ARCH:
		as_error(as, &it->pos, it->mcol,
		         "'%s' is not available on %s (it needs ipu21, the "
		         "c600)",
		         mn, as->chip->name);
		return;
	case SEL_RANGE:
		range_error(as, it, ops, bad);
		return;
	}
	for (int i = 0; i < it->nops; i++) {
		const AsmOperand *o = &ops[i];
		if (o->cls == AOP_NAME &&
		    isa_csr_index(o->name, OPK_C, 1, 1) < 0 &&
		    isa_csr_index(o->name, OPK_CU, 1, 1) < 0 &&
		    cwei_index(o->name) < 0) {
			as_error(as, &it->pos, it->op[i].col,
			         "unknown register or control register '$%s'",
			         o->name);
			return;
		}
	}
	forms_text(mn, as->chip->arch, forms, sizeof forms);
	if (code == SEL_NOPS)
		as_error(as, &it->pos, it->mcol,
		         "wrong number of operands (%d) for '%s'; accepted "
		         "forms: %s",
		         it->nops, mn, forms);
	else
		as_error(as, &it->pos, it->mcol,
		         "invalid operands for '%s'; accepted forms: %s", mn,
		         forms);
}

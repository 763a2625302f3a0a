/*
 * text.c - the text form of a graph: printer and parser.
 *
 * One statement per line, '#' starts a comment (grammar in docs/graph.md):
 *
 *     input x f16 [729, 1152]
 *     weight w f8_f143*2^-3 [1152, 4304]
 *     h = matmul x w transpose_b=0
 *     output h
 *
 * The printer walks tensors in id order, writing a declaration for an
 * input or weight and the defining op for any other tensor, then one
 * `output` line per output; since the builder appends each op's output
 * as the next tensor, parsing the text gives the same ids, names, ops and
 * attributes back. Attributes follow the ops.def ATTR rows: positional ones
 * bare after the operands in row order, the others as name=value when not
 * zero.
 *
 * The parser splits each line into tokens, reads one statement and calls
 * the builder, which does every semantic check; its message gets the
 * file:line:col of the statement. After an error the parser goes on with
 * the next line (up to GRAPH_MAX_ERRORS errors); uses of a tensor whose
 * definition failed are skipped silently rather than reported again.
 */
#include "graph.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- printer ---- */

/* The shortest "%.Ng" that reads back as v exactly (at most 17 digits,
 * which always do): 1e-06, 0.125. */
static void
format_real(double v, char *buf, size_t len)
{
	for (int digits = 1; digits <= 17; digits++) {
		snprintf(buf, len, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* A named attribute at its default (zero, and +0 for a float) is left
 * out. */
static int
attr_is_zero(OpAttrs *a, AttrId id)
{
	void *p = attr_ptr(a, id);
	switch (attr_desc(id)->kind) {
	case AK_FLAG:
	case AK_INT:
		return !*(int *)p;
	case AK_FLOAT:
		return *(double *)p == 0 && !signbit(*(double *)p);
	default:
		return 0;
	}
}

static void
print_attr(FILE *f, OpAttrs *a, AttrId id)
{
	const AttrDesc *ad = attr_desc(id);
	void *p = attr_ptr(a, id);
	char buf[160];
	if (ad->kind == AK_FLAG || ad->kind == AK_INT) {
		snprintf(buf, sizeof buf, "%d", *(int *)p);
	} else if (ad->kind == AK_ELEM) {
		elem_format(*(ElemType *)p, buf, sizeof buf);
	} else if (ad->kind == AK_FLOAT) {
		format_real(*(double *)p, buf, sizeof buf);
	} else {
		shape_format(p, buf, sizeof buf);
	}
	if (ad->positional)
		fprintf(f, " %s", buf);
	else
		fprintf(f, " %s=%s", ad->name, buf);
}

static void
print_op(FILE *f, const Graph *g, const Op *op)
{
	const OpDesc *od = op_desc(op->kind);
	const Tensor *out = graph_tensor(g, op->out);
	fprintf(f, "%s = %s", out ? out->name : "?", od ? od->name : "?");
	for (int i = 0; od && i < od->nin; i++) {
		const Tensor *t = graph_tensor(g, op->in[i]);
		fprintf(f, " %s", t ? t->name : "?");
	}
	OpAttrs a = op->attr;
	for (int pass = 1; od && pass >= 0; pass--)
		for (int i = 0; i < ATTR_COUNT; i++) {
			const AttrDesc *ad = attr_desc((AttrId)i);
			if (!(od->attrs >> i & 1) || ad->positional != pass)
				continue;
			if (!pass && attr_is_zero(&a, (AttrId)i))
				continue;
			print_attr(f, &a, (AttrId)i);
		}
	fputc('\n', f);
}

int
graph_print(const Graph *g, FILE *f)
{
	char e[32], s[160];
	for (int id = 0; id < g->ntensors; id++) {
		const Tensor *t = &g->tensors[id];
		if (t->role == ROLE_INPUT || t->role == ROLE_WEIGHT) {
			elem_format(t->elem, e, sizeof e);
			shape_format(&t->shape, s, sizeof s);
			fprintf(f, "%s %s %s %s\n",
			        t->role == ROLE_INPUT ? "input" : "weight",
			        t->name, e, s);
		} else if (t->producer >= 0 && t->producer < g->nops) {
			print_op(f, g, &g->ops[t->producer]);
		}
	}
	for (int id = 0; id < g->ntensors; id++)
		if (g->tensors[id].role == ROLE_OUTPUT)
			fprintf(f, "output %s\n", g->tensors[id].name);
	const GraphRepeat *r = &g->repeat;
	if (r->count) {
		fprintf(f, "repeat %d %s %s", (int)r->count,
		        g->tensors[g->ops[r->first].out].name,
		        g->tensors[g->ops[r->first + r->len - 1].out].name);
		if (r->groups > 1)
			fprintf(f, " groups %d", (int)r->groups);
		fputc('\n', f);
	}
	return ferror(f) ? IPU_EIO : 0;
}

char *
graph_print_str(const Graph *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		die("open_memstream failed");
	graph_print(g, f);
	fclose(f);
	return buf;
}

/* ---- tokens ---- */

enum { MAX_TOKENS = 64, MAX_LINE = 1 << 20 };

typedef enum { TK_NAME, TK_INT, TK_REAL, TK_PUNCT, TK_END } TokKind;

typedef struct {
	TokKind kind;
	const char *s; /* in the source */
	int len;
	int col;   /* 1-based */
	int64_t v; /* TK_INT */
	double r;  /* TK_REAL */
} Tok;

typedef struct {
	const char *file;
	Graph *g;
	Diag *errs;       /* room for GRAPH_MAX_ERRORS, or NULL */
	int nerrs;        /* errors found (stored: at most GRAPH_MAX_ERRORS) */
	int line;         /* 1-based */
	const char *text; /* the current line */
	int len;
	Tok tok[MAX_TOKENS + 1]; /* ends with TK_END */
	int pos;
	char **failed; /* names whose definition failed */
	int nfailed;
	/* the `repeat` statement, applied once every op is known */
	int rep_line, rep_len;
	char rep_text[160];
	int64_t rep_count, rep_groups;
	char rep_first[GRAPH_MAX_NAME + 1], rep_last[GRAPH_MAX_NAME + 1];
} Parser;

static int perr(Parser *p, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
perr(Parser *p, int col, const char *fmt, ...)
{
	if (p->errs && p->nerrs < GRAPH_MAX_ERRORS) {
		Diag *d = &p->errs[p->nerrs];
		va_list ap;
		diag_clear(d);
		snprintf(d->file, sizeof d->file, "%s", p->file);
		d->line = p->line;
		d->col = col;
		va_start(ap, fmt);
		vsnprintf(d->msg, sizeof d->msg, fmt, ap);
		va_end(ap);
		int n = p->len < (int)sizeof d->source_line - 1
		            ? p->len
		            : (int)sizeof d->source_line - 1;
		memcpy(d->source_line, p->text, (size_t)n);
		d->source_line[n] = 0;
	}
	p->nerrs++;
	return IPU_EINVAL;
}

static int
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* An integer at s[*i], optionally negative; saturates far out of range so
 * the builder rejects it. */
static int64_t
scan_int(const char *s, int len, int *i)
{
	int neg = s[*i] == '-';
	int64_t v = 0;
	for (*i += neg; *i < len && is_digit(s[*i]); ++*i)
		v = v > INT64_MAX / 16 ? INT64_MAX / 16
		                       : v * 10 + (s[*i] - '0');
	return neg ? -v : v;
}

enum { MAX_REAL = 40 };

/* The end of a real number at s[i] ("-1.5", "2e-6": a fraction or an
 * exponent after the digits), or -1 if it is an integer. */
static int
real_end(const char *s, int len, int i)
{
	int real = 0;
	i += s[i] == '-';
	while (i < len && is_digit(s[i]))
		i++;
	if (i < len && s[i] == '.') {
		real = 1;
		for (i++; i < len && is_digit(s[i]);)
			i++;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		int j = i + 1;
		j += j < len && (s[j] == '+' || s[j] == '-');
		if (j < len && is_digit(s[j])) {
			real = 1;
			for (i = j; i < len && is_digit(s[i]);)
				i++;
		}
	}
	return real ? i : -1;
}

/* strtod of n characters (not NUL-terminated in the line). */
static int
scan_real(const char *s, int n, double *v)
{
	char buf[MAX_REAL + 1];
	if (n > MAX_REAL)
		return IPU_EINVAL;
	memcpy(buf, s, (size_t)n);
	buf[n] = 0;
	*v = strtod(buf, NULL);
	return 0;
}

static int
tokenize(Parser *p)
{
	const char *s = p->text;
	int n = 0, i = 0;
	while (i < p->len && s[i] != '#') {
		char c = s[i];
		if (c == ' ' || c == '\t' || c == '\r') {
			i++;
			continue;
		}
		if (n == MAX_TOKENS)
			return perr(p, i + 1, "more than %d tokens",
			            MAX_TOKENS);
		Tok *t = &p->tok[n++];
		*t = (Tok){.s = s + i, .col = i + 1};
		if (is_alpha(c)) {
			t->kind = TK_NAME;
			while (i < p->len && (is_alpha(s[i]) ||
			                      is_digit(s[i]) || s[i] == '.'))
				i++;
		} else if (is_digit(c) ||
		           (c == '-' && i + 1 < p->len && is_digit(s[i + 1]))) {
			int end = real_end(s, p->len, i);
			if (end < 0) {
				t->kind = TK_INT;
				t->v = scan_int(s, p->len, &i);
			} else if (scan_real(s + i, end - i, &t->r)) {
				return perr(p, i + 1,
				            "number longer than %d "
				            "characters",
				            MAX_REAL);
			} else {
				t->kind = TK_REAL;
				i = end;
			}
		} else if (strchr("[],=*^", c) && c) {
			t->kind = TK_PUNCT;
			i++;
		} else {
			return perr(p, i + 1, "unexpected character 0x%02x",
			            (unsigned)(uint8_t)c);
		}
		t->len = (int)(s + i - t->s);
	}
	p->tok[n] = (Tok){.kind = TK_END, .s = s + i, .col = i + 1};
	p->pos = 0;
	return 0;
}

/* ---- statements ---- */

static Tok *
peek(Parser *p)
{
	return &p->tok[p->pos];
}

static int
is_punct(const Tok *t, char c)
{
	return t->kind == TK_PUNCT && t->s[0] == c;
}

static int
is_word(const Tok *t, const char *w)
{
	return t->kind == TK_NAME && (size_t)t->len == strlen(w) &&
	       !memcmp(t->s, w, (size_t)t->len);
}

/* "'x'" or "end of line" for messages. */
static const char *
tok_desc(const Tok *t, char *buf, size_t len)
{
	if (t->kind == TK_END)
		return "end of line";
	snprintf(buf, len, "'%.*s'", t->len > 40 ? 40 : t->len, t->s);
	return buf;
}

static int
expect_punct(Parser *p, char c)
{
	char b[64];
	Tok *t = peek(p);
	if (!is_punct(t, c))
		return perr(p, t->col, "expected '%c', found %s", c,
		            tok_desc(t, b, sizeof b));
	p->pos++;
	return 0;
}

static int
expect_int(Parser *p, int64_t *v)
{
	char b[64];
	Tok *t = peek(p);
	if (t->kind != TK_INT)
		return perr(p, t->col, "expected an integer, found %s",
		            tok_desc(t, b, sizeof b));
	*v = t->v;
	p->pos++;
	return 0;
}

/* A name token copied into buf (GRAPH_MAX_NAME + 1 bytes). */
static int
expect_name(Parser *p, char *buf, const char *what)
{
	char b[64];
	Tok *t = peek(p);
	if (t->kind != TK_NAME)
		return perr(p, t->col, "expected %s, found %s", what,
		            tok_desc(t, b, sizeof b));
	if (t->len > GRAPH_MAX_NAME)
		return perr(p, t->col, "name longer than %d bytes",
		            GRAPH_MAX_NAME);
	memcpy(buf, t->s, (size_t)t->len);
	buf[t->len] = 0;
	p->pos++;
	return 0;
}

/* elem = dtype [ "*" "2" "^" int ] */
static int
parse_elem(Parser *p, ElemType *e)
{
	char b[64];
	Tok *t = peek(p);
	int dt =
	    t->kind == TK_NAME ? dtype_from_name(t->s, (size_t)t->len) : -1;
	if (dt < 0)
		return perr(p, t->col,
		            "expected a dtype (f32, f16, f8_f143, "
		            "f8_f152), found %s",
		            tok_desc(t, b, sizeof b));
	p->pos++;
	*e = (ElemType){(DType)dt, 0};
	if (!is_punct(peek(p), '*'))
		return 0;
	if (!dtype_is_f8(e->dtype))
		return perr(p, peek(p)->col, "%s takes no scale",
		            dtype_name(e->dtype));
	p->pos++;
	int64_t base = 0, sc = 0; /* -O3 cannot see expect_int set them */
	int col = peek(p)->col;
	if (expect_int(p, &base) || expect_punct(p, '^') || expect_int(p, &sc))
		return IPU_EINVAL;
	if (base != 2 || sc < GRAPH_F8_SCALE_MIN || sc > GRAPH_F8_SCALE_MAX)
		return perr(p, col, "the scale must be 2^N with N in %d..%d",
		            GRAPH_F8_SCALE_MIN, GRAPH_F8_SCALE_MAX);
	e->scale = (int)sc;
	return 0;
}

/* dims = "[" int { "," int } "]" */
static int
parse_dims(Parser *p, Shape *s)
{
	*s = (Shape){0};
	if (expect_punct(p, '['))
		return IPU_EINVAL;
	while (!is_punct(peek(p), ']')) {
		if (s->rank && expect_punct(p, ','))
			return IPU_EINVAL;
		if (s->rank == GRAPH_MAX_RANK)
			return perr(p, peek(p)->col, "more than %d axes",
			            GRAPH_MAX_RANK);
		if (expect_int(p, &s->dim[s->rank++]))
			return IPU_EINVAL;
	}
	p->pos++;
	return 0;
}

static int
parse_attr_value(Parser *p, OpAttrs *a, AttrId id)
{
	void *v = attr_ptr(a, id);
	switch (attr_desc(id)->kind) {
	case AK_FLAG: {
		int64_t x = 0;
		int col = peek(p)->col;
		if (expect_int(p, &x))
			return IPU_EINVAL;
		if (x != 0 && x != 1)
			return perr(p, col, "%s takes 0 or 1",
			            attr_desc(id)->name);
		*(int *)v = (int)x;
		return 0;
	}
	case AK_INT: {
		int64_t x = 0;
		int col = peek(p)->col;
		if (expect_int(p, &x))
			return IPU_EINVAL;
		if (x < 0 || x > GRAPH_MAX_INT_ATTR)
			return perr(p, col, "%s takes 0 .. 2^24",
			            attr_desc(id)->name);
		*(int *)v = (int)x;
		return 0;
	}
	case AK_ELEM:
		return parse_elem(p, v);
	case AK_DIMS:
		return parse_dims(p, v);
	case AK_FLOAT: {
		char b[64];
		Tok *t = peek(p);
		if (t->kind != TK_INT && t->kind != TK_REAL)
			return perr(p, t->col, "expected a number, found %s",
			            tok_desc(t, b, sizeof b));
		/* "-0" is the printer's -0.0 */
		*(double *)v = t->kind == TK_REAL            ? t->r
		               : t->v == 0 && t->s[0] == '-' ? -0.0
		                                             : (double)t->v;
		p->pos++;
		return 0;
	}
	}
	return 0;
}

/* A named attribute "name=value" among those in mask; *seen avoids
 * repeats. */
static int
parse_named_attr(Parser *p, const OpDesc *od, OpAttrs *a, unsigned *seen)
{
	char b[64];
	Tok *t = peek(p);
	for (int i = 0; t->kind == TK_NAME && i < ATTR_COUNT; i++) {
		const AttrDesc *ad = attr_desc((AttrId)i);
		if (!is_word(t, ad->name) || ad->positional ||
		    !(od->attrs >> i & 1))
			continue;
		if (*seen >> i & 1)
			return perr(p, t->col, "%s given twice", ad->name);
		*seen |= 1u << i;
		p->pos++;
		if (expect_punct(p, '='))
			return IPU_EINVAL;
		return parse_attr_value(p, a, (AttrId)i);
	}
	return perr(p, t->col, "%s takes no attribute %s", od->name,
	            tok_desc(t, b, sizeof b));
}

static int
parse_attrs(Parser *p, const OpDesc *od, OpAttrs *a)
{
	for (int i = 0; i < ATTR_COUNT; i++)
		if ((od->attrs >> i & 1) && attr_desc((AttrId)i)->positional &&
		    parse_attr_value(p, a, (AttrId)i))
			return IPU_EINVAL;
	unsigned seen = 0;
	while (peek(p)->kind != TK_END)
		if (parse_named_attr(p, od, a, &seen))
			return IPU_EINVAL;
	return 0;
}

static int
was_failed(const Parser *p, const char *name)
{
	for (int i = 0; i < p->nfailed; i++)
		if (!strcmp(p->failed[i], name))
			return 1;
	return 0;
}

static void
note_failed(Parser *p, const char *name)
{
	p->failed =
	    xrealloc(p->failed, (size_t)(p->nfailed + 1) * sizeof *p->failed);
	p->failed[p->nfailed++] = xstrdup(name);
}

/* A tensor used by name. A name whose definition failed gives -1 with no
 * new error (the first one said it); *quiet is then set. */
static int32_t
use_tensor(Parser *p, int *quiet)
{
	char name[GRAPH_MAX_NAME + 1];
	int col = peek(p)->col;
	if (expect_name(p, name, "a tensor name"))
		return -1;
	int32_t id = graph_find(p->g, name);
	if (id >= 0)
		return id;
	if (was_failed(p, name))
		*quiet = 1;
	else
		perr(p, col, "unknown tensor '%s'", name);
	return -1;
}

static int
end_of_statement(Parser *p)
{
	char b[64];
	Tok *t = peek(p);
	if (t->kind != TK_END)
		return perr(p, t->col, "unexpected %s after the statement",
		            tok_desc(t, b, sizeof b));
	return 0;
}

/* A builder's error at the statement. */
static int
builder_error(Parser *p, int col, const Diag *d)
{
	return perr(p, col, "%s", d->msg);
}

/* ("input" | "weight") name elem dims */
static int
stmt_decl(Parser *p, TensorRole role)
{
	char name[GRAPH_MAX_NAME + 1];
	ElemType e;
	Shape s;
	Diag d;
	int col = p->tok[1].col;
	p->pos = 1;
	if (expect_name(p, name, "a tensor name") || parse_elem(p, &e) ||
	    parse_dims(p, &s) || end_of_statement(p))
		return IPU_EINVAL;
	int32_t id = role == ROLE_INPUT ? graph_input(p->g, name, e, &s, &d)
	                                : graph_weight(p->g, name, e, &s, &d);
	return id < 0 ? builder_error(p, col, &d) : 0;
}

/* "output" name */
static int
stmt_output(Parser *p)
{
	int quiet = 0;
	Diag d;
	p->pos = 1;
	int col = peek(p)->col;
	int32_t id = use_tensor(p, &quiet);
	if (id < 0)
		return quiet ? 0 : IPU_EINVAL;
	if (end_of_statement(p))
		return IPU_EINVAL;
	/* the builder takes a second mark as a no-op; in a file it is a
	 * slip (a line pasted twice, a name meant to be another) */
	if (graph_tensor(p->g, id)->role == ROLE_OUTPUT)
		return perr(p, col, "'%s' is already an output",
		            graph_tensor(p->g, id)->name);
	return graph_mark_output(p->g, id, &d) ? builder_error(p, col, &d) : 0;
}

/* "repeat" count first last: kept for repeat_done */
static int
stmt_repeat(Parser *p)
{
	p->pos = 1;
	if (p->rep_line)
		return perr(p, p->tok[0].col,
		            "a second repeat (the first is on line %d)",
		            p->rep_line);
	if (expect_int(p, &p->rep_count) ||
	    expect_name(p, p->rep_first, "the first op's tensor") ||
	    expect_name(p, p->rep_last, "the last op's tensor"))
		return IPU_EINVAL;
	p->rep_groups = 1;
	if (is_word(peek(p), "groups")) {
		p->pos++;
		if (expect_int(p, &p->rep_groups))
			return IPU_EINVAL;
	}
	if (end_of_statement(p))
		return IPU_EINVAL;
	p->rep_line = p->line;
	p->rep_len =
	    p->len < (int)sizeof p->rep_text ? p->len : (int)sizeof p->rep_text;
	memcpy(p->rep_text, p->text, (size_t)p->rep_len);
	return IPU_OK;
}

/* The body runs from the op making rep_first to the one making rep_last. */
static void
repeat_done(Parser *p)
{
	if (!p->rep_line)
		return;
	p->line = p->rep_line;
	p->text = p->rep_text;
	p->len = p->rep_len;
	const char *name[2] = {p->rep_first, p->rep_last};
	int32_t op[2];
	for (int i = 0; i < 2; i++) {
		int32_t id = graph_find(p->g, name[i]);
		op[i] = id >= 0 ? p->g->tensors[id].producer : -1;
		if (op[i] < 0) {
			perr(p, 0, "repeat: '%s' is not made by an op",
			     name[i]);
			return;
		}
	}
	if (p->rep_count < 2 || p->rep_count > INT32_MAX || op[1] < op[0]) {
		perr(p, 0,
		     "repeat: expected at least 2 iterations of the ops from "
		     "'%s' to '%s'",
		     name[0], name[1]);
		return;
	}
	if (p->rep_groups < 1 || p->rep_groups > p->rep_count) {
		perr(p, 0, "repeat: expected 1 to %d groups, found %lld",
		     (int)p->rep_count, (long long)p->rep_groups);
		return;
	}
	Diag d;
	if (graph_set_repeat(p->g, op[0], op[1] - op[0] + 1,
	                     (int32_t)p->rep_count, (int32_t)p->rep_groups, &d))
		builder_error(p, 0, &d);
}

/* name "=" op operands attrs */
static int
stmt_op(Parser *p, char *name)
{
	char b[64];
	int quiet = 0;
	Diag d;
	if (graph_find(p->g, name) >= 0)
		return perr(p, p->tok[0].col, "tensor '%s' is already defined",
		            name);
	p->pos = 2;
	Tok *t = peek(p);
	OpKind k =
	    t->kind == TK_NAME ? op_from_name(t->s, (size_t)t->len) : OP_COUNT;
	if (k == OP_COUNT)
		return perr(p, t->col, "expected an op name, found %s",
		            tok_desc(t, b, sizeof b));
	p->pos++;
	const OpDesc *od = op_desc(k);
	int32_t in[GRAPH_MAX_INPUTS];
	OpAttrs a = {0};
	for (int i = 0; i < od->nin; i++)
		if ((in[i] = use_tensor(p, &quiet)) < 0)
			return IPU_EINVAL;
	if (parse_attrs(p, od, &a))
		return IPU_EINVAL;
	if (graph_op(p->g, k, in, &a, name, &d) < 0)
		return builder_error(p, t->col, &d);
	return 0;
}

static void
statement(Parser *p)
{
	char name[GRAPH_MAX_NAME + 1];
	Tok *t0 = &p->tok[0];
	if (t0->kind == TK_END)
		return;
	if (is_punct(&p->tok[1], '=')) {
		if (expect_name(p, name, "a tensor name"))
			return;
		if (stmt_op(p, name))
			note_failed(p, name);
	} else if (is_word(t0, "input")) {
		stmt_decl(p, ROLE_INPUT);
	} else if (is_word(t0, "weight")) {
		stmt_decl(p, ROLE_WEIGHT);
	} else if (is_word(t0, "output")) {
		stmt_output(p);
	} else if (is_word(t0, "repeat")) {
		stmt_repeat(p);
	} else {
		char b[64];
		perr(p, t0->col,
		     "expected input, weight, output, repeat or 'name = op "
		     "...', found %s",
		     tok_desc(t0, b, sizeof b));
	}
}

static void
parser_done(Parser *p)
{
	for (int i = 0; i < p->nfailed; i++)
		free(p->failed[i]);
	free(p->failed);
}

static int
has_output(const Graph *g)
{
	for (int i = 0; i < g->ntensors; i++)
		if (g->tensors[i].role == ROLE_OUTPUT)
			return 1;
	return 0;
}

int
graph_parse(const char *text, size_t len, const char *name, Graph **out,
            Diag *errs, int *nerrs)
{
	Parser p = {.file = name ? name : "", .g = graph_new(), .errs = errs};
	size_t at = 0;
	while (at < len && p.nerrs < GRAPH_MAX_ERRORS) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len;
		p.line++;
		p.text = text + at;
		p.len = end - at > MAX_LINE ? 0 : (int)(end - at);
		if (end - at > MAX_LINE)
			perr(&p, 1, "line longer than %d bytes", MAX_LINE);
		else if (!tokenize(&p))
			statement(&p);
		at = end + 1;
	}
	parser_done(&p);
	if (!p.nerrs)
		repeat_done(&p);
	if (!p.nerrs && !has_output(p.g)) {
		p.line = 0;
		p.len = 0;
		perr(&p, 0, "no output: mark a result with 'output NAME'");
	}
	if (!p.nerrs) {
		Diag d;
		if (graph_verify(p.g, &d))
			die("parsed graph fails verify: %s", d.msg);
	}
	if (nerrs)
		*nerrs =
		    p.nerrs < GRAPH_MAX_ERRORS ? p.nerrs : GRAPH_MAX_ERRORS;
	if (p.nerrs) {
		graph_free(p.g);
		p.g = NULL;
	}
	*out = p.g;
	return p.nerrs ? IPU_EINVAL : 0;
}

/*
 * lex.c - the assembler's lexer: comment stripping over a whole file and
 * tokenizing one line at a time.
 *
 * Comments are blanked to spaces before tokenizing, so columns and line
 * numbers of the remaining text are those of the source. A line becomes a
 * token list ending in TK_EOL; tokens point into the line. Registers keep
 * their suffixes separate ("$a0:1:BU" is REG ':' NUM ':' IDENT) and the
 * parser puts them together.
 */
#include "asmpriv.h"

#include "../util/fp.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
lex_strip_comments(const char *text, size_t len, int *unterminated_line)
{
	char *out = xmalloc(len + 1);
	memcpy(out, text, len);
	out[len] = 0;
	int line = 1, block_line = 0;
	size_t i = 0;
	*unterminated_line = 0;
	while (i < len) {
		char c = out[i];
		if (block_line) {
			if (c == '*' && i + 1 < len && out[i + 1] == '/') {
				out[i] = out[i + 1] = ' ';
				i += 2;
				block_line = 0;
				continue;
			}
			if (c == '\n')
				line++;
			else
				out[i] = ' ';
			i++;
			continue;
		}
		if (c == '"' || c == '\'') { /* skip literals: '#' inside */
			size_t j = i + 1;
			while (j < len && out[j] != c && out[j] != '\n') {
				if (out[j] == '\\' && j + 1 < len &&
				    out[j + 1] != '\n')
					j++;
				j++;
			}
			i = j < len && out[j] == c ? j + 1 : j;
			continue;
		}
		if (c == '#' ||
		    (c == '/' && i + 1 < len && out[i + 1] == '/')) {
			while (i < len && out[i] != '\n')
				out[i++] = ' ';
			continue;
		}
		if (c == '/' && i + 1 < len && out[i + 1] == '*') {
			out[i] = out[i + 1] = ' ';
			i += 2;
			block_line = line;
			continue;
		}
		if (c == '\n')
			line++;
		i++;
	}
	*unterminated_line = block_line;
	return out;
}

static int
ident_start(int c)
{
	return isalpha(c) || c == '_' || c == '.';
}

static int
ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '.';
}

static Token *
push(TokList *l, TokKind k, const char *line, const char *p, int len)
{
	GROW(l->v, l->n, l->cap);
	Token *t = &l->v[l->n++];
	memset(t, 0, sizeof *t);
	t->kind = k;
	t->s = p;
	t->len = len;
	t->col = (int)(p - line) + 1;
	return t;
}

/* Digits in `base`; returns characters consumed, -1 on overflow. */
static int
digits(const char *p, int base, uint64_t *v)
{
	int n = 0;
	uint64_t x = 0;
	for (;; n++) {
		int c = tolower((unsigned char)p[n]), d;
		if (isdigit(c))
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c == '_' && n > 0)
			continue;
		else
			break;
		if (d >= base)
			break;
		if (x > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -1;
		x = x * (uint64_t)base + (uint64_t)d;
	}
	*v = x;
	return n;
}

/* A number, a local label reference (1f, 1b) or a bad literal. */
static int
lex_number(const char *line, const char *p, TokList *out, int *errcol,
           char *msg, size_t msglen)
{
	uint64_t v = 0;
	int n, base = 10, pre = 0;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit(p[2]))
		base = 16, pre = 2;
	else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B') &&
	         (p[2] == '0' || p[2] == '1'))
		base = 2, pre = 2;
	n = digits(p + pre, base, &v);
	if (n < 0) {
		*errcol = (int)(p - line) + 1;
		snprintf(msg, msglen, "number too large (64 bits at most)");
		return -1;
	}
	n += pre;
	if (base == 10 && (p[n] == '.' || p[n] == 'e' || p[n] == 'E')) {
		/* A float (for .float); its value is read from the text. */
		int m = n;
		if (p[m] == '.')
			for (m++; isdigit((unsigned char)p[m]); m++)
				;
		if ((p[m] == 'e' || p[m] == 'E') &&
		    (isdigit((unsigned char)p[m + 1]) ||
		     ((p[m + 1] == '-' || p[m + 1] == '+') &&
		      isdigit((unsigned char)p[m + 2]))))
			for (m += 2; isdigit((unsigned char)p[m]); m++)
				;
		if (m > n + 1 && !ident_char((unsigned char)p[m])) {
			push(out, TK_FLOAT, line, p, m);
			return m;
		}
		/* A binary16 literal (1.0h), as Graphcore's assembler takes
		 * it for setzi $a and friends: its bit pattern. */
		if (m > n + 1 && p[m] == 'h' &&
		    !ident_char((unsigned char)p[m + 1])) {
			char buf[64];
			unsigned flags = 0;
			snprintf(buf, sizeof buf, "%.*s", m < 63 ? m : 63, p);
			Token *t = push(out, TK_NUM, line, p, m + 1);
			t->num = fp_f64_to_f16(strtod(buf, NULL), FP_RNE, 0,
			                       FP_OV_IEEE, &flags);
			t->punct = 'h';
			return m + 1;
		}
	}
	if (base == 10 && (p[n] == 'f' || p[n] == 'b') &&
	    !ident_char((unsigned char)p[n + 1])) {
		Token *t = push(out, TK_LOCAL, line, p, n + 1);
		t->num = (int64_t)v;
		t->punct = p[n];
		return n + 1;
	}
	if (ident_char((unsigned char)p[n])) {
		*errcol = (int)(p - line) + 1;
		snprintf(msg, msglen, "malformed number '%.*s'",
		         (int)strcspn(p, " \t,;{}()"), p);
		return -1;
	}
	Token *t = push(out, TK_NUM, line, p, n);
	t->num = (int64_t)v;
	return n;
}

/* One escape after a backslash; returns characters consumed or -1. */
static int
escape(const char *p, int *c)
{
	switch (p[0]) {
	case 'n':
		*c = '\n';
		return 1;
	case 't':
		*c = '\t';
		return 1;
	case 'r':
		*c = '\r';
		return 1;
	case '0':
		*c = 0;
		return 1;
	case '\\':
	case '"':
	case '\'':
		*c = p[0];
		return 1;
	case 'x':
		if (isxdigit((unsigned char)p[1])) {
			int v = 0, n = 1;
			while (n < 3 && isxdigit((unsigned char)p[n])) {
				int d = tolower((unsigned char)p[n]);
				v = v * 16 +
				    (isdigit(d) ? d - '0' : d - 'a' + 10);
				n++;
			}
			*c = v;
			return n;
		}
		return -1;
	default:
		return -1;
	}
}

static int
lex_quoted(const char *line, const char *p, TokList *out, int *errcol,
           char *msg, size_t msglen)
{
	char q = p[0];
	int n = 1;
	while (p[n] && p[n] != q) {
		if (p[n] == '\\' && p[n + 1])
			n++;
		n++;
	}
	if (p[n] != q) {
		*errcol = (int)(p - line) + 1;
		snprintf(msg, msglen, "missing closing %c", q);
		return -1;
	}
	n++;
	if (q == '"') {
		push(out, TK_STR, line, p, n);
		return n;
	}
	/* A character literal is a number. */
	int c = (unsigned char)p[1], used = 1;
	if (p[1] == '\\')
		used = 1 + escape(p + 2, &c);
	if (used < 1 || n != used + 2) {
		*errcol = (int)(p - line) + 1;
		snprintf(msg, msglen, "malformed character literal");
		return -1;
	}
	Token *t = push(out, TK_NUM, line, p, n);
	t->num = c;
	return n;
}

int
lex_line(const char *line, TokList *out, int *errcol, char *msg, size_t msglen)
{
	const char *p = line;
	out->n = 0;
	while (*p) {
		unsigned char c = (unsigned char)*p;
		int n;
		if (isspace(c)) {
			p++;
			continue;
		}
		if (isdigit(c)) {
			n = lex_number(line, p, out, errcol, msg, msglen);
		} else if (ident_start(c)) {
			for (n = 1; ident_char((unsigned char)p[n]); n++)
				;
			Token *t = push(out, TK_IDENT, line, p, n);
			if (n == 4 && !strncmp(p, "infh", 4)) {
				t->kind = TK_NUM; /* binary16 infinity */
				t->num = 0x7c00;
				t->punct = 'h';
			}
		} else if (c == '$') {
			for (n = 1; isalnum((unsigned char)p[n]) || p[n] == '_';
			     n++)
				;
			if (n == 1) {
				*errcol = (int)(p - line) + 1;
				snprintf(msg, msglen,
				         "expected a register name after '$'");
				return -1;
			}
			Token *t = push(out, TK_REG, line, p + 1, n - 1);
			t->col--;
		} else if (c == '"' || c == '\'') {
			n = lex_quoted(line, p, out, errcol, msg, msglen);
		} else {
			static const struct {
				const char *s;
				int p;
			} two[] = {
			    {"<<", P_SHL},      {">>", P_SHR}, {"+=", P_PLUSEQ},
			    {"++", P_PLUSPLUS}, {"==", P_EQ},  {"!=", P_NE},
			    {"<>", P_NE},       {"<=", P_LE},  {">=", P_GE},
			    {"&&", P_LAND},     {"||", P_LOR}};
			n = 0;
			for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
				if (p[0] == two[i].s[0] &&
				    p[1] == two[i].s[1]) {
					push(out, TK_PUNCT, line, p, 2)->punct =
					    two[i].p;
					n = 2;
					break;
				}
			if (!n) {
				if (!strchr(",:{}()+-*/%&|^~;=@!<>", c)) {
					*errcol = (int)(p - line) + 1;
					if (isprint(c))
						snprintf(msg, msglen,
						         "unexpected character "
						         "'%c'",
						         c);
					else
						snprintf(
						    msg, msglen,
						    "unexpected byte 0x%02x",
						    c);
					return -1;
				}
				push(out, TK_PUNCT, line, p, 1)->punct = c;
				n = 1;
			}
		}
		if (n < 0)
			return -1;
		p += n;
	}
	push(out, TK_EOL, line, p, 0);
	return 0;
}

int
lex_string(const Token *t, char **out, size_t *outlen)
{
	char *buf = xmalloc((size_t)t->len + 1);
	size_t n = 0;
	for (int i = 1; i < t->len - 1; i++) {
		int c = (unsigned char)t->s[i];
		if (c == '\\') {
			int used = escape(t->s + i + 1, &c);
			if (used < 0) {
				free(buf);
				return -1;
			}
			i += used;
		}
		buf[n++] = (char)c;
	}
	buf[n] = 0;
	*out = buf;
	*outlen = n;
	return 0;
}

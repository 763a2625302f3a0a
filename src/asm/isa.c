/*
 * isa.c - expands target/insns.def into InsnDesc rows and implements decode
 * and encode over them.
 *
 * The operand strings of insns.def are compiled once (isa_init, thread-safe)
 * into OperandSpec. Decoding first narrows by bits 30..24 (a row lands in
 * every bucket its mask allows: the exchange rows fix only some of them) and
 * then tests each candidate's match/mask. F_WIDE rows are two words: match
 * and mask cover the first, fields 63..32 of insns.def the second.
 */
#include "isa.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"

typedef struct {
	const char *variant, *mnemonic;
	uint32_t match, mask;
	Lane lane;
	InsnContext ctx;
	uint32_t flags;
	const char *ops;
} RawRow;

#define MAIN LANE_MAIN
#define AUX LANE_AUX
static const RawRow raw[] = {
#define I(var, mn, match, mask, lane, ctx, flags, ops)                         \
	{#var, #mn, match, mask, lane, ctx, flags, ops},
#include "../target/insns.def"
#undef I
};
#undef MAIN
#undef AUX

_Static_assert(ISA_ROWS == 363 + 5,
               "insns.def must hold the 363 rows of isa.md Appendix A and "
               "the 5 of ipu-stack.md 3.2");

static InsnDesc rows[ISA_ROWS];
static int16_t by_mnemonic[ISA_ROWS]; /* row numbers sorted by mnemonic */
static int16_t bucket_start[129];     /* candidates by bits 30..24 */
static int16_t *bucket_rows;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const struct {
	const char *name;
	OperandKind kind;
} kinds[] = {
    {"mp", OPK_MP}, {"m", OPK_M},   {"aq", OPK_AQ}, {"ap", OPK_AP},
    {"a", OPK_A},   {"u", OPK_U},   {"s", OPK_S},   {"z", OPK_Z},
    {"t", OPK_T},   {"cu", OPK_CU}, {"c", OPK_C},
};

static const struct {
	const char *text;
	Decor decor;
} decors[] = {
    {":BL", DEC_BL}, {":BU", DEC_BU}, {":B", DEC_B},   {"+=", DEC_PINC},
    {"++", DEC_PP},  {"@", DEC_AT},   {">>", DEC_SHR},
};

/* Parse one "KIND[DECOR]/hi:lo[=vhi:vlo],..." token; bits 63..32 (wide rows
 * only) are the second word. */
static const char *
parse_spec(const char *p, OperandSpec *s, const char *variant, int wide)
{
	memset(s, 0, sizeof *s);
	size_t i;
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		size_t n = strlen(kinds[i].name);
		if (strncmp(p, kinds[i].name, n) == 0 &&
		    (p[n] == '/' || p[n] == ':' || p[n] == '+' || p[n] == '@' ||
		     p[n] == '>')) {
			s->kind = kinds[i].kind;
			p += n;
			break;
		}
	}
	if (i == sizeof kinds / sizeof kinds[0])
		die("insns.def %s: bad operand kind at '%s'", variant, p);
	for (i = 0; i < sizeof decors / sizeof decors[0]; i++) {
		size_t n = strlen(decors[i].text);
		if (strncmp(p, decors[i].text, n) == 0 && p[n] == '/') {
			s->decor = decors[i].decor;
			p += n;
			break;
		}
	}
	if (*p++ != '/')
		die("insns.def %s: expected '/'", variant);
	int nextv = -1; /* value bits assigned MSB-first when not explicit */
	for (;;) {
		char *end;
		long hi = strtol(p, &end, 10), lo, vhi = -1, vlo = -1;
		if (*end != ':')
			die("insns.def %s: bad field", variant);
		lo = strtol(end + 1, &end, 10);
		if (*end == '=') {
			vhi = strtol(end + 1, &end, 10);
			if (*end != ':')
				die("insns.def %s: bad value range", variant);
			vlo = strtol(end + 1, &end, 10);
			if (vhi - vlo != hi - lo)
				die("insns.def %s: piece widths differ",
				    variant);
		}
		if (s->npieces == 3 || hi < lo || hi > (wide ? 63 : 31) ||
		    (hi > 31 && lo < 32))
			die("insns.def %s: bad field %ld:%ld", variant, hi, lo);
		int word = lo >= 32;
		if (s->npieces && word != s->word)
			die("insns.def %s: an operand spans two words",
			    variant);
		s->word = (uint8_t)word;
		hi -= 32 * word;
		lo -= 32 * word;
		if (vlo < 0)
			vlo = nextv < 0 ? 0 : nextv - (hi - lo + 1);
		s->piece[s->npieces++] =
		    (FieldPiece){(uint8_t)hi, (uint8_t)lo, (uint8_t)vlo};
		if (vhi < 0)
			vhi = vlo + hi - lo;
		if (vhi + 1 > s->width)
			s->width = (uint8_t)(vhi + 1);
		nextv = (int)vlo;
		p = end;
		if (*p != ',')
			break;
		p++;
	}
	return p;
}

static int
cmp_mnemonic(const void *a, const void *b)
{
	int16_t x = *(const int16_t *)a, y = *(const int16_t *)b;
	int c = strcmp(rows[x].mnemonic, rows[y].mnemonic);
	return c ? c : x - y;
}

static void
isa_init(void)
{
	int counts[128] = {0};
	for (int r = 0; r < ISA_ROWS; r++) {
		const RawRow *w = &raw[r];
		InsnDesc *d = &rows[r];
		d->variant = w->variant;
		d->mnemonic = w->mnemonic;
		d->match = w->match;
		d->mask = w->mask;
		d->lane = w->lane;
		d->ctx = w->ctx;
		d->flags = w->flags;
		const char *p = w->ops;
		while (*p) {
			if (d->nops == ISA_MAX_OPS)
				die("insns.def %s: too many operands",
				    d->variant);
			p = parse_spec(p, &d->op[d->nops++], d->variant,
			               (d->flags & F_WIDE) != 0);
			while (*p == ' ')
				p++;
		}
		by_mnemonic[r] = (int16_t)r;
		uint32_t fixed = (d->mask >> 24) & 0x7f;
		for (uint32_t v = 0; v < 128; v++)
			if ((v & fixed) == ((d->match >> 24) & fixed))
				counts[v]++;
	}
	qsort(by_mnemonic, ISA_ROWS, sizeof by_mnemonic[0], cmp_mnemonic);
	/* The assembler sizes a statement by its mnemonic, before it picks a
	 * row; wide rows never bundle (their bit 31 is an opcode bit). */
	for (int i = 0; i < ISA_ROWS; i++) {
		const InsnDesc *d = &rows[by_mnemonic[i]];
		if ((d->flags & F_WIDE) && !(d->flags & F_SOLO))
			die("insns.def %s: a wide row must be F_SOLO",
			    d->variant);
		if (i &&
		    !strcmp(d->mnemonic, rows[by_mnemonic[i - 1]].mnemonic) &&
		    (d->flags & F_WIDE) !=
		        (rows[by_mnemonic[i - 1]].flags & F_WIDE))
			die("insns.def %s: rows of one mnemonic differ in "
			    "F_WIDE",
			    d->variant);
	}
	int total = 0;
	for (int v = 0; v < 128; v++) {
		bucket_start[v] = (int16_t)total;
		total += counts[v];
	}
	bucket_start[128] = (int16_t)total;
	bucket_rows = xcalloc((size_t)total, sizeof *bucket_rows);
	int fill[128];
	for (int v = 0; v < 128; v++)
		fill[v] = bucket_start[v];
	for (int r = 0; r < ISA_ROWS; r++) {
		uint32_t fixed = (rows[r].mask >> 24) & 0x7f;
		for (uint32_t v = 0; v < 128; v++)
			if ((v & fixed) == ((rows[r].match >> 24) & fixed))
				bucket_rows[fill[v]++] = (int16_t)r;
	}
}

static void
ensure_init(void)
{
	pthread_once(&once, isa_init);
}

const InsnDesc *
isa_row(int row)
{
	ensure_init();
	return row >= 0 && row < ISA_ROWS ? &rows[row] : NULL;
}

int
isa_rows(void)
{
	return ISA_ROWS;
}

int
isa_row_by_variant(const char *variant)
{
	ensure_init();
	for (int r = 0; r < ISA_ROWS; r++)
		if (strcmp(rows[r].variant, variant) == 0)
			return r;
	return -1;
}

int
isa_rows_by_mnemonic(const char *mnemonic, const int16_t **out)
{
	ensure_init();
	int lo = 0, hi = ISA_ROWS;
	while (lo < hi) { /* first row whose mnemonic >= the key */
		int mid = (lo + hi) / 2;
		if (strcmp(rows[by_mnemonic[mid]].mnemonic, mnemonic) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	int n = 0;
	while (lo + n < ISA_ROWS &&
	       strcmp(rows[by_mnemonic[lo + n]].mnemonic, mnemonic) == 0)
		n++;
	*out = &by_mnemonic[lo];
	return n;
}

int
isa_available(const InsnDesc *d, Arch arch)
{
	if ((d->flags & F_IPU21) && arch != ARCH_IPU21)
		return 0;
	return 1; /* F_IPU2 rows exist on both chips we model */
}

int
isa_words(const InsnDesc *d)
{
	return d->flags & F_WIDE ? 2 : 1;
}

static int
reg_ok(OperandKind k, int64_t v)
{
	switch (k) {
	case OPK_M:
	case OPK_A:
		return v >= 0 && v < 16;
	case OPK_MP:
	case OPK_AP:
		return v >= 0 && v < 16 && v % 2 == 0;
	case OPK_AQ:
		return v >= 0 && v < 16 && v % 4 == 0;
	default:
		return 0;
	}
}

int
isa_operand_fits(const OperandSpec *s, int64_t v)
{
	uint32_t w = s->width;
	switch (s->kind) {
	case OPK_M:
	case OPK_MP:
	case OPK_A:
	case OPK_AP:
	case OPK_AQ:
		return reg_ok(s->kind, v);
	case OPK_U:
	case OPK_C:
	case OPK_CU:
		return v >= 0 && v < ((int64_t)1 << w);
	case OPK_S:
		return v >= -((int64_t)1 << (w - 1)) &&
		       v < ((int64_t)1 << (w - 1));
	case OPK_Z: {
		/* A 32-bit pattern whose low 32-w bits are zero. */
		uint64_t u = (uint64_t)v & 0xffffffffu;
		if (v < -((int64_t)1 << 31) || v > 0xffffffffLL)
			return 0;
		return (u & ((1u << (32 - w)) - 1)) == 0;
	}
	case OPK_T:
		return v >= 0 && v % 4 == 0 && v / 4 < ((int64_t)1 << w);
	}
	return 0;
}

static uint32_t
field_value(const OperandSpec *s, int64_t v)
{
	switch (s->kind) {
	case OPK_Z:
		return (uint32_t)((uint64_t)v & 0xffffffffu) >> (32 - s->width);
	case OPK_T:
		return (uint32_t)(v / 4);
	default:
		return (uint32_t)v;
	}
}

uint32_t
isa_encode_operand(const OperandSpec *s, int64_t value)
{
	uint32_t f = field_value(s, value), word = 0;
	for (int i = 0; i < s->npieces; i++) {
		const FieldPiece *p = &s->piece[i];
		word |= bits(f, p->vlo + p->hi - p->lo, p->vlo) << p->lo;
	}
	return word;
}

static int64_t
isa_decode_operand(const OperandSpec *s, uint32_t word)
{
	uint32_t f = 0;
	for (int i = 0; i < s->npieces; i++) {
		const FieldPiece *p = &s->piece[i];
		f |= bits(word, p->hi, p->lo) << p->vlo;
	}
	switch (s->kind) {
	case OPK_S:
		return sext(f, s->width);
	case OPK_Z:
		return (int64_t)(f << (32 - s->width));
	case OPK_T:
		return (int64_t)f * 4;
	default:
		return f;
	}
}

/* w[1] is the second word of a wide row (0 when it is not known). */
static int
decode(const uint32_t w[2], Arch arch, Insn *out)
{
	ensure_init();
	uint32_t b = (w[0] >> 24) & 0x7f;
	for (int i = bucket_start[b]; i < bucket_start[b + 1]; i++) {
		const InsnDesc *d = &rows[bucket_rows[i]];
		if ((w[0] & d->mask) != d->match)
			continue;
		if (!isa_available(d, arch))
			return -1;
		out->row = bucket_rows[i];
		out->nops = d->nops;
		for (int k = 0; k < d->nops; k++) {
			const OperandSpec *s = &d->op[k];
			out->op[k] = (int32_t)isa_decode_operand(s, w[s->word]);
			if (s->kind <= OPK_AQ && !reg_ok(s->kind, out->op[k]))
				return -1;
		}
		return out->row;
	}
	return -1;
}

int
isa_decode(uint32_t word, Arch arch, Insn *out)
{
	const uint32_t w[2] = {word, 0};
	return decode(w, arch, out);
}

int
isa_decode_wide(uint32_t w0, uint32_t w1, Arch arch, Insn *out)
{
	const uint32_t w[2] = {w0, w1};
	return decode(w, arch, out);
}

int
isa_encode_wide(const Insn *in, uint32_t w[2])
{
	const InsnDesc *d = isa_row(in->row);
	uint32_t out[2] = {d->match, 0};
	for (int k = 0; k < d->nops; k++) {
		const OperandSpec *s = &d->op[k];
		if (!isa_operand_fits(s, in->op[k]))
			return -1 - k;
		out[s->word] |= isa_encode_operand(s, in->op[k]);
	}
	w[0] = out[0];
	w[1] = out[1];
	return 0;
}

int
isa_encode(const Insn *in, uint32_t *word)
{
	uint32_t w[2];
	int r = isa_encode_wide(in, w);
	if (r == 0)
		*word = w[0];
	return r;
}

/* Register names. */

static const char *const mnames[16] = {
    "$m0", "$m1", "$m2", "$m3", "$m4",  "$m5",  "$m6",  "$m7",
    "$m8", "$m9", "$lr", "$sp", "$m12", "$m13", "$m14", "$mzero",
};

const char *
isa_mreg_name(int r)
{
	return r >= 0 && r < 16 ? mnames[r] : "$m?";
}

const char *
isa_areg_name(int r, int n)
{
	static const char *const one[16] = {
	    "$a0", "$a1", "$a2",  "$a3",  "$a4",  "$a5",  "$a6",  "$a7",
	    "$a8", "$a9", "$a10", "$a11", "$a12", "$a13", "$a14", "$azero",
	};
	static const char *const two[8] = {
	    "$a0:1", "$a2:3",   "$a4:5",   "$a6:7",
	    "$a8:9", "$a10:11", "$a12:13", "$azeros",
	};
	static const char *const four[4] = {"$a0:3", "$a4:7", "$a8:11",
	                                    "$a12:15"};
	if (r < 0 || r > 15)
		return "$a?";
	if (n == 2)
		return r % 2 ? "$a?" : two[r / 2];
	if (n == 4)
		return r % 4 ? "$a?" : four[r / 4];
	return one[r];
}

/* CSRs. */

static const struct {
	const char *name;
	int space;
	int index;
	uint32_t arch;
} csrs[] = {
#define R(name, space, index, arch, note) {#name, space, index, arch},
#include "../target/csrs.def"
#undef R
};

static const char *
skip_dollar(const char *s)
{
	return *s == '$' ? s + 1 : s;
}

int
isa_csr_index(const char *name, OperandKind kind, int supervisor_ok,
              int worker_ok)
{
	name = skip_dollar(name);
	for (size_t i = 0; i < sizeof csrs / sizeof csrs[0]; i++) {
		int sp = csrs[i].space;
		int ok = kind == OPK_CU ? sp == CSR_WU
		                        : (sp == CSR_W && worker_ok) ||
		                              (sp == CSR_S && supervisor_ok);
		if (ok && strcmp(csrs[i].name, name) == 0)
			return csrs[i].index;
	}
	return -1;
}

const char *
isa_csr_name(int index, OperandKind kind, InsnContext ctx)
{
	for (size_t i = 0; i < sizeof csrs / sizeof csrs[0]; i++) {
		int sp = csrs[i].space;
		int ok = kind == OPK_CU ? sp == CSR_WU
		         : ctx == CTX_S ? sp == CSR_S
		         : ctx == CTX_W
		             ? sp == CSR_W
		             : 0; /* both contexts: print the number */
		if (ok && csrs[i].index == index)
			return csrs[i].name;
	}
	return NULL;
}

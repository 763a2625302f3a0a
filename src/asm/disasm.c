/*
 * disasm.c - the disassembler: instruction words back to assembly text.
 *
 * Text is meant to re-assemble to the same word: registers print with the
 * assembler's aliases, decorations as written, CSRs by name where the name
 * is unambiguous, and the mnemonic is replaced by the full variant name
 * whenever the assembler would choose a different row for the printed
 * operands (asm_select is asked, so the two can never disagree). The two
 * no-op encodings print as nop and fnop. A main-lane word with the
 * co-issue bit, followed by an aux-lane word, prints as a bundle
 * "{ main ; aux }" (at 4 mod 8 too, where poplibs has bundles: only rpt
 * bodies must be 8-byte aligned); a two-word instruction (sendpicp) at an
 * 8-byte boundary prints as one line for its 8 bytes; anything that decodes to
 * no row prints as .word with a comment saying why.
 */
#include "asmpriv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for one operand (a symbol name of up to 256 bytes plus an offset)
 * and for one instruction's text. */
enum { OPTEXT = 300, LINETEXT = 64 + ISA_MAX_OPS * (OPTEXT + 2) };

/* ---- growing text ---- */

void
str_printf(Str *s, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		size_t room = s->cap - s->n;
		int k = vsnprintf(s->p ? s->p + s->n : NULL, s->p ? room : 0,
		                  fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if ((size_t)k < room) {
			s->n += (size_t)k;
			return;
		}
		s->cap = (s->cap + (size_t)k + 1) * 2;
		s->p = xrealloc(s->p, s->cap);
	}
}

static char *
str_done(Str *s)
{
	if (!s->p)
		return xstrdup("");
	return s->p;
}

/* ---- one instruction ---- */

static int
plain_name(const char *s)
{
	if (!(*s == '_' || *s == '.' || (*s >= 'a' && *s <= 'z') ||
	      (*s >= 'A' && *s <= 'Z')))
		return 0;
	for (; *s; s++)
		if (!(*s == '_' || *s == '.' || (*s >= 'a' && *s <= 'z') ||
		      (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return 0;
	return 1;
}

/* A symbol of image `o` exactly at addr, preferring globals. */
static const char *
symbol_at(const Obj *o, uint32_t addr)
{
	const char *best = NULL;
	int best_bind = -1;
	for (int i = 0; o && i < o->nsym; i++) {
		const ObjSymbol *s = &o->sym[i];
		if (s->section < 0 || s->type == SYMT_SECTION ||
		    s->value != addr || !plain_name(s->name))
			continue;
		if (s->bind > best_bind) {
			best = s->name;
			best_bind = s->bind;
		}
	}
	return best;
}

/* The CSR name of index v if exactly one CSR the row can reach has it. */
static const char *
csr_text(int v, OperandKind kind)
{
	if (kind == OPK_CU)
		return isa_csr_name(v, OPK_CU, CTX_W);
	const char *w = isa_csr_name(v, OPK_C, CTX_W);
	const char *s = isa_csr_name(v, OPK_C, CTX_S);
	if (w && s)
		return strcmp(w, s) ? NULL : w;
	return w ? w : s;
}

static void
operand_text(const InsnDesc *d, int i, int32_t v, const Obj *syms, char *buf,
             size_t len, AsmOperand *a)
{
	const OperandSpec *s = &d->op[i];
	const char *name;
	memset(a, 0, sizeof *a);
	a->decor = s->decor;
	a->value = v;
	a->known = 1;
	a->nregs = 1;
	a->cls = AOP_IMM;
	switch (s->kind) {
	case OPK_M:
		a->cls = AOP_MREG;
		snprintf(buf, len, "%s", isa_mreg_name(v));
		break;
	case OPK_MP:
		a->cls = AOP_MREG;
		a->nregs = 2;
		snprintf(buf, len, "$m%d:%d", v, v + 1);
		break;
	case OPK_A:
	case OPK_AP:
	case OPK_AQ:
		a->cls = AOP_AREG;
		a->nregs = s->kind == OPK_A ? 1 : s->kind == OPK_AP ? 2 : 4;
		snprintf(buf, len, "%s", isa_areg_name(v, a->nregs));
		break;
	case OPK_U:
		snprintf(buf, len, v < 256 ? "%d" : "0x%x", v);
		break;
	case OPK_S:
		snprintf(buf, len, "%d", v);
		break;
	case OPK_Z:
		snprintf(buf, len, "0x%x", (uint32_t)v);
		break;
	case OPK_T:
		name = symbol_at(syms, (uint32_t)v);
		if (name)
			snprintf(buf, len, "%s", name);
		else
			snprintf(buf, len, "0x%x", (uint32_t)v);
		break;
	case OPK_C:
	case OPK_CU:
		name = csr_text(v, s->kind);
		if (name) {
			a->cls = AOP_NAME;
			a->name = name;
			snprintf(buf, len, "$%s", name);
		} else {
			snprintf(buf, len, "%d", v);
		}
		break;
	}
	size_t n = strlen(buf);
	snprintf(buf + n, len - n, "%s", asm_decor_text(s->decor));
}

/* nop / fnop: the encodings the assembler's pseudo-instructions make. */
static const char *
noop_name(const Insn *in)
{
	const InsnDesc *d = isa_row(in->row);
	if (in->nops != 3 || in->op[0] != 15 || in->op[1] != 15 || in->op[2])
		return NULL;
	if (!strcmp(d->variant, "or_mmmn_zi"))
		return "nop";
	if (!strcmp(d->variant, "or_aaan_zi"))
		return "fnop";
	return NULL;
}

/* One instruction; over[i], if set, is the text of a relocated operand
 * (an object's symbol reference). */
static int
insn_text(const Insn *in, Arch arch, const Obj *syms, char (*over)[OPTEXT],
          char *buf, size_t len)
{
	const InsnDesc *d = isa_row(in->row);
	if (!d || len == 0)
		return IPU_EINVAL;
	const char *nop = noop_name(in);
	if (nop) {
		snprintf(buf, len, "%s", nop);
		return IPU_OK;
	}
	char text[ISA_MAX_OPS][OPTEXT];
	AsmOperand a[ISA_MAX_OPS];
	for (int i = 0; i < d->nops; i++) {
		operand_text(d, i, in->op[i], syms, text[i], sizeof text[i],
		             &a[i]);
		if (over && over[i][0]) {
			snprintf(text[i], sizeof text[i], "%s", over[i]);
			a[i].cls = AOP_IMM;
			a[i].known = 0;
		}
	}
	int32_t vals[ISA_MAX_OPS];
	int bad;
	int row = asm_select(d->mnemonic, a, d->nops, arch, vals, &bad);
	size_t n = (size_t)snprintf(buf, len, "%s",
	                            row == in->row ? d->mnemonic : d->variant);
	for (int i = 0; i < d->nops && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : " ",
		                      text[i]);
	return IPU_OK;
}

int
disasm_insn(const Insn *in, Arch arch, char *buf, size_t len)
{
	return insn_text(in, arch, NULL, NULL, buf, len);
}

/* ---- streams of words ---- */

typedef struct {
	Arch arch;
	int flags;
	const Obj *obj; /* labels and relocations, may be NULL */
	int sec;        /* section of obj being printed, -1 for raw */
	uint32_t base;  /* address (image) or 0 (object) of byte 0 */
} Dis;

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void
labels(Str *out, const Dis *D, uint32_t a)
{
	const Obj *o = D->obj;
	for (int i = 0; o && D->sec >= 0 && i < o->nsym; i++) {
		const ObjSymbol *s = &o->sym[i];
		if (s->section != D->sec || s->type == SYMT_SECTION ||
		    s->value != a)
			continue;
		if ((D->flags & DIS_PLAIN) && s->bind == SYMB_GLOBAL)
			str_printf(out, "\t.globl %s\n", s->name);
		str_printf(out, "%s:\n", s->name);
	}
}

/* "label+4" for a relocation's target: a label at the section symbol's
 * offset when there is one. */
static void
reloc_target(const Obj *o, const ObjReloc *r, char *buf, size_t len)
{
	const ObjSymbol *s = &o->sym[r->symbol];
	int32_t add = r->addend;
	const char *name = s->name;
	if (s->type == SYMT_SECTION)
		for (int i = 0; i < o->nsym; i++) {
			const ObjSymbol *l = &o->sym[i];
			if (l->section == s->section &&
			    l->type != SYMT_SECTION &&
			    (int64_t)l->value == add && plain_name(l->name)) {
				name = l->name;
				add = 0;
				break;
			}
		}
	if (add)
		snprintf(buf, len, "%s%+d", name, add);
	else
		snprintf(buf, len, "%s", name);
}

/* Relocations at this offset, as a comment (objects only). */
static void
reloc_note(Str *out, const Dis *D, uint32_t off, uint32_t len)
{
	const Obj *o = D->obj;
	for (int i = 0; o && o->kind == OBJ_REL && i < o->nrel; i++) {
		const ObjReloc *r = &o->rel[i];
		if (r->section != D->sec || r->offset < off ||
		    r->offset >= off + len)
			continue;
		const char *type = r->type == R_IPU_32   ? "R_IPU_32"
		                   : r->type == R_IPU_16 ? "R_IPU_16"
		                   : r->type == R_IPU_8  ? "R_IPU_8"
		                                         : NULL;
		char target[OPTEXT];
		if (!type) /* operands print their symbol in place */
			continue;
		reloc_target(o, r, target, sizeof target);
		str_printf(out, "  # %s %s", type, target);
	}
}

/* Operand texts from the object's relocations on the word at off. */
static int
reloc_operands(const Dis *D, uint32_t off, char (*over)[OPTEXT])
{
	const Obj *o = D->obj;
	int any = 0;
	memset(over, 0, ISA_MAX_OPS * sizeof *over);
	for (int i = 0; o && o->kind == OBJ_REL && i < o->nrel; i++) {
		const ObjReloc *r = &o->rel[i];
		if (r->section != D->sec || r->offset != off ||
		    r->type < R_IPU_OPERAND0)
			continue;
		reloc_target(o, r, over[r->type - R_IPU_OPERAND0], OPTEXT);
		any = 1;
	}
	return any;
}

static void
line_start(Str *out, const Dis *D, uint32_t a, const uint32_t *w, int nw)
{
	if (D->flags & DIS_PLAIN) {
		str_printf(out, "\t");
		return;
	}
	str_printf(out, "  %08x:  %08x ", a, w[0]);
	if (nw == 2)
		str_printf(out, "%08x  ", w[1]);
	else
		str_printf(out, "          ");
}

/* Text of one word alone; 0 if it decodes, else a reason in buf. */
static int
word_text(const Dis *D, uint32_t off, uint32_t w, char *buf, size_t len)
{
	Insn in;
	int r = isa_decode(w, D->arch, &in);
	if (r < 0) {
		if (isa_decode(w, ARCH_IPU21, &in) >= 0)
			snprintf(buf, len, "only on ipu21");
		else
			snprintf(buf, len, "no instruction has this encoding");
		return -1;
	}
	const InsnDesc *d = isa_row(r);
	if (d->flags & F_WIDE) {
		snprintf(buf, len,
		         "first word of a two-word %s, which must be 8-byte "
		         "aligned and followed by its second word",
		         d->mnemonic);
		return -1;
	}
	if (w & 0x80000000u) {
		snprintf(buf, len, "co-issue bit set outside a bundle");
		return -1;
	}
	const Obj *syms = D->obj && D->obj->kind == OBJ_EXEC ? D->obj : NULL;
	char over[ISA_MAX_OPS][OPTEXT];
	int any = reloc_operands(D, off, over);
	insn_text(&in, D->arch, syms, any ? over : NULL, buf, len);
	return 0;
}

/* A two-word instruction (F_WIDE) at an 8-byte boundary; 0 if valid. */
static int
wide_text(const Dis *D, uint32_t off, uint32_t w0, uint32_t w1, char *buf,
          size_t len)
{
	Insn in;
	if (isa_decode_wide(w0, w1, D->arch, &in) < 0 ||
	    !(isa_row(in.row)->flags & F_WIDE))
		return -1;
	const Obj *syms = D->obj && D->obj->kind == OBJ_EXEC ? D->obj : NULL;
	char over[ISA_MAX_OPS][OPTEXT];
	int any = reloc_operands(D, off, over);
	insn_text(&in, D->arch, syms, any ? over : NULL, buf, len);
	return 0;
}

/* A bundle at p (two words, first with the co-issue bit); 0 if valid. */
static int
bundle_text(const Dis *D, uint32_t off, uint32_t w0, uint32_t w1, char *buf,
            size_t len)
{
	Insn a, b;
	if (isa_decode(w0, D->arch, &a) < 0 ||
	    isa_decode(w1, D->arch, &b) < 0 || (w1 & 0x80000000u))
		return -1;
	const InsnDesc *da = isa_row(a.row), *db = isa_row(b.row);
	if (da->lane != LANE_MAIN || db->lane != LANE_AUX ||
	    (da->flags & F_SOLO) || (db->flags & F_SOLO))
		return -1;
	const Obj *syms = D->obj && D->obj->kind == OBJ_EXEC ? D->obj : NULL;
	char ta[LINETEXT], tb[LINETEXT], over[ISA_MAX_OPS][OPTEXT];
	int any = reloc_operands(D, off, over);
	insn_text(&a, D->arch, syms, any ? over : NULL, ta, sizeof ta);
	any = reloc_operands(D, off + 4, over);
	insn_text(&b, D->arch, syms, any ? over : NULL, tb, sizeof tb);
	snprintf(buf, len, "{ %s ; %s }", ta, tb);
	return 0;
}

static void
dis_code(Str *out, const Dis *D, const uint8_t *b, size_t len)
{
	size_t off = 0;
	char text[2 * LINETEXT + 8];
	while (off + 4 <= len) {
		uint32_t a = D->base + (uint32_t)off;
		labels(out, D, a);
		uint32_t w[2] = {rd32(b + off), 0};
		if ((w[0] & 0x80000000u) && off + 8 <= len) {
			w[1] = rd32(b + off + 4);
			if ((a % 8 == 0 &&
			     !wide_text(D, (uint32_t)off, w[0], w[1], text,
			                sizeof text)) ||
			    !bundle_text(D, (uint32_t)off, w[0], w[1], text,
			                 sizeof text)) {
				line_start(out, D, a, w, 2);
				str_printf(out, "%s", text);
				reloc_note(out, D, (uint32_t)off, 8);
				str_printf(out, "\n");
				off += 8;
				continue;
			}
		}
		line_start(out, D, a, w, 1);
		if (word_text(D, (uint32_t)off, w[0], text, sizeof text))
			str_printf(out, ".word 0x%08x  # %s", w[0], text);
		else
			str_printf(out, "%s", text);
		reloc_note(out, D, (uint32_t)off, 4);
		str_printf(out, "\n");
		off += 4;
	}
	for (; off < len; off++) {
		labels(out, D, D->base + (uint32_t)off);
		str_printf(out, "%s.byte 0x%02x\n",
		           D->flags & DIS_PLAIN ? "\t" : "  ", b[off]);
	}
}

/* An R_IPU_32 relocation exactly on this word: its target text. */
static int
data_reloc(const Dis *D, uint32_t off, char target[OPTEXT])
{
	const Obj *o = D->obj;
	for (int i = 0; o && o->kind == OBJ_REL && i < o->nrel; i++)
		if (o->rel[i].section == D->sec && o->rel[i].offset == off &&
		    o->rel[i].type == R_IPU_32) {
			reloc_target(o, &o->rel[i], target, OPTEXT);
			return 1;
		}
	return 0;
}

static void
dis_data(Str *out, const Dis *D, const uint8_t *b, size_t len)
{
	size_t off = 0;
	while (off < len) {
		uint32_t a = D->base + (uint32_t)off;
		labels(out, D, a);
		const char *pre = D->flags & DIS_PLAIN ? "\t" : "  ";
		char target[OPTEXT];
		if (off + 4 <= len && data_reloc(D, (uint32_t)off, target)) {
			if (D->flags & DIS_PLAIN)
				str_printf(out, "%s.word %s\n", pre, target);
			else
				str_printf(out, "  %08x:  .word %s\n", a,
				           target);
			off += 4;
		} else if (off + 4 <= len) {
			if (D->flags & DIS_PLAIN)
				str_printf(out, "%s.word 0x%08x", pre,
				           rd32(b + off));
			else
				str_printf(out, "  %08x:  .word 0x%08x", a,
				           rd32(b + off));
			reloc_note(out, D, (uint32_t)off, 4);
			str_printf(out, "\n");
			off += 4;
		} else {
			str_printf(out, "%s.byte 0x%02x\n", pre, b[off]);
			off++;
		}
	}
}

/* Zero-filled section: .space runs between its labels. */
static void
dis_nobits(Str *out, const Dis *D, uint32_t size)
{
	uint32_t at = 0;
	for (;;) {
		uint32_t next = size; /* the next label offset after `at` */
		for (int i = 0; i < D->obj->nsym; i++) {
			const ObjSymbol *s = &D->obj->sym[i];
			uint32_t off = s->value - D->base;
			if (s->section == D->sec && s->type != SYMT_SECTION &&
			    off > at && off < next)
				next = off;
		}
		labels(out, D, D->base + at);
		if (next > at)
			str_printf(out, "%s.space %u\n",
			           D->flags & DIS_PLAIN ? "\t" : "  ",
			           next - at);
		if (next >= size)
			return;
		at = next;
	}
}

char *
disasm_bytes(const uint8_t *bytes, size_t len, uint32_t addr, Arch arch,
             int flags)
{
	Str out = {0};
	Dis D = {arch, flags, NULL, -1, addr};
	dis_code(&out, &D, bytes, len);
	return str_done(&out);
}

char *
disasm_obj(const Obj *o, Arch arch, int flags)
{
	Str out = {0};
	for (int i = 0; i < o->nsec; i++) {
		const ObjSection *s = &o->sec[i];
		Dis D = {arch, flags, o, i, o->kind == OBJ_EXEC ? s->addr : 0};
		if (flags & DIS_PLAIN)
			str_printf(&out, "%s.section %s, \"a%s%s\"%s\n",
			           out.n ? "\n" : "", s->name,
			           s->flags & SECF_WRITE ? "w" : "",
			           s->flags & SECF_EXEC ? "x" : "",
			           s->flags & SECF_NOBITS ? ", @nobits" : "");
		else
			str_printf(&out,
			           "%sSection %s (%s, %u bytes at 0x%x, align "
			           "%u):\n",
			           out.n ? "\n" : "", s->name,
			           s->flags & SECF_EXEC     ? "code"
			           : s->flags & SECF_NOBITS ? "zero-filled"
			                                    : "data",
			           s->size, D.base, s->align);
		if (flags & DIS_PLAIN && s->align > 4)
			str_printf(&out, "\t.align %u\n", s->align);
		if (s->flags & SECF_NOBITS)
			dis_nobits(&out, &D, s->size);
		else if (s->flags & SECF_EXEC)
			dis_code(&out, &D, s->data, s->size);
		else
			dis_data(&out, &D, s->data, s->size);
		labels(&out, &D, D.base + s->size);
	}
	if (o->kind == OBJ_EXEC && !(flags & DIS_PLAIN))
		str_printf(&out, "\nEntry: 0x%x\n", o->entry);
	return str_done(&out);
}

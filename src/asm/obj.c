/*
 * obj.c - objects and tile images in memory (Obj) and as ELF32 files.
 *
 * The file format is plain ELF32 little-endian, ET_REL for objects and
 * ET_EXEC for linked tile images, with e_machine EM_IPU (this project's own
 * number; see asm.h and docs/assembler.md). Objects carry content sections,
 * .rela.<name> sections, .symtab, .strtab and .shstrtab; images add one
 * PT_LOAD program header per non-empty section and keep the symbol table.
 * Every field is written and read byte by byte, little-endian, so the code
 * does not depend on host layout.
 *
 * The reader trusts nothing: every offset, size, index and name is checked
 * against the buffer before use (the fuzz target fuzz/fuzz_obj.c feeds it
 * arbitrary bytes), and a bad file yields a Diag naming the field.
 */
#include "asm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ELF constants (System V gABI). */
enum {
	EHDR_SIZE = 52,
	SHDR_SIZE = 40,
	PHDR_SIZE = 32,
	SYM_SIZE = 16,
	RELA_SIZE = 12,
	ET_REL = 1,
	ET_EXEC = 2,
	SHT_NULL = 0,
	SHT_PROGBITS = 1,
	SHT_SYMTAB = 2,
	SHT_STRTAB = 3,
	SHT_RELA = 4,
	SHT_NOBITS = 8,
	SHF_WRITE = 1,
	SHF_ALLOC = 2,
	SHF_EXECINSTR = 4,
	SHF_INFO_LINK = 0x40,
	SHN_UNDEF = 0,
	SHN_LORESERVE = 0xff00,
	SHN_ABS = 0xfff1,
	PT_NULL = 0,
	PT_LOAD = 1,
	PF_X = 1,
	PF_W = 2,
	PF_R = 4,
	TILE_ADDR_SPACE = 1 << 21, /* isa.md 8: 21-bit byte addresses */
};

/* ---- the in-memory object ---- */

Obj *
obj_new(ObjKind kind, const char *name)
{
	Obj *o = xcalloc(1, sizeof *o);
	o->kind = kind;
	o->name = name ? xstrdup(name) : NULL;
	return o;
}

void
obj_free(Obj *o)
{
	if (!o)
		return;
	for (int i = 0; i < o->nsec; i++) {
		free(o->sec[i].name);
		free(o->sec[i].data);
	}
	for (int i = 0; i < o->nsym; i++)
		free(o->sym[i].name);
	free(o->sec);
	free(o->sym);
	free(o->rel);
	free(o->name);
	free(o);
}

int
obj_add_section(Obj *o, const char *name, uint32_t flags, uint32_t align)
{
	o->sec = xrealloc(o->sec, (size_t)(o->nsec + 1) * sizeof *o->sec);
	ObjSection *s = &o->sec[o->nsec];
	memset(s, 0, sizeof *s);
	s->name = xstrdup(name);
	s->flags = flags;
	s->align = align ? align : 1;
	return o->nsec++;
}

int
obj_add_symbol(Obj *o, const ObjSymbol *s)
{
	o->sym = xrealloc(o->sym, (size_t)(o->nsym + 1) * sizeof *o->sym);
	o->sym[o->nsym] = *s;
	o->sym[o->nsym].name = xstrdup(s->name ? s->name : "");
	return o->nsym++;
}

void
obj_add_reloc(Obj *o, const ObjReloc *r)
{
	o->rel = xrealloc(o->rel, (size_t)(o->nrel + 1) * sizeof *o->rel);
	o->rel[o->nrel++] = *r;
}

int
obj_find_symbol(const Obj *o, const char *name)
{
	for (int i = 0; i < o->nsym; i++)
		if (o->sym[i].type != SYMT_SECTION &&
		    !strcmp(o->sym[i].name, name))
			return i;
	return -1;
}

uint32_t
obj_operand_mask(const OperandSpec *s)
{
	uint32_t m = 0;
	for (int i = 0; i < s->npieces; i++) {
		unsigned w = s->piece[i].hi - s->piece[i].lo + 1u;
		m |= (w >= 32 ? 0xffffffffu : (1u << w) - 1) << s->piece[i].lo;
	}
	return m;
}

void
obj_operand_range(const OperandSpec *s, char *buf, size_t len)
{
	unsigned w = s->width;
	switch (s->kind) {
	case OPK_U:
	case OPK_C:
	case OPK_CU:
		snprintf(buf, len, "0..%llu", (1ull << w) - 1);
		break;
	case OPK_S:
		snprintf(buf, len, "%lld..%lld", -(1ll << (w - 1)),
		         (1ll << (w - 1)) - 1);
		break;
	case OPK_Z:
		snprintf(buf, len, "a 32-bit value with the low %u bits zero",
		         32 - w);
		break;
	case OPK_T:
		snprintf(buf, len, "a 4-byte aligned address below 0x%llx",
		         4ull << w);
		break;
	default:
		snprintf(buf, len, "a register");
		break;
	}
}

/* ---- writing ---- */

typedef struct {
	uint8_t *p;
	size_t n, cap;
} Buf;

static void
buf_need(Buf *b, size_t n)
{
	if (b->n + n <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 1024;
	while (cap < b->n + n)
		cap *= 2;
	b->p = xrealloc(b->p, cap);
	b->cap = cap;
}

static void
buf_put(Buf *b, const void *p, size_t n)
{
	buf_need(b, n);
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void
buf_u8(Buf *b, uint32_t v)
{
	uint8_t c = (uint8_t)v;
	buf_put(b, &c, 1);
}

static void
buf_u16(Buf *b, uint32_t v)
{
	buf_u8(b, v);
	buf_u8(b, v >> 8);
}

static void
buf_u32(Buf *b, uint32_t v)
{
	buf_u16(b, v);
	buf_u16(b, v >> 16);
}

static void
buf_align(Buf *b, size_t a)
{
	while (b->n % a)
		buf_u8(b, 0);
}

/* A string table under construction. */
static uint32_t
str_add(Buf *t, const char *s)
{
	uint32_t off = (uint32_t)t->n;
	buf_put(t, s, strlen(s) + 1);
	return off;
}

typedef struct {
	uint32_t name, type, flags, addr, offset, size, link, info, align,
	    entsize;
} Shdr;

static void
put_shdr(Buf *b, const Shdr *h)
{
	buf_u32(b, h->name);
	buf_u32(b, h->type);
	buf_u32(b, h->flags);
	buf_u32(b, h->addr);
	buf_u32(b, h->offset);
	buf_u32(b, h->size);
	buf_u32(b, h->link);
	buf_u32(b, h->info);
	buf_u32(b, h->align);
	buf_u32(b, h->entsize);
}

static uint8_t
sym_info(const ObjSymbol *s)
{
	return (uint8_t)((s->bind == SYMB_GLOBAL ? 1 : 0) << 4 | s->type);
}

/* Symbol order in the file: null, locals, globals (ELF requires locals
 * first). elf_index[i] is the file index of o->sym[i]. */
static int
order_symbols(const Obj *o, int *elf_index)
{
	int k = 1;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < o->nsym; i++)
			if ((o->sym[i].bind == SYMB_GLOBAL) == pass)
				elf_index[i] = k++;
	int first_global = 1;
	for (int i = 0; i < o->nsym; i++)
		if (o->sym[i].bind != SYMB_GLOBAL)
			first_global++;
	return first_global;
}

static void
put_header(Buf *b, const Obj *o, uint32_t phnum, uint32_t shoff, uint32_t shnum)
{
	static const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', 1, 1, 1};
	buf_put(b, ident, sizeof ident);
	buf_u16(b, o->kind == OBJ_EXEC ? ET_EXEC : ET_REL);
	buf_u16(b, EM_IPU);
	buf_u32(b, 1);
	buf_u32(b, o->kind == OBJ_EXEC ? o->entry : 0);
	buf_u32(b, phnum ? EHDR_SIZE : 0);
	buf_u32(b, shoff);
	buf_u32(b, o->flags);
	buf_u16(b, EHDR_SIZE);
	buf_u16(b, PHDR_SIZE);
	buf_u16(b, phnum);
	buf_u16(b, SHDR_SIZE);
	buf_u16(b, shnum);
	buf_u16(b, shnum - 1); /* .shstrtab is last */
}

static void
put_symtab(Buf *b, const Obj *o, const int *elf_index, Buf *strtab)
{
	int n = o->nsym + 1;
	ObjSymbol *sorted = xcalloc((size_t)n, sizeof *sorted);
	for (int i = 0; i < o->nsym; i++)
		sorted[elf_index[i]] = o->sym[i];
	for (int i = 0; i < n; i++) {
		const ObjSymbol *s = &sorted[i];
		uint32_t shndx = s->section >= 0 ? (uint32_t)s->section + 1
		                 : s->section == OBJ_ABS ? SHN_ABS
		                                         : SHN_UNDEF;
		buf_u32(b, i && s->type != SYMT_SECTION
		               ? str_add(strtab, s->name)
		               : 0);
		buf_u32(b, i ? s->value : 0);
		buf_u32(b, i ? s->size : 0);
		buf_u8(b, i ? sym_info(s) : 0);
		buf_u8(b, 0);
		buf_u16(b, i ? shndx : 0);
	}
	free(sorted);
}

int
obj_write(const Obj *o, uint8_t **data, size_t *len, Diag *d)
{
	int nsec = o->nsec, exec = o->kind == OBJ_EXEC;
	int *nrel = xcalloc((size_t)nsec + 1, sizeof *nrel);
	int nrelsec = 0;
	for (int i = 0; i < o->nrel; i++)
		if (o->rel[i].section >= 0 && o->rel[i].section < nsec)
			nrel[o->rel[i].section]++;
	for (int i = 0; i < nsec; i++)
		nrelsec += nrel[i] > 0;
	uint32_t phnum = 0;
	for (int i = 0; exec && i < nsec; i++)
		phnum += o->sec[i].size > 0;
	int shnum = 1 + nsec + nrelsec + 3;
	int symtab = 1 + nsec + nrelsec, strtab_i = symtab + 1;
	Shdr *sh = xcalloc((size_t)shnum, sizeof *sh);
	Buf b = {0}, shstr = {0}, str = {0};
	str_add(&shstr, "");
	str_add(&str, "");
	buf_need(&b, EHDR_SIZE + phnum * PHDR_SIZE);
	b.n = EHDR_SIZE + phnum * PHDR_SIZE;
	memset(b.p, 0, b.n);
	for (int i = 0; i < nsec; i++) {
		const ObjSection *s = &o->sec[i];
		Shdr *h = &sh[1 + i];
		buf_align(&b, s->align > 4 ? s->align : 4);
		h->name = str_add(&shstr, s->name);
		h->type = s->flags & SECF_NOBITS ? SHT_NOBITS : SHT_PROGBITS;
		h->flags = SHF_ALLOC | (s->flags & SECF_WRITE ? SHF_WRITE : 0) |
		           (s->flags & SECF_EXEC ? SHF_EXECINSTR : 0);
		h->addr = exec ? s->addr : 0;
		h->offset = (uint32_t)b.n;
		h->size = s->size;
		h->align = s->align;
		if (!(s->flags & SECF_NOBITS))
			buf_put(&b, s->data, s->size);
	}
	int *elf_index = xcalloc((size_t)o->nsym + 1, sizeof *elf_index);
	int first_global = order_symbols(o, elf_index);
	int k = 1 + nsec;
	for (int i = 0; i < nsec; i++) {
		if (!nrel[i])
			continue;
		char name[300];
		snprintf(name, sizeof name, ".rela%s", o->sec[i].name);
		Shdr *h = &sh[k++];
		buf_align(&b, 4);
		*h = (Shdr){.name = str_add(&shstr, name),
		            .type = SHT_RELA,
		            .flags = SHF_INFO_LINK,
		            .offset = (uint32_t)b.n,
		            .size = (uint32_t)nrel[i] * RELA_SIZE,
		            .link = (uint32_t)symtab,
		            .info = (uint32_t)i + 1,
		            .align = 4,
		            .entsize = RELA_SIZE};
		for (int r = 0; r < o->nrel; r++) {
			const ObjReloc *rl = &o->rel[r];
			if (rl->section != i)
				continue;
			buf_u32(&b, rl->offset);
			buf_u32(&b, (uint32_t)elf_index[rl->symbol] << 8 |
			                rl->type);
			buf_u32(&b, (uint32_t)rl->addend);
		}
	}
	buf_align(&b, 4);
	sh[symtab] = (Shdr){.name = str_add(&shstr, ".symtab"),
	                    .type = SHT_SYMTAB,
	                    .offset = (uint32_t)b.n,
	                    .size = (uint32_t)(o->nsym + 1) * SYM_SIZE,
	                    .link = (uint32_t)strtab_i,
	                    .info = (uint32_t)first_global,
	                    .align = 4,
	                    .entsize = SYM_SIZE};
	put_symtab(&b, o, elf_index, &str);
	sh[strtab_i] = (Shdr){.name = str_add(&shstr, ".strtab"),
	                      .type = SHT_STRTAB,
	                      .offset = (uint32_t)b.n,
	                      .size = (uint32_t)str.n,
	                      .align = 1};
	buf_put(&b, str.p, str.n);
	sh[shnum - 1] = (Shdr){.name = str_add(&shstr, ".shstrtab"),
	                       .type = SHT_STRTAB,
	                       .align = 1};
	sh[shnum - 1].offset = (uint32_t)b.n;
	sh[shnum - 1].size = (uint32_t)shstr.n;
	buf_put(&b, shstr.p, shstr.n);
	buf_align(&b, 4);
	uint32_t shoff = (uint32_t)b.n;
	for (int i = 0; i < shnum; i++)
		put_shdr(&b, &sh[i]);
	if (b.n > UINT32_MAX) {
		free(b.p);
		b.p = NULL;
	}
	/* Now the headers at the front. */
	if (b.p) {
		Buf head = {0};
		put_header(&head, o, phnum, shoff, (uint32_t)shnum);
		for (int i = 0; exec && i < nsec; i++) {
			const ObjSection *s = &o->sec[i];
			if (!s->size)
				continue;
			int nobits = !!(s->flags & SECF_NOBITS);
			buf_u32(&head, PT_LOAD);
			buf_u32(&head, sh[1 + i].offset);
			buf_u32(&head, s->addr);
			buf_u32(&head, s->addr);
			buf_u32(&head, nobits ? 0 : s->size);
			buf_u32(&head, s->size);
			buf_u32(&head, PF_R |
			                   (s->flags & SECF_WRITE ? PF_W : 0) |
			                   (s->flags & SECF_EXEC ? PF_X : 0));
			buf_u32(&head, s->align);
		}
		memcpy(b.p, head.p, head.n);
		free(head.p);
	}
	free(nrel);
	free(sh);
	free(elf_index);
	free(shstr.p);
	free(str.p);
	if (!b.p)
		return diag_set(d, IPU_ERANGE, o->name, 0, 0,
		                "output larger than 4 GiB");
	*data = b.p;
	*len = b.n;
	return IPU_OK;
}

int
obj_write_file(const Obj *o, const char *path, Diag *d)
{
	uint8_t *data;
	size_t len;
	int r = obj_write(o, &data, &len, d);
	if (r)
		return r;
	r = write_file(path, data, len, d);
	free(data);
	return r;
}

/* ---- reading ---- */

typedef struct {
	const uint8_t *p;
	size_t len;
	const char *name;
	Diag *d;
} Reader;

static uint32_t
rd16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t
rd32(const uint8_t *p)
{
	return rd16(p) | rd16(p + 2) << 16;
}

static int __attribute__((format(printf, 2, 3)))
bad(Reader *r, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return diag_set(r->d, IPU_EINVAL, r->name, 0, 0, "%s", msg);
}

/* Does [off, off+size) lie inside the file? */
static int
in_file(const Reader *r, uint64_t off, uint64_t size)
{
	return off <= r->len && size <= r->len - off;
}

static void
get_shdr(const uint8_t *p, Shdr *h)
{
	h->name = rd32(p);
	h->type = rd32(p + 4);
	h->flags = rd32(p + 8);
	h->addr = rd32(p + 12);
	h->offset = rd32(p + 16);
	h->size = rd32(p + 20);
	h->link = rd32(p + 24);
	h->info = rd32(p + 28);
	h->align = rd32(p + 32);
	h->entsize = rd32(p + 36);
}

int
obj_is_elf(const uint8_t *data, size_t len)
{
	return len >= 4 && data[0] == 0x7f && data[1] == 'E' &&
	       data[2] == 'L' && data[3] == 'F';
}

static int
check_ehdr(Reader *r, uint32_t *type)
{
	const uint8_t *p = r->p;
	if (!obj_is_elf(p, r->len))
		return bad(r, "not an ELF file (bad magic number)");
	if (r->len < EHDR_SIZE)
		return bad(r, "truncated ELF header: %zu bytes, need 52",
		           r->len);
	if (p[4] != 1)
		return bad(r, "%s: ELF class %u, expected 1 (32-bit)",
		           "EI_CLASS", p[4]);
	if (p[5] != 1)
		return bad(r,
		           "%s: data encoding %u, expected 1 (little-endian)",
		           "EI_DATA", p[5]);
	if (p[6] != 1)
		return bad(r, "%s: version %u, expected 1", "EI_VERSION", p[6]);
	*type = rd16(p + 16);
	if (*type != ET_REL && *type != ET_EXEC)
		return bad(r,
		           "%s: type %u is neither ET_REL (1) nor ET_EXEC (2)",
		           "e_type", *type);
	if (rd16(p + 18) != EM_IPU)
		return bad(r,
		           "%s: machine 0x%x is not an IPU object of this "
		           "toolchain (0x4950)",
		           "e_machine", rd16(p + 18));
	if (rd32(p + 20) != 1)
		return bad(r, "%s: %u, expected 1", "e_version", rd32(p + 20));
	if (rd16(p + 40) != EHDR_SIZE)
		return bad(r, "%s: %u, expected 52", "e_ehsize", rd16(p + 40));
	return 0;
}

/* Read the section headers into sh[] and check bounds and names. */
static int
read_shdrs(Reader *r, Shdr **out, uint32_t *shnum_out, const char **shstr,
           uint32_t *shstr_size)
{
	const uint8_t *p = r->p;
	uint32_t shoff = rd32(p + 32), shnum = rd16(p + 48);
	uint32_t shentsize = rd16(p + 46), shstrndx = rd16(p + 50);
	if (shnum == 0)
		return bad(r, "e_shnum: no section headers");
	if (shnum >= SHN_LORESERVE)
		return bad(r, "%s: %u sections is too many", "e_shnum", shnum);
	if (shentsize != SHDR_SIZE)
		return bad(r, "%s: %u, expected 40", "e_shentsize", shentsize);
	if (!in_file(r, shoff, (uint64_t)shnum * SHDR_SIZE))
		return bad(r,
		           "%s: section headers at 0x%x run past the end of "
		           "the file",
		           "e_shoff", shoff);
	if (shstrndx >= shnum)
		return bad(r, "%s: %u is not a section", "e_shstrndx",
		           shstrndx);
	Shdr *sh = xcalloc(shnum, sizeof *sh);
	for (uint32_t i = 0; i < shnum; i++)
		get_shdr(p + shoff + (size_t)i * SHDR_SIZE, &sh[i]);
	int err = 0;
	for (uint32_t i = 0; i < shnum && !err; i++) {
		char what[48];
		snprintf(what, sizeof what, "section %u", i);
		if (sh[i].type != SHT_NOBITS && sh[i].type != SHT_NULL &&
		    !in_file(r, sh[i].offset, sh[i].size))
			err = bad(r,
			          "%s: contents (offset 0x%x) run past the "
			          "end of the file",
			          what, sh[i].offset);
		else if (sh[i].type == SHT_STRTAB &&
		         (sh[i].size == 0 ||
		          p[sh[i].offset + sh[i].size - 1] != 0))
			err = bad(r,
			          "%s: string table does not end with a NUL "
			          "byte",
			          what);
		else if (sh[i].align & (sh[i].align - 1))
			err = bad(r, "%s: alignment %u is not a power of two",
			          what, sh[i].align);
	}
	const Shdr *ss = &sh[shstrndx];
	if (!err && ss->type != SHT_STRTAB)
		err = bad(r, "%s: section %u is not a string table",
		          "e_shstrndx", shstrndx);
	for (uint32_t i = 0; i < shnum && !err; i++)
		if (sh[i].name >= ss->size)
			err = bad(r, "%s: name offset %u is outside .shstrtab",
			          "section header", sh[i].name);
	if (err) {
		free(sh);
		return err;
	}
	*out = sh;
	*shnum_out = shnum;
	*shstr = (const char *)p + ss->offset;
	*shstr_size = ss->size;
	return 0;
}

typedef struct {
	Reader *r;
	Obj *o;
	Shdr *sh;
	uint32_t shnum;
	const char *shstr;
	int *secmap; /* file section index -> Obj section, -1 */
	int symtab;  /* file index of .symtab, -1 */
} Load;

static int
load_sections(Load *L)
{
	Reader *r = L->r;
	for (uint32_t i = 1; i < L->shnum; i++) {
		const Shdr *h = &L->sh[i];
		L->secmap[i] = -1;
		const char *name = L->shstr + h->name;
		if (h->type == SHT_SYMTAB) {
			if (L->symtab >= 0)
				return bad(r,
				           "%s: second symbol table (section "
				           "%u)",
				           name, i);
			L->symtab = (int)i;
			continue;
		}
		if (h->type == SHT_STRTAB || h->type == SHT_RELA)
			continue;
		if (h->type != SHT_PROGBITS && h->type != SHT_NOBITS)
			return bad(r, "%s: unsupported section type %u", name,
			           h->type);
		if (!(h->flags & SHF_ALLOC))
			return bad(r,
			           "%s: section is not allocatable (flags "
			           "0x%x)",
			           name, h->flags);
		if (L->o->kind == OBJ_EXEC &&
		    ((uint64_t)h->addr + h->size > TILE_ADDR_SPACE))
			return bad(r,
			           "%s: section at 0x%x lies outside the 2 MiB "
			           "tile address space",
			           name, h->addr);
		uint32_t flags = (h->flags & SHF_WRITE ? SECF_WRITE : 0) |
		                 (h->flags & SHF_EXECINSTR ? SECF_EXEC : 0) |
		                 (h->type == SHT_NOBITS ? SECF_NOBITS : 0);
		int k = obj_add_section(L->o, name, flags, h->align);
		ObjSection *s = &L->o->sec[k];
		s->size = h->size;
		s->addr = L->o->kind == OBJ_EXEC ? h->addr : 0;
		if (h->type == SHT_PROGBITS) {
			s->data = xmalloc(h->size);
			memcpy(s->data, r->p + h->offset, h->size);
		}
		L->secmap[i] = k;
	}
	return 0;
}

static int
load_symbols(Load *L)
{
	Reader *r = L->r;
	if (L->symtab < 0)
		return 0;
	const Shdr *h = &L->sh[L->symtab];
	if (h->entsize != SYM_SIZE || h->size % SYM_SIZE)
		return bad(r, "%s: entry size %u, expected 16", ".symtab",
		           h->entsize);
	if (h->link >= L->shnum || L->sh[h->link].type != SHT_STRTAB)
		return bad(r, "%s: link %u is not a string table", ".symtab",
		           h->link);
	const Shdr *st = &L->sh[h->link];
	uint32_t n = h->size / SYM_SIZE;
	for (uint32_t i = 1; i < n; i++) {
		const uint8_t *p = r->p + h->offset + (size_t)i * SYM_SIZE;
		char what[32];
		snprintf(what, sizeof what, "symbol %u", i);
		uint32_t name = rd32(p), value = rd32(p + 4);
		uint32_t bind = p[12] >> 4, type = p[12] & 15;
		uint32_t shndx = rd16(p + 14);
		if (name >= st->size)
			return bad(r, "%s: name offset %u is outside .strtab",
			           what, name);
		if (bind > 1)
			return bad(r, "%s: binding %u (only local and global)",
			           what, bind);
		if (type > SYMT_SECTION)
			return bad(r, "%s: unsupported type %u", what, type);
		ObjSymbol s = {.name = (char *)r->p + st->offset + name,
		               .value = value,
		               .size = rd32(p + 8),
		               .bind = (uint8_t)bind,
		               .type = (uint8_t)type};
		if (shndx == SHN_UNDEF)
			s.section = OBJ_UNDEF;
		else if (shndx == SHN_ABS)
			s.section = OBJ_ABS;
		else if (shndx < L->shnum && L->secmap[shndx] >= 0)
			s.section = L->secmap[shndx];
		else
			return bad(r,
			           "%s: section index %u is not a content "
			           "section",
			           what, shndx);
		if (s.section >= 0) {
			const ObjSection *sec = &L->o->sec[s.section];
			uint64_t base = L->o->kind == OBJ_EXEC ? sec->addr : 0;
			if (value < base || value - base > sec->size)
				return bad(r,
				           "%s: value 0x%x lies outside its "
				           "section",
				           what, value);
		}
		if (type == SYMT_SECTION) {
			if (s.section < 0)
				return bad(r,
				           "%s: section symbol without a "
				           "section",
				           what);
			s.name = L->o->sec[s.section].name;
		}
		obj_add_symbol(L->o, &s);
	}
	return 0;
}

static int
check_operand_reloc(Reader *r, const Obj *o, const ObjReloc *rl,
                    const char *what)
{
	const ObjSection *s = &o->sec[rl->section];
	if (!(s->flags & SECF_EXEC) || rl->offset % 4)
		return bad(r,
		           "%s: operand relocation at 0x%x is not on an "
		           "instruction",
		           what, rl->offset);
	Insn in;
	uint32_t w = rd32(s->data + rl->offset);
	/* Bit 31 is the co-issue bit, except in a two-word instruction. */
	int row = isa_decode(w, ARCH_IPU21, &in);
	if (row < 0)
		row = isa_decode(w & 0x7fffffffu, ARCH_IPU21, &in);
	uint32_t op = rl->type - R_IPU_OPERAND0;
	if (row < 0)
		return bad(r, "%s: word at 0x%x is not an instruction", what,
		           rl->offset);
	const InsnDesc *d = isa_row(row);
	if (op >= d->nops || d->op[op].kind <= OPK_AQ)
		return bad(r, "%s: instruction has no immediate operand %u",
		           what, op);
	if (d->op[op].word)
		return bad(r,
		           "%s: operand %u of %s is in its second word, "
		           "which cannot be relocated",
		           what, op + 1, d->variant);
	return 0;
}

static int
load_relocs(Load *L)
{
	Reader *r = L->r;
	for (uint32_t i = 1; i < L->shnum; i++) {
		const Shdr *h = &L->sh[i];
		if (h->type != SHT_RELA)
			continue;
		const char *name = L->shstr + h->name;
		if (L->o->kind == OBJ_EXEC)
			return bad(r, "%s: relocations in an executable image",
			           name);
		if (h->entsize != RELA_SIZE || h->size % RELA_SIZE)
			return bad(r, "%s: entry size %u, expected 12", name,
			           h->entsize);
		if ((int)h->link != L->symtab || L->symtab < 0)
			return bad(r, "%s: link %u is not the symbol table",
			           name, h->link);
		if (h->info >= L->shnum || L->secmap[h->info] < 0 ||
		    (L->o->sec[L->secmap[h->info]].flags & SECF_NOBITS))
			return bad(r, "%s: target section %u holds no data",
			           name, h->info);
		int sec = L->secmap[h->info];
		for (uint32_t k = 0; k < h->size / RELA_SIZE; k++) {
			const uint8_t *p =
			    r->p + h->offset + (size_t)k * RELA_SIZE;
			char what[300];
			snprintf(what, sizeof what, "%s entry %u", name, k);
			ObjReloc rl = {.section = sec,
			               .offset = rd32(p),
			               .type = rd32(p + 4) & 0xff,
			               .symbol = (int)(rd32(p + 4) >> 8) - 1,
			               .addend = (int32_t)rd32(p + 8)};
			uint32_t width = rl.type == R_IPU_16  ? 2
			                 : rl.type == R_IPU_8 ? 1
			                                      : 4;
			if (rl.type != R_IPU_32 && rl.type != R_IPU_16 &&
			    rl.type != R_IPU_8 &&
			    (rl.type < R_IPU_OPERAND0 ||
			     rl.type >= R_IPU_OPERAND0 + ISA_MAX_OPS))
				return bad(r, "%s: unknown relocation type %u",
				           what, rl.type);
			if (rl.symbol < 0 || rl.symbol >= L->o->nsym)
				return bad(r,
				           "%s: symbol index %d out of range",
				           what, rl.symbol + 1);
			const ObjSection *s = &L->o->sec[sec];
			if ((uint64_t)rl.offset + width > s->size)
				return bad(r,
				           "%s: offset 0x%x lies outside the "
				           "section",
				           what, rl.offset);
			if (rl.type >= R_IPU_OPERAND0 &&
			    check_operand_reloc(r, L->o, &rl, what))
				return IPU_EINVAL;
			obj_add_reloc(L->o, &rl);
		}
	}
	return 0;
}

/* Program headers of an image: in the file and in the address space. */
static int
check_phdrs(Reader *r)
{
	const uint8_t *p = r->p;
	uint32_t phoff = rd32(p + 28), phnum = rd16(p + 44);
	if (!phnum)
		return 0;
	if (rd16(p + 42) != PHDR_SIZE)
		return bad(r, "e_phentsize: %u, expected 32", rd16(p + 42));
	if (!in_file(r, phoff, (uint64_t)phnum * PHDR_SIZE))
		return bad(r,
		           "e_phoff: program headers at 0x%x run past the end "
		           "of the file",
		           phoff);
	for (uint32_t i = 0; i < phnum; i++) {
		const uint8_t *h = p + phoff + (size_t)i * PHDR_SIZE;
		uint32_t type = rd32(h), off = rd32(h + 4), vaddr = rd32(h + 8);
		uint32_t filesz = rd32(h + 16), memsz = rd32(h + 20);
		if (type == PT_NULL)
			continue;
		if (type != PT_LOAD)
			return bad(r, "program header %u: unsupported type %u",
			           i, type);
		if (!in_file(r, off, filesz))
			return bad(r,
			           "program header %u: file data at 0x%x runs "
			           "past the end of the file",
			           i, off);
		if (filesz > memsz)
			return bad(r,
			           "program header %u: file size %u exceeds "
			           "memory size %u",
			           i, filesz, memsz);
		if ((uint64_t)vaddr + memsz > TILE_ADDR_SPACE)
			return bad(r,
			           "program header %u: segment at 0x%x lies "
			           "outside the 2 MiB tile address space",
			           i, vaddr);
	}
	return 0;
}

int
obj_read(const uint8_t *data, size_t len, const char *name, Obj **out, Diag *d)
{
	Reader r = {data, len, name ? name : "", d};
	uint32_t type = 0, shnum = 0, shstr_size = 0;
	Shdr *sh = NULL;
	const char *shstr = NULL;
	*out = NULL;
	int err = check_ehdr(&r, &type);
	if (err)
		return err;
	if (type == ET_EXEC && (err = check_phdrs(&r)))
		return err;
	err = read_shdrs(&r, &sh, &shnum, &shstr, &shstr_size);
	if (err)
		return err;
	Obj *o = obj_new(type == ET_EXEC ? OBJ_EXEC : OBJ_REL, name);
	o->flags = rd32(data + 36);
	o->entry = type == ET_EXEC ? rd32(data + 24) : 0;
	Load L = {&r, o, sh, shnum, shstr, xcalloc(shnum, sizeof(int)), -1};
	err = load_sections(&L);
	if (!err)
		err = load_symbols(&L);
	if (!err)
		err = load_relocs(&L);
	if (!err && o->flags & ~(uint32_t)OBJF_IPU21)
		err = bad(&r, "%s: unknown flags 0x%x", "e_flags", o->flags);
	if (!err && type == ET_EXEC && o->entry % 4)
		err = bad(&r, "%s: entry 0x%x is not 4-byte aligned", "e_entry",
		          o->entry);
	free(L.secmap);
	free(sh);
	if (err) {
		obj_free(o);
		return err;
	}
	*out = o;
	return IPU_OK;
}

int
obj_read_file(const char *path, Obj **out, Diag *d)
{
	uint8_t *data;
	size_t len;
	*out = NULL;
	int r = read_file(path, &data, &len, d);
	if (r)
		return r;
	r = obj_read(data, len, path, out, d);
	free(data);
	return r;
}

/*
 * link.c - the linker (relocatable objects to one tile image) and loading
 * images for the emulator.
 *
 * Same-named sections of all inputs are concatenated in input order, each
 * piece at its own alignment. Output sections are ordered code, data, then
 * zero-filled (.bss-like) sections, each group in order of first
 * appearance. Sections named with --section get that address; the others
 * follow from the chip's memory base upwards, stepping over fixed ones.
 * Every section must lie in tile memory and code must end below the chip's
 * exec_end. Global symbols are defined once; each relocation becomes S + A
 * written into data or re-encoded into one instruction operand through the
 * table (isa_encode_operand), with the operand's range checked. The image
 * keeps every non-section symbol at its final address.
 */
#include "asm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	char *name; /* borrowed from the first input section */
	uint32_t flags;
	uint32_t align;
	uint64_t size; /* bytes */
	uint32_t addr;
	int placed;    /* fixed by --section */
	uint8_t *data; /* NULL for SECF_NOBITS */
} OutSec;

typedef struct {
	int out;      /* output section */
	uint32_t off; /* of this input section in it */
} Piece;

typedef struct {
	Obj *const *objs;
	int n;
	const Chip *chip;
	Diag *d;
	OutSec *sec;
	int nsec;
	Piece **piece; /* [obj][section] */
	int *order;    /* output order of sec[] */
} Linker;

enum { MAX_IMAGE = 1 << 21 }; /* 21-bit tile addresses (isa.md 8) */

static const char *
oname(const Obj *o)
{
	return o->name ? o->name : "<object>";
}

static int
find_out(Linker *L, const char *name)
{
	for (int i = 0; i < L->nsec; i++)
		if (!strcmp(L->sec[i].name, name))
			return i;
	return -1;
}

static int
collect(Linker *L)
{
	L->piece = xcalloc((size_t)L->n, sizeof *L->piece);
	for (int i = 0; i < L->n; i++) {
		const Obj *o = L->objs[i];
		L->piece[i] = xcalloc((size_t)o->nsec + 1, sizeof **L->piece);
		for (int j = 0; j < o->nsec; j++) {
			const ObjSection *s = &o->sec[j];
			int k = find_out(L, s->name);
			if (k < 0) {
				L->sec =
				    xrealloc(L->sec, (size_t)(L->nsec + 1) *
				                         sizeof *L->sec);
				k = L->nsec++;
				L->sec[k] = (OutSec){.name = s->name,
				                     .flags = s->flags,
				                     .align = 1};
			}
			OutSec *out = &L->sec[k];
			uint32_t kind = SECF_EXEC | SECF_NOBITS;
			if ((out->flags & kind) != (s->flags & kind))
				return diag_set(
				    L->d, IPU_EINVAL, oname(o), 0, 0,
				    "section %s has different flags "
				    "(code/data/no-bits) than in an "
				    "earlier object",
				    s->name);
			uint32_t a = s->align ? s->align : 1;
			out->size = align_up(out->size, a);
			L->piece[i][j] = (Piece){k, (uint32_t)out->size};
			out->size += s->size;
			if (a > out->align)
				out->align = a;
			if (out->size > MAX_IMAGE)
				return diag_set(
				    L->d, IPU_ERANGE, oname(o), 0, 0,
				    "section %s exceeds the 2 MiB tile "
				    "address space",
				    s->name);
		}
	}
	return 0;
}

static int
group(const OutSec *s)
{
	return s->flags & SECF_EXEC ? 0 : s->flags & SECF_NOBITS ? 2 : 1;
}

static int
overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

static int
place(Linker *L, const LinkOptions *opt)
{
	const Chip *c = L->chip;
	L->order = xcalloc((size_t)L->nsec + 1, sizeof *L->order);
	int k = 0;
	for (int g = 0; g < 3; g++)
		for (int i = 0; i < L->nsec; i++)
			if (group(&L->sec[i]) == g)
				L->order[k++] = i;
	for (int i = 0; opt && i < opt->nplace; i++) {
		int s = find_out(L, opt->place[i].name);
		if (s < 0)
			return diag_set(
			    L->d, IPU_EINVAL, NULL, 0, 0,
			    "--section %s: no input has a section of "
			    "that name",
			    opt->place[i].name);
		if (opt->place[i].addr % L->sec[s].align)
			return diag_set(L->d, IPU_EINVAL, NULL, 0, 0,
			                "--section %s=0x%x: the section needs "
			                "%u-byte alignment",
			                opt->place[i].name, opt->place[i].addr,
			                L->sec[s].align);
		L->sec[s].addr = opt->place[i].addr;
		L->sec[s].placed = 1;
	}
	uint64_t cursor = c->mem_base;
	for (int i = 0; i < L->nsec; i++) {
		OutSec *s = &L->sec[L->order[i]];
		if (s->placed)
			continue;
		cursor = align_up(cursor, s->align);
		for (int moved = 1; moved;) {
			moved = 0;
			for (int j = 0; j < L->nsec; j++) {
				const OutSec *f = &L->sec[j];
				if (f->placed && overlaps(cursor, s->size,
				                          f->addr, f->size)) {
					cursor = align_up(f->addr + f->size,
					                  s->align);
					moved = 1;
				}
			}
		}
		if (cursor + s->size > UINT32_MAX)
			cursor = UINT32_MAX - s->size; /* reported below */
		s->addr = (uint32_t)cursor;
		s->placed = 2;
		cursor += s->size;
	}
	return 0;
}

static int
check_layout(Linker *L)
{
	const Chip *c = L->chip;
	for (int i = 0; i < L->nsec; i++) {
		const OutSec *s = &L->sec[i];
		uint64_t end = (uint64_t)s->addr + s->size;
		if (!s->size)
			continue;
		if (s->addr < c->mem_base || end > c->mem_end)
			return diag_set(
			    L->d, IPU_ERANGE, NULL, 0, 0,
			    "section %s [0x%x, 0x%llx) does not fit "
			    "in tile memory [0x%x, 0x%x) of the %s",
			    s->name, s->addr, (unsigned long long)end,
			    c->mem_base, c->mem_end, c->name);
		if ((s->flags & SECF_EXEC) && end > c->exec_end)
			return diag_set(
			    L->d, IPU_ERANGE, NULL, 0, 0,
			    "code section %s ends at 0x%llx, beyond "
			    "0x%x where instruction fetch stops on "
			    "the %s",
			    s->name, (unsigned long long)end, c->exec_end,
			    c->name);
		for (int j = 0; j < i; j++) {
			const OutSec *t = &L->sec[j];
			if (overlaps(s->addr, s->size, t->addr, t->size))
				return diag_set(L->d, IPU_EINVAL, NULL, 0, 0,
				                "sections %s and %s overlap",
				                t->name, s->name);
		}
	}
	return 0;
}

/* ---- symbols ---- */

static int
defines(const ObjSymbol *s)
{
	return s->bind == SYMB_GLOBAL && s->section != OBJ_UNDEF &&
	       s->type != SYMT_SECTION;
}

static int
check_duplicates(Linker *L)
{
	for (int i = 0; i < L->n; i++)
		for (int a = 0; a < L->objs[i]->nsym; a++) {
			const ObjSymbol *s = &L->objs[i]->sym[a];
			if (!defines(s))
				continue;
			for (int j = 0; j <= i; j++)
				for (int b = 0; b < L->objs[j]->nsym; b++) {
					if (j == i && b >= a)
						break;
					const ObjSymbol *t =
					    &L->objs[j]->sym[b];
					if (defines(t) &&
					    !strcmp(s->name, t->name))
						return diag_set(
						    L->d, IPU_EINVAL, NULL, 0,
						    0,
						    "duplicate definition of "
						    "global symbol '%s' in %s "
						    "and %s",
						    s->name, oname(L->objs[j]),
						    oname(L->objs[i]));
				}
		}
	return 0;
}

/* Final address of symbol `sym` of object `obj`; -1 if undefined. */
static int64_t
sym_addr(Linker *L, int obj, int sym)
{
	const ObjSymbol *s = &L->objs[obj]->sym[sym];
	if (s->section >= 0) {
		const Piece *p = &L->piece[obj][s->section];
		return (int64_t)L->sec[p->out].addr + p->off + s->value;
	}
	if (s->section == OBJ_ABS)
		return s->value;
	for (int i = 0; i < L->n; i++)
		for (int j = 0; j < L->objs[i]->nsym; j++)
			if (defines(&L->objs[i]->sym[j]) &&
			    !strcmp(L->objs[i]->sym[j].name, s->name))
				return sym_addr(L, i, j);
	return -1;
}

/* ---- relocations ---- */

static int
apply_one(Linker *L, int obj, const ObjReloc *r)
{
	const Obj *o = L->objs[obj];
	const Piece *p = &L->piece[obj][r->section];
	OutSec *out = &L->sec[p->out];
	const char *symname = o->sym[r->symbol].name;
	const char *secname = o->sec[r->section].name;
	int64_t S = sym_addr(L, obj, r->symbol);
	if (S < 0)
		return diag_set(L->d, IPU_EINVAL, NULL, 0, 0,
		                "undefined symbol '%s' (referenced from %s, "
		                "%s+0x%x)",
		                symname, oname(o), secname, r->offset);
	int64_t v = S + r->addend;
	uint8_t *at = out->data + p->off + r->offset;
	if (r->type < R_IPU_OPERAND0) {
		int width = r->type == R_IPU_32   ? 4
		            : r->type == R_IPU_16 ? 2
		                                  : 1;
		int64_t lo = -((int64_t)1 << (8 * width - 1));
		int64_t hi = ((int64_t)1 << (8 * width)) - 1;
		if (v < lo || v > hi)
			return diag_set(
			    L->d, IPU_ERANGE, NULL, 0, 0,
			    "relocation against '%s' in %s %s+0x%x: "
			    "value 0x%llx does not fit %d bytes "
			    "(%lld..%lld)",
			    symname, oname(o), secname, r->offset, (long long)v,
			    width, (long long)lo, (long long)hi);
		for (int i = 0; i < width; i++)
			at[i] = (uint8_t)((uint64_t)v >> (8 * i));
		return 0;
	}
	uint32_t w = (uint32_t)at[0] | (uint32_t)at[1] << 8 |
	             (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
	Insn in;
	int row = isa_decode(w, ARCH_IPU21, &in);
	int op = (int)(r->type - R_IPU_OPERAND0);
	const InsnDesc *d = row >= 0 ? isa_row(row) : NULL;
	if (!d || op >= d->nops)
		return diag_set(L->d, IPU_EINVAL, NULL, 0, 0,
		                "%s %s+0x%x: relocation is not on an "
		                "instruction operand",
		                oname(o), secname, r->offset);
	const OperandSpec *s = &d->op[op];
	if (s->word)
		return diag_set(L->d, IPU_EINVAL, NULL, 0, 0,
		                "%s %s+0x%x: relocation of operand %d of %s, "
		                "which is in the instruction's second word "
		                "(data): it cannot be relocated",
		                oname(o), secname, r->offset, op + 1,
		                d->variant);
	if (!isa_operand_fits(s, v)) {
		char range[96];
		obj_operand_range(s, range, sizeof range);
		return diag_set(L->d, IPU_ERANGE, NULL, 0, 0,
		                "relocation against '%s' in %s %s+0x%x: value "
		                "0x%llx does not fit operand %d of %s (allowed "
		                "%s)",
		                symname, oname(o), secname, r->offset,
		                (long long)v, op + 1, d->variant, range);
	}
	w = (w & ~obj_operand_mask(s)) | isa_encode_operand(s, v);
	for (int i = 0; i < 4; i++)
		at[i] = (uint8_t)(w >> (8 * i));
	return 0;
}

static int
apply_relocs(Linker *L)
{
	for (int i = 0; i < L->nsec; i++) {
		OutSec *s = &L->sec[i];
		if (!(s->flags & SECF_NOBITS))
			s->data = xcalloc((size_t)s->size + 1, 1);
	}
	for (int i = 0; i < L->n; i++) {
		const Obj *o = L->objs[i];
		for (int j = 0; j < o->nsec; j++) {
			const Piece *p = &L->piece[i][j];
			OutSec *out = &L->sec[p->out];
			if (out->data && o->sec[j].data)
				memcpy(out->data + p->off, o->sec[j].data,
				       o->sec[j].size);
		}
		for (int r = 0; r < o->nrel; r++) {
			int err = apply_one(L, i, &o->rel[r]);
			if (err)
				return err;
		}
	}
	return 0;
}

/* ---- output ---- */

static int
entry_point(Linker *L, const Obj *img, const char *want, uint32_t *entry)
{
	static const char *const defaults[] = {"_start", "main"};
	for (int k = 0; k < 2; k++) {
		const char *name = want ? want : defaults[k];
		for (int bind = SYMB_GLOBAL; bind >= SYMB_LOCAL; bind--)
			for (int i = 0; i < img->nsym; i++)
				if (img->sym[i].bind == bind &&
				    img->sym[i].section != OBJ_ABS &&
				    !strcmp(img->sym[i].name, name)) {
					*entry = img->sym[i].value;
					return 0;
				}
		if (want)
			return diag_set(L->d, IPU_EINVAL, NULL, 0, 0,
			                "entry symbol '%s' is not defined",
			                want);
	}
	*entry = L->chip->mem_base;
	for (int i = 0; i < img->nsec; i++)
		if (img->sec[i].flags & SECF_EXEC) {
			*entry = img->sec[i].addr;
			break;
		}
	return 0;
}

static Obj *
build_image(Linker *L)
{
	Obj *img = obj_new(OBJ_EXEC, NULL);
	int *outidx = xcalloc((size_t)L->nsec + 1, sizeof *outidx);
	for (int i = 0; i < L->nsec; i++) {
		OutSec *s = &L->sec[L->order[i]];
		int k = obj_add_section(img, s->name, s->flags, s->align);
		img->sec[k].size = (uint32_t)s->size;
		img->sec[k].addr = s->addr;
		img->sec[k].data = s->data;
		s->data = NULL;
		outidx[L->order[i]] = k;
	}
	for (int i = 0; i < L->n; i++) {
		const Obj *o = L->objs[i];
		img->flags |= o->flags;
		for (int j = 0; j < o->nsym; j++) {
			const ObjSymbol *s = &o->sym[j];
			if (s->type == SYMT_SECTION || s->section == OBJ_UNDEF)
				continue;
			ObjSymbol t = *s;
			t.value = (uint32_t)sym_addr(L, i, j);
			if (s->section >= 0)
				t.section = outidx[L->piece[i][s->section].out];
			obj_add_symbol(img, &t);
		}
	}
	free(outidx);
	return img;
}

static void
linker_free(Linker *L)
{
	for (int i = 0; i < L->n && L->piece; i++)
		free(L->piece[i]);
	free(L->piece);
	for (int i = 0; i < L->nsec; i++)
		free(L->sec[i].data);
	free(L->sec);
	free(L->order);
}

int
link_objects(Obj *const *objs, int n, const LinkOptions *opt, Obj **out,
             Diag *d)
{
	Linker L = {.objs = objs, .n = n, .d = d};
	L.chip = opt && opt->chip ? opt->chip : chip_default();
	*out = NULL;
	for (int i = 0; i < n; i++) {
		if (objs[i]->kind != OBJ_REL)
			return diag_set(d, IPU_EINVAL, oname(objs[i]), 0, 0,
			                "is a linked image, not a relocatable "
			                "object");
		if ((objs[i]->flags & OBJF_IPU21) && L.chip->arch != ARCH_IPU21)
			return diag_set(d, IPU_EINVAL, oname(objs[i]), 0, 0,
			                "uses ipu21 instructions, which the %s "
			                "does not have",
			                L.chip->name);
	}
	int err = collect(&L);
	if (!err)
		err = place(&L, opt);
	if (!err)
		err = check_layout(&L);
	if (!err)
		err = check_duplicates(&L);
	if (!err)
		err = apply_relocs(&L);
	if (!err) {
		Obj *img = build_image(&L);
		err =
		    entry_point(&L, img, opt ? opt->entry : NULL, &img->entry);
		if (err)
			obj_free(img);
		else
			*out = img;
	}
	linker_free(&L);
	return err;
}

/* ---- images for the emulator ---- */

int
img_from_obj(Obj *o, TileImage *img, Diag *d)
{
	memset(img, 0, sizeof *img);
	img->obj = o;
	img->entry = o->entry;
	img->seg = xcalloc((size_t)o->nsec + 1, sizeof *img->seg);
	for (int i = 0; i < o->nsec; i++) {
		const ObjSection *s = &o->sec[i];
		if (!s->size)
			continue;
		TileSegment *g = &img->seg[img->nseg++];
		g->addr = s->addr;
		g->size = s->size;
		g->bytes = xcalloc(s->size, 1);
		if (s->data)
			memcpy(g->bytes, s->data, s->size);
		g->exec = !!(s->flags & SECF_EXEC);
		g->name = s->name;
	}
	return IPU_OK;
}

int
img_read(const uint8_t *data, size_t len, TileImage *img, Diag *d)
{
	Obj *o;
	memset(img, 0, sizeof *img);
	int r = obj_read(data, len, NULL, &o, d);
	if (r)
		return r;
	if (o->kind != OBJ_EXEC) {
		obj_free(o);
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "a relocatable object, not a linked image");
	}
	return img_from_obj(o, img, d);
}

int
img_load(const uint8_t *data, size_t len, const char *name, const Chip *chip,
         TileImage *img, Diag *d)
{
	Obj *o, *exe;
	memset(img, 0, sizeof *img);
	int r = obj_read(data, len, name, &o, d);
	if (r)
		return r;
	if (o->kind == OBJ_EXEC)
		return img_from_obj(o, img, d);
	LinkOptions opt = {.chip = chip};
	r = link_objects(&o, 1, &opt, &exe, d);
	obj_free(o);
	if (r)
		return r;
	return img_from_obj(exe, img, d);
}

int
img_load_file(const char *path, const Chip *chip, TileImage *img, Diag *d)
{
	uint8_t *data;
	size_t len;
	memset(img, 0, sizeof *img);
	int r = read_file(path, &data, &len, d);
	if (r)
		return r;
	r = img_load(data, len, path, chip, img, d);
	free(data);
	return r;
}

void
img_free(TileImage *img)
{
	for (int i = 0; i < img->nseg; i++)
		free(img->seg[i].bytes);
	free(img->seg);
	obj_free(img->obj);
	memset(img, 0, sizeof *img);
}

const char *
img_symbol(const TileImage *img, uint32_t addr, uint32_t *offset)
{
	const ObjSymbol *best = NULL;
	const Obj *o = img->obj;
	for (int i = 0; o && i < o->nsym; i++) {
		const ObjSymbol *s = &o->sym[i];
		if (s->section < 0 || s->type == SYMT_SECTION ||
		    s->value > addr)
			continue;
		if (!best || s->value > best->value ||
		    (s->value == best->value && s->bind > best->bind))
			best = s;
	}
	if (best && offset)
		*offset = addr - best->value;
	return best ? best->name : NULL;
}

int64_t
img_symbol_addr(const TileImage *img, const char *name)
{
	const Obj *o = img->obj;
	for (int bind = SYMB_GLOBAL; bind >= SYMB_LOCAL; bind--)
		for (int i = 0; o && i < o->nsym; i++)
			if (o->sym[i].bind == bind &&
			    o->sym[i].section != OBJ_UNDEF &&
			    !strcmp(o->sym[i].name, name))
				return o->sym[i].value;
	return -1;
}

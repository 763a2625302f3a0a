/*
 * pseudo.c - pseudo-instructions and operand short forms: what Graphcore's
 * assembler accepts beyond the instruction table (docs/assembler.md,
 * "Pseudo-instructions").
 *
 * Each statement is rewritten into one or two real instructions named by a
 * mnemonic or a variant name, with operands in table order, before its
 * bytes are reserved. The rules are those of the Colossus LLVM backend's
 * InstAlias and AsmPseudo definitions (ColossusInstrInfo.td) and its memory
 * operand parser (parseMEM3Operand), except for nop and fnop, whose words
 * stay ours (see the docs). Nothing here knows an encoding.
 */
#include "asmpriv.h"

#include <string.h>

static void
set_reg(ParsedOp *op, AopClass cls, int nregs, int num, int col)
{
	memset(op, 0, sizeof *op);
	op->a = (AsmOperand){.cls = cls, .nregs = (uint8_t)nregs, .value = num};
	op->col = col;
}

static void
set_imm(As *as, ParsedOp *op, int64_t v, int col)
{
	memset(op, 0, sizeof *op);
	op->a.cls = AOP_IMM;
	op->e = expr_num(&as->hooks, v, col);
	op->col = col;
}

/* A plain register of class cls and nregs registers (no decoration). */
static int
reg(const ParsedOp *op, AopClass cls, int nregs)
{
	return op->a.cls == cls && op->a.nregs == nregs &&
	       op->a.decor == DEC_NONE;
}

static int
mreg(const ParsedOp *op)
{
	return reg(op, AOP_MREG, 1);
}

static int
areg(const ParsedOp *op)
{
	return reg(op, AOP_AREG, 1);
}

static RealInsn *
start(RealInsn *r, const char *mnem, int nops)
{
	memset(r, 0, sizeof *r);
	r->mnem = mnem;
	r->nops = nops;
	return r;
}

/* Aliases that only force a variant of a real mnemonic, operands as
 * written (LLVM's adds, addz, ... InstAliases). */
static const struct {
	const char *alias, *variant;
} variant_alias[] = {
    {"adds", "add_mmmn_si"},
    {"addz", "add_mmmn_zi"},
    {"cmpeqs", "cmpeq_mmmn_si"},
    {"cmpeqz", "cmpeq_mmmn_zi"},
    {"maxs", "max_mmmn_si"},
    {"maxz", "max_mmmn_zi"},
    {"mins", "min_mmmn_si"},
    {"minz", "min_mmmn_zi"},
    {"subs", "sub_mmmn_si"},
    {"subz", "sub_mmmn_zi"},
    {"f16v4sisov2amp", "f16v4sisoamp_aaan_ef"},
    {"f16v4sisov2slic", "f16v4sisoslic_aaan_ef"},
};

/* ldconst $r, value: setzi $r, value & 0xfffff, then, when the top 12 bits
 * are not zero, or $r, $r, value & 0xfff00000 (LLVM's ExpandMacroLdconst).
 * The value must be a constant known here, as in LLVM. */
static int
ldconst(As *as, const SrcPos *pos, int mcol, const ParsedOp *ops, int nops,
        RealInsn *out)
{
	int64_t v;
	if (nops != 2 || !(mreg(&ops[0]) || areg(&ops[0])) ||
	    ops[1].a.cls != AOP_IMM) {
		as_error(as, pos, mcol,
		         "'ldconst' takes a register and a constant: ldconst "
		         "$mN, value or ldconst $aN, value");
		return -1;
	}
	if (as->in_bundle) {
		as_error(as, pos, mcol,
		         "'ldconst' may expand to two instructions and cannot "
		         "be bundled");
		return -1;
	}
	if (as_const(as, ops[1].e, &v))
		return -1;
	if (v < INT32_MIN || v > UINT32_MAX) {
		as_error(as, pos, ops[1].col,
		         "ldconst value %lld does not fit 32 bits",
		         (long long)v);
		return -1;
	}
	uint32_t u = (uint32_t)v;
	int aux = ops[0].a.cls == AOP_AREG;
	RealInsn *r =
	    start(&out[0], aux ? "setzi_aaan_zi" : "setzi_mmmn_zi", 2);
	r->op[0] = ops[0];
	set_imm(as, &r->op[1], u & 0xfffff, ops[1].col);
	if (!(u & 0xfff00000u))
		return 1;
	r = start(&out[1], aux ? "or_aaan_iz" : "or_mmmn_iz", 3);
	r->op[0] = ops[0];
	r->op[1] = ops[0];
	set_imm(as, &r->op[2], u & 0xfff00000u, ops[1].col);
	return 2;
}

/* The load/store short forms of parseMEM3Operand: `ld32 $m1, $m2, 4` and
 * `ld32 $m1, $m2, $m3` leave out the delta register, which is $mzero. Such
 * a form is tried for a mnemonic that has no three-operand row and has a
 * memory row (data, base, delta, offset). */
static int
short_memory(As *as, const char *mn, const ParsedOp *ops, int nops,
             RealInsn *out)
{
	const int16_t *rows;
	int n = isa_rows_by_mnemonic(mn, &rows), mem = 0;
	if (nops != 3 || !mreg(&ops[1]) ||
	    !(ops[2].a.cls == AOP_IMM || mreg(&ops[2])))
		return 0;
	for (int i = 0; i < n; i++) {
		const InsnDesc *d = isa_row(rows[i]);
		if (d->nops == 3)
			return 0;
		if (d->nops == 4 && (d->flags & (F_LOAD | F_STORE)) &&
		    d->op[1].kind == OPK_M && d->op[1].decor == DEC_NONE &&
		    d->op[2].kind == OPK_M && d->op[2].decor == DEC_NONE &&
		    d->op[3].decor == DEC_NONE)
			mem = 1;
	}
	if (!mem)
		return 0;
	RealInsn *r = start(out, mn, 4);
	r->op[0] = ops[0];
	r->op[1] = ops[1];
	set_reg(&r->op[2], AOP_MREG, 1, 15, ops[2].col);
	r->op[3] = ops[2];
	return 1;
}

/* Operand spellings Graphcore's assembler takes for what the table writes
 * otherwise: `:B` and `:BL` are one broadcast (COLOSSUS_TOP_BCAST_F32 =
 * COLOSSUS_TOP_BCAST_F16L = 2 in LLVM's ColossusDefinesGenerated.h), so
 * f16v4mul $a2:3, $a0:B, $a4:5 is the :BL row; and $azero in a memory
 * operand is register 15, $mzero (LLVM's memory operands take any register
 * by its number; poplibs writes ld32 $a0, $m4, $azero, 0). */
static void
normalize(const char *mn, ParsedOp *ops, int nops)
{
	const int16_t *rows;
	int n = isa_rows_by_mnemonic(mn, &rows);
	for (int k = 0; k < nops; k++) {
		AsmOperand *a = &ops[k].a;
		int mreg = 0, areg = 0; /* rows' kinds at k: memory operand? */
		for (int i = 0; i < n; i++) {
			const InsnDesc *d = isa_row(rows[i]);
			if (d->nops != nops)
				continue;
			mreg |= d->op[k].kind == OPK_M &&
			        (d->flags & (F_LOAD | F_STORE));
			areg |= d->op[k].kind == OPK_A;
		}
		if (mreg && !areg && a->cls == AOP_AREG && a->nregs == 1 &&
		    a->value == 15 && a->decor == DEC_NONE)
			a->cls = AOP_MREG;
		if (a->decor != DEC_B && a->decor != DEC_BL)
			continue;
		Decor want = a->decor, twin = want == DEC_B ? DEC_BL : DEC_B;
		int has = 0, has_twin = 0;
		for (int i = 0; i < n; i++) {
			const InsnDesc *d = isa_row(rows[i]);
			if (d->nops == nops) {
				has |= d->op[k].decor == want;
				has_twin |= d->op[k].decor == twin;
			}
		}
		if (!has && has_twin)
			a->decor = (Decor)twin;
	}
}

int
pseudo_expand(As *as, const SrcPos *pos, const char *mn, int mcol,
              ParsedOp *ops, int nops, RealInsn *out)
{
	RealInsn *r;
	normalize(mn, ops, nops);
	for (size_t i = 0; i < sizeof variant_alias / sizeof variant_alias[0];
	     i++)
		if (!strcmp(mn, variant_alias[i].alias)) {
			r = start(out, variant_alias[i].variant, nops);
			memcpy(r->op, ops, (size_t)nops * sizeof *ops);
			return 1;
		}
	if (!strcmp(mn, "nop") || !strcmp(mn, "fnop") || !strcmp(mn, "strap")) {
		if (nops) {
			as_error(as, pos, mcol, "'%s' takes no operands", mn);
			return -1;
		}
		if (!strcmp(mn, "strap")) { /* put 255, $mzero */
			r = start(out, "put_mmmn_zi", 2);
			set_imm(as, &r->op[0], 255, mcol);
			set_reg(&r->op[1], AOP_MREG, 1, 15, mcol);
			return 1;
		}
		/* Ours: or $mzero, $mzero, 0 / or $azero, $azero, 0. */
		int aux = mn[0] == 'f';
		AopClass c = aux ? AOP_AREG : AOP_MREG;
		r = start(out, aux ? "or_aaan_zi" : "or_mmmn_zi", 3);
		set_reg(&r->op[0], c, 1, 15, mcol);
		set_reg(&r->op[1], c, 1, 15, mcol);
		set_imm(as, &r->op[2], 0, mcol);
		r->fnop = aux;
		return 1;
	}
	if (!strcmp(mn, "zero")) {
		/* or $d, $zero, $zero with the register form of its file */
		static const struct {
			AopClass cls;
			int nregs, zero;
			const char *variant;
		} z[] = {{AOP_MREG, 1, 15, "or_mmmn"},
		         {AOP_AREG, 1, 15, "or_aaan"},
		         {AOP_AREG, 2, 14, "or64_aaan"}};
		for (size_t i = 0; nops == 1 && i < sizeof z / sizeof z[0]; i++)
			if (reg(&ops[0], z[i].cls, z[i].nregs)) {
				r = start(out, z[i].variant, 3);
				r->op[0] = ops[0];
				set_reg(&r->op[1], z[i].cls, z[i].nregs,
				        z[i].zero, ops[0].col);
				set_reg(&r->op[2], z[i].cls, z[i].nregs,
				        z[i].zero, ops[0].col);
				return 1;
			}
		as_error(as, pos, mcol,
		         "'zero' takes one register: zero $mN, zero $aN or "
		         "zero $aN:N+1");
		return -1;
	}
	if (!strcmp(mn, "mov")) {
		if (nops == 2 && ((mreg(&ops[0]) && mreg(&ops[1])) ||
		                  (areg(&ops[0]) && areg(&ops[1])))) {
			r = start(out,
			          areg(&ops[0]) ? "or_aaan_zi" : "or_mmmn_zi",
			          3);
			r->op[0] = ops[0];
			r->op[1] = ops[1];
			set_imm(as, &r->op[2], 0, ops[1].col);
			return 1;
		}
		if (nops == 2 && mreg(&ops[0]) && areg(&ops[1])) {
			r = start(out, "atom_mamn", 2);
			memcpy(r->op, ops, 2 * sizeof *ops);
			return 1;
		}
		if (nops == 2 && reg(&ops[0], AOP_AREG, 2) &&
		    reg(&ops[1], AOP_AREG, 2)) {
			r = start(out, "or64_aaan", 3);
			memcpy(r->op, ops, 2 * sizeof *ops);
			set_reg(&r->op[2], AOP_AREG, 2, 14, ops[1].col);
			return 1;
		}
		as_error(as, pos, mcol,
		         "'mov' copies a register: mov $mD, $mS, mov $aD, $aS, "
		         "mov $mD, $aS or mov $aD:D+1, $aS:S+1");
		return -1;
	}
	if (!strcmp(mn, "movnz")) { /* the same operands as movz */
		if (nops != 3 || !mreg(&ops[0]) || !mreg(&ops[1]) ||
		    !mreg(&ops[2])) {
			as_error(as, pos, mcol,
			         "'movnz' takes three registers: movnz $mD, "
			         "$mCond, $mS");
			return -1;
		}
		r = start(out, "movz_mmmn", 3);
		memcpy(r->op, ops, 3 * sizeof *ops);
		return 1;
	}
	if (!strcmp(mn, "swap16")) { /* roll16 $d, $s, $s */
		int m = nops == 2 && mreg(&ops[0]) && mreg(&ops[1]);
		if (!m && !(nops == 2 && areg(&ops[0]) && areg(&ops[1]))) {
			as_error(as, pos, mcol,
			         "'swap16' takes two registers of one file: "
			         "swap16 $mD, $mS or swap16 $aD, $aS");
			return -1;
		}
		r = start(out, m ? "roll16_mmmn" : "roll16_aaan", 3);
		r->op[0] = ops[0];
		r->op[1] = ops[1];
		r->op[2] = ops[1];
		return 1;
	}
	if (!strcmp(mn, "ldconst"))
		return ldconst(as, pos, mcol, ops, nops, out);
	if (!strcmp(mn, "sub") && nops == 3 && mreg(&ops[0]) && mreg(&ops[1]) &&
	    ops[2].a.cls == AOP_IMM) { /* add $d, $s, -imm */
		int64_t v;
		if (as_const(as, ops[2].e, &v))
			return -1;
		r = start(out, "add_mmmn_si", 3);
		r->op[0] = ops[0];
		r->op[1] = ops[1];
		set_imm(as, &r->op[2], (int64_t)(0 - (uint64_t)v), ops[2].col);
		return 1;
	}
	/* get $aN, CSR and put CSR, $aN are uget and uput. */
	if (!strcmp(mn, "get") && nops == 2 && areg(&ops[0])) {
		r = start(out, "uget", 2);
		memcpy(r->op, ops, 2 * sizeof *ops);
		return 1;
	}
	if (!strcmp(mn, "put") && nops == 2 && areg(&ops[1])) {
		r = start(out, "uput", 2);
		memcpy(r->op, ops, 2 * sizeof *ops);
		return 1;
	}
	return short_memory(as, mn, ops, nops, out);
}

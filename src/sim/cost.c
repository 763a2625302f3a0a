/*
 * cost.c - what an instruction costs in time, derived once when it is
 * decoded (tile.c's decode cache) from its table row and the chip's timing
 * profile (target/timing.def, docs/fidelity.md). tile.c's issue loop
 * applies the result; nothing else in the emulator knows a timing rule of
 * single instructions.
 *
 *   turns    worker turns the instruction takes: a transcendental keeps its
 *            worker from issuing again for that many turns
 *   reads    the $m registers it reads: a supervisor instruction waits
 *            until the values it reads are out of the pipeline (sup-dep)
 *   hazard   SIM_HZ_JUMP: br, bri, call (sup-branch); SIM_HZ_BRANCH: a
 *            conditional branch (sup-branch when it branches); SIM_HZ_PUT:
 *            a CSR write (sup-put)
 */
#include <pthread.h>
#include <string.h>

#include "sim.h"

/* Per table row: the operands that are $m reads, and the rule timing it. */
static struct {
	uint8_t read_ops; /* bit i: operand i is read */
	uint8_t hazard;
	int8_t rule; /* -1: one turn */
} rows[ISA_ROWS];
static pthread_once_t rows_once = PTHREAD_ONCE_INIT;

/*
 * Operand roles are not in the table; the convention of its supervisor
 * rows gives them: operand 0 is the destination of ALU ops, loads, get,
 * setzi and call (the link), and a source of stores, branches, put, run
 * and runall; every other register operand is read, `+=` ones included
 * (they are read and written). movz writes operand 0 or leaves it, so it
 * does not read it (exec_int.c).
 */
static int
op0_is_destination(const InsnDesc *d)
{
	if (d->nops == 0 || (d->op[0].kind != OPK_M && d->op[0].kind != OPK_MP))
		return 0;
	if (d->op[0].decor == DEC_PINC || (d->flags & F_STORE))
		return 0;
	if ((d->flags & F_CONTROL) && strcmp(d->mnemonic, "call"))
		return 0;
	return strcmp(d->mnemonic, "run") && strcmp(d->mnemonic, "runall");
}

static void
rows_init(void)
{
	for (int r = 0; r < isa_rows(); r++) {
		const InsnDesc *d = isa_row(r);
		uint8_t ops = 0;
		for (int i = 0; i < d->nops; i++)
			if (d->op[i].kind == OPK_M || d->op[i].kind == OPK_MP)
				ops |= (uint8_t)(1u << i);
		if (op0_is_destination(d))
			ops &= (uint8_t)~1u;
		rows[r].read_ops = ops;
		int jump = !strcmp(d->mnemonic, "br") ||
		           !strcmp(d->mnemonic, "bri") ||
		           !strcmp(d->mnemonic, "call");
		rows[r].hazard = (jump                   ? SIM_HZ_JUMP
		                  : d->flags & F_CONTROL ? SIM_HZ_BRANCH
		                                         : 0) |
		                 (!strcmp(d->mnemonic, "put") ? SIM_HZ_PUT : 0);
		rows[r].rule = (int8_t)timing_rule_by_mnemonic(d->mnemonic);
	}
}

void
sim_insn_cost(const Chip *c, DInsn *dc)
{
	pthread_once(&rows_once, rows_init);
	const InsnDesc *d = dc->d;
	int row = dc->in.row;
	uint16_t reads = 0;
	for (int i = 0; i < d->nops; i++) {
		if (!(rows[row].read_ops & (1u << i)))
			continue;
		int reg = dc->in.op[i];
		reads |= (uint16_t)(1u << reg);
		if (d->op[i].kind == OPK_MP)
			reads |= (uint16_t)(1u << (reg + 1));
	}
	dc->reads = reads & 0x7fff; /* $mzero is never waited for */
	dc->hazard = rows[row].hazard;
	uint32_t turns =
	    rows[row].rule < 0 ? 1 : chip_rule(c, (TimingRule)rows[row].rule);
	dc->turns = (uint16_t)(turns < 0xffff ? turns : 0xffff);
}

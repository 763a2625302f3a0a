/*
 * print.c - the plan as text (ipu compile --dump=plan) and its verifier.
 * A line per op: its index, kind and output, the first tiles of the
 * layouts it makes, each input's way there (and the exchange's price),
 * a matmul's GEMM plan and where its weight is stored, and the weight
 * balance's choices.
 */
#include "plan.h"

#include <inttypes.h>

static const char *const conv_name[CONV_COUNT] = {
    "as-is", "host", "host-copy", "loop-copies", "move", "pack", "transpose"};

void
plan_print(const Plan *p, FILE *f)
{
	fprintf(f, "# plan: %u tiles", p->tiles);
	if (p->opt.weight_copies)
		fputs(", weight copies", f);
	if (p->carry_op >= 0 && p->carry_c.pk)
		fprintf(f, "; the loop's carry laid out as op %d's C",
		        p->carry_op);
	fputc('\n', f);
	for (int k = 0; k < p->ncarry_tried; k++) {
		const PlanCarry *c = &p->carry_tried[k];
		fputs("# the loop's carry as ", f);
		if (c->op < 0)
			fputs("carry_in's home", f);
		else
			fprintf(f, "op %d's C", c->op);
		if (c->failed)
			fprintf(f, ": no plan (%s)\n", c->why);
		else
			fprintf(f,
			        ": %" PRIu64 " cycles, %u bytes on a tile%s\n",
			        c->cycles, c->bytes,
			        c->op == p->carry_op ? " (chosen)" : "");
	}
	const Graph *g = p->g;
	for (int i = 0; i < p->nop; i++) {
		const Op *op = &g->ops[i];
		const OpPlan *o = &p->op[i];
		const OpDesc *od = op_desc(op->kind);
		fprintf(f, "op %d %s %s: tile0 %u", i, od->name,
		        graph_tensor(g, op->out)->name, o->tile0);
		for (int k = 0; k < od->nin; k++) {
			fprintf(f, "; %s %s", graph_tensor(g, op->in[k])->name,
			        conv_name[o->in[k].kind]);
			if (o->in[k].cycles)
				fprintf(f, " %" PRIu64 " cycles",
				        o->in[k].cycles);
		}
		if (op->kind == OP_MATMUL) {
			char text[512];
			plan_gemm_describe(&o->gemm, text, sizeof text);
			fprintf(f, "; %s; %u side by side; B %s", text,
			        o->group,
			        o->spread_b ? "by the weight balance"
			                    : "in its grid");
			uint8_t fit = p->opt.fit ? p->opt.fit[i] : 0;
			if (fit & PLAN_FIT_NO_COPIES)
				fputs("; no weight copies (measured)", f);
			if (fit & PLAN_FIT_HALF)
				fputs("; within half a tile (measured)", f);
			if (fit & PLAN_FIT_NO_OVERLAP)
				fputs("; no overlapped superstep (measured)",
				      f);
		}
		if (o->owners.n) {
			fputs("; weight blocks on tiles", f);
			for (uint32_t k = 0; k < o->owners.n; k++)
				fprintf(f, " %u", o->owners.tile[k]);
		}
		fputc('\n', f);
	}
}

int
plan_verify(const Plan *p, Diag *d)
{
	const Graph *g = p->g;
	for (int i = 0; i < p->nop; i++) {
		const Op *op = &g->ops[i];
		const OpPlan *o = &p->op[i];
		const char *why = NULL;
		if (o->tile0 >= p->tiles || o->in_tile0 >= p->tiles ||
		    o->a_tile0 >= p->tiles)
			why = "a first tile outside the plan's tiles";
		for (uint32_t k = 0; !why && k < o->owners.n; k++)
			if (o->owners.tile[k] >= p->tiles)
				why = "a weight block outside the plan's tiles";
		for (int k = 0; !why && k < op_desc(op->kind)->nin; k++)
			if (o->in[k].kind >= CONV_COUNT)
				why = "an input's way in is unknown";
		if (!why && op->kind == OP_MATMUL &&
		    (uint64_t)o->tile0 + (uint64_t)o->group * o->gemm.pk *
		                             o->gemm.pm * o->gemm.pn >
		        p->tiles)
			why = "the GEMMs' grids pass the plan's tiles";
		if (why)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "plan verifier: op %d (%s %s): %s (an "
			                "internal error)",
			                i, op_desc(op->kind)->name,
			                graph_tensor(g, op->out)->name, why);
	}
	return IPU_OK;
}

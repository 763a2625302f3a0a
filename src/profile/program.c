/*
 * program.c - a package's description for a profile (profile.h,
 * ProfProgram): steps with their ops, kernels, runs, predictions and MACs;
 * the loop; where each step's code starts on each tile; each tile's code
 * bytes and the buffers with their categories and lifetimes.
 */
#include <stdlib.h>
#include <string.h>

#include "profile.h"

const char *
profile_mem_name(ProfMem m)
{
	static const char *const names[] = {
#define X(e, name) name,
	    PROFILE_MEM(X)
#undef X
	};
	return m < PM_COUNT ? names[m] : "?";
}

static uint32_t *
dup_u32(const uint32_t *v, uint32_t n)
{
	uint32_t *c = xmalloc(((size_t)n + 1) * sizeof *c);
	if (n)
		memcpy(c, v, n * sizeof *c);
	return c;
}

/* The tile's own program: the segment at its entry. */
static uint32_t
program_end(const Package *pk, uint32_t t)
{
	const PkgTile *pt = &pk->tile[t];
	for (uint32_t i = 0; i < pt->nseg; i++)
		if (pt->seg[i].addr == pt->entry)
			return pt->entry + pk->blob[pt->seg[i].blob].len;
	return pt->entry;
}

ProfProgram *
profile_program(const Package *pk)
{
	ProfProgram *p = xcalloc(1, sizeof *p);
	p->chip = pk->chip;
	p->tiles = pk->tiles;
	p->predicted = pk->total_cycles;
	p->nstep = pk->nstep;
	p->step = xcalloc((size_t)pk->nstep + 1, sizeof *p->step);
	p->loop_first = p->loop_last = -1;
	for (uint32_t i = 0; i < pk->nstep; i++) {
		const PkgStep *s = &pk->step[i];
		p->step[i] =
		    (ProfStep){.kind = s->kind,
		               .what = xstrdup(s->what),
		               .runs = s->runs,
		               .predicted = s->cycles,
		               .overhead = s->overhead,
		               .macs = s->macs,
		               .op = dup_u32(s->op, s->nop),
		               .nop = s->nop,
		               .kernel = dup_u32(s->kernel, s->nkernel),
		               .nkernel = s->nkernel};
		/* the loop: the steps that run more than once, together */
		if (s->runs > 1) {
			if (p->loop_first < 0)
				p->loop_first = (int32_t)i;
			p->loop_last = (int32_t)i;
			p->loop_count = s->runs;
		}
	}
	p->nop = pk->nop;
	p->op = xcalloc((size_t)pk->nop + 1, sizeof *p->op);
	for (uint32_t i = 0; i < pk->nop; i++)
		p->op[i] =
		    (ProfOp){xstrdup(pk->op[i].name), xstrdup(pk->op[i].kind),
		             pk->op[i].macs,
		             chip_peak_macs(pk->chip, (DType)pk->op[i].dtype)};
	p->nkernel = pk->nkernel;
	p->kernel = xcalloc((size_t)pk->nkernel + 1, sizeof *p->kernel);
	for (uint32_t i = 0; i < pk->nkernel; i++)
		p->kernel[i] =
		    (ProfKernel){xstrdup(pk->kernel[i].name),
		                 pk->kernel[i].addr, pk->kernel[i].calls};
	size_t npc = (size_t)pk->tiles * (pk->nstep + 1);
	if (pk->step_pc) {
		p->step_pc = xmalloc(npc * sizeof *p->step_pc);
		memcpy(p->step_pc, pk->step_pc, npc * sizeof *p->step_pc);
	}
	p->code = xcalloc(pk->tiles, sizeof *p->code);
	p->xcode = xcalloc(pk->tiles, sizeof *p->xcode);
	for (uint32_t t = 0; t < pk->tiles; t++) {
		p->code[t] = program_end(pk, t) - pk->chip->mem_base;
		const uint32_t *at =
		    p->step_pc ? p->step_pc + (size_t)t * (pk->nstep + 1)
		               : NULL;
		for (uint32_t s = 0; at && s < pk->nstep; s++)
			if (pk->step[s].kind == PKG_STEP_EXCHANGE)
				p->xcode[t] += at[s + 1] - at[s];
	}
	p->nbuf = pk->nbuf;
	p->buf = xcalloc((size_t)pk->nbuf + 1, sizeof *p->buf);
	for (uint32_t i = 0; i < pk->nbuf; i++) {
		const PkgBuffer *b = &pk->buf[i];
		p->buf[i] = (ProfBuf){b->tile, b->bytes, b->first, b->last,
		                      b->category};
	}
	return p;
}

void
profile_program_free(ProfProgram *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->nstep; i++) {
		free(p->step[i].what);
		free(p->step[i].op);
		free(p->step[i].kernel);
	}
	free(p->step);
	for (uint32_t i = 0; i < p->nop; i++) {
		free(p->op[i].name);
		free(p->op[i].kind);
	}
	free(p->op);
	for (uint32_t i = 0; i < p->nkernel; i++)
		free(p->kernel[i].name);
	free(p->kernel);
	free(p->step_pc);
	free(p->code);
	free(p->xcode);
	free(p->buf);
	free(p);
}

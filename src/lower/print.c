/*
 * print.c - the lowered program as text, for `ipu compile --dump=lower`
 * (before scheduling) and `--dump=sched` (each exchange step's schedule).
 * One line per buffer, step, transfer, call and tensor piece; a buffer
 * reference is "b<id>+<offset>"; lifetimes "first..last" in steps, "end"
 * for a buffer that lives to the end.
 */
#include "lower.h"

#include <inttypes.h>
#include <stdio.h>

static const char *const kind_name[] = {"exchange", "compute"};
static const char *const format_name[] = {"rowmajor", "gemm_b", "gemm_c",
                                          "rowmajor_t", "gemm_b_t"};
static const char *const call_kind[] = {"gemm", "vadd",  "ew",     "rw",
                                        "pack", "wcopy", "gather", "pack_cast"};
_Static_assert(sizeof call_kind / sizeof *call_kind == KC_PACK_CAST + 1,
               "a name for each KernelKind");

static void
print_last(FILE *f, int32_t last)
{
	if (last == INT32_MAX)
		fputs("end", f);
	else
		fprintf(f, "%d", last);
}

static void
print_buffers(const Lowered *l, FILE *f)
{
	for (int i = 0; i < l->nbuf; i++) {
		const Buffer *b = &l->buf[i];
		fprintf(f, "buffer b%d tile %u bytes %u align %u%s steps %d..",
		        i, b->tile, b->bytes, b->align,
		        b->region == REGION_INTERLEAVED ? " interleaved" : "",
		        b->first);
		print_last(f, b->last);
		if (b->apart >= 0)
			fprintf(f, " apart b%d", b->apart);
		fprintf(f, " \"%s\"\n", b->what);
	}
}

static void
print_call(const KernelCall *c, FILE *f)
{
	fprintf(f, "  call tile %u %s (%s %s) args b%d", c->tile, c->kernel,
	        call_kind[c->args.kind], c->object, c->args_at);
	for (int k = 0; k < c->nref; k++)
		fprintf(f, " b%d+%u", c->ref[k].buf, c->ref[k].offset);
	fprintf(f, " cycles %" PRIu64 "\n", c->cycles);
}

/* A transfer; with `sched`, its start and each destination's controls. */
static void
print_transfer(const Transfer *x, int k, int sched, FILE *f)
{
	fprintf(f, "  xfer %d tile %u b%d+%u words %u", k, x->src_tile,
	        x->src.buf, x->src.offset, x->words);
	if (sched)
		fprintf(f, " at %" PRIu64 "%s", x->start,
		        x->wide ? " 64-bit" : "");
	fputs(" ->", f);
	for (uint32_t j = 0; j < x->ndst; j++) {
		fprintf(f, " tile %u b%d+%u", x->dst_tile[j], x->dst[j].buf,
		        x->dst[j].offset);
		if (sched)
			fprintf(f,
			        " (ptr %" PRIu64 " mux %" PRIu64 " off %" PRIu64
			        ")",
			        x->ptr_at[j], x->mux_at[j], x->off_at[j]);
		fputc(j + 1 < x->ndst ? ',' : '\n', f);
	}
}

static void
print_steps(const Lowered *l, int sched, FILE *f)
{
	for (int i = 0; i < l->nstep; i++) {
		const Step *s = &l->step[i];
		if (sched && s->kind != STEP_EXCHANGE)
			continue;
		fprintf(f, "step %d %s \"%s\"", i, kind_name[s->kind], s->what);
		if (sched || s->kind == STEP_COMPUTE)
			fprintf(f, " cycles %" PRIu64, s->cycles);
		fputc('\n', f);
		for (int k = 0; k < s->nxfer; k++)
			print_transfer(&s->xfer[k], k, sched, f);
		for (int k = 0; k < s->ncall && !sched; k++)
			print_call(&s->call[k], f);
	}
}

static void
print_places(const Lowered *l, FILE *f)
{
	for (int i = 0; i < l->ntp; i++) {
		const TensorPlace *tp = &l->tp[i];
		fprintf(f, "tensor %d %u x %u %s\n", tp->tensor, tp->rows,
		        tp->cols, dtype_name(tp->dtype));
		for (int k = 0; k < tp->npiece; k++) {
			const Piece *p = &tp->piece[k];
			fprintf(f,
			        "  piece tile %u b%d+%u rows %u+%u cols %u+%u "
			        "pad %u x %u %s\n",
			        p->tile, p->at.buf, p->at.offset, p->row0,
			        p->rows, p->col0, p->cols, p->pad_rows,
			        p->pad_cols, format_name[p->format]);
		}
	}
}

void
lower_print(const Lowered *l, FILE *f)
{
	fprintf(f, "# lowered: %u tiles, %d buffers, %d steps", l->tiles,
	        l->nbuf, l->nstep);
	if (l->loop_count)
		fprintf(f, "; steps %d..%d run %u times", l->loop_first,
		        l->loop_last, l->loop_count);
	fputc('\n', f);
	print_buffers(l, f);
	print_steps(l, 0, f);
	print_places(l, f);
}

void
lower_print_schedule(const Lowered *l, FILE *f)
{
	fprintf(f, "# schedule: %" PRIu64 " cycles predicted\n",
	        lower_cycles(l));
	print_steps(l, 1, f);
}

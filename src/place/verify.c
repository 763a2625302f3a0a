/*
 * verify.c - placement's result checked on its own terms (compile.c runs
 * it after place_buffers): every buffer that holds bytes lies above its
 * tile's code and below mem_end, aligned, an interleaved one in the
 * interleaved region; two buffers of a tile share bytes only if their
 * lifetimes are disjoint; a buffer and its `apart` partner share no memory
 * element (a 16 KiB element below the interleaved region, a 32 KiB pair in
 * it); and every kernel call's streams that one bundle reads together (a
 * GEMM's A and C, a reduction's sources and its dst) lie, at their placed
 * addresses, in different memory elements (check_streams). A failure is
 * the compiler's own bug.
 */
#include "place.h"

#include <stdlib.h>

typedef struct {
	uint32_t addr, end;
	int32_t id;
} Span;

static int
by_addr(const void *pa, const void *pb)
{
	const Span *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->id - b->id;
}

static int
bad(Diag *d, const Lowered *l, int32_t i, const char *rule)
{
	const Buffer *b = &l->buf[i];
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "placement verifier: buffer %d (%s, tile %u, %u bytes "
	                "at 0x%x, steps %d..%d) %s (an internal error)",
	                i, b->what, b->tile, b->bytes, b->addr, b->first,
	                b->last, rule);
}

/* 1 if [a, a + na) and [b, b + nb) (both non-empty) meet in a memory
 * element: chip_apart_unit's unit, a 32 KiB pair in interleaved memory */
static int
units_meet(const Chip *c, uint32_t a, uint32_t na, uint32_t b, uint32_t nb)
{
	return chip_apart_unit(c, a) <=
	           chip_apart_unit(c, (uint64_t)b + nb - 1) &&
	       chip_apart_unit(c, b) <=
	           chip_apart_unit(c, (uint64_t)a + na - 1);
}

static int
check_bounds(const Lowered *l, const uint32_t *code_end, Diag *d)
{
	const Chip *c = l->chip;
	for (int32_t i = 0; i < l->nbuf; i++) {
		const Buffer *b = &l->buf[i];
		if (!b->bytes)
			continue;
		uint32_t low = code_end ? code_end[b->tile] : c->mem_base;
		if (b->region == REGION_INTERLEAVED && low < c->interleave)
			low = c->interleave;
		if (b->addr < low || (uint64_t)b->addr + b->bytes > c->mem_end)
			return bad(d, l, i,
			           "is outside its tile's data memory");
		if (b->addr % b->align)
			return bad(d, l, i, "is not aligned");
		const Buffer *p = b->apart >= 0 ? &l->buf[b->apart] : NULL;
		if (p && p->bytes &&
		    units_meet(c, b->addr, b->bytes, p->addr, p->bytes))
			return bad(d, l, i,
			           "shares a memory element with its `apart` "
			           "partner");
	}
	return IPU_OK;
}

/* The bytes a call reads in one stream: ref k of call c, n bytes. */
typedef struct {
	const char *name; /* "A", "C", "sources", "dst" */
	int k;
	uint32_t bytes;
} Stream;

/* The two streams of call c that one bundle of its workers reads
 * together (docs/kernel-gemm.md "Memory rules", kernels/vadd.inc): a
 * GEMM's A with its tail and C with its tail (the partial load; the
 * result store trails it by an odd number of atoms, in the other half of
 * the pair), a reduction's sources and its dst (dst and source 0 in one
 * paced load, source 1's load beside dst's store). Returns 0 for a kernel
 * without that rule. */
static int
call_streams(const KernelCall *c, Stream s[2])
{
	if (c->args.kind == KC_GEMM && c->nref >= 3) {
		const GemmCall *g = &c->args.u.gemm;
		s[0] = (Stream){"A", 0,
		                gemm_a_bytes(g->t, g->bm, g->bk) + GEMM_A_TAIL};
		s[1] = (Stream){"C", 2,
		                gemm_c_bytes(g->t, g->bm, g->bn) +
		                    gemm_c_tail(g->t)};
		return 1;
	}
	if (c->args.kind == KC_VADD && c->nref >= 2) {
		const VaddCall *v = &c->args.u.vadd;
		if (!v->nsrc || !v->nseg || !v->atoms)
			return 0;
		uint32_t seg = v->atoms * 8;
		s[0] = (Stream){"dst", 0, (v->nseg - 1) * v->dst_seg + seg};
		s[1] = (Stream){"sources", 1,
		                (v->nsrc - 1) * v->stride +
		                    (v->nseg - 1) * v->src_seg + seg};
		return 1;
	}
	return 0;
}

/* Every call's two streams at their placed addresses in different memory
 * elements: what the emulator stops on as a CONFLICT (docs/emulator-
 * memory.md, rule 4) if not. */
static int
check_streams(const Lowered *l, Diag *d)
{
	for (int32_t s = 0; s < l->nstep; s++) {
		const Step *st = &l->step[s];
		for (int i = 0; st->kind == STEP_COMPUTE && i < st->ncall;
		     i++) {
			const KernelCall *c = &st->call[i];
			Stream x[2];
			if (!call_streams(c, x))
				continue;
			BufRef r0 = c->ref[x[0].k], r1 = c->ref[x[1].k];
			uint32_t a0 = lower_addr(l, r0), a1 = lower_addr(l, r1);
			if (!units_meet(l->chip, a0, x[0].bytes, a1,
			                x[1].bytes))
				continue;
			const Buffer *b0 = &l->buf[r0.buf],
			             *b1 = &l->buf[r1.buf];
			return diag_set(
			    d, IPU_EINVAL, NULL, 0, 0,
			    "placement verifier: tile %u, step %d (%s), call "
			    "%s: "
			    "its %s (buffer %d, %s, 0x%x..0x%x) and its %s "
			    "(buffer %d, %s, 0x%x..0x%x) share a memory "
			    "element, "
			    "which one bundle loads both from (an internal "
			    "error)",
			    c->tile, s, st->what, c->kernel, x[0].name, r0.buf,
			    b0->what, a0, a0 + x[0].bytes, x[1].name, r1.buf,
			    b1->what, a1, a1 + x[1].bytes);
		}
	}
	return IPU_OK;
}

int
place_verify(const Lowered *l, const uint32_t *code_end, Diag *d)
{
	int r = check_bounds(l, code_end, d);
	if (!r)
		r = check_streams(l, d);
	if (r)
		return r;
	/* per tile, by address: each buffer against those that start
	 * before it ends */
	Span *sp = xmalloc(((size_t)l->nbuf + 1) * sizeof *sp);
	uint32_t *count = xcalloc((size_t)l->tiles + 1, sizeof *count);
	for (int32_t i = 0; i < l->nbuf; i++)
		count[l->buf[i].tile + 1]++;
	for (uint32_t t = 0; t < l->tiles; t++)
		count[t + 1] += count[t];
	uint32_t *fill = xcalloc((size_t)l->tiles + 1, sizeof *fill);
	for (int32_t i = 0; i < l->nbuf; i++) {
		const Buffer *b = &l->buf[i];
		sp[count[b->tile] + fill[b->tile]++] =
		    (Span){b->addr, b->addr + b->bytes, i};
	}
	for (uint32_t t = 0; t < l->tiles && !r; t++) {
		Span *s = sp + count[t];
		uint32_t n = count[t + 1] - count[t];
		qsort(s, n, sizeof *s, by_addr);
		for (uint32_t a = 0; a < n && !r; a++)
			for (uint32_t b = a + 1; b < n && s[b].addr < s[a].end;
			     b++) {
				const Buffer *x = &l->buf[s[a].id],
				             *y = &l->buf[s[b].id];
				if (x->bytes && y->bytes &&
				    !(x->last < y->first || y->last < x->first))
					r = bad(d, l, s[b].id,
					        "overlaps a buffer live in the "
					        "same steps");
			}
	}
	free(fill);
	free(count);
	free(sp);
	return r;
}

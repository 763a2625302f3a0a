/*
 * elementwise.c - host side of kernels/elementwise.S,
 * kernels/elementwise_f8.S and kernels/elementwise_bias_f8.S: the table of
 * entries, the checks, the walk normalisation, the argument block (six
 * contiguous ranges of groups, one per worker) and the exact cycle count, which
 * follows the issue model and the timing rules (docs/emulator.md,
 * docs/fidelity.md).
 */
#include "elementwise.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "kernels.h"

#include "../util/util.h"

/* The per-line loops of kernels/elementwise.inc and their issues: a line
 * of n groups costs per_group * n + fixed; setup runs once per worker.
 * GELU's groups hold `sigm` sigmoids (f32sigm, or f16v2sigm in
 * EW_LINE_GELU16H), each of which takes the worker's turns for several
 * issues (docs/fidelity.md, rules f32sigm and f16v2sigm). */
typedef enum {
	LOOP_BINARY,   /* EW_LINE_BINARY */
	LOOP_NARROW,   /* EW_LINE_NARROW */
	LOOP_WIDEN,    /* EW_LINE_WIDEN */
	LOOP_GELU32,   /* EW_LINE_GELU32 */
	LOOP_GELU16,   /* EW_LINE_GELU16 */
	LOOP_GELU16H,  /* EW_LINE_GELU16H */
	LOOP_GELU16H8, /* EW_LINE_GELU16H8 */
	LOOP_BGELU8,   /* EW_LINE_BIASGELU8 */
	LOOP_T16,      /* EW_LINE_T16 */
	LOOP_T32,      /* EW_LINE_T32 */
	LOOP_BIAS4,    /* EW_LINE_BIAS4 (f16) */
	LOOP_BIAS8,    /* EW_LINE_BIAS8 (f32) */
	LOOP_UNARY0,   /* EW_LINE_UNARY0 */
} LoopKind;

/* The supervisors of kernels/elementwise.inc: EW_SUPERVISOR, the add and
 * mul entries (which pick the bias loop), the f8 entries (which set
 * $FP_INFMT and $FP_ISCL). */
typedef enum { ENTRY_BASIC, ENTRY_BINARY, ENTRY_F8 } EntryKind;

static const struct {
	uint32_t per_group, fixed, setup, sigm;
	TimingRule rule; /* the sigmoid's (0: none) */
} loop_cost[] = {
    [LOOP_BINARY] = {3, 2, 0, 0, 0},
    [LOOP_NARROW] = {3, 2, 0, 0, 0},
    [LOOP_WIDEN] = {3, 1, 0, 0, 0},
    [LOOP_GELU32] = {7, 2, 4, 2, TIMING_F32SIGM},
    [LOOP_GELU16] = {17, 2, 4, 4, TIMING_F32SIGM},
    [LOOP_GELU16H] = {7, 2, 2, 2, TIMING_F16V2SIGM},
    [LOOP_GELU16H8] = {15, 2, 2, 4, TIMING_F16V2SIGM},
    [LOOP_BGELU8] = {17, 3, 2, 4, TIMING_F16V2SIGM},
    [LOOP_T16] = {11, 1, 3, 0, 0},
    [LOOP_T32] = {5, 1, 3, 0, 0},
    [LOOP_BIAS4] = {2, 8, 0, 0, 0},
    [LOOP_BIAS8] = {3, 4, 0, 0, 0},
    [LOOP_UNARY0] = {2, 2, 0, 0, 0},
};

typedef struct {
	EwOp op;
	DType in, out;
	const char *entry;
	const char *object; /* kernels/<object>.S */
	uint32_t group;     /* elements per loop pass; transposes: block side */
	LoopKind loop;
	EntryKind sup;
} EwKernel;

static const EwKernel kernels[] = {
    {EW_ADD, DT_F16, DT_F16, "ew_add_f16", "elementwise", 4, LOOP_BINARY,
     ENTRY_BINARY},
    {EW_ADD, DT_F32, DT_F32, "ew_add_f32", "elementwise", 2, LOOP_BINARY,
     ENTRY_BINARY},
    {EW_MUL, DT_F16, DT_F16, "ew_mul_f16", "elementwise", 4, LOOP_BINARY,
     ENTRY_BINARY},
    {EW_MUL, DT_F32, DT_F32, "ew_mul_f32", "elementwise", 2, LOOP_BINARY,
     ENTRY_BINARY},
    {EW_MAX, DT_F16, DT_F16, "ew_max_f16", "elementwise", 4, LOOP_BINARY,
     ENTRY_BINARY},
    {EW_MAX, DT_F32, DT_F32, "ew_max_f32", "elementwise", 2, LOOP_BINARY,
     ENTRY_BINARY},
    {EW_CAST, DT_F32, DT_F16, "ew_cast_f32_f16", "elementwise", 4, LOOP_NARROW,
     ENTRY_BASIC},
    {EW_CAST, DT_F16, DT_F32, "ew_cast_f16_f32", "elementwise", 4, LOOP_WIDEN,
     ENTRY_BASIC},
    {EW_CAST, DT_F16, DT_F8_F143, "ew_cast_f16_f8", "elementwise_f8", 8,
     LOOP_NARROW, ENTRY_F8},
    {EW_CAST, DT_F16, DT_F8_F152, "ew_cast_f16_f8", "elementwise_f8", 8,
     LOOP_NARROW, ENTRY_F8},
    {EW_CAST, DT_F8_F143, DT_F16, "ew_cast_f8_f16", "elementwise_f8", 8,
     LOOP_WIDEN, ENTRY_F8},
    {EW_CAST, DT_F8_F152, DT_F16, "ew_cast_f8_f16", "elementwise_f8", 8,
     LOOP_WIDEN, ENTRY_F8},
    {EW_GELU, DT_F16, DT_F16, "ew_gelu_f16", "elementwise", 4, LOOP_GELU16,
     ENTRY_BASIC},
    {EW_GELU, DT_F32, DT_F32, "ew_gelu_f32", "elementwise", 2, LOOP_GELU32,
     ENTRY_BASIC},
    {EW_GELU_H, DT_F16, DT_F16, "ew_gelu_f16h", "elementwise", 4, LOOP_GELU16H,
     ENTRY_BASIC},
    {EW_GELU_H, DT_F16, DT_F8_F143, "ew_gelu_f16_f8", "elementwise_f8", 8,
     LOOP_GELU16H8, ENTRY_F8},
    {EW_GELU_H, DT_F16, DT_F8_F152, "ew_gelu_f16_f8", "elementwise_f8", 8,
     LOOP_GELU16H8, ENTRY_F8},
    {EW_BIAS_GELU_H, DT_F16, DT_F8_F143, "ew_bias_gelu_f16_f8",
     "elementwise_bias_f8", 8, LOOP_BGELU8, ENTRY_F8},
    {EW_BIAS_GELU_H, DT_F16, DT_F8_F152, "ew_bias_gelu_f16_f8",
     "elementwise_bias_f8", 8, LOOP_BGELU8, ENTRY_F8},
    {EW_RELU, DT_F16, DT_F16, "ew_relu_f16", "elementwise", 4, LOOP_UNARY0,
     ENTRY_BASIC},
    {EW_RELU, DT_F32, DT_F32, "ew_relu_f32", "elementwise", 2, LOOP_UNARY0,
     ENTRY_BASIC},
    {EW_TRANSPOSE, DT_F16, DT_F16, "ew_transpose_f16", "elementwise", 4,
     LOOP_T16, ENTRY_BASIC},
    {EW_TRANSPOSE, DT_F32, DT_F32, "ew_transpose_f32", "elementwise", 2,
     LOOP_T32, ENTRY_BASIC},
};
enum { NKERNELS = sizeof kernels / sizeof kernels[0] };

static const char *const op_names[] = {"add",  "mul",       "cast",
                                       "gelu", "transpose", "gelu (f16)",
                                       "relu", "max",       "bias gelu (f16)"};

/* Worker issues (EW_WORKER): the entry, an idle worker's whole run, the
 * line's count update, the tail of a line that is not the last, the
 * segment wrap. */
enum {
	W_ENTRY = 11,
	W_IDLE = 3,
	W_LINE = 3,
	W_NEXT = 5,
	W_WRAP = 8,
	W_EXIT = 1
};

static const EwKernel *
find(EwOp op, DType in, DType out)
{
	for (int i = 0; i < NKERNELS; i++)
		if (kernels[i].op == op && kernels[i].in == in &&
		    kernels[i].out == out)
			return &kernels[i];
	return NULL;
}

/* An f8 entry: its supervisor sets $FP_INFMT and $FP_ISCL. */
static int
f8_kernel(const EwKernel *k)
{
	return k->sup == ENTRY_F8;
}

const char *
ew_entry(EwOp op, DType in, DType out)
{
	const EwKernel *k = find(op, in, out);
	return k ? k->entry : NULL;
}

/* A refusal lists the type pairs that do have a kernel for the op, so
 * that the message says what to write instead (a cast f32 -> f8 is two
 * casts through f16, say). */
int
ew_supported(EwOp op, DType in, DType out, Diag *d)
{
	if (ew_entry(op, in, out))
		return IPU_OK;
	static const DType types[] = {DT_F32, DT_F16, DT_F8_F143, DT_F8_F152};
	char have[256] = "";
	size_t n = 0;
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			if (ew_entry(op, types[i], types[j]) && n < sizeof have)
				n += (size_t)snprintf(
				    have + n, sizeof have - n, "%s%s%s%s",
				    n ? ", " : "", dtype_name(types[i]),
				    types[i] == types[j] ? "" : " -> ",
				    types[i] == types[j]
				        ? ""
				        : dtype_name(types[j]));
	return diag_set(d, IPU_EINVAL, NULL, 0, 0,
	                "no elementwise kernel takes %s to %s for this op "
	                "(kernels exist for %s)",
	                dtype_name(in), dtype_name(out), have);
}

const char *
ew_object(EwOp op, DType in, DType out)
{
	const EwKernel *k = find(op, in, out);
	return k ? k->object : NULL;
}

uint32_t
ew_col_multiple(DType in, DType out)
{
	for (int i = 0; i < NKERNELS; i++)
		if (kernels[i].in == in && kernels[i].out == out)
			return kernels[i].group;
	return 0;
}

/* An operand's elements: n2 x n1 x cols elements of es bytes, strides
 * s2 (outer) and s1 in bytes. For a transpose's dst, n1 = cols and
 * cols = rows of a. */
typedef struct {
	uint32_t addr, n2, n1, cols, es;
	uint32_t s2, s1;
} Span;

static const char *const ref_names[] = {"dst", "a", "b"};

static int
binary(EwOp op)
{
	return op == EW_ADD || op == EW_MUL || op == EW_MAX ||
	       op == EW_BIAS_GELU_H;
}

static int
spans_of(const EwCall *c, Span sp[3])
{
	const EwRef *r[3] = {&c->dst, &c->a, &c->b};
	for (int k = 0; k < 3; k++)
		sp[k] = (Span){r[k]->addr,
		               c->nseg,
		               c->rows,
		               c->cols,
		               (uint32_t)dtype_size(k ? c->in : c->out),
		               r[k]->seg_stride,
		               r[k]->row_stride};
	if (c->op == EW_TRANSPOSE) {
		sp[0].n1 = c->cols;
		sp[0].cols = c->rows;
	}
	return binary(c->op) ? 3 : 2;
}

/* Last byte + 1 (64-bit: checked before use). */
static uint64_t
span_end(const Span *s)
{
	return (uint64_t)s->addr + (uint64_t)(s->n2 - 1) * s->s2 +
	       (uint64_t)(s->n1 - 1) * s->s1 + (uint64_t)s->cols * s->es;
}

/* Do the lines of a span never overlap? Sufficient test: with the two
 * strides in increasing order, each clears the whole extent of the
 * inner dimension. */
static int
span_disjoint(const Span *sp)
{
	uint64_t line = (uint64_t)sp->cols * sp->es;
	uint64_t s[2] = {sp->s1, sp->s2}, n[2] = {sp->n1, sp->n2};
	if (n[0] == 1 || (n[1] > 1 && s[1] < s[0])) {
		uint64_t t = s[0];
		s[0] = s[1];
		s[1] = t;
		t = n[0];
		n[0] = n[1];
		n[1] = t;
	}
	if (n[0] > 1 && s[0] < line)
		return 0;
	return n[1] == 1 || s[1] >= (n[0] - 1) * s[0] + line;
}

/* The kernel's walk: nseg segments of `lines` lines of `groups` groups;
 * operand k's cursor moves gb[k] bytes a group, line[k] a line and
 * seg[k] a segment. Element ops: a line is a row. Transposes: a line is
 * a band of block rows, a group a block; a moves one atom a block and
 * block-rows x its row stride a band, dst block-rows x its row stride a
 * block and one atom a band. normalize() merges dimensions that are
 * contiguous in every operand, so the kernel runs few long lines. */
typedef struct {
	uint32_t nseg, lines, groups;
	uint32_t addr[3], seg[3], line[3], gb[3];
	int n;         /* operands: 2, or 3 with b */
	int bias;      /* b repeats every 16 columns (EW_LINE_BIAS*) */
	uint32_t unit; /* the split's unit in groups: a bias line's row */
} Walk;

static Walk
walk_of(const EwKernel *k, const EwCall *c)
{
	Walk w = {.nseg = c->nseg,
	          .lines = c->rows,
	          .groups = c->cols / k->group,
	          .n = binary(c->op) ? 3 : 2,
	          .unit = 1};
	const EwRef *r[3] = {&c->dst, &c->a, &c->b};
	for (int i = 0; i < w.n; i++) {
		w.addr[i] = r[i]->addr;
		w.seg[i] = r[i]->seg_stride;
		w.line[i] = r[i]->row_stride;
		w.gb[i] = k->group * (uint32_t)dtype_size(i ? c->in : c->out);
	}
	if (c->op == EW_TRANSPOSE) {
		w.lines = c->rows / k->group;
		w.line[0] = 8;
		w.gb[0] = k->group * c->dst.row_stride;
		w.line[1] = k->group * c->a.row_stride;
		w.gb[1] = 8;
	}
	return w;
}

static void
normalize(Walk *w)
{
	for (int changed = 1; changed;) {
		changed = 0;
		if (w->lines == 1 && w->nseg > 1) {
			memcpy(w->line, w->seg, sizeof w->line);
			w->lines = w->nseg;
			w->nseg = 1;
			changed = 1;
		}
		int segs = w->nseg > 1, lines = w->lines > 1;
		for (int k = 0; k < w->n; k++) {
			segs &= w->seg[k] == w->lines * w->line[k];
			lines &= w->line[k] == w->groups * w->gb[k];
		}
		if (segs) {
			w->lines *= w->nseg;
			w->nseg = 1;
			changed = 1;
		} else if (lines) {
			w->groups *= w->lines;
			w->lines = 1;
			changed = 1;
		}
	}
}

/* Rows of 16 columns, contiguous in a and dst, with b one row per
 * segment (row stride 0): the bias on GEMM C panels, or on a 16-column
 * row-major block. Then a line is a whole segment and b repeats inside
 * it, which EW_LINE_BIAS* does without a line's overhead per row
 * (EW_LINE_BIASGELU8 takes only such lines: from one row on). */
static void
bias_lines(const EwKernel *k, Walk *w, uint32_t min_lines)
{
	uint32_t P = 16 / k->group;
	/* (a line of one row reads b once: its row stride does not
	 * matter) */
	if (w->n != 3 || w->groups != P || w->lines < min_lines ||
	    (w->line[2] && w->lines > 1) || w->line[0] != P * w->gb[0] ||
	    w->line[1] != P * w->gb[1])
		return;
	w->groups *= w->lines;
	w->lines = w->nseg;
	w->nseg = 1;
	memcpy(w->line, w->seg, sizeof w->line);
	w->gb[2] = 0;
	w->bias = 1;
	w->unit = P;
}

/* The walk the kernel runs for a checked call. */
static Walk
kernel_walk(const EwKernel *k, const EwCall *c)
{
	Walk w = walk_of(k, c);
	if (k->loop == LOOP_BGELU8) {
		/* b's row stride 0 keeps normalize from merging anything
		 * but a segment's one row into a line of segments */
		bias_lines(k, &w, 1);
		return w;
	}
	normalize(&w);
	bias_lines(k, &w, 2);
	return w;
}

int
ew_check(const EwCall *c, Diag *d)
{
	const char *op = (unsigned)c->op < sizeof op_names / sizeof op_names[0]
	                     ? op_names[c->op]
	                     : "?";
	const EwKernel *k = find(c->op, c->in, c->out);
	if (!k)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "elementwise: %s from %s to %s is not supported", op,
		    dtype_name(c->in), dtype_name(c->out));
	if (!c->nseg || !c->rows || !c->cols)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "elementwise %s: empty walk %u x %u x %u", op,
		                c->nseg, c->rows, c->cols);
	if (c->cols % k->group || (c->op == EW_TRANSPOSE && c->rows % k->group))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "elementwise %s: %s %u is not a multiple of "
		                "%u (%s to %s)",
		                op, c->cols % k->group ? "cols" : "rows",
		                c->cols % k->group ? c->cols : c->rows,
		                k->group, dtype_name(c->in),
		                dtype_name(c->out));
	if (f8_kernel(k) && (c->fp8_scale < -32 || c->fp8_scale > 31))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "elementwise %s: fp8 scale %d outside -32..31",
		                op, c->fp8_scale);
	Span sp[3];
	int n = spans_of(c, sp);
	for (int i = 0; i < n; i++) {
		const Span *s = &sp[i];
		const char *bad = s->addr % 8 ? "address"
		                  : s->s1 % 8 ? "row stride"
		                  : s->s2 % 8 ? "segment stride"
		                              : NULL;
		if (bad)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "elementwise %s: %s %s is not a "
			                "multiple of 8 (addr 0x%x, strides "
			                "%u, %u)",
			                op, ref_names[i], bad, s->addr, s->s2,
			                s->s1);
		if (span_end(s) > UINT32_MAX)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "elementwise %s: %s runs past 4 GiB",
			                op, ref_names[i]);
	}
	if (!span_disjoint(&sp[0]))
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "elementwise %s: dst rows overlap (strides %u, "
		                "%u for %u bytes a row)",
		                op, sp[0].s2, sp[0].s1, sp[0].cols * sp[0].es);
	for (int i = 1; i < n; i++) {
		int overlap = sp[i].addr < span_end(&sp[0]) &&
		              sp[0].addr < span_end(&sp[i]);
		int same = c->op != EW_TRANSPOSE &&
		           !memcmp(&sp[i], &sp[0], sizeof(Span));
		if (overlap && !same)
			return diag_set(d, IPU_EINVAL, NULL, 0, 0,
			                "elementwise %s: dst [0x%x, 0x%llx) "
			                "overlaps %s [0x%x, 0x%llx) other than "
			                "exactly in place",
			                op, sp[0].addr,
			                (unsigned long long)span_end(&sp[0]),
			                ref_names[i], sp[i].addr,
			                (unsigned long long)span_end(&sp[i]));
	}
	Walk w = kernel_walk(k, c);
	if (k->loop == LOOP_BGELU8 && !w.bias)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "elementwise %s: not 16 columns of rows "
		                "contiguous in a and dst with b one row a "
		                "segment (row stride 0)",
		                op);
	uint64_t groups = (uint64_t)w.nseg * w.lines * w.groups;
	if ((groups + 5) / 6 > 65536 && w.groups > 65536)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "elementwise %s: a worker's line of more than "
		                "65536 groups exceeds rpt's count",
		                op);
	return IPU_OK;
}

/* Worker w's share of the walk's groups: [first, first + count). */
typedef struct {
	uint64_t first, count;
} Share;

static Share
share(const Walk *w, int v)
{
	/* bias lines: whole rows, so that b starts at its first atom */
	uint64_t unit = w->unit;
	uint64_t total = (uint64_t)w->nseg * w->lines * w->groups / unit;
	uint64_t a = total * (uint64_t)v / 6, b = total * (uint64_t)(v + 1) / 6;
	return (Share){a * unit, (b - a) * unit};
}

void
ew_args_fill(const EwCall *c, uint8_t out[EW_ARGS_BYTES])
{
	const EwKernel *k = find(c->op, c->in, c->out);
	assert(k && "ew_args_fill of an unchecked call");
	Walk w = kernel_walk(k, c);
	uint32_t A = w.groups;
	memset(out, 0, EW_ARGS_BYTES);
	put_le32(out + 0, A);
	put_le32(out + 4, w.lines - 1);
	for (int i = 0; i < w.n; i++) {
		put_le32(out + 8 + 4 * i, w.line[i] - A * w.gb[i]);
		put_le32(out + 20 + 4 * i, w.seg[i] - w.lines * w.line[i]);
	}
	if (f8_kernel(k)) {
		DType f8 = c->in == DT_F16 ? c->out : c->in;
		put_le32(out + 32, (f8 == DT_F8_F152) << 1);
		put_le32(out + 36, (uint32_t)c->fp8_scale & 63);
	}
	if (c->op == EW_TRANSPOSE) {
		/* step strides in atoms (signed) */
		put_le32(out + 32, c->a.row_stride / 8);
		int64_t back = 8 - (int64_t)(k->group - 1) * c->a.row_stride;
		put_le32(out + 36, (uint32_t)(int32_t)(back / 8));
		put_le32(out + 40, c->dst.row_stride / 8);
	}
	put_le32(out + 44, (uint32_t)w.bias);
	for (int v = 0; v < 6; v++) {
		uint8_t *p = out + 48 + 24 * v;
		Share s = share(&w, v);
		if (!s.count)
			continue;
		uint64_t line = s.first / A, c0 = s.first % A;
		uint32_t seg = (uint32_t)(line / w.lines),
		         row = (uint32_t)(line % w.lines);
		put_le32(p, (uint32_t)s.count);
		for (int i = 0; i < w.n; i++)
			put_le32(p + 4 + 4 * i, w.addr[i] + seg * w.seg[i] +
			                            row * w.line[i] +
			                            (uint32_t)c0 * w.gb[i]);
		put_le32(p + 16,
		         (uint32_t)(s.count < A - c0 ? s.count : A - c0));
		put_le32(p + 20, w.lines - 1 - row);
	}
}

/* Turns of worker v (issues, and the extra turns of its transcendentals),
 * walking its lines as kernels/elementwise.inc does. */
static uint64_t
worker_turns(const Chip *chip, const EwKernel *k, const Walk *w, int v)
{
	uint64_t A = w->groups;
	Share s = share(w, v);
	if (!s.count)
		return W_IDLE;
	/* the add and mul entries pick their bias loop by ARG_BIAS */
	LoopKind loop = !w->bias || k->sup != ENTRY_BINARY ? k->loop
	                : dtype_size(k->in) == 2           ? LOOP_BIAS4
	                                                   : LOOP_BIAS8;
	uint64_t per_group =
	    loop_cost[loop].per_group +
	    (loop_cost[loop].sigm
	         ? loop_cost[loop].sigm *
	               (chip_rule(chip, loop_cost[loop].rule) - 1)
	         : 0);
	uint64_t issues = W_ENTRY + loop_cost[loop].setup;
	uint64_t line = s.first / A, left = s.count;
	uint64_t n = A - s.first % A < left ? A - s.first % A : left;
	for (;;) {
		left -= n;
		issues += W_LINE + per_group * n + loop_cost[loop].fixed;
		if (!left)
			return issues + W_EXIT;
		issues += W_NEXT;
		line++;
		if (line % w->lines == 0)
			issues += W_WRAP;
		n = A < left ? A : left;
	}
}

/* The supervisor's code (elementwise.inc) on a SupClock, the workers from
 * their first turns after the runall's launch delay; the sync leaves 6
 * cycles after the last exit and `br $lr` issues then. */
uint64_t
ew_cycles(const Chip *chip, const EwCall *c)
{
	const EwKernel *k = find(c->op, c->in, c->out);
	assert(k && "ew_cycles of an unchecked call");
	Walk w = kernel_walk(k, c);
	SupClock s;
	sup_start(&s, chip, 0);
	if (k->sup == ENTRY_BINARY) {
		sup_op(&s, 0, SUP_M1, SUP_PLAIN);      /* setzi bias */
		sup_op(&s, SUP_M0, SUP_M3, SUP_PLAIN); /* ld32 */
		sup_op(&s, 0, SUP_M4, SUP_PLAIN);      /* setzi */
		sup_op(&s, SUP_M0, SUP_M2, SUP_PLAIN); /* add */
		for (int i = 0; i < 6; i++) {
			sup_op(&s, SUP_M0, 0, SUP_PUT);
			if (i == 1)
				sup_op(&s, SUP_M4 | SUP_M3, SUP_M1,
				       SUP_PLAIN); /* movz */
		}
	} else {
		if (k->sup == ENTRY_F8) {
			sup_op(&s, SUP_M0, SUP_M3, SUP_PLAIN);
			sup_op(&s, SUP_M0, SUP_M4, SUP_PLAIN);
		}
		sup_entry(&s);
		if (k->sup == ENTRY_F8) {
			sup_op(&s, SUP_M3, 0, SUP_PUT);
			sup_op(&s, SUP_M4, 0, SUP_PUT);
		}
	}
	uint64_t first[6], exit[6];
	sup_runall(&s, SUP_M1 | SUP_M2, first);
	for (int v = 0; v < 6; v++)
		exit[v] = first[v] + 6 * (worker_turns(chip, k, &w, v) - 1);
	sup_workers(&s, exit);
	sup_sync(&s);
	return sup_return(&s, 0);
}

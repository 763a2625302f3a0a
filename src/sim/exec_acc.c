/*
 * exec_acc.c - semantics of the non-AMP instructions that use the worker's
 * accumulators $AACC[0..31] (f32 bit patterns in Context.aacc): vector
 * accumulation (*acc, *absacc, *sqacc), read-back (gina, gacc), multiply-
 * accumulate (f32mac, f32v2mac, *cmac), the pipelined axpy/mix and the
 * outer product f32v2aop.
 *
 * Lane map (docs/emulator-float.md, "Accumulators"): vector lane i uses
 * $AACC[2i]. gina reads $AACC[0] and [2] and shifts the even accumulators
 * down by two so that a sequence of ginas reads all of them, in the order
 * 0,2 | 4,6 | 8,10 | 12,14 (ISA text via ipu_assembly_support; poplibs and
 * the C600 kernels in ipu-stack.md drain f16v8acc / f32v4sqacc / f32v2mac
 * sums that way). Accumulation is binary32, round to nearest even, with
 * products fused (one rounding).
 */
#include "fpsim.h"

#include <math.h>

static uint32_t
aget(const Exec *e, int i)
{
	return e->c->aacc[i];
}

/* f32 bits of one f16 lane (exact; NaN canonical, sNaN raises INV). */
static uint32_t
h2f(uint16_t h, unsigned *flags)
{
	return fp_f16_to_f32(h, flags);
}

/* A binary32 value from an exact (or double-rounded) double sum of the
 * given inputs: NaN and overflow as IEEE. */
static uint32_t
sum_to_f32(double s, const double *in, int n, unsigned *flags)
{
	int nan = 0, fin = 1;
	for (int i = 0; i < n; i++) {
		nan |= isnan(in[i]);
		fin &= isfinite(in[i]) != 0;
	}
	if (isnan(s)) {
		if (!nan)
			*flags |= FP_FLAG_INV;
		return FP32_QNAN;
	}
	if (isinf(s) && fin)
		*flags |= FP_FLAG_OFLO;
	return fp_f64_to_f32(s, FP_RNE, 0, flags);
}

/* *acc: $AACC[2i] += f(x_i). */
typedef enum { ACC_SUM, ACC_ABS, ACC_SQ } AccKind;

static void
accumulate(Exec *e, int f16, AccKind kind)
{
	int nregs = op_regs(e, 0);
	int n = f16 ? 2 * nregs : nregs;
	uint32_t x[8], r[8];
	if (f16) {
		uint16_t h[8];
		get16(e, 0, n, h);
		for (int k = 0; k < n; k++)
			x[k] = h[k];
	} else {
		get32(e, 0, n, x);
	}
	FpEnv v = fpenv(e);
	for (int k = 0; k < n; k++) {
		uint32_t xf = f16 ? h2f((uint16_t)x[k], &v.flags) : x[k];
		uint32_t a = aget(e, 2 * k);
		if (kind == ACC_ABS)
			xf &= 0x7fffffffu;
		if (kind == ACC_SQ)
			/* a half squared is exact in binary32, so the fused
			 * and unfused forms agree for f16 */
			r[k] = fp_f32_fma(xf, xf, a, &v.flags);
		else
			r[k] = fp_f32_add(a, xf, &v.flags);
	}
	if (!fpenv_finish(e, &v))
		return;
	for (int k = 0; k < n; k++)
		e->c->aacc[2 * k] = r[k];
}

void
exec_f16v4acc(Exec *e)
{
	accumulate(e, 1, ACC_SUM);
}

/* The fast forms of f16v4acc, f16v8sqacc and f32v4sqacc (sim.h,
 * SIM_FAST_FORMS), n lanes each: with no lane of the operand, no
 * accumulator and no result with the all-ones exponent, a half widens to
 * f32 exactly and raises no flag (h2f), and fp_f32_result hands the host's
 * sum (fp_f32_add) or fused product (fp_f32_fma) back unchanged and raises
 * no flag either, so the lanes go straight from the registers to
 * $AACC[0,2,..]; anything else runs accumulate. */
static inline __attribute__((always_inline)) void
fast_acc(Exec *e, int f16, AccKind kind, int n)
{
	int r = e->in->op[0];
	uint32_t *q = e->c->aacc, out[8];
	/* get16's lanes: the low half of each register first, four lanes a
	 * pair of registers */
	uint64_t h[2] = {0, 0};
	int special = 0;
	for (int j = 0; f16 && j < n / 4; j++) {
		h[j] = (uint64_t)sim_ra(e, r + 2 * j + 1) << 32 |
		       sim_ra(e, r + 2 * j);
		special |= sim_f16_special(h[j]);
	}
	for (int k = 0; k < n; k++) {
		uint32_t xf = f16 ? fp_float_f32((float)fp_f16_to_f64(
		                        (uint16_t)(h[k / 4] >> (16 * (k % 4)))))
		                  : sim_ra(e, r + k);
		float x = fp_f32_float(xf), a = fp_f32_float(q[2 * k]);
		out[k] = fp_float_f32(kind == ACC_SQ ? fmaf(x, x, a) : a + x);
		special |= f32_special(xf) | f32_special(q[2 * k]) |
		           f32_special(out[k]);
	}
	if (special) {
		accumulate(e, f16, kind);
		return;
	}
	for (int k = 0; k < n; k++)
		q[2 * k] = out[k];
}

void
fast_f16v4acc(Exec *e)
{
	fast_acc(e, 1, ACC_SUM, 4);
}

void
exec_f16v4absacc(Exec *e)
{
	accumulate(e, 1, ACC_ABS);
}

void
exec_f16v8acc(Exec *e)
{
	accumulate(e, 1, ACC_SUM);
}

void
exec_f16v8absacc(Exec *e)
{
	accumulate(e, 1, ACC_ABS);
}

void
exec_f16v8sqacc(Exec *e)
{
	accumulate(e, 1, ACC_SQ);
}

void
fast_f16v8sqacc(Exec *e)
{
	fast_acc(e, 1, ACC_SQ, 8);
}

void
exec_f32v4acc(Exec *e)
{
	accumulate(e, 0, ACC_SUM);
}

void
exec_f32v4absacc(Exec *e)
{
	accumulate(e, 0, ACC_ABS);
}

void
exec_f32v4sqacc(Exec *e)
{
	accumulate(e, 0, ACC_SQ);
}

void
fast_f32v4sqacc(Exec *e)
{
	fast_acc(e, 0, ACC_SQ, 4);
}

/* gina dst, src, imm. imm bit 0 selects the odd accumulators, bit 1 the
 * second AMP set (the ISA's cases a..d; DECISION: the GINA_IMMFLAGS
 * layout is not public, other bits are ignored). Reads the first two of
 * the selected eight, shifts the eight down by two and writes the new
 * values into the last two. */
static void
gina(Exec *e, int f16)
{
	int imm = e->in->op[2];
	int base = (imm & 1) + ((imm >> 1) & 1) * 16;
	uint32_t *q = e->c->aacc;
	FpEnv v = fpenv(e);
	uint32_t in[2];
	if (f16) {
		uint16_t h[2];
		get16(e, 1, 2, h);
		in[0] = h2f(h[0], &v.flags);
		in[1] = h2f(h[1], &v.flags);
	} else {
		get32(e, 1, 2, in);
	}
	uint32_t out[2] = {q[base], q[base + 2]};
	uint16_t hout[2];
	if (f16)
		for (int k = 0; k < 2; k++)
			hout[k] = fp_f32_to_f16(
			    out[k], v.mode, fpenv_rbits(e, &v), v.ov, &v.flags);
	if (!fpenv_finish(e, &v))
		return;
	for (int k = 0; k < 6; k++)
		q[base + 2 * k] = q[base + 2 * k + 4];
	q[base + 12] = in[0];
	q[base + 14] = in[1];
	if (f16)
		put16(e, 0, 2, hout);
	else
		put32(e, 0, 2, out);
}

void
exec_f32v2gina(Exec *e)
{
	gina(e, 0);
}

void
exec_f16v2gina(Exec *e)
{
	gina(e, 1);
}

/* f16v4gacc: $AACC[0,2,4,6] as four halves; the state is unchanged
 * (DECISION). */
void
exec_f16v4gacc(Exec *e)
{
	FpEnv v = fpenv(e);
	uint16_t h[4];
	for (int k = 0; k < 4; k++)
		h[k] = fp_f32_to_f16(aget(e, 2 * k), v.mode, fpenv_rbits(e, &v),
		                     v.ov, &v.flags);
	if (fpenv_finish(e, &v))
		put16(e, 0, 4, h);
}

/* f32mac x, y: $AACC[0] += x*y. f32v2mac: $AACC[0] += x0*y0, $AACC[2] +=
 * x1*y1 (poplibs' dot product reads them with one f32v2gina). */
static void
mac32(Exec *e)
{
	int n = op_regs(e, 0);
	uint32_t x[2], y[2], r[2];
	get32(e, 0, n, x);
	get32(e, 1, n, y);
	FpEnv v = fpenv(e);
	for (int k = 0; k < n; k++)
		r[k] = fp_f32_fma(x[k], y[k], aget(e, 2 * k), &v.flags);
	if (!fpenv_finish(e, &v))
		return;
	for (int k = 0; k < n; k++)
		e->c->aacc[2 * k] = r[k];
}

void
exec_f32mac(Exec *e)
{
	mac32(e);
}

void
exec_f32v2mac(Exec *e)
{
	mac32(e);
}

/* cmac: products of halves summed in pairs and accumulated. f16v2cmac:
 * $AACC[0] += x0y0 + x1y1. f16v4cmac: $AACC[0] += x0y0 + x1y1, $AACC[1]
 * += x2y2 + x3y3 (DECISION: poplibs drains f16v4cmac with gina 0 and
 * gina 1 and adds all four, so the two sums sit in the first even and the
 * first odd accumulator). Computed in double and rounded once. */
static void
cmac(Exec *e)
{
	int n = 2 * op_regs(e, 0);
	uint16_t x[4], y[4];
	uint32_t r[2];
	get16(e, 0, n, x);
	get16(e, 1, n, y);
	FpEnv v = fpenv(e);
	for (int k = 0; k < n / 2; k++) {
		double in[5];
		for (int j = 0; j < 2; j++) {
			if (fp_f16_issnan(x[2 * k + j]) ||
			    fp_f16_issnan(y[2 * k + j]))
				v.flags |= FP_FLAG_INV;
			in[2 * j] = fp_f16_to_f64(x[2 * k + j]);
			in[2 * j + 1] = fp_f16_to_f64(y[2 * k + j]);
		}
		in[4] = fp_f32_float(aget(e, k));
		if (fp_f32_issnan(aget(e, k)))
			v.flags |= FP_FLAG_INV;
		double s = in[4] + (in[0] * in[1] + in[2] * in[3]);
		r[k] = sum_to_f32(s, in, 5, &v.flags);
	}
	if (!fpenv_finish(e, &v))
		return;
	for (int k = 0; k < n / 2; k++)
		e->c->aacc[k] = r[k];
}

void
exec_f16v2cmac(Exec *e)
{
	cmac(e);
}

void
exec_f16v4cmac(Exec *e)
{
	cmac(e);
}

/* f32v2axpy dst, x, y: $AACC[0,2] = a*x + y (fused) with a = $TAS as f32;
 * dst gets the previous $AACC[0,2]. poplibs' ScaledAdd2D_float computes
 * data += k*dataB with "f32v2axpy $azeros, $dataB, $data": the first
 * source is the scaled one. */
void
exec_f32v2axpy(Exec *e)
{
	uint32_t x[2], y[2], r[2], old[2] = {aget(e, 0), aget(e, 2)};
	get32(e, 1, 2, x);
	get32(e, 2, 2, y);
	FpEnv v = fpenv(e);
	uint32_t a = e->c->tas;
	/* the fast paths: fp_f32_fma's own fmaf, its result taken as it is
	 * when no operand and no result has the all-ones exponent (then
	 * fp_f32_result returns it unchanged and raises no flag) */
	if (sim_path != SIM_PLAIN) {
		uint32_t sp = 0x7f800000u, any = 0;
		for (int k = 0; k < 2; k++) {
			r[k] = fp_float_f32(fmaf(fp_f32_float(a),
			                         fp_f32_float(x[k]),
			                         fp_f32_float(y[k])));
			any |= (x[k] & sp) == sp || (y[k] & sp) == sp ||
			       (r[k] & sp) == sp;
		}
		if (!any && (a & sp) != sp)
			goto write;
	}
	for (int k = 0; k < 2; k++)
		r[k] = fp_f32_fma(a, x[k], y[k], &v.flags);
	if (!fpenv_finish(e, &v))
		return;
write:
	e->c->aacc[0] = r[0];
	e->c->aacc[2] = r[1];
	put32(e, 0, 2, old);
}

/* f16v4mix dst, x, y: $AACC[2i] = a*x_i + b*y_i with a = $TAS[15:0], b =
 * $TAS[31:16] (poplibs' XMinusaXPlusbY puts -a low, b high and passes X
 * first); dst gets the previous $AACC[0,2,4,6] as halves. The sum of the
 * two exact products is formed in double and rounded once to f32. */
void
exec_f16v4mix(Exec *e)
{
	uint16_t x[4], y[4], old[4];
	uint32_t r[4];
	uint16_t ta = (uint16_t)e->c->tas, tb = (uint16_t)(e->c->tas >> 16);
	get16(e, 1, 4, x);
	get16(e, 2, 4, y);
	FpEnv v = fpenv(e);
	double a = fp_f16_to_f64(ta), b = fp_f16_to_f64(tb);
	for (int k = 0; k < 4; k++) {
		double in[4] = {a, fp_f16_to_f64(x[k]), b, fp_f16_to_f64(y[k])};
		if (fp_f16_issnan(x[k]) || fp_f16_issnan(y[k]) ||
		    fp_f16_issnan(ta) || fp_f16_issnan(tb))
			v.flags |= FP_FLAG_INV;
		r[k] =
		    sum_to_f32(in[0] * in[1] + in[2] * in[3], in, 4, &v.flags);
		old[k] = fp_f32_to_f16(aget(e, 2 * k), v.mode,
		                       fpenv_rbits(e, &v), v.ov, &v.flags);
	}
	if (!fpenv_finish(e, &v))
		return;
	for (int k = 0; k < 4; k++)
		e->c->aacc[2 * k] = r[k];
	put16(e, 0, 4, old);
}

/* The fast form of f16v4mix (sim.h, SIM_FAST_FORMS; direct_f16v4mix
 * writes the destination straight to the registers, SIM_DIRECT_FORMS):
 * at nearest even without stochastic rounding and with no infinity or NaN
 * among x, y and $TAS, the sum of the exact products is finite (at most
 * 2 * 65504^2), so sum_to_f32 is fp_f64_to_f32 at nearest even, which
 * fp_f64_to_f32_rne is (test_fp), and raises nothing; the previous
 * accumulators round as f32_to_f16 rounds them (fp_f64_to_f16_rne but for
 * a signalling NaN). Anything else runs exec_f16v4mix. */
static inline __attribute__((always_inline)) void
fast_mix(Exec *e, int direct)
{
	const Insn *in = e->in;
	int rx = in->op[1], ry = in->op[2];
	uint32_t tas = e->c->tas;
	uint64_t x = (uint64_t)sim_ra(e, rx + 1) << 32 | sim_ra(e, rx),
	         y = (uint64_t)sim_ra(e, ry + 1) << 32 | sim_ra(e, ry);
	FpEnv v = fpenv(e);
	if (v.mode != FP_RNE || sim_f16_special(x) || sim_f16_special(y) ||
	    sim_f16_special(tas)) {
		exec_f16v4mix(e);
		return;
	}
	double a = fp_f16_to_f64((uint16_t)tas),
	       b = fp_f16_to_f64((uint16_t)(tas >> 16));
	uint32_t r[4];
	uint64_t old = 0;
	for (int k = 0; k < 4; k++) {
		double s = a * fp_f16_to_f64((uint16_t)(x >> (16 * k))) +
		           b * fp_f16_to_f64((uint16_t)(y >> (16 * k)));
		r[k] = fp_f64_to_f32_rne(s, &v.flags);
		uint32_t acc = aget(e, 2 * k);
		uint16_t o =
		    fp_f32_issnan(acc)
		        ? fp_f32_to_f16(acc, FP_RNE, 0, v.ov, &v.flags)
		        : fp_f64_to_f16_rne(fp_f32_float(acc), v.ov, &v.flags);
		old |= (uint64_t)o << (16 * k);
	}
	if (!fpenv_finish(e, &v))
		return;
	for (int k = 0; k < 4; k++)
		e->c->aacc[2 * k] = r[k];
	int d = in->op[0];
	sim_put_a(e, d, (uint32_t)old, direct);
	sim_put_a(e, d + 1, (uint32_t)(old >> 32), direct);
}

void
fast_f16v4mix(Exec *e)
{
	fast_mix(e, 0);
}

void
direct_f16v4mix(Exec *e)
{
	fast_mix(e, 1);
}

/* f32v2aop x, y, imm: the 2x2 outer product accumulated: $AACC[0] +=
 * x0y0, [2] += x1y0, [4] += x0y1, [6] += x1y1 (Graphcore research's host
 * model of the instruction; the immediate is unused, as it notes). */
void
exec_f32v2aop(Exec *e)
{
	uint32_t x[2], y[2], r[4];
	get32(e, 0, 2, x);
	get32(e, 1, 2, y);
	FpEnv v = fpenv(e);
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < 2; i++)
			r[2 * j + i] = fp_f32_fma(
			    x[i], y[j], aget(e, 2 * (2 * j + i)), &v.flags);
	if (!fpenv_finish(e, &v))
		return;
	for (int k = 0; k < 4; k++)
		e->c->aacc[2 * k] = r[k];
}

/* The permutes through the accumulators: which $AACC registers the
 * immediate selects and how the state propagates are only in the ISA's
 * immediate diagrams (images, not public text). */
void
exec_f16v4stacc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v4stacc is not emulated: semantics unknown (the "
	          "TSTACC immediate layout is not public)");
}

void
exec_f16v4istacc(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "f16v4istacc is not emulated: semantics unknown (the "
	          "TISTACC immediate layout is not public)");
}

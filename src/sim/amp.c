/*
 * amp.c - the AMP (accumulating matrix product) engines of the emulator:
 * every *amp and *slic instruction, and the supervisor weight loads
 * ld64putcs / ld128putcs that fill the CWEI (CCCS) registers.
 *
 * The real AMP pipeline is only partly public (isa.md 5, 10 item 1). What
 * follows is OUR MODEL; docs/emulator-amp.md explains it with its sources.
 * Every number in it is a DECISION unless a section of isa.md is cited, and
 * the whole model is the table `forms` plus a handful of functions below, so
 * that a hardware check can change it in one place.
 *
 * Weights (isa.md 5.3). 64 CWEI registers of 64 bits (tile->cwei), shared by
 * all workers, written only by the supervisor:
 *   ld64putcs k   cwei[k] = 8 bytes at $CCCSLOAD; $CCCSLOAD += 8
 *   ld128putcs k  cwei[k], cwei[k+1] = 16 bytes at $CCCSLOAD; += 16; the
 *                 source must be 16-byte aligned in the interleaved region
 *                 (sim_load enforces that); k must be even (DECISION).
 * k outside the register file faults with INVALID_OP. Engine m (0..15;
 * 0..7 = AMP set 0, 8..15 = set 1) at weight column n (0..3) uses
 * cwei[(m / 8) * 32 + 4 * (m % 8) + n]. Inside one CWEI, element i (half i,
 * f32 word i, or byte i, counted from the least significant end) multiplies
 * input element i, counted the same way across the input register(s).
 *
 * Pipeline. Every worker has its own AmpState (sim.h): per engine `acc`
 * (the group being accumulated), `next` (partials loaded for the following
 * group) and `done` (the finished group, being drained). The phase p comes
 * from the flags immediate: bits [1:0] for the f16/f8 forms (4 phases),
 * bits [2:0] for the f32 forms (8 phases); the other bits are ignored
 * (isa.md 5.7: the real layout is unknown; the assembler's TAMP_* names map
 * to these numbers). One instruction at phase p, in this order:
 *   1. dst    = results of done[] for its io engines (below), converted
 *   2. next[] = the partials operand, for the same io engines
 *   3. acc[m] += sum over inputs i of x[i] * w(m, p)[i], for each engine m
 *      of the form, the previous acc and all exact products summed in
 *      double and rounded to f32 once per instruction (isa.md 2.2: products
 *      exact, wide accumulation; exact rounding unknown)
 *   4. after the last phase: done = acc, acc = next (for the form's engines)
 * So partials enter one group ahead and results leave one group late: a loop
 * of N groups runs 1 warm-up group (zero inputs, the partials of the first
 * real group), the N groups, and 1 drain group (zero inputs) (isa.md 5.4).
 *
 * io engines at phase p: k = results out = partials in per instruction; the
 * engines are k*p .. k*p+k-1. f32sisoamp (8 engines, 8 phases, k = 2) moves
 * them only on even phases (engines p, p+1); on odd phases dst is not written
 * and partials are ignored (isa.md 5.5: poplibs passes $azeros there).
 *
 * Forms (isa.md 5.2, 5.4, 5.5, 6):
 *   mnemonic         engines phases inputs/insn  partials in  results out
 *   f16v4hihoamp       0..7    4    4 x f16        2 x f16      2 x f16
 *   f16v4sihoamp       0..7    4    4 x f16        2 x f32      2 x f16
 *   f16v4sisoamp       0..7    4    4 x f16        2 x f32      2 x f32
 *   f16v4hihov4amp    0..15    4    4 x f16        4 x f16      4 x f16
 *   f32sisoamp         0..7    8    1 x f32        2 x f32      2 x f32
 *   f32sisov2amp      0..15    8    1 x f32        2 x f32      2 x f32
 *   f8v8hihov4amp     0..15    4    8 x f8         4 x f16      4 x f16
 * f32 forms: weight of engine m at phase p = f32 word (p % 2) of the CWEI
 * for column p / 2. FP8 (ipu21): $FP_NFMT bit 0 = weight (CWEI) format,
 * bit 1 = input (ARF) format, 0 = F143 and 1 = F152 (model.md 7.2; the
 * supervisor's $FP_INFMT = (input << 1) | weight is copied at worker start,
 * isa.md 6). Each product is scaled by 2^$FP_SCL (6-bit two's complement:
 * poplibs sets it to s_in + s_w); partials enter unscaled.
 *
 * Not modelled: $FP_STS flags and traps (the AMP raises none), $FP_CTL
 * rounding modes (results round to nearest even), denormal flushing. $AACC
 * (sim.h, Context.aacc) and AmpState are separate state in our model; writing
 * $FP_CLR.ZAACC clears both (sim_amp_clear). SLIC (isa.md 5.6) is not
 * emulated: each *slic instruction faults and says so.
 */
#include <math.h>
#include <string.h>

#include "../util/fp.h"
#include "sim.h"

enum {
	AMP_ENGINES = 16,    /* both AMP sets */
	AMP_SET_ENGINES = 8, /* isa.md 2.2, TFPU_AMP_UNITS_PER_SET */
	AMP_SET_CWEI = 32,   /* CWEI registers per set (isa.md 5.3) */
	AMP_COLUMNS = 4,     /* CWEI columns per engine */
	AMP_MAX_INPUTS = 8,  /* f8v8: 8 inputs per instruction */
	AMP_MAX_IO = 4,      /* partials in / results out per instruction */
};

/* Element formats of inputs, weights, partials and results. */
typedef enum { EF_F16, EF_F32, EF_F8 } ElemFmt;

typedef struct {
	const char *name;
	int engines;  /* 8 (set 0) or 16 (both sets) */
	int phases;   /* 4 or 8 */
	ElemFmt in;   /* input and weight elements */
	int ninputs;  /* inputs per instruction */
	ElemFmt part; /* partials operand */
	ElemFmt res;  /* results (dst) operand */
	int io;       /* partials in = results out per instruction */
	int io_every; /* 1: io on every phase; 2: on even phases only */
} AmpForm;

/* The model's forms (see the table at the top). */
enum { HIHO, SIHO, SISO, HIHOV4, F32SISO, F32SISOV2, F8HIHOV4 };
/* clang-format off */
static const AmpForm forms[] = {
	/*           name            eng ph in     nin part    res     io every */
	[HIHO]      = {"f16v4hihoamp",   8, 4, EF_F16, 4, EF_F16, EF_F16, 2, 1},
	[SIHO]      = {"f16v4sihoamp",   8, 4, EF_F16, 4, EF_F32, EF_F16, 2, 1},
	[SISO]      = {"f16v4sisoamp",   8, 4, EF_F16, 4, EF_F32, EF_F32, 2, 1},
	[HIHOV4]    = {"f16v4hihov4amp",16, 4, EF_F16, 4, EF_F16, EF_F16, 4, 1},
	[F32SISO]   = {"f32sisoamp",     8, 8, EF_F32, 1, EF_F32, EF_F32, 2, 2},
	[F32SISOV2] = {"f32sisov2amp",  16, 8, EF_F32, 1, EF_F32, EF_F32, 2, 1},
	[F8HIHOV4]  = {"f8v8hihov4amp", 16, 4, EF_F8,  8, EF_F16, EF_F16, 4, 1},
};
/* clang-format on */

/* CWEI register of engine m (0..15) at weight column n (0..3), isa.md 5.3. */
static int
cwei_index(int m, int n)
{
	return (m / AMP_SET_ENGINES) * AMP_SET_CWEI + AMP_COLUMNS * (m % 8) + n;
}

/* Phase from the flags immediate. */
static int
amp_phase(const AmpForm *f, uint32_t flags)
{
	return (int)(flags & (uint32_t)(f->phases - 1));
}

/* Round an accumulation to the f32 state. The one place to change if the
 * hardware turns out to accumulate differently. */
static float
acc_round(double v)
{
	return (float)v;
}

/* FP8 value of byte b in the format given by $FP_NFMT bit `bit` (0 for
 * weights, 1 for inputs); fp.h's Fp8Format numbers them 0 = F143,
 * 1 = F152. */
static double
f8_value(uint8_t b, uint32_t nfmt, int bit)
{
	return fp_f8_to_f64(b, (Fp8Format)((nfmt >> bit) & 1), 0);
}

static double
bits_double(uint64_t b)
{
	double d;
	memcpy(&d, &b, 8);
	return d;
}

static float
bits_float(uint32_t b)
{
	float f;
	memcpy(&f, &b, 4);
	return f;
}

/* fp_f16_to_f64 without ldexp, bit for bit the same double (checked for
 * all 65536 inputs): normals rebias the exponent (15 -> 1023) and widen the
 * fraction; subnormals are m * 2^-24 exactly; NaN is the default quiet NaN
 * with the sign of h, as fp.c's -NAN/NAN. */
static double
f16_value(uint16_t h)
{
	uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ffu;
	uint64_t s = (uint64_t)(h & 0x8000u) << 48;
	if (e == 0) {
		double v = (double)m * 0x1p-24;
		return h & 0x8000u ? -v : v;
	}
	if (e == 0x1f)
		return bits_double(
		    s | (m ? 0x7ff8000000000000ull : 0x7ff0000000000000ull));
	return bits_double(s | (uint64_t)(e + 1008) << 52 | (uint64_t)m << 42);
}

/* An f32 state value as an f16 result: nearest even, overflow to
 * infinity. Zero and values that round to an f16 normal below 65520 are
 * converted here with integer rounding (the same result as fp.c's, checked
 * against it over every sign, exponent and top-16 fraction bits with
 * several tails); the rest (subnormal results, overflow, inf, NaN) goes to
 * fp.c. */
static uint16_t
f16_result(float v)
{
	uint32_t b;
	memcpy(&b, &v, 4);
	uint32_t s = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
	if (a == 0)
		return (uint16_t)s;
	if (a >= 0x38800000u && a < 0x477ff000u) { /* [2^-14, 65520) */
		uint32_t r = (a - 0x38000000u) >> 13, rem = a & 0x1fffu;
		r += rem > 0x1000u || (rem == 0x1000u && (r & 1));
		return (uint16_t)(s | r);
	}
	unsigned flags = 0; /* the AMP raises no $FP_STS flags (DECISION) */
	return fp_f32_to_f16(b, FP_RNE, 0, FP_OV_IEEE, &flags);
}

/* Element i of a 64-bit word holding 4 f16, 2 f32 or 8 f8. */
static double
elem64(uint64_t w, ElemFmt fmt, int i, uint32_t nfmt, int nfmt_bit)
{
	switch (fmt) {
	case EF_F16:
		return f16_value((uint16_t)(w >> (16 * i)));
	case EF_F32:
		return bits_float((uint32_t)(w >> (32 * i)));
	case EF_F8:
		return f8_value((uint8_t)(w >> (8 * i)), nfmt, nfmt_bit);
	}
	return 0;
}

/* ARF register r as the semantics read it ($a14, $a15 read 0), without the
 * call: AMP operands are fixed register numbers of the instruction. */
static uint32_t
ra(const Exec *e, int r)
{
	return r >= 14 ? 0 : e->c->a[r];
}

/* Read n elements of format fmt from ARF registers r, r+1 (low word first,
 * low bits first). */
static void
read_elems(const Exec *e, int r, ElemFmt fmt, int n, float *out)
{
	for (int i = 0; i < n; i++) {
		if (fmt == EF_F16) {
			uint32_t w = ra(e, r + i / 2);
			out[i] =
			    (float)f16_value((uint16_t)(w >> (16 * (i % 2))));
		} else {
			out[i] = bits_float(ra(e, r + i));
		}
	}
}

/* Write n results to ARF registers r, r+1 (low word first). */
static void
write_elems(Exec *e, int r, ElemFmt fmt, int n, const float *v)
{
	if (fmt == EF_F16) {
		for (int i = 0; i < n; i += 2)
			sim_wa(e, r + i / 2,
			       (uint32_t)f16_result(v[i]) |
			           (uint32_t)f16_result(v[i + 1]) << 16);
	} else {
		for (int i = 0; i < n; i++)
			sim_wa(e, r + i, fp_float_f32(v[i]));
	}
}

/* The inputs of one instruction, as exact doubles. */
static void
read_inputs(const Exec *e, const AmpForm *f, int r, double *x)
{
	if (f->in == EF_F32) {
		x[0] = bits_float(ra(e, r));
		return;
	}
	uint64_t w = (uint64_t)ra(e, r + 1) << 32 | ra(e, r);
	for (int i = 0; i < f->ninputs; i++)
		x[i] = elem64(w, f->in, i, e->c->fp_nfmt, 1);
}

/* Cache key of a weight format: f16, f32, or f8 in the format of the
 * $FP_NFMT weight bit. */
static uint8_t
weight_key(const Exec *e, ElemFmt in)
{
	return in == EF_F16   ? 1
	       : in == EF_F32 ? 2
	                      : (uint8_t)(3 + (e->c->fp_nfmt & 1));
}

static __attribute__((noinline)) const double *
weights_decode(const Exec *e, ElemFmt in, uint8_t key, int k)
{
	Tile *t = e->tile;
	AmpWeights *w = &t->amp_w;
	int n = in == EF_F16 ? 4 : in == EF_F32 ? 2 : 8;
	for (int i = 0; i < n; i++)
		w->el[k][i] = elem64(t->cwei[k], in, i, e->c->fp_nfmt, 0);
	w->raw[k] = t->cwei[k];
	w->fmt[k] = key;
	return w->el[k];
}

/* The elements of CWEI k as weights of a form with input format `in`
 * (cache key `key`), from the tile's decoded copy, refreshed when cwei[k]
 * or the key differs from what it was decoded from. Element i is what
 * elem64(cwei[k], in, i, nfmt, 0) returns. */
static inline const double *
weights_of(const Exec *e, ElemFmt in, uint8_t key, int k)
{
	const AmpWeights *w = &e->tile->amp_w;
	if (w->raw[k] == e->tile->cwei[k] && w->fmt[k] == key)
		return w->el[k];
	return weights_decode(e, in, key, k);
}

/* 2^$FP_SCL for FP8 products, else 1. */
static double
product_scale(const Exec *e, const AmpForm *f)
{
	if (f->in != EF_F8)
		return 1.0;
	return ldexp(1.0, fp_scale6(e->c->fp_scl));
}

/* A NaN result of one engine's sum depends on which operand of each
 * multiply and add the host returns when NaNs meet, which C leaves to the
 * compiler. The model fixes it to what the x86 SSE build of the original
 * code did (its operand order: x * w, then * scale, then sum + product):
 * the first operand's NaN, else the second's, else the operation's own
 * default NaN. The fast loops below give the same non-NaN sums whatever the
 * operand order; a NaN sum is recomputed here with the order made
 * explicit. */
/* The NaN an operation returns for NaN operand a: a, quiet. Set by hand,
 * as the compiler may fold a float -> double -> float round trip of a
 * signalling NaN (a partial that became acc) into the unchanged value. */
static double
quiet(double a)
{
	uint64_t b;
	memcpy(&b, &a, 8);
	return bits_double(b | 0x0008000000000000ull);
}

static double
nan_mul(double a, double b)
{
	return isnan(a) ? quiet(a) : isnan(b) ? quiet(b) : a * b;
}

static double
nan_add(double a, double b)
{
	return isnan(a) ? quiet(a) : isnan(b) ? quiet(b) : a + b;
}

static double
mac_nan(float acc, const double *x, const double *w, int n, double scale,
        int scaled)
{
	double sum = acc;
	for (int i = 0; i < n; i++) {
		double p = nan_mul(x[i], w[i]);
		sum = nan_add(sum, scaled ? nan_mul(p, scale) : p);
	}
	return sum;
}

/* One AMP instruction of form f. Operands (all forms): dst, input,
 * partials, flags (insns.def). */
static void
amp_exec(Exec *e, const AmpForm *f)
{
	AmpState *s = &e->c->amp;
	int dst = e->in->op[0], src = e->in->op[1], part = e->in->op[2];
	int p = amp_phase(f, (uint32_t)e->in->op[3]);

	/* 1, 2: results out and partials in for this phase's io engines. */
	if (p % f->io_every == 0) {
		int base = (p / f->io_every) * f->io;
		float v[AMP_MAX_IO];
		write_elems(e, dst, f->res, f->io, &s->done[base]);
		read_elems(e, part, f->part, f->io, v);
		memcpy(&s->next[base], v, sizeof(float) * (size_t)f->io);
	}

	/* 3: multiply-accumulate. Engine m at phase p uses CWEI
	 * cwei_index(m, p / per_cwei); its weight for input i is element i of
	 * it, or element p % per_cwei when phases share one CWEI (then there
	 * is one input). The sums are formed in the same order as always:
	 * acc, then + x[i] * w * scale for i = 0, 1, ...; for f16 and f32
	 * the scale is 1, and x * w * 1.0 is x * w, so that product is left
	 * out. A NaN sum is redone by mac_nan. */
	double x[AMP_MAX_INPUTS];
	read_inputs(e, f, src, x);
	int per_cwei = f->phases / AMP_COLUMNS; /* phases sharing one CWEI */
	int col = p / per_cwei, elem0 = per_cwei > 1 ? p % per_cwei : 0;
	uint8_t key = weight_key(e, f->in);
	if (f->in == EF_F16) {
		for (int m = 0; m < f->engines; m++) {
			const double *w =
			    weights_of(e, EF_F16, key, cwei_index(m, col));
			double sum = s->acc[m];
			sum += x[0] * w[0];
			sum += x[1] * w[1];
			sum += x[2] * w[2];
			sum += x[3] * w[3];
			if (isnan(sum))
				sum = mac_nan(s->acc[m], x, w, 4, 1.0, 0);
			s->acc[m] = acc_round(sum);
		}
	} else if (f->in == EF_F32) {
		for (int m = 0; m < f->engines; m++) {
			const double *w =
			    weights_of(e, EF_F32, key, cwei_index(m, col));
			double sum = s->acc[m];
			sum += x[0] * w[elem0];
			if (isnan(sum))
				sum =
				    mac_nan(s->acc[m], x, &w[elem0], 1, 1.0, 0);
			s->acc[m] = acc_round(sum);
		}
	} else {
		double scale = product_scale(e, f);
		for (int m = 0; m < f->engines; m++) {
			const double *w =
			    weights_of(e, f->in, key, cwei_index(m, col));
			double sum = s->acc[m];
			for (int i = 0; i < f->ninputs; i++)
				sum += x[i] * w[elem0 + i] * scale;
			if (isnan(sum))
				sum = mac_nan(s->acc[m], x, &w[elem0],
				              f->ninputs, scale, 1);
			s->acc[m] = acc_round(sum);
		}
	}

	/* 4: end of group. */
	if (p == f->phases - 1)
		for (int m = 0; m < f->engines; m++) {
			s->done[m] = s->acc[m];
			s->acc[m] = s->next[m];
		}
}

void
sim_amp_clear(Context *c)
{
	memset(&c->amp, 0, sizeof c->amp);
}

void
exec_f16v4hihoamp(Exec *e)
{
	amp_exec(e, &forms[HIHO]);
}

void
exec_f16v4sihoamp(Exec *e)
{
	amp_exec(e, &forms[SIHO]);
}

void
exec_f16v4sisoamp(Exec *e)
{
	amp_exec(e, &forms[SISO]);
}

void
exec_f16v4hihov4amp(Exec *e)
{
	amp_exec(e, &forms[HIHOV4]);
}

void
exec_f32sisoamp(Exec *e)
{
	amp_exec(e, &forms[F32SISO]);
}

void
exec_f32sisov2amp(Exec *e)
{
	amp_exec(e, &forms[F32SISOV2]);
}

void
exec_f8v8hihov4amp(Exec *e)
{
	amp_exec(e, &forms[F8HIHOV4]);
}

/* SLIC: isa.md 5.6 has only a sketch of the data flow; fault honestly. */
static void
slic(Exec *e)
{
	sim_fault(e, FAULT_INVALID_INSTR, 0,
	          "%s: not emulated: SLIC semantics are only partly public "
	          "(isa.md 5.6)",
	          e->d->mnemonic);
}

void
exec_f16v4hihoslic(Exec *e)
{
	slic(e);
}

void
exec_f16v4sihoslic(Exec *e)
{
	slic(e);
}

void
exec_f16v4sisoslic(Exec *e)
{
	slic(e);
}

void
exec_f16v4hihov4slic(Exec *e)
{
	slic(e);
}

void
exec_f32sisoslic(Exec *e)
{
	slic(e);
}

void
exec_f32sisov2slic(Exec *e)
{
	slic(e);
}

void
exec_f8v8hihov4slic(Exec *e)
{
	slic(e);
}

/* Weight loads (supervisor only; tile.c enforces the context). */
static void
putcs(Exec *e, int n)
{
	int k = e->in->op[0];
	uint32_t size = 8u * (uint32_t)n;
	if (k < 0 || k + n > CHIP_CWEI || k % n) {
		sim_fault(e, FAULT_INVALID_OP, 0,
		          "%s %d: CWEI index must be %s0..%d", e->d->mnemonic,
		          k, n > 1 ? "even, " : "", CHIP_CWEI - n);
		return;
	}
	uint32_t addr = e->tile->sup.cccsload;
	uint64_t w[2];
	if (!sim_load(e, addr, w, size))
		return;
	memcpy(&e->tile->cwei[k], w, size);
	e->tile->sup.cccsload = addr + size;
}

void
exec_ld64putcs(Exec *e)
{
	putcs(e, 1);
}

void
exec_ld128putcs(Exec *e)
{
	putcs(e, 2);
}

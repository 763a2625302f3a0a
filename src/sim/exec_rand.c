/*
 * exec_rand.c - the per-context PRNG and the instructions that use it:
 * urand32/64 (uniform bits), f32v2grand/f16v2grand (Gaussian), the random
 * dropout masks f32v2rmask/f16v4rmask, and the symmetric uniform
 * conversions *sufromui (which do not use the PRNG but exist to turn its
 * output into floats).
 *
 * The generator is xoroshiro128+ over Context.prng[0..1] (DECISION: the
 * tile's algorithm is not public; the seeding formula is isa.md 2.3's).
 * Stochastic rounding draws from the same generator (fpenv_rbits).
 */
#include "fpsim.h"

#include <math.h>

static const double TWO_PI = 6.283185307179586476925286766559;

static uint64_t
rotl(uint64_t x, int k)
{
	return x << k | x >> (64 - k);
}

/* $PRNG_SEED: PRNG_0 = {v, ~v}, PRNG_1 = {(v<<13)|(~v>>19),
 * (~v<<13)|(v>>19)}; prng[i] holds PRNG_i_1 in its high word. */
void
sim_prng_seed(Context *c, uint32_t v)
{
	uint32_t nv = ~v;
	c->prng[0] = (uint64_t)nv << 32 | v;
	uint32_t lo = v << 13 | nv >> 19, hi = nv << 13 | v >> 19;
	c->prng[1] = (uint64_t)hi << 32 | lo;
}

uint64_t
sim_prng_next(Context *c)
{
	/* An all-zero state would stay zero: behave as if seeded with 0
	 * (DECISION: the reset state is not documented). */
	if (!c->prng[0] && !c->prng[1])
		sim_prng_seed(c, 0);
	uint64_t s0 = c->prng[0], s1 = c->prng[1];
	uint64_t r = s0 + s1;
	s1 ^= s0;
	c->prng[0] = rotl(s0, 24) ^ s1 ^ (s1 << 16);
	c->prng[1] = rotl(s1, 37);
	return r;
}

void
exec_urand32(Exec *e)
{
	sim_wa(e, e->in->op[0], (uint32_t)sim_prng_next(e->c));
}

void
exec_urand64(Exec *e)
{
	sim_wa64(e, e->in->op[0], sim_prng_next(e->c));
}

/* Two standard normal values from one 64-bit draw (Box-Muller, computed in
 * double; DECISION: the tile's method is not public). */
static void
gauss2(Context *c, double *g)
{
	uint64_t r = sim_prng_next(c);
	double u1 = ((double)(uint32_t)(r >> 32) + 0.5) * 0x1p-32; /* (0,1) */
	double u2 = (double)(uint32_t)r * 0x1p-32;
	double rad = sqrt(-2.0 * log(u1));
	g[0] = rad * cos(TWO_PI * u2);
	g[1] = rad * sin(TWO_PI * u2);
}

void
exec_f32v2grand(Exec *e)
{
	double g[2];
	unsigned fl = 0;
	gauss2(e->c, g);
	uint32_t r[2] = {fp_f64_to_f32(g[0], FP_RNE, 0, &fl),
	                 fp_f64_to_f32(g[1], FP_RNE, 0, &fl)};
	put32(e, 0, 2, r);
}

void
exec_f16v2grand(Exec *e)
{
	double g[2];
	unsigned fl = 0;
	gauss2(e->c, g);
	uint16_t r[2] = {fp_f64_to_f16(g[0], FP_RNE, 0, FP_OV_SAT, &fl),
	                 fp_f64_to_f16(g[1], FP_RNE, 0, FP_OV_SAT, &fl)};
	put16(e, 0, 2, r);
}

/* rmask dst, src, p: lane i keeps its value when p[16] is set or when the
 * i-th 16 random bits of one draw are below p[15:0] (probability
 * p[15:0]/65536), else becomes +0. p[16:0] == 0 masks everything. */
static int
keep(uint64_t r, int i, uint32_t p)
{
	return (p >> 16) & 1 || ((r >> (16 * i)) & 0xffff) < (p & 0xffff);
}

void
exec_f32v2rmask(Exec *e)
{
	uint32_t x[2];
	get32(e, 1, 2, x);
	uint32_t p = sim_ra(e, e->in->op[2]);
	uint64_t r = sim_prng_next(e->c);
	for (int k = 0; k < 2; k++)
		x[k] = keep(r, k, p) ? x[k] : 0;
	put32(e, 0, 2, x);
}

void
exec_f16v4rmask(Exec *e)
{
	uint16_t x[4];
	get16(e, 1, 4, x);
	uint32_t p = sim_ra(e, e->in->op[2]);
	uint64_t r = sim_prng_next(e->c);
	for (int k = 0; k < 4; k++)
		x[k] = keep(r, k, p) ? x[k] : 0;
	put16(e, 0, 4, x);
}

/* sufromui: an unsigned n-bit u becomes (u - 2^(n-1) + 1/2) / 2^n, i.e.
 * symmetric about 0, never 0, magnitude at least 2^-(n+1) (the ISA text's
 * 2^-33 and 2^-17), rounded to nearest even. */
void
exec_f32sufromui(Exec *e)
{
	unsigned fl = 0;
	double u = sim_ra(e, e->in->op[1]);
	sim_wa(e, e->in->op[0],
	       fp_f64_to_f32((u - 0x1p31 + 0.5) * 0x1p-32, FP_RNE, 0, &fl));
}

void
exec_f32v2sufromui(Exec *e)
{
	unsigned fl = 0;
	uint32_t x[2];
	get32(e, 1, 2, x);
	for (int k = 0; k < 2; k++)
		x[k] = fp_f64_to_f32(((double)x[k] - 0x1p31 + 0.5) * 0x1p-32,
		                     FP_RNE, 0, &fl);
	put32(e, 0, 2, x);
}

static void
sufromui16(Exec *e)
{
	unsigned fl = 0;
	int n = 2 * op_regs(e, 0);
	uint16_t x[4];
	get16(e, 1, n, x);
	for (int k = 0; k < n; k++)
		x[k] = fp_f64_to_f16(((double)x[k] - 0x1p15 + 0.5) * 0x1p-16,
		                     FP_RNE, 0, FP_OV_SAT, &fl);
	put16(e, 0, n, x);
}

void
exec_f16v2sufromui(Exec *e)
{
	sufromui16(e);
}

void
exec_f16v4sufromui(Exec *e)
{
	sufromui16(e);
}

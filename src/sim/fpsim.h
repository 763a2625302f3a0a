/*
 * fpsim.h - helpers shared by the floating-point instruction semantics
 * (exec_float.c, exec_acc.c, exec_rand.c): the issuing context's rounding
 * environment and ARF operand access by lanes. Internal to src/sim.
 */
#ifndef IPU_FPSIM_H
#define IPU_FPSIM_H

#include "../util/fp.h"
#include "sim.h"

/* $FP_CTL as it applies to one instruction, plus the flags it raises. */
typedef struct {
	FpRound rnd;   /* RND: integer conversions */
	FpRound mode;  /* f16 results and f32->f16: RND, or RSR when ESR */
	int sr;        /* ESR */
	FpOverflow ov; /* f16 / f8 overflow: NaN (NANOO) or saturate */
	unsigned flags;
	uint64_t pool; /* random bits for stochastic rounding */
	int npool;     /* 32-bit words left in pool */
} FpEnv;

FpEnv fpenv(Exec *e);
/* 32 random bits for one stochastic rounding (0 when ESR is clear, so the
 * PRNG only advances when stochastic rounding is on). */
uint32_t fpenv_rbits(Exec *e, FpEnv *v);
/* Or the flags into $FP_STS; fault and return 0 if one is trapped. */
int fpenv_finish(Exec *e, FpEnv *v);

/* ARF registers in operand i: 1 (A), 2 (AP) or 4 (AQ). */
int op_regs(const Exec *e, int i);
/* n 16-bit lanes of operand i, low half of the first register first;
 * :BL/:BU broadcast one half to all lanes. */
void get16(const Exec *e, int i, int n, uint16_t *h);
/* n 32-bit lanes of operand i; :B broadcasts the single register. */
void get32(const Exec *e, int i, int n, uint32_t *w);
void put16(Exec *e, int i, int n, const uint16_t *h); /* n even */
void put32(Exec *e, int i, int n, const uint32_t *w);

/* An f32 bit pattern with the all-ones exponent (an infinity or a NaN). */
static inline int
f32_special(uint32_t w)
{
	return (w & 0x7f800000u) == 0x7f800000u;
}

#endif

/*
 * vadd.h - the vector-add kernel (kernels/vadd.S) from the host side: its
 * argument block and cycle formula. dst += src_0 + ... + src_{n-1} over
 * segments of 8-byte atoms of f16 or f32; vadd_bias_f16 then adds a bias
 * row (a GEMM's bias on its C panels, in the K-split reduction),
 * vadd_bias_res_f16 a residual operand after it, and
 * vadd_bias_gelu_f16_f8 (kernels/vadd_f8.S) a GELU of the biased sum in
 * f16 and its cast to f8 instead of the f16 store; vadd_norm_f16 divides
 * each row by its sum, vadd_norm_f16_f8 (kernels/vadd_norm_f8.S) then
 * casts it to f8 instead of the f16 store.
 */
#ifndef IPU_VADD_H
#define IPU_VADD_H

#include <stdint.h>

#include "../target/chip.h"

enum {
	VADD_ARGS_BYTES = 40 + 6 * 24,
	VADD_BIAS_ARGS_BYTES = 40 + 6 * 28,              /* vadd_bias_f16 */
	VADD_GELU_ARGS_BYTES = VADD_BIAS_ARGS_BYTES + 8, /* and f8's format */
	VADD_NORM_ARGS_BYTES =
	    VADD_BIAS_ARGS_BYTES + 16 + 6 * 16, /* vadd_norm_f16 */
	VADD_ROW_ATOMS = 4,                     /* of a 16-column f16 C panel */
	VADD_NORM_F8_ARGS_BYTES =
	    VADD_NORM_ARGS_BYTES + 8, /* vadd_norm_f16_f8: f8's format */
	VADD_NORM_RCP_BYTES = 8,      /* vadd_norm_f16: a row's reciprocal */
	VADD_NORM = 4,                /* vadd_entry's variant: vadd_norm_f16 */
	VADD_NORM_F8 = 5              /* and vadd_norm_f16_f8 */
};

/* f32 (4-byte elements) or f16; with bias, vadd_bias_f16 (f16 only);
 * bias 2: vadd_bias_res_f16; bias 3: vadd_bias_gelu_f16_f8; bias 4
 * (VADD_NORM, no bias row): vadd_norm_f16; bias 5 (VADD_NORM_F8):
 * vadd_norm_f16_f8. */
const char *vadd_entry(int f32, int bias);
/* The kernel object of an entry of vadd_entry: "vadd", or "vadd_f8"
 * (C600 only) for bias 3, "vadd_norm_f8" (C600 only) for VADD_NORM_F8. */
const char *vadd_object(int bias);
/* One call: nseg segments of `atoms` atoms, dst's at dst + g * dst_seg,
 * source k's (k < nsrc) at src + k * stride + g * src_seg (bytes). With
 * `bias` (vadd_bias_f16): each segment is rows of one 16-column panel
 * (atoms a multiple of VADD_ROW_ATOMS), segment g's bias row at bias + g
 * * bias_seg, added after the sources. With `has_res` too
 * (vadd_bias_res_f16): h at res, laid out as dst (segment g at res + g *
 * dst_seg), added after the bias. With `has_gelu` instead
 * (vadd_bias_gelu_f16_f8, nsrc a multiple of 3): the GELU in f16 of the
 * biased sum cast to f8 (F143, or F152 with f152; x 2^-fp8_scale) written to
 * res, laid out as dst with one byte an element (segment g at res + g * dst_seg
 * / 2, rows of 16 bytes); dst is read, not written, by the last pass.
 * With `norm_cols` (vadd_norm_f16; f16, no bias): each segment is rows
 * of one 16-column panel, as with a bias, and each row's sum is
 * multiplied by the reciprocal of its column norm_cols (a multiple of
 * 4; a column of ones in PV's B sums the row of an unnormalised softmax
 * there): y = f16(sum f16(1 / f32(sum[norm_cols]))), every column of the
 * row (those from norm_cols on are padding). The kernel writes the
 * rows' reciprocals, 8 bytes a row (VADD_NORM_RCP_BYTES), after the
 * sources, at src + nsrc * stride: the caller's space. With `norm_f8`
 * too (vadd_norm_f16_f8): y cast to f8 (F143, or F152 with f152; x
 * 2^-fp8_scale) written to res, laid out as dst with one byte an element
 * (as has_gelu's q); dst is read, not written, by the last pass. */
typedef struct {
	uint32_t dst, src, bias, res; /* tile addresses */
	uint32_t stride, nsrc, atoms, nseg, dst_seg, src_seg, bias_seg;
	uint8_t has_bias, has_res, has_gelu, f152, norm_f8;
	int8_t fp8_scale;
	uint32_t norm_cols;
	/* five workers' ranges (the sixth empty): run by the caller's five
	 * `run`s beside an exchange (vadd_five_block), not by the entry */
	uint8_t five;
} VaddCall;
/* vadd_norm_f16's reciprocals of the rows of `atoms` atoms of a segment
 * (whole rows): their bytes, or the offset of the row at atom `atoms`. */
static inline uint32_t
vadd_norm_rcp_bytes(uint32_t atoms)
{
	return atoms / VADD_ROW_ATOMS * VADD_NORM_RCP_BYTES;
}
/* out: VADD_ARGS_BYTES, or VADD_BIAS_ARGS_BYTES with has_bias,
 * VADD_GELU_ARGS_BYTES with has_gelu, VADD_NORM_ARGS_BYTES with
 * norm_cols, VADD_NORM_F8_ARGS_BYTES with norm_f8. */
void vadd_args_fill(const VaddCall *c, uint8_t *out);
/* Cycles of one call, from the supervisor's entry to its return; bias 2:
 * with the residual (vadd_bias_res_f16); bias 3: with the GELU and its
 * cast (vadd_bias_gelu_f16_f8, nsrc a multiple of 3); VADD_NORM and
 * VADD_NORM_F8: vadd_norm_f16 and vadd_norm_f16_f8 (whole rows). */
uint64_t vadd_cycles(const Chip *c, uint32_t atoms, uint32_t nsrc,
                     uint32_t nseg, int bias);
/* The same of vadd_norm_f16 (VaddCall.norm_cols): vadd_cycles with
 * VADD_NORM. */
uint64_t vadd_norm_cycles(const Chip *c, uint32_t atoms, uint32_t nsrc,
                          uint32_t nseg);
/* The five workers of a call with VaddCall.five (not vadd_norm_f16),
 * launched by the supervisor from cycle `at`: setzi $m1, the worker's
 * entry; setzi $m2, the ranges; five `run $m1, $m2, w * words`, worker w
 * then summing its range as in the entry (kernels/vadd.inc). open: the
 * supervisor's first slot 5 after the runs; exit_min, exit_max: the
 * workers' first and last exit (their last issue), absolute cycles. */
typedef struct {
	uint64_t open, exit_min, exit_max;
} VaddFive;
void vadd_five_block(const Chip *c, uint32_t atoms, uint32_t nsrc,
                     uint32_t nseg, int bias, uint64_t at, VaddFive *f);
/* The variant (vadd_entry's bias) of call v by its flags. */
int vadd_call_variant(const VaddCall *v);
/* The worker entry of vadd_entry(f32, bias) (bias 0 to 3): its symbol,
 * which five `run`s start. */
const char *vadd_worker(int f32, int bias);

#endif

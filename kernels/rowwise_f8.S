// rowwise_f8.S - the f16 softmax with its exps in f16 and the f16
// layernorm with its deviations and last pass in f16, writing their
// results in f8 (C600 only: f16v8tof8), for an op whose one reader is a
// cast to f8.
//
//   entry               per row
//   rw_softmax_f16h8    rw_softmax_f16h's y (f16), narrowed to f8
//   rw_softmax_f16h8u   exp(scale (x - max)) in f16, narrowed to f8,
//                       not divided by the sum (PV's multiply sums the
//                       row in V's column of ones)
//   rw_layernorm_f16h8  the mean in f32, the squares of the deviations
//                       about it (rounded to f16) in f16, summed in f32;
//                       z and y in f16, narrowed to f8
//   rw_layernorm_f16h8n the same without gamma and beta: y = z (a norm,
//                       whose gamma and beta the host folded into the
//                       next GEMM's weights and bias)
//
// Passes 1 and 2 are rw_softmax_f16h's. Pass 3 forms each y in f16 as
// rw_softmax_f16h does and narrows two atoms (eight halves) at a time
// with f16v8tof8 at $FP_SCL (the entry sets the format and the scale
// from the argument block): the bytes are the cast of rw_softmax_f16h's
// result (ew_cast_f16_f8's f16v8tof8). dst is in panels of 32 columns
// only (32 f8 a panel row, four stores: the f8 GEMM's A K-panel rows,
// so that PV's A moves in blocks of a panel's rows); a row of an odd
// number of atoms reads one e past its own (its y go to the last panel
// row's padding lanes, whose values are unspecified), so the e place
// has one atom more (rw_panel_e_bytes).

	.section .text.rowwise_f8, "ax"

	.include "rowwise.inc"

	RW_ENTRY rw_softmax_f16h8, sm16h8_rows, sm16h8_s1, sm16h8_s2, sm16h8_s3, 1
	RW_ENTRY rw_softmax_f16h8u, sm16h8u_rows, sm16h8_s1, sm16h8u_s2, sm16h8u_s2, 1, 2
	RW_ENTRY rw_layernorm_f16h8, ln16h8_rows, ln16h8_s1, ln16h8_s2, ln16h8_s3, 1
	RW_ENTRY rw_layernorm_f16h8n, ln16h8n_rows, ln16h8n_s1, ln16h8n_s2, ln16h8n_s3, 1

// Pass 3: 1 / sum in f16 in $a12:13, e loaded alternately into $a4:5
// and $a6:7, y into $a0:3, narrowed into $a10:11. Pipelined a pair:
// pair i loads the next two e while it scales its own, and narrows them
// in the bundle that stores pair i - 1 (the cursor then moving by \j
// atoms: ARG_JUMP after a panel row's fourth), 3 bundles a pair (its
// three aux and three main instructions) against 4.
.macro SM16h8_PAIR j
	{ ld64step $a6:7, $mzero, $m9+=, 2 ; f16v4mul $a0:1, $a12:13, $a4:5 }
	{ ld64step $a4:5, $mzero, $m9+=, 2 ; f16v4mul $a2:3, $a12:13, $a6:7 }
	{ st64step $a10:11, $mzero, $m7+=, \j ; f16v8tof8 $a10:11, $a0:3 }
.endm
// P pairs, P - 1 = L = (atoms - 1) / 2 (rounded down). L = 0: the pair
// alone (5: its one e loaded). Else pair 0 without a store, L - 1 = 4 F
// + r pairs storing the pair before: F loop bodies of four (the fourth
// store ending a panel row), r (0 .. 3) of one; then the last pair (its
// second e the row's last, or the one past it) storing pair L - 1 with
// the jump if L - 1 ends a panel row (r = 3: $m8 = max([r = 3] jump,
// 1)), and its own store. $m8 (ARG_TAIL in rows mode) is loaded again.
.macro SM16h8_P3
	{ add $m9, $m10, 0 ; f32tof16 $a12, $a10 }
	{ add $m7, $m2, 0 ; f32tof16 $a13, $a10 }
	{ ld64step $a4:5, $mzero, $m9+=, 2 ; fnop }
	{ ld32 $m6, $mworker_base, $mzero, ARG_JUMP / 4 ; fnop }
	{ shr $m14, $m5, 1 ; fnop }
	{ brnz $m14, 4f ; fnop }
	{ ld64step $a6:7, $mzero, $m9+=, 2 ; f16v4mul $a0:1, $a12:13, $a4:5 }
	{ nop ; f16v4mul $a2:3, $a12:13, $a6:7 }
	{ nop ; f16v8tof8 $a10:11, $a0:3 }
	{ bri 7f ; fnop }
4:	{ add $m14, $m14, -1 ; fnop }
	{ shr $m10, $m14, 2 ; fnop }
	{ and $m14, $m14, 3 ; fnop }
	{ cmpeq $m8, $m14, 3 ; fnop }
	{ mul $m8, $m8, $m6 ; fnop }
	{ ld64step $a6:7, $mzero, $m9+=, 2 ; f16v4mul $a0:1, $a12:13, $a4:5 }
	{ ld64step $a4:5, $mzero, $m9+=, 2 ; f16v4mul $a2:3, $a12:13, $a6:7 }
	{ max $m8, $m8, 1 ; f16v8tof8 $a10:11, $a0:3 }
	{ rpt $m10, 11 ; fnop }
	SM16h8_PAIR 1
	SM16h8_PAIR 1
	SM16h8_PAIR 1
	SM16h8_PAIR $m6
	{ rpt $m14, 2 ; fnop }
	SM16h8_PAIR 1
	{ ld64step $a6:7, $mzero, $m9+=, 2 ; f16v4mul $a0:1, $a12:13, $a4:5 }
	{ st64step $a10:11, $mzero, $m7+=, $m8 ; f16v4mul $a2:3, $a12:13, $a6:7 }
	{ ld32 $m8, $mworker_base, $mzero, ARG_TAIL / 4 ; f16v8tof8 $a10:11, $a0:3 }
7:	{ st64step $a10:11, $mzero, $m7+=, 1 ; fnop }
.endm
.macro SM16h8_P1
	SM16_P1
.endm
.macro SM16h8_TAS
.endm
.macro SM16h8_EROW
	SM16_EROW
.endm
.macro SM16h8_ESEG
	SM16_ESEG
.endm
.macro SM16h8_P2
	SM16h_P2
.endm

	SM_WORKERS 16h8

// rw_softmax_f16h8u: pass 1 is SM16_P1 (split mode: sm16h8_s1 itself);
// pass 2 (sm16h8u_p2, one copy that both modes call) writes each pair
// of atoms' e = exp(-scale (max - x)) in f16 (as rw_softmax_f16h's)
// narrowed to f8, and sums nothing. The row's (or segment's) last pair
// is masked: with an even count, the atom before the last (the full set)
// and the last ($m11's set: the tail set, or the full one in a segment
// before the row's last); with an odd count, the last atom (the tail
// set) and the same atom again with every lane -inf (the past set,
// ARG_PASTSET: e = 0). Nothing past the row is read, and the lanes of
// the last panel row past the row are 0.
	.equ ARG_PASTSET, 48

// A pair: x loaded an atom ahead into $a12:13 (the cursor moving by \j1
// after the pair's first load), t in $a0:3, e narrowed into $a10:11; the
// pair before's f8 stored in the second bundle (\st; the cursor then
// moving by \jd atoms): 9 bundles, one aux instruction each.
.macro SM16h8u_PAIR j1, jd, st=1
	{ ld64step $a12:13, $mzero, $m6+=, \j1 ; f16v4sub $a0:1, $a4:5, $a12:13 }
	.if \st
	{ st64step $a10:11, $mzero, $m7+=, \jd ; f16v4mul $a0:1, $a6:7, $a0:1 }
	.else
	{ nop ; f16v4mul $a0:1, $a6:7, $a0:1 }
	.endif
	{ ld64step $a12:13, $mzero, $m6+=, 1 ; f16v4sub $a2:3, $a4:5, $a12:13 }
	{ nop ; f16v4mul $a2:3, $a6:7, $a2:3 }
	SM16h8u_EXP8
.endm
.macro SM16h8u_EXP8
	{ nop ; f16v2exp $a0, $a0 }
	{ nop ; f16v2exp $a1, $a1 }
	{ nop ; f16v2exp $a2, $a2 }
	{ nop ; f16v2exp $a3, $a3 }
	{ nop ; f16v8tof8 $a10:11, $a0:3 }
.endm

// Pass 2, called with its return address in $m4 (`call $m4`): P = L + 1
// pairs, L = (atoms - 1) / 2 rounded down. L > 0: pair 0 (no store),
// L - 1 = 4 F + r pairs storing the pair before: F bodies of four (x's
// cursor jumping after atoms 4j + 3, the loads of the odd pairs' first
// atoms: ARG_XJUMP in $m9; dst's after a panel row's fourth pair:
// ARG_JUMP in $m10), r >> 1 bodies of two, r & 1 of one; the last pair
// stores pair L - 1 (with the jump when r = 3: $m3 = max([r = 3] jump,
// 1); L = 0: $m3 = 0, a store in place that the last pair's own
// overwrites) and then its own. Its atoms by the count's parity e (1:
// even): the first at the lead's offset less 8 e, with the set at
// ARG_TAILSET + 32 e (the full set when even); the second the lead, with
// $m11's set when even, else the past set: ARG_PASTSET + e ($m11 -
// ARG_PASTSET).
	.align 8
sm16h8u_p2:
	{ add $m6, $m1, 0 ; f32tof16 $a4, $a12 }
	{ add $m7, $m2, 0 ; f32tof16 $a5, $a12 }
	{ ld64step $a12:13, $mzero, $m6+=, 1 ; f32tof16 $a6, $a8 }
	{ shr $m14, $m5, 1 ; f32tof16 $a7, $a8 }
	{ setzi $m3, 0 ; fnop }
	{ brz $m14, 7f ; fnop }
	{ ld32 $m9, $mworker_base, $mzero, ARG_XJUMP / 4 ; fnop }
	{ ld32 $m10, $mworker_base, $mzero, ARG_JUMP / 4 ; fnop }
	{ add $m14, $m14, -1 ; fnop }
	{ and $m3, $m14, 3 ; fnop }
	{ shr $m14, $m14, 2 ; fnop }
	SM16h8u_PAIR 1, 1, 0
	{ rpt $m14, 35 ; fnop }
	SM16h8u_PAIR $m9, 1
	SM16h8u_PAIR 1, 1
	SM16h8u_PAIR $m9, 1
	SM16h8u_PAIR 1, $m10
	{ shr $m14, $m3, 1 ; fnop }
	{ rpt $m14, 17 ; fnop }
	SM16h8u_PAIR $m9, 1
	SM16h8u_PAIR 1, 1
	{ and $m14, $m3, 1 ; fnop }
	{ rpt $m14, 8 ; fnop }
	SM16h8u_PAIR $m9, 1
	{ cmpeq $m3, $m3, 3 ; fnop }
	{ mul $m3, $m3, $m10 ; fnop }
	{ max $m3, $m3, 1 ; fnop }
7:	{ and $m14, $m5, 1 ; fnop }
	{ shl $m10, $m14, 3 ; fnop }
	{ sub $m10, $m8, $m10 ; fnop }
	{ ld64 $a12:13, $m1, $m10, 0 ; fnop }
	{ shl $m10, $m14, 5 ; fnop }
	{ add $m10, $m10, ARG_TAILSET ; fnop }
	{ ld64 $a0:1, $mworker_base, $m10, 0 ; fnop }
	{ ld64 $a2:3, $mworker_base, $m10, 1 ; fnop }
	{ st64step $a10:11, $mzero, $m7+=, $m3 ; and64 $a12:13, $a12:13, $a0:1 }
	{ add $m3, $m11, -ARG_PASTSET ; or64 $a12:13, $a12:13, $a2:3 }
	{ mul $m3, $m3, $m14 ; f16v4sub $a12:13, $a4:5, $a12:13 }
	{ add $m3, $m3, ARG_PASTSET ; fnop }
	{ ld64 $a10:11, $m1, $m8, 0 ; fnop }
	{ ld64 $a0:1, $mworker_base, $m3, 0 ; fnop }
	{ ld64 $a2:3, $mworker_base, $m3, 1 ; and64 $a10:11, $a10:11, $a0:1 }
	{ nop ; or64 $a10:11, $a10:11, $a2:3 }
	{ nop ; f16v4mul $a0:1, $a6:7, $a12:13 }
	{ nop ; f16v4sub $a2:3, $a4:5, $a10:11 }
	{ nop ; f16v4mul $a2:3, $a6:7, $a2:3 }
	SM16h8u_EXP8
	{ st64step $a10:11, $mzero, $m7+=, 1 ; fnop }
	{ br $m4 ; fnop }
	.size sm16h8u_p2, . - sm16h8u_p2

// The rows: $m3 and $m4 (the row strides) loaded again after pass 2.
	.align 8
sm16h8u_rows:
	RW_ROWS_ENTRY
	{ ld32 $a8, $mworker_base, $mzero, ARG_C0 / 4 ; fnop }
1:	SM16_P1
	{ call $m4, sm16h8u_p2 ; fnop }
	{ ld32 $m3, $mworker_base, $mzero, ARG_XSTRIDE / 4 ; fnop }
	{ ld32 $m4, $mworker_base, $mzero, ARG_DSTRIDE / 4 ; fnop }
	RW_NEXT_ROW
	.size sm16h8u_rows, . - sm16h8u_rows

	.align 8
sm16h8u_s2:
	RW_SPLIT_ENTRY
	{ ld32 $a8, $mworker_base, $mzero, ARG_C0 / 4 ; fnop }
	RW_COMBINE S_P1, f32max, $a12
	{ call $m4, sm16h8u_p2 ; fnop }
9:	exitz $mzero
	.size sm16h8u_s2, . - sm16h8u_s2

// The layernorm's pass 3 in f16 (a row or segment of an even number of
// atoms: the host's rule), the statistics from rw_layernorm_f16's passes:
// z = rsqrt x + rsqrt (-mean) by one f16v4mix ($TAS = rsqrt in both
// halves, (-mean) x 4 in $a6:7; both products exact, their sum rounded
// once), which hands back the atom before's z; y = z gamma + beta by
// f16v4mul and f16v4add (gamma in $a2:3, beta in $a4:5), a pair's y in
// $a8:11 narrowed to f8 in $a12:13. A pair's body finishes atom 2j
// (whose z the mix of x 2j+1 returns) and atom 2j+1 (the mix of x 2j+2),
// loading x 2j+2, 2j+3 and the gamma and beta of 2j+1 and 2j+2 into the
// registers the same bundle reads (an instruction reads before the
// bundle writes); it stores the pair before's f8 (\st) and loads what
// lies in the row (\ld: not the last pair).
.macro LN16h8_PAIR ld, st, affine=1
	LN16h8_LD \ld, $a0:1, $m6, f16v4mix $a8:9, $a0:1, $a6:7
	.if \affine
	LN16h8_LD 1, $a2:3, $m9, f16v4mul $a8:9, $a8:9, $a2:3
	LN16h8_LD 1, $a4:5, $m10, f16v4add $a8:9, $a8:9, $a4:5
	.endif
	LN16h8_LD \ld, $a0:1, $m6, f16v4mix $a10:11, $a0:1, $a6:7
	.if \affine
	LN16h8_LD \ld, $a2:3, $m9, f16v4mul $a10:11, $a10:11, $a2:3
	LN16h8_LD \ld, $a4:5, $m10, f16v4add $a10:11, $a10:11, $a4:5
	.endif
	.if \st
	{ st64step $a12:13, $mzero, $m7+=, 1 ; f16v8tof8 $a12:13, $a8:11 }
	.else
	{ nop ; f16v8tof8 $a12:13, $a8:11 }
	.endif
.endm
// One bundle: \aux beside a load of \reg from \ptr (\ld), or a nop.
.macro LN16h8_LD ld, reg, ptr, aux:vararg
	.if \ld
	{ ld64step \reg, $mzero, \ptr+=, 1 ; \aux }
	.else
	{ nop ; \aux }
	.endif
.endm
// P pairs (atoms - 1 = 2 P - 1): the first body stores nothing, the
// last loads nothing, the last pair is stored after them; one pair takes
// one body that does neither.
.macro LN16h8_P3 gb, go, bo
	{ ld32 $m9, \gb, $mzero, \go ; f32tof16 $a6, $a12 }
	{ ld32 $m10, \gb, $mzero, \bo ; f32tof16 $a7, $a12 }
	{ add $m6, $m1, 0 ; f32tof16 $a13, $a10 }
	{ add $m7, $m2, 0 ; uput $TAS, $a13 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }
	{ ld64step $a2:3, $mzero, $m9+=, 1 ; fnop }
	{ ld64step $a4:5, $mzero, $m10+=, 1 ; f16v4mix $azeros, $a0:1, $a6:7 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }
	{ shr $m14, $m5, 1 ; fnop }
	{ brz $m14, 6f ; fnop }
	LN16h8_PAIR 1, 0
	{ add $m14, $m14, -1 ; fnop }
	{ rpt $m14, 6 ; fnop }
	LN16h8_PAIR 1, 1
	LN16h8_PAIR 0, 1
	{ bri 7f ; fnop }
6:	LN16h8_PAIR 0, 0
7:	{ st64step $a12:13, $mzero, $m7+=, 1 ; fnop }
.endm

// Passes 1 and 2 of both f8 layernorms. Their rows and segments are
// whole pairs of atoms (cols a multiple of 8), so no lane is padding and
// nothing is masked. Pass 1: rw_layernorm_f16's sum (the lead atom, then
// the others) without the mask.
.macro LN16h8_P1
	{ ld64 $a0:1, $m1, $m8, 0 ; setzi $a4, FP_CLR_ZAACC }
	{ add $m6, $m1, 0 ; uput $FP_CLR, $a4 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4acc $a0:1 }
	{ rpt $m5, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4acc $a0:1 }
	LN16_GINA
.endm
// Pass 2: the sum of squares about m16, the mean rounded to f16 (pass 3
// centres z on it too), in f16: a pair's deviations x + (-m16) by two
// f16v4add into $a8:11 (each rounded once to f16), their squares (exact)
// summed into the eight accumulators by one f16v8sqacc: 3 bundles a pair
// against 10 with the deviations in f32. P pairs (atoms - 1 = 2 P - 1):
// pair 0 loaded first, P - 1 bodies each finishing a pair while they
// load the next, the last pair after them; the sums read by ACC8_SUM.
.macro LN16h8_P2
	{ add $m6, $m1, 0 ; setzi $a4, FP_CLR_ZAACC }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; uput $FP_CLR, $a4 }
	{ ld64step $a2:3, $mzero, $m6+=, 1 ; f32tof16 $a6, $a12 }
	{ shr $m14, $m5, 1 ; f32tof16 $a7, $a12 }
	{ rpt $m14, 2 ; fnop }
	LN16h8_DEV 1
	LN16h8_DEV 0
	ACC8_SUM
.endm
// A pair's deviations squared and summed, loading the next pair (\ld).
.macro LN16h8_DEV ld
	LN16h8_LD \ld, $a0:1, $m6, f16v4add $a8:9, $a0:1, $a6:7
	LN16h8_LD \ld, $a2:3, $m6, f16v4add $a10:11, $a2:3, $a6:7
	{ nop ; f16v8sqacc $a8:11 }
.endm

	LN_WORKERS 16h8, $a10, 0

// The same pass 3 without gamma and beta (rw_layernorm_f16h8n): y = z,
// LN16h8_PAIR without its multiplies and adds (\affine 0): a pair's z
// from two mixes into $a8:11, narrowed and the pair before stored in the
// third bundle: 3 bundles a pair against 7. The pointer
// arguments (\gb, \go, \bo) are not read.
.macro LN16h8n_P3 gb, go, bo
	{ add $m6, $m1, 0 ; f32tof16 $a13, $a10 }
	{ add $m7, $m2, 0 ; uput $TAS, $a13 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f32tof16 $a6, $a12 }
	{ shr $m14, $m5, 1 ; f32tof16 $a7, $a12 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4mix $azeros, $a0:1, $a6:7 }
	{ brz $m14, 6f ; fnop }
	LN16h8_PAIR 1, 0, 0
	{ add $m14, $m14, -1 ; fnop }
	{ rpt $m14, 2 ; fnop }
	LN16h8_PAIR 1, 1, 0
	LN16h8_PAIR 0, 1, 0
	{ bri 7f ; fnop }
6:	LN16h8_PAIR 0, 0, 0
7:	{ st64step $a12:13, $mzero, $m7+=, 1 ; fnop }
.endm

.macro LN16h8n_P1
	LN16h8_P1
.endm
.macro LN16h8n_P2
	LN16h8_P2
.endm

	LN_WORKERS 16h8n, $a10, 0

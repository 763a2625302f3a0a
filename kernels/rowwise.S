// rowwise.S - kernels that reduce along each row of a row-major block:
// LayerNorm and softmax, f32 and f16, statistics in f32, for the GC200
// and the C600. docs/kernel-rowwise.md describes the contract;
// src/kernels/rowwise.c fills the argument block and counts cycles.
//
// Supervisor entry, `call $m10, rw_softmax_f16` with $m0 -> argument
// block. Clobbers $m1-$m4 and $WORKER0..5_BASE; preserves $m0 and
// $m5-$m15 of the supervisor.
//
//   entry               per row
//   rw_layernorm_f32    y = (x - mean) * rsqrt(var + eps) * gamma + beta
//   rw_layernorm_f16    the same, computed in f32, rounded once to f16
//   rw_softmax_f32      y = exp(scale (x - max)) / sum
//   rw_softmax_f16      the same, computed in f32, rounded once to f16
//   rw_softmax_f16h     the same, max and sum in f32, t, exp and y in f16
//
// Two modes (ARG_SPLIT). Rows: the workers take whole rows (the host
// gives worker w a contiguous range of rows) and run the three passes of
// each row. Split, for fewer than six rows: each row is cut into k
// segments of atoms, one per worker, and the passes run as three
// `runall`s; after each, every worker of a row combines the row's
// partial statistics (the max or sum of each segment, left in the
// vertices) in segment order, so all of them get the same value. A row is `atoms` 64-bit atoms (2 floats or 4 halves): the
// last one, the tail, may hold padding lanes past the row's columns.
// Each pass over a row first takes the tail with the padding masked out
// (ARG_MASK keeps the row's lanes; for softmax ARG_FILL puts -inf in the
// others, which the max ignores and exp turns into 0), then the atoms - 1
// full ones in a rpt loop. The last pass writes every atom, the padding
// lanes of the tail included (their values are unspecified).
//
// The f16 softmax keeps each atom's e, in f32, where the host says (a
// row-major dst row after its atoms, 24 bytes an atom: rw_dst_row_bytes;
// a panel dst after its panels), so that pass 3 multiplies by 1 / sum
// instead of computing exp again. Its dst may also be in the GEMM C
// layout (16-column panels), which the PV GEMM reads as its A: pass 3
// stores a row's atoms four at a time, a panel row each.
//
// A rpt body reads the next atom while it works on the current one, so
// a loop over n atoms is a load, n - 1 bodies and an epilogue: the body
// again with its load re-reading the row's first atom into a dead
// register (the same issues, nothing read past the row). Every worker
// instruction but exitz is a bundle: branch targets and rpt bodies stay
// 8-byte aligned without padding.

// Argument block (byte offsets), written by rw_args_fill().
	.equ ARG_N1, 0         // rows mode: atoms per row - 1 (the rpt count)
	.equ ARG_TAIL, 4       // rows mode: byte offset of a row's last atom
	.equ ARG_XSTRIDE, 8    // x row stride, bytes
	.equ ARG_DSTRIDE, 12   // dst row stride, bytes
	.equ ARG_C0, 16        // f32: softmax -scale; layernorm 1 / cols
	.equ ARG_C1, 20        // f32: layernorm eps
	.equ ARG_GAMMA, 24     // layernorm: gamma and beta addresses
	.equ ARG_BETA, 28
	// Two mask sets of 32 bytes: an 8-byte mask (all ones in the lanes
	// to keep), an 8-byte fill (softmax: -inf in the other lanes), the
	// mask in f32 lanes (layernorm f16, 16 bytes). The first masks a
	// row's last atom, the second keeps everything.
	.equ ARG_TAILSET, 32
	.equ ARG_FULLSET, 64
	.equ ARG_SPLIT, 96     // 1: split mode
	.equ ARG_JUMP, 100     // f16 softmax: atoms from a dst panel row's
	                       // last atom to the next panel's (1: row-major)
	.equ ARG_VERTEX, 104   // six worker vertices
	.equ ARG_XJUMP, 440    // f16 softmax: ARG_JUMP for x
	.equ FP_CLR_ZAACC, 8   // $FP_CLR: zero the accumulators

// Rows-mode vertex ($mvertex_base), words:
	.equ V_ROWS, 0         // rows of this worker (0: idle)
	.equ V_X, 1            // its first x row
	.equ V_D, 2            // its first dst row
	.equ V_E, 3            // f16 softmax: where it keeps a row's e
	.equ VERTEX_BYTES, 16

// Split-mode vertex, words: the worker's segment of one row.
	.equ S_ACTIVE, 0       // 0: idle
	.equ S_X, 1            // the segment's first x and dst atoms
	.equ S_D, 2
	.equ S_N1, 3           // atoms - 1
	.equ S_LEAD, 4         // byte offset of the atom taken first
	.equ S_ROW0, 5         // offset in the block of the row's first vertex
	.equ S_K1, 6           // segments of the row - 1
	.equ S_SET, 7          // its mask set: ARG_TAILSET or ARG_FULLSET
	.equ S_G, 8            // layernorm: its gamma and beta atoms
	.equ S_B, 9
	.equ S_E, 8            // softmax f16: where pass 2 keeps its e
	.equ S_P1, 10          // the segment's partial max or sum, pass 1
	.equ S_P2, 11          // its partial sum, pass 2
	.equ S_STAT, 12        // the row's max or -mean, from pass 2
	.equ SPLIT_VERTEX_BYTES, 56

	.section .text.rowwise, "ax"

// Supervisor: $m0 -> argument block. Every worker's $WORKER_BASE is the
// block, its $VERTEX_BASE its vertex. The values the branch and the
// runalls read are loaded before the CSR writes; the next pass's entry is
// set while the workers run (docs/fidelity.md: sup-dep).
.macro RW_ENTRY name, worker, s1, s2, s3
	.globl \name
	.type \name, @function
\name:
	ld32 $m3, $m0, $mzero, ARG_SPLIT / 4
	add $m2, $m0, ARG_VERTEX
	setzi $m1, \worker
	setzi $m4, \s1
	put $WORKER0_BASE, $m0
	put $WORKER1_BASE, $m0
	put $WORKER2_BASE, $m0
	put $WORKER3_BASE, $m0
	put $WORKER4_BASE, $m0
	put $WORKER5_BASE, $m0
	brnz $m3, 1f
	runall $m1, $m2, VERTEX_BYTES / 4
	sync TEXCH_SYNCZONE_LOCAL
	br $lr
1:	runall $m4, $m2, SPLIT_VERTEX_BYTES / 4
	setzi $m1, \s2
	setzi $m4, \s3
	sync TEXCH_SYNCZONE_LOCAL
	runall $m1, $m2, SPLIT_VERTEX_BYTES / 4
	sync TEXCH_SYNCZONE_LOCAL
	runall $m4, $m2, SPLIT_VERTEX_BYTES / 4
	sync TEXCH_SYNCZONE_LOCAL
	br $lr
	.size \name, . - \name
.endm

	RW_ENTRY rw_layernorm_f32, ln32_rows, ln32_s1, ln32_s2, ln32_s3
	RW_ENTRY rw_layernorm_f16, ln16_rows, ln16_s1, ln16_s2, ln16_s3
	RW_ENTRY rw_softmax_f32, sm32_rows, sm32_s1, sm32_s2, sm32_s3
	RW_ENTRY rw_softmax_f16, sm16_rows, sm16_s1, sm16_s2, sm16_s3
	RW_ENTRY rw_softmax_f16h, sm16h_rows, sm16h_s1, sm16h_s2, sm16h_s3

// Worker registers: $m0 rows left - 1, $m1 / $m2 the x / dst row (or
// segment), $m3 / $m4 the row strides, $m5 atoms - 1, $m6 / $m7 the x /
// dst cursors, $m8 the offset of the atom taken first, $m9 / $m10 the
// gamma / beta cursors, $m11 the mask set's offset in the block.
.macro RW_ROWS_ENTRY
	{ ld32 $m0, $mvertex_base, $mzero, V_ROWS ; fnop }
	{ brz $m0, 9f ; fnop }
	{ ld32 $m1, $mvertex_base, $mzero, V_X ; fnop }
	{ ld32 $m2, $mvertex_base, $mzero, V_D ; fnop }
	{ ld32 $m3, $mworker_base, $mzero, ARG_XSTRIDE / 4 ; fnop }
	{ ld32 $m4, $mworker_base, $mzero, ARG_DSTRIDE / 4 ; fnop }
	{ ld32 $m5, $mworker_base, $mzero, ARG_N1 / 4 ; fnop }
	{ ld32 $m8, $mworker_base, $mzero, ARG_TAIL / 4 ; fnop }
	{ setzi $m11, ARG_TAILSET ; fnop }
	{ add $m0, $m0, -1 ; fnop }
.endm

.macro RW_NEXT_ROW
	{ add $m1, $m1, $m3 ; fnop }
	{ add $m2, $m2, $m4 ; fnop }
	{ brnzdec $m0, 1b ; fnop }
9:	exitz $mzero
.endm

.macro RW_SPLIT_ENTRY
	{ ld32 $m0, $mvertex_base, $mzero, S_ACTIVE ; fnop }
	{ brz $m0, 9f ; fnop }
	{ ld32 $m1, $mvertex_base, $mzero, S_X ; fnop }
	{ ld32 $m2, $mvertex_base, $mzero, S_D ; fnop }
	{ ld32 $m5, $mvertex_base, $mzero, S_N1 ; fnop }
	{ ld32 $m8, $mvertex_base, $mzero, S_LEAD ; fnop }
	{ ld32 $m11, $mvertex_base, $mzero, S_SET ; fnop }
.endm

// \reg = \op over the partials at word \off of the row's vertices
// ($a13 is scratch; $a14 reads 0).
.macro RW_COMBINE off, op, reg
	{ ld32 $m9, $mvertex_base, $mzero, S_ROW0 ; fnop }
	{ ld32 $m10, $mvertex_base, $mzero, S_K1 ; fnop }
	{ add $m9, $m9, \off * 4 ; fnop }
	{ ld32step \reg, $mworker_base, $m9+=, SPLIT_VERTEX_BYTES / 4 ; fnop }
	{ rpt $m10, 1 ; fnop }
	{ ld32step $a13, $mworker_base, $m9+=, SPLIT_VERTEX_BYTES / 4 ; fnop }
	{ nop ; \op \reg, \reg, $a13 }
.endm

.macro RW_STORE reg, off
	{ st32 \reg, $mvertex_base, $mzero, \off ; fnop }
.endm

// ---- softmax, f32: x atoms in $a2:3, e in $a0:1, -scale in $a8, the
// max in $a12, the sum (then its reciprocal) in $a10:11 ----

// e = exp(-scale (max - x)) = exp(scale (x - max)); loads the next x.
.macro SM32_EXP p, s
	{ nop ; f32v2sub $a0:1, $a12:B, $a2:3 }
	{ ld64step $a2:3, $mzero, \p+=, \s ; f32v2mul $a0:1, $a8:B, $a0:1 }
	{ nop ; f32exp $a0, $a0 }
	{ nop ; f32exp $a1, $a1 }
.endm
// Summed, and kept in dst for pass 3 (the lead atom's at its place; a
// dst row holds f32 like x, and pass 2 has read an atom of x before it
// stores the e in its place, so dst may be x).
.macro SM32_SUM_LEAD p, s
	SM32_EXP \p, \s
	{ st64 $a0:1, $m2, $m8, 0 ; f32v2add $a10:11, $a10:11, $a0:1 }
.endm
.macro SM32_SUM p, s
	SM32_EXP \p, \s
	{ st64step $a0:1, $mzero, $m7+=, 1 ; f32v2add $a10:11, $a10:11, $a0:1 }
.endm

// The max: the lead atom masked (its padding lanes -inf), then the others.
.macro SM32_P1
	{ ld64 $a0:1, $m1, $m8, 0 ; fnop }
	{ ld64 $a4:5, $mworker_base, $m11, 0 ; fnop }
	{ ld64 $a6:7, $mworker_base, $m11, 1 ; fnop }
	{ add $m6, $m1, 0 ; and64 $a0:1, $a0:1, $a4:5 }
	{ ld64step $a2:3, $mzero, $m6+=, 1 ; or64 $a10:11, $a0:1, $a6:7 }
	{ rpt $m5, 0 ; fnop }
	{ ld64step $a2:3, $mzero, $m6+=, 1 ; f32v2max $a10:11, $a10:11, $a2:3 }
	{ nop ; f32max $a12, $a10, $a11 }
.endm
// The sum of e into $a10: the lead atom masked (e = 0 in its padding),
// then the others.
.macro SM32_P2
	{ ld64 $a2:3, $m1, $m8, 0 ; and64 $a10:11, $a10:11, $azeros }
	{ ld64 $a4:5, $mworker_base, $m11, 0 ; fnop }
	{ ld64 $a6:7, $mworker_base, $m11, 1 ; fnop }
	{ add $m6, $m1, 0 ; and64 $a2:3, $a2:3, $a4:5 }
	{ add $m7, $m2, 0 ; or64 $a2:3, $a2:3, $a6:7 }
	SM32_SUM_LEAD $m6, 1
	{ rpt $m5, 4 ; fnop }
	SM32_SUM $m6, 1
	{ nop ; f32add $a10, $a10, $a11 }
.endm
// y = e / sum over every atom, e read back from dst (no exp again), 1 /
// sum in $a10: the loop loads the next atom while it scales this one.
.macro SM32_P3
	{ add $m6, $m2, 0 ; fnop }
	{ add $m7, $m2, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }
	{ rpt $m5, 1 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f32v2mul $a2:3, $a10:B, $a0:1 }
	{ st64step $a2:3, $mzero, $m7+=, 1 ; fnop }
	{ nop ; f32v2mul $a2:3, $a10:B, $a0:1 }
	{ st64step $a2:3, $mzero, $m7+=, 1 ; fnop }
.endm

// ---- softmax, f16: x atoms in $a0:1, the four f32 lanes in $a4:7,
// -scale in $a8, the max in $a12, the sum (then its reciprocal) in
// $a10:11; pass 3: e / sum in $a0:3, y in $a12:13 ----

.macro SM16_EXP p, s
	{ nop ; f16v2tof32 $a4:5, $a0 }
	{ ld64step $a0:1, $mzero, \p+=, \s ; f16v2tof32 $a6:7, $a1 }
	{ nop ; f32v2sub $a4:5, $a12:B, $a4:5 }
	{ nop ; f32v2sub $a6:7, $a12:B, $a6:7 }
	{ nop ; f32v2mul $a4:5, $a8:B, $a4:5 }
	{ nop ; f32v2mul $a6:7, $a8:B, $a6:7 }
	{ nop ; f32exp $a4, $a4 }
	{ nop ; f32exp $a5, $a5 }
	{ nop ; f32exp $a6, $a6 }
	{ nop ; f32exp $a7, $a7 }
.endm
// The sum, keeping e (f32) at $m9 for pass 3.
.macro SM16_SUM p, s
	SM16_EXP \p, \s
	{ st64step $a4:5, $mzero, $m9+=, 1 ; f32v2add $a10:11, $a10:11, $a4:5 }
	{ st64step $a6:7, $mzero, $m9+=, 1 ; f32v2add $a10:11, $a10:11, $a6:7 }
.endm
// y = e / sum, pipelined a third: the previous atom's y is rounded (from
// $a0:3) and stored (from $a12:13, the cursor moving by \j atoms) while
// this atom's e is loaded into $a4:7 and scaled into $a0:3 (the aux pipe
// reads $a0:3 before the mul replaces them).
.macro SM16_OUT j
	{ ld64step $a4:5, $mzero, $m9+=, 1 ; f32v4tof16 $a12:13, $a0:3 }
	{ ld64step $a6:7, $mzero, $m9+=, 1 ; f32v2mul $a0:1, $a10:B, $a4:5 }
	{ st64step $a12:13, $mzero, $m7+=, \j ; f32v2mul $a2:3, $a10:B, $a6:7 }
.endm

// The max, in f16 (exact), widened. x is read four atoms (a panel row)
// at a time, the cursor moving by ARG_XJUMP atoms (in $m7) after the
// fourth: atoms - 1 = 4 F + r loads, F loop bodies of four, r of one.
.macro SM16_P1
	{ ld64 $a0:1, $m1, $m8, 0 ; fnop }
	{ ld64 $a4:5, $mworker_base, $m11, 0 ; fnop }
	{ ld64 $a6:7, $mworker_base, $m11, 1 ; fnop }
	{ add $m6, $m1, 0 ; and64 $a0:1, $a0:1, $a4:5 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; or64 $a2:3, $a0:1, $a6:7 }
	{ ld32 $m7, $mworker_base, $mzero, ARG_XJUMP / 4 ; fnop }
	{ shr $m14, $m5, 2 ; fnop }
	{ rpt $m14, 3 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4max $a2:3, $a2:3, $a0:1 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4max $a2:3, $a2:3, $a0:1 }
	{ ld64step $a0:1, $mzero, $m6+=, $m7 ; f16v4max $a2:3, $a2:3, $a0:1 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4max $a2:3, $a2:3, $a0:1 }
	{ and $m14, $m5, 3 ; fnop }
	{ rpt $m14, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4max $a2:3, $a2:3, $a0:1 }
	{ nop ; f16v4maxc $a2, $a2:3 }
	{ nop ; f16v2maxc $a2, $a2 }
	{ nop ; f16tof32 $a12, $a2 }
.endm
// Pass 2 keeps each atom's e, in f32, from $m10 (the segment's first
// atom; the lead atom's 16 bytes an atom further), for pass 3. After the
// lead, t = scale x - scale max is one fused f32v2axpy a lane pair ($TAS
// = scale, c = -scale max in $a12:13), which hands back the pair before:
// the loop finishes atom k (t of its low lanes, then of its high ones
// with the next atom's low lanes) while it widens atom k + 1. x is read
// as in pass 1 ($m7: ARG_XJUMP): the atoms - 2 loads of the loops, from
// atom 1 on, are F bodies of four atoms, then r of one.
.macro SM16_P2
	{ ld64 $a0:1, $m1, $m8, 0 ; and64 $a10:11, $a10:11, $azeros }
	{ ld64 $a4:5, $mworker_base, $m11, 0 ; fnop }
	{ ld64 $a6:7, $mworker_base, $m11, 1 ; fnop }
	{ add $m6, $m1, 0 ; and64 $a0:1, $a0:1, $a4:5 }
	{ shl $m9, $m5, 4 ; or64 $a0:1, $a0:1, $a6:7 }
	{ add $m9, $m9, $m10 ; fnop }
	SM16_SUM $m6, 1
	{ add $m9, $m10, 0 ; f32mul $a13, $a8, $a12 }
	{ ld32 $m7, $mworker_base, $mzero, ARG_XJUMP / 4 ; f32mul $a12, $a8, $a12 }
	{ brz $m5, 8f ; f16v2tof32 $a4:5, $a0 }
	{ add $m14, $m5, -1 ; f16v2tof32 $a6:7, $a1 }
	{ shr $m14, $m14, 2 ; fnop }
	{ rpt $m14, 39 ; f32v2axpy $azeros, $a4:5, $a12:13 }
	SM16_P2_BODY 1
	SM16_P2_BODY 1
	SM16_P2_BODY $m7
	SM16_P2_BODY 1
	{ add $m14, $m5, -1 ; fnop }
	{ and $m14, $m14, 3 ; fnop }
	{ rpt $m14, 9 ; fnop }
	SM16_P2_BODY 1
	{ nop ; f32v2axpy $a2:3, $a6:7, $a12:13 }
	{ nop ; f32v2axpy $a4:5, $a6:7, $a12:13 }
	SM16_EXP4
8:	{ nop ; f32add $a10, $a10, $a11 }
.endm
// One atom of pass 2's loop: the next x loaded (the cursor then moving
// by \j atoms), this one's t finished, its e kept and summed.
.macro SM16_P2_BODY j
	{ ld64step $a0:1, $mzero, $m6+=, \j ; f32v2axpy $a2:3, $a6:7, $a12:13 }
	{ nop ; f16v2tof32 $a4:5, $a0 }
	{ nop ; f16v2tof32 $a6:7, $a1 }
	{ nop ; f32v2axpy $a4:5, $a4:5, $a12:13 }
	SM16_EXP4
.endm
// e of t in $a2:5, kept at $m9 and summed.
.macro SM16_EXP4
	{ nop ; f32exp $a2, $a2 }
	{ nop ; f32exp $a3, $a3 }
	{ nop ; f32exp $a4, $a4 }
	{ nop ; f32exp $a5, $a5 }
	{ st64step $a2:3, $mzero, $m9+=, 1 ; f32v2add $a10:11, $a10:11, $a2:3 }
	{ st64step $a4:5, $mzero, $m9+=, 1 ; f32v2add $a10:11, $a10:11, $a4:5 }
.endm
// $TAS = scale, from -scale in $a8.
.macro SM16_TAS
	{ nop ; f32sub $a9, $azero, $a8 }
	{ nop ; uput $TAS, $a9 }
.endm
.macro SM32_TAS
.endm
// Pass 3 reads the e back: no exp again. The first atom is scaled
// before the loops, the last rounded and stored after them; every load
// is of this segment's e. The y go out four atoms (16 halves, a panel
// row of the GEMM C layout) at a time, the cursor then moving by
// ARG_JUMP atoms to the next panel: atoms - 1 = 4 F + r, F loop bodies
// of four atoms, then r of one.
.macro SM16_P3
	{ add $m9, $m10, 0 ; fnop }
	{ add $m7, $m2, 0 ; fnop }
	{ ld64step $a4:5, $mzero, $m9+=, 1 ; fnop }
	{ ld64step $a6:7, $mzero, $m9+=, 1 ; f32v2mul $a0:1, $a10:B, $a4:5 }
	{ shr $m10, $m5, 2 ; f32v2mul $a2:3, $a10:B, $a6:7 }
	{ ld32 $m6, $mworker_base, $mzero, ARG_JUMP / 4 ; fnop }
	{ and $m14, $m5, 3 ; fnop }
	{ rpt $m10, 11 ; fnop }
	SM16_OUT 1
	SM16_OUT 1
	SM16_OUT 1
	SM16_OUT $m6
	{ rpt $m14, 2 ; fnop }
	SM16_OUT 1
	{ nop ; f32v4tof16 $a12:13, $a0:3 }
	{ st64step $a12:13, $mzero, $m7+=, 1 ; fnop }
.endm
// Where pass 2 keeps e: the worker's place (rows mode: V_E, reused row
// after row), or the segment's (split mode: S_E).
.macro SM16_EROW
	{ ld32 $m10, $mvertex_base, $mzero, V_E ; fnop }
.endm
.macro SM16_ESEG
	{ ld32 $m10, $mvertex_base, $mzero, S_E ; fnop }
.endm
.macro SM32_EROW
.endm
.macro SM32_ESEG
.endm

// ---- softmax, f16 with its exps in f16 (rw_softmax_f16h): pass 1 as
// SM16's; then x atoms in $a0:1, (max, max, max, max) in $a4:5 and
// (-scale) x 4 in $a6:7, t and e in $a2:3, a pair sum of e in $a12:13,
// the sum (then its reciprocal) in $a10:11. e is kept in f16, in the
// first half of its atom's 16 bytes of SM16's place ----

// One atom: the next x loaded (the cursor then moving by \j atoms), t =
// -scale (max - x) and e = exp t in f16, e kept at $m9 and summed in f32
// (f16v4sum: the lane pairs' sums, exact).
.macro SM16h_BODY j
	{ ld64step $a0:1, $mzero, $m6+=, \j ; f16v4sub $a2:3, $a4:5, $a0:1 }
	{ nop ; f16v4mul $a2:3, $a6:7, $a2:3 }
	{ nop ; f16v2exp $a2, $a2 }
	{ nop ; f16v2exp $a3, $a3 }
	{ st64step $a2:3, $mzero, $m9+=, 2 ; f16v4sum $a12:13, $a2:3 }
	{ nop ; f32v2add $a10:11, $a10:11, $a12:13 }
.endm
// The lead atom (masked: -inf in its padding, e = 0 there) first, its e
// 16 bytes an atom after the segment's first ($m10), then the others in
// order, x read as in pass 1 ($m7: ARG_XJUMP): atoms - 1 = 4 F + r, F
// bodies of four atoms, then r of one. The max and -scale are exact in
// f16 (the max is an x; f32tof16 writes both halves).
.macro SM16h_P2
	{ ld64 $a0:1, $m1, $m8, 0 ; and64 $a10:11, $a10:11, $azeros }
	{ ld64 $a4:5, $mworker_base, $m11, 0 ; fnop }
	{ ld64 $a6:7, $mworker_base, $m11, 1 ; fnop }
	{ add $m6, $m1, 0 ; and64 $a0:1, $a0:1, $a4:5 }
	{ shl $m9, $m5, 4 ; or64 $a0:1, $a0:1, $a6:7 }
	{ add $m9, $m9, $m10 ; f32tof16 $a4, $a12 }
	{ ld32 $m7, $mworker_base, $mzero, ARG_XJUMP / 4 ; f32tof16 $a5, $a12 }
	{ shr $m14, $m5, 2 ; f32tof16 $a6, $a8 }
	{ nop ; f32tof16 $a7, $a8 }
	SM16h_BODY 1
	{ add $m9, $m10, 0 ; fnop }
	{ rpt $m14, 23 ; fnop }
	SM16h_BODY 1
	SM16h_BODY 1
	SM16h_BODY $m7
	SM16h_BODY 1
	{ and $m14, $m5, 3 ; fnop }
	{ rpt $m14, 5 ; fnop }
	SM16h_BODY 1
	{ nop ; f32add $a10, $a10, $a11 }
.endm
// y = e / sum in f16: e times the reciprocal rounded to f16, the y stored
// four atoms (a panel row) at a time, the cursor then moving by ARG_JUMP
// atoms, as SM16_P3. A body loads the next e while it scales this one.
.macro SM16h_OUT j
	{ ld64step $a0:1, $mzero, $m9+=, 2 ; f16v4mul $a2:3, $a4:5, $a0:1 }
	{ st64step $a2:3, $mzero, $m7+=, \j ; fnop }
.endm
.macro SM16h_P3
	{ add $m9, $m10, 0 ; f32tof16 $a4, $a10 }
	{ add $m7, $m2, 0 ; f32tof16 $a5, $a10 }
	{ ld64step $a0:1, $mzero, $m9+=, 2 ; fnop }
	{ ld32 $m6, $mworker_base, $mzero, ARG_JUMP / 4 ; fnop }
	{ shr $m10, $m5, 2 ; fnop }
	{ and $m14, $m5, 3 ; fnop }
	{ rpt $m10, 7 ; fnop }
	SM16h_OUT 1
	SM16h_OUT 1
	SM16h_OUT 1
	SM16h_OUT $m6
	{ rpt $m14, 1 ; fnop }
	SM16h_OUT 1
	{ nop ; f16v4mul $a2:3, $a4:5, $a0:1 }
	{ st64step $a2:3, $mzero, $m7+=, 1 ; fnop }
.endm
.macro SM16h_P1
	SM16_P1
.endm
.macro SM16h_TAS
.endm
.macro SM16h_EROW
	SM16_EROW
.endm
.macro SM16h_ESEG
	SM16_ESEG
.endm

// Softmax workers: \t is 32, 16 or 16h.
.macro SM_WORKERS t
	.align 8
sm\t\()_rows:
	RW_ROWS_ENTRY
	{ ld32 $a8, $mworker_base, $mzero, ARG_C0 / 4 ; fnop }
	SM\t\()_TAS
1:	SM\t\()_P1
	SM\t\()_EROW
	SM\t\()_P2
	{ nop ; f32oox $a10, $a10 }
	SM\t\()_P3
	RW_NEXT_ROW
	.size sm\t\()_rows, . - sm\t\()_rows

	.align 8
sm\t\()_s1:
	RW_SPLIT_ENTRY
	SM\t\()_P1
	RW_STORE $a12, S_P1
9:	exitz $mzero
	.size sm\t\()_s1, . - sm\t\()_s1

	.align 8
sm\t\()_s2:
	RW_SPLIT_ENTRY
	{ ld32 $a8, $mworker_base, $mzero, ARG_C0 / 4 ; fnop }
	SM\t\()_TAS
	RW_COMBINE S_P1, f32max, $a12
	RW_STORE $a12, S_STAT
	SM\t\()_ESEG
	SM\t\()_P2
	RW_STORE $a10, S_P2
9:	exitz $mzero
	.size sm\t\()_s2, . - sm\t\()_s2

	.align 8
sm\t\()_s3:
	RW_SPLIT_ENTRY
	{ ld32 $a8, $mworker_base, $mzero, ARG_C0 / 4 ; fnop }
	{ ld32 $a12, $mvertex_base, $mzero, S_STAT ; fnop }
	RW_COMBINE S_P2, f32add, $a10
	{ nop ; f32oox $a10, $a10 }
	SM\t\()_ESEG
	SM\t\()_P3
9:	exitz $mzero
	.size sm\t\()_s3, . - sm\t\()_s3
.endm

	SM_WORKERS 32
	SM_WORKERS 16
	SM_WORKERS 16h

// ---- layernorm: the sums in $a10 (f16: pair sums in $a8:9 first),
// -mean in $a12, rsqrt in $a8 (f32) or $a10 (f16) ----

// -mean from the sum.
.macro LN_F1
	{ ld32 $a12, $mworker_base, $mzero, ARG_C0 / 4 ; fnop }
	{ nop ; f32mul $a10, $a10, $a12 }
	{ nop ; f32sub $a12, $azero, $a10 }
.endm
// rsqrt(var + eps) into \dst from the sum of squares.
.macro LN_F2 dst
	{ ld32 $a8, $mworker_base, $mzero, ARG_C0 / 4 ; fnop }
	{ ld32 $a9, $mworker_base, $mzero, ARG_C1 / 4 ; f32mul $a10, $a10, $a8 }
	{ nop ; f32add $a10, $a10, $a9 }
	{ nop ; f32oorx \dst, $a10 }
.endm

// f32: x atoms in $a0:1, the mask in $a4:5, y in $a10:11.
// acc += (x - mean)^2; loads the next x.
.macro LN32_VAR p, s
	{ nop ; f32v2add $a2:3, $a12:B, $a0:1 }
	{ ld64step $a0:1, $mzero, \p+=, \s ; f32v2mul $a2:3, $a2:3, $a2:3 }
	{ nop ; f32v2add $a10:11, $a10:11, $a2:3 }
.endm
// y = (x - mean) * rsqrt * gamma + beta; gamma in $a2:3, beta in $a6:7.
.macro LN32_OUT p, s
	{ ld64step $a2:3, $mzero, $m9+=, 1 ; f32v2add $a0:1, $a12:B, $a0:1 }
	{ ld64step $a6:7, $mzero, $m10+=, 1 ; f32v2mul $a0:1, $a8:B, $a0:1 }
	{ nop ; f32v2mul $a10:11, $a2:3, $a0:1 }
	{ ld64step $a0:1, $mzero, \p+=, \s ; f32v2add $a10:11, $a6:7, $a10:11 }
	{ st64step $a10:11, $mzero, $m7+=, 1 ; fnop }
.endm

.macro LN32_P1
	{ ld64 $a2:3, $m1, $m8, 0 ; fnop }
	{ ld64 $a4:5, $mworker_base, $m11, 0 ; fnop }
	{ add $m6, $m1, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; and64 $a10:11, $a2:3, $a4:5 }
	{ rpt $m5, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f32v2add $a10:11, $a10:11, $a0:1 }
	{ nop ; f32add $a10, $a10, $a11 }
.endm
// The sum of squares about the mean: the lead atom's deviations masked.
.macro LN32_P2
	{ ld64 $a0:1, $m1, $m8, 0 ; fnop }
	{ ld64 $a4:5, $mworker_base, $m11, 0 ; fnop }
	{ add $m6, $m1, 0 ; f32v2add $a2:3, $a12:B, $a0:1 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; and64 $a2:3, $a2:3, $a4:5 }
	{ nop ; f32v2mul $a10:11, $a2:3, $a2:3 }
	{ rpt $m5, 2 ; fnop }
	LN32_VAR $m6, 1
	{ nop ; f32add $a10, $a10, $a11 }
.endm
// gamma and beta addresses at words \go, \bo of \gb.
.macro LN32_P3 gb, go, bo
	{ ld32 $m9, \gb, $mzero, \go ; fnop }
	{ ld32 $m10, \gb, $mzero, \bo ; fnop }
	{ add $m6, $m1, 0 ; fnop }
	{ add $m7, $m2, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }
	{ rpt $m5, 4 ; fnop }
	LN32_OUT $m6, 1
	LN32_OUT $m1, 0
.endm

// f16: x atoms in $a0:1, the four f32 lanes in $a4:7 (pass 2); pass 3:
// x's lanes widened a pair at a time in $a6:7, z = rsqrt x - rsqrt mean
// by f32v2axpy ($TAS = rsqrt, the constant in $a12:13) in $a8:11, gamma
// then beta atoms in $a2:3 widened through $a4:5, y in $a4:5.
.macro LN16_VAR p, s
	{ nop ; f16v2tof32 $a4:5, $a0 }
	{ ld64step $a0:1, $mzero, \p+=, \s ; f16v2tof32 $a6:7, $a1 }
	{ nop ; f32v2add $a4:5, $a12:B, $a4:5 }
	{ nop ; f32v2add $a6:7, $a12:B, $a6:7 }
	{ nop ; f32v4sqacc $a4:7 }
.endm
// Atom k of pass 3: $a6:7 holds its high lanes widened, the
// accumulators z of its low lanes (f32v2axpy hands back the pair before);
// loads atom k + 1 (\p, \s) and widens it, stores y of atom k - 1
// (advancing \inc atoms) and leaves y of atom k in $a4:5.
.macro LN16_OUT p, s, inc
	{ ld64step $a0:1, $mzero, \p+=, \s ; f32v2axpy $a8:9, $a6:7, $a12:13 }
	{ ld64step $a2:3, $mzero, $m9+=, 1 ; f16v2tof32 $a6:7, $a0 }
	{ st64step $a4:5, $mzero, $m7+=, \inc ; f32v2axpy $a10:11, $a6:7, $a12:13 }
	{ nop ; f16v2tof32 $a6:7, $a1 }
	{ nop ; f16v2tof32 $a4:5, $a2 }
	{ nop ; f32v2mul $a8:9, $a4:5, $a8:9 }
	{ nop ; f16v2tof32 $a4:5, $a3 }
	{ ld64step $a2:3, $mzero, $m10+=, 1 ; f32v2mul $a10:11, $a4:5, $a10:11 }
	{ nop ; f16v2tof32 $a4:5, $a2 }
	{ nop ; f32v2add $a8:9, $a4:5, $a8:9 }
	{ nop ; f16v2tof32 $a4:5, $a3 }
	{ nop ; f32v2add $a10:11, $a4:5, $a10:11 }
	{ nop ; f32v4tof16 $a4:5, $a8:11 }
.endm

// The sum, in the four accumulators (f16v4acc, to f32): the masked lead
// atom, then the others.
.macro LN16_P1
	{ ld64 $a0:1, $m1, $m8, 0 ; setzi $a4, FP_CLR_ZAACC }
	{ ld64 $a2:3, $mworker_base, $m11, 0 ; uput $FP_CLR, $a4 }
	{ add $m6, $m1, 0 ; and64 $a0:1, $a0:1, $a2:3 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4acc $a0:1 }
	{ rpt $m5, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4acc $a0:1 }
	LN16_GINA
.endm
// $a10 = the sum of the four accumulators.
.macro LN16_GINA
	{ nop ; f32v2gina $a4:5, $azeros, 0 }
	{ nop ; f32v2gina $a6:7, $azeros, 0 }
	{ nop ; f32v2add $a4:5, $a4:5, $a6:7 }
	{ nop ; f32add $a10, $a4, $a5 }
.endm
// The sum of squares: the lead atom's deviations masked in f32 lanes;
// the squares summed in four accumulators (f32v4sqacc, fused), zeroed
// first ($FP_CLR.ZAACC) and read out at the end (f32v2gina).
.macro LN16_P2
	{ ld64 $a0:1, $m1, $m8, 0 ; setzi $a4, FP_CLR_ZAACC }
	{ ld64 $a2:3, $mworker_base, $m11, 2 ; uput $FP_CLR, $a4 }
	{ ld64 $a10:11, $mworker_base, $m11, 3 ; f16v2tof32 $a4:5, $a0 }
	{ add $m6, $m1, 0 ; f16v2tof32 $a6:7, $a1 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f32v2add $a4:5, $a12:B, $a4:5 }
	{ nop ; f32v2add $a6:7, $a12:B, $a6:7 }
	{ nop ; and64 $a4:5, $a4:5, $a2:3 }
	{ nop ; and64 $a6:7, $a6:7, $a10:11 }
	{ rpt $m5, 4 ; f32v4sqacc $a4:7 }
	LN16_VAR $m6, 1
	LN16_GINA
.endm
// Pass 3, pipelined: the first atom's store (of nothing yet) does not
// advance, the last atom loads the row's first again (nothing past the
// row is read), one y is stored after the loop; a one-atom row takes the
// last atom's body only.
.macro LN16_P3 gb, go, bo
	{ ld32 $m9, \gb, $mzero, \go ; uput $TAS, $a10 }
	{ ld32 $m10, \gb, $mzero, \bo ; f32mul $a13, $a12, $a10 }
	{ add $m6, $m1, 0 ; f32mul $a12, $a12, $a10 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }
	{ add $m7, $m2, 0 ; f16v2tof32 $a6:7, $a0 }
	{ nop ; f32v2axpy $azeros, $a6:7, $a12:13 }
	{ brz $m5, 6f ; f16v2tof32 $a6:7, $a1 }
	LN16_OUT $m6, 1, 0
	{ add $m14, $m5, -1 ; fnop }
	{ rpt $m14, 12 ; fnop }
	LN16_OUT $m6, 1, 1
	LN16_OUT $m1, 0, 1
	{ bri 7f ; fnop }
6:	LN16_OUT $m1, 0, 0
7:	{ st64step $a4:5, $mzero, $m7+=, 1 ; fnop }
.endm

// Layernorm workers: \t is 32 or 16, \rs the register of rsqrt.
.macro LN_WORKERS t, rs
	.align 8
ln\t\()_rows:
	RW_ROWS_ENTRY
1:	LN\t\()_P1
	LN_F1
	LN\t\()_P2
	LN_F2 \rs
	LN\t\()_P3 $mworker_base, ARG_GAMMA / 4, ARG_BETA / 4
	RW_NEXT_ROW
	.size ln\t\()_rows, . - ln\t\()_rows

	.align 8
ln\t\()_s1:
	RW_SPLIT_ENTRY
	LN\t\()_P1
	RW_STORE $a10, S_P1
9:	exitz $mzero
	.size ln\t\()_s1, . - ln\t\()_s1

	.align 8
ln\t\()_s2:
	RW_SPLIT_ENTRY
	RW_COMBINE S_P1, f32add, $a10
	LN_F1
	RW_STORE $a12, S_STAT
	LN\t\()_P2
	RW_STORE $a10, S_P2
9:	exitz $mzero
	.size ln\t\()_s2, . - ln\t\()_s2

	.align 8
ln\t\()_s3:
	RW_SPLIT_ENTRY
	{ ld32 $a12, $mvertex_base, $mzero, S_STAT ; fnop }
	RW_COMBINE S_P2, f32add, $a10
	LN_F2 \rs
	LN\t\()_P3 $mvertex_base, S_G, S_B
9:	exitz $mzero
	.size ln\t\()_s3, . - ln\t\()_s3
.endm

	LN_WORKERS 32, $a8
	LN_WORKERS 16, $a10

// rowwise.S - kernels that reduce along each row of a row-major block:
// LayerNorm and softmax, f32 and f16, statistics in f32, for the GC200
// and the C600. docs/kernel-rowwise.md describes the contract;
// src/kernels/rowwise.c fills the argument block and counts cycles.
//
// Supervisor entry, `call $m10, rw_softmax_f16` with $m0 -> argument
// block. Clobbers $m1, $m2 and $WORKER0..5_BASE; preserves $m0 and
// $m3-$m15 of the supervisor.
//
//   entry               per row
//   rw_layernorm_f32    y = (x - mean) * rsqrt(var + eps) * gamma + beta
//   rw_layernorm_f16    the same, computed in f32, rounded once to f16
//   rw_softmax_f32      y = exp(scale (x - max)) / sum
//   rw_softmax_f16      the same, computed in f32, rounded once to f16
//
// The workers take whole rows (the host gives worker w a contiguous range
// of rows). A row is `atoms` 64-bit atoms (2 floats or 4 halves): the
// last one, the tail, may hold padding lanes past the row's columns.
// Each pass over a row first takes the tail with the padding masked out
// (ARG_MASK keeps the row's lanes; for softmax ARG_FILL puts -inf in the
// others, which the max ignores and exp turns into 0), then the atoms - 1
// full ones in a rpt loop. The last pass writes every atom, the padding
// lanes of the tail included (their values are unspecified).
//
// A rpt body reads the next atom while it works on the current one, so
// a loop over n atoms is a load, n - 1 bodies and an epilogue: the body
// again with its load re-reading the row's first atom into a dead
// register (the same issues, nothing read past the row). Every worker
// instruction but exitz is a bundle: branch targets and rpt bodies stay
// 8-byte aligned without padding.

// Argument block (byte offsets), written by rw_args_fill().
	.equ ARG_N1, 0         // atoms per row - 1 (the rpt count)
	.equ ARG_TAIL, 4       // byte offset of the tail atom in a row
	.equ ARG_XSTRIDE, 8    // x row stride, bytes
	.equ ARG_DSTRIDE, 12   // dst row stride, bytes
	.equ ARG_C0, 16        // f32: softmax -scale; layernorm 1 / cols
	.equ ARG_C1, 20        // f32: layernorm eps
	.equ ARG_GAMMA, 24     // layernorm: gamma and beta addresses
	.equ ARG_BETA, 28
	.equ ARG_MASK, 32      // tail atom: all ones in the row's lanes
	.equ ARG_FILL, 40      // softmax: -inf in the tail's padding lanes
	.equ ARG_MASKW, 48     // layernorm f16: ARG_MASK in f32 lanes (16 B)
	.equ ARG_VERTEX, 64    // six worker vertices of VERTEX_BYTES

// Worker vertex ($mvertex_base), words:
	.equ V_ROWS, 0         // rows of this worker (0: idle)
	.equ V_X, 1            // its first x row
	.equ V_D, 2            // its first dst row
	.equ VERTEX_BYTES, 16

	.section .text.rowwise, "ax"

// Supervisor: $m0 -> argument block. Every worker's $WORKER_BASE is the
// block, its $VERTEX_BASE its vertex.
.macro RW_ENTRY name, worker
	.globl \name
	.type \name, @function
\name:
	put $WORKER0_BASE, $m0
	put $WORKER1_BASE, $m0
	put $WORKER2_BASE, $m0
	put $WORKER3_BASE, $m0
	put $WORKER4_BASE, $m0
	put $WORKER5_BASE, $m0
	setzi $m1, \worker
	add $m2, $m0, ARG_VERTEX
	runall $m1, $m2, VERTEX_BYTES / 4
	sync TEXCH_SYNCZONE_LOCAL
	br $lr
	.size \name, . - \name
.endm

	RW_ENTRY rw_layernorm_f32, rw_layernorm_f32_worker
	RW_ENTRY rw_layernorm_f16, rw_layernorm_f16_worker
	RW_ENTRY rw_softmax_f32, rw_softmax_f32_worker
	RW_ENTRY rw_softmax_f16, rw_softmax_f16_worker

// Worker registers: $m0 rows left - 1, $m1 / $m2 the x / dst row, $m3 /
// $m4 their strides, $m5 atoms - 1, $m6 / $m7 the x / dst cursors, $m8
// the tail's offset, $m9 / $m10 the gamma / beta cursors.
.macro RW_WORKER_ENTRY
	{ ld32 $m0, $mvertex_base, $mzero, V_ROWS ; fnop }
	{ brz $m0, 9f ; fnop }
	{ ld32 $m1, $mvertex_base, $mzero, V_X ; fnop }
	{ ld32 $m2, $mvertex_base, $mzero, V_D ; fnop }
	{ ld32 $m3, $mworker_base, $mzero, ARG_XSTRIDE / 4 ; fnop }
	{ ld32 $m4, $mworker_base, $mzero, ARG_DSTRIDE / 4 ; fnop }
	{ ld32 $m5, $mworker_base, $mzero, ARG_N1 / 4 ; fnop }
	{ ld32 $m8, $mworker_base, $mzero, ARG_TAIL / 4 ; fnop }
	{ add $m0, $m0, -1 ; fnop }
.endm

.macro RW_NEXT_ROW
	{ add $m1, $m1, $m3 ; fnop }
	{ add $m2, $m2, $m4 ; fnop }
	{ brnzdec $m0, 1b ; fnop }
9:	exitz $mzero
.endm

// ---- softmax, f32: x atoms in $a2:3, e in $a0:1, -scale in $a8, the
// max in $a12, the sum (then its reciprocal) in $a10:11 ----

// e = exp(-scale (max - x)) = exp(scale (x - max)); loads the next x.
.macro SM32_EXP p, s
	{ nop ; f32v2sub $a0:1, $a12:13:B, $a2:3 }
	{ ld64step $a2:3, $mzero, \p+=, \s ; f32v2mul $a0:1, $a8:9:B, $a0:1 }
	{ nop ; f32exp $a0, $a0 }
	{ nop ; f32exp $a1, $a1 }
.endm
.macro SM32_SUM p, s
	SM32_EXP \p, \s
	{ nop ; f32v2add $a10:11, $a10:11, $a0:1 }
.endm
.macro SM32_OUT p, s
	SM32_EXP \p, \s
	{ nop ; f32v2mul $a0:1, $a10:11:B, $a0:1 }
	{ st64step $a0:1, $mzero, $m7+=, 1 ; fnop }
.endm

	.align 8
rw_softmax_f32_worker:
	RW_WORKER_ENTRY
	{ ld32 $a8, $mworker_base, $mzero, ARG_C0 / 4 ; fnop }
	// max: the masked tail, then the full atoms
1:	{ ld64 $a0:1, $m1, $m8, 0 ; fnop }
	{ ld64 $a4:5, $mworker_base, $mzero, ARG_MASK / 8 ; fnop }
	{ ld64 $a6:7, $mworker_base, $mzero, ARG_FILL / 8 ; fnop }
	{ add $m6, $m1, 0 ; and64 $a0:1, $a0:1, $a4:5 }
	{ ld64step $a2:3, $mzero, $m6+=, 1 ; or64 $a10:11, $a0:1, $a6:7 }
	{ rpt $m5, 0 ; fnop }
	{ ld64step $a2:3, $mzero, $m6+=, 1 ; f32v2max $a10:11, $a10:11, $a2:3 }
	{ nop ; f32max $a12, $a10, $a11 }
	// sum of e: the masked tail (padding -inf: e = 0), then the rest
	{ ld64 $a2:3, $m1, $m8, 0 ; and64 $a10:11, $a10:11, $azeros }
	{ add $m6, $m1, 0 ; and64 $a2:3, $a2:3, $a4:5 }
	{ nop ; or64 $a2:3, $a2:3, $a6:7 }
	SM32_SUM $m6, 1
	{ rpt $m5, 4 ; fnop }
	SM32_SUM $m6, 1
	{ add $m6, $m1, 0 ; f32add $a10, $a10, $a11 }
	{ add $m7, $m2, 0 ; f32oox $a10, $a10 }
	// y = e / sum over every atom
	{ ld64step $a2:3, $mzero, $m6+=, 1 ; fnop }
	{ rpt $m5, 5 ; fnop }
	SM32_OUT $m6, 1
	SM32_OUT $m1, 0
	RW_NEXT_ROW
	.size rw_softmax_f32_worker, . - rw_softmax_f32_worker

// ---- softmax, f16: x atoms in $a0:1, the four f32 lanes in $a4:7,
// -scale in $a8, the max in $a12, the sum (then its reciprocal) in
// $a10:11, y in $a2:3 ----

.macro SM16_EXP p, s
	{ nop ; f16v2tof32 $a4:5, $a0 }
	{ ld64step $a0:1, $mzero, \p+=, \s ; f16v2tof32 $a6:7, $a1 }
	{ nop ; f32v2sub $a4:5, $a12:13:B, $a4:5 }
	{ nop ; f32v2sub $a6:7, $a12:13:B, $a6:7 }
	{ nop ; f32v2mul $a4:5, $a8:9:B, $a4:5 }
	{ nop ; f32v2mul $a6:7, $a8:9:B, $a6:7 }
	{ nop ; f32exp $a4, $a4 }
	{ nop ; f32exp $a5, $a5 }
	{ nop ; f32exp $a6, $a6 }
	{ nop ; f32exp $a7, $a7 }
.endm
.macro SM16_SUM p, s
	SM16_EXP \p, \s
	{ nop ; f32v2add $a10:11, $a10:11, $a4:5 }
	{ nop ; f32v2add $a10:11, $a10:11, $a6:7 }
.endm
.macro SM16_OUT p, s
	SM16_EXP \p, \s
	{ nop ; f32v2mul $a4:5, $a10:11:B, $a4:5 }
	{ nop ; f32v2mul $a6:7, $a10:11:B, $a6:7 }
	{ nop ; f32v4tof16 $a2:3, $a4:7 }
	{ st64step $a2:3, $mzero, $m7+=, 1 ; fnop }
.endm

	.align 8
rw_softmax_f16_worker:
	RW_WORKER_ENTRY
	{ ld32 $a8, $mworker_base, $mzero, ARG_C0 / 4 ; fnop }
	// max, in f16 (exact): the masked tail, then the full atoms
1:	{ ld64 $a0:1, $m1, $m8, 0 ; fnop }
	{ ld64 $a4:5, $mworker_base, $mzero, ARG_MASK / 8 ; fnop }
	{ ld64 $a6:7, $mworker_base, $mzero, ARG_FILL / 8 ; fnop }
	{ add $m6, $m1, 0 ; and64 $a0:1, $a0:1, $a4:5 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; or64 $a2:3, $a0:1, $a6:7 }
	{ rpt $m5, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4max $a2:3, $a2:3, $a0:1 }
	{ nop ; f16v4maxc $a2, $a2:3 }
	{ nop ; f16v2maxc $a2, $a2 }
	{ nop ; f16tof32 $a12, $a2 }
	// sum of e in f32
	{ ld64 $a0:1, $m1, $m8, 0 ; and64 $a10:11, $a10:11, $azeros }
	{ add $m6, $m1, 0 ; and64 $a0:1, $a0:1, $a4:5 }
	{ nop ; or64 $a0:1, $a0:1, $a6:7 }
	SM16_SUM $m6, 1
	{ rpt $m5, 11 ; fnop }
	SM16_SUM $m6, 1
	{ add $m6, $m1, 0 ; f32add $a10, $a10, $a11 }
	{ add $m7, $m2, 0 ; f32oox $a10, $a10 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }
	{ rpt $m5, 13 ; fnop }
	SM16_OUT $m6, 1
	SM16_OUT $m1, 0
	RW_NEXT_ROW
	.size rw_softmax_f16_worker, . - rw_softmax_f16_worker

// ---- layernorm, f32: x atoms in $a0:1, the mask in $a4:5, the sum of
// x, then of squares, then y in $a10:11, -mean in $a12, rsqrt in $a8 ----

// acc += (x - mean)^2; loads the next x.
.macro LN32_VAR p, s
	{ nop ; f32v2add $a2:3, $a12:13:B, $a0:1 }
	{ ld64step $a0:1, $mzero, \p+=, \s ; f32v2mul $a2:3, $a2:3, $a2:3 }
	{ nop ; f32v2add $a10:11, $a10:11, $a2:3 }
.endm
// y = (x - mean) * rsqrt * gamma + beta; gamma in $a2:3, beta in $a6:7.
.macro LN32_OUT p, s
	{ ld64step $a2:3, $mzero, $m9+=, 1 ; f32v2add $a0:1, $a12:13:B, $a0:1 }
	{ ld64step $a6:7, $mzero, $m10+=, 1 ; f32v2mul $a0:1, $a8:9:B, $a0:1 }
	{ nop ; f32v2mul $a10:11, $a2:3, $a0:1 }
	{ ld64step $a0:1, $mzero, \p+=, \s ; f32v2add $a10:11, $a6:7, $a10:11 }
	{ st64step $a10:11, $mzero, $m7+=, 1 ; fnop }
.endm

	.align 8
rw_layernorm_f32_worker:
	RW_WORKER_ENTRY
	// mean: the masked tail, then the full atoms
1:	{ ld64 $a2:3, $m1, $m8, 0 ; fnop }
	{ ld64 $a4:5, $mworker_base, $mzero, ARG_MASK / 8 ; fnop }
	{ add $m6, $m1, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; and64 $a10:11, $a2:3, $a4:5 }
	{ rpt $m5, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f32v2add $a10:11, $a10:11, $a0:1 }
	{ ld32 $a12, $mworker_base, $mzero, ARG_C0 / 4 ; f32add $a10, $a10, $a11 }
	{ nop ; f32mul $a10, $a10, $a12 }
	{ nop ; f32sub $a12, $azero, $a10 }
	// variance about the mean: the masked tail, then the full atoms
	{ ld64 $a0:1, $m1, $m8, 0 ; fnop }
	{ add $m6, $m1, 0 ; fnop }
	{ nop ; f32v2add $a2:3, $a12:13:B, $a0:1 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; and64 $a2:3, $a2:3, $a4:5 }
	{ nop ; f32v2mul $a10:11, $a2:3, $a2:3 }
	{ rpt $m5, 2 ; fnop }
	LN32_VAR $m6, 1
	{ ld32 $a8, $mworker_base, $mzero, ARG_C0 / 4 ; f32add $a10, $a10, $a11 }
	{ ld32 $a9, $mworker_base, $mzero, ARG_C1 / 4 ; f32mul $a10, $a10, $a8 }
	{ ld32 $m9, $mworker_base, $mzero, ARG_GAMMA / 4 ; f32add $a10, $a10, $a9 }
	{ ld32 $m10, $mworker_base, $mzero, ARG_BETA / 4 ; f32oorx $a8, $a10 }
	{ add $m6, $m1, 0 ; fnop }
	{ add $m7, $m2, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }
	{ rpt $m5, 4 ; fnop }
	LN32_OUT $m6, 1
	LN32_OUT $m1, 0
	RW_NEXT_ROW
	.size rw_layernorm_f32_worker, . - rw_layernorm_f32_worker

// ---- layernorm, f16: x atoms in $a0:1, the four f32 lanes in $a4:7,
// sums in $a8:9, -mean in $a12, rsqrt in $a10, gamma then beta atoms in
// $a2:3 widened through $a8:9, y in $a8:9 ----

.macro LN16_VAR p, s
	{ nop ; f16v2tof32 $a4:5, $a0 }
	{ ld64step $a0:1, $mzero, \p+=, \s ; f16v2tof32 $a6:7, $a1 }
	{ nop ; f32v2add $a4:5, $a12:13:B, $a4:5 }
	{ nop ; f32v2add $a6:7, $a12:13:B, $a6:7 }
	{ nop ; f32v2mul $a4:5, $a4:5, $a4:5 }
	{ nop ; f32v2mul $a6:7, $a6:7, $a6:7 }
	{ nop ; f32v2add $a8:9, $a8:9, $a4:5 }
	{ nop ; f32v2add $a8:9, $a8:9, $a6:7 }
.endm
.macro LN16_OUT p, s
	{ ld64step $a2:3, $mzero, $m9+=, 1 ; f16v2tof32 $a4:5, $a0 }
	{ nop ; f16v2tof32 $a6:7, $a1 }
	{ ld64step $a0:1, $mzero, \p+=, \s ; f32v2add $a4:5, $a12:13:B, $a4:5 }
	{ nop ; f32v2add $a6:7, $a12:13:B, $a6:7 }
	{ nop ; f32v2mul $a4:5, $a10:11:B, $a4:5 }
	{ nop ; f32v2mul $a6:7, $a10:11:B, $a6:7 }
	{ nop ; f16v2tof32 $a8:9, $a2 }
	{ nop ; f32v2mul $a4:5, $a8:9, $a4:5 }
	{ nop ; f16v2tof32 $a8:9, $a3 }
	{ ld64step $a2:3, $mzero, $m10+=, 1 ; f32v2mul $a6:7, $a8:9, $a6:7 }
	{ nop ; f16v2tof32 $a8:9, $a2 }
	{ nop ; f32v2add $a4:5, $a8:9, $a4:5 }
	{ nop ; f16v2tof32 $a8:9, $a3 }
	{ nop ; f32v2add $a6:7, $a8:9, $a6:7 }
	{ nop ; f32v4tof16 $a8:9, $a4:7 }
	{ st64step $a8:9, $mzero, $m7+=, 1 ; fnop }
.endm

	.align 8
rw_layernorm_f16_worker:
	RW_WORKER_ENTRY
	// mean: pair sums of the masked tail, then of the full atoms
1:	{ ld64 $a0:1, $m1, $m8, 0 ; fnop }
	{ ld64 $a2:3, $mworker_base, $mzero, ARG_MASK / 8 ; fnop }
	{ add $m6, $m1, 0 ; and64 $a0:1, $a0:1, $a2:3 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4sum $a8:9, $a0:1 }
	{ rpt $m5, 1 ; fnop }
	{ nop ; f16v4sum $a4:5, $a0:1 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f32v2add $a8:9, $a8:9, $a4:5 }
	{ ld32 $a12, $mworker_base, $mzero, ARG_C0 / 4 ; f32add $a8, $a8, $a9 }
	{ nop ; f32mul $a8, $a8, $a12 }
	{ nop ; f32sub $a12, $azero, $a8 }
	// variance: the tail's deviations masked in f32 lanes, then the rest
	{ ld64 $a0:1, $m1, $m8, 0 ; fnop }
	{ ld64 $a2:3, $mworker_base, $mzero, ARG_MASKW / 8 ; fnop }
	{ ld64 $a10:11, $mworker_base, $mzero, ARG_MASKW / 8 + 1 ; f16v2tof32 $a4:5, $a0 }
	{ add $m6, $m1, 0 ; f16v2tof32 $a6:7, $a1 }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; f32v2add $a4:5, $a12:13:B, $a4:5 }
	{ nop ; f32v2add $a6:7, $a12:13:B, $a6:7 }
	{ nop ; and64 $a4:5, $a4:5, $a2:3 }
	{ nop ; and64 $a6:7, $a6:7, $a10:11 }
	{ nop ; f32v2mul $a4:5, $a4:5, $a4:5 }
	{ nop ; f32v2mul $a6:7, $a6:7, $a6:7 }
	{ nop ; f32v2add $a8:9, $a4:5, $a6:7 }
	{ rpt $m5, 7 ; fnop }
	LN16_VAR $m6, 1
	{ ld32 $a10, $mworker_base, $mzero, ARG_C0 / 4 ; f32add $a8, $a8, $a9 }
	{ ld32 $a11, $mworker_base, $mzero, ARG_C1 / 4 ; f32mul $a8, $a8, $a10 }
	{ ld32 $m9, $mworker_base, $mzero, ARG_GAMMA / 4 ; f32add $a8, $a8, $a11 }
	{ ld32 $m10, $mworker_base, $mzero, ARG_BETA / 4 ; f32oorx $a10, $a8 }
	{ add $m6, $m1, 0 ; fnop }
	{ add $m7, $m2, 0 ; fnop }
	{ ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }
	{ rpt $m5, 15 ; fnop }
	LN16_OUT $m6, 1
	LN16_OUT $m1, 0
	RW_NEXT_ROW
	.size rw_layernorm_f16_worker, . - rw_layernorm_f16_worker

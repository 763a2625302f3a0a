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

	.section .text.rowwise, "ax"

	.include "rowwise.inc"

	RW_ENTRY rw_layernorm_f32, ln32_rows, ln32_s1, ln32_s2, ln32_s3
	RW_ENTRY rw_layernorm_f16, ln16_rows, ln16_s1, ln16_s2, ln16_s3
	RW_ENTRY rw_softmax_f32, sm32_rows, sm32_s1, sm32_s2, sm32_s3
	RW_ENTRY rw_softmax_f16, sm16_rows, sm16_s1, sm16_s2, sm16_s3
	RW_ENTRY rw_softmax_f16h, sm16h_rows, sm16h_s1, sm16h_s2, sm16h_s3

	SM_WORKERS 32
	SM_WORKERS 16
	SM_WORKERS 16h

// ---- layernorm: the sums in $a10 (f16: pair sums in $a8:9 first),
// -mean in $a12, rsqrt in $a8 (f32) or $a10 (f16) ----

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

// f16 pass 3 (passes 1 and 2: rowwise.inc): x's lanes widened a pair
// at a time in $a6:7, z = rsqrt x - rsqrt mean by f32v2axpy ($TAS =
// rsqrt, the constant in $a12:13) in $a8:11, gamma then beta atoms in
// $a2:3 widened through $a4:5, y in $a4:5.
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

	LN_WORKERS 32, $a8
	LN_WORKERS 16, $a10

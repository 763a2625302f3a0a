// vadd.S - dst += src[0] + src[1] + ... + src[nsrc-1], elementwise over
// `atoms` 8-byte atoms (f16: 4 halves per atom, f32: 2 floats) in each of
// nseg segments, for the K-split GEMM's reduction: the partial C slices
// that other tiles send are added into this tile's own slice (a segment
// per C panel when the slice is some rows of several panels).
//
//   entry       instruction
//   vadd_f16    f16v4add
//   vadd_f32    f32v2add
//
// Supervisor entry, `call $m10, vadd_f16` with $m0 -> argument block:
//   0   u32 dst        8-aligned; segment g at dst + g * dst_seg
//   4   u32 src        8-aligned; source k of segment g at
//                      src + k * stride + g * src_seg
//   8   u32 stride     bytes between sources
//   12  u32 nsrc       >= 1
//   16  u32 nseg       >= 1
//   20  u32 dst_seg    bytes between dst segments
//   24  u32 src_seg    bytes between a source's segments
//   28  u32, u32       this segment's dst and src (the supervisor's)
//   40  6 x {u32 first atom, u32 atoms} one range per worker
// Clobbers $m0-$m7, $WORKER0..5_BASE; preserves $m8-$m15 (of the
// supervisor). One runall a segment. Each worker adds its atoms, three
// sources a pass while it can, then one a pass; the sum is dst + src[0] +
// src[1] + ... in that order. vadd_cycles in src/kernels/vadd.c is the
// exact count.

	.equ ARG_DST, 0
	.equ ARG_SRC, 1
	.equ ARG_STRIDE, 2
	.equ ARG_NSRC, 3
	.equ ARG_NSEG, 4
	.equ ARG_DSEG, 5
	.equ ARG_SSEG, 6
	.equ ARG_CDST, 7
	.equ ARG_CSRC, 8
	.equ ARG_RANGES, 40

	.section .text.vadd, "ax"

.macro VADD_SUPERVISOR worker
	// each worker's $WORKER_BASE points at the argument block
	put $WORKER0_BASE, $m0
	put $WORKER1_BASE, $m0
	put $WORKER2_BASE, $m0
	put $WORKER3_BASE, $m0
	put $WORKER4_BASE, $m0
	put $WORKER5_BASE, $m0
	ld32 $m3, $m0, $mzero, ARG_NSEG
	ld32 $m4, $m0, $mzero, ARG_DST
	ld32 $m5, $m0, $mzero, ARG_SRC
	ld32 $m6, $m0, $mzero, ARG_DSEG
	ld32 $m7, $m0, $mzero, ARG_SSEG
	setzi $m1, \worker
	add $m2, $m0, ARG_RANGES
	add $m3, $m3, -1
1:	st32 $m4, $m0, $mzero, ARG_CDST
	st32 $m5, $m0, $mzero, ARG_CSRC
	runall $m1, $m2, 2
	add $m4, $m4, $m6
	add $m5, $m5, $m7
	sync TEXCH_SYNCZONE_LOCAL
	brnzdec $m3, 1b
	br $lr
.endm

// $mvertex_base -> {first atom, atoms}; $mworker_base -> argument block.
// Passes over the worker's atoms: three sources a pass while three are
// left (7 issues an atom: the dst and three source loads, three adds in
// order, the store, the loop branch, loads and adds paired in bundles),
// then one source a pass (5 issues an atom). Byte offsets below keep the
// three-source loop 8-aligned without padding.
.macro VADD_WORKER name, add
	.align 8
\name:
	ld32 $m0, $mvertex_base, $mzero, 0          // first atom
	ld32 $m1, $mvertex_base, $mzero, 1          // atoms
	brz $m1, 9f
	shl $m0, $m0, 3                             // byte offset
	ld32 $m2, $mworker_base, $mzero, ARG_NSRC   // sources left
	ld32 $m3, $mworker_base, $mzero, ARG_CSRC
	add $m3, $m3, $m0                           // this worker's source
	ld32 $m6, $mworker_base, $mzero, ARG_STRIDE
	add $m9, $m6, $m6                           // two strides
	ld32 $m7, $mworker_base, $mzero, ARG_CDST
	add $m7, $m7, $m0                           // this worker's dst
1:	cmpult $m0, $m2, 3
	brnz $m0, 3f
	mov $m4, $m7                                // dst cursor
	mov $m5, $m3                                // source 0 cursor
	add $m8, $m1, -1                            // atoms - 1
2:	ld64 $a0:1, $m4, $mzero, 0                  // byte 64: aligned
	ld64 $a2:3, $m5, $mzero, 0
	{ ld64 $a4:5, $m5, $m6, 0 ; \add $a0:1, $a0:1, $a2:3 }
	{ ld64 $a2:3, $m5, $m9, 0 ; \add $a0:1, $a0:1, $a4:5 }
	{ add $m5, $m5, 8 ; \add $a0:1, $a0:1, $a2:3 }
	st64step $a0:1, $mzero, $m4+=, 1
	brnzdec $m8, 2b
	add $m3, $m3, $m9
	add $m3, $m3, $m6                           // past the three sources
	add $m2, $m2, -3
	bri 1b
3:	brz $m2, 9f
	add $m2, $m2, -1                            // sources left - 1
4:	mov $m4, $m7
	mov $m5, $m3
	add $m8, $m1, -1
5:	ld64 $a0:1, $m4, $mzero, 0
	ld64step $a2:3, $mzero, $m5+=, 1
	\add $a0:1, $a0:1, $a2:3
	st64step $a0:1, $mzero, $m4+=, 1
	brnzdec $m8, 5b
	add $m3, $m3, $m6                           // next source
	brnzdec $m2, 4b
9:	exitz $mzero
.endm

	.globl vadd_f16
	.type vadd_f16, @function
vadd_f16:
	VADD_SUPERVISOR vadd_f16_worker
	.size vadd_f16, . - vadd_f16

	.globl vadd_f32
	.type vadd_f32, @function
vadd_f32:
	VADD_SUPERVISOR vadd_f32_worker
	.size vadd_f32, . - vadd_f32

	VADD_WORKER vadd_f16_worker, f16v4add
	VADD_WORKER vadd_f32_worker, f32v2add

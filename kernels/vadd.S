// vadd.S - dst += src[0] + src[1] + ... + src[nsrc-1], elementwise over
// `atoms` 8-byte atoms (f16: 4 halves per atom, f32: 2 floats) in each of
// nseg segments, for the K-split GEMM's reduction: the partial C slices
// that other tiles send are added into this tile's own slice (a segment
// per C panel when the slice is some rows of several panels).
//
//   entry           instruction
//   vadd_f16        f16v4add
//   vadd_f32        f32v2add
//   vadd_bias_f16   f16v4add, and a bias row added last:
//                   dst = (dst + src[0] + ... + src[nsrc-1]) + b
//   vadd_bias_res_f16  the same, and then a residual operand h:
//                   dst = ((dst + src[0] + ... + src[nsrc-1]) + b) + h
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
//   28  u32 atoms      atoms in a segment
//   32  u32 bias_seg   vadd_bias: bytes between the segments' bias rows
//   36  u32 res        vadd_bias_res: h's address less dst's (mod 2^32);
//                      h is laid out as dst (h of dst's atom at its
//                      address + res)
//   40  6 x {u32 dst, u32 src, u32 atoms, u32 left, u32 next dst,
//           u32 next src} one range per worker (vadd_bias: and u32 bias,
//           the bias row of its first segment)
// The workers share the nseg x atoms atoms of all the segments as one
// range: worker w's starts at dst and source 0's src, holds `atoms` there
// and `left` more from the next segment on (next dst and src: its start),
// a segment at a time. Clobbers $m1, $m2, $WORKER0..5_BASE; preserves
// $m0 and $m3-$m15 (of the supervisor). One runall. Each worker adds its
// atoms, three sources a pass while it can, then one a pass; the sum is
// dst + src[0] + src[1] + ... in that order. vadd_cycles in
// src/kernels/vadd.c is the exact count.
//
// vadd_bias_f16: each segment is rows of one 16-column GEMM C panel (4
// atoms a row) and its bias row's 4 atoms b (at bias, bias + bias_seg,
// ...); the workers share whole rows; the last pass (three sources or
// one) also adds b, after the sources, so the result is the bits of the
// reduction followed by a bias add (the lowering's two steps before).
// vadd_bias_res_f16: the last pass then adds h's atom too, after b, so
// the result is the bits of the reduction, the bias add and the residual
// add (an f16 add is commutative: fl(t + h) = fl(h + t)); its cursor is
// $m2 (the sources left, not read after the last pass).

	.equ ARG_DST, 0
	.equ ARG_SRC, 1
	.equ ARG_STRIDE, 2
	.equ ARG_NSRC, 3
	.equ ARG_NSEG, 4
	.equ ARG_DSEG, 5
	.equ ARG_SSEG, 6
	.equ ARG_ATOMS, 7
	.equ ARG_BSEG, 8
	.equ ARG_RES, 9
	.equ ARG_RANGES, 40
	.equ RANGE_WORDS, 6
	.equ BIAS_RANGE_WORDS, 7

	.section .text.vadd, "ax"

.macro VADD_SUPERVISOR worker, words=RANGE_WORDS
	// each worker's $WORKER_BASE points at the argument block; the
	// runall's operands are ready by the time the CSR writes are done
	setzi $m1, \worker
	add $m2, $m0, ARG_RANGES
	put $WORKER0_BASE, $m0
	put $WORKER1_BASE, $m0
	put $WORKER2_BASE, $m0
	put $WORKER3_BASE, $m0
	put $WORKER4_BASE, $m0
	put $WORKER5_BASE, $m0
	runall $m1, $m2, \words
	sync TEXCH_SYNCZONE_LOCAL
	br $lr
.endm

// $mvertex_base -> its range; $mworker_base -> argument block. A part of
// the range at a time (the atoms in one segment: $m7 dst, $m3 source 0,
// $m10 atoms - 1; $m11 atoms left after it, $m14 / $m1 the next
// segment's dst and source 0). Passes over the part: three sources a pass while three are
// left, then one source a pass. A pass walks a triple-packed address:
// A0 loads dst, A1 loads source 0 and A2 stores dst one atom behind A0,
// so the store and the dst load of a bundle fall in the two elements of
// an interleaved pair; the sources must lie in other elements than dst
// (the lowering places them apart). Three sources take 4 bundles an atom
// (the paced loads and store, two more loads, three adds in order), one
// source 2. Every instruction but exitz is a bundle, so the rpt bodies
// are 8-aligned.
// One atom of a pass with the bias: \bstep moves the bias cursor ($m13)
// on (+1, or -3 after a row's last atom); \last stores without loading
// the next atom. Three sources: 5 bundles (the loads of two sources and
// b, four adds in order, the paced loads and store); one: 3.
.macro VADD_ATOM3B add, bstep, last=0
	{ ld64 $a4:5, $m8, $m6, 0 ; \add $a6:7, $a0:1, $a2:3 }
	{ ld64step $a8:9, $m9, $m8+=, 1 ; \add $a6:7, $a6:7, $a4:5 }
	{ ld64step $a10:11, $mzero, $m13+=, \bstep ; \add $a6:7, $a6:7, $a8:9 }
	{ nop ; \add $a6:7, $a6:7, $a10:11 }
	VADD_NEXT \last
.endm
.macro VADD_ATOM1B add, bstep, last=0
	{ ld64step $a10:11, $mzero, $m13+=, \bstep ; \add $a6:7, $a0:1, $a2:3 }
	{ nop ; \add $a6:7, $a6:7, $a10:11 }
	VADD_NEXT \last
.endm
// The same with the residual: h's atom loaded by its cursor ($m2) and
// added after b; three sources 6 bundles an atom, one 4.
.macro VADD_ATOM3BR add, bstep, last=0
	{ ld64 $a4:5, $m8, $m6, 0 ; \add $a6:7, $a0:1, $a2:3 }
	{ ld64step $a8:9, $m9, $m8+=, 1 ; \add $a6:7, $a6:7, $a4:5 }
	{ ld64step $a10:11, $mzero, $m13+=, \bstep ; \add $a6:7, $a6:7, $a8:9 }
	{ ld64step $a4:5, $mzero, $m2+=, 1 ; \add $a6:7, $a6:7, $a10:11 }
	{ nop ; \add $a6:7, $a6:7, $a4:5 }
	VADD_NEXT \last
.endm
.macro VADD_ATOM1BR add, bstep, last=0
	{ ld64step $a10:11, $mzero, $m13+=, \bstep ; \add $a6:7, $a0:1, $a2:3 }
	{ ld64step $a4:5, $mzero, $m2+=, 1 ; \add $a6:7, $a6:7, $a10:11 }
	{ nop ; \add $a6:7, $a6:7, $a4:5 }
	VADD_NEXT \last
.endm
.macro VADD_NEXT last
	.if \last
	{ st64pace $a6:7, $m4:5+=, $mzero, 0 ; fnop }
	.else
	{ ld2xst64pace $a0:3, $a6:7, $m4:5+=, $mzero, 0 ; fnop }
	.endif
.endm
// A row's four atoms; \last: the part's last row.
.macro VADD_ROWB atom, add, last=0
	\atom \add, 1
	\atom \add, 1
	\atom \add, 1
	\atom \add, -3, \last
.endm

// The pass of the last sources with b (and with \res h, its cursor set
// from the vertex): a row a rpt pass, the part's last row after it;
// \atom and \atomr the atoms without and with h, \n and \nr their
// rows' bundles less one (the rpt count).
.macro VADD_LASTB add, res, atom, n, atomr, nr
	.if \res
	{ ld32 $m2, $mworker_base, $mzero, ARG_RES ; fnop }
	{ add $m2, $m2, $m7 ; fnop }              // h's cursor
	.endif
	{ shr $m0, $m10, 2 ; fnop }               // rows - 1
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0 ; fnop }
	.if \res
	{ rpt $m0, \nr ; fnop }
	VADD_ROWB \atomr, \add
	VADD_ROWB \atomr, \add, 1
	.else
	{ rpt $m0, \n ; fnop }
	VADD_ROWB \atom, \add
	VADD_ROWB \atom, \add, 1
	.endif
.endm

.macro VADD_WORKER name, add, bias=0, res=0
	.align 8
\name:
	{ ld32 $m1, $mvertex_base, $mzero, 2 ; fnop }        // atoms
	{ brz $m1, 9f ; fnop }
	{ add $m10, $m1, -1 ; fnop }                         // rpt count
	{ ld32 $m7, $mvertex_base, $mzero, 0 ; fnop }
	{ ld32 $m3, $mvertex_base, $mzero, 1 ; fnop }
	{ ld32 $m11, $mvertex_base, $mzero, 3 ; fnop }
	{ ld32 $m14, $mvertex_base, $mzero, 4 ; fnop }
	{ ld32 $m1, $mvertex_base, $mzero, 5 ; fnop }
	.if \bias
	// the bias cursor, back at the row's first b atom after each row
	{ ld32 $m13, $mvertex_base, $mzero, 6 ; fnop }
	.endif
	{ ld32 $m6, $mworker_base, $mzero, ARG_STRIDE ; fnop }
	{ add $m9, $m6, $m6 ; fnop }                         // two strides
0:	{ ld32 $m2, $mworker_base, $mzero, ARG_NSRC ; fnop } // sources left
	.if \bias
	// three sources a pass while more than three are left: the last
	// three, or the last one, take the pass with the bias
1:	{ cmpult $m0, $m2, 4 ; fnop }
	.else
1:	{ cmpult $m0, $m2, 3 ; fnop }
	.endif
	{ brnz $m0, 3f ; fnop }
	{ tapack $m4:5, $m7, $m3, $m7 ; fnop }
	{ mov $m8, $m3 ; fnop }                   // sources 1 and 2 from here
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0 ; fnop }
	{ ld64 $a4:5, $m8, $m6, 0 ; \add $a6:7, $a0:1, $a2:3 }
	{ ld64step $a8:9, $m9, $m8+=, 1 ; \add $a6:7, $a6:7, $a4:5 }
	{ rpt $m10, 3 ; \add $a6:7, $a6:7, $a8:9 }
	{ ld2xst64pace $a0:3, $a6:7, $m4:5+=, $mzero, 0 ; fnop }
	{ ld64 $a4:5, $m8, $m6, 0 ; \add $a6:7, $a0:1, $a2:3 }
	{ ld64step $a8:9, $m9, $m8+=, 1 ; \add $a6:7, $a6:7, $a4:5 }
	{ nop ; \add $a6:7, $a6:7, $a8:9 }
	{ st64pace $a6:7, $m4:5+=, $mzero, 0 ; fnop }
	{ add $m3, $m3, $m9 ; fnop }
	{ add $m3, $m3, $m6 ; fnop }              // past the three sources
	{ add $m2, $m2, -3 ; fnop }
	{ bri 1b ; fnop }
	.if \bias
3:	{ cmpeq $m0, $m2, 3 ; fnop }
	{ brnz $m0, 5f ; fnop }
	{ add $m2, $m2, -1 ; fnop }               // passes without the bias
	{ brz $m2, 6f ; fnop }
	{ add $m2, $m2, -1 ; fnop }
	.else
3:	{ brz $m2, 8f ; fnop }
	{ add $m2, $m2, -1 ; fnop }               // sources left - 1
	.endif
4:	{ tapack $m4:5, $m7, $m3, $m7 ; fnop }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0 ; fnop }
	{ rpt $m10, 1 ; \add $a6:7, $a0:1, $a2:3 }
	{ ld2xst64pace $a0:3, $a6:7, $m4:5+=, $mzero, 0 ; fnop }
	{ nop ; \add $a6:7, $a0:1, $a2:3 }
	{ st64pace $a6:7, $m4:5+=, $mzero, 0 ; fnop }
	{ add $m3, $m3, $m6 ; fnop }              // next source
	{ brnzdec $m2, 4b ; fnop }
	.if \bias
	{ bri 6f ; fnop }
	// the last three sources and b: a row a rpt pass
5:	{ tapack $m4:5, $m7, $m3, $m7 ; fnop }
	{ mov $m8, $m3 ; fnop }
	VADD_LASTB \add, \res, VADD_ATOM3B, 19, VADD_ATOM3BR, 23
	{ bri 8f ; fnop }
	// the last source and b
6:	{ tapack $m4:5, $m7, $m3, $m7 ; fnop }
	VADD_LASTB \add, \res, VADD_ATOM1B, 11, VADD_ATOM1BR, 15
	.endif
8:	{ brz $m11, 9f ; fnop }                   // the next segment's part
	{ mov $m7, $m14 ; fnop }
	{ mov $m3, $m1 ; fnop }
	.if \bias
	{ ld32 $m0, $mworker_base, $mzero, ARG_BSEG ; fnop }
	{ add $m13, $m13, $m0 ; fnop }
	.endif
	{ ld32 $m0, $mworker_base, $mzero, ARG_DSEG ; fnop }
	{ add $m14, $m14, $m0 ; fnop }
	{ ld32 $m0, $mworker_base, $mzero, ARG_SSEG ; fnop }
	{ add $m1, $m1, $m0 ; fnop }
	{ ld32 $m10, $mworker_base, $mzero, ARG_ATOMS ; fnop }
	{ min $m10, $m10, $m11 ; fnop }
	{ sub $m11, $m11, $m10 ; fnop }
	{ add $m10, $m10, -1 ; fnop }
	{ bri 0b ; fnop }
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

	.globl vadd_bias_f16
	.type vadd_bias_f16, @function
vadd_bias_f16:
	VADD_SUPERVISOR vadd_bias_f16_worker, BIAS_RANGE_WORDS
	.size vadd_bias_f16, . - vadd_bias_f16

	.globl vadd_bias_res_f16
	.type vadd_bias_res_f16, @function
vadd_bias_res_f16:
	VADD_SUPERVISOR vadd_bias_res_f16_worker, BIAS_RANGE_WORDS
	.size vadd_bias_res_f16, . - vadd_bias_res_f16

	VADD_WORKER vadd_f16_worker, f16v4add
	VADD_WORKER vadd_bias_f16_worker, f16v4add, 1
	VADD_WORKER vadd_bias_res_f16_worker, f16v4add, 1, 1
	VADD_WORKER vadd_f32_worker, f32v2add

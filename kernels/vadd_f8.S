// vadd_f8.S - the reduction's add fused with a GELU and its cast to f8
// (C600 only, a separate object so that the GC200 can link vadd.S):
//
//   vadd_bias_gelu_f16_f8   q = f8(gelu(t)), t = (dst + src[0] + ... +
//                           src[nsrc-1]) + b, as vadd_bias_f16
//
// t is rounded to f16 at each add, as vadd_bias_f16 rounds it, and the
// GELU is ew_gelu_f16_f8's (kernels/elementwise_f8.S: the same f16
// instructions on the same operands), then f16v8tof8: the bits of
// vadd_bias_f16 followed by ew_gelu_f16_f8. The f16 t is never stored:
// dst is read, not written, by the last pass (passes of three sources
// before it, nsrc > 3, add into dst as vadd_bias_f16). nsrc must be a
// multiple of 3 (the last pass has three sources; vadd_args_fill checks).
//
// The argument block is vadd_bias_f16's with word 9 (ARG_RES) the f8
// destination's address less half dst's (mod 2^32): q of dst's row at
// byte address A is at A / 2 + word 9, i.e. q is laid out as dst with
// half the bytes (16-byte rows, segments dst_seg / 2 apart); words 52
// and 53 $FP_INFMT and $FP_ISCL. The supervisor also clobbers $m3, $m4.
// vadd_cycles (bias 3) in src/kernels/vadd.c is the exact count.

	.include "vadd.inc"
	.include "gelu16h8.inc"

	.equ ARG_GELU_FMT, 208                    // and the scale at 212

	.section .text.vadd_f8, "ax"

// The last pass: a row is two groups of two atoms (eight halves each),
// 23 bundles a group, every one with an FP op: the group's reduction (8
// adds: x0 in $a0:1 and x1 in $a2:3, their sources through $a4:5 and
// $a6:7) and its GELU (15: the temporaries in $a8:11, the result in
// $a8:9). The GELU's last two bundles load the next group's dst and
// source-0 atoms (x0 and x1 are read for the last time before them) and
// the next reduction's last-but-one bundle stores the previous group's
// eight f8 bytes. Cursors: $m4:5 dst and source 0 (paced), $m8 sources 1
// and 2 ($m6 and $m9 apart), $m13 b, $m2 q.

// A group's reduction: x0 and x1 loaded with their source-0 atoms;
// \b1: the bias step after its second atom (+1, or -3 at a row's end);
// \st: store the previous group's q first.
.macro VADD_G_SUM b1, st
	{ ld64 $a4:5, $m8, $m6, 0 ; f16v4add $a0:1, $a0:1, $a4:5 }
	{ ld64 $a6:7, $m8, $m6, 1 ; f16v4add $a2:3, $a2:3, $a6:7 }
	{ ld64step $a4:5, $m9, $m8+=, 1 ; f16v4add $a0:1, $a0:1, $a4:5 }
	{ ld64step $a6:7, $m9, $m8+=, 1 ; f16v4add $a2:3, $a2:3, $a6:7 }
	{ ld64step $a4:5, $mzero, $m13+=, 1 ; f16v4add $a0:1, $a0:1, $a4:5 }
	{ ld64step $a6:7, $mzero, $m13+=, \b1 ; f16v4add $a2:3, $a2:3, $a6:7 }
	.if \st
	{ st64step $a8:9, $mzero, $m2+=, 1 ; f16v4add $a0:1, $a0:1, $a4:5 }
	.else
	{ nop ; f16v4add $a0:1, $a0:1, $a4:5 }
	.endif
	{ nop ; f16v4add $a2:3, $a2:3, $a6:7 }
.endm
// A group's GELU (EW_LINE_GELU16H8's ops); \next: load the next group's
// dst and source-0 atoms in its last two bundles.
.macro VADD_G_GELU next
	{ nop ; f16v4mul $a8:9, $a0:1, $a0:1 }
	{ nop ; f16v4mul $a8:9, $a12:BL, $a8:9 }
	GELU16H8_MID $a0:1, $a2:3, $a8:9, $a8, $a9, $a10:11, $a10, $a11, $a12:BL, $a12:BU, $a8:9
	.if \next
	{ ld2x64pace $a0:1, $a4:5, $m4:5+=, $mzero, 0 ; f16v4mul $a10:11, $a10:11, $a2:3 }
	{ ld2x64pace $a2:3, $a6:7, $m4:5+=, $mzero, 0 ; f16v8tof8 $a8:9, $a8:11 }
	.else
	{ nop ; f16v4mul $a10:11, $a10:11, $a2:3 }
	{ nop ; f16v8tof8 $a8:9, $a8:11 }
	.endif
.endm
.macro VADD_LASTG
	{ ld32 $m2, $mworker_base, $mzero, ARG_RES ; fnop }
	{ shr $m0, $m7, 1 ; fnop }
	{ add $m2, $m2, $m0 ; fnop }              // q's cursor
	{ shr $m0, $m10, 2 ; setzi $a12, 0x22c91 } // rows - 1
	{ ld2x64pace $a0:1, $a4:5, $m4:5+=, $mzero, 0 ; or $a12, $a12, 0x3e600000 }
	{ ld2x64pace $a2:3, $a6:7, $m4:5+=, $mzero, 0 ; fnop }
	VADD_G_SUM 1, 0
	{ rpt $m0, 45 ; fnop }
	VADD_G_GELU 1
	VADD_G_SUM -3, 1
	VADD_G_GELU 1
	VADD_G_SUM 1, 1
	// the last row
	VADD_G_GELU 1
	VADD_G_SUM -3, 1
	VADD_G_GELU 0
	{ st64step $a8:9, $mzero, $m2+=, 1 ; fnop }
.endm

	.globl vadd_bias_gelu_f16_f8
	.type vadd_bias_gelu_f16_f8, @function
vadd_bias_gelu_f16_f8:
	VADD_SUPERVISOR vadd_bias_gelu_f16_f8_worker, BIAS_RANGE_WORDS, ARG_GELU_FMT
	.size vadd_bias_gelu_f16_f8, . - vadd_bias_gelu_f16_f8

	VADD_WORKER vadd_bias_gelu_f16_f8_worker, f16v4add, 1, 0, 1

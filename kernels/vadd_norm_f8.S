// vadd_norm_f8.S - the reduction's row division fused with its cast to
// f8 (C600 only, an object of its own so that only programs that call it
// carry it; it runs vadd.S's reciprocal worker, so linking it links
// vadd.S):
//
//   vadd_norm_f16_f8   q = f8(y), y = vadd_norm_f16's result
//
// y is vadd_norm_f16's (the same adds in the same order, the same
// multiply by the row's reciprocal), then f16v8tof8: the bits of
// vadd_norm_f16 followed by ew_cast_f16_f8. The f16 y is never stored:
// dst is read, not written, by the last pass (the passes before it add
// into dst as vadd_norm_f16's).
//
// The argument block is vadd_norm_f16's (kernels/vadd.S) with word 9
// (ARG_RES) the f8 destination's address less half dst's (mod 2^32): q
// of dst's row at byte address A is at A / 2 + word 9, i.e. q is laid
// out as dst with half the bytes (16-byte rows, segments dst_seg / 2
// apart); and at 320 and 324 $FP_INFMT and $FP_ISCL (the f8 format and
// scale, as the f8 elementwise entries). The supervisor also clobbers
// $m3, $m4. vadd_cycles (VADD_NORM_F8) in src/kernels/vadd.c is the exact count.

	.include "vadd.inc"

	.equ ARG_NORM_FMT, 320                    // and the scale at 324

	.section .text.vadd_norm_f8, "ax"

// The last pass of one source times the row's reciprocal, cast to f8: a
// pair of atoms (eight halves) is 5 bundles, every one with an FP op:
// atom a's add (beside the paced loads of atom a + 1) and multiply, atom
// b's the same (y of the pair in $a8:11), then f16v8tof8 into $a12:13,
// which the next pair's fourth bundle stores (q's cursor $m2). The sum
// in $a4:5, the row's reciprocal in $a6:7 (its cursor $m13), loaded
// beside the cast of a row's second pair (after the row's last multiply
// read it). A rpt pass is a row's second pair and the next row's first;
// the first row's first pair before it and the last row's second pair
// after it, which loads nothing past the part.
// \st: store the previous pair's q; \fifth: the cast's bundle (0: the
// caller's, 1: it, 2: it and the next row's reciprocal); \next: load
// the next atom.
.macro VADD_P8_PAIR add, st, fifth, next=1
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0 ; \add $a4:5, $a0:1, $a2:3 }
	{ nop ; f16v4mul $a8:9, $a4:5, $a6:7 }
	.if \next
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0 ; \add $a4:5, $a0:1, $a2:3 }
	.else
	{ nop ; \add $a4:5, $a0:1, $a2:3 }
	.endif
	.if \st
	{ st64step $a12:13, $mzero, $m2+=, 1 ; f16v4mul $a10:11, $a4:5, $a6:7 }
	.else
	{ nop ; f16v4mul $a10:11, $a4:5, $a6:7 }
	.endif
	.if \fifth == 2
	{ ld64step $a6:7, $mzero, $m13+=, 1 ; f16v8tof8 $a12:13, $a8:11 }
	.elseif \fifth
	{ nop ; f16v8tof8 $a12:13, $a8:11 }
	.endif
.endm
.macro VADD_LASTN8 add
	{ ld32 $m2, $mworker_base, $mzero, ARG_RES ; fnop }
	{ shr $m0, $m7, 1 ; fnop }
	{ add $m2, $m2, $m0 ; fnop }              // q's cursor
	{ tapack $m4:5, $m7, $m3, $m7 ; fnop }
	{ shr $m0, $m10, 2 ; fnop }               // rows - 1
	{ ld64step $a6:7, $mzero, $m13+=, 1 ; fnop }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0 ; fnop }
	VADD_P8_PAIR \add, 0, 0
	{ rpt $m0, 9 ; f16v8tof8 $a12:13, $a8:11 }
	VADD_P8_PAIR \add, 1, 2
	VADD_P8_PAIR \add, 1, 1
	// the last row's second pair
	VADD_P8_PAIR \add, 1, 1, 0
	{ st64step $a12:13, $mzero, $m2+=, 1 ; fnop }
.endm

// The two runalls of vadd_norm_f16 (kernels/vadd.S), the f8 format and
// scale set before the first.
	.globl vadd_norm_f16_f8
	.type vadd_norm_f16_f8, @function
vadd_norm_f16_f8:
	VADD_NORM_SUPERVISOR vadd_norm_f16_f8_worker, ARG_NORM_FMT
	.size vadd_norm_f16_f8, . - vadd_norm_f16_f8

	VADD_WORKER vadd_norm_f16_f8_worker, f16v4add, 0, 0, 0, 2

// elementwise_f8.S - the f8 casts of the elementwise kernels (C600 only),
// a separate object so that the GC200 can link kernels/elementwise.S:
//
//   entry            line loop        group
//   ew_cast_f16_f8   f16v8tof8        8 (f16 in, f8 out)
//   ew_cast_f8_f16   f8v4tof16 x 2    8 (f8 in, f16 out)
//   ew_gelu_f16_f8   GELU in f16,     8 (f16 in, f8 out)
//                    then f16v8tof8
//
// The supervisor first sets $FP_INFMT (the f8 format, register operand
// field) and $FP_ISCL (the power-of-two scale) from the argument block;
// the workers start with them in $FP_NFMT and $FP_SCL. f8 -> f16 gives
// decode(q) * 2^scale, f16 -> f8 encodes x * 2^-scale (docs/emulator-
// float.md). Clobbers what elementwise.S does plus $FP_INFMT and $FP_ISCL.

	.include "elementwise.inc"
	.include "gelu16h8.inc"

	.section .text.elementwise_f8, "ax"

	EW_F8_ENTRY ew_cast_f16_f8, ew_cast_f16_f8_worker
	EW_F8_ENTRY ew_cast_f8_f16, ew_cast_f8_f16_worker
	EW_F8_ENTRY ew_gelu_f16_f8, ew_gelu_f16_f8_worker

.macro TO8
	EW_LINE_NARROW f16v8tof8
.endm
.macro FROM8
	EW_LINE_WIDEN f8v4tof16
.endm

	EW_WORKER ew_cast_f16_f8_worker, TO8
	EW_WORKER ew_cast_f8_f16_worker, FROM8

// The GELU of EW_LINE_GELU16H (elementwise.inc) on two atoms of halves,
// x0 in $a0:1 and x1 in $a2:3, their 2u and sigmoids in $a6:7 and $a4:5,
// the eight results in $a8:11, narrowed to f8 in $a4:5 (the cast of the
// result, fused: its f16 values are never stored); the constants in $a12
// ($a14:15 read as zero). 15 bundles a group of eight halves; the body
// narrows and stores the previous group's atom while it starts on the
// next.
.macro EW_LINE_GELU16H8
	{ ld64step $a0:1, $mzero, $m7+=, 1 ; fnop }
	{ nop ; f16v4mul $a6:7, $a0:1, $a0:1 }
	{ ld64step $a2:3, $mzero, $m7+=, 1 ; f16v4mul $a6:7, $a12:BL, $a6:7 }
	EW_GELU16H8_REST
	{ rpt $m10, 14 ; f16v4mul $a10:11, $a4:5, $a2:3 }
	{ ld64step $a0:1, $mzero, $m7+=, 1 ; f16v8tof8 $a4:5, $a8:11 }
	{ st64step $a4:5, $mzero, $m6+=, 1 ; f16v4mul $a6:7, $a0:1, $a0:1 }
	{ ld64step $a2:3, $mzero, $m7+=, 1 ; f16v4mul $a6:7, $a12:BL, $a6:7 }
	EW_GELU16H8_REST
	{ nop ; f16v4mul $a10:11, $a4:5, $a2:3 }
	{ nop ; f16v8tof8 $a4:5, $a8:11 }
	{ st64step $a4:5, $mzero, $m6+=, 1 ; fnop }
.endm

	EW_WORKER ew_gelu_f16_f8_worker, EW_LINE_GELU16H8, EW_GELU16H8_SETUP


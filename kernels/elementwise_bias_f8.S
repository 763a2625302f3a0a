// elementwise_bias_f8.S - a GEMM C's bias add, its GELU and the cast to
// f8 in one pass (C600 only), an object of its own so that a program
// that does not call it (a GEMM with a reduction adds its bias there,
// kernels/vadd_f8.S) does not carry its code:
//
//   entry                line loop                       group
//   ew_bias_gelu_f16_f8  a + b in f16, the GELU in f16,  8 (f16 in, f8
//                        then f16v8tof8                  out; b one
//                                                        16-column row
//                                                        a line)
//
// The supervisor sets $FP_INFMT and $FP_ISCL as elementwise_f8.S's
// entries do; ew_cycles (src/kernels/elementwise.c) counts it.

	.include "elementwise.inc"
	.include "gelu16h8.inc"

	.section .text.elementwise_bias_f8, "ax"

	EW_F8_ENTRY ew_bias_gelu_f16_f8, ew_bias_gelu_f16_f8_worker

// The bias add of a GEMM's C with one K group (no reduction to add it
// in), its GELU and the cast in one pass: q = f8(gelu(a + b)), the sum
// rounded to f16 as ew_add_f16 rounds it, then ew_gelu_f16_f8's
// instructions on it: the bits of the two kernels one after the other.
// Lines are bias lines only (ew_check): a line is a segment of rows of
// 16 columns (two groups a row) and b its 4 atoms, reloaded a group at
// a time ($m8 +1, and -3 after a row's last atom). A group is 17
// bundles, every one an FP op: the two adds, the GELU's 15. The a and b
// atoms land in registers the previous group has read for the last
// time (b0 in t0's $a6:7, b1 in t1's $a4:5), and the f8 result goes to
// $a8:9 (stored before the next r0 is written there). The rpt body is a
// row from its second group on; the prologue starts the line's first
// group, the epilogue finishes its last row.
.macro EW_BG_START bstep
	{ ld64step $a0:1, $mzero, $m7+=, 1 ; f16v4mul $a10:11, $a4:5, $a2:3 }
	{ ld64step $a6:7, $mzero, $m8+=, 1 ; f16v8tof8 $a8:9, $a8:11 }
	{ ld64step $a2:3, $mzero, $m7+=, 1 ; f16v4add $a0:1, $a0:1, $a6:7 }
	{ ld64step $a4:5, $mzero, $m8+=, \bstep ; f16v4mul $a6:7, $a0:1, $a0:1 }
	{ st64step $a8:9, $mzero, $m6+=, 1 ; f16v4mul $a6:7, $a12:BL, $a6:7 }
	{ nop ; f16v4add $a2:3, $a2:3, $a4:5 }
.endm
.macro EW_LINE_BIASGELU8
	{ ld64step $a0:1, $mzero, $m7+=, 1 ; fnop }
	{ ld64step $a6:7, $mzero, $m8+=, 1 ; fnop }
	{ ld64step $a2:3, $mzero, $m7+=, 1 ; f16v4add $a0:1, $a0:1, $a6:7 }
	{ ld64step $a4:5, $mzero, $m8+=, 1 ; f16v4mul $a6:7, $a0:1, $a0:1 }
	{ shr $m10, $m10, 1 ; f16v4mul $a6:7, $a12:BL, $a6:7 } // rows - 1
	{ rpt $m10, 33 ; f16v4add $a2:3, $a2:3, $a4:5 }
	EW_GELU16H8_REST
	EW_BG_START -3
	EW_GELU16H8_REST
	EW_BG_START 1
	// the last row
	EW_GELU16H8_REST
	EW_BG_START -3
	EW_GELU16H8_REST
	{ nop ; f16v4mul $a10:11, $a4:5, $a2:3 }
	{ nop ; f16v8tof8 $a8:9, $a8:11 }
	{ st64step $a8:9, $mzero, $m6+=, 1 ; fnop }
.endm

	EW_WORKER ew_bias_gelu_f16_f8_worker, EW_LINE_BIASGELU8, EW_GELU16H8_SETUP

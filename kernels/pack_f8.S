// pack_f8.S - the f8 entry of the weight-packing kernel (ipu21 only), a
// separate object so that the GC200 can link kernels/pack.S:
//
//   entry        source block (row stride S bytes)   panel row m of (q, p)
//   pack_b_f8    B   [bk x bn] f8                     transposed 32 x 16
//   pack_b_f16_f8  blocks of 32 x 16 f16               cast and transposed
//                                                    (below)
//
// The same supervisor and split as pack.S (pack.inc), and pack.S's
// padding routine (pack_padding: link both); a panel is 8 bands of 4
// source rows x 16 columns, band kb filling word kb of the 16 panel rows.
// docs/kernel-pack.md.

	.include "pack.inc"

	.section .text.pack_f8, "ax"

	PACK_ENTRY pack_b_f8, pack_b_f8_worker

// Columns j .. j+3 of 4 source rows, one word of each in \r0 .. \r3 (x_ij
// the byte of row i, column j): \lo, \hi = {x00 x10 x01 x11}, {x02 x12
// x03 x13} (shuf8x8lo/hi of rows 0 and 1), \lo2, \hi2 the same of rows 2
// and 3; column j + c is then {the low (c even) or high (c odd) halves of
// \lo and \lo2 (c < 2) or of \hi and \hi2}: sort4x16lo/hi. Four shuffles,
// four sorts a 4 x 4 block of bytes.

// One band: 4 rows x 16 columns, two units of 4 rows x 8 columns (ld64 of
// each row into $a0:1 .. $a6:7), each two 4 x 4 blocks (the rows' low
// words, then their high words). The 16 panel rows are stored in order,
// 32 bytes apart, the last one's step back to row 0's next word. Loads
// step down a row ($m8 = S / 8), back up and 8 bytes right after a unit's
// last row ($m13), into the next band after the second's ($m2).
.macro PACK_T8_BAND
	{ ld64step $a0:1, $mzero, $m7+=, $m8 ; fnop }
	{ ld64step $a2:3, $mzero, $m7+=, $m8 ; fnop }
	{ ld64step $a4:5, $mzero, $m7+=, $m8 ; shuf8x8lo $a8, $a0, $a2 }
	{ ld64step $a6:7, $mzero, $m7+=, $m13 ; shuf8x8hi $a9, $a0, $a2 }
	{ nop ; shuf8x8lo $a10, $a4, $a6 }
	{ nop ; shuf8x8hi $a11, $a4, $a6 }
	{ nop ; sort4x16lo $a0, $a8, $a10 }
	{ st32step $a0, $mzero, $m6+=, 8 ; sort4x16hi $a2, $a8, $a10 }
	{ st32step $a2, $mzero, $m6+=, 8 ; sort4x16lo $a4, $a9, $a11 }
	{ st32step $a4, $mzero, $m6+=, 8 ; sort4x16hi $a6, $a9, $a11 }
	{ st32step $a6, $mzero, $m6+=, 8 ; shuf8x8lo $a8, $a1, $a3 }
	{ nop ; shuf8x8hi $a9, $a1, $a3 }
	{ ld64step $a0:1, $mzero, $m7+=, $m8 ; shuf8x8lo $a10, $a5, $a7 }
	{ ld64step $a2:3, $mzero, $m7+=, $m8 ; shuf8x8hi $a11, $a5, $a7 }
	{ ld64step $a4:5, $mzero, $m7+=, $m8 ; sort4x16lo $a12, $a8, $a10 }
	{ ld64step $a6:7, $mzero, $m7+=, $m2 ; sort4x16hi $a13, $a8, $a10 }
	{ st32step $a12, $mzero, $m6+=, 8 ; sort4x16lo $a8, $a9, $a11 }
	{ st32step $a13, $mzero, $m6+=, 8 ; sort4x16hi $a9, $a9, $a11 }
	{ st32step $a8, $mzero, $m6+=, 8 ; shuf8x8lo $a10, $a0, $a2 }
	{ st32step $a9, $mzero, $m6+=, 8 ; shuf8x8hi $a11, $a0, $a2 }
	{ nop ; shuf8x8lo $a12, $a4, $a6 }
	{ nop ; shuf8x8hi $a13, $a4, $a6 }
	{ nop ; sort4x16lo $a0, $a10, $a12 }
	{ st32step $a0, $mzero, $m6+=, 8 ; sort4x16hi $a2, $a10, $a12 }
	{ st32step $a2, $mzero, $m6+=, 8 ; sort4x16lo $a4, $a11, $a13 }
	{ st32step $a4, $mzero, $m6+=, 8 ; sort4x16hi $a6, $a11, $a13 }
	{ st32step $a6, $mzero, $m6+=, 8 ; shuf8x8lo $a8, $a1, $a3 }
	{ nop ; shuf8x8hi $a9, $a1, $a3 }
	{ nop ; shuf8x8lo $a10, $a5, $a7 }
	{ nop ; shuf8x8hi $a11, $a5, $a7 }
	{ nop ; sort4x16lo $a12, $a8, $a10 }
	{ st32step $a12, $mzero, $m6+=, 8 ; sort4x16hi $a13, $a8, $a10 }
	{ st32step $a13, $mzero, $m6+=, 8 ; sort4x16lo $a8, $a9, $a11 }
	{ st32step $a8, $mzero, $m6+=, 8 ; sort4x16hi $a9, $a9, $a11 }
	{ st32step $a9, $mzero, $m6+=, -119 ; fnop }
.endm

// 8 bands; dst is then 32 bytes on: to the next panel.
.macro PACK_T8_PANEL
	{ rpt 8, 34 ; fnop }
	PACK_T8_BAND
	{ add $m6, $m6, 480 ; fnop }
.endm

	PACK_WORKER pack_b_f8_worker, PACK_T8_PANEL

// pack_b_f16_f8: the f8 cast and the pack in one call. Panel i of dst
// (512 bytes at dst + 512 i) is the weight-layout panel of the f8 cast of
// a 32 x 16 block of f16 at src + i x P (rows S bytes apart): panel row m
// byte j = f8(block row j, column m). The workers split the panels'
// bands (4 rows x 16 columns, 8 a panel) in contiguous ranges; a band is
// two units of 4 rows x 8 columns, each row loaded as two atoms and
// narrowed by one f16v8tof8 (the format and scale as the f8 casts of
// kernels/elementwise_f8.S set them), then the 4 x 8 bytes transposed as
// in PACK_T8_BAND. No padding pass: the caller's block padding is cast
// and stored like its data (zeros give zeros). docs/kernel-pack.md.

	.equ CP_DOWN, 0        // (S - 8) / 8: a row's second atom to the next row
	.equ CP_BACK, 4        // (8 - 3S) / 8: row 3's end to row 0, 8 columns on
	.equ CP_BAND, 8        // (S - 24) / 8: row 3's end to the next band
	.equ CP_PANEL, 12      // P - 32 S: a block's end to the next block (bytes)
	.equ CP_FMT, 16        // $FP_INFMT
	.equ CP_SCL, 20        // $FP_ISCL
	.equ CP_VERTEX, 24     // six vertices: bands, src, dst, bands left in
	                       // its panel after the first (V_COUNT ..)

	.globl pack_b_f16_f8
	.type pack_b_f16_f8, @function
pack_b_f16_f8:
	ld32 $m3, $m0, $mzero, CP_FMT / 4
	ld32 $m4, $m0, $mzero, CP_SCL / 4
	setzi $m1, pack_b_f16_f8_worker
	add $m2, $m0, CP_VERTEX
	put $WORKER0_BASE, $m0
	put $WORKER1_BASE, $m0
	put $WORKER2_BASE, $m0
	put $WORKER3_BASE, $m0
	put $WORKER4_BASE, $m0
	put $WORKER5_BASE, $m0
	put $FP_INFMT, $m3
	put $FP_ISCL, $m4
	runall $m1, $m2, VERTEX_BYTES / 4
	sync TEXCH_SYNCZONE_LOCAL
	br $lr
	.size pack_b_f16_f8, . - pack_b_f16_f8

// One unit: 4 rows x 8 columns from $m7 (row 0), its last load stepping
// by \step; the rows' 8 bytes in $a0:1 .. $a6:7; columns 0-3 from the low
// words (temporaries $a8-$a11), 4-7 from the high words (temporaries
// $a0, $a2, $a4, $a6, free by then); 8 panel rows stored 32 bytes apart,
// the last one stepping by \dstep. 26 bundles.
.macro CP_UNIT step, dstep
	{ ld64step $a8:9, $mzero, $m7+=, 1 ; fnop }
	{ ld64step $a10:11, $mzero, $m7+=, $m8 ; fnop }
	{ ld64step $a8:9, $mzero, $m7+=, 1 ; f16v8tof8 $a0:1, $a8:11 }
	{ ld64step $a10:11, $mzero, $m7+=, $m8 ; fnop }
	{ ld64step $a8:9, $mzero, $m7+=, 1 ; f16v8tof8 $a2:3, $a8:11 }
	{ ld64step $a10:11, $mzero, $m7+=, $m8 ; fnop }
	{ ld64step $a8:9, $mzero, $m7+=, 1 ; f16v8tof8 $a4:5, $a8:11 }
	{ ld64step $a10:11, $mzero, $m7+=, \step ; fnop }
	{ nop ; f16v8tof8 $a6:7, $a8:11 }
	{ nop ; shuf8x8lo $a8, $a0, $a2 }
	{ nop ; shuf8x8hi $a9, $a0, $a2 }
	{ nop ; shuf8x8lo $a10, $a4, $a6 }
	{ nop ; shuf8x8hi $a11, $a4, $a6 }
	{ nop ; sort4x16lo $a12, $a8, $a10 }
	{ st32step $a12, $mzero, $m6+=, 8 ; sort4x16hi $a13, $a8, $a10 }
	{ st32step $a13, $mzero, $m6+=, 8 ; sort4x16lo $a12, $a9, $a11 }
	{ st32step $a12, $mzero, $m6+=, 8 ; sort4x16hi $a13, $a9, $a11 }
	{ st32step $a13, $mzero, $m6+=, 8 ; shuf8x8lo $a0, $a1, $a3 }
	{ nop ; shuf8x8hi $a2, $a1, $a3 }
	{ nop ; shuf8x8lo $a4, $a5, $a7 }
	{ nop ; shuf8x8hi $a6, $a5, $a7 }
	{ nop ; sort4x16lo $a12, $a0, $a4 }
	{ st32step $a12, $mzero, $m6+=, 8 ; sort4x16hi $a13, $a0, $a4 }
	{ st32step $a13, $mzero, $m6+=, 8 ; sort4x16lo $a12, $a2, $a6 }
	{ st32step $a12, $mzero, $m6+=, 8 ; sort4x16hi $a13, $a2, $a6 }
	{ st32step $a13, $mzero, $m6+=, \dstep ; fnop }
.endm

// Worker: $m0 bands left, $m1 bands left in the panel after this one,
// $m2 / $m3 the band and panel steps, $m6 dst and $m7 src cursors, $m8 /
// $m13 the source's down / back-up-and-right steps. A band leaves dst at
// row 0's next word; after a panel's 8 bands it is 32 bytes on, so 480
// more to the next panel.
	.align 8
pack_b_f16_f8_worker:
	{ ld32 $m0, $mvertex_base, $mzero, V_COUNT ; fnop }
	{ brz $m0, 9f ; fnop }
	{ ld32 $m7, $mvertex_base, $mzero, V_SRC ; fnop }
	{ ld32 $m6, $mvertex_base, $mzero, V_DST ; fnop }
	{ ld32 $m1, $mvertex_base, $mzero, V_PLEFT ; fnop }
	{ ld32 $m8, $mworker_base, $mzero, CP_DOWN / 4 ; fnop }
	{ ld32 $m13, $mworker_base, $mzero, CP_BACK / 4 ; fnop }
	{ ld32 $m2, $mworker_base, $mzero, CP_BAND / 4 ; fnop }
	{ ld32 $m3, $mworker_base, $mzero, CP_PANEL / 4 ; fnop }
1:	CP_UNIT $m13, 8
	CP_UNIT $m2, -119
	{ add $m0, $m0, -1 ; fnop }
	{ brz $m0, 9f ; fnop }
	{ brnzdec $m1, 1b ; fnop }
	{ add $m7, $m7, $m3 ; fnop }
	{ add $m6, $m6, 480 ; fnop }
	{ setzi $m1, 7 ; fnop }
	{ bri 1b ; fnop }
9:	exitz $mzero
	.size pack_b_f16_f8_worker, . - pack_b_f16_f8_worker

// pack_f8.S - the f8 entry of the weight-packing kernel (ipu21 only), a
// separate object so that the GC200 can link kernels/pack.S:
//
//   entry        source block (row stride S bytes)   panel row m of (q, p)
//   pack_b_f8    B   [bk x bn] f8                     transposed 32 x 16
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

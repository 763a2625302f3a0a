// pack.S - packs a row-major block into the GEMM kernel's weight layout
// (docs/kernel-gemm.md "Layouts", B), on the device: the operand B of a
// matmul computed by earlier operations. docs/kernel-pack.md.
//
//   entry        source block (row stride S bytes)   panel row m of (q, p)
//   pack_b_f16   B   [bk x bn] f16                    transposed 16 x 16
//   pack_b_f32   B   [bk x bn] f32                    transposed  8 x 16
//   pack_bt      B^T [bn x bk] any type               32 bytes copied
//   (pack_b_f8, B [bk x bn] f8, 32 x 16 bytes transposed: kernels/pack_f8.S)
//
// A weight panel (q, p) is 16 rows of 32 bytes: row m holds the K-panel p
// (16 f16, 8 f32 or 32 f8 elements) of B's column 16q + m. The workers
// split the np x nk panels (n-panel outer) into six contiguous ranges and
// write every panel from the source blindly, padding included; then the
// supervisor zeroes the padding: the rows past bn in the last n-panel's
// panels, and the elements past bk in the last K-panel's rows (one word
// masked, the rest zero words). f8 from B may have column bn written
// with a byte instead (ARG_ONE: V's 1.0, PV's column of ones) before
// the mask.
//
// Supervisor entry, `call $m10, pack_b_f16` with $m0 -> argument block.
// Clobbers $m1-$m9, $m11-$m14 and $WORKER0..5_BASE; preserves $m0.

	.include "pack.inc"

	.section .text.pack, "ax"

	PACK_ENTRY pack_b_f16, pack_b_f16_worker
	PACK_ENTRY pack_b_f32, pack_b_f32_worker
	PACK_ENTRY pack_bt, pack_bt_worker

// The padding, after the workers: zero words 32 bits at a time. Unrolled
// so that the supervisor's taken branches (docs/fidelity.md, sup-branch)
// come once a row or once a panel, and a value is read 6 or more
// instructions after it is loaded (sup-dep).
.macro PACK_ROW word
	st32 \word, $m2, $mzero, 0
	st32 \word, $m2, $mzero, 1
	st32 \word, $m2, $mzero, 2
	st32 \word, $m2, $mzero, 3
	st32 \word, $m2, $mzero, 4
	st32 \word, $m2, $mzero, 5
	st32 \word, $m2, $mzero, 6
	st32 \word, $m2, $mzero, 7
.endm

// Rows r .. r+5 of a K-panel: their partial word ($m12 + 32 row) anded
// with the mask $m5.
.macro PACK_MASK6 r
	ld32 $m3, $m12, $mzero, 8 * \r
	ld32 $m4, $m12, $mzero, 8 * (\r + 1)
	ld32 $m6, $m12, $mzero, 8 * (\r + 2)
	ld32 $m8, $m12, $mzero, 8 * (\r + 3)
	ld32 $m9, $m12, $mzero, 8 * (\r + 4)
	ld32 $m11, $m12, $mzero, 8 * (\r + 5)
	and $m3, $m3, $m5
	and $m4, $m4, $m5
	and $m6, $m6, $m5
	and $m8, $m8, $m5
	and $m9, $m9, $m5
	and $m11, $m11, $m5
	st32 $m3, $m12, $mzero, 8 * \r
	st32 $m4, $m12, $mzero, 8 * (\r + 1)
	st32 $m6, $m12, $mzero, 8 * (\r + 2)
	st32 $m8, $m12, $mzero, 8 * (\r + 3)
	st32 $m9, $m12, $mzero, 8 * (\r + 4)
	st32 $m11, $m12, $mzero, 8 * (\r + 5)
.endm
.macro PACK_MASK4 r
	ld32 $m3, $m12, $mzero, 8 * \r
	ld32 $m4, $m12, $mzero, 8 * (\r + 1)
	ld32 $m6, $m12, $mzero, 8 * (\r + 2)
	ld32 $m8, $m12, $mzero, 8 * (\r + 3)
	and $m3, $m3, $m5
	and $m4, $m4, $m5
	and $m6, $m6, $m5
	and $m8, $m8, $m5
	st32 $m3, $m12, $mzero, 8 * \r
	st32 $m4, $m12, $mzero, 8 * (\r + 1)
	st32 $m6, $m12, $mzero, 8 * (\r + 2)
	st32 $m8, $m12, $mzero, 8 * (\r + 3)
.endm

// Word w of the 16 rows of a K-panel ($m2).
.macro PACK_ZERO_WORD w
	st32 $mzero, $m2, $mzero, \w
	st32 $mzero, $m2, $mzero, 8 + \w
	st32 $mzero, $m2, $mzero, 16 + \w
	st32 $mzero, $m2, $mzero, 24 + \w
	st32 $mzero, $m2, $mzero, 32 + \w
	st32 $mzero, $m2, $mzero, 40 + \w
	st32 $mzero, $m2, $mzero, 48 + \w
	st32 $mzero, $m2, $mzero, 56 + \w
	st32 $mzero, $m2, $mzero, 64 + \w
	st32 $mzero, $m2, $mzero, 72 + \w
	st32 $mzero, $m2, $mzero, 80 + \w
	st32 $mzero, $m2, $mzero, 88 + \w
	st32 $mzero, $m2, $mzero, 96 + \w
	st32 $mzero, $m2, $mzero, 104 + \w
	st32 $mzero, $m2, $mzero, 112 + \w
	st32 $mzero, $m2, $mzero, 120 + \w
.endm

// Global: pack_f8.S's entry branches here too.
	.globl pack_padding
	.type pack_padding, @function
pack_padding:
	// rows past bn: ZN panels of ZR1 + 1 rows, ZSKIP between them
	ld32 $m1, $m0, $mzero, ARG_ZN / 4
	ld32 $m2, $m0, $mzero, ARG_ZA / 4
	ld32 $m6, $m0, $mzero, ARG_ZR1 / 4
	ld32 $m7, $m0, $mzero, ARG_ZSKIP / 4
	ld32 $m5, $m0, $mzero, ARG_KN / 4
	ld32 $m4, $m0, $mzero, ARG_KZ / 4
	ld32 $m8, $m0, $mzero, ARG_ONE / 4
	brz $m1, 3f
	add $m1, $m1, -1
	mov $m3, $m6
2:	PACK_ROW $mzero
	add $m2, $m2, 32
	brnzdec $m3, 2b
	add $m2, $m2, $m7
	mov $m3, $m6
	brnzdec $m1, 2b
3:	brnz $m8, .Lpack_ones
	// K past bk: in each n-panel's last K-panel, the 16 rows' partial
	// words masked, then their KZ zero words after it: the last KZ
	// blocks of PACK_ZERO_WORD 1..7, entered at 8f - 64 KZ
.Lpack_k:
	brz $m5, 9f
	add $m1, $m5, -1
	ld32 $m2, $m0, $mzero, ARG_KA / 4
	ld32 $m5, $m0, $mzero, ARG_KM / 4
	ld32 $m13, $m0, $mzero, ARG_KW / 4
	ld32 $m14, $m0, $mzero, ARG_KSTEP / 4
	setzi $m7, 8f
	shl $m4, $m4, 6
	sub $m7, $m7, $m4
	add $m12, $m2, $m13
4:	PACK_MASK6 0
	PACK_MASK6 6
	PACK_MASK4 12
	br $m7
	PACK_ZERO_WORD 1
	PACK_ZERO_WORD 2
	PACK_ZERO_WORD 3
	PACK_ZERO_WORD 4
	PACK_ZERO_WORD 5
	PACK_ZERO_WORD 6
	PACK_ZERO_WORD 7
8:	add $m2, $m2, $m14
	add $m12, $m12, $m14
	brnzdec $m1, 4b
9:	br $lr
	// with ARG_ONE, column bn's row (the last n-panel's first row past
	// bn, which the zero rows above skip) in each K-panel, before the
	// mask clears its bytes past bk
.Lpack_ones:
	ld32 $m2, $m0, $mzero, ARG_OA / 4
	ld32 $m1, $m0, $mzero, ARG_NK1 / 4
1:	PACK_ROW $m8
	add $m2, $m2, 512
	brnzdec $m1, 1b
	bri .Lpack_k
	.size pack_padding, . - pack_padding


// Transposing panels: 4 bands of \blocks square blocks, a band being the
// block's rows of source x 16 columns; band kb fills atom kb of every
// panel row. After a band dst is 512 bytes on: back to the next atom.
.macro PACK_T_PANEL blocks, size, block
	{ setzi $m5, 3 ; fnop }
2:	{ rpt \blocks, \size ; fnop }
	\block
	{ add $m7, $m7, $m2 ; fnop }
	{ add $m6, $m6, -504 ; fnop }
	{ brnzdec $m5, 2b ; fnop }
	{ add $m6, $m6, 480 ; fnop }
.endm

// f16 4 x 4 block (as EW_LINE_T16 in elementwise.inc): rows in
// $a0:1 .. $a6:7; column j is {sort of the rows' word j/2, low (j even)
// or high halves}.
.macro PACK_T16_BLOCK
	{ ld64step $a0:1, $mzero, $m7+=, $m8 ; fnop }
	{ ld64step $a2:3, $mzero, $m7+=, $m8 ; fnop }
	{ ld64step $a4:5, $mzero, $m7+=, $m8 ; sort4x16lo $a8, $a0, $a2 }
	{ ld64step $a6:7, $mzero, $m7+=, $m13 ; sort4x16hi $a10, $a0, $a2 }
	{ nop ; sort4x16lo $a9, $a4, $a6 }
	{ st64step $a8:9, $mzero, $m6+=, $m14 ; sort4x16hi $a11, $a4, $a6 }
	{ st64step $a10:11, $mzero, $m6+=, $m14 ; sort4x16lo $a12, $a1, $a3 }
	{ nop ; sort4x16lo $a13, $a5, $a7 }
	{ st64step $a12:13, $mzero, $m6+=, $m14 ; sort4x16hi $a8, $a1, $a3 }
	{ nop ; sort4x16hi $a9, $a5, $a7 }
	{ st64step $a8:9, $mzero, $m6+=, $m14 ; fnop }
.endm

// f32 2 x 2 block: rows in $a0:1, $a2:3.
.macro PACK_T32_BLOCK
	{ ld64step $a0:1, $mzero, $m7+=, $m8 ; fnop }
	{ ld64step $a2:3, $mzero, $m7+=, $m13 ; fnop }
	{ nop ; sort4x32lo $a4:5, $a0:1, $a2:3 }
	{ st64step $a4:5, $mzero, $m6+=, $m14 ; sort4x32hi $a6:7, $a0:1, $a2:3 }
	{ st64step $a6:7, $mzero, $m6+=, $m14 ; fnop }
.endm

.macro PACK_T16_PANEL
	PACK_T_PANEL 4, 10, PACK_T16_BLOCK
.endm
.macro PACK_T32_PANEL
	PACK_T_PANEL 8, 4, PACK_T32_BLOCK
.endm

// Copy: 16 rows of 4 atoms, the source's row step in $m8.
.macro PACK_COPY_PANEL
	{ rpt 16, 7 ; fnop }
	{ ld64step $a0:1, $mzero, $m7+=, 1 ; fnop }
	{ ld64step $a2:3, $mzero, $m7+=, 1 ; fnop }
	{ ld64step $a4:5, $mzero, $m7+=, 1 ; fnop }
	{ ld64step $a6:7, $mzero, $m7+=, $m8 ; fnop }
	{ st64step $a0:1, $mzero, $m6+=, 1 ; fnop }
	{ st64step $a2:3, $mzero, $m6+=, 1 ; fnop }
	{ st64step $a4:5, $mzero, $m6+=, 1 ; fnop }
	{ st64step $a6:7, $mzero, $m6+=, 1 ; fnop }
.endm

	PACK_WORKER pack_b_f16_worker, PACK_T16_PANEL
	PACK_WORKER pack_b_f32_worker, PACK_T32_PANEL
	PACK_WORKER pack_bt_worker, PACK_COPY_PANEL

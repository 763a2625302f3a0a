// rowwise_f8.S - the f16 softmax with its exps in f16 that writes its
// result in f8 (C600 only: f16v8tof8), for a softmax whose one reader is
// a cast to f8.
//
//   entry               per row
//   rw_softmax_f16h8    rw_softmax_f16h's y (f16), narrowed to f8
//
// Passes 1 and 2 are rw_softmax_f16h's. Pass 3 forms each y in f16 as
// rw_softmax_f16h does and narrows two atoms (eight halves) at a time
// with f16v8tof8 at $FP_SCL (the entry sets the format and the scale
// from the argument block): the bytes are the cast of rw_softmax_f16h's
// result (ew_cast_f16_f8's f16v8tof8). dst is in the GEMM C layout only,
// 16 f8 a panel row, two stores; a row of an odd number of atoms reads
// one e past its own (its y go to the last panel row's padding lanes,
// whose values are unspecified), so the e place has one atom more
// (rw_panel_e_bytes).

	.section .text.rowwise_f8, "ax"

	.include "rowwise.inc"

	RW_ENTRY rw_softmax_f16h8, sm16h8_rows, sm16h8_s1, sm16h8_s2, sm16h8_s3, 1

// Pass 3: 1 / sum in f16 in $a12:13, e loaded alternately into $a4:5
// and $a6:7, y into $a0:3, narrowed into $a10:11. A pair loads the next
// two e while it scales this one's, then narrows and stores it, the
// cursor then moving by \j atoms (ARG_JUMP after a panel row's second).
.macro SM16h8_PAIR j
	{ ld64step $a6:7, $mzero, $m9+=, 2 ; f16v4mul $a0:1, $a12:13, $a4:5 }
	{ ld64step $a4:5, $mzero, $m9+=, 2 ; f16v4mul $a2:3, $a12:13, $a6:7 }
	{ nop ; f16v8tof8 $a10:11, $a0:3 }
	{ st64step $a10:11, $mzero, $m7+=, \j ; fnop }
.endm
// atoms - 1 = 4 F + 2 r + s: F loop bodies of two pairs, r of one, then
// the last pair (its second e the row's last, or the one past it).
.macro SM16h8_P3
	{ add $m9, $m10, 0 ; f32tof16 $a12, $a10 }
	{ add $m7, $m2, 0 ; f32tof16 $a13, $a10 }
	{ ld64step $a4:5, $mzero, $m9+=, 2 ; fnop }
	{ ld32 $m6, $mworker_base, $mzero, ARG_JUMP / 4 ; fnop }
	{ shr $m10, $m5, 2 ; fnop }
	{ shr $m14, $m5, 1 ; fnop }
	{ and $m14, $m14, 1 ; fnop }
	{ rpt $m10, 7 ; fnop }
	SM16h8_PAIR 1
	SM16h8_PAIR $m6
	{ rpt $m14, 3 ; fnop }
	SM16h8_PAIR 1
	{ ld64step $a6:7, $mzero, $m9+=, 2 ; f16v4mul $a0:1, $a12:13, $a4:5 }
	{ nop ; f16v4mul $a2:3, $a12:13, $a6:7 }
	{ nop ; f16v8tof8 $a10:11, $a0:3 }
	{ st64step $a10:11, $mzero, $m7+=, 1 ; fnop }
.endm
.macro SM16h8_P1
	SM16_P1
.endm
.macro SM16h8_TAS
.endm
.macro SM16h8_EROW
	SM16_EROW
.endm
.macro SM16h8_ESEG
	SM16_ESEG
.endm
.macro SM16h8_P2
	SM16h_P2
.endm

	SM_WORKERS 16h8

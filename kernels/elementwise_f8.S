// elementwise_f8.S - the f8 casts of the elementwise kernels (C600 only),
// a separate object so that the GC200 can link kernels/elementwise.S:
//
//   entry            line loop        group
//   ew_cast_f16_f8   f16v8tof8        8 (f16 in, f8 out)
//   ew_cast_f8_f16   f8v4tof16 x 2    8 (f8 in, f16 out)
//
// The supervisor first sets $FP_INFMT (the f8 format, register operand
// field) and $FP_ISCL (the power-of-two scale) from the argument block;
// the workers start with them in $FP_NFMT and $FP_SCL. f8 -> f16 gives
// decode(q) * 2^scale, f16 -> f8 encodes x * 2^-scale (docs/emulator-
// float.md). Clobbers what elementwise.S does plus $FP_INFMT and $FP_ISCL.

	.include "elementwise.inc"

	.section .text.elementwise_f8, "ax"

.macro EW_F8_ENTRY name, worker
	.globl \name
	.type \name, @function
\name:
	EW_SUPERVISOR \worker, EW_F8_LOADS, EW_F8_PUTS
	.size \name, . - \name
.endm

.macro EW_F8_LOADS
	ld32 $m3, $m0, $mzero, ARG_FP8FMT / 4
	ld32 $m4, $m0, $mzero, ARG_FP8SCL / 4
.endm
.macro EW_F8_PUTS
	put $FP_INFMT, $m3
	put $FP_ISCL, $m4
.endm

	EW_F8_ENTRY ew_cast_f16_f8, ew_cast_f16_f8_worker
	EW_F8_ENTRY ew_cast_f8_f16, ew_cast_f8_f16_worker

.macro TO8
	EW_LINE_NARROW f16v8tof8
.endm
.macro FROM8
	EW_LINE_WIDEN f8v4tof16
.endm

	EW_WORKER ew_cast_f16_f8_worker, TO8
	EW_WORKER ew_cast_f8_f16_worker, FROM8

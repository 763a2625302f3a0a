// elementwise.S - elementwise kernels over a strided walk (add, mul,
// f32 <-> f16 casts, GELU, ReLU, 2-D transposes), f16 and f32, for the GC200
// and the C600.
// kernels/elementwise_f8.S holds the f8 casts (C600 only).
//
// Supervisor entry, `call $m10, ew_add_f16` with $m0 -> argument block
// (elementwise.inc, docs/kernel-elementwise.md). Clobbers $m1-$m4 and
// $WORKER0..5_BASE; preserves $m0 and $m5-$m15 of the supervisor.
//
//   entry            line loop        group
//   ew_add_f16       f16v4add         4 halves
//   ew_add_f32       f32v2add         2 floats
//   ew_mul_f16       f16v4mul         4 halves
//   ew_mul_f32       f32v2mul         2 floats
//   ew_max_f16       f16v4max         4 halves
//   ew_max_f32       f32v2max         2 floats
//   ew_cast_f32_f16  f32v4tof16       4 (f32 in, f16 out)
//   ew_cast_f16_f32  f16v2tof32 x 2   4 (f16 in, f32 out)
//   ew_gelu_f16      in f32           4 halves
//   ew_gelu_f32                       2 floats
//   ew_gelu_f16h     in f16           4 halves (a result bound for f8)
//   ew_relu_f16      f16v4max 0       4 halves
//   ew_relu_f32      f32v2max 0       2 floats
//   ew_transpose_f16 sort4x16lo/hi    4 x 4 block
//   ew_transpose_f32 sort4x32lo/hi    2 x 2 block

	.include "elementwise.inc"

	.section .text.elementwise, "ax"

	EW_BINARY_ENTRY ew_add_f16, ew_add_f16_worker, ew_add_f16_bias
	EW_BINARY_ENTRY ew_add_f32, ew_add_f32_worker, ew_add_f32_bias
	EW_BINARY_ENTRY ew_mul_f16, ew_mul_f16_worker, ew_mul_f16_bias
	EW_BINARY_ENTRY ew_mul_f32, ew_mul_f32_worker, ew_mul_f32_bias
	EW_BINARY_ENTRY ew_max_f16, ew_max_f16_worker, ew_max_f16_bias
	EW_BINARY_ENTRY ew_max_f32, ew_max_f32_worker, ew_max_f32_bias
	EW_ENTRY ew_cast_f32_f16, ew_cast_f32_f16_worker
	EW_ENTRY ew_cast_f16_f32, ew_cast_f16_f32_worker
	EW_ENTRY ew_gelu_f16, ew_gelu_f16_worker
	EW_ENTRY ew_gelu_f32, ew_gelu_f32_worker
	EW_ENTRY ew_gelu_f16h, ew_gelu_f16h_worker
	EW_ENTRY ew_relu_f16, ew_relu_f16_worker
	EW_ENTRY ew_relu_f32, ew_relu_f32_worker
	EW_ENTRY ew_transpose_f16, ew_transpose_f16_worker
	EW_ENTRY ew_transpose_f32, ew_transpose_f32_worker

.macro ADD16
	EW_LINE_BINARY f16v4add
.endm
.macro ADD32
	EW_LINE_BINARY f32v2add
.endm
.macro MUL16
	EW_LINE_BINARY f16v4mul
.endm
.macro MUL32
	EW_LINE_BINARY f32v2mul
.endm
.macro MAX16
	EW_LINE_BINARY f16v4max
.endm
.macro MAX32
	EW_LINE_BINARY f32v2max
.endm
.macro MAX16_BIAS
	EW_LINE_BIAS4 f16v4max
.endm
.macro MAX32_BIAS
	EW_LINE_BIAS8 f32v2max
.endm
.macro ADD16_BIAS
	EW_LINE_BIAS4 f16v4add
.endm
.macro ADD32_BIAS
	EW_LINE_BIAS8 f32v2add
.endm
.macro MUL16_BIAS
	EW_LINE_BIAS4 f16v4mul
.endm
.macro MUL32_BIAS
	EW_LINE_BIAS8 f32v2mul
.endm
.macro RELU16
	EW_LINE_UNARY0 f16v4max
.endm
.macro RELU32
	EW_LINE_UNARY0 f32v2max
.endm
.macro TO16
	EW_LINE_NARROW f32v4tof16
.endm
.macro TO32
	EW_LINE_WIDEN f16v2tof32
.endm

	EW_WORKER ew_add_f16_worker, ADD16
	EW_WORKER ew_add_f32_worker, ADD32
	EW_WORKER ew_mul_f16_worker, MUL16
	EW_WORKER ew_mul_f32_worker, MUL32
	EW_WORKER ew_add_f16_bias, ADD16_BIAS
	EW_WORKER ew_add_f32_bias, ADD32_BIAS
	EW_WORKER ew_mul_f16_bias, MUL16_BIAS
	EW_WORKER ew_mul_f32_bias, MUL32_BIAS
	EW_WORKER ew_max_f16_worker, MAX16
	EW_WORKER ew_max_f32_worker, MAX32
	EW_WORKER ew_max_f16_bias, MAX16_BIAS
	EW_WORKER ew_max_f32_bias, MAX32_BIAS
	EW_WORKER ew_cast_f32_f16_worker, TO16
	EW_WORKER ew_cast_f16_f32_worker, TO32
	EW_WORKER ew_gelu_f16_worker, EW_LINE_GELU16, EW_GELU16_SETUP
	EW_WORKER ew_gelu_f32_worker, EW_LINE_GELU32, EW_GELU32_SETUP
	EW_WORKER ew_gelu_f16h_worker, EW_LINE_GELU16H, EW_GELU16H_SETUP
	EW_WORKER ew_relu_f16_worker, RELU16
	EW_WORKER ew_relu_f32_worker, RELU32
	EW_WORKER ew_transpose_f16_worker, EW_LINE_T16, EW_T_SETUP
	EW_WORKER ew_transpose_f32_worker, EW_LINE_T32, EW_T_SETUP

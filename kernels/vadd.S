// vadd.S - the reduction's add (kernels/vadd.inc has the contract and
// the code): the entries in this object, on every chip.

	.include "vadd.inc"

	.section .text.vadd, "ax"

	.globl vadd_f16
	.type vadd_f16, @function
vadd_f16:
	VADD_SUPERVISOR vadd_f16_worker
	.size vadd_f16, . - vadd_f16

	.globl vadd_f32
	.type vadd_f32, @function
vadd_f32:
	VADD_SUPERVISOR vadd_f32_worker
	.size vadd_f32, . - vadd_f32

	.globl vadd_bias_f16
	.type vadd_bias_f16, @function
vadd_bias_f16:
	VADD_SUPERVISOR vadd_bias_f16_worker, BIAS_RANGE_WORDS
	.size vadd_bias_f16, . - vadd_bias_f16

	.globl vadd_bias_res_f16
	.type vadd_bias_res_f16, @function
vadd_bias_res_f16:
	VADD_SUPERVISOR vadd_bias_res_f16_worker, BIAS_RANGE_WORDS
	.size vadd_bias_res_f16, . - vadd_bias_res_f16

	VADD_WORKER vadd_f16_worker, f16v4add
	VADD_WORKER vadd_bias_f16_worker, f16v4add, 1
	VADD_WORKER vadd_bias_res_f16_worker, f16v4add, 1, 1
	VADD_WORKER vadd_f32_worker, f32v2add

// gemm5.S - the five-worker calls of the GEMM kernel for f16 and f32
// (GEMM5_SUPERVISOR in gemm.inc): the loops of gemm_f16 / gemm_f32 with
// five workers started by `run`, so that the supervisor keeps issue slot
// 5 while they compute (docs/kernel-gemm.md, "Five workers"). The workers
// are gemm.S's: link this object with it. A separate object, so that
// programs that do not call it carry none of its code.
//
// Calling convention: as gemm_f16 / gemm_f32 (the argument block holds
// five vertices); it clobbers $WORKER0..4_BASE.

	.include "gemm.inc"

	.section .text.gemm5, "ax"

	.globl gemm5_f32
	.type gemm5_f32, @function
gemm5_f32:
	setzi $m11, gemm_f32_worker_zero
	setzi $m12, gemm_f32_worker
	bri .Lgemm5_body
	.size gemm5_f32, . - gemm5_f32

	.globl gemm5_f16
	.type gemm5_f16, @function
gemm5_f16:
	setzi $m11, gemm_f16_worker_zero
	setzi $m12, gemm_f16_worker
.Lgemm5_body:
	GEMM5_SUPERVISOR
	.size gemm5_f16, . - gemm5_f16

// gemm5_f8.S - the five-worker call of the f8 GEMM kernel (ipu21 only;
// GEMM5_SUPERVISOR in gemm.inc): gemm_f8's loops with five workers started
// by `run`, the supervisor keeping issue slot 5 while they compute. The
// workers are gemm_f8.S's: link this object with it.

	.include "gemm.inc"

	.section .text.gemm5_f8, "ax"

	.globl gemm5_f8
	.type gemm5_f8, @function
gemm5_f8:
	setzi $m11, gemm_f8_worker_zero
	setzi $m12, gemm_f8_worker
	GEMM5_SUPERVISOR GEMM_F8_LOADS, GEMM_F8_PUTS
	.size gemm5_f8, . - gemm5_f8

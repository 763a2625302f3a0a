// amp_f8.S - the f8 (ipu21 only) variant of kernels/amp.S: the same
// stream with f8v8hihov4amp, 8 FP8 inputs per AMP, K = 32. The supervisor
// sets the workers' FP8 formats and scale ($FP_INFMT, $FP_ISCL: copied into
// $FP_NFMT, $FP_SCL at launch) and goes on in amp.S's amp_load_and_run.

	.include "amp_stream.inc"

	.section .text.amp_f8, "ax"

	.globl amp_f8_supervisor
	.type amp_f8_supervisor, @function
amp_f8_supervisor:
	ld32 $m1, $m0, $mzero, 2
	put $FP_INFMT, $m1
	ld32 $m1, $m0, $mzero, 3
	put $FP_ISCL, $m1
	setzi $m3, amp_f8_worker
	bri amp_load_and_run
	.size amp_f8_supervisor, . - amp_f8_supervisor

	.globl amp_f8_worker
	.type amp_f8_worker, @function
	.align 8
amp_f8_worker:
	HIHO_WORKER f8v8hihov4amp
	.size amp_f8_worker, . - amp_f8_worker


// gemm_f8.S - the f8 (ipu21 only) variant of kernels/gemm.S: the same
// supervisor loop and worker stream with f8v8hihov4amp, 8 FP8 inputs per
// AMP, 32 K per panel, C in f16. Before the loop the supervisor sets the
// workers' FP8 formats and scale ($FP_INFMT, $FP_ISCL: copied to $FP_NFMT,
// $FP_SCL at every worker start) from the argument block. Clobbers what
// gemm_f16 does plus $FP_INFMT and $FP_ISCL.

	.include "gemm.inc"

	.section .text.gemm_f8, "ax"

	.globl gemm_f8
	.type gemm_f8, @function

gemm_f8:
	setzi $m11, gemm_f8_worker_zero
	setzi $m12, gemm_f8_worker
	GEMM_SUPERVISOR GEMM_F8_LOADS, GEMM_F8_PUTS
	.size gemm_f8, . - gemm_f8

	GEMM_HIHO_WORKER gemm_f8_worker, f8v8hihov4amp, $a2:3
	GEMM_HIHO_WORKER gemm_f8_worker_zero, f8v8hihov4amp, $azeros

// The primed call (GEMM_SUPERVISOR_PRIMED).
	GEMM_PRIMED_CALL gemm_f8_primed, gemm_f8_pworker, gemm_f8_pworker_zero, gemm_f8_pworker_stream, gemm_f8_pworker_drain, GEMM_F8_LOADS, GEMM_F8_PUTS

	GEMM_PRIMED_WORKER gemm_f8_pworker, gemm_f8_pworker_stream, gemm_f8_pworker_drain, f8v8hihov4amp, $a2:3
	GEMM_PRIMED_ZERO gemm_f8_pworker_zero, f8v8hihov4amp

	GEMM_PRIMED_CALL gemm_f8_chained, gemm_f8_cworker, gemm_f8_cworker_zero, gemm_f8_cworker_stream, gemm_f8_cworker_drain, GEMM_F8_LOADS, GEMM_F8_PUTS

	GEMM_CHAINED_WORKER gemm_f8_cworker, gemm_f8_cworker_stream, gemm_f8_cworker_drain, f8v8hihov4amp, $a2:3
	GEMM_CHAINED_ZERO gemm_f8_cworker_zero, f8v8hihov4amp

// The chained call across N-panels (GEMM_NCHAINED_CALL).
	GEMM_NCHAINED_CALL gemm_f8_nchained, gemm_f8_nworker, gemm_f8_nworker_zero, gemm_f8_nworker_stream, gemm_f8_nworker_drain, gemm_f8_nworker_cross, gemm_f8_nworker_cross_zero, gemm_f8_nworker_crossed, gemm_f8_nworker_crossed_zero, GEMM_F8_LOADS, GEMM_F8_PUTS

	GEMM_CHAINED_WORKER gemm_f8_nworker, gemm_f8_nworker_stream, gemm_f8_nworker_drain, f8v8hihov4amp, $a2:3, 1
	GEMM_CHAINED_ZERO gemm_f8_nworker_zero, f8v8hihov4amp, 1

	GEMM_NCHAINED_WORKER gemm_f8_nworker_cross, gemm_f8_nworker_crossed, f8v8hihov4amp, $a2:3
	GEMM_NCHAINED_WORKER gemm_f8_nworker_cross_zero, gemm_f8_nworker_crossed_zero, f8v8hihov4amp, $azeros

// An overlapped call's five-worker panel that starts cold and drains, on the
// chained vertex (docs/kernel-gemm.md, "Five workers, chained").
	GEMM_CHAINED_COLD_DRAIN gemm_f8_cworker_cd, f8v8hihov4amp, $a2:3
	GEMM_CHAINED_COLD_DRAIN gemm_f8_cworker_cd_zero, f8v8hihov4amp, $azeros

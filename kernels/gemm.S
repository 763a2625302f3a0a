// gemm.S - the per-tile GEMM kernel for f16 and f32 (the f8 variant is
// kernels/gemm_f8.S, ipu21 only, so the GC200 links this file alone):
//
//     C[bm x bn] (+)= A[bm x bk] x B[bk x bn]
//
// looping over 16-column N-panels and K-panels (16 K for f16, 8 for f32)
// in the supervisor: for each panel it loads the weights into $CWEI (32
// ld128putcs) and runs six workers over the rows, each streaming its rows
// through one AMP per bundle, with C read and written in place.
//
//   entry         AMP            K/panel  A row  C row
//   gemm_f16      f16v4hihov4amp   16     32 B   16 x f16 = 32 B
//   gemm_f32      f32sisov2amp      8     32 B   16 x f32 = 64 B
//
// Calling convention: `call $m10, gemm_f16` with $m0 -> argument block
// (gemm.inc, docs/kernel-gemm.md), between syncs, workers idle. Returns
// with `br $m10`. Clobbers $m0-$m9, $m11-$m14, $CCCSLOAD, $WORKER0..5_BASE,
// all $CWEI and the workers' registers and AMP state; no exchange, only
// LOCAL syncs.

	.include "gemm.inc"

	.section .text.gemm, "ax"

// One supervisor for both: gemm_f32 sets its entries and joins gemm_f16's
// code (one taken branch, 6 cycles a call, for about 800 bytes of code).
	.globl gemm_f32
	.type gemm_f32, @function
gemm_f32:
	setzi $m11, gemm_f32_worker_zero
	setzi $m12, gemm_f32_worker
	bri .Lgemm_body
	.size gemm_f32, . - gemm_f32

	.globl gemm_f16
	.type gemm_f16, @function
gemm_f16:
	setzi $m11, gemm_f16_worker_zero
	setzi $m12, gemm_f16_worker
.Lgemm_body:
	GEMM_SUPERVISOR
	.size gemm_f16, . - gemm_f16

	GEMM_HIHO_WORKER gemm_f16_worker, f16v4hihov4amp, $a2:3
	GEMM_HIHO_WORKER gemm_f16_worker_zero, f16v4hihov4amp, $azeros

// The primed call (GEMM_SUPERVISOR_PRIMED; docs/kernel-gemm.md "Keeping
// the AMP primed"): the AMP stays primed from one K-panel to the next.
	GEMM_PRIMED_CALL gemm_f16_primed, gemm_f16_pworker, gemm_f16_pworker_zero, gemm_f16_pworker_stream, gemm_f16_pworker_drain

	GEMM_PRIMED_WORKER gemm_f16_pworker, gemm_f16_pworker_stream, gemm_f16_pworker_drain, f16v4hihov4amp, $a2:3
	GEMM_PRIMED_ZERO gemm_f16_pworker_zero, f16v4hihov4amp

	GEMM_PRIMED_CALL gemm_f16_chained, gemm_f16_cworker, gemm_f16_cworker_zero, gemm_f16_cworker_stream, gemm_f16_cworker_drain

	GEMM_CHAINED_WORKER gemm_f16_cworker, gemm_f16_cworker_stream, gemm_f16_cworker_drain, f16v4hihov4amp, $a2:3
	GEMM_CHAINED_ZERO gemm_f16_cworker_zero, f16v4hihov4amp

// f32: 8 phases, one f32 input per AMP. Bundle k (k >= 7) loads the input
// atom holding element k - 7 of the row stream and moves on after the odd
// element (even k), so even phases read $a0 and odd phases $a1. Bundles
// -1..17 only load, the loop covers bundles 18 .. 8n + 9.
.macro GEMM_F32_WORKER name, part
	WORKER_ENTRY \name
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; fnop }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P0 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P1 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P2 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P3 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P4 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P5 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P6 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P7 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0000 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P0 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P1 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0000 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P2 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P3 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0000 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P4 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P5 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0000 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P6 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P7 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0000 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P0 }
	{ ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0b0011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P1 }
	// bundles 18 .. 8n + 9: rows - 1 passes
	{ rpt $m3, 7 ; fnop }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P2 }
	{ ld2xst64pace $a0:3, $a6:7, $m4:5+=, $mzero, 0b000011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P3 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P4 }
	{ ld2xst64pace $a0:3, $a6:7, $m4:5+=, $mzero, 0b000011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P5 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P6 }
	{ ld2xst64pace $a0:3, $a6:7, $m4:5+=, $mzero, 0b000011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P7 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P0 }
	{ ld2xst64pace $a0:3, $a6:7, $m4:5+=, $mzero, 0b000011 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P1 }
	// the rest of the drain group, then the last two stores
	{ st64pace $a4:5, $m4:5+=, $mzero, 0 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P2 }
	{ st64pace $a6:7, $m4:5+=, $mzero, 0 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P3 }
	{ st64pace $a4:5, $m4:5+=, $mzero, 0 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P4 }
	{ st64pace $a6:7, $m4:5+=, $mzero, 0 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P5 }
	{ st64pace $a4:5, $m4:5+=, $mzero, 0 ; f32sisov2amp $a4:5, $a0, \part, TAMP_F32_E4_P6 }
	{ st64pace $a6:7, $m4:5+=, $mzero, 0 ; f32sisov2amp $a6:7, $a1, \part, TAMP_F32_E4_P7 }
	{ st64pace $a4:5, $m4:5+=, $mzero, 0 ; fnop }
	{ st64pace $a6:7, $m4:5+=, $mzero, 0 ; fnop }
	exitz $mzero
	.size \name, . - \name
.endm

	GEMM_F32_WORKER gemm_f32_worker, $a2:3
	GEMM_F32_WORKER gemm_f32_worker_zero, $azeros

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

// vadd_norm_f16: vadd_f16, then each of the slice's rows divided by its
// value at column `ncols` (PV's sum of the row's unnormalised softmax,
// in V's column of ones): out[r][c] = sum[r][c] * f16(1 / f32(sum[r][ncols]))
// for c < ncols, rounded to f16 once. A second runall after the sum's
// sync (a row's panels are other workers' atoms): worker w takes rows
// [w R / 6, (w + 1) R / 6) of the R rows. The block is vadd_f16's and
//   184 u32 the ones column's byte offset from a row's first atom
//   188 u32 P, its full panels (ncols / 16); 192 u32 A, the atoms of the
//       partial panel ((ncols % 16) / 4)
//   196 u32 atoms from a panel row's last atom to the next panel's row
//   200 6 x {u32 first row (panel 0's atom 0), u32 rows}
// Clobbers $m1, $m2, $WORKER0..5_BASE (the supervisor). vadd_norm_cycles
// in src/kernels/vadd.c is the exact count.
	.equ ARG_NORM_S, 46
	.equ ARG_NORM_P, 47
	.equ ARG_NORM_A, 48
	.equ ARG_NORM_J, 49
	.equ ARG_NORM_RANGES, 200

	.globl vadd_norm_f16
	.type vadd_norm_f16, @function
vadd_norm_f16:
	VADD_RUNALL vadd_f16_worker
	setzi $m1, vadd_norm_worker
	add $m2, $m0, ARG_NORM_RANGES
	sync TEXCH_SYNCZONE_LOCAL
	runall $m1, $m2, 2
	sync TEXCH_SYNCZONE_LOCAL
	br $lr
	.size vadd_norm_f16, . - vadd_norm_f16

	VADD_WORKER vadd_f16_worker, f16v4add
	VADD_WORKER vadd_bias_f16_worker, f16v4add, 1
	VADD_WORKER vadd_bias_res_f16_worker, f16v4add, 1, 1
	VADD_WORKER vadd_f32_worker, f32v2add

// A row: its ones-column value widened, its reciprocal (f32oox) rounded
// to f16 in $a2:3; a full panel's four atoms in 8 bundles (loads at $m8,
// stores at $m7, both jumping $m4 atoms to the next panel's row after
// the fourth), then the partial panel's A atoms in 3 bundles each.
	.align 8
vadd_norm_worker:
	{ ld32 $m1, $mvertex_base, $mzero, 1 ; fnop }
	{ brz $m1, 9f ; fnop }
	{ ld32 $m2, $mvertex_base, $mzero, 0 ; fnop }
	{ ld32 $m3, $mworker_base, $mzero, ARG_NORM_S ; fnop }
	{ ld32 $m4, $mworker_base, $mzero, ARG_NORM_J ; fnop }
	{ ld32 $m5, $mworker_base, $mzero, ARG_NORM_P ; fnop }
	{ ld32 $m6, $mworker_base, $mzero, ARG_NORM_A ; fnop }
	{ add $m1, $m1, -1 ; fnop }
1:	{ ld64 $a0:1, $m2, $m3, 0 ; fnop }
	{ mov $m7, $m2 ; f16tof32 $a0, $a0 }
	{ mov $m8, $m2 ; f32oox $a0, $a0 }
	{ nop ; f32tof16 $a2, $a0 }
	{ rpt $m5, 7 ; f32tof16 $a3, $a0 }
	{ ld64step $a4:5, $mzero, $m8+=, 1 ; fnop }
	{ ld64step $a6:7, $mzero, $m8+=, 1 ; f16v4mul $a4:5, $a2:3, $a4:5 }
	{ st64step $a4:5, $mzero, $m7+=, 1 ; f16v4mul $a6:7, $a2:3, $a6:7 }
	{ ld64step $a4:5, $mzero, $m8+=, 1 ; fnop }
	{ st64step $a6:7, $mzero, $m7+=, 1 ; f16v4mul $a4:5, $a2:3, $a4:5 }
	{ ld64step $a6:7, $mzero, $m8+=, $m4 ; fnop }
	{ st64step $a4:5, $mzero, $m7+=, 1 ; f16v4mul $a6:7, $a2:3, $a6:7 }
	{ st64step $a6:7, $mzero, $m7+=, $m4 ; fnop }
	{ rpt $m6, 2 ; fnop }
	{ ld64step $a4:5, $mzero, $m8+=, 1 ; fnop }
	{ nop ; f16v4mul $a4:5, $a2:3, $a4:5 }
	{ st64step $a4:5, $mzero, $m7+=, 1 ; fnop }
	{ add $m2, $m2, 32 ; fnop }
	{ brnzdec $m1, 1b ; fnop }
9:	exitz $mzero
	.size vadd_norm_worker, . - vadd_norm_worker

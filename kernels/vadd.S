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

// vadd_norm_f16: vadd_f16's sum, each of the slice's rows times its
// reciprocal r = f16(1 / f32(sum[ncols])), the row's sum at column
// `ncols` (PV's sum of the row's unnormalised softmax, in V's column of
// ones): out[r][c] = f16(sum[r][c] * r) for every column of the row's
// panels (those from ncols on are padding: the ones column becomes
// about 1). Two runalls: first the reciprocals, worker w taking rows
// [w R / 6, (w + 1) R / 6) of the R rows, each the ones column's sum
// source by source (vadd_f16's order and roundings) and its f32oox,
// stored as four halves at src + nsrc * stride + 8 row (after the
// sources, in the partials' buffer); then, after their sync, the
// summing workers (vadd.inc, VADD_WORKER's norm: whole rows a worker,
// three sources a pass while four are left, then one a pass, the last
// times the row's reciprocal, VADD_LASTN; the reciprocals' cursor the
// range's seventh word, word 8 (ARG_BSEG) -8 R: back from past a
// segment's last row to its first). The block is vadd_bias_f16's and
//   208 u32 stride / 8; 212 u32 nsrc - 1; 216 u32 32 - nsrc * stride
//       (a source cursor from past a row's last source to the next
//       row's first)
//   224 6 x {u32 dst's ones atom of the first row, u32 source 0's,
//       u32 its reciprocal's address, u32 rows}
// Clobbers $m1, $m2, $WORKER0..5_BASE (the supervisor). vadd_norm_cycles
// in src/kernels/vadd.c is the exact count.
	.equ ARG_RCP_STRIDE, 52
	.equ ARG_RCP_NSRC, 53
	.equ ARG_RCP_JUMP, 54

	.globl vadd_norm_f16
	.type vadd_norm_f16, @function
vadd_norm_f16:
	VADD_NORM_SUPERVISOR vadd_norm_f16_worker
	.size vadd_norm_f16, . - vadd_norm_f16

	VADD_WORKER vadd_f16_worker, f16v4add
	VADD_WORKER vadd_bias_f16_worker, f16v4add, 1
	VADD_WORKER vadd_bias_res_f16_worker, f16v4add, 1, 1
	VADD_WORKER vadd_f32_worker, f32v2add

	VADD_WORKER vadd_norm_f16_worker, f16v4add, 0, 0, 0, 1

// A row's reciprocal: dst's ones atom and the sources' added in order
// (the source cursor $m3 a stride on each, then on to the next row),
// the sum's first half widened ($a4), its reciprocal (f32oox) rounded
// to f16 in both halves of $a6 and $a7, stored at $m4. Two rows a loop
// turn: the next row's loads beside this one's f32oox and first
// rounding, its store beside the next one's widening ($m1 the rows
// after the first less one: negative for one row).
// (global: kernels/vadd_norm_f8.S runs it too)
	.globl vadd_norm_rcp_worker
	.align 8
vadd_norm_rcp_worker:
	{ ld32 $m1, $mvertex_base, $mzero, 3 ; fnop }
	{ brz $m1, 9f ; fnop }
	{ ld32 $m2, $mvertex_base, $mzero, 0 ; fnop }
	{ ld32 $m3, $mvertex_base, $mzero, 1 ; fnop }
	{ ld32 $m4, $mvertex_base, $mzero, 2 ; fnop }
	{ ld32 $m5, $mworker_base, $mzero, ARG_RCP_STRIDE ; fnop }
	{ ld32 $m6, $mworker_base, $mzero, ARG_RCP_NSRC ; fnop }
	{ ld32 $m7, $mworker_base, $mzero, ARG_RCP_JUMP ; fnop }
	{ add $m1, $m1, -2 ; fnop }
	{ ld64step $a0:1, $mzero, $m2+=, 4 ; fnop }
	{ ld64step $a2:3, $mzero, $m3+=, $m5 ; fnop }
	{ rpt $m6, 0 ; fnop }
	{ ld64step $a2:3, $mzero, $m3+=, $m5 ; f16v4add $a0:1, $a0:1, $a2:3 }
	{ add $m3, $m3, $m7 ; f16v4add $a0:1, $a0:1, $a2:3 }
	{ brneg $m1, 2f ; f16tof32 $a4, $a0 }
1:	{ ld64step $a0:1, $mzero, $m2+=, 4 ; f32oox $a4, $a4 }
	{ ld64step $a2:3, $mzero, $m3+=, $m5 ; f32tof16 $a6, $a4 }
	{ rpt $m6, 0 ; f32tof16 $a7, $a4 }
	{ ld64step $a2:3, $mzero, $m3+=, $m5 ; f16v4add $a0:1, $a0:1, $a2:3 }
	{ add $m3, $m3, $m7 ; f16v4add $a0:1, $a0:1, $a2:3 }
	{ st64step $a6:7, $mzero, $m4+=, 1 ; f16tof32 $a4, $a0 }
	{ brnzdec $m1, 1b ; fnop }
2:	{ nop ; f32oox $a4, $a4 }
	{ nop ; f32tof16 $a6, $a4 }
	{ nop ; f32tof16 $a7, $a4 }
	{ st64step $a6:7, $mzero, $m4+=, 1 ; fnop }
9:	exitz $mzero
	.size vadd_norm_rcp_worker, . - vadd_norm_rcp_worker

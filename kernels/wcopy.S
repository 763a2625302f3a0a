// wcopy.S - a loop iteration's weights into place. The weights of a loop
// body (a graph's repeat) are stored on their tile once per iteration, in
// a bank of slots [iteration][slot bytes]; before each iteration this
// copies the next slot over the working region that the body's code reads
// (docs/compiler.md "Loops"). 8-byte atoms, each worker a range of them.
//
// Supervisor entry, `call $m10, wcopy` with $m0 -> argument block:
//   0   u32 src     the slot this call copies; advanced by the kernel, back
//                   to bank after the last slot
//   4   u32 bank    slot 0
//   8   u32 end     bank + iterations x slot
//   12  u32 slot    slot bytes, a multiple of 8
//   16  u32 dst     the working region, 8-aligned
//   24  6 x {u32 first byte, u32 atoms} one range per worker
// Clobbers $m1-$m6, $WORKER0..5_BASE; preserves $m0 and $m7-$m15.
// wcopy_cycles in src/kernels/wcopy.c is the exact count.

	.equ ARG_SRC, 0
	.equ ARG_BANK, 1
	.equ ARG_END, 2
	.equ ARG_SLOT, 3
	.equ ARG_DST, 4
	.equ ARG_RANGES, 24

	.section .text.wcopy, "ax"
	.globl wcopy
	.type wcopy, @function
wcopy:
	// the next call's slot is worked out between the CSR writes (each
	// holds the next issue back), stored once the workers have read src
	ld32 $m3, $m0, $mzero, ARG_SRC
	ld32 $m4, $m0, $mzero, ARG_SLOT
	ld32 $m5, $m0, $mzero, ARG_END
	ld32 $m6, $m0, $mzero, ARG_BANK
	setzi $m1, wcopy_worker
	add $m2, $m0, ARG_RANGES
	put $WORKER0_BASE, $m0
	add $m3, $m3, $m4
	put $WORKER1_BASE, $m0
	cmpult $m4, $m3, $m5
	put $WORKER2_BASE, $m0
	movz $m3, $m6, $m4              // past the last slot: back to the bank
	put $WORKER3_BASE, $m0
	put $WORKER4_BASE, $m0
	put $WORKER5_BASE, $m0
	runall $m1, $m2, 2
	sync TEXCH_SYNCZONE_LOCAL
	st32 $m3, $m0, $mzero, ARG_SRC
	br $lr
	.size wcopy, . - wcopy

// $mvertex_base -> {first byte, atoms}; $mworker_base -> argument block.
// One atom an issue: the first atom is loaded ahead, then each ldst64pace
// stores the atom it holds while it loads the next (the store sends the
// register's value from before the bundle), and st64pace stores the last.
// Every instruction but exitz is a bundle, so the rpt body is 8-aligned.
// Global: kernels/wcopyg.S's entries run it too (linking wcopyg links
// this object, src/kernels/kernels.c).
	.align 8
	.globl wcopy_worker
	.type wcopy_worker, @function
wcopy_worker:
	{ ld32 $m0, $mvertex_base, $mzero, 1 ; fnop }
	{ brz $m0, 9f ; fnop }
	{ ld32 $m1, $mvertex_base, $mzero, 0 ; fnop }
	{ ld32 $m2, $mworker_base, $mzero, ARG_SRC ; fnop }
	{ ld32 $m3, $mworker_base, $mzero, ARG_DST ; fnop }
	{ add $m2, $m2, $m1 ; fnop }
	{ add $m3, $m3, $m1 ; fnop }
	{ ld64step $a0:1, $mzero, $m2+=, 1 ; fnop }
	{ add $m0, $m0, -1 ; fnop }
	{ tapack $m4:5, $m2, $mzero, $m3 ; fnop }
	{ rpt $m0, 0 ; fnop }
	{ ldst64pace $a0:1, $a0:1, $m4:5+=, $mzero, 0 ; fnop }
	{ st64pace $a0:1, $m4:5+=, $mzero, 0 ; fnop }
9:	exitz $mzero
	.size wcopy_worker, . - wcopy_worker

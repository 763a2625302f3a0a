// gather.S - rows of a table picked by indices known only at run time
// (an embedding lookup, the IR's gather): dst row n = table row
// clamp(ids[n] - base, 0, V - 1). Each tile holds a block of the table's
// columns for every row and all the ids (f32 integers), so the copy is
// local; rows of table and dst are `atoms` 8-byte atoms long. The id is
// clamped as f32 to base .. base + V - 1 and indexes the table's address
// less base rows, so that an id outside reads an end row (a row split:
// a table of rows base + 1 .. base + V - 2 between rows of zeros), never
// past the table, at the same cycles whatever the ids. Each worker copies
// a range of dst rows.
//
// Supervisor entry, `call $m10, gather` with $m0 -> argument block:
//   0   u32 table   row 0 of the table's block less base rows (mod 2^32)
//   4   u32 ids     ids[0] (f32)
//   8   u32 dst     dst row 0, 8-aligned
//   12  u32 atoms   8-byte atoms a row, >= 1
//   16  f32 lo      base
//   20  f32 hi      base + V - 1
//   24  6 x {u32 first row, u32 rows} one range per worker
// Clobbers $m1-$m2, $WORKER0..5_BASE; preserves $m0 and $m3-$m15.
// gather_cycles in src/kernels/gather.c is the exact count.

	.equ ARG_TABLE, 0
	.equ ARG_IDS, 1
	.equ ARG_DST, 2
	.equ ARG_ATOMS, 3
	.equ ARG_BOUNDS, 2	// 64-bit words
	.equ ARG_RANGES, 24

	.section .text.gather, "ax"
	.globl gather
	.type gather, @function
gather:
	setzi $m1, gather_worker
	add $m2, $m0, ARG_RANGES
	put $WORKER0_BASE, $m0
	put $WORKER1_BASE, $m0
	put $WORKER2_BASE, $m0
	put $WORKER3_BASE, $m0
	put $WORKER4_BASE, $m0
	put $WORKER5_BASE, $m0
	runall $m1, $m2, 2
	sync TEXCH_SYNCZONE_LOCAL
	br $lr
	.size gather, . - gather

// $mvertex_base -> {first row, rows}; $mworker_base -> argument block.
// A row: its id converted to an integer, the table row's address, then
// the atoms copied as in wcopy.S (the first loaded ahead, each ldst64pace
// storing one while loading the next, st64pace the last). Every
// instruction but exitz is a bundle, so the rpt body is 8-aligned.
	.align 8
	.type gather_worker, @function
gather_worker:
	{ ld32 $m0, $mvertex_base, $mzero, 1 ; fnop }
	{ brz $m0, 9f ; fnop }
	{ ld32 $m1, $mvertex_base, $mzero, 0 ; fnop }
	{ ld32 $m2, $mworker_base, $mzero, ARG_IDS ; fnop }
	{ ld32 $m3, $mworker_base, $mzero, ARG_DST ; fnop }
	{ ld32 $m4, $mworker_base, $mzero, ARG_ATOMS ; fnop }
	{ ld32 $m6, $mworker_base, $mzero, ARG_TABLE ; fnop }
	{ ld64 $a2:3, $mworker_base, $mzero, ARG_BOUNDS ; fnop }
	{ shl $m5, $m4, 3 ; fnop }              // row bytes
	{ mul $m7, $m1, $m5 ; fnop }
	{ add $m3, $m3, $m7 ; fnop }            // dst row `first`
	{ shl $m1, $m1, 2 ; fnop }
	{ add $m2, $m2, $m1 ; fnop }            // ids[first]
	{ add $m4, $m4, -1 ; fnop }             // the rpt's count
	{ add $m0, $m0, -1 ; fnop }             // brnzdec: rows - 1 .. 0
1:	{ ld32step $a0, $mzero, $m2+=, 1 ; fnop }
	{ nop ; f32clamp $a0, $a0, $a2:3 }
	{ nop ; f32toi32 $a0, $a0 }
	{ atom $m1, $a0 ; fnop }
	{ mul $m1, $m1, $m5 ; fnop }
	{ add $m1, $m1, $m6 ; fnop }            // table row id - base
	{ ld64step $a0:1, $mzero, $m1+=, 1 ; fnop }
	{ tapack $m8:9, $m1, $mzero, $m3 ; fnop }
	{ rpt $m4, 0 ; fnop }
	{ ldst64pace $a0:1, $a0:1, $m8:9+=, $mzero, 0 ; fnop }
	{ st64pace $a0:1, $m8:9+=, $mzero, 0 ; fnop }
	{ add $m3, $m3, $m5 ; fnop }
	{ brnzdec $m0, 1b ; fnop }
9:	exitz $mzero
	.size gather_worker, . - gather_worker

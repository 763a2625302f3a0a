// wcopyg.S - the copies of a loop over groups (docs/compiler.md "Loops"):
// iteration i runs layer i / G of group i % G, so the working region of
// the weights is filled from its bank's slot i / G (wcopy_every: the
// slot steps every G calls), and each group's carry lives in a bank of G
// slots, copied into the body's place before an iteration (kernels/
// wcopy.S) and back after it (wcopy_out: the slot steps every call).
// 8-byte atoms, each worker a range of them, wcopy.S's workers.
//
// Supervisor entry, `call $m10, wcopy_every` or `wcopy_out` with $m0 ->
// argument block:
//   0   u32 src     where the workers read
//   4   u32 bank    slot 0
//   8   u32 end     bank + slots x slot
//   12  u32 slot    slot bytes, a multiple of 8
//   16  u32 dst     where the workers write, 8-aligned
//   20  u32 left    calls before the slot steps (1 .. every)
//   24  6 x {u32 first byte, u32 atoms} one range per worker
//   72  u32 every   calls a slot
// wcopy_every steps src (a slot of the bank, dst the working region),
// wcopy_out steps dst (src the region): after the `every`-th call on a
// slot, to the next, back to the bank after the last. wcopy_every copies
// only in the first of a slot's `every` calls (`left` = `every`): the
// other calls would copy the same slot over itself, as nothing else
// writes the working region, so they step the count and return.
// Clobbers $m1-$m6, $WORKER0..5_BASE; preserves $m0 and $m7-$m15.
// wcopy_every_cycles and wcopy_out_cycles in src/kernels/wcopy.c are the
// exact counts. The workers are wcopy.S's (wcopy_worker: linking this
// object links that one, src/kernels/kernels.c).

	.equ ARG_SRC, 0
	.equ ARG_BANK, 1
	.equ ARG_END, 2
	.equ ARG_SLOT, 3
	.equ ARG_DST, 4
	.equ ARG_LEFT, 5
	.equ ARG_RANGES, 24
	.equ ARG_EVERY, 18

// \ptr: the word index of the pointer that steps. The step (the slot's
// bytes or 0) is worked out between the CSR writes, branch-free and with
// every register the next instructions read written whatever the data
// (a movz that leaves its register also leaves its pipeline delay, so
// only the pointer and count, stored after the workers, are movz's), and
// the pointer and count stored once the workers are done. \skip: $m2
// gets `left` as the call found it, and the workers run only if it is
// `every` (the branch reads $m2 a CSR write after the compare, so it
// waits for nothing).
.macro WCOPY_STEP ptr, skip
	ld32 $m3, $m0, $mzero, \ptr
	ld32 $m4, $m0, $mzero, ARG_LEFT
	ld32 $m5, $m0, $mzero, ARG_SLOT
	ld32 $m6, $m0, $mzero, ARG_END
.if \skip
	ld32 $m2, $m0, $mzero, ARG_LEFT
.endif
	put $WORKER0_BASE, $m0
	add $m4, $m4, -1
	put $WORKER1_BASE, $m0
	cmpeq $m1, $m4, 0
	put $WORKER2_BASE, $m0
	mul $m5, $m5, $m1               // the step: the slot's bytes or 0
	put $WORKER3_BASE, $m0
	add $m3, $m3, $m5
	put $WORKER4_BASE, $m0
	cmpult $m5, $m3, $m6
	ld32 $m6, $m0, $mzero, ARG_BANK
	movz $m3, $m6, $m5              // past the last slot: back to the bank
	ld32 $m6, $m0, $mzero, ARG_EVERY
	movz $m4, $m6, $m4              // the slot done: `every` calls again
.if \skip
	cmpeq $m2, $m2, $m6             // the slot's first call: copy it
.endif
	put $WORKER5_BASE, $m0
.if \skip
	brz $m2, 1f
.endif
	setzi $m1, wcopy_worker
	add $m2, $m0, ARG_RANGES
	runall $m1, $m2, 2
	sync TEXCH_SYNCZONE_LOCAL
1:	st32 $m3, $m0, $mzero, \ptr
	st32 $m4, $m0, $mzero, ARG_LEFT
	br $lr
.endm

	.section .text.wcopyg, "ax"
	.globl wcopy_every
	.type wcopy_every, @function
wcopy_every:
	WCOPY_STEP ARG_SRC, 1
	.size wcopy_every, . - wcopy_every

	.globl wcopy_out
	.type wcopy_out, @function
wcopy_out:
	WCOPY_STEP ARG_DST, 0
	.size wcopy_out, . - wcopy_out

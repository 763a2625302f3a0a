// amp_f16.S - one-tile AMP matrix product, f16 in, f16 out:
//
//     out[r][0..15] = partials[r][0..15] + sum_k in[r][k] * W[k][0..15],
//     k = 0..15, rows r split over the six workers.
//
// The supervisor loads W into the 64 $CWEI registers (32 ld128putcs), starts
// six workers on amp_f16_worker and waits for them. Each worker streams its
// rows through f16v4hihov4amp, one AMP per bundle, fed by ld2xst64pace: in
// each bundle the load brings the input and partial atoms for the next AMP
// and the store writes the result of the previous one (register writes land
// at the end of the bundle, so both see the values from before it).
//
// The AMP pipeline (docs/emulator-amp.md): in group g of four AMPs (phases
// 0..3) the engines multiply the input of row g-1, take in the partials of
// row g and give out the results of row g-2. A worker with n rows runs n + 2
// groups: warm-up, n rows, drain. The first nine stores carry no result and
// go to the worker's scratch atom.
//
// Supervisor entry: $m0 -> { u32 weights, u32 vertices }
//   weights:  64 x 8 bytes in $CWEI order, interleaved memory, 16-aligned
//   vertices: 6 x VERTEX_BYTES, one per worker:
//     { u32 in, u32 partials, u32 out, u32 rows, u32 scratch }
//   in: rows x 32 bytes; partials, out: rows x 32 bytes; all 8-aligned.
//   The streams read up to 96 bytes past the ends of `in` and `partials`
//   (the drain group), so those must not end at the top of memory.
//   In each bundle the three accesses must hit different memory elements.

	.equ VERTEX_BYTES, 20

	.section .text.amp_f16, "ax"
	.globl amp_f16_supervisor
	.type amp_f16_supervisor, @function
amp_f16_supervisor:
	ld32 $m1, $m0, $mzero, 0
	put $CCCSLOAD, $m1
	ld128putcs 0
	ld128putcs 2
	ld128putcs 4
	ld128putcs 6
	ld128putcs 8
	ld128putcs 10
	ld128putcs 12
	ld128putcs 14
	ld128putcs 16
	ld128putcs 18
	ld128putcs 20
	ld128putcs 22
	ld128putcs 24
	ld128putcs 26
	ld128putcs 28
	ld128putcs 30
	ld128putcs 32
	ld128putcs 34
	ld128putcs 36
	ld128putcs 38
	ld128putcs 40
	ld128putcs 42
	ld128putcs 44
	ld128putcs 46
	ld128putcs 48
	ld128putcs 50
	ld128putcs 52
	ld128putcs 54
	ld128putcs 56
	ld128putcs 58
	ld128putcs 60
	ld128putcs 62
	ld32 $m2, $m0, $mzero, 1
	setzi $m3, amp_f16_worker
	runall $m3, $m2, VERTEX_BYTES / 4
	sync TEXCH_SYNCZONE_LOCAL
	br $lr
	.size amp_f16_supervisor, . - amp_f16_supervisor

	.globl amp_f16_worker
	.type amp_f16_worker, @function
	.align 8
amp_f16_worker:
	ld32 $m0, $mvertex_base, $mzero, 0   // in
	ld32 $m1, $mvertex_base, $mzero, 1   // partials
	ld32 $m2, $mvertex_base, $mzero, 4   // scratch
	ld32 $m3, $mvertex_base, $mzero, 3   // rows
	brz $m3, 9f
	setzi $a0, ZAACC_BITMASK
	uput $FP_CLR, $a0
	tapack $m4:5, $m0, $m1, $m2
	.align 8
	// Prologue, bundles -1..8. Selectors (2 bits each, A2:A1:A0): 00 = next
	// atom, 11 = stay (the stride register is $mzero). Inputs stay until the
	// load for AMP 4 (row 0); partials advance from the start; the store
	// stays on the scratch atom.
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; fnop }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P0 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P1 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P2 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P3 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P0 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P1 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P2 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P3 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P0 }
	// Now the input stream has advanced 6 atoms and the partials 10; point
	// the store at the output.
	add $m0, $m0, 6 * 8
	add $m1, $m1, 10 * 8
	ld32 $m2, $mvertex_base, $mzero, 2   // out
	tapack $m4:5, $m0, $m1, $m2
	.align 8
	// Bundles 9 .. 4n + 8: n groups, every stream one atom per bundle; the
	// body starts at phase 1.
	{ rpt $m3, 3 ; fnop }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P1 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P2 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P3 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; f16v4hihov4amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P0 }
9:
	exitz $mzero
	.size amp_f16_worker, . - amp_f16_worker

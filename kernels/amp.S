// amp.S - one-tile AMP matrix products, the AMP engines streamed at one
// instruction per bundle:
//
//     out[r][0..15] = partials[r][0..15] + sum_k in[r][k] * W[k][0..15]
//
//   dtype  worker         AMP instruction   K   in row  partials/out row
//   f16    amp_f16_worker f16v4hihov4amp    16  32 B    16 x f16 = 32 B
//   f8     amp_f8_worker  f8v8hihov4amp     32  32 B    16 x f16 = 32 B
//   f32    amp_f32_worker f32sisov2amp       8  32 B    16 x f32 = 64 B
//
// The supervisor loads W into the 64 $CWEI registers (32 ld128putcs), starts
// six workers and waits for them; the workers split the rows. In every
// bundle ld2xst64pace loads the input and partial atoms for the next AMP and
// stores the result of the previous one: register writes land at the end of
// the bundle, so the store sees the result from before it and the AMP sees
// the loads from the bundle before.
//
// AMP pipeline (docs/emulator-amp.md): a group is one pass over the phases
// (4 for f16/f8, 8 for f32). In group g the engines multiply row g-1, take
// in the partials of row g and give out the results of row g-2, so a worker
// with n rows runs n + 2 groups: warm-up, n rows, drain. Stores before the
// first result go to the worker's scratch atom; then `tapack` points the
// store stream at the output.
//
// Pace selectors (2 bits per address, A2:A1:A0, stride register $mzero):
// 00 = next atom, 11 = stay.
//
// Supervisor entry, $m0 -> { u32 weights, u32 vertices, u32 fp8_format,
//                            u32 fp8_scale }   (the last two: f8 only)
//   weights:  64 x 8 bytes in $CWEI order, interleaved memory, 16-aligned
//   vertices: 6 x VERTEX_BYTES, one per worker:
//             { u32 in, u32 partials, u32 out, u32 rows, u32 scratch }
//   All buffers 8-aligned. The drain reads up to 160 bytes past the ends of
//   `in` and `partials`, so neither may end at the top of memory. The three
//   accesses of every bundle must hit different memory elements.

	.equ VERTEX_BYTES, 20

	.section .text.amp, "ax"

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

	.globl amp_f32_supervisor
	.type amp_f32_supervisor, @function
amp_f32_supervisor:
	setzi $m3, amp_f32_worker
	bri amp_load_and_run
	.size amp_f32_supervisor, . - amp_f32_supervisor

	.globl amp_f16_supervisor
	.type amp_f16_supervisor, @function
amp_f16_supervisor:
	setzi $m3, amp_f16_worker
// $m0: the supervisor state, $m3: the worker entry.
amp_load_and_run:
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
	runall $m3, $m2, VERTEX_BYTES / 4
	sync TEXCH_SYNCZONE_LOCAL
	br $lr
	.size amp_f16_supervisor, . - amp_f16_supervisor

// Worker prologue: read the vertex, clear the AMP state, pack the streams
// (input, partials, scratch) into $m4:5; $m3 = rows. No rows: exit.
.macro WORKER_START
	ld32 $m0, $mvertex_base, $mzero, 0
	ld32 $m1, $mvertex_base, $mzero, 1
	ld32 $m2, $mvertex_base, $mzero, 4
	ld32 $m3, $mvertex_base, $mzero, 3
	brz $m3, 9f
	setzi $a0, ZAACC_BITMASK
	uput $FP_CLR, $a0
	tapack $m4:5, $m0, $m1, $m2
	.align 8
.endm

// After the prologue: the input stream has advanced \in_atoms atoms and the
// partials \p_atoms; repack with the store stream at the output.
.macro WORKER_RESTREAM in_atoms, p_atoms
	add $m0, $m0, \in_atoms * 8
	add $m1, $m1, \p_atoms * 8
	ld32 $m2, $mvertex_base, $mzero, 2
	tapack $m4:5, $m0, $m1, $m2
	.align 8
.endm

// f16 and f8: four phases per group. Prologue = bundles -1..8 (inputs stay
// until the load for AMP 4, the first of row 0), main loop = bundles
// 9 .. 4n + 8 from phase 1.
.macro HIHO_WORKER amp
	WORKER_START
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; fnop }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P0 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P1 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P2 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P3 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P0 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P1 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P2 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P3 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P0 }
	WORKER_RESTREAM 6, 10
	{ rpt $m3, 3 ; fnop }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P1 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P2 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P3 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0 ; \amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P0 }
9:
	exitz $mzero
.endm

	.globl amp_f16_worker
	.type amp_f16_worker, @function
	.align 8
amp_f16_worker:
	HIHO_WORKER f16v4hihov4amp
	.size amp_f16_worker, . - amp_f16_worker

	.globl amp_f8_worker
	.type amp_f8_worker, @function
	.align 8
amp_f8_worker:
	HIHO_WORKER f8v8hihov4amp
	.size amp_f8_worker, . - amp_f8_worker

// f32: eight phases per group, one f32 input per AMP. Bundle k loads the
// input pair holding element k + 1 of the stream; the input pointer moves on
// after the load for an odd element (even k), so even phases read $a0 and
// odd phases $a1. Prologue = bundles -1..16 (inputs stay until the load for
// AMP 8, the first of row 0), main loop = bundles 17 .. 8n + 16 from phase 1.
	.globl amp_f32_worker
	.type amp_f32_worker, @function
	.align 8
amp_f32_worker:
	WORKER_START
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; fnop }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P0 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P1 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P2 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P3 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P4 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P5 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P6 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P7 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P0 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P1 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P2 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P3 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P4 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P5 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P6 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P7 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b110000 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P0 }
	WORKER_RESTREAM 5, 18
	{ rpt $m3, 7 ; fnop }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b000011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P1 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b000000 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P2 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b000011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P3 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b000000 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P4 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b000011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P5 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b000000 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P6 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b000011 ; f32sisov2amp $a4:5, $a1, $a2:3, TAMP_F32_E4_P7 }
	{ ld2xst64pace $a0:3, $a4:5, $m4:5+=, $mzero, 0b000000 ; f32sisov2amp $a4:5, $a0, $a2:3, TAMP_F32_E4_P0 }
9:
	exitz $mzero
	.size amp_f32_worker, . - amp_f32_worker

// amp.S - one-tile AMP matrix products, the AMP engines streamed at one
// instruction per bundle:
//
//     out[r][0..15] = partials[r][0..15] + sum_k in[r][k] * W[k][0..15]
//
//   dtype  worker         AMP instruction   K   in row  partials/out row
//   f16    amp_f16_worker f16v4hihov4amp    16  32 B    16 x f16 = 32 B
//   f8     amp_f8_worker  f8v8hihov4amp     32  32 B    16 x f16 = 32 B
//   (the f8 kernel is kernels/amp_f8.S: ipu21 only, so the GC200 can link
//   this file without it)
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

	.include "amp_stream.inc"

	.section .text.amp, "ax"

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
// $m0: the supervisor state, $m3: the worker entry. Also used by
// kernels/amp_f8.S.
	.globl amp_load_and_run
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

	.globl amp_f16_worker
	.type amp_f16_worker, @function
	.align 8
amp_f16_worker:
	HIHO_WORKER f16v4hihov4amp
	.size amp_f16_worker, . - amp_f16_worker

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

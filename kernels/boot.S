// boot.S - our own tile bootloader (docs/hardware.md, "Our bootloader").
// The autoloader writes it at the base of tile memory of every tile and
// starts the supervisor there. It then receives the tile's program in
// frames over the host link, one frame per host sync, and starts it when
// the host hands off. No piece of the SDK is involved.
//
// A frame lands in boot_frame (CARD_FRAME_SIZE bytes at CARD_BOOT_RECV
// from the start of this image):
//   0   u32 index    0, 1, 2, ... per tile; BOOT_NONE: nothing for this
//                    tile at this sync; BOOT_GO: start the program
//   4   u32 tile     the physical tile it is for (the card routes it)
//   8   u32 flags    CARD_FRAME_LAST on the last, payload bytes in 15..0
//   12  u32 addr     where the payload goes; on the last, the entry
//   16  payload      a multiple of 4 bytes
// The bootloader writes BOOT_NONE over the index before each sync, so a
// sync that brings nothing is told apart from one that brings a frame. A
// frame it cannot take stops the tile with an exception, which the host
// reads through the tile debug interface and names by the pc's label
// (hw_boot_stop): out of order, one lost or an index that is no mark of
// ours (boot_lost), a GO before the last frame (boot_early), flags other
// than the last-frame mark and the length (boot_bad_flags), a length not
// a multiple of 4 or over a frame's payload (boot_bad_len), a payload
// over this bootloader (boot_bad_addr); one misaligned or outside tile
// memory faults at its store (boot_store). Frames after the last are
// waited out until GO. The numbers are src/target/card.def's BOOT_* rows.

	.equ BOOT_NONE, 0xffffffff
	.equ BOOT_GO, 0xfffffffe
	.equ FRAME_LAST_SHIFT, 24
	.equ FRAME_LAST_HIGH, 0x800     // CARD_FRAME_LAST >> 16
	.equ FRAME_PAYLOAD, 992         // CARD_FRAME_PAYLOAD

	.section .text.boot, "ax"
	.globl boot
	.type boot, @function
boot:
	bri 0f
	.align 8                        // boot_frame at CARD_BOOT_RECV
boot_frame:
	.space 1024
0:	setzi $m5, boot_frame
	setzi $m1, 0                    // the next frame's index
	setzi $m8, 0                    // the last frame has come
	setzi $m9, 0                    // the program's entry
	add $m7, $mzero, -1             // BOOT_NONE
1:	st32 $m7, $m5, $mzero, 0
	sync TEXCH_SYNCZONE_GS1H        // the host's frame lands
	ld32 $m2, $m5, $mzero, 0
	cmpeq $m3, $m2, $m7
	brnz $m3, 1b                    // nothing for this tile
	add $m3, $m7, -1                // BOOT_GO
	cmpeq $m3, $m2, $m3
	brnz $m3, 5f
	brnz $m8, 1b                    // after the last: wait for GO
	cmpne $m3, $m2, $m1
	brnz $m3, boot_lost
	ld32 $m2, $m5, $mzero, 2
	ld32 $m4, $m5, $mzero, 3
	add $m1, $m1, 1
	shr $m3, $m2, 16                // the flags' high half
	brz $m3, 2f
	setzi $m6, FRAME_LAST_HIGH
	cmpne $m6, $m3, $m6
	brnz $m6, boot_bad_flags
	setzi $m8, 1
	mov $m9, $m4
	setzi $m3, boot_end
	cmpeq $m3, $m9, $m3
	brz $m3, 1b
	setzi $m9, boot_fall            // the program starts where we end
	bri 1b
2:	shl $m2, $m2, 16                // payload bytes
	shr $m2, $m2, 16
	and $m3, $m2, 3
	brnz $m3, boot_bad_len
	cmpult $m3, $m2, FRAME_PAYLOAD + 1
	brz $m3, boot_bad_len
	brz $m2, 1b
	add $m6, $m4, $m2               // over [boot, boot_end)?
	setzi $m3, boot
	cmpult $m3, $m3, $m6
	setzi $m0, boot_end
	cmpult $m0, $m4, $m0
	and $m3, $m3, $m0
	brnz $m3, boot_bad_addr
	shr $m2, $m2, 2                 // -> words
	add $m2, $m2, -1
	add $m3, $m5, 16
3:	ld32step $m0, $mzero, $m3+=, 1
	.globl boot_store
boot_store:
	st32step $m0, $mzero, $m4+=, 1
	brnzdec $m2, 3b
	bri 1b
5:	brz $m8, 9f
	// the program starts as on a fresh tile: its registers 0 (but
	// the one that holds its entry)
	setzi $m0, 0
	setzi $m1, 0
	setzi $m2, 0
	setzi $m3, 0
	setzi $m4, 0
	setzi $m5, 0
	setzi $m6, 0
	setzi $m7, 0
	setzi $m8, 0
	br $m9
	.globl boot_lost, boot_early, boot_bad_flags, boot_bad_len
	.globl boot_bad_addr
boot_lost:
	trap 1
boot_early:
9:	trap 3
boot_bad_flags:
	trap 4
boot_bad_len:
	trap 5
boot_bad_addr:
	trap 6

// The entry of a tile with no program: back to the host at once, as a
// tile the emulator never starts takes part in nothing.
	.globl boot_idle
boot_idle:
	br $lr

// A copy linked just below the program's entry (the last frame's address
// is boot_end) hands off by falling through: after GO it waits once more,
// and at that sync the host's data for this tile is the program's own
// bytes for the whole image (BOOT_RAW), written from $m5 = boot, so that
// the program may fill every byte below its entry; nothing of ours runs
// after it.
boot_fall:
	setzi $m0, 0
	setzi $m1, 0
	setzi $m2, 0
	setzi $m3, 0
	setzi $m4, 0
	setzi $m6, 0
	setzi $m7, 0
	setzi $m8, 0
	setzi $m9, 0
	setzi $m5, boot
	sync TEXCH_SYNCZONE_GS1H
	.globl boot_end
boot_end:
	.size boot, . - boot


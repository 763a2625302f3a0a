/*
 * codegen.h - from a placed and scheduled Lowered program to code: each
 * tile's supervisor program, encoded through the instruction table, and
 * the data it starts with (kernel argument blocks).
 *
 * A tile's program (docs/compiler.md, "Code"):
 *   prologue   save the return address
 *   exchange   sync 3; set $INCOMING_DCOUNT; then, cycle-exact, the
 *              receive controls (delaypic, delayxpic) and sends of the
 *              schedule, with delay filling the gaps; sync 0 (RECV) to
 *              wait for the last word before anything reads it
 *   compute    $m0 = the call's argument block; call the kernel (a step
 *              with GemmWindows: the overlapped phase, codegen's own
 *              five-worker GEMM panels with the step's exchange between
 *              them, then the rest calls; codegen.c, emit_overlap)
 *   loop       (Lowered.loop_count) before the loop's first step, the
 *              count into the save buffer's second word; after its last,
 *              the count less one, and a branch back while it is not 0
 *   epilogue   return to the host
 */
#ifndef IPU_CODEGEN_H
#define IPU_CODEGEN_H

#include <stdint.h>
#include <stdio.h>

#include "../lower/lower.h"
#include "../util/util.h"

typedef struct {
	uint32_t addr;
	uint32_t len;
	uint8_t *bytes;
	int32_t buf; /* the buffer it initialises (a call's argument block) */
} DataSeg;

typedef struct {
	uint32_t tile;
	uint32_t entry; /* = code address */
	uint32_t code_addr;
	uint32_t code_len;
	uint8_t *code;
	DataSeg *data;
	int ndata, capdata;
	uint32_t save_addr; /* the word holding the return address */
	/* where each step's code starts (nstep + 1 entries: the last is the
	 * epilogue); a loop's first step starts at the loop's head, after
	 * the code that sets its count */
	uint32_t *step_at;
} TileCode;

/* Where the kernels are and what their entry symbols are. */
typedef struct {
	uint32_t code_end; /* first byte after the linked kernels */
	/* address of a kernel entry symbol, or -1 */
	int64_t (*symbol)(void *ctx, const char *name);
	void *ctx;
} KernelSyms;

/* codegen.c: both need the program indexed by tile (lower_index). */
/* Bytes of tile t's program, before addresses are known (they do not
 * change instruction counts); step_at (NULL, or nstep + 1 entries) gets
 * TileCode.step_at's offsets from the program's start. */
uint32_t codegen_size(const Lowered *l, uint32_t tile, uint32_t *step_at);
/* Each program's bytes by step, for `ipu compile --dump=code`: per step
 * the chip's total and its largest share; per tile its program's length
 * and each step that has code there, with the transfers the tile sends
 * and receives in an exchange step (the code grows with them: a send and
 * three receive controls each). A loop's count and branch are counted
 * with the steps beside them; the entry and return as "rest". The program
 * must be indexed (lower_index). */
void codegen_print(const Lowered *l, FILE *f);
/* Emit tile t's program at code_addr. Buffers must be placed and
 * transfers scheduled. save_buf: an 8-byte buffer of the tile. */
int codegen_tile(const Lowered *l, const KernelSyms *ks, uint32_t tile,
                 uint32_t code_addr, int32_t save_buf, TileCode *out, Diag *d);
void codegen_free(TileCode *tc);
/* Tile tc's program against what placement assumed: it starts at
 * code_addr and ends at code_end (codegen_size's length), below exec_end,
 * within the code rules the planner sizes programs by (plan.h, CODE_*),
 * and each argument block fills its own buffer, above code_end. A failure
 * is an internal error. */
int codegen_verify(const Lowered *l, const TileCode *tc, uint32_t code_end,
                   Diag *d);

#endif

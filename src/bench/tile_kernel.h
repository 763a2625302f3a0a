/*
 * tile_kernel.h - kernel calls on one emulated tile, for tests and
 * benchmarks: the one driver that runs a kernel from the supervisor and
 * times it, and per kernel a call that checks its arguments, writes its
 * argument block and runs it. The kernels' host-side headers
 * (src/kernels/) hold only their ABI (layouts, argument blocks, cycle
 * formulas); everything here needs the emulator.
 */
#ifndef IPU_TILE_KERNEL_H
#define IPU_TILE_KERNEL_H

#include <stdint.h>

#include "../asm/asm.h"
#include "../kernels/elementwise.h"
#include "../kernels/gemm.h"
#include "../kernels/pack.h"
#include "../kernels/rowwise.h"
#include "../sim/sim.h"

/* One call: the entry's argument block (NULL: already in the tile, as a
 * kernel may have rewritten it) written at args_at, which $m0 points to. */
typedef struct {
	const char *entry;  /* symbol in the image */
	const char *object; /* its kernel object, kernels/OBJECT.S */
	const void *args;
	uint32_t args_bytes, args_at;
} TileKernelCall;

/* Write img's segments into t (a tile of img's chip). */
void tile_load_image(Tile *t, const TileImage *img);

/* Run the call on t, which holds img and the data, from the supervisor:
 * *cycles (if not NULL) gets its cycles from entry to return. IPU_EINVAL
 * if img has no such entry, IPU_ERANGE if the block is outside the tile,
 * IPU_EFAULT (with the fault) if the kernel faults or does not finish. */
int tile_kernel_call(Tile *t, const TileImage *img, const TileKernelCall *c,
                     uint64_t *cycles, Diag *d);

/* ew_check, then the elementwise call c with its block at args (8-aligned,
 * EW_ARGS_BYTES free); t holds the image of ew_object(). */
int ew_tile_call(Tile *t, const TileImage *img, const EwCall *c, uint32_t args,
                 uint64_t *cycles, Diag *d);
/* pack_check, then the pack call c (block at args, PACK_ARGS_BYTES). */
int pack_tile_call(Tile *t, const TileImage *img, const PackCall *c,
                   uint32_t args, uint64_t *cycles, Diag *d);
/* pack_cast_check, then the call c (block at args,
 * PACK_CAST_ARGS_BYTES). */
int pack_cast_tile_call(Tile *t, const TileImage *img, const PackCastCall *c,
                        uint32_t args, uint64_t *cycles, Diag *d);
/* rw_check, then the row-wise call c (block at args, RW_ARGS_BYTES). */
int rw_tile_call(Tile *t, const TileImage *img, const RwCall *c, uint32_t args,
                 uint64_t *cycles, Diag *d);

/* The GEMM kernel on a new tile: a[bm][bk], b[bk][bn] and c[bm][bn]
 * row-major; c is read (unless opt->zero) and written. *cycles gets the
 * cycles of the last call. IPU_ERANGE if the data does not fit the tile,
 * IPU_EINVAL for bad shapes or f8 on a chip without it, IPU_EFAULT if the
 * kernel faults. */
int gemm_tile_run(const Chip *chip, GemmDtype t, uint32_t bm, uint32_t bn,
                  uint32_t bk, const void *a, const void *b, void *c,
                  const GemmOptions *opt, uint64_t *cycles, Diag *d);

#endif

/*
 * tile_kernel.c - kernel calls on one emulated tile (see tile_kernel.h).
 */
#include "tile_kernel.h"

#include <stdlib.h>
#include <string.h>

#include "../kernels/kernels.h"

/* A kernel call's time limit: far beyond any call the tests make. */
enum { CALL_MAX_CYCLES = 4000000000u };

void
tile_load_image(Tile *t, const TileImage *img)
{
	for (int i = 0; i < img->nseg; i++)
		tile_write(t, img->seg[i].addr, img->seg[i].bytes,
		           img->seg[i].size);
}

int
tile_kernel_call(Tile *t, const TileImage *img, const TileKernelCall *c,
                 uint64_t *cycles, Diag *d)
{
	int64_t entry = img_symbol_addr(img, c->entry);
	if (entry < 0)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "%s: the image has no %s (link %s)", c->object,
		                c->entry, c->object);
	if (c->args && tile_write(t, c->args_at, c->args, c->args_bytes))
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "%s: argument block at 0x%x is outside the "
		                "tile",
		                c->object, c->args_at);
	uint64_t start = t->cycle;
	t->ctx[0].m[0] = c->args_at;
	tile_start(t, (uint32_t)entry);
	RunStatus st = tile_run(t, start + CALL_MAX_CYCLES);
	if (cycles)
		*cycles = t->cycle - start;
	if (st != RUN_DONE) {
		char buf[600] = "did not finish";
		if (st == RUN_FAULT)
			tile_format_fault(t, buf, sizeof buf);
		char file[64];
		snprintf(file, sizeof file, "kernels/%s.S", c->object);
		return diag_set(d, IPU_EFAULT, file, 0, 0, "%s: %s", c->entry,
		                buf);
	}
	return IPU_OK;
}

int
ew_tile_call(Tile *t, const TileImage *img, const EwCall *c, uint32_t args,
             uint64_t *cycles, Diag *d)
{
	int rc = ew_check(c, d);
	if (rc)
		return rc;
	uint8_t block[EW_ARGS_BYTES];
	ew_args_fill(c, block);
	TileKernelCall k = {ew_entry(c->op, c->in, c->out),
	                    ew_object(c->op, c->in, c->out), block,
	                    sizeof block, args};
	return tile_kernel_call(t, img, &k, cycles, d);
}

int
pack_tile_call(Tile *t, const TileImage *img, const PackCall *c, uint32_t args,
               uint64_t *cycles, Diag *d)
{
	int rc = pack_check(c, d);
	if (rc)
		return rc;
	uint8_t block[PACK_ARGS_BYTES];
	pack_args_fill(c, block);
	TileKernelCall k = {pack_entry(c->t, c->transposed),
	                    pack_object(c->t, c->transposed), block,
	                    sizeof block, args};
	return tile_kernel_call(t, img, &k, cycles, d);
}

int
pack_cast_tile_call(Tile *t, const TileImage *img, const PackCastCall *c,
                    uint32_t args, uint64_t *cycles, Diag *d)
{
	int rc = pack_cast_check(c, d);
	if (rc)
		return rc;
	uint8_t block[PACK_CAST_ARGS_BYTES];
	pack_cast_args_fill(c, block);
	TileKernelCall k = {pack_cast_entry(), pack_cast_object(), block,
	                    sizeof block, args};
	return tile_kernel_call(t, img, &k, cycles, d);
}

int
rw_tile_call(Tile *t, const TileImage *img, const RwCall *c, uint32_t args,
             uint64_t *cycles, Diag *d)
{
	int rc = rw_check(c, d);
	if (rc)
		return rc;
	uint8_t block[RW_ARGS_BYTES];
	rw_args_fill(c, block);
	TileKernelCall k = {rw_entry(c), rw_object(c), block, sizeof block,
	                    args};
	return tile_kernel_call(t, img, &k, cycles, d);
}

int
gemm_tile_run(const Chip *chip, GemmDtype t, uint32_t bm, uint32_t bn,
              uint32_t bk, const void *a, const void *b, void *c,
              const GemmOptions *opt, uint64_t *cycles, Diag *d)
{
	static const GemmOptions defaults = {0};
	if (!opt)
		opt = &defaults;
	if (bm == 0 || bn == 0 || bk == 0)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "gemm: empty shape %ux%ux%u", bm, bn, bk);
	if (t == GEMM_F8 && chip->arch != ARCH_IPU21)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "f8 needs an ipu21 chip (c600); %s is %s",
		                chip->name, chip->arch_name);
	const char *names[2];
	int nobj = gemm_objects(t, opt->workers, names);
	TileImage img;
	if (kernel_image(names, nobj, chip, &img, d))
		return IPU_EINVAL;
	/*
	 * Memory plan. Region 0: code, argument block, A. A may run on into
	 * the interleaved region; C (in place, needs interleaved memory for
	 * its load/store pairs) then starts at the next 32 KiB pair boundary,
	 * so that no bundle's input load meets C's element pair. B needs
	 * 16-byte alignment in the interleaved region, anywhere.
	 */
	uint32_t abytes = gemm_a_bytes(t, bm, bk);
	uint32_t bbytes = gemm_b_bytes(t, bk, bn);
	uint32_t cbytes = gemm_c_bytes(t, bm, bn);
	uint32_t pair = 2 * chip->elem_bytes;
	uint32_t code_end = chip->mem_base;
	for (int i = 0; i < img.nseg; i++)
		if (img.seg[i].addr + img.seg[i].size > code_end)
			code_end = img.seg[i].addr + img.seg[i].size;
	uint32_t args = align_up(code_end, 16);
	uint32_t aa = align_up(args + GEMM_ARGS_BYTES, 32);
	uint32_t a_end = aa + abytes + GEMM_A_TAIL;
	uint32_t bb =
	    align_up(a_end > chip->interleave ? a_end : chip->interleave, 16);
	uint32_t c_from =
	    a_end > chip->interleave ? align_up(a_end, pair) : chip->interleave;
	uint32_t cc = align_up(bb + bbytes > c_from ? bb + bbytes : c_from, 16);
	uint64_t need = (uint64_t)cc + cbytes + gemm_c_tail(t);
	if ((uint64_t)a_end + bbytes + cbytes > chip->mem_end ||
	    need > chip->mem_end) {
		img_free(&img);
		return diag_set(d, IPU_ERANGE, NULL, 0, 0,
		                "gemm %s %ux%ux%u does not fit one tile: "
		                "A %u, B %u, C %u bytes",
		                gemm_dtype_name(t), bm, bn, bk, abytes, bbytes,
		                cbytes);
	}

	uint8_t argb[GEMM_ARGS_BYTES];
	GemmCall call = {t, bm, bn, bk, aa, bb, cc, *opt};
	gemm_args_fill(&call, argb);
	uint8_t *pa = xmalloc(abytes), *pb = xmalloc(bbytes),
	        *pc = xmalloc(cbytes);
	gemm_pack_a(t, bm, bk, a, pa);
	gemm_pack_b(t, bk, bn, b, pb);
	gemm_pack_c(gemm_c_elem_bytes(t), bm, bn, c, pc);

	/* Every byte from the argument block to the end of memory but C is
	 * the kernel's to read only: they start as a canary pattern (or the
	 * operands) and must end as they began, so a store outside C (into
	 * what a program keeps there) is caught, and reads past A or C meet
	 * nonzero values. */
	uint32_t span = chip->mem_end - args;
	uint8_t *want = xmalloc(span);
	for (uint32_t i = 0; i < span; i++)
		want[i] = (uint8_t)(0x5a ^ (i * 131u) ^ (i >> 9));
	memcpy(want, argb, sizeof argb);
	memcpy(want + (aa - args), pa, abytes);
	memcpy(want + (bb - args), pb, bbytes);
	memcpy(want + (cc - args), pc, cbytes);
	Tile *tile = tile_new(chip, 0);
	tile_write(tile, args, want, span);
	tile_load_image(tile, &img);

	/* the block is written once: back-to-back calls run as a program
	 * would run them */
	int rc = IPU_OK;
	uint32_t calls = opt->calls ? opt->calls : 1;
	TileKernelCall k = {gemm_entry(t, opt->workers, bm, bn, bk),
	                    names[nobj - 1], argb, sizeof argb, args};
	for (uint32_t i = 0; i < calls && rc == IPU_OK; i++) {
		rc = tile_kernel_call(tile, &img, &k, cycles, d);
		k.args = NULL;
	}
	if (rc == IPU_OK) {
		uint8_t *got = xmalloc(span);
		tile_read(tile, args, got, span);
		for (uint32_t i = 0; i < span && rc == IPU_OK; i++)
			if ((args + i < cc || args + i >= cc + cbytes) &&
			    got[i] != want[i])
				rc = diag_set(d, IPU_EFAULT, NULL, 0, 0,
				              "gemm %s %ux%ux%u: byte 0x%x "
				              "outside C (0x%x..0x%x) changed",
				              gemm_dtype_name(t), bm, bn, bk,
				              args + i, cc, cc + cbytes);
		free(got);
	}
	free(want);
	if (rc == IPU_OK) {
		tile_read(tile, cc, pc, cbytes);
		gemm_unpack_c(gemm_c_elem_bytes(t), bm, bn, pc, c);
	}
	tile_free(tile);
	free(pa);
	free(pb);
	free(pc);
	img_free(&img);
	return rc;
}

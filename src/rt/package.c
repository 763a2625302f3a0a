/*
 * package.c - the runtime's package calls (include/ipu/runtime.h): loading
 * a package file onto tiles 0..n-1 of a device, and moving whole tensors
 * between host row-major arrays and the pieces that hold them on tiles,
 * converting each piece to and from its on-tile layout (pkg.h).
 *
 * The package is parsed and validated by src/pkg/ before any tile is
 * touched; its segments reach the tiles through the backend's load call
 * as one TileImage per tile (shared segments first, then the tile's own), so
 * backends need nothing new.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "device.h"
#include "rt.h"

/* Install the checked package p (the device owns it from here on, and
 * frees it if this fails). */
static int
install_package(ipu_device *dev, const char *fn, Package *p, const char *name,
                ipu_error *err)
{
	const Chip *c = dev->cfg.chip;
	if (strcmp(p->chip->name, c->name)) {
		rt_error(err, IPU_ERR_ARGUMENT,
		         "%s: %s was compiled for the %s; device '%s' is a %s",
		         fn, name, p->chip->name, dev->name, c->name);
		pkg_free(p);
		return err->kind;
	}
	if (p->tiles > dev->cfg.tiles) {
		rt_error(err, IPU_ERR_ARGUMENT,
		         "%s: %s uses %u tiles; device '%s' has %u", fn, name,
		         p->tiles, dev->name, dev->cfg.tiles);
		pkg_free(p);
		return err->kind;
	}
	if (dev->state == ST_LOADED) {
		const char *held = dev->pkg ? dev->pkg_name : NULL;
		uint32_t t = 0;
		for (; !held && t < p->tiles; t++)
			if (dev->img[t])
				held = dev->img[t]->name;
		if (held) {
			rt_error(err, IPU_ERR_ARGUMENT,
			         "%s: tiles 0..%u are not free: %s is loaded "
			         "there; a tile takes one program per run",
			         fn, p->tiles - 1, held);
			pkg_free(p);
			return err->kind;
		}
	}
	if (rt_fresh(dev, err)) {
		pkg_free(p);
		return err->kind;
	}
	uint32_t maxseg = 0;
	for (uint32_t t = 0; t < p->tiles; t++)
		if (p->tile[t].nseg > maxseg)
			maxseg = p->tile[t].nseg;
	TileSegment *seg = xcalloc((size_t)p->nshared + maxseg, sizeof *seg);
	for (uint32_t i = 0; i < p->nshared; i++) {
		const PkgBlob *b = &p->blob[p->shared[i].blob];
		seg[i] = (TileSegment){.addr = p->shared[i].addr,
		                       .size = b->len,
		                       .bytes = b->data,
		                       .exec = p->shared[i].addr < c->exec_end,
		                       .name = "shared"};
	}
	dev->pkg = p;
	dev->pkg_name = xstrdup(name);
	dev->state = ST_LOADED;
	for (uint32_t t = 0; t < p->tiles; t++) {
		const PkgTile *pt = &p->tile[t];
		for (uint32_t i = 0; i < pt->nseg; i++) {
			const PkgBlob *b = &p->blob[pt->seg[i].blob];
			seg[p->nshared + i] =
			    (TileSegment){.addr = pt->seg[i].addr,
			                  .size = b->len,
			                  .bytes = b->data,
			                  .exec = pt->seg[i].addr < c->exec_end,
			                  .name = "tile"};
		}
		TileImage img = {.entry = pt->entry,
		                 .seg = seg,
		                 .nseg = (int)(p->nshared + pt->nseg)};
		if (dev->ops->load(dev->be, t, &img, err)) {
			free(seg);
			return err->kind;
		}
	}
	free(seg);
	return 0;
}

static int
load_package(ipu_device *dev, const char *fn, const uint8_t *data, size_t len,
             const char *name, ipu_error *err)
{
	Package *p;
	Diag d;
	diag_clear(&d);
	if (pkg_read(data, len, name, &p, &d)) {
		char buf[700];
		diag_format(&d, buf, sizeof buf);
		return rt_error(err, IPU_ERR_FORMAT, "%s: %s", fn, buf);
	}
	return install_package(dev, fn, p, name, err);
}

int
rt_load_package(ipu_device *dev, Package *p, ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "rt_load_package";
	Diag d;
	diag_clear(&d);
	if (rt_check_dev(dev, fn, err)) {
		pkg_free(p);
		return err->kind;
	}
	if (pkg_check(p, &d)) {
		pkg_free(p);
		return rt_error(err, IPU_ERR_FORMAT, "%s: %s", fn, d.msg);
	}
	return install_package(dev, fn, p, "package", err);
}

int
ipu_load_package(ipu_device *dev, const void *data, size_t len, ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_load_package";
	if (rt_check_dev(dev, fn, err))
		return err->kind;
	if (!data || !len)
		return rt_error(err, IPU_ERR_ARGUMENT, "%s: %s", fn,
		                data ? "len is 0" : "data is NULL");
	return load_package(dev, fn, data, len, "package", err);
}

int
ipu_load_package_file(ipu_device *dev, const char *path, ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_load_package_file";
	if (rt_check_dev(dev, fn, err))
		return err->kind;
	uint8_t *data;
	size_t len;
	if (rt_read_file(fn, path, &data, &len, err))
		return err->kind;
	int r = load_package(dev, fn, data, len, path, err);
	free(data);
	return r;
}

/* The tensor `name` of the loaded package. */
static int
find_tensor(const ipu_device *dev, const char *fn, const char *name,
            const PkgTensor **out, ipu_error *err)
{
	if (rt_check_dev(dev, fn, err))
		return err->kind;
	if (!name)
		return rt_error(err, IPU_ERR_ARGUMENT, "%s: name is NULL", fn);
	if (!dev->pkg)
		return rt_error(
		    err, IPU_ERR_ARGUMENT,
		    "%s: no package is loaded on device '%s', so no "
		    "tensor '%s' (load one with ipu_load_package)",
		    fn, dev->name, name);
	*out = pkg_find_tensor(dev->pkg, name);
	if (*out)
		return 0;
	char known[400] = "";
	size_t n = 0;
	for (uint32_t i = 0; i < dev->pkg->ntensor && n < sizeof known; i++)
		n += (size_t)snprintf(known + n, sizeof known - n, "%s%s",
		                      i ? ", " : "", dev->pkg->tensor[i].name);
	return rt_error(err, IPU_ERR_ARGUMENT,
	                "%s: package %s has no tensor '%s' (it has: %s)", fn,
	                dev->pkg_name, name,
	                dev->pkg->ntensor ? known : "none");
}

static size_t
tensor_bytes(const PkgTensor *t)
{
	return (size_t)t->rows * t->cols * (uint32_t)dtype_size(t->dtype);
}

/* A host buffer of the right size for tensor t. */
static int
check_host(const char *fn, const PkgTensor *t, const void *buf, size_t bytes,
           ipu_error *err)
{
	if (!buf)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: the buffer for tensor '%s' is NULL", fn,
		                t->name);
	if (bytes != tensor_bytes(t))
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: %zu bytes given; tensor '%s' (%s, %u x "
		                "%u) has %zu",
		                fn, bytes, t->name, dtype_name(t->dtype),
		                t->rows, t->cols, tensor_bytes(t));
	return 0;
}

static int
unsupported(const char *fn, const PkgTensor *t, const PkgPiece *pc,
            ipu_error *err)
{
	return rt_error(err, IPU_ERR_FORMAT,
	                "%s: tensor '%s': a piece on tile %u is in layout %s, "
	                "which cannot be converted %s for %s",
	                fn, t->name, pc->tile, pkg_format_name(pc->format),
	                strcmp(fn, "ipu_write_tensor") ? "back to row-major"
	                                               : "from row-major",
	                dtype_name(t->dtype));
}

int
ipu_write_tensor(ipu_device *dev, const char *name, const void *src,
                 size_t bytes, ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_write_tensor";
	const PkgTensor *t;
	if (find_tensor(dev, fn, name, &t, err) ||
	    check_host(fn, t, src, bytes, err))
		return err->kind;
	/* convert every piece before writing any, so that an error leaves
	 * the device unchanged */
	size_t total = 0;
	for (uint32_t k = 0; k < t->npiece; k++)
		total += (size_t)pkg_piece_bytes(t, &t->piece[k]);
	for (uint32_t k = 0; k < t->npiece; k++)
		if (!pkg_piece_convertible(t, &t->piece[k], 1))
			return unsupported(fn, t, &t->piece[k], err);
	uint8_t *buf = xmalloc(total), *at = buf;
	for (uint32_t k = 0; k < t->npiece; k++) {
		pkg_piece_pack(t, &t->piece[k], src, at);
		at += pkg_piece_bytes(t, &t->piece[k]);
	}
	at = buf;
	int r = 0;
	for (uint32_t k = 0; k < t->npiece && !r; k++) {
		const PkgPiece *pc = &t->piece[k];
		uint32_t n = (uint32_t)pkg_piece_bytes(t, pc);
		r = dev->ops->write(dev->be, pc->tile, pc->addr, at, n, err);
		at += n;
	}
	free(buf);
	return r;
}

int
ipu_read_tensor(ipu_device *dev, const char *name, void *dst, size_t bytes,
                ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_read_tensor";
	const PkgTensor *t;
	if (find_tensor(dev, fn, name, &t, err) ||
	    check_host(fn, t, dst, bytes, err))
		return err->kind;
	for (uint32_t k = 0; k < t->npiece; k++)
		if (!pkg_piece_convertible(t, &t->piece[k], 0))
			return unsupported(fn, t, &t->piece[k], err);
	int r = 0;
	for (uint32_t k = 0; k < t->npiece && !r; k++) {
		const PkgPiece *pc = &t->piece[k];
		uint32_t n = (uint32_t)pkg_piece_bytes(t, pc);
		uint8_t *buf = xmalloc(n);
		r = dev->ops->read(dev->be, pc->tile, pc->addr, buf, n, err);
		if (!r)
			pkg_piece_unpack(t, pc, buf, dst);
		free(buf);
	}
	return r;
}

/* The runtime's public numbers are the package's. */
_Static_assert((int)IPU_DTYPE_F32 == DT_F32 && (int)IPU_DTYPE_F16 == DT_F16 &&
                   (int)IPU_DTYPE_F8_F143 == DT_F8_F143 &&
                   (int)IPU_DTYPE_F8_F152 == DT_F8_F152 && DT_COUNT == 4,
               "ipu_dtype mirrors DType");
_Static_assert((int)IPU_ROLE_INPUT == PKG_ROLE_INPUT &&
                   (int)IPU_ROLE_WEIGHT == PKG_ROLE_WEIGHT &&
                   (int)IPU_ROLE_OUTPUT == PKG_ROLE_OUTPUT,
               "ipu_tensor_role mirrors the package's roles");

static void
describe(const PkgTensor *t, ipu_tensor_desc *out)
{
	memset(out, 0, sizeof *out);
	out->name = t->name;
	out->dtype = (ipu_dtype)t->dtype;
	out->scale = t->scale;
	out->role = (ipu_tensor_role)t->role;
	out->rows = t->rows;
	out->cols = t->cols;
	out->bytes = tensor_bytes(t);
	out->pieces = t->npiece;
}

int
ipu_tensor_info(const ipu_device *dev, const char *name, ipu_tensor_desc *out,
                ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_tensor_info";
	const PkgTensor *t;
	if (find_tensor(dev, fn, name, &t, err))
		return err->kind;
	if (!out)
		return rt_error(err, IPU_ERR_ARGUMENT, "%s: out is NULL", fn);
	describe(t, out);
	return 0;
}

uint32_t
ipu_tensor_count(const ipu_device *dev)
{
	return dev && dev->pkg ? dev->pkg->ntensor : 0;
}

int
ipu_tensor_at(const ipu_device *dev, uint32_t index, ipu_tensor_desc *out,
              ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_tensor_at";
	if (rt_check_dev(dev, fn, err))
		return err->kind;
	if (!out)
		return rt_error(err, IPU_ERR_ARGUMENT, "%s: out is NULL", fn);
	if (index >= ipu_tensor_count(dev))
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: index %u is out of range: the device has "
		                "%u tensors",
		                fn, index, ipu_tensor_count(dev));
	describe(&dev->pkg->tensor[index], out);
	return 0;
}

void
rt_package_fault_symbol(const ipu_device *dev, ipu_error *err)
{
	const Package *p = dev->pkg;
	if (!p || err->tile >= p->tiles)
		return;
	const PkgKernel *best = NULL;
	for (uint32_t i = 0; i < p->nkernel; i++) {
		const PkgKernel *k = &p->kernel[i];
		if (k->addr <= err->pc && (!best || k->addr > best->addr))
			best = k;
	}
	/* only when the pc is in the shared code the kernels live in */
	int in_shared = 0;
	for (uint32_t i = 0; i < p->nshared && !in_shared; i++)
		in_shared = err->pc >= p->shared[i].addr &&
		            err->pc - p->shared[i].addr <
		                p->blob[p->shared[i].blob].len;
	size_t n = strlen(err->msg);
	if (best && in_shared && n < sizeof err->msg)
		snprintf(err->msg + n, sizeof err->msg - n,
		         "; the pc is %s+0x%x in package %s", best->name,
		         err->pc - best->addr, dev->pkg_name);
}

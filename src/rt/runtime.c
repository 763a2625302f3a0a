/*
 * runtime.c - the runtime API of include/ipu/runtime.h, independent of the
 * device: device names, argument checks against the chip's facts, images
 * and their symbol tables, the order of calls, and errors. The device work
 * itself goes through a backend (backend.h): the emulator today.
 *
 * A device is in one of three states: EMPTY (nothing loaded), LOADED (at
 * least one image, not yet run) and RAN. Loading in RAN resets the backend
 * first, so that every run starts from fresh tiles, as a new program on
 * hardware would.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/util.h"
#include "device.h"

/* The device kinds a name may start with. */
static const struct {
	const char *prefix;
	const RtBackend *backend;
} backends[] = {
    {"sim", &rt_backend_sim},
    {"model", &rt_backend_model},
    {"hw", &rt_backend_hw},
};

void
rt_error_clear(ipu_error *err)
{
	memset(err, 0, sizeof *err);
	err->tile = IPU_UNKNOWN;
	err->context = -1;
	err->pc = IPU_UNKNOWN;
	err->address = IPU_UNKNOWN;
	err->cycle = IPU_UNKNOWN_CYCLE;
}

int
rt_error(ipu_error *err, ipu_error_kind kind, const char *fmt, ...)
{
	rt_error_clear(err);
	err->kind = kind;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return kind;
}

const char *
ipu_error_kind_name(ipu_error_kind kind)
{
	switch (kind) {
	case IPU_ERR_NONE:
		return "none";
	case IPU_ERR_ARGUMENT:
		return "argument";
	case IPU_ERR_IO:
		return "io";
	case IPU_ERR_FORMAT:
		return "format";
	case IPU_ERR_NO_BACKEND:
		return "no backend";
	case IPU_ERR_FAULT:
		return "fault";
	case IPU_ERR_EXCHANGE:
		return "exchange";
	case IPU_ERR_DEADLOCK:
		return "deadlock";
	case IPU_ERR_TIMEOUT:
		return "timeout";
	}
	return "unknown";
}

/* A decimal option value in 1..max. */
static int
parse_count(const char *s, unsigned long max, uint32_t *out)
{
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int
default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

/* The next ':'-separated field of *s (empty fields are kept, so that
 * "sim::c600" is an error); NULL at the end. */
static char *
next_field(char **s)
{
	char *f = *s;
	if (!f)
		return NULL;
	char *colon = strchr(f, ':');
	if (colon)
		*colon = 0;
	*s = colon ? colon + 1 : NULL;
	return f;
}

/* Split "sim:c600:tiles=16:trace" into a backend and its configuration. */
static int
parse_name(const char *name, const RtBackend **ops, RtConfig *cfg,
           ipu_error *err)
{
	static const char forms[] =
	    "expected sim:c600 or sim:gc200, optionally followed by "
	    ":tiles=N, :threads=N, :trace, :timing=PROFILE; or model:c600 "
	    "(the card model) or hw:N (a card, /dev/ipuN), optionally "
	    ":tiles=N, :config=FILE, :log=FILE";
	char buf[256];
	if (strlen(name) >= sizeof buf)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "ipu_open: device name too long (%zu bytes)",
		                strlen(name));
	strcpy(buf, name);
	char *rest = buf, *prefix = next_field(&rest);
	size_t i, nb = sizeof backends / sizeof backends[0];
	for (i = 0; i < nb; i++)
		if (!strcmp(prefix, backends[i].prefix))
			break;
	if (i == nb)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "ipu_open: unknown device '%s': %s", name,
		                forms);
	if (!backends[i].backend)
		return rt_error(err, IPU_ERR_NO_BACKEND,
		                "ipu_open: device '%s': no hardware backend in "
		                "this build; use the emulator, sim:c600 or "
		                "sim:gc200",
		                name);
	*ops = backends[i].backend;
	int hw = *ops == &rt_backend_hw;
	char *chip = next_field(&rest);
	if (!chip || !*chip)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "ipu_open: device '%s' names no %s: %s", name,
		                hw ? "card" : "chip", forms);
	cfg->card = RT_CARD_MODEL;
	if (hw) {
		uint32_t n = 0;
		if (strcmp(chip, "0") && parse_count(chip, 255, &n))
			return rt_error(err, IPU_ERR_ARGUMENT,
			                "ipu_open: device '%s': expected hw:N, "
			                "N the number of /dev/ipuN (0..255)",
			                name);
		cfg->card = n;
		chip = "c600"; /* the cards we drive */
	}
	cfg->chip = chip_by_name(chip);
	if (!cfg->chip)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "ipu_open: device '%s': unknown chip '%s' "
		                "(known: %s)",
		                name, chip, chip_names());
	cfg->tiles = cfg->chip->tiles;
	cfg->threads = default_threads();
	cfg->trace = 0;
	cfg->config[0] = cfg->log[0] = 0;
	/* through the card's device interface */
	int card = *ops == &rt_backend_model || hw;
	if (card && cfg->chip->arch != ARCH_IPU21)
		return rt_error(
		    err, IPU_ERR_ARGUMENT,
		    "ipu_open: device '%s': the card model is of the "
		    "C600 only (model:c600)",
		    name);
	for (char *opt; (opt = next_field(&rest));) {
		uint32_t v;
		char *file = NULL;
		if (card && !strncmp(opt, "config=", 7))
			file = cfg->config;
		else if (card && !strncmp(opt, "log=", 4))
			file = cfg->log;
		if (file) {
			const char *path = strchr(opt, '=') + 1;
			if (!*path || strlen(path) >= sizeof cfg->config)
				return rt_error(err, IPU_ERR_ARGUMENT,
				                "ipu_open: device '%s': '%s' "
				                "needs a file name of at most "
				                "%zu bytes",
				                name, opt,
				                sizeof cfg->config - 1);
			strcpy(file, path);
		} else if (!strncmp(opt, "tiles=", 6)) {
			if (parse_count(opt + 6, cfg->chip->tiles, &v))
				return rt_error(
				    err, IPU_ERR_ARGUMENT,
				    "ipu_open: device '%s': '%s' must be "
				    "1..%u (the %s's tiles)",
				    name, opt, cfg->chip->tiles,
				    cfg->chip->name);
			cfg->tiles = v;
		} else if (!strncmp(opt, "threads=", 8)) {
			if (parse_count(opt + 8, 64, &v))
				return rt_error(err, IPU_ERR_ARGUMENT,
				                "ipu_open: device '%s': '%s' "
				                "must be 1..64",
				                name, opt);
			cfg->threads = (int)v;
		} else if (!card && !strcmp(opt, "trace")) {
			cfg->trace = 1;
		} else if (!strncmp(opt, "timing=", 7)) {
			Timing t;
			Diag d;
			if (timing_parse(opt + 7, &t, &d))
				return rt_error(err, IPU_ERR_ARGUMENT,
				                "ipu_open: device '%s': %s",
				                name, d.msg);
			cfg->chip = chip_timed(cfg->chip, &t);
		} else {
			return rt_error(err, IPU_ERR_ARGUMENT,
			                "ipu_open: device '%s': unknown option "
			                "'%s': %s",
			                name, opt, forms);
		}
	}
	return 0;
}

ipu_device *
ipu_open(const char *name, ipu_error *err)
{
	ERR_BEGIN(err);
	if (!name) {
		rt_error(err, IPU_ERR_ARGUMENT, "ipu_open: name is NULL");
		return NULL;
	}
	const RtBackend *ops = NULL;
	RtConfig cfg;
	if (parse_name(name, &ops, &cfg, err))
		return NULL;
	void *be = ops->open(&cfg, err);
	if (!be)
		return NULL;
	ipu_device *dev = xcalloc(1, sizeof *dev);
	dev->name = xstrdup(name);
	dev->ops = ops;
	dev->be = be;
	dev->cfg = cfg;
	dev->img = xcalloc(cfg.tiles, sizeof *dev->img);
	return dev;
}

static void
drop_images(ipu_device *dev)
{
	for (uint32_t i = 0; i < dev->cfg.tiles; i++) {
		RtImage *im = dev->img[i];
		dev->img[i] = NULL;
		if (im && --im->refs == 0) {
			img_free(&im->img);
			free(im->name);
			free(im);
		}
	}
	pkg_free(dev->pkg);
	dev->pkg = NULL;
	free(dev->pkg_name);
	dev->pkg_name = NULL;
}

void
ipu_close(ipu_device *dev)
{
	if (!dev)
		return;
	drop_images(dev);
	dev->ops->close(dev->be);
	free(dev->img);
	free(dev->name);
	free(dev);
}

int
ipu_info(const ipu_device *dev, ipu_device_info *out, ipu_error *err)
{
	ERR_BEGIN(err);
	if (!dev || !out)
		return rt_error(err, IPU_ERR_ARGUMENT, "ipu_info: %s is NULL",
		                dev ? "out" : "dev");
	const Chip *c = dev->cfg.chip;
	memset(out, 0, sizeof *out);
	snprintf(out->backend, sizeof out->backend, "%s", dev->ops->name);
	snprintf(out->chip, sizeof out->chip, "%s", c->name);
	out->tiles = dev->cfg.tiles;
	out->mem_base = c->mem_base;
	out->mem_end = c->mem_end;
	out->exec_end = c->exec_end;
	out->clock_hz = c->clock_hz;
	out->threads = dev->cfg.threads;
	out->trace = dev->cfg.trace;
	return 0;
}

/* Argument checks shared by the entry points; each names the function. */

int
rt_check_dev(const ipu_device *dev, const char *fn, ipu_error *err)
{
	if (!dev)
		return rt_error(err, IPU_ERR_ARGUMENT, "%s: dev is NULL", fn);
	return 0;
}

static int
rt_check_tile(const ipu_device *dev, const char *fn, uint32_t tile,
              ipu_error *err)
{
	if (rt_check_dev(dev, fn, err))
		return err->kind;
	if (tile >= dev->cfg.tiles) {
		rt_error(err, IPU_ERR_ARGUMENT,
		         "%s: tile %u is out of range: device '%s' has tiles "
		         "0..%u",
		         fn, tile, dev->name, dev->cfg.tiles - 1);
		err->tile = tile;
		return err->kind;
	}
	return 0;
}

/* Tile, buffer and byte range (len > 0) of a transfer. */
static int
check_range(const ipu_device *dev, const char *fn, uint32_t tile, uint32_t addr,
            size_t len, const void *buf, ipu_error *err)
{
	if (rt_check_tile(dev, fn, tile, err))
		return err->kind;
	if (!buf)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: the buffer is NULL (%zu bytes at 0x%x of "
		                "tile %u)",
		                fn, len, addr, tile);
	const Chip *c = dev->cfg.chip;
	if (addr < c->mem_base || addr >= c->mem_end ||
	    len > c->mem_end - addr) {
		rt_error(err, IPU_ERR_ARGUMENT,
		         "%s: %zu bytes at 0x%x are outside the memory of tile "
		         "%u (0x%05x..0x%05x on the %s)",
		         fn, len, addr, tile, c->mem_base, c->mem_end, c->name);
		err->tile = tile;
		err->address = addr;
		return err->kind;
	}
	return 0;
}

/* Segments inside tile memory, code below exec_end: checked before any
 * tile is touched, so that a bad image loads nowhere. */
static int
check_image(const ipu_device *dev, const char *fn, const RtImage *im,
            ipu_error *err)
{
	const Chip *c = dev->cfg.chip;
	for (int i = 0; i < im->img.nseg; i++) {
		const TileSegment *s = &im->img.seg[i];
		if (!s->size)
			continue;
		if (!chip_in_memory(c, s->addr, s->size))
			return rt_error(
			    err, IPU_ERR_FORMAT,
			    "%s: %s: segment %s at 0x%x (+%u bytes) is outside "
			    "tile memory 0x%05x..0x%05x of the %s",
			    fn, im->name, s->name, s->addr, s->size,
			    c->mem_base, c->mem_end, c->name);
		if (s->exec && s->addr + s->size > c->exec_end)
			return rt_error(err, IPU_ERR_FORMAT,
			                "%s: %s: code segment %s at 0x%x (+%u "
			                "bytes) reaches past 0x%05x, where "
			                "instruction fetch stops",
			                fn, im->name, s->name, s->addr, s->size,
			                c->exec_end);
	}
	return 0;
}

int
rt_fresh(ipu_device *dev, ipu_error *err)
{
	if (dev->state != ST_RAN)
		return 0;
	/* a fresh chip for the next run */
	void *be = dev->ops->open(&dev->cfg, err);
	if (!be)
		return err->kind;
	drop_images(dev);
	dev->ops->close(dev->be);
	dev->be = be;
	dev->state = ST_EMPTY;
	return 0;
}

static int
load(ipu_device *dev, const char *fn, const uint8_t *data, size_t len,
     const char *name, uint32_t first, uint32_t n, ipu_error *err)
{
	if (n == 0)
		return rt_error(err, IPU_ERR_ARGUMENT, "%s: ntiles is 0", fn);
	if (first >= dev->cfg.tiles || n > dev->cfg.tiles - first)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: %u tiles from tile %u do not fit device "
		                "'%s', which has tiles 0..%u",
		                fn, n, first, dev->name, dev->cfg.tiles - 1);
	if (dev->state == ST_LOADED && dev->pkg && first < dev->pkg->tiles)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: tile %u already holds package %s (tiles "
		                "0..%u); a tile takes one program per run",
		                fn, first, dev->pkg_name, dev->pkg->tiles - 1);
	if (dev->state == ST_LOADED)
		for (uint32_t t = first; t < first + n; t++)
			if (dev->img[t])
				return rt_error(
				    err, IPU_ERR_ARGUMENT,
				    "%s: tile %u already holds image %s; a "
				    "tile takes one image per run",
				    fn, t, dev->img[t]->name);
	RtImage *im = xcalloc(1, sizeof *im);
	im->name = xstrdup(name);
	Diag d;
	diag_clear(&d);
	if (img_load(data, len, name, dev->cfg.chip, &im->img, &d)) {
		char buf[700];
		diag_format(&d, buf, sizeof buf);
		rt_error(err, IPU_ERR_FORMAT, "%s: %s", fn, buf);
		free(im->name);
		free(im);
		return err->kind;
	}
	if (check_image(dev, fn, im, err)) {
		img_free(&im->img);
		free(im->name);
		free(im);
		return err->kind;
	}
	if (rt_fresh(dev, err)) {
		img_free(&im->img);
		free(im->name);
		free(im);
		return err->kind;
	}
	for (uint32_t t = first; t < first + n; t++) {
		if (dev->ops->load(dev->be, t, &im->img, err)) {
			/* tiles loaded so far keep the image */
			if (!im->refs) {
				img_free(&im->img);
				free(im->name);
				free(im);
			}
			dev->state = ST_LOADED;
			return err->kind;
		}
		dev->img[t] = im;
		im->refs++;
	}
	dev->state = ST_LOADED;
	return 0;
}

int
ipu_load_image(ipu_device *dev, const void *data, size_t len,
               uint32_t first_tile, uint32_t ntiles, ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_load_image";
	if (rt_check_dev(dev, fn, err))
		return err->kind;
	if (!data || !len)
		return rt_error(err, IPU_ERR_ARGUMENT, "%s: %s", fn,
		                data ? "len is 0" : "data is NULL");
	return load(dev, fn, data, len, "image", first_tile, ntiles, err);
}

/* Read a whole input file for `fn`; IPU_ERR_ARGUMENT for a NULL path,
 * IPU_ERR_IO if it cannot be read. */
int
rt_read_file(const char *fn, const char *path, uint8_t **data, size_t *len,
             ipu_error *err)
{
	if (!path)
		return rt_error(err, IPU_ERR_ARGUMENT, "%s: path is NULL", fn);
	Diag d;
	diag_clear(&d);
	if (read_file(path, data, len, &d)) {
		char buf[700];
		diag_format(&d, buf, sizeof buf);
		return rt_error(err, IPU_ERR_IO, "%s: %s", fn, buf);
	}
	return IPU_ERR_NONE;
}

int
ipu_load_image_file(ipu_device *dev, const char *path, uint32_t first_tile,
                    uint32_t ntiles, ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_load_image_file";
	if (rt_check_dev(dev, fn, err))
		return err->kind;
	uint8_t *data;
	size_t len;
	if (rt_read_file(fn, path, &data, &len, err))
		return err->kind;
	int r = load(dev, fn, data, len, path, first_tile, ntiles, err);
	free(data);
	return r;
}

/* The symbol `name` of the image on `tile`. */
static int
find_symbol(const ipu_device *dev, const char *fn, uint32_t tile,
            const char *name, uint32_t *addr, uint32_t *size, ipu_error *err)
{
	if (rt_check_tile(dev, fn, tile, err))
		return err->kind;
	if (!name)
		return rt_error(err, IPU_ERR_ARGUMENT, "%s: name is NULL", fn);
	const RtImage *im = dev->img[tile];
	if (!im)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: tile %u holds no image, so no symbol '%s' "
		                "(load one with ipu_load_image)",
		                fn, tile, name);
	const Obj *o = im->img.obj;
	int i = o ? obj_find_symbol(o, name) : -1;
	if (i < 0 || o->sym[i].section == OBJ_UNDEF)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: image %s on tile %u defines no symbol "
		                "'%s'",
		                fn, im->name, tile, name);
	*addr = o->sym[i].value;
	*size = o->sym[i].size;
	return 0;
}

int
ipu_symbol(const ipu_device *dev, uint32_t tile, const char *name,
           uint32_t *addr, uint32_t *size, ipu_error *err)
{
	ERR_BEGIN(err);
	uint32_t a = 0, s = 0;
	if (find_symbol(dev, "ipu_symbol", tile, name, &a, &s, err))
		return err->kind;
	if (addr)
		*addr = a;
	if (size)
		*size = s;
	return 0;
}

int
ipu_write(ipu_device *dev, uint32_t tile, uint32_t addr, const void *src,
          size_t len, ipu_error *err)
{
	ERR_BEGIN(err);
	if (!len)
		return rt_check_tile(dev, "ipu_write", tile, err);
	if (check_range(dev, "ipu_write", tile, addr, len, src, err))
		return err->kind;
	return dev->ops->write(dev->be, tile, addr, src, (uint32_t)len, err);
}

int
ipu_read(ipu_device *dev, uint32_t tile, uint32_t addr, void *dst, size_t len,
         ipu_error *err)
{
	ERR_BEGIN(err);
	if (!len)
		return rt_check_tile(dev, "ipu_read", tile, err);
	if (check_range(dev, "ipu_read", tile, addr, len, dst, err))
		return err->kind;
	return dev->ops->read(dev->be, tile, addr, dst, (uint32_t)len, err);
}

/* A symbol's address for a transfer of len bytes. */
static int
symbol_range(const ipu_device *dev, const char *fn, uint32_t tile,
             const char *name, size_t len, uint32_t *addr, ipu_error *err)
{
	uint32_t size = 0;
	if (find_symbol(dev, fn, tile, name, addr, &size, err))
		return err->kind;
	if (size && len > size)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: %zu bytes do not fit '%s' on tile %u (%u "
		                "bytes at 0x%x)",
		                fn, len, name, tile, size, *addr);
	return 0;
}

int
ipu_write_symbol(ipu_device *dev, uint32_t tile, const char *name,
                 const void *src, size_t len, ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_write_symbol";
	uint32_t addr = 0;
	if (symbol_range(dev, fn, tile, name, len, &addr, err))
		return err->kind;
	if (!len)
		return 0;
	if (check_range(dev, fn, tile, addr, len, src, err))
		return err->kind;
	return dev->ops->write(dev->be, tile, addr, src, (uint32_t)len, err);
}

int
ipu_read_symbol(ipu_device *dev, uint32_t tile, const char *name, void *dst,
                size_t len, ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_read_symbol";
	uint32_t addr = 0;
	if (symbol_range(dev, fn, tile, name, len, &addr, err))
		return err->kind;
	if (!len)
		return 0;
	if (check_range(dev, fn, tile, addr, len, dst, err))
		return err->kind;
	return dev->ops->read(dev->be, tile, addr, dst, (uint32_t)len, err);
}

/* Stream transfers belong to the next run: after a load, before ipu_run. */
static int
check_stream(const ipu_device *dev, const char *fn, uint32_t tile,
             uint32_t addr, size_t len, const void *buf, ipu_error *err)
{
	if (check_range(dev, fn, tile, addr, len, buf, err))
		return err->kind;
	if (dev->state != ST_LOADED)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: %s; queue host transfers after "
		                "ipu_load_image and before ipu_run",
		                fn,
		                dev->state == ST_EMPTY
		                    ? "no image is loaded"
		                    : "the program has run (a new load resets "
		                      "the device)");
	return 0;
}

int
ipu_stream_write(ipu_device *dev, uint32_t sync, uint32_t tile, uint32_t addr,
                 const void *src, size_t len, ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_stream_write";
	if (check_stream(dev, fn, tile, addr, len, src, err))
		return err->kind;
	return dev->ops->stream_write(dev->be, sync, tile, addr, src,
	                              (uint32_t)len, err);
}

int
ipu_stream_read(ipu_device *dev, uint32_t sync, uint32_t tile, uint32_t addr,
                void *dst, size_t len, ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_stream_read";
	if (check_stream(dev, fn, tile, addr, len, dst, err))
		return err->kind;
	return dev->ops->stream_read(dev->be, sync, tile, addr, dst,
	                             (uint32_t)len, err);
}

/* Name the function a faulting pc lies in, from the tile's image. */
static void
add_fault_symbol(const ipu_device *dev, ipu_error *err)
{
	if (err->tile >= dev->cfg.tiles || err->pc == IPU_UNKNOWN)
		return;
	if (!dev->img[err->tile]) {
		rt_package_fault_symbol(dev, err);
		return;
	}
	const RtImage *im = dev->img[err->tile];
	uint32_t off;
	const char *sym = img_symbol(&im->img, err->pc, &off);
	size_t n = strlen(err->msg);
	if (sym && n < sizeof err->msg)
		snprintf(err->msg + n, sizeof err->msg - n,
		         "; the pc is %s+0x%x in image %s", sym, off, im->name);
}

int
ipu_run(ipu_device *dev, uint64_t max_cycles, ipu_error *err)
{
	ERR_BEGIN(err);
	if (rt_check_dev(dev, "ipu_run", err))
		return err->kind;
	if (dev->state != ST_LOADED)
		return rt_error(
		    err, IPU_ERR_ARGUMENT, "ipu_run: %s",
		    dev->state == ST_EMPTY
		        ? "no image is loaded on device; call ipu_load_image "
		          "first"
		        : "the program has already run; load an image again "
		          "(which resets the device) to run again");
	dev->state = ST_RAN;
	int r = dev->ops->run(dev->be, max_cycles ? max_cycles : UINT64_MAX,
	                      dev->progress, dev->progress_ctx, err);
	if (r == IPU_ERR_FAULT)
		add_fault_symbol(dev, err);
	return r;
}

int
ipu_set_progress(ipu_device *dev, ipu_progress_fn fn, void *ctx, ipu_error *err)
{
	ERR_BEGIN(err);
	if (rt_check_dev(dev, "ipu_set_progress", err))
		return err->kind;
	dev->progress = fn;
	dev->progress_ctx = ctx;
	return 0;
}

uint64_t
ipu_cycles(const ipu_device *dev)
{
	return dev && dev->state == ST_RAN ? dev->ops->cycles(dev->be) : 0;
}

uint64_t
ipu_host_cycles(const ipu_device *dev)
{
	return dev && dev->state == ST_RAN ? dev->ops->host_cycles(dev->be) : 0;
}

int
ipu_tile_counters(const ipu_device *dev, uint32_t tile, ipu_counters *out,
                  ipu_error *err)
{
	ERR_BEGIN(err);
	if (rt_check_tile(dev, "ipu_tile_counters", tile, err))
		return err->kind;
	if (!out)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "ipu_tile_counters: out is NULL");
	memset(out, 0, sizeof *out);
	dev->ops->counters(dev->be, tile, out);
	out->loaded =
	    dev->img[tile] != NULL || (dev->pkg && tile < dev->pkg->tiles);
	return 0;
}

int
ipu_write_trace(ipu_device *dev, const char *path, ipu_error *err)
{
	ERR_BEGIN(err);
	const char *fn = "ipu_write_trace";
	if (rt_check_dev(dev, fn, err))
		return err->kind;
	if (!path)
		return rt_error(err, IPU_ERR_ARGUMENT, "%s: path is NULL", fn);
	if (!dev->cfg.trace || !dev->ops->write_trace)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: device '%s' records no trace; open it "
		                "with ':trace' (e.g. sim:c600:trace)",
		                fn, dev->name);
	return dev->ops->write_trace(dev->be, path, err);
}

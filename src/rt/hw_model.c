/*
 * hw_model.c - the card model (sim/card.c) behind the device interface:
 * "model:CHIP[:tiles=N]". Its errors read as the driver's would, with the
 * model's reason.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/card.h"
#include "backend.h"
#include "hw.h"

static int
md_read32(void *impl, uint32_t off, uint32_t *v, ipu_error *err)
{
	char msg[300];
	if (cardsim_read32(impl, off, v, msg, sizeof msg))
		return rt_error(err, IPU_ERR_ARGUMENT, "card model: %s", msg);
	return 0;
}

static int
md_write32(void *impl, uint32_t off, uint32_t v, ipu_error *err)
{
	char msg[300];
	if (cardsim_write32(impl, off, v, msg, sizeof msg))
		return rt_error(err, IPU_ERR_IO, "card model: %s", msg);
	return 0;
}

static int
md_ioctl(void *impl, unsigned long req, void *arg, ipu_error *err)
{
	char msg[300];
	int e;
	if (cardsim_ioctl(impl, req, arg, &e, msg, sizeof msg)) {
		const char *n = card_ioctl_name(req);
		return rt_error(err, IPU_ERR_IO,
		                "card model: ioctl %s (0x%08lx): %s: %s",
		                n ? n : "?", req, strerror(e), msg);
	}
	return 0;
}

static void
md_close(void *impl)
{
	cardsim_free(impl);
}

static const HwOps model_ops = {
    .kind = "model",
    .read32 = md_read32,
    .write32 = md_write32,
    .ioctl = md_ioctl,
    .close = md_close,
};

void *
hw_model_open(const char *spec, const HwOps **ops, ipu_error *err)
{
	char buf[64];
	if (strlen(spec) >= sizeof buf) {
		rt_error(err, IPU_ERR_ARGUMENT, "model:%s: name too long",
		         spec);
		return NULL;
	}
	strcpy(buf, spec);
	char *opt = strchr(buf, ':');
	if (opt)
		*opt++ = 0;
	const Chip *c = chip_by_name(buf);
	if (!c || c->arch != ARCH_IPU21) {
		rt_error(err, IPU_ERR_ARGUMENT,
		         "model:%s: the card model is of the C600 only "
		         "(model:c600)",
		         spec);
		return NULL;
	}
	ChipConfig cc = {.chip = c, .tiles = c->tiles, .threads = 1};
	if (opt) {
		char *end;
		unsigned long n =
		    strncmp(opt, "tiles=", 6) ? 0 : strtoul(opt + 6, &end, 10);
		if (!n || *end || n > c->tiles || opt[6] < '0' ||
		    opt[6] > '9') {
			rt_error(err, IPU_ERR_ARGUMENT,
			         "model:%s: the only option is :tiles=N, "
			         "1..%u",
			         spec, c->tiles);
			return NULL;
		}
		cc.tiles = (uint32_t)n;
	}
	*ops = &model_ops;
	return cardsim_new(&cc);
}

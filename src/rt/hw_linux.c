/*
 * hw_linux.c - the card through Graphcore's Linux kernel driver: the
 * device node /dev/ipuN, its configuration BAR mapped at offset 0, and the
 * driver's ioctls (target/card.def). Nothing here has run on a card yet
 * (docs/hardware.md, "Never checked on silicon").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/util.h"
#include "backend.h"
#include "hw.h"

typedef struct {
	int fd;
	volatile uint32_t *bar;
	char path[300];
} LinuxDev;

const char *
hw_dev_dir(void)
{
	const char *d = getenv("IPU_DEV_DIR");
	return d && *d ? d : "/dev";
}

static int
lx_read32(void *impl, uint32_t off, uint32_t *v, ipu_error *err)
{
	LinuxDev *l = impl;
	if (off % 4 || off > CARD_BAR_SIZE - 4)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: BAR offset 0x%x outside the BAR", l->path,
		                off);
	*v = l->bar[off / 4];
	return 0;
}

static int
lx_write32(void *impl, uint32_t off, uint32_t v, ipu_error *err)
{
	LinuxDev *l = impl;
	if (off % 4 || off > CARD_BAR_SIZE - 4)
		return rt_error(err, IPU_ERR_ARGUMENT,
		                "%s: BAR offset 0x%x outside the BAR", l->path,
		                off);
	l->bar[off / 4] = v;
	return 0;
}

static int
lx_ioctl(void *impl, unsigned long req, void *arg, ipu_error *err)
{
	LinuxDev *l = impl;
	if (ioctl(l->fd, req, arg) != 0) {
		const char *n = card_ioctl_name(req);
		return rt_error(err, IPU_ERR_IO, "%s: ioctl %s (0x%08lx): %s",
		                l->path, n ? n : "?", req, strerror(errno));
	}
	return 0;
}

static void
lx_close(void *impl)
{
	LinuxDev *l = impl;
	munmap((void *)l->bar, CARD_BAR_SIZE);
	close(l->fd);
	free(l);
}

static const HwOps linux_ops = {
    .kind = "linux",
    .read32 = lx_read32,
    .write32 = lx_write32,
    .ioctl = lx_ioctl,
    .close = lx_close,
};

void *
hw_linux_open(uint32_t index, const HwOps **ops, ipu_error *err)
{
	LinuxDev *l = xcalloc(1, sizeof *l);
	snprintf(l->path, sizeof l->path, "%s/ipu%u", hw_dev_dir(), index);
	l->fd = open(l->path, O_RDWR | O_CLOEXEC);
	if (l->fd < 0) {
		int e = errno;
		if (e == ENOENT)
			rt_error(err, IPU_ERR_NO_BACKEND,
			         "%s does not exist: no C600 card, or "
			         "Graphcore's kernel driver is not "
			         "loaded; 'ipu device probe' lists what there "
			         "is, and model:c600 is the card model",
			         l->path);
		else if (e == EACCES || e == EPERM)
			rt_error(err, IPU_ERR_IO,
			         "%s: %s: your user may not open the card "
			         "(ask for the group that owns it)",
			         l->path, strerror(e));
		else
			rt_error(err, IPU_ERR_IO, "%s: %s", l->path,
			         strerror(e));
		free(l);
		return NULL;
	}
	struct stat st;
	if (fstat(l->fd, &st) || !S_ISCHR(st.st_mode)) {
		rt_error(err, IPU_ERR_NO_BACKEND,
		         "%s is not a character device: not a card of "
		         "Graphcore's kernel driver",
		         l->path);
		close(l->fd);
		free(l);
		return NULL;
	}
	void *bar = mmap(NULL, CARD_BAR_SIZE, PROT_READ | PROT_WRITE,
	                 MAP_SHARED, l->fd, 0);
	if (bar == MAP_FAILED) {
		rt_error(err, IPU_ERR_IO,
		         "%s: mapping the 0x%x-byte configuration BAR failed: "
		         "%s (is this Graphcore's driver?)",
		         l->path, CARD_BAR_SIZE, strerror(errno));
		close(l->fd);
		free(l);
		return NULL;
	}
	l->bar = bar;
	*ops = &linux_ops;
	return l;
}

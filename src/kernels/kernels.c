/* kernels.c - lookup of the embedded kernel objects. */
#include "kernels.h"

#include <string.h>

static const KernelObject *
kernel_find(const char *name)
{
	for (const KernelObject *k = kernel_objects; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

int
kernel_image(const char *const *names, int n, const Chip *chip, TileImage *img,
             Diag *d)
{
	Obj *objs[12] = {0};
	int r = IPU_OK, got = 0;
	if (n > (int)(sizeof objs / sizeof objs[0]))
		die("too many kernel objects (%d)", n);
	while (got < n) {
		const KernelObject *k = kernel_find(names[got]);
		if (!k)
			die("kernel %s is not embedded", names[got]);
		r = obj_read(k->bytes, k->size, k->name, &objs[got], d);
		if (r)
			break;
		got++;
	}
	Obj *exe = NULL;
	if (!r) {
		LinkOptions opt = {.chip = chip};
		r = link_objects(objs, n, &opt, &exe, d);
	}
	for (int i = 0; i < got; i++)
		obj_free(objs[i]);
	return r ? r : img_from_obj(exe, img, d);
}

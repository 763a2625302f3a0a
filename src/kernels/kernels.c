/* kernels.c - lookup of the embedded kernel objects. */
#include "kernels.h"

#include <string.h>

const KernelObject *
kernel_find(const char *name)
{
	for (const KernelObject *k = kernel_objects; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

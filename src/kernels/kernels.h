/*
 * kernels.h - device code: the objects assembled at build time from
 * kernels/NAME.S by our own assembler (see CMakeLists.txt and
 * cmake/embed.cmake), embedded in the program.
 */
#ifndef IPU_KERNELS_H
#define IPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "../asm/asm.h"

typedef struct {
	const char *name; /* the source file name without ".S" */
	const uint8_t *bytes;
	size_t size;
} KernelObject;

extern const KernelObject kernel_objects[]; /* ends with a NULL name */

/* kernels.c */
/* Link the named kernel objects for `chip` into an image. */
int kernel_image(const char *const *names, int n, const Chip *chip,
                 TileImage *img, Diag *d);

#endif

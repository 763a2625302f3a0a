/*
 * rt.h - the runtime's entry for the toolchain's own host code (src/runner):
 * a package the compiler made in this process, loaded as the structure it
 * is rather than written to bytes and parsed again (ipu_load_package).
 */
#ifndef IPU_RT_H
#define IPU_RT_H

#include <ipu/runtime.h>

#include "../pkg/pkg.h"

/* Load p on dev as ipu_load_package loads a package's bytes (p passes
 * pkg_check first). The device owns p from here on: it frees it with the
 * device, or now if loading fails. */
int rt_load_package(ipu_device *dev, Package *p, ipu_error *err);

#endif

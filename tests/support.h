/* support.h - helpers shared by the unit tests. */
#ifndef IPU_TEST_SUPPORT_H
#define IPU_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../src/sim/sim.h"

/* Encode one instruction by variant name with operands in assembly order;
 * fails the test if it does not encode. */
uint32_t enc(const char *variant, int nops, ...);

#endif

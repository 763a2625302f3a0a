/*
 * interp.h - the graph interpreter the compiler's tests check the chip
 * against, written from docs/graph.md alone (it shares nothing with
 * src/lower or the kernels).
 *
 * Every tensor's values in long double, each op's result rounded to its
 * element type as the device stores it, and for each element a bound on
 * how far the device's value may be from it: the op's sensitivity to its
 * inputs' bounds plus the kernel's own error as its docs state it
 * (docs/kernel-gemm.md, kernel-elementwise.md, kernel-rowwise.md "Accuracy")
 * plus the rounding of both results to the element type. docs/compiler.md
 * "Testing the compiler" gives the rules.
 */
#ifndef IPU_TEST_INTERP_H
#define IPU_TEST_INTERP_H

#include <stdint.h>

#include "../src/graph/graph.h"

typedef struct {
	long double **val; /* by tensor id: its elements, row-major */
	double **err;      /* by tensor id: |device - val| <= err, per element
	                      (INFINITY: no bound, not checked) */
} Interp;

/* Values of an element type: to its bits (round to nearest even; f8 with
 * its scale, saturating; f16 overflows to infinity), from them, and a
 * value rounded as the device stores it. */
void interp_to_bits(ElemType e, long double v, uint8_t *out);
long double interp_from_bits(ElemType e, const uint8_t *in);
long double interp_round(ElemType e, long double v);

/* Arrays for every tensor of g (all NULL). The caller sets val[id] (an
 * xcalloc'd array, err[id] may stay NULL: exact) of every input and
 * weight, then interp_run fills every op's output. */
void interp_init(Interp *in, const Graph *g);
void interp_run(const Graph *g, Interp *in);
void interp_free(Interp *in, const Graph *g);

#endif

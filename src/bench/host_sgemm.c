/*
 * host_sgemm.c - the host's own matrix-product rate: OpenBLAS's cblas_sgemm,
 * the yardstick that `ipu bench sim` sets the emulator against. A file of
 * its own because OpenBLAS's headers bring <complex.h>, whose `I` macro
 * clashes with the instruction table's X-macro in sim.h.
 */
#include "bench.h"

#include <cblas.h>
#include <stdlib.h>

enum { SGEMM_RUNS = 5 };

/* The best of a few n x n x n SGEMMs after one warm-up, in GFLOP/s. */
double
bench_host_sgemm(uint32_t n, int threads)
{
	size_t nn = (size_t)n * n;
	float *a = xmalloc(nn * sizeof *a), *b = xmalloc(nn * sizeof *b);
	float *c = xcalloc(nn, sizeof *c);
	for (size_t i = 0; i < nn; i++) {
		a[i] = (float)(i % 17) * 0.125f - 1.0f;
		b[i] = (float)(i % 13) * 0.25f - 1.5f;
	}
	openblas_set_num_threads(threads);
	double best = 0;
	for (int r = 0; r <= SGEMM_RUNS; r++) {
		double t0 = monotonic_seconds();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n,
		            (int)n, (int)n, 1.0f, a, (int)n, b, (int)n, 0.0f, c,
		            (int)n);
		double dt = monotonic_seconds() - t0;
		if (r > 0 && (best == 0 || dt < best)) /* r = 0 warms up */
			best = dt;
	}
	/* One element against a plain sum: the call did the work. */
	double ref = 0;
	for (uint32_t k = 0; k < n; k++)
		ref += (double)a[k] * b[(size_t)k * n];
	if (ref - c[0] > 1e-3 * n || c[0] - ref > 1e-3 * n)
		die("OpenBLAS sgemm: c[0][0] = %g, expected %g", c[0], ref);
	free(a);
	free(b);
	free(c);
	return 2.0 * n * n * (double)n / best / 1e9;
}

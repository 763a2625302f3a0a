/*
 * fuzz_npy.c - libFuzzer entry point for the .npy reader: arbitrary bytes
 * as a file. Reading must reject bad input with a Diag and never crash;
 * whatever it accepts must write back and read again to the same array.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/util/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	NpyArray a, b;
	Diag d;
	diag_clear(&d);
	if (npy_decode(data, size, "fuzz.npy", &a, &d) != 0) {
		if (a.data || !d.msg[0])
			abort(); /* a failure leaves nothing and says why */
		return 0;
	}
	uint8_t *buf;
	size_t len;
	if (npy_encode(&a, &buf, &len, &d) ||
	    npy_decode(buf, len, "again.npy", &b, &d) || b.dtype != a.dtype ||
	    b.rank != a.rank ||
	    memcmp(b.shape, a.shape, (size_t)a.rank * sizeof a.shape[0]) ||
	    memcmp(b.data, a.data, npy_count(&a) * npy_dtype_size(a.dtype)))
		abort();
	free(buf);
	npy_free(&a);
	npy_free(&b);
	return 0;
}

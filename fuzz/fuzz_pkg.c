/*
 * fuzz_pkg.c - libFuzzer entry point for the package reader: arbitrary
 * bytes as a package file. Reading must reject bad input with a Diag and
 * never crash; whatever it accepts must write back to the same bytes, and
 * every piece it accepts must convert to and from its tile layout.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/pkg/pkg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Package *p;
	Diag d;
	if (pkg_read(data, size, "fuzz.ipk", &p, &d) != 0)
		return 0;
	uint8_t *out;
	size_t len;
	if (pkg_write(p, &out, &len, &d) != 0 || len != size ||
	    memcmp(out, data, size))
		abort();
	free(out);
	/* tensors are bounded by their pieces, which fit tile memory */
	for (uint32_t i = 0; i < p->ntensor; i++) {
		const PkgTensor *t = &p->tensor[i];
		size_t bytes =
		    (size_t)t->rows * t->cols * pkg_dtype_size(t->dtype);
		if (bytes > (64u << 20))
			continue;
		uint8_t *host = calloc(bytes, 1);
		for (uint32_t k = 0; k < t->npiece; k++) {
			uint8_t *tile =
			    malloc(pkg_piece_bytes(t, &t->piece[k]));
			if (pkg_piece_pack(t, &t->piece[k], host, tile))
				abort(); /* every valid piece packs */
			pkg_piece_unpack(t, &t->piece[k], tile, host);
			free(tile);
		}
		free(host);
	}
	pkg_free(p);
	return 0;
}

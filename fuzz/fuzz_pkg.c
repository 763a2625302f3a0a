/*
 * fuzz_pkg.c - libFuzzer entry point for the package reader: arbitrary
 * bytes as a package file, with the header's body size and CRC-32 set to
 * match the bytes that follow (random bytes almost never carry a valid
 * checksum, and the reader stops at a bad one: the unit tests check that
 * stop; this target reaches the parser and pkg_check behind it). Reading
 * must reject bad input with a Diag and never crash nor allocate much more
 * than the input's size; whatever it accepts must write back to the same
 * bytes, and every piece it accepts must convert to and from its tile
 * layout.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/pkg/pkg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	if (size >= PKG_HEADER_BYTES) {
		uint64_t body = size - PKG_HEADER_BYTES;
		uint32_t crc = pkg_crc32(0, buf + PKG_HEADER_BYTES, body);
		for (int i = 0; i < 8; i++)
			buf[16 + i] = (uint8_t)(body >> 8 * i);
		for (int i = 0; i < 4; i++)
			buf[24 + i] = (uint8_t)(crc >> 8 * i);
	}
	Package *p;
	Diag d;
	int r = pkg_read(buf, size, "fuzz.ipk", &p, &d);
	if (r != 0) {
		free(buf);
		return 0;
	}
	uint8_t *out;
	size_t len;
	if (pkg_write(p, &out, &len, &d) != 0 || len != size ||
	    memcmp(out, buf, size))
		abort();
	free(out);
	free(buf);
	/* tensors are bounded by their pieces, which fit tile memory */
	for (uint32_t i = 0; i < p->ntensor; i++) {
		const PkgTensor *t = &p->tensor[i];
		uint64_t elems = (uint64_t)t->rows * t->cols;
		if (elems > (16u << 20))
			continue;
		size_t bytes = (size_t)elems * dtype_size(t->dtype);
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

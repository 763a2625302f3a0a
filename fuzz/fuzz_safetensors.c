/*
 * fuzz_safetensors.c - libFuzzer entry point for the safetensors reader:
 * arbitrary bytes as a file. Parsing must reject bad input with a Diag and
 * never crash; whatever it accepts must satisfy the format's invariants
 * (tensors tile the data section, each found by name, sizes match shapes)
 * and, written again by our writer, parse to the same tensors and bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/models/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The accepted file as our writer lays it out: header, then data in the
 * parsed (offset) order, which is the data section unchanged. */
static void
rewrite_and_compare(const StFile *f)
{
	StSpec *spec = calloc(f->ntensor + 1, sizeof *spec);
	for (size_t i = 0; i < f->ntensor; i++)
		spec[i] = (StSpec){f->tensor[i].name, f->tensor[i].dtype,
		                   f->tensor[i].rank, f->tensor[i].shape};
	uint8_t *h;
	size_t hlen;
	Diag d;
	if (st_header(spec, f->ntensor, f->meta, f->nmeta, &h, &hlen, &d))
		abort(); /* anything we read, we can write */
	size_t len = hlen + f->data_len;
	uint8_t *buf = malloc(len ? len : 1);
	memcpy(buf, h, hlen);
	memcpy(buf + hlen, f->data, f->data_len);
	StFile g;
	if (st_parse(buf, len, "rewritten", &g, &d) ||
	    g.ntensor != f->ntensor || g.nmeta != f->nmeta)
		abort();
	for (size_t i = 0; i < f->ntensor; i++) {
		const StTensor *a = &f->tensor[i], *b = st_find(&g, a->name);
		if (!b || b->dtype != a->dtype || b->rank != a->rank ||
		    memcmp(b->shape, a->shape, a->rank * sizeof *a->shape) ||
		    b->end - b->begin != a->end - a->begin ||
		    memcmp(st_bytes(&g, b), st_bytes(f, a), a->end - a->begin))
			abort();
	}
	st_free(&g);
	free(buf);
	free(h);
	free(spec);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	StFile f;
	Diag d;
	if (st_parse(data, size, "fuzz.safetensors", &f, &d) != 0)
		return 0;
	uint64_t at = 0;
	for (size_t i = 0; i < f.ntensor; i++) {
		const StTensor *t = &f.tensor[i];
		uint64_t bits = st_elements(t) * st_dtype_bits(t->dtype);
		if (t->begin != at || t->end - t->begin != bits / 8 ||
		    st_find(&f, t->name) != t)
			abort();
		at = t->end;
		if (t->end - t->begin <= 4096 &&
		    (t->dtype == ST_F16 || t->dtype == ST_F32 ||
		     t->dtype == ST_BF16 || t->dtype == ST_F64)) {
			float *v = malloc(st_elements(t) * sizeof *v + 1);
			if (st_to_f32(&f, t, v, &d))
				abort();
			free(v);
		}
	}
	if (at != f.data_len || f.data + f.data_len != data + size)
		abort();
	rewrite_and_compare(&f);
	st_free(&f);
	return 0;
}

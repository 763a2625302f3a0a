/*
 * fuzz_config.c - libFuzzer entry point for the SigLIP config.json reader
 * (siglip_config_parse): arbitrary bytes as the file. Parsing must reject
 * bad input with a Diag and never crash; whatever it accepts must pass
 * siglip_config_validate (sizes in bounds, every element count of an
 * image within an int, d divisible by H), and its token count must be the
 * grid squared, positive.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../src/models/siglip_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SiglipConfig c;
	Diag d;
	if (siglip_config_parse((const char *)data, size, "fuzz.json", &c, &d))
		return 0;
	if (siglip_config_validate(&c, "fuzz.json", &d))
		abort(); /* accepted, so valid */
	int64_t grid = c.image / c.patch;
	if (grid < 1 || siglip_tokens(&c) != grid * grid || c.hidden % c.heads)
		abort();
	return 0;
}

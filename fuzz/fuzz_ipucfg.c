/*
 * fuzz_ipucfg.c - libFuzzer entry point for the configuration capture
 * reader (hw_replay_config, src/rt/hw.c): arbitrary bytes as an IPUCFG1
 * file, replayed into the card model. It must refuse bad files with
 * IPU_ERR_FORMAT and write nothing then; what it accepts must leave both
 * host sync marks at 0.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../src/rt/hw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static HwDev *d;
	ipu_error err;
	if (!d && !(d = hw_open("model:c600:tiles=1", NULL, &err)))
		abort();
	int rc = hw_replay_config(d, data, size, "fuzz.cfg", &err);
	if (rc && rc != IPU_ERR_FORMAT && rc != IPU_ERR_IO)
		abort();
	uint32_t g1, g2;
	if (!rc && (hw_read32(d, CARD_REG_HSP_GS1, &g1, &err) ||
	            hw_read32(d, CARD_REG_HSP_GS2, &g2, &err) || g1 || g2))
		abort();
	return 0;
}

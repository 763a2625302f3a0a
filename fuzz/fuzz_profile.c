/*
 * fuzz_profile.c - libFuzzer entry point for `ipu profile`'s reading of
 * profile.json: arbitrary bytes as the file. What profile_check accepts
 * must go through every query and a diff against itself without a crash
 * (ASan and UBSan watch: no read past a list, no float to int overflow).
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../src/profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *j = cJSON_ParseWithLength((const char *)data, size);
	Diag d;
	if (!j || profile_check(j, &d)) {
		cJSON_Delete(j);
		return 0;
	}
	FILE *f = fopen("/dev/null", "w");
	if (!f)
		abort();
	for (int by = PQ_OP; by <= PQ_KIND; by++)
		for (int json = 0; json < 2; json++)
			profile_query(j, (ProfGroup)by, json, f);
	profile_diff(j, j, "a", "b", 0, f);
	fclose(f);
	cJSON_Delete(j);
	return 0;
}

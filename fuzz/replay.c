/*
 * replay.c - runs a fuzz target's entry point once on each file named on
 * the command line, without libFuzzer: the suite replays every seed corpus
 * this way in its ordinary and sanitizer builds, so that an input the
 * fuzzers keep (or a seed that a parser change breaks) fails a plain
 * ctest test with the sanitizer's report, not only a fuzz run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 1;
		}
		size_t cap = 1 << 16, n = 0, got;
		uint8_t *buf = malloc(cap);
		while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
			n += got;
			if (n == cap) {
				uint8_t *bigger = realloc(buf, cap *= 2);
				if (!bigger)
					free(buf);
				buf = bigger;
			}
		}
		int bad = ferror(f);
		fclose(f);
		if (!buf || bad) {
			fprintf(stderr, "%s: cannot read\n", argv[i]);
			free(buf);
			return 1;
		}
		LLVMFuzzerTestOneInput(buf, n);
		free(buf);
		printf("%s: ok\n", argv[i]);
	}
	return 0;
}

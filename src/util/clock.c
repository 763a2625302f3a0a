/*
 * clock.c - a monotonic clock for timing host work (compiles, emulation
 * runs, benchmarks).
 */
#include "util.h"

#include <time.h>

double
monotonic_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

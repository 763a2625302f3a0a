/*
 * clock.c - a monotonic clock for timing host work (compiles, emulation
 * runs, benchmarks), and the process's CPU time (all its threads), which
 * other work on a shared machine does not inflate.
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

double
process_cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/*
 * progress.c - a progress line on stderr while the emulator runs a long
 * program (runner_run's hook, runner.h): the cycles done against the
 * compiler's prediction, the rate in emulated cycles per second of wall
 * time, and the time left at that rate. Only when stderr is a terminal (a
 * log file or a pipe gets nothing) and --quiet was not given; the first
 * line after a second of running (IPU_PROGRESS_AFTER=SECONDS in the
 * environment changes that, for tests), then at most four a second, erased
 * when the run ends so that the command's own output follows as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../runner/runner.h"
#include "cli.h"

typedef struct {
	double after; /* seconds of a run before the first line */
	double start; /* of the run; 0 between runs */
	double last;  /* when the line was last drawn; 0 = never */
} Progress;

static Progress progress;

/* n with thousands separators, into buf. */
static const char *
grouped(uint64_t n, char *buf, size_t len)
{
	char digits[24];
	int nd = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
	size_t at = 0;
	for (int i = 0; i < nd && at + 2 < len; i++) {
		if (i && (nd - i) % 3 == 0)
			buf[at++] = ',';
		buf[at++] = digits[i];
	}
	buf[at] = 0;
	return buf;
}

static void
show(void *ctx, uint64_t done, uint64_t predicted, int finished)
{
	Progress *p = ctx;
	double now = monotonic_seconds();
	if (finished) {
		if (p->last)
			fprintf(stderr, "\r\033[K");
		p->start = p->last = 0;
		return;
	}
	if (!p->start) { /* the run begins: the rate counts from here */
		p->start = now;
		return;
	}
	double took = now - p->start;
	if (took < p->after || now - p->last < 0.25)
		return;
	p->last = now;
	char d[32], t[32], r[32], left[48] = "";
	double rate = (double)done / took;
	if (predicted > done && rate > 0) {
		double s = (double)(predicted - done) / rate + 0.5;
		long sec = s < 1e9 ? (long)s : 999999999;
		snprintf(left, sizeof left, ", about %ld:%02ld left", sec / 60,
		         sec % 60);
	}
	fprintf(stderr, "\remulating: cycle %s", grouped(done, d, sizeof d));
	if (predicted)
		fprintf(stderr, " of %s predicted (%.0f%%)",
		        grouped(predicted, t, sizeof t),
		        100.0 * (double)done / (double)predicted);
	fprintf(stderr, ", %s cycles/s%s\033[K",
	        grouped((uint64_t)rate, r, sizeof r), left);
	fflush(stderr);
}

void
cli_progress(int quiet)
{
	const char *after = getenv("IPU_PROGRESS_AFTER");
	progress.after = after ? atof(after) : 1.0;
	runner_set_progress(!quiet && isatty(STDERR_FILENO) ? show : NULL,
	                    &progress);
}

/* test_progress.c - the progress line of long emulations (cli/progress.c):
 * on stderr when it is a terminal, erased when the run ends, off with
 * --quiet, and never in a pipe. The terminal is a pseudo-terminal, the run
 * a small GEMM (a K reduction after its superstep: two syncs, so the
 * line is drawn before the end), with the first line due at once
 * (IPU_PROGRESS_AFTER=0). */
#define _XOPEN_SOURCE 700
#include "support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char gemm_args[] =
    "bench gemm --m 128 --n 128 --k 256 --tiles 8 --threads 1";

/* Run `ipu ARGS` with stdout and stderr on a new pseudo-terminal: all it
 * wrote into out, and its exit status. */
static int
run_on_terminal(const char *args, char *out, size_t len)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(m >= 0);
	assert_int_equal(grantpt(m), 0);
	assert_int_equal(unlockpt(m), 0);
	const char *name = ptsname(m);
	assert_non_null(name);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "IPU_PROGRESS_AFTER=0 %s/ipu %s",
	         IPU_BINARY_DIR, args);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setsid();
		int s = open(name, O_RDWR);
		if (s < 0)
			_exit(127);
		dup2(s, 1);
		dup2(s, 2);
		close(m);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	size_t at = 0;
	for (;;) {
		ssize_t n = read(m, out + at, len - 1 - at);
		if (n > 0 && (at += (size_t)n) < len - 1)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		break; /* EIO once the child has closed the terminal */
	}
	out[at] = 0;
	close(m);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
test_on_a_terminal(void **state)
{
	(void)state;
	static char out[1 << 16];
	assert_int_equal(run_on_terminal(gemm_args, out, sizeof out), 0);
	const char *line = strstr(out, "emulating: cycle ");
	if (!line)
		fail_msg("no progress line in: %s", out);
	expect_in(line, " predicted (");
	expect_in(line, " cycles/s");
	/* erased before the benchmark's own report */
	const char *erase = strstr(line, "\r\033[K");
	assert_non_null(erase);
	assert_true(erase < strstr(out, "emulation "));
}

static void
test_quiet(void **state)
{
	(void)state;
	static char out[1 << 16];
	char args[256];
	snprintf(args, sizeof args, "%s --quiet", gemm_args);
	assert_int_equal(run_on_terminal(args, out, sizeof out), 0);
	assert_null(strstr(out, "emulating"));
	expect_in(out, "emulation ");
}

static void
test_not_in_a_pipe(void **state)
{
	(void)state;
	static char out[1 << 16];
	assert_int_equal(run_ipu(out, sizeof out, gemm_args), 0);
	assert_null(strstr(out, "emulating"));
	expect_in(out, "emulation ");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_on_a_terminal),
	    cmocka_unit_test(test_quiet),
	    cmocka_unit_test(test_not_in_a_pipe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

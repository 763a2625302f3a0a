/* file.c - whole-file reads and writes with diagnostics. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A device, pipe or /proc file says nothing of its length and may never
 * end (/dev/zero): it is read up to this many bytes, then refused. A
 * regular file is read at its size, whatever that is, or refused if the
 * memory for it cannot be had. */
#define READ_NONREGULAR_MAX ((size_t)256 << 20)

int
read_file(const char *path, uint8_t **data, size_t *len, Diag *d)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return diag_set(d, IPU_EIO, path, 0, 0, "cannot open: %s",
		                strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return diag_set(d, IPU_EIO, path, 0, 0, "is a directory");
	}
	int regular = S_ISREG(st.st_mode) && st.st_size > 0;
	size_t limit = regular && (uint64_t)st.st_size > READ_NONREGULAR_MAX
	                   ? (size_t)st.st_size
	                   : READ_NONREGULAR_MAX;
	/* one byte more than the size, to see the end in one pass */
	size_t cap = regular ? (size_t)st.st_size + 1 : 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return diag_set(d, IPU_ENOMEM, path, 0, 0,
		                "%llu bytes: not enough memory to read it",
		                (unsigned long long)st.st_size);
	}
	for (;;) {
		if (n == cap) {
			if (n > limit)
				break;
			cap = 2 * cap > limit + 1 ? limit + 1 : 2 * cap;
			buf = xrealloc(buf, cap);
		}
		ssize_t got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			int e = got < 0 ? errno : 0;
			close(fd);
			if (!e)
				break;
			free(buf);
			return diag_set(d, IPU_EIO, path, 0, 0,
			                "read error: %s", strerror(e));
		}
		n += (size_t)got;
	}
	if (n > limit) {
		close(fd);
		free(buf);
		if (regular)
			return diag_set(
			    d, IPU_EIO, path, 0, 0,
			    "grew past its size of %llu bytes while "
			    "being read",
			    (unsigned long long)st.st_size);
		return diag_set(
		    d, IPU_EIO, path, 0, 0,
		    "more than %zu MiB from a file that is not a "
		    "regular file (a device or a pipe that does not "
		    "end?); stopped",
		    READ_NONREGULAR_MAX >> 20);
	}
	*data = buf;
	*len = n;
	return IPU_OK;
}

/* ---- paths removed on SIGINT, SIGTERM and SIGHUP ----------------------
 *
 * Every temporary file of file_create_temp is in this table from its
 * creation to its commit or discard, and every path of file_guard until
 * file_unguard. The handler, which may run at any point of the program,
 * only reads slots marked LIVE (their path is complete) and calls unlink()
 * on files, then rmdir() on directories (emptied by the first pass), both
 * async-signal-safe; then the signal is raised again with its default
 * action, so the process ends as it would have. A slot's path is written
 * before it becomes LIVE and not touched while LIVE. With more paths
 * guarded at once than slots, the extra ones are not removed on a signal
 * (no command comes near that). */
enum { GUARD_SLOTS = 32, GUARD_FREE = 0, GUARD_CLAIMED, GUARD_LIVE };

static struct {
	atomic_int state;
	int dir;
	char path[4096];
} guarded[GUARD_SLOTS];

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void
remove_guarded_and_die(int sig)
{
	for (int dir = 0; dir < 2; dir++)
		for (int i = 0; i < GUARD_SLOTS; i++)
			if (atomic_load(&guarded[i].state) == GUARD_LIVE &&
			    guarded[i].dir == dir)
				(dir ? rmdir : unlink)(guarded[i].path);
	/* SA_RESETHAND restored the default action; it runs on return */
	raise(sig);
}

/* Once: the handler for each signal whose action is still the default
 * (one the user set to be ignored, e.g. by nohup, stays ignored). */
static void
install_cleanup(void)
{
	static atomic_flag done = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&done))
		return;
	for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals;
	     i++) {
		struct sigaction old,
		    sa = {.sa_handler = remove_guarded_and_die,
		          .sa_flags = SA_RESETHAND};
		sigemptyset(&sa.sa_mask);
		if (sigaction(cleanup_signals[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_DFL)
			sigaction(cleanup_signals[i], &sa, NULL);
	}
}

void
file_guard(const char *path, int dir)
{
	install_cleanup();
	for (int i = 0; i < GUARD_SLOTS; i++) {
		int expect = GUARD_FREE;
		if (strlen(path) < sizeof guarded[i].path &&
		    atomic_compare_exchange_strong(&guarded[i].state, &expect,
		                                   GUARD_CLAIMED)) {
			strcpy(guarded[i].path, path);
			guarded[i].dir = dir;
			atomic_store(&guarded[i].state, GUARD_LIVE);
			return;
		}
	}
}

void
file_unguard(const char *path)
{
	for (int i = 0; i < GUARD_SLOTS; i++)
		if (atomic_load(&guarded[i].state) == GUARD_LIVE &&
		    !strcmp(guarded[i].path, path)) {
			atomic_store(&guarded[i].state, GUARD_FREE);
			return;
		}
}

/* O_EXCL on a name of our own rather than mkstemp, whose files are 0600:
 * the result should get the usual umask-derived mode. */
FILE *
file_create_temp(const char *path, char *tmp, size_t tmplen, Diag *d)
{
	int fd = -1;
	for (unsigned k = 0; fd < 0 && k < 100; k++) {
		if (snprintf(tmp, tmplen, "%s.tmp.%ld.%u", path, (long)getpid(),
		             k) >= (int)tmplen) {
			diag_set(d, IPU_EIO, path, 0, 0, "path too long");
			return NULL;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd >= 0)
		file_guard(tmp, 0);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
	if (!f) {
		diag_set(d, IPU_EIO, path, 0, 0, "cannot create: %s",
		         strerror(errno));
		if (fd >= 0) {
			close(fd);
			file_unguard(tmp);
			remove(tmp);
		}
	}
	return f;
}

void
file_discard_temp(FILE *f, const char *tmp)
{
	fclose(f);
	file_unguard(tmp);
	remove(tmp);
}

/* The reason of a failed write, for "write error: ...": errno's text (a
 * full disk is "No space left on device"); -1 or 0 when it is gone. */
static const char *
write_reason(int e)
{
	return e > 0 ? strerror(e) : "an earlier write failed";
}

/* Without `overwrite`, link() publishes the file only if `path` does not
 * exist yet, atomically (rename would silently replace it). */
int
file_commit_temp(FILE *f, const char *tmp, const char *path, int overwrite,
                 Diag *d)
{
	/* a write that failed earlier fails again at the flush, with its
	 * reason in errno (ENOSPC stays ENOSPC) */
	errno = 0;
	int e = 0;
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		e = errno ? errno : EIO;
	if (!e && ferror(f))
		e = -1;
	if (fclose(f) != 0 && !e)
		e = errno ? errno : EIO;
	if (e) {
		file_unguard(tmp);
		remove(tmp);
		return diag_set(d, IPU_EIO, path, 0, 0, "write error: %s",
		                write_reason(e));
	}
	int rc = overwrite ? rename(tmp, path) : link(tmp, path);
	e = errno;
	file_unguard(tmp);
	remove(tmp);
	if (rc == 0)
		return IPU_OK;
	if (e == EEXIST)
		return diag_set(d, IPU_EIO, path, 0, 0,
		                "exists; refusing to overwrite it");
	return diag_set(d, IPU_EIO, path, 0, 0, "cannot write: %s",
	                strerror(e));
}

static int
write_whole(const char *path, const void *data, size_t len, int overwrite,
            Diag *d)
{
	char tmp[4096];
	FILE *f = file_create_temp(path, tmp, sizeof tmp, d);
	if (!f)
		return IPU_EIO;
	errno = 0;
	if (fwrite(data, 1, len, f) != len) {
		int e = errno;
		file_discard_temp(f, tmp);
		return diag_set(d, IPU_EIO, path, 0, 0, "write error: %s",
		                write_reason(e));
	}
	return file_commit_temp(f, tmp, path, overwrite, d);
}

/* Through a temporary file, so a failed write never leaves a half-written
 * file in place of the old one. */
int
write_file(const char *path, const void *data, size_t len, Diag *d)
{
	return write_whole(path, data, len, 1, d);
}

int
write_new_file(const char *path, const void *data, size_t len, Diag *d)
{
	return write_whole(path, data, len, 0, d);
}

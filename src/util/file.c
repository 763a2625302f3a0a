/* file.c - whole-file reads and writes with diagnostics. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
read_file(const char *path, uint8_t **data, size_t *len, Diag *d)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return diag_set(d, IPU_EIO, path, 0, 0, "cannot open: %s",
		                strerror(errno));
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = xmalloc(cap);
	for (;;) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
		cap *= 2;
		buf = xrealloc(buf, cap);
	}
	int err = ferror(f);
	fclose(f);
	if (err) {
		free(buf);
		return diag_set(d, IPU_EIO, path, 0, 0, "read error");
	}
	*data = buf;
	*len = n;
	return IPU_OK;
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
	FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
	if (!f) {
		diag_set(d, IPU_EIO, path, 0, 0, "cannot create: %s",
		         strerror(errno));
		if (fd >= 0) {
			close(fd);
			remove(tmp);
		}
	}
	return f;
}

/* Without `overwrite`, link() publishes the file only if `path` does not
 * exist yet, atomically (rename would silently replace it). */
int
file_commit_temp(FILE *f, const char *tmp, const char *path, int overwrite,
                 Diag *d)
{
	int err = ferror(f);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		err = 1;
	if (fclose(f) != 0 || err) {
		remove(tmp);
		return diag_set(d, IPU_EIO, path, 0, 0, "write error");
	}
	int rc = overwrite ? rename(tmp, path) : link(tmp, path);
	int e = errno;
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
	if (fwrite(data, 1, len, f) != len) {
		fclose(f);
		remove(tmp);
		return diag_set(d, IPU_EIO, path, 0, 0, "write error");
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

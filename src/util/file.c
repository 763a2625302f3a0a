/* file.c - whole-file reads and writes with diagnostics. */
#include "util.h"

#include <errno.h>
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

/* Writes data to "path.tmp"; the caller moves it into place. */
static int
write_tmp(const char *path, char *tmp, size_t tmplen, const void *data,
          size_t len, Diag *d)
{
	if (snprintf(tmp, tmplen, "%s.tmp", path) >= (int)tmplen)
		return diag_set(d, IPU_EIO, path, 0, 0, "path too long");
	FILE *f = fopen(tmp, "wb");
	if (!f)
		return diag_set(d, IPU_EIO, path, 0, 0, "cannot create: %s",
		                strerror(errno));
	size_t put = fwrite(data, 1, len, f);
	int err = fclose(f);
	if (put != len || err) {
		remove(tmp);
		return diag_set(d, IPU_EIO, path, 0, 0, "write error");
	}
	return IPU_OK;
}

/* Writes to a temporary file and renames it, so a failed write never leaves
 * a half-written file in place of the old one. */
int
write_file(const char *path, const void *data, size_t len, Diag *d)
{
	char tmp[4096];
	int r = write_tmp(path, tmp, sizeof tmp, data, len, d);
	if (r)
		return r;
	if (rename(tmp, path) != 0) {
		remove(tmp);
		return diag_set(d, IPU_EIO, path, 0, 0, "cannot rename: %s",
		                strerror(errno));
	}
	return IPU_OK;
}

/* link() instead of rename(): it fails if path exists, atomically, so an
 * existing file is never replaced. */
int
write_new_file(const char *path, const void *data, size_t len, Diag *d)
{
	char tmp[4096];
	int r = write_tmp(path, tmp, sizeof tmp, data, len, d);
	if (r)
		return r;
	int err = link(tmp, path) != 0 ? errno : 0;
	remove(tmp);
	if (err == EEXIST)
		return diag_set(d, IPU_EIO, path, 0, 0,
		                "exists; refusing to overwrite it");
	if (err)
		return diag_set(d, IPU_EIO, path, 0, 0, "cannot create: %s",
		                strerror(err));
	return IPU_OK;
}

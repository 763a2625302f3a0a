/* file.c - whole-file reads and writes with diagnostics. */
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Writes to a temporary file and renames it, so a failed write never leaves
 * a half-written file in place of the old one. */
int
write_file(const char *path, const void *data, size_t len, Diag *d)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
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
	if (rename(tmp, path) != 0) {
		remove(tmp);
		return diag_set(d, IPU_EIO, path, 0, 0, "cannot rename: %s",
		                strerror(errno));
	}
	return IPU_OK;
}

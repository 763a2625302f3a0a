/* diag.c - diagnostics, fatal internal errors and checked allocation. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void
diag_clear(Diag *d)
{
	if (d)
		memset(d, 0, sizeof *d);
}

int
diag_set(Diag *d, int code, const char *file, int line, int col,
         const char *fmt, ...)
{
	if (d) {
		va_list ap;
		snprintf(d->file, sizeof d->file, "%s", file ? file : "");
		d->line = line;
		d->col = col;
		va_start(ap, fmt);
		vsnprintf(d->msg, sizeof d->msg, fmt, ap);
		va_end(ap);
	}
	return code ? code : IPU_EINVAL;
}

void
diag_format(const Diag *d, char *buf, size_t len)
{
	size_t n = 0;
	if (d->file[0] && d->line > 0 && d->col > 0)
		n = snprintf(buf, len, "%s:%d:%d: %s", d->file, d->line, d->col,
		             d->msg);
	else if (d->file[0] && d->line > 0)
		n = snprintf(buf, len, "%s:%d: %s", d->file, d->line, d->msg);
	else if (d->file[0])
		n = snprintf(buf, len, "%s: %s", d->file, d->msg);
	else
		n = snprintf(buf, len, "%s", d->msg);
	if (n < len && d->source_line[0] && d->col > 0) {
		n += snprintf(buf + n, len - n, "\n  %s\n  %*s^",
		              d->source_line, d->col - 1, "");
	}
}

_Noreturn void
die_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ipu: internal error at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *
xaligned_alloc(size_t align, size_t n)
{
	/* aligned_alloc wants a multiple of the alignment */
	void *p = aligned_alloc(align, (n + align - 1) / align * align);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

char *
xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

void *
xmap_zero(size_t n)
{
	void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("out of memory (mapping %zu bytes)", n);
	return p;
}

void
xunmap(void *p, size_t n)
{
	if (p)
		munmap(p, n ? n : 1);
}

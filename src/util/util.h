/*
 * util.h - small helpers shared by every layer: diagnostics, bit fields,
 * checked allocation.
 *
 * Error channels (see docs/design.md):
 *   - user errors (bad input): functions return a negative int and fill a
 *     caller-owned Diag; only cli/ prints and exits.
 *   - our own bugs: assert() or die(), which abort.
 *   - guest faults (the emulated program misbehaves): a Fault in the tile.
 */
#ifndef IPU_UTIL_H
#define IPU_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum {
	IPU_OK = 0,
	IPU_EINVAL = -1, /* malformed input */
	IPU_ERANGE = -2, /* value out of range */
	IPU_EIO = -3,    /* file could not be read or written */
	IPU_ENOMEM = -4, /* allocation failed */
	IPU_EFAULT = -5, /* the emulated program faulted */
};

/* A diagnostic: where (file, line, column; 0 = unknown) and what. */
typedef struct {
	char file[256];
	int line;
	int col;
	char msg[512];
	char source_line[256]; /* the offending line, for a caret; may be "" */
} Diag;

/* diag.c */
void diag_clear(Diag *d);
/* Fill d (if not NULL) and return IPU_EINVAL or the given code. */
int diag_set(Diag *d, int code, const char *file, int line, int col,
             const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* "file:line:col: msg" plus a caret line when source_line is known. */
void diag_format(const Diag *d, char *buf, size_t len);

_Noreturn void die_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define die(...) die_at(__FILE__, __LINE__, __VA_ARGS__)

/* Zero-filled memory straight from the kernel, so that pages nobody
 * touches cost nothing (tile memories, decode caches). */
void *xmap_zero(size_t n);
void xunmap(void *p, size_t n);

void *xmalloc(size_t n);

void *xcalloc(size_t n, size_t size);
/* align a power of two; free() frees it */
void *xaligned_alloc(size_t align, size_t n);
void *xrealloc(void *p, size_t n);
/* Make room for one more element of a growable array: arr holds n of cap
 * (both lvalues), doubling from 16. */
#define GROW(arr, n, cap)                                                      \
	do {                                                                   \
		if ((n) == (cap)) {                                            \
			(cap) = (cap) ? 2 * (cap) : 16;                        \
			(arr) =                                                \
			    xrealloc((arr), (size_t)(cap) * sizeof *(arr));    \
		}                                                              \
	} while (0)
/* An array that grows by doubling from 16 and keeps no capacity (its
 * capacity is its count rounded up): full at n, so due to grow. */
static inline int
grow_full(int n)
{
	return n == 0 || (n >= 16 && (n & (n - 1)) == 0);
}
char *xstrdup(const char *s);

/* A monotonic clock in seconds, for timing host work (clock.c). */
double monotonic_seconds(void);
double process_cpu_seconds(void); /* CPU time of all threads */

/* FNV-1a, 64 bits, over n bytes, continuing from h (start with
 * FNV1A64_INIT): stable names and cache keys, not cryptographic. */
#define FNV1A64_INIT 0xcbf29ce484222325u
static inline uint64_t
fnv1a64(uint64_t h, const void *data, size_t n)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3u;
	return h;
}

/* a / b rounded up (b > 0). */
static inline uint32_t
ceil_div(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

/* v rounded up to a multiple of a (a > 0). */
static inline uint64_t
align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* Little-endian words by bytes (argument blocks, tile memory, files),
 * whatever the host's byte order; on a little-endian host, one move. */
static inline uint32_t
get_le32(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
#else
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
#endif
}

static inline void
put_le32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 4);
#else
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
#endif
}

/* Bits hi..lo of w, hi >= lo, 0 <= hi < 32. */
static inline uint32_t
bits(uint32_t w, unsigned hi, unsigned lo)
{
	uint32_t width = hi - lo + 1;
	uint32_t mask = width >= 32 ? 0xffffffffu : ((1u << width) - 1);
	return (w >> lo) & mask;
}

/* Sign-extend the low `width` bits of v. */
static inline int32_t
sext(uint32_t v, unsigned width)
{
	if (width >= 32)
		return (int32_t)v;
	uint32_t m = 1u << (width - 1);
	v &= (1u << width) - 1;
	return (int32_t)((v ^ m) - m);
}

/* File helpers (file.c). read_file returns IPU_OK and a malloc'd buffer. */
int read_file(const char *path, uint8_t **data, size_t *len, Diag *d);
int write_file(const char *path, const void *data, size_t len, Diag *d);
/* read_file reads a regular file at its size, anything else (a device, a
 * pipe) up to 256 MiB: /dev/zero is an error, not a process that fills
 * memory. */
/* Large outputs written in pieces, never half-written and never replacing
 * a file by accident: file_create_temp opens a new unique file next to
 * `path` (its name in tmp[tmplen]); file_commit_temp moves it to `path`,
 * failing if `path` exists unless `overwrite`, and removes the temporary
 * on any failure; file_discard_temp closes and removes it. Returns NULL / a
 * negative IPU_E* with d filled; a failed write says why (strerror).
 * Until committed or discarded, the temporary is also removed if the
 * process gets SIGINT, SIGTERM or SIGHUP (the first file_create_temp
 * installs a handler for each of these whose action is the default; the
 * handler removes the temporaries, then the signal takes its default
 * action). */
FILE *file_create_temp(const char *path, char *tmp, size_t tmplen, Diag *d);
int file_commit_temp(FILE *f, const char *tmp, const char *path, int overwrite,
                     Diag *d);
void file_discard_temp(FILE *f, const char *tmp);
/* Until file_unguard(path), SIGINT, SIGTERM or SIGHUP (at their default
 * action) remove path before the process ends: a file (dir 0), or a
 * directory (dir 1), after the guarded files, so those inside it go
 * first (a scratch directory and the files a command makes in it). */
void file_guard(const char *path, int dir);
void file_unguard(const char *path);
/* Like write_file, but fails (IPU_EIO, "exists") if path already exists. */
int write_new_file(const char *path, const void *data, size_t len, Diag *d);

#endif

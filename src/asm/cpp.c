/*
 * cpp.c - the C preprocessor step for .S files, as Graphcore's popc runs it
 * before assembling poplibs' codelets.
 *
 * clang's preprocessor (`clang -E`; popc is clang-based) runs as a separate
 * process without a shell: assembler-with-cpp mode, no host macros (-undef)
 * and no host headers (-nostdinc), with __IPU__ and __IPU_ARCH_VERSION__ (2
 * for the gc200, 21 for the c600) as popc defines them. Without clang, GCC's
 * `cpp` does, with one difference that matters to poplibs: it puts a blank
 * into `$\NAME` and into failed `##` pastes, which clang does not. The SDK
 * headers such code includes are written into a private temporary directory
 * from sdk.c and searched after the caller's -I directories; the directory is
 * removed afterwards. cpp's line markers carry the original file and line
 * numbers through to the assembler's messages (pass1.c reads them).
 */
#include "asmpriv.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { MAX_ARGS = 64 + 3 * 256 };

/* a sep b, malloc'd. */
static char *
concat(const char *a, const char *sep, const char *b)
{
	char *p = xmalloc(strlen(a) + strlen(sep) + strlen(b) + 1);
	sprintf(p, "%s%s%s", a, sep, b);
	return p;
}

static char *
join(const char *dir, const char *name)
{
	return concat(dir, "/", name);
}

/* Write the SDK headers under dir; -1 with d set on failure. */
static int
write_headers(const char *dir, const Chip *chip, Diag *d)
{
	for (int i = 0; sdk_header_paths[i]; i++) {
		const char *rel = sdk_header_paths[i];
		char *path = join(dir, rel);
		char *slash = strrchr(path, '/');
		*slash = 0;
		if (mkdir(path, 0700) && errno != EEXIST) {
			diag_set(d, IPU_EIO, path, 0, 0, "cannot create: %s",
			         strerror(errno));
			free(path);
			return -1;
		}
		*slash = '/';
		char *text = sdk_header_text(rel, chip);
		int r = write_file(path, text, strlen(text), d);
		free(text);
		free(path);
		if (r)
			return -1;
	}
	return 0;
}

/* Remove what write_headers and the cpp run left in dir, then dir. */
static void
remove_tree(const char *dir)
{
	static const char *const files[] = {"out.s", "err.txt"};
	for (int i = 0; sdk_header_paths[i]; i++) {
		char *path = join(dir, sdk_header_paths[i]);
		unlink(path);
		*strrchr(path, '/') = 0;
		rmdir(path);
		free(path);
	}
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char *path = join(dir, files[i]);
		unlink(path);
		free(path);
	}
	rmdir(dir);
}

/* argv[n++] = s, within bounds. */
static int
push(char **argv, int *n, char *s)
{
	if (*n + 2 > MAX_ARGS)
		return -1;
	argv[(*n)++] = s;
	return 0;
}

/* The first lines of what cpp printed, for a message. */
static void
quote_output(char *buf, size_t len, const uint8_t *text, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < len; i++)
		buf[k++] = text[i] == '\n' && i + 1 < n ? ';' : (char)text[i];
	while (k && (buf[k - 1] == '\n' || buf[k - 1] == ';'))
		k--;
	buf[k] = 0;
}

int
asm_preprocess(const char *path, const AsmCppOptions *o, char **text,
               size_t *len, Diag *d)
{
	const Chip *chip = o && o->chip ? o->chip : chip_default();
	const char *tmp = getenv("TMPDIR");
	char *dir = join(tmp && *tmp ? tmp : "/tmp", "ipu-asm-XXXXXX");
	int r = IPU_EIO;
	diag_clear(d);
	*text = NULL;
	*len = 0;
	if (!mkdtemp(dir)) {
		diag_set(d, IPU_EIO, dir, 0, 0,
		         "cannot create a temporary directory: %s",
		         strerror(errno));
		free(dir);
		return IPU_EIO;
	}
	char *out = join(dir, "out.s"), *err = join(dir, "err.txt");
	char *argv[MAX_ARGS], *owned[MAX_ARGS];
	int n = 0, nowned = 0;
	int bad =
	    o && (o->ndefine + o->nundef + 2 * o->ninclude > MAX_ARGS - 16);
	char arch[40];
	snprintf(arch, sizeof arch, "-D__IPU_ARCH_VERSION__=%d",
	         chip->arch == ARCH_IPU21 ? 21 : 2);
	char *fixed[] = {
	    "clang",  "-E",        "-x",        "assembler-with-cpp",
	    "-undef", "-nostdinc", "-D__IPU__", arch};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		bad |= push(argv, &n, fixed[i]);
	for (int i = 0; o && !bad && i < o->ndefine; i++)
		bad |= push(argv, &n,
		            owned[nowned++] = concat("-D", "", o->define[i]));
	for (int i = 0; o && !bad && i < o->nundef; i++)
		bad |= push(argv, &n,
		            owned[nowned++] = concat("-U", "", o->undef[i]));
	for (int i = 0; o && !bad && i < o->ninclude; i++) {
		bad |= push(argv, &n, "-I");
		bad |= push(argv, &n, (char *)o->include[i]);
	}
	char *io[] = {"-I", dir, "-o", out, (char *)path};
	for (size_t i = 0; i < sizeof io / sizeof io[0]; i++)
		bad |= push(argv, &n, io[i]);
	argv[n] = NULL;
	if (bad) {
		diag_set(d, IPU_EINVAL, path, 0, 0,
		         "too many preprocessor options");
		r = IPU_EINVAL;
		goto done;
	}
	if (write_headers(dir, chip, d))
		goto done;

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, err,
	                                 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pid_t pid;
	int e = posix_spawnp(&pid, "clang", &fa, NULL, argv, environ);
	if (e == ENOENT) { /* GCC's cpp: no "-E" */
		argv[1] = "cpp";
		e = posix_spawnp(&pid, "cpp", &fa, NULL, argv + 1, environ);
	}
	posix_spawn_file_actions_destroy(&fa);
	int status = 0;
	if (e == 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	uint8_t *msg = NULL;
	size_t nmsg = 0;
	Diag ignore;
	read_file(err, &msg, &nmsg, &ignore);
	char quoted[sizeof d->msg - 64];
	quote_output(quoted, sizeof quoted, msg ? msg : (uint8_t *)"", nmsg);
	free(msg);
	if (e) {
		diag_set(d, IPU_EIO, path, 0, 0,
		         "cannot run the C preprocessor (clang or cpp, Debian "
		         "packages clang, cpp): %s",
		         strerror(e));
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		diag_set(d, IPU_EINVAL, path, 0, 0, "preprocessor failed: %s",
		         quoted[0] ? quoted : "no message");
		r = IPU_EINVAL;
	} else {
		uint8_t *data;
		if (read_file(out, &data, len, d) == 0) {
			*text = (char *)data;
			r = IPU_OK;
			if (quoted[0]) /* warnings: the caller may show them */
				snprintf(d->msg, sizeof d->msg, "%s", quoted);
		}
	}
done:
	remove_tree(dir);
	for (int i = 0; i < nowned; i++)
		free(owned[i]);
	free(out);
	free(err);
	free(dir);
	return r;
}

/*
 * outputs.c - the one rule for every command's output files (docs/files.md),
 * checked on the command line before any work is done, so that a run of
 * minutes never ends in "exists" or in a missing folder, and nothing the
 * user gave is lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Where a path's file is, or would be if it does not exist yet: the file's
 * device and inode (stat follows symlinks, so a link to a file is that
 * file), else its folder's and its last name. */
typedef struct {
	int exists;
	dev_t dev;
	ino_t ino;
	const char *name; /* the last component, when it does not exist */
} Where;

/* The folder part of path ("." for a bare name) in buf. */
static void
folder_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(buf, len, ".");
	else if (slash == path)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

/* 0, or -1 with errno set when the folder cannot be looked at. */
static int
where(const char *path, Where *w)
{
	struct stat st;
	if (stat(path, &st) == 0) {
		*w = (Where){1, st.st_dev, st.st_ino, NULL};
		return 0;
	}
	char dir[4096];
	folder_of(path, dir, sizeof dir);
	if (stat(dir, &st) != 0)
		return -1;
	const char *slash = strrchr(path, '/');
	*w = (Where){0, st.st_dev, st.st_ino, slash ? slash + 1 : path};
	return 0;
}

static int
same_place(const Where *a, const Where *b)
{
	return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino &&
	       (a->exists || !strcmp(a->name, b->name));
}

/* The output's folder exists, is a folder and can be written in. */
static int
check_folder(const char *cmd, const char *out)
{
	char dir[4096];
	folder_of(out, dir, sizeof dir);
	struct stat st;
	const char *why = NULL;
	if (stat(dir, &st) != 0)
		why = errno == ENOENT ? "does not exist" : strerror(errno);
	else if (!S_ISDIR(st.st_mode))
		why = "is not a folder";
	else if (access(dir, W_OK | X_OK) != 0)
		why = strerror(errno);
	if (!why)
		return 0;
	fprintf(stderr, "ipu %s: cannot write %s: the folder %s %s\n", cmd, out,
	        dir, why);
	return 1;
}

int
cli_check_outputs(const char *cmd, const char *const *out, int nout,
                  const char *const *in, int nin, int force)
{
	for (int i = 0; i < nout; i++) {
		if (!out[i])
			continue;
		Where wo, w;
		if (check_folder(cmd, out[i]))
			return 1;
		if (where(out[i], &wo) != 0) {
			fprintf(stderr, "ipu %s: cannot write %s: %s\n", cmd,
			        out[i], strerror(errno));
			return 1;
		}
		for (int k = 0; k < nin; k++)
			if (in[k] && where(in[k], &w) == 0 &&
			    same_place(&wo, &w)) {
				fprintf(stderr,
				        "ipu %s: output %s is also the input "
				        "%s; refusing to overwrite it (even "
				        "with --force)\n",
				        cmd, out[i], in[k]);
				return 2;
			}
		for (int k = 0; k < i; k++)
			if (out[k] && where(out[k], &w) == 0 &&
			    same_place(&wo, &w)) {
				fprintf(stderr,
				        "ipu %s: %s and %s are the same output "
				        "file\n",
				        cmd, out[k], out[i]);
				return 2;
			}
		struct stat st;
		if (stat(out[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			fprintf(stderr, "ipu %s: output %s is a folder\n", cmd,
			        out[i]);
			return 1;
		}
		/* lstat: a symlink there, even a dangling one, is a file */
		if (!force && lstat(out[i], &st) == 0) {
			fprintf(stderr,
			        "ipu %s: %s exists; refusing to overwrite it "
			        "(--force replaces it)\n",
			        cmd, out[i]);
			return 1;
		}
	}
	return 0;
}

/*
 * profile_opts.c - the options every command that runs the chip shares for
 * profiles and debugging (`--profile DIR`, `--profile-tiles`, `--break`,
 * `--watch`, `--show-tile`, `--dump-mem`), and what the commands do with
 * the session after the run (docs/profile.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_profile.h"

const char cli_profile_usage[] =
    "  --profile DIR  write DIR/profile.json, trace.json (Perfetto) and "
    "report.html\n"
    "                 (docs/profile.md); --force replaces them\n"
    "  --profile-tiles LIST  tiles with their own lanes in the trace and "
    "report,\n"
    "                 e.g. 0,5,100-103 (default: six across the chip)\n"
    "  --break STEP[@I] | 0xPC  stop every tile at the start of step STEP "
    "(its I-th\n"
    "                 run in a loop, from 0), or where any context would "
    "issue at PC;\n"
    "                 then say where every tile stands and show one\n"
    "  --watch TILE:ADDR[:LEN]  stop at the first write to LEN bytes "
    "(default 4)\n"
    "                 at ADDR of TILE (a store or the exchange)\n";

const char cli_profile_show_usage[] =
    "  --show-tile T  the tile shown when the run stops (default: the "
    "first that did)\n"
    "  --dump-mem ADDR:LEN  also show LEN bytes of its memory at ADDR "
    "(repeatable)\n";

int
cli_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-')
		return -1;
	*v = x;
	return 0;
}

int
cli_parse_range(const char *s, uint32_t *addr, uint32_t *len)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%s", s);
	char *colon = strchr(buf, ':');
	uint64_t a, l;
	if (!colon)
		return -1;
	*colon = 0;
	if (cli_parse_u64(buf, &a) || cli_parse_u64(colon + 1, &l) ||
	    a > 0xffffffffu || l == 0 || l > 0x100000)
		return -1;
	*addr = (uint32_t)a;
	*len = (uint32_t)l;
	return 0;
}

/* STEP[@ITER] or 0xPC. */
static int
parse_break(const char *v, ProfileOptions *o)
{
	uint64_t x;
	if (!strncmp(v, "0x", 2) || !strncmp(v, "0X", 2)) {
		if (cli_parse_u64(v, &x) || x > 0xffffffffu)
			return -1;
		o->break_pc = (int64_t)x;
		return 0;
	}
	char buf[64];
	snprintf(buf, sizeof buf, "%s", v);
	char *at = strchr(buf, '@');
	uint64_t it = 0;
	if (at) {
		*at = 0;
		if (cli_parse_u64(at + 1, &it) || it > 0xffffffffu)
			return -1;
	}
	if (cli_parse_u64(buf, &x) || x > 0x7fffffff)
		return -1;
	o->break_step = (int64_t)x;
	o->break_iter = (uint32_t)it;
	return 0;
}

/* TILE:ADDR[:LEN] */
static int
parse_watch(const char *v, ProfileOptions *o)
{
	char buf[96];
	snprintf(buf, sizeof buf, "%s", v);
	char *a = strchr(buf, ':');
	if (!a)
		return -1;
	*a++ = 0;
	char *l = strchr(a, ':');
	if (l)
		*l++ = 0;
	uint64_t t, addr, len = 4;
	if (cli_parse_u64(buf, &t) || cli_parse_u64(a, &addr) ||
	    (l && cli_parse_u64(l, &len)) || t > 0xffff || addr > 0xffffffffu ||
	    !len || len > 0x100000)
		return -1;
	o->watch_tile = (uint32_t)t;
	o->watch_addr = (uint32_t)addr;
	o->watch_len = (uint32_t)len;
	return 0;
}

void
cli_profile_defaults(ProfileOptions *o, const char *command)
{
	*o = (ProfileOptions){.command = command,
	                      .break_step = -1,
	                      .break_pc = -1,
	                      .show_tile = -1};
}

int
cli_profile_opt(const char *cmd, int argc, char **argv, int *i,
                ProfileOptions *o, int run, int *bad)
{
	int missing = 0;
	const char *v;
	if ((v = cli_opt_value(argc, argv, i, "--profile", &missing))) {
		o->dir = v;
	} else if ((v = cli_opt_value(argc, argv, i, "--profile-tiles",
	                              &missing))) {
		o->lanes = v;
	} else if ((v = cli_opt_value(argc, argv, i, "--break", &missing))) {
		if (parse_break(v, o)) {
			fprintf(stderr,
			        "ipu %s: --break wants STEP, STEP@ITERATION or "
			        "0xPC, got '%s'\n",
			        cmd, v);
			*bad = 1;
		}
	} else if ((v = cli_opt_value(argc, argv, i, "--watch", &missing))) {
		if (parse_watch(v, o)) {
			fprintf(stderr,
			        "ipu %s: --watch wants TILE:ADDR[:LEN] (LEN "
			        "1..1048576), got '%s'\n",
			        cmd, v);
			*bad = 1;
		}
	} else if (run && (v = cli_opt_value(argc, argv, i, "--show-tile",
	                                     &missing))) {
		uint64_t t;
		if (cli_parse_u64(v, &t) || t > 0xffff) {
			fprintf(stderr,
			        "ipu %s: --show-tile wants a tile number, got "
			        "'%s'\n",
			        cmd, v);
			*bad = 1;
		}
		o->show_tile = (int64_t)t;
	} else if (run &&
	           (v = cli_opt_value(argc, argv, i, "--dump-mem", &missing))) {
		if (o->ndump == 16 ||
		    cli_parse_range(v, &o->dump_addr[o->ndump],
		                    &o->dump_len[o->ndump])) {
			fprintf(stderr,
			        "ipu %s: --dump-mem wants ADDR:LEN (at most "
			        "16), got '%s'\n",
			        cmd, v);
			*bad = 1;
		}
		o->ndump++;
	} else {
		if (missing) {
			fprintf(stderr, "ipu %s: missing value for '%s'\n", cmd,
			        argv[*i]);
			*bad = 1;
			return 1;
		}
		return 0;
	}
	return 1;
}

int
cli_profile_check(const char *cmd, const ProfileOptions *o,
                  const char *const *in, int nin)
{
	if (!o->dir)
		return 0;
	static const char *const name[] = {"profile.json", "trace.json",
	                                   "report.html"};
	char path[3][4200];
	const char *out[3];
	for (int i = 0; i < 3; i++) {
		snprintf(path[i], sizeof path[i], "%s/%s", o->dir, name[i]);
		out[i] = path[i];
	}
	/* DIR is made if it is missing (its parent must exist); then the
	 * rule holds for each file in it */
	if (mkdir(o->dir, 0777) && errno != EEXIST) {
		fprintf(stderr,
		        "ipu %s: --profile %s: cannot make the folder: "
		        "%s\n",
		        cmd, o->dir, strerror(errno));
		return 1;
	}
	return cli_check_outputs(cmd, out, 3, in, nin, o->force);
}

int
cli_profile_finish(const char *cmd, ProfileSession *s, const ProfileFacts *f,
                   int failed)
{
	const char *stop = profile_stop_text(s);
	int asked = profile_stopped_as_asked(s);
	if (stop)
		fputs(stop, asked ? stdout : stderr);
	Diag d;
	diag_clear(&d);
	int rc = failed && !asked;
	if (profile_finish(s, f, &d)) {
		cli_print_diag(&d);
		rc = 1;
	} else if (profile_dir(s)) {
		printf("profile         %s/report.html (and profile.json, "
		       "trace.json for Perfetto)\n",
		       profile_dir(s));
	}
	(void)cmd;
	return rc;
}

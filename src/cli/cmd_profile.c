/*
 * cmd_profile.c - `ipu profile query DIR --group-by op|kernel|step|tile|kind
 * [--json]` and `ipu profile diff DIR_A DIR_B [--json]`: tables over the
 * profile.json a run wrote with --profile DIR (docs/profile.md).
 *
 * Exit status: 0 success, 1 a profile that cannot be read, 2 usage.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "cli_profile.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: ipu profile query DIR --group-by op|kernel|step|tile|"
	        "kind [--json]\n"
	        "       ipu profile diff DIR_A DIR_B [--json]\n"
	        "  query  the run's cycles grouped by op (the ops a step "
	        "serves), kernel,\n"
	        "         step or kind (exchange, sync, compute, loop), with "
	        "their share,\n"
	        "         prediction, MACs, MFU and bytes sent; or per tile "
	        "(busiest first)\n"
	        "  diff   which ops got faster or slower from A to B, by how "
	        "many cycles\n"
	        "  DIR is a folder a run wrote with --profile DIR.\n"
	        "Exit status: 0 success, 1 a profile that cannot be read, 2 "
	        "usage.\n");
}

static int
load(const char *dir, cJSON **j)
{
	Diag d;
	diag_clear(&d);
	if (profile_load(dir, j, &d)) {
		cli_print_diag(&d);
		return 1;
	}
	return 0;
}

int
cmd_profile(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	int query = !strcmp(argv[1], "query"), diff = !strcmp(argv[1], "diff");
	const char *dir[2] = {NULL, NULL}, *by = NULL;
	int json = 0, ndir = 0, bad = !query && !diff;
	for (int i = 2; i < argc && !bad; i++) {
		int missing = 0;
		const char *v;
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (query && (v = cli_opt_value(argc, argv, &i,
		                                       "--group-by", &missing)))
			by = v;
		else if (argv[i][0] != '-' && ndir < 1 + diff)
			dir[ndir++] = argv[i];
		else {
			fprintf(stderr, "ipu profile: %s '%s'\n",
			        missing ? "missing value for"
			                : "unexpected argument",
			        argv[i]);
			bad = 1;
		}
	}
	static const char *const groups[] = {"op", "kernel", "step", "tile",
	                                     "kind"};
	int g = 0;
	while (by && g < 5 && strcmp(by, groups[g]))
		g++;
	if (!bad && query && (!by || g == 5)) {
		fprintf(stderr,
		        "ipu profile query: --group-by wants op, kernel, step, "
		        "tile or kind\n");
		bad = 1;
	}
	if (!bad && ndir != 1 + diff) {
		fprintf(stderr, "ipu profile %s: %s\n", argv[1],
		        diff ? "two profile folders are needed"
		             : "a profile folder is needed");
		bad = 1;
	}
	if (bad) {
		usage(stderr);
		return 2;
	}
	cJSON *a = NULL, *b = NULL;
	int rc = load(dir[0], &a);
	if (!rc && diff)
		rc = load(dir[1], &b);
	if (!rc)
		rc = query ? profile_query(a, (ProfGroup)g, json, stdout)
		           : profile_diff(a, b, dir[0], dir[1], json, stdout);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return rc;
}

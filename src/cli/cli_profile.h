/* cli_profile.h - the commands' options for profiles and debugging
 * (profile_opts.c, docs/profile.md); apart from cli.h so that the
 * assembler's own executable needs none of it. */
#ifndef IPU_CLI_PROFILE_H
#define IPU_CLI_PROFILE_H

#include "../profile/profile.h"
#include "cli.h"

/* Profiles and debugging (profile_opts.c, docs/profile.md). The usage
 * lines of the options; cli_profile_show_usage's only for the commands
 * that run compiled programs (`ipu sim` has its own --tile and
 * --dump-mem). */
extern const char cli_profile_usage[], cli_profile_show_usage[];
void cli_profile_defaults(ProfileOptions *o, const char *command);
/* 1 if argv[*i] is one of the options (read into o, *i advanced; *bad
 * set after a message if its value is wrong), else 0. run: also
 * --show-tile and --dump-mem. */
int cli_profile_opt(const char *cmd, int argc, char **argv, int *i,
                    ProfileOptions *o, int run, int *bad);
/* --profile DIR's files by the outputs rule (DIR made if missing). */
int cli_profile_check(const char *cmd, const ProfileOptions *o,
                      const char *const *in, int nin);
/* After the run: where the tiles stopped (stdout when the user asked
 * for the stop, else stderr), the profile's files and where they are.
 * Returns the exit status: failed, unless the run stopped as asked. */
int cli_profile_finish(const char *cmd, ProfileSession *s,
                       const ProfileFacts *f, int failed);
#endif

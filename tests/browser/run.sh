#!/bin/sh
# run.sh DIR - the profile report in headless Chromium (report_test.mjs) on
# the profiles test_profile leaves in DIR: a loop that ran (report_loop)
# and a model that did not fit (report_unfit); screenshots beside them.
# Exit 77 (ctest's skip) when Debian's chromium or npm's playwright-core
# is missing: scripts/install-deps.sh installs both.
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
if [ ! -x /usr/bin/chromium ] || [ ! -d "$here/node_modules/playwright-core" ]; then
	echo "skipped: needs /usr/bin/chromium and $here/node_modules (scripts/install-deps.sh)"
	exit 77
fi
cd "$here" || exit 1
rc=0
for p in report_loop report_unfit; do
	node report_test.mjs "$dir/$p" --screenshot "$dir/$p.png" || rc=1
done
exit $rc

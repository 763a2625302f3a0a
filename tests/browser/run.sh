#!/bin/sh
# run.sh DIR - the profile report in headless Chromium (report_test.mjs) on
# the profiles test_profile leaves in DIR: a loop that ran (report_loop)
# and a model that did not fit (report_unfit); screenshots beside them.
# Exit 77 (ctest's skip) only when Debian's chromium is not installed; with
# chromium there, a missing Node.js or playwright-core is a failure, since
# scripts/install-deps.sh installs all three.
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
if [ ! -x /usr/bin/chromium ]; then
	echo "skipped: no /usr/bin/chromium (Debian's chromium; scripts/install-deps.sh installs it)"
	exit 77
fi
if ! command -v node >/dev/null; then
	echo "FAIL: chromium is installed but node is not (scripts/install-deps.sh)"
	exit 1
fi
if [ ! -f "$here/node_modules/playwright-core/package.json" ]; then
	echo "FAIL: $here/node_modules has no playwright-core (scripts/install-deps.sh runs npm ci there)"
	exit 1
fi
cd "$here" || exit 1
rc=0
for p in report_loop report_unfit; do
	node report_test.mjs "$dir/$p" --screenshot "$dir/$p.png" || rc=1
done
exit $rc

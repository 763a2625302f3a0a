#!/usr/bin/env bash
# Builds and runs the whole test suite: the release build's tests, the same
# tests under AddressSanitizer + UBSan, a short run of every fuzz target, and
# the formatting check. This is what .ci/run runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

passed=0
failed=0
# Run ctest in a build directory and add its counts to the totals.
run_ctest() {
	local log
	log=$(mktemp)
	(cd "$1" && ctest --output-on-failure -j "$jobs" -LE long) | tee "$log" || true
	local total bad
	total=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2/p' "$log")
	bad=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of.*/\1/p' "$log")
	rm -f "$log"
	if [ -z "$total" ]; then failed=$((failed + 1)); return; fi
	passed=$((passed + total - bad))
	failed=$((failed + bad))
}

# The report's browser check (test_report_browser) needs Debian's chromium,
# which install-deps.sh installs; say so if it will be skipped.
if [ ! -x /usr/bin/chromium ]; then
	echo "note: test_report_browser will be skipped: no /usr/bin/chromium"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== release build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"

# The sanitizer and fuzz builds run behind the release build's tests, then
# behind the sanitizer build's, at the lowest priority (nice 19): they take
# the cores the tests leave idle (a test waiting on a child, the queue's
# last tests running alone) and the tests keep their pace. Each build's
# output goes to a log, printed if it fails; its status to a file.
(
	rc=0
	nice -n 19 bash -c "cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug \
		-DCMAKE_C_FLAGS_DEBUG=-g1 -DIPU_SANITIZE=ON >/dev/null &&
		cmake --build build-asan -j $jobs" \
		>"$work/build-asan.log" 2>&1 || rc=$?
	echo "$rc" >"$work/build-asan.rc.new"
	mv "$work/build-asan.rc.new" "$work/build-asan.rc"
	[ "$rc" -eq 0 ] || exit 0
	nice -n 19 bash -c "cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang \
		-DIPU_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-g1 \
		>/dev/null && cmake --build build-fuzz -j $jobs --target fuzzers" \
		>"$work/build-fuzz.log" 2>&1 || rc=$?
	echo "$rc" >"$work/build-fuzz.rc.new"
	mv "$work/build-fuzz.rc.new" "$work/build-fuzz.rc"
) &
builds=$!
# Waits for a background build's status file; prints its log's tail and
# stops the suite if it failed (as a failed build in the foreground did).
await_build() {
	while [ ! -f "$work/$1.rc" ] && kill -0 "$builds" 2>/dev/null; do
		sleep 1
	done
	if [ "$(cat "$work/$1.rc" 2>/dev/null)" != 0 ]; then
		echo "$1 failed:"
		tail -n 60 "$work/$1.log"
		exit 1
	fi
	tail -n 1 "$work/$1.log"
}

run_ctest build

echo "== sanitizer build (ASan + UBSan)"
await_build build-asan
ASAN_OPTIONS=detect_leaks=1 run_ctest build-asan

echo "== fuzz targets (libFuzzer, short runs)"
await_build build-fuzz
wait "$builds"
# One fuzz target a core at a time, 5 s each (a smoke run; longer
# campaigns by hand); each writes its exit status to a file.
fuzz_one() {
	local f=$1 name
	name=$(basename "$f")
	mkdir -p "$work/$name"
	# Seeds are copied so that new inputs never land in the source tree.
	if [ -d "fuzz/corpus/$name" ]; then cp fuzz/corpus/"$name"/* "$work/$name/"; fi
	local rc=0
	"$f" -max_total_time=5 -seed=1 -artifact_prefix="$work/$name-" \
		"$work/$name" >"$work/$name.log" 2>&1 || rc=$?
	echo "$rc" >"$work/$name.rc"
}
for f in build-fuzz/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
	fuzz_one "$f" &
done
wait
for f in build-fuzz/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	if [ "$(cat "$work/$name.rc" 2>/dev/null)" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		# the sanitizer's report and the input that caused it
		echo "$name failed:"
		grep -A 30 -m 1 '^==[0-9]*==ERROR\|runtime error' \
			"$work/$name.log" || true
		for crash in "$work/$name"-*; do
			[ -f "$crash" ] || continue
			echo "input $crash (base64):"
			base64 "$crash" | head -c 4000
			echo
		done
	fi
	tail -n 1 "$work/$name.log"
done

echo "== formatting"
if bash scripts/format.sh --check; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
fi

echo "suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

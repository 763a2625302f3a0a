#!/usr/bin/env bash
# Builds and runs the whole test suite: the release build's tests, the same
# tests under AddressSanitizer + UBSan, a short run of every fuzz target, and
# the formatting check. This is what .ci/run runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

echo "== release build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

echo "== sanitizer build (ASan + UBSan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DIPU_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$jobs")

echo "== fuzz targets (libFuzzer, short runs)"
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DIPU_FUZZ=ON \
	-DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-fuzz -j "$jobs" --target fuzzers
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for f in build-fuzz/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	mkdir -p "$work/$name"
	# Seeds are copied so that new inputs never land in the source tree.
	if [ -d "fuzz/corpus/$name" ]; then cp fuzz/corpus/"$name"/* "$work/$name/"; fi
	"$f" -max_total_time=15 -seed=1 "$work/$name" 2>&1 | tail -n 2
done

echo "== formatting"
bash scripts/format.sh --check

#!/usr/bin/env bash
# clang-format over every C file; --check fails if anything would change.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h')
if [ "${1:-}" = "--check" ]; then
	clang-format --dry-run --Werror $files
	echo "formatting ok"
else
	clang-format -i $files
fi

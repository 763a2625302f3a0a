#!/usr/bin/env bash
# The main job on its embedded default: install what is needed, build, and
# run the one-tile AMP matrix-product benchmark on the emulated C600.
# (When the compiler lands, this becomes the SigLIP run.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target ipu
build/ipu bench tile-amp --rows 1024 --dtype f16

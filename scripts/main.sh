#!/usr/bin/env bash
# The main job on its embedded default: install what is needed, build, and
# compile a 1024^3 f16 matrix product for the whole C600, run it on the
# emulated chip and check it against an f64 reference (cycles, MFU, error).
# (When the SigLIP operators land, this becomes the SigLIP run.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target ipu
build/ipu bench gemm --m 1024 --n 1024 --k 1024 --dtype f16

#!/usr/bin/env bash
# Makes `import ipu` work in Debian's python3 (CPython + numpy): builds the
# shared library and the package into build/python and puts a .pth file
# pointing there into python3's site directory. Re-run after a rebuild is
# not needed: the .pth names the build tree.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target ipu_py
site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
sudo=""
if [ ! -w "$site" ] && [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo mkdir -p "$site"
echo "$(pwd)/build/python" | $sudo tee "$site/ipu.pth" >/dev/null
/usr/bin/python3 -c 'import ipu; print("ipu:", ipu.__file__)'

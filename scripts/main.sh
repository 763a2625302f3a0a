#!/usr/bin/env bash
# The main job on its embedded default: install what is needed, build, and
# run the SigLIP base vision tower (google/siglip-base-patch16-224 names and
# shapes, synthetic weights generated on the first run, seeded) on a real
# photograph (skimage's cat, from Debian's python3-skimage) on the emulated
# C600 in f16; then the independent PyTorch reference (tools/siglip_ref.py,
# f32, its own PIL preprocessing of the same photo) and the cosine between
# the two embeddings. Takes a few minutes: the emulator runs every cycle of
# every tile (docs/siglip.md). The run's profile (docs/profile.md) goes to
# build/siglip-base/profile: report.html, profile.json, trace.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target ipu
dir=build/siglip-base
photo=/usr/lib/python3/dist-packages/skimage/data/chelsea.png
mkdir -p "$dir"
if [ ! -f "$dir/w.safetensors" ]; then
	build/ipu model gen --preset base --seed 1 --out "$dir/w.safetensors" \
		--config-out "$dir/config.json" --force
fi
build/ipu run siglip --weights "$dir/w.safetensors" --config "$dir/config.json" \
	--image "$photo" --dtype f16 --out "$dir/embedding.npy" --force \
	--threads "$(nproc)" --profile "$dir/profile"
echo "reference (PyTorch, f32):"
/usr/bin/python3 tools/siglip_ref.py run --weights "$dir/w.safetensors" \
	--config "$dir/config.json" --image "$photo" --dtype f32 \
	--out "$dir/reference.npy" --force >/dev/null
/usr/bin/python3 tools/siglip_ref.py compare "$dir/embedding.npy" \
	"$dir/reference.npy" --min-cos 0.999
echo "profile of the run: $dir/profile/report.html (open it in a browser;"
echo "  build/ipu profile query $dir/profile --group-by op for the table)"

#!/bin/sh
# base.sh IPU DIR - the issue's check at full size (ctest -L long): the
# SigLIP base tower, as scripts/main.sh runs it (seeded synthetic weights,
# skimage's cat, f16, the whole C600), with --profile DIR/profile, then
# report_test.mjs on that profile in headless Chromium, with a screenshot
# (DIR/report.png; docs/profile.md keeps one). Minutes of emulation.
# Exit 77 (skip) only when Debian's chromium or the photograph is missing.
here=$(cd "$(dirname "$0")" && pwd)
ipu=$1
dir=$2
photo=/usr/lib/python3/dist-packages/skimage/data/chelsea.png
for f in /usr/bin/chromium "$photo"; do
	if [ ! -e "$f" ]; then
		echo "skipped: no $f (scripts/install-deps.sh installs it)"
		exit 77
	fi
done
set -e
mkdir -p "$dir"
if [ ! -f "$dir/w.safetensors" ]; then
	"$ipu" model gen --preset base --seed 1 --out "$dir/w.safetensors" \
		--config-out "$dir/config.json" --force
fi
"$ipu" run siglip --weights "$dir/w.safetensors" --config "$dir/config.json" \
	--image "$photo" --dtype f16 --out "$dir/embedding.npy" --force \
	--threads "$(nproc)" --profile "$dir/profile"
cd "$here"
node report_test.mjs "$dir/profile" --screenshot "$dir/report.png"

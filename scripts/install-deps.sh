#!/usr/bin/env bash
# Installs what the project needs from Debian 12's packages, and the one
# npm package of the browser check (see README.md, "Dependencies", for why
# each one is here). Does nothing when all are present, so the test and
# main scripts can call it every time.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(
	build-essential # gcc, make: the C11 toolchain
	cmake # build and test driver (CTest)
	clang # libFuzzer targets (-fsanitize=fuzzer)
	libclang-rt-14-dev # clang's sanitizer and fuzzer runtimes
	clang-format # the project's formatting check
	libcmocka-dev # unit-test library
	python3-numpy # independent float16 reference in tests
	libopenblas-dev # host SGEMM rate in `ipu bench sim`
	libcjson-dev # config.json of Hugging Face checkpoints
	libpng-dev # PNG input images
	libjpeg62-turbo-dev # JPEG input images
	zlib1g-dev # the package file's CRC-32
	python3-torch # the independent SigLIP reference (tests)
	python3-torchvision # torchvision's ViT-B/16, exported to ONNX in the tests
	python3-pil # the SigLIP processor's bicubic resize, as a reference (tests)
	python3-skimage # real photographs (its cat) for demos and tests
	libprotobuf-c-dev # the ONNX reader's protobuf runtime
	protobuf-c-compiler # protoc-c: C code for onnx.proto at build time
	libonnx-dev # onnx.proto, the ONNX file format's schema
	chromium # the profile report checked in a real browser (tests)
)
# Node.js and npm drive chromium in that check (tests/browser); another
# Node.js already installed (e.g. NodeSource's, which bundles npm) is used
# as it is.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	pkgs+=(nodejs npm)
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
	echo "installing: ${missing[*]}"
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# npm's playwright-core (the version in tests/browser/package-lock.json),
# which drives Debian's chromium; it downloads no browser of its own.
browser=tests/browser
if [ ! -f "$browser/node_modules/playwright-core/package.json" ]; then
	echo "installing: npm packages of $browser"
	(cd "$browser" && npm ci --no-audit --no-fund --loglevel=error)
fi

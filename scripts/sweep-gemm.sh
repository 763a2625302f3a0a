#!/usr/bin/env bash
# sweep-gemm.sh - the GEMM sweep of docs/bench-gemm.md: runs
# `ipu bench gemm --json` over a list of shapes and prints a Markdown table
# (cycles emulated and predicted, the prediction's error, MFU, the error
# against the f64 reference, compile and emulation times) and a summary
# line (largest prediction error, shapes within 15%).
#
# usage: scripts/sweep-gemm.sh [SHAPES]
#   SHAPES  a file of "DTYPE M N K" lines (# comments allowed); default:
#           the built-in list below
# environment:
#   IPU      the ipu program (default build/ipu)
#   THREADS  host threads of the emulator (default 2)
#   CHIP     c600 or gc200 (default c600; gc200 has no f8)
#   JSONL    also append every JSON line to this file
set -euo pipefail
cd "$(dirname "$0")/.."
ipu=${IPU:-build/ipu}
threads=${THREADS:-2}
chip=${CHIP:-c600}

default_shapes() {
	cat <<'EOF'
f16 16 16 16
f16 1 256 256
f16 7 100 300
f16 64 64 64
f16 128 128 128
f16 256 256 256
f16 269 269 269
f16 1000 7 1000
f16 512 512 512
f16 256 1024 2048
f16 1024 1024 1024
f32 16 16 16
f32 7 33 40
f32 128 128 128
f32 269 100 1000
f32 512 512 512
f32 1024 256 512
f8 32 32 32
f8 64 64 64
f8 256 256 256
f8 269 269 269
f8 1000 1000 16
f8 512 512 2048
f8 1024 1024 1024
EOF
}

if [ $# -gt 0 ]; then shapes=$(cat "$1"); else shapes=$(default_shapes); fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
while read -r dt m n k; do
	case "$dt" in '' | '#'*) continue ;; esac
	if ! "$ipu" bench gemm --chip "$chip" --dtype "$dt" --m "$m" --n "$n" \
		--k "$k" --threads "$threads" --json >>"$out" 2>"$out.err"; then
		printf '{"failed": true, "dtype": "%s", "m": %s, "n": %s, "k": %s, "msg": "%s"}\n' \
			"$dt" "$m" "$n" "$k" "$(tr -d '"\\' <"$out.err" | tr '\n' ' ')" >>"$out"
	fi
	rm -f "$out.err"
done <<<"$shapes"
if [ -n "${JSONL:-}" ]; then cat "$out" >>"$JSONL"; fi

python3 - "$out" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("| dtype | M | N | K | tiles | cycles | predicted | error % | MFU % "
      "| max rel err | compile ms | emulation s |")
print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
ok = [r for r in rows if not r.get("failed")]
for r in rows:
    if r.get("failed"):
        print(f"| {r['dtype']} | {r['m']} | {r['n']} | {r['k']} | "
              f"failed: {r['msg'].strip()} |||||||||")
        continue
    print(f"| {r['dtype']} | {r['m']} | {r['n']} | {r['k']} | {r['tiles']} "
          f"| {r['cycles']} | {r['predicted_cycles']} "
          f"| {100 * r['pred_error']:+.2f} | {100 * r['mfu']:.2f} "
          f"| {r['max_rel_err']:.2e} | {r['compile_ms']:.1f} "
          f"| {r['host_seconds']:.2f} |")
if ok:
    worst = max(ok, key=lambda r: abs(r["pred_error"]))
    within = sum(abs(r["pred_error"]) <= 0.15 for r in ok)
    print()
    print(f"{len(ok)} shapes run, {len(rows) - len(ok)} failed; prediction "
          f"within 15% for {within} of {len(ok)}; largest error "
          f"{100 * worst['pred_error']:+.2f}% ({worst['dtype']} "
          f"{worst['m']}x{worst['n']}x{worst['k']}).")
EOF

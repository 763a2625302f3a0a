#!/bin/bash
# compare-programs.sh OLD_IPU NEW_IPU [DIR]: do two builds of ipu compile the
# same programs? Each graph (the bench graphs, the fuzz corpus's, SigLIP
# graphs from `ipu model graph`) is compiled with both, on the whole chip and
# on 64 tiles; the packages are compared byte for byte (the compile time,
# 8 bytes at offset 48, and the header's checksum at offset 24 always
# differ) and the summaries or errors line for line. One line per case.
# Used for the middle end's redrawing (docs/compiler.md, "Same programs").
set -u
A=$1 B=$2 D=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$D"
cp "$here"/bench/*.graph "$here"/fuzz/corpus/fuzz_graph/*.graph "$D"/
"$A" model graph --preset base --layers 1 --dtype f32 >"$D/base1-f32.graph"
"$A" model graph --preset base --layers 2 --dtype f16 --batch 2 \
	>"$D/base2-f16-b2.graph"
"$A" model graph --preset so400m --layers 1 --dtype f16 >"$D/so1-f16.graph"
for g in "$D"/*.graph; do
	n=$(basename "$g" .graph)
	for t in "" "--tiles 64"; do
		s=$n${t:+-64}
		# shellcheck disable=SC2086
		"$A" compile "$g" -o "$D/$s.a.pkg" --force $t 2>&1 |
			grep -v "compile time\|^wrote" >"$D/$s.a.txt"
		# shellcheck disable=SC2086
		"$B" compile "$g" -o "$D/$s.b.pkg" --force $t 2>&1 |
			grep -v "compile time\|^wrote" >"$D/$s.b.txt"
		if [ -f "$D/$s.a.pkg" ] && [ -f "$D/$s.b.pkg" ]; then
			pk="$(stat -c %s "$D/$s.a.pkg") bytes, $(cmp -l \
				"$D/$s.a.pkg" "$D/$s.b.pkg" | awk \
				'$1 < 25 || ($1 > 28 && $1 < 49) || $1 > 56' |
				wc -l) differ outside the compile time and checksum"
		else
			pk="no package"
		fi
		if cmp -s "$D/$s.a.txt" "$D/$s.b.txt"; then
			out="same summary"
		else
			out="SUMMARIES DIFFER"
		fi
		echo "$n${t:+ $t}: $pk; $out"
	done
done

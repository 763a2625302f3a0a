#!/usr/bin/env bash
# check-layers.sh - checks the include graph of src/ and include/ against
# the layer table of docs/design.md (the rows between <!-- layers --> and
# <!-- /layers -->, lowest first; every `src/NAME/` or `include/NAME/` in a
# row's second column is a directory of that layer). A file may include
# files of its own layer and of lower layers only: an include of a higher
# layer, of a directory no row names, or one that does not resolve fails
# the check, and so does a cycle among the files themselves. Run by the
# suite (ctest test_layers).
set -euo pipefail
cd "$(dirname "$0")/.."

# "DIR RANK" for every directory of the table
table=$(awk '
	/<!-- layers -->/ { on = 1; next }
	/<!-- \/layers -->/ { on = 0 }
	on && /^\|/ {
		n = split($0, col, "|")
		if (col[3] !~ /src\/|include\//) next
		rank++
		s = col[3]
		while (match(s, /(src|include)\/[a-z_]+\//)) {
			print substr(s, RSTART, RLENGTH - 1), rank
			s = substr(s, RSTART + RLENGTH)
		}
	}' docs/design.md)
if [ -z "$table" ]; then
	echo "check-layers: no layer table in docs/design.md" >&2
	exit 1
fi

# "FILE:LINE" for every quoted include
includes=$(find src include -name '*.[ch]' | sort |
	xargs grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"')

awk -v table="$table" '
	function dir_of(path,   p) {
		split(path, p, "/")
		return p[1] "/" p[2]
	}
	# dir/inc with "." and ".." resolved
	function join(dir, inc,   n, p, i, k, q, path) {
		n = split(dir "/" inc, p, "/")
		k = 0
		for (i = 1; i <= n; i++) {
			if (p[i] == "" || p[i] == ".")
				continue
			if (p[i] == ".." && k > 0)
				k--
			else
				q[++k] = p[i]
		}
		path = q[1]
		for (i = 2; i <= k; i++)
			path = path "/" q[i]
		return path
	}
	function exists(path,   line, r) {
		r = (getline line < path) >= 0
		close(path)
		return r
	}
	# where #include "inc" of file f resolves: its directory, then the
	# include directories CMake adds (src/kernels, include)
	function resolve(f, inc,   d, to) {
		d = f
		sub(/\/[^\/]*$/, "", d)
		to = join(d, inc)
		if (!exists(to)) to = "src/kernels/" inc
		if (!exists(to)) to = "include/" inc
		return exists(to) ? to : "unresolved:" inc
	}
	# depth-first search for a cycle through file f
	function visit(f,   i, g) {
		state[f] = 1
		for (i = 1; i <= nout[f]; i++) {
			g = out[f, i]
			if (state[g] == 1) {
				print "check-layers: include cycle through " f " and " g
				bad = 1
			} else if (!state[g]) {
				visit(g)
			}
		}
		state[f] = 2
	}
	BEGIN {
		n = split(table, row, "\n")
		for (i = 1; i <= n; i++) {
			split(row[i], kv, " ")
			rank[kv[1]] = kv[2]
		}
	}
	{
		from = $0; sub(/:.*/, "", from)
		inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
		to = resolve(from, inc)
		if (to ~ /^unresolved:/) {
			print "check-layers: " from ": cannot resolve #include \"" substr(to, 12) "\""
			bad = 1
			next
		}
		out[from, ++nout[from]] = to
		files[from] = files[to] = 1
		a = dir_of(from); b = dir_of(to)
		if (a == b)
			next
		if (!(a in rank) || !(b in rank)) {
			print "check-layers: " from " -> " to ": " (a in rank ? b : a) " is in no layer of docs/design.md"
			bad = 1
		} else if (rank[b] > rank[a]) {
			print "check-layers: " from " -> " to ": upward (" a " is below " b " in docs/design.md)"
			bad = 1
		}
	}
	END {
		for (f in files)
			if (!state[f])
				visit(f)
		exit bad
	}' <<<"$includes"

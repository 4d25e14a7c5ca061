#!/usr/bin/env bash
# Throughput of `mxprof merge` on two large synthetic traces.
#
#   tests/bench/merge_bench.sh [BUILD] [SIZE]     (default: build 256M)
#
# Writes a SIZE trace with report_gen.py in a scratch folder and a copy of
# it (the second input's pid is then renumbered, as for two ranks), reads
# both once to warm the page cache, then times `mxprof merge` of the two
# into a plain and into a gzip output, twice each. Prints MB/s of input
# JSON and the maximum resident set size. A figure, not a test: nothing
# fails on speed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
SIZE=${2:-256M}
MX=$BUILD/mxprof
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mxprof-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

python3 "$ROOT/tests/bench/report_gen.py" "$TMP/a.json" "$SIZE" > /dev/null
cp "$TMP/a.json" "$TMP/b.json"
bytes=$(($(stat -c %s "$TMP/a.json") * 2))
cat "$TMP/a.json" "$TMP/b.json" > /dev/null

measure() { # OUT LABEL
	local t0 t1 rss
	t0=$(date +%s.%N)
	/usr/bin/time -f %M -o "$TMP/rss" "$MX" merge -o "$TMP/$1" \
		"$TMP/a.json" "$TMP/b.json" > /dev/null
	t1=$(date +%s.%N)
	rss=$(cat "$TMP/rss")
	rm -f "$TMP/$1"
	awk -v b="$bytes" -v a="$t0" -v z="$t1" -v r="$rss" -v l="$2" 'BEGIN {
		s = z - a
		printf "%-28s %8.1f MB  %6.2f s  %7.1f MB/s  max RSS %d kB\n",
			l, b / 1e6, s, b / 1e6 / s, r }'
}

echo "mxprof merge throughput (MB = 10^6 bytes of input JSON, two files)"
measure m.json "to plain JSON"
measure m.json "to plain JSON (again)"
measure m.json.gz "to gzip"
measure m.json.gz "to gzip (again)"

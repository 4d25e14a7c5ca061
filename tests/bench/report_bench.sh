#!/usr/bin/env bash
# Throughput of `mxprof report` on a large synthetic trace.
#
#   tests/bench/report_bench.sh [BUILD] [SIZE]     (default: build 512M)
#
# Writes a SIZE trace with report_gen.py in a scratch folder, reads it once
# to warm the page cache, then times `mxprof report` on it and on a gzip
# copy of a quarter of the size. Prints MB/s of uncompressed JSON and the
# maximum resident set size. A figure, not a test: nothing fails on speed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
SIZE=${2:-512M}
MX=$BUILD/mxprof
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mxprof-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

python3 "$ROOT/tests/bench/report_gen.py" "$TMP/big.json" "$SIZE" > /dev/null
bytes=$(stat -c %s "$TMP/big.json")
cat "$TMP/big.json" > /dev/null

measure() { # FILE BYTES LABEL
	local t0 t1 rss
	t0=$(date +%s.%N)
	/usr/bin/time -f %M -o "$TMP/rss" "$MX" report "$1" > /dev/null
	t1=$(date +%s.%N)
	rss=$(cat "$TMP/rss")
	awk -v b="$2" -v a="$t0" -v z="$t1" -v r="$rss" -v l="$3" 'BEGIN {
		s = z - a
		printf "%-28s %8.1f MB  %6.2f s  %7.1f MB/s  max RSS %d kB\n",
			l, b / 1e6, s, b / 1e6 / s, r }'
}

echo "mxprof report throughput (MB = 10^6 bytes of uncompressed JSON)"
measure "$TMP/big.json" "$bytes" "plain $SIZE"
measure "$TMP/big.json" "$bytes" "plain $SIZE (again)"
head -c $((bytes / 4)) "$TMP/big.json" > "$TMP/q.json"
gzip -1 -c "$TMP/q.json" > "$TMP/q.json.gz"
measure "$TMP/q.json.gz" $((bytes / 4)) "gzip, first 1/4 (cut short)" 2>/dev/null

#!/usr/bin/env bash
# Throughput of `mxprof report` on a large synthetic trace.
#
#   tests/bench/report_bench.sh [BUILD] [SIZE]     (default: build 512M)
#
# Writes a SIZE trace with report_gen.py in a scratch folder, reads it once
# to warm the page cache, then times `mxprof report` on it and on a gzip
# copy of a quarter of the size. Prints MB/s of uncompressed JSON and the
# maximum resident set size, beside baselines timed in the same run on the
# same file: `cat` (the read speed), `wc -l` (one pass over the bytes) and
# `gzip -dc` for the gzip copy; the last column is report's share of the
# baseline's speed. A figure, not a test: nothing fails on speed.
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

# measure LABEL BYTES CMD...: times CMD (its stdout thrown away) and
# prints its throughput over BYTES; stores the MB/s in $rate.
measure() {
	local label=$1 b=$2 t0 t1 rss
	shift 2
	t0=$(date +%s.%N)
	/usr/bin/time -f %M -o "$TMP/rss" "$@" > /dev/null
	t1=$(date +%s.%N)
	rss=$(cat "$TMP/rss")
	rate=$(awk -v b="$b" -v a="$t0" -v z="$t1" 'BEGIN { printf "%.1f", b / 1e6 / (z - a) }')
	awk -v b="$b" -v a="$t0" -v z="$t1" -v r="$rss" -v l="$label" -v base="${base:-0}" 'BEGIN {
		s = z - a
		printf "%-30s %8.1f MB  %6.2f s  %7.1f MB/s  max RSS %6d kB", l, b / 1e6, s, b / 1e6 / s, r
		if (base > 0) printf "  %3.0f%% of the baseline", 100 * b / 1e6 / s / base
		printf "\n" }'
}

echo "mxprof report throughput (MB = 10^6 bytes of uncompressed JSON)"
base=
measure "baseline: cat" "$bytes" cat "$TMP/big.json"
base=$rate
measure "baseline: wc -l" "$bytes" wc -l "$TMP/big.json"
measure "report, plain $SIZE" "$bytes" "$MX" report "$TMP/big.json"
measure "report, plain $SIZE (again)" "$bytes" "$MX" report "$TMP/big.json"
measure "report, plain $SIZE (third)" "$bytes" "$MX" report "$TMP/big.json"
head -c $((bytes / 4)) "$TMP/big.json" > "$TMP/q.json"
gzip -1 -c "$TMP/q.json" > "$TMP/q.json.gz"
base=
measure "baseline: gzip -dc, 1/4" $((bytes / 4)) gzip -dc "$TMP/q.json.gz"
base=$rate
measure "report, gzip 1/4 (cut short)" $((bytes / 4)) "$MX" report "$TMP/q.json.gz" 2>/dev/null

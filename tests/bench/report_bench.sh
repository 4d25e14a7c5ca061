#!/usr/bin/env bash
# Throughput of the trace readers: `mxprof report`, `diff` and `merge` on a
# large synthetic trace.
#
#   tests/bench/report_bench.sh [BUILD] [SIZE]     (default: build 256M)
#
# 1 GB, as the readers' targets are stated: tests/bench/report_bench.sh
# build 1G (about 6 GB of scratch space and a minute).
#
# Writes a SIZE trace with report_gen.py in a scratch folder, reads it once
# to warm the page cache, then times, in the same run: `cat` of it (the
# read speed); `mxprof report` of it with the readers' threads (one per
# processor online) and with one (MXPROF_READ_THREADS=1); `diff` and
# `merge` of its two halves (two traces of SIZE/2, the second's pid
# renumbered by merge), MB/s of input; `report` of a gzip copy of a
# quarter beside `gzip -dc`. Each row prints MB/s and the maximum resident
# set size; the last column is the share of the baseline's speed (cat's,
# gzip's). A figure, not a test: nothing fails on speed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
SIZE=${2:-256M}
MX=$BUILD/mxprof
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mxprof-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

python3 "$ROOT/tests/bench/report_gen.py" "$TMP/big.json" "$SIZE" > /dev/null
bytes=$(stat -c %s "$TMP/big.json")
cat "$TMP/big.json" > /dev/null

# measure LABEL BYTES CMD...: times CMD (its stdout thrown away) and
# prints its throughput over BYTES, with the CPU time of all its threads
# (user and system); stores the MB/s in $rate.
measure() {
	local label=$1 b=$2 t0 t1 rss
	shift 2
	t0=$(date +%s.%N)
	/usr/bin/time -f "%M %U %S" -o "$TMP/rss" "$@" > /dev/null
	t1=$(date +%s.%N)
	read -r rss cu cs < "$TMP/rss"
	rate=$(awk -v b="$b" -v a="$t0" -v z="$t1" 'BEGIN { printf "%.1f", b / 1e6 / (z - a) }')
	awk -v b="$b" -v a="$t0" -v z="$t1" -v r="$rss" -v l="$label" -v base="${base:-0}" \
		-v cpu="$(awk -v u="$cu" -v s="$cs" 'BEGIN { print u + s }')" 'BEGIN {
		s = z - a
		printf "%-32s %8.1f MB  %6.2f s (CPU %5.2f s)  %7.1f MB/s  max RSS %6d kB", l, b / 1e6, s, cpu, b / 1e6 / s, r
		if (base > 0) printf "  %3.0f%% of the baseline", 100 * b / 1e6 / s / base
		printf "\n" }'
}

half=$(awk -v s="$bytes" 'BEGIN { printf "%d", s / 2 }')
python3 "$ROOT/tests/bench/report_gen.py" "$TMP/a.json" "$half" > /dev/null
cp "$TMP/a.json" "$TMP/b.json"
hbytes=$(($(stat -c %s "$TMP/a.json") * 2))
cat "$TMP/a.json" "$TMP/b.json" > /dev/null

echo "mxprof readers' throughput (MB = 10^6 bytes of uncompressed JSON;" \
	"$(nproc) processors online)"
base=
measure "baseline: cat" "$bytes" cat "$TMP/big.json"
base=$rate
for i in 1 2 3; do
	measure "report, plain $SIZE ($i)" "$bytes" "$MX" report "$TMP/big.json"
done
for i in 1 2; do
	measure "report, one thread ($i)" "$bytes" \
		env MXPROF_READ_THREADS=1 "$MX" report "$TMP/big.json"
done
base=
measure "baseline: cat, halves" "$hbytes" cat "$TMP/a.json" "$TMP/b.json"
base=$rate
for i in 1 2; do
	measure "diff of the halves ($i)" "$hbytes" "$MX" diff "$TMP/a.json" \
		"$TMP/b.json"
done
for i in 1 2 3; do
	measure "merge of the halves ($i)" "$hbytes" "$MX" merge \
		-o "$TMP/m.json" "$TMP/a.json" "$TMP/b.json"
	rm -f "$TMP/m.json"
done
rm -f "$TMP/a.json" "$TMP/b.json"
head -c $((bytes / 4)) "$TMP/big.json" > "$TMP/q.json"
gzip -1 -c "$TMP/q.json" > "$TMP/q.json.gz"
base=
measure "baseline: gzip -dc, 1/4" $((bytes / 4)) gzip -dc "$TMP/q.json.gz"
base=$rate
measure "report, gzip 1/4 (cut short)" $((bytes / 4)) "$MX" report "$TMP/q.json.gz" 2>/dev/null

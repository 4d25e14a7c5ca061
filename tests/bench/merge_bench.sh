#!/usr/bin/env bash
# Throughput of `mxprof merge` and `mxprof diff` on two large synthetic
# traces.
#
#   tests/bench/merge_bench.sh [BUILD] [SIZE]     (default: build 256M)
#
# SIZE is the two inputs' size together (1G: two traces of 512 MiB).
# Writes a trace of SIZE/2 with report_gen.py in a scratch folder and a
# copy of it (the second input's pid is then renumbered, as for two
# ranks), reads both once to warm the page cache, then times, in the same
# run: `cat` of the two (the read speed) and `cat` of the two into a file
# (reading and writing as much as a plain merge does), then `mxprof merge`
# of the two into a plain output and into a gzip output, and `mxprof diff`
# of the two, with the readers' threads (one per processor online) and
# with one (MXPROF_READ_THREADS=1). Prints MB/s of input JSON, the CPU
# time of all threads, the maximum resident set size and the share of the
# baseline's speed (the first cat's for diff, the second's for merge). A
# figure, not a test: nothing fails on speed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
SIZE=${2:-256M}
MX=$BUILD/mxprof
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mxprof-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

half=$(python3 -c 'import sys
s = sys.argv[1]
m = {"k": 1 << 10, "M": 1 << 20, "G": 1 << 30}
print(int(float(s[:-1]) * m[s[-1]]) // 2 if s[-1] in m else int(s) // 2)' "$SIZE")
python3 "$ROOT/tests/bench/report_gen.py" "$TMP/a.json" "$half" > /dev/null
cp "$TMP/a.json" "$TMP/b.json"
bytes=$(($(stat -c %s "$TMP/a.json") * 2))
cat "$TMP/a.json" "$TMP/b.json" > /dev/null

# measure LABEL CMD...: times CMD (stdout and stderr thrown away) and
# prints its throughput over the two inputs, with the CPU time of all its
# threads (user and system); stores the MB/s in $rate. The output files
# are removed after each run, outside the time.
measure() {
	local label=$1 t0 t1 rss cu cs
	shift
	t0=$(date +%s.%N)
	/usr/bin/time -f "%M %U %S" -o "$TMP/rss" "$@" > /dev/null 2>&1
	t1=$(date +%s.%N)
	rm -f "$TMP"/m.json "$TMP"/m.json.gz "$TMP"/c.json
	read -r rss cu cs < "$TMP/rss"
	rate=$(awk -v b="$bytes" -v a="$t0" -v z="$t1" 'BEGIN { printf "%.1f", b / 1e6 / (z - a) }')
	awk -v b="$bytes" -v a="$t0" -v z="$t1" -v r="$rss" -v l="$label" -v base="${base:-0}" \
		-v cpu="$(awk -v u="$cu" -v s="$cs" 'BEGIN { print u + s }')" 'BEGIN {
		s = z - a
		printf "%-34s %8.1f MB  %6.2f s (CPU %5.2f s)  %7.1f MB/s  max RSS %6d kB", l, b / 1e6, s, cpu, b / 1e6 / s, r
		if (base > 0) printf "  %3.0f%% of the baseline", 100 * b / 1e6 / s / base
		printf "\n" }'
}

echo "mxprof merge and diff throughput (MB = 10^6 bytes of input JSON, two" \
	"files; $(nproc) processors online)"
base=
measure "baseline: cat" cat "$TMP/a.json" "$TMP/b.json"
read_base=$rate
measure "baseline: cat into a file" sh -c 'cat "$1" "$2" > "$3"' sh \
	"$TMP/a.json" "$TMP/b.json" "$TMP/c.json"
base=$rate
for i in 1 2 3; do
	measure "merge to plain JSON ($i)" "$MX" merge -o "$TMP/m.json" \
		"$TMP/a.json" "$TMP/b.json"
done
measure "merge to plain JSON, one thread" env MXPROF_READ_THREADS=1 \
	"$MX" merge -o "$TMP/m.json" "$TMP/a.json" "$TMP/b.json"
for i in 1 2; do
	measure "merge to gzip ($i)" "$MX" merge -o "$TMP/m.json.gz" \
		"$TMP/a.json" "$TMP/b.json"
done
base=$read_base
for i in 1 2 3; do
	measure "diff ($i)" "$MX" diff "$TMP/a.json" "$TMP/b.json"
done
measure "diff, one thread" env MXPROF_READ_THREADS=1 "$MX" diff \
	"$TMP/a.json" "$TMP/b.json"

#!/usr/bin/env bash
# The size of mxprof report --html's page for a large trace, and the time
# to build it and to open it.
#
#   tests/bench/html_bench.sh [BUILD] [SIZE]     (default: build 1G)
#
# Writes a SIZE trace of a training loop with call stacks, steps, a worker
# thread and a GPU stream (html_gen.py) in a scratch folder, reads it once
# to warm the page cache, then times `mxprof report` (the tables: the
# baseline, one pass) and `mxprof report --html` (the tables' pass and the
# page's), and prints the page's size. Where Chromium and playwright-core
# are at hand (tests/deps.sh), it also times opening the page until it is
# drawn. A figure, not a test: nothing fails on speed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
SIZE=${2:-1G}
MX=$BUILD/mxprof
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mxprof-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

gen=$(python3 "$ROOT/tests/bench/html_gen.py" "$TMP/big.json" "$SIZE")
bytes=$(stat -c %s "$TMP/big.json")
cat "$TMP/big.json" >/dev/null

# measure LABEL CMD...: times CMD (stdout thrown away), with its maximum
# resident set size.
measure() {
	local label=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	/usr/bin/time -f %M -o "$TMP/rss" "$@" >/dev/null
	t1=$(date +%s.%N)
	awk -v b="$bytes" -v a="$t0" -v z="$t1" -v r="$(cat "$TMP/rss")" -v l="$label" 'BEGIN {
		printf "%-28s %7.2f s  %7.1f MB/s  max RSS %6d kB\n", l, z - a, b / 1e6 / (z - a), r }'
}

echo "mxprof report --html of a $((bytes / 1000000)) MB trace (MB = 10^6 bytes; $gen)"
measure "report (tables only)" "$MX" report "$TMP/big.json"
measure "report --html" "$MX" report --html "$TMP/page.html" "$TMP/big.json"
awk -v p="$(stat -c %s "$TMP/page.html")" -v b="$bytes" 'BEGIN {
	printf "page: %.2f MB (%.4f%% of the trace)\n", p / 1e6, 100 * p / b }'

CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
NODE_PATH=$BUILD/npm/node_modules
if [ -x "$CHROMIUM" ] && command -v node >/dev/null &&
	[ -f "$NODE_PATH/playwright-core/package.json" ]; then
	export CHROMIUM NODE_PATH
	node - "$TMP/page.html" <<'JSEOF'
const { chromium } = require("playwright-core");
(async () => {
  const b = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ["--no-sandbox"] });
  const p = await b.newPage();
  const t0 = Date.now();
  await p.goto("file://" + process.argv[2], { waitUntil: "load" });
  await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
  console.log("open in Chromium (to drawn): " + ((Date.now() - t0) / 1000).toFixed(2) + " s");
  await b.close();
})();
JSEOF
else
	echo "open in Chromium: not measured (no chromium or playwright-core; tests/deps.sh)"
fi

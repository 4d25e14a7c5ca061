#!/usr/bin/env bash
# make demo: profiles the bundled example under the preloaded library and
# prints its tables; says where the trace went.
set -eu
BUILD=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${MXPROF_OUTPUT:-$root/$BUILD/demo.json}
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$out" LD_PRELOAD="$root/$BUILD/libmxprof.so" \
	"$root/$BUILD/examples/demo"
stats=${out%.gz}
stats=${stats%.json}.stats.txt
echo "trace:  $out (open it in https://ui.perfetto.dev or chrome://tracing)"
echo "tables: $stats"

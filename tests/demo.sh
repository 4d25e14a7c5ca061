#!/usr/bin/env bash
# Builds mxprof, profiles the bundled example (examples/demo.c) under the
# preloaded library and prints its tables. Installs what the build needs
# first (as root; otherwise prints the apt-get line).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
bash "$root/tests/deps.sh"
make -C "$root" -s --no-print-directory BUILD="$BUILD" all "$BUILD/examples/demo"
out=${MXPROF_OUTPUT:-$root/$BUILD/demo.json}
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$out" LD_PRELOAD="$root/$BUILD/libmxprof.so" \
	"$root/$BUILD/examples/demo"
stats=${out%.gz}
stats=${stats%.json}.stats.txt
echo "trace:  $out (open it in chrome://tracing, HTA or speedscope)"
echo "tables: $stats"

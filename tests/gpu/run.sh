#!/usr/bin/env bash
# GPU-only checks (need an NVIDIA GPU). usage: tests/gpu/run.sh [BUILD]
# Skips with one line where no GPU is found (nvidia-smi absent or no
# /dev/nvidia0). Runs every tests/gpu/*.sh but this one; ends with
# "N passed, N failed". Prints each test's log, indented (its figures),
# or its last 30 lines when it fails.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$ROOT/${1:-${BUILD:-build}}" && pwd)
if ! command -v nvidia-smi >/dev/null 2>&1 || [ ! -e /dev/nvidia0 ]; then
	echo "tests/gpu: skipped: no GPU (nvidia-smi or /dev/nvidia0 missing)"
	exit 0
fi
export ROOT BUILD MXPROF_LIB=$BUILD/libmxprof.so PRELOAD=$BUILD/libmxprof.so
passed=0 failed=0
for t in "$ROOT"/tests/gpu/*.sh; do
	[ "$(basename "$t")" = run.sh ] && continue
	name=$(basename "$t" .sh)
	WORK=$(mktemp -d) && export WORK
	if (cd "$WORK" && bash "$t") >"$WORK/log" 2>&1; then
		passed=$((passed + 1)) && echo "ok   $name" && sed 's/^/     /' "$WORK/log"
		rm -rf "$WORK"
	else
		failed=$((failed + 1)) && echo "FAIL $name (log in $WORK/log)"
		tail -30 "$WORK/log"
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

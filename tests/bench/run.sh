#!/usr/bin/env bash
# Runs every benchmark in tests/bench/ (each *_bench.sh) against the build
# folder given (default build). Benchmarks print figures and ratios against
# a baseline from the same run; they never fail on a time.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$root/${1:-build}" && pwd)
export ROOT=$root BUILD
for b in "$root"/tests/bench/*_bench.sh; do
	echo "== $(basename "$b" .sh)"
	bash "$b"
done

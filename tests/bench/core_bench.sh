# The core hot path and the drain (see core_bench.c).
# usage: tests/bench/core_bench.sh [BUILD]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
mkdir -p "$BUILD/bench"
cc -O2 -std=gnu11 -I"$ROOT/include" -o "$BUILD/bench/core_bench" \
	"$ROOT/tests/bench/core_bench.c" -ldl -pthread
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
MXPROF_OUTPUT="$work/bench.json" MXPROF_BUFFER_KB=4096 \
	LD_PRELOAD="$BUILD/libmxprof.so" "$BUILD/bench/core_bench"

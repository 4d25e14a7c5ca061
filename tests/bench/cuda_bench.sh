# The added cost per CUDA runtime call: cuda_bench (an empty-kernel launch
# and a cudaStreamQuery, each N times) without a profiler, then under
# mxprof recording CUPTI activity (MXPROF_AUTOSTART=1). Prints ns per call
# and the ratio; the median of 5 runs each. Needs a GPU and nvcc; skips
# with one line otherwise.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if ! nvidia-smi -L >/dev/null 2>&1 || [ ! -e /dev/nvidia0 ]; then
	echo "cuda_bench: skipped: no GPU (nvidia-smi or /dev/nvidia0 missing)"
	exit 0
fi
[ -x "$NVCC" ] || { echo "cuda_bench: skipped: nvcc not found"; exit 0; }
mkdir -p "$BUILD/bench"
"$NVCC" -O2 -o "$BUILD/bench/cuda_bench" "$ROOT/tests/bench/cuda_bench.cu"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
N=${N:-200000}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
run() { # run KEY ENV... -> median of 5
	local key=$1
	shift
	for _ in 1 2 3 4 5; do
		env "$@" "$BUILD/bench/cuda_bench" "$N" | awk -v k="$key" '$1 == k {print $2}'
	done | median
}
for key in launch_ns query_ns; do
	base=$(run $key X=1)
	prof=$(run $key MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$work/b.json" LD_PRELOAD="$BUILD/libmxprof.so")
	awk -v k="$key" -v b="$base" -v p="$prof" 'BEGIN {
		printf "%-10s none %8.1f ns  mxprof %8.1f ns  added %7.1f ns  ratio %.2f\n",
			k, b, p, p - b, p / b }'
done

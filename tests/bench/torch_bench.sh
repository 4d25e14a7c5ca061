#!/usr/bin/env bash
# torch_bench.sh [BUILD] - what profiling costs a PyTorch training loop.
#
# Runs tests/gpu/torch_cnn.py (a small CNN, STEPS steps, default 200) with
# no profiler, under torch.profiler (CPU and CUDA activity, Kineto), and
# under mxprof with several MXPROF_* settings, and prints each one's
# median step time and what it adds to the run without a profiler. Needs
# a GPU and PyTorch with CUDA; skips with one line otherwise. Figures, not
# a test: nothing fails on a slow machine.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
LIB=${MXPROF_LIB:-$BUILD/libmxprof.so}
PY=${PYTHON:-python3}
if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	echo "torch_bench: skipped: PyTorch with CUDA not importable"
	exit 0
fi
export TORCH_CNN_STEPS=${STEPS:-200}
W=$(mktemp -d "${TMPDIR:-/tmp}/mxprof-torchbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
cnn=$ROOT/tests/gpu/torch_cnn.py
step() { "$@" | "$PY" -c 'import json,sys; print("%.3f" % json.load(sys.stdin)["median_step_ms"])'; }
base=$(step "$PY" "$cnn" none)
row() { # row LABEL MS
	awk -v l="$1" -v m="$2" -v b="$base" \
		'BEGIN { printf "%-44s %9.3f ms %+8.1f%%\n", l, m, (m - b) / b * 100 }'
}
printf '%-44s %12s %9s\n' run "median step" added
row "no profiler" "$base"
row "torch.profiler (CPU + CUDA)" "$(step "$PY" "$cnn" torch "$W/torch.json")"
for s in "" "MXPROF_HOOK=none" "MXPROF_TRACE=gpu" "MXPROF_TRACE=gpu MXPROF_HOOK=none" \
	"MXPROF_TRACE=cuda,gpu MXPROF_HOOK=none"; do
	# shellcheck disable=SC2086
	ms=$(step env MXPROF_AUTOSTART=1 $s MXPROF_OUTPUT="$W/m.json" LD_PRELOAD="$LIB" "$PY" "$cnn" none)
	row "mxprof ${s:-(defaults)}" "$ms"
done

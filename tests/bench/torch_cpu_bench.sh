#!/usr/bin/env bash
# torch_cpu_bench.sh [BUILD] - what profiling costs a CPU PyTorch training
# loop (tests/programs/torch_train.py: conv2d, relu, max_pool2d, linear,
# cross-entropy, backward, SGD on batches of 64, one thread).
#
# In one run, ROUNDS times in turn: no profiler, mxprof with its defaults
# (MXPROF_AUTOSTART=1 only: @auto times every ATen operator and BLAS
# call), and torch.autograd.profiler. Prints each one's median step time
# (the median over the rounds of each run's median over STEPS steps) and
# its ratio to the run without a profiler. With BASE_LIB set to another
# build's libmxprof.so (an older commit's), each round also runs mxprof
# from it, so that two builds are compared in one run, interleaved.
# Needs /usr/bin/python3 with torch (python3-torch); skips with one line
# otherwise. Figures, not a test: nothing fails on a slow machine.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
LIB=${MXPROF_LIB:-$BUILD/libmxprof.so}
PY=${PYTHON:-/usr/bin/python3}
STEPS=${STEPS:-200}
ROUNDS=${ROUNDS:-5}
if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "torch_cpu_bench: skipped: torch cannot be imported by $PY"
	exit 0
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/mxprof-torchcpu.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"
train=$ROOT/tests/programs/torch_train.py
ms() { "$@" | awk '$1 == "step_ms" { print $2 }'; }
for r in $(seq "$ROUNDS"); do
	ms "$PY" "$train" "$STEPS" bench >>none.txt
	ms env MXPROF_AUTOSTART=1 LD_PRELOAD="$LIB" "$PY" "$train" "$STEPS" \
		bench >>mxprof.txt
	if [ -n "${BASE_LIB:-}" ]; then
		ms env MXPROF_AUTOSTART=1 LD_PRELOAD="$BASE_LIB" "$PY" "$train" \
			"$STEPS" bench >>base.txt
	fi
	ms "$PY" "$train" "$STEPS" bench-profile >>profiler.txt
done
med() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base=$(med none.txt)
printf '%-36s %12s %8s\n' "run ($STEPS steps, $ROUNDS rounds)" "median step" ratio
for k in none ${BASE_LIB:+base} mxprof profiler; do
	case $k in
	none) label="no profiler" ;;
	base) label="mxprof (defaults, BASE_LIB)" ;;
	mxprof) label="mxprof (defaults)" ;;
	profiler) label="torch.autograd.profiler" ;;
	esac
	awk -v l="$label" -v m="$(med $k.txt)" -v b="$base" \
		'BEGIN { printf "%-36s %9.4f ms %8.3f\n", l, m, m / b }'
done

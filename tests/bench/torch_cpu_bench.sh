#!/usr/bin/env bash
# torch_cpu_bench.sh [BUILD] - what profiling costs a CPU PyTorch job.
#
# Each launch of tests/bench/torch_cpu_bench.py times, in one process:
#  - small: x.to(torch.float64) on a 16x16 tensor (4 ATen operators), the
#    thread's CPU time a call, one thread;
#  - train1: the training loop of tests/programs/torch_train.py (conv2d,
#    relu, max_pool2d, linear, cross-entropy, backward, SGD on batches of
#    64) with torch.set_num_threads(1): the training thread's CPU time a
#    step, the step's wall time, and the other threads' CPU time a step
#    (a profiler's own thread);
#  - trainN: the same loop with every CPU: the step's wall time, the
#    process's CPU time a step, and that of mxprof's own threads.
# Each time is given as its 1st percentile over the launch's steps (or
# blocks of calls: p01, the fastest 1 %) and as its median. A VM's speed
# changes from moment to moment with its host's other work, which moves
# a launch's median by 10 to 30 %; its fastest steps move by about 1 %,
# so the p01 rows are the ones that resolve a few per cent
# (torch_cpu_bench.py says more).
# Six ways, launched in turn ROUNDS times (the order rotates from round
# to round): no profiler, mxprof's defaults (MXPROF_AUTOSTART=1 only),
# mxprof in flight mode (MXPROF_FLIGHT=20steps), mxprof with
# MXPROF_STACKS=32, torch.autograd.profiler, and the same with
# with_stack=True (and BASE_LIB's mxprof, when set).
#
# Prints for each measure and way the median over the rounds, its
# min-max, and the ratio to the run without a profiler: the median of
# each round's ratio to the plain launch of the same round, with that
# ratio's min-max beside it. For the small loop it also prints what a
# stack at depth 32 adds: (stacks - defaults) per x.to and per operator.
#
# glibc's heap is set the same in every launch, the plain one included
# (MALLOC_TRIM_THRESHOLD_ 64 MiB, MALLOC_MMAP_THRESHOLD_ 4 MiB; HEAP=glibc
# leaves glibc's own dynamic thresholds): with them, whether the freed top
# of the heap goes back to the kernel every few steps depends on the order
# of earlier allocations (Python's hash seed alone moves a plain launch
# from 0.38 to 0.45 ms a step, with three times the page faults), which
# swamps a 3 % difference between launches.
#
# The default is a quick form (3 rounds, 1000 steps); SLOW=1 is the form
# the figures in docs/benchmarks.md come from (10 rounds, 3000 steps). ROUNDS,
# STEPS and SMALL override either. Needs /usr/bin/python3 with torch
# (python3-torch); skips with one line otherwise. Figures, not a test:
# nothing fails on a slow machine.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
LIB=${MXPROF_LIB:-$BUILD/libmxprof.so}
PY=${PYTHON:-/usr/bin/python3}
if [ "${SLOW:-}" = 1 ]; then
	ROUNDS=${ROUNDS:-10} STEPS=${STEPS:-3000} SMALL=${SMALL:-300000}
else
	ROUNDS=${ROUNDS:-3} STEPS=${STEPS:-1000} SMALL=${SMALL:-100000}
fi
if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "torch_cpu_bench: skipped: torch cannot be imported by $PY"
	exit 0
fi
if [ "${HEAP:-}" != glibc ]; then
	export MALLOC_TRIM_THRESHOLD_=67108864 MALLOC_MMAP_THRESHOLD_=4194304
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/mxprof-torchcpu.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"
bench=$ROOT/tests/bench/torch_cpu_bench.py
ways="plain mxprof flight stacks32 autograd autograd-stack"
# BASE_LIB: another build's libmxprof.so (an older commit's), run with its
# defaults in every round, so that two builds are compared interleaved.
[ -z "${BASE_LIB:-}" ] || ways="$ways base"
nways=$(echo $ways | wc -w)
launch() { # launch WAY: one launch, its lines prefixed with the way
	local prof=none
	local -a env=()
	case $1 in
	mxprof) env=(MXPROF_AUTOSTART=1 LD_PRELOAD="$LIB") ;;
	flight) env=(MXPROF_AUTOSTART=1 MXPROF_FLIGHT=20steps LD_PRELOAD="$LIB") ;;
	stacks32) env=(MXPROF_AUTOSTART=1 MXPROF_STACKS=32 LD_PRELOAD="$LIB") ;;
	base) env=(MXPROF_AUTOSTART=1 LD_PRELOAD="$BASE_LIB") ;;
	autograd | autograd-stack) prof=$1 ;;
	esac
	env MXPROF_OUTPUT="$W/trace.json" "${env[@]}" \
		"$PY" "$bench" "$prof" "$STEPS" "$SMALL" 2>/dev/null |
		sed "s/^/$2 $1 /"
	rm -f "$W"/trace*
}
for r in $(seq "$ROUNDS"); do
	set -- $ways
	for _ in $(seq $(((r - 1) % nways))); do
		set -- "$@" "$1"
		shift
	done
	for w in "$@"; do
		launch "$w" "$r" >>runs.txt
	done
done
"$PY" - "$ROUNDS" "$STEPS" "$SMALL" "$(nproc)" runs.txt <<'PY'
import os
import statistics as st
import sys

rounds, steps, small, ncpu, path = sys.argv[1:6]
ways = ["plain", "mxprof", "flight", "base", "stacks32", "autograd",
        "autograd-stack"]
labels = {
    "base": "mxprof (defaults, BASE_LIB)",
    "plain": "no profiler",
    "mxprof": "mxprof (defaults)",
    "flight": "mxprof, FLIGHT=20steps",
    "stacks32": "mxprof, MXPROF_STACKS=32",
    "autograd": "torch.autograd.profiler",
    "autograd-stack": "  with_stack=True",
}
# the fields of each phase's line, after its name (torch_cpu_bench.py)
fields = {
    "small": ["p01", "med"],
    "train1": ["p01", "med", "wall", "other"],
    "trainN": ["p01", "med", "cpu", "mine"],
}
# v[(phase, measure)][way][round] = value
v = {}
for line in open(path):
    f = line.split()
    r, way, phase = int(f[0]), f[1], f[2]
    for name, x in zip(fields.get(phase, []), f[3:]):
        v.setdefault((phase, name), {}).setdefault(way, {})[r] = float(x)


def fmt(xs, p=4):
    return "%.*f [%.*f-%.*f]" % (p, st.median(xs), p, min(xs), p, max(xs))


print(
    "%s rounds; small loop %s calls; training loop %s steps; %s CPUs; %s"
    % (rounds, small, steps, ncpu,
       "glibc's heap thresholds fixed" if os.environ.get("MALLOC_TRIM_THRESHOLD_")
       else "glibc's dynamic heap thresholds")
)
heads = {
    ("small", "p01"): "x.to(float64) 16x16, 1 thread: the thread's CPU us a call, p01 of 200 blocks",
    ("small", "med"): "x.to(float64) 16x16, 1 thread: the same, median block",
    ("train1", "p01"): "training step, 1 thread: the thread's CPU ms a step, p01 of the steps",
    ("train1", "med"): "training step, 1 thread: the thread's CPU ms a step, median step",
    ("train1", "wall"): "training step, 1 thread: wall ms a step, median step",
    ("train1", "other"): "training step, 1 thread: the other threads' CPU ms a step (not a ratio)",
    ("trainN", "p01"): "training step, %s threads: wall ms a step, p01 of the steps" % ncpu,
    ("trainN", "med"): "training step, %s threads: wall ms a step, median step" % ncpu,
    ("trainN", "cpu"): "training step, %s threads: the process's CPU ms a step" % ncpu,
    ("trainN", "mine"): "training step, %s threads: mxprof's threads' CPU ms a step, its share of the plain p01 step" % ncpu,
}
for key in heads:
    if key not in v or "plain" not in v[key]:
        continue
    d = v[key]
    print("\n%s" % heads[key])
    print("  %-28s %-30s %s" % ("run", "median [min-max]", "ratio [min-max]"))
    for w in ways:
        if w not in d:
            continue
        ratio = ""
        if key == ("trainN", "mine"):
            base = v[("trainN", "p01")]["plain"]
            rs = [d[w][r] / base[r] for r in d[w] if r in base]
            ratio = fmt(rs, 3)
        elif key != ("train1", "other"):
            rs = [d[w][r] / d["plain"][r] for r in d[w] if r in d["plain"]]
            ratio = fmt(rs, 3)
        print("  %-28s %-30s %s" % (labels[w], fmt(list(d[w].values())), ratio))
    if key[0] == "small" and "stacks32" in d and "mxprof" in d:
        add = [d["stacks32"][r] - d["mxprof"][r] for r in d["stacks32"] if r in d["mxprof"]]
        print(
            "  a stack at depth 32: %s us per x.to, %s us per operator (4 a call)"
            % (fmt(add, 2), fmt([a / 4 for a in add], 2))
        )
PY

# On a GPU with PyTorch: steps marked by an NVTX range (torch_steps.py, 12
# steps of 4 kernels each) and a step window. GPU activity comes late, in
# buffers, and is kept by when it ran: with MXPROF_STEPS=2:1:3 the trace
# holds ProfilerStep#3..5 and exactly their 12 kernels; without a window,
# ProfilerStep#0..11 and at least their 48 kernels.
. "$ROOT/tests/integration/lib.sh"
py=${PYTHON:-python3}
"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
	{ echo "skip: PyTorch with CUDA not importable"; exit 0; }
script=$ROOT/tests/gpu/torch_steps.py
expected=$("$py" "$script")
for run in all win; do
	win=
	[ $run = win ] && win=2:1:3
	env ${win:+MXPROF_STEPS=$win} MXPROF_STEP=step MXPROF_AUTOSTART=1 \
		MXPROF_OUTPUT="$WORK/$run.json" LD_PRELOAD="$PRELOAD" \
		"$py" "$script" >"$WORK/$run.out" 2>"$WORK/$run.err" ||
		fail "$run: the program failed under mxprof"
	expect_eq "$run: output" "$expected" "$(cat "$WORK/$run.out")"
	tracesummary "$WORK/$run.json" >"$WORK/$run.sum"
	python3 -S "$ROOT/tests/tools/stepcheck.py" "$WORK/$run.json" >"$WORK/$run.steps"
done
expect_eq "all: steps" "$(seq -s ' ' 0 11)" "$(jget all.steps '" ".join(map(str, d["steps"]))')"
expect_eq "all: at least 48 kernels" True "$(jget all.sum 'sum(d["gpu"]["kernels"].values()) >= 48')"
expect_eq "window: steps" "3 4 5" "$(jget win.steps '" ".join(map(str, d["steps"]))')"
expect_eq "window: kernels" 12 "$(jget win.sum 'sum(d["gpu"]["kernels"].values())')"
expect_eq "window: step ranges" 3 "$(jget win.sum 'd["spans"].get("NVTX/step", 0)')"
expect_eq "window: metadata" "3-5" "$(jget win.steps 'd["meta"]')"
echo "kernels: all $(jget all.sum 'sum(d["gpu"]["kernels"].values())'), window $(jget win.sum 'sum(d["gpu"]["kernels"].values())')"

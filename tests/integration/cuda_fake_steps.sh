# Step windows and GPU activity, on the fake libcudart/libcupti: the
# training loop's NVTX "step" ranges mark 12 steps (MXPROF_STEP=step).
# GPU activity comes late, in buffers, and is kept by when it ran: with
# MXPROF_STEPS=2:1:3, exactly the kernels, copies, sets and runtime calls
# of steps 3, 4 and 5; without a window, those of all 12 steps.
. "$ROOT/tests/integration/lib.sh"
fakes=$BUILD/fakes
prog=$BUILD/programs/cuda_fake_train
[ -e "$fakes/libcupti.so.13" ] || skip "built without the CUDA toolkit headers (no fake libcupti)"
S=12
expected=$("$prog" "$fakes/libcudart.so.13" $S)
for run in all win; do
	win=
	[ $run = win ] && win=2:1:3
	env ${win:+MXPROF_STEPS=$win} MXPROF_STEP=step MXPROF_HOOK=none \
		MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$run.json" \
		LD_PRELOAD="$PRELOAD" "$prog" "$fakes/libcudart.so.13" $S \
		>"$WORK/$run.out" 2>"$WORK/$run.err" ||
		fail "$run: the program failed under mxprof"
	expect_eq "$run: output" "$expected" "$(cat "$WORK/$run.out")"
	expect_eq "$run: stderr" "" "$(cat "$WORK/$run.err")"
	tracesummary "$WORK/$run.json" >"$WORK/$run.sum"
	"${PYTHON3:-python3}" -S "$ROOT/tests/tools/stepcheck.py" \
		"$WORK/$run.json" >"$WORK/$run.steps"
done
g() { jget "$WORK/$1.sum" "d['gpu']$2"; }
expect_eq "all: steps" "$(seq -s ' ' 0 $((S - 1)))" "$(jget all.steps '" ".join(map(str, d["steps"]))')"
expect_eq "all: kernels" "{'conv_bwd': $S, 'conv_fwd': $S, 'relu': $S}" "$(g all '["kernels"]')"
expect_eq "window: steps" "3 4 5" "$(jget win.steps '" ".join(map(str, d["steps"]))')"
expect_eq "window: kernels" "{'conv_bwd': 3, 'conv_fwd': 3, 'relu': 3}" "$(g win '["kernels"]')"
expect_eq "window: kernel time (ns)" $((3 * 32000)) "$(g win '["kernel_ns"]')"
expect_eq "window: HtoD copies" "[3, $((3 * 1048576))]" "$(g win '["memcpy"]["Memcpy HtoD (Pageable -> Device)"]')"
expect_eq "window: memsets" "[3, $((3 * 65536))]" "$(g win '["memset"]["Memset (Device)"]')"
expect_eq "window: launches" 9 "$(g win '["api"]["cuda_runtime/cudaLaunchKernel"]')"
expect_eq "window: no cudaMalloc" 0 "$(g win '["api"].get("cuda_runtime/cudaMalloc", 0)')"
expect_eq "window: step ranges" 3 "$(jget win.sum 'd["spans"]["NVTX/step"]')"
expect_eq "window: each step holds its calls" 3 \
	"$(jget win.steps 'sum(v == {"cudaDeviceSynchronize": 1, "cudaLaunchKernel": 3, "cudaMemcpy": 2, "cudaMemset": 1, "step": 1} for v in d["inside"].values())')"
expect_eq "window: tables" 3 "$(row_count win.stats.txt Steps mean)"

# MXPROF_STEP names an NVTX range: nvtx_ranges' N "step" ranges (each
# holding an "inner" range and a "forward" range of domain "trainer")
# end N steps, ProfilerStep#0..N-1 on the main thread around them; with
# MXPROF_STEPS=2:1:3 only steps 3, 4 and 5 and the ranges inside them,
# and not the "epoch" range that began before them.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/nvtx_ranges
[ -x "$prog" ] || skip "nvtx_ranges not built (no CUDA toolkit headers for nvtx3)"
N=12
expected=$("$prog" $N)

# prof NAME [VAR=VALUE...]
prof() {
	local name=$1
	shift
	env "$@" MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$name.json" \
		LD_PRELOAD="$PRELOAD" "$prog" $N >"$WORK/$name.out" \
		2>"$WORK/$name.err" || fail "$name: the program failed"
	expect_eq "$name: output" "$expected" "$(cat "$WORK/$name.out")"
	expect_eq "$name: stderr" "" "$(cat "$WORK/$name.err")"
	tracesummary "$WORK/$name.json" >"$WORK/$name.sum"
	"${PYTHON3:-python3}" -S "$ROOT/tests/tools/stepcheck.py" \
		"$WORK/$name.json" >"$WORK/$name.steps"
}
span() { jget "$WORK/$1.sum" "d['spans'].get('$2', 0)"; }
st() { jget "$WORK/$1.steps" "$2"; }

prof all MXPROF_STEP=step
expect_eq "steps" "$(seq -s ' ' 0 $((N - 1)))" "$(st all '" ".join(map(str, d["steps"]))')"
expect_eq "on the main thread" 1 \
	"$(jget "$WORK/all.sum" 'sum(t["name"].endswith(" (nvtx-main)") and t["spans"] > 0 for t in d["threads"].values())')"
expect_eq "one thread" 1 "$(st all 'd["tids"]')"
expect_eq "contiguous" 1 "$(st all 'd["contiguous"]')"
expect_eq "each step holds its ranges" $N \
	"$(st all 'sum(v.get("step") == 1 and v.get("inner") == 1 and v.get("forward") == 1 and "epoch" not in v for v in d["inside"].values())')"
expect_eq "step ranges" $N "$(span all NVTX/step)"
expect_eq "Steps section" $N "$(row_count "$WORK/all.stats.txt" Steps mean)"

prof win MXPROF_STEP=step MXPROF_STEPS=2:1:3
expect_eq "window: steps" "3 4 5" "$(st win '" ".join(map(str, d["steps"]))')"
expect_eq "window: step ranges" 3 "$(span win NVTX/step)"
expect_eq "window: inner ranges" 3 "$(span win NVTX/inner)"
expect_eq "window: forward ranges" 3 "$(span win trainer/forward)"
expect_eq "window: no epoch" 0 "$(span win NVTX/epoch)"
expect_eq "window: ticks (steps 0 and 10 only)" 0 \
	"$(jget "$WORK/win.sum" 'd["instants"].get("NVTX/tick", 0)')"
expect_eq "window: metadata" "3-5" "$(st win 'd["meta"]')"

# The default marker (Optimizer.step#*) is no range here: no steps.
prof none
expect_eq "no marker: steps" 0 "$(st none 'len(d["steps"])')"
expect_eq "no marker: step ranges" $N "$(span none NVTX/step)"

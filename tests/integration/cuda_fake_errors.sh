# CUPTI failure modes on the fake libcupti, each giving exactly one line
# while host profiling (here NVTX ranges) goes on and the program's output
# stays the same: CUPTI held by another tool, no permission to profile, a
# libcupti of another major version. Then the tick path: when
# CUDA_INJECTION64_PATH belongs to another tool, mxprof starts CUPTI from
# the drain thread's tick once it sees libcudart loaded.
. "$ROOT/tests/integration/lib.sh"
fakes=$BUILD/fakes
prog=$BUILD/programs/cuda_fake_train
[ -e "$fakes/libcupti.so.13" ] || skip "built without the CUDA toolkit headers (no fake libcupti)"
S=3
expected=$("$prog" "$fakes/libcudart.so.13" $S)

# run NAME PATTERN ENV...: one line matching PATTERN, host ranges kept, no GPU.
run() {
	local name=$1 pattern=$2
	shift 2
	env "$@" MXPROF_HOOK=none MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$name.json" LD_PRELOAD="$PRELOAD" \
		"$prog" "$fakes/libcudart.so.13" $S >"$name.out" 2>"$name.err" || fail "$name: the program failed"
	expect_eq "$name: output" "$expected" "$(cat "$name.out")"
	expect_eq "$name: lines" 1 "$(wc -l <"$name.err")"
	grep -q "$pattern" "$name.err" || fail "$name: unexpected line: $(cat "$name.err")"
	echo "ok: $name: $(cat "$name.err")"
	tracesummary "$name.json" >"$name.sum"
	expect_eq "$name: NVTX ranges" $S "$(jget "$name.sum" 'd["spans"]["NVTX/step"]')"
	expect_eq "$name: GPU events" 0 "$(jget "$name.sum" 'd["gpu"]["device_events"]')"
}
run subscribed "CUPTI is already used by another profiling tool (cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)" FAKE_CUPTI_FAIL=subscribe
run privileges "no permission to profile the GPU (cuptiActivityEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" FAKE_CUPTI_FAIL=privileges
run version "libcupti.so.13 has CUPTI API version 120000, mxprof was built for 130001 (CUDA 13)" FAKE_CUPTI_VERSION=120000

# The tick path: the program waits after loading libcudart until the
# drain thread (10 ms period) has started CUPTI, before the first call
# (the fake libcupti says when the kinds are enabled).
CUDA_INJECTION64_PATH=/nonexistent/libothertool.so MXPROF_HOOK=none MXPROF_AUTOSTART=1 \
	MXPROF_OUTPUT="$WORK/tick.json" LD_PRELOAD="$PRELOAD" \
	"$prog" "$fakes/libcudart.so.13" $S cupti >tick.out 2>tick.err || fail "tick: the program failed"
expect_eq "tick: output" "$expected" "$(cat tick.out)"
expect_eq "tick: stderr" "" "$(cat tick.err)"
tracesummary tick.json >tick.sum
expect_eq "tick: kernels" $((S * 3)) "$(jget tick.sum 'sum(d["gpu"]["kernels"].values())')"
expect_eq "tick: GPU events with a flow" $((S * 6)) "$(jget tick.sum 'd["gpu"]["device_with_flow"]')"

# MXPROF_TRACE=api,nvtx: no CUPTI at all.
MXPROF_HOOK=none MXPROF_TRACE=api,nvtx MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/off.json" LD_PRELOAD="$PRELOAD" \
	"$prog" "$fakes/libcudart.so.13" $S >off.out 2>off.err || fail "off: the program failed"
expect_eq "off: output" "$expected" "$(cat off.out)"
tracesummary off.json >off.sum
expect_eq "off: GPU events" 0 "$(jget off.sum 'd["gpu"]["device_events"]')"
expect_eq "off: NVTX ranges" $S "$(jget off.sum 'd["spans"]["NVTX/step"]')"

# A full ring on the hook path. One thread makes 300000 hooked calls into a
# 64 KiB ring (2048 records) that may not grow (MXPROF_BUFFER_MAX_KB=64).
# Recording a call takes about 20 ns and the
# drain moves at most a few tens of millions of records a second, so the
# ring fills: the trampoline's exit path must then hand the record to the
# C path, which drops and counts it. Every call is accounted for, either as
# a slice or as a dropped record, and the program's output is unchanged.
# With MXPROF_OVERFLOW=block the same run loses nothing.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
N=300000
"$WORK/hook_main_plain" threads 1 $N >"$WORK/plain.txt"
for mode in drop block; do
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$mode.json" MXPROF_BUFFER_KB=64 \
		MXPROF_BUFFER_MAX_KB=64 MXPROF_OVERFLOW=$mode MXPROF_HOOK="$HOOK_SPEC" \
		LD_PRELOAD="$PRELOAD" "$WORK/hook_main_plain" threads 1 $N \
		>"$WORK/$mode.txt"
	diff "$WORK/plain.txt" "$WORK/$mode.txt" ||
		fail "$mode: output differs under mxprof"
	tracesummary "$WORK/$mode.json" >"$WORK/$mode.summary.json"
	spans=$(span "$WORK/$mode.summary.json" 'C API (libhookt.so)/ht_add')
	dropped=$(jget "$WORK/$mode.summary.json" 'd["dropped"]')
	expect_eq "$mode: slices + dropped" $N $((spans + dropped))
	if [ "$mode" = drop ]; then
		[ "$dropped" -ge 1 ] || fail "drop: the ring never filled"
	else
		expect_eq "block: dropped" 0 "$dropped"
	fi
done

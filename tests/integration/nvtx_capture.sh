# MXPROF_CAPTURE_NVTX: recording is on only while an NVTX range of that
# name is open. On the main thread of nvtx_ranges, "inner" holds the "tick"
# marks; "step", "forward" and "epoch" close outside any "inner", so none
# of them is recorded. (The worker thread's ranges are left unasserted:
# the window is process-wide, and whether a worker range closes inside an
# "inner" depends on timing.)
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/nvtx_ranges
[ -x "$prog" ] || skip "nvtx_ranges not built (no CUDA toolkit headers for nvtx3)"
N=200

MXPROF_AUTOSTART=1 MXPROF_CAPTURE_NVTX=inner MXPROF_OUTPUT="$WORK/c.json" \
	LD_PRELOAD="$PRELOAD" "$prog" $N >out.txt
expect_eq "program output" "done $N" "$(cat out.txt)"
tracesummary c.json >s
expect_eq "inner ranges (the capture range itself)" $N "$(jget s 'd["spans"]["NVTX/inner"]')"
expect_eq "marks inside inner" $((N / 10)) "$(jget s 'd["instants"]["NVTX/tick"]')"
expect_eq "step ranges (close outside)" 0 "$(jget s 'd["spans"].get("NVTX/step", 0)')"
expect_eq "forward ranges (outside)" 0 "$(jget s 'd["spans"].get("trainer/forward", 0)')"
expect_eq "epoch range (outside)" 0 "$(jget s 'd["spans"].get("NVTX/epoch", 0)')"
expect_eq "table inner" $N "$(row_count c.stats.txt NVTX inner)"

# A range name the program never opens: nothing is recorded, and a
# process that recorded nothing writes no files.
MXPROF_AUTOSTART=1 MXPROF_CAPTURE_NVTX=never MXPROF_OUTPUT="$WORK/n.json" \
	LD_PRELOAD="$PRELOAD" "$prog" $N >/dev/null
expect_eq "files with an unused capture range" "" "$(ls n.* 2>/dev/null || true)"

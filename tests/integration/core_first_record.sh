# A thread's first record does not wait for the drain thread, even while
# the drain thread is held inside a large journal write (a slow disk): the
# program holds mxprof's write(2) of 64 KiB or more from the drain thread
# and checks that a new thread's first task_stop() completes meanwhile.
# Every task reaches the trace. The first record's cost is printed.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_first_record

MXPROF_AUTOSTART=1 MXPROF_DRAIN_PERIOD_MS=1000 MXPROF_OUTPUT="$WORK/fr.json" \
	LD_PRELOAD="$PRELOAD" "$prog" >out.txt 2>err.txt || fail "the program failed: $(cat err.txt)"
cat out.txt
expect_eq "stderr" "" "$(cat err.txt)"
expect_eq "first record while the drain wrote" \
	"first record while the drain wrote: yes" "$(head -1 out.txt)"
tracesummary fr.json >sum.json
expect_eq "tasks" "{'first_record/first': 1, 'first_record/step': 60000}" \
	"$(jget sum.json 'd["spans"]')"
expect_eq "dropped" 0 "$(jget sum.json 'd["top"]["mxprof"]["droppedRecords"]')"

# Signals that end the process: a C program that records 100 "step" and 50
# "work" tasks and then ends by a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL),
# abort(), or a signal it sends itself (SIGINT, SIGTERM, SIGHUP, SIGQUIT),
# and one whose own SIGINT and SIGSEGV handlers run before its fault. Each
# is run without mxprof and under it: the raw wait status (signal and
# core-dump bit), stdout and stderr are the same, and the trace left
# behind loads and holds every task recorded before the end.
. "$ROOT/tests/integration/lib.sh"
PROG=$BUILD/programs/end_signal
cd "$WORK"
ulimit -c unlimited 2>/dev/null || true # the core bit, where allowed

# A sanitizer runtime (in the program and in mxprof) must leave the faults
# to the program and to mxprof, in both runs.
NOSAN=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:$NOSAN" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:$NOSAN"

for how in segv bus fpe ill abort int term hup quit handlers; do
	plain=$(wait_status "plain-$how" "$PROG" "$how")
	mx=$(wait_status "mx-$how" /usr/bin/env MXPROF_AUTOSTART=1 \
		MXPROF_OUTPUT="$WORK/$how.json" LD_PRELOAD="$PRELOAD" \
		"$PROG" "$how")
	rm -f core core.*
	expect_eq "$how: wait status (signal $((plain & 127)))" "$plain" "$mx"
	[ $((plain & 127)) -ne 0 ] || fail "$how: the program did not die by a signal"
	cmp "plain-$how.out" "mx-$how.out" || fail "$how: stdout differs"
	cmp "plain-$how.err" "mx-$how.err" || fail "$how: stderr differs"
	tracesummary "$how.json" >"$how.sum"
	expect_eq "$how: step" 100 "$(jget "$how.sum" "d['spans'].get('end/step', 0)")"
	expect_eq "$how: work" 50 "$(jget "$how.sum" "d['spans'].get('end/work', 0)")"
	expect_eq "$how: step in the tables" 100 "$(row_count "$how.stats.txt" end step)"
	[ ! -e "$how.json.journal" ] || fail "$how: the journal was left behind"
done
expect_eq "handlers: the program's own, in order" \
	"$(printf 'steps 100\nown SIGINT handler\nown SIGSEGV handler')" \
	"$(cat mx-handlers.out)"

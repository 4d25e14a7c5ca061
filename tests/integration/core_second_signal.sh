# A second signal that ends the process, while the final dump of the
# first is written, must not change how the process ends: the program
# core_second_signal faults (SIGSEGV), and its write() sends the process
# SIGTERM when mxprof's drain thread writes the final dump. The SIGTERM
# handler used to wait for that dump too and then end the process by
# SIGTERM (143 where the plain program gives 139).
# Checks: the wait status, stdout and stderr are those of the plain run,
# and the trace holds the 100 tasks.
. "$ROOT/tests/integration/lib.sh"
PROG=$BUILD/programs/core_second_signal
cd "$WORK"
ulimit -c 0 # the same status with or without a core file

NOSAN=handle_segv=0:allow_user_segv_handler=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:$NOSAN" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:$NOSAN"
plain=$(wait_status plain "$PROG")
expect_eq "plain: wait status" 11 "$plain"
mx=$(wait_status mx /usr/bin/env MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/second.json" \
	LD_PRELOAD="$PRELOAD" "$PROG")
cat mx.err
expect_eq "under mxprof: wait status" "$plain" "$mx"
cmp plain.out mx.out || fail "stdout differs"
cmp plain.err mx.err || fail "stderr differs"
tracesummary second.json >second.sum
expect_eq "steps in the trace" 100 "$(jget second.sum "d['spans'].get('second/step', 0)")"

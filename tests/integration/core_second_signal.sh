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

# run OUT ARGS...: runs ARGS with stdout in OUT.out and stderr in OUT.err;
# prints the raw wait status.
run() {
	python3 - "$@" <<'PYEOF'
import os, sys
out = sys.argv[1]
pid = os.fork()
if pid == 0:
    os.dup2(os.open(out + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
    os.dup2(os.open(out + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
    os.execv(sys.argv[2], sys.argv[2:])
print(os.waitpid(pid, 0)[1])
PYEOF
}

NOSAN=handle_segv=0:allow_user_segv_handler=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:$NOSAN" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:$NOSAN"
plain=$(run plain "$PROG")
expect_eq "plain: wait status" 11 "$plain"
mx=$(run mx /usr/bin/env MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/second.json" \
	LD_PRELOAD="$PRELOAD" "$PROG")
cat mx.err
expect_eq "under mxprof: wait status" "$plain" "$mx"
cmp plain.out mx.out || fail "stdout differs"
cmp plain.err mx.err || fail "stderr differs"
tracesummary second.json >second.sum
expect_eq "steps in the trace" 100 "$(jget second.sum "d['spans'].get('second/step', 0)")"

# A signal that ends the process while mxprof starts, in its constructor:
# the main thread used to hold the collector's owner lock when the
# signal, held back while the drain thread was created, came in, and its
# handler then waited 5 s for a drain thread that waited for that lock
# (one line "did not finish within 5 s"). The program core_start_signal
# sends itself SIGTERM from the first pthread_create(), the drain
# thread's under MXPROF_AUTOSTART.
# Checks: the wait status, stdout and stderr are those of the plain run
# (SIGTERM, nothing printed), and no journal is left behind.
. "$ROOT/tests/integration/lib.sh"
PROG=$BUILD/programs/core_start_signal
cd "$WORK"

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

plain=$(run plain "$PROG")
expect_eq "plain: wait status" 15 "$plain"
for i in 1 2 3; do
	mx=$(run "mx$i" /usr/bin/env MXPROF_AUTOSTART=1 \
		MXPROF_OUTPUT="$WORK/start$i.json" LD_PRELOAD="$PRELOAD" "$PROG")
	cat "mx$i.err"
	expect_eq "run $i: wait status" "$plain" "$mx"
	cmp plain.out "mx$i.out" || fail "run $i: stdout differs"
	cmp plain.err "mx$i.err" || fail "run $i: stderr differs"
	[ ! -e "start$i.json.journal" ] || fail "run $i: the journal was left"
done

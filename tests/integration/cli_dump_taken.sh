# mxprof dump against a program whose own handler has the dump signal:
# one line that says so and names MXPROF_SIGNAL, at once, not after the
# timeout; whether the program took the signal before mxprof loaded
# (ignored by its parent) or after.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PY=/usr/bin/python3
cat > h.py <<'PYEOF'
import os, signal, sys, time
if sys.argv[1] == 'after':
    signal.signal(signal.SIGUSR1, lambda *a: None)
open(sys.argv[2] + '.ready', 'w').close()
for i in range(6000):          # at most 60 s; the test ends it first
    if os.path.exists(sys.argv[2] + '.stop'):
        break
    time.sleep(0.01)
PYEOF

check() { # WHEN PID NAME
	set +e
	"$MX" dump --timeout 60 "$2" > "$3.out" 2> "$3.err"
	rc=$?
	set -e
	touch "$3.stop"
	wait "$2" || true
	expect_eq "$1: exit" 1 "$rc"
	expect_eq "$1: lines" 1 "$(wc -l < "$3.err")"
	grep -q "^mxprof dump: process $2 handles the dump signal 10 (SIGUSR1) itself, so mxprof cannot dump it on a signal; start it with MXPROF_SIGNAL set to another signal" "$3.err" ||
		fail "$1: $(cat "$3.err")"
}

MXPROF_AUTOSTART=1 MXPROF_OUTPUT=a.json LD_PRELOAD="$PRELOAD" "$PY" h.py after a 2> a.prog.err &
pid=$!
wait_until -p $pid a.ready '[ -e a.ready ]'
check "handler installed after load" $pid a

(trap '' USR1; MXPROF_AUTOSTART=1 MXPROF_OUTPUT=b.json LD_PRELOAD="$PRELOAD" exec "$PY" h.py before b) 2> b.prog.err &
pid=$!
wait_until -p $pid b.ready '[ -e b.ready ]'
check "signal ignored before load" $pid b

# MXPROF_SIGNAL=none still says so.
MXPROF_SIGNAL=none MXPROF_AUTOSTART=1 MXPROF_OUTPUT=c.json LD_PRELOAD="$PRELOAD" "$PY" h.py none c &
pid=$!
wait_until -p $pid c.ready '[ -e c.ready ]'
set +e
"$MX" dump "$pid" 2> c.err
set -e
touch c.stop
wait $pid || true
grep -q "has no dump signal (MXPROF_SIGNAL=none)" c.err || fail "none: $(cat c.err)"
echo "ok: MXPROF_SIGNAL=none"

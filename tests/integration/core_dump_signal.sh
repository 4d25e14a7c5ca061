# The dump signal never changes the program: dump signals, each sent
# while the main thread sleeps in sleep(), nanosleep(), poll(), select(),
# epoll_wait() or sem_timedwait(), interrupt none of them (output and exit status as in a
# run without mxprof and without signals), and each is a dump. One round
# of the six calls by default (about 2.5 s a run); SLOW=1: 20 calls. A number in
# MXPROF_SIGNAL names only the signals a name may (2, 13, 15, 17 refused
# with one line; SIGTERM and SIGINT still end the program). A program that
# handles SIGUSR1 keeps its handler, whether it set it before a late load
# of mxprof (ctypes) or after mxprof was preloaded: one line, no dump
# signal, and the status file says signal=0 (mxprof dump sends nothing).
. "$ROOT/tests/integration/lib.sh"
cd "$WORK"
PROG=$BUILD/programs/dump_block

R=6
[ "${SLOW:-}" = 1 ] && R=20
set +e
"$PROG" $R >plain.out 2>plain.err
plain=$?
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/d.json" LD_PRELOAD="$PRELOAD" \
	"$PROG" -s 10 $R >mx.out 2>mx.err
mx=$?
set -e
expect_eq "exit status (calls ended early)" "$plain" "$mx"
expect_eq "exit status without mxprof" 0 "$plain"
cmp plain.out mx.out || fail "output differs"
# Nothing is recorded (no library of @auto's is loaded): mxprof's one
# line says so; the program's own stderr is unchanged. progerr FILE: FILE
# without that line.
progerr() { grep -v '^mxprof: nothing was recorded; ' "$1" || true; }
expect_eq "empty-run line" 1 "$(grep -c '^mxprof: nothing was recorded; ' mx.err)"
progerr mx.err >mx.prog.err
cmp plain.err mx.prog.err || fail "stderr differs"
expect_eq "lines" $R "$(wc -l <mx.out)"
tracesummary d.json >/dev/null

# MXPROF_SIGNAL by number: the names' signals only.
for n in 2 13 15 17 9 11; do
	set +e
	MXPROF_SIGNAL=$n LD_PRELOAD="$PRELOAD" "$BUILD/programs/end_signal" \
		-n 4 hup >sig$n.out 2>sig$n.err
	rc=$?
	set -e
	expect_eq "MXPROF_SIGNAL=$n: ends by SIGHUP" 129 "$rc"
	expect_eq "MXPROF_SIGNAL=$n: one line" 1 "$(wc -l <sig$n.err)"
	grep -q "^mxprof: MXPROF_SIGNAL='$n' is not valid" sig$n.err ||
		fail "MXPROF_SIGNAL=$n: $(cat sig$n.err)"
done
for n in 15 2; do
	how=$([ $n = 15 ] && echo term || echo int)
	set +e
	MXPROF_SIGNAL=$n LD_PRELOAD="$PRELOAD" "$BUILD/programs/end_signal" \
		-n 4 $how >/dev/null 2>&1
	rc=$?
	set -e
	expect_eq "MXPROF_SIGNAL=$n: signal $n still ends the program" \
		$((128 + n)) "$rc"
done
set +e
MXPROF_SIGNAL=10 LD_PRELOAD="$PRELOAD" "$BUILD/programs/end_signal" \
	-n 4 hup >/dev/null 2>sig10.err
set -e
expect_eq "MXPROF_SIGNAL=10 accepted" "" "$(cat sig10.err)"

# A program's own SIGUSR1 handler, before a late load and after a preload.
cat >own.py <<'PYEOF'
import ctypes, os, signal, sys, time
seen = []
if sys.argv[1] == "before":
    signal.signal(signal.SIGUSR1, lambda s, f: seen.append(s))
    ctypes.CDLL(sys.argv[2])
else:
    signal.signal(signal.SIGUSR1, lambda s, f: seen.append(s))
for i in range(3):
    os.kill(os.getpid(), signal.SIGUSR1)
print("handled", len(seen))
if sys.argv[1] == "after":
    # The drain thread rewrites the status file after its next pass.
    base = os.environ.get("XDG_RUNTIME_DIR")
    status = (base + "/mxprof" if base else "/tmp/mxprof-%d" % os.getuid())
    status += "/%d.status" % os.getpid()
    for i in range(6000):
        lines = open(status).read().split()
        if "signal=0" in lines:
            break
        time.sleep(0.01)
    print([l for l in lines if l.startswith("signal=")][0])
PYEOF
LIB=${PRELOAD##* }
python3 own.py before "$LIB" >before.out 2>before.err
expect_eq "late load: the program's handler" "handled 3" "$(cat before.out)"
expect_eq "late load: one line" "mxprof: the program already handles the dump signal; no dump signal (use MXPROF_SIGNAL to choose another)" "$(progerr before.err)"
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/after.json" LD_PRELOAD="$PRELOAD" \
	python3 own.py after >after.out 2>after.err
expect_eq "preload: the program's handler, the status file" \
	"$(printf 'handled 3\nsignal=0')" "$(cat after.out)"
expect_eq "preload: one line" "mxprof: the program handles the dump signal; no dump signal (use MXPROF_SIGNAL to choose another)" "$(progerr after.err)"

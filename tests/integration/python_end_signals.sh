# A Python loop stopped by SIGINT (an unhandled KeyboardInterrupt: Python
# sets SIGINT's default back and sends it to itself) and by SIGTERM, with
# zlib's deflate hooked. Run without mxprof and under it: the raw wait
# status, stdout and stderr (the traceback) are the same, and the trace
# left behind holds every deflate call made before the signal. Then a
# segmentation fault under Python's faulthandler: its traceback is printed
# as without mxprof (but for the thread's address), the status is the
# same, and the trace holds every call made before the fault.
. "$ROOT/tests/integration/lib.sh"
PY=$(python3 -c 'import sys; print(sys.executable)')
cd "$WORK"
cat >loop.py <<'PYEOF'
import os, signal, sys, zlib
n, how = int(sys.argv[1]), sys.argv[2]
data = bytes(range(256)) * 16
for i in range(n):
    zlib.compress(data, 6)
print("compressed", n, flush=True)
os.kill(os.getpid(), signal.SIGINT if how == "int" else signal.SIGTERM)
while True:
    zlib.compress(data, 6)
PYEOF

for how in int term; do
	plain=$(wait_status "plain-$how" "$PY" loop.py 200 "$how")
	mx=$(wait_status "mx-$how" /usr/bin/env MXPROF_AUTOSTART=1 \
		MXPROF_OUTPUT="$WORK/$how.json" MXPROF_HOOK='libz.so*:deflate' \
		LD_PRELOAD="$PRELOAD" "$PY" loop.py 200 "$how")
	expect_eq "$how: wait status" "$plain" "$mx"
	[ $((plain & 127)) -ne 0 ] || fail "$how: python did not die by a signal"
	cmp "plain-$how.out" "mx-$how.out" || fail "$how: stdout differs"
	cmp "plain-$how.err" "mx-$how.err" || fail "$how: stderr differs"
	tracesummary "$how.json" >"$how.sum"
	# Each zlib.compress() is one deflate (Z_FINISH). The signal is taken
	# before os.kill() returns (SIGINT's KeyboardInterrupt is raised
	# there), so the loop after it never runs.
	got=$(jget "$how.sum" "d['spans'].get('C API (libz.so.1)/deflate', 0)")
	expect_eq "$how: deflate before the signal" 200 "$got"
	[ ! -e "$how.json.journal" ] || fail "$how: the journal was left behind"
done

# A sanitizer runtime in mxprof must leave the fault to Python.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:handle_segv=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:handle_segv=0"
cat >fault.py <<'PYEOF'
import ctypes, zlib
data = bytes(range(256)) * 16
for i in range(50):
    zlib.compress(data, 6)
print("compressed 50", flush=True)
ctypes.string_at(0)
PYEOF
plain=$(wait_status plain-fault "$PY" -X faulthandler fault.py)
mx=$(wait_status mx-fault /usr/bin/env MXPROF_AUTOSTART=1 \
	MXPROF_OUTPUT="$WORK/fault.json" MXPROF_HOOK='libz.so*:deflate' \
	LD_PRELOAD="$PRELOAD" "$PY" -X faulthandler fault.py)
rm -f core core.*
expect_eq "faulthandler: wait status" "$plain" "$mx"
expect_eq "faulthandler: signal" 11 $((plain & 127))
cmp plain-fault.out mx-fault.out || fail "faulthandler: stdout differs"
for f in plain-fault mx-fault; do
	sed 's/0x[0-9a-f]*/0xN/' "$f.err" >"$f.err.n"
done
cmp plain-fault.err.n mx-fault.err.n || fail "faulthandler: stderr differs"
grep -q "^Fatal Python error: Segmentation fault" mx-fault.err ||
	fail "faulthandler did not print"
tracesummary fault.json >fault.sum
expect_eq "faulthandler: deflate before the fault" 50 \
	"$(jget fault.sum "d['spans'].get('C API (libz.so.1)/deflate', 0)")"

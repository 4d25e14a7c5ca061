# The api source: hooked C API calls are timed only while it is on.
# MXPROF_TRACE without `api` turns it off from the start, and the Python
# binding's set_config(profile_api=False/True) turns it off and on while
# the program runs. CPython's zlib.compress() makes one deflateInit2_,
# deflate and deflateEnd call each.
. "$ROOT/tests/integration/lib.sh"
PY=$(python3 -c 'import sys; print(sys.executable)')
cat >"$WORK/zl.py" <<'PYEOF'
import sys, zlib
data = bytes(range(256)) * 64
def rounds(n):
    for i in range(n):
        zlib.compress(data, 6)
rounds(5)
if len(sys.argv) > 1:
    from mxprof import profiler
    profiler.set_config(profile_api=False)
    rounds(7)
    profiler.set_config(profile_api=True)
    rounds(3)
    profiler.set_config(profile_all=False)
    rounds(11)
    profiler.set_config(profile_all=True)
    rounds(2)
PYEOF
g='C API (libz.so.1)'
run() { # run NAME TRACE [ARG]
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$1.json" MXPROF_TRACE=$2 \
		MXPROF_HOOK='libz.so*:deflate*' LD_PRELOAD="$PRELOAD" \
		PYTHONPATH="$ROOT/tools/python" "$PY" "$WORK/zl.py" ${3:-} \
		2>"$WORK/$1.err"
	# A run that recorded nothing writes no trace.
	if [ -e "$WORK/$1.json" ]; then
		tracesummary "$WORK/$1.json" >"$WORK/$1.sum"
	else
		echo '{"spans": {}}' >"$WORK/$1.sum"
	fi
}
count() { jget "$WORK/$1.sum" "d['spans'].get('$g/$2', 0)"; }

run all all
expect_eq "MXPROF_TRACE=all: deflateEnd" 5 "$(count all deflateEnd)"
run api api
expect_eq "MXPROF_TRACE=api: deflateEnd" 5 "$(count api deflateEnd)"
run noapi nvtx,memory
expect_eq "MXPROF_TRACE=nvtx,memory: deflateEnd" 0 "$(count noapi deflateEnd)"
expect_eq "MXPROF_TRACE=nvtx,memory: deflate" 0 "$(count noapi deflate)"

run toggled all x
expect_eq "profile_api off for 7, on for 3, profile_all off for 11: deflateEnd" \
	10 "$(count toggled deflateEnd)"
expect_eq "the same: deflateInit2_" 10 "$(count toggled deflateInit2_)"
[ ! -s "$WORK/toggled.err" ] || fail "stderr: $(cat "$WORK/toggled.err")"
echo "ok: nothing on stderr"

# The default MXPROF_HOOK (@auto) applies @mxnet when the program loads a
# libmxnet.so, here a stand-in with MXNet's conventions (fake_mxnet.c).
# MX* functions return a status: every slice carries it, non-zero ones are
# errors, and the table gets an Errors column. MXGetLastError returns a
# string, so it is never counted as an error. N = 30: 30 MXNDArrayCreate
# (10 failing), 1 MXGetVersion, 10 MXGetLastError.
. "$ROOT/tests/integration/lib.sh"
H=$ROOT/tests/programs/hooklibs
cc -O2 -shared -fPIC -Wl,-soname,libmxnet.so -o "$WORK/libmxnet.so" \
	"$H/fake_mxnet.c"
cc -O2 -o "$WORK/hook_mxnet" "$H/hook_mxnet.c" -L"$WORK" -lmxnet \
	-Wl,-rpath,"$WORK"
"$WORK/hook_mxnet" 30 >"$WORK/plain.txt"
env -u MXPROF_HOOK MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/mx.json" \
	LD_PRELOAD="$PRELOAD" "$WORK/hook_mxnet" 30 >"$WORK/mx.txt" 2>"$WORK/mx.err"
diff "$WORK/plain.txt" "$WORK/mx.txt" || fail "output differs"
if grep -q 'MXPROF_HOOK' "$WORK/mx.err"; then fail "@auto printed a line"; fi
tracesummary "$WORK/mx.json" >"$WORK/mx.sum"
g='C API (libmxnet.so)'
expect_eq MXNDArrayCreate 30 "$(jget "$WORK/mx.sum" "d['spans'].get('$g/MXNDArrayCreate', 0)")"
expect_eq MXGetVersion 1 "$(jget "$WORK/mx.sum" "d['spans'].get('$g/MXGetVersion', 0)")"
expect_eq MXGetLastError 10 "$(jget "$WORK/mx.sum" "d['spans'].get('$g/MXGetLastError', 0)")"
errs=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(1 for e in d["traceEvents"] if e.get("ph") == "X"
          and e.get("args", {}).get("error") == 1))' "$WORK/mx.json")
expect_eq "slices marked error" 10 "$errs"
grep -q 'Errors' "$WORK/mx.stats.txt" || fail "no Errors column"
awk -v sec="$g" '$0 == sec { s = 1; next } s && /^$/ { s = 0 }
	s && $1 == "MXNDArrayCreate" { print $NF }' "$WORK/mx.stats.txt" >"$WORK/e"
expect_eq "MXNDArrayCreate Errors cell" 10 "$(cat "$WORK/e")"

# numpy from Debian (/usr/bin/python3) with OpenBLAS: K numpy.dot calls of
# 64x64 float64 matrices are exactly K cblas_dgemm calls, in the section of
# the library that defines it (Debian's OpenBLAS has the soname
# libblas.so.3). Hooked with '*:cblas_dgemm'.
. "$ROOT/tests/integration/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import numpy' || fail "python3-numpy is not installed"
cat >"$WORK/np.py" <<'PYEOF'
import sys
import numpy as np
k = int(sys.argv[1])
a = np.arange(64 * 64, dtype=np.float64).reshape(64, 64) / 4096.0
b = np.ones((64, 64), dtype=np.float64)
s = 0.0
for i in range(k):
    s += float(np.dot(a, b)[3, 5])
print("%.6f" % s)
PYEOF
for k in 3 25; do
	"$PY" "$WORK/np.py" $k >"$WORK/plain$k.txt"
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/n$k.json" \
		MXPROF_HOOK='*:cblas_dgemm' LD_PRELOAD="$PRELOAD" \
		"$PY" "$WORK/np.py" $k >"$WORK/mx$k.txt"
	diff "$WORK/plain$k.txt" "$WORK/mx$k.txt" || fail "output differs"
	tracesummary "$WORK/n$k.json" >"$WORK/n$k.sum"
	expect_eq "K=$k cblas_dgemm" $k "$(jget "$WORK/n$k.sum" \
		"sum(v for s, v in d['spans'].items() if s.endswith('/cblas_dgemm'))")"
	lib=$(jget "$WORK/n$k.sum" \
		"[s for s in d['spans'] if s.endswith('/cblas_dgemm')][0]")
	case $lib in "C API (lib"*".so"*")/cblas_dgemm") ;;
	*) fail "unexpected section $lib" ;; esac
done

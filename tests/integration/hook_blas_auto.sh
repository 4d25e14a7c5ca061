# The @blas preset, part of the default @auto: numpy from Debian
# (/usr/bin/python3) with OpenBLAS, run with no setting but
# MXPROF_AUTOSTART=1, shows its matrix products: K numpy.dot calls of
# 64x64 float64 matrices are exactly K cblas_dgemm rows, in the section of
# the BLAS library that defines it. The program's output is unchanged.
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
	mkdir "$WORK/k$k" && cd "$WORK/k$k"
	"$PY" "$WORK/np.py" $k >plain.txt
	MXPROF_AUTOSTART=1 LD_PRELOAD="$PRELOAD" "$PY" "$WORK/np.py" $k >mx.txt
	diff plain.txt mx.txt || fail "output differs"
	sec=$(awk '/^C API \(/ { t = $0 } /^cblas_dgemm / { print t }' \
		profile.stats.txt)
	case $sec in "C API (lib"*blas*".so"*")") ;;
	*) fail "no cblas_dgemm row in a BLAS library's section: '$sec'" ;; esac
	expect_eq "K=$k cblas_dgemm" $k "$(row_count profile.stats.txt "$sec" cblas_dgemm)"
	tracesummary profile.json >sum.json
	expect_eq "K=$k cblas_dgemm slices" $k "$(jget sum.json \
		"d['spans'].get('$sec/cblas_dgemm', 0)")"
done

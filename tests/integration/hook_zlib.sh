# CPython's zlib module against Debian's libz.so.1, hooked with
# 'libz.so*:deflate*'. For n rounds the script calls zlib.compress() n
# times (each: deflateInit2_, one deflate, deflateEnd), then one
# compressobj: n compress() calls (one deflate each) and flush()
# (deflate(Z_FINISH), deflateEnd). So deflate = 2n + 1, deflateInit2_ =
# n + 1 and deflateEnd = n + 1.
. "$ROOT/tests/integration/lib.sh"
PY=$(python3 -c 'import sys; print(sys.executable)')
cat >"$WORK/zl.py" <<'PYEOF'
import sys, zlib
n = int(sys.argv[1])
data = bytes(range(256)) * 64
out = [zlib.compress(data, 6) for i in range(n)]
c = zlib.compressobj(6)
out += [c.compress(data) for i in range(n)]
out.append(c.flush())
print(sum(len(o) for o in out), zlib.crc32(b"".join(out)))
PYEOF
for n in 5 40; do
	"$PY" "$WORK/zl.py" $n >"$WORK/plain$n.txt"
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/z$n.json" \
		MXPROF_HOOK='libz.so*:deflate*' LD_PRELOAD="$PRELOAD" \
		"$PY" "$WORK/zl.py" $n >"$WORK/mx$n.txt"
	diff "$WORK/plain$n.txt" "$WORK/mx$n.txt" || fail "output differs"
	tracesummary "$WORK/z$n.json" >"$WORK/z$n.sum"
	g='C API (libz.so.1)'
	expect_eq "n=$n deflate" $((2 * n + 1)) \
		"$(jget "$WORK/z$n.sum" "d['spans'].get('$g/deflate', 0)")"
	expect_eq "n=$n deflateInit2_" $((n + 1)) \
		"$(jget "$WORK/z$n.sum" "d['spans'].get('$g/deflateInit2_', 0)")"
	expect_eq "n=$n deflateEnd" $((n + 1)) \
		"$(jget "$WORK/z$n.sum" "d['spans'].get('$g/deflateEnd', 0)")"
done

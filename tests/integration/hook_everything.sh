# Every function of every library at once (MXPROF_HOOK='*:*'), in CPython
# running sqlite3, zlib, hashlib (OpenSSL) and threads: libc, libpython,
# libcrypto and the rest all go through the trampolines, and the program's
# output must not change. With MXPROF_OVERFLOW=block no record is dropped
# while the program runs (calls made by exit handlers after the final dump
# still are, and are counted), so the zlib counts are exact even here: 8 threads each call
# zlib.compress once (8 x deflateInit2_ and deflateEnd), and crc32 is
# called 5 times from Python.
. "$ROOT/tests/integration/lib.sh"
PY=$(python3 -c 'import sys; print(sys.executable)')
cat >"$WORK/all.py" <<'PYEOF'
import hashlib, json, sqlite3, threading, zlib
out = []
def work(i):
    out.append(len(zlib.compress(bytes([i]) * 100000)))
t = [threading.Thread(target=work, args=(i,)) for i in range(8)]
[x.start() for x in t]
[x.join() for x in t]
con = sqlite3.connect(":memory:")
con.execute("CREATE TABLE t (a)")
con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(50)])
print(sorted(out), con.execute("SELECT SUM(a) FROM t").fetchone())
print(hashlib.sha256(b"mxprof").hexdigest(), len(json.dumps(list(range(99)))))
print([zlib.crc32(bytes([i])) for i in range(5)])
PYEOF
"$PY" "$WORK/all.py" >"$WORK/plain.txt"
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/all.json" MXPROF_HOOK='*:*' \
	MXPROF_OVERFLOW=block LD_PRELOAD="$PRELOAD" \
	"$PY" "$WORK/all.py" >"$WORK/mx.txt"
diff "$WORK/plain.txt" "$WORK/mx.txt" || fail "output differs under '*:*'"
tracesummary "$WORK/all.json" >"$WORK/all.sum"
g='C API (libz.so.1)'
expect_eq deflateInit2_ 8 "$(jget "$WORK/all.sum" "d['spans'].get('$g/deflateInit2_', 0)")"
expect_eq deflateEnd 8 "$(jget "$WORK/all.sum" "d['spans'].get('$g/deflateEnd', 0)")"
expect_eq crc32 5 "$(jget "$WORK/all.sum" "d['spans'].get('$g/crc32', 0)")"

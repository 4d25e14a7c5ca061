# A descendant that brings its own getenv and setenv (bash, exec'ed by
# Python's subprocess) stays a descendant: it never writes the root's
# files (and, as it records nothing, writes none of its own), and the
# root's trace and tables keep every record:
# 100 crc32 calls before bash ran and 50 after. Without mxprof the program
# prints the same line.
. "$ROOT/tests/integration/lib.sh"
cd "$WORK"
PY=$(python3 -c 'import sys; print(sys.executable)')
cat >root.py <<'PY'
import os, subprocess, time, zlib
for i in range(100):
    zlib.crc32(b"a")
# bash starts once the root's journal is on disk.
for _ in range(30000):
    if os.path.exists("t.json.journal"):
        break
    time.sleep(0.01)
else:
    raise SystemExit("no t.json.journal after 300 s")
subprocess.run(["bash", "-c", "echo child $$ >child.txt; echo done"], check=True)
for i in range(50):
    zlib.crc32(b"b")
PY
MXPROF_AUTOSTART=1 MXPROF_OUTPUT=t.json MXPROF_HOOK='libz.so*:crc32' \
	LD_PRELOAD="$PRELOAD" "$PY" root.py >out.txt 2>err.txt
expect_eq "output" "done" "$(cat out.txt)"
expect_eq "messages" "" "$(cat err.txt)"
expect_eq "files" "child.txt err.txt out.txt root.py t.json t.stats.txt" \
	"$(ls | sort | tr '\n' ' ' | sed 's/ $//')"
tracesummary t.json >s.json
expect_eq "root's crc32 calls" 150 "$(jget s.json 'd["spans"]["C API (libz.so.1)/crc32"]')"
expect_eq "root's pid in its trace" "$(jget t.json 'd["mxprof"]["pid"]')" "$(jget s.json 'd["pids"][0]')"
expect_eq "root's table" 150 "$(row_count t.stats.txt 'C API (libz.so.1)' crc32)"

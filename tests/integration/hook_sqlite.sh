# CPython's sqlite3 module (nobody here wrote it) against Debian's
# libsqlite3.so.0, hooked with 'libsqlite3.so*:sqlite3_*'.
#
# The script creates a table, inserts N rows with one parameterised
# statement, commits, and runs one SELECT. Measured counts, read off the
# nesting in the trace:
#  - sqlite3_prepare_v2 is 7 for any N. Five come from _sqlite3: CREATE,
#    the INSERT (prepared once: _sqlite3 caches statements), the implicit
#    BEGIN, COMMIT and the SELECT. Two more are made by libsqlite3 itself
#    inside a nested sqlite3_exec while it reads the schema on first use
#    and while CREATE runs: Debian builds it with semantic interposition,
#    so its calls to its own exported functions go through its GOT and
#    are hooked too.
#  - sqlite3_step is N + 8: one per INSERT; CREATE, BEGIN and COMMIT one
#    each; the SELECT two (a row, then SQLITE_DONE); and three inside
#    those nested sqlite3_exec calls.
# Two runs (N = 100 and N = 300) pin both the constant and the per-row
# cost.
. "$ROOT/tests/integration/lib.sh"
PY=$(python3 -c 'import sys; print(sys.executable)')
cat >"$WORK/sq.py" <<'PYEOF'
import sqlite3, sys
n = int(sys.argv[1])
con = sqlite3.connect(":memory:")
cur = con.cursor()
cur.execute("CREATE TABLE t (a INTEGER, b TEXT)")
for i in range(n):
    cur.execute("INSERT INTO t VALUES (?, ?)", (i, str(i)))
con.commit()
print(cur.execute("SELECT COUNT(*), SUM(a) FROM t").fetchone())
con.close()
PYEOF
for n in 100 300; do
	"$PY" "$WORK/sq.py" $n >"$WORK/plain$n.txt"
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/s$n.json" \
		MXPROF_HOOK='libsqlite3.so*:sqlite3_*' LD_PRELOAD="$PRELOAD" \
		"$PY" "$WORK/sq.py" $n >"$WORK/mx$n.txt"
	diff "$WORK/plain$n.txt" "$WORK/mx$n.txt" || fail "output differs"
	tracesummary "$WORK/s$n.json" >"$WORK/s$n.sum"
	g='C API (libsqlite3.so.0)'
	expect_eq "N=$n sqlite3_step" $((n + 8)) \
		"$(jget "$WORK/s$n.sum" "d['spans'].get('$g/sqlite3_step', 0)")"
	expect_eq "N=$n sqlite3_prepare_v2" 7 \
		"$(jget "$WORK/s$n.sum" "d['spans'].get('$g/sqlite3_prepare_v2', 0)")"
	expect_eq "N=$n bind_int64" $n \
		"$(jget "$WORK/s$n.sum" "d['spans'].get('$g/sqlite3_bind_int64', 0)")"
	expect_eq "N=$n table sqlite3_step" $((n + 8)) \
		"$(row_count "$WORK/s$n.stats.txt" "$g" sqlite3_step)"
done

# With call stacks (MXPROF_STACKS): _sqlite3 releases the GIL around
# sqlite3_step, and each call is still charged to the Python line that
# made it: the INSERT line N + 1 times (the implicit BEGIN comes with the
# first INSERT), CREATE 4 (its own and the 3 nested ones), COMMIT 1 and the
# SELECT 2: N + 8 in all, as above.
n=100
MXPROF_STACKS=32 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/k.json" \
	MXPROF_HOOK='libsqlite3.so*:sqlite3_*' LD_PRELOAD="$PRELOAD" \
	"$PY" "$WORK/sq.py" $n >"$WORK/mxk.txt"
diff "$WORK/plain$n.txt" "$WORK/mxk.txt" || fail "output differs with stacks"
sites='Call Sites: C API (libsqlite3.so.0)'
for want in "5 4" "7 $((n + 1))" "8 1" "9 2"; do
	set -- $want
	expect_eq "sqlite3_step from sq.py:$1" "$2" \
		"$(row_count "$WORK/k.stats.txt" "$sites" "sqlite3_step @ <module> (sq.py:$1)")"
done

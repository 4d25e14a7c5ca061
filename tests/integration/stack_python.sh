# Mixed native and Python call stacks (MXPROF_STACKS) with CPython builds
# nobody here made: Debian's /usr/bin/python3 (the interpreter linked into
# the executable) and every pyenv build installed (3.9 to 3.13, libpython
# a shared library). For each:
#  - caller_py() -> leaf_py() -> zlib.crc32, 3 calls: the Python frames
#    leaf_py (stack_script.py:8) <- caller_py (...:14) <- <module> (...:22),
#    and the call site leaf_py's line;
#  - two_lines() -> zlib.crc32 by turns from two lines, 4 calls from the
#    same native place: each call has its own line (a stack reused from
#    the last capture there must have the same Python frames);
#  - sqlite3's execute and fetchall, which release the GIL around
#    sqlite3_step: the Python line that called them, query (...:19);
#  - the output is the same as without mxprof.
. "$ROOT/tests/integration/lib.sh"
S=stack_script.py
cp "$ROOT/tests/programs/stacks/$S" "$WORK/$S"
cd "$WORK"
pythons=(/usr/bin/python3)
for v in 3.9 3.10 3.11 3.12 3.13; do
	p=$(ls -d /root/.pyenv/versions/$v.*/bin/python$v 2>/dev/null | tail -1)
	if [ -n "$p" ]; then pythons+=("$p"); else skip_part "CPython $v (not installed)"; fi
done
n=0
for py in "${pythons[@]}"; do
	[ -x "$py" ] || continue
	n=$((n + 1))
	"$py" "$S" >"plain.$n.txt"
	MXPROF_STACKS=32 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/p$n.json" \
		MXPROF_HOOK='libz.so*:crc32,libsqlite3*:sqlite3_step' \
		LD_PRELOAD="$PRELOAD" "$py" "$S" >"mxprof.$n.txt"
	diff "plain.$n.txt" "mxprof.$n.txt" || fail "$py: output differs"
	expect_eq "$py: Python frames" \
		"3 crc32 <- leaf_py ($S:8) [python] <- caller_py ($S:14) [python] <- <module> ($S:22) [python]
2 crc32 <- two_lines ($S:30) [python] <- <module> ($S:36) [python]
2 crc32 <- two_lines ($S:32) [python] <- <module> ($S:36) [python]
2 sqlite3_step <- query ($S:19) [python] <- <module> ($S:23) [python]" \
		"$(python3 "$ROOT/tests/tools/stackcheck.py" "p$n.json" 0 python)"
	expect_eq "$py: crc32's call site" 3 \
		"$(row_count "p$n.stats.txt" 'Call Sites: C API (libz.so.1)' \
			"crc32 @ leaf_py ($S:8)")"
	expect_eq "$py: sqlite3_step's call site" 2 \
		"$(grep -A20 '^Call Sites: C API (libsqlite3' "p$n.stats.txt" |
			awk -v k="sqlite3_step @ query ($S:19)" 'index($0, k) == 1 {
				split(substr($0, length(k) + 1), f, " "); print f[1] }')"
done
[ "$n" -gt 0 ] || fail "no CPython to test"

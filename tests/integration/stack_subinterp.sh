# Python call stacks of hooked calls made in a sub-interpreter, with every
# CPython here (Debian's /usr/bin/python3 and pyenv's 3.9 to 3.13). Before
# 3.12 the thread state the capture read (PyGILState_GetThisThreadState)
# is the thread's state in the main interpreter, and such calls got the
# main interpreter's frames: run_sub <- <module>, or run_sub <- Thread.run
# on a thread. stack_subinterp.py runs a sub-interpreter from the main
# thread and from a thread; in it zlib.crc32 (the GIL held) and, before
# 3.12, sqlite3's step (the GIL released).
# Checks: the sub-interpreter's calls have its frames, sub_leaf or
# sub_query <- <module> (<string>), the main interpreter's its own, and
# the output is that of the plain run.
. "$ROOT/tests/integration/lib.sh"
S=stack_subinterp.py
cp "$ROOT/tests/programs/stacks/$S" "$WORK/$S"
cd "$WORK"
pythons=(/usr/bin/python3)
for v in 3.9 3.10 3.11 3.12 3.13; do
	p=$(ls -d /root/.pyenv/versions/$v.*/bin/python$v 2>/dev/null | tail -1)
	if [ -n "$p" ]; then pythons+=("$p"); else echo "skip: CPython $v is not installed"; fi
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
	want="1 crc32 <- main_leaf ($S:34) [python] <- <module> ($S:41) [python]
2 crc32 <- sub_leaf (<string>:4) [python] <- <module> (<string>:7) [python]"
	if [ "$("$py" -c 'import sys; print(sys.version_info < (3, 12))')" = True ]; then
		want="$want
4 sqlite3_step <- sub_query (<string>:6) [python] <- <module> (<string>:9) [python]"
	fi
	expect_eq "$py: Python frames" "$want" \
		"$(python3 "$ROOT/tests/tools/stackcheck.py" "p$n.json" 0 python)"
done
[ "$n" -gt 0 ] || { echo "skip: no CPython here"; exit 77; }

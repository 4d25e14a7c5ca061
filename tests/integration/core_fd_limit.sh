# mxprof takes none of the descriptors the program's limit allows it: a
# program that opens files until it cannot (soft RLIMIT_NOFILE of 60,
# tests/programs/core_fd_limit.c) opens as many with mxprof as without;
# mxprof's journal lives above the limit (lifted for a moment, within the
# hard limit). The trace and the tables hold every task.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_fd_limit
cd "$WORK"
[ "$(ulimit -H -n)" = unlimited ] || [ "$(ulimit -H -n)" -gt 80 ] ||
	skip "the hard descriptor limit is $(ulimit -H -n): no room above 60"
plain=$(ulimit -S -n 60 && "$prog" close)
case $plain in "opened "*": Too many open files") ;; *) fail "plain: $plain" ;; esac
with=$(ulimit -S -n 60 && MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/t.json" \
	LD_PRELOAD="$PRELOAD" "$prog" close 2>err.txt)
expect_eq "files opened" "$plain" "$with"
expect_eq "messages" "" "$(cat err.txt)"
tracesummary t.json >s.json
expect_eq "tasks" 100 "$(jget s.json 'd["spans"]["fdlim/work"]')"
expect_eq "tables" 100 "$(row_count t.stats.txt fdlim work)"

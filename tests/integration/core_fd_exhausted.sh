# A program that ends with every descriptor its limit allows taken (soft
# RLIMIT_NOFILE of 60, tests/programs/core_fd_limit.c keep) still gets
# its trace and its tables, with no line: mxprof opens what the final
# dump needs above the limit, lifted for a moment within the hard limit.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_fd_limit
cd "$WORK"
[ "$(ulimit -H -n)" = unlimited ] || [ "$(ulimit -H -n)" -gt 80 ] ||
	skip "the hard descriptor limit is $(ulimit -H -n): no room above 60"
out=$(ulimit -S -n 60 && MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/t.json" \
	LD_PRELOAD="$PRELOAD" "$prog" keep 2>err.txt)
case $out in "opened "*": Too many open files") ;; *) fail "output: $out" ;; esac
expect_eq "messages" "" "$(cat err.txt)"
expect_eq "files" "t.json t.stats.txt" "$(ls t.* | tr '\n' ' ' | sed 's/ $//')"
tracesummary t.json >s.json
expect_eq "tasks" 100 "$(jget s.json 'd["spans"]["fdlim/work"]')"
expect_eq "tables" 100 "$(row_count t.stats.txt fdlim work)"

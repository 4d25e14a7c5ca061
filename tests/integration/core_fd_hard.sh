# A program whose hard descriptor limit equals its soft one (ulimit -n 60
# sets both), so that mxprof cannot lift the limit for its own files.
# mxprof then holds one descriptor of the program's range, the journal's
# (the program opens one file fewer than without mxprof), and needs no
# other: a program that ends with every descriptor taken gets its tables,
# written in the journal's place, one line, and the journal kept, from
# which `mxprof recover` writes the trace (200 tasks: 100 of them after
# the descriptors ran out). core_fd_limit and core_fd_exhausted show the
# same with room above the soft limit, where nothing is taken or lost.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
prog=$BUILD/programs/core_fd_limit
cd "$WORK"
plain=$(ulimit -n 60 && "$prog" close)
expect_eq "plain" "opened 56: Too many open files" "$plain"
with=$(ulimit -n 60 && MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/c.json" \
	LD_PRELOAD="$PRELOAD" "$prog" close 2>cerr.txt)
expect_eq "files opened: one fewer (the journal's)" \
	"opened 55: Too many open files" "$with"
expect_eq "messages" "" "$(cat cerr.txt)"
expect_eq "tables" 100 "$(row_count c.stats.txt fdlim work)"

out=$(ulimit -n 60 && MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/t.json" \
	LD_PRELOAD="$PRELOAD" "$prog" keep more 2>err.txt)
expect_eq "output" "opened 55: Too many open files" "$out"
cat err.txt
expect_eq "one line" 1 "$(wc -l <err.txt)"
grep -q "^mxprof: cannot write $WORK/t.json: Too many open files; its journal $WORK/t.json.journal is kept (mxprof recover -f $WORK/t.json.journal)\$" err.txt ||
	fail "line: $(cat err.txt)"
expect_eq "tables at exit" 200 "$(row_count t.stats.txt fdlim work)"
[ -f t.json.journal ] || fail "journal not kept"
"$MX" recover -f t.json.journal >rec.txt 2>&1 || fail "recover: $(cat rec.txt)"
tracesummary t.json >s.json
expect_eq "trace from the journal" 200 "$(jget s.json 'd["spans"]["fdlim/work"]')"
expect_eq "tables from the journal" 200 "$(row_count t.stats.txt fdlim work)"

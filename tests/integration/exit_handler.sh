# _exit() called from the program's own signal handler (a daemon's SIGTERM
# handler) writes the trace and the tables first: the final dump is the
# drain thread's, and the handler's thread takes no lock while it waits.
# The status (7) and the output are those of a run without mxprof.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/exit_handler
cd "$WORK"

set +e
"$prog" 500 >plain.txt 2>&1
want=$?
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/h.json" LD_PRELOAD="$PRELOAD" \
	"$prog" 500 >out.txt 2>err.txt
rc=$?
set -e
expect_eq "status" "$want" "$rc"
expect_eq "status without mxprof" 7 "$want"
expect_eq "output" "$(cat plain.txt)" "$(cat out.txt)"
expect_eq "stderr" "" "$(cat err.txt)"
tracesummary h.json >sum.json
expect_eq "tasks in the trace" "{'handler/step': 1000}" "$(jget sum.json 'd["spans"]')"
expect_eq "tasks in the tables" 1000 "$(row_count h.stats.txt handler step)"
expect_eq "journal removed" "" "$(ls h.json.journal 2>/dev/null || true)"

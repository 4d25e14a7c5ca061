# A final dump that does not finish in time (a fatal signal waits 5 s for
# it) leaves no temporary file behind: a trace's can be GBs. The dump is
# held up on purpose (MXPROF_TEST_DUMP_STALL_MS: each file waits 600 s once
# opened); the program dies of its signal, with its line, the journal is
# kept for mxprof recover, and nothing else is left in the folder.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_counts
cd "$WORK"
mkdir sync out
MXPROF_TEST_DUMP_STALL_MS=600000 MXPROF_AUTOSTART=1 \
	MXPROF_OUTPUT="$WORK/out/t.json" LD_PRELOAD="$PRELOAD" \
	"$prog" 2 100 "$WORK/sync" >/dev/null 2>err.txt &
pid=$!
wait_until -p "$pid" "half-way" '[ -e sync/half ]'
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
expect_eq "exit status" 143 "$rc"
expect_eq "message" "mxprof: the final dump did not finish within 5 s of a signal that ends the process; ending without it (the journal is kept for mxprof recover)" "$(cat err.txt)"
expect_eq "files left" "t.json.journal" "$(ls -A out | tr '\n' ' ' | sed 's/ $//')"

# The dump signal sent to a program started through a shell wrapper that
# execs it (pyenv's python3 is a bash script ending in exec), while the
# wrapper still runs: the wrapper has recorded nothing, so its dump is
# empty; the dump it was asked for is owed, carried across exec, and the
# program writes it at its first drain pass with records, while it runs.
# The wrapper waits on a FIFO the test opens only after the wrapper's
# status file says the dump was served: no timing.
. "$ROOT/tests/integration/lib.sh"
cd "$WORK"
PROG=$BUILD/programs/cli_tasks
status_dir=/tmp/mxprof-$(id -u)
[ -n "${XDG_RUNTIME_DIR:-}" ] && status_dir=$XDG_RUNTIME_DIR/mxprof
dumps() { sed -n 's/^dumps=//p' "$status_dir/$1.status" 2>/dev/null; }

mkfifo fifo
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/w.json" LD_PRELOAD="$PRELOAD" \
	sh -c 'read x <"$1"; exec "$2" -u 100 -w "$3"' sh fifo "$PROG" \
	"$WORK/go" >out.txt 2>err.txt &
pid=$!
wait_until -p $pid "the wrapper's status file" '[ "$(dumps $pid)" = 0 ]'
kill -USR1 $pid
wait_until -p $pid "the wrapper's dump" '[ "$(dumps $pid)" = 1 ]'
echo go >fifo
# The program (the same pid) did its first round of work and waits.
wait_until -p $pid "the program's work" '[ -e go.ready ]'
wait_until -t 30 -p $pid "the owed dump in the program" \
	'[ "$(dumps $pid)" = 1 ]'
steps=$(row_count w.stats.txt cli step)
[ "$steps" -ge 1 ] && [ "$steps" -le 10 ] ||
	fail "steps in the owed dump: $steps"
tracesummary w.json >mid.json
expect_eq "the owed dump's trace: the program's pid" "[$pid]" \
	"$(jget mid.json 'd["pids"]')"
[ "$(jget mid.json 'd["spans"].get("cli/step", 0)')" -ge 1 ] ||
	fail "no step in the owed dump's trace"
touch go
set +e
wait $pid
rc=$?
set -e
cat err.txt
expect_eq "exit status" 0 "$rc"
expect_eq "final steps" 20 "$(row_count w.stats.txt cli step)"
tracesummary w.json >end.json
expect_eq "final trace steps" 20 "$(jget end.json 'd["spans"]["cli/step"]')"
expect_eq "stderr" "" "$(cat err.txt)"

# mxprof dump: a live process writes its trace on request and keeps going;
# processes without mxprof and unknown pids give one clear line, exit 1.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

MXPROF_AUTOSTART=1 MXPROF_OUTPUT=$WORK/live.json LD_PRELOAD=$PRELOAD \
	"$PROG" -u 100 -w "$WORK/go" &
pid=$!
wait_until -p "$pid" "the program to get ready" '[ -e "$WORK/go.ready" ]'

"$MX" dump "$pid" > out.txt
expect_eq "printed path" "$WORK/live.json" "$(cat out.txt)"
tracesummary live.json > s1.json
expect_eq "steps in the live dump" 10 "$(jget s1.json 'd["spans"]["cli/step"]')"
expect_eq "tables beside it: steps" 10 "$(row_count live.stats.txt cli step)"
kill -0 "$pid" || fail "the program died after the dump"
echo "ok: still running after the dump"

"$MX" dump "$pid" > out2.txt
expect_eq "second dump path" "$WORK/live.json" "$(cat out2.txt)"

# A path that cannot be printed is a failure, with its reason.
set +e; "$MX" dump "$pid" > /dev/full 2> full.txt; rc=$?; set -e
expect_eq "dump to a full disk: exit" 1 "$rc"
expect_eq "dump to a full disk: message" \
	"mxprof dump: writing the trace's path: No space left on device" "$(cat full.txt)"

touch "$WORK/go"
wait "$pid"
expect_eq "steps at exit" 20 "$("$MX" report live.json | awk '$1 == "step" { print $2 }')"

# Errors.
st() { set +e; "$@" > /dev/null 2> err.txt; echo $?; set -e; }
expect_eq "finished pid: exit" 1 "$(st "$MX" dump "$pid")"
grep -q "no process with pid $pid" err.txt || fail "finished pid: $(cat err.txt)"
sleep 30 &
plain=$!
expect_eq "process without mxprof: exit" 1 "$(st "$MX" dump "$plain")"
grep -q "process $plain does not run under mxprof" err.txt || fail "plain: $(cat err.txt)"
expect_eq "one line" 1 "$(wc -l < err.txt)"
kill "$plain"
expect_eq "not a pid: exit" 2 "$(st "$MX" dump abc)"
expect_eq "no pid: exit" 2 "$(st "$MX" dump)"
"$MX" dump --help | grep -q -- '--timeout' || fail "help"
set +e; "$MX" dump --help > /dev/full 2> err.txt; rc=$?; set -e
expect_eq "help to a full disk: exit" 1 "$rc"
expect_eq "help to a full disk: message" \
	"mxprof dump: writing the help: No space left on device" "$(cat err.txt)"
echo "ok: errors"

# The dump signal sent to `mxprof run` reaches the program, which dumps and
# goes on.
rm -f "$WORK/go" "$WORK/go.ready"
"$MX" run -q -o viarun.json -- "$PROG" -u 100 -w "$WORK/go" 2>/dev/null &
mx=$!
wait_until -p "$mx" "the program under mxprof run to get ready" '[ -e "$WORK/go.ready" ]'
kill -USR1 "$mx"
wait_until -p "$mx" "the tables of the dump through mxprof run" '[ -s viarun.stats.txt ]'
expect_eq "dump through mxprof run: steps" 10 "$(row_count viarun.stats.txt cli step)"
kill -0 "$mx" || fail "mxprof run ended after the dump signal"
touch "$WORK/go"
set +e; wait "$mx"; rc=$?; set -e
expect_eq "mxprof run exit after the dump" 0 "$rc"
expect_eq "steps at exit" 20 "$(row_count viarun.stats.txt cli step)"

# mxprof run waits for the whole process tree it started, not only for
# the program: when the program's main process dies (here by SIGTERM)
# while a worker it started still runs, mxprof run says that it waits for
# that worker, leaves its journal alone while it runs, and once it has
# ended merges its trace, with every call it made; nothing is blamed on
# SIGKILL, and no file of the worker's is written after mxprof run ends.
# The worker is released only once mxprof run has said it waits for it,
# so the test depends on no timing.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

# The main process starts the worker (10 steps, then go.ready, then it
# waits for go, then 10 more steps) and dies by SIGTERM once the worker is
# waiting with its journal on disk.
: >err.txt
"$MX" run -q -o t.json -- sh -c "$PROG -w go & echo \$! > worker.pid
	i=0; while { [ ! -e go.ready ] || [ ! -e t.\$!.json.journal ]; } && [ \$i -lt 6000 ]; do sleep 0.01; i=\$((i + 1)); done
	kill -TERM \$\$" >out.txt 2>err.txt &
mx=$!
# No deadline: mxprof run ending first is the failure.
while ! grep -q 'still running' err.txt && kill -0 "$mx" 2>/dev/null; do
	sleep 0.01
done
cat err.txt
worker=$(cat worker.pid)
grep -q "^mxprof run: .*pid $worker (cli_tasks)" err.txt ||
	fail "mxprof run did not say it waits for the worker $worker"
ls t.*
[ -e "t.$worker.json.journal" ] || fail "the running worker's journal is gone"
touch go
set +e; wait "$mx"; rc=$?; set -e
cat err.txt
expect_eq "status: the main process's SIGTERM" 143 "$rc"
if grep -q 'SIGKILL' err.txt; then fail "SIGKILL blamed"; fi
if grep -q 'ended before writing its trace' err.txt; then fail "a recovery of a process that wrote its trace"; fi
expect_eq "worker's steps in the merged trace" 20 "$(python3 -c '
import json, sys
ev = json.load(open("t.json"))["traceEvents"]
print(sum(1 for e in ev if e.get("ph") == "X" and e["pid"] == int(sys.argv[1]) and e["name"] == "step"))' "$worker")"
expect_eq "worker's steps in the tables" 20 "$(row_count t.stats.txt cli step)"
expect_eq "no journal left" "" "$(ls t*.journal 2>/dev/null || true)"
# The worker has ended before mxprof run: nothing of it runs any more.
if kill -0 "$worker" 2>/dev/null; then fail "the worker still runs after mxprof run"; fi
echo "ok: the worker ended before mxprof run did"

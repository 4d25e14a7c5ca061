# A daemon the program leaves behind (it forks twice and calls setsid) is
# part of the tree mxprof run started: mxprof run says it waits for it,
# and merges its trace once it has ended. The wait is bounded (--wait):
# at the bound, one line names what mxprof run stopped waiting for, and
# that process's journal is left in place, for the process to finish.
# The daemons are released by the test only once mxprof run has said what
# it waits for (or has ended), so nothing depends on timing.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

# daemon GO STEM: a program that leaves a cli_tasks -w GO behind,
# detached, and ends once that daemon waits for GO with its journal
# STEM.<pid>.json.journal on disk.
daemon() {
	echo "setsid sh -c '$PROG -w $1 & echo \$! > $1.pid' </dev/null >/dev/null 2>&1
	i=0; while [ ! -s $1.pid ] && [ \$i -lt 6000 ]; do sleep 0.01; i=\$((i + 1)); done
	i=0; while { [ ! -e $1.ready ] || [ ! -e $2.\$(cat $1.pid).json.journal ]; } && [ \$i -lt 6000 ]; do sleep 0.01; i=\$((i + 1)); done
	exit 0"
}

: >err.txt
"$MX" run -q -o t.json -- sh -c "$(daemon go t)" >out.txt 2>err.txt &
mx=$!
# No deadline: mxprof run ending first is the failure.
while ! grep -q 'still running' err.txt && kill -0 "$mx" 2>/dev/null; do
	sleep 0.01
done
d=$(cat go.pid)
grep -q "^mxprof run: sh ended; waiting for 1 process it started, still running: pid $d (cli_tasks)" err.txt ||
	fail "mxprof run did not say it waits for the daemon $d: $(cat err.txt)"
touch go
set +e; wait "$mx"; rc=$?; set -e
cat err.txt
expect_eq "status" 0 "$rc"
expect_eq "daemon's steps in the merged trace" 20 "$(python3 -c '
import json, sys
ev = json.load(open("t.json"))["traceEvents"]
print(sum(1 for e in ev if e.get("ph") == "X" and e["pid"] == int(sys.argv[1]) and e["name"] == "step"))' "$d")"
# sh ends with _exit and writes no trace: the daemon's alone makes t.json.
expect_eq "merged" 1 "$(grep -c '^mxprof: 1 process merged into t.json' err.txt)"

# The bound: a daemon that is never released while mxprof run waits.
set +e
"$MX" run -q --wait 0.2 -o u.json -- sh -c "$(daemon go2 u)" >out2.txt 2>err2.txt
rc=$?
set -e
cat err2.txt
expect_eq "status with a daemon left" 0 "$rc"
d=$(cat go2.pid)
expect_eq "the line naming what mxprof run stopped waiting for" 1 \
	"$(grep -c "^mxprof run: stopped waiting after 0.2 s for pid $d (cli_tasks), still running; their files are not merged\$" err2.txt)"
[ -e "u.$d.json.journal" ] || fail "the running daemon's journal was removed"
if grep -q "pid $d ended" err2.txt; then fail "the running daemon was said to have ended"; fi
touch go2
# The daemon ends on its own now (cli_tasks waits 60 s at most anyway).
for _ in $(seq 1200); do
	[ -e "u.$d.json" ] && break
	sleep 0.1
done
expect_eq "the daemon's own trace: steps" 20 \
	"$("$MX" report "u.$d.json" | awk '$1 == "step" { print $2 }')"

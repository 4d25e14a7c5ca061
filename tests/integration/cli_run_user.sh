# mxprof run as root, with a process of the tree that runs as another
# user (setpriv --reuid=nobody), who may not write the output folder: the
# process writes its files into a private folder of mxprof run's drop
# folder (MXPROF_RUN_DROP), and mxprof run merges them with the rest of
# the tree, then removes them: 3 steps from the root process, 5 from
# nobody's, both processes in the trace and the tables.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks
[ "$(id -u)" = 0 ] || skip "not root"
command -v setpriv >/dev/null || skip "no setpriv"
as_nobody="setpriv --reuid=nobody --regid=nogroup --clear-groups"
$as_nobody test -x "$PROG" -a -r "$MXPROF_LIB" 2>/dev/null ||
	skip "nobody cannot run $PROG or read $MXPROF_LIB"
cd "$WORK"
chmod 0755 "$WORK"
$as_nobody sh -c ": >$WORK/probe" 2>/dev/null && skip "nobody may write $WORK"

"$MX" run -q -o t.json -- sh -c "$PROG -s 3; $as_nobody $PROG -s 5" \
	>out.txt 2>err.txt
rc=$?
cat err.txt
expect_eq "status" 0 "$rc"
expect_eq "the other user's line" 1 \
	"$(grep -c "^mxprof: cannot write beside $WORK/t\.[0-9]*\.json: Permission denied; writing .*/mxprof-run-[^/]*/drop/mxprof-[^/]*/t\.[0-9]*\.json instead\$" err.txt)"
expect_eq "merged" 1 "$(grep -c '^mxprof: 2 processes merged into t.json' err.txt)"
expect_eq "steps in the tables" 8 "$(row_count t.stats.txt cli step)"
tracesummary t.json >s.json
expect_eq "steps in the trace" 8 "$(jget s.json 'd["spans"]["cli/step"]')"
expect_eq "processes in the trace" 2 "$("${PYTHON3:-python3}" -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print(len({e["pid"] for e in ev if e.get("ph") == "X" and e["name"] == "step"}))' t.json)"
drop=$(sed -n 's/.*writing \(.*\/drop\)\/mxprof-.*/\1/p' err.txt)
[ -n "$drop" ] && [ ! -e "$drop" ] || fail "the drop folder $drop is left"

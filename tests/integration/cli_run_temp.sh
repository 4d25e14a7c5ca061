# A process of the tree that ends while it writes its trace (killed during
# its final dump, as a pool worker that gets SIGINT and then SIGTERM under
# `timeout -s INT`) leaves its journal and a temporary X.<pid>.json.tmp.<pid>:
# mxprof run removes that file with one line naming the process and how it
# ended, recovers the journal (one line) and merges the process's trace.
# The worker is killed once its journal is on disk and it waits, and the
# temporary file is planted under the name the library uses, so nothing
# depends on timing.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

"$MX" run -q -o t.json -- sh -c "
	sh -c 'echo partial > t.\$\$.json.tmp.\$\$; echo \$\$ > w.pid; exec $PROG -w go' &
	i=0; while [ ! -s w.pid ] && [ \$i -lt 6000 ]; do sleep 0.01; i=\$((i + 1)); done
	w=\$(cat w.pid)
	i=0; while { [ ! -e go.ready ] || [ ! -e t.\$w.json.journal ]; } && [ \$i -lt 6000 ]; do sleep 0.01; i=\$((i + 1)); done
	kill -KILL \$w
	exit 0" >out.txt 2>err.txt || fail "mxprof run: status $?: $(cat err.txt)"
cat err.txt
w=$(cat w.pid)
expect_eq "temporary file" "" "$(ls t.*.tmp.* 2>/dev/null || true)"
expect_eq "the line about it" 1 \
	"$(grep -c "^mxprof run: removed t.$w.json.tmp.$w: pid $w ended while writing it (" err.txt)"
expect_eq "the journal recovered" 1 \
	"$(grep -c "^mxprof run: pid $w ended before writing its trace (.*); recovered [1-9][0-9]* records from its journal\$" err.txt)"
expect_eq "no journal left" "" "$(ls t*.journal 2>/dev/null || true)"
tracesummary t.json >s.json
case " $(jget s.json '" ".join(str(p) for p in d["pids"])') " in
*" $w "*) echo "ok: the worker is in the merged trace" ;;
*) fail "the worker $w is not in the merged trace" ;;
esac

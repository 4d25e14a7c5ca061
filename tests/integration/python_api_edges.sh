# Edges of the Python binding and the C API under it, each with exact
# figures: an extra stop() of a task, frame or event.
. "$ROOT/tests/integration/lib.sh"
if [ "$PRELOAD" != "$MXPROF_LIB" ]; then export LD_PRELOAD=${PRELOAD% *}; fi
export PYTHONPATH=$ROOT/tools/python
PY=/usr/bin/python3

# An extra stop() ends nothing: one pass makes one slice, also when the
# stop comes again, and a stop that was never started makes none.
cat > stops.py <<'PYEOF'
import time
from mxprof import profiler
profiler.set_config(filename='stops.json')
profiler.set_state('run')
d = profiler.Domain('stops')
objs = (profiler.Task(d, 'task'), profiler.Frame(d, 'frame'),
        profiler.Event('event'))
for o in objs:
    o.start()
    o.stop()
    time.sleep(0.01)
    o.stop()
    o.stop()
profiler.Task(d, 'never').stop()
profiler.set_state('stop')
profiler.dump()
print("done")
PYEOF
$PY stops.py > stops.out 2> stops.err
expect_eq "stops: the script ran to its end" done "$(cat stops.out)"
expect_eq "stops: stderr" "" "$(cat stops.err)"
expect_eq "stops: task passes" 1 "$(row_count stops.stats.txt stops task)"
expect_eq "stops: frame passes" 1 "$(row_count stops.stats.txt stops frame)"
expect_eq "stops: event passes" 1 "$(row_count stops.stats.txt Events event)"
expect_eq "stops: never-started task" "" "$(row_count stops.stats.txt stops never)"
tracesummary stops.json > stops.sum
expect_eq "stops: slices in the trace" "1 1 1" \
	"$(jget stops.sum 'd["spans"]["stops/task"], d["spans"]["stops/frame"], d["spans"]["Events/event"]' | tr -d '(),')"

# A domain with only counters or only markers: its sections have the
# documented names, `<domain> (counters)` and `<domain> (markers)`, in
# dumps(), the .stats.txt, report --category and diff --category.
cat > sections.py <<'PYEOF'
from mxprof import profiler
profiler.set_config(filename='sections.json')
profiler.set_state('run')
c = profiler.Counter(profiler.Domain('gauges'), 'loss', 3)
c += 2
profiler.Marker(profiler.Domain('ticks'), 'epoch').mark()
profiler.set_state('stop')
open('sections.txt', 'w').write(profiler.dumps())
profiler.dump()
PYEOF
$PY sections.py
titles() { grep -B1 '^=================$' "$1" | grep -v '^=\|^--$' | tr '\n' '|'; }
expect_eq "sections: dumps() titles" "gauges (counters)|ticks (markers)|" "$(titles sections.txt)"
expect_eq "sections: .stats.txt titles" "gauges (counters)|ticks (markers)|" "$(titles sections.stats.txt)"
expect_eq "sections: loss samples" 2 "$(row_count sections.stats.txt 'gauges (counters)' loss)"
expect_eq "sections: epoch marks" 1 "$(row_count sections.stats.txt 'ticks (markers)' epoch)"
"$BUILD/mxprof" report --category 'gauges (counters)' sections.json > cat.txt
expect_eq "sections: report --category" "gauges (counters)|" "$(titles cat.txt)"
"$BUILD/mxprof" diff --category 'ticks (markers)' sections.json sections.json > diff.txt
grep -q '^epoch  *ticks (markers)  *1  *1 ' diff.txt || fail "diff --category: $(cat diff.txt)"
echo "ok: diff --category 'ticks (markers)' finds epoch"

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

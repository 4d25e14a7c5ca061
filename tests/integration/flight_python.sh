# Flight mode through the Python binding's set_config: flight='60s'
# before recording starts puts the collector in flight mode: dump()
# writes the numbered file fl.dump.1.json, its reason the program's call
# (steps= is refused: the window holds the last steps only), and the exit the window to fl.json, with the 10 tasks; a bad value
# raises ValueError; after recording started, flight keys raise
# RuntimeError saying why, with one line.
. "$ROOT/tests/integration/lib.sh"
if [ "$PRELOAD" != "$MXPROF_LIB" ]; then export LD_PRELOAD=${PRELOAD% *}; fi
export PYTHONPATH=$ROOT/tools/python
cat > fl.py <<'PYEOF'
from mxprof import profiler
try:
    profiler.set_config(flight='3 steps')
except ValueError as e:
    print("bad:", e)
profiler.set_config(filename='fl.json', flight='60s', trigger='none',
                    flight_mb=16, flight_max_dumps=2)
profiler.set_state('run')
d = profiler.Domain('cfg')
t = profiler.Task(d, 'step')
for i in range(10):
    with t:
        pass
profiler.dump(finished=False)
for f in (profiler.dump, profiler.dumps):
    try:
        f(steps="1")
    except ValueError as e:
        print("steps:", e)
try:
    profiler.set_config(flight='5steps')
except RuntimeError as e:
    print("late:", e)
PYEOF
/usr/bin/python3 fl.py >fl.out 2>fl.err
cat fl.err
expect_eq "output" "bad: set_config(flight='3 steps'): Invalid argument
steps: dump(steps='1'): not in flight mode, whose window holds only the last steps
steps: dumps(steps='1'): not in flight mode, whose window holds only the last steps
late: set_config(flight='5steps'): flight mode is chosen before recording starts (call set_config before set_state('run'), or set MXPROF_FLIGHT and MXPROF_TRIGGER); recording has started" "$(cat fl.out)"
expect_eq "stderr" "mxprof: set_config(flight='3 steps'): accepted: <N>s or <N>steps, N a whole number >= 1, or off
mxprof: dump trigger: wrote $WORK/fl.dump.1.json and $WORK/fl.dump.1.stats.txt: the program called mxprof_dump()
mxprof: dump(steps='1'): not in flight mode, whose window holds only the last steps; without steps= it writes the window
mxprof: dumps(steps='1'): not in flight mode, whose window holds only the last steps; without steps= it writes the window
mxprof: set_config(flight='5steps'): flight mode is chosen before recording starts (set_config before set_state('run'), or MXPROF_FLIGHT and MXPROF_TRIGGER in the environment); recording has started, nothing changes" "$(cat fl.err)"
"${PYTHON3:-python3}" -S "$ROOT/tests/tools/flightcheck.py" trace fl.json >fl.sum
"${PYTHON3:-python3}" -S "$ROOT/tests/tools/flightcheck.py" trace fl.dump.1.json >dump.sum
expect_eq "dump: trigger" "dump|the program called mxprof_dump()|60s" \
	"$(jget dump.sum 'd["flight"]["trigger"] + "|" + d["flight"]["reason"] + "|" + d["flight"]["window"]["setting"]')"
expect_eq "dump: tasks" 10 "$(jget dump.sum 'd["names"]["step"]')"
expect_eq "end: trigger" "end|60s" \
	"$(jget fl.sum 'd["flight"]["trigger"] + "|" + d["flight"]["window"]["setting"]')"
expect_eq "end: tasks" 10 "$(jget fl.sum 'd["names"]["step"]')"
expect_eq "tables" 10 "$(row_count fl.stats.txt cfg step)"

# MXNet's profiler API as MXNet documents it, through the Python binding
# and the C functions under it: Marker.mark('task') and ('marker') (process
# scope, as MXNet writes them), a counter's initial value as its first
# sample in C as in Python, dumps(format='csv'), and dump(True) followed by
# set_state('run'), which records again and rewrites the files at exit.
. "$ROOT/tests/integration/lib.sh"
if [ "$PRELOAD" != "$MXPROF_LIB" ]; then export LD_PRELOAD=${PRELOAD% *}; fi
export PYTHONPATH=$ROOT/tools/python
cat > api.py <<'PYEOF'
from mxprof import profiler
profiler.set_config(filename='api.json')
profiler.set_state('run')
d = profiler.Domain('api')
m = profiler.Marker(d, 'm')
for scope in ('task', 'marker', 'process', 'thread', 'global'):
    m.mark(scope)
# The C constructor with a value, as the Python class gives it.
profiler._counter_create(d.handle, b'c_counter', 100)
profiler._counter_create(d.handle, b'c_zero', 0)
profiler.Counter(d, 'py_counter', 100)
t = profiler.Task(d, 'step')
for i in range(3):
    with t:
        pass
open('csv.txt', 'w').write(profiler.dumps(format='csv'))
profiler.dump(True)
open('first.txt', 'w').write(open('api.stats.txt').read())
# Run again after dump(True): recorded, and written again at exit.
profiler.set_state('run')
for i in range(2):
    with t:
        pass
print("done")
PYEOF
/usr/bin/python3 api.py > api.out 2> api.err
expect_eq "the script ran to its end" done "$(cat api.out)"
expect_eq "stderr" "" "$(cat api.err)"

tracesummary api.json > sum.json
python3 - <<'PYEOF' > scopes.txt
import json
d = json.load(open("api.json"))
print(" ".join(e["s"] for e in d["traceEvents"]
               if e["ph"] == "i" and e["name"] == "m"))
PYEOF
expect_eq "marker scopes task marker process thread global" "p p p t g" "$(cat scopes.txt)"
expect_eq "marks in the tables" 5 "$(row_count api.stats.txt 'api (markers)' m)"

grep -q '^c_counter  *1  *100.0000  *100.0000  *100.0000$' api.stats.txt ||
	fail "C counter_create(100) row: $(grep c_counter api.stats.txt)"
grep -q '^py_counter  *1  *100.0000  *100.0000  *100.0000$' api.stats.txt ||
	fail "Python Counter(100) row: $(grep py_counter api.stats.txt)"
echo "ok: C and Python counters created with 100 record one sample of 100"
expect_eq "no sample for a counter created with 0" 0 "$(grep -c '^c_zero' api.stats.txt || true)"

expect_eq "csv header" "section,kind,name,count,total,min,max,avg,self,percent,errors" "$(head -1 csv.txt)"
expect_eq "csv step count" 3 "$(awk -F, '$3 == "\"step\"" { print $4 }' csv.txt)"

expect_eq "steps at dump(True)" 3 "$(row_count first.txt api step)"
expect_eq "steps at exit after set_state('run')" 5 "$(row_count api.stats.txt api step)"
expect_eq "steps in the trace at exit" 5 "$(jget sum.json 'd["spans"]["api/step"]')"

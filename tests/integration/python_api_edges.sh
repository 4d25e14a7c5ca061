# Edges of the Python binding and the C API under it, each with exact
# figures: an extra stop() of a task, frame or event; the names of
# counter and marker sections; counters created with 0 and PyTorch's sort
# keys; metadata past its limits and with control characters;
# dumps(reset=True) against the files; MindSpore's Profiler,
# add_metadata_json and folder outputs.
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

# Counter(d, n, 0) records what the C API's counter_create(d, n, 0) does:
# nothing until a value is set; a non-zero value is its first sample in
# both. dumps(sort_by=...) takes PyTorch's table() keys, mapped to the
# matching column; a bad key's message lists every accepted one.
cat > sorts.py <<'PYEOF'
import sys
from mxprof import profiler
profiler.set_config(filename='sorts.json')
profiler.set_state('run')
d = profiler.Domain('sorts')
profiler.Counter(d, 'py_zero', 0)
profiler.Counter(d, 'py_none')
profiler.Counter(d, 'py_seven', 7)
profiler._counter_create(d.handle, b'c_zero', 0)
profiler._counter_create(d.handle, b'c_seven', 7)
# a: 3 short passes; b: 1 long pass; so total, avg and count sort apart.
a, b = profiler.Task(d, 'a'), profiler.Task(d, 'b')
for i in range(3):
    with a:
        pass
with b:
    sum(range(200000))
profiler.set_state('stop')
for key, same in (('cpu_time_total', 'total'), ('cuda_time_total', 'total'),
                  ('device_time_total', 'total'), ('cpu_time', 'avg'),
                  ('cuda_time', 'avg'), ('self_cpu_time_total', 'self'),
                  ('self_cuda_time_total', 'self'), ('count', 'count')):
    got = profiler.dumps(sort_by=key, format='csv')
    print(key, got == profiler.dumps(sort_by=same, format='csv'))
print(profiler.dumps(sort_by='count', format='csv').split('\n')[1].split(',')[2])
try:
    profiler.dumps(sort_by='cpu_memory_usage')
    print("cpu_memory_usage accepted")
except ValueError:
    print("cpu_memory_usage ValueError")
sys.stdout.flush()
profiler.dump()
PYEOF
$PY sorts.py > sorts.out 2> sorts.err
expect_eq "sorts: PyTorch keys sort as their columns" "cpu_time_total True
cuda_time_total True
device_time_total True
cpu_time True
cuda_time True
self_cpu_time_total True
self_cuda_time_total True
count True
\"a\"
cpu_memory_usage ValueError" "$(cat sorts.out)"
expect_eq "sorts: the bad key's line" "mxprof: dumps(format='table', sort_by='cpu_memory_usage'): format is table, json or csv; sort_by is total, avg, min, max, count or self (PyTorch's cpu_time_total, cpu_time, self_cpu_time_total and their cuda_ and device_ forms too)" "$(cat sorts.err)"
expect_eq "sorts: counter rows (C and Python alike)" "c_seven 1 7.0000|py_seven 1 7.0000|" \
	"$(awk '$0 == "sorts (counters)" { s = 1; next } s && /^$/ { s = 0 } s && /^[a-z]/ { printf "%s %s %s|", $1, $2, $3 }' sorts.stats.txt)"
set +e
"$BUILD/mxprof" report --sort cpu_time_total sorts.json > rsort.txt 2> rsort.err
rc=$?
set -e
expect_eq "sorts: report --sort cpu_time_total" 0 "$rc"
"$BUILD/mxprof" report --sort total sorts.json > rtotal.txt
cmp rsort.txt rtotal.txt || fail "report --sort cpu_time_total differs from --sort total"
set +e
"$BUILD/mxprof" report --sort bogus sorts.json 2> rbad.err > /dev/null
set -e
expect_eq "sorts: report's bad key" "mxprof report: bad --format 'table' or --sort 'bogus' (formats: table, json, csv; keys: total, avg, min, max, count, self, or PyTorch's cpu_time_total, cpu_time, self_cpu_time_total and their cuda_ and device_ forms)" "$(head -1 rbad.err)"

# MXPROF_METADATA past the limits: one line per problem, values cut in
# messages; control characters in metadata are escaped in the tables.
cat > meta.py <<'PYEOF'
import sys
from mxprof import profiler
profiler.set_config(filename=sys.argv[1] + '.json')
if len(sys.argv) > 2:
    profiler.add_metadata('ctl', 'a\nb\tc\x1bd\x7f')
    profiler.add_metadata('new\nline', 'v')
profiler.set_state('run')
with profiler.Task(profiler.Domain('meta'), 't'):
    pass
profiler.set_state('stop')
profiler.dump()
PYEOF
MXPROF_METADATA=$($PY -c 'print(",".join("k%d=v" % i for i in range(12000)))') \
	LD_PRELOAD="$PRELOAD" $PY meta.py many 2> many.err
expect_eq "metadata: 12,000 keys: lines on stderr" 1 "$(wc -l < many.err)"
expect_eq "metadata: 12,000 keys: the line" "mxprof: MXPROF_METADATA: at most 64 keys; 11936 left out (the first: 'k64')" "$(cat many.err)"
expect_eq "metadata: 12,000 keys: keys in the trace" 64 \
	"$(python3 -c 'import json; print(sum(k.startswith("k") for k in json.load(open("many.json"))))')"
# (one variable holds at most 128 KiB)
big=$($PY -c 'print("x" * 110000)')
MXPROF_METADATA="big=$big,ok=1,huge=${big:0:10000}" LD_PRELOAD="$PRELOAD" $PY meta.py big 2> big.err
expect_eq "metadata: 110 kB values: the line" "mxprof: MXPROF_METADATA: 2 pairs too long (keys below 256 bytes, values below 4096); left out (the first: 'big=$(printf 'x%.0s' $(seq 60))...' (110004 bytes))" "$(cat big.err)"
expect_eq "metadata: 110 kB values: ok kept" 1 "$(jget big.json 'd["ok"]')"
MXPROF_METADATA="big=$big,=x" LD_PRELOAD="$PRELOAD" $PY meta.py bad 2> bad.err
expect_eq "metadata: bad and long: lines" 1 "$(wc -l < bad.err)"
expect_eq "metadata: bad and long: length below 500 bytes" 1 "$(($(wc -c < bad.err) < 500))"
LD_PRELOAD="$PRELOAD" $PY meta.py ctl ctl 2> ctl.err
expect_eq "metadata: control characters: stderr" "" "$(cat ctl.err)"
expect_eq "metadata: control characters in the tables" \
	'ctl                           a\nb\tc\x1bd\x7f|new\nline                     v|' \
	"$(sed -n '5,6p' ctl.stats.txt | tr '\n' '|')"
expect_eq "metadata: control characters kept in the trace" "True True" \
	"$(jget ctl.json 'd["ctl"] == "a\nb\tc\x1bd\x7f", d["new\nline"] == "v"' | tr -d '(),')"
"$BUILD/mxprof" report ctl.json > ctl.report
cmp ctl.report ctl.stats.txt || fail "report differs from ctl.stats.txt"
echo "ok: report shows the same escaped Metadata"
# add_metadata past 64 keys: each call raises, one line says so.
$PY - > full.out 2> full.err <<'PYEOF'
from mxprof import profiler
raised = 0
for i in range(70):
    try:
        profiler.add_metadata('key%d' % i, 'v')
    except OSError:
        raised += 1
print(raised)
PYEOF
expect_eq "metadata: add_metadata past 64 keys: raised" 6 "$(cat full.out)"
expect_eq "metadata: add_metadata past 64 keys: the line" "mxprof: add_metadata('key64'): at most 64 keys; not added, nor any other new key" "$(grep add_metadata full.err)"

# dumps(reset=True) restarts what dumps() counts; the files written at
# exit (trace and .stats.txt) cover the whole run, so the .stats.txt has
# the figures `mxprof report` gives of the trace.
cat > reset.py <<'PYEOF'
from mxprof import profiler
profiler.set_config(filename='reset.json')
profiler.set_state('run')
d = profiler.Domain('reset')
t, c = profiler.Task(d, 't'), profiler.Counter(d, 'c')
for i in range(2):
    with t:
        c.set_value(10 + i)
open('before.txt', 'w').write(profiler.dumps(reset=True))
for i in range(3):
    with t:
        c.set_value(20 + i)
open('after.txt', 'w').write(profiler.dumps())
open('again.txt', 'w').write(profiler.dumps(reset=True))
with t:
    pass
PYEOF
$PY reset.py
expect_eq "reset: dumps() before the reset" 2 "$(row_count before.txt reset t)"
expect_eq "reset: dumps() after it" 3 "$(row_count after.txt reset t)"
expect_eq "reset: counter after it" "c 3 20.0000 22.0000 21.0000" \
	"$(awk '$1 == "c" { $1 = $1; print }' after.txt)"
expect_eq "reset: .stats.txt at exit" 6 "$(row_count reset.stats.txt reset t)"
expect_eq "reset: counter in the .stats.txt" "c 5 10.0000 22.0000 16.8000" \
	"$(awk '$1 == "c" { $1 = $1; print }' reset.stats.txt)"
tracesummary reset.json > reset.sum
expect_eq "reset: slices in the trace" 6 "$(jget reset.sum 'd["spans"]["reset/t"]')"
"$BUILD/mxprof" report reset.json > reset.report
cmp reset.report reset.stats.txt || fail "report differs from reset.stats.txt: $(diff reset.report reset.stats.txt)"
echo "ok: report of the trace is the .stats.txt"

# MindSpore's Profiler: output_path is a folder (made when missing) that
# gets profile.json and its tables; start() twice and stop() before
# start() raise RuntimeError; add_metadata_json puts JSON, not a string,
# at the trace's top level. set_config(filename=) naming a folder writes
# profile.json inside it, not in a private folder elsewhere.
cat > ms.py <<'PYEOF'
import json
from mxprof import profiler
p = profiler.Profiler(output_path='ms_out', start_profile=False)
for what, call in (('stop before start', p.stop), ('start', p.start),
                   ('start again', p.start)):
    try:
        call()
        print(what, 'ok')
    except RuntimeError as e:
        print(what, 'RuntimeError')
p.add_metadata('plain', 'text')
p.add_metadata_json('shape', json.dumps({"key1": 1, "key2": [2, 3]}))
p.add_metadata_json('quoted', json.dumps("just a string"))
try:
    p.add_metadata_json('bad', '{not json')
    print('bad json accepted')
except ValueError:
    print('bad json ValueError')
t = profiler.Task(profiler.Domain('ms'), 'step')
for i in range(2):
    with t:
        pass
p.stop()
p.analyse()
PYEOF
$PY ms.py > ms.stdout 2> ms.stderr
expect_eq "mindspore: start and stop" "stop before start RuntimeError
start ok
start again RuntimeError
bad json ValueError" "$(cat ms.stdout)"
expect_eq "mindspore: stderr" "" "$(cat ms.stderr)"
expect_eq "mindspore: steps in ms_out/profile.stats.txt" 2 "$(row_count ms_out/profile.stats.txt ms step)"
expect_eq "mindspore: metadata in the trace" '["text", {"key1": 1, "key2": [2, 3]}, "just a string"]' \
	"$(jget ms_out/profile.json 'json.dumps([d["plain"], d["shape"], d["quoted"]])')"
"$BUILD/mxprof" report ms_out/profile.json > ms.report
cmp ms.report ms_out/profile.stats.txt || fail "report differs: $(diff ms.report ms_out/profile.stats.txt)"
echo "ok: report of the trace is the .stats.txt"

mkdir folder
cat > folder.py <<'PYEOF'
from mxprof import profiler
profiler.set_config(filename='folder')
profiler.set_state('run')
with profiler.Task(profiler.Domain('f'), 't'):
    pass
profiler.set_state('stop')
profiler.dump()
PYEOF
LD_PRELOAD="$PRELOAD" $PY folder.py 2> folder.err
expect_eq "folder: stderr" "" "$(cat folder.err)"
expect_eq "folder: the trace inside it" 1 "$(row_count folder/profile.stats.txt f t)"
# The C function checks its JSON text itself.
$PY - > cjson.out 2> cjson.err <<'PYEOF'
from mxprof import profiler
profiler.set_config(filename='cjson.json')
for text in (b'{"a":[1,-2.5e3,true,null,"x\\u00e9\\n"],"b":{}}', b' 7 ',
             b'{bad', b'[1,2', b'01', b'"raw\ttab"', b'[1] x', b'',
             b'[' * 100 + b']' * 100):
    print(profiler._add_metadata_json(b'k', text), end=' ')
PYEOF
expect_eq "C add_metadata_json: results" "0 0 -22 -22 -22 -22 -22 -22 -22 " "$(cat cjson.out)"
expect_eq "C add_metadata_json: lines" 7 "$(grep -c "^mxprof: add_metadata_json('k'): the value is not JSON text$" cjson.err)"

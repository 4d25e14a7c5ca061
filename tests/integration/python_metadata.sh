# Metadata as PyTorch's profiler add_metadata(key, value) gives it: from
# the C API (through the Python binding) and from MXPROF_METADATA, at the
# top level of the trace and at the head of the tables, in dumps(), in
# the .stats.txt and in `mxprof report`; dumps(row_limit=N) is `mxprof
# report --top N`.
. "$ROOT/tests/integration/lib.sh"
if [ "$PRELOAD" != "$MXPROF_LIB" ]; then export LD_PRELOAD=${PRELOAD% *}; fi
export PYTHONPATH=$ROOT/tools/python
cat > meta.py <<'PYEOF'
from mxprof import profiler
profiler.set_config(filename='meta.json')
profiler.add_metadata('experiment', 'baseline')
profiler.add_metadata('batch_size', 32)
profiler.add_metadata('experiment', 'tuned')
try:
    profiler.add_metadata('traceEvents', 'x')
    print("traceEvents accepted")
except ValueError:
    pass
profiler.set_state('run')
d = profiler.Domain('meta')
for name, n in (('a', 4), ('b', 3), ('c', 2), ('d', 1)):
    t = profiler.Task(d, name)
    for i in range(n):
        with t:
            pass
profiler.set_state('stop')
open('dumps.txt', 'w').write(profiler.dumps())
open('top2.txt', 'w').write(profiler.dumps(row_limit=2, sort_by='count'))
try:
    profiler.dumps(row_limit=-1)
    print("row_limit=-1 accepted")
except ValueError:
    pass
profiler.dump()
print("done")
PYEOF
MXPROF_METADATA='run=7,host_group=a=b' /usr/bin/python3 meta.py > meta.out 2> meta.err
expect_eq "the script ran to its end" done "$(cat meta.out)"
expect_eq "lines on stderr (the refused key)" 1 "$(wc -l < meta.err)"
grep -q "add_metadata('traceEvents')" meta.err || fail "stderr: $(cat meta.err)"

python3 - <<'PYEOF' > top.txt
import json
d = json.load(open("meta.json"))
print(d["run"], d["host_group"], d["experiment"], d["batch_size"], len(d["traceEvents"]) > 0)
PYEOF
expect_eq "top-level keys of the trace" "7 a=b tuned 32 True" "$(cat top.txt)"

want='Metadata
=================
run                           7
host_group                    a=b
experiment                    tuned
batch_size                    32'
expect_eq "Metadata section of dumps()" "$want" "$(sed -n '3,8p' dumps.txt)"
expect_eq "Metadata section of the .stats.txt" "$want" "$(sed -n '3,8p' meta.stats.txt)"
"$BUILD/mxprof" report meta.json > report.txt
cmp report.txt meta.stats.txt || fail "report differs from meta.stats.txt"
echo "ok: report shows the same Metadata section"

"$BUILD/mxprof" report meta.json --top 2 --sort count > rtop2.txt
cmp rtop2.txt top2.txt || fail "dumps(row_limit=2) differs from report --top 2"
echo "ok: dumps(row_limit=2, sort_by='count') is report --top 2 --sort count"
expect_eq "rows of section meta with row_limit=2" "a b Total" \
	"$(awk '$0 == "meta" { s = 1; next } s && /^$/ { s = 0 } s && NR > 1 && !/^(Name|----|=)/ { printf "%s%s", sep, $1; sep = " " }' top2.txt)"
expect_eq "Total count with row_limit=2" 10 "$(awk '$1 == "Total" { print $2 }' top2.txt)"

# A bad MXPROF_METADATA: one line, no metadata, the program runs.
MXPROF_METADATA='novalue,=x' MXPROF_AUTOSTART=1 MXPROF_OUTPUT=bad.json \
	LD_PRELOAD="$PRELOAD" /bin/true 2> bad.err
# (/bin/true records nothing: @auto's line about that comes second.)
expect_eq "bad MXPROF_METADATA: lines" 2 "$(wc -l < bad.err)"
expect_eq "bad MXPROF_METADATA: the line" "mxprof: MXPROF_METADATA='novalue,=x' is not valid (accepted: key=value[,key=value...], keys not empty); no metadata from the environment" "$(head -1 bad.err)"
expect_eq "bad MXPROF_METADATA: then nothing recorded" 1 "$(grep -c '^mxprof: nothing was recorded; MXPROF_HOOK=@auto tried' bad.err)"
grep -q "^mxprof: MXPROF_METADATA='novalue,=x' is not valid" bad.err || fail "bad: $(cat bad.err)"

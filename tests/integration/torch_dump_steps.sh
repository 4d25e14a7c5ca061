# The Python binding's dump(steps=) and dumps(steps=) on the DataLoader
# loop of torch_loop.py (12 steps, SGD, a my_block block a step; Debian's
# python3-torch for /usr/bin/python3), recorded whole under the defaults:
#  - dumps(steps="3-5") counts my_block 3 times and Optimizer.step#SGD.step
#    3 times, its Steps section 3 steps, and its metadata says 3-5;
#    dumps() with no steps still counts 12 of each, and says 0-11;
#  - dump(steps="3-5") writes a trace whose ProfilerStep#N slices are
#    exactly 3, 4 and 5, with 3 my_block and 3 Optimizer.step#SGD.step
#    slices, each inside one of them, the metadata "steps" 3-5, and
#    tables beside it that count my_block 3 times, as `mxprof report
#    --steps 3-5` counts them in the whole run's trace;
#  - a bad list ("3-x", "5-3", 7) or one with no step recorded ("100")
#    raises one ValueError naming it, the library says one line on
#    stderr for each, and nothing is written.
. "$ROOT/tests/integration/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null ||
	skip "torch cannot be imported by $PY (python3-torch)"
mxprof_command
export PYTHONPATH=$ROOT/tools/python:$ROOT/tests/programs

cat >prog.py <<'PYEOF'
import os
import torch_loop
from mxprof import profiler

loss = torch_loop.sgd()
open("all.txt", "w").write(profiler.dumps())
open("picked.txt", "w").write(profiler.dumps(steps="3-5"))
for bad in ("3-x", "5-3", 7, "100"):
    try:
        profiler.dumps(steps=bad)
        print("no error for", repr(bad))
    except ValueError as e:
        print("error:", e)
try:
    profiler.dump(steps="3-x")
    print("no error for dump")
except ValueError as e:
    print("error:", e)
print("written before:", os.path.exists("picked.json"),
      os.path.exists("picked.stats.txt"))
profiler.dump(steps="3-5")
print("loss %.6f" % loss)
PYEOF

MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/whole.json" LD_PRELOAD="$PRELOAD" \
	"$PY" -c 'import torch_loop; print("loss %.6f" % torch_loop.sgd())' \
	>whole.out 2>whole.err
cat whole.err
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/picked.json" LD_PRELOAD="$PRELOAD" \
	"$PY" prog.py >prog.out 2>prog.err
cat prog.out prog.err
diff <(grep '^loss' whole.out) <(grep '^loss' prog.out) ||
	fail "the printed loss differs"

# The errors: one ValueError each, one line on stderr each.
expect_eq "errors raised" 5 "$(grep -c '^error: ' prog.out)"
grep -q "^no error" prog.out && fail "a bad steps= raised nothing"
grep -qF "error: dumps(steps='3-x'): not a list of steps" prog.out ||
	fail "no clear error for steps='3-x'"
grep -qF "error: dumps(steps='5-3'): not a list of steps" prog.out ||
	fail "no clear error for steps='5-3'"
grep -qF "error: dumps(steps=7): a string of step numbers" prog.out ||
	fail "no clear error for steps=7"
grep -qF "error: dumps(steps='100'): none of these steps was recorded" \
	prog.out || fail "no clear error for steps='100'"
grep -qF "error: dump(steps='3-x'): not a list of steps" prog.out ||
	fail "no clear error for dump(steps='3-x')"
expect_eq "library's lines" 4 "$(grep -c '^mxprof: ' prog.err)"
expect_eq "files before dump(steps='3-5')" "written before: False False" \
	"$(grep '^written before' prog.out)"

# table FILE ROW: the count of ROW in text tables FILE.
table() {
	awk -v n="$2" 'index($0, n " ") == 1 { print $(NF - 6); exit }' "$1"
}
expect_eq "my_block, whole run" 12 "$(table all.txt my_block)"
expect_eq "optimizer, whole run" 12 \
	"$(table all.txt Optimizer.step#SGD.step)"
expect_eq "my_block, steps 3-5" 3 "$(table picked.txt my_block)"
expect_eq "optimizer, steps 3-5" 3 \
	"$(table picked.txt Optimizer.step#SGD.step)"
expect_eq "steps, steps 3-5" 3 \
	"$(awk '$1 == "mean" { print $2; exit }' picked.txt)"
grep -q '^steps *3-5$' picked.txt ||
	fail "dumps(steps=): no metadata steps 3-5"
grep -q '^steps *0-11$' all.txt ||
	fail "dumps(): no metadata steps 0-11: $(grep '^steps ' all.txt)"
expect_eq "my_block, dump(steps=)'s tables" 3 \
	"$(table picked.stats.txt my_block)"

"$PY" - picked.json <<'PYEOF'
import collections, json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
st = sorted((e for e in ev if e["name"].startswith("ProfilerStep#")),
            key=lambda e: e["ts"])
names = [e["name"] for e in st]
assert names == ["ProfilerStep#%d" % n for n in (3, 4, 5)], names
assert d.get("steps") == "3-5", d.get("steps")
c = collections.Counter(e["name"] for e in ev)
assert c["my_block"] == 3 and c["Optimizer.step#SGD.step"] == 3, c
# Every event kept began inside one of the steps kept.
for e in d["traceEvents"]:
    if (e.get("ph") != "M" and "ts" in e and
            not e["name"].startswith("ProfilerStep#")):
        assert any(s["ts"] <= e["ts"] < s["ts"] + s["dur"] for s in st), e
print("ok: dump(steps='3-5'): ProfilerStep#3..5 and what began inside them")
PYEOF

# The same counts as report --steps on the whole run's trace.
"$MX" report --steps 3-5 whole.json >report.txt
for r in my_block Optimizer.step#SGD.step aten::addmm aten::linear; do
	expect_eq "$r: dumps(steps=) and report --steps" \
		"$(table report.txt "$r")" "$(table picked.txt "$r")"
done
echo "ok: dumps(steps='3-5') and dump(steps='3-5') hold steps 3 to 5"

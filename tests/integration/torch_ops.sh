# PyTorch on the CPU (Debian's python3-torch, for /usr/bin/python3): a
# small training loop (conv2d, relu, max_pool2d, linear, cross-entropy,
# backward, SGD) run with no setting but MXPROF_AUTOSTART=1 gives, through
# @auto's @torch preset, one row per ATen operator in section "aten",
# named as PyTorch names them. Each count equals the count that
# torch.autograd.profiler's key_averages() gives for the same loop in a
# process of its own, for every operator it saw; the printed loss is the
# one of a run without mxprof; the trace holds nested "cpu_op" slices.
. "$ROOT/tests/integration/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null ||
	skip "torch cannot be imported by $PY (python3-torch)"
TRAIN=$ROOT/tests/programs/torch_train.py
STEPS=7

"$PY" "$TRAIN" $STEPS >plain.txt
"$PY" "$TRAIN" $STEPS profile >prof.txt
MXPROF_AUTOSTART=1 LD_PRELOAD="$PRELOAD" \
	"$PY" "$TRAIN" $STEPS >mx.txt 2>mx.err
cat mx.err
diff plain.txt mx.txt || fail "the printed loss differs under mxprof"
grep -q '^loss ' mx.txt || fail "no loss printed"

# The profiler's aten rows against the "aten" section.
grep '^count aten::' prof.txt | awk '{ print $2, $3 }' | sort >want.txt
awk '$0 == "aten" { s = 1; next } s && /^$/ { s = 0 }
	s && /^aten::/ { print $1, $2 }' profile.stats.txt | sort >got.txt
n=$(wc -l <want.txt)
[ "$n" -ge 10 ] || fail "the profiler saw only $n operators"
diff want.txt got.txt || fail "operator counts differ from key_averages()"
echo "ok: $n operators, counts equal to key_averages()"
for op in conv2d relu addmm max_pool2d convolution_backward; do
	grep -q "^aten::$op " got.txt || fail "no aten::$op row"
done

# The trace: cpu_op slices named aten::*, as many as the table counts,
# nested (conv2d around convolution on the same thread).
tracesummary profile.json >t.sum
"$PY" - profile.json got.txt <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
cpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
ops = [e for e in cpu if e["args"]["group"] == "aten"]
want = sum(int(l.split()[1]) for l in open(sys.argv[2]))
assert len(ops) == want, (len(ops), want)
assert all(e["name"].startswith("aten::") for e in ops)
# The rest are the autograd engine's rows (section "autograd").
assert all(e["args"]["group"] == "autograd" for e in cpu if e not in ops)
def inside(a, b):
    return (a["tid"] == b["tid"] and b["ts"] <= a["ts"] and
            a["ts"] + a["dur"] <= b["ts"] + b["dur"])
conv = [e for e in ops if e["name"] == "aten::conv2d"]
inner = [e for e in ops if e["name"] == "aten::convolution"]
nested = sum(1 for c in inner if any(inside(c, o) for o in conv))
assert nested == len(conv) == len(inner), (nested, len(conv), len(inner))
print("ok: %d cpu_op slices; every aten::convolution inside aten::conv2d"
      % len(ops))
PYEOF

# Self time: the Self Time column, summed over every time section, equals
# the time covered by each thread's outermost slices, steps left out
# (within 1%; the tables round each row to 0.1 us), plus the library calls made inside
# PyTorch's slices, which count in both (a PyTorch slice's self time
# excludes only the PyTorch slices inside it); each section's Time (%)
# sums to 100.
"$PY" - profile.json profile.stats.txt <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
outer = 0
by_tid = {}
for e in ev:
    # Steps have a section of their own, with no self time.
    if e.get("ph") == "X" and not e["name"].startswith("ProfilerStep#"):
        by_tid.setdefault((e["pid"], e["tid"]), []).append(e)
torch_cats = ("cpu_op", "user_annotation")
for spans in by_tid.values():
    spans.sort(key=lambda e: (e["ts"], -e["dur"]))
    for e in spans:
        if e.get("cat") not in torch_cats and any(
                t.get("cat") in torch_cats and t["ts"] <= e["ts"] and
                e["ts"] + e["dur"] <= t["ts"] + t["dur"] for t in spans):
            outer += e["dur"]
    end = None
    for e in spans:
        if end is None or e["ts"] >= end:
            outer += e["dur"]
            end = e["ts"] + e["dur"]
        else:
            end = max(end, e["ts"] + e["dur"])
selfsum = 0.0
pcts = []
col = None
for line in open(sys.argv[2]):
    if line.startswith("Name ") and "Self Time (ms)" in line:
        cols = line.split("  ")
        heads = [c.strip() for c in cols if c.strip()]
        col = heads.index("Self Time (ms)") - len(heads)
        pcol = heads.index("Time (%)") - len(heads)
        pcts.append(0.0)
        continue
    if not line.strip():
        col = None
        continue
    # The Total row sums its section; the rows are what is summed here.
    if col is not None and not line.startswith("----") and \
            not line.startswith("Total "):
        f = line.split()
        selfsum += float(f[col]) * 1000.0
        pcts[-1] += float(f[pcol])
assert outer > 0
ratio = selfsum / outer
assert abs(ratio - 1) < 0.01, (selfsum, outer)
assert all(abs(p - 100) < 0.1 for p in pcts), pcts
print("ok: self times sum to %.1f us, outermost slices cover %.1f us"
      % (selfsum, outer))
PYEOF

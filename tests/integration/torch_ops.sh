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
	{ echo "skip: torch cannot be imported by $PY (python3-torch)"; exit 0; }
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
ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
want = sum(int(l.split()[1]) for l in open(sys.argv[2]))
assert len(ops) == want, (len(ops), want)
assert all(e["name"].startswith("aten::") for e in ops)
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

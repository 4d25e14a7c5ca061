# The TensorBoard PyTorch Profiler plugin's loader (pytorch/kineto's
# tb_plugin, from its sources in $MXPROF_CONSUMERS/kineto-tb/tb_plugin,
# docs/tests.md), on Debian's pandas, reads mxprof's trace of a PyTorch CPU
# loop with stacks as it reads a Kineto CPU trace: views Overview,
# Operator and Trace; the Operator view's counts equal mxprof's own "aten"
# and "autograd" tables, row for row; its call-stack view lists, for every
# ATen operator, the stacks PyTorch's "Call stack" argument gives, each ending
# at the script's <module>. The 12-step DataLoader loop of torch_loop.py:
# the Overview has 12 steps, each with DataLoader time above 0.
. "$ROOT/tests/integration/lib.sh"
TB=${MXPROF_CONSUMERS:-}/kineto-tb/tb_plugin
PY=/usr/bin/python3
[ -n "${MXPROF_CONSUMERS:-}" ] && [ -f "$TB/torch_tb_profiler/profiler/data.py" ] ||
	skip "no tb_plugin sources (set MXPROF_CONSUMERS, see docs/tests.md)"
"$PY" -c 'import pandas' 2>/dev/null || skip "$PY lacks pandas (python3-pandas)"
"$PY" -c 'import torch' 2>/dev/null || skip "torch cannot be imported by $PY"
cp "$ROOT/tests/programs/torch_train.py" .
MXPROF_STACKS=64 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/w.pt.trace.json" \
	LD_PRELOAD="$PRELOAD" "$PY" torch_train.py 5 plain >/dev/null || fail "torch_train.py"
"$PY" "$ROOT/tests/tools/tbplugin_check.py" "$TB" w.pt.trace.json >tb.json ||
	fail "the plugin's loader failed"
expect_eq "views" "['overall', 'operator', 'trace']" "$(jget tb.json 'd["views"]')"
# mxprof's "aten" and "autograd" tables (the plugin's operators are the
# trace's cpu_op slices, both kinds): NAME COUNT rows; names hold spaces.
"$PY" - w.pt.trace.stats.txt <<'PYEOF' | sort >mx.txt
import re, sys
sec = None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line in ("aten", "autograd"):
        sec = line
    elif not line.strip():
        sec = None
    elif sec and not line.startswith(("=", "Name ", "----", "Total ")):
        m = re.match(r"^(.*?)\s+(\d+)\s+\d", line)
        print(m.group(1), m.group(2))
PYEOF
jget tb.json '"\n".join("%s %d" % kv for kv in sorted(d["ops"].items()))' | sort >tb.txt
[ "$(wc -l <mx.txt)" -gt 20 ] || fail "only $(wc -l <mx.txt) operators in mxprof's table"
diff mx.txt tb.txt || fail "the Operator view's counts differ from mxprof's table"
echo "ok: $(wc -l <tb.txt) operators, the same counts"
# Stacks are taken of hooked calls: the ATen operators (the autograd rows
# come from PyTorch's callbacks and have none, docs/pytorch.md).
expect_eq "operators with a call stack" \
	"$(jget tb.json 'sorted(o for o in d["ops"] if o.startswith("aten::"))')" \
	"$(jget tb.json 'd["with_stack"]')"
expect_eq "call-stack view: operators" "$(jget tb.json 'd["with_stack"]')" \
	"$(jget tb.json 'sorted(d["stacks"])')"
expect_eq "call-stack view: stacks not at <module>" "[]" \
	"$(jget tb.json '[s for v in d["stacks"].values() for s in v if not s.endswith("torch_train.py(81): <module>")]')"

# Steps and DataLoader time.
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/s.pt.trace.json" LD_PRELOAD="$PRELOAD" \
	"$PY" "$ROOT/tests/programs/torch_loop.py" sgd >/dev/null || fail "torch_loop.py"
"$PY" "$ROOT/tests/tools/tbplugin_check.py" "$TB" s.pt.trace.json >steps.json ||
	fail "the plugin's loader failed on the loop"
expect_eq "the Overview's steps" "['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11']" \
	"$(jget steps.json 'd["steps"]')"
expect_eq "steps with DataLoader time" 12 \
	"$(jget steps.json 'sum(1 for t in d["dataloader_us"] if t > 0)')"

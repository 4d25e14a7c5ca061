# Holistic Trace Analysis (HTA), run from its sources in
# $MXPROF_CONSUMERS/HolisticTraceAnalysis (docs/tests.md) on Debian's
# pandas (/usr/bin/python3):
#  - TraceAnalysis on a folder of two ranks' `mxprof run` outputs (each
#    rank a process and its child, on the fake CUDA loop) loads ranks 0 and
#    1, each from its one merged trace, none from X.processes;
#  - its json, ijson and batched ijson parsers load a PyTorch trace with
#    600 call sites (thousands of frames in stackFrames) and agree;
#  - every TraceAnalysis analysis that runs on HTA's own Kineto CPU trace
#    (tests/data/cpu_only) runs on mxprof's trace of a PyTorch CPU loop.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
HTA=${MXPROF_CONSUMERS:-}/HolisticTraceAnalysis
PY=/usr/bin/python3
[ -n "${MXPROF_CONSUMERS:-}" ] && [ -f "$HTA/hta/trace_analysis.py" ] ||
	skip "no HTA sources (set MXPROF_CONSUMERS, see docs/tests.md)"
"$PY" -c 'import pandas, ijson' 2>/dev/null ||
	skip "$PY lacks pandas or ijson (python3-pandas, python3-ijson)"
"$PY" -c 'import torch' 2>/dev/null || skip "torch cannot be imported by $PY"
CHECK="$PY $ROOT/tests/tools/hta_check.py $HTA"
fakes=$BUILD/fakes
prog=$BUILD/programs/cuda_fake_train

# Two ranks from mxprof run, each a process and the child it forks.
if [ -e "$fakes/libcupti.so.13" ]; then
	mkdir ranks
	for r in 0 1; do
		(cd ranks && RANK=$r "$MX" run -q -o t$r.json -- sh -c \
			"$prog $fakes/libcudart.so.13 2; exec $prog $fakes/libcudart.so.13 3" \
			>/dev/null 2>err$r.txt) || fail "mxprof run of rank $r"
		expect_eq "rank $r: processes" 2 "$(ls ranks/t$r.processes/*.json | wc -l)"
	done
	expect_eq "HTA's ranks" "0 t0.json|1 t1.json" \
		"$($CHECK ranks ranks | awk '{print $1, $2}' | paste -sd'|')"
else
	skip_part "no fake libcupti: the two ranks' folder"
fi

# ijson on a trace with thousands of frames.
cat >sites.py <<'PYEOF'
import torch
x = torch.ones(4)
src = "\n".join("def f%d(x):\n    return torch.relu(x)\n" % i for i in range(600))
exec(compile(src, "sites.py", "exec"))
for i in range(600):
    globals()["f%d" % i](x)
PYEOF
MXPROF_STACKS=16 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/sites.json" \
	LD_PRELOAD="$PRELOAD" "$PY" sites.py || fail "sites.py under mxprof"
frames=$(jget sites.json 'len(d["stackFrames"])')
[ "$frames" -gt 1000 ] || fail "only $frames frames"
$CHECK backends sites.json >b.txt || fail "HTA's parsers: $(tail -3 b.txt)"
expect_eq "the parsers agree" 1 "$(awk '{print $2}' b.txt | sort -u | wc -l)"
expect_eq "the parsers" "JSON IJSON IJSON_BATCHED" "$(awk '{print $1}' b.txt | paste -sd' ')"

# The analyses of a Kineto CPU trace.
mkdir kineto mx
cp "$HTA"/tests/data/cpu_only/*.json.gz kineto/ 2>/dev/null ||
	skip "no HTA test data (tests/data/cpu_only)"
MXPROF_STACKS=16 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/mx/t.json" \
	LD_PRELOAD="$PRELOAD" "$PY" "$ROOT/tests/programs/torch_train.py" 3 plain >/dev/null ||
	fail "torch_train.py under mxprof"
$CHECK analyses kineto mx >a.txt || fail "HTA's analyses: $(tail -3 a.txt)"
cat a.txt
# Those that run on Kineto's (at least these four) run on mxprof's.
expect_eq "analyses that run on Kineto's CPU trace" 4 \
	"$(grep -c ' kineto=ok' a.txt)"
expect_eq "of those, failing on mxprof's" "" "$(grep ' kineto=ok' a.txt | grep -v 'mxprof=ok' || true)"

# Steps: two runs of the 12-step DataLoader loop. HTA finds the 12 profiler
# steps, and TraceDiff compares iteration 3 of one with iteration 3 of the
# other (before steps, it said the trace "doesn't have any iteration"):
# each annotation and autograd row once per step, the same in both. The
# straggler analysis looks at communication kernels: on a CPU-only trace
# it fails as it does on HTA's own Kineto CPU trace.
mkdir sa sb
for x in sa sb; do
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$x/t.json" LD_PRELOAD="$PRELOAD" \
		"$PY" "$ROOT/tests/programs/torch_loop.py" sgd >/dev/null ||
		fail "torch_loop.py under mxprof"
done
$CHECK steps sa sb >s.txt || fail "HTA's steps: $(tail -3 s.txt)"
$CHECK steps kineto - >ks.txt || fail "HTA's steps of Kineto's trace: $(tail -3 ks.txt)"
cat s.txt ks.txt
expect_eq "HTA's profiler steps" "0 1 2 3 4 5 6 7 8 9 10 11" "$(sed -n 's/^steps //p' s.txt)"
expect_eq "stragglers, as on Kineto's CPU trace" \
	"$(sed -n 's/^stragglers //p' ks.txt)" "$(sed -n 's/^stragglers //p' s.txt)"
for row in "ProfilerStep#3 1 1" "my_block 1 1" "Optimizer.step#SGD.step 1 1" \
	"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__ 1 1" \
	"autograd::engine::evaluate_function: AddmmBackward0 2 2" \
	"AddmmBackward0 2 2" "torch::autograd::AccumulateGrad 4 4"; do
	grep -qxF "op $row" s.txt || fail "TraceDiff has no row '$row'"
done
echo "ok: TraceDiff of iteration 3 against iteration 3, $(sed -n 's/^diff //p' s.txt) rows"

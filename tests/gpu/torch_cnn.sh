# On a GPU with PyTorch: a small CNN training loop (torch_cnn.py, 20 steps)
# three ways: no profiler, mxprof (LD_PRELOAD, CUPTI, recording inside the
# NVTX range around the steps), torch.profiler (around the same steps).
# mxprof's kernel count must equal torch.profiler's and its total kernel
# time be within 2%; prints the median step time of each way.
. "$ROOT/tests/integration/lib.sh"
py=${PYTHON:-python3}
"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
	{ echo "skip: PyTorch with CUDA not importable"; exit 0; }
script=$ROOT/tests/gpu/torch_cnn.py
"$py" "$script" none >none.json
MXPROF_AUTOSTART=1 MXPROF_CAPTURE_NVTX=steps MXPROF_OUTPUT="$WORK/cnn.json" LD_PRELOAD="$PRELOAD" \
	"$py" "$script" mxprof >mx.json
"$py" "$script" torch "$WORK/torch.json" >th.json
tracesummary cnn.json >cnn.sum
python3 - "$WORK" <<'PY' || fail "mxprof and torch.profiler disagree"
import json, sys
w = sys.argv[1]
mx = json.load(open(w + "/cnn.sum"))["gpu"]
th = json.load(open(w + "/torch.json"))
kernels_mx = sum(mx["kernels"].values())
kernels_th = sum(1 for e in th["traceEvents"] if e.get("cat") == "kernel")
ns_mx = mx["kernel_ns"]
ns_th = round(sum(e["dur"] for e in th["traceEvents"] if e.get("cat") == "kernel") * 1000)
steps = {k: json.load(open(w + "/" + f))["median_step_ms"]
         for k, f in (("none", "none.json"), ("mxprof", "mx.json"), ("torch.profiler", "th.json"))}
print("kernels: mxprof %d, torch.profiler %d" % (kernels_mx, kernels_th))
print("kernel time: mxprof %.3f ms, torch.profiler %.3f ms" % (ns_mx / 1e6, ns_th / 1e6))
for k, v in steps.items():
    print("median step: %-15s %.3f ms" % (k, v))
assert kernels_mx == kernels_th, (kernels_mx, kernels_th)
assert abs(ns_mx - ns_th) <= 0.02 * ns_th, (ns_mx, ns_th)
PY

# PyTorch on the CPU (Debian's python3-torch) with MXPROF_STACKS: the ATen
# operators of a model's forward (through @auto's @torch preset) are
# attributed to the line of forward that ran them, read from the
# interpreter while the operator runs: "aten::conv2d @ Net.forward
# (stack_torch.py:12)", 3 times, in the call-site section of "aten" (the
# innermost frame of the user's code: torch's own frames come first in the
# stack), and the model's output is the same as without mxprof.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null ||
	skip "torch cannot be imported by $PY (python3-torch)"
S=stack_torch.py
cp "$ROOT/tests/programs/stacks/$S" "$WORK/$S"
cd "$WORK"
"$PY" "$S" >plain.txt
MXPROF_STACKS=64 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/t.json" \
	LD_PRELOAD="$PRELOAD" "$PY" "$S" >mx.txt
diff plain.txt mx.txt || fail "the output differs under mxprof"
for op in conv2d relu; do
	expect_eq "aten::$op" 3 "$(row_count t.stats.txt aten "aten::$op")"
	expect_eq "aten::$op from forward" 3 "$(row_count t.stats.txt \
		'Call Sites: aten' "aten::$op @ Net.forward ($S:12)")"
done
# The whole Python chain: torch's own frames (Conv2d.forward, Module's
# call), then the script's, innermost first.
expect_eq "conv2d's stack, the script's frames" \
	"Net.forward ($S:12) [python]|<module> ($S:20) [python]" \
	"$(python3 "$ROOT/tests/tools/stackcheck.py" t.json 0 python |
		sed -n 's/^3 aten::conv2d <- //p' | sed 's/ <- /\n/g' |
		grep -F "($S:" | paste -sd'|')"
expect_eq "conv2d's innermost frame is torch's" "Conv2d._conv_forward" \
	"$(python3 "$ROOT/tests/tools/stackcheck.py" t.json 1 python |
		sed -n 's/^3 aten::conv2d <- \([^ ]*\) .*/\1/p')"
# Every stack of the main thread starts at the script's <module>, whether
# or not the unwinder reached the native base (__libc_start_main) before
# its depth ran out: one tower per line of <module> in a flame graph.
"$MX" report --flame t.json >flame.txt 2>/dev/null || fail "report --flame"
expect_eq "flame roots" "<module> ($S:16) <module> ($S:17) <module> ($S:20) <module> ($S:3)" \
	"$(awk '{split($0, a, ";"); print a[1]}' flame.txt | sort -u | paste -sd' ')"
# Kineto's "Call stack" on each operator with a stack: its Python frames,
# innermost first, "FILE(LINE): FUNCTION" joined by ";" (what PyTorch
# writes and TensorBoard's plugin shows); none on other events.
python3 - t.json <<'PY' || fail "Call stack"
import json, re, sys
d = json.load(open(sys.argv[1]))
fr = d["stackFrames"]
n = 0
for e in d["traceEvents"]:
    cs = e.get("args", {}).get("Call stack")
    if e.get("cat") != "cpu_op" or "sf" not in e:
        assert cs is None, e
        continue
    want, sf = [], str(e["sf"])
    while sf is not None:
        f = fr[sf]
        if f["category"] == "python":
            m = re.fullmatch(r"(.*) \((.*):(\d+)\)", f["name"])
            want.append("%s(%s): %s" % (m[2], m[3], m[1]))
        sf = f.get("parent")
        sf = None if sf is None else str(sf)
    assert cs == ";".join(want), (cs, want)
    n += 1
convs = [e["args"]["Call stack"] for e in d["traceEvents"] if e["name"] == "aten::conv2d"]
assert len(convs) == 3 and all(c.endswith(";stack_torch.py(12): Net.forward;module.py(1194): Module._call_impl;stack_torch.py(20): <module>".replace("1194", c.rsplit("module.py(", 1)[1].split(")")[0])) for c in convs), convs
print("ok: Call stack on", n, "operators")
PY

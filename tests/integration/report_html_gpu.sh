# The GPU parts of the HTML page (mxprof report --html), of the fake CUDA
# program recorded with call stacks that only CUPTI sees (as
# cuda_fake_stacks.sh): the GPU flame graph holds, under the program's
# stream, exactly the lines of `mxprof report --flame --gpu` (each GPU
# event's time under the stack of its launch, then the launch, then its
# own name), its total is the sum of the trace's GPU events' durations,
# and the timeline marks the stream as a GPU track and the host thread
# as not.
. "$ROOT/tests/integration/lib.sh"
fakes=$BUILD/fakes
prog=$BUILD/programs/cuda_fake_train
[ -e "$fakes/libcupti.so.13" ] || skip "built without the CUDA toolkit headers (no fake libcupti)"
mxprof_command
MXPROF_STACKS=8 MXPROF_HOOK=none MXPROF_AUTOSTART=1 \
	MXPROF_OUTPUT="$WORK/c.json" LD_PRELOAD="$PRELOAD" \
	"$prog" "$fakes/libcudart.so.13" 5 >out.txt 2>err.txt ||
	fail "the program failed under mxprof"
"$MX" report --html "$WORK/c.html" "$WORK/c.json" || fail "report --html failed"
"$MX" report --flame --gpu "$WORK/c.json" | sort >flame.txt
[ -s flame.txt ] || fail "no folded GPU stacks"

"$PYTHON3" - c.html c.json >page.txt <<'PYEOF'
import json, re, sys
s = open(sys.argv[1]).read()
m = re.search(r'<script id="mxdata" type="application/json">\n(.*?)</script>', s, re.S)
d = json.loads(m.group(1))
t = json.load(open(sys.argv[2]))
gpu = sum(round(e["dur"] * 1000) for e in t["traceEvents"] if e.get("ph") == "X"
          and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
rows = d["gpuFlame"]["rows"]
print("total", sum(r[1] for r in rows) == gpu, gpu > 0)
print("roots", sorted(set(d["tracks"][r[0]] for r in rows)))
print("marks", sorted((l.split(": ")[-1], g) for l, g, _ in d["timeline"]["tracks"]))
with open("lines.txt", "w") as f:
    for r in rows:
        f.write(";".join(d["names"][i] for i in r[2:]) + " %d\n" % r[1])
PYEOF
cat page.txt
expect_eq "GPU total" "total True True" "$(grep '^total' page.txt)"
expect_eq "GPU roots" "roots ['GPU 0 (mxprof fake GPU): stream 7 (pid 0, tid 7)']" \
	"$(grep '^roots' page.txt)"
pid=$(jget c.json 'd["mxprof"]["pid"]')
expect_eq "GPU track marks" \
	"marks [('stream 7 (pid 0, tid 7)', 1), ('sync (pid 0, tid -1)', 0), ('thread $pid (cuda_fake_train) (pid $pid, tid $pid)', 0)]" \
	"$(grep '^marks' page.txt)"
sort lines.txt | diff flame.txt - || fail "the GPU flame graph differs from report --flame --gpu"
echo "ok: the GPU flame graph is report --flame --gpu's $(wc -l <flame.txt) lines"

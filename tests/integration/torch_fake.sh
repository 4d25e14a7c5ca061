# PyTorch's annotations and autograd rows, against a stand-in
# libtorch_cpu (tests/programs/hooklibs/fake_torch.c) that calls the
# RecordFunction callbacks mxprof registers as PyTorch does, so that the
# ABI and the release table are checked without PyTorch:
#  - release 1.13 (from the soname) and 2.5 (from a wheel's version.py):
#    record_function ranges become rows of "torch annotations" and slices
#    of cat user_annotation around their operators; the engine's
#    evaluate_function (called through the PLT) a slice named after the
#    node whose BACKWARD_FUNCTION range runs inside it; a range whose end
#    is never seen is dropped when the range around it ends; detach's
#    FUNCTION-scope range is a slice "detach" (section autograd) where
#    the autograd kernel's redispatch (through the PLT) holds the next
#    kernel's (2 of 3 calls), not where only the next kernel runs; and
#    "detach_" where aten::detach_'s autograd kernel calls
#    materialize_autograd_meta (through the PLT; 2 of 3 calls), inside
#    aten::detach_, not for conv2d's calls of it; nothing on stderr.
#  - releases 9.9 and 3.0: the operators only (no detach slice), and
#    one line on stderr.
. "$ROOT/tests/integration/lib.sh"
H=$ROOT/tests/programs/hooklibs
cd "$WORK"

# build DIR SONAME FILE: the fake library as DIR/FILE, and DIR/main.
build() {
	mkdir -p "$1"
	cc -O2 -g -shared -fPIC -Wl,-soname,"$2" -o "$1/$3" "$H/fake_torch.c"
	[ "$3" = libtorch_cpu.so ] || ln -s "$3" "$1/libtorch_cpu.so"
	cc -O2 -g -o "$1/main" "$H/fake_torch_main.c" -L"$1" -ltorch_cpu \
		-Wl,-rpath,"$WORK/$1"
}
build r113 libtorch_cpu.so.1.13 libtorch_cpu.so.1.13
build r99 libtorch_cpu.so.9.9 libtorch_cpu.so.9.9
build torch25/lib libtorch_cpu.so libtorch_cpu.so
echo "__version__ = '2.5.1+cpu'" >torch25/version.py
build torch30/lib libtorch_cpu.so libtorch_cpu.so
echo '__version__ = "3.0.0"' >torch30/version.py

run() {
	(cd "$1" && ./main >plain.txt &&
		MXPROF_AUTOSTART=1 LD_PRELOAD="$PRELOAD" ./main >mx.txt 2>err.txt)
	cat "$1/err.txt"
	diff "$1/plain.txt" "$1/mx.txt" || fail "$1: the output differs"
	expect_eq "$1: operators" 21 "$(row_count "$1/profile.stats.txt" aten aten::conv2d)"
}

for d in r113 torch25/lib; do
	run $d
	[ ! -s $d/err.txt ] || fail "$d: mxprof printed something"
	"${PYTHON3:-python3}" - $d/profile.json $d/profile.stats.txt <<'PYEOF'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"]
      if e.get("ph") == "X"]
def inside(a, b):
    return (a["tid"] == b["tid"] and b["ts"] <= a["ts"] and
            a["ts"] + a["dur"] <= b["ts"] + b["dur"] and a is not b)
def named(n, cat, group):
    got = [e for e in ev if e["name"] == n]
    assert all(e["cat"] == cat and e["args"]["group"] == group
               for e in got), got
    return got
conv = [e for e in ev if e["name"] == "aten::conv2d"]
blocks = named("my_block", "user_annotation", "torch annotations")
assert len(blocks) == 3, blocks
assert all(sum(1 for c in conv if inside(c, b)) == 2 for b in blocks)
assert len(named("Optimizer.step#SGD.step", "user_annotation",
                 "torch annotations")) == 3
assert len(named("outer", "user_annotation", "torch annotations")) == 1
assert not [e for e in ev if e["name"] == "leaked"]
assert len(named("detach", "cpu_op", "autograd")) == 2
ops = [e for e in ev if e["name"] == "aten::detach_"]
inplace = named("detach_", "cpu_op", "autograd")
assert len(ops) == 3 and len(inplace) == 2, (ops, inplace)
assert all(any(inside(e, o) for o in ops) for e in inplace)
pre = "autograd::engine::evaluate_function: "
for node in ("AddmmBackward0", "torch::autograd::AccumulateGrad"):
    eng = named(pre + node, "cpu_op", "autograd")
    nodes = named(node, "cpu_op", "autograd")
    assert len(eng) == 3 and len(nodes) == 3, (eng, nodes)
    for e in eng:
        inner = [n for n in nodes if inside(n, e)]
        assert len(inner) == 1, e
        # The engine's operator outside the node, and the node's own.
        assert sum(1 for c in conv if inside(c, e)) == 2
        assert sum(1 for c in conv if inside(c, inner[0])) == 1
rows = open(sys.argv[2]).read()
for s in ("\ntorch annotations\n", "\nautograd\n"):
    assert s in rows, s
print("ok: %s: annotations, engine and node slices nested" % sys.argv[1])
PYEOF
done

for d in r99:libtorch_cpu.so.9.9:9.9 torch30/lib:libtorch_cpu.so:3.0; do
	IFS=: read -r dir lib rel <<<"$d"
	run $dir
	expect_eq "$dir: the line" \
		"mxprof: $lib: PyTorch $rel is not one mxprof knows: its operators are timed, its annotations and autograd rows are not" \
		"$(cat $dir/err.txt)"
	! grep -q '^torch annotations$\|^autograd$' $dir/profile.stats.txt ||
		fail "$dir: annotations of an unknown release"
	! grep -q '"detach_\{0,1\}"' $dir/profile.json ||
		fail "$dir: a detach slice of an unknown release"
done

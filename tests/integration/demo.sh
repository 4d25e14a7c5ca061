# The bundled example (examples/demo.c, what tests/demo.sh profiles): its
# tables have exactly the rows its loops make, and each "epoch" frame ends
# only after the workers have trained that epoch's 40 batches.
. "$ROOT/tests/integration/lib.sh"
DEMO=$BUILD/examples/demo

MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/d.json" LD_PRELOAD="$PRELOAD" \
	"$DEMO" > out.txt
expect_eq "first line" "demo: 3 epochs of 40 batches on 2 workers" \
	"$(head -1 out.txt)"
# What the program printed (mxprof_dumps) is what the library wrote.
tail -n +2 out.txt > printed.txt
cmp printed.txt "$WORK/d.stats.txt" || fail "printed tables differ from d.stats.txt"
echo "ok: the printed tables are d.stats.txt"

T=$WORK/d.stats.txt
expect_eq "load_batch" 120 "$(row_count "$T" data load_batch)"
expect_eq "epoch" 3 "$(row_count "$T" train epoch)"
expect_eq "forward" 120 "$(row_count "$T" train forward)"
expect_eq "backward" 120 "$(row_count "$T" train backward)"
expect_eq "optimizer" 120 "$(row_count "$T" train optimizer)"
# One wait per batch, and one more per worker: the wait that finds none.
expect_eq "wait_for_batch" 122 "$(row_count "$T" Events wait_for_batch)"
expect_eq "samples" 120 "$(row_count "$T" 'train (counters)' samples)"
expect_eq "queue_depth" 240 "$(row_count "$T" 'data (counters)' queue_depth)"
expect_eq "checkpoint" 3 "$(row_count "$T" 'train (markers)' checkpoint)"
expect_eq "dropped line" "Dropped records: 0" "$(tail -1 "$T")"

tracesummary "$WORK/d.json" > sum.json
# Epoch k (from 1) ends after at least 40 k optimizer steps have ended, and
# starts after the checkpoint of epoch k - 1.
python3 - "$WORK/d.json" <<'EOF' || fail "epochs do not cover their batches"
import json
import sys

def ns(us):  # the trace's microseconds, to whole nanoseconds
    return round(us * 1000)

ev = json.load(open(sys.argv[1]))["traceEvents"]
epochs = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev
                if e.get("ph") == "X" and e["name"] == "epoch")
ends = sorted(ns(e["ts"]) + ns(e["dur"]) for e in ev
              if e.get("ph") == "X" and e["name"] == "optimizer")
marks = sorted(ns(e["ts"]) for e in ev
               if e.get("ph") == "i" and e["name"] == "checkpoint")
assert len(epochs) == 3 and len(ends) == 120 and len(marks) == 3, \
    (len(epochs), len(ends), len(marks))
for k, (start, end) in enumerate(epochs, 1):
    done = sum(1 for t in ends if t <= end)
    assert done >= 40 * k, f"epoch {k}: {done} steps ended inside"
    assert marks[k - 1] >= end, f"checkpoint {k} before its epoch ended"
    if k > 1:
        assert start >= marks[k - 2], f"epoch {k} starts before checkpoint"
print("ok: each epoch ends after its 40 batches")
EOF

# Its four threads inherit the program's name: each worker is labelled
# with its tid, as Kineto labels threads, and the main thread keeps the
# program's name.
# Every host thread as Kineto names it: "thread TID (NAME)".
expect_eq "thread names" "thread,thread,thread,thread" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
pid = d["mxprof"]["pid"]
names = []
for e in d["traceEvents"]:
    if e.get("name") == "thread_name":
        n = e["args"]["name"]
        assert n == "thread %d (demo)" % e["tid"], e
        names.append(n.split()[0])
print(",".join(sorted(names)))' "$WORK/d.json")"

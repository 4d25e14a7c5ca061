# Golden test of the events Kineto's readers look at, field by field
# against the names and places Kineto gives them (the key lists below are
# those of Kineto's own traces, in its order), on the fake libcudart and
# libcupti (tests/fakes/):
#  - every kind of CUDA synchronisation once (cuda_fake_sync): each a
#    "cuda_sync" slice on its device's track, named as Kineto names it,
#    with cuda_sync_kind, the stream and call that recorded the event a
#    wait waited on (wait_on_stream, wait_on_cuda_event_record_corr_id),
#    stream, correlation, device, context and the External id of the NVTX
#    range around it, and a flow from its call;
#  - kernels with queued, blocks and warps per SM and the estimated
#    occupancy; copies and sets (cuda_fake_train);
#  - the top level (distributedInfo from the launcher's variables) and the
#    metadata: the process named by its program, its command line as its
#    labels, and stream, sync and host thread tracks named.
. "$ROOT/tests/integration/lib.sh"
fakes=$BUILD/fakes
[ -e "$fakes/libcupti.so.13" ] || skip "built without the CUDA toolkit headers (no fake libcupti)"
sync_prog=$BUILD/programs/cuda_fake_sync
train_prog=$BUILD/programs/cuda_fake_train

expected=$("$sync_prog" "$fakes/libcudart.so.13")
RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 MXPROF_HOOK=none MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/sync.json" \
	LD_PRELOAD="$PRELOAD" "$sync_prog" "$fakes/libcudart.so.13" >out.txt 2>err.txt ||
	fail "cuda_fake_sync failed under mxprof"
expect_eq "program output" "$expected" "$(cat out.txt)"
expect_eq "stderr" "" "$(cat err.txt)"
MXPROF_HOOK=none MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/train.json" \
	LD_PRELOAD="$PRELOAD" "$train_prog" "$fakes/libcudart.so.13" 1 >/dev/null 2>err.txt ||
	fail "cuda_fake_train failed under mxprof"
expect_eq "stderr" "" "$(cat err.txt)"
tracesummary sync.json >/dev/null || fail "sync.json: trace check failed"
tracesummary train.json >/dev/null || fail "train.json: trace check failed"

python3 - sync.json train.json "$sync_prog $fakes/libcudart.so.13" <<'PY' || fail "Kineto's fields"
import json, re, sys
from decimal import Decimal
text = open(sys.argv[1]).read()
d = json.loads(text, parse_float=Decimal)
t = json.load(open(sys.argv[2]), parse_float=Decimal)
cmdline = sys.argv[3]
ns = lambda v: int(Decimal(v) * 1000)

# Top level.
for k in ("schemaVersion", "deviceProperties", "distributedInfo", "traceEvents",
          "traceName", "displayTimeUnit", "baseTimeNanoseconds"):
    assert k in d, k
assert d["distributedInfo"] == {"rank": 1, "world_size": 2, "local_rank": 1}, d["distributedInfo"]
assert re.search(r'"rank":\s+1', text), "rank as HTA finds it"
assert "distributedInfo" not in t, "no launcher variables, no distributedInfo"

ev = d["traceEvents"]
pid = d["mxprof"]["pid"]
xs = [e for e in ev if e["ph"] == "X"]
api = {e["name"]: e for e in xs if e["cat"] == "cuda_runtime"}
for name in ("cudaStreamCreate", "cudaEventCreate", "cudaEventRecord", "cudaStreamWaitEvent",
             "cudaEventSynchronize", "cudaStreamSynchronize", "cudaDeviceSynchronize",
             "cudaLaunchKernel", "cudaEventDestroy"):
    assert name in api, (name, sorted(api))
corr = lambda name: api[name]["args"]["correlation"]
step = [e for e in xs if e["name"] == "step"]
assert len(step) == 1, step
ext = step[0]["args"]["External id"]

# The runtime calls: Kineto's args.
for e in api.values():
    assert e["pid"] == pid, e
    assert set(e["args"]) == {"External id", "cbid", "correlation"}, e["args"]

# The sync records, exactly, in time order.
syncs = sorted((e for e in xs if e["cat"] == "cuda_sync"), key=lambda e: ns(e["ts"]))
got = [(e["name"], e["pid"], e["tid"], e["args"]) for e in syncs]
rec = corr("cudaEventRecord")
want = [
    ("Stream Wait Event", 0, 14,
     {"External id": ext, "cuda_sync_kind": "Stream Wait Event", "wait_on_stream": 13,
      "wait_on_cuda_event_record_corr_id": rec, "wait_on_cuda_event_id": 1,
      "stream": 14, "correlation": corr("cudaStreamWaitEvent"), "device": 0, "context": 1}),
    ("Event Sync", 0, -1,
     {"External id": ext, "cuda_sync_kind": "Event Sync", "wait_on_stream": 13,
      "wait_on_cuda_event_record_corr_id": rec, "wait_on_cuda_event_id": 1,
      "stream": -1, "correlation": corr("cudaEventSynchronize"), "device": 0, "context": 1}),
    ("Stream Sync", 0, 1000014,
     {"External id": ext, "cuda_sync_kind": "Stream Sync", "stream": 14,
      "correlation": corr("cudaStreamSynchronize"), "device": 0, "context": 1}),
    ("Context Sync", 0, -1,
     {"External id": ext, "cuda_sync_kind": "Context Sync", "stream": -1,
      "correlation": corr("cudaDeviceSynchronize"), "device": 0, "context": 1}),
]
assert got == want, "\n%s\n%s" % (got, want)
# Kineto's order of the args, too.
for (_, _, _, g), (_, _, _, w) in zip(got, want):
    assert list(g) == list(w), (list(g), list(w))

# A flow from each waiting call to its sync record, each end strictly
# inside its own slice, the start at the call's beginning.
flows = {}
for e in ev:
    if e["ph"] in ("s", "f"):
        flows.setdefault(e["id"], {})[e["ph"]] = e
for s in syncs:
    c = s["args"]["correlation"]
    p = flows.get(c)
    assert p and set(p) == {"s", "f"}, (c, p)
    call = next(e for e in api.values() if e["args"]["correlation"] == c)
    for end, slice_ in (("s", call), ("f", s)):
        x = p[end]
        assert (x["pid"], x["tid"]) == (slice_["pid"], slice_["tid"]), (x, slice_)
        assert ns(slice_["ts"]) < ns(x["ts"]) < ns(slice_["ts"]) + ns(slice_["dur"]), (x, slice_)
    # The start at the waiting call's beginning (1 ns in), before the end.
    assert ns(p["s"]["ts"]) == ns(call["ts"]) + 1 <= ns(p["f"]["ts"]), (p, call)

# Kernels: Kineto's args, and the wait shown on the GPU: "consume" starts
# when "produce" ends.
kineto_kernel = {"External id", "queued", "device", "context", "stream", "correlation",
                 "registers per thread", "shared memory", "blocks per SM", "warps per SM",
                 "grid", "block", "est. achieved occupancy %"}
ks = {e["name"]: e for e in xs if e["cat"] == "kernel"}
assert sorted(ks) == ["consume", "held_warmup", "produce"], sorted(ks)
for e in list(ks.values()) + [e for e in t["traceEvents"] if e.get("cat") == "kernel"]:
    assert set(e["args"]) == kineto_kernel, sorted(set(e["args"]) ^ kineto_kernel)
    assert e["args"]["queued"] == 0, e["args"]
# 20 and 5 blocks of 64 threads over 132 SMs fill under 0.5 % of them.
assert [ks[k]["args"]["est. achieved occupancy %"] for k in ("produce", "consume")] == [0, 0]
# The fake runs held_warmup until produce starts: back to back.
assert ns(ks["held_warmup"]["ts"]) + ns(ks["held_warmup"]["dur"]) == ns(ks["produce"]["ts"]), ks
# conv_bwd: 20 blocks of 128 threads, 0.95 % (test_gpu_occupancy has the
# calculator's cases).
bwd = [e for e in t["traceEvents"] if e.get("name") == "conv_bwd"]
assert [e["args"]["est. achieved occupancy %"] for e in bwd] == [1], bwd
assert (ks["produce"]["tid"], ks["consume"]["tid"]) == (13, 14)
assert ns(ks["consume"]["ts"]) >= ns(ks["produce"]["ts"]) + ns(ks["produce"]["dur"]), ks

# Copies and sets (cuda_fake_train): Kineto's names and args.
kineto_copy = {"External id", "device", "context", "stream", "correlation", "bytes",
               "memory bandwidth (GB/s)"}
copies = sorted(e["name"] for e in t["traceEvents"] if e.get("cat") in ("gpu_memcpy", "gpu_memset"))
assert copies == ["Memcpy DtoH (Device -> Pageable)", "Memcpy HtoD (Pageable -> Device)",
                  "Memset (Device)"], copies
for e in t["traceEvents"]:
    if e.get("cat") in ("gpu_memcpy", "gpu_memset"):
        assert set(e["args"]) == kineto_copy, sorted(e["args"])

# Metadata: the process by its program, its command line as labels; the
# tracks named.
meta = {(e["name"], e["pid"], e["tid"]): e["args"] for e in ev if e["ph"] == "M"}
assert meta[("process_name", pid, 0)] == {"name": "cuda_fake_sync"}, meta[("process_name", pid, 0)]
assert meta[("process_labels", pid, 0)] == {"labels": cmdline}, meta[("process_labels", pid, 0)]
assert meta[("process_sort_index", pid, 0)] == {"sort_index": pid}
assert meta[("thread_name", pid, pid)] == {"name": "thread %d (cuda_fake_sync)" % pid}
assert meta[("process_name", 0, 0)] == {"name": "GPU 0 (mxprof fake GPU)"}
names = {k[2]: v["name"] for k, v in meta.items() if k[0] == "thread_name" and k[1] == 0}
assert names == {13: "stream 13", 14: "stream 14", 1000014: "stream 14 (sync)", -1: "sync"}, names
sort = {k[2]: v["sort_index"] for k, v in meta.items() if k[0] == "thread_sort_index" and k[1] == 0}
assert sort == {13: 13, 14: 14, 1000014: 14, -1: -1}, sort
print("ok: sync, kernel, copy, set and metadata events as Kineto writes them")
PY

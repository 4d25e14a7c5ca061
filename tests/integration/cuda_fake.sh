# A CUDA training loop on the fake libcudart/libcupti (tests/fakes/): the
# fake driver calls InitializeInjection (CUDA_INJECTION64_PATH, set by
# mxprof) at its first call, mxprof loads the libcupti beside the loaded
# libcudart and records deterministic activity. Asserted exactly: kernels,
# copies and sets with bytes, one launch flow per GPU event, External ids
# linking every GPU event to its NVTX "step" range, GPU time attributed to
# that range and to each API, Device Storage figures, device properties,
# the noisy calls switched off, and the program's output unchanged.
# (MXPROF_HOOK=none: cuda_fake_hook covers a hook on the same calls.)
. "$ROOT/tests/integration/lib.sh"
fakes=$BUILD/fakes
prog=$BUILD/programs/cuda_fake_train
[ -e "$fakes/libcupti.so.13" ] || skip "built without the CUDA toolkit headers (no fake libcupti)"
S=5

expected=$("$prog" "$fakes/libcudart.so.13" $S)
MXPROF_HOOK=none MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/cu.json" LD_PRELOAD="$PRELOAD" \
	"$prog" "$fakes/libcudart.so.13" $S >out.txt 2>err.txt || fail "the program failed under mxprof"
expect_eq "program output" "$expected" "$(cat out.txt)"
expect_eq "stderr" "" "$(cat err.txt)"

tracesummary cu.json >sum.json
g() { jget sum.json "d[\"gpu\"]$1"; }
expect_eq "kernels" "{'conv_bwd': $S, 'conv_fwd': $S, 'relu': $S}" "$(g '["kernels"]')"
# grid.x * 1 us per kernel: 10 + 2 + 20 us per step.
expect_eq "kernel time (ns)" $((S * 32000)) "$(g '["kernel_ns"]')"
expect_eq "HtoD copies and bytes" "[$S, $((S * 1048576))]" "$(g '["memcpy"]["Memcpy HtoD (Pageable -> Device)"]')"
expect_eq "DtoH copies and bytes" "[$S, $((S * 4096))]" "$(g '["memcpy"]["Memcpy DtoH (Device -> Pageable)"]')"
expect_eq "memsets and bytes" "[$S, $((S * 65536))]" "$(g '["memset"]["Memset (Device)"]')"
expect_eq "GPU events" $((S * 6)) "$(g '["device_events"]')"
expect_eq "GPU events with a launch flow" $((S * 6)) "$(g '["device_with_flow"]')"
# One flow per GPU event and one per step's cudaDeviceSynchronize, to its
# Context Sync (Kineto draws both).
expect_eq "flows" "{'f': $((S * 7)), 'pairs': $((S * 7)), 's': $((S * 7))}" "$(g '["flows"]')"
# Each step's six GPU events carry the External id of that step's range.
expect_eq "External ids (one per step)" $S "$(g '["device_ext"].__len__()')"
expect_eq "GPU events per External id" "[6]" "$(g '["device_ext"].values().__iter__().__class__ and sorted(set(d["gpu"]["device_ext"].values()))')"
expect_eq "NVTX ranges with an External id" $S "$(g '["host_ext"]["NVTX/step"]')"
expect_eq "launch calls" $((S * 3)) "$(g '["api"]["cuda_runtime/cudaLaunchKernel"]')"
expect_eq "memcpy calls" $((S * 2)) "$(g '["api"]["cuda_runtime/cudaMemcpy"]')"
expect_eq "sync records" $S "$(g '["api"]["cuda_sync/Context Sync"]')"
expect_eq "noisy cudaGetDevice switched off" 0 "$(g '["api"].get("cuda_runtime/cudaGetDevice", 0)')"
expect_eq "device memory counter" "[1048576, 2097152, 1048576, 0]" \
	"$(jget sum.json 'd["counters"]["Device Storage/Memory: cuda/0"]')"
expect_eq "device name" "mxprof fake GPU" "$(jget sum.json 'd["top"]["deviceProperties"][0]["name"]')"
expect_eq "device SMs" 132 "$(jget sum.json 'd["top"]["deviceProperties"][0]["numSms"]')"
expect_eq "device limits per SM (Kineto's keys)" "[2048, 65536, 232448, 233472]" \
	"$(jget sum.json '[d["top"]["deviceProperties"][0][k] for k in ("maxThreadsPerMultiprocessor", "regsPerMultiprocessor", "sharedMemPerBlockOptin", "sharedMemPerMultiprocessor")]')"
expect_eq "GPU track name" "GPU 0 (mxprof fake GPU)" "$(jget sum.json 'd["process_names"]["0"]')"
expect_eq "stream track name" "stream 7" "$(jget sum.json 'd["threads"]["7"]["name"]')"
python3 - cu.json <<'PY' || fail "kernel args"
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
k = [e for e in evs if e.get("cat") == "kernel" and e["name"] == "conv_fwd"][0]
a = k["args"]
assert k["pid"] == 0 and k["tid"] == 7, k
assert a["grid"] == [10, 1, 1] and a["block"] == [128, 1, 1], a
assert a["registers per thread"] == 32 and a["shared memory"] == 1024, a
assert a["device"] == 0 and a["stream"] == 7 and a["correlation"] > 0, a
assert a["context"] == 1, a
# 10 blocks of 128 threads over 132 SMs of 32-thread warps.
assert abs(a["blocks per SM"] - 10 / 132) < 1e-6, a
assert abs(a["warps per SM"] - 10 / 132 * 4) < 1e-5, a
assert "External id" in a, a
m = [e for e in evs if e.get("cat") == "gpu_memcpy" and e["name"] == "Memcpy HtoD (Pageable -> Device)"][0]
assert m["args"]["context"] == 1, m
launch = [e for e in evs if e.get("cat") == "cuda_runtime" and e["name"] == "cudaLaunchKernel"]
# CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 in cupti_runtime_cbid.h
assert len(launch) == 5 * 3 and {e["args"]["cbid"] for e in launch} == {211}, launch[:1]
assert m["args"]["bytes"] == 1048576 and abs(m["args"]["memory bandwidth (GB/s)"] - 10.0) < 0.01, m
print("ok: kernel and memcpy args")
PY

# Tables.
sec() { awk -v s="$1" '$0 == s {p = 1; next} p && /^$/ {exit} p' cu.stats.txt; }
expect_eq "kernel row" "conv_bwd $S 0.1000 0.0200 0.0200 0.0200 0.0200 62.50" \
	"$(sec 'CUDA GPU Kernels' | awk '$1 == "conv_bwd" {$1 = $1; print}')"
expect_eq "HtoD row (kB, GB/s)" "Memcpy HtoD $S 0.5243 0.1049 0.1049 0.1049 5242.8800 10.0001" \
	"$(sec 'CUDA GPU Memcpy' | awk '$2 == "HtoD" {$1 = $1; print}')"
# 5 * (32000 + 104857 + 409 + 3276) ns of GPU time inside the step ranges.
expect_eq "GPU time by host range" "NVTX: step $((S * 6)) 0.7027 100.00" \
	"$(sec 'GPU Time by Host Range' | awk '$1 == "NVTX:" {$1 = $1; print}')"
expect_eq "GPU time of cudaLaunchKernel" "cudaLaunchKernel $((S * 3)) 0.1600 22.77" \
	"$(sec 'GPU Time by API' | awk '$1 == "cudaLaunchKernel" {$1 = $1; print}')"
expect_eq "Device Storage row" "Memory: cuda/0 4 0.0000 2097.1520 1048.5760" \
	"$(sec 'Device Storage' | awk '$1 == "Memory:" {$1 = $1; print}')"
expect_eq "launch calls in the API table" $((S * 3)) "$(row_count cu.stats.txt 'CUDA API (CUPTI)' cudaLaunchKernel)"

# A program that never touches CUDA loads no CUPTI and starts no thread
# beyond the drain thread and its helper (collector/shared_call.c).
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/none.json" LD_PRELOAD="$PRELOAD" \
	"$prog" none >none.txt
expect_eq "no CUDA, no CUPTI" "libcupti mapped: 0, threads: 3" "$(cat none.txt)"

# Buffering and flushing: 10000 steps fill the fake's 4 MB buffers about
# three times (1264 bytes of records per step), and a dump signal half-way
# forces a flush of a partly filled buffer. Nothing is lost or counted
# twice. (The fake counts buffers until it is unloaded, before the final
# dump's flush.)
B=10000
FAKE_CUPTI_STATS=$WORK/buffers.txt MXPROF_HOOK=none MXPROF_AUTOSTART=1 \
	MXPROF_OUTPUT="$WORK/big.json" LD_PRELOAD="$PRELOAD" \
	"$prog" "$fakes/libcudart.so.13" $B 0 $((B / 2)) >big.txt 2>big.err || fail "the long run failed"
expect_eq "long run: output" "$("$prog" "$fakes/libcudart.so.13" $B)" "$(cat big.txt)"
tracesummary big.json >big.sum
expect_eq "long run: kernels" "{'conv_bwd': $B, 'conv_fwd': $B, 'relu': $B}" "$(jget big.sum 'd["gpu"]["kernels"]')"
expect_eq "long run: flows" $((B * 7)) "$(jget big.sum 'd["gpu"]["flows"]["pairs"]')"
expect_eq "long run: External ids" $B "$(jget big.sum 'len(d["gpu"]["device_ext"])')"
expect_eq "long run: launch calls" $((B * 3)) "$(row_count big.stats.txt 'CUDA API (CUPTI)' cudaLaunchKernel)"
expect_eq "long run: no GPU record lost" 0 "$(grep -c 'Dropped GPU records' big.stats.txt || true)"
full=$(awk '$1 == "full" {print $2}' buffers.txt)
flushed=$(awk '$1 == "flushed" {print $2}' buffers.txt)
[ "$full" -ge 2 ] || fail "long run: only $full buffers went back full"
[ "$flushed" -ge 1 ] || fail "long run: no buffer was flushed by the dump"
echo "ok: long run: $full buffers went back full, $flushed were flushed"

# A thread seen only through CUPTI (no NVTX, no hook: the main thread here
# records nothing of its own) still gets its thread_name, so the trace
# checks and the main thread keeps its name.
MXPROF_HOOK=none MXPROF_TRACE=cuda,gpu MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/bare.json" \
	LD_PRELOAD="$PRELOAD" "$prog" "$fakes/libcudart.so.13" $S >bare.txt 2>bare.err ||
	fail "the run without NVTX failed"
tracesummary bare.json >bare.sum || fail "the run without NVTX: trace check failed"
expect_eq "without NVTX: launch calls" $((S * 3)) "$(jget bare.sum 'd["gpu"]["api"]["cuda_runtime/cudaLaunchKernel"]')"
expect_eq "without NVTX: the main thread's name" "['thread PID (cuda_fake_train)']" \
	"$(jget bare.json '[e["args"]["name"].replace(str(e["tid"]), "PID") for e in d["traceEvents"] if e.get("name") == "thread_name" and e["pid"] == d["mxprof"]["pid"]]')"

# GPU activity alone, under the default MXPROF_HOOK (@auto): the rings stay
# empty, but the run recorded, so the line for a run that recorded nothing
# must not appear.
MXPROF_TRACE=gpu MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/gpuonly.json" \
	LD_PRELOAD="$PRELOAD" "$prog" "$fakes/libcudart.so.13" $S >gpuonly.txt 2>gpuonly.err ||
	fail "the GPU-only run failed"
expect_eq "GPU only: stderr" "" "$(cat gpuonly.err)"
tracesummary gpuonly.json >gpuonly.sum
expect_eq "GPU only: kernels" "{'conv_bwd': $S, 'conv_fwd': $S, 'relu': $S}" "$(jget gpuonly.sum 'd["gpu"]["kernels"]')"

# One call, one slice: the hook engine (MXPROF_HOOK=@cudart) and CUPTI (the
# fake) both see every runtime call of cuda_fake_train. The trace shows
# each call once, as the hook's slice (section "C API (libcudart.so.13)",
# the hook's timing) carrying CUPTI's correlation, the External id of its
# NVTX range and the launch flow; the
# CUPTI table leaves those calls out; the hook's table counts them.
. "$ROOT/tests/integration/lib.sh"
fakes=$BUILD/fakes
prog=$BUILD/programs/cuda_fake_train
[ -e "$fakes/libcupti.so.13" ] || skip "built without the CUDA toolkit headers (no fake libcupti)"
[ -e "$BUILD/obj/preload/hook.o" ] || skip "built without the hook engine (NO_HOOK=1)"
S=5

expected=$("$prog" "$fakes/libcudart.so.13" $S)
MXPROF_HOOK=@cudart MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/h.json" LD_PRELOAD="$PRELOAD" \
	"$prog" "$fakes/libcudart.so.13" $S >out.txt 2>err.txt || fail "the program failed under mxprof"
expect_eq "program output" "$expected" "$(cat out.txt)"
tracesummary h.json >sum.json
grp='C API (libcudart.so.13)'
expect_eq "cudaLaunchKernel slices" $((S * 3)) "$(jget sum.json 'd["gpu"]["api"]["cuda_runtime/cudaLaunchKernel"]')"
expect_eq "hook's cudaLaunchKernel slices" $((S * 3)) "$(jget sum.json "d[\"spans\"][\"$grp/cudaLaunchKernel\"]")"
expect_eq "cudaMemcpy slices" $((S * 2)) "$(jget sum.json 'd["gpu"]["api"]["cuda_runtime/cudaMemcpy"]')"
python3 - h.json "$grp" <<'PY' || fail "hook slices lack CUPTI's correlation"
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
hook = [e for e in evs if e.get("ph") == "X" and e["args"].get("group") == sys.argv[2]
        and e["name"] in ("cudaLaunchKernel", "cudaMemcpy", "cudaMemset")]
assert len(hook) == 30 and all("correlation" in e["args"] for e in hook), len(hook)
# Inside the NVTX "step" ranges: the range's External id, as on the GPU work.
assert all("External id" in e["args"] for e in hook), hook[:1]
cupti = [e for e in evs if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"
         and "group" not in e["args"] and e["name"] == "cudaLaunchKernel"]
assert not cupti, cupti[:1]
print("ok: 30 hook slices with a correlation and an External id, no CUPTI duplicate")
PY
expect_eq "GPU events with a flow" $((S * 6)) "$(jget sum.json 'd["gpu"]["device_with_flow"]')"
expect_eq "flows (launches, copies, sets and syncs)" $((S * 7)) "$(jget sum.json 'd["gpu"]["flows"]["pairs"]')"
expect_eq "hook table launches" $((S * 3)) "$(row_count h.stats.txt "$grp" cudaLaunchKernel)"
expect_eq "CUPTI table launches" "" "$(row_count h.stats.txt 'CUDA API (CUPTI)' cudaLaunchKernel)"
expect_eq "GPU time of cudaLaunchKernel" "cudaLaunchKernel $((S * 3)) 0.1600 22.77" \
	"$(awk '$0 == "GPU Time by API" {p = 1; next} p && /^$/ {exit} p && $1 == "cudaLaunchKernel" {$1 = $1; print}' h.stats.txt)"

# With call stacks (MXPROF_STACKS): every hooked launch has its stack, and
# the GPU work each launched is charged to its call site (main, where the
# program calls them), in the tables and in `mxprof report --flame --gpu`.
MXPROF_STACKS=8 MXPROF_HOOK=@cudart MXPROF_AUTOSTART=1 \
	MXPROF_OUTPUT="$WORK/s.json" LD_PRELOAD="$PRELOAD" \
	"$prog" "$fakes/libcudart.so.13" $S >out.txt 2>err.txt ||
	fail "the program failed under mxprof with stacks"
expect_eq "program output with stacks" "$expected" "$(cat out.txt)"
gsite() { awk -v k="$1" '$0 == "GPU Time by Call Site" {p = 1; next}
	p && /^$/ {exit} p && index($0, k) == 1 {
	split(substr($0, length(k) + 1), f, " "); print f[1], f[2]}' s.stats.txt; }
expect_eq "GPU time of conv_fwd by call site" "$S 0.0500" "$(gsite 'conv_fwd @ main')"
expect_eq "GPU time of relu by call site" "$S 0.0100" "$(gsite 'relu @ main')"
expect_eq "launches with a stack" $((S * 3)) "$(jget s.json \
	'sum(1 for e in d["traceEvents"] if e.get("name") == "cudaLaunchKernel" and "sf" in e)')"
mxprof_command
"$MX" report --flame --gpu s.json >flame.txt
expect_eq "report --flame --gpu: conv_fwd under main's launch" \
	"main;cudaLaunchKernel;conv_fwd 50000" \
	"$(sed -n 's/.*;\(main;cudaLaunchKernel;conv_fwd [0-9]*\)$/\1/p' flame.txt)"

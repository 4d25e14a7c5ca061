# On a GPU: cuda_mix (tests/programs/cuda_mix.cu), built static (nvcc's
# default) and with -cudart shared, under mxprof. Exact kernel counts,
# copies and bytes; every kernel, copy and set has a launch flow.
. "$ROOT/tests/integration/lib.sh"
R=10
for p in cuda_mix cuda_mix_shared; do
	prog=$BUILD/programs/$p
	[ -x "$prog" ] || fail "$prog not built (make test builds it where nvcc is)"
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$p.json" LD_PRELOAD="$PRELOAD" \
		"$prog" $R >"$p.out" 2>"$p.err" || fail "$p failed under mxprof"
	grep -q "^kernels: scale=$((2 * R)) add=$R$" "$p.out" || fail "$p: $(cat "$p.out")"
	tracesummary "$p.json" >"$p.sum"
	k() { jget "$p.sum" "sum(v for n, v in d[\"gpu\"][\"kernels\"].items() if n.startswith(\"$1\"))"; }
	expect_eq "$p: scale kernels" $((2 * R)) "$(k scale)"
	expect_eq "$p: add kernels" $R "$(k add)"
	expect_eq "$p: HtoD" "[2, 2097152]" "$(jget "$p.sum" 'd["gpu"]["memcpy"]["Memcpy HtoD (Pageable -> Device)"]')"
	expect_eq "$p: DtoH" "[1, 1048576]" "$(jget "$p.sum" 'd["gpu"]["memcpy"]["Memcpy DtoH (Device -> Pageable)"]')"
	expect_eq "$p: memset" "[1, 1048576]" "$(jget "$p.sum" 'd["gpu"]["memset"]["Memset (Device)"]')"
	expect_eq "$p: GPU events with a flow" "$(jget "$p.sum" 'd["gpu"]["device_events"]')" \
		"$(jget "$p.sum" 'd["gpu"]["device_with_flow"]')"
	expect_eq "$p: launches" $((3 * R)) "$(jget "$p.sum" 'd["gpu"]["api"].get("cuda_runtime/cudaLaunchKernel", 0)')"
	expect_eq "$p: stderr" "" "$(cat "$p.err")"
done

# Programs built with nvcc (static cudart, nvcc's default, and -cudart
# shared) run under mxprof with their output and exit status unchanged:
# without a GPU they get cudaErrorInsufficientDriver / cudaErrorNoDevice
# and mxprof stays silent; with one they compute the same checksum. Also
# injected through CUDA_INJECTION64_PATH alone, without LD_PRELOAD. The
# traces load. (tests/gpu/ checks the GPU figures where a GPU is present.)
. "$ROOT/tests/integration/lib.sh"
[ -e "$BUILD/fakes/libcupti.so.13" ] || skip "built without the CUDA toolkit headers"
[ -x "$BUILD/programs/cuda_mix" ] || skip "nvcc not found at build time (no cuda_mix)"
nvidia-smi -L >/dev/null 2>&1 ||
	skip_part "the programs' work on a GPU (no GPU here; tests/gpu/run.sh checks it where there is one)"

for p in cuda_mix cuda_mix_shared; do
	prog=$BUILD/programs/$p
	set +e
	"$prog" 3 >"$p.plain" 2>"$p.plain.err"
	rc_plain=$?
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$p.json" LD_PRELOAD="$PRELOAD" \
		"$prog" 3 >"$p.out" 2>"$p.err"
	rc=$?
	CUDA_INJECTION64_PATH="$MXPROF_LIB" MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$p.inj.json" \
		"$prog" 3 >"$p.inj" 2>"$p.inj.err"
	rc_inj=$?
	set -e
	expect_eq "$p: exit status" "$rc_plain" "$rc"
	expect_eq "$p: output" "$(cat "$p.plain")" "$(cat "$p.out")"
	expect_eq "$p: exit status (injection path)" "$rc_plain" "$rc_inj"
	expect_eq "$p: output (injection path)" "$(cat "$p.plain")" "$(cat "$p.inj")"
	if ! nvidia-smi -L >/dev/null 2>&1; then
		# mxprof's one line when nothing was recorded (the static
		# runtime's calls are not hooked) aside, stderr is the program's.
		expect_eq "$p: stderr without a GPU" "$(cat "$p.plain.err")" \
			"$(grep -v '^mxprof: nothing was recorded; ' "$p.err" || true)"
	fi
	# A process that recorded nothing writes no trace (and says so).
	if [ -e "$p.json" ]; then
		tracesummary "$p.json" >"$p.sum"
	else
		grep -q '^mxprof: nothing was recorded; ' "$p.err" || fail "$p: no trace and no line"
	fi
	echo "ok: $p: $(sed -n 1p "$p.out")"
done

# fork() while the drain thread dumps, CUPTI hands over buffers and another
# thread asks for the tables: every run finishes, and the parent's trace
# holds exactly the kernels it launched. (A dump that held the collector's
# lock while CUPTI called back into the string table, against a fork
# handler that took the two in the other order, hung here.) The fake
# libcupti calls back on the thread that flushes, as CUPTI can. One run
# by default; SLOW=1 makes it three, for more chances at the race.
. "$ROOT/tests/integration/lib.sh"
fakes=$BUILD/fakes
prog=$BUILD/programs/cuda_fork_dump
[ -e "$fakes/libcupti.so.13" ] || skip "built without the CUDA toolkit headers (no fake libcupti)"

runs=1
[ "${SLOW:-}" = 1 ] && runs=3
for run in $(seq $runs); do
	rm -f "$WORK"/fd*.json "$WORK"/fd*.txt
	timeout 120 env MXPROF_HOOK=none MXPROF_AUTOSTART=1 MXPROF_CONTINUOUS_DUMP=1 \
		MXPROF_DUMP_PERIOD=0.01 MXPROF_OUTPUT="$WORK/fd.json" LD_PRELOAD="$PRELOAD" \
		"$prog" "$fakes/libcudart.so.13" 200 >out.txt 2>err.txt ||
		fail "run $run did not finish (exit $?): $(cat err.txt)"
	expect_eq "run $run: stderr" "" "$(cat err.txt)"
	read -r _ launches _ forks _ tables <out.txt
	expect_eq "run $run: forks" 200 "$forks"
	expect_eq "run $run: dumps() answered during the forks" 1 "$tables"
	tracesummary fd.json >sum.json
	# The kernel's name is shown demangled where the process has a
	# demangler (libstdc++, or a sanitizer's runtime), mangled otherwise.
	expect_eq "run $run: kernels in the trace" "$launches" \
		"$(jget sum.json 'sum(n for k, n in d["gpu"]["kernels"].items() if k in ("_Z6kernelPfi", "kernel(float*, int)"))')"
	expect_eq "run $run: kernel names" 1 "$(jget sum.json 'len(d["gpu"]["kernels"])')"
	expect_eq "run $run: dropped" 0 "$(jget sum.json 'd["top"]["mxprof"]["droppedRecords"]')"
	expect_eq "run $run: GPU records dropped" "" "$(grep 'Dropped GPU records' fd.stats.txt || true)"
done

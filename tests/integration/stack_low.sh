# Call stacks with little thread stack left: the capture's arrays used to
# be on the thread's stack, sized for the deepest stack whatever
# MXPROF_STACKS, and a hooked call made with less than about 16 KiB of
# stack free died by SIGSEGV where the program alone ran. Now they are
# off the stack, and the capture needs under 1 KiB whatever the depth.
# Checks: stack_low's thread calls crc32 with 8 KiB of its stack left
# (the hooked call without stacks needs about 3.3 KiB): the output is that
# of the plain run, and the call has its stack, at depths 16 and 128.
. "$ROOT/tests/integration/lib.sh"
SRC=$ROOT/tests/programs/stacks
cc -O1 -g -o "$WORK/stack_low" "$SRC/stack_low.c" -lz -lpthread
cd "$WORK"
ulimit -c 0

./stack_low 8192 >plain.txt
for depth in 16 128; do
	set +e
	MXPROF_STACKS=$depth MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/low$depth.json" \
		MXPROF_HOOK='libz.so*:crc32' LD_PRELOAD="$PRELOAD" \
		./stack_low 8192 >"low$depth.txt"
	rc=$?
	set -e
	expect_eq "depth $depth: status" 0 "$rc"
	cmp plain.txt "low$depth.txt" || fail "depth $depth: output differs"
	expect_eq "depth $depth: the stack" \
		"1 crc32 <- low_fn [stack_low] <- thread_fn [stack_low]" \
		"$(python3 "$ROOT/tests/tools/stackcheck.py" "low$depth.json" 2)"
done

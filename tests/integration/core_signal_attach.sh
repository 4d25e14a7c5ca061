# A thread's shadow stack and its buffer come at its first hooked call,
# and its shadow stack goes at its exit; a signal handler's hooked call
# may come in the middle of either: 4000 threads (16 at a time) make 4
# crc32() calls each while a SIGPROF handler that calls crc32() too
# interrupts the process every 50 us of its CPU time. Each run must end
# well, with the tables counting every call. Three runs with stacks,
# three without (the trampolines' own paths). Before the fixes:
# - with stacks, half the runs crashed (a handler read a depth from a
#   stack without its top);
# - without, 11 runs in 60 lost a thread's calls (a handler that gave the
#   thread its buffer during the thread's own push reset the count of
#   pushes in progress, and nothing of the thread was published again)
#   or crashed (the entry read the stack's top, then a handler made the
#   stack, then the entry read its end and took a NULL top for a frame).
# The records a handler makes while its thread has no buffer yet (or no
# longer) are dropped from the timeline: the line that says so must not
# send the user to a buffer setting that would change nothing.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_signal_tally
T=4000

for i in 1 2 3 4 5 6; do
	stacks=8
	[ $i -le 3 ] || stacks=0
	MXPROF_AUTOSTART=1 MXPROF_HOOK='libz.so*:crc32' \
		MXPROF_STACKS=$stacks MXPROF_OUTPUT="$WORK/a$i.json" \
		LD_PRELOAD="$PRELOAD" "$prog" $T 4 16 50 >out$i.txt 2>err$i.txt ||
		fail "run $i failed ($?): $(cat err$i.txt)"
	calls=$(sed -n 's/^calls //p' out$i.txt)
	[ "$calls" -ge $((T * 4)) ] || fail "run $i: calls $calls"
	if grep -q 'dropped' err$i.txt; then
		grep -q 'made while their thread had no buffer' err$i.txt &&
			grep -q 'the tables count them all' err$i.txt ||
			fail "run $i: $(cat err$i.txt)"
		! grep -q 'MXPROF_BUFFER_MAX_KB' err$i.txt ||
			fail "run $i: a buffer setting for no full buffer: $(cat err$i.txt)"
	fi
	expect_eq "run $i (stacks $stacks) crc32 count" "$calls" \
		"$(awk '$1 == "crc32" { print $2; exit }' a$i.stats.txt)"
done

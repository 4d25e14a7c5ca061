# The tables stay exact when the timeline drops records and signal
# handlers make hooked calls: 64 threads x 20,000 crc32() calls with a
# SIGPROF handler that calls crc32() too, into rings of 64 KiB (half a
# million records dropped). A handler's record can come while its thread
# adds to its tally of dropped records, while it gets its ring, or after
# it gave its ring back at exit; each must still be counted once.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_signal_tally
T=64 N=20000

for i in 1 2 3; do
	MXPROF_AUTOSTART=1 MXPROF_HOOK='libz.so*:crc32' MXPROF_STACKS=8 \
		MXPROF_BUFFER_KB=64 MXPROF_OUTPUT="$WORK/t$i.json" \
		LD_PRELOAD="$PRELOAD" "$prog" $T $N >out$i.txt 2>err$i.txt ||
		fail "run $i failed: $(cat err$i.txt)"
	calls=$(sed -n 's/^calls //p' out$i.txt)
	[ "$calls" -gt $((T * N)) ] || fail "run $i: no handler call ($calls)"
	# Drops depend on how the drain thread keeps up; when there are
	# some, the line says the tables have them all.
	if grep -q 'dropped' err$i.txt; then
		grep -q 'the tables count them all' err$i.txt ||
			fail "run $i: $(cat err$i.txt)"
	fi
	expect_eq "run $i crc32 count" "$calls" \
		"$(awk '$1 == "crc32" { print $2; exit }' t$i.stats.txt)"
done

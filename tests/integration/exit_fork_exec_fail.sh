# A forked child whose exec fails goes on recording: the exec wrote its
# journal out on the exec's own thread, so that under AddressSanitizer,
# where a forked child starts its drain thread only when it needs one, the
# exec started none (a thread started between fork and exec there waited
# forever on the allocator's lock, which the fork had left taken: this
# test hung under ASan before). The parent's 100 tasks and the child's 200
# are all in their files.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/fork_exec_fail
cd "$WORK"

"$prog" 100 >plain.txt
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/fx.json" LD_PRELOAD="$PRELOAD" \
	"$prog" 100 >out.txt 2>err.txt || fail "exit status $?: $(cat err.txt)"
expect_eq "stderr" "" "$(cat err.txt)"
expect_eq "child status" "child status 0" "$(tail -1 out.txt)"
if [ "$SANITIZER" = asan ]; then
	# Deferred: the child has no drain thread; its final dump is
	# written on its own thread at exit.
	expect_eq "output" "$(cat plain.txt)" "$(cat out.txt)"
else
	# The drain thread and its helper (collector/shared_call.c).
	expect_eq "output, with the child's drain thread" \
		"$(sed 's/: 1 threads/: 3 threads/' plain.txt)" "$(cat out.txt)"
fi
child=$(ls fx.*.json | sed -n 's/^fx\.\([0-9]*\)\.json$/\1/p')
[ -n "$child" ] || fail "no trace of the child: $(ls)"
expect_eq "parent's tasks" 100 "$(row_count fx.stats.txt fx step)"
expect_eq "child's tasks" 200 "$(row_count "fx.$child.stats.txt" fx step)"
tracesummary "fx.$child.json" >sum.json
expect_eq "child's slices" "{'fx/step': 200}" "$(jget sum.json 'd["spans"]')"

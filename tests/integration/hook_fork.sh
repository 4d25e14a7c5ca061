# fork() inside a hooked call's callback: the child returns through the
# hooked frame (its copy of the shadow stack is valid), calls the hooked
# function 100 times and exits; the parent calls it 100 times before and
# after. The parent's trace: 200 ht_add and the one ht_call. The child's
# own trace (mxprof names it after the child's pid): 100 ht_add and the
# ht_call it returned from.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
hook_same fork "$WORK/hook_main_plain" fork 100
s=$WORK/fork.summary.json
expect_eq "ht_add" 200 "$(span "$s" 'C API (libhookt.so)/ht_add')"
expect_eq "ht_call" 1 "$(span "$s" 'C API (libhookt.so)/ht_call')"
grep -q '^child sum 5150$' "$WORK/fork.mxprof.txt" || fail "child output"
child=$(ls "$WORK"/fork.*.json | grep -v '/fork\.json$' |
	grep -v summary | sed -n 1p)
[ -n "$child" ] || fail "no trace from the child"
tracesummary "$child" >"$WORK/child.summary.json"
c=$WORK/child.summary.json
expect_eq "child ht_add" 100 "$(span "$c" 'C API (libhookt.so)/ht_add')"
expect_eq "child ht_call" 1 "$(span "$c" 'C API (libhookt.so)/ht_call')"

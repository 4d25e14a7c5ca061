# A hooked function calls back into the program, which calls the hooked
# function again: 21 nested ht_call frames and one ht_add at the bottom,
# all on one thread's shadow stack, properly nested in the trace.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
hook_same rec "$WORK/hook_main_plain" recurse 20
s=$WORK/rec.summary.json
expect_eq "ht_call" 21 "$(span "$s" 'C API (libhookt.so)/ht_call')"
expect_eq "ht_add" 1 "$(span "$s" 'C API (libhookt.so)/ht_add')"
expect_eq "depth" 22 "$(jget "$s" 'max(d["max_depth"].values())')"

# Deeper than the shadow stack (256 frames): the outer 256 ht_call are
# timed, the 45 below them and the ht_add at the bottom run untimed, and
# one line at exit says how many calls were not timed.
"$WORK/hook_main_plain" recurse 300 >"$WORK/deep.plain.txt"
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/deep.json" MXPROF_HOOK="$HOOK_SPEC" \
	LD_PRELOAD="$PRELOAD" "$WORK/hook_main_plain" recurse 300 \
	>"$WORK/deep.txt" 2>"$WORK/deep.err"
diff "$WORK/deep.plain.txt" "$WORK/deep.txt" || fail "deep: output differs"
tracesummary "$WORK/deep.json" >"$WORK/deep.sum"
expect_eq "deep ht_call" 256 "$(span "$WORK/deep.sum" 'C API (libhookt.so)/ht_call')"
expect_eq "deep ht_add" 0 "$(span "$WORK/deep.sum" 'C API (libhookt.so)/ht_add')"
grep -q '^mxprof: 46 hooked calls were not timed' "$WORK/deep.err" ||
	fail "no line about the 46 untimed calls"

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

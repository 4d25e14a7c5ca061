# longjmp out of hooked calls: ht_jump longjmps itself, and ht_call's
# callback longjmps past ht_call's frame. Neither call returns, so neither
# is recorded; the shadow stack drops their frames and the 50 ht_add calls
# that follow are timed normally.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
hook_same lj "$WORK/hook_main_plain" longjmp 50
s=$WORK/lj.summary.json
expect_eq "ht_add" 50 "$(span "$s" 'C API (libhookt.so)/ht_add')"
expect_eq "ht_jump" 0 "$(span "$s" 'C API (libhookt.so)/ht_jump')"
expect_eq "ht_call" 0 "$(span "$s" 'C API (libhookt.so)/ht_call')"
expect_eq "depth" 1 "$(jget "$s" 'max(d["max_depth"].values())')"

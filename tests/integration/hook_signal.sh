# A signal handler calls a hooked function while a hooked call is active
# on the same thread (raise() inside ht_call's callback): 100 ht_call and
# 100 ht_add, nested two deep.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
hook_same sig "$WORK/hook_main_plain" signal 100
s=$WORK/sig.summary.json
expect_eq "ht_call" 100 "$(span "$s" 'C API (libhookt.so)/ht_call')"
expect_eq "ht_add" 100 "$(span "$s" 'C API (libhookt.so)/ht_add')"
expect_eq "depth" 2 "$(jget "$s" 'max(d["max_depth"].values())')"

# The same with the handler on a sigaltstack (heap memory): the
# interrupted ht_call frame lives on the thread's stack, the handler's
# ht_add on the other one; neither may be mistaken for a frame a longjmp
# left behind.
hook_same alt "$WORK/hook_main_plain" altstack 100
a=$WORK/alt.summary.json
expect_eq "altstack ht_call" 100 "$(span "$a" 'C API (libhookt.so)/ht_call')"
expect_eq "altstack ht_add" 100 "$(span "$a" 'C API (libhookt.so)/ht_add')"
expect_eq "altstack depth" 2 "$(jget "$a" 'max(d["max_depth"].values())')"

# Hooked calls made by a thread-specific data destructor, after the
# thread's function returned, are recorded like any other. hook_main tsd 4:
# 4 threads, each with one ht_add in its body and one in its destructor.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
hook_same tsd "$WORK/hook_main_plain" tsd 4
expect_eq "output" "tsd 14 14" "$(cat "$WORK/tsd.plain.txt")"
expect_eq "ht_add" 8 "$(span "$WORK/tsd.summary.json" 'C API (libhookt.so)/ht_add')"

# Objects loaded after start: hook_main dlopen()s libhookt2.so, calls
# ht2_mul 100 times through a dlsym() pointer, dlclose()s it, and does it
# all again (the second load is patched afresh). ht2_mul calls ht_add
# through libhookt2's own GOT. 200 ht2_mul (section "C API
# (libhookt2.so)") and 200 ht_add.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
hook_same dl "$WORK/hook_main_plain" dlopen 100 "$WORK/libhookt2.so"
s=$WORK/dl.summary.json
expect_eq "ht2_mul" 200 "$(span "$s" 'C API (libhookt2.so)/ht2_mul')"
expect_eq "ht_add" 200 "$(span "$s" 'C API (libhookt.so)/ht_add')"

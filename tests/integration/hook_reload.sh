# A library loaded and unloaded more times than there are stubs (HOOK_MAX,
# 16384): each reload reuses the stubs its functions had, so every call is
# timed and nothing is reported as "more than 16384 functions matched".
# hook_main reload 17000: 17000 x (dlopen libhookt2.so, ht2_mul, dlclose);
# ht2_mul calls ht_add.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
hook_same reload "$WORK/hook_main_plain" reload 17000 "$WORK/libhookt2.so" \
	2>"$WORK/reload.err"
cat "$WORK/reload.err" >&2
s=$WORK/reload.summary.json
expect_eq "ht2_mul" 17000 "$(span "$s" 'C API (libhookt2.so)/ht2_mul')"
expect_eq "ht_add" 17000 "$(span "$s" 'C API (libhookt.so)/ht_add')"
expect_eq "lines on stderr" 0 "$(grep -c . "$WORK/reload.err" || true)"

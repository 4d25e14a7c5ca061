# glibc's dlopen and dlsym depend on who calls them, and libmxprof wraps
# both. libhookt3.so dlopen()s "libhookt4.so", which only its own RUNPATH
# finds, and its ht_add interposer finds libhookt's ht_add with
# dlsym(RTLD_NEXT) (were libmxprof taken for the caller, that would find
# the interposer itself and recurse). N = 50: 50 ht_add in each library,
# 1 ht3_open, and 1 ht4_val through a dlsym pointer.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
mkdir -p "$WORK/sub"
cc -O2 -shared -fPIC -o "$WORK/libhookt.so" "$HOOKLIBS/hooklib.c"
cc -O2 -shared -fPIC -o "$WORK/sub/libhookt4.so" "$HOOKLIBS/hooklib4.c"
cc -O2 -shared -fPIC -o "$WORK/libhookt3.so" "$HOOKLIBS/hooklib3.c" \
	-Wl,--enable-new-dtags,-rpath,"$WORK/sub" -ldl
cc -O2 -o "$WORK/hook_dlcaller" "$HOOKLIBS/hook_dlcaller.c" \
	-L"$WORK" -Wl,--no-as-needed -lhookt3 -lhookt -Wl,-rpath,"$WORK"
hook_same dc "$WORK/hook_dlcaller" 50
grep -qx 'open 44' "$WORK/dc.mxprof.txt" || fail "RUNPATH dlopen failed"
s=$WORK/dc.summary.json
expect_eq "libhookt3 ht_add" 50 "$(span "$s" 'C API (libhookt3.so)/ht_add')"
expect_eq "libhookt ht_add" 50 "$(span "$s" 'C API (libhookt.so)/ht_add')"
expect_eq "ht3_open" 1 "$(span "$s" 'C API (libhookt3.so)/ht3_open')"
expect_eq "ht4_val" 1 "$(span "$s" 'C API (libhookt4.so)/ht4_val')"

# A profiled program never sees errno changed by mxprof. liberrnoshim.so
# (preloaded before libmxprof) gives libmxprof an mmap and an mprotect that
# succeed and leave errno set, as POSIX allows. hook_main's errno mode sets
# errno before each step and prints whether it was kept:
#  - a thread's first hooked call maps its shadow stack (hook_rt_enter's
#    general path), and a function that sets errno there still does;
#  - dlopen of a library linked with BIND_NOW and RELRO patches a GOT on
#    read-only pages (mprotect, in the dlopen wrapper's scan);
#  - dlsym, a call through its pointer, and dlclose.
# The output must be the same as without mxprof, and the calls counted.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
cc -O2 -g -shared -fPIC -o "$WORK/libhookt2now.so" "$HOOKLIBS/hooklib2.c" \
	-L"$WORK" -lhookt -Wl,-rpath,"$WORK" -Wl,-z,now,-z,relro
cc -O2 -g -shared -fPIC -o "$WORK/liberrnoshim.so" "$HOOKLIBS/errnoshim.c"
# The sanitizer runtime, if any, stays first.
pre=$WORK/liberrnoshim.so
[ "$PRELOAD" = "$MXPROF_LIB" ] || pre="${PRELOAD% *} $pre"
run=("$WORK/hook_main_plain" errno 3 "$WORK/libhookt2now.so")
"${run[@]}" >plain.txt
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/e.json" MXPROF_HOOK="$HOOK_SPEC" \
	LD_PRELOAD="$pre $MXPROF_LIB" "${run[@]}" >mxprof.txt
cat mxprof.txt
diff plain.txt mxprof.txt || fail "errno differs under mxprof"
expect_eq "steps that kept errno" 15 "$(grep -c ': errno kept$' mxprof.txt)"
tracesummary "$WORK/e.json" >s.json
expect_eq "ht_add" 6 "$(span s.json 'C API (libhookt.so)/ht_add')"
expect_eq "ht_errno" 3 "$(span s.json 'C API (libhookt.so)/ht_errno')"
expect_eq "ht2_mul" 3 "$(span s.json 'C API (libhookt2now.so)/ht2_mul')"

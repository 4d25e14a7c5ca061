# C++ exceptions unwind through a hooked C frame (ht_call), are caught
# inside the callback (the hooked frame survives), and are rethrown through
# it. The unwinder must see real return addresses; the calls that ended by
# an exception are still recorded. 50 rounds: 150 ht_call, 100 ht_add.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
g++ -O2 -g -o "$WORK/hook_cxx" "$HOOKLIBS/hook_cxx.cpp" -L"$WORK" -lhookt \
	-Wl,-rpath,"$WORK"
hook_same cxx "$WORK/hook_cxx" 50
s=$WORK/cxx.summary.json
expect_eq "ht_call" 150 "$(span "$s" 'C API (libhookt.so)/ht_call')"
expect_eq "ht_add" 100 "$(span "$s" 'C API (libhookt.so)/ht_add')"

# The same program with libstdc++ and the unwinder linked statically: no
# GOT entry of the unwinder to wrap, so mxprof does not see the exceptions,
# but they walk through the hooked frames by the stubs' unwind information
# and are caught as without mxprof. The 100 calls an exception ended are
# not recorded: 50 ht_call (the inner catches), 100 ht_add.
g++ -O2 -g -o "$WORK/hook_cxx_static" "$HOOKLIBS/hook_cxx.cpp" \
	-static-libstdc++ -static-libgcc -L"$WORK" -lhookt -Wl,-rpath,"$WORK"
hook_same cxxs "$WORK/hook_cxx_static" 50
s=$WORK/cxxs.summary.json
expect_eq "static: ht_call" 50 "$(span "$s" 'C API (libhookt.so)/ht_call')"
expect_eq "static: ht_add" 100 "$(span "$s" 'C API (libhookt.so)/ht_add')"

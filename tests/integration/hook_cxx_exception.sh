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

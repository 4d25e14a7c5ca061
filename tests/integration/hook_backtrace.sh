# Unwinding through hooked calls: the stubs and trampolines carry unwind
# information that finds the caller's return address in the shadow frame
# (hook_tramp.S, "Unwinding"), so unwinders walk through a hooked call.
#  - backtrace() in a callback of a hooked call sees the callers beyond it;
#  - backtrace() from a timer signal that lands anywhere, the stubs and
#    both trampolines' fast and general paths included, reaches main every
#    time (a tiny ring that may not grow sends many exits to the general
#    path; 300 nested calls overflow the shadow stack);
#  - gdb's bt at a breakpoint in a hooked function shows its caller and
#    main (when gdb is installed).
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
cc -O1 -g -rdynamic -o "$WORK/hook_bt" "$HOOKLIBS/hook_bt.c" -L"$WORK" \
	-lhookt -Wl,-rpath,"$WORK"
hook_same walk "$WORK/hook_bt" walk
expect_eq "callers seen from the callback" "bt_cb bt_outer main _start" \
	"$(cat "$WORK/walk.mxprof.txt")"
# The ring drops most records here: only the unwinding is checked.
"$WORK/hook_bt" sample 2000000 >sample.plain.txt
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/s.json" MXPROF_HOOK="$HOOK_SPEC" \
	MXPROF_BUFFER_KB=64 MXPROF_BUFFER_MAX_KB=64 LD_PRELOAD="$PRELOAD" \
	"$WORK/hook_bt" sample 2000000 >sample.mxprof.txt 2>sample.err || true
cat sample.err
diff sample.plain.txt sample.mxprof.txt || fail "a sample did not reach main"
if ! command -v gdb >/dev/null; then
	skip_part "the gdb check (gdb is not installed)"
	exit 0
fi
gdb -q -batch -ex 'set breakpoint pending on' -ex 'break ht_add' -ex run \
	-ex bt --args env MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/g.json" \
	MXPROF_HOOK="$HOOK_SPEC" LD_PRELOAD="$PRELOAD" "$WORK/hook_bt" gdb \
	>gdb.txt 2>&1 || true
grep '^#' gdb.txt
grep -Eq '^#0 .*\<ht_add \(' gdb.txt || fail "gdb did not stop in ht_add"
grep -Eq '^#[0-9]+ .*\<bt_add \(' gdb.txt || fail "gdb's bt misses bt_add"
grep -Eq '^#[0-9]+ .*\<main \(' gdb.txt || fail "gdb's bt misses main"

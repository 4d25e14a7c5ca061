# Stack switching under a hooked call (swapcontext coroutines): ht_call
# starts a coroutine that calls ht_call and switches back inside it, so
# the outer ht_call returns first while the inner one is suspended on the
# coroutine's stack. The shadow stack drops the inner frame then (as it
# would a frame longjmp skipped) and keeps a copy; when the coroutine is
# resumed and its ht_call returns, that copy gives the caller's address.
# The program's output is the same as without mxprof; the resumed calls
# are not timed (their spans would not nest), and one line says so.
# 50 rounds: 50 ht_call (the outer ones), 50 ht_add.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
hook_same co "$WORK/hook_main_plain" coroutine 50 2>err.txt
cat err.txt
s=$WORK/co.summary.json
expect_eq "ht_call" 50 "$(span "$s" 'C API (libhookt.so)/ht_call')"
expect_eq "ht_add" 50 "$(span "$s" 'C API (libhookt.so)/ht_add')"
expect_eq "lines about stack switching" 1 \
	"$(grep -c 'switched stacks' err.txt)"

# 16 threads call a hooked function 2000 times each; every thread has its
# own shadow stack and ring. Exactly 32000 slices on 16 threads.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
hook_same thr "$WORK/hook_main_plain" threads 16 2000
s=$WORK/thr.summary.json
expect_eq "ht_add" 32000 "$(span "$s" 'C API (libhookt.so)/ht_add')"
expect_eq "threads with slices" 16 \
	"$(jget "$s" 'sum(1 for t in d["threads"].values() if t["spans"] == 2000)')"

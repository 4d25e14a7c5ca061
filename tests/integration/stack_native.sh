# Native call stacks (MXPROF_STACKS): known chains down to a hooked zlib
# call, with the exact frames each event's "sf" names in stackFrames, and
# the call-site rows of the tables:
#  - main -> outer_fn -> inner_fn -> crc32 (static functions, named from
#    the executable's symbol table), 3 calls: the site is inner_fn;
#  - two threads: thread_fn -> inner_fn -> crc32, 4 calls each;
#  - a library loaded with dlopen: dl_outer -> dl_inner -> crc32;
#  - a forked child: child_fn -> inner_fn -> crc32, in the child's file;
#  - C++: demangled methods and templates, the stacks right after each
#    of 3 exceptions thrown past the hooked call's caller;
#  - MXPROF_STACKS=2 (and mxprof run --stacks 2) keeps 2 frames;
#    MXPROF_STACKS=0 writes no stacks.
# Every run's output is the same as without mxprof.
. "$ROOT/tests/integration/lib.sh"
SRC=$ROOT/tests/programs/stacks
cc -O1 -g -o "$WORK/stack_chain" "$SRC/stack_chain.c" -lz -ldl -lpthread
cc -O1 -g -shared -fPIC -o "$WORK/libstk_dl.so" "$SRC/stack_dl.c" -lz

# run NAME DEPTH ARGS...: runs stack_chain without and with mxprof.
run() {
	local name=$1 depth=$2
	shift 2
	"$@" >"$WORK/$name.plain.txt"
	MXPROF_STACKS=$depth MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$name.json" \
		MXPROF_HOOK='libz.so*:crc32' LD_PRELOAD="$PRELOAD" \
		"$@" >"$WORK/$name.mxprof.txt"
	diff "$WORK/$name.plain.txt" "$WORK/$name.mxprof.txt" ||
		fail "$name: output differs under mxprof"
}
stacks() { python3 "$ROOT/tests/tools/stackcheck.py" "$@"; }
P=stack_chain

run chain 16 "$WORK/stack_chain" chain
tracesummary "$WORK/chain.json" >/dev/null
expect_eq "chain" "3 crc32 <- inner_fn [$P] <- outer_fn [$P] <- main [$P]" \
	"$(stacks "$WORK/chain.json" 3)"
expect_eq "chain: call sites" 3 \
	"$(row_count "$WORK/chain.stats.txt" 'Call Sites: C API (libz.so.1)' \
		'crc32 @ inner_fn')"
expect_eq "chain: the C API row still counts every call" 3 \
	"$(row_count "$WORK/chain.stats.txt" 'C API (libz.so.1)' crc32)"

run threads 16 "$WORK/stack_chain" threads
expect_eq "threads" "8 crc32 <- inner_fn [$P] <- thread_fn [$P]" \
	"$(stacks "$WORK/threads.json" 2)"
expect_eq "threads: two threads" 2 "$(jget "$WORK/threads.json" \
	'len({e["tid"] for e in d["traceEvents"] if "sf" in e})')"

run dl 16 "$WORK/stack_chain" dlopen "$WORK/libstk_dl.so"
expect_eq "dlopen" \
	"2 crc32 <- dl_inner [libstk_dl.so] <- dl_outer [libstk_dl.so] <- main [$P]" \
	"$(stacks "$WORK/dl.json" 3)"
expect_eq "dlopen: call sites" 2 \
	"$(row_count "$WORK/dl.stats.txt" 'Call Sites: C API (libz.so.1)' \
		'crc32 @ dl_inner')"

# GCC 12's ASan allocator is not fork-safe: a forked child's drain thread
# can wait forever on an allocator lock the parent held at the fork.
if [ "${SANITIZER:-}" != asan ]; then
	run fork 16 "$WORK/stack_chain" fork
	child=$(ls "$WORK"/fork.*.json)
	expect_eq "fork: the child's stacks" \
		"5 crc32 <- inner_fn [$P] <- child_fn [$P] <- main [$P]" \
		"$(stacks "$child" 3)"
	expect_eq "fork: the parent made no call" "" \
		"$(stacks "$WORK/fork.json")"
else
	skip_part "the fork check (ASan's allocator is not fork-safe)"
fi

run depth2 2 "$WORK/stack_chain" chain
expect_eq "MXPROF_STACKS=2" "3 crc32 <- inner_fn [$P] <- outer_fn [$P]" \
	"$(stacks "$WORK/depth2.json")"
# mxprof run --stacks N is MXPROF_STACKS=N.
mxprof_command
MXPROF_HOOK='libz.so*:crc32' "$MX" run --stacks 2 -o "$WORK/run.json" -- \
	"$WORK/stack_chain" chain >"$WORK/run.txt"
diff "$WORK/chain.plain.txt" "$WORK/run.txt" || fail "mxprof run: output differs"
expect_eq "mxprof run --stacks 2" "3 crc32 <- inner_fn [$P] <- outer_fn [$P]" \
	"$(stacks "$WORK/run.json")"
run off 0 "$WORK/stack_chain" chain
expect_eq "MXPROF_STACKS=0: no stackFrames" False \
	"$(jget "$WORK/off.json" '"stackFrames" in d')"
expect_eq "MXPROF_STACKS=0: no call sites" "" \
	"$(grep 'Call Sites' "$WORK/off.stats.txt" || true)"

if ! command -v g++ >/dev/null; then
	skip_part "the C++ check (g++ is not installed)"
	exit 0
fi
g++ -O1 -g -o "$WORK/stack_cxx" "$SRC/stack_cxx.cpp" -lz
run cxx 8 "$WORK/stack_cxx"
X=stack_cxx
expect_eq "C++" "1 crc32 <- unsigned long shapes::checksum<int>(int) [$X] <- main [$X] <- _start [$X]
3 crc32 <- unsigned long shapes::checksum<int>(int) [$X] <- shapes::Grid::fill(int) [$X] <- main [$X] <- _start [$X]" \
	"$(stacks "$WORK/cxx.json" 0 "$X")"

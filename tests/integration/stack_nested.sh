# Call stacks of hooked calls nested in hooked calls (MXPROF_STACKS=16):
# stack_nested chain runs main -> p_1 -> ... -> p_14 -> nest_5 -> nest_6
# -> nest_7 -> nest_8, the nest_* in libstknest.so calling each other
# through its PLT, all four hooked. Each call's caller's return address is
# then in mxprof's shadow frame, not on the stack, and the walk must go
# through it:
#  - the innermost call, nest_8, in 3 other hooked calls, gets all 16
#    frames, the very frames gdb's `bt` shows in nest_8 (frames #1 to #16,
#    without mxprof), or where gdb is not installed, the frames the
#    program is known to have; the outer calls get theirs too;
#  - the same with both objects built with frame pointers (-O0: %rbp
#    based frames above the hooked calls) and without (-O2);
#  - nest_8 called from the same place with the same stack pointer by
#    turns through two callers (stack_nested alike), or in a hooked call
#    made from two places (stack_nested under), gets each caller's stack
#    each time: a
#    stack reused from the last capture there must be the one a walk
#    finds;
#  - strace (where installed): the capture makes no system call, so the
#    main thread's rt_sigprocmask, mincore, msync, read and write count
#    as much for 100 nested calls as for 3000 (12,000 stacks).
# Every run's output is the same as without mxprof.
. "$ROOT/tests/integration/lib.sh"
SRC=$ROOT/tests/programs/stacks
stacks() { python3 "$ROOT/tests/tools/stackcheck.py" "$@"; }
# names TRACE EVENT [N]: the names of the first N (default all) frames
# of EVENT's stacks, on one line.
names() {
	stacks "$1" | awk -v ev="$2" -v max="${3:-0}" '$2 == ev {
		n = split($0, f, " <- ")
		s = ""
		for (i = 2; i <= n && (max == 0 || i <= max + 1); i++) {
			sub(/ \[[^]]*\]$/, "", f[i])
			s = s (i > 2 ? " " : "") f[i]
		}
		print s
	}'
}

L=libstknest.so
P=stack_nested
# by_turns MODE: runs "$D/$P MODE 1000" without mxprof and with it
# (MXPROF_STACKS=16), fails unless the outputs are the same, and writes
# nest_8's stacks (4 frames) with their counts, by their frames, to
# $D/MODE.txt.
by_turns() {
	"$D/$P" "$1" 1000 >"$D/plain.txt"
	MXPROF_STACKS=16 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$D/$1.json" \
		MXPROF_HOOK="$L:nest_*" LD_PRELOAD="$PRELOAD" \
		"$D/$P" "$1" 1000 >"$D/mx.txt"
	diff "$D/plain.txt" "$D/mx.txt" || fail "$opt: $1: output differs"
	stacks "$D/$1.json" 4 | grep ' nest_8 ' | sort -k2 >"$D/$1.txt"
}
outer="p_14 p_13 p_12 p_11 p_10 p_9 p_8 p_7 p_6 p_5 p_4 p_3 p_2 p_1"
for opt in O2 O0; do
	D=$WORK/$opt
	mkdir -p "$D"
	cc -"$opt" -g -shared -fPIC -o "$D/$L" "$SRC/stack_nested_lib.c"
	cc -"$opt" -g -o "$D/$P" "$SRC/stack_nested.c" -L"$D" -lstknest \
		-Wl,-rpath,"$D"
	"$D/$P" chain >"$D/plain.txt"
	MXPROF_STACKS=16 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$D/n.json" \
		MXPROF_HOOK="$L:nest_*" LD_PRELOAD="$PRELOAD" \
		"$D/$P" chain >"$D/mx.txt"
	diff "$D/plain.txt" "$D/mx.txt" || fail "$opt: output differs"
	tracesummary "$D/n.json" >/dev/null

	# What nest_8 sees: gdb's backtrace, frames 1 to 16.
	if command -v gdb >/dev/null; then
		gdb -nx -batch -ex 'set breakpoint pending on' \
			-ex 'break nest_8' -ex run -ex 'bt 17' \
			--args "$D/$P" chain >"$D/gdb.txt" 2>&1 </dev/null ||
			true
		want=$(sed -n 's/^#\([0-9]*\) .* in \([^ ]*\) (.*/\1 \2/p; s/^#\(0\)  \([^ ]*\) (.*/\1 \2/p' \
			"$D/gdb.txt" | awk '$1 >= 1 && $1 <= 16 { print $2 }' |
			paste -sd ' ' -)
		expect_eq "$opt: gdb shows 16 frames above nest_8" 16 \
			"$(echo $want | wc -w)"
	else
		skip_part "the comparison with gdb (not installed): the known frames instead"
		want=$(echo nest_7 nest_6 nest_5 $outer | cut -d' ' -f1-16)
	fi
	expect_eq "$opt: nest_8, in 3 hooked calls: all 16 frames" \
		"$want" "$(names "$D/n.json" nest_8)"
	expect_eq "$opt: nest_8's stack, twice, with its frames' objects" \
		"2 nest_8 <- nest_7 [$L] <- nest_6 [$L] <- nest_5 [$L] <- p_14 [$P]" \
		"$(stacks "$D/n.json" 4 | grep ' nest_8 ')"
	expect_eq "$opt: nest_7, in 2" \
		"nest_6 nest_5 $outer" \
		"$(names "$D/n.json" nest_7)"
	expect_eq "$opt: nest_6, in 1" \
		"nest_5 $outer main" \
		"$(names "$D/n.json" nest_6)"
	expect_eq "$opt: nest_5, in none" \
		"$outer main" "$(names "$D/n.json" nest_5 15)"

	by_turns alike
	expect_eq "$opt: one place, two callers by turns: each its own stack" \
		"500 nest_8 <- same [$P] <- mid [$P] <- a_1 [$P] <- main [$P]
500 nest_8 <- same [$P] <- mid [$P] <- a_2 [$P] <- main [$P]" \
		"$(cat "$D/alike.txt")"
	by_turns under
	expect_eq "$opt: one place in two hooked calls by turns: each its own stack" \
		"500 nest_8 <- same [$P] <- mid [$P] <- nest_via [$L] <- u_1 [$P]
500 nest_8 <- same [$P] <- mid [$P] <- nest_via [$L] <- u_2 [$P]" \
		"$(cat "$D/under.txt")"
done

if ! command -v strace >/dev/null; then
	skip_part "the system call count (strace is not installed)"
	exit 0
fi
# count N: the main thread's calls of the system calls a stack walk must
# not make, in stack_nested bench 4 N 1 (4 N nested calls, each with its
# stack), under strace.
count() {
	rm -rf "$WORK/st" && mkdir "$WORK/st"
	strace -f -ff -o "$WORK/st/t" -e trace=rt_sigprocmask,mincore,msync,read,write \
		env MXPROF_STACKS=32 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/st.json" \
		MXPROF_HOOK="$L:nest_*" LD_PRELOAD="$PRELOAD" \
		"$WORK/O2/$P" bench 4 "$1" 1 >"$WORK/st.out" 2>"$WORK/st.err" ||
		fail "strace: $(tail -1 "$WORK/st.err")"
	# The first file is the first process's (env, then the program).
	first=$(ls "$WORK/st" | sort -t. -k2 -n | head -1)
	grep -c -E '^(rt_sigprocmask|mincore|msync|read|write)\(' \
		"$WORK/st/$first" || true
}
few=$(count 100)
many=$(count 3000)
expect_eq "system calls of the main thread: as many for 12000 stacks as for 400" \
	"$few" "$many"
expect_eq "stacks: every call of the bench has one" 12000 \
	"$(stacks "$WORK/st.json" 1 | awk '{ n += $1 } END { print n }')"

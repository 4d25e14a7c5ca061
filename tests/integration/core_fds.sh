# A program that closes every descriptor it did not open and reuses the
# numbers (tests/programs/core_fds.c) keeps its pipe and files to itself:
# mxprof's wake-ups and journal writes never land in them, its drain never
# reads the program's pipe, and the trace still has every task (100
# before the close, 1000 after, with 3 dump signals per round).
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_fds
cd "$WORK"
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/t.json" LD_PRELOAD="$PRELOAD" \
	"$prog" "$WORK" 3 >out.txt
expect_eq "pipe" "pipe 36 0123456789abcdefghijklmnopqrstuvwxyz" "$(cat out.txt)"
want=$(seq 0 9 | sed 's/^/line /')
for i in 0 1 2 3; do
	expect_eq "own$i.txt" "$want" "$(cat own$i.txt)"
done
tracesummary t.json >s.json
expect_eq "tasks" 1100 "$(jget s.json 'd["spans"]["fds/work"]')"
expect_eq "dropped" 0 "$(jget s.json 'd["dropped"]')"

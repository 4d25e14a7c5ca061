# exec keeps the pid and replaces the image: a process that execs itself
# 4 times (5 images, through execv, execvp, execve, execl and execlp),
# 1000 tasks per image, leaves one trace and one set of tables holding all
# 5000 tasks on one timeline, and ends as it does without mxprof (same
# output, status 0).
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/exec_chain
cd "$WORK"

"$prog" 5 1000 | sed 's/pid [0-9]*/pid N/' >plain.txt
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/chain.json" LD_PRELOAD="$PRELOAD" \
	"$prog" 5 1000 >out.txt 2>err.txt || fail "exit status $?: $(cat err.txt)"
pid=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' out.txt)
expect_eq "output" "$(cat plain.txt)" "$(sed 's/pid [0-9]*/pid N/' out.txt)"
expect_eq "stderr" "" "$(cat err.txt)"
tracesummary chain.json >sum.json
expect_eq "tasks in the trace" "{'image/step': 5000}" "$(jget sum.json 'd["spans"]')"
expect_eq "one process" "[$pid]" "$(jget sum.json 'd["pids"]')"
expect_eq "tasks in the tables" 5000 "$(row_count chain.stats.txt image step)"
expect_eq "files left" "chain.json chain.stats.txt" "$(ls chain* | tr '\n' ' ' | sed 's/ $//')"
# The images follow one another on the timeline: no slice starts before
# the previous image's last one.
expect_eq "slices in order" True "$(python3 -c '
import json, sys
ev = [e for e in json.load(open("chain.json"))["traceEvents"] if e["ph"] == "X"]
ts = [e["ts"] for e in ev]
print(ts == sorted(ts) and ts[-1] - ts[0] > 0)')"

# mxprof blocks its dump signal in the program's threads; an image exec'ed
# without mxprof must not inherit that mask (SIGUSR1 is bit 0x200).
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/mask.json" LD_PRELOAD="$PRELOAD" \
	sh -c 'grep SigBlk /proc/self/status; exec env -u LD_PRELOAD grep SigBlk /proc/self/status' >mask.txt
expect_eq "dump signal blocked under mxprof, not after exec" \
	"SigBlk:	0000000000000200 SigBlk:	0000000000000000" "$(cut -f1- mask.txt | tr '\n' ' ' | sed 's/ $//')"

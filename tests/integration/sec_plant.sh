# Another user who can write the output folder replaces the journal with a
# FIFO or a link while the program runs: the program never waits on it
# and never writes through it. It ends as it does without mxprof (its
# output, status 3), in a bounded time (60 s: it takes well under a
# second).
#  - after the program closed its descriptors: mxprof's live in the
#    drain thread's own descriptor table, so the journal stays open and
#    whole; the trace is written from it, no line, and the planted file
#    is left alone;
#  - before an exec (the next image reads the journal's origin and
#    continues it): one line.
# Runs in a private mount namespace (a tmpfs for its files) where the
# machine allows one (root, or an unprivileged user namespace).
. "$ROOT/tests/integration/lib.sh"
if [ -z "${SEC_INNER:-}" ]; then
	if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
		exec env SEC_INNER=1 unshare -m --propagation private bash "$0"
	elif unshare -r -m true 2>/dev/null; then
		exec env SEC_INNER=1 unshare -r -m --propagation private bash "$0"
	fi
	echo "note: no private mount namespace here; running as is"
else
	mkdir -p "$WORK/ns"
	mount -t tmpfs -o mode=700 mxprof-plant "$WORK/ns" ||
		skip "cannot mount a tmpfs in the private mount namespace"
	WORK=$WORK/ns
fi
command -v mkfifo >/dev/null || skip "no mkfifo"
prog=$BUILD/programs/sec_plant
cd "$WORK"
printf 'victim\n' >victim

# plant NAME MODE WHAT LINES: runs the program in folder NAME, replaces
# its journal with WHAT (fifo or link) when it is ready; LINES lines on
# stderr.
plant() {
	mkdir "$1"
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$1/t.json" LD_PRELOAD="$PRELOAD" \
		"$prog" "$WORK/$1" "$2" >"$1.out" 2>"$1.err" &
	local pid=$! i=0
	wait_until -p "$pid" -t 60 "$1: ready" "[ -e $1/ready ]"
	rm "$1/t.json.journal"
	case $3 in
	fifo) mkfifo "$1/t.json.journal" ;;
	link) ln -s "$WORK/victim" "$1/t.json.journal" ;;
	esac
	touch "$1/go"
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 6000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		wait "$pid" || true
		fail "$1: the program hung (killed after 60 s): $(cat "$1.err")"
	fi
	rc=0
	wait "$pid" || rc=$?
	expect_eq "$1: exit status" 3 "$rc"
	expect_eq "$1: output" done "$(cat "$1.out")"
	[ "$(wc -l <"$1.err")" = "$4" ] || fail "$1: not $4 lines: $(cat "$1.err")"
	expect_eq "victim unchanged" victim "$(cat victim)"
}

# The program's close reaches none of mxprof's descriptors: trace and
# tables hold every task, the planted file is still there, untouched.
for what in fifo link; do
	plant ${what}_close close $what 0
	expect_eq "${what}_close: tables" 200 "$(row_count ${what}_close/t.stats.txt plant work)"
	tracesummary ${what}_close/t.json >s.json
	expect_eq "${what}_close: trace" 200 "$(jget s.json 'd["spans"]["plant/work"]')"
	case $what in
	fifo) [ -p fifo_close/t.json.journal ] || fail "the FIFO was removed" ;;
	link) [ -L link_close/t.json.journal ] || fail "the link was removed" ;;
	esac
done

# Before an exec: the next image starts a new timeline, in a new journal
# that replaces the FIFO or the link; its trace and tables hold its tasks.
for what in fifo link; do
	plant ${what}_exec exec $what 1
	expect_eq "${what}_exec: message" \
		"mxprof: cannot continue the timeline of $WORK/${what}_exec/t.json after exec: its journal is not this process's; it starts again here" \
		"$(cat ${what}_exec.err)"
	tracesummary ${what}_exec/t.json >s.json
	expect_eq "${what}_exec: tasks" 100 "$(jget s.json 'd["spans"]["plant/work"]')"
done

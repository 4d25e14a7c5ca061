# A crash in the first milliseconds of recording keeps every record that
# was drained. The journal's first pass used to create the file and then
# stall in fcntl(F_DUPFD_CLOEXEC, 512) for tens of milliseconds (the
# kernel waits for an RCU grace period to grow the descriptor table of a
# process with threads) before writing its header: a crash then left an
# empty journal. Now the table is grown at load, while the process has one
# thread, and the header is written before the descriptor moves.
# Checks: the table is already grown when main() starts; a program that
# records 20 steps and aborts a few milliseconds after it started leaves
# the trace with every record (the final dump on SIGABRT), and no journal.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
cd "$WORK"
ulimit -c 0

size=$(LD_PRELOAD="$PRELOAD" MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/cat.json" \
	cat /proc/self/status | sed -n 's/^FDSize:\s*//p')
[ "$size" -ge 576 ] || fail "descriptor table at start: $size slots, expected 576 or more"
echo "ok: descriptor table at start = $size"

set +e
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/early.json" LD_PRELOAD="$PRELOAD" \
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:handle_abort=0 \
	"$BUILD/programs/crash_tasks" -n 20 abort >pid.txt 2>/dev/null
rc=$?
set -e
expect_eq "status" 134 "$rc"
expect_eq "files left" "early.json early.stats.txt" "$(echo early*)"
tracesummary early.json >sum.json
expect_eq "spans" "{'crash/epoch': 2, 'crash/inner': 20, 'crash/step': 20, 'crash/work': 10}" \
	"$(jget sum.json 'dict(sorted(d["spans"].items()))')"
pid=$(sed -n 's/^pid //p' pid.txt)
# The status file a process that died leaves behind.
if [ -n "${XDG_RUNTIME_DIR:-}" ]; then
	rm -f "$XDG_RUNTIME_DIR/mxprof/$pid.status"
else
	rm -f "/tmp/mxprof-$(id -u)/$pid.status"
fi

# mxprof dump --stacks on a Python program whose main thread is stuck in
# queue.get() and whose worker sleeps in time.sleep: each thread's text
# shows the exact line of the script it waits on, as a traceback does
# (most recent call last), with the queue's and threading's frames below
# it; for /usr/bin/python3 and the python3 on PATH (a pyenv build) when it
# is another. Then a program that took the dump signal: one line.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
cp "$ROOT/tests/programs/threads/tn_queue.py" "$WORK/prog.py"
cd "$WORK"

# check PY TAG: the stacks of prog.py run by PY.
check() {
	local py=$1 tag=$2 pid
	rm -f "ready.$tag"
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$tag.json" LD_PRELOAD="$PRELOAD" \
		"$py" prog.py "ready.$tag" >"$tag.out" 2>"$tag.err" &
	pid=$!
	wait_until -p "$pid" "$tag: the program to start" '[ -e "ready.$tag" ]'
	# Both threads wait: the main one in a futex, the worker asleep.
	wait_until -p "$pid" "$tag: both threads to wait" \
		"[ \"\$(cat /proc/$pid/task/*/syscall | grep -cE '^(202|230|35) ')\" -ge 3 ]"
	"$MX" dump --stacks "$pid" >"$tag.stacks.txt"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	awk -v n="$pid" '$1 == "Thread" && $2 == n {on = 1; next} /^Thread /{on = 0} on && /File "/' \
		"$tag.stacks.txt" >"$tag.main.txt"
	expect_eq "$tag: main thread, the script's frames" \
		"  File \"$WORK/prog.py\", line 20, in <module>|  File \"$WORK/prog.py\", line 17, in main" \
		"$(grep "prog.py" "$tag.main.txt" | paste -sd'|')"
	expect_eq "$tag: main thread, queue.get under main" \
		"in Queue.get" "$(sed -n 3p "$tag.main.txt" | grep -o 'in Queue.get$')"
	expect_eq "$tag: main thread, waiting in Condition.wait" \
		"in Condition.wait" "$(sed -n 4p "$tag.main.txt" | grep -o 'in Condition.wait$')"
	expect_eq "$tag: the worker's line, innermost Python frame" \
		"  File \"$WORK/prog.py\", line 10, in worker" \
		"$(awk -v n="$pid" '$1 == "Thread" && $2 != n {on = 1; next} on && /File "/' \
			"$tag.stacks.txt" | tail -1)"
	expect_eq "$tag: threads" 2 "$(grep -c '^Thread ' "$tag.stacks.txt")"
	expect_eq "$tag: the main thread waits in a futex" 1 \
		"$(grep -c "^Thread $pid ([^)]*) waiting in futex:\$" "$tag.stacks.txt")"
}
check /usr/bin/python3 debian
other=$(command -v python3)
if [ "$(readlink -f "$other")" != "$(readlink -f /usr/bin/python3)" ]; then
	check "$other" pyenv
fi
echo "ok: stacks"

# A program that took the dump signal after mxprof loaded: one line.
cat >taker.py <<'PYEOF'
import os, signal, sys, time
signal.signal(signal.SIGUSR1, lambda *a: None)
open(sys.argv[1], 'w').close()
for i in range(6000):
    if os.path.exists(sys.argv[1] + '.stop'):
        break
    time.sleep(0.01)
PYEOF
MXPROF_AUTOSTART=1 MXPROF_OUTPUT=t.json LD_PRELOAD="$PRELOAD" \
	/usr/bin/python3 taker.py t.ready 2>t.err &
pid=$!
wait_until -p "$pid" "the taker to start" '[ -e t.ready ]'
set +e
"$MX" dump --stacks --timeout 60 "$pid" >t.out 2>t.cli.err
rc=$?
set -e
touch t.ready.stop
wait "$pid" || true
expect_eq "taken: exit" 1 "$rc"
expect_eq "taken: one line" 1 "$(wc -l <t.cli.err)"
grep -q "^mxprof dump: process $pid handles the dump signal 10 (SIGUSR1) itself" t.cli.err ||
	fail "taken: $(cat t.cli.err)"
echo "ok: taken"

# The hang trigger writes where every thread stands: a C program whose two
# threads deadlock (one of them inside a hooked call) and a Python program
# stuck in queue.get(), each in flight mode with MXPROF_TRIGGER=hang:2s.
# Exactly one hang file each, its text naming both lockers' stacks down to
# pthread_mutex_lock and the function that called it (the Python one: the
# script's lines, as a traceback gives them), the trace holding one
# "thread stack now" event per thread; the program is left as it was:
# still deadlocked or waiting, its sleeper never interrupted.
. "$ROOT/tests/integration/lib.sh"
SRC=$ROOT/tests/programs/threads
cc -O1 -g -shared -fPIC -o "$WORK/libtnlock.so" "$SRC/tn_lock_lib.c" -lpthread
cc -O1 -g -o "$WORK/tn_deadlock" "$SRC/tn_deadlock.c" -L"$WORK" -ltnlock \
	-Wl,-rpath,"$WORK" -lpthread
cp "$SRC/tn_hang.py" "$WORK/prog.py"
cd "$WORK"

pids=
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null || true; done' EXIT
# waiting PID NAME: thread NAME of process PID waits in a futex (202).
waiting() {
	local t
	for t in /proc/$1/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = "$2" ]; then
			case $(cat "$t/syscall" 2>/dev/null) in 202\ *) return 0 ;; esac
		fi
	done
	return 1
}
numbered() { # NAME: the numbered files beside NAME.json
	ls | grep "^$1\.[a-z]*\.[0-9]*\." | tr '\n' ' ' | sed 's/ $//'
}

# ---- C: two threads deadlocked, one inside the hooked lock_in_lib ----
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/dl.json" MXPROF_FLIGHT=30s \
	MXPROF_TRIGGER=hang:2s MXPROF_HOOK='libtnlock.so:lock_in_lib' \
	LD_PRELOAD="$PRELOAD" ./tn_deadlock "$WORK/ready" 5 >dl.out 2>dl.err &
pid=$!
pids="$pids $pid"
wait_until -p "$pid" "the program to start" '[ -e "$WORK/ready" ]'
wait_until -p "$pid" "the hang file" '[ -f dl.hang.1.stats.txt ]'
expect_eq "C: files" "dl.hang.1.json dl.hang.1.stacks.txt dl.hang.1.stats.txt" \
	"$(numbered dl)"
expect_eq "C: the line" 1 \
	"$(grep -c "^mxprof: hang trigger: wrote $WORK/dl.hang.1.json and $WORK/dl.hang.1.stats.txt: no record was drained for 2 s$" dl.err)"
expect_eq "C: stderr" 1 "$(grep -c . dl.err)"
# block NAME: the lines of thread NAME's stack in the text.
block() { awk -v n="($1)" '/^Thread /{on = ($3 == n)} on && NF' dl.hang.1.stacks.txt; }
expect_eq "lock_a: waits in a futex" 1 \
	"$(block lock_a | head -1 | grep -c '^Thread [0-9]* (lock_a) waiting in futex:$')"
expect_eq "lock_a: down to the lock and its caller" \
	"locker_a take_b pthread_mutex_lock" \
	"$(block lock_a | grep -E '^  (locker_a|take_b|pthread_mutex_lock) ' | awk '{print $1}' | xargs)"
expect_eq "lock_b: through the hooked call to the lock" \
	"locker_b (tn_deadlock)|lock_in_lib (libtnlock.so)|pthread_mutex_lock (libc.so.6)" \
	"$(block lock_b | grep -E '^  (locker_b|lock_in_lib|pthread_mutex_lock) ' | sed 's/^  //' | paste -sd'|')"
expect_eq "C: threads in the text" 4 "$(grep -c '^Thread ' dl.hang.1.stacks.txt)"
expect_eq "C: one event per thread" 4 \
	"$(jget dl.hang.1.json 'len([e for e in d["traceEvents"] if e.get("cat") == "thread_stack" and e["ph"] == "i"])')"
expect_eq "C: the trigger in the metadata" "hang|no record was drained for 2 s" \
	"$(jget dl.hang.1.json 'd["flight"]["trigger"] + "|" + d["flight"]["reason"]')"
expect_eq "C: the 5 calls before the hang" 5 \
	"$(jget dl.hang.1.json 'len([e for e in d["traceEvents"] if e.get("name") == "lock_in_lib" and e["ph"] == "X"])')"
rounds=$(wc -l <dl.out)
wait_until -p "$pid" "two more rounds of the sleeper" '[ "$(wc -l <dl.out)" -ge $((rounds + 2)) ]'
expect_eq "C: sleeper not interrupted" 0 "$(tail -1 dl.out | awk '{print $4}')"
waiting "$pid" lock_a || fail "lock_a no longer waits"
waiting "$pid" lock_b || fail "lock_b no longer waits"
kill -0 "$pid" || fail "the program ended"
expect_eq "C: still one hang file" "dl.hang.1.json dl.hang.1.stacks.txt dl.hang.1.stats.txt" \
	"$(numbered dl)"
echo "ok: C deadlock"

# ---- Python: the main thread stuck in queue.get() ----
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/py.json" MXPROF_FLIGHT=30s \
	MXPROF_TRIGGER=hang:2s MXPROF_HOOK='libz.so*:crc32' \
	LD_PRELOAD="$PRELOAD" /usr/bin/python3 prog.py "$WORK/pyready" >py.out 2>py.err &
pypid=$!
pids="$pids $pypid"
wait_until -p "$pypid" "the Python program to start" '[ -e "$WORK/pyready" ]'
wait_until -p "$pypid" "the hang file" '[ -f py.hang.1.stats.txt ]'
expect_eq "Python: files" "py.hang.1.json py.hang.1.stacks.txt py.hang.1.stats.txt" \
	"$(numbered py)"
awk -v n="$pypid" '$1 == "Thread" {on = ($2 == n)} on && /File "/' \
	py.hang.1.stacks.txt >main.txt
expect_eq "Python: the main thread's script lines" \
	"  File \"$WORK/prog.py\", line 24, in <module>|  File \"$WORK/prog.py\", line 21, in main" \
	"$(grep "prog.py" main.txt | paste -sd'|')"
expect_eq "Python: queue.get under main" "in Queue.get" \
	"$(sed -n 3p main.txt | grep -o 'in Queue.get$')"
expect_eq "Python: the worker's line" "  File \"$WORK/prog.py\", line 12, in worker" \
	"$(awk -v n="$pypid" '$1 == "Thread" {on = ($2 != n)} on && /File "/' py.hang.1.stacks.txt | tail -1)"
expect_eq "Python: crc32 calls in the window" 100 \
	"$(jget py.hang.1.json 'len([e for e in d["traceEvents"] if e.get("name") == "crc32" and e["ph"] == "X"])')"
kill -0 "$pypid" || fail "the Python program ended"
expect_eq "Python: stdout" "" "$(cat py.out)"
echo "ok: Python queue.get"

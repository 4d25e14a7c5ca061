# mxprof dump --stacks on a deadlocked C program: "lock_a" holds a and
# wants b (take_b), "lock_b" holds b and wants a inside a hooked library
# call (lock_in_lib), "sleeper" loops on poll and nanosleep. The text names
# both lockers' stacks down to pthread_mutex_lock and its caller, the
# hooked call included; the sleeper's calls never end with EINTR; the
# program is still deadlocked afterwards; the trace of the same dump holds
# one "thread stack now" event per thread, its stack in stackFrames.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
SRC=$ROOT/tests/programs/threads
cc -O1 -g -shared -fPIC -o "$WORK/libtnlock.so" "$SRC/tn_lock_lib.c" -lpthread
cc -O1 -g -o "$WORK/tn_deadlock" "$SRC/tn_deadlock.c" -L"$WORK" -ltnlock \
	-Wl,-rpath,"$WORK" -lpthread
cd "$WORK"

MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/dl.json" \
	MXPROF_HOOK='libtnlock.so:lock_in_lib' LD_PRELOAD="$PRELOAD" \
	./tn_deadlock "$WORK/ready" >out.txt 2>err.txt &
pid=$!
trap 'kill -9 $pid 2>/dev/null || true' EXIT
# waiting NAME: thread NAME of the program waits in a futex (202).
waiting() {
	local t
	for t in /proc/$pid/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = "$1" ]; then
			case $(cat "$t/syscall" 2>/dev/null) in 202\ *) return 0 ;; esac
		fi
	done
	return 1
}
wait_until -p "$pid" "the program to start" '[ -e "$WORK/ready" ]'
wait_until -p "$pid" "both lockers to block" 'waiting lock_a && waiting lock_b'
rounds_before=$(wc -l <out.txt)

"$MX" dump --stacks "$pid" >stacks.txt
# block NAME: the lines of thread NAME's stack in the text.
block() { awk -v n="($1)" '/^Thread /{on = ($3 == n)} on && NF' stacks.txt; }
block lock_a >a.txt
block lock_b >b.txt
expect_eq "lock_a: header" "Thread lock_a waiting in futex:" \
	"$(head -1 a.txt | awk '{$2 = ""; print}' | sed 's/  / /;s/(lock_a)/lock_a/')"
expect_eq "lock_a: down to the lock and its caller" \
	"locker_a take_b pthread_mutex_lock" \
	"$(grep -E '^  (locker_a|take_b|pthread_mutex_lock) ' a.txt | awk '{print $1}' | xargs)"
expect_eq "lock_b: header" "Thread lock_b waiting in futex:" \
	"$(head -1 b.txt | awk '{$2 = ""; print}' | sed 's/  / /;s/(lock_b)/lock_b/')"
expect_eq "lock_b: through the hooked call to the lock" \
	"locker_b (tn_deadlock)|lock_in_lib (libtnlock.so)|pthread_mutex_lock (libc.so.6)" \
	"$(grep -E '^  (locker_b|lock_in_lib|pthread_mutex_lock) ' b.txt | sed 's/^  //' | paste -sd'|')"
# The lock is the innermost named frame but the futex wait under it.
expect_eq "lock_b: pthread_mutex_lock right above the wait" \
	"pthread_mutex_lock (libc.so.6)" "$(tail -2 b.txt | head -1 | sed 's/^  //')"
expect_eq "sleeper: poll or sleep" 1 \
	"$(block sleeper | head -1 | grep -cE '^Thread [0-9]+ \(sleeper\) waiting in (poll|clock_nanosleep|nanosleep):$')"
expect_eq "threads in the text" 4 "$(grep -c '^Thread ' stacks.txt)"
expect_eq "mxprof's own threads are left out" 0 "$(grep -c '(mxprof-' stacks.txt)"
expect_eq "the text beside the trace" "$(cat stacks.txt)" "$(cat dl.stacks.txt)"
echo "ok: the stacks"

# The sleeper goes on, never interrupted; the lockers stay deadlocked.
wait_until -p "$pid" "two more rounds of the sleeper" \
	'[ "$(wc -l <out.txt)" -ge $((rounds_before + 2)) ]'
expect_eq "sleeper: no EINTR" 0 "$(tail -1 out.txt | awk '{print $4}')"
waiting lock_a || fail "lock_a no longer waits"
waiting lock_b || fail "lock_b no longer waits"
kill -0 "$pid" || fail "the program ended"
echo "ok: the program as it was"

# The trace of that dump: one instant per thread, with its stack.
expect_eq "events" 4 "$(jget dl.json 'len([e for e in d["traceEvents"] if e.get("cat") == "thread_stack" and e["ph"] == "i" and e["s"] == "t" and e["name"] == "thread stack now"])')"
# event TID: "state|syscall|frame <- frame ..." of thread TID's event.
event() {
	python3 - "$WORK/dl.json" "$1" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
e = [e for e in d["traceEvents"]
     if e.get("cat") == "thread_stack" and e["tid"] == int(sys.argv[2])][0]
names, i = [], str(e["sf"])
while i:
    names.append(d["stackFrames"][i]["name"])
    i = d["stackFrames"][i].get("parent")
print("%s|%s|%s" % (e["args"]["state"], e["args"]["syscall"], " <- ".join(names)))
PYEOF
}
tid_of() { awk -v n="($1)" '$1 == "Thread" && $3 == n {print $2}' stacks.txt; }
expect_eq "lock_b's event" \
	"waiting in futex|futex|pthread_mutex_lock <- lock_in_lib <- locker_b" \
	"$(event "$(tid_of lock_b)" | sed 's/ <- libc[^ ]*+0x[0-9a-f]*//g' |
		sed 's/|[^|]* <- pthread/|pthread/' | sed 's/ <- locker_b.*/ <- locker_b/')"
echo "ok: the trace"

# Errors: no such process, one without mxprof.
st() { set +e; "$@" >/dev/null 2>err2.txt; echo $?; set -e; }
sleep 30 &
plain=$!
expect_eq "without mxprof: exit" 1 "$(st "$MX" dump --stacks "$plain")"
grep -q "process $plain does not run under mxprof" err2.txt || fail "plain: $(cat err2.txt)"
kill "$plain"
wait "$plain" 2>/dev/null || true
expect_eq "no such process: exit" 1 "$(st "$MX" dump --stacks "$plain")"
expect_eq "no such process: message" "mxprof dump: no process with pid $plain" "$(cat err2.txt)"
echo "ok: errors"

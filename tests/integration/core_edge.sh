# The core's contracts at the edges, each on the real test program:
# exec, a storm of dump signals, an unwritable output folder, gzip output,
# a bad setting, the capture window, the timeline cap and MXPROF_SIGNAL.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_counts
expected=$("$prog" 2 500)
run() { env MXPROF_AUTOSTART=1 LD_PRELOAD="$PRELOAD" "$@"; }
# wait_loaded PID: until mxprof in PID has written its status file (the
# dump signal's handler is installed before that).
wait_loaded() {
	local st=/tmp/mxprof-$(id -u)/$1.status
	[ -n "${XDG_RUNTIME_DIR:-}" ] && st=$XDG_RUNTIME_DIR/mxprof/$1.status
	wait_until -p "$1" "mxprof to start in $1 ($st)" '[ -e "$st" ]'
}

# exec keeps the pid: the exec'ed image is the root and starts fresh; the
# shell before it wrote nothing.
mkdir ex && cd ex
run MXPROF_OUTPUT=t.json sh -c "exec '$prog' 2 500" >out.txt
expect_eq "exec: output" "$expected" "$(cat out.txt)"
expect_eq "exec: files" "t.json t.stats.txt" "$(ls | grep -v out.txt | tr '\n' ' ' | sed 's/ $//')"
tracesummary t.json >s
expect_eq "exec: steps" 1000 "$(jget s 'd["spans"]["core/step"]')"
cd ..

# fork + exec from a shell: the program is a descendant and writes its own
# t.<pid>.json (dash leaves through _exit, so it writes nothing itself).
mkdir fe && cd fe
run MXPROF_OUTPUT=t.json sh -c "'$prog' 2 500; true" >out.txt
child=$(ls t.*.json | grep -v '^t.json$')
tracesummary "$child" >s
expect_eq "fork+exec: child steps" 1000 "$(jget s 'd["spans"]["core/step"]')"
cd ..

# 200 dump signals while the program runs: its output is unchanged and the
# final files are complete and exact. MXPROF_OVERFLOW=block: while the drain
# writes one dump after another, a slow build (the sanitizers') can fill a
# thread's buffer, and the default would drop (and count) records.
mkdir storm && cd storm
mkdir sync
env MXPROF_AUTOSTART=1 LD_PRELOAD="$PRELOAD" MXPROF_OUTPUT=t.json MXPROF_OVERFLOW=block \
	"$prog" 2 20000 "$PWD/sync" >out.txt &
pid=$!
wait_until -p "$pid" "the program to reach half-way" '[ -e sync/half ]'
wait_loaded $pid
for _ in $(seq 200); do kill -USR1 $pid 2>/dev/null || break; done
touch sync/go
wait $pid || fail "storm: the program failed"
expect_eq "storm: output" "$("$prog" 2 20000)" "$(cat out.txt)"
tracesummary t.json >s
expect_eq "storm: steps" 40000 "$(jget s 'd["spans"]["core/step"]')"
cd ..

# An unwritable folder: one line, and everything lands in $TMPDIR.
mkdir ro && cd ro
export TMPDIR=$WORK/tmp && mkdir -p "$TMPDIR"
run MXPROF_OUTPUT=/proc/none/t.json "$prog" 2 500 >out.txt 2>err.txt
expect_eq "unwritable: output" "$expected" "$(cat out.txt)"
expect_eq "unwritable: stderr lines" 1 "$(wc -l <err.txt)"
grep -q "cannot write beside /proc/none/t.json" err.txt || fail "unwritable: $(cat err.txt)"
fallback=$(ls "$TMPDIR"/mxprof-??????/t.json)
tracesummary "$fallback" >s
expect_eq "unwritable: steps in $fallback" 1000 "$(jget s 'd["spans"]["core/step"]')"
unset TMPDIR
cd ..

# gzip: a valid gzip trace, and the tables beside it without .json.gz.
mkdir gz && cd gz
run MXPROF_OUTPUT=t.json.gz "$prog" 2 500 >/dev/null
gzip -t t.json.gz || fail "gz: not a valid gzip file"
tracesummary t.json.gz >s
expect_eq "gz: steps" 1000 "$(jget s 'd["spans"]["core/step"]')"
expect_eq "gz: table" 1000 "$(row_count t.stats.txt core step)"
cd ..

# A bad value: one line naming it, the program unchanged, the feature off.
mkdir bad && cd bad
run MXPROF_OUTPUT=t.json MXPROF_SIGNAL=bogus "$prog" 2 500 >out.txt 2>err.txt
expect_eq "bad signal: output" "$expected" "$(cat out.txt)"
expect_eq "bad signal: stderr" \
	"mxprof: MXPROF_SIGNAL='bogus' is not valid (accepted: USR1, USR2, HUP, PROF, WINCH, URG, PWR, RTMIN+N, the number of one of them or none); no dump signal" \
	"$(cat err.txt)"
run MXPROF_OUTPUT=t.json MXPROF_DRAIN_PERIOD_MS=0 MXPROF_BUFFER_KB=abc "$prog" 2 500 >out.txt 2>err.txt
expect_eq "two bad values: stderr lines" 2 "$(wc -l <err.txt)"
tracesummary t.json >s
expect_eq "two bad values: steps" 1000 "$(jget s 'd["spans"]["core/step"]')"
cd ..

# The capture window: a delay longer than the run records nothing, and a
# process that recorded nothing writes no files (one line says so).
mkdir win && cd win
run MXPROF_OUTPUT=t.json MXPROF_DELAY=1000 "$prog" 2 500 >/dev/null 2>err.txt
expect_eq "delay: files" "" "$(ls t.* 2>/dev/null || true)"
expect_eq "delay: the line" 1 "$(grep -c '^mxprof: nothing was recorded; ' err.txt)"
cd ..

# The timeline cap: the trace is cut and says so; the tables are complete.
mkdir cap && cd cap
run MXPROF_OUTPUT=t.json MXPROF_MAX_TRACE_MB=1 "$prog" 4 2000 >/dev/null
tracesummary t.json >s
expect_eq "cap: truncated flag" True "$(jget s 'd["top"]["mxprof"]["timelineTruncated"]')"
steps=$(jget s 'd["spans"].get("core/step", 0)')
[ "$steps" -lt 8000 ] || fail "cap: the trace has all $steps steps"
expect_eq "cap: table steps" 8000 "$(row_count t.stats.txt core step)"
cd ..

# MXPROF_SIGNAL=USR2 dumps on USR2, and leaves USR1 alone (it then kills,
# as it would without mxprof).
mkdir sig && cd sig
mkdir sync
env MXPROF_AUTOSTART=1 LD_PRELOAD="$PRELOAD" MXPROF_OUTPUT=t.json \
	MXPROF_SIGNAL=USR2 "$prog" 2 1000 "$PWD/sync" >/dev/null &
pid=$!
wait_until -p "$pid" "the program to reach half-way" '[ -e sync/half ]'
kill -USR2 $pid
wait_until -p "$pid" "the USR2 dump" '[ -e t.json ]'
tracesummary t.json >s
expect_eq "USR2 dump: steps at half-way" 1000 "$(jget s 'd["spans"]["core/step"]')"
kill -USR1 $pid
wait $pid && fail "USR1 did not terminate the program"
cd ..
echo "all edge checks passed"

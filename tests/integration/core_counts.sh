# A multi-threaded program with known numbers of tasks, events, frames,
# counter updates and markers runs under LD_PRELOAD with autostart:
#  - its own output is unchanged;
#  - a SIGUSR1 sent half-way gives a complete trace and tables with exactly
#    the first half, and recording goes on;
#  - at exit, the tables and the trace hold exactly the full counts, on the
#    right threads, properly nested;
#  - a forked child writes its own file and leaves the parent's intact.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_counts
T=4 N=1000 K=7

expected=$("$prog" $T $N - $K)

mkdir sync
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/core.json" LD_PRELOAD="$PRELOAD" \
	"$prog" $T $N "$WORK/sync" $K >out.txt &
pid=$!
wait_until -p "$pid" "the program to reach half-way" '[ -e sync/half ]'

status=/tmp/mxprof-$(id -u)/$pid.status
[ -n "${XDG_RUNTIME_DIR:-}" ] && status=$XDG_RUNTIME_DIR/mxprof/$pid.status
# The drain thread writes the status file when it starts, which may be
# after the program's threads reached half-way.
wait_until -p "$pid" "the status file $status" '[ -s "$status" ]'
grep -q '^dumps=0$' "$status" || fail "status file before the dump: $(cat "$status" 2>&1)"
kill -USR1 $pid
wait_until -p "$pid" "the dump signal's dump (dumps=1 in $status)" \
	"grep -q '^dumps=1$' \"\$status\" 2>/dev/null"
grep -qx "output=$WORK/core.json" "$status" || fail "status names $(grep output= "$status")"
cp core.json mid.json
cp core.stats.txt mid.stats.txt
touch sync/go
wait $pid || fail "the program failed under mxprof"

expect_eq "program output" "$expected" "$(cat out.txt)"
[ ! -e "$status" ] || fail "status file left behind"
[ ! -e core.json.journal ] || fail "journal left behind"

# Half-way: every thread stopped after N/2 iterations.
tracesummary mid.json >mid.sum
expect_eq "mid step spans" $((T * N / 2)) "$(jget mid.sum 'd["spans"]["core/step"]')"
expect_eq "mid ev spans" $((T * N / 2)) "$(jget mid.sum 'd["spans"]["Events/ev"]')"
expect_eq "mid frames" $((T * N / 20)) "$(jget mid.sum 'd["spans"]["core/frame"]')"
expect_eq "mid markers" $((T * 5)) "$(jget mid.sum 'd["instants"]["core/tick"]')"
expect_eq "mid counter updates" $((T * N / 2)) "$(jget mid.sum 'len(d["counters"]["core/items"])')"
expect_eq "mid table step" $((T * N / 2)) "$(row_count mid.stats.txt core step)"

# At exit: everything.
tracesummary core.json >full.sum
expect_eq "step spans" $((T * N)) "$(jget full.sum 'd["spans"]["core/step"]')"
expect_eq "inner spans" $((T * N)) "$(jget full.sum 'd["spans"]["core/inner"]')"
expect_eq "ev spans" $((T * N)) "$(jget full.sum 'd["spans"]["Events/ev"]')"
expect_eq "frames" $((T * N / 10)) "$(jget full.sum 'd["spans"]["core/frame"]')"
expect_eq "markers" $((T * N / 100)) "$(jget full.sum 'd["instants"]["core/tick"]')"
expect_eq "counter updates" $((T * N)) "$(jget full.sum 'len(d["counters"]["core/items"])')"
expect_eq "counter last value" $((T * N)) "$(jget full.sum 'max(d["counters"]["core/items"])')"
expect_eq "dropped" 0 "$(jget full.sum 'd["dropped"]')"
expect_eq "nesting depth (frame > step > inner > ev)" 4 "$(jget full.sum 'max(d["max_depth"].values())')"
# Four worker threads, each with exactly its own spans, named in metadata.
expect_eq "threads with spans" "$T" "$(jget full.sum 'sum(1 for t in d["threads"].values() if t["spans"])')"
expect_eq "spans per thread" "$((3 * N + N / 10))" \
	"$(jget full.sum '",".join(sorted(set(str(t["spans"]) for t in d["threads"].values() if t["spans"])))')"
expect_eq "process" "core_counts" "$(jget full.sum 'd["process_names"]["'$pid'"]')"

expect_eq "table step" $((T * N)) "$(row_count core.stats.txt core step)"
expect_eq "table inner" $((T * N)) "$(row_count core.stats.txt core inner)"
expect_eq "table frame" $((T * N / 10)) "$(row_count core.stats.txt core frame)"
expect_eq "table ev" $((T * N)) "$(row_count core.stats.txt Events ev)"
expect_eq "table items" $((T * N)) "$(row_count core.stats.txt 'core (counters)' items)"
expect_eq "table tick" $((T * N / 100)) "$(row_count core.stats.txt 'core (markers)' tick)"
grep -q '^Dropped records: 0$' core.stats.txt || fail "no dropped line"

# The forked child: its own file, only its own 7 steps.
child=$(ls core.*.json | grep -v '^core.json$')
[ "$(echo "$child" | wc -l)" = 1 ] || fail "expected one child file, got: $child"
tracesummary "$child" >child.sum
expect_eq "child step spans" $K "$(jget child.sum 'd["spans"]["core/step"]')"
expect_eq "child span kinds" 1 "$(jget child.sum 'len(d["spans"])')"
expect_eq "child table" $K "$(row_count "${child%.json}.stats.txt" core step)"
echo "all core checks passed"

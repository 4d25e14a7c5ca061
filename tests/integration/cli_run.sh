# mxprof run: exit statuses as a shell reports them, options turned into
# MXPROF_* variables, LD_PRELOAD appended, signals forwarded, the summary.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

st() { set +e; "$@"; echo $? > rc.txt; set -e; cat rc.txt; }

expect_eq "exit 3" 3 "$(st "$MX" run -q -o a.json -- sh -c 'exit 3' 2>/dev/null)"
expect_eq "SIGTERM" 143 "$(st "$MX" run -q -o b.json -- sh -c 'kill -TERM $$' 2>/dev/null)"
expect_eq "SIGKILL" 137 "$(st "$MX" run -q -o c.json -- sh -c 'kill -KILL $$' 2>/dev/null)"
expect_eq "not found" 127 "$(st "$MX" run -q -- ./no-such-program 2>/dev/null)"
expect_eq "program status" 5 "$(st "$MX" run -q -o d.json -- "$PROG" -u 10 -x 5 2>/dev/null)"
expect_eq "program steps" 10 "$(row_count d.stats.txt cli step)"

# A bad option is refused before anything is launched.
for bad in "--bogus" "--delay abc" "--duration -1" "--stacks x" \
	"--signal NOPE" "--signal SEGV" "--signal 9" "--overflow maybe" "--max-trace-mb 1.5" \
	"--trace cuda,bogus" "--top x"; do
	# shellcheck disable=SC2086
	rc=$(st "$MX" run $bad -- touch launched 2>err.txt)
	expect_eq "bad option '$bad'" 2 "$rc"
	grep -q '^usage: mxprof run' err.txt || fail "no usage line for $bad"
	[ ! -e launched ] || fail "$bad launched the program"
done
expect_eq "no command" 2 "$(st "$MX" run -q 2>/dev/null)"

# Every option sets its variable; LD_PRELOAD keeps what was there first.
export VARS="AUTOSTART|CAPTURE_NVTX|CONTINUOUS_DUMP|DELAY|DUMP_PERIOD|DURATION|HOOK|MAX_TRACE_MB|OUTPUT|OVERFLOW|SIGNAL|STACKS|TRACE"
"$MX" run -q -o 'e-%p.json' --trace api,nvtx --hook 'libz*:deflate*' \
	--delay 0.5 --duration 2 --capture-nvtx step --stacks 4 \
	--signal USR2 --overflow block --max-trace-mb 64 --continuous-dump \
	--dump-period 1.5 --no-autostart -- \
	sh -c 'env | grep -E "^MXPROF_($VARS)=" | sort > env.txt' 2>/dev/null
cat > want.txt <<'WANT'
MXPROF_AUTOSTART=0
MXPROF_CAPTURE_NVTX=step
MXPROF_CONTINUOUS_DUMP=1
MXPROF_DELAY=0.5
MXPROF_DUMP_PERIOD=1.5
MXPROF_DURATION=2
MXPROF_HOOK=libz*:deflate*
MXPROF_MAX_TRACE_MB=64
MXPROF_OUTPUT=e-%p.json
MXPROF_OVERFLOW=block
MXPROF_SIGNAL=USR2
MXPROF_STACKS=4
MXPROF_TRACE=api,nvtx
WANT
diff want.txt env.txt || fail "variables differ"
echo "ok: every option set its MXPROF_* variable"
"$MX" run -q -o f.json -- sh -c 'echo "$MXPROF_AUTOSTART" > auto.txt' 2>/dev/null
expect_eq "autostart by default" 1 "$(cat auto.txt)"

# awk reads to the end: an early exit would kill ldconfig with SIGPIPE,
# which pipefail turns into a silent failure of the whole test.
zlib=$(/sbin/ldconfig -p | awk '/libz\.so\.1 / && !n++ { print $NF }')
LD_PRELOAD=$zlib "$MX" run -q -o g.json -- sh -c 'echo "$LD_PRELOAD" > pre.txt' 2>/dev/null
expect_eq "LD_PRELOAD appended" "${SANPRE:+$SANPRE }$zlib $(readlink -f "$MXPROF_LIB")" "$(cat pre.txt)"

# The library is found beside the binary when MXPROF_LIB is not set.
( unset MXPROF_LIB; "$MX" run -q -o h.json -- "$PROG" -u 10 2>/dev/null )
expect_eq "found beside mxprof: steps" 10 "$(row_count h.stats.txt cli step)"

# Signals sent to mxprof reach the program.
"$MX" run -q -o i.json -- sh -c 'echo $$ > child.pid; exec sleep 30' 2>/dev/null &
mx=$!
# A loaded machine may take its time to start the child; mxprof run
# ending first is the failure.
wait_until -p "$mx" "the child of mxprof run" '[ -s child.pid ]'
child=$(cat child.pid 2>/dev/null || true)
[ -n "$child" ] || fail "no child of mxprof run"
kill -TERM "$mx"
set +e; wait "$mx"; rc=$?; set -e
expect_eq "SIGTERM forwarded: exit" 143 "$rc"
if kill -0 "$child" 2>/dev/null; then fail "child still running"; fi
echo "ok: the child is gone"

# The summary: top rows and the paths written, on stderr.
"$MX" run -o s.json --top 1 -- "$PROG" -u 2000 > out.txt 2> sum.txt
[ ! -s out.txt ] || fail "summary went to stdout"
grep -q '^step  *10 ' sum.txt || fail "summary lacks the step row"
if grep -q '^load ' sum.txt; then fail "--top 1 printed load"; fi
grep -q '^\.\.\. 2 more$' sum.txt || fail "summary does not say how many rows were left out"
# 10 steps, 5 loads, 2 epochs: the Total row counts the rows left out too.
grep -q '^Total  *17 .* 100\.00$' sum.txt || fail "summary lacks the Total row of 17"
grep -q '^mxprof: trace  s.json$' sum.txt || fail "summary lacks the trace path"
grep -q '^mxprof: tables s.stats.txt$' sum.txt || fail "summary lacks the tables path"
echo "ok: summary"

# A forked child writes its own file, listed in the summary: it is moved
# into k.processes with the root's own, where a folder load of k.json's
# folder does not count it twice, and merge rebuilds k.json from them.
"$MX" run -o k.json -- sh -c "$PROG -u 10; true" 2> sum2.txt
n=$(grep -c '^mxprof: child  k\.processes/k\.[0-9]*\.json$' sum2.txt || true)
expect_eq "child traces listed" 1 "$n"
expect_eq "traces beside k.json" "k.json" "$(ls k.*json)"
# sh recorded nothing: the child's files alone.
expect_eq "per-process files" "k.PID.json k.PID.stats.txt" \
	"$(ls k.processes | sed 's/\.[0-9][0-9]*\./.PID./' | paste -sd' ')"
"$MX" merge -o k2.json k.processes/*.json >/dev/null
tracesummary k.json >k1.sum
tracesummary k2.json >k2.sum
expect_eq "merge rebuilds k.json from k.processes" "$(jget k1.sum 'sorted(d["spans"].items())')" \
	"$(jget k2.sum 'sorted(d["spans"].items())')"
child_trace=$(sed -n 's/^mxprof: child  //p' sum2.txt)
expect_eq "child trace steps" 10 "$("$MX" report "$child_trace" | awk '$1 == "step" { print $2 }')"

"$MX" run --help | grep -q -- '--no-autostart' || fail "help"
"$MX" --help | grep -q '^  merge' || fail "top-level help"
expect_eq "unknown command" 2 "$(st "$MX" frobnicate 2>/dev/null)"
echo "ok: help"

# A program that dies before mxprof's final dump leaves its journal, and
# mxprof run rebuilds the trace from it by itself, in one line.
set +e
"$MX" run -o killed.json -- "$BUILD/programs/crash_tasks" kill >/dev/null 2>err.txt
set -e
expect_eq "killed: recovered" 1 \
	"$(grep -c '^mxprof run: pid [0-9]* ended before writing its trace .*; recovered 722 records from its journal$' err.txt)"
expect_eq "killed: trace" 1 "$(grep -c '^mxprof: trace  killed.json$' err.txt)"

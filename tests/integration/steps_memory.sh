# Memory per step is bounded: a hooked C loop (flight_main: STEPS steps
# of 3 st_load() calls and one train_step(), MXPROF_STEP=train_step) in
# flight mode (MXPROF_FLIGHT=5steps, MXPROF_OVERFLOW=block so that
# nothing is dropped) takes, at its peak (ru_maxrss of the process), at
# most BOUND_KB (16 MiB) more for 1,000,000 steps than for 200,000 (a
# name and a table row per step took about 300 MB more). The tables
# count exactly every step and call; the exit file holds the last 5
# steps, named ProfilerStep#999995..999999.
#
# The Steps section agrees with the trace of a short run (2000 steps,
# no flight mode): its mean, median and p90 (numpy's linear
# interpolation), max and five slowest (slowest first, of equal times
# the lower number first) are those of the trace's ProfilerStep#N slices,
# and `mxprof report` of the trace writes the same section.
#
# SLOW=1 adds a run of 3,000,000 steps (past the 2^20 steps kept exact:
# the quantiles come from the histogram): the same bound against the
# 1,000,000 run, the count exact.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
HL=$ROOT/tests/programs/hooklibs
cc -O2 -g -shared -fPIC -o "$WORK/libsteps.so" "$HL/steplib.c"
cc -O2 -g -o "$WORK/flight_main" "$HL/flight_main.c" -L"$WORK" -lsteps \
	-Wl,-rpath,"$WORK"
cd "$WORK"
BOUND_KB=16384

# peak NAME STEPS [VAR=VALUE...]: flight_main STEPS 3 under mxprof with
# the window of 5 steps; prints its peak resident memory (KiB). The
# buffers do not grow (MXPROF_BUFFER_MAX_KB=MXPROF_BUFFER_KB, the
# default 2048): a drain thread kept off its core by a loaded machine
# would let one grow to 16 MiB, in one run and not the other.
peak() {
	local name=$1 n=$2
	shift 2
	"${PYTHON3:-python3}" -S - "$@" MXPROF_AUTOSTART=1 \
		MXPROF_OUTPUT="$WORK/$name.json" MXPROF_HOOK='libsteps.so:*' \
		MXPROF_STEP=train_step MXPROF_OVERFLOW=block \
		MXPROF_BUFFER_KB=2048 MXPROF_BUFFER_MAX_KB=2048 \
		LD_PRELOAD="$PRELOAD" ./flight_main "$n" 3 \
		>"$name.out" 2>"$name.err" <<'PYEOF' ||
import resource, subprocess, sys
subprocess.run(["env"] + sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
PYEOF
		fail "$name: flight_main failed under mxprof"
	expect_eq "$name: output" "$(./flight_main "$n" 3)" "$(cat "$name.out")" >&2
	tail -1 "$name.err"
}

# The Steps section of a tables file.
steps_section() {
	awk '$0 == "Steps" { s = 1 } s && /^$/ { exit } s' "$1"
}

# A short run: the section against the trace.
env MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/short.json" \
	MXPROF_HOOK='libsteps.so:*' MXPROF_STEP=train_step \
	MXPROF_OVERFLOW=block LD_PRELOAD="$PRELOAD" ./flight_main 2000 3 \
	>short.out 2>short.err || fail "short: flight_main failed under mxprof"
expect_eq "short: stderr" "" "$(cat short.err)"
"${PYTHON3:-python3}" -S - "$WORK/short.json" >short.expect <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
steps = []
for e in d["traceEvents"]:
    if e.get("ph") == "X" and e.get("args", {}).get("group") == "Steps":
        assert e["name"].startswith("ProfilerStep#"), e
        # ts and dur are us with 3 decimals, printed from whole ns.
        steps.append((round(e["dur"] * 1000), int(e["name"][13:])))
n = len(steps)
v = sorted(t for t, _ in steps)
def q(p):
    at = p * (n - 1)
    lo = int(at)
    if lo + 1 >= n:
        return float(v[-1])
    return v[lo] + (at - lo) * (v[lo + 1] - v[lo])
def row(name, count, ns):
    print("%-30s%11d%17.4f" % (name, count, int(ns + 0.5) / 1e6))
row("mean", n, sum(v) / n)
row("median", n, q(0.5))
row("p90", n, q(0.9))
row("max", n, v[-1])
for t, num in sorted(steps, key=lambda s: (-s[0], s[1]))[:5]:
    row("ProfilerStep#%d" % num, 1, t)
PYEOF
expect_eq "short: steps in the trace" 2000 \
	"$(grep -c '"name":"ProfilerStep#' short.json)"
steps_section short.stats.txt >short.steps
tail -n +5 short.steps | cmp short.expect - || {
	tail -n +5 short.steps | diff short.expect -
	fail "short: the Steps section is not the trace's"
}
echo "ok: short: the Steps section is the trace's"
"$MX" report short.json >short.rep || fail "report short.json failed"
steps_section short.rep >short.rep.steps
cmp short.steps short.rep.steps ||
	fail "short: report's Steps section differs from the library's"
echo "ok: short: report's Steps section is the library's"

# Long runs in flight mode: the peak does not grow with the steps.
a=$(peak s200k 200000 MXPROF_FLIGHT=5steps)
b=$(peak s1m 1000000 MXPROF_FLIGHT=5steps)
echo "peak resident memory: 200000 steps $a KiB, 1000000 steps $b KiB"
# AddressSanitizer keeps freed memory in its quarantine, ThreadSanitizer
# adds shadow memory per page touched: their resident memory says nothing
# of mxprof's. The counts below are checked under them too.
case "${SANITIZER:-}" in
asan | tsan)
	skip_part "the resident memory bound under $SANITIZER (its own memory)"
	;;
*)
	[ $((b - a)) -lt $BOUND_KB ] ||
		fail "1000000 steps took $((b - a)) KiB more than 200000 (bound $BOUND_KB)"
	echo "ok: 1000000 steps took $((b - a)) KiB more than 200000"
	;;
esac
expect_eq "1m: Steps count" 1000000 "$(row_count s1m.stats.txt Steps mean)"
expect_eq "1m: Steps p90 count" 1000000 "$(row_count s1m.stats.txt Steps p90)"
expect_eq "1m: st_load count" 3000000 \
	"$(row_count s1m.stats.txt 'C API (libsteps.so)' st_load)"
expect_eq "1m: slowest rows" 5 \
	"$(steps_section s1m.stats.txt | grep -c '^ProfilerStep#[0-9]* ')"
expect_eq "1m: the window's steps" \
	"ProfilerStep#999995 ProfilerStep#999996 ProfilerStep#999997 ProfilerStep#999998 ProfilerStep#999999" \
	"$(grep -o '"name":"ProfilerStep#[0-9]*"' s1m.json | cut -d'"' -f4 | sort | tr '\n' ' ' | sed 's/ $//')"

if [ "${SLOW:-}" = 1 ]; then
	c=$(peak s3m 3000000 MXPROF_FLIGHT=5steps)
	echo "peak resident memory: 3000000 steps $c KiB"
	[ -n "${SANITIZER:-}" ] && [ "$SANITIZER" != ubsan ] ||
		[ $((c - b)) -lt $BOUND_KB ] ||
		fail "3000000 steps took $((c - b)) KiB more than 1000000"
	expect_eq "3m: Steps count" 3000000 "$(row_count s3m.stats.txt Steps mean)"
else
	skip_part "SLOW=1 adds a run of 3000000 steps (the histogram)"
fi

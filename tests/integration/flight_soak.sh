# Flight mode's memory bound over a long run (SLOW=1 only): a hooked loop
# at full speed (flight_main -t: st_load() calls for SOAK_S seconds, 600
# by default, then 10 steps of 1000 calls and one train_step() each;
# MXPROF_OVERFLOW=block so that nothing is dropped) under
# MXPROF_FLIGHT=5steps MXPROF_FLIGHT_MB=64: while no step has ended the
# window is everything, so the store is at its bound from the first
# seconds on. The resident memory, sampled every 2 s, stays under the
# library's fixed overhead plus the bound at every sample: the fixed
# overhead is the most a 10 s run of the same loop takes with a bound of
# 1 MiB (its 1 MiB taken off again), plus SLACK_MB (4) for the
# allocator's rounding. At the end the exit file holds exactly the
# window: steps 5..9, whole, nothing that began before step 5.
# test-timeout: 1500
. "$ROOT/tests/integration/lib.sh"
[ "${SLOW:-}" = 1 ] || skip "SLOW=1 runs the 10-minute soak"
HL=$ROOT/tests/programs/hooklibs
FC=$ROOT/tests/tools/flightcheck.py
cc -O2 -g -shared -fPIC -o "$WORK/libsteps.so" "$HL/steplib.c"
cc -O2 -g -o "$WORK/flight_main" "$HL/flight_main.c" -L"$WORK" -lsteps \
	-Wl,-rpath,"$WORK"
cd "$WORK"
SOAK_S=${SOAK_S:-600}
SLACK_MB=${SLACK_MB:-4}
LOADS=1000

# soak NAME SECONDS [VAR=VALUE...]: the loop under mxprof; prints the
# most resident memory sampled (KiB) and keeps every sample in NAME.rss.
soak() {
	local name=$1 secs=$2
	shift 2
	env "$@" MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$name.json" \
		MXPROF_HOOK='libsteps.so:*' MXPROF_STEP=train_step \
		MXPROF_OVERFLOW=block MXPROF_BUFFER_KB=2048 \
		MXPROF_BUFFER_MAX_KB=2048 LD_PRELOAD="$PRELOAD" \
		./flight_main -t "$secs" $LOADS >"$name.out" 2>"$name.err" &
	local pid=$! rss
	: >"$name.rss"
	while kill -0 "$pid" 2>/dev/null; do
		rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
		[ -z "$rss" ] || echo "$rss" >>"$name.rss"
		sleep 2
	done
	wait "$pid" || fail "$name: flight_main failed"
	expect_eq "$name: output" "steps done" "$(cat "$name.out")"
	expect_eq "$name: stderr" "" "$(cat "$name.err")"
	sort -n "$name.rss" | tail -1
}

base=$(soak base 10 MXPROF_FLIGHT=5steps MXPROF_FLIGHT_MB=1 | tail -1)
limit=$((base - 1024 + 64 * 1024 + SLACK_MB * 1024))
echo "fixed overhead: $base KiB; limit $limit KiB"
top=$(soak soak "$SOAK_S" MXPROF_FLIGHT=5steps MXPROF_FLIGHT_MB=64 | tail -1)
echo "soak: $(wc -l <soak.rss) samples, KiB: $(tr '\n' ' ' <soak.rss)"
echo "soak: most $top KiB, limit $limit KiB"
[ "$top" -le "$limit" ] || fail "soak: resident memory $top KiB past $limit KiB"
expect_eq "soak: every sample under the limit" 0 \
	"$(awk -v l="$limit" '$1 > l' soak.rss | wc -l)"

"${PYTHON3:-python3}" -S "$FC" trace soak.json >soak.sum
expect_eq "soak: the window" "5 6 7 8 9" "$(jget soak.sum '" ".join(map(str, d["steps"]))')"
expect_eq "soak: whole" 5 \
	"$(jget soak.sum "sum(v == {'st_load': $LOADS, 'train_step': 1} for v in d['inside'].values())")"
expect_eq "soak: nothing before step 5" 0 "$(jget soak.sum 'd["before"]')"
expect_eq "soak: the calls kept" "5000 5 1" \
	"$(jget soak.sum 'str(d["names"]["st_load"]) + " " + str(d["names"]["train_step"]) + " " + str(d["names"]["st_save"])')"
expect_eq "soak: the tables' steps" "10 10" \
	"$(row_count soak.stats.txt Steps mean) $(row_count soak.stats.txt 'C API (libsteps.so)' train_step)"

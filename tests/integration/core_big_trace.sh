# A run whose trace passes the size that viewers load well says so at exit
# in one line, naming the cap and the capture settings; one under it says
# nothing. MXPROF_TEST_BIG_TRACE_MB (a test knob) lowers the size from
# 1024 MB to 1 MB, so that core_counts 1 5000 (about 2.5 MB of JSON) passes
# it and core_counts 1 100 (about 50 KB) does not. A .gz trace is measured
# by its JSON, before compression. A timeline cut at MXPROF_MAX_TRACE_MB
# gets only the cut line, which already names the cap.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_counts
cd "$WORK"
line() {
	echo "mxprof: the timeline is $1 MB of JSON, past the $2 MB that trace viewers load well: cap it with MXPROF_MAX_TRACE_MB (the tables still count everything), or record less with MXPROF_HOOK (fewer functions), MXPROF_TRACE (fewer sources), or a capture window (MXPROF_DELAY, MXPROF_DURATION, MXPROF_CAPTURE_NVTX)"
}
run() { # run OUTPUT THREADS ITERS [VAR=VALUE...]
	local out=$1 threads=$2 iters=$3
	shift 3
	env MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$out" "$@" \
		LD_PRELOAD="$PRELOAD" "$prog" "$threads" "$iters" >out.txt 2>err.txt
	expect_eq "$out: output" "$("$prog" "$threads" "$iters")" "$(cat out.txt)"
}

run big.json 1 5000 MXPROF_TEST_BIG_TRACE_MB=1
mb=$(($(stat -c %s big.json) >> 20))
[ "$mb" -ge 1 ] || fail "big.json: expected at least 1 MB, got $(stat -c %s big.json) bytes"
expect_eq "big.json: the line" "$(line "$mb" 1)" "$(cat err.txt)"
expect_eq "big.json: steps" 5000 "$(row_count big.stats.txt core step)"

run big.json.gz 1 5000 MXPROF_TEST_BIG_TRACE_MB=1
mb=$(($(gzip -dc big.json.gz | wc -c) >> 20))
[ "$(stat -c %s big.json.gz)" -lt 1048576 ] || fail "big.json.gz: 1 MB or more compressed"
expect_eq "big.json.gz: the line (its JSON's size)" "$(line "$mb" 1)" "$(cat err.txt)"

run small.json 1 100 MXPROF_TEST_BIG_TRACE_MB=1
expect_eq "small.json (50 KB, under 1 MB): stderr" "" "$(cat err.txt)"

run default.json 1 5000
expect_eq "default.json (2.5 MB, under 1024 MB): stderr" "" "$(cat err.txt)"

run cut.json 1 5000 MXPROF_TEST_BIG_TRACE_MB=1 MXPROF_MAX_TRACE_MB=1
expect_eq "cut.json: only the cut line" \
	"mxprof: the timeline was cut at MXPROF_MAX_TRACE_MB=1; the tables count everything: raise it, or 0 for no cap" \
	"$(cat err.txt)"

run bad.json 1 100 MXPROF_TEST_BIG_TRACE_MB=lots
expect_eq "bad knob: one line" \
	"mxprof: MXPROF_TEST_BIG_TRACE_MB=lots is not a whole number of MB above 0; 1024 is used" \
	"$(cat err.txt)"

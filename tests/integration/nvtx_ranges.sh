# A CPU-only program annotated with the NVTX v3 headers runs under mxprof:
# NVTX finds mxprof through NVTX_INJECTION64_PATH (set by mxprof) and every
# range and mark shows, nested as the program nested them, in the right
# sections (NVTX for the default domain, the domain's name otherwise), and
# the program's output is unchanged. When another tool owns
# NVTX_INJECTION64_PATH, mxprof says so in one line and records no range.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/nvtx_ranges
[ -x "$prog" ] || skip "nvtx_ranges not built (no CUDA toolkit headers for nvtx3)"
N=200

expected=$("$prog" $N)
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/nv.json" LD_PRELOAD="$PRELOAD" \
	"$prog" $N >out.txt 2>err.txt || fail "the program failed under mxprof"
expect_eq "program output" "$expected" "$(cat out.txt)"
expect_eq "stderr" "" "$(cat err.txt)"

tracesummary nv.json >sum.json
expect_eq "step ranges" $N "$(jget sum.json 'd["spans"]["NVTX/step"]')"
expect_eq "inner ranges" $N "$(jget sum.json 'd["spans"]["NVTX/inner"]')"
expect_eq "domain ranges (registered string)" $N "$(jget sum.json 'd["spans"]["trainer/forward"]')"
expect_eq "start/end range" 1 "$(jget sum.json 'd["spans"]["NVTX/epoch"]')"
expect_eq "ranges named from one buffer by turns: each its own name" \
	"$((N / 2)) $((N / 2))" \
	"$(jget sum.json 'd["spans"]["NVTX/batch 0"]') $(jget sum.json 'd["spans"]["NVTX/batch 1"]')"
expect_eq "worker ranges" $((N / 2)) "$(jget sum.json 'd["spans"]["NVTX/worker"]')"
expect_eq "marks" $((N / 10)) "$(jget sum.json 'd["instants"]["NVTX/tick"]')"
expect_eq "NVTX spans are user_annotation" 0 \
	"$(python3 -c 'import json; print(sum(1 for e in json.load(open("nv.json"))["traceEvents"] if e.get("ph")=="X" and e.get("cat")!="user_annotation"))')"
# epoch > step > inner (or forward): depth 3 on the main thread.
expect_eq "nesting depth" 3 "$(jget sum.json 'max(d["max_depth"].values())')"
expect_eq "named OS thread" 1 \
	"$(jget sum.json 'sum(1 for t in d["threads"].values() if t["name"].endswith(" (nvtx-main)"))')"
expect_eq "table step" $N "$(row_count nv.stats.txt NVTX step)"
expect_eq "table forward" $N "$(row_count nv.stats.txt trainer forward)"
expect_eq "table tick" $((N / 10)) "$(row_count nv.stats.txt 'NVTX (markers)' tick)"

# Another tool owns the injection path: one line, no NVTX range.
NVTX_INJECTION64_PATH=/nonexistent/libothertool.so MXPROF_AUTOSTART=1 \
	MXPROF_OUTPUT="$WORK/other.json" LD_PRELOAD="$PRELOAD" \
	"$prog" 10 >out2.txt 2>err2.txt || fail "the program failed with another tool's path"
expect_eq "output with another tool" "$("$prog" 10)" "$(cat out2.txt)"
expect_eq "lines about the other tool" 1 "$(grep -c 'NVTX_INJECTION64_PATH is set to /nonexistent/libothertool.so' err2.txt)"
# ... and, since nothing was recorded, the line that says so.
expect_eq "mxprof lines" 2 "$(grep -c '^mxprof:' err2.txt)"
expect_eq "empty-run line" 1 "$(grep -c '^mxprof: nothing was recorded; ' err2.txt)"
[ ! -e other.json ] || expect_eq "NVTX spans with another tool" 0 \
	"$(python3 "$ROOT/tests/tools/tracecheck.py" other.json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["spans"]))')"

# MXPROF_TRACE without nvtx: NVTX calls stay no-ops.
MXPROF_TRACE=api MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/off.json" \
	LD_PRELOAD="$PRELOAD" "$prog" 10 >out3.txt 2>err3.txt
expect_eq "output without nvtx tracing" "$("$prog" 10)" "$(cat out3.txt)"
[ ! -e off.json ] || expect_eq "NVTX spans when not traced" 0 \
	"$(python3 "$ROOT/tests/tools/tracecheck.py" off.json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["spans"]))')"

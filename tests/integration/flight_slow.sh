# Flight mode on a PyTorch loop (Debian's python3-torch, for
# /usr/bin/python3): 60 SGD steps of about 100 ms (each sleeps 100 ms, so
# that the machine's load hardly changes a step's time: only a stall of
# 200 ms would pass 3 times the median), step 41 sleeping 1 s, under
# MXPROF_FLIGHT=10steps MXPROF_TRIGGER=slow:3x:
#  - exactly one triggered file, profile.slow.1.json with its tables; it
#    holds exactly ProfilerStep#32..41, each whole (its Optimizer.step
#    inside it), no slice that began before step 32 or after step 41
#    ended; its metadata names the trigger and step 41, as does the one
#    stderr line, which names the file;
#  - the exit file holds exactly steps 50..59, whole;
#  - the tables count all 60 steps, and every row's count equals that of
#    a run without flight mode;
#  - the printed loss is unchanged.
. "$ROOT/tests/integration/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null ||
	skip "torch cannot be imported by $PY (python3-torch)"
LOOP=$ROOT/tests/programs/torch_flight.py
FC=$ROOT/tests/tools/flightcheck.py

ARGS=(60 41 1 0.1)
"$PY" "$LOOP" "${ARGS[@]}" >plain.txt

run() { # NAME [VAR=VALUE...]: the loop under mxprof, into NAME.json
	local name=$1
	shift
	env "$@" MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$name.json" \
		LD_PRELOAD="$PRELOAD" "$PY" "$LOOP" "${ARGS[@]}" >"$name.out" 2>"$name.err"
	cat "$name.err"
	diff plain.txt "$name.out" || fail "$name: the printed loss differs"
}

run all
run fl MXPROF_FLIGHT=10steps MXPROF_TRIGGER=slow:3x

expect_eq "triggered files" "fl.slow.1.json fl.slow.1.stats.txt" \
	"$(ls fl.*.* | grep -v -x -e fl.json -e fl.stats.txt -e fl.out -e fl.err | tr '\n' ' ' | sed 's/ $//')"
expect_eq "stderr lines" 1 "$(grep -c . fl.err)"
expect_eq "stderr line" 1 \
	"$(grep -c "^mxprof: slow trigger: wrote $WORK/fl.slow.1.json and $WORK/fl.slow.1.stats.txt: step 41 took [0-9.]* ms, [0-9.]*x the median [0-9.]* ms of the 41 steps before it$" fl.err)"

"${PYTHON3:-python3}" -S "$FC" trace fl.slow.1.json >slow.sum
"${PYTHON3:-python3}" -S "$FC" trace fl.json >end.sum
sj() { jget "$1" "$2"; }
expect_eq "slow: steps" "$(seq -s ' ' 32 41)" "$(sj slow.sum '" ".join(map(str, d["steps"]))')"
expect_eq "slow: each step whole" 10 \
	"$(sj slow.sum 'sum(v.get("Optimizer.step#SGD.step") == 1 and v.get("Optimizer.zero_grad#SGD.zero_grad") == 1 for v in d["inside"].values())')"
expect_eq "slow: nothing before step 32" 0 "$(sj slow.sum 'd["before"]')"
expect_eq "slow: nothing after step 41" 0 "$(sj slow.sum 'd["after"]')"
expect_eq "slow: optimizer steps" 10 "$(sj slow.sum 'd["names"]["Optimizer.step#SGD.step"]')"
expect_eq "slow: trigger" slow "$(sj slow.sum 'd["flight"]["trigger"]')"
expect_eq "slow: reason names step 41" 1 \
	"$(sj slow.sum 'int(d["flight"]["reason"].startswith("step 41 took "))')"
expect_eq "slow: window" "10steps 32-41 False" \
	"$(sj slow.sum 'd["flight"]["window"]["setting"] + " " + d["flight"]["window"]["steps"] + " " + str(d["flight"]["window"]["cut_by_memory"])')"
expect_eq "slow: metadata steps" 32-41 "$(sj slow.sum 'd["meta"]')"
expect_eq "slow: its tables count the steps so far" 42 \
	"$(row_count fl.slow.1.stats.txt Steps mean)"

expect_eq "end: steps" "$(seq -s ' ' 50 59)" "$(sj end.sum '" ".join(map(str, d["steps"]))')"
expect_eq "end: each step whole" 10 \
	"$(sj end.sum 'sum(v.get("Optimizer.step#SGD.step") == 1 for v in d["inside"].values())')"
expect_eq "end: nothing before step 50" 0 "$(sj end.sum 'd["before"]')"
expect_eq "end: trigger" end "$(sj end.sum 'd["flight"]["trigger"]')"

expect_eq "tables: all 60 steps" 60 "$(row_count fl.stats.txt Steps mean)"
"${PYTHON3:-python3}" -S "$FC" tables all.stats.txt >all.rows
"${PYTHON3:-python3}" -S "$FC" tables fl.stats.txt >fl.rows
expect_eq "tables: rows" "$(wc -l <all.rows)" "$(wc -l <fl.rows)"
diff all.rows fl.rows || fail "tables: counts differ from a run without flight mode"
echo "ok: every row's count as without flight mode ($(wc -l <fl.rows) rows)"

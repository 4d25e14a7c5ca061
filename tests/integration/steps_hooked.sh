# MXPROF_STEP names a hooked function of a C program (train_step() of
# libsteps.so, called 20 times after two st_load() calls each): 20 steps,
# ProfilerStep#0..19 on the main thread, each holding its two st_load and
# its train_step; a Steps section in the tables. Step windows
# (MXPROF_STEPS) keep exactly the steps they name and the calls inside
# them; report --steps filters a recorded trace the same way. Bad values
# say so in one line and keep every step; a program without a marker is
# as before, and a window without one says so in one line.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
HL=$ROOT/tests/programs/hooklibs
cc -O2 -g -shared -fPIC -o "$WORK/libsteps.so" "$HL/steplib.c"
cc -O2 -g -o "$WORK/step_main" "$HL/step_main.c" -L"$WORK" -lsteps \
	-Wl,-rpath,"$WORK"
expected=$("$WORK/step_main" 20)

# prof NAME [VAR=VALUE...]: step_main 20 under mxprof hooking libsteps.
prof() {
	local name=$1
	shift
	env "$@" MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$name.json" \
		MXPROF_HOOK='libsteps.so:*' LD_PRELOAD="$PRELOAD" \
		"$WORK/step_main" 20 >"$WORK/$name.out" 2>"$WORK/$name.err" ||
		fail "$name: step_main failed under mxprof"
	expect_eq "$name: output" "$expected" "$(cat "$WORK/$name.out")"
	tracesummary "$WORK/$name.json" >"$WORK/$name.sum"
	"${PYTHON3:-python3}" -S "$ROOT/tests/tools/stepcheck.py" \
		"$WORK/$name.json" >"$WORK/$name.steps"
}
span() { jget "$WORK/$1.sum" "d['spans'].get('$2', 0)"; }
st() { jget "$WORK/$1.steps" "$2"; }
calls() { # NAME: the calls of each kind, train_step st_load st_save
	echo "$(span "$1" 'C API (libsteps.so)/train_step')" \
		"$(span "$1" 'C API (libsteps.so)/st_load')" \
		"$(span "$1" 'C API (libsteps.so)/st_save')"
}

# Every step.
prof all MXPROF_STEP=train_step
expect_eq "all: stderr" "" "$(cat "$WORK/all.err")"
expect_eq "all: steps" "$(seq -s ' ' 0 19)" "$(st all '" ".join(map(str, d["steps"]))')"
expect_eq "all: cat" "['user_annotation']" "$(st all 'd["cat"]')"
expect_eq "all: on one thread" 1 "$(st all 'd["tids"]')"
expect_eq "all: contiguous" 1 "$(st all 'd["contiguous"]')"
expect_eq "all: step 0 from the first record" 1 "$(st all 'd["first_at_first"]')"
expect_eq "all: each step holds its calls" 20 \
	"$(st all 'sum(v == {"st_load": 2, "train_step": 1} for v in d["inside"].values())')"
expect_eq "all: metadata" "0-19" "$(st all 'd["meta"]')"
expect_eq "all: calls" "20 40 1" "$(calls all)"
stats=$WORK/all.stats.txt
expect_eq "all: Steps mean count" 20 "$(row_count "$stats" Steps mean)"
expect_eq "all: Steps p90 count" 20 "$(row_count "$stats" Steps p90)"
expect_eq "all: Steps rows" 9 \
	"$(awk '$0 == "Steps" { s = 1; next } s && /^$/ { s = 0 } s' "$stats" |
		grep -c -v -e '^=' -e '^Name ' -e '^----')"
expect_eq "all: no step section by name" "" \
	"$(grep -x 'Steps (counters)' "$stats")"
"$MX" report --format json "$WORK/all.json" >"$WORK/all.rep.json" ||
	fail "report --format json failed"
expect_eq "report json: Steps" "20 5" \
	"$(jget "$WORK/all.rep.json" 'str(d["Time"]["Steps"]["mean"]["Total Count"]) + " " + str(sum(k.startswith("ProfilerStep#") for k in d["Time"]["Steps"]))')"
"$MX" report --format csv "$WORK/all.json" >"$WORK/all.rep.csv" ||
	fail "report --format csv failed"
expect_eq "report csv: Steps rows" 9 "$(grep -c '^"Steps",time_ms,' "$WORK/all.rep.csv")"

# report --steps: a recorded trace, filtered to steps 10 to 12.
"$MX" report --steps 10-12 "$WORK/all.json" >"$WORK/rep.txt" ||
	fail "report --steps failed"
expect_eq "report --steps: train_step" 3 \
	"$(row_count "$WORK/rep.txt" 'C API (libsteps.so)' train_step)"
expect_eq "report --steps: st_load" 6 \
	"$(row_count "$WORK/rep.txt" 'C API (libsteps.so)' st_load)"
expect_eq "report --steps: st_save" "" \
	"$(row_count "$WORK/rep.txt" 'C API (libsteps.so)' st_save)"
expect_eq "report --steps: steps" 3 "$(row_count "$WORK/rep.txt" Steps mean)"
expect_eq "report --steps: slowest are 10-12" "ProfilerStep#10 ProfilerStep#11 ProfilerStep#12" \
	"$(grep -o '^ProfilerStep#[0-9]*' "$WORK/rep.txt" | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "report --steps: metadata" 1 "$(grep -c '^steps  *10-12$' "$WORK/rep.txt")"
set +e
"$MX" report --steps 30 "$WORK/all.json" >/dev/null 2>"$WORK/rep30.err"
rc=$?
"$MX" report --steps 3-x "$WORK/all.json" >/dev/null 2>"$WORK/repbad.err"
rcbad=$?
set -e
expect_eq "report --steps absent: status" 1 "$rc"
expect_eq "report --steps absent: line" 1 "$(grep -c 'none of the steps asked for' "$WORK/rep30.err")"
expect_eq "report --steps bad: status" 2 "$rcbad"

# Windows: torch.profiler's schedule, once and repeated, and a list.
prof sched MXPROF_STEP=train_step MXPROF_STEPS=2:1:3
expect_eq "2:1:3: stderr" "" "$(cat "$WORK/sched.err")"
expect_eq "2:1:3: steps" "3 4 5" "$(st sched '" ".join(map(str, d["steps"]))')"
expect_eq "2:1:3: calls" "3 6 0" "$(calls sched)"
expect_eq "2:1:3: each step holds its calls" 3 \
	"$(st sched 'sum(v == {"st_load": 2, "train_step": 1} for v in d["inside"].values())')"
expect_eq "2:1:3: metadata" "3-5" "$(st sched 'd["meta"]')"
expect_eq "2:1:3: Steps count" 3 "$(row_count "$WORK/sched.stats.txt" Steps mean)"
expect_eq "2:1:3: table train_step" 3 \
	"$(row_count "$WORK/sched.stats.txt" 'C API (libsteps.so)' train_step)"
prof rep0 MXPROF_STEP=train_step MXPROF_STEPS=2:1:3:0
expect_eq "2:1:3:0: steps" "3 4 5 9 10 11 15 16 17" "$(st rep0 '" ".join(map(str, d["steps"]))')"
expect_eq "2:1:3:0: calls" "9 18 0" "$(calls rep0)"
expect_eq "2:1:3:0: metadata" "3-5,9-11,15-17" "$(st rep0 'd["meta"]')"
prof list MXPROF_STEP=train_step MXPROF_STEPS=list:1,4-5
expect_eq "list: steps" "1 4 5" "$(st list '" ".join(map(str, d["steps"]))')"
expect_eq "list: calls" "3 6 0" "$(calls list)"
expect_eq "list: metadata" "1,4-5" "$(st list 'd["meta"]')"

# Bad values: one line each, every step kept.
for bad in 1:2 2:1:0 list: list:5-3 'list:1,,2' 1:2:3:4:5 -1:1:1; do
	prof bad MXPROF_STEP=train_step "MXPROF_STEPS=$bad"
	expect_eq "MXPROF_STEPS=$bad: lines" 1 "$(grep -c . "$WORK/bad.err")"
	expect_eq "MXPROF_STEPS=$bad: the line" 1 \
		"$(grep -cF "MXPROF_STEPS='$bad' is not valid" "$WORK/bad.err")"
	expect_eq "MXPROF_STEPS=$bad: every step" 20 "$(st bad 'len(d["steps"])')"
done
prof badstep MXPROF_STEP=
expect_eq "MXPROF_STEP empty: the line" 1 "$(grep -c "MXPROF_STEP='' is not valid" "$WORK/badstep.err")"
expect_eq "MXPROF_STEP empty: no steps" 0 "$(st badstep 'len(d["steps"])')"

# No marker: as before, no step, no Steps section, no line.
prof none
expect_eq "no marker: stderr" "" "$(cat "$WORK/none.err")"
expect_eq "no marker: steps" 0 "$(st none 'len(d["steps"])')"
expect_eq "no marker: metadata" "" "$(st none 'd["meta"]')"
expect_eq "no marker: calls" "20 40 1" "$(calls none)"
expect_eq "no marker: sections" "C API (libsteps.so)" \
	"$(grep -B1 -x '=================' "$WORK/none.stats.txt" | grep -v -e '^=' -e '^--$' | tr '\n' ' ' | sed 's/ $//')"
# A window with no marker: one line at the end.
prof nonewin MXPROF_STEPS=2:1:3
expect_eq "window, no marker: lines" 1 "$(grep -c . "$WORK/nonewin.err")"
expect_eq "window, no marker: the line" 1 \
	"$(grep -c "MXPROF_STEPS='2:1:3': no step marker (MXPROF_STEP='Optimizer.step#\*') was seen; nothing was kept" "$WORK/nonewin.err")"
expect_eq "window, no marker: calls" "0 0 0" "$(calls nonewin)"

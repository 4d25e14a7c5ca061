# Flight mode on a C program whose steps end at a hooked function
# (train_step() of libsteps.so, MXPROF_STEP=train_step; flight_main runs
# STEPS steps of LOADS st_load() calls and one train_step() each):
#  - MXPROF_FLIGHT=5steps: the exit file holds exactly steps 15..19 of
#    20, each whole, nothing that began before step 15; the tables count
#    every call;
#  - MXPROF_FLIGHT_MB=1 with a window of 1000 steps of 1001 calls (more
#    than 1 MiB): whole segments go, and what is kept is a run of whole
#    steps ending with the last, fewer than 1000, said in the metadata;
#    the tables are still exact;
#  - MXPROF_FLIGHT_MAX_DUMPS=2 and three dump signals (the first and
#    the last sent by mxprof dump, which prints the file's name, and past
#    the most says in one line that none was written) to a program that waits
#    on its standard input: two numbered files and one line; SIGTERM to
#    it writes the window to the trace's own name;
#  - MXPROF_TRIGGER=hang:1s on a program that stops making progress
#    after 20 steps (it blocks reading a pipe): exactly one hang file,
#    with steps 15..19 and the reason; the program's output and exit
#    status unchanged once the pipe closes. Without steps, the hang is
#    no record drained for 1 s;
#  - bad values: one line each, naming the variable, the value and what
#    is accepted; the feature is off (a bad MXPROF_FLIGHT records
#    everything).
. "$ROOT/tests/integration/lib.sh"
HL=$ROOT/tests/programs/hooklibs
FC=$ROOT/tests/tools/flightcheck.py
cc -O2 -g -shared -fPIC -o "$WORK/libsteps.so" "$HL/steplib.c"
cc -O2 -g -o "$WORK/flight_main" "$HL/flight_main.c" -L"$WORK" -lsteps \
	-Wl,-rpath,"$WORK"
cd "$WORK"

# prof NAME [VAR=VALUE...] -- ARGS: flight_main ARGS under mxprof.
prof() {
	local name=$1
	shift
	local vars=()
	while [ "$1" != -- ]; do vars+=("$1") && shift; done
	shift
	env "${vars[@]}" MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$name.json" \
		MXPROF_HOOK='libsteps.so:*' LD_PRELOAD="$PRELOAD" \
		./flight_main "$@" >"$name.out" 2>"$name.err" ||
		fail "$name: flight_main failed under mxprof"
	expect_eq "$name: output" "$(./flight_main "$@" </dev/null)" "$(cat "$name.out")"
}
sum() { "${PYTHON3:-python3}" -S "$FC" trace "$1.json" >"$1.sum"; }
sj() { jget "$1.sum" "$2"; }
whole() { # NAME LOADS: the steps holding exactly their calls
	sj "$1" "sum(v == {'st_load': $2, 'train_step': 1} for v in d['inside'].values())"
}
numbered() { # NAME: the numbered files beside NAME.json
	ls | grep "^$1\.[a-z]*\.[0-9]*\." | tr '\n' ' ' | sed 's/ $//'
}

# The window by steps.
prof win MXPROF_STEP=train_step MXPROF_FLIGHT=5steps -- 20 2
sum win
expect_eq "win: stderr" "" "$(cat win.err)"
expect_eq "win: steps" "15 16 17 18 19" "$(sj win '" ".join(map(str, d["steps"]))')"
expect_eq "win: whole" 5 "$(whole win 2)"
expect_eq "win: nothing before step 15" 0 "$(sj win 'd["before"]')"
expect_eq "win: the calls kept" "10 5 1" \
	"$(sj win 'str(d["names"]["st_load"]) + " " + str(d["names"]["train_step"]) + " " + str(d["names"]["st_save"])')"
expect_eq "win: flight metadata" "end 5steps 15-19 False" \
	"$(sj win 'd["flight"]["trigger"] + " " + d["flight"]["window"]["setting"] + " " + d["flight"]["window"]["steps"] + " " + str(d["flight"]["window"]["cut_by_memory"])')"
expect_eq "win: no numbered file" "" "$(numbered win)"
expect_eq "win: no journal left" "" "$(ls | grep journal || true)"
expect_eq "win: tables" "40 20 1 20" \
	"$(row_count win.stats.txt 'C API (libsteps.so)' st_load) $(row_count win.stats.txt 'C API (libsteps.so)' train_step) $(row_count win.stats.txt 'C API (libsteps.so)' st_save) $(row_count win.stats.txt Steps mean)"

# The memory bound: 1 MiB for 1000 steps of 1001 calls (blocking when a
# ring is full: the tables count every call).
prof mb MXPROF_OVERFLOW=block MXPROF_STEP=train_step MXPROF_FLIGHT=1000steps MXPROF_FLIGHT_MB=1 -- 2000 1000
sum mb
expect_eq "mb: stderr" "" "$(cat mb.err)"
kept=$(sj mb 'len(d["steps"])')
first=$(sj mb 'd["steps"][0]')
echo "mb: kept steps $first..1999 ($kept)"
[ "$kept" -gt 10 ] && [ "$kept" -lt 1000 ] ||
	fail "mb: $kept steps kept, expected fewer than 1000 and more than 10"
expect_eq "mb: the newest, in a run" "$(seq -s ' ' "$first" 1999)" \
	"$(sj mb '" ".join(map(str, d["steps"]))')"
expect_eq "mb: whole" "$kept" "$(whole mb 1000)"
expect_eq "mb: nothing before the first kept" 0 "$(sj mb 'd["before"]')"
expect_eq "mb: st_load kept" $((kept * 1000)) "$(sj mb 'd["names"]["st_load"]')"
expect_eq "mb: cut said" "True $first-1999" \
	"$(sj mb 'str(d["flight"]["window"]["cut_by_memory"]) + " " + d["flight"]["window"]["steps"]')"
expect_eq "mb: tables exact" "2000000 2000 2000" \
	"$(row_count mb.stats.txt 'C API (libsteps.so)' st_load) $(row_count mb.stats.txt 'C API (libsteps.so)' train_step) $(row_count mb.stats.txt Steps mean)"

# start NAME [VAR=VALUE...]: flight_main 20 2 wait in the background,
# its standard input a pipe the test holds open (descriptor 7).
start() {
	local name=$1
	shift
	rm -f "$name.fifo"
	mkfifo "$name.fifo"
	env "$@" MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$name.json" \
		MXPROF_HOOK='libsteps.so:*' LD_PRELOAD="$PRELOAD" \
		./flight_main 20 2 wait <"$name.fifo" >"$name.out" 2>"$name.err" &
	PID=$!
	exec 7>"$name.fifo"
}
STATUS=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/mxprof}
STATUS=${STATUS:-/tmp/mxprof-$(id -u)}
finish() { # NAME: closes the pipe; the program ends as without mxprof
	exec 7>&-
	local rc=0
	wait "$PID" || rc=$?
	expect_eq "$1: exit status" 0 "$rc"
	expect_eq "$1: output" "$(./flight_main 20 2 wait </dev/null)" "$(cat "$1.out")"
}

# Three dump signals, two files allowed.
start dumps MXPROF_STEP=train_step MXPROF_FLIGHT=5steps MXPROF_FLIGHT_MAX_DUMPS=2
wait_until -p "$PID" "the drain's status file" "[ -f $STATUS/$PID.status ]"
wait_until -p "$PID" "20 steps" "grep -q waiting dumps.out"
mxprof_command
"$MX" dump "$PID" >dump1.txt
expect_eq "dumps: mxprof dump names the file" "$WORK/dumps.dump.1.json" "$(cat dump1.txt)"
kill -USR1 "$PID"
wait_until -p "$PID" "the second dump" "[ -f dumps.dump.2.stats.txt ]"
set +e
"$MX" dump "$PID" >dump3.txt 2>dump3.err
rc=$?
set -e
expect_eq "dumps: mxprof dump past the most: status" 1 "$rc"
expect_eq "dumps: mxprof dump past the most: its line" \
	"mxprof dump: process $PID wrote no file: flight mode's numbered files reached MXPROF_FLIGHT_MAX_DUMPS; its window is written when it ends" \
	"$(cat dump3.err)"
expect_eq "dumps: mxprof dump past the most: no path" "" "$(cat dump3.txt)"
wait_until -p "$PID" "the line past the most" "grep -q MXPROF_FLIGHT_MAX_DUMPS dumps.err"
finish dumps
expect_eq "dumps: files" "dumps.dump.1.json dumps.dump.1.stats.txt dumps.dump.2.json dumps.dump.2.stats.txt" "$(numbered dumps)"
expect_eq "dumps: the line past the most" 1 \
	"$(grep -c '^mxprof: MXPROF_FLIGHT_MAX_DUMPS=2 files written; no more for this run (the dump trigger: the dump signal (mxprof dump)); the ending still writes the window$' dumps.err)"
expect_eq "dumps: lines" 3 "$(grep -c . dumps.err)"
expect_eq "dumps: a line per file" 2 "$(grep -c '^mxprof: dump trigger: wrote .*dumps\.dump\.[12]\.json and .*: the dump signal (mxprof dump)$' dumps.err)"
sum dumps.dump.2
expect_eq "dumps: trigger" dump "$(sj dumps.dump.2 'd["flight"]["trigger"]')"
expect_eq "dumps: the second holds the window" "15 16 17 18 19" \
	"$(sj dumps.dump.2 '" ".join(map(str, d["steps"]))')"
expect_eq "dumps: and the end" 1 "$([ -f dumps.json ] && echo 1)"

# The hang: no step ends after the 20th.
start hang MXPROF_STEP=train_step MXPROF_FLIGHT=5steps MXPROF_TRIGGER=hang:1s
wait_until -p "$PID" "the hang file" "[ -f hang.hang.1.stats.txt ]"
sleep 2.5 # a second file would come 1 s after the first
finish hang
expect_eq "hang: files" "hang.hang.1.json hang.hang.1.stacks.txt hang.hang.1.stats.txt" "$(numbered hang)"
expect_eq "hang: lines" 1 "$(grep -c . hang.err)"
expect_eq "hang: the line" 1 \
	"$(grep -c "^mxprof: hang trigger: wrote $WORK/hang.hang.1.json and $WORK/hang.hang.1.stats.txt: no step ended for 1 s (the last was step 19)$" hang.err)"
sum hang.hang.1
expect_eq "hang: steps" "15 16 17 18 19" "$(sj hang.hang.1 '" ".join(map(str, d["steps"]))')"
expect_eq "hang: whole" 5 "$(whole hang.hang.1 2)"
expect_eq "hang: metadata" "hang|no step ended for 1 s (the last was step 19)" \
	"$(sj hang.hang.1 'd["flight"]["trigger"] + "|" + d["flight"]["reason"]')"

# An ending by a signal writes the window too; the program ends as
# without mxprof (killed by SIGTERM).
start term MXPROF_STEP=train_step MXPROF_FLIGHT=5steps
wait_until -p "$PID" "20 steps" "grep -q waiting term.out"
kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
exec 7>&-
expect_eq "term: killed by SIGTERM" 143 "$rc"
sum term
expect_eq "term: the window" "end 15 16 17 18 19" \
	"$(sj term 'd["flight"]["trigger"] + " " + " ".join(map(str, d["steps"]))')"
expect_eq "term: whole" 5 "$(whole term 2)"

# The hang without steps: no record drained.
start idle MXPROF_FLIGHT=5s MXPROF_TRIGGER=hang:1s
wait_until -p "$PID" "the hang file" "[ -f idle.hang.1.stats.txt ]"
finish idle
expect_eq "idle: the line" 1 \
	"$(grep -c "^mxprof: hang trigger: wrote $WORK/idle.hang.1.json and $WORK/idle.hang.1.stats.txt: no record was drained for 1 s$" idle.err)"
sum idle.hang.1
expect_eq "idle: calls in the window" "40 20" \
	"$(sj idle.hang.1 'str(d["names"]["st_load"]) + " " + str(d["names"]["train_step"])')"

# mxprof run --flight --trigger: the hang file, named in the summary.
(while [ ! -f run.hang.1.stats.txt ]; do sleep 0.02; done) |
	MXPROF_HOOK='libsteps.so:*' MXPROF_STEP=train_step "$MX" run -q \
		--flight 5steps --trigger hang:1s --flight-mb 64 \
		--flight-max-dumps 3 -o "$WORK/run.json" \
		./flight_main 20 2 wait >run.out 2>run.err ||
	fail "run: flight_main failed under mxprof run"
cat run.err
expect_eq "run: output" "$(./flight_main 20 2 wait </dev/null)" "$(cat run.out)"
expect_eq "run: summary" "mxprof: trace  $WORK/run.json
mxprof: tables $WORK/run.stats.txt
mxprof: flight $WORK/run.hang.1.json
mxprof: flight $WORK/run.hang.1.stats.txt
mxprof: flight $WORK/run.hang.1.stacks.txt" "$(grep -v 'hang trigger: wrote' run.err)"
sum run
expect_eq "run: the end's window" "15 16 17 18 19" "$(sj run '" ".join(map(str, d["steps"]))')"
set +e
"$MX" run --flight 10min true 2>runbad.err
rc=$?
set -e
expect_eq "run --flight 10min: status" 2 "$rc"
expect_eq "run --flight 10min: the line" 1 \
	"$(grep -c "^mxprof run: --flight: '10min' is not <N>s or <N>steps, N a whole number >= 1$" runbad.err)"
set +e
"$MX" run --flight-mb 0 true 2>runbad.err
rc=$?
set -e
expect_eq "run --flight-mb 0: status" 2 "$rc"
expect_eq "run --flight-mb 0: the line" 1 \
	"$(grep -c "^mxprof run: --flight-mb: '0' is not a number from 1 to 16777216$" runbad.err)"
# Bad values: one line each, the feature off.
bad() { # VAR VALUE ACCEPTED [VAR=VALUE...]
	prof bad MXPROF_STEP=train_step "$1=$2" "${@:4}" -- 20 2
	expect_eq "$1=$2: lines" 1 "$(grep -c . bad.err)"
	expect_eq "$1=$2: the line" 1 "$(grep -cF "mxprof: $1='$2' is not valid (accepted: $3)" bad.err)"
}
FL='<N>s or <N>steps, N a whole number >= 1'
TR='a list of slow:<F>x (F >= 1) and hang:<N>s (N >= 1)'
for v in 10 0steps 5min 3.5s s -2s; do
	bad MXPROF_FLIGHT "$v" "$FL"
	sum bad
	expect_eq "MXPROF_FLIGHT=$v: every step recorded" 20 "$(sj bad 'len(d["steps"])')"
done
for v in slow:3 slow:0.5x hang:0s hang:1.5s foo 'slow:3x,' 'slow:3x,slow:4x' ''; do
	bad MXPROF_TRIGGER "$v" "$TR" MXPROF_FLIGHT=5steps
done
bad MXPROF_FLIGHT_MB 0 'a whole number of MiB, 1 to 16777216'
bad MXPROF_FLIGHT_MB 1x 'a whole number of MiB, 1 to 16777216'
bad MXPROF_FLIGHT_MAX_DUMPS -1 'a whole number, 0 to 1000000'
prof notrig MXPROF_TRIGGER=slow:3x -- 20 2
expect_eq "MXPROF_TRIGGER alone: the line" \
	"mxprof: MXPROF_TRIGGER='slow:3x' needs MXPROF_FLIGHT (flight mode); no triggers" "$(cat notrig.err)"

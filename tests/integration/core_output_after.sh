# Two short programs given the same MXPROF_OUTPUT, the second started
# before the first ends but recording only after it: the second finds no
# journal of the first (removed at its end), yet does not replace the
# first's trace: it writes X.<pid>.json beside it, with one line. The
# second (core_late) is held before its first record until the first
# (core_counts 1 10) has ended. R rounds (3; SLOW=1: 20).
. "$ROOT/tests/integration/lib.sh"
cd "$WORK"
R=3
[ "${SLOW:-}" = 1 ] && R=20
for i in $(seq "$R"); do
	d=$WORK/r$i
	mkdir "$d"
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$d/t.json" LD_PRELOAD="$PRELOAD" \
		"$BUILD/programs/core_late" "$d/ready" "$d/go" >"$d/late.out" \
		2>"$d/late.err" &
	pid=$!
	wait_until -p "$pid" "the second's start" '[ -e "$d/ready" ]'
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$d/t.json" LD_PRELOAD="$PRELOAD" \
		"$BUILD/programs/core_counts" 1 10 >"$d/first.out" \
		2>"$d/first.err" || fail "the first failed: $(cat "$d/first.err")"
	touch "$d/go"
	wait "$pid" || fail "the second failed: $(cat "$d/late.err")"
	expect_eq "round $i: the first's stderr" "" "$(cat "$d/first.err")"
	expect_eq "round $i: the second's line" "mxprof: $d/t.json was written by another process after this one started; writing $d/t.$pid.json beside it" "$(cat "$d/late.err")"
	expect_eq "round $i: files" "first.err first.out go late.err late.out ready t.$pid.json t.$pid.stats.txt t.json t.stats.txt" "$(ls "$d" | tr '\n' ' ' | sed 's/ $//')"
	tracesummary "$d/t.json" >"$d/s1.json"
	tracesummary "$d/t.$pid.json" >"$d/s2.json"
	expect_eq "round $i: the first's trace" 10 "$(jget "$d/s1.json" 'd["spans"].get("core/step", 0)')"
	expect_eq "round $i: the second's trace" "{'late/step': 10}" "$(jget "$d/s2.json" 'd["spans"]')"
done

# mxprof recover names what cut the timeline of a journal a killed
# process left: its share of a small disk (a 1 MiB tmpfs, where the
# timeline takes at most an eighth of the free space), or
# MXPROF_MAX_TRACE_MB. core_counts 2 5000 SYNC_DIR, dumped once with the
# dump signal at its half-way point, past the cut, then killed (SIGKILL).
# The disk's case needs a private mount namespace (unshare -m as root,
# unshare -rm otherwise); without one it is skipped with a line.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
prog=$BUILD/programs/core_counts
cd "$WORK"

# forget PID: removes the status file the killed process left behind
forget() {
	if [ -n "${XDG_RUNTIME_DIR:-}" ]; then
		rm -f "$XDG_RUNTIME_DIR/mxprof/$1.status"
	else
		rm -f "/tmp/mxprof-$(id -u)/$1.status"
	fi
}

# killed DIR [VAR=VALUE...]: runs core_counts with its journal in DIR,
# dumps it at the half-way point and kills it; its pid in DIR/pid.
cat >killed.sh <<'KILLED'
. "$ROOT/tests/integration/lib.sh"
d=$1
shift
mkdir "$d/sync"
env "$@" MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$d/t.json" LD_PRELOAD="$PRELOAD" \
	"$PROG" 2 5000 "$d/sync" >"$d/out.txt" 2>"$d/err.txt" &
pid=$!
echo "$pid" >"$d/pid"
wait_until -p "$pid" "the half-way point" '[ -e "$d/sync/half" ]'
kill -USR1 "$pid"
wait_until -p "$pid" "the dump" '[ -s "$d/t.stats.txt" ]'
kill -KILL "$pid"
{ wait "$pid"; } 2>/dev/null || true
KILLED

# recovered DIR: recovers DIR/t.json.journal into DIR/r.json; stderr in
# DIR/recover.txt.
recovered() {
	"$MX" recover -o "$1/r.json" "$1/t.json.journal" >"$1/recover.out" \
		2>"$1/recover.txt" || fail "recover $1: status $?"
	forget "$(cat "$1/pid")"
}

mkdir cap
env PROG="$prog" bash killed.sh "$WORK/cap" MXPROF_MAX_TRACE_MB=1
recovered "$WORK/cap"
expect_eq "the cap" "mxprof recover: $WORK/cap/t.json.journal: the timeline was capped (MXPROF_MAX_TRACE_MB); the tables cover the records it kept" "$(cat cap/recover.txt)"

if [ "$(id -u)" = 0 ]; then ns=(unshare -m); else ns=(unshare -rm); fi
"${ns[@]}" true 2>/dev/null || skip "no private mount namespace here"
cat >inner.sh <<'INNER'
mount -t tmpfs -o size=1m tmpfs "$D"
bash killed.sh "$D"
cp -r "$D" "$W/disk"
INNER
mkdir mnt
"${ns[@]}" env D="$WORK/mnt" W="$WORK" PROG="$prog" bash inner.sh
grep -q "^mxprof: $WORK/mnt/t.json.journal has taken its share of the disk (" disk/err.txt ||
	fail "no share line: $(cat disk/err.txt)"
recovered "$WORK/disk"
expect_eq "the disk's share" "mxprof recover: $WORK/disk/t.json.journal: the timeline was cut at its share of the disk; the tables cover the records it kept" "$(cat disk/recover.txt)"

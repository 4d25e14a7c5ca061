# The disk fills up while a program records and stays full until it
# exits: mxprof says so once when the timeline's share is reached, and at
# the end the trace and tables, which do not fit, go to a private folder
# of $TMPDIR, with one line naming it: nothing is lost but the timeline
# past the full disk. core_counts 2 5000 SYNC_DIR on a 2 MiB tmpfs that a
# filler leaves ~64 KiB of, and keeps full. Needs a private mount
# namespace (unshare -m as root, unshare -rm otherwise).
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_counts
expected=$("$prog" 2 5000)
cd "$WORK"
if [ "$(id -u)" = 0 ]; then ns=(unshare -m); else ns=(unshare -rm); fi
"${ns[@]}" true 2>/dev/null || skip "no private mount namespace here"
cat >inner.sh <<'INNER'
. "$ROOT/tests/integration/lib.sh"
mount -t tmpfs -o size=2m tmpfs "$D"
mkdir "$D/sync"
dd if=/dev/zero of="$D/filler" bs=1k count=1984 status=none
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$D/t.json" LD_PRELOAD="$PRELOAD" \
	TMPDIR="$W/tmp" "$PROG" 2 5000 "$D/sync" >"$W/out.txt" 2>"$W/err.txt" &
pid=$!
wait_until -p "$pid" "the half-way point" '[ -e "$D/sync/half" ]'
wait_until -p "$pid" "mxprof's line" 'grep -q "the timeline stops here" "$W/err.txt"'
# Fill what is left: nothing more fits.
dd if=/dev/zero of="$D/filler2" bs=1k count=4096 status=none 2>/dev/null || true
touch "$D/sync/go"
wait "$pid"
ls "$D" >"$W/files.txt"
INNER
mkdir mnt tmp
"${ns[@]}" env D="$WORK/mnt" W="$WORK" PROG="$prog" PRELOAD="$PRELOAD" bash inner.sh
expect_eq "output" "$expected" "$(cat out.txt)"
fb=$(sed -n 's/.*; writing \(.*\) instead$/\1/p' err.txt)
expect_eq "messages" "mxprof: $WORK/mnt/t.json.journal has taken its share of the disk (8 KiB of trace); the timeline stops here, the tables go on
mxprof: no space left to write $WORK/mnt/t.json; writing $fb instead" "$(cat err.txt)"
case $fb in "$WORK/tmp/mxprof-"??????/t.json) ;; *) fail "fallback $fb" ;; esac
tracesummary "$fb" >s.json
expect_eq "timelineTruncated" True "$(jget "$fb" 'd["mxprof"]["timelineTruncated"]')"
steps=$(jget s.json 'd["spans"].get("core/step", 0)')
[ "$steps" -gt 0 ] && [ "$steps" -lt 10000 ] ||
	fail "trace steps: expected the first part of 10000, got $steps"
expect_eq "tables" 10000 "$(row_count "${fb%.json}.stats.txt" core step)"

# The disk fills up while a program records, and space comes back before
# it exits: mxprof says so once (the timeline's share of the 64 KiB left
# is reached before the disk is full), the trace holds the timeline up to there
# (marked "timelineTruncated") and the tables count everything.
# core_counts 2 5000 SYNC_DIR on a 2 MiB tmpfs that a filler leaves ~64 KiB
# of: the first half fills it; once mxprof has said so, the filler goes and
# the second half runs. Needs a private mount namespace (unshare -m as
# root, unshare -rm otherwise).
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_counts
expected=$("$prog" 2 5000)
cd "$WORK"
if [ "$(id -u)" = 0 ]; then ns=(unshare -m); else ns=(unshare -rm); fi
cat >inner.sh <<'INNER'
. "$ROOT/tests/integration/lib.sh"
mount -t tmpfs -o size=2m tmpfs "$D"
mkdir "$D/sync"
dd if=/dev/zero of="$D/filler" bs=1k count=1984 status=none
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$D/t.json" LD_PRELOAD="$PRELOAD" \
	"$PROG" 2 5000 "$D/sync" >"$W/out.txt" 2>"$W/err.txt" &
pid=$!
wait_until -p "$pid" "the half-way point" '[ -e "$D/sync/half" ]'
wait_until -p "$pid" "mxprof's line" 'grep -q "the timeline stops here" "$W/err.txt"'
rm "$D/filler"
touch "$D/sync/go"
wait "$pid"
ls "$D" >"$W/files.txt"
cp "$D/t.json" "$D/t.stats.txt" "$W/" 2>/dev/null || true
INNER
mkdir mnt
"${ns[@]}" env D="$WORK/mnt" W="$WORK" PROG="$prog" PRELOAD="$PRELOAD" bash inner.sh
expect_eq "output" "$expected" "$(cat out.txt)"
expect_eq "message" "mxprof: $WORK/mnt/t.json.journal has taken its share of the disk (8 KiB of trace); the timeline stops here, the tables go on" "$(cat err.txt)"
expect_eq "files" "sync t.json t.stats.txt" "$(tr '\n' ' ' <files.txt | sed 's/ $//')"
tracesummary t.json >s.json
expect_eq "timelineTruncated" True "$(jget t.json 'd["mxprof"]["timelineTruncated"]')"
steps=$(jget s.json 'd["spans"].get("core/step", 0)')
[ "$steps" -gt 0 ] && [ "$steps" -lt 10000 ] ||
	fail "trace steps: expected the first part of 10000, got $steps"
echo "ok: trace steps = $steps of 10000 (up to the full disk)"
expect_eq "table steps" 10000 "$(row_count t.stats.txt core step)"

# A small disk (a 1 MiB tmpfs) shared with the program: mxprof leaves room
# for it. The timeline takes at most an eighth of the free space, then
# stops with one line; a 512 KiB file written on the same disk while the
# program records succeeds, as it does without mxprof; the tables count
# every step; the trace holds the timeline up to the cap, marked cut; the
# journal is removed at exit. core_counts 2 5000 SYNC_DIR, the 512 KiB
# file written at its half-way point, once the journal exists. Needs a private mount namespace
# (unshare -m as root, unshare -rm otherwise).
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_counts
expected=$("$prog" 2 5000)
cd "$WORK"
if [ "$(id -u)" = 0 ]; then ns=(unshare -m); else ns=(unshare -rm); fi
cat >inner.sh <<'INNER'
. "$ROOT/tests/integration/lib.sh"
mount -t tmpfs -o size=1m tmpfs "$D"
mkdir "$D/sync"
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$D/t.json" LD_PRELOAD="$PRELOAD" \
	"$PROG" 2 5000 "$D/sync" >"$W/out.txt" 2>"$W/err.txt" &
pid=$!
wait_until -p "$pid" "the half-way point and the journal" \
	'[ -e "$D/sync/half" ] && [ -s "$D/t.json.journal" ]'
rc=0
dd if=/dev/zero of="$D/own" bs=1k count=512 status=none 2>"$W/dd.txt" || rc=$?
echo "$rc" >"$W/dd-rc.txt"
touch "$D/sync/go"
wait "$pid"
ls "$D" >"$W/files.txt"
cp "$D/t.json" "$D/t.stats.txt" "$W/" 2>/dev/null || true
INNER
mkdir mnt
"${ns[@]}" env D="$WORK/mnt" W="$WORK" PROG="$prog" PRELOAD="$PRELOAD" bash inner.sh
expect_eq "output" "$expected" "$(cat out.txt)"
expect_eq "the 512 KiB file: status" 0 "$(cat dd-rc.txt)"
expect_eq "the 512 KiB file: messages" "" "$(cat dd.txt)"
expect_eq "message" "mxprof: $WORK/mnt/t.json.journal has taken its share of the disk (128 KiB of trace); the timeline stops here, the tables go on" "$(cat err.txt)"
expect_eq "files" "own sync t.json t.stats.txt" "$(tr '\n' ' ' <files.txt | sed 's/ $//')"
tracesummary t.json >s.json
expect_eq "timelineTruncated" True "$(jget t.json 'd["mxprof"]["timelineTruncated"]')"
steps=$(jget s.json 'd["spans"].get("core/step", 0)')
[ "$steps" -gt 0 ] && [ "$steps" -lt 10000 ] ||
	fail "trace steps: expected the first part of 10000, got $steps"
echo "ok: trace steps = $steps of 10000 (up to the cap)"
expect_eq "table steps" 10000 "$(row_count t.stats.txt core step)"

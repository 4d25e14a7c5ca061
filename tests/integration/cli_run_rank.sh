# mxprof run reports the files this run wrote, never older ones: %r in -o
# is the rank the program gets (RANK, ...; 0 when none), not a wildcard,
# and a trace or child trace left by an earlier run is not listed.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

RANK=0 "$MX" run -q -o 'rank%r.json' -- "$PROG" -u 200 2> r0.txt
expect_eq "rank 0: trace line" "mxprof: trace  rank0.json" "$(grep '^mxprof: trace' r0.txt)"
RANK=1 "$MX" run -o 'rank%r.json' -- "$PROG" -u 200 -s 3 2> r1.txt
expect_eq "rank 1: trace line" "mxprof: trace  rank1.json" "$(grep '^mxprof: trace' r1.txt)"
expect_eq "rank 1: tables line" "mxprof: tables rank1.stats.txt" "$(grep '^mxprof: tables' r1.txt)"
grep -q '^step  *3 ' r1.txt || fail "rank 1: the summary is not rank1's (3 steps): $(cat r1.txt)"
echo "ok: rank 1's summary shows its 3 steps"
env -u RANK "$MX" run -q -o 'none%r.json' -- "$PROG" -u 200 2> rn.txt
expect_eq "no rank: trace line" "mxprof: trace  none0.json" "$(grep '^mxprof: trace' rn.txt)"

# A run that writes nothing: the older rank1.json is not its trace.
set +e
RANK=1 "$MX" run --no-autostart -o 'rank%r.json' -- /bin/true 2> stale.txt
set -e
expect_eq "stale: trace lines" 0 "$(grep -c '^mxprof: trace' stale.txt || true)"
grep -q "^mxprof run: no trace at rank1.json" stale.txt || fail "stale: $(cat stale.txt)"
echo "ok: an older rank1.json is not reported"

# A child trace left by an earlier run beside the trace is not listed.
"$MX" run -q -o c.json -- "$PROG" -u 200 2> /dev/null
cp c.json c.4242.json
"$MX" run -q -o c.json -- "$PROG" -u 200 2> c.txt
expect_eq "child lines" 0 "$(grep -c '^mxprof: child' c.txt || true)"
expect_eq "trace line" "mxprof: trace  c.json" "$(grep '^mxprof: trace' c.txt)"

# A signal that ends the process while mxprof starts, in its constructor:
# the main thread used to hold the collector's owner lock when the
# signal, held back while the drain thread was created, came in, and its
# handler then waited 5 s for a drain thread that waited for that lock
# (one line "did not finish within 5 s"). The program core_start_signal
# sends itself SIGTERM from the first pthread_create(), the drain
# thread's under MXPROF_AUTOSTART.
# Checks: the wait status, stdout and stderr are those of the plain run
# (SIGTERM, nothing printed), and no journal is left behind.
. "$ROOT/tests/integration/lib.sh"
PROG=$BUILD/programs/core_start_signal
cd "$WORK"

plain=$(wait_status plain "$PROG")
expect_eq "plain: wait status" 15 "$plain"
for i in 1 2 3; do
	mx=$(wait_status "mx$i" /usr/bin/env MXPROF_AUTOSTART=1 \
		MXPROF_OUTPUT="$WORK/start$i.json" LD_PRELOAD="$PRELOAD" "$PROG")
	cat "mx$i.err"
	expect_eq "run $i: wait status" "$plain" "$mx"
	cmp plain.out "mx$i.out" || fail "run $i: stdout differs"
	cmp plain.err "mx$i.err" || fail "run $i: stderr differs"
	[ ! -e "start$i.json.journal" ] || fail "run $i: the journal was left"
done

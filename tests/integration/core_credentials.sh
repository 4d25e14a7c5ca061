# A process that gives up root keeps working under mxprof. setpriv
# --reuid/--regid (and the test program core_setxid, which does the same)
# keeps its capabilities across setresuid, makes them effective again with
# capset, which acts on the calling thread only, then calls setresgid,
# which the C library runs on every thread of the process and aborts when
# one of them fails. mxprof's drain thread, left with the old thread's
# capabilities, used to fail it: SIGABRT (134).
# Checks, as root only: the exit status and output are those of the plain
# run, under MXPROF_AUTOSTART and under mxprof run, and the trace holds
# the tasks recorded before and after the change.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
cd "$WORK"
if [ "$(id -u)" != 0 ]; then
	echo "skip: changing user ids needs root"
	exit 77
fi
NOBODY=$(id -u nobody 2>/dev/null || echo 65534)
chmod o+x "$WORK" # the test program writes there as nobody
mkdir -m 1777 out
PROG=$BUILD/programs/core_setxid

set +e
plain=$("$PROG" "$NOBODY" "$NOBODY" 2>&1)
plain_rc=$?
mx=$(MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/out/auto.json" \
	LD_PRELOAD="$PRELOAD" "$PROG" "$NOBODY" "$NOBODY" 2>&1)
mx_rc=$?
set -e
expect_eq "plain run" "0 uid $NOBODY gid $NOBODY" "$plain_rc $plain"
expect_eq "under autostart: status and output" "$plain_rc $plain" "$mx_rc $mx"
tracesummary out/auto.json >auto.sum
expect_eq "tasks before and after" "{'cred/after': 50, 'cred/before': 50}" \
	"$(jget auto.sum 'dict(sorted(d["spans"].items()))')"

if command -v setpriv >/dev/null; then
	set +e
	"$MX" run -o "$WORK/out/run.json" -- setpriv --reuid="$NOBODY" \
		--regid="$NOBODY" --clear-groups "$PROG" "$NOBODY" "$NOBODY" \
		>run.out 2>run.err
	rc=$?
	set -e
	cat run.err
	expect_eq "setpriv under mxprof run: status" 0 "$rc"
	expect_eq "setpriv under mxprof run: output" "uid $NOBODY gid $NOBODY" \
		"$(cat run.out)"
	set +e
	LD_PRELOAD="$PRELOAD" MXPROF_AUTOSTART=1 \
		MXPROF_OUTPUT="$WORK/out/setpriv.json" setpriv \
		--reuid="$NOBODY" --regid="$NOBODY" --clear-groups true
	rc=$?
	set -e
	expect_eq "setpriv under autostart: status" 0 "$rc"
else
	echo "note: no setpriv here; its part is left out"
fi

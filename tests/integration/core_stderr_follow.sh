# mxprof's drain thread keeps a copy of the program's stderr in a
# descriptor table of its own (docs/reliability.md), and follows the
# program's: a program that closes a piped stderr lets the pipe's reader
# see its end while the program runs, and one that points its stderr at
# a file gets the drain's lines in that file.
. "$ROOT/tests/integration/lib.sh"
cd "$WORK"
mkfifo err go
# The drain thread of process $1 holds a copy of $2 as its stderr.
drain_holds() {
	local t
	for t in /proc/"$1"/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = mxprof-drain ] &&
			[ "$(readlink "$t/fd/2" 2>/dev/null)" = "$2" ]; then
			return 0
		fi
	done
	return 1
}
# The program's stderr is a pipe; once the drain holds a copy, the
# program closes it and waits for a line on go.
(
	cat err >/dev/null
	echo end >reader.txt
) &
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/a.json" LD_PRELOAD="$PRELOAD" \
	sh -c 'exec 3<go; read x <&3; exec 2>&-; read x <&3; echo "$x"' \
	2>err >closed.txt &
prog=$!
exec 4>go
trap 'echo >&4; echo >&4' EXIT # a failure below lets the program end
wait_until -p $prog "the drain's copy of the pipe" "drain_holds $prog $WORK/err"
echo close >&4
wait_until -p $prog "the pipe's end at its reader, the program running" \
	'[ -s reader.txt ]'
echo on >&4
wait $prog
trap - EXIT
exec 4>&-
expect_eq "program" "on" "$(cat closed.txt)"
# The program points its stderr at a file and waits until the drain's
# copy is that file (the drain looks at each wakeup); then it records
# (mxprof's journal goes beside the output, whose directory is missing)
# and asks for a dump: the drain's lines go to the new file.
MXPROF_AUTOSTART=1 MXPROF_HOOK='libz*:crc32' TMPDIR="$WORK" \
	MXPROF_OUTPUT="$WORK/missing/b.json" LD_PRELOAD="$PRELOAD" \
	"$PYTHON3" -S - 2>old.txt <<'PY'
import os, signal, sys, time, zlib
os.dup2(os.open("new.txt", os.O_WRONLY | os.O_CREAT, 0o644), 2)
new = os.path.realpath("new.txt")


def drain_follows():
    for t in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/comm" % t) as f:
                if f.read().strip() != "mxprof-drain":
                    continue
            if os.readlink("/proc/self/task/%s/fd/2" % t) == new:
                return True
        except OSError:
            pass
    return False


end = time.monotonic() + 300  # a hang fails rather than waits forever
while not drain_follows():
    if time.monotonic() > end:
        print("the drain never took the new stderr", file=sys.stdout)
        sys.exit(3)
    time.sleep(0.001)
zlib.crc32(b"x")
os.kill(os.getpid(), signal.SIGUSR1)
PY
[ ! -s old.txt ] || fail "a line in the program's first stderr: $(cat old.txt)"
grep -q "^mxprof: cannot write beside $WORK/missing/b.json" new.txt ||
	fail "no line of mxprof's in the program's new stderr: $(cat new.txt)"
echo "ok: stderr followed"

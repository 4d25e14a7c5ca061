# mxprof run keeps the signal dispositions it inherited: a signal ignored
# where it was started (nohup ignores SIGHUP; a shell's background job
# ignores SIGINT and SIGQUIT) stays ignored by mxprof run and by the
# program, as without mxprof. The program reports its ignored mask, then
# mxprof run and the program get those signals; both must live on.
. "$ROOT/tests/integration/lib.sh"
mxprof_command

# mask: the SigIgn line of a process started with HUP, INT and QUIT
# ignored, plain and under mxprof run.
cat > prog.sh <<'SH'
# The standard signals only: glibc handles two real-time ones itself.
m=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status)
printf '%x\n' $((0x$m & 0x7fffffff)) > "$1.mask"
echo $$ > "$1.pid"
# Released by the test (at its end, whatever happens), at most 60 s on.
i=0
while [ ! -e "$1.go" ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i + 1)); done
exit 0
SH
trap 'touch plain.go run.go dfl.go' EXIT
# ign CMD...: becomes CMD with SIGHUP, SIGINT and SIGQUIT ignored (run
# with &, so that its pid is the one killed).
ign() { exec sh -c "trap '' HUP INT QUIT; exec \"\$@\"" ign "$@"; }

ign sh prog.sh plain & plain=$!
ign "$MX" run -q -o t.json -- sh prog.sh run 2>err.txt & mx=$!
# No deadline: mxprof run ending first is the failure.
for w in plain run; do
	while [ ! -s "$w.pid" ] && kill -0 "$mx" 2>/dev/null; do sleep 0.01; done
	[ -s "$w.pid" ] || fail "$w did not start: $(cat err.txt)"
done
expect_eq "ignored mask of the program" "$(cat plain.mask)" "$(cat run.mask)"
for sig in HUP INT QUIT; do
	kill -"$sig" "$mx" "$(cat run.pid)" "$plain" "$(cat plain.pid)"
done
touch plain.go run.go
set +e; wait "$plain"; rc_plain=$?; wait "$mx"; rc_run=$?; set -e
expect_eq "plain status after HUP, INT, QUIT" 0 "$rc_plain"
expect_eq "mxprof run status after HUP, INT, QUIT" 0 "$rc_run"

# A signal that was not ignored is still passed on and ends the program.
"$MX" run -q -o u.json -- sh prog.sh dfl 2>/dev/null & mx=$!
while [ ! -s dfl.pid ] && kill -0 "$mx" 2>/dev/null; do sleep 0.01; done
kill -HUP "$mx"
set +e; wait "$mx"; rc=$?; set -e
expect_eq "SIGHUP not ignored: forwarded" 129 "$rc"

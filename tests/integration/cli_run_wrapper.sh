# A program run through a shell wrapper (as pyenv's python3 is a bash
# script) that runs helpers before it execs the real program: the helper
# processes record nothing, and a process that recorded nothing writes no
# files at a normal exit (as at _exit), so the run leaves the program's
# trace and tables only, and mxprof run's summary lists nothing else.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

cat > wrapper <<SH
#!/bin/bash
# helpers, as a version manager's wrapper runs them
v=\$(uname -s); d=\$(dirname "\$0"); b=\$(basename "\$0")
for i in 1 2 3 4 5; do h=\$(printf '%s' "\$i" | tr 0-9 a-j); done
/bin/true; cat /dev/null
exec "$PROG" "\$@"
SH
chmod +x wrapper
"$MX" run -o w.json -- ./wrapper -u 10 >out.txt 2>err.txt
cat err.txt
expect_eq "files written" "w.json w.stats.txt" "$(echo $(ls w*.json w*.txt))"
expect_eq "steps" 10 "$(row_count w.stats.txt cli step)"
if grep -q '^mxprof: child ' err.txt; then fail "a helper's trace is listed"; fi
if grep -q 'recorded nothing' err.txt; then fail "helpers counted"; fi

# A process that records nothing and exits normally writes nothing.
"$MX" run -o n.json -- /bin/true 2>nerr.txt
cat nerr.txt
expect_eq "nothing recorded: files" "" "$(ls n.* 2>/dev/null || true)"
MXPROF_AUTOSTART=1 MXPROF_OUTPUT=p.json LD_PRELOAD="$PRELOAD" sh -c 'exit 0'
MXPROF_AUTOSTART=1 MXPROF_OUTPUT=p.json LD_PRELOAD="$PRELOAD" /bin/true
expect_eq "LD_PRELOAD, nothing recorded: files" "" "$(ls p.* 2>/dev/null || true)"

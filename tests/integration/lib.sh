# Helpers sourced by integration scripts (see tests/run.sh for the
# environment they get).
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }

# skip REASON: the whole test cannot run here: one line, then exit 77,
# which tests/run.sh counts as skipped (automake's code for a skip).
skip() { echo "skip: $*"; exit 77; }

# skip_part REASON: a part of the test cannot run here; the rest goes on.
# One line, and the reason goes to $SKIPS (set by tests/run.sh), which
# run.sh shows on the test's line: a pass that left checks out says so.
skip_part() {
	echo "skip: $*"
	if [ -n "${SKIPS:-}" ]; then echo "$*" >>"$SKIPS"; fi
}

# wait_until [-p PID] [-t SECONDS] WHAT CONDITION: evaluates the shell
# CONDITION every 10 ms until it holds. Fails, naming WHAT, as soon as
# process PID has ended without it, or after SECONDS (default 300: ample
# on a loaded machine; a hang fails here rather than at run.sh's timeout).
wait_until() {
	local _wu_pid= _wu_limit=300 _wu_what _wu_end
	while [ $# -gt 2 ]; do
		case $1 in
		-p) _wu_pid=$2 && shift 2 ;;
		-t) _wu_limit=$2 && shift 2 ;;
		*) break ;;
		esac
	done
	_wu_what=$1 _wu_end=$((SECONDS + _wu_limit))
	until eval "$2"; do
		if [ -n "$_wu_pid" ] && ! kill -0 "$_wu_pid" 2>/dev/null; then
			eval "$2" && return 0
			fail "waiting for $_wu_what: process $_wu_pid ended first"
		fi
		[ "$SECONDS" -lt "$_wu_end" ] ||
			fail "waiting for $_wu_what: not there after $_wu_limit s"
		sleep 0.01
	done
}

# wait_status OUT CMD [ARGS...]: runs CMD with stdout in OUT.out and
# stderr in OUT.err, and prints the raw wait status (exit code << 8, or the
# signal that ended it), which a shell's $? cannot tell apart.
wait_status() {
	"${PYTHON3:-python3}" -S - "$@" <<'PYEOF'
import os, sys
out = sys.argv[1]
pid = os.fork()
if pid == 0:
    os.dup2(os.open(out + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
    os.dup2(os.open(out + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
    os.execv(sys.argv[2], sys.argv[2:])
print(os.waitpid(pid, 0)[1])
PYEOF
}

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
	if [ "$2" != "$3" ]; then fail "$1: expected '$2', got '$3'"; fi
	echo "ok: $1 = $3"
}

# tracesummary and jget run Python often (hundreds of times a suite): they
# use $PYTHON3 (tests/run.sh sets it to the interpreter python3 runs, so
# that a pyenv shim, a shell script in front of it, runs once) without
# the site module (-S: they need only the standard library).

# tracesummary TRACE > summary.json  (fails when the trace is invalid)
tracesummary() { "${PYTHON3:-python3}" -S "$ROOT/tests/tools/tracecheck.py" "$1"; }

# jq-like lookup in a JSON file with a Python expression on `d`:
#   jget summary.json 'd["spans"]["demo/step"]'
jget() { "${PYTHON3:-python3}" -S -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# row_count STATS SECTION NAME: prints the Total Count of a table row.
row_count() {
	awk -v sec="$2" -v name="$3" '
		$0 == sec { insec = 1; next }
		insec && /^$/ { insec = 0 }
		insec && index($0, name) == 1 {
			rest = substr($0, length(name) + 1)
			if (rest ~ /^ /) { split(rest, f, " "); print f[1]; exit }
		}' "$1"
}

# mxprof_command: sets MX to the mxprof command to run and SANPRE to the
# sanitizer runtime (empty in a normal build). In a sanitizer build the
# programs `mxprof run` starts need that runtime first in LD_PRELOAD; only
# mxprof's own environment gets it, through a wrapper script.
mxprof_command() {
	MX=$BUILD/mxprof
	SANPRE=
	if [ "$PRELOAD" != "$MXPROF_LIB" ]; then
		SANPRE=${PRELOAD% *}
		printf '#!/bin/sh\nLD_PRELOAD="%s${LD_PRELOAD:+ $LD_PRELOAD}" exec "%s" "$@"\n' \
			"$SANPRE" "$BUILD/mxprof" >"$WORK/mxprof-san"
		chmod +x "$WORK/mxprof-san"
		MX=$WORK/mxprof-san
	fi
}

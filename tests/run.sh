#!/usr/bin/env bash
# Runs the test suite and ends with one line:
# "N passed, N failed, N skipped".
#
#  - every $BUILD/tests/test_* is a cmocka suite; each of its tests counts,
#    one that calls cmocka's skip() as skipped;
#  - every tests/integration/*.sh is one test; it passes when it exits 0
#    and is skipped when it exits 77 (lib.sh's skip: it cannot run here),
#    with its reason shown ("skip NAME (reason)"). A pass that left some
#    checks out (lib.sh's skip_part) shows their reasons on its line.
#
# Integration scripts get, in the environment:
#   ROOT        the checkout
#   BUILD       the build folder (absolute)
#   MXPROF_LIB  the library to inject (absolute)
#   PRELOAD     what to put in LD_PRELOAD (the sanitizer runtime first, when
#               the build is a sanitizer build)
#   WORK        an empty scratch folder of its own
#   SANITIZER   asan, ubsan, tsan or empty
#   SKIPS       the file lib.sh's skip_part writes its reasons to
#   PYTHON3     the interpreter that python3 runs (lib.sh's helpers use it)
#   SLOW        1 for the long forms of the longest tests (see below)
# Their output goes to $BUILD/test-logs/NAME.log, shown when they fail.
# SLOW=1 runs the long forms of the tests that have one: more of the same,
# not other code paths; the default forms make the same checks in a
# fraction of the time. core_exact_tables: 10 M calls and a 1.3 GB trace
# (default 1 M, with the big-trace mark lowered); cli_merge: 300000
# threads and 100000 pids (default a tenth); core_fork_dump: three runs
# (default one); core_dump_signal: 20 blocking calls (default 6).
# ONLY=unit or ONLY=integration limits the run; so do name globs in TESTS
# (space-separated), e.g. TESTS='test_ring core_*'.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$ROOT/${BUILD:-build}" && pwd)
SANITIZER=${SANITIZER:-}
MXPROF_LIB=$BUILD/libmxprof.so
PRELOAD=$MXPROF_LIB
case "$SANITIZER" in
asan) PRELOAD="$(${CC:-cc} -print-file-name=libasan.so) $MXPROF_LIB"
	export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:abort_on_error=0 ;;
ubsan) PRELOAD="$(${CC:-cc} -print-file-name=libubsan.so) $MXPROF_LIB"
	export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ;;
tsan) export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ;;
esac
# The interpreter python3 runs, found once: lib.sh's helpers call it
# directly, not through a pyenv shim (about 0.3 s a call).
PYTHON3=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
[ -x "$PYTHON3" ] || PYTHON3=python3
export ROOT BUILD MXPROF_LIB PRELOAD SANITIZER PYTHON3
# selected NAME: is NAME picked by $TESTS (space-separated globs)?
selected() {
	local g found=1
	[ -z "${TESTS:-}" ] && return 0
	set -f # split the list without expanding the globs as paths
	for g in $TESTS; do
		case "$1" in $g) found=0 ;; esac
	done
	set +f
	return $found
}

logs=$BUILD/test-logs
rm -rf "$logs" && mkdir -p "$logs"
passed=0 failed=0 skipped=0 failures=()

if [ "${ONLY:-unit}" = unit ] || [ -z "${ONLY:-}" ]; then
	for t in "$BUILD"/tests/test_*; do
		[ -x "$t" ] || continue
		name=$(basename "$t")
		selected "$name" || continue
		out=$logs/$name.log
		start=$(date +%s)
		"$t" >"$out" 2>&1
		rc=$?
		secs=$(($(date +%s) - start))
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
		s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
		p=${p:-0} f=${f:-0} s=${s:-0}
		if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
		if [ "$f" -ne 0 ]; then
			failures+=("$name") && echo "FAIL $name" && tail -30 "$out"
		elif [ "$s" -ne 0 ]; then
			echo "ok   $name ($p tests, ${secs}s, $s skipped:$(sed -n 's/^\[  SKIPPED \] \([^0-9].*\)/ \1/p' "$out" | sort -u | tr -d '\n'))"
		else
			echo "ok   $name ($p tests, ${secs}s)"
		fi
	done
fi

if [ "${ONLY:-integration}" = integration ] || [ -z "${ONLY:-}" ]; then
	for t in "$ROOT"/tests/integration/*.sh; do
		[ -f "$t" ] && [ "$(basename "$t")" != lib.sh ] || continue
		name=$(basename "$t" .sh)
		selected "$name" || continue
		WORK=$(mktemp -d "${TMPDIR:-/tmp}/mxprof-test.XXXXXX")
		SKIPS=$logs/$name.skips
		export WORK SKIPS
		start=$(date +%s)
		# A test may ask for more than 600 s in a line
		# "# test-timeout: SECONDS" (the SLOW=1 soaks).
		limit=$(sed -n 's/^# test-timeout: \([0-9][0-9]*\)$/\1/p' "$t" | head -1)
		(cd "$WORK" && timeout "${limit:-600}" bash "$t") >"$logs/$name.log" 2>&1
		rc=$?
		secs=$(($(date +%s) - start))
		if [ $rc -eq 0 ]; then
			part=
			[ -s "$SKIPS" ] && part="; skipped: $(awk 'NR > 1 { printf "; " } { printf "%s", $0 }' "$SKIPS")"
			passed=$((passed + 1)) && echo "ok   $name (${secs}s$part)"
			rm -rf "$WORK"
		elif [ $rc -eq 77 ]; then
			why=$(sed -n 's/^skip: //p' "$logs/$name.log" | tail -1)
			skipped=$((skipped + 1)) && echo "skip $name (${why:-no reason given})"
			rm -rf "$WORK"
		else
			failed=$((failed + 1)) failures+=("$name")
			echo "FAIL $name (exit $rc, ${secs}s; scratch kept in $WORK)"
			tail -40 "$logs/$name.log"
		fi
	done
fi

[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

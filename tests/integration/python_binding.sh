# The Python binding (tools/python/mxprof) runs MXNet's diag/sum example,
# once with libmxprof.so preloaded and once loaded by the import; the tables
# have the expected rows with exact counts, in dumps(), in the stats file
# and in `mxprof report` of the trace.
. "$ROOT/tests/integration/lib.sh"
# In a sanitizer build the runtime must be loaded before the library.
if [ "$PRELOAD" != "$MXPROF_LIB" ]; then export LD_PRELOAD=${PRELOAD% *}; fi
PY=/usr/bin/python3
export PYTHONPATH=$ROOT/tools/python
SCRIPT=$ROOT/tests/integration/python_diag_sum.py

check() { # DIR
	local t=$1/dumps.txt
	expect_eq "$1: create_data" 3 "$(row_count "$t" example create_data)"
	expect_eq "$1: array" 3 "$(row_count "$t" example array)"
	expect_eq "$1: diag" 3 "$(row_count "$t" example diag)"
	expect_eq "$1: sum" 3 "$(row_count "$t" example sum)"
	expect_eq "$1: iteration frames" 3 "$(row_count "$t" example iteration)"
	expect_eq "$1: waitall events" 3 "$(row_count "$t" Events waitall)"
	expect_eq "$1: scope outer:" 1 "$(row_count "$t" Events outer:)"
	expect_eq "$1: scope outer:inner" 1 "$(row_count "$t" Events outer:inner)"
	expect_eq "$1: trace_value samples" 3 "$(row_count "$t" 'example (counters)' trace_value)"
	grep -q '^trace_value  *3  *15.0000  *15.0000  *15.0000$' "$t" ||
		fail "$1: trace_value row"
	# ops: 1, +4, -2, +1, -3 -> 1 5 3 4 1
	grep -q '^ops  *5  *1.0000  *5.0000  *2.8000$' "$t" || fail "$1: ops row"
	echo "ok: $1: counter rows (trace_value 15 x3; ops 1 5 3 4 1)"
	expect_eq "$1: done marker" 1 "$(row_count "$t" 'example (markers)' 'done')"
	expect_eq "$1: stats file diag" 3 "$(row_count "$1/trace_profile.stats.txt" example diag)"
	"$BUILD/mxprof" report "$1/trace_profile.json" > "$1/report.txt"
	cmp "$1/report.txt" "$1/trace_profile.stats.txt" || fail "$1: report differs"
	tracesummary "$1/trace_profile.json" > "$1/sum.json"
	expect_eq "$1: diag spans in the trace" 3 "$(jget "$1/sum.json" 'd["spans"]["example/diag"]')"
}

mkdir pre imp
(cd pre && LD_PRELOAD=$PRELOAD "$PY" "$SCRIPT" preloaded > dumps.txt)
check pre
# Loaded by the import. The library's initial-exec TLS must fit glibc's
# surplus for libraries loaded after start; the tunable gives it room, so
# that the binding itself is checked here whatever the library's TLS size.
(cd imp && GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536 \
	"$PY" "$SCRIPT" imported > dumps.txt)
check imp

# Without a library the import fails with one clear message.
set +e
MXPROF_LIB=/nonexistent/libmxprof.so LD_LIBRARY_PATH=/nonexistent \
	"$PY" -c 'import mxprof.profiler' 2> err.txt
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "import without a library succeeded"
grep -q 'ImportError: mxprof: cannot load libmxprof.so' err.txt || fail "$(tail -3 err.txt)"
echo "ok: import without a library: ImportError"


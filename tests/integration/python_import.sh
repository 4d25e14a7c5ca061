# The Python binding loaded by the import, without GLIBC_TUNABLES, after
# numpy, as a user would write it. glibc keeps only a small surplus of
# static TLS for libraries loaded after start, so libmxprof.so's
# initial-exec TLS has to fit in it for this to work.
. "$ROOT/tests/integration/lib.sh"
# In a sanitizer build the runtime must be loaded before the library.
if [ "$PRELOAD" != "$MXPROF_LIB" ]; then export LD_PRELOAD=${PRELOAD% *}; fi
PY=/usr/bin/python3
export PYTHONPATH=$ROOT/tools/python
SCRIPT=$ROOT/tests/integration/python_diag_sum.py

mkdir imp2
set +e
(cd imp2 && "$PY" "$SCRIPT" imported > dumps.txt 2> err.txt)
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
	tail -1 imp2/err.txt
	tls=$(readelf -lW "$MXPROF_LIB" | awk '$1 == "TLS" { print $6 }')
	fail "import-loaded without GLIBC_TUNABLES: libmxprof.so (TLS memsz $tls) cannot be loaded after start"
fi
expect_eq "diag" 3 "$(row_count imp2/dumps.txt example diag)"
expect_eq "iteration frames" 3 "$(row_count imp2/dumps.txt example iteration)"
expect_eq "stats file diag" 3 "$(row_count imp2/trace_profile.stats.txt example diag)"

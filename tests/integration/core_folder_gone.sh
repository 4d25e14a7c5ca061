# The output folder is removed while the program records (rm -rf of a run
# folder): one line, and the trace and tables, every record in each, go to
# a private folder in $TMPDIR as for an output that cannot be written.
# core_counts 2 100 SYNC_DIR: the folder goes at the half-way point, after
# the journal was created in it.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_counts
expected=$("$prog" 2 100)
cd "$WORK"
mkdir run sync tmp
TMPDIR=$WORK/tmp MXPROF_AUTOSTART=1 MXPROF_OUTPUT=$WORK/run/t.json LD_PRELOAD="$PRELOAD" \
	"$prog" 2 100 sync >out.txt 2>err.txt &
pid=$!
wait_until -p "$pid" "the half-way point and the journal" \
	'[ -e sync/half ] && [ -s run/t.json.journal ]'
rm -rf run
touch sync/go
wait "$pid"
expect_eq "output" "$expected" "$(cat out.txt)"
dir=$(ls tmp)
case $dir in mxprof-??????) ;; *) fail "fallback folder '$dir'" ;; esac
expect_eq "message" "mxprof: $WORK/run was removed; writing $WORK/tmp/$dir/t.json instead" \
	"$(cat err.txt)"
expect_eq "files" "t.json t.stats.txt" "$(ls "tmp/$dir" | tr '\n' ' ' | sed 's/ $//')"
tracesummary "tmp/$dir/t.json" >s.json
expect_eq "trace steps" 200 "$(jget s.json 'd["spans"]["core/step"]')"
expect_eq "table steps" 200 "$(row_count "tmp/$dir/t.stats.txt" core step)"
expect_eq "the folder stays removed" no "$([ -e run ] && echo yes || echo no)"

# One Task, one Frame and one Event shared by 4 threads whose passes
# overlap, the Task used three deep and the Frame two deep on each thread:
# every pass is its own slice, nested per thread, and counted exactly in
# the trace and the tables; the program's output is unchanged.
. "$ROOT/tests/integration/lib.sh"
prog=$BUILD/programs/core_shared_spans
T=4 N=2000

expected=$("$prog" $T $N)
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/s.json" LD_PRELOAD="$PRELOAD" \
	"$prog" $T $N >out.txt
expect_eq "program output" "$expected" "$(cat out.txt)"

tracesummary s.json >s.sum
expect_eq "shared task slices" $((T * N * 3)) "$(jget s.sum 'd["spans"]["shared/shared"]')"
expect_eq "event slices" $((T * N)) "$(jget s.sum 'd["spans"]["Events/ev"]')"
expect_eq "frame slices" $((T * N * 2)) "$(jget s.sum 'd["spans"]["shared/f"]')"
expect_eq "dropped" 0 "$(jget s.sum 'd["dropped"]')"
expect_eq "threads with spans" "$T" "$(jget s.sum 'sum(1 for t in d["threads"].values() if t["spans"])')"
expect_eq "spans per thread" "$((6 * N))" \
	"$(jget s.sum '",".join(sorted(set(str(t["spans"]) for t in d["threads"].values() if t["spans"])))')"
expect_eq "nesting depth per thread (task > task > ev > task)" 4 \
	"$(jget s.sum '",".join(sorted(set(str(v) for v in d["max_depth"].values())))')"
expect_eq "table shared" $((T * N * 3)) "$(row_count s.stats.txt shared shared)"
expect_eq "table ev" $((T * N)) "$(row_count s.stats.txt Events ev)"
expect_eq "table f" $((T * N * 2)) "$(row_count s.stats.txt shared f)"

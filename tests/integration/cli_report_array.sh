# mxprof report reads the JSON array form of the Chrome trace format (a
# bare list of events, as nvprof and many tools write it): the tables are
# those of the same events in the object form.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

"$MX" run -q -o t.json -- "$PROG" -u 200
python3 -c '
import json
d = json.load(open("t.json"))
json.dump(d["traceEvents"], open("arr.json", "w"))
# The format allows the closing bracket to be missing.
open("open.json", "w").write(json.dumps(d["traceEvents"])[:-1])'
gzip -c arr.json > arr.json.gz

"$MX" report arr.json > arr.txt
cmp arr.txt t.stats.txt || fail "report of the array form differs from t.stats.txt"
echo "ok: report arr.json is byte-identical to t.stats.txt"
"$MX" report arr.json.gz > arrz.txt
cmp arrz.txt t.stats.txt || fail "report of the gzip array form differs"
echo "ok: report arr.json.gz is byte-identical to t.stats.txt"
expect_eq "array step count" 10 "$(row_count arr.txt cli step)"
"$MX" report open.json > open.txt 2> open.err
cmp open.txt t.stats.txt || fail "report of the unclosed array form differs"
expect_eq "unclosed array: warnings" 1 "$(wc -l < open.err)"

# A scalar or a list of non-events is still not a trace.
echo '42' > num.json
"$MX" report num.json 2> num.err && fail "a number was read as a trace"
grep -q "not an mxprof trace" num.err || fail "num.json: $(cat num.err)"
echo "ok: a number is refused"

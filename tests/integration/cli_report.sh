# mxprof report on real runs of tests/programs/cli_tasks: the tables are
# byte-identical to the .stats.txt the library wrote, in every format the
# options select, for plain and gzip traces.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

# 10 steps, 5 loads, 2 epochs, 3 evt, counter queue set 3 times, 4 marks.
"$MX" run -q -o t.json -- "$PROG" -u 200
"$MX" run -q -o tz.json.gz -- "$PROG" -u 200 -s 7 -l 2
[ -s t.json ] || fail "no trace"
[ -s tz.json.gz ] || fail "no gzip trace"
tracesummary t.json > sum.json

"$MX" report t.json > r.txt
cmp r.txt t.stats.txt || fail "report differs from the library's t.stats.txt"
echo "ok: report t.json is byte-identical to t.stats.txt"
"$MX" report tz.json.gz > rz.txt
cmp rz.txt tz.stats.txt || fail "report differs from tz.stats.txt"
echo "ok: report tz.json.gz is byte-identical to tz.stats.txt"

expect_eq "step count" 10 "$(row_count r.txt cli step)"
expect_eq "load count" 5 "$(row_count r.txt cli load)"
expect_eq "epoch count" 2 "$(row_count r.txt cli epoch)"
expect_eq "evt count" 3 "$(row_count r.txt Events evt)"
expect_eq "queue count" 3 "$(row_count r.txt 'cli (counters)' queue)"
expect_eq "mark count" 4 "$(row_count r.txt 'cli (markers)' mark)"
expect_eq "gz step count" 7 "$(row_count rz.txt cli step)"
expect_eq "gz load count" 2 "$(row_count rz.txt cli load)"
grep -q '^queue  *3  *10.0000  *30.0000  *20.0000$' r.txt ||
	fail "counter row values"
echo "ok: queue min 10, max 30, avg 20"
expect_eq "dropped line" "Dropped records: 0" "$(tail -1 r.txt)"

# The step total in the table equals the sum of the trace's durations.
want=$(python3 -c '
import json
d = json.load(open("t.json"))
ns = sum(round(e["dur"] * 1000) for e in d["traceEvents"]
         if e["ph"] == "X" and e["name"] == "step")
print("%.4f" % (ns / 1e6))')
got=$(awk '$1 == "step" { print $3 }' r.txt)
expect_eq "step total (ms)" "$want" "$got"

# json
"$MX" report --format json t.json > r.json
expect_eq "json step count" 10 "$(jget r.json 'd["Time"]["cli"]["step"]["Total Count"]')"
expect_eq "json load count" 5 "$(jget r.json 'd["Time"]["cli"]["load"]["Total Count"]')"
expect_eq "json evt count" 3 "$(jget r.json 'd["Time"]["Events"]["evt"]["Total Count"]')"
expect_eq "json step total" "$want" "$(jget r.json '"%.4f" % d["Time"]["cli"]["step"]["Total Time"]')"

# csv
"$MX" report --format csv t.json > r.csv
expect_eq "csv header" "section,kind,name,count,total,min,max,avg,self,percent,errors" "$(head -1 r.csv)"
expect_eq "csv step" 10 "$(awk -F, '$3 == "\"step\"" { print $4 }' r.csv)"
expect_eq "csv mark" 4 "$(awk -F, '$3 == "\"mark\"" { print $4 }' r.csv)"
expect_eq "csv rows" 7 "$(wc -l < r.csv)"

# sorting, top, category
"$MX" report --sort count --top 1 --category cli t.json > top.txt
expect_eq "top 1 by count" step "$(awk '/^----/ { getline; print $1; exit }' top.txt)"
expect_eq "top 1 has no load row" "" "$(row_count top.txt cli load)"
"$MX" report --sort count --ascending --category cli t.json > asc.txt
expect_eq "ascending by count first" epoch "$(awk '/^----/ { getline; print $1; exit }' asc.txt)"
if grep -q '^Events' asc.txt; then fail "--category cli printed Events"; fi
echo "ok: --category cli leaves Events out"

# two files are aggregated together
"$MX" report t.json tz.json.gz > both.txt
expect_eq "two files: step count" 17 "$(row_count both.txt cli step)"

# usage errors exit 2 before reading anything
set +e
"$MX" report --sort bogus t.json 2> err.txt; rc=$?
set -e
expect_eq "bad --sort exit" 2 "$rc"
grep -q "usage: mxprof report" err.txt || fail "no usage line"
set +e
"$MX" report 2>/dev/null; rc=$?
set -e
expect_eq "no file exit" 2 "$rc"
"$MX" report --help | grep -q -- "--category" || fail "help text"
echo "ok: usage errors and --help"

# Events without a group take their cat as the section (GPU activity);
# a capped timeline is stated on stderr; the dropped count is carried.
cat > gpu.json <<'JSON'
{"schemaVersion":1,"baseTimeNanoseconds":1,"traceEvents":[
{"ph":"X","cat":"kernel","name":"sgemm","pid":0,"tid":7,"ts":1.000,"dur":2.000,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"kernel","name":"sgemm","pid":0,"tid":7,"ts":4.000,"dur":4.000,"args":{"device":0,"stream":7}},
{"ph":"s","cat":"ac2g","name":"ac2g","pid":1,"tid":1,"ts":0.500,"id":5},
{"ph":"X","cat":"c_api","name":"deflate","pid":1,"tid":1,"ts":0.000,"dur":1.500,"args":{"group":"C API (libz.so.1)","error":1}},
{"ph":"X","cat":"c_api","name":"deflate","pid":1,"tid":1,"ts":2.000,"dur":0.500,"args":{"group":"C API (libz.so.1)","error":0}}],
"mxprof":{"droppedRecords":12,"timelineTruncated":true}}
JSON
"$MX" report --format csv gpu.json > gpu.csv 2> gpu.err
expect_eq "kernel row" '"kernel",time_ms,"sgemm",2,0.006000,0.002000,0.004000,0.003000' \
	"$(grep '"sgemm"' gpu.csv | cut -d, -f1-8)"
expect_eq "deflate row count" 2 "$(grep '"deflate"' gpu.csv | cut -d, -f4)"
expect_eq "deflate errors" 1 "$(grep '"deflate"' gpu.csv | cut -d, -f11)"
grep -q 'gpu.json: the timeline was capped' gpu.err || fail "no capped warning: $(cat gpu.err)"
expect_eq "dropped in the table" "Dropped records: 12" "$("$MX" report gpu.json 2>/dev/null | tail -1)"

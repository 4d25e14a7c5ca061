# mxprof diff: two runs of the same program, the second with each "step"
# 5 ms slower: "step" is the first row, with its counts and a ratio > 3.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

"$MX" run -q -o a.json -- "$PROG" -u 200 2>/dev/null
"$MX" run -q -o b.json -- "$PROG" -u 5200 2>/dev/null

"$MX" diff a.json b.json > d.txt
cat d.txt
first=$(awk '/^----/ { getline; print; exit }' d.txt)
set -- $first
expect_eq "first row" step "$1"
expect_eq "its section" cli "$2"
expect_eq "count A" 10 "$3"
expect_eq "count B" 10 "$4"
delta=$7
# Sleeps never end early; noise only makes A longer, so allow 1 ms a step.
python3 -c "import sys; sys.exit(0 if float('$delta') >= 40.0 else 1)" ||
	fail "step delta $delta ms is not at least 10 x 4 ms"
echo "ok: delta $delta ms >= 40"
python3 -c "import sys; sys.exit(0 if float('$8') > 3.0 else 1)" ||
	fail "ratio $8 is not above 3"
echo "ok: ratio $8 > 3"
grep -q '^mark  *cli (markers)  *4  *4 ' d.txt || fail "marker row"
grep -q '^queue  *cli (counters)  *3  *3 ' d.txt || fail "counter row"
echo "ok: marker and counter rows"

# Totals in the diff are those of the traces.
python3 - <<'PY'
import json
def total(f):
    d = json.load(open(f))
    return sum(round(e["dur"] * 1000) for e in d["traceEvents"]
               if e["ph"] == "X" and e["name"] == "step") / 1e6
a, b = total("a.json"), total("b.json")
line = [l for l in open("d.txt") if l.startswith("step ")][0].split()
assert line[4] == "%.4f" % a and line[5] == "%.4f" % b, (line, a, b)
assert line[6] == "%+.4f" % (b - a), (line, b - a)
print("ok: step totals %.4f -> %.4f ms" % (a, b))
PY

"$MX" diff --format csv a.json b.json > d.csv
expect_eq "csv header" "Section,Name,Count A,Count B,Time A (ms),Time B (ms),Delta (ms),Ratio" "$(head -1 d.csv)"
expect_eq "csv first row" "cli,step,10,10" "$(sed -n 2p d.csv | cut -d, -f1-4)"

"$MX" diff --format json a.json b.json > d.json
expect_eq "json first row" step "$(jget d.json 'd["rows"][0]["name"]')"
expect_eq "json count_b" 10 "$(jget d.json 'd["rows"][0]["count_b"]')"
expect_eq "json rows" 6 "$(jget d.json 'len(d["rows"])')"

"$MX" diff --top 1 a.json b.json > top.txt
expect_eq "--top 1 rows" 1 "$(awk '/^----/ { n = 1; next } n && NF { c++ } END { print c }' top.txt)"

set +e
"$MX" diff a.json 2>/dev/null; rc=$?
set -e
expect_eq "one file: exit" 2 "$rc"
set +e
"$MX" diff a.json missing.json 2>/dev/null; rc=$?
set -e
expect_eq "missing file: exit" 1 "$rc"

# Output that cannot be written: one line with the reason, exit 1.
for fmt in table csv json; do
	set +e
	"$MX" diff --format $fmt a.json b.json > /dev/full 2> err.txt; rc=$?
	set -e
	expect_eq "$fmt to a full disk: exit" 1 "$rc"
	expect_eq "$fmt to a full disk: message" \
		"mxprof diff: writing the comparison: No space left on device" "$(cat err.txt)"
done
set +e
"$MX" diff --help > /dev/full 2> err.txt; rc=$?
set -e
expect_eq "help to a full disk: exit" 1 "$rc"
expect_eq "help to a full disk: message" \
	"mxprof diff: writing the help: No space left on device" "$(cat err.txt)"

# JSON output is UTF-8: a long name is cut between characters, and bytes
# that are not UTF-8 become U+FFFD.
python3 -c '
import json
ev = [{"ph": "X", "name": "\u00e9" * 600, "dur": 1.5, "args": {"group": "g"}}]
open("utf.json", "w", encoding="utf-8").write(json.dumps({"traceEvents": ev}, ensure_ascii=False))'
"$MX" diff --format json utf.json utf.json > u.json
expect_eq "long UTF-8 name: characters kept" 511 \
	"$(python3 -c 'import json; print(len(json.load(open("u.json", encoding="utf-8"))["rows"][0]["name"]))')"
printf '{"traceEvents":[{"ph":"X","name":"a\377\303b\342\202","dur":1,"args":{"group":"g\355\240\200"}}]}' > bad8.json
"$MX" diff --format json bad8.json bad8.json > u.json
expect_eq "bytes that are not UTF-8" '["g\ufffd\ufffd\ufffd", "a\ufffd\ufffdb\ufffd\ufffd"]' \
	"$(python3 -c 'import json; r = json.load(open("u.json", encoding="utf-8"))["rows"][0]; print(json.dumps([r["section"], r["name"]]))')"

# Totals stop at the int64 limit (about 9.2e12 ms) instead of wrapping.
printf '{"traceEvents":[{"ph":"X","name":"a","dur":9000000000000000},{"ph":"X","name":"a","dur":9000000000000000}]}' > huge.json
printf '{"traceEvents":[{"ph":"X","name":"a","dur":1}]}' > tiny.json
"$MX" diff --format csv tiny.json huge.json > h.csv
expect_eq "saturated total" ",a,1,2,0.0010,9223372036854.7754,9223372036854.7754,9223372036854776.000" \
	"$(sed -n 2p h.csv)"

# mxprof diff: two runs of the same program, the second with each "step"
# 5 ms slower: "step" has its counts, and its totals, delta and ratio are
# those of the traces. Then two made traces whose "step" totals differ by a
# known factor: the largest increase comes first, with its exact delta and
# ratio (no check here depends on how long a sleep took).
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

"$MX" run -q -o a.json -- "$PROG" -u 200 2>/dev/null
"$MX" run -q -o b.json -- "$PROG" -u 5200 2>/dev/null

"$MX" diff a.json b.json > d.txt
cat d.txt
row=$(grep '^step ' d.txt)
set -- $row
expect_eq "step: its section" cli "$2"
expect_eq "step: count A" 10 "$3"
expect_eq "step: count B" 10 "$4"
grep -q '^mark  *cli (markers)  *4  *4 ' d.txt || fail "marker row"
grep -q '^queue  *cli (counters)  *3  *3 ' d.txt || fail "counter row"
echo "ok: marker and counter rows"

# Totals in the diff are those of the traces: summed in nanoseconds, as
# the delta and the ratio are (a delta of ms taken from two rounded
# totals can land on the other side of a rounding tie).
python3 - <<'PY'
import json
def total_ns(f):
    d = json.load(open(f))
    return sum(round(e["dur"] * 1000) for e in d["traceEvents"]
               if e["ph"] == "X" and e["name"] == "step")
an, bn = total_ns("a.json"), total_ns("b.json")
a, b = an / 1e6, bn / 1e6
line = [l for l in open("d.txt") if l.startswith("step ")][0].split()
assert line[4] == "%.4f" % a and line[5] == "%.4f" % b, (line, a, b)
assert line[6] == "%+.4f" % ((bn - an) / 1e6), (line, bn - an)
assert line[7] == "%.3f" % (bn / an), (line, bn / an)
print("ok: step totals %.4f -> %.4f ms, ratio %s" % (a, b, line[7]))
PY

# Made traces: "step" 10 x 1 ms in A, 10 x 3.5 ms in B (ratio 3.5, delta
# +25 ms); "load" 2 ms -> 3 ms; "mark" the same in both; "gone" only in A
# (its delta is negative: last); "new" only in B (A is 0: no ratio).
python3 - <<'PY'
import json
def trace(path, rows):
    ev, ts = [], 0
    for name, n, dur in rows:
        for _ in range(n):
            ev.append({"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": ts,
                       "dur": dur, "args": {"group": "made"}})
            ts += dur + 1
    json.dump({"traceEvents": ev}, open(path, "w"))
trace("ma.json", [("step", 10, 1000), ("load", 2, 1000), ("mark", 4, 250),
                  ("gone", 1, 500)])
trace("mb.json", [("step", 10, 3500), ("load", 3, 1000), ("mark", 4, 250),
                  ("new", 2, 100)])
PY
"$MX" diff ma.json mb.json > md.txt
cat md.txt
expect_eq "made: rows, largest increase first" \
	"step made 10 10 10.0000 35.0000 +25.0000 3.500|load made 2 3 2.0000 3.0000 +1.0000 1.500|new made 0 2 0.0000 0.2000 +0.2000 -|mark made 4 4 1.0000 1.0000 +0.0000 1.000|gone made 1 0 0.5000 0.0000 -0.5000 0.000" \
	"$(awk '/^----/ { n = 1; next } n && NF { $1 = $1; print }' md.txt | paste -sd '|')"

"$MX" diff --format csv a.json b.json > d.csv
expect_eq "csv header" "Section,Name,Count A,Count B,Time A (ms),Time B (ms),Delta (ms),Ratio" "$(head -1 d.csv)"
expect_eq "csv step row" "cli,step,10,10" "$(grep '^cli,step,' d.csv | cut -d, -f1-4)"
"$MX" diff --format csv ma.json mb.json > md.csv
expect_eq "csv first row (made)" "made,step,10,10,10.0000,35.0000,25.0000,3.500" "$(sed -n 2p md.csv)"

"$MX" diff --format json a.json b.json > d.json
expect_eq "json rows" 6 "$(jget d.json 'len(d["rows"])')"
expect_eq "json step count_b" 10 "$(jget d.json '[r for r in d["rows"] if r["name"] == "step"][0]["count_b"]')"
"$MX" diff --format json ma.json mb.json > md.json
expect_eq "json first row (made)" "step 10 3.5" \
	"$(jget md.json '" ".join(str(d["rows"][0][k]) for k in ("name", "count_b", "ratio"))')"
expect_eq "json: no ratio where A is 0" None "$(jget md.json '[r for r in d["rows"] if r["name"] == "new"][0]["ratio"]')"

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

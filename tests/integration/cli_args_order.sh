# Options after file names (GNU argument order) work for every command that
# takes files, with the same result as before them; `run` keeps everything
# after its program for the program.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

"$MX" run -q -o a.json -- "$PROG" -u 200
"$MX" run -q -o b.json -- "$PROG" -u 200 -s 7 -l 2

"$MX" report --sort avg --top 5 a.json > before.txt
"$MX" report a.json --sort avg --top 5 > after.txt
cmp before.txt after.txt || fail "report a.json --sort avg --top 5 differs"
echo "ok: report FILE --sort avg --top 5"

"$MX" report --format csv --category cli a.json > before.csv
"$MX" report a.json --format csv --category cli > after.csv
cmp before.csv after.csv || fail "report FILE --format csv --category differs"
expect_eq "csv rows of domain cli" 6 "$(wc -l < after.csv)"

"$MX" diff --top 3 a.json b.json > before.diff
"$MX" diff a.json b.json --top 3 > after.diff
cmp before.diff after.diff || fail "diff A B --top 3 differs"
echo "ok: diff A B --top 3"

"$MX" merge a.json b.json -o m.json > merge.out
[ -s m.json ] || fail "merge A B -o OUT wrote no m.json"
echo "ok: merge A B -o OUT"

"$MX" recover a.json.journal -o x.json 2> rec.err && fail "recover of a missing journal succeeded"
grep -q "a.json.journal" rec.err || fail "recover FILE -o OUT: $(cat rec.err)"
echo "ok: recover JOURNAL -o OUT parses -o"

# run: the program's own options stay the program's.
"$MX" run -q -o c.json -- "$PROG" -u 200 -s 3 > /dev/null
expect_eq "run passes -s 3 to the program" 3 "$(row_count c.stats.txt cli step)"

# mxprof report on bad input: each case gives one clear line and exit 1,
# or partial tables with one warning and exit 0; never a crash. A 2 GiB
# trace is read in flat memory.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
GEN=$ROOT/tests/bench/report_gen.py

# report_err FILE: runs report, stores the status in rc and stderr in err.txt
report_err() {
	set +e
	"$MX" report "$@" > out.txt 2> err.txt
	rc=$?
	set -e
	if [ "$rc" -gt 2 ]; then fail "report $* crashed (status $rc)"; fi
	expect_eq "one line on stderr for $*" 1 "$(wc -l < err.txt)"
}

: > empty.json
report_err empty.json
expect_eq "empty: exit" 1 "$rc"
grep -q 'empty.json: empty file, not a trace$' err.txt || fail "empty: $(cat err.txt)"

report_err missing.json
expect_eq "missing: exit" 1 "$rc"
grep -q 'missing.json: No such file or directory$' err.txt || fail "missing: $(cat err.txt)"

mkdir adir
report_err adir
expect_eq "directory: exit" 1 "$rc"

echo '{"name": "not a trace", "values": [1, 2, 3]}' > other.json
report_err other.json
expect_eq "non-trace JSON: exit" 1 "$rc"
grep -q 'not an mxprof trace (no traceEvents list)$' err.txt || fail "non-trace: $(cat err.txt)"

echo '[{"ph":"X"}]' > array.json
report_err array.json
expect_eq "array top level: exit" 1 "$rc"

printf '{"traceEvents":[{"ph":"X","name":"a",,}]}' > corrupt.json
report_err corrupt.json
expect_eq "corrupt: exit" 1 "$rc"
grep -q 'corrupt.json: not valid JSON at byte [0-9]* (' err.txt || fail "corrupt: $(cat err.txt)"

head -c 4096 /dev/urandom > random.json
report_err random.json
expect_eq "random bytes: exit" 1 "$rc"

# A real trace, then cut short in the middle of an event.
"$MX" run -q -o t.json -- "$BUILD/programs/cli_tasks" -u 10 -s 40 2>/dev/null
cut=$(python3 -c '
import sys
d = open("t.json", "rb").read()
# cut inside the 21st "step" event
i = -1
for _ in range(21):
    i = d.index(b"\"name\":\"step\"", i + 1)
print(i + 5)')
head -c "$cut" t.json > cut.json
report_err cut.json
expect_eq "truncated: exit" 0 "$rc"
expect_eq "truncated: warning" \
	"mxprof report: cut.json: truncated at byte $cut; tables cover the events before it" \
	"$(cat err.txt)"
expect_eq "truncated: steps before the cut" 20 "$(row_count out.txt cli step)"

# The same cut with NUL bytes after it (a file extended before written).
python3 -c '
import sys
d = open("cut.json", "rb").read()
open("nul.json", "wb").write(d + b"\0" * 65536)'
report_err nul.json
expect_eq "NUL tail: exit" 0 "$rc"
grep -q "truncated at byte $cut;" err.txt || fail "NUL tail: $(cat err.txt)"
expect_eq "NUL tail: steps" 20 "$(row_count out.txt cli step)"

# gzip: whole, cut short, and cut before any data.
gzip -c t.json > t.json.gz
"$MX" report t.json.gz > whole.txt
cmp whole.txt t.stats.txt || fail "gzip trace: tables differ"
echo "ok: gzip trace gives the library's tables"
gz=$(stat -c %s t.json.gz)
head -c $((gz / 2)) t.json.gz > half.json.gz
report_err half.json.gz
expect_eq "truncated gzip: exit" 0 "$rc"
grep -q 'half.json.gz: truncated at byte [0-9]*; tables cover the events before it$' err.txt ||
	fail "truncated gzip: $(cat err.txt)"
head -c 12 t.json.gz > tiny.json.gz
report_err tiny.json.gz
expect_eq "gzip header only: exit" 1 "$rc"
grep -q 'cut short before any data' err.txt || fail "gzip header only: $(cat err.txt)"

# A 2 GiB trace, read in flat memory. The file is written from one block
# repeated, so it takes seconds; it is removed afterwards.
python3 "$GEN" big.json 2G > gen.json
blocks=$(jget gen.json 'd["blocks"]')
/usr/bin/time -v "$MX" report big.json > big.txt 2> time.txt
rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' time.txt)
secs=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' time.txt)
rm -f big.json
echo "2 GiB report: max RSS ${rss} kB, wall ${secs}"
[ "$rss" -lt 51200 ] || fail "max RSS ${rss} kB is not under 50 MB"
echo "ok: max RSS under 50 MB"
expect_eq "2 GiB: step count" $((blocks * 20)) "$(row_count big.txt demo step)"
expect_eq "2 GiB: deflate count" $((blocks * 20)) "$(row_count big.txt 'C API (libz.so.1)' deflate)"
expect_eq "2 GiB: dropped" "Dropped records: 7" "$(tail -1 big.txt)"

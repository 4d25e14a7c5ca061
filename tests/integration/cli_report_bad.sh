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

echo '[1, 2, 3]' > array.json
report_err array.json
expect_eq "array of numbers: exit" 1 "$rc"
grep -q 'neither an object nor a list of events)$' err.txt || fail "array: $(cat err.txt)"

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

# gzip through a pipe, which cannot be peeked at: the same tables.
cat t.json.gz | "$MX" report /dev/stdin > piped.txt
cmp piped.txt t.stats.txt || fail "gzip trace from a pipe: tables differ"
echo "ok: gzip trace from a pipe gives the library's tables"
cat t.json | "$MX" report /dev/stdin > piped.txt
cmp piped.txt t.stats.txt || fail "plain trace from a pipe: tables differ"
echo "ok: plain trace from a pipe gives the library's tables"

# report_to OUT ARGS: runs report with stdout to OUT, stores the status in
# rc and stderr in err.txt.
report_to() {
	local out=$1
	shift
	set +e
	"$MX" report "$@" > "$out" 2> err.txt
	rc=$?
	set -e
}

# Output that cannot be written: one line with the reason, exit 1; also
# when the tables are larger than stdio's buffer, and for --help.
python3 -c '
import json
ev = [{"ph": "X", "name": "n%d" % i, "cat": "c", "pid": 1, "tid": 1, "ts": i,
       "dur": 1.5, "args": {"group": "g%d" % (i % 7)}} for i in range(20000)]
json.dump({"traceEvents": ev}, open("many.json", "w"))'
for f in t.json many.json; do
	report_to /dev/full "$f"
	expect_eq "$f to a full disk: exit" 1 "$rc"
	expect_eq "$f to a full disk: message" \
		"mxprof report: writing the tables: No space left on device" "$(cat err.txt)"
done
set +e
"$MX" report t.json > out.txt 2> err.txt >&-
rc=$?
set -e
expect_eq "closed stdout: exit" 1 "$rc"
expect_eq "closed stdout: message" \
	"mxprof report: writing the tables: Bad file descriptor" "$(cat err.txt)"
for cmd in "report --help" "--help" "--version" "help report" "run --help"; do
	set +e
	"$MX" $cmd > /dev/full 2> err.txt
	rc=$?
	set -e
	expect_eq "$cmd to a full disk: exit" 1 "$rc"
	expect_eq "$cmd to a full disk: one line" 1 "$(wc -l < err.txt)"
	grep -q '^mxprof.*: writing the .*: No space left on device$' err.txt ||
		fail "$cmd to a full disk: $(cat err.txt)"
done

# Numbers out of range: a counter value that does not fit in 64 bits fails
# the report (no prefix of it is used); a dur too large for the fast path
# is still exact; totals stop at the int64 limit instead of wrapping.
for v in 1e19 1e300 -7e30 99999999999999999999 -9223372036854775809; do
	printf '{"traceEvents":[{"ph":"C","name":"c","group":"g","args":{"value":%s}}]}' "$v" > v.json
	report_err --format csv v.json
	expect_eq "counter value $v: exit" 1 "$rc"
	expect_eq "counter value $v: message" \
		"mxprof report: v.json: the value of 'c' does not fit in 64 bits" "$(cat err.txt)"
done
printf '{"traceEvents":[{"ph":"C","name":"c","group":"g","args":{"value":-9223372036854775808}},{"ph":"C","name":"c","group":"g","args":{"value":2.9e3}}]}' > v.json
"$MX" report --format csv v.json > out.txt
expect_eq "extreme counter values" \
	'"g (counters)",counter,"c",2,-9223372036854772736.000000,-9223372036854775808.000000,2900.000000,-4611686018427386368.000000,,,' \
	"$(tail -1 out.txt)"
printf '{"traceEvents":[{"ph":"X","name":"a","dur":9000000000000000}]}' > d9.json
"$MX" report --format csv d9.json > out.txt
expect_eq "dur of 9e15 us" \
	'"(none)",time_ms,"a",1,9000000000000.000000,9000000000000.000000,9000000000000.000000,9000000000000.000000,9000000000000.000000,100.00,' \
	"$(tail -1 out.txt)"
printf '{"traceEvents":[{"ph":"X","name":"a","dur":92233720368547758}]}' > d9.json
report_err d9.json
expect_eq "dur past 64 bits of ns: exit" 1 "$rc"
expect_eq "dur past 64 bits of ns: message" \
	"mxprof report: d9.json: the dur of 'a' does not fit in 64 bits" "$(cat err.txt)"
printf '{"traceEvents":[{"ph":"C","name":"c","group":"g","args":{"value":9223372036854775807}},{"ph":"C","name":"c","group":"g","args":{"value":9223372036854775807}}]}' > o.json
"$MX" report --format csv o.json > out.txt
expect_eq "saturated counter total" \
	'"g (counters)",counter,"c",2,9223372036854775808.000000,9223372036854775808.000000,9223372036854775808.000000,4611686018427387904.000000,,,' \
	"$(tail -1 out.txt)"

# Names: a long non-ASCII name is cut between characters, and bytes that
# are not UTF-8 become U+FFFD, so that the JSON tables always parse.
python3 -c '
import json
ev = [{"ph": "X", "name": "\u00e9" * 600, "dur": 1.5, "args": {"group": "g"}}]
open("utf.json", "w", encoding="utf-8").write(json.dumps({"traceEvents": ev}, ensure_ascii=False))'
"$MX" report --format json utf.json > u.json
expect_eq "long UTF-8 name: characters kept" 511 \
	"$(python3 -c 'import json; print(len(list(json.load(open("u.json", encoding="utf-8"))["Time"]["g"])[0]))')"
printf '{"traceEvents":[{"ph":"X","name":"a\377\303b\342\202","dur":1,"args":{"group":"g\355\240\200"}}]}' > bad8.json
"$MX" report --format json bad8.json > u.json
expect_eq "bytes that are not UTF-8" '{"g\ufffd\ufffd\ufffd": ["a\ufffd\ufffdb\ufffd\ufffd"]}' \
	"$(python3 -c 'import json; d = json.load(open("u.json", encoding="utf-8"))["Time"]; print(json.dumps({k: list(v) for k, v in d.items()}))')"

# A string longer than 1 MiB is refused before yajl's cost for it grows
# with its square; 1 MiB still reads.
for mib in 1 16; do
	python3 -c "
import sys
f = open('long$mib.json', 'w')
f.write('{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"' + 'a' * ($mib << 20) + '\",\"dur\":1}]}')"
done
report_to out.txt long1.json
expect_eq "1 MiB name: exit" 0 "$rc"
expect_eq "1 MiB name: stderr" "" "$(cat err.txt)"
report_err long16.json
expect_eq "16 MiB name: exit" 1 "$rc"
expect_eq "16 MiB name: message" \
	"mxprof report: long16.json: a string or number longer than 1 MiB before byte 1572864; not an mxprof trace" \
	"$(cat err.txt)"
rm -f long1.json long16.json

# More distinct names than the string table holds: one line, exit 1, not
# a nameless row. The trace is streamed through a pipe (160 MB, 850 MB of
# memory); sanitizer builds skip it.
if [ -z "${SANITIZER:-}" ]; then
	set +e
	python3 -c '
import sys
w = sys.stdout.write
w("{\"traceEvents\":[\n")
w(",\n".join("{\"ph\":\"X\",\"name\":\"n%d\",\"dur\":1}" % i for i in range(4200000)))
w("]}")' | "$MX" report --format csv /dev/stdin > out.txt 2> err.txt
	rc=$?
	set -e
	expect_eq "too many names: exit" 1 "$rc"
	expect_eq "too many names: message" \
		"mxprof report: /dev/stdin: too many distinct names (the limit is 4194303)" \
		"$(cat err.txt)"
else
	skip_part "too many distinct names (plain build only: 850 MB of memory)"
fi

# A 2 GiB trace, read in flat memory. The file is written from one block
# repeated, so it takes seconds; it is removed afterwards.
python3 "$GEN" big.json 2G > gen.json
blocks=$(jget gen.json 'd["blocks"]')
# Under a sanitizer, one reader thread: each thread of the sanitizer's
# allocator keeps caches of its own (88 MB with two under ASan).
env ${SANITIZER:+MXPROF_READ_THREADS=1} \
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

# The trace reader's tokenizer (tools/cli/jscan.c) on the forms JSON allows
# and the library never writes: escapes (\uXXXX, surrogate pairs, lone
# surrogates), numbers in every form, unknown keys of every type skipped,
# stackFrames, the "mxprof" and "distributedInfo" objects; the same event
# cut by the 256 KiB chunk boundary at each of its bytes; a file torn at
# each byte of its last event; and the exact line for each kind of error.
. "$ROOT/tests/integration/lib.sh"
mxprof_command

# names FILE: the names of section g of report --format json, as ascii().
names() {
	"$MX" report --format json "$1" | python3 -c '
import json, sys
print(ascii(sorted(json.load(sys.stdin)["Time"]["g"])))'
}

# Escapes: each name decoded exactly; a lone surrogate is U+FFFD, and a
# high surrogate before an escape that is not a low one is U+FFFD followed
# by that escape's character.
printf '%s' '{"traceEvents":[
{"ph":"X","name":"e\u00e9\u20AC","dur":1,"args":{"group":"g"}},
{"ph":"X","name":"pair\ud83d\ude00","dur":1,"args":{"group":"g"}},
{"ph":"X","name":"hi\ud800x","dur":1,"args":{"group":"g"}},
{"ph":"X","name":"lo\udc00x","dur":1,"args":{"group":"g"}},
{"ph":"X","name":"hiA\ud83d\u0041","dur":1,"args":{"group":"g"}},
{"ph":"X","name":"c\"\\\/\b\f\n\r\tz","dur":1,"args":{"group":"g"}},
{"ph":"X","name":"\u0061\u0062c","dur":1,"args":{"group":"g"}}]}' > esc.json
expect_eq "escaped names" \
	"['abc', 'c\"\\\\/\\x08\\x0c\\n\\r\\tz', 'e\\xe9\\u20ac', 'hiA\\ufffdA', 'hi\\ufffdx', 'lo\\ufffdx', 'pair\\U0001f600']" \
	"$(names esc.json)"

# Numbers: every JSON form of a dur, a quoted ts, integers as fractions.
printf '%s' '{"traceEvents":[
{"ph":"X","name":"exp","ts":"12.5","dur":1.5e3,"args":{"group":"g"}},
{"ph":"X","name":"negexp","ts":1E1,"dur":15E-1,"args":{"group":"g"}},
{"ph":"X","name":"plusexp","ts":-0,"dur":2.5e+0,"args":{"group":"g"}},
{"ph":"X","name":"zero","ts":0.0,"dur":0,"args":{"group":"g"}},
{"ph":"X","name":"frac","pid":7.9,"tid":-3,"dur":0.0015e6,"args":{"group":"g"}},
{"ph":"C","name":"ctr","group":"k","args":{"value":-12}},
{"ph":"C","name":"ctr","group":"k","args":{"value":4e1}}]}' > num.json
"$MX" report --format csv num.json > num.csv
expect_eq "numbers in every form" \
	'"g",time_ms,"exp",1,1.500000,1.500000,1.500000,1.500000,1.500000
"g",time_ms,"frac",1,1.500000,1.500000,1.500000,1.500000,1.500000
"g",time_ms,"negexp",1,0.001500,0.001500,0.001500,0.001500,0.001500
"g",time_ms,"plusexp",1,0.002500,0.002500,0.002500,0.002500,0.002500
"g",time_ms,"zero",1,0.000000,0.000000,0.000000,0.000000,0.000000
"k (counters)",counter,"ctr",2,28.000000,-12.000000,40.000000,14.000000,' \
	"$(grep -v '^section' num.csv | cut -d, -f1-9 | LC_ALL=C sort)"

# Unknown keys of every type, at the top level, in events and in args,
# are skipped; "mxprof" and "distributedInfo" are read wherever they are.
printf '%s' '{"x":{"traceEvents":1,"a":[{"ph":"X"}]},"mxprof":{"unknown":[true,false,null],"droppedRecords":3},
"traceEvents":[{"ph":"X","name":"a","u":{"v":[1,-2.5e-3,"s\"]}",{},[]],"w":null},"dur":2,"t":true,"f":false,
"args":{"deep":[[[{"group":"no"}]]],"group":"g","n":null}}],"tail":{"k":[1,2]},"distributedInfo":{"backend":"x","rank":5}}' > unk.json
"$MX" report unk.json > unk.txt
expect_eq "unknown keys: the row" 1 "$(row_count unk.txt g a)"
expect_eq "mxprof.droppedRecords" "Dropped records: 3" "$(tail -1 unk.txt)"
"$MX" merge -o unk_m.json unk.json > /dev/null 2>&1
expect_eq "distributedInfo.rank, through merge" 5 "$(jget unk_m.json 'd["mxprof"]["merged"][0]["rank"]')"
expect_eq "mxprof.droppedRecords, through merge" 3 "$(jget unk_m.json 'd["mxprof"]["droppedRecords"]')"
expect_eq "the event, copied by merge" \
	'{"ph":"X","name":"a","u":{"v":[1,-2.5e-3,"s\"]}",{},[]],"w":null},"dur":2,"t":true,"f":false,"args":{"deep":[[[{"group":"no"}]]],"group":"g","n":null}}],' \
	"$(sed -n '/^"traceEvents":\[$/{n;p}' unk_m.json)"

# stackFrames, string and number ids, before and after the events.
printf '%s' '{"stackFrames":{"1":{"name":"main","category":"m","x":[1]},"2":{"name":"f\u00e9","parent":"1"},"z":{"name":"skip"}},
"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"sf":2,"args":{"group":"g"}},
{"ph":"X","name":"b","pid":1,"tid":1,"ts":5,"dur":3,"sf":"3","args":{"group":"g"}}],
"stackFrames2":{},"mxprof":{}}' > sf.json
sed 's/"3","args"/3,"args"/' sf.json > sf2.json
printf '%s' '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"sf":"2","args":{"group":"g"}}],
"stackFrames":{"2":{"name":"f","parent":1},"1":{"name":"main"}}}' > sf_late.json
expect_eq "flame of stackFrames" "main;f\\xe9;a 2000" \
	"$("$MX" report --flame sf.json 2>/dev/null | python3 -c 'import sys; print(ascii(sys.stdin.buffer.read().decode().strip()))' | tr -d "'")"
expect_eq "flame of stackFrames after the events" "main;f;a 2000" \
	"$("$MX" report --flame sf_late.json 2>/dev/null)"

# The chunk boundary (256 KiB) at every byte of one event full of escapes,
# exponents and literals: its row is that of the event read whole, and
# every filler event before it counts.
python3 - "$MX" <<'PY'
import subprocess, sys
mx = sys.argv[1]
ref = ('{"ph":"X","cat":"c\\u00e9\\ud83d\\ude00","name":"r\\"\\\\e\\u00e9f\\/","pid":12,'
       '"tid":-4,"ts":1.25e2,"dur":7.5E-1,"u":[true,false,null,{"k":-0.5}],'
       '"args":{"group":"g","frame":null,"error":false}}')
filler = '{"ph":"X","name":"f","dur":1,"args":{"group":"h"}},\n'
head = '{"traceEvents":[\n'
CHUNK = 256 * 1024

def rows(path):
    r = subprocess.run([mx, "report", "--format", "csv", path],
                       capture_output=True)
    if r.returncode != 0 or r.stderr:
        sys.exit("FAIL: %s: status %d, %r" % (path, r.returncode, r.stderr))
    return {l.split(b",")[2]: l for l in r.stdout.splitlines()[1:]}

open("whole.json", "w").write(head + ref + "]}")
want = rows("whole.json")
exp_row = '"g",time_ms,"r""\\e\u00e9f/",1,0.000750,0.000750,0.000750,0.000750,0.000750,100.00,0'
got_row = want['"r""\\e\u00e9f/"'.encode()].decode()
if got_row != exp_row:
    sys.exit("FAIL: the reference row: %r" % got_row)
nfill = (CHUNK - len(head)) // len(filler) - 2
for k in range(len(ref) + 1):
    pre = head + filler * nfill
    pad = CHUNK - k - len(pre)  # the boundary falls before ref[k]
    open("split.json", "w").write(pre + " " * pad + ref + "]}")
    got = rows("split.json")
    for key, line in want.items():
        if got.get(key) != line:
            sys.exit("FAIL: boundary before byte %d of the event: %r, not %r"
                     % (k, got.get(key), line))
    if got[b'"f"'].split(b",")[3] != str(nfill).encode():
        sys.exit("FAIL: boundary before byte %d: fillers %r" % (k, got[b'"f"']))
print("ok: the chunk boundary at each of %d bytes of an event" % (len(ref) + 1))

# A torn file: cut at each byte of its last event (and once with NUL
# bytes after the cut), it is truncated exactly there, and the events
# before it count.
base = head + filler * 3
whole = base + ref + "]}"
for cut in range(len(base), len(whole)):
    for nul in ((0, 4096) if cut % 17 == 0 else (0,)):
        open("torn.json", "wb").write(whole[:cut].encode() + b"\0" * nul)
        r = subprocess.run([mx, "report", "--format", "csv", "torn.json"],
                           capture_output=True)
        done = cut >= len(base) + len(ref)
        msg = ("mxprof report: torn.json: truncated at byte %d; tables cover "
               "the events before it\n" % len(whole[:cut].encode()))
        if r.returncode != 0 or r.stderr.decode() != msg:
            sys.exit("FAIL: torn at %d (+%d NUL): %d %r"
                     % (cut, nul, r.returncode, r.stderr))
        f = [l for l in r.stdout.splitlines() if l.split(b",")[2] == b'"f"']
        if not f or f[0].split(b",")[3] != b"3":
            sys.exit("FAIL: torn at %d: %r" % (cut, r.stdout))
        has_r = any(b'"r' in l for l in r.stdout.splitlines()[1:])
        if has_r != done:
            sys.exit("FAIL: torn at %d: reference row %s" % (cut, has_r))
print("ok: a file torn at each byte of its last event")
PY

# One line for each kind of error, at the offending byte.
# bad TEXT BYTE REASON
bad() {
	printf '%s' "$1" > bad.json
	set +e
	"$MX" report bad.json > /dev/null 2> err.txt
	rc=$?
	set -e
	expect_eq "exit for $1" 1 "$rc"
	expect_eq "error for $1" "mxprof report: bad.json: not valid JSON at byte $2 ($3)" "$(cat err.txt)"
}
bad '{"traceEvents":[{"ph":"X","name":"a",,}]}' 37 "an object key (a string) was expected"
bad '{"traceEvents":[{"ph":"X","name":"a"}],}' 39 "an object key (a string) was expected"
bad '{"traceEvents":[{"ph":"X","name":"a"},]}' 38 "a value was expected"
bad '{"traceEvents":[{"ph":"X" "name":"a"}]}' 26 "',' or '}' was expected after an object member"
bad '{"traceEvents":[{"ph":"X","name":"a"}}' 37 "',' or ']' was expected after an array element"
bad '{"traceEvents":[{"ph":"X","name" "a"}]}' 33 "':' was expected after an object key"
bad '{"traceEvents":[{"ph":"X","dur":01}]}' 33 "',' or '}' was expected after an object member"
bad '{"traceEvents":[{"ph":"X","dur":-x}]}' 33 "a digit must follow the minus sign"
bad '{"traceEvents":[{"ph":"X","dur":1.}]}' 34 "a digit must follow the decimal point"
bad '{"traceEvents":[{"ph":"X","dur":1e+}]}' 35 "a digit must follow the exponent"
bad '{"traceEvents":[{"ph":"X","dur":1x}]}' 33 "',' or '}' was expected after an object member"
bad '{"traceEvents":[{"ph":"X","dur":tru}]}' 35 "an invalid literal (true, false or null)"
bad '{"traceEvents":[{"ph":"X","name":"a\qb"}]}' 36 "an invalid escape inside a string"
bad '{"traceEvents":[{"ph":"X","name":"a\u12x4"}]}' 39 "\\u without four hex digits"
bad "$(printf '{"traceEvents":[{"ph":"X","name":"a\tb"}]}')" 35 "a control character inside a string"
bad '{"traceEvents":[{"ph":"X","name":@}]}' 33 "a value was expected"
# Past the top-level value, nothing is read.
printf '%s' '{"traceEvents":[{"ph":"X","name":"a","dur":1,"args":{"group":"g"}}]} junk {' > trail.json
"$MX" report trail.json > trail.txt
expect_eq "trailing bytes ignored" 1 "$(row_count trail.txt g a)"
# Nesting past 2^20 levels is refused, not a stack overflow: the bracket
# that would open level 2^20 + 1 is byte 30 + 2^20 - 3.
python3 -c '
n = (1 << 20) + 1
open("deep.json", "w").write("{\"traceEvents\":[{\"ph\":\"X\",\"u\":" + "[" * n + "]" * n + "}]}")'
set +e
"$MX" report deep.json > /dev/null 2> err.txt
rc=$?
set -e
expect_eq "deep nesting: exit" 1 "$rc"
expect_eq "deep nesting" "mxprof report: deep.json: not valid JSON at byte 1048603 (nested too deeply)" "$(cat err.txt)"

# The reader takes an event written on one line without blanks, as the
# library writes it, in one step (rd_object in tools/cli/trace_read.c) and
# leaves any other to the tokenizer. The same events both ways give the
# same tables, flame graph and messages: every kind of event and member,
# nested slices, stacks, numbers in every form, names cut at 255 bytes
# inside a UTF-8 sequence, members repeated, args empty or not an object,
# and events the fast path must give back (escapes, literals, arrays).
python3 - "$MX" <<'PY'
import json, subprocess, sys
mx = sys.argv[1]
# Cut inside the euro sign: 1022 of the name's bytes fit its 1024, 254
# of the group's fit its 256 (names end on a whole character).
long_name = "n" * 1022 + "\u20ac"
long_group = "g" * 253 + "\u00e9\u20ac"
ev = []
for i in range(40):
    t = 10 * i
    ev.append({"ph": "X", "cat": "c", "name": "inner%d" % (i % 3), "pid": 1,
               "tid": 1 + i % 2, "ts": t + 1, "dur": 2.5, "sf": 2,
               "args": {"group": "g", "correlation": i}})
    ev.append({"ph": "X", "cat": "c", "name": "outer", "pid": 1,
               "tid": 1 + i % 2, "ts": t, "dur": 8.125, "sf": "1",
               "args": {"group": "g", "frame": i}})
ev += [
    {"ph": "X", "name": long_name, "pid": 2, "tid": 3, "ts": 1e1, "dur": 1.5e-1,
     "args": {"group": long_group}},
    {"ph": "X", "cat": "capi", "name": "st", "pid": 2, "tid": 3, "ts": "12.5",
     "dur": 3, "args": {"group": "C API (libz.so.1)", "error": 0}},
    {"ph": "X", "cat": "capi", "name": "st", "pid": 2, "tid": 3, "ts": 20,
     "dur": 4, "args": {"group": "C API (libz.so.1)", "error": -3}},
    {"ph": "X", "name": "noargs", "pid": 2, "tid": 3, "ts": 30, "dur": 0},
    {"ph": "X", "name": "emptyargs", "pid": 2, "tid": 3, "ts": 31, "dur": 1,
     "args": {}},
    {"ph": "X", "name": "strargs", "cat": "k", "pid": 2, "tid": 3, "ts": 32,
     "dur": 1, "args": "g"},
    {"ph": "C", "name": "queue", "group": "q", "pid": 2, "ts": 33,
     "args": {"value": -12}},
    {"ph": "C", "name": "queue", "group": "q", "pid": 2, "ts": 34,
     "args": {"value": 4e1}},
    {"ph": "i", "name": "mark", "s": "g", "pid": 2, "tid": 3, "ts": 35,
     "args": {"group": "m"}},
    {"ph": "i", "name": "mark", "s": "t", "pid": 2, "tid": 3, "ts": 36,
     "args": {"group": "m"}},
    {"ph": "I", "name": "mark2", "pid": 2, "tid": 3, "ts": 37, "cat": "m"},
    {"ph": "M", "name": "thread_name", "pid": 2, "tid": 3,
     "args": {"name": "worker"}},
    {"ph": "X", "name": "lit", "pid": 2, "tid": 3, "ts": 40, "dur": 1,
     "args": {"group": "g", "frame": None, "error": True}},
    {"ph": "X", "name": "arr", "pid": 2, "tid": 3, "ts": 41, "dur": 1,
     "u": [1, {"a": 2}], "args": {"group": "g", "deep": {"group": "no"}}},
    {"ph": "X", "name": "esc\"\\/\t", "pid": 2, "tid": 3, "ts": 42, "dur": 1,
     "args": {"group": "g"}},
    {},
    {"ph": "", "name": "noph", "dur": 1},
]
frames = {"1": {"name": "main", "category": "m"},
          "2": {"name": "f", "parent": "1"}}
# Members repeated, and numbers in forms json.dumps does not write.
raw = ['{"ph":"X","name":"dup","name":"dup2","pid":2,"tid":3,"ts":50,'
       '"dur":1,"args":{"group":"a"},"args":{"group":"g"}}',
       '{"ph":"X","name":"forms","pid":-0,"tid":3,"ts":5E1,"dur":0.0015e6,'
       '"args":{"group":"g"}}',
       # The plain forms read in one pass, and those just past them.
       '{"ph":"X","name":"n1","pid":2,"tid":-3,"ts":60.123456,"dur":0.0005,'
       '"args":{"group":"g"}}',
       '{"ph":"X","name":"n2","pid":2.5,"tid":3.7,"ts":61,'
       '"dur":12345678901234.5,"args":{"group":"g"}}',
       '{"ph":"X","name":"n3","pid":2,"tid":3,"ts":-0.0004,'
       '"dur":1234567890123.0009,"args":{"group":"g"}}',
       '{"ph":"X","name":"n4","pid":2,"tid":3,"ts":62,"dur":0.00049,'
       '"args":{"group":"g"}}']

def write(path, indent):
    enc = lambda e: json.dumps(e, ensure_ascii=False, indent=indent,
                               separators=None if indent else (",", ":"))
    lines = [enc(e) for e in ev] + [r if not indent else r.replace(",", ", ")
                                    for r in raw]
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"traceEvents":[\n' + ",\n".join(lines) + '],\n'
                '"stackFrames":' + json.dumps(frames) + '}\n')

write("line.json", None)
write("blank.json", 1)
for args in (["report", "--format", "json"], ["report", "--flame"],
             ["report", "--sort", "count"], ["report", "--format", "csv"]):
    a = subprocess.run([mx] + args + ["line.json"], capture_output=True)
    b = subprocess.run([mx] + args + ["blank.json"], capture_output=True)
    if (a.returncode, a.stdout, a.stderr) != (b.returncode, b.stdout, b.stderr):
        sys.exit("FAIL: %s differs:\n%r\n%r" % (args, a, b))
    if a.returncode != 0 or not a.stdout:
        sys.exit("FAIL: %s: %r" % (args, a))
t = json.loads(subprocess.run([mx, "report", "--format", "json", "line.json"],
                              capture_output=True).stdout)
want = [(t["Time"]["g"]["outer"]["Total Count"], 40),
        (t["Time"]["g"]["outer"]["Self Time"], 0.225),
        (t["Time"]["g"]["inner0"]["Total Count"], 14),
        (t["Time"]["g"]["forms"]["Total Time"], 1.5),
        (t["Time"]["g"]["n2"]["Total Time"], 12345678901.2345),
        (t["Time"]["g"]["n3"]["Total Time"], 1234567890.123),
        ("dup2" in t["Time"]["g"] and "a" not in t["Time"], True),
        (t["Time"]["C API (libz.so.1)"]["st"]["Errors"], 1),
        (t["Time"]["g"]["lit"]["Errors"], 1),
        (t["Time"]["g" * 253 + "\u00e9"]["n" * 1022]["Total Count"], 1),
        (t["Counter"]["q (counters)"]["queue"]["Total Count"], 2),
        (t["Marker"]["m (markers)"]["mark"]["Total Count"], 2),
        (t["Marker"]["m (markers)"]["mark2"]["Total Count"], 1)]
# To the nanosecond (csv has six decimals of a millisecond).
csv = subprocess.run([mx, "report", "--format", "csv", "line.json"],
                     capture_output=True, text=True).stdout
tot = {r.split(",")[2]: r.split(",")[4] for r in csv.splitlines()
       if r.startswith('"g",time_ms,"n')}
want.append((tot, {'"n1"': "0.000001", '"n2"': "12345678901.234501",
                   '"n3"': "1234567890.123001", '"n4"': "0.000000"}))
for i, (got, exp) in enumerate(want):
    if got != exp:
        sys.exit("FAIL: check %d of the one-line trace: %r, not %r"
                 % (i, got, exp))
print("ok: events on one line and spread over lines give the same report")
PY

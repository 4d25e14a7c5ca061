# mxprof merge: two processes' traces become one valid trace with both pids,
# each process named by its program with its rank and host among its
# labels (once, however often merged), a renumbered pid's old number in
# its labels, and times on one clock.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

"$MX" run -q -o a.json -- "$PROG" -u 100 2>/dev/null
sleep 0.2
"$MX" run -q -o b.json -- "$PROG" -u 100 -s 4 -l 1 2>/dev/null
"$MX" merge -o m.json a.json b.json > out.txt
tracesummary m.json > sum.json
expect_eq "events" "$(($(jget <(tracesummary a.json) 'd["events"]') + $(jget <(tracesummary b.json) 'd["events"]')))" \
	"$(jget sum.json 'd["events"]')"
pa=$(jget a.json 'd["mxprof"]["pid"]')
pb=$(jget b.json 'd["mxprof"]["pid"]')
host=$(jget a.json 'd["mxprof"]["host"]')
expect_eq "pids" "$(python3 -c "print(sorted([$pa, $pb]))")" "$(jget sum.json 'd["pids"]')"
expect_eq "step spans" 14 "$(jget sum.json 'd["spans"]["cli/step"]')"
expect_eq "process name of a" "cli_tasks" \
	"$(jget sum.json "d['process_names']['$pa']")"
# labels PID FILE: the process_labels of PID in FILE, one per line.
labels() {
	python3 -c 'import json,sys
ev = json.load(open(sys.argv[2]))["traceEvents"]
for e in ev:
    if e.get("name") == "process_labels" and e["pid"] == int(sys.argv[1]):
        print(e["args"]["labels"])' "$1" "$2"
}
expect_eq "labels of a: command line, then host" "$PROG -u 100, $host" "$(labels $pa m.json)"
expect_eq "merged base time" "$(jget a.json 'd["baseTimeNanoseconds"]')" \
	"$(jget m.json 'd["baseTimeNanoseconds"]')"

# Times: every event of b moved by (base_b - base_a) / 1000 microseconds.
python3 - <<'PY'
import json
a, b, m = (json.load(open(f)) for f in ("a.json", "b.json", "m.json"))
shift_ns = b["baseTimeNanoseconds"] - a["baseTimeNanoseconds"]
assert shift_ns > 0, shift_ns
pb = b["mxprof"]["pid"]
def ns(t):
    return round(t * 1000)
orig = [ns(e["ts"]) for e in b["traceEvents"] if e["ph"] != "M"]
got = [ns(e["ts"]) for e in m["traceEvents"] if e["ph"] != "M" and e["pid"] == pb]
assert len(orig) == len(got) and orig, (len(orig), len(got))
bad = [(o, g) for o, g in zip(orig, got) if g - o != shift_ns]
assert not bad, bad[:3]
# b ran after a: its first event now comes after a's last.
last_a = max(ns(e["ts"] + e.get("dur", 0)) for e in a["traceEvents"] if e["ph"] != "M")
assert min(got) > last_a, (min(got), last_a)
print("ok: b's %d events shifted by exactly %d ns, after a's last" % (len(got), shift_ns))
PY

# The same file twice: the second copy's pid is renumbered.
"$MX" merge -o twice.json.gz a.json a.json > /dev/null
tracesummary twice.json.gz > sum2.json
expect_eq "pids when merged with itself" 2 "$(jget sum2.json 'len(d["pids"])')"
expect_eq "steps when merged with itself" 20 "$(jget sum2.json 'd["spans"]["cli/step"]')"
expect_eq "renumbered pid" "$((pa + 1))" "$(jget sum2.json "[p for p in d['pids'] if p != $pa][0]")"

# The merged trace reports like its parts together.
"$MX" report m.json > r.txt
expect_eq "report of merged: steps" 14 "$(row_count r.txt cli step)"

# A truncated input adds only its whole events, with a warning.
head -c $(($(stat -c %s b.json) / 2)) b.json > half.json
"$MX" merge -o h.json a.json half.json > /dev/null 2> err.txt
grep -q 'half.json: truncated at byte' err.txt || fail "no warning: $(cat err.txt)"
tracesummary h.json > /dev/null
echo "ok: merge with a truncated input is valid"

set +e
"$MX" merge a.json b.json 2> err.txt; rc=$?
set -e
expect_eq "no -o: exit" 2 "$rc"
set +e
"$MX" merge -o x.json a.json missing.json 2> err.txt; rc=$?
set -e
expect_eq "missing input: exit" 1 "$rc"
[ ! -e x.json ] || fail "output written despite a missing input"
echo "ok: errors"

# Ranks: distributedInfo.rank goes into the process name and the summary.
python3 - <<'PY'
import json
for src, dst, rank in (("a.json", "ra.json", 0), ("b.json", "rb.json", 1)):
    d = json.load(open(src))
    d["distributedInfo"] = {"rank": rank}
    json.dump(d, open(dst, "w"))
PY
"$MX" merge -o ranks.json ra.json rb.json > /dev/null
tracesummary ranks.json > sum3.json
expect_eq "rank 1: the process name" "cli_tasks" \
	"$(jget sum3.json "d['process_names']['$pb']")"
expect_eq "rank 1: in the labels, with the host" "$PROG -u 100 -s 4 -l 1, rank 1, $host" \
	"$(labels $pb ranks.json)"
# Merged again, with rank 0's file beside it: rank 1's labels do not grow
# (the merged file holds no rank of its own), rank 0's stay as they were.
"$MX" merge -o again.json ranks.json ra.json > /dev/null
expect_eq "merged twice: rank 1's labels unchanged" "$PROG -u 100 -s 4 -l 1, rank 1, $host" \
	"$(labels $pb again.json)"
# The same trace twice: the second copy's pid is renumbered, and its
# labels keep the pid it had, so the two tracks are told apart.
"$MX" merge -o twice.json a.json a.json > /dev/null
new_pid=$(jget twice.json '[v for m in d["mxprof"]["merged"][1:] for v in m["pids"].values()][0]')
[ "$new_pid" != "$pa" ] || fail "the second copy kept pid $pa"
expect_eq "renumbered: the process name" "cli_tasks" \
	"$(jget <(tracesummary twice.json) "d['process_names']['$new_pid']")"
expect_eq "renumbered: its labels name the old pid" "$PROG -u 100, $host, was pid $pa" \
	"$(labels $new_pid twice.json)"
expect_eq "not renumbered: labels" "$PROG -u 100, $host" "$(labels $pa twice.json)"
expect_eq "ranks in the merge summary" "[0, 1]" \
	"$(jget ranks.json '[m["rank"] for m in d["mxprof"]["merged"]]')"
# Files of one rank (the processes of that rank's mxprof run) make a trace
# of that rank, written as Kineto writes it; files of several, none.
"$MX" merge -o one.json rb.json rb.json > /dev/null
expect_eq "one rank: distributedInfo" '"distributedInfo":{"rank": 1}' \
	"$(grep -o '"distributedInfo":{[^}]*}' one.json)"
expect_eq "two ranks: no distributedInfo" "" \
	"$(grep -o '"distributedInfo"' ranks.json || true)"

# Inputs are read twice: a pipe or a FIFO is refused with one line, before
# any output exists, and never waited on.
set +e
"$MX" merge -o p.json <(cat a.json) 2> err.txt; rc=$?
set -e
expect_eq "pipe input: exit" 1 "$rc"
expect_eq "pipe input: message" 1 "$(grep -c '^mxprof merge: /dev/fd/[0-9]*: not a regular file (merge reads each input twice; save it to a file first)$' err.txt)"
expect_eq "pipe input: stderr lines" 1 "$(wc -l < err.txt)"
mkfifo fifo
set +e
timeout 20 "$MX" merge -o f.json a.json fifo 2> err.txt; rc=$?
set -e
expect_eq "FIFO input: exit" 1 "$rc"
expect_eq "FIFO input: message" \
	"mxprof merge: fifo: not a regular file (merge reads each input twice; save it to a file first)" \
	"$(cat err.txt)"
expect_eq "no output or temporary file" "" "$(ls p.json* f.json* 2>/dev/null || true)"

# Output that cannot be written: one line with the reason, exit 1.
set +e
"$MX" merge -o full.json a.json > /dev/full 2> err.txt; rc=$?
set -e
expect_eq "summary to a full disk: exit" 1 "$rc"
expect_eq "summary to a full disk: message" \
	"mxprof merge: writing the summary: No space left on device" "$(cat err.txt)"
set +e
"$MX" merge --help > /dev/full 2> err.txt; rc=$?
set -e
expect_eq "help to a full disk: exit" 1 "$rc"
expect_eq "help to a full disk: message" \
	"mxprof merge: writing the help: No space left on device" "$(cat err.txt)"

# Names that are not UTF-8 become U+FFFD in the merged trace too.
printf '{"baseTimeNanoseconds":1,"traceEvents":[{"ph":"X","name":"a\377\303b","pid":1,"tid":1,"ts":1,"dur":1}]}' > bad8.json
"$MX" merge -o m8.json bad8.json > /dev/null
expect_eq "merged name that is not UTF-8" "a\\ufffd\\ufffdb" \
	"$(python3 -c 'import json; print(json.dumps(json.load(open("m8.json"))["traceEvents"][0]["name"])[1:-1])')"

# Many processes and threads: every pid of the second copy is renumbered
# past the largest pid, and every thread gets a name. SLOW=1: 300000
# threads and 100000 pids (a second with hashed lookups); by default a
# tenth of that, through the same code.
if [ "${SLOW:-}" = 1 ]; then T=300000 P=100000; else T=30000 P=10000; fi
T=$T P=$P python3 - <<'PY'
import os
T, P = int(os.environ["T"]), int(os.environ["P"])
with open("wide.json", "w") as f:
    f.write('{"baseTimeNanoseconds":1,"traceEvents":[\n')
    f.write(",\n".join('{"ph":"X","name":"a","pid":%d,"tid":%d,"ts":%d,"dur":1}'
                       % (i % P, i, i) for i in range(T)))
    f.write("]}")
PY
"$MX" merge -o wide2.json wide.json wide.json > out.txt
# 2T slices, 2T thread names, 2P process names, P labels of renumbered
# pids ("was pid N"); the file's own pids keep their numbers and get none.
expect_eq "wide merge: summary" "wide2.json: $((4 * T + 3 * P)) events from 2 traces" "$(cat out.txt)"
T=$T P=$P python3 - <<'PY'
import json, os
T, P = int(os.environ["T"]), int(os.environ["P"])
d = json.load(open("wide2.json"))
ev = d["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
pids = sorted(set(e["pid"] for e in x))
assert pids == list(range(2 * P)), (pids[:3], pids[-3:], len(pids))
tn = set((e["pid"], e["tid"]) for e in ev if e["name"] == "thread_name")
assert tn == set((e["pid"], e["tid"]) for e in x) and len(tn) == 2 * T, len(tn)
m = d["mxprof"]["merged"][1]["pids"]
assert all(int(k) + P == v for k, v in m.items()) and len(m) == P
labels = {e["pid"]: e["args"]["labels"] for e in ev if e["name"] == "process_labels"}
assert labels == {p + P: "was pid %d" % p for p in range(P)}, len(labels)
print("ok: %d pids and %d named threads after the merge" % (2 * P, 2 * T))
PY
rm -f wide.json wide2.json

# An event on one line as the library writes it is copied in one step;
# any other form goes through the tokenizer's handlers. Both give the
# same bytes: the same traces, compact and spread over lines with
# escapes, merge to the same file. The traces have every rewritten value
# (pid, ts shifted, flow ids, sf as a number and a string, labels) and
# strings past ASCII, with and without escapes.
mkdir -p fast slow
python3 - <<'PY'
import json
a = json.load(open("a.json"))
b = json.load(open("b.json"))
b["traceEvents"] += [
    {"ph": "X", "name": "caf\u00e9 \"q\" \\ /", "pid": 7, "tid": 8, "ts": 1.5,
     "dur": 2.25, "sf": 3, "args": {"group": "g\u00e9", "n": -1.5e3, "k": {}}},
    {"ph": "X", "name": "s", "pid": 7, "tid": 8, "ts": 2, "dur": 1, "sf": "4",
     "args": {}},
    {"ph": "s", "name": "flow", "cat": "f", "pid": 7, "tid": 8, "ts": 3, "id": 12},
    {"ph": "i", "name": "t", "pid": 7, "tid": 8, "ts": 0.001, "s": "t",
     "args": {"x": True, "y": None, "z": [1, 2]}},
    {"ph": "M", "name": "process_labels", "pid": 7, "tid": 0,
     "args": {"labels": "mine"}},
    {},
]
b["stackFrames"] = {"3": {"name": "f"}, "4": {"name": "g", "parent": "3"}}
a["stackFrames"] = {"1": {"name": "h"}}
for name, d in (("a.json", a), ("b.json", b)):
    with open("fast/" + name, "w") as f:
        f.write("{" + ",\n".join(
            json.dumps(k) + ":" + (
                "[\n" + ",\n".join(json.dumps(e, ensure_ascii=False,
                                              separators=(",", ":"))
                                   for e in v) + "\n]"
                if k == "traceEvents" else json.dumps(v))
            for k, v in d.items()) + "}\n")
    json.dump(d, open("slow/" + name, "w"), indent=1)
PY
(cd fast && "$MX" merge -o m.json a.json b.json > /dev/null)
(cd slow && "$MX" merge -o m.json a.json b.json > /dev/null)
cmp fast/m.json slow/m.json || fail "one-line events and spread ones merge to different bytes"
python3 - <<'PY' || fail "the rewritten values of the added events"
import json
ev = json.load(open("fast/m.json"))["traceEvents"]
by = {e.get("name"): e for e in ev if e.get("pid") == 7}
x, s, fl = by["caf\u00e9 \"q\" \\ /"], by["s"], by["flow"]
assert (x["sf"], x["args"]["group"]) == (5, "g\u00e9"), x
assert s["sf"] == "6" and fl["id"] == 12 + (1 << 40), (s, fl)
assert by["process_labels"]["args"]["labels"].startswith("mine, "), by
assert {} in ev, "the empty event"
PY
echo "ok: one-line and spread events merge to the same bytes"
rm -rf fast slow

# The readers of report, diff and merge read a large plain trace with
# threads, segment by segment (tools/cli/trace_par.c), each thread on the
# guess that its segment starts at an event. Whatever the number of threads
# and the segments' size, every command prints the same bytes, the same
# lines on stderr and exits the same as with one thread: on a plain trace,
# one cut short, one with a corrupt byte, one whose tail is NUL bytes, one
# with stackFrames after its events, one with events spread over lines
# (where a line that starts with '{' is not an event) and the array form.
# merge's second pass copies events with threads too: two files whose
# events it rewrites (pids renumbered, times shifted, flow ids and frame
# nodes moved) merge to the same bytes. The threads' work is taken: the
# reader moves past each segment a thread read (an lseek, which reading
# alone never makes).
. "$ROOT/tests/integration/lib.sh"
mxprof_command
GEN=$ROOT/tests/bench/report_gen.py

python3 "$GEN" plain.json 600k > /dev/null
python3 "$GEN" cut.json 600k --truncate > /dev/null
python3 - <<'PY'
import json
plain = open("plain.json", "rb").read()
# A byte that is not JSON in the middle of an event.
mid = plain.index(b'"name"', len(plain) // 2)
open("corrupt.json", "wb").write(plain[:mid] + b"#" + plain[mid + 1:])
# A file extended before it was written: NUL bytes from an event on.
open("nul.json", "wb").write(plain[:mid] + b"\0" * (len(plain) - mid))
d = json.loads(plain)
ev = d["traceEvents"]
# Call stacks, frames after the events (a second pass of report).
for i, e in enumerate(ev):
    if e["ph"] == "X":
        e["sf"] = 1 + i % 3
with open("late.json", "w") as f:
    f.write('{"traceEvents":[\n')
    f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in ev))
    f.write('\n],\n"stackFrames":{"1":{"name":"main"},"2":{"name":"f","parent":"1"},'
            '"3":{"name":"g","parent":"2","user":1}},"mxprof":{"droppedRecords":2}}\n')
# Every fifth event spread over lines, its args on a line of their own,
# and some names with escapes.
with open("spread.json", "w") as f:
    f.write('{"traceEvents":[\n')
    out = []
    for i, e in enumerate(ev):
        if i % 5 == 0:
            a = e.pop("args", {})
            s = json.dumps(e, separators=(",", ":"))[:-1]
            out.append(s + ',\n"args":\n' + json.dumps(a) + "\n}")
        elif i % 7 == 0:
            e["name"] += "\u00e9"
            out.append(json.dumps(e, separators=(",", ":")))
        else:
            out.append(json.dumps(e, separators=(",", ":")))
    f.write(",\n".join(out) + "\n]}\n")
# Two ranks, the second's clock 1.5 ms later, with flow ids, frames of
# their own and every slice with one, so that merge rewrites the second
# one's ts, pid, id and sf.
for rank in (0, 1):
    with open("rank%d.json" % rank, "w") as f:
        f.write('{"baseTimeNanoseconds":%d,"traceEvents":[\n'
                % (1700000000000000000 + 1500000 * rank))
        out = []
        for i, e in enumerate(json.loads(plain)["traceEvents"]):
            if e["ph"] == "X":
                e["sf"] = 1 + i % 2
                if i % 4 == 0:
                    e["id"] = i
            out.append(json.dumps(e, separators=(",", ":")))
        f.write(",\n".join(out) + '\n],\n"stackFrames":{"1":{"name":"main"},'
                '"2":{"name":"h","parent":"1"}}}\n')
with open("array.json", "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(e, separators=(",", ":"))
                                for e in ev[:3000]) + "\n]\n")
PY

# run NAME CMD...: CMD's stdout, stderr and status, in NAME.*
run() {
	local name=$1 rc=0
	shift
	"$@" > "$name.out" 2> "$name.err" || rc=$?
	echo "$rc" > "$name.rc"
}

# each TAG: every command on every file, into TAG.*.
each() {
	local tag=$1 f
	for f in plain cut corrupt nul late spread array; do
		run "$tag.report.$f" "$MX" report "$f.json"
		run "$tag.json.$f" "$MX" report --format json --sort self "$f.json"
		run "$tag.flame.$f" "$MX" report --flame "$f.json"
		run "$tag.diff.$f" "$MX" diff plain.json "$f.json"
		run "$tag.merge.$f" "$MX" merge -o m.json "$f.json" plain.json
		mv m.json "$tag.m.$f.json" 2> /dev/null || true
	done
	run "$tag.mrank" "$MX" merge -o m.json rank0.json rank1.json
	mv m.json "$tag.m.rank.json"
}

MXPROF_READ_THREADS=1 each one
expect_eq "one thread: plain report" 0 "$(cat one.report.plain.rc)"
expect_eq "one thread: corrupt report" 1 "$(cat one.report.corrupt.rc)"
expect_eq "one thread: cut report warns" 1 "$(grep -c 'truncated at byte' one.report.cut.err)"
# The merge of the two ranks rewrote what it should: the second file's
# pid, its times 1.5 ms on, its flow ids past 2^40 and its frame nodes
# past the first file's (0 to 2).
"${PYTHON3:-python3}" -S - <<'PY' || fail "merge of two ranks: not rewritten"
import json
ev = json.load(open("one.m.rank.json"))["traceEvents"]
r1 = json.load(open("rank1.json"))["traceEvents"]
second = ev[len(r1):2 * len(r1)]
assert len(second) == len(r1), (len(second), len(r1))
for a, b in zip(second, r1):
    assert a["pid"] != b["pid"] and a["name"] == b["name"], (a, b)
    if "ts" in b:
        assert abs(a["ts"] - b["ts"] - 1500.0) < 1e-6, (a, b)
    if "sf" in b:
        assert a["sf"] == b["sf"] + 3, (a, b)
    if "id" in b:
        assert a["id"] == b["id"] + (1 << 40), (a, b)
first = [(e.get("ts"), e.get("sf"), e.get("id")) for e in ev[:len(r1)]]
assert first == [(e.get("ts"), e.get("sf"), e.get("id")) for e in r1]
print("ok: merge of two ranks: pid, ts, id and sf rewritten")
PY
for seg in 64 1000 30000; do
	for threads in 2 5; do
		tag=t$threads.s$seg
		MXPROF_READ_THREADS=$threads MXPROF_READ_SEGMENT=$seg each "$tag"
		for f in one.*.out one.*.err one.*.rc one.m.*.json; do
			g=$tag.${f#one.}
			cmp -s "$f" "$g" || fail "$threads threads, segments of $seg bytes: $g differs from $f"
		done
		echo "ok: $threads threads, segments of $seg bytes: the same bytes from every command"
	done
done

# The segments' default size (about 2 MiB) on a trace of several.
python3 "$GEN" big.json 7M > /dev/null
for n in 1 2; do
	MXPROF_READ_THREADS=$n run "big$n.report" "$MX" report big.json
	MXPROF_READ_THREADS=$n run "big$n.diff" "$MX" diff plain.json big.json
	MXPROF_READ_THREADS=$n run "big$n.merge" "$MX" merge -o m.json \
		big.json rank1.json
	mv m.json "big$n.m.json"
done
expect_eq "7 MiB trace, one thread: report" 0 "$(cat big1.report.rc)"
for f in big1.*.out big1.*.err big1.*.rc big1.m.json; do
	cmp -s "$f" "big2${f#big1}" || fail "2 threads, default segments: big2${f#big1} differs from $f"
done
echo "ok: 2 threads, default segments: the same bytes from report, diff and merge"

if command -v strace > /dev/null; then
	MXPROF_READ_THREADS=2 MXPROF_READ_SEGMENT=30000 \
		strace -f -e trace=lseek -o st.txt "$MX" report plain.json > /dev/null
	jumps=$(grep -c 'lseek(' st.txt || true)
	segs=$(($(stat -c %s plain.json) / 30000))
	[ "$jumps" -ge $((segs / 2)) ] || fail "the reader moved past $jumps segments of $segs"
	echo "ok: the reader took the threads' events ($jumps of $segs segments)"
else
	skip_part "strace is not installed: whether the threads' events were taken"
fi

# mxprof recover: a program that records a known number of events and then
# dies without its final dump (SIGKILL, _exit) leaves only
# its journal; recover rebuilds the trace and the tables from it, with the
# exact counts, and the tables the library itself would have written. A
# torn journal gives what was complete; a missing, empty, cut or damaged
# one gives one line on stderr and exit 1; bad usage exit 2.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/crash_tasks
N=200 # steps: 200 step, 200 inner, 2 epoch, 200 done, 20 tick, 100 work
RECORDS=722
ulimit -c 0 # no core files from the crashes

# crash OUT HOW [ARGS...]: runs the program under the library, recording
# into OUT, until it dies as HOW says; its "pid N" line goes to OUT.pid and
# its exit status to rc. A sanitizer runtime must not catch the SIGSEGV.
crash() {
	local out=$1 how=$2
	shift 2
	set +e
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT=$out LD_PRELOAD=$PRELOAD \
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:handle_segv=0 \
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-}:handle_segv=0 \
		"$PROG" -n "$N" "$@" "$how" > "$out.pid" 2> /dev/null
	rc=$?
	set -e
}

# pid_of OUT: the pid the program printed before it died
pid_of() { sed -n 's/^pid //p' "$1.pid"; }

# forget PID: removes the status file a process that died left behind
forget() {
	if [ -n "${XDG_RUNTIME_DIR:-}" ]; then
		rm -f "$XDG_RUNTIME_DIR/mxprof/$1.status"
	else
		rm -f "/tmp/mxprof-$(id -u)/$1.status"
	fi
}

# recover ARGS...: runs mxprof recover; status in rc, stdout in out.txt,
# stderr in err.txt. It never crashes or hangs.
recover() {
	set +e
	timeout 60 "$MX" recover "$@" > out.txt 2> err.txt
	rc=$?
	set -e
	if [ "$rc" -gt 2 ]; then fail "recover $* crashed or hung (status $rc)"; fi
}

# listing: the files here, but for the ones the helpers write
listing() { ls -A | grep -vxE '(before|after)\.lst|(out|err)\.txt' || true; }

# recover_fails STATUS LINE ARGS...: recover exits STATUS with exactly LINE
# on stderr, prints nothing and writes nothing.
recover_fails() {
	local want=$1 line=$2
	shift 2
	listing > before.lst
	recover "$@"
	expect_eq "recover $*: exit" "$want" "$rc"
	expect_eq "recover $*: stderr" "$line" "$(cat err.txt)"
	expect_eq "recover $*: stdout" "" "$(cat out.txt)"
	listing > after.lst
	diff before.lst after.lst > /dev/null || fail "recover $* wrote files"
}

# check NAME TRACE STATS PID: the recovered trace and tables hold exactly
# what the program recorded.
check() {
	local name=$1 trace=$2 stats=$3 pid=$4
	tracesummary "$trace" > "$name.sum.json"
	expect_eq "$name: steps" $N "$(jget "$name.sum.json" 'd["spans"]["crash/step"]')"
	expect_eq "$name: inner" $N "$(jget "$name.sum.json" 'd["spans"]["crash/inner"]')"
	expect_eq "$name: epoch frames" 2 "$(jget "$name.sum.json" 'd["spans"]["crash/epoch"]')"
	expect_eq "$name: work" $((N / 2)) "$(jget "$name.sum.json" 'd["spans"]["crash/work"]')"
	expect_eq "$name: ticks" $((N / 10)) "$(jget "$name.sum.json" 'd["instants"]["crash/tick"]')"
	expect_eq "$name: done values" "$(seq -s, 1 $N)" \
		"$(jget "$name.sum.json" '",".join(str(v) for v in d["counters"]["crash/done"])')"
	expect_eq "$name: events" $((RECORDS + 6)) "$(jget "$name.sum.json" 'd["events"]')"
	expect_eq "$name: nesting" 3 "$(jget "$name.sum.json" 'd["max_depth"]["'"$pid"'"]')"
	expect_eq "$name: pids" "[$pid]" "$(jget "$name.sum.json" 'd["pids"]')"
	expect_eq "$name: process" "crash_tasks" \
		"$(jget "$name.sum.json" 'd["process_names"]["'"$pid"'"]')"
	expect_eq "$name: threads" "(crash-worker),(crash_tasks)" \
		"$(jget "$name.sum.json" '",".join(sorted(t["name"].split()[2] for t in d["threads"].values()))')"
	expect_eq "$name: dropped" 0 "$(jget "$name.sum.json" 'd["dropped"]')"
	expect_eq "$name: table step" $N "$(row_count "$stats" crash step)"
	expect_eq "$name: table inner" $N "$(row_count "$stats" crash inner)"
	expect_eq "$name: table epoch" 2 "$(row_count "$stats" crash epoch)"
	expect_eq "$name: table work" $((N / 2)) "$(row_count "$stats" crash work)"
	expect_eq "$name: table done" $N "$(row_count "$stats" 'crash (counters)' done)"
	expect_eq "$name: table tick" $((N / 10)) "$(row_count "$stats" 'crash (markers)' tick)"
	expect_eq "$name: table dropped" "Dropped records: 0" "$(tail -1 "$stats")"
	"$MX" report "$trace" > "$name.report.txt"
	cmp "$name.report.txt" "$stats" || fail "$name: report of the trace differs from the tables"
	echo "ok: $name: report of the recovered trace gives the recovered tables"
}

# _exit writes the trace and the tables first (preload/exits.c).
crash exit.json exit
expect_eq "exit: program status" 3 "$rc"
expect_eq "exit: files left" "exit.json exit.json.pid" "$(echo exit.json*)"
tracesummary exit.json >exit.sum.json
expect_eq "exit: events" "$RECORDS" "$(jget exit.sum.json 'sum(d["ph"].get(k, 0) for k in "XiC")')"

# Each way to die without the final dump leaves the journal and nothing
# else; recover writes the trace and the tables beside it. (abort() and
# SIGSEGV write the final dump: core_end_signals; _exit: above.)
for how in kill:137; do
	h=${how%%:*}
	crash "$h.json" "$h"
	expect_eq "$h: program status" "${how#*:}" "$rc"
	expect_eq "$h: files left" "$h.json.journal $h.json.pid" "$(echo $h.json*)"
	pid=$(pid_of "$h.json")
	forget "$pid"
	recover "$h.json.journal"
	expect_eq "$h: exit" 0 "$rc"
	expect_eq "$h: line" \
		"$h.json: $RECORDS records from 2 threads of pid $pid; tables in $h.stats.txt" \
		"$(cat out.txt)"
	expect_eq "$h: stderr" "" "$(cat err.txt)"
	check "$h" "$h.json" "$h.stats.txt" "$pid"
	[ -f "$h.json.journal" ] || fail "$h: the journal was removed"
done

# Only the drain thread wrote the journal: the program waits, the journal
# is read (through recover) until it holds every record, then SIGKILL.
MXPROF_AUTOSTART=1 MXPROF_OUTPUT=w.json LD_PRELOAD=$PRELOAD \
	"$PROG" -n "$N" -w ready wait > w.json.pid 2> /dev/null &
prog=$!
for _ in $(seq 1200); do
	if [ -e ready ] && [ -e w.json.journal ]; then
		recover -f -o probe.json w.json.journal
		if [ "$rc" = 0 ] && grep -q ": $RECORDS records " out.txt; then break; fi
	fi
	sleep 0.05
done
grep -q ": $RECORDS records " out.txt || fail "the drain thread never wrote $RECORDS records"
kill -KILL "$prog"
set +e; wait "$prog"; rc=$?; set -e
expect_eq "drain thread only: program status" 137 "$rc"
rm -f probe.json probe.stats.txt
forget "$(pid_of w.json)"
recover w.json.journal
expect_eq "drain thread only: exit" 0 "$rc"
check w w.json w.stats.txt "$(pid_of w.json)"

# The program dumped (trace and tables on disk), then died: recover
# refuses to replace them, writes the same tables elsewhere, and replaces
# them with -f.
crash d.json kill -d
expect_eq "dumped: program status" 137 "$rc"
pid=$(pid_of d.json)
forget "$pid"
cp d.json d.json.before
cp d.stats.txt d.stats.txt.before
recover_fails 1 "mxprof recover: d.json exists; -f replaces it, -o writes elsewhere" \
	d.json.journal
cmp d.json d.json.before || fail "the dumped trace was changed"
mv d.json d.json.moved
recover_fails 1 "mxprof recover: d.stats.txt exists; -f replaces it, -o writes elsewhere" \
	d.json.journal
mv d.json.moved d.json
recover -o r.json.gz d.json.journal
expect_eq "other name: exit" 0 "$rc"
expect_eq "other name: line" \
	"r.json.gz: $RECORDS records from 2 threads of pid $pid; tables in r.stats.txt" \
	"$(cat out.txt)"
gzip -t r.json.gz || fail "r.json.gz is not gzip"
check r r.json.gz r.stats.txt "$pid"
cmp r.stats.txt d.stats.txt || fail "recovered tables differ from the library's"
echo "ok: the recovered tables are the library's own, byte for byte"
tracesummary d.json > d.sum.json
python3 - d.sum.json r.sum.json <<'EOF' || fail "recovered trace differs from the dumped one"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
# The dump labels the process with its command line (process_labels),
# which the journal does not keep.
a["events"] -= 1
a["ph"]["M"] -= 1
keys = ("events", "ph", "spans", "instants", "counters", "threads", "pids",
        "process_names", "max_depth", "dropped")
bad = [k for k in keys if a[k] != b[k]]
if bad:
    sys.exit("differ: %s" % bad)
EOF
echo "ok: the recovered trace has the dumped trace's events"
recover -f d.json.journal
expect_eq "force: exit" 0 "$rc"
expect_eq "force: line" \
	"d.json: $RECORDS records from 2 threads of pid $pid; tables in d.stats.txt" \
	"$(cat out.txt)"
cmp d.stats.txt d.stats.txt.before || fail "-f: the tables changed"

# journal_entries FILE: "offset type length records" per complete entry,
# from the layout in collector/journal.c.
journal_entries() {
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
off = 56
while off + 8 <= len(d):
    t, n = struct.unpack_from("<II", d, off)
    need = 8 + ((n + 7) & ~7)
    if off + need > len(d):
        break
    recs = struct.unpack_from("<I", d, off + 12)[0] if t in (2, 6) else 0
    print(off, t, n, recs)
    off += need
EOF
}
journal_entries d.json.journal > entries.txt
size=$(stat -c %s d.json.journal)
expect_eq "entries cover the journal" "$size" \
	"$(awk 'END { print $1 + 8 + int(($3 + 7) / 8) * 8 }' entries.txt)"
expect_eq "records in the journal" $RECORDS "$(awk '{ s += $4 } END { print s }' entries.txt)"

# Torn: one byte short. The last entry is skipped, the records are whole.
last=$(tail -1 entries.txt | cut -d' ' -f1)
head -c $((size - 1)) d.json.journal > t1.json.journal
recover t1.json.journal
expect_eq "torn by a byte: exit" 0 "$rc"
expect_eq "torn by a byte: line" \
	"t1.json: $RECORDS records from 2 threads of pid $pid; tables in t1.stats.txt; skipped a torn last entry ($((size - 1 - last)) bytes)" \
	"$(cat out.txt)"
expect_eq "torn by a byte: stderr" "" "$(cat err.txt)"
check t1 t1.json t1.stats.txt "$pid"

# Torn inside the last records entry: exactly the records before it.
read -r off _ len n < <(awk '$2 == 6' entries.txt | tail -1)
before=$(awk -v o="$off" '$1 < o { s += $4 } END { print s }' entries.txt)
[ "$before" -gt 0 ] && [ "$n" -gt 0 ] || fail "no records entry to tear"
cut=$((off + 8 + len / 2))
head -c "$cut" d.json.journal > t2.json.journal
recover t2.json.journal
expect_eq "torn records: exit" 0 "$rc"
grep -q "^t2.json: $before records from [12] threads\? of pid $pid; tables in t2.stats.txt; skipped a torn last entry ($((cut - off)) bytes)$" out.txt ||
	fail "torn records: $(cat out.txt)"
tracesummary t2.json > t2.sum.json
expect_eq "torn records: events in the trace" "$before" \
	"$(jget t2.sum.json 'd["events"] - d["ph"]["M"]')"
"$MX" report t2.json | cmp - t2.stats.txt || fail "torn records: tables differ from the trace's"

# A damaged length in the middle claims more than the file holds: what
# comes before it is recovered, the rest is skipped, nothing is allocated
# for it.
read -r off _ _ _ < <(awk '$2 == 6' entries.txt | tail -1)
python3 - d.json.journal t3.json.journal "$off" <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<I", d, int(sys.argv[3]) + 4, 0xfffffff0)
open(sys.argv[2], "wb").write(d)
EOF
recover t3.json.journal
expect_eq "damaged length: exit" 0 "$rc"
grep -q "^t3.json: $before records .*; skipped a torn last entry ($((size - off)) bytes)$" out.txt ||
	fail "damaged length: $(cat out.txt)"

# patch NAME EXPR: a copy of d.json.journal, one field changed (EXPR is
# Python on d, the bytes, and e, the entries as (offset, type, len, n)).
# first_rec(field, value) sets a field of the first record of the first
# records entry: the entry is decoded and encoded again in the compact
# form of collector/jpack.c (LEB128 varints; a byte of what differs from
# the record before; t0 as a zigzag difference).
patch() {
	python3 - d.json.journal "$1" "$2" <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
e, off = [], 56
while off + 8 <= len(d):
    t, n = struct.unpack_from("<II", d, off)
    e.append((off, t, n, struct.unpack_from("<I", d, off + 12)[0] if t in (2, 6) else 0))
    off += 8 + ((n + 7) & ~7)
first_str = [x for x in e if x[1] == 1][0][0]
first_recs = [x for x in e if x[1] == 6][0]
F = ("name", "group", "kind", "cat", "flags", "arg")
def varint(b, i):
    v = s = 0
    while True:
        v |= (b[i] & 0x7f) << s
        s += 7
        i += 1
        if b[i - 1] < 0x80:
            return v, i
def put(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7f | 0x80)
        v >>= 7
    out.append(v)
    return out
def unpack(b, n):
    recs, prev, i = [], dict(t0=0, t1=0, **{f: 0 for f in F}), 0
    for _ in range(n):
        w, r = b[i], dict(prev)
        z, i = varint(b, i + 1)
        r["t0"] = (prev["t0"] + ((z >> 1) ^ -(z & 1))) % 2**64
        r["t1"], i = varint(b, i)
        if w & 1:
            r["name"], i = varint(b, i)
            r["group"], i = varint(b, i)
        if w & 2:
            r["kind"], i = varint(b, i)
            r["cat"], r["flags"] = b[i], b[i + 1]
            i += 2
        if w & 4:
            r["arg"], i = varint(b, i)
        recs.append(r)
        prev = r
    assert i == len(b)
    return recs
def pack(recs):
    out, prev = bytearray(), dict(t0=0, t1=0, **{f: 0 for f in F})
    for r in recs:
        w = (r["name"] != prev["name"] or r["group"] != prev["group"]) | \
            (r["kind"] != prev["kind"] or r["cat"] != prev["cat"] or r["flags"] != prev["flags"]) << 1 | \
            (r["arg"] != prev["arg"]) << 2
        dt = (r["t0"] - prev["t0"]) % 2**64
        out.append(w)
        out += put(((dt << 1) ^ (-(dt >> 63) % 2**64)) % 2**64)
        out += put(r["t1"])
        if w & 1:
            out += put(r["name"]) + put(r["group"])
        if w & 2:
            out += put(r["kind"]) + bytes([r["cat"], r["flags"]])
        if w & 4:
            out += put(r["arg"])
        prev = r
    return out
def first_rec(field, value):
    global d
    off, _, ln, n = first_recs
    tid = struct.unpack_from("<I", d, off + 8)[0]
    recs = unpack(d[off + 16:off + 8 + ln], n)
    recs[0][field] = value
    body = struct.pack("<II", tid, n) + pack(recs)
    assert unpack(body[8:], n) == recs
    entry = struct.pack("<II", 6, len(body)) + body + bytes(-len(body) % 8)
    d = d[:off] + entry + d[off + 8 + ((ln + 7) & ~7):]
exec(sys.argv[3])
open(sys.argv[2], "wb").write(d)
EOF
}

# Damaged entries: refused whole, one line, exit 1.
patch bad-id.json.journal 'struct.pack_into("<I", d, first_str + 8, 0x7fffffff)'
recover_fails 1 "mxprof recover: bad-id.json.journal: corrupt: string id 2147483647 out of order" \
	bad-id.json.journal
patch bad-kind.json.journal 'first_rec("kind", 99)'
recover_fails 1 "mxprof recover: bad-kind.json.journal: corrupt: a record of unknown kind 99" \
	bad-kind.json.journal
patch bad-name.json.journal 'first_rec("name", 60000)'
recover_fails 1 "mxprof recover: bad-name.json.journal: corrupt: a record names string id 60000 before it is defined" \
	bad-name.json.journal
patch bad-version.json.journal 'struct.pack_into("<I", d, 8, 7)'
recover_fails 1 "mxprof recover: bad-version.json.journal: journal version 7; this mxprof reads versions 1 to 3" \
	bad-version.json.journal

# Cut inside the header, or nothing after it.
head -c 20 d.json.journal > h20.json.journal
recover_fails 1 "mxprof recover: h20.json.journal: truncated inside the journal header (20 of 56 bytes)" \
	h20.json.journal
head -c 56 d.json.journal > h56.json.journal
recover_fails 1 "mxprof recover: h56.json.journal: holds no complete record, nothing to recover" \
	h56.json.journal

# Not journals at all.
: > empty.json.journal
recover_fails 1 "mxprof recover: empty.json.journal: empty file, not a journal" empty.json.journal
recover_fails 1 "mxprof recover: missing.json.journal: No such file or directory" missing.json.journal
python3 -c '
import random
random.seed(7)
open("garbage.json.journal", "wb").write(bytes(random.randrange(256) for _ in range(4096)))'
recover_fails 1 "mxprof recover: garbage.json.journal: not an mxprof journal" garbage.json.journal
python3 -c '
import random
random.seed(7)
h = open("d.json.journal", "rb").read()[:56]
open("hdr-garbage.json.journal", "wb").write(h + bytes(random.randrange(256) for _ in range(4096)))'
recover_fails 1 "mxprof recover: hdr-garbage.json.journal: holds no complete record, nothing to recover" \
	hdr-garbage.json.journal
recover_fails 1 "mxprof recover: d.json: not an mxprof journal" -o x.json d.json
mkdir dir.json.journal
recover_fails 1 "mxprof recover: dir.json.journal: not a regular file" dir.json.journal
mkfifo fifo.json.journal
recover_fails 1 "mxprof recover: fifo.json.journal: not a regular file" fifo.json.journal

# Outputs that cannot be written.
recover_fails 1 "mxprof recover: d.json.journal: the output would replace the journal itself" \
	-f -o d.json.journal d.json.journal
recover_fails 1 "mxprof recover: cannot write no-such-dir/x.json: No such file or directory" \
	-o no-such-dir/x.json d.json.journal

# Usage.
usage="usage: mxprof recover [-f] [-o TRACE] JOURNAL"
recover
expect_eq "no journal: exit" 2 "$rc"
expect_eq "no journal: stderr" "mxprof recover: no journal given
$usage" "$(cat err.txt)"
recover a.json.journal b.json.journal
expect_eq "two journals: exit" 2 "$rc"
recover d.json
expect_eq "no .journal ending: exit" 2 "$rc"
expect_eq "no .journal ending: stderr" \
	"mxprof recover: d.json does not end in .journal; name the trace with -o TRACE
$usage" "$(cat err.txt)"
recover --bogus d.json.journal
expect_eq "bad option: exit" 2 "$rc"
"$MX" recover --help | grep -q -- '--force' || fail "no --help text"
"$MX" --help | grep -q '^  recover ' || fail "recover is not in mxprof --help"
echo "ok: usage"

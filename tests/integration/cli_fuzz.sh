# A short fuzz run of every reader of the mxprof command: report, diff,
# merge (traces) and recover (journals), each on 40 damaged copies of a
# real trace or journal: bytes flipped, cut short, numbers replaced by the
# ends of the int64 and double ranges, nesting piled up. Each case is made
# from a fixed seed, so a failure repeats. Every run must end with status
# 0 or 1 (a clear refusal), never a crash; in the ASan and UBSan builds
# (make asan / make ubsan, in CI) any memory error or undefined behaviour
# ends the run with another status and fails the test.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
prog=$BUILD/programs/core_counts

# A real trace, and a real journal taken while its program records.
mkdir sync
MXPROF_AUTOSTART=1 MXPROF_OUTPUT=$WORK/t.json LD_PRELOAD="$PRELOAD" \
	"$prog" 2 50 sync >/dev/null &
pid=$!
wait_until -p $pid "the half-way point and the journal" '[ -e sync/half ] && [ -s t.json.journal ]'
cp t.json.journal j.journal
touch sync/go
wait $pid
cp t.json good.json

mkdir cases
python3 - "$WORK" <<'PY'
import os, random, sys
work = sys.argv[1]
rnd = random.Random(20)
ext = [b"9223372036854775807", b"-9223372036854775808", b"18446744073709551616",
       b"1e308", b"-1e308", b"1e-320", b"0", b"-1", b"99999999999999999999999"]

def mutate(data, text):
    d = bytearray(data)
    kind = rnd.randrange(5)
    if kind == 0 and d:  # flip bytes
        for _ in range(rnd.randrange(1, 9)):
            d[rnd.randrange(len(d))] = rnd.randrange(256)
    elif kind == 1 and d:  # cut short
        del d[rnd.randrange(len(d)):]
    elif kind == 2 and text:  # extreme numbers
        out, i = bytearray(), 0
        while i < len(d):
            if chr(d[i]).isdigit() and rnd.random() < 0.2:
                j = i
                while j < len(d) and (chr(d[j]).isdigit() or d[j] in b".e-"):
                    j += 1
                out += rnd.choice(ext)
                i = j
            else:
                out.append(d[i])
                i += 1
        d = out
    elif kind == 3 and text:  # deep nesting inside an event
        at = d.find(b'"args":')
        if at >= 0:
            n = rnd.choice([100, 5000])
            d[at + 7:at + 7] = b"[" * n + b"]" * n + b","
    else:  # a region copied elsewhere
        if len(d) > 16:
            a = rnd.randrange(len(d) - 8)
            b = rnd.randrange(a, len(d))
            d[rnd.randrange(len(d)):0] = d[a:b][:4096]
    return bytes(d)

trace = open(os.path.join(work, "good.json"), "rb").read()
journal = open(os.path.join(work, "j.journal"), "rb").read()
for i in range(40):
    open(f"{work}/cases/t{i}.json", "wb").write(mutate(trace, True))
    open(f"{work}/cases/j{i}.journal", "wb").write(mutate(journal, False))
PY

bad=0
check() { # check WHAT STATUS
	case $2 in
	0 | 1) ;;
	*) echo "FAIL: $1 ended with status $2:" && tail -3 err.txt && bad=$((bad + 1)) ;;
	esac
}
runs=0
for i in $(seq 0 39); do
	t=cases/t$i.json
	rc=0; "$MX" report "$t" >/dev/null 2>err.txt || rc=$?; check "report $t" $rc
	rc=0; "$MX" diff good.json "$t" >/dev/null 2>err.txt || rc=$?; check "diff $t" $rc
	rc=0; "$MX" merge -o m.json good.json "$t" >/dev/null 2>err.txt || rc=$?; check "merge $t" $rc
	rc=0; "$MX" recover -f -o "r$i.json" "cases/j$i.journal" >/dev/null 2>err.txt || rc=$?
	check "recover cases/j$i.journal" $rc
	runs=$((runs + 4))
done
expect_eq "runs" 160 "$runs"
expect_eq "runs that crashed" 0 "$bad"

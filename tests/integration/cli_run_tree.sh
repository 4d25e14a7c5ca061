# mxprof run gives one result for the process tree it starts: a Python
# program with 2 forked workers and a pool of 2 ends with one trace at -o
# that holds every process, each its own track named "python3" (the viewers add the pid)
# with its command line, and every worker's zlib.crc32 calls exactly (as
# each counted them); the tables cover the whole tree, then each process.
# A program killed by SIGKILL leaves only its journal: mxprof run recovers
# it by itself, with every record drained before the kill, and says so in
# one line.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
cd "$WORK"
PY=/usr/bin/python3

cat >mp.py <<'PY'
import multiprocessing as mp, os, zlib

def work(n):
    for i in range(n):
        zlib.crc32(b"%d" % i)
    with open("calls.%d" % os.getpid(), "a") as f:
        f.write("%d\n" % n)
    return n

if __name__ == "__main__":
    mp.set_start_method("fork")
    ps = [mp.Process(target=work, args=(1000 + i,)) for i in range(2)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    pool = mp.Pool(2)
    print(sum(pool.map(work, [100] * 8, chunksize=1)))
    pool.close()
    pool.join()
    work(7)
PY

$PY mp.py >plain.txt 2>&1 || fail "mp.py failed: $(cat plain.txt)"
rm -f calls.*
"$MX" run -q --hook 'libz*:crc32' -o tree.json $PY mp.py >out.txt 2>err.txt ||
	fail "mxprof run: status $?: $(cat err.txt)"
cat err.txt
expect_eq "output" "$(cat plain.txt)" "$(cat out.txt)"
tracesummary tree.json >sum.json
# Every process that made calls, and the root, are in the one trace.
want_pids=$(ls calls.* | sed 's/calls\.//' | sort -n | tr '\n' ' ')
got_pids=$(jget sum.json '" ".join(str(p) for p in sorted(d["pids"]))')
for p in $want_pids; do
	case " $got_pids " in *" $p "*) ;; *) fail "pid $p is not in the merged trace ($got_pids)" ;; esac
done
total=0
for f in calls.*; do
	pid=${f#calls.}
	want=$(awk '{s += $1} END {print s}' "$f")
	total=$((total + want))
	expect_eq "pid $pid: calls in the merged trace" "$want" "$(python3 -c '
import json, sys
ev = json.load(open("tree.json"))["traceEvents"]
print(sum(1 for e in ev if e.get("ph") == "X" and e["pid"] == int(sys.argv[1]) and e["name"] == "crc32"))' "$pid")"
	expect_eq "pid $pid: its track" "python3" "$(jget sum.json "d['process_names']['$pid']")"
	expect_eq "pid $pid: its section in the tables" "$want" "$(row_count <(sed -n "/^Process python3 (pid $pid)\$/,/^Process /p" tree.stats.txt) "C API (libz.so.1)" crc32)"
done
expect_eq "calls of the whole tree" "$total" "$(row_count tree.stats.txt "C API (libz.so.1)" crc32)"
expect_eq "command line label" "/usr/bin/python3 mp.py" "$(python3 -c '
import json
ev = json.load(open("tree.json"))["traceEvents"]
print(sorted({e["args"]["labels"] for e in ev if e.get("name") == "process_labels"})[0])')"
nproc=$(jget sum.json 'len(d["pids"])')
# One trace per run in the folder; each process's own in tree.processes.
expect_eq "traces beside tree.json" "tree.json" "$(ls tree*.json)"
expect_eq "per-process traces" "$nproc" "$(ls tree.processes/tree.json tree.processes/tree.[0-9]*.json | wc -l)"
expect_eq "summary line" "mxprof: $nproc processes merged into tree.json" "$(grep -o '^mxprof: [0-9]* processes merged into tree.json' err.txt)"

# SIGKILL: the journal is recovered without a manual step.
set +e
MXPROF_LIB=$MXPROF_LIB "$MX" run -q -o killed.json "$BUILD/programs/crash_tasks" -n 200 kill >kout.txt 2>kerr.txt
rc=$?
set -e
expect_eq "status of the killed program" 137 "$rc"
expect_eq "recovery line" 1 "$(grep -c 'ended before writing its trace.*recovered 722 records' kerr.txt)"
tracesummary killed.json >k.json
expect_eq "recovered events" "{'crash/inner': 200, 'crash/step': 200, 'crash/work': 100, 'crash/epoch': 2}" "$(jget k.json 'dict(sorted(d["spans"].items(), key=lambda kv: -kv[1]))' | python3 -c 'import ast,sys; print(dict(sorted(ast.literal_eval(sys.stdin.read()).items(), key=lambda kv: (-kv[1], kv[0]))))')"
expect_eq "journal gone" "" "$(ls killed.json.journal 2>/dev/null || true)"
expect_eq "tables" 200 "$(row_count killed.stats.txt crash step)"

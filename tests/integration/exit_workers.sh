# Forked workers end through os._exit(), which skips the final dump: with
# multiprocessing (2 forked workers, then a pool of 2) and PyTorch's
# DataLoader (num_workers=2), every worker's zlib.crc32 calls are in its
# own trace and tables, exactly as many as it made, and the program's
# output and status are those of a run without mxprof.
. "$ROOT/tests/integration/lib.sh"
cd "$WORK"
PY=/usr/bin/python3

cat >mp.py <<'PY'
import multiprocessing as mp, os, sys, zlib

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
    print("exit codes", [p.exitcode for p in ps])
PY

cat >dl.py <<'PY'
import os, zlib
import torch
from torch.utils.data import DataLoader, Dataset

class Crc(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        for k in range(10 + i):
            zlib.crc32(b"%d" % k)
        with open("calls.%d" % os.getpid(), "a") as f:
            f.write("%d\n" % (10 + i))
        return torch.tensor(i)

if __name__ == "__main__":
    got = sorted(int(x) for b in DataLoader(Crc(), batch_size=4, num_workers=2) for x in b)
    print(got == list(range(64)))
PY

# run NAME SCRIPT: the script without mxprof, then with it; the outputs
# and statuses must match, and each worker's calls (which it counted in
# calls.PID) must be the crc32 count in its tables and trace.
run() {
	local name=$1 script=$2
	rm -f calls.*
	$PY "$script" >"$name.plain" 2>&1 || fail "$script failed: $(cat "$name.plain")"
	rm -f calls.*
	MXPROF_AUTOSTART=1 MXPROF_HOOK='libz*:crc32' MXPROF_OUTPUT="$WORK/$name.json" \
		LD_PRELOAD="$PRELOAD" $PY "$script" >"$name.out" 2>"$name.err" ||
		fail "$script under mxprof: status $?: $(cat "$name.err")"
	expect_eq "$name output" "$(cat "$name.plain")" "$(cat "$name.out")"
	local workers=0 f pid want
	for f in calls.*; do
		pid=${f#calls.}
		want=$(awk '{s += $1} END {print s}' "$f")
		expect_eq "$name worker $pid: calls in the tables" "$want" \
			"$(row_count "$name.$pid.stats.txt" "C API (libz.so.1)" crc32)"
		tracesummary "$name.$pid.json" >s.json
		expect_eq "$name worker $pid: calls in the trace" "$want" \
			"$(jget s.json 'sum(v for k, v in d["spans"].items() if k.endswith("crc32"))')"
		workers=$((workers + 1))
	done
	echo "$workers"
}

n=$(run mp mp.py | tee /dev/stderr | tail -1)
[ "$n" -ge 3 ] || fail "mp: $n workers made calls, expected at least 3"
if $PY -c 'import torch' 2>/dev/null; then
	n=$(run dl dl.py | tee /dev/stderr | tail -1)
	expect_eq "DataLoader workers with calls" 2 "$n"
else
	skip_part "DataLoader (no torch for $PY)"
fi

# Steps of a PyTorch loop with no code change (Debian's python3-torch, for
# /usr/bin/python3): the DataLoader loop of torch_loop.py (12 batches,
# SGD, a record_function("my_block") block per batch) under
#  - the defaults: 12 ProfilerStep#0..11 slices of cat user_annotation on
#    the main thread, one after the other, each ending where its
#    Optimizer.step#SGD.step ends and holding one my_block; a Steps
#    section counting 12 steps; the printed loss unchanged;
#  - MXPROF_STEPS=2:1:3 (torch.profiler's wait=2, warmup=1, active=3):
#    exactly steps 3, 4 and 5, their 3 Optimizer.step#SGD.step slices and
#    3 my_block slices in the trace, my_block counted 3 times in the
#    tables, and the metadata's "steps" saying 3-5;
#  - MXPROF_STEPS=list:1,4-5: steps 1, 4 and 5;
#  - MXPROF_STEP=my_block: a step ends where each my_block ends (12).
. "$ROOT/tests/integration/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null ||
	skip "torch cannot be imported by $PY (python3-torch)"
LOOP=$ROOT/tests/programs/torch_loop.py

"$PY" "$LOOP" sgd >plain.txt

# run NAME [VAR=VALUE...]: the loop under mxprof, into NAME.json.
run() {
	local name=$1
	shift
	env "$@" MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$name.json" \
		LD_PRELOAD="$PRELOAD" "$PY" "$LOOP" sgd >"$name.out" 2>"$name.err"
	cat "$name.err"
	diff plain.txt "$name.out" || fail "$name: the printed loss differs"
}

# steps NAME: "N first-name-inside" for each ProfilerStep#N, in order;
# then the counts of the annotations in the trace.
steps() {
	"$PY" - "$1.json" <<'PYEOF'
import collections, json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
st = sorted((e for e in ev if e["name"].startswith("ProfilerStep#")),
            key=lambda e: e["ts"])
for e in st:
    assert e["cat"] == "user_annotation", e
# Times are in us with 3 decimals: sums of them are compared within 1.5 ns.
inside = lambda s, n: sum(1 for e in ev if e["name"] == n and
                          e["tid"] == s["tid"] and s["ts"] <= e["ts"] and
                          e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 0.0015)
print("steps", " ".join(e["name"].split("#")[1] for e in st))
print("tids", len(set(e["tid"] for e in st)))
print("each", " ".join("%d/%d" % (inside(e, "my_block"),
                       inside(e, "Optimizer.step#SGD.step")) for e in st))
for a, b in zip(st, st[1:]):
    assert a["ts"] + a["dur"] <= b["ts"] + 0.0015, (a, b)
c = collections.Counter(e["name"] for e in ev if e.get("cat") == "user_annotation")
print("my_block", c["my_block"])
print("opt", c["Optimizer.step#SGD.step"])
print("meta", d.get("steps"))
PYEOF
}

# table NAME ROW: the count of ROW in NAME.stats.txt.
table() {
	awk -v n="$2" 'index($0, n " ") == 1 { print $(NF - 6); exit }' \
		"$1.stats.txt"
}

run all
steps all >all.sum
cat all.sum
expect_eq "default steps" "0 1 2 3 4 5 6 7 8 9 10 11" "$(sed -n 's/^steps //p' all.sum)"
expect_eq "default steps' threads" 1 "$(sed -n 's/^tids //p' all.sum)"
expect_eq "default steps' contents" \
	"$(printf '1/1 %.0s' $(seq 12) | sed 's/ $//')" "$(sed -n 's/^each //p' all.sum)"
expect_eq "default my_block slices" 12 "$(sed -n 's/^my_block //p' all.sum)"
expect_eq "Steps section count" 12 \
	"$(awk '$1 == "mean" { print $2; exit }' all.stats.txt)"
expect_eq "my_block in the tables" 12 "$(table all my_block)"

run window MXPROF_STEPS=2:1:3
steps window >window.sum
cat window.sum
expect_eq "2:1:3 steps" "3 4 5" "$(sed -n 's/^steps //p' window.sum)"
expect_eq "2:1:3 contents" "1/1 1/1 1/1" "$(sed -n 's/^each //p' window.sum)"
expect_eq "2:1:3 my_block slices" 3 "$(sed -n 's/^my_block //p' window.sum)"
expect_eq "2:1:3 optimizer slices" 3 "$(sed -n 's/^opt //p' window.sum)"
expect_eq "2:1:3 metadata" 3-5 "$(sed -n 's/^meta //p' window.sum)"
expect_eq "2:1:3 my_block in the tables" 3 "$(table window my_block)"
expect_eq "2:1:3 optimizer in the tables" 3 \
	"$(table window Optimizer.step#SGD.step)"

run list MXPROF_STEPS=list:1,4-5
steps list >list.sum
expect_eq "list steps" "1 4 5" "$(sed -n 's/^steps //p' list.sum)"
expect_eq "list my_block in the tables" 3 "$(table list my_block)"

run block MXPROF_STEP=my_block
steps block >block.sum
expect_eq "MXPROF_STEP=my_block steps" "0 1 2 3 4 5 6 7 8 9 10 11" \
	"$(sed -n 's/^steps //p' block.sum)"

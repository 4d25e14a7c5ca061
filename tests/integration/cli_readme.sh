# The documents' examples of the mxprof command, run as written: every
# line that starts with `mxprof ` in a ```sh block of README.md or of a
# docs/*.md is taken from the document itself (so the two cannot drift
# apart) and run, in order (the README, then the documents by name), with
# `mxprof` being this build's command. How many lines each document has is
# checked, so that text moved between documents cannot drop an example
# unnoticed. What the lines need is set up around them: ./train is the
# bundled example (examples/demo, domain "train"), and so is
# build/examples/demo through a link to the build; ./serve a program that
# waits until told to end; `pgrep -n serve` finds that program (`dump
# --stacks` prints its thread's stack); rank0.json
# and rank1.json come from two runs with RANK set; the journal for
# `recover` from a ./serve run under the library alone and killed with
# SIGKILL after a dump (its trace removed, as after a crash), never one
# that a `mxprof run` line of the session recovered already (checked);
# the PyTorch examples' script through a link
# to the checkout's tests/ (their lines are passed over, with one line
# each, where /usr/bin/python3 has no torch).
. "$ROOT/tests/integration/lib.sh"
mxprof_command
mxprof() { "$MX" "$@"; }
mkdir bin
ln -s "$BUILD/programs/cli_tasks" bin/serve
printf '#!/bin/sh\nexec "%s"\n' "$BUILD/examples/demo" > train
printf '#!/bin/sh\nexec "%s" -u 200 -w "%s"\n' "$WORK/bin/serve" "$WORK/go" > serve
chmod +x train serve
ln -s "$ROOT/tests" tests
ln -s "$BUILD" build
torch=1
/usr/bin/python3 -c 'import torch' 2>/dev/null || torch=0
# pgrep as docs/command.md calls it, limited to this test's ./serve once it
# is ready.
pgrep() {
	while [ ! -e "$WORK/go.ready" ]; do sleep 0.01; done
	command pgrep -n -f "^$WORK/bin/serve "
}

# commands.txt: one "DOCUMENT<tab>COMMAND" line per example;
# counts.txt: "DOCUMENT=N" for each document that has any.
(cd "$ROOT" && python3 - README.md docs/*.md) > commands.txt 3> counts.txt <<'PYEOF'
import os, sys
counts = os.fdopen(3, "w")
for doc in sys.argv[1:]:
    block, n = False, 0
    for line in open(doc):
        if line.startswith("```"):
            block = line.strip() == "```sh"
            continue
        if block and line.lstrip().startswith("mxprof "):
            print(doc + "\t" + line.strip())
            n += 1
    if n:
        print("%s=%d" % (doc, n), file=counts)
PYEOF
cat commands.txt
# mxprof run recovers the journals of the processes it starts by itself:
# the session must not tell the reader to recover one of those by hand
# (it would find no journal).
while IFS=$'\t' read -r doc cmd; do
	case "$cmd" in
	*recover*)
		j=$(echo "$cmd" | awk '{ print $NF }')
		t=${j%.journal}
		if grep -F "$doc" commands.txt | grep -q -- "run .*-o $t "; then
			fail "$doc: '$cmd' recovers $t, which mxprof run recovered already"
		fi ;;
	esac
done < commands.txt
echo "ok: no recover of a journal mxprof run recovered"
expect_eq "mxprof lines in the documents' sh blocks" \
	"README.md=6 docs/command.md=11 docs/pytorch.md=4" "$(echo $(cat counts.txt))"

n=0 ran=0 bg=
while IFS=$'\t' read -r doc cmd; do
	n=$((n + 1))
	case "$cmd" in
	*merge*rank0.json*)
		RANK=0 mxprof run -q -o 'rank%r.json' -- ./train > /dev/null 2>&1
		RANK=1 mxprof run -q -o 'rank%r.json' -- ./train > /dev/null 2>&1 ;;
	*recover\ crash.json.journal*)
		# As the comment above the line says: ./serve under the library
		# alone, killed with SIGKILL (after a dump, its trace removed).
		rm -f go go.ready
		MXPROF_AUTOSTART=1 MXPROF_OUTPUT=crash.json LD_PRELOAD="$PRELOAD" ./serve &
		pid=$!
		mxprof dump "$(pgrep)" > /dev/null
		kill -KILL $pid
		wait $pid || true
		rm -f crash.json crash.stats.txt ;;
	esac
	case "$cmd" in
	*torch_train.py* | *torch_loop.py* | *torch_flight.py* | *'--category aten'* | \
		*'--category "torch annotations"'*)
		if [ $torch = 0 ]; then
			skip_part "$cmd (no torch for /usr/bin/python3)"
			continue
		fi ;;
	esac
	echo "+ $cmd   ($doc)"
	ran=$((ran + 1))
	set +e
	case "$cmd" in
	*'&') eval "$cmd" > "out.$n" 2> "err.$n"; bg=$!; rc=0 ;;
	*) eval "$cmd" > "out.$n" 2> "err.$n"; rc=$? ;;
	esac
	set -e
	cat "out.$n" "err.$n"
	expect_eq "status of '$cmd'" 0 "$rc"
	case "$cmd" in
	*'dump --stacks'*)
		expect_eq "dump --stacks: the serving thread" 1 \
			"$(grep -c '^Thread [0-9]* (serve) ' "out.$n")" ;;
	*dump*)
		expect_eq "dump prints" "$WORK/job.json" "$(cat "out.$n")"
		touch go
		wait "$bg" || fail "mxprof run -o job.json -- ./serve failed" ;;
	*'--sort avg --top 5'*)
		expect_eq "report: rows of train" 4 "$(awk '$0 == "train" { s = 1; next } s && /^$/ { s = 0 } s && !/^(Name|----|=|Total)/' "out.$n" | wc -l)" ;;
	*'--format csv --category train'*)
		expect_eq "csv: lines (header, 4 times, counter, marker)" 7 "$(wc -l < "out.$n")" ;;
	*diff*)
		expect_eq "diff: rows of section train" 4 "$(awk '$2 == "train" && $3 ~ /^[0-9]/' "out.$n" | wc -l)" ;;
	*merge*)
		tracesummary all.json > all.sum
		expect_eq "merge: processes with slices" 2 "$(jget all.json 'len({e["pid"] for e in d["traceEvents"] if e["ph"] == "X"})')" ;;
	*recover*)
		expect_eq "recovered steps" 10 "$(row_count crash.stats.txt cli step)" ;;
	*'report demo.json --category train'*)
		expect_eq "demo report: epochs" 3 "$(row_count "out.$n" train epoch)"
		expect_eq "demo report: sections" "train train (counters) train (markers)" \
			"$(echo $(grep -B1 '^=====' "out.$n" | grep -v '^=\|^--'))" ;;
	*'-n 5 --'*torch_train.py*)
		expect_eq "torch summary: top 5 aten rows" 5 "$(grep -c '^aten::' "err.$n")"
		expect_eq "torch summary: the program's output" 1 "$(grep -c '^loss ' "out.$n")" ;;
	*'--category "torch annotations"'*)
		expect_eq "annotations: the section alone" "torch annotations" "$(sed -n 3p "out.$n")"
		expect_eq "annotations: my_block 12 times" 1 "$(grep -c '^my_block  *12 ' "out.$n")"
		expect_eq "annotations: SGD's steps" 1 "$(grep -c '^Optimizer.step#SGD.step  *12 ' "out.$n")" ;;
	*'--category Steps profile.json'*)
		expect_eq "steps: the section alone" "Steps" "$(sed -n 3p "out.$n")"
		expect_eq "steps: 12 steps" 12 "$(row_count "out.$n" Steps mean)"
		expect_eq "steps: the five slowest" 5 "$(grep -c '^ProfilerStep#' "out.$n")" ;;
	*'--category aten --top 12'*)
		expect_eq "aten: the section alone" "aten" "$(sed -n 3p "out.$n")"
		expect_eq "aten: 12 operator rows" 12 "$(grep -c '^aten::' "out.$n")"
		expect_eq "aten: conv2d 7 times" 7 "$(row_count "out.$n" aten aten::conv2d)" ;;
	esac
done < commands.txt
expect_eq "commands read" 21 "$n"
expect_eq "commands run" $((13 + 8 * torch)) "$ran"
expect_eq "demo.json: epochs" 3 "$(row_count demo.stats.txt train epoch)"
expect_eq "base.json: epochs" 3 "$(row_count base.stats.txt train epoch)"

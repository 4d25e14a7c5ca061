# mxprof dump --stacks on a running PyTorch loop (Debian's python3-torch):
# every thread's stack comes back while the loop computes (its main thread
# is sampled running, under the script's line, inside the operator when
# it was in one), and the loop's output is byte for byte what it is without the
# dump, the exit status 0.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null ||
	skip "torch cannot be imported by $PY (python3-torch)"
cp "$ROOT/tests/programs/threads/tn_torch.py" "$WORK/loop.py"
cd "$WORK"
touch plain.ready.go
"$PY" loop.py plain.ready >plain.txt

MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/t.json" LD_PRELOAD="$PRELOAD" \
	"$PY" loop.py mx.ready >mx.txt 2>mx.err &
pid=$!
wait_until -p "$pid" "the loop to reach step 20" '[ -e mx.ready ]'
"$MX" dump --stacks "$pid" >stacks.txt
tasks=$(cat /proc/$pid/task/*/comm | grep -cv '^mxprof-')
touch mx.ready.go
wait "$pid"
expect_eq "the loop's output" "$(cat plain.txt)" "$(cat mx.txt)"
expect_eq "lines" 40 "$(wc -l <mx.txt)"
# Every thread but mxprof's own (the drain thread, the writers).
expect_eq "threads" "$tasks" "$(grep -c '^Thread ' stacks.txt)"
expect_eq "every thread's stack whole" 0 "$(grep -c 'no stack\|incomplete' stacks.txt)"
expect_eq "the main thread runs" 1 "$(grep -c "^Thread $pid (python3) running:\$" stacks.txt)"
awk -v n="$pid" '$1 == "Thread" {on = ($2 == n)} on && NF' stacks.txt >main.txt
# Sampled where it is: in the spin's test (line 29) or its operators
# (line 30: x.t(), then mm).
expect_eq "the main thread: the script's line" 1 \
	"$(grep -cE "^  File \"$WORK/loop.py\", line (29|30), in <module>\$" main.txt)"
# A sample inside libtorch_cpu from line 30 is under the operator's call;
# one taken while Python or libtorch_python prepares the call has none.
if grep -q 'loop.py", line 30' main.txt && grep -q '(libtorch_cpu' main.txt; then
	expect_eq "the main thread: in the operator under it" 1 \
		"$(grep -cE '^  at::_ops::(mm|t)::call\(at::Tensor const&(, at::Tensor const&)?\) \(libtorch_cpu' main.txt)"
fi
echo "ok"

# speedscope's importer (the code behind a file dropped on speedscope),
# bundled for node from its sources as $MXPROF_CONSUMERS/speedscope/import.js
# (docs/tests.md), imports mxprof's traces:
#  - a PyTorch CPU loop with stacks: one profile, the main thread's, named
#    as Kineto names it, with no warning;
#  - the fake CUDA loop: one profile per track (the thread, the stream and
#    the sync track). (speedscope adds ts and dur in floating point, so
#    GPU work back to back may overlap by a rounding error: its warnings
#    there are not counted.)
. "$ROOT/tests/integration/lib.sh"
SS=${MXPROF_CONSUMERS:-}/speedscope/import.js
[ -n "${MXPROF_CONSUMERS:-}" ] && [ -f "$SS" ] ||
	skip "no speedscope bundle (set MXPROF_CONSUMERS, see docs/tests.md)"
command -v node >/dev/null || skip "no node"
check() { node "$ROOT/tests/tools/speedscope_check.js" "$SS" "$1" | tail -1; }

PY=/usr/bin/python3
if "$PY" -c 'import torch' 2>/dev/null; then
	cp "$ROOT/tests/programs/torch_train.py" .
	MXPROF_STACKS=64 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/t.json" \
		LD_PRELOAD="$PRELOAD" "$PY" torch_train.py 3 plain >/dev/null || fail "torch_train.py"
	check t.json >t.txt || fail "speedscope's import: $(cat t.txt)"
	pid=$(jget t.json 'd["mxprof"]["pid"]')
	expect_eq "PyTorch: profiles" "['python3 (pid $pid), thread $pid (python3) (tid $pid)']" \
		"$(jget t.txt 'd["names"]')"
	expect_eq "PyTorch: warnings" "[]" "$(jget t.txt 'd["warnings"]')"
	[ "$(jget t.txt 'int(d["weight"] > 0)')" = 1 ] || fail "no weight"
else
	skip_part "torch cannot be imported by $PY"
fi

fakes=$BUILD/fakes
prog=$BUILD/programs/cuda_fake_train
[ -e "$fakes/libcupti.so.13" ] || skip "no fake libcupti: the CUDA trace"
MXPROF_HOOK=none MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/c.json" \
	LD_PRELOAD="$PRELOAD" "$prog" "$fakes/libcudart.so.13" 5 >/dev/null || fail "the program failed"
check c.json >c.txt || fail "speedscope's import: $(cat c.txt)"
expect_eq "CUDA: profiles" 3 "$(jget c.txt 'd["profiles"]')"

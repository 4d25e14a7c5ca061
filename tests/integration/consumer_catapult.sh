# The catapult trace viewer's importer (the code behind chrome://tracing),
# run in node from its sources in $MXPROF_CONSUMERS/catapult
# (docs/tests.md) by tests/tools/catapult_check.js:
#  - the fake CUDA loop, ranks 0 and 1, CUPTI only and with the @cudart
#    hook: no import warning (no flow_slice_ordering_error), every one of
#    the 35 launch arrows bound, each end to the slice of its correlation;
#  - a PyTorch CPU trace with stacks: every slice with a stack gets its
#    frame, each named.
. "$ROOT/tests/integration/lib.sh"
CAT=${MXPROF_CONSUMERS:-}/catapult
[ -n "${MXPROF_CONSUMERS:-}" ] && [ -f "$CAT/catapult_build/node_bootstrap.js" ] ||
	skip "no catapult sources (set MXPROF_CONSUMERS, see docs/tests.md)"
command -v node >/dev/null || skip "no node"
check() { node "$ROOT/tests/tools/catapult_check.js" "$CAT" "$1" | tail -1; }
fakes=$BUILD/fakes
prog=$BUILD/programs/cuda_fake_train

if [ -e "$fakes/libcupti.so.13" ]; then
	for r in 0 1; do
		for hook in none @cudart; do
			RANK=$r MXPROF_HOOK=$hook MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/c.json" \
				LD_PRELOAD="$PRELOAD" "$prog" "$fakes/libcudart.so.13" 5 >/dev/null ||
				fail "rank $r, hook $hook: the program failed"
			check c.json >c.txt || fail "catapult's import: $(cat c.txt)"
			expect_eq "rank $r, hook $hook: warnings, arrows bound, misbound, starts" \
				"{} 35 0 35" "$(jget c.txt '" ".join(str(x) for x in (d["warnings"], d["flows"], d["misbound"], d["flowPoints"]))')"
		done
	done
else
	skip_part "no fake libcupti: the CUDA traces"
fi

PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null || skip "torch cannot be imported by $PY"
cp "$ROOT/tests/programs/stacks/stack_torch.py" .
MXPROF_STACKS=64 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/t.json" \
	LD_PRELOAD="$PRELOAD" "$PY" stack_torch.py >/dev/null || fail "stack_torch.py"
check t.json >t.txt || fail "catapult's import: $(cat t.txt)"
n=$(jget t.txt 'd["sfEvents"]')
[ "$n" -gt 0 ] || fail "no event with a stack"
expect_eq "PyTorch: warnings, framed slices, unnamed frames" "{} $n 0" \
	"$(jget t.txt '" ".join(str(x) for x in (d["warnings"], d["framed"], d["unnamed"]))')"

# FlameGraph's flamegraph.pl, from its sources in
# $MXPROF_CONSUMERS/FlameGraph (docs/tests.md), draws `mxprof report
# --flame` of a PyTorch CPU loop with stacks: the loop's <module> frame
# once (one tower, whether or not the unwinder reached the native base),
# and no line of the folded stacks starts at a native frame.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
FG=${MXPROF_CONSUMERS:-}/FlameGraph/flamegraph.pl
[ -n "${MXPROF_CONSUMERS:-}" ] && [ -f "$FG" ] ||
	skip "no FlameGraph sources (set MXPROF_CONSUMERS, see docs/tests.md)"
command -v perl >/dev/null || skip "no perl"
PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null || skip "torch cannot be imported by $PY"
cp "$ROOT/tests/programs/torch_train.py" .
MXPROF_STACKS=64 MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/t.json" \
	LD_PRELOAD="$PRELOAD" "$PY" torch_train.py 5 plain >/dev/null || fail "torch_train.py"
"$MX" report --flame t.json >t.folded 2>/dev/null || fail "report --flame"
expect_eq "lines starting at a native frame" 0 "$(grep -cv '^<module> (torch_train.py:' t.folded || true)"
perl "$FG" t.folded >t.svg || fail "flamegraph.pl"
loop=$(grep -c '^<module> (torch_train.py:81);' t.folded)
[ "$loop" -gt 10 ] || fail "only $loop stacks from the loop's line"
expect_eq "<module> (torch_train.py:81) drawn" 1 \
	"$(grep -c '<title>&lt;module&gt; (torch_train.py:81) (' t.svg)"

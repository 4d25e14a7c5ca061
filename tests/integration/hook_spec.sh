# MXPROF_HOOK's contract: a malformed value gives one stderr line naming
# MXPROF_HOOK, the value and the accepted syntax, and the program runs
# unhooked; a pattern that matched nothing gives one line at exit; 'none'
# hooks nothing; the default (@auto) hooks nothing here, and since nothing
# was recorded, says so in one line (hook_hints.sh has its wording).
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
P=$WORK/hook_main_plain
"$P" basic 10 >"$WORK/plain.txt"

run() { # run NAME SPEC
	local name=$1
	shift
	env MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$name.json" "$@" \
		LD_PRELOAD="$PRELOAD" "$P" basic 10 >"$WORK/$name.txt" \
		2>"$WORK/$name.err"
	diff "$WORK/plain.txt" "$WORK/$name.txt" || fail "$name: output differs"
	# A run that recorded nothing writes no trace.
	if [ -e "$WORK/$name.json" ]; then
		tracesummary "$WORK/$name.json" >"$WORK/$name.sum"
	else
		echo '{"spans": {}}' >"$WORK/$name.sum"
	fi
}
capi() { jget "$WORK/$1.sum" 'sum(v for s, v in d["spans"].items() if s.startswith("C API"))'; }

for bad in 'libhookt.so' ':ht_add' 'libhookt.so:' '@nosuch' 'a:b:c' ','; do
	run bad MXPROF_HOOK="$bad"
	grep -v '^==' "$WORK/bad.err" >"$WORK/bad.lines" || true
	expect_eq "'$bad' stderr lines" 1 "$(grep -c 'MXPROF_HOOK' "$WORK/bad.lines")"
	grep -qF "'$bad'" "$WORK/bad.lines" || fail "'$bad' not named"
	grep -q 'LIBGLOB:SYMGLOB' "$WORK/bad.lines" || fail "syntax not given"
	expect_eq "'$bad' C API slices" 0 "$(capi bad)"
done

run unmatched MXPROF_HOOK='libhookt.so:ht_add,libnosuch.so:foo*,@mxnet'
expect_eq "unmatched ht_add" 10 "$(capi unmatched)"
grep -qx "mxprof: MXPROF_HOOK pattern 'libnosuch.so:foo\*' matched no function" \
	"$WORK/unmatched.err" || fail "no unmatched line for libnosuch.so:foo*"
grep -qx "mxprof: MXPROF_HOOK pattern '@mxnet' matched no function" \
	"$WORK/unmatched.err" || fail "no unmatched line for @mxnet"
expect_eq "unmatched lines" 2 "$(grep -c 'matched no function' "$WORK/unmatched.err")"

run none MXPROF_HOOK=none
expect_eq "none C API slices" 0 "$(capi none)"

run auto
expect_eq "@auto C API slices" 0 "$(capi auto)"
expect_eq "@auto stderr lines" 1 "$(grep -c 'MXPROF_HOOK' "$WORK/auto.err" || true)"
grep -q '^mxprof: nothing was recorded; MXPROF_HOOK=@auto tried @mxnet' \
	"$WORK/auto.err" || fail "@auto: no empty-run line"

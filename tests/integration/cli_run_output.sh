# mxprof run checks the output path before it starts the program: where
# the process tree could not write its files (a folder that does not
# exist, a folder given as the trace, /dev/null, a name too long for the
# names the tree's processes derive from it, a folder it may not write),
# it says so in one line and exits with status 1 without starting the
# program, instead of every process falling back to a private folder of
# its own and nothing being merged.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
mkdir tmp afolder
export TMPDIR=$WORK/tmp

long=$(printf 'n%.0s' $(seq 300)).json
# The longest file of a descendant is X.<pid>.json.tmp.<pid>, with pids
# of up to 7 digits: a name of 236 characters is 1 too many.
edge=$(printf 'e%.0s' $(seq 231)).json
bad=(/nonexistent/x.json afolder afolder/ /dev/null "$long" "$edge")
if [ "$(id -u)" != 0 ]; then
	mkdir ro && chmod 555 ro
	bad+=(ro/x.json)
else
	echo "note: running as root; the read-only folder case is left out"
fi
for p in "${bad[@]}"; do
	set +e
	"$MX" run -o "$p" -- touch launched >out.txt 2>err.txt
	rc=$?
	set -e
	cat err.txt
	expect_eq "-o ${p:0:40}: status" 1 "$rc"
	expect_eq "-o ${p:0:40}: lines on stderr" 1 "$(wc -l <err.txt)"
	grep -q "^mxprof run: cannot write the output " err.txt ||
		fail "-o ${p:0:40}: not the line about the output"
	[ ! -e launched ] || fail "-o ${p:0:40}: the program was started"
	expect_eq "-o ${p:0:40}: private folders" "" "$(ls tmp)"
done
# MXPROF_OUTPUT is checked the same way.
set +e
MXPROF_OUTPUT=/nonexistent/y.json "$MX" run -- touch launched 2>err.txt
rc=$?
set -e
expect_eq "MXPROF_OUTPUT: status" 1 "$rc"
grep -q "^mxprof run: cannot write the output /nonexistent/y.json" err.txt || fail "MXPROF_OUTPUT: $(cat err.txt)"

# A writable one, one of 235 characters, and %p, still work.
"$MX" run -q -o ok.json -- touch launched
[ -e launched ] || fail "-o ok.json: not started"
rm launched
"$MX" run -q -o "${edge#e}" -- touch launched
[ -e launched ] || fail "-o (235 characters): not started"
"$MX" run -q -o 'p-%p.json' -- true
echo "ok: writable outputs"

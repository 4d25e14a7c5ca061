# What another user can plant never turns a root-run profile against the
# machine, and two processes never share a journal. Runs as root in a
# private mount namespace with its own /tmp (a tmpfs), so the host's /tmp
# is never touched; the other user is `nobody` (setpriv).
#  - a status folder /tmp/mxprof-0 made by another user, with a link at
#    the status file's temporary name: the victim file is unchanged, one
#    line, no status file;
#  - `mxprof dump` refuses a status file in a folder of another user, one
#    owned by another user, and one that names SIGKILL; the target lives;
#  - links at the journal's and the temporary files' names in a shared
#    output folder: the victim is unchanged, the trace is exact;
#  - the $TMPDIR fallback (MXPROF_OUTPUT=/dev/null) is a new private
#    folder, not the old predictable name a link was planted at;
#  - two processes with the same MXPROF_OUTPUT: the second says so once and
#    writes beside; both traces exact;
#  - an output name of 250 bytes: one line, and the fallback holds it all;
#    one of 247 bytes is written in place (shortened temporary names).
. "$ROOT/tests/integration/lib.sh"
if [ -z "${SEC_INNER:-}" ]; then
	if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
		skip "needs root and a private mount namespace"
	fi
	exec env SEC_INNER=1 unshare -m --propagation private bash "$0"
fi
# The private /tmp hides a checkout (and its build) that lives under /tmp:
# keep it reachable at the same path.
keep=
case "$ROOT/" in
/tmp/*) keep=$ROOT ;;
esac
if [ -n "$keep" ]; then
	mkdir -p /run/mxprof-sec-keep
	mount --bind "$keep" /run/mxprof-sec-keep
fi
mount -t tmpfs -o mode=1777 mxprof-sec /tmp
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	mount --bind /run/mxprof-sec-keep "$keep"
fi
mkdir /tmp/work
cd /tmp/work
WORK=/tmp/work
prog=$BUILD/programs/core_counts
mxprof_command
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
victim() {
	printf 'root only\n' >/tmp/secret
	chmod 600 /tmp/secret
}

# 1. The status folder made by another user, a link planted in it.
victim
as_nobody mkdir -m 777 /tmp/mxprof-0
rc=0
MXPROF_AUTOSTART=1 MXPROF_OUTPUT=/tmp/own/t.json PROG=$prog PRE=$PRELOAD bash -c '
	mkdir -p /tmp/own
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		ln -s /tmp/secret /tmp/mxprof-0/$$.status.tmp.$$
	exec env LD_PRELOAD="$PRE" "$PROG" 2 100' >/dev/null 2>err.txt || rc=$?
expect_eq "status folder: exit status" 0 "$rc"
expect_eq "status folder: victim unchanged" "root only" "$(cat /tmp/secret)"
expect_eq "status folder: message" \
	"mxprof: not using /tmp/mxprof-0: another user owns it; no status file, \`mxprof dump\` cannot reach this process" \
	"$(cat err.txt)"
tracesummary /tmp/own/t.json >s.json
expect_eq "status folder: steps" 200 "$(jget s.json 'd["spans"]["core/step"]')"

# 2. mxprof dump and a status file it must not trust.
LD_PRELOAD="$PRELOAD" sleep 1000 &
target=$!
wait_until -p "$target" "mxprof in process $target" \
	'grep -q libmxprof "/proc/$target/maps" 2>/dev/null'
printf 'output=/tmp/x.json\nstats=/tmp/x.stats.txt\nsignal=9\ndumps=0\n' >st
chmod 644 st
as_nobody cp st "/tmp/mxprof-0/$target.status"
rc=0
"$MX" dump "$target" >out.txt 2>err.txt || rc=$?
expect_eq "dump, folder of another user: status" 1 "$rc"
expect_eq "dump, folder of another user: message" \
	"mxprof dump: not trusting /tmp/mxprof-0/$target.status: another user owns it (or its folder); no signal sent" \
	"$(cat err.txt)"
rm -rf /tmp/mxprof-0
mkdir -m 700 /tmp/mxprof-0
cp st "/tmp/mxprof-0/$target.status"
chown nobody "/tmp/mxprof-0/$target.status"
rc=0
"$MX" dump "$target" >out.txt 2>err.txt || rc=$?
expect_eq "dump, file of another user: status" 1 "$rc"
expect_eq "dump, file of another user: message" \
	"mxprof dump: not trusting /tmp/mxprof-0/$target.status: another user owns it (or its folder); no signal sent" \
	"$(cat err.txt)"
chown root "/tmp/mxprof-0/$target.status"
rc=0
"$MX" dump "$target" >out.txt 2>err.txt || rc=$?
expect_eq "dump, SIGKILL: status" 1 "$rc"
expect_eq "dump, SIGKILL: message" \
	"mxprof dump: /tmp/mxprof-0/$target.status names signal 9, which is not a dump signal; no signal sent" \
	"$(cat err.txt)"
sed -i 's/signal=9/signal=19/' "/tmp/mxprof-0/$target.status"
rc=0
"$MX" dump "$target" >out.txt 2>err.txt || rc=$?
expect_eq "dump, SIGSTOP: status" 1 "$rc"
expect_eq "dump, target still running" "S" \
	"$(awk '/^State:/ { print $2 }' "/proc/$target/status")"
kill "$target"
wait "$target" || true
rm -rf /tmp/mxprof-0

# 3. Links at the journal's and the temporary files' names in a shared
# output folder.
victim
mkdir -m 777 /tmp/shared
rc=0
MXPROF_AUTOSTART=1 MXPROF_OUTPUT=/tmp/shared/t.json PROG=$prog PRE=$PRELOAD bash -c '
	for f in t.json.journal t.json.journal.tmp.$$ t.json.tmp.$$ t.stats.txt.tmp.$$; do
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			ln -s /tmp/secret /tmp/shared/$f
	done
	exec env LD_PRELOAD="$PRE" "$PROG" 2 100' >/dev/null 2>err.txt || rc=$?
expect_eq "shared folder: exit status" 0 "$rc"
expect_eq "shared folder: victim unchanged" "root only" "$(cat /tmp/secret)"
expect_eq "shared folder: messages" "" "$(cat err.txt)"
expect_eq "shared folder: files" "t.json t.stats.txt" "$(ls /tmp/shared | tr '\n' ' ' | sed 's/ $//')"
tracesummary /tmp/shared/t.json >s.json
expect_eq "shared folder: steps" 200 "$(jget s.json 'd["spans"]["core/step"]')"

# 4. The $TMPDIR fallback cannot be predicted.
victim
rc=0
TMPDIR=/tmp MXPROF_AUTOSTART=1 MXPROF_OUTPUT=/dev/null PROG=$prog PRE=$PRELOAD bash -c '
	for f in mxprof-$$-profile.json mxprof-$$-profile.json.journal; do
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			ln -s /tmp/secret /tmp/$f
	done
	exec env LD_PRELOAD="$PRE" "$PROG" 2 100' >/dev/null 2>err.txt || rc=$?
expect_eq "fallback: exit status" 0 "$rc"
expect_eq "fallback: victim unchanged" "root only" "$(cat /tmp/secret)"
fb=$(sed -n 's/.*; writing \(.*\) instead$/\1/p' err.txt)
dir=${fb%/profile.json}
expect_eq "fallback: message" \
	"mxprof: cannot write to /dev/null: it is not a regular file; writing $dir/profile.json instead" \
	"$(cat err.txt)"
expect_eq "fallback: a new private folder" "700 root" "$(stat -c '%a %U' "$dir")"
case $dir in /tmp/mxprof-??????) ;; *) fail "fallback folder $dir" ;; esac
expect_eq "fallback: files" "profile.json profile.stats.txt" "$(ls "$dir" | tr '\n' ' ' | sed 's/ $//')"
tracesummary "$fb" >s.json
expect_eq "fallback: steps" 200 "$(jget s.json 'd["spans"]["core/step"]')"

# 5. Two processes with the same MXPROF_OUTPUT.
mkdir /tmp/two /tmp/sync
MXPROF_AUTOSTART=1 MXPROF_OUTPUT=/tmp/two/t.json LD_PRELOAD="$PRELOAD" \
	"$prog" 2 100 /tmp/sync >/dev/null 2>errA.txt &
first=$!
wait_until -p "$first" "the first journal" '[ -e /tmp/two/t.json.journal ]'
MXPROF_AUTOSTART=1 MXPROF_OUTPUT=/tmp/two/t.json LD_PRELOAD="$PRELOAD" \
	"$prog" 1 30 >/dev/null 2>errB.txt &
second=$!
wait "$second"
touch /tmp/sync/go
wait "$first"
expect_eq "same output: first's messages" "" "$(cat errA.txt)"
expect_eq "same output: second's message" \
	"mxprof: /tmp/two/t.json is being written by process $first; writing /tmp/two/t.$second.json beside it" \
	"$(cat errB.txt)"
expect_eq "same output: files" "t.$second.json t.$second.stats.txt t.json t.stats.txt" \
	"$(ls /tmp/two | sort | tr '\n' ' ' | sed 's/ $//')"
tracesummary /tmp/two/t.json >s.json
expect_eq "same output: first's steps" 200 "$(jget s.json 'd["spans"]["core/step"]')"
tracesummary "/tmp/two/t.$second.json" >s.json
expect_eq "same output: second's steps" 30 "$(jget s.json 'd["spans"]["core/step"]')"
expect_eq "same output: first's table" 200 "$(row_count /tmp/two/t.stats.txt core step)"

# 6. An output name of 250 bytes (a legal name; its journal's is not).
mkdir /tmp/long
long=/tmp/long/$(printf 'n%.0s' $(seq 245)).json
rc=0
TMPDIR=/tmp MXPROF_AUTOSTART=1 MXPROF_OUTPUT=$long LD_PRELOAD="$PRELOAD" \
	"$prog" 2 100 >/dev/null 2>err.txt || rc=$?
expect_eq "long name: exit status" 0 "$rc"
expect_eq "long name: one line" 1 "$(wc -l <err.txt)"
fb=$(sed -n 's/.*; writing \(.*\) instead$/\1/p' err.txt)
expect_eq "long name: message" \
	"mxprof: cannot write beside $long: File name too long; writing $fb instead" \
	"$(cat err.txt)"
tracesummary "$fb" >s.json
expect_eq "long name: steps" 200 "$(jget s.json 'd["spans"]["core/step"]')"
expect_eq "long name: tables" 200 "$(row_count "${fb%.json}.stats.txt" core step)"

# A name of 247 bytes: its journal's name (255 bytes) is legal and its
# temporary names are shortened: written in place, no line, nothing left.
mkdir /tmp/long247
long=/tmp/long247/$(printf 'n%.0s' $(seq 242)).json
rc=0
MXPROF_AUTOSTART=1 MXPROF_OUTPUT=$long LD_PRELOAD="$PRELOAD" \
	"$prog" 2 100 >/dev/null 2>err.txt || rc=$?
expect_eq "247 bytes: exit status" 0 "$rc"
expect_eq "247 bytes: messages" "" "$(cat err.txt)"
expect_eq "247 bytes: files" 2 "$(ls -A /tmp/long247 | wc -l)"
tracesummary "$long" >s.json
expect_eq "247 bytes: steps" 200 "$(jget s.json 'd["spans"]["core/step"]')"
expect_eq "247 bytes: tables" 200 "$(row_count "${long%.json}.stats.txt" core step)"

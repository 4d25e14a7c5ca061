# Status files of processes that are gone (killed before they could
# remove them) are removed by the next process that writes one; those of
# live processes, and other files, stay.
. "$ROOT/tests/integration/lib.sh"
PROG=$BUILD/programs/cli_tasks
export XDG_RUNTIME_DIR=$WORK/xdg
mkdir -m 700 "$XDG_RUNTIME_DIR"
dir=$XDG_RUNTIME_DIR/mxprof
mkdir -m 700 "$dir"
# Pids above pid_max can never be running.
max=$(cat /proc/sys/kernel/pid_max)
gone1=$((max + 1)) gone2=$((max + 2))
printf 'output=/x\nsignal=10\ndumps=0\n' > "$dir/$gone1.status"
printf 'output=/x\n' > "$dir/$gone2.status"
printf 'output=/x\n' > "$dir/$$.status.tmp.$gone2"
printf 'output=/x\n' > "$dir/$$.status"
printf 'other\n' > "$dir/notes.txt"
printf 'other\n' > "$dir/$gone1.statusx"
chmod 600 "$dir"/*

MXPROF_AUTOSTART=1 MXPROF_OUTPUT=$WORK/t.json LD_PRELOAD="$PRELOAD" "$PROG" -u 200
[ -s "$WORK/t.json" ] || fail "no trace"
expect_eq "files left in the status folder" 3 "$(ls "$dir" | wc -l)"
for f in "$$.status" "$gone1.statusx" notes.txt; do
	[ -e "$dir/$f" ] || fail "$f was removed"
done
echo "ok: the live process's file and the other files stay"

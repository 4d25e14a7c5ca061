# Where the trace goes when MXPROF_OUTPUT is relative, or not a file:
#  - a relative path is taken from the folder the program started in, even
#    after the program changes folder (Python's os.chdir between two
#    hooked zlib.crc32 calls);
#  - a path that names a folder, ends in '/', or names a FIFO is refused
#    with one line, and the trace and tables go to a new private folder
#    (mode 0700, an unpredictable name) in $TMPDIR instead; the FIFO is
#    left as it was.
. "$ROOT/tests/integration/lib.sh"
cd "$WORK"
PY=$(python3 -c 'import sys; print(sys.executable)')
mkdir start start/sub
(cd start && MXPROF_AUTOSTART=1 MXPROF_OUTPUT=t.json MXPROF_HOOK='libz.so*:crc32' \
	LD_PRELOAD="$PRELOAD" "$PY" -c \
	'import os, zlib; zlib.crc32(b"a"); os.chdir("sub"); zlib.crc32(b"b")')
expect_eq "chdir: files in the start folder" "sub t.json t.stats.txt" \
	"$(ls start | tr '\n' ' ' | sed 's/ $//')"
expect_eq "chdir: files in the new folder" "" "$(ls start/sub)"
tracesummary start/t.json >s.json
expect_eq "chdir: crc32 calls" 2 "$(jget s.json 'd["spans"]["C API (libz.so.1)/crc32"]')"

prog=$BUILD/programs/core_counts
mkdir dir tmp
mkfifo fifo
for out in "$WORK/dir" "$WORK/dir/" "$WORK/fifo"; do
	rm -rf tmp/*
	TMPDIR=$WORK/tmp MXPROF_AUTOSTART=1 MXPROF_OUTPUT=$out LD_PRELOAD="$PRELOAD" \
		"$prog" 2 100 >/dev/null 2>err.txt
	dir=$(ls tmp)
	case $dir in mxprof-??????) ;; *) fail "$out: fallback folder '$dir'" ;; esac
	case $out in
	*/) why="it names a folder" ;;
	*/dir) why="it is a folder" ;;
	*) why="it is not a regular file" ;;
	esac
	expect_eq "$out: message" \
		"mxprof: cannot write to $out: $why; writing $WORK/tmp/$dir/profile.json instead" \
		"$(cat err.txt)"
	expect_eq "$out: fallback folder's mode" 700 "$(stat -c %a "tmp/$dir")"
	expect_eq "$out: fallback files" "profile.json profile.stats.txt" \
		"$(ls "tmp/$dir" | sort | tr '\n' ' ' | sed 's/ $//')"
	tracesummary "tmp/$dir/profile.json" >s.json
	expect_eq "$out: steps" 200 "$(jget s.json 'd["spans"]["core/step"]')"
done
expect_eq "the FIFO is still a FIFO" yes "$([ -p fifo ] && echo yes)"
expect_eq "nothing left in dir" "" "$(ls -A dir)"

# preload/pyframes*.c: the calling thread's Python frames, read from the
# interpreter's memory, for each CPython it knows (3.9 to 3.13 from pyenv,
# and Debian's /usr/bin/python3, linked statically). libpyprobe.so
# (tests/programs/pyprobe/, with build/obj/preload/pyframes*.o) is called
# through ctypes by python_frames.py, copied to script.py, where <module>
# calls caller_py() which calls leaf_py() which calls the probe:
#  - through CDLL (GIL released), PyDLL (GIL held), with max 2, through
#    map() (a C function calling Python) and on a threading.Thread: the
#    innermost frames are exactly leaf_py, caller_py and <module> (or
#    Thread.run) at the lines marked in the script, every frame agrees
#    with sys._getframe(), and the entry flags are those of the version
#    (every frame before 3.11; the first frame of each evaluation call
#    after), as many as the native _PyEval_EvalFrameDefault frames;
#  - 32 frames deep: the cost of a capture (printed);
#  - py_frame_describe: str kinds 1, 2 and 4 in names and file names,
#    cuts at whole characters, "?" for what is not a code object, and the
#    line of every instruction of ~thousands of code objects as CPython's
#    own line table reader gives it;
#  - in __del__: 2 frames, and 0 while the interpreter finalizes;
#  - probed from an LD_PRELOAD constructor before the interpreter starts:
#    ready, 0 frames.
# CPython 3.8 is refused with one line; a program without Python has no
# frames. A Python that is not installed is skipped.
. "$ROOT/tests/integration/lib.sh"
OBJ=("$BUILD"/obj/preload/pyframes.o "$BUILD"/obj/preload/pyframes_versions.o
	"$BUILD"/obj/preload/pyframes_describe.o)
for o in "${OBJ[@]}"; do
	[ -e "$o" ] || fail "$o is not built"
done
PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
# In a sanitizer build pyframes*.o need the runtime, loaded first.
SAN=() SANLIB=
case "$SANITIZER" in
asan) SAN=(-fsanitize=address) SANLIB=${PRELOAD% *} ;;
ubsan) SAN=(-fsanitize=undefined) SANLIB=${PRELOAD% *} ;;
tsan) skip "TSan's runtime cannot be injected into python" ;;
esac
CFLAGS=(-std=gnu11 -O2 -g -fPIC -Wall -Wextra -Werror -D_GNU_SOURCE
	-I"$ROOT/include" -I"$ROOT/preload" "${SAN[@]}")
cc "${CFLAGS[@]}" -shared -o "$WORK/libpyprobe.so" \
	"$ROOT/tests/programs/pyprobe/pyprobe.c" "${OBJ[@]}" -ldl
cc "${CFLAGS[@]}" -DPYPROBE_MAIN -o "$WORK/nopy" \
	"$ROOT/tests/programs/pyprobe/pyprobe.c" "${OBJ[@]}" -ldl
cp "$ROOT/tests/integration/python_frames.py" "$WORK/script.py"
line() { grep -n "# @$1\$" "$WORK/script.py" | cut -d: -f1; }
LEAF=$(line leaf) CALLER=$(line caller)

expect_eq "no Python" "probe=0 frames=0 describe=-1 name=? file=? eval=0" \
	"$("$WORK/nopy")"

# frames OUT TAG: the frame lines of TAG.
frames() { sed -n "s/^$2: //p" "$1"; }

check() { # PY MINOR
	local py=$1 minor=$2 out=$WORK/out$2 tag m
	local -A entries
	if [ "$minor" -le 10 ]; then
		entries=([cdll]="1 1 1" [pydll]="1 1 1" [max2]="1 1"
			[map]="1 1 1" [thread]="1 1 1 1 1")
		local run=run
	else
		entries=([cdll]="0 0 1" [pydll]="0 0 1" [max2]="0 0"
			[map]="0 1 1" [thread]="0 0 0 0 1")
		# 3.11 calls a thread's target through CALL_FUNCTION_EX,
		# which it does not inline: a new evaluation call.
		if [ "$minor" -eq 11 ]; then
			entries[thread]="0 1 0 0 1"
		fi
		local run=Thread.run
	fi
	(cd "$WORK" && LD_PRELOAD="$SANLIB" "$py" script.py \
		"$WORK/libpyprobe.so" >"$out.txt" 2>"$out.err") ||
		fail "$py: $(tail -5 "$out.err")"
	expect_eq "$py: stderr" "" "$(cat "$out.err")"
	expect_eq "$py: probe" "probe 1 1" "$(grep '^probe ' "$out.txt")"
	for tag in cdll pydll map thread; do
		m=
		if [ $tag != thread ]; then
			m=$(line "$tag")
		fi
		expect_eq "$py: $tag frames" \
			"leaf_py (script.py:$LEAF)|caller_py (script.py:$CALLER)|$(
				[ $tag = thread ] && echo "$run (threading.py:" ||
					echo "<module> (script.py:$m)")" \
			"$(frames "$out.txt" $tag | sed -n 1,3p | tr '\n' '|' |
				sed 's/\(threading.py:\)[0-9]*)|$/\1/; s/|$//')"
		expect_eq "$py: $tag: as sys._getframe()" "$tag python agrees" \
			"$(grep "^$tag python" "$out.txt")"
		expect_eq "$py: $tag entries" "${entries[$tag]}" \
			"$(sed -n "s/^$tag entries: //p" "$out.txt")"
		grep -q "^$tag evals \([0-9]*\), entries \1$" "$out.txt" ||
			fail "$py: $tag: $(grep "^$tag evals" "$out.txt")"
	done
	expect_eq "$py: frame count" "cdll frames 3|pydll frames 3|max2 frames 2|map frames 3|thread frames 5" \
		"$(grep '^\(cdll\|pydll\|max2\|map\|thread\) frames ' "$out.txt" | tr '\n' '|' | sed 's/|$//')"
	expect_eq "$py: max 2" \
		"leaf_py (script.py:$LEAF)|caller_py (script.py:$CALLER)" \
		"$(frames "$out.txt" max2 | tr '\n' '|' | sed 's/|$//')"
	expect_eq "$py: max 2 entries" "${entries[max2]}" \
		"$(sed -n 's/^max2 entries: //p' "$out.txt")"
	expect_eq "$py: bench depth" "bench depth 32" \
		"$(grep '^bench depth' "$out.txt")"
	echo "$py: $(grep '^bench ns' "$out.txt") per capture, 32 frames"
	expect_eq "$py: describe" "desc kind1 0 [café_ünï (script.py:$(line kind1))] [$WORK/script.py]
desc kind2 0 [函数 (script.py:$(line kind2))] [$WORK/script.py]
desc kind4 0 [𠀀𠀁 (script.py:$(line kind4))] [$WORK/script.py]
desc file 0 [g (文件_𠀀.py:1)] [/x/dé/文件_𠀀.py]
desc cut5 0 [函] [${WORK:0:3}]
desc cut7 0 [函数] [${WORK:0:4}]
desc cut1 0 [] []
desc int -1 [?] [?]
desc bytes -1 [?] [?]
desc null -1 [?] [?]
desc odd -1 [?] [?]" "$(grep '^desc ' "$out.txt")"
	expect_eq "$py: lines" "lines checked many|lines differing 0" \
		"$(grep '^lines ' "$out.txt" | tr '\n' '|' | sed 's/|$//')"
	expect_eq "$py: __del__, then at finalization" \
		"del frames 2|del frames 0" \
		"$(grep '^del ' "$out.txt" | tr '\n' '|' | sed 's/|$//')"
	expect_eq "$py: not probed before" "ctor -100 -100" \
		"$(grep '^ctor ' "$out.txt")"

	# Probed by a constructor before the interpreter starts: ready, and
	# no frames; the rest as before.
	(cd "$WORK" && PYPROBE_CTOR=1 \
		LD_PRELOAD="$SANLIB${SANLIB:+ }$WORK/libpyprobe.so" "$py" \
		script.py "$WORK/libpyprobe.so" >"$out.ctor.txt" 2>&1) ||
		fail "$py (constructor): $(tail -5 "$out.ctor.txt")"
	expect_eq "$py: probed before start" "ctor 1 0" \
		"$(grep '^ctor ' "$out.ctor.txt")"
	diff <(grep -v '^\(ctor\|bench ns\) ' "$out.txt") \
		<(grep -v '^\(ctor\|bench ns\) ' "$out.ctor.txt") ||
		fail "$py: differs when probed before start"
}

ran=0
for minor in 9 10 11 12 13; do
	py=$(ls -d "$PYENV"/3.$minor.*/bin/python3.$minor 2>/dev/null | tail -1)
	if [ -z "$py" ] || [ ! -x "$py" ]; then
		skip_part "CPython 3.$minor (not installed under $PYENV)"
		continue
	fi
	check "$py" $minor
	ran=$((ran + 1))
done
if [ -x /usr/bin/python3 ]; then
	minor=$(/usr/bin/python3 -c 'import sys; print(sys.version_info[1])')
	check /usr/bin/python3 "$minor"
	ran=$((ran + 1))
else
	skip_part "/usr/bin/python3 (not installed)"
fi
echo "ran $ran Pythons"

# A version it does not know: one line, once; no frames.
py=$(ls -d "$PYENV"/3.8.*/bin/python3.8 2>/dev/null | tail -1)
if [ -n "$py" ] && [ -x "$py" ]; then
	LD_PRELOAD="$SANLIB" "$py" -c 'import ctypes, sys
l = ctypes.CDLL(sys.argv[1])
print(l.pyprobe_probe(), l.pyprobe_probe())
b = ctypes.create_string_buffer(4096)
print(l.pyprobe_stack(b, 4096, 64), b.value.decode().strip())' \
		"$WORK/libpyprobe.so" >"$WORK/py38.txt" 2>"$WORK/py38.err"
	expect_eq "3.8: probe, capture" "-95 -95|0 evals 0" \
		"$(tr '\n' '|' <"$WORK/py38.txt" | sed 's/|$//')"
	expect_eq "3.8: stderr" "mxprof: CPython 3.8 is not known to the stack capture; Python frames are left out" \
		"$(cat "$WORK/py38.err")"
else
	skip_part "CPython 3.8 (not installed under $PYENV)"
fi

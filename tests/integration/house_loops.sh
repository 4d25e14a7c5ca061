# No dependency loop among the files of a folder but the ones listed
# below: tests/tools/deploops.py on the build's objects ($BUILD/obj) of
# collector/, cupti/ (CUDA builds), tools/cli/ and preload/. A loop is
# printed as "FOLDER: loop: FILE..." (the files that reach one another);
# each such line must be one of EXPECTED_*. A listed loop that is gone is
# said, not failed: empty its line then.
. "$ROOT/tests/integration/lib.sh"

# The stubs and the runtime of the hook engine are one runtime in two
# languages: preload/preload.h says why that loop stays.
EXPECTED_PRELOAD='preload: loop: hook_rt hook_tramp'
# No other folder has a loop.
EXPECTED_COLLECTOR=''
EXPECTED_CUPTI=''
EXPECTED_CLI=''

# Only the objects of sources that exist: a renamed or removed file's old
# object may linger in the build folder.
objs=$WORK/obj
checked=0
for folder in collector cupti tools/cli preload; do
	[ -d "$BUILD/obj/$folder" ] || { echo "ok: $folder not built here"; continue; }
	mkdir -p "$objs/$folder"
	for o in "$BUILD/obj/$folder"/*.o; do
		n=$(basename "$o" .o)
		if [ -f "$ROOT/$folder/$n.c" ] || [ -f "$ROOT/$folder/$n.S" ]; then
			cp "$o" "$objs/$folder/"
		fi
	done
	[ -n "$(ls "$objs/$folder")" ] || fail "$folder: no objects in $BUILD/obj/$folder"
	set +e
	python3 "$ROOT/tests/tools/deploops.py" "$objs" "$folder" > "$WORK/loops.txt"
	rc=$?
	set -e
	[ $rc -le 1 ] || fail "$folder: deploops.py failed ($rc)"
	case $folder in
	collector) expected=$EXPECTED_COLLECTOR ;;
	cupti) expected=$EXPECTED_CUPTI ;;
	tools/cli) expected=$EXPECTED_CLI ;;
	preload) expected=$EXPECTED_PRELOAD ;;
	esac
	while IFS= read -r line; do
		case $line in *": loop: "*) ;; *) continue ;; esac
		if ! printf '%s\n' "$expected" | grep -qxF -- "$line"; then
			cat "$WORK/loops.txt"
			fail "a loop not in the expected list: $line"
		fi
		echo "ok: expected $line"
	done < "$WORK/loops.txt"
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		grep -qxF -- "$line" "$WORK/loops.txt" ||
			echo "note: gone, to take off the expected list: $line"
	done <<< "$expected"
	checked=$((checked + 1))
done
[ $checked -ge 3 ] || fail "only $checked folders had objects to check"
echo "ok: no loop but the expected ones in $checked folders"

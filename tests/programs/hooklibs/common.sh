# common.sh - sourced by tests/integration/hook_*.sh (after lib.sh).
#
# hook_build            builds libhookt.so, libhookt2.so and hook_main (plus
#                       the -fno-plt and BIND_NOW/RELRO variants) into $WORK
# hook_same OUT CMD...  runs CMD without and with mxprof (hooking libhookt*),
#                       fails unless stdout is identical, and writes the
#                       trace summary to OUT.json
# hook_spans SUMMARY    prints "GROUP/NAME count" lines of the C API spans
HOOKLIBS=$ROOT/tests/programs/hooklibs
HOOK_SPEC=${HOOK_SPEC:-'libhookt*.so:ht*'}

hook_build() {
	cc -O2 -g -shared -fPIC -o "$WORK/libhookt.so" "$HOOKLIBS/hooklib.c"
	cc -O2 -g -shared -fPIC -o "$WORK/libhookt2.so" "$HOOKLIBS/hooklib2.c" \
		-L"$WORK" -lhookt -Wl,-rpath,"$WORK"
	local v
	for v in plain noplt now; do
		local extra=()
		case $v in
		noplt) extra=(-fno-plt) ;;
		now) extra=(-Wl,-z,now,-z,relro) ;;
		esac
		cc -O2 -g "${extra[@]}" -o "$WORK/hook_main_$v" \
			"$HOOKLIBS/hook_main.c" -L"$WORK" -lhookt \
			-Wl,-rpath,"$WORK" -ldl -lpthread
	done
}

hook_same() {
	local out=$1
	shift
	"$@" >"$WORK/$out.plain.txt"
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$out.json" \
		MXPROF_HOOK="$HOOK_SPEC" LD_PRELOAD="$PRELOAD" \
		"$@" >"$WORK/$out.mxprof.txt"
	diff "$WORK/$out.plain.txt" "$WORK/$out.mxprof.txt" ||
		fail "$*: output differs under mxprof"
	tracesummary "$WORK/$out.json" >"$WORK/$out.summary.json"
	expect_eq "$out: dropped records" 0 \
		"$(jget "$WORK/$out.summary.json" 'd["dropped"]')"
}

# span SUMMARY GROUP/NAME: the number of slices (0 when absent).
span() {
	jget "$1" "d['spans'].get('$2', 0)"
}

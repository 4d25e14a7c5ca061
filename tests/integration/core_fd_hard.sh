# mxprof takes none of the program's file descriptors: a program opens
# as many files under mxprof as without it, and still gets its trace and
# tables, whatever its RLIMIT_NOFILE. Where the hard limit equals the
# soft one (ulimit -n 60 sets both, or the program sets its own limit
# once the library has started), no descriptor can sit above the
# program's range: the drain thread, which opens and writes every file of
# mxprof's, then uses a descriptor table of its own. Where the soft limit
# is above 512 with room above it, the journal no longer takes 512 of the
# program's numbers either. The program opens /dev/null until EMFILE
# (tests/programs/core_fd_limit.c); with "keep" it ends with every
# descriptor taken, with "more" 100 tasks come after the files ran out.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
prog=$BUILD/programs/core_fd_limit
cd "$WORK"
# run NAME ARGS...: the program under mxprof, its files at NAME.json
run() {
	local name=$1
	shift
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/$name.json" \
		LD_PRELOAD="$PRELOAD" "$prog" "$@" 2>"$name.err"
}
# files NAME TASKS: NAME's trace and tables hold TASKS tasks, nothing was
# said, no journal is left.
files() {
	expect_eq "$1: messages" "" "$(cat "$1.err")"
	expect_eq "$1: tables" "$2" "$(row_count "$1.stats.txt" fdlim work)"
	tracesummary "$1.json" >"$1.s.json"
	expect_eq "$1: trace" "$2" "$(jget "$1.s.json" 'd["spans"]["fdlim/work"]')"
	[ ! -e "$1.json.journal" ] || fail "$1: journal left"
}

# How many the program opens alone depends on the descriptors this shell
# inherited (three, or more where the caller leaves some open): the
# program without mxprof is the measure, and it must have run out.
# plain_ran_out WHAT OUTPUT LIMIT: OUTPUT is "opened N: Too many open files"
# with N within 10 of the limit LIMIT.
plain_ran_out() {
	local n=${2#opened }
	n=${n%%:*}
	case $2 in
	"opened $n: Too many open files") ;;
	*) fail "$1: expected 'opened N: Too many open files', got '$2'" ;;
	esac
	[ "$n" -le "$3" ] && [ "$n" -gt $(($3 - 10)) ] ||
		fail "$1: opened $n with a limit of $3"
	echo "ok: $1 = $2"
}
plain=$(ulimit -n 60 && "$prog" close)
plain_ran_out "ulimit -n 60, plain" "$plain" 60
expect_eq "ulimit -n 60, under mxprof" "$plain" "$(ulimit -n 60 && run c close)"
files c 100
expect_eq "ulimit -n 60, ending with every descriptor taken" "$plain" \
	"$(ulimit -n 60 && run k keep more)"
files k 200

plain=$("$prog" keep limit 64)
plain_ran_out "limit set by the program, plain" "$plain" 64
expect_eq "limit set by the program, under mxprof" "$plain" "$(run p keep more limit 64)"
files p 200

hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -gt 600 ]; then
	plain=$(ulimit -Sn 600 && "$prog" close)
	plain_ran_out "soft 600, plain" "$plain" 600
	expect_eq "soft 600, under mxprof" "$plain" "$(ulimit -Sn 600 && run s close)"
	files s 100
else
	skip_part "soft 600 below a hard limit: the hard limit is $hard"
fi

# mxprof run reports the files the library wrote, whatever the trace's name
# ends in: both take the names of the tables and of a child's trace from
# collector/paths.c. For each name: the tables line names the one tables
# file in the folder, and a forked child's trace is listed, in the folder
# X.processes beside the merged trace (and nothing else that looks like
# one).
. "$ROOT/tests/integration/lib.sh"
mxprof_command
PROG=$BUILD/programs/cli_tasks

# check TRACE TABLES CHILD_GLOB: in a folder of its own, runs sh, which
# runs cli_tasks as a child (X.<pid>...) and then becomes cli_tasks (the
# process mxprof run started, writing TRACE).
check() {
	local trace=$1 tables=$2 child=$3 dir
	dir=run.$((++n))
	mkdir -p "$dir/a.b"
	(cd "$dir" && "$MX" run -o "$trace" -- sh -c "$PROG -u 10; exec $PROG -u 10" \
		> /dev/null 2> sum.txt)
	grep -q '^step  *10 ' "$dir/sum.txt" || fail "$trace: no step row in the summary"
	expect_eq "$trace: tables line" "mxprof: tables $tables" \
		"$(grep '^mxprof: tables ' "$dir/sum.txt")"
	expect_eq "$trace: the tables file written" "$dir/$tables" \
		"$(find "$dir" -name '*.processes' -prune -o -name '*.stats.txt' ! -name '*.[0-9]*.stats.txt' -print | sort)"
	expect_eq "$trace: trace line" "mxprof: trace  $trace" \
		"$(grep '^mxprof: trace ' "$dir/sum.txt")"
	got=$(sed -n 's/^mxprof: child  //p' "$dir/sum.txt")
	# shellcheck disable=SC2053
	[[ $got == $child ]] || fail "$trace: child '$got' is not $child"
	[ -f "$dir/$got" ] || fail "$trace: child trace $got not written"
	expect_eq "$trace: child's steps" 10 \
		"$("$MX" report "$dir/$got" | awk '$1 == "step" { print $2 }')"
}

n=0
check t.json t.stats.txt 't.processes/t.[0-9]*.json'
check t.json.gz t.stats.txt 't.processes/t.[0-9]*.json.gz'
# The name that looked for t.gz.stats.txt while the library wrote
# t.stats.txt.
check t.gz t.stats.txt 't.processes/t.[0-9]*.gz'
# No ending: the child's trace is t.<pid>; its t.<pid>.stats.txt is not
# another child.
check t t.stats.txt 't.processes/t.[0-9]*'
check t.JSON t.JSON.stats.txt 't.JSON.processes/t.JSON.[0-9]*'
check a.b/t a.b/t.stats.txt 'a.b/t.processes/t.[0-9]*'
check a.b/t.gz a.b/t.stats.txt 'a.b/t.processes/t.[0-9]*.gz'

# A hooked tight loop of 10 M calls under the default settings: the drain
# keeps up on a machine with a core for it, and drops slices from the
# timeline on one too busy to give it one; either way the tables count
# every call exactly, and the trace and one line on stderr say how many
# slices were dropped: the trace's slices plus its dropped count are the
# calls made. A timeline past 1024 MB says so too.
# SLOW=1 runs that as it is (10 M calls, about 1.3 GB of JSON). By default
# the same paths at a tenth of the cost: 1 M calls, buffers that never
# grow (MXPROF_BUFFER_MAX_KB=2048: drops are likely) and the big-timeline
# mark lowered to 16 MB (MXPROF_TEST_BIG_TRACE_MB), which the trace passes.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
if [ "${SLOW:-}" = 1 ]; then
	N=10000000 big=1024 bufmax=16384 knobs=()
else
	N=1000000 big=16 bufmax=2048
	knobs=(MXPROF_TEST_BIG_TRACE_MB=$big MXPROF_BUFFER_MAX_KB=$bufmax)
fi
"$WORK/hook_main_plain" basic $N >plain.txt
env "${knobs[@]}" MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/x.json" MXPROF_HOOK="$HOOK_SPEC" \
	LD_PRELOAD="$PRELOAD" "$WORK/hook_main_plain" basic $N \
	>mxprof.txt 2>err.txt
diff plain.txt mxprof.txt || fail "output differs under mxprof"

expect_eq "table ht_add" $N "$(row_count x.stats.txt 'C API (libhookt.so)' ht_add)"
for f in ht_fmt ht_dbl8 ht_ld ht_big ht_pair ht_errno; do
	expect_eq "table $f" 1 "$(row_count x.stats.txt 'C API (libhookt.so)' $f)"
done
tracesummary x.json >s.json
dropped=$(jget s.json 'd["dropped"]')
expect_eq "slices + dropped = calls" $((N + 6)) \
	"$(jget s.json 'sum(v for k, v in d["spans"].items() if k.startswith("C API (libhookt.so)/")) + d["dropped"]')"
grep -qx "Dropped records: $dropped" x.stats.txt || fail "tables: $(tail -1 x.stats.txt)"
# A trace of 1024 MB of JSON or more ($big MB by default) says so first
# (collector/dump.c).
mb=$(($(stat -c %s x.json) >> 20))
want=
if [ "$mb" -ge "$big" ]; then
	want="mxprof: the timeline is $mb MB of JSON, past the $big MB that trace viewers load well: cap it with MXPROF_MAX_TRACE_MB (the tables still count everything), or record less with MXPROF_HOOK (fewer functions), MXPROF_TRACE (fewer sources), or a capture window (MXPROF_DELAY, MXPROF_DURATION, MXPROF_CAPTURE_NVTX)"
fi
if [ "$dropped" != 0 ]; then
	want="${want:+$want
}mxprof: the timeline dropped $dropped records from full per-thread buffers; the tables count them all: raise MXPROF_BUFFER_MAX_KB (now $bufmax) or set MXPROF_OVERFLOW=block"
fi
expect_eq "stderr" "$want" "$(cat err.txt)"

# The same with a timeline cap of 1 MiB and no drops: the cut is said.
N=300000
"$WORK/hook_main_plain" basic $N >plain2.txt
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/y.json" MXPROF_HOOK="$HOOK_SPEC" \
	MXPROF_OVERFLOW=block MXPROF_MAX_TRACE_MB=1 LD_PRELOAD="$PRELOAD" \
	"$WORK/hook_main_plain" basic $N >mxprof2.txt 2>err2.txt
diff plain2.txt mxprof2.txt || fail "output differs under mxprof (cap)"
expect_eq "capped table ht_add" $N "$(row_count y.stats.txt 'C API (libhookt.so)' ht_add)"
expect_eq "capped stderr" "mxprof: the timeline was cut at MXPROF_MAX_TRACE_MB=1; the tables count everything: raise it, or 0 for no cap" \
	"$(cat err2.txt)"

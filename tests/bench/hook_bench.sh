#!/usr/bin/env bash
# hook_bench.sh [BUILD] - the cost of timing one hooked C API call.
#
# A tight loop calls libhookb.so's hb_inc (which does almost nothing), and
# prints the best ns/call of several rounds. It runs:
#   none       without any profiler (the baseline)
#   floor      no profiler, but two rdtsc and a 32-byte store around each
#              call, inline: the least any TSC-timing tool can add
#   stub       no profiler, but each call goes through a bare trampoline
#              that swaps the return address and writes the same record,
#              with no check of any kind: the least a tool that hooks the
#              call at run time can add (hook_bench.c says what it does)
#   stopped    with libmxprof loaded and hooking, but not recording
#   recording  with libmxprof recording every call
#   uftrace    uftrace record (PLT hooking of library calls), if installed
#   ltrace     ltrace -e hb_inc, if installed (fewer calls: it is slow)
# and prints the cost each adds per call and mxprof's ratio against the
# others. Each is launched RUNS times, in turn, and keeps its best: where
# code and data land in memory changes from one launch to the next, and
# with it branch prediction and cache conflicts, for every tool alike.
# Figures, not a test: nothing fails on a slow machine.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
LIB=${MXPROF_LIB:-$BUILD/libmxprof.so}
# Rounds of N calls (fewer than a default ring holds: 65536 records), with
# a pause after each so the drain thread empties the ring: the best round
# is the cost of recording into a warm ring, with nothing dropped.
N=${N:-50000}
R=${R:-30}
PAUSE=${PAUSE:-30}
RUNS=${RUNS:-3}
W=$(mktemp -d "${TMPDIR:-/tmp}/mxprof-hookbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
cc -O2 -shared -fPIC -o "$W/libhookb.so" "$ROOT/tests/bench/hook_bench_lib.c"
cc -O2 -o "$W/hook_bench" "$ROOT/tests/bench/hook_bench.c" -L"$W" -lhookb \
	-Wl,-rpath,"$W"
cd "$W"
ns() { "$@" 2>/dev/null | sed -n 's/^ns\/call \([0-9.]*\).*/\1/p' | tail -1; }
HOOK='libhookb.so:hb_*'

min() { [ "$1" = - ] && echo "$2" || awk -v a="$1" -v b="$2" 'BEGIN { print (b < a ? b : a) }'; }
none=- floor=- stub=- stopped=- rec=- uft=- ltr=-
for _ in $(seq "$RUNS"); do
	none=$(min "$none" "$(ns ./hook_bench "$N" "$R" "$PAUSE")")
	floor=$(min "$floor" "$(ns ./hook_bench "$N" "$R" "$PAUSE" floor)")
	stub=$(min "$stub" "$(ns ./hook_bench "$N" "$R" "$PAUSE" stub)")
	stopped=$(min "$stopped" "$(ns env MXPROF_HOOK="$HOOK" \
		MXPROF_OUTPUT="$W/s.json" LD_PRELOAD="$LIB" \
		./hook_bench "$N" "$R" "$PAUSE")")
	rm -f "$W/r.json"
	rec=$(min "$rec" "$(ns env MXPROF_AUTOSTART=1 MXPROF_HOOK="$HOOK" \
		MXPROF_OUTPUT="$W/r.json" LD_PRELOAD="$LIB" \
		./hook_bench "$N" "$R" "$PAUSE")")
	if command -v uftrace >/dev/null; then
		uft=$(min "$uft" "$(ns uftrace record --force -d "$W/uftrace.data" \
			./hook_bench "$N" "$R" "$PAUSE")")
	fi
done
if command -v ltrace >/dev/null; then
	ltr=$(ns ltrace -o /dev/null -e hb_inc ./hook_bench $((N / 100)) 3)
fi

added() { [ "$1" = - ] && echo - || awk -v a="$1" -v b="$none" 'BEGIN { printf "%.2f", a - b }'; }
ratio() { # ratio OTHER_ADDED MXPROF_ADDED
	if [ "$1" = - ]; then echo -; else
		awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", (b > 0.01 ? a / b : a / 0.01) }'
	fi
}
printf '%-11s %10s %12s\n' run ns/call "added ns"
printf '%-11s %10s %12s\n' none "$none" 0
printf '%-11s %10s %12s\n' floor "$floor" "$(added "$floor")"
printf '%-11s %10s %12s\n' stub "$stub" "$(added "$stub")"
printf '%-11s %10s %12s\n' stopped "$stopped" "$(added "$stopped")"
printf '%-11s %10s %12s\n' recording "$rec" "$(added "$rec")"
printf '%-11s %10s %12s\n' uftrace "$uft" "$(added "$uft")"
printf '%-11s %10s %12s\n' ltrace "$ltr" "$(added "$ltr")"
a=$(added "$rec")
echo "uftrace adds $(ratio "$(added "$uft")" "$a") mxprof's recording cost;" \
	"ltrace $(ratio "$(added "$ltr")" "$a");" \
	"mxprof adds $(awk -v a="$a" -v f="$(added "$floor")" \
		'BEGIN { printf "%.2f", a - f }') ns over the floor," \
	"$(awk -v a="$a" -v f="$(added "$stub")" \
		'BEGIN { printf "%.2f", a - f }') ns over the bare stub"
if [ -f "$W/r.json" ]; then
	python3 "$ROOT/tests/tools/tracecheck.py" "$W/r.json" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print("recorded slices:", d["spans"].get("C API (libhookb.so)/hb_inc", 0), "dropped:", d["dropped"])'
fi

#!/usr/bin/env bash
# stack_bench.sh [BUILD] - what a call stack adds to a hooked call.
#
# Native: stack_bench calls libhookb.so's hb_inc (which does almost
# nothing) from 70 nested C frames, recorded by mxprof with MXPROF_STACKS
# at 0 (the baseline: the same hook without stacks), 8, 32 and 64.
# Mixed: /usr/bin/python3 calls zlib.crc32 on 8 bytes from 70 nested Python
# functions, hooked ('libz.so*:crc32'), the same four ways: each stack then
# holds Python frames (function, file, line) read from the interpreter
# beside the native ones.
# Prints ns per call for each and the cost added per captured stack. Each
# is launched RUNS times and keeps its best round. Figures, not a test.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-${BUILD:-$ROOT/build}}" && pwd)
LIB=${MXPROF_LIB:-$BUILD/libmxprof.so}
N=${N:-20000}
R=${R:-20}
RUNS=${RUNS:-3}
W=$(mktemp -d "${TMPDIR:-/tmp}/mxprof-stackbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
cc -O2 -shared -fPIC -o "$W/libhookb.so" "$ROOT/tests/bench/hook_bench_lib.c"
cc -O2 -g -o "$W/stack_bench" "$ROOT/tests/bench/stack_bench.c" -L"$W" \
	-lhookb -Wl,-rpath,"$W"
cat >"$W/pybench.py" <<'PY'
import sys, time, zlib
N, R = int(sys.argv[1]), int(sys.argv[2])
buf = b"12345678"
def bottom():
    best = 1e30
    for _ in range(R):
        t0 = time.perf_counter_ns()
        for _ in range(N):
            zlib.crc32(buf)
        best = min(best, (time.perf_counter_ns() - t0) / N)
        time.sleep(0.03)
    return best
def nest(d):
    return bottom() if d <= 1 else nest(d - 1)
print("ns/call %.2f" % nest(70))
PY
cd "$W"
ns() { "$@" 2>/dev/null | sed -n 's/^ns\/call \([0-9.]*\).*/\1/p' | tail -1; }
min() { [ "$1" = - ] && echo "$2" || awk -v a="$1" -v b="$2" 'BEGIN { print (b < a ? b : a) }'; }
run() { # run DEPTH CMD...
	local d=$1
	shift
	rm -f "$W"/r*.json
	ns env MXPROF_AUTOSTART=1 MXPROF_STACKS="$d" MXPROF_OUTPUT="$W/r.json" \
		LD_PRELOAD="$LIB" "$@"
}
declare -A nat py
for d in 0 8 32 64; do nat[$d]=-; py[$d]=-; done
for _ in $(seq "$RUNS"); do
	for d in 0 8 32 64; do
		nat[$d]=$(min "${nat[$d]}" "$(run "$d" env \
			MXPROF_HOOK='libhookb.so:hb_*' ./stack_bench 70 "$N" "$R")")
		if [ -x /usr/bin/python3 ]; then
			py[$d]=$(min "${py[$d]}" "$(run "$d" env \
				MXPROF_HOOK='libz.so*:crc32' /usr/bin/python3 \
				pybench.py "$((N / 4))" "$R")")
		fi
	done
done
printf '%-8s %14s %14s %14s %14s\n' stacks "native ns" "added ns" \
	"mixed ns" "added ns"
for d in 0 8 32 64; do
	printf '%-8s %14s %14s %14s %14s\n' "$d" "${nat[$d]}" \
		"$(awk -v a="${nat[$d]}" -v b="${nat[0]}" 'BEGIN { printf "%.1f", a - b }')" \
		"${py[$d]}" \
		"$(awk -v a="${py[$d]}" -v b="${py[0]}" 'BEGIN { if (a == "-") print "-"; else printf "%.1f", a - b }')"
done
